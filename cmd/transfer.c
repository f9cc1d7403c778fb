/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * transfer.c -- rpmemctl: the mirror, push, pull and verify engine: one
 * target, or several in a thread each (--follow: transfer_follow.c; a
 * pull's temporary file: transfer_pull.c; the reports: transfer_report.c)
 */

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "json.h"
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

/* dry_missing -- what a run would do when one side does not exist yet */
static void dry_missing(struct xfer_result *r, struct xfer_cb *cb,
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

/*
 * transfer_one -- a mirror, push, pull or verify to x->target; shared:
 * the local file, opened by the caller (several targets), else NULL
 */
static int transfer_one(struct rpmemctl_ctx *ctx, const struct cmd_xfer *x,
			const struct cmd_local *shared)
{
	struct rpmemctl_session *sess = NULL;
	struct rpmemctl_pool *pool = NULL;
	struct rpmemctl_sync_result *res = NULL;
	struct rpmemctl_sync_cfg *cfg = NULL;
	struct cmd_local local = { .fd = -1 };
	struct xfer_result r = { .x = x, .transport = "" };
	struct xfer_cb cb = { 0 };
	int pull = x->mode == RPMEMCTL_SYNC_PULL;
	struct pull_tmp pt = { .ctx = ctx, .local = &local };
	struct cmd_damaged dmg = { ctx, 0 };
	char hp[CMD_HP_MAX], src[CMD_SOURCE_MAX];
	char a[CMD_BYTES_MAX], b[CMD_BYTES_MAX];
	enum rpmemctl_pool_state state;
	struct cmd_target t;
	uint64_t psize;
	int ret, code;

	code = cmd_parse_target(ctx, x->target, RPMEMCTL_TARGET_NEED_POOL,
				 &t);
	if (code)
		return code;
	cmd_hostport(&t, hp, sizeof(hp));
	cmd_hostport(&t, r.hp, sizeof(r.hp));
	cmd_target_str(&t, r.target, sizeof(r.target));
	r.t = &t;

	/* a missing local file is found before any connection */
	if (shared) {
		local = *shared;
	} else if (!pull) {
		code = cmd_local_open(ctx, x->local, 0, 0, &local);
		if (code)
			return code;
	}
	if (x->follow_ns) {
		code = xfer_follow(ctx, x, &t, &r, &local);
		cmd_local_close(&local, 0);
		return code;
	}

	if (pull && !x->dry_run && !shared) {
		code = xfer_pull_copy(ctx, x, &pt);
		if (code)
			goto err_local;
	}
	code = cmd_connect(ctx, &t, x->transport, &sess);
	if (code)
		goto err_local;
	if (pull && x->force)
		cmd_read_damaged(sess, &dmg);
	code = xfer_open_pool(ctx, sess, &t, hp, &r, local.len, &pool);
	if (code == XFER_SIZES_DIFFER) {
		code = CMD_EXIT_DIFFER; /* reported: there is nothing to compare */
		goto err_session;
	}
	if (code == 1) {
		dry_missing(&r, &cb, local.len);
		code = 0;
		goto report;
	}
	if (code)
		goto err_session;
	psize = rpmemctl_pool_get_size(pool);
	r.transport = rpmemctl_pool_get_transport(pool);
	cmd_dbg(ctx, "pool '%s/%s': %llu bytes, %s, generation %llu, "
		"transport %s", t.region, t.pool, (unsigned long long)psize,
		rpmemctl_pool_state_str(rpmemctl_pool_get_state(pool)),
		(unsigned long long)rpmemctl_pool_get_generation(pool),
		r.transport);

	if (pull) {
		if (x->dry_run && access(x->local, F_OK) && errno == ENOENT) {
			dry_missing(&r, &cb, psize);
			r.st.generation = rpmemctl_pool_get_generation(pool);
			goto report;
		}
		code = x->dry_run ? cmd_local_open(ctx, x->local, 0, 0,
						   &local) :
				    xfer_pull_open(ctx, x, &r, psize, &pt);
		if (code)
			goto err_pool;
		r.created_local = local.created;
		if (local.created)
			cmd_info(ctx, "created '%s' of %s", x->local,
				 rpmemctl_size_format(psize, a, sizeof(a)));
	}

	/* the library compared the sizes of a push or verify */
	if (pull && local.len != psize) {
		cmd_fmt_bytes(local.len, a, sizeof(a));
		cmd_fmt_bytes(psize, b, sizeof(b));
		cmd_err(ctx, "cannot pull %s into '%s': the pool's size is %s, "
			"the file's size is %s; remove the file or pull into a "
			"new one", r.target, x->local, b, a);
		code = CMD_EXIT_LOCAL;
		goto err_pool;
	}

	/* a real pull of such a pool is refused by the library */
	state = rpmemctl_pool_get_state(pool);
	if (((pull && x->dry_run) || x->mode == RPMEMCTL_SYNC_VERIFY) &&
	    state != RPMEMCTL_POOL_CONSISTENT)
		cmd_warn(ctx, "pool %s is %s%s", r.target,
			 rpmemctl_pool_state_str(state),
			 state == RPMEMCTL_POOL_SYNCING ?
			 " (a sync was interrupted); its contents may be "
			 "inconsistent" : "");

	if (!x->dry_run && x->mode != RPMEMCTL_SYNC_VERIFY) {
		ret = rpmemctl_pool_attach(pool, local.addr, local.len);
		if (ret)
			cmd_dbg(ctx, "attaching the local mapping: %s",
				rpmemctl_pool_errmsg(pool));
	}

	code = xfer_dirty_open(ctx, x, &local, &r, &cb);
	if (code)
		goto err_pool;
	ret = xfer_make_cfg(ctx, x, cmd_source(x->local, src, sizeof(src)),
			    local.fd, &cb, &cfg);
	if (!ret && pt.used)
		ret = rpmemctl_sync_cfg_set_commit(cfg, xfer_pull_commit, &pt);
	if (!ret)
		ret = rpmemctl_sync_result_new(&res);
	if (ret) {
		cmd_err(ctx, "cannot set up the %s: %s", xfer_command_str(x),
			rpmemctl_strerror(ret));
		rpmemctl_sync_cfg_delete(&cfg);
		code = CMD_EXIT_INTERNAL;
		goto err_pool;
	}
	cmd_progress_init(&cb.prog, ctx, pull ? "pull" : xfer_mode_str(x->mode));
	ret = rpmemctl_pool_sync2(pool, local.addr, local.len, cfg, res);
	cmd_progress_end(&cb.prog);
	xfer_stats_get(&r.st, res);
	xfer_dirty_get(ctx, &r, cb.log, res);
	rpmemctl_sync_result_delete(&res);
	rpmemctl_sync_cfg_delete(&cfg);
	if (ret < 0 && pt.code) {
		code = pt.code; /* the rename or its persist: said */
		goto err_pool;
	}
	if (ret < 0) {
		if (pull)
			code = cmd_remote_err(ctx, sess, ret, NULL,
					      "cannot pull %s into '%s'",
					      r.target, x->local);
		else
			code = cmd_remote_err(ctx, sess, ret, NULL,
					      "cannot %s '%s' %s %s",
					      x->mode == RPMEMCTL_SYNC_VERIFY ?
					      "compare" : x->mode ==
					      RPMEMCTL_SYNC_MIRROR ? "mirror" :
					      "sync", x->local,
					      x->mode == RPMEMCTL_SYNC_VERIFY ?
					      "with" : "to", r.target);
		goto err_pool;
	}
	if (cb.ranges.oom) {
		cmd_err(ctx, "out of memory collecting differing ranges");
		code = CMD_EXIT_INTERNAL;
		goto err_pool;
	}
	if (x->mode == RPMEMCTL_SYNC_VERIFY || x->dry_run)
		r.identical = ret == 0 && r.st.blocks_differ == 0;
	else
		r.identical = 1;
	if (x->mode == RPMEMCTL_SYNC_VERIFY && !r.identical)
		code = CMD_EXIT_DIFFER;

	/* a pull through a temporary file was persisted by its commit */
	if (pull && !x->dry_run && !pt.used) {
		code = cmd_local_persist(ctx, &local);
		if (code)
			goto err_pool;
	}

report:
	if (ctx->json)
		xfer_report_json(&r, &cb.ranges);
	else
		xfer_report_human(ctx, &r, &cb.ranges);
	if (pool) {
		ret = rpmemctl_pool_close(&pool);
		if (ret)
			cmd_dbg(ctx, "closing the pool: %s",
				rpmemctl_session_errmsg(sess));
	}
	rpmemctl_session_close(&sess);
	if (!shared)
		cmd_local_close(&local, 0);
	rpmemctl_dirtylog_close(&cb.log);
	free(cb.ranges.v);
	return code;

err_pool:
	rpmemctl_pool_close(&pool);
err_session:
	rpmemctl_session_close(&sess);
err_local:
	/* a file created for a pull that failed is not left half-written */
	if (!shared)
		cmd_local_close(&local, !pt.used);
	if (pt.used)
		cmd_tmp_abort(&pt.tmp);
	rpmemctl_dirtylog_close(&cb.log);
	free(cb.ranges.v);
	return code;
}

/* one target of several, run in a thread of its own */
struct xfer_job {
	pthread_t tid;
	struct rpmemctl_ctx *ctx;
	struct cmd_xfer x; /* x.target: this one's */
	const struct cmd_local *local;
	int started; /* in a thread of its own: to be joined */
	int code;
};

/* job_run -- the thread: one target's transfer */
static void *job_run(void *arg)
{
	struct xfer_job *j = arg;
	j->code = transfer_one(j->ctx, &j->x, j->local);
	return NULL;
}

/*
 * transfer_all -- x->ntargets transfers in parallel, one thread each,
 * from the local file opened once; the highest exit code
 */
static int transfer_all(struct rpmemctl_ctx *ctx, const struct cmd_xfer *x)
{
	struct cmd_local local = { .fd = -1 };
	struct rpmemctl_ctx tctx = *ctx;
	struct rpmemctl_local_hashes *hashes = NULL;
	struct cmd_target t;
	unsigned i, n = x->ntargets;
	int code = 0;

	/* every target is valid before anything moves */
	for (i = 0; i < n; i++)
		if ((code = cmd_parse_target(ctx, x->targets[i],
					     RPMEMCTL_TARGET_NEED_POOL, &t)))
			return code;
	code = cmd_local_open(ctx, x->local, 0, 0, &local);
	if (code)
		return code;
	struct xfer_job *jobs = calloc(n, sizeof(*jobs));
	/* the local file hashed once for all (no sharing if it fails) */
	if (rpmemctl_local_hashes_new(&hashes))
		hashes = NULL;
	if (!jobs) {
		rpmemctl_local_hashes_delete(&hashes);
		cmd_local_close(&local, 0);
		cmd_err(ctx, "out of memory");
		return CMD_EXIT_INTERNAL;
	}
	tctx.no_progress = 1;
	for (i = 0; i < n; i++) {
		jobs[i] = (struct xfer_job){ .ctx = &tctx, .x = *x,
					     .local = &local };
		jobs[i].x.target = x->targets[i];
		jobs[i].x.log_index = i;
		jobs[i].x.hashes = hashes;
		jobs[i].started = !pthread_create(&jobs[i].tid, NULL, job_run,
						  &jobs[i]);
		if (!jobs[i].started)
			job_run(&jobs[i]); /* no thread: in this one */
	}
	code = 0;
	for (i = 0; i < n; i++) {
		if (jobs[i].started)
			pthread_join(jobs[i].tid, NULL);
		code = jobs[i].code > code ? jobs[i].code : code;
	}
	cmd_dbg(ctx, "the local file was hashed %u time(s) for %u targets",
		rpmemctl_local_hashes_computed(hashes), n);
	free(jobs);
	rpmemctl_local_hashes_delete(&hashes);
	cmd_local_close(&local, 0);
	return code;
}

/* cmd_transfer -- run a mirror, push, pull or verify; returns an exit code */
int cmd_transfer(struct rpmemctl_ctx *ctx, const struct cmd_xfer *x)
{
	if (x->ntargets > 1)
		return transfer_all(ctx, x);
	return transfer_one(ctx, x, NULL);
}

/* cmd_xfer_targets -- LOCAL TARGET... of argv into x */
int cmd_xfer_targets(struct rpmemctl_ctx *ctx, int argc, char **argv,
		     struct cmd_xfer *x, const char *why)
{
	int code = cmd_check_args(ctx, argc, argv, 2, argc);
	if (code)
		return code;
	x->local = argv[optind];
	x->target = argv[optind + 1];
	x->targets = &argv[optind + 1];
	x->ntargets = (unsigned)(argc - optind - 1);
	if (x->ntargets > 1 && why)
		return cmd_usage_error(ctx, "%s takes one target (%u given)",
				       why, x->ntargets);
	if (x->ntargets > 64)
		return cmd_usage_error(ctx, "at most 64 targets (%u given)",
				       x->ntargets);
	return 0;
}
