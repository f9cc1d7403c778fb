/* SPDX-License-Identifier: BSD-3-Clause */
/* pmem.c -- PMem namespace discovery (libndctl, libdaxctl) and DAX mounts */

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <daxctl/libdaxctl.h>
#include <ndctl/libndctl.h>

#include "log.h"
#include "pmem.h"
#include "util.h"

/* one line of a mount table, with the octal escapes undone */
struct mnt_ent {
	char *src;
	char *dir;
	char *type;
	char *opts;
};

/* mnt_unescape -- undo "\040"-style escapes in place */
static void mnt_unescape(char *s)
{
	char *d = s;

	while (*s) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' &&
		    s[2] >= '0' && s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
			*d++ = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 |
				      (s[3] - '0'));
			s += 4;
		} else {
			*d++ = *s++;
		}
	}
	*d = '\0';
}

/* mnt_split -- fields of a mount table line; 0 if it has too few */
static int mnt_split(char *line, struct mnt_ent *m)
{
	char *save = NULL;

	m->src = strtok_r(line, " \t\n", &save);
	m->dir = m->src ? strtok_r(NULL, " \t\n", &save) : NULL;
	m->type = m->dir ? strtok_r(NULL, " \t\n", &save) : NULL;
	m->opts = m->type ? strtok_r(NULL, " \t\n", &save) : NULL;
	if (!m->opts)
		return 0;
	mnt_unescape(m->src);
	mnt_unescape(m->dir);
	return 1;
}

/* rpmemd_pmem_opts_dax -- "dax" or "dax=always" among the options */
int rpmemd_pmem_opts_dax(const char *opts)
{
	const char *p = opts;
	size_t n;

	while (p && *p) {
		n = strcspn(p, ",");
		if ((n == 3 && !strncmp(p, "dax", 3)) ||
		    (n == 10 && !strncmp(p, "dax=always", 10)))
			return 1;
		p += n;
		if (*p == ',')
			p++;
	}
	return 0;
}

/* src_is_dev -- mount source src is block device dev or a partition */
static int src_is_dev(const char *src, const char *dev)
{
	size_t n = strlen(dev);
	struct stat a, b;
	const char *p;

	if (!strncmp(src, dev, n)) {
		if (src[n] == '\0')
			return 1;
		/* pmem0p1: "p" and digits */
		p = src + n;
		if (*p == 'p' && p[1]) {
			for (p++; *p >= '0' && *p <= '9'; p++)
				;
			if (*p == '\0')
				return 1;
		}
	}
	/* another name of the same device (/dev/disk/by-..., a symlink) */
	if (src[0] == '/' && !stat(src, &a) && !stat(dev, &b) &&
	    S_ISBLK(a.st_mode) && S_ISBLK(b.st_mode) && a.st_rdev == b.st_rdev)
		return 1;
	return 0;
}

/* rpmemd_pmem_dax_mount -- first DAX mount of dev in the table */
int rpmemd_pmem_dax_mount(const char *mounts, const char *dev, char *mnt,
			  size_t len)
{
	struct mnt_ent m;
	char *line = NULL;
	size_t cap = 0;
	int ret = 0;
	FILE *f;

	f = fopen(mounts, "re");
	if (!f)
		return -errno;
	while (getline(&line, &cap, f) > 0) {
		if (!mnt_split(line, &m) || !src_is_dev(m.src, dev))
			continue;
		if (!rpmemd_pmem_opts_dax(m.opts)) {
			DBG("pmem: %s is mounted on %s without dax", dev,
			    m.dir);
			continue;
		}
		if (strlen(m.dir) >= len) {
			WARN("pmem: mount point of %s is too long", dev);
			continue;
		}
		rpmem_strlcpy(mnt, m.dir, len);
		ret = 1;
		break;
	}
	free(line);
	fclose(f);
	return ret;
}

/* mnt_holds -- mount point dir contains path (at a component boundary) */
static size_t mnt_holds(const char *dir, const char *path)
{
	size_t n = strlen(dir);

	if (!strcmp(dir, "/"))
		return path[0] == '/' ? 1 : 0;
	if (!strncmp(dir, path, n) && (path[n] == '/' || path[n] == '\0'))
		return n;
	return 0;
}

