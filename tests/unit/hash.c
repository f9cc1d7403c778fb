/* SPDX-License-Identifier: BSD-3-Clause */
/* hash.c -- unit tests of block hashing (lib/common/hash.c) */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>
#include <xxhash.h>

#include "librpmemctl.h"
#include "hash.h"
#include "util.h"

/*
 * pthread_create is wrapped at link time (-Wl,--wrap=pthread_create) to
 * count the threads the hasher starts and to make their creation fail.
 */
int __real_pthread_create(pthread_t *t, const pthread_attr_t *a,
			  void *(*fn)(void *), void *arg);
int __wrap_pthread_create(pthread_t *t, const pthread_attr_t *a,
			  void *(*fn)(void *), void *arg);

static unsigned threads_started;
static int threads_fail;

int __wrap_pthread_create(pthread_t *t, const pthread_attr_t *a,
			  void *(*fn)(void *), void *arg)
{
	if (threads_fail)
		return EAGAIN;
	threads_started++;
	return __real_pthread_create(t, a, fn, arg);
}

#define BIG ((16u << 20) + 12345) /* over the 8 MiB threading threshold */

static uint8_t *big;

static int setup(void **state)
{
	(void)state;
	big = malloc(BIG);
	if (!big)
		return -1;
	/* a cheap deterministic pattern that differs in every block */
	uint64_t x = 0x9e3779b97f4a7c15ull;
	for (size_t i = 0; i < BIG; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		big[i] = (uint8_t)x;
	}
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	free(big);
	return 0;
}

static void reset(void)
{
	threads_started = 0;
	threads_fail = 0;
}

/* reference -- the per-block hashes, one rpmem_hash_block call each */
static uint64_t *reference(const uint8_t *buf, size_t len, uint32_t bs,
			   size_t *nblocks)
{
	size_t n = (len + bs - 1) / bs;
	uint64_t *h = calloc(n ? n : 1, sizeof(*h));
	assert_non_null(h);
	for (size_t i = 0; i < n; i++) {
		size_t off = i * bs;
		size_t l = len - off < bs ? len - off : bs;
		h[i] = rpmem_hash_block(buf + off, l);
	}
	*nblocks = n;
	return h;
}

/* check -- rpmem_hash_blocks with nthreads equals the reference exactly */
static void check(size_t len, uint32_t bs, unsigned nthreads)
{
	size_t n;
	uint64_t *want = reference(big, len, bs, &n);
	uint64_t *got = malloc((n + 1) * sizeof(*got));
	assert_non_null(got);
	memset(got, 0xa5, (n + 1) * sizeof(*got));
	rpmem_hash_blocks(big, len, bs, got, nthreads);
	assert_memory_equal(got, want, n * sizeof(*got));
	/* nothing written past the last block */
	uint64_t canary;
	memset(&canary, 0xa5, sizeof(canary));
	assert_memory_equal(&got[n], &canary, sizeof(canary));
	free(want);
	free(got);
}

static void rpmem_hash_block__is_xxh3_64(void **state)
{
	(void)state;
	/* known XXH3-64 values (seed 0) */
	assert_int_equal(rpmem_hash_block("", 0), 0x2d06800538d394c2ull);
	assert_int_equal(rpmem_hash_block("a", 1), 0xe6c632b61e964e1full);
	uint8_t a[4096], b[4096];
	memset(a, 0, sizeof(a));
	memset(b, 0, sizeof(b));
	b[4095] = 1;
	assert_int_not_equal(rpmem_hash_block(a, sizeof(a)),
			     rpmem_hash_block(b, sizeof(b)));
}

/*
 * the hashes on the wire are XXH3-64 whatever vectors the CPU has: the
 * dispatched hashing (AVX-512, AVX2) equals the baseline build of the
 * library for long inputs (the vector paths) and short ones
 */
static void rpmem_hash_block__equals_the_baseline_xxh3(void **state)
{
	(void)state;
	static const size_t lens[] = { 1, 17, 129, 240, 241, 1000, 4096,
				       4097, 65536, 1u << 20, BIG };
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++)
		assert_int_equal(rpmem_hash_block(big, lens[i]),
				 XXH3_64bits(big, lens[i]));
}

