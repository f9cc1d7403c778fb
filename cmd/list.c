/* SPDX-License-Identifier: BSD-3-Clause */
/* list.c -- rpmemctl list: a target's regions and pools */

#include <errno.h>
#include <string.h>

#include "cmd.h"
#include "json.h"

static const char list_usage[] =
	"usage: rpmemctl list [options] HOST[:PORT][/REGION[/POOL]]\n"
	"\n"
	"List the regions of a target and the pools in them (only REGION's,\n"
	"or only POOL, if given). A region on a PMem namespace shows its\n"
	"device, namespace mode and NUMA node.\n"
	"\n"
	"  -j, --json             one JSON object on stdout\n"
	"  -t, --transport T      auto, tcp or rdma (default auto)\n"
	"  -v, --verbose          more detail on stderr\n"
	"  -q, --quiet            no informational lines\n"
	"  -h, --help             this help\n";

static const struct option list_opts[] = {
	CMD_COMMON_OPTS,
	{ "json", no_argument, NULL, 'j' },
	{ "transport", required_argument, NULL, 't' },
	{ NULL, 0, NULL, 0 },
};

/* pool_match -- pool i is shown for the filter ("" = all) */
static int pool_match(const struct rpmemctl_list *l, unsigned i,
		      const char *pool)
{
	return !pool || !pool[0] ||
	       !strcmp(rpmemctl_list_pool_name(l, i), pool);
}

static const char *state_text(const struct rpmemctl_list *l, unsigned i,
			      char *buf, size_t len);

/* cell_add -- append ", what" to the cell st (in buf or a constant) */
static const char *cell_add(const char *st, char *buf, size_t len,
			    const char *what)
{
	size_t n;

	if (st != buf)
		snprintf(buf, len, "%s", st);
	n = strlen(buf);
	if (n < len)
		snprintf(buf + n, len - n, ", %s", what);
	return buf;
}

/*
 * state_cell -- pool i's state (state_text), "primary" for a promoted
 * pool ("consistent, primary"), and what a scrub found damaged and no
 * sync rewrote yet ("consistent, damaged (4.0 KiB)")
 */
static const char *state_cell(const struct rpmemctl_list *l, unsigned i,
			      char *buf, size_t len)
{
	const char *st = state_text(l, i, buf, len);
	uint64_t bad = rpmemctl_list_pool_damaged(l, i);
	char d[CMD_BYTES_MAX], sz[CMD_NUM_MAX];

	if (rpmemctl_list_pool_role(l, i) == RPMEMCTL_ROLE_PRIMARY)
		st = cell_add(st, buf, len, "primary");
	if (bad) {
		snprintf(d, sizeof(d), "damaged (%s)",
			 rpmemctl_size_format(bad, sz, sizeof(sz)));
		st = cell_add(st, buf, len, d);
	}
	if (rpmemctl_list_pool_split_brain(l, i))
		st = cell_add(st, buf, len, "split brain");
	return st;
}

/*
 * state_text -- pool i's state; an interrupted sync says what a rollback
 * would give back ("syncing (rollback: 3)")
 */
static const char *state_text(const struct rpmemctl_list *l, unsigned i,
			      char *buf, size_t len)
{
	const char *st = rpmemctl_pool_state_str(rpmemctl_list_pool_state(l, i));
	unsigned nv = rpmemctl_list_pool_versions(l, i);
	char vb[CMD_NUM_MAX];

	if (!rpmemctl_list_pool_pending(l, i) && !nv)
		return st;
	if (!nv)
		snprintf(buf, len, "%s (rollback: %llu)", st,
			 (unsigned long long)rpmemctl_list_pool_undo_generation(l, i));
	else
		snprintf(buf, len, "%s (%u version%s, %s)", st, nv,
			 nv == 1 ? "" : "s",
			 rpmemctl_size_format(
				 rpmemctl_list_pool_versions_bytes(l, i), vb,
				 sizeof(vb)));
	return buf;
}

/* region_versions_bytes -- the bytes of the versions of region r's pools */
static uint64_t region_versions_bytes(const struct rpmemctl_list *l,
				      const char *r)
{
	uint64_t b = 0;

	for (unsigned i = 0; i < rpmemctl_list_pool_count(l); i++)
		if (!strcmp(rpmemctl_list_pool_region(l, i), r))
			b += rpmemctl_list_pool_versions_bytes(l, i);
	return b;
}

/* region_ns -- the namespace region i lies on (index into st), or -1 */
static int region_ns(const struct rpmemctl_list *l,
		     const struct rpmemctl_status *st, unsigned i)
{
	return rpmemctl_status_region_namespace(
		st, rpmemctl_list_region_name(l, i));
}

