/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * client_links.c -- unit tests of a set of links (links.c): three fake
 * targets, k of n; one disappears, the others hold every drain, it comes
 * back and is resynced with its own dirty log's extents only; below k
 * the set's policy applies; threads that share a set share round trips
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cmocka.h>

#include "client_replicate.h"
#include "fake_target.h"
#include "librpmemctl.h"
#include "util.h"
#include "wait.h"

#define KIB 1024u
#define SIZE (1u << 20)
#define EXT (64u * KIB) /* the dirty logs' extent */
#define N 3

/* three fake targets, local data, a set of links to them */
struct env {
	struct fake_target *ft[N];
	struct rpmemctl_dirtylog *log[N];
	char lp[N][64];
	uint8_t *data;
	struct rpmemctl_links *set;
};

/*
 * env_start -- N targets holding an empty pool r1/p1 (consistent,
 * generation 1), data with a pattern, a set (k, policy) of N links under
 * the degrade policy (retry_ms), each with its own dirty log
 */
static void env_start(struct env *e, unsigned k,
		      enum rpmemctl_link_policy policy, long retry_ms)
{
	static unsigned envs; /* several sets at once: logs of their own */
	memset(e, 0, sizeof(*e));
	setenv("HOME", "/nonexistent-rpmem-unit", 1);
	unsetenv("XDG_CONFIG_HOME");
	e->data = malloc(SIZE);
	assert_non_null(e->data);
	for (size_t i = 0; i < SIZE; i++)
		e->data[i] = (uint8_t)(i * 7 + i / 4096);
	assert_int_equal(rpmemctl_links_new(k, policy, &e->set), 0);
	for (unsigned i = 0; i < N; i++) {
		struct fake_target_opts o = { .size = SIZE,
					      .state = RPMEM_POOL_CONSISTENT,
					      .generation = 1 };
		char target[128];
		struct rpmemctl_link *l = NULL;
		assert_int_equal(fake_target_start(&o, &e->ft[i]), 0);
		snprintf(target, sizeof(target), "127.0.0.1:%s/r1/p1",
			 fake_target_port(e->ft[i]));
		snprintf(e->lp[i], sizeof(e->lp[i]),
			 "/tmp/rpmem-links-%d-%u-%u.log", (int)getpid(), envs,
			 i);
		unlink(e->lp[i]);
		assert_int_equal(rpmemctl_dirtylog_open(e->lp[i], SIZE, EXT,
							&e->log[i]), 0);
		assert_int_equal(rpmemctl_link_new(target,
						   RPMEMCTL_TRANSPORT_TCP, &l),
				 0);
		assert_int_equal(rpmemctl_link_set_data(l, e->data, SIZE), 0);
		assert_int_equal(rpmemctl_link_set_dirty_log(l, e->log[i]), 0);
		assert_int_equal(rpmemctl_link_set_source(l, "h:/p",
							  "h:/p (live)"), 0);
		assert_int_equal(rpmemctl_link_set_policy(
				l, RPMEMCTL_LINK_DEGRADE, retry_ms), 0);
		assert_int_equal(rpmemctl_links_add(e->set, l), 0);
	}
	envs++;
}

/* env_stop -- delete the set; every target saw its connection end */
static void env_stop(struct env *e)
{
	rpmemctl_links_delete(&e->set);
	assert_null(e->set);
	for (unsigned i = 0; i < N; i++) {
		fake_target_set_down(e->ft[i], 0);
		assert_int_equal(fake_target_wait_idle(e->ft[i]), 0);
		fake_target_stop(&e->ft[i]);
		rpmemctl_dirtylog_close(&e->log[i]);
		unlink(e->lp[i]);
	}
	free(e->data);
}

/* persist -- what the replica API does: mark, change, write, drain */
static int persist(struct env *e, uint64_t off, uint64_t len, uint8_t v)
{
	int ret = rpmemctl_links_mark(e->set, off, len);
	if (ret)
		return ret;
	memset(e->data + off, v, len);
	ret = rpmemctl_links_write(e->set, off, len);
	return ret ? ret : rpmemctl_links_drain(e->set);
}

/* holds -- target i holds [off, off + len) of the data */
static int holds(struct env *e, unsigned i, uint64_t off, uint64_t len)
{
	return !memcmp(fake_target_pool(e->ft[i]) + off, e->data + off, len);
}

static void links__push_makes_every_target_equal(void **state)
{
	(void)state;
	struct env e;
	env_start(&e, 0, RPMEMCTL_LINK_FAIL_STOP, 0);
	assert_int_equal(rpmemctl_links_quorum(e.set), N);
	assert_int_equal(rpmemctl_links_push(e.set), 0);
	assert_int_equal(rpmemctl_links_holding(e.set), N);
	for (unsigned i = 0; i < N; i++)
		assert_memory_equal(fake_target_pool(e.ft[i]), e.data, SIZE);
	/* k = n: a drain returns once every target has it */
	unsigned f[N];
	for (unsigned i = 0; i < N; i++)
		f[i] = fake_target_count(e.ft[i], RPMEM_MSG_FLUSH);
	assert_int_equal(persist(&e, 8 * KIB, 4 * KIB, 0x5a), 0);
	for (unsigned i = 0; i < N; i++) {
		assert_true(holds(&e, i, 8 * KIB, 4 * KIB));
		assert_int_equal(fake_target_count(e.ft[i], RPMEM_MSG_FLUSH),
				 f[i] + 1);
	}
	env_stop(&e);
}

static void links__k2_goes_on_without_one_and_resyncs_its_extents(
	void **state)
{
	(void)state;
	struct env e;
	uint64_t gen;
	env_start(&e, 2, RPMEMCTL_LINK_FAIL_STOP, 0);
	assert_int_equal(rpmemctl_links_quorum(e.set), 2);
	assert_int_equal(rpmemctl_links_push(e.set), 0);
	assert_int_equal(persist(&e, 0, 4 * KIB, 1), 0);
	/* target 2 disappears mid-run: persists still return */
	fake_target_set_down(e.ft[2], 1);
	assert_int_equal(persist(&e, 300 * KIB, 4 * KIB, 2), 0);
	assert_int_equal(persist(&e, 900 * KIB, 8 * KIB, 3), 0);
	struct rpmemctl_link *l2 = rpmemctl_links_get(e.set, 2);
	assert_int_equal(rpmemctl_link_get_state(l2), RPMEMCTL_LINK_DEGRADED);
	assert_int_equal(rpmemctl_links_holding(e.set), 2);
	for (unsigned i = 0; i < 2; i++) {
		assert_true(holds(&e, i, 300 * KIB, 4 * KIB));
		assert_true(holds(&e, i, 900 * KIB, 8 * KIB));
	}
	assert_false(holds(&e, 2, 900 * KIB, 8 * KIB));
	/* its retry: a probe of its own, refused (off the persists) */
	WAIT_UNTIL(fake_target_refused(e.ft[2]) > 0);
	/* its lag: what was written since it was left behind */
	uint64_t lb = 0, lns = 0;
	assert_int_equal(rpmemctl_links_get_lag(e.set, 2, &lb, &lns), 0);
	assert_true(lb >= 8 * KIB && lb <= 12 * KIB);
	assert_true(lns > 0);
	assert_int_equal(rpmemctl_links_get_lag(e.set, 0, &lb, &lns), 0);
	assert_int_equal(lb, 0);
	assert_int_equal(lns, 0);
	assert_int_equal(rpmemctl_links_get_lag(e.set, N, &lb, &lns), -EINVAL);
	/*
	 * back: a probe (a thread of the link's) finds it answering, then
	 * the next drain resyncs it with its logged extents only
	 */
	fake_target_set_down(e.ft[2], 0);
	uint64_t w0 = fake_target_written(e.ft[2], 0, SIZE);
	uint64_t x0 = fake_target_written(e.ft[2], 0, EXT) +
		      fake_target_written(e.ft[2], 256 * KIB, EXT) +
		      fake_target_written(e.ft[2], 896 * KIB, EXT);
	assert_int_equal(rpmemctl_links_drain(e.set), 0);
	WAIT_DOING(rpmemctl_links_holding(e.set) == N,
		   assert_int_equal(rpmemctl_links_drain(e.set), 0));
	assert_memory_equal(fake_target_pool(e.ft[2]), e.data, SIZE);
	assert_int_equal(rpmemctl_links_get_lag(e.set, 2, &lb, &lns), 0);
	assert_int_equal(lb, 0);
	assert_int_equal(lns, 0);
	const struct rpmemctl_sync_result *res = rpmemctl_link_get_result(l2);
	assert_string_equal(rpmemctl_sync_result_get_dirty_fallback(res), "");
	assert_int_equal(rpmemctl_sync_result_get_dirty_only(res), 1);
	/*
	 * what it sent is inside the extents its log marked since its last
	 * push: the first persist's and the two made while it was gone
	 */
	uint64_t w = fake_target_written(e.ft[2], 0, SIZE) - w0;
	uint64_t in = fake_target_written(e.ft[2], 0, EXT) +
		      fake_target_written(e.ft[2], 256 * KIB, EXT) +
		      fake_target_written(e.ft[2], 896 * KIB, EXT) - x0;
	assert_true(w > 0 && w <= 3 * EXT);
	assert_int_equal(in, w);
	assert_int_equal(fake_target_state(e.ft[2], &gen),
			 RPMEM_POOL_CONSISTENT);
	/* and it goes on live with the others */
	assert_int_equal(persist(&e, 500 * KIB, 4 * KIB, 4), 0);
	assert_int_equal(rpmemctl_links_stop(e.set), 0);
	for (unsigned i = 0; i < N; i++) {
		assert_memory_equal(fake_target_pool(e.ft[i]), e.data, SIZE);
		assert_int_equal(fake_target_state(e.ft[i], &gen),
				 RPMEM_POOL_CONSISTENT);
	}
	env_stop(&e);
}

