/* SPDX-License-Identifier: BSD-3-Clause */
/* worker.c -- a session's thread: handshake, request loop, teardown */
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "events.h"
#include "log.h"
#include "session_int.h"
#include "sock.h"
#include "util.h"

/*
 * local_rdma -- the numeric local address of the connection fd into
 * s->local, and the RDMA listener serving it (if any) into s->rdma
 */
static void local_rdma(struct rpmemd_session *s, int fd)
{
	struct rpmemd_sessions *set = s->set;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char *a = s->local;

	s->local[0] = '\0';
	s->rdma = NULL;
	if (getsockname(fd, (struct sockaddr *)&ss, &sl) ||
	    getnameinfo((struct sockaddr *)&ss, sl, s->local,
			sizeof(s->local), NULL, 0, NI_NUMERICHOST))
		return;
	/* an IPv4 client of a dual-stack socket */
	if (!strncmp(a, "::ffff:", 7) && strchr(a + 7, '.'))
		a += 7;
	for (unsigned i = 0; i < set->nrdma; i++)
		if (!strcmp(set->rdma[i].addr, a)) {
			s->rdma = set->rdma[i].srv;
			break;
		}
	if (a != s->local)
		memmove(s->local, a, strlen(a) + 1);
}

/* end_reason -- how a session ended, for the log */
static const char *end_reason(int ret)
{
	switch (ret) {
	case 0:
		return "client said BYE";
	case -ECONNRESET:
		return "connection closed";
	case -ETIMEDOUT:
		return "timed out";
	case -EPROTO:
		return "protocol error";
	case -EACCES:
		return "not authenticated";
	case -ENOTCONN:
		return "the client disconnected without closing the session (no TLS close_notify)";
	case -ECOMM:
		return "TLS failure: a record failed authentication (corrupted or tampered with on the way)";
	case -ESHUTDOWN:
		return "the daemon is stopping";
	case -ECONNABORTED:
		return "ended by an administrator (kick)";
	default:
		return strerror(-ret);
	}
}

/* failed authentications, at a peer's will: a few a second are logged */
static struct rpmem_log_limit log_auth =
	RPMEM_LOG_LIMIT_INIT("failed authentications", 5);

/* hs_left_ms -- the time left until the handshake's deadline, in ms */
static unsigned hs_left_ms(const struct rpmemd_session *s)
{
	uint64_t now = rpmem_now_ns();
	return s->hs_deadline_ns > now ?
		       (unsigned)((s->hs_deadline_ns - now + 999999) / 1000000) :
		       0;
}

/* hs_drain -- rpmemd_drain for up to 1 s, not past the handshake's deadline */
static void hs_drain(struct rpmemd_session *s)
{
	unsigned ms = hs_left_ms(s);
	rpmemd_drain(&s->conn, ms < 1000 ? ms : 1000);
}

/*
 * tls_accept -- a TLS daemon's first step: a client that starts with
 * anything but a TLS handshake record is told in plaintext that TLS is
 * required; then the TLS handshake, within the handshake's time (the
 * wait for the first byte included)
 */
static int tls_accept(struct rpmemd_session *s)
{
	char err[RPMEM_MSG_MAX];
	uint8_t first;
	ssize_t n;

	if (!rpmem_conn_wait(&s->conn, (int)hs_left_ms(s)))
		return -ETIMEDOUT;
	do
		n = recv(s->conn.fd, &first, 1, MSG_PEEK | MSG_DONTWAIT);
	while (n < 0 && errno == EINTR);
	if (n <= 0)
		return n == 0 ? -ECONNRESET :
		       errno == EAGAIN ? -ETIMEDOUT : -errno;
	if (first != 0x16) { /* TLS record type "handshake" */
		rpmem_log_limited(&log_auth, LOG_NOTICE,
				  "connection %u from %s: refused: the client does not use TLS",
				  s->id, s->peer);
		rpmemd_send_error(&s->conn, 0, RPMEM_E_AUTH,
				  "this target requires TLS: give rpmemctl credentials (--psk-file, or --tls-ca with --tls-cert and --tls-key, or rpmemctl.conf; see rpmemctl(1))");
		hs_drain(s);
		return -EACCES;
	}
	int ret = rpmem_tls_start(s->set->tls, &s->conn, NULL, err,
				  sizeof(err));
	if (ret) {
		char by[RPMEM_STR_MAX + 1];
		/* closed to make room: handshake_failed says so */
		if (rpmemd_sessions_fate(s->set, s, by, sizeof(by)) ==
		    SESSION_EVICTED)
			return ret;
		rpmem_log_limited(&log_auth, LOG_NOTICE, "connection %u from %s: %s",
				  s->id, s->peer, err);
		hs_drain(s);
		return ret;
	}
	rpmem_strlcpy(s->identity, rpmem_tls_peer(s->conn.tls),
		      sizeof(s->identity));
	s->auth_method = rpmem_tls_method(s->conn.tls);
	DBG("connection %u from %s: TLS, %s identity '%s'", s->id, s->peer,
	    s->auth_method, s->identity);
	return 0;
}

