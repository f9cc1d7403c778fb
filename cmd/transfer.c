/* SPDX-License-Identifier: BSD-3-Clause */
/* transfer.c -- rpmemctl: the mirror, push, pull and verify engine */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "json.h"

/* the differing ranges as the library reports them (sorted and merged) */
struct ranges {
	struct { uint64_t off, len; } *v;
	size_t n, cap;
	int oom;
};

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

/* the library's callbacks share one arg */
struct xfer_cb {
	struct cmd_progress prog;
	struct ranges ranges;
	struct rpmemctl_dirtylog *log; /* a push's dirty log, or NULL */
};

static void xfer_progress(uint64_t done, uint64_t total, void *arg)
{
	cmd_progress_cb(done, total, &((struct xfer_cb *)arg)->prog);
}

static void xfer_range(uint64_t off, uint64_t len, void *arg)
{
	range_cb(off, len, &((struct xfer_cb *)arg)->ranges);
}

/* the library's counters of one run, as the report prints them */
struct xfer_stats {
	uint64_t size;
	uint64_t block_size;
	uint64_t blocks_total;
	uint64_t blocks_compared;
	uint64_t blocks_differ;
	uint64_t bytes_differ;
	uint64_t bytes_transferred;
	uint64_t data_bytes;
	uint64_t generation;
	uint64_t elapsed_ns;
};

/* everything the report needs */
struct xfer_result {
	const struct cmd_xfer *x;
	const struct cmd_target *t;
	char hp[300];     /* the daemon, HOST:PORT */
	char target[700]; /* HOST:PORT/REGION/POOL, for messages */
	const char *transport;
	struct xfer_stats st;
	int identical;
	uint64_t pool_size; /* differs from st.size only when verify says so */
	int created_remote;
	int created_local;
	int missing; /* dry run: the pool or the local file does not exist */
	uint64_t round; /* --follow: the round's number (1, 2, ...), else 0 */
	int reconnected; /* --follow: this round opened a new session */
	char log_path[1040]; /* the dirty log used, "" if none */
	int dirty_only;	     /* it stood in for the comparison */
	int gen_cmp; /* how the generation histories compared (unknown: not) */
	char dirty_fallback[200]; /* why it did not */
	char note[1040]; /* what the target did beyond it, a line each */
};

static const char *mode_str(enum rpmemctl_sync_mode m)
{
	switch (m) {
	case RPMEMCTL_SYNC_PUSH:
		return "push";
	case RPMEMCTL_SYNC_PULL:
		return "pull";
	case RPMEMCTL_SYNC_VERIFY:
		return "verify";
	case RPMEMCTL_SYNC_MIRROR:
		return "mirror";
	}
	return "?";
}

static const char *command_str(const struct cmd_xfer *x)
{
	if (x->mode == RPMEMCTL_SYNC_MIRROR)
		return "mirror";
	if (x->mode == RPMEMCTL_SYNC_VERIFY)
		return "verify";
	return "sync";
}

static double elapsed_s(const struct xfer_stats *st)
{
	return (double)st->elapsed_ns / 1e9;
}

static double mib_per_s(const struct xfer_stats *st)
{
	double s = elapsed_s(st);

	return s > 0 ? (double)st->size / (1024.0 * 1024.0) / s : 0;
}

/* several targets: one report at a time, each whole */
static pthread_mutex_t report_lock = PTHREAD_MUTEX_INITIALIZER;

