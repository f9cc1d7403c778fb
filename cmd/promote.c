/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * promote.c -- rpmemctl promote, demote: make a target's copy (or a local
 * file pulled from it) the primary, and a target's copy a secondary again
 */

#include <errno.h>
#include <string.h>

#include "cmd.h"
#include "json.h"

static const char promote_usage[] =
	"usage: rpmemctl promote [options] HOST[:PORT]/REGION/POOL\n"
	"       rpmemctl promote [options] --to FILE HOST[:PORT]/REGION/POOL\n"
	"\n"
	"Make the copy on the target the primary, in place: the target records\n"
	"a new generation id in the pool's history and the role primary, and\n"
	"refuses pushes, mirrors and live writers into it until `rpmemctl\n"
	"demote`; an application on the target host uses the pool file in the\n"
	"region directly and may replicate it onward or back.\n"
	"With --to, pull the copy into FILE instead (only what differs if FILE\n"
	"exists) and make FILE the primary (its history, FILE.rpmemgen, records\n"
	"the promotion); the target stays a secondary.\n"
	"A syncing copy (an interrupted or running sync) is refused unless\n"
	"--force: with an undo journal it is rolled back to its last complete\n"
	"image first, without one (in place only) its partly written image\n"
	"becomes the primary.\n"
	"\n"
	"      --to FILE          pull into FILE and make it the primary\n"
	"  -f, --force            promote a syncing copy (see above)\n"
	"  -j, --json             one JSON object on stdout\n"
	"  -v, --verbose          more detail on stderr\n"
	"  -q, --quiet            no informational lines\n"
	"  -h, --help             this help\n";

static const char demote_usage[] =
	"usage: rpmemctl demote [options] HOST[:PORT]/REGION/POOL\n"
	"\n"
	"Make a promoted copy on the target a secondary again: it takes pushes\n"
	"again, each subject to the comparison of generation histories (a push\n"
	"from a copy that lacks its newer writes is refused).\n"
	"\n"
	"  -j, --json             one JSON object on stdout\n"
	"  -v, --verbose          more detail on stderr\n"
	"  -q, --quiet            no informational lines\n"
	"  -h, --help             this help\n";

static const struct option promote_opts[] = {
	CMD_COMMON_OPTS,
	{ "to", required_argument, NULL, CMD_OPT_FIRST_PRIVATE },
	{ "force", no_argument, NULL, 'f' },
	{ "json", no_argument, NULL, 'j' },
	{ NULL, 0, NULL, 0 },
};

/* what promote was asked to do */
struct promote {
	struct cmd_target t;
	char hp[CMD_HP_MAX];
	const char *to; /* --to FILE, or NULL */
	int force;
};

/* gen_report -- the copy's role and history after the command */
static void gen_report(struct rpmemctl_ctx *ctx, const struct promote *pr,
		       const struct rpmemctl_generations *g)
{
	char ids[RPMEMCTL_GENERATIONS_MAX * 18], hex[CMD_HEX64_MAX];
	size_t o = 0;

	if (ctx->json) {
		struct json j;
		json_begin(&j, stdout, ctx->cmd, pr->hp);
		json_str(&j, "region", pr->t.region);
		json_str(&j, "pool", pr->t.pool);
		if (pr->to)
			json_str(&j, "file", pr->to);
		json_str(&j, "role", rpmemctl_role_str(g->role));
		json_str(&j, "state", rpmemctl_pool_state_str(g->state));
		json_u64(&j, "generation", g->generation);
		json_arr_begin(&j, "generations");
		for (unsigned k = 0; k < g->count; k++) {
			snprintf(hex, sizeof(hex), "%016llx",
				 (unsigned long long)g->ids[k]);
			json_str(&j, NULL, hex);
		}
		json_arr_end(&j);
		json_bool(&j, "rolled_back", g->rolled_back);
		json_end(&j);
		return;
	}
	ids[0] = '\0';
	for (unsigned k = 0; k < g->count && k < 4; k++)
		o += (size_t)snprintf(ids + o, sizeof(ids) - o, "%s%016llx",
				      k ? ", " : "",
				      (unsigned long long)g->ids[k]);
	if (pr->to)
		cmd_info(ctx, "'%s' is the primary (pulled from pool '%s/%s' on %s%s); generation history %s%s",
			 pr->to, pr->t.region, pr->t.pool, pr->hp,
			 g->rolled_back ? ", its interrupted sync rolled back first" : "",
			 ids, g->count > 4 ? ", ..." : "");
	else
		cmd_info(ctx, "pool '%s/%s' on %s is %s%s; generation history %s%s",
			 pr->t.region, pr->t.pool, pr->hp,
			 g->role == RPMEMCTL_ROLE_PRIMARY ? "the primary" :
							    "a secondary",
			 g->rolled_back ? " (its interrupted sync rolled back to its last complete image first)" : "",
			 ids, g->count > 4 ? ", ..." : "");
}

