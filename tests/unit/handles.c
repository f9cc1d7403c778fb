/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * handles.c -- unit tests of a session's handle table
 * (daemon/session/handles.c): the ids a client names its open pools by,
 * and what the daemon does with an id it never issued, one it took back,
 * or one of another session.
 *
 * The layers below the table are stubbed: rpmemd_pool_close records which
 * pool it was asked to close (the store's own tests are tests/unit/store.c);
 * the RDMA exposure, the hash cache and the event stream do nothing.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "events.h"
#include "pool_int.h"
#include "region.h"
#include "session_int.h"
#include "versions.h"
#include "store.h"

#define NPOOLS (RPMEMD_MAX_HANDLES + 4)

/* the pools the tests open; closes[i] counts rpmemd_pool_close of pool i */
static struct rpmemd_region region = { .cfg = { .name = "r1" } };
static struct rpmemd_pool pools[NPOOLS];
static unsigned closes[NPOOLS];

void rpmemd_pool_close(struct rpmemd_pool **pool, uint8_t mode, uint32_t sid)
{
	(void)mode;
	(void)sid;
	assert_non_null(*pool);
	closes[*pool - pools]++;
	*pool = NULL;
}

/* the pool's face (store.c), on the fake pools */
const char *rpmemd_pool_name(const struct rpmemd_pool *p)
{
	return p->name;
}

struct rpmemd_region *rpmemd_pool_region(const struct rpmemd_pool *p)
{
	return p->region;
}

struct rpmemd_hcache *rpmemd_pool_hcache(const struct rpmemd_pool *p)
{
	return p->hc;
}

void rpmemd_pool_rdma_writer(struct rpmemd_pool *p, int delta)
{
	p->rdma_writers += (unsigned)delta;
}

void unexpose_pool(struct rpmemd_handle *h)
{
	(void)h;
}

void rpmemd_hcache_rdma_end(struct rpmemd_hcache *hc)
{
	(void)hc;
}

/* no version is open in these tests */
void rpmemd_vchain_close(struct rpmemd_vchain **c)
{
	assert_null(*c);
}

void rpmemd_ev_transfer(struct rpmemd_session *s, struct rpmemd_handle *h,
			uint8_t verb, const char *why)
{
	(void)s;
	(void)h;
	(void)verb;
	(void)why;
}

struct fx {
	struct rpmemd_sessions set;
	struct rpmemd_session *s[2]; /* two sessions of one daemon */
};

static int setup(void **state)
{
	struct fx *fx = calloc(1, sizeof(*fx));

	if (!fx || pthread_mutex_init(&fx->set.lock, NULL))
		return -1;
	for (int i = 0; i < 2; i++) {
		fx->s[i] = calloc(1, sizeof(*fx->s[i]));
		if (!fx->s[i])
			return -1;
		fx->s[i]->set = &fx->set;
		fx->s[i]->id = (uint32_t)i + 1;
		fx->s[i]->next_handle = 1; /* as rpmemd_sessions_add */
	}
	memset(closes, 0, sizeof(closes));
	for (int i = 0; i < NPOOLS; i++) {
		memset(&pools[i], 0, sizeof(pools[i]));
		pools[i].region = &region;
		snprintf(pools[i].name, sizeof(pools[i].name), "p%d", i);
	}
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fx *fx = *state;

	free(fx->s[0]);
	free(fx->s[1]);
	pthread_mutex_destroy(&fx->set.lock);
	free(fx);
	return 0;
}

/* open_pool -- what req_open does with the table: a slot, the pool, an id */
static uint32_t open_pool(struct rpmemd_session *s, int pool)
{
	struct rpmemd_handle *h = handle_free_slot(s);

	assert_non_null(h);
	assert_int_equal(h->id, 0);
	h->pool = &pools[pool];
	h->mode = RPMEM_OPEN_RW;
	handle_issue(s, h);
	handle_update_cur(s);
	return h->id;
}

/* close_id -- what req_close does with a valid id */
static void close_id(struct rpmemd_session *s, uint32_t id)
{
	struct rpmemd_handle *h = handle_get(s, id);

	assert_non_null(h);
	handle_close(s, h);
}

static void alloc__distinct_ids_each_finds_its_pool(void **state)
{
	struct rpmemd_session *s = ((struct fx *)*state)->s[0];
	uint32_t id[3];

	for (int i = 0; i < 3; i++) {
		id[i] = open_pool(s, i);
		assert_int_not_equal(id[i], 0);
		for (int j = 0; j < i; j++)
			assert_int_not_equal(id[i], id[j]);
	}
	for (int i = 0; i < 3; i++) {
		struct rpmemd_handle *h = handle_get(s, id[i]);

		assert_non_null(h);
		assert_int_equal(h->id, id[i]);
		assert_ptr_equal(h->pool, &pools[i]);
	}
	/* STATUS shows the latest open */
	assert_string_equal(s->cur_pool, "r1/p2");
}

static void get__forged_ids_are_refused(void **state)
{
	struct rpmemd_session *s = ((struct fx *)*state)->s[0];
	uint32_t forged[] = { 0, 2, 3, 17, RPMEMD_MAX_HANDLES,
			      RPMEMD_MAX_HANDLES + 1, 0x7fffffffu, 0x80000000u,
			      0xdeadbeefu, UINT32_MAX };
	uint32_t id = open_pool(s, 0);

	assert_int_equal(id, 1);
	/* free slots hold id 0: a forged 0 must not reach them */
	for (size_t i = 0; i < sizeof(forged) / sizeof(forged[0]); i++)
		assert_null(handle_get(s, forged[i]));
	assert_ptr_equal(handle_get(s, id)->pool, &pools[0]);
	assert_int_equal(closes[0], 0);
}

static void get__stale_id_is_refused_after_its_slot_is_reused(void **state)
{
	struct rpmemd_session *s = ((struct fx *)*state)->s[0];
	struct rpmemd_handle *slot;
	uint32_t old, new;

	old = open_pool(s, 0);
	slot = handle_get(s, old);
	close_id(s, old);
	assert_int_equal(closes[0], 1);
	assert_null(handle_get(s, old));
	/* the next open takes the same slot, under a new id */
	assert_ptr_equal(handle_free_slot(s), slot);
	new = open_pool(s, 1);
	assert_int_not_equal(new, old);
	assert_ptr_equal(handle_get(s, new), slot);
	assert_null(handle_get(s, old));
	assert_int_equal(closes[1], 0);
}

static void get__id_of_another_session_is_refused(void **state)
{
	struct fx *fx = *state;
	uint32_t a, b;

	a = open_pool(fx->s[0], 0);
	assert_null(handle_get(fx->s[1], a));
	/* ids are per session: the other's own pool, never the first's */
	b = open_pool(fx->s[1], 1);
	assert_ptr_equal(handle_get(fx->s[1], b)->pool, &pools[1]);
	for (uint32_t id = 0; id < 64; id++) {
		struct rpmemd_handle *h = handle_get(fx->s[1], id);

		assert_true(!h || h->pool != &pools[0]);
	}
}

static void alloc__full_table_then_a_slot_comes_back(void **state)
{
	struct rpmemd_session *s = ((struct fx *)*state)->s[0];
	uint32_t id[RPMEMD_MAX_HANDLES];

	for (int i = 0; i < RPMEMD_MAX_HANDLES; i++)
		id[i] = open_pool(s, i);
	assert_null(handle_free_slot(s));
	/* every id still finds its own pool */
	for (int i = 0; i < RPMEMD_MAX_HANDLES; i++)
		assert_ptr_equal(handle_get(s, id[i])->pool, &pools[i]);
	close_id(s, id[5]);
	assert_non_null(handle_free_slot(s));
	open_pool(s, RPMEMD_MAX_HANDLES);
	assert_null(handle_free_slot(s));
}

static void close_all__closes_each_open_pool_once(void **state)
{
	struct rpmemd_session *s = ((struct fx *)*state)->s[0];
	uint32_t id[5];

	for (int i = 0; i < 5; i++)
		id[i] = open_pool(s, i);
	close_id(s, id[2]);
	handle_close_all(s);
	for (int i = 0; i < 5; i++) {
		assert_int_equal(closes[i], 1);
		assert_null(handle_get(s, id[i]));
	}
	for (int i = 0; i < RPMEMD_MAX_HANDLES; i++)
		assert_int_equal(s->h[i].id, 0);
	handle_update_cur(s);
	assert_string_equal(s->cur_pool, "");
}

/*
 * the 32-bit counter wraps after 2^32 opens: the id it comes back to may
 * still be open (a pool held since the start), and two handles with one
 * id would make the older pool unreachable by CLOSE and let a WRITE meant
 * for one land in the other
 */
static void issue__wrapped_counter_skips_ids_still_open(void **state)
{
	struct rpmemd_session *s = ((struct fx *)*state)->s[0];
	uint32_t held, last, next;

	held = open_pool(s, 0);
	assert_int_equal(held, 1);
	s->next_handle = UINT32_MAX;
	last = open_pool(s, 1);
	assert_int_equal(last, UINT32_MAX);
	next = open_pool(s, 2);
	assert_int_not_equal(next, 0);
	assert_int_not_equal(next, held);
	assert_int_not_equal(next, last);
	assert_ptr_equal(handle_get(s, held)->pool, &pools[0]);
	assert_ptr_equal(handle_get(s, next)->pool, &pools[2]);
	close_id(s, held);
	assert_int_equal(closes[0], 1);
	assert_int_equal(closes[2], 0);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(alloc__distinct_ids_each_finds_its_pool),
		T(get__forged_ids_are_refused),
		T(get__stale_id_is_refused_after_its_slot_is_reused),
		T(get__id_of_another_session_is_refused),
		T(alloc__full_table_then_a_slot_comes_back),
		T(close_all__closes_each_open_pool_once),
		T(issue__wrapped_counter_skips_ids_still_open),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
