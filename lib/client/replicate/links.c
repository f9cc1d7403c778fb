/* SPDX-License-Identifier: BSD-3-Clause */
/* links.c -- a set of links over one data: k of n targets hold a drain */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "client_replicate.h"
#include "util.h"

/*
 * A set owns n links (link.c) that replicate the same data, each to its
 * own target with its own dirty log, and drives them together: a write
 * goes to every link, a drain returns once k of them hold every write
 * so far persistent. The drain sends its FLUSHes to every target first
 * and then reads the replies as they come, so it waits for the k-th
 * fastest target, not the slowest; the others' replies stay owed and
 * are read by their next drain (or any call of theirs that awaits a
 * reply), at most LINK_OWED_MAX FLUSHes behind.
 *
 * A link that fails goes DEGRADED under its own (degrade) policy: its
 * log keeps marking, and its retry reconnects and pushes only the logged
 * extents. The set's policy applies when fewer than k hold: fail-stop
 * makes the set FAILED (every later call returns the error), degrade
 * lets the calls return 0 while the links retry.
 *
 * Threads share a set (group commit, docs/ARCHITECTURE.md "Group
 * commit"): every call holds the set's mutex, so one thread at a time
 * sends and a message is never cut by another's. Each write takes the
 * next sequence number (the thread remembers its last); a drain's round
 * records the highest one sent before its FLUSHes (cover) and, once k
 * targets replied, acknowledges every write up to it (acked). Rounds are
 * pipelined: a drain whose writes no round in flight covers sends the
 * next round at once (up to LINKS_ROUNDS in flight; one where a data
 * plane posts one flush at a time, GPSPM), without waiting for the
 * rounds before it; a drain that a round in flight covers rides it.
 * Except where the oldest round in flight is about to end (expected
 * within the reader's spin, a recent round's time after it was sent, and
 * not late by more than that): there the drain waits for it and rides
 * the round sent when it ends, with every drain that came meanwhile, so
 * that on a fast link a round's system calls and wakes on both ends
 * serve several drains (may_send). The
 * targets answer a session's FLUSHes in order, so the rounds end in
 * order. One thread at a time reads the replies (the reader), and lets
 * go of the mutex while it waits for them: other threads write and send
 * rounds meanwhile. A drain returns as soon as a round covered the
 * thread's own writes.
 *
 * The other drains wait each on a semaphore of its thread's (struct
 * links_waiter, on the set's list) and are woken one by one, after the
 * mutex is let go: those whose round ended, told so (they return without
 * taking the mutex again); those waiting for room, once a round ends, by
 * a round the waker sends for them all; and, when the reader returns
 * with rounds still in flight, the waiter of the oldest, to read next. A
 * condition variable's broadcast would wake every waiter at every
 * round's end, each to take the mutex in turn and find out whether its
 * round was the one: measured on two cores, a sixth of eight threads'
 * CPU per transaction.
 *
 * A thread that must drain several sets (a commit that touched several
 * files) starts each set's round first (rpmemctl_links_drain_start: the
 * FLUSHes sent, no reply awaited) and then drains each: the rounds'
 * round trips overlap instead of following one another. A round so
 * started has no reader until a drain (of any thread) reads its replies.
 */
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
	uint32_t held; /* the links that held since outdate_left last ran */
	uint32_t fenced; /* the links the fence-peer handler fenced */
	int fence_looked; /* fence_cmd was looked up */
	int fence_started; /* the first round was fenced or unfenced */
	char fence_cmd[1024]; /* the fence-peer handler ("" if none) */
};

/* the calling thread's waiting drain */
static __thread struct links_waiter links_me;

/* a thread's last write: its set's id and sequence number */
struct links_last_write {
	uint64_t set;
	uint64_t seq;
};

/* the calling thread's last write */
static __thread struct links_last_write links_last_write;
static _Atomic uint64_t next_id = 1;

/* links_quorum -- how many links must hold a write */
static unsigned links_quorum(const struct rpmemctl_links *s)
{
	return s->k && s->k < s->n ? s->k : s->n;
}

/* links_holds -- the link is up to date with every write sent to it */
static int links_holds(const struct rpmemctl_link *l)
{
	enum rpmemctl_link_state st = rpmemctl_link_get_state(l);
	return st == RPMEMCTL_LINK_SYNCED || st == RPMEMCTL_LINK_LIVE;
}

/* links_err -- keep the reason of a failure in the set; returns err */
__attribute__((format(printf, 3, 4))) static int
links_err(struct rpmemctl_links *s, int err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	client_vmsg(s->errmsg, sizeof(s->errmsg), fmt, ap);
	va_end(ap);
	return err;
}

static unsigned links_count_holding(const struct rpmemctl_links *s);

/* links_usable -- 0, or the error of a call on a FAILED or empty set */
static int links_usable(struct rpmemctl_links *s)
{
	if (s->fail_err == -ENOTRECOVERABLE)
		return links_err(s, s->fail_err, "the fence-peer handler '%s' "
				 "failed before: no call is possible but "
				 "delete", s->fence_cmd);
	if (s->fail_err)
		return links_err(s, s->fail_err, "fewer than %u of the %u "
				 "targets held before (fail-stop): no call is "
				 "possible but delete", links_quorum(s), s->n);
	if (!s->n)
		return links_err(s, -EINVAL, "the set has no links");
	return 0;
}

/*
 * links_unlock -- let go of the set's mutex, then wake the drains woken under
 * it (a woken thread may reuse its record at once: next is read first)
 */
