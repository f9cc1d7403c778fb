/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * store_swap.c -- a dense sync of a dir pool written into a new file
 * (<region>/.rpmemd/<pool>.next, mapped over the pool's mapping) and renamed
 * over the pool file at the commit: the pool file itself stays the
 * previous image until then, so nothing is journaled
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend.h"
#include "journal_int.h"
#include "log.h"
#include "store.h"
#include "undo.h"
#include "util.h"

#define BS RPMEMD_UNDO_BS
#define NEXT_SUFFIX ".next"
#define DONE_SUFFIX ".done"

struct rpmemd_swap {
	int fd;		 /* the new file */
	int old_fd;	 /* the pool file: the previous image */
	uint64_t *bits;	 /* blocks the new file holds (written or copied) */
	uint64_t copied; /* bytes copied from the previous image */
	uint64_t recv;	 /* bytes marked for WRITEs */
};

/* swap_name -- <pool><suffix> into buf */
static const char *swap_name(char *buf, size_t len, const char *pool,
			     const char *suffix)
{
	snprintf(buf, len, "%s%s", pool, suffix);
	return buf;
}

/* has -- block b is in the new file */
static int has(const struct rpmemd_swap *s, uint64_t b)
{
	return (s->bits[b / 64] >> (b % 64)) & 1;
}

/* mark -- blocks [b, e] are in the new file */
static void mark(struct rpmemd_swap *s, uint64_t b, uint64_t e)
{
	for (; b <= e; b++)
		s->bits[b / 64] |= 1ull << (b % 64);
}

/* copy_run -- [off, off + len) of the previous image into the new file */
static int copy_run(struct rpmemd_swap *s, uint64_t off, uint64_t len)
{
	loff_t in = (loff_t)off, out = (loff_t)off;
	while (len) {
		ssize_t n = copy_file_range(s->old_fd, &in, s->fd, &out,
					    (size_t)len, 0);
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		len -= (uint64_t)n;
		s->copied += (uint64_t)n;
	}
	return 0;
}

/* block_len -- the bytes of block b in a pool of size bytes */
static uint64_t block_len(uint64_t b, uint64_t size)
{
	return size - b * BS < BS ? size - b * BS : BS;
}

/*
 * fill -- every block the new file does not hold yet copied from the
 * previous image: the new file is then the pool as a journaled sync
 * would have left it (the mix); undo_lock held
 */
static int fill(struct rpmemd_pool *p)
{
	struct rpmemd_pool_journal *j = journal_of(p);
	struct rpmemd_swap *s = j->swap;
	uint64_t nb = (p->size + BS - 1) / BS;
	for (uint64_t b = 0; b < nb;) {
		if (has(s, b)) {
			b++;
			continue;
		}
		uint64_t e = b;
		while (e + 1 < nb && !has(s, e + 1))
			e++;
		int ret = copy_run(s, b * BS, (e - b) * BS + block_len(e, p->size));
		if (ret)
			return ret;
		mark(s, b, e);
		b = e + 1;
	}
	return 0;
}

int rpmemd_store_swap_prepare(struct rpmemd_pool *p,
			      const struct rpmem_preserve_range *v, uint32_t n)
{
	struct rpmemd_pool_journal *j = journal_of(p);
	struct rpmemd_swap *s = j->swap;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t off = v[i].offset, end = off + v[i].len;
		uint64_t b = off / BS, e = (end - 1) / BS;
		int ret = 0;
		/* a block the write covers in part: the rest is the old one */
		if (off % BS && !has(s, b))
			ret = copy_run(s, b * BS, block_len(b, p->size));
		if (!ret && end % BS && end < p->size && !has(s, e) &&
		    (e != b || !(off % BS)))
			ret = copy_run(s, e * BS, block_len(e, p->size));
		if (ret)
			return ret;
		mark(s, b, e);
		s->recv += v[i].len;
	}
	return 0;
}

/* swap_free -- the new file closed, the state freed */
static void swap_free(struct rpmemd_pool *p)
{
	struct rpmemd_pool_journal *j = journal_of(p);
	struct rpmemd_swap *s = j->swap;
	j->swap = NULL;
	if (s->fd >= 0)
		close(s->fd);
	free(s->bits);
	free(s);
}

/* writer_alone -- nobody but the writer has p open (no RDMA reader) */
static int writer_alone(struct rpmemd_pool *p)
{
	pthread_mutex_lock(&p->region->set->lock);
	int alone = p->refs == 1;
	pthread_mutex_unlock(&p->region->set->lock);
	return alone;
}

