/* SPDX-License-Identifier: BSD-3-Clause */
/* undo.c -- unit tests of the undo journal of atomic syncs (daemon/storage/journal/undo.c) */
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

#include "undo.h"

#define BS RPMEMD_UNDO_BS
#define NBLK 64
#define SIZE ((uint64_t)NBLK * BS)
#define GEN 7

/* pwrite fails with this errno once it is set (0: the real pwrite) */
static int pwrite_fail;

ssize_t __real_pwrite(int fd, const void *buf, size_t n, off_t off);
ssize_t __wrap_pwrite(int fd, const void *buf, size_t n, off_t off)
{
	if (pwrite_fail) {
		errno = pwrite_fail;
		return -1;
	}
	return __real_pwrite(fd, buf, n, off);
}

struct fx {
	char dir[64];
	int dirfd;
	uint8_t *old; /* the pool at generation GEN */
	uint8_t *pool;
	uint8_t uuid[16];
};

static int fx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	assert_non_null(f);
	strcpy(f->dir, "/tmp/undo-unit.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	f->dirfd = open(f->dir, O_RDONLY | O_DIRECTORY);
	assert_true(f->dirfd >= 0);
	f->old = malloc(SIZE);
	f->pool = malloc(SIZE);
	assert_non_null(f->old);
	assert_non_null(f->pool);
	for (uint64_t i = 0; i < SIZE; i++)
		f->old[i] = (uint8_t)(i * 13 + i / BS);
	memcpy(f->pool, f->old, SIZE);
	memset(f->uuid, 0xab, sizeof(f->uuid));
	pwrite_fail = 0;
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;
	char cmd[128];
	close(f->dirfd);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", f->dir);
	assert_int_equal(system(cmd), 0);
	free(f->old);
	free(f->pool);
	free(f);
	return 0;
}

/* scribble -- a sync's write: new bytes over [off, off + len) */
static void scribble(struct fx *f, uint64_t off, uint64_t len)
{
	for (uint64_t i = off; i < off + len; i++)
		f->pool[i] = (uint8_t)~f->pool[i];
}

/* restore_cb -- the rollback's restore: into the fixture's pool */
static int restore_cb(void *arg, uint64_t off, const void *data, uint64_t len)
{
	struct fx *f = arg;
	assert_true(off + len <= SIZE);
	memcpy(f->pool + off, data, len);
	return 0;
}

/* file_size -- of <pool>.undo */
static off_t file_size(struct fx *f)
{
	struct stat st;
	assert_int_equal(fstatat(f->dirfd, "p" RPMEMD_UNDO_SUFFIX, &st, 0), 0);
	return st.st_size;
}

/* save -- journal [off, off + len) (unaligned allowed), then overwrite it */
static void save(struct fx *f, struct rpmemd_undo *u, uint64_t off,
		 uint64_t len)
{
	assert_int_equal(rpmemd_undo_save(u, f->pool, off, len), 0);
	assert_int_equal(rpmemd_undo_sync(u), 0);
	scribble(f, off, len);
}

/* an interrupted sync rolls back to the image it started from */
static void undo_apply__restores_the_old_image(void **state)
{
	struct fx *f = *state;
	struct rpmemd_undo *u = NULL;

	assert_int_equal(rpmemd_undo_create(f->dirfd, "p", f->uuid, SIZE, GEN,
					    "host:/src", &u), 0);
	save(f, u, 100, 10);	       /* inside block 0 */
	save(f, u, 5 * BS - 1, 2);     /* across blocks 4 and 5 */
	save(f, u, 10 * BS, 8 * BS);   /* a run of 8 */
	save(f, u, 3, 1);	       /* block 0 again: a mix, not journaled */
	assert_int_equal(rpmemd_undo_blocks(u), 11);
	assert_true(rpmemd_undo_covered(u, 10 * BS, 8 * BS));
	assert_false(rpmemd_undo_covered(u, 10 * BS, 9 * BS));
	assert_memory_not_equal(f->pool, f->old, SIZE);
	assert_int_equal(rpmemd_undo_apply(u, restore_cb, f), 0);
	assert_memory_equal(f->pool, f->old, SIZE);
	assert_string_equal(rpmemd_undo_source(u), "host:/src");
	rpmemd_undo_close(&u);
}

