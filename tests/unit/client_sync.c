/* SPDX-License-Identifier: BSD-3-Clause */
/* client_sync.c -- unit tests of push, pull, verify, mirror on a fake target */
#include <errno.h>
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
#include "fake_target.h"
#include "librpmemctl.h"
#include "util.h"

#define HOST "127.0.0.1"
#define KIB 1024u
#define MIB (1u << 20)
#define CB (64 * KIB) /* the default coarse block */
#define FB (4 * KIB)  /* the fine block */
#define NO_HASHV 0u

/* a fake target holding a pool, an open session to it, a local copy */
struct env {
	struct fake_target *ft;
	struct rpmemctl_session *s;
	struct rpmemctl_pool *p;
	uint8_t *local;
	size_t size;
};

/*
 * env_open -- a target with caps and a pool of size bytes in state (of
 * generation 1 if consistent), filled with a pattern; the local copy
 * equal to it; the pool open for writing
 */
static void env_open(struct env *e, uint32_t caps, size_t size, uint8_t state)
{
	memset(e, 0, sizeof(*e));
	struct fake_target_opts o = {
		.caps = caps,
		.size = size,
		.state = state,
		.generation = state == RPMEM_POOL_CONSISTENT ? 1 : 0,
	};
	assert_int_equal(fake_target_start(&o, &e->ft), 0);
	fake_pattern(fake_target_pool(e->ft), size, 42);
	e->size = size;
	e->local = malloc(size);
	assert_non_null(e->local);
	memcpy(e->local, fake_target_pool(e->ft), size);
	assert_int_equal(rpmemctl_session_open(HOST, fake_target_port(e->ft),
					       RPMEMCTL_TRANSPORT_TCP, &e->s),
			 0);
	assert_int_equal(rpmemctl_pool_open(e->s, "r1", "p1",
					    RPMEMCTL_OPEN_RDWR, &e->p),
			 0);
}

/*
 * check_written_whole -- every byte of the pool was written to the target
 * and the target's pool now equals the local copy
 */
static void check_written_whole(struct env *e)
{
	assert_int_equal(fake_target_written(e->ft, 0, e->size), e->size);
	assert_memory_equal(fake_target_pool(e->ft), e->local, e->size);
}

/* env_close -- close and free everything */
static void env_close(struct env *e)
{
	assert_int_equal(rpmemctl_pool_close(&e->p), 0);
	rpmemctl_session_close(&e->s);
	assert_int_equal(fake_target_wait_idle(e->ft), 0);
	fake_target_stop(&e->ft);
	free(e->local);
}

/* poke -- change the local byte at off */
static void poke(struct env *e, uint64_t off)
{
	e->local[off] ^= 0x5a;
}

/* sync_mode -- rpmemctl_pool_sync of the local copy in mode with flags */
static int sync_mode(struct env *e, enum rpmemctl_sync_mode mode,
		     unsigned flags, struct rpmemctl_sync_stats *st,
		     rpmemctl_range_fn range, void *arg)
{
	struct rpmemctl_sync_opts o = { .mode = mode, .flags = flags,
					.source = "unit:/local",
					.range = range, .arg = arg };
	return rpmemctl_pool_sync(e->p, e->local, e->size, &o, st);
}

/* the ranges a sync reported through its range callback */
struct seen {
	unsigned n;
	uint64_t off[64];
	uint64_t len[64];
};

static void collect(uint64_t off, uint64_t len, void *arg)
{
	struct seen *s = arg;
	if (s->n < 64) {
		s->off[s->n] = off;
		s->len[s->n] = len;
	}
	s->n++;
}

/* check_writes -- the target got exactly n WRITEs of 4 KiB at off[] */
static void check_writes(struct env *e, const uint64_t *off, size_t n)
{
	size_t got;
	const struct fake_write *w = fake_target_writes(e->ft, &got);
	assert_int_equal(got, n);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(w[i].offset, off[i]);
		assert_int_equal(w[i].len, FB);
	}
}

/* check_hash -- the i-th hash record is type at off, count blocks of bs */
static void check_hash(struct env *e, size_t i, uint16_t type, uint64_t off,
		       uint32_t bs, uint32_t count)
{
	size_t n;
	const struct fake_hash_req *h = fake_target_hashes(e->ft, &n);
	assert_true(i < n);
	assert_int_equal(h[i].type, type);
	assert_int_equal(h[i].offset, off);
	assert_int_equal(h[i].block_size, bs);
	assert_int_equal(h[i].count, count);
}

/*
 * push_scattered -- four 4 KiB blocks changed in three coarse blocks
 * far apart are what a push moves, with or without HASHV
 */
static void push_scattered(uint32_t caps)
{
	struct env e;
	env_open(&e, caps, 4 * MIB, RPMEM_POOL_CONSISTENT);
	const uint64_t changed[] = { 3 * CB + 2 * FB, 20 * CB,
				     20 * CB + 15 * FB, 40 * CB + 7 * FB };
	for (size_t i = 0; i < 4; i++)
		poke(&e, changed[i] + 123);

	struct rpmemctl_sync_stats st;
	assert_int_equal(sync_mode(&e, RPMEMCTL_SYNC_PUSH, 0, &st, NULL, NULL),
			 0);
	check_writes(&e, changed, 4);
	assert_int_equal(fake_target_written(e.ft, 0, 4 * MIB), 4 * FB);
	assert_memory_equal(fake_target_pool(e.ft), e.local, e.size);
	assert_int_equal(st.blocks_differ, 3);
	assert_int_equal(st.bytes_differ, 4 * FB);
	assert_int_equal(st.data_bytes, 4 * FB);

	/* the coarse pass: one HASH of all 64 blocks */
	check_hash(&e, 0, RPMEM_MSG_HASH, 0, CB, 64);
	/* the fine pass: the 16 fine blocks of each differing coarse one */
	uint16_t fine = caps & RPMEM_CAP_HASHV ? RPMEM_MSG_HASHV :
						 RPMEM_MSG_HASH;
	check_hash(&e, 1, fine, 3 * CB, FB, 16);
	check_hash(&e, 2, fine, 20 * CB, FB, 16);
	check_hash(&e, 3, fine, 40 * CB, FB, 16);
	size_t n;
	fake_target_hashes(e.ft, &n);
	assert_int_equal(n, 4);
	if (caps & RPMEM_CAP_HASHV) {
		assert_int_equal(fake_target_count(e.ft, RPMEM_MSG_HASH), 1);
		assert_int_equal(fake_target_count(e.ft, RPMEM_MSG_HASHV), 1);
	} else {
		assert_int_equal(fake_target_count(e.ft, RPMEM_MSG_HASH), 4);
		assert_int_equal(fake_target_count(e.ft, RPMEM_MSG_HASHV), 0);
	}

	/* syncing before the first byte, consistent after the flush */
	assert_int_equal(fake_target_count(e.ft, RPMEM_MSG_SET_STATE), 2);
	assert_int_equal(fake_target_count(e.ft, RPMEM_MSG_FLUSH), 1);
	uint64_t gen;
	assert_int_equal(fake_target_state(e.ft, &gen), RPMEM_POOL_CONSISTENT);
	assert_int_equal(gen, 2);
	assert_int_equal(st.generation, 2);
	assert_string_equal(fake_target_source(e.ft), "unit:/local");
	env_close(&e);
}

