/* SPDX-License-Identifier: BSD-3-Clause */
/* pmem_probe.c -- PMem discovery and devdax pool table on real namespaces */

/*
 * Usage:
 *	pmem_probe discover           namespaces and auto regions, one per line
 *	pmem_probe is-dax DIR         "dax" (exit 0) or "not-dax" (exit 1)
 *	pmem_probe table DEV [-f]     format if blank (-f: always) and run the
 *	                              table exercise; "ok DESC"/"not ok DESC"
 *	pmem_probe info DEV           the table and its pools
 *	pmem_probe write DEV POOL FILE  create POOL sized as FILE, copy FILE
 *	                              into it, persist, mark it consistent
 *	pmem_probe read DEV POOL FILE   copy POOL out to FILE
 *	pmem_probe remove DEV POOL
 * Pools are printed as "pool NAME offset=N size=N extent=N state=S gen=N".
 * Exit status: 0 ok, 1 a check failed, 2 usage, 3 an operation failed.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "devdax.h"
#include "log.h"
#include "pmem.h"
#include "util.h"

#define MiB (1024ull * 1024)

static int failed;

static void check(int cond, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* check -- print "ok DESC" or "not ok DESC" */
static void check(int cond, const char *fmt, ...)
{
	va_list ap;

	printf("%s ", cond ? "ok" : "not ok");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	if (!cond)
		failed = 1;
}

static const char *state_name(uint8_t s)
{
	switch (s) {
	case RPMEM_POOL_EMPTY:
		return "empty";
	case RPMEM_POOL_SYNCING:
		return "syncing";
	case RPMEM_POOL_CONSISTENT:
		return "consistent";
	default:
		return "?";
	}
}

static void print_pool(const struct rpmemd_devdax_pool *p)
{
	char uuid[37];

	rpmem_uuid_fmt(p->meta.uuid, uuid);
	printf("pool %s offset=%" PRIu64 " size=%" PRIu64 " extent=%" PRIu64
	       " state=%s gen=%" PRIu64 " uuid=%s\n",
	       p->name, p->offset, p->meta.size, p->extent,
	       state_name(p->meta.state), p->meta.generation, uuid);
}

static void print_info(struct rpmemd_devdax *dd)
{
	struct rpmemd_devdax_info i;
	char uuid[37];

	rpmemd_devdax_info(dd, &i);
	rpmem_uuid_fmt(i.uuid, uuid);
	printf("table uuid=%s size=%" PRIu64 " align=%" PRIu64
	       " data_offset=%" PRIu64 " max_pools=%u pools=%u free=%" PRIu64
	       " largest_free=%" PRIu64 " granularity=%d\n",
	       uuid, i.dev_size, i.align, i.data_offset, i.max_pools,
	       i.npools, i.free, i.largest_free, i.granularity);
}

/* cmd_discover -- namespaces and the regions regions_auto would export */
static int cmd_discover(void)
{
	struct rpmemd_region_cfg *r;
	struct rpmemd_pmem_ns *ns;
	size_t n, nr;
	int ret;

	ret = rpmemd_pmem_discover(&ns, &n);
	if (ret) {
		fprintf(stderr, "pmem_probe: discovery failed: %s\n",
			strerror(-ret));
		return 3;
	}
	for (size_t i = 0; i < n; i++)
		printf("ns %s region=%s mode=%s dev=%s size=%" PRIu64
		       " align=%u numa=%d mount=%s\n",
		       ns[i].ns, ns[i].region, ns[i].mode,
		       ns[i].dev[0] ? ns[i].dev : "-", ns[i].size,
		       ns[i].align, ns[i].numa,
		       ns[i].mount[0] ? ns[i].mount : "-");
	ret = rpmemd_pmem_auto_regions(ns, n, &r, &nr);
	rpmemd_pmem_free(&ns);
	if (ret) {
		fprintf(stderr, "pmem_probe: auto regions: %s\n",
			strerror(-ret));
		return 3;
	}
	for (size_t i = 0; i < nr; i++)
		printf("region %s type=%s path=%s\n", r[i].name,
		       r[i].type == RPMEM_REGION_DEVDAX ? "devdax" : "fsdax",
		       r[i].path);
	free(r);
	return 0;
}

