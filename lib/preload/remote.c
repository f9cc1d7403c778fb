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

/*
 * States of a replica, as the target records them (docs/ARCHITECTURE.md,
 * "Continuous replication"): the bring-up pushes the file (syncing, then
 * consistent), then marks the pool syncing with the source "HOST:PATH
 * (live)" while the application writes into it; from then on the pool
 * holds every range whose drain returned, i.e. a crash-consistent image
 * as of the last drain. A clean exit pushes once more (only the blocks
 * that differ) and leaves it consistent. Every call into librpmemctl is
 * made with the file's lock held and pl_busy set, so the library's own
 * mmap and munmap calls pass straight through.
 *
 * The dirty log PATH.rpmemlog (the replica API's format and extent size)
 * records the extents every flush covers, before the flush reaches the
 * local file (once per extent until cleared: the hot path is a lookup).
 * Each push (bring-up, degraded resync, clean exit) hands it to the sync,
 * which then sends only the marked extents if the log is relative to the
 * pool's generation, and clears it once the copies are equal. A push
 * holds sync_lock for writing, a flush from its mark to its end for
 * reading: a push cannot clear a mark whose data it may not have read.
 */

__thread int pl_busy __attribute__((tls_model("initial-exec")));
atomic_uint pl_pending_files;
static pthread_rwlock_t sync_lock =
	PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP;

static void log_failed(struct pl_file *f, int err);

/* log_path -- PATH.rpmemlog of f into buf */
static void log_path(const struct pl_file *f, char *buf, size_t len)
{
	snprintf(buf, len, "%s.rpmemlog", f->path);
}

/*
 * open_log -- open (or create) the dirty log of f (open at fd) and clear
 * its clean mark until the clean exit; without one every push compares
 * the whole file. One that cannot be trusted or used, or has no clean
 * mark (a crash), is replaced (a new one is bound to nothing: the next
 * push compares all).
 */
static void open_log(struct pl_file *f, int fd)
{
	char lp[PATH_MAX + 16];
	struct stat ls, ps;
	if (f->log)
		return; /* started before in this process: the same file */
	log_path(f, lp, sizeof(lp));
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
	pl_busy++;
	int ret = rpmemctl_dirtylog_open_pool(lp, fd, f->size, 0,
					      RPMEMCTL_DIRTYLOG_REPLACE,
					      &f->log);
	if (!ret)
		ret = rpmemctl_dirtylog_set_clean(f->log, 0);
	const char *why = rpmemctl_strerror(ret);
	pl_busy--;
	if (ret && f->log)
		log_failed(f, ret);
	else if (ret)
		pl_msg(LOG_WARNING, "no dirty log for '%s': %s; every sync "
		       "compares the whole file", f->path, why);
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
	char lp[PATH_MAX + 16];
	struct stat st;
	if (!f->log || atomic_load(&f->log_bad) ||
	    rpmemctl_dirtylog_set_clean(f->log, 1) || stat(f->path, &st))
		return;
	struct timespec ts[2] = { { .tv_nsec = UTIME_OMIT }, st.st_mtim };
	if (ts[1].tv_nsec) {
		ts[1].tv_nsec--;
	} else {
		ts[1].tv_sec--;
		ts[1].tv_nsec = 999999999;
	}
	log_path(f, lp, sizeof(lp));
	/* the log last: a stamped log means a stamped file */
	if (!utimensat(AT_FDCWD, f->path, ts, 0))
		(void)utimensat(AT_FDCWD, lp, ts, AT_SYMLINK_NOFOLLOW);
}

/*
 * log_failed -- a mark of f's log failed: the log no longer covers every
 * write, so it goes (a new one at the next start is bound to nothing)
 */
static void log_failed(struct pl_file *f, int err)
{
	char lp[PATH_MAX + 16];
	if (atomic_exchange(&f->log_bad, 1))
		return;
	log_path(f, lp, sizeof(lp));
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
	struct pl_hit hits[4];
	unsigned n = pl_maps_lookup(addr, len, hits, 4);
	if (!n)
		return 0;
	pthread_rwlock_rdlock(&sync_lock);
	pl_busy++;
	for (unsigned i = 0; i < n; i++) {
		struct pl_file *f = hits[i].f;
		if (!f->log || atomic_load(&f->log_bad))
			continue;
		int ret = rpmemctl_dirtylog_mark(f->log, hits[i].off,
						 hits[i].len);
		if (ret)
			log_failed(f, ret);
	}
	pl_busy--;
	return 1;
}

