/* SPDX-License-Identifier: BSD-3-Clause */
/* bench.c -- rpmemctl bench: persist latency and streaming bandwidth */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "cmd.h"
#include "json.h"

#define BENCH_CHUNK (1u << 20) /* streaming write size */
/* the largest I/O one request carries, so that one --io-size is one request */
#define BENCH_IO_MAX (1u << 20)
#define BENCH_WARMUP 10u
#define BENCH_MAX_COUNT 100000000ul

static const char bench_usage[] =
	"usage: rpmemctl bench [options] HOST[:PORT]/REGION/POOL\n"
	"\n"
	"Measure the latency of a write + flush (persist) of --io-size bytes,\n"
	"--count times, and the bandwidth of writing --size bytes in 1 MiB\n"
	"writes with one final flush. A missing pool is created with --size\n"
	"and removed afterwards; an existing pool is overwritten.\n"
	"\n"
	"  -s, --size SIZE        bytes streamed (and pool size if created;\n"
	"                         default 64M)\n"
	"  -i, --io-size SIZE     bytes per persist (default 4K)\n"
	"  -c, --count N          persists measured (default 1000)\n"
	"  -j, --json             one JSON object on stdout\n"
	"  -t, --transport T      auto, tcp or rdma (default auto)\n"
	"  -v, --verbose          more detail on stderr\n"
	"  -q, --quiet            no informational lines\n"
	"  -h, --help             this help\n";

static const struct option bench_opts[] = {
	CMD_COMMON_OPTS,
	{ "size", required_argument, NULL, 's' },
	{ "io-size", required_argument, NULL, 'i' },
	{ "count", required_argument, NULL, 'c' },
	{ "json", no_argument, NULL, 'j' },
	{ "transport", required_argument, NULL, 't' },
	{ NULL, 0, NULL, 0 },
};

struct bench_res {
	double median_us, p99_us, min_us;
	double bw_mib_s;
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* fill -- a cheap non-repeating pattern (xorshift64) */
static void fill(void *buf, size_t len)
{
	uint64_t x = cmd_now_ns() | 1, *p = buf;
	size_t i;

	for (i = 0; i < len / 8; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		p[i] = x;
	}
}

/* bench_run -- the two measurements; returns 0 or -errno */
static int bench_run(struct rpmemctl_pool *pool, char *buf, uint64_t bw_size,
		     uint64_t io_size, unsigned long count,
		     struct bench_res *res)
{
	uint64_t slots = bw_size / io_size, *lat, t0, off, n;
	unsigned long i;
	int ret = 0;

	lat = calloc(count, sizeof(*lat));
	if (!lat)
		return -ENOMEM;
	for (i = 0; i < BENCH_WARMUP + count; i++) {
		off = (i % slots) * io_size;
		t0 = cmd_now_ns();
		ret = rpmemctl_pool_persist(pool, buf + off, off,
					    (size_t)io_size);
		if (ret)
			goto out;
		if (i >= BENCH_WARMUP)
			lat[i - BENCH_WARMUP] = cmd_now_ns() - t0;
	}
	qsort(lat, count, sizeof(*lat), cmp_u64);
	res->min_us = (double)lat[0] / 1e3;
	res->median_us = count % 2 ? (double)lat[count / 2] / 1e3 :
		(double)(lat[count / 2 - 1] + lat[count / 2]) / 2e3;
	res->p99_us = (double)lat[(count * 99 + 99) / 100 - 1] / 1e3;

