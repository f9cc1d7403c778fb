/* SPDX-License-Identifier: BSD-3-Clause */
/* dirtylog.c -- the persistent log of the extents written since the replica was current */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "client.h"
#include "hash.h"
#include "util.h"

/*
 * The file: one header page, then a bitmap of the pool's extents (bit i:
 * extent i was written since the replica was last current). The header
 * says which remote pool (uuid) and generation the bitmap is relative to;
 * it fits in one 512-byte sector and carries a checksum, so a torn write
 * reads as "bound to nothing", which only costs a full sync.
 *
 * A bit set in the mapping is persistent: it is set and msynced under the
 * lock before mark returns, and only then copied into the in-memory hot
 * set that the lock-free fast path reads. An extent is therefore made
 * persistent once per clear, however often it is written.
 */
#define DL_MAGIC "RPMEMDL"
#define DL_VERSION 1u
#define DL_HDR_SIZE 4096u

struct dl_header {
	char magic[8];
	uint32_t version;
	uint32_t extent_shift;
	uint64_t pool_size;
	uint64_t nextents;
	uint8_t uuid[16]; /* the remote pool's; zero: bound to nothing */
	uint64_t generation;
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
			       .nextents = nextents };
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
 * rpmemctl_dirtylog_open -- open path (created if missing) for a pool of
 * pool_size bytes in extents of extent_size (0 = 1 MiB; a power of two
 * from 4 KiB to 1 GiB); an existing log for another size is -EINVAL
 */
RPMEM_EXPORT int rpmemctl_dirtylog_open(const char *path, uint64_t pool_size,
					uint32_t extent_size,
					struct rpmemctl_dirtylog **out)
{
	struct rpmemctl_dirtylog *l;
	struct dl_header h;
	struct stat st;
	unsigned shift;
	int ret;

	client_api_begin();
	if (!extent_size)
		extent_size = RPMEMCTL_DIRTYLOG_EXTENT_DEFAULT;
	if (!path || !out || !pool_size || extent_size < 4096 ||
	    extent_size > (1u << 30) || (extent_size & (extent_size - 1))) {
		client_set_last(-EINVAL, "dirty log: invalid argument");
		return -EINVAL;
	}
	shift = (unsigned)__builtin_ctz(extent_size);
	l = calloc(1, sizeof(*l));
	if (!l) {
		client_set_last(-ENOMEM, "out of memory");
		return -ENOMEM;
	}
	pthread_mutex_init(&l->lock, NULL);
	l->nextents = (pool_size + extent_size - 1) >> shift;
	l->shift = shift;
	l->fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (l->fd < 0 || fstat(l->fd, &st)) {
		ret = -errno;
		client_set_last(ret, "dirty log '%s': %s", path,
				strerror(-ret));
		goto err_free;
	}
	if (st.st_size == 0) {
		ret = dl_init(l->fd, pool_size, shift, l->nextents);
		if (ret) {
			client_set_last(ret, "dirty log '%s': cannot create "
					"it: %s", path, strerror(-ret));
			goto err_free;
		}
	} else if (pread(l->fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h) ||
		   memcmp(h.magic, DL_MAGIC, sizeof(h.magic)) ||
		   h.version != DL_VERSION) {
		ret = -EINVAL;
		client_set_last(ret, "'%s' is not a dirty log of this version",
				path);
		goto err_free;
	} else if (h.pool_size != pool_size || h.extent_shift != shift) {
		ret = -EINVAL;
		client_set_last(ret, "dirty log '%s' is for a pool of %llu "
				"bytes in %u-byte extents, not %llu in %u",
				path, (unsigned long long)h.pool_size,
				1u << (h.extent_shift & 31),
				(unsigned long long)pool_size, extent_size);
		goto err_free;
	}
	l->map_len = DL_HDR_SIZE + bitmap_len(l->nextents);
	if (fstat(l->fd, &st) || (uint64_t)st.st_size < l->map_len) {
		ret = -EINVAL;
		client_set_last(ret, "dirty log '%s' is truncated", path);
		goto err_free;
	}
	l->map = mmap(NULL, l->map_len, PROT_READ | PROT_WRITE, MAP_SHARED,
		      l->fd, 0);
	if (l->map == MAP_FAILED) {
		l->map = NULL;
		ret = -errno;
		client_set_last(ret, "dirty log '%s': %s", path,
				strerror(-ret));
		goto err_free;
	}
	l->hdr = (struct dl_header *)l->map;
	l->bits = l->map + DL_HDR_SIZE;
	l->hot = calloc(1, bitmap_len(l->nextents));
	if (!l->hot) {
		ret = -ENOMEM;
		client_set_last(ret, "out of memory");
		goto err_free;
	}
	memcpy((void *)l->hot, l->bits, bitmap_len(l->nextents));
	*out = l;
	return 0;

err_free:
	rpmemctl_dirtylog_close(&l);
	return ret;
}

/* rpmemctl_dirtylog_close -- unmap and close (the marks stay in the file) */
RPMEM_EXPORT void rpmemctl_dirtylog_close(struct rpmemctl_dirtylog **lp)
{
	struct rpmemctl_dirtylog *l = lp ? *lp : NULL;

	if (!l)
		return;
	if (l->map)
		munmap(l->map, l->map_len);
	if (l->fd >= 0)
		close(l->fd);
	free((void *)l->hot);
	pthread_mutex_destroy(&l->lock);
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
	for (uint64_t e = first; e <= last; e++)
		l->bits[e / 8] |= (uint8_t)(1u << (e % 8));
	ret = sync_range(l, DL_HDR_SIZE + first / 8, last / 8 - first / 8 + 1);
	if (!ret)
		for (uint64_t e = first; e <= last; e++)
			atomic_fetch_or_explicit(&l->hot[e / 8],
						 (uint8_t)(1u << (e % 8)),
						 memory_order_release);
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
			  const uint8_t uuid[16], uint64_t generation)
{
	static const uint8_t zero[16];
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
