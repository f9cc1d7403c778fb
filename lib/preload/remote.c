/* SPDX-License-Identifier: BSD-3-Clause */
/* remote.c -- one replica per configured file: bring-up, writes, failures */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include "preload.h"

/* "/proc/self/fd/N": a file reopened through its descriptor */
#define PL_FD_PATH_MAX 64

/*
 * Each configured file has a replication link (librpmemctl's
 * rpmemctl_link_*, docs/ARCHITECTURE.md "Replication links") over our
 * own shared mapping of the file (the shadow): the bring-up pushes the
 * file (the pool consistent, SYNCED); the first flushed write marks the
 * pool syncing with the source "HOST:PATH (live)" (LIVE); from then on
 * the pool holds every range whose drain returned, i.e. a crash-
 * consistent image as of the last drain. A clean exit stops the link:
 * one more push (only the blocks that differ) leaves it consistent. The
 * policy (RPMEM_REPLICATE_POLICY) is the link's: fail-stop aborts the
 * process at a failure, degraded goes on and lets the link reconnect and
 * resync every RPMEM_REPLICATE_RETRY seconds. Every call into librpmemctl
 * is made with pl_busy set, so the library's own mmap and munmap calls
 * pass straight through, and with the file's lock held: for reading by
 * writes, barriers and drains (the set serializes its calls itself, and
 * shares a drain's round trip with the other threads' drains: group
 * commit), for writing by the start and the stop.
 *
 * The dirty log PATH.rpmemlog (the replica API's format and extent size)
 * records the extents every flush covers, before the flush reaches the
 * local file (once per extent until cleared: the hot path is a lookup).
 * The link hands it to every push (bring-up, degraded resync, clean
 * exit), which then sends only the marked extents if the log is relative
 * to the pool's generation, and clears it once the copies are equal. A
 * link call that may push holds sync_lock for writing, a flush from its
 * mark to its end for reading: a push cannot clear a mark whose data it
 * may not have read.
 */

__thread int pl_busy __attribute__((tls_model("initial-exec")));
__thread unsigned pl_dirty __attribute__((tls_model("initial-exec")));
static pthread_rwlock_t sync_lock =
	PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP;

static void log_failed(struct pl_file *f, int err);

/* log_path -- PATH.rpmemlog (target i > 0: PATH.rpmemlog.i) into buf */
static void log_path(const struct pl_file *f, unsigned i, char *buf,
		     size_t len)
{
	/* path is shorter than PATH_MAX and buf has room for the suffix */
	if (i)
		(void)(snprintf(buf, len, "%s.rpmemlog.%u", f->path, i) < 0);
	else
		(void)(snprintf(buf, len, "%s.rpmemlog", f->path) < 0);
}

/*
 * open_log -- open (or create) the dirty log of f's target i (f open at
 * fd) and clear its clean mark until the clean exit; without one every
 * push to it compares the whole file. One that cannot be trusted or
 * used, or has no clean mark (a crash), is replaced (a new one is bound
 * to nothing: the next push compares all).
 */
static void open_log(struct pl_file *f, unsigned i, int fd)
{
	char lp[PATH_MAX + 32];
	struct stat ls, ps;
	if (f->log[i])
		return; /* started before in this process: the same file */
	log_path(f, i, lp, sizeof(lp));
	if (!lstat(lp, &ls) &&
	    (fstat(fd, &ps) || ls.st_mtim.tv_sec != ps.st_mtim.tv_sec ||
	     ls.st_mtim.tv_nsec != ps.st_mtim.tv_nsec)) {
		/* not as the library left it (see stamp): trust nothing */
		pl_msg(LOG_INFO, "'%s' may have changed since the library "
		       "last left it: the bring-up compares the whole file",
		       f->path);
		if (unlink(lp))
			pl_msg(LOG_WARNING, "cannot remove '%s': %s", lp,
			       strerror(errno));
	}
	f->log_new |= lstat(lp, &ls) != 0;
	pl_busy++;
	int ret = rpmemctl_dirtylog_open_pool(lp, fd, f->size, 0,
					      RPMEMCTL_DIRTYLOG_REPLACE,
					      &f->log[i]);
	if (!ret)
		ret = rpmemctl_dirtylog_set_clean(f->log[i], 0);
	const char *why = rpmemctl_strerror(ret);
	pl_busy--;
	if (ret && f->log[i])
		log_failed(f, ret);
	else if (ret)
		pl_msg(LOG_WARNING, "no dirty log for '%s': %s; every sync "
		       "compares the whole file", f->path, why);
}

