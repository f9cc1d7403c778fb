/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * conn.c -- one client connection's framing: read a request, send replies
 * and ERRORs, keep a WRITE's error for the next FLUSH
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "log.h"
#include "net.h"
#include "session_int.h"
#include "sock.h"
#include "util.h"
#include "wire.h"

/* conn_reply_err -- an ERROR reply; returns 0 or the send failure */
int __attribute__((format(printf, 4, 5)))
conn_reply_err(struct rpmemd_session *s, uint32_t id, uint32_t code,
	       const char *fmt, ...)
{
	char msg[RPMEM_MSG_MAX + 1];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	DBG("session %u: error %u (%s): %s", s->id, code, rpmem_err_str(code),
	    msg);
	return rpmemd_send_error(&s->conn, id, code, "%s", msg);
}

/* conn_reply_ok -- an empty OK reply */
int conn_reply_ok(struct rpmemd_session *s, uint32_t id)
{
	return rpmem_send_frame(&s->conn, RPMEM_MSG_OK, id, NULL, 0, NULL, 0);
}

/* conn_out_buf -- the large reply buffer */
uint8_t *conn_out_buf(struct rpmemd_session *s)
{
	if (!s->out)
		s->out = malloc(RPMEM_MAX_PAYLOAD);
	return s->out;
}

/*
 * stack_trim -- discard the pages of the thread's stack below this
 * function's frame (and 512 bytes of margin): nothing lives there while the
 * session waits, and a deep call (a TLS handshake) touched up to 40 KiB
 * that would stay resident for the session's whole life
 */
static void __attribute__((noinline)) stack_trim(struct rpmemd_session *s)
{
	uintptr_t here = (uintptr_t)__builtin_frame_address(0);
	uintptr_t lo = (uintptr_t)s->stack_lo;
	uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);
	/* what conn_idle calls next (a poll) fits in a few hundred bytes */
	uintptr_t end = (here - 512) & ~(pg - 1);

	if (lo && end > lo)
		madvise((void *)lo, end - lo, MADV_DONTNEED);
}

/* deadline_ms -- the ms until deadline_ns (rounded up), -1 for 0 (none) */
static int deadline_ms(uint64_t deadline_ns)
{
	if (!deadline_ns)
		return -1;
	uint64_t now = rpmem_now_ns();
	uint64_t left = deadline_ns > now ? deadline_ns - now : 0;
	return left / 1000000 < INT_MAX ? (int)(left / 1000000) + 1 : INT_MAX;
}

/* conn_trim -- give back the reply buffer, TLS buffers, deep stack pages */
void conn_trim(struct rpmemd_session *s)
{
	free(s->out);
	s->out = NULL;
	rpmem_conn_trim(&s->conn);
	stack_trim(s);
	s->trim = 0;
}

/* conn_trim_at -- when a plaintext read's wait ends to trim (0: never) */
uint64_t conn_trim_at(const struct rpmemd_session *s)
{
	if (!s->trim || s->conn.tls)
		return 0;
	return rpmem_now_ns() + RPMEMD_IDLE_MS * 1000000ull;
}

/*
 * conn_idle -- over TLS, give back the reply buffer, TLS buffers and
 * deep stack pages of an idle session, then wait for the next request
 * (until deadline_ns, 0: none) without taking them again. A plaintext
 * read waits in recv, its wait bounded by conn_trim_at where a trim is
 * due (the caller trims when it times out): one system call per request
 * where a poll and a recv took two.
 */
int conn_idle(struct rpmemd_session *s, uint64_t deadline_ns)
{
	int r;

	if (!s->conn.tls)
		return 0; /* a plaintext read waits in recv */
	if (s->trim) {
		r = rpmem_conn_wait_or(&s->conn, s->kick_fd, RPMEMD_IDLE_MS);
		if (r)
			return r == 2 ? -ECONNABORTED : 0;
		conn_trim(s);
	}
	/*
	 * a TLS read would take its buffer at once, and a kick must not end
	 * it mid-record: poll first
	 */
	r = rpmem_conn_wait_or(&s->conn, s->kick_fd, deadline_ms(deadline_ns));
	return r == 2 ? -ECONNABORTED : 0;
}

struct rpmem_log_limit rpmemd_log_write_failed =
	RPMEM_LOG_LIMIT_INIT("failed WRITE warnings", 5);

/* conn_defer -- remember the first failed WRITE for the next FLUSH */
void __attribute__((format(printf, 3, 4)))
conn_defer(struct rpmemd_session *s, uint32_t code, const char *fmt, ...)
{
	if (s->derr_code)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(s->derr_msg, sizeof(s->derr_msg), fmt, ap);
	va_end(ap);
	s->derr_code = code;
	rpmem_log_limited(&rpmemd_log_write_failed, LOG_WARNING,
			  "session %u: %s (reported at the next FLUSH)", s->id,
			  s->derr_msg);
}

