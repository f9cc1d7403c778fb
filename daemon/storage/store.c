/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * store.c -- the pool store: pools of a region (files, or a devdax pool
 * table) and opens
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libpmem2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "devdax.h"
#include "guard.h"
#include "log.h"
#include "store.h"
#include "util.h"

/* pmem2_err -- a libpmem2 return value as -errno (its own codes are -EIO) */
static int pmem2_err(int ret)
{
	return ret < 0 && ret > -4096 ? ret : -EIO;
}

/*
 * The mapping cache: the mappings of a few recently closed pool files, so
 * that the next open of the same pool (the next sync or verify) finds its
 * pages already mapped instead of faulting in every page again. Keyed by
 * the file's device and inode: a cached mapping holds the file open, so
 * no other file can get that inode number while the entry exists. Entries
 * are dropped when the pool is removed, evicted least recently used, and
 * bounded in number and bytes.
 */
#define MAP_CACHE_MAX 8
#define MAP_CACHE_BYTES (32ull << 30)

static struct map_cache_entry {
	dev_t dev;
	ino_t ino;
	uint64_t size;
	struct pmem2_map *map; /* NULL = free slot */
	uint64_t used;
} map_cache[MAP_CACHE_MAX];
static pthread_mutex_t map_cache_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t map_cache_clock;

/* map_cache_take -- the cached mapping of dev/ino of size bytes, or NULL */
static struct pmem2_map *map_cache_take(dev_t dev, ino_t ino, uint64_t size)
{
	struct pmem2_map *map = NULL;
	pthread_mutex_lock(&map_cache_lock);
	for (unsigned i = 0; i < MAP_CACHE_MAX; i++) {
		struct map_cache_entry *e = &map_cache[i];
		if (e->map && e->dev == dev && e->ino == ino) {
			if (e->size == size)
				map = e->map;
			else
				pmem2_map_delete(&e->map);
			e->map = NULL;
			break;
		}
	}
	pthread_mutex_unlock(&map_cache_lock);
	return map;
}

/* map_cache_put -- keep map for a later open; may evict (and unmap) */
static void map_cache_put(dev_t dev, ino_t ino, uint64_t size,
			  struct pmem2_map *map)
{
	struct pmem2_map *evict = NULL;
	uint64_t total = size;
	struct map_cache_entry *slot = NULL, *lru = NULL;

	if (size > MAP_CACHE_BYTES) {
		pmem2_map_delete(&map);
		return;
	}
	pthread_mutex_lock(&map_cache_lock);
	for (unsigned i = 0; i < MAP_CACHE_MAX; i++) {
		struct map_cache_entry *e = &map_cache[i];
		if (!e->map) {
			slot = slot ? slot : e;
			continue;
		}
		total += e->size;
		if (!lru || e->used < lru->used)
			lru = e;
	}
	if (!slot || total > MAP_CACHE_BYTES) {
		evict = lru->map;
		slot = lru;
	}
	*slot = (struct map_cache_entry){ dev, ino, size, map,
					  ++map_cache_clock };
	pthread_mutex_unlock(&map_cache_lock);
	if (evict)
		pmem2_map_delete(&evict);
}

/* map_cache_drop -- forget the mapping of the file name in dirfd, if any */
static void map_cache_drop(int dirfd, const char *name)
{
	struct stat st;
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW))
		return;
	struct pmem2_map *map = map_cache_take(st.st_dev, st.st_ino,
					       (uint64_t)st.st_size);
	if (map)
		pmem2_map_delete(&map);
}

/* find_open -- the open pool of file dev/ino; set->lock held */
static struct rpmemd_pool *find_open(struct rpmemd_regions *set, dev_t dev,
				     ino_t ino)
{
	for (struct rpmemd_pool *p = set->open; p; p = p->next)
		if (!p->dax && p->dev == dev && p->ino == ino)
			return p;
	return NULL;
}

/* find_open_dax -- the open pool name of device dax; set->lock held */
static struct rpmemd_pool *find_open_dax(struct rpmemd_regions *set,
					 const struct rpmemd_dax *dax,
					 const char *name)
{
	for (struct rpmemd_pool *p = set->open; p; p = p->next)
		if (p->dax == dax && !strcmp(p->name, name))
			return p;
	return NULL;
}

/* find_open_name -- the open pool name of region r, if any; set->lock */
static struct rpmemd_pool *find_open_name(struct rpmemd_region *r,
					  const char *name)
{
	struct stat st;
	if (r->dax)
		return find_open_dax(r->set, r->dax, name);
	if (fstatat(r->dirfd, name, &st, AT_SYMLINK_NOFOLLOW))
		return NULL;
	return find_open(r->set, st.st_dev, st.st_ino);
}

/*
 * open_busy -- -EBUSY with the reason in err if pool name of r is open
 * (a session may be writing to it), else 0
 */
static int open_busy(struct rpmemd_region *r, const char *name, char *err,
		     size_t errlen)
{
	int ret = 0;
	pthread_mutex_lock(&r->set->lock);
	struct rpmemd_pool *p = find_open_name(r, name);
	if (p) {
		if (p->writer_sid)
			snprintf(err, errlen,
				 "pool '%s' is open for writing by %s; close it first",
				 name, p->writer);
		else
			snprintf(err, errlen,
				 "pool '%s' is open by %u reader(s); close it first",
				 name, p->readers);
		ret = -EBUSY;
	}
	pthread_mutex_unlock(&r->set->lock);
	return ret;
}

/* syncing_busy -- -EBUSY unless forced if the pool is in a sync */
static int syncing_busy(const struct rpmemd_meta *m, const char *name,
			int force, char *err, size_t errlen)
{
	if (m->state != RPMEM_POOL_SYNCING || force)
		return 0;
	snprintf(err, errlen,
		 "pool '%s' is in the middle of a sync (state syncing); a new sync resumes it, or remove it with --force",
		 name);
	return -EBUSY;
}

