/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pace.c -- unit tests of the daemon-wide bandwidth limit (daemon/session/pace.c)
 * against a clock the test moves (rpmem_now_ns wrapped)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "pace.h"

#define MS 1000000ull
#define SEC 1000000000ull

static uint64_t clock_ns;

uint64_t __wrap_rpmem_now_ns(void);
uint64_t __wrap_rpmem_now_ns(void)
{
	return clock_ns;
}

static int setup(void **st)
{
	static struct rpmemd_pacer p;
	clock_ns = 1000 * SEC;
	assert_int_equal(rpmemd_pacer_init(&p), 0);
	*st = &p;
	return 0;
}

static int teardown(void **st)
{
	rpmemd_pacer_fini(*st);
	return 0;
}

static void pace__no_rate_never_waits(void **st)
{
	struct rpmemd_pacer *p = *st;

	assert_int_equal(rpmemd_pacer_rate(p), 0);
	for (int i = 0; i < 1000; i++)
		assert_int_equal(rpmemd_pacer_take(p, 1u << 30), 0);
}

static void pace__back_to_back_chunks_wait_their_time_at_the_rate(void **st)
{
	struct rpmemd_pacer *p = *st;

	rpmemd_pacer_set_rate(p, 1000000); /* 1 MB/s: 1 ms per 1000 bytes */
	assert_int_equal(rpmemd_pacer_rate(p), 1000000);
	/* the first 10 ms are the idle slack: taken at once */
	assert_int_equal(rpmemd_pacer_take(p, 10000), 0);
	/* then each 1000 bytes costs 1 ms more, the clock standing still */
	assert_int_equal(rpmemd_pacer_take(p, 1000), 0);
	assert_int_equal(rpmemd_pacer_take(p, 1000), 1 * MS);
	assert_int_equal(rpmemd_pacer_take(p, 5000), 2 * MS);
	assert_int_equal(rpmemd_pacer_take(p, 1), 7 * MS);
}

static void pace__an_idle_pacer_saves_at_most_the_slack(void **st)
{
	struct rpmemd_pacer *p = *st;

	rpmemd_pacer_set_rate(p, 1000000);
	assert_int_equal(rpmemd_pacer_take(p, 1000), 0);
	clock_ns += 60 * SEC; /* a minute idle */
	/* only RPMEMD_PACE_SLACK_NS (10 ms, 10000 bytes) of credit */
	assert_int_equal(rpmemd_pacer_take(p, 10000), 0);
	assert_int_equal(rpmemd_pacer_take(p, 1000), 0);
	assert_int_equal(rpmemd_pacer_take(p, 1000), 1 * MS);
}

static void pace__the_average_holds_when_the_caller_sleeps_as_told(void **st)
{
	struct rpmemd_pacer *p = *st;
	uint64_t start = clock_ns, bytes = 0;

	rpmemd_pacer_set_rate(p, 50u << 20); /* 50 MiB/s */
	for (int i = 0; i < 1600; i++) { /* 100 MiB */
		clock_ns += rpmemd_pacer_take(p, RPMEMD_PACE_CHUNK);
		bytes += RPMEMD_PACE_CHUNK;
	}
	/* 2 s at the rate, less at most the 10 ms slack taken up front */
	uint64_t took = clock_ns - start;
	assert_true(took <= 2 * SEC);
	assert_true(took >= 2 * SEC - RPMEMD_PACE_SLACK_NS - 2 * MS);
	assert_int_equal(bytes, 100u << 20);
}

static void pace__a_new_rate_starts_afresh_and_zero_lifts_it(void **st)
{
	struct rpmemd_pacer *p = *st;

	rpmemd_pacer_set_rate(p, 1000);
	assert_int_equal(rpmemd_pacer_take(p, 1000000), 0);
	/* 1000 s of debt at 1000 B/s */
	assert_true(rpmemd_pacer_take(p, 1) > 900 * SEC);
	rpmemd_pacer_set_rate(p, 1000000);
	assert_int_equal(rpmemd_pacer_take(p, 1000), 0);
	rpmemd_pacer_set_rate(p, 0);
	assert_int_equal(rpmemd_pacer_take(p, 1u << 30), 0);
}

static void pace__the_least_rate_charges_a_whole_chunk_exactly(void **st)
{
	struct rpmemd_pacer *p = *st;

	/* 4096 B/s (rpmemd.conf's least bwlimit): a 64 KiB chunk is 16 s */
	rpmemd_pacer_set_rate(p, 4096);
	assert_int_equal(rpmemd_pacer_take(p, RPMEMD_PACE_CHUNK), 0);
	assert_int_equal(rpmemd_pacer_take(p, RPMEMD_PACE_CHUNK),
			 16 * SEC - RPMEMD_PACE_SLACK_NS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(pace__no_rate_never_waits,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			pace__back_to_back_chunks_wait_their_time_at_the_rate,
			setup, teardown),
		cmocka_unit_test_setup_teardown(
			pace__an_idle_pacer_saves_at_most_the_slack, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			pace__the_average_holds_when_the_caller_sleeps_as_told,
			setup, teardown),
		cmocka_unit_test_setup_teardown(
			pace__a_new_rate_starts_afresh_and_zero_lifts_it,
			setup, teardown),
		cmocka_unit_test_setup_teardown(
			pace__the_least_rate_charges_a_whole_chunk_exactly,
			setup, teardown),
	};
	return cmocka_run_group_tests_name("pace", tests, NULL, NULL);
}
