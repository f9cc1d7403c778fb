/* SPDX-License-Identifier: BSD-3-Clause */
/* hash.c -- XXH3-64 block hashing, split across threads for large inputs */
#include <pthread.h>
#include <xxhash.h>

#include "guard.h"
#include "util.h"

/* below this much data a second thread costs more than it saves */
#define HASH_MT_MIN (8u << 20)
#define HASH_MAX_THREADS 8
#define HASH_PREFAULT_MIN (1u << 20)

uint64_t rpmem_hash_block(const void *buf, size_t len)
{
	return XXH3_64bits(buf, len);
}

struct hash_job {
	const uint8_t *buf;
	size_t len;
	uint32_t bs;
	uint64_t *hashes;
	int err; /* a fault reading buf (guard.h) */
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

/* hash_run -- one job's share, a SIGBUS of a shrunk file caught */
static void *hash_run(void *arg)
{
	struct hash_job *j = arg;
	j->err = rpmem_guard_run(hash_share, j);
	return NULL;
}

int rpmem_hash_blocks(const void *buf, size_t len, uint32_t block_size,
		      uint64_t *hashes, unsigned nthreads)
{
	size_t nblocks = (len + block_size - 1) / block_size;
	if (nthreads > HASH_MAX_THREADS)
		nthreads = HASH_MAX_THREADS;
	if (nthreads < 2 || len < HASH_MT_MIN || nblocks < nthreads) {
		struct hash_job j = { buf, len, block_size, hashes, 0 };
		hash_run(&j);
		return j.err;
	}
	struct hash_job jobs[HASH_MAX_THREADS];
	pthread_t tid[HASH_MAX_THREADS];
	int started[HASH_MAX_THREADS] = { 0 };
	size_t per = (nblocks + nthreads - 1) / nthreads;
	for (unsigned t = 0; t < nthreads; t++) {
		size_t first = per * t;
		if (first >= nblocks) {
			jobs[t].len = 0;
			jobs[t].err = 0;
			continue;
		}
		size_t off = first * block_size;
		size_t end = (first + per) * (size_t)block_size;
		jobs[t] = (struct hash_job){ (const uint8_t *)buf + off,
					     (end < len ? end : len) - off,
					     block_size, hashes + first, 0 };
		/* thread 0's share runs on the caller below */
		if (t > 0)
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
		if (jobs[t].len && !err)
			err = jobs[t].err;
	}
	return err;
}
