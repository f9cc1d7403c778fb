/* SPDX-License-Identifier: BSD-3-Clause */
/* util.c -- unit tests of names, sizes, targets and uuids (lib/common/util.c) */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "guard.h"
#include "hist.h"
#include "util.h"

/* rep -- n copies of c, NUL-terminated, in a static buffer */
static const char *rep(char c, size_t n)
{
	static char buf[1024];
	memset(buf, c, n);
	buf[n] = '\0';
	return buf;
}

/* --- rpmem_name_valid ---------------------------------------------------- */

static void rpmem_name_valid__accepts_the_restricted_set(void **state)
{
	(void)state;
	static const char *const good[] = {
		"a", "db1", "pool_1.db", "A-Z.0-9_", "x.", "a..b", "x-", "_",
		"0", "pmem0", "Region-01",
	};
	for (size_t i = 0; i < ARRAY_SIZE(good); i++)
		assert_int_equal(rpmem_name_valid(good[i]), 1);
}

static void rpmem_name_valid__rejects_paths_and_dots(void **state)
{
	(void)state;
	static const char *const bad[] = {
		"", ".", "..", ".hidden", "a/b", "../x", "/abs", "x/", "a\\b",
	};
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
		assert_int_equal(rpmem_name_valid(bad[i]), 0);
	assert_int_equal(rpmem_name_valid(NULL), 0);
}

/* a pool file named "-rf" would be read as options by shell scripts */
static void rpmem_name_valid__rejects_a_leading_dash(void **state)
{
	(void)state;
	assert_int_equal(rpmem_name_valid("-rf"), 0);
	assert_int_equal(rpmem_name_valid("-"), 0);
	assert_int_equal(rpmem_name_valid("--help"), 0);
	assert_int_equal(rpmem_name_valid("a-rf"), 1);
}

static void rpmem_name_valid__rejects_spaces_controls_and_unicode(
	void **state)
{
	(void)state;
	static const char *const bad[] = {
		"a b", " a", "a ", "a\tb", "a\n", "caf\xc3\xa9", "\xff",
		"\xe2\x80\x8b", "a:b", "a*", "a?", "a;b", "a$b", "a%b", "a'b",
	};
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
		assert_int_equal(rpmem_name_valid(bad[i]), 0);
}

static void rpmem_name_valid__64_chars_ok_65_rejected(void **state)
{
	(void)state;
	assert_int_equal(rpmem_name_valid(rep('n', RPMEM_NAME_MAX)), 1);
	assert_int_equal(rpmem_name_valid(rep('n', RPMEM_NAME_MAX + 1)), 0);
	assert_int_equal(rpmem_name_valid(rep('n', 1000)), 0);
}

/* --- rpmem_parse_size ---------------------------------------------------- */

static void expect_size(const char *s, uint64_t want)
{
	uint64_t v = 0xdeadbeef;
	assert_int_equal(rpmem_parse_size(s, &v), 0);
	assert_int_equal(v, want);
}

static void expect_size_err(const char *s, int err)
{
	uint64_t v = 0xdeadbeef;
	assert_int_equal(rpmem_parse_size(s, &v), err);
	assert_int_equal(v, 0xdeadbeef); /* untouched on failure */
}

static void rpmem_parse_size__plain_and_suffixed(void **state)
{
	(void)state;
	expect_size("4096", 4096);
	expect_size("0", 0);
	expect_size("64K", 64 << 10);
	expect_size("64k", 64 << 10);
	expect_size("64KiB", 64 << 10);
	expect_size("64KB", 64 << 10);
	expect_size("64kb", 64 << 10);
	expect_size("1M", 1 << 20);
	expect_size("1MiB", 1 << 20);
	expect_size("2G", 2ull << 30);
	expect_size("1T", 1ull << 40);
	expect_size("4096B", 4096);
	expect_size("007", 7);
}

static void rpmem_parse_size__junk_is_einval(void **state)
{
	(void)state;
	static const char *const bad[] = {
		"", "-1", "12X", "K", "1.5G", " 1", "1 ", "+1", "64KBB",
		"64KiBx", "1 K", "0x10", "1e3", "64iB", "1P", "1KK",
	};
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
		expect_size_err(bad[i], -EINVAL);
	expect_size_err(NULL, -EINVAL);
}

/* --- rpmem_parse_interval ------------------------------------------------ */

