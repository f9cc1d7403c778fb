/* SPDX-License-Identifier: BSD-3-Clause */
/* link.c -- the replication lifecycle: one remote pool kept up to date */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "client_replicate.h"
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
#define LINK_PENDING_MAX 8	     /* written, unflushed ranges */
#define LINK_MERGE_GAP (64u << 10) /* pending ranges this close merge */
#define LINK_OWED_MAX 32	     /* FLUSHes sent, replies not yet read */
#define LINK_PROBE_POLL_MS 10	     /* a stop's look at its probe, at a time */

/*
 * The kick-out (a set's, links.c; docs/ARCHITECTURE.md "A frozen target
 * is kicked out"): a LIVE link that has not answered its oldest owed
 * FLUSH for ko_ms, or holds more than ko_bytes written and not yet
 * acknowledged, is dropped (DEGRADED) by the set once k others hold; a
 * send that blocks for ko_ms (the target reads nothing: its buffers
 * full) fails the link the same way. Its reconnect waits for a probe:
 * a session opened and closed by a thread of its own, so that a target
 * that accepts connections but never answers (SIGSTOP, a hung host)
 * costs the application's calls nothing.
 */
enum link_probe_state { PROBE_IDLE, PROBE_RUNNING, PROBE_OK, PROBE_FAILED };

/* a probe of the target: shared by the link and its thread */
struct link_probe {
	_Atomic int refs;  /* the link's and the running thread's */
	_Atomic int state; /* enum link_probe_state */
	char host[256];
	char port[16];
	enum rpmemctl_transport transport;
	rpmemctl_log_fn log_fn;
	void *log_arg;
	int log_prio;
};

struct link_range {
	uint64_t off;
	uint64_t end;
};

struct rpmemctl_link {
	enum rpmemctl_link_state state;
	enum rpmemctl_link_policy policy;
	long retry_ms;	   /* degraded: between reconnects; < 0 never */
	uint64_t retry_at; /* degraded: next automatic reconnect (ns) */
	int fail_err;	   /* FAILED: the failure every call returns */
	struct rpmem_target t;
	enum rpmemctl_transport transport;
	rpmemctl_link_open_fn open_fn;
	void *open_arg;
	rpmemctl_link_notify_fn notify_fn;
	void *notify_arg;
	rpmemctl_log_fn log_fn; /* the default open's sessions log here */
	void *log_arg;
	int log_prio;
	uint8_t *addr; /* the data */
	uint64_t len;
	struct rpmemctl_dirtylog *log; /* borrowed; NULL after a failed mark */
	char *history; /* the local file whose history pushes compare; owned */
	int hist_live;	     /* the history lists the pool as live */
	int hist_seen;	     /* a pool was open: its uuid was known */
	unsigned hist_epoch; /* client_history_epoch() when it was listed */
	struct rpmemctl_session *sess;
	struct rpmemctl_pool *pool;
	int shared;		    /* the default open shares a session */
	struct client_share *share; /* its entry, from the first call */
	struct rpmemctl_sync_result res; /* of the last push */
	int pushed;			 /* res holds one */
	unsigned npending;
	struct link_range pending[LINK_PENDING_MAX];
	int unacked; /* barriers sent since the last FLUSH's reply */
	/*
	 * a set's drain (links.c): flushes the data plane posted
	 * (client_pool_flush_post) and not collected yet, their tokens in
	 * order (a ring from owed_head)
	 */
	unsigned nowed;
	unsigned owed_head;
	uint64_t owed[LINK_OWED_MAX];
	/*
	 * flushes posted and collected (or dropped with the session), ever: a set's round is held by the link
	 * once nread reaches what nsent was when the round was sent
	 */
	uint64_t nsent, nread;
	/* the kick-out (0: off), and what it measures */
	unsigned ko_ms;
	uint64_t ko_bytes;
	uint64_t wbytes; /* bytes written live, ever */
	uint64_t abytes; /* of those, covered by a FLUSH reply read */
	uint64_t owed_t[LINK_OWED_MAX]; /* when each owed FLUSH was sent */
	uint64_t owed_b[LINK_OWED_MAX]; /* wbytes when it was sent */
	struct link_probe *probe;	/* the reconnect's, if any */
	struct client_resync *resync;	/* RESYNCING: its thread */
	/* the resync's catch-up: the ranges to push, or extents (over) */
	const struct client_resync_ranges *catchup;
	const uint8_t *catchup_ext;
	char source[RPMEM_STR_MAX + 1];
	char live[RPMEM_STR_MAX + 1];
	char name[512]; /* host:port/region/pool: room for any target */
	char errmsg[CLIENT_ERRMSG_MAX];
};