/* pl_mark_done -- the flush that pl_mark preceded is done */
void pl_mark_done(void)
{
	pthread_rwlock_unlock(&sync_lock);
}

/* ferr -- keep the reason of a failure in f; returns err */
__attribute__((format(printf, 3, 4))) static int
ferr(struct pl_file *f, int err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(f->errmsg, sizeof(f->errmsg), fmt, ap);
	va_end(ap);
	return err;
}

/* disconnect -- close the pool and the session, dropping pending ranges */
static void disconnect(struct pl_file *f)
{
	pl_busy++;
	rpmemctl_pool_close(&f->pool);
	rpmemctl_session_close(&f->sess);
	pl_busy--;
	f->live = 0;
	if (atomic_exchange(&f->npending, 0))
		atomic_fetch_sub(&pl_pending_files, 1);
}

/*
 * push -- bring the pool up to date from the shadow, only the extents of
 * the dirty log if it may stand in for the comparison; bytes moved in
 * *moved
 */
static int push(struct pl_file *f, uint64_t *moved)
{
	struct rpmemctl_sync_cfg *cfg = NULL;
	struct rpmemctl_sync_result *res = NULL;
	struct rpmemctl_dirtylog *log = NULL;
	int ret = rpmemctl_sync_cfg_new(&cfg);
	if (!ret)
		ret = rpmemctl_sync_cfg_set_source(cfg, f->source);
	if (!ret)
		ret = rpmemctl_sync_result_new(&res);
	if (ret) {
		ferr(f, ret, "%s", rpmemctl_strerror(ret));
		goto err_free;
	}
	/* no flush between a mark and its end while the log is cleared */
	pthread_rwlock_wrlock(&sync_lock);
	if (f->log && !atomic_load(&f->log_bad)) {
		log = f->log;
		ret = rpmemctl_sync_cfg_set_dirty_log(cfg, log);
	}
	if (!ret)
		ret = rpmemctl_pool_sync2(f->pool, f->shadow, f->size, cfg,
					  res);
	pthread_rwlock_unlock(&sync_lock);
	if (ret) {
		ferr(f, ret, "sync: %s", rpmemctl_pool_errmsg(f->pool));
		goto err_free;
	}
	if (moved)
		*moved = rpmemctl_sync_result_get_data_bytes(res);
	if (log && rpmemctl_sync_result_get_dirty_only(res))
		pl_msg(LOG_INFO, "'%s': synced only the extents its dirty "
		       "log marked", f->path);
	else if (log)
		pl_msg(LOG_INFO, "'%s': compared the whole file: %s",
		       f->path, rpmemctl_sync_result_get_dirty_fallback(res));
err_free:
	rpmemctl_sync_result_delete(&res);
	rpmemctl_sync_cfg_delete(&cfg);
	return ret;
}

/* open_pool -- session with the user's credentials, pool read-write */
static int open_pool(struct pl_file *f)
{
	struct rpmemctl_session_cfg *cfg = NULL;
	const struct rpmem_target *t = &f->t;
	int ret = rpmemctl_session_cfg_new(&cfg);
	if (ret)
		return ferr(f, ret, "%s", rpmemctl_strerror(ret));
	/* our sessions log to pl_log, never to the application's log */
	(void)rpmemctl_session_cfg_set_log(cfg, pl_log, NULL, LOG_DEBUG);
	ret = rpmemctl_session_cfg_load_default(cfg, t->host, t->port);
	if (ret < 0 && ret != -ENOENT) {
		ferr(f, ret, "credentials: %s", rpmemctl_strerror(ret));
		goto err_cfg;
	}
	ret = rpmemctl_session_open_cfg(t->host, t->port, pl_cfg.transport,
					cfg, &f->sess);
	if (ret) {
		ferr(f, ret, "%s", rpmemctl_strerror(ret));
		goto err_cfg;
	}
	rpmemctl_session_cfg_delete(&cfg);
	ret = rpmemctl_pool_open_or_create(f->sess, t->region, t->pool,
					   f->size, RPMEMCTL_OPEN_RDWR |
					   RPMEMCTL_OPEN_CREATE, &f->pool,
					   NULL);
	if (ret)
		return ferr(f, ret, "%s", rpmemctl_session_errmsg(f->sess));
	/* optional: lets RDMA send from the mapping without a copy */
	(void)rpmemctl_pool_attach(f->pool, f->shadow, f->size);
	return 0;

err_cfg:
	rpmemctl_session_cfg_delete(&cfg);
	return ret;
}

