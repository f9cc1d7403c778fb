/* SPDX-License-Identifier: BSD-3-Clause */
/* devdax.c -- unit tests of the devdax pool table (daemon/storage/pool/devdax.c) */

/*
 * A regular temporary file stands in for /dev/daxX.Y (libpmem2 maps it
 * with page granularity). Link-time wraps of pmem2_get_memcpy_fn and
 * pmem2_map_get_address record every table write, so the crash tests can
 * rebuild the table image as it would be after a crash at any byte of any
 * of those writes:
 *	-Wl,--wrap=pmem2_get_memcpy_fn -Wl,--wrap=pmem2_map_get_address
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
#include <unistd.h>

#include <cmocka.h>
#include <libpmem2.h>

#include "devdax.h"
#include "log.h"
#include "util.h"

#define MiB (1024ull * 1024)
#define KiB 1024ull

/* --- recording of table writes ------------------------------------------ */

#define MAX_REC 16
#define REC_MAX_LEN 4096

struct rec_write {
	uint64_t off;
	size_t len;
	uint8_t data[REC_MAX_LEN];
};

static struct {
	int on;
	unsigned n;
	int overflow;
	struct rec_write w[MAX_REC];
} rec;

static uint8_t *map_base;
static pmem2_memcpy_fn real_memcpy;

void *__real_pmem2_map_get_address(struct pmem2_map *map);
pmem2_memcpy_fn __real_pmem2_get_memcpy_fn(struct pmem2_map *map);

void *__wrap_pmem2_map_get_address(struct pmem2_map *map)
{
	map_base = __real_pmem2_map_get_address(map);
	return map_base;
}

static void *rec_memcpy(void *dst, const void *src, size_t len,
			unsigned flags)
{
	if (rec.on) {
		if (rec.n == MAX_REC || len > REC_MAX_LEN) {
			rec.overflow = 1;
		} else {
			struct rec_write *w = &rec.w[rec.n++];

			w->off = (uint64_t)((uint8_t *)dst - map_base);
			w->len = len;
			memcpy(w->data, src, len);
		}
	}
	return real_memcpy(dst, src, len, flags);
}

pmem2_memcpy_fn __wrap_pmem2_get_memcpy_fn(struct pmem2_map *map)
{
	real_memcpy = __real_pmem2_get_memcpy_fn(map);
	return rec_memcpy;
}

static void rec_start(void)
{
	memset(&rec, 0, sizeof(rec));
	rec.on = 1;
}

static void rec_stop(void)
{
	rec.on = 0;
	assert_false(rec.overflow);
}

/* --- log capture --------------------------------------------------------- */

static char last_err[1024];

static void log_sink(int prio, const char *msg, void *arg)
{
	(void)arg;
	if (prio <= LOG_ERR)
		rpmem_strlcpy(last_err, msg, sizeof(last_err));
}

/* --- fixtures ------------------------------------------------------------ */

struct fx {
	char path[64];
	uint64_t size;
};

static int fx_make(void **state, uint64_t size)
{
	struct fx *fx = calloc(1, sizeof(*fx));
	int fd;

	if (!fx)
		return -1;
	strcpy(fx->path, "/tmp/rpmem-devdax-test.XXXXXX");
	fd = mkstemp(fx->path);
	if (fd < 0 || ftruncate(fd, (off_t)size)) {
		free(fx);
		return -1;
	}
	close(fd);
	fx->size = size;
	*state = fx;
	return 0;
}

static int setup_16m(void **state)
{
	return fx_make(state, 16 * MiB);
}

static int setup_small(void **state)
{
	return fx_make(state, 128 * KiB);
}

static int teardown(void **state)
{
	struct fx *fx = *state;

	unlink(fx->path);
	free(fx);
	return 0;
}

static void file_read(const struct fx *fx, uint64_t off, void *buf,
		      size_t len)
{
	int fd = open(fx->path, O_RDONLY);

	assert_true(fd >= 0);
	assert_int_equal(pread(fd, buf, len, (off_t)off), (ssize_t)len);
	close(fd);
}

static void file_write(const struct fx *fx, uint64_t off, const void *buf,
		       size_t len)
{
	int fd = open(fx->path, O_WRONLY);

	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, buf, len, (off_t)off), (ssize_t)len);
	close(fd);
}

static struct rpmemd_devdax *open_ok(const struct fx *fx, int format,
				     uint64_t align, uint32_t max_pools)
{
	struct rpmemd_devdax_opts o = { format, align, max_pools };
	struct rpmemd_devdax *dd = NULL;

	assert_int_equal(rpmemd_devdax_open_opts(fx->path, &o, &dd), 0);
	assert_non_null(dd);
	return dd;
}

