/* SPDX-License-Identifier: BSD-3-Clause */
/* preload_config.c -- unit tests of librpmem_preload's environment parser */
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

#include "preload.h"

/* interpose.c's, which pl_config_quorum_cfg raises around its reads */
__thread int pl_busy __attribute__((tls_model("initial-exec")));

static struct pl_config c;
static char err[PL_MSG_MAX];

/* parse -- pl_config_parse with cwd "/work" */
static int parse(const char *spec, const char *policy, const char *retry,
		 const char *transport)
{
	err[0] = '\0';
	return pl_config_parse(&c, spec, policy, retry, transport, "/work",
			       err, sizeof(err));
}

static void pl_config_parse__unset_is_nothing_to_do_fail_stop(void **state)
{
	(void)state;
	assert_int_equal(parse(NULL, NULL, NULL, NULL), 0);
	assert_int_equal(c.nfiles, 0);
	assert_int_equal(c.policy, PL_FAIL_STOP);
	assert_int_equal(c.retry_s, 10);
	assert_int_equal(c.transport, RPMEMCTL_TRANSPORT_AUTO);
}

static void pl_config_parse__files_targets_and_relative_paths(void **state)
{
	(void)state;
	assert_int_equal(parse("/p/a.obj=h1/r/a,b.obj=rpmem://h2:7000/r/b,",
			       "degraded", "never", "tcp"), 0);
	assert_int_equal(c.nfiles, 2);
	assert_string_equal(c.files[0].path, "/p/a.obj");
	assert_string_equal(c.files[0].t.host, "h1");
	assert_string_equal(c.files[0].t.pool, "a");
	assert_string_equal(c.files[1].path, "/work/b.obj");
	assert_string_equal(c.files[1].t.port, "7000");
	assert_string_equal(c.files[1].target, "rpmem://h2:7000/r/b");
	assert_true(strstr(c.files[1].live_src, ":/work/b.obj (live)"));
	assert_int_equal(c.policy, PL_DEGRADED);
	assert_int_equal(c.retry_s, -1);
	assert_int_equal(c.transport, RPMEMCTL_TRANSPORT_TCP);
}

static void pl_config_parse__a_path_may_contain_equals(void **state)
{
	(void)state;
	assert_int_equal(parse("/p/x=y.obj=h/r/p", NULL, "0", NULL), 0);
	assert_string_equal(c.files[0].path, "/p/x=y.obj");
	assert_int_equal(c.retry_s, 0);
}

static void pl_config_parse__refuses_what_it_cannot_use(void **state)
{
	(void)state;
	static const char *const bad[] = {
		"/p/a.obj",		 /* no target */
		"=h/r/p",		 /* no path */
		"/p/a.obj=",		 /* empty target */
		"/p/a.obj=h/r",		 /* no pool */
		"/p/a.obj=h/r/-p",	 /* a bad pool name */
		"/p/a=h/r/p,/p/a=h/r/q", /* a file twice */
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(parse(bad[i], NULL, NULL, NULL), -EINVAL);
		assert_true(strstr(err, "RPMEM_REPLICATE:"));
	}
	assert_int_equal(parse("/a=h/r/p", "fail", NULL, NULL), -EINVAL);
	assert_true(strstr(err, "RPMEM_REPLICATE_POLICY: 'fail'"));
	assert_int_equal(parse("/a=h/r/p", NULL, "5s", NULL), -EINVAL);
	assert_true(strstr(err, "RPMEM_REPLICATE_RETRY: '5s'"));
	assert_int_equal(parse("/a=h/r/p", NULL, NULL, "udp"), -EINVAL);
	assert_true(strstr(err, "RPMEM_REPLICATE_TRANSPORT: 'udp'"));
}

static void pl_config_parse__at_most_sixteen_files(void **state)
{
	(void)state;
	char spec[4096] = "";
	for (int i = 0; i <= PL_FILES_MAX; i++) {
		char e[64];
		snprintf(e, sizeof(e), "%s/f%d=h/r/p%d", i ? "," : "", i, i);
		strcat(spec, e);
	}
	assert_int_equal(parse(spec, NULL, NULL, NULL), -EINVAL);
	assert_true(strstr(err, "more than 16 files"));
}

