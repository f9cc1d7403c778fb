/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * client_xport.c -- unit tests of the TCP data plane's operations
 * (tcp_initiator.c) against the in-process fake target: the posted
 * flushes (flush_post, flush_collect, wait_fd), owed and collected in
 * order, and given up by close, with the stream kept in step
 */
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fake_target.h"
#include "client_replicate.h"
#include "librpmemctl.h"

#define HOST "127.0.0.1"
#define KIB 1024u
#define POSTS_MAX 64 /* tcp_initiator.c's TCP_OWED_MAX */

/* a fake target, a session to it and its pool open read-write */
struct env {
	struct fake_target *ft;
	struct rpmemctl_session *s;
	struct rpmemctl_pool *p;
	struct rpmem_xport *x;
};

/* env_start -- the fake target's 1 MiB pool open over tcp */
static void env_start(struct env *e)
{
	struct fake_target_opts o = { .size = 1u << 20 };
	memset(e, 0, sizeof(*e));
	assert_int_equal(fake_target_start(&o, &e->ft), 0);
	assert_int_equal(rpmemctl_session_open(HOST, fake_target_port(e->ft),
					       RPMEMCTL_TRANSPORT_TCP, &e->s),
			 0);
	assert_int_equal(rpmemctl_pool_open(e->s, "r1", "p1",
					    RPMEMCTL_OPEN_RDWR, &e->p),
			 0);
	e->x = e->p->xport;
	assert_non_null(e->x->ops->flush_post);
	assert_non_null(e->x->ops->flush_collect);
	assert_non_null(e->x->ops->wait_fd);
}

/* env_stop -- close everything; the target has seen all of it after */
static void env_stop(struct env *e)
{
	assert_int_equal(rpmemctl_pool_close(&e->p), 0);
	rpmemctl_session_close(&e->s);
	assert_int_equal(fake_target_wait_idle(e->ft), 0);
	fake_target_stop(&e->ft);
}

/* post -- a WRITE of 4 KiB at off, then a flush of it posted: its token */
static uint64_t post(struct env *e, uint64_t off)
{
	uint8_t buf[4 * KIB];
	uint64_t tok = 0;
	fake_pattern(buf, sizeof(buf), (uint32_t)off);
	assert_int_equal(e->x->ops->write(e->x, off, buf, sizeof(buf)), 0);
	assert_int_equal(e->x->ops->flush_post(e->x, off, sizeof(buf), &tok),
			 0);
	return tok;
}

static void tcp_flush_collect__collects_the_owed_flushes_in_order(
	void **state)
{
	(void)state;
	struct env e;
	env_start(&e);
	uint64_t tok[3];
	for (unsigned i = 0; i < 3; i++)
		tok[i] = post(&e, i * 4 * KIB);
	assert_true(tok[0] != tok[1] && tok[1] != tok[2]);

	/* the second's collect reads the first's OK too, first */
	assert_int_equal(e.x->ops->flush_collect(e.x, tok[1], 1), 1);
	assert_true(fake_target_flushed(e.ft) >= 8 * KIB);
	/* collected already: no wait, nothing read */
	assert_int_equal(e.x->ops->flush_collect(e.x, tok[0], 0), 1);
	assert_int_equal(e.x->ops->flush_collect(e.x, tok[0], 1), 1);
	assert_int_equal(e.x->ops->flush_collect(e.x, tok[2], 1), 1);
	assert_int_equal(fake_target_count(e.ft, RPMEM_MSG_FLUSH), 3);
	assert_int_equal(fake_target_flushed(e.ft), 12 * KIB);
	assert_int_equal(fake_target_written(e.ft, 0, 12 * KIB), 12 * KIB);

	/* the stream is in step: a flush that waits gets its own OK */
	assert_int_equal(e.x->ops->flush(e.x, 0, 4 * KIB), 0);
	assert_int_equal(fake_target_count(e.ft, RPMEM_MSG_FLUSH), 4);
	env_stop(&e);
}

