/* SPDX-License-Identifier: BSD-3-Clause */
/* tls.c -- TLS 1.3 on a control connection (OpenSSL 3), both ends */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "log.h"
#include "net.h"
#include "tls.h"
#include "util.h"

/* TLS_ERR_MAX -- room for a session's first TLS-level failure */
#define TLS_ERR_MAX 160

#define RPMEM_TLS_READ_BUF (256u << 10)
/*
 * the records of a frame longer than one record are gathered into writes
 * of up to this much, so that a 1 MiB WRITE is a few large send()s, not
 * one per 16 KiB record (wbuf_on); a shorter frame is one record and one
 * send() without it
 */
#define RPMEM_TLS_WRITE_BUF (256u << 10)
#define RPMEM_TLS_RECORD (16u << 10)

struct rpmem_tls_ctx {
	SSL_CTX *ctx;
	int server;
	int x509; /* certificates configured */
	char psk_id[RPMEM_IDENTITY_MAX + 1];
	uint8_t psk[RPMEM_PSK_MAX];
	size_t psk_len;
	rpmem_psk_lookup_fn lookup;
	void *arg;
};

struct rpmem_tls {
	SSL *ssl;
	char peer[RPMEM_IDENTITY_MAX + 1];
	const char *method;
	/* server: the identity a PSK client claimed, known or not */
	char claimed[RPMEM_IDENTITY_MAX + 1];
	char err[TLS_ERR_MAX]; /* the first TLS-level failure after handshake */
	int wbuf;      /* writes go through a buffer (wbuf_on) */
	int refused;	  /* the first failure was an alert refusing us */
	int cert_offered; /* client with a PSK: the target sent a certificate */
	int unknown_id;	  /* server: the claimed identity is not known */
};

/* the one TLS 1.3 suite external PSKs are bound to (SHA-256) */
static const unsigned char aes128gcm_sha256[] = { 0x13, 0x01 };

static int ex_index = -1;
static pthread_once_t ex_once = PTHREAD_ONCE_INIT;

static void ex_init(void)
{
	ex_index = SSL_get_ex_new_index(0, "rpmem", NULL, NULL, NULL);
}

/* ssl_reason -- the first queued OpenSSL error as text, queue cleared */
static const char *ssl_reason(char *buf, size_t len)
{
	unsigned long e = ERR_peek_error();
	const char *r = e ? ERR_reason_error_string(e) : NULL;

	if (r)
		rpmem_strlcpy(buf, r, len);
	else if (e)
		snprintf(buf, len, "OpenSSL error %lx", e);
	else
		rpmem_strlcpy(buf, "no detail", len);
	ERR_clear_error();
	return buf;
}

/* psk_session -- an SSL_SESSION carrying an external PSK for TLS 1.3 */
static SSL_SESSION *psk_session(SSL *ssl, const uint8_t *key, size_t len)
{
	const SSL_CIPHER *cipher = SSL_CIPHER_find(ssl, aes128gcm_sha256);
	SSL_SESSION *s = cipher ? SSL_SESSION_new() : NULL;

	if (!s)
		return NULL;
	if (!SSL_SESSION_set1_master_key(s, key, len) ||
	    !SSL_SESSION_set_cipher(s, cipher) ||
	    !SSL_SESSION_set_protocol_version(s, TLS1_3_VERSION)) {
		SSL_SESSION_free(s);
		return NULL;
	}
	return s;
}

/* use_psk_cb -- client: offer our identity and key */
static int use_psk_cb(SSL *ssl, const EVP_MD *md, const unsigned char **id,
		      size_t *idlen, SSL_SESSION **sess)
{
	struct rpmem_tls_ctx *c = SSL_CTX_get_app_data(SSL_get_SSL_CTX(ssl));
	SSL_SESSION *s = psk_session(ssl, c->psk, c->psk_len);

	*sess = NULL;
	if (!s)
		return 0;
	/* after a HelloRetryRequest the hash must match the suite's */
	if (md && md != SSL_CIPHER_get_handshake_digest(
			      SSL_SESSION_get0_cipher(s))) {
		SSL_SESSION_free(s);
		return 1;
	}
	*id = (const unsigned char *)c->psk_id;
	*idlen = strlen(c->psk_id);
	*sess = s;
	return 1;
}

/*
 * find_psk_cb -- server: the key of the identity the client offers; an
 * unknown identity gets a random key of the usual length, so that it fails
 * at the binder check exactly as a known one with a wrong key does (the
 * client cannot tell which identities exist); t->unknown_id says which
 */
