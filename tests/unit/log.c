/* SPDX-License-Identifier: BSD-3-Clause */
/* log.c -- unit tests of the log's rate limit (lib/common/log.c) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "log.h"

/* what the sink received */
static char lines[64][1024];
static unsigned nlines;

/* sink -- keep each logged line */
static void sink(int prio, const char *msg, void *arg)
{
	(void)prio;
	(void)arg;
	if (nlines < 64)
		snprintf(lines[nlines], sizeof(lines[0]), "%s", msg);
	nlines++;
}

static int setup(void **state)
{
	(void)state;
	nlines = 0;
	rpmem_log_init("test", LOG_DEBUG, sink, NULL);
	return 0;
}

/*
 * the limiter's clock (rpmem_now_ns, wrapped): it moves only when a test
 * moves it, so that a second lasts as long as the test needs however slow
 * the machine (it was CLOCK_MONOTONIC: 100 calls had to fit in a second)
 */
static uint64_t clock_ns = 1000000000ull;

uint64_t __wrap_rpmem_now_ns(void);
uint64_t __wrap_rpmem_now_ns(void)
{
	return clock_ns;
}

/* next_second -- the clock enters the next second, at its start */
static void next_second(void)
{
	clock_ns = (clock_ns / 1000000000ull + 1) * 1000000000ull;
}

static void rpmem_log_limited__at_most_per_sec_in_one_second(void **state)
{
	(void)state;
	static struct rpmem_log_limit l = RPMEM_LOG_LIMIT_INIT("things", 3);
	unsigned logged = 0;

	next_second();
	/* 100 calls spread over the second just begun */
	for (int i = 0; i < 100; i++, clock_ns += 9999999ull)
		logged += (unsigned)rpmem_log_limited(&l, LOG_NOTICE, "thing %d",
						      i);
	assert_int_equal(logged, 3);
	assert_int_equal(nlines, 3);
	assert_string_equal(lines[0], "thing 0");
	assert_string_equal(lines[2], "thing 2");
}

static void rpmem_log_limited__next_second_reports_the_suppressed(void **state)
{
	(void)state;
	static struct rpmem_log_limit l = RPMEM_LOG_LIMIT_INIT("things", 2);

	next_second();
	for (int i = 0; i < 10; i++)
		rpmem_log_limited(&l, LOG_NOTICE, "thing %d", i);
	next_second();
	assert_int_equal(rpmem_log_limited(&l, LOG_NOTICE, "later"), 1);
	assert_int_equal(nlines, 4);
	assert_non_null(strstr(lines[2], "8 more things suppressed"));
	assert_string_equal(lines[3], "later");
}

static void rpmem_log_limited__below_the_level_is_not_logged(void **state)
{
	(void)state;
	static struct rpmem_log_limit l = RPMEM_LOG_LIMIT_INIT("things", 2);

	rpmem_log_set_prio(LOG_WARNING);
	rpmem_log_limited(&l, LOG_NOTICE, "quiet");
	assert_int_equal(nlines, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(
			rpmem_log_limited__at_most_per_sec_in_one_second, setup),
		cmocka_unit_test_setup(
			rpmem_log_limited__next_second_reports_the_suppressed,
			setup),
		cmocka_unit_test_setup(
			rpmem_log_limited__below_the_level_is_not_logged, setup),
	};
	return cmocka_run_group_tests_name("log", tests, NULL, NULL);
}