static void pool_equal(const struct rpmemd_devdax_pool *a,
		       const struct rpmemd_devdax_pool *b)
{
	assert_string_equal(a->name, b->name);
	assert_int_equal(a->offset, b->offset);
	assert_int_equal(a->extent, b->extent);
	assert_memory_equal(a->meta.uuid, b->meta.uuid, 16);
	assert_int_equal(a->meta.size, b->meta.size);
	assert_int_equal(a->meta.state, b->meta.state);
	assert_int_equal(a->meta.generation, b->meta.generation);
	assert_int_equal(a->meta.created, b->meta.created);
	assert_int_equal(a->meta.last_sync, b->meta.last_sync);
	assert_string_equal(a->meta.source, b->meta.source);
}

/* --- format and open ----------------------------------------------------- */

static void open__formats_a_blank_device_and_reopens_it(void **state)
{
	struct fx *fx = *state;
	struct rpmemd_devdax_info i1, i2;
	struct rpmemd_devdax *dd;
	char magic[8];

	dd = open_ok(fx, RPMEMD_DEVDAX_FORMAT_BLANK, 0, 0);
	rpmemd_devdax_info(dd, &i1);
	assert_int_equal(i1.npools, 0);
	assert_int_equal(i1.max_pools, RPMEMD_DEVDAX_DEFAULT_POOLS);
	assert_int_equal(i1.align, 4096);
	assert_int_equal(i1.data_offset, 1 * MiB);
	assert_int_equal(i1.dev_size, 16 * MiB);
	assert_int_equal(i1.free, 15 * MiB);
	assert_int_equal(i1.largest_free, 15 * MiB);
	rpmemd_devdax_close(&dd);
	assert_null(dd);
	rpmemd_devdax_close(&dd); /* NULL is fine */

	file_read(fx, 0, magic, 8);
	assert_memory_equal(magic, RPMEMD_DEVDAX_MAGIC, 8);

	dd = open_ok(fx, RPMEMD_DEVDAX_NO_FORMAT, 0, 0);
	rpmemd_devdax_info(dd, &i2);
	assert_memory_equal(i1.uuid, i2.uuid, 16);
	assert_int_equal(i2.data_offset, i1.data_offset);
	rpmemd_devdax_close(&dd);
}

static void open__blank_device_without_format_is_enodata(void **state)
{
	struct fx *fx = *state;
	struct rpmemd_devdax *dd = NULL;

	assert_int_equal(rpmemd_devdax_open(fx->path, RPMEMD_DEVDAX_NO_FORMAT,
					    &dd),
			 -ENODATA);
	assert_null(dd);
}

static void open__foreign_signature_is_refused_unless_forced(void **state)
{
	struct fx *fx = *state;
	struct rpmemd_devdax *dd = NULL;
	uint8_t sb[1024] = { 0x53, 0xef }; /* something at 1 KiB, like ext4 */

	file_write(fx, 1024, sb, sizeof(sb));
	assert_int_equal(rpmemd_devdax_open(fx->path,
					    RPMEMD_DEVDAX_FORMAT_BLANK, &dd),
			 -EMEDIUMTYPE);
	assert_null(dd);
	assert_non_null(strstr(last_err, "foreign"));
	file_write(fx, 0, "XFSB", 4);
	assert_int_equal(rpmemd_devdax_open(fx->path,
					    RPMEMD_DEVDAX_FORMAT_BLANK, &dd),
			 -EMEDIUMTYPE);
	dd = open_ok(fx, RPMEMD_DEVDAX_FORMAT_FORCE, 0, 0);
	rpmemd_devdax_close(&dd);
	dd = open_ok(fx, RPMEMD_DEVDAX_NO_FORMAT, 0, 0);
	rpmemd_devdax_close(&dd);
}

static void open__corrupt_header_checksum_is_refused(void **state)
{
	struct fx *fx = *state;
	struct rpmemd_devdax *dd;
	uint8_t b;

	dd = open_ok(fx, RPMEMD_DEVDAX_FORMAT_BLANK, 0, 0);
	assert_int_equal(rpmemd_devdax_create(dd, "p", 4096, NULL), 0);
	rpmemd_devdax_close(&dd);
	file_read(fx, 40, &b, 1); /* alignment field */
	b ^= 0x01;
	file_write(fx, 40, &b, 1);
	last_err[0] = '\0';
	assert_int_equal(rpmemd_devdax_open(fx->path,
					    RPMEMD_DEVDAX_FORMAT_BLANK, &dd),
			 -EBADMSG);
	assert_null(dd);
	assert_non_null(strstr(last_err, "header checksum mismatch"));
	assert_non_null(strstr(last_err, fx->path));
}

static void open__damaged_magic_of_a_used_table_is_not_blank(void **state)
{
	struct fx *fx = *state;
	struct rpmemd_devdax *dd;

	dd = open_ok(fx, RPMEMD_DEVDAX_FORMAT_BLANK, 0, 0);
	assert_int_equal(rpmemd_devdax_create(dd, "p", 4096, NULL), 0);
	rpmemd_devdax_close(&dd);
	file_write(fx, 0, "\0\0\0\0", 4);
	assert_int_equal(rpmemd_devdax_open(fx->path,
					    RPMEMD_DEVDAX_FORMAT_BLANK, &dd),
			 -EMEDIUMTYPE);
	assert_null(dd);
}