/* stats_find -- the saved counters of pool name; set->lock held */
static struct rpmemd_pool_stats *stats_find(struct rpmemd_region *r,
					    const char *name)
{
	for (struct rpmemd_pool_stats *st = r->stats; st; st = st->next)
		if (!strcmp(st->name, name))
			return st;
	return NULL;
}

/* stats_save -- keep the counters of a pool being closed; set->lock held */
static void stats_save(struct rpmemd_pool *p)
{
	struct rpmemd_region *r = p->region;
	struct rpmemd_pool_stats *st = stats_find(r, p->name);
	if (!st) {
		st = calloc(1, sizeof(*st));
		if (!st)
			return; /* the counters start over: no harm */
		rpmem_strlcpy(st->name, p->name, sizeof(st->name));
		st->next = r->stats;
		r->stats = st;
	}
	st->bytes_written =
		__atomic_load_n(&p->bytes_written, __ATOMIC_RELAXED);
	st->flushes = __atomic_load_n(&p->flushes, __ATOMIC_RELAXED);
}

/* stats_drop -- forget the counters of a removed or new pool */
static void stats_drop(struct rpmemd_region *r, const char *name)
{
	pthread_mutex_lock(&r->set->lock);
	for (struct rpmemd_pool_stats **pp = &r->stats; *pp;
	     pp = &(*pp)->next) {
		if (!strcmp((*pp)->name, name)) {
			struct rpmemd_pool_stats *st = *pp;
			*pp = st->next;
			free(st);
			break;
		}
	}
	pthread_mutex_unlock(&r->set->lock);
}

