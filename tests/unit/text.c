/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * text.c -- unit tests of the public text helpers (lib/client/base/text.c):
 * targets, sizes, intervals, names, PSK lines, UTF-8 and log levels, as
 * an application sees them through librpmemctl.h alone
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include <cmocka.h>

#include "librpmemctl.h"
#include "tls.h" /* rpmem_psk_read, as rpmemd reads the file */

/* --- rpmemctl_target_* --------------------------------------------------- */

static void target_parse__fields_and_default_port(void **state)
{
	struct rpmemctl_target *t = NULL;

	(void)state;
	assert_int_equal(rpmemctl_target_parse("rpmem://[fe80::1]:7000/r1/p",
					       RPMEMCTL_TARGET_NEED_POOL, &t,
					       NULL, 0),
			 0);
	assert_string_equal(rpmemctl_target_get_host(t), "fe80::1");
	assert_string_equal(rpmemctl_target_get_port(t), "7000");
	assert_string_equal(rpmemctl_target_get_region(t), "r1");
	assert_string_equal(rpmemctl_target_get_pool(t), "p");
	rpmemctl_target_delete(&t);
	assert_null(t);

	assert_int_equal(rpmemctl_target_parse("host", 0, &t, NULL, 0), 0);
	assert_string_equal(rpmemctl_target_get_host(t), "host");
	assert_string_equal(rpmemctl_target_get_port(t),
			    RPMEMCTL_DEFAULT_PORT);
	assert_string_equal(rpmemctl_target_get_region(t), "");
	assert_string_equal(rpmemctl_target_get_pool(t), "");
	rpmemctl_target_delete(&t);
	rpmemctl_target_delete(&t); /* a pointer to NULL */
	rpmemctl_target_delete(NULL);
	assert_string_equal(rpmemctl_target_get_host(NULL), "");
	assert_string_equal(rpmemctl_target_get_pool(NULL), "");
}

/* a refused target leaves *out alone and says why, naming the string */
static void target_parse__refusals_name_the_target(void **state)
{
	static const struct {
		const char *s;
		unsigned flags;
	} bad[] = {
		{ "host/r1", RPMEMCTL_TARGET_NEED_POOL },
		{ "host", RPMEMCTL_TARGET_NEED_REGION },
		{ "host/r1", RPMEMCTL_TARGET_NO_PATH },
		{ "host/r1/..", 0 },
		{ "host/r1/-rf", 0 },
		{ "host:99999/r1/p", 0 },
		{ "", 0 },
	};
	struct rpmemctl_target *t = (void *)&bad; /* must stay as it is */
	char err[256];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		assert_int_equal(rpmemctl_target_parse(bad[i].s, bad[i].flags,
						       &t, err, sizeof(err)),
				 -EINVAL);
		assert_ptr_equal(t, (void *)&bad);
		assert_true(err[0] != '\0');
		if (bad[i].s[0])
			assert_non_null(strstr(err, bad[i].s));
	}
	/* no buffer, or one byte of it */
	assert_int_equal(rpmemctl_target_parse("host/r1", 2, &t, NULL, 0),
			 -EINVAL);
	err[0] = 'x';
	assert_int_equal(rpmemctl_target_parse("host/r1", 2, &t, err, 1),
			 -EINVAL);
	assert_int_equal(err[0], '\0');
	/* and the thread's message for rpmemctl_strerror */
	assert_non_null(strstr(rpmemctl_strerror(-EINVAL), "host/r1"));
}

/* --- sizes and intervals ------------------------------------------------- */