/*
 * Refusals and timeouts happen at a peer's will: each kind is logged at
 * most a few times a second (rpmem_log_limited).
 */
static struct rpmem_log_limit log_refused =
	RPMEM_LOG_LIMIT_INIT("refused connections", 5);
static struct rpmem_log_limit log_timeouts =
	RPMEM_LOG_LIMIT_INIT("handshake timeouts", 5);

/*
 * handshake_failed -- the handshake ended with ret: say why to a peer
 * whose socket we shut down (evicted) or who was too slow, and log it
 */
/*
 * hash_report -- what s's requests that hash (HASH, SCRUB, READ_AT) got
 * from the hashing slots: how many, and the most requests served before
 * one of them once it waited in turn (one identity's share bounds what
 * the sessions of another identity put before it)
 */
static void hash_report(const struct rpmemd_session *s)
{
	if (!s->hashed)
		return;
	INFO("session %u from %s: %llu requests took a hashing slot, at most %llu others were served before one of them in turn (one identity holds or awaits at most %u of the %u slots)",
	     s->id, s->peer, (unsigned long long)s->hashed,
	     (unsigned long long)s->hash_ahead_max,
	     rpmemd_hash_share_of(s->set), s->set->hash_max);
}

static void handshake_failed(struct rpmemd_session *s, int ret)
{
	char by[RPMEM_STR_MAX + 1];
	int fate = rpmemd_sessions_fate(s->set, s, by, sizeof(by));

	if (fate == SESSION_DISPLACED) {
		rpmem_log_limited(&log_refused, LOG_NOTICE,
				  "connection %u from %s closed before it sent anything, to make room for a newer one from %s (max_unauthenticated_per_address = %u)",
				  s->id, s->peer, s->addr,
				  s->lim.max_unauth_per_addr);
		rpmemd_ev_refuse(s->set, s, NULL,
				 "max_unauthenticated_per_address",
				 "closed silent to make room for a newer connection from %s (max_unauthenticated_per_address = %u)",
				 s->addr, s->lim.max_unauth_per_addr);
		rpmemd_refuse(&s->conn, !!s->set->tls, RPMEM_E_LIMIT,
			      "too many unauthenticated connections from your address %s (max_unauthenticated_per_address = %u); this one sent nothing and was closed to make room; retry later",
			      s->addr, s->lim.max_unauth_per_addr);
	} else if (fate == SESSION_EVICTED) {
		rpmem_log_limited(&log_refused, LOG_NOTICE,
				  "connection %u from %s closed before its handshake completed, to make room for a newer one (max_unauthenticated = %u)",
				  s->id, s->peer, s->lim.max_unauth);
		rpmemd_ev_refuse(s->set, s, NULL, "max_unauthenticated",
				 "closed before its handshake to make room for a newer connection (max_unauthenticated = %u)",
				 s->lim.max_unauth);
		rpmemd_refuse(&s->conn, !!s->set->tls, RPMEM_E_LIMIT,
			      "too many connections awaiting their handshake (max_unauthenticated = %u); closed to make room; retry later",
			      s->lim.max_unauth);
	} else if (ret == -ETIMEDOUT || fate == SESSION_EXPIRED) {
		rpmem_log_limited(&log_timeouts, LOG_NOTICE,
				  "connection %u from %s: no handshake within handshake_timeout = %u s; closed",
				  s->id, s->peer, s->lim.handshake_timeout);
		rpmemd_ev_refuse(s->set, s, NULL, "handshake_timeout",
				 "no handshake within %u s",
				 s->lim.handshake_timeout);
		rpmemd_refuse(&s->conn, !!s->set->tls, RPMEM_E_LIMIT,
			      "handshake not completed within %u s (handshake_timeout); closing the connection",
			      s->lim.handshake_timeout);
	} else {
		DBG("connection %u from %s closed before the handshake completed: %s",
		    s->id, s->peer, end_reason(ret));
	}
}

/*
 * first_byte -- wait until the peer sends something, the connection ends
 * or the handshake's deadline passes; once it has sent something, it is
 * no longer silent (registry.c: displace)
 */
static void first_byte(struct rpmemd_session *s)
{
	struct pollfd p = { .fd = s->conn.fd, .events = POLLIN };
	uint64_t now;

	while ((now = rpmem_now_ns()) < s->hs_deadline_ns) {
		int n = poll(&p, 1,
			     (int)((s->hs_deadline_ns - now) / 1000000) + 1);
		if (n > 0) {
			char c;
			/* not an EOF, nor a shutdown to make room */
			if (recv(s->conn.fd, &c, 1, MSG_PEEK | MSG_DONTWAIT) <=
			    0)
				return;
			__atomic_store_n(&s->heard, 1, __ATOMIC_RELEASE);
			DBG("connection %u from %s: first bytes", s->id,
			    s->peer);
			return;
		}
		if (n < 0 && errno != EINTR)
			return;
	}
}

