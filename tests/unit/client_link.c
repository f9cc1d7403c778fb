/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * client_link.c -- unit tests of the replication lifecycle (link.c): each
 * transition against the in-process fake target, checked on what the
 * target holds and received, including a target that disappears and
 * comes back
 */
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

#include "fake_target.h"
#include "client_replicate.h"
#include "librpmemctl.h"

#define KIB 1024u
#define MIB (1u << 20)
#define SIZE MIB
#define HOUR_MS (3600L * 1000)

/* the transitions a link reported, in order */
struct trail {
	unsigned n;
	enum rpmemctl_link_state from[32];
	enum rpmemctl_link_state to[32];
};

/* a fake target, a local copy of its pool and a link between them */
struct env {
	struct fake_target *ft;
	uint8_t *data;
	struct rpmemctl_link *l;
	struct trail trail;
};

/* on_state -- the notify hook: remember the transition */
static void on_state(void *arg, struct rpmemctl_link *l,
		     enum rpmemctl_link_state from, enum rpmemctl_link_state to)
{
	struct trail *t = arg;
	assert_non_null(l);
	assert_int_not_equal(from, to);
	assert_true(t->n < 32);
	t->from[t->n] = from;
	t->to[t->n] = to;
	t->n++;
}

/* saw -- the trail from index i on is exactly the n states given */
static void saw(const struct env *e, unsigned i, unsigned n, ...)
{
	va_list ap;
	va_start(ap, n);
	assert_int_equal(e->trail.n, i + n);
	for (unsigned k = 0; k < n; k++)
		assert_int_equal(e->trail.to[i + k], va_arg(ap, int));
	va_end(ap);
}

/*
 * env_start -- a target holding an empty 1 MiB pool r1/p1 (consistent,
 * generation 1), local data with a pattern, a DOWN link to the target
 * under policy (retry after retry_ms)
 */
static void env_start(struct env *e, enum rpmemctl_link_policy policy,
		      long retry_ms)
{
	char target[128];
	memset(e, 0, sizeof(*e));
	/* no user configuration may change the credentials */
	setenv("HOME", "/nonexistent-rpmem-unit", 1);
	unsetenv("XDG_CONFIG_HOME");
	struct fake_target_opts o = { .size = SIZE,
				      .state = RPMEM_POOL_CONSISTENT,
				      .generation = 1 };
	assert_int_equal(fake_target_start(&o, &e->ft), 0);
	e->data = malloc(SIZE);
	assert_non_null(e->data);
	fake_pattern(e->data, SIZE, 7);
	snprintf(target, sizeof(target), "127.0.0.1:%s/r1/p1",
		 fake_target_port(e->ft));
	assert_int_equal(rpmemctl_link_new(target, RPMEMCTL_TRANSPORT_TCP,
					   &e->l), 0);
	assert_int_equal(rpmemctl_link_get_state(e->l), RPMEMCTL_LINK_DOWN);
	assert_int_equal(rpmemctl_link_set_data(e->l, e->data, SIZE), 0);
	assert_int_equal(rpmemctl_link_set_source(e->l, "h:/p", "h:/p (live)"),
			 0);
	assert_int_equal(rpmemctl_link_set_policy(e->l, policy, retry_ms), 0);
	assert_int_equal(rpmemctl_link_set_notify(e->l, on_state, &e->trail),
			 0);
}

/* env_stop -- delete the link; the target saw the connection end */
static void env_stop(struct env *e)
{
	rpmemctl_link_delete(&e->l);
	assert_null(e->l);
	fake_target_set_down(e->ft, 0);
	assert_int_equal(fake_target_wait_idle(e->ft), 0);
	fake_target_stop(&e->ft);
	free(e->data);
}

/* target_state -- the pool's state on the target; *gen its generation */
static uint8_t target_state(struct env *e, uint64_t *gen)
{
	return fake_target_state(e->ft, gen);
}

/* temp_log_ext -- temp_log with extents of ext bytes (0: the default) */
static struct rpmemctl_dirtylog *temp_log_ext(char *path, uint32_t ext)
{
	struct rpmemctl_dirtylog *log = NULL;
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	unlink(path);
	assert_int_equal(rpmemctl_dirtylog_open(path, SIZE, ext, &log), 0);
	return log;
}

