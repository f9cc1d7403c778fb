/* SPDX-License-Identifier: BSD-3-Clause */
/* links_status.c -- a set of links publishes each replica's state and lag */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "client.h"
#include "log.h"
#include "util.h"

/*
 * The status file (PATH.rpmemstat beside the dirty logs) is what
 * `rpmemctl status --replicas PATH` reads: the process that replicates
 * PATH, and for each target its link's state and what it missed while
 * left behind. It is a report, not a promise: written with a rename (a
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
static size_t links_status_format(char *buf, size_t size, unsigned k,
				  unsigned n, unsigned holding,
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
		o += (size_t)snprintf(buf + o, size - o,
				      "replica %u %s %llu %llu %s\n", i,
				      rpmemctl_link_state_str(
					      rpmemctl_link_get_state(link[i])),
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
	size_t len = links_status_format(buf, sizeof(buf), k, n, holding, link,
					 bytes, t0);
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