static void open__second_user_is_ebusy(void **state)
{
	struct fx *fx = *state;
	struct rpmemd_devdax *dd, *dd2 = NULL;

	dd = open_ok(fx, RPMEMD_DEVDAX_FORMAT_BLANK, 0, 0);
	assert_int_equal(rpmemd_devdax_open(fx->path, RPMEMD_DEVDAX_NO_FORMAT,
					    &dd2),
			 -EBUSY);
	assert_null(dd2);
	rpmemd_devdax_close(&dd);
}

static void open__too_small_device_is_enospc(void **state)
{
	struct fx *fx = *state;
	struct rpmemd_devdax *dd = NULL;

	/* 128 KiB cannot hold the default 1 MiB table */
	assert_int_equal(rpmemd_devdax_open(fx->path,
					    RPMEMD_DEVDAX_FORMAT_BLANK, &dd),
			 -ENOSPC);
	assert_null(dd);
}

/* --- create, remove, lookup ---------------------------------------------- */

static void create__several_remove_one_reopen_same_table(void **state)
{
	struct fx *fx = *state;
	struct rpmemd_devdax_pool a, b, c, x, *l;
	struct rpmemd_devdax *dd;
	size_t n;

	dd = open_ok(fx, RPMEMD_DEVDAX_FORMAT_BLANK, 0, 0);
	assert_int_equal(rpmemd_devdax_create(dd, "alpha", 1 * MiB, &a), 0);
	assert_int_equal(rpmemd_devdax_create(dd, "beta", 100, &b), 0);
	assert_int_equal(rpmemd_devdax_create(dd, "gamma", 3 * MiB + 1, &c),
			 0);
	assert_int_equal(a.meta.state, RPMEM_POOL_EMPTY);
	assert_int_equal(a.meta.generation, 0);
	assert_int_equal(b.meta.size, 100);
	assert_int_equal(b.extent, 4096);
	assert_int_equal(c.extent, 3 * MiB + 4096);
	assert_int_equal(a.offset, 1 * MiB);
	assert_int_equal(b.offset, 2 * MiB);
	assert_int_equal(c.offset, 2 * MiB + 4096);
	assert_memory_not_equal(a.meta.uuid, b.meta.uuid, 16);
	assert_int_equal(rpmemd_devdax_remove(dd, "beta"), 0);
	assert_int_equal(rpmemd_devdax_remove(dd, "beta"), -ENOENT);
	assert_int_equal(rpmemd_devdax_lookup(dd, "beta", &x), -ENOENT);
	rpmemd_devdax_close(&dd);

	dd = open_ok(fx, RPMEMD_DEVDAX_NO_FORMAT, 0, 0);
	assert_int_equal(rpmemd_devdax_list(dd, &l, &n), 0);
	assert_int_equal(n, 2);
	pool_equal(&l[0], &a);
	pool_equal(&l[1], &c);
	free(l);
	assert_int_equal(rpmemd_devdax_lookup(dd, "gamma", &x), 0);
	pool_equal(&x, &c);
	/* first fit: the hole beta left is reused */
	assert_int_equal(rpmemd_devdax_create(dd, "delta", 4096, &x), 0);
	assert_int_equal(x.offset, b.offset);
	rpmemd_devdax_close(&dd);
}

static void list__empty_table_gives_null(void **state)
{
	struct fx *fx = *state;
	struct rpmemd_devdax_pool *l = (void *)1;
	struct rpmemd_devdax *dd;
	size_t n = 7;

	dd = open_ok(fx, RPMEMD_DEVDAX_FORMAT_BLANK, 0, 0);
	assert_int_equal(rpmemd_devdax_list(dd, &l, &n), 0);
	assert_null(l);
	assert_int_equal(n, 0);
	rpmemd_devdax_close(&dd);
}

static void create__respects_the_alignment(void **state)
{
	struct fx *fx = *state;
	static const uint64_t sizes[] = { 1, 2 * MiB, 2 * MiB + 1, 12345,
					  4 * MiB - 1 };
	struct rpmemd_devdax_pool p[ARRAY_SIZE(sizes)];
	struct rpmemd_devdax_info info;
	struct rpmemd_devdax *dd;
	char name[8];

	dd = open_ok(fx, RPMEMD_DEVDAX_FORMAT_BLANK, 2 * MiB, 0);
	rpmemd_devdax_info(dd, &info);
	assert_int_equal(info.align, 2 * MiB);
	assert_int_equal(info.data_offset, 2 * MiB);
	for (size_t i = 0; i < ARRAY_SIZE(sizes); i++) {
		snprintf(name, sizeof(name), "p%zu", i);
		assert_int_equal(rpmemd_devdax_create(dd, name, sizes[i],
						      &p[i]),
				 0);
		assert_int_equal(p[i].offset % (2 * MiB), 0);
		assert_int_equal(p[i].extent % (2 * MiB), 0);
		assert_true(p[i].extent >= sizes[i]);
		assert_true(p[i].extent < sizes[i] + 2 * MiB);
		if (i)
			assert_int_equal(p[i].offset,
					 p[i - 1].offset + p[i - 1].extent);
	}
	/* 2 + 2 + 4 + 2 + 4 MiB: the 14 MiB after the table are used up */
	assert_int_equal(p[4].offset + p[4].extent, 16 * MiB);
	assert_int_equal(rpmemd_devdax_create(dd, "more", 1, NULL), -ENOSPC);
	rpmemd_devdax_close(&dd);
	/* the alignment is a property of the table, not of the open */
	dd = open_ok(fx, RPMEMD_DEVDAX_NO_FORMAT, 0, 0);
	rpmemd_devdax_info(dd, &info);
	assert_int_equal(info.align, 2 * MiB);
	rpmemd_devdax_close(&dd);
}