/* temp_log -- a new dirty log for SIZE bytes at a fresh name in path */
static struct rpmemctl_dirtylog *temp_log(char *path)
{
	return temp_log_ext(path, 0);
}

/* synced -- push from DOWN: OPEN, SYNCED; the target holds the data */
static void synced(struct env *e)
{
	assert_int_equal(rpmemctl_link_push(e->l, NULL, NULL), 0);
	assert_int_equal(rpmemctl_link_get_state(e->l), RPMEMCTL_LINK_SYNCED);
	assert_memory_equal(fake_target_pool(e->ft), e->data, SIZE);
}

static void link__connect_opens_the_pool_and_push_leaves_it_consistent(
	void **state)
{
	(void)state;
	struct env e;
	uint64_t gen;
	env_start(&e, RPMEMCTL_LINK_FAIL_STOP, -1);
	assert_int_equal(rpmemctl_link_connect(e.l), 0);
	saw(&e, 0, 1, RPMEMCTL_LINK_OPEN);
	assert_non_null(rpmemctl_link_get_pool(e.l));
	assert_int_equal(fake_target_count(e.ft, RPMEM_MSG_OPEN), 1);
	assert_null(rpmemctl_link_get_result(e.l));
	synced(&e);
	saw(&e, 0, 2, RPMEMCTL_LINK_OPEN, RPMEMCTL_LINK_SYNCED);
	assert_int_equal(target_state(&e, &gen), RPMEM_POOL_CONSISTENT);
	assert_int_equal(gen, 2);
	assert_string_equal(fake_target_source(e.ft), "h:/p");
	const struct rpmemctl_sync_result *res = rpmemctl_link_get_result(e.l);
	assert_non_null(res);
	assert_int_equal(rpmemctl_sync_result_get_generation(res), 2);
	assert_int_equal(rpmemctl_sync_result_get_data_bytes(res), SIZE);
	env_stop(&e);
}

static void link__first_write_goes_live_and_drain_flushes_it(void **state)
{
	(void)state;
	struct env e;
	uint64_t gen;
	env_start(&e, RPMEMCTL_LINK_FAIL_STOP, -1);
	synced(&e);
	unsigned sets = fake_target_count(e.ft, RPMEM_MSG_SET_STATE);
	unsigned flushes = fake_target_count(e.ft, RPMEM_MSG_FLUSH);
	memset(e.data + 8 * KIB, 0xa5, 100);
	assert_int_equal(rpmemctl_link_write(e.l, 8 * KIB, 100), 0);
	assert_int_equal(rpmemctl_link_get_state(e.l), RPMEMCTL_LINK_LIVE);
	assert_int_equal(rpmemctl_link_drain(e.l), 0);
	/* one SET_STATE syncing (live), then the write and one FLUSH */
	assert_int_equal(fake_target_count(e.ft, RPMEM_MSG_SET_STATE),
			 sets + 1);
	assert_int_equal(target_state(&e, &gen), RPMEM_POOL_SYNCING);
	assert_int_equal(gen, 2);
	assert_string_equal(fake_target_source(e.ft), "h:/p (live)");
	assert_memory_equal(fake_target_pool(e.ft), e.data, SIZE);
	assert_int_equal(fake_target_count(e.ft, RPMEM_MSG_FLUSH),
			 flushes + 1);
	/* a second write stays live: no new SET_STATE */
	memset(e.data + 64 * KIB, 0x5a, 10);
	assert_int_equal(rpmemctl_link_write(e.l, 64 * KIB, 10), 0);
	assert_int_equal(rpmemctl_link_drain(e.l), 0);
	assert_int_equal(fake_target_count(e.ft, RPMEM_MSG_SET_STATE),
			 sets + 1);
	assert_memory_equal(fake_target_pool(e.ft), e.data, SIZE);
	saw(&e, 0, 3, RPMEMCTL_LINK_OPEN, RPMEMCTL_LINK_SYNCED,
	    RPMEMCTL_LINK_LIVE);
	env_stop(&e);
}

