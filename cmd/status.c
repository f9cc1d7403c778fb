/* SPDX-License-Identifier: BSD-3-Clause */
/* status.c -- rpmemctl status: a daemon, its pools and its sessions */

#include <errno.h>
#include <string.h>

#include "cmd.h"
#include "json.h"

static const char status_usage[] =
	"usage: rpmemctl status [options] [HOST[:PORT]]\n"
	"\n"
	"Show the daemon at HOST (default 127.0.0.1), the PMem namespaces of\n"
	"its machine, its regions, its pools with their state and counters,\n"
	"and its sessions.\n"
	"\n"
	"  -j, --json             one JSON object on stdout\n"
	"      --prometheus       metrics in the Prometheus text format (for\n"
	"                         node_exporter's textfile collector)\n"
	"  -v, --verbose          more detail on stderr\n"
	"  -q, --quiet            no informational lines\n"
	"  -h, --help             this help\n";

static const struct option status_opts[] = {
	CMD_COMMON_OPTS,
	{ "json", no_argument, NULL, 'j' },
	{ "prometheus", no_argument, NULL, 'P' },
	{ NULL, 0, NULL, 0 },
};

/* namespaces_json -- the "namespaces" array */
static void namespaces_json(struct json *j, const struct rpmemctl_status *st)
{
	unsigned i, k, n;

	json_arr_begin(j, "namespaces");
	for (i = 0; i < rpmemctl_status_namespace_count(st); i++) {
		json_obj_begin(j, NULL);
		json_str(j, "name", rpmemctl_status_namespace_name(st, i));
		json_str(j, "nd_region",
			 rpmemctl_status_namespace_nd_region(st, i));
		json_str(j, "device", rpmemctl_status_namespace_device(st, i));
		json_str(j, "mode", rpmemctl_status_namespace_mode(st, i));
		json_u64(j, "size", rpmemctl_status_namespace_size(st, i));
		json_u64(j, "align", rpmemctl_status_namespace_align(st, i));
		json_i64(j, "numa_node",
			 rpmemctl_status_namespace_numa_node(st, i));
		json_str(j, "mount", rpmemctl_status_namespace_mount(st, i));
		json_arr_begin(j, "region_names");
		n = rpmemctl_status_namespace_region_count(st, i);
		for (k = 0; k < n; k++)
			json_str(j, NULL,
				 rpmemctl_status_namespace_region(st, i, k));
		json_arr_end(j);
		json_obj_end(j);
	}
	json_arr_end(j);
}

/*
 * session_identity_json -- "identity" and "auth" of session i: null
 * both from a target that does not report them
 */
static void session_identity_json(struct json *j,
				  const struct rpmemctl_status *st, unsigned i)
{
	const char *auth = rpmemctl_status_session_auth(st, i);

	if (!auth || !auth[0]) {
		json_null(j, "identity");
		json_null(j, "auth");
		return;
	}
	json_str(j, "identity", rpmemctl_status_session_identity(st, i));
	json_str(j, "auth", auth);
}

/*
 * session_pool_json -- the "region" and "pool" keys of a session from the
 * daemon's "region/pool" ("" and "" with no pool open)
 */
static void session_pool_json(struct json *j, const char *rp)
{
	const char *slash = strchr(rp, '/');
	char region[RPMEMCTL_NAME_MAX + 1];

	if (!slash) {
		json_str(j, "region", "");
		json_str(j, "pool", rp);
		return;
	}
	snprintf(region, sizeof(region), "%.*s", (int)(slash - rp), rp);
	json_str(j, "region", region);
	json_str(j, "pool", slash + 1);
}

/* status_json -- the daemon, its namespaces, the listing and the sessions */
static void status_json(const char *hp, const struct rpmemctl_status *st,
			const struct rpmemctl_list *l)
{
	struct json j;
	unsigned i;

	json_begin(&j, stdout, "status", hp);
	json_str(&j, "server", rpmemctl_status_server(st));
	json_u64(&j, "pid", rpmemctl_status_pid(st));
	json_u64(&j, "uptime_s", rpmemctl_status_uptime(st));
	json_bool(&j, "rdma", rpmemctl_status_rdma_capable(st));
	json_u64(&j, "max_sessions", rpmemctl_status_max_sessions(st));
	namespaces_json(&j, st);
	cmd_list_json(&j, l, st, NULL);
	json_arr_begin(&j, "sessions");
	for (i = 0; i < rpmemctl_status_session_count(st); i++) {
		json_obj_begin(&j, NULL);
		json_u64(&j, "id", rpmemctl_status_session_id(st, i));
		json_str(&j, "peer", rpmemctl_status_session_peer(st, i));
		json_str(&j, "client", rpmemctl_status_session_client(st, i));
		session_identity_json(&j, st, i);
		json_str(&j, "transport",
			 rpmemctl_status_session_transport(st, i));
		session_pool_json(&j, rpmemctl_status_session_pool(st, i));
		json_str(&j, "access", rpmemctl_status_session_mode(st, i));
		json_u64(&j, "bytes_written",
			 rpmemctl_status_session_bytes_written(st, i));
		json_u64(&j, "bytes_read",
			 rpmemctl_status_session_bytes_read(st, i));
		json_u64(&j, "flushes",
			 rpmemctl_status_session_flushes(st, i));
		json_u64(&j, "last_flush_ns",
			 rpmemctl_status_session_last_flush_ns(st, i));
		json_obj_end(&j);
	}
	json_arr_end(&j);
	json_end(&j);
}

