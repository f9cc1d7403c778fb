/* SPDX-License-Identifier: BSD-3-Clause */
/* link.c -- the replication lifecycle: one remote pool kept up to date */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "link_int.h"
#include "util.h"

/*
 * A link owns a session and one pool opened read-write on it, and knows
 * where the local copy of the data is. Its states (librpmemctl.h, and
 * docs/ARCHITECTURE.md "Replication links"):
 *
 *	DOWN	  no connection
 *	OPEN	  pool open; its contents not known to match the data
 *	SYNCED	  a push left the pool consistent and equal to the data
 *	LIVE	  writes go to the pool as they are made: it is marked
 *		  syncing (the live source), and holds every range whose
 *		  drain returned
 *	DEGRADED  a failure under the degrade policy: disconnected; the
 *		  data goes on alone (the dirty log still marks it) until a
 *		  reconnect and push bring the pool up to date again
 *	FAILED	  a failure under the fail-stop policy: every call fails
 *
 * The pool's own state follows from these: a push marks it syncing
 * while it runs and consistent (generation + 1) when it completes; the
 * first write after a push marks it syncing with the live source; only
 * a push or the clean stop marks it consistent again. A crash at any
 * point leaves it syncing, or consistent with the data it says.
 */

/* link_err -- keep the reason of a failure in the link; returns err */
__attribute__((format(printf, 3, 4))) int
link_err(struct rpmemctl_link *l, int err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	client_vmsg(l->errmsg, sizeof(l->errmsg), fmt, ap);
	va_end(ap);
	return err;
}

/* set_state -- move to `to`, telling the notify hook */
static void set_state(struct rpmemctl_link *l, enum rpmemctl_link_state to)
{
	enum rpmemctl_link_state from = l->state;
	if (from == to)
		return;
	l->state = to;
	if (l->notify_fn)
		l->notify_fn(l->notify_arg, l, from, to);
}

/*
 * link_lock -- a call that may use the session begins: a shared link takes
 * its entry's lock (found at its first such call)
 */
void link_lock(struct rpmemctl_link *l)
{
	if (l->shared && !l->share && l->t.host[0] && !l->open_fn)
		l->share = client_share_get(l->t.host, l->t.port, l->transport,
					    l->log_fn, l->log_arg, l->log_prio);
	client_share_lock(l->share);
}

/*
 * disconnect -- close the pool (the flushes it owes given up) and the
 * session; pending ranges dropped
 */
static void disconnect(struct rpmemctl_link *l)
{
	rpmemctl_pool_close(&l->pool);
	l->nread = l->nsent; /* dropped: the link no longer holds */
	l->cut = 0;	     /* what it acknowledged is unknown */
	l->abytes = l->wbytes;
	if (l->share)
		client_share_leave(l->share, &l->sess);
	else
		rpmemctl_session_close(&l->sess);
	l->npending = 0;
	l->unacked = 0;
	l->nowed = 0;
}

/*
 * hist_live -- the local history lists the pool as live (on) or not: a
 * crash then leaves writes the pool holds, not new ones; dropped before
 * any write the pool misses is acknowledged (docs/ARCHITECTURE.md, "A
 * crash is not a split brain")
 */
static void hist_live(struct rpmemctl_link *l, int on)
{
	/*
	 * a link that never reached its pool cannot name it: it drops
	 * every pool a crashed writer listed (the data may now be written
	 * without them)
	 */
	int all = !on && !l->pool && !l->hist_seen;
	if (!l->history || (!l->pool && !all) ||
	    (!on && !l->hist_live && !all))
		return;
	l->hist_seen = 1;
	client_history_lock();
	unsigned epoch = client_history_epoch();
	int ret = client_history_live(l->history, all ? NULL : l->pool->uuid,
				      on);
	client_history_unlock();
	if (ret && !on)
		client_log(l->pool ? l->pool->sess : NULL, LOG_ERR,
			   "cannot drop %s from the live pools of '%s.rpmemgen': %s; after a crash its history may take this pool's missed writes for its own",
			   l->name, l->history, strerror(-ret));
	l->hist_live = on && !ret;
	l->hist_epoch = epoch;
}