static void link__stop_leaves_a_live_pool_byte_identical_and_goes_down(
	void **state)
{
	(void)state;
	struct env e;
	uint64_t gen;
	char lp[] = "/tmp/rpmem-link-XXXXXX";
	struct rpmemctl_dirtylog *log = temp_log(lp);
	env_start(&e, RPMEMCTL_LINK_FAIL_STOP, -1);
	assert_int_equal(rpmemctl_link_set_dirty_log(e.l, log), 0);
	synced(&e);
	/* most of a marked range is never written through the link */
	assert_int_equal(rpmemctl_link_mark(e.l, 300 * KIB, 4 * KIB), 0);
	memset(e.data + 300 * KIB, 0x11, 4 * KIB);
	assert_int_equal(rpmemctl_link_write(e.l, 300 * KIB, 1), 0);
	/* and a store that was never flushed, so never marked */
	memset(e.data + 700 * KIB, 0x22, 8);
	assert_int_equal(rpmemctl_link_stop(e.l), 0);
	assert_int_equal(rpmemctl_link_get_state(e.l), RPMEMCTL_LINK_DOWN);
	assert_int_equal(target_state(&e, &gen), RPMEM_POOL_CONSISTENT);
	assert_int_equal(gen, 3);
	assert_string_equal(fake_target_source(e.ft), "h:/p");
	assert_memory_equal(fake_target_pool(e.ft), e.data, SIZE);
	/* the stop's push compared every block, not only the marked */
	const struct rpmemctl_sync_result *res = rpmemctl_link_get_result(e.l);
	assert_int_equal(rpmemctl_sync_result_get_dirty_only(res), 0);
	assert_int_equal(rpmemctl_sync_result_get_blocks_compared(res),
			 rpmemctl_sync_result_get_blocks_total(res));
	assert_null(rpmemctl_link_get_pool(e.l));
	saw(&e, 0, 5, RPMEMCTL_LINK_OPEN, RPMEMCTL_LINK_SYNCED,
	    RPMEMCTL_LINK_LIVE, RPMEMCTL_LINK_SYNCED, RPMEMCTL_LINK_DOWN);
	env_stop(&e);
	rpmemctl_dirtylog_close(&log);
	unlink(lp);
}

static void link__a_push_of_a_live_link_trusts_its_own_dirty_log(
	void **state)
{
	(void)state;
	struct env e;
	char lp[] = "/tmp/rpmem-link-XXXXXX";
	struct rpmemctl_dirtylog *log = temp_log(lp);
	env_start(&e, RPMEMCTL_LINK_FAIL_STOP, -1);
	assert_int_equal(rpmemctl_link_set_dirty_log(e.l, log), 0);
	synced(&e);
	assert_int_equal(rpmemctl_link_mark(e.l, 0, 4 * KIB), 0);
	memset(e.data, 0x33, 4 * KIB);
	assert_int_equal(rpmemctl_link_write(e.l, 0, 16), 0);
	assert_int_equal(rpmemctl_link_get_state(e.l), RPMEMCTL_LINK_LIVE);
	/* the pool is syncing (live), by this link alone: no LIST needed */
	assert_int_equal(rpmemctl_link_push(e.l, NULL, NULL), 0);
	const struct rpmemctl_sync_result *res = rpmemctl_link_get_result(e.l);
	assert_string_equal(rpmemctl_sync_result_get_dirty_fallback(res), "");
	assert_int_equal(rpmemctl_sync_result_get_dirty_only(res), 1);
	assert_memory_equal(fake_target_pool(e.ft), e.data, SIZE);
	assert_int_equal(fake_target_count(e.ft, RPMEM_MSG_LIST), 0);
	env_stop(&e);
	rpmemctl_dirtylog_close(&log);
	unlink(lp);
}