/*
 * regions_print -- the regions table; with DEVICE, MODE and NUMA columns
 * when a region lies on a PMem namespace
 */
static int regions_print(struct rpmemctl_ctx *ctx,
			 const struct rpmemctl_list *l,
			 const struct rpmemctl_status *st)
{
	static const char *const rhdr[] = { "REGION", "TYPE", "SIZE", "FREE",
					    "DEVICE", "MODE", "NUMA", "PATH" };
	unsigned i, n = rpmemctl_list_region_count(l), ncols = 5;
	struct cmd_table t;
	char b[CMD_TABLE_MAX_COLS][CMD_BYTES_MAX];
	int ret;

	for (i = 0; i < n; i++)
		if (region_ns(l, st, i) >= 0)
			ncols = 8;
	if (ncols == 8) {
		ret = cmd_table_init(&t, 8, 0, rhdr);
	} else {
		static const char *const hdr[] = { "REGION", "TYPE", "SIZE",
						   "FREE", "PATH" };
		ret = cmd_table_init(&t, 5, 0, hdr);
	}
	for (i = 0; !ret && i < n; i++) {
		int k = region_ns(l, st, i);
		const char *row[CMD_TABLE_MAX_COLS] = {
			rpmemctl_list_region_name(l, i),
			rpmemctl_list_region_type(l, i),
			rpmemctl_size_format(rpmemctl_list_region_size(l, i),
					     b[0], sizeof(b[0])),
			rpmemctl_size_format(rpmemctl_list_region_free(l, i),
					     b[1], sizeof(b[1])),
		};
		if (ncols == 5) {
			row[4] = rpmemctl_list_region_path(l, i);
		} else {
			if (k >= 0) {
				int numa = rpmemctl_status_namespace_numa_node(
					st, (unsigned)k);
				row[4] = rpmemctl_status_namespace_device(
					st, (unsigned)k);
				row[5] = rpmemctl_status_namespace_mode(
					st, (unsigned)k);
				/* NULL (unknown) prints as "-" */
				row[6] = numa < 0 ? NULL :
					cmd_fmt_u64((uint64_t)numa, b[2],
						    sizeof(b[2]));
			}
			row[7] = rpmemctl_list_region_path(l, i);
		}
		ret = cmd_table_row(&t, row);
	}
	if (ret) {
		cmd_table_free(&t);
		cmd_err(ctx, "cannot format the listing: %s", strerror(-ret));
		return CMD_EXIT_INTERNAL;
	}
	if (n)
		cmd_table_print(&t, stdout);
	else
		cmd_info(ctx, "no regions");
	cmd_table_free(&t);
	return 0;
}

/* cmd_list_print -- regions and pools tables; pool "" = all */
int cmd_list_print(struct rpmemctl_ctx *ctx, const struct rpmemctl_list *l,
		   const struct rpmemctl_status *st, const char *pool,
		   int detail)
{
	static const char *const phdr[] = { "REGION", "POOL", "SIZE", "STATE",
					    "GENERATION", "DISK", "ROLE" };
	static const char *const dhdr[] = { "POOL", "SIZE", "STATE", "GEN",
					    "DISK", "ROLE", "WRITER",
					    "READERS", "WRITTEN", "FLUSHES",
					    "LAST SYNC", "SOURCE" };
	char b[CMD_TABLE_MAX_COLS][CMD_CELL_MAX];
	struct cmd_table t;
	unsigned i, n;
	int ret;

	n = rpmemctl_list_region_count(l);
	ret = regions_print(ctx, l, st);
	if (ret)
		return ret;

	ret = detail ? cmd_table_init(&t, 12, (1u << 3) | (1u << 7) |
				      (1u << 8) | (1u << 9), dhdr) :
		       cmd_table_init(&t, 7, 1u << 4, phdr);
	for (i = 0; !ret && i < rpmemctl_list_pool_count(l); i++) {
		char name[2 * RPMEMCTL_NAME_MAX + 2];

		if (!pool_match(l, i, pool))
			continue;
		snprintf(name, sizeof(name), "%s/%s",
			 rpmemctl_list_pool_region(l, i),
			 rpmemctl_list_pool_name(l, i));
		if (detail) {
			const char *row[CMD_TABLE_MAX_COLS] = {
				name,
				rpmemctl_size_format(
					rpmemctl_list_pool_size(l, i), b[0],
					sizeof(b[0])),
				state_cell(l, i, b[6], sizeof(b[6])),
				cmd_fmt_u64(rpmemctl_list_pool_generation(l, i),
					    b[1], sizeof(b[1])),
				rpmemctl_disk_state_str(
					rpmemctl_list_pool_disk_state(l, i)),
				rpmemctl_role_str(rpmemctl_list_pool_role(l, i)),
				rpmemctl_list_pool_writer(l, i),
				cmd_fmt_u64(rpmemctl_list_pool_readers(l, i),
					    b[2], sizeof(b[2])),
				rpmemctl_size_format(
					rpmemctl_list_pool_bytes_written(l, i),
					b[3], sizeof(b[3])),
				cmd_fmt_u64(rpmemctl_list_pool_flushes(l, i),
					    b[4], sizeof(b[4])),
				cmd_fmt_time(rpmemctl_list_pool_last_sync(l, i),
					     b[5], sizeof(b[5])),
				rpmemctl_list_pool_source(l, i),
			};
			ret = cmd_table_row(&t, row);
		} else {
			const char *row[CMD_TABLE_MAX_COLS] = {
				rpmemctl_list_pool_region(l, i),
				rpmemctl_list_pool_name(l, i),
				rpmemctl_size_format(
					rpmemctl_list_pool_size(l, i), b[0],
					sizeof(b[0])),
				state_cell(l, i, b[6], sizeof(b[6])),
				cmd_fmt_u64(rpmemctl_list_pool_generation(l, i),
					    b[1], sizeof(b[1])),
				rpmemctl_disk_state_str(
					rpmemctl_list_pool_disk_state(l, i)),
				rpmemctl_role_str(rpmemctl_list_pool_role(l, i)),
			};
			ret = cmd_table_row(&t, row);
		}
	}
	if (ret)
		goto err_table;
	if (n)
		fputc('\n', stdout);
	if (t.nrows > 1)
		cmd_table_print(&t, stdout);
	else
		cmd_info(ctx, "no pools");
	cmd_table_free(&t);
	return 0;

err_table:
	cmd_table_free(&t);
	cmd_err(ctx, "cannot format the listing: %s", strerror(-ret));
	return CMD_EXIT_INTERNAL;
}


