/* SPDX-License-Identifier: BSD-3-Clause */
/* sync_cfg.c -- unit tests of the sync configuration and result objects */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "client_replicate.h"
#include "librpmemctl.h"
#include "util.h"

/* cfg_new -- a fresh configuration, asserted */
static struct rpmemctl_sync_cfg *cfg_new(void)
{
	struct rpmemctl_sync_cfg *cfg = NULL;
	assert_int_equal(rpmemctl_sync_cfg_new(&cfg), 0);
	assert_non_null(cfg);
	return cfg;
}

static void nop_progress(uint64_t done, uint64_t total, void *arg)
{
	(void)done;
	(void)total;
	(void)arg;
}

static void nop_range(uint64_t off, uint64_t len, void *arg)
{
	(void)off;
	(void)len;
	(void)arg;
}

/* --- rpmemctl_sync_cfg_new / _delete ------------------------------------- */

static void rpmemctl_sync_cfg_new__is_a_default_push(void **state)
{
	(void)state;
	struct rpmemctl_sync_cfg *cfg = cfg_new();
	assert_int_equal(cfg->mode, RPMEMCTL_SYNC_PUSH);
	assert_int_equal(cfg->flags, 0);
	assert_int_equal(cfg->block_size, 0); /* the library's default */
	assert_null(cfg->source);
	assert_null(cfg->progress);
	assert_null(cfg->range);
	rpmemctl_sync_cfg_delete(&cfg);
	assert_null(cfg);
}

static void rpmemctl_sync_cfg_new__null_out_is_einval(void **state)
{
	(void)state;
	assert_int_equal(rpmemctl_sync_cfg_new(NULL), -EINVAL);
}

static void rpmemctl_sync_cfg_delete__accepts_null(void **state)
{
	(void)state;
	struct rpmemctl_sync_cfg *cfg = NULL;
	rpmemctl_sync_cfg_delete(NULL);
	rpmemctl_sync_cfg_delete(&cfg);
	assert_null(cfg);
}

/* --- setters ------------------------------------------------------------- */

static void rpmemctl_sync_cfg_set_mode__takes_every_mode(void **state)
{
	(void)state;
	static const enum rpmemctl_sync_mode modes[] = {
		RPMEMCTL_SYNC_PULL, RPMEMCTL_SYNC_VERIFY,
		RPMEMCTL_SYNC_MIRROR, RPMEMCTL_SYNC_PUSH,
	};
	struct rpmemctl_sync_cfg *cfg = cfg_new();
	for (size_t i = 0; i < ARRAY_SIZE(modes); i++) {
		assert_int_equal(rpmemctl_sync_cfg_set_mode(cfg, modes[i]), 0);
		assert_int_equal(cfg->mode, modes[i]);
	}
	rpmemctl_sync_cfg_delete(&cfg);
}

static void rpmemctl_sync_cfg_set_mode__unknown_is_einval_and_kept(
	void **state)
{
	(void)state;
	struct rpmemctl_sync_cfg *cfg = cfg_new();
	assert_int_equal(rpmemctl_sync_cfg_set_mode(cfg, RPMEMCTL_SYNC_PULL),
			 0);
	assert_int_equal(rpmemctl_sync_cfg_set_mode(
				 cfg, (enum rpmemctl_sync_mode)4), -EINVAL);
	assert_int_equal(rpmemctl_sync_cfg_set_mode(
				 cfg, (enum rpmemctl_sync_mode)-1), -EINVAL);
	assert_int_equal(cfg->mode, RPMEMCTL_SYNC_PULL);
	rpmemctl_sync_cfg_delete(&cfg);
}

static void rpmemctl_sync_cfg_set_flags__unknown_bits_are_einval(
	void **state)
{
	(void)state;
	struct rpmemctl_sync_cfg *cfg = cfg_new();
	assert_int_equal(rpmemctl_sync_cfg_set_flags(cfg,
						     RPMEMCTL_SYNC_DRY_RUN), 0);
	assert_int_equal(cfg->flags, RPMEMCTL_SYNC_DRY_RUN);
	assert_int_equal(rpmemctl_sync_cfg_set_flags(cfg, 1u << 4), -EINVAL);
	assert_int_equal(rpmemctl_sync_cfg_set_flags(cfg, ~0u), -EINVAL);
	assert_int_equal(cfg->flags, RPMEMCTL_SYNC_DRY_RUN);
	assert_int_equal(rpmemctl_sync_cfg_set_flags(cfg, RPMEMCTL_SYNC_FULL),
			 0);
	assert_int_equal(cfg->flags, RPMEMCTL_SYNC_FULL);
	assert_int_equal(rpmemctl_sync_cfg_set_flags(cfg, 0), 0);
	assert_int_equal(cfg->flags, 0);
	rpmemctl_sync_cfg_delete(&cfg);
}