static void create__full_region_is_enospc_with_free_space_logged(void **state)
{
	struct fx *fx = *state;
	struct rpmemd_devdax_info info;
	struct rpmemd_devdax *dd;

	dd = open_ok(fx, RPMEMD_DEVDAX_FORMAT_BLANK, 0, 0);
	assert_int_equal(rpmemd_devdax_create(dd, "big", 16 * MiB, NULL),
			 -ENOSPC);
	assert_non_null(strstr(last_err, "15 MiB free"));
	assert_int_equal(rpmemd_devdax_create(dd, "a", 5 * MiB, NULL), 0);
	assert_int_equal(rpmemd_devdax_create(dd, "b", 5 * MiB, NULL), 0);
	assert_int_equal(rpmemd_devdax_create(dd, "c", 5 * MiB, NULL), 0);
	rpmemd_devdax_info(dd, &info);
	assert_int_equal(info.free, 0);
	assert_int_equal(rpmemd_devdax_create(dd, "d", 1, NULL), -ENOSPC);
	/* free space in two holes, none large enough */
	assert_int_equal(rpmemd_devdax_remove(dd, "a"), 0);
	assert_int_equal(rpmemd_devdax_remove(dd, "c"), 0);
	assert_int_equal(rpmemd_devdax_create(dd, "e", 6 * MiB, NULL), -ENOSPC);
	assert_non_null(
		strstr(last_err, "10 MiB free, largest free extent 5 MiB"));
	rpmemd_devdax_info(dd, &info);
	assert_int_equal(info.free, 10 * MiB);
	assert_int_equal(info.largest_free, 5 * MiB);
	assert_int_equal(rpmemd_devdax_create(dd, "e", 5 * MiB, NULL), 0);
	assert_int_equal(rpmemd_devdax_create(dd, "f", 5 * MiB, NULL), 0);
	rpmemd_devdax_close(&dd);
}

static void create__full_table_is_enospc(void **state)
{
	struct fx *fx = *state;
	struct rpmemd_devdax *dd;
	char name[16];

	dd = open_ok(fx, RPMEMD_DEVDAX_FORMAT_BLANK, 0, 4);
	for (int i = 0; i < 4; i++) {
		snprintf(name, sizeof(name), "p%d", i);
		assert_int_equal(rpmemd_devdax_create(dd, name, 4096, NULL), 0);
	}
	assert_int_equal(rpmemd_devdax_create(dd, "p4", 4096, NULL), -ENOSPC);
	assert_non_null(strstr(last_err, "table is full"));
	assert_int_equal(rpmemd_devdax_remove(dd, "p2"), 0);
	assert_int_equal(rpmemd_devdax_create(dd, "p4", 4096, NULL), 0);
	rpmemd_devdax_close(&dd);
}

static void create__existing_name_is_eexist(void **state)
{
	struct fx *fx = *state;
	struct rpmemd_devdax *dd;

	dd = open_ok(fx, RPMEMD_DEVDAX_FORMAT_BLANK, 0, 0);
	assert_int_equal(rpmemd_devdax_create(dd, "db", 4096, NULL), 0);
	assert_int_equal(rpmemd_devdax_create(dd, "db", 8192, NULL), -EEXIST);
	rpmemd_devdax_close(&dd);
}

