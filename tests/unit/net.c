/* SPDX-License-Identifier: BSD-3-Clause */
/* net.c -- unit tests of moving stream bytes into a file (net.c) */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "net.h"

/* bytes of the data between a 100-byte head and a 16-byte tail */
#define DATA (3u << 20)
#define HEAD 100
#define TAIL 16

/* a stream: the head, DATA bytes of a pattern, the tail (or less) */
struct stream {
	int fd;
	size_t len; /* bytes of head + data + tail to send */
};

/* pattern -- byte i of the data */
static uint8_t pattern(size_t i)
{
	return (uint8_t)(i * 7 + (i >> 12));
}

/* sender -- write the stream to its end of the pair, then close it */
static void *sender(void *arg)
{
	struct stream *st = arg;
	uint8_t *buf = malloc(HEAD + DATA + TAIL);
	size_t off = 0;

	memset(buf, 'h', HEAD);
	for (size_t i = 0; i < DATA; i++)
		buf[HEAD + i] = pattern(i);
	memset(buf + HEAD + DATA, 't', TAIL);
	while (off < st->len) {
		ssize_t n = write(st->fd, buf + off, st->len - off);
		if (n <= 0)
			break;
		off += (size_t)n;
	}
	close(st->fd);
	free(buf);
	return NULL;
}

/* open_stream -- a connection reading a stream of len bytes from a thread */
static void open_stream(struct rpmem_conn *c, struct stream *st, size_t len,
			pthread_t *t)
{
	int sv[2];

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	rpmem_conn_init(c, sv[0]);
	st->fd = sv[1];
	st->len = len;
	assert_int_equal(pthread_create(t, NULL, sender, st), 0);
}

/* temp_file -- a new empty file, already unlinked */
static int temp_file(void)
{
	char path[] = "/tmp/rpmem-unit-net.XXXXXX";
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	unlink(path);
	return fd;
}

static void rpmem_net_read_to_file__moves_the_bytes_to_the_offset(
	void **state)
{
	struct rpmem_conn c;
	struct stream st;
	pthread_t t;
	uint8_t head[HEAD], tail[TAIL];
	int ferr = 1, fd = temp_file();

	(void)state;
	open_stream(&c, &st, HEAD + DATA + TAIL, &t);
	/* the head's read takes some data ahead: it is written first */
	assert_int_equal(rpmem_net_read_full(&c, head, 10), 0);
	assert_int_equal(rpmem_net_read_full(&c, head + 10, HEAD - 10), 0);
	assert_int_equal(rpmem_net_read_to_file(&c, fd, 8192, DATA, &ferr), 0);
	assert_int_equal(ferr, 0);
	assert_int_equal(rpmem_net_read_full(&c, tail, TAIL), 0);
	assert_memory_equal(tail, "tttttttttttttttt", TAIL);

	uint8_t *got = malloc(DATA + 8192);
	assert_non_null(got);
	assert_int_equal(pread(fd, got, DATA + 8192, 0), DATA + 8192);
	for (size_t i = 0; i < 8192; i++)
		assert_int_equal(got[i], 0);
	for (size_t i = 0; i < DATA; i++)
		if (got[8192 + i] != pattern(i))
			fail_msg("byte %zu of the data differs", i);
	free(got);
	pthread_join(t, NULL);
	close(fd);
	rpmem_conn_close(&c);
}

static void rpmem_net_read_to_file__a_failed_write_drops_the_rest_in_step(
	void **state)
{
	struct rpmem_conn c;
	struct stream st;
	pthread_t t;
	uint8_t head[HEAD], tail[TAIL];
	int ferr = 0, fd = open("/dev/full", O_WRONLY | O_CLOEXEC);

	(void)state;
	if (fd < 0)
		skip();
	open_stream(&c, &st, HEAD + DATA + TAIL, &t);
	assert_int_equal(rpmem_net_read_full(&c, head, HEAD), 0);
	assert_int_equal(rpmem_net_read_to_file(&c, fd, 0, DATA, &ferr), 0);
	assert_int_equal(ferr, -ENOSPC);
	/* the stream goes on right after the data */
	assert_int_equal(rpmem_net_read_full(&c, tail, TAIL), 0);
	assert_memory_equal(tail, "tttttttttttttttt", TAIL);
	pthread_join(t, NULL);
	close(fd);
	rpmem_conn_close(&c);
}

static void rpmem_net_read_to_file__a_stream_that_ends_early_is_econnreset(
	void **state)
{
	struct rpmem_conn c;
	struct stream st;
	pthread_t t;
	uint8_t head[HEAD];
	int ferr = 0, fd = temp_file();

	(void)state;
	open_stream(&c, &st, HEAD + DATA / 2, &t);
	assert_int_equal(rpmem_net_read_full(&c, head, HEAD), 0);
	assert_int_equal(rpmem_net_read_to_file(&c, fd, 0, DATA, &ferr),
			 -ECONNRESET);
	assert_int_equal(ferr, 0);
	pthread_join(t, NULL);
	close(fd);
	rpmem_conn_close(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(
			rpmem_net_read_to_file__moves_the_bytes_to_the_offset),
		cmocka_unit_test(
			rpmem_net_read_to_file__a_failed_write_drops_the_rest_in_step),
		cmocka_unit_test(
			rpmem_net_read_to_file__a_stream_that_ends_early_is_econnreset),
	};
	return cmocka_run_group_tests_name("net", tests, NULL, NULL);
}