static void link__a_dirty_log_push_into_a_live_pool_flushes_only_its_ranges(
	void **state)
{
	(void)state;
	struct env e;
	char lp[] = "/tmp/rpmem-link-XXXXXX";
	struct rpmemctl_dirtylog *log = temp_log_ext(lp, 64 * KIB);
	env_start(&e, RPMEMCTL_LINK_FAIL_STOP, -1);
	assert_int_equal(rpmemctl_link_set_dirty_log(e.l, log), 0);
	synced(&e);
	assert_int_equal(rpmemctl_link_mark(e.l, 512 * KIB, 4 * KIB), 0);
	memset(e.data + 512 * KIB, 0x44, 4 * KIB);
	assert_int_equal(rpmemctl_link_write(e.l, 512 * KIB, 16), 0);
	uint64_t before = fake_target_flushed(e.ft);
	/* the pool is syncing (live): its log covers every write since */
	assert_int_equal(rpmemctl_link_push(e.l, NULL, NULL), 0);
	const struct rpmemctl_sync_result *res = rpmemctl_link_get_result(e.l);
	assert_int_equal(rpmemctl_sync_result_get_dirty_only(res), 1);
	assert_memory_equal(fake_target_pool(e.ft), e.data, SIZE);
	/* the marked 64 KiB extent, not the whole pool */
	assert_int_equal(fake_target_flushed(e.ft) - before, 64 * KIB);
	env_stop(&e);
	rpmemctl_dirtylog_close(&log);
	unlink(lp);
}

static void link__stop_of_a_synced_link_sends_nothing(void **state)
{
	(void)state;
	struct env e;
	env_start(&e, RPMEMCTL_LINK_FAIL_STOP, -1);
	synced(&e);
	unsigned n = fake_target_count(e.ft, 0);
	assert_int_equal(rpmemctl_link_stop(e.l), 0);
	/* only the pool's CLOSE and the session's BYE */
	assert_int_equal(fake_target_wait_idle(e.ft), 0);
	assert_int_equal(fake_target_count(e.ft, 0), n + 2);
	env_stop(&e);
}

static void link__fail_stop_fails_for_good_and_leaves_the_pool_syncing(
	void **state)
{
	(void)state;
	struct env e;
	uint64_t gen;
	env_start(&e, RPMEMCTL_LINK_FAIL_STOP, -1);
	synced(&e);
	fake_target_script(e.ft, RPMEM_MSG_FLUSH,
			   fake_target_count(e.ft, RPMEM_MSG_FLUSH) + 1,
			   FAKE_HANG_UP, 0);
	assert_int_equal(rpmemctl_link_write(e.l, 0, 4 * KIB), 0);
	int ret = rpmemctl_link_drain(e.l);
	assert_true(ret < 0);
	assert_int_equal(rpmemctl_link_get_state(e.l), RPMEMCTL_LINK_FAILED);
	assert_string_not_equal(rpmemctl_link_errmsg(e.l), "");
	assert_int_equal(fake_target_wait_idle(e.ft), 0);
	unsigned conns = fake_target_connections(e.ft);
	/* nothing after: not even a reconnect */
	assert_int_equal(rpmemctl_link_write(e.l, 0, 4 * KIB), ret);
	assert_int_equal(rpmemctl_link_push(e.l, NULL, NULL), ret);
	assert_int_equal(rpmemctl_link_connect(e.l), ret);
	assert_int_equal(rpmemctl_link_stop(e.l), ret);
	assert_string_equal(rpmemctl_strerror(ret), rpmemctl_link_errmsg(e.l));
	assert_int_equal(fake_target_connections(e.ft), conns);
	assert_int_equal(target_state(&e, &gen), RPMEM_POOL_SYNCING);
	saw(&e, 0, 4, RPMEMCTL_LINK_OPEN, RPMEMCTL_LINK_SYNCED,
	    RPMEMCTL_LINK_LIVE, RPMEMCTL_LINK_FAILED);
	env_stop(&e);
}

