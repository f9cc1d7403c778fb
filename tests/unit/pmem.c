/* SPDX-License-Identifier: BSD-3-Clause */
/* pmem.c -- unit tests of DAX mounts and auto regions (daemon/pmem.c) */
#include <errno.h>
#include <limits.h>
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

#include "log.h"
#include "pmem.h"
#include "util.h"

/* a scratch directory with a fake mount table in it */
struct fx {
	char dir[64];
	char mounts[96];
};

static int setup(void **state)
{
	struct fx *fx = calloc(1, sizeof(*fx));

	if (!fx)
		return -1;
	strcpy(fx->dir, "/tmp/rpmem-pmem-test.XXXXXX");
	if (!mkdtemp(fx->dir)) {
		free(fx);
		return -1;
	}
	snprintf(fx->mounts, sizeof(fx->mounts), "%s/mounts", fx->dir);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fx *fx = *state;
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", fx->dir);
	if (system(cmd))
		return -1;
	free(fx);
	return 0;
}

/* write_mounts -- the fake table; "@" in a line stands for fx->dir */
static void write_mounts(const struct fx *fx, const char *const *lines,
			 size_t n)
{
	FILE *f = fopen(fx->mounts, "w");

	assert_non_null(f);
	for (size_t i = 0; i < n; i++) {
		for (const char *p = lines[i]; *p; p++) {
			if (*p == '@')
				fputs(fx->dir, f);
			else
				fputc(*p, f);
		}
		fputc('\n', f);
	}
	assert_int_equal(fclose(f), 0);
}

static void mkdirs(const struct fx *fx, const char *sub)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", fx->dir, sub);
	assert_int_equal(mkdir(path, 0755), 0);
}

/* --- options ------------------------------------------------------------- */

static void opts_dax__dax_and_dax_always_only(void **state)
{
	(void)state;
	assert_int_equal(rpmemd_pmem_opts_dax("rw,relatime,dax"), 1);
	assert_int_equal(rpmemd_pmem_opts_dax("dax"), 1);
	assert_int_equal(rpmemd_pmem_opts_dax("rw,dax=always,relatime"), 1);
	assert_int_equal(rpmemd_pmem_opts_dax("dax=always"), 1);
	assert_int_equal(rpmemd_pmem_opts_dax("rw,dax=inode"), 0);
	assert_int_equal(rpmemd_pmem_opts_dax("rw,dax=never"), 0);
	assert_int_equal(rpmemd_pmem_opts_dax("rw,daxx,nodax"), 0);
	assert_int_equal(rpmemd_pmem_opts_dax("rw,relatime"), 0);
	assert_int_equal(rpmemd_pmem_opts_dax(""), 0);
	assert_int_equal(rpmemd_pmem_opts_dax(",,dax,"), 1);
}

/* --- mount of a block device --------------------------------------------- */

static const char *const table1[] = {
	"/dev/root / ext4 rw,relatime 0 0",
	"proc /proc proc rw,nosuid,nodev,noexec,relatime 0 0",
	"/dev/pmem10 /mnt/ten ext4 rw,relatime,dax 0 0",
	"/dev/pmem0 /mnt/nodax ext4 rw,relatime 0 0",
	"/dev/pmem0 /mnt/pmem ext4 rw,relatime,dax 0 0",
	"/dev/pmem1 /mnt/pmem\\040one ext4 rw,relatime,dax=always 0 0",
	"/dev/pmem2 /mnt/p2 xfs rw,attr2,dax=inode 0 0",
	"/dev/pmem3p1 /mnt/p3 ext4 rw,dax 0 0",
	"/dev/pmem4 /mnt/p4 ext4 rw,dax=never 0 0",
	"garbage",
	"",
};