/*
 * link_failed -- a call failed (l->errmsg says why) with err: the policy
 * decides between DEGRADED (retry later) and FAILED; returns err
 */
int link_failed(struct rpmemctl_link *l, int err)
{
	hist_live(l, 0);
	disconnect(l);
	if (l->policy == RPMEMCTL_LINK_FAIL_STOP) {
		l->fail_err = err;
		set_state(l, RPMEMCTL_LINK_FAILED);
		return err;
	}
	l->retry_at = l->retry_ms < 0 ? UINT64_MAX :
		      rpmem_now_ns() + (uint64_t)l->retry_ms * 1000000u;
	set_state(l, RPMEMCTL_LINK_DEGRADED);
	return err;
}

/* link_pool_failed -- failed() with the pool's message */
int link_pool_failed(struct rpmemctl_link *l, int err, const char *what)
{
	link_err(l, err, "%s%s", what, rpmemctl_pool_errmsg(l->pool));
	return link_failed(l, err);
}

/* open_pool -- the link's pool, read-write, on its session */
static int open_pool(struct rpmemctl_link *l)
{
	int ret = rpmemctl_pool_open_or_create(l->sess, l->t.region,
					       l->t.pool, l->len,
					       RPMEMCTL_OPEN_RDWR |
					       RPMEMCTL_OPEN_CREATE, &l->pool,
					       NULL);
	if (ret)
		return link_err(l, ret, "%s", rpmemctl_session_errmsg(l->sess));
	return 0;
}

/*
 * open_default -- the credentials rpmemctl would use, pool read-write;
 * a shared link joins its entry's session, or opens the one others join
 */
static int open_default(struct rpmemctl_link *l)
{
	struct rpmemctl_session_cfg *cfg = NULL;
	const struct rpmem_target *t = &l->t;
	if (l->share && (l->sess = client_share_join(l->share)))
		return open_pool(l);
	int ret = rpmemctl_session_cfg_new(&cfg);
	if (!ret && l->log_fn)
		ret = rpmemctl_session_cfg_set_log(cfg, l->log_fn, l->log_arg,
						   l->log_prio);
	if (!ret) {
		/* 1: an entry applied, 0: none; only < 0 is an error */
		ret = rpmemctl_session_cfg_load_default(cfg, t->host, t->port);
		ret = ret == -ENOENT || ret > 0 ? 0 : ret;
	}
	if (!ret)
		ret = rpmemctl_session_open_cfg(t->host, t->port, l->transport,
						cfg, &l->sess);
	rpmemctl_session_cfg_delete(&cfg);
	if (ret)
		return link_err(l, ret, "%s", rpmemctl_strerror(ret));
	if (l->share)
		client_share_adopt(l->share, l->sess);
	return open_pool(l);
}

/* do_connect -- open through the hook, attach the data: OPEN */
static int do_connect(struct rpmemctl_link *l)
{
	int ret;
	disconnect(l);
	if (l->open_fn) {
		ret = l->open_fn(l->open_arg, &l->sess, &l->pool);
		if (ret)
			link_err(l, ret, "%s", l->sess ?
				 rpmemctl_session_errmsg(l->sess) :
				 rpmemctl_strerror(ret));
	} else if (l->t.host[0]) {
		ret = open_default(l);
	} else {
		ret = link_err(l, -EINVAL, "a link without a target needs an "
			       "open hook");
	}
	if (!ret && !l->pool)
		ret = link_err(l, -EINVAL,
			       "the link's open hook opened no pool");
	if (ret)
		return link_failed(l, ret);
	/* optional: lets RDMA send from the data without a copy */
	(void)rpmemctl_pool_attach(l->pool, l->addr, l->len);
	l->hist_seen = 1;
	set_state(l, RPMEMCTL_LINK_OPEN);
	return 0;
}

