/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * client_log.c -- unit tests of the per-session log sink against the fake
 * target: a session's lines go to its configuration's sink only, those of
 * a session without one to the global sink
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>

#include <cmocka.h>

#include "fake_target.h"
#include "librpmemctl.h"
#include "proto.h" /* RPMEM_MSG_*, RPMEM_E_* */

#define HOST "127.0.0.1"
#define LINES 64

/* the lines one sink received */
struct sink {
	char line[LINES][1024];
	int prio[LINES];
	unsigned n;
};

/* keep -- a log function: the line into the struct sink arg */
static void keep(int prio, const char *msg, void *arg)
{
	struct sink *k = arg;
	if (k->n < LINES) {
		snprintf(k->line[k->n], sizeof(k->line[0]), "%s", msg);
		k->prio[k->n] = prio;
	}
	k->n++;
}

/* count -- lines of k that contain s */
static unsigned count(const struct sink *k, const char *s)
{
	unsigned c = 0;
	for (unsigned i = 0; i < k->n && i < LINES; i++)
		c += strstr(k->line[i], s) != NULL;
	return c;
}

/* at -- "HOST:PORT" of ft, as the library's lines name it */
static const char *at(struct fake_target *ft, char *buf, size_t len)
{
	snprintf(buf, len, HOST ":%s ", fake_target_port(ft));
	return buf;
}

/* open_with -- a tcp session to ft, logging to k (NULL: no own sink) */
static struct rpmemctl_session *open_with(struct fake_target *ft,
					  struct sink *k, int prio)
{
	struct rpmemctl_session_cfg *cfg = NULL;
	struct rpmemctl_session *s = NULL;

	assert_int_equal(rpmemctl_session_cfg_new(&cfg), 0);
	if (k)
		assert_int_equal(rpmemctl_session_cfg_set_log(cfg, keep, k,
							      prio),
				 0);
	assert_int_equal(rpmemctl_session_open_cfg(HOST, fake_target_port(ft),
						   RPMEMCTL_TRANSPORT_TCP, cfg,
						   &s),
			 0);
	/* the session keeps its own copy of the sink */
	rpmemctl_session_cfg_delete(&cfg);
	return s;
}

/* busy_open -- open r1/p1 on s once the target said busy once */
static void busy_open(struct fake_target *ft, struct rpmemctl_session *s)
{
	struct rpmemctl_pool *p = NULL;

	fake_target_script(ft, RPMEM_MSG_OPEN,
			   fake_target_count(ft, RPMEM_MSG_OPEN) + 1,
			   FAKE_ERROR, RPMEM_E_BUSY);
	assert_int_equal(rpmemctl_pool_open_or_create(s, "r1", "p1", 0,
						      RPMEMCTL_OPEN_RDWR, &p,
						      NULL),
			 0);
	rpmemctl_pool_close(&p);
}

static struct sink global;

static int reset(void **state)
{
	(void)state;
	memset(&global, 0, sizeof(global));
	rpmemctl_log_set_fn(keep, &global);
	rpmemctl_log_set_priority(LOG_DEBUG);
	return 0;
}

static int restore(void **state)
{
	(void)state;
	rpmemctl_log_set_fn(NULL, NULL);
	rpmemctl_log_set_priority(LOG_WARNING);
	return 0;
}

static void two_sessions__each_sink_gets_only_its_session_s_lines(
	void **state)
{
	(void)state;
	static struct sink a, b;
	struct fake_target *f1 = NULL, *f2 = NULL;
	char at1[64], at2[64];

	assert_int_equal(fake_target_start(NULL, &f1), 0);
	assert_int_equal(fake_target_start(NULL, &f2), 0);
	at(f1, at1, sizeof(at1));
	at(f2, at2, sizeof(at2));
	struct rpmemctl_session *s1 = open_with(f1, &a, LOG_DEBUG);
	struct rpmemctl_session *s2 = open_with(f2, &b, LOG_DEBUG);
	busy_open(f1, s1);
	busy_open(f2, s2);

	/* each sink: its session's open and its pool's busy retry */
	assert_int_equal(count(&a, at1), 1);
	assert_int_equal(count(&a, "busy, retrying"), 1);
	assert_int_equal(count(&b, at2), 1);
	assert_int_equal(count(&b, "busy, retrying"), 1);
	/* and nothing of the other session, nor the global sink anything */
	assert_int_equal(count(&a, at2), 0);
	assert_int_equal(count(&b, at1), 0);
	assert_int_equal(a.n, 2);
	assert_int_equal(b.n, 2);
	assert_int_equal(global.n, 0);

	rpmemctl_session_close(&s1);
	rpmemctl_session_close(&s2);
	assert_int_equal(fake_target_wait_idle(f1), 0);
	assert_int_equal(fake_target_wait_idle(f2), 0);
	fake_target_stop(&f1);
	fake_target_stop(&f2);
}