/* rpmemd_is_dax_mount_in -- options of the innermost mount holding dir */
int rpmemd_is_dax_mount_in(const char *mounts, const char *dir)
{
	char real[PATH_MAX], *line = NULL;
	size_t cap = 0, best = 0, n;
	struct mnt_ent m;
	int dax = 0;
	FILE *f;

	if (!realpath(dir, real)) {
		if (dir[0] != '/' || strlen(dir) >= sizeof(real))
			return -errno;
		rpmem_strlcpy(real, dir, sizeof(real));
	}
	f = fopen(mounts, "re");
	if (!f)
		return -errno;
	while (getline(&line, &cap, f) > 0) {
		if (!mnt_split(line, &m))
			continue;
		/* the longest match wins; a later equal one is mounted over */
		n = mnt_holds(m.dir, real);
		if (!n || n < best)
			continue;
		best = n;
		dax = rpmemd_pmem_opts_dax(m.opts);
	}
	free(line);
	fclose(f);
	return dax;
}

/* rpmemd_is_dax_mount -- in /proc/self/mounts */
int rpmemd_is_dax_mount(const char *dir)
{
	return rpmemd_is_dax_mount_in(RPMEMD_MOUNTS, dir);
}

/* ndctl_log -- libndctl's messages go to our log at debug priority */
static void ndctl_log(struct ndctl_ctx *ctx, int prio, const char *file,
		      int line, const char *fn, const char *fmt, va_list ap)
{
	char msg[RPMEM_MSG_MAX];

	(void)ctx;
	(void)prio;
	(void)file;
	(void)line;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	msg[strcspn(msg, "\n")] = '\0';
	DBG("libndctl: %s: %s", fn, msg);
}

static const char *mode_name(enum ndctl_namespace_mode mode)
{
	switch (mode) {
	case NDCTL_NS_MODE_FSDAX:
		return "fsdax";
	case NDCTL_NS_MODE_DEVDAX:
		return "devdax";
	case NDCTL_NS_MODE_SECTOR:
		return "sector";
	case NDCTL_NS_MODE_RAW:
		return "raw";
	default:
		return "unknown";
	}
}

static void set_dev(struct rpmemd_pmem_ns *e, const char *name)
{
	if (name && *name)
		snprintf(e->dev, sizeof(e->dev), "/dev/%s", name);
}

/* ns_devdax -- size, alignment and character device of a devdax namespace */
static void ns_devdax(struct ndctl_namespace *ndns, struct rpmemd_pmem_ns *e)
{
	struct ndctl_dax *dax = ndctl_namespace_get_dax(ndns);
	struct daxctl_region *dr;
	struct daxctl_dev *dev;

	if (!dax)
		return;
	e->size = ndctl_dax_get_size(dax);
	e->align = (uint32_t)ndctl_dax_get_align(dax);
	dr = ndctl_dax_get_daxctl_region(dax);
	if (!dr)
		return;
	if (!e->align)
		e->align = (uint32_t)daxctl_region_get_align(dr);
	daxctl_dev_foreach(dr, dev) {
		if (!daxctl_dev_is_enabled(dev) || !daxctl_dev_get_size(dev))
			continue;
		set_dev(e, daxctl_dev_get_devname(dev));
		if (daxctl_dev_get_align(dev))
			e->align = (uint32_t)daxctl_dev_get_align(dev);
		break;
	}
}

