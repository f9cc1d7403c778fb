/* SPDX-License-Identifier: BSD-3-Clause */
/* access.c -- unit tests of the access rule matching (daemon/config/access.c) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include <cmocka.h>

#include "access.h"
#include "log.h"

#define R RPMEMD_RIGHT_READ
#define W RPMEMD_RIGHT_WRITE
#define A RPMEMD_RIGHT_ADMIN
#define AP RPMEMD_RIGHT_APPEND

/* the rules of the design example, as config.c expands them */
static struct rpmemd_access_rule rules[] = {
	{ "backup1", "r1", R | W, 2 },	{ "backup1", "r2", R | W, 2 },
	{ "monitor", "*", R, 3 },	{ "ops", "", A, 4 },
	{ "backup1", "r3", R, 5 },	{ "ops", "r1", R, 6 },
	{ "nightly", "r1", R | AP, 7 },
};

static struct rpmemd_access *acc;

static int setup(void **state)
{
	(void)state;
	struct rpmemd_config cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.access = rules;
	cfg.naccess = sizeof(rules) / sizeof(rules[0]);
	return rpmemd_access_new(&cfg, &acc);
}

static int teardown(void **state)
{
	(void)state;
	rpmemd_access_delete(&acc);
	return acc != NULL;
}

/* may -- shorthand */
static int may(const char *id, enum rpmemd_right r, const char *region)
{
	return rpmemd_access_allows(acc, id, r, region);
}

static void rpmemd_access_allows__writer_on_its_regions_only(void **state)
{
	(void)state;
	assert_true(may("backup1", W, "r1"));
	assert_true(may("backup1", R, "r1"));
	assert_true(may("backup1", W, "r2"));
	assert_false(may("backup1", W, "r9"));
	assert_false(may("backup1", R, "r9"));
	assert_false(may("backup1", A, NULL));
}

static void rpmemd_access_allows__rules_of_one_identity_add_up(void **state)
{
	(void)state;
	/* r3 by a read rule, next to the write rules */
	assert_true(may("backup1", R, "r3"));
	assert_false(may("backup1", W, "r3"));
	/* ops: admin by one rule, read r1 by another */
	assert_true(may("ops", A, NULL));
	assert_true(may("ops", R, "r1"));
	assert_false(may("ops", R, "r2"));
}

static void rpmemd_access_allows__star_is_every_region(void **state)
{
	(void)state;
	assert_true(may("monitor", R, "r1"));
	assert_true(may("monitor", R, "anything-else"));
	assert_false(may("monitor", W, "r1"));
	assert_false(may("monitor", A, NULL));
	/* "*" in a rule is not a region called "*" for somebody else */
	assert_false(may("backup1", R, "*"));
}

static void rpmemd_access_allows__admin_gives_no_region_rights(void **state)
{
	(void)state;
	assert_false(may("ops", W, "r1"));
	assert_false(may("ops", R, "r9"));
	/* an admin entry's empty region matches no region */
	assert_false(may("ops", R, ""));
}

static void rpmemd_access_allows__unknown_identity_gets_nothing(void **state)
{
	(void)state;
	assert_false(may("carol", R, "r1"));
	assert_false(may("carol", R, NULL));
	assert_false(may("carol", A, NULL));
	assert_false(may("", R, "r1"));
	assert_false(may("", R, NULL));
	/* identities match whole and case-sensitively */
	assert_false(may("backup", R, "r1"));
	assert_false(may("Backup1", R, "r1"));
	assert_false(may("backup1 ", R, "r1"));
}

static void rpmemd_access_allows__null_region_asks_for_any_rule(void **state)
{
	(void)state;
	assert_true(may("monitor", R, NULL));
	assert_true(may("ops", R, NULL));
	assert_true(may("backup1", W, NULL));
}

static void rpmemd_access_allows__no_rules_allow_nothing(void **state)
{
	(void)state;
	struct rpmemd_config cfg;
	struct rpmemd_access *none = NULL;
	memset(&cfg, 0, sizeof(cfg));
	assert_int_equal(rpmemd_access_new(&cfg, &none), 0);
	assert_false(rpmemd_access_allows(none, "backup1", R, "r1"));
	assert_false(rpmemd_access_allows(none, "backup1", R, NULL));
	assert_false(rpmemd_access_allows(NULL, "backup1", R, "r1"));
	rpmemd_access_delete(&none);
	assert_null(none);
	rpmemd_access_delete(&none);
	rpmemd_access_delete(NULL);
}

