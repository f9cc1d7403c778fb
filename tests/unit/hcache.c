/* SPDX-License-Identifier: BSD-3-Clause */
/* hcache.c -- unit tests of the per-pool block hash cache (daemon/storage/pool/hcache.c) */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "hcache.h"
#include "hash.h"
#include "util.h"

#define BS RPMEMD_HCACHE_BS
#define NBLK 8
/* a short last block, as the protocol allows */
#define SIZE ((uint64_t)NBLK * BS - 1000)

struct fx {
	char dir[64];
	int dirfd;
	uint8_t *data;
	uint8_t uuid[16];
	struct stat st; /* the pool file as the cache is told it is */
	/* the persist callback's calls: [off, off + len) */
	uint64_t p_off[64], p_len[64];
	unsigned persists;
};

/* rec_persist -- the persist callback: record the range */
static int rec_persist(void *arg, uint64_t off, uint64_t len)
{
	struct fx *f = arg;
	if (f->persists < 64) {
		f->p_off[f->persists] = off;
		f->p_len[f->persists] = len;
	}
	f->persists++;
	return 0;
}

static int fx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	assert_non_null(f);
	strcpy(f->dir, "/tmp/hcache-unit.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	f->dirfd = open(f->dir, O_RDONLY | O_DIRECTORY);
	assert_true(f->dirfd >= 0);
	f->data = malloc(SIZE);
	assert_non_null(f->data);
	for (uint64_t i = 0; i < SIZE; i++)
		f->data[i] = (uint8_t)(i * 7 + i / 4096);
	memset(f->uuid, 0xab, sizeof(f->uuid));
	f->st.st_dev = 1;
	f->st.st_ino = 2;
	f->st.st_size = (off_t)SIZE;
	f->st.st_mtim.tv_sec = 1700000000;
	f->st.st_ctim.tv_sec = 1700000000;
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;
	rpmemd_hcache_unlink(f->dirfd, "p");
	close(f->dirfd);
	rmdir(f->dir);
	free(f->data);
	free(f);
	return 0;
}

/* fx_open -- the cache of pool "p" as f describes it */
static struct rpmemd_hcache *fx_open(struct fx *f)
{
	struct rpmemd_hcache *hc = NULL;
	assert_int_equal(rpmemd_hcache_open(f->dirfd, "p", f->uuid, SIZE,
					    &f->st, rec_persist, f, &hc),
			 0);
	assert_non_null(hc);
	return hc;
}

/*
 * fx_hash -- the tree hashes of all blocks through the cache (a sync's
 * coarse pass); checks them against the data
 */
static struct rpmemd_hcache_use fx_hash(struct fx *f, struct rpmemd_hcache *hc,
					int full)
{
	uint64_t h[NBLK], want[NBLK];
	struct rpmemd_hcache_use use = { 0, 0, 0 };
	assert_int_equal(rpmemd_hcache_hash(hc, f->data, SIZE, 0, BS, NBLK, 1,
					    h, 2, full, &use),
			 0);
	assert_int_equal(rpmem_hash_tree_blocks(f->data, SIZE, BS, want, NULL,
						1),
			 0);
	assert_memory_equal(h, want, sizeof(h));
	return use;
}

#define NPIECES ((SIZE + 4095) / 4096)

/* fx_hdr_byte -- flip byte off of the cache file */
static void fx_flip(struct fx *f, off_t off)
{
	int fd = openat(f->dirfd, "p" RPMEMD_HCACHE_SUFFIX, O_RDWR);
	uint8_t b;
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &b, 1, off), 1);
	b ^= 0x40;
	assert_int_equal(pwrite(fd, &b, 1, off), 1);
	close(fd);
}

static void rpmemd_hcache_hash__new_cache_hashes_all_then_none(void **state)
{
	struct fx *f = *state;
	struct rpmemd_hcache *hc = fx_open(f);
	struct rpmemd_hcache_use u = fx_hash(f, hc, 0);
	assert_int_equal(u.hashed, NBLK);
	assert_int_equal(u.cached, 0);
	u = fx_hash(f, hc, 0);
	assert_int_equal(u.hashed, 0);
	assert_int_equal(u.cached, NBLK);
	rpmemd_hcache_close(&hc);
	assert_null(hc);
}