/* meta_exists -- the pool has metadata (it exists as a pool) */
static int meta_exists(struct rpmemd_region *r, const char *name)
{
	char file[RPMEM_NAME_MAX + 16];
	struct stat st;
	snprintf(file, sizeof(file), "%s%s", name, RPMEMD_META_SUFFIX);
	return fstatat(r->metafd, file, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

/*
 * orphan_not_ours -- why an orphan pool file (one without metadata) is
 * not rpmemd's own and must not be reused: "" if it is a regular file with
 * one link owned by our effective uid. A second link may be a file outside
 * the region; truncating and writing it would change that file.
 */
static const char *orphan_not_ours(const struct stat *st, char *buf,
				   size_t len)
{
	if (st->st_nlink != 1)
		snprintf(buf, len, "it has %llu links",
			 (unsigned long long)st->st_nlink);
	else if (st->st_uid != geteuid())
		snprintf(buf, len, "it is owned by uid %u",
			 (unsigned)st->st_uid);
	else
		buf[0] = '\0';
	return buf;
}

/*
 * create_file -- open the file of a new pool: created afresh (O_EXCL), or
 * an orphan of rpmemd's own reused. An orphan that is not its own (hard
 * link, other owner) is unlinked, never opened, and a new file created
 * in its place; a symbolic link or anything but a regular file is
 * refused. Returns 0 with *fdp, or -errno with err[] filled.
 */
static int create_file(struct rpmemd_region *r, const char *name, int *fdp,
		       char *err, size_t errlen)
{
	char why[64];
	struct stat st, fst;

	for (int tries = 0; tries < 3; tries++) {
		int fd = openat(r->dirfd, name,
				O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW |
					O_CLOEXEC,
				0600);
		if (fd >= 0) {
			*fdp = fd;
			return 0;
		}
		if (errno != EEXIST || fstatat(r->dirfd, name, &st,
					       AT_SYMLINK_NOFOLLOW)) {
			int e = errno;
			if (e == ENOENT)
				continue; /* gone in between */
			snprintf(err, errlen,
				 "cannot create pool '%s' in region '%s': %s",
				 name, r->cfg.name, strerror(e));
			return -e;
		}
		if (!S_ISREG(st.st_mode)) {
			snprintf(err, errlen,
				 "cannot create pool '%s' in region '%s': %s",
				 name, r->cfg.name,
				 S_ISLNK(st.st_mode) ?
					 "a symbolic link is in the way" :
					 "a file that is not a regular file is in the way");
			return -EINVAL;
		}
		if (orphan_not_ours(&st, why, sizeof(why))[0]) {
			WARN("region '%s': pool '%s': the file without metadata in the way is not rpmemd's own (%s); unlinking it and creating a new one",
			     r->cfg.name, name, why);
			if (unlinkat(r->dirfd, name, 0) && errno != ENOENT) {
				int e = errno;
				snprintf(err, errlen,
					 "cannot create pool '%s' in region '%s': cannot unlink the file in the way (%s): %s",
					 name, r->cfg.name, why, strerror(e));
				return -e;
			}
			continue;
		}
		fd = openat(r->dirfd, name, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			continue; /* replaced in between: look again */
		/* still the file looked at, and still ours */
		if (!fstat(fd, &fst) && fst.st_dev == st.st_dev &&
		    fst.st_ino == st.st_ino && S_ISREG(fst.st_mode) &&
		    !orphan_not_ours(&fst, why, sizeof(why))[0]) {
			*fdp = fd;
			return 0;
		}
		close(fd);
	}
	snprintf(err, errlen,
		 "cannot create pool '%s' in region '%s': the file in the way keeps changing",
		 name, r->cfg.name);
	return -EBUSY;
}

/* dax_create -- a pool of a devdax region: an extent and a table entry */
static int dax_create(struct rpmemd_region *r, const char *name,
		      uint64_t size, char *err, size_t errlen)
{
	struct rpmemd_devdax_info di;
	char need[32], have[32], big[32];
	int ret;

	pthread_mutex_lock(&r->dax->lock);
	ret = rpmemd_devdax_create(r->dax->dd, name, size, NULL);
	if (ret == -EEXIST) {
		snprintf(err, errlen, "pool '%s' already exists in region '%s'",
			 name, r->cfg.name);
	} else if (ret == -ENOSPC) {
		rpmemd_devdax_info(r->dax->dd, &di);
		if (di.npools >= di.max_pools)
			snprintf(err, errlen,
				 "region '%s' cannot hold more pools: its pool table is full (%u pools)",
				 r->cfg.name, di.max_pools);
		else
			snprintf(err, errlen,
				 "pool '%s' needs %s but region '%s' has %s free (largest free extent %s)",
				 name, rpmem_fmt_size(size, need, sizeof(need)),
				 r->cfg.name,
				 rpmem_fmt_size(di.free, have, sizeof(have)),
				 rpmem_fmt_size(di.largest_free, big,
						sizeof(big)));
	} else if (ret) {
		snprintf(err, errlen, "cannot create pool '%s' in region '%s': %s",
			 name, r->cfg.name, strerror(-ret));
	}
	pthread_mutex_unlock(&r->dax->lock);
	if (!ret)
		stats_drop(r, name);
	return ret;
}

#define TMPFS_FS_MAGIC 0x01021994
#define RAMFS_FS_MAGIC 0x858458f6

/*
 * in_memory -- fd is a file of tmpfs or ramfs: its pages are the file,
 * there is no writeback, msync has nothing to do
 */
static int in_memory(int fd)
{
	struct statfs sf;

	if (fstatfs(fd, &sf))
		return 0;
	return (unsigned long)sf.f_type == TMPFS_FS_MAGIC ||
	       (unsigned long)sf.f_type == RAMFS_FS_MAGIC;
}

/*
 * allocate -- give the new pool file fd its size bytes: allocated, so
 * that a full region fails the CREATE, not a later write; in memory
 * (tmpfs) only sized: allocating there is the page allocation that the
 * first mirror's writes would do anyway, and doing it all ahead doubles
 * a first mirror's time on the target. Its free space was checked; the
 * pool's holes are written through the file (ENOSPC reaches the client
 * as a failed WRITE; rpmemd_pool_sparse). 0 or -errno.
 */
static int allocate(int fd, uint64_t size)
{
	int ret;

	if (in_memory(fd))
		return ftruncate(fd, (off_t)size) ? -errno : 0;
	if ((ret = posix_fallocate(fd, 0, (off_t)size)))
		return -ret;
	return fsync(fd) ? -errno : 0;
}

int rpmemd_pool_create(struct rpmemd_region *r, const char *name,
		       uint64_t size, char *err, size_t errlen)
{
	char need[32], have[32];
	struct rpmemd_meta m;
	uint64_t avail;
	int ret, fd = -1;

	if (!rpmem_name_valid(name)) {
		snprintf(err, errlen,
			 "invalid pool name '%s' (" RPMEM_NAME_RULE ")",
			 name);
		return -EINVAL;
	}
	if (size > RPMEM_SIZE_MAX) {
		snprintf(err, errlen,
			 "size %llu of pool '%s' is larger than the largest size supported (%llu bytes: 8 EiB less one byte)",
			 (unsigned long long)size, name,
			 (unsigned long long)RPMEM_SIZE_MAX);
		return -EFBIG;
	}
	if (size == 0 || size % r->align) {
		snprintf(err, errlen,
			 "invalid size %llu for pool '%s': a positive multiple of %u bytes is required",
			 (unsigned long long)size, name, r->align);
		return -EINVAL;
	}

	if (r->dax)
		return dax_create(r, name, size, err, errlen);
	pthread_mutex_lock(&r->lock);
	if (meta_exists(r, name)) {
		snprintf(err, errlen, "pool '%s' already exists in region '%s'",
			 name, r->cfg.name);
		ret = -EEXIST;
		goto err_unlock;
	}
	ret = create_file(r, name, &fd, err, errlen);
	if (ret)
		goto err_unlock;
	if (ftruncate(fd, 0)) {
		ret = -errno;
		snprintf(err, errlen, "cannot create pool '%s': truncate: %s",
			 name, strerror(errno));
		goto err_unlink;
	}
	ret = rpmemd_region_free_space(r, &avail);
	if (ret == 0 && size > avail)
		ret = -ENOSPC;
	if (ret == 0) {
		ret = allocate(fd, size);
		if (ret == -ENOSPC)
			rpmemd_region_free_space(r, &avail);
	}
	if (ret == -ENOSPC) {
		snprintf(err, errlen,
			 "pool '%s' needs %s but region '%s' has %s free", name,
			 rpmem_fmt_size(size, need, sizeof(need)), r->cfg.name,
			 rpmem_fmt_size(avail, have, sizeof(have)));
		goto err_unlink;
	}
	if (ret) {
		snprintf(err, errlen, "cannot allocate pool '%s' in region '%s': %s",
			 name, r->cfg.name, strerror(-ret));
		goto err_unlink;
	}
	if ((ret = rpmemd_meta_init(&m, size)) ||
	    (ret = fsync(r->dirfd) ? -errno : 0) ||
	    (ret = rpmemd_meta_write(r->metafd, name, &m))) {
		snprintf(err, errlen,
			 "cannot write the metadata of pool '%s' in region '%s': %s",
			 name, r->cfg.name, strerror(-ret));
		goto err_unlink;
	}
	close(fd);
	stats_drop(r, name);
	pthread_mutex_unlock(&r->lock);
	return 0;

err_unlink:
	unlinkat(r->dirfd, name, 0);
	close(fd);
err_unlock:
	pthread_mutex_unlock(&r->lock);
	return ret;
}

/* dax_remove -- drop a pool from a devdax region's table */
static int dax_remove(struct rpmemd_region *r, const char *name, int force,
		      char *err, size_t errlen)
{
	struct rpmemd_devdax_pool dp;
	int ret;

	pthread_mutex_lock(&r->dax->lock);
	ret = rpmemd_devdax_lookup(r->dax->dd, name, &dp);
	if (ret == -ENOENT) {
		snprintf(err, errlen, "no pool '%s' in region '%s'", name,
			 r->cfg.name);
		goto out;
	}
	if (ret) {
		snprintf(err, errlen, "cannot look up pool '%s': %s", name,
			 strerror(-ret));
		goto out;
	}
	if ((ret = open_busy(r, name, err, errlen)) ||
	    (ret = syncing_busy(&dp.meta, name, force, err, errlen)))
		goto out;
	ret = rpmemd_devdax_remove(r->dax->dd, name);
	if (ret) {
		snprintf(err, errlen, "cannot remove pool '%s' from region '%s': %s",
			 name, r->cfg.name, strerror(-ret));
		goto out;
	}
	stats_drop(r, name);
out:
	pthread_mutex_unlock(&r->dax->lock);
	return ret;
}

int rpmemd_pool_remove(struct rpmemd_region *r, const char *name, int force,
		       char *err, size_t errlen)
{
	struct rpmemd_meta m;
	int ret;

	if (!rpmem_name_valid(name)) {
		snprintf(err, errlen, "invalid pool name '%s'", name);
		return -EINVAL;
	}
	if (r->dax)
		return dax_remove(r, name, force, err, errlen);
	pthread_mutex_lock(&r->lock);
	ret = rpmemd_meta_read(r->metafd, name, &m);
	if (ret == -ENOENT) {
		snprintf(err, errlen, "no pool '%s' in region '%s'", name,
			 r->cfg.name);
		goto err_unlock;
	}
	/* a corrupt metadata file does not keep the pool alive */
	if (ret && ret != -EBADMSG) {
		snprintf(err, errlen, "cannot read the metadata of pool '%s': %s",
			 name, strerror(-ret));
		goto err_unlock;
	}
	int corrupt = ret == -EBADMSG;
	if ((ret = open_busy(r, name, err, errlen)) ||
	    (!corrupt && (ret = syncing_busy(&m, name, force, err, errlen))))
		goto err_unlock;
	ret = rpmemd_meta_unlink(r->metafd, name);
	if (ret) {
		snprintf(err, errlen, "cannot remove the metadata of pool '%s': %s",
			 name, strerror(-ret));
		goto err_unlock;
	}
	/* from here the pool is gone; a leftover file is an invisible orphan */
	if ((ret = rpmemd_hcache_unlink(r->metafd, name)))
		WARN("region '%s': pool '%s': cannot remove its hash cache: %s",
		     r->cfg.name, name, strerror(-ret));
	ret = 0;
	stats_drop(r, name);
	map_cache_drop(r->dirfd, name);
	if (unlinkat(r->dirfd, name, 0) && errno != ENOENT)
		WARN("region '%s': pool '%s': cannot remove %s/%s: %s",
		     r->cfg.name, name, r->cfg.path, name, strerror(errno));
	else if (fsync(r->dirfd))
		WARN("region '%s': fsync of %s: %s", r->cfg.name, r->cfg.path,
		     strerror(errno));
	pthread_mutex_unlock(&r->lock);
	return 0;

err_unlock:
	pthread_mutex_unlock(&r->lock);
	return ret;
}

/* pool_use_map -- make map the mapping of pool p */
static void pool_use_map(struct rpmemd_pool *p, struct pmem2_map *map)
{
	p->map = map;
	p->addr = pmem2_map_get_address(map);
	p->persist = pmem2_get_persist_fn(map);
	p->is_pmem = pmem2_map_get_store_granularity(map) !=
		     PMEM2_GRANULARITY_PAGE;
}

/* pool_map -- map the pool file with libpmem2 (or reuse a cached mapping) */
static int pool_map(struct rpmemd_pool *p, int fd, char *err, size_t errlen)
{
	struct pmem2_source *src;
	struct pmem2_config *cfg;
	struct pmem2_map *map;
	int ret;

	p->in_memory = in_memory(fd);
	if ((map = map_cache_take(p->dev, p->ino, p->size))) {
		pool_use_map(p, map);
		return 0;
	}
	if ((ret = pmem2_source_from_fd(&src, fd))) {
		snprintf(err, errlen, "pool '%s': pmem2_source_from_fd: %s",
			 p->name, pmem2_errormsg());
		return pmem2_err(ret);
	}
	if ((ret = pmem2_config_new(&cfg))) {
		snprintf(err, errlen, "pool '%s': pmem2_config_new: %s",
			 p->name, pmem2_errormsg());
		ret = pmem2_err(ret);
		goto err_src;
	}
	ret = pmem2_config_set_required_store_granularity(
		cfg, PMEM2_GRANULARITY_PAGE);
	if (ret) {
		snprintf(err, errlen,
			 "pool '%s': pmem2_config_set_required_store_granularity: %s",
			 p->name, pmem2_errormsg());
		ret = pmem2_err(ret);
		goto err_cfg;
	}
	if ((ret = pmem2_map_new(&map, cfg, src))) {
		snprintf(err, errlen, "pool '%s': pmem2_map_new: %s", p->name,
			 pmem2_errormsg());
		ret = pmem2_err(ret);
		goto err_cfg;
	}
	pool_use_map(p, map);
	if (p->region->cfg.type == RPMEM_REGION_FSDAX && !p->is_pmem)
		WARN("region '%s': pool '%s' is not mapped as PMem (no DAX for this file?); persisting with msync",
		     p->region->cfg.name, p->name);
	ret = 0;
err_cfg:
	pmem2_config_delete(&cfg);
err_src:
	pmem2_source_delete(&src);
	return ret;
}

/* pool_attach -- add an open to p; set->lock held */
static int pool_attach(struct rpmemd_pool *p, uint8_t mode, uint32_t sid,
		       const char *holder, char *err, size_t errlen)
{
	if (mode == RPMEM_OPEN_RW) {
		if (p->writer_sid) {
			snprintf(err, errlen,
				 "pool '%s/%s' is open for writing by %s; retry later",
				 p->region->cfg.name, p->name, p->writer);
			return -EBUSY;
		}
		p->writer_sid = sid;
		rpmem_strlcpy(p->writer, holder, sizeof(p->writer));
	} else {
		p->readers++;
	}
	p->refs++;
	return 0;
}

/* pool_stat -- the pool file's stat now; 0 or -errno */
static int pool_stat(struct rpmemd_pool *p, struct stat *st)
{
	if (fstatat(p->region->dirfd, p->name, st, AT_SYMLINK_NOFOLLOW))
		return -errno;
	if (st->st_dev != p->dev || st->st_ino != p->ino)
		return -ESTALE;
	return 0;
}

/* hc_commit -- make the hash cache clean (no writer left); logs failures */
static void hc_commit(struct rpmemd_pool *p)
{
	struct stat st;
	if (!p->hc)
		return;
	int ret = pool_stat(p, &st);
	if (!ret)
		ret = rpmemd_hcache_commit(p->hc, &st);
	if (ret)
		WARN("region '%s': pool '%s': its hash cache stays dirty (every block will be hashed again): %s",
		     p->region->cfg.name, p->name, strerror(-ret));
}

void rpmemd_pool_check_file(struct rpmemd_pool *p)
{
	struct stat st;
	if (!p->hc)
		return;
	if (pool_stat(p, &st))
		memset(&st, 0, sizeof(st)); /* gone or replaced: drop all */
	rpmemd_hcache_check_file(p->hc, &st);
}

/* persist_args -- a range of a pool to persist (guarded) */
struct hc_persist_args {
	struct rpmemd_pool *p;
	uint64_t off;
	uint64_t len;
};

/* hc_persist_run -- rpmemd_pool_persist of one range (guard body) */
static int hc_persist_run(void *arg)
{
	struct hc_persist_args *a = arg;
	return rpmemd_pool_persist(a->p, a->off, a->len);
}

/* hc_persist -- the hash cache's persist callback: guarded persist */
static int hc_persist(void *arg, uint64_t off, uint64_t len)
{
	struct hc_persist_args a = { arg, off, len };
	int ret = rpmem_guard_run(hc_persist_run, &a);
	return ret == -EHWPOISON ? -EIO : ret;
}

/*
 * hc_open -- the pool's hash cache (a regular file pool only); without
 * one (an error, logged), every HASH hashes the data
 */
static void hc_open(struct rpmemd_pool *p, const struct stat *st)
{
	int ret = rpmemd_hcache_open(p->region->metafd, p->name, p->meta.uuid,
				     p->size, st, hc_persist, p, &p->hc);
	if (ret)
		WARN("region '%s': pool '%s': no hash cache (every HASH hashes the pool): %s",
		     p->region->cfg.name, p->name, strerror(-ret));
}

/* pool_free -- unmap and release a pool nobody has open */
static void pool_free(struct rpmemd_pool *p)
{
	/* a pool never used (a lost race in open): no commit */
	rpmemd_hcache_close(&p->hc);
	if (p->map)
		map_cache_put(p->dev, p->ino, p->size, p->map);
	if (p->fd >= 0)
		close(p->fd);
	pthread_mutex_destroy(&p->meta_lock);
	rpmemd_region_put(&p->region);
	free(p);
}

/* pool_new -- a pool object of region r, not yet in the open table */
static int pool_new(struct rpmemd_region *r, const char *name,
		    const struct rpmemd_meta *m, struct rpmemd_pool **out,
		    char *err, size_t errlen)
{
	struct rpmemd_pool *np = calloc(1, sizeof(*np));
	int ret;
	if (!np) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	if ((ret = -pthread_mutex_init(&np->meta_lock, NULL))) {
		free(np);
		snprintf(err, errlen, "pool '%s': %s", name, strerror(-ret));
		return ret;
	}
	rpmemd_region_ref(r);
	np->region = r;
	rpmem_strlcpy(np->name, name, sizeof(np->name));
	np->size = m->size;
	np->meta = *m;
	np->pagesize = (size_t)sysconf(_SC_PAGESIZE);
	np->fd = -1;
	*out = np;
	return 0;
}

/* pool_insert -- put fresh pool np in the open table; set->lock held */
static void pool_insert(struct rpmemd_pool *np)
{
	struct rpmemd_regions *set = np->region->set;
	struct rpmemd_pool_stats *saved = stats_find(np->region, np->name);
	np->next = set->open;
	set->open = np;
	if (saved) {
		np->bytes_written = saved->bytes_written;
		np->flushes = saved->flushes;
	}
}

/*
 * dax_open -- open a pool of a devdax region: its range of the device's
 * mapping, shared by every open of the pool
 */
static int dax_open(struct rpmemd_region *r, const char *name, uint8_t mode,
		    uint32_t sid, const char *holder, struct rpmemd_pool **out,
		    char *err, size_t errlen)
{
	struct rpmemd_regions *set = r->set;
	struct rpmemd_devdax_pool dp;
	struct rpmemd_devdax_info di;
	struct rpmemd_pool *p, *np = NULL;
	void *addr;
	uint64_t size;
	int ret;

	pthread_mutex_lock(&r->dax->lock);
	ret = rpmemd_devdax_lookup(r->dax->dd, name, &dp);
	if (ret) {
		snprintf(err, errlen, ret == -ENOENT ?
				 "no pool '%s' in region '%s'" :
				 "cannot look up pool '%s' in region '%s'",
			 name, r->cfg.name);
		goto out;
	}
	/* already open: share it */
	pthread_mutex_lock(&set->lock);
	p = find_open_dax(set, r->dax, name);
	if (p)
		ret = pool_attach(p, mode, sid, holder, err, errlen);
	pthread_mutex_unlock(&set->lock);
	if (p)
		goto out;

	ret = rpmemd_devdax_pool_addr(r->dax->dd, name, &addr, &size);
	if (ret || size != dp.meta.size) {
		snprintf(err, errlen, "pool '%s' in region '%s': no range in the pool table",
			 name, r->cfg.name);
		ret = -EIO;
		goto out;
	}
	if ((ret = pool_new(r, name, &dp.meta, &np, err, errlen)))
		goto out;
	rpmemd_devdax_info(r->dax->dd, &di);
	np->dax = r->dax;
	np->addr = addr;
	np->is_pmem = di.granularity != PMEM2_GRANULARITY_PAGE;
	/* the device's lock keeps out a second open of this pool */
	pthread_mutex_lock(&set->lock);
	pool_insert(np);
	ret = pool_attach(np, mode, sid, holder, err, errlen);
	if (ret)
		set->open = np->next;
	pthread_mutex_unlock(&set->lock);
	if (ret) {
		pool_free(np);
		goto out;
	}
	p = np;
out:
	pthread_mutex_unlock(&r->dax->lock);
	if (!ret)
		*out = p;
	return ret;
}

int rpmemd_pool_open(struct rpmemd_region *r, const char *name, uint8_t mode,
		     uint32_t sid, const char *holder,
		     struct rpmemd_pool **out, char *err, size_t errlen)
{
	struct rpmemd_regions *set = r->set;
	struct rpmemd_pool *p, *np = NULL;
	struct rpmemd_meta m;
	struct stat st;
	int ret, fd;

	if (!rpmem_name_valid(name)) {
		snprintf(err, errlen, "invalid pool name '%s'", name);
		return -EINVAL;
	}
	if (r->dax)
		return dax_open(r, name, mode, sid, holder, out, err, errlen);
	pthread_mutex_lock(&r->lock);
	ret = rpmemd_meta_read(r->metafd, name, &m);
	if (ret) {
		if (ret == -ENOENT)
			snprintf(err, errlen, "no pool '%s' in region '%s'",
				 name, r->cfg.name);
		else if (ret == -EBADMSG)
			snprintf(err, errlen,
				 "pool '%s' in region '%s' has corrupt metadata (%s/%s/%s%s)",
				 name, r->cfg.name, r->cfg.path,
				 RPMEMD_META_DIR, name, RPMEMD_META_SUFFIX);
		else
			snprintf(err, errlen,
				 "cannot read the metadata of pool '%s': %s",
				 name, strerror(-ret));
		if (ret == -EBADMSG)
			ret = -EIO;
		goto err_unlock;
	}
	fd = rpmemd_open_own(r->dirfd, name, O_RDWR);
	if (fd < 0) {
		ret = fd;
		if (ret == -EMLINK)
			snprintf(err, errlen, "pool '%s' in region '%s': its file has more than one hard link (another may be a file outside the region): refusing to open it",
				 name, r->cfg.name);
		else
			snprintf(err, errlen, "cannot open pool '%s' (%s/%s): %s",
				 name, r->cfg.path, name, strerror(-ret));
		if (ret == -ENOENT)
			ret = -EIO; /* metadata without its file */
		goto err_unlock;
	}
	if (fstat(fd, &st)) {
		ret = -errno;
		snprintf(err, errlen, "pool '%s': fstat: %s", name,
			 strerror(errno));
		goto err_close;
	}
	if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size != m.size) {
		snprintf(err, errlen,
			 "pool '%s' in region '%s': the file is %llu bytes but its metadata says %llu",
			 name, r->cfg.name, (unsigned long long)st.st_size,
			 (unsigned long long)m.size);
		ret = -EIO;
		goto err_close;
	}

	/* already open: share the mapping */
	pthread_mutex_lock(&set->lock);
	p = find_open(set, st.st_dev, st.st_ino);
	if (p) {
		ret = pool_attach(p, mode, sid, holder, err, errlen);
		pthread_mutex_unlock(&set->lock);
		if (ret)
			goto err_close;
		goto done;
	}
	pthread_mutex_unlock(&set->lock);

	if ((ret = pool_new(r, name, &m, &np, err, errlen)))
		goto err_close;
	np->dev = st.st_dev;
	np->ino = st.st_ino;
	if ((ret = pool_map(np, fd, err, errlen)))
		goto err_free;
	/* kept open: a new pool's WRITEs go through the file (req_write) */
	np->fd = fd;
	fd = -1;
	hc_open(np, &st);

	pthread_mutex_lock(&set->lock);
	/* the same file through another region object (after a reload) */
	p = find_open(set, st.st_dev, st.st_ino);
	if (!p) {
		p = np;
		np = NULL;
		pool_insert(p);
	}
	ret = pool_attach(p, mode, sid, holder, err, errlen);
	if (ret && p->refs == 0) {
		/* our fresh pool: nobody else can know it yet */
		set->open = p->next;
		np = p;
	}
	pthread_mutex_unlock(&set->lock);
	if (ret)
		goto err_free;
	if (np)
		pool_free(np);
done:
	if (fd >= 0)
		close(fd);
	pthread_mutex_unlock(&r->lock);
	*out = p;
	return 0;

err_free:
	if (np)
		pool_free(np);
err_close:
	if (fd >= 0)
		close(fd);
err_unlock:
	pthread_mutex_unlock(&r->lock);
	return ret;
}

void rpmemd_pool_close(struct rpmemd_pool **pp, uint8_t mode, uint32_t sid)
{
	struct rpmemd_pool *p = pp ? *pp : NULL;
	if (!p)
		return;
	*pp = NULL;
	struct rpmemd_region *r = p->region;
	struct rpmemd_regions *set = r->set;
	/* an open of this pool waits until its hash cache is committed */
	pthread_mutex_lock(&r->lock);
	pthread_mutex_lock(&set->lock);
	if (mode == RPMEM_OPEN_RW && p->writer_sid == sid) {
		p->writer_sid = 0;
		p->writer[0] = '\0';
	} else if (p->readers) {
		p->readers--;
	}
	int last = --p->refs == 0;
	if (last) {
		stats_save(p);
		for (struct rpmemd_pool **q = &set->open; *q; q = &(*q)->next) {
			if (*q == p) {
				*q = p->next;
				break;
			}
		}
	}
	pthread_mutex_unlock(&set->lock);
	if (last && p->hc) {
		hc_commit(p);
		rpmemd_hcache_close(&p->hc);
	}
	pthread_mutex_unlock(&r->lock);
	if (last)
		pool_free(p);
}

int rpmemd_pool_sparse(const struct rpmemd_pool *p)
{
	struct stat st;

	if (p->fd < 0 || !p->in_memory || fstat(p->fd, &st))
		return 0;
	return (uint64_t)st.st_blocks * 512 < p->size;
}

int rpmemd_pool_shrunk(const struct rpmemd_pool *p)
{
	struct stat st;

	if (p->fd < 0 || fstat(p->fd, &st))
		return 0;
	return (uint64_t)st.st_size < p->size;
}

int rpmemd_pool_persist(struct rpmemd_pool *p, uint64_t off, uint64_t len)
{
	if (len == 0)
		return 0;
	if (p->dax) {
		int ret = rpmemd_devdax_persist(p->dax->dd, p->addr + off, len);
		if (ret)
			ERR("region '%s': pool '%s': persisting %llu bytes at %llu failed: %s",
			    p->region->cfg.name, p->name,
			    (unsigned long long)len, (unsigned long long)off,
			    strerror(-ret));
		return ret;
	}
	if (p->is_pmem) {
		p->persist(p->addr + off, len);
		return 0;
	}
	/* a msync of tmpfs or ramfs pages writes nothing back: skip it */
	if (p->in_memory)
		return 0;
	/*
	 * Page granularity: libpmem2's persist function is msync, but it
	 * swallows msync's errors (and pmem2_deep_flush is a no-op here),
	 * so call msync directly to report a failed writeback.
	 */
	uintptr_t start = (uintptr_t)(p->addr + off) &
			  ~((uintptr_t)p->pagesize - 1);
	uintptr_t end = (uintptr_t)(p->addr + off + len);
	if (msync((void *)start, end - start, MS_SYNC)) {
		int ret = -errno;
		ERR("region '%s': pool '%s': msync of %llu bytes at %llu failed: %s",
		    p->region->cfg.name, p->name, (unsigned long long)len,
		    (unsigned long long)off, strerror(errno));
		return ret;
	}
	return 0;
}

/*
 * dax_set_state -- the state change in the device's pool table (one
 * whole-slot write); *m gets the record as written
 */
static int dax_set_state(struct rpmemd_pool *p, uint8_t state,
			 const char *source, struct rpmemd_meta *m)
{
	struct rpmemd_devdax_pool dp;
	int ret = rpmemd_devdax_set_state(p->dax->dd, p->name, state,
					  source && source[0] ? source : NULL);
	if (!ret)
		ret = rpmemd_devdax_lookup(p->dax->dd, p->name, &dp);
	if (!ret)
		*m = dp.meta;
	return ret;
}

int rpmemd_pool_set_state(struct rpmemd_pool *p, uint8_t state,
			  const char *source, struct rpmemd_meta *out,
			  char *err, size_t errlen)
{
	pthread_mutex_lock(&p->meta_lock);
	struct rpmemd_meta m = p->meta;
	int ret = rpmemd_meta_transition(&m, state);
	if (ret) {
		snprintf(err, errlen, "pool '%s' cannot go from %s to %s",
			 p->name, rpmem_state_str(p->meta.state),
			 rpmem_state_str(state));
		goto out;
	}
	if (source && source[0])
		rpmemd_meta_set_source(&m, source);
	if (p->dax)
		ret = dax_set_state(p, state, source, &m);
	else
		ret = rpmemd_meta_write(p->region->metafd, p->name, &m);
	if (ret) {
		snprintf(err, errlen, "cannot write the metadata of pool '%s': %s",
			 p->name, strerror(-ret));
		ERR("region '%s': pool '%s': metadata write failed: %s",
		    p->region->cfg.name, p->name, strerror(-ret));
		goto out;
	}
	p->meta = m;
	*out = m;
out:
	pthread_mutex_unlock(&p->meta_lock);
	/* consistent: no more writes; the written blocks' hashes are kept */
	if (!ret && state == RPMEM_POOL_CONSISTENT)
		hc_commit(p);
	return ret;
}

void rpmemd_pool_get_meta(struct rpmemd_pool *p, struct rpmemd_meta *m)
{
	pthread_mutex_lock(&p->meta_lock);
	*m = p->meta;
	pthread_mutex_unlock(&p->meta_lock);
}

/* rpmemd_pool_state -- the open pool's state (RPMEM_POOL_*) */
uint8_t rpmemd_pool_state(struct rpmemd_pool *p)
{
	pthread_mutex_lock(&p->meta_lock);
	uint8_t state = p->meta.state;
	pthread_mutex_unlock(&p->meta_lock);
	return state;
}

/* pool_info -- fill one entry from the metadata and the open table */
static void pool_info(struct rpmemd_region *r, const char *name,
		      const struct rpmemd_meta *m, struct rpmem_pool_info *pi)
{
	memset(pi, 0, sizeof(*pi));
	rpmem_strlcpy(pi->region, r->cfg.name, sizeof(pi->region));
	rpmem_strlcpy(pi->name, name, sizeof(pi->name));
	memcpy(pi->uuid, m->uuid, sizeof(pi->uuid));
	pi->size = m->size;
	pi->state = m->state;
	pi->generation = m->generation;
	pi->created = m->created;
	pi->last_sync = m->last_sync;
	rpmem_strlcpy(pi->source, m->source, sizeof(pi->source));
	pthread_mutex_lock(&r->set->lock);
	struct rpmemd_pool *p = find_open_name(r, name);
	if (p) {
		rpmem_strlcpy(pi->writer, p->writer, sizeof(pi->writer));
		pi->readers = p->readers;
		pi->bytes_written =
			__atomic_load_n(&p->bytes_written, __ATOMIC_RELAXED);
		pi->flushes = __atomic_load_n(&p->flushes, __ATOMIC_RELAXED);
	} else {
		struct rpmemd_pool_stats *st = stats_find(r, name);
		if (st) {
			pi->bytes_written = st->bytes_written;
			pi->flushes = st->flushes;
		}
	}
	pthread_mutex_unlock(&r->set->lock);
}

/* dax_list -- the first max pools of a devdax region's table after `after` */
static int dax_list(struct rpmemd_region *r, const char *after, uint32_t max,
		    struct rpmem_pool_info **v, uint32_t *n)
{
	struct rpmemd_devdax_pool *dp = NULL;
	size_t cnt = 0, i, k = 0;
	int ret;

	pthread_mutex_lock(&r->dax->lock);
	ret = rpmemd_devdax_list(r->dax->dd, &dp, &cnt);
	if (ret || !cnt)
		goto out;
	/* sorted by name: skip those up to `after` */
	for (i = 0; i < cnt && strcmp(dp[i].name, after) <= 0; i++)
		;
	k = cnt - i < max ? cnt - i : max;
	if (!k)
		goto out;
	struct rpmem_pool_info *nv = realloc(*v, (*n + k) * sizeof(**v));
	if (!nv) {
		ret = -ENOMEM;
		goto out;
	}
	*v = nv;
	for (size_t j = i; j < i + k; j++)
		pool_info(r, dp[j].name, &dp[j].meta, &nv[(*n)++]);
out:
	pthread_mutex_unlock(&r->dax->lock);
	free(dp);
	return ret;
}

/* name_cmp -- order pool names */
static int name_cmp(const void *a, const void *b)
{
	return strcmp(a, b);
}

/*
 * dir_names -- the pool names in the metadata directory d that sort after
 * `after`, sorted, into *out (*cnt of them; the caller frees *out)
 */
static int dir_names(DIR *d, const char *after, char (**out)[RPMEM_NAME_MAX + 1],
		     size_t *cnt)
{
	char(*names)[RPMEM_NAME_MAX + 1] = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;

	rewinddir(d);
	while ((de = readdir(d))) {
		char name[RPMEM_NAME_MAX + 1];
		if (!rpmemd_meta_pool_name(de->d_name, name) ||
		    strcmp(name, after) <= 0)
			continue;
		if (n == cap) {
			size_t nc = cap ? 2 * cap : 64;
			void *nn = realloc(names, nc * sizeof(*names));
			if (!nn) {
				free(names);
				return -ENOMEM;
			}
			names = nn;
			cap = nc;
		}
		memcpy(names[n++], name, sizeof(name));
	}
	if (n > 1)
		qsort(names, n, sizeof(*names), name_cmp);
	*out = names;
	*cnt = n;
	return 0;
}

/*
 * names_after -- a snapshot of the pool names of r's directory that sort
 * after `after`, taken under r->lock (a consistent view of creates and
 * removes); the caller frees *names
 */
static int names_after(struct rpmemd_region *r, const char *after,
		       char (**names)[RPMEM_NAME_MAX + 1], size_t *cnt)
{
	int ret;

	pthread_mutex_lock(&r->lock);
	int fd = dup(r->metafd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (d) {
		ret = dir_names(d, after, names, cnt);
		closedir(d);
	} else {
		ret = -errno;
		if (fd >= 0)
			close(fd);
	}
	pthread_mutex_unlock(&r->lock);
	return ret;
}

/*
 * rpmemd_pool_list_page -- the names are taken under r->lock, the
 * metadata read without it: a LIST of thousands of pools does not hold
 * up the opens, creates and removes of the region meanwhile. A metadata
 * file is replaced whole (rpmemd_meta_write renames it into place), so
 * each read is one version of it; a pool removed since the snapshot is
 * left out.
 */
int rpmemd_pool_list_page(struct rpmemd_region *r, const char *after,
			  uint32_t max, struct rpmem_pool_info **v,
			  uint32_t *n)
{
	char(*names)[RPMEM_NAME_MAX + 1] = NULL;
	size_t cnt = 0, got = 0;
	int ret;

	if (r->dax)
		return dax_list(r, after, max, v, n);
	if ((ret = names_after(r, after, &names, &cnt)))
		return ret;
	/* the metadata of the page's pools only */
	for (size_t i = 0; i < cnt && got < max; i++) {
		struct rpmemd_meta m;
		int r2 = rpmemd_meta_read(r->metafd, names[i], &m);
		if (r2 == -ENOENT) /* removed since the snapshot */
			continue;
		if (r2) {
			WARN("region '%s': pool '%s': metadata unreadable (%s); not listed",
			     r->cfg.name, names[i], strerror(-r2));
			continue;
		}
		struct rpmem_pool_info *nv =
			realloc(*v, (*n + 1) * sizeof(**v));
		if (!nv) {
			ret = -ENOMEM;
			break;
		}
		*v = nv;
		pool_info(r, names[i], &m, &nv[*n]);
		(*n)++;
		got++;
	}
	free(names);
	return ret;
}

int rpmemd_pool_list(struct rpmemd_region *r, struct rpmem_pool_info **v,
		     uint32_t *n)
{
	return rpmemd_pool_list_page(r, "", UINT32_MAX, v, n);
}