/*
 * gens_json -- pool i's "role", "disk" (its disk state) and
 * "generations" (newest first)
 */
static void gens_json(struct json *j, const struct rpmemctl_list *l,
		      unsigned i)
{
	uint64_t ids[RPMEMCTL_GENERATIONS_MAX];
	char hex[CMD_HEX64_MAX];
	unsigned n = rpmemctl_list_pool_generations(l, i, ids,
						    RPMEMCTL_GENERATIONS_MAX);
	json_str(j, "role", rpmemctl_role_str(rpmemctl_list_pool_role(l, i)));
	json_str(j, "disk",
		 rpmemctl_disk_state_str(rpmemctl_list_pool_disk_state(l, i)));
	json_arr_begin(j, "generations");
	for (unsigned k = 0; k < n && k < RPMEMCTL_GENERATIONS_MAX; k++) {
		snprintf(hex, sizeof(hex), "%016llx",
			 (unsigned long long)ids[k]);
		json_str(j, NULL, hex);
	}
	json_arr_end(j);
}

/* cmd_list_json -- "regions" and "pools" arrays into an open object */
void cmd_list_json(struct json *j, const struct rpmemctl_list *l,
		   const struct rpmemctl_status *st, const char *pool)
{
	unsigned i;
	int k;

	json_arr_begin(j, "regions");
	for (i = 0; i < rpmemctl_list_region_count(l); i++) {
		json_obj_begin(j, NULL);
		json_str(j, "name", rpmemctl_list_region_name(l, i));
		json_str(j, "type", rpmemctl_list_region_type(l, i));
		json_str(j, "path", rpmemctl_list_region_path(l, i));
		json_u64(j, "size", rpmemctl_list_region_size(l, i));
		json_u64(j, "free", rpmemctl_list_region_free(l, i));
		json_u64(j, "versions_bytes",
			 region_versions_bytes(l,
					       rpmemctl_list_region_name(l, i)));
		k = region_ns(l, st, i);
		if (k < 0) {
			json_null(j, "namespace");
		} else {
			json_obj_begin(j, "namespace");
			json_str(j, "name", rpmemctl_status_namespace_name(
						    st, (unsigned)k));
			json_str(j, "device", rpmemctl_status_namespace_device(
						      st, (unsigned)k));
			json_str(j, "mode", rpmemctl_status_namespace_mode(
						    st, (unsigned)k));
			json_i64(j, "numa_node",
				 rpmemctl_status_namespace_numa_node(
					 st, (unsigned)k));
			json_obj_end(j);
		}
		json_obj_end(j);
	}
	json_arr_end(j);

	json_arr_begin(j, "pools");
	for (i = 0; i < rpmemctl_list_pool_count(l); i++) {
		if (!pool_match(l, i, pool))
			continue;
		json_obj_begin(j, NULL);
		json_str(j, "region", rpmemctl_list_pool_region(l, i));
		json_str(j, "name", rpmemctl_list_pool_name(l, i));
		json_u64(j, "size", rpmemctl_list_pool_size(l, i));
		json_str(j, "state", rpmemctl_pool_state_str(
					     rpmemctl_list_pool_state(l, i)));
		json_u64(j, "generation", rpmemctl_list_pool_generation(l, i));
		json_bool(j, "pending", rpmemctl_list_pool_pending(l, i));
		if (rpmemctl_list_pool_pending(l, i))
			json_u64(j, "recoverable_generation",
				 rpmemctl_list_pool_undo_generation(l, i));
		else
			json_null(j, "recoverable_generation");
		json_u64(j, "undo_bytes", rpmemctl_list_pool_undo_bytes(l, i));
		gens_json(j, l, i);
		json_u64(j, "versions", rpmemctl_list_pool_versions(l, i));
		json_u64(j, "versions_bytes",
			 rpmemctl_list_pool_versions_bytes(l, i));
		json_bool(j, "damaged", rpmemctl_list_pool_damaged(l, i) != 0);
		json_u64(j, "damaged_bytes", rpmemctl_list_pool_damaged(l, i));
		if (rpmemctl_list_pool_split_brain(l, i))
			json_u64(j, "split_brain_at",
				 rpmemctl_list_pool_split_brain(l, i));
		else
			json_null(j, "split_brain_at");
		json_str(j, "uuid", rpmemctl_list_pool_uuid(l, i));
		json_u64(j, "created_at", rpmemctl_list_pool_created(l, i));
		json_u64(j, "last_sync_at",
			 rpmemctl_list_pool_last_sync(l, i));
		json_str(j, "source", rpmemctl_list_pool_source(l, i));
		json_str(j, "writer", rpmemctl_list_pool_writer(l, i));
		json_u64(j, "readers", rpmemctl_list_pool_readers(l, i));
		json_u64(j, "bytes_written",
			 rpmemctl_list_pool_bytes_written(l, i));
		json_u64(j, "flushes", rpmemctl_list_pool_flushes(l, i));
		json_obj_end(j);
	}
	json_arr_end(j);
}