/* link_usable -- 0, or the error of a call on a FAILED or misconfigured link */
int link_usable(struct rpmemctl_link *l)
{
	l->errmsg[0] = '\0';
	if (l->state == RPMEMCTL_LINK_FAILED)
		return link_err(l, l->fail_err, "the link failed before "
				"(fail-stop): no call is possible but delete");
	if (!l->addr)
		return link_err(l, -EINVAL,
				"the link has no data to replicate");
	return 0;
}

/*
 * do_push -- a sync of the data into the pool; connected first if need
 * be; all: compare every block even where the dirty log could stand in
 */
static int do_push(struct rpmemctl_link *l, const struct rpmemctl_sync_cfg *ucfg,
		   int all)
{
	struct rpmemctl_sync_cfg *cfg = NULL;
	int ret = 0;
	if (!l->pool && (ret = do_connect(l)))
		return ret;
	if ((ret = link_settle(l)))
		return ret;
	if (!ucfg) {
		ret = rpmemctl_sync_cfg_new(&cfg);
		if (!ret && l->source[0])
			ret = rpmemctl_sync_cfg_set_source(cfg, l->source);
		if (!ret && l->log)
			ret = rpmemctl_sync_cfg_set_dirty_log(cfg, l->log);
		if (!ret && l->history)
			ret = rpmemctl_sync_cfg_set_history(cfg, l->history);
		if (ret) {
			rpmemctl_sync_cfg_delete(&cfg);
			return link_err(l, ret, "%s", rpmemctl_strerror(ret));
		}
		/* live on this session since the last push: ours alone */
		cfg->syncing_ours = l->state == RPMEMCTL_LINK_LIVE ||
				    l->catchup;
		cfg->compare_all = all;
		if (l->catchup && !all && l->catchup->over) {
			cfg->extents = l->catchup_ext;
		} else if (l->catchup && !all) {
			cfg->ranges = l->catchup->v;
			cfg->nranges = l->catchup->n;
		}
		ucfg = cfg;
	}
	/* a push's sends wait as long as its replies (go_live bounds them) */
	if ((l->ko_ms || l->probe_ms) && l->pool->sess && !l->catchup)
		(void)rpmem_conn_set_sndtimeo(&l->pool->sess->conn,
					      CLIENT_IO_TIMEOUT_S * 1000);
	memset(&l->res, 0, sizeof(l->res));
	ret = rpmemctl_pool_sync2(l->pool, l->addr, l->len, ucfg, &l->res);
	rpmemctl_sync_cfg_delete(&cfg);
	l->pushed = 1;
	l->npending = 0; /* a push covers every write before it */
	if (ret == -ESTALE && l->pool->sess && !l->sess->lost) {
		/* the data changed while read: the pool stays syncing */
		link_err(l, ret, "%s", rpmemctl_pool_errmsg(l->pool));
		set_state(l, RPMEMCTL_LINK_OPEN);
		return ret;
	}
	if (ret)
		return link_pool_failed(l, ret, "sync: ");
	set_state(l, RPMEMCTL_LINK_SYNCED);
	return 0;
}

/*
 * link_retry_due -- DEGRADED and time to reconnect: reconnect and push
 * (where the kick-out is on, once a probe answered: with a dirty log, a
 * resync in a thread of its own instead)
 */
static int resync_start(struct rpmemctl_link *l);

int link_retry_due(struct rpmemctl_link *l)
{
	if (l->retry_ms < 0 || rpmem_now_ns() < l->retry_at)
		return 0;
	if (link_probed(l) && !link_probe_poll(l))
		return 0;
	/* off the application's calls where it can be (link_resync.c) */
	if (link_probed(l) && l->log && l->policy == RPMEMCTL_LINK_DEGRADE &&
	    !resync_start(l))
		return 0;
	return do_push(l, NULL, 0);
}

/*
 * resync_start -- the resync of a DEGRADED link whose target answered
 * its probe, in a thread of its own (link_resync.c): RESYNCING; 0, or
 * -errno where it cannot start (the call pushes as before)
 */