static void rpmemctl_pool_sync__push_hashv_moves_only_changed_4k_blocks(
	void **state)
{
	(void)state;
	push_scattered(RPMEM_CAP_HASHV);
}

static void rpmemctl_pool_sync__push_hash_only_moves_only_changed_4k_blocks(
	void **state)
{
	(void)state;
	push_scattered(NO_HASHV);
}

/*
 * The coarse blocks that differ in the gap tests: 1, 3 and 4 (a gap of
 * one identical block), 8 (a gap of three: 192 KiB), 13 (a gap of four)
 */
static const uint64_t gap_changed[] = { 1 * CB + 5 * FB, 3 * CB,
					4 * CB + 15 * FB, 8 * CB + 8 * FB,
					13 * CB + 1 * FB };

/*
 * push_gaps -- a 4 MiB pool on a target with caps, the gap_changed blocks
 * changed locally, pushed
 */
static void push_gaps(struct env *e, uint32_t caps,
		      struct rpmemctl_sync_stats *st)
{
	env_open(e, caps, 4 * MIB, RPMEM_POOL_CONSISTENT);
	for (size_t i = 0; i < 5; i++)
		poke(e, gap_changed[i] + 9);
	assert_int_equal(sync_mode(e, RPMEMCTL_SYNC_PUSH, 0, st, NULL, NULL),
			 0);
}

static void rpmemctl_pool_sync__hash_only_bridges_gaps_up_to_192k(
	void **state)
{
	(void)state;
	struct env e;
	struct rpmemctl_sync_stats st;
	push_gaps(&e, NO_HASHV, &st);
	/*
	 * One HASH from block 1 through 8: the identical blocks 2 and 5..7
	 * are hashed again rather than asked for in requests of their own.
	 * The gap of four before 13 is not bridged: a HASH of its own.
	 */
	check_hash(&e, 0, RPMEM_MSG_HASH, 0, CB, 64);
	check_hash(&e, 1, RPMEM_MSG_HASH, 1 * CB, FB, 8 * 16);
	check_hash(&e, 2, RPMEM_MSG_HASH, 13 * CB, FB, 16);
	size_t n;
	fake_target_hashes(e.ft, &n);
	assert_int_equal(n, 3);
	assert_int_equal(fake_target_count(e.ft, RPMEM_MSG_HASHV), 0);
	/* the bridged blocks compare equal and move nothing */
	check_writes(&e, gap_changed, 5);
	assert_int_equal(st.blocks_differ, 5);
	assert_int_equal(st.data_bytes, 5 * FB);
	assert_memory_equal(fake_target_pool(e.ft), e.local, e.size);
	env_close(&e);
}

static void rpmemctl_pool_sync__hashv_does_not_bridge_gaps(void **state)
{
	(void)state;
	struct env e;
	struct rpmemctl_sync_stats st;
	push_gaps(&e, RPMEM_CAP_HASHV, &st);
	/* one HASHV: a range per run of adjacent differing blocks */
	check_hash(&e, 0, RPMEM_MSG_HASH, 0, CB, 64);
	check_hash(&e, 1, RPMEM_MSG_HASHV, 1 * CB, FB, 16);
	check_hash(&e, 2, RPMEM_MSG_HASHV, 3 * CB, FB, 32);
	check_hash(&e, 3, RPMEM_MSG_HASHV, 8 * CB, FB, 16);
	check_hash(&e, 4, RPMEM_MSG_HASHV, 13 * CB, FB, 16);
	size_t n;
	const struct fake_hash_req *h = fake_target_hashes(e.ft, &n);
	assert_int_equal(n, 5);
	assert_int_equal(h[4].seq, h[1].seq); /* the same request */
	assert_int_equal(fake_target_count(e.ft, RPMEM_MSG_HASHV), 1);
	/* a target without RPMEM_CAP_HASH_TREE gets plain hashes */
	assert_int_equal(h[0].flags, 0);
	check_writes(&e, gap_changed, 5);
	assert_memory_equal(fake_target_pool(e.ft), e.local, e.size);
	env_close(&e);
}

/*
 * a push to a target with tree hashes finds exactly the changed 4 KiB
 * blocks; only the coarse requests ask for tree hashes
 */
static void rpmemctl_pool_sync__tree_hashes_find_exactly_the_changes(
	void **state)
{
	(void)state;
	struct env e;
	struct rpmemctl_sync_stats st;
	push_gaps(&e, RPMEM_CAP_HASHV | RPMEM_CAP_HASH_CACHE |
			      RPMEM_CAP_HASH_TREE,
		  &st);
	check_hash(&e, 0, RPMEM_MSG_HASH, 0, CB, 64);
	check_hash(&e, 1, RPMEM_MSG_HASHV, 1 * CB, FB, 16);
	size_t n;
	const struct fake_hash_req *h = fake_target_hashes(e.ft, &n);
	assert_int_equal(h[0].flags, RPMEM_HASH_TREE);
	assert_int_equal(h[1].flags, 0);
	check_writes(&e, gap_changed, 5);
	assert_int_equal(st.blocks_differ, 5);
	assert_int_equal(st.data_bytes, 5 * FB);
	assert_memory_equal(fake_target_pool(e.ft), e.local, e.size);
	env_close(&e);
}