static void create__invalid_name_or_size_is_einval(void **state)
{
	struct fx *fx = *state;
	static const char *const bad[] = { "",	    ".",    "..", ".hidden",
					   "a/b",   "a b",  "/x", "x\n",
					   "p\xc3\xa9" };
	char longname[RPMEM_NAME_MAX + 2];
	struct rpmemd_devdax_info info;
	struct rpmemd_devdax *dd;

	dd = open_ok(fx, RPMEMD_DEVDAX_FORMAT_BLANK, 0, 0);
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
		assert_int_equal(rpmemd_devdax_create(dd, bad[i], 4096, NULL),
				 -EINVAL);
	assert_int_equal(rpmemd_devdax_create(dd, NULL, 4096, NULL), -EINVAL);
	memset(longname, 'a', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	assert_int_equal(rpmemd_devdax_create(dd, longname, 4096, NULL),
			 -EINVAL);
	longname[RPMEM_NAME_MAX] = '\0';
	assert_int_equal(rpmemd_devdax_create(dd, longname, 4096, NULL), 0);
	assert_int_equal(rpmemd_devdax_create(dd, "zero", 0, NULL), -EINVAL);
	assert_int_equal(rpmemd_devdax_create(dd, "huge", UINT64_MAX, NULL),
			 -EINVAL);
	assert_int_equal(rpmemd_devdax_remove(dd, "../x"), -EINVAL);
	rpmemd_devdax_info(dd, &info);
	assert_int_equal(info.npools, 1);
	rpmemd_devdax_close(&dd);
}

/* --- state, data --------------------------------------------------------- */

static void set_state__follows_the_pool_state_rules(void **state)
{
	struct fx *fx = *state;
	struct rpmemd_devdax_pool p;
	struct rpmemd_devdax *dd;

	dd = open_ok(fx, RPMEMD_DEVDAX_FORMAT_BLANK, 0, 0);
	assert_int_equal(rpmemd_devdax_create(dd, "p", 4096, NULL), 0);
	assert_int_equal(rpmemd_devdax_set_state(dd, "p",
						 RPMEM_POOL_CONSISTENT, NULL),
			 -EINVAL);
	assert_int_equal(rpmemd_devdax_set_state(dd, "p", 7, NULL), -EINVAL);
	assert_int_equal(rpmemd_devdax_set_state(dd, "nope",
						 RPMEM_POOL_SYNCING, NULL),
			 -ENOENT);
	assert_int_equal(rpmemd_devdax_set_state(dd, "p", RPMEM_POOL_SYNCING,
						 "host-a:/mnt/pmem/db"),
			 0);
	assert_int_equal(rpmemd_devdax_set_state(dd, "p", RPMEM_POOL_SYNCING,
						 NULL),
			 0);
	assert_int_equal(rpmemd_devdax_set_state(dd, "p",
						 RPMEM_POOL_CONSISTENT, NULL),
			 0);
	assert_int_equal(rpmemd_devdax_lookup(dd, "p", &p), 0);
	assert_int_equal(p.meta.state, RPMEM_POOL_CONSISTENT);
	assert_int_equal(p.meta.generation, 1);
	assert_true(p.meta.last_sync > 0);
	assert_string_equal(p.meta.source, "host-a:/mnt/pmem/db");
	assert_int_equal(rpmemd_devdax_set_state(dd, "p",
						 RPMEM_POOL_CONSISTENT, NULL),
			 -EINVAL);
	assert_int_equal(rpmemd_devdax_set_state(dd, "p", RPMEM_POOL_SYNCING,
						 NULL),
			 0);
	assert_int_equal(rpmemd_devdax_set_state(dd, "p",
						 RPMEM_POOL_CONSISTENT, "b"),
			 0);
	rpmemd_devdax_close(&dd);

	dd = open_ok(fx, RPMEMD_DEVDAX_NO_FORMAT, 0, 0);
	assert_int_equal(rpmemd_devdax_lookup(dd, "p", &p), 0);
	assert_int_equal(p.meta.state, RPMEM_POOL_CONSISTENT);
	assert_int_equal(p.meta.generation, 2);
	assert_string_equal(p.meta.source, "b");
	rpmemd_devdax_close(&dd);
}

/* a role and the newest RPMEMD_DEVDAX_HIST ids survive a state change
 * and a reopen; a slot with an impossible count is refused */
static void set_gen__role_and_history_persist(void **state)
{
	struct fx *fx = *state;
	struct rpmemd_devdax_pool p;
	struct rpmemd_devdax *dd;
	struct rpmemd_meta m;

	dd = open_ok(fx, RPMEMD_DEVDAX_FORMAT_BLANK, 0, 0);
	assert_int_equal(rpmemd_devdax_create(dd, "p", 4096, NULL), 0);
	assert_int_equal(rpmemd_devdax_lookup(dd, "p", &p), 0);
	assert_int_equal(p.meta.role, RPMEM_ROLE_SECONDARY);
	assert_int_equal(p.meta.nhist, 0);
	memset(&m, 0, sizeof(m));
	m.role = RPMEM_ROLE_PRIMARY;
	for (unsigned i = 0; i < RPMEM_MAX_GENERATIONS; i++)
		rpmemd_meta_hist_push(&m, 100 + i);
	assert_int_equal(rpmemd_devdax_set_gen(dd, "nope", &m), -ENOENT);
	assert_int_equal(rpmemd_devdax_set_gen(dd, "p", &m), 0);
	assert_int_equal(rpmemd_devdax_set_state(dd, "p", RPMEM_POOL_SYNCING,
						 "h:/x"),
			 0);
	rpmemd_devdax_close(&dd);

	dd = open_ok(fx, RPMEMD_DEVDAX_NO_FORMAT, 0, 0);
	assert_int_equal(rpmemd_devdax_lookup(dd, "p", &p), 0);
	assert_int_equal(p.meta.role, RPMEM_ROLE_PRIMARY);
	assert_int_equal(p.meta.nhist, RPMEMD_DEVDAX_HIST);
	assert_int_equal(p.meta.hist[0], 100 + RPMEM_MAX_GENERATIONS - 1);
	assert_int_equal(p.meta.hist[RPMEMD_DEVDAX_HIST - 1],
			 100 + RPMEM_MAX_GENERATIONS - RPMEMD_DEVDAX_HIST);
	assert_int_equal(p.meta.state, RPMEM_POOL_SYNCING);
	rpmemd_devdax_close(&dd);
}

static void pool_addr__data_written_there_persists(void **state)
{
	struct fx *fx = *state;
	struct rpmemd_devdax_pool p;
	struct rpmemd_devdax *dd;
	uint8_t buf[8192], back[8192];
	uint64_t size;
	void *addr;

	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 7 + 3);
	dd = open_ok(fx, RPMEMD_DEVDAX_FORMAT_BLANK, 0, 0);
	assert_int_equal(rpmemd_devdax_create(dd, "p", sizeof(buf), &p), 0);
	assert_int_equal(rpmemd_devdax_pool_addr(dd, "p", &addr, &size), 0);
	assert_int_equal(size, sizeof(buf));
	memcpy(addr, buf, sizeof(buf));
	assert_int_equal(rpmemd_devdax_persist(dd, addr, sizeof(buf)), 0);
	/* nothing outside the data area */
	assert_int_equal(rpmemd_devdax_persist(dd, (uint8_t *)addr - p.offset,
					       16),
			 -ERANGE);
	assert_int_equal(rpmemd_devdax_persist(dd, addr, 16 * MiB), -ERANGE);
	assert_int_equal(rpmemd_devdax_pool_addr(dd, "q", &addr, &size),
			 -ENOENT);
	rpmemd_devdax_close(&dd);
	file_read(fx, p.offset, back, sizeof(back));
	assert_memory_equal(buf, back, sizeof(buf));

	/* a new pool in the same place starts zeroed */
	dd = open_ok(fx, RPMEMD_DEVDAX_NO_FORMAT, 0, 0);
	assert_int_equal(rpmemd_devdax_remove(dd, "p"), 0);
	assert_int_equal(rpmemd_devdax_create(dd, "q", sizeof(buf), &p), 0);
	assert_int_equal(rpmemd_devdax_pool_addr(dd, "q", &addr, &size), 0);
	memset(back, 0, sizeof(back));
	assert_memory_equal(addr, back, sizeof(back));
	rpmemd_devdax_close(&dd);
}

