/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * replicas.c -- rpmemctl replicas: each target of a file replicated by the
 * preload library or the replica API, its state and lag, from the status
 * file the replicating process publishes, read by rpmemctl_replicas_read
 */

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmd.h"
#include "json.h"

static const char replicas_usage[] =
	"usage: rpmemctl replicas [options] FILE\n"
	"\n"
	"Show each target FILE is replicated to by the process replicating it\n"
	"(rpmem_preload(7), the replica API of librpmemctl(3)): its state\n"
	"(live, synced, open, degraded, resyncing, failed, down) and how far it\n"
	"is behind (bytes written while it did not hold, and for how long),\n"
	"from FILE.rpmemstat, which that process rewrites when a target's\n"
	"state changes and every second while one lags. Exit status 0 if no\n"
	"target misses any of FILE's writes, 1 if one does (degraded,\n"
	"resyncing, failed, or written to while it did not hold, also after\n"
	"the process ended) while the quorum still holds them all, 9 if fewer\n"
	"targets than the quorum do, 4 if a sync of FILE was refused as a\n"
	"split brain (and not resolved since), 5 if there is no status to\n"
	"read.\n"
	"\n"
	"  -f, --follow           print again whenever a target's state or lag\n"
	"                         status changes (one line per changed target,\n"
	"                         or the whole JSON object), until interrupted\n"
	"  -c, --count N          with --follow: exit after N changes (0 after\n"
	"                         N, 1 if --timeout came first)\n"
	"  -t, --timeout S        with --follow: exit after S seconds\n"
	"  -j, --json             one JSON object on stdout\n"
	"      --prometheus       metrics in the Prometheus text format\n"
	"  -v, --verbose          more detail on stderr\n"
	"  -q, --quiet            no informational lines\n"
	"  -h, --help             this help\n";

static const struct option replicas_opts[] = {
	CMD_COMMON_OPTS,
	{ "follow", no_argument, NULL, 'f' },
	{ "count", required_argument, NULL, 'c' },
	{ "timeout", required_argument, NULL, 't' },
	{ "json", no_argument, NULL, 'j' },
	{ "prometheus", no_argument, NULL, 'P' },
	{ NULL, 0, NULL, 0 },
};

/* what --follow prints and when it stops */
struct follow {
	int on;
	uint64_t count, timeout_s, seen;
};

/* how often --follow reads the status file */
#define FOLLOW_POLL_NS 100000000ull

/* holders -- the replicas of r that miss none of the file's writes */
static unsigned holders(const struct cmd_replicas *r)
{
	unsigned n = 0;
	for (unsigned i = 0; i < r->n; i++)
		n += !cmd_replica_lags(&r->rep[i]);
	return n;
}

/*
 * stopped_cleanly -- the process ended after stopping its links: no
 * replica is left live or open (a crash leaves them as they were)
 */
static int stopped_cleanly(const struct cmd_replicas *r)
{
	if (r->running)
		return 0;
	for (unsigned i = 0; i < r->n; i++)
		if (!strcmp(r->rep[i].state, "live") ||
		    !strcmp(r->rep[i].state, "open") ||
		    !strcmp(r->rep[i].state, "resyncing"))
			return 0;
	return 1;
}

/*
 * replicas_code -- 0, 1 (a target behind), 9 (below the quorum), 4 (a
 * sync refused as a split brain)
 */
static int replicas_code(const struct cmd_replicas *r)
{
	if (r->split)
		return CMD_EXIT_REFUSED;
	if (holders(r) < r->k)
		return CMD_EXIT_BELOW_QUORUM;
	return holders(r) < r->n ? CMD_EXIT_DIFFER : CMD_EXIT_OK;
}

/* replica_fill -- p from the library's report of one replica */
static int replica_fill(struct cmd_replica *p,
			const struct rpmemctl_replica_report *rep)
{
	if (cmd_target_fill(rep->target, RPMEMCTL_TARGET_NEED_POOL, &p->t,
			    NULL, 0))
		return -EBADMSG;
	snprintf(p->state, sizeof(p->state), "%s",
		 rpmemctl_link_state_str(rep->state));
	snprintf(p->target, sizeof(p->target), "%s", rep->target);
	p->behind_bytes = rep->behind_bytes;
	p->behind_since_ns = rep->behind_since_ns;
	return 0;
}

/*
 * cmd_replicas_read -- PATH.rpmemstat, read by the library; 0, -errno, or
 * -EBADMSG with why in err
 */
