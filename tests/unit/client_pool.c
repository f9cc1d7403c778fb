/* SPDX-License-Identifier: BSD-3-Clause */
/* client_pool.c -- unit tests of remote pools over tcp against a fake target */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fake_target.h"
#include "librpmemctl.h"

#define HOST "127.0.0.1"
#define MIB (1u << 20)

/* a fake target with a session to it, and maybe an open pool */
struct env {
	struct fake_target *ft;
	struct rpmemctl_session *s;
	struct rpmemctl_pool *p;
};

/* env_start -- a fake target with opts and a session to it */
static void env_start(struct env *e, const struct fake_target_opts *opts)
{
	memset(e, 0, sizeof(*e));
	assert_int_equal(fake_target_start(opts, &e->ft), 0);
	assert_int_equal(rpmemctl_session_open(HOST, fake_target_port(e->ft),
					       RPMEMCTL_TRANSPORT_TCP, &e->s),
			 0);
}

/* env_open -- env_start, and open r1/p1 with flags */
static void env_open(struct env *e, const struct fake_target_opts *opts,
		     unsigned flags)
{
	env_start(e, opts);
	assert_int_equal(rpmemctl_pool_open(e->s, "r1", "p1", flags, &e->p),
			 0);
}

/* env_stop -- close everything; the target has seen all of it after */
static void env_stop(struct env *e)
{
	rpmemctl_pool_close(&e->p);
	rpmemctl_session_close(&e->s);
	assert_int_equal(fake_target_wait_idle(e->ft), 0);
	fake_target_stop(&e->ft);
}

static void rpmemctl_pool_create__creates_the_pool_on_the_target(
	void **state)
{
	(void)state;
	struct fake_target_opts o = { .size = 0 };
	struct env e;
	env_start(&e, &o);
	assert_null(fake_target_pool(e.ft));
	assert_int_equal(rpmemctl_pool_create(e.s, "r1", "p1", 3 * 65536), 0);
	assert_non_null(fake_target_pool(e.ft));

	assert_int_equal(rpmemctl_pool_create(e.s, "r1", "p1", 65536),
			 -EEXIST);
	assert_string_equal(rpmemctl_session_errmsg(e.s),
			    "pool 'p1' exists");
	assert_int_equal(rpmemctl_pool_create(e.s, "nope", "p1", 65536),
			 -ENODEV);
	assert_int_equal(fake_target_count(e.ft, RPMEM_MSG_CREATE), 3);

	/* bad names and sizes never reach the target */
	assert_int_equal(rpmemctl_pool_create(e.s, "r1", "../x", 65536),
			 -EINVAL);
	assert_int_equal(rpmemctl_pool_create(e.s, "r1", "p2", 0), -EINVAL);
	assert_int_equal(fake_target_count(e.ft, RPMEM_MSG_CREATE), 3);

	assert_int_equal(rpmemctl_pool_open(e.s, "r1", "p1",
					    RPMEMCTL_OPEN_RDWR, &e.p),
			 0);
	assert_int_equal(rpmemctl_pool_get_size(e.p), 3 * 65536);
	assert_int_equal(rpmemctl_pool_get_state(e.p), RPMEMCTL_POOL_EMPTY);
	env_stop(&e);
}

static void rpmemctl_pool_open__reports_what_the_target_holds(void **state)
{
	(void)state;
	struct fake_target_opts o = { .size = 2 * MIB,
				      .state = RPMEM_POOL_CONSISTENT,
				      .generation = 5 };
	struct env e;
	env_open(&e, &o, RPMEMCTL_OPEN_RDWR);
	assert_int_equal(rpmemctl_pool_get_size(e.p), 2 * MIB);
	assert_int_equal(rpmemctl_pool_get_state(e.p),
			 RPMEMCTL_POOL_CONSISTENT);
	assert_int_equal(rpmemctl_pool_get_generation(e.p), 5);
	assert_string_equal(rpmemctl_pool_get_transport(e.p), "tcp");
	assert_int_equal(rpmemctl_pool_close(&e.p), 0);
	assert_null(e.p);
	assert_int_equal(fake_target_count(e.ft, RPMEM_MSG_OPEN), 1);
	assert_int_equal(fake_target_count(e.ft, RPMEM_MSG_CLOSE), 1);
	env_stop(&e);
}