static void rpmemctl_pool_sync__hash_only_splits_long_runs_at_4m(
	void **state)
{
	(void)state;
	struct env e;
	env_open(&e, NO_HASHV, 8 * MIB, RPMEM_POOL_CONSISTENT);
	/* every coarse block differs: one run of 8 MiB */
	for (uint64_t off = 0; off < e.size; off += CB)
		poke(&e, off + CB - 1);
	struct rpmemctl_sync_stats st;
	assert_int_equal(sync_mode(&e, RPMEMCTL_SYNC_PUSH, 0, &st, NULL, NULL),
			 0);
	check_hash(&e, 0, RPMEM_MSG_HASH, 0, CB, 128);
	/* all differ: 16 of them are sampled (one 4 KiB block of 16 each) */
	for (size_t k = 0; k < 16; k++)
		check_hash(&e, 1 + k, RPMEM_MSG_HASH, k * 8 * CB, FB, 16);
	check_hash(&e, 17, RPMEM_MSG_HASH, 0, FB, 1024);
	check_hash(&e, 18, RPMEM_MSG_HASH, 4 * MIB, FB, 1024);
	size_t n;
	fake_target_hashes(e.ft, &n);
	assert_int_equal(n, 19);
	assert_int_equal(st.blocks_differ, 128);
	assert_int_equal(fake_target_written(e.ft, 0, e.size), 128 * FB);
	assert_memory_equal(fake_target_pool(e.ft), e.local, e.size);
	env_close(&e);
}

static void rpmemctl_pool_sync__dense_changes_write_coarse_blocks_whole(
	void **state)
{
	(void)state;
	struct env e;
	env_open(&e, RPMEM_CAP_HASHV, 8 * MIB, RPMEM_POOL_CONSISTENT);
	/* every 4 KiB block changed but the last of each coarse block */
	for (uint64_t off = 0; off < e.size; off += FB)
		if ((off + FB) % CB)
			poke(&e, off);
	struct rpmemctl_sync_stats st;
	assert_int_equal(sync_mode(&e, RPMEMCTL_SYNC_PUSH, 0, &st, NULL, NULL),
			 0);
	/* the coarse compare and a sample of 16 blocks; no fine pass */
	check_hash(&e, 0, RPMEM_MSG_HASH, 0, CB, 128);
	for (size_t k = 0; k < 16; k++)
		check_hash(&e, 1 + k, RPMEM_MSG_HASH, k * 8 * CB, FB, 16);
	assert_int_equal(fake_target_count(e.ft, RPMEM_MSG_HASHV), 0);
	assert_int_equal(fake_target_count(e.ft, RPMEM_MSG_HASH), 17);
	/* the coarse blocks went whole, the unchanged 4 KiB blocks too */
	assert_int_equal(st.blocks_differ, 128);
	assert_int_equal(st.bytes_differ, e.size);
	check_written_whole(&e);
	env_close(&e);
}

static void rpmemctl_pool_sync__single_run_goes_as_hash_to_a_hashv_target(
	void **state)
{
	(void)state;
	struct env e;
	env_open(&e, RPMEM_CAP_HASHV, 4 * MIB, RPMEM_POOL_CONSISTENT);
	poke(&e, 10 * CB + 3 * FB);
	poke(&e, 11 * CB);
	assert_int_equal(sync_mode(&e, RPMEMCTL_SYNC_PUSH, 0, NULL, NULL, NULL),
			 0);
	/* a request of one range is a HASH whatever the target can do */
	check_hash(&e, 1, RPMEM_MSG_HASH, 10 * CB, FB, 32);
	assert_int_equal(fake_target_count(e.ft, RPMEM_MSG_HASHV), 0);
	assert_int_equal(fake_target_count(e.ft, RPMEM_MSG_HASH), 2);
	/* the two changed 4 KiB blocks, in one range, in one WRITE */
	size_t n;
	const struct fake_write *w = fake_target_writes(e.ft, &n);
	assert_int_equal(n, 2);
	assert_int_equal(w[0].offset, 10 * CB + 3 * FB);
	assert_int_equal(w[1].offset, 11 * CB);
	env_close(&e);
}

/* verify_reports -- verify (or a dry-run push) reports, moves nothing */
static void verify_reports(uint32_t caps, enum rpmemctl_sync_mode mode,
			   unsigned flags)
{
	struct env e;
	env_open(&e, caps, 4 * MIB, RPMEM_POOL_CONSISTENT);
	/* two adjacent 4 KiB blocks across a coarse boundary, and one more */
	poke(&e, 5 * CB - FB);
	poke(&e, 5 * CB);
	poke(&e, 30 * CB + 4 * FB + 77);
	struct seen seen = { 0 };
	struct rpmemctl_sync_stats st;
	assert_int_equal(sync_mode(&e, mode, flags, &st, collect, &seen), 1);
	assert_int_equal(seen.n, 2);
	assert_int_equal(seen.off[0], 5 * CB - FB);
	assert_int_equal(seen.len[0], 2 * FB);
	assert_int_equal(seen.off[1], 30 * CB + 4 * FB);
	assert_int_equal(seen.len[1], FB);
	assert_int_equal(st.blocks_differ, 3);
	assert_int_equal(st.bytes_differ, 3 * FB);
	assert_int_equal(st.data_bytes, 0);
	/* nothing written, no state change on the target */
	assert_int_equal(fake_target_count(e.ft, RPMEM_MSG_WRITE), 0);
	assert_int_equal(fake_target_count(e.ft, RPMEM_MSG_FLUSH), 0);
	assert_int_equal(fake_target_count(e.ft, RPMEM_MSG_SET_STATE), 0);
	uint64_t gen;
	assert_int_equal(fake_target_state(e.ft, &gen), RPMEM_POOL_CONSISTENT);
	assert_int_equal(gen, 1);
	assert_int_not_equal(memcmp(fake_target_pool(e.ft), e.local, e.size),
			     0);
	env_close(&e);
}