/* conn_take_deferred -- reply the remembered WRITE failure, if any */
int conn_take_deferred(struct rpmemd_session *s, uint32_t id, int *had)
{
	*had = s->derr_code != 0;
	if (!*had)
		return 0;
	uint32_t code = s->derr_code;
	s->derr_code = 0;
	return conn_reply_err(s, id, code, "%s", s->derr_msg);
}

/* conn_bad_payload -- the reply to a well-framed request that did not decode */
int conn_bad_payload(struct rpmemd_session *s, const struct rpmem_hdr *hd)
{
	return conn_reply_err(s, hd->id, RPMEM_E_PROTO,
			      "invalid %s received: malformed %u-byte payload",
			      rpmem_msg_type_str(hd->type), hd->len);
}

/* frame_error -- report a frame that cannot be resynchronized */
static int frame_error(struct rpmemd_session *s, const uint8_t *raw, int err)
{
	uint32_t id = le32_get(raw + 8), len = le32_get(raw + 12);
	if (err == -EBADMSG)
		conn_reply_err(s, id, RPMEM_E_PROTO,
			       "bad frame magic 0x%08x; closing the connection",
			       le32_get(raw));
	else
		conn_reply_err(s, id, RPMEM_E_PROTO,
			       "%s frame of %u bytes is longer than %u; closing the connection",
			       rpmem_msg_type_str(le16_get(raw + 4)), len,
			       RPMEM_MAX_PAYLOAD);
	WARN("session %u (%s): %s; connection closed", s->id, s->peer,
	     err == -EBADMSG ? "bad frame magic" : "oversized frame");
	return -EPROTO;
}

/*
 * frame_deadline -- a frame's header is in: the rest of it (a WRITE's
 * data too) must arrive within frame_timeout, and within the handshake's
 * deadline during the handshake
 */
static void frame_deadline(struct rpmemd_session *s)
{
	uint64_t d = rpmem_now_ns() + s->lim.frame_timeout * 1000000000ull;
	if (s->hs_deadline_ns && s->hs_deadline_ns < d)
		d = s->hs_deadline_ns;
	rpmem_conn_set_deadline(&s->conn, d);
	s->in_frame = 1;
}

/*
 * conn_recv_request -- read one frame header (under the deadline the
 * caller set) and (except for WRITE) its payload into s->req, the rest
 * of the frame under its own deadline (frame_deadline). Returns 0 with
 * *hd filled, 1 if the frame was answered already and skipped, or -errno
 * to end the session.
 */
int conn_recv_request(struct rpmemd_session *s, struct rpmem_hdr *hd)
{
	uint8_t raw[RPMEM_HDR_SIZE];
	s->in_frame = 0;
	/* the first byte may take the caller's deadline, the rest not */
	int ret = rpmem_net_read_full(&s->conn, raw, 1);
	if (ret)
		return ret;
	frame_deadline(s);
	if ((ret = rpmem_net_read_full(&s->conn, raw + 1, sizeof(raw) - 1)))
		return ret;
	ret = rpmem_hdr_decode(raw, hd);
	if (ret == -ENOTSUP) {
		/* known length: drop the payload and carry on */
		uint32_t len = le32_get(raw + 12);
		if (len > RPMEM_MAX_PAYLOAD)
			return frame_error(s, raw, -EMSGSIZE);
		if ((ret = rpmem_net_discard(&s->conn, len)))
			return ret;
		ret = conn_reply_err(s, le32_get(raw + 8), RPMEM_E_PROTO,
				     "unknown message type %u",
				     le16_get(raw + 4));
		return ret ? ret : 1;
	}
	if (ret)
		return frame_error(s, raw, ret);
	if (hd->type == RPMEM_MSG_WRITE || hd->type == RPMEM_MSG_REPAIR ||
	    hd->type == RPMEM_MSG_REPAIR_AT)
		return 0;
	if (hd->len > sizeof(s->req)) {
		if ((ret = rpmem_net_discard(&s->conn, hd->len)))
			return ret;
		ret = conn_reply_err(s, hd->id, RPMEM_E_PROTO,
				     "invalid %s received: %u-byte payload is too long",
				     rpmem_msg_type_str(hd->type), hd->len);
		return ret ? ret : 1;
	}
	ret = rpmem_net_read_full(&s->conn, s->req, hd->len);
	return ret;
}
