/* SPDX-License-Identifier: BSD-3-Clause */
/* errors.c -- unit tests: where error messages go; the CLI's exit codes */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
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

#include "cmd.h"
#include "fake_target.h"
#include "librpmemctl.h"
#include "proto.h" /* RPMEM_E_*, RPMEM_MSG_*, rpmem_errno_from_err */

#define HOST "127.0.0.1"

/* refusing_port -- a loopback port bound but not listening: connect gets RST */
static int refusing_port(char *port, size_t len)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t al = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	assert_true(fd >= 0);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &al), 0);
	snprintf(port, len, "%u", ntohs(a.sin_port));
	return fd;
}

/* empty_file -- a new empty file; its path in buf */
static void empty_file(char *buf, size_t len)
{
	snprintf(buf, len, "/tmp/rpmem-errors-XXXXXX");
	int fd = mkstemp(buf);
	assert_true(fd >= 0);
	close(fd);
}

/* --- the CLI's exit codes and hints (cmd/cli.c) ------------------------- */

static void cmd_exit_code__rdma_rejection_is_refused_by_the_target(void **state)
{
	(void)state;
	assert_int_equal(cmd_exit_code(-EKEYREJECTED), CMD_EXIT_REFUSED);
	assert_int_equal(CMD_EXIT_REFUSED, 4);
}

static void cmd_exit_code__refused_or_lost_connection_is_exit_3(void **state)
{
	(void)state;
	assert_int_equal(cmd_exit_code(-ECONNREFUSED), CMD_EXIT_CONNECT);
	assert_int_equal(cmd_exit_code(-ECONNRESET), CMD_EXIT_CONNECT);
	assert_int_equal(cmd_exit_code(-EACCES), CMD_EXIT_CONNECT);
	assert_int_equal(CMD_EXIT_CONNECT, 3);
}

/*
 * every refusal the target can send (an ERROR reply past the handshake's
 * codes) reaches rpmemctl as an errno its table calls refused (exit 4),
 * but a read refused as damaged data (exit 7, as scrub's damage):
 * the CLI knows the library's errno values only, not the protocol's
 * codes, so a new code needs its errno in cmd_exit_code
 */
static void cmd_exit_code__every_error_reply_is_refused(void **state)
{
	(void)state;
	for (uint32_t code = RPMEM_E_NOREGION; code <= RPMEM_E_MAX; code++)
		assert_int_equal(cmd_exit_code(rpmem_errno_from_err(code)),
				 code == RPMEM_E_DAMAGED ? CMD_EXIT_DAMAGED :
							   CMD_EXIT_REFUSED);
	/* an unknown code (a newer target) is a remote error: refused */
	assert_int_equal(cmd_exit_code(rpmem_errno_from_err(RPMEM_E_MAX + 1)),
			 CMD_EXIT_REFUSED);
	assert_int_equal(cmd_exit_code(rpmem_errno_from_err(RPMEM_E_AUTH)),
			 CMD_EXIT_CONNECT);
}

static void cmd_hint__rdma_rejection_does_not_ask_if_rpmemd_runs(void **state)
{
	(void)state;
	const char *h = cmd_hint(-EKEYREJECTED);

	assert_true(h[0]);
	assert_null(strstr(h, "rpmemd running"));
	assert_non_null(strstr(cmd_hint(-ECONNREFUSED), "rpmemd running"));
}

static void
rpmemctl_strerror__rdma_rejection_says_the_target_rejected(void **state)
{
	(void)state;
	const char *m = rpmemctl_strerror(-EKEYREJECTED);

	assert_non_null(strstr(m, "rejected the RDMA connection"));
	assert_null(strstr(m, "rpmemd running"));
}

/* --- the calling thread's message (rpmemctl_strerror) -------------------- */

