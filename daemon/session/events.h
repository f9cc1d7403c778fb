/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * events.h -- the daemon's event stream: what happens (sessions, pools,
 * state changes, transfers, refusals) published to the sessions that
 * subscribed with EVENTS, each through its own bounded queue
 */
#ifndef RPMEMD_EVENTS_H
#define RPMEMD_EVENTS_H

#include <stdint.h>

#include "proto.h"

struct rpmemd_session;
struct rpmemd_sessions;
struct rpmemd_handle;

#define RPMEMD_EVENT_QUEUE_DEFAULT 1024 /* limits.event_queue */
/* a subscriber's socket send buffer: the queue, not the kernel, absorbs */
#define RPMEMD_EVENT_SNDBUF (32 << 10)
/* room for one encoded EVENT payload */
#define RPMEMD_EVENT_FRAME_MAX 2048

/* one queued event: an encoded EVENT payload, or (p NULL) an overflow */
struct rpmemd_ev_item {
	uint8_t *p;
	uint32_t len;
	uint64_t lost; /* overflow: events dropped in this place */
};

/* the subscribers of one daemon */
struct rpmemd_events;

/* rpmemd_events_new -- no subscribers yet; fills *out */
int rpmemd_events_new(struct rpmemd_events **out);
/* rpmemd_events_delete -- every subscriber must have gone; NULL is fine */
void rpmemd_events_delete(struct rpmemd_events **ev);

/*
 * rpmemd_event_publish -- give e to every subscriber that may see it (a
 * pool or transfer: read on its region; a session or a refusal: admin,
 * or the subscriber's own identity `whose`). Never blocks on a
 * subscriber: one whose queue is full loses the event (counted, and
 * reported by an overflow event in its place). Must not be called with
 * the session set's lock held.
 */
void rpmemd_event_publish(struct rpmemd_sessions *set,
			  struct rpmem_msg_event *e, const char *whose);

/* rpmemd_ev_session -- session s was opened (CREATE) or closed (DESTROY) */
void rpmemd_ev_session(struct rpmemd_session *s, uint8_t verb,
		       const char *why);
/* rpmemd_ev_pool -- a pool was created, removed, or changed state */
void rpmemd_ev_pool(struct rpmemd_session *s, uint8_t verb,
		    const char *region, const char *pool, uint8_t state,
		    uint64_t generation, uint64_t size);
/*
 * rpmemd_ev_transfer -- the transfer into h began (its first WRITE after
 * SET_STATE syncing) or ended (consistent, or aborted: why)
 */
/*
 * rpmemd_ev_pool_text -- a pool's change with text: an action word and
 * "key:value" words after it (docs/JSON.md, "events"), as GEN makes them
 */
void rpmemd_ev_pool_text(struct rpmemd_session *s, const char *region,
			 const char *pool, uint8_t state, uint64_t generation,
			 uint64_t size, const char *text);
void rpmemd_ev_transfer(struct rpmemd_session *s, struct rpmemd_handle *h,
			uint8_t verb, const char *why);
/*
 * rpmemd_ev_refuse -- a connection or a request was refused at `limit`
 * (its configuration name); s may be NULL (refused at accept: peer)
 */
void rpmemd_ev_refuse(struct rpmemd_sessions *set, struct rpmemd_session *s,
		      const char *peer, const char *limit, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

/*
 * rpmemd_events_subscribe -- make s a subscriber with a queue of cap
 * events (events published from now on are queued); -ENOMEM, -EBUSY if
 * it is one already
 */
int rpmemd_events_subscribe(struct rpmemd_session *s, unsigned cap);

/* rpmemd_events_unsubscribe -- take s off the list and drop its queue */
void rpmemd_events_unsubscribe(struct rpmemd_session *s);
/* rpmemd_events_take -- subscriber s's oldest queued event, or 0 if none */
int rpmemd_events_take(struct rpmemd_session *s, struct rpmemd_ev_item *it);
/* rpmemd_events_fd -- readable (an eventfd) when s's queue gains an event */
int rpmemd_events_fd(const struct rpmemd_session *s);
/* rpmemd_events_cap -- the length of subscriber s's queue */
unsigned rpmemd_events_cap(const struct rpmemd_session *s);
/* rpmemd_events_now_ms -- unix time in milliseconds, as events carry it */
uint64_t rpmemd_events_now_ms(void);

/*
 * rpmemd_events_serve -- the session thread of subscriber s from here on:
 * with RPMEM_EVENTS_NOW in flags first the current pools and sessions as
 * "exists" events and the end marker, then every queued event as an EVENT
 * frame with request id `id`, until the client sends BYE (0) or goes away
 * (the read's -errno); other requests are answered ERROR{PROTO}. Ends the
 * subscription before it returns.
 */
int rpmemd_events_serve(struct rpmemd_session *s, uint32_t id,
			uint32_t flags);

#endif