/*
 * syncing_hint -- what promoting the syncing pool would lose, from the
 * target's listing, into buf
 */
static const char *syncing_hint(struct rpmemctl_session *sess,
				const struct promote *pr, char *buf,
				size_t len)
{
	struct rpmemctl_list *l = NULL;
	snprintf(buf, len, "--force promotes it anyway");
	if (rpmemctl_list_get(sess, pr->t.region, &l))
		return buf;
	for (unsigned i = 0; i < rpmemctl_list_pool_count(l); i++) {
		if (strcmp(rpmemctl_list_pool_name(l, i), pr->t.pool))
			continue;
		const char *src = rpmemctl_list_pool_source(l, i);
		unsigned long long ug, g;
		ug = rpmemctl_list_pool_undo_generation(l, i);
		g = rpmemctl_list_pool_generation(l, i);
		if (!src[0])
			src = "its source";
		int live = rpmemctl_list_pool_disk_state(l, i) ==
			   RPMEMCTL_DISK_CONSISTENT;
		if (rpmemctl_list_pool_writer(l, i)[0])
			snprintf(buf, len, "%s writes it now (a live writer or a running sync): stop that writer (or `rpmemctl kick` its session) first",
				 rpmemctl_list_pool_writer(l, i));
		else if (live && !pr->to)
			snprintf(buf, len, "compare it with the other copies first (rpmemctl list: its generations): `promote --to FILE` pulls this image into FILE and keeps the copy as it is, --force makes it the primary in place as it is");
		else if (rpmemctl_list_pool_pending(l, i))
			snprintf(buf, len, "--force rolls it back to generation %llu, its last complete image, first: what the interrupted sync from %s wrote is lost",
				 ug, src);
		else if (pr->to)
			snprintf(buf, len, "it has no undo journal to roll back, so it cannot be pulled: promote it in place (without --to) with --force, or finish the sync from %s",
				 src);
		else
			snprintf(buf, len, "it has no undo journal: --force makes its partly written image the primary as it is, and whatever the sync from %s had not sent yet is lost (those blocks keep generation %llu's data)",
				 src, g);
	}
	rpmemctl_list_free(&l);
	return buf;
}

/*
 * live_copy -- the syncing pool is a live copy whose writer is gone (disk
 * state Consistent): its last drained image, crash-consistent, which a
 * pull takes as it is
 */
static int live_copy(struct rpmemctl_session *sess, const struct promote *pr)
{
	struct rpmemctl_list *l = NULL;
	int ret = 0;
	if (rpmemctl_list_get(sess, pr->t.region, &l))
		return 0;
	for (unsigned i = 0; i < rpmemctl_list_pool_count(l); i++)
		if (!strcmp(rpmemctl_list_pool_name(l, i), pr->t.pool))
			ret = rpmemctl_list_pool_state(l, i) ==
				      RPMEMCTL_POOL_SYNCING &&
			      rpmemctl_list_pool_disk_state(l, i) ==
				      RPMEMCTL_DISK_CONSISTENT;
	rpmemctl_list_free(&l);
	return ret;
}

