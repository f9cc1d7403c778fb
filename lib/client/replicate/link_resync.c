/* SPDX-License-Identifier: BSD-3-Clause */
/* link_resync.c -- a returning target resynced by a thread of its own */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "client_replicate.h"
#include "util.h"

/*
 * A link under the kick-out whose target answered its probe is not
 * pushed by the application's call (docs/ARCHITECTURE.md "The resync
 * runs beside the application"): the call starts this thread, which
 * opens a session of its own and sends, in passes, what the target
 * misses while the application goes on writing:
 *
 *   pass 1   every extent the dirty log marks (or, where the log cannot
 *            stand in, a compare of the whole data); the log's in-memory
 *            sets are taken and cleared (client_dirtylog_take), so that
 *            from then on it records apart what is marked meanwhile, and
 *            the link notes the ranges the set writes meanwhile
 *            (client_resync_note, under the set's lock)
 *   pass n   the ranges written during pass n - 1 (the extents marked
 *            meanwhile, if more than CLIENT_RESYNC_RANGES ranges were)
 *
 * until what was written during the last pass is at most
 * RESYNC_JOIN_BYTES in ranges (or RESYNC_PASSES passes ran). Each pass
 * is a push that leaves the pool `syncing` under the plain source (an
 * image partly old, partly new: Inconsistent), records no history and
 * keeps every persistent mark of the log. The thread then ends READY;
 * the link's next call, under the set's lock, takes the session over and
 * pushes the ranges written since the last pass (the catch-up), which
 * marks the pool consistent, records the history and resets the log, as
 * any push: only then does the link hold again.
 */
#define RESYNC_JOIN_BYTES (256u << 10) /* written during a pass: catch up */
#define RESYNC_PASSES 8 /* passes at most before the catch-up */
#define RESYNC_POLL_MS 10 /* a waiter's look at the thread, at a time */

struct client_resync {
	struct client_resync_cfg cfg;
	struct rpmem_target t; /* the link's, copied */
	pthread_t th;
	_Atomic int state;	   /* enum client_resync_state */
	_Atomic uint64_t left;	   /* bytes the current pass still sends */
	_Atomic uint64_t moved;	   /* bytes sent, every pass */
	_Atomic uint64_t progress; /* bumped as data goes (not: frozen) */
	_Atomic int fd;		   /* the session's socket, -1 before */
	uint64_t pass_total;	   /* bytes the current pass sends */
	unsigned passes;
	int err;
	char errmsg[CLIENT_ERRMSG_MAX];
	struct rpmemctl_session *sess;
	struct rpmemctl_pool *pool;
	uint8_t *ext;	    /* the extents of the current pass */
	pthread_mutex_t mu; /* noted, between the link and the thread */
	struct client_resync_ranges noted;  /* written since the last take */
	struct client_resync_ranges pass_r; /* the current pass's */
};

/* ranges_bytes -- the bytes of a list of noted ranges */
static uint64_t ranges_bytes(const struct client_resync_ranges *l)
{
	uint64_t n = 0;
	for (unsigned i = 0; i < l->n; i++)
		n += l->v[i].len;
	return n;
}

/*
 * client_resync_note -- the set wrote [off, off + len) while the link is
 * RESYNCING: into the sorted list, merged with the ranges it overlaps or
 * touches (no byte more is sent than was written); a list that overflows
 * says so (the extents stand in)
 */
void client_resync_note(struct client_resync *r, uint64_t off, uint64_t len)
{
	struct client_resync_ranges *l = &r->noted;
	uint64_t end = off + len;
	unsigned i = 0, j;
	pthread_mutex_lock(&r->mu);
	while (i < l->n && l->v[i].off + l->v[i].len < off)
		i++;
	for (j = i; j < l->n && l->v[j].off <= end; j++) {
		uint64_t e = l->v[j].off + l->v[j].len;
		off = l->v[j].off < off ? l->v[j].off : off;
		end = e > end ? e : end;
	}
	if (j == i && l->n == CLIENT_RESYNC_RANGES) {
		l->over = 1;
	} else if (!l->over) {
		/* v[i, j) merge into one at i */
		memmove(&l->v[i + 1], &l->v[j], (l->n - j) * sizeof(l->v[0]));
		l->n = l->n - (j - i) + 1;
		l->v[i] = (struct client_range){off, end - off};
	}
	pthread_mutex_unlock(&r->mu);
}

