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

#include "links_int.h"
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

__thread struct links_last_write links_last_write;
static _Atomic uint64_t next_id = 1;

/* links_quorum -- how many links must hold a write */
unsigned links_quorum(const struct rpmemctl_links *s)
{
	return s->k && s->k < s->n ? s->k : s->n;
}

/* links_holds -- the link is up to date with every write sent to it */
int links_holds(const struct rpmemctl_link *l)
{
	enum rpmemctl_link_state st = rpmemctl_link_get_state(l);
	return st == RPMEMCTL_LINK_SYNCED || st == RPMEMCTL_LINK_LIVE;
}

/* links_err -- keep the reason of a failure in the set; returns err */
__attribute__((format(printf, 3, 4))) int
links_err(struct rpmemctl_links *s, int err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	client_vmsg(s->errmsg, sizeof(s->errmsg), fmt, ap);
	va_end(ap);
	return err;
}

/* links_usable -- 0, or the error of a call on a FAILED or empty set */
int links_usable(struct rpmemctl_links *s)
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
void links_unlock(struct rpmemctl_links *s)
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
int links_begin(struct rpmemctl_links *s)
{
	client_api_begin();
	if (!s)
		return -EINVAL;
	pthread_mutex_lock(&s->mu);
	s->errmsg[0] = '\0';
	return links_usable(s);
}

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

int links_end(struct rpmemctl_links *s, int ret)
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
int links_check_quorum(struct rpmemctl_links *s, unsigned got, int err)
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
void links_update_lags(struct rpmemctl_links *s, uint64_t len)
{
	for (unsigned i = 0; i < s->n; i++)
		update_lag(s, i, len);
}

/* links_count_holding -- links that hold every write */
unsigned links_count_holding(const struct rpmemctl_links *s)
{
	unsigned got = 0;
	for (unsigned i = 0; i < s->n; i++)
		got += links_holds(s->link[i]) != 0;
	return got;
}

/*
 * apply_kickout -- each link's kick-out bounds: the set's where a link
 * may be left behind (k < n), none where every link must hold; the
 * probe's and the resync's bound is the set's time for every k (a link
 * that failed is behind either way: its return runs off the calls)
 */
static void apply_kickout(struct rpmemctl_links *s)
{
	for (unsigned i = 0; i < s->n; i++)
		client_link_set_kickout(s->link[i], links_quorum(s) < s->n ?
					s->ko_ms : 0, s->ko_bytes, s->ko_ms);
}

/*
 * links_kick_overdue -- drop the LIVE links past their kick-out bound while the
 * others that hold are k without them (docs/ARCHITECTURE.md "A frozen
 * target is kicked out"), the one whose reply has waited longest first
 * (a frozen target's, not that of one a loaded host kept briefly): each
 * goes DEGRADED, behind, and reconnects once a probe finds its target
 * answering
 */
void links_kick_overdue(struct rpmemctl_links *s)
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

uint64_t client_links_clear_ns = LINKS_CLEAR_NS;

/*
 * links_clear_acked -- each LIVE link whose every write was acknowledged clears
 * its dirty log, at most once a LINKS_CLEAR_NS (client_links_clear_ns; a
 * mark after a clear is persisted again), and only with no
 * rpmemctl_links_mark outstanding: a mark cleared before its write was
 * sent is made again by the write (rpmemctl_links_write), but a crash
 * between the two would lose it from a log that keeps its clean mark (the
 * replica API's)
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
			s->clear_next[i] = now + client_links_clear_ns;
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
