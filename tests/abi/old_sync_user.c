/* SPDX-License-Identifier: BSD-3-Clause */
/* old_sync_user.c -- a LIBRPMEMCTL_1 program: the old rpmemctl_pool_sync */
/*
 * Usage: old_sync_user HOST PORT REGION POOL FILE
 *
 * Built against tests/abi/librpmemctl-v1.h (the header as released with
 * LIBRPMEMCTL_1), run against the current library. Creates a 4 MiB pool,
 * pushes a pattern, changes two bytes, verifies (two 4 KiB ranges
 * differ), pushes again and verifies (identical), checking every counter
 * of struct rpmemctl_sync_stats. Canary bytes right after the caller's
 * struct rpmemctl_sync_opts and struct rpmemctl_sync_stats must come back
 * untouched; one verify runs with both structs at the end of a page
 * followed by an inaccessible one, so a read or a write past the
 * released layouts kills the program. Writes the final local copy to
 * FILE, for the caller to compare with the bytes on the target.
 * Exit 0 when everything held, 1 (with the reason) otherwise.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "librpmemctl-v1.h"

#define POOL_SIZE (4u << 20)
#define CANARY_LEN 64
#define CANARY 0xa5
#define SOURCE "old_sync_user"

struct opts_canary {
	struct rpmemctl_sync_opts o;
	unsigned char canary[CANARY_LEN];
};

struct stats_canary {
	struct rpmemctl_sync_stats st;
	unsigned char canary[CANARY_LEN];
};

_Static_assert(offsetof(struct opts_canary, canary) ==
		       sizeof(struct rpmemctl_sync_opts),
	       "the canary follows the opts directly");
_Static_assert(offsetof(struct stats_canary, canary) ==
		       sizeof(struct rpmemctl_sync_stats),
	       "the canary follows the stats directly");

/* what the callbacks saw; the released API shares one arg */
struct seen {
	unsigned progress_calls;
	unsigned nranges;
	uint64_t off[8];
	uint64_t len[8];
};

static int failures;

