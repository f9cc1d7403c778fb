/* SPDX-License-Identifier: BSD-3-Clause */
/* dirtylog.c -- the persistent log of the extents written since the replica was current */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "client_sync.h"
#include "hash.h"
#include "log.h"
#include "util.h"

/*
 * The file: one header page, then a bitmap of the pool's extents (bit i:
 * extent i was written since the replica was last current). The header
 * says which remote pool (uuid) and generation the bitmap is relative to;
 * it fits in one 512-byte sector and carries a checksum, so a torn write
 * reads as "bound to nothing", which only costs a full sync.
 *
 * The header also holds the clean mark: set, every change to the pool
 * file since the binding is marked. The replica API keeps it set (each
 * mark is persistent before its persist, so a crash keeps the promise);
 * the preload library, which cannot vouch for what a crash leaves
 * (write(2), stores never flushed), clears it at its start and sets it at
 * its clean exit. A log without it is used only by the handle that
 * cleared it. Trust: the file is opened without following links and is
 * used only if it is a regular file with one link, owned by the pool
 * file's owner and writable by no one the pool file is not writable by
 * (docs/ARCHITECTURE.md, "Follow mode and the dirty log").
 *
 * A bit set in the mapping is persistent: it is set and msynced under the
 * lock before mark returns, and only then copied into the in-memory hot
 * set that the lock-free fast path reads. An extent is therefore made
 * persistent once per clear, however often it is written.
 */
#define DL_MAGIC "RPMEMDL"
#define DL_MAGIC_LEN 8 /* its room in the header, NUL included */
#define DL_VERSION 2u
#define DL_CLEAN 1u /* the clean mark */
#define DL_HDR_SIZE 4096u

struct dl_header {
	char magic[DL_MAGIC_LEN];
	uint32_t version;
	uint32_t extent_shift;
	uint64_t pool_size;
	uint64_t nextents;
	uint8_t uuid[RPMEM_UUID_LEN]; /* the remote pool's; zero: bound to nothing */
	uint64_t generation;
	uint32_t flags; /* DL_CLEAN */
	uint32_t reserved;
	uint64_t checksum; /* XXH3 of the bytes above */
};

struct rpmemctl_dirtylog {
	int fd;
	uint8_t *map; /* header page + bitmap, MAP_SHARED */
	size_t map_len;
	struct dl_header *hdr;
	uint8_t *bits;		 /* in the mapping */
	_Atomic uint8_t *hot;	 /* persistent bits, as the fast path sees */
	uint64_t nextents;
	unsigned shift;
	int cleared; /* this handle cleared the clean mark */
	_Atomic int marked; /* an extent was marked since the last clear */
	/*
	 * a background resync's (client_dirtylog_take): the extents marked
	 * since its last take, in memory only (the persistent bits keep
	 * every mark until the resync ends); NULL when none runs
	 */
	uint8_t *fresh;
	/*
	 * a set's clear in steps (client_dirtylog_cut): the extents marked
	 * since the cut, in memory only; NULL when no cut is open
	 */
	uint8_t *since;
	pthread_mutex_t lock;
};

/* hdr_sum -- the checksum of a header */
static uint64_t hdr_sum(const struct dl_header *h)
{
	return rpmem_hash_block(h, offsetof(struct dl_header, checksum));
}

/* sync_range -- msync the pages of the mapping holding [off, off + len) */
static int sync_range(struct rpmemctl_dirtylog *l, size_t off, size_t len)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	size_t start = off & ~(pg - 1);

	if (msync(l->map + start, off + len - start, MS_SYNC))
		return -errno;
	return 0;
}

/* bitmap_len -- bytes of the bitmap of n extents (whole 64-bit words) */
static size_t bitmap_len(uint64_t n)
{
	return (size_t)((n + 63) / 64 * 8);
}

/* dl_init -- write a new header bound to nothing and persist the file */
static int dl_init(int fd, uint64_t pool_size, unsigned shift,
		   uint64_t nextents)
{
	struct dl_header h = { .version = DL_VERSION,
			       .extent_shift = shift,
			       .pool_size = pool_size,
			       .nextents = nextents,
			       .flags = DL_CLEAN };
	memcpy(h.magic, DL_MAGIC, sizeof(h.magic));
	h.checksum = hdr_sum(&h);
	if (ftruncate(fd, (off_t)(DL_HDR_SIZE + bitmap_len(nextents))))
		return -errno;
	if (pwrite(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h))
		return -EIO;
	if (fsync(fd))
		return -errno;
	return 0;
}