static int resync_start(struct rpmemctl_link *l)
{
	struct client_resync_cfg c = {
		.t = &l->t,
		.transport = l->transport,
		.log_fn = l->log_fn,
		.log_arg = l->log_arg,
		.log_prio = l->log_prio,
		.addr = l->addr,
		.len = l->len,
		.log = l->log,
		.source = l->source,
		.history = l->history,
	};
	int ret = client_resync_start(&c, &l->resync);
	if (ret)
		return ret;
	l->errmsg[0] = '\0';
	set_state(l, RPMEMCTL_LINK_RESYNCING);
	return 0;
}

/*
 * resync_join -- the resync's thread is done (or cut short): under the
 * caller's lock (a set's: no write to the data is sent meanwhile), its
 * session taken over and the catch-up pushed: the extents written since
 * its last pass (all: every block compared, a clean stop's), within the
 * kick-out's timeout, the pool consistent and the history recorded:
 * SYNCED. A thread that failed leaves the link DEGRADED, retried later.
 */
static int resync_join(struct rpmemctl_link *l, int all)
{
	struct rpmemctl_session *sess = NULL;
	struct rpmemctl_pool *pool = NULL;
	struct client_resync_ranges *left = malloc(sizeof(*left));
	uint64_t moved = client_resync_moved(l->resync);
	int ret = client_resync_end(&l->resync, &sess, &pool, left, l->errmsg,
				    sizeof(l->errmsg));
	uint8_t *ext = NULL;
	if (!ret && (!left ||
		     !(ext = malloc(client_dirtylog_bitmap_len(l->log)))))
		ret = link_err(l, -ENOMEM, "resync: out of memory");
	if (ret) {
		free(left);
		free(ext);
		rpmemctl_pool_close(&pool);
		rpmemctl_session_close(&sess);
		client_dirtylog_untrack(l->log);
		return link_failed(l, ret);
	}
	l->sess = sess;
	l->pool = pool;
	if (l->share)
		client_share_adopt(l->share, sess);
	/*
	 * a target that stops answering now holds the call this long (a
	 * stop's compare of every block keeps the push's timeouts: the
	 * target may hash the pool for longer)
	 */
	if (!all) {
		(void)rpmem_conn_set_rcvtimeo(&sess->conn, (int)l->probe_ms);
		(void)rpmem_conn_set_sndtimeo(&sess->conn, (int)l->probe_ms);
	}
	(void)client_dirtylog_take(l->log, ext, 0);
	l->catchup = left;
	l->catchup_ext = ext;
	ret = do_push(l, NULL, all);
	l->catchup = NULL;
	l->catchup_ext = NULL;
	free(left);
	free(ext);
	client_dirtylog_untrack(l->log);
	if (ret)
		return ret;
	/* the kick-out's send bound, if any, comes back with go_live */
	(void)rpmem_conn_set_rcvtimeo(&sess->conn, CLIENT_IO_TIMEOUT_S * 1000);
	(void)rpmem_conn_set_sndtimeo(&sess->conn, CLIENT_IO_TIMEOUT_S * 1000);
	l->res.data_bytes += moved;
	return 0;
}

/*
 * resync_poll -- a RESYNCING link's call: nothing while its thread runs,
 * the catch-up once it is done
 */
static int resync_poll(struct rpmemctl_link *l)
{
	if (client_resync_state(l->resync) == RESYNC_RUNNING)
		return 0;
	return resync_join(l, 0);
}

/*
 * resync_cancel -- a RESYNCING link's thread cut short (its session shut
 * down): DEGRADED again, the pool left syncing, behind
 */
static void resync_cancel(struct rpmemctl_link *l)
{
	if (!l->resync)
		return;
	(void)client_resync_end(&l->resync, NULL, NULL, NULL, NULL, 0);
	client_dirtylog_untrack(l->log);
	link_err(l, -ETIMEDOUT, "resync cut short: its target sent nothing for "
	     "%u ms, or a push or the end came first; the copy stays behind",
	     l->probe_ms);
	(void)link_failed(l, -ETIMEDOUT);
}

/* link_behind_due -- a DEGRADED link's retry, a RESYNCING one's poll */
int link_behind_due(struct rpmemctl_link *l)
{
	return l->state == RPMEMCTL_LINK_RESYNCING ? resync_poll(l) :
						      link_retry_due(l);
}

