/* SPDX-License-Identifier: BSD-3-Clause */
/* session.c -- initiator sessions: connect, handshake, close; KICK */
#include <errno.h>
#include <limits.h>
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

#ifndef RPMEM_VERSION
#define RPMEM_VERSION "0"
#endif

/* handshake -- HELLO, then HELLO_OK or ERROR */
static int handshake(struct rpmemctl_session *s)
{
	struct rpmem_msg_hello hello = {
		.ver_min = RPMEM_PROTO_VERSION,
		.ver_max = RPMEM_PROTO_VERSION,
		.auth_method = 0,
	};
	char host[HOST_NAME_MAX + 1] = "";
	gethostname(host, sizeof(host) - 1);
	snprintf(hello.client, sizeof(hello.client), "%s librpmemctl/%s %s",
		 program_invocation_short_name, RPMEM_VERSION, host);

	uint8_t buf[RPMEM_REQ_MAX];
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
	int ret = client_tls_ctx(cfg, s->host, s->port, &s->tls_ctx);
	if (ret)
		return ret;
	ret = rpmem_tls_start(s->tls_ctx, &s->conn,
			      cfg->tls_name ? cfg->tls_name : s->host, err,
			      sizeof(err));
	if (ret) {
		client_set_last(ret, "TLS with %s:%s failed: %s", s->host,
				s->port, err);
		return ret;
	}
	rpmem_strlcpy(s->identity,
		      cfg->psk_file ? rpmem_tls_peer(s->conn.tls) : "",
		      sizeof(s->identity));
	client_log(s, LOG_DEBUG, "TLS with %s:%s (%s)", s->host, s->port,
		   rpmem_tls_method(s->conn.tls));
	return 0;
}

/*
 * plaintext_ok -- a configuration without credentials may talk to the
 * connected peer: it is on loopback, or plaintext was asked for; else
 * nothing is sent and -EACCES says why
 */
static int plaintext_ok(struct rpmemctl_session *s,
			const struct rpmemctl_session_cfg *cfg)
{
	if (cfg->plaintext || rpmem_net_peer_loopback(s->conn.fd))
		return 0;
	client_set_last(-EACCES,
			"no credentials for %s:%s (no --psk-file or --tls-ca, no entry in rpmemctl.conf), and it is not on loopback: refusing to talk to it in plaintext; give credentials, or --plaintext (plaintext = true in its rpmemctl.conf entry) if its rpmemd sets allow_insecure_remote on a network you trust",
			s->host, s->port);
	return -EACCES;
}

/*
 * session_open -- connect to rpmemd, start TLS if cfg has credentials,
 * and complete the handshake; a failure leaves its message for
 * client_last()
 */