/* --- crash simulation ---------------------------------------------------- */

/*
 * The table area is rebuilt from `before` plus the recorded writes 0..j-1
 * plus a torn write j (prefix: its first k bytes landed; suffix: its last
 * k bytes; words: a random subset of its 8-byte words), written to the
 * file, and opened. check() decides whether what it sees is allowed.
 */
typedef void (*crash_check_fn)(struct rpmemd_devdax *dd, int err, void *arg);

static unsigned crash_images;

static void crash_apply(uint8_t *img, const struct rec_write *w, int mode,
			size_t k)
{
	switch (mode) {
	case 0: /* prefix */
		memcpy(img + w->off, w->data, k);
		break;
	case 1: /* suffix */
		memcpy(img + w->off + w->len - k, w->data + w->len - k, k);
		break;
	default: /* random 8-byte words */
		for (size_t o = 0; o < w->len; o += 8)
			if (rand() & 1)
				memcpy(img + w->off + o, w->data + o,
				       w->len - o < 8 ? w->len - o : 8);
		break;
	}
}

static void crash_run_opts(const struct fx *fx, const uint8_t *before,
			   size_t tlen, const struct rpmemd_devdax_opts *o,
			   crash_check_fn check, void *arg)
{
	uint8_t *img = malloc(tlen);
	struct rpmemd_devdax *dd;
	int err;

	assert_non_null(img);
	assert_true(rec.n > 0);
	for (unsigned j = 0; j < rec.n; j++) {
		const struct rec_write *w = &rec.w[j];

		assert_true(w->off + w->len <= tlen);
		for (int mode = 0; mode < 3; mode++) {
			size_t kmax = mode == 2 ? 64 : w->len;

			for (size_t k = 0; k <= kmax; k++) {
				memcpy(img, before, tlen);
				for (unsigned i = 0; i < j; i++)
					memcpy(img + rec.w[i].off,
					       rec.w[i].data, rec.w[i].len);
				crash_apply(img, w, mode, k);
				file_write(fx, 0, img, tlen);
				dd = NULL;
				err = rpmemd_devdax_open_opts(fx->path, o, &dd);
				check(dd, err, arg);
				rpmemd_devdax_close(&dd);
				crash_images++;
			}
		}
	}
	free(img);
}