/* link_behind -- DEGRADED, or RESYNCING: the link does not hold */
int link_behind(const struct rpmemctl_link *l)
{
	return l->state == RPMEMCTL_LINK_DEGRADED ||
	       l->state == RPMEMCTL_LINK_RESYNCING;
}

/*
 * link_live_failed -- a LIVE link's send failed: under the kick-out a send
 * that timed out blocked for ko_ms (the target reads nothing) and is
 * said so; else pool_failed
 */
int link_live_failed(struct rpmemctl_link *l, int err)
{
	if (err != -ETIMEDOUT || !l->ko_ms)
		return link_pool_failed(l, err, "");
	link_err(l, err, "kicked out: a send blocked for %u ms (the kick-out "
		 "timeout), %llu bytes written and not acknowledged", l->ko_ms,
		 (unsigned long long)(l->wbytes - l->abytes));
	return link_failed(l, err);
}

/* go_live -- the first write after a push marks the pool syncing (live) */
static int go_live(struct rpmemctl_link *l)
{
	int ret = link_settle(l);
	if (ret)
		return ret;
	ret = rpmemctl_pool_set_state(l->pool, RPMEMCTL_POOL_SYNCING,
					  l->live[0] ? l->live : l->source);
	if (ret)
		return link_pool_failed(l, ret, "");
	hist_live(l, 1);
	/* a send blocked this long: the target reads nothing (kick-out) */
	if (l->ko_ms)
		(void)rpmem_conn_set_sndtimeo(&l->pool->sess->conn,
					      (int)l->ko_ms);
	set_state(l, RPMEMCTL_LINK_LIVE);
	return 0;
}

/* add_pending -- remember [off, off + len) for the next drain */
static void add_pending(struct rpmemctl_link *l, uint64_t off, uint64_t len)
{
	uint64_t end = off + len;
	struct link_range *r;
	for (unsigned i = 0; i < l->npending; i++) {
		r = &l->pending[i];
		/* overlapping or close enough: one flush covers both */
		if (off <= r->end + LINK_MERGE_GAP &&
		    r->off <= end + LINK_MERGE_GAP)
			goto grow;
	}
	if (l->npending < LINK_PENDING_MAX) {
		l->pending[l->npending++] = (struct link_range){ off, end };
		return;
	}
	/* full: the last one grows to cover the new range */
	r = &l->pending[LINK_PENDING_MAX - 1];
grow:
	r->off = off < r->off ? off : r->off;
	r->end = end > r->end ? end : r->end;
}

/* rpmemctl_link_new -- a DOWN link to target with the default policy */
RPMEM_EXPORT int rpmemctl_link_new(const char *target,
				   enum rpmemctl_transport transport,
				   struct rpmemctl_link **out)
{
	client_api_begin();
	char err[RPMEM_MSG_MAX];
	if (!out) {
		client_set_last(-EINVAL, "link: invalid argument");
		return -EINVAL;
	}
	struct rpmemctl_link *l = calloc(1, sizeof(*l));
	if (!l) {
		client_set_last(-ENOMEM, "out of memory");
		return -ENOMEM;
	}
	if (target && rpmem_parse_target(target, RPMEM_TARGET_NEED_POOL, &l->t, err,
			       sizeof(err))) {
		free(l);
		client_set_last(-EINVAL, "%s", err);
		return -EINVAL;
	}
	l->transport = transport;
	l->retry_ms = -1;
	/* as a target is written: an IPv6 host in brackets */
	if (target)
		snprintf(l->name, sizeof(l->name), "%s%s%s%s%s/%s/%s",
			 strchr(l->t.host, ':') ? "[" : "", l->t.host,
			 strchr(l->t.host, ':') ? "]" : "",
			 l->t.port[0] ? ":" : "", l->t.port, l->t.region,
			 l->t.pool);
	*out = l;
	return 0;
}