static void pl_config_drain__commit_by_default_every_on_request(void **state)
{
	(void)state;
	c.drain = PL_DRAIN_EVERY;
	assert_int_equal(pl_config_drain(&c, NULL, err, sizeof(err)), 0);
	assert_int_equal(c.drain, PL_DRAIN_COMMIT);
	assert_int_equal(pl_config_drain(&c, "every", err, sizeof(err)), 0);
	assert_int_equal(c.drain, PL_DRAIN_EVERY);
	assert_int_equal(pl_config_drain(&c, "", err, sizeof(err)), 0);
	assert_int_equal(c.drain, PL_DRAIN_COMMIT);
	assert_int_equal(pl_config_drain(&c, "Commit", err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "RPMEM_REPLICATE_DRAIN: 'Commit' is neither "
			    "'commit' nor 'every'");
}

static void pl_config_spin__microseconds_or_the_default(void **state)
{
	(void)state;
	c.spin_us = 7;
	assert_int_equal(pl_config_spin(&c, NULL, err, sizeof(err)), 0);
	assert_int_equal(c.spin_us, -1);
	assert_int_equal(pl_config_spin(&c, "0", err, sizeof(err)), 0);
	assert_int_equal(c.spin_us, 0);
	assert_int_equal(pl_config_spin(&c, "10000", err, sizeof(err)), 0);
	assert_int_equal(c.spin_us, 10000);
	assert_int_equal(pl_config_spin(&c, "", err, sizeof(err)), 0);
	assert_int_equal(c.spin_us, -1);
	const char *bad[] = { "10001", "-1", "50us", "x" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(pl_config_spin(&c, bad[i], err, sizeof(err)),
				 -EINVAL);
		assert_non_null(strstr(err, "RPMEM_REPLICATE_SPIN: '"));
		assert_non_null(strstr(err, "(0 to 10000)"));
	}
}

static void pl_config_kickout__milliseconds_and_a_size_or_the_defaults(
	void **state)
{
	(void)state;
	assert_int_equal(pl_config_kickout(&c, NULL, NULL, err, sizeof(err)),
			 0);
	assert_int_equal(c.kickout_ms, -1);
	assert_int_equal(c.kickout_bytes, 0);
	assert_int_equal(pl_config_kickout(&c, "0", "16M", err, sizeof(err)),
			 0);
	assert_int_equal(c.kickout_ms, 0);
	assert_int_equal(c.kickout_bytes, 16u << 20);
	assert_int_equal(pl_config_kickout(&c, "2000", "", err, sizeof(err)),
			 0);
	assert_int_equal(c.kickout_ms, 2000);
	assert_int_equal(c.kickout_bytes, 0);
	const char *bad[] = { "3600001", "-1", "2s", "x" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(pl_config_kickout(&c, bad[i], NULL, err,
						   sizeof(err)), -EINVAL);
		assert_non_null(strstr(err, "RPMEM_REPLICATE_KICKOUT: '"));
	}
	assert_int_equal(pl_config_kickout(&c, "1", "lots", err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "RPMEM_REPLICATE_KICKOUT_BYTES: 'lots'"));
}

static void pl_config_parse__an_entry_without_a_path_adds_a_target(
	void **state)
{
	(void)state;
	assert_int_equal(parse("/p/a.obj=h1/r/a,h2:7000/r/a,rpmem://h3/s/b,"
			       "/p/b.obj=h4/r/b", NULL, NULL, NULL), 0);
	assert_int_equal(c.nfiles, 2);
	assert_int_equal(c.files[0].ntargets, 3);
	assert_string_equal(c.files[0].target, "h1/r/a");
	assert_string_equal(c.files[0].t.host, "h1");
	assert_string_equal(c.files[0].targets[0].spec, "h1/r/a");
	assert_string_equal(c.files[0].targets[1].spec, "h2:7000/r/a");
	assert_string_equal(c.files[0].targets[2].spec, "rpmem://h3/s/b");
	assert_ptr_equal(c.files[0].targets[2].f, &c.files[0]);
	assert_int_equal(c.files[0].targets[2].i, 2);
	assert_int_equal(c.files[1].ntargets, 1);
	assert_string_equal(c.files[1].targets[0].spec, "h4/r/b");
	/* a quorum of 1 to the fewest targets of a file */
	assert_int_equal(pl_config_quorum(&c, NULL, err, sizeof(err)), 0);
	assert_int_equal(c.quorum, 0);
	assert_int_equal(pl_config_quorum(&c, "1", err, sizeof(err)), 0);
	assert_int_equal(c.quorum, 1);
	assert_int_equal(pl_config_quorum(&c, "2", err, sizeof(err)), -EINVAL);
	assert_true(strstr(err, "RPMEM_REPLICATE_QUORUM: 2 is more than the "
			   "1 target of '/p/b.obj'"));
	static const char *const badq[] = { "0", "x", "-1", "1x", "9" };
	for (size_t i = 0; i < sizeof(badq) / sizeof(badq[0]); i++) {
		assert_int_equal(pl_config_quorum(&c, badq[i], err,
						  sizeof(err)), -EINVAL);
		assert_true(strstr(err, "RPMEM_REPLICATE_QUORUM: '"));
	}
}

static void pl_config_parse__refuses_bad_extra_targets(void **state)
{
	(void)state;
	/* a target before any file, a bad one, too many */
	assert_int_equal(parse("h1/r/a,/p/a.obj=h1/r/a", NULL, NULL, NULL),
			 -EINVAL);
	assert_true(strstr(err, "'h1/r/a' is not LOCAL_PATH="));
	assert_int_equal(parse("/p/a.obj=h1/r/a,h2/r", NULL, NULL, NULL),
			 -EINVAL);
	assert_true(strstr(err, "RPMEM_REPLICATE: 'h2/r':"));
	char spec[4096] = "/p/a.obj=h/r/p0";
	for (int i = 1; i <= PL_TARGETS_MAX; i++) {
		char e[64];
		snprintf(e, sizeof(e), ",h%d/r/p", i);
		strcat(spec, e);
	}
	assert_int_equal(parse(spec, NULL, NULL, NULL), -EINVAL);
	assert_true(strstr(err, "more than 8 targets"));
}

/* conf_dir -- a fresh XDG_CONFIG_HOME; its rpmem/rpmemctl.conf holds text */
static void conf_dir(char *dir, const char *text)
{
	char path[256];
	strcpy(dir, "/tmp/rpmem-plconf-XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/rpmem", dir);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/rpmem/rpmemctl.conf", dir);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	setenv("XDG_CONFIG_HOME", dir, 1);
}

/* conf_rm -- conf_dir's directory and file */
static void conf_rm(const char *dir)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/rpmem/rpmemctl.conf", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/rpmem", dir);
	rmdir(path);
	rmdir(dir);
}

