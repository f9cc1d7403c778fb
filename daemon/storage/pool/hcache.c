/* SPDX-License-Identifier: BSD-3-Clause */
/* hcache.c -- per-pool cache of 4 KiB piece hashes (see hcache.h) */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <unistd.h>
#include <xxhash.h>

#include "hcache.h"
#include "hash.h"
#include "log.h"
#include "meta.h"
#include "proto.h"
#include "util.h"

#define HC_MAGIC "rpmemd-hashes\0\0"
#define HC_VERSION 2 /* 1 kept 64 KiB blocks: such a file is rebuilt */
#define HC_HDR_SIZE 4096u
#define HC_CLEAN 0x6e61656c63ull /* "clean"; anything else is dirty */

struct hc_hdr {
	char magic[RPMEM_MAGIC_LEN];
	uint32_t version;
	uint32_t block_size;
	uint8_t uuid[RPMEM_UUID_LEN];
	uint64_t pool_size;
	uint64_t nblocks; /* entries: the pool's 4 KiB pieces */
	uint64_t epoch;
	uint64_t clean; /* HC_CLEAN or 0 */
	/* the pool file when the header was last made clean */
	uint64_t f_dev, f_ino, f_size;
	uint64_t f_mtime_s, f_mtime_ns, f_ctime_s, f_ctime_ns;
	uint64_t csum; /* XXH3 of everything above */
};

struct hc_entry {
	uint64_t hash;
	uint64_t check; /* 0: invalid */
};

struct rpmemd_hcache {
	pthread_mutex_t lock;
	int fd;
	uint8_t *map; /* header page, then the entries */
	size_t map_len;
	struct hc_entry *ent; /* one per 4 KiB piece */
	uint64_t npieces;
	uint64_t nblocks; /* 64 KiB blocks, the unit of written */
	uint64_t size;
	uint8_t uuid[RPMEM_UUID_LEN];
	uint64_t epoch;
	int dirty;	     /* the header on disk says dirty */
	unsigned rdma;	     /* writable RDMA exposures: the cache is off */
	uint64_t seq;	     /* bumped by every write_begin/write_end */
	uint64_t *written;   /* bitmap: blocks written since dirty */
	int written_all;     /* unknown writes: persist the whole pool */
	rpmemd_hcache_persist_fn persist;
	void *arg;
	char name[RPMEM_NAME_MAX + 1];
};

/* hdr_csum -- the checksum of a header */
static uint64_t hdr_csum(const struct hc_hdr *h)
{
	return XXH3_64bits(h, offsetof(struct hc_hdr, csum));
}

/*
 * entry_check -- the check of piece i's hash in epoch e (never 0). A
 * coarse pass checks an entry per 4 KiB of pool, so it costs a few
 * multiplications, not a hash call. Before the low bit is set it is a
 * bijection in hash and in i ^ e: an entry of another epoch or piece, or
 * a torn one (new hash, old check), matches only by that bit (2^-63).
 */
static uint64_t entry_check(uint64_t hash, uint64_t i, uint64_t e)
{
	return rpmem_mix64(hash ^ rpmem_mix64(i ^ e)) | 1;
}

/* hc_sync -- msync [p, p + len) of the mapping (page aligned start) */
static int hc_sync(struct rpmemd_hcache *hc, const void *p, size_t len)
{
	uintptr_t ps = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t start = (uintptr_t)p & ~(ps - 1);
	if (msync((void *)start, (uintptr_t)p + len - start, MS_SYNC))
		return -errno;
	(void)hc;
	return 0;
}