/* rpmemctl_link_delete -- disconnect without a word and free */
RPMEM_EXPORT void rpmemctl_link_delete(struct rpmemctl_link **lp)
{
	if (!lp || !*lp)
		return;
	link_lock(*lp);
	resync_cancel(*lp);
	hist_live(*lp, 0); /* the data may be written on without it */
	disconnect(*lp);
	client_share_unlock((*lp)->share);
	client_share_put(&(*lp)->share);
	link_probe_put((*lp)->probe); /* a running probe frees it at its end */
	free((*lp)->history);
	free(*lp);
	*lp = NULL;
}

/* link_api_last -- the thread's message is the link's */
static int link_api_last(struct rpmemctl_link *l, int ret)
{
	if (ret)
		client_set_last(ret, "%s", l->errmsg);
	return ret;
}

/* link_api_end -- the call that lock began ends; its message is the link's */
static int link_api_end(struct rpmemctl_link *l, int ret)
{
	client_share_unlock(l->share);
	return link_api_last(l, ret);
}

/* rpmemctl_link_connect -- DOWN or DEGRADED to OPEN */
RPMEM_EXPORT int rpmemctl_link_connect(struct rpmemctl_link *l)
{
	if (link_check(l, 1))
		return -EINVAL;
	link_lock(l);
	int ret = link_usable(l);
	resync_cancel(l);
	if (!ret)
		ret = do_connect(l);
	return link_api_end(l, ret);
}

/* rpmemctl_link_push -- a sync; the pool consistent and SYNCED */
RPMEM_EXPORT int rpmemctl_link_push(struct rpmemctl_link *l,
				    const struct rpmemctl_sync_cfg *cfg,
				    struct rpmemctl_sync_result *res)
{
	if (link_check(l, 1))
		return -EINVAL;
	link_lock(l);
	int ret = link_usable(l);
	/* a push now: the resync's thread is cut short, this one does it */
	resync_cancel(l);
	if (!ret)
		ret = do_push(l, cfg, 0);
	if (res && l->pushed)
		*res = l->res;
	return link_api_end(l, ret);
}

/* rpmemctl_link_mark -- mark the dirty log; a failed mark drops it */
RPMEM_EXPORT int rpmemctl_link_mark(struct rpmemctl_link *l, uint64_t off,
				    uint64_t len)
{
	if (link_check(l, 1))
		return -EINVAL;
	l->errmsg[0] = '\0';
	if (!l->log)
		return 0;
	int ret = rpmemctl_dirtylog_mark(l->log, off, len);
	if (ret) {
		/* it no longer covers every write: no push may trust it */
		l->log = NULL;
		link_err(l, ret, "cannot mark the dirty log: %s",
			 strerror(-ret));
	}
	return link_api_last(l, ret);
}

/* write_live -- SYNCED or LIVE: go live if need be, write, remember */
static int write_live(struct rpmemctl_link *l, uint64_t off, uint64_t len)
{
	int ret = 0;
	if (l->state == RPMEMCTL_LINK_SYNCED && (ret = go_live(l)))
		return ret;
	/* another push recorded the history: list the pool again */
	if (l->history && l->hist_epoch != client_history_epoch())
		hist_live(l, 1);
	ret = rpmemctl_pool_write(l->pool, l->addr + off, off, len);
	if (ret)
		return link_live_failed(l, ret);
	l->wbytes += len;
	add_pending(l, off, len);
	return 0;
}

/* rpmemctl_link_write -- send a range of the data (LIVE from SYNCED) */
RPMEM_EXPORT int rpmemctl_link_write(struct rpmemctl_link *l, uint64_t off,
				     uint64_t len)
{
	if (link_check(l, 1))
		return -EINVAL;
	link_lock(l);
	int ret = link_usable(l);
	if (!ret && (off > l->len || len > l->len - off))
		ret = link_err(l, -EINVAL, "write %llu+%llu is outside the "
			       "%llu bytes of the data",
			       (unsigned long long)off, (unsigned long long)len,
			       (unsigned long long)l->len);
	if (ret || len == 0)
		return link_api_end(l, ret);
	switch (l->state) {
	case RPMEMCTL_LINK_RESYNCING:
		/* its next pass or its catch-up sends this range */
		client_resync_note(l->resync, off, len);
		ret = link_behind_due(l);
		break;
	case RPMEMCTL_LINK_DEGRADED:
		/* a resync reads the data as it is now: this range too */
		ret = link_behind_due(l);
		break;
	case RPMEMCTL_LINK_DOWN:
	case RPMEMCTL_LINK_OPEN:
		/* not known equal: bring it up to date, which covers it */
		ret = do_push(l, NULL, 0);
		break;
	default:
		ret = write_live(l, off, len);
	}
	return link_api_end(l, ret);
}