static int open_dev(const char *dev, int format, struct rpmemd_devdax **dd)
{
	int ret = rpmemd_devdax_open(dev, format, dd);

	if (ret)
		fprintf(stderr, "pmem_probe: cannot open %s: %s\n", dev,
			strerror(-ret));
	return ret;
}

/* pattern -- bytes of pool name at offset i, reproducible */
static uint8_t pattern(const char *name, uint64_t i)
{
	return (uint8_t)(i * 131 + (i >> 12) + (uint8_t)name[0]);
}

static void fill(struct rpmemd_devdax *dd, const char *name)
{
	uint64_t size;
	uint8_t *p;

	if (rpmemd_devdax_pool_addr(dd, name, (void **)&p, &size))
		return;
	for (uint64_t i = 0; i < size; i++)
		p[i] = pattern(name, i);
	rpmemd_devdax_persist(dd, p, size);
}

static int verify(struct rpmemd_devdax *dd, const char *name)
{
	uint64_t size;
	uint8_t *p;

	if (rpmemd_devdax_pool_addr(dd, name, (void **)&p, &size))
		return 0;
	for (uint64_t i = 0; i < size; i++)
		if (p[i] != pattern(name, i))
			return 0;
	return 1;
}

/* cmd_table -- format, create, remove, reopen, state, full, data */
static int cmd_table(const char *dev, int force)
{
	struct rpmemd_devdax_pool a, b, c, d, x, *l = NULL;
	struct rpmemd_devdax_info info;
	struct rpmemd_devdax *dd;
	uint8_t uuid[16];
	size_t n;
	int ret;

	if (open_dev(dev, force ? RPMEMD_DEVDAX_FORMAT_FORCE :
				  RPMEMD_DEVDAX_FORMAT_BLANK,
		     &dd))
		return 3;
	print_info(dd);
	rpmemd_devdax_info(dd, &info);
	memcpy(uuid, info.uuid, 16);
	check(info.npools == 0, "%s: a fresh table has no pools", dev);
	check(info.align >= 4096 && info.data_offset % info.align == 0,
	      "%s: table of %" PRIu64 " bytes ends on the alignment %" PRIu64,
	      dev, info.data_offset, info.align);

	ret = rpmemd_devdax_create(dd, "probe-a", 1 * MiB, &a);
	ret |= rpmemd_devdax_create(dd, "probe-b", 2 * MiB + 1, &b);
	ret |= rpmemd_devdax_create(dd, "probe-c", 4096, &c);
	check(!ret, "%s: create three pools", dev);
	if (ret)
		goto out;
	print_pool(&a);
	print_pool(&b);
	print_pool(&c);
	check(a.offset % info.align == 0 && b.offset % info.align == 0 &&
		      c.offset % info.align == 0,
	      "%s: pool offsets are aligned", dev);
	check(a.offset == info.data_offset &&
		      b.offset == a.offset + a.extent &&
		      c.offset == b.offset + b.extent,
	      "%s: pools are packed first fit", dev);
	check(rpmemd_devdax_create(dd, "probe-a", 4096, NULL) == -EEXIST,
	      "%s: a second pool of the same name is EEXIST", dev);
	check(rpmemd_devdax_create(dd, "../etc", 4096, NULL) == -EINVAL,
	      "%s: an invalid name is EINVAL", dev);
	check(rpmemd_devdax_create(dd, "probe-huge", info.dev_size, NULL) ==
		      -ENOSPC,
	      "%s: a pool larger than the free space is ENOSPC", dev);
	fill(dd, "probe-a");
	fill(dd, "probe-c");
	check(rpmemd_devdax_set_state(dd, "probe-a", RPMEM_POOL_SYNCING,
				      "probe") == 0 &&
		      rpmemd_devdax_set_state(dd, "probe-a",
					      RPMEM_POOL_CONSISTENT, NULL) == 0,
	      "%s: probe-a: empty -> syncing -> consistent", dev);
	check(rpmemd_devdax_remove(dd, "probe-b") == 0,
	      "%s: remove probe-b", dev);
	rpmemd_devdax_close(&dd);

	if (open_dev(dev, RPMEMD_DEVDAX_NO_FORMAT, &dd))
		return 3;
	rpmemd_devdax_info(dd, &info);
	check(!memcmp(uuid, info.uuid, 16) && info.npools == 2,
	      "%s: reopened: same table, two pools", dev);
	ret = rpmemd_devdax_list(dd, &l, &n);
	check(!ret && n == 2 && !strcmp(l[0].name, "probe-a") &&
		      !strcmp(l[1].name, "probe-c") &&
		      l[0].offset == a.offset && l[1].offset == c.offset &&
		      !memcmp(l[0].meta.uuid, a.meta.uuid, 16),
	      "%s: list after reopen shows probe-a and probe-c in place", dev);
	check(n == 2 && l[0].meta.state == RPMEM_POOL_CONSISTENT &&
		      l[0].meta.generation == 1 &&
		      !strcmp(l[0].meta.source, "probe"),
	      "%s: probe-a is consistent, generation 1, after reopen", dev);
	free(l);
	check(verify(dd, "probe-a") && verify(dd, "probe-c"),
	      "%s: pool data survived the reopen", dev);
	ret = rpmemd_devdax_create(dd, "probe-d", 1 * MiB, &d);
	check(!ret && d.offset == b.offset,
	      "%s: probe-d reuses the hole of probe-b", dev);
	check(!ret && rpmemd_devdax_lookup(dd, "probe-d", &x) == 0 &&
		      x.meta.state == RPMEM_POOL_EMPTY,
	      "%s: probe-d is empty", dev);
	ret = rpmemd_devdax_remove(dd, "probe-a");
	ret |= rpmemd_devdax_remove(dd, "probe-c");
	ret |= rpmemd_devdax_remove(dd, "probe-d");
	rpmemd_devdax_info(dd, &info);
	check(!ret && info.npools == 0 &&
		      info.free == info.dev_size - info.data_offset,
	      "%s: all pools removed, all space free again", dev);
out:
	rpmemd_devdax_close(&dd);
	return failed;
}