static void rpmemctl_pool_open__unknown_pool_is_enoent(void **state)
{
	(void)state;
	struct env e;
	env_start(&e, NULL);
	struct rpmemctl_pool *p = NULL;
	assert_int_equal(rpmemctl_pool_open(e.s, "r1", "other",
					    RPMEMCTL_OPEN_RDWR, &p),
			 -ENOENT);
	assert_null(p);
	assert_string_equal(rpmemctl_session_errmsg(e.s),
			    "no pool 'other' in region 'r1'");
	/* the session goes on */
	assert_int_equal(rpmemctl_pool_open(e.s, "r1", "p1",
					    RPMEMCTL_OPEN_RDONLY, &e.p),
			 0);
	env_stop(&e);
}

static void rpmemctl_pool_write__lands_in_the_target_pool_after_flush(
	void **state)
{
	(void)state;
	struct env e;
	env_open(&e, NULL, RPMEMCTL_OPEN_RDWR);
	uint8_t a[5000], b[100];
	fake_pattern(a, sizeof(a), 1);
	fake_pattern(b, sizeof(b), 2);
	assert_int_equal(rpmemctl_pool_write(e.p, a, 4096, sizeof(a)), 0);
	assert_int_equal(rpmemctl_pool_write(e.p, b, MIB - sizeof(b),
					     sizeof(b)),
			 0);
	assert_int_equal(rpmemctl_pool_flush(e.p, 0, MIB), 0);

	/* after the FLUSH reply the target has every WRITE before it */
	size_t n;
	const struct fake_write *w = fake_target_writes(e.ft, &n);
	assert_int_equal(n, 2);
	assert_int_equal(w[0].offset, 4096);
	assert_int_equal(w[0].len, sizeof(a));
	assert_int_equal(w[1].offset, MIB - sizeof(b));
	assert_int_equal(w[1].len, sizeof(b));
	const uint8_t *pool = fake_target_pool(e.ft);
	assert_memory_equal(pool + 4096, a, sizeof(a));
	assert_memory_equal(pool + MIB - sizeof(b), b, sizeof(b));
	assert_int_equal(fake_target_written(e.ft, 0, 4096), 0);
	assert_int_equal(fake_target_count(e.ft, RPMEM_MSG_FLUSH), 1);
	env_stop(&e);
}

static void rpmemctl_pool_write__held_frames_keep_their_bytes_and_order(
	void **state)
{
	(void)state;
	struct env e;
	env_open(&e, NULL, RPMEMCTL_OPEN_RDWR);
	/* 100 small writes (more than one gathered send holds), each
	 * source changed right after its call: the bytes as of the call */
	uint8_t src[16], want[100 * 16];
	for (unsigned i = 0; i < 100; i++) {
		fake_pattern(src, sizeof(src), (uint8_t)(i + 1));
		memcpy(want + i * 16, src, sizeof(src));
		assert_int_equal(rpmemctl_pool_write(e.p, src, 8192 + i * 16,
						     sizeof(src)), 0);
		memset(src, 0xee, sizeof(src));
	}
	/* a small write, then a long one over it: the long one lands last */
	uint8_t small[100], big[8192];
	fake_pattern(small, sizeof(small), 7);
	fake_pattern(big, sizeof(big), 8);
	assert_int_equal(rpmemctl_pool_write(e.p, small, 65536 + 100,
					     sizeof(small)), 0);
	assert_int_equal(rpmemctl_pool_write(e.p, big, 65536, sizeof(big)),
			 0);
	assert_int_equal(rpmemctl_pool_flush(e.p, 0, MIB), 0);
	size_t n;
	const struct fake_write *w = fake_target_writes(e.ft, &n);
	assert_int_equal(n, 102);
	for (unsigned i = 0; i < 100; i++)
		assert_int_equal(w[i].offset, 8192 + i * 16);
	assert_int_equal(w[101].offset, 65536);
	const uint8_t *pool = fake_target_pool(e.ft);
	assert_memory_equal(pool + 8192, want, sizeof(want));
	assert_memory_equal(pool + 65536, big, sizeof(big));
	assert_int_equal(fake_target_count(e.ft, RPMEM_MSG_FLUSH), 1);
	env_stop(&e);
}