static void size_parse__suffixes_and_the_largest_size(void **state)
{
	uint64_t v = 7;

	(void)state;
	assert_int_equal(rpmemctl_size_parse("64K", &v), 0);
	assert_int_equal(v, 65536);
	assert_int_equal(rpmemctl_size_parse("1MiB", &v), 0);
	assert_int_equal(v, 1 << 20);
	assert_int_equal(rpmemctl_size_parse("9223372036854775807", &v), 0);
	assert_true(v == RPMEMCTL_SIZE_MAX);
	/* above RPMEMCTL_SIZE_MAX but within 64 bits: still out of range */
	v = 7;
	assert_int_equal(rpmemctl_size_parse("9223372036854775808", &v),
			 -ERANGE);
	assert_int_equal(rpmemctl_size_parse("8E", &v), -EINVAL);
	assert_int_equal(rpmemctl_size_parse("16777216T", &v), -ERANGE);
	assert_int_equal(rpmemctl_size_parse("99999999999999999999", &v),
			 -ERANGE);
	assert_int_equal(rpmemctl_size_parse("", &v), -EINVAL);
	assert_int_equal(rpmemctl_size_parse("-1", &v), -EINVAL);
	assert_int_equal(rpmemctl_size_parse("1X", &v), -EINVAL);
	assert_int_equal(rpmemctl_size_parse(NULL, &v), -EINVAL);
	assert_int_equal(v, 7); /* untouched on failure */
}

static void size_format__for_people(void **state)
{
	char buf[32];

	(void)state;
	assert_string_equal(rpmemctl_size_format(512, buf, sizeof(buf)),
			    "512 B");
	assert_string_equal(rpmemctl_size_format(64ull << 20, buf,
						 sizeof(buf)),
			    "64 MiB");
	assert_string_equal(rpmemctl_size_format(3ull << 29, buf,
						 sizeof(buf)),
			    "1.5 GiB");
}

static void interval_parse__units_and_range(void **state)
{
	uint64_t ns = 0;

	(void)state;
	assert_int_equal(rpmemctl_interval_parse("500ms", &ns), 0);
	assert_int_equal(ns, 500000000ull);
	assert_int_equal(rpmemctl_interval_parse("2", &ns), 0);
	assert_int_equal(ns, 2000000000ull);
	assert_int_equal(rpmemctl_interval_parse("1m", &ns), 0);
	assert_int_equal(ns, 60000000000ull);
	assert_int_equal(rpmemctl_interval_parse("25h", &ns), -ERANGE);
	assert_int_equal(rpmemctl_interval_parse("0ms", &ns), -ERANGE);
	assert_int_equal(rpmemctl_interval_parse("5x", &ns), -EINVAL);
	assert_int_equal(rpmemctl_interval_parse(NULL, &ns), -EINVAL);
}

/* --- names and identities ------------------------------------------------ */

static void name_check__the_rule(void **state)
{
	char max[RPMEMCTL_NAME_MAX + 2];

	(void)state;
	assert_int_equal(rpmemctl_name_check("pool_1.db"), 0);
	assert_int_equal(rpmemctl_name_check("-rf"), -EINVAL);
	assert_int_equal(rpmemctl_name_check(".."), -EINVAL);
	assert_int_equal(rpmemctl_name_check("a/b"), -EINVAL);
	assert_int_equal(rpmemctl_name_check(""), -EINVAL);
	assert_int_equal(rpmemctl_name_check(NULL), -EINVAL);
	memset(max, 'a', RPMEMCTL_NAME_MAX);
	max[RPMEMCTL_NAME_MAX] = '\0';
	assert_int_equal(rpmemctl_name_check(max), 0);
	strcat(max, "a");
	assert_int_equal(rpmemctl_name_check(max), -EINVAL);
}

static void psk_identity_check__the_rule(void **state)
{
	char max[RPMEMCTL_PSK_IDENTITY_MAX + 2];

	(void)state;
	assert_int_equal(rpmemctl_psk_identity_check("app@host-1.x_y"), 0);
	assert_int_equal(rpmemctl_psk_identity_check("a:b"), -EINVAL);
	assert_int_equal(rpmemctl_psk_identity_check("a b"), -EINVAL);
	assert_int_equal(rpmemctl_psk_identity_check(""), -EINVAL);
	assert_int_equal(rpmemctl_psk_identity_check(NULL), -EINVAL);
	memset(max, 'i', RPMEMCTL_PSK_IDENTITY_MAX);
	max[RPMEMCTL_PSK_IDENTITY_MAX] = '\0';
	assert_int_equal(rpmemctl_psk_identity_check(max), 0);
	strcat(max, "i");
	assert_int_equal(rpmemctl_psk_identity_check(max), -EINVAL);
}