/* take -- the ranges noted since the last take, into out; none noted */
static void take(struct client_resync *r, struct client_resync_ranges *out)
{
	pthread_mutex_lock(&r->mu);
	*out = r->noted;
	r->noted.n = 0;
	r->noted.over = 0;
	pthread_mutex_unlock(&r->mu);
}

/* fail -- the thread's error, with its message; returns err */
static int fail(struct client_resync *r, int err, const char *what,
		const char *why)
{
	r->err = err;
	snprintf(r->errmsg, sizeof(r->errmsg), "resync: %s%s", what,
		 why && why[0] ? why : rpmemctl_strerror(err));
	return err;
}

/* open_own -- a session of the thread's own and the pool, read-write */
static int open_own(struct client_resync *r)
{
	struct rpmemctl_session_cfg *scfg = NULL;
	int ret = rpmemctl_session_cfg_new(&scfg);
	if (!ret && r->cfg.log_fn)
		ret = rpmemctl_session_cfg_set_log(
			scfg, r->cfg.log_fn, r->cfg.log_arg, r->cfg.log_prio);
	if (!ret) {
		ret = rpmemctl_session_cfg_load_default(scfg, r->t.host, r->t.port);
		ret = ret == -ENOENT || ret > 0 ? 0 : ret;
	}
	if (!ret)
		ret = rpmemctl_session_open_cfg(
			r->t.host, r->t.port, r->cfg.transport, scfg, &r->sess);
	rpmemctl_session_cfg_delete(&scfg);
	if (ret)
		return fail(r, ret, "", NULL);
	atomic_store(&r->fd, r->sess->conn.fd);
	ret = rpmemctl_pool_open_or_create(
		r->sess, r->t.region, r->t.pool, r->cfg.len,
		RPMEMCTL_OPEN_RDWR | RPMEMCTL_OPEN_CREATE, &r->pool, NULL);
	if (ret)
		return fail(r, ret, "", rpmemctl_session_errmsg(r->sess));
	(void)rpmemctl_pool_attach(r->pool, r->cfg.addr, r->cfg.len);
	return 0;
}

/* on_progress -- a pass's bytes done of its total */
static void on_progress(uint64_t done, uint64_t total, void *arg)
{
	struct client_resync *r = arg;
	atomic_store(&r->left, total > done ? total - done : 0);
	atomic_fetch_add(&r->progress, 1);
}

/*
 * pass -- one push of the extents taken (first: the log's own choice),
 * the pool left syncing
 */
static int pass(struct client_resync *r, int first)
{
	struct rpmemctl_sync_cfg *cfg = NULL;
	struct rpmemctl_sync_result res;
	int ret = rpmemctl_sync_cfg_new(&cfg);
	if (!ret && r->cfg.source[0])
		ret = rpmemctl_sync_cfg_set_source(cfg, r->cfg.source);
	if (!ret)
		ret = rpmemctl_sync_cfg_set_dirty_log(cfg, r->cfg.log);
	if (!ret && r->cfg.history)
		ret = rpmemctl_sync_cfg_set_history(cfg, r->cfg.history);
	if (!ret)
		ret = rpmemctl_sync_cfg_set_progress(cfg, on_progress, r);
	if (ret) {
		rpmemctl_sync_cfg_delete(&cfg);
		return fail(r, ret, "", NULL);
	}
	if (!first && r->pass_r.over) {
		cfg->extents = r->ext;
	} else if (!first) {
		cfg->ranges = r->pass_r.v;
		cfg->nranges = r->pass_r.n;
	}
	cfg->resync_pass = 1;
	memset(&res, 0, sizeof(res));
	ret = rpmemctl_pool_sync2(r->pool, r->cfg.addr, r->cfg.len, cfg, &res);
	rpmemctl_sync_cfg_delete(&cfg);
	atomic_fetch_add(&r->moved, res.data_bytes);
	atomic_fetch_add(&r->progress, 1);
	atomic_store(&r->left, 0);
	if (ret)
		return fail(r, ret, "", rpmemctl_pool_errmsg(r->pool));
	return 0;
}

