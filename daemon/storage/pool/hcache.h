/* SPDX-License-Identifier: BSD-3-Clause */
/* hcache.h -- per-pool cache of 4 KiB piece hashes, kept beside the pool */
#ifndef RPMEMD_HCACHE_H
#define RPMEMD_HCACHE_H

#include <stdint.h>
#include <sys/stat.h>

/*
 * <region>/.rpmemd/<pool>.hashes holds the XXH3-64 hash of every 4 KiB
 * piece of the pool (the last one may be short), so that a HASH request
 * does not re-hash pieces nobody wrote since they were hashed: a tree
 * HASH (RPMEM_HASH_TREE, a sync's coarse pass) composes each block's hash
 * from its pieces', and a HASH or HASHV of 4 KiB blocks (its fine pass)
 * takes them as they are. A write invalidates only the pieces it touched.
 * The file is mapped; its layout (host byte order):
 *
 *	page 0		header: magic, version, block size, the pool's
 *			uuid and size, an epoch, clean or dirty, the pool
 *			file's dev, ino, size, mtime and ctime when it was
 *			last made clean, and an XXH3 checksum of all that
 *	page 1 ...	one 16-byte entry per piece: hash, check
 *
 * An entry is valid only if its check is mix(hash, piece index) keyed
 * with the epoch (never 0; an invalid entry has check 0), the header's
 * checksum is right, the header says clean and the pool file's stat
 * matches it. A torn or corrupt header, a dirty one, a new epoch or a
 * pool file changed behind rpmemd's back (another mtime, ctime, size or
 * inode) make every entry invalid at once.
 *
 * The rule that keeps a cached hash from hiding a difference: the header
 * says clean only while no write can change the pool's data and every
 * valid entry is the hash of the data as durable. So before the first
 * write of a period the header is made dirty, persistently (a crash from
 * then on invalidates all); writes invalidate the entries of the blocks
 * they touch; a commit (the pool goes consistent, or its last open
 * closes) persists the written blocks' data, then the entries, then a
 * clean header with the pool file's stat. A writable RDMA exposure
 * (APM or GPSPM: its writes bypass rpmemd) turns the cache off until it
 * ends, and then every entry is invalid. See docs/ARCHITECTURE.md.
 */
#define RPMEMD_HCACHE_SUFFIX ".hashes"
/* the unit in which writes are remembered for the commit's persist */
#define RPMEMD_HCACHE_BS (64u << 10)

struct rpmemd_hcache;

/* persists [off, off + len) of the pool's data; 0 or -errno */
typedef int (*rpmemd_hcache_persist_fn)(void *arg, uint64_t off,
					uint64_t len);

/*
 * rpmemd_hcache_open -- map <pool>.hashes in the metadata directory dirfd
 * (created if missing) for a pool of size bytes with uuid whose file is
 * as st says now. Entries stay valid only if the file is clean, matches
 * uuid and size, and st matches what it recorded; else all are invalid
 * and the header dirty until the next commit. persist(arg, ...) makes
 * pool data durable at commits.
 */
int rpmemd_hcache_open(int dirfd, const char *pool, const uint8_t *uuid,
		       uint64_t size, const struct stat *st,
		       rpmemd_hcache_persist_fn persist, void *arg,
		       struct rpmemd_hcache **out);

/* rpmemd_hcache_close -- unmap (no commit); NULL is fine */
void rpmemd_hcache_close(struct rpmemd_hcache **hc);

/* rpmemd_hcache_unlink -- remove <pool>.hashes (missing is fine) */
int rpmemd_hcache_unlink(int dirfd, const char *pool);

/*
 * rpmemd_hcache_write_begin -- the data of [off, off + len) is about to
 * change: make the header dirty (persistently, once a period) and
 * invalidate the blocks' entries. Nothing may be written if it fails.
 * NULL hc is fine (no cache).
 */
int rpmemd_hcache_write_begin(struct rpmemd_hcache *hc, uint64_t off,
			      uint64_t len);

