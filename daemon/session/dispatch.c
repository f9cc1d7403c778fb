/* SPDX-License-Identifier: BSD-3-Clause */
/* dispatch.c -- the request loop of an established session */
#include <errno.h>

#include "events.h"
#include "log.h"
#include "session_int.h"
#include "sock.h"
#include "util.h"

static struct rpmem_log_limit log_timeouts =
	RPMEM_LOG_LIMIT_INIT("session timeouts", 5);

/* what a session holds open: RPMEM_OPEN_RW, RPMEM_OPEN_RO, or -1 none */
static int holds_mode(const struct rpmemd_session *s)
{
	int mode = -1;

	for (unsigned i = 0; i < RPMEMD_MAX_HANDLES; i++)
		if (s->h[i].id && (mode < 0 || s->h[i].mode == RPMEM_OPEN_RW))
			mode = s->h[i].mode;
	return mode;
}

/*
 * idle_deadline -- when the wait for the next request ends: with no pool
 * open, session_idle_timeout after the last request (a session is not
 * kept for free); while a pool is open for writing over TCP,
 * writer_idle_timeout; while pools are open only for reading over TCP,
 * reader_idle_timeout (an idle reader does not keep its versions' files
 * and a pool's removal waiting). (Over RDMA the data path bypasses this
 * socket, with APM even this CPU: an RDMA writer or reader is not timed
 * out.)
 */
static uint64_t idle_deadline(struct rpmemd_session *s)
{
	int mode = holds_mode(s);
	unsigned t = mode < 0		      ? s->lim.session_idle_timeout :
		     mode == RPMEM_OPEN_RW ? s->lim.writer_idle_timeout :
					     s->lim.reader_idle_timeout;

	for (unsigned i = 0; i < RPMEMD_MAX_HANDLES && t; i++)
		if (s->h[i].id && s->h[i].xport == RPMEM_XPORT_RDMA &&
		    (mode == RPMEM_OPEN_RO || s->h[i].mode == RPMEM_OPEN_RW))
			return 0;
	return t ? s->last_active_ns + t * 1000000000ull : 0;
}

/* idle_timed_out -- tell why an idle session ends: what it held open */
static void idle_timed_out(struct rpmemd_session *s)
{
	const char *lim = "writer_idle_timeout", *what = "a pool open for writing",
		   *tail = " and released its pools";
	unsigned t = s->lim.writer_idle_timeout;
	int mode = holds_mode(s);

	if (mode < 0) {
		lim = "session_idle_timeout";
		what = "no pool open";
		tail = "";
		t = s->lim.session_idle_timeout;
	} else if (mode == RPMEM_OPEN_RO) {
		lim = "reader_idle_timeout";
		what = "pools open only for reading";
		t = s->lim.reader_idle_timeout;
	}
	rpmemd_ev_refuse(s->set, s, NULL, lim, "no request for %u s with %s",
			 t, what);
	rpmem_log_limited(&log_timeouts, LOG_NOTICE,
			  "session %u from %s: no request for %u s with %s (%s); closing the session",
			  s->id, s->peer, t, what, lim);
	conn_reply_err(s, 0, RPMEM_E_LIMIT,
		       "no request for %u s with %s (%s); the target closed the session%s",
		       t, what, lim, tail);
}

/*
 * recv_timed_out -- a read timed out: mid-frame (frame_timeout) or
 * waiting for a request (idle_deadline); tell the client with an
 * unsolicited ERROR and end the session
 */
static int recv_timed_out(struct rpmemd_session *s)
{
	if (!s->in_frame) {
		idle_timed_out(s);
		return -ETIMEDOUT;
	}
	rpmemd_ev_refuse(s->set, s, NULL, "frame_timeout",
			 "a request frame did not arrive in full within %u s",
			 s->lim.frame_timeout);
	rpmem_log_limited(&log_timeouts, LOG_NOTICE,
			  "session %u from %s: a frame did not arrive within frame_timeout = %u s; closing the session",
			  s->id, s->peer, s->lim.frame_timeout);
	conn_reply_err(s, 0, RPMEM_E_LIMIT,
		       "a request frame did not arrive in full within %u s (frame_timeout); the target closed the session",
		       s->lim.frame_timeout);
	return -ETIMEDOUT;
}

/*
 * recv_failed -- a read failed with ret (or a wait was woken): if an
 * administrator kicked the session, tell the client so (-ECONNABORTED); if
 * the daemon is stopping, end it (-ESHUTDOWN); over TLS with a
 * close_notify either way. Else returns ret.
 */
static int recv_failed(struct rpmemd_session *s, int ret)
{
	char by[RPMEM_STR_MAX + 1];

	if (rpmemd_sessions_fate(s->set, s, by, sizeof(by)) == SESSION_KICKED) {
		conn_reply_err(s, 0, RPMEM_E_SHUTDOWN,
			       "session %u ended by an administrator (%s)",
			       s->id, by);
		rpmem_conn_close_notify(&s->conn);
		return -ECONNABORTED;
	}
	if (__atomic_load_n(&s->set->stopping, __ATOMIC_RELAXED)) {
		rpmem_conn_close_notify(&s->conn); /* as plaintext: closed */
		return -ESHUTDOWN;
	}
	if (ret == -ETIMEDOUT)
		return recv_timed_out(s);
	return ret;
}