static void links_unlock(struct rpmemctl_links *s)
{
	struct links_waiter *w = s->woken;
	s->woken = NULL;
	pthread_mutex_unlock(&s->mu);
	while (w) {
		struct links_waiter *next = w->next;
		sem_post(&w->sem);
		w = next;
	}
}

/* links_begin -- the set's mutex taken; 0, or usable's error (end unlocks) */
static int links_begin(struct rpmemctl_links *s)
{
	client_api_begin();
	if (!s)
		return -EINVAL;
	pthread_mutex_lock(&s->mu);
	s->errmsg[0] = '\0';
	return links_usable(s);
}

/*
 * links_end -- publish the replicas' status; the thread's message is the
 * set's; the mutex let go
 */
static uint32_t links_holding_mask(const struct rpmemctl_links *s);

/*
 * links_status_bytes -- what the status file says each link misses: its
 * lag, or for a RESYNCING one what its resync has still to send
 */
static const uint64_t *links_status_bytes(struct rpmemctl_links *s)
{
	static __thread uint64_t b[LINKS_MAX];
	for (unsigned i = 0; i < s->n; i++)
		b[i] = rpmemctl_link_get_state(s->link[i]) ==
				       RPMEMCTL_LINK_RESYNCING ?
			       client_link_resync_left(s->link[i]) :
			       s->behind_bytes[i];
	return b;
}

static int links_end(struct rpmemctl_links *s, int ret)
{
	if (s) {
		unsigned got = links_count_holding(s);
		/* outdate_left looks for links that held since it ran */
		s->held |= links_holding_mask(s);
		/* a clean stop: the copies it left equal hold every write */
		for (unsigned i = 0; i < s->n; i++)
			got += (s->status.stopped_synced >> i) & 1;
		links_status_update(&s->status, links_quorum(s), s->n, got,
				    s->link, links_status_bytes(s), s->behind_t0);
		s->status.stopped_synced = 0;
	}
	if (ret && s)
		client_set_last(ret, "%s", s->errmsg);
	else if (ret)
		client_set_last(ret, "links: invalid argument");
	if (s)
		links_unlock(s);
	return ret;
}

/*
 * links_check_quorum -- got links hold: 0 if k do, else the policy: fail-stop
 * FAILED with err (-EIO if none), degrade 0; the message names each
 * link that does not hold and why
 */
static int links_check_quorum(struct rpmemctl_links *s, unsigned got, int err)
{
	if (got >= links_quorum(s))
		return 0;
	size_t o = (size_t)snprintf(s->errmsg, sizeof(s->errmsg),
				    "only %u of %u targets hold the data (%u "
				    "needed)", got, s->n, links_quorum(s));
	for (unsigned i = 0; i < s->n && o < sizeof(s->errmsg); i++) {
		struct rpmemctl_link *l = s->link[i];
		if (!links_holds(l))
			o += (size_t)snprintf(s->errmsg + o,
					      sizeof(s->errmsg) - o,
					      "; %s: %s", client_link_name(l),
					      rpmemctl_link_errmsg(l)[0] ?
					      rpmemctl_link_errmsg(l) :
					      rpmemctl_link_state_str(
						rpmemctl_link_get_state(l)));
	}
	if (s->policy == RPMEMCTL_LINK_DEGRADE)
		return 0;
	s->fail_err = err ? err : -EIO;
	return s->fail_err;
}

/*
 * update_lag -- link i missed len bytes (and, when it is first left
 * behind, what was written since the last drain) unless it holds; reset
 * if it does
 */
static void update_lag(struct rpmemctl_links *s, unsigned i, uint64_t len)
{
	if (links_holds(s->link[i])) {
		s->behind_bytes[i] = 0;
		s->behind_t0[i] = 0;
		return;
	}
	/* left behind now: it may miss all since the last drain too */
	if (!s->behind_t0[i]) {
		s->behind_bytes[i] = s->since_drain;
		s->behind_t0[i] = rpmem_now_ns();
	}
	s->behind_bytes[i] += len;
}

/* links_update_lags -- update_lag of every link */
static void links_update_lags(struct rpmemctl_links *s, uint64_t len)
{
	for (unsigned i = 0; i < s->n; i++)
		update_lag(s, i, len);
}

/* links_count_holding -- links that hold every write */
static unsigned links_count_holding(const struct rpmemctl_links *s)
{
	unsigned got = 0;
	for (unsigned i = 0; i < s->n; i++)
		got += links_holds(s->link[i]) != 0;
	return got;
}

/*
 * apply_kickout -- each link's kick-out bounds: the set's where a link
 * may be left behind (k < n), none where every link must hold
 */
static void apply_kickout(struct rpmemctl_links *s)
{
	for (unsigned i = 0; i < s->n; i++)
		client_link_set_kickout(s->link[i], links_quorum(s) < s->n ?
					s->ko_ms : 0, s->ko_bytes);
}

/*
 * links_kick_overdue -- drop the LIVE links past their kick-out bound while the
 * others that hold are k without them (docs/ARCHITECTURE.md "A frozen
 * target is kicked out"), the one whose reply has waited longest first
 * (a frozen target's, not that of one a loaded host kept briefly): each
 * goes DEGRADED, behind, and reconnects once a probe finds its target
 * answering
 */
