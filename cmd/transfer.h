/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * transfer.h -- what the files of the transfer engine share: transfer.c
 * (one target, several in threads), transfer_follow.c (sync --follow),
 * transfer_pull.c (a pull's temporary file), transfer_report.c (reports)
 */
#ifndef RPMEMCTL_TRANSFER_H
#define RPMEMCTL_TRANSFER_H

#include <pthread.h>
#include <stdint.h>

#include "cmd.h"

/* the differing ranges as the library reports them (sorted and merged) */
struct ranges {
	struct { uint64_t off, len; } *v;
	size_t n, cap;
	int oom;
};

/* the library's callbacks share one arg */
struct xfer_cb {
	struct cmd_progress prog;
	struct ranges ranges;
	struct rpmemctl_dirtylog *log; /* a push's dirty log, or NULL */
};

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

/* a pull into a temporary file renamed over LOCAL (cmd_tmp_*) */
struct pull_tmp {
	struct rpmemctl_ctx *ctx;
	struct cmd_local *local; /* the temporary file, mapped */
	struct cmd_tmp tmp;
	int used; /* LOCAL is a regular file or missing: replaced whole */
	uint64_t size; /* a regular LOCAL's size */
	int code; /* the hook's exit code, said on stderr */
};

/* xfer_open_pool's answer for a verify that found the sizes different */
#define XFER_SIZES_DIFFER 0x100

/* --- transfer_setup.c ----------------------------------------------------- */

/* xfer_dry_missing -- what a run would do when one side does not exist yet */
void xfer_dry_missing(struct xfer_result *r, struct xfer_cb *cb,
		      uint64_t size);

/*
 * xfer_open_pool -- open the remote pool (the library's open-or-create
 * policy); 1 for a dry run of a push to a missing pool, else an exit code
 */
int xfer_open_pool(struct rpmemctl_ctx *ctx, struct rpmemctl_session *sess,
		   const struct cmd_target *t, const char *hp,
		   struct xfer_result *r, uint64_t local_len,
		   struct rpmemctl_pool **pool);
/* xfer_stats_get -- copy the library's result into the report's counters */
void xfer_stats_get(struct xfer_stats *st,
		    const struct rpmemctl_sync_result *res);
/* xfer_dirty_get -- what the push did with its dirty log (log), said once */
void xfer_dirty_get(struct rpmemctl_ctx *ctx, struct xfer_result *r,
		    const struct rpmemctl_dirtylog *log,
		    const struct rpmemctl_sync_result *res);
/* xfer_dirty_open -- a push's dirty log; 0 (also if none) or an exit code */
int xfer_dirty_open(struct rpmemctl_ctx *ctx, const struct cmd_xfer *x,
		    const struct cmd_local *local, struct xfer_result *r,
		    struct xfer_cb *cb);
/* xfer_make_cfg -- the library's sync configuration for x; 0 or -errno */
int xfer_make_cfg(struct rpmemctl_ctx *ctx, const struct cmd_xfer *x,
		  const char *source, int local_fd, struct xfer_cb *cb,
		  struct rpmemctl_sync_cfg **out);

/* --- transfer_follow.c ---------------------------------------------------- */

/* xfer_follow -- sync --follow: rounds INTERVAL apart; an exit code */
int xfer_follow(struct rpmemctl_ctx *ctx, const struct cmd_xfer *x,
		const struct cmd_target *t, struct xfer_result *r,
		struct cmd_local *local);

/* --- transfer_pull.c ------------------------------------------------------ */

/* xfer_pull_commit -- the commit hook: the temporary file over LOCAL */
int xfer_pull_commit(void *arg);
/* xfer_pull_copy -- before connecting: a regular LOCAL's copy beside it */
int xfer_pull_copy(struct rpmemctl_ctx *ctx, const struct cmd_xfer *x,
		   struct pull_tmp *p);
/* xfer_pull_open -- LOCAL for a real pull, through its temporary file */
int xfer_pull_open(struct rpmemctl_ctx *ctx, const struct cmd_xfer *x,
		   const struct xfer_result *r, uint64_t psize,
		   struct pull_tmp *p);

/* --- transfer_report.c ---------------------------------------------------- */

/* several targets: one report at a time, each whole */
extern pthread_mutex_t xfer_report_lock;
/* xfer_mode_str -- "push", "pull", "verify" or "mirror" */
const char *xfer_mode_str(enum rpmemctl_sync_mode m);
/* xfer_command_str -- the command of x: "mirror", "verify" or "sync" */
const char *xfer_command_str(const struct cmd_xfer *x);
/* xfer_elapsed_s -- the run's time in seconds */
double xfer_elapsed_s(const struct xfer_stats *st);
/* xfer_report_json -- the one JSON object of mirror, sync and verify */
void xfer_report_json(const struct xfer_result *r, const struct ranges *rg);
/* xfer_report_human -- ranges (always) and a summary line */
void xfer_report_human(struct rpmemctl_ctx *ctx, const struct xfer_result *r,
		       const struct ranges *rg);

#endif