/*
 * trust_check -- the log file (ls) may speak for the pool file (ps; NULL:
 * a pool of the effective user that no one else may write): a regular
 * file with one link, the pool file's owner's, writable by no one who
 * cannot write the pool file; 0, or -EPERM with the reason in why
 */
static int trust_check(const struct stat *ls, const struct stat *ps,
		       char *why, size_t wl)
{
	uid_t uid = ps ? ps->st_uid : geteuid();
	mode_t w = ps ? ps->st_mode & 022 : 0;

	if (!S_ISREG(ls->st_mode))
		snprintf(why, wl, "is not a regular file");
	else if (ls->st_nlink != 1)
		snprintf(why, wl, "has %lu hard links",
			 (unsigned long)ls->st_nlink);
	else if (ls->st_uid != uid)
		snprintf(why, wl, "is owned by uid %u, the pool file by uid %u",
			 (unsigned)ls->st_uid, (unsigned)uid);
	else if (ls->st_mode & 022 & ~w)
		snprintf(why, wl, "is writable by %s (mode %03o), the pool "
			 "file is not",
			 ls->st_mode & 002 ? "others" : "its group",
			 (unsigned)(ls->st_mode & 0777));
	else if ((ls->st_mode & 020) && ls->st_gid != ps->st_gid)
		snprintf(why, wl, "is writable by group %u, the pool file by "
			 "group %u", (unsigned)ls->st_gid,
			 (unsigned)ps->st_gid);
	else
		return 0;
	return -EPERM;
}

/*
 * open_file -- open path without following a symbolic link, or create it
 * (exclusively, 0600: then it is ours) if missing; an existing file must
 * pass trust_check against ps. The fd, or -errno with the reason in why.
 */
static int open_file(const char *path, const struct stat *ps, int *created,
		     char *why, size_t wl)
{
	struct stat st;
	int fd, ret;

	*created = 0;
	fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT) {
		fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW |
				O_CLOEXEC, 0600);
		*created = fd >= 0;
	}
	if (fd < 0) {
		ret = -errno;
		if (ret == -ELOOP)
			snprintf(why, wl, "is a symbolic link");
		else
			snprintf(why, wl, "cannot be opened: %s",
				 strerror(-ret));
		return ret;
	}
	if (fstat(fd, &st)) {
		ret = -errno;
		snprintf(why, wl, "%s", strerror(-ret));
	} else {
		ret = *created ? 0 : trust_check(&st, ps, why, wl);
	}
	if (ret) {
		close(fd);
		return ret;
	}
	return fd;
}

/*
 * check_header -- the existing log at fd is of this version, for this
 * pool size and extent shift, and (need_clean) has the clean mark; 0, or
 * -EINVAL with the reason in why
 */
static int check_header(int fd, uint64_t pool_size, unsigned shift,
			int need_clean, char *why, size_t wl)
{
	struct dl_header h;

	if (pread(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h) ||
	    memcmp(h.magic, DL_MAGIC, sizeof(h.magic)) ||
	    h.version != DL_VERSION)
		snprintf(why, wl, "is not a dirty log of this version");
	else if (h.pool_size != pool_size || h.extent_shift != shift)
		snprintf(why, wl, "is for a pool of %llu bytes in %u-byte "
			 "extents, not %llu in %u",
			 (unsigned long long)h.pool_size,
			 1u << (h.extent_shift & 31),
			 (unsigned long long)pool_size, 1u << shift);
	else if (need_clean && h.checksum == hdr_sum(&h) &&
		 !(h.flags & DL_CLEAN))
		snprintf(why, wl, "was not left by a clean exit");
	else
		return 0;
	return -EINVAL;
}

/* map_log -- map the header and bitmap of l->fd; 0 or -errno (why) */
static int map_log(struct rpmemctl_dirtylog *l, char *why, size_t wl)
{
	struct stat st;

	l->map_len = DL_HDR_SIZE + bitmap_len(l->nextents);
	if (fstat(l->fd, &st) || (uint64_t)st.st_size < l->map_len) {
		snprintf(why, wl, "is truncated");
		return -EINVAL;
	}
	l->map = mmap(NULL, l->map_len, PROT_READ | PROT_WRITE, MAP_SHARED,
		      l->fd, 0);
	if (l->map == MAP_FAILED) {
		l->map = NULL;
		snprintf(why, wl, "%s", strerror(errno));
		return -errno;
	}
	l->hdr = (struct dl_header *)l->map;
	l->bits = l->map + DL_HDR_SIZE;
	l->hot = calloc(1, bitmap_len(l->nextents));
	if (!l->hot) {
		snprintf(why, wl, "out of memory");
		return -ENOMEM;
	}
	memcpy((void *)l->hot, l->bits, bitmap_len(l->nextents));
	return 0;
}

