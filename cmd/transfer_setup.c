/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * transfer_setup.c -- rpmemctl: the parts of one transfer that the
 * one-target driver (transfer.c) and --follow (transfer_follow.c) share:
 * the pool opened, the sync configuration and its callbacks, the dirty
 * log, the statistics
 */

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "transfer.h"

/* range_cb -- an rpmemctl_range_fn collecting into struct ranges */
static void range_cb(uint64_t off, uint64_t len, void *arg)
{
	struct ranges *r = arg;

	if (r->n == r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 64;
		void *v = realloc(r->v, cap * sizeof(*r->v));

		if (!v) {
			r->oom = 1;
			return;
		}
		r->v = v;
		r->cap = cap;
	}
	r->v[r->n].off = off;
	r->v[r->n].len = len;
	r->n++;
}

static void xfer_progress(uint64_t done, uint64_t total, void *arg)
{
	cmd_progress_cb(done, total, &((struct xfer_cb *)arg)->prog);
}

static void xfer_range(uint64_t off, uint64_t len, void *arg)
{
	range_cb(off, len, &((struct xfer_cb *)arg)->ranges);
}

/* xfer_dry_missing -- what a run would do when one side does not exist yet */
void xfer_dry_missing(struct xfer_result *r, struct xfer_cb *cb,
		      uint64_t size)
{
	uint64_t bs = r->x->block_size ? r->x->block_size :
					  RPMEMCTL_BLOCK_SIZE_DEFAULT;

	r->missing = 1;
	r->identical = 0;
	r->st.size = size;
	r->st.block_size = bs;
	r->st.blocks_total = (size + bs - 1) / bs;
	r->st.blocks_differ = r->st.blocks_total;
	r->st.bytes_differ = size;
	range_cb(0, size, &cb->ranges);
}

/*
 * size_refused -- the pool exists with another size than the local file:
 * for verify the copies differ (exit 1, both sizes said); a push is
 * refused
 */
static int size_refused(struct rpmemctl_ctx *ctx, const struct xfer_result *r,
			uint64_t local_len, uint64_t psize)
{
	const struct cmd_xfer *x = r->x;
	char a[CMD_BYTES_MAX], b[CMD_BYTES_MAX];

	cmd_fmt_bytes(local_len, a, sizeof(a));
	cmd_fmt_bytes(psize, b, sizeof(b));
	if (x->mode == RPMEMCTL_SYNC_VERIFY) {
		struct xfer_result d = *r;
		struct ranges none = { 0 };
		d.st.size = local_len;
		d.pool_size = psize;
		d.identical = 0;
		if (ctx->json) {
			xfer_report_json(&d, &none);
			return XFER_SIZES_DIFFER;
		}
		pthread_mutex_lock(&xfer_report_lock);
		printf("differs in size: '%s' is %s, the pool %s\n", x->local,
		       a, b);
		cmd_info(ctx, "'%s' and %s differ: the file's size is %s, the pool's size is %s",
			 x->local, r->target, a, b);
		pthread_mutex_unlock(&xfer_report_lock);
		return XFER_SIZES_DIFFER;
	}
	cmd_err(ctx, "pool %s is %s but '%s' is %s; remove the pool or choose "
		"another name", r->target, b, x->local, a);
	return CMD_EXIT_REFUSED;
}

/*
 * xfer_open_pool -- open the remote pool (the library's open-or-create
 * policy): a missing one is created for a push; but for a pull, the pool
 * must be as large as the local file. Returns 1 for a dry run of a push
 * to a missing pool, else an exit code.
 */
int xfer_open_pool(struct rpmemctl_ctx *ctx, struct rpmemctl_session *sess,
		   const struct cmd_target *t, const char *hp,
		   struct xfer_result *r, uint64_t local_len,
		   struct rpmemctl_pool **pool)
{
	const struct cmd_xfer *x = r->x;
	int push = x->mode == RPMEMCTL_SYNC_PUSH ||
		   x->mode == RPMEMCTL_SYNC_MIRROR;
	unsigned flags = push && !x->dry_run ? RPMEMCTL_OPEN_RDWR :
					       RPMEMCTL_OPEN_RDONLY;
	uint64_t size = x->mode == RPMEMCTL_SYNC_PULL ? 0 : local_len;
	struct rpmemctl_open_info info;
	char sz[CMD_NUM_MAX];
	int ret;

