/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * handshake_fuzz.c -- fuzz target for what a peer sends before it is
 * trusted: the TLS ClientHello with its PSK identity (through the real
 * rpmem_tls_start of a server with PSK identities), HELLO, HELLO_OK and
 * ERROR payloads, and the PSK file lines rpmemd reads.
 *
 * Built two ways (tests/fuzz/fuzz.mk):
 * - with clang -fsanitize=fuzzer,address: a libFuzzer target (make fuzz);
 * - with the normal compiler (-DFUZZ_DRIVER): a driver that captures a
 *   real PSK ClientHello from the client side, then feeds the server N
 *   mutations of it and N random inputs for each parser, and exits 0 if
 *   nothing crashed and no garbage was accepted (run by the BATS suite).
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "log.h"
#include "net.h"
#include "proto.h"
#include "tls.h"
#include "util.h"

static struct rpmem_tls_ctx *server_ctx;
static const uint8_t known_key[32] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 };

/* lookup -- one known identity, "fuzz" */
static int lookup(void *arg, const char *id, uint8_t *key, size_t *len)
{
	(void)arg;
	if (strcmp(id, "fuzz"))
		return -ENOENT;
	memcpy(key, known_key, sizeof(known_key));
	*len = sizeof(known_key);
	return 0;
}

/* init -- the server context, once */
static void init(void)
{
	char err[256];
	struct rpmem_tls_cfg cfg = { .server = 1,
				     .psk_lookup = lookup,
				     .psk_arg = NULL };
	if (server_ctx)
		return;
	rpmem_log_init("fuzz", LOG_EMERG, NULL, NULL);
	if (rpmem_tls_ctx_new(&cfg, &server_ctx, err, sizeof(err))) {
		fprintf(stderr, "server context: %s\n", err);
		abort();
	}
}

/*
 * tls_server -- a TLS server handshake over a socketpair whose other end
 * sent data and closed; returns rpmem_tls_start's result
 */
static int tls_server(const uint8_t *data, size_t size)
{
	struct rpmem_conn c;
	char err[256];
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		abort();
	/* the socket buffer takes a ClientHello-sized input whole */
	if (size > 65536)
		size = 65536;
	int sz = 256 << 10;
	setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
	if (size && write(sv[0], data, size) != (ssize_t)size)
		abort();
	shutdown(sv[0], SHUT_WR);
	rpmem_conn_init(&c, sv[1]);
	rpmem_conn_set_deadline(&c, rpmem_now_ns() + 2000000000ull);
	int ret = rpmem_tls_start(server_ctx, &c, NULL, err, sizeof(err));
	close(sv[0]);
	rpmem_conn_close(&c);
	return ret;
}

/* one_input -- the first byte picks the parser; the rest is its input */
static int one_input(const uint8_t *data, size_t size)
{
	char id[RPMEM_IDENTITY_MAX + 1], line[600];
	uint8_t key[RPMEM_PSK_MAX];
	size_t klen;

	if (size < 1)
		return 0;
	const uint8_t *p = data + 1;
	size_t n = size - 1;
	switch (data[0] % 5) {
	case 0: {
		struct rpmem_msg_hello m;
		(void)rpmem_hello_decode(p, n, &m);
		break;
	}
	case 1: {
		struct rpmem_msg_hello_ok m;
		(void)rpmem_hello_ok_decode(p, n, &m);
		break;
	}
	case 2: {
		struct rpmem_msg_error m;
		(void)rpmem_error_decode(p, n, &m);
		break;
	}
	case 3:
		if (n >= sizeof(line))
			n = sizeof(line) - 1;
		memcpy(line, p, n);
		line[n] = '\0';
		(void)rpmem_psk_parse_line(line, id, key, &klen);
		break;
	default:
		init();
		/* no garbage may ever authenticate */
		if (tls_server(p, n) == 0)
			abort();
		break;
	}
	return 0;
}

#ifndef FUZZ_DRIVER
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return one_input(data, size);
}
#else

struct capture {
	int fd;
	uint8_t buf[16384];
	size_t len;
};

/* capture_thread -- read what the client sends first (its ClientHello) */
static void *capture_thread(void *arg)
{
	struct capture *cap = arg;
	ssize_t r = read(cap->fd, cap->buf, sizeof(cap->buf));
	cap->len = r > 0 ? (size_t)r : 0;
	/* no answer: the client gives up */
	shutdown(cap->fd, SHUT_RDWR);
	return NULL;
}

/* client_hello -- a real ClientHello offering PSK identity "fuzz" */
static size_t client_hello(uint8_t *out, size_t cap_len)
{
	struct rpmem_tls_cfg cfg = { .server = 0,
				     .psk_identity = "fuzz",
				     .psk = known_key,
				     .psk_len = sizeof(known_key) };
	struct rpmem_tls_ctx *ctx;
	struct capture cap;
	struct rpmem_conn c;
	char err[256];
	pthread_t t;
	int sv[2];

	if (rpmem_tls_ctx_new(&cfg, &ctx, err, sizeof(err)) ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		abort();
	cap.fd = sv[1];
	pthread_create(&t, NULL, capture_thread, &cap);
	rpmem_conn_init(&c, sv[0]);
	rpmem_conn_set_rcvtimeo(&c, 2000);
	(void)rpmem_tls_start(ctx, &c, NULL, err, sizeof(err));
	pthread_join(t, NULL);
	rpmem_conn_close(&c);
	close(sv[1]);
	rpmem_tls_ctx_free(&ctx);
	size_t n = cap.len < cap_len ? cap.len : cap_len;
	memcpy(out, cap.buf, n);
	return n;
}

int main(int argc, char **argv)
{
	unsigned runs = argc > 1 ? (unsigned)atoi(argv[1]) : 2000;
	uint8_t hello[16385], in[16385];
	unsigned seed = 1;

	init();
	hello[0] = 4;
	size_t hl = client_hello(hello + 1, sizeof(hello) - 1);
	if (hl < 100) {
		fprintf(stderr, "no ClientHello captured (%zu bytes)\n", hl);
		return 1;
	}
	printf("captured a %zu-byte PSK ClientHello\n", hl);
	for (unsigned i = 0; i < runs; i++) {
		/* a mutated ClientHello: 1 to 8 bytes changed */
		memcpy(in, hello, hl + 1);
		unsigned k = 1 + rand_r(&seed) % 8;
		for (unsigned j = 0; j < k; j++)
			in[1 + rand_r(&seed) % hl] ^=
				(uint8_t)(1 + rand_r(&seed) % 255);
		size_t len = 1 + hl;
		if (rand_r(&seed) % 4 == 0)
			len = 1 + rand_r(&seed) % hl; /* cut short */
		one_input(in, len);
		/* random input for each of the parsers */
		for (uint8_t sel = 0; sel < 4; sel++) {
			size_t n = rand_r(&seed) % 700;
			in[0] = sel;
			for (size_t j = 1; j <= n; j++)
				in[j] = (uint8_t)rand_r(&seed);
			one_input(in, n + 1);
		}
	}
	printf("fuzz: %u mutated ClientHellos and %u inputs per parser, nothing accepted, no crash\n",
	       runs, runs);
	rpmem_tls_ctx_free(&server_ctx);
	return 0;
}
#endif