/* a block is journaled once: the second save of it writes nothing */
static void undo_save__each_block_once(void **state)
{
	struct fx *f = *state;
	struct rpmemd_undo *u = NULL;

	assert_int_equal(rpmemd_undo_create(f->dirfd, "p", f->uuid, SIZE, GEN,
					    "", &u), 0);
	save(f, u, 0, 4 * BS);
	off_t sz = file_size(f);
	assert_int_equal(sz, RPMEMD_UNDO_HDR + RPMEMD_UNDO_REC + 4 * BS);
	save(f, u, BS, 2 * BS);
	assert_int_equal(file_size(f), sz);
	assert_int_equal((off_t)rpmemd_undo_bytes(u), sz);
	rpmemd_undo_close(&u);
}

/*
 * what rpmemd finds after a crash: the records that check, a torn last
 * one cut off (its blocks were never overwritten: the sync waits for the
 * record to be durable), the journal's generation
 */
static void undo_load__cuts_a_torn_record(void **state)
{
	struct fx *f = *state;
	struct rpmemd_undo *u = NULL;
	uint64_t gen = 0, bytes = 0;

	assert_int_equal(rpmemd_undo_create(f->dirfd, "p", f->uuid, SIZE, GEN,
					    "", &u), 0);
	save(f, u, 0, 2 * BS);
	off_t good = file_size(f);
	assert_int_equal(rpmemd_undo_save(u, f->pool, 20 * BS, 3 * BS), 0);
	rpmemd_undo_close(&u);
	/* the crash tore the second record's data */
	int fd = openat(f->dirfd, "p" RPMEMD_UNDO_SUFFIX, O_RDWR);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, good + RPMEMD_UNDO_REC + BS), 0);
	close(fd);

	assert_int_equal(rpmemd_undo_peek(f->dirfd, "p", &gen, &bytes), 0);
	assert_int_equal(gen, GEN);
	assert_int_equal(rpmemd_undo_load(f->dirfd, "p", f->uuid, SIZE, &u), 0);
	assert_int_equal(rpmemd_undo_generation(u), GEN);
	assert_int_equal(rpmemd_undo_blocks(u), 2);
	assert_int_equal(file_size(f), good);
	assert_false(rpmemd_undo_covered(u, 20 * BS, BS));
	/* a resumed sync journals on from there, then rolls back whole */
	save(f, u, 20 * BS, 3 * BS);
	assert_int_equal(rpmemd_undo_apply(u, restore_cb, f), 0);
	assert_memory_equal(f->pool, f->old, SIZE);
	rpmemd_undo_close(&u);
}

/* a flipped byte in a record's data makes it (and what follows) invalid */
static void undo_load__a_corrupt_record_ends_the_journal(void **state)
{
	struct fx *f = *state;
	struct rpmemd_undo *u = NULL;

	assert_int_equal(rpmemd_undo_create(f->dirfd, "p", f->uuid, SIZE, GEN,
					    "", &u), 0);
	save(f, u, 0, BS);
	save(f, u, 8 * BS, BS);
	rpmemd_undo_close(&u);
	int fd = openat(f->dirfd, "p" RPMEMD_UNDO_SUFFIX, O_RDWR);
	uint8_t b = 0x5a;
	assert_int_equal(pwrite(fd, &b, 1, RPMEMD_UNDO_HDR +
						   2 * RPMEMD_UNDO_REC + BS + 9),
			 1);
	close(fd);
	assert_int_equal(rpmemd_undo_load(f->dirfd, "p", f->uuid, SIZE, &u), 0);
	assert_int_equal(rpmemd_undo_blocks(u), 1);
	rpmemd_undo_close(&u);
}

/* a journal of another pool, a corrupt header, none at all */
static void undo_load__refuses_what_is_not_this_pools(void **state)
{
	struct fx *f = *state;
	struct rpmemd_undo *u = NULL;
	uint8_t other[16] = { 1 };
	uint64_t gen, bytes;

	assert_int_equal(rpmemd_undo_load(f->dirfd, "p", f->uuid, SIZE, &u),
			 -ENOENT);
	assert_int_equal(rpmemd_undo_peek(f->dirfd, "p", &gen, &bytes), -ENOENT);
	assert_int_equal(rpmemd_undo_create(f->dirfd, "p", f->uuid, SIZE, GEN,
					    "", &u), 0);
	rpmemd_undo_close(&u);
	assert_int_equal(rpmemd_undo_load(f->dirfd, "p", other, SIZE, &u),
			 -EBADMSG);
	assert_int_equal(rpmemd_undo_load(f->dirfd, "p", f->uuid, SIZE * 2, &u),
			 -EBADMSG);
	int fd = openat(f->dirfd, "p" RPMEMD_UNDO_SUFFIX, O_RDWR);
	assert_int_equal(pwrite(fd, "X", 1, 40), 1); /* the generation */
	close(fd);
	assert_int_equal(rpmemd_undo_peek(f->dirfd, "p", &gen, &bytes),
			 -EBADMSG);
	assert_int_equal(rpmemd_undo_unlink(f->dirfd, "p"), 0);
	assert_int_equal(rpmemd_undo_unlink(f->dirfd, "p"), 0);
	assert_int_equal(rpmemd_undo_peek(f->dirfd, "p", &gen, &bytes), -ENOENT);
}

