/* SPDX-License-Identifier: BSD-3-Clause */
/* sync_coarse.c -- the coarse pass: both copies hashed in coarse blocks */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "hash.h"
#include "sync_int.h"

/*
 * Tree hashes. With a target that has RPMEM_CAP_HASH_TREE, the coarse
 * pass asks for tree hashes (util.h) and the initiator hashes its copy in
 * 4 KiB pieces, composing each coarse block's hash from them, at the same
 * cost as hashing the blocks whole. It keeps the pieces' hashes (8 bytes
 * per 4 KiB, up to FINE_KEEP_MAX: pools up to 64 GiB), so the fine pass
 * reads nothing again, and the target answers both passes from its cache
 * of 4 KiB hashes. A larger pool hashes the fine pass's runs again.
 */
#define FINE_KEEP_MAX (128ull << 20)

/* sync_diff_coarse -- every differing coarse block into c->diff; -ENOMEM */
int sync_diff_coarse(struct sync_ctx *c)
{
	for (uint64_t i = 0; i < c->nblocks; i++) {
		if (c->lh[i] == c->rh[i])
			continue;
		uint64_t off = i * c->bs;
		if (sync_diff_add(c, off, sync_block_len(c, off, c->bs)))
			return -ENOMEM;
	}
	return 0;
}

/*
 * coarse_next -- the next coarse blocks: RPMEM_MAX_HASHES, or fewer of a
 * large block size, so that a request hashes at most RPMEM_MAX_HASH_BYTES
 * (1 GiB: 16384 blocks of the default 64 KiB)
 */
static int coarse_next(void *arg, struct client_hreq *r, unsigned slot)
{
	struct sync_ctx *c = arg;
	(void)slot;
	if (c->next_coarse >= c->nblocks)
		return 0;
	uint64_t n = c->nblocks - c->next_coarse;
	uint64_t max = RPMEM_MAX_HASH_BYTES / c->bs;
	if (max > RPMEM_MAX_HASHES)
		max = RPMEM_MAX_HASHES;
	r->count = (uint32_t)(n < max ? n : max);
	r->bs = c->bs;
	r->flags = c->tree ? RPMEM_HASH_TREE : 0;
	r->one = (struct rpmem_hash_range){ c->next_coarse * c->bs, r->count };
	r->rv = &r->one;
	r->nr = 1;
	r->dst = c->rh + c->next_coarse;
	c->next_coarse += r->count;
	return 1;
}

/* coarse_done -- report progress of the coarse compare */
static int coarse_done(void *arg, struct client_hreq *r, unsigned slot)
{
	struct sync_ctx *c = arg;
	(void)slot;
	uint64_t end = r->one.offset + (uint64_t)r->count * r->bs;
	sync_progress(c, end < c->size ? end : c->size, c->size, 0);
	return 0;
}

struct local_job {
	const void *buf;
	int fd; /* >= 0: read the file instead of buf */
	size_t len;
	uint32_t bs;
	uint64_t *hashes;
	int tree;      /* tree hashes */
	uint64_t *fine; /* tree: the 4 KiB hashes too, or NULL */
	int err; /* a fault reading buf */
	/* shared with other syncs of the same file (or NULL) */
	struct rpmemctl_local_hashes *shared;
	const struct stat *st; /* the file as the sync began */
	uint64_t npieces;
};

/*
 * hash_threads -- the initiator hashes its copy with every online CPU
 * (rpmem_hash_blocks caps it at 8)
 */
static unsigned hash_threads(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n < 1 ? 1 : (unsigned)n;
}

/* local_hash -- hash the local buffer in coarse blocks (thread body) */
static void *local_hash_own(void *arg);

/* local_hash_fn -- local_hash_own as client_local_hashes_get's hash */
static int local_hash_fn(void *arg)
{
	local_hash_own(arg);
	return ((struct local_job *)arg)->err;
}

/*
 * local_hash -- the thread: the local copy's coarse hashes (and pieces),
 * from the shared ones if another sync of the same file made them
 */
static void *local_hash(void *arg)
{
	struct local_job *j = arg;
	if (!j->shared)
		return local_hash_own(arg);
	j->err = client_local_hashes_get(j->shared, j->st, j->len, j->bs,
					 j->tree, j->hashes, j->fine,
					 j->npieces, local_hash_fn, j);
	return NULL;
}

/* local_hash_own -- hash the local copy here */
static void *local_hash_own(void *arg)
{
	struct local_job *j = arg;
	unsigned nt = hash_threads();
	if (j->tree && j->fd >= 0)
		j->err = rpmem_hash_fd_tree(j->fd, 0, j->len, j->bs, j->hashes,
					    j->fine, nt);
	else if (j->tree)
		j->err = rpmem_hash_tree_blocks(j->buf, j->len, j->bs,
						j->hashes, j->fine, nt);
	else if (j->fd >= 0)
		j->err = rpmem_hash_fd_blocks(j->fd, 0, j->len, j->bs,
					      j->hashes, nt);
	else
		j->err = rpmem_hash_blocks(j->buf, j->len, j->bs, j->hashes,
					   nt);
	return NULL;
}

/*
 * sync_compare_coarse -- local coarse hashes (in a thread) and the target's
 * (pipelined) at the same time, then count the differing blocks
 */
int sync_compare_coarse(struct sync_ctx *c)
{
	c->lh = malloc(c->nblocks * sizeof(*c->lh));
	c->rh = malloc(c->nblocks * sizeof(*c->rh));
	if (!c->lh || !c->rh) {
		client_seterr(c->s, "out of memory for %llu block hashes",
			      (unsigned long long)c->nblocks);
		return -ENOMEM;
	}
	/* a verify or dry run keeps them too: it has a fine pass */
	uint64_t npieces = (c->size + SYNC_FINE_BS - 1) / SYNC_FINE_BS;
	if (c->tree && npieces * sizeof(*c->fl) <= FINE_KEEP_MAX)
		c->fl = malloc(npieces * sizeof(*c->fl)); /* NULL: rehash */
	/*
	 * a regular file the caller named is read rather than touched through
	 * the mapping: filling and tearing down the page tables of a large
	 * mapping cost more than the copy into a cache-sized buffer
	 */
	struct local_job job = { c->local, c->watch ? c->o->local_fd : -1,
				 c->size, c->bs, c->lh, c->tree, c->fl, 0,
				 c->watch ? c->o->local_hashes : NULL, &c->st0,
				 npieces };
	pthread_t tid;
	int threaded = pthread_create(&tid, NULL, local_hash, &job) == 0;
	if (!threaded)
		local_hash(&job);
	static const struct client_hash_ops ops = { .next = coarse_next,
						    .done = coarse_done };
	int ret = client_hash_pipeline(c->p, COARSE_WINDOW, &ops, c,
				       &c->st.bytes_transferred);
	if (threaded)
		pthread_join(tid, NULL);
	if (ret)
		return ret;
	if (job.err)
		return sync_local_fault(c, job.err);
	for (uint64_t i = 0; i < c->nblocks; i++)
		if (c->lh[i] != c->rh[i])
			c->st.blocks_differ++;
	sync_progress(c, c->size, c->size, 1);
	return 0;
}
