/* SPDX-License-Identifier: BSD-3-Clause */
/* pobj_app.c -- test tool: an unmodified libpmemobj application, by steps */
#include <errno.h>
#include <libpmemobj.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../tools/lat.h"

/*
 * pobj_app POOL STEP...: opens POOL (creating a 16 MiB libpmemobj pool
 * with layout "rpmem_test" if the file does not exist) and runs the steps
 * in order. Knows nothing about rpmem: replication is LD_PRELOAD's job.
 *   set:I:TEXT  slot I = TEXT in a transaction
 *   put:I:TEXT  slot I = TEXT, then pmemobj_persist (no transaction)
 *   get:I       print slot I
 *   loop:N      N transactions of 8 bytes; prints "loop N NS_PER_TX"
 *   loop:until  the same until a line (or the end) on standard input
 *               (and "looping K" after every 64th, for a test to wait on),
 *               which it reads
 *   fill:N      a new object of N MiB, every byte written and persisted
 *   persist:N   N pmemobj_persist calls of 8 bytes; "persist N NS_PER_CALL"
 *   persist:until  the same until a line on standard input, pace:US
 *               apart (the calls a background resync needs to end)
 *   records:N   N transactions, each counter + 1 and slot (counter % 16)
 *               = "rec<counter>" in one; prints "committed <counter>"
 *               after each has returned
 *   records:until  the same until a line (or the end) on standard input
 *   pace:US     records after this step sleep US microseconds after each
 *               transaction (a bounded rate, so that a run left going
 *               for minutes logs a bounded number of lines)
 *   check       print the counter, and "torn" if a slot disagrees with it
 *   mt:T:N      T threads (at most 16), N transactions each on the
 *               thread's own record (count + 1, echo = count); prints
 *               "mt T N TX_PER_S P50_NS P99_NS P999_NS CPU_NS" (each
 *               transaction's latency, over all threads; the process's
 *               CPU, user and system, per transaction while they ran)
 *   mtrec:T:N   the same, printing "committed THREAD COUNT" after each
 *               transaction has returned
 *   mtp:T:N     the same with a pmemobj_persist of the record (count + 1,
 *               echo = count) instead of a transaction; prints "mtp ..."
 *   mtcheck     print "thread I COUNT" per thread record, and "torn"
 *               if its echo differs
 *   store:I:TEXT  slot I = TEXT, flushed but not drained (pmemobj_flush)
 *   pause       print "paused", wait for a line on standard input
 *   kill        SIGKILL itself (no exit handlers, no close)
 *   exit        exit(0) without closing the pool
 * Without kill or exit, the pool is closed at the end.
 */

#define SLOTS 16
#define SLOT_LEN 64
#define POOL_SIZE (16u << 20)
#define MT_MAX 16

struct root {
	char slot[SLOTS][SLOT_LEN];
	uint64_t counter;
	/* a record per thread of mt, a cache line each */
	struct {
		uint64_t count;
		uint64_t echo;
		char pad[48];
	} th[MT_MAX];
};

/* slot_of -- "I:..." -> I, *rest after the colon; -1 if bad */
static int slot_of(const char *s, const char **rest)
{
	char *end;
	long i = strtol(s, &end, 10);
	if (end == s || i < 0 || i >= SLOTS || (*end && *end != ':'))
		return -1;
	*rest = *end ? end + 1 : end;
	return (int)i;
}

/* tx_set -- slot i = text, transactionally */
static int tx_set(PMEMobjpool *pop, struct root *r, int i, const char *text)
{
	volatile int ret = 0;
	TX_BEGIN(pop) {
		pmemobj_tx_add_range_direct(r->slot[i], SLOT_LEN);
		memset(r->slot[i], 0, SLOT_LEN);
		strncpy(r->slot[i], text, SLOT_LEN - 1);
	} TX_ONABORT {
		ret = -1;
	} TX_END
	return ret;
}

