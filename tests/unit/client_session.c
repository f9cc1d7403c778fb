/* SPDX-License-Identifier: BSD-3-Clause */
/* client_session.c -- unit tests of initiator sessions against a fake target */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "fake_target.h"
#include "librpmemctl.h"

#define HOST "127.0.0.1"

/* start -- a fake target with opts (NULL = defaults) */
static struct fake_target *start(const struct fake_target_opts *opts)
{
	struct fake_target *ft = NULL;
	assert_int_equal(fake_target_start(opts, &ft), 0);
	return ft;
}

/* open_session -- a session to ft over tcp; must succeed */
static struct rpmemctl_session *open_session(struct fake_target *ft)
{
	struct rpmemctl_session *s = NULL;
	assert_int_equal(rpmemctl_session_open(HOST, fake_target_port(ft),
					       RPMEMCTL_TRANSPORT_TCP, &s),
			 0);
	assert_non_null(s);
	return s;
}

static void rpmemctl_session_open__handshake_gives_server_and_bye_on_close(
	void **state)
{
	(void)state;
	struct fake_target *ft = start(NULL);
	struct rpmemctl_session *s = open_session(ft);
	assert_string_equal(rpmemctl_session_server(s), "fake-rpmemd 0 unit");
	assert_int_equal(fake_target_count(ft, RPMEM_MSG_HELLO), 1);

	rpmemctl_session_close(&s);
	assert_null(s);
	assert_int_equal(fake_target_wait_idle(ft), 0);
	assert_int_equal(fake_target_count(ft, RPMEM_MSG_BYE), 1);
	assert_int_equal(fake_target_count(ft, 0), 2);
	fake_target_stop(&ft);
}

static void rpmemctl_session_open__version_error_is_eprotonosupport(
	void **state)
{
	(void)state;
	struct fake_target *ft = start(NULL);
	fake_target_script(ft, RPMEM_MSG_HELLO, 1, FAKE_ERROR,
			   RPMEM_E_VERSION);
	struct rpmemctl_session *s = NULL;
	int ret = rpmemctl_session_open(HOST, fake_target_port(ft),
					RPMEMCTL_TRANSPORT_TCP, &s);
	assert_int_equal(ret, -EPROTONOSUPPORT);
	assert_null(s);
	/* the message names the target and the cause it gave */
	const char *msg = rpmemctl_strerror(ret);
	assert_non_null(strstr(msg, "handshake with " HOST ":"));
	assert_non_null(strstr(msg, fake_target_port(ft)));
	assert_non_null(strstr(msg, "protocol version mismatch"));
	assert_int_equal(fake_target_wait_idle(ft), 0);
	/* no BYE on a failed open: the socket is just closed */
	assert_int_equal(fake_target_count(ft, RPMEM_MSG_BYE), 0);
	fake_target_stop(&ft);
}

static void rpmemctl_session_open__other_version_chosen_is_eproto(
	void **state)
{
	(void)state;
	struct fake_target_opts o = { .version = RPMEM_PROTO_VERSION + 1 };
	struct fake_target *ft = start(&o);
	struct rpmemctl_session *s = NULL;
	int ret = rpmemctl_session_open(HOST, fake_target_port(ft),
					RPMEMCTL_TRANSPORT_TCP, &s);
	assert_int_equal(ret, -EPROTO);
	assert_null(s);
	assert_non_null(strstr(rpmemctl_strerror(ret),
			       "chose protocol version 2, we speak 1"));
	fake_target_stop(&ft);
}

static void rpmemctl_session_open__hang_up_mid_reply_is_econnreset(
	void **state)
{
	(void)state;
	struct fake_target *ft = start(NULL);
	fake_target_script(ft, RPMEM_MSG_HELLO, 1, FAKE_HANG_UP_MID_REPLY, 0);
	struct rpmemctl_session *s = NULL;
	int ret = rpmemctl_session_open(HOST, fake_target_port(ft),
					RPMEMCTL_TRANSPORT_TCP, &s);
	assert_int_equal(ret, -ECONNRESET);
	assert_null(s);
	assert_non_null(strstr(rpmemctl_strerror(ret), "lost while"));
	fake_target_stop(&ft);
}