/* ns_fill -- one active namespace into e */
static void ns_fill(struct ndctl_region *region, struct ndctl_namespace *ndns,
		    const char *mounts, struct rpmemd_pmem_ns *e)
{
	enum ndctl_namespace_mode mode = ndctl_namespace_get_mode(ndns);
	struct ndctl_pfn *pfn;
	struct ndctl_btt *btt;
	struct stat st;
	int ret;

	memset(e, 0, sizeof(*e));
	rpmem_strlcpy(e->ns, ndctl_namespace_get_devname(ndns), sizeof(e->ns));
	rpmem_strlcpy(e->region, ndctl_region_get_devname(region),
		      sizeof(e->region));
	rpmem_strlcpy(e->mode, mode_name(mode), sizeof(e->mode));
	e->numa = ndctl_namespace_get_numa_node(ndns);
	if (e->numa < 0)
		e->numa = ndctl_region_get_numa_node(region);
	if (e->numa < 0)
		e->numa = -1;
	e->size = ndctl_namespace_get_size(ndns);

	switch (mode) {
	case NDCTL_NS_MODE_FSDAX:
		pfn = ndctl_namespace_get_pfn(ndns);
		if (pfn) {
			e->size = ndctl_pfn_get_size(pfn);
			e->align = (uint32_t)ndctl_pfn_get_align(pfn);
			set_dev(e, ndctl_pfn_get_block_device(pfn));
		} else {
			set_dev(e, ndctl_namespace_get_block_device(ndns));
		}
		break;
	case NDCTL_NS_MODE_DEVDAX:
		ns_devdax(ndns, e);
		break;
	case NDCTL_NS_MODE_SECTOR:
		btt = ndctl_namespace_get_btt(ndns);
		if (btt) {
			e->size = ndctl_btt_get_size(btt);
			set_dev(e, ndctl_btt_get_block_device(btt));
		}
		break;
	default:
		set_dev(e, ndctl_namespace_get_block_device(ndns));
		break;
	}

	if (e->dev[0] && !stat(e->dev, &st) &&
	    (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode))) {
		e->devno = (uint64_t)st.st_rdev;
		e->chr = S_ISCHR(st.st_mode);
	}
	if (mode == NDCTL_NS_MODE_FSDAX && e->dev[0]) {
		ret = rpmemd_pmem_dax_mount(mounts, e->dev, e->mount,
					    sizeof(e->mount));
		if (ret < 0)
			WARN("pmem: cannot read the mount table %s: %s",
			     mounts, strerror(-ret));
	}
	DBG("pmem: %s (%s) %s %s size %" PRIu64 " align %u numa %d%s%s",
	    e->ns, e->region, e->mode, e->dev[0] ? e->dev : "-", e->size,
	    e->align, e->numa, e->mount[0] ? " dax mount " : "", e->mount);
}

/* rpmemd_pmem_discover_mounts -- walk buses, regions and namespaces */
int rpmemd_pmem_discover_mounts(const char *mounts,
				struct rpmemd_pmem_ns **list, size_t *n)
{
	struct rpmemd_pmem_ns *v = NULL, *nv;
	struct ndctl_namespace *ndns;
	struct ndctl_region *region;
	struct ndctl_bus *bus;
	struct ndctl_ctx *ctx;
	size_t cnt = 0, cap = 0;
	int ret;

	if (!mounts || !list || !n)
		return -EINVAL;
	ret = ndctl_new(&ctx);
	if (ret) {
		ERR("pmem: ndctl_new: %s", strerror(-ret));
		return ret < 0 ? ret : -ENOMEM;
	}
	ndctl_set_log_fn(ctx, ndctl_log);
	ndctl_bus_foreach(ctx, bus) {
		ndctl_region_foreach(bus, region) {
			ndctl_namespace_foreach(region, ndns) {
				if (!ndctl_namespace_is_active(ndns))
					continue;
				if (cnt == cap) {
					cap = cap ? 2 * cap : 4;
					nv = realloc(v, cap * sizeof(*v));
					if (!nv) {
						ret = -ENOMEM;
						goto err_free;
					}
					v = nv;
				}
				ns_fill(region, ndns, mounts, &v[cnt++]);
			}
		}
	}
	ndctl_unref(ctx);
	INFO("pmem: %zu active namespace%s", cnt, cnt == 1 ? "" : "s");
	if (!cnt) {
		free(v);
		v = NULL;
	}
	*list = v;
	*n = cnt;
	return 0;

err_free:
	free(v);
	ndctl_unref(ctx);
	return ret;
}

/* rpmemd_pmem_discover -- with /proc/self/mounts */
int rpmemd_pmem_discover(struct rpmemd_pmem_ns **list, size_t *n)
{
	return rpmemd_pmem_discover_mounts(RPMEMD_MOUNTS, list, n);
}

/* rpmemd_pmem_free -- release a discovered list */
void rpmemd_pmem_free(struct rpmemd_pmem_ns **list)
{
	if (!list)
		return;
	free(*list);
	*list = NULL;
}

/* rpmemd_pmem_auto_regions -- devdax namespaces and DAX-mounted fsdax */
int rpmemd_pmem_auto_regions(const struct rpmemd_pmem_ns *ns, size_t n,
			     struct rpmemd_region_cfg **out, size_t *nout)
{
	struct rpmemd_region_cfg *v = NULL, *r;
	const char *base, *path;
	size_t cnt = 0;
	uint8_t type;