/* link_err -- keep the reason of a failure in the link; returns err */
__attribute__((format(printf, 3, 4))) static int
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
static void link_lock(struct rpmemctl_link *l)
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
static int link_failed(struct rpmemctl_link *l, int err)
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
static int link_pool_failed(struct rpmemctl_link *l, int err, const char *what)
{
	link_err(l, err, "%s%s", what, rpmemctl_pool_errmsg(l->pool));
	return link_failed(l, err);
}

/* owed_recv -- collect the oldest flush posted, until it completes */
static int owed_recv(struct rpmemctl_link *l)
{
	struct rpmemctl_session *s = l->pool ? l->pool->sess : NULL;
	int ret = client_pool_flush_collect(l->pool, l->owed[l->owed_head], 1);
	if (ret < 0) {
		link_err(l, ret, "flush: %s", s ? rpmemctl_session_errmsg(s) :
			 rpmemctl_strerror(ret));
		return link_failed(l, ret);
	}
	l->abytes = l->owed_b[l->owed_head];
	l->owed_head = (l->owed_head + 1) % LINK_OWED_MAX;
	l->nowed--;
	l->nread++;
	return 0;
}

/*
 * ready -- the oldest flush owed can be collected without waiting (a
 * failure too: the collect says it)
 */
static int ready(struct rpmemctl_link *l)
{
	return l->nowed && l->pool && l->pool->sess &&
	       client_pool_flush_collect(l->pool, l->owed[l->owed_head], 0);
}

/*
 * kick -- the kick-out: the target answered nothing for too long; its
 * session is dropped without a goodbye (it would wait too) and the link
 * fails; returns -ETIMEDOUT
 */
static int kick(struct rpmemctl_link *l, uint64_t age_ns)
{
	struct rpmemctl_session *s = l->pool ? l->pool->sess : l->sess;
	link_err(l, -ETIMEDOUT, "kicked out: no reply for %llu ms (the "
		 "kick-out timeout is %u ms), %llu bytes written and not "
		 "acknowledged",
		 (unsigned long long)(age_ns / 1000000u), l->ko_ms,
		 (unsigned long long)(l->wbytes - l->abytes));
	if (s && !s->lost) {
		s->lost = -ETIMEDOUT;
		shutdown(s->conn.fd, SHUT_RDWR);
	}
	return link_failed(l, -ETIMEDOUT);
}

/* owed_age -- how long the oldest owed reply has been awaited (ns) */
static uint64_t owed_age(const struct rpmemctl_link *l)
{
	uint64_t now = rpmem_now_ns(), t = l->owed_t[l->owed_head];
	return l->nowed && now > t ? now - t : 0;
}

/*
 * await_owed -- with the kick-out on, wait for the oldest owed reply at
 * most until its kick-out time: 0 once it can be read, else kicked out
 */
static int await_owed(struct rpmemctl_link *l)
{
	uint64_t ko = (uint64_t)l->ko_ms * 1000000u;
	for (;;) {
		if (!l->pool || !l->pool->sess || ready(l))
			return 0;
		uint64_t age = owed_age(l);
		if (age >= ko)
			return kick(l, age);
		struct pollfd pfd = { .fd = client_link_wait_fd(l),
				      .events = POLLIN };
		int ms = (int)((ko - age + 999999u) / 1000000u);
		if (pfd.fd < 0)
			return 0;
		/* an event may be taken by another's wait: look again soon */
		(void)poll(&pfd, 1,
			   client_pool_wait_edge(l->pool) && ms > 2 ? 2 : ms);
	}
}