static void rpmem_parse_interval__units_ms_s_m_h_and_bare_seconds(void **state)
{
	(void)state;
	uint64_t v = 0;
	assert_int_equal(rpmem_parse_interval("500ms", &v), 0);
	assert_int_equal(v, 500000000ull);
	assert_int_equal(rpmem_parse_interval("5s", &v), 0);
	assert_int_equal(v, 5000000000ull);
	assert_int_equal(rpmem_parse_interval("5", &v), 0);
	assert_int_equal(v, 5000000000ull);
	assert_int_equal(rpmem_parse_interval("1m", &v), 0);
	assert_int_equal(v, 60000000000ull);
	assert_int_equal(rpmem_parse_interval("2h", &v), 0);
	assert_int_equal(v, 7200000000000ull);
	assert_int_equal(rpmem_parse_interval("1ms", &v), 0);
	assert_int_equal(v, 1000000ull);
	assert_int_equal(rpmem_parse_interval("24h", &v), 0);
	assert_int_equal(v, 86400000000000ull);
}

static void rpmem_parse_interval__junk_and_out_of_range_leave_it(void **state)
{
	(void)state;
	static const char *const bad[] = {
		"", "ms", "-1s", "1.5s", " 1s", "1s ", "1S", "1d", "1 m",
		"5mss", "0x5s", "+5s",
	};
	uint64_t v = 7;
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
		assert_int_equal(rpmem_parse_interval(bad[i], &v), -EINVAL);
	assert_int_equal(rpmem_parse_interval(NULL, &v), -EINVAL);
	assert_int_equal(rpmem_parse_interval("0s", &v), -ERANGE);
	assert_int_equal(rpmem_parse_interval("0ms", &v), -ERANGE);
	assert_int_equal(rpmem_parse_interval("25h", &v), -ERANGE);
	assert_int_equal(rpmem_parse_interval("1441m", &v), -ERANGE);
	assert_int_equal(rpmem_parse_interval("99999999999999999999999s", &v),
			 -ERANGE);
	assert_int_equal(v, 7);
}

static void rpmem_parse_size__overflow_is_erange(void **state)
{
	(void)state;
	expect_size("18446744073709551615", UINT64_MAX);
	expect_size_err("18446744073709551616", -ERANGE);
	expect_size_err("99999999999999999999999", -ERANGE);
	expect_size_err("99999999999T", -ERANGE);
	expect_size("16777215T", 16777215ull << 40);
	expect_size_err("16777216T", -ERANGE);
	expect_size("17179869183G", 17179869183ull << 30);
	expect_size_err("17179869184G", -ERANGE);
}

/* --- rpmem_fmt_size ------------------------------------------------------ */

static void expect_fmt(uint64_t v, const char *want)
{
	char buf[32];
	assert_ptr_equal(rpmem_fmt_size(v, buf, sizeof(buf)), buf);
	assert_string_equal(buf, want);
}

static void rpmem_fmt_size__binary_units(void **state)
{
	(void)state;
	expect_fmt(0, "0 B");
	expect_fmt(1023, "1023 B");
	expect_fmt(1024, "1 KiB");
	expect_fmt(1536, "1.5 KiB");
	expect_fmt(64ull << 20, "64 MiB");
	expect_fmt(3ull << 29, "1.5 GiB");
	expect_fmt(1ull << 40, "1 TiB");
	expect_fmt(1ull << 50, "1 PiB");
	expect_fmt(UINT64_MAX, "16384 PiB");
}

static void rpmem_fmt_size__small_buffer_is_truncated(void **state)
{
	(void)state;
	char buf[8];
	memset(buf, 'z', sizeof(buf));
	rpmem_fmt_size(64ull << 20, buf, 4);
	assert_string_equal(buf, "64 ");
	assert_int_equal(buf[4], 'z');
}

/* --- rpmem_parse_target -------------------------------------------------- */

static struct rpmem_target tgt;
static char terr[2048]; /* the message quotes the whole target */

static int parse(const char *s, unsigned need)
{
	terr[0] = '\0';
	return rpmem_parse_target(s, need, &tgt, terr, sizeof(terr));
}

static void expect_target(const char *s, unsigned need, const char *host,
			  const char *port, const char *region,
			  const char *pool)
{
	assert_int_equal(parse(s, need), 0);
	assert_string_equal(tgt.host, host);
	assert_string_equal(tgt.port, port);
	assert_string_equal(tgt.region, region);
	assert_string_equal(tgt.pool, pool);
}

/* expect_bad -- -EINVAL and a message that contains want */
static void expect_bad(const char *s, unsigned need, const char *want)
{
	assert_int_equal(parse(s, need), -EINVAL);
	assert_non_null(strstr(terr, want));
}

#define NEED_POOL RPMEM_TARGET_NEED_POOL
#define NEED_REGION RPMEM_TARGET_NEED_REGION
#define NO_PATH RPMEM_TARGET_NO_PATH

static void rpmem_parse_target__host_region_pool(void **state)
{
	(void)state;
	expect_target("host/region/pool", NEED_POOL, "host", "7636", "region",
		      "pool");
	expect_target("10.0.0.5/pmem0/db1", NEED_POOL, "10.0.0.5", "7636",
		      "pmem0", "db1");
	expect_target("h.example.com/r/p", 0, "h.example.com", "7636", "r",
		      "p");
}