int cmd_replicas_read(const char *path, struct cmd_replicas *r, char *err,
		      size_t errlen)
{
	struct rpmemctl_replicas_report rep;
	char spath[CMD_PATH_MAX];
	int ret;

	memset(r, 0, sizeof(*r));
	if (snprintf(spath, sizeof(spath), "%s.rpmemstat", path) >=
	    (int)sizeof(spath))
		return -ENAMETOOLONG;
	if ((ret = rpmemctl_replicas_read(spath, &rep, err, errlen)))
		return ret;
	for (unsigned i = 0; i < rep.count; i++)
		if (replica_fill(&r->rep[i], &rep.replica[i]))
			return snprintf(err, errlen, "line %u: a bad target",
					i + 5), -EBADMSG;
	r->pid = rep.pid;
	r->updated_ns = rep.updated_ns;
	r->k = rep.quorum;
	r->ntargets = r->n = rep.count;
	r->holding = rep.holding;
	r->running = kill((pid_t)r->pid, 0) == 0 || errno == EPERM;
	ret = rpmemctl_history_split_brains(path);
	r->split = ret > 0 ? ret : 0;
	return 0;
}

/* replicas_json -- the "replicas" object (docs/JSON.md) */
static void replicas_json(const char *file, const struct cmd_replicas *r)
{
	char hp[CMD_HP_MAX];
	struct json j;

	json_init(&j, stdout);
	json_obj_begin(&j, NULL);
	json_u64(&j, "schema", RPMEMCTL_JSON_SCHEMA);
	json_str(&j, "command", "replicas");
	json_str(&j, "local", file);
	json_i64(&j, "pid", r->pid);
	json_bool(&j, "running", r->running);
	json_bool(&j, "stopped_cleanly", stopped_cleanly(r));
	json_bool(&j, "below_quorum", holders(r) < r->k);
	json_u64(&j, "split_brains", (uint64_t)r->split);
	json_u64(&j, "updated_at", r->updated_ns / 1000000000ull);
	json_u64(&j, "quorum", r->k);
	json_u64(&j, "holding", r->holding);
	json_arr_begin(&j, "replicas");
	for (unsigned i = 0; i < r->n; i++) {
		json_obj_begin(&j, NULL);
		json_str(&j, "target", cmd_hostport(&r->rep[i].t, hp,
						    sizeof(hp)));
		json_str(&j, "region", r->rep[i].t.region);
		json_str(&j, "pool", r->rep[i].t.pool);
		json_str(&j, "link_state", r->rep[i].state);
		json_str(&j, "disk",
			 rpmemctl_disk_state_str(cmd_replica_disk(&r->rep[i])));
		json_bool(&j, "lagging", cmd_replica_lags(&r->rep[i]));
		json_u64(&j, "behind_bytes", r->rep[i].behind_bytes);
		json_u64(&j, "behind_s", cmd_replica_lag_s(r, &r->rep[i]));
		json_obj_end(&j);
	}
	json_arr_end(&j);
	json_end(&j);
}

/* replicas_print -- the human form */
static int replicas_print(struct rpmemctl_ctx *ctx, const char *file,
			  const struct cmd_replicas *r)
{
	static const char *const hdr[] = { "TARGET", "STATE", "BEHIND",
					   "FOR", "DISK" };
	char tb[CMD_NUM_MAX], bb[CMD_BYTES_MAX], sb[CMD_NUM_MAX];
	struct cmd_table t;

	printf("file:     %s\n", file);
	printf("process:  %ld (%s)\n", r->pid, r->running ? "running" :
	       stopped_cleanly(r) ? "ended: stopped replicating cleanly, "
	       "each synced copy consistent and equal to the file" :
	       "ended without stopping its links (killed or crashed): a "
	       "live copy holds every write whose persist returned");
	printf("updated:  %s\n", cmd_fmt_time(r->updated_ns / 1000000000ull,
					     tb, sizeof(tb)));
	printf("quorum:   %u of %u (%u hold%s)\n\n", r->k, r->ntargets,
	       r->holding, holders(r) < r->k ?
	       ": below the quorum, fewer copies hold every write than "
	       "configured" : "");
	if (cmd_table_init(&t, 5, 0xc, hdr))
		return cmd_err(ctx, "out of memory"), CMD_EXIT_INTERNAL;
	for (unsigned i = 0; i < r->n; i++) {
		const struct cmd_replica *p = &r->rep[i];
		uint64_t s = cmd_replica_lag_s(r, p);
		snprintf(sb, sizeof(sb), "%" PRIu64 " s", s);
		const char *row[] = { p->target, p->state,
				      rpmemctl_size_format(p->behind_bytes, bb,
							   sizeof(bb)),
				      p->behind_since_ns ? sb : NULL,
				      rpmemctl_disk_state_str(
					      cmd_replica_disk(p)) };
		cmd_table_row(&t, row);
	}
	cmd_table_print(&t, stdout);
	cmd_table_free(&t);
	if (r->split)
		printf("\nsplit brain: %d sync(s) of the file were refused since its last completed sync: a copy and the file were both written since they last agreed; nothing was overwritten (rpmemctl(1), GENERATION HISTORIES)\n",
		       r->split);
	return 0;
}