static void rpmemctl_pool_sync__verify_reports_ranges_and_writes_nothing(
	void **state)
{
	(void)state;
	verify_reports(RPMEM_CAP_HASHV, RPMEMCTL_SYNC_VERIFY, 0);
	verify_reports(NO_HASHV, RPMEMCTL_SYNC_VERIFY, 0);
}

static void rpmemctl_pool_sync__dry_run_push_reports_and_writes_nothing(
	void **state)
{
	(void)state;
	verify_reports(RPMEM_CAP_HASHV, RPMEMCTL_SYNC_PUSH,
		       RPMEMCTL_SYNC_DRY_RUN);
	verify_reports(NO_HASHV, RPMEMCTL_SYNC_PUSH, RPMEMCTL_SYNC_DRY_RUN);
}

static void rpmemctl_pool_sync__pull_fills_the_local_copy(void **state)
{
	(void)state;
	struct env e;
	env_open(&e, NO_HASHV, 4 * MIB, RPMEM_POOL_CONSISTENT);
	memset(e.local + 100 * FB, 0, 10 * FB);
	poke(&e, 7);
	struct rpmemctl_sync_stats st;
	assert_int_equal(sync_mode(&e, RPMEMCTL_SYNC_PULL, 0, &st, NULL, NULL),
			 0);
	assert_memory_equal(e.local, fake_target_pool(e.ft), e.size);
	assert_int_equal(st.data_bytes, 11 * FB);
	/* one READ per differing range; the target is not changed */
	assert_int_equal(fake_target_count(e.ft, RPMEM_MSG_READ), 2);
	assert_int_equal(fake_target_count(e.ft, RPMEM_MSG_WRITE), 0);
	assert_int_equal(fake_target_count(e.ft, RPMEM_MSG_SET_STATE), 0);
	env_close(&e);
}

/* what a pull's commit hook saw */
struct hook {
	struct env *e;
	unsigned calls;
	int complete; /* the local copy held the pool's bytes at the call */
	int ret;      /* what the hook returns */
};

static int commit_hook(void *arg)
{
	struct hook *h = arg;

	h->calls++;
	h->complete = !memcmp(h->e->local, fake_target_pool(h->e->ft),
			      h->e->size);
	return h->ret;
}

/* pull2 -- rpmemctl_pool_sync2 pull of the local copy with hook h */
static int pull2(struct env *e, unsigned flags, uint64_t bwlimit,
		 struct hook *h)
{
	struct rpmemctl_sync_cfg *cfg;
	struct rpmemctl_sync_result *res;

	assert_int_equal(rpmemctl_sync_cfg_new(&cfg), 0);
	assert_int_equal(rpmemctl_sync_cfg_set_mode(cfg, RPMEMCTL_SYNC_PULL),
			 0);
	assert_int_equal(rpmemctl_sync_cfg_set_flags(cfg, flags), 0);
	assert_int_equal(rpmemctl_sync_cfg_set_bwlimit(cfg, bwlimit), 0);
	assert_int_equal(rpmemctl_sync_cfg_set_commit(cfg, commit_hook, h), 0);
	assert_int_equal(rpmemctl_sync_result_new(&res), 0);
	int ret = rpmemctl_pool_sync2(e->p, e->local, e->size, cfg, res);
	rpmemctl_sync_result_delete(&res);
	rpmemctl_sync_cfg_delete(&cfg);
	return ret;
}

static void rpmemctl_pool_sync__pull_commit_hook_runs_once_the_data_is_in(
	void **state)
{
	(void)state;
	struct env e;
	env_open(&e, NO_HASHV, 4 * MIB, RPMEM_POOL_CONSISTENT);
	struct hook h = { .e = &e };
	/* a dry run moves nothing and commits nothing */
	poke(&e, 3 * FB + 1);
	assert_int_equal(pull2(&e, RPMEMCTL_SYNC_DRY_RUN, 0, &h), 1);
	assert_int_equal(h.calls, 0);
	/* a real pull calls it once, after the last range */
	assert_int_equal(pull2(&e, 0, 0, &h), 0);
	assert_int_equal(h.calls, 1);
	assert_true(h.complete);
	/* its error is the pull's */
	poke(&e, 9 * FB);
	h.ret = -EXDEV;
	assert_int_equal(pull2(&e, 0, 0, &h), -EXDEV);
	assert_int_equal(h.calls, 2);
	assert_int_equal(rpmemctl_sync_cfg_set_commit(NULL, commit_hook, &h),
			 -EINVAL);
	env_close(&e);
}

static void rpmemctl_pool_sync__paced_pull_reads_in_small_pieces(void **state)
{
	(void)state;
	struct env e;
	env_open(&e, NO_HASHV, 4 * MIB, RPMEM_POOL_CONSISTENT);
	struct hook h = { .e = &e };
	memset(e.local + 100 * FB, 0, 10 * FB);
	/* 20 x 8 KiB a second: READs of 8 KiB, 50 ms apart */
	assert_int_equal(pull2(&e, 0, 20 * 2 * FB, &h), 0);
	assert_true(h.complete);
	assert_int_equal(fake_target_count(e.ft, RPMEM_MSG_READ), 5);
	env_close(&e);
}

static void rpmemctl_pool_sync__pull_from_a_syncing_pool_is_enodata(
	void **state)
{
	(void)state;
	struct env e;
	env_open(&e, NO_HASHV, MIB, RPMEM_POOL_SYNCING);
	assert_int_equal(sync_mode(&e, RPMEMCTL_SYNC_PULL, 0, NULL, NULL, NULL),
			 -ENODATA);
	assert_int_equal(fake_target_count(e.ft, RPMEM_MSG_HASH), 0);
	env_close(&e);
}