static void dax_mount__finds_the_dax_mount_of_a_device(void **state)
{
	struct fx *fx = *state;
	char mnt[PATH_MAX];

	write_mounts(fx, table1, ARRAY_SIZE(table1));
	/* the mount without dax is skipped, the one with it found */
	assert_int_equal(rpmemd_pmem_dax_mount(fx->mounts, "/dev/pmem0", mnt,
					       sizeof(mnt)),
			 1);
	assert_string_equal(mnt, "/mnt/pmem");
	/* ext4 shows dax=always on newer kernels; escapes are undone */
	assert_int_equal(rpmemd_pmem_dax_mount(fx->mounts, "/dev/pmem1", mnt,
					       sizeof(mnt)),
			 1);
	assert_string_equal(mnt, "/mnt/pmem one");
	/* a partition of the namespace's device */
	assert_int_equal(rpmemd_pmem_dax_mount(fx->mounts, "/dev/pmem3", mnt,
					       sizeof(mnt)),
			 1);
	assert_string_equal(mnt, "/mnt/p3");
	assert_int_equal(rpmemd_pmem_dax_mount(fx->mounts, "/dev/pmem10", mnt,
					       sizeof(mnt)),
			 1);
	assert_string_equal(mnt, "/mnt/ten");
}

static void dax_mount__no_dax_or_no_mount_is_zero(void **state)
{
	struct fx *fx = *state;
	char mnt[PATH_MAX] = "untouched";

	write_mounts(fx, table1, ARRAY_SIZE(table1));
	assert_int_equal(rpmemd_pmem_dax_mount(fx->mounts, "/dev/pmem2", mnt,
					       sizeof(mnt)),
			 0);
	assert_int_equal(rpmemd_pmem_dax_mount(fx->mounts, "/dev/pmem4", mnt,
					       sizeof(mnt)),
			 0);
	/* pmem1 is not a prefix match of pmem10 and v.v. */
	assert_int_equal(rpmemd_pmem_dax_mount(fx->mounts, "/dev/pmem5", mnt,
					       sizeof(mnt)),
			 0);
	assert_int_equal(rpmemd_pmem_dax_mount(fx->mounts, "/dev/pmem", mnt,
					       sizeof(mnt)),
			 0);
	assert_string_equal(mnt, "untouched");
}

static void dax_mount__unreadable_table_is_an_error(void **state)
{
	struct fx *fx = *state;
	char mnt[PATH_MAX];

	assert_int_equal(rpmemd_pmem_dax_mount(fx->mounts, "/dev/pmem0", mnt,
					       sizeof(mnt)),
			 -ENOENT);
	assert_int_equal(rpmemd_is_dax_mount_in(fx->mounts, "/"), -ENOENT);
}

/* --- mount holding a directory ------------------------------------------- */

static void is_dax_mount__innermost_mount_decides(void **state)
{
	static const char *const t[] = {
		"/dev/root / ext4 rw,relatime 0 0",
		"/dev/pmem0 @/a ext4 rw,relatime,dax=always 0 0",
		"tmpfs @/a/tmp tmpfs rw 0 0",
		"/dev/pmem1 @/b ext4 rw,dax 0 0",
		"tmpfs @/b tmpfs rw 0 0", /* mounted over */
	};
	struct fx *fx = *state;
	char path[PATH_MAX];

	mkdirs(fx, "a");
	mkdirs(fx, "a/pools");
	mkdirs(fx, "a/tmp");
	mkdirs(fx, "ab");
	mkdirs(fx, "b");
	write_mounts(fx, t, ARRAY_SIZE(t));

	snprintf(path, sizeof(path), "%s/a", fx->dir);
	assert_int_equal(rpmemd_is_dax_mount_in(fx->mounts, path), 1);
	snprintf(path, sizeof(path), "%s/a/pools", fx->dir);
	assert_int_equal(rpmemd_is_dax_mount_in(fx->mounts, path), 1);
	/* a path is resolved first */
	snprintf(path, sizeof(path), "%s/a/tmp/../pools/.", fx->dir);
	assert_int_equal(rpmemd_is_dax_mount_in(fx->mounts, path), 1);
	snprintf(path, sizeof(path), "%s/a/tmp", fx->dir);
	assert_int_equal(rpmemd_is_dax_mount_in(fx->mounts, path), 0);
	/* "/a" does not hold "/ab" */
	snprintf(path, sizeof(path), "%s/ab", fx->dir);
	assert_int_equal(rpmemd_is_dax_mount_in(fx->mounts, path), 0);
	snprintf(path, sizeof(path), "%s/b", fx->dir);
	assert_int_equal(rpmemd_is_dax_mount_in(fx->mounts, path), 0);
	assert_int_equal(rpmemd_is_dax_mount_in(fx->mounts, fx->dir), 0);
}

