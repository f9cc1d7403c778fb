/* SPDX-License-Identifier: BSD-3-Clause */
/* handshake.c -- HELLO: a common version, a free session slot, HELLO_OK */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "events.h"
#include "log.h"
#include "net.h"
#include "session_int.h"
#include "util.h"

/* sessions refused in the handshake, at a peer's will: a few a second */
static struct rpmem_log_limit log_refused =
	RPMEM_LOG_LIMIT_INIT("refused sessions", 5);

/*
 * refuse_session -- answer the HELLO that rpmemd_sessions_admit refused
 * (ret, the limit in *why) with the reason; returns the session's end
 */
static int refuse_session(struct rpmemd_session *s, uint32_t id, int ret,
			  const struct rpmemd_refusal *why)
{
	char msg[RPMEM_MSG_MAX + 1];
	uint32_t code = RPMEM_E_LIMIT;

	if (ret == -EACCES) {
		code = RPMEM_E_DENIED;
		snprintf(msg, sizeof(msg),
			 "identity '%s' has no access rules on this target; closing the connection",
			 s->identity);
	} else if (!strcmp(why->limit, "admin_reserved_sessions")) {
		snprintf(msg, sizeof(msg),
			 "too many sessions: the last %u of max_sessions = %u are reserved for administrators (admin_reserved_sessions); retry later",
			 why->value, why->max_sessions);
	} else if (!strcmp(why->limit, "max_sessions_per_identity")) {
		snprintf(msg, sizeof(msg),
			 "identity '%s' has %u sessions already (max_sessions_per_identity = %u); retry later",
			 s->identity, why->value, why->value);
	} else {
		snprintf(msg, sizeof(msg),
			 "too many sessions (max_sessions = %u); retry later",
			 why->value);
	}
	rpmem_log_limited(&log_refused, LOG_NOTICE,
			  "connection %u from %s (identity '%s'): session refused: %s",
			  s->id, s->peer, s->identity, msg);
	rpmemd_ev_refuse(s->set, s, NULL, why->limit, "%s", msg);
	conn_reply_err(s, id, code, "%s", msg);
	return ret == -EACCES ? -EACCES : -EUSERS;
}

/*
 * rpmemd_handshake -- HELLO with a common version, no authentication, a free
 * session slot; replies HELLO_OK. Returns 0 or -errno (session ends).
 */
int rpmemd_handshake(struct rpmemd_session *s)
{
	struct rpmemd_sessions *set = s->set;
	struct rpmem_msg_hello m;
	struct rpmem_hdr hd;
	uint8_t buf[SMALL_REPLY];
	struct rpmemd_refusal why;
	int ret, len;

	ret = conn_recv_request(s, &hd);
	if (ret == 1)
		return -EPROTO;
	if (ret)
		return ret;
	if (hd.type != RPMEM_MSG_HELLO) {
		conn_reply_err(s, hd.id, RPMEM_E_PROTO,
			       "expected HELLO, got %s; closing the connection",
			       rpmem_msg_type_str(hd.type));
		return -EPROTO;
	}
	if (rpmem_hello_decode(s->req, hd.len, &m)) {
		conn_bad_payload(s, &hd);
		return -EPROTO;
	}
	if (m.ver_min > RPMEM_PROTO_VERSION ||
	    m.ver_max < RPMEM_PROTO_VERSION) {
		conn_reply_err(s, hd.id, RPMEM_E_VERSION,
			       "no common protocol version: the client speaks %u..%u, this target %u",
			       m.ver_min, m.ver_max, RPMEM_PROTO_VERSION);
		return -EPROTONOSUPPORT;
	}
	if (m.auth_method != 0) {
		conn_reply_err(s, hd.id, RPMEM_E_AUTH,
			       "authentication method %u is not supported by this target",
			       m.auth_method);
		return -EACCES;
	}
	rpmem_str_sanitize(m.client);
	ret = rpmemd_sessions_admit(set, s, m.client, &why);
	if (ret == -ECONNRESET) /* evicted, expired: the worker says so */
		return ret;
	if (ret == -ESHUTDOWN) {
		conn_reply_err(s, hd.id, RPMEM_E_SHUTDOWN,
			       "the target is shutting down");
		return -EUSERS;
	}
	if (ret)
		return refuse_session(s, hd.id, ret, &why);
	if (m.client[0])
		snprintf(s->holder, sizeof(s->holder), "session %u from %s (%.160s)",
			 s->id, s->peer, m.client);
	else
		snprintf(s->holder, sizeof(s->holder), "session %u from %s",
			 s->id, s->peer);

	struct rpmem_msg_hello_ok rep = { .version = RPMEM_PROTO_VERSION,
					  .session_id = s->id,
					  /* RDMA per session, below */
					  .caps = (set->caps &
						   ~RPMEM_CAP_RDMA) |
						  rpmemd_sessions_apm_cap(set) };
	if (s->rdma)
		rep.caps |= RPMEM_CAP_RDMA;
	rpmem_strlcpy(rep.server, set->server, sizeof(rep.server));
	len = rpmem_hello_ok_encode(buf, sizeof(buf), &rep);
	if (len < 0)
		return len;
	INFO("session %u from %s (%s) opened", s->id, s->peer,
	     m.client[0] ? m.client : "unnamed client");
	rpmemd_ev_session(s, RPMEM_EV_CREATE, NULL);
	return rpmem_send_frame(&s->conn, RPMEM_MSG_HELLO_OK, hd.id, buf,
				(size_t)len, NULL, 0);
}
