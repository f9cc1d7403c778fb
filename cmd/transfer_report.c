/* SPDX-License-Identifier: BSD-3-Clause */
/* transfer_report.c -- rpmemctl: the reports of mirror, sync and verify,
 * human and JSON */
#include <inttypes.h>
#include <string.h>

#include "cmd.h"
#include "json.h"
#include "transfer.h"

const char *xfer_mode_str(enum rpmemctl_sync_mode m)
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

const char *xfer_command_str(const struct cmd_xfer *x)
{
	if (x->mode == RPMEMCTL_SYNC_MIRROR)
		return "mirror";
	if (x->mode == RPMEMCTL_SYNC_VERIFY)
		return "verify";
	return "sync";
}

double xfer_elapsed_s(const struct xfer_stats *st)
{
	return (double)st->elapsed_ns / 1e9;
}

static double mib_per_s(const struct xfer_stats *st)
{
	double s = xfer_elapsed_s(st);

	return s > 0 ? (double)st->size / (1024.0 * 1024.0) / s : 0;
}

/* several targets: one report at a time, each whole */
pthread_mutex_t xfer_report_lock = PTHREAD_MUTEX_INITIALIZER;

/* xfer_report_json -- the one JSON object of mirror, sync and verify */
void xfer_report_json(const struct xfer_result *r, const struct ranges *rg)
{
	const struct cmd_xfer *x = r->x;
	struct json j;
	size_t i;

	pthread_mutex_lock(&xfer_report_lock);
	json_begin(&j, stdout, xfer_command_str(x), r->hp);
	json_str(&j, "region", r->t->region);
	json_str(&j, "pool", r->t->pool);
	json_str(&j, "local", x->local);
	json_str(&j, "operation", xfer_mode_str(x->mode));
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
	json_double(&j, "elapsed_s", xfer_elapsed_s(&r->st));
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
	pthread_mutex_unlock(&xfer_report_lock);
}

static void report_human_locked(struct rpmemctl_ctx *ctx,
				const struct xfer_result *r,
				const struct ranges *rg);

/* xfer_report_human -- ranges (always) and a summary line (informational) */
void xfer_report_human(struct rpmemctl_ctx *ctx,
		       const struct xfer_result *r, const struct ranges *rg)
{
	pthread_mutex_lock(&xfer_report_lock);
	report_human_locked(ctx, r, rg);
	fflush(stdout);
	pthread_mutex_unlock(&xfer_report_lock);
}

/* report_human_locked -- xfer_report_human with xfer_report_lock held */
static void report_human_locked(struct rpmemctl_ctx *ctx,
				const struct xfer_result *r,
				const struct ranges *rg)
{
	const struct cmd_xfer *x = r->x;
	const struct xfer_stats *st = &r->st;
	char a[CMD_NUM_MAX], b[CMD_NUM_MAX], c[CMD_NUM_MAX];
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
			 x->local, r->target, a, xfer_elapsed_s(st),
			 mib_per_s(st), st->generation, r->transport);
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
				 st->blocks_total, b, c, xfer_elapsed_s(st),
				 st->generation);
		else
			cmd_info(ctx, "synced '%s' to %s: %" PRIu64 " of %"
				 PRIu64 " blocks differed, sent %s (%s in "
				 "all) in %.2f s, generation %" PRIu64,
				 x->local, r->target, st->blocks_differ,
				 st->blocks_total, b, c, xfer_elapsed_s(st),
				 st->generation);
		break;
	case RPMEMCTL_SYNC_PULL:
		cmd_info(ctx, "pulled %s into '%s': %" PRIu64 " of %" PRIu64
			 " blocks differed, fetched %s (%s in all) in %.2f s, "
			 "generation %" PRIu64,
			 r->target, x->local, st->blocks_differ,
			 st->blocks_total, b, c, xfer_elapsed_s(st),
			 st->generation);
		break;
	default:
		break;
	}
}