/* hdr_write -- write and persist the header: clean (with st) or dirty */
static int hdr_write(struct rpmemd_hcache *hc, const struct stat *st)
{
	struct hc_hdr h;
	memset(&h, 0, sizeof(h));
	memcpy(h.magic, HC_MAGIC, sizeof(h.magic));
	h.version = HC_VERSION;
	h.block_size = RPMEM_HASH_PIECE;
	memcpy(h.uuid, hc->uuid, sizeof(h.uuid));
	h.pool_size = hc->size;
	h.nblocks = hc->npieces;
	h.epoch = hc->epoch;
	if (st) {
		h.clean = HC_CLEAN;
		h.f_dev = (uint64_t)st->st_dev;
		h.f_ino = (uint64_t)st->st_ino;
		h.f_size = (uint64_t)st->st_size;
		h.f_mtime_s = (uint64_t)st->st_mtim.tv_sec;
		h.f_mtime_ns = (uint64_t)st->st_mtim.tv_nsec;
		h.f_ctime_s = (uint64_t)st->st_ctim.tv_sec;
		h.f_ctime_ns = (uint64_t)st->st_ctim.tv_nsec;
	}
	h.csum = hdr_csum(&h);
	memcpy(hc->map, &h, sizeof(h));
	int ret = hc_sync(hc, hc->map, sizeof(h));
	if (ret) {
		ERR("pool '%s': cannot persist its hash cache header: %s",
		    hc->name, strerror(-ret));
		return ret;
	}
	hc->dirty = !st;
	return 0;
}

/* st_matches -- the header recorded exactly this pool file */
static int st_matches(const struct hc_hdr *h, const struct stat *st)
{
	return h->f_dev == (uint64_t)st->st_dev &&
	       h->f_ino == (uint64_t)st->st_ino &&
	       h->f_size == (uint64_t)st->st_size &&
	       h->f_mtime_s == (uint64_t)st->st_mtim.tv_sec &&
	       h->f_mtime_ns == (uint64_t)st->st_mtim.tv_nsec &&
	       h->f_ctime_s == (uint64_t)st->st_ctim.tv_sec &&
	       h->f_ctime_ns == (uint64_t)st->st_ctim.tv_nsec;
}

/* hdr_usable -- the header on disk keeps its entries valid for st */
static int hdr_usable(const struct rpmemd_hcache *hc, const struct stat *st)
{
	struct hc_hdr h;
	memcpy(&h, hc->map, sizeof(h));
	return !memcmp(h.magic, HC_MAGIC, sizeof(h.magic)) &&
	       h.version == HC_VERSION && h.csum == hdr_csum(&h) &&
	       h.block_size == RPMEM_HASH_PIECE &&
	       !memcmp(h.uuid, hc->uuid, sizeof(h.uuid)) &&
	       h.pool_size == hc->size && h.nblocks == hc->npieces &&
	       h.clean == HC_CLEAN && st_matches(&h, st);
}

/*
 * invalidate_all -- a new epoch (every entry invalid), the header dirty
 * on disk, and the whole pool's durability unknown; hc->lock held
 */
static int invalidate_all(struct rpmemd_hcache *hc)
{
	uint64_t e;
	do {
		if (getrandom(&e, sizeof(e), 0) != sizeof(e))
			e = rpmem_now_ns() ^ ((uint64_t)getpid() << 32);
	} while (e == hc->epoch);
	hc->epoch = e;
	hc->written_all = 1;
	return hdr_write(hc, NULL);
}

int rpmemd_hcache_unlink(int dirfd, const char *pool)
{
	char fn[RPMEM_NAME_MAX + sizeof(RPMEMD_HCACHE_SUFFIX)];
	snprintf(fn, sizeof(fn), "%s%s", pool, RPMEMD_HCACHE_SUFFIX);
	if (unlinkat(dirfd, fn, 0) && errno != ENOENT)
		return -errno;
	return 0;
}

int rpmemd_hcache_open(int dirfd, const char *pool, const uint8_t *uuid,
		       uint64_t size, const struct stat *st,
		       rpmemd_hcache_persist_fn persist, void *arg,
		       struct rpmemd_hcache **out)
{
	char fn[RPMEM_NAME_MAX + sizeof(RPMEMD_HCACHE_SUFFIX)];
	struct rpmemd_hcache *hc = calloc(1, sizeof(*hc));
	struct stat fst;
	int ret;