static void rpmemctl_strerror__same_errno_later_call_gives_its_own_reason(
	void **state)
{
	(void)state;
	char path[64];
	struct rpmemctl_replica *r = NULL;

	empty_file(path, sizeof(path));
	/* A: -EINVAL because the target does not parse */
	int a = rpmemctl_replica_open(path, "no-such-target-form", 0, &r);
	assert_int_equal(a, -EINVAL);
	assert_non_null(strstr(rpmemctl_strerror(a), "no-such-target-form"));
	/* B: -EINVAL too, because the local file is empty */
	int b = rpmemctl_replica_open(path, "127.0.0.1/r1/p1", 0, &r);
	assert_int_equal(b, -EINVAL);
	const char *m = rpmemctl_strerror(b);
	assert_non_null(strstr(m, path));
	assert_null(strstr(m, "no-such-target-form"));
	assert_null(r);
	unlink(path);
}

static void rpmemctl_strerror__call_without_message_does_not_reuse_one(
	void **state)
{
	(void)state;
	struct rpmemctl_session *s = NULL;

	assert_int_equal(rpmemctl_session_open("", NULL, 0, &s), -EINVAL);
	/* a pool call failing with the same errno for another reason */
	assert_int_equal(rpmemctl_pool_write(NULL, "x", 0, 1), -EINVAL);
	const char *m = rpmemctl_strerror(-EINVAL);
	assert_non_null(strstr(m, "write"));
	assert_non_null(strstr(m, "no pool"));
}

static void rpmemctl_strerror__a_successful_call_forgets_the_message(
	void **state)
{
	(void)state;
	struct rpmemctl_session *s = NULL;
	struct rpmemctl_pool *p = NULL;

	assert_int_equal(rpmemctl_session_open("", NULL, 0, &s), -EINVAL);
	assert_string_equal(rpmemctl_strerror(-EINVAL), "invalid argument");
	assert_int_equal(rpmemctl_pool_close(&p), 0);
	assert_string_equal(rpmemctl_strerror(-EINVAL), strerror(EINVAL));
}

/* --- constructors with an error buffer ----------------------------------- */

static void rpmemctl_session_open_err__names_host_and_port(void **state)
{
	(void)state;
	struct rpmemctl_session *s = NULL;
	char port[16], err[512], want[64];
	int fd = refusing_port(port, sizeof(port));

	int ret = rpmemctl_session_open_err("127.0.0.1", port,
					    RPMEMCTL_TRANSPORT_TCP, &s, err,
					    sizeof(err));
	close(fd);
	assert_int_equal(ret, -ECONNREFUSED);
	assert_null(s);
	snprintf(want, sizeof(want), "127.0.0.1:%s", port);
	assert_non_null(strstr(err, want));
}

static void rpmemctl_replica_open_err__each_buffer_keeps_its_call_s_reason(
	void **state)
{
	(void)state;
	struct rpmemctl_replica *r = NULL;
	char path[64], e1[512], e2[512];

	empty_file(path, sizeof(path));
	assert_int_equal(rpmemctl_replica_open_err(path, "bad-target", 0, &r,
						   e1, sizeof(e1)),
			 -EINVAL);
	assert_int_equal(rpmemctl_replica_open_err(path, "127.0.0.1/r1/p1", 0,
						   &r, e2, sizeof(e2)),
			 -EINVAL);
	assert_non_null(strstr(e1, "bad-target"));
	assert_null(strstr(e1, path));
	assert_non_null(strstr(e2, path));
	assert_null(strstr(e2, "bad-target"));
	unlink(path);
}

static void rpmemctl_session_open_err__truncates_to_the_buffer(void **state)
{
	(void)state;
	struct rpmemctl_session *s = NULL;
	char err[8];

	memset(err, 'x', sizeof(err));
	assert_int_equal(rpmemctl_session_open_err("", NULL, 0, &s, err,
						   sizeof(err)),
			 -EINVAL);
	assert_int_equal(strlen(err), sizeof(err) - 1);
	assert_int_equal(rpmemctl_session_open_err("", NULL, 0, &s, NULL, 0),
			 -EINVAL);
}

/* --- objects ------------------------------------------------------------- */

static void rpmemctl_pool_errmsg__null_pool_is_never_null(void **state)
{
	(void)state;
	assert_non_null(rpmemctl_pool_errmsg(NULL));
	assert_non_null(rpmemctl_replica_errmsg(NULL));
	assert_non_null(rpmemctl_session_errmsg(NULL));
}

