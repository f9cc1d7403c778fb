/* SPDX-License-Identifier: BSD-3-Clause */
/* client_query.c -- unit tests of LIST and STATUS paging against a fake target */
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

/* a fake target with a session to it */
struct env {
	struct fake_target *ft;
	struct rpmemctl_session *s;
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

/* env_stop -- close everything; the target has seen all of it after */
static void env_stop(struct env *e)
{
	rpmemctl_session_close(&e->s);
	assert_int_equal(fake_target_wait_idle(e->ft), 0);
	fake_target_stop(&e->ft);
}

/* assert_pools -- l holds pools p0..p<n-1> of r1, in order */
static void assert_pools(const struct rpmemctl_list *l, unsigned n)
{
	char name[16];

	assert_int_equal(rpmemctl_list_pool_count(l), n);
	for (unsigned i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "p%u", i);
		assert_string_equal(rpmemctl_list_pool_name(l, i), name);
		assert_string_equal(rpmemctl_list_pool_region(l, i), "r1");
	}
}

static void rpmemctl_list_get__joins_every_page_in_order(void **state)
{
	(void)state;
	struct fake_target_opts o = { .caps = RPMEM_CAP_PAGE, .paged = 25,
				      .per_page = 4 };
	struct rpmemctl_list *l = NULL;
	struct env e;

	env_start(&e, &o);
	assert_int_equal(rpmemctl_list_get(e.s, NULL, &l), 0);
	/* 7 pages asked for, each one's region and pools joined */
	assert_int_equal(fake_target_count(e.ft, RPMEM_MSG_LIST), 7);
	assert_pools(l, 25);
	assert_int_equal(rpmemctl_list_region_count(l), 7);
	assert_string_equal(rpmemctl_list_region_name(l, 0), "g0");
	assert_string_equal(rpmemctl_list_region_name(l, 6), "g24");
	rpmemctl_list_free(&l);
	env_stop(&e);
}

static void rpmemctl_list_get__one_request_to_a_target_without_pages(
	void **state)
{
	(void)state;
	struct fake_target_opts o = { .paged = 25, .per_page = 4 };
	struct rpmemctl_list *l = NULL;
	struct env e;

	env_start(&e, &o);
	assert_int_equal(rpmemctl_list_get(e.s, NULL, &l), 0);
	assert_int_equal(fake_target_count(e.ft, RPMEM_MSG_LIST), 1);
	assert_pools(l, 25);
	rpmemctl_list_free(&l);
	env_stop(&e);
}

static void rpmemctl_list_get__a_page_that_does_not_move_on_is_eproto(
	void **state)
{
	(void)state;
	struct fake_target_opts o = { .caps = RPMEM_CAP_PAGE, .paged = 25,
				      .per_page = 4, .stuck_page = 3 };
	struct rpmemctl_list *l = NULL;
	struct env e;

	env_start(&e, &o);
	assert_int_equal(rpmemctl_list_get(e.s, NULL, &l), -EPROTO);
	assert_null(l);
	/* asked for pages 1 to 3, not once more for the stuck cursor */
	assert_int_equal(fake_target_count(e.ft, RPMEM_MSG_LIST), 3);
	assert_non_null(strstr(rpmemctl_session_errmsg(e.s),
			       "sent a LIST_REPLY page that does not move on "
			       "(cursor '8')"));
	env_stop(&e);
}

static void rpmemctl_list_get__a_failed_page_fails_the_whole(void **state)
{
	(void)state;
	struct fake_target_opts o = { .caps = RPMEM_CAP_PAGE, .paged = 25,
				      .per_page = 4 };
	struct rpmemctl_list *l = NULL;
	struct env e;

	env_start(&e, &o);
	fake_target_script(e.ft, RPMEM_MSG_LIST, 2, FAKE_MALFORMED, 0);
	assert_int_equal(rpmemctl_list_get(e.s, NULL, &l), -EPROTO);
	assert_null(l);
	assert_int_equal(fake_target_count(e.ft, RPMEM_MSG_LIST), 2);
	env_stop(&e);
}

static void rpmemctl_status_get__joins_sessions_namespaces_from_the_last(
	void **state)
{
	(void)state;
	struct fake_target_opts o = { .caps = RPMEM_CAP_PAGE, .paged = 10,
				      .per_page = 3 };
	struct rpmemctl_status *st = NULL;
	struct env e;

	env_start(&e, &o);
	assert_int_equal(rpmemctl_status_get(e.s, &st), 0);
	assert_int_equal(fake_target_count(e.ft, RPMEM_MSG_STATUS), 4);
	assert_int_equal(rpmemctl_status_session_count(st), 10);
	for (unsigned i = 0; i < 10; i++)
		assert_int_equal(rpmemctl_status_session_id(st, i), i);
	assert_string_equal(rpmemctl_status_session_peer(st, 9), "peer9");
	assert_int_equal(rpmemctl_status_namespace_count(st), 1);
	assert_string_equal(rpmemctl_status_namespace_name(st, 0), "ns0");
	assert_int_equal(rpmemctl_status_region_namespace(st, "r1"), 0);
	/* the daemon's figures as of the last page */
	assert_int_equal(rpmemctl_status_uptime(st), 4);
	rpmemctl_status_free(&st);
	env_stop(&e);
}

static void rpmemctl_status_get__one_request_to_a_target_without_pages(
	void **state)
{
	(void)state;
	struct fake_target_opts o = { .paged = 10, .per_page = 3 };
	struct rpmemctl_status *st = NULL;
	struct env e;

	env_start(&e, &o);
	assert_int_equal(rpmemctl_status_get(e.s, &st), 0);
	assert_int_equal(fake_target_count(e.ft, RPMEM_MSG_STATUS), 1);
	assert_int_equal(rpmemctl_status_session_count(st), 10);
	assert_int_equal(rpmemctl_status_namespace_count(st), 1);
	rpmemctl_status_free(&st);
	env_stop(&e);
}

static void rpmemctl_status_get__a_page_that_does_not_move_on_is_eproto(
	void **state)
{
	(void)state;
	struct fake_target_opts o = { .caps = RPMEM_CAP_PAGE, .paged = 10,
				      .per_page = 3, .stuck_page = 2 };
	struct rpmemctl_status *st = NULL;
	struct env e;

	env_start(&e, &o);
	assert_int_equal(rpmemctl_status_get(e.s, &st), -EPROTO);
	assert_null(st);
	assert_int_equal(fake_target_count(e.ft, RPMEM_MSG_STATUS), 2);
	assert_non_null(strstr(rpmemctl_session_errmsg(e.s),
			       "sent a STATUS_REPLY page that does not move "
			       "on (cursor '3')"));
	env_stop(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(rpmemctl_list_get__joins_every_page_in_order),
		cmocka_unit_test(
			rpmemctl_list_get__one_request_to_a_target_without_pages),
		cmocka_unit_test(
			rpmemctl_list_get__a_page_that_does_not_move_on_is_eproto),
		cmocka_unit_test(rpmemctl_list_get__a_failed_page_fails_the_whole),
		cmocka_unit_test(
			rpmemctl_status_get__joins_sessions_namespaces_from_the_last),
		cmocka_unit_test(
			rpmemctl_status_get__one_request_to_a_target_without_pages),
		cmocka_unit_test(
			rpmemctl_status_get__a_page_that_does_not_move_on_is_eproto),
	};
	return cmocka_run_group_tests_name("client_query", tests, NULL, NULL);
}
