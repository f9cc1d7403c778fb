/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * history.c -- a local file's generation history (FILE.rpmemgen) and the
 * comparison of two histories (docs/ARCHITECTURE.md, "Generation
 * histories")
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "client_base.h"
#include "client_history.h"
#include "hist.h"
#include "util.h"

/*
 * The file, replaced whole (a temporary file, fsync, rename, fsync of the
 * directory), so a crash leaves the old or the new one; its head (ids,
 * size, mtime) is lib/common/hist.h's.
 *
 * size and mtime are the file's when the history's newest id last agreed
 * with a copy (a completed push or pull, a promotion): a file whose size
 * or mtime differs was written since, and gets a new id first. Two
 * optional lines follow (older readers stop before them):
 *
 *	live=<32 hex digits>[,...]
 *	local=1
 *
 * live: the uuids of the pools a live writer (the replica API, the
 * preload library) replicates the file to; its writes since the record
 * are on each of them, so after its crash they are no new writes for
 * those pools. local: the newest id stands for writes no copy holds yet,
 * and later ones join it instead of adding an id per refused retry.
 */
#define HIST_MAX 2048
_Static_assert(RPMEMCTL_GENERATIONS_MAX == RPMEM_MAX_GENERATIONS,
	       "a history's ids are a generation history's");

/* moves whenever a record leaves the live pools out (links re-add) */
static unsigned hist_epoch;

/*
 * The local history of a file is shared by the pushes of every target it
 * goes to (rpmemctl's threads for several targets, the links of the
 * replica API and of the preload library): reading it, adding the id of
 * the writes made since it last agreed and recording it are serialized,
 * so the pushes of one round all carry the same newest id.
 */
static pthread_mutex_t hist_lock = PTHREAD_MUTEX_INITIALIZER;

void client_history_lock(void)
{
	pthread_mutex_lock(&hist_lock);
}

void client_history_unlock(void)
{
	pthread_mutex_unlock(&hist_lock);
}

/* hist_path -- FILE.rpmemgen into out[len]; -ENAMETOOLONG */
static int hist_path(const char *file, char *out, size_t len)
{
	int n = snprintf(out, len, "%s%s", file, RPMEM_HIST_SUFFIX);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* hex_uuid -- 32 hex digits at s into u; 0, or -EBADMSG */
static int hex_uuid(const char *s, uint8_t u[16])
{
	for (int i = 0; i < 16; i++) {
		unsigned v;
		if (sscanf(s + 2 * i, "%2x", &v) != 1 ||
		    !strchr("0123456789abcdef", s[2 * i]) ||
		    !strchr("0123456789abcdef", s[2 * i + 1]))
			return -EBADMSG;
		u[i] = (uint8_t)v;
	}
	return 0;
}

/* hist_parse_live -- "uuid[,uuid]...\n" at s into h's live pools */
static int hist_parse_live(const char *s, struct client_history *h)
{
	for (;;) {
		if (h->nlive == CLIENT_HIST_LIVE_MAX ||
		    hex_uuid(s, h->live[h->nlive]))
			return -EBADMSG;
		h->nlive++;
		s += 32;
		if (*s == '\n')
			return 0;
		if (*s++ != ',')
			return -EBADMSG;
	}
}

/* hist_parse_opt -- the optional lines after the mtime line at s */
static int hist_parse_opt(const char *s, struct client_history *h)
{
	s = strchr(s, '\n');
	while (s && *++s) {
		if (!strncmp(s, "live=", 5) && !h->nlive) {
			if (hist_parse_live(s + 5, h))
				return -EBADMSG;
		} else if (!strncmp(s, "local=1\n", 8)) {
			h->local = 1;
		} else if (!strncmp(s, "split=", 6) && !h->nsplit) {
			char ids[CLIENT_HIST_LIVE_MAX * 17 + 1];
			int n;
			if (sscanf(s + 6, "%272[0-9a-f,]", ids) != 1 ||
			    s[6 + strlen(ids)] != '\n' ||
			    (n = rpmem_gen_ids_parse(ids, ',', h->split,
						     CLIENT_HIST_LIVE_MAX)) <= 0)
				return -EBADMSG;
			h->nsplit = (unsigned)n;
		} else {
			return -EBADMSG;
		}
		s = strchr(s, '\n');
	}
	return 0;
}

/* hist_parse -- the text of a history file into *h, *size, *mtime */
static int hist_parse(char *text, struct client_history *h)
{
	struct rpmem_hist_head hh;

	if (rpmem_hist_parse(text, &hh) || hh.nsec >= 1000000000ull)
		return -EBADMSG;
	memcpy(h->g.ids, hh.ids, hh.count * sizeof(hh.ids[0]));
	h->g.count = hh.count;
	h->size = hh.size;
	h->mtime_ns = hh.sec * 1000000000ull + hh.nsec;
	return hist_parse_opt(strstr(text, "\nmtime=") + 1, h);
}

int client_history_read(const char *file, struct client_history *h)
{
	char path[PATH_MAX], text[HIST_MAX + 1];
	memset(h, 0, sizeof(*h));
	h->g.role = RPMEMCTL_ROLE_PRIMARY;
	h->g.state = RPMEMCTL_POOL_CONSISTENT;
	int ret = hist_path(file, path, sizeof(path));
	if (ret)
		return ret;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n = read(fd, text, HIST_MAX);
	ret = n < 0 ? -errno : 0;
	close(fd);
	if (n <= 0) /* an empty file: start a history here */
		return ret ? ret : -ENOENT;
	text[n] = '\0';
	ret = hist_parse(text, h);
	struct stat st;
	if (!ret && !stat(file, &st))
		h->g.changed = (uint64_t)st.st_mtime;
	return ret;
}

/* write_all -- len bytes of buf to fd */
static int write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* fsync_dir -- the directory holding path, synced (a rename durable) */
static int fsync_dir(const char *path)
{
	char dir[PATH_MAX];
	rpmem_strlcpy(dir, path, sizeof(dir));
	char *slash = strrchr(dir, '/');
	if (slash)
		*(slash == dir ? slash + 1 : slash) = '\0';
	int fd = open(slash ? dir : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int ret = fsync(fd) ? -errno : 0;
	close(fd);
	return ret;
}

/*
 * tmp_create -- "PATH.tmp" (into tmp[len]) created anew for writing, never
 * through a link planted at that name; its fd or -errno
 */
static int tmp_create(const char *path, char *tmp, size_t len)
{
	snprintf(tmp, len, "%s.tmp", path);
	if (unlink(tmp) && errno != ENOENT)
		return -errno;
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		      0600);
	return fd < 0 ? -errno : fd;
}

/* hist_fmt_opt -- the optional lines of h into out[len] */
static void hist_fmt_opt(const struct client_history *h, char *out,
			 size_t len)
{
	size_t n = 0;
	out[0] = '\0';
	for (unsigned i = 0; i < h->nlive && n + 40 < len; i++) {
		n += (size_t)snprintf(out + n, len - n, "%s", i ? "," : "live=");
		for (int b = 0; b < 16; b++)
			n += (size_t)snprintf(out + n, len - n, "%02x",
					      h->live[i][b]);
	}
	if (h->nlive)
		n += (size_t)snprintf(out + n, len - n, "\n");
	if (h->local)
		n += (size_t)snprintf(out + n, len - n, "local=1\n");
	if (h->nsplit && n < len) {
		char ids[CLIENT_HIST_LIVE_MAX * 17 + 1];
		rpmem_gen_ids_fmt(h->split, h->nsplit, ",", ids, sizeof(ids));
		snprintf(out + n, len - n, "split=%s\n", ids);
	}
}

/*
 * hist_write -- h crash-safely, with file's current size and mtime (or
 * those h recorded, if keep)
 */
static int hist_write(const char *file, struct client_history *h, int keep)
{
	char path[PATH_MAX], tmp[PATH_MAX + 16];
	char text[HIST_MAX], opt[CLIENT_HIST_LIVE_MAX * 50 + 64];
	struct rpmem_hist_head hh;
	struct stat st;
	int ret = hist_path(file, path, sizeof(path));
	if (ret)
		return ret;
	if (stat(file, &st))
		return -errno;
	if (!keep) {
		h->size = (uint64_t)st.st_size;
		h->mtime_ns = (uint64_t)st.st_mtim.tv_sec * 1000000000ull +
			      (uint64_t)st.st_mtim.tv_nsec;
	}
	if (!h->nlive)
		__atomic_add_fetch(&hist_epoch, 1, __ATOMIC_RELEASE);
	memcpy(hh.ids, h->g.ids, h->g.count * sizeof(hh.ids[0]));
	hh.count = h->g.count;
	hh.size = h->size;
	hh.sec = h->mtime_ns / 1000000000ull;
	hh.nsec = h->mtime_ns % 1000000000ull;
	hist_fmt_opt(h, opt, sizeof(opt));
	int n = rpmem_hist_fmt(&hh, opt, text, sizeof(text));
	if (n < 0)
		return n;
	int fd = tmp_create(path, tmp, sizeof(tmp));
	if (fd < 0)
		return fd;
	ret = write_all(fd, text, (size_t)n);
	if (!ret && fsync(fd))
		ret = -errno;
	close(fd);
	if (!ret && rename(tmp, path))
		ret = -errno;
	if (ret)
		unlink(tmp);
	return ret ? ret : fsync_dir(path);
}

int client_history_writable(const char *file)
{
	char path[PATH_MAX], tmp[PATH_MAX + 16];
	int ret = hist_path(file, path, sizeof(path));
	if (ret)
		return ret;
	int fd = tmp_create(path, tmp, sizeof(tmp));
	if (fd < 0)
		return fd;
	close(fd);
	return unlink(tmp) ? -errno : 0;
}

int client_history_written(const char *file, const struct client_history *h)
{
	struct stat st;
	if (stat(file, &st))
		return 1;
	uint64_t m = (uint64_t)st.st_mtim.tv_sec * 1000000000ull +
		     (uint64_t)st.st_mtim.tv_nsec;
	return (uint64_t)st.st_size != h->size || m != h->mtime_ns;
}

/* push_id -- a new id (a promotion's if promoted) in front of g's ids */
static int push_id(struct rpmemctl_generations *g, int promoted)
{
	uint64_t id;
	int ret = promoted ? rpmem_gen_new_promotion(&id) : rpmem_gen_new(&id);
	if (ret)
		return ret;
	unsigned n = g->count < RPMEMCTL_GENERATIONS_MAX ?
			     g->count :
			     RPMEMCTL_GENERATIONS_MAX - 1;
	memmove(&g->ids[1], &g->ids[0], n * sizeof(g->ids[0]));
	g->ids[0] = id;
	g->count = n + 1;
	return 0;
}

int client_history_record(const char *file, struct client_history *h,
			  const uint64_t *ids, unsigned count, int new_id)
{
	if (ids != h->g.ids) {
		if (count > RPMEMCTL_GENERATIONS_MAX)
			count = RPMEMCTL_GENERATIONS_MAX;
		memcpy(h->g.ids, ids, count * sizeof(ids[0]));
		h->g.count = count;
	}
	int ret = new_id || !h->g.count ?
			  push_id(&h->g, new_id == CLIENT_HIST_PROMOTION) :
			  0;
	return ret ? ret : hist_write(file, h, 0);
}

int client_history_is_live(const struct client_history *h,
			   const uint8_t uuid[RPMEM_UUID_LEN])
{
	for (unsigned i = 0; i < h->nlive; i++)
		if (!memcmp(h->live[i], uuid, 16))
			return 1;
	return 0;
}

int client_history_live(const char *file, const uint8_t uuid[16], int on)
{
	struct client_history h;
	int ret = client_history_read(file, &h);
	if (ret)
		return ret == -ENOENT ? 0 : ret;
	int had = uuid ? client_history_is_live(&h, uuid) : h.nlive != 0;
	if (!!on == had || (on && h.nlive == CLIENT_HIST_LIVE_MAX))
		return 0;
	if (!uuid) {
		h.nlive = 0;
	} else if (on) {
		memcpy(h.live[h.nlive++], uuid, 16);
	} else {
		unsigned j = 0;
		for (unsigned i = 0; i < h.nlive; i++)
			if (memcmp(h.live[i], uuid, 16))
				memcpy(h.live[j++], h.live[i], 16);
		h.nlive = j;
	}
	return hist_write(file, &h, 1);
}

int client_history_outdate(const char *file, struct rpmemctl_generations *g)
{
	struct client_history h;
	int ret = client_history_read(file, &h);
	if (ret)
		return ret;
	if (!h.g.count)
		return -ENOENT;
	if ((ret = push_id(&h.g, 0)))
		return ret;
	/* the new id stands for writes the live copies hold */
	h.local = 0;
	if ((ret = hist_write(file, &h, 1)))
		return ret;
	*g = h.g;
	return 0;
}

int client_history_split(const char *file, uint64_t tag)
{
	struct client_history h;
	int ret = client_history_read(file, &h);
	if (ret)
		return ret == -ENOENT ? 1 : ret;
	for (unsigned i = 0; i < h.nsplit; i++)
		if (h.split[i] == tag)
			return 0;
	unsigned n = h.nsplit < CLIENT_HIST_LIVE_MAX ? h.nsplit :
						       CLIENT_HIST_LIVE_MAX - 1;
	memmove(&h.split[1], &h.split[0], n * sizeof(h.split[0]));
	h.split[0] = tag;
	h.nsplit = n + 1;
	/* the recorded size and mtime kept: a note, not an agreement */
	ret = hist_write(file, &h, 1);
	return ret ? ret : 1;
}

unsigned client_history_epoch(void)
{
	return __atomic_load_n(&hist_epoch, __ATOMIC_ACQUIRE);
}

/* find -- the index of id in g, or -1 */
static int find(const struct rpmemctl_generations *g, uint64_t id)
{
	for (unsigned i = 0; i < g->count; i++)
		if (g->ids[i] == id)
			return (int)i;
	return -1;
}

RPMEM_EXPORT int
rpmemctl_generations_compare(const struct rpmemctl_generations *a,
			     const struct rpmemctl_generations *b)
{
	if (!a || !b || !a->count || !b->count)
		return RPMEMCTL_GEN_UNKNOWN;
	if (a->ids[0] == b->ids[0])
		return RPMEMCTL_GEN_SAME;
	if (find(a, b->ids[0]) > 0)
		return RPMEMCTL_GEN_AHEAD;
	if (find(b, a->ids[0]) > 0)
		return RPMEMCTL_GEN_BEHIND;
	for (unsigned i = 1; i < a->count; i++)
		if (find(b, a->ids[i]) > 0)
			return RPMEMCTL_GEN_DIVERGED;
	return RPMEMCTL_GEN_UNRELATED;
}

RPMEM_EXPORT const char *rpmemctl_gen_cmp_str(int cmp)
{
	static const char *const names[] = { "same",	 "ahead",
					     "behind",	 "diverged",
					     "unrelated", "unknown" };
	return cmp >= 0 && cmp <= RPMEMCTL_GEN_UNKNOWN ? names[cmp] : "unknown";
}

RPMEM_EXPORT int rpmemctl_history_read(const char *file,
				       struct rpmemctl_generations *out)
{
	struct client_history h;
	client_api_begin();
	if (!file || !out) {
		client_set_last(-EINVAL, "invalid argument");
		return -EINVAL;
	}
	int ret = client_history_read(file, &h);
	if (ret == -EBADMSG)
		client_set_last(ret, "generation history '%s%s' is damaged",
				file, RPMEM_HIST_SUFFIX);
	if (!ret)
		*out = h.g;
	return ret;
}

RPMEM_EXPORT int rpmemctl_history_split_brains(const char *file)
{
	struct client_history h;
	client_api_begin();
	if (!file) {
		client_set_last(-EINVAL, "invalid argument");
		return -EINVAL;
	}
	int ret = client_history_read(file, &h);
	if (ret == -ENOENT)
		return 0;
	if (ret == -EBADMSG)
		client_set_last(ret, "generation history '%s%s' is damaged",
				file, RPMEM_HIST_SUFFIX);
	return ret ? ret : (int)h.nsplit;
}

RPMEM_EXPORT int rpmemctl_history_utime(const char *file,
					const struct timespec *mtime)
{
	struct client_history h;
	struct timespec ts[] = { { .tv_nsec = UTIME_OMIT }, { 0 } };
	client_api_begin();
	if (!file || !mtime) {
		client_set_last(-EINVAL, "invalid argument");
		return -EINVAL;
	}
	ts[1] = *mtime;
	client_history_lock();
	/* recorded as the file is now: it stays so with the new time */
	int keep = !client_history_read(file, &h) &&
		   !client_history_written(file, &h);
	int ret = utimensat(AT_FDCWD, file, ts, 0) ? -errno : 0;
	if (!ret && keep)
		ret = client_history_record(file, &h, h.g.ids, h.g.count, 0);
	client_history_unlock();
	return ret;
}

RPMEM_EXPORT int rpmemctl_history_promote(const char *file,
					  const uint64_t *ids, unsigned count,
					  struct rpmemctl_generations *out)
{
	struct client_history h;
	client_api_begin();
	if (!file || (count && !ids)) {
		client_set_last(-EINVAL, "invalid argument");
		return -EINVAL;
	}
	memset(&h, 0, sizeof(h));
	h.g.role = RPMEMCTL_ROLE_PRIMARY;
	h.g.state = RPMEMCTL_POOL_CONSISTENT;
	client_history_lock();
	int ret = client_history_record(file, &h, ids, count,
					CLIENT_HIST_PROMOTION);
	client_history_unlock();
	if (ret)
		client_set_last(ret, "cannot record the generation history of '%s': %s",
				file, strerror(-ret));
	else if (out)
		*out = h.g;
	return ret;
}