static void links_kick_overdue(struct rpmemctl_links *s)
{
	while (links_count_holding(s) > links_quorum(s)) {
		uint64_t worst = 0, age;
		unsigned pick = 0;
		for (unsigned i = 0; i < s->n; i++)
			if ((age = client_link_overdue(s->link[i])) > worst) {
				worst = age;
				pick = i;
			}
		if (!worst)
			return;
		(void)client_link_kick(s->link[pick]);
	}
}

/*
 * links_clear_acked -- each LIVE link whose every write was acknowledged clears
 * its dirty log, at most once a LINKS_CLEAR_NS (a mark after a clear is
 * persisted again), and only with no rpmemctl_links_mark outstanding: a
 * mark cleared before its write was sent is made again by the write
 * (rpmemctl_links_write), but a crash between the two would lose it from
 * a log that keeps its clean mark (the replica API's)
 */
static void links_clear_acked(struct rpmemctl_links *s)
{
	uint64_t now = 0;
	if (s->marks_open)
		return;
	for (unsigned i = 0; i < s->n; i++) {
		if (rpmemctl_link_get_state(s->link[i]) != RPMEMCTL_LINK_LIVE)
			continue;
		now = now ? now : rpmem_now_ns();
		if (now < s->clear_next[i])
			continue;
		if (client_link_clear_acked(s->link[i]) >= 0)
			s->clear_next[i] = now + LINKS_CLEAR_NS;
	}
}

/* rpmemctl_links_new -- an empty set: k of its links hold a drain */
RPMEM_EXPORT int rpmemctl_links_new(unsigned k,
				    enum rpmemctl_link_policy policy,
				    struct rpmemctl_links **out)
{
	client_api_begin();
	if (!out || k > LINKS_MAX || (policy != RPMEMCTL_LINK_FAIL_STOP &&
				      policy != RPMEMCTL_LINK_DEGRADE)) {
		client_set_last(-EINVAL, "links: invalid argument");
		return -EINVAL;
	}
	struct rpmemctl_links *s = calloc(1, sizeof(*s));
	if (!s) {
		client_set_last(-ENOMEM, "out of memory");
		return -ENOMEM;
	}
	s->k = k;
	s->policy = policy;
	s->id = atomic_fetch_add(&next_id, 1);
	s->spin_ns = LINKS_SPIN_US * 1000u;
	s->ko_ms = RPMEMCTL_KICKOUT_MS_DEFAULT;
	pthread_mutex_init(&s->mu, NULL);
	*out = s;
	return 0;
}

/* rpmemctl_links_delete -- delete every link and the set */
RPMEM_EXPORT void rpmemctl_links_delete(struct rpmemctl_links **sp)
{
	if (!sp || !*sp)
		return;
	for (unsigned i = 0; i < (*sp)->n; i++)
		rpmemctl_link_delete(&(*sp)->link[i]);
	pthread_mutex_destroy(&(*sp)->mu);
	free(*sp);
	*sp = NULL;
}

/* rpmemctl_links_add -- the set owns link from now on */
RPMEM_EXPORT int rpmemctl_links_add(struct rpmemctl_links *s,
				    struct rpmemctl_link *link)
{
	client_api_begin();
	if (!s || !link || s->n >= LINKS_MAX) {
		client_set_last(-EINVAL, "links: invalid argument (at most "
				"%d links)", LINKS_MAX);
		return -EINVAL;
	}
	pthread_mutex_lock(&s->mu);
	s->link[s->n++] = link;
	apply_kickout(s);
	pthread_mutex_unlock(&s->mu);
	return 0;
}

/* rpmemctl_links_set_kickout -- the kick-out's bounds (ms 0: off) */
RPMEM_EXPORT int rpmemctl_links_set_kickout(struct rpmemctl_links *s,
					    unsigned ms, uint64_t bytes)
{
	client_api_begin();
	if (!s || ms > RPMEMCTL_KICKOUT_MS_MAX) {
		client_set_last(-EINVAL, "links: invalid argument (a kick-out "
				"timeout of 0 to %u ms)", RPMEMCTL_KICKOUT_MS_MAX);
		return -EINVAL;
	}
	pthread_mutex_lock(&s->mu);
	s->ko_ms = ms;
	s->ko_bytes = bytes;
	apply_kickout(s);
	pthread_mutex_unlock(&s->mu);
	return 0;
}

RPMEM_EXPORT unsigned rpmemctl_links_count(const struct rpmemctl_links *s)
{
	return s ? s->n : 0;
}

RPMEM_EXPORT unsigned rpmemctl_links_quorum(const struct rpmemctl_links *s)
{
	return s ? links_quorum(s) : 0;
}

RPMEM_EXPORT unsigned rpmemctl_links_holding(const struct rpmemctl_links *s)
{
	return s ? links_count_holding(s) : 0;
}

RPMEM_EXPORT struct rpmemctl_link *
rpmemctl_links_get(const struct rpmemctl_links *s, unsigned i)
{
	return s && i < s->n ? s->link[i] : NULL;
}

/* rpmemctl_links_set_status_file -- publish to path (NULL: stop) */
RPMEM_EXPORT int rpmemctl_links_set_status_file(struct rpmemctl_links *s,
						const char *path)
{
	client_api_begin();
	int ret = s ? links_status_set(&s->status, path) : -EINVAL;
	if (ret)
		client_set_last(ret, "links: invalid status file path");
	return ret;
}