/* link_settle -- read every owed FLUSH reply: the session is free for a call */
static int link_settle(struct rpmemctl_link *l)
{
	int ret = 0;
	while (l->nowed && !ret) {
		if (l->ko_ms && (ret = await_owed(l)))
			break;
		ret = owed_recv(l);
	}
	return ret;
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
static int link_usable(struct rpmemctl_link *l)
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
	if (l->ko_ms && l->pool->sess && !l->catchup)
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

/* link_probe_put -- drop a reference to p; the last frees it */
static void link_probe_put(struct link_probe *p)
{
	if (p && atomic_fetch_sub(&p->refs, 1) == 1)
		free(p);
}

/* probe_main -- the probe's thread: a session opened and closed */
static void *probe_main(void *arg)
{
	struct link_probe *p = arg;
	struct rpmemctl_session_cfg *cfg = NULL;
	struct rpmemctl_session *sess = NULL;
	int ret = rpmemctl_session_cfg_new(&cfg);
	if (!ret && p->log_fn)
		ret = rpmemctl_session_cfg_set_log(cfg, p->log_fn, p->log_arg,
						   p->log_prio);
	if (!ret) {
		ret = rpmemctl_session_cfg_load_default(cfg, p->host, p->port);
		ret = ret == -ENOENT || ret > 0 ? 0 : ret;
	}
	if (!ret)
		ret = rpmemctl_session_open_cfg(p->host, p->port, p->transport,
						cfg, &sess);
	rpmemctl_session_close(&sess);
	rpmemctl_session_cfg_delete(&cfg);
	atomic_store(&p->state, ret ? PROBE_FAILED : PROBE_OK);
	link_probe_put(p);
	return NULL;
}

/* link_probe_start -- a probe of l's target in a thread of its own */
static int link_probe_start(struct rpmemctl_link *l)
{
	struct link_probe *p = l->probe;
	if (!p && !(p = l->probe = calloc(1, sizeof(*p))))
		return -ENOMEM;
	if (!p->refs) {
		atomic_store(&p->refs, 1);
		rpmem_strlcpy(p->host, l->t.host, sizeof(p->host));
		rpmem_strlcpy(p->port, l->t.port, sizeof(p->port));
		p->transport = l->transport;
		p->log_fn = l->log_fn;
		p->log_arg = l->log_arg;
		p->log_prio = l->log_prio;
	}
	pthread_attr_t a;
	pthread_t th;
	atomic_store(&p->state, PROBE_RUNNING);
	atomic_fetch_add(&p->refs, 1);
	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	int ret = pthread_create(&th, &a, probe_main, p);
	pthread_attr_destroy(&a);
	if (ret) {
		atomic_fetch_sub(&p->refs, 1);
		atomic_store(&p->state, PROBE_FAILED);
		return -ret;
	}
	return 0;
}

/* link_probed -- the kick-out's reconnect waits for a probe of the target */
static int link_probed(const struct rpmemctl_link *l)
{
	return l->ko_ms && !l->open_fn && l->t.host[0];
}

/*
 * link_probe_poll -- where the reconnect waits for a probe: 1 once one has
 * answered (the target is back: reconnect now), else 0, one started if
 * none runs; a failed one counts as a failed retry
 */
static int link_probe_poll(struct rpmemctl_link *l)
{
	int st = l->probe ? atomic_load(&l->probe->state) : PROBE_IDLE;
	if (st == PROBE_OK) {
		atomic_store(&l->probe->state, PROBE_IDLE);
		return 1;
	}
	if (st == PROBE_FAILED) {
		atomic_store(&l->probe->state, PROBE_IDLE);
		l->retry_at = rpmem_now_ns() + (uint64_t)l->retry_ms * 1000000u;
		return 0;
	}
	if (st == PROBE_IDLE && link_probe_start(l))
		l->retry_at = rpmem_now_ns() + (uint64_t)l->retry_ms * 1000000u;
	return 0;
}

/*
 * link_retry_due -- DEGRADED and time to reconnect: reconnect and push
 * (where the kick-out is on, once a probe answered: with a dirty log, a
 * resync in a thread of its own instead)
 */
static int resync_start(struct rpmemctl_link *l);

static int link_retry_due(struct rpmemctl_link *l)
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
		(void)rpmem_conn_set_rcvtimeo(&sess->conn, (int)l->ko_ms);
		(void)rpmem_conn_set_sndtimeo(&sess->conn, (int)l->ko_ms);
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
	(void)rpmem_conn_set_rcvtimeo(&sess->conn, CLIENT_IO_TIMEOUT_S * 1000);
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
	     l->ko_ms);
	(void)link_failed(l, -ETIMEDOUT);
}