static int find_psk_cb(SSL *ssl, const unsigned char *identity, size_t idlen,
		       SSL_SESSION **sess)
{
	struct rpmem_tls_ctx *c = SSL_CTX_get_app_data(SSL_get_SSL_CTX(ssl));
	struct rpmem_tls *t = SSL_get_ex_data(ssl, ex_index);
	char id[RPMEM_IDENTITY_MAX + 1] = "";
	uint8_t key[RPMEM_PSK_MAX];
	size_t klen = 0;

	*sess = NULL;
	/* shown in logs: escaped, nothing that could forge a line */
	if (t)
		rpmem_escape(identity, idlen, t->claimed, sizeof(t->claimed));
	if (idlen <= RPMEM_IDENTITY_MAX && !memchr(identity, 0, idlen))
		memcpy(id, identity, idlen), id[idlen] = '\0';
	if (!rpmem_psk_valid_identity(id) || !c->lookup ||
	    c->lookup(c->arg, id, key, &klen)) {
		if (t)
			t->unknown_id = 1;
		klen = RPMEM_PSK_LEN;
		if (rpmem_random(key, klen))
			return 0;
	}
	*sess = psk_session(ssl, key, klen);
	OPENSSL_cleanse(key, sizeof(key));
	return *sess ? 1 : 0;
}

/*
 * refuse_cert_cb -- client with a PSK: the target answered with a
 * certificate instead of our key; whatever signed it, it is refused
 */
static int refuse_cert_cb(int ok, X509_STORE_CTX *x)
{
	SSL *ssl = X509_STORE_CTX_get_ex_data(
		x, SSL_get_ex_data_X509_STORE_CTX_idx());
	struct rpmem_tls *t = ssl ? SSL_get_ex_data(ssl, ex_index) : NULL;

	(void)ok;
	if (t)
		t->cert_offered = 1;
	X509_STORE_CTX_set_error(x, X509_V_ERR_APPLICATION_VERIFICATION);
	return 0;
}

static int client_cert_cb(int ok, X509_STORE_CTX *x);

void rpmem_tls_ctx_free(struct rpmem_tls_ctx **pc)
{
	struct rpmem_tls_ctx *c = pc ? *pc : NULL;
	if (!c)
		return;
	SSL_CTX_free(c->ctx);
	OPENSSL_cleanse(c->psk, sizeof(c->psk));
	free(c);
	*pc = NULL;
}

int rpmem_tls_ctx_new(const struct rpmem_tls_cfg *cfg,
		      struct rpmem_tls_ctx **out, char *err, size_t errlen)
{
	char why[RPMEM_MSG_MAX];
	int ret = -EINVAL;

	(void)pthread_once(&ex_once, ex_init);
	struct rpmem_tls_ctx *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->server = cfg->server;
	c->ctx = SSL_CTX_new(cfg->server ? TLS_server_method() :
					   TLS_client_method());
	if (!c->ctx) {
		rpmem_set_err(err, errlen, "cannot create a TLS context: %s",
			ssl_reason(why, sizeof(why)));
		ret = -ENOMEM;
		goto err_free;
	}
	SSL_CTX_set_app_data(c->ctx, c);
	if (!SSL_CTX_set_min_proto_version(c->ctx, TLS1_3_VERSION) ||
	    !SSL_CTX_set_max_proto_version(c->ctx, TLS1_3_VERSION)) {
		rpmem_set_err(err, errlen, "TLS 1.3 is not available: %s",
			ssl_reason(why, sizeof(why)));
		goto err_free;
	}
	/*
	 * AES-128-GCM-SHA256 first: an external PSK is bound to the suite's
	 * hash, and a server that picked a SHA-384 suite would ignore it
	 */
	if (!SSL_CTX_set_ciphersuites(c->ctx, "TLS_AES_128_GCM_SHA256:"
					      "TLS_AES_256_GCM_SHA384:"
					      "TLS_CHACHA20_POLY1305_SHA256")) {
		rpmem_set_err(err, errlen, "cannot set the TLS 1.3 suites: %s",
			ssl_reason(why, sizeof(why)));
		goto err_free;
	}
	/* OpenSSL wants one for verified peers, PSK handshakes included */
	if (cfg->server &&
	    !SSL_CTX_set_session_id_context(c->ctx, (const uint8_t *)"rpmemd",
					    6)) {
		rpmem_set_err(err, errlen, "cannot set the TLS session context: %s",
			ssl_reason(why, sizeof(why)));
		goto err_free;
	}
	/*
	 * bulk transfers: read whatever has arrived into a large buffer (one
	 * recv for many records instead of two per record)
	 */
	SSL_CTX_set_read_ahead(c->ctx, 1);
	SSL_CTX_set_default_read_buffer_len(c->ctx, RPMEM_TLS_READ_BUF);
	/* no tickets: every connection authenticates afresh */
	SSL_CTX_set_num_tickets(c->ctx, 0);
	SSL_CTX_set_session_cache_mode(c->ctx, SSL_SESS_CACHE_OFF);
	SSL_CTX_set_options(c->ctx, SSL_OP_NO_TICKET | SSL_OP_NO_RENEGOTIATION);

