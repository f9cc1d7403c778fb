/* SPDX-License-Identifier: BSD-3-Clause */
/* lat.h -- what the latency-timing test programs share (header only) */
#ifndef RPMEM_TESTS_LAT_H
#define RPMEM_TESTS_LAT_H

#include <stdint.h>
#include <time.h>

/* clock_ns -- clock c in ns */
static inline uint64_t clock_ns(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* now_ns -- CLOCK_MONOTONIC in ns */
static inline uint64_t now_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

/* cpu_ns -- the process's CPU time so far (user and system), in ns */
static inline uint64_t cpu_ns(void)
{
	return clock_ns(CLOCK_PROCESS_CPUTIME_ID);
}

/* cmp_u64 -- qsort's order of uint64_t */
static inline int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

#endif