/* link_behind_due -- a DEGRADED link's retry, a RESYNCING one's poll */
static int link_behind_due(struct rpmemctl_link *l)
{
	return l->state == RPMEMCTL_LINK_RESYNCING ? resync_poll(l) :
						      link_retry_due(l);
}

/* link_behind -- DEGRADED, or RESYNCING: the link does not hold */
static int link_behind(const struct rpmemctl_link *l)
{
	return l->state == RPMEMCTL_LINK_DEGRADED ||
	       l->state == RPMEMCTL_LINK_RESYNCING;
}

/*
 * link_live_failed -- a LIVE link's send failed: under the kick-out a send
 * that timed out blocked for ko_ms (the target reads nothing) and is
 * said so; else pool_failed
 */
static int link_live_failed(struct rpmemctl_link *l, int err)
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
	char err[256];
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

/* link_check -- a setter's argument check; the setters change no state */
static int link_check(struct rpmemctl_link *l, int ok)
{
	client_api_begin();
	if (l && ok)
		return 0;
	client_set_last(-EINVAL, "link: invalid argument");
	return -EINVAL;
}

RPMEM_EXPORT int rpmemctl_link_set_data(struct rpmemctl_link *l, void *addr,
					uint64_t len)
{
	int ret = link_check(l, addr && len && !(l && l->pool));
	if (!ret) {
		l->addr = addr;
		l->len = len;
	}
	return ret;
}

RPMEM_EXPORT int rpmemctl_link_set_dirty_log(struct rpmemctl_link *l,
					     struct rpmemctl_dirtylog *log)
{
	int ret = link_check(l, 1);
	if (!ret)
		l->log = log;
	return ret;
}

RPMEM_EXPORT int rpmemctl_link_set_history(struct rpmemctl_link *l,
					   const char *file)
{
	char *copy = file ? strdup(file) : NULL;
	int ret = link_check(l, !file || copy);
	if (ret) {
		free(copy);
		return ret;
	}
	free(l->history);
	l->history = copy;
	return 0;
}

RPMEM_EXPORT int rpmemctl_link_set_source(struct rpmemctl_link *l,
					  const char *source, const char *live)
{
	int ret = link_check(l, 1);
	if (!ret && source)
		rpmem_strlcpy(l->source, source, sizeof(l->source));
	if (!ret && live)
		rpmem_strlcpy(l->live, live, sizeof(l->live));
	return ret;
}

RPMEM_EXPORT int rpmemctl_link_set_policy(struct rpmemctl_link *l,
					  enum rpmemctl_link_policy policy,
					  long retry_ms)
{
	int ret = link_check(l, policy == RPMEMCTL_LINK_FAIL_STOP ||
			   policy == RPMEMCTL_LINK_DEGRADE);
	if (!ret) {
		l->policy = policy;
		l->retry_ms = retry_ms < 0 ? -1 : retry_ms;
	}
	return ret;
}

