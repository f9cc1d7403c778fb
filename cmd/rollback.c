/* SPDX-License-Identifier: BSD-3-Clause */
/* rollback.c -- rpmemctl rollback: undo an interrupted sync on a target */

#include <errno.h>

#include "cmd.h"
#include "json.h"

static const char rollback_usage[] =
	"usage: rpmemctl rollback [options] HOST[:PORT]/REGION/POOL\n"
	"\n"
	"Undo an interrupted sync or mirror: the target restores the pool's\n"
	"previous image from its undo journal and marks it consistent at the\n"
	"generation it had before. (A new sync continues the interrupted one\n"
	"instead.)\n"
	"\n"
	"  -j, --json             one JSON object on stdout\n"
	"  -v, --verbose          more detail on stderr\n"
	"  -q, --quiet            no informational lines\n"
	"  -h, --help             this help\n";

static const struct option rollback_opts[] = {
	CMD_COMMON_OPTS,
	{ "json", no_argument, NULL, 'j' },
	{ NULL, 0, NULL, 0 },
};

/* rollback_report -- what the rollback left, as text or JSON */
static void rollback_report(struct rpmemctl_ctx *ctx,
			    const struct cmd_target *t, const char *hp,
			    struct rpmemctl_pool *p)
{
	struct json j;
	unsigned long long gen = rpmemctl_pool_get_generation(p);

	if (ctx->json) {
		json_begin(&j, stdout, "rollback", hp);
		json_str(&j, "region", t->region);
		json_str(&j, "pool", t->pool);
		json_str(&j, "state",
			 rpmemctl_pool_state_str(rpmemctl_pool_get_state(p)));
		json_u64(&j, "generation", gen);
		json_end(&j);
		return;
	}
	cmd_info(ctx, "rolled back pool '%s/%s' on %s to generation %llu",
		 t->region, t->pool, hp, gen);
}

/* cmd_rollback -- rpmemctl rollback */
int cmd_rollback(int argc, char **argv, struct rpmemctl_ctx *ctx)
{
	const struct cmd_open o = { 1, 1, RPMEMCTL_TARGET_NEED_POOL, NULL,
				    RPMEMCTL_TRANSPORT_TCP };
	struct rpmemctl_session *sess = NULL;
	struct rpmemctl_pool *p = NULL;
	struct cmd_target t;
	char hp[CMD_HP_MAX];
	int c, ret, code = 0;

	while ((c = cmd_getopt(ctx, argc, argv, CMD_COMMON_SHORT "j",
			       rollback_opts, rollback_usage, &code)) != -1) {
		if (c == -2)
			return code;
	}
	if ((code = cmd_open_target(ctx, argc, argv, &o, &t, hp, &sess)))
		return code;
	ret = rpmemctl_pool_open(sess, t.region, t.pool, RPMEMCTL_OPEN_RDWR,
				 &p);
	if (ret) {
		code = cmd_remote_err(ctx, sess, ret, NULL,
				      "cannot open pool '%s/%s' on %s",
				      t.region, t.pool, hp);
		goto out;
	}
	ret = rpmemctl_pool_rollback(p);
	if (ret)
		code = cmd_remote_err(ctx, sess, ret,
				      ret == -EINVAL ?
					      "only an interrupted sync of a consistent pool can be rolled back" :
					      NULL,
				      "cannot roll back pool '%s/%s' on %s",
				      t.region, t.pool, hp);
	else
		rollback_report(ctx, &t, hp, p);
out:
	rpmemctl_pool_close(&p);
	rpmemctl_session_close(&sess);
	return code;
}