	if ((!ns && n) || !out || !nout)
		return -EINVAL;
	if (n) {
		v = calloc(n, sizeof(*v));
		if (!v)
			return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		if (!ns[i].dev[0])
			continue;
		if (!strcmp(ns[i].mode, "devdax")) {
			type = RPMEM_REGION_DEVDAX;
			path = ns[i].dev;
		} else if (!strcmp(ns[i].mode, "fsdax") && ns[i].mount[0]) {
			type = RPMEM_REGION_FSDAX;
			path = ns[i].mount;
		} else {
			continue;
		}
		base = strrchr(ns[i].dev, '/');
		base = base ? base + 1 : ns[i].dev;
		if (!rpmem_name_valid(base) ||
		    strlen(path) > RPMEM_STR_MAX) {
			WARN("pmem: %s (%s) cannot be a region: bad name or path too long",
			     ns[i].ns, ns[i].dev);
			continue;
		}
		r = &v[cnt++];
		rpmem_strlcpy(r->name, base, sizeof(r->name));
		r->type = type;
		rpmem_strlcpy(r->path, path, sizeof(r->path));
		r->direct_pmem = 0;
	}
	if (!cnt) {
		free(v);
		v = NULL;
	}
	*out = v;
	*nout = cnt;
	return 0;
}

/* rpmemd_pmem_mode_code -- enum rpmem_ns_mode of a mode name */
uint8_t rpmemd_pmem_mode_code(const char *mode)
{
	for (uint8_t m = 1; m <= RPMEM_NS_MODE_MAX; m++)
		if (!strcmp(mode, rpmem_ns_mode_str(m)))
			return m;
	return RPMEM_NS_UNKNOWN;
}

/* the namespaces found last, for STATUS (session threads) */
static pthread_mutex_t pub_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rpmemd_pmem_ns *pub_v;
static size_t pub_n;

/* rpmemd_pmem_publish -- replace the published list */
void rpmemd_pmem_publish(struct rpmemd_pmem_ns **list, size_t n)
{
	struct rpmemd_pmem_ns *nv = list ? *list : NULL, *old;

	if (!n) {
		free(nv);
		nv = NULL;
	}
	pthread_mutex_lock(&pub_lock);
	old = pub_v;
	pub_v = nv;
	pub_n = nv ? n : 0;
	pthread_mutex_unlock(&pub_lock);
	if (list)
		*list = NULL;
	free(old);
}

/* rpmemd_pmem_published -- a copy of the published list */
int rpmemd_pmem_published(struct rpmemd_pmem_ns **list, size_t *n)
{
	struct rpmemd_pmem_ns *v = NULL;
	int ret = 0;

	pthread_mutex_lock(&pub_lock);
	if (pub_n) {
		v = malloc(pub_n * sizeof(*v));
		if (v)
			memcpy(v, pub_v, pub_n * sizeof(*v));
		else
			ret = -ENOMEM;
	}
	*n = v ? pub_n : 0;
	pthread_mutex_unlock(&pub_lock);
	*list = v;
	return ret;
}

/* rpmemd_pmem_dev_ns -- the namespace whose device is dev or disk */
int rpmemd_pmem_dev_ns(const struct rpmemd_pmem_ns *v, size_t n, int chr,
		       uint64_t dev, uint64_t disk)
{
	for (size_t i = 0; i < n; i++) {
		if (!v[i].devno || !v[i].chr != !chr)
			continue;
		if (v[i].devno == dev || (disk && v[i].devno == disk))
			return (int)i;
	}
	return -1;
}

/*
 * disk_of -- the whole disk of block device dev if it is a partition
 * (sysfs: /sys/dev/block/M:m/partition exists, the parent holds "dev"),
 * else 0
 */
static uint64_t disk_of(dev_t dev)
{
	unsigned ma, mi;
	char path[PATH_MAX];
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/partition",
		 major(dev), minor(dev));
	if (access(path, F_OK))
		return 0;
	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/../dev",
		 major(dev), minor(dev));
	f = fopen(path, "re");
	if (!f)
		return 0;
	ok = fscanf(f, "%u:%u", &ma, &mi) == 2;
	fclose(f);
	return ok ? (uint64_t)makedev(ma, mi) : 0;
}

/* rpmemd_pmem_region_ns -- what the region's path is on, then match */
int rpmemd_pmem_region_ns(const struct rpmemd_pmem_ns *v, size_t n,
			  uint8_t type, const char *path)
{
	struct stat st;

	if (!n || stat(path, &st))
		return -1;
	if (type == RPMEM_REGION_DEVDAX) {
		if (!S_ISCHR(st.st_mode))
			return -1;
		return rpmemd_pmem_dev_ns(v, n, 1, (uint64_t)st.st_rdev, 0);
	}
	return rpmemd_pmem_dev_ns(v, n, 0, (uint64_t)st.st_dev,
				  disk_of(st.st_dev));
}
