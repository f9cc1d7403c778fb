/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * channel.c -- the framed request/reply channel of a session's control
 * socket: send a request, match its reply by id, turn ERROR into -errno,
 * mark the connection lost for good. Everything that talks to rpmemd
 * (session.c, pool.c, tcp_initiator.c) goes through here; this file calls
 * nothing of theirs.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "client_session.h"
#include "log.h"
#include "net.h"
#include "util.h"

/* what was under way when a connection was lost: "waiting for BARRIER" */
#define CHANNEL_WHAT_MAX 64

void client_seterr(struct rpmemctl_session *s, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	client_vmsg(s->errmsg, sizeof(s->errmsg), fmt, ap);
	va_end(ap);
	s->err_pool = NULL;
}

int client_check(struct rpmemctl_session *s)
{
	if (s->lost)
		return -ECONNRESET;
	if (s->subscribed) {
		client_seterr(s, "the session to %s:%s is an event subscription: it takes no other request",
			      s->host, s->port);
		return -EBUSY;
	}
	return 0;
}

/*
 * take_unsolicited -- an ERROR with request id 0 (the target closing the
 * session: a limit, a timeout, a kick, a shutdown) is the next frame and
 * here in full: consume it, keep its message and return its code as
 * -errno; else 0, nothing consumed. Never blocks; plaintext only (a TLS
 * record cannot be peeked at).
 */
static int take_unsolicited(struct rpmemctl_session *s)
{
	uint8_t buf[RPMEM_HDR_SIZE + RPMEM_MSG_MAX + 8];
	struct rpmem_msg_error m;
	struct rpmem_hdr h;

	if (s->conn.tls)
		return 0;
	ssize_t n = recv(s->conn.fd, buf, sizeof(buf), MSG_PEEK | MSG_DONTWAIT);
	if (n < RPMEM_HDR_SIZE || rpmem_hdr_decode(buf, &h) ||
	    h.type != RPMEM_MSG_ERROR || h.id != 0 ||
	    h.len > (size_t)n - RPMEM_HDR_SIZE ||
	    rpmem_error_decode(buf + RPMEM_HDR_SIZE, h.len, &m))
		return 0;
	n = recv(s->conn.fd, buf, RPMEM_HDR_SIZE + h.len, MSG_DONTWAIT);
	(void)n;
	client_seterr(s, "%s", m.msg[0] ? m.msg : rpmem_err_str(m.code));
	int ret = rpmem_errno_from_err(m.code);
	return ret < 0 ? ret : -EREMOTEIO;
}

int client_lost(struct rpmemctl_session *s, int err, const char *what)
{
	if (s->lost)
		return -ECONNRESET;
	if (err == -EPIPE || err == -ECONNABORTED || err == -ENOTCONN ||
	    err == -ECONNRESET) {
		/* the target may have said why before it closed */
		int why = take_unsolicited(s);
		if (why) {
			s->lost = why;
			shutdown(s->conn.fd, SHUT_RDWR);
			return why;
		}
	}
	if (err == -EPIPE || err == -ECONNABORTED || err == -ENOTCONN)
		err = -ECONNRESET;
	if (err == -ECONNRESET)
		client_seterr(s, "connection to %s:%s lost while %s", s->host,
			      s->port, what);
	else if (err == -ETIMEDOUT)
		client_seterr(s, "no reply from %s:%s within %d s while %s",
			      s->host, s->port, s->timeout_s, what);
	else if (err == -ECOMM) {
		client_seterr(s, "connection to %s:%s broken while %s: TLS failure (%s): a record was corrupted or tampered with on the way",
			      s->host, s->port, what,
			      rpmem_tls_error(s->conn.tls));
		err = -ECONNRESET;
	} else if (err != -EPROTO)
		client_seterr(s, "connection to %s:%s failed while %s: %s",
			      s->host, s->port, what, strerror(-err));
	/* -EPROTO: the caller has described the bad message already */
	s->lost = err;
	/* stop the stream for good: nothing after this can be trusted */
	shutdown(s->conn.fd, SHUT_RDWR);
	return err;
}

int client_local_fault(struct rpmemctl_session *s, int err, const char *what)
{
	if (err == -EHWPOISON)
		client_seterr(s, "a media error (poisoned memory) in the local copy while %s",
			      what);
	else
		client_seterr(s, "the local copy changed while %s: part of it is no longer backed by its file (it shrank)",
			      what);
	s->lost = err;
	shutdown(s->conn.fd, SHUT_RDWR);
	return err;
}

int client_bad_reply(struct rpmemctl_session *s, uint16_t type)
{
	client_seterr(s, "malformed %s reply from %s:%s",
		      rpmem_msg_type_str(type), s->host, s->port);
	return client_lost(s, -EPROTO, "decoding a reply");
}

