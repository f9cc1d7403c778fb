/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * transfer.c -- rpmemctl: the mirror, push, pull and verify engine: one
 * target, or several in a thread each (a transfer's parts:
 * transfer_setup.c; --follow: transfer_follow.c; a pull's temporary file:
 * transfer_pull.c; the reports: transfer_report.c)
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
		xfer_dry_missing(&r, &cb, local.len);
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
			xfer_dry_missing(&r, &cb, psize);
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