static void rpmem_parse_target__host_port_region_pool(void **state)
{
	(void)state;
	expect_target("host:7000/region/pool", NEED_POOL, "host", "7000",
		      "region", "pool");
	expect_target("host:1/r/p", NEED_POOL, "host", "1", "r", "p");
	expect_target("host:65535/r/p", NEED_POOL, "host", "65535", "r", "p");
}

static void rpmem_parse_target__rpmem_uri_prefix(void **state)
{
	(void)state;
	expect_target("rpmem://host:7000/r/p", NEED_POOL, "host", "7000", "r",
		      "p");
	expect_target("rpmem://host/r/p", NEED_POOL, "host", "7636", "r",
		      "p");
	expect_bad("rpmem://", 0, "bad host");
	expect_bad("rpmem:///r/p", 0, "bad host");
}

static void rpmem_parse_target__other_schemes_rejected(void **state)
{
	(void)state;
	expect_bad("http://host/r/p", NEED_POOL, "only rpmem://");
	expect_bad("ftp://host/r/p", 0, "only rpmem://");
	expect_bad("RPMEM://host/r/p", 0, "only rpmem://");
	expect_bad("rpmem://http://host/r/p", 0, "");
}

static void rpmem_parse_target__bracketed_ipv6(void **state)
{
	(void)state;
	expect_target("[::1]:7000/r/p", NEED_POOL, "::1", "7000", "r", "p");
	expect_target("[::1]/r/p", NEED_POOL, "::1", "7636", "r", "p");
	expect_target("rpmem://[fe80::1%eth0]:9/r/p", NEED_POOL,
		      "fe80::1%eth0", "9", "r", "p");
	expect_target("[::1]", 0, "::1", "7636", "", "");
	expect_bad("[::1", 0, "missing ']'");
	expect_bad("[]:7000/r/p", 0, "bad host");
	expect_bad("[::1]x/r/p", 0, "invalid target");
	expect_bad("[::1]:/r/p", 0, "bad port");
}

/* an unbracketed IPv6 address is ambiguous with HOST:PORT: refused */
static void rpmem_parse_target__bare_ipv6_rejected(void **state)
{
	(void)state;
	expect_bad("::1/r/p", NEED_POOL, "bad host");
	expect_bad("fe80::1/r/p", NEED_POOL, "bad port");
	expect_bad("2001:db8::1", 0, "bad port");
	expect_bad("2001:db8:0:0:0:0:0:1/r/p", 0, "bad port");
}

static void rpmem_parse_target__bad_ports(void **state)
{
	(void)state;
	static const char *const bad[] = {
		"h:0/r/p", "h:65536/r/p", "h:abc/r/p", "h:/r/p", "h:",
		"h:123456", "h:99999", "h:7000x/r/p", "h:-1/r/p", "h:+80/r/p",
		"h: 80/r/p", "h:80:81/r/p",
	};
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
		expect_bad(bad[i], 0, "bad port");
	expect_target("h:00080", 0, "h", "00080", "", "");
}

static void rpmem_parse_target__need_pool_requires_region_and_pool(
	void **state)
{
	(void)state;
	expect_bad("host", NEED_POOL, "HOST[:PORT]/REGION/POOL");
	expect_bad("host/region", NEED_POOL, "HOST[:PORT]/REGION/POOL");
	expect_bad("host:7000/region", NEED_POOL, "HOST[:PORT]/REGION/POOL");
	expect_bad("host/", NEED_POOL, "HOST[:PORT]/REGION/POOL");
}

static void rpmem_parse_target__need_region(void **state)
{
	(void)state;
	expect_target("host/region", NEED_REGION, "host", "7636", "region",
		      "");
	expect_target("host/region/pool", NEED_REGION, "host", "7636",
		      "region", "pool");
	expect_bad("host", NEED_REGION, "HOST[:PORT]/REGION");
	expect_bad("host/", NEED_REGION, "HOST[:PORT]/REGION");
}

static void rpmem_parse_target__host_only_without_need(void **state)
{
	(void)state;
	expect_target("host", 0, "host", "7636", "", "");
	expect_target("host:7000", 0, "host", "7000", "", "");
	/* a trailing slash names nothing */
	expect_target("host/", 0, "host", "7636", "", "");
}

static void rpmem_parse_target__bad_names_rejected(void **state)
{
	(void)state;
	expect_bad("h/r/p/x", NEED_POOL, "invalid pool name");
	expect_bad("h/r/../x", NEED_POOL, "invalid pool name");
	expect_bad("h/r/..", NEED_POOL, "invalid pool name");
	expect_bad("h/r/.hidden", NEED_POOL, "invalid pool name");
	expect_bad("h/r/", NEED_POOL, "invalid pool name");
	expect_bad("h/r/a b", NEED_POOL, "invalid pool name");
	expect_bad("h/../p", NEED_POOL, "invalid region name");
	expect_bad("h/./p", NEED_POOL, "invalid region name");
	expect_bad("h//p", NEED_POOL, "invalid region name");
	expect_bad("h/.r/p", NEED_POOL, "invalid region name");
}