#define CLIENT_HOLD_BYTES (64u << 10) /* payload copies held at most */
#define CLIENT_HOLD_ONE 4096	       /* a frame held: this long at most */

/*
 * hold -- keep a frame that awaits no reply (c->more set by its sender)
 * for the next send, its payload copied as it is now: a range of the
 * local copy is sent as of its flush; 1 if held
 */
static int hold(struct rpmemctl_session *s, const struct rpmem_frame *f)
{
	size_t l = f->l1 + f->l2;
	if (!s->conn.more || l > CLIENT_HOLD_ONE ||
	    s->nheld + 1 >= RPMEM_SEND_FRAMES_MAX ||
	    s->hused + l > CLIENT_HOLD_BYTES)
		return 0;
	if (!s->hbuf && !(s->hbuf = malloc(CLIENT_HOLD_BYTES)))
		return 0;
	uint8_t *d = s->hbuf + s->hused;
	memcpy(d, f->p1, f->l1);
	if (f->l2)
		memcpy(d + f->l1, f->p2, f->l2);
	s->held[s->nheld++] = (struct rpmem_frame){ f->type, f->id, d, l,
						    NULL, 0 };
	s->hused += l;
	return 1;
}

/*
 * send_with_held -- the held frames, then f[0, n), in one gathered send
 * where they fit together (else the held ones first, corked)
 */
static int send_with_held(struct rpmemctl_session *s,
			  const struct rpmem_frame *f, size_t n)
{
	int ret = 0;
	if (s->nheld && s->nheld + n > RPMEM_SEND_FRAMES_MAX) {
		int more = s->conn.more;
		s->conn.more = 1;
		ret = rpmem_send_frames(&s->conn, s->held, s->nheld);
		s->conn.more = more;
		s->nheld = 0;
	}
	if (!ret && s->nheld) {
		memcpy(&s->held[s->nheld], f, n * sizeof(*f));
		ret = rpmem_send_frames(&s->conn, s->held, s->nheld + n);
	} else if (!ret) {
		ret = rpmem_send_frames(&s->conn, f, n);
	}
	s->nheld = 0;
	s->hused = 0;
	return ret;
}

/* client_send_held -- send the held frames now, if any */
int client_send_held(struct rpmemctl_session *s)
{
	if (!s->nheld || s->lost)
		return 0;
	int ret = send_with_held(s, NULL, 0);
	return ret ? client_lost(s, ret, "sending held frames") : 0;
}

/* next_id -- the id of the next request */
static uint32_t next_id(struct rpmemctl_session *s)
{
	uint32_t rid = s->next_id++;
	if (s->next_id == 0)
		s->next_id = 1;
	return rid;
}

int client_send(struct rpmemctl_session *s, uint16_t type, const void *p1,
		size_t l1, const void *p2, size_t l2, uint32_t *id)
{
	int ret = client_check(s);
	if (ret)
		return ret;
	struct rpmem_frame f = { type, next_id(s), p1, l1, p2, l2 };
	if (!hold(s, &f))
		ret = send_with_held(s, &f, 1);
	if (ret) {
		char what[CHANNEL_WHAT_MAX];
		snprintf(what, sizeof(what), "sending %s",
			 rpmem_msg_type_str(type));
		return client_lost(s, ret, what);
	}
	if (id)
		*id = f.id;
	return 0;
}

int client_send_frames(struct rpmemctl_session *s, struct rpmem_frame *f,
		       size_t n)
{
	int ret = client_check(s);
	if (ret)
		return ret;
	for (size_t i = 0; i < n; i++)
		f[i].id = next_id(s);
	ret = send_with_held(s, f, n);
	if (ret) {
		char what[CHANNEL_WHAT_MAX];
		snprintf(what, sizeof(what), "sending %s",
			 rpmem_msg_type_str(f[0].type));
		return client_lost(s, ret, what);
	}
	return 0;
}

/* recv_error -- consume an ERROR payload; message into buf, -errno back */
static int recv_error(struct rpmemctl_session *s, const struct rpmem_hdr *h,
		      char *buf, size_t len)
{
	int ret = rpmem_net_read_full(&s->conn, s->rbuf, h->len);
	if (ret)
		return client_lost(s, ret, "receiving an ERROR reply");
	struct rpmem_msg_error m;
	if (rpmem_error_decode(s->rbuf, h->len, &m))
		return client_bad_reply(s, RPMEM_MSG_ERROR);
	snprintf(buf, len, "%s", m.msg[0] ? m.msg : rpmem_err_str(m.code));
	ret = rpmem_errno_from_err(m.code);
	return ret < 0 ? ret : -EREMOTEIO;
}