/* stdin_ready -- a line (or the end) is waiting on standard input */
static int stdin_ready(void)
{
	struct pollfd pf = { .fd = 0, .events = POLLIN };
	return poll(&pf, 1, 0) > 0;
}

/* pace_us -- the pause after each transaction of records (pace:US) */
static long pace_us;

/*
 * records -- n transactions (n < 0: until stdin_ready) that each say
 * when they have committed
 */
static int records(PMEMobjpool *pop, struct root *r, long n)
{
	for (volatile long k = 0; n < 0 ? !stdin_ready() : k < n; k++) {
		volatile int ret = 0;
		TX_BEGIN(pop) {
			pmemobj_tx_add_range_direct(r, sizeof(*r));
			r->counter++;
			snprintf(r->slot[r->counter % SLOTS], SLOT_LEN,
				 "rec%llu", (unsigned long long)r->counter);
		} TX_ONABORT {
			ret = -1;
		} TX_END
		if (ret)
			return -1;
		printf("committed %llu\n", (unsigned long long)r->counter);
		fflush(stdout);
		if (pace_us > 0)
			usleep((useconds_t)pace_us);
	}
	return 0;
}

/*
 * check -- the counter, and "torn" if the slots of the last 16 records
 * do not hold them (a transaction applied in part)
 */
static void check(const struct root *r)
{
	char want[SLOT_LEN];
	printf("counter %llu\n", (unsigned long long)r->counter);
	for (uint64_t c = r->counter; c > 0 && c + SLOTS > r->counter; c--) {
		snprintf(want, sizeof(want), "rec%llu", (unsigned long long)c);
		if (strcmp(r->slot[c % SLOTS], want)) {
			printf("torn at %llu: slot %llu holds '%s'\n",
			       (unsigned long long)c,
			       (unsigned long long)(c % SLOTS),
			       r->slot[c % SLOTS]);
			return;
		}
	}
}

/* elapsed_ns -- nanoseconds since a */
static double elapsed_ns(const struct timespec *a)
{
	struct timespec b;
	clock_gettime(CLOCK_MONOTONIC, &b);
	return (b.tv_sec - a->tv_sec) * 1e9 + (b.tv_nsec - a->tv_nsec);
}

/*
 * persist_loop -- n persists of the counter (n < 0: until stdin_ready,
 * pace_us after each); prints how many and the time per call
 */
static void persist_loop(PMEMobjpool *pop, struct root *r, long n)
{
	struct timespec a;
	char line[64];
	long k;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (k = 0; n < 0 ? !stdin_ready() : k < n; k++) {
		r->counter++;
		pmemobj_persist(pop, &r->counter, sizeof(r->counter));
		if (n < 0 && pace_us)
			usleep((useconds_t)pace_us);
	}
	/* the line that ended it is read: a pause after waits for another */
	if (n < 0 && !fgets(line, sizeof(line), stdin))
		clearerr(stdin);
	printf("persist %ld %.0f\n", k, k ? elapsed_ns(&a) / k : 0.0);
}

/*
 * loop -- n small transactions (n < 0: until stdin_ready, saying how many
 * are done after every 64th); prints the time per transaction
 */
static int loop(PMEMobjpool *pop, struct root *r, long n)
{
	struct timespec a;
	volatile long k;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (k = 0; n < 0 ? !stdin_ready() : k < n; k++) {
		TX_BEGIN(pop) {
			pmemobj_tx_add_range_direct(&r->counter,
						    sizeof(r->counter));
			r->counter++;
		} TX_ONABORT {
			return -1;
		} TX_END
		if (n < 0 && (k + 1) % 64 == 0) {
			printf("looping %ld\n", (long)(k + 1));
			fflush(stdout);
		}
	}
	long done = k;
	char line[64];
	/* the line that ended it is read: a pause after waits for another */
	if (n < 0 && !fgets(line, sizeof(line), stdin))
		clearerr(stdin);
	printf("loop %ld %.0f\n", done, done ? elapsed_ns(&a) / done : 0.0);
	return 0;
}