static void links__a_drain_does_not_wait_for_the_slowest(void **state)
{
	(void)state;
	struct env e;
	env_start(&e, 2, RPMEMCTL_LINK_FAIL_STOP, -1);
	assert_int_equal(rpmemctl_links_push(e.set), 0);
	/* target 0 holds its FLUSH reply: the drain returns without it */
	unsigned f0 = fake_target_count(e.ft[0], RPMEM_MSG_FLUSH);
	fake_target_script(e.ft[0], RPMEM_MSG_FLUSH, f0 + 1, FAKE_STALL, 0);
	assert_int_equal(persist(&e, 0, 4 * KIB, 9), 0);
	assert_true(holds(&e, 1, 0, 4 * KIB));
	assert_true(holds(&e, 2, 0, 4 * KIB));
	/* its FLUSH is on its way or held: no reply, no count promised */
	WAIT_UNTIL(fake_target_count(e.ft[0], RPMEM_MSG_FLUSH) >= f0 + 1);
	assert_int_equal(fake_target_count(e.ft[0], RPMEM_MSG_FLUSH), f0 + 1);
	/* the reply goes out; the next drain reads it and the new one */
	fake_target_release(e.ft[0]);
	assert_int_equal(persist(&e, 64 * KIB, 4 * KIB, 10), 0);
	assert_int_equal(rpmemctl_link_get_state(rpmemctl_links_get(e.set, 0)),
			 RPMEMCTL_LINK_LIVE);
	/* the link's own drain finds nothing owed or pending left */
	assert_int_equal(rpmemctl_link_drain(rpmemctl_links_get(e.set, 0)), 0);
	assert_int_equal(fake_target_count(e.ft[0], RPMEM_MSG_FLUSH), f0 + 2);
	assert_int_equal(rpmemctl_links_holding(e.set), N);
	assert_int_equal(rpmemctl_links_stop(e.set), 0);
	for (unsigned i = 0; i < N; i++)
		assert_memory_equal(fake_target_pool(e.ft[i]), e.data, SIZE);
	env_stop(&e);
}

/* keep_why -- a notify hook: the reason a link went DEGRADED, into why */
static char why[512];
static void keep_why(void *arg, struct rpmemctl_link *l,
		     enum rpmemctl_link_state from, enum rpmemctl_link_state to)
{
	(void)arg;
	(void)from;
	if (to == RPMEMCTL_LINK_DEGRADED)
		snprintf(why, sizeof(why), "%s", rpmemctl_link_errmsg(l));
}

static void links__a_stalled_target_is_kicked_out(void **state)
{
	(void)state;
	struct env e;
	env_start(&e, 2, RPMEMCTL_LINK_FAIL_STOP, -1);
	assert_int_equal(rpmemctl_links_set_kickout(e.set, 200, 0), 0);
	assert_int_equal(rpmemctl_links_set_kickout(e.set,
				RPMEMCTL_KICKOUT_MS_MAX + 1, 0), -EINVAL);
	assert_int_equal(rpmemctl_links_push(e.set), 0);
	/* target 0 answers no FLUSH from now on (frozen) */
	unsigned f0 = fake_target_count(e.ft[0], RPMEM_MSG_FLUSH);
	fake_target_script(e.ft[0], RPMEM_MSG_FLUSH, f0 + 1, FAKE_STALL, 0);
	struct rpmemctl_link *l0 = rpmemctl_links_get(e.set, 0);
	why[0] = '\0';
	assert_int_equal(rpmemctl_link_set_notify(l0, keep_why, NULL), 0);
	/*
	 * more persists than a link may owe replies (32): none waits for
	 * it (before, the 33rd waited for its socket's 60 s timeout); once
	 * its oldest FLUSH waited 200 ms, a persist drops it
	 */
	int i;
	for (i = 0; i < 40; i++)
		assert_int_equal(persist(&e, (uint64_t)(i % 8) * 64 * KIB,
					 4 * KIB, (uint8_t)i), 0);
	WAIT_DOING(rpmemctl_link_get_state(l0) != RPMEMCTL_LINK_LIVE,
		   (assert_int_equal(persist(&e, (uint64_t)(i % 8) * 64 * KIB,
					     4 * KIB, (uint8_t)i), 0), i++));
	assert_int_equal(rpmemctl_link_get_state(l0), RPMEMCTL_LINK_DEGRADED);
	assert_non_null(strstr(why, "kicked out: "));
	assert_int_equal(rpmemctl_links_holding(e.set), 2);
	uint64_t lb = 0, lns = 0;
	assert_int_equal(rpmemctl_links_get_lag(e.set, 0, &lb, &lns), 0);
	assert_true(lns > 0);
	for (unsigned t = 1; t < N; t++)
		assert_memory_equal(fake_target_pool(e.ft[t]), e.data, SIZE);
	/* back: the stop probes it and pushes its logged extents */
	fake_target_release(e.ft[0]);
	assert_int_equal(rpmemctl_links_stop(e.set), 0);
	for (unsigned t = 0; t < N; t++)
		assert_memory_equal(fake_target_pool(e.ft[t]), e.data, SIZE);
	env_stop(&e);
}

/*
 * env_start_cleared -- env_start (k = 2, fail-stop) with no time between
 * two clears of a log (the old time returned), pushed, then ten extents
 * persisted
 */
static uint64_t env_start_cleared(struct env *e)
{
	uint64_t was = client_links_clear_ns;
	client_links_clear_ns = 0;
	env_start(e, 2, RPMEMCTL_LINK_FAIL_STOP, 0);
	assert_int_equal(rpmemctl_links_push(e->set), 0);
	for (unsigned x = 0; x < 10; x++)
		assert_int_equal(persist(e, x * EXT, 4 * KIB, (uint8_t)x), 0);
	return was;
}

static void links__a_log_is_cleared_as_its_target_acknowledges(void **state)
{
	(void)state;
	struct env e;
	uint64_t was = env_start_cleared(&e);
	/*
	 * every target acknowledged them: a later persist clears each log
	 * (at most once a LINKS_CLEAR_NS, none here), which then marks only
	 * what came since (before, the log kept all ten until the next push)
	 */
	WAIT_DOING(rpmemctl_dirtylog_count(e.log[2]) <= 1,
		   assert_int_equal(persist(&e, 15 * EXT, 4 * KIB, 1), 0));
	/* target 2 misses two extents */
	fake_target_set_down(e.ft[2], 1);
	assert_int_equal(persist(&e, 11 * EXT, 4 * KIB, 2), 0);
	assert_int_equal(persist(&e, 12 * EXT, 4 * KIB, 3), 0);
	assert_true(rpmemctl_dirtylog_count(e.log[2]) >= 2);
	/* back: its resync sends those (and the one of the loop), no more */
	fake_target_set_down(e.ft[2], 0);
	uint64_t w0 = fake_target_written(e.ft[2], 0, SIZE);
	WAIT_DOING(rpmemctl_links_holding(e.set) == N,
		   assert_int_equal(rpmemctl_links_drain(e.set), 0));
	uint64_t w = fake_target_written(e.ft[2], 0, SIZE) - w0;
	assert_true(w > 0 && w <= 3 * EXT);
	assert_int_equal(rpmemctl_links_stop(e.set), 0);
	for (unsigned i = 0; i < N; i++)
		assert_memory_equal(fake_target_pool(e.ft[i]), e.data, SIZE);
	env_stop(&e);
	client_links_clear_ns = was;
}

/*
 * links__a_log_is_cleared_under_a_stream_of_writes -- a target always
 * owed a reply (late; a drain returns once k hold) has its log cleared in
 * steps all the same: the marks of the writes it acknowledged go, the
 * mark of a write whose reply it holds back stays until the reply comes
 * (before, its log kept every mark while a reply was owed: forever under
 * a stream of writes)
 */