/* connect_live -- open, push, mark syncing (live); f->lock held */
static int connect_live(struct pl_file *f, uint64_t *moved)
{
	pl_busy++;
	int ret = open_pool(f);
	if (!ret)
		ret = push(f, moved);
	if (!ret) {
		ret = rpmemctl_pool_set_state(f->pool, RPMEMCTL_POOL_SYNCING,
					      f->live_src);
		if (ret)
			ferr(f, ret, "%s", rpmemctl_pool_errmsg(f->pool));
	}
	pl_busy--;
	if (ret) {
		disconnect(f);
		return ret;
	}
	f->live = 1;
	f->degraded = 0;
	return 0;
}

/*
 * failed -- the replica of f failed (f->errmsg says why): fail-stop
 * aborts the process; degraded drops the connection and goes on
 */
static void failed(struct pl_file *f)
{
	if (pl_cfg.policy == PL_FAIL_STOP) {
		/* no goodbye to a target that may not answer: stop now */
		pl_msg(LOG_CRIT, "fail-stop: cannot replicate '%s' to %s: %s; "
		       "aborting", f->path, f->target, f->errmsg);
		abort();
	}
	disconnect(f);
	if (!f->degraded)
		pl_msg(LOG_WARNING, "degraded: cannot replicate '%s' to %s: "
		       "%s; continuing without the replica, which stays "
		       "syncing until it is resynced", f->path, f->target,
		       f->errmsg);
	f->degraded = 1;
	f->retry_at = rpmem_now_ns() + (uint64_t)pl_cfg.retry_s * 1000000000u;
}

/* retry -- degraded: reconnect and resync if it is time; f->lock held */
static void retry(struct pl_file *f)
{
	if (pl_cfg.retry_s < 0 || !f->shadow || rpmem_now_ns() < f->retry_at)
		return;
	uint64_t moved = 0;
	if (connect_live(f, &moved)) {
		f->retry_at = rpmem_now_ns() +
			      (uint64_t)pl_cfg.retry_s * 1000000000u;
		pl_msg(LOG_INFO, "still degraded: '%s' to %s: %s", f->path,
		       f->target, f->errmsg);
		return;
	}
	pl_msg(LOG_NOTICE, "resynced: '%s' is replicated to %s again "
	       "(%llu bytes moved)", f->path, f->target,
	       (unsigned long long)moved);
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

/* pl_file_start -- the first mapping of f in this process; f->lock held */
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
	/*
	 * our own open file description: a mapping of the application's
	 * would keep its flock (libpmemobj's pool lock) alive after it
	 * closed the file
	 */
	char self[64];
	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	int own = open(self, O_RDWR | O_CLOEXEC);
	f->shadow = own < 0 ? MAP_FAILED :
		    pl_real_mmap(NULL, f->size, PROT_READ | PROT_WRITE,
				 MAP_SHARED, own, 0);
	ret = -errno;
	if (own >= 0)
		close(own);
	if (f->shadow == MAP_FAILED) {
		f->shadow = NULL;
		ferr(f, ret, "cannot map '%s': %s", f->path, strerror(-ret));
		goto err_failed;
	}
	open_log(f, fd);
	uint64_t moved = 0;
	ret = connect_live(f, &moved);
	if (ret)
		goto err_failed;
	f->started = 1;
	stop_at_exit();
	pl_msg(LOG_INFO, "replicating '%s' to %s (%llu bytes brought up to "
	       "date)", f->path, f->target, (unsigned long long)moved);
	return 0;

err_failed:
	if (pl_cfg.policy == PL_FAIL_STOP) {
		pl_msg(LOG_CRIT, "fail-stop: cannot start replicating '%s' to "
		       "%s: %s; the mapping fails", f->path, f->target,
		       f->errmsg);
		if (f->shadow)
			pl_real_munmap(f->shadow, f->size);
		f->shadow = NULL;
		return ret;
	}
	f->started = 1;
	stop_at_exit();
	failed(f);
	return 0;
}

