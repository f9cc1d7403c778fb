/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * events.c -- the event stream: publishers fill each subscriber's bounded
 * queue without waiting; the subscriber's own session thread sends it
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "access.h"
#include "events.h"
#include "log.h"
#include "session_int.h"
#include "store.h"
#include "util.h"

/* one queued event: an encoded EVENT payload, or (p NULL) an overflow */
struct ev_item {
	uint8_t *p;
	uint32_t len;
	uint64_t lost; /* overflow: events dropped in this place */
};

/* one subscriber: its session and its queue */
struct rpmemd_sub {
	struct rpmemd_sub *next;
	struct rpmemd_session *s;
	int efd; /* eventfd: written when the queue gains an event */
	unsigned cap, head, n;
	struct ev_item *q;
	uint64_t lost_total;
};

struct rpmemd_events {
	pthread_mutex_t lock; /* the list and every queue; before set->lock */
	struct rpmemd_sub *head;
};

int rpmemd_events_new(struct rpmemd_events **out)
{
	struct rpmemd_events *ev = calloc(1, sizeof(*ev));
	int ret;

	if (!ev)
		return -ENOMEM;
	if ((ret = -pthread_mutex_init(&ev->lock, NULL))) {
		free(ev);
		return ret;
	}
	*out = ev;
	return 0;
}

void rpmemd_events_delete(struct rpmemd_events **pev)
{
	struct rpmemd_events *ev = pev ? *pev : NULL;

	if (!ev)
		return;
	pthread_mutex_destroy(&ev->lock);
	free(ev);
	*pev = NULL;
}

/* now_ms -- unix time in milliseconds */
static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* may_see -- subscriber sub may see e (of identity whose); set->lock held */
static int may_see(struct rpmemd_sessions *set, struct rpmemd_sub *sub,
		   const struct rpmem_msg_event *e, const char *whose)
{
	const char *id = sub->s->identity;

	if (!set->tls)
		return 1;
	switch (e->object) {
	case RPMEM_EVO_POOL:
	case RPMEM_EVO_TRANSFER:
		return rpmemd_access_allows(set->access, id, RPMEMD_RIGHT_READ,
					    e->region);
	case RPMEM_EVO_SESSION:
	case RPMEM_EVO_CONNECTION:
		if (whose && whose[0] && !strcmp(whose, id))
			return 1;
		return rpmemd_access_allows(set->access, id,
					    RPMEMD_RIGHT_ADMIN, NULL);
	default:
		return 1;
	}
}