/*
 * drop_new_logs -- a start that failed for good leaves no logs it
 * created (ones that were there hold marks of earlier runs: they stay)
 */
static void drop_new_logs(struct pl_file *f)
{
	char lp[PATH_MAX + 32];
	if (!f->log_new)
		return;
	for (unsigned i = 0; i < f->ntargets; i++) {
		if (!f->log[i])
			continue;
		pl_busy++;
		rpmemctl_dirtylog_close(&f->log[i]);
		pl_busy--;
		log_path(f, i, lp, sizeof(lp));
		if (unlink(lp) && errno != ENOENT)
			pl_msg(LOG_WARNING, "cannot remove '%s': %s", lp,
			       strerror(errno));
	}
}

/*
 * stamp -- the process is done with f: the log gets its clean mark, then
 * the file and its log one mtime, 1 ns before the file's (any later
 * write or store sets the current time, later than that), so that the
 * next start knows whether the file changed without the library since;
 * after a crash the mark is missing and the next bring-up compares the
 * whole file (the mtimes alone may match: they are as coarse as a tick)
 */
static void stamp(struct pl_file *f)
{
	char lp[PATH_MAX + 32];
	struct stat st;
	if (atomic_load(&f->log_bad) || stat(f->path, &st))
		return;
	for (unsigned i = 0; i < f->ntargets; i++)
		if (!f->log[i] || rpmemctl_dirtylog_set_clean(f->log[i], 1))
			return;
	struct timespec ts[] = { { .tv_nsec = UTIME_OMIT }, st.st_mtim };
	if (ts[1].tv_nsec) {
		ts[1].tv_nsec--;
	} else {
		ts[1].tv_sec--;
		ts[1].tv_nsec = 999999999;
	}
	/* the logs last: a stamped log means a stamped file (its history
	 * follows: the stamp is no write) */
	if (rpmemctl_history_utime(f->path, &ts[1]))
		return;
	for (unsigned i = 0; i < f->ntargets; i++) {
		log_path(f, i, lp, sizeof(lp));
		(void)utimensat(AT_FDCWD, lp, ts, AT_SYMLINK_NOFOLLOW);
	}
}

/*
 * log_failed -- a mark of one of f's logs failed: it no longer covers
 * every write, so they all go (new ones at the next start are bound to
 * nothing)
 */
static void log_failed(struct pl_file *f, int err)
{
	char lp[PATH_MAX + 32];
	if (atomic_exchange(&f->log_bad, 1))
		return;
	for (unsigned i = 1; i < f->ntargets; i++) {
		log_path(f, i, lp, sizeof(lp));
		(void)unlink(lp);
	}
	log_path(f, 0, lp, sizeof(lp));
	if (unlink(lp) && errno != ENOENT)
		pl_msg(LOG_ERR, "cannot mark the dirty log '%s' (%s) nor "
		       "remove it (%s): remove it before the next start, or "
		       "its sync misses writes", lp, strerror(-err),
		       strerror(errno));
	else
		pl_msg(LOG_WARNING, "cannot mark the dirty log '%s': %s; "
		       "removed it: the next syncs compare the whole file",
		       lp, strerror(-err));
}

/* pl_mark -- mark the configured parts of [addr, addr + len) */
int pl_mark(const void *addr, size_t len)
{
	struct pl_hit hits[PL_HITS_MAX];
	unsigned n = pl_maps_lookup(addr, len, hits, PL_HITS_MAX);
	if (!n)
		return 0;
	pthread_rwlock_rdlock(&sync_lock);
	pl_busy++;
	for (unsigned i = 0; i < n; i++) {
		struct pl_file *f = hits[i].f;
		for (unsigned t = 0; t < f->ntargets; t++) {
			if (!f->log[t] || atomic_load(&f->log_bad))
				continue;
			int ret = rpmemctl_dirtylog_mark(f->log[t],
							 hits[i].off,
							 hits[i].len);
			if (ret)
				log_failed(f, ret);
		}
	}
	pl_busy--;
	return 1;
}