static void
rpmemctl_sync_cfg_set_block_size__powers_of_two_4k_to_64m_or_0(void **state)
{
	(void)state;
	struct rpmemctl_sync_cfg *cfg = cfg_new();
	for (uint32_t bs = 4096; bs <= (64u << 20); bs <<= 1) {
		assert_int_equal(rpmemctl_sync_cfg_set_block_size(cfg, bs), 0);
		assert_int_equal(cfg->block_size, bs);
	}
	assert_int_equal(rpmemctl_sync_cfg_set_block_size(cfg, 0), 0);
	assert_int_equal(cfg->block_size, 0);
	rpmemctl_sync_cfg_delete(&cfg);
}

static void rpmemctl_sync_cfg_set_block_size__others_are_einval_and_kept(
	void **state)
{
	(void)state;
	static const uint32_t bad[] = {
		1, 512, 2048, 4095, 4097, 12288, 65535, 65537, 3u << 20,
		128u << 20, 0x80000000u, 0xffffffffu,
	};
	struct rpmemctl_sync_cfg *cfg = cfg_new();
	assert_int_equal(rpmemctl_sync_cfg_set_block_size(cfg, 8192), 0);
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
		assert_int_equal(rpmemctl_sync_cfg_set_block_size(cfg, bad[i]),
				 -EINVAL);
	assert_int_equal(cfg->block_size, 8192);
	rpmemctl_sync_cfg_delete(&cfg);
}

static void rpmemctl_sync_cfg_set_source__copies_and_null_clears(
	void **state)
{
	(void)state;
	struct rpmemctl_sync_cfg *cfg = cfg_new();
	char src[] = "host:/pmem/db1";
	assert_int_equal(rpmemctl_sync_cfg_set_source(cfg, src), 0);
	src[0] = 'X'; /* the caller's buffer may change or go away */
	assert_string_equal(cfg->source, "host:/pmem/db1");
	assert_int_equal(rpmemctl_sync_cfg_set_source(cfg, "other"), 0);
	assert_string_equal(cfg->source, "other");
	assert_int_equal(rpmemctl_sync_cfg_set_source(cfg, NULL), 0);
	assert_null(cfg->source);
	rpmemctl_sync_cfg_delete(&cfg);
}

static void rpmemctl_sync_cfg_set_callbacks__each_keeps_its_own_arg(
	void **state)
{
	(void)state;
	int a, b;
	struct rpmemctl_sync_cfg *cfg = cfg_new();
	assert_int_equal(rpmemctl_sync_cfg_set_progress(cfg, nop_progress, &a),
			 0);
	assert_int_equal(rpmemctl_sync_cfg_set_range(cfg, nop_range, &b), 0);
	assert_ptr_equal(cfg->progress, nop_progress);
	assert_ptr_equal(cfg->progress_arg, &a);
	assert_ptr_equal(cfg->range, nop_range);
	assert_ptr_equal(cfg->range_arg, &b);
	assert_int_equal(rpmemctl_sync_cfg_set_progress(cfg, NULL, NULL), 0);
	assert_null(cfg->progress);
	assert_ptr_equal(cfg->range, nop_range);
	rpmemctl_sync_cfg_delete(&cfg);
}

static void rpmemctl_sync_cfg_setters__null_cfg_is_einval(void **state)
{
	(void)state;
	assert_int_equal(rpmemctl_sync_cfg_set_mode(NULL, RPMEMCTL_SYNC_PUSH),
			 -EINVAL);
	assert_int_equal(rpmemctl_sync_cfg_set_flags(NULL, 0), -EINVAL);
	assert_int_equal(rpmemctl_sync_cfg_set_block_size(NULL, 0), -EINVAL);
	assert_int_equal(rpmemctl_sync_cfg_set_source(NULL, "x"), -EINVAL);
	assert_int_equal(rpmemctl_sync_cfg_set_progress(NULL, NULL, NULL),
			 -EINVAL);
	assert_int_equal(rpmemctl_sync_cfg_set_range(NULL, NULL, NULL),
			 -EINVAL);
}

