/* SPDX-License-Identifier: BSD-3-Clause */
/* remove.c -- rpmemctl remove: delete a pool on a target */

#include <errno.h>

#include "cmd.h"
#include "json.h"

static const char remove_usage[] =
	"usage: rpmemctl remove [options] HOST[:PORT]/REGION/POOL\n"
	"\n"
	"Remove a pool and its data from the target.\n"
	"\n"
	"  -f, --force            even if a sync of it was interrupted\n"
	"  -j, --json             one JSON object on stdout\n"
	"  -v, --verbose          more detail on stderr\n"
	"  -q, --quiet            no informational lines\n"
	"  -h, --help             this help\n";

static const struct option remove_opts[] = {
	CMD_COMMON_OPTS,
	{ "force", no_argument, NULL, 'f' },
	{ "json", no_argument, NULL, 'j' },
	{ NULL, 0, NULL, 0 },
};

/* cmd_remove -- rpmemctl remove */
int cmd_remove(int argc, char **argv, struct rpmemctl_ctx *ctx)
{
	const struct cmd_open o = { 1, 1, RPMEMCTL_TARGET_NEED_POOL, NULL,
				    RPMEMCTL_TRANSPORT_AUTO };
	struct rpmemctl_session *sess = NULL;
	struct cmd_target t;
	unsigned flags = 0;
	char hp[CMD_HP_MAX];
	struct json j;
	int c, ret, code = 0;

	while ((c = cmd_getopt(ctx, argc, argv, CMD_COMMON_SHORT "fj",
			       remove_opts, remove_usage, &code)) != -1) {
		switch (c) {
		case -2:
			return code;
		case 'f':
			flags |= RPMEMCTL_REMOVE_FORCE;
			break;
		}
	}
	code = cmd_open_target(ctx, argc, argv, &o, &t, hp, &sess);
	if (code)
		return code;
	ret = rpmemctl_pool_remove(sess, t.region, t.pool, flags);
	if (ret) {
		code = cmd_remote_err(ctx, sess, ret,
				      ret == -EBUSY ?
				      "retry later or use --force" : NULL,
				      "cannot remove pool '%s/%s' on %s",
				      t.region, t.pool, hp);
		goto out;
	}

	if (ctx->json) {
		json_begin(&j, stdout, "remove", hp);
		json_str(&j, "region", t.region);
		json_str(&j, "pool", t.pool);
		json_bool(&j, "forced", !!flags);
		json_bool(&j, "removed", 1);
		json_end(&j);
	} else {
		cmd_info(ctx, "removed pool '%s/%s' on %s", t.region, t.pool,
			 hp);
	}
out:
	rpmemctl_session_close(&sess);
	return code;
}
