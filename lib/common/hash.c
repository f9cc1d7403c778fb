/* SPDX-License-Identifier: BSD-3-Clause */
/* hash.c -- XXH3-64 block hashing, split across threads for large inputs */
#include <endian.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>
#include <xxhash.h>
#if defined(__x86_64__)
/*
 * libxxhash's runtime dispatch: XXH3 with the widest vectors the CPU has
 * (AVX-512, AVX2, else SSE2), the same hashes; the plain entry points are
 * built for the baseline (SSE2) and ran at about half the speed of AVX2
 */
#include <xxh_x86dispatch.h>
#endif

#include "guard.h"
#include "hash.h"
#include "util.h"

/* below this much data a second thread costs more than it saves */
#define HASH_MT_MIN (8u << 20)
#define HASH_MAX_THREADS 8
#define HASH_PREFAULT_MIN (1u << 20)
/* what one pread of rpmem_hash_fd_blocks reads: stays in a core's L2 */
#define HASH_FD_CHUNK (256u << 10)

uint64_t rpmem_hash_block(const void *buf, size_t len)
{
	return XXH3_64bits(buf, len);
}

uint64_t rpmem_hash_tree(const uint64_t *fine, size_t n)
{
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	uint64_t le[RPMEM_HASH_PIECES_MAX];
	for (size_t k = 0; k < n; k++)
		le[k] = htole64(fine[k]);
	fine = le;
#endif
	return XXH3_64bits(fine, n * sizeof(*fine));
}

/*
 * tree_block -- the tree hash of the len bytes at p (rpmem_hash_tree of
 * its pieces' hashes), which go to fine
 */
static uint64_t tree_block(const uint8_t *p, size_t len, uint64_t *fine)
{
	size_t n = (len + RPMEM_HASH_PIECE - 1) / RPMEM_HASH_PIECE;
	for (size_t k = 0; k < n; k++) {
		size_t o = k * RPMEM_HASH_PIECE;
		fine[k] = XXH3_64bits(p + o, len - o < RPMEM_HASH_PIECE
						     ? len - o
						     : RPMEM_HASH_PIECE);
	}
	return rpmem_hash_tree(fine, n);
}

/* one thread's share: blocks of a buffer (buf), or of a file (fd, off) */
struct hash_job {
	const uint8_t *buf;
	int fd;
	uint64_t off;
	uint64_t len;
	uint32_t bs;
	uint64_t *hashes;
	int tree;      /* tree hashes (rpmem_hash_tree) rather than plain */
	uint64_t *fine; /* tree: where the pieces' hashes go, or NULL */
	int err; /* a fault reading buf (guard.h), or the file's -errno */
};

/*
 * hash_chunk -- the hashes of the blocks of len bytes at p, plain or tree
 * (the pieces' hashes to *fine, moved on, or to scratch)
 */
static void hash_chunk(struct hash_job *j, const uint8_t *p, size_t len,
		       uint64_t **h, uint64_t **fine, uint64_t *scratch)
{
	for (size_t o = 0; o < len; o += j->bs) {
		size_t l = len - o < j->bs ? len - o : j->bs;
		if (!j->tree) {
			*(*h)++ = XXH3_64bits(p + o, l);
			continue;
		}
		uint64_t *f = *fine ? *fine : scratch;
		*(*h)++ = tree_block(p + o, l, f);
		if (*fine)
			*fine += (l + RPMEM_HASH_PIECE - 1) / RPMEM_HASH_PIECE;
	}
}

/* job_scratch -- a tree job without fine output needs a block's worth */
static uint64_t *job_scratch(struct hash_job *j)
{
	if (!j->tree || j->fine)
		return NULL;
	uint64_t *s = malloc((j->bs / RPMEM_HASH_PIECE + 1) * sizeof(*s));
	if (!s)
		j->err = -ENOMEM;
	return s;
}

/* hash_share -- hash the blocks of one job's share */
static int hash_share(void *arg)
{
	struct hash_job *j = arg;
	uint64_t *h = j->hashes, *fine = j->fine;
	uint64_t *scratch = job_scratch(j);
	if (j->err)
		return j->err;
	/* map a large share in one call, not one page fault at a time */
	if (j->len >= HASH_PREFAULT_MIN)
		rpmem_prefault(j->buf, j->len);
	hash_chunk(j, j->buf, (size_t)j->len, &h, &fine, scratch);
	free(scratch);
	return 0;
}