	if (cfg->cert_file || cfg->key_file) {
		if (!cfg->cert_file || !cfg->key_file) {
			rpmem_set_err(err, errlen,
				"a TLS certificate needs its key, and a key its certificate");
			goto err_free;
		}
		if ((ret = rpmem_key_file_check(cfg->key_file, err, errlen)))
			goto err_free;
		ret = -EINVAL;
		if (SSL_CTX_use_certificate_chain_file(c->ctx,
						       cfg->cert_file) != 1) {
			rpmem_set_err(err, errlen, "certificate %s: %s",
				cfg->cert_file, ssl_reason(why, sizeof(why)));
			goto err_free;
		}
		if (SSL_CTX_use_PrivateKey_file(c->ctx, cfg->key_file,
						SSL_FILETYPE_PEM) != 1 ||
		    SSL_CTX_check_private_key(c->ctx) != 1) {
			rpmem_set_err(err, errlen, "key %s (for %s): %s",
				cfg->key_file, cfg->cert_file,
				ssl_reason(why, sizeof(why)));
			goto err_free;
		}
		c->x509 = 1;
	}
	if (cfg->ca_file) {
		if (SSL_CTX_load_verify_locations(c->ctx, cfg->ca_file,
						  NULL) != 1) {
			rpmem_set_err(err, errlen, "CA file %s: %s", cfg->ca_file,
				ssl_reason(why, sizeof(why)));
			goto err_free;
		}
		SSL_CTX_set_verify(c->ctx,
				   SSL_VERIFY_PEER |
					   SSL_VERIFY_FAIL_IF_NO_PEER_CERT,
				   cfg->server ? client_cert_cb : NULL);
	} else if (c->x509) {
		rpmem_set_err(err, errlen,
			"certificates need a CA file to verify the peer's");
		goto err_free;
	}
	if (cfg->server) {
		c->lookup = cfg->psk_lookup;
		c->arg = cfg->psk_arg;
		if (c->lookup)
			SSL_CTX_set_psk_find_session_callback(c->ctx,
							      find_psk_cb);
		if (!c->lookup && !c->x509) {
			rpmem_set_err(err, errlen,
				"TLS needs a certificate and key, or PSK identities");
			goto err_free;
		}
	} else if (cfg->psk) {
		if (!cfg->psk_identity ||
		    !rpmem_psk_valid_identity(cfg->psk_identity) ||
		    cfg->psk_len < RPMEM_PSK_MIN ||
		    cfg->psk_len > RPMEM_PSK_MAX) {
			rpmem_set_err(err, errlen,
				"a PSK needs a valid identity and %d to %d bytes of key",
				RPMEM_PSK_MIN, RPMEM_PSK_MAX);
			goto err_free;
		}
		rpmem_strlcpy(c->psk_id, cfg->psk_identity, sizeof(c->psk_id));
		memcpy(c->psk, cfg->psk, cfg->psk_len);
		c->psk_len = cfg->psk_len;
		SSL_CTX_set_psk_use_session_callback(c->ctx, use_psk_cb);
		/*
		 * a target that holds our key proves it with the PSK
		 * handshake; one that answers with a certificate does not
		 * hold it, whoever signed the certificate
		 */
		SSL_CTX_set_verify(c->ctx, SSL_VERIFY_PEER, refuse_cert_cb);
	} else if (!cfg->ca_file) {
		rpmem_set_err(err, errlen,
			"TLS needs a CA file to verify the target, or a PSK");
		goto err_free;
	}
	*out = c;
	return 0;

err_free:
	rpmem_tls_ctx_free(&c);
	return ret;
}

/*
 * take_name -- s[n] (NUL-terminated) as an identity into
 * buf[RPMEM_IDENTITY_MAX + 1]: NULL, or why it cannot be one (a name is
 * refused, never cut or read up to a NUL; a control character is one of
 * rpmem_utf8_control's, C1 and bidirectional controls too)
 */