static void links__a_log_is_cleared_under_a_stream_of_writes(void **state)
{
	(void)state;
	struct env e;
	uint64_t was = env_start_cleared(&e);
	fake_target_set_reply_delay(e.ft[2], 10000);
	uint8_t v = 0;
	WAIT_DOING(rpmemctl_dirtylog_count(e.log[2]) <= 1,
		   assert_int_equal(persist(&e, 15 * EXT, 4 * KIB, v++), 0));
	/* its reply to the write of extent 12 held back */
	fake_target_set_reply_delay(e.ft[2], 0);
	unsigned f = fake_target_count(e.ft[2], RPMEM_MSG_FLUSH);
	fake_target_script(e.ft[2], RPMEM_MSG_FLUSH, f + 1, FAKE_STALL, 0);
	assert_int_equal(persist(&e, 12 * EXT, 4 * KIB, 12), 0);
	/* fewer than the owed FLUSHes a link holds: none waits */
	for (unsigned i = 0; i < 20; i++) {
		assert_int_equal(persist(&e, 15 * EXT, 4 * KIB, v++), 0);
		assert_true(client_dirtylog_marked(e.log[2], 12));
	}
	/* the targets that answered hold it: their logs let it go */
	assert_false(client_dirtylog_marked(e.log[0], 12));
	assert_false(client_dirtylog_marked(e.log[1], 12));
	fake_target_release(e.ft[2]);
	WAIT_DOING(!client_dirtylog_marked(e.log[2], 12) &&
			   rpmemctl_dirtylog_count(e.log[2]) <= 1,
		   assert_int_equal(persist(&e, 15 * EXT, 4 * KIB, v++), 0));
	assert_int_equal(rpmemctl_links_stop(e.set), 0);
	for (unsigned t = 0; t < N; t++)
		assert_memory_equal(fake_target_pool(e.ft[t]), e.data, SIZE);
	env_stop(&e);
	client_links_clear_ns = was;
}

static void links__a_returning_target_is_resynced_beside_the_persists(
	void **state)
{
	(void)state;
	struct env e;
	env_start(&e, 2, RPMEMCTL_LINK_FAIL_STOP, 0);
	assert_int_equal(rpmemctl_links_push(e.set), 0);
	struct rpmemctl_link *l2 = rpmemctl_links_get(e.set, 2);
	/* target 2 away while four extents are written */
	fake_target_set_down(e.ft[2], 1);
	for (unsigned x = 0; x < 4; x++)
		assert_int_equal(persist(&e, x * EXT, 4 * KIB, (uint8_t)x), 0);
	assert_int_equal(rpmemctl_link_get_state(l2), RPMEMCTL_LINK_DEGRADED);
	/* back, but its resync's FLUSH is held: the resync cannot end */
	unsigned f = fake_target_count(e.ft[2], RPMEM_MSG_FLUSH);
	fake_target_script(e.ft[2], RPMEM_MSG_FLUSH, f + 1, FAKE_STALL, 0);
	fake_target_set_down(e.ft[2], 0);
	int i = 0;
	WAIT_DOING(rpmemctl_link_get_state(l2) == RPMEMCTL_LINK_RESYNCING,
		   assert_int_equal(persist(&e, 5 * EXT, 4 * KIB,
					    (uint8_t)i++), 0));
	/*
	 * the persists go on with the two that hold while it is held
	 * (before, the resync was a push in a persist, which waited for the
	 * FLUSH); the pool is syncing under the plain source meanwhile
	 */
	for (i = 0; i < 200; i++)
		assert_int_equal(persist(&e, (uint64_t)(6 + i % 2) * EXT,
					 4 * KIB, (uint8_t)i), 0);
	assert_int_equal(rpmemctl_link_get_state(l2), RPMEMCTL_LINK_RESYNCING);
	assert_int_equal(rpmemctl_links_holding(e.set), 2);
	/* its thread marks the pool before its held FLUSH: waited for */
	WAIT_UNTIL(fake_target_state(e.ft[2], NULL) == RPMEM_POOL_SYNCING);
	assert_string_equal(fake_target_source(e.ft[2]), "h:/p");
	/* released: it catches up and holds again; the writes reach it */
	fake_target_release(e.ft[2]);
	i = 0;
	WAIT_DOING(rpmemctl_links_holding(e.set) == N,
		   assert_int_equal(persist(&e, 8 * EXT, 4 * KIB,
					    (uint8_t)i++), 0));
	assert_int_equal(persist(&e, 9 * EXT, 4 * KIB, 9), 0);
	/*
	 * the drain returned at 2 of 3: target 2's reply may be owed yet
	 * (a loaded machine); its link's own drain reads it
	 */
	assert_int_equal(rpmemctl_link_drain(l2), 0);
	assert_true(holds(&e, 2, 0, 10 * EXT));
	assert_int_equal(rpmemctl_links_stop(e.set), 0);
	for (unsigned t = 0; t < N; t++)
		assert_memory_equal(fake_target_pool(e.ft[t]), e.data, SIZE);
	env_stop(&e);
}

/*
 * links__a_stop_finishes_a_resync_under_way -- the stop of a set whose
 * link is RESYNCING waits for its thread while it moves data, then its
 * catch-up compares every block: every target equal to the data
 */
static void links__a_stop_finishes_a_resync_under_way(void **state)
{
	(void)state;
	struct env e;
	env_start(&e, 2, RPMEMCTL_LINK_FAIL_STOP, 0);
	assert_int_equal(rpmemctl_links_push(e.set), 0);
	struct rpmemctl_link *l2 = rpmemctl_links_get(e.set, 2);
	fake_target_set_down(e.ft[2], 1);
	for (unsigned x = 0; x < 4; x++)
		assert_int_equal(persist(&e, x * EXT, 4 * KIB, (uint8_t)x), 0);
	unsigned f = fake_target_count(e.ft[2], RPMEM_MSG_FLUSH);
	fake_target_script(e.ft[2], RPMEM_MSG_FLUSH, f + 1, FAKE_STALL, 0);
	fake_target_set_down(e.ft[2], 0);
	int i = 0;
	WAIT_DOING(rpmemctl_link_get_state(l2) == RPMEMCTL_LINK_RESYNCING,
		   assert_int_equal(persist(&e, 5 * EXT, 4 * KIB,
					    (uint8_t)i++), 0));
	/* a store no link was told of: only a compare finds it */
	e.data[7 * EXT + 5] ^= 0xff;
	fake_target_release(e.ft[2]);
	assert_int_equal(rpmemctl_links_stop(e.set), 0);
	assert_int_equal(rpmemctl_link_get_state(l2), RPMEMCTL_LINK_DOWN);
	for (unsigned t = 0; t < N; t++)
		assert_memory_equal(fake_target_pool(e.ft[t]), e.data, SIZE);
	env_stop(&e);
}

static void links__below_k_fail_stop_fails_for_good(void **state)
{
	(void)state;
	struct env e;
	env_start(&e, 2, RPMEMCTL_LINK_FAIL_STOP, -1);
	assert_int_equal(rpmemctl_links_push(e.set), 0);
	fake_target_set_down(e.ft[1], 1);
	fake_target_set_down(e.ft[2], 1);
	int ret = persist(&e, 0, 4 * KIB, 6);
	assert_true(ret < 0);
	assert_non_null(strstr(rpmemctl_links_errmsg(e.set),
			       "only 1 of 3 targets"));
	assert_non_null(strstr(rpmemctl_strerror(ret), "only 1 of 3"));
	/* target 0's link is fine; the set refuses every later call */
	assert_int_equal(rpmemctl_link_get_state(rpmemctl_links_get(e.set, 0)),
			 RPMEMCTL_LINK_LIVE);
	fake_target_set_down(e.ft[1], 0);
	fake_target_set_down(e.ft[2], 0);
	unsigned c = fake_target_connections(e.ft[1]);
	assert_int_equal(rpmemctl_links_drain(e.set), ret);
	assert_int_equal(fake_target_connections(e.ft[1]), c);
	/* but its marks go on: they must cover every local write */
	assert_int_equal(rpmemctl_links_mark(e.set, 512 * KIB, 10), 0);
	assert_int_equal(rpmemctl_links_write(e.set, 512 * KIB, 10), ret);
	for (unsigned i = 0; i < N; i++) {
		uint8_t bits = 0;
		FILE *lf = fopen(e.lp[i], "rb");
		assert_non_null(lf);
		/* the bitmap after the 4 KiB header: extent 8, bit 0 of byte 1 */
		assert_int_equal(fseek(lf, 4096 + 1, SEEK_SET), 0);
		assert_int_equal(fread(&bits, 1, 1, lf), 1);
		fclose(lf);
		assert_true(bits & 1);
	}
	env_stop(&e);
}