/* one thread of mt */
struct mt_arg {
	PMEMobjpool *pop;
	struct root *r;
	unsigned i;
	long n;
	int print;	/* "committed I COUNT" after each */
	int persist;	/* pmemobj_persist instead of a transaction */
	uint64_t *lat; /* n latencies (ns) */
	int ret;
};

static pthread_mutex_t mt_out = PTHREAD_MUTEX_INITIALIZER;

/* mt_run -- a thread's n transactions on its own record */
static void *mt_run(void *p)
{
	struct mt_arg *a = p;
	uint64_t *c = &a->r->th[a->i].count, *e = &a->r->th[a->i].echo;
	for (volatile long k = 0; k < a->n && !a->ret; k++) {
		uint64_t t0 = now_ns();
		if (a->persist) {
			*e = ++*c;
			pmemobj_persist(a->pop, c, 2 * sizeof(*c));
			a->lat[k] = now_ns() - t0;
			continue;
		}
		TX_BEGIN(a->pop) {
			pmemobj_tx_add_range_direct(c, 2 * sizeof(*c));
			*e = ++*c;
		} TX_ONABORT {
			a->ret = -1;
		} TX_END
		a->lat[k] = now_ns() - t0;
		if (!a->print)
			continue;
		pthread_mutex_lock(&mt_out);
		printf("committed %u %llu\n", a->i, (unsigned long long)*c);
		fflush(stdout);
		pthread_mutex_unlock(&mt_out);
	}
	return NULL;
}

/*
 * mt -- "T:N": T threads of N transactions (persist: persists); prints
 * the rate and latencies
 */
static int mt(PMEMobjpool *pop, struct root *r, const char *s, int print,
	      int persist)
{
	char *end;
	long t = strtol(s, &end, 10), n = *end == ':' ? atol(end + 1) : 0;
	if (t < 1 || t > MT_MAX || n < 1)
		return -1;
	struct mt_arg a[MT_MAX];
	pthread_t th[MT_MAX];
	uint64_t *lat = calloc((size_t)(t * n), sizeof(*lat));
	int ret = lat ? 0 : -1;
	uint64_t c0 = cpu_ns(), t0 = now_ns();
	for (long i = 0; i < t && lat; i++) {
		a[i] = (struct mt_arg){ pop, r, (unsigned)i, n, print,
					persist, lat + i * n, 0 };
		if (pthread_create(&th[i], NULL, mt_run, &a[i]))
			abort();
	}
	for (long i = 0; i < t && lat; i++) {
		pthread_join(th[i], NULL);
		ret |= a[i].ret;
	}
	double sec = (now_ns() - t0) / 1e9;
	uint64_t cpu = cpu_ns() - c0;
	if (!ret) {
		size_t m = (size_t)(t * n);
		qsort(lat, m, sizeof(*lat), cmp_u64);
		printf("%s %ld %ld %.0f %llu %llu %llu %llu\n", persist ? "mtp" :
		       "mt", t, n, m / sec,
		       (unsigned long long)lat[m / 2],
		       (unsigned long long)lat[m * 99 / 100],
		       (unsigned long long)lat[m * 999 / 1000],
		       (unsigned long long)(cpu / m));
	}
	free(lat);
	return ret;
}

/* mt_check -- each thread record's count, "torn" if its echo differs */
static void mt_check(const struct root *r)
{
	for (unsigned i = 0; i < MT_MAX; i++) {
		printf("thread %u %llu\n", i,
		       (unsigned long long)r->th[i].count);
		if (r->th[i].echo != r->th[i].count)
			printf("torn: thread %u echo %llu\n", i,
			       (unsigned long long)r->th[i].echo);
	}
}