static void rpmemctl_pool_write__splits_into_frames_of_max_io(void **state)
{
	(void)state;
	struct fake_target_opts o = { .size = 3 * MIB };
	struct env e;
	env_open(&e, &o, RPMEMCTL_OPEN_RDWR);
	size_t len = 2 * MIB + MIB / 2;
	uint8_t *buf = malloc(len);
	assert_non_null(buf);
	fake_pattern(buf, len, 3);
	assert_int_equal(rpmemctl_pool_persist(e.p, buf, 100, len), 0);

	size_t n;
	const struct fake_write *w = fake_target_writes(e.ft, &n);
	assert_int_equal(n, 3);
	assert_int_equal(w[0].offset, 100);
	assert_int_equal(w[0].len, RPMEM_MAX_IO);
	assert_int_equal(w[1].offset, 100 + RPMEM_MAX_IO);
	assert_int_equal(w[1].len, RPMEM_MAX_IO);
	assert_int_equal(w[2].offset, 100 + 2 * RPMEM_MAX_IO);
	assert_int_equal(w[2].len, MIB / 2);
	assert_int_equal(fake_target_count(e.ft, RPMEM_MSG_FLUSH), 1);
	assert_memory_equal(fake_target_pool(e.ft) + 100, buf, len);
	free(buf);
	env_stop(&e);
}

static void rpmemctl_pool_read__returns_the_target_bytes(void **state)
{
	(void)state;
	struct fake_target_opts o = { .size = 3 * MIB };
	struct env e;
	env_open(&e, &o, RPMEMCTL_OPEN_RDONLY);
	fake_pattern(fake_target_pool(e.ft), 3 * MIB, 4);
	size_t len = 3 * MIB - 10;
	uint8_t *buf = malloc(len);
	assert_non_null(buf);
	assert_int_equal(rpmemctl_pool_read(e.p, buf, 10, len), 0);
	assert_memory_equal(buf, fake_target_pool(e.ft) + 10, len);
	/* pipelined in frames of at most RPMEM_MAX_IO */
	assert_int_equal(fake_target_count(e.ft, RPMEM_MSG_READ), 3);

	/* outside the pool: refused here, nothing sent */
	assert_int_equal(rpmemctl_pool_read(e.p, buf, 3 * MIB - 1, 2),
			 -EINVAL);
	assert_int_equal(fake_target_count(e.ft, RPMEM_MSG_READ), 3);
	free(buf);
	env_stop(&e);
}

static void rpmemctl_pool_read__error_reply_keeps_the_stream_in_step(
	void **state)
{
	(void)state;
	struct fake_target_opts o = { .size = 3 * MIB };
	struct env e;
	env_open(&e, &o, RPMEMCTL_OPEN_RDONLY);
	uint8_t *buf = malloc(3 * MIB);
	assert_non_null(buf);
	/* the second of three pipelined READs fails */
	fake_target_script(e.ft, RPMEM_MSG_READ, 2, FAKE_ERROR, RPMEM_E_IO);
	assert_int_equal(rpmemctl_pool_read(e.p, buf, 0, 3 * MIB), -EIO);
	assert_int_equal(fake_target_count(e.ft, RPMEM_MSG_READ), 3);
	/* the DATA after it was drained: the next read works */
	fake_pattern(fake_target_pool(e.ft), 4096, 5);
	assert_int_equal(rpmemctl_pool_read(e.p, buf, 0, 4096), 0);
	assert_memory_equal(buf, fake_target_pool(e.ft), 4096);
	free(buf);
	env_stop(&e);
}

static void rpmemctl_pool_flush__reports_a_failed_write(void **state)
{
	(void)state;
	struct env e;
	env_open(&e, NULL, RPMEMCTL_OPEN_RDWR);
	uint8_t a[4096], b[4096];
	fake_pattern(a, sizeof(a), 6);
	fake_pattern(b, sizeof(b), 7);
	/* WRITE has no reply: the target keeps its failure for the FLUSH */
	fake_target_script(e.ft, RPMEM_MSG_WRITE, 1, FAKE_ERROR, RPMEM_E_IO);
	assert_int_equal(rpmemctl_pool_write(e.p, a, 0, sizeof(a)), 0);
	assert_int_equal(rpmemctl_pool_write(e.p, b, 8192, sizeof(b)), 0);
	assert_int_equal(rpmemctl_pool_flush(e.p, 0, MIB), -EIO);
	assert_string_equal(rpmemctl_session_errmsg(e.s),
			    "scripted I/O error on the target");
	assert_int_equal(fake_target_written(e.ft, 0, 4096), 0);
	assert_int_equal(fake_target_written(e.ft, 8192, 4096), 4096);
	/* reported once; the session goes on */
	assert_int_equal(rpmemctl_pool_flush(e.p, 0, MIB), 0);
	assert_int_equal(fake_target_count(e.ft, RPMEM_MSG_FLUSH), 2);
	env_stop(&e);
}