static void crash_run(const struct fx *fx, const uint8_t *before,
		      size_t tlen, int format, crash_check_fn check, void *arg)
{
	/* the table format of the crash tests: 4 pools, page alignment */
	struct rpmemd_devdax_opts o = { format, 0, 4 };

	crash_run_opts(fx, before, tlen, &o, check, arg);
}

struct crash_expect {
	const char *name;
	int before_present;
	struct rpmemd_devdax_pool before, after; /* after: absent if removed */
	int after_present;
	size_t others; /* pools besides name, always there */
};

/* pool_check -- the pool is exactly as before or exactly as after */
static void pool_check(struct rpmemd_devdax *dd, int err, void *arg)
{
	struct crash_expect *x = arg;
	struct rpmemd_devdax_info info;
	struct rpmemd_devdax_pool p;
	int ret;

	assert_int_equal(err, 0);
	ret = rpmemd_devdax_lookup(dd, x->name, &p);
	rpmemd_devdax_info(dd, &info);
	if (ret == -ENOENT) {
		assert_true(!x->before_present || !x->after_present);
		assert_int_equal(info.npools, x->others);
		return;
	}
	assert_int_equal(ret, 0);
	assert_int_equal(info.npools, x->others + 1);
	if (x->before_present && p.meta.state == x->before.meta.state &&
	    p.meta.generation == x->before.meta.generation)
		pool_equal(&p, &x->before);
	else if (x->after_present)
		pool_equal(&p, &x->after);
	else
		fail_msg("pool '%s' in a state that was never written",
			 x->name);
}

static void table_image(const struct fx *fx, uint8_t *img, size_t tlen)
{
	file_read(fx, 0, img, tlen);
}

/* crash_advance -- before += the recorded writes, complete; to the file */
static void crash_advance(const struct fx *fx, uint8_t *before, size_t tlen)
{
	for (unsigned i = 0; i < rec.n; i++)
		memcpy(before + rec.w[i].off, rec.w[i].data, rec.w[i].len);
	file_write(fx, 0, before, tlen);
}

static void crash__torn_slot_writes_leave_pool_whole_or_absent(void **state)
{
	struct fx *fx = *state;
	struct rpmemd_devdax_pool keep;
	struct rpmemd_devdax_info info;
	struct crash_expect x = { 0 };
	struct rpmemd_devdax *dd;
	uint8_t *before;
	size_t tlen;

	srand(1);
	dd = open_ok(fx, RPMEMD_DEVDAX_FORMAT_BLANK, 0, 4);
	rpmemd_devdax_info(dd, &info);
	tlen = info.data_offset;
	before = malloc(tlen);
	assert_non_null(before);
	assert_int_equal(rpmemd_devdax_create(dd, "keep", 8192, &keep), 0);
	x.name = "p";
	x.others = 1;

	/* create: absent -> present */
	table_image(fx, before, tlen);
	rec_start();
	assert_int_equal(rpmemd_devdax_create(dd, "p", 4096, &x.after), 0);
	rec_stop();
	assert_int_equal(rec.n, 1);
	assert_int_equal(rec.w[0].len, RPMEMD_DEVDAX_SLOT_SIZE);
	x.before_present = 0;
	x.after_present = 1;
	rpmemd_devdax_close(&dd);
	crash_run(fx, before, tlen, RPMEMD_DEVDAX_NO_FORMAT, pool_check, &x);

	/* state changes: old state -> new state, alternating slots A, B */
	for (int round = 0; round < 3; round++) {
		uint8_t st = round == 1 ? RPMEM_POOL_CONSISTENT :
					  RPMEM_POOL_SYNCING;

		crash_advance(fx, before, tlen);
		dd = open_ok(fx, RPMEMD_DEVDAX_NO_FORMAT, 0, 0);
		assert_int_equal(rpmemd_devdax_lookup(dd, "p", &x.before), 0);
		x.before_present = 1;
		rec_start();
		assert_int_equal(rpmemd_devdax_set_state(dd, "p", st, "src"),
				 0);
		rec_stop();
		assert_int_equal(rec.n, 1);
		assert_int_equal(rpmemd_devdax_lookup(dd, "p", &x.after), 0);
		rpmemd_devdax_close(&dd);
		crash_run(fx, before, tlen, RPMEMD_DEVDAX_NO_FORMAT,
			  pool_check, &x);
	}

	/* remove: present -> absent, in two writes */
	crash_advance(fx, before, tlen);
	dd = open_ok(fx, RPMEMD_DEVDAX_NO_FORMAT, 0, 0);
	assert_int_equal(rpmemd_devdax_lookup(dd, "p", &x.before), 0);
	rec_start();
	assert_int_equal(rpmemd_devdax_remove(dd, "p"), 0);
	rec_stop();
	assert_int_equal(rec.n, 2);
	x.before_present = 1;
	x.after_present = 0;
	rpmemd_devdax_close(&dd);
	crash_run(fx, before, tlen, RPMEMD_DEVDAX_NO_FORMAT, pool_check, &x);

	/* the pool created in its place after a remove */
	crash_advance(fx, before, tlen);
	dd = open_ok(fx, RPMEMD_DEVDAX_NO_FORMAT, 0, 0);
	rec_start();
	assert_int_equal(rpmemd_devdax_create(dd, "p", 4096, &x.after), 0);
	rec_stop();
	x.before_present = 0;
	x.after_present = 1;
	rpmemd_devdax_close(&dd);
	crash_run(fx, before, tlen, RPMEMD_DEVDAX_NO_FORMAT, pool_check, &x);

	/* after all that, the other pool is untouched */
	dd = open_ok(fx, RPMEMD_DEVDAX_NO_FORMAT, 0, 0);
	{
		struct rpmemd_devdax_pool k;

		assert_int_equal(rpmemd_devdax_lookup(dd, "keep", &k), 0);
		pool_equal(&k, &keep);
	}
	rpmemd_devdax_close(&dd);
	free(before);
	print_message("# %u crash images checked\n", crash_images);
}