static void link__degraded_goes_on_alone_until_the_retry_is_due(
	void **state)
{
	(void)state;
	struct env e;
	env_start(&e, RPMEMCTL_LINK_DEGRADE, HOUR_MS);
	synced(&e);
	assert_int_equal(rpmemctl_link_write(e.l, 0, 4 * KIB), 0);
	fake_target_set_down(e.ft, 1);
	assert_true(rpmemctl_link_drain(e.l) < 0);
	assert_int_equal(rpmemctl_link_get_state(e.l),
			 RPMEMCTL_LINK_DEGRADED);
	uint64_t ns = rpmemctl_link_get_retry_ns(e.l);
	assert_true(ns > 0 && ns <= (uint64_t)HOUR_MS * 1000000u);
	/* writes and drains succeed locally; nothing is tried */
	unsigned conns = fake_target_connections(e.ft);
	unsigned refused = fake_target_refused(e.ft);
	assert_int_equal(rpmemctl_link_write(e.l, 0, 4 * KIB), 0);
	assert_int_equal(rpmemctl_link_drain(e.l), 0);
	assert_int_equal(fake_target_connections(e.ft), conns);
	assert_int_equal(fake_target_refused(e.ft), refused);
	assert_int_equal(rpmemctl_link_get_state(e.l),
			 RPMEMCTL_LINK_DEGRADED);
	/* the stop of a degraded link leaves the pool for the next start */
	assert_int_equal(rpmemctl_link_stop(e.l), 0);
	assert_int_equal(rpmemctl_link_get_state(e.l),
			 RPMEMCTL_LINK_DEGRADED);
	uint64_t gen;
	assert_int_equal(target_state(&e, &gen), RPMEM_POOL_SYNCING);
	env_stop(&e);
}

static void link__a_target_that_disappears_and_returns_is_resynced(
	void **state)
{
	(void)state;
	struct env e;
	uint64_t gen;
	env_start(&e, RPMEMCTL_LINK_DEGRADE, 0);
	synced(&e);
	memset(e.data, 1, 4 * KIB);
	assert_int_equal(rpmemctl_link_write(e.l, 0, 4 * KIB), 0);
	assert_int_equal(rpmemctl_link_drain(e.l), 0);
	/* gone: the next drain fails; every write tries again, in vain */
	memset(e.data + 512 * KIB, 2, 4 * KIB);
	assert_int_equal(rpmemctl_link_write(e.l, 512 * KIB, 4 * KIB), 0);
	fake_target_set_down(e.ft, 1);
	assert_true(rpmemctl_link_drain(e.l) < 0);
	assert_int_equal(rpmemctl_link_get_state(e.l),
			 RPMEMCTL_LINK_DEGRADED);
	unsigned before = fake_target_refused(e.ft);
	memset(e.data + 900 * KIB, 3, 4 * KIB);
	assert_true(rpmemctl_link_write(e.l, 900 * KIB, 4 * KIB) < 0);
	assert_int_equal(fake_target_refused(e.ft), before + 1);
	assert_int_equal(rpmemctl_link_get_state(e.l),
			 RPMEMCTL_LINK_DEGRADED);
	assert_memory_not_equal(fake_target_pool(e.ft), e.data, SIZE);
	/* back: the next write reconnects and pushes everything behind */
	fake_target_set_down(e.ft, 0);
	memset(e.data + 1000 * KIB, 4, 4 * KIB);
	assert_int_equal(rpmemctl_link_write(e.l, 1000 * KIB, 4 * KIB), 0);
	assert_int_equal(rpmemctl_link_get_state(e.l), RPMEMCTL_LINK_SYNCED);
	assert_memory_equal(fake_target_pool(e.ft), e.data, SIZE);
	assert_int_equal(target_state(&e, &gen), RPMEM_POOL_CONSISTENT);
	assert_int_equal(gen, 3);
	/* and it goes live again at the next write */
	memset(e.data + 4 * KIB, 5, 16);
	assert_int_equal(rpmemctl_link_write(e.l, 4 * KIB, 16), 0);
	assert_int_equal(rpmemctl_link_drain(e.l), 0);
	assert_memory_equal(fake_target_pool(e.ft), e.data, SIZE);
	saw(&e, 0, 7, RPMEMCTL_LINK_OPEN, RPMEMCTL_LINK_SYNCED,
	    RPMEMCTL_LINK_LIVE, RPMEMCTL_LINK_DEGRADED, RPMEMCTL_LINK_OPEN,
	    RPMEMCTL_LINK_SYNCED, RPMEMCTL_LINK_LIVE);
	env_stop(&e);
}

/* touch_once -- a progress callback that changes the local file once */
static void touch_once(uint64_t done, uint64_t total, void *arg)
{
	int *fd = arg;
	(void)done;
	(void)total;
	if (*fd < 0)
		return;
	struct timespec ts[2] = { { .tv_nsec = UTIME_OMIT },
				  { .tv_sec = 1000000000, .tv_nsec = 1 } };
	assert_int_equal(futimens(*fd, ts), 0);
	*fd = -1;
}