/* a full region: the save fails, leaves nothing, and can be retried */
static void undo_save__enospc_leaves_nothing(void **state)
{
	struct fx *f = *state;
	struct rpmemd_undo *u = NULL;

	assert_int_equal(rpmemd_undo_create(f->dirfd, "p", f->uuid, SIZE, GEN,
					    "", &u), 0);
	save(f, u, 0, BS);
	off_t sz = file_size(f);
	pwrite_fail = ENOSPC;
	assert_int_equal(rpmemd_undo_save(u, f->pool, 4 * BS, 2 * BS),
			 -ENOSPC);
	pwrite_fail = 0;
	assert_int_equal(file_size(f), sz);
	assert_false(rpmemd_undo_covered(u, 4 * BS, BS));
	assert_int_equal(rpmemd_undo_blocks(u), 1);
	save(f, u, 4 * BS, 2 * BS);
	assert_int_equal(rpmemd_undo_apply(u, restore_cb, f), 0);
	assert_memory_equal(f->pool, f->old, SIZE);
	rpmemd_undo_close(&u);
}

/* a new journal replaces a stale one; the header fits its file */
static void undo_create__replaces_a_stale_journal(void **state)
{
	struct fx *f = *state;
	struct rpmemd_undo *u = NULL;

	assert_int_equal(rpmemd_undo_create(f->dirfd, "p", f->uuid, SIZE, 3,
					    "", &u), 0);
	save(f, u, 0, 8 * BS);
	rpmemd_undo_close(&u);
	assert_int_equal(rpmemd_undo_create(f->dirfd, "p", f->uuid, SIZE, 4,
					    "", &u), 0);
	assert_int_equal(file_size(f), RPMEMD_UNDO_HDR);
	assert_int_equal(rpmemd_undo_blocks(u), 0);
	rpmemd_undo_close(&u);
	assert_int_equal(rpmemd_undo_load(f->dirfd, "p", f->uuid, SIZE, &u), 0);
	assert_int_equal(rpmemd_undo_generation(u), 4);
	rpmemd_undo_close(&u);
}

/*
 * a kept journal (a version) read back: its trailer, its blocks overlaid
 * on the newer image give the old one, a flipped byte is -EIO
 */
static void undo_overlay__gives_the_old_image(void **state)
{
	struct fx *f = *state;
	struct rpmemd_undo *u = NULL;
	const struct rpmemd_undo_ver v = { 1000, 0x1234, GEN + 1, 2000, 0 };
	uint8_t *img = malloc(SIZE), *tmp = malloc(RPMEMD_UNDO_REC_MAX);
	uint64_t bad = 0;

	assert_non_null(img);
	assert_non_null(tmp);
	assert_int_equal(rpmemd_undo_create(f->dirfd, "p", f->uuid, SIZE, GEN,
					    "host:/src", &u), 0);
	save(f, u, 3 * BS, 2 * BS);
	save(f, u, 40 * BS + 5, 1);
	assert_int_equal(rpmemd_undo_set_ver(u, &v), 0);
	rpmemd_undo_close(&u);
	assert_int_equal(rpmemd_undo_load_file(f->dirfd, "p.undo", f->uuid,
					       SIZE, 0, &u), 0);
	assert_int_equal(rpmemd_undo_ver(u)->time, v.time);
	assert_int_equal(rpmemd_undo_ver(u)->hash, v.hash);
	assert_int_equal(rpmemd_undo_ver(u)->next, v.next);
	assert_int_equal(rpmemd_undo_ver(u)->committed, v.committed);
	/* the trailer records where the records end */
	assert_int_equal(rpmemd_undo_ver(u)->end, rpmemd_undo_bytes(u));
	assert_int_equal(rpmemd_undo_blocks(u), 3);
	memcpy(img, f->pool, SIZE);
	assert_int_equal(rpmemd_undo_overlay(u, 0, SIZE, img, tmp, &bad), 0);
	assert_memory_equal(img, f->old, SIZE);
	/* a range that cuts a record: only its part */
	memcpy(img, f->pool, SIZE);
	assert_int_equal(rpmemd_undo_overlay(u, 4 * BS, BS, img, tmp, &bad),
			 0);
	assert_memory_equal(img, f->old + 4 * BS, BS);
	rpmemd_undo_close(&u);
	/* a flipped byte of a record's data */
	int fd = openat(f->dirfd, "p.undo", O_RDWR);
	uint8_t b;
	assert_int_equal(pread(fd, &b, 1, RPMEMD_UNDO_HDR + 32 + 7), 1);
	b ^= 0xff;
	assert_int_equal(pwrite(fd, &b, 1, RPMEMD_UNDO_HDR + 32 + 7), 1);
	close(fd);
	assert_int_equal(rpmemd_undo_load_file(f->dirfd, "p.undo", f->uuid,
					       SIZE, 0, &u), 0);
	assert_int_equal(rpmemd_undo_overlay(u, 0, SIZE, img, tmp, &bad),
			 -EIO);
	assert_int_equal(bad, 3 * BS);
	rpmemd_undo_close(&u);
	free(img);
	free(tmp);
}