/*
 * --- which call to read after which failure ------------------------------
 *
 * The rule librpmemctl(3) states: after a failed call on an object, that
 * object's errmsg; rpmemctl_strerror for the last call this thread made,
 * whatever it was called on, and for a constructor that fails before its
 * object exists; the *_err constructors give the same message. So after
 * every failed call on an object both say the same thing.
 */

/* session_to -- a tcp session to ft; must succeed */
static struct rpmemctl_session *session_to(struct fake_target *ft)
{
	struct rpmemctl_session *s = NULL;

	assert_int_equal(rpmemctl_session_open(HOST, fake_target_port(ft),
					       RPMEMCTL_TRANSPORT_TCP, &s),
			 0);
	return s;
}

/* same_message -- ret failed; the object's message is strerror's */
static void same_message(int ret, const char *objmsg)
{
	assert_true(ret < 0);
	assert_true(objmsg[0]);
	assert_string_equal(rpmemctl_strerror(ret), objmsg);
}

static void rule__session_failure_is_in_the_session_and_the_thread(
	void **state)
{
	(void)state;
	struct fake_target *ft = NULL;
	assert_int_equal(fake_target_start(NULL, &ft), 0);
	struct rpmemctl_session *s = session_to(ft);

	/* refused locally */
	int ret = rpmemctl_pool_create(s, "r1", "bad/name", 65536);
	assert_int_equal(ret, -EINVAL);
	same_message(ret, rpmemctl_session_errmsg(s));
	assert_non_null(strstr(rpmemctl_session_errmsg(s), "bad/name"));
	/* refused by the target */
	fake_target_script(ft, RPMEM_MSG_REMOVE, 1, FAKE_ERROR,
			   RPMEM_E_NOPOOL);
	ret = rpmemctl_pool_remove(s, "r1", "p1", 0);
	assert_int_equal(ret, -ENOENT);
	same_message(ret, rpmemctl_session_errmsg(s));
	/* a call that succeeds clears both */
	struct rpmemctl_pool *p = NULL;
	assert_int_equal(rpmemctl_pool_open(s, "r1", "p1", 0, &p), 0);
	assert_string_equal(rpmemctl_session_errmsg(s), "");
	assert_string_equal(rpmemctl_strerror(-ENOENT), "no such pool");
	rpmemctl_pool_close(&p);
	rpmemctl_session_close(&s);
	assert_int_equal(fake_target_wait_idle(ft), 0);
	fake_target_stop(&ft);
}

static void rule__pool_failure_is_in_the_pool_and_the_thread(void **state)
{
	(void)state;
	struct fake_target *ft = NULL;
	struct rpmemctl_pool *p = NULL;
	char buf[4096] = { 0 };
	assert_int_equal(fake_target_start(NULL, &ft), 0);
	struct rpmemctl_session *s = session_to(ft);
	assert_int_equal(rpmemctl_pool_open(s, "r1", "p1", RPMEMCTL_OPEN_RDWR,
					    &p),
			 0);
	assert_int_equal(rpmemctl_pool_set_state(p, RPMEMCTL_POOL_SYNCING,
						 "t"),
			 0);

	/* refused locally: outside the pool */
	int ret = rpmemctl_pool_write(p, buf, 1u << 20, sizeof(buf));
	assert_int_equal(ret, -EINVAL);
	same_message(ret, rpmemctl_pool_errmsg(p));
	/* refused by the target */
	fake_target_script(ft, RPMEM_MSG_FLUSH, 1, FAKE_ERROR, RPMEM_E_IO);
	ret = rpmemctl_pool_flush(p, 0, 4096);
	assert_int_equal(ret, -EIO);
	same_message(ret, rpmemctl_pool_errmsg(p));
	assert_true(rpmemctl_session_errmsg(s)[0]);
	/* the next call on the pool, a success, clears them */
	assert_int_equal(rpmemctl_pool_flush(p, 0, 4096), 0);
	assert_string_equal(rpmemctl_pool_errmsg(p), "");
	assert_string_equal(rpmemctl_strerror(-EIO), strerror(EIO));
	rpmemctl_pool_close(&p);
	rpmemctl_session_close(&s);
	assert_int_equal(fake_target_wait_idle(ft), 0);
	fake_target_stop(&ft);
}