static void rpmem_parse_target__name_length_limits(void **state)
{
	(void)state;
	char s[1100];
	snprintf(s, sizeof(s), "h/%s/p", rep('r', RPMEM_NAME_MAX));
	assert_int_equal(parse(s, NEED_POOL), 0);
	assert_int_equal(strlen(tgt.region), RPMEM_NAME_MAX);
	snprintf(s, sizeof(s), "h/%s/p", rep('r', RPMEM_NAME_MAX + 1));
	expect_bad(s, NEED_POOL, "invalid region name");
	snprintf(s, sizeof(s), "h/r/%s", rep('p', RPMEM_NAME_MAX));
	assert_int_equal(parse(s, NEED_POOL), 0);
	assert_int_equal(strlen(tgt.pool), RPMEM_NAME_MAX);
	snprintf(s, sizeof(s), "h/r/%s", rep('p', RPMEM_NAME_MAX + 1));
	expect_bad(s, NEED_POOL, "invalid pool name");
}

static void rpmem_parse_target__host_length_limit(void **state)
{
	(void)state;
	char s[1100];
	snprintf(s, sizeof(s), "%s/r/p", rep('h', sizeof(tgt.host) - 1));
	assert_int_equal(parse(s, NEED_POOL), 0);
	assert_int_equal(strlen(tgt.host), sizeof(tgt.host) - 1);
	snprintf(s, sizeof(s), "%s/r/p", rep('h', sizeof(tgt.host)));
	expect_bad(s, NEED_POOL, "bad host");
	snprintf(s, sizeof(s), "[%s]/r/p", rep('h', sizeof(tgt.host)));
	expect_bad(s, NEED_POOL, "bad host");
}

static void rpmem_parse_target__empty_is_einval(void **state)
{
	(void)state;
	expect_bad("", 0, "empty target");
	expect_bad(NULL, 0, "empty target");
	expect_bad(":7000", 0, "bad host");
	expect_bad("/r/p", 0, "bad host");
}

static void rpmem_parse_target__no_path_allows_only_host_port(void **state)
{
	(void)state;
	expect_target("host", NO_PATH, "host", "7636", "", "");
	expect_target("host:7000", NO_PATH, "host", "7000", "", "");
	expect_target("[::1]:7000", NO_PATH, "::1", "7000", "", "");
	expect_bad("host/r", NO_PATH, "expected HOST[:PORT]");
	expect_bad("host:7000/r/p", NO_PATH, "expected HOST[:PORT]");
}

static void rpmem_parse_target__message_names_the_target(void **state)
{
	(void)state;
	expect_bad("h:0/r/p", 0, "'h:0/r/p'");
	expect_bad("h/r/p/x", 0, "'h/r/p/x'");
}

static void rpmem_parse_target__null_or_small_err_buffer(void **state)
{
	(void)state;
	struct rpmem_target t;
	char small[8];
	assert_int_equal(rpmem_parse_target("h:0", 0, &t, NULL, 0), -EINVAL);
	assert_int_equal(rpmem_parse_target("h:0", 0, &t, small, 0), -EINVAL);
	memset(small, 'z', sizeof(small));
	assert_int_equal(rpmem_parse_target("h:0", 0, &t, small,
					    sizeof(small)),
			 -EINVAL);
	assert_int_equal(strlen(small), sizeof(small) - 1);
}

/* --- uuids, strings, clocks ---------------------------------------------- */

static void rpmem_uuid_fmt__lowercase_8_4_4_4_12(void **state)
{
	(void)state;
	uint8_t u[16];
	char s[37];
	for (int i = 0; i < 16; i++)
		u[i] = (uint8_t)(i * 17);
	memset(s, 'z', sizeof(s));
	rpmem_uuid_fmt(u, s);
	assert_string_equal(s, "00112233-4455-6677-8899-aabbccddeeff");
}

static void rpmem_uuid_parse__round_trips(void **state)
{
	(void)state;
	uint8_t u[16], v[16];
	char s[37];
	for (int round = 0; round < 64; round++) {
		assert_int_equal(rpmem_random(u, sizeof(u)), 0);
		rpmem_uuid_fmt(u, s);
		assert_int_equal(rpmem_uuid_parse(s, v), 0);
		assert_memory_equal(u, v, 16);
	}
	assert_int_equal(
		rpmem_uuid_parse("00112233-4455-6677-8899-AABBCCDDEEFF", v), 0);
	assert_int_equal(v[10], 0xaa);
	assert_int_equal(v[15], 0xff);
}