/* rpmemctl_links_get_lag -- what link i missed while left behind */
RPMEM_EXPORT int rpmemctl_links_get_lag(const struct rpmemctl_links *s,
					unsigned i, uint64_t *bytes,
					uint64_t *ns)
{
	if (!s || i >= s->n)
		return -EINVAL;
	uint64_t t0 = s->behind_t0[i], now = rpmem_now_ns();
	if (bytes)
		*bytes = s->behind_bytes[i];
	if (ns)
		*ns = t0 && now > t0 ? now - t0 : 0;
	return 0;
}

RPMEM_EXPORT const char *rpmemctl_links_errmsg(const struct rpmemctl_links *s)
{
	return s ? s->errmsg : "no set of links";
}

/* rpmemctl_links_set_spin -- the reader's spin before it sleeps (us) */
RPMEM_EXPORT int rpmemctl_links_set_spin(struct rpmemctl_links *s,
					 unsigned us)
{
	client_api_begin();
	if (!s || us > RPMEMCTL_SPIN_MAX_US) {
		client_set_last(-EINVAL, "links: invalid argument (a spin of "
				"0 to %u us)", RPMEMCTL_SPIN_MAX_US);
		return -EINVAL;
	}
	pthread_mutex_lock(&s->mu);
	s->spin_ns = (uint64_t)us * 1000u;
	pthread_mutex_unlock(&s->mu);
	return 0;
}

/*
 * start_probes -- where k < n under the kick-out, a start does not wait
 * for a target that accepts connections but never answers (SIGSTOP, a
 * hung host): every DOWN link's target is probed at once, each in a
 * thread of its own (client_link_start_probe); once k answered, those
 * still silent after ko_ms more are dropped before their push
 * (client_link_defer: DEGRADED, behind, back when their probe answers),
 * as they are at once where k can no longer answer; with k = n, or
 * the kick-out off, the pushes wait as before
 */
static void start_probes(struct rpmemctl_links *s)
{
	unsigned k = links_quorum(s), n = 0;
	uint32_t mask = 0;
	if (!s->ko_ms || k >= s->n)
		return;
	for (unsigned i = 0; i < s->n; i++)
		if (!client_link_start_probe(s->link[i])) {
			mask |= 1u << i;
			n++;
		}
	uint64_t t0 = rpmem_now_ns(), tk = 0;
	uint64_t ko = (uint64_t)s->ko_ms * 1000000u;
	for (;;) {
		unsigned ok = s->n - n, running = 0;
		for (unsigned i = 0; i < s->n; i++) {
			if (!(mask & (1u << i)))
				continue;
			int st = client_link_start_probed(s->link[i], 0);
			ok += st > 0;
			running += st == 0;
		}
		uint64_t now = rpmem_now_ns();
		if (ok >= k && !tk)
			tk = now;
		if (!running || (tk && now - tk >= ko) || ok + running < k)
			break;
		poll(NULL, 0, 10);
	}
	for (unsigned i = 0; i < s->n; i++) {
		if (!(mask & (1u << i)))
			continue;
		if (!client_link_start_probed(s->link[i], 1))
			(void)client_link_defer(s->link[i],
						rpmem_now_ns() - t0);
	}
}

/* rpmemctl_links_push -- push every link; k must end SYNCED */
RPMEM_EXPORT int rpmemctl_links_push(struct rpmemctl_links *s)
{
	int ret = links_begin(s), err = 0;
	if (ret)
		return links_end(s, ret);
	start_probes(s);
	for (unsigned i = 0; i < s->n; i++) {
		if (rpmemctl_link_get_state(s->link[i]) ==
		    RPMEMCTL_LINK_DEGRADED && client_link_start_probed(
			    s->link[i], 0) == 0) {
			err = err ? err : -ETIMEDOUT;
			continue; /* deferred: its probe brings it back */
		}
		ret = rpmemctl_link_push(s->link[i], NULL, NULL);
		err = err ? err : ret;
	}
	links_update_lags(s, 0);
	return links_end(s, links_check_quorum(s, links_count_holding(s), err));
}

/*
 * rpmemctl_links_mark -- mark every link's dirty log; also in a FAILED
 * set: a mark must cover every local write, remote or not
 */
RPMEM_EXPORT int rpmemctl_links_mark(struct rpmemctl_links *s, uint64_t off,
				     uint64_t len)
{
	client_api_begin();
	if (!s)
		return links_end(s, -EINVAL);
	pthread_mutex_lock(&s->mu);
	s->errmsg[0] = '\0';
	int ret = 0;
	for (unsigned i = 0; !ret && i < s->n; i++)
		if ((ret = rpmemctl_link_mark(s->link[i], off, len)))
			links_err(s, ret, "%s: %s",
				  client_link_name(s->link[i]),
				  rpmemctl_link_errmsg(s->link[i]));
	/* its write is still to come: no log is cleared meanwhile */
	s->marks_open++;
	return links_end(s, ret);
}