/*
 * overlay_older: the blocks already filled (by an older version) stay, a
 * record holding none of the wanted unfilled blocks is not read (so not
 * checked either), one that is read is counted and checked
 */
static void undo_overlay_older__skips_filled_blocks(void **state)
{
	struct fx *f = *state;
	struct rpmemd_undo *u = NULL;
	uint8_t *img = malloc(SIZE), *tmp = malloc(RPMEMD_UNDO_REC_MAX);
	uint64_t filled[(SIZE / BS + 63) / 64], bad = 0, checked = 0;

	assert_non_null(img);
	assert_non_null(tmp);
	assert_int_equal(rpmemd_undo_create(f->dirfd, "p", f->uuid, SIZE, GEN,
					    "", &u), 0);
	save(f, u, 3 * BS, 2 * BS);
	rpmemd_undo_close(&u);
	/* its only record's data damaged */
	int fd = openat(f->dirfd, "p.undo", O_RDWR);
	uint8_t b;
	assert_int_equal(pread(fd, &b, 1, RPMEMD_UNDO_HDR + 32 + 7), 1);
	b ^= 0xff;
	assert_int_equal(pwrite(fd, &b, 1, RPMEMD_UNDO_HDR + 32 + 7), 1);
	close(fd);
	assert_int_equal(rpmemd_undo_load_file(f->dirfd, "p.undo", f->uuid,
					       SIZE, 0, &u), 0);
	/* blocks 3 and 4 given by an older version: not read, untouched */
	memset(filled, 0, sizeof(filled));
	filled[0] = 3ull << 3;
	memset(img, 0x77, SIZE);
	assert_int_equal(rpmemd_undo_overlay_older(u, 0, SIZE, img, tmp,
						   filled, &checked, &bad),
			 0);
	assert_int_equal(checked, 0);
	assert_int_equal(img[3 * BS], 0x77);
	/* block 4 wanted: the record is read, checked, refused */
	filled[0] = 1ull << 3;
	assert_int_equal(rpmemd_undo_overlay_older(u, 0, SIZE, img, tmp,
						   filled, &checked, &bad),
			 -EIO);
	assert_int_equal(checked, 2 * BS);
	assert_int_equal(bad, 3 * BS);
	rpmemd_undo_close(&u);
	free(img);
	free(tmp);
}

/* save_buf folds blocks of another journal in: only those it lacks */
static void undo_save_buf__adds_only_missing_blocks(void **state)
{
	struct fx *f = *state;
	struct rpmemd_undo *u = NULL;
	uint8_t *data = malloc(4 * BS);

	assert_non_null(data);
	memset(data, 0x5a, 4 * BS);
	assert_int_equal(rpmemd_undo_create(f->dirfd, "p", f->uuid, SIZE, GEN,
					    "host:/src", &u), 0);
	save(f, u, 10 * BS, BS);
	assert_int_equal(rpmemd_undo_save_buf(u, 9 * BS, data, 4 * BS), 0);
	assert_int_equal(rpmemd_undo_sync(u), 0);
	assert_int_equal(rpmemd_undo_blocks(u), 4);
	assert_int_equal(rpmemd_undo_save_buf(u, 9 * BS + 1, data, BS),
			 -EINVAL);
	memcpy(f->pool, f->old, SIZE);
	assert_int_equal(rpmemd_undo_apply(u, restore_cb, f), 0);
	/* block 10 kept its own copy, 9, 11 and 12 took the folded ones */
	assert_memory_equal(f->pool + 10 * BS, f->old + 10 * BS, BS);
	assert_memory_equal(f->pool + 9 * BS, data, BS);
	assert_memory_equal(f->pool + 12 * BS, data, BS);
	rpmemd_undo_close(&u);
	free(data);
}