/* add_pending -- remember [off, off + len) for the next drain; lock held */
static void add_pending(struct pl_file *f, uint64_t off, uint64_t len)
{
	uint64_t end = off + len;
	unsigned n = atomic_load(&f->npending);
	for (unsigned i = 0; i < n; i++) {
		struct pl_range *r = &f->pending[i];
		/* overlapping or close enough: one flush covers both */
		if (off <= r->end + PL_MERGE_GAP &&
		    r->off <= end + PL_MERGE_GAP) {
			r->off = off < r->off ? off : r->off;
			r->end = end > r->end ? end : r->end;
			return;
		}
	}
	if (n == PL_PENDING_MAX) {
		/* full: the last one grows to cover the new range */
		struct pl_range *r = &f->pending[n - 1];
		r->off = off < r->off ? off : r->off;
		r->end = end > r->end ? end : r->end;
		return;
	}
	f->pending[n] = (struct pl_range){ off, end };
	atomic_store(&f->npending, n + 1);
	if (n == 0)
		atomic_fetch_add(&pl_pending_files, 1);
}

/* write_range -- send [off, off + len) of f to its target */
static void write_range(struct pl_file *f, uint64_t off, uint64_t len)
{
	pthread_mutex_lock(&f->lock);
	if (!f->live) {
		/* a resync reads the mapping as it is now: off included */
		if (f->degraded)
			retry(f);
		goto out;
	}
	pl_busy++;
	int ret = rpmemctl_pool_write(f->pool, f->shadow + off, off, len);
	pl_busy--;
	if (ret) {
		ferr(f, ret, "%s", rpmemctl_pool_errmsg(f->pool));
		failed(f);
	} else {
		add_pending(f, off, len);
	}
out:
	pthread_mutex_unlock(&f->lock);
}

/* pl_flushed -- [addr, addr + len) was flushed: write its configured parts */
void pl_flushed(const void *addr, size_t len)
{
	struct pl_hit hits[4];
	unsigned n = pl_maps_lookup(addr, len, hits, 4);
	for (unsigned i = 0; i < n; i++)
		write_range(hits[i].f, hits[i].off, hits[i].len);
}

/* flush_pending -- FLUSH every pending range of f; lock held. 0 or -errno */
static int flush_pending(struct pl_file *f)
{
	unsigned n = atomic_load(&f->npending);
	int ret = 0;
	pl_busy++;
	for (unsigned i = 0; i < n && !ret; i++) {
		struct pl_range *r = &f->pending[i];
		ret = rpmemctl_pool_flush(f->pool, r->off, r->end - r->off);
	}
	pl_busy--;
	if (ret)
		return ferr(f, ret, "%s", rpmemctl_pool_errmsg(f->pool));
	if (n) {
		atomic_store(&f->npending, 0);
		atomic_fetch_sub(&pl_pending_files, 1);
	}
	return 0;
}

/* pl_drain -- every write so far is persistent on its target */
void pl_drain(void)
{
	for (unsigned i = 0; i < pl_cfg.nfiles; i++) {
		struct pl_file *f = &pl_cfg.files[i];
		if (!atomic_load(&f->npending))
			continue;
		pthread_mutex_lock(&f->lock);
		if (f->live && flush_pending(f))
			failed(f);
		pthread_mutex_unlock(&f->lock);
	}
}

/* stop -- clean exit of one replica: push what differs, consistent, close */
static void stop(struct pl_file *f)
{
	pthread_mutex_lock(&f->lock);
	if (f->live) {
		/* a push marks it consistent (generation + 1) */
		pl_busy++;
		int ret = flush_pending(f);
		if (!ret)
			ret = push(f, NULL);
		pl_busy--;
		if (ret)
			pl_msg(LOG_WARNING, "at exit: cannot mark the replica "
			       "of '%s' on %s consistent: %s; it stays syncing",
			       f->path, f->target, f->errmsg);
		disconnect(f);
	} else if (f->degraded) {
		pl_msg(LOG_WARNING, "at exit: the replica of '%s' on %s is "
		       "behind (degraded); it stays syncing until the next "
		       "start resyncs it", f->path, f->target);
	}
	if (f->started)
		stamp(f);
	f->started = 0;
	f->degraded = 0;
	pthread_mutex_unlock(&f->lock);
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
	atomic_store(&pl_pending_files, 0);
}
