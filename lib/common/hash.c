/* SPDX-License-Identifier: BSD-3-Clause */
/* hash.c -- XXH3-64 block hashing, split across threads for large inputs */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>
#include <xxhash.h>

#include "guard.h"
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

/* one thread's share: blocks of a buffer (buf), or of a file (fd, off) */
struct hash_job {
	const uint8_t *buf;
	int fd;
	uint64_t off;
	uint64_t len;
	uint32_t bs;
	uint64_t *hashes;
	int err; /* a fault reading buf (guard.h), or the file's -errno */
};

/* hash_share -- hash the blocks of one job's share */
static int hash_share(void *arg)
{
	struct hash_job *j = arg;
	size_t n = (j->len + j->bs - 1) / j->bs;
	/* map a large share in one call, not one page fault at a time */
	if (j->len >= HASH_PREFAULT_MIN)
		rpmem_prefault(j->buf, j->len);
	for (size_t i = 0; i < n; i++) {
		size_t off = i * j->bs;
		size_t l = j->len - off < j->bs ? j->len - off : j->bs;
		j->hashes[i] = XXH3_64bits(j->buf + off, l);
	}
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
	if (posix_memalign((void **)&buf, 4096, chunk)) {
		j->err = -ENOMEM;
		return;
	}
	uint64_t done = 0, *h = j->hashes;
	while (done < j->len && !j->err) {
		size_t want = j->len - done < chunk ? (size_t)(j->len - done)
						    : chunk;
		size_t got = 0;
		while (got < want) {
			ssize_t n = pread(j->fd, buf + got, want - got,
					  (off_t)(j->off + done + got));
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0) {
				/* 0: the file ended early, it shrank */
				j->err = n < 0 ? -errno : -EFAULT;
				break;
			}
			got += (size_t)n;
		}
		for (size_t o = 0; o < got; o += j->bs) {
			size_t l = got - o < j->bs ? got - o : j->bs;
			*h++ = XXH3_64bits(buf + o, l);
		}
		done += got;
	}
	free(buf);
}

/* hash_run -- one job's share; a SIGBUS of a shrunk mapping caught */
static void *hash_run(void *arg)
{
	struct hash_job *j = arg;
	if (j->buf)
		j->err = rpmem_guard_run(hash_share, j);
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
		      uint32_t block_size, uint64_t *hashes, unsigned nthreads)
{
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
	return hash_split(buf, -1, 0, len, block_size, hashes, nthreads);
}

int rpmem_hash_fd_blocks(int fd, uint64_t off, uint64_t len,
			 uint32_t block_size, uint64_t *hashes,
			 unsigned nthreads)
{
	if (!len)
		return 0;
	return hash_split(NULL, fd, off, len, block_size, hashes, nthreads);
}