/* rpmemctl_links_write -- send a range to every link */
RPMEM_EXPORT int rpmemctl_links_write(struct rpmemctl_links *s, uint64_t off,
				      uint64_t len)
{
	int ret = links_begin(s), err = 0;
	if (ret)
		return links_end(s, ret);
	links_kick_overdue(s);
	s->marks_open -= s->marks_open != 0;
	links_clear_acked(s);
	for (unsigned i = 0; i < s->n; i++) {
		/*
		 * marked again where a clear came between its mark and now
		 * (a lookup where it did not): every write a target may miss
		 * is in its log before it is sent (a link whose mark fails
		 * drops its log: its pushes compare everything)
		 */
		(void)rpmemctl_link_mark(s->link[i], off, len);
		ret = rpmemctl_link_write(s->link[i], off, len);
		if (ret == -EINVAL && links_holds(s->link[i]))
			return links_end(s, links_err(s, ret, "%s",
					rpmemctl_link_errmsg(s->link[i])));
		err = err ? err : ret;
	}
	/* a link left behind now missed len and what came since the drain */
	links_update_lags(s, len);
	s->since_drain += len;
	s->wseq++;
	links_last_write.set = s->id;
	links_last_write.seq = s->wseq;
	return links_end(s, links_check_quorum(s, links_count_holding(s), err));
}

/* rpmemctl_links_barrier -- order every link's writes, without waiting */
RPMEM_EXPORT int rpmemctl_links_barrier(struct rpmemctl_links *s)
{
	int ret = links_begin(s), err = 0;
	if (ret)
		return links_end(s, ret);
	for (unsigned i = 0; i < s->n; i++) {
		ret = rpmemctl_link_barrier(s->link[i]);
		err = err ? err : ret;
	}
	return links_end(s, links_check_quorum(s, links_count_holding(s), err));
}

/*
 * rounds_max -- rounds in flight at most: LINKS_ROUNDS, or 1 while a
 * link's data plane posts one flush at a time (a second round would wait
 * for the first under the mutex)
 */
static unsigned rounds_max(const struct rpmemctl_links *s)
{
	for (unsigned i = 0; i < s->n; i++)
		if (client_link_flush_serial(s->link[i]))
			return 1;
	return LINKS_ROUNDS;
}

/* inflight -- rounds sent whose replies are not all read */
static unsigned inflight(const struct rpmemctl_links *s)
{
	return (unsigned)(s->rsent - s->rdone);
}

/* due -- round r is expected to end within the spin (a recent round's time) */
static int due(const struct rpmemctl_links *s, const struct links_round *r)
{
	return r->t0 + s->rt_ns <= rpmem_now_ns() + s->spin_ns;
}

/* round_at -- round number n (of those in flight) */
static struct links_round *round_at(struct rpmemctl_links *s, uint64_t n)
{
	return &s->round[n % LINKS_ROUNDS];
}

/*
 * may_send -- a drain may send a round of its own now: fewer than
 * rounds_max in flight, and the oldest not about to end. Where it is
 * (loopback, a fast LAN: a round's time is within the reader's spin),
 * the drain waits for it and rides the round sent when it ends, with
 * every drain that came meanwhile: one round's system calls and wakes on
 * both ends for all of them. Over a slower link rounds are pipelined.
 */
static int may_send(struct rpmemctl_links *s)
{
	if (inflight(s) >= rounds_max(s))
		return 0;
	if (!inflight(s) || !s->spin_ns)
		return 1;
	/* due within the spin, and not late by more than it */
	const struct links_round *r = round_at(s, s->rdone);
	return !(due(s, r) && rpmem_now_ns() <= r->t0 + s->rt_ns + s->spin_ns);
}

/* done -- link i holds every write round r covers */
static int done(struct rpmemctl_links *s, const struct links_round *r,
		unsigned i)
{
	return links_holds(s->link[i]) &&
	       client_link_flushes_read(s->link[i]) >= r->sent[i];
}

/*
 * collect_ready -- read one reply from every link that has one ready
 * (buffered or on its socket); *err the first failure. Returns how many
 * links were read from.
 */
static unsigned collect_ready(struct rpmemctl_links *s, int *err)
{
	unsigned got = 0;
	for (unsigned i = 0; i < s->n; i++) {
		if (!client_link_ready(s->link[i]))
			continue;
		int ret = client_link_flush_recv(s->link[i]);
		*err = *err ? *err : ret;
		got++;
	}
	return got;
}

/*
 * spin -- poll pfd without sleeping, for up to ns, the CPU left to the
 * process's other threads between looks; what poll returned last
 */
static int spin(struct pollfd *pfd, nfds_t m, uint64_t ns)
{
	if (!ns)
		return 0;
	uint64_t end = rpmem_now_ns() + ns;
	int n;
	while (!(n = poll(pfd, m, 0)) && rpmem_now_ns() < end)
		sched_yield();
	return n;
}

/*
 * wait_any -- poll every link that owes a reply of round r, without the
 * set's mutex (other threads write meanwhile), at most LINKS_POLL_MS:
 * another call may read the reply first. Where r is due (sent a recent
 * round's time ago) within spin_ns (loopback, a fast LAN), it spins that
 * long first: a reply that comes meanwhile costs no sleep and wake-up,
 * on either end. 1 if one may be ready, 0 if none is owed or the socket
 * timeout passed since deadline's start.
 */
static int wait_any(struct rpmemctl_links *s, const struct links_round *r,
		    uint64_t deadline)
{
	struct pollfd pfd[LINKS_MAX];
	nfds_t m = 0;
	int ms = LINKS_POLL_MS;
	for (unsigned i = 0; i < s->n; i++) {
		int fd = client_link_wait_fd(s->link[i]);
		if (fd >= 0)
			pfd[m++] = (struct pollfd){ .fd = fd, .events = POLLIN };
		/*
		 * a completion channel's event may be taken by another
		 * thread's wait under the mutex (wait_edge): look again
		 * sooner
		 */
		if (fd >= 0 && client_link_wait_edge(s->link[i]))
			ms = LINKS_POLL_POSTED_MS;
	}
	if (!m)
		return 0;
	uint64_t spin_ns = due(s, r) ? s->spin_ns : 0;
	s->spins += spin_ns != 0;
	links_unlock(s);
	int n = spin(pfd, m, spin_ns);
	if (!n)
		n = poll(pfd, m, ms);
	pthread_mutex_lock(&s->mu);
	return n != 0 || rpmem_now_ns() < deadline;
}