static void rule__query_failures_are_in_the_session_and_the_thread(
	void **state)
{
	(void)state;
	struct fake_target *ft = NULL;
	struct rpmemctl_list *l = NULL;
	struct rpmemctl_status *st = NULL;
	assert_int_equal(fake_target_start(NULL, &ft), 0);
	struct rpmemctl_session *s = session_to(ft);

	int ret = rpmemctl_list_get(s, "no/such", &l);
	assert_int_equal(ret, -EINVAL);
	same_message(ret, rpmemctl_session_errmsg(s));
	fake_target_script(ft, RPMEM_MSG_LIST, 1, FAKE_ERROR, RPMEM_E_DENIED);
	ret = rpmemctl_list_get(s, "r1", &l);
	assert_int_equal(ret, -EPERM);
	same_message(ret, rpmemctl_session_errmsg(s));
	fake_target_script(ft, RPMEM_MSG_STATUS, 1, FAKE_ERROR, RPMEM_E_LIMIT);
	ret = rpmemctl_status_get(s, &st);
	assert_true(ret < 0);
	same_message(ret, rpmemctl_session_errmsg(s));
	assert_null(l);
	assert_null(st);
	/* a target without events or KICK (no such caps) */
	struct rpmemctl_events *ev = NULL;
	ret = rpmemctl_events_subscribe(s, 0, &ev);
	assert_int_equal(ret, -ENOTSUP);
	same_message(ret, rpmemctl_session_errmsg(s));
	assert_null(ev);
	ret = rpmemctl_session_kick(s, 99);
	assert_int_equal(ret, -ENOTSUP);
	same_message(ret, rpmemctl_session_errmsg(s));
	rpmemctl_session_close(&s);
	assert_int_equal(fake_target_wait_idle(ft), 0);
	fake_target_stop(&ft);
}

/* replica_file -- a file of size bytes; its path in buf */
static void replica_file(char *buf, size_t len, off_t size)
{
	empty_file(buf, len);
	assert_int_equal(truncate(buf, size), 0);
}

static void rule__replica_failure_is_in_the_replica_and_the_thread(
	void **state)
{
	(void)state;
	struct fake_target *ft = NULL;
	struct rpmemctl_replica *r = NULL;
	char path[64], target[128], log[80];
	assert_int_equal(fake_target_start(NULL, &ft), 0);
	replica_file(path, sizeof(path), 1 << 20);
	snprintf(target, sizeof(target), HOST ":%s/r1/p1",
		 fake_target_port(ft));

	assert_int_equal(rpmemctl_replica_open(path, target,
					       RPMEMCTL_TRANSPORT_TCP, &r),
			 0);
	uint8_t *base = rpmemctl_replica_addr(r);
	/* not in the mapping */
	int ret = rpmemctl_replica_persist(r, base + (2u << 20), 4096);
	assert_int_equal(ret, -EINVAL);
	same_message(ret, rpmemctl_replica_errmsg(r));
	/* refused by the target */
	fake_target_script(ft, RPMEM_MSG_FLUSH,
			   fake_target_count(ft, RPMEM_MSG_FLUSH) + 1,
			   FAKE_ERROR, RPMEM_E_IO);
	memset(base, 7, 4096);
	ret = rpmemctl_replica_persist(r, base, 4096);
	assert_int_equal(ret, -EIO);
	same_message(ret, rpmemctl_replica_errmsg(r));
	rpmemctl_replica_close(&r);
	assert_int_equal(fake_target_wait_idle(ft), 0);
	fake_target_stop(&ft);
	snprintf(log, sizeof(log), "%s.rpmemlog", path);
	unlink(log);
	unlink(path);
}