static int cmd_info(const char *dev)
{
	struct rpmemd_devdax_pool *l;
	struct rpmemd_devdax *dd;
	size_t n;

	if (open_dev(dev, RPMEMD_DEVDAX_NO_FORMAT, &dd))
		return 3;
	print_info(dd);
	if (!rpmemd_devdax_list(dd, &l, &n)) {
		for (size_t i = 0; i < n; i++)
			print_pool(&l[i]);
		free(l);
	}
	rpmemd_devdax_close(&dd);
	return 0;
}

/* map_file -- a file's contents (read-only) and size */
static void *map_file(const char *path, size_t *size)
{
	struct stat st;
	void *p;
	int fd;

	fd = open(path, O_RDONLY);
	if (fd < 0 || fstat(fd, &st) || st.st_size == 0) {
		fprintf(stderr, "pmem_probe: %s: %s\n", path,
			fd < 0 ? strerror(errno) : "empty or unreadable");
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return NULL;
	*size = (size_t)st.st_size;
	return p;
}

/* cmd_write -- a pool holding the contents of file */
static int cmd_write(const char *dev, const char *pool, const char *file)
{
	struct rpmemd_devdax_pool p;
	struct rpmemd_devdax *dd;
	uint64_t size;
	size_t len;
	void *src, *dst;
	int ret;

	src = map_file(file, &len);
	if (!src)
		return 3;
	if (open_dev(dev, RPMEMD_DEVDAX_FORMAT_BLANK, &dd)) {
		munmap(src, len);
		return 3;
	}
	ret = rpmemd_devdax_create(dd, pool, len, NULL);
	if (!ret)
		ret = rpmemd_devdax_set_state(dd, pool, RPMEM_POOL_SYNCING,
					      file);
	if (!ret)
		ret = rpmemd_devdax_pool_addr(dd, pool, &dst, &size);
	if (!ret) {
		memcpy(dst, src, len);
		ret = rpmemd_devdax_persist(dd, dst, len);
	}
	if (!ret)
		ret = rpmemd_devdax_set_state(dd, pool, RPMEM_POOL_CONSISTENT,
					      NULL);
	if (!ret)
		ret = rpmemd_devdax_lookup(dd, pool, &p);
	if (!ret)
		print_pool(&p);
	else
		fprintf(stderr, "pmem_probe: write %s to %s/%s: %s\n", file,
			dev, pool, strerror(-ret));
	rpmemd_devdax_close(&dd);
	munmap(src, len);
	return ret ? 3 : 0;
}

/* cmd_read -- a pool's contents into file */
static int cmd_read(const char *dev, const char *pool, const char *file)
{
	struct rpmemd_devdax *dd;
	uint64_t size;
	void *src;
	FILE *f;
	int ret;

	if (open_dev(dev, RPMEMD_DEVDAX_NO_FORMAT, &dd))
		return 3;
	ret = rpmemd_devdax_pool_addr(dd, pool, &src, &size);
	if (ret) {
		fprintf(stderr, "pmem_probe: %s/%s: %s\n", dev, pool,
			strerror(-ret));
		rpmemd_devdax_close(&dd);
		return 3;
	}
	f = fopen(file, "w");
	ret = !f || fwrite(src, 1, size, f) != size;
	if (f && fclose(f))
		ret = 1;
	if (ret)
		fprintf(stderr, "pmem_probe: cannot write %s\n", file);
	rpmemd_devdax_close(&dd);
	return ret ? 3 : 0;
}

static int cmd_remove(const char *dev, const char *pool)
{
	struct rpmemd_devdax *dd;
	int ret;

	if (open_dev(dev, RPMEMD_DEVDAX_NO_FORMAT, &dd))
		return 3;
	ret = rpmemd_devdax_remove(dd, pool);
	if (ret)
		fprintf(stderr, "pmem_probe: remove %s/%s: %s\n", dev, pool,
			strerror(-ret));
	rpmemd_devdax_close(&dd);
	return ret ? 3 : 0;
}

static int usage(void)
{
	fprintf(stderr,
		"usage: pmem_probe discover | is-dax DIR | table DEV [-f] |\n"
		"       info DEV | write DEV POOL FILE | read DEV POOL FILE |\n"
		"       remove DEV POOL\n");
	return 2;
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : "";
	int ret;

	rpmem_log_init("pmem_probe", LOG_NOTICE, NULL, NULL);
	if (!strcmp(cmd, "discover") && argc == 2) {
		ret = cmd_discover();
	} else if (!strcmp(cmd, "is-dax") && argc == 3) {
		ret = rpmemd_is_dax_mount(argv[2]);
		printf("%s\n", ret > 0 ? "dax" : ret == 0 ? "not-dax" : "error");
		ret = ret > 0 ? 0 : ret == 0 ? 1 : 3;
	} else if (!strcmp(cmd, "table") && (argc == 3 || argc == 4)) {
		if (argc == 4 && strcmp(argv[3], "-f"))
			return usage();
		ret = cmd_table(argv[2], argc == 4);
	} else if (!strcmp(cmd, "info") && argc == 3) {
		ret = cmd_info(argv[2]);
	} else if (!strcmp(cmd, "write") && argc == 5) {
		ret = cmd_write(argv[2], argv[3], argv[4]);
	} else if (!strcmp(cmd, "read") && argc == 5) {
		ret = cmd_read(argv[2], argv[3], argv[4]);
	} else if (!strcmp(cmd, "remove") && argc == 4) {
		ret = cmd_remove(argv[2], argv[3]);
	} else {
		return usage();
	}
	if (fflush(stdout) || ferror(stdout))
		return 3;
	return ret;
}
