/* SPDX-License-Identifier: BSD-3-Clause */
/* meta.c -- pool metadata: text format, state machine, crash-safe files */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sys/stat.h>

#include "log.h"
#include "meta.h"
#include "util.h"

#define TMP_SUFFIX ".tmp"

int rpmemd_meta_init(struct rpmemd_meta *m, uint64_t size)
{
	struct rpmemd_meta n;
	memset(&n, 0, sizeof(n));
	int ret = rpmem_random(n.uuid, sizeof(n.uuid));
	if (ret)
		return ret;
	n.uuid[6] = (uint8_t)((n.uuid[6] & 0x0f) | 0x40); /* version 4 */
	n.uuid[8] = (uint8_t)((n.uuid[8] & 0x3f) | 0x80); /* RFC 4122 */
	n.size = size;
	n.state = RPMEM_POOL_EMPTY;
	n.created = rpmem_wall_sec();
	*m = n;
	return 0;
}

int rpmemd_meta_transition(struct rpmemd_meta *m, uint8_t new_state)
{
	switch (new_state) {
	case RPMEM_POOL_SYNCING:
		/* from any state: start, resume or restart a sync */
		if (m->state > RPMEM_POOL_CONSISTENT)
			return -EINVAL;
		m->state = RPMEM_POOL_SYNCING;
		return 0;
	case RPMEM_POOL_CONSISTENT:
		if (m->state != RPMEM_POOL_SYNCING)
			return -EINVAL;
		m->state = RPMEM_POOL_CONSISTENT;
		m->generation++;
		m->last_sync = rpmem_wall_sec();
		return 0;
	default:
		return -EINVAL;
	}
}

void rpmemd_meta_set_source(struct rpmemd_meta *m, const char *source)
{
	rpmem_strlcpy(m->source, source, sizeof(m->source));
	/* one line per key, and UTF-8 for every client's JSON */
	rpmem_str_sanitize(m->source);
}

/* state_parse -- a state name to its value, -1 if unknown */
static int state_parse(const char *s)
{
	for (int st = RPMEM_POOL_EMPTY; st <= RPMEM_POOL_CONSISTENT; st++)
		if (!strcmp(s, rpmem_state_str((uint8_t)st)))
			return st;
	return -1;
}

void rpmemd_meta_hist_push(struct rpmemd_meta *m, uint64_t id)
{
	unsigned n = m->nhist < RPMEM_MAX_GENERATIONS ? m->nhist :
							RPMEM_MAX_GENERATIONS - 1;
	memmove(&m->hist[1], &m->hist[0], n * sizeof(m->hist[0]));
	m->hist[0] = id;
	m->nhist = (uint8_t)(n + 1);
}

/*
 * hist_format -- "role=...\nhistory=...\n" into out[len] for a pool with a
 * role or a history, then "split=...\n" for one a split brain was
 * reported of; "" for neither
 */
static void hist_format(const struct rpmemd_meta *m, char *out, size_t len)
{
	char ids[RPMEM_MAX_GENERATIONS * 17 + 1];
	size_t n = 0;
	out[0] = '\0';
	if (m->role != RPMEM_ROLE_SECONDARY || m->nhist) {
		rpmem_gen_ids_fmt(m->hist, m->nhist, ",", ids, sizeof(ids));
		snprintf(out, len, "role=%s\nhistory=%s\n",
			 rpmem_role_str(m->role), ids);
		n = strlen(out);
	}
	if (m->split_at)
		snprintf(out + n, len - n, "split=%llu\n",
			 (unsigned long long)m->split_at);
}

int rpmemd_meta_format(const struct rpmemd_meta *m, char *buf, size_t len)
{
	char uuid[RPMEM_UUID_STR];
	char hist[64 + RPMEM_MAX_GENERATIONS * 17];
	rpmem_uuid_fmt(m->uuid, uuid);
	hist_format(m, hist, sizeof(hist));
	/* a required key last: no proper prefix of the text parses */
	int n = snprintf(buf, len,
			 "magic=%s\nversion=%d\nuuid=%s\nsize=%llu\n"
			 "created=%llu\nsource=%s\n%sstate=%s\n"
			 "generation=%llu\nlast_sync=%llu\n",
			 RPMEMD_META_MAGIC, RPMEMD_META_VERSION, uuid,
			 (unsigned long long)m->size,
			 (unsigned long long)m->created, m->source, hist,
			 rpmem_state_str(m->state),
			 (unsigned long long)m->generation,
			 (unsigned long long)m->last_sync);
	if (n < 0 || (size_t)n >= len)
		return -EMSGSIZE;
	return n;
}