	if (!hc)
		return -ENOMEM;
	hc->fd = -1;
	hc->size = size;
	hc->nblocks = (size + RPMEMD_HCACHE_BS - 1) / RPMEMD_HCACHE_BS;
	hc->npieces = (size + RPMEM_HASH_PIECE - 1) / RPMEM_HASH_PIECE;
	memcpy(hc->uuid, uuid, sizeof(hc->uuid));
	hc->persist = persist;
	hc->arg = arg;
	rpmem_strlcpy(hc->name, pool, sizeof(hc->name));
	if ((ret = -pthread_mutex_init(&hc->lock, NULL)))
		goto err_free;
	hc->written = calloc((hc->nblocks + 63) / 64 + 1, sizeof(uint64_t));
	if (!hc->written) {
		ret = -ENOMEM;
		goto err_mutex;
	}
	snprintf(fn, sizeof(fn), "%s%s", pool, RPMEMD_HCACHE_SUFFIX);
	hc->fd = rpmemd_open_own(dirfd, fn, O_RDWR | O_CREAT);
	if (hc->fd < 0) {
		ret = hc->fd;
		goto err_bitmap;
	}
	if (fstat(hc->fd, &fst)) {
		ret = -errno;
		goto err_close;
	}
	hc->map_len = HC_HDR_SIZE + hc->npieces * sizeof(struct hc_entry);
	if ((uint64_t)fst.st_size != hc->map_len) {
		/* a new file or another size: nothing in it is usable */
		if (ftruncate(hc->fd, 0) ||
		    ftruncate(hc->fd, (off_t)hc->map_len) ||
		    fsync(hc->fd) || fsync(dirfd)) {
			ret = -errno;
			goto err_close;
		}
	}
	/*
	 * every page allocated now: a store to a hole of a mapped file on a
	 * full file system (tmpfs: a region a first mirror filled) is a
	 * SIGBUS; without the space, the pool goes without a cache
	 */
	if ((ret = -posix_fallocate(hc->fd, 0, (off_t)hc->map_len)))
		goto err_close;
	hc->map = mmap(NULL, hc->map_len, PROT_READ | PROT_WRITE, MAP_SHARED,
		       hc->fd, 0);
	if (hc->map == MAP_FAILED) {
		hc->map = NULL;
		ret = -errno;
		goto err_close;
	}
	hc->ent = (struct hc_entry *)(hc->map + HC_HDR_SIZE);
	if (hdr_usable(hc, st)) {
		hc->epoch = ((const struct hc_hdr *)(void *)hc->map)->epoch;
	} else {
		INFO("pool '%s': its hash cache is not usable (new, changed, torn or not cleanly closed): every block will be hashed again",
		     pool);
		if ((ret = invalidate_all(hc)))
			goto err_unmap;
	}
	*out = hc;
	return 0;

err_unmap:
	munmap(hc->map, hc->map_len);
err_close:
	close(hc->fd);
err_bitmap:
	free(hc->written);
err_mutex:
	pthread_mutex_destroy(&hc->lock);
err_free:
	free(hc);
	return ret;
}

void rpmemd_hcache_close(struct rpmemd_hcache **hcp)
{
	struct rpmemd_hcache *hc = hcp ? *hcp : NULL;
	if (!hc)
		return;
	*hcp = NULL;
	munmap(hc->map, hc->map_len);
	close(hc->fd);
	free(hc->written);
	pthread_mutex_destroy(&hc->lock);
	free(hc);
}

/*
 * mark_written -- invalidate the pieces of a range and remember its 64 KiB
 * blocks as written; lock held
 */
static void mark_written(struct rpmemd_hcache *hc, uint64_t off, uint64_t len)
{
	if (len == 0 || off >= hc->size)
		return;
	uint64_t end = off + len < hc->size ? off + len : hc->size;
	uint64_t last = (end - 1) / RPMEM_HASH_PIECE;
	for (uint64_t i = off / RPMEM_HASH_PIECE; i <= last; i++)
		__atomic_store_n(&hc->ent[i].check, 0, __ATOMIC_RELAXED);
	last = (end - 1) / RPMEMD_HCACHE_BS;
	for (uint64_t i = off / RPMEMD_HCACHE_BS; i <= last; i++)
		hc->written[i / 64] |= 1ull << (i % 64);
	hc->seq++;
}

int rpmemd_hcache_write_begin(struct rpmemd_hcache *hc, uint64_t off,
			      uint64_t len)
{
	int ret = 0;
	if (!hc)
		return 0;
	pthread_mutex_lock(&hc->lock);
	/* dirty on disk before any entry or data changes */
	if (!hc->dirty)
		ret = hdr_write(hc, NULL);
	if (!ret)
		mark_written(hc, off, len);
	pthread_mutex_unlock(&hc->lock);
	return ret;
}