/* --- PSK lines ----------------------------------------------------------- */

/* line is "ID:" and 2 * RPMEMCTL_PSK_LEN lowercase hex digits and "\n" */
static void check_psk_line(const char *line, const char *id)
{
	size_t n = strlen(id);

	assert_int_equal(strlen(line), n + 1 + 2 * RPMEMCTL_PSK_LEN + 1);
	assert_memory_equal(line, id, n);
	assert_int_equal(line[n], ':');
	for (size_t i = n + 1; i < n + 1 + 2 * RPMEMCTL_PSK_LEN; i++)
		assert_non_null(strchr("0123456789abcdef", line[i]));
	assert_int_equal(line[n + 1 + 2 * RPMEMCTL_PSK_LEN], '\n');
}

static void psk_generate__a_line_with_a_new_key(void **state)
{
	char a[RPMEMCTL_PSK_LINE_MAX], b[RPMEMCTL_PSK_LINE_MAX];
	char max[RPMEMCTL_PSK_IDENTITY_MAX + 1];

	(void)state;
	assert_int_equal(rpmemctl_psk_generate("app", a, sizeof(a)), 0);
	check_psk_line(a, "app");
	assert_int_equal(rpmemctl_psk_generate("app", b, sizeof(b)), 0);
	assert_string_not_equal(a, b); /* a new key each time */
	/* the longest identity fits RPMEMCTL_PSK_LINE_MAX exactly */
	memset(max, 'i', RPMEMCTL_PSK_IDENTITY_MAX);
	max[RPMEMCTL_PSK_IDENTITY_MAX] = '\0';
	assert_int_equal(rpmemctl_psk_generate(max, a, sizeof(a)), 0);
	check_psk_line(a, max);
	memset(b, 'z', sizeof(b));
	assert_int_equal(rpmemctl_psk_generate(max, b, sizeof(b) - 1),
			 -ENOSPC);
	assert_int_equal(b[0], 'z'); /* nothing written */
	assert_int_equal(rpmemctl_psk_generate("a:b", a, sizeof(a)), -EINVAL);
	assert_int_equal(rpmemctl_psk_generate(NULL, a, sizeof(a)), -EINVAL);
	assert_int_equal(rpmemctl_psk_generate("app", NULL, 0), -EINVAL);
}

/*
 * what rpmemctl_psk_generate writes, both ends read as a PSK file (the
 * reader rpmemd and the library share, lib/common/tls.c): the identity
 * and a key of RPMEMCTL_PSK_LEN bytes, the hex digits of the line
 */
static void psk_generate__line_is_a_psk_file_both_ends_read(void **state)
{
	char line[RPMEMCTL_PSK_LINE_MAX], path[] = "/tmp/text-psk-XXXXXX";
	char id[RPMEMCTL_PSK_IDENTITY_MAX + 1] = "", err[256], hex[3];
	uint8_t key[RPMEM_PSK_MAX];
	size_t len = 0;
	int fd;

	(void)state;
	assert_int_equal(rpmemctl_psk_generate("reader", line, sizeof(line)),
			 0);
	fd = mkstemp(path); /* 0600 */
	assert_true(fd >= 0);
	assert_int_equal(write(fd, line, strlen(line)), (ssize_t)strlen(line));
	close(fd);
	assert_int_equal(rpmem_psk_read(path, id, key, &len, err, sizeof(err)),
			 0);
	unlink(path);
	assert_string_equal(id, "reader");
	assert_int_equal(len, RPMEMCTL_PSK_LEN);
	for (size_t i = 0; i < len; i++) {
		snprintf(hex, sizeof(hex), "%02x", key[i]);
		assert_memory_equal(line + strlen("reader:") + 2 * i, hex, 2);
	}
}