/* u64_parse -- decimal digits only, no sign, no overflow */
static int u64_parse(const char *s, uint64_t *out)
{
	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || *end)
		return -1;
	*out = v;
	return 0;
}

enum { K_MAGIC, K_VERSION, K_UUID, K_SIZE, K_STATE, K_GEN, K_CREATED,
       K_LAST_SYNC, K_SOURCE, K_ROLE, K_HISTORY, K_SPLIT, K_COUNT };

/* the keys a file may lack */
#define K_OPTIONAL                                                             \
	((1u << K_SOURCE) | (1u << K_ROLE) | (1u << K_HISTORY) |               \
	 (1u << K_SPLIT))

static const char *const keys[K_COUNT] = {
	"magic", "version", "uuid", "size", "state", "generation", "created",
	"last_sync", "source", "role", "history", "split",
};

/* parse_kv -- apply one key=value line; 0, or -1 if invalid */
static int parse_kv(int k, const char *v, struct rpmemd_meta *m)
{
	uint64_t n;
	int st;
	switch (k) {
	case K_MAGIC:
		return strcmp(v, RPMEMD_META_MAGIC) ? -1 : 0;
	case K_VERSION:
		return u64_parse(v, &n) || n != RPMEMD_META_VERSION ? -1 : 0;
	case K_UUID:
		return rpmem_uuid_parse(v, m->uuid) ? -1 : 0;
	case K_SIZE:
		return u64_parse(v, &m->size) || m->size == 0 ? -1 : 0;
	case K_STATE:
		st = state_parse(v);
		m->state = (uint8_t)st;
		return st < 0 ? -1 : 0;
	case K_GEN:
		return u64_parse(v, &m->generation);
	case K_CREATED:
		return u64_parse(v, &m->created);
	case K_LAST_SYNC:
		return u64_parse(v, &m->last_sync);
	case K_SOURCE:
		if (strlen(v) > RPMEM_STR_MAX)
			return -1;
		/* a file written before sources were sanitized */
		rpmemd_meta_set_source(m, v);
		return 0;
	case K_ROLE:
		if (!strcmp(v, rpmem_role_str(RPMEM_ROLE_PRIMARY)))
			m->role = RPMEM_ROLE_PRIMARY;
		else if (strcmp(v, rpmem_role_str(RPMEM_ROLE_SECONDARY)))
			return -1;
		return 0;
	case K_HISTORY:
		st = rpmem_gen_ids_parse(v, ',', m->hist,
					 RPMEM_MAX_GENERATIONS);
		m->nhist = (uint8_t)(st < 0 ? 0 : st);
		return st < 0 ? -1 : 0;
	case K_SPLIT:
		return u64_parse(v, &m->split_at);
	}
	return -1;
}

int rpmemd_meta_parse(const char *buf, size_t len, struct rpmemd_meta *m)
{
	char text[RPMEMD_META_MAX + 1];
	struct rpmemd_meta n;
	unsigned seen = 0, nlines = 0;

	/* a torn file ends without its last newline or misses keys */
	if (len == 0 || len > RPMEMD_META_MAX || buf[len - 1] != '\n' ||
	    memchr(buf, '\0', len))
		return -EBADMSG;
	memcpy(text, buf, len);
	text[len] = '\0';
	memset(&n, 0, sizeof(n));

	char *save = NULL;
	for (char *l = strtok_r(text, "\n", &save); l;
	     l = strtok_r(NULL, "\n", &save), nlines++) {
		char *eq = strchr(l, '=');
		if (!eq)
			return -EBADMSG;
		*eq = '\0';
		int k;
		for (k = 0; k < K_COUNT; k++)
			if (!strcmp(l, keys[k]))
				break;
		/* magic, then version, lead the file */
		if ((nlines == 0 && k != K_MAGIC) ||
		    (nlines == 1 && k != K_VERSION))
			return -EBADMSG;
		if (k == K_COUNT)
			continue; /* a key from a newer version */
		if ((seen & (1u << k)) || parse_kv(k, eq + 1, &n))
			return -EBADMSG;
		seen |= 1u << k;
	}
	/* source, role and history may be absent; the rest is required */
	if ((seen | K_OPTIONAL) != (1u << K_COUNT) - 1)
		return -EBADMSG;
	*m = n;
	return 0;
}