	if (push && !x->dry_run && !x->no_create)
		flags |= RPMEMCTL_OPEN_CREATE;
	ret = rpmemctl_pool_open_or_create(sess, t->region, t->pool, size,
					   flags, pool, &info);
	if (info.created) {
		r->created_remote = 1;
		cmd_info(ctx, "created pool '%s/%s' of %s on %s", t->region,
			 t->pool,
			 rpmemctl_size_format(local_len, sz, sizeof(sz)), hp);
	}
	if (!ret)
		return 0;
	if (ret == -ENOENT && x->dry_run && push)
		return 1; /* report what a real run would do */
	if (ret == -EINVAL && info.size && info.size != size)
		return size_refused(ctx, r, local_len, info.size);
	if (info.create_failed)
		return cmd_remote_err(ctx, sess, ret, NULL,
				      "cannot create pool '%s/%s' on %s",
				      t->region, t->pool, hp);
	if (ret == -ENOENT && push && x->no_create)
		return cmd_remote_err(ctx, sess, ret,
			"create it with 'rpmemctl create' or drop --no-create",
			"cannot open pool '%s/%s' on %s", t->region, t->pool,
			hp);
	return cmd_remote_err(ctx, sess, ret, NULL,
			      "cannot open pool '%s/%s' on %s", t->region,
			      t->pool, hp);
}

/* xfer_stats_get -- copy the library's result into the report's counters */
void xfer_stats_get(struct xfer_stats *st,
		    const struct rpmemctl_sync_result *res)
{
	st->size = rpmemctl_sync_result_get_size(res);
	st->block_size = rpmemctl_sync_result_get_block_size(res);
	st->blocks_total = rpmemctl_sync_result_get_blocks_total(res);
	st->blocks_compared = rpmemctl_sync_result_get_blocks_compared(res);
	st->blocks_differ = rpmemctl_sync_result_get_blocks_differ(res);
	st->bytes_differ = rpmemctl_sync_result_get_bytes_differ(res);
	st->bytes_transferred =
		rpmemctl_sync_result_get_bytes_transferred(res);
	st->data_bytes = rpmemctl_sync_result_get_data_bytes(res);
	st->generation = rpmemctl_sync_result_get_generation(res);
	st->elapsed_ns = rpmemctl_sync_result_get_elapsed_ns(res);
}

/*
 * dirty_say -- why the dirty log was not used, if so: one line on stderr
 * (with --json, its dirty_fallback says it)
 */
static void dirty_say(struct rpmemctl_ctx *ctx, const struct xfer_result *r)
{
	if (r->dirty_fallback[0] && !ctx->json)
		cmd_warn(ctx, "dirty log '%s' not used: %s; compared every "
			 "block", r->log_path, r->dirty_fallback);
}

/*
 * note_get -- what the target did beyond the sync (versions pruned for
 * space): a warning line each on stderr, with --json too (and its
 * warnings)
 */
static void note_get(struct rpmemctl_ctx *ctx, struct xfer_result *r,
		     const struct rpmemctl_sync_result *res)
{
	snprintf(r->note, sizeof(r->note), "%s",
		 rpmemctl_sync_result_get_note(res));
	for (const char *l = r->note; *l;) {
		char line[sizeof(r->note)];
		size_t n = strcspn(l, "\n");
		snprintf(line, sizeof(line), "%.*s", (int)n, l);
		cmd_warn(ctx, "%s: the target: %s", r->target, cmd_text(line));
		l += n + (l[n] == '\n');
	}
}

/* xfer_dirty_get -- what the push did with its dirty log (log), said once */
void xfer_dirty_get(struct rpmemctl_ctx *ctx, struct xfer_result *r,
		    const struct rpmemctl_dirtylog *log,
		    const struct rpmemctl_sync_result *res)
{
	note_get(ctx, r, res);
	r->gen_cmp = rpmemctl_sync_result_get_gen_cmp(res);
	if (!r->log_path[0] || !log)
		return; /* not opened: said when it was not */
	r->dirty_only = rpmemctl_sync_result_get_dirty_only(res);
	snprintf(r->dirty_fallback, sizeof(r->dirty_fallback), "%s",
		 rpmemctl_sync_result_get_dirty_fallback(res));
	dirty_say(ctx, r);
}

/*
 * xfer_dirty_open -- a push's dirty log: --dirty-log FILE, else
 * LOCAL.rpmemlog if it exists; 0 (also when there is none) or an exit code
 */
