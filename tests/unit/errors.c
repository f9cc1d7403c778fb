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
#include "librpmemctl.h"
#include "proto.h" /* RPMEM_E_*, rpmem_errno_from_err */

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
 * codes) reaches rpmemctl as an errno its table calls refused (exit 4):
 * the CLI knows the library's errno values only, not the protocol's
 * codes, so a new code needs its errno in cmd_exit_code
 */
static void cmd_exit_code__every_error_reply_is_refused(void **state)
{
	(void)state;
	for (uint32_t code = RPMEM_E_NOREGION; code <= RPMEM_E_MAX; code++)
		assert_int_equal(cmd_exit_code(rpmem_errno_from_err(code)),
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
	};
	return cmocka_run_group_tests_name("errors", tests, NULL, NULL);
}