static void rpmemctl_pool_sync__nothing_differs_nothing_written(void **state)
{
	(void)state;
	struct env e;
	env_open(&e, NO_HASHV, 4 * MIB, RPMEM_POOL_CONSISTENT);
	struct rpmemctl_sync_stats st;
	assert_int_equal(sync_mode(&e, RPMEMCTL_SYNC_PUSH, 0, &st, NULL, NULL),
			 0);
	assert_int_equal(sync_mode(&e, RPMEMCTL_SYNC_VERIFY, 0, NULL, NULL,
				   NULL),
			 0);
	assert_int_equal(sync_mode(&e, RPMEMCTL_SYNC_PULL, 0, NULL, NULL,
				   NULL),
			 0);
	assert_int_equal(st.blocks_differ, 0);
	assert_int_equal(st.data_bytes, 0);
	/* the coarse pass of each, and nothing else */
	assert_int_equal(fake_target_count(e.ft, RPMEM_MSG_HASH), 3);
	assert_int_equal(fake_target_count(e.ft, RPMEM_MSG_WRITE), 0);
	assert_int_equal(fake_target_count(e.ft, RPMEM_MSG_READ), 0);
	assert_int_equal(fake_target_count(e.ft, RPMEM_MSG_FLUSH), 0);
	assert_int_equal(fake_target_count(e.ft, RPMEM_MSG_SET_STATE), 0);
	uint64_t gen;
	fake_target_state(e.ft, &gen);
	assert_int_equal(gen, 1);
	env_close(&e);
}

static void rpmemctl_pool_sync__identical_but_not_consistent_is_marked(
	void **state)
{
	(void)state;
	struct env e;
	env_open(&e, NO_HASHV, 4 * MIB, RPMEM_POOL_SYNCING);
	struct rpmemctl_sync_stats st;
	assert_int_equal(sync_mode(&e, RPMEMCTL_SYNC_PUSH, 0, &st, NULL, NULL),
			 0);
	/* no data, but the whole pool flushed and the pool consistent */
	assert_int_equal(fake_target_count(e.ft, RPMEM_MSG_WRITE), 0);
	assert_int_equal(fake_target_count(e.ft, RPMEM_MSG_FLUSH), 1);
	assert_int_equal(fake_target_count(e.ft, RPMEM_MSG_SET_STATE), 2);
	uint64_t gen;
	assert_int_equal(fake_target_state(e.ft, &gen), RPMEM_POOL_CONSISTENT);
	assert_int_equal(gen, 1);
	assert_int_equal(st.generation, 1);
	env_close(&e);
}

static void rpmemctl_pool_sync__mirror_writes_every_byte_without_hashing(
	void **state)
{
	(void)state;
	struct env e;
	env_open(&e, RPMEM_CAP_HASHV, 2 * MIB + FB, RPMEM_POOL_EMPTY);
	fake_pattern(e.local, e.size, 7);
	struct rpmemctl_sync_stats st;
	assert_int_equal(sync_mode(&e, RPMEMCTL_SYNC_MIRROR, 0, &st, NULL,
				   NULL),
			 0);
	assert_memory_equal(fake_target_pool(e.ft), e.local, e.size);
	assert_int_equal(fake_target_count(e.ft, RPMEM_MSG_WRITE), 3);
	assert_int_equal(fake_target_written(e.ft, 0, e.size), e.size);
	assert_int_equal(fake_target_count(e.ft, RPMEM_MSG_HASH), 0);
	assert_int_equal(fake_target_count(e.ft, RPMEM_MSG_HASHV), 0);
	assert_int_equal(st.data_bytes, e.size);
	uint64_t gen;
	assert_int_equal(fake_target_state(e.ft, &gen), RPMEM_POOL_CONSISTENT);
	assert_int_equal(gen, 1);
	env_close(&e);
}

static void rpmemctl_pool_sync__failed_fine_hash_writes_nothing_and_drains(
	void **state)
{
	(void)state;
	struct env e;
	env_open(&e, NO_HASHV, 4 * MIB, RPMEM_POOL_CONSISTENT);
	for (uint64_t b = 0; b < 64; b += 8)
		poke(&e, b * CB);
	/* the third HASH: the second of the eight fine ones in flight */
	fake_target_script(e.ft, RPMEM_MSG_HASH, 3, FAKE_ERROR, RPMEM_E_IO);
	assert_int_equal(sync_mode(&e, RPMEMCTL_SYNC_PUSH, 0, NULL, NULL, NULL),
			 -EIO);
	assert_int_equal(fake_target_count(e.ft, RPMEM_MSG_HASH), 9);
	assert_int_equal(fake_target_count(e.ft, RPMEM_MSG_WRITE), 0);
	assert_int_equal(fake_target_count(e.ft, RPMEM_MSG_SET_STATE), 0);
	/* every reply was taken: the next sync works */
	assert_int_equal(sync_mode(&e, RPMEMCTL_SYNC_PUSH, 0, NULL, NULL, NULL),
			 0);
	assert_memory_equal(fake_target_pool(e.ft), e.local, e.size);
	assert_int_equal(fake_target_written(e.ft, 0, e.size), 8 * FB);
	env_close(&e);
}

static void rpmemctl_pool_sync__lost_connection_fails_for_good(void **state)
{
	(void)state;
	struct env e;
	env_open(&e, RPMEM_CAP_HASHV, 4 * MIB, RPMEM_POOL_CONSISTENT);
	poke(&e, 0);
	poke(&e, 9 * CB);
	fake_target_script(e.ft, RPMEM_MSG_HASHV, 1, FAKE_HANG_UP, 0);
	assert_int_equal(sync_mode(&e, RPMEMCTL_SYNC_PUSH, 0, NULL, NULL, NULL),
			 -ECONNRESET);
	assert_int_equal(sync_mode(&e, RPMEMCTL_SYNC_VERIFY, 0, NULL, NULL,
				   NULL),
			 -ECONNRESET);
	assert_int_equal(fake_target_count(e.ft, RPMEM_MSG_WRITE), 0);
	assert_int_equal(fake_target_count(e.ft, RPMEM_MSG_HASH), 1);
	assert_int_equal(rpmemctl_pool_close(&e.p), -ECONNRESET);
	rpmemctl_session_close(&e.s);
	assert_int_equal(fake_target_wait_idle(e.ft), 0);
	fake_target_stop(&e.ft);
	free(e.local);
}

/*
 * push2 -- rpmemctl_pool_sync2 push of the local copy; *compared gets the
 * coarse blocks whose hashes were compared
 */
