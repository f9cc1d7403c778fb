/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * link_int.h -- a replication link's state and the helpers its files
 * share: link.c (the lifecycle), link_flush.c (the owed flushes and a
 * set's drain), link_probe.c (the reconnect's probe), link_cfg.c (the
 * settings and what a link reports)
 */
#ifndef RPMEM_LINK_INT_H
#define RPMEM_LINK_INT_H 1

#include <stdint.h>

#include "client_replicate.h"
#include "util.h"

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
	 * flushes posted and collected (or dropped with the session),
	 * ever: a set's round is held by the link once nread reaches what
	 * nsent was when the round was sent
	 */
	uint64_t nsent, nread;
	/*
	 * the dirty log's clear in steps (client_link_clear_acked): a cut
	 * is open, and every write marked before it is acknowledged once
	 * nread reaches cut_need
	 */
	int cut;
	uint64_t cut_need;
	/* the kick-out (0: off), and what it measures */
	unsigned ko_ms;
	/*
	 * how long a probe, a resync's catch-up or its wait at a stop may
	 * take (0: no probe, the reconnect pushes in the call): the set's
	 * kick-out time, for every k, so that with k = n too a reconnect
	 * and a resync run off the application's calls
	 */
	unsigned probe_ms;
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

/* link_behind -- DEGRADED, or RESYNCING: the link does not hold */
int link_behind(const struct rpmemctl_link *l);

/* link_behind_due -- a DEGRADED link's retry, a RESYNCING one's poll */
int link_behind_due(struct rpmemctl_link *l);

/* link_err -- keep the reason of a failure in the link; returns err */
__attribute__((format(printf, 3, 4))) int
link_err(struct rpmemctl_link *l, int err, const char *fmt, ...);

/*
 * link_lock -- a call that may use the session begins: a shared link takes
 * its entry's lock (found at its first such call)
 */
void link_lock(struct rpmemctl_link *l);

/*
 * link_failed -- a call failed (l->errmsg says why) with err: the policy
 * decides between DEGRADED (retry later) and FAILED; returns err
 */
int link_failed(struct rpmemctl_link *l, int err);

/* link_pool_failed -- failed() with the pool's message */
int link_pool_failed(struct rpmemctl_link *l, int err, const char *what);

/*
 * link_live_failed -- a LIVE link's send failed: under the kick-out a send
 * that timed out blocked for ko_ms (the target reads nothing) and is
 * said so; else pool_failed
 */
int link_live_failed(struct rpmemctl_link *l, int err);

/* link_usable -- 0, or the error of a call on a FAILED or misconfigured link */
int link_usable(struct rpmemctl_link *l);

int link_retry_due(struct rpmemctl_link *l);

/* link_check -- a setter's argument check; the setters change no state */
int link_check(struct rpmemctl_link *l, int ok);

/* link_settle -- read every owed FLUSH reply: the session is free for a call */
int link_settle(struct rpmemctl_link *l);

/*
 * link_flush_pending -- every owed flush collected, then each drain flush
 * awaited (under the kick-out, where the data plane splits a flush:
 * posted, then awaited as owed, at most until the kick-out)
 */
int link_flush_pending(struct rpmemctl_link *l);

/* link_probe_put -- drop a reference to p; the last frees it */
void link_probe_put(struct link_probe *p);

/* link_probed -- the kick-out's reconnect waits for a probe of the target */
int link_probed(const struct rpmemctl_link *l);

/*
 * link_probe_poll -- where the reconnect waits for a probe: 1 once one has
 * answered (the target is back: reconnect now), else 0, one started if
 * none runs; a failed one counts as a failed retry
 */
int link_probe_poll(struct rpmemctl_link *l);

#endif