int xfer_dirty_open(struct rpmemctl_ctx *ctx, const struct cmd_xfer *x,
		    const struct cmd_local *local, struct xfer_result *r,
		    struct xfer_cb *cb)
{
	int ret;

	if (x->mode != RPMEMCTL_SYNC_PUSH || x->dry_run || x->no_dirty_log)
		return 0;
	if (x->dirty_log) {
		snprintf(r->log_path, sizeof(r->log_path), "%s", x->dirty_log);
	} else {
		if (x->log_index)
			snprintf(r->log_path, sizeof(r->log_path),
				 "%s.rpmemlog.%u", x->local, x->log_index);
		else
			snprintf(r->log_path, sizeof(r->log_path),
				 "%s.rpmemlog", x->local);
		if (faccessat(AT_FDCWD, r->log_path, F_OK,
			      AT_SYMLINK_NOFOLLOW)) {
			r->log_path[0] = '\0';
			return 0;
		}
	}
	ret = rpmemctl_dirtylog_open_pool(r->log_path, local->fd, local->len,
					  0, 0, &cb->log);
	if (ret == -ELOOP || ret == -EPERM || ret == -EINVAL) {
		/* not trusted or not usable: the push compares everything */
		const char *why = rpmemctl_strerror(ret);
		size_t n = strlen(r->log_path);
		/* "dirty log 'PATH' is ...": the reason only */
		if (!strncmp(why, "dirty log '", 11) &&
		    !strncmp(why + 11, r->log_path, n) && why[11 + n] == '\'')
			why += 13 + n;
		snprintf(r->dirty_fallback, sizeof(r->dirty_fallback),
			 "it %s", why);
		dirty_say(ctx, r);
		return 0;
	}
	if (ret) {
		cmd_err(ctx, "cannot use the dirty log: %s",
			rpmemctl_strerror(ret));
		return CMD_EXIT_LOCAL;
	}
	return 0;
}

/*
 * history_used -- LOCAL's generation history (LOCAL.rpmemgen) is
 * compared with the target's and recorded, for every target, unless
 * --no-history
 */
static int history_used(const struct cmd_xfer *x)
{
	return !x->no_history && x->mode != RPMEMCTL_SYNC_VERIFY;
}

/*
 * xfer_make_cfg -- the library's sync configuration for x, watching the
 * local file local_fd for changes; 0 or -errno
 */
int xfer_make_cfg(struct rpmemctl_ctx *ctx, const struct cmd_xfer *x,
		  const char *source, int local_fd, struct xfer_cb *cb,
		  struct rpmemctl_sync_cfg **out)
{
	struct rpmemctl_sync_cfg *cfg;
	int ret;

	ret = rpmemctl_sync_cfg_new(&cfg);
	if (ret)
		return ret;
	ret = rpmemctl_sync_cfg_set_mode(cfg, x->mode);
	if (!ret)
		ret = rpmemctl_sync_cfg_set_flags(
			cfg, (x->dry_run ? RPMEMCTL_SYNC_DRY_RUN : 0) |
				     (x->full ? RPMEMCTL_SYNC_FULL : 0) |
				     x->discard);
	if (!ret)
		ret = rpmemctl_sync_cfg_set_block_size(cfg, x->block_size);
	if (!ret)
		ret = rpmemctl_sync_cfg_set_bwlimit(cfg, x->bwlimit);
	if (!ret)
		ret = rpmemctl_sync_cfg_set_source(cfg, source);
	if (!ret)
		ret = rpmemctl_sync_cfg_set_progress(cfg, xfer_progress, cb);
	if (!ret)
		ret = rpmemctl_sync_cfg_set_range(cfg, xfer_range, cb);
	if (!ret)
		ret = rpmemctl_sync_cfg_set_local_fd(cfg, local_fd);
	if (!ret && cb->log)
		ret = rpmemctl_sync_cfg_set_dirty_log(cfg, cb->log);
	if (!ret && x->hashes)
		ret = rpmemctl_sync_cfg_set_local_hashes(cfg, x->hashes);
	if (!ret && history_used(x))
		ret = rpmemctl_sync_cfg_set_history(cfg, x->local);
	else if (!ret && x->mode != RPMEMCTL_SYNC_VERIFY)
		cmd_warn(ctx, "--no-history: '%s' is synced without comparing or recording generation histories: newer writes on the target are not noticed",
			 x->local);
	if (ret) {
		rpmemctl_sync_cfg_delete(&cfg);
		return ret;
	}
	*out = cfg;
	return 0;
}