static void rpmem_uuid_parse__bad_input_is_einval(void **state)
{
	(void)state;
	static const char *const bad[] = {
		"",
		"00112233-4455-6677-8899-aabbccddeef",	 /* 35 */
		"00112233-4455-6677-8899-aabbccddeeff0", /* 37 */
		"0011223344556677-8899-aabbccddeeff0f",	 /* no dashes */
		"00112233-4455-6677-8899_aabbccddeeff",
		"0011223-34455-6677-8899-aabbccddeeff", /* dash moved */
		"00112233-4455-6677-8899-aabbccddeefg",
		"g0112233-4455-6677-8899-aabbccddeeff",
		"00112233-4455-6677-8899-aabbccdde ff",
		"0x112233-4455-6677-8899-aabbccddeeff",
		"+0112233-4455-6677-8899-aabbccddeeff",
		"00112233-4455-6677-8899-aabbccddee\xff" "f",
	};
	uint8_t v[16];
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
		assert_int_equal(rpmem_uuid_parse(bad[i], v), -EINVAL);
	assert_int_equal(rpmem_uuid_parse(NULL, v), -EINVAL);
}

static void rpmem_strlcpy__truncates_and_terminates(void **state)
{
	(void)state;
	char d[8];
	memset(d, 'z', sizeof(d));
	assert_int_equal(rpmem_strlcpy(d, "abcdefghijk", sizeof(d)), 11);
	assert_string_equal(d, "abcdefg");
	assert_int_equal(rpmem_strlcpy(d, "ab", sizeof(d)), 2);
	assert_string_equal(d, "ab");
	memset(d, 'z', sizeof(d));
	assert_int_equal(rpmem_strlcpy(d, "ab", 0), 2);
	assert_int_equal(d[0], 'z');
	assert_int_equal(rpmem_strlcpy(d, "ab", 1), 2);
	assert_string_equal(d, "");
}

/* rpmem_utf8_len: well-formed UTF-8 only (RFC 3629) */
static void rpmem_utf8_len__well_formed_only(void **state)
{
	(void)state;
	assert_int_equal(rpmem_utf8_len("a"), 1);
	assert_int_equal(rpmem_utf8_len("\xc3\xa9"), 2);	 /* e acute */
	assert_int_equal(rpmem_utf8_len("\xe2\x82\xac"), 3); /* euro */
	assert_int_equal(rpmem_utf8_len("\xf0\x9f\x98\x80"), 4);
	assert_int_equal(rpmem_utf8_len("\xe9\xff"), 0); /* Latin-1 */
	assert_int_equal(rpmem_utf8_len("\x80"), 0);	  /* continuation */
	assert_int_equal(rpmem_utf8_len("\xc0\xaf"), 0); /* overlong */
	assert_int_equal(rpmem_utf8_len("\xe0\x80\xaf"), 0);
	assert_int_equal(rpmem_utf8_len("\xed\xa0\x80"), 0); /* surrogate */
	assert_int_equal(rpmem_utf8_len("\xf4\x90\x80\x80"), 0);
	assert_int_equal(rpmem_utf8_len("\xe2\x82"), 0); /* truncated */
}

/* rpmem_str_sanitize: control characters and stray bytes to '?' */
static void rpmem_str_sanitize__control_and_stray_bytes(void **state)
{
	char s[] = "a\tb\xc3\xa9\xe9\xff\xe2\x82";

	(void)state;
	rpmem_str_sanitize(s);
	assert_string_equal(s, "a?b\xc3\xa9????");
}

/* rpmem_str_sanitize: a C1 or bidi control is one '?', like a C0 one */
static void rpmem_str_sanitize__c1_and_bidi_controls(void **state)
{
	char s[] = "a\xc2\x9b" "2J\xc2\x9d" "0;x\xe2\x80\xae" "b\xe2\x81\xa6"
		   "c\xc2\xa0\xe2\x80\x94";

	(void)state;
	rpmem_str_sanitize(s);
	/* NBSP and the em dash are text, not controls */
	assert_string_equal(s, "a?2J?0;x?b?c\xc2\xa0\xe2\x80\x94");
}

/* rpmem_utf8_control: C0, DEL, C1, the bidi controls and LS/PS only */
static void rpmem_utf8_control__c0_c1_bidi(void **state)
{
	(void)state;
	assert_int_equal(rpmem_utf8_control(""), 0);
	assert_int_equal(rpmem_utf8_control("\x1b"), 1);
	assert_int_equal(rpmem_utf8_control("\x7f"), 1);
	assert_int_equal(rpmem_utf8_control("a"), 0);
	assert_int_equal(rpmem_utf8_control("\xc2\x80"), 2);
	assert_int_equal(rpmem_utf8_control("\xc2\x9b"), 2);
	assert_int_equal(rpmem_utf8_control("\xc2\x9f"), 2);
	assert_int_equal(rpmem_utf8_control("\xc2\xa0"), 0);
	assert_int_equal(rpmem_utf8_control("\xd8\x9c"), 2);
	assert_int_equal(rpmem_utf8_control("\xe2\x80\x8e"), 3);
	assert_int_equal(rpmem_utf8_control("\xe2\x80\xa8"), 3);
	assert_int_equal(rpmem_utf8_control("\xe2\x80\xae"), 3);
	assert_int_equal(rpmem_utf8_control("\xe2\x80\xaf"), 0);
	assert_int_equal(rpmem_utf8_control("\xe2\x81\xa6"), 3);
	assert_int_equal(rpmem_utf8_control("\xe2\x81\xa9"), 3);
	assert_int_equal(rpmem_utf8_control("\xe2\x81\xaa"), 0);
	assert_int_equal(rpmem_utf8_control("\xe2\x82\xac"), 0);
}