static void rpmemctl_pool_write__eager_error_is_reported_by_the_flush(
	void **state)
{
	(void)state;
	struct env e;
	env_open(&e, NULL, RPMEMCTL_OPEN_RDWR);
	uint8_t a[512] = { 1 };
	/* an ERROR carrying the WRITE's id, sent at once */
	fake_target_script(e.ft, RPMEM_MSG_WRITE, 1, FAKE_UNSOLICITED_ERROR,
			   RPMEM_E_NOSPACE);
	assert_int_equal(rpmemctl_pool_write(e.p, a, 0, sizeof(a)), 0);
	assert_int_equal(rpmemctl_pool_flush(e.p, 0, 512), -ENOSPC);
	assert_int_equal(rpmemctl_pool_flush(e.p, 0, 512), 0);
	env_stop(&e);
}

static void rpmemctl_pool_write__read_only_open_is_refused_locally(
	void **state)
{
	(void)state;
	struct env e;
	env_open(&e, NULL, RPMEMCTL_OPEN_RDONLY);
	uint8_t a[4096] = { 1 };
	assert_int_equal(rpmemctl_pool_write(e.p, a, 0, sizeof(a)), -EROFS);
	assert_string_equal(rpmemctl_session_errmsg(e.s),
			    "pool 'p1' in region 'r1' is open read-only");
	assert_int_equal(rpmemctl_pool_persist(e.p, a, 0, sizeof(a)), -EROFS);
	assert_int_equal(rpmemctl_pool_flush(e.p, 0, 4096), -EROFS);
	assert_int_equal(rpmemctl_pool_set_state(e.p, RPMEMCTL_POOL_SYNCING,
						 "x"),
			 -EROFS);
	uint8_t *local = calloc(1, MIB);
	assert_non_null(local);
	struct rpmemctl_sync_opts so = { .mode = RPMEMCTL_SYNC_MIRROR };
	assert_int_equal(rpmemctl_pool_sync(e.p, local, MIB, &so, NULL),
			 -EROFS);
	free(local);
	assert_int_equal(fake_target_count(e.ft, RPMEM_MSG_WRITE), 0);
	assert_int_equal(fake_target_count(e.ft, RPMEM_MSG_FLUSH), 0);
	assert_int_equal(fake_target_count(e.ft, RPMEM_MSG_SET_STATE), 0);
	/* reading is fine */
	assert_int_equal(rpmemctl_pool_read(e.p, a, 0, sizeof(a)), 0);
	env_stop(&e);
}

static void rpmemctl_pool_write__outside_the_pool_is_refused_locally(
	void **state)
{
	(void)state;
	struct env e;
	env_open(&e, NULL, RPMEMCTL_OPEN_RDWR);
	uint8_t a[16] = { 0 };
	assert_int_equal(rpmemctl_pool_write(e.p, a, MIB - 8, sizeof(a)),
			 -EINVAL);
	assert_int_equal(rpmemctl_pool_write(e.p, a, UINT64_MAX - 4,
					     sizeof(a)),
			 -EINVAL);
	assert_int_equal(rpmemctl_pool_flush(e.p, MIB, 1), -EINVAL);
	assert_int_equal(rpmemctl_pool_write(e.p, a, 0, 0), 0);
	assert_int_equal(fake_target_count(e.ft, RPMEM_MSG_WRITE), 0);
	assert_int_equal(fake_target_count(e.ft, RPMEM_MSG_FLUSH), 0);
	env_stop(&e);
}