static void tcp_flush_collect__a_failed_flush_is_reported_in_its_turn(
	void **state)
{
	(void)state;
	struct env e;
	env_start(&e);
	fake_target_script(e.ft, RPMEM_MSG_FLUSH, 1, FAKE_ERROR, RPMEM_E_IO);
	uint64_t t1 = post(&e, 0), t2 = post(&e, 4 * KIB);

	/* collecting the second meets the first's failure before it */
	int ret = e.x->ops->flush_collect(e.x, t2, 1);
	assert_true(ret < 0);
	assert_int_equal(e.x->ops->flush_collect(e.x, t1, 0), 1);
	assert_int_equal(e.x->ops->flush_collect(e.x, t2, 1), 1);
	assert_int_equal(fake_target_flushed(e.ft), 4 * KIB);
	env_stop(&e);
}

static void tcp_flush_collect__without_wait_says_0_until_the_reply_comes(
	void **state)
{
	(void)state;
	struct env e;
	env_start(&e);
	fake_target_script(e.ft, RPMEM_MSG_FLUSH, 1, FAKE_STALL, 0);
	uint64_t tok = post(&e, 0);
	assert_int_equal(e.x->ops->flush_collect(e.x, tok, 0), 0);

	fake_target_release(e.ft);
	struct pollfd pfd = { .fd = e.x->ops->wait_fd(e.x), .events = POLLIN };
	assert_int_equal(poll(&pfd, 1, 30000), 1);
	assert_int_equal(e.x->ops->flush_collect(e.x, tok, 0), 1);
	assert_int_equal(e.x->ops->flush_collect(e.x, tok, 1), 1);
	assert_int_equal(fake_target_flushed(e.ft), 4 * KIB);
	env_stop(&e);
}

static void tcp_flush_post__one_past_the_most_owed_collects_the_oldest(
	void **state)
{
	(void)state;
	struct env e;
	env_start(&e);
	uint64_t tok[POSTS_MAX + 1];
	for (unsigned i = 0; i <= POSTS_MAX; i++)
		tok[i] = post(&e, (i % 16) * 4 * KIB);
	/* the oldest was collected by the last post: no wait */
	assert_int_equal(e.x->ops->flush_collect(e.x, tok[0], 0), 1);
	assert_int_equal(e.x->ops->flush_collect(e.x, tok[POSTS_MAX], 1), 1);
	assert_int_equal(fake_target_count(e.ft, RPMEM_MSG_FLUSH),
			 POSTS_MAX + 1);
	assert_int_equal(fake_target_flushed(e.ft),
			 (POSTS_MAX + 1) * 4 * KIB);
	env_stop(&e);
}

static void tcp_close__gives_up_the_flushes_not_collected(void **state)
{
	(void)state;
	struct env e;
	env_start(&e);
	(void)post(&e, 0);
	(void)post(&e, 4 * KIB);
	/* the CLOSE's reply comes after the two OKs: they are dropped */
	assert_int_equal(rpmemctl_pool_close(&e.p), 0);
	assert_int_equal(rpmemctl_pool_open(e.s, "r1", "p1",
					    RPMEMCTL_OPEN_RDWR, &e.p),
			 0);
	assert_int_equal(rpmemctl_pool_flush(e.p, 0, 8 * KIB), 0);
	assert_int_equal(fake_target_count(e.ft, RPMEM_MSG_FLUSH), 3);
	assert_int_equal(fake_target_flushed(e.ft), 16 * KIB);
	env_stop(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(
		  tcp_flush_collect__collects_the_owed_flushes_in_order),
		cmocka_unit_test(
		  tcp_flush_collect__a_failed_flush_is_reported_in_its_turn),
		cmocka_unit_test(
		  tcp_flush_collect__without_wait_says_0_until_the_reply_comes),
		cmocka_unit_test(
		  tcp_flush_post__one_past_the_most_owed_collects_the_oldest),
		cmocka_unit_test(tcp_close__gives_up_the_flushes_not_collected),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