/* --- UTF-8 and log levels ------------------------------------------------ */

static void utf8_len__well_formed_only(void **state)
{
	(void)state;
	assert_int_equal(rpmemctl_utf8_len("a"), 1);
	assert_int_equal(rpmemctl_utf8_len("\xc3\xa9"), 2); /* e acute */
	assert_int_equal(rpmemctl_utf8_len("\xe2\x82\xac"), 3);	    /* euro */
	assert_int_equal(rpmemctl_utf8_len("\xf0\x9f\x98\x80"), 4); /* emoji */
	assert_int_equal(rpmemctl_utf8_len("\x80"), 0);     /* continuation */
	assert_int_equal(rpmemctl_utf8_len("\xc0\xaf"), 0); /* overlong '/' */
	assert_int_equal(rpmemctl_utf8_len("\xed\xa0\x80"), 0); /* surrogate */
	assert_int_equal(rpmemctl_utf8_len("\xf4\x90\x80\x80"), 0); /* big */
	assert_int_equal(rpmemctl_utf8_len("\xe2\x82"), 0); /* truncated */
}

/* a target's text for a terminal: controls escaped, text kept */
static void text_escape__c0_c1_bidi(void **state)
{
	char d[64];

	(void)state;
	assert_int_equal(rpmemctl_utf8_control("\xc2\x9b"), 2);
	assert_int_equal(rpmemctl_utf8_control("\xe2\x80\xae"), 3);
	assert_int_equal(rpmemctl_utf8_control("\xc3\xa9"), 0);
	assert_int_equal(rpmemctl_utf8_control(NULL), 0);
	assert_int_equal(rpmemctl_text_escape("\x1b]0;\xc2\x9d\xe2\x80\xae"
					      "\xc3\xa9\n",
					      d, sizeof(d)),
			 29);
	assert_string_equal(d, "\\x1b]0;\\u{009d}\\u{202e}\xc3\xa9\\x0a");
	assert_int_equal(rpmemctl_text_escape("\n", NULL, 5), 4);
	assert_int_equal(rpmemctl_text_escape(NULL, d, sizeof(d)), 0);
	assert_string_equal(d, "");
}

static void log_parse_priority__names_and_numbers(void **state)
{
	(void)state;
	assert_int_equal(rpmemctl_log_parse_priority("debug"), LOG_DEBUG);
	assert_int_equal(rpmemctl_log_parse_priority("ERR"), LOG_ERR);
	assert_int_equal(rpmemctl_log_parse_priority("warning"), LOG_WARNING);
	assert_int_equal(rpmemctl_log_parse_priority("6"), LOG_INFO);
	assert_int_equal(rpmemctl_log_parse_priority("8"), -EINVAL);
	assert_int_equal(rpmemctl_log_parse_priority("loud"), -EINVAL);
	assert_int_equal(rpmemctl_log_parse_priority(""), -EINVAL);
	assert_int_equal(rpmemctl_log_parse_priority(NULL), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(target_parse__fields_and_default_port),
		cmocka_unit_test(target_parse__refusals_name_the_target),
		cmocka_unit_test(size_parse__suffixes_and_the_largest_size),
		cmocka_unit_test(size_format__for_people),
		cmocka_unit_test(interval_parse__units_and_range),
		cmocka_unit_test(name_check__the_rule),
		cmocka_unit_test(psk_identity_check__the_rule),
		cmocka_unit_test(psk_generate__a_line_with_a_new_key),
		cmocka_unit_test(
			psk_generate__line_is_a_psk_file_both_ends_read),
		cmocka_unit_test(utf8_len__well_formed_only),
		cmocka_unit_test(text_escape__c0_c1_bidi),
		cmocka_unit_test(log_parse_priority__names_and_numbers),
	};
	return cmocka_run_group_tests_name("text", tests, NULL, NULL);
}
