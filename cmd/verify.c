/* SPDX-License-Identifier: BSD-3-Clause */
/* verify.c -- rpmemctl verify: compare a local pool file with its replica */

#include "cmd.h"

static const char verify_usage[] =
	"usage: rpmemctl verify [options] LOCAL HOST[:PORT]/REGION/POOL...\n"
	"\n"
	"Compare block hashes of LOCAL and the remote pool; move no data.\n"
	"Each differing range is printed as \"differs at 0xOFFSET length N\".\n"
	"Exit status 0 if identical, 1 if they differ. Several targets are\n"
	"compared in parallel; the exit status is the highest of theirs.\n"
	"\n"
	"  -a, --at GENERATION    compare with that version of the pool\n"
	"                         (rpmemctl versions), byte by byte\n"
	"  -b, --block-size SIZE  comparison block, power of two, 4K..64M\n"
	"                         (default 64K)\n"
	"  -f, --full             the target hashes every block from its data,\n"
	"                         not from its cache of block hashes\n"
	"  -j, --json             one JSON object on stdout\n"
	"  -t, --transport T      auto, tcp or rdma (default auto)\n"
	"  -v, --verbose          more detail on stderr\n"
	"  -q, --quiet            only the differing ranges\n"
	"  -h, --help             this help\n";

static const struct option verify_opts[] = {
	CMD_XFER_OPTS,
	CMD_CMP_OPTS,
	{ "full", no_argument, NULL, 'f' },
	{ NULL, 0, NULL, 0 },
};

/* cmd_verify -- rpmemctl verify */
int cmd_verify(int argc, char **argv, struct rpmemctl_ctx *ctx)
{
	struct cmd_xfer x = { .mode = RPMEMCTL_SYNC_VERIFY };
	int c, code = 0;

	while ((c = cmd_getopt(ctx, argc, argv, CMD_COMMON_SHORT "a:b:fjt:",
			       verify_opts, verify_usage, &code)) != -1) {
		switch (c) {
		case -2:
			return code;
		case 'f':
			x.full = 1;
			break;
		default:
			code = cmd_xfer_opt(ctx, c, optarg, &x);
			if (code)
				return code;
		}
	}
	code = cmd_xfer_targets(ctx, argc, argv, &x,
				x.has_at ? "--at" : NULL);
	if (code)
		return code;
	return x.has_at ? cmd_transfer_at(ctx, &x) : cmd_transfer(ctx, &x);
}