static void links__below_k_degrade_goes_on_locally(void **state)
{
	(void)state;
	struct env e;
	env_start(&e, 2, RPMEMCTL_LINK_DEGRADE, 0);
	assert_int_equal(rpmemctl_links_push(e.set), 0);
	fake_target_set_down(e.ft[1], 1);
	fake_target_set_down(e.ft[2], 1);
	assert_int_equal(persist(&e, 0, 4 * KIB, 6), 0);
	assert_int_equal(rpmemctl_links_holding(e.set), 1);
	assert_non_null(strstr(rpmemctl_links_errmsg(e.set),
			       "only 1 of 3 targets"));
	/* both back: a probe of each finds it, then a drain resyncs them */
	fake_target_set_down(e.ft[1], 0);
	fake_target_set_down(e.ft[2], 0);
	assert_int_equal(persist(&e, 128 * KIB, 4 * KIB, 8), 0);
	WAIT_DOING(rpmemctl_links_holding(e.set) == N,
		   assert_int_equal(persist(&e, 128 * KIB, 4 * KIB, 8), 0));
	/*
	 * the drain returned at 2 of 3: the third's reply may be owed yet;
	 * each link's own drain reads it, then its target has seen all
	 */
	for (unsigned i = 0; i < N; i++)
		assert_int_equal(rpmemctl_link_drain(
					 rpmemctl_links_get(e.set, i)), 0);
	for (unsigned i = 0; i < N; i++)
		assert_memory_equal(fake_target_pool(e.ft[i]), e.data, SIZE);
	env_stop(&e);
}

/* a thread's persists (links__with_k_n_a_return_runs_off_the_calls) */
struct persists {
	struct env *e;
	int ret;
	_Atomic int done;
};

/* persists_run -- 50 persists of four extents, then done */
static void *persists_run(void *arg)
{
	struct persists *p = arg;
	for (unsigned i = 0; i < 50 && !p->ret; i++)
		p->ret = persist(p->e, (3 + i % 4) * EXT, 4 * KIB, (uint8_t)i);
	atomic_store(&p->done, 1);
	return NULL;
}

/*
 * links__with_k_n_a_return_runs_off_the_calls -- with k = n (every
 * target must hold) a target that went away and comes back answering
 * nothing (its HELLO's reply held) holds no persist: its reconnect waits
 * for a probe in a thread of its own while the persists go on locally,
 * below k; answered, it is resynced beside them and holds again
 * (before, the reconnect ran inside a persist, which waited up to the
 * I/O timeout, 60 s, for the reply, at every retry)
 */
static void links__with_k_n_a_return_runs_off_the_calls(void **state)
{
	(void)state;
	struct env e;
	env_start(&e, N, RPMEMCTL_LINK_DEGRADE, 0);
	assert_int_equal(rpmemctl_links_push(e.set), 0);
	struct rpmemctl_link *l2 = rpmemctl_links_get(e.set, 2);
	fake_target_set_down(e.ft[2], 1);
	assert_int_equal(persist(&e, 0, 4 * KIB, 1), 0);
	assert_int_equal(rpmemctl_link_get_state(l2), RPMEMCTL_LINK_DEGRADED);
	unsigned h = fake_target_count(e.ft[2], RPMEM_MSG_HELLO);
	fake_target_script(e.ft[2], RPMEM_MSG_HELLO, h + 1, FAKE_STALL, 0);
	fake_target_set_down(e.ft[2], 0);
	struct persists p = { .e = &e };
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, persists_run, &p), 0);
	WAIT_UNTIL(atomic_load(&p.done));
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(p.ret, 0);
	/* the target was asked meanwhile, and holds nothing yet */
	WAIT_UNTIL(fake_target_count(e.ft[2], RPMEM_MSG_HELLO) > h);
	assert_int_not_equal(rpmemctl_link_get_state(l2), RPMEMCTL_LINK_LIVE);
	assert_int_equal(rpmemctl_links_holding(e.set), N - 1);
	fake_target_release(e.ft[2]);
	int i = 0;
	WAIT_DOING(rpmemctl_links_holding(e.set) == N,
		   assert_int_equal(persist(&e, 8 * EXT, 4 * KIB,
					    (uint8_t)i++), 0));
	assert_int_equal(rpmemctl_links_stop(e.set), 0);
	for (unsigned x = 0; x < N; x++)
		assert_memory_equal(fake_target_pool(e.ft[x]), e.data, SIZE);
	env_stop(&e);
}

/* replica_file -- a local pool file of SIZE bytes with the data's bytes */
static void replica_file(const struct env *e, char *path)
{
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, e->data, SIZE), SIZE);
	close(fd);
}

/* unlink_logs -- the replica's dirty logs, which must all exist */
static void unlink_logs(const char *path)
{
	char lp[128];
	for (unsigned i = 0; i < N; i++) {
		if (i)
			snprintf(lp, sizeof(lp), "%s.rpmemlog.%u", path, i);
		else
			snprintf(lp, sizeof(lp), "%s.rpmemlog", path);
		assert_int_equal(unlink(lp), 0);
	}
}

static void replica__three_targets_k2_one_gone_and_back(void **state)
{
	(void)state;
	struct env e;
	struct rpmemctl_replica *r = NULL;
	char path[] = "/tmp/rpmem-replica-XXXXXX";
	char t[N][128];
	const char *targets[N];
	uint64_t gen;
	env_start(&e, 2, RPMEMCTL_LINK_FAIL_STOP, 0);
	replica_file(&e, path);
	for (unsigned i = 0; i < N; i++) {
		snprintf(t[i], sizeof(t[i]), "127.0.0.1:%s/r1/p1",
			 fake_target_port(e.ft[i]));
		targets[i] = t[i];
	}
	memset(fake_target_pool(e.ft[1]), 0xee, SIZE);
	assert_int_equal(rpmemctl_replica_open_targets(
				 path, targets, N, 2, RPMEMCTL_TRANSPORT_TCP,
				 &r), 0);
	for (unsigned i = 0; i < N; i++)
		assert_memory_equal(fake_target_pool(e.ft[i]), e.data, SIZE);
	uint8_t *m = rpmemctl_replica_addr(r);
	assert_int_equal(rpmemctl_replica_set_spin(r, 10001), -EINVAL);
	assert_int_equal(rpmemctl_replica_set_spin(NULL, 0), -EINVAL);
	/*
	 * the replica's spin is its set's (the replies 1 ms late, so that
	 * a drain always waits for them: see the spin's own test)
	 */
	const struct rpmemctl_links *rs = rpmemctl_replica_get_links(r);
	for (unsigned i = 0; i < N; i++)
		fake_target_set_reply_delay(e.ft[i], 1000);
	assert_int_equal(rpmemctl_replica_set_spin(r, 0), 0);
	uint64_t n0 = client_links_spins(rs);
	for (int i = 0; i < 20; i++) {
		memset(m + 4 * KIB, i, 100);
		assert_int_equal(rpmemctl_replica_persist(r, m + 4 * KIB, 100),
				 0);
	}
	assert_int_equal(client_links_spins(rs), n0);
	assert_int_equal(rpmemctl_replica_set_spin(r, 10000), 0);
	for (int i = 0; i < 20; i++) {
		memset(m + 4 * KIB, i, 100);
		assert_int_equal(rpmemctl_replica_persist(r, m + 4 * KIB, 100),
				 0);
	}
	assert_true(client_links_spins(rs) > n0);
	for (unsigned i = 0; i < N; i++)
		fake_target_set_reply_delay(e.ft[i], 0);
	memset(m + 4 * KIB, 1, 100);
	assert_int_equal(rpmemctl_replica_persist(r, m + 4 * KIB, 100), 0);
	fake_target_set_down(e.ft[0], 1);
	memset(m + 600 * KIB, 2, 4 * KIB);
	assert_int_equal(rpmemctl_replica_persist(r, m + 600 * KIB, 4 * KIB),
			 0);
	for (unsigned i = 1; i < N; i++)
		assert_memory_equal(fake_target_pool(e.ft[i]), m, SIZE);
	assert_memory_not_equal(fake_target_pool(e.ft[0]), m, SIZE);
	/* each target's state through the replica's getter */
	const struct rpmemctl_links *set = rpmemctl_replica_get_links(r);
	assert_int_equal(rpmemctl_links_count(set), N);
	/*
	 * a drain that k targets answered may return before it read the
	 * gone one's end of stream: a later drain reads it
	 */
	WAIT_DOING(rpmemctl_link_get_state(rpmemctl_links_get(set, 0)) ==
			   RPMEMCTL_LINK_DEGRADED,
		   (m[600 * KIB]++,
		    assert_int_equal(rpmemctl_replica_persist(
					     r, m + 600 * KIB, 1), 0)));
	assert_int_equal(rpmemctl_link_get_state(rpmemctl_links_get(set, 1)),
			 RPMEMCTL_LINK_LIVE);
	/* back: the close retries it, then every target is consistent */
	fake_target_set_down(e.ft[0], 0);
	assert_int_equal(rpmemctl_replica_close(&r), 0);
	/* the mapping is gone: compare with the file */
	int fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(read(fd, e.data, SIZE), SIZE);
	close(fd);
	for (unsigned i = 0; i < N; i++) {
		assert_memory_equal(fake_target_pool(e.ft[i]), e.data, SIZE);
		assert_int_equal(fake_target_state(e.ft[i], &gen),
				 RPMEM_POOL_CONSISTENT);
	}
	unlink_logs(path);
	unlink(path);
	env_stop(&e);
}