/* tail -- append len bytes (zeros, or byte b) to <pool>.undo */
static void tail(struct fx *f, size_t len, int b)
{
	uint8_t *buf = malloc(len);
	int fd = openat(f->dirfd, "p.undo", O_WRONLY | O_APPEND);
	assert_non_null(buf);
	assert_true(fd >= 0);
	memset(buf, b, len);
	assert_int_equal(write(fd, buf, len), (ssize_t)len);
	close(fd);
	free(buf);
}

/* poke_at -- complement the byte at off of <pool>.undo */
static void poke_at(struct fx *f, off_t off)
{
	int fd = openat(f->dirfd, "p.undo", O_RDWR);
	uint8_t b;
	assert_int_equal(pread(fd, &b, 1, off), 1);
	b ^= 0xff;
	assert_int_equal(pwrite(fd, &b, 1, off), 1);
	close(fd);
}

/* kept -- a version of two records (4 blocks): its file's size */
static off_t kept(struct fx *f)
{
	const struct rpmemd_undo_ver v = { 1000, 0x1234, GEN + 1, 2000, 0 };
	struct rpmemd_undo *u = NULL;

	assert_int_equal(rpmemd_undo_create(f->dirfd, "p", f->uuid, SIZE, GEN,
					    "host:/src", &u), 0);
	save(f, u, 3 * BS, 2 * BS);
	save(f, u, 40 * BS, 2 * BS);
	assert_int_equal(rpmemd_undo_set_ver(u, &v), 0);
	rpmemd_undo_close(&u);
	return file_size(f);
}

/* loads -- the version loads (read-only and rw) with its 4 blocks */
static void loads(struct fx *f, off_t good)
{
	struct rpmemd_undo *u = NULL;

	assert_int_equal(rpmemd_undo_load_file(f->dirfd, "p.undo", f->uuid,
					       SIZE, 0, &u), 0);
	assert_int_equal(rpmemd_undo_blocks(u), 4);
	assert_int_equal(rpmemd_undo_bytes(u), good);
	rpmemd_undo_close(&u);
	assert_int_equal(rpmemd_undo_load_file(f->dirfd, "p.undo", f->uuid,
					       SIZE, 1, &u), 0);
	assert_int_equal(rpmemd_undo_blocks(u), 4);
	rpmemd_undo_close(&u);
	/* the rw load cut the tail off */
	assert_int_equal(file_size(f), good);
}

/*
 * a kept version: what a crash mid-append left past the end its trailer
 * records (a few bytes, a record's data without its head, a whole extra
 * record) is cut off at load; a record before that end that does not read
 * is damage, never cut
 */
static void version_load__cuts_a_torn_tail(void **state)
{
	struct fx *f = *state;
	struct rpmemd_undo *u = NULL;
	off_t good = kept(f);

	tail(f, 5, 0x5a);
	loads(f, good);
	tail(f, RPMEMD_UNDO_REC, 0);
	tail(f, BS, 0x77);
	loads(f, good);
	tail(f, RPMEMD_UNDO_REC + 3 * BS, 0x31);
	loads(f, good);
	/* the second record's head flipped: damage, not a tail */
	poke_at(f, RPMEMD_UNDO_HDR + RPMEMD_UNDO_REC + 2 * BS + 1);
	assert_int_equal(rpmemd_undo_load_file(f->dirfd, "p.undo", f->uuid,
					       SIZE, 0, &u), -EBADMSG);
	assert_int_equal(rpmemd_undo_load_file(f->dirfd, "p.undo", f->uuid,
					       SIZE, 1, &u), -EBADMSG);
	assert_int_equal(file_size(f), good);
	/* records it had are gone: damage */
	poke_at(f, RPMEMD_UNDO_HDR + RPMEMD_UNDO_REC + 2 * BS + 1);
	int fd = openat(f->dirfd, "p.undo", O_RDWR);
	assert_int_equal(ftruncate(fd, good - 1), 0);
	close(fd);
	assert_int_equal(rpmemd_undo_load_file(f->dirfd, "p.undo", f->uuid,
					       SIZE, 0, &u), -EBADMSG);
}