/* resync_main -- the thread: passes until little was written meanwhile */
static void *resync_main(void *arg)
{
	struct client_resync *r = arg;
	uint64_t ext = client_dirtylog_extent(r->cfg.log);
	int ret = open_own(r);
	for (r->passes = 0; !ret; r->passes++) {
		take(r, &r->pass_r);
		int64_t n = client_dirtylog_take(r->cfg.log, r->ext,
						 r->passes == 0);
		if (n < 0) {
			ret = fail(r, (int)n, "", NULL);
			break;
		}
		r->pass_total = r->passes && !r->pass_r.over
					? ranges_bytes(&r->pass_r)
					: (uint64_t)n * ext;
		atomic_store(&r->left, r->pass_total);
		if ((ret = pass(r, r->passes == 0)))
			break;
		/* little written meanwhile: the catch-up sends it */
		pthread_mutex_lock(&r->mu);
		int small = !r->noted.over &&
			    ranges_bytes(&r->noted) <= RESYNC_JOIN_BYTES;
		pthread_mutex_unlock(&r->mu);
		if (small || r->passes + 1 >= RESYNC_PASSES)
			break;
	}
	atomic_store(&r->state, ret ? RESYNC_FAILED : RESYNC_READY);
	return NULL;
}

/* client_resync_start -- the thread started on cfg (copied) */
int client_resync_start(const struct client_resync_cfg *cfg,
			struct client_resync **out)
{
	struct client_resync *r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->cfg = *cfg;
	r->t = *cfg->t;
	r->cfg.t = &r->t;
	pthread_mutex_init(&r->mu, NULL);
	atomic_store(&r->fd, -1);
	atomic_store(&r->state, RESYNC_RUNNING);
	r->ext = calloc(1, client_dirtylog_bitmap_len(cfg->log));
	int ret =
		r->ext ? pthread_create(&r->th, NULL, resync_main, r) : ENOMEM;
	if (ret) {
		pthread_mutex_destroy(&r->mu);
		free(r->ext);
		free(r);
		return -ret;
	}
	*out = r;
	return 0;
}

/* client_resync_state -- RUNNING, READY or FAILED */
enum client_resync_state client_resync_state(const struct client_resync *r)
{
	return (enum client_resync_state)atomic_load(&r->state);
}

/* client_resync_left -- bytes the running pass still sends, and since */
uint64_t client_resync_left(struct client_resync *r)
{
	pthread_mutex_lock(&r->mu);
	uint64_t n = ranges_bytes(&r->noted);
	pthread_mutex_unlock(&r->mu);
	return atomic_load(&r->left) + n;
}

/*
 * client_resync_wait -- wait while the thread runs and makes progress:
 * at most stall_ns without data going (a target that froze again)
 */
void client_resync_wait(struct client_resync *r, uint64_t stall_ns)
{
	uint64_t seen = atomic_load(&r->progress), since = rpmem_now_ns();
	while (client_resync_state(r) == RESYNC_RUNNING) {
		uint64_t p = atomic_load(&r->progress), now = rpmem_now_ns();
		if (p != seen) {
			seen = p;
			since = now;
		} else if (now - since >= stall_ns) {
			return;
		}
		poll(NULL, 0, RESYNC_POLL_MS);
	}
}

/*
 * client_resync_end -- the thread joined (a running one cut short: its
 * session shut down); READY: its session and pool handed to the caller
 * with the ranges noted since its last pass (0), else the thread's error
 * with its message in msg
 */
int client_resync_end(struct client_resync **rp, struct rpmemctl_session **sess,
		      struct rpmemctl_pool **pool,
		      struct client_resync_ranges *left, char *msg, size_t len)
{
	struct client_resync *r = *rp;
	*rp = NULL;
	int fd = atomic_load(&r->fd);
	if (client_resync_state(r) == RESYNC_RUNNING && fd >= 0)
		shutdown(fd, SHUT_RDWR);
	pthread_join(r->th, NULL);
	int ret = client_resync_state(r) == RESYNC_READY ? 0 : r->err;
	if (!ret && client_resync_state(r) != RESYNC_READY)
		ret = -ECANCELED;
	if (ret && msg)
		snprintf(msg, len, "%s",
			 r->errmsg[0] ? r->errmsg : "resync: cut short");
	if (!ret && left)
		take(r, left);
	if (!ret && sess && pool) {
		*sess = r->sess;
		*pool = r->pool;
		r->sess = NULL;
		r->pool = NULL;
	}
	rpmemctl_pool_close(&r->pool);
	rpmemctl_session_close(&r->sess);
	pthread_mutex_destroy(&r->mu);
	free(r->ext);
	free(r);
	return ret;
}

/* client_resync_moved -- bytes its passes sent */
uint64_t client_resync_moved(const struct client_resync *r)
{
	return atomic_load(&r->moved);
}