static void replica__below_k_the_persist_fails(void **state)
{
	(void)state;
	struct env e;
	struct rpmemctl_replica *r = NULL;
	char path[] = "/tmp/rpmem-replica-XXXXXX";
	char t[N][128];
	const char *targets[N];
	env_start(&e, 2, RPMEMCTL_LINK_FAIL_STOP, 0);
	replica_file(&e, path);
	for (unsigned i = 0; i < N; i++) {
		snprintf(t[i], sizeof(t[i]), "127.0.0.1:%s/r1/p1",
			 fake_target_port(e.ft[i]));
		targets[i] = t[i];
	}
	/* k > n, n = 0 and a bad target are refused, naming the reason */
	assert_int_equal(rpmemctl_replica_open_targets(
				 path, targets, N, N + 1,
				 RPMEMCTL_TRANSPORT_TCP, &r), -EINVAL);
	assert_int_equal(rpmemctl_replica_open_targets(
				 path, targets, 0, 0, RPMEMCTL_TRANSPORT_TCP,
				 &r), -EINVAL);
	const char *bad[2] = { targets[0], "127.0.0.1/r1" };
	assert_int_equal(rpmemctl_replica_open_targets(
				 path, bad, 2, 0, RPMEMCTL_TRANSPORT_TCP, &r),
			 -EINVAL);
	assert_non_null(strstr(rpmemctl_strerror(-EINVAL), "target 2"));
	assert_null(r);
	assert_int_equal(rpmemctl_replica_open_targets(
				 path, targets, N, 2, RPMEMCTL_TRANSPORT_TCP,
				 &r), 0);
	fake_target_set_down(e.ft[0], 1);
	fake_target_set_down(e.ft[2], 1);
	uint8_t *m = rpmemctl_replica_addr(r);
	memset(m, 3, 64);
	int ret = rpmemctl_replica_persist(r, m, 64);
	assert_true(ret < 0);
	assert_non_null(strstr(rpmemctl_replica_errmsg(r),
			       "only 1 of 3 targets"));
	assert_true(rpmemctl_replica_close(&r) < 0);
	assert_null(r);
	unlink_logs(path);
	unlink(path);
	env_stop(&e);
}

static void links__bad_arguments(void **state)
{
	(void)state;
	struct rpmemctl_links *s = NULL;
	assert_int_equal(rpmemctl_links_new(0, 7, &s), -EINVAL);
	assert_int_equal(rpmemctl_links_new(17, RPMEMCTL_LINK_DEGRADE, &s),
			 -EINVAL);
	assert_int_equal(rpmemctl_links_new(0, RPMEMCTL_LINK_DEGRADE, &s), 0);
	assert_int_equal(rpmemctl_links_add(s, NULL), -EINVAL);
	assert_int_equal(rpmemctl_links_drain(s), -EINVAL);
	assert_non_null(strstr(rpmemctl_links_errmsg(s), "no links"));
	assert_int_equal(rpmemctl_links_drain(NULL), -EINVAL);
	rpmemctl_links_delete(&s);
	assert_null(s);
}

#define THREADS 8
#define ROUNDS 50

/* one thread's persists on a shared set */
struct drainer {
	struct env *e;
	unsigned i;
	unsigned rounds;	/* persists of its own range */
	atomic_uint *written; /* threads whose first write was sent */
	int check; /* read the targets' bytes at each return (k = n only) */
	int ret;
	int held; /* each drain returned with every target holding it */
};

/* drainer_run -- persists of the thread's own range; held checked at each */
static void *drainer_run(void *arg)
{
	struct drainer *d = arg;
	uint64_t off = 128 * KIB + d->i * 4 * KIB;
	d->held = 1;
	for (unsigned r = 0; r < d->rounds && !d->ret; r++) {
		d->ret = rpmemctl_links_mark(d->e->set, off, 4 * KIB);
		memset(d->e->data + off, (int)(d->i * 16 + r), 4 * KIB);
		if (!d->ret)
			d->ret = rpmemctl_links_write(d->e->set, off, 4 * KIB);
		atomic_fetch_add(d->written, r == 0);
		if (!d->ret)
			d->ret = rpmemctl_links_drain(d->e->set);
		/* k < n: a target left behind may be writing these bytes */
		for (unsigned t = 0; t < N && !d->ret && d->check; t++)
			d->held &= holds(d->e, t, off, 4 * KIB);
	}
	return NULL;
}

/* start_drainer -- thread i of d doing rounds persists */
static void start_drainer(struct env *e, struct drainer *d, pthread_t *th,
			  unsigned i, unsigned rounds, atomic_uint *written)
{
	d[i] = (struct drainer){ .e = e, .i = i, .rounds = rounds,
				 .written = written,
				 .check = rpmemctl_links_quorum(e->set) == N };
	assert_int_equal(pthread_create(&th[i], NULL, drainer_run, &d[i]), 0);
}

/* join_drainers -- every thread returned 0 and saw its data held */
static void join_drainers(struct drainer *d, pthread_t *th, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		assert_int_equal(pthread_join(th[i], NULL), 0);
		assert_int_equal(d[i].ret, 0);
		assert_true(d[i].held);
	}
}

/* flushes_reach -- target i of e has seen n FLUSHes (waits for them) */
static unsigned flushes_reach(struct env *e, unsigned i, unsigned n)
{
	WAIT_UNTIL(fake_target_count(e->ft[i], RPMEM_MSG_FLUSH) >= n);
	return fake_target_count(e->ft[i], RPMEM_MSG_FLUSH);
}

/*
 * hold_first_round -- e pushed and LIVE, target 0 holding the next FLUSH:
 * thread 0 of d writes and drains, its round in flight; f[i]: target i's
 * FLUSHes before. No spin: a drain never waits for a round about to end,
 * it sends its own (the pipeline these tests look at)
 */
/*
 * live_holding -- e pushed and LIVE with a spin of spin_us, target 0 to
 * hold its next FLUSH's reply; f[i]: target i's FLUSHes so far
 */
static void live_holding(struct env *e, unsigned spin_us, unsigned *f)
{
	env_start(e, 0, RPMEMCTL_LINK_FAIL_STOP, -1);
	assert_int_equal(rpmemctl_links_push(e->set), 0);
	assert_int_equal(persist(e, 0, 4 * KIB, 1), 0); /* LIVE */
	assert_int_equal(rpmemctl_links_set_spin(e->set, spin_us), 0);
	for (unsigned i = 0; i < N; i++)
		f[i] = fake_target_count(e->ft[i], RPMEM_MSG_FLUSH);
	fake_target_script(e->ft[0], RPMEM_MSG_FLUSH, f[0] + 1, FAKE_STALL, 0);
}

static void hold_first_round(struct env *e, struct drainer *d, pthread_t *th,
			     atomic_uint *written, unsigned *f)
{
	live_holding(e, 0, f);
	start_drainer(e, d, th, 0, 1, written);
	assert_int_equal(flushes_reach(e, 1, f[1] + 1), f[1] + 1);
}

/* release_all -- target 0 answers; every thread returned with its data */
static void release_all(struct env *e, struct drainer *d, pthread_t *th,
			unsigned n)
{
	fake_target_release(e->ft[0]);
	join_drainers(d, th, n);
}

/* stop_equal -- the set stopped, every target equal to the data; e ended */
static void stop_equal(struct env *e)
{
	assert_int_equal(rpmemctl_links_stop(e->set), 0);
	for (unsigned i = 0; i < N; i++)
		assert_memory_equal(fake_target_pool(e->ft[i]), e->data, SIZE);
	env_stop(e);
}