/*
 * barrier_pending -- a BARRIER for every pending range: persisted on the
 * target before any later write, acknowledged by the next drain
 */
static int barrier_pending(struct rpmemctl_link *l)
{
	for (unsigned i = 0; i < l->npending; i++) {
		struct link_range *r = &l->pending[i];
		int ret = rpmemctl_pool_barrier(l->pool, r->off,
						r->end - r->off);
		if (ret)
			return link_live_failed(l, ret);
	}
	l->unacked |= l->npending != 0;
	l->npending = 0;
	return 0;
}

/* rpmemctl_link_barrier -- order the writes so far, without waiting */
RPMEM_EXPORT int rpmemctl_link_barrier(struct rpmemctl_link *l)
{
	if (link_check(l, 1))
		return -EINVAL;
	link_lock(l);
	int ret = link_usable(l);
	if (!ret && link_behind(l))
		ret = link_behind_due(l);
	else if (!ret && l->state == RPMEMCTL_LINK_LIVE)
		ret = barrier_pending(l);
	return link_api_end(l, ret);
}

/* rpmemctl_link_drain -- every write so far is persistent on the target */
RPMEM_EXPORT int rpmemctl_link_drain(struct rpmemctl_link *l)
{
	if (link_check(l, 1))
		return -EINVAL;
	link_lock(l);
	int ret = link_usable(l);
	if (!ret && link_behind(l))
		ret = link_behind_due(l);
	else if (!ret && l->pool)
		ret = link_flush_pending(l);
	return link_api_end(l, ret);
}

/* rpmemctl_link_stop -- drain, push if written since the last, DOWN */
RPMEM_EXPORT int rpmemctl_link_stop(struct rpmemctl_link *l)
{
	if (link_check(l, 1))
		return -EINVAL;
	link_lock(l);
	int ret = link_usable(l);
	/*
	 * a resync under way: done while it makes progress (a target that
	 * froze again holds the exit for the kick-out's timeout), then the
	 * catch-up compares every block, as a LIVE link's stop does
	 */
	if (!ret && l->state == RPMEMCTL_LINK_RESYNCING) {
		client_resync_wait(l->resync, (uint64_t)l->probe_ms * 1000000u);
		if (client_resync_state(l->resync) == RESYNC_RUNNING)
			resync_cancel(l);
		else
			ret = resync_join(l, 1);
	}
	enum rpmemctl_link_state s = l->state;
	if (!ret && (s == RPMEMCTL_LINK_LIVE || s == RPMEMCTL_LINK_OPEN)) {
		ret = link_flush_pending(l);
		/* byte-identical: what was stored but never flushed too */
		if (!ret)
			ret = do_push(l, NULL, 1);
	}
	if (l->state != RPMEMCTL_LINK_FAILED) {
		disconnect(l);
		if (l->state != RPMEMCTL_LINK_DEGRADED)
			set_state(l, RPMEMCTL_LINK_DOWN);
	}
	return link_api_end(l, ret);
}

int client_link_adopt(struct rpmemctl_link *l, const uint64_t *ids,
		      unsigned count)
{
	link_lock(l);
	int ret = l->pool ? link_settle(l) : -ENOTCONN;
	if (!ret && (ret = client_pool_gen_adopt(l->pool, ids, count)))
		link_pool_failed(l, ret, "recording a new generation id: ");
	client_share_unlock(l->share);
	return ret;
}