/* older -- request id a was sent before b (ids wrap) */
static int older(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) < 0;
}

int client_owe(struct rpmemctl_session *s, uint32_t id)
{
	if (s->nowed == s->owed_cap) {
		unsigned cap = s->owed_cap ? s->owed_cap * 2 : 32;
		struct client_owed *o = realloc(s->owed, cap * sizeof(*o));
		if (!o) {
			client_seterr(s, "out of memory");
			return -ENOMEM;
		}
		s->owed = o;
		s->owed_cap = cap;
	}
	s->owed[s->nowed++] = (struct client_owed){ .id = id };
	return 0;
}

/* owed_find -- the owed reply of request id, or NULL */
static struct client_owed *owed_find(const struct rpmemctl_session *s,
				     uint32_t id)
{
	for (unsigned i = 0; i < s->nowed; i++)
		if (s->owed[i].id == id)
			return &s->owed[i];
	return NULL;
}

/* owed_drop -- forget o */
static void owed_drop(struct rpmemctl_session *s, struct client_owed *o)
{
	free(o->msg);
	*o = s->owed[--s->nowed];
}

int client_owed_take(struct rpmemctl_session *s, uint32_t id, int *err)
{
	struct client_owed *o = owed_find(s, id);
	if (!o || o->state != CLIENT_OWED_ARRIVED)
		return 0;
	*err = o->err;
	if (o->err) {
		client_seterr(s, "%s", o->msg ? o->msg : rpmem_err_str(0));
		s->err_pool = NULL; /* the target's words */
	}
	owed_drop(s, o);
	return 1;
}

int client_owed_arrived(const struct rpmemctl_session *s, uint32_t id)
{
	const struct client_owed *o = owed_find(s, id);
	return o && o->state == CLIENT_OWED_ARRIVED;
}

void client_owed_done(struct rpmemctl_session *s, uint32_t id)
{
	struct client_owed *o = owed_find(s, id);
	if (o)
		owed_drop(s, o);
}

void client_owed_orphan(struct rpmemctl_session *s, uint32_t id)
{
	struct client_owed *o = owed_find(s, id);
	if (o && o->state == CLIENT_OWED_ARRIVED)
		owed_drop(s, o);
	else if (o)
		o->state = CLIENT_OWED_ORPHAN;
}

void client_owed_free(struct rpmemctl_session *s)
{
	while (s->nowed)
		owed_drop(s, &s->owed[0]);
	free(s->owed);
	s->owed = NULL;
	s->owed_cap = 0;
}

/*
 * shared_error -- an ERROR for a FLUSH (or another request answered by
 * OK) on a session several links share: the target reports a failed
 * WRITE at the session's next FLUSH or SET_STATE, whichever pool that is
 * for, so which link lost data is not known. The session is given up:
 * every link on it fails, and each reconnects and pushes (link.c).
 */
static int shared_error(struct rpmemctl_session *s, int err, const char *msg)
{
	client_seterr(s, "%s (on a session shared by several pools: each "
		      "reconnects)", msg);
	s->err_pool = NULL;
	s->lost = err;
	shutdown(s->conn.fd, SHUT_RDWR);
	return err;
}

/*
 * owed_arrive -- the reply h of an owed request, read while awaiting
 * another's: kept for its owner (an OK carries nothing; an ERROR its
 * message), or dropped if it has none any more
 */
static int owed_arrive(struct rpmemctl_session *s, struct client_owed *o,
		       const struct rpmem_hdr *h)
{
	int err = 0;
	char msg[RPMEM_MSG_MAX + 1] = "";
	if (h->type == RPMEM_MSG_ERROR) {
		err = recv_error(s, h, msg, sizeof(msg));
		if (s->lost)
			return err;
		if (s->users > 1)
			return shared_error(s, err, msg);
	} else if (h->type != RPMEM_MSG_OK || h->len) {
		return client_bad_reply(s, h->type);
	}
	if (o->state == CLIENT_OWED_ORPHAN) {
		owed_drop(s, o);
		return 0;
	}
	o->state = CLIENT_OWED_ARRIVED;
	o->err = err;
	o->msg = err ? strdup(msg) : NULL;
	return 0;
}

