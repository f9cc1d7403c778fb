/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * replica_lat.c -- persist latency of a replica over n targets, k of n
 * (tests/bench/targets.sh, preload.sh): [-t THREADS] FILE COUNT SIZE K
 * TARGET... ; prints "median_us=M p99_us=P p999_us=Q tps=R" for COUNT
 * persists of SIZE bytes each at changing offsets, in each of THREADS
 * threads (1) on a part of the file of its own; over TCP, or RDMA if
 * REPLICA_LAT_TRANSPORT=rdma (tests/vm/suites/rdma-bench.sh)
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../tools/lat.h"
#include "librpmemctl.h"

/* one thread's persists */
struct run {
	struct rpmemctl_replica *r;
	uint8_t *base; /* its part of the file */
	size_t span;   /* slots of size in it */
	size_t size;
	unsigned count;
	uint64_t *lat;
	int ret;
};

/* run_persists -- count persists at changing offsets of the thread's part */
static void *run_persists(void *arg)
{
	struct run *a = arg;
	for (unsigned i = 0; i < a->count && !a->ret; i++) {
		uint8_t *p = a->base + (i % a->span) * a->size;
		memset(p, (int)i, a->size);
		uint64_t t0 = now_ns();
		a->ret = rpmemctl_replica_persist(a->r, p, a->size);
		a->lat[i] = now_ns() - t0;
		if (a->ret)
			fprintf(stderr, "persist: %s\n", rpmemctl_strerror(a->ret));
	}
	return NULL;
}

#define THREADS_MAX 64

int main(int argc, char **argv)
{
	struct rpmemctl_replica *r = NULL;
	char err[512];
	unsigned nt = 1;
	if (argc > 2 && !strcmp(argv[1], "-t")) {
		nt = (unsigned)atoi(argv[2]);
		argv += 2;
		argc -= 2;
	}
	if (argc < 6 || nt < 1 || nt > THREADS_MAX) {
		fprintf(stderr, "usage: %s [-t THREADS] FILE COUNT SIZE K "
			"TARGET...\n", argv[0]);
		return 2;
	}
	unsigned count = (unsigned)atoi(argv[2]);
	size_t size = (size_t)atol(argv[3]);
	unsigned k = (unsigned)atoi(argv[4]);
	unsigned n = (unsigned)(argc - 5);
	const char *tr = getenv("REPLICA_LAT_TRANSPORT");
	int ret = rpmemctl_replica_open_targets(
		argv[1], (const char *const *)&argv[5], n, k,
		tr && !strcmp(tr, "rdma") ? RPMEMCTL_TRANSPORT_RDMA :
					    RPMEMCTL_TRANSPORT_TCP,
		&r);
	if (ret) {
		snprintf(err, sizeof(err), "%s", rpmemctl_strerror(ret));
		fprintf(stderr, "open: %s\n", err);
		return 1;
	}
	size_t part = rpmemctl_replica_size(r) / nt;
	uint64_t *lat = calloc((size_t)count * nt, sizeof(*lat));
	struct run a[THREADS_MAX];
	pthread_t th[THREADS_MAX];
	if (!lat || !count || part / size == 0)
		return 1;
	uint64_t t0 = now_ns();
	for (unsigned t = 0; t < nt; t++) {
		a[t] = (struct run){ r, (uint8_t *)rpmemctl_replica_addr(r) +
				     t * part, part / size, size, count,
				     lat + (size_t)t * count, 0 };
		if (pthread_create(&th[t], NULL, run_persists, &a[t]))
			return 1;
	}
	for (unsigned t = 0; t < nt; t++) {
		pthread_join(th[t], NULL);
		ret |= a[t].ret;
	}
	double sec = (double)(now_ns() - t0) / 1e9;
	if (ret)
		return 1;
	size_t m = (size_t)count * nt;
	qsort(lat, m, sizeof(*lat), cmp_u64);
	printf("median_us=%.1f p99_us=%.1f p999_us=%.1f tps=%.0f\n",
	       (double)lat[m / 2] / 1e3, (double)lat[m * 99 / 100] / 1e3,
	       (double)lat[m * 999 / 1000] / 1e3, (double)m / sec);
	free(lat);
	return rpmemctl_replica_close(&r) ? 1 : 0;
}