static void links__a_drain_sends_its_round_while_another_is_in_flight(
	void **state)
{
	(void)state;
	struct env e;
	struct drainer d[2];
	pthread_t th[2];
	atomic_uint written = 0;
	unsigned f[N];
	hold_first_round(&e, d, th, &written, f);
	/*
	 * a second thread's write, which the held round does not cover: its
	 * drain sends the next round at once (target 1 sees its FLUSH while
	 * the first round's reply is still held), it does not wait for the
	 * round in flight to end
	 */
	start_drainer(&e, d, th, 1, 1, &written);
	assert_int_equal(flushes_reach(&e, 1, f[1] + 2), f[1] + 2);
	release_all(&e, d, th, 2);
	for (unsigned i = 0; i < N; i++)
		assert_int_equal(fake_target_count(e.ft[i], RPMEM_MSG_FLUSH),
				 f[i] + 2);
	stop_equal(&e);
}

/* threads of the pipeline test: a round each, and four more */
#define PIPE_THREADS (LINKS_ROUNDS + 4)

static void links__drains_beyond_the_pipeline_ride_one_round(void **state)
{
	(void)state;
	struct env e;
	struct drainer d[PIPE_THREADS];
	pthread_t th[PIPE_THREADS];
	atomic_uint written = 0;
	unsigned f[N];
	hold_first_round(&e, d, th, &written, f);
	/* LINKS_ROUNDS rounds in flight, each a thread's */
	for (unsigned i = 1; i < LINKS_ROUNDS; i++) {
		start_drainer(&e, d, th, i, 1, &written);
		assert_int_equal(flushes_reach(&e, 1, f[1] + i + 1),
				 f[1] + i + 1);
	}
	/* the rest write and drain while the pipeline is full */
	for (unsigned i = LINKS_ROUNDS; i < PIPE_THREADS; i++)
		start_drainer(&e, d, th, i, 1, &written);
	WAIT_UNTIL(atomic_load(&written) >= PIPE_THREADS);
	assert_int_equal(atomic_load(&written), PIPE_THREADS);
	usleep(100000);
	assert_int_equal(fake_target_count(e.ft[1], RPMEM_MSG_FLUSH),
			 f[1] + LINKS_ROUNDS);
	release_all(&e, d, th, PIPE_THREADS);
	/* a round each for the first LINKS_ROUNDS drains, one for the rest */
	for (unsigned i = 0; i < N; i++)
		assert_int_equal(fake_target_count(e.ft[i], RPMEM_MSG_FLUSH),
				 f[i] + LINKS_ROUNDS + 1);
	stop_equal(&e);
}

/*
 * coalesced -- e LIVE with a spin of 10 ms, target 0 holding the next
 * FLUSH: thread 0 of d drains (its round held), thread 1 writes after
 * wait_ms and drains. 1 if thread 1 waited for the held round (target 1
 * saw no FLUSH of its own 100 ms later; after a wait_ms, its FLUSH is
 * waited for instead, however slow the machine), 0 if it sent its own,
 * -1 if its write came more than 5 ms after the round left although it
 * was asked for at once (a loaded machine: the round, sent after t0, was no
 * longer surely about to end).
 * Both end with their data held; f[i]: target i's FLUSHes before
 */
static int coalesced(struct env *e, unsigned wait_ms, unsigned *f)
{
	struct drainer d[2];
	pthread_t th[2];
	atomic_uint written = 0;
	live_holding(e, 10000, f);
	uint64_t t0 = rpmem_now_ns();
	start_drainer(e, d, th, 0, 1, &written);
	WAIT_EVERY(fake_target_count(e->ft[1], RPMEM_MSG_FLUSH) > f[1],
		   (void)0, 100);
	usleep(wait_ms * 1000);
	start_drainer(e, d, th, 1, 1, &written);
	WAIT_EVERY(atomic_load(&written) >= 2, sched_yield(), 0);
	uint64_t late = rpmem_now_ns() - t0;
	if (wait_ms) /* it sends its own: waited for, however slow */
		WAIT_UNTIL(fake_target_count(e->ft[1], RPMEM_MSG_FLUSH) >
			   f[1] + 1);
	else
		usleep(100000); /* it waits: no FLUSH of its own meanwhile */
	unsigned sent = fake_target_count(e->ft[1], RPMEM_MSG_FLUSH) - f[1];
	release_all(e, d, th, 2);
	int ret = sent == 1;
	if (!wait_ms && !ret && late > 5000000u)
		ret = -1;
	return ret;
}

/*
 * a drain that comes while the oldest round in flight is about to end
 * (a recent round's time after it left, within the spin) waits for it
 * and rides the round sent when it ends; one that comes once that round
 * is late by more than the spin sends its own at once
 */
static void links__a_drain_rides_the_next_round_if_one_is_about_to_end(
	void **state)
{
	(void)state;
	struct env e;
	unsigned f[N];
	int got;
	/* tried again while the machine makes its write late (-1) */
	WAIT_EVERY((got = coalesced(&e, 0, f)) >= 0, stop_equal(&e), 0);
	assert_int_equal(got, 1);
	/* the round sent when the held one ended served the second drain */
	for (unsigned i = 0; i < N; i++)
		assert_int_equal(fake_target_count(e.ft[i], RPMEM_MSG_FLUSH),
				 f[i] + 2);
	stop_equal(&e);
	/* 50 ms after it left, the held round is 40 ms late: no waiting */
	assert_int_equal(coalesced(&e, 50, f), 0);
	stop_equal(&e);
}

/* the second drain of the lingering test, started while the first lingers */
static struct {
	struct env *e;
	struct drainer *d;
	pthread_t *th;
	atomic_uint *written;
} lg;

/* linger_second -- a lingering drain's yield: another thread drains */
static void linger_second(void)
{
	start_drainer(lg.e, lg.d, lg.th, 1, 1, lg.written);
	WAIT_UNTIL(client_links_waiting(lg.e->set) >= 1);
}

/*
 * a drain whose set other threads drain too (the last drain was
 * another's) lingers before it sends its round: a drain that comes
 * meanwhile waits for that round instead of sending its own (as the
 * drain in links__a_drain_sends_its_round_while_another_is_in_flight
 * does), and one round, one FLUSH on each target, holds both
 */
static void links__a_lingering_drain_sends_one_round_for_the_drains_that_came(
	void **state)
{
	(void)state;
	struct env e;
	struct drainer d[2];
	pthread_t th[2];
	atomic_uint written = 0;
	unsigned f[N];
	live_holding(&e, 0, f); /* the main thread drained last */
	lg.e = &e;
	lg.d = d;
	lg.th = th;
	lg.written = &written;
	void (*was)(void) = client_links_linger;
	client_links_linger = linger_second;
	start_drainer(&e, d, th, 0, 1, &written);
	assert_int_equal(flushes_reach(&e, 1, f[1] + 1), f[1] + 1);
	usleep(100000); /* a second round would have left by now */
	assert_int_equal(fake_target_count(e.ft[1], RPMEM_MSG_FLUSH),
			 f[1] + 1);
	release_all(&e, d, th, 2);
	client_links_linger = was;
	for (unsigned i = 0; i < N; i++)
		assert_int_equal(fake_target_count(e.ft[i], RPMEM_MSG_FLUSH),
				 f[i] + 1);
	stop_equal(&e);
}

/* returned -- thread t ended (joined if so) */
static int returned(pthread_t t)
{
	return pthread_tryjoin_np(t, NULL) == 0;
}

/*
 * three rounds in flight, a thread's each, their replies let go by
 * target 0 one at a time: a round's end wakes the waiter of the next to
 * read it and no other, and each waiting drain is woken once
 */
static void links__a_round_wakes_only_the_drain_that_reads_next(void **state)
{
	(void)state;
	struct env e;
	struct drainer d[3];
	pthread_t th[3];
	atomic_uint written = 0;
	unsigned f[N];
	hold_first_round(&e, d, th, &written, f);
	for (unsigned r = 2; r <= 3; r++)
		fake_target_script(e.ft[0], RPMEM_MSG_FLUSH, f[0] + r,
				   FAKE_STALL, 0);
	for (unsigned i = 1; i < 3; i++) {
		start_drainer(&e, d, th, i, 1, &written);
		assert_int_equal(flushes_reach(&e, 1, f[1] + i + 1),
				 f[1] + i + 1);
	}
	usleep(100000); /* both wait */
	assert_int_equal(client_links_wakes(e.set), 0);
	/* round 0 ends: its drain returns, the next round's reads */
	fake_target_release_one(e.ft[0]);
	assert_int_equal(pthread_join(th[0], NULL), 0);
	assert_int_equal(d[0].ret, 0);
	assert_int_equal(client_links_wakes(e.set), 1);
	usleep(100000);
	assert_false(returned(th[1]));
	assert_false(returned(th[2]));
	/* round 1 ends: the same for the last */
	fake_target_release_one(e.ft[0]);
	assert_int_equal(pthread_join(th[1], NULL), 0);
	assert_int_equal(d[1].ret, 0);
	assert_int_equal(client_links_wakes(e.set), 2);
	fake_target_release_one(e.ft[0]);
	assert_int_equal(pthread_join(th[2], NULL), 0);
	assert_int_equal(d[2].ret, 0);
	assert_int_equal(client_links_wakes(e.set), 2);
	for (unsigned i = 0; i < 3; i++)
		assert_true(d[i].held);
	stop_equal(&e);
}

