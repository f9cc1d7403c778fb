/* SPDX-License-Identifier: BSD-3-Clause */
/* tls_export.c -- unit tests of TLS exporter keying material (tls.c) */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "net.h"
#include "proto.h"
#include "tls.h"
#include "util.h"

#define LABEL "EXPORTER-rpmem-rdma-token"

static const uint8_t key[RPMEM_PSK_LEN] = { 1, 2, 3, 4, 5, 6, 7, 8, 9 };

/* lookup -- the server knows one identity, "backup1" */
static int lookup(void *arg, const char *identity, uint8_t *k, size_t *len)
{
	(void)arg;
	if (strcmp(identity, "backup1"))
		return -ENOENT;
	memcpy(k, key, sizeof(key));
	*len = sizeof(key);
	return 0;
}

/* one TLS session over a socketpair: both ends */
struct pair {
	struct rpmem_tls_ctx *sctx, *cctx;
	struct rpmem_conn s, c;
	int sret;
};

/* server_side -- the server's handshake, in its own thread */
static void *server_side(void *arg)
{
	struct pair *p = arg;
	char err[256];

	p->sret = rpmem_tls_start(p->sctx, &p->s, NULL, err, sizeof(err));
	return NULL;
}

/* pair_open -- a PSK TLS 1.3 session between two ends of a socketpair */
static void pair_open(struct pair *p)
{
	struct rpmem_tls_cfg scfg = { .server = 1, .psk_lookup = lookup };
	struct rpmem_tls_cfg ccfg = { .psk_identity = "backup1",
				      .psk = key,
				      .psk_len = sizeof(key) };
	char err[256];
	pthread_t t;
	int sv[2];

	memset(p, 0, sizeof(*p));
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	rpmem_conn_init(&p->s, sv[0]);
	rpmem_conn_init(&p->c, sv[1]);
	assert_int_equal(rpmem_tls_ctx_new(&scfg, &p->sctx, err, sizeof(err)),
			 0);
	assert_int_equal(rpmem_tls_ctx_new(&ccfg, &p->cctx, err, sizeof(err)),
			 0);
	assert_int_equal(pthread_create(&t, NULL, server_side, p), 0);
	assert_int_equal(rpmem_tls_start(p->cctx, &p->c, NULL, err,
					 sizeof(err)),
			 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(p->sret, 0);
}

/* pair_close -- both ends and their contexts */
static void pair_close(struct pair *p)
{
	rpmem_conn_close(&p->c);
	rpmem_conn_close(&p->s);
	rpmem_tls_ctx_free(&p->cctx);
	rpmem_tls_ctx_free(&p->sctx);
}

static void rpmem_tls_export__both_ends_derive_the_same_token(void **state)
{
	uint8_t nonce[RPMEM_TOKEN_LEN] = { 0xa5, 1, 2, 3 };
	uint8_t a[RPMEM_TOKEN_LEN], b[RPMEM_TOKEN_LEN];
	struct pair p;

	(void)state;
	pair_open(&p);
	assert_int_equal(rpmem_tls_export(p.s.tls, LABEL, nonce, sizeof(nonce),
					  a, sizeof(a)),
			 0);
	assert_int_equal(rpmem_tls_export(p.c.tls, LABEL, nonce, sizeof(nonce),
					  b, sizeof(b)),
			 0);
	assert_memory_equal(a, b, sizeof(a));
	assert_memory_not_equal(a, nonce, sizeof(a));
	pair_close(&p);
}

static void rpmem_tls_export__another_nonce_gives_another_token(void **state)
{
	uint8_t n1[RPMEM_TOKEN_LEN] = { 1 }, n2[RPMEM_TOKEN_LEN] = { 2 };
	uint8_t a[RPMEM_TOKEN_LEN], b[RPMEM_TOKEN_LEN];
	struct pair p;

	(void)state;
	pair_open(&p);
	assert_int_equal(rpmem_tls_export(p.s.tls, LABEL, n1, sizeof(n1), a,
					  sizeof(a)),
			 0);
	assert_int_equal(rpmem_tls_export(p.s.tls, LABEL, n2, sizeof(n2), b,
					  sizeof(b)),
			 0);
	assert_memory_not_equal(a, b, sizeof(a));
	pair_close(&p);
}

static void rpmem_tls_export__another_session_gives_another_token(void **state)
{
	uint8_t nonce[RPMEM_TOKEN_LEN] = { 7 };
	uint8_t a[RPMEM_TOKEN_LEN], b[RPMEM_TOKEN_LEN];
	struct pair p, q;

	(void)state;
	/* same key, same identity, same nonce: only the session differs */
	pair_open(&p);
	pair_open(&q);
	assert_int_equal(rpmem_tls_export(p.s.tls, LABEL, nonce, sizeof(nonce),
					  a, sizeof(a)),
			 0);
	assert_int_equal(rpmem_tls_export(q.c.tls, LABEL, nonce, sizeof(nonce),
					  b, sizeof(b)),
			 0);
	assert_memory_not_equal(a, b, sizeof(a));
	pair_close(&q);
	pair_close(&p);
}

static void rpmem_tls_export__rejects_missing_arguments(void **state)
{
	uint8_t out[RPMEM_TOKEN_LEN];
	struct pair p;

	(void)state;
	assert_int_equal(rpmem_tls_export(NULL, LABEL, NULL, 0, out,
					  sizeof(out)),
			 -EINVAL);
	pair_open(&p);
	assert_int_equal(rpmem_tls_export(p.c.tls, LABEL, NULL, 4, out,
					  sizeof(out)),
			 -EINVAL);
	pair_close(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(
			rpmem_tls_export__both_ends_derive_the_same_token),
		cmocka_unit_test(
			rpmem_tls_export__another_nonce_gives_another_token),
		cmocka_unit_test(
			rpmem_tls_export__another_session_gives_another_token),
		cmocka_unit_test(rpmem_tls_export__rejects_missing_arguments),
	};
	return cmocka_run_group_tests_name("tls_export", tests, NULL, NULL);
}
