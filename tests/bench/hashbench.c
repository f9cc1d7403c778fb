/* SPDX-License-Identifier: BSD-3-Clause */
/* hashbench.c -- block-hash throughput against memcpy of the same buffer */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h> /* the plain (baseline-built) XXH3 entry points */

#include "hash.h"
#include "util.h"

/* the in-cache case: a 256 KiB buffer, as a pread chunk of a sync */
#define INCACHE_LEN (256u << 10)
#define INCACHE_PASSES 2048u /* 512 MiB hashed */

/* run_memcpy -- seconds for one memcpy of len bytes */
static double run_memcpy(void *dst, const void *src, size_t len)
{
	uint64_t t0 = rpmem_now_ns();
	memcpy(dst, src, len);
	__asm__ volatile("" : : "r"(dst) : "memory");
	return (double)(rpmem_now_ns() - t0) / 1e9;
}

/* run_hash -- seconds to hash len bytes in blocks with nthreads */
static double run_hash(const void *src, size_t len, uint32_t bs,
		       uint64_t *hashes, unsigned nthreads)
{
	uint64_t t0 = rpmem_now_ns();
	rpmem_hash_blocks(src, len, bs, hashes, nthreads);
	return (double)(rpmem_now_ns() - t0) / 1e9;
}

/*
 * run_incache -- seconds to hash a cache-sized buffer in 4 KiB blocks,
 * INCACHE_PASSES times, on one thread: with rpmem's hashing (libxxhash's
 * runtime dispatch) or, if plain, with libxxhash's baseline XXH3_64bits
 */
static double run_incache(const uint8_t *src, uint64_t *hashes, int plain)
{
	uint64_t t0 = rpmem_now_ns();
	for (unsigned p = 0; p < INCACHE_PASSES; p++) {
		if (!plain) {
			rpmem_hash_blocks(src, INCACHE_LEN, 4096, hashes, 1);
			continue;
		}
		for (size_t o = 0; o < INCACHE_LEN; o += 4096)
			hashes[o / 4096] = XXH3_64bits(src + o, 4096);
	}
	__asm__ volatile("" : : "r"(hashes) : "memory");
	return (double)(rpmem_now_ns() - t0) / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return v[n / 2];
}

int main(int argc, char *argv[])
{
	size_t len = (argc > 1 ? strtoull(argv[1], NULL, 0) : 256) << 20;
	int runs = argc > 2 ? atoi(argv[2]) : 7;
	uint32_t bs = 65536;
	uint8_t *src = malloc(len), *dst = malloc(len);
	uint64_t *hashes = malloc((len / 4096 + 1) * sizeof(*hashes));
	double tm[64], t1[64], t2[64], t4k[64], tc[64], tb[64];

	if (!src || !dst || !hashes || runs < 1 || runs > 64)
		return 1;
	for (size_t i = 0; i < len; i++)
		src[i] = (uint8_t)(i * 2654435761u >> 13);
	memset(dst, 1, len);
	/*
	 * the baseline before anything else: legacy SSE code run after
	 * AVX-512 code without a vzeroupper between them pays a transition
	 * penalty on some CPUs
	 */
	for (int r = 0; r < runs; r++)
		tb[r] = run_incache(src, hashes, 1);
	for (int r = 0; r < runs; r++) {
		tm[r] = run_memcpy(dst, src, len);
		t1[r] = run_hash(src, len, bs, hashes, 1);
		t2[r] = run_hash(src, len, bs, hashes, 2);
		t4k[r] = run_hash(src, len, 4096, hashes, 2);
	}
	for (int r = 0; r < runs; r++)
		tc[r] = run_incache(src, hashes, 0);
	double mb = (double)len / (1 << 20);
	double m = mb / median(tm, runs), h1 = mb / median(t1, runs);
	double h2 = mb / median(t2, runs), h4 = mb / median(t4k, runs);
	printf("buffer_mib=%.0f runs=%d\n", mb, runs);
	printf("memcpy_mib_s=%.0f\n", m);
	printf("hash64k_1thread_mib_s=%.0f ratio=%.2f\n", h1, h1 / m);
	printf("hash64k_2threads_mib_s=%.0f ratio=%.2f\n", h2, h2 / m);
	printf("hash4k_2threads_mib_s=%.0f ratio=%.2f\n", h4, h4 / m);
	double cm = (double)INCACHE_LEN * INCACHE_PASSES / (1 << 20);
	double hc = cm / median(tc, runs), hb = cm / median(tb, runs);
	printf("hash4k_incache_1thread_mib_s=%.0f baseline_xxh3_mib_s=%.0f ratio=%.2f\n",
	       hc, hb, hc / hb);
	free(src);
	free(dst);
	free(hashes);
	return 0;
}