static void link__a_push_that_saw_the_data_change_stays_open(void **state)
{
	(void)state;
	struct env e;
	uint64_t gen;
	char path[] = "/tmp/rpmem-link-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	unlink(path);
	assert_int_equal(ftruncate(fd, SIZE), 0);
	int touch = fd;
	struct rpmemctl_sync_cfg *cfg = NULL;
	assert_int_equal(rpmemctl_sync_cfg_new(&cfg), 0);
	assert_int_equal(rpmemctl_sync_cfg_set_local_fd(cfg, fd), 0);
	assert_int_equal(rpmemctl_sync_cfg_set_progress(cfg, touch_once,
							&touch), 0);
	env_start(&e, RPMEMCTL_LINK_DEGRADE, -1);
	/* the sync may read the local copy through the file */
	assert_int_equal(pwrite(fd, e.data, SIZE, 0), (ssize_t)SIZE);
	assert_int_equal(rpmemctl_link_push(e.l, cfg, NULL), -ESTALE);
	assert_int_equal(rpmemctl_link_get_state(e.l), RPMEMCTL_LINK_OPEN);
	assert_non_null(strstr(rpmemctl_link_errmsg(e.l), "changed"));
	/* no new generation: the pool does not claim the data */
	(void)target_state(&e, &gen);
	assert_int_equal(gen, 1);
	/* the next push goes on over the same connection */
	unsigned conns = fake_target_connections(e.ft);
	assert_int_equal(rpmemctl_link_push(e.l, cfg, NULL), 0);
	assert_int_equal(fake_target_connections(e.ft), conns);
	assert_int_equal(rpmemctl_link_get_state(e.l), RPMEMCTL_LINK_SYNCED);
	assert_memory_equal(fake_target_pool(e.ft), e.data, SIZE);
	assert_int_equal(target_state(&e, &gen), RPMEM_POOL_CONSISTENT);
	saw(&e, 0, 2, RPMEMCTL_LINK_OPEN, RPMEMCTL_LINK_SYNCED);
	env_stop(&e);
	rpmemctl_sync_cfg_delete(&cfg);
	close(fd);
}

/* a custom open hook's record */
struct hook {
	const char *port;
	unsigned calls;
	int fail; /* -errno to return instead of opening */
};

static int open_hook(void *arg, struct rpmemctl_session **sess,
		     struct rpmemctl_pool **pool)
{
	struct hook *h = arg;
	h->calls++;
	if (h->fail)
		return h->fail;
	int ret = rpmemctl_session_open("127.0.0.1", h->port,
					RPMEMCTL_TRANSPORT_TCP, sess);
	if (!ret)
		ret = rpmemctl_pool_open(*sess, "r1", "p1", RPMEMCTL_OPEN_RDWR,
					 pool);
	return ret;
}

static void link__connects_through_its_open_hook(void **state)
{
	(void)state;
	struct env e;
	env_start(&e, RPMEMCTL_LINK_DEGRADE, -1);
	rpmemctl_link_delete(&e.l);
	struct rpmemctl_link *l = NULL;
	/* no target and no hook: it says what is missing */
	assert_int_equal(rpmemctl_link_new(NULL, RPMEMCTL_TRANSPORT_TCP, &l),
			 0);
	assert_int_equal(rpmemctl_link_set_data(l, e.data, SIZE), 0);
	assert_int_equal(rpmemctl_link_set_policy(l, RPMEMCTL_LINK_DEGRADE,
						  -1), 0);
	assert_int_equal(rpmemctl_link_connect(l), -EINVAL);
	assert_non_null(strstr(rpmemctl_link_errmsg(l), "open hook"));
	struct hook h = { .port = fake_target_port(e.ft), .fail = -EACCES };
	assert_int_equal(rpmemctl_link_set_open(l, open_hook, &h), 0);
	assert_int_equal(rpmemctl_link_connect(l), -EACCES);
	assert_int_equal(rpmemctl_link_get_state(l), RPMEMCTL_LINK_DEGRADED);
	/* never retried by itself; an explicit push connects */
	assert_int_equal(rpmemctl_link_get_retry_ns(l), UINT64_MAX);
	h.fail = 0;
	assert_int_equal(rpmemctl_link_push(l, NULL, NULL), 0);
	assert_int_equal(h.calls, 2);
	assert_int_equal(rpmemctl_link_get_state(l), RPMEMCTL_LINK_SYNCED);
	assert_memory_equal(fake_target_pool(e.ft), e.data, SIZE);
	rpmemctl_link_delete(&l);
	env_stop(&e);
}