static void rule__constructor_failure_is_in_the_thread_and_the_buffer(
	void **state)
{
	(void)state;
	struct rpmemctl_session *s = NULL;
	struct rpmemctl_session_cfg *cfg = NULL;
	char port[16], err[512], want[64];
	int fd = refusing_port(port, sizeof(port));

	int ret = rpmemctl_session_open(HOST, port, RPMEMCTL_TRANSPORT_TCP,
					&s);
	assert_int_equal(ret, -ECONNREFUSED);
	snprintf(want, sizeof(want), HOST ":%s", port);
	assert_non_null(strstr(rpmemctl_strerror(ret), want));
	assert_int_equal(rpmemctl_session_open_err(HOST, port,
						   RPMEMCTL_TRANSPORT_TCP, &s,
						   err, sizeof(err)),
			 ret);
	assert_string_equal(err, rpmemctl_strerror(ret));
	close(fd);
	assert_null(s);
	/* a configuration that cannot be used: the same channel */
	assert_int_equal(rpmemctl_session_cfg_new(&cfg), 0);
	assert_int_equal(rpmemctl_session_cfg_set_psk_file(cfg, "/nonexistent",
							   NULL),
			 0);
	ret = rpmemctl_session_open_cfg(HOST, port, RPMEMCTL_TRANSPORT_TCP,
					cfg, &s);
	assert_true(ret < 0);
	assert_non_null(strstr(rpmemctl_strerror(ret), HOST));
	rpmemctl_session_cfg_delete(&cfg);
}

/* marker -- a failed call whose -EINVAL message says "marker-target" */
static void marker(void)
{
	struct rpmemctl_replica *r = NULL;
	assert_int_equal(rpmemctl_replica_open("/nonexistent", "marker-target",
					       RPMEMCTL_TRANSPORT_TCP, &r),
			 -EINVAL);
	assert_non_null(strstr(rpmemctl_strerror(-EINVAL), "marker-target"));
}

/* not_marker -- ret is -EINVAL and its message is not the marker's */
static void not_marker(int ret, const char *call)
{
	if (ret != -EINVAL || strstr(rpmemctl_strerror(ret), "marker-target"))
		fail_msg("%s returned %d with the earlier call's message '%s'",
			 call, ret, rpmemctl_strerror(ret));
}