/* format_check -- an interrupted format is blank or a valid empty table */
static void format_check(struct rpmemd_devdax *dd, int err, void *arg)
{
	struct rpmemd_devdax_info info;

	(void)arg;
	assert_int_equal(err, 0);
	rpmemd_devdax_info(dd, &info);
	assert_int_equal(info.npools, 0);
}

static void format_check_noformat(struct rpmemd_devdax *dd, int err,
				  void *arg)
{
	(void)arg;
	if (err == -ENODATA)
		return;
	format_check(dd, err, arg);
}

static void crash__interrupted_format_can_be_finished(void **state)
{
	struct fx *fx = *state;
	struct rpmemd_devdax *dd;
	uint8_t *before;
	size_t tlen = 64 * KiB;

	srand(2);
	before = calloc(1, tlen);
	assert_non_null(before);
	rec_start();
	dd = open_ok(fx, RPMEMD_DEVDAX_FORMAT_BLANK, 0, 4);
	rec_stop();
	rpmemd_devdax_close(&dd);
	assert_int_equal(rec.n, 2); /* header body, then magic */
	crash_run(fx, before, tlen, RPMEMD_DEVDAX_NO_FORMAT,
		  format_check_noformat, NULL);
	crash_run(fx, before, tlen, RPMEMD_DEVDAX_FORMAT_BLANK, format_check,
		  NULL);
	free(before);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
			open__formats_a_blank_device_and_reopens_it, setup_16m,
			teardown),
		cmocka_unit_test_setup_teardown(
			open__blank_device_without_format_is_enodata,
			setup_16m, teardown),
		cmocka_unit_test_setup_teardown(
			open__foreign_signature_is_refused_unless_forced,
			setup_16m, teardown),
		cmocka_unit_test_setup_teardown(
			open__corrupt_header_checksum_is_refused, setup_16m,
			teardown),
		cmocka_unit_test_setup_teardown(
			open__damaged_magic_of_a_used_table_is_not_blank,
			setup_16m, teardown),
		cmocka_unit_test_setup_teardown(
			open__second_user_is_ebusy, setup_16m, teardown),
		cmocka_unit_test_setup_teardown(
			open__too_small_device_is_enospc, setup_small,
			teardown),
		cmocka_unit_test_setup_teardown(
			create__several_remove_one_reopen_same_table,
			setup_16m, teardown),
		cmocka_unit_test_setup_teardown(list__empty_table_gives_null,
						setup_16m, teardown),
		cmocka_unit_test_setup_teardown(
			create__respects_the_alignment, setup_16m, teardown),
		cmocka_unit_test_setup_teardown(
			create__full_region_is_enospc_with_free_space_logged,
			setup_16m, teardown),
		cmocka_unit_test_setup_teardown(create__full_table_is_enospc,
						setup_16m, teardown),
		cmocka_unit_test_setup_teardown(
			create__existing_name_is_eexist, setup_16m, teardown),
		cmocka_unit_test_setup_teardown(
			create__invalid_name_or_size_is_einval, setup_16m,
			teardown),
		cmocka_unit_test_setup_teardown(
			set_state__follows_the_pool_state_rules, setup_16m,
			teardown),
		cmocka_unit_test_setup_teardown(
			set_gen__role_and_history_persist, setup_16m,
			teardown),
		cmocka_unit_test_setup_teardown(
			pool_addr__data_written_there_persists, setup_16m,
			teardown),
		cmocka_unit_test_setup_teardown(
			crash__torn_slot_writes_leave_pool_whole_or_absent,
			setup_small, teardown),
		cmocka_unit_test_setup_teardown(
			crash__interrupted_format_can_be_finished,
			setup_small, teardown),
	};

	rpmem_log_init("devdax-test", LOG_ERR, log_sink, NULL);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