static void session_without_sink__logs_to_the_global_sink(void **state)
{
	(void)state;
	static struct sink a;
	struct fake_target *f1 = NULL, *f2 = NULL;
	char at1[64], at2[64];

	assert_int_equal(fake_target_start(NULL, &f1), 0);
	assert_int_equal(fake_target_start(NULL, &f2), 0);
	at(f1, at1, sizeof(at1));
	at(f2, at2, sizeof(at2));
	struct rpmemctl_session *s1 = open_with(f1, &a, LOG_DEBUG);
	/* a configuration without a sink, and no configuration at all */
	struct rpmemctl_session *s2 = open_with(f2, NULL, 0);
	busy_open(f1, s1);
	busy_open(f2, s2);
	rpmemctl_session_close(&s2);
	assert_int_equal(fake_target_wait_idle(f2), 0);
	assert_int_equal(rpmemctl_session_open(HOST, fake_target_port(f2),
					       RPMEMCTL_TRANSPORT_TCP, &s2),
			 0);

	assert_int_equal(count(&global, at2), 2);
	assert_int_equal(count(&global, "busy, retrying"), 1);
	assert_int_equal(count(&global, at1), 0);
	assert_int_equal(global.n, 3);
	assert_int_equal(count(&a, at2), 0);
	assert_int_equal(a.n, 2);

	rpmemctl_session_close(&s1);
	rpmemctl_session_close(&s2);
	assert_int_equal(fake_target_wait_idle(f1), 0);
	assert_int_equal(fake_target_wait_idle(f2), 0);
	fake_target_stop(&f1);
	fake_target_stop(&f2);
}

static void session_sink__its_priority_holds_and_nothing_leaks_to_global(
	void **state)
{
	(void)state;
	static struct sink a;
	struct fake_target *ft = NULL;

	assert_int_equal(fake_target_start(NULL, &ft), 0);
	/* debug lines are below the sink's priority: dropped, not passed on */
	struct rpmemctl_session *s = open_with(ft, &a, LOG_INFO);
	busy_open(ft, s);
	assert_int_equal(a.n, 0);
	assert_int_equal(global.n, 0);
	rpmemctl_session_close(&s);
	assert_int_equal(fake_target_wait_idle(ft), 0);
	fake_target_stop(&ft);
}

static void rpmemctl_session_cfg_set_log__refuses_bad_arguments(void **state)
{
	(void)state;
	struct rpmemctl_session_cfg *cfg = NULL;
	struct sink k;

	assert_int_equal(rpmemctl_session_cfg_set_log(NULL, keep, &k,
						      LOG_DEBUG),
			 -EINVAL);
	assert_int_equal(rpmemctl_session_cfg_new(&cfg), 0);
	assert_int_equal(rpmemctl_session_cfg_set_log(cfg, keep, &k, -1),
			 -EINVAL);
	assert_int_equal(rpmemctl_session_cfg_set_log(cfg, keep, &k,
						      LOG_DEBUG + 1),
			 -EINVAL);
	/* NULL: back to the global sink, whatever the priority */
	assert_int_equal(rpmemctl_session_cfg_set_log(cfg, NULL, NULL, 99), 0);
	rpmemctl_session_cfg_delete(&cfg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
			two_sessions__each_sink_gets_only_its_session_s_lines,
			reset, restore),
		cmocka_unit_test_setup_teardown(
			session_without_sink__logs_to_the_global_sink, reset,
			restore),
		cmocka_unit_test_setup_teardown(
			session_sink__its_priority_holds_and_nothing_leaks_to_global,
			reset, restore),
		cmocka_unit_test(
			rpmemctl_session_cfg_set_log__refuses_bad_arguments),
	};
	return cmocka_run_group_tests_name("client_log", tests, NULL, NULL);
}