/* slept -- the calling thread's sleeps so far (voluntary switches) */
static long slept(void)
{
	struct rusage u;
	assert_int_equal(getrusage(RUSAGE_THREAD, &u), 0);
	return u.ru_nvcsw;
}

/* persists_slept -- n persists of 4 KiB at off: the sleeps they took */
static long persists_slept(struct env *e, uint64_t off, unsigned n)
{
	long c0 = slept();
	for (unsigned i = 0; i < n; i++)
		assert_int_equal(persist(e, off, 4 * KIB, (uint8_t)i), 0);
	return slept() - c0;
}

/*
 * spun_after_a_long_round -- a round of 100 ms (target 0's reply that
 * late), then 10 short ones: whether the reader spun in them. The rounds'
 * time is then over the 2 ms spin, but a reader that a loaded machine
 * makes late by as much comes when the round is due, and spins: the
 * caller tries again rather than fail on the machine's load
 */
static int spun_after_a_long_round(struct env *e)
{
	fake_target_set_reply_delay(e->ft[0], 100000);
	assert_int_equal(persist(e, 24 * KIB, 4 * KIB, 3), 0);
	fake_target_set_reply_delay(e->ft[0], 0);
	uint64_t n0 = client_links_spins(e->set);
	for (unsigned i = 0; i < 10; i++)
		assert_int_equal(persist(e, 32 * KIB, 4 * KIB, (uint8_t)i), 0);
	return client_links_spins(e->set) != n0;
}

/*
 * the reading drain looks for its replies without sleeping, for up to
 * the set's spin, where rounds take no longer; with a spin of 0, or
 * once a round took longer than the spin, it sleeps in poll. The targets
 * answer each FLUSH 1 ms late in the first two parts, so that the reply
 * is never there already when the reader first looks (on a loaded
 * machine a test thread can be that slow, and then no drain would wait)
 */
static void links__the_reader_spins_only_where_rounds_are_short(void **state)
{
	(void)state;
	struct env e;
	env_start(&e, 0, RPMEMCTL_LINK_FAIL_STOP, -1);
	assert_int_equal(rpmemctl_links_set_spin(e.set, 10001), -EINVAL);
	assert_int_equal(rpmemctl_links_set_spin(NULL, 0), -EINVAL);
	assert_int_equal(rpmemctl_links_push(e.set), 0);
	assert_int_equal(persist(&e, 0, 4 * KIB, 1), 0); /* LIVE */
	for (unsigned i = 0; i < N; i++)
		fake_target_set_reply_delay(e.ft[i], 1000);
	/*
	 * no spin: the drains sleep for their replies (three targets), not
	 * one spins. Asserted on the reader's spin count only: how many
	 * sleeps a spin saves depends on the machine's load (asserting it
	 * failed a loaded make -j2), so it is printed, as a figure
	 * (docs/PERFORMANCE.md), never checked
	 */
	assert_int_equal(rpmemctl_links_set_spin(e.set, 0), 0);
	uint64_t n0 = client_links_spins(e.set);
	long s0 = persists_slept(&e, 8 * KIB, 20);
	assert_int_equal(client_links_spins(e.set), n0);
	/* a spin far longer than a loopback round: the reader spins */
	assert_int_equal(rpmemctl_links_set_spin(e.set, 10000), 0);
	long s1 = persists_slept(&e, 16 * KIB, 20);
	print_message("sleeps of 20 drains: %ld without a spin, %ld with\n",
		      s0, s1);
	assert_true(client_links_spins(e.set) > n0);
	for (unsigned i = 0; i < N; i++)
		fake_target_set_reply_delay(e.ft[i], 0);
	/* a round of 100 ms: the rounds' time is over a 2 ms spin */
	assert_int_equal(rpmemctl_links_set_spin(e.set, 2000), 0);
	WAIT_EVERY(!spun_after_a_long_round(&e), (void)0, 0);
	n0 = client_links_spins(e.set);
	/*
	 * the average comes down with the short rounds: it spins again (60
	 * rounds bring it down on an idle machine; a loaded one has longer
	 * loopback rounds, so up to 2,000 are allowed before it fails)
	 */
	unsigned i = 0;
	for (; i < 60; i++)
		assert_int_equal(persist(&e, 32 * KIB, 4 * KIB, (uint8_t)i), 0);
	WAIT_EVERY(client_links_spins(e.set) > n0,
		   assert_int_equal(persist(&e, 32 * KIB, 4 * KIB,
					    (uint8_t)i++), 0), 0);
	stop_equal(&e);
}

/* drain_run -- a thread that wrote nothing drains the set (rides a round) */
static void *drain_run(void *arg)
{
	return (void *)(intptr_t)rpmemctl_links_drain(arg);
}

static void links__started_drains_of_two_sets_overlap(void **state)
{
	(void)state;
	struct env e[2];
	unsigned f[2][N];
	pthread_t th;
	void *ret;
	alarm(60); /* a drain_start that waited would wait for ever */
	for (unsigned s = 0; s < 2; s++) {
		env_start(&e[s], 0, RPMEMCTL_LINK_FAIL_STOP, -1);
		assert_int_equal(rpmemctl_links_push(e[s].set), 0);
		assert_int_equal(persist(&e[s], 0, 4 * KIB, 1), 0); /* LIVE */
		for (unsigned i = 0; i < N; i++)
			f[s][i] = fake_target_count(e[s].ft[i],
						    RPMEM_MSG_FLUSH);
	}
	/* the first set's targets hold their next FLUSH's reply */
	for (unsigned i = 0; i < N; i++)
		fake_target_script(e[0].ft[i], RPMEM_MSG_FLUSH, f[0][i] + 1,
				   FAKE_STALL, 0);
	for (unsigned s = 0; s < 2; s++) {
		assert_int_equal(rpmemctl_links_mark(e[s].set, 8 * KIB,
						     4 * KIB), 0);
		memset(e[s].data + 8 * KIB, 2 + (int)s, 4 * KIB);
		assert_int_equal(rpmemctl_links_write(e[s].set, 8 * KIB,
						      4 * KIB), 0);
	}
	/* both rounds out, the second while the first's replies are held */
	assert_int_equal(rpmemctl_links_drain_start(e[0].set), 0);
	assert_int_equal(rpmemctl_links_drain_start(e[1].set), 0);
	for (unsigned s = 0; s < 2; s++)
		for (unsigned i = 0; i < N; i++)
			assert_int_equal(flushes_reach(&e[s], i, f[s][i] + 1),
					 f[s][i] + 1);
	/* a round in flight: a second start sends nothing */
	assert_int_equal(rpmemctl_links_drain_start(e[0].set), 0);
	/* the second set drains at once; another thread reads the first's */
	assert_int_equal(rpmemctl_links_drain(e[1].set), 0);
	for (unsigned i = 0; i < N; i++) {
		assert_true(holds(&e[1], i, 8 * KIB, 4 * KIB));
		fake_target_release(e[0].ft[i]);
	}
	assert_int_equal(pthread_create(&th, NULL, drain_run, e[0].set), 0);
	assert_int_equal(pthread_join(th, &ret), 0);
	assert_int_equal((intptr_t)ret, 0);
	/* this thread's own drain: covered by that round, no FLUSH */
	assert_int_equal(rpmemctl_links_drain(e[0].set), 0);
	/* nothing new written: a start sends nothing, a drain neither */
	assert_int_equal(rpmemctl_links_drain_start(e[1].set), 0);
	assert_int_equal(rpmemctl_links_drain(e[1].set), 0);
	for (unsigned s = 0; s < 2; s++) {
		for (unsigned i = 0; i < N; i++) {
			assert_true(holds(&e[s], i, 8 * KIB, 4 * KIB));
			assert_int_equal(fake_target_count(e[s].ft[i],
							   RPMEM_MSG_FLUSH),
					 f[s][i] + 1);
		}
		assert_int_equal(rpmemctl_links_stop(e[s].set), 0);
		for (unsigned i = 0; i < N; i++)
			assert_memory_equal(fake_target_pool(e[s].ft[i]),
					    e[s].data, SIZE);
		env_stop(&e[s]);
	}
	alarm(0);
}

/*
 * shared_set -- a fail-stop set of one link to ft's pool r1/p1 over data,
 * its session shared with the process's other shared links to ft
 */