static void rpmemctl_pool_set_state__consistent_after_syncing_bumps_generation(
	void **state)
{
	(void)state;
	struct fake_target_opts o = { .size = MIB, .generation = 3 };
	struct env e;
	env_open(&e, &o, RPMEMCTL_OPEN_RDWR);
	uint64_t gen;

	/* the target refuses consistent from empty; nothing changes */
	assert_int_equal(rpmemctl_pool_set_state(e.p, RPMEMCTL_POOL_CONSISTENT,
						 "src"),
			 -EINVAL);
	assert_int_equal(rpmemctl_pool_get_generation(e.p), 3);
	assert_int_equal(fake_target_state(e.ft, &gen), RPMEM_POOL_EMPTY);
	assert_int_equal(gen, 3);

	assert_int_equal(rpmemctl_pool_set_state(e.p, RPMEMCTL_POOL_SYNCING,
						 "host:/src"),
			 0);
	assert_int_equal(fake_target_state(e.ft, &gen), RPMEM_POOL_SYNCING);
	assert_int_equal(rpmemctl_pool_get_state(e.p), RPMEMCTL_POOL_SYNCING);
	assert_int_equal(rpmemctl_pool_set_state(e.p, RPMEMCTL_POOL_CONSISTENT,
						 "host:/src"),
			 0);
	assert_int_equal(fake_target_state(e.ft, &gen),
			 RPMEM_POOL_CONSISTENT);
	assert_int_equal(gen, 4);
	assert_int_equal(rpmemctl_pool_get_generation(e.p), 4);
	assert_string_equal(fake_target_source(e.ft), "host:/src");

	/* not a state one may set */
	assert_int_equal(rpmemctl_pool_set_state(e.p, RPMEMCTL_POOL_EMPTY,
						 NULL),
			 -EINVAL);
	assert_int_equal(fake_target_count(e.ft, RPMEM_MSG_SET_STATE), 3);
	env_stop(&e);
}

static void rpmemctl_pool_set_state__consistent_reports_a_failed_write(
	void **state)
{
	(void)state;
	struct env e;
	env_open(&e, NULL, RPMEMCTL_OPEN_RDWR);
	uint8_t a[4096] = { 1 };
	fake_target_script(e.ft, RPMEM_MSG_WRITE, 1, FAKE_ERROR, RPMEM_E_IO);
	assert_int_equal(rpmemctl_pool_set_state(e.p, RPMEMCTL_POOL_SYNCING,
						 NULL),
			 0);
	assert_int_equal(rpmemctl_pool_write(e.p, a, 0, sizeof(a)), 0);
	assert_int_equal(rpmemctl_pool_set_state(e.p, RPMEMCTL_POOL_CONSISTENT,
						 NULL),
			 -EIO);
	uint64_t gen;
	assert_int_equal(fake_target_state(e.ft, &gen), RPMEM_POOL_SYNCING);
	assert_int_equal(gen, 0);
	assert_int_equal(rpmemctl_pool_get_state(e.p), RPMEMCTL_POOL_SYNCING);
	assert_int_equal(rpmemctl_pool_get_generation(e.p), 0);
	env_stop(&e);
}

static void rpmemctl_pool_hash__gives_the_target_hashes_in_batches(
	void **state)
{
	(void)state;
	/* 20480 blocks of 512 bytes: more than one HASH request holds */
	struct fake_target_opts o = { .size = 10 * MIB };
	struct env e;
	env_open(&e, &o, RPMEMCTL_OPEN_RDONLY);
	uint8_t *pool = fake_target_pool(e.ft);
	fake_pattern(pool, 10 * MIB, 8);
	uint32_t count = 10 * MIB / 512;
	uint64_t *got = calloc(count, sizeof(*got));
	uint64_t *want = calloc(count, sizeof(*want));
	assert_non_null(got);
	assert_non_null(want);
	assert_int_equal(rpmemctl_pool_hash(e.p, 0, 512, count, got), 0);
	rpmemctl_hash_blocks(pool, 10 * MIB, 512, want);
	assert_memory_equal(got, want, count * sizeof(*got));

	size_t n;
	const struct fake_hash_req *h = fake_target_hashes(e.ft, &n);
	assert_int_equal(n, 2);
	assert_int_equal(h[0].type, RPMEM_MSG_HASH);
	assert_int_equal(h[0].offset, 0);
	assert_int_equal(h[0].count, RPMEM_MAX_HASHES);
	assert_int_equal(h[1].offset, (uint64_t)RPMEM_MAX_HASHES * 512);
	assert_int_equal(h[1].count, count - RPMEM_MAX_HASHES);
	assert_int_equal(h[1].block_size, 512);

	/* a block starting past the end: refused here */
	assert_int_equal(rpmemctl_pool_hash(e.p, 0, 512, count + 1, got),
			 -EINVAL);
	assert_int_equal(fake_target_count(e.ft, RPMEM_MSG_HASH), 2);
	free(got);
	free(want);
	env_stop(&e);
}

