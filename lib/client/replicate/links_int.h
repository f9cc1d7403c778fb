/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * links_int.h -- a set of links' state and the helpers its files share:
 * links.c (the set: quorum, writes, push, stop) and links_drain.c (a
 * drain's rounds and their readers)
 */
#ifndef RPMEM_LINKS_INT_H
#define RPMEM_LINKS_INT_H 1

#include <pthread.h>
#include <semaphore.h>
#include <stdint.h>

#include "client_replicate.h"

#define LINKS_MAX 16
#define LINKS_POLL_MS 20 /* a round's wait without the mutex, at a time */
#define LINKS_POLL_POSTED_MS 2 /* the same where news may be taken (edge) */
#define LINKS_SPIN_US 50 /* the reader's spin before it sleeps, by default */
#define LINKS_CLEAR_NS 1000000000ull /* a link's dirty log cleared at most */

/*
 * a drain that waits (its thread's own): for its round to end, for the
 * turn to read, or for room for a round
 */
struct links_waiter {
	sem_t sem;	/* posted when woken */
	int init;	/* sem made */
	uint64_t want;	/* 1 + the number of the round awaited; 0: room */
	uint64_t my;	/* the thread's last write to the set */
	int done;	/* woken with its writes held by k links: return 0 */
	struct links_waiter *next; /* on the set's waiters, then woken */
};

/* a round: FLUSHes on every link, covering the writes sent before them */
struct links_round {
	uint64_t cover;		   /* writes sent before its FLUSHes */
	uint64_t t0;		   /* when they were sent (ns) */
	uint64_t sent[LINKS_MAX]; /* each link's FLUSHes sent by its end */
	int err;		   /* its first error in sending them */
};

struct rpmemctl_links {
	unsigned n;
	unsigned k; /* 0: all */
	enum rpmemctl_link_policy policy;
	int fail_err; /* fail-stop below k: every call returns it */
	struct rpmemctl_link *link[LINKS_MAX];
	/* lag: bytes written while link i was left behind, since when (ns) */
	uint64_t behind_bytes[LINKS_MAX];
	uint64_t behind_t0[LINKS_MAX];
	uint64_t since_drain; /* bytes written since the last drain */
	unsigned ko_ms;	      /* the kick-out's timeout (0: off) */
	uint64_t marks_open;  /* rpmemctl_links_mark calls not yet written */
	uint64_t clear_next[LINKS_MAX]; /* link i's next clear, not before */
	uint64_t ko_bytes;    /* and bytes in flight (0: no bound) */
	struct links_status status; /* PATH.rpmemstat, if set */
	char errmsg[CLIENT_ERRMSG_MAX];
	pthread_mutex_t mu; /* every call: one sender at a time */
	struct links_waiter *waiters; /* drains waiting, newest first */
	struct links_waiter *woken;   /* to post once the mutex is let go */
	uint64_t wakes;		      /* waiting drains woken, ever */
	uint64_t spin_ns; /* the reader looks without sleeping this long */
	uint64_t rt_ns;	  /* a round's time, recent (moving average) */
	uint64_t spins;	  /* waits for replies that spun first, ever */
	uint64_t id;	    /* the set's number in the process */
	uint64_t wseq;	    /* writes sent so far */
	uint64_t acked;	    /* writes k targets hold persistent */
	/* rounds sent and ended, ever; those in flight, oldest at rdone */
	uint64_t rsent, rdone;
	struct links_round round[LINKS_ROUNDS];
	int reading; /* a drain reads the oldest round's replies */
	int lingering; /* a drain lets others come before it sends a round */
	const struct links_waiter *last; /* the last drain's thread */
	uint32_t held; /* the links that held since outdate_left last ran */
	uint32_t fenced; /* the links the fence-peer handler fenced */
	int fence_looked; /* fence_cmd was looked up */
	int fence_started; /* the first round was fenced or unfenced */
	char fence_cmd[1024]; /* the fence-peer handler ("" if none) */
};

/* a thread's last write: its set's id and sequence number */
struct links_last_write {
	uint64_t set;
	uint64_t seq;
};

/* the calling thread's last write */
extern __thread struct links_last_write links_last_write;

/* links_quorum -- how many links must hold a write */
unsigned links_quorum(const struct rpmemctl_links *s);

/* links_holds -- the link is up to date with every write sent to it */
int links_holds(const struct rpmemctl_link *l);

/* links_err -- keep the reason of a failure in the set; returns err */
__attribute__((format(printf, 3, 4))) int
links_err(struct rpmemctl_links *s, int err, const char *fmt, ...);

/* links_usable -- 0, or the error of a call on a FAILED or empty set */
int links_usable(struct rpmemctl_links *s);

/*
 * links_unlock -- let go of the set's mutex, then wake the drains woken under
 * it (a woken thread may reuse its record at once: next is read first)
 */
void links_unlock(struct rpmemctl_links *s);

/* links_begin -- the set's mutex taken; 0, or usable's error (end unlocks) */
int links_begin(struct rpmemctl_links *s);

int links_end(struct rpmemctl_links *s, int ret);

/*
 * links_check_quorum -- got links hold: 0 if k do, else the policy: fail-stop
 * FAILED with err (-EIO if none), degrade 0; the message names each
 * link that does not hold and why
 */
int links_check_quorum(struct rpmemctl_links *s, unsigned got, int err);

/* links_count_holding -- links that hold every write */
unsigned links_count_holding(const struct rpmemctl_links *s);

/* links_update_lags -- update_lag of every link */
void links_update_lags(struct rpmemctl_links *s, uint64_t len);

/* links_holding_mask -- the links that hold every write, a bit each */
uint32_t links_holding_mask(const struct rpmemctl_links *s);

/*
 * links_kick_overdue -- drop the LIVE links past their kick-out bound while the
 * others that hold are k without them (docs/ARCHITECTURE.md "A frozen
 * target is kicked out"), the one whose reply has waited longest first
 * (a frozen target's, not that of one a loaded host kept briefly): each
 * goes DEGRADED, behind, and reconnects once a probe finds its target
 * answering
 */
void links_kick_overdue(struct rpmemctl_links *s);

#endif
