/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * backend_file.c -- the file backend (dir and fsdax regions): a pool is a
 * file of the region directory, its metadata and hash cache are files of
 * its .rpmemd directory (meta.c, hcache.c)
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
#include <sys/statvfs.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "backend.h"
#include "log.h"
#include "mapcache.h"
#include "damage.h"
#include "util.h"

/* pmem2_err -- a libpmem2 return value as -errno (its own codes are -EIO) */
static int pmem2_err(int ret)
{
	return ret < 0 && ret > -4096 ? ret : -EIO;
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

/*
 * find_named -- the open pool of file dev/ino, or named name in r (while a
 * dense sync's new file is renamed over it, the file at name is the new
 * one before the pool's dev/ino say so); set->lock held
 */
static struct rpmemd_pool *find_named(struct rpmemd_region *r, dev_t dev,
				      ino_t ino, const char *name)
{
	struct rpmemd_pool *p = find_open(r->set, dev, ino);
	for (struct rpmemd_pool *q = r->set->open; q && !p; q = q->next)
		if (!q->dax && q->region == r && !strcmp(q->name, name))
			p = q;
	return p;
}

/* file_find_open -- the open pool name of region r, if any; set->lock */
static struct rpmemd_pool *file_find_open(struct rpmemd_region *r,
					  const char *name)
{
	struct stat st;
	if (fstatat(r->dirfd, name, &st, AT_SYMLINK_NOFOLLOW))
		return NULL;
	return find_named(r, st.st_dev, st.st_ino, name);
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
	char why[RPMEM_MSG_MAX];
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

/*
 * file_create -- a pool file allocated in full (create_file, allocate),
 * then its metadata: a crash in between leaves an invisible orphan
 */
static int file_create(struct rpmemd_region *r, const char *name,
		       uint64_t size, char *err, size_t errlen)
{
	char need[RPMEM_SIZE_STR], have[RPMEM_SIZE_STR];
	struct rpmemd_meta m;
	uint64_t avail;
	int ret, fd = -1;

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
	rpmemd_store_stats_drop(r, name);
	pthread_mutex_unlock(&r->lock);
	return 0;

err_unlink:
	unlinkat(r->dirfd, name, 0);
	close(fd);
err_unlock:
	pthread_mutex_unlock(&r->lock);
	return ret;
}

/* file_remove -- metadata first, then the hash cache and the file */
static int file_remove(struct rpmemd_region *r, const char *name, int force,
		       char *err, size_t errlen)
{
	struct rpmemd_meta m;
	int ret;

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
	if ((ret = rpmemd_store_busy(r, name, err, errlen)) ||
	    (!corrupt &&
	     (ret = rpmemd_store_syncing(&m, name, force, err, errlen))))
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
	if ((ret = rpmemd_damage_unlink(r->metafd, name)))
		WARN("region '%s': pool '%s': cannot remove its list of damaged pieces: %s",
		     r->cfg.name, name, strerror(-ret));
	/* the journal's files of it, its versions and scrub records */
	rpmemd_keepers_removed(r, name);
	ret = 0;
	rpmemd_store_stats_drop(r, name);
	rpmemd_map_cache_drop(r->dirfd, name);
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
	if ((map = rpmemd_map_cache_take(p->dev, p->ino, p->size))) {
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

/* file_stat -- the pool file's stat now; 0 or -errno */
static int file_stat(struct rpmemd_pool *p, struct stat *st)
{
	if (fstatat(p->region->dirfd, p->name, st, AT_SYMLINK_NOFOLLOW))
		return -errno;
	if (st->st_dev != p->dev || st->st_ino != p->ino)
		return -ESTALE;
	return 0;
}

/* hc_persist -- the hash cache's persist callback: guarded persist */
static int hc_persist(void *arg, uint64_t off, uint64_t len)
{
	int ret = rpmemd_pool_persist_guarded(arg, off, len);
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

/*
 * file_open -- open a pool file (never a hard-linked one, rpmemd_open_own)
 * and map it, or share the mapping of the same file open already
 */
static int file_open(struct rpmemd_region *r, const char *name, uint8_t mode,
		     uint32_t sid, const char *holder, struct rpmemd_pool **out,
		     char *err, size_t errlen)
{
	struct rpmemd_regions *set = r->set;
	struct rpmemd_pool *p = NULL, *np = NULL;
	struct rpmemd_meta m;
	struct stat st;
	int ret, fd;

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
	pthread_mutex_lock(&set->lock);
	p = file_find_open(r, name);
	pthread_mutex_unlock(&set->lock);
	if (!p) {
		/* what a crash left: a dense sync's files, a scrub record's
		 * or the metadata's .tmp */
		rpmemd_keepers_found(r, name, &m);
		rpmemd_meta_clean(r->metafd, name);
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
	p = find_named(r, st.st_dev, st.st_ino, name);
	if (p) {
		ret = rpmemd_store_attach(p, mode, sid, holder, err, errlen);
		pthread_mutex_unlock(&set->lock);
		if (ret)
			goto err_close;
		/* a reader (RDMA too) sees the pool, not a half-written file */
		rpmemd_keepers_shared(p);
		goto done;
	}
	pthread_mutex_unlock(&set->lock);

	if ((ret = rpmemd_store_new(r, name, &m, &np, err, errlen)))
		goto err_close;
	np->dev = st.st_dev;
	np->ino = st.st_ino;
	if ((ret = pool_map(np, fd, err, errlen)))
		goto err_free;
	/* kept open: a new pool's WRITEs go through the file (req_write) */
	np->fd = fd;
	fd = -1;
	hc_open(np, &st);
	rpmemd_keepers_opened(np);

	pthread_mutex_lock(&set->lock);
	/* the same file through another region object (after a reload) */
	p = find_named(r, st.st_dev, st.st_ino, name);
	if (!p) {
		p = np;
		np = NULL;
		rpmemd_store_insert(p);
	}
	ret = rpmemd_store_attach(p, mode, sid, holder, err, errlen);
	if (ret && p->refs == 0) {
		/* our fresh pool: nobody else can know it yet */
		set->open = p->next;
		np = p;
	}
	pthread_mutex_unlock(&set->lock);
	if (ret)
		goto err_free;
	if (np)
		rpmemd_store_free(np);
done:
	if (fd >= 0)
		close(fd);
	pthread_mutex_unlock(&r->lock);
	*out = p;
	return 0;

err_free:
	if (np)
		rpmemd_store_free(np);
err_close:
	if (fd >= 0)
		close(fd);
err_unlock:
	pthread_mutex_unlock(&r->lock);
	return ret;
}

/* file_persist -- CPU cache flush on PMem, msync otherwise */
static int file_persist(struct rpmemd_pool *p, uint64_t off, uint64_t len)
{
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

/* file_write_meta -- replace the metadata file (rpmemd_meta_write) */
static int file_write_meta(struct rpmemd_pool *p, uint8_t state,
			   const char *source, struct rpmemd_meta *m)
{
	(void)state;
	(void)source;
	return rpmemd_meta_write(p->region->metafd, p->name, m);
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
 * file_list_page -- the names are taken under r->lock, the
 * metadata read without it: a LIST of thousands of pools does not hold
 * up the opens, creates and removes of the region meanwhile. A metadata
 * file is replaced whole (rpmemd_meta_write renames it into place), so
 * each read is one version of it; a pool removed since the snapshot is
 * left out.
 */
static int file_list_page(struct rpmemd_region *r, const char *after,
			  uint32_t max, struct rpmem_pool_info **v,
			  uint32_t *n)
{
	char(*names)[RPMEM_NAME_MAX + 1] = NULL;
	size_t cnt = 0, got = 0;
	int ret;

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
		rpmemd_store_info(r, names[i], &m, &nv[*n]);
		rpmemd_keepers_info(r, names[i], &m, &nv[*n]);
		(*n)++;
		got++;
	}
	free(names);
	if (!ret) {
		rpmemd_keepers_listed(r, *v, *n);
		rpmemd_damage_info(r, *v, *n);
	}
	return ret;
}

/* file_release -- keep the mapping in the cache, close the file */
static void file_release(struct rpmemd_pool *p)
{
	if (p->map)
		rpmemd_map_cache_put(p->dev, p->ino, p->size, p->map);
	if (p->fd >= 0)
		close(p->fd);
}

/* file_space -- the file system's size and the bytes available to us */
static int file_space(struct rpmemd_region *r, uint64_t *size,
		      uint64_t *avail)
{
	struct statvfs vfs;
	if (fstatvfs(r->dirfd, &vfs))
		return -errno;
	*size = (uint64_t)vfs.f_blocks * vfs.f_frsize;
	*avail = (uint64_t)vfs.f_bavail * vfs.f_frsize;
	return 0;
}

/* file_undo_dir -- journals live beside the metadata, in .rpmemd */
static int file_undo_dir(const struct rpmemd_region *r)
{
	return r->metafd;
}

const struct rpmemd_backend_ops rpmemd_backend_file = {
	.name = "file",
	.create = file_create,
	.remove = file_remove,
	.open = file_open,
	.find_open = file_find_open,
	.release = file_release,
	.persist = file_persist,
	.write_meta = file_write_meta,
	.stat = file_stat,
	.list_page = file_list_page,
	.space = file_space,
	.undo_dir = file_undo_dir,
};