static void rpmemd_hcache_open__committed_cache_survives_reopen(void **state)
{
	struct fx *f = *state;
	struct rpmemd_hcache *hc = fx_open(f);
	fx_hash(f, hc, 0);
	/* a fresh cache is dirty until a commit; it persists the whole pool */
	assert_int_equal(rpmemd_hcache_commit(hc, &f->st), 0);
	assert_int_equal(f->persists, 1);
	assert_int_equal(f->p_off[0], 0);
	assert_int_equal(f->p_len[0], SIZE);
	rpmemd_hcache_close(&hc);
	hc = fx_open(f);
	struct rpmemd_hcache_use u = fx_hash(f, hc, 0);
	assert_int_equal(u.cached, NBLK);
	rpmemd_hcache_close(&hc);
}

static void rpmemd_hcache_write_begin__invalidates_only_touched_blocks(
	void **state)
{
	struct fx *f = *state;
	struct rpmemd_hcache *hc = fx_open(f);
	fx_hash(f, hc, 0);
	assert_int_equal(rpmemd_hcache_commit(hc, &f->st), 0);
	f->persists = 0;
	/* 10 bytes across the border of blocks 2 and 3 */
	uint64_t off = 3 * (uint64_t)BS - 5;
	assert_int_equal(rpmemd_hcache_write_begin(hc, off, 10), 0);
	memset(f->data + off, 0x5a, 10);
	rpmemd_hcache_write_end(hc, off, 10);
	struct rpmemd_hcache_use u = fx_hash(f, hc, 0);
	assert_int_equal(u.hashed, 2);
	assert_int_equal(u.cached, NBLK - 2);
	/* of those two blocks, only the two 4 KiB pieces written */
	assert_int_equal(u.pieces, 2);
	/* the commit persists exactly the written blocks */
	assert_int_equal(rpmemd_hcache_commit(hc, &f->st), 0);
	assert_int_equal(f->persists, 1);
	assert_int_equal(f->p_off[0], 2 * (uint64_t)BS);
	assert_int_equal(f->p_len[0], 2 * (uint64_t)BS);
	rpmemd_hcache_close(&hc);
	hc = fx_open(f);
	u = fx_hash(f, hc, 0);
	assert_int_equal(u.cached, NBLK);
	rpmemd_hcache_close(&hc);
}

static void rpmemd_hcache_flushed__flushed_blocks_need_no_persist(void **state)
{
	struct fx *f = *state;
	struct rpmemd_hcache *hc = fx_open(f);
	assert_int_equal(rpmemd_hcache_commit(hc, &f->st), 0);
	f->persists = 0;
	assert_int_equal(rpmemd_hcache_write_begin(hc, BS, 2 * BS), 0);
	rpmemd_hcache_write_end(hc, BS, 2 * BS);
	/* block 1 flushed whole, block 2 only in part */
	rpmemd_hcache_flushed(hc, BS, BS + 100);
	assert_int_equal(rpmemd_hcache_commit(hc, &f->st), 0);
	assert_int_equal(f->persists, 1);
	assert_int_equal(f->p_off[0], 2 * (uint64_t)BS);
	assert_int_equal(f->p_len[0], BS);
	rpmemd_hcache_close(&hc);
}

static void rpmemd_hcache_open__uncommitted_write_invalidates_all(void **state)
{
	struct fx *f = *state;
	struct rpmemd_hcache *hc = fx_open(f);
	fx_hash(f, hc, 0);
	assert_int_equal(rpmemd_hcache_commit(hc, &f->st), 0);
	/* a crash after the first write: the header on disk says dirty */
	assert_int_equal(rpmemd_hcache_write_begin(hc, 0, 1), 0);
	rpmemd_hcache_close(&hc);
	hc = fx_open(f);
	struct rpmemd_hcache_use u = fx_hash(f, hc, 0);
	assert_int_equal(u.hashed, NBLK);
	rpmemd_hcache_close(&hc);
}