static const char *take_name(const unsigned char *s, int n, char *buf)
{
	if (n <= 0)
		return "is empty";
	if (n > RPMEM_IDENTITY_MAX)
		return "is longer than the 128 bytes of an identity";
	for (int i = 0; i < n; i += (int)rpmem_utf8_len((const char *)s + i)) {
		if (!s[i] || rpmem_utf8_control((const char *)s + i))
			return "holds a NUL or a control character";
		if (!rpmem_utf8_len((const char *)s + i))
			return "is not well-formed UTF-8";
	}
	memcpy(buf, s, (size_t)n);
	buf[n] = '\0';
	return NULL;
}

/* cn_name -- the subject CN at i of name into buf; NULL, or why not */
static const char *cn_name(X509_NAME *name, int i, char *buf)
{
	unsigned char *u = NULL;

	if (X509_NAME_get_index_by_NID(name, NID_commonName, i) >= 0)
		return "is given more than once";
	X509_NAME_ENTRY *e = X509_NAME_get_entry(name, i);
	int n = ASN1_STRING_to_UTF8(&u, X509_NAME_ENTRY_get_data(e));
	const char *bad = n < 0 ? "is not text" : take_name(u, n, buf);
	OPENSSL_free(u);
	return bad;
}

/* dns_name -- the first DNS name of cert into buf; NULL, or why not */
static const char *dns_name(X509 *cert, char *buf)
{
	GENERAL_NAMES *names =
		X509_get_ext_d2i(cert, NID_subject_alt_name, NULL, NULL);
	const char *bad = "is missing";

	for (int k = 0; names && k < sk_GENERAL_NAME_num(names); k++) {
		GENERAL_NAME *g = sk_GENERAL_NAME_value(names, k);
		if (g->type != GEN_DNS)
			continue;
		bad = take_name(ASN1_STRING_get0_data(g->d.dNSName),
				ASN1_STRING_length(g->d.dNSName), buf);
		break;
	}
	GENERAL_NAMES_free(names);
	return bad;
}

/*
 * cert_identity -- the subject CN of cert (one only), else its first DNS
 * name, into buf[RPMEM_IDENTITY_MAX + 1]; 0, or -EACCES and why in
 * why[wlen]
 */
static int cert_identity(X509 *cert, char *buf, char *why, size_t wlen)
{
	X509_NAME *name = X509_get_subject_name(cert);
	int i = X509_NAME_get_index_by_NID(name, NID_commonName, -1);

	buf[0] = '\0';
	const char *bad = i >= 0 ? cn_name(name, i, buf) : dns_name(cert, buf);
	if (bad)
		rpmem_set_err(why, wlen, "certificate's %s %s",
			i >= 0 ? "subject CN" :
				 "subject CN is missing and its first DNS name",
			bad);
	return bad ? -EACCES : 0;
}

/*
 * client_cert_cb -- server: a client certificate that verified must also
 * name an identity we can use, refused in the handshake (with an alert
 * the client sees) if not; why in t->err
 */
static int client_cert_cb(int ok, X509_STORE_CTX *x)
{
	SSL *ssl = X509_STORE_CTX_get_ex_data(
		x, SSL_get_ex_data_X509_STORE_CTX_idx());
	struct rpmem_tls *t = ssl ? SSL_get_ex_data(ssl, ex_index) : NULL;
	char id[RPMEM_IDENTITY_MAX + 1];

	if (!ok || !t || X509_STORE_CTX_get_error_depth(x) != 0)
		return ok;
	if (!cert_identity(X509_STORE_CTX_get_current_cert(x), id, t->err,
			   sizeof(t->err)))
		return 1;
	X509_STORE_CTX_set_error(x, X509_V_ERR_APPLICATION_VERIFICATION);
	return 0;
}

/*
 * cred_alert -- OpenSSL's reason is an alert from the peer that refuses
 * our credentials (not one about a malformed or cut message)
 */
