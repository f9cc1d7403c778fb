/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * client_replicas.c -- unit tests of the replica status file: what a set
 * of links writes (links_status.c) rpmemctl_replicas_read reads back, and
 * a torn or forged file is an error naming the line, never a report
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "client_replicate.h"
#include "librpmemctl.h"
#include "util.h"

/* a temporary folder and the status file in it */
struct env {
	char dir[64];
	char path[128];
};

static int setup(void **state)
{
	struct env *e = calloc(1, sizeof(*e));
	assert_non_null(e);
	strcpy(e->dir, "/tmp/rpmem_replicas_XXXXXX");
	assert_non_null(mkdtemp(e->dir));
	snprintf(e->path, sizeof(e->path), "%s/f.rpmemstat", e->dir);
	*state = e;
	return 0;
}

static int teardown(void **state)
{
	struct env *e = *state;
	unlink(e->path);
	rmdir(e->dir);
	free(e);
	return 0;
}

/* put -- len bytes of text as the status file */
static void put(const struct env *e, const char *text, size_t len)
{
	FILE *f = fopen(e->path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

/* text_of -- the status file's text into buf; its length */
static size_t text_of(const struct env *e, char *buf, size_t size)
{
	FILE *f = fopen(e->path, "r");
	assert_non_null(f);
	size_t n = fread(buf, 1, size - 1, f);
	fclose(f);
	buf[n] = 0;
	return n;
}

/* is_zero -- r is all zero bytes (nothing half read is left) */
static int is_zero(const struct rpmemctl_replicas_report *r)
{
	static const struct rpmemctl_replicas_report zero;
	return !memcmp(r, &zero, sizeof(zero));
}

static const char *const targets[] = { "127.0.0.1:7000/r1/a",
				       "[::1]:7001/r2/b", "host:7002/r1/c" };

/* write_three -- the writer's file for three links, one behind */
static void write_three(const struct env *e)
{
	struct rpmemctl_link *l[3];
	struct links_status st;
	uint64_t bytes[3] = { 0, 65536, 0 };
	uint64_t t0[3] = { 0, rpmem_now_ns() - 2000000000ull, 0 };

	for (unsigned i = 0; i < 3; i++)
		assert_int_equal(rpmemctl_link_new(targets[i],
						   RPMEMCTL_TRANSPORT_TCP,
						   &l[i]),
				 0);
	assert_int_equal(links_status_set(&st, e->path), 0);
	links_status_update(&st, 2, 3, 1, l, bytes, t0);
	assert_int_equal(st.failed, 0);
	for (unsigned i = 0; i < 3; i++)
		rpmemctl_link_delete(&l[i]);
}

static void rpmemctl_replicas_read__reads_what_a_set_wrote(void **state)
{
	struct env *e = *state;
	struct rpmemctl_replicas_report r;
	char err[256] = "";

	write_three(e);
	assert_int_equal(rpmemctl_replicas_read(e->path, &r, err,
						sizeof(err)),
			 0);
	assert_string_equal(err, "");
	assert_int_equal(r.pid, getpid());
	assert_true(r.updated_ns > 0);
	assert_int_equal(r.quorum, 2);
	assert_int_equal(r.count, 3);
	assert_int_equal(r.holding, 1);
	for (unsigned i = 0; i < 3; i++) {
		assert_string_equal(r.replica[i].target, targets[i]);
		assert_int_equal(r.replica[i].state, RPMEMCTL_LINK_DOWN);
	}
	assert_int_equal(r.replica[1].behind_bytes, 65536);
	/* behind since about two seconds before the update, as written */
	assert_true(r.replica[1].behind_since_ns < r.updated_ns);
	assert_int_equal(r.replica[0].behind_since_ns, 0);
}

static void rpmemctl_replicas_read__every_torn_file_is_ebadmsg(void **state)
{
	struct env *e = *state;
	struct rpmemctl_replicas_report r;
	char text[LINKS_STATUS_MAX], err[256];

	write_three(e);
	size_t len = text_of(e, text, sizeof(text));
	/* cut anywhere short of the end: a line cut or one missing */
	for (size_t cut = 0; cut < len; cut++) {
		put(e, text, cut);
		memset(&r, 0xa5, sizeof(r));
		err[0] = 0;
		assert_int_equal(rpmemctl_replicas_read(e->path, &r, err,
							sizeof(err)),
				 -EBADMSG);
		assert_true(is_zero(&r));
		assert_memory_equal(err, "line ", 5);
	}
	put(e, text, len);
	assert_int_equal(rpmemctl_replicas_read(e->path, &r, NULL, 0), 0);
}

/* a forged file, and the error that must name what is wrong with it */
struct forged {
	const char *text;
	const char *err;
};

#define HEAD "rpmem-replicas 1\npid 1\nupdated 1\n"
#define REP0 "replica 0 live 0 0 127.0.0.1:7000/r1/p\n"

static const struct forged forged[] = {
	{ "", "line 1 not 'rpmem-replicas 1'" },
	{ "garbage\n", "line 1 not 'rpmem-replicas 1'" },
	{ "rpmem-replicas 2\n", "line 1 not 'rpmem-replicas 1'" },
	{ "rpmem-replicas 1\npid 0\n", "line 2 not 'pid PID' (PID > 0)" },
	{ "rpmem-replicas 1\npid -1\n", "line 2 not 'pid PID'" },
	{ "rpmem-replicas 1\npid 2147483648\n", "line 2 not 'pid PID'" },
	{ "rpmem-replicas 1\npid 1 2\n", "line 2 not 'pid PID'" },
	{ "rpmem-replicas 1\npid  1\n", "line 2 not 'pid PID'" },
	{ "rpmem-replicas 1\npid 1\nupdated 18446744073709551616\n",
	  "line 3 not 'updated UNIX_NS'" },
	{ "rpmem-replicas 1\npid 1\nquorum 1 1 1\n",
	  "line 3 not 'updated UNIX_NS'" },
	{ HEAD "quorum 2 1 1\n" REP0, "line 4 not 'quorum K N HOLDING'" },
	{ HEAD "quorum 1 1 2\n" REP0, "line 4 not 'quorum K N HOLDING'" },
	{ HEAD "quorum 1 17 1\n", "line 4 not 'quorum K N HOLDING'" },
	{ HEAD "quorum 1 1 1\n", "line 5 missing: fewer replicas" },
	{ HEAD "quorum 1 2 1\n" REP0, "line 6 missing: fewer replicas" },
	{ HEAD "quorum 1 1 1\n" REP0 REP0, "line 6 a replica more" },
	{ HEAD "quorum 1 1 1\nreplica 1 live 0 0 127.0.0.1:7000/r1/p\n",
	  "line 5 not 'replica I STATE" },
	{ HEAD "quorum 1 1 1\nreplica 0 evil 0 0 127.0.0.1:7000/r1/p\n",
	  "line 5 not 'replica I STATE" },
	{ HEAD "quorum 1 1 1\nreplica 0 live x 0 127.0.0.1:7000/r1/p\n",
	  "line 5 not 'replica I STATE" },
	{ HEAD "quorum 1 1 1\nreplica 0 live 0 0 127.0.0.1:7000/r1\n",
	  "line 5 not 'replica I STATE" },
	{ HEAD "quorum 1 1 1\nreplica 0 live 0 0 127.0.0.1:7000/r1/../p\n",
	  "line 5 not 'replica I STATE" },
	{ HEAD "quorum 1 1 1\nreplica 0 live 0 0 h:1/r/p extra\n",
	  "line 5 not 'replica I STATE" },
	{ HEAD "quorum 1 1 1\n" REP0 "pid 2\n", "line 6 a replica more" },
	{ HEAD "quorum 1 1 1\nreplica 0 live 0 0 h:1/r/p",
	  "line 5 cut short (no newline: a torn file)" },
};

static void rpmemctl_replicas_read__forged_files_name_the_line(void **state)
{
	struct env *e = *state;
	struct rpmemctl_replicas_report r;
	char err[256];

	for (size_t i = 0; i < sizeof(forged) / sizeof(forged[0]); i++) {
		put(e, forged[i].text, strlen(forged[i].text));
		memset(&r, 0xa5, sizeof(r));
		err[0] = 0;
		assert_int_equal(rpmemctl_replicas_read(e->path, &r, err,
							sizeof(err)),
				 -EBADMSG);
		if (strncmp(err, forged[i].err, strlen(forged[i].err)))
			fail_msg("file %zu: '%s', not '%s...'", i, err,
				 forged[i].err);
		assert_true(is_zero(&r));
	}
	/* the smallest well-formed file reads */
	put(e, HEAD "quorum 1 1 1\n" REP0, strlen(HEAD "quorum 1 1 1\n" REP0));
	assert_int_equal(rpmemctl_replicas_read(e->path, &r, err, sizeof(err)),
			 0);
	assert_int_equal(r.replica[0].state, RPMEMCTL_LINK_LIVE);
}

static void rpmemctl_replicas_read__missing_nul_and_oversized(void **state)
{
	struct env *e = *state;
	struct rpmemctl_replicas_report r;
	char err[256], big[LINKS_STATUS_MAX + 1];

	unlink(e->path);
	assert_int_equal(rpmemctl_replicas_read(e->path, &r, err, sizeof(err)),
			 -ENOENT);
	put(e, "rpmem-replicas 1\n\0pid 1\n", 24);
	assert_int_equal(rpmemctl_replicas_read(e->path, &r, err, sizeof(err)),
			 -EBADMSG);
	assert_string_equal(err, "a NUL byte in it");
	memset(big, '\n', sizeof(big));
	put(e, big, sizeof(big));
	assert_int_equal(rpmemctl_replicas_read(e->path, &r, err, sizeof(err)),
			 -EBADMSG);
	assert_string_equal(err, "longer than a status file can be");
	assert_int_equal(rpmemctl_replicas_read(NULL, &r, NULL, 0), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
			rpmemctl_replicas_read__reads_what_a_set_wrote, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			rpmemctl_replicas_read__every_torn_file_is_ebadmsg,
			setup, teardown),
		cmocka_unit_test_setup_teardown(
			rpmemctl_replicas_read__forged_files_name_the_line,
			setup, teardown),
		cmocka_unit_test_setup_teardown(
			rpmemctl_replicas_read__missing_nul_and_oversized,
			setup, teardown),
	};
	return cmocka_run_group_tests_name("client_replicas", tests, NULL,
					   NULL);
}