static void rpmemctl_pool_close__frees_the_pool_when_close_fails(
	void **state)
{
	(void)state;
	struct env e;
	env_open(&e, NULL, RPMEMCTL_OPEN_RDWR);
	fake_target_script(e.ft, RPMEM_MSG_CLOSE, 1, FAKE_ERROR,
			   RPMEM_E_INTERNAL);
	assert_int_equal(rpmemctl_pool_close(&e.p), -EREMOTEIO);
	assert_null(e.p);
	assert_int_equal(fake_target_count(e.ft, RPMEM_MSG_CLOSE), 1);
	env_stop(&e);
}

/* a range rpmemctl_pool_scrub reported */
struct scrub_seen {
	struct {
		uint64_t off, len;
		enum rpmemctl_scrub_status st;
		char why[128];
	} v[16];
	unsigned n;
	uint64_t progress;
};

static void scrub_cb(uint64_t off, uint64_t len,
		     enum rpmemctl_scrub_status st, const char *why,
		     void *arg)
{
	struct scrub_seen *s = arg;
	assert_true(s->n < 16);
	s->v[s->n].off = off;
	s->v[s->n].len = len;
	s->v[s->n].st = st;
	snprintf(s->v[s->n].why, sizeof(s->v[s->n].why), "%s", why);
	s->n++;
}

static void scrub_progress(uint64_t done, uint64_t total, void *arg)
{
	struct scrub_seen *s = arg;
	assert_true(done > s->progress && done <= total);
	s->progress = done;
}

static void rpmemctl_pool_scrub__ranges_merged_across_requests_in_order(
	void **state)
{
	(void)state;
	/* 65 MiB: two SCRUB requests, the second of 1 MiB */
	struct fake_target_opts o = { .caps = RPMEM_CAP_SCRUB,
				      .size = 65 * MIB,
				      .state = RPMEM_POOL_CONSISTENT,
				      .generation = 3 };
	struct env e;
	struct scrub_seen seen = { .n = 0 };
	env_open(&e, &o, RPMEMCTL_OPEN_RDONLY);
	uint8_t *mem = fake_target_pool(e.ft);
	/* damaged: the pieces at 8 KiB and 12 KiB, and the two pieces
	 * either side of the 64 MiB boundary between the requests */
	mem[8192] = mem[12288] = RPMEM_SCRUB_DAMAGED;
	mem[64 * MIB - 4096] = mem[64 * MIB] = RPMEM_SCRUB_DAMAGED;
	assert_int_equal(rpmemctl_pool_scrub(e.p, 0, scrub_cb, scrub_progress,
					     &seen),
			 1);
	assert_int_equal(fake_target_count(e.ft, RPMEM_MSG_SCRUB), 2);
	assert_int_equal(seen.n, 5);
	assert_int_equal(seen.v[1].off, 8192);
	assert_int_equal(seen.v[1].len, 8192);
	assert_int_equal(seen.v[1].st, RPMEMCTL_SCRUB_DAMAGED);
	assert_string_equal(seen.v[1].why, "");
	/* one range across the boundary of the two requests */
	assert_int_equal(seen.v[3].off, 64 * MIB - 4096);
	assert_int_equal(seen.v[3].len, 8192);
	assert_int_equal(seen.v[4].off, 64 * MIB + 4096);
	assert_int_equal(seen.v[4].off + seen.v[4].len, 65 * MIB);
	assert_int_equal(seen.v[4].st, RPMEMCTL_SCRUB_OK);
	assert_int_equal(seen.progress, 65 * MIB);
	/* an unverified piece and no damage: 2, with the reason */
	memset(mem, 0, 65 * MIB);
	mem[4096] = RPMEM_SCRUB_UNVERIFIED;
	seen.n = 0;
	seen.progress = 0;
	assert_int_equal(rpmemctl_pool_scrub(e.p, 0, scrub_cb, NULL, &seen),
			 2);
	assert_int_equal(seen.v[1].st, RPMEMCTL_SCRUB_UNVERIFIED);
	assert_int_equal(seen.v[1].len, 4096);
	assert_string_equal(seen.v[1].why,
			    "the recorded hash of the piece is itself damaged");
	memset(mem, 0, 65 * MIB);
	seen.n = 0;
	assert_int_equal(rpmemctl_pool_scrub(e.p, 0, scrub_cb, NULL, &seen),
			 0);
	assert_int_equal(seen.n, 1);
	assert_int_equal(seen.v[0].len, 65 * MIB);
	env_stop(&e);
}