/* wake -- tell sub's thread its queue has something */
static void wake(struct rpmemd_sub *sub)
{
	uint64_t one = 1;

	if (write(sub->efd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		WARN("event subscriber %u: wake-up: %s", sub->s->id,
		     strerror(errno));
}

/*
 * enqueue -- append the payload p[len] to sub's queue. The last free slot
 * takes an overflow item instead, which counts every event dropped while
 * the queue stays full: the subscriber learns where and how many.
 */
static void enqueue(struct rpmemd_sub *sub, const uint8_t *p, uint32_t len)
{
	struct ev_item *tail =
		sub->n ? &sub->q[(sub->head + sub->n - 1) % sub->cap] : NULL;

	if (sub->n == sub->cap) {
		tail->lost++; /* by construction the overflow item */
		sub->lost_total++;
		return;
	}
	struct ev_item *it = &sub->q[(sub->head + sub->n) % sub->cap];
	it->p = NULL;
	it->len = 0;
	it->lost = 0;
	if (sub->n + 1 < sub->cap)
		it->p = malloc(len);
	if (it->p) {
		memcpy(it->p, p, len);
		it->len = len;
	} else {
		it->lost = 1; /* the last slot, or out of memory */
		sub->lost_total++;
	}
	sub->n++;
	wake(sub);
}

void rpmemd_event_publish(struct rpmemd_sessions *set,
			  struct rpmem_msg_event *e, const char *whose)
{
	struct rpmemd_events *ev = set->events;
	uint8_t buf[2048];

	if (!ev)
		return;
	e->time_ms = now_ms();
	int len = rpmem_event_encode(buf, sizeof(buf), e);
	if (len < 0)
		return;
	pthread_mutex_lock(&ev->lock);
	if (ev->head) {
		pthread_mutex_lock(&set->lock);
		for (struct rpmemd_sub *sub = ev->head; sub; sub = sub->next)
			if (may_see(set, sub, e, whose))
				enqueue(sub, buf, (uint32_t)len);
		pthread_mutex_unlock(&set->lock);
	}
	pthread_mutex_unlock(&ev->lock);
}

void rpmemd_ev_session(struct rpmemd_session *s, uint8_t verb,
		       const char *why)
{
	struct rpmem_msg_event e = { .verb = verb,
				     .object = RPMEM_EVO_SESSION,
				     .session = s->id };

	rpmem_strlcpy(e.peer, s->peer, sizeof(e.peer));
	pthread_mutex_lock(&s->set->lock);
	rpmem_strlcpy(e.client, s->client, sizeof(e.client));
	pthread_mutex_unlock(&s->set->lock);
	rpmem_strlcpy(e.identity, s->identity, sizeof(e.identity));
	e.bytes = __atomic_load_n(&s->bytes_written, __ATOMIC_RELAXED);
	if (why)
		rpmem_strlcpy(e.text, why, sizeof(e.text));
	rpmemd_event_publish(s->set, &e, s->identity);
}

void rpmemd_ev_pool(struct rpmemd_session *s, uint8_t verb,
		    const char *region, const char *pool, uint8_t state,
		    uint64_t generation, uint64_t size)
{
	struct rpmem_msg_event e = { .verb = verb,
				     .object = RPMEM_EVO_POOL,
				     .session = s->id,
				     .state = state,
				     .generation = generation,
				     .size = size };

	rpmem_strlcpy(e.region, region, sizeof(e.region));
	rpmem_strlcpy(e.pool, pool, sizeof(e.pool));
	rpmem_strlcpy(e.identity, s->identity, sizeof(e.identity));
	rpmemd_event_publish(s->set, &e, s->identity);
}

void rpmemd_ev_transfer(struct rpmemd_session *s, struct rpmemd_handle *h,
			uint8_t verb, const char *why)
{
	struct rpmem_msg_event e = { .verb = verb,
				     .object = RPMEM_EVO_TRANSFER,
				     .session = s->id,
				     .size = h->pool->size,
				     .bytes = h->xfer_bytes };

	rpmem_strlcpy(e.region, h->pool->region->cfg.name, sizeof(e.region));
	rpmem_strlcpy(e.pool, h->pool->name, sizeof(e.pool));
	rpmem_strlcpy(e.peer, s->peer, sizeof(e.peer));
	rpmem_strlcpy(e.identity, s->identity, sizeof(e.identity));
	if (why)
		rpmem_strlcpy(e.text, why, sizeof(e.text));
	rpmemd_event_publish(s->set, &e, s->identity);
}

void __attribute__((format(printf, 5, 6)))
rpmemd_ev_refuse(struct rpmemd_sessions *set, struct rpmemd_session *s,
		 const char *peer, const char *limit, const char *fmt, ...)
{
	struct rpmem_msg_event e = { .verb = RPMEM_EV_REFUSE,
				     .object = RPMEM_EVO_CONNECTION };
	va_list ap;

	if (!set->events)
		return;
	va_start(ap, fmt);
	vsnprintf(e.text, sizeof(e.text), fmt, ap);
	va_end(ap);
	rpmem_strlcpy(e.limit, limit, sizeof(e.limit));
	if (s) {
		e.session = s->id;
		peer = s->peer;
		rpmem_strlcpy(e.identity, s->identity, sizeof(e.identity));
	}
	rpmem_strlcpy(e.peer, peer ? peer : "", sizeof(e.peer));
	rpmemd_event_publish(set, &e, s ? s->identity : NULL);
}

int rpmemd_events_subscribe(struct rpmemd_session *s, unsigned cap)
{
	struct rpmemd_events *ev = s->set->events;
	struct rpmemd_sub *sub;

	if (s->sub)
		return -EBUSY;
	if (!ev)
		return -ENOTSUP;
	if (cap < 2)
		cap = 2;
	sub = calloc(1, sizeof(*sub));
	if (!sub)
		return -ENOMEM;
	sub->q = calloc(cap, sizeof(*sub->q));
	sub->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (!sub->q || sub->efd < 0) {
		int ret = sub->q ? -errno : -ENOMEM;
		if (sub->efd >= 0)
			close(sub->efd);
		free(sub->q);
		free(sub);
		return ret;
	}
	sub->s = s;
	sub->cap = cap;
	pthread_mutex_lock(&ev->lock);
	sub->next = ev->head;
	ev->head = sub;
	pthread_mutex_unlock(&ev->lock);
	s->sub = sub;
	return 0;
}

/* unsubscribe -- take s off the list and drop its queue */
static void unsubscribe(struct rpmemd_session *s)
{
	struct rpmemd_events *ev = s->set->events;
	struct rpmemd_sub *sub = s->sub;

	if (!sub)
		return;
	pthread_mutex_lock(&ev->lock);
	for (struct rpmemd_sub **pp = &ev->head; *pp; pp = &(*pp)->next)
		if (*pp == sub) {
			*pp = sub->next;
			break;
		}
	pthread_mutex_unlock(&ev->lock);
	for (unsigned i = 0; i < sub->n; i++)
		free(sub->q[(sub->head + i) % sub->cap].p);
	if (sub->lost_total)
		NOTICE("session %u from %s: event subscriber lost %llu events (its queue of %u was full)",
		       s->id, s->peer, (unsigned long long)sub->lost_total,
		       sub->cap);
	close(sub->efd);
	free(sub->q);
	free(sub);
	s->sub = NULL;
}

/* send_event -- one EVENT frame */
static int send_event(struct rpmemd_session *s, uint32_t id,
		      const struct rpmem_msg_event *e)
{
	uint8_t buf[2048];
	int len = rpmem_event_encode(buf, sizeof(buf), e);

	if (len < 0)
		return len;
	return rpmem_send_frame(&s->conn, RPMEM_MSG_EVENT, id, buf,
				(size_t)len, NULL, 0);
}

/* may_read -- the subscriber may read region (plaintext: everyone) */
static int may_read(struct rpmemd_session *s, const char *region)
{
	return rpmemd_may(s, RPMEMD_RIGHT_READ, region);
}

/* send_now_pools -- an "exists pool" event per pool s may read */
static int send_now_pools(struct rpmemd_session *s, uint32_t id)
{
	struct rpmemd_region **v = NULL;
	struct rpmem_pool_info *pv = NULL;
	uint32_t np = 0;
	unsigned n = 0;
	int ret;

	if ((ret = rpmemd_regions_get_all(s->set->regions, &v, &n)))
		return ret;
	for (unsigned i = 0; i < n; i++)
		if (may_read(s, v[i]->cfg.name) &&
		    rpmemd_pool_list(v[i], &pv, &np))
			WARN("session %u: events: cannot list region '%s'",
			     s->id, v[i]->cfg.name);
	rpmemd_regions_put_all(&v, n);
	uint64_t t = now_ms();
	for (uint32_t i = 0; i < np && !ret; i++) {
		struct rpmem_msg_event e = { .verb = RPMEM_EV_EXISTS,
					     .object = RPMEM_EVO_POOL,
					     .time_ms = t,
					     .state = pv[i].state,
					     .generation = pv[i].generation,
					     .size = pv[i].size,
					     .bytes = pv[i].bytes_written };
		rpmem_strlcpy(e.region, pv[i].region, sizeof(e.region));
		rpmem_strlcpy(e.pool, pv[i].name, sizeof(e.pool));
		rpmem_strlcpy(e.client, pv[i].writer, sizeof(e.client));
		ret = send_event(s, id, &e);
	}
	free(pv);
	return ret;
}

/* send_now_sessions -- an "exists session" event per session s may see */
static int send_now_sessions(struct rpmemd_session *s, uint32_t id)
{
	struct rpmem_msg_status_reply rep = { 0 };
	int admin = rpmemd_may(s, RPMEMD_RIGHT_ADMIN, NULL);
	int ret = rpmemd_sessions_info(s->set, &rep,
				       admin ? NULL : s->identity);
	uint64_t t = now_ms();

	for (uint32_t i = 0; i < rep.nsessions && !ret; i++) {
		const struct rpmem_session_info *si = &rep.sessions[i];
		struct rpmem_msg_event e = { .verb = RPMEM_EV_EXISTS,
					     .object = RPMEM_EVO_SESSION,
					     .time_ms = t,
					     .session = si->id,
					     .bytes = si->bytes_written };
		rpmem_strlcpy(e.peer, si->peer, sizeof(e.peer));
		rpmem_strlcpy(e.client, si->client, sizeof(e.client));
		rpmem_strlcpy(e.identity, si->identity, sizeof(e.identity));
		ret = send_event(s, id, &e);
	}
	rpmem_status_reply_free(&rep);
	return ret;
}

/* take -- the oldest queued event, or 0 if there is none */
static int take(struct rpmemd_session *s, struct ev_item *it)
{
	struct rpmemd_sub *sub = s->sub;
	int got = 0;

	pthread_mutex_lock(&s->set->events->lock);
	if (sub->n) {
		*it = sub->q[sub->head];
		sub->head = (sub->head + 1) % sub->cap;
		sub->n--;
		got = 1;
	}
	pthread_mutex_unlock(&s->set->events->lock);
	return got;
}

/* send_item -- one queued event, or the overflow event in its place */
static int send_item(struct rpmemd_session *s, uint32_t id, struct ev_item *it)
{
	if (it->p) {
		int ret = rpmem_send_frame(&s->conn, RPMEM_MSG_EVENT, id, it->p,
					   it->len, NULL, 0);
		free(it->p);
		return ret;
	}
	struct rpmem_msg_event e = { .verb = RPMEM_EV_OVERFLOW,
				     .object = RPMEM_EVO_NONE,
				     .time_ms = now_ms(),
				     .lost = it->lost };
	snprintf(e.text, sizeof(e.text),
		 "%llu events lost: this subscriber did not keep up (event_queue = %u)",
		 (unsigned long long)it->lost, s->sub->cap);
	return send_event(s, id, &e);
}

/*
 * one_request -- the client sent something to a subscribed session: BYE
 * ends it (1), anything else is answered ERROR{PROTO} (0); -errno
 */
static int one_request(struct rpmemd_session *s)
{
	struct rpmem_hdr hd;
	int ret = conn_recv_request(s, &hd);

	rpmem_conn_set_deadline(&s->conn, 0);
	s->in_frame = 0;
	if (ret == 1)
		return 0;
	if (ret)
		return ret;
	if (hd.type == RPMEM_MSG_BYE)
		return 1;
	if (hd.type == RPMEM_MSG_WRITE &&
	    (ret = rpmem_net_discard(&s->conn, hd.len)))
		return ret;
	return conn_reply_err(s, hd.id, RPMEM_E_PROTO,
			      "%s on an event subscription: this session only takes BYE now",
			      rpmem_msg_type_str(hd.type));
}

int rpmemd_events_serve(struct rpmemd_session *s, uint32_t id,
			uint32_t flags)
{
	int ret = 0, sz = RPMEMD_EVENT_SNDBUF;
	struct ev_item it;

	/* a stalled subscriber fills its queue, not megabytes of kernel */
	setsockopt(s->conn.fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
	INFO("session %u from %s: subscribed to events%s", s->id, s->peer,
	     (flags & RPMEM_EVENTS_NOW) ? " (with the current state)" : "");
	if (flags & RPMEM_EVENTS_NOW) {
		struct rpmem_msg_event end = { .verb = RPMEM_EV_EXISTS,
					       .object = RPMEM_EVO_NONE };
		if (!(ret = send_now_pools(s, id)) &&
		    !(ret = send_now_sessions(s, id))) {
			end.time_ms = now_ms();
			ret = send_event(s, id, &end);
		}
	}
	while (!ret) {
		if (take(s, &it)) {
			ret = send_item(s, id, &it);
			continue;
		}
		struct pollfd p[3] = { { .fd = s->conn.fd, .events = POLLIN },
				       { .fd = s->sub->efd, .events = POLLIN },
				       { .fd = s->kick_fd, .events = POLLIN } };
		if (poll(p, 3, -1) < 0) {
			if (errno == EINTR)
				continue;
			ret = -errno;
			break;
		}
		if (p[2].revents) { /* kicked (TLS): the caller says so */
			ret = -ECONNABORTED;
			break;
		}
		if (p[1].revents) {
			uint64_t v;
			if (read(s->sub->efd, &v, sizeof(v)) < 0 &&
			    errno != EAGAIN)
				WARN("session %u: events: %s", s->id,
				     strerror(errno));
		}
		if (p[0].revents) {
			ret = one_request(s);
			if (ret == 1) {
				ret = 0;
				break;
			}
		}
	}
	if (ret == -EAGAIN || ret == -EWOULDBLOCK)
		NOTICE("session %u from %s: event subscriber read nothing for %d s; closing the session",
		       s->id, s->peer, RPMEMD_SEND_TIMEOUT);
	unsubscribe(s);
	return ret;
}

/* req_events -- EVENTS: subscribe, OK, then serve the subscription */
int req_events(struct rpmemd_session *s, const struct rpmem_hdr *hd,
	       int *over)
{
	struct rpmem_msg_events m;
	int ret, ok;

	*over = 0;
	if (rpmem_events_decode(s->req, hd->len, &m))
		return conn_bad_payload(s, hd);
	/* like LIST: any rule; each event is filtered by what it is about */
	ret = rpmemd_authz_check(s, hd->id, RPMEMD_RIGHT_READ, NULL, &ok);
	if (ret || !ok)
		return ret;
	ret = rpmemd_events_subscribe(s, s->lim.event_queue);
	if (ret)
		return conn_reply_err(s, hd->id, RPMEM_E_LIMIT,
				      "cannot subscribe to events: %s",
				      strerror(-ret));
	*over = 1;
	rpmem_conn_set_deadline(&s->conn, 0);
	ret = conn_reply_ok(s, hd->id);
	if (ret) {
		unsubscribe(s);
		return ret;
	}
	return rpmemd_events_serve(s, hd->id, m.flags);
}
