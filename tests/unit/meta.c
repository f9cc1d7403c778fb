/* SPDX-License-Identifier: BSD-3-Clause */
/* meta.c -- unit tests of pool metadata (daemon/storage/pool/meta.c) */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "meta.h"
#include "util.h"

/*
 * fsync, renameat and write are wrapped at link time (-Wl,--wrap=...) to
 * record the order of the durable steps of a store and to make each of
 * them fail, the way a full disk or an I/O error would.
 */
int __real_fsync(int fd);
int __real_renameat(int olddirfd, const char *old, int newdirfd,
		    const char *new);
ssize_t __real_write(int fd, const void *buf, size_t n);
int __wrap_fsync(int fd);
int __wrap_renameat(int olddirfd, const char *old, int newdirfd,
		    const char *new);
ssize_t __wrap_write(int fd, const void *buf, size_t n);

static struct {
	char log[64]; /* F: fsync of a file, D: of the dir, R: rename */
	int dirfd;
	int fail_fsync_nth; /* the nth fsync (1-based) fails with EIO */
	int fsyncs;
	int fail_rename;
	int short_write;    /* write half, then fail with ENOSPC */
} io;

static void io_log(char c)
{
	size_t n = strlen(io.log);
	if (n + 1 < sizeof(io.log))
		io.log[n] = c;
}

int __wrap_fsync(int fd)
{
	io_log(fd == io.dirfd ? 'D' : 'F');
	if (++io.fsyncs == io.fail_fsync_nth) {
		errno = EIO;
		return -1;
	}
	return __real_fsync(fd);
}

int __wrap_renameat(int olddirfd, const char *old, int newdirfd,
		    const char *new)
{
	io_log('R');
	if (io.fail_rename) {
		errno = ENOSPC;
		return -1;
	}
	return __real_renameat(olddirfd, old, newdirfd, new);
}

ssize_t __wrap_write(int fd, const void *buf, size_t n)
{
	if (io.short_write == 1 && n > 1) {
		io.short_write = 2;
		return __real_write(fd, buf, n / 2);
	}
	if (io.short_write == 2) {
		errno = ENOSPC;
		return -1;
	}
	return __real_write(fd, buf, n);
}

static char dir[PATH_MAX];
static int dfd = -1;

static void io_reset(void)
{
	memset(&io, 0, sizeof(io));
	io.dirfd = dfd;
}