static void rpmemd_hcache_open__corrupt_header_invalidates_all(void **state)
{
	struct fx *f = *state;
	struct rpmemd_hcache *hc = fx_open(f);
	fx_hash(f, hc, 0);
	assert_int_equal(rpmemd_hcache_commit(hc, &f->st), 0);
	rpmemd_hcache_close(&hc);
	/* a torn header: one byte of its epoch differs from the checksum */
	fx_flip(f, 56);
	hc = fx_open(f);
	struct rpmemd_hcache_use u = fx_hash(f, hc, 0);
	assert_int_equal(u.hashed, NBLK);
	rpmemd_hcache_close(&hc);
}

static void rpmemd_hcache_hash__corrupt_entry_is_hashed_again(void **state)
{
	struct fx *f = *state;
	struct rpmemd_hcache *hc = fx_open(f);
	fx_hash(f, hc, 0);
	assert_int_equal(rpmemd_hcache_commit(hc, &f->st), 0);
	rpmemd_hcache_close(&hc);
	/* piece 21's hash (block 1; the entries follow the 4 KiB header) */
	fx_flip(f, 4096 + 21 * 16 + 3);
	hc = fx_open(f);
	/* fx_hash checks the hashes against the data: never the wrong one */
	struct rpmemd_hcache_use u = fx_hash(f, hc, 0);
	assert_int_equal(u.hashed, 1);
	assert_int_equal(u.cached, NBLK - 1);
	assert_int_equal(u.pieces, 1);
	rpmemd_hcache_close(&hc);
}

static void rpmemd_hcache_hash__fine_hashes_come_from_the_cache(void **state)
{
	struct fx *f = *state;
	struct rpmemd_hcache *hc = fx_open(f);
	fx_hash(f, hc, 0);
	/* a fine pass: plain 4 KiB hashes of pieces 16 .. 47 */
	uint64_t h[32], want[32];
	struct rpmemd_hcache_use u = { 0, 0, 0 };
	assert_int_equal(rpmemd_hcache_hash(hc, f->data, SIZE, 16 * 4096, 4096,
					    32, 0, h, 2, 0, &u),
			 0);
	assert_int_equal(rpmem_hash_blocks(f->data + 16 * 4096, 32 * 4096,
					   4096, want, 1),
			 0);
	assert_memory_equal(h, want, sizeof(h));
	assert_int_equal(u.cached, 32);
	assert_int_equal(u.pieces, 0);
	/* and the short last piece */
	assert_int_equal(rpmemd_hcache_hash(hc, f->data, SIZE,
					    (NPIECES - 1) * 4096, 4096, 1, 0,
					    h, 1, 0, &u),
			 0);
	assert_int_equal(h[0], rpmem_hash_block(f->data + (NPIECES - 1) * 4096,
						SIZE - (NPIECES - 1) * 4096));
	assert_int_equal(u.cached, 33);
	rpmemd_hcache_close(&hc);
}

/*
 * rpmemd_hcache_hash_fd: the pieces it hashes are read from the file, the
 * same hashes as from the data, kept: the next call answers from the cache
 */