static int cred_alert(int reason)
{
	static const int ad[] = {
		SSL_AD_HANDSHAKE_FAILURE,    SSL_AD_BAD_CERTIFICATE,
		SSL_AD_UNSUPPORTED_CERTIFICATE,
		SSL_AD_CERTIFICATE_REVOKED,  SSL_AD_CERTIFICATE_EXPIRED,
		SSL_AD_CERTIFICATE_UNKNOWN,  SSL_AD_ILLEGAL_PARAMETER,
		SSL_AD_UNKNOWN_CA,	     SSL_AD_ACCESS_DENIED,
		SSL_AD_DECRYPT_ERROR,	     SSL_AD_CERTIFICATE_REQUIRED,
		SSL_AD_UNKNOWN_PSK_IDENTITY,
	};
	for (size_t i = 0; i < sizeof(ad) / sizeof(ad[0]); i++)
		if (reason == SSL_AD_REASON_OFFSET + ad[i])
			return 1;
	return 0;
}

/*
 * handshake_err -- why SSL_connect/SSL_accept returned r: the message
 * into err, and -EACCES (credentials), -EPROTO (not TLS) or -errno
 */
static int handshake_err(struct rpmem_tls_ctx *c, struct rpmem_tls *t, int r,
			 char *err, size_t errlen)
{
	SSL *ssl = t->ssl;
	const char *claimed = t->claimed;
	int e = SSL_get_error(ssl, r);
	int saved = errno;
	unsigned long q = ERR_peek_error();
	int reason = q ? ERR_GET_REASON(q) : 0;
	const char *peer = c->server ? "the client" : "the target";
	char why[RPMEM_MSG_MAX];

	if (t->cert_offered) {
		ERR_clear_error();
		rpmem_set_err(err, errlen,
			"the target answered with a certificate instead of proving it holds our pre-shared key (identity '%s'): it is not the target we share the key with, refused",
			c->psk_id);
		return -EACCES;
	}
	if (c->server && t->err[0]) {
		ERR_clear_error();
		rpmem_set_err(err, errlen, "the client's %s", t->err);
		return -EACCES;
	}
	if (reason == SSL_R_CERTIFICATE_VERIFY_FAILED &&
	    SSL_get_verify_result(ssl) != X509_V_OK) {
		long v = SSL_get_verify_result(ssl);
		ERR_clear_error();
		rpmem_set_err(err, errlen, "%s's certificate was not accepted: %s",
			c->server ? "the client" : "the target",
			X509_verify_cert_error_string(v));
		return -EACCES;
	}
	if (reason == SSL_R_UNEXPECTED_EOF_WHILE_READING)
		saved = 0; /* an EOF: errno is a stale one */
	if ((e == SSL_ERROR_SYSCALL && !q) ||
	    reason == SSL_R_UNEXPECTED_EOF_WHILE_READING) {
		ERR_clear_error();
		if (saved == EAGAIN || saved == EWOULDBLOCK) {
			rpmem_set_err(err, errlen, "the TLS handshake timed out");
			return -ETIMEDOUT;
		}
		rpmem_set_err(err, errlen,
			"%s closed the connection during the TLS handshake without a TLS alert%s",
			peer,
			c->server ? "" :
				    " (it may be busy or stopping, or not a TLS target; retry, or check its log)");
		return saved && saved != EPIPE ? -saved : -ECONNRESET;
	}
	if (reason == SSL_R_WRONG_VERSION_NUMBER ||
	    reason == SSL_R_PACKET_LENGTH_TOO_LONG ||
	    reason == SSL_R_HTTP_REQUEST || reason == SSL_R_UNKNOWN_PROTOCOL) {
		ERR_clear_error();
		rpmem_set_err(err, errlen,
			c->server ?
				"the client does not speak TLS (a plaintext rpmemctl? give it credentials)" :
				"the target does not answer with TLS (is it a plaintext rpmemd? check the tls settings of both ends)");
		return -EPROTO;
	}
	ssl_reason(why, sizeof(why));
	if (!c->server && !cred_alert(reason)) {
		rpmem_set_err(err, errlen,
			"TLS handshake failed: %s%s", why,
			reason > SSL_AD_REASON_OFFSET ?
				" (the target closed the connection during the handshake, not refusing our credentials: it may be busy or stopping; retry, or check its log)" :
				"");
		return reason > SSL_AD_REASON_OFFSET ? -ECONNRESET : -EACCES;
	}
	if (c->server && claimed[0])
		rpmem_set_err(err, errlen,
			"TLS handshake failed for claimed identity '%s'%s: %s",
			claimed,
			t->unknown_id ? " (not in tls.psk_file)" :
					" (in tls.psk_file: a wrong key?)",
			why);
	else
		rpmem_set_err(err, errlen, "TLS handshake failed: %s%s", why,
			c->server ? "" : " (the target refused our credentials)");
	return -EACCES;
}