/* rpmem_text_escape: \xHH for C0/DEL/stray bytes, \u{...} for C1/bidi */
static void rpmem_text_escape__for_people(void **state)
{
	char d[128];
	size_t n;

	(void)state;
	n = rpmem_text_escape("a\x1b]0;t\x07\xc2\x9b"
			      "2J\xe2\x80\xae!\xff\\x",
			      d, sizeof(d));
	assert_int_equal(n, strlen(d));
	assert_string_equal(d, "a\\x1b]0;t\\x07\\u{009b}2J\\u{202e}!\\xff\\x");
	/* escaping twice changes nothing */
	char e[128];
	rpmem_text_escape(d, e, sizeof(e));
	assert_string_equal(e, d);
	/* text passes, whole escapes only, the full length is returned */
	assert_int_equal(rpmem_text_escape("\xc3\xa9\n", d, 3), 6);
	assert_string_equal(d, "\xc3\xa9");
	assert_int_equal(rpmem_text_escape("\xc3\xa9\n", d, 6), 6);
	assert_string_equal(d, "\xc3\xa9");
	assert_int_equal(rpmem_text_escape("\xc3\xa9\n", NULL, 0), 6);
}

static void rpmem_escape__controls_nul_and_backslash_as_hex(void **state)
{
	(void)state;
	char d[64];
	static const char in[] = "a\nb\0c\\d\x7f\x1b[2Je\xc3\xa9";
	assert_ptr_equal(rpmem_escape(in, sizeof(in) - 1, d, sizeof(d)), d);
	assert_string_equal(d, "a\\x0ab\\x00c\\x5cd\\x7f\\x1b[2Je\xc3\xa9");
	/* whole escapes only, always terminated */
	assert_string_equal(rpmem_escape("ab\ncd", 5, d, 5), "ab");
	assert_string_equal(rpmem_escape("ab\ncd", 5, d, 7), "ab\\x0a");
	memset(d, 'z', sizeof(d));
	rpmem_escape("ab", 2, d, 0);
	assert_int_equal(d[0], 'z');
	/* C1 and bidi controls and stray bytes: every byte */
	assert_string_equal(rpmem_escape("a\xc2\x9b" "b\xe2\x80\xae" "c\xff",
					 9, d, sizeof(d)),
			    "a\\xc2\\x9bb\\xe2\\x80\\xaec\\xff");
}

static void rpmem_random__fills_the_buffer(void **state)
{
	(void)state;
	uint8_t a[64], b[64];
	memset(a, 0, sizeof(a));
	memset(b, 0, sizeof(b));
	assert_int_equal(rpmem_random(a, sizeof(a)), 0);
	assert_int_equal(rpmem_random(b, sizeof(b)), 0);
	assert_memory_not_equal(a, b, sizeof(a));
	assert_int_equal(rpmem_random(a, 0), 0);
}

/*
 * the head of a history the client (FILE.rpmemgen) and rpmemd (a promoted
 * pool's <pool>.rpmemgen) both read and write: a round trip keeps every
 * field and the optional lines after it; an ids line longer than 16 ids
 * allow is damaged, and reading it writes nothing past its buffer (the
 * sscanf width was 288 for 273 bytes in both copies of the parser)
 */