void rpmemd_hcache_write_end(struct rpmemd_hcache *hc, uint64_t off,
			     uint64_t len)
{
	if (!hc)
		return;
	pthread_mutex_lock(&hc->lock);
	mark_written(hc, off, len);
	pthread_mutex_unlock(&hc->lock);
}

void rpmemd_hcache_forget(struct rpmemd_hcache *hc, uint64_t off,
			  uint64_t len)
{
	if (!hc || len == 0 || off >= hc->size)
		return;
	uint64_t end = off + len < hc->size ? off + len : hc->size;
	uint64_t first = off / RPMEM_HASH_PIECE;
	uint64_t last = (end - 1) / RPMEM_HASH_PIECE;
	pthread_mutex_lock(&hc->lock);
	for (uint64_t i = first; i <= last; i++)
		__atomic_store_n(&hc->ent[i].check, 0, __ATOMIC_RELAXED);
	hc->seq++; /* a hash taken meanwhile is not kept */
	if (hc_sync(hc, &hc->ent[first], (last - first + 1) * sizeof(*hc->ent)))
		WARN("pool '%s': its hash cache's entries of %llu damaged bytes may come back at the next open",
		     hc->name, (unsigned long long)(end - off));
	pthread_mutex_unlock(&hc->lock);
}

void rpmemd_hcache_flushed(struct rpmemd_hcache *hc, uint64_t off,
			   uint64_t len)
{
	if (!hc || len == 0 || off >= hc->size)
		return;
	uint64_t end = off + len < hc->size ? off + len : hc->size;
	uint64_t first = (off + RPMEMD_HCACHE_BS - 1) / RPMEMD_HCACHE_BS;
	/* a short last block ends at the pool's end */
	uint64_t stop = end == hc->size ? hc->nblocks : end / RPMEMD_HCACHE_BS;
	pthread_mutex_lock(&hc->lock);
	for (uint64_t i = first; i < stop; i++)
		hc->written[i / 64] &= ~(1ull << (i % 64));
	pthread_mutex_unlock(&hc->lock);
}

int rpmemd_hcache_rdma_begin(struct rpmemd_hcache *hc)
{
	int ret = 0;
	if (!hc)
		return 0;
	pthread_mutex_lock(&hc->lock);
	if (!hc->dirty)
		ret = hdr_write(hc, NULL);
	if (!ret) {
		hc->rdma++;
		hc->written_all = 1;
		hc->seq++;
	}
	pthread_mutex_unlock(&hc->lock);
	return ret;
}

void rpmemd_hcache_rdma_end(struct rpmemd_hcache *hc)
{
	if (!hc)
		return;
	pthread_mutex_lock(&hc->lock);
	if (hc->rdma)
		hc->rdma--;
	/* what the exposure wrote is unknown: a new epoch */
	if (invalidate_all(hc))
		WARN("pool '%s': its hash cache stays dirty", hc->name);
	hc->seq++;
	pthread_mutex_unlock(&hc->lock);
}

/* persist_written -- persist the data of the written blocks; lock held */
static int persist_written(struct rpmemd_hcache *hc)
{
	if (hc->written_all)
		return hc->persist(hc->arg, 0, hc->size);
	uint64_t i = 0;
	while (i < hc->nblocks) {
		if (!(hc->written[i / 64] >> (i % 64) & 1)) {
			i++;
			continue;
		}
		uint64_t j = i;
		while (j < hc->nblocks && (hc->written[j / 64] >> (j % 64) & 1))
			j++;
		uint64_t off = i * RPMEMD_HCACHE_BS;
		uint64_t end = j * RPMEMD_HCACHE_BS;
		int ret = hc->persist(hc->arg, off,
				      (end < hc->size ? end : hc->size) - off);
		if (ret)
			return ret;
		i = j;
	}
	return 0;
}

