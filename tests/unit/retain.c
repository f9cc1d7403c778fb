/* SPDX-License-Identifier: BSD-3-Clause */
/* retain.c -- unit tests of retention policies (lib/common/retain.c) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "retain.h"

#define H 3600ull
#define D (24 * H)

/* policies parse, and print back the same */
static void keep_parse__round_trip(void **state)
{
	struct rpmem_keep k;
	char buf[RPMEM_KEEP_MAX], err[256];

	(void)state;
	assert_int_equal(rpmem_keep_parse("daily=7,last=10,monthly=12", &k,
					  err, sizeof(err)), 0);
	assert_int_equal(k.last, 10);
	assert_int_equal(k.daily, 7);
	assert_int_equal(k.monthly, 12);
	assert_int_equal(k.hourly, 0);
	rpmem_keep_format(&k, buf, sizeof(buf));
	assert_string_equal(buf, "last=10,daily=7,monthly=12");
	assert_false(rpmem_keep_all(&k));
}

/* what does not parse is refused with why, and changes nothing */
static void keep_parse__refuses(void **state)
{
	static const char *const bad[] = { "", "last", "last=", "last=0",
					   "last=-1", "last=+1", "last=1x",
					   "dayly=7", "last=1,", ",last=1",
					   "last=100001", "=3", NULL };
	struct rpmem_keep k = { .last = 5 };
	char err[256];

	(void)state;
	for (int i = 0; bad[i]; i++) {
		err[0] = '\0';
		assert_int_equal(rpmem_keep_parse(bad[i], &k, err, sizeof(err)),
				 -22);
		assert_true(err[0] != '\0');
		assert_int_equal(k.last, 5);
	}
}

/* last=N keeps the newest N; an empty policy keeps all */
static void keep_apply__last(void **state)
{
	const uint64_t t[5] = { 50, 40, 30, 20, 10 };
	struct rpmem_keep k = { .last = 2 }, all = { 0 };
	uint8_t keep[5];

	(void)state;
	rpmem_keep_apply(&k, t, 5, keep);
	assert_memory_equal(keep, ((uint8_t[]){ 1, 1, 0, 0, 0 }), 5);
	rpmem_keep_apply(&all, t, 5, keep);
	assert_memory_equal(keep, ((uint8_t[]){ 1, 1, 1, 1, 1 }), 5);
}

/* daily=N: the newest of each of the newest N days that have one */
static void keep_apply__daily_and_hourly(void **state)
{
	/* newest first: two on day 10, one on day 9, two on day 7 */
	const uint64_t t[5] = { 10 * D + 5 * H, 10 * D + 1 * H, 9 * D + 3 * H,
				7 * D + 9 * H, 7 * D + 2 * H };
	struct rpmem_keep k = { .daily = 2 }, h = { .hourly = 3 }, m = { 0 };
	uint8_t keep[5];

	(void)state;
	rpmem_keep_apply(&k, t, 5, keep);
	assert_memory_equal(keep, ((uint8_t[]){ 1, 0, 1, 0, 0 }), 5);
	k.daily = 10;
	rpmem_keep_apply(&k, t, 5, keep);
	assert_memory_equal(keep, ((uint8_t[]){ 1, 0, 1, 1, 0 }), 5);
	rpmem_keep_apply(&h, t, 5, keep);
	assert_memory_equal(keep, ((uint8_t[]){ 1, 1, 1, 0, 0 }), 5);
	/* a rule adds to another: last=1 and monthly=1 (all in one month) */
	m.last = 1;
	m.monthly = 1;
	rpmem_keep_apply(&m, t, 5, keep);
	assert_memory_equal(keep, ((uint8_t[]){ 1, 0, 0, 0, 0 }), 5);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(keep_parse__round_trip),
		cmocka_unit_test(keep_parse__refuses),
		cmocka_unit_test(keep_apply__last),
		cmocka_unit_test(keep_apply__daily_and_hourly),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