static void rpmem_hist__one_head_for_client_and_daemon(void **state)
{
	(void)state;
	struct rpmem_hist_head h = { .ids = { 0x9f3c0a1e22b4d5c6ull, 7 },
				     .count = 2,
				     .size = 1ull << 30,
				     .sec = 1700000000,
				     .nsec = 123 },
			       g;
	char text[1024], ids[400];
	int n = rpmem_hist_fmt(&h, "local=1\n", text, sizeof(text));

	assert_int_equal(n, (int)strlen(text));
	assert_string_equal(text, "rpmem-history 1\n"
				  "ids=9f3c0a1e22b4d5c6,0000000000000007\n"
				  "size=1073741824\nmtime=1700000000.000000123\n"
				  "local=1\n");
	assert_int_equal(rpmem_hist_parse(text, &g), 0);
	assert_int_equal(g.count, 2);
	assert_true(g.ids[0] == h.ids[0] && g.ids[1] == 7);
	assert_true(g.size == h.size && g.sec == h.sec && g.nsec == 123);
	assert_int_equal(rpmem_hist_fmt(&h, "", text, 64), -ENOBUFS);
	memset(ids, 'a', sizeof(ids) - 1);
	ids[sizeof(ids) - 1] = '\0';
	snprintf(text, sizeof(text),
		 "rpmem-history 1\nids=%s\nsize=4096\nmtime=1.0\n", ids);
	assert_int_equal(rpmem_hist_parse(text, &g), -EBADMSG);
	assert_int_equal(rpmem_hist_parse("rpmem-history 2\nids=00000000000000"
					  "01\nsize=1\nmtime=1.0\n", &g),
			 -EBADMSG);
}

static void rpmem_now_ns__is_monotonic(void **state)
{
	(void)state;
	uint64_t a = rpmem_now_ns();
	struct timespec ts = { 0, 2000000 };
	nanosleep(&ts, NULL);
	uint64_t b = rpmem_now_ns();
	assert_true(b >= a + 2000000);
	uint64_t w = rpmem_wall_sec(), t = (uint64_t)time(NULL);
	assert_in_range(w, t - 1, t + 1);
}

/* touch -- read the byte at arg (a guarded function) */
static int touch(void *arg)
{
	return *(volatile const char *)arg;
}

/* two_pages -- a file of two pages mapped for reading: its fd in *fd */
static char *two_pages(int *fd)
{
	char path[] = "/tmp/rpmem-guard-XXXXXX";
	*fd = mkstemp(path);
	assert_true(*fd >= 0);
	unlink(path);
	long pg = sysconf(_SC_PAGESIZE);
	assert_int_equal(ftruncate(*fd, 2 * pg), 0);
	char *p = mmap(NULL, (size_t)(2 * pg), PROT_READ, MAP_SHARED, *fd, 0);
	assert_true(p != MAP_FAILED);
	return p;
}

static void rpmem_guard_run__catches_every_fault_and_leaves_sigbus_usable(
	void **state)
{
	(void)state;
	int fd;
	char *p = two_pages(&fd);
	long pg = sysconf(_SC_PAGESIZE);
	assert_int_equal(rpmem_guard_run(touch, p + pg), 0);
	assert_int_equal(ftruncate(fd, pg), 0);
	/* the page past the end faults, again and again: each is caught */
	for (int i = 0; i < 3; i++)
		assert_int_equal(rpmem_guard_run(touch, p + pg), -EFAULT);
	sigset_t now;
	assert_int_equal(pthread_sigmask(SIG_SETMASK, NULL, &now), 0);
	assert_false(sigismember(&now, SIGBUS));
	assert_int_equal(rpmem_guard_run(touch, p), 0);
	munmap(p, (size_t)(2 * pg));
	close(fd);
}

/* calls of libc's sigaction that the guard made through the one it got */
static int nreal;

static int counting_sigaction(int sig, const struct sigaction *act,
			      struct sigaction *old)
{
	nreal++;
	return sigaction(sig, act, old);
}

static volatile sig_atomic_t app_got;

/* app_bus -- "the application's own" SIGBUS handler */
static void app_bus(int sig)
{
	(void)sig;
	app_got++;
}