/* report_json -- the one JSON object of mirror, sync and verify */
static void report_json(const struct xfer_result *r, const struct ranges *rg)
{
	const struct cmd_xfer *x = r->x;
	struct json j;
	size_t i;

	pthread_mutex_lock(&report_lock);
	json_begin(&j, stdout, command_str(x), r->hp);
	json_str(&j, "region", r->t->region);
	json_str(&j, "pool", r->t->pool);
	json_str(&j, "local", x->local);
	json_str(&j, "operation", mode_str(x->mode));
	json_bool(&j, "dry_run", x->dry_run);
	json_str(&j, "transport", r->transport);
	json_u64(&j, "local_size", r->st.size);
	json_u64(&j, "pool_size", r->pool_size ? r->pool_size : r->st.size);
	json_u64(&j, "block_size", r->st.block_size);
	json_u64(&j, "blocks_total", r->st.blocks_total);
	json_u64(&j, "blocks_compared", r->st.blocks_compared);
	json_u64(&j, "blocks_changed", r->st.blocks_differ);
	json_u64(&j, "bytes_changed", r->st.bytes_differ);
	json_u64(&j, "bytes_transferred", r->st.bytes_transferred);
	json_u64(&j, "data_bytes", r->st.data_bytes);
	json_u64(&j, "generation", r->st.generation);
	json_double(&j, "elapsed_s", elapsed_s(&r->st));
	json_double(&j, "bw_mib_s", mib_per_s(&r->st));
	json_bool(&j, "created", r->created_remote);
	json_bool(&j, "local_created", r->created_local);
	json_bool(&j, "identical", r->identical);
	if (r->log_path[0]) {
		json_str(&j, "dirty_log", r->log_path);
		json_bool(&j, "dirty_only", r->dirty_only);
		json_str(&j, "dirty_fallback", r->dirty_fallback);
	}
	if (r->gen_cmp != RPMEMCTL_GEN_UNKNOWN)
		json_str(&j, "history", rpmemctl_gen_cmp_str(r->gen_cmp));
	if (r->round) {
		json_u64(&j, "round", r->round);
		json_bool(&j, "reconnected", r->reconnected);
	}
	json_arr_begin(&j, "warnings");
	for (const char *l = r->note; *l;) {
		char line[sizeof(r->note)];
		size_t n = strcspn(l, "\n");
		snprintf(line, sizeof(line), "%.*s", (int)n, l);
		json_str(&j, NULL, line);
		l += n + (l[n] == '\n');
	}
	json_arr_end(&j);
	if (x->mode == RPMEMCTL_SYNC_VERIFY || x->dry_run) {
		json_arr_begin(&j, "ranges");
		for (i = 0; i < rg->n; i++) {
			json_obj_begin(&j, NULL);
			json_u64(&j, "offset", rg->v[i].off);
			json_u64(&j, "length", rg->v[i].len);
			json_obj_end(&j);
		}
		json_arr_end(&j);
	}
	json_end(&j);
	fflush(stdout);
	pthread_mutex_unlock(&report_lock);
}

static void report_human_locked(struct rpmemctl_ctx *ctx,
				const struct xfer_result *r,
				const struct ranges *rg);

/* report_human -- ranges (always) and a summary line (informational) */
static void report_human(struct rpmemctl_ctx *ctx,
			 const struct xfer_result *r, const struct ranges *rg)
{
	pthread_mutex_lock(&report_lock);
	report_human_locked(ctx, r, rg);
	fflush(stdout);
	pthread_mutex_unlock(&report_lock);
}