static void rpmem_hash_blocks__matches_per_block_hashes(void **state)
{
	(void)state;
	reset();
	check(4096, 512, 1);
	check(64 << 10, 4096, 1);
	check(1, 512, 1);
	assert_int_equal(threads_started, 0);
}

static void rpmem_hash_blocks__short_last_block(void **state)
{
	(void)state;
	reset();
	check(4096 + 1, 512, 1);
	check(4096 - 1, 512, 1);
	check(3 * 65536 + 100, 65536, 1);
	check(100, 65536, 1); /* one block, shorter than block_size */
	check(BIG, 65536, 1);
}

static void rpmem_hash_blocks__empty_input_writes_nothing(void **state)
{
	(void)state;
	uint64_t h = 0x1234;
	rpmem_hash_blocks(big, 0, 4096, &h, 1);
	rpmem_hash_blocks(big, 0, 4096, &h, 4);
	assert_int_equal(h, 0x1234);
}

static void rpmem_hash_blocks__two_threads_give_identical_hashes(
	void **state)
{
	(void)state;
	reset();
	check(BIG, 65536, 2);
	assert_int_equal(threads_started, 1); /* the caller does one share */
	reset();
	check(BIG, 4096, 2);
	assert_int_equal(threads_started, 1);
}

static void rpmem_hash_blocks__three_threads_give_identical_hashes(
	void **state)
{
	(void)state;
	reset();
	check(BIG, 65536, 3);
	assert_int_equal(threads_started, 2);
	/* block counts that do not divide evenly among the threads */
	reset();
	check(BIG - 7, 1u << 20, 3);
	reset();
	check((9u << 20) + 1, 1u << 20, 3); /* 10 blocks over 3 threads */
	assert_int_equal(threads_started, 2);
}

static void rpmem_hash_blocks__many_threads_are_capped(void **state)
{
	(void)state;
	reset();
	check(BIG, 65536, 64);
	assert_int_equal(threads_started, 7); /* 8 threads, the caller one */
}

static void rpmem_hash_blocks__few_blocks_stay_single_threaded(void **state)
{
	(void)state;
	reset();
	/* 17 MiB in two 16 MiB blocks: no more threads than blocks */
	check(BIG, 16u << 20, 3);
	assert_int_equal(threads_started, 0);
	reset();
	check(BIG, 64u << 20, 3); /* a single block */
	assert_int_equal(threads_started, 0);
}

static void rpmem_hash_blocks__small_input_stays_single_threaded(
	void **state)
{
	(void)state;
	reset();
	check((8u << 20) - 1, 4096, 8);
	check(1u << 20, 4096, 8);
	assert_int_equal(threads_started, 0);
	/* from 8 MiB on, the work is shared */
	reset();
	check(8u << 20, 4096, 8);
	assert_int_equal(threads_started, 7);
}

static void rpmem_hash_blocks__thread_failure_still_hashes_everything(
	void **state)
{
	(void)state;
	reset();
	threads_fail = 1;
	check(BIG, 65536, 3);
	check(BIG - 1, 4096, 8);
	assert_int_equal(threads_started, 0);
}

/*
 * shrunk_mapping -- a 16 MiB file mapped whole, then truncated to 4 MiB:
 * reading past 4 MiB raises SIGBUS
 */
static uint8_t *shrunk_mapping(size_t len)
{
	char path[] = "/tmp/rpmem-hash-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	unlink(path);
	assert_int_equal(ftruncate(fd, (off_t)len), 0);
	uint8_t *p = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
	assert_true(p != MAP_FAILED);
	assert_int_equal(ftruncate(fd, (off_t)len / 4), 0);
	close(fd);
	return p;
}

static void rpmem_hash_blocks__file_shrunk_under_it_returns_efault(
	void **state)
{
	(void)state;
	size_t len = 16u << 20, n = len / 65536;
	uint8_t *p = shrunk_mapping(len);
	uint64_t *h = calloc(n, sizeof(*h));
	assert_non_null(h);
	reset();
	assert_int_equal(rpmem_hash_blocks(p, len, 65536, h, 1), -EFAULT);
	assert_int_equal(rpmem_hash_blocks(p, len, 65536, h, 4), -EFAULT);
	assert_int_equal(threads_started, 3);
	/* the part still backed by the file hashes as before */
	assert_int_equal(rpmem_hash_blocks(p, len / 4, 65536, h, 4), 0);
	free(h);
	munmap(p, len);
}