static void is_dax_mount__real_table_root_is_not_dax(void **state)
{
	(void)state;
	/* this host has no PMem: its root is not a DAX mount */
	assert_true(rpmemd_is_dax_mount("/") >= 0);
	assert_int_equal(rpmemd_is_dax_mount("/proc"), 0);
}

/* --- auto regions ------------------------------------------------------- */

static void auto_regions__devdax_and_dax_mounted_fsdax(void **state)
{
	struct rpmemd_pmem_ns ns[5];
	struct rpmemd_region_cfg *r;
	size_t n;

	(void)state;
	memset(ns, 0, sizeof(ns));
	strcpy(ns[0].dev, "/dev/pmem0");
	strcpy(ns[0].mode, "fsdax");
	strcpy(ns[0].mount, "/run/rpmem/fsdax");
	strcpy(ns[1].dev, "/dev/dax1.0");
	strcpy(ns[1].mode, "devdax");
	strcpy(ns[2].dev, "/dev/pmem2");
	strcpy(ns[2].mode, "fsdax"); /* not mounted with dax */
	strcpy(ns[3].dev, "/dev/pmem3s");
	strcpy(ns[3].mode, "sector");
	strcpy(ns[4].mode, "devdax"); /* no device */

	assert_int_equal(rpmemd_pmem_auto_regions(ns, 5, &r, &n), 0);
	assert_int_equal(n, 2);
	assert_string_equal(r[0].name, "pmem0");
	assert_int_equal(r[0].type, RPMEM_REGION_FSDAX);
	assert_string_equal(r[0].path, "/run/rpmem/fsdax");
	assert_int_equal(r[0].direct_pmem, 0);
	assert_string_equal(r[1].name, "dax1.0");
	assert_int_equal(r[1].type, RPMEM_REGION_DEVDAX);
	assert_string_equal(r[1].path, "/dev/dax1.0");
	free(r);

	assert_int_equal(rpmemd_pmem_auto_regions(ns + 2, 3, &r, &n), 0);
	assert_int_equal(n, 0);
	assert_null(r);
	assert_int_equal(rpmemd_pmem_auto_regions(NULL, 0, &r, &n), 0);
	assert_int_equal(n, 0);
	assert_int_equal(rpmemd_pmem_auto_regions(NULL, 1, &r, &n), -EINVAL);
}

/* --- discovery ----------------------------------------------------------- */

static void discover__without_pmem_is_empty_not_an_error(void **state)
{
	struct rpmemd_pmem_ns *l = (void *)1;
	size_t n = 99;

	(void)state;
	assert_int_equal(rpmemd_pmem_discover(&l, &n), 0);
	if (n == 0) {
		assert_null(l);
	} else {
		/* a machine with PMem: entries are filled */
		for (size_t i = 0; i < n; i++) {
			assert_true(l[i].ns[0] != '\0');
			assert_true(l[i].mode[0] != '\0');
		}
	}
	rpmemd_pmem_free(&l);
	assert_null(l);
	rpmemd_pmem_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(opts_dax__dax_and_dax_always_only),
		cmocka_unit_test_setup_teardown(
			dax_mount__finds_the_dax_mount_of_a_device, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			dax_mount__no_dax_or_no_mount_is_zero, setup, teardown),
		cmocka_unit_test_setup_teardown(
			dax_mount__unreadable_table_is_an_error, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			is_dax_mount__innermost_mount_decides, setup, teardown),
		cmocka_unit_test(is_dax_mount__real_table_root_is_not_dax),
		cmocka_unit_test(auto_regions__devdax_and_dax_mounted_fsdax),
		cmocka_unit_test(discover__without_pmem_is_empty_not_an_error),
	};

	rpmem_log_init("pmem-test", LOG_ERR, NULL, NULL);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