/* attach -- open (or create) the file of l and map it; 0 or -errno (why) */
static int attach(struct rpmemctl_dirtylog *l, const char *path,
		  const struct stat *ps, uint64_t pool_size, unsigned flags,
		  char *why, size_t wl)
{
	int created, ret;

	l->fd = open_file(path, ps, &created, why, wl);
	if (l->fd < 0)
		return l->fd;
	if (created)
		ret = dl_init(l->fd, pool_size, l->shift, l->nextents);
	else
		ret = check_header(l->fd, pool_size, l->shift,
				   flags & RPMEMCTL_DIRTYLOG_REPLACE, why, wl);
	if (created && ret)
		snprintf(why, wl, "cannot be created: %s", strerror(-ret));
	return ret ? ret : map_log(l, why, wl);
}

/* detach -- undo attach (a failed one) */
static void detach(struct rpmemctl_dirtylog *l)
{
	if (l->map)
		munmap(l->map, l->map_len);
	if (l->fd >= 0)
		close(l->fd);
	free((void *)l->hot);
	l->map = NULL;
	l->hot = NULL;
	l->fd = -1;
}

/* replaceable -- a failure of attach that a new log mends */
static int replaceable(int err)
{
	return err == -ELOOP || err == -EPERM || err == -EINVAL;
}

/*
 * rpmemctl_dirtylog_open_pool -- open path for the pool file open at
 * pool_fd (-1: a pool of the caller's, see trust_check), created if
 * missing, in extents of extent_size (0 = 1 MiB; a power of two from
 * 4 KiB to 1 GiB); an existing log it may not trust is -ELOOP (a link)
 * or -EPERM, one for another size or version -EINVAL, unless flags has
 * RPMEMCTL_DIRTYLOG_REPLACE: then such a log, or one without the clean
 * mark, is replaced by a new one bound to nothing
 */
RPMEM_EXPORT int rpmemctl_dirtylog_open_pool(const char *path, int pool_fd,
					     uint64_t pool_size,
					     uint32_t extent_size,
					     unsigned flags,
					     struct rpmemctl_dirtylog **out)
{
	struct rpmemctl_dirtylog *l;
	struct stat ps;
	char why[RPMEM_MSG_MAX] = "";
	int ret;

	client_api_begin();
	if (!extent_size)
		extent_size = RPMEMCTL_DIRTYLOG_EXTENT_DEFAULT;
	if (!path || !out || !pool_size || extent_size < 4096 ||
	    extent_size > (1u << 30) || (extent_size & (extent_size - 1)) ||
	    (flags & ~RPMEMCTL_DIRTYLOG_REPLACE) ||
	    (pool_fd >= 0 && fstat(pool_fd, &ps))) {
		client_set_last(-EINVAL, "dirty log: invalid argument");
		return -EINVAL;
	}
	l = calloc(1, sizeof(*l));
	if (!l) {
		client_set_last(-ENOMEM, "out of memory");
		return -ENOMEM;
	}
	pthread_mutex_init(&l->lock, NULL);
	l->fd = -1;
	l->shift = (unsigned)__builtin_ctz(extent_size);
	l->nextents = (pool_size + extent_size - 1) >> l->shift;
	ret = attach(l, path, pool_fd >= 0 ? &ps : NULL, pool_size, flags,
		     why, sizeof(why));
	if (ret && replaceable(ret) && (flags & RPMEMCTL_DIRTYLOG_REPLACE)) {
		rpmem_log(LOG_NOTICE, "dirty log '%s' %s: replaced by a new "
			  "one (the next sync compares everything)", path, why);
		detach(l);
		if (!unlink(path) || errno == ENOENT)
			ret = attach(l, path, pool_fd >= 0 ? &ps : NULL,
				     pool_size, flags, why, sizeof(why));
	}
	if (ret) {
		client_set_last(ret, "dirty log '%s' %s", path, why);
		rpmemctl_dirtylog_close(&l);
		return ret;
	}
	*out = l;
	return 0;
}

