/* SPDX-License-Identifier: BSD-3-Clause */
/* hashbench.c -- block-hash throughput against memcpy of the same buffer */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

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
	double tm[64], t1[64], t2[64], t4k[64];

	if (!src || !dst || !hashes || runs < 1 || runs > 64)
		return 1;
	for (size_t i = 0; i < len; i++)
		src[i] = (uint8_t)(i * 2654435761u >> 13);
	memset(dst, 1, len);
	for (int r = 0; r < runs; r++) {
		tm[r] = run_memcpy(dst, src, len);
		t1[r] = run_hash(src, len, bs, hashes, 1);
		t2[r] = run_hash(src, len, bs, hashes, 2);
		t4k[r] = run_hash(src, len, 4096, hashes, 2);
	}
	double mb = (double)len / (1 << 20);
	double m = mb / median(tm, runs), h1 = mb / median(t1, runs);
	double h2 = mb / median(t2, runs), h4 = mb / median(t4k, runs);
	printf("buffer_mib=%.0f runs=%d\n", mb, runs);
	printf("memcpy_mib_s=%.0f\n", m);
	printf("hash64k_1thread_mib_s=%.0f ratio=%.2f\n", h1, h1 / m);
	printf("hash64k_2threads_mib_s=%.0f ratio=%.2f\n", h2, h2 / m);
	printf("hash4k_2threads_mib_s=%.0f ratio=%.2f\n", h4, h4 / m);
	free(src);
	free(dst);
	free(hashes);
	return 0;
}