static int push2(struct env *e, struct rpmemctl_sync_stats *st,
		 uint64_t *compared)
{
	struct rpmemctl_sync_cfg *cfg;
	struct rpmemctl_sync_result *res;
	assert_int_equal(rpmemctl_sync_cfg_new(&cfg), 0);
	assert_int_equal(rpmemctl_sync_cfg_set_source(cfg, "unit:/local"), 0);
	assert_int_equal(rpmemctl_sync_result_new(&res), 0);
	int ret = rpmemctl_pool_sync2(e->p, e->local, e->size, cfg, res);
	*compared = rpmemctl_sync_result_get_blocks_compared(res);
	st->blocks_differ = rpmemctl_sync_result_get_blocks_differ(res);
	st->bytes_differ = rpmemctl_sync_result_get_bytes_differ(res);
	st->data_bytes = rpmemctl_sync_result_get_data_bytes(res);
	rpmemctl_sync_result_delete(&res);
	rpmemctl_sync_cfg_delete(&cfg);
	return ret;
}

/* poke_all -- change every 4 KiB block of the local copy */
static void poke_all(struct env *e)
{
	for (uint64_t off = 0; off < e->size; off += FB)
		poke(e, off + 17);
}

/*
 * check_probe -- hash records first..first+63 are the probe: one coarse
 * block in each 64th of the pool (256 blocks: one in each 4), of type
 */
static void check_probe(struct env *e, size_t first, uint16_t type)
{
	size_t n;
	const struct fake_hash_req *h = fake_target_hashes(e->ft, &n);
	assert_true(first + 64 <= n);
	for (size_t k = 0; k < 64; k++) {
		assert_int_equal(h[first + k].type, type);
		assert_int_equal(h[first + k].block_size, CB);
		assert_int_equal(h[first + k].count, 1);
		assert_int_equal(h[first + k].offset / CB / 4, k);
	}
}

static void rpmemctl_pool_sync__dense_probe_sends_the_pool_without_hashing_it(
	void **state)
{
	(void)state;
	struct env e;
	struct rpmemctl_sync_stats st;
	uint64_t compared;
	env_open(&e, RPMEM_CAP_HASHV, 16 * MIB, RPMEM_POOL_CONSISTENT);
	poke_all(&e);
	assert_int_equal(push2(&e, &st, &compared), 0);
	/* the probe in one HASHV, 16 samples of 4 KiB blocks, nothing else */
	check_probe(&e, 0, RPMEM_MSG_HASHV);
	uint64_t probed[64];
	size_t n;
	const struct fake_hash_req *h = fake_target_hashes(e.ft, &n);
	for (size_t k = 0; k < 64; k++)
		probed[k] = h[k].offset;
	for (size_t k = 0; k < 16; k++)
		check_hash(&e, 64 + k, RPMEM_MSG_HASH, probed[4 * k], FB, 16);
	assert_int_equal(fake_target_count(e.ft, RPMEM_MSG_HASHV), 1);
	assert_int_equal(fake_target_count(e.ft, RPMEM_MSG_HASH), 16);
	assert_int_equal(compared, 64);
	assert_int_equal(st.blocks_differ, 256);
	assert_int_equal(st.data_bytes, e.size);
	check_written_whole(&e);
	uint64_t gen;
	assert_int_equal(fake_target_state(e.ft, &gen), RPMEM_POOL_CONSISTENT);
	assert_int_equal(gen, 2);

	/* again, all changed but the first probe block: it is not sent */
	uint64_t keep = probed[0];
	uint8_t saved[CB];
	memcpy(saved, e.local + keep, CB);
	poke_all(&e);
	memcpy(e.local + keep, saved, CB);
	assert_int_equal(push2(&e, &st, &compared), 0);
	assert_int_equal(st.blocks_differ, 255);
	assert_int_equal(st.bytes_differ, e.size - CB);
	assert_int_equal(fake_target_written(e.ft, keep, CB), CB);
	assert_int_equal(fake_target_written(e.ft, 0, e.size),
			 2 * e.size - CB);
	assert_memory_equal(fake_target_pool(e.ft), e.local, e.size);
	env_close(&e);
}

static void rpmemctl_pool_sync__dense_probe_goes_as_hash_requests_without_hashv(
	void **state)
{
	(void)state;
	struct env e;
	struct rpmemctl_sync_stats st;
	uint64_t compared;
	env_open(&e, NO_HASHV, 16 * MIB, RPMEM_POOL_CONSISTENT);
	poke_all(&e);
	assert_int_equal(push2(&e, &st, &compared), 0);
	check_probe(&e, 0, RPMEM_MSG_HASH);
	assert_int_equal(fake_target_count(e.ft, RPMEM_MSG_HASH), 64 + 16);
	assert_int_equal(compared, 64);
	check_written_whole(&e);
	env_close(&e);
}

static void rpmemctl_pool_sync__sparse_probe_compares_every_block(
	void **state)
{
	(void)state;
	struct env e;
	struct rpmemctl_sync_stats st;
	uint64_t compared;
	env_open(&e, RPMEM_CAP_HASHV, 16 * MIB, RPMEM_POOL_CONSISTENT);
	/* one 4 KiB block in every coarse block: all differ, sparsely */
	for (uint64_t off = 0; off < e.size; off += CB)
		poke(&e, off + 5 * FB + 1);
	assert_int_equal(push2(&e, &st, &compared), 0);
	/* the probe, its sample, the coarse compare, the fine pass */
	check_probe(&e, 0, RPMEM_MSG_HASHV);
	check_hash(&e, 64 + 16, RPMEM_MSG_HASH, 0, CB, 256);
	assert_int_equal(compared, 256);
	assert_int_equal(st.blocks_differ, 256);
	assert_int_equal(st.data_bytes, 256 * FB);
	assert_int_equal(fake_target_written(e.ft, 0, e.size), 256 * FB);
	assert_memory_equal(fake_target_pool(e.ft), e.local, e.size);
	env_close(&e);
}

static void rpmemctl_pool_sync__dry_run_push_takes_no_probe(void **state)
{
	(void)state;
	struct env e;
	env_open(&e, RPMEM_CAP_HASHV, 16 * MIB, RPMEM_POOL_CONSISTENT);
	poke_all(&e);
	struct rpmemctl_sync_stats st;
	assert_int_equal(sync_mode(&e, RPMEMCTL_SYNC_PUSH,
				   RPMEMCTL_SYNC_DRY_RUN, &st, NULL, NULL),
			 1);
	/* every block compared, exact counts, nothing written */
	check_hash(&e, 0, RPMEM_MSG_HASH, 0, CB, 256);
	assert_int_equal(st.bytes_differ, e.size);
	assert_int_equal(fake_target_written(e.ft, 0, e.size), 0);
	env_close(&e);
}

