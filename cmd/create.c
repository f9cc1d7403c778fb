/* SPDX-License-Identifier: BSD-3-Clause */
/* create.c -- rpmemctl create: make a pool on a target */

#include <errno.h>

#include "cmd.h"
#include "json.h"

static const char create_usage[] =
	"usage: rpmemctl create [options] HOST[:PORT]/REGION/POOL SIZE\n"
	"\n"
	"Create an empty pool of SIZE bytes (K, M, G or T suffixes) in\n"
	"REGION.\n"
	"\n"
	"  -j, --json             one JSON object on stdout\n"
	"  -v, --verbose          more detail on stderr\n"
	"  -q, --quiet            no informational lines\n"
	"  -h, --help             this help\n";

static const struct option create_opts[] = {
	CMD_COMMON_OPTS,
	{ "json", no_argument, NULL, 'j' },
	{ NULL, 0, NULL, 0 },
};

/* cmd_create -- rpmemctl create */
int cmd_create(int argc, char **argv, struct rpmemctl_ctx *ctx)
{
	const struct cmd_open o = { 2, 2, RPMEMCTL_TARGET_NEED_POOL, NULL,
				    RPMEMCTL_TRANSPORT_AUTO };
	struct rpmemctl_session *sess = NULL;
	struct cmd_target t;
	char hp[CMD_HP_MAX], sz[CMD_BYTES_MAX];
	uint64_t size = 0;
	struct json j;
	int c, ret, code = 0;

	while ((c = cmd_getopt(ctx, argc, argv, CMD_COMMON_SHORT "j",
			       create_opts, create_usage, &code)) != -1) {
		switch (c) {
		case -2:
			return code;
		}
	}
	code = cmd_open_target(ctx, argc, argv, &o, &t, hp, NULL);
	if (code)
		return code;
	code = cmd_parse_size(ctx, "size", argv[optind + 1], &size);
	if (code)
		return code;

	code = cmd_connect(ctx, &t, o.transport, &sess);
	if (code)
		return code;
	ret = rpmemctl_pool_create(sess, t.region, t.pool, size);
	if (ret) {
		code = cmd_remote_err(ctx, sess, ret,
				      ret == -EEXIST ?
				      "remove it first or choose another name" :
				      NULL,
				      "cannot create pool '%s/%s' on %s",
				      t.region, t.pool, hp);
		goto out;
	}

	if (ctx->json) {
		json_begin(&j, stdout, "create", hp);
		json_str(&j, "region", t.region);
		json_str(&j, "pool", t.pool);
		json_u64(&j, "pool_size", size);
		json_bool(&j, "created", 1);
		json_end(&j);
	} else {
		cmd_info(ctx, "created pool '%s/%s' of %s on %s", t.region,
			 t.pool, cmd_fmt_bytes(size, sz, sizeof(sz)), hp);
	}
out:
	rpmemctl_session_close(&sess);
	return code;
}