static void rpmemd_hcache_hash_fd__reads_the_file_and_keeps_the_hashes(
	void **state)
{
	struct fx *f = *state;
	int fd = openat(f->dirfd, "data", O_RDWR | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, f->data, SIZE, 0), (ssize_t)SIZE);
	struct rpmemd_hcache *hc = fx_open(f);
	uint64_t npieces = (SIZE + 4095) / 4096;
	uint64_t h[NBLK * (BS / 4096)], want[NBLK * (BS / 4096)];
	struct rpmemd_hcache_use u = { 0, 0, 0 };
	assert_int_equal(rpmemd_hcache_hash_fd(hc, NULL, fd, SIZE, 0, 4096,
					       (uint32_t)npieces, 0, h, 2, 0,
					       &u),
			 0);
	assert_int_equal(rpmem_hash_blocks(f->data, SIZE, 4096, want, 1), 0);
	assert_memory_equal(h, want, npieces * sizeof(*h));
	assert_int_equal(u.pieces, npieces);
	/* kept: from the cache now, even with the file gone */
	close(fd);
	unlinkat(f->dirfd, "data", 0);
	memset(&u, 0, sizeof(u));
	memset(h, 0, sizeof(h));
	assert_int_equal(rpmemd_hcache_hash(hc, NULL, SIZE, 0, 4096,
					    (uint32_t)npieces, 0, h, 1, 0, &u),
			 0);
	assert_memory_equal(h, want, npieces * sizeof(*h));
	assert_int_equal(u.cached, npieces);
	assert_int_equal(u.pieces, 0);
	/* a file shorter than the pool: the read fails */
	fd = openat(f->dirfd, "data", O_RDWR | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_not_equal(rpmemd_hcache_hash_fd(hc, NULL, fd, SIZE, 0,
						   4096, (uint32_t)npieces, 0,
						   h, 1, 1, &u),
			     0);
	close(fd);
	unlinkat(f->dirfd, "data", 0);
	rpmemd_hcache_close(&hc);
}

static void rpmemd_hcache_hash__other_sizes_and_offsets_are_einval(
	void **state)
{
	struct fx *f = *state;
	struct rpmemd_hcache *hc = fx_open(f);
	uint64_t h[NBLK];
	struct rpmemd_hcache_use u = { 0, 0, 0 };
	/* plain 64 KiB hashes are not what the cache keeps */
	assert_int_equal(rpmemd_hcache_hash(hc, f->data, SIZE, 0, BS, NBLK, 0,
					    h, 1, 0, &u),
			 -EINVAL);
	/* a tree of pieces smaller than a piece */
	assert_int_equal(rpmemd_hcache_hash(hc, f->data, SIZE, 0, 2048, 4, 1,
					    h, 1, 0, &u),
			 -EINVAL);
	/* a block that does not start on a piece */
	assert_int_equal(rpmemd_hcache_hash(hc, f->data, SIZE, 512, 4096, 1, 0,
					    h, 1, 0, &u),
			 -EINVAL);
	assert_int_equal(u.cached + u.hashed + u.pieces, 0);
	rpmemd_hcache_close(&hc);
}

static void rpmemd_hcache_open__pool_file_changed_invalidates_all(void **state)
{
	struct fx *f = *state;
	struct rpmemd_hcache *hc = fx_open(f);
	fx_hash(f, hc, 0);
	assert_int_equal(rpmemd_hcache_commit(hc, &f->st), 0);
	rpmemd_hcache_close(&hc);
	/* written behind rpmemd's back while it was stopped */
	f->data[100] ^= 1;
	f->st.st_mtim.tv_nsec = 5;
	hc = fx_open(f);
	struct rpmemd_hcache_use u = fx_hash(f, hc, 0);
	assert_int_equal(u.hashed, NBLK);
	rpmemd_hcache_close(&hc);
}

static void rpmemd_hcache_open__other_uuid_invalidates_all(void **state)
{
	struct fx *f = *state;
	struct rpmemd_hcache *hc = fx_open(f);
	fx_hash(f, hc, 0);
	assert_int_equal(rpmemd_hcache_commit(hc, &f->st), 0);
	rpmemd_hcache_close(&hc);
	/* a pool of the same name created again */
	f->uuid[0] ^= 1;
	hc = fx_open(f);
	struct rpmemd_hcache_use u = fx_hash(f, hc, 0);
	assert_int_equal(u.hashed, NBLK);
	rpmemd_hcache_close(&hc);
}