int client_recv_hdr(struct rpmemctl_session *s, uint32_t id, uint16_t type,
		    struct rpmem_hdr *h)
{
	int ret = client_check(s);
	if (ret)
		return ret;
	for (;;) {
		ret = rpmem_recv_hdr(&s->conn, h);
		if (ret == -EBADMSG || ret == -ENOTSUP || ret == -EMSGSIZE) {
			client_seterr(s, "invalid frame header from %s:%s (%s)",
				      s->host, s->port, strerror(-ret));
			return client_lost(s, -EPROTO, "receiving a reply");
		}
		if (ret) {
			char what[CHANNEL_WHAT_MAX];
			snprintf(what, sizeof(what), "waiting for %s",
				 rpmem_msg_type_str(type));
			return client_lost(s, ret, what);
		}
		if (h->type == RPMEM_MSG_ERROR && h->id == 0) {
			/* unsolicited: the target ends the session, says why */
			char msg[RPMEM_MSG_MAX + 1];
			ret = recv_error(s, h, msg, sizeof(msg));
			if (s->lost)
				return ret;
			client_seterr(s, "%s", msg);
			s->lost = ret;
			shutdown(s->conn.fd, SHUT_RDWR);
			return ret;
		}
		struct client_owed *o = h->id != id && older(h->id, id) ?
						owed_find(s, h->id) : NULL;
		if (o) {
			/* another call's, or one of this caller's for later */
			ret = owed_arrive(s, o, h);
			if (ret)
				return ret;
			continue;
		}
		if (h->type == RPMEM_MSG_ERROR && h->id != id &&
		    older(h->id, id)) {
			/* a request with no reply (WRITE) failed: keep it */
			ret = recv_error(s, h, s->pending_msg,
					 sizeof(s->pending_msg));
			if (s->lost)
				return ret;
			if (s->users > 1)
				return shared_error(s, ret, s->pending_msg);
			if (!s->pending_err)
				s->pending_err = ret;
			continue;
		}
		break;
	}
	if (h->id != id) {
		client_seterr(s,
			      "unexpected %s reply with id %u from %s:%s "
			      "(awaiting %s for request %u)",
			      rpmem_msg_type_str(h->type), h->id, s->host,
			      s->port, rpmem_msg_type_str(type), id);
		return client_lost(s, -EPROTO, "receiving a reply");
	}
	if (h->type == RPMEM_MSG_ERROR) {
		ret = recv_error(s, h, s->errmsg, sizeof(s->errmsg));
		if (s->lost)
			return ret;
		s->err_pool = NULL; /* the target's words */
		s->pending_err = 0;
		if (s->users > 1 && type == RPMEM_MSG_OK) {
			char msg[CLIENT_ERRMSG_MAX];
			snprintf(msg, sizeof(msg), "%s", s->errmsg);
			return shared_error(s, ret, msg);
		}
		return ret;
	}
	if (h->type != type) {
		client_seterr(s, "unexpected %s reply from %s:%s (expected %s)",
			      rpmem_msg_type_str(h->type), s->host, s->port,
			      rpmem_msg_type_str(type));
		return client_lost(s, -EPROTO, "receiving a reply");
	}
	if (s->pending_err) {
		/* report the earlier failure; keep the stream in step */
		ret = rpmem_net_discard(&s->conn, h->len);
		if (ret)
			return client_lost(s, ret, "receiving a reply");
		ret = s->pending_err;
		s->pending_err = 0;
		client_seterr(s, "%s", s->pending_msg);
		return ret;
	}
	return 0;
}

int client_recv_payload(struct rpmemctl_session *s, const struct rpmem_hdr *h)
{
	/* h->len <= RPMEM_MAX_PAYLOAD, checked by rpmem_hdr_decode */
	int ret = rpmem_net_read_full(&s->conn, s->rbuf, h->len);
	if (ret) {
		char what[CHANNEL_WHAT_MAX];
		snprintf(what, sizeof(what), "receiving %s",
			 rpmem_msg_type_str(h->type));
		return client_lost(s, ret, what);
	}
	return 0;
}

int client_recv(struct rpmemctl_session *s, uint32_t id, uint16_t type,
		size_t *len)
{
	struct rpmem_hdr h;
	int ret = client_recv_hdr(s, id, type, &h);
	if (ret)
		return ret;
	ret = client_recv_payload(s, &h);
	if (ret)
		return ret;
	if (len)
		*len = h.len;
	return 0;
}

int client_call(struct rpmemctl_session *s, uint16_t type, const void *req,
		size_t req_len, uint16_t reply, size_t *len)
{
	uint32_t id = 0;
	int ret = client_send(s, type, req, req_len, NULL, 0, &id);
	if (ret)
		return ret;
	return client_recv(s, id, reply, len);
}

/* client_set_timeout -- bound every send and receive on the control socket */
int client_set_timeout(struct rpmemctl_session *s, int secs)
{
	struct timeval tv = { .tv_sec = secs };
	if (setsockopt(s->conn.fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) ||
	    setsockopt(s->conn.fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)))
		return -errno;
	s->timeout_s = secs;
	return 0;
}