static void rpmemctl_session_open__refused_when_nobody_listens(void **state)
{
	(void)state;
	struct fake_target *ft = start(NULL);
	char port[16];
	snprintf(port, sizeof(port), "%s", fake_target_port(ft));
	fake_target_stop(&ft); /* the port is free again */
	struct rpmemctl_session *s = NULL;
	int ret = rpmemctl_session_open(HOST, port, RPMEMCTL_TRANSPORT_TCP,
					&s);
	assert_int_equal(ret, -ECONNREFUSED);
	assert_null(s);
	assert_non_null(strstr(rpmemctl_strerror(ret), "is rpmemd running?"));
}

static void client_call__hang_up_mid_reply_loses_the_session_for_good(
	void **state)
{
	(void)state;
	struct fake_target_opts o = { .size = 0 };
	struct fake_target *ft = start(&o);
	struct rpmemctl_session *s = open_session(ft);
	fake_target_script(ft, RPMEM_MSG_CREATE, 1, FAKE_HANG_UP_MID_REPLY, 0);

	assert_int_equal(rpmemctl_pool_create(s, "r1", "p1", 65536),
			 -ECONNRESET);
	assert_non_null(strstr(rpmemctl_session_errmsg(s),
			       "lost while waiting for OK"));
	/* the target did create the pool: only its reply was lost */
	assert_int_equal(fake_target_wait_idle(ft), 0);
	assert_non_null(fake_target_pool(ft));

	/* sticky: nothing more goes out, every call fails the same way */
	struct rpmemctl_pool *p = NULL;
	assert_int_equal(rpmemctl_pool_create(s, "r1", "p2", 65536),
			 -ECONNRESET);
	assert_int_equal(rpmemctl_pool_open(s, "r1", "p1", RPMEMCTL_OPEN_RDWR,
					    &p),
			 -ECONNRESET);
	assert_null(p);
	struct rpmemctl_list *l = NULL;
	assert_int_equal(rpmemctl_list_get(s, NULL, &l), -ECONNRESET);
	assert_null(l);
	rpmemctl_session_close(&s);
	assert_int_equal(fake_target_count(ft, RPMEM_MSG_CREATE), 1);
	assert_int_equal(fake_target_count(ft, 0), 2); /* HELLO, CREATE */
	assert_int_equal(fake_target_connections(ft), 1);
	fake_target_stop(&ft);
}

static void client_call__hang_up_instead_of_reply_is_econnreset(void **state)
{
	(void)state;
	struct fake_target *ft = start(NULL);
	struct rpmemctl_session *s = open_session(ft);
	fake_target_script(ft, 0, 2, FAKE_HANG_UP, 0); /* after HELLO */

	assert_int_equal(rpmemctl_pool_remove(s, "r1", "p1", 0), -ECONNRESET);
	assert_int_equal(rpmemctl_pool_remove(s, "r1", "p1", 0), -ECONNRESET);
	rpmemctl_session_close(&s);
	assert_int_equal(fake_target_wait_idle(ft), 0);
	assert_int_equal(fake_target_count(ft, RPMEM_MSG_REMOVE), 1);
	assert_int_equal(fake_target_count(ft, RPMEM_MSG_BYE), 0);
	/* the target did not act on it */
	assert_non_null(fake_target_pool(ft));
	fake_target_stop(&ft);
}

/* lost_after -- the reply to CREATE is scripted with a; returns its error */
static int lost_after(enum fake_action a, char *msg, size_t len)
{
	struct fake_target_opts o = { .size = 0 };
	struct fake_target *ft = start(&o);
	struct rpmemctl_session *s = open_session(ft);
	fake_target_script(ft, RPMEM_MSG_CREATE, 1, a, 0);
	int ret = rpmemctl_pool_create(s, "r1", "p1", 65536);
	snprintf(msg, len, "%s", rpmemctl_session_errmsg(s));
	/* the stream cannot be trusted any more: nothing else goes out */
	assert_int_equal(rpmemctl_pool_remove(s, "r1", "p1", 0), -ECONNRESET);
	rpmemctl_session_close(&s);
	assert_int_equal(fake_target_wait_idle(ft), 0);
	assert_int_equal(fake_target_count(ft, RPMEM_MSG_REMOVE), 0);
	assert_int_equal(fake_target_count(ft, RPMEM_MSG_BYE), 0);
	fake_target_stop(&ft);
	return ret;
}

static void client_call__reply_with_wrong_id_is_eproto(void **state)
{
	(void)state;
	char msg[1024];
	assert_int_equal(lost_after(FAKE_WRONG_ID, msg, sizeof(msg)), -EPROTO);
	assert_non_null(strstr(msg, "unexpected OK reply with id 1002"));
	assert_non_null(strstr(msg, "awaiting OK for request 2"));
}