int rpmemd_hcache_commit(struct rpmemd_hcache *hc, const struct stat *st)
{
	int ret = 0;
	if (!hc)
		return 0;
	pthread_mutex_lock(&hc->lock);
	if (!hc->dirty || hc->rdma)
		goto out;
	/* data, then entries, then the clean header */
	if ((ret = persist_written(hc)) ||
	    (ret = hc_sync(hc, hc->ent, hc->npieces * sizeof(*hc->ent)))) {
		WARN("pool '%s': its hash cache stays dirty: %s", hc->name,
		     strerror(-ret));
		goto out;
	}
	if ((ret = hdr_write(hc, st)))
		goto out;
	memset(hc->written, 0, (hc->nblocks + 63) / 64 * sizeof(uint64_t));
	hc->written_all = 0;
out:
	pthread_mutex_unlock(&hc->lock);
	return ret;
}

int rpmemd_hcache_check_file(struct rpmemd_hcache *hc, const struct stat *st)
{
	int changed = 0;
	if (!hc)
		return 0;
	pthread_mutex_lock(&hc->lock);
	if (!hc->dirty && !st_matches((const struct hc_hdr *)(void *)hc->map,
				      st)) {
		WARN("pool '%s': its file changed behind rpmemd's back (another mtime, ctime, size or inode): its cached hashes are dropped",
		     hc->name);
		invalidate_all(hc);
		hc->seq++;
		changed = 1;
	}
	pthread_mutex_unlock(&hc->lock);
	return changed;
}

/*
 * with a file to read (rpmemd_hcache_hash_fd), runs of missing pieces at
 * least this long are read from it rather than through the mapping; a
 * shorter one (a few blocks a sync wrote, mapped already) is not worth
 * a read of its own
 */
#define HC_FD_RUN_MIN (256u << 10)

/*
 * pieces_get -- the hashes of the n pieces from piece first: valid entries
 * as they are, the runs of the others (all when full) hashed from the
 * pool mapped at base (the long runs read from fd if >= 0, or every run
 * if base is NULL) and kept unless a write or a new epoch came
 * meanwhile; miss[k] says which were hashed. 0 or the hashing's fault.
 */
static int pieces_get(struct rpmemd_hcache *hc, const uint8_t *base, int fd,
		      uint64_t first, uint64_t n, uint64_t *out, uint8_t *miss,
		      unsigned nthreads, int full)
{
	pthread_mutex_lock(&hc->lock);
	uint64_t seq = hc->seq, epoch = hc->epoch;
	int on = !hc->rdma;
	pthread_mutex_unlock(&hc->lock);

	for (uint64_t k = 0; k < n; k++) {
		struct hc_entry e;
		e.hash = __atomic_load_n(&hc->ent[first + k].hash,
					 __ATOMIC_RELAXED);
		e.check = __atomic_load_n(&hc->ent[first + k].check,
					  __ATOMIC_ACQUIRE);
		miss[k] = full || !on || !e.check ||
			  e.check != entry_check(e.hash, first + k, epoch);
		if (!miss[k])
			out[k] = e.hash;
	}
	/* hash the runs of misses (a cold cache: one run, all threads) */
	int ret = 0;
	for (uint64_t k = 0; k < n && !ret;) {
		if (!miss[k]) {
			k++;
			continue;
		}
		uint64_t j = k;
		while (j < n && miss[j])
			j++;
		uint64_t o = (first + k) * RPMEM_HASH_PIECE;
		uint64_t e = (first + j) * RPMEM_HASH_PIECE;
		if (e > hc->size)
			e = hc->size;
		if (fd >= 0 && (!base || e - o >= HC_FD_RUN_MIN))
			ret = rpmem_hash_fd_blocks(fd, o, e - o,
						   RPMEM_HASH_PIECE, out + k,
						   nthreads);
		else
			ret = rpmem_hash_blocks(base + o, e - o,
						RPMEM_HASH_PIECE, out + k,
						nthreads);
		k = j;
	}
	/* keep what we hashed, unless a write or new epoch came meanwhile */
	pthread_mutex_lock(&hc->lock);
	if (!ret && on && hc->seq == seq && hc->epoch == epoch && !hc->rdma) {
		for (uint64_t k = 0; k < n; k++) {
			if (!miss[k])
				continue;
			struct hc_entry *e = &hc->ent[first + k];
			/* check last: a torn entry never looks valid */
			__atomic_store_n(&e->check, 0, __ATOMIC_RELAXED);
			__atomic_store_n(&e->hash, out[k], __ATOMIC_RELAXED);
			__atomic_store_n(&e->check,
					 entry_check(out[k], first + k, epoch),
					 __ATOMIC_RELEASE);
		}
	}
	pthread_mutex_unlock(&hc->lock);
	return ret;
}