static struct rpmemctl_links *shared_set(struct fake_target *ft, uint8_t *data)
{
	struct rpmemctl_links *set = NULL;
	struct rpmemctl_link *l = NULL;
	char target[128];
	snprintf(target, sizeof(target), "127.0.0.1:%s/r1/p1",
		 fake_target_port(ft));
	assert_int_equal(rpmemctl_links_new(1, RPMEMCTL_LINK_FAIL_STOP, &set),
			 0);
	assert_int_equal(rpmemctl_link_new(target, RPMEMCTL_TRANSPORT_TCP, &l),
			 0);
	assert_int_equal(rpmemctl_link_set_data(l, data, SIZE), 0);
	assert_int_equal(rpmemctl_link_set_source(l, "h:/p", "h:/p (live)"),
			 0);
	assert_int_equal(rpmemctl_link_set_shared(l, 1), 0);
	assert_int_equal(rpmemctl_links_add(set, l), 0);
	return set;
}

/* two sets of one shared link each on one fake target, over one data */
struct shared {
	struct fake_target *ft;
	uint8_t *data;
	struct rpmemctl_links *set[2];
};

/* shared_env -- a fake target, a pattern, two shared sets over it, pushed */
static void shared_env(struct shared *e)
{
	struct fake_target_opts o = { .size = SIZE,
				      .state = RPMEM_POOL_CONSISTENT,
				      .generation = 1 };
	alarm(60);
	setenv("HOME", "/nonexistent-rpmem-unit", 1);
	unsetenv("XDG_CONFIG_HOME");
	assert_int_equal(fake_target_start(&o, &e->ft), 0);
	e->data = malloc(SIZE);
	assert_non_null(e->data);
	for (size_t i = 0; i < SIZE; i++)
		e->data[i] = (uint8_t)(i * 5 + i / 4096);
	/* the fake serves one connection at a time: a second would hang */
	for (unsigned i = 0; i < 2; i++) {
		e->set[i] = shared_set(e->ft, e->data);
		assert_int_equal(rpmemctl_links_push(e->set[i]), 0);
	}
	assert_int_equal(fake_target_count(e->ft, RPMEM_MSG_HELLO), 1);
	assert_int_equal(fake_target_count(e->ft, RPMEM_MSG_OPEN), 2);
}

/*
 * shared_write -- v into [off, off + 4 KiB) of the data, marked (the
 * links have no dirty log: the mark returns at once) and written by set i
 */
static void shared_write(struct shared *e, unsigned i, uint64_t off,
			 uint8_t v)
{
	assert_int_equal(rpmemctl_links_mark(e->set[i], off, 4 * KIB), 0);
	memset(e->data + off, v, 4 * KIB);
	assert_int_equal(rpmemctl_links_write(e->set[i], off, 4 * KIB), 0);
}

static void shared_env_stop(struct shared *e)
{
	for (unsigned i = 0; i < 2; i++)
		rpmemctl_links_delete(&e->set[i]);
	assert_int_equal(fake_target_wait_idle(e->ft), 0);
	fake_target_stop(&e->ft);
	free(e->data);
	alarm(0);
}

static void links__shared_sessions_read_each_others_replies(void **state)
{
	(void)state;
	struct shared e;
	shared_env(&e);
	unsigned f = fake_target_count(e.ft, RPMEM_MSG_FLUSH);
	/* both FLUSHes out on the one session, the first set's first */
	shared_write(&e, 0, 8 * KIB, 3);
	assert_int_equal(rpmemctl_links_drain_start(e.set[0]), 0);
	shared_write(&e, 1, 16 * KIB, 4);
	assert_int_equal(rpmemctl_links_drain_start(e.set[1]), 0);
	/* the second reads the first's reply, which waits for its owner */
	assert_int_equal(rpmemctl_links_drain(e.set[1]), 0);
	assert_int_equal(rpmemctl_links_drain(e.set[0]), 0);
	assert_int_equal(fake_target_count(e.ft, RPMEM_MSG_FLUSH), f + 2);
	assert_memory_equal(fake_target_pool(e.ft) + 8 * KIB,
			    e.data + 8 * KIB, 12 * KIB);
	assert_int_equal(rpmemctl_links_holding(e.set[0]), 1);
	assert_int_equal(rpmemctl_links_holding(e.set[1]), 1);
	/* stopped, each pool closed; the session ends with the last */
	for (unsigned i = 0; i < 2; i++)
		assert_int_equal(rpmemctl_links_stop(e.set[i]), 0);
	assert_memory_equal(fake_target_pool(e.ft), e.data, SIZE);
	assert_int_equal(fake_target_count(e.ft, RPMEM_MSG_HELLO), 1);
	shared_env_stop(&e);
}

static void links__shared_session_fails_every_link_on_an_error(void **state)
{
	(void)state;
	struct shared e;
	shared_env(&e);
	unsigned w = fake_target_count(e.ft, RPMEM_MSG_WRITE);
	/*
	 * the first set's WRITE fails; the target reports it at the next
	 * FLUSH, the second set's: which pool lost data is not known, so
	 * neither drain may succeed
	 */
	fake_target_script(e.ft, RPMEM_MSG_WRITE, w + 1, FAKE_ERROR,
			   RPMEM_E_IO);
	shared_write(&e, 0, 8 * KIB, 5);
	shared_write(&e, 1, 16 * KIB, 6);
	assert_int_not_equal(rpmemctl_links_drain(e.set[1]), 0);
	assert_non_null(strstr(rpmemctl_links_errmsg(e.set[1]),
			       "shared by several pools"));
	assert_int_not_equal(rpmemctl_links_drain(e.set[0]), 0);
	assert_int_equal(rpmemctl_links_holding(e.set[0]), 0);
	assert_int_equal(rpmemctl_links_holding(e.set[1]), 0);
	shared_env_stop(&e);
}

/* threads -- THREADS threads of ROUNDS persists on a set (k, of N) */
static void threads(unsigned k)
{
	struct env e;
	struct drainer d[THREADS];
	pthread_t th[THREADS];
	atomic_uint written = 0;
	env_start(&e, k, RPMEMCTL_LINK_FAIL_STOP, -1);
	assert_int_equal(rpmemctl_links_push(e.set), 0);
	for (unsigned i = 0; i < THREADS; i++)
		start_drainer(&e, d, th, i, ROUNDS, &written);
	join_drainers(d, th, THREADS);
	assert_true(fake_target_count(e.ft[0], RPMEM_MSG_FLUSH) <=
		    THREADS * ROUNDS + 1);
	assert_int_equal(rpmemctl_links_holding(e.set), N);
	assert_int_equal(rpmemctl_links_stop(e.set), 0);
	for (unsigned i = 0; i < N; i++)
		assert_memory_equal(fake_target_pool(e.ft[i]), e.data, SIZE);
	env_stop(&e);
}

static void links__threads_each_drain_holds_its_data(void **state)
{
	(void)state;
	threads(0);
}

static void links__threads_k2_of_3_hold_every_write_at_stop(void **state)
{
	(void)state;
	threads(2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(links__push_makes_every_target_equal),
		cmocka_unit_test(
		  links__k2_goes_on_without_one_and_resyncs_its_extents),
		cmocka_unit_test(links__a_drain_does_not_wait_for_the_slowest),
		cmocka_unit_test(links__a_stalled_target_is_kicked_out),
		cmocka_unit_test(
			links__a_log_is_cleared_as_its_target_acknowledges),
		cmocka_unit_test(
			links__a_returning_target_is_resynced_beside_the_persists),
		cmocka_unit_test(links__a_stop_finishes_a_resync_under_way),
		cmocka_unit_test(
			links__a_log_is_cleared_under_a_stream_of_writes),
		cmocka_unit_test(links__below_k_fail_stop_fails_for_good),
		cmocka_unit_test(links__below_k_degrade_goes_on_locally),
		cmocka_unit_test(links__with_k_n_a_return_runs_off_the_calls),
		cmocka_unit_test(links__bad_arguments),
		cmocka_unit_test(
		  links__a_drain_sends_its_round_while_another_is_in_flight),
		cmocka_unit_test(links__drains_beyond_the_pipeline_ride_one_round),
		cmocka_unit_test(links__a_drain_rides_the_next_round_if_one_is_about_to_end),
		cmocka_unit_test(
			links__a_lingering_drain_sends_one_round_for_the_drains_that_came),
		cmocka_unit_test(
			links__a_round_wakes_only_the_drain_that_reads_next),
		cmocka_unit_test(
			links__the_reader_spins_only_where_rounds_are_short),
		cmocka_unit_test(links__started_drains_of_two_sets_overlap),
		cmocka_unit_test(links__shared_sessions_read_each_others_replies),
		cmocka_unit_test(links__shared_session_fails_every_link_on_an_error),
		cmocka_unit_test(links__threads_each_drain_holds_its_data),
		cmocka_unit_test(links__threads_k2_of_3_hold_every_write_at_stop),
		cmocka_unit_test(replica__three_targets_k2_one_gone_and_back),
		cmocka_unit_test(replica__below_k_the_persist_fails),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
