/* SPDX-License-Identifier: BSD-3-Clause */
/* dirtylog.c -- unit tests of the dirty log's trust checks and clean mark */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "client_replicate.h"
#include "librpmemctl.h"

#define POOL_SIZE (4u << 20)

static char dir[PATH_MAX], pool[PATH_MAX + 8], logp[PATH_MAX + 16];
static char other[PATH_MAX + 8];
static int pool_fd = -1;

static int setup(void **state)
{
	(void)state;
	char tmpl[] = "/tmp/rpmem-unit-dirtylog-XXXXXX";
	if (!mkdtemp(tmpl) || !realpath(tmpl, dir))
		return -1;
	snprintf(pool, sizeof(pool), "%s/pool", dir);
	snprintf(logp, sizeof(logp), "%s/pool.rpmemlog", dir);
	snprintf(other, sizeof(other), "%s/other", dir);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return rmdir(dir);
}

/* each_setup -- a 0644 pool file of ours, open; no log */
static int each_setup(void **state)
{
	(void)state;
	pool_fd = open(pool, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (pool_fd < 0 || ftruncate(pool_fd, POOL_SIZE) ||
	    fchmod(pool_fd, 0644))
		return -1;
	return 0;
}

static int each_teardown(void **state)
{
	(void)state;
	close(pool_fd);
	unlink(pool);
	unlink(logp);
	unlink(other);
	return 0;
}

/* open_log -- rpmemctl_dirtylog_open_pool of logp with flags */
static int open_log(unsigned flags, struct rpmemctl_dirtylog **l)
{
	*l = NULL;
	return rpmemctl_dirtylog_open_pool(logp, pool_fd, POOL_SIZE, 0, flags,
					   l);
}

/* marked_log -- a log of the pool with extent 2 marked, closed */
static void marked_log(void)
{
	struct rpmemctl_dirtylog *l;
	assert_int_equal(open_log(0, &l), 0);
	assert_int_equal(rpmemctl_dirtylog_mark(l, 2u << 20, 1), 0);
	rpmemctl_dirtylog_close(&l);
}

/* file_bytes -- the size of path without following a link, or -1 */
static long long file_bytes(const char *path)
{
	struct stat st;
	return lstat(path, &st) ? -1 : (long long)st.st_size;
}

static void open_pool__new_log_is_0600_and_clean(void **state)
{
	(void)state;
	struct rpmemctl_dirtylog *l;
	struct stat st;
	assert_int_equal(open_log(0, &l), 0);
	assert_int_equal(stat(logp, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_true(client_dirtylog_clean(l));
	rpmemctl_dirtylog_close(&l);
}

static void open_pool__symlink_is_eloop_and_not_followed(void **state)
{
	(void)state;
	struct rpmemctl_dirtylog *l;
	marked_log();
	assert_int_equal(rename(logp, other), 0);
	assert_int_equal(symlink(other, logp), 0);
	long long before = file_bytes(other);
	assert_int_equal(open_log(0, &l), -ELOOP);
	assert_null(l);
	assert_non_null(strstr(rpmemctl_strerror(-ELOOP),
			       "is a symbolic link"));
	/* replacing it removes the link, never what it points at */
	assert_int_equal(open_log(RPMEMCTL_DIRTYLOG_REPLACE, &l), 0);
	assert_int_equal(rpmemctl_dirtylog_count(l), 0);
	rpmemctl_dirtylog_close(&l);
	assert_int_equal(file_bytes(other), before);
	struct stat st;
	assert_int_equal(lstat(logp, &st), 0);
	assert_true(S_ISREG(st.st_mode));
}

static void open_pool__other_owner_is_eperm(void **state)
{
	(void)state;
	struct rpmemctl_dirtylog *l;
	if (geteuid() != 0)
		skip(); /* giving the log to another user needs root */
	marked_log();
	assert_int_equal(chown(logp, 65534, 65534), 0);
	assert_int_equal(open_log(0, &l), -EPERM);
	assert_non_null(strstr(rpmemctl_strerror(-EPERM), "is owned by uid"));
	/* without a pool, the caller is the owner to match */
	assert_int_equal(rpmemctl_dirtylog_open(logp, POOL_SIZE, 0, &l),
			 -EPERM);
	assert_int_equal(open_log(RPMEMCTL_DIRTYLOG_REPLACE, &l), 0);
	assert_int_equal(rpmemctl_dirtylog_count(l), 0);
	rpmemctl_dirtylog_close(&l);
}

static void open_pool__writable_by_others_only_if_the_pool_is(void **state)
{
	(void)state;
	struct rpmemctl_dirtylog *l;
	marked_log();
	assert_int_equal(chmod(logp, 0666), 0);
	assert_int_equal(open_log(0, &l), -EPERM);
	assert_non_null(strstr(rpmemctl_strerror(-EPERM),
			       "writable by others"));
	assert_int_equal(fchmod(pool_fd, 0666), 0);
	assert_int_equal(open_log(0, &l), 0);
	assert_int_equal(rpmemctl_dirtylog_count(l), 1);
	rpmemctl_dirtylog_close(&l);
}

static void open_pool__hard_link_is_eperm(void **state)
{
	(void)state;
	struct rpmemctl_dirtylog *l;
	marked_log();
	assert_int_equal(link(logp, other), 0);
	assert_int_equal(open_log(0, &l), -EPERM);
	assert_non_null(strstr(rpmemctl_strerror(-EPERM), "hard links"));
}

static void set_clean__cleared_mark_is_replaced_at_the_next_open(void **state)
{
	(void)state;
	struct rpmemctl_dirtylog *l, *l2;
	marked_log();
	assert_int_equal(open_log(0, &l), 0);
	assert_int_equal(rpmemctl_dirtylog_set_clean(l, 0), 0);
	/* the handle that cleared it may use it, another may not */
	assert_true(client_dirtylog_clean(l));
	assert_int_equal(open_log(0, &l2), 0);
	assert_false(client_dirtylog_clean(l2));
	rpmemctl_dirtylog_close(&l2);
	rpmemctl_dirtylog_close(&l); /* as a crash would: no mark set */
	assert_int_equal(open_log(RPMEMCTL_DIRTYLOG_REPLACE, &l), 0);
	assert_int_equal(rpmemctl_dirtylog_count(l), 0);
	assert_true(client_dirtylog_clean(l));
	/* a clean exit: the next open keeps the marks */
	assert_int_equal(rpmemctl_dirtylog_mark(l, 0, 1), 0);
	assert_int_equal(rpmemctl_dirtylog_set_clean(l, 0), 0);
	assert_int_equal(rpmemctl_dirtylog_set_clean(l, 1), 0);
	rpmemctl_dirtylog_close(&l);
	assert_int_equal(open_log(RPMEMCTL_DIRTYLOG_REPLACE, &l), 0);
	assert_int_equal(rpmemctl_dirtylog_count(l), 1);
	assert_true(client_dirtylog_clean(l));
	rpmemctl_dirtylog_close(&l);
}

/* bit -- extent e is set in a bitmap */
static int bit(const uint8_t *b, unsigned e)
{
	return (b[e / 8] >> (e % 8)) & 1;
}

/*
 * take__keeps_every_persistent_mark_and_records_the_fresh -- a background
 * resync's take (link_resync.c): the first returns every mark, later
 * ones only what was marked since, also where the persistent bit was set
 * already; the persistent bits keep every mark through takes and a
 * crash (the handle closed without a reset)
 */
static void take__keeps_every_persistent_mark_and_records_the_fresh(
	void **state)
{
	(void)state;
	struct rpmemctl_dirtylog *l;
	uint8_t out[8];
	assert_int_equal(open_log(0, &l), 0);
	assert_int_equal(client_dirtylog_bitmap_len(l), 8);
	assert_int_equal(rpmemctl_dirtylog_mark(l, 1u << 20, 1), 0);
	assert_int_equal(client_dirtylog_take(l, out, 1), 1);
	assert_true(bit(out, 1));
	assert_int_equal(client_dirtylog_fresh(l), 0);
	/* marked again (persistent already) and anew: both fresh */
	assert_int_equal(rpmemctl_dirtylog_mark(l, 1u << 20, 8), 0);
	assert_int_equal(rpmemctl_dirtylog_mark(l, 3u << 20, 8), 0);
	assert_int_equal(client_dirtylog_fresh(l), 2);
	assert_int_equal(rpmemctl_dirtylog_count(l), 2);
	assert_int_equal(client_dirtylog_take(l, out, 0), 2);
	assert_true(bit(out, 1) && bit(out, 3) && !bit(out, 0));
	assert_int_equal(client_dirtylog_fresh(l), 0);
	/* nothing since: an empty take; the persistent bits stay */
	assert_int_equal(client_dirtylog_take(l, out, 0), 0);
	assert_int_equal(rpmemctl_dirtylog_count(l), 2);
	client_dirtylog_untrack(l);
	rpmemctl_dirtylog_close(&l);
	assert_int_equal(open_log(0, &l), 0);
	assert_int_equal(rpmemctl_dirtylog_count(l), 2);
	rpmemctl_dirtylog_close(&l);
}

/*
 * clear_cut__keeps_the_marks_made_since_the_cut -- a clear from a cut
 * erases only what was marked before it: an extent marked again since
 * (already persistent, so only the in-memory record sees it) stays, in
 * the file too; recut, the next clear keeps what came after it; a clear
 * with no cut open clears nothing
 */
static void clear_cut__keeps_the_marks_made_since_the_cut(void **state)
{
	(void)state;
	struct rpmemctl_dirtylog *l;
	assert_int_equal(open_log(0, &l), 0);
	assert_int_equal(client_dirtylog_clear_cut(l, 1), 0);
	for (uint64_t e = 0; e < 3; e++)
		assert_int_equal(rpmemctl_dirtylog_mark(l, e << 20, 8), 0);
	assert_int_equal(client_dirtylog_cut(l), 0);
	/* extent 1 again (its bit persistent already), extent 3 anew */
	assert_int_equal(rpmemctl_dirtylog_mark(l, 1u << 20, 8), 0);
	assert_int_equal(rpmemctl_dirtylog_mark(l, 3u << 20, 8), 0);
	assert_int_equal(client_dirtylog_clear_cut(l, 1), 1);
	assert_int_equal(rpmemctl_dirtylog_count(l), 2);
	assert_true(client_dirtylog_marked(l, 1) &&
		    client_dirtylog_marked(l, 3));
	/* nothing marked since the recut: the next clear takes both */
	assert_int_equal(rpmemctl_dirtylog_mark(l, 2u << 20, 8), 0);
	assert_int_equal(client_dirtylog_clear_cut(l, 0), 1);
	assert_int_equal(rpmemctl_dirtylog_count(l), 1);
	assert_true(client_dirtylog_marked(l, 2));
	/* the cut closed: no clear */
	assert_int_equal(client_dirtylog_clear_cut(l, 1), 0);
	rpmemctl_dirtylog_close(&l);
	assert_int_equal(open_log(0, &l), 0);
	assert_int_equal(rpmemctl_dirtylog_count(l), 1);
	assert_true(client_dirtylog_marked(l, 2));
	rpmemctl_dirtylog_close(&l);
}

#define T(f) cmocka_unit_test_setup_teardown(f, each_setup, each_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(open_pool__new_log_is_0600_and_clean),
		T(open_pool__symlink_is_eloop_and_not_followed),
		T(open_pool__other_owner_is_eperm),
		T(open_pool__writable_by_others_only_if_the_pool_is),
		T(open_pool__hard_link_is_eperm),
		T(set_clean__cleared_mark_is_replaced_at_the_next_open),
		T(take__keeps_every_persistent_mark_and_records_the_fresh),
		T(clear_cut__keeps_the_marks_made_since_the_cut),
	};
	return cmocka_run_group_tests_name("dirtylog", tests, setup, teardown);
}