/* CHECK -- count and report a failed expectation, carry on */
#define CHECK(cond)                                                       \
	do {                                                              \
		if (!(cond)) {                                            \
			fprintf(stderr, "%s:%d: check failed: %s\n",      \
				__FILE__, __LINE__, #cond);               \
			failures++;                                       \
		}                                                         \
	} while (0)

/* on_progress -- count progress calls */
static void on_progress(uint64_t done, uint64_t total, void *arg)
{
	struct seen *s = arg;
	(void)done;
	(void)total;
	s->progress_calls++;
}

/* on_range -- record each differing range */
static void on_range(uint64_t off, uint64_t len, void *arg)
{
	struct seen *s = arg;
	if (s->nranges < 8) {
		s->off[s->nranges] = off;
		s->len[s->nranges] = len;
	}
	s->nranges++;
}

/* canary_intact -- all CANARY_LEN bytes still CANARY */
static int canary_intact(const unsigned char *c)
{
	for (unsigned i = 0; i < CANARY_LEN; i++)
		if (c[i] != CANARY)
			return 0;
	return 1;
}

/* set_opts -- the released opts for mode, callbacks into s */
static void set_opts(struct rpmemctl_sync_opts *o,
		     enum rpmemctl_sync_mode mode, struct seen *s)
{
	memset(s, 0, sizeof(*s));
	*o = (struct rpmemctl_sync_opts){
		.mode = mode,
		.source = SOURCE,
		.progress = on_progress,
		.range = on_range,
		.arg = s,
	};
}

/* sync_canary -- one rpmemctl_pool_sync with canaries after both structs */
static int sync_canary(struct rpmemctl_pool *pool, void *local,
		       enum rpmemctl_sync_mode mode, struct seen *s,
		       struct rpmemctl_sync_stats *st)
{
	struct opts_canary oc;
	struct stats_canary sc;
	memset(&oc, CANARY, sizeof(oc));
	memset(&sc, CANARY, sizeof(sc));
	set_opts(&oc.o, mode, s);
	int ret = rpmemctl_pool_sync(pool, local, POOL_SIZE, &oc.o, &sc.st);
	CHECK(canary_intact(oc.canary));
	CHECK(canary_intact(sc.canary));
	*st = sc.st;
	return ret;
}

/*
 * sync_guarded -- one rpmemctl_pool_sync with the opts and the stats each
 * ending where an inaccessible page begins
 */
static int sync_guarded(struct rpmemctl_pool *pool, void *local,
			enum rpmemctl_sync_mode mode, struct seen *s,
			struct rpmemctl_sync_stats *st)
{
	long pg = sysconf(_SC_PAGESIZE);
	unsigned char *m = mmap(NULL, 4 * (size_t)pg, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return -errno;
	if (mprotect(m + pg, pg, PROT_NONE) ||
	    mprotect(m + 3 * pg, pg, PROT_NONE)) {
		munmap(m, 4 * (size_t)pg);
		return -errno;
	}
	struct rpmemctl_sync_opts *o =
		(void *)(m + pg - sizeof(struct rpmemctl_sync_opts));
	struct rpmemctl_sync_stats *gst =
		(void *)(m + 3 * pg - sizeof(struct rpmemctl_sync_stats));
	set_opts(o, mode, s);
	int ret = rpmemctl_pool_sync(pool, local, POOL_SIZE, o, gst);
	*st = *gst;
	munmap(m, 4 * (size_t)pg);
	return ret;
}

/* run -- the whole scenario on an open read-write pool */
static void run(struct rpmemctl_pool *pool, unsigned char *local)
{
	struct rpmemctl_sync_stats st;
	struct seen s;
	int ret;

	/* refused arguments leave the caller's stats untouched */
	struct opts_canary oc;
	struct stats_canary sc;
	memset(&oc, CANARY, sizeof(oc));
	memset(&sc, CANARY, sizeof(sc));
	set_opts(&oc.o, RPMEMCTL_SYNC_PUSH, &s);
	ret = rpmemctl_pool_sync(pool, local, POOL_SIZE - 4096, &oc.o, &sc.st);
	CHECK(ret == -EINVAL);
	CHECK(canary_intact((const unsigned char *)&sc));
	CHECK(canary_intact(sc.canary));

	/* the first push moves every block of the empty pool */
	ret = sync_canary(pool, local, RPMEMCTL_SYNC_PUSH, &s, &st);
	CHECK(ret == 0);
	CHECK(st.size == POOL_SIZE);
	CHECK(st.block_size == 64u << 10);
	CHECK(st.blocks_total == POOL_SIZE / (64u << 10));
	CHECK(st.blocks_differ == st.blocks_total);
	CHECK(st.bytes_differ == POOL_SIZE);
	CHECK(st.data_bytes == POOL_SIZE);
	CHECK(st.bytes_transferred > st.data_bytes);
	CHECK(st.generation == 1);
	CHECK(st.generation == rpmemctl_pool_get_generation(pool));
	CHECK(st.elapsed_ns > 0);
	CHECK(s.progress_calls > 0);

	/* two bytes change: verify names their 4 KiB blocks, moves nothing */
	local[100] ^= 0xff;
	local[(2u << 20) + 5] ^= 0xff;
	ret = sync_guarded(pool, local, RPMEMCTL_SYNC_VERIFY, &s, &st);
	CHECK(ret == 1);
	CHECK(st.size == POOL_SIZE);
	CHECK(st.blocks_differ == 2);
	CHECK(st.bytes_differ == 2 * 4096);
	CHECK(st.data_bytes == 0);
	CHECK(st.generation == 1);
	CHECK(s.nranges == 2);
	CHECK(s.off[0] == 0 && s.len[0] == 4096);
	CHECK(s.off[1] == 2u << 20 && s.len[1] == 4096);

	/* a push sends just those blocks and starts a new generation */
	ret = sync_canary(pool, local, RPMEMCTL_SYNC_PUSH, &s, &st);
	CHECK(ret == 0);
	CHECK(st.blocks_differ == 2);
	CHECK(st.bytes_differ == 2 * 4096);
	CHECK(st.data_bytes == 2 * 4096);
	CHECK(st.generation == 2);

	/* and the copies are identical */
	ret = sync_canary(pool, local, RPMEMCTL_SYNC_VERIFY, &s, &st);
	CHECK(ret == 0);
	CHECK(st.blocks_differ == 0);
	CHECK(st.bytes_differ == 0);
	CHECK(s.nranges == 0);
}

/* write_file -- the local copy to path */
static int write_file(const char *path, const void *buf, size_t len)
{
	FILE *f = fopen(path, "wbe");
	if (!f)
		return -errno;
	size_t n = fwrite(buf, 1, len, f);
	if (fclose(f) || n != len)
		return -EIO;
	return 0;
}

int main(int argc, char *argv[])
{
	struct rpmemctl_session *sess;
	struct rpmemctl_pool *pool;
	int ret;

	if (argc != 6) {
		fprintf(stderr, "usage: %s HOST PORT REGION POOL FILE\n",
			argv[0]);
		return 2;
	}
	unsigned char *local = malloc(POOL_SIZE);
	if (!local)
		return 1;
	for (unsigned i = 0; i < POOL_SIZE; i++)
		local[i] = (unsigned char)(i * 31 / 7 + 1);

	ret = rpmemctl_session_open(argv[1], argv[2], RPMEMCTL_TRANSPORT_TCP,
				    &sess);
	if (ret) {
		fprintf(stderr, "session: %s\n", rpmemctl_strerror(ret));
		free(local);
		return 1;
	}
	ret = rpmemctl_pool_create(sess, argv[3], argv[4], POOL_SIZE);
	if (!ret)
		ret = rpmemctl_pool_open(sess, argv[3], argv[4],
					 RPMEMCTL_OPEN_RDWR, &pool);
	if (ret) {
		fprintf(stderr, "pool: %s\n", rpmemctl_session_errmsg(sess));
		rpmemctl_session_close(&sess);
		free(local);
		return 1;
	}
	run(pool, local);
	rpmemctl_pool_close(&pool);
	rpmemctl_session_close(&sess);
	ret = write_file(argv[5], local, POOL_SIZE);
	if (ret) {
		fprintf(stderr, "%s: %s\n", argv[5], strerror(-ret));
		failures++;
	}
	free(local);
	if (failures)
		fprintf(stderr, "%d check(s) failed\n", failures);
	return failures ? 1 : 0;
}
