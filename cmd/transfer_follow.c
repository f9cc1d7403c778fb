/* SPDX-License-Identifier: BSD-3-Clause */
/* transfer_follow.c -- rpmemctl: sync --follow, a push every INTERVAL */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cmd.h"
#include "json.h"
#include "transfer.h"

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
	char src[CMD_SOURCE_MAX];
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
		code = xfer_open_pool(f->ctx, *sess, f->t, f->r->hp, f->r,
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

	ret = xfer_make_cfg(f->ctx, f->x, f->src, f->local->fd, cb, &cfg);
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
	xfer_stats_get(&f->r->st, res);
	xfer_dirty_get(f->ctx, f->r, cb->log, res);
	rpmemctl_sync_result_delete(&res);
	rpmemctl_sync_cfg_delete(&cfg);
	*msg = rpmemctl_link_errmsg(f->link);
	return ret < 0 ? ret : 0;
}

/* follow_report -- one line (or JSON object) for a round that completed */
static void follow_report(struct follow *f)
{
	struct xfer_result *r = f->r;
	char a[CMD_NUM_MAX], b[CMD_NUM_MAX];
	struct ranges none = { 0 };

	r->identical = 1;
	if (f->ctx->json) {
		xfer_report_json(r, &none);
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
			 xfer_elapsed_s(&r->st), r->st.generation);
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
 * xfer_follow -- sync --follow: rounds INTERVAL apart on one session until a
 * stop signal; exit 0 if the last round left the pool consistent, the
 * failed round's code otherwise, or at once on a failure no later round
 * can mend
 */
int xfer_follow(struct rpmemctl_ctx *ctx, const struct cmd_xfer *x,
		const struct cmd_target *t, struct xfer_result *r,
		struct cmd_local *local)
{
	struct follow f = { .ctx = ctx, .x = x, .t = t, .r = r,
			    .local = local };
	struct xfer_cb cb = { 0 };
	sigset_t old, wait_mask;
	int code, last = 0;

	cmd_source(x->local, f.src, sizeof(f.src));
	code = xfer_dirty_open(ctx, x, local, r, &cb);
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