RPMEM_EXPORT int rpmemctl_link_set_open(struct rpmemctl_link *l,
					rpmemctl_link_open_fn fn, void *arg)
{
	int ret = link_check(l, 1);
	if (!ret) {
		l->open_fn = fn;
		l->open_arg = arg;
	}
	return ret;
}

RPMEM_EXPORT int rpmemctl_link_set_log(struct rpmemctl_link *l,
				       rpmemctl_log_fn fn, void *arg, int prio)
{
	int ret = link_check(l, prio >= 0 && prio <= 7);
	if (!ret) {
		l->log_fn = fn;
		l->log_arg = arg;
		l->log_prio = prio;
	}
	return ret;
}

RPMEM_EXPORT int rpmemctl_link_set_shared(struct rpmemctl_link *l, int on)
{
	int ret = link_check(l, !(l && (l->pool || l->share)));
	if (!ret)
		l->shared = on != 0;
	return ret;
}

RPMEM_EXPORT int rpmemctl_link_set_notify(struct rpmemctl_link *l,
					  rpmemctl_link_notify_fn fn, void *arg)
{
	int ret = link_check(l, 1);
	if (!ret) {
		l->notify_fn = fn;
		l->notify_arg = arg;
	}
	return ret;
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

/* flush_fn -- a FLUSH of [off, off + len) on the link, 0 or -errno */
typedef int (*flush_fn)(struct rpmemctl_link *l, uint64_t off, uint64_t len);

/*
 * for_flushes -- fn on every range a drain FLUSHes: each pending one, or
 * one empty range for the acknowledgement of the barriers sent before
 * (the target works in order: its reply follows theirs); then nothing is
 * pending or unacknowledged
 */
static int for_flushes(struct rpmemctl_link *l, flush_fn fn)
{
	int ret = 0;
	if (!l->npending && l->unacked)
		ret = fn(l, 0, 0);
	for (unsigned i = 0; i < l->npending && !ret; i++)
		ret = fn(l, l->pending[i].off,
			 l->pending[i].end - l->pending[i].off);
	if (ret)
		return ret;
	l->npending = 0;
	l->unacked = 0;
	return 0;
}

/* flush_wait -- a FLUSH that waits for its reply */
static int flush_wait(struct rpmemctl_link *l, uint64_t off, uint64_t len)
{
	int ret = rpmemctl_pool_flush(l->pool, off, len);
	return ret ? link_pool_failed(l, ret, "") : 0;
}

static int post_flush(struct rpmemctl_link *l, uint64_t off, uint64_t len);

/*
 * link_flush_pending -- every owed flush collected, then each drain flush
 * awaited (under the kick-out, where the data plane splits a flush:
 * posted, then awaited as owed, at most until the kick-out)
 */
static int link_flush_pending(struct rpmemctl_link *l)
{
	int ret = link_settle(l);
	if (ret)
		return ret;
	if (l->ko_ms && l->pool && client_pool_splits_flush(l->pool)) {
		ret = for_flushes(l, post_flush);
		return ret ? ret : link_settle(l);
	}
	return for_flushes(l, flush_wait);
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
		client_resync_wait(l->resync, (uint64_t)l->ko_ms * 1000000u);
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

/* owe -- a flush posted (its token), its completion owed */
static void owe(struct rpmemctl_link *l, uint64_t tok)
{
	unsigned i = (l->owed_head + l->nowed++) % LINK_OWED_MAX;
	l->owed[i] = tok;
	l->owed_t[i] = rpmem_now_ns();
	l->owed_b[i] = l->wbytes;
	l->nsent++;
}

/*
 * post_flush -- a flush of [off, off + len) the data plane posts; its
 * completion owed, collected later
 */
static int post_flush(struct rpmemctl_link *l, uint64_t off, uint64_t len)
{
	uint64_t tok = 0;
	int ret = client_pool_flush_post(l->pool, off, len, &tok);
	if (ret == -ETIMEDOUT && l->ko_ms)
		return link_live_failed(l, ret);
	if (ret) {
		link_err(l, ret, "flush: %s",
			 rpmemctl_session_errmsg(l->pool->sess));
		return link_failed(l, ret);
	}
	owe(l, tok);
	return 0;
}

/*
 * flush_send -- a set's drain, first half: a flush for every pending
 * range posted by the data plane, their completions owed (collected by
 * client_link_flush_recv or by the link's next call that awaits a
 * reply). A DEGRADED link retries if due; a data plane that does not
 * split a flush drains in full here.
 */
static int flush_send(struct rpmemctl_link *l)
{
	int ret = link_usable(l);
	if (ret || link_behind(l))
		return ret ? ret : link_behind_due(l);
	if (!l->pool)
		return 0;
	if (!client_pool_splits_flush(l->pool))
		return link_flush_pending(l);
	unsigned n = l->npending ? l->npending : (unsigned)l->unacked;
	if (l->nowed + n > LINK_OWED_MAX && l->ko_ms) {
		/* no waiting for a target this far behind: read what came */
		while (l->nowed && ready(l) && !(ret = owed_recv(l)))
			;
		if (ret || l->nowed + n > LINK_OWED_MAX)
			return ret ? ret : 1;
	}
	if (l->nowed + n > LINK_OWED_MAX && (ret = link_settle(l)))
		return ret;
	return for_flushes(l, post_flush);
}

/* client_link_flush_send -- flush_send under the link's lock */
int client_link_flush_send(struct rpmemctl_link *l)
{
	link_lock(l);
	int ret = flush_send(l);
	client_share_unlock(l->share);
	return ret;
}

/* client_link_flush_recv -- read one owed FLUSH reply (0 if none owed) */
int client_link_flush_recv(struct rpmemctl_link *l)
{
	link_lock(l);
	int ret = l->nowed ? owed_recv(l) : 0;
	client_share_unlock(l->share);
	return ret;
}

int client_link_ready(struct rpmemctl_link *l)
{
	link_lock(l);
	int r = ready(l);
	client_share_unlock(l->share);
	return r;
}

/*
 * client_link_clear_acked -- a LIVE link whose every write sent was
 * acknowledged clears its dirty log: what the log marks from now on is
 * what this target may miss (docs/ARCHITECTURE.md "Per-target dirty
 * logs"); the set calls it with no mark outstanding
 */
int client_link_clear_acked(struct rpmemctl_link *l)
{
	if (!l->log || l->state != RPMEMCTL_LINK_LIVE)
		return 0;
	link_lock(l);
	int err = 0, ret = 0;
	while (l->nowed && ready(l) && !(err = owed_recv(l)))
		;
	if (!err && l->state == RPMEMCTL_LINK_LIVE && !l->nowed &&
	    !l->npending && !l->unacked && l->log)
		ret = client_dirtylog_clear(l->log);
	if (ret < 0) {
		/* what it holds on disk is unknown: no push may trust it */
		l->log = NULL;
		link_err(l, ret, "cannot clear the dirty log: %s",
			 strerror(-ret));
	}
	client_share_unlock(l->share);
	return ret;
}

/* client_link_set_kickout -- the kick-out's bounds (ms 0: off) */
void client_link_set_kickout(struct rpmemctl_link *l, unsigned ms,
			     uint64_t bytes)
{
	l->ko_ms = ms;
	l->ko_bytes = bytes;
}

/*
 * client_link_overdue -- a LIVE link under the kick-out has passed its
 * bound (replies that came read first): its oldest owed reply awaited
 * ko_ms, or more than ko_bytes written and not acknowledged; 0 if not,
 * else how long its oldest owed reply has waited (ns, at least 1)
 */
uint64_t client_link_overdue(struct rpmemctl_link *l)
{
	if (!l->ko_ms || l->state != RPMEMCTL_LINK_LIVE)
		return 0;
	/* the common case, cheap: within both bounds */
	if (owed_age(l) < (uint64_t)l->ko_ms * 1000000u &&
	    (!l->ko_bytes || l->wbytes - l->abytes <= l->ko_bytes))
		return 0;
	link_lock(l);
	int ret = 0;
	while (l->nowed && ready(l) && !(ret = owed_recv(l)))
		;
	uint64_t age = owed_age(l);
	int over = !ret && l->state == RPMEMCTL_LINK_LIVE &&
		   (age >= (uint64_t)l->ko_ms * 1000000u ||
		    (l->ko_bytes && l->wbytes - l->abytes > l->ko_bytes));
	client_share_unlock(l->share);
	return over ? age + 1 : 0;
}

/* client_link_kick -- drop an overdue link (DEGRADED, behind) */
int client_link_kick(struct rpmemctl_link *l)
{
	link_lock(l);
	int ret = kick(l, owed_age(l));
	client_share_unlock(l->share);
	return ret;
}

/*
 * client_link_retry_now -- a DEGRADED link's last retry (a set's stop):
 * under the kick-out only once a probe answers within ko_ms, else a
 * push at once; 0, or why not
 */
int client_link_retry_now(struct rpmemctl_link *l)
{
	if (!link_probed(l))
		return rpmemctl_link_push(l, NULL, NULL);
	uint64_t end = rpmem_now_ns() + (uint64_t)l->ko_ms * 1000000u;
	int st = l->probe ? atomic_load(&l->probe->state) : PROBE_IDLE;
	if (st != PROBE_RUNNING && st != PROBE_OK && link_probe_start(l))
		return link_err(l, -ENOMEM,
				"cannot start a probe of the target");
	while ((st = atomic_load(&l->probe->state)) == PROBE_RUNNING &&
	       rpmem_now_ns() < end)
		poll(NULL, 0, LINK_PROBE_POLL_MS);
	if (st == PROBE_RUNNING)
		return link_err(l, -ETIMEDOUT, "no answer from the target "
				"within the kick-out timeout (%u ms)",
				l->ko_ms);
	atomic_store(&l->probe->state, PROBE_IDLE);
	if (st != PROBE_OK)
		return link_err(l, -ECONNREFUSED,
				"the target cannot be reached");
	return rpmemctl_link_push(l, NULL, NULL);
}

/*
 * client_link_start_probe -- a set's start (k < n under the kick-out)
 * probes a DOWN link's target before it pushes: 0 once a probe runs or
 * answered, 1 where the link takes none (no kick-out, an open hook, not
 * DOWN, its own policy fail-stop) or one cannot start: it pushes as before
 */
int client_link_start_probe(struct rpmemctl_link *l)
{
	if (!link_probed(l) || l->state != RPMEMCTL_LINK_DOWN ||
	    l->policy != RPMEMCTL_LINK_DEGRADE)
		return 1;
	int st = l->probe ? atomic_load(&l->probe->state) : PROBE_IDLE;
	if (st == PROBE_RUNNING || st == PROBE_OK)
		return 0;
	return link_probe_start(l) ? 1 : 0;
}

/*
 * client_link_start_probed -- the start's probe of l: 1 answered, 0
 * still running, -1 failed or none; done: an answer is taken (the next
 * reconnect waits for a probe of its own)
 */
int client_link_start_probed(struct rpmemctl_link *l, int done)
{
	int st = l->probe ? atomic_load(&l->probe->state) : PROBE_IDLE;
	if (done && (st == PROBE_OK || st == PROBE_FAILED))
		atomic_store(&l->probe->state, PROBE_IDLE);
	return st == PROBE_OK ? 1 : st == PROBE_RUNNING ? 0 : -1;
}

/*
 * client_link_defer -- the start goes on without l: its target did not
 * answer its probe within the kick-out timeout after k others did (or k
 * cannot answer); DEGRADED and behind, its reconnect waits for that
 * probe; returns -ETIMEDOUT
 */
int client_link_defer(struct rpmemctl_link *l, uint64_t waited_ns)
{
	link_lock(l);
	link_err(l, -ETIMEDOUT, "kicked out at the start: no answer to a "
		 "probe for %llu ms (the kick-out timeout is %u ms); resynced "
		 "once it answers", (unsigned long long)(waited_ns / 1000000u),
		 l->ko_ms);
	int ret = link_failed(l, -ETIMEDOUT);
	client_share_unlock(l->share);
	return ret;
}

/* client_link_owed -- FLUSH replies owed */
unsigned client_link_owed(const struct rpmemctl_link *l)
{
	return l->nowed;
}

uint64_t client_link_flushes_sent(const struct rpmemctl_link *l)
{
	return l->nsent;
}

int client_link_flush_serial(const struct rpmemctl_link *l)
{
	return l->pool && client_pool_flush_serial(l->pool);
}

uint64_t client_link_flushes_read(const struct rpmemctl_link *l)
{
	return l->nread;
}

/* client_link_name -- "host:port/region/pool" of the link's target */
const char *client_link_history(const struct rpmemctl_link *l)
{
	return l->history;
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

const char *client_link_name(const struct rpmemctl_link *l)
{
	return l->name[0] ? l->name : "(a link without a target)";
}

int client_link_wait_edge(const struct rpmemctl_link *l)
{
	return l->nowed && l->pool && client_pool_wait_edge(l->pool);
}

int client_link_wait_fd(struct rpmemctl_link *l)
{
	if (!l->nowed || !l->pool || !l->pool->sess)
		return -1;
	return client_pool_wait_fd(l->pool);
}

RPMEM_EXPORT enum rpmemctl_link_state
rpmemctl_link_get_state(const struct rpmemctl_link *l)
{
	return l ? l->state : RPMEMCTL_LINK_DOWN;
}

RPMEM_EXPORT uint64_t
rpmemctl_link_get_retry_ns(const struct rpmemctl_link *l)
{
	if (!l || l->state != RPMEMCTL_LINK_DEGRADED)
		return 0;
	if (l->retry_at == UINT64_MAX)
		return UINT64_MAX;
	uint64_t now = rpmem_now_ns();
	return now >= l->retry_at ? 0 : l->retry_at - now;
}

RPMEM_EXPORT struct rpmemctl_pool *
rpmemctl_link_get_pool(const struct rpmemctl_link *l)
{
	return l ? l->pool : NULL;
}

RPMEM_EXPORT const struct rpmemctl_sync_result *
rpmemctl_link_get_result(const struct rpmemctl_link *l)
{
	return l && l->pushed ? &l->res : NULL;
}

RPMEM_EXPORT const char *rpmemctl_link_errmsg(const struct rpmemctl_link *l)
{
	return l ? l->errmsg : "no link";
}

RPMEM_EXPORT const char *rpmemctl_link_state_str(enum rpmemctl_link_state s)
{
	static const char *const names[] = {
		[RPMEMCTL_LINK_DOWN] = "down",
		[RPMEMCTL_LINK_OPEN] = "open",
		[RPMEMCTL_LINK_SYNCED] = "synced",
		[RPMEMCTL_LINK_LIVE] = "live",
		[RPMEMCTL_LINK_DEGRADED] = "degraded",
		[RPMEMCTL_LINK_FAILED] = "failed",
		[RPMEMCTL_LINK_RESYNCING] = "resyncing",
	};
	if ((unsigned)s < sizeof(names) / sizeof(names[0]))
		return names[s];
	return "unknown";
}

/* client_link_resync_left -- a RESYNCING link's bytes still to send */
uint64_t client_link_resync_left(struct rpmemctl_link *l)
{
	if (l->state != RPMEMCTL_LINK_RESYNCING || !l->resync)
		return 0;
	return client_resync_left(l->resync);
}
