/* SPDX-License-Identifier: BSD-3-Clause */
/* mirror.c -- rpmemctl mirror: copy every byte of a local pool file */

#include "cmd.h"

static const char mirror_usage[] =
	"usage: rpmemctl mirror [options] LOCAL HOST[:PORT]/REGION/POOL...\n"
	"\n"
	"Copy the whole local pool file LOCAL into the remote pool, then make\n"
	"it persistent and mark it consistent. A missing remote pool is\n"
	"created with the size of LOCAL; a pool of another size is refused.\n"
	"Several targets are copied to in parallel, one summary each; the\n"
	"exit code is the highest of theirs.\n"
	"\n"
	"  -j, --json             one JSON object on stdout\n"
	"  -t, --transport T      auto, tcp or rdma (default auto)\n"
	"      --bwlimit RATE     send at most RATE bytes a second (K, M, G,\n"
	"                         T: powers of 1024; e.g. 50M)\n"
	"  -n, --no-create        fail if the remote pool does not exist\n"
	"      --discard-target   mirror even where the target holds newer or\n"
	"                         other writes than LOCAL's generation\n"
	"                         history (LOCAL.rpmemgen) shows: they are lost\n"
	"      --no-history       neither compare nor record LOCAL.rpmemgen\n"
	"                         (a mirror that cannot write it is refused\n"
	"                         without this): newer writes go unnoticed\n"
	"  -v, --verbose          more detail on stderr\n"
	"  -q, --quiet            no informational lines or progress\n"
	"  -h, --help             this help\n";

static const struct option mirror_opts[] = {
	CMD_XFER_OPTS,
	CMD_PUSH_OPTS,
	{ "no-create", no_argument, NULL, 'n' },
	{ NULL, 0, NULL, 0 },
};

/* cmd_mirror -- rpmemctl mirror */
int cmd_mirror(int argc, char **argv, struct rpmemctl_ctx *ctx)
{
	struct cmd_xfer x = { .mode = RPMEMCTL_SYNC_MIRROR };
	int c, code = 0;

	while ((c = cmd_getopt(ctx, argc, argv, CMD_COMMON_SHORT "jt:n",
			       mirror_opts, mirror_usage, &code)) != -1) {
		switch (c) {
		case -2:
			return code;
		case 'n':
			x.no_create = 1;
			break;
		default:
			code = cmd_xfer_opt(ctx, c, optarg, &x);
			if (code)
				return code;
		}
	}
	code = cmd_xfer_targets(ctx, argc, argv, &x, NULL);
	return code ? code : cmd_transfer(ctx, &x);
}