/* open_pool -- session and pool (read-only, or rw) of pr, or an exit code */
static int open_pool(struct rpmemctl_ctx *ctx, const struct promote *pr,
		     unsigned flags, struct rpmemctl_session **sess,
		     struct rpmemctl_pool **p)
{
	int code = cmd_connect(ctx, &pr->t, RPMEMCTL_TRANSPORT_TCP, sess);
	if (code)
		return code;
	int ret = rpmemctl_pool_open(*sess, pr->t.region, pr->t.pool, flags,
				     p);
	if (ret)
		return cmd_remote_err(ctx, *sess, ret, NULL,
				      "cannot open pool '%s/%s' on %s",
				      pr->t.region, pr->t.pool, pr->hp);
	return 0;
}

/* promote_in_place -- GEN promote on the target */
static int promote_in_place(struct rpmemctl_ctx *ctx, struct promote *pr)
{
	struct rpmemctl_session *sess = NULL;
	struct rpmemctl_pool *p = NULL;
	struct rpmemctl_generations g;
	char hint[CMD_LINE_MAX];
	int code = open_pool(ctx, pr, 0, &sess, &p);

	if (!code) {
		int syncing = rpmemctl_pool_get_state(p) ==
			      RPMEMCTL_POOL_SYNCING;
		int ret = rpmemctl_pool_promote(
			p, pr->force ? RPMEMCTL_PROMOTE_FORCE : 0, &g);
		const char *why = NULL;
		char msg[CMD_MSG_MAX];
		/* the hint's listing replaces the session's message */
		snprintf(msg, sizeof(msg), "%s", rpmemctl_session_errmsg(sess));
		if (ret && syncing && !pr->force)
			why = syncing_hint(sess, pr, hint, sizeof(hint));
		if (ret && why && msg[0]) {
			cmd_err(ctx, "cannot promote pool '%s/%s' on %s: %s; %s",
				pr->t.region, pr->t.pool, pr->hp, msg,
				why);
			code = cmd_exit_code(ret);
		} else if (ret) {
			code = cmd_remote_err(ctx, sess, ret, why,
					      "cannot promote pool '%s/%s' on %s",
					      pr->t.region, pr->t.pool, pr->hp);
		} else
			gen_report(ctx, pr, &g);
	}
	rpmemctl_pool_close(&p);
	rpmemctl_session_close(&sess);
	return code;
}

/*
 * rollback -- the syncing pool rolled back on a new read-write open
 * (*sess and *p replaced); an exit code
 */
static int rollback(struct rpmemctl_ctx *ctx, const struct promote *pr,
		    struct rpmemctl_session **sess, struct rpmemctl_pool **p)
{
	rpmemctl_pool_close(p);
	rpmemctl_session_close(sess);
	int code = open_pool(ctx, pr, RPMEMCTL_OPEN_RDWR, sess, p);
	int ret = code ? 0 : rpmemctl_pool_rollback(*p);
	if (ret)
		code = cmd_remote_err(ctx, *sess, ret, NULL,
				      "cannot roll back pool '%s/%s' on %s",
				      pr->t.region, pr->t.pool, pr->hp);
	return code;
}

/*
 * settle -- before a pull: the copy's history into *g; a syncing copy is
 * refused, or with --force rolled back (g->rolled_back); an exit code
 */
static int settle(struct rpmemctl_ctx *ctx, struct promote *pr,
		  struct rpmemctl_generations *g)
{
	struct rpmemctl_session *sess = NULL;
	struct rpmemctl_pool *p = NULL;
	char hint[CMD_LINE_MAX];
	int code = open_pool(ctx, pr, 0, &sess, &p);
	int ret, rolled = 0;

	if (!code && rpmemctl_pool_get_state(p) == RPMEMCTL_POOL_SYNCING &&
	    live_copy(sess, pr)) {
		cmd_dbg(ctx, "pool '%s/%s' on %s is a live copy whose writer is gone: its last drained image is pulled",
			pr->t.region, pr->t.pool, pr->hp);
	} else if (!code &&
		   rpmemctl_pool_get_state(p) == RPMEMCTL_POOL_SYNCING) {
		syncing_hint(sess, pr, hint, sizeof(hint));
		if (!pr->force || !strstr(hint, "rolls it back")) {
			cmd_err(ctx, "cannot promote pool '%s/%s' on %s: it is syncing (an interrupted or running sync); %s",
				pr->t.region, pr->t.pool, pr->hp, hint);
			code = CMD_EXIT_REFUSED;
		} else {
			code = rollback(ctx, pr, &sess, &p);
			rolled = 1;
		}
	}
	if (!code && (ret = rpmemctl_pool_get_generations(p, g)))
		code = cmd_remote_err(ctx, sess, ret, NULL,
				      "cannot read the generation history of pool '%s/%s' on %s",
				      pr->t.region, pr->t.pool, pr->hp);
	g->rolled_back = rolled;
	rpmemctl_pool_close(&p);
	rpmemctl_session_close(&sess);
	return code;
}