/*
 * a version kept before trailers recorded their end: a torn last record
 * (a few bytes, a head not written yet) is cut; a record whose head does
 * not read with more records after it is damage
 */
static void version_load__old_trailer_cuts_only_a_torn_record(void **state)
{
	struct fx *f = *state;
	struct rpmemd_undo *u = NULL;
	off_t good = kept(f);
	int fd = openat(f->dirfd, "p.undo", O_RDWR);
	uint8_t z[24] = { 0 };

	/* the end's part of the trailer as older rpmemd left it: none */
	assert_int_equal(pwrite(fd, z, sizeof(z), 2048 + 48), 24);
	close(fd);
	tail(f, 7, 0x5a);
	loads(f, good);
	tail(f, RPMEMD_UNDO_REC, 0);
	tail(f, 2 * BS, 0x77);
	loads(f, good);
	poke_at(f, RPMEMD_UNDO_HDR + 1);
	assert_int_equal(rpmemd_undo_load_file(f->dirfd, "p.undo", f->uuid,
					       SIZE, 0, &u), -EBADMSG);
	assert_int_equal(rpmemd_undo_load_file(f->dirfd, "p.undo", f->uuid,
					       SIZE, 1, &u), -EBADMSG);
	assert_int_equal(file_size(f), good);
}

/*
 * a damaged version read for what it can give: a flipped header byte
 * fails the load, the salvage load still gives every record (checked);
 * a record head that does not read leaves the rest unknown: every
 * overlay through it is -EIO
 */
static void version_salvage__header_damage_gives_every_record(void **state)
{
	struct fx *f = *state;
	struct rpmemd_undo *u = NULL;
	uint8_t *img = malloc(SIZE), *tmp = malloc(RPMEMD_UNDO_REC_MAX);
	uint64_t bad = 0;

	assert_non_null(img);
	assert_non_null(tmp);
	kept(f);
	poke_at(f, 200);
	assert_int_equal(rpmemd_undo_load_file(f->dirfd, "p.undo", f->uuid,
					       SIZE, 0, &u), -EBADMSG);
	assert_int_equal(rpmemd_undo_load_salvage(f->dirfd, "p.undo", f->uuid,
						  SIZE, GEN, &u), 0);
	assert_int_equal(rpmemd_undo_blocks(u), 4);
	assert_int_equal(rpmemd_undo_ver(u)->next, GEN + 1);
	memcpy(img, f->pool, SIZE);
	assert_int_equal(rpmemd_undo_overlay(u, 0, SIZE, img, tmp, &bad), 0);
	assert_memory_equal(img, f->old, SIZE);
	rpmemd_undo_close(&u);
	/* another generation's name: its records do not check */
	assert_int_equal(rpmemd_undo_load_salvage(f->dirfd, "p.undo", f->uuid,
						  SIZE, GEN + 7, &u), 0);
	assert_int_equal(rpmemd_undo_overlay(u, 3 * BS, BS, img, tmp, &bad),
			 -EIO);
	rpmemd_undo_close(&u);
	/* the second record's head: the rest of the file is unknown */
	poke_at(f, RPMEMD_UNDO_HDR + RPMEMD_UNDO_REC + 2 * BS + 1);
	assert_int_equal(rpmemd_undo_load_salvage(f->dirfd, "p.undo", f->uuid,
						  SIZE, GEN, &u), 0);
	assert_int_equal(rpmemd_undo_overlay(u, 100 * BS, BS, img, tmp, &bad),
			 -EIO);
	assert_int_equal(bad, 100 * BS);
	rpmemd_undo_close(&u);
	free(img);
	free(tmp);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(undo_apply__restores_the_old_image),
		T(undo_save__each_block_once),
		T(undo_load__cuts_a_torn_record),
		T(undo_load__a_corrupt_record_ends_the_journal),
		T(undo_load__refuses_what_is_not_this_pools),
		T(undo_save__enospc_leaves_nothing),
		T(undo_create__replaces_a_stale_journal),
		T(undo_overlay__gives_the_old_image),
		T(undo_overlay_older__skips_filled_blocks),
		T(undo_save_buf__adds_only_missing_blocks),
		T(version_load__cuts_a_torn_tail),
		T(version_load__old_trailer_cuts_only_a_torn_record),
		T(version_salvage__header_damage_gives_every_record),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
