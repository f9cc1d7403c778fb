/* SPDX-License-Identifier: BSD-3-Clause */
/* sync.c -- rpmemctl sync: move only the blocks that differ */

#include "cmd.h"

static const char sync_usage[] =
	"usage: rpmemctl sync [options] LOCAL HOST[:PORT]/REGION/POOL...\n"
	"\n"
	"Compare block hashes of LOCAL and the remote pool and send only the\n"
	"blocks that differ, then make them persistent and mark the pool\n"
	"consistent. A missing remote pool is created with the size of LOCAL.\n"
	"With --pull, fetch the differing blocks into LOCAL instead (created\n"
	"with the pool's size if missing): into a copy of it beside it, made\n"
	"durable and renamed over it, so LOCAL is never a mix of two images.\n"
	"With --follow, keep the session and the pool open and push again\n"
	"every INTERVAL; a round that fails is retried at the next one (a\n"
	"lost connection is reopened).\n"
	"Several targets (not with --pull, --follow or --dirty-log) are\n"
	"synced in parallel, one summary each, target i > 0 with the dirty\n"
	"log LOCAL.rpmemlog.i; the exit code is the highest of theirs.\n"
	"\n"
	"  -p, --pull             remote -> local\n"
	"  -a, --at GENERATION    with --pull: restore that version of the\n"
	"                         pool (rpmemctl versions) into LOCAL, a new\n"
	"                         file renamed over it (of the same size)\n"
	"      --salvage          with --at: a version damaged on the target\n"
	"                         is written where it can be restored, zeros\n"
	"                         where not (listed); exit status 7\n"
	"  -n, --dry-run          report what would move, move nothing\n"
	"  -b, --block-size SIZE  comparison block, power of two, 4K..64M\n"
	"                         (default 64K)\n"
	"  -f, --follow INTERVAL  repeat the sync every INTERVAL (500ms, 5s,\n"
	"                         1m) until SIGTERM or SIGINT, which end it\n"
	"                         after the round in progress\n"
	"  -d, --dirty-log FILE   send only the extents FILE marks, if it is\n"
	"                         relative to the pool's generation (default:\n"
	"                         LOCAL.rpmemlog if it exists)\n"
	"      --no-dirty-log     compare everything, do not clear the log\n"
	"      --discard-target   push even where the target holds newer or\n"
	"                         other writes than LOCAL's generation\n"
	"                         history (LOCAL.rpmemgen) shows: they are lost\n"
	"      --discard-local    with --pull: pull even where LOCAL holds\n"
	"                         newer or other writes: they are lost\n"
	"      --no-history       neither compare nor record LOCAL.rpmemgen\n"
	"                         (a push that cannot write it is refused\n"
	"                         without this): newer writes go unnoticed\n"
	"      --force            with --pull: take data the target finds\n"
	"                         damaged (not as its scrub record says) as\n"
	"                         it is, each such range named on stderr\n"
	"  -j, --json             one JSON object on stdout (with --follow,\n"
	"                         one line per round)\n"
	"  -t, --transport T      auto, tcp or rdma (default auto)\n"
	"      --bwlimit RATE     move at most RATE bytes a second (K, M, G,\n"
	"                         T: powers of 1024; e.g. 50M), a pull too\n"
	"  -v, --verbose          more detail on stderr\n"
	"  -q, --quiet            no informational lines or progress\n"
	"  -h, --help             this help\n";

/* sync's own options without a short form */
enum {
	SYNC_OPT_NO_DIRTY_LOG = CMD_OPT_FIRST_PRIVATE,
	SYNC_OPT_DISCARD_LOCAL,
	SYNC_OPT_SALVAGE,
	SYNC_OPT_FORCE,
};