/* rpmemctl_dirtylog_open -- rpmemctl_dirtylog_open_pool for a pool of ours */
RPMEM_EXPORT int rpmemctl_dirtylog_open(const char *path, uint64_t pool_size,
					uint32_t extent_size,
					struct rpmemctl_dirtylog **out)
{
	client_api_begin();
	return rpmemctl_dirtylog_open_pool(path, -1, pool_size, extent_size,
					   0, out);
}

/* rpmemctl_dirtylog_close -- unmap and close (the marks stay in the file) */
RPMEM_EXPORT void rpmemctl_dirtylog_close(struct rpmemctl_dirtylog **lp)
{
	struct rpmemctl_dirtylog *l = lp ? *lp : NULL;

	if (!l)
		return;
	detach(l);
	pthread_mutex_destroy(&l->lock);
	free(l->fresh);
	free(l->since);
	free(l);
	*lp = NULL;
}

/* all_hot -- every extent from first to last is persistently marked */
static int all_hot(struct rpmemctl_dirtylog *l, uint64_t first, uint64_t last)
{
	for (uint64_t e = first; e <= last; e++)
		if (!(atomic_load_explicit(&l->hot[e / 8],
					   memory_order_acquire) &
		      (1u << (e % 8))))
			return 0;
	return 1;
}

/*
 * rpmemctl_dirtylog_mark -- the extents of [offset, offset + len) are
 * persistently marked when this returns 0; call it before the data
 * there can become persistent locally
 */
RPMEM_EXPORT int rpmemctl_dirtylog_mark(struct rpmemctl_dirtylog *l,
					uint64_t offset, uint64_t len)
{
	uint64_t first, last;
	int ret = 0;

	client_api_begin();
	if (!l || offset >= (l->nextents << l->shift) ||
	    len > (l->nextents << l->shift) - offset)
		return -EINVAL;
	if (!len)
		return 0;
	first = offset >> l->shift;
	last = (offset + len - 1) >> l->shift;
	if (all_hot(l, first, last))
		return 0; /* the common case: no lock, no I/O */
	pthread_mutex_lock(&l->lock);
	int persisted = 1;
	for (uint64_t e = first; e <= last; e++) {
		uint8_t bit = (uint8_t)(1u << (e % 8));
		persisted &= (l->bits[e / 8] & bit) != 0;
		l->bits[e / 8] |= bit;
		if (l->fresh)
			l->fresh[e / 8] |= bit;
		if (l->since)
			l->since[e / 8] |= bit;
	}
	/* already persistent (a take cleared the hot set only): no I/O */
	if (!persisted)
		ret = sync_range(l, DL_HDR_SIZE + first / 8,
				 last / 8 - first / 8 + 1);
	if (!ret)
		for (uint64_t e = first; e <= last; e++)
			atomic_fetch_or_explicit(&l->hot[e / 8],
						 (uint8_t)(1u << (e % 8)),
						 memory_order_release);
	atomic_store(&l->marked, 1);
	pthread_mutex_unlock(&l->lock);
	return ret;
}

/* rpmemctl_dirtylog_count -- extents marked */
RPMEM_EXPORT uint64_t
rpmemctl_dirtylog_count(const struct rpmemctl_dirtylog *l)
{
	uint64_t n = 0;

	if (!l)
		return 0;
	for (size_t i = 0; i < bitmap_len(l->nextents); i++)
		n += (uint64_t)__builtin_popcount(l->bits[i]);
	return n;
}

/*
 * rpmemctl_dirtylog_set_clean -- set (clean) or clear the clean mark,
 * persistently: a writer that cannot vouch for its changes through a
 * crash clears it at its start and sets it at its clean exit
 */
RPMEM_EXPORT int rpmemctl_dirtylog_set_clean(struct rpmemctl_dirtylog *l,
					     int clean)
{
	int ret;

	client_api_begin();
	if (!l)
		return -EINVAL;
	pthread_mutex_lock(&l->lock);
	if (clean)
		l->hdr->flags |= DL_CLEAN;
	else
		l->hdr->flags &= ~DL_CLEAN;
	l->hdr->checksum = hdr_sum(l->hdr);
	ret = sync_range(l, 0, sizeof(*l->hdr));
	l->cleared = !clean;
	pthread_mutex_unlock(&l->lock);
	return ret;
}