/* pl_mark_done -- the flush that pl_mark preceded is done */
void pl_mark_done(void)
{
	pthread_rwlock_unlock(&sync_lock);
}

/* push_lock -- the calls that may push hold sync_lock for writing */
static int push_lock(const struct pl_file *f)
{
	unsigned n = rpmemctl_links_count(f->set);
	if (n && rpmemctl_links_holding(f->set) == n)
		return 0;
	/* no flush between a mark and its end while a log is cleared */
	pthread_rwlock_wrlock(&sync_lock);
	/* a push may trust the logs only while every mark succeeded */
	for (unsigned i = 0; atomic_load(&f->log_bad) && i < n; i++)
		(void)rpmemctl_link_set_dirty_log(
			rpmemctl_links_get(f->set, i), NULL);
	return 1;
}

/* any_live -- some link of f is LIVE: written, a drain may be due */
static int any_live(const struct pl_file *f)
{
	for (unsigned i = 0; i < rpmemctl_links_count(f->set); i++)
		if (rpmemctl_link_get_state(rpmemctl_links_get(f->set, i)) ==
		    RPMEMCTL_LINK_LIVE)
			return 1;
	return 0;
}

/*
 * below_quorum -- a set call of f failed with fewer than k targets
 * holding: under fail-stop (the set's policy) the process stops
 */
static void below_quorum(struct pl_file *f, int ret)
{
	if (!ret || !f->started || pl_cfg.policy != PL_FAIL_STOP ||
	    f->ntargets < 2)
		return; /* one target: its link's own FAILED says it */
	pl_msg(LOG_CRIT, "fail-stop: cannot replicate '%s': %s; aborting",
	       f->path, rpmemctl_links_errmsg(f->set));
	abort();
}

/*
 * quorum_said -- under the degraded policy, the set of f fell below k
 * targets (or came back to k): said once each way, beside the lines of
 * each target, since the application now runs with fewer copies than
 * configured
 */
static void quorum_said(struct pl_file *f)
{
	unsigned got = rpmemctl_links_holding(f->set);
	unsigned k = rpmemctl_links_quorum(f->set);
	if (!f->started || pl_cfg.policy == PL_FAIL_STOP || f->ntargets < 2 ||
	    (got < k) == f->below_k)
		return;
	f->below_k = got < k;
	if (f->below_k)
		pl_msg(LOG_ERR, "degraded: quorum lost: only %u of %u targets "
		       "hold '%s' (%u needed); continuing with fewer copies "
		       "than configured until a target is resynced", got,
		       f->ntargets, f->path, k);
	else
		pl_msg(LOG_NOTICE, "quorum regained: %u of %u targets hold "
		       "'%s' (%u needed)", got, f->ntargets, f->path, k);
}

/*
 * failing -- the targets of f whose links do not hold, as configured,
 * joined by ", " into buf; the first target if every one holds
 */
static const char *failing(const struct pl_file *f, char *buf, size_t len)
{
	size_t o = 0;
	buf[0] = '\0';
	for (unsigned i = 0; f->set && i < f->ntargets && o < len; i++) {
		enum rpmemctl_link_state s = rpmemctl_link_get_state(
			rpmemctl_links_get(f->set, i));
		if (s != RPMEMCTL_LINK_SYNCED && s != RPMEMCTL_LINK_LIVE)
			o += (size_t)snprintf(buf + o, len - o, "%s%s",
					      o ? ", " : "",
					      f->targets[i].spec);
	}
	return buf[0] ? buf : f->target;
}

/*
 * call -- run a link call (op, on off and len) with the library's
 * interposition off and, where it may push, sync_lock held
 */
enum pl_op { PL_PUSH, PL_WRITE, PL_DRAIN, PL_DRAIN_START, PL_BARRIER,
	     PL_STOP, PL_FENCE };