static void client_call__malformed_reply_is_eproto(void **state)
{
	(void)state;
	char msg[1024];
	assert_int_equal(lost_after(FAKE_MALFORMED, msg, sizeof(msg)),
			 -EPROTO);
	assert_non_null(strstr(msg, "malformed OK reply"));
}

static void client_call__bad_frame_magic_is_eproto(void **state)
{
	(void)state;
	char msg[1024];
	assert_int_equal(lost_after(FAKE_BAD_MAGIC, msg, sizeof(msg)),
			 -EPROTO);
	assert_non_null(strstr(msg, "invalid frame header"));
}

static void client_call__error_codes_map_to_documented_errno(void **state)
{
	(void)state;
	/* the table of librpmemctl(3) ERRORS and docs/PROTOCOL.md */
	static const struct {
		uint32_t code;
		int err;
	} want[] = {
		{ RPMEM_E_PROTO, -EPROTO },
		{ RPMEM_E_VERSION, -EPROTONOSUPPORT },
		{ RPMEM_E_AUTH, -EACCES },
		{ RPMEM_E_NOREGION, -ENODEV },
		{ RPMEM_E_NOPOOL, -ENOENT },
		{ RPMEM_E_EXISTS, -EEXIST },
		{ RPMEM_E_BUSY, -EBUSY },
		{ RPMEM_E_NOSPACE, -ENOSPC },
		{ RPMEM_E_INVAL, -EINVAL },
		{ RPMEM_E_IO, -EIO },
		{ RPMEM_E_LIMIT, -EUSERS },
		{ RPMEM_E_RDONLY, -EROFS },
		{ RPMEM_E_XPORT, -ENOTSUP },
		{ RPMEM_E_SHUTDOWN, -ESHUTDOWN },
		{ RPMEM_E_INTERNAL, -EREMOTEIO },
		{ 0, -EREMOTEIO },   /* not a code */
		{ 999, -EREMOTEIO }, /* a code this library does not know */
	};
	const size_t n = sizeof(want) / sizeof(want[0]);
	struct fake_target_opts o = { .size = 0 };
	struct fake_target *ft = start(&o);
	struct rpmemctl_session *s = open_session(ft);
	for (size_t i = 0; i < n; i++)
		fake_target_script(ft, RPMEM_MSG_CREATE, (unsigned)i + 1,
				   FAKE_ERROR, want[i].code);
	for (size_t i = 0; i < n; i++) {
		int ret = rpmemctl_pool_create(s, "r1", "p1", 65536);
		assert_int_equal(ret, want[i].err);
		char expect[128];
		snprintf(expect, sizeof(expect), "scripted %s",
			 rpmem_err_str(want[i].code));
		/* the target's message is kept */
		assert_string_equal(rpmemctl_session_errmsg(s), expect);
	}
	/* an ERROR reply leaves the session usable, even ERROR{PROTO} */
	assert_int_equal(rpmemctl_pool_create(s, "r1", "p1", 65536), 0);
	assert_non_null(fake_target_pool(ft));
	rpmemctl_session_close(&s);
	fake_target_stop(&ft);
}

static void client_call__unsolicited_error_is_reported_by_the_next_reply(
	void **state)
{
	(void)state;
	struct fake_target_opts o = { .size = 0 };
	struct fake_target *ft = start(&o);
	struct rpmemctl_session *s = open_session(ft);
	/* an ERROR with an earlier id, as a failed WRITE would get */
	fake_target_script(ft, RPMEM_MSG_CREATE, 1, FAKE_UNSOLICITED_ERROR,
			   RPMEM_E_IO);

	assert_int_equal(rpmemctl_pool_create(s, "r1", "p1", 65536), -EIO);
	assert_string_equal(rpmemctl_session_errmsg(s),
			    "scripted I/O error on the target");
	/* the OK behind it was consumed: the stream is still in step */
	struct rpmemctl_pool *p = NULL;
	assert_int_equal(rpmemctl_pool_open(s, "r1", "p1", RPMEMCTL_OPEN_RDWR,
					    &p),
			 0);
	assert_int_equal(rpmemctl_pool_get_size(p), 65536);
	assert_int_equal(rpmemctl_pool_close(&p), 0);
	rpmemctl_session_close(&s);
	assert_int_equal(fake_target_wait_idle(ft), 0);
	assert_int_equal(fake_target_count(ft, RPMEM_MSG_OPEN), 1);
	assert_int_equal(fake_target_count(ft, RPMEM_MSG_CLOSE), 1);
	assert_int_equal(fake_target_count(ft, RPMEM_MSG_BYE), 1);
	fake_target_stop(&ft);
}

