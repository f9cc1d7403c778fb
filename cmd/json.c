/* SPDX-License-Identifier: BSD-3-Clause */
/* json.c -- a tiny streaming JSON emitter for rpmemctl --json */

/*
 * With --json every command writes exactly one JSON object, on one line,
 * to stdout and nothing else there (errors still go to stderr, and on an
 * error no object is written). Keys are snake_case, numbers are numbers,
 * sizes and offsets are in bytes, times are unix seconds unless the key
 * says otherwise. Strings are UTF-8 as received; '"', '\\' and control
 * characters are escaped. See docs/JSON.md (kept in sync with this).
 *
 * list, status:
 *   { "target": "host:port", "server": "rpmemd 0.1.0 host",
 *     "pid": N, "uptime": S, "rdma": bool, "max_sessions": N,  (status)
 *     "namespaces": [ { "name", "nd_region", "device", "mode", "size", (status)
 *                       "align", "numa_node", "mount", "regions": [] } ],
 *     "regions": [ { "name", "type", "path", "size", "free",
 *                    "namespace": null | { "name", "device", "mode",
 *                                          "numa_node" } } ],
 *     "pools": [ { "region", "name", "size", "state", "generation",
 *                  "uuid", "created", "last_sync", "source", "writer",
 *                  "readers", "bytes_written", "flushes" } ],
 *     "sessions": [ { "id", "peer", "client", "transport", "pool",   (status)
 *                     "mode", "bytes_written", "bytes_read", "flushes",
 *                     "last_flush_ns" } ] }
 *   state is "empty", "syncing" or "consistent"; last_sync 0 = never;
 *   writer "" = none; numa_node -1 = unknown; namespaces [] without PMem.
 *
 * create: { "target", "region", "pool", "size", "created": true }
 * remove: { "target", "region", "pool", "forced", "removed": true }
 *
 * mirror, sync, verify:
 *   { "command": "mirror"|"sync"|"verify",
 *     "local": path as given, "target": "host:port/region/pool",
 *     "mode": "mirror"|"push"|"pull"|"verify", "dry_run": bool,
 *     "transport": "tcp"|"rdma", "size", "block_size", "blocks_total",
 *     "blocks_changed", "bytes_changed", "bytes_transferred",
 *     "data_bytes", "generation", "elapsed_s", "mib_per_s",
 *     "created_remote": bool, "created_local": bool, "identical": bool,
 *     "ranges": [ { "offset", "length" } ] (verify and dry runs only) }
 *   blocks_changed counts block_size blocks that differed (or would),
 *   bytes_changed the bytes of the differing sub-blocks, data_bytes the
 *   pool data moved and bytes_transferred all payload moved (data and
 *   hashes). identical: the two copies are (after a push, mirror or pull:
 *   are now) the same. mib_per_s = size / elapsed_s.
 *
 * bench:
 *   { "target", "transport", "io_size", "count", "lat_median_us",
 *     "lat_p99_us", "lat_min_us", "bw_size", "bw_mib_s",
 *     "created_pool": bool }
 */

#include <math.h>

#include "json.h"

/* json_escape -- write s as a quoted JSON string */
void json_escape(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	fputc('"', f);
	for (; *p; p++) {
		switch (*p) {
		case '"':
			fputs("\\\"", f);
			break;
		case '\\':
			fputs("\\\\", f);
			break;
		case '\b':
			fputs("\\b", f);
			break;
		case '\f':
			fputs("\\f", f);
			break;
		case '\n':
			fputs("\\n", f);
			break;
		case '\r':
			fputs("\\r", f);
			break;
		case '\t':
			fputs("\\t", f);
			break;
		default:
			if (*p < 0x20 || *p == 0x7f)
				fprintf(f, "\\u%04x", *p);
			else
				fputc(*p, f); /* UTF-8 passes through */
		}
	}
	fputc('"', f);
}

void json_init(struct json *j, FILE *f)
{
	j->f = f;
	j->depth = 0;
	j->first[0] = 1;
}

/* json_key -- the separator and, inside an object, the key */
static void json_key(struct json *j, const char *key)
{
	if (!j->first[j->depth])
		fputc(',', j->f);
	j->first[j->depth] = 0;
	if (key) {
		json_escape(j->f, key);
		fputc(':', j->f);
	}
}

/* json_open -- start an object or an array */
static void json_open(struct json *j, const char *key, char open, char close)
{
	json_key(j, key);
	fputc(open, j->f);
	if (j->depth + 1 < JSON_MAX_DEPTH) {
		j->depth++;
		j->first[j->depth] = 1;
		j->close[j->depth] = close;
	}
}

static void json_close(struct json *j)
{
	if (j->depth > 0) {
		fputc(j->close[j->depth], j->f);
		j->depth--;
	}
}

void json_obj_begin(struct json *j, const char *key)
{
	json_open(j, key, '{', '}');
}

void json_obj_end(struct json *j)
{
	json_close(j);
}

void json_arr_begin(struct json *j, const char *key)
{
	json_open(j, key, '[', ']');
}

void json_arr_end(struct json *j)
{
	json_close(j);
}

void json_str(struct json *j, const char *key, const char *v)
{
	json_key(j, key);
	if (v)
		json_escape(j->f, v);
	else
		fputs("null", j->f);
}

void json_u64(struct json *j, const char *key, uint64_t v)
{
	json_key(j, key);
	fprintf(j->f, "%llu", (unsigned long long)v);
}

void json_i64(struct json *j, const char *key, int64_t v)
{
	json_key(j, key);
	fprintf(j->f, "%lld", (long long)v);
}

void json_double(struct json *j, const char *key, double v)
{
	json_key(j, key);
	if (!isfinite(v))
		v = 0;
	/* %.6g never gives a bare "." or a leading "+" */
	fprintf(j->f, "%.6g", v);
}

void json_bool(struct json *j, const char *key, int v)
{
	json_key(j, key);
	fputs(v ? "true" : "false", j->f);
}

void json_null(struct json *j, const char *key)
{
	json_key(j, key);
	fputs("null", j->f);
}

/* json_end -- close everything still open and end the line */
void json_end(struct json *j)
{
	while (j->depth > 0)
		json_close(j);
	fputc('\n', j->f);
}
