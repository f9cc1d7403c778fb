/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdma_batch.c -- unit tests of the target's GPSPM batch requests
 * (lib/rdma/rdma_target.c, included here for its static functions): the
 * entries of a batch are stored and persisted in order, each before the
 * next; a malformed or failing batch stops there and every later batch
 * of the connection is refused unapplied, so the pool stays a prefix of
 * what the initiator sent (docs/design/ordered-drains.md)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "../../lib/rdma/rdma_target.c"

#define POOL 4096

static uint8_t pool[POOL];
/* the persist calls, in order: off, len */
static uint64_t calls[64][2];
static unsigned ncalls;
/* what pool[0] held at each persist call (the order of the stores) */
static uint8_t seen0[64];

static int rec_persist(void *arg, uint64_t off, uint64_t len)
{
	(void)arg;
	if (ncalls < 64) {
		calls[ncalls][0] = off;
		calls[ncalls][1] = len;
		seen0[ncalls] = pool[0];
	}
	ncalls++;
	return 0;
}

/* an_expo -- an exposure of pool[] with the recording persist */
static void an_expo(struct rpmem_rdma_expo *e)
{
	memset(e, 0, sizeof(*e));
	memset(pool, 0, sizeof(pool));
	ncalls = 0;
	e->cfg.addr = pool;
	e->cfg.len = POOL;
	e->cfg.persist = rec_persist;
}

struct req {
	uint8_t b[RDMA_REQ_SLOT];
	uint32_t len, n;
};

/* req_start -- an empty batch numbered seq */
static void req_start(struct req *r, uint32_t seq)
{
	memset(r, 0, sizeof(*r));
	le32_put(r->b, RDMA_REQB_MAGIC);
	le32_put(r->b + 4, seq);
	r->len = RDMA_REQB_LEN;
}

/* req_add -- an entry: len bytes of value v at off, or (v < 0) no data */
static void req_add(struct req *r, uint64_t off, uint32_t len, int v)
{
	uint8_t *p = r->b + r->len;

	le64_put(p, off);
	le32_put(p + 8, len);
	le32_put(p + 12, v < 0 ? 0 : RDMA_ENT_DATA);
	r->len += RDMA_ENT_LEN;
	if (v >= 0) {
		memset(r->b + r->len, v, len);
		r->len += (len + 7) & ~7u;
	}
	le32_put(r->b + 8, ++r->n);
}

static void rdma_batch__entries_stored_and_persisted_in_order(void **st)
{
	struct rpmem_rdma_expo e;
	struct req r;
	uint32_t seq = 0;
	(void)st;

	an_expo(&e);
	req_start(&r, 7);
	req_add(&r, 0, 10, 1);	  /* the undo log, say */
	req_add(&r, 100, 3, 2);	  /* the data */
	req_add(&r, 0, 1, 3);	  /* the same bytes again, later */
	req_add(&r, 200, 16, -1); /* a range RDMA-written before */
	assert_int_equal(expo_serve(&e, r.b, r.len, &seq), 0);
	assert_int_equal(seq, 7);
	assert_int_equal(ncalls, 4);
	assert_int_equal(calls[0][0], 0);
	assert_int_equal(calls[0][1], 10);
	assert_int_equal(calls[1][0], 100);
	assert_int_equal(calls[2][0], 0);
	assert_int_equal(calls[3][0], 200);
	assert_int_equal(calls[3][1], 16);
	/* each entry was stored when it was persisted, not before */
	assert_int_equal(seen0[0], 1);
	assert_int_equal(seen0[1], 1);
	assert_int_equal(seen0[2], 3);
	assert_int_equal(pool[0], 3);
	assert_int_equal(pool[1], 1);
	assert_int_equal(pool[102], 2);
	assert_int_equal(e.batches, 1);
	assert_int_equal(e.flushes, 4);
	assert_int_equal(e.inlined, 3);
}

static void rdma_batch__a_failed_batch_refuses_every_later_one(void **st)
{
	struct rpmem_rdma_expo e;
	struct req r;
	uint32_t seq = 0;
	(void)st;

	an_expo(&e);
	req_start(&r, 1);
	req_add(&r, 0, 8, 5);
	req_add(&r, POOL - 4, 8, 6); /* past the end */
	req_add(&r, 16, 8, 7);
	assert_int_equal(expo_serve(&e, r.b, r.len, &seq), -EINVAL);
	/* the first entry is in, nothing after the failing one */
	assert_int_equal(ncalls, 1);
	assert_int_equal(pool[0], 5);
	assert_int_equal(pool[16], 0);
	req_start(&r, 2);
	req_add(&r, 32, 8, 9);
	assert_int_equal(expo_serve(&e, r.b, r.len, &seq), -EINVAL);
	assert_int_equal(seq, 2);
	assert_int_equal(ncalls, 1);
	assert_int_equal(pool[32], 0);
}

static void rdma_batch__truncated_data_is_eproto_and_applies_nothing(void **st)
{
	struct rpmem_rdma_expo e;
	struct req r;
	uint32_t seq = 0;
	(void)st;

	an_expo(&e);
	req_start(&r, 1);
	req_add(&r, 0, 64, 4);
	/* the message ends 8 bytes before its entry's data does */
	assert_int_equal(expo_serve(&e, r.b, r.len - 8, &seq), -EPROTO);
	assert_int_equal(ncalls, 0);
	assert_int_equal(pool[0], 0);
	/* an entry count larger than the entries sent */
	req_start(&r, 2);
	an_expo(&e);
	req_add(&r, 0, 8, 4);
	le32_put(r.b + 8, 2);
	assert_int_equal(expo_serve(&e, r.b, r.len, &seq), -EPROTO);
	assert_int_equal(ncalls, 1);
}

static void rdma_batch__a_read_only_session_stores_nothing(void **st)
{
	struct rpmem_rdma_expo e;
	struct req r;
	uint32_t seq = 0;
	(void)st;

	an_expo(&e);
	e.cfg.readonly = 1;
	req_start(&r, 1);
	req_add(&r, 0, 8, 4);
	assert_int_equal(expo_serve(&e, r.b, r.len, &seq), -EROFS);
	assert_int_equal(ncalls, 0);
	assert_int_equal(pool[0], 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(
			rdma_batch__entries_stored_and_persisted_in_order),
		cmocka_unit_test(
			rdma_batch__a_failed_batch_refuses_every_later_one),
		cmocka_unit_test(
			rdma_batch__truncated_data_is_eproto_and_applies_nothing),
		cmocka_unit_test(rdma_batch__a_read_only_session_stores_nothing),
	};
	return cmocka_run_group_tests_name("rdma_batch", tests, NULL, NULL);
}