static int session_open(const char *host, const char *port,
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
	if (cfg)
		s->log = cfg->log;
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
	if (client_cfg_uses_tls(cfg))
		ret = start_tls(s, cfg);
	else if (cfg)
		ret = plaintext_ok(s, cfg);
	if (ret)
		goto err_close;
	ret = handshake(s);
	if (ret && s->conn.tls && rpmem_tls_error(s->conn.tls)[0] &&
	    !rpmem_tls_refused(s->conn.tls)) {
		/* closed or cut (room made for others, stopping): not refused */
		client_set_last(-ECONNRESET,
				"TLS with %s:%s failed: the target closed the connection during the handshake (%s), not refusing our credentials: it may be busy or stopping; retry, or check its log",
				host, port, rpmem_tls_error(s->conn.tls));
		ret = -ECONNRESET;
		goto err_close;
	}
	if (ret && s->conn.tls && rpmem_tls_error(s->conn.tls)[0]) {
		/* in TLS 1.3 a refused client certificate is an alert here */
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
	client_log(s, LOG_DEBUG, "session %u with %s:%s (%s)", s->id, host,
		   port, s->server);
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

/*
 * rpmemctl_session_close -- say BYE and close; pools still open are
 * closed on the target by the disconnect and detached here (their
 * handles must still be released with rpmemctl_pool_close)
 */
RPMEM_EXPORT void rpmemctl_session_read_damaged(struct rpmemctl_session *sess,
						int deliver,
						rpmemctl_damaged_fn fn,
						void *arg)
{
	sess->read_damaged = deliver;
	sess->damaged_fn = fn;
	sess->damaged_arg = arg;
}

int client_read_damaged(struct rpmemctl_session *s, int ret)
{
	if (ret != -EILSEQ || s->lost || !s->read_damaged ||
	    !(s->caps & RPMEM_CAP_DAMAGE))
		return 0;
	if (s->damaged_fn)
		s->damaged_fn(s->errmsg, s->damaged_arg);
	return 1;
}

void client_hook_add(struct rpmemctl_session *s, struct client_close_hook *h)
{
	h->next = s->hooks;
	s->hooks = h;
}

void client_hook_del(struct rpmemctl_session *s, struct client_close_hook *h)
{
	for (struct client_close_hook **pp = &s->hooks; *pp;
	     pp = &(*pp)->next) {
		if (*pp == h) {
			*pp = h->next;
			break;
		}
	}
	h->next = NULL;
}

RPMEM_EXPORT void rpmemctl_session_close(struct rpmemctl_session **sess)
{
	if (!sess || !*sess)
		return;
	struct rpmemctl_session *s = *sess;
	while (s->hooks) {
		struct client_close_hook *h = s->hooks;
		s->hooks = h->next;
		h->next = NULL;
		h->fn(h);
	}
	(void)client_send_held(s);
	if (!s->lost)
		rpmem_send_frame(&s->conn, RPMEM_MSG_BYE, s->next_id, NULL, 0,
				 NULL, 0);
	rpmem_conn_close(&s->conn);
	rpmem_tls_ctx_free(&s->tls_ctx);
	client_owed_free(s);
	free(s->hbuf);
	free(s->rbuf);
	free(s);
	*sess = NULL;
}

/* rpmemctl_session_open -- connect to rpmemd and complete the handshake */
RPMEM_EXPORT int rpmemctl_session_open(const char *host, const char *port,
				       enum rpmemctl_transport transport,
				       struct rpmemctl_session **out)
{
	client_api_begin();
	return client_api_end(session_open(host, port, transport, NULL, out),
			      "opening a session");
}

/*
 * rpmemctl_session_open_cfg -- rpmemctl_session_open with the credentials
 * of cfg (NULL: plaintext)
 */
RPMEM_EXPORT int
rpmemctl_session_open_cfg(const char *host, const char *port,
			  enum rpmemctl_transport transport,
			  const struct rpmemctl_session_cfg *cfg,
			  struct rpmemctl_session **out)
{
	client_api_begin();
	return client_api_end(session_open(host, port, transport, cfg, out),
			      "opening a session");
}

/* rpmemctl_session_open_err -- the same, the reason of a failure in errbuf */
RPMEM_EXPORT int rpmemctl_session_open_err(const char *host, const char *port,
					   enum rpmemctl_transport transport,
					   struct rpmemctl_session **out,
					   char *errbuf, size_t errlen)
{
	int ret = rpmemctl_session_open(host, port, transport, out);
	client_copy_err(ret, errbuf, errlen);
	return ret;
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

RPMEM_EXPORT const char *
rpmemctl_session_identity(const struct rpmemctl_session *sess)
{
	return sess ? sess->identity : "";
}

/* rpmemctl_session_kick -- KICK: end session id on the target */
RPMEM_EXPORT int rpmemctl_session_kick(struct rpmemctl_session *sess,
				       uint32_t id)
{
	struct rpmem_msg_kick m = { .session = id };
	uint8_t buf[RPMEM_REQ_SMALL];

	if (!sess)
		return -EINVAL;
	client_sess_begin(sess);
	if (!(sess->caps & RPMEM_CAP_KICK)) {
		client_seterr(sess, "%s:%s (%s) cannot end sessions: it is older than this client",
			      sess->host, sess->port, sess->server);
		return client_sess_end(sess, -ENOTSUP, "ending a session");
	}
	int len = rpmem_kick_encode(buf, sizeof(buf), &m);
	int ret = len < 0 ? len :
			    client_call(sess, RPMEM_MSG_KICK, buf, (size_t)len,
					RPMEM_MSG_OK, NULL);
	return client_sess_end(sess, ret, "ending a session");
}