/* quorum_cfg -- pl_config_quorum_cfg after parse(spec) and the variable's
 * absence, with rpmemctl.conf holding text */
static int quorum_cfg(const char *spec, const char *text)
{
	char dir[64];
	assert_int_equal(parse(spec, NULL, NULL, NULL), 0);
	assert_int_equal(pl_config_quorum(&c, NULL, err, sizeof(err)), 0);
	conf_dir(dir, text);
	err[0] = '\0';
	int ret = pl_config_quorum_cfg(&c, err, sizeof(err));
	assert_int_equal(pl_busy, 0);
	conf_rm(dir);
	return ret;
}

static void pl_config_quorum_cfg__the_client_configuration_gives_k(
	void **state)
{
	(void)state;
	const char *two = "/p/a.obj=h1/r/a,h2/r/a,h3/r/a";
	assert_int_equal(quorum_cfg(two, "replicate = { quorum = 2; };\n"), 0);
	assert_int_equal(c.quorum, 2);
	/* not set there: every target */
	assert_int_equal(quorum_cfg(two, "targets = ();\n"), 0);
	assert_int_equal(c.quorum, 0);
	/* checked as the variable is, naming the file and the setting */
	assert_int_equal(quorum_cfg("/p/a.obj=h1/r/a,h2/r/a",
				    "replicate = { quorum = 3; };\n"), -EINVAL);
	assert_non_null(strstr(err, "/rpmem/rpmemctl.conf: replicate.quorum: "
				    "3 is more than the 2 targets of "
				    "'/p/a.obj'"));
	assert_int_equal(quorum_cfg(two, "replicate = { quorum = 0; };\n"),
			 -EINVAL);
	assert_non_null(strstr(err, "replicate.quorum: 0 is not a number"));
	assert_int_equal(quorum_cfg(two, "replicate = { quorum = \"all\"; };\n"),
			 -EINVAL);
	assert_non_null(strstr(err, ":1: replicate.quorum must be an integer"));
	assert_int_equal(quorum_cfg(two, "replicate = { quorum = ; };\n"),
			 -EINVAL);
	assert_non_null(strstr(err, "/rpmem/rpmemctl.conf:1: "));
	/* no file configured: nothing read, nothing set */
	assert_int_equal(quorum_cfg(NULL, "replicate = { quorum = 2; };\n"), 0);
	assert_int_equal(c.quorum, 0);
	unsetenv("XDG_CONFIG_HOME");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(
			pl_config_parse__unset_is_nothing_to_do_fail_stop),
		cmocka_unit_test(
			pl_config_parse__files_targets_and_relative_paths),
		cmocka_unit_test(pl_config_parse__a_path_may_contain_equals),
		cmocka_unit_test(pl_config_parse__refuses_what_it_cannot_use),
		cmocka_unit_test(pl_config_parse__at_most_sixteen_files),
		cmocka_unit_test(
		  pl_config_drain__commit_by_default_every_on_request),
		cmocka_unit_test(pl_config_spin__microseconds_or_the_default),
		cmocka_unit_test(
			pl_config_kickout__milliseconds_and_a_size_or_the_defaults),
		cmocka_unit_test(
		  pl_config_parse__an_entry_without_a_path_adds_a_target),
		cmocka_unit_test(pl_config_parse__refuses_bad_extra_targets),
		cmocka_unit_test(
			pl_config_quorum_cfg__the_client_configuration_gives_k),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