static void rpmemd_hcache_check_file__changed_stat_drops_all(void **state)
{
	struct fx *f = *state;
	struct rpmemd_hcache *hc = fx_open(f);
	fx_hash(f, hc, 0);
	assert_int_equal(rpmemd_hcache_commit(hc, &f->st), 0);
	assert_int_equal(rpmemd_hcache_check_file(hc, &f->st), 0);
	f->data[BS * 4] ^= 1;
	f->st.st_ctim.tv_sec++;
	assert_int_equal(rpmemd_hcache_check_file(hc, &f->st), 1);
	struct rpmemd_hcache_use u = fx_hash(f, hc, 0);
	assert_int_equal(u.hashed, NBLK);
	rpmemd_hcache_close(&hc);
}

static void rpmemd_hcache_rdma_begin__cache_off_until_end_then_invalid(
	void **state)
{
	struct fx *f = *state;
	struct rpmemd_hcache *hc = fx_open(f);
	fx_hash(f, hc, 0);
	assert_int_equal(rpmemd_hcache_rdma_begin(hc), 0);
	/* an RDMA write the daemon does not see */
	f->data[BS * 6 + 1] ^= 1;
	struct rpmemd_hcache_use u = fx_hash(f, hc, 0);
	assert_int_equal(u.hashed, NBLK);
	f->data[BS * 7 + 1] ^= 1;
	/* no commit while the RDMA writer is there */
	f->persists = 0;
	assert_int_equal(rpmemd_hcache_commit(hc, &f->st), 0);
	assert_int_equal(f->persists, 0);
	rpmemd_hcache_rdma_end(hc);
	u = fx_hash(f, hc, 0);
	assert_int_equal(u.hashed, NBLK);
	/* then the whole pool is persisted before the header is clean */
	assert_int_equal(rpmemd_hcache_commit(hc, &f->st), 0);
	assert_int_equal(f->persists, 1);
	assert_int_equal(f->p_len[0], SIZE);
	rpmemd_hcache_close(&hc);
}

static void rpmemd_hcache_hash__full_hashes_every_block(void **state)
{
	struct fx *f = *state;
	struct rpmemd_hcache *hc = fx_open(f);
	fx_hash(f, hc, 0);
	struct rpmemd_hcache_use u = fx_hash(f, hc, 1);
	assert_int_equal(u.hashed, NBLK);
	assert_int_equal(u.cached, 0);
	rpmemd_hcache_close(&hc);
}

static void rpmemd_hcache_close__null_is_fine(void **state)
{
	struct rpmemd_hcache *hc = NULL;
	(void)state;
	rpmemd_hcache_close(&hc);
	rpmemd_hcache_close(NULL);
	assert_int_equal(rpmemd_hcache_write_begin(NULL, 0, 1), 0);
	assert_int_equal(rpmemd_hcache_commit(NULL, NULL), 0);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(rpmemd_hcache_hash_fd__reads_the_file_and_keeps_the_hashes),
		T(rpmemd_hcache_hash__new_cache_hashes_all_then_none),
		T(rpmemd_hcache_open__committed_cache_survives_reopen),
		T(rpmemd_hcache_write_begin__invalidates_only_touched_blocks),
		T(rpmemd_hcache_flushed__flushed_blocks_need_no_persist),
		T(rpmemd_hcache_open__uncommitted_write_invalidates_all),
		T(rpmemd_hcache_open__corrupt_header_invalidates_all),
		T(rpmemd_hcache_hash__corrupt_entry_is_hashed_again),
		T(rpmemd_hcache_hash__fine_hashes_come_from_the_cache),
		T(rpmemd_hcache_hash__other_sizes_and_offsets_are_einval),
		T(rpmemd_hcache_open__pool_file_changed_invalidates_all),
		T(rpmemd_hcache_open__other_uuid_invalidates_all),
		T(rpmemd_hcache_check_file__changed_stat_drops_all),
		T(rpmemd_hcache_rdma_begin__cache_off_until_end_then_invalid),
		T(rpmemd_hcache_hash__full_hashes_every_block),
		cmocka_unit_test(rpmemd_hcache_close__null_is_fine),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