/*
 * expect_name -- client with certificates: the target's certificate must
 * name host (a DNS name, or an IP address); there is always one to check
 */
static int expect_name(SSL *ssl, const char *host, char *err, size_t errlen)
{
	X509_VERIFY_PARAM *vp = SSL_get0_param(ssl);
	struct in6_addr a6;
	struct in_addr a4;

	if (!host || !*host) {
		rpmem_set_err(err, errlen,
			"no name to check the target's certificate against");
		return -EINVAL;
	}
	int ip = inet_pton(AF_INET, host, &a4) == 1 ||
		 inet_pton(AF_INET6, host, &a6) == 1;
	if (ip ? X509_VERIFY_PARAM_set1_ip_asc(vp, host) != 1 :
		 X509_VERIFY_PARAM_set1_host(vp, host, 0) != 1 ||
			 SSL_set_tlsext_host_name(ssl, host) != 1) {
		rpmem_set_err(err, errlen, "'%s' cannot be a certificate's name",
			host);
		return -EINVAL;
	}
	return 0;
}

/*
 * peer_authenticated -- after the handshake, whatever the callbacks did:
 * the peer proved a PSK we know (and a client holding one accepts nothing
 * else), or presented a certificate that verified (for a client, naming
 * the target) and names an identity; else -EACCES and why
 */
static int peer_authenticated(struct rpmem_tls_ctx *c, struct rpmem_tls *t,
			      char *err, size_t errlen)
{
	const char *who = c->server ? "the client" : "the target";
	char why[RPMEM_MSG_MAX];

	if (SSL_session_reused(t->ssl) && !t->unknown_id) {
		t->method = "psk";
		rpmem_strlcpy(t->peer, c->server ? t->claimed : c->psk_id,
			      sizeof(t->peer));
		return 0;
	}
	if (c->psk_len) {
		rpmem_set_err(err, errlen,
			"the target did not authenticate with our pre-shared key (identity '%s'): refused",
			c->psk_id);
		return -EACCES;
	}
	X509 *cert = SSL_get0_peer_certificate(t->ssl);
	long v = SSL_get_verify_result(t->ssl);
	if (!cert || v != X509_V_OK || (c->server && !c->x509)) {
		rpmem_set_err(err, errlen, "%s's certificate was not accepted: %s",
			who, cert ? X509_verify_cert_error_string(v) :
				    "it presented none");
		return -EACCES;
	}
	if (cert_identity(cert, t->peer, why, sizeof(why))) {
		rpmem_set_err(err, errlen, "%s's %s", who, why);
		return -EACCES;
	}
	t->method = "x509";
	return 0;
}

/*
 * nopipe_begin / nopipe_end -- OpenSSL writes with write(2): a peer that
 * closed must not raise SIGPIPE in the application; a SIGPIPE our write
 * raised is consumed unless one was pending already
 */
static void nopipe_begin(sigset_t *old)
{
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &s, old);
}

static void nopipe_end(const sigset_t *old)
{
	sigset_t s, pend;
	sigemptyset(&s);
	sigaddset(&s, SIGPIPE);
	if (!sigismember(old, SIGPIPE) && !sigpending(&pend) &&
	    sigismember(&pend, SIGPIPE)) {
		struct timespec zero = { 0 };
		sigtimedwait(&s, NULL, &zero);
	}
	pthread_sigmask(SIG_SETMASK, old, NULL);
}

/*
 * handshake_until -- SSL_accept/SSL_connect; under conn's deadline the
 * socket is non-blocking for the handshake and every wait is a poll
 * bounded by the time left, so a peer trickling bytes cannot stretch it.
 * Returns SSL's 1/<= 0, or -ETIMEDOUT.
 */
static int handshake_until(struct rpmem_tls_ctx *c, SSL *ssl,
			   struct rpmem_conn *conn)
{
	int flags = -1, r;

	if (conn->deadline_ns) {
		flags = fcntl(conn->fd, F_GETFL);
		if (flags >= 0)
			fcntl(conn->fd, F_SETFL, flags | O_NONBLOCK);
	}
	for (;;) {
		r = c->server ? SSL_accept(ssl) : SSL_connect(ssl);
		if (r == 1 || flags < 0)
			break;
		int e = SSL_get_error(ssl, r);
		if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE)
			break;
		uint64_t now = rpmem_now_ns();
		struct pollfd p = { .fd = conn->fd,
				    .events = e == SSL_ERROR_WANT_READ ?
						      POLLIN :
						      POLLOUT };
		int n = 0;
		if (now < conn->deadline_ns) {
			do
				n = poll(&p, 1,
					 (int)((conn->deadline_ns - now) /
						       1000000 +
					       1));
			while (n < 0 && errno == EINTR);
		}
		if (n <= 0) {
			ERR_clear_error();
			r = -ETIMEDOUT;
			break;
		}
	}
	if (flags >= 0)
		fcntl(conn->fd, F_SETFL, flags);
	return r;
}