/* hash_fd_share -- read one job's share in chunks and hash its blocks */
static void hash_fd_share(struct hash_job *j)
{
	size_t chunk = HASH_FD_CHUNK < j->bs ? j->bs
					     : HASH_FD_CHUNK / j->bs * j->bs;
	/* a short range (a fine pass's run) needs no more than itself */
	if (j->len < chunk)
		chunk = (j->len + j->bs - 1) / j->bs * j->bs;
	uint8_t *buf = NULL;
	uint64_t *scratch = job_scratch(j);
	if (j->err || posix_memalign((void **)&buf, 4096, chunk)) {
		free(scratch);
		j->err = -ENOMEM;
		return;
	}
	uint64_t done = 0, *h = j->hashes, *fine = j->fine;
	while (done < j->len && !j->err) {
		size_t want = j->len - done < chunk ? (size_t)(j->len - done)
						    : chunk;
		j->err = rpmem_pread_full(j->fd, buf, want, j->off + done);
		if (j->err)
			break;
		hash_chunk(j, buf, want, &h, &fine, scratch);
		done += want;
	}
	free(scratch);
	free(buf);
}

/* hash_run -- one job's share; a SIGBUS of a shrunk mapping caught */
static void *hash_run(void *arg)
{
	struct hash_job *j = arg;
	if (j->buf) {
		int err = rpmem_guard_run(hash_share, j);
		if (!j->err)
			j->err = err;
	}
	else
		hash_fd_share(j);
	return NULL;
}

/*
 * hash_split -- the blocks of [0, len) of buf, or of [off, off + len) of
 * fd when buf is NULL, in nthreads contiguous shares: shares 1.. on their
 * own threads (inline if one cannot start), share 0 on the caller
 */
static int hash_split(const uint8_t *buf, int fd, uint64_t off, uint64_t len,
		      uint32_t block_size, uint64_t *hashes, int tree,
		      uint64_t *fine, unsigned nthreads)
{
	uint64_t pieces = tree ? block_size / RPMEM_HASH_PIECE : 0;
	if (tree && (block_size < RPMEM_HASH_PIECE ||
		     block_size % RPMEM_HASH_PIECE))
		return -EINVAL;
	uint64_t nblocks = (len + block_size - 1) / block_size;
	if (nthreads > HASH_MAX_THREADS)
		nthreads = HASH_MAX_THREADS;
	if (nthreads < 2 || len < HASH_MT_MIN || nblocks < nthreads)
		nthreads = 1;
	struct hash_job jobs[HASH_MAX_THREADS];
	pthread_t tid[HASH_MAX_THREADS];
	int started[HASH_MAX_THREADS] = { 0 };
	uint64_t per = (nblocks + nthreads - 1) / nthreads;
	for (unsigned t = 0; t < nthreads; t++) {
		uint64_t first = per * t < nblocks ? per * t : nblocks;
		uint64_t b = first * block_size;
		uint64_t e = (first + per) * (uint64_t)block_size;
		jobs[t] = (struct hash_job){ buf ? buf + b : NULL,
					     fd,
					     off + b,
					     first < nblocks ? (e < len ? e : len) - b
							     : 0,
					     block_size,
					     hashes + first,
					     tree,
					     fine ? fine + first * pieces
						  : NULL,
					     0 };
		if (t > 0 && jobs[t].len)
			started[t] = !pthread_create(&tid[t], NULL, hash_run,
						     &jobs[t]);
	}
	hash_run(&jobs[0]);
	int err = jobs[0].err;
	for (unsigned t = 1; t < nthreads; t++) {
		if (started[t])
			pthread_join(tid[t], NULL);
		else if (jobs[t].len)
			hash_run(&jobs[t]);
		if (!err)
			err = jobs[t].err;
	}
	return err;
}

int rpmem_hash_blocks(const void *buf, size_t len, uint32_t block_size,
		      uint64_t *hashes, unsigned nthreads)
{
	if (!len)
		return 0;
	return hash_split(buf, -1, 0, len, block_size, hashes, 0, NULL,
			  nthreads);
}

int rpmem_hash_tree_blocks(const void *buf, size_t len, uint32_t block_size,
			   uint64_t *hashes, uint64_t *fine, unsigned nthreads)
{
	if (!len)
		return 0;
	return hash_split(buf, -1, 0, len, block_size, hashes, 1, fine,
			  nthreads);
}

int rpmem_hash_fd_blocks(int fd, uint64_t off, uint64_t len,
			 uint32_t block_size, uint64_t *hashes,
			 unsigned nthreads)
{
	if (!len)
		return 0;
	return hash_split(NULL, fd, off, len, block_size, hashes, 0, NULL,
			  nthreads);
}

int rpmem_hash_fd_tree(int fd, uint64_t off, uint64_t len, uint32_t block_size,
		       uint64_t *hashes, uint64_t *fine, unsigned nthreads)
{
	if (!len)
		return 0;
	return hash_split(NULL, fd, off, len, block_size, hashes, 1, fine,
			  nthreads);
}
