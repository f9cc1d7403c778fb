/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * links_drain.c -- a set's drain: rounds of flushes on every link in
 * flight, one reader at a time, the waiters woken as their rounds end
 * (the design: links.c)
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <string.h>
#include <syslog.h>

#include "links_int.h"
#include "util.h"

/* the calling thread's waiting drain */
static __thread struct links_waiter links_me;

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
 * read them; with none in flight, those waiting for room (for a
 * lingering drain's round that it did not send) go on on their own
 */
static void hand_off(struct rpmemctl_links *s)
{
	if (s->reading || !s->waiters)
		return;
	if (!inflight(s)) {
		for (struct links_waiter **pp = &s->waiters; *pp;)
			if (!(*pp)->want)
				wake(s, pp, 0);
			else
				pp = &(*pp)->next;
		return;
	}
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

/* links_holding_mask -- the links that hold every write, a bit each */
uint32_t links_holding_mask(const struct rpmemctl_links *s)
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

/*
 * round_read -- the reader's part: the oldest round's replies read as
 * they come until k links hold every write it covers (the rest stay
 * owed); the round ended, the reader gone, its waiters woken
 */
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

/* peers -- the last drain was another thread's; this one is the last now */
static int peers(struct rpmemctl_links *s)
{
	int other = s->last && s->last != &links_me;
	s->last = &links_me;
	return other;
}

/* yield -- sched_yield, without its result */
static void yield(void)
{
	(void)sched_yield();
}

void (*client_links_linger)(void) = yield;

/*
 * linger -- before a drain sends a round where other threads drain too
 * (the last drain was another's): the threads ready to run on its CPU
 * come to their drains first and wait for that round (as for room), so
 * that one round's system calls and wakes on both ends serve them all
 */
static void linger(struct rpmemctl_links *s)
{
	s->lingering = 1;
	links_unlock(s);
	client_links_linger();
	pthread_mutex_lock(&s->mu);
	s->lingering = 0;
}

unsigned client_links_waiting(struct rpmemctl_links *s)
{
	unsigned n = 0;
	pthread_mutex_lock(&s->mu);
	for (struct links_waiter *w = s->waiters; w; w = w->next)
		n++;
	pthread_mutex_unlock(&s->mu);
	return n;
}

/* ride -- the drains waiting for room ride the round just sent */
static void ride(struct rpmemctl_links *s)
{
	for (struct links_waiter *w = s->waiters; w; w = w->next)
		if (!w->want)
			w->want = s->rsent;
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
	int lingered = !peers(s); /* alone: no linger */
	for (;;) {
		if ((ret = links_usable(s)))
			break;
		/* a round (of this thread or another) covered its writes */
		if (held(s, my) || (want && s->rdone >= want &&
				    s->acked >= my))
			break;
		if (!want || s->rdone >= want) {
			want = covering(s, my);
			if (!want && s->lingering) {
				/* the lingering drain's round will cover it */
				if (wait_turn(s, &want, my))
					return 0;
				continue;
			}
			if (!want && may_send(s) && !lingered) {
				linger(s);
				lingered = 1;
				continue;
			}
			if (!want && may_send(s)) {
				round_send(s);
				want = s->rsent;
				ride(s);
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