static void link__bad_arguments_change_nothing(void **state)
{
	(void)state;
	struct env e;
	struct rpmemctl_link *l = NULL;
	assert_int_equal(rpmemctl_link_new("nohost", RPMEMCTL_TRANSPORT_TCP,
					   &l), -EINVAL);
	assert_null(l);
	env_start(&e, RPMEMCTL_LINK_FAIL_STOP, -1);
	synced(&e);
	unsigned n = fake_target_count(e.ft, 0);
	assert_int_equal(rpmemctl_link_write(e.l, SIZE - 10, 11), -EINVAL);
	assert_int_equal(rpmemctl_link_write(e.l, UINT64_MAX, 2), -EINVAL);
	assert_non_null(strstr(rpmemctl_link_errmsg(e.l), "outside"));
	assert_int_equal(rpmemctl_link_set_data(e.l, e.data, SIZE / 2),
			 -EINVAL);
	assert_int_equal(rpmemctl_link_set_policy(e.l, 7, 0), -EINVAL);
	assert_int_equal(rpmemctl_link_get_state(e.l), RPMEMCTL_LINK_SYNCED);
	assert_int_equal(fake_target_count(e.ft, 0), n);
	assert_string_equal(rpmemctl_link_state_str(RPMEMCTL_LINK_DEGRADED),
			    "degraded");
	assert_string_equal(rpmemctl_link_state_str(99), "unknown");
	env_stop(&e);
}

/*
 * link__name_reads_back_as_a_target -- a link's name (in messages and in
 * the status file rpmemctl replicas parses) is the target as written: an
 * IPv6 host in brackets, so its port is not taken for part of the host
 */
static void link__name_reads_back_as_a_target(void **state)
{
	(void)state;
	struct rpmemctl_link *l = NULL;
	assert_int_equal(rpmemctl_link_new("[::1]:7000/r1/p",
					   RPMEMCTL_TRANSPORT_TCP, &l), 0);
	assert_string_equal(client_link_name(l), "[::1]:7000/r1/p");
	rpmemctl_link_delete(&l);
	assert_int_equal(rpmemctl_link_new("127.0.0.1:7000/r1/p",
					   RPMEMCTL_TRANSPORT_TCP, &l), 0);
	assert_string_equal(client_link_name(l), "127.0.0.1:7000/r1/p");
	rpmemctl_link_delete(&l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(
		  link__connect_opens_the_pool_and_push_leaves_it_consistent),
		cmocka_unit_test(
			link__first_write_goes_live_and_drain_flushes_it),
		cmocka_unit_test(
		  link__stop_leaves_a_live_pool_byte_identical_and_goes_down),
		cmocka_unit_test(
		  link__a_push_of_a_live_link_trusts_its_own_dirty_log),
		cmocka_unit_test(
		  link__a_dirty_log_push_into_a_live_pool_flushes_only_its_ranges),
		cmocka_unit_test(link__stop_of_a_synced_link_sends_nothing),
		cmocka_unit_test(
		  link__fail_stop_fails_for_good_and_leaves_the_pool_syncing),
		cmocka_unit_test(
		  link__degraded_goes_on_alone_until_the_retry_is_due),
		cmocka_unit_test(
		  link__a_target_that_disappears_and_returns_is_resynced),
		cmocka_unit_test(
			link__a_push_that_saw_the_data_change_stays_open),
		cmocka_unit_test(link__connects_through_its_open_hook),
		cmocka_unit_test(link__bad_arguments_change_nothing),
		cmocka_unit_test(link__name_reads_back_as_a_target),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