/* fmt_latency -- "85 us", "1.2 ms", "-" for 0 */
static const char *fmt_latency(uint64_t ns, char *buf, size_t len)
{
	if (!ns)
		snprintf(buf, len, "-");
	else if (ns < 10000)
		snprintf(buf, len, "%.1f us", (double)ns / 1e3);
	else if (ns < 10000000)
		snprintf(buf, len, "%.0f us", (double)ns / 1e3);
	else
		snprintf(buf, len, "%.1f ms", (double)ns / 1e6);
	return buf;
}

/* ns_regions -- the regions on namespace i, comma separated, into buf */
static const char *ns_regions(const struct rpmemctl_status *st, unsigned i,
			      char *buf, size_t len)
{
	unsigned k, n = rpmemctl_status_namespace_region_count(st, i);
	size_t off = 0;

	buf[0] = '\0';
	for (k = 0; k < n && off < len; k++) {
		int w = snprintf(buf + off, len - off, "%s%s", k ? "," : "",
				 rpmemctl_status_namespace_region(st, i, k));
		if (w < 0)
			break;
		off += (size_t)w;
	}
	return buf;
}

/* namespaces_print -- the PMem namespaces table (nothing if none) */
static int namespaces_print(struct rpmemctl_ctx *ctx,
			    const struct rpmemctl_status *st)
{
	static const char *const hdr[] = { "NAMESPACE", "ND REGION", "MODE",
					   "DEVICE", "SIZE", "ALIGN", "NUMA",
					   "REGIONS", "MOUNT" };
	char b[CMD_TABLE_MAX_COLS][CMD_BYTES_MAX], regions[CMD_LIST_MAX];
	struct cmd_table t;
	unsigned i, n = rpmemctl_status_namespace_count(st);
	int ret;

	if (!n)
		return 0;
	ret = cmd_table_init(&t, 9, (1u << 4) | (1u << 5) | (1u << 6), hdr);
	for (i = 0; !ret && i < n; i++) {
		uint64_t align = rpmemctl_status_namespace_align(st, i);
		int numa = rpmemctl_status_namespace_numa_node(st, i);
		const char *row[CMD_TABLE_MAX_COLS] = {
			rpmemctl_status_namespace_name(st, i),
			rpmemctl_status_namespace_nd_region(st, i),
			rpmemctl_status_namespace_mode(st, i),
			rpmemctl_status_namespace_device(st, i),
			rpmemctl_size_format(
				rpmemctl_status_namespace_size(st, i), b[0],
				64),
			align ? rpmemctl_size_format(align, b[1], 64) : NULL,
			numa < 0 ? NULL : cmd_fmt_u64((uint64_t)numa, b[2], 64),
			ns_regions(st, i, regions, sizeof(regions)),
			rpmemctl_status_namespace_mount(st, i),
		};
		ret = cmd_table_row(&t, row);
	}
	if (ret) {
		cmd_table_free(&t);
		cmd_err(ctx, "cannot format the namespaces: %s",
			strerror(-ret));
		return CMD_EXIT_INTERNAL;
	}
	cmd_table_print(&t, stdout);
	cmd_table_free(&t);
	fputc('\n', stdout);
	return 0;
}