/* damaged_cb -- record the message of damaged data taken as it is */
static void damaged_cb(const char *message, void *arg)
{
	snprintf(arg, 512, "%s", message);
}

/*
 * A read through a data plane that bypasses rpmemd (RDMA) is checked by
 * a SCRUB of its pieces first; RPMEM_READ_SCRUB=1 drives the same path
 * over tcp (the fake target does not check its READs itself)
 */
static void rpmemctl_pool_read__scrub_check_refuses_damaged_pieces(
	void **state)
{
	(void)state;
	struct fake_target_opts o = { .caps = RPMEM_CAP_SCRUB |
					      RPMEM_CAP_DAMAGE,
				      .size = 65 * MIB,
				      .state = RPMEM_POOL_CONSISTENT,
				      .generation = 3 };
	struct env e;
	char msg[512] = "";
	uint8_t *buf = malloc(66 * MIB);
	assert_non_null(buf);
	setenv("RPMEM_READ_SCRUB", "1", 1);
	env_open(&e, &o, RPMEMCTL_OPEN_RDONLY);
	uint8_t *mem = fake_target_pool(e.ft);
	/* damaged: 8 KiB at 8 KiB, and a piece past the first SCRUB */
	mem[8192] = mem[12288] = RPMEM_SCRUB_DAMAGED;
	mem[64 * MIB + 4096] = RPMEM_SCRUB_DAMAGED;
	memset(buf, 0xa5, 66 * MIB);
	/* a read of part of a damaged piece: refused, nothing read */
	assert_int_equal(rpmemctl_pool_read(e.p, buf, 9000, 100), -EILSEQ);
	assert_non_null(strstr(rpmemctl_session_errmsg(e.s),
			       "pool 'p1' is damaged at 0x2000 length 4096:"));
	assert_int_equal(fake_target_count(e.ft, RPMEM_MSG_READ), 0);
	assert_int_equal(buf[0], 0xa5);
	/* across the boundary of two SCRUB requests: both ranges named */
	assert_int_equal(rpmemctl_pool_read(e.p, buf, 4096, 65 * MIB - 4096),
			 -EILSEQ);
	assert_non_null(strstr(rpmemctl_session_errmsg(e.s),
			       "damaged at 0x2000 length 8192, 0x4001000 length 4096:"));
	assert_int_equal(fake_target_count(e.ft, RPMEM_MSG_SCRUB), 3);
	assert_int_equal(fake_target_count(e.ft, RPMEM_MSG_READ), 0);
	/* intact pieces are read */
	assert_int_equal(rpmemctl_pool_read(e.p, buf, 16384, 4096), 0);
	assert_int_equal(fake_target_count(e.ft, RPMEM_MSG_READ), 1);
	/* taken as it is: read, and the callback names the ranges */
	rpmemctl_session_read_damaged(e.s, 1, damaged_cb, msg);
	assert_int_equal(rpmemctl_pool_read(e.p, buf, 8192, 4096), 0);
	assert_non_null(strstr(msg, "pool 'p1' is damaged at 0x2000 length 4096:"));
	assert_int_equal(buf[0], RPMEM_SCRUB_DAMAGED);
	assert_int_equal(fake_target_count(e.ft, RPMEM_MSG_READ), 2);
	/* without it, over tcp, the target checks READs itself */
	unsetenv("RPMEM_READ_SCRUB");
	rpmemctl_session_read_damaged(e.s, 0, NULL, NULL);
	unsigned scrubs = fake_target_count(e.ft, RPMEM_MSG_SCRUB);
	assert_int_equal(rpmemctl_pool_read(e.p, buf, 8192, 4096), 0);
	assert_int_equal(fake_target_count(e.ft, RPMEM_MSG_SCRUB), scrubs);
	free(buf);
	env_stop(&e);
}