/*
 * pieces a tree HASH composes at once: 32 KiB of hashes (16 MiB of pool,
 * enough for two hashing threads), kept off the mmap threshold so that a
 * request does not fault in fresh zeroed pages every time
 */
#define HC_BATCH_PIECES 4096u

/* hash_blocks -- rpmemd_hcache_hash from the mapping, or from fd if >= 0 */
static int hash_blocks(struct rpmemd_hcache *hc, const uint8_t *base, int fd,
		       uint64_t size, uint64_t off, uint32_t bs, uint32_t count,
		       int tree, uint64_t *hashes, unsigned nthreads, int full,
		       struct rpmemd_hcache_use *use)
{
	uint64_t end = off + (uint64_t)count * bs;
	if (end > size)
		end = size;
	if (off >= end)
		return 0;
	if (bs < RPMEM_HASH_PIECE || bs % RPMEM_HASH_PIECE ||
	    off % RPMEM_HASH_PIECE || (!tree && bs != RPMEM_HASH_PIECE))
		return -EINVAL;
	uint64_t per = bs / RPMEM_HASH_PIECE;
	uint64_t batch = per < HC_BATCH_PIECES ? HC_BATCH_PIECES / per : 1;
	uint64_t npieces = (end - off + RPMEM_HASH_PIECE - 1) /
			   RPMEM_HASH_PIECE;
	uint64_t cap = batch * per < npieces ? batch * per : npieces;
	uint64_t *pieces = tree ? malloc(cap * sizeof(*pieces)) : NULL;
	uint8_t *miss = malloc(cap);
	int ret = -ENOMEM;
	if ((tree && !pieces) || !miss)
		goto out;
	ret = 0;
	for (uint64_t b0 = 0; b0 < count && !ret; b0 += batch) {
		uint64_t nb = count - b0 < batch ? count - b0 : batch;
		uint64_t first = off / RPMEM_HASH_PIECE + b0 * per;
		uint64_t n = b0 * per + nb * per < npieces ? nb * per
							  : npieces - b0 * per;
		uint64_t *dst = tree ? pieces : hashes + b0;
		ret = pieces_get(hc, base, fd, first, n, dst, miss, nthreads,
				 full);
		/* a block is hashed if any of its pieces was */
		for (uint64_t i = 0; i < nb && !ret; i++) {
			uint64_t k0 = i * per, k1 = k0 + per < n ? k0 + per : n;
			int hashed = 0;
			for (uint64_t k = k0; k < k1; k++) {
				use->pieces += miss[k];
				hashed |= miss[k];
			}
			if (hashed)
				use->hashed++;
			else
				use->cached++;
			if (tree)
				hashes[b0 + i] =
					rpmem_hash_tree(pieces + k0, k1 - k0);
		}
	}
out:
	free(pieces);
	free(miss);
	return ret;
}

int rpmemd_hcache_hash(struct rpmemd_hcache *hc, const uint8_t *base,
		       uint64_t size, uint64_t off, uint32_t bs, uint32_t count,
		       int tree, uint64_t *hashes, unsigned nthreads, int full,
		       struct rpmemd_hcache_use *use)
{
	return hash_blocks(hc, base, -1, size, off, bs, count, tree, hashes,
			   nthreads, full, use);
}

int rpmemd_hcache_hash_fd(struct rpmemd_hcache *hc, const uint8_t *base,
			  int fd, uint64_t size, uint64_t off, uint32_t bs,
			  uint32_t count, int tree, uint64_t *hashes,
			  unsigned nthreads, int full,
			  struct rpmemd_hcache_use *use)
{
	return hash_blocks(hc, base, fd, size, off, bs, count, tree, hashes,
			   nthreads, full, use);
}