static const struct option sync_opts[] = {
	CMD_XFER_OPTS,
	CMD_PUSH_OPTS,
	CMD_CMP_OPTS,
	{ "pull", no_argument, NULL, 'p' },
	{ "dry-run", no_argument, NULL, 'n' },
	{ "follow", required_argument, NULL, 'f' },
	{ "dirty-log", required_argument, NULL, 'd' },
	{ "no-dirty-log", no_argument, NULL, SYNC_OPT_NO_DIRTY_LOG },
	{ "discard-local", no_argument, NULL, SYNC_OPT_DISCARD_LOCAL },
	{ "force", no_argument, NULL, SYNC_OPT_FORCE },
	{ "salvage", no_argument, NULL, SYNC_OPT_SALVAGE },
	{ NULL, 0, NULL, 0 },
};

/* cmd_sync -- rpmemctl sync */
int cmd_sync(int argc, char **argv, struct rpmemctl_ctx *ctx)
{
	struct cmd_xfer x = { .mode = RPMEMCTL_SYNC_PUSH };
	int c, code = 0;

	while ((c = cmd_getopt(ctx, argc, argv, CMD_COMMON_SHORT "pa:nb:f:d:jt:",
			       sync_opts, sync_usage, &code)) != -1) {
		switch (c) {
		case -2:
			return code;
		case 'p':
			x.mode = RPMEMCTL_SYNC_PULL;
			break;
		case 'n':
			x.dry_run = 1;
			break;
		case 'f':
			code = cmd_parse_interval(ctx, optarg, &x.follow_ns);
			if (code)
				return code;
			x.follow_arg = optarg;
			break;
		case 'd':
			x.dirty_log = optarg;
			break;
		case SYNC_OPT_NO_DIRTY_LOG:
			x.no_dirty_log = 1;
			break;
		case SYNC_OPT_DISCARD_LOCAL:
			x.discard |= RPMEMCTL_SYNC_DISCARD_LOCAL;
			break;
		case SYNC_OPT_SALVAGE:
			x.salvage = 1;
			break;
		case SYNC_OPT_FORCE:
			x.force = 1;
			break;
		default:
			code = cmd_xfer_opt(ctx, c, optarg, &x);
			if (code)
				return code;
		}
	}
	code = cmd_xfer_targets(ctx, argc, argv, &x,
				x.follow_ns ? "--follow" :
				x.mode == RPMEMCTL_SYNC_PULL ? "--pull" :
				x.dirty_log ? "--dirty-log" : NULL);
	if (code)
		return code;
	if (x.salvage && (x.mode != RPMEMCTL_SYNC_PULL || !x.has_at))
		return cmd_usage_error(ctx, "--salvage restores a version: it "
				       "needs --pull --at GENERATION");
	if (x.follow_ns && (x.mode == RPMEMCTL_SYNC_PULL || x.dry_run))
		return cmd_usage_error(ctx, "--follow pushes: it cannot be "
				       "combined with %s",
				       x.dry_run ? "--dry-run" : "--pull");
	if (x.dirty_log && (x.mode == RPMEMCTL_SYNC_PULL || x.dry_run ||
			    x.no_dirty_log))
		return cmd_usage_error(ctx, "--dirty-log is for a push: not "
				       "with %s", x.no_dirty_log ?
				       "--no-dirty-log" : x.dry_run ?
				       "--dry-run" : "--pull");
	if (x.discard && (x.discard != (x.mode == RPMEMCTL_SYNC_PULL ?
					       RPMEMCTL_SYNC_DISCARD_LOCAL :
					       RPMEMCTL_SYNC_DISCARD_TARGET)))
		return cmd_usage_error(ctx, "--discard-target is for a push, "
				       "--discard-local for a pull");
	if (x.force && x.mode != RPMEMCTL_SYNC_PULL)
		return cmd_usage_error(ctx, "--force takes damaged data a "
				       "pull reads: it needs --pull");
	if (x.has_at && (x.mode != RPMEMCTL_SYNC_PULL || x.dry_run ||
			 x.follow_ns || x.dirty_log))
		return cmd_usage_error(ctx, "--at restores a version: it "
				       "needs --pull, and no --dry-run, "
				       "--follow or --dirty-log");
	return x.has_at ? cmd_transfer_at(ctx, &x) : cmd_transfer(ctx, &x);
}