/* first_owing -- the first link that owes a reply of r, NULL if none */
static struct rpmemctl_link *first_owing(struct rpmemctl_links *s,
					 const struct links_round *r)
{
	for (unsigned i = 0; i < s->n; i++)
		if (links_holds(s->link[i]) && !done(s, r, i) &&
		    client_link_owed(s->link[i]))
			return s->link[i];
	return NULL;
}

/*
 * round_send -- the next round in flight (there is room): FLUSH on every
 * link, covering every write sent so far; no reply awaited (the reader
 * reads them)
 */
static void round_send(struct rpmemctl_links *s)
{
	struct links_round *r = round_at(s, s->rsent);
	r->cover = s->wseq;
	r->t0 = rpmem_now_ns();
	r->err = 0;
	for (unsigned i = 0; i < s->n; i++) {
		int ret = client_link_flush_send(s->link[i]);
		if (ret < 0)
			r->err = r->err ? r->err : ret;
		/* none sent (it owes too many): the next one's reply */
		r->sent[i] = client_link_flushes_sent(s->link[i]) + (ret > 0);
	}
	s->rsent++;
}

/*
 * resend -- a FLUSH now on every link that holds and sent none for r
 * (client_link_flush_send deferred it): 1 if one was sent
 */
static int resend(struct rpmemctl_links *s, struct links_round *r)
{
	int any = 0;
	for (unsigned i = 0; i < s->n; i++) {
		struct rpmemctl_link *l = s->link[i];
		if (!links_holds(l) || done(s, r, i) || client_link_owed(l))
			continue;
		if (client_link_flush_send(l) != 0)
			continue;
		/* nothing pending: every write is covered by those sent */
		uint64_t n = client_link_flushes_sent(l);
		any |= n != r->sent[i];
		r->sent[i] = n;
	}
	return any;
}

/*
 * round_replies -- read replies as they come until k links hold every
 * write round r covers (a reply of a later round may be read on the way)
 */
static int round_replies(struct rpmemctl_links *s, struct links_round *r,
			 uint64_t deadline)
{
	int ret, err = r->err;
	for (;;) {
		unsigned got = 0;
		for (unsigned i = 0; i < s->n; i++)
			got += done(s, r, i) != 0;
		struct rpmemctl_link *l = first_owing(s, r);
		/* a link that sent no FLUSH for r (it owed too many): now */
		if (got < links_quorum(s) && !l && resend(s, r))
			continue;
		if (got >= links_quorum(s))
			links_kick_overdue(s);
		if (got >= links_quorum(s) || !l) {
			links_update_lags(s, 0);
			s->since_drain = 0;
			return links_check_quorum(s, got, err);
		}
		if (collect_ready(s, &err) || wait_any(s, r, deadline))
			continue;
		/* nothing came in the socket timeout: the read says why */
		ret = client_link_flush_recv(l);
		err = err ? err : ret;
	}
}

/* wake -- take w off the waiters, to be woken once the mutex is let go */
static void wake(struct rpmemctl_links *s, struct links_waiter **pp,
		 int done)
{
	struct links_waiter *w = *pp;
	*pp = w->next;
	w->done = done;
	w->next = s->woken;
	s->woken = w;
	s->wakes++;
}

uint64_t client_links_wakes(const struct rpmemctl_links *s)
{
	return s->wakes;
}

uint64_t client_links_spins(const struct rpmemctl_links *s)
{
	return s->spins;
}

/*
 * wake_ended -- a round ended: wake the drains it covered (done if their
 * writes are acknowledged, else to look again), all of them if the set
 * failed; the drains waiting for room ride a round sent for them now
 */
static void wake_ended(struct rpmemctl_links *s)
{
	struct links_waiter **pp = &s->waiters;
	int room = 0;
	while (*pp) {
		struct links_waiter *w = *pp;
		if (s->fail_err || (w->want && s->rdone >= w->want)) {
			wake(s, pp, !s->fail_err && s->acked >= w->my);
			continue;
		}
		room |= !w->want;
		pp = &w->next;
	}
	if (!room || inflight(s) >= rounds_max(s))
		return;
	round_send(s);
	for (struct links_waiter *w = s->waiters; w; w = w->next)
		if (!w->want)
			w->want = s->rsent;
}

/*
 * hand_off -- a drain returns: if no drain reads and rounds are in
 * flight, wake the waiter of the oldest (or one waiting for room) to
 * read them
 */
static void hand_off(struct rpmemctl_links *s)
{
	if (s->reading || !inflight(s) || !s->waiters)
		return;
	struct links_waiter **pick = &s->waiters;
	for (struct links_waiter **pp = &s->waiters; *pp; pp = &(*pp)->next)
		if ((*pp)->want && (!(*pick)->want ||
				    (*pp)->want < (*pick)->want))
			pick = pp;
	wake(s, pick, 0);
}

/*
 * wait_turn -- wait, without the mutex, until woken (wake_ended,
 * hand_off); 1 if woken done (the mutex not taken again), else 0 with
 * the mutex and *want (a round may have been sent for the thread)
 */