int rpmem_tls_start(struct rpmem_tls_ctx *c, struct rpmem_conn *conn,
		    const char *host, char *err, size_t errlen)
{
	struct rpmem_tls *t = calloc(1, sizeof(*t));
	char why[RPMEM_MSG_MAX];
	int ret;

	if (!t)
		return -ENOMEM;
	ERR_clear_error();
	t->ssl = SSL_new(c->ctx);
	/* straight to the socket; long frames through a buffer (wbuf_on) */
	BIO *sb = BIO_new_socket(conn->fd, BIO_NOCLOSE);
	if (t->ssl && sb) {
		SSL_set_bio(t->ssl, sb, sb);
		sb = NULL;
	}
	BIO_free(sb);
	if (!t->ssl || !SSL_get_wbio(t->ssl) ||
	    !SSL_set_ex_data(t->ssl, ex_index, t)) {
		rpmem_set_err(err, errlen, "cannot start TLS: %s",
			ssl_reason(why, sizeof(why)));
		ret = -ENOMEM;
		goto err_free;
	}
	if (!c->server && !c->psk_len &&
	    (ret = expect_name(t->ssl, host, err, errlen)))
		goto err_free;
	sigset_t old;
	nopipe_begin(&old);
	int r = handshake_until(c, t->ssl, conn);
	nopipe_end(&old);
	if (r == -ETIMEDOUT) {
		rpmem_set_err(err, errlen, "the TLS handshake timed out");
		ret = -ETIMEDOUT;
		goto err_free;
	}
	if (r != 1) {
		ret = handshake_err(c, t, r, err, errlen);
		goto err_free;
	}
	if ((ret = peer_authenticated(c, t, err, errlen)))
		goto err_free;
	conn->tls = t;
	return 0;

err_free:
	if (c->server && t->claimed[0] && err && errlen &&
	    !strstr(err, t->claimed))
		DBG("tls: client claimed identity '%s'", t->claimed);
	SSL_free(t->ssl);
	free(t);
	return ret;
}

const char *rpmem_tls_peer(const struct rpmem_tls *t)
{
	return t ? t->peer : "";
}

const char *rpmem_tls_error(const struct rpmem_tls *t)
{
	return t ? t->err : "";
}

int rpmem_tls_refused(const struct rpmem_tls *t)
{
	return t && t->refused;
}

const char *rpmem_tls_method(const struct rpmem_tls *t)
{
	return t ? t->method : "none";
}

int rpmem_tls_export(struct rpmem_tls *t, const char *label, const void *ctx,
		     size_t ctx_len, uint8_t *out, size_t len)
{
	if (!t || !label || !out || (!ctx && ctx_len))
		return -EINVAL;
	if (SSL_export_keying_material(t->ssl, out, len, label, strlen(label),
				       ctx, ctx_len, 1) != 1) {
		ERR_clear_error();
		return -EIO;
	}
	return 0;
}

/* io_err -- an SSL_read/SSL_write failure as -errno; t->err says why */
static int io_err(struct rpmem_tls *t, int r, int saved)
{
	SSL *ssl = t->ssl;
	int e = SSL_get_error(ssl, r);
	unsigned long q = ERR_peek_error();
	if (e == SSL_ERROR_SSL && !t->err[0]) {
		t->refused = cred_alert(ERR_GET_REASON(q));
		ssl_reason(t->err, sizeof(t->err));
	}
	ERR_clear_error();
	/* the peer's socket closed without a close_notify: not tampering */
	if (e == SSL_ERROR_SSL && q &&
	    ERR_GET_REASON(q) == SSL_R_UNEXPECTED_EOF_WHILE_READING)
		return -ENOTCONN;
	switch (e) {
	case SSL_ERROR_ZERO_RETURN:
		return -ECONNRESET;
	case SSL_ERROR_WANT_READ:
	case SSL_ERROR_WANT_WRITE:
		return -ETIMEDOUT;
	case SSL_ERROR_SYSCALL:
		if (saved == EAGAIN || saved == EWOULDBLOCK)
			return -ETIMEDOUT;
		if (!saved)
			return -ENOTCONN;
		if (saved == EPIPE)
			return -ECONNRESET;
		return -saved;
	default:
		/*
		 * a record that does not authenticate (tampering), or the
		 * peer's alert saying so; not -EBADMSG, which means a bad
		 * frame header above
		 */
		return -ECOMM;
	}
}

