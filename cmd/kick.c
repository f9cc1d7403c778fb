/* SPDX-License-Identifier: BSD-3-Clause */
/* kick.c -- rpmemctl kick: end another session on a target */

#include <errno.h>
#include <stdlib.h>

#include "cmd.h"
#include "json.h"

static const char kick_usage[] =
	"usage: rpmemctl kick [options] HOST[:PORT] SESSION_ID\n"
	"\n"
	"End a session on the target ('rpmemctl status' lists them): its\n"
	"connection is closed and the pools it holds are released.\n"
	"\n"
	"  -j, --json             one JSON object on stdout\n"
	"  -v, --verbose          more detail on stderr\n"
	"  -q, --quiet            no informational lines\n"
	"  -h, --help             this help\n";

static const struct option kick_opts[] = {
	CMD_COMMON_OPTS,
	{ "json", no_argument, NULL, 'j' },
	{ NULL, 0, NULL, 0 },
};

/* cmd_kick -- rpmemctl kick */
int cmd_kick(int argc, char **argv, struct rpmemctl_ctx *ctx)
{
	const struct cmd_open o = { 2, 2, RPMEMCTL_TARGET_NO_PATH, NULL,
				    RPMEMCTL_TRANSPORT_AUTO };
	struct rpmemctl_session *sess = NULL;
	struct cmd_target t;
	char hp[CMD_HP_MAX];
	struct json j;
	uint32_t id;
	uint64_t v; /* the id as given: 1 .. 2^32 - 1 */
	int c, ret, code = 0;

	while ((c = cmd_getopt(ctx, argc, argv, CMD_COMMON_SHORT "j",
			       kick_opts, kick_usage, &code)) != -1) {
		switch (c) {
		case -2:
			return code;
		}
	}
	code = cmd_open_target(ctx, argc, argv, &o, &t, hp, NULL);
	if (code)
		return code;
	if (cmd_parse_num(argv[optind + 1], UINT32_MAX, &v))
		return cmd_usage_error(ctx, "'%s' is not a session id (a number from 'rpmemctl status')",
				       argv[optind + 1]);
	id = (uint32_t)v;

	code = cmd_connect(ctx, &t, o.transport, &sess);
	if (code)
		return code;
	ret = rpmemctl_session_kick(sess, id);
	if (ret) {
		code = cmd_remote_err(ctx, sess, ret,
				      ret == -EINVAL ? "see 'rpmemctl status'" :
						       NULL,
				      "cannot end session %u on %s", id, hp);
		goto out;
	}
	if (ctx->json) {
		json_begin(&j, stdout, "kick", hp);
		json_u64(&j, "session", id);
		json_bool(&j, "kicked", 1);
		json_end(&j);
	} else {
		cmd_info(ctx, "ended session %u on %s", id, hp);
	}
out:
	rpmemctl_session_close(&sess);
	return code;
}