static void rpmemctl_sync_cfg_set_local_fd__none_by_default_and_checked(
	void **state)
{
	(void)state;
	struct rpmemctl_sync_cfg *cfg = cfg_new();
	assert_int_equal(cfg->local_fd, -1);
	assert_int_equal(rpmemctl_sync_cfg_set_local_fd(cfg, 7), 0);
	assert_int_equal(cfg->local_fd, 7);
	assert_int_equal(rpmemctl_sync_cfg_set_local_fd(cfg, -2), -EINVAL);
	assert_int_equal(cfg->local_fd, 7);
	assert_int_equal(rpmemctl_sync_cfg_set_local_fd(cfg, -1), 0);
	assert_int_equal(rpmemctl_sync_cfg_set_local_fd(NULL, 3), -EINVAL);
	rpmemctl_sync_cfg_delete(&cfg);
}

static void rpmemctl_sync_cfg_set_block_size__einval_has_a_message(
	void **state)
{
	(void)state;
	struct rpmemctl_sync_cfg *cfg = cfg_new();
	int ret = rpmemctl_sync_cfg_set_block_size(cfg, 5000);
	assert_int_equal(ret, -EINVAL);
	assert_non_null(strstr(rpmemctl_strerror(ret), "5000"));
	rpmemctl_sync_cfg_delete(&cfg);
}

/* --- rpmemctl_sync_result ------------------------------------------------ */

static void rpmemctl_sync_result_new__every_counter_is_0(void **state)
{
	(void)state;
	struct rpmemctl_sync_result *res = NULL;
	assert_int_equal(rpmemctl_sync_result_new(&res), 0);
	assert_non_null(res);
	assert_int_equal(rpmemctl_sync_result_get_size(res), 0);
	assert_int_equal(rpmemctl_sync_result_get_block_size(res), 0);
	assert_int_equal(rpmemctl_sync_result_get_blocks_total(res), 0);
	assert_int_equal(rpmemctl_sync_result_get_blocks_differ(res), 0);
	assert_int_equal(rpmemctl_sync_result_get_bytes_differ(res), 0);
	assert_int_equal(rpmemctl_sync_result_get_bytes_transferred(res), 0);
	assert_int_equal(rpmemctl_sync_result_get_data_bytes(res), 0);
	assert_int_equal(rpmemctl_sync_result_get_generation(res), 0);
	assert_int_equal(rpmemctl_sync_result_get_elapsed_ns(res), 0);
	assert_int_equal(rpmemctl_sync_result_get_blocks_compared(res), 0);
	rpmemctl_sync_result_delete(&res);
	assert_null(res);
	rpmemctl_sync_result_delete(&res);
	rpmemctl_sync_result_delete(NULL);
}

static void rpmemctl_sync_result_get__each_getter_reads_its_field(
	void **state)
{
	(void)state;
	struct rpmemctl_sync_result r = {
		.size = 1, .block_size = 2, .blocks_total = 3,
		.blocks_differ = 4, .bytes_differ = 5,
		.bytes_transferred = 6, .data_bytes = 7, .generation = 8,
		.elapsed_ns = 9, .blocks_compared = 10,
	};
	assert_int_equal(rpmemctl_sync_result_get_size(&r), 1);
	assert_int_equal(rpmemctl_sync_result_get_block_size(&r), 2);
	assert_int_equal(rpmemctl_sync_result_get_blocks_total(&r), 3);
	assert_int_equal(rpmemctl_sync_result_get_blocks_differ(&r), 4);
	assert_int_equal(rpmemctl_sync_result_get_bytes_differ(&r), 5);
	assert_int_equal(rpmemctl_sync_result_get_bytes_transferred(&r), 6);
	assert_int_equal(rpmemctl_sync_result_get_data_bytes(&r), 7);
	assert_int_equal(rpmemctl_sync_result_get_generation(&r), 8);
	assert_int_equal(rpmemctl_sync_result_get_elapsed_ns(&r), 9);
	assert_int_equal(rpmemctl_sync_result_get_blocks_compared(&r), 10);
	assert_int_equal(rpmemctl_sync_result_get_generation(NULL), 0);
}

