/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * links_status.c -- a set of links publishes each replica's state and lag;
 * rpmemctl_replicas_read reads it back
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "client_replicate.h"
#include "log.h"
#include "util.h"

/* QUORUM_FIELDS -- the numbers of the status file's quorum line */
#define QUORUM_FIELDS 3

/*
 * The status file (PATH.rpmemstat beside the dirty logs) is what
 * rpmemctl_replicas_read, and so `rpmemctl replicas PATH`, reads: the
 * process that replicates PATH, and for each target its link's state and
 * what it missed while left behind. It is a report, not a promise: written with a rename (a
 * reader sees a whole file) but never synced, rewritten when a link's
 * state changes or it starts lagging, and at most once a second while
 * one lags. Format (text,
 * one record per line, fields separated by one space):
 *
 *   rpmem-replicas 1
 *   pid PID
 *   updated UNIX_NS
 *   quorum K N HOLDING
 *   replica I STATE BEHIND_BYTES BEHIND_SINCE_UNIX_NS TARGET
 *
 * BEHIND_SINCE is 0 for a replica that holds every write.
 */
#define STATUS_PERIOD_NS 1000000000ull

/* real_ns -- CLOCK_REALTIME in ns */
static uint64_t real_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* status_write -- write the file (tmp + rename); -errno */
static int status_write(const struct links_status *st, const char *text,
			size_t len)
{
	char tmp[PATH_MAX + 16];
	if (snprintf(tmp, sizeof(tmp), "%s.tmp", st->path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW |
		      O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	int ret = write(fd, text, len) == (ssize_t)len ? 0 : -EIO;
	close(fd);
	if (!ret && rename(tmp, st->path))
		ret = -errno;
	if (ret)
		unlink(tmp);
	return ret;
}

/*
 * links_status_format -- the file's text for n links (state, behind
 * bytes, behind since in monotonic ns) into buf; its length
 */
static size_t links_status_format(const struct links_status *st, char *buf,
				  size_t size, unsigned k, unsigned n,
				  unsigned holding,
				  struct rpmemctl_link *const *link,
				  const uint64_t *bytes, const uint64_t *t0)
{
	uint64_t now = real_ns(), mono = rpmem_now_ns();
	size_t o = (size_t)snprintf(buf, size, "rpmem-replicas 1\npid %ld\n"
				    "updated %llu\nquorum %u %u %u\n",
				    (long)getpid(), (unsigned long long)now,
				    k, n, holding);
	for (unsigned i = 0; i < n && o < size; i++) {
		uint64_t since = t0[i] ? now - (mono - t0[i]) : 0;
		enum rpmemctl_link_state ls = rpmemctl_link_get_state(link[i]);
		/* stopped cleanly: what the copy holds, not the link's DOWN */
		if (st->stopped_synced & (1u << i))
			ls = RPMEMCTL_LINK_SYNCED;
		o += (size_t)snprintf(buf + o, size - o,
				      "replica %u %s %llu %llu %s\n", i,
				      rpmemctl_link_state_str(ls),
				      (unsigned long long)bytes[i],
				      (unsigned long long)since,
				      client_link_name(link[i]));
	}
	return o < size ? o : size - 1;
}

/*
 * links_status_update -- publish if a link's state changed since the
 * last time, or a second passed while one lags; failures are ignored
 * (the file is a report) but logged once
 */
void links_status_update(struct links_status *st, unsigned k, unsigned n,
			 unsigned holding, struct rpmemctl_link *const *link,
			 const uint64_t *bytes, const uint64_t *t0)
{
	if (!st->path[0])
		return;
	int changed = !st->written, lag = 0;
	for (unsigned i = 0; i < n; i++) {
		/* the state, and whether it lags, bit 7 */
		uint8_t s = (uint8_t)rpmemctl_link_get_state(link[i]) |
			    (bytes[i] ? 0x80 : 0);
		changed |= s != st->state[i];
		st->state[i] = s;
		lag |= t0[i] != 0;
	}
	/* the common case, every write while all hold: no clock read */
	if (!changed && !lag)
		return;
	uint64_t now = rpmem_now_ns();
	if (!changed && now - st->at_ns < STATUS_PERIOD_NS)
		return;
	char buf[LINKS_STATUS_MAX];
	size_t len = links_status_format(st, buf, sizeof(buf), k, n, holding,
					 link, bytes, t0);
	int ret = status_write(st, buf, len);
	if (ret && !st->failed)
		WARN("cannot write the status file '%s': %s", st->path,
			  strerror(-ret));
	st->failed = ret != 0;
	st->written = 1;
	st->at_ns = now;
}

/* links_status_set -- publish to path from now on (NULL: stop) */
int links_status_set(struct links_status *st, const char *path)
{
	if (path && strlen(path) + 5 >= sizeof(st->path))
		return -ENAMETOOLONG;
	memset(st, 0, sizeof(*st));
	if (path)
		snprintf(st->path, sizeof(st->path), "%s", path);
	return 0;
}

/* what each line of the file must be, in order; the last repeats */
static const char *const status_lines[] = {
	"not 'rpmem-replicas 1'",
	"not 'pid PID' (PID > 0)",
	"not 'updated UNIX_NS'",
	"not 'quorum K N HOLDING' (K, HOLDING <= N <= 16)",
	"not 'replica I STATE BEHIND_BYTES BEHIND_SINCE_UNIX_NS TARGET' "
	"(I counting from 0, STATE a link state, TARGET host:port/region/pool)",
};

/* field -- the next field of *p (one space apart), "" past the end */
static const char *field(char **p)
{
	char *f = strsep(p, " ");
	return f ? f : "";
}

/* num -- the decimal digits s (no sign, no blank) into *v, at most max */
static int num(const char *s, uint64_t max, uint64_t *v)
{
	char *end;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	unsigned long long x = strtoull(s, &end, 10);
	if (errno || *end || x > max)
		return -1;
	*v = x;
	return 0;
}

/* nums -- line is key and n numbers, the i-th at most max[i], nothing more */
static int nums(char *line, const char *key, unsigned n, const uint64_t *max,
		uint64_t *v)
{
	if (strcmp(field(&line), key))
		return -1;
	for (unsigned i = 0; i < n; i++)
		if (!line || num(field(&line), max[i], &v[i]))
			return -1;
	return line ? -1 : 0;
}

/* state_of -- the link state named s, or -1 */
static int state_of(const char *s)
{
	for (int i = RPMEMCTL_LINK_DOWN; i <= RPMEMCTL_LINK_RESYNCING; i++)
		if (!strcmp(s, rpmemctl_link_state_str(i)))
			return i;
	return -1;
}

/* parse_replica -- "replica I STATE BYTES SINCE TARGET", the next one */
static int parse_replica(char *line, struct rpmemctl_replicas_report *r)
{
	struct rpmemctl_replica_report *p = &r->replica[r->count];
	struct rpmemctl_target *t = NULL;
	uint64_t i;

	if (r->count >= RPMEMCTL_REPLICAS_MAX ||
	    strcmp(field(&line), "replica") || !line ||
	    num(field(&line), r->count, &i) || i != r->count || !line ||
	    (p->state = state_of(field(&line))) < 0 || !line ||
	    num(field(&line), UINT64_MAX, &p->behind_bytes) || !line ||
	    num(field(&line), UINT64_MAX, &p->behind_since_ns) || !line)
		return -1;
	const char *target = field(&line);
	if (line || strlen(target) >= sizeof(p->target) ||
	    rpmemctl_target_parse(target, RPMEMCTL_TARGET_NEED_POOL, &t,
				  NULL, 0))
		return -1;
	rpmemctl_target_delete(&t);
	memcpy(p->target, target, strlen(target) + 1);
	r->count++;
	return 0;
}

/* parse_line -- the n-th line (0 = the first) of the file into r */
static int parse_line(char *line, unsigned n, uint64_t *q,
		      struct rpmemctl_replicas_report *r)
{
	static const uint64_t one = 1, pid = INT32_MAX, any = UINT64_MAX;
	static const uint64_t qmax[] = { RPMEMCTL_REPLICAS_MAX,
					  RPMEMCTL_REPLICAS_MAX,
					  RPMEMCTL_REPLICAS_MAX };
	uint64_t v;

	switch (n) {
	case 0:
		return nums(line, "rpmem-replicas", 1, &one, &v) || v != 1 ?
			       -1 : 0;
	case 1:
		if (nums(line, "pid", 1, &pid, &v) || !v)
			return -1;
		r->pid = (long)v;
		return 0;
	case 2:
		return nums(line, "updated", 1, &any, &r->updated_ns);
	case 3:
		return nums(line, "quorum", 3, qmax, q) || q[0] > q[1] ||
			       q[2] > q[1] ? -1 : 0;
	}
	return parse_replica(line, r);
}

/*
 * status_text -- read the file at path into buf (NUL-terminated); 0,
 * -EFBIG (size - 1 bytes or more), -EBADMSG (a NUL byte in it) or -errno
 */
static int status_text(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n = read(fd, buf, size - 1);
	int err = errno;
	close(fd);
	if (n < 0)
		return -err;
	size_t len = (size_t)n;
	if (len >= size - 1)
		return -EFBIG;
	buf[len] = 0;
	return strlen(buf) == len ? 0 : -EBADMSG;
}

/* line_why -- what is wrong with the n-th line (0 = the first), or NULL */
static const char *line_why(char *line, unsigned n, uint64_t *q,
			    struct rpmemctl_replicas_report *out)
{
	if (n >= 4 && out->count >= q[1])
		return "a replica more than quorum's N";
	return parse_line(line, n, q, out) ? status_lines[n < 4 ? n : 4] :
					     NULL;
}

/* status_parse -- the file's text into out; the bad line's number, or 0 */
static unsigned status_parse(char *text, struct rpmemctl_replicas_report *out,
			     const char **why)
{
	uint64_t q[QUORUM_FIELDS] = { 0 };
	unsigned n = 0;
	char *line;

	for (; *text; n++, text = line) {
		*why = "cut short (no newline: a torn file)";
		if (!(line = strchr(text, '\n')))
			return n + 1;
		*line++ = 0;
		if ((*why = line_why(text, n, q, out)))
			return n + 1;
	}
	out->quorum = (unsigned)q[0];
	out->holding = (unsigned)q[2];
	*why = n < 4 ? status_lines[n] : "missing: fewer replicas than quorum's N";
	return n < 4 || out->count != q[1] ? n + 1 : 0;
}

/*
 * rpmemctl_replicas_read -- the status file at path (what a set of links
 * publishes, rpmemctl_links_set_status_file) into *out
 */
RPMEM_EXPORT int rpmemctl_replicas_read(const char *path,
					struct rpmemctl_replicas_report *out,
					char *errbuf, size_t errlen)
{
	char text[LINKS_STATUS_MAX + 1]; /* the writer's most, a NUL */
	const char *why = NULL;

	if (!path || !out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	int ret = status_text(path, text, sizeof(text));
	if ((ret == -EFBIG || ret == -EBADMSG) && errlen)
		snprintf(errbuf, errlen, "%s", ret == -EFBIG ?
			 "longer than a status file can be" : "a NUL byte in it");
	if (ret)
		return ret == -EFBIG ? -EBADMSG : ret;
	unsigned line = status_parse(text, out, &why);
	if (!line)
		return 0;
	if (errlen)
		snprintf(errbuf, errlen, "line %u %s", line, why);
	memset(out, 0, sizeof(*out));
	return -EBADMSG;
}