/* meta_file -- "<pool>.meta" (plus suffix) into out[outlen] */
static int meta_file(const char *pool, const char *suffix, char *out,
		     size_t outlen)
{
	if (!rpmem_name_valid(pool))
		return -EINVAL;
	snprintf(out, outlen, "%s%s%s", pool, RPMEMD_META_SUFFIX, suffix);
	return 0;
}

int rpmemd_meta_read(int dirfd, const char *pool, struct rpmemd_meta *m)
{
	char file[RPMEM_NAME_MAX + 16], buf[RPMEMD_META_MAX + 1];
	int ret = meta_file(pool, "", file, sizeof(file));
	if (ret)
		return ret;
	int fd = rpmemd_open_ro(dirfd, file);
	if (fd < 0)
		return fd;
	size_t len = 0;
	while (len < sizeof(buf)) {
		ssize_t n = read(fd, buf + len, sizeof(buf) - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = -errno;
			goto err_close;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	return rpmemd_meta_parse(buf, len, m);

err_close:
	close(fd);
	return ret;
}

/* region_check = "warn": someone else's files are only warned about */
static int check_warn;

void rpmemd_region_check_set(int warn)
{
	__atomic_store_n(&check_warn, warn, __ATOMIC_RELAXED);
}

int rpmemd_region_check_warn(void)
{
	return __atomic_load_n(&check_warn, __ATOMIC_RELAXED);
}

const char *rpmemd_untrusted(const struct stat *st, char *buf, size_t len)
{
	unsigned mode = (unsigned)st->st_mode & 07777;

	if (st->st_uid != geteuid())
		snprintf(buf, len, "owned by uid %u, not rpmemd's user (uid %u)",
			 (unsigned)st->st_uid, (unsigned)geteuid());
	else if (st->st_mode & (S_IWGRP | S_IWOTH))
		snprintf(buf, len, "writable by %s (mode %04o)",
			 (st->st_mode & S_IWOTH) ? "others" : "its group",
			 mode);
	else
		return NULL;
	return buf;
}

/* files found not rpmemd's own: a few a second are logged */
static struct rpmem_log_limit log_untrusted =
	RPMEM_LOG_LIMIT_INIT("files not rpmemd's own", 5);

/*
 * own_check -- fd (name) is rpmemd's own: 0; else logged, and -EPERM
 * unless region_check is "warn"
 */
static int own_check(int fd, const char *name)
{
	struct stat st;
	char why[RPMEM_MSG_MAX];
	int warn = rpmemd_region_check_warn();

	if (fstat(fd, &st))
		return -errno;
	if (!rpmemd_untrusted(&st, why, sizeof(why)))
		return 0;
	rpmem_log_limited(&log_untrusted, warn ? LOG_WARNING : LOG_ERR,
			  "%s '%s' in a region: it is %s, so someone else may have written it%s",
			  warn ? "using" : "refusing", name, why,
			  warn ? " (region_check = \"warn\")" :
				 " (fix its owner and mode, or set region_check = \"warn\")");
	return warn ? 0 : -EPERM;
}

/*
 * denied -- name could not be opened (EACCES): another user's file that
 * rpmemd cannot open (it has no capability to open it anyway, as root
 * outside systemd) is not rpmemd's own either: said as own_check says
 * it, -EPERM; -EACCES if it looks like rpmemd's own
 */
static int denied(int dirfd, const char *name)
{
	struct stat st;
	char why[RPMEM_MSG_MAX];

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) ||
	    !rpmemd_untrusted(&st, why, sizeof(why)))
		return -EACCES;
	rpmem_log_limited(&log_untrusted, LOG_ERR,
			  "refusing '%s' in a region: it is %s, so someone else may have written it (and rpmemd may not open it)",
			  name, why);
	return -EPERM;
}

int rpmemd_open_ro(int dirfd, const char *name)
{
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	int ret;

	if (fd < 0)
		return errno == EACCES ? denied(dirfd, name) : -errno;
	if ((ret = own_check(fd, name))) {
		close(fd);
		return ret;
	}
	return fd;
}