/* status_print -- the human form */
static int status_print(struct rpmemctl_ctx *ctx, const char *hp,
			const struct rpmemctl_status *st,
			const struct rpmemctl_list *l)
{
	static const char *const shdr[] = { "ID", "PEER", "IDENTITY",
					    "CLIENT", "TRANSPORT", "POOL",
					    "MODE", "WRITTEN", "READ",
					    "FLUSHES", "LAST FLUSH" };
	char up[CMD_NUM_MAX], b[CMD_TABLE_MAX_COLS][CMD_NUM_MAX];
	struct cmd_table t;
	unsigned i;
	int ret;

	printf("server:   %s\n", cmd_text(rpmemctl_status_server(st)));
	printf("target:   %s\n", hp);
	printf("pid:      %llu\n",
	       (unsigned long long)rpmemctl_status_pid(st));
	printf("uptime:   %s\n",
	       cmd_fmt_duration(rpmemctl_status_uptime(st), up, sizeof(up)));
	printf("rdma:     %s\n",
	       rpmemctl_status_rdma_capable(st) ? "yes" : "no");
	printf("sessions: %u of %u\n", rpmemctl_status_session_count(st),
	       rpmemctl_status_max_sessions(st));
	i = rpmemctl_status_namespace_count(st);
	if (i)
		printf("pmem:     %u namespace%s\n", i, i == 1 ? "" : "s");
	else
		printf("pmem:     no namespaces\n");
	fputc('\n', stdout);

	ret = namespaces_print(ctx, st);
	if (ret)
		return ret;
	ret = cmd_list_print(ctx, l, st, NULL, 1);
	if (ret)
		return ret;
	fputc('\n', stdout);

	ret = cmd_table_init(&t, 11, (1u << 0) | (1u << 7) | (1u << 8) |
			     (1u << 9) | (1u << 10), shdr);
	for (i = 0; !ret && i < rpmemctl_status_session_count(st); i++) {
		uint64_t wr = rpmemctl_status_session_bytes_written(st, i);
		uint64_t rd = rpmemctl_status_session_bytes_read(st, i);
		uint64_t ns = rpmemctl_status_session_last_flush_ns(st, i);
		const char *row[CMD_TABLE_MAX_COLS] = {
			cmd_fmt_u64(rpmemctl_status_session_id(st, i), b[0],
				    32),
			rpmemctl_status_session_peer(st, i),
			rpmemctl_status_session_identity(st, i),
			rpmemctl_status_session_client(st, i),
			rpmemctl_status_session_transport(st, i),
			rpmemctl_status_session_pool(st, i),
			rpmemctl_status_session_mode(st, i),
			rpmemctl_size_format(wr, b[1], 32),
			rpmemctl_size_format(rd, b[2], 32),
			cmd_fmt_u64(rpmemctl_status_session_flushes(st, i),
				    b[3], 32),
			fmt_latency(ns, b[4], 32),
		};
		ret = cmd_table_row(&t, row);
	}
	if (ret) {
		cmd_table_free(&t);
		cmd_err(ctx, "cannot format the sessions: %s", strerror(-ret));
		return CMD_EXIT_INTERNAL;
	}
	cmd_table_print(&t, stdout);
	cmd_table_free(&t);
	return 0;
}

/* cmd_status -- rpmemctl status */
int cmd_status(int argc, char **argv, struct rpmemctl_ctx *ctx)
{
	const struct cmd_open o = { 0, 1, RPMEMCTL_TARGET_NO_PATH, "127.0.0.1",
				    RPMEMCTL_TRANSPORT_AUTO };
	struct rpmemctl_session *sess = NULL;
	struct rpmemctl_status *st = NULL;
	struct rpmemctl_list *list = NULL;
	struct cmd_target t;
	char hp[CMD_HP_MAX];
	int c, ret, code = 0, prom = 0;

	while ((c = cmd_getopt(ctx, argc, argv, CMD_COMMON_SHORT "j",
			       status_opts, status_usage, &code)) != -1) {
		switch (c) {
		case -2:
			return code;
		case 'P':
			prom = 1;
			break;
		}
	}
	if (prom && ctx->json)
		return cmd_usage_error(ctx, "--json and --prometheus exclude each other");
	code = cmd_open_target(ctx, argc, argv, &o, &t, hp, NULL);
	if (code)
		return code;

	code = cmd_connect(ctx, &t, o.transport, &sess);
	if (code)
		goto out;
	ret = rpmemctl_status_get(sess, &st);
	if (ret) {
		code = cmd_remote_err(ctx, sess, ret, NULL,
				      "cannot get the status of %s", hp);
		goto out;
	}
	ret = rpmemctl_list_get(sess, NULL, &list);
	if (ret) {
		code = cmd_remote_err(ctx, sess, ret, NULL,
				      "cannot list the pools of %s", hp);
		goto out;
	}

	if (prom)
		cmd_prometheus(stdout, hp, st, list);
	else if (ctx->json)
		status_json(hp, st, list);
	else
		code = status_print(ctx, hp, st, list);
out:
	/* a scrape still says that the daemon is down */
	if (code && prom)
		cmd_prometheus_down(stdout, hp);
	rpmemctl_list_free(&list);
	rpmemctl_status_free(&st);
	rpmemctl_session_close(&sess);
	return code;
}