static int call(struct pl_file *f, enum pl_op op, uint64_t off, uint64_t len)
{
	int locked = op == PL_STOP ? (pthread_rwlock_wrlock(&sync_lock), 1) :
				     push_lock(f);
	int ret = 0;
	pl_busy++;
	switch (op) {
	case PL_PUSH:
		ret = rpmemctl_links_push(f->set);
		break;
	case PL_WRITE:
		ret = rpmemctl_links_write(f->set, off, len);
		break;
	case PL_DRAIN:
		ret = rpmemctl_links_drain(f->set);
		break;
	case PL_DRAIN_START:
		ret = rpmemctl_links_drain_start(f->set);
		break;
	case PL_BARRIER:
		ret = rpmemctl_links_barrier(f->set);
		break;
	case PL_STOP:
		ret = rpmemctl_links_stop(f->set);
		break;
	case PL_FENCE:
		ret = rpmemctl_links_fence(f->set);
		break;
	}
	pl_busy--;
	if (locked)
		pthread_rwlock_unlock(&sync_lock);
	if (ret == -ENOTRECOVERABLE && op != PL_STOP) {
		/* the fence-peer handler failed: acknowledge nothing more */
		pl_msg(LOG_CRIT, "cannot replicate '%s': %s; aborting",
		       f->path, rpmemctl_links_errmsg(f->set));
		abort();
	}
	if (op != PL_STOP)
		below_quorum(f, ret);
	if (op != PL_STOP)
		quorum_said(f);
	return ret;
}

/* report_push -- what the last push of f to target i sent, for the log */
static uint64_t report_push(struct pl_file *f, unsigned i)
{
	const struct rpmemctl_sync_result *res =
		rpmemctl_link_get_result(rpmemctl_links_get(f->set, i));
	if (!res)
		return 0;
	/* one target: the message as before there were several */
	const char *to = f->ntargets > 1 ? " to " : "";
	const char *spec = f->ntargets > 1 ? f->targets[i].spec : "";
	if (rpmemctl_sync_result_get_dirty_only(res))
		pl_msg(LOG_INFO, "'%s'%s%s: synced only the extents its "
		       "dirty log marked", f->path, to, spec);
	else if (f->log[i] && !atomic_load(&f->log_bad))
		pl_msg(LOG_INFO, "'%s'%s%s: compared the whole file: %s",
		       f->path, to, spec,
		       rpmemctl_sync_result_get_dirty_fallback(res));
	return rpmemctl_sync_result_get_data_bytes(res);
}

/* report_all -- what the last pushes of f sent, summed */
static uint64_t report_all(struct pl_file *f)
{
	uint64_t sum = 0;
	for (unsigned i = 0; i < rpmemctl_links_count(f->set); i++)
		sum += report_push(f, i);
	return sum;
}

/*
 * on_state -- the link of f changed state: fail-stop aborts a started
 * replica (one that has not started fails its mapping instead), degraded
 * says so once, a resync says so
 */
static void on_state(void *arg, struct rpmemctl_link *link,
		     enum rpmemctl_link_state from __attribute__((unused)),
		     enum rpmemctl_link_state to)
{
	struct pl_target *t = arg;
	struct pl_file *f = t->f;
	const char *why = rpmemctl_link_errmsg(link);
	if (to == RPMEMCTL_LINK_FAILED && f->started) {
		/* no goodbye to a target that may not answer: stop now */
		pl_msg(LOG_CRIT, "fail-stop: cannot replicate '%s' to %s: %s; "
		       "aborting", f->path, t->spec, why);
		abort();
	}
	if (to == RPMEMCTL_LINK_DEGRADED && f->started)
		pl_msg(LOG_WARNING, "degraded: cannot replicate '%s' to %s: "
		       "%s; continuing without the replica, which stays "
		       "syncing until it is resynced", f->path, t->spec, why);
	if (to == RPMEMCTL_LINK_DEGRADED)
		t->behind = 1;
	/* its target answered: the resync runs beside the application */
	if (to == RPMEMCTL_LINK_RESYNCING)
		pl_msg(LOG_NOTICE, "resyncing: '%s' to %s in the background "
		       "(the replica stays behind, syncing, until it caught "
		       "up)", f->path, t->spec);
	/* through OPEN: the reconnect comes before the push */
	if (to == RPMEMCTL_LINK_SYNCED && t->behind) {
		t->behind = 0;
		pl_msg(LOG_NOTICE, "resynced: '%s' is replicated to %s again "
		       "(%llu bytes moved)", f->path, t->spec,
		       (unsigned long long)report_push(f, t->i));
	}
}

/*
 * link_new -- the link to f's target i: its shadow, log, sources, policy
 * (one of several targets: degrade, the set's policy below k) and hook
 */