/* rm_all -- empty the scratch directory */
static void rm_all(void)
{
	static const char *const names[] = {
		"db1.meta", "db1.meta.tmp", "db2.meta", "db3.meta", "link.meta",
		"big.meta", "target",
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		unlinkat(dfd, names[i], 0);
}

static int setup(void **state)
{
	(void)state;
	char tmpl[] = "/tmp/rpmem-unit-meta-XXXXXX";
	if (!mkdtemp(tmpl) || !realpath(tmpl, dir))
		return -1;
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return dfd < 0 ? -1 : 0;
}

static int teardown(void **state)
{
	(void)state;
	rm_all();
	close(dfd);
	return rmdir(dir);
}

static int each_setup(void **state)
{
	(void)state;
	rm_all();
	io_reset();
	return 0;
}

/* sample -- a consistent pool with every field set */
static struct rpmemd_meta sample(void)
{
	struct rpmemd_meta m;
	memset(&m, 0, sizeof(m));
	for (int i = 0; i < 16; i++)
		m.uuid[i] = (uint8_t)(0x10 * i + 1);
	m.size = 1ull << 30;
	m.state = RPMEM_POOL_CONSISTENT;
	m.generation = 3;
	m.created = 1700000000;
	m.last_sync = 1700000100;
	strcpy(m.source, "host-a:/mnt/pmem/db1");
	return m;
}

/* file_text -- the content of a file in the scratch dir, or "" */
static const char *file_text(const char *name)
{
	static char buf[RPMEMD_META_MAX * 2];
	buf[0] = '\0';
	int fd = openat(dfd, name, O_RDONLY);
	if (fd < 0)
		return buf;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

static void put_file(const char *name, const char *text, size_t len)
{
	int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(__real_write(fd, text, len), (ssize_t)len);
	close(fd);
}

static int exists(const char *name)
{
	return faccessat(dfd, name, F_OK, 0) == 0;
}

/* --- state machine ------------------------------------------------------- */

static void rpmemd_meta_init__empty_pool_with_random_uuid(void **state)
{
	(void)state;
	struct rpmemd_meta a, b;
	uint64_t now = (uint64_t)time(NULL);
	assert_int_equal(rpmemd_meta_init(&a, 4096), 0);
	assert_int_equal(rpmemd_meta_init(&b, 4096), 0);
	assert_int_equal(a.state, RPMEM_POOL_EMPTY);
	assert_int_equal(a.size, 4096);
	assert_int_equal(a.generation, 0);
	assert_int_equal(a.last_sync, 0);
	assert_in_range(a.created, now - 1, now + 2);
	assert_string_equal(a.source, "");
	assert_memory_not_equal(a.uuid, b.uuid, 16);
	assert_int_equal(a.uuid[6] >> 4, 4);	  /* version 4 */
	assert_int_equal(a.uuid[8] & 0xc0, 0x80); /* RFC 4122 variant */
}

static void rpmemd_meta_transition__empty_to_syncing(void **state)
{
	(void)state;
	struct rpmemd_meta m = sample();
	m.state = RPMEM_POOL_EMPTY;
	m.generation = 0;
	m.last_sync = 0;
	assert_int_equal(rpmemd_meta_transition(&m, RPMEM_POOL_SYNCING), 0);
	assert_int_equal(m.state, RPMEM_POOL_SYNCING);
	assert_int_equal(m.generation, 0);
	assert_int_equal(m.last_sync, 0);
}

static void rpmemd_meta_transition__syncing_to_syncing_resumes(void **state)
{
	(void)state;
	struct rpmemd_meta m = sample();
	m.state = RPMEM_POOL_SYNCING;
	struct rpmemd_meta before = m;
	assert_int_equal(rpmemd_meta_transition(&m, RPMEM_POOL_SYNCING), 0);
	assert_memory_equal(&m, &before, sizeof(m));
}

static void rpmemd_meta_transition__syncing_to_consistent_increments_generation(
	void **state)
{
	(void)state;
	struct rpmemd_meta m = sample();
	m.state = RPMEM_POOL_SYNCING;
	m.generation = 41;
	m.last_sync = 5;
	uint64_t now = (uint64_t)time(NULL);
	assert_int_equal(rpmemd_meta_transition(&m, RPMEM_POOL_CONSISTENT), 0);
	assert_int_equal(m.state, RPMEM_POOL_CONSISTENT);
	assert_int_equal(m.generation, 42);
	assert_in_range(m.last_sync, now - 1, now + 2);
	assert_int_equal(m.size, 1ull << 30);
	assert_int_equal(m.created, 1700000000);
}

static void rpmemd_meta_transition__consistent_to_syncing(void **state)
{
	(void)state;
	struct rpmemd_meta m = sample();
	assert_int_equal(rpmemd_meta_transition(&m, RPMEM_POOL_SYNCING), 0);
	assert_int_equal(m.state, RPMEM_POOL_SYNCING);
	assert_int_equal(m.generation, 3); /* kept until the next consistent */
	assert_int_equal(m.last_sync, 1700000100);
}

/* expect_refused -- -EINVAL and *m untouched */
static void expect_refused(uint8_t from, uint8_t to)
{
	struct rpmemd_meta m = sample();
	m.state = from;
	struct rpmemd_meta before = m;
	assert_int_equal(rpmemd_meta_transition(&m, to), -EINVAL);
	assert_memory_equal(&m, &before, sizeof(m));
}

static void rpmemd_meta_transition__empty_to_consistent_refused(void **state)
{
	(void)state;
	expect_refused(RPMEM_POOL_EMPTY, RPMEM_POOL_CONSISTENT);
}

static void rpmemd_meta_transition__consistent_to_consistent_refused(
	void **state)
{
	(void)state;
	expect_refused(RPMEM_POOL_CONSISTENT, RPMEM_POOL_CONSISTENT);
}

static void rpmemd_meta_transition__anything_to_empty_refused(void **state)
{
	(void)state;
	expect_refused(RPMEM_POOL_EMPTY, RPMEM_POOL_EMPTY);
	expect_refused(RPMEM_POOL_SYNCING, RPMEM_POOL_EMPTY);
	expect_refused(RPMEM_POOL_CONSISTENT, RPMEM_POOL_EMPTY);
}

static void rpmemd_meta_transition__bad_values_refused(void **state)
{
	(void)state;
	for (unsigned to = RPMEM_POOL_CONSISTENT + 1; to <= 0xff; to++)
		for (uint8_t from = 0; from <= RPMEM_POOL_CONSISTENT; from++)
			expect_refused(from, (uint8_t)to);
	/* a corrupt current state is never moved on */
	expect_refused(3, RPMEM_POOL_SYNCING);
	expect_refused(0xff, RPMEM_POOL_SYNCING);
	expect_refused(0xff, RPMEM_POOL_CONSISTENT);
}

static void rpmemd_meta_set_source__sanitizes_and_truncates(void **state)
{
	(void)state;
	struct rpmemd_meta m = sample();
	rpmemd_meta_set_source(&m, "host:/p\nstate=empty\r\x7f\t");
	assert_string_equal(m.source, "host:/p?state=empty???");
	char longs[600];
	memset(longs, 's', sizeof(longs) - 1);
	longs[sizeof(longs) - 1] = '\0';
	rpmemd_meta_set_source(&m, longs);
	assert_int_equal(strlen(m.source), RPMEM_STR_MAX);
}

/* --- text format --------------------------------------------------------- */

static void rpmemd_meta_format__documented_layout(void **state)
{
	(void)state;
	struct rpmemd_meta m = sample();
	char buf[RPMEMD_META_MAX];
	int n = rpmemd_meta_format(&m, buf, sizeof(buf));
	assert_true(n > 0);
	assert_int_equal((size_t)n, strlen(buf));
	assert_string_equal(buf,
			    "magic=rpmemd-pool-meta\n"
			    "version=1\n"
			    "uuid=01112131-4151-6171-8191-a1b1c1d1e1f1\n"
			    "size=1073741824\n"
			    "created=1700000000\n"
			    "source=host-a:/mnt/pmem/db1\n"
			    "state=consistent\n"
			    "generation=3\n"
			    "last_sync=1700000100\n");
}

static void rpmemd_meta_format__small_buffer_is_emsgsize(void **state)
{
	(void)state;
	struct rpmemd_meta m = sample();
	char buf[RPMEMD_META_MAX];
	int n = rpmemd_meta_format(&m, buf, sizeof(buf));
	assert_true(n > 0);
	assert_int_equal(rpmemd_meta_format(&m, buf, (size_t)n), -EMSGSIZE);
	assert_int_equal(rpmemd_meta_format(&m, buf, 10), -EMSGSIZE);
	assert_int_equal(rpmemd_meta_format(&m, buf, (size_t)n + 1), n);
}

static void rpmemd_meta_parse__round_trips_every_state(void **state)
{
	(void)state;
	for (uint8_t st = 0; st <= RPMEM_POOL_CONSISTENT; st++) {
		struct rpmemd_meta m = sample(), out;
		m.state = st;
		m.generation = UINT64_MAX;
		memset(m.source, 0, sizeof(m.source));
		strcpy(m.source, st ? "a=b=c" : "");
		char buf[RPMEMD_META_MAX];
		int n = rpmemd_meta_format(&m, buf, sizeof(buf));
		assert_true(n > 0);
		memset(&out, 0x5a, sizeof(out));
		assert_int_equal(rpmemd_meta_parse(buf, (size_t)n, &out), 0);
		assert_memory_equal(&out, &m, sizeof(m));
	}
}

/* text -- the sample's text with line `drop` left out and `extra` added */
static size_t text(char *buf, size_t len, const char *drop, const char *extra)
{
	struct rpmemd_meta m = sample();
	char full[RPMEMD_META_MAX];
	assert_true(rpmemd_meta_format(&m, full, sizeof(full)) > 0);
	buf[0] = '\0';
	char *save = NULL;
	for (char *l = strtok_r(full, "\n", &save); l;
	     l = strtok_r(NULL, "\n", &save)) {
		if (drop && !strncmp(l, drop, strlen(drop)))
			continue;
		strncat(buf, l, len - strlen(buf) - 1);
		strncat(buf, "\n", len - strlen(buf) - 1);
	}
	if (extra)
		strncat(buf, extra, len - strlen(buf) - 1);
	return strlen(buf);
}

static int parse_text(const char *drop, const char *extra)
{
	char buf[RPMEMD_META_MAX * 2];
	struct rpmemd_meta m;
	size_t n = text(buf, sizeof(buf), drop, extra);
	return rpmemd_meta_parse(buf, n, &m);
}

/* a role and a history round-trip; a damaged history is refused */
static void rpmemd_meta_parse__role_and_history(void **state)
{
	(void)state;
	struct rpmemd_meta m = sample(), out;
	char buf[RPMEMD_META_MAX];
	m.role = RPMEM_ROLE_PRIMARY;
	for (unsigned i = 0; i < RPMEM_MAX_GENERATIONS + 2; i++)
		rpmemd_meta_hist_push(&m, 0x1000 + i);
	/* the oldest fell off */
	assert_int_equal(m.nhist, RPMEM_MAX_GENERATIONS);
	assert_int_equal(m.hist[0], 0x1000 + RPMEM_MAX_GENERATIONS + 1);
	int n = rpmemd_meta_format(&m, buf, sizeof(buf));
	assert_true(n > 0);
	assert_non_null(strstr(buf, "role=primary\nhistory=0000000000001011,"));
	memset(&out, 0x5a, sizeof(out));
	assert_int_equal(rpmemd_meta_parse(buf, (size_t)n, &out), 0);
	assert_memory_equal(&out, &m, sizeof(m));
	/* a file without the keys: a secondary without a history */
	m = sample();
	n = rpmemd_meta_format(&m, buf, sizeof(buf));
	assert_null(strstr(buf, "role="));
	assert_int_equal(rpmemd_meta_parse(buf, (size_t)n, &out), 0);
	assert_int_equal(out.role, RPMEM_ROLE_SECONDARY);
	assert_int_equal(out.nhist, 0);
	static const char *const bad[] = {
		"history=12\n", "history=000000000000000g\n",
		"history=0000000000000001,\n", "history=0000000000000000\n",
		"role=boss\n",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(parse_text(NULL, bad[i]), -EBADMSG);
	assert_int_equal(parse_text(NULL, "history=00000000000000ab\n"), 0);
}

static void rpmemd_meta_parse__missing_key_is_ebadmsg(void **state)
{
	(void)state;
	static const char *const keys[] = { "magic=", "version=", "uuid=",
					    "size=", "state=", "generation=",
					    "created=", "last_sync=" };
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		assert_int_equal(parse_text(keys[i], NULL), -EBADMSG);
	/* source is optional */
	assert_int_equal(parse_text("source=", NULL), 0);
}

static void rpmemd_meta_parse__duplicate_key_is_ebadmsg(void **state)
{
	(void)state;
	assert_int_equal(parse_text(NULL, "generation=4\n"), -EBADMSG);
	assert_int_equal(parse_text(NULL, "state=consistent\n"), -EBADMSG);
	assert_int_equal(parse_text(NULL, "source=x\n"), -EBADMSG);
	assert_int_equal(parse_text(NULL, "magic=rpmemd-pool-meta\n"),
			 -EBADMSG);
}

static void rpmemd_meta_parse__unknown_key_is_ignored(void **state)
{
	(void)state;
	assert_int_equal(parse_text(NULL, "checksum=1234\nfuture=a=b\n"), 0);
}

static int parse_str(const char *s)
{
	struct rpmemd_meta m;
	return rpmemd_meta_parse(s, strlen(s), &m);
}

#define HEAD "magic=rpmemd-pool-meta\nversion=1\n"
#define BODY                                                                  \
	"uuid=01112131-4151-6171-8191-a1b1c1d1e1f1\nsize=4096\n"              \
	"state=syncing\ngeneration=1\ncreated=2\nlast_sync=3\n"

static void rpmemd_meta_parse__magic_and_version_lead(void **state)
{
	(void)state;
	assert_int_equal(parse_str(HEAD BODY), 0);
	assert_int_equal(parse_str("version=1\nmagic=rpmemd-pool-meta\n" BODY),
			 -EBADMSG);
	assert_int_equal(parse_str("magic=rpmemd-pool-meta\n" BODY
				   "version=1\n"),
			 -EBADMSG);
	assert_int_equal(parse_str("x=1\n" HEAD BODY), -EBADMSG);
	assert_int_equal(parse_str("magic=rpmemd-pool-metb\nversion=1\n" BODY),
			 -EBADMSG);
	assert_int_equal(parse_str("magic=rpmemd-pool-meta\nversion=2\n" BODY),
			 -EBADMSG);
	assert_int_equal(
		parse_str("magic=rpmemd-pool-meta\nversion=01x\n" BODY),
		-EBADMSG);
}

static void rpmemd_meta_parse__bad_values_are_ebadmsg(void **state)
{
	(void)state;
	static const char *const bad[] = {
		"uuid=01112131-4151-6171-8191-a1b1c1d1e1f\n",
		"uuid=zz112131-4151-6171-8191-a1b1c1d1e1f1\n",
		"uuid=\n",
		"size=0\n",
		"size=-1\n",
		"size=+1\n",
		"size= 1\n",
		"size=1 \n",
		"size=1K\n",
		"size=18446744073709551616\n",
		"state=bogus\n",
		"state=Consistent\n",
		"state=\n",
		"state=2\n",
		"generation=12abc\n",
		"generation=\n",
		"created=-5\n",
		"last_sync=0x10\n",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char drop[32];
		snprintf(drop, sizeof(drop), "%.*s",
			 (int)(strchr(bad[i], '=') - bad[i] + 1), bad[i]);
		int ret = parse_text(drop, bad[i]);
		if (ret != -EBADMSG)
			fail_msg("'%s' gave %d", bad[i], ret);
	}
	char src[400] = "source=";
	memset(src + 7, 's', RPMEM_STR_MAX + 1);
	strcpy(src + 7 + RPMEM_STR_MAX + 1, "\n");
	assert_int_equal(parse_text("source=", src), -EBADMSG);
	src[7 + RPMEM_STR_MAX] = '\n';
	src[7 + RPMEM_STR_MAX + 1] = '\0';
	assert_int_equal(parse_text("source=", src), 0);
}

static void rpmemd_meta_parse__garbage_is_ebadmsg(void **state)
{
	(void)state;
	assert_int_equal(parse_str(""), -EBADMSG);
	assert_int_equal(parse_str("\n\n\n"), -EBADMSG);
	assert_int_equal(parse_str(HEAD BODY "no equals sign\n"), -EBADMSG);
	assert_int_equal(parse_str("\x7f" "ELF\x02\x01\x01"), -EBADMSG);
	char buf[] = HEAD BODY;
	buf[40] = '\0'; /* a NUL inside the text */
	struct rpmemd_meta m;
	assert_int_equal(rpmemd_meta_parse(buf, sizeof(buf) - 1, &m),
			 -EBADMSG);
}

static void rpmemd_meta_parse__oversize_is_ebadmsg(void **state)
{
	(void)state;
	char buf[RPMEMD_META_MAX + 64];
	size_t n = text(buf, sizeof(buf), NULL, NULL);
	/* pad with an unknown key up to exactly the limit: still fine */
	size_t pad = RPMEMD_META_MAX - n;
	memcpy(buf + n, "x=", 2);
	memset(buf + n + 2, 'p', pad - 3);
	buf[n + pad - 1] = '\n';
	struct rpmemd_meta m;
	assert_int_equal(rpmemd_meta_parse(buf, RPMEMD_META_MAX, &m), 0);
	buf[RPMEMD_META_MAX - 1] = 'p';
	buf[RPMEMD_META_MAX] = '\n';
	assert_int_equal(rpmemd_meta_parse(buf, RPMEMD_META_MAX + 1, &m),
			 -EBADMSG);
}

/*
 * a torn file -- every proper prefix of a valid file -- is refused, and
 * never read as a valid one with a shortened value
 */
static void rpmemd_meta_parse__every_truncation_is_ebadmsg(void **state)
{
	(void)state;
	struct rpmemd_meta m = sample(), out;
	char buf[RPMEMD_META_MAX];
	int n = rpmemd_meta_format(&m, buf, sizeof(buf));
	assert_true(n > 0);
	for (int l = 0; l < n; l++) {
		int ret = rpmemd_meta_parse(buf, (size_t)l, &out);
		if (ret != -EBADMSG)
			fail_msg("a file cut to %d of %d bytes gave %d", l, n,
				 ret);
	}
}

static void rpmemd_meta_parse__random_damage_never_crashes(void **state)
{
	(void)state;
	struct rpmemd_meta m = sample(), out;
	char ref[RPMEMD_META_MAX];
	int n = rpmemd_meta_format(&m, ref, sizeof(ref));
	assert_true(n > 0);
	srand(0x3e7a);
	for (int round = 0; round < 20000; round++) {
		char *b = malloc((size_t)n);
		assert_non_null(b);
		memcpy(b, ref, (size_t)n);
		int flips = 1 + rand() % 3;
		for (int k = 0; k < flips; k++)
			b[rand() % n] = (char)rand();
		int ret = rpmemd_meta_parse(b, (size_t)n, &out);
		assert_true(ret == 0 || ret == -EBADMSG);
		if (ret == 0) {
			/* whatever is accepted is well-formed */
			assert_in_range(out.state, 0, RPMEM_POOL_CONSISTENT);
			assert_true(strlen(out.source) <= RPMEM_STR_MAX);
			assert_true(out.size > 0);
		}
		free(b);
	}
}

/* --- files --------------------------------------------------------------- */

static void rpmemd_meta_write__then_read_round_trips(void **state)
{
	(void)state;
	struct rpmemd_meta m = sample(), out;
	assert_int_equal(rpmemd_meta_write(dfd, "db1", &m), 0);
	assert_true(exists("db1.meta"));
	assert_false(exists("db1.meta.tmp"));
	memset(&out, 0, sizeof(out));
	assert_int_equal(rpmemd_meta_read(dfd, "db1", &out), 0);
	assert_memory_equal(&out, &m, sizeof(m));
	char want[RPMEMD_META_MAX];
	rpmemd_meta_format(&m, want, sizeof(want));
	assert_string_equal(file_text("db1.meta"), want);
}

static void rpmemd_meta_write__replaces_the_old_version(void **state)
{
	(void)state;
	struct rpmemd_meta m = sample(), out;
	assert_int_equal(rpmemd_meta_write(dfd, "db1", &m), 0);
	assert_int_equal(rpmemd_meta_transition(&m, RPMEM_POOL_SYNCING), 0);
	assert_int_equal(rpmemd_meta_write(dfd, "db1", &m), 0);
	assert_int_equal(rpmemd_meta_read(dfd, "db1", &out), 0);
	assert_int_equal(out.state, RPMEM_POOL_SYNCING);
	assert_int_equal(rpmemd_meta_transition(&m, RPMEM_POOL_CONSISTENT), 0);
	assert_int_equal(rpmemd_meta_write(dfd, "db1", &m), 0);
	assert_int_equal(rpmemd_meta_read(dfd, "db1", &out), 0);
	assert_int_equal(out.state, RPMEM_POOL_CONSISTENT);
	assert_int_equal(out.generation, 4);
}

static void rpmemd_meta_write__syncs_file_then_renames_then_syncs_dir(
	void **state)
{
	(void)state;
	struct rpmemd_meta m = sample();
	io_reset();
	assert_int_equal(rpmemd_meta_write(dfd, "db1", &m), 0);
	assert_string_equal(io.log, "FRD");
}

/* expect_old -- db1.meta still holds the sample and no tmp file is left */
static void expect_old(void)
{
	struct rpmemd_meta out, m = sample();
	assert_int_equal(rpmemd_meta_read(dfd, "db1", &out), 0);
	assert_memory_equal(&out, &m, sizeof(m));
	assert_false(exists("db1.meta.tmp"));
}

static void rpmemd_meta_write__failed_fsync_keeps_old_version(void **state)
{
	(void)state;
	struct rpmemd_meta m = sample();
	assert_int_equal(rpmemd_meta_write(dfd, "db1", &m), 0);
	m.generation = 99;
	io_reset();
	io.fail_fsync_nth = 1;
	assert_int_equal(rpmemd_meta_write(dfd, "db1", &m), -EIO);
	assert_null(strchr(io.log, 'R')); /* never renamed */
	expect_old();
}

static void rpmemd_meta_write__failed_rename_keeps_old_version(void **state)
{
	(void)state;
	struct rpmemd_meta m = sample();
	assert_int_equal(rpmemd_meta_write(dfd, "db1", &m), 0);
	m.generation = 99;
	io_reset();
	io.fail_rename = 1;
	assert_int_equal(rpmemd_meta_write(dfd, "db1", &m), -ENOSPC);
	expect_old();
}

static void rpmemd_meta_write__short_write_keeps_old_version(void **state)
{
	(void)state;
	struct rpmemd_meta m = sample();
	assert_int_equal(rpmemd_meta_write(dfd, "db1", &m), 0);
	m.generation = 99;
	io_reset();
	io.short_write = 1;
	assert_int_equal(rpmemd_meta_write(dfd, "db1", &m), -ENOSPC);
	assert_int_equal(io.short_write, 2); /* the fault was hit */
	expect_old();
}

static void rpmemd_meta_write__failed_dir_fsync_is_reported(void **state)
{
	(void)state;
	struct rpmemd_meta m = sample(), out;
	assert_int_equal(rpmemd_meta_write(dfd, "db1", &m), 0);
	m.generation = 99;
	io_reset();
	io.fail_fsync_nth = 2; /* the directory, after the rename */
	assert_int_equal(rpmemd_meta_write(dfd, "db1", &m), -EIO);
	/* the rename happened: the new version is visible, not yet durable */
	assert_int_equal(rpmemd_meta_read(dfd, "db1", &out), 0);
	assert_int_equal(out.generation, 99);
}

static void rpmemd_meta_read__leftover_tmp_file_is_ignored(void **state)
{
	(void)state;
	struct rpmemd_meta m = sample(), out;
	assert_int_equal(rpmemd_meta_write(dfd, "db1", &m), 0);
	/* a crash after the tmp file was half written, before the rename */
	static const char torn[] = "magic=rpmemd-pool-meta\nversion=1\nuu";
	put_file("db1.meta.tmp", torn, sizeof(torn) - 1);
	assert_int_equal(rpmemd_meta_read(dfd, "db1", &out), 0);
	assert_memory_equal(&out, &m, sizeof(m));
	/* it is not taken for a pool either */
	char name[RPMEM_NAME_MAX + 1];
	assert_int_equal(rpmemd_meta_pool_name("db1.meta.tmp", name), 0);
	/* and the next store goes through and removes it */
	m.generation = 7;
	assert_int_equal(rpmemd_meta_write(dfd, "db1", &m), 0);
	assert_false(exists("db1.meta.tmp"));
	assert_int_equal(rpmemd_meta_read(dfd, "db1", &out), 0);
	assert_int_equal(out.generation, 7);
}

/* planted -- a tmp file planted as a link to "target" is refused untouched */
static void planted(int (*plant)(void), int err)
{
	struct rpmemd_meta m = sample(), out;
	assert_int_equal(rpmemd_meta_write(dfd, "db1", &m), 0);
	put_file("target", "outside", 7);
	assert_int_equal(plant(), 0);
	m.generation = 8;
	assert_int_equal(rpmemd_meta_write(dfd, "db1", &m), err);
	assert_string_equal(file_text("target"), "outside");
	assert_int_equal(rpmemd_meta_read(dfd, "db1", &out), 0);
	assert_int_equal(out.generation, 3);
}

static int plant_hard(void)
{
	return linkat(dfd, "target", dfd, "db1.meta.tmp", 0);
}

static int plant_sym(void)
{
	return symlinkat("target", dfd, "db1.meta.tmp");
}

static void rpmemd_meta_write__hard_linked_tmp_is_emlink_untouched(
	void **state)
{
	(void)state;
	planted(plant_hard, -EMLINK);
}

static void rpmemd_meta_write__symlinked_tmp_is_eloop_untouched(void **state)
{
	(void)state;
	planted(plant_sym, -ELOOP);
}

static void rpmemd_meta_write__file_is_0600(void **state)
{
	(void)state;
	struct rpmemd_meta m = sample();
	struct stat st;
	assert_int_equal(rpmemd_meta_write(dfd, "db1", &m), 0);
	assert_int_equal(fstatat(dfd, "db1.meta", &st, 0), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
}

static void rpmemd_meta_read__missing_is_enoent(void **state)
{
	(void)state;
	struct rpmemd_meta out;
	assert_int_equal(rpmemd_meta_read(dfd, "db2", &out), -ENOENT);
}

static void rpmemd_meta_read__corrupt_file_is_ebadmsg(void **state)
{
	(void)state;
	struct rpmemd_meta out;
	put_file("db1.meta", "garbage\n", 8);
	assert_int_equal(rpmemd_meta_read(dfd, "db1", &out), -EBADMSG);
	put_file("db1.meta", "", 0);
	assert_int_equal(rpmemd_meta_read(dfd, "db1", &out), -EBADMSG);
	char buf[RPMEMD_META_MAX];
	size_t n = text(buf, sizeof(buf), NULL, NULL);
	put_file("db1.meta", buf, n / 2);
	assert_int_equal(rpmemd_meta_read(dfd, "db1", &out), -EBADMSG);
	buf[n / 3] = '\0';
	put_file("db1.meta", buf, n);
	assert_int_equal(rpmemd_meta_read(dfd, "db1", &out), -EBADMSG);
}

static void rpmemd_meta_read__oversize_file_is_ebadmsg(void **state)
{
	(void)state;
	struct rpmemd_meta out;
	char buf[RPMEMD_META_MAX * 2];
	size_t n = text(buf, sizeof(buf), NULL, NULL);
	memset(buf + n, '#', sizeof(buf) - n);
	put_file("db1.meta", buf, sizeof(buf));
	assert_int_equal(rpmemd_meta_read(dfd, "db1", &out), -EBADMSG);
}

static void rpmemd_meta_read__symlink_is_refused(void **state)
{
	(void)state;
	struct rpmemd_meta m = sample(), out;
	assert_int_equal(rpmemd_meta_write(dfd, "db2", &m), 0);
	assert_int_equal(symlinkat("db2.meta", dfd, "link.meta"), 0);
	assert_int_equal(rpmemd_meta_read(dfd, "link", &out), -ELOOP);
}

static void rpmemd_meta_read__a_file_others_may_write_is_eperm(void **state)
{
	(void)state;
	struct rpmemd_meta m = sample(), out;
	assert_int_equal(rpmemd_meta_write(dfd, "db3", &m), 0);
	assert_int_equal(fchmodat(dfd, "db3.meta", 0620, 0), 0);
	assert_int_equal(rpmemd_meta_read(dfd, "db3", &out), -EPERM);
	assert_int_equal(rpmemd_open_own(dfd, "db3.meta", O_RDWR), -EPERM);
	assert_int_equal(rpmemd_own_at(dfd, "db3.meta"), -EPERM);
	/* region_check = "warn": used all the same */
	rpmemd_region_check_set(1);
	assert_int_equal(rpmemd_meta_read(dfd, "db3", &out), 0);
	int fd = rpmemd_open_ro(dfd, "db3.meta");
	assert_true(fd >= 0);
	close(fd);
	rpmemd_region_check_set(0);
	assert_int_equal(fchmodat(dfd, "db3.meta", 0600, 0), 0);
	assert_int_equal(rpmemd_meta_read(dfd, "db3", &out), 0);
	assert_int_equal(rpmemd_own_at(dfd, "db3.meta"), 0);
}

static void rpmemd_untrusted__owner_and_mode(void **state)
{
	(void)state;
	struct stat st = { .st_uid = geteuid(), .st_mode = S_IFDIR | 01777 };
	char why[96];

	assert_string_equal(rpmemd_untrusted(&st, why, sizeof(why)),
			    "writable by others (mode 1777)");
	st.st_mode = S_IFDIR | 0775;
	assert_string_equal(rpmemd_untrusted(&st, why, sizeof(why)),
			    "writable by its group (mode 0775)");
	st.st_mode = S_IFREG | 0644;
	assert_null(rpmemd_untrusted(&st, why, sizeof(why)));
	st.st_uid = geteuid() + 1;
	assert_non_null(strstr(rpmemd_untrusted(&st, why, sizeof(why)),
			       "not rpmemd's user"));
}

static void rpmemd_meta__bad_pool_names_are_einval(void **state)
{
	(void)state;
	static const char *const bad[] = { "", ".", "..", "../db1", "a/b",
					   ".hidden" };
	struct rpmemd_meta m = sample(), out;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(rpmemd_meta_read(dfd, bad[i], &out), -EINVAL);
		assert_int_equal(rpmemd_meta_write(dfd, bad[i], &m), -EINVAL);
		assert_int_equal(rpmemd_meta_unlink(dfd, bad[i]), -EINVAL);
	}
}

static void rpmemd_meta_unlink__removes_the_file(void **state)
{
	(void)state;
	struct rpmemd_meta m = sample(), out;
	assert_int_equal(rpmemd_meta_write(dfd, "db1", &m), 0);
	io_reset();
	assert_int_equal(rpmemd_meta_unlink(dfd, "db1"), 0);
	assert_string_equal(io.log, "D");
	assert_int_equal(rpmemd_meta_read(dfd, "db1", &out), -ENOENT);
	assert_int_equal(rpmemd_meta_unlink(dfd, "db1"), -ENOENT);
}

static void rpmemd_meta_pool_name__only_valid_meta_files(void **state)
{
	(void)state;
	char out[RPMEM_NAME_MAX + 1], f[128];
	assert_int_equal(rpmemd_meta_pool_name("db1.meta", out), 1);
	assert_string_equal(out, "db1");
	assert_int_equal(rpmemd_meta_pool_name("a.b.meta", out), 1);
	assert_string_equal(out, "a.b");
	static const char *const bad[] = { ".meta", "db1", "db1.meta.tmp",
					   "db1.metax", ".hidden.meta",
					   "a b.meta", "db1.META", "" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(rpmemd_meta_pool_name(bad[i], out), 0);
	memset(f, 'n', RPMEM_NAME_MAX);
	strcpy(f + RPMEM_NAME_MAX, ".meta");
	assert_int_equal(rpmemd_meta_pool_name(f, out), 1);
	assert_int_equal(strlen(out), RPMEM_NAME_MAX);
	memset(f, 'n', RPMEM_NAME_MAX + 1);
	strcpy(f + RPMEM_NAME_MAX + 1, ".meta");
	assert_int_equal(rpmemd_meta_pool_name(f, out), 0);
}

#define T(f) cmocka_unit_test_setup(f, each_setup)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(rpmemd_meta_init__empty_pool_with_random_uuid),
		T(rpmemd_meta_transition__empty_to_syncing),
		T(rpmemd_meta_transition__syncing_to_syncing_resumes),
		T(rpmemd_meta_transition__syncing_to_consistent_increments_generation),
		T(rpmemd_meta_transition__consistent_to_syncing),
		T(rpmemd_meta_transition__empty_to_consistent_refused),
		T(rpmemd_meta_transition__consistent_to_consistent_refused),
		T(rpmemd_meta_transition__anything_to_empty_refused),
		T(rpmemd_meta_transition__bad_values_refused),
		T(rpmemd_meta_set_source__sanitizes_and_truncates),
		T(rpmemd_meta_format__documented_layout),
		T(rpmemd_meta_format__small_buffer_is_emsgsize),
		T(rpmemd_meta_parse__round_trips_every_state),
		T(rpmemd_meta_parse__missing_key_is_ebadmsg),
		T(rpmemd_meta_parse__duplicate_key_is_ebadmsg),
		T(rpmemd_meta_parse__unknown_key_is_ignored),
		T(rpmemd_meta_parse__magic_and_version_lead),
		T(rpmemd_meta_parse__bad_values_are_ebadmsg),
		T(rpmemd_meta_parse__garbage_is_ebadmsg),
		T(rpmemd_meta_parse__oversize_is_ebadmsg),
		T(rpmemd_meta_parse__every_truncation_is_ebadmsg),
		T(rpmemd_meta_parse__random_damage_never_crashes),
		T(rpmemd_meta_write__then_read_round_trips),
		T(rpmemd_meta_write__replaces_the_old_version),
		T(rpmemd_meta_write__syncs_file_then_renames_then_syncs_dir),
		T(rpmemd_meta_write__failed_fsync_keeps_old_version),
		T(rpmemd_meta_write__failed_rename_keeps_old_version),
		T(rpmemd_meta_write__short_write_keeps_old_version),
		T(rpmemd_meta_write__failed_dir_fsync_is_reported),
		T(rpmemd_meta_read__leftover_tmp_file_is_ignored),
		T(rpmemd_meta_read__missing_is_enoent),
		T(rpmemd_meta_read__corrupt_file_is_ebadmsg),
		T(rpmemd_meta_read__oversize_file_is_ebadmsg),
		T(rpmemd_meta_write__hard_linked_tmp_is_emlink_untouched),
		T(rpmemd_meta_write__symlinked_tmp_is_eloop_untouched),
		T(rpmemd_meta_write__file_is_0600),
		T(rpmemd_meta_read__symlink_is_refused),
		T(rpmemd_meta_read__a_file_others_may_write_is_eperm),
		T(rpmemd_untrusted__owner_and_mode),
		T(rpmemd_meta__bad_pool_names_are_einval),
		T(rpmemd_meta_unlink__removes_the_file),
		T(rpmemd_meta_pool_name__only_valid_meta_files),
		T(rpmemd_meta_parse__role_and_history),
	};
	return cmocka_run_group_tests_name("meta", tests, setup, teardown);
}