/* verify_shared -- a verify of e against local_fd, with shared hashes h */
static uint64_t verify_shared(struct env *e, int fd,
			      struct rpmemctl_local_hashes *h)
{
	struct rpmemctl_sync_cfg *cfg;
	struct rpmemctl_sync_result *res;
	assert_int_equal(rpmemctl_sync_cfg_new(&cfg), 0);
	assert_int_equal(rpmemctl_sync_cfg_set_mode(cfg, RPMEMCTL_SYNC_VERIFY),
			 0);
	assert_int_equal(rpmemctl_sync_cfg_set_local_fd(cfg, fd), 0);
	assert_int_equal(rpmemctl_sync_cfg_set_local_hashes(cfg, h), 0);
	assert_int_equal(rpmemctl_sync_result_new(&res), 0);
	int ret = rpmemctl_pool_sync2(e->p, e->local, e->size, cfg, res);
	assert_true(ret == 0 || ret == 1);
	uint64_t d = rpmemctl_sync_result_get_blocks_differ(res);
	rpmemctl_sync_result_delete(&res);
	rpmemctl_sync_cfg_delete(&cfg);
	return d;
}

static void rpmemctl_pool_sync__shared_local_hashes_hash_the_file_once(
	void **state)
{
	(void)state;
	struct env e1, e2;
	struct rpmemctl_local_hashes *h = NULL;
	char path[] = "/tmp/rpmem-shared-XXXXXX";
	env_open(&e1, RPMEM_CAP_HASHV, MIB, RPMEM_POOL_CONSISTENT);
	env_open(&e2, RPMEM_CAP_HASHV, MIB, RPMEM_POOL_CONSISTENT);
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	unlink(path);
	poke(&e1, 100 * KIB);
	poke(&e2, 100 * KIB);
	assert_int_equal(pwrite(fd, e1.local, MIB, 0), MIB);
	assert_int_equal(rpmemctl_local_hashes_new(&h), 0);
	/* two targets: the file hashed once, both differences found */
	assert_int_equal(verify_shared(&e1, fd, h), 1);
	assert_int_equal(verify_shared(&e2, fd, h), 1);
	assert_int_equal(rpmemctl_local_hashes_computed(h), 1);
	/* the file changes: hashed again, never the old hashes reused */
	poke(&e2, 700 * KIB);
	assert_int_equal(pwrite(fd, e2.local + 700 * KIB, 1, 700 * KIB), 1);
	struct timespec ts[2] = { { .tv_nsec = UTIME_OMIT },
				  { .tv_sec = 1000000000, .tv_nsec = 7 } };
	assert_int_equal(futimens(fd, ts), 0);
	assert_int_equal(verify_shared(&e2, fd, h), 2);
	assert_int_equal(rpmemctl_local_hashes_computed(h), 2);
	rpmemctl_local_hashes_delete(&h);
	assert_null(h);
	close(fd);
	env_close(&e1);
	env_close(&e2);
}

/*
 * a history whose ids line is longer than 16 ids allow is damaged, and
 * reading it writes nothing past its buffer (the sscanf width was 288
 * for 273 bytes: ASan's unit run and asan-bats caught it)
 */
static void rpmemctl_history_read__overlong_ids_are_damaged(void **state)
{
	(void)state;
	char dir[] = "/tmp/rpmem-hist.XXXXXX";
	char file[64], path[80], ids[400];
	struct rpmemctl_generations g;
	assert_non_null(mkdtemp(dir));
	snprintf(file, sizeof(file), "%s/f", dir);
	snprintf(path, sizeof(path), "%s.rpmemgen", file);
	memset(ids, 'a', sizeof(ids) - 1);
	ids[sizeof(ids) - 1] = '\0';
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "rpmem-history 1\nids=%s\nsize=4096\nmtime=1.0\n", ids);
	fclose(f);
	assert_int_equal(rpmemctl_history_read(file, &g), -EBADMSG);
	unlink(path);
	rmdir(dir);
}

/* hist_text -- path gets a history with ids 1, size 4096 and tail */
static void hist_text(const char *path, const char *tail)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "rpmem-history 1\nids=00000000000000aa\nsize=4096\nmtime=1.5\n%s",
		tail);
	fclose(f);
}

/*
 * the optional lines of a history: the live pools and the local mark are
 * read back, a pool dropped keeps the recorded size and mtime, and a
 * forged or overlong live line is damaged
 */
static void client_history_read__live_pools_and_local_mark(void **state)
{
	(void)state;
	char dir[] = "/tmp/rpmem-hist.XXXXXX";
	char file[64], path[80], many[800];
	struct client_history h;
	uint8_t u1[16], u2[16];
	memset(u1, 0x11, sizeof(u1));
	memset(u2, 0xab, sizeof(u2));
	assert_non_null(mkdtemp(dir));
	snprintf(file, sizeof(file), "%s/f", dir);
	snprintf(path, sizeof(path), "%s.rpmemgen", file);
	FILE *f = fopen(file, "w");
	assert_non_null(f);
	fclose(f);
	hist_text(path, "live=11111111111111111111111111111111,abababababababababababababababab\nlocal=1\n");
	assert_int_equal(client_history_read(file, &h), 0);
	assert_int_equal(h.nlive, 2);
	assert_true(client_history_is_live(&h, u1));
	assert_true(client_history_is_live(&h, u2));
	assert_int_equal(h.local, 1);
	assert_int_equal(client_history_live(file, u1, 0), 0);
	assert_int_equal(client_history_read(file, &h), 0);
	assert_int_equal(h.nlive, 1);
	assert_false(client_history_is_live(&h, u1));
	assert_true(client_history_is_live(&h, u2));
	assert_int_equal(h.local, 1);
	assert_int_equal(h.size, 4096);
	assert_int_equal(h.mtime_ns, 1000000005ull);
	assert_int_equal(client_history_live(file, NULL, 0), 0);
	assert_int_equal(client_history_read(file, &h), 0);
	assert_int_equal(h.nlive, 0);
	/* a split brain noted once, the recorded size and mtime kept */
	assert_int_equal(client_history_split(file, 0x1234), 1);
	assert_int_equal(client_history_split(file, 0x1234), 0);
	assert_int_equal(client_history_split(file, 0x5678), 1);
	assert_int_equal(client_history_read(file, &h), 0);
	assert_int_equal(h.nsplit, 2);
	assert_int_equal(h.split[0], 0x5678);
	assert_int_equal(h.mtime_ns, 1000000005ull);
	assert_int_equal(rpmemctl_history_split_brains(file), 2);
	hist_text(path, "live=1111111111111111111111111111111z\n");
	assert_int_equal(client_history_read(file, &h), -EBADMSG);
	hist_text(path, "live=11111111111111111111111111111111\nevil=1\n");
	assert_int_equal(client_history_read(file, &h), -EBADMSG);
	strcpy(many, "live=");
	for (int i = 0; i < 17; i++)
		strcat(many, i ? ",11111111111111111111111111111111" :
				 "11111111111111111111111111111111");
	strcat(many, "\n");
	hist_text(path, many);
	assert_int_equal(client_history_read(file, &h), -EBADMSG);
	unlink(path);
	unlink(file);
	rmdir(dir);
}