/*
 * client_dirtylog_clean -- the log may stand for the changes: it has the
 * clean mark, or this handle cleared it (its writer is us)
 */
int client_dirtylog_clean(const struct rpmemctl_dirtylog *l)
{
	return (l->hdr->flags & DL_CLEAN) || l->cleared;
}

/* client_dirtylog_extent -- the extent size in bytes */
uint64_t client_dirtylog_extent(const struct rpmemctl_dirtylog *l)
{
	return 1ull << l->shift;
}

/* client_dirtylog_nextents -- extents in the pool */
uint64_t client_dirtylog_nextents(const struct rpmemctl_dirtylog *l)
{
	return l->nextents;
}

/* client_dirtylog_marked -- extent e is marked */
int client_dirtylog_marked(const struct rpmemctl_dirtylog *l, uint64_t e)
{
	return (l->bits[e / 8] >> (e % 8)) & 1;
}

/*
 * client_dirtylog_bound -- the log is relative to pool uuid at
 * generation (its header intact); 0 if not
 */
int client_dirtylog_bound(const struct rpmemctl_dirtylog *l,
			  const uint8_t uuid[RPMEM_UUID_LEN], uint64_t generation)
{
	static const uint8_t zero[RPMEM_UUID_LEN];
	const struct dl_header *h = l->hdr;

	return h->checksum == hdr_sum(h) && memcmp(h->uuid, zero, 16) &&
	       !memcmp(h->uuid, uuid, 16) && h->generation == generation;
}

/* client_dirtylog_generation -- the generation the log is relative to */
uint64_t client_dirtylog_generation(const struct rpmemctl_dirtylog *l)
{
	return l->hdr->checksum == hdr_sum(l->hdr) ? l->hdr->generation : 0;
}

/*
 * client_dirtylog_reset -- the replica is current at pool uuid,
 * generation: bind the log to it, then clear every mark. A crash between
 * the two leaves old marks under the new binding (a superset: safe); a
 * crash before the first, the old binding (a full sync). Nobody may mark
 * meanwhile.
 */
int client_dirtylog_reset(struct rpmemctl_dirtylog *l, const uint8_t uuid[16],
			  uint64_t generation)
{
	struct dl_header *h = l->hdr;
	int ret;

	pthread_mutex_lock(&l->lock);
	memcpy(h->uuid, uuid, 16);
	h->generation = generation;
	h->checksum = hdr_sum(h);
	ret = sync_range(l, 0, sizeof(*h));
	if (!ret) {
		memset(l->bits, 0, bitmap_len(l->nextents));
		ret = sync_range(l, DL_HDR_SIZE, bitmap_len(l->nextents));
	}
	if (!ret)
		memset((void *)l->hot, 0, bitmap_len(l->nextents));
	pthread_mutex_unlock(&l->lock);
	return ret;
}

/*
 * client_dirtylog_clear -- the replica holds every write so far (its
 * target acknowledged them): clear every mark, keeping the binding. A
 * write whose mark this clears and that was not yet sent is marked
 * again before it is sent (links.c); a crash between the two costs the
 * replica API's log that write, so its set clears only with no mark
 * outstanding (links.c). 1 if there was a mark to clear, 0 if none, or
 * -errno.
 */
int client_dirtylog_clear(struct rpmemctl_dirtylog *l)
{
	int ret;

	if (!atomic_load(&l->marked))
		return 0;
	pthread_mutex_lock(&l->lock);
	atomic_store(&l->marked, 0);
	memset((void *)l->hot, 0, bitmap_len(l->nextents));
	memset(l->bits, 0, bitmap_len(l->nextents));
	ret = sync_range(l, DL_HDR_SIZE, bitmap_len(l->nextents));
	pthread_mutex_unlock(&l->lock);
	return ret ? ret : 1;
}

/*
 * client_dirtylog_cut -- a cut: from now on the extents marked are also
 * remembered in memory, so that client_dirtylog_clear_cut, once every
 * write marked before the cut is acknowledged, clears all marks but
 * those. The hot set is cleared, so that every later mark takes the
 * locked path and is seen (the fence as in client_dirtylog_take).
 * Returns 0, or -ENOMEM.
 */
