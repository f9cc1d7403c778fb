/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * link_flush.c -- a link's owed flushes: posted by the data plane and
 * collected in order, the kick-out's clocks, and a set's drain in two
 * halves (links.c)
 */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>

#include "link_int.h"
#include "util.h"

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
int link_settle(struct rpmemctl_link *l)
{
	int ret = 0;
	while (l->nowed && !ret) {
		if (l->ko_ms && (ret = await_owed(l)))
			break;
		ret = owed_recv(l);
	}
	return ret;
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
int link_flush_pending(struct rpmemctl_link *l)
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
 * log_clear -- the dirty log's clear, under the link's lock: in full
 * where every write sent was acknowledged; else in steps, for a target
 * always owed a reply under a stream of writes (a set's drain returns
 * once k hold): a cut is made where no write waits for a flush (every
 * write so far is covered by one sent), and once the replies of the
 * flushes sent by then are read, the marks made before it are cleared
 * and a new cut made. 1 if marks were cleared, 0 if none, -EAGAIN if
 * no cut can be made now (writes wait for a flush), or -errno.
 */
static int log_clear(struct rpmemctl_link *l)
{
	int ret;
	if (!l->nowed && !l->npending && !l->unacked) {
		ret = client_dirtylog_clear(l->log);
		if (ret >= 0 && l->cut) {
			/* closed: every bit is clear, no second msync */
			l->cut = 0;
			(void)client_dirtylog_clear_cut(l->log, 0);
		}
		return ret;
	}
	int can_cut = !l->npending && !l->unacked;
	if (l->cut && l->nread >= l->cut_need) {
		ret = client_dirtylog_clear_cut(l->log, can_cut);
		l->cut = ret >= 0 && can_cut;
		l->cut_need = l->nsent;
		return ret;
	}
	if (l->cut)
		return 0;
	if (!can_cut)
		return -EAGAIN;
	if ((ret = client_dirtylog_cut(l->log)))
		return ret;
	l->cut = 1;
	l->cut_need = l->nsent;
	return 0;
}

/*
 * client_link_clear_acked -- a LIVE link clears from its dirty log the
 * marks of the writes its target acknowledged: what the log marks is
 * then what this target may miss (docs/ARCHITECTURE.md "Per-target
 * dirty logs"); the set calls it with no mark outstanding
 */
int client_link_clear_acked(struct rpmemctl_link *l)
{
	if (!l->log || l->state != RPMEMCTL_LINK_LIVE)
		return 0;
	link_lock(l);
	int err = 0, ret = 0;
	while (l->nowed && ready(l) && !(err = owed_recv(l)))
		;
	if (!err && l->state == RPMEMCTL_LINK_LIVE && l->log)
		ret = log_clear(l);
	if (ret < 0 && ret != -EAGAIN) {
		/* what it holds on disk is unknown: no push may trust it */
		l->log = NULL;
		l->cut = 0;
		link_err(l, ret, "cannot clear the dirty log: %s",
			 strerror(-ret));
	}
	client_share_unlock(l->share);
	return ret;
}

/*
 * client_link_set_kickout -- the kick-out's bounds (ms 0: off), and the
 * probe's and the resync's (probe_ms 0: a reconnect pushes in the call)
 */
void client_link_set_kickout(struct rpmemctl_link *l, unsigned ms,
			     uint64_t bytes, unsigned probe_ms)
{
	l->ko_ms = ms;
	l->ko_bytes = bytes;
	l->probe_ms = probe_ms;
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