/* must run after the test above: interposing cannot be undone */
static void rpmem_guard_interpose__keeps_its_handler_under_the_process_s_own(
	void **state)
{
	(void)state;
	struct sigaction app = { .sa_handler = app_bus }, got;
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	sigemptyset(&app.sa_mask);
	sigemptyset(&dfl.sa_mask);
	assert_int_equal(rpmem_guard_sigaction(&app, NULL), -EPERM);
	assert_int_equal(rpmem_guard_interpose(NULL), -EINVAL);
	assert_int_equal(rpmem_guard_interpose(counting_sigaction), 0);
	/* the process sets its own: it reads back, the guard's stays */
	assert_int_equal(rpmem_guard_sigaction(&app, NULL), 0);
	assert_int_equal(rpmem_guard_sigaction(NULL, &got), 0);
	assert_ptr_equal(got.sa_handler, app_bus);
	assert_int_equal(sigaction(SIGBUS, NULL, &got), 0);
	assert_true(got.sa_flags & SA_SIGINFO);
	assert_ptr_not_equal(got.sa_handler, app_bus);
	/* guarded faults caught, and not one sigaction call for them */
	int n = nreal;
	int fd;
	char *p = two_pages(&fd);
	long pg = sysconf(_SC_PAGESIZE);
	assert_int_equal(ftruncate(fd, pg), 0);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(rpmem_guard_run(touch, p + pg), -EFAULT);
		assert_int_equal(rpmem_guard_run(touch, p), 0);
	}
	assert_int_equal(nreal, n);
	assert_int_equal(app_got, 0);
	/* a SIGBUS the guard did not cause goes to the process's own */
	raise(SIGBUS);
	assert_int_equal(app_got, 1);
	/* once (SA_RESETHAND): then the default, as the kernel would */
	app.sa_flags = SA_RESETHAND;
	assert_int_equal(rpmem_guard_sigaction(&app, NULL), 0);
	raise(SIGBUS);
	assert_int_equal(app_got, 2);
	assert_int_equal(rpmem_guard_sigaction(NULL, &got), 0);
	assert_ptr_equal(got.sa_handler, SIG_DFL);
	/* ignored: a sent SIGBUS is ignored, as without the guard */
	app.sa_handler = SIG_IGN;
	app.sa_flags = 0;
	assert_int_equal(rpmem_guard_sigaction(&app, NULL), 0);
	raise(SIGBUS);
	assert_int_equal(app_got, 2);
	assert_int_equal(rpmem_guard_sigaction(&dfl, NULL), 0);
	munmap(p, (size_t)(2 * pg));
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(
		  rpmem_guard_run__catches_every_fault_and_leaves_sigbus_usable),
		cmocka_unit_test(
		  rpmem_guard_interpose__keeps_its_handler_under_the_process_s_own),
		cmocka_unit_test(rpmem_name_valid__accepts_the_restricted_set),
		cmocka_unit_test(rpmem_name_valid__rejects_paths_and_dots),
		cmocka_unit_test(rpmem_name_valid__rejects_a_leading_dash),
		cmocka_unit_test(
			rpmem_name_valid__rejects_spaces_controls_and_unicode),
		cmocka_unit_test(rpmem_name_valid__64_chars_ok_65_rejected),
		cmocka_unit_test(rpmem_parse_size__plain_and_suffixed),
		cmocka_unit_test(rpmem_parse_size__junk_is_einval),
		cmocka_unit_test(rpmem_parse_size__overflow_is_erange),
		cmocka_unit_test(
			rpmem_parse_interval__units_ms_s_m_h_and_bare_seconds),
		cmocka_unit_test(
			rpmem_parse_interval__junk_and_out_of_range_leave_it),
		cmocka_unit_test(rpmem_fmt_size__binary_units),
		cmocka_unit_test(rpmem_fmt_size__small_buffer_is_truncated),
		cmocka_unit_test(rpmem_parse_target__host_region_pool),
		cmocka_unit_test(rpmem_parse_target__host_port_region_pool),
		cmocka_unit_test(rpmem_parse_target__rpmem_uri_prefix),
		cmocka_unit_test(rpmem_parse_target__other_schemes_rejected),
		cmocka_unit_test(rpmem_parse_target__bracketed_ipv6),
		cmocka_unit_test(rpmem_parse_target__bare_ipv6_rejected),
		cmocka_unit_test(rpmem_parse_target__bad_ports),
		cmocka_unit_test(
			rpmem_parse_target__need_pool_requires_region_and_pool),
		cmocka_unit_test(rpmem_parse_target__need_region),
		cmocka_unit_test(rpmem_parse_target__host_only_without_need),
		cmocka_unit_test(rpmem_parse_target__bad_names_rejected),
		cmocka_unit_test(rpmem_parse_target__name_length_limits),
		cmocka_unit_test(rpmem_parse_target__host_length_limit),
		cmocka_unit_test(rpmem_parse_target__empty_is_einval),
		cmocka_unit_test(
			rpmem_parse_target__no_path_allows_only_host_port),
		cmocka_unit_test(
			rpmem_parse_target__message_names_the_target),
		cmocka_unit_test(rpmem_parse_target__null_or_small_err_buffer),
		cmocka_unit_test(rpmem_uuid_fmt__lowercase_8_4_4_4_12),
		cmocka_unit_test(rpmem_uuid_parse__round_trips),
		cmocka_unit_test(rpmem_uuid_parse__bad_input_is_einval),
		cmocka_unit_test(rpmem_strlcpy__truncates_and_terminates),
		cmocka_unit_test(rpmem_utf8_len__well_formed_only),
		cmocka_unit_test(rpmem_str_sanitize__control_and_stray_bytes),
		cmocka_unit_test(rpmem_str_sanitize__c1_and_bidi_controls),
		cmocka_unit_test(rpmem_utf8_control__c0_c1_bidi),
		cmocka_unit_test(rpmem_text_escape__for_people),
		cmocka_unit_test(rpmem_escape__controls_nul_and_backslash_as_hex),
		cmocka_unit_test(rpmem_random__fills_the_buffer),
		cmocka_unit_test(rpmem_now_ns__is_monotonic),
		cmocka_unit_test(rpmem_hist__one_head_for_client_and_daemon),
	};
	return cmocka_run_group_tests_name("util", tests, NULL, NULL);
}