/* session_main -- the session thread */
static void *session_main(void *arg)
{
	struct rpmemd_session *s = arg;
	struct rpmemd_sessions *set = s->set;
	pthread_attr_t attr;
	size_t size;

	/* for conn_idle's stack_trim; without it, none */
	if (!pthread_getattr_np(pthread_self(), &attr)) {
		if (pthread_attr_getstack(&attr, &s->stack_lo, &size))
			s->stack_lo = NULL;
		pthread_attr_destroy(&attr);
	}
	rpmem_conn_set_sndtimeo(&s->conn, RPMEMD_SEND_TIMEOUT * 1000);
	s->auth_method = "none";
	/* from accept to HELLO_OK, the TLS handshake included */
	s->hs_deadline_ns = s->accepted_ns +
			    s->lim.handshake_timeout * 1000000000ull;
	rpmem_conn_set_deadline(&s->conn, s->hs_deadline_ns);
	first_byte(s);
	int ret = set->tls ? tls_accept(s) : 0;
	if (ret == 0)
		ret = rpmemd_handshake(s);
	s->hs_deadline_ns = 0;
	rpmem_conn_set_deadline(&s->conn, 0);
	if (ret == 0)
		ret = rpmemd_serve(s);
	reorder_apply(s, 1);
	handle_close_all(s);
	if (s->established) {
		INFO("session %u from %s closed: %s (%llu bytes written, %llu read, %llu flushes, %llu barriers)",
		     s->id, s->peer, end_reason(ret),
		     (unsigned long long)s->bytes_written,
		     (unsigned long long)s->bytes_read,
		     (unsigned long long)s->flushes,
		     (unsigned long long)s->barriers);
		hash_report(s);
		rpmemd_ev_session(s, RPMEM_EV_DESTROY, end_reason(ret));
	} else
		handshake_failed(s, ret);

	rpmemd_sessions_leave(set, s);
	return NULL;
}

/* limit_named -- the configuration name of the limit a refusal names */
static const char *limit_named(const char *why)
{
	static const char *const names[] = { "max_unauthenticated_per_address",
					     "max_sessions",
					     "max_unauthenticated" };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strstr(why, names[i]))
			return names[i];
	return "connections";
}

/* peer_addr -- the numeric address of fd's peer, without the port */
static void peer_addr(int fd, char *buf, size_t len)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);

	if (getpeername(fd, (struct sockaddr *)&ss, &sl) ||
	    getnameinfo((struct sockaddr *)&ss, sl, buf, len, NULL, 0,
			NI_NUMERICHOST))
		rpmem_strlcpy(buf, "?", len);
}

int rpmemd_session_start(struct rpmemd_sessions *set, int fd)
{
	struct rpmemd_session *s;
	struct rpmemd_limits lim;
	char addr[RPMEMD_ADDR_MAX], why[RPMEM_MSG_MAX + 1];
	uint32_t id;
	int ret;

	peer_addr(fd, addr, sizeof(addr));
	if (rpmemd_sessions_reserve(set, addr, &id, &lim, why, sizeof(why))) {
		struct rpmem_conn c;
		char peer[RPMEMD_ADDR_MAX];
		rpmem_conn_init(&c, fd);
		rpmemd_peer_name(fd, peer, sizeof(peer));
		rpmem_log_limited(&log_refused, LOG_NOTICE,
				  "connection from %s refused: %s", peer, why);
		rpmemd_ev_refuse(set, NULL, peer, limit_named(why), "%s", why);
		rpmemd_refuse(&c, !!set->tls, RPMEM_E_LIMIT, "%s", why);
		close(fd);
		return -EUSERS;
	}
	s = rpmemd_session_alloc();
	if (!s) {
		close(fd);
		return -ENOMEM;
	}
	s->set = set;
	rpmem_conn_init(&s->conn, fd);
	s->kick_fd = set->tls ? eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK) : -1;
	s->id = id;
	s->next_handle = 1;
	s->started = rpmem_wall_sec();
	s->accepted_ns = rpmem_now_ns();
	s->lim = lim;
	rpmem_strlcpy(s->addr, addr, sizeof(s->addr));
	rpmemd_peer_name(fd, s->peer, sizeof(s->peer));
	local_rdma(s, fd);
	snprintf(s->holder, sizeof(s->holder), "session %u from %s", id,
		 s->peer);

	ret = rpmemd_sessions_add(set, s, session_main);
	if (ret) {
		ERR("connection from %s: cannot start a session thread: %s",
		    s->peer, strerror(-ret));
		close(fd);
		if (s->kick_fd >= 0)
			close(s->kick_fd);
		rpmemd_session_free(s);
		return ret;
	}
	DBG("connection %u from %s accepted", id, s->peer);
	return 0;
}