/* step -- run one step; returns 0, or 1 after printing why it failed */
static int step(PMEMobjpool *pop, struct root *r, const char *s)
{
	const char *rest;
	int i;
	if (!strncmp(s, "set:", 4) && (i = slot_of(s + 4, &rest)) >= 0) {
		if (tx_set(pop, r, i, rest)) {
			fprintf(stderr, "pobj_app: %s: aborted\n", s);
			return 1;
		}
	} else if (!strncmp(s, "put:", 4) &&
		   (i = slot_of(s + 4, &rest)) >= 0) {
		memset(r->slot[i], 0, SLOT_LEN);
		strncpy(r->slot[i], rest, SLOT_LEN - 1);
		pmemobj_persist(pop, r->slot[i], SLOT_LEN);
	} else if (!strncmp(s, "get:", 4) &&
		   (i = slot_of(s + 4, &rest)) >= 0) {
		printf("%s\n", r->slot[i]);
	} else if (!strncmp(s, "loop:", 5)) {
		if (loop(pop, r, strcmp(s + 5, "until") ? atol(s + 5) : -1))
			return 1;
	} else if (!strncmp(s, "persist:", 8)) {
		persist_loop(pop, r,
			     strcmp(s + 8, "until") ? atol(s + 8) : -1);
	} else if (!strncmp(s, "records:", 8)) {
		if (records(pop, r,
			    strcmp(s + 8, "until") ? atol(s + 8) : -1))
			return 1;
	} else if (!strncmp(s, "pace:", 5)) {
		pace_us = atol(s + 5);
	} else if (!strcmp(s, "check")) {
		check(r);
	} else if (!strncmp(s, "mt:", 3) || !strncmp(s, "mtrec:", 6) ||
		   !strncmp(s, "mtp:", 4)) {
		int rec = s[2] == 'r', pe = s[2] == 'p';
		if (mt(pop, r, strchr(s, ':') + 1, rec, pe)) {
			fprintf(stderr, "pobj_app: %s: failed\n", s);
			return 1;
		}
	} else if (!strcmp(s, "mtcheck")) {
		mt_check(r);
	} else if (!strncmp(s, "store:", 6) &&
		   (i = slot_of(s + 6, &rest)) >= 0) {
		memset(r->slot[i], 0, SLOT_LEN);
		strncpy(r->slot[i], rest, SLOT_LEN - 1);
		pmemobj_flush(pop, r->slot[i], SLOT_LEN);
	} else if (!strcmp(s, "pause")) {
		char line[64];
		printf("paused\n");
		fflush(stdout);
		if (!fgets(line, sizeof(line), stdin))
			return 0;
	} else if (!strcmp(s, "kill")) {
		fflush(stdout);
		raise(SIGKILL);
	} else if (!strncmp(s, "fill:", 5)) {
		/* a new zeroed object of N MiB, filled with 'f', persisted */
		PMEMoid oid;
		size_t len = (size_t)atol(s + 5) << 20;
		if (!len || pmemobj_alloc(pop, &oid, len, 0, NULL, NULL))
			return 1;
		pmemobj_memset_persist(pop, pmemobj_direct(oid), 'f', len);
		printf("filled %zu\n", len);
	} else if (!strcmp(s, "exit")) {
		fflush(stdout);
		exit(0);
	} else {
		fprintf(stderr, "pobj_app: unknown step '%s'\n", s);
		return 1;
	}
	fflush(stdout);
	return 0;
}

int main(int argc, char *argv[])
{
	if (argc < 2) {
		fprintf(stderr, "usage: pobj_app POOL STEP...\n");
		return 2;
	}
	PMEMobjpool *pop = access(argv[1], F_OK) ?
		pmemobj_create(argv[1], "rpmem_test", POOL_SIZE, 0600) :
		pmemobj_open(argv[1], "rpmem_test");
	if (!pop) {
		fprintf(stderr, "pobj_app: %s: %s\n", argv[1],
			pmemobj_errormsg());
		return 1;
	}
	PMEMoid root = pmemobj_root(pop, sizeof(struct root));
	struct root *r = pmemobj_direct(root);
	for (int k = 2; k < argc; k++)
		if (step(pop, r, argv[k])) {
			pmemobj_close(pop);
			return 1;
		}
	pmemobj_close(pop);
	return 0;
}
