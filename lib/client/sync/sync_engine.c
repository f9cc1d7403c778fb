/* SPDX-License-Identifier: BSD-3-Clause */
/* sync_engine.c -- push, pull, mirror and verify: the driver of a sync */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <syslog.h>

#include "client_sync.h"
#include "util.h"
#include "sync_int.h"

/*
 * sync_compare -- the ranges that differ, into c->diff: for a dense push the
 * probe's, else those of the coarse compare, then the coarse blocks whole
 * (sync_whole_coarse) or the fine pass's 4 KiB blocks
 */
int sync_compare(struct sync_ctx *c)
{
	struct rpmemctl_pool *p = c->p;

	p->hash_flags = c->o->flags & RPMEMCTL_SYNC_FULL ? RPMEM_HASH_FULL : 0;
	/* tree hashes are made of 4 KiB pieces, the fine blocks */
	c->tree = (c->s->caps & RPMEM_CAP_HASH_TREE) && c->bs > SYNC_FINE_BS;
	int ret = sync_probe_dense(c);
	sync_phase(c, "the dense probe");
	if (!ret) {
		ret = sync_compare_coarse(c);
		c->st.blocks_compared = c->nblocks;
		sync_phase(c, "the coarse compare");
	}
	p->hash_flags = 0;
	if (ret)
		return ret < 0 ? ret : 0;
	ret = sync_whole_coarse(c);
	sync_phase(c, "the dense sample");
	if (ret)
		return ret < 0 ? ret : 0;
	ret = sync_compare_fine(c);
	sync_phase(c, "the fine compare");
	return ret;
}

/* report -- every differing range to the caller */
static void report(struct sync_ctx *c)
{
	if (!c->o->range)
		return;
	for (size_t i = 0; i < c->diff.n; i++)
		c->o->range(c->diff.v[i].off, c->diff.v[i].len,
			    c->o->range_arg);
}

/*
 * live_copy -- a syncing pool a pull may still take: a live writer's copy
 * whose writer is gone holds its last drained image, crash-consistent as
 * a local pool after a crash (docs/ARCHITECTURE.md, "Disk states"): 1;
 * -EBUSY while its writer holds it; 0 for any other syncing pool
 */
static int live_copy(struct rpmemctl_pool *p)
{
	char src[RPMEM_STR_MAX + 1] = "";
	int ret = client_pool_live_copy(p, src, sizeof(src));
	if (ret == 1)
		client_log(p->sess, LOG_INFO,
			   "pool '%s' in region '%s' is the live copy of %s, whose writer is gone: its last drained image (crash-consistent) is pulled",
			   p->name, p->region, src);
	else if (ret == -EBUSY)
		client_pool_seterr(p, "pool '%s' in region '%s' is a live copy that %s writes: stop that writer before pulling it",
				   p->name, p->region, src);
	return ret == 1 || ret == -EBUSY ? ret : 0;
}

/* check_args -- mode, flags, block size and buffer length */
static int check_args(struct rpmemctl_pool *p, const void *local, size_t len,
		      const struct rpmemctl_sync_cfg *o, uint32_t *bs)
{
	struct rpmemctl_session *s = p->sess;
	if (!client_sync_mode_valid(o->mode) ||
	    !client_sync_flags_valid(o->flags)) {
		client_seterr(s, "invalid sync mode %d or flags 0x%x",
			      (int)o->mode, o->flags);
		return -EINVAL;
	}
	*bs = o->block_size ? o->block_size : CLIENT_SYNC_DEFAULT_BS;
	if (!client_sync_bs_valid(*bs)) {
		client_seterr(s, "invalid block size %u: a power of two from "
			      "4 KiB to 64 MiB", *bs);
		return -EINVAL;
	}
	if (!local || len != p->size) {
		client_pool_seterr(p, "the local copy is %zu bytes but pool '%s' in "
			      "region '%s' is %llu bytes", len, p->name,
			      p->region, (unsigned long long)p->size);
		return -EINVAL;
	}
	if (o->mode == RPMEMCTL_SYNC_PULL &&
	    !(o->flags & RPMEMCTL_SYNC_DRY_RUN) &&
	    p->state != RPMEM_POOL_CONSISTENT) {
		int ret = live_copy(p);
		if (ret)
			return ret < 0 ? ret : 0;
		client_pool_seterr(p, "pool '%s' in region '%s' is %s: it holds no "
			      "consistent copy to pull; push to it first or, "
			      "after an interrupted sync, roll it back to its "
			      "previous image (rpmemctl rollback)",
			      p->name, p->region, rpmem_state_str(p->state));
		return -ENODATA;
	}
	return 0;
}