static void rpmemctl_hash_blocks__equals_internal_hash(void **state)
{
	(void)state;
	size_t n;
	uint64_t *want = reference(big, BIG, 65536, &n);
	uint64_t *got = calloc(n, sizeof(*got));
	assert_non_null(got);
	rpmemctl_hash_blocks(big, BIG, 65536, got);
	assert_memory_equal(got, want, n * sizeof(*got));
	free(want);
	free(got);
}

/* big_file -- a temporary file holding len bytes of big; its fd */
static int big_file(size_t len)
{
	char path[] = "/tmp/rpmem-hash-fd.XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	unlink(path);
	assert_int_equal(write(fd, big, len), (ssize_t)len);
	return fd;
}

static void rpmem_hash_fd_blocks__matches_the_mapped_hashes(void **state)
{
	(void)state;
	/* one thread, two, three; the last block short; chunk boundaries */
	static const uint32_t bss[] = { 4096, 65536, 1u << 20 };
	int fd = big_file(BIG);
	for (unsigned b = 0; b < 3; b++) {
		for (unsigned t = 1; t <= 3; t++) {
			size_t n;
			uint64_t *want = reference(big, BIG, bss[b], &n);
			uint64_t *got = calloc(n, sizeof(*got));
			assert_non_null(got);
			assert_int_equal(rpmem_hash_fd_blocks(fd, 0, BIG, bss[b],
							      got, t),
					 0);
			assert_memory_equal(got, want, n * sizeof(*got));
			free(got);
			free(want);
		}
	}
	close(fd);
}

static void rpmem_hash_fd_blocks__from_an_offset(void **state)
{
	(void)state;
	int fd = big_file(BIG);
	size_t n;
	uint64_t *want = reference(big + 65536, BIG - 65536, 65536, &n);
	uint64_t *got = calloc(n, sizeof(*got));
	assert_non_null(got);
	assert_int_equal(rpmem_hash_fd_blocks(fd, 65536, BIG - 65536, 65536,
					      got, 2),
			 0);
	assert_memory_equal(got, want, n * sizeof(*got));
	free(got);
	free(want);
	close(fd);
}

static void rpmem_hash_fd_blocks__file_shorter_than_len_returns_efault(
	void **state)
{
	(void)state;
	int fd = big_file(BIG / 2);
	size_t n = (BIG + 65535) / 65536;
	uint64_t *got = calloc(n, sizeof(*got));
	assert_non_null(got);
	for (unsigned t = 1; t <= 2; t++)
		assert_int_equal(rpmem_hash_fd_blocks(fd, 0, BIG, 65536, got,
						      t),
				 -EFAULT);
	free(got);
	close(fd);
}

static void rpmem_hash_fd_blocks__unreadable_fd_returns_its_errno(
	void **state)
{
	(void)state;
	uint64_t h[4];
	assert_int_equal(rpmem_hash_fd_blocks(-1, 0, 4 * 4096, 4096, h, 1),
			 -EBADF);
}

/*
 * tree_reference -- the tree hashes of buf in blocks of bs, by definition:
 * XXH3-64 over the XXH3-64 hashes (little-endian) of each block's 4 KiB
 * pieces; the pieces' hashes to *fine (allocated)
 */
static uint64_t *tree_reference(const uint8_t *buf, size_t len, uint32_t bs,
				size_t *n, uint64_t **fine)
{
	size_t np = (len + 4095) / 4096;
	*n = (len + bs - 1) / bs;
	*fine = reference(buf, len, 4096, &np);
	uint64_t *h = calloc(*n, sizeof(*h));
	assert_non_null(h);
	for (size_t i = 0; i < *n; i++) {
		size_t k0 = i * (bs / 4096);
		size_t k1 = k0 + bs / 4096 < np ? k0 + bs / 4096 : np;
		static uint8_t le[8 * ((64u << 20) / 4096)];
		for (size_t k = k0; k < k1; k++)
			for (unsigned b = 0; b < 8; b++)
				le[(k - k0) * 8 + b] =
					(uint8_t)((*fine)[k] >> (8 * b));
		h[i] = rpmem_hash_block(le, (k1 - k0) * 8);
	}
	return h;
}