/* changed -- replica i of r differs from prev's in state or lagging */
static int changed(const struct cmd_replicas *r, const struct cmd_replicas *prev,
		   unsigned i)
{
	return i >= prev->n || strcmp(r->rep[i].state, prev->rep[i].state) ||
	       cmd_replica_lags(&r->rep[i]) != cmd_replica_lags(&prev->rep[i]) ||
	       strcmp(r->rep[i].target, prev->rep[i].target);
}

/* follow_line -- a changed replica, in the human form */
static void follow_line(const struct cmd_replicas *r,
			const struct cmd_replica *p)
{
	char tb[CMD_NUM_MAX], bb[CMD_BYTES_MAX];

	printf("%s  %s  %s  behind %s for %llu s  %s\n",
	       cmd_fmt_time(r->updated_ns / 1000000000ull, tb, sizeof(tb)),
	       p->target, p->state,
	       rpmemctl_size_format(p->behind_bytes, bb, sizeof(bb)),
	       (unsigned long long)cmd_replica_lag_s(r, p),
	       rpmemctl_disk_state_str(cmd_replica_disk(p)));
}

/*
 * follow_print -- print r's changes since prev (everything the first time);
 * the number of replicas that changed
 */
static unsigned follow_print(const char *file, const struct cmd_replicas *r,
			     const struct cmd_replicas *prev, int json)
{
	unsigned n = 0;

	for (unsigned i = 0; i < r->n; i++)
		if (changed(r, prev, i)) {
			if (!json)
				follow_line(r, &r->rep[i]);
			n++;
		}
	if (n && json)
		replicas_json(file, r);
	return n;
}

/* replicas_follow -- --follow: poll the status file, print changes */
static int replicas_follow(struct rpmemctl_ctx *ctx, const char *file,
			   struct follow *f)
{
	static struct cmd_replicas r, prev;
	uint64_t end = f->timeout_s ? cmd_now_ns() + f->timeout_s *
						     1000000000ull : 0;
	struct timespec ts = { 0, FOLLOW_POLL_NS };

	memset(&prev, 0, sizeof(prev));
	while (!f->count || f->seen < f->count) {
		if (end && cmd_now_ns() >= end)
			return CMD_EXIT_DIFFER;
		if (!cmd_replicas_read(file, &r, NULL, 0)) {
			if (follow_print(file, &r, &prev, ctx->json)) {
				f->seen++;
				if (fflush(stdout))
					return CMD_EXIT_INTERNAL;
			}
			prev = r;
		}
		nanosleep(&ts, NULL);
	}
	return CMD_EXIT_OK;
}

/* cmd_replicas -- rpmemctl replicas */
int cmd_replicas(int argc, char **argv, struct rpmemctl_ctx *ctx)
{
	struct cmd_replicas r;
	struct follow f = { 0 };
	char err[CMD_ERR_MAX];
	int c, ret, code = 0, prom = 0;

	while ((c = cmd_getopt(ctx, argc, argv, CMD_COMMON_SHORT "jfc:t:",
			       replicas_opts, replicas_usage, &code)) != -1) {
		if (c == -2)
			return code;
		if (c == 'P')
			prom = 1;
		if (c == 'f')
			f.on = 1;
		if (c == 'c' && cmd_parse_num(optarg, UINT32_MAX, &f.count))
			return cmd_usage_error(ctx, "invalid --count '%s' (a number of changes, at least 1)",
					       optarg);
		if (c == 't' &&
		    cmd_parse_num(optarg, 86400 * 365, &f.timeout_s))
			return cmd_usage_error(ctx, "invalid --timeout '%s' (seconds, at least 1)",
					       optarg);
	}
	if (prom && (ctx->json || f.on))
		return cmd_usage_error(ctx, "--prometheus goes with neither --json nor --follow");
	if (!f.on && (f.count || f.timeout_s))
		return cmd_usage_error(ctx, "--count and --timeout go with --follow");
	code = cmd_check_args(ctx, argc, argv, 1, 1);
	if (code)
		return code;
	const char *file = argv[optind];
	if (f.on)
		return cmd_finish(ctx, replicas_follow(ctx, file, &f));
	ret = cmd_replicas_read(file, &r, err, sizeof(err));
	if (ret == -ENOENT) {
		cmd_err(ctx, "'%s' has no replica status (%s.rpmemstat): no "
			"process has replicated it with the preload library or "
			"the replica API", file, file);
		return CMD_EXIT_LOCAL;
	}
	if (ret) {
		cmd_err(ctx, "cannot read '%s.rpmemstat': %s%s", file,
			ret == -EBADMSG ? "not a replica status file: " : "",
			ret == -EBADMSG ? err : strerror(-ret));
		return CMD_EXIT_LOCAL;
	}
	if (prom)
		cmd_prometheus_replicas(stdout, file, &r);
	else if (ctx->json)
		replicas_json(file, &r);
	else
		code = replicas_print(ctx, file, &r);
	if (!code)
		code = replicas_code(&r);
	return cmd_finish(ctx, code);
}