static const char *sync_what(enum rpmemctl_sync_mode mode);

/* sync_prepare -- a usable pool and a configuration the sync accepts */
static int sync_prepare(struct rpmemctl_pool *pool, const void *local,
			size_t len, const struct rpmemctl_sync_cfg *cfg,
			uint32_t *bs)
{
	int ret = client_pool_usable(pool);
	if (ret)
		return ret;
	if (!cfg) {
		client_seterr(pool->sess, "no sync configuration");
		return -EINVAL;
	}
	return check_args(pool, local, len, cfg, bs);
}

/*
 * sync_run -- push, pull, mirror or verify once sync_prepare accepted the
 * arguments; fills *res in any case
 */
static int sync_run(struct rpmemctl_pool *pool, void *local, size_t len,
		    const struct rpmemctl_sync_cfg *cfg, uint32_t bs,
		    struct rpmemctl_sync_result *res)
{
	int ret;
	struct sync_ctx c = {
		.p = pool,
		.s = pool->sess,
		.o = cfg,
		.local = local,
		.size = len,
		.bs = bs,
		.nblocks = (len + bs - 1) / bs,
		.t0 = rpmem_now_ns(),
	};
	c.st.size = len;
	c.st.gen_cmp = RPMEMCTL_GEN_UNKNOWN;
	c.st.block_size = bs;
	c.st.blocks_total = c.nblocks;
	pool->note[0] = '\0';

	int dry = cfg->flags & RPMEMCTL_SYNC_DRY_RUN;
	if (cfg->local_fd >= 0 && !fstat(cfg->local_fd, &c.st0) &&
	    S_ISREG(c.st0.st_mode)) {
		c.watch = 1;
		/* changed between the caller's mapping and now */
		c.st0.st_size = (off_t)len;
		ret = sync_local_check(&c, sync_what(cfg->mode));
		if (ret)
			goto out;
	}
	if ((ret = sync_gen_check(&c)))
		goto out;
	/*
	 * a resync's pass into the live copy the target was: no longer
	 * listed as one (with this session as its writer, UpToDate) from
	 * the first request that may change it
	 */
	if (cfg->resync_pass && pool->state == RPMEM_POOL_SYNCING &&
	    (ret = client_pool_set_syncing(pool, cfg->source, 0)))
		goto out;
	if (cfg->mode == RPMEMCTL_SYNC_MIRROR) {
		ret = sync_mirror(&c);
		goto out;
	}
	if (cfg->mode == RPMEMCTL_SYNC_PUSH && cfg->dirty_log && !dry) {
		ret = sync_push_dirty(&c);
		goto out;
	}
	if ((ret = sync_compare(&c)))
		goto out;
	if (cfg->mode == RPMEMCTL_SYNC_VERIFY || dry) {
		report(&c);
		ret = c.diff.n ? 1 : 0;
	} else if (cfg->mode == RPMEMCTL_SYNC_PUSH) {
		ret = sync_push(&c);
	} else {
		ret = sync_pull(&c);
	}
	/* a comparison of a file that changed meanwhile says nothing */
	if (ret >= 0) {
		int err = sync_local_check(&c, sync_what(cfg->mode));
		if (err)
			ret = err;
	}
	/* the caller's copy durable (and in place) before its history says so */
	if (!ret && cfg->commit && cfg->mode == RPMEMCTL_SYNC_PULL && !dry &&
	    (ret = cfg->commit(cfg->commit_arg)) > 0)
		ret = -EIO;
out:
	ret = sync_gen_done(&c, ret);
	sync_phase(&c, "the end");
	c.st.generation = pool->generation;
	rpmem_strlcpy(c.st.note, pool->note, sizeof(c.st.note));
	c.st.elapsed_ns = rpmem_now_ns() - c.t0;
	*res = c.st;
	free(c.lh);
	free(c.rh);
	free(c.fl);
	free(c.fine_rv);
	free(c.fine_rh);
	free(c.fine_lh);
	free(c.diff.v);
	return ret;
}