static int link_new(struct pl_file *f, unsigned i)
{
	struct rpmemctl_link *l = NULL;
	int fail_stop = pl_cfg.policy == PL_FAIL_STOP && f->ntargets == 1;
	int ret = rpmemctl_link_new(f->targets[i].spec, pl_cfg.transport, &l);
	if (!ret)
		ret = rpmemctl_link_set_data(l, f->shadow, f->size);
	if (!ret)
		ret = rpmemctl_link_set_dirty_log(l, f->log[i]);
	if (!ret)
		ret = rpmemctl_link_set_history(l, f->path);
	if (!ret)
		ret = rpmemctl_link_set_source(l, f->source, f->live_src);
	if (!ret)
		ret = rpmemctl_link_set_policy(l, fail_stop ?
					       RPMEMCTL_LINK_FAIL_STOP :
					       RPMEMCTL_LINK_DEGRADE,
					       pl_cfg.retry_s < 0 ? -1 :
					       pl_cfg.retry_s * 1000);
	/* the process's files share a session to each target */
	if (!ret)
		ret = rpmemctl_link_set_shared(l, 1);
	if (!ret)
		ret = rpmemctl_link_set_notify(l, on_state, &f->targets[i]);
	/* our sessions log to pl_log, never to the application's log */
	if (!ret)
		ret = rpmemctl_link_set_log(l, pl_log, NULL, LOG_DEBUG);
	if (!ret)
		ret = rpmemctl_links_add(f->set, l);
	if (ret)
		rpmemctl_link_delete(&l);
	return ret;
}

/* set_new -- f's set of links, k of n, one per target */
static int set_new(struct pl_file *f)
{
	int ret = rpmemctl_links_new(pl_cfg.quorum, pl_cfg.policy ==
				     PL_FAIL_STOP ? RPMEMCTL_LINK_FAIL_STOP :
				     RPMEMCTL_LINK_DEGRADE, &f->set);
	for (unsigned i = 0; !ret && i < f->ntargets; i++)
		ret = link_new(f, i);
	if (!ret && pl_cfg.spin_us >= 0)
		ret = rpmemctl_links_set_spin(f->set, (unsigned)pl_cfg.spin_us);
	if (!ret)
		ret = rpmemctl_links_set_kickout(f->set, pl_cfg.kickout_ms < 0 ?
						 RPMEMCTL_KICKOUT_MS_DEFAULT :
						 (unsigned)pl_cfg.kickout_ms,
						 pl_cfg.kickout_bytes);
	if (!ret) {
		char spath[PATH_MAX + 16];
		(void)(snprintf(spath, sizeof(spath), "%s.rpmemstat",
				f->path) < 0);
		ret = rpmemctl_links_set_status_file(f->set, spath);
	}
	return ret;
}

/*
 * stop_at_exit -- the final sync runs from atexit, registered after the
 * first session so that it runs before the handlers the session's
 * libraries registered (OpenSSL's cleanup); the destructor is a fallback
 */
static void stop_at_exit(void)
{
	static atomic_flag done = ATOMIC_FLAG_INIT;
	if (!atomic_flag_test_and_set(&done))
		atexit(pl_stop_all);
}

/*
 * pending -- whether the calling thread has writes to f to drain, from
 * f's links' states
 */
static void pending(struct pl_file *f, int written)
{
	unsigned bit = 1u << (f - pl_cfg.files);
	if (written && any_live(f))
		pl_dirty |= bit;
	else
		pl_dirty &= ~bit;
}

/* shadow_map -- our own shared mapping of the whole file open at fd */
static int shadow_map(struct pl_file *f, int fd)
{
	/*
	 * our own open file description: a mapping of the application's
	 * would keep its flock (libpmemobj's pool lock) alive after it
	 * closed the file
	 */
	char self[PL_FD_PATH_MAX];
	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	int own = open(self, O_RDWR | O_CLOEXEC);
	f->shadow = own < 0 ? MAP_FAILED :
		    pl_real_mmap(NULL, f->size, PROT_READ | PROT_WRITE,
				 MAP_SHARED, own, 0);
	int ret = -errno;
	if (own >= 0)
		close(own);
	if (f->shadow != MAP_FAILED)
		return 0;
	f->shadow = NULL;
	snprintf(f->errmsg, sizeof(f->errmsg), "cannot map '%.*s': %s", 300,
		 f->path, strerror(-ret));
	return ret;
}

