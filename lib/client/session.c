/* SPDX-License-Identifier: BSD-3-Clause */
/* session.c -- initiator sessions: connect, handshake, close, errors */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "client.h"
#include "log.h"
#include "net.h"
#include "util.h"

#ifndef RPMEM_VERSION
#define RPMEM_VERSION "0"
#endif

/* the last error of a call that had no session to keep it (per thread) */
static __thread int last_err;
static __thread char last_msg[CLIENT_ERRMSG_MAX];

void client_set_last(int err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(last_msg, sizeof(last_msg), fmt, ap);
	va_end(ap);
	last_err = err;
}

/* handshake -- HELLO, then HELLO_OK or ERROR */
static int handshake(struct rpmemctl_session *s)
{
	struct rpmem_msg_hello hello = {
		.ver_min = RPMEM_PROTO_VERSION,
		.ver_max = RPMEM_PROTO_VERSION,
		.auth_method = 0,
	};
	char host[64] = "";
	gethostname(host, sizeof(host) - 1);
	snprintf(hello.client, sizeof(hello.client), "%s librpmemctl/%s %s",
		 program_invocation_short_name, RPMEM_VERSION, host);

	uint8_t buf[1024];
	int len = rpmem_hello_encode(buf, sizeof(buf), &hello);
	if (len < 0) {
		client_seterr(s, "cannot encode HELLO: %s", strerror(-len));
		return len;
	}
	size_t rlen;
	int ret = client_call(s, RPMEM_MSG_HELLO, buf, (size_t)len,
			      RPMEM_MSG_HELLO_OK, &rlen);
	if (ret)
		return ret;
	struct rpmem_msg_hello_ok ok;
	if (rpmem_hello_ok_decode(s->rbuf, rlen, &ok))
		return client_bad_reply(s, RPMEM_MSG_HELLO_OK);
	if (ok.version != RPMEM_PROTO_VERSION) {
		client_seterr(s, "%s:%s chose protocol version %u, we speak %u",
			      s->host, s->port, ok.version,
			      RPMEM_PROTO_VERSION);
		return client_lost(s, -EPROTO, "handshaking");
	}
	s->id = ok.session_id;
	s->caps = ok.caps;
	rpmem_strlcpy(s->server, ok.server, sizeof(s->server));
	return 0;
}

/*
 * start_tls -- the TLS handshake on the new connection with cfg's
 * credentials; the reason of a failure goes to rpmemctl_strerror
 */
static int start_tls(struct rpmemctl_session *s,
		     const struct rpmemctl_session_cfg *cfg)
{
	char err[CLIENT_ERRMSG_MAX - 300];
	int ret = client_tls_ctx(cfg, &s->tls_ctx, err, sizeof(err));
	if (ret) {
		client_set_last(-EINVAL, "credentials for %s:%s: %s", s->host,
				s->port, err);
		return -EINVAL;
	}
	ret = rpmem_tls_start(s->tls_ctx, &s->conn, s->host, err,
			      sizeof(err));
	if (ret) {
		client_set_last(ret, "TLS with %s:%s failed: %s", s->host,
				s->port, err);
		return ret;
	}
	rpmem_strlcpy(s->identity,
		      cfg->psk_file ? rpmem_tls_peer(s->conn.tls) : "",
		      sizeof(s->identity));
	DBG("TLS with %s:%s (%s)", s->host, s->port,
	    rpmem_tls_method(s->conn.tls));
	return 0;
}

/*
 * rpmemctl_session_open_cfg -- connect to rpmemd, start TLS if cfg has
 * credentials, and complete the handshake
 */
RPMEM_EXPORT int
rpmemctl_session_open_cfg(const char *host, const char *port,
			  enum rpmemctl_transport transport,
			  const struct rpmemctl_session_cfg *cfg,
			  struct rpmemctl_session **out)
{
	if (!host || !*host || !out || transport > RPMEMCTL_TRANSPORT_RDMA) {
		client_set_last(-EINVAL, "invalid argument");
		return -EINVAL;
	}
	if (!port || !*port)
		port = RPMEM_DEFAULT_PORT;
	if (strlen(host) >= 256 || strlen(port) >= 16) {
		client_set_last(-EINVAL, "host or port too long");
		return -EINVAL;
	}

	struct rpmemctl_session *s = calloc(1, sizeof(*s));
	if (!s) {
		client_set_last(-ENOMEM, "out of memory");
		return -ENOMEM;
	}
	rpmem_conn_init(&s->conn, -1);
	s->next_id = 1;
	s->transport = transport;
	rpmem_strlcpy(s->host, host, sizeof(s->host));
	rpmem_strlcpy(s->port, port, sizeof(s->port));
	int ret = -ENOMEM;
	s->rbuf = malloc(RPMEM_MAX_PAYLOAD);
	if (!s->rbuf) {
		client_set_last(ret, "out of memory");
		goto err_free;
	}

