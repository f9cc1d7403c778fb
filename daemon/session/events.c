/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * events.c -- the event bus: publishers fill each subscriber's bounded
 * queue without waiting; the subscriber's own session thread takes from
 * it (req_events.c sends it)
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "access.h"
#include "events.h"
#include "log.h"
#include "session_int.h"
#include "store.h"
#include "util.h"

/* one subscriber: its session and its queue */
struct rpmemd_sub {
	struct rpmemd_sub *next;
	struct rpmemd_session *s;
	int efd; /* eventfd: written when the queue gains an event */
	unsigned cap, head, n;
	struct rpmemd_ev_item *q;
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

uint64_t rpmemd_events_now_ms(void)
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
	struct rpmemd_ev_item *tail =
		sub->n ? &sub->q[(sub->head + sub->n - 1) % sub->cap] : NULL;

	if (sub->n == sub->cap) {
		tail->lost++; /* by construction the overflow item */
		sub->lost_total++;
		return;
	}
	struct rpmemd_ev_item *it = &sub->q[(sub->head + sub->n) % sub->cap];
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
	uint8_t buf[RPMEMD_EVENT_FRAME_MAX];

	if (!ev)
		return;
	e->time_ms = rpmemd_events_now_ms();
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

void rpmemd_ev_pool_text(struct rpmemd_session *s, const char *region,
			 const char *pool, uint8_t state, uint64_t generation,
			 uint64_t size, const char *text)
{
	struct rpmem_msg_event e = { .verb = RPMEM_EV_CHANGE,
				     .object = RPMEM_EVO_POOL,
				     .session = s->id,
				     .state = state,
				     .generation = generation,
				     .size = size };

	rpmem_strlcpy(e.region, region, sizeof(e.region));
	rpmem_strlcpy(e.pool, pool, sizeof(e.pool));
	rpmem_strlcpy(e.identity, s->identity, sizeof(e.identity));
	rpmem_strlcpy(e.peer, s->peer, sizeof(e.peer));
	rpmem_strlcpy(e.text, text, sizeof(e.text));
	rpmemd_event_publish(s->set, &e, s->identity);
}

void rpmemd_ev_transfer(struct rpmemd_session *s, struct rpmemd_handle *h,
			uint8_t verb, const char *why)
{
	struct rpmem_msg_event e = { .verb = verb,
				     .object = RPMEM_EVO_TRANSFER,
				     .session = s->id,
				     .size = rpmemd_pool_size(h->pool),
				     .bytes = h->xfer_bytes };

	rpmem_strlcpy(e.region, rpmemd_pool_region(h->pool)->cfg.name,
		      sizeof(e.region));
	rpmem_strlcpy(e.pool, rpmemd_pool_name(h->pool), sizeof(e.pool));
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

void rpmemd_events_unsubscribe(struct rpmemd_session *s)
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

int rpmemd_events_take(struct rpmemd_session *s, struct rpmemd_ev_item *it)
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

int rpmemd_events_fd(const struct rpmemd_session *s)
{
	return s->sub->efd;
}

unsigned rpmemd_events_cap(const struct rpmemd_session *s)
{
	return s->sub->cap;
}