static void rpmem_hash_tree_blocks__hashes_the_pieces_hashes(void **state)
{
	(void)state;
	/* one block of one piece, 64 KiB and 1 MiB blocks; the last short */
	static const uint32_t bss[] = { 4096, 65536, 1u << 20 };
	int fd = big_file(BIG);
	for (unsigned b = 0; b < 3; b++) {
		for (unsigned t = 1; t <= 3; t++) {
			size_t n, np = (BIG + 4095) / 4096;
			uint64_t *wf, *want = tree_reference(big, BIG, bss[b],
							     &n, &wf);
			uint64_t *got = calloc(n, sizeof(*got));
			uint64_t *gf = calloc(np, sizeof(*gf));
			assert_non_null(got);
			assert_non_null(gf);
			assert_int_equal(rpmem_hash_tree_blocks(big, BIG, bss[b],
								got, gf, t),
					 0);
			assert_memory_equal(got, want, n * sizeof(*got));
			assert_memory_equal(gf, wf, np * sizeof(*gf));
			/* from the file, with and without the pieces kept */
			memset(got, 0, n * sizeof(*got));
			memset(gf, 0, np * sizeof(*gf));
			assert_int_equal(rpmem_hash_fd_tree(fd, 0, BIG, bss[b],
							    got, gf, t),
					 0);
			assert_memory_equal(got, want, n * sizeof(*got));
			assert_memory_equal(gf, wf, np * sizeof(*gf));
			memset(got, 0, n * sizeof(*got));
			assert_int_equal(rpmem_hash_fd_tree(fd, 0, BIG, bss[b],
							    got, NULL, t),
					 0);
			assert_memory_equal(got, want, n * sizeof(*got));
			free(gf);
			free(got);
			free(wf);
			free(want);
		}
	}
	close(fd);
}

static void rpmem_hash_tree_blocks__block_under_a_piece_is_einval(
	void **state)
{
	(void)state;
	uint64_t h[4];
	assert_int_equal(rpmem_hash_tree_blocks(big, 8192, 2048, h, NULL, 1),
			 -EINVAL);
	assert_int_equal(rpmem_hash_fd_tree(0, 0, 8192, 2048, h, NULL, 1),
			 -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(rpmem_hash_block__is_xxh3_64),
		cmocka_unit_test(rpmem_hash_block__equals_the_baseline_xxh3),
		cmocka_unit_test(rpmem_hash_blocks__matches_per_block_hashes),
		cmocka_unit_test(rpmem_hash_blocks__short_last_block),
		cmocka_unit_test(rpmem_hash_blocks__empty_input_writes_nothing),
		cmocka_unit_test(
			rpmem_hash_blocks__two_threads_give_identical_hashes),
		cmocka_unit_test(
			rpmem_hash_blocks__three_threads_give_identical_hashes),
		cmocka_unit_test(rpmem_hash_blocks__many_threads_are_capped),
		cmocka_unit_test(
			rpmem_hash_blocks__few_blocks_stay_single_threaded),
		cmocka_unit_test(
			rpmem_hash_blocks__small_input_stays_single_threaded),
		cmocka_unit_test(
			rpmem_hash_blocks__thread_failure_still_hashes_everything),
		cmocka_unit_test(rpmemctl_hash_blocks__equals_internal_hash),
		cmocka_unit_test(
			rpmem_hash_blocks__file_shrunk_under_it_returns_efault),
		cmocka_unit_test(rpmem_hash_fd_blocks__matches_the_mapped_hashes),
		cmocka_unit_test(rpmem_hash_fd_blocks__from_an_offset),
		cmocka_unit_test(
			rpmem_hash_fd_blocks__file_shorter_than_len_returns_efault),
		cmocka_unit_test(
			rpmem_hash_fd_blocks__unreadable_fd_returns_its_errno),
		cmocka_unit_test(
			rpmem_hash_tree_blocks__hashes_the_pieces_hashes),
		cmocka_unit_test(
			rpmem_hash_tree_blocks__block_under_a_piece_is_einval),
	};
	return cmocka_run_group_tests_name("hash", tests, setup, teardown);
}