int client_dirtylog_cut(struct rpmemctl_dirtylog *l)
{
	size_t len = bitmap_len(l->nextents);

	pthread_mutex_lock(&l->lock);
	if (!l->since && !(l->since = calloc(1, len))) {
		pthread_mutex_unlock(&l->lock);
		return -ENOMEM;
	}
	memset(l->since, 0, len);
	memset((void *)l->hot, 0, len);
	atomic_thread_fence(memory_order_seq_cst);
	pthread_mutex_unlock(&l->lock);
	return 0;
}

/*
 * client_dirtylog_clear_cut -- every write marked before the last cut
 * is acknowledged by the log's target: clear every mark but those made
 * since the cut (writes that may still be in flight), then cut again
 * (recut) or close the cut. Each byte of the bitmap goes from its old
 * value to one that keeps every mark made since the cut, so a crash at
 * any point, or a store of the msync that lands and another that does
 * not, keeps every mark of a write not acknowledged. 1 if a mark was
 * cleared, 0 if none (or no cut is open), or -errno.
 */
int client_dirtylog_clear_cut(struct rpmemctl_dirtylog *l, int recut)
{
	size_t len = bitmap_len(l->nextents);
	int ret = 0, cleared = 0;

	pthread_mutex_lock(&l->lock);
	if (!l->since) {
		pthread_mutex_unlock(&l->lock);
		return 0;
	}
	/* no mark may stay on the fast path past the clear of its bit */
	memset((void *)l->hot, 0, len);
	atomic_thread_fence(memory_order_seq_cst);
	for (size_t i = 0; i < len; i++) {
		uint8_t keep = (uint8_t)(l->bits[i] & l->since[i]);
		cleared |= keep != l->bits[i];
		l->bits[i] = keep;
	}
	if (cleared)
		ret = sync_range(l, DL_HDR_SIZE, len);
	if (recut) {
		memset(l->since, 0, len);
	} else {
		free(l->since);
		l->since = NULL;
	}
	pthread_mutex_unlock(&l->lock);
	return ret ? ret : cleared;
}

/*
 * client_dirtylog_take -- a background resync's look at the log (link.c):
 * into out (client_dirtylog_bitmap_len bytes) the extents marked since
 * its last take (the first, all: every persistent mark too), and from
 * now on it tracks the marks anew. Only the in-memory sets are cleared:
 * the persistent bits keep every mark until a push that made the copies
 * equal resets them, so a crash mid-resync loses none. The hot set is
 * cleared with it, so every later mark takes the locked path and is
 * recorded; the fence orders that clear before the resync reads the data
 * (a writer's store is before its mark's look at the hot set). Returns
 * the extents in out, or -ENOMEM.
 */
int64_t client_dirtylog_take(struct rpmemctl_dirtylog *l, uint8_t *out,
			     int all)
{
	size_t len = bitmap_len(l->nextents);
	int64_t n = 0;

	pthread_mutex_lock(&l->lock);
	if (!l->fresh && !(l->fresh = calloc(1, len))) {
		pthread_mutex_unlock(&l->lock);
		return -ENOMEM;
	}
	for (size_t i = 0; i < len; i++) {
		out[i] = (uint8_t)(l->fresh[i] | (all ? l->bits[i] : 0));
		n += __builtin_popcount(out[i]);
	}
	memset(l->fresh, 0, len);
	memset((void *)l->hot, 0, len);
	atomic_thread_fence(memory_order_seq_cst);
	pthread_mutex_unlock(&l->lock);
	return n;
}

/* client_dirtylog_fresh -- extents marked since the last take */
uint64_t client_dirtylog_fresh(struct rpmemctl_dirtylog *l)
{
	uint64_t n = 0;

	pthread_mutex_lock(&l->lock);
	for (size_t i = 0; l->fresh && i < bitmap_len(l->nextents); i++)
		n += (uint64_t)__builtin_popcount(l->fresh[i]);
	pthread_mutex_unlock(&l->lock);
	return n;
}

/* client_dirtylog_untrack -- the resync ended: no more fresh marks */
void client_dirtylog_untrack(struct rpmemctl_dirtylog *l)
{
	pthread_mutex_lock(&l->lock);
	free(l->fresh);
	l->fresh = NULL;
	pthread_mutex_unlock(&l->lock);
}

/* client_dirtylog_bitmap_len -- bytes of a bitmap of the log's extents */
size_t client_dirtylog_bitmap_len(const struct rpmemctl_dirtylog *l)
{
	return bitmap_len(l->nextents);
}