static void rule__every_call_forgets_the_last_call_s_message(void **state)
{
	(void)state;
	struct rpmemctl_sync_cfg *sc = NULL;
	struct rpmemctl_session_cfg *cfg = NULL;
	struct rpmemctl_pool *p = NULL;

#define CHECK(call)                                                            \
	do {                                                                   \
		marker();                                                      \
		not_marker(call, #call);                                       \
	} while (0)
	CHECK(rpmemctl_session_cfg_new(NULL));
	CHECK(rpmemctl_session_cfg_set_tls_ca(NULL, "x"));
	CHECK(rpmemctl_session_cfg_set_tls_cert(NULL, "x", "y"));
	CHECK(rpmemctl_session_cfg_set_psk_file(NULL, "x", NULL));
	CHECK(rpmemctl_session_cfg_set_tls_name(NULL, "x"));
	CHECK(rpmemctl_session_cfg_set_plaintext(NULL, 1));
	CHECK(rpmemctl_session_cfg_load(NULL, "x", "h", NULL));
	CHECK(rpmemctl_session_cfg_set_log(NULL, NULL, NULL, 0));
	CHECK(rpmemctl_dirtylog_mark(NULL, 0, 1));
	CHECK(rpmemctl_dirtylog_set_clean(NULL, 1));
	CHECK(rpmemctl_pool_open_or_create(NULL, "r1", "p1", 0, 0, &p, NULL));
	CHECK(rpmemctl_sync_cfg_set_mode(NULL, RPMEMCTL_SYNC_PUSH));
	CHECK(rpmemctl_pool_write(NULL, "x", 0, 1));
#undef CHECK
	/* and a call that succeeds leaves no message at all */
	marker();
	assert_int_equal(rpmemctl_sync_cfg_new(&sc), 0);
	assert_string_equal(rpmemctl_strerror(-EINVAL), strerror(EINVAL));
	marker();
	assert_int_equal(rpmemctl_session_cfg_new(&cfg), 0);
	assert_string_equal(rpmemctl_strerror(-EINVAL), strerror(EINVAL));
	rpmemctl_sync_cfg_delete(&sc);
	rpmemctl_session_cfg_delete(&cfg);
}

/*
 * whether a pool's message needs the pool named is recorded where the
 * message is written, not guessed from its text: a target's message that
 * happens to name a pool of the same name in another region still gets
 * the call's pool and region
 */
static void rpmemctl_pool_errmsg__names_its_pool_whatever_the_text_says(
	void **state)
{
	(void)state;
	struct fake_target *ft = NULL;
	struct rpmemctl_pool *p = NULL;
	assert_int_equal(fake_target_start(NULL, &ft), 0);
	struct rpmemctl_session *s = session_to(ft);
	assert_int_equal(rpmemctl_pool_open(s, "r1", "p1", RPMEMCTL_OPEN_RDWR,
					    &p),
			 0);
	fake_target_error_text(ft, "pool 'p1' in region 'r2' (r2/p1) is "
				   "being removed");
	fake_target_script(ft, RPMEM_MSG_FLUSH, 1, FAKE_ERROR, RPMEM_E_IO);

	assert_int_equal(rpmemctl_pool_flush(p, 0, 4096), -EIO);
	const char *m = rpmemctl_pool_errmsg(p);
	assert_non_null(strstr(m, "flush on pool 'p1' in region 'r1' failed: "
				  "pool 'p1' in region 'r2'"));
	/* a message the library wrote about the pool is not named twice */
	char buf[16] = { 0 };
	assert_int_equal(rpmemctl_pool_write(p, buf, (1u << 20) - 8,
					     sizeof(buf)),
			 -EINVAL);
	assert_string_equal(rpmemctl_pool_errmsg(p),
			    "write of 16 bytes at offset 1048568 is outside "
			    "pool 'p1' in region 'r1' (1048576 bytes)");
	rpmemctl_pool_close(&p);
	rpmemctl_session_close(&s);
	assert_int_equal(fake_target_wait_idle(ft), 0);
	fake_target_stop(&ft);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(
			cmd_exit_code__rdma_rejection_is_refused_by_the_target),
		cmocka_unit_test(
			cmd_exit_code__refused_or_lost_connection_is_exit_3),
		cmocka_unit_test(cmd_exit_code__every_error_reply_is_refused),
		cmocka_unit_test(
			cmd_hint__rdma_rejection_does_not_ask_if_rpmemd_runs),
		cmocka_unit_test(rpmemctl_strerror__rdma_rejection_says_the_target_rejected),
		cmocka_unit_test(
			rpmemctl_strerror__same_errno_later_call_gives_its_own_reason),
		cmocka_unit_test(
			rpmemctl_strerror__call_without_message_does_not_reuse_one),
		cmocka_unit_test(
			rpmemctl_strerror__a_successful_call_forgets_the_message),
		cmocka_unit_test(rpmemctl_session_open_err__names_host_and_port),
		cmocka_unit_test(
			rpmemctl_replica_open_err__each_buffer_keeps_its_call_s_reason),
		cmocka_unit_test(
			rpmemctl_session_open_err__truncates_to_the_buffer),
		cmocka_unit_test(rpmemctl_pool_errmsg__null_pool_is_never_null),
		cmocka_unit_test(
			rule__session_failure_is_in_the_session_and_the_thread),
		cmocka_unit_test(
			rule__pool_failure_is_in_the_pool_and_the_thread),
		cmocka_unit_test(
			rule__query_failures_are_in_the_session_and_the_thread),
		cmocka_unit_test(
			rule__replica_failure_is_in_the_replica_and_the_thread),
		cmocka_unit_test(
			rule__constructor_failure_is_in_the_thread_and_the_buffer),
		cmocka_unit_test(
			rule__every_call_forgets_the_last_call_s_message),
		cmocka_unit_test(
			rpmemctl_pool_errmsg__names_its_pool_whatever_the_text_says),
	};
	return cmocka_run_group_tests_name("errors", tests, NULL, NULL);
}