static void rpmemctl_pool_scrub__older_target_is_enotsup_nothing_sent(
	void **state)
{
	(void)state;
	struct fake_target_opts o = { .size = MIB,
				      .state = RPMEM_POOL_CONSISTENT };
	struct env e;
	env_open(&e, &o, RPMEMCTL_OPEN_RDONLY);
	assert_int_equal(rpmemctl_pool_scrub(e.p, 0, NULL, NULL, NULL),
			 -ENOTSUP);
	assert_non_null(strstr(rpmemctl_pool_errmsg(e.p), "cannot scrub"));
	assert_int_equal(rpmemctl_pool_scrub(e.p, 1, NULL, NULL, NULL),
			 -EINVAL);
	assert_int_equal(fake_target_count(e.ft, RPMEM_MSG_SCRUB), 0);
	env_stop(&e);
}

/*
 * a target that answers SCRUB with a malformed reply, another request's
 * id or half a frame: an error, never a verdict of clean
 */
static void rpmemctl_pool_scrub__lying_replies_are_errors(void **state)
{
	(void)state;
	static const enum fake_action lies[] = { FAKE_MALFORMED,
						 FAKE_WRONG_ID,
						 FAKE_HANG_UP_MID_REPLY };
	for (size_t i = 0; i < sizeof(lies) / sizeof(lies[0]); i++) {
		struct fake_target_opts o = { .caps = RPMEM_CAP_SCRUB,
					      .size = MIB,
					      .state = RPMEM_POOL_CONSISTENT };
		struct env e;
		struct scrub_seen seen = { .n = 0 };
		env_open(&e, &o, RPMEMCTL_OPEN_RDONLY);
		fake_target_script(e.ft, RPMEM_MSG_SCRUB, 1, lies[i], 0);
		int ret = rpmemctl_pool_scrub(e.p, 0, scrub_cb, NULL, &seen);
		assert_true(ret < 0);
		assert_int_equal(seen.n, 0);
		env_stop(&e);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(
			rpmemctl_pool_create__creates_the_pool_on_the_target),
		cmocka_unit_test(
			rpmemctl_pool_open__reports_what_the_target_holds),
		cmocka_unit_test(rpmemctl_pool_open__unknown_pool_is_enoent),
		cmocka_unit_test(
			rpmemctl_pool_write__lands_in_the_target_pool_after_flush),
		cmocka_unit_test(
			rpmemctl_pool_write__splits_into_frames_of_max_io),
		cmocka_unit_test(rpmemctl_pool_read__returns_the_target_bytes),
		cmocka_unit_test(
		  rpmemctl_pool_write__held_frames_keep_their_bytes_and_order),
		cmocka_unit_test(
			rpmemctl_pool_read__error_reply_keeps_the_stream_in_step),
		cmocka_unit_test(rpmemctl_pool_flush__reports_a_failed_write),
		cmocka_unit_test(
			rpmemctl_pool_write__eager_error_is_reported_by_the_flush),
		cmocka_unit_test(
			rpmemctl_pool_write__read_only_open_is_refused_locally),
		cmocka_unit_test(
			rpmemctl_pool_write__outside_the_pool_is_refused_locally),
		cmocka_unit_test(
			rpmemctl_pool_set_state__consistent_after_syncing_bumps_generation),
		cmocka_unit_test(
			rpmemctl_pool_set_state__consistent_reports_a_failed_write),
		cmocka_unit_test(
			rpmemctl_pool_hash__gives_the_target_hashes_in_batches),
		cmocka_unit_test(
			rpmemctl_pool_close__frees_the_pool_when_close_fails),
		cmocka_unit_test(
			rpmemctl_pool_scrub__ranges_merged_across_requests_in_order),
		cmocka_unit_test(
			rpmemctl_pool_scrub__older_target_is_enotsup_nothing_sent),
		cmocka_unit_test(rpmemctl_pool_scrub__lying_replies_are_errors),
		cmocka_unit_test(
			rpmemctl_pool_read__scrub_check_refuses_damaged_pieces),
	};
	return cmocka_run_group_tests_name("client_pool", tests, NULL, NULL);
}