/*
 * rpmemd_serve -- the request loop after the handshake. Returns 0 after BYE,
 * -ECONNRESET when the client went away (-ENOTCONN: over TLS, without
 * closing the session), -ESHUTDOWN when the daemon
 * stops, or another -errno.
 */
int rpmemd_serve(struct rpmemd_session *s)
{
	struct rpmem_hdr hd = { 0 };

	s->last_active_ns = rpmem_now_ns();
	s->trim = 1; /* the handshake's TLS buffers */
	for (;;) {
		uint64_t deadline = idle_deadline(s);
		uint64_t trim_at = conn_trim_at(s);
		int trim_first = trim_at && (!deadline || trim_at < deadline);
		rpmem_conn_set_deadline(&s->conn,
					trim_first ? trim_at : deadline);
		int ret = conn_idle(s, deadline);
		if (ret)
			return recv_failed(s, ret);
		ret = conn_recv_request(s, &hd);
		if (ret == -ETIMEDOUT && trim_first && !s->in_frame) {
			/* idle for RPMEMD_IDLE_MS: trim, wait on */
			conn_trim(s);
			continue;
		}
		if (ret == 1)
			goto done;
		if (ret)
			return recv_failed(s, ret);
		switch (hd.type) {
		case RPMEM_MSG_WRITE:
			ret = req_write(s, &hd);
			break;
		case RPMEM_MSG_READ:
			ret = req_read(s, &hd);
			break;
		case RPMEM_MSG_FLUSH:
			ret = req_flush(s, &hd);
			break;
		case RPMEM_MSG_BARRIER:
			ret = req_barrier(s, &hd);
			break;
		case RPMEM_MSG_HASH:
			ret = req_hash(s, &hd);
			break;
		case RPMEM_MSG_HASHV:
			ret = req_hashv(s, &hd);
			break;
		case RPMEM_MSG_PRESERVE:
			ret = req_preserve(s, &hd);
			break;
		case RPMEM_MSG_LIST:
			ret = req_list(s, &hd);
			break;
		case RPMEM_MSG_CREATE:
			ret = req_create(s, &hd);
			break;
		case RPMEM_MSG_REMOVE:
			ret = req_remove(s, &hd);
			break;
		case RPMEM_MSG_OPEN:
			ret = req_open(s, &hd);
			break;
		case RPMEM_MSG_CLOSE:
			ret = req_close(s, &hd);
			break;
		case RPMEM_MSG_SET_STATE:
			ret = req_set_state(s, &hd);
			break;
		case RPMEM_MSG_STATUS:
			ret = req_status(s, &hd);
			break;
		case RPMEM_MSG_KICK:
			ret = req_kick(s, &hd);
			break;
		case RPMEM_MSG_SCRUB:
			ret = req_scrub(s, &hd);
			break;
		case RPMEM_MSG_REPAIR:
			ret = req_repair(s, &hd);
			break;
		case RPMEM_MSG_REPAIR_AT:
			ret = req_repair_at(s, &hd);
			break;
		case RPMEM_MSG_VERSIONS:
			ret = req_versions(s, &hd);
			break;
		case RPMEM_MSG_READ_AT:
			ret = req_read_at(s, &hd);
			break;
		case RPMEM_MSG_GEN:
			ret = req_gen(s, &hd);
			break;
		case RPMEM_MSG_EVENTS: {
			int over;
			ret = req_events(s, &hd, &over);
			if (over) /* the subscription was this session's end */
				return ret == -ECONNRESET ||
						       ret == -ECONNABORTED ||
						       ret == -ENOTCONN ?
					       recv_failed(s, ret) :
					       ret;
			break;
		}
		case RPMEM_MSG_BYE:
			return 0;
		case RPMEM_MSG_HELLO:
			ret = conn_reply_err(s, hd.id, RPMEM_E_PROTO,
					     "HELLO received twice");
			break;
		default:
			ret = conn_reply_err(s, hd.id, RPMEM_E_PROTO,
					     "unexpected %s from a client",
					     rpmem_msg_type_str(hd.type));
			break;
		}
		/* WRITE reads its data: a read that failed (sends do not) */
		if (ret == -ECONNRESET || ret == -ENOTCONN ||
		    (ret == -ETIMEDOUT && (hd.type == RPMEM_MSG_WRITE ||
					   hd.type == RPMEM_MSG_REPAIR ||
					   hd.type == RPMEM_MSG_REPAIR_AT)))
			return recv_failed(s, ret);
		if (ret)
			return ret;
done:
		s->last_active_ns = rpmem_now_ns();
		/* not after each WRITE, READ, FLUSH of plaintext's data path */
		if (s->out || s->conn.tls || (hd.type != RPMEM_MSG_WRITE &&
					      hd.type != RPMEM_MSG_READ &&
					      hd.type != RPMEM_MSG_FLUSH &&
					      hd.type != RPMEM_MSG_BARRIER))
			s->trim = 1;
		/* stopping: this request is done, take no other */
		if (__atomic_load_n(&s->set->stopping, __ATOMIC_RELAXED))
			return recv_failed(s, -ESHUTDOWN);
	}
}