ssize_t rpmem_tls_read(struct rpmem_tls *t, void *buf, size_t len)
{
	size_t n = 0;
	errno = 0;
	int r = SSL_read_ex(t->ssl, buf, len, &n);
	if (r == 1)
		return (ssize_t)n;
	return io_err(t, r, errno);
}

/*
 * wbuf_on -- put a write buffer of RPMEM_TLS_WRITE_BUF before the socket
 * (between frames, when it is empty); failing, records go one by one
 */
static void wbuf_on(struct rpmem_tls *t)
{
	BIO *sb = SSL_get_rbio(t->ssl);
	BIO *wb = BIO_new(BIO_f_buffer());

	if (!wb || BIO_set_write_buffer_size(wb, RPMEM_TLS_WRITE_BUF) <= 0 ||
	    !BIO_up_ref(sb)) {
		BIO_free(wb);
		return;
	}
	BIO_push(wb, sb);
	/* the SSL's reference to the bare socket BIO goes to the chain */
	SSL_set0_wbio(t->ssl, wb);
	t->wbuf = 1;
}

/* wbuf_off -- write straight to the socket again, the buffer freed */
static void wbuf_off(struct rpmem_tls *t)
{
	BIO *sb = SSL_get_rbio(t->ssl);

	if (!t->wbuf || BIO_wpending(SSL_get_wbio(t->ssl)) ||
	    !BIO_up_ref(sb))
		return;
	/* frees the buffer BIO, and its reference to the socket BIO */
	SSL_set0_wbio(t->ssl, sb);
	t->wbuf = 0;
}

int rpmem_tls_writev(struct rpmem_tls *t, const struct iovec *iov,
		     unsigned n)
{
	sigset_t old;
	int ret = 0, saved = 0;
	size_t total = 0;

	for (unsigned i = 0; i < n; i++)
		total += iov[i].iov_len;
	if (total > RPMEM_TLS_RECORD && !t->wbuf)
		wbuf_on(t);
	nopipe_begin(&old);
	for (unsigned i = 0; i < n && !ret; i++) {
		const uint8_t *buf = iov[i].iov_base;
		size_t len = iov[i].iov_len;
		while (len) {
			size_t w = 0;
			errno = 0;
			int r = SSL_write_ex(t->ssl, buf, len, &w);
			if (r != 1) {
				saved = errno;
				ret = io_err(t, r, saved);
				break;
			}
			buf += w;
			len -= w;
		}
	}
	if (!ret) {
		errno = 0;
		if (BIO_flush(SSL_get_wbio(t->ssl)) <= 0) {
			saved = errno;
			ERR_clear_error();
			ret = saved == EAGAIN || saved == EWOULDBLOCK ?
				      -ETIMEDOUT :
			      saved && saved != EPIPE ? -saved :
							-ECONNRESET;
		}
	}
	nopipe_end(&old);
	return ret;
}

int rpmem_tls_write(struct rpmem_tls *t, const void *buf, size_t len)
{
	struct iovec v = { (void *)buf, len };
	return rpmem_tls_writev(t, &v, 1);
}

int rpmem_tls_pending(const struct rpmem_tls *t)
{
	return SSL_has_pending(t->ssl);
}

void rpmem_tls_trim(struct rpmem_tls *t)
{
	if (SSL_has_pending(t->ssl))
		return;
	/* 0: in use (a record half read or written), kept */
	SSL_free_buffers(t->ssl);
	wbuf_off(t);
}

void rpmem_tls_close_notify(struct rpmem_tls *t)
{
	sigset_t old;

	nopipe_begin(&old);
	if (SSL_shutdown(t->ssl) < 0 || BIO_flush(SSL_get_wbio(t->ssl)) <= 0)
		ERR_clear_error();
	nopipe_end(&old);
}

void rpmem_tls_free(struct rpmem_tls **pt)
{
	struct rpmem_tls *t = pt ? *pt : NULL;
	if (!t)
		return;
	/* best effort: a peer that stopped reading must not block us */
	SSL_set_quiet_shutdown(t->ssl, 1);
	SSL_free(t->ssl);
	free(t);
	*pt = NULL;
}