/* list_has_pool -- the filtered pool is in the listing */
static int list_has_pool(const struct rpmemctl_list *l, const char *pool)
{
	unsigned i;

	for (i = 0; i < rpmemctl_list_pool_count(l); i++)
		if (pool_match(l, i, pool))
			return 1;
	return 0;
}

/* cmd_list -- rpmemctl list */
int cmd_list(int argc, char **argv, struct rpmemctl_ctx *ctx)
{
	struct cmd_open o = { 1, 1, 0, NULL, RPMEMCTL_TRANSPORT_AUTO };
	struct rpmemctl_session *sess = NULL;
	struct rpmemctl_status *st = NULL;
	struct rpmemctl_list *list = NULL;
	struct cmd_target t;
	char hp[CMD_HP_MAX];
	struct json j;
	int c, code = 0;

	while ((c = cmd_getopt(ctx, argc, argv, CMD_COMMON_SHORT "jt:",
			       list_opts, list_usage, &code)) != -1) {
		switch (c) {
		case -2:
			return code;
		case 't':
			code = cmd_parse_transport(ctx, optarg, &o.transport);
			if (code)
				return code;
			break;
		}
	}
	code = cmd_open_target(ctx, argc, argv, &o, &t, hp, &sess);
	if (code)
		return code;
	code = rpmemctl_list_get(sess, t.region, &list);
	if (code) {
		code = cmd_remote_err(ctx, sess, code, NULL,
				      "cannot list %s%s%s", hp,
				      t.region[0] ? " region " : "", t.region);
		goto err_session;
	}
	/* the namespaces under the regions come with the daemon's status */
	code = rpmemctl_status_get(sess, &st);
	if (code) {
		code = cmd_remote_err(ctx, sess, code, NULL,
				      "cannot get the PMem namespaces of %s",
				      hp);
		goto err_list;
	}
	if (t.pool[0] && !list_has_pool(list, t.pool)) {
		cmd_err(ctx, "pool '%s/%s' not found on %s; see 'rpmemctl list %s/%s'",
			t.region, t.pool, hp, hp, t.region);
		code = CMD_EXIT_REFUSED;
		goto err_list;
	}

	if (ctx->json) {
		json_begin(&j, stdout, "list", hp);
		json_str(&j, "server", rpmemctl_session_server(sess));
		cmd_list_json(&j, list, st, t.pool);
		json_end(&j);
	} else {
		code = cmd_list_print(ctx, list, st, t.pool, 0);
	}

err_list:
	rpmemctl_status_free(&st);
	rpmemctl_list_free(&list);
err_session:
	rpmemctl_session_close(&sess);
	return code;
}