/*
 * started_without -- f started with k of its targets: each one left
 * behind (down, or kicked out at the start: it did not answer within the
 * kick-out timeout) is said once
 */
static void started_without(struct pl_file *f)
{
	for (unsigned i = 0; i < f->ntargets; i++) {
		struct rpmemctl_link *l = rpmemctl_links_get(f->set, i);
		if (rpmemctl_link_get_state(l) != RPMEMCTL_LINK_DEGRADED)
			continue;
		pl_msg(LOG_WARNING, "degraded: cannot start replicating '%s' "
		       "to %s: %s; continuing with the other targets, the "
		       "replica stays behind until it is resynced", f->path,
		       f->targets[i].spec, rpmemctl_link_errmsg(l));
	}
}

/*
 * pl_file_start -- the first mapping of f in this process; f->lock held
 * for writing
 */
int pl_file_start(struct pl_file *f, int fd)
{
	struct stat st;
	int ret;
	if (fstat(fd, &st))
		return -errno;
	if (st.st_size <= 0)
		return 0; /* nothing to replicate yet: wait for a later map */
	f->size = (uint64_t)st.st_size;
	f->dev = st.st_dev;
	f->ino = st.st_ino;
	if ((ret = shadow_map(f, fd)))
		goto err_failed;
	pl_order_refresh();
	for (unsigned i = 0; i < f->ntargets; i++)
		open_log(f, i, fd);
	pl_busy++;
	ret = set_new(f);
	pl_busy--;
	if (ret) {
		snprintf(f->errmsg, sizeof(f->errmsg), "%s",
			 rpmemctl_strerror(ret));
		goto err_failed;
	}
	/* the bring-up: the pool consistent, live at the first write */
	ret = call(f, PL_PUSH, 0, 0);
	/* degraded below k: the set says 0, the start failed all the same */
	if (!ret && rpmemctl_links_holding(f->set) <
			    rpmemctl_links_quorum(f->set))
		ret = -EIO;
	if (ret) {
		snprintf(f->errmsg, sizeof(f->errmsg), "%s",
			 rpmemctl_links_errmsg(f->set));
		goto err_failed;
	}
	f->started = 1;
	stop_at_exit();
	pl_msg(LOG_INFO, "replicating '%s' to %s%s (%llu bytes brought up to "
	       "date)", f->path, f->target, f->ntargets > 1 ?
	       " and other targets" : "", (unsigned long long)report_all(f));
	started_without(f);
	return 0;

err_failed:;
	char names[PL_TARGETS_MAX * PL_TARGET_LEN];
	failing(f, names, sizeof(names));
	if (pl_cfg.policy == PL_FAIL_STOP) {
		pl_msg(LOG_CRIT, "fail-stop: cannot start replicating '%s' to "
		       "%s: %s; the mapping fails", f->path, names,
		       f->errmsg);
		rpmemctl_links_delete(&f->set);
		drop_new_logs(f);
		if (f->shadow)
			pl_real_munmap(f->shadow, f->size);
		f->shadow = NULL;
		return ret;
	}
	f->started = 1;
	stop_at_exit();
	/* never reached: the target still lists its last image */
	pl_msg(LOG_WARNING, "degraded: cannot start replicating '%s' to %s: "
	       "%s; continuing without the replica, which keeps the image "
	       "it had (behind this file) until it is resynced", f->path,
	       names, f->errmsg);
	return 0;
}

/* retry_waits -- no link of f is usable and none is due a retry */
static int retry_waits(const struct pl_file *f)
{
	for (unsigned i = 0; i < rpmemctl_links_count(f->set); i++) {
		struct rpmemctl_link *l = rpmemctl_links_get(f->set, i);
		if (rpmemctl_link_get_state(l) != RPMEMCTL_LINK_DEGRADED ||
		    !rpmemctl_link_get_retry_ns(l))
			return 0;
	}
	return 1;
}