/*
 * client_history_outdate: a new id (not a promotion's) in front, the
 * recorded size, mtime and live pools kept, the local mark cleared (the
 * id stands for writes the live copies hold); no history: -ENOENT
 */
static void client_history_outdate__new_id_in_front_rest_kept(void **state)
{
	(void)state;
	char dir[] = "/tmp/rpmem-hist.XXXXXX";
	char file[64], path[80];
	struct client_history h;
	struct rpmemctl_generations g;
	uint8_t u1[16];
	memset(u1, 0x11, sizeof(u1));
	assert_non_null(mkdtemp(dir));
	snprintf(file, sizeof(file), "%s/f", dir);
	snprintf(path, sizeof(path), "%s.rpmemgen", file);
	FILE *f = fopen(file, "w");
	assert_non_null(f);
	fclose(f);
	assert_int_equal(client_history_outdate(file, &g), -ENOENT);
	hist_text(path, "live=11111111111111111111111111111111\nlocal=1\n");
	assert_int_equal(client_history_outdate(file, &g), 0);
	assert_int_equal(g.count, 2);
	assert_true(g.ids[0] != 0xaa);
	assert_false(g.ids[0] & RPMEM_GEN_PROMOTED);
	assert_int_equal(g.ids[1], 0xaa);
	assert_int_equal(client_history_read(file, &h), 0);
	assert_int_equal(h.g.count, 2);
	assert_true(h.g.ids[0] == g.ids[0]);
	assert_int_equal(h.g.ids[1], 0xaa);
	assert_int_equal(h.size, 4096);
	assert_int_equal(h.mtime_ns, 1000000005ull);
	assert_int_equal(h.nlive, 1);
	assert_true(client_history_is_live(&h, u1));
	assert_int_equal(h.local, 0);
	unlink(path);
	unlink(file);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(
			client_history_outdate__new_id_in_front_rest_kept),
		cmocka_unit_test(
		 rpmemctl_pool_sync__shared_local_hashes_hash_the_file_once),
		cmocka_unit_test(
			rpmemctl_pool_sync__push_hashv_moves_only_changed_4k_blocks),
		cmocka_unit_test(
			rpmemctl_pool_sync__push_hash_only_moves_only_changed_4k_blocks),
		cmocka_unit_test(
			rpmemctl_pool_sync__hash_only_bridges_gaps_up_to_192k),
		cmocka_unit_test(rpmemctl_pool_sync__hashv_does_not_bridge_gaps),
		cmocka_unit_test(
			rpmemctl_pool_sync__tree_hashes_find_exactly_the_changes),
		cmocka_unit_test(
			rpmemctl_pool_sync__hash_only_splits_long_runs_at_4m),
		cmocka_unit_test(
			rpmemctl_pool_sync__dense_changes_write_coarse_blocks_whole),
		cmocka_unit_test(
			rpmemctl_pool_sync__dense_probe_sends_the_pool_without_hashing_it),
		cmocka_unit_test(
			rpmemctl_pool_sync__dense_probe_goes_as_hash_requests_without_hashv),
		cmocka_unit_test(
			rpmemctl_pool_sync__sparse_probe_compares_every_block),
		cmocka_unit_test(
			rpmemctl_pool_sync__dry_run_push_takes_no_probe),
		cmocka_unit_test(
			rpmemctl_pool_sync__single_run_goes_as_hash_to_a_hashv_target),
		cmocka_unit_test(
			rpmemctl_pool_sync__verify_reports_ranges_and_writes_nothing),
		cmocka_unit_test(
			rpmemctl_pool_sync__dry_run_push_reports_and_writes_nothing),
		cmocka_unit_test(rpmemctl_pool_sync__pull_fills_the_local_copy),
		cmocka_unit_test(
			rpmemctl_pool_sync__pull_commit_hook_runs_once_the_data_is_in),
		cmocka_unit_test(
			rpmemctl_pool_sync__paced_pull_reads_in_small_pieces),
		cmocka_unit_test(
			rpmemctl_pool_sync__pull_from_a_syncing_pool_is_enodata),
		cmocka_unit_test(
			rpmemctl_pool_sync__nothing_differs_nothing_written),
		cmocka_unit_test(
			rpmemctl_pool_sync__identical_but_not_consistent_is_marked),
		cmocka_unit_test(
			rpmemctl_pool_sync__mirror_writes_every_byte_without_hashing),
		cmocka_unit_test(
			rpmemctl_pool_sync__failed_fine_hash_writes_nothing_and_drains),
		cmocka_unit_test(
			rpmemctl_pool_sync__lost_connection_fails_for_good),
		cmocka_unit_test(
			rpmemctl_history_read__overlong_ids_are_damaged),
		cmocka_unit_test(
			client_history_read__live_pools_and_local_mark),
	};
	return cmocka_run_group_tests_name("client_sync", tests, NULL, NULL);
}