static int wait_turn(struct rpmemctl_links *s, uint64_t *want, uint64_t my)
{
	struct links_waiter *w = &links_me;
	if (!w->init) {
		sem_init(&w->sem, 0, 0);
		w->init = 1;
	}
	w->want = *want;
	w->my = my;
	w->done = 0;
	w->next = s->waiters;
	s->waiters = w;
	links_unlock(s);
	while (sem_wait(&w->sem) && errno == EINTR)
		;
	if (w->done)
		return 1;
	pthread_mutex_lock(&s->mu);
	*want = w->want;
	return 0;
}

/*
 * round_read -- the reader's part: the oldest round's replies read as
 * they come until k links hold every write it covers (the rest stay
 * owed); the round ended, the reader gone, its waiters woken
 */
/* links_holding_mask -- the links that hold every write, a bit each */
static uint32_t links_holding_mask(const struct rpmemctl_links *s)
{
	uint32_t m = 0;
	for (unsigned i = 0; i < s->n; i++)
		if (links_holds(s->link[i]))
			m |= 1u << i;
	return m;
}

/* history_file -- the file whose history the links keep, or NULL */
static const char *history_file(const struct rpmemctl_links *s)
{
	for (unsigned i = 0; i < s->n; i++)
		if (client_link_history(s->link[i]))
			return client_link_history(s->link[i]);
	return NULL;
}

/*
 * outdate_left -- before a round is acknowledged: if a link that held
 * since this last ran no longer does, the writes from now on are a
 * new generation: a new id in the file's history, then on the pool of
 * every link that holds (DRBD's new current UUID when a peer is lost).
 * The copy left behind lacks that id, so its history is behind theirs:
 * Outdated, never taken for the newest (docs/ARCHITECTURE.md, "Disk
 * states"). A link that fails to record it is left behind too (its
 * policy); one that comes back takes the id with its resync.
 */
static void outdate_left(struct rpmemctl_links *s, uint32_t now)
{
	uint32_t left = s->held & ~now;
	const char *file = history_file(s);
	struct rpmemctl_generations g;
	s->held = now;
	if (!left || !now || !file)
		return;
	client_history_lock();
	int ret = client_history_outdate(file, &g);
	client_history_unlock();
	if (ret) {
		client_log(NULL, LOG_ERR,
			   "cannot record a new generation id in '%s.rpmemgen' after a target was left behind: %s; that target's copy may pass for as new as the others'",
			   file, strerror(-ret));
		return;
	}
	for (unsigned i = 0; i < s->n; i++)
		if (now & (1u << i))
			(void)client_link_adopt(s->link[i], g.ids, g.count);
	s->held = links_holding_mask(s);
}

/*
 * fence_left -- before a round is acknowledged, with a fence-peer handler
 * configured (DRBD's fencing resource-only): every link that does not
 * hold, not fenced yet, is fenced (the handler waited for) so that its
 * copy, behind from now on, is never promoted; a link fenced before that
 * holds again is unfenced (not waited for), and so is every link that
 * holds at the first round (a writer before this one, crashed, may have
 * fenced it; the handler knows). A fence that fails fails the
 * set: no write is acknowledged past a copy that may still be promoted
 * (-ENOTRECOVERABLE, the handler named)
 */
static int fence_left(struct rpmemctl_links *s, uint32_t now)
{
	uint32_t all = s->n >= 32 ? ~0u : (1u << s->n) - 1;
	/* the first round: what an earlier writer fenced is not known */
	uint32_t todo = !s->fence_started ?
				all :
				(all & ~now & ~s->fenced) | (s->fenced & now);
	const char *file = history_file(s);
	s->fence_started = 1;
	if (!todo)
		return 0;
	if (!s->fence_looked) {
		client_fence_cmd(s->fence_cmd, sizeof(s->fence_cmd));
		s->fence_looked = 1;
	}
	if (!s->fence_cmd[0])
		return 0;
	for (unsigned i = 0; i < s->n; i++) {
		const char *name = client_link_name(s->link[i]);
		if (!(todo & (1u << i)))
			continue;
		if (now & (1u << i)) {
			s->fenced &= ~(1u << i);
			client_log(NULL, LOG_NOTICE, "unfence-peer: %s holds every write of '%s' again: handler '%s' started",
				   name, file ? file : "", s->fence_cmd);
			(void)client_fence_run(s->fence_cmd, "unfence",
					       file ? file : "", name);
			continue;
		}
		int st = client_fence_run(s->fence_cmd, "fence",
					  file ? file : "", name);
		if (st) {
			s->fail_err = -ENOTRECOVERABLE;
			return links_err(s, s->fail_err, "fence-peer: the handler '%s' could not fence %s (%s %d): no write of '%s' is acknowledged without that copy",
					 s->fence_cmd, name,
					 st < 0 ? "timed out or did not start" :
						  "exit status",
					 st, file ? file : "");
		}
		s->fenced |= 1u << i;
		client_log(NULL, LOG_NOTICE, "fence-peer: %s fenced by '%s' before writes of '%s' it lacks are acknowledged",
			   name, s->fence_cmd, file ? file : "");
	}
	return 0;
}

