/* SPDX-License-Identifier: BSD-3-Clause */
/* events.c -- a session subscribed to the target's event stream */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "client_session.h"
#include "util.h"

#define CLIENT_EVENTS_RCVBUF (32 << 10)

/* a subscription: its session, its request id, the last event read */
struct rpmemctl_events {
	struct rpmemctl_session *s;
	uint32_t id;
	struct rpmem_msg_event ev;
};

/* the public event is the decoded message */
struct rpmemctl_event {
	struct rpmem_msg_event m;
};

/* rpmemctl_events_subscribe -- EVENTS, then OK: sess is a subscription */
RPMEM_EXPORT int rpmemctl_events_subscribe(struct rpmemctl_session *sess,
					   unsigned flags,
					   struct rpmemctl_events **out)
{
	struct rpmem_msg_events m = { .flags = flags };
	struct rpmemctl_events *ev;
	struct rpmem_hdr h;
	uint8_t buf[RPMEM_REQ_SMALL];
	uint32_t id;
	int ret, len;

	if (!sess || !out || (flags & ~RPMEMCTL_EVENTS_NOW))
		return -EINVAL;
	client_sess_begin(sess);
	if (!(sess->caps & RPMEM_CAP_EVENTS)) {
		client_seterr(sess, "%s:%s (%s) has no event stream: it is older than this client",
			      sess->host, sess->port, sess->server);
		return client_sess_end(sess, -ENOTSUP, "subscribing to events");
	}
	ev = calloc(1, sizeof(*ev));
	if (!ev)
		return client_sess_end(sess, -ENOMEM, "subscribing to events");
	/*
	 * an event stream is a trickle: a small receive buffer lets the
	 * target's bounded queue, not megabytes of kernel buffers, absorb a
	 * subscriber that stalls (the target reports what it had to drop)
	 */
	int sz = CLIENT_EVENTS_RCVBUF;
	setsockopt(sess->conn.fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	len = rpmem_events_encode(buf, sizeof(buf), &m);
	ret = len < 0 ? len :
			client_send(sess, RPMEM_MSG_EVENTS, buf, (size_t)len,
				    NULL, 0, &id);
	if (!ret)
		ret = client_recv_hdr(sess, id, RPMEM_MSG_OK, &h);
	if (!ret && h.len)
		ret = client_bad_reply(sess, RPMEM_MSG_OK);
	if (ret) {
		free(ev);
		return client_sess_end(sess, ret, "subscribing to events");
	}
	ev->s = sess;
	ev->id = id;
	sess->subscribed = 1;
	*out = ev;
	return client_sess_end(sess, 0, "subscribing to events");
}

/*
 * first_byte -- wait up to timeout_ms (< 0: the session's own bound) for
 * the first byte of the next frame: 0, -ETIMEDOUT (nothing consumed) or
 * the failure
 */
static int first_byte(struct rpmemctl_session *s, int timeout_ms, uint8_t *b)
{
	if (timeout_ms >= 0)
		rpmem_conn_set_deadline(&s->conn, rpmem_now_ns() +
						  (uint64_t)timeout_ms * 1000000);
	else
		rpmem_conn_set_rcvtimeo(&s->conn, 0);
	int ret = rpmem_net_read_full(&s->conn, b, 1);
	rpmem_conn_set_deadline(&s->conn, 0);
	rpmem_conn_set_rcvtimeo(&s->conn, s->timeout_s * 1000);
	return ret;
}

/* recv_event -- the rest of a frame whose first byte is b */
static int recv_event(struct rpmemctl_events *ev, uint8_t b)
{
	struct rpmemctl_session *s = ev->s;
	uint8_t raw[RPMEM_HDR_SIZE];
	struct rpmem_hdr h;
	int ret;

	raw[0] = b;
	if ((ret = rpmem_net_read_full(&s->conn, raw + 1, sizeof(raw) - 1)))
		return client_lost(s, ret, "receiving an event");
	if (rpmem_hdr_decode(raw, &h)) {
		client_seterr(s, "invalid frame header from %s:%s", s->host,
			      s->port);
		return client_lost(s, -EPROTO, "receiving an event");
	}
	if ((ret = client_recv_payload(s, &h)))
		return ret;
	if (h.type == RPMEM_MSG_ERROR) {
		struct rpmem_msg_error e;
		if (rpmem_error_decode(s->rbuf, h.len, &e))
			return client_bad_reply(s, RPMEM_MSG_ERROR);
		client_seterr(s, "%s", e.msg[0] ? e.msg : rpmem_err_str(e.code));
		ret = rpmem_errno_from_err(e.code);
		s->lost = ret < 0 ? ret : -EREMOTEIO;
		return s->lost;
	}
	if (h.type != RPMEM_MSG_EVENT || h.id != ev->id) {
		client_seterr(s, "unexpected %s with id %u from %s:%s on an event subscription",
			      rpmem_msg_type_str(h.type), h.id, s->host, s->port);
		return client_lost(s, -EPROTO, "receiving an event");
	}
	if (rpmem_event_decode(s->rbuf, h.len, &ev->ev))
		return client_bad_reply(s, RPMEM_MSG_EVENT);
	return 0;
}

RPMEM_EXPORT int rpmemctl_events_next(struct rpmemctl_events *ev,
				      int timeout_ms,
				      const struct rpmemctl_event **out)
{
	uint8_t b;

	if (!ev || !out)
		return -EINVAL;
	struct rpmemctl_session *s = ev->s;
	client_sess_begin(s);
	if (s->lost)
		return client_sess_end(s, s->lost, "waiting for an event");
	int ret = first_byte(s, timeout_ms, &b);
	if (ret == -ETIMEDOUT && timeout_ms >= 0) {
		client_seterr(s, "no event within %d ms", timeout_ms);
		return client_sess_end(s, -ETIMEDOUT, "waiting for an event");
	}
	if (ret)
		ret = client_lost(s, ret, "waiting for an event");
	else
		ret = recv_event(ev, b);
	if (!ret)
		*out = (const struct rpmemctl_event *)&ev->ev;
	return client_sess_end(s, ret, "waiting for an event");
}

RPMEM_EXPORT void rpmemctl_events_delete(struct rpmemctl_events **ev)
{
	if (!ev || !*ev)
		return;
	free(*ev);
	*ev = NULL;
}

#define M(e) (&((const struct rpmemctl_event *)(e))->m)

RPMEM_EXPORT enum rpmemctl_event_type
rpmemctl_event_type(const struct rpmemctl_event *e)
{
	return (enum rpmemctl_event_type)M(e)->verb;
}

RPMEM_EXPORT enum rpmemctl_event_object
rpmemctl_event_object(const struct rpmemctl_event *e)
{
	return (enum rpmemctl_event_object)M(e)->object;
}

RPMEM_EXPORT const char *rpmemctl_event_type_str(enum rpmemctl_event_type t)
{
	return rpmem_event_verb_str((uint8_t)t);
}

RPMEM_EXPORT const char *
rpmemctl_event_object_str(enum rpmemctl_event_object o)
{
	return rpmem_event_object_str((uint8_t)o);
}

RPMEM_EXPORT uint64_t rpmemctl_event_time_ms(const struct rpmemctl_event *e)
{
	return M(e)->time_ms;
}

RPMEM_EXPORT uint32_t
rpmemctl_event_session_id(const struct rpmemctl_event *e)
{
	return M(e)->session;
}

RPMEM_EXPORT const char *rpmemctl_event_region(const struct rpmemctl_event *e)
{
	return M(e)->region;
}

RPMEM_EXPORT const char *rpmemctl_event_pool(const struct rpmemctl_event *e)
{
	return M(e)->pool;
}

RPMEM_EXPORT enum rpmemctl_pool_state
rpmemctl_event_state(const struct rpmemctl_event *e)
{
	return (enum rpmemctl_pool_state)M(e)->state;
}

RPMEM_EXPORT uint64_t
rpmemctl_event_generation(const struct rpmemctl_event *e)
{
	return M(e)->generation;
}

RPMEM_EXPORT uint64_t rpmemctl_event_size(const struct rpmemctl_event *e)
{
	return M(e)->size;
}

RPMEM_EXPORT uint64_t rpmemctl_event_bytes(const struct rpmemctl_event *e)
{
	return M(e)->bytes;
}

RPMEM_EXPORT uint64_t rpmemctl_event_lost(const struct rpmemctl_event *e)
{
	return M(e)->lost;
}

RPMEM_EXPORT const char *rpmemctl_event_peer(const struct rpmemctl_event *e)
{
	return M(e)->peer;
}

RPMEM_EXPORT const char *rpmemctl_event_client(const struct rpmemctl_event *e)
{
	return M(e)->client;
}

RPMEM_EXPORT const char *
rpmemctl_event_identity(const struct rpmemctl_event *e)
{
	return M(e)->identity;
}

RPMEM_EXPORT const char *rpmemctl_event_limit(const struct rpmemctl_event *e)
{
	return M(e)->limit;
}

RPMEM_EXPORT const char *rpmemctl_event_text(const struct rpmemctl_event *e)
{
	return M(e)->text;
}