/* promote_to -- pull into FILE, then FILE's history records it primary */
static int promote_to(struct rpmemctl_ctx *ctx, struct promote *pr,
		      const char *target)
{
	struct rpmemctl_generations g, local;
	struct cmd_xfer x = { .mode = RPMEMCTL_SYNC_PULL, .local = pr->to,
			      .target = target, .ntargets = 1 };
	int code = settle(ctx, pr, &g);
	if (code)
		return code;
	int json = ctx->json, quiet = ctx->quiet;
	ctx->json = 0; /* one object, ours; the pull's summary only as text */
	ctx->quiet = quiet || json;
	code = cmd_transfer(ctx, &x);
	ctx->json = json;
	ctx->quiet = quiet;
	if (code)
		return code;
	int ret = rpmemctl_history_promote(pr->to, g.ids, g.count, &local);
	if (ret) {
		cmd_err(ctx, "%s", rpmemctl_strerror(ret));
		return CMD_EXIT_LOCAL;
	}
	local.rolled_back = g.rolled_back;
	local.generation = g.generation;
	gen_report(ctx, pr, &local);
	return 0;
}

/* cmd_promote -- rpmemctl promote */
int cmd_promote(int argc, char **argv, struct rpmemctl_ctx *ctx)
{
	struct promote pr = { 0 };
	int c, code = 0;

	while ((c = cmd_getopt(ctx, argc, argv, CMD_COMMON_SHORT "fj",
			       promote_opts, promote_usage, &code)) != -1) {
		if (c == -2)
			return code;
		if (c == 'f')
			pr.force = 1;
		else if (c == CMD_OPT_FIRST_PRIVATE)
			pr.to = optarg;
	}
	if ((code = cmd_check_args(ctx, argc, argv, 1, 1)) ||
	    (code = cmd_parse_target(ctx, argv[optind],
				     RPMEMCTL_TARGET_NEED_POOL, &pr.t)))
		return code;
	cmd_hostport(&pr.t, pr.hp, sizeof(pr.hp));
	return pr.to ? promote_to(ctx, &pr, argv[optind]) :
		       promote_in_place(ctx, &pr);
}

/* cmd_demote -- rpmemctl demote */
int cmd_demote(int argc, char **argv, struct rpmemctl_ctx *ctx)
{
	struct rpmemctl_session *sess = NULL;
	struct rpmemctl_pool *p = NULL;
	struct rpmemctl_generations g;
	struct promote pr = { 0 };
	int c, ret, code = 0;

	while ((c = cmd_getopt(ctx, argc, argv, CMD_COMMON_SHORT "j",
			       promote_opts + 0, demote_usage, &code)) != -1) {
		if (c == -2)
			return code;
		return cmd_usage_error(ctx, "demote takes no --to or --force");
	}
	if ((code = cmd_check_args(ctx, argc, argv, 1, 1)) ||
	    (code = cmd_parse_target(ctx, argv[optind],
				     RPMEMCTL_TARGET_NEED_POOL, &pr.t)))
		return code;
	cmd_hostport(&pr.t, pr.hp, sizeof(pr.hp));
	if (!(code = open_pool(ctx, &pr, 0, &sess, &p))) {
		if ((ret = rpmemctl_pool_demote(p, &g)))
			code = cmd_remote_err(ctx, sess, ret, NULL,
					      "cannot demote pool '%s/%s' on %s",
					      pr.t.region, pr.t.pool, pr.hp);
		else
			gen_report(ctx, &pr, &g);
	}
	rpmemctl_pool_close(&p);
	rpmemctl_session_close(&sess);
	return code;
}
