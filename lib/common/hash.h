/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * hash.h -- block hashes (XXH3-64, runtime-dispatched to the CPU's widest
 * vector unit), plain and tree, of memory or of a file, over several
 * threads for large inputs
 */
#ifndef RPMEM_HASH_H
#define RPMEM_HASH_H

#include <stddef.h>
#include <stdint.h>

#include "proto.h"

/* rpmem_mix64 -- the splitmix64 finalizer: a bijection of 64-bit values */
static inline uint64_t rpmem_mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* rpmem_hash_block -- XXH3-64 of one block */
uint64_t rpmem_hash_block(const void *buf, size_t len);
/*
 * rpmem_hash_blocks -- hashes of every block of buf; last may be short;
 * uses up to nthreads threads for large inputs. 0, or -EFAULT when buf is
 * a mapping whose file shrank under it, -EHWPOISON for poisoned memory
 * (guard.h): the hashes are then incomplete.
 */
int rpmem_hash_blocks(const void *buf, size_t len, uint32_t block_size,
		      uint64_t *hashes, unsigned nthreads);
/*
 * rpmem_hash_fd_blocks -- the same for [off, off + len) of the file fd,
 * read with pread(2) in chunks that stay in cache: for a large file read
 * once, cheaper than mapping it (no page tables to fill and tear down).
 * 0, -EFAULT when the file ended before off + len (it shrank), or the
 * read's -errno: the hashes are then incomplete.
 */
int rpmem_hash_fd_blocks(int fd, uint64_t off, uint64_t len,
			 uint32_t block_size, uint64_t *hashes,
			 unsigned nthreads);

/*
 * Tree hashes (HASH flag RPMEM_HASH_TREE): a block's hash is the XXH3-64
 * of the XXH3-64 hashes of its 4 KiB pieces (the last may be short), as
 * little-endian u64s. Whoever has a block's 4 KiB hashes has its tree
 * hash for 128 bytes of hashing more, so a sync that hashed its copy in
 * 4 KiB pieces compares coarse blocks without hashing anything twice.
 */
/* the most pieces of one block (64 MiB, the largest block size) */
#define RPMEM_HASH_PIECES_MAX ((64u << 20) / RPMEM_HASH_PIECE)
/* rpmem_hash_tree -- the tree hash of a block from its n pieces' hashes */
uint64_t rpmem_hash_tree(const uint64_t *fine, size_t n);
/*
 * rpmem_hash_tree_blocks -- rpmem_hash_blocks, tree hashes (block_size a
 * multiple of 4 KiB, else -EINVAL); the pieces' hashes also go to fine
 * (block_size / 4 KiB a block, the last block's as many as it has) unless
 * it is NULL
 */
int rpmem_hash_tree_blocks(const void *buf, size_t len, uint32_t block_size,
			   uint64_t *hashes, uint64_t *fine, unsigned nthreads);
/* rpmem_hash_fd_tree -- the same from a file, as rpmem_hash_fd_blocks */
int rpmem_hash_fd_tree(int fd, uint64_t off, uint64_t len, uint32_t block_size,
		       uint64_t *hashes, uint64_t *fine, unsigned nthreads);

#endif