static void rpmemctl_session_close__detaches_open_pools(void **state)
{
	(void)state;
	struct fake_target *ft = start(NULL);
	struct rpmemctl_session *s = open_session(ft);
	struct rpmemctl_pool *p = NULL;
	assert_int_equal(rpmemctl_pool_open(s, "r1", "p1", RPMEMCTL_OPEN_RDWR,
					    &p),
			 0);
	rpmemctl_session_close(&s);
	uint8_t b = 1;
	assert_int_equal(rpmemctl_pool_write(p, &b, 0, 1), -ENOTCONN);
	assert_int_equal(rpmemctl_pool_close(&p), 0);
	assert_null(p);
	assert_int_equal(fake_target_wait_idle(ft), 0);
	/* the disconnect closed it on the target: no CLOSE, no WRITE */
	assert_int_equal(fake_target_count(ft, RPMEM_MSG_CLOSE), 0);
	assert_int_equal(fake_target_count(ft, RPMEM_MSG_WRITE), 0);
	assert_int_equal(fake_target_count(ft, RPMEM_MSG_BYE), 1);
	fake_target_stop(&ft);
}

/*
 * a pool closed before its session (three opens of the fake target's
 * pool) leaves the session's close hooks: the session's close detaches
 * only the pools still open
 */
static void rpmemctl_session_close__hooks_only_the_pools_left(void **state)
{
	(void)state;
	struct fake_target *ft = start(NULL);
	struct rpmemctl_session *s = open_session(ft);
	struct rpmemctl_pool *p1 = NULL, *p2 = NULL, *p3 = NULL;
	assert_int_equal(rpmemctl_pool_open(s, "r1", "p1", RPMEMCTL_OPEN_RDWR,
					    &p1),
			 0);
	assert_int_equal(rpmemctl_pool_open(s, "r1", "p1", RPMEMCTL_OPEN_RDWR,
					    &p2),
			 0);
	assert_int_equal(rpmemctl_pool_open(s, "r1", "p1", RPMEMCTL_OPEN_RDWR,
					    &p3),
			 0);
	/* the middle one of the session's list, then the newest */
	assert_int_equal(rpmemctl_pool_close(&p2), 0);
	assert_int_equal(rpmemctl_pool_close(&p3), 0);
	rpmemctl_session_close(&s);
	uint8_t b = 1;
	assert_int_equal(rpmemctl_pool_write(p1, &b, 0, 1), -ENOTCONN);
	assert_int_equal(rpmemctl_pool_close(&p1), 0);
	assert_int_equal(fake_target_wait_idle(ft), 0);
	/* two CLOSEs on the wire, p1's went with the disconnect */
	assert_int_equal(fake_target_count(ft, RPMEM_MSG_CLOSE), 2);
	assert_int_equal(fake_target_count(ft, RPMEM_MSG_WRITE), 0);
	assert_int_equal(fake_target_count(ft, RPMEM_MSG_BYE), 1);
	fake_target_stop(&ft);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(
			rpmemctl_session_open__handshake_gives_server_and_bye_on_close),
		cmocka_unit_test(
			rpmemctl_session_open__version_error_is_eprotonosupport),
		cmocka_unit_test(
			rpmemctl_session_open__other_version_chosen_is_eproto),
		cmocka_unit_test(
			rpmemctl_session_open__hang_up_mid_reply_is_econnreset),
		cmocka_unit_test(
			rpmemctl_session_open__refused_when_nobody_listens),
		cmocka_unit_test(
			client_call__hang_up_mid_reply_loses_the_session_for_good),
		cmocka_unit_test(
			client_call__hang_up_instead_of_reply_is_econnreset),
		cmocka_unit_test(client_call__reply_with_wrong_id_is_eproto),
		cmocka_unit_test(client_call__malformed_reply_is_eproto),
		cmocka_unit_test(client_call__bad_frame_magic_is_eproto),
		cmocka_unit_test(
			client_call__error_codes_map_to_documented_errno),
		cmocka_unit_test(
			client_call__unsolicited_error_is_reported_by_the_next_reply),
		cmocka_unit_test(rpmemctl_session_close__detaches_open_pools),
		cmocka_unit_test(
			rpmemctl_session_close__hooks_only_the_pools_left),
	};
	return cmocka_run_group_tests_name("client_session", tests, NULL,
					   NULL);
}