	ret = rpmem_net_connect(host, port, CLIENT_CONNECT_TIMEOUT_MS, &s->conn.fd);
	if (ret) {
		if (ret == -ENOENT)
			ret = -EHOSTUNREACH;
		const char *why = ret == -EHOSTUNREACH ?
					  "unknown or unreachable host" :
					  strerror(-ret);
		client_set_last(ret, "cannot connect to %s:%s: %s%s", host,
				port, why,
				ret == -ECONNREFUSED ? " (is rpmemd running?)" :
						       "");
		goto err_free;
	}
	ret = client_set_timeout(s, CLIENT_IO_TIMEOUT_S);
	if (ret) {
		client_set_last(ret, "cannot set socket timeouts: %s",
				strerror(-ret));
		goto err_close;
	}
	if (client_cfg_uses_tls(cfg) && (ret = start_tls(s, cfg)))
		goto err_close;
	ret = handshake(s);
	if (ret && s->conn.tls && rpmem_tls_error(s->conn.tls)[0]) {
		client_set_last(-EACCES,
				"TLS with %s:%s failed: the target refused our credentials (%s)%s",
				host, port ? port : RPMEM_DEFAULT_PORT,
				rpmem_tls_error(s->conn.tls),
				cfg->psk_file ?
					"; check that its tls.psk_file holds our identity with the same key" :
					"; check that its tls.ca signed our certificate and that it is valid");
		ret = -EACCES;
		goto err_close;
	}
	if (ret) {
		client_set_last(ret, "handshake with %s:%s failed: %s", host,
				port, s->errmsg);
		goto err_close;
	}
	DBG("session %u with %s:%s (%s)", s->id, host, port, s->server);
	*out = s;
	return 0;

err_close:
	rpmem_conn_close(&s->conn);
	rpmem_tls_ctx_free(&s->tls_ctx);
err_free:
	free(s->rbuf);
	free(s);
	return ret;
}

/* rpmemctl_session_open -- a plaintext session (see _open_cfg) */
RPMEM_EXPORT int rpmemctl_session_open(const char *host, const char *port,
				       enum rpmemctl_transport transport,
				       struct rpmemctl_session **out)
{
	return rpmemctl_session_open_cfg(host, port, transport, NULL, out);
}

/*
 * rpmemctl_session_close -- say BYE and close; pools still open are
 * closed on the target by the disconnect and detached here (their
 * handles must still be released with rpmemctl_pool_close)
 */
RPMEM_EXPORT void rpmemctl_session_close(struct rpmemctl_session **sess)
{
	if (!sess || !*sess)
		return;
	struct rpmemctl_session *s = *sess;
	while (s->pools) {
		struct rpmemctl_pool *p = s->pools;
		s->pools = p->next;
		client_pool_detach(p);
	}
	if (!s->lost)
		rpmem_send_frame(&s->conn, RPMEM_MSG_BYE, s->next_id, NULL, 0,
				 NULL, 0);
	rpmem_conn_close(&s->conn);
	rpmem_tls_ctx_free(&s->tls_ctx);
	free(s->rbuf);
	free(s);
	*sess = NULL;
}

RPMEM_EXPORT const char *
rpmemctl_session_errmsg(const struct rpmemctl_session *sess)
{
	return sess ? sess->errmsg : "no session";
}

RPMEM_EXPORT const char *
rpmemctl_session_server(const struct rpmemctl_session *sess)
{
	return sess ? sess->server : "";
}

/*
 * rpmemctl_strerror -- the text of the calling thread's last error when
 * it matches err (a failed session or replica open keeps its details
 * there), else a generic description of err
 */
RPMEM_EXPORT const char *rpmemctl_strerror(int err)
{
	if (err && err == last_err && last_msg[0])
		return last_msg;
	switch (err) {
	case 0:
		return "success";
	case -ECONNREFUSED:
		return "connection refused (is rpmemd running?)";
	case -ECONNRESET:
		return "connection to the target lost";
	case -EPROTO:
		return "protocol error";
	case -EPROTONOSUPPORT:
		return "no common protocol version with the target";
	case -EACCES:
		return "authentication required or failed";
	case -ENODEV:
		return "no such region";
	case -ENOENT:
		return "no such pool";
	case -EBUSY:
		return "pool is open for writing by another session";
	case -EROFS:
		return "pool is open read-only";
	case -EUSERS:
		return "too many sessions or open pools on the target";
	case -ESHUTDOWN:
		return "the target is shutting down";
	case -EREMOTEIO:
		return "internal error on the target";
	}
	return strerror(err < 0 ? -err : err);
}

RPMEM_EXPORT const char *
rpmemctl_session_identity(const struct rpmemctl_session *sess)
{
	return sess ? sess->identity : "";
}
