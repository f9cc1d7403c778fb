/* SPDX-License-Identifier: BSD-3-Clause */
/* sync.c -- rpmemctl sync: move only the blocks that differ */

#include "cmd.h"

static const char sync_usage[] =
	"usage: rpmemctl sync [options] LOCAL HOST[:PORT]/REGION/POOL\n"
	"\n"
	"Compare block hashes of LOCAL and the remote pool and send only the\n"
	"blocks that differ, then make them persistent and mark the pool\n"
	"consistent. A missing remote pool is created with the size of LOCAL.\n"
	"With --pull, fetch the differing blocks into LOCAL instead (created\n"
	"with the pool's size if missing) and persist it.\n"
	"\n"
	"  -p, --pull             remote -> local\n"
	"  -n, --dry-run          report what would move, move nothing\n"
	"  -b, --block-size SIZE  comparison block, power of two, 4K..64M\n"
	"                         (default 64K)\n"
	"  -j, --json             one JSON object on stdout\n"
	"  -t, --transport T      auto, tcp or rdma (default auto)\n"
	"      --bwlimit RATE     send at most RATE bytes a second (K, M, G:\n"
	"                         powers of 1024; e.g. 50M)\n"
	"  -v, --verbose          more detail on stderr\n"
	"  -q, --quiet            no informational lines or progress\n"
	"  -h, --help             this help\n";

static const struct option sync_opts[] = {
	CMD_COMMON_OPTS,
	{ "pull", no_argument, NULL, 'p' },
	{ "dry-run", no_argument, NULL, 'n' },
	{ "block-size", required_argument, NULL, 'b' },
	{ "json", no_argument, NULL, 'j' },
	{ "transport", required_argument, NULL, 't' },
	{ "bwlimit", required_argument, NULL, CMD_OPT_BWLIMIT },
	{ NULL, 0, NULL, 0 },
};

/* cmd_sync -- rpmemctl sync */
int cmd_sync(int argc, char **argv, struct rpmemctl_ctx *ctx)
{
	struct cmd_xfer x = { .mode = RPMEMCTL_SYNC_PUSH };
	int c, code = 0;

	while ((c = cmd_getopt(ctx, argc, argv, CMD_COMMON_SHORT "pnb:jt:",
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
		case 'b':
			code = cmd_parse_block_size(ctx, optarg, &x.block_size);
			if (code)
				return code;
			break;
		case 'j':
			ctx->json = 1;
			break;
		case 't':
			code = cmd_parse_transport(ctx, optarg, &x.transport);
			if (code)
				return code;
			break;
		case CMD_OPT_BWLIMIT:
			code = cmd_parse_bwlimit(ctx, optarg, &x.bwlimit);
			if (code)
				return code;
			break;
		}
	}
	code = cmd_check_args(ctx, argc, argv, 2, 2);
	if (code)
		return code;
	x.local = argv[optind];
	x.target = argv[optind + 1];
	return cmd_transfer(ctx, &x);
}