/* --- rpmemctl_pool_sync2 ------------------------------------------------- */

static void rpmemctl_pool_sync2__no_pool_is_einval_and_res_untouched(
	void **state)
{
	(void)state;
	struct rpmemctl_sync_cfg *cfg = cfg_new();
	struct rpmemctl_sync_result res = { .generation = 42 };
	char buf[4096];
	assert_int_equal(rpmemctl_pool_sync2(NULL, buf, sizeof(buf), cfg,
					     &res), -EINVAL);
	assert_int_equal(res.generation, 42);
	rpmemctl_sync_cfg_delete(&cfg);
}

/* gens -- a history of n ids, newest first */
static struct rpmemctl_generations gens(unsigned n, const uint64_t *ids)
{
	struct rpmemctl_generations g = { .count = n };
	memcpy(g.ids, ids, n * sizeof(ids[0]));
	return g;
}

/* each outcome of the comparison of two histories, and its name */
static void rpmemctl_generations_compare__each_outcome(void **state)
{
	(void)state;
	static const uint64_t a[] = { 1 }, ba[] = { 2, 1 }, ca[] = { 3, 1 },
			      x[] = { 9, 8 };
	struct rpmemctl_generations g1 = gens(1, a), g21 = gens(2, ba),
				    g31 = gens(2, ca), gx = gens(2, x),
				    none = gens(0, a);
	assert_int_equal(rpmemctl_generations_compare(&g1, &g1),
			 RPMEMCTL_GEN_SAME);
	assert_int_equal(rpmemctl_generations_compare(&g21, &g1),
			 RPMEMCTL_GEN_AHEAD);
	assert_int_equal(rpmemctl_generations_compare(&g1, &g21),
			 RPMEMCTL_GEN_BEHIND);
	assert_int_equal(rpmemctl_generations_compare(&g21, &g31),
			 RPMEMCTL_GEN_DIVERGED);
	assert_int_equal(rpmemctl_generations_compare(&g21, &gx),
			 RPMEMCTL_GEN_UNRELATED);
	assert_int_equal(rpmemctl_generations_compare(&none, &g1),
			 RPMEMCTL_GEN_UNKNOWN);
	assert_int_equal(rpmemctl_generations_compare(&g1, NULL),
			 RPMEMCTL_GEN_UNKNOWN);
	assert_string_equal(rpmemctl_gen_cmp_str(RPMEMCTL_GEN_DIVERGED),
			    "diverged");
	assert_string_equal(rpmemctl_gen_cmp_str(99), "unknown");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(rpmemctl_sync_cfg_new__is_a_default_push),
		cmocka_unit_test(rpmemctl_sync_cfg_new__null_out_is_einval),
		cmocka_unit_test(rpmemctl_sync_cfg_delete__accepts_null),
		cmocka_unit_test(rpmemctl_sync_cfg_set_mode__takes_every_mode),
		cmocka_unit_test(
			rpmemctl_sync_cfg_set_mode__unknown_is_einval_and_kept),
		cmocka_unit_test(
			rpmemctl_sync_cfg_set_flags__unknown_bits_are_einval),
		cmocka_unit_test(
			rpmemctl_sync_cfg_set_block_size__powers_of_two_4k_to_64m_or_0),
		cmocka_unit_test(
			rpmemctl_sync_cfg_set_block_size__others_are_einval_and_kept),
		cmocka_unit_test(
			rpmemctl_sync_cfg_set_block_size__einval_has_a_message),
		cmocka_unit_test(
			rpmemctl_sync_cfg_set_source__copies_and_null_clears),
		cmocka_unit_test(
			rpmemctl_sync_cfg_set_callbacks__each_keeps_its_own_arg),
		cmocka_unit_test(rpmemctl_sync_cfg_setters__null_cfg_is_einval),
		cmocka_unit_test(rpmemctl_sync_result_new__every_counter_is_0),
		cmocka_unit_test(
			rpmemctl_sync_result_get__each_getter_reads_its_field),
		cmocka_unit_test(
			rpmemctl_sync_cfg_set_local_fd__none_by_default_and_checked),
		cmocka_unit_test(
			rpmemctl_pool_sync2__no_pool_is_einval_and_res_untouched),
		cmocka_unit_test(rpmemctl_generations_compare__each_outcome),
	};
	return cmocka_run_group_tests_name("sync_cfg", tests, NULL, NULL);
}