static int round_read(struct rpmemctl_links *s)
{
	uint64_t deadline = rpmem_now_ns() +
			    (uint64_t)CLIENT_IO_TIMEOUT_S * 1000000000u;
	struct links_round *r = round_at(s, s->rdone);
	s->reading = 1;
	int ret = round_replies(s, r, deadline);
	/* fenced also after a failed round: its drain returns all the same */
	uint32_t now = links_holding_mask(s);
	int fret = fence_left(s, now);
	if (fret)
		ret = fret;
	else if (!ret)
		outdate_left(s, now);
	if (!ret)
		ret = links_check_quorum(s, links_count_holding(s), 0);
	if (!ret && r->cover > s->acked)
		s->acked = r->cover;
	if (!ret) {
		uint64_t t = rpmem_now_ns() - r->t0;
		s->rt_ns = s->rt_ns ? (7 * s->rt_ns + t) / 8 : t;
	}
	s->rdone++;
	s->reading = 0;
	wake_ended(s);
	return ret;
}

/*
 * rpmemctl_links_fence -- what a round does before it is acknowledged,
 * for a writer that goes on without a round (no link holds): every link
 * that does not hold fenced, those that hold again unfenced (fence_left)
 */
RPMEM_EXPORT int rpmemctl_links_fence(struct rpmemctl_links *s)
{
	int ret = links_begin(s);
	if (!ret)
		ret = fence_left(s, links_holding_mask(s));
	return links_end(s, ret);
}

/* mine -- the thread's last write to s; every write if it wrote to another */
static uint64_t mine(const struct rpmemctl_links *s)
{
	return links_last_write.set == s->id ? links_last_write.seq : s->wseq;
}

/* covering -- 1 + the number of the first round in flight covering my, 0 */
static uint64_t covering(struct rpmemctl_links *s, uint64_t my)
{
	for (uint64_t n = s->rdone; n < s->rsent; n++)
		if (round_at(s, n)->cover >= my)
			return n + 1;
	return 0;
}

/* held -- no round is needed: the thread's writes are held by every link */
static int held(const struct rpmemctl_links *s, uint64_t my)
{
	return s->acked >= my && links_count_holding(s) == s->n;
}

/*
 * rpmemctl_links_drain -- every write of the thread so far held by k
 * links: the round in flight that covers them (another thread's, or the
 * one rpmemctl_links_drain_start sent), or a round of its own sent at
 * once; a thread that wrote to another set since counts every write. The
 * drain reads replies while no other does (each round's in turn), and
 * hands the reading on when it returns.
 */
RPMEM_EXPORT int rpmemctl_links_drain(struct rpmemctl_links *s)
{
	int ret = links_begin(s);
	if (ret)
		return links_end(s, ret);
	uint64_t my = mine(s);
	uint64_t want = 0; /* 1 + the number of the round awaited */
	for (;;) {
		if ((ret = links_usable(s)))
			break;
		/* a round (of this thread or another) covered its writes */
		if (held(s, my) || (want && s->rdone >= want &&
				    s->acked >= my))
			break;
		if (!want || s->rdone >= want) {
			want = covering(s, my);
			if (!want && may_send(s)) {
				round_send(s);
				want = s->rsent;
			}
		}
		/* a round is in flight: the reader's, or to read */
		if (s->reading) {
			if (wait_turn(s, &want, my))
				return 0;
			continue;
		}
		if ((ret = round_read(s)))
			break;
	}
	hand_off(s);
	return links_end(s, ret);
}

/*
 * rpmemctl_links_drain_start -- a drain's first half: unless a round in
 * flight covers the thread's writes or they are held, FLUSH on every
 * link, the replies left for the next drain to read
 */
RPMEM_EXPORT int rpmemctl_links_drain_start(struct rpmemctl_links *s)
{
	int ret = links_begin(s);
	if (ret)
		return links_end(s, ret);
	uint64_t my = mine(s);
	if (!held(s, my) && !covering(s, my) && inflight(s) < rounds_max(s))
		round_send(s);
	return links_end(s, 0);
}

/*
 * rpmemctl_links_stop -- retry each DEGRADED link once (a push at once),
 * then stop every link; k must end DOWN after a clean stop, else the
 * set's policy, the message naming each that did not and why
 */
RPMEM_EXPORT int rpmemctl_links_stop(struct rpmemctl_links *s)
{
	int ret = links_begin(s), err = 0;
	if (ret)
		return links_end(s, ret);
	unsigned got = 0;
	size_t o = 0;
	for (unsigned i = 0; i < s->n; i++) {
		struct rpmemctl_link *l = s->link[i];
		if (rpmemctl_link_get_state(l) == RPMEMCTL_LINK_DEGRADED)
			(void)client_link_retry_now(l);
		ret = rpmemctl_link_stop(l);
		if (!ret && rpmemctl_link_get_state(l) == RPMEMCTL_LINK_DOWN) {
			s->status.stopped_synced |= (uint16_t)(1u << i);
			got++;
			continue;
		}
		err = err ? err : ret;
		if (o < sizeof(s->errmsg))
			o += (size_t)snprintf(s->errmsg + o,
					      sizeof(s->errmsg) - o, "%s%s: %s",
					      o ? "; " : "",
					      client_link_name(l),
					      rpmemctl_link_errmsg(l)[0] ?
					      rpmemctl_link_errmsg(l) :
					      "left behind");
	}
	if (got >= links_quorum(s))
		s->errmsg[0] = '\0';
	if (got >= links_quorum(s) || s->policy == RPMEMCTL_LINK_DEGRADE)
		return links_end(s, 0);
	return links_end(s, err ? err : -EIO);
}