/* swap_ok -- a sync of change bytes into p may write a new file */
static int swap_ok(struct rpmemd_pool *p, uint64_t change)
{
	struct rpmemd_pool_journal *j = journal_of(p);
	struct rpmemd_region *r = p->region;
	uint64_t total, avail;
	if (!j->undo || rpmemd_undo_blocks(j->undo) || r->cfg.versions ||
	    r->cfg.type != RPMEM_REGION_DIR || p->fd < 0 || p->is_pmem ||
	    !r->ops->space || change < p->size / 2 || !writer_alone(p))
		return 0;
	return !r->ops->space(r, &total, &avail) && avail >= p->size;
}

/* new_file -- .rpmemd/<pool>.next of the pool's size; fd or -errno */
static int new_file(struct rpmemd_pool *p)
{
	char nm[RPMEM_NAME_MAX + 16];
	int mfd = p->region->metafd;
	swap_name(nm, sizeof(nm), p->name, NEXT_SUFFIX);
	unlinkat(mfd, nm, 0);
	int fd = openat(mfd, nm, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	/* on a disk, its blocks now: a full region fails here, not later */
	if (ftruncate(fd, (off_t)p->size) ||
	    (!p->in_memory && fallocate(fd, 0, 0, (off_t)p->size) &&
	     errno != EOPNOTSUPP)) {
		int ret = -errno;
		close(fd);
		unlinkat(mfd, nm, 0);
		return ret;
	}
	return fd;
}

/* remap -- the pool's mapping now maps fd (same address); 0 or -errno */
static int remap(struct rpmemd_pool *p, int fd)
{
	void *a = mmap(p->addr, p->size, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_FIXED, fd, 0);
	return a == MAP_FAILED ? -errno : 0;
}

void rpmemd_store_swap_begin(struct rpmemd_pool *p, uint64_t change)
{
	struct rpmemd_pool_journal *j = journal_of(p);
	struct rpmemd_swap *s;
	uint64_t words = ((p->size + BS - 1) / BS + 63) / 64;
	int fd, ret;
	uint64_t t0 = rpmem_now_ns();

	if (!swap_ok(p, change))
		return;
	if ((fd = new_file(p)) < 0) {
		WARN("region '%s': pool '%s': cannot create a new file for a dense sync (journaling it instead): %s",
		     p->region->cfg.name, p->name, strerror(-fd));
		return;
	}
	s = calloc(1, sizeof(*s));
	if (s)
		s->bits = calloc(words, sizeof(uint64_t));
	if (!s || !s->bits || (ret = remap(p, fd))) {
		WARN("region '%s': pool '%s': cannot map a new file for a dense sync (journaling it instead)",
		     p->region->cfg.name, p->name);
		if (s)
			free(s->bits);
		free(s);
		close(fd);
		char nm[RPMEM_NAME_MAX + 16];
		unlinkat(p->region->metafd,
			 swap_name(nm, sizeof(nm), p->name, NEXT_SUFFIX), 0);
		return;
	}
	s->fd = fd;
	s->old_fd = p->fd;
	p->fd = fd;
	j->swap = s;
	INFO("region '%s': pool '%s': a dense sync (%llu of %llu bytes): written into a new file, renamed over the pool at the commit",
	     p->region->cfg.name, p->name, (unsigned long long)change,
	     (unsigned long long)p->size);
	DBG("region '%s': pool '%s': its new file created and mapped in %llu ms",
	    p->region->cfg.name, p->name,
	    (unsigned long long)((rpmem_now_ns() - t0) / 1000000));
}

int rpmemd_pool_read_prepare(struct rpmemd_pool *p)
{
	struct rpmemd_pool_journal *j = journal_of(p);
	int ret = 0;
	if (!__atomic_load_n(&j->swap, __ATOMIC_ACQUIRE))
		return 0;
	pthread_mutex_lock(&j->undo_lock);
	if (j->swap)
		ret = fill(p);
	pthread_mutex_unlock(&j->undo_lock);
	if (ret)
		ERR("region '%s': pool '%s': copying its unchanged blocks into the new file failed: %s",
		    p->region->cfg.name, p->name, strerror(-ret));
	return ret;
}

/* sync_all -- the new file durable (the mapping's pages, then the file) */
static int sync_all(struct rpmemd_pool *p)
{
	struct rpmemd_pool_journal *j = journal_of(p);

	if (p->in_memory)
		return 0;
	if (msync(p->addr, p->size, MS_SYNC) || fdatasync(j->swap->fd))
		return -errno;
	return 0;
}

int rpmemd_store_swap_commit(struct rpmemd_pool *p, char *err, size_t errlen)
{
	char next[RPMEM_NAME_MAX + 16], done[RPMEM_NAME_MAX + 16];
	int mfd = p->region->metafd;
	uint64_t t0 = rpmem_now_ns();
	int ret = fill(p);

	if (!ret)
		ret = sync_all(p);
	swap_name(next, sizeof(next), p->name, NEXT_SUFFIX);
	swap_name(done, sizeof(done), p->name, DONE_SUFFIX);
	if (!ret && renameat(mfd, next, mfd, done))
		ret = -errno;
	if (!ret && fsync(mfd))
		ret = -errno;
	DBG("region '%s': pool '%s': its new file completed, made durable and renamed %s in %llu ms",
	    p->region->cfg.name, p->name, done,
	    (unsigned long long)((rpmem_now_ns() - t0) / 1000000));
	if (ret)
		snprintf(err, errlen,
			 "pool '%s' stays syncing: its new image could not be completed (%s/%s/%s): %s",
			 p->name, p->region->cfg.path, RPMEMD_META_DIR, next,
			 strerror(-ret));
	return ret;
}

void rpmemd_store_swap_uncommit(struct rpmemd_pool *p)
{
	char next[RPMEM_NAME_MAX + 16], done[RPMEM_NAME_MAX + 16];
	int mfd = p->region->metafd;
	renameat(mfd, swap_name(done, sizeof(done), p->name, DONE_SUFFIX), mfd,
		 swap_name(next, sizeof(next), p->name, NEXT_SUFFIX));
}

/* the previous image of a committed dense sync, to free after the reply */
struct rpmemd_old_image {
	int fd;
	uint64_t size;
	char region[RPMEM_NAME_MAX + 1];
	char pool[RPMEM_NAME_MAX + 1];
};

/*
 * free_old -- close the previous image's last fd: the file has no name any
 * more, so that frees its pages (a 1 GiB pool on tmpfs: about 0.2 s)
 * (thread body; at rpmemd's priority: the seccomp filter has no
 * setpriority)
 */
static void *free_old(void *arg)
{
	struct rpmemd_old_image *o = arg;
	uint64_t t0 = rpmem_now_ns();

	close(o->fd);
	INFO("region '%s': pool '%s': its previous image (%llu bytes) freed, after the commit was answered, in %llu ms",
	    o->region, o->pool, (unsigned long long)o->size,
	    (unsigned long long)((rpmem_now_ns() - t0) / 1000000));
	free(o);
	return NULL;
}

/* old_start -- free o in a thread of its own (free_old), or here */
static void old_start(struct rpmemd_old_image *o)
{
	pthread_attr_t attr;
	pthread_t tid;
	int started = 0;

	if (!pthread_attr_init(&attr)) {
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		started = !pthread_create(&tid, &attr, free_old, o);
		pthread_attr_destroy(&attr);
	}
	if (!started)
		free_old(o);
}

/*
 * keep_old -- fd, the previous image, kept in the journal's old until
 * the commit was answered (rpmemd_store_swap_release); closed here if
 * that cannot be
 */
static void keep_old(struct rpmemd_pool *p, int fd)
{
	struct rpmemd_pool_journal *j = journal_of(p);
	struct rpmemd_old_image *o = calloc(1, sizeof(*o));

	if (!o) {
		close(fd);
		return;
	}
	*o = (struct rpmemd_old_image){ .fd = fd, .size = p->size };
	rpmem_strlcpy(o->region, p->region->cfg.name, sizeof(o->region));
	rpmem_strlcpy(o->pool, p->name, sizeof(o->pool));
	j->old = o;
}

void rpmemd_store_swap_release(struct rpmemd_pool *p, int wait)
{
	struct rpmemd_pool_journal *j = journal_of(p);

	pthread_mutex_lock(&j->undo_lock);
	struct rpmemd_old_image *o = j->old;
	j->old = NULL;
	pthread_mutex_unlock(&j->undo_lock);
	if (o && wait)
		free_old(o);
	else if (o)
		old_start(o);
}

void rpmemd_store_swap_done(struct rpmemd_pool *p)
{
	struct rpmemd_pool_journal *j = journal_of(p);
	struct rpmemd_region *r = p->region;
	struct rpmemd_swap *s = j->swap;
	char done[RPMEM_NAME_MAX + 16];
	struct stat st;

	swap_name(done, sizeof(done), p->name, DONE_SUFFIX);
	/* after a crash from here on, the next open renames it (recover) */
	if (renameat(r->metafd, done, r->dirfd, p->name) || fsync(r->dirfd) ||
	    fstat(s->fd, &st)) {
		ERR("region '%s': pool '%s': cannot rename its new image over the pool file (done at its next open): %s",
		    r->cfg.name, p->name, strerror(errno));
		return;
	}
	pthread_mutex_lock(&r->set->lock);
	p->dev = st.st_dev;
	p->ino = st.st_ino;
	pthread_mutex_unlock(&r->set->lock);
	INFO("region '%s': pool '%s': its new image renamed over the pool file (%llu bytes written, %llu bytes copied from the previous image)",
	     r->cfg.name, p->name, (unsigned long long)s->recv,
	     (unsigned long long)s->copied);
	keep_old(p, s->old_fd);
	s->fd = -1; /* now the pool's */
	swap_free(p);
}

/* forget -- the written blocks' hashes (the previous image is back) */
static void forget(struct rpmemd_pool *p)
{
	struct rpmemd_pool_journal *j = journal_of(p);
	uint64_t nb = (p->size + BS - 1) / BS;
	for (uint64_t b = 0; b < nb; b++)
		if (has(j->swap, b) &&
		    !rpmemd_hcache_write_begin(p->hc, b * BS,
					       block_len(b, p->size)))
			rpmemd_hcache_write_end(p->hc, b * BS,
						block_len(b, p->size));
}

int rpmemd_pool_swapping(const struct rpmemd_pool *p)
{
	struct rpmemd_pool_journal *j = journal_of(p);

	return __atomic_load_n(&j->swap, __ATOMIC_ACQUIRE) != NULL;
}

int rpmemd_store_swap_shared(struct rpmemd_pool *p)
{
	struct rpmemd_pool_journal *j = journal_of(p);

	return j->swap && !writer_alone(p);
}

int rpmemd_store_swap_abort(struct rpmemd_pool *p)
{
	struct rpmemd_pool_journal *j = journal_of(p);
	struct rpmemd_swap *s = j->swap;
	char next[RPMEM_NAME_MAX + 16];
	int ret;

	if (!s)
		return 0;
	if ((ret = remap(p, s->old_fd))) {
		ERR("region '%s': pool '%s': cannot map the pool file again: %s",
		    p->region->cfg.name, p->name, strerror(-ret));
		return ret;
	}
	forget(p);
	p->fd = s->old_fd;
	unlinkat(p->region->metafd,
		 swap_name(next, sizeof(next), p->name, NEXT_SUFFIX), 0);
	INFO("region '%s': pool '%s': the new file of its interrupted dense sync removed; the pool file holds the previous image",
	     p->region->cfg.name, p->name);
	swap_free(p);
	return 0;
}

void rpmemd_store_swap_recover(struct rpmemd_region *r, const char *name,
			       const struct rpmemd_meta *m)
{
	char next[RPMEM_NAME_MAX + 16], done[RPMEM_NAME_MAX + 16];
	swap_name(next, sizeof(next), name, NEXT_SUFFIX);
	swap_name(done, sizeof(done), name, DONE_SUFFIX);
	if (!unlinkat(r->metafd, next, 0))
		NOTICE("region '%s': pool '%s': removed the new file of a dense sync cut short; the pool file holds the previous image",
		       r->cfg.name, name);
	if (faccessat(r->metafd, done, F_OK, AT_SYMLINK_NOFOLLOW))
		return;
	/* complete: the pool's image once the metadata committed it */
	if (m && m->state == RPMEM_POOL_CONSISTENT) {
		if (rpmemd_own_at(r->metafd, done)) {
			ERR("region '%s': pool '%s': the new image of a dense sync (%s/%s/%s) is not rpmemd's own (see above): it is left in place and the pool file kept",
			    r->cfg.name, name, r->cfg.path, RPMEMD_META_DIR,
			    done);
			return;
		}
		if (renameat(r->metafd, done, r->dirfd, name) ||
		    fsync(r->dirfd))
			ERR("region '%s': pool '%s': cannot rename its committed new image over the pool file: %s",
			    r->cfg.name, name, strerror(errno));
		else
			NOTICE("region '%s': pool '%s': the committed new image of a dense sync renamed over the pool file",
			       r->cfg.name, name);
		return;
	}
	unlinkat(r->metafd, done, 0);
	NOTICE("region '%s': pool '%s': removed the new image of a dense sync whose commit did not happen; the pool file holds the previous image",
	       r->cfg.name, name);
}
