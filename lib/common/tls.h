/* SPDX-License-Identifier: BSD-3-Clause */
/* tls.h -- TLS 1.3 on a control connection (OpenSSL 3), both ends */
#ifndef RPMEM_TLS_H
#define RPMEM_TLS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "proto.h" /* RPMEM_IDENTITY_MAX */

struct rpmem_conn;
struct rpmem_tls;     /* one TLS session on a connection */
struct rpmem_tls_ctx; /* credentials and settings for many sessions */

#define RPMEM_TLS_GATHER 16384	 /* frames up to this size: one record */
#define RPMEM_PSK_LEN 32	 /* bytes of key rpmemctl psk-gen makes */
#define RPMEM_PSK_MIN 16	 /* shortest external PSK accepted */
#define RPMEM_PSK_MAX 64
/* RPMEM_PSK_LINE_MAX -- room for one line of a PSK file */
#define RPMEM_PSK_LINE_MAX 512

/*
 * server PSK lookup: the key of identity into key[RPMEM_PSK_MAX], its
 * length in *len; 0, or -ENOENT for an unknown identity
 */
typedef int (*rpmem_psk_lookup_fn)(void *arg, const char *identity,
				   uint8_t *key, size_t *len);

struct rpmem_tls_cfg {
	int server;
	/* X.509: a CA bundle to verify the peer, our chain and key */
	const char *ca_file;
	const char *cert_file;
	const char *key_file;
	/* external PSK, client: one identity and key */
	const char *psk_identity;
	const uint8_t *psk;
	size_t psk_len;
	/* external PSK, server: look identities up */
	rpmem_psk_lookup_fn psk_lookup;
	void *psk_arg;
};

/*
 * rpmem_tls_ctx_new -- TLS 1.3 only, mutual authentication: a server
 * with certificates requires a client certificate signed by ca_file,
 * and accepts PSK clients when psk_lookup is set; a client verifies the
 * server's certificate against ca_file (or authenticates by PSK). Key
 * files readable by group or others are refused. On failure err says why.
 */
int rpmem_tls_ctx_new(const struct rpmem_tls_cfg *cfg,
		      struct rpmem_tls_ctx **out, char *err, size_t errlen);
void rpmem_tls_ctx_free(struct rpmem_tls_ctx **ctx);

/*
 * rpmem_tls_start -- the TLS handshake on c's socket (bounded by the
 * socket's timeouts); on success c->tls is set and every frame on c is
 * encrypted. host (client) is checked against the server certificate's
 * names unless NULL. On failure err says why, and -EACCES means the peer
 * could not be authenticated or refused us, -EPROTO that it does not
 * speak TLS.
 */
int rpmem_tls_start(struct rpmem_tls_ctx *ctx, struct rpmem_conn *c,
		    const char *host, char *err, size_t errlen);

/*
 * rpmem_tls_peer -- the authenticated identity of the peer: the PSK
 * identity, or the certificate's subject CN (else its first DNS name)
 */
const char *rpmem_tls_peer(const struct rpmem_tls *t);
/*
 * rpmem_tls_error -- the TLS-level reason of the first failed read or
 * write ("" if none), e.g. an alert: in TLS 1.3 a server refuses a client
 * certificate only after the client's handshake has completed
 */
const char *rpmem_tls_error(const struct rpmem_tls *t);
/*
 * rpmem_tls_refused -- that first failure was the peer's alert refusing
 * our credentials (a certificate or key it does not accept), not a
 * connection closed or cut (e.g. by a target making room under its limits)
 */
int rpmem_tls_refused(const struct rpmem_tls *t);
/* rpmem_tls_method -- "psk" or "x509" */
const char *rpmem_tls_method(const struct rpmem_tls *t);

/*
 * rpmem_tls_export -- RFC 8446 exporter keying material bound to this
 * session, label and context (ctx[ctx_len]; NULL/0: empty): both ends of
 * the session compute the same len bytes, no other session can
 */
int rpmem_tls_export(struct rpmem_tls *t, const char *label, const void *ctx,
		     size_t ctx_len, uint8_t *out, size_t len);

/*
 * rpmem_tls_read -- up to len bytes (> 0), or -errno (-ECONNRESET: the
 * peer closed the session, close_notify; -ENOTCONN: its socket closed
 * without one, as when the peer process died; -ECOMM: a TLS-level
 * failure, rpmem_tls_error says which)
 */
ssize_t rpmem_tls_read(struct rpmem_tls *t, void *buf, size_t len);
/*
 * rpmem_tls_writev -- all of the n pieces, then one flush of the write
 * buffer (a frame's records leave in as few send()s as possible); 0 or
 * -errno
 */
struct iovec;
int rpmem_tls_writev(struct rpmem_tls *t, const struct iovec *iov,
		     unsigned n);
/* rpmem_tls_write -- all of len bytes, flushed; 0 or -errno */
int rpmem_tls_write(struct rpmem_tls *t, const void *buf, size_t len);
/* rpmem_tls_pending -- received bytes wait in the TLS buffers */
int rpmem_tls_pending(const struct rpmem_tls *t);
/*
 * rpmem_tls_trim -- give back the buffers of an idle connection (the
 * record layer's, a grown write buffer); the next read or write takes
 * them again. Nothing is given back while received data waits.
 */
void rpmem_tls_trim(struct rpmem_tls *t);
/*
 * rpmem_tls_close_notify -- send close_notify once (SSL_shutdown, best
 * effort): the peer reads a clean end of the session, not a broken one
 */
void rpmem_tls_close_notify(struct rpmem_tls *t);
/* rpmem_tls_free -- free, without a close_notify; accepts NULL */
void rpmem_tls_free(struct rpmem_tls **t);

/* --- key files ----------------------------------------------------------- */

/*
 * rpmem_key_file_check -- path is a regular file that group and others
 * cannot read; else -EPERM (or -errno) with the reason in err
 */
int rpmem_key_file_check(const char *path, char *err, size_t errlen);

/*
 * rpmem_psk_parse_line -- "IDENTITY:HEX" (a line of a PSK file) into
 * identity[RPMEM_IDENTITY_MAX + 1] and key[RPMEM_PSK_MAX]; -EINVAL
 */
int rpmem_psk_parse_line(const char *line, char *identity, uint8_t *key,
			 size_t *len);

/*
 * rpmem_psk_read -- the first (identity, key) of a PSK file, after
 * rpmem_key_file_check; with identity pre-set (non-empty), that one
 */
int rpmem_psk_read(const char *path, char *identity, uint8_t *key,
		   size_t *len, char *err, size_t errlen);

/* rpmem_psk_valid_identity -- 1..128 of [A-Za-z0-9._@-] */
int rpmem_psk_valid_identity(const char *id);

#endif