/* sync_what -- how a failure's message names the operation of mode */
static const char *sync_what(enum rpmemctl_sync_mode mode)
{
	static const char *const what[] = { "sync", "pull", "verify",
					    "mirror" };
	return mode <= RPMEMCTL_SYNC_MIRROR ? what[mode] : "sync";
}

/*
 * rpmemctl_pool_sync2 -- push, pull, mirror or verify as cfg says (see
 * librpmemctl.h); returns 0, 1 when verify or a dry run found
 * differences, or -errno; res (if not NULL) is filled unless the
 * arguments were refused
 */
RPMEM_EXPORT int rpmemctl_pool_sync2(struct rpmemctl_pool *pool, void *local,
				     size_t len,
				     const struct rpmemctl_sync_cfg *cfg,
				     struct rpmemctl_sync_result *res)
{
	struct rpmemctl_sync_result scratch;
	uint32_t bs;

	client_pool_begin(pool);
	int ret = sync_prepare(pool, local, len, cfg, &bs);
	if (!ret)
		ret = sync_run(pool, local, len, cfg, bs, res ? res : &scratch);
	return client_pool_end(pool, ret, sync_what(cfg ? cfg->mode : 0));
}

/* --- deprecated: LIBRPMEMCTL_1 ------------------------------------------- */

/*
 * The released layouts of struct rpmemctl_sync_opts and
 * struct rpmemctl_sync_stats: programs built against LIBRPMEMCTL_1
 * allocate exactly this much (opts: 48 bytes on LP64, 28 on ILP32).
 * Neither may change.
 */
_Static_assert(sizeof(struct rpmemctl_sync_stats) == 72 &&
		       offsetof(struct rpmemctl_sync_stats, elapsed_ns) == 64,
	       "struct rpmemctl_sync_stats is frozen: LIBRPMEMCTL_1");
_Static_assert(sizeof(struct rpmemctl_sync_opts) ==
		       (sizeof(void *) == 8 ? 48 : 28),
	       "struct rpmemctl_sync_opts is frozen: LIBRPMEMCTL_1");

/*
 * pool_sync -- the LIBRPMEMCTL_1 entry point: rpmemctl_pool_sync2
 * with a configuration made from opts; stats gets the released fields
 * one by one, never a whole struct, so the result may grow
 */
static int pool_sync(struct rpmemctl_pool *pool, void *local, size_t len,
		     const struct rpmemctl_sync_opts *opts,
		     struct rpmemctl_sync_stats *stats)
{
	int ret = client_pool_usable(pool);
	if (ret)
		return ret;
	if (!opts) {
		client_seterr(pool->sess, "no sync options");
		return -EINVAL;
	}
	const struct rpmemctl_sync_cfg cfg = {
		.mode = opts->mode,
		.flags = opts->flags,
		.block_size = opts->block_size,
		.source = opts->source,
		.progress = opts->progress,
		.progress_arg = opts->arg,
		.range = opts->range,
		.range_arg = opts->arg,
		.local_fd = -1,
	};
	uint32_t bs;
	ret = sync_prepare(pool, local, len, &cfg, &bs);
	if (ret)
		return ret; /* as released: stats untouched */
	struct rpmemctl_sync_result res;
	ret = sync_run(pool, local, len, &cfg, bs, &res);
	if (stats) {
		stats->size = res.size;
		stats->block_size = res.block_size;
		stats->blocks_total = res.blocks_total;
		stats->blocks_differ = res.blocks_differ;
		stats->bytes_differ = res.bytes_differ;
		stats->bytes_transferred = res.bytes_transferred;
		stats->data_bytes = res.data_bytes;
		stats->generation = res.generation;
		stats->elapsed_ns = res.elapsed_ns;
	}
	return ret;
}

/* rpmemctl_pool_sync -- pool_sync; a failure's message names the pool */
RPMEM_EXPORT int rpmemctl_pool_sync(struct rpmemctl_pool *pool, void *local,
				    size_t len,
				    const struct rpmemctl_sync_opts *opts,
				    struct rpmemctl_sync_stats *stats)
{
	client_pool_begin(pool);
	int ret = pool_sync(pool, local, len, opts, stats);
	return client_pool_end(pool, ret, sync_what(opts ? opts->mode : 0));
}