/* write_range -- send [off, off + len) of f to its targets */
static void write_range(struct pl_file *f, uint64_t off, uint64_t len)
{
	pthread_rwlock_rdlock(&f->lock);
	if (!f->set)
		goto out;
	/* no drain round will come: the copies it goes on without fenced */
	if (!any_live(f))
		(void)call(f, PL_FENCE, 0, 0);
	if (retry_waits(f))
		goto out; /* only local until a retry is due */
	int ret = call(f, PL_WRITE, off, len);
	if (ret)
		pl_msg(LOG_INFO, "still degraded: '%s': %s", f->path,
		       rpmemctl_links_errmsg(f->set));
	pending(f, !ret || any_live(f));
out:
	pthread_rwlock_unlock(&f->lock);
}

/* pl_flushed -- [addr, addr + len) was flushed: write its configured parts */
void pl_flushed(const void *addr, size_t len)
{
	struct pl_hit hits[PL_HITS_MAX];
	unsigned n = pl_maps_lookup(addr, len, hits, PL_HITS_MAX);
	for (unsigned i = 0; i < n; i++)
		write_range(hits[i].f, hits[i].off, hits[i].len);
}

/*
 * start_drains -- the FLUSHes of every file the thread has to drain sent
 * before any reply is awaited, when there are several: their round
 * trips overlap (the drains that follow read the replies)
 */
static void start_drains(void)
{
	if (__builtin_popcount(pl_dirty) < 2)
		return;
	for (unsigned i = 0; i < pl_cfg.nfiles; i++) {
		struct pl_file *f = &pl_cfg.files[i];
		if (!(pl_dirty & (1u << i)))
			continue;
		pthread_rwlock_rdlock(&f->lock);
		if (any_live(f))
			(void)call(f, PL_DRAIN_START, 0, 0);
		pthread_rwlock_unlock(&f->lock);
	}
}

/*
 * pl_drain -- every write of the thread so far is persistent on its
 * target; ordered: a barrier (the file stays pending until a drain that
 * waits)
 */
void pl_drain(int ordered)
{
	if (!ordered)
		start_drains();
	for (unsigned i = 0; i < pl_cfg.nfiles; i++) {
		struct pl_file *f = &pl_cfg.files[i];
		if (!(pl_dirty & (1u << i)))
			continue;
		pthread_rwlock_rdlock(&f->lock);
		int live = any_live(f);
		if (live && ordered && !call(f, PL_BARRIER, 0, 0)) {
			pthread_rwlock_unlock(&f->lock);
			continue;
		}
		if (live && !ordered)
			(void)call(f, PL_DRAIN, 0, 0);
		pending(f, 0);
		pthread_rwlock_unlock(&f->lock);
	}
}

/* pl_commit -- the application is promised durability: wait for all */
void pl_commit(void)
{
	if (pl_dirty && !pl_busy)
		pl_drain(0);
}

/* stop -- clean exit of the replicas: push what differs, consistent, close */
static void stop(struct pl_file *f)
{
	pthread_rwlock_wrlock(&f->lock);
	/* the set's stop retries a degraded target once more */
	if (f->set && call(f, PL_STOP, 0, 0))
		pl_msg(LOG_WARNING, "at exit: cannot mark the replicas of "
		       "'%s' consistent: %s; they stay syncing", f->path,
		       rpmemctl_links_errmsg(f->set));
	for (unsigned i = 0; i < rpmemctl_links_count(f->set); i++)
		if (rpmemctl_link_get_state(rpmemctl_links_get(f->set, i)) ==
		    RPMEMCTL_LINK_DEGRADED)
			pl_msg(LOG_WARNING, "at exit: the replica of '%s' on "
			       "%s is behind (degraded); it stays syncing "
			       "until the next start resyncs it", f->path,
			       f->targets[i].spec);
	if (f->set)
		pending(f, 0);
	rpmemctl_links_delete(&f->set);
	if (f->started)
		stamp(f);
	f->started = 0;
	pthread_rwlock_unlock(&f->lock);
}

/* pl_stop_all -- clean exit: final sync, replicas consistent, closed */
void pl_stop_all(void)
{
	for (unsigned i = 0; i < pl_cfg.nfiles; i++)
		stop(&pl_cfg.files[i]);
}

/* pl_forked -- in a forked child: drop every replica without a word */
void pl_forked(void)
{
	/* the parent's sessions and locks are not ours to touch */
	pl_maps_forget_all();
	pl_cfg.nfiles = 0;
	pl_dirty = 0;
}