int rpmemd_own_at(int dirfd, const char *name)
{
	int ret, fd = openat(dirfd, name,
			     O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;

	if (fd < 0)
		return errno == EACCES ? denied(dirfd, name) : -errno;
	if (fstat(fd, &st)) {
		ret = -errno;
	} else if (!S_ISREG(st.st_mode) || st.st_nlink != 1) {
		rpmem_log_limited(&log_untrusted, LOG_ERR,
				  "refusing '%s' in a region: not a regular file with one link",
				  name);
		ret = -EPERM;
	} else {
		ret = own_check(fd, name);
	}
	close(fd);
	return ret;
}

int rpmemd_open_own(int dirfd, const char *name, int flags)
{
	struct stat st;
	int ret, fd = openat(dirfd, name, flags | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return errno == EACCES ? denied(dirfd, name) : -errno;
	if (fstat(fd, &st)) {
		ret = -errno;
		close(fd);
		return ret;
	}
	if (S_ISREG(st.st_mode) && st.st_nlink == 1) {
		if ((ret = own_check(fd, name))) {
			close(fd);
			return ret;
		}
		return fd;
	}
	close(fd);
	if (!S_ISREG(st.st_mode)) {
		WARN("refusing to write '%s': not a regular file", name);
		return -EINVAL;
	}
	WARN("refusing to write '%s': it has %llu hard links (another may be a file outside the region)",
	     name, (unsigned long long)st.st_nlink);
	return -EMLINK;
}

void rpmemd_unlink_own(int dirfd, const char *name)
{
	struct stat st;
	if (!fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) &&
	    S_ISREG(st.st_mode) && st.st_nlink == 1 && st.st_uid == geteuid())
		unlinkat(dirfd, name, 0);
}

void rpmemd_meta_clean(int dirfd, const char *pool)
{
	char tmp[RPMEM_NAME_MAX + 16];
	if (!meta_file(pool, TMP_SUFFIX, tmp, sizeof(tmp)))
		rpmemd_unlink_own(dirfd, tmp);
}

/* write_all -- the whole buffer to fd */
static int write_all(int fd, const char *p, size_t len)
{
	while (len) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int rpmemd_meta_write(int dirfd, const char *pool, const struct rpmemd_meta *m)
{
	char file[RPMEM_NAME_MAX + 16], tmp[RPMEM_NAME_MAX + 16];
	char buf[RPMEMD_META_MAX];
	int ret, len, fd;

	if ((ret = meta_file(pool, "", file, sizeof(file))) ||
	    (ret = meta_file(pool, TMP_SUFFIX, tmp, sizeof(tmp))))
		return ret;
	len = rpmemd_meta_format(m, buf, sizeof(buf));
	if (len < 0)
		return len;
	/* truncated only once known to be ours alone (a left-over of ours) */
	fd = rpmemd_open_own(dirfd, tmp, O_WRONLY | O_CREAT);
	if (fd < 0)
		return fd;
	if (ftruncate(fd, 0)) {
		ret = -errno;
		goto err_unlink;
	}
	if ((ret = write_all(fd, buf, (size_t)len)))
		goto err_unlink;
	if (fsync(fd)) {
		ret = -errno;
		goto err_unlink;
	}
	if (close(fd)) {
		fd = -1;
		ret = -errno;
		goto err_unlink;
	}
	fd = -1;
	if (renameat(dirfd, tmp, dirfd, file)) {
		ret = -errno;
		goto err_unlink;
	}
	if (fsync(dirfd))
		return -errno;
	return 0;

err_unlink:
	if (fd >= 0)
		close(fd);
	unlinkat(dirfd, tmp, 0);
	return ret;
}

int rpmemd_meta_unlink(int dirfd, const char *pool)
{
	char file[RPMEM_NAME_MAX + 16];
	int ret = meta_file(pool, "", file, sizeof(file));
	if (ret)
		return ret;
	if (unlinkat(dirfd, file, 0))
		return -errno;
	if (fsync(dirfd))
		return -errno;
	return 0;
}

int rpmemd_meta_pool_name(const char *file, char *out)
{
	size_t n = strlen(file), s = strlen(RPMEMD_META_SUFFIX);
	if (n <= s || n - s > RPMEM_NAME_MAX ||
	    strcmp(file + n - s, RPMEMD_META_SUFFIX))
		return 0;
	char name[RPMEM_NAME_MAX + 1];
	memcpy(name, file, n - s);
	name[n - s] = '\0';
	if (!rpmem_name_valid(name))
		return 0;
	memcpy(out, name, n - s + 1);
	return 1;
}