/* report_human_locked -- report_human with report_lock held */
static void report_human_locked(struct rpmemctl_ctx *ctx,
				const struct xfer_result *r,
				const struct ranges *rg)
{
	const struct cmd_xfer *x = r->x;
	const struct xfer_stats *st = &r->st;
	char a[32], b[32], c[32];
	size_t i;

	if (x->mode == RPMEMCTL_SYNC_VERIFY || x->dry_run)
		for (i = 0; i < rg->n; i++)
			printf("differs at 0x%" PRIx64 " length %" PRIu64 "\n",
			       rg->v[i].off, rg->v[i].len);

	rpmemctl_size_format(st->size, a, sizeof(a));
	rpmemctl_size_format(st->data_bytes, b, sizeof(b));
	rpmemctl_size_format(st->bytes_transferred, c, sizeof(c));

	if (x->mode == RPMEMCTL_SYNC_VERIFY) {
		if (r->identical)
			cmd_info(ctx,
				 "'%s' and %s are identical (%s, %" PRIu64
				 " blocks, generation %" PRIu64 ")",
				 x->local, r->target, a, st->blocks_total,
				 st->generation);
		else
			cmd_info(ctx,
				 "'%s' and %s differ: %zu range(s), %" PRIu64
				 " of %" PRIu64 " blocks",
				 x->local, r->target, rg->n, st->blocks_differ,
				 st->blocks_total);
		return;
	}
	if (x->dry_run) {
		if (r->missing)
			cmd_info(ctx, "dry run: %s%s%s does not exist; a %s "
				 "would create it and copy all %s",
				 x->mode == RPMEMCTL_SYNC_PULL ? "'" : "",
				 x->mode == RPMEMCTL_SYNC_PULL ?
				 x->local : r->target,
				 x->mode == RPMEMCTL_SYNC_PULL ? "'" : "",
				 x->mode == RPMEMCTL_SYNC_PULL ? "pull" :
								 "sync",
				 a);
		else if (r->identical)
			cmd_info(ctx, "dry run: '%s' and %s are identical; "
				 "nothing would move", x->local, r->target);
		else
			cmd_info(ctx, "dry run: would %s %" PRIu64 " of %"
				 PRIu64 " blocks (%s changed) %s %s",
				 x->mode == RPMEMCTL_SYNC_PULL ?
				 "fetch" : "send", st->blocks_differ,
				 st->blocks_total,
				 rpmemctl_size_format(st->bytes_differ, b,
						      sizeof(b)),
				 x->mode == RPMEMCTL_SYNC_PULL ? "from" : "to",
				 r->target);
		return;
	}
	switch (x->mode) {
	case RPMEMCTL_SYNC_MIRROR:
		cmd_info(ctx, "mirrored '%s' to %s: %s in %.2f s (%.0f MiB/s), "
			 "generation %" PRIu64 ", transport %s",
			 x->local, r->target, a, elapsed_s(st), mib_per_s(st),
			 st->generation, r->transport);
		break;
	case RPMEMCTL_SYNC_PUSH:
		if (st->blocks_compared && st->blocks_compared <
		    st->blocks_total && !r->dirty_only)
			cmd_info(ctx, "synced '%s' to %s: a sample of %" PRIu64
				 " blocks showed most of them changed, so %"
				 PRIu64 " of %" PRIu64 " blocks were sent "
				 "whole, %s (%s in all) in %.2f s, generation %"
				 PRIu64, x->local, r->target,
				 st->blocks_compared, st->blocks_differ,
				 st->blocks_total, b, c, elapsed_s(st),
				 st->generation);
		else
			cmd_info(ctx, "synced '%s' to %s: %" PRIu64 " of %"
				 PRIu64 " blocks differed, sent %s (%s in "
				 "all) in %.2f s, generation %" PRIu64,
				 x->local, r->target, st->blocks_differ,
				 st->blocks_total, b, c, elapsed_s(st),
				 st->generation);
		break;
	case RPMEMCTL_SYNC_PULL:
		cmd_info(ctx, "pulled %s into '%s': %" PRIu64 " of %" PRIu64
			 " blocks differed, fetched %s (%s in all) in %.2f s, "
			 "generation %" PRIu64,
			 r->target, x->local, st->blocks_differ,
			 st->blocks_total, b, c, elapsed_s(st),
			 st->generation);
		break;
	default:
		break;
	}
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

/* open_pool's answer for a verify that found the sizes different */
#define XFER_SIZES_DIFFER 0x100

/*
 * size_refused -- the pool exists with another size than the local file:
 * for verify the copies differ (exit 1, both sizes said); a push is
 * refused
 */
static int size_refused(struct rpmemctl_ctx *ctx, const struct xfer_result *r,
			uint64_t local_len, uint64_t psize)
{
	const struct cmd_xfer *x = r->x;
	char a[64], b[64];

	cmd_fmt_bytes(local_len, a, sizeof(a));
	cmd_fmt_bytes(psize, b, sizeof(b));
	if (x->mode == RPMEMCTL_SYNC_VERIFY) {
		struct xfer_result d = *r;
		struct ranges none = { 0 };
		d.st.size = local_len;
		d.pool_size = psize;
		d.identical = 0;
		if (ctx->json) {
			report_json(&d, &none);
			return XFER_SIZES_DIFFER;
		}
		pthread_mutex_lock(&report_lock);
		printf("differs in size: '%s' is %s, the pool %s\n", x->local,
		       a, b);
		cmd_info(ctx, "'%s' and %s differ: the file's size is %s, the pool's size is %s",
			 x->local, r->target, a, b);
		pthread_mutex_unlock(&report_lock);
		return XFER_SIZES_DIFFER;
	}
	cmd_err(ctx, "pool %s is %s but '%s' is %s; remove the pool or choose "
		"another name", r->target, b, x->local, a);
	return CMD_EXIT_REFUSED;
}

/*
 * open_pool -- open the remote pool (the library's open-or-create policy):
 * a missing one is created for a push; but for a pull, the pool must be
 * as large as the local file. Returns 1 for a dry run of a push to a
 * missing pool, else an exit code.
 */
static int open_pool(struct rpmemctl_ctx *ctx, struct rpmemctl_session *sess,
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
	char sz[32];
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

/* stats_get -- copy the library's result into the report's counters */
static void stats_get(struct xfer_stats *st,
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

/* dirty_get -- what the push did with its dirty log (log), said once */
static void dirty_get(struct rpmemctl_ctx *ctx, struct xfer_result *r,
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
 * dirty_open -- a push's dirty log: --dirty-log FILE, else LOCAL.rpmemlog
 * if it exists; 0 (also when there is none) or an exit code
 */
static int dirty_open(struct rpmemctl_ctx *ctx, const struct cmd_xfer *x,
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
 * make_cfg -- the library's sync configuration for x, watching the local
 * file local_fd for changes; 0 or -errno
 */
static int make_cfg(struct rpmemctl_ctx *ctx, const struct cmd_xfer *x,
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

/* --- sync --follow -------------------------------------------------------- */

/* set by SIGTERM and SIGINT while following: stop after this round */
static volatile sig_atomic_t follow_stop;

/* follow_signal -- the handler: only note that we were asked to stop */
static void follow_signal(int sig)
{
	(void)sig;
	follow_stop = 1;
}

/*
 * follow_signals -- catch SIGTERM and SIGINT, blocked except while waiting
 * between rounds (a round is never interrupted); *wait_mask gets the mask
 * to wait with, *old the caller's
 */
static int follow_signals(sigset_t *old, sigset_t *wait_mask)
{
	struct sigaction sa = { .sa_handler = follow_signal };
	sigset_t block;

	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGINT);
	if (sigprocmask(SIG_BLOCK, &block, old))
		return -errno;
	*wait_mask = *old;
	sigdelset(wait_mask, SIGTERM);
	sigdelset(wait_mask, SIGINT);
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGTERM, &sa, NULL) || sigaction(SIGINT, &sa, NULL))
		return -errno;
	return 0;
}

/* follow_wait -- sleep ns unless (or until) a stop signal arrives */
static void follow_wait(uint64_t ns, const sigset_t *wait_mask)
{
	uint64_t end = cmd_now_ns() + ns;

	while (!follow_stop) {
		uint64_t now = cmd_now_ns();
		struct timespec ts;

		if (now >= end)
			return;
		ts.tv_sec = (time_t)((end - now) / 1000000000ull);
		ts.tv_nsec = (long)((end - now) % 1000000000ull);
		/* the signals are unblocked only inside ppoll: no lost wakeup */
		ppoll(NULL, 0, &ts, wait_mask);
	}
}

/*
 * follow_state -- what the loop keeps between rounds: a replication link
 * (librpmemctl's rpmemctl_link_*) over the local mapping, under the
 * degrade policy with no automatic retry: each round's push reconnects
 * a link that lost its target
 */
struct follow {
	struct rpmemctl_ctx *ctx;
	const struct cmd_xfer *x;
	const struct cmd_target *t;
	struct xfer_result *r;
	struct cmd_local *local;
	struct rpmemctl_link *link;
	int open_code; /* the exit code of the link's last failed open */
	char src[1024];
};

/*
 * follow_open -- the link's open hook: connect and open the pool for
 * writing, saying why not on stderr (the code in f->open_code)
 */
static int follow_open(void *arg, struct rpmemctl_session **sess,
		       struct rpmemctl_pool **pool)
{
	struct follow *f = arg;
	int code;

	code = cmd_connect(f->ctx, f->t, f->x->transport, sess);
	if (!code) {
		code = open_pool(f->ctx, *sess, f->t, f->r->hp, f->r,
				 f->local->len, pool);
		if (code == XFER_SIZES_DIFFER || code == 1)
			code = CMD_EXIT_INTERNAL; /* not for a real push */
	}
	f->open_code = code;
	if (!code)
		f->r->transport = rpmemctl_pool_get_transport(*pool);
	return code ? -ENOTCONN : 0;
}

/* follow_link -- the link of f over the local mapping */
static int follow_link(struct follow *f)
{
	struct rpmemctl_link *l = NULL;
	int ret = rpmemctl_link_new(NULL, f->x->transport, &l);
	if (!ret)
		ret = rpmemctl_link_set_data(l, f->local->addr, f->local->len);
	if (!ret)
		ret = rpmemctl_link_set_policy(l, RPMEMCTL_LINK_DEGRADE, -1);
	if (!ret)
		ret = rpmemctl_link_set_open(l, follow_open, f);
	if (ret) {
		rpmemctl_link_delete(&l);
		cmd_err(f->ctx, "%s", rpmemctl_strerror(ret));
		return CMD_EXIT_INTERNAL;
	}
	f->link = l;
	return 0;
}

/*
 * follow_sync -- one push of the local file over the link: 0 with the
 * round reported, or -errno with the library's message in *msg
 */
static int follow_sync(struct follow *f, struct xfer_cb *cb,
		       const char **msg)
{
	struct rpmemctl_sync_result *res = NULL;
	struct rpmemctl_sync_cfg *cfg = NULL;
	int ret;

	ret = make_cfg(f->ctx, f->x, f->src, f->local->fd, cb, &cfg);
	if (!ret)
		ret = rpmemctl_sync_result_new(&res);
	if (ret) {
		rpmemctl_sync_cfg_delete(&cfg);
		*msg = rpmemctl_strerror(ret);
		return ret;
	}
	cmd_progress_init(&cb->prog, f->ctx, "sync");
	ret = rpmemctl_link_push(f->link, cfg, res);
	cmd_progress_end(&cb->prog);
	stats_get(&f->r->st, res);
	dirty_get(f->ctx, f->r, cb->log, res);
	rpmemctl_sync_result_delete(&res);
	rpmemctl_sync_cfg_delete(&cfg);
	*msg = rpmemctl_link_errmsg(f->link);
	return ret < 0 ? ret : 0;
}

/* follow_report -- one line (or JSON object) for a round that completed */
static void follow_report(struct follow *f)
{
	struct xfer_result *r = f->r;
	char a[32], b[32];
	struct ranges none = { 0 };

	r->identical = 1;
	if (f->ctx->json) {
		report_json(r, &none);
	} else if (!r->st.blocks_differ && !r->reconnected) {
		cmd_info(f->ctx, "round %" PRIu64 ": '%s' and %s are identical, "
			 "generation %" PRIu64, r->round, f->x->local,
			 r->target, r->st.generation);
	} else {
		cmd_info(f->ctx, "round %" PRIu64 ": %ssynced '%s' to %s: %"
			 PRIu64 " of %" PRIu64 " blocks differed, sent %s (%s "
			 "in all) in %.2f s, generation %" PRIu64, r->round,
			 r->reconnected ? "reconnected, " : "", f->x->local,
			 r->target, r->st.blocks_differ, r->st.blocks_total,
			 rpmemctl_size_format(r->st.data_bytes, a, sizeof(a)),
			 rpmemctl_size_format(r->st.bytes_transferred, b,
					      sizeof(b)),
			 elapsed_s(&r->st), r->st.generation);
	}
	fflush(stdout);
}

/* follow_transient -- a failure the next round may not see again */
static int follow_transient(int err)
{
	return err != -EACCES && cmd_exit_code(err) == CMD_EXIT_CONNECT;
}

/*
 * follow_round -- connect if need be and push once. Returns 0 when the
 * round completed (the pool is consistent), minus the exit code of a
 * failure the next round may not meet again (said on stderr), else the
 * exit code to stop with.
 */
static int follow_round(struct follow *f, struct xfer_cb *cb)
{
	struct rpmemctl_ctx *ctx = f->ctx;
	const char *every = f->x->follow_arg;
	const char *msg;
	struct stat st;
	int ret, code;

	if (rpmemctl_link_get_state(f->link) == RPMEMCTL_LINK_DEGRADED) {
		if (rpmemctl_link_connect(f->link)) {
			code = f->open_code;
			if (code != CMD_EXIT_CONNECT)
				return code ? code : CMD_EXIT_INTERNAL;
			cmd_warn(ctx, "round %" PRIu64 ": %s is unreachable; "
				 "retrying in %s", f->r->round, f->r->hp,
				 every);
			return -CMD_EXIT_CONNECT;
		}
		f->r->reconnected = 1;
	}
	ret = follow_sync(f, cb, &msg);
	if (!ret)
		follow_report(f);
	/* said once, by the round that did it */
	f->r->reconnected = 0;
	f->r->created_remote = 0;
	if (!ret)
		return 0;
	if (ret == -ESTALE && !fstat(f->local->fd, &st) &&
	    (uint64_t)st.st_size == f->local->len) {
		/* written to while we read it: what we sent may be torn */
		cmd_warn(ctx, "round %" PRIu64 ": '%s' changed during the "
			 "round; the pool stays syncing; retrying in %s",
			 f->r->round, f->x->local, every);
		return -CMD_EXIT_LOCAL;
	}
	if (ret == -ESTALE) {
		cmd_err(ctx, "'%s' changed size during round %" PRIu64
			" (%s); --follow cannot go on with it", f->x->local,
			f->r->round, msg);
		return CMD_EXIT_LOCAL;
	}
	if (follow_transient(ret)) {
		/* the link dropped the connection: the next round's push */
		cmd_warn(ctx, "round %" PRIu64 ": connection to %s lost (%s); "
			 "reconnecting in %s", f->r->round, f->r->hp, msg,
			 every);
		return -CMD_EXIT_CONNECT;
	}
	cmd_err(ctx, "round %" PRIu64 ": cannot sync '%s' to %s: %s%s%s",
		f->r->round, f->x->local, f->r->target, msg,
		cmd_hint(ret)[0] ? "; " : "", cmd_hint(ret));
	return cmd_exit_code(ret);
}

/*
 * follow -- sync --follow: rounds INTERVAL apart on one session until a
 * stop signal; exit 0 if the last round left the pool consistent, the
 * failed round's code otherwise, or at once on a failure no later round
 * can mend
 */
static int follow(struct rpmemctl_ctx *ctx, const struct cmd_xfer *x,
		  const struct cmd_target *t, struct xfer_result *r,
		  struct cmd_local *local)
{
	struct follow f = { .ctx = ctx, .x = x, .t = t, .r = r,
			    .local = local };
	struct xfer_cb cb = { 0 };
	sigset_t old, wait_mask;
	int code, last = 0;

	cmd_source(x->local, f.src, sizeof(f.src));
	code = dirty_open(ctx, x, local, r, &cb);
	if (code)
		return code;
	if (follow_signals(&old, &wait_mask)) {
		cmd_err(ctx, "cannot catch SIGTERM: %s", strerror(errno));
		return CMD_EXIT_INTERNAL;
	}
	/* the first connection must work: a typo is not transient */
	code = follow_link(&f);
	if (!code && rpmemctl_link_connect(f.link))
		code = f.open_code ? f.open_code : CMD_EXIT_INTERNAL;
	if (code)
		goto out;
	for (r->round = 1;; r->round++) {
		code = follow_round(&f, &cb);
		if (code > 0)
			goto out;
		last = -code; /* a failed round's code, if it is the last */
		if (follow_stop)
			break;
		follow_wait(x->follow_ns, &wait_mask);
		if (follow_stop)
			break;
	}
	code = last;
	if (code)
		cmd_warn(ctx, "stopped after round %" PRIu64 ", which failed: "
			 "the pool is not consistent", r->round);
	else
		cmd_info(ctx, "stopped after round %" PRIu64 ": %s is "
			 "consistent", r->round, r->target);
out:
	rpmemctl_link_delete(&f.link);
	sigprocmask(SIG_SETMASK, &old, NULL);
	rpmemctl_dirtylog_close(&cb.log);
	free(cb.ranges.v);
	return code;
}

/* a pull into a temporary file renamed over LOCAL (cmd_tmp_*) */
struct pull_tmp {
	struct rpmemctl_ctx *ctx;
	struct cmd_local *local; /* the temporary file, mapped */
	struct cmd_tmp tmp;
	int used; /* LOCAL is a regular file or missing: replaced whole */
	uint64_t size; /* a regular LOCAL's size */
	int code; /* the hook's exit code, said on stderr */
};

/*
 * pull_commit -- the library's commit hook of a pull: the temporary
 * file persisted and renamed over LOCAL, before LOCAL's history is
 * recorded; 0 or -EIO (with p->code)
 */
static int pull_commit(void *arg)
{
	struct pull_tmp *p = arg;

	p->code = cmd_local_persist(p->ctx, p->local);
	if (!p->code)
		p->code = cmd_tmp_commit(p->ctx, &p->tmp);
	return p->code ? -EIO : 0;
}

/*
 * pull_copy -- before any connection (a copy of a large file takes time
 * a session would spend idle): a regular LOCAL's copy beside it, which
 * the pull then updates and renames over it; an exit code
 */
static int pull_copy(struct rpmemctl_ctx *ctx, const struct cmd_xfer *x,
		     struct pull_tmp *p)
{
	struct stat st;
	int code;

	if (stat(x->local, &st) || !S_ISREG(st.st_mode))
		return 0; /* missing: created after the open; a device */
	code = cmd_tmp_open(ctx, x->local, (uint64_t)st.st_size, 1, &p->tmp);
	p->used = !code;
	p->size = (uint64_t)st.st_size;
	return code;
}

/*
 * pull_open -- LOCAL for a real pull: a regular file (or a missing one)
 * is replaced whole, through a temporary file beside it (pull_copy's, or
 * a new one); a device is written in place, as it cannot be renamed
 * over. An exit code.
 */
static int pull_open(struct rpmemctl_ctx *ctx, const struct cmd_xfer *x,
		     const struct xfer_result *r, uint64_t psize,
		     struct pull_tmp *p)
{
	char a[64], b[64];
	int code;

	if (!p->used && !access(x->local, F_OK))
		return cmd_local_open(ctx, x->local, CMD_LOCAL_RDWR, 0,
				      p->local);
	if (p->used && p->size != psize) {
		cmd_fmt_bytes(p->size, a, sizeof(a));
		cmd_fmt_bytes(psize, b, sizeof(b));
		cmd_err(ctx, "cannot pull %s into '%s': the pool's size is %s, "
			"the file's size is %s; remove the file or pull into a "
			"new one", r->target, x->local, b, a);
		return CMD_EXIT_LOCAL;
	}
	if (!p->used) {
		code = cmd_tmp_open(ctx, x->local, psize, 0, &p->tmp);
		if (code)
			return code;
		p->used = 1;
	}
	code = cmd_local_open(ctx, p->tmp.path, CMD_LOCAL_RDWR, 0, p->local);
	if (code)
		return code;
	p->local->created = !p->tmp.existed;
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
	char hp[300], src[1024], a[64], b[64];
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
		code = follow(ctx, x, &t, &r, &local);
		cmd_local_close(&local, 0);
		return code;
	}

	if (pull && !x->dry_run && !shared) {
		code = pull_copy(ctx, x, &pt);
		if (code)
			goto err_local;
	}
	code = cmd_connect(ctx, &t, x->transport, &sess);
	if (code)
		goto err_local;
	if (pull && x->force)
		cmd_read_damaged(sess, &dmg);
	code = open_pool(ctx, sess, &t, hp, &r, local.len, &pool);
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
				    pull_open(ctx, x, &r, psize, &pt);
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

	code = dirty_open(ctx, x, &local, &r, &cb);
	if (code)
		goto err_pool;
	ret = make_cfg(ctx, x, cmd_source(x->local, src, sizeof(src)),
		       local.fd, &cb, &cfg);
	if (!ret && pt.used)
		ret = rpmemctl_sync_cfg_set_commit(cfg, pull_commit, &pt);
	if (!ret)
		ret = rpmemctl_sync_result_new(&res);
	if (ret) {
		cmd_err(ctx, "cannot set up the %s: %s", command_str(x),
			rpmemctl_strerror(ret));
		rpmemctl_sync_cfg_delete(&cfg);
		code = CMD_EXIT_INTERNAL;
		goto err_pool;
	}
	cmd_progress_init(&cb.prog, ctx, pull ? "pull" : mode_str(x->mode));
	ret = rpmemctl_pool_sync2(pool, local.addr, local.len, cfg, res);
	cmd_progress_end(&cb.prog);
	stats_get(&r.st, res);
	dirty_get(ctx, &r, cb.log, res);
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
		report_json(&r, &cb.ranges);
	else
		report_human(ctx, &r, &cb.ranges);
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