	t0 = cmd_now_ns();
	for (off = 0; off < bw_size; off += n) {
		n = bw_size - off < BENCH_CHUNK ? bw_size - off : BENCH_CHUNK;
		ret = rpmemctl_pool_write(pool, buf + off, off, (size_t)n);
		if (ret)
			goto out;
	}
	ret = rpmemctl_pool_flush(pool, 0, bw_size);
	if (ret)
		goto out;
	t0 = cmd_now_ns() - t0;
	res->bw_mib_s = t0 ? (double)bw_size / (1024.0 * 1024.0) /
			     ((double)t0 / 1e9) : 0;
out:
	free(lat);
	return ret;
}

/* parse_count -- a decimal count from 1 to BENCH_MAX_COUNT */
static int parse_count(struct rpmemctl_ctx *ctx, const char *s,
		       unsigned long *out)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || *s == '-' || v == 0 ||
	    v > BENCH_MAX_COUNT)
		return cmd_usage_error(ctx,
			"invalid count '%s' (1 to %lu)", s, BENCH_MAX_COUNT);
	*out = v;
	return 0;
}

/* cmd_bench -- rpmemctl bench */
int cmd_bench(int argc, char **argv, struct rpmemctl_ctx *ctx)
{
	enum rpmemctl_transport xport = RPMEMCTL_TRANSPORT_AUTO;
	struct rpmemctl_session *sess = NULL;
	struct rpmemctl_pool *pool = NULL;
	uint64_t size = 64ull << 20, io_size = 4096, psize, bw_size;
	unsigned long count = 1000;
	struct bench_res res = { 0 };
	struct cmd_target t;
	char hp[CMD_HP_MAX], tgt[CMD_TARGET_MAX];
	char a[CMD_NUM_MAX], b[CMD_NUM_MAX];
	const char *xname;
	struct rpmemctl_open_info info;
	int c, ret, code = 0, created = 0;
	char *buf = MAP_FAILED;
	struct json j;

	while ((c = cmd_getopt(ctx, argc, argv, CMD_COMMON_SHORT "s:i:c:jt:",
			       bench_opts, bench_usage, &code)) != -1) {
		switch (c) {
		case -2:
			return code;
		case 's':
			code = cmd_parse_size(ctx, "size", optarg, &size);
			break;
		case 'i':
			code = cmd_parse_size(ctx, "io size", optarg, &io_size);
			break;
		case 'c':
			code = parse_count(ctx, optarg, &count);
			break;
		case 't':
			code = cmd_parse_transport(ctx, optarg, &xport);
			break;
		}
		if (code)
			return code;
	}
	code = cmd_check_args(ctx, argc, argv, 1, 1);
	if (code)
		return code;
	if (io_size > size)
		return cmd_usage_error(ctx, "--io-size is larger than --size");
	if (io_size > BENCH_IO_MAX)
		return cmd_usage_error(ctx, "--io-size is larger than %u",
				       BENCH_IO_MAX);
	code = cmd_parse_target(ctx, argv[optind], RPMEMCTL_TARGET_NEED_POOL,
				 &t);
	if (code)
		return code;
	cmd_hostport(&t, hp, sizeof(hp));
	cmd_target_str(&t, tgt, sizeof(tgt));

	code = cmd_connect(ctx, &t, xport, &sess);
	if (code)
		return code;
	/* any size will do; a missing pool is created with --size */
	ret = rpmemctl_pool_open_or_create(sess, t.region, t.pool, 0,
					   RPMEMCTL_OPEN_RDWR, &pool, &info);
	if (ret == -ENOENT)
		ret = rpmemctl_pool_open_or_create(sess, t.region, t.pool,
						   size, RPMEMCTL_OPEN_RDWR |
						   RPMEMCTL_OPEN_CREATE, &pool,
						   &info);
	created = info.created;
	if (created)
		cmd_info(ctx, "created pool '%s/%s' of %s on %s", t.region,
			 t.pool, rpmemctl_size_format(size, a, sizeof(a)), hp);
	if (ret && info.create_failed) {
		code = cmd_remote_err(ctx, sess, ret, NULL,
				      "cannot create pool '%s/%s' on %s",
				      t.region, t.pool, hp);
		goto err_session;
	}
	if (ret) {
		code = cmd_remote_err(ctx, sess, ret, NULL,
				      "cannot open pool '%s/%s' on %s",
				      t.region, t.pool, hp);
		goto err_remove;
	}
	psize = rpmemctl_pool_get_size(pool);
	xname = rpmemctl_pool_get_transport(pool);
	bw_size = size < psize ? size : psize;
	if (io_size > bw_size) {
		cmd_err(ctx, "pool %s is %s, smaller than --io-size %s", tgt,
			rpmemctl_size_format(psize, a, sizeof(a)),
			rpmemctl_size_format(io_size, b, sizeof(b)));
		code = CMD_EXIT_USAGE;
		goto err_pool;
	}
	if (!created)
		cmd_warn(ctx, "pool %s exists: its contents are overwritten",
			 tgt);

	buf = mmap(NULL, (size_t)bw_size, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED) {
		cmd_err(ctx, "cannot allocate %s: %s",
			rpmemctl_size_format(bw_size, a, sizeof(a)),
			strerror(errno));
		code = CMD_EXIT_INTERNAL;
		goto err_pool;
	}
	fill(buf, (size_t)bw_size);
	/* the buffer mirrors the whole pool only if it is as large */
	if (bw_size == psize) {
		ret = rpmemctl_pool_attach(pool, buf, (size_t)bw_size);
		if (ret)
			cmd_dbg(ctx, "attaching the buffer: %s",
				rpmemctl_pool_errmsg(pool));
	}

	ret = rpmemctl_pool_set_state(pool, RPMEMCTL_POOL_SYNCING,
				      "rpmemctl bench");
	if (!ret)
		ret = bench_run(pool, buf, bw_size, io_size, count, &res);
	if (!ret)
		ret = rpmemctl_pool_set_state(pool, RPMEMCTL_POOL_CONSISTENT,
					      "rpmemctl bench");
	if (ret) {
		code = cmd_remote_err(ctx, sess, ret, NULL,
				      "benchmark on pool %s failed", tgt);
		goto err_buf;
	}

	if (ctx->json) {
		json_begin(&j, stdout, "bench", hp);
		json_str(&j, "region", t.region);
		json_str(&j, "pool", t.pool);
		json_str(&j, "transport", xname);
		json_u64(&j, "io_size", io_size);
		json_u64(&j, "count", count);
		json_double(&j, "lat_median_us", res.median_us);
		json_double(&j, "lat_p99_us", res.p99_us);
		json_double(&j, "lat_min_us", res.min_us);
		json_u64(&j, "bw_size", bw_size);
		json_double(&j, "bw_mib_s", res.bw_mib_s);
		json_bool(&j, "created", created);
		json_end(&j);
	} else {
		printf("bench %s, transport %s\n", tgt, xname);
		printf("persist latency (%s write + flush, %lu times): "
		       "median %.1f us, p99 %.1f us, min %.1f us\n",
		       rpmemctl_size_format(io_size, a, sizeof(a)), count,
		       res.median_us, res.p99_us, res.min_us);
		printf("bandwidth (%s in 1 MiB writes + 1 flush): %.1f MiB/s\n",
		       rpmemctl_size_format(bw_size, b, sizeof(b)),
		       res.bw_mib_s);
	}

err_buf:
	munmap(buf, (size_t)bw_size);
err_pool:
	ret = rpmemctl_pool_close(&pool);
	if (ret)
		cmd_dbg(ctx, "closing the pool: %s",
			rpmemctl_session_errmsg(sess));
err_remove:
	if (created) {
		ret = rpmemctl_pool_remove(sess, t.region, t.pool, 0);
		if (ret)
			ret = rpmemctl_pool_remove(sess, t.region, t.pool,
						   RPMEMCTL_REMOVE_FORCE);
		if (ret) {
			cmd_remote_err(ctx, sess, ret, "remove it by hand",
				       "cannot remove pool '%s/%s' on %s",
				       t.region, t.pool, hp);
			if (!code)
				code = cmd_exit_code(ret);
		} else {
			cmd_info(ctx, "removed pool '%s/%s' on %s", t.region,
				 t.pool, hp);
		}
	}
err_session:
	rpmemctl_session_close(&sess);
	return code;
}