static void rpmemd_access_new__copies_the_rules(void **state)
{
	(void)state;
	struct rpmemd_access_rule one = { "x", "r1", R, 1 };
	struct rpmemd_config cfg;
	struct rpmemd_access *a = NULL;
	memset(&cfg, 0, sizeof(cfg));
	cfg.access = &one;
	cfg.naccess = 1;
	assert_int_equal(rpmemd_access_new(&cfg, &a), 0);
	strcpy(one.identity, "y");
	assert_true(rpmemd_access_allows(a, "x", R, "r1"));
	assert_false(rpmemd_access_allows(a, "y", R, "r1"));
	rpmemd_access_delete(&a);
}

static void rpmemd_access_allows__write_includes_append_not_back(void **state)
{
	(void)state;
	assert_true(may("backup1", AP, "r1"));
	assert_false(may("backup1", AP, "r3"));
	assert_true(may("nightly", AP, "r1"));
	assert_true(may("nightly", R, "r1"));
	assert_false(may("nightly", W, "r1"));
	assert_false(may("nightly", AP, "r2"));
	assert_false(may("monitor", AP, "r1"));
}

static void rpmemd_right_str__names(void **state)
{
	(void)state;
	assert_string_equal(rpmemd_right_str(R), "read");
	assert_string_equal(rpmemd_right_str(W), "write");
	assert_string_equal(rpmemd_right_str(A), "admin");
	assert_string_equal(rpmemd_right_str(AP), "append");
}

/* log lines the warnings produce */
static char logged[4096];

static void capture(int prio, const char *msg, void *arg)
{
	(void)arg;
	(void)prio;
	strncat(logged, msg, sizeof(logged) - strlen(logged) - 2);
	strcat(logged, "\n");
}

static void rpmemd_access_warn__no_rules_or_unknown_regions(
	void **state)
{
	(void)state;
	struct rpmemd_region_cfg regs[1];
	struct rpmemd_config cfg;
	memset(&cfg, 0, sizeof(cfg));
	memset(regs, 0, sizeof(regs));
	strcpy(cfg.file, "rpmemd.conf");
	strcpy(regs[0].name, "r1");
	cfg.regions = regs;
	cfg.nregions = 1;
	rpmem_log_init("test", LOG_DEBUG, capture, NULL);

	logged[0] = '\0';
	cfg.tls.enabled = 1;
	assert_int_equal(rpmemd_access_warn(&cfg), 1);
	assert_non_null(strstr(logged, "nobody may do anything"));

	logged[0] = '\0';
	cfg.has_access = 1;
	cfg.access = rules;
	cfg.naccess = sizeof(rules) / sizeof(rules[0]);
	/*
	 * r2 (line 2) and r3 (line 5) are not regions; "*" and "" are fine;
	 * nightly (line 7) may only append to r1, which keeps no versions
	 */
	assert_int_equal(rpmemd_access_warn(&cfg), 3);
	assert_non_null(strstr(logged, "rpmemd.conf:2: access: identity "
				       "'backup1': there is no region 'r2'"));
	assert_non_null(strstr(logged, "rpmemd.conf:5:"));
	assert_non_null(strstr(logged, "rpmemd.conf:7: access: identity "
				       "'nightly' may only append to region "
				       "'r1', which keeps no versions"));
	/* with versions, an appender there is what it is meant for */
	logged[0] = '\0';
	regs[0].versions = 1;
	assert_int_equal(rpmemd_access_warn(&cfg), 2);
	assert_null(strstr(logged, "keeps no versions"));
	regs[0].versions = 0;

	logged[0] = '\0';
	cfg.tls.enabled = 0;
	cfg.naccess = 1;
	assert_int_equal(rpmemd_access_warn(&cfg), 1);
	assert_non_null(strstr(logged, "apply only to TLS sessions"));
	rpmem_log_init("test", LOG_WARNING, NULL, NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(
			rpmemd_access_allows__writer_on_its_regions_only),
		cmocka_unit_test(
			rpmemd_access_allows__rules_of_one_identity_add_up),
		cmocka_unit_test(rpmemd_access_allows__star_is_every_region),
		cmocka_unit_test(
			rpmemd_access_allows__admin_gives_no_region_rights),
		cmocka_unit_test(
			rpmemd_access_allows__unknown_identity_gets_nothing),
		cmocka_unit_test(
			rpmemd_access_allows__null_region_asks_for_any_rule),
		cmocka_unit_test(rpmemd_access_allows__no_rules_allow_nothing),
		cmocka_unit_test(rpmemd_access_new__copies_the_rules),
		cmocka_unit_test(
			rpmemd_access_allows__write_includes_append_not_back),
		cmocka_unit_test(rpmemd_right_str__names),
		cmocka_unit_test(
			rpmemd_access_warn__no_rules_or_unknown_regions),
	};
	return cmocka_run_group_tests_name("access", tests, setup, teardown);
}
