/* SPDX-License-Identifier: BSD-3-Clause */
/* pmem.c -- unit tests of DAX mounts and auto regions (daemon/config/pmem.c) */
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
#include <sys/sysmacros.h>
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

/* --- what STATUS shows ---------------------------------------------------- */

static void mode_code__every_ndctl_mode(void **state)
{
	(void)state;
	assert_int_equal(rpmemd_pmem_mode_code("fsdax"), RPMEM_NS_FSDAX);
	assert_int_equal(rpmemd_pmem_mode_code("devdax"), RPMEM_NS_DEVDAX);
	assert_int_equal(rpmemd_pmem_mode_code("sector"), RPMEM_NS_SECTOR);
	assert_int_equal(rpmemd_pmem_mode_code("raw"), RPMEM_NS_RAW);
	assert_int_equal(rpmemd_pmem_mode_code("unknown"), RPMEM_NS_UNKNOWN);
	assert_int_equal(rpmemd_pmem_mode_code("memory"), RPMEM_NS_UNKNOWN);
	assert_int_equal(rpmemd_pmem_mode_code(""), RPMEM_NS_UNKNOWN);
}

/* ns_new -- a malloc'd list of n namespaces named namespace<i>.0 */
static struct rpmemd_pmem_ns *ns_new(size_t n)
{
	struct rpmemd_pmem_ns *v = calloc(n, sizeof(*v));

	assert_non_null(v);
	for (size_t i = 0; i < n; i++)
		snprintf(v[i].ns, sizeof(v[i].ns), "namespace%zu.0", i);
	return v;
}

static void publish__copies_and_replaces(void **state)
{
	struct rpmemd_pmem_ns *v, *c = (void *)1;
	size_t n = 99;

	(void)state;
	/* nothing published yet */
	assert_int_equal(rpmemd_pmem_published(&c, &n), 0);
	assert_null(c);
	assert_int_equal(n, 0);

	v = ns_new(2);
	rpmemd_pmem_publish(&v, 2);
	assert_null(v);
	assert_int_equal(rpmemd_pmem_published(&c, &n), 0);
	assert_int_equal(n, 2);
	assert_string_equal(c[1].ns, "namespace1.0");
	/* the copy is the caller's: changing it changes nothing published */
	strcpy(c[1].ns, "changed");
	rpmemd_pmem_free(&c);
	assert_int_equal(rpmemd_pmem_published(&c, &n), 0);
	assert_string_equal(c[1].ns, "namespace1.0");
	rpmemd_pmem_free(&c);

	/* a new list replaces it (the old one is freed: valgrind) */
	v = ns_new(1);
	rpmemd_pmem_publish(&v, 1);
	assert_int_equal(rpmemd_pmem_published(&c, &n), 0);
	assert_int_equal(n, 1);
	assert_string_equal(c[0].ns, "namespace0.0");
	rpmemd_pmem_free(&c);

	/* an empty list, or none, publishes nothing */
	v = ns_new(3);
	rpmemd_pmem_publish(&v, 0);
	assert_null(v);
	assert_int_equal(rpmemd_pmem_published(&c, &n), 0);
	assert_null(c);
	assert_int_equal(n, 0);
	v = ns_new(1);
	rpmemd_pmem_publish(&v, 1);
	rpmemd_pmem_publish(NULL, 0);
	assert_int_equal(rpmemd_pmem_published(&c, &n), 0);
	assert_int_equal(n, 0);
}

static void dev_ns__device_number_kind_and_partition(void **state)
{
	struct rpmemd_pmem_ns ns[3];

	(void)state;
	memset(ns, 0, sizeof(ns));
	ns[0].devno = makedev(259, 0); /* /dev/pmem0 */
	ns[1].devno = makedev(252, 1); /* /dev/dax1.0 */
	ns[1].chr = 1;
	/* ns[2]: no device */

	assert_int_equal(rpmemd_pmem_dev_ns(ns, 3, 0, makedev(259, 0), 0), 0);
	assert_int_equal(rpmemd_pmem_dev_ns(ns, 3, 1, makedev(252, 1), 0), 1);
	/* block and character device numbers are apart */
	assert_int_equal(rpmemd_pmem_dev_ns(ns, 3, 1, makedev(259, 0), 0), -1);
	assert_int_equal(rpmemd_pmem_dev_ns(ns, 3, 0, makedev(252, 1), 0), -1);
	/* a file system on a partition: its whole disk decides */
	assert_int_equal(
		rpmemd_pmem_dev_ns(ns, 3, 0, makedev(259, 3), makedev(259, 0)),
		0);
	assert_int_equal(
		rpmemd_pmem_dev_ns(ns, 3, 0, makedev(259, 3), makedev(259, 2)),
		-1);
	/* an unknown device number never matches */
	assert_int_equal(rpmemd_pmem_dev_ns(ns, 3, 0, 0, 0), -1);
	assert_int_equal(rpmemd_pmem_dev_ns(ns, 0, 0, makedev(259, 0), 0),
			 -1);
}

static void region_ns__real_paths(void **state)
{
	struct fx *fx = *state;
	struct rpmemd_pmem_ns ns[3];
	struct stat st;
	char path[PATH_MAX];

	memset(ns, 0, sizeof(ns));
	/* /dev/null stands in for a devdax device, the scratch directory's
	 * file system for an fsdax one */
	assert_int_equal(stat("/dev/null", &st), 0);
	ns[1].devno = (uint64_t)st.st_rdev;
	ns[1].chr = 1;
	assert_int_equal(stat(fx->dir, &st), 0);
	ns[2].devno = (uint64_t)st.st_dev;
	mkdirs(fx, "region");
	snprintf(path, sizeof(path), "%s/region", fx->dir);

	assert_int_equal(rpmemd_pmem_region_ns(ns, 3, RPMEM_REGION_DEVDAX,
					       "/dev/null"),
			 1);
	assert_int_equal(rpmemd_pmem_region_ns(ns, 3, RPMEM_REGION_DIR, path),
			 2);
	assert_int_equal(rpmemd_pmem_region_ns(ns, 3, RPMEM_REGION_FSDAX,
					       path),
			 2);
	/* a devdax region must be a character device, a directory is not */
	assert_int_equal(rpmemd_pmem_region_ns(ns, 3, RPMEM_REGION_DEVDAX,
					       path),
			 -1);
	/* /dev/null is on devtmpfs, not on the namespace's device */
	assert_int_equal(rpmemd_pmem_region_ns(ns, 2, RPMEM_REGION_DIR,
					       "/dev/null"),
			 -1);
	snprintf(path, sizeof(path), "%s/missing", fx->dir);
	assert_int_equal(rpmemd_pmem_region_ns(ns, 3, RPMEM_REGION_DIR, path),
			 -1);
	assert_int_equal(rpmemd_pmem_region_ns(ns, 0, RPMEM_REGION_DEVDAX,
					       "/dev/null"),
			 -1);
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
		cmocka_unit_test(mode_code__every_ndctl_mode),
		cmocka_unit_test(publish__copies_and_replaces),
		cmocka_unit_test(dev_ns__device_number_kind_and_partition),
		cmocka_unit_test_setup_teardown(region_ns__real_paths, setup,
						teardown),
	};

	rpmem_log_init("pmem-test", LOG_ERR, NULL, NULL);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
