/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * replica_lat.c -- persist latency of a replica over n targets, k of n
 * (tests/bench/targets.sh): FILE COUNT SIZE K TARGET... ; prints
 * "median_us=M p99_us=P" for COUNT persists of SIZE bytes each at
 * changing offsets
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "librpmemctl.h"

/* now_ns -- CLOCK_MONOTONIC in ns */
static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* cmp_u64 -- qsort's order of uint64_t */
static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	struct rpmemctl_replica *r = NULL;
	char err[512];
	if (argc < 6) {
		fprintf(stderr, "usage: %s FILE COUNT SIZE K TARGET...\n",
			argv[0]);
		return 2;
	}
	unsigned count = (unsigned)atoi(argv[2]);
	size_t size = (size_t)atol(argv[3]);
	unsigned k = (unsigned)atoi(argv[4]);
	unsigned n = (unsigned)(argc - 5);
	int ret = rpmemctl_replica_open_targets(argv[1],
						(const char *const *)&argv[5],
						n, k, RPMEMCTL_TRANSPORT_TCP,
						&r);
	if (ret) {
		snprintf(err, sizeof(err), "%s", rpmemctl_strerror(ret));
		fprintf(stderr, "open: %s\n", err);
		return 1;
	}
	uint8_t *m = rpmemctl_replica_addr(r);
	size_t span = rpmemctl_replica_size(r) / size;
	uint64_t *lat = calloc(count, sizeof(*lat));
	if (!lat || !span)
		return 1;
	for (unsigned i = 0; i < count; i++) {
		uint8_t *p = m + (i % span) * size;
		memset(p, (int)i, size);
		uint64_t t0 = now_ns();
		ret = rpmemctl_replica_persist(r, p, size);
		lat[i] = now_ns() - t0;
		if (ret) {
			fprintf(stderr, "persist: %s\n",
				rpmemctl_replica_errmsg(r));
			return 1;
		}
	}
	qsort(lat, count, sizeof(*lat), cmp_u64);
	printf("median_us=%.1f p99_us=%.1f\n", (double)lat[count / 2] / 1e3,
	       (double)lat[count * 99 / 100] / 1e3);
	free(lat);
	return rpmemctl_replica_close(&r) ? 1 : 0;
}