/*
 * rpmemd_hcache_write_end -- the data of [off, off + len) changed:
 * invalidate its entries again (a hash computed during the write)
 */
void rpmemd_hcache_write_end(struct rpmemd_hcache *hc, uint64_t off,
			     uint64_t len);

/*
 * rpmemd_hcache_forget -- the data of [off, off + len) is not what its
 * entries say (a scrub found it damaged, changed behind rpmemd's back
 * without a change of the file's stat): invalidate them, durably, so the
 * next HASH hashes the data. NULL hc is fine.
 */
void rpmemd_hcache_forget(struct rpmemd_hcache *hc, uint64_t off,
			  uint64_t len);

/*
 * rpmemd_hcache_flushed -- [off, off + len) was persisted (FLUSH): its
 * whole blocks need no persist at the commit
 */
void rpmemd_hcache_flushed(struct rpmemd_hcache *hc, uint64_t off,
			   uint64_t len);

/*
 * rpmemd_hcache_rdma_begin -- a writable RDMA exposure begins: dirty,
 * and the cache is off (used and filled by nobody) until it ends
 */
int rpmemd_hcache_rdma_begin(struct rpmemd_hcache *hc);

/* rpmemd_hcache_rdma_end -- it ended: every entry invalid, all written */
void rpmemd_hcache_rdma_end(struct rpmemd_hcache *hc);

/*
 * rpmemd_hcache_commit -- no write is under way: persist the data written
 * since the header went dirty, then the entries, then a clean header
 * recording st (the pool file's stat now). A no-op if clean or an RDMA
 * writer is exposed.
 */
int rpmemd_hcache_commit(struct rpmemd_hcache *hc, const struct stat *st);

/*
 * rpmemd_hcache_check_file -- the pool file's stat is now st: if the
 * header is clean and recorded another, someone changed the file behind
 * rpmemd's back: every entry invalid. 1 if so, else 0.
 */
int rpmemd_hcache_check_file(struct rpmemd_hcache *hc, const struct stat *st);

/* what rpmemd_hcache_hash calls did */
struct rpmemd_hcache_use {
	uint64_t cached; /* blocks answered from the cache alone */
	uint64_t hashed; /* blocks with a piece hashed from the pool's data */
	uint64_t pieces; /* 4 KiB pieces hashed from the pool's data */
};

/*
 * rpmemd_hcache_hash -- the hashes of the count blocks of bs bytes at off
 * (4 KiB aligned) of the pool mapped at base: tree hashes (tree: bs a
 * multiple of 4 KiB), or plain hashes of 4 KiB blocks. Pieces with valid
 * entries come from the cache, the others are hashed with nthreads
 * threads and kept (unless a write touched the pool meanwhile). full:
 * hash every piece, keeping the results. 0, -EINVAL for another block
 * size or alignment, -ENOMEM, or the fault of rpmem_hash_blocks. A pool
 * without a cache (hc NULL) is hashed by its caller.
 */
int rpmemd_hcache_hash(struct rpmemd_hcache *hc, const uint8_t *base,
		       uint64_t size, uint64_t off, uint32_t bs, uint32_t count,
		       int tree, uint64_t *hashes, unsigned nthreads, int full,
		       struct rpmemd_hcache_use *use);
/*
 * rpmemd_hcache_hash_fd -- rpmemd_hcache_hash with the long runs of
 * pieces it hashes (256 KiB and more; every run if base is NULL) read
 * from the pool's file fd (pread into a small buffer), not through the
 * mapping at base: a pass over the whole pool (the scrub record) then
 * neither faults in the mapping's page tables nor leaves them to tear
 * down; -errno of a read
 */
int rpmemd_hcache_hash_fd(struct rpmemd_hcache *hc, const uint8_t *base,
			  int fd, uint64_t size, uint64_t off, uint32_t bs,
			  uint32_t count, int tree, uint64_t *hashes,
			  unsigned nthreads, int full,
			  struct rpmemd_hcache_use *use);

#endif
