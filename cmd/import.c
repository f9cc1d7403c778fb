/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * import.c -- rpmemctl import: a pool's image from a byte stream (stdin or
 * a file) that export or a backup tool wrote
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd.h"
#include "json.h"
#include "stream.h"

static const char import_usage[] =
	"usage: rpmemctl import [options] SOURCE HOST[:PORT]/REGION/POOL\n"
	"                      [--size SIZE]\n"
	"\n"
	"Copy an export stream from SOURCE ('-': standard input) into the\n"
	"remote pool, as mirror does: the pool is syncing until every byte is\n"
	"written and flushed, then consistent. The header, each chunk (before\n"
	"it is written) and the trailer are checked: a damaged, truncated or\n"
	"foreign stream is refused (exit 5) and the pool is left as it was\n"
	"(an existing one rolled back, one this import created removed). A\n"
	"missing pool is created with the stream's size.\n"
	"With --raw, SOURCE is a bare image (nothing to check): --size is\n"
	"needed unless SOURCE is a regular file, an input shorter or longer\n"
	"is refused, and an existing pool then stays syncing.\n"
	"An existing pool whose generation history holds writes the stream's\n"
	"history does not (it was promoted and written elsewhere, or the\n"
	"stream is of another pool, a version, or --raw with no history) is\n"
	"refused (exit 4) unless --discard-target.\n"
	"\n"
	"  -s, --size SIZE        the image's size (K, M, G, T)\n"
	"  -f, --force            overwrite an existing pool of that size\n"
	"      --discard-target   with --force: overwrite it even where its\n"
	"                         history holds writes the stream's does not\n"
	"      --raw              SOURCE is a bare image, not an export stream\n"
	"  -j, --json             one JSON object on stdout\n"
	"  -t, --transport T      auto, tcp or rdma (default auto)\n"
	"  -v, --verbose          more detail on stderr\n"
	"  -q, --quiet            no informational lines or progress\n"
	"  -h, --help             this help\n";

static const struct option import_opts[] = {
	CMD_COMMON_OPTS,
	{ "size", required_argument, NULL, 's' },
	{ "force", no_argument, NULL, 'f' },
	{ "json", no_argument, NULL, 'j' },
	{ "transport", required_argument, NULL, 't' },
	{ "raw", no_argument, NULL, OPT_RAW },
	{ "discard-target", no_argument, NULL, OPT_DISCARD_TARGET },
	{ NULL, 0, NULL, 0 },
};

/* read_full -- up to n bytes from fd, fewer only at its end; count or -errno */
static ssize_t read_full(int fd, uint8_t *p, size_t n)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r = read(fd, p + got, n - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			break;
		got += (size_t)r;
	}
	return (ssize_t)got;
}

/* import_bad -- SOURCE is refused for why (printf); CMD_EXIT_LOCAL */
static int import_bad(struct stream *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int import_bad(struct stream *s, const char *fmt, ...)
{
	char nb[STREAM_NAME_MAX], why[CMD_MSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	cmd_err(s->ctx, "cannot import %s: %s; %s",
		stream_name(s, nb, sizeof(nb), "standard input"), why,
		s->pool ? "the import is refused" : "nothing was imported");
	return CMD_EXIT_LOCAL;
}

/*
 * import_header -- SOURCE's frame header, checked; the image's size from
 * it (--size, if given, must agree; a regular file must be as long as
 * the stream of that size). An exit code.
 */
static int import_header(struct stream *s, const struct stat *st)
{
	uint8_t hdr[XSTREAM_HDR_SIZE];
	const char *why = NULL;
	char a[CMD_NUM_MAX];
	ssize_t n = read_full(s->fd, hdr, sizeof(hdr));

	if (n < 0)
		return import_bad(s, "%s", strerror((int)-n));
	if (n == 0)
		return import_bad(s, "it is empty (an export that failed "
				  "before its first byte?)");
	if (n < XSTREAM_HDR_SIZE && !memcmp(hdr, XSTREAM_MAGIC,
					    n < 8 ? (size_t)n : 8))
		return import_bad(s, "it ends inside its header (truncated)");
	if (n < XSTREAM_HDR_SIZE || xstream_header_parse(&s->xs, hdr, &why))
		return import_bad(s, "%s", why ? why :
				  "it is not an rpmem export stream (a bare "
				  "image needs --raw)");
	if (s->size && s->size != s->xs.info.size)
		return import_bad(s, "it holds an image of %" PRIu64 " bytes, "
				  "not the %" PRIu64 " of --size",
				  s->xs.info.size, s->size);
	s->size = s->xs.info.size;
	if (S_ISREG(st->st_mode) &&
	    (uint64_t)st->st_size != xstream_length(s->size))
		return import_bad(s, "it holds %" PRIu64 " bytes, but the "
				  "stream of a %s image has %" PRIu64
				  " (truncated or extended)",
				  (uint64_t)st->st_size,
				  rpmemctl_size_format(s->size, a, sizeof(a)),
				  xstream_length(s->size));
	if (s->xs.info.flags & XSTREAM_F_FORCED)
		cmd_warn(s->ctx, "the stream was exported with --force from "
			 "pool %s, which was not consistent: it may hold a mix "
			 "of two images", s->xs.info.name);
	if (s->xs.info.flags & XSTREAM_F_SALVAGE)
		cmd_warn(s->ctx, "the stream was exported with --salvage from "
			 "a version of pool %s: ranges it could not give are "
			 "zeros", s->xs.info.name);
	cmd_dbg(s->ctx, "export stream of %s, generation %" PRIu64
		", uuid %s", s->xs.info.name, s->xs.info.generation,
		s->xs.info.uuid[0] ? s->xs.info.uuid : "unknown");
	return 0;
}

/*
 * import_source -- open SOURCE ('-': stdin) and read its header; with
 * --raw a regular file gives the default size and must have exactly the
 * size asked for. Exit code.
 */
static int import_source(struct stream *s)
{
	struct stat st;

	if (!strcmp(s->path, "-"))
		s->fd = STDIN_FILENO;
	else if ((s->fd = open(s->path, O_RDONLY | O_CLOEXEC)) < 0) {
		cmd_err(s->ctx, "cannot open '%s': %s", s->path,
			strerror(errno));
		return CMD_EXIT_LOCAL;
	}
	if (fstat(s->fd, &st)) {
		cmd_err(s->ctx, "cannot stat '%s': %s", s->path,
			strerror(errno));
		return CMD_EXIT_LOCAL;
	}
	if (!s->raw)
		return xstream_init(&s->xs) ? CMD_EXIT_INTERNAL :
					      import_header(s, &st);
	if (!S_ISREG(st.st_mode)) {
		if (s->size)
			return 0;
		return cmd_usage_error(s->ctx, "--size is needed: %s is not "
				       "a regular file",
				       s->fd ? "SOURCE" : "standard input");
	}
	if (!s->size)
		s->size = (uint64_t)st.st_size;
	if ((uint64_t)st.st_size != s->size) {
		cmd_err(s->ctx, "'%s' holds %" PRIu64 " bytes, not the %" PRIu64
			" of --size; nothing was imported", s->path,
			(uint64_t)st.st_size, s->size);
		return CMD_EXIT_LOCAL;
	}
	if (!s->size)
		return cmd_usage_error(s->ctx, "'%s' is empty", s->path);
	return 0;
}

/* import_ids -- the stream's history (none for --raw, format 1, --at) */
static void import_ids(const struct stream *s, struct rpmemctl_generations *g)
{
	memset(g, 0, sizeof(*g));
	if (s->raw || !(s->xs.info.flags & XSTREAM_F_HISTORY))
		return;
	g->count = s->xs.info.nids;
	memcpy(g->ids, s->xs.info.ids, g->count * sizeof(g->ids[0]));
}

/*
 * import_gen_check -- an existing pool is overwritten only if its history
 * holds no write the stream's does not (the stream is the pusher: same,
 * or ahead of it), or with --discard-target; an exit code
 */
static int import_gen_check(struct stream *s)
{
	struct rpmemctl_generations st, pg;
	const char *what;
	int cmp, ret = rpmemctl_pool_get_generations(s->pool, &pg);

	if (ret == -ENOTSUP)
		return 0; /* an older target keeps no histories */
	if (ret)
		return cmd_remote_err(s->ctx, s->sess, ret, NULL,
				      "cannot read the generation history of "
				      "pool %s", s->target);
	import_ids(s, &st);
	cmp = rpmemctl_generations_compare(&st, &pg);
	cmd_dbg(s->ctx, "generation histories of the stream and pool %s: %s",
		s->target, rpmemctl_gen_cmp_str(cmp));
	if (!pg.count || cmp == RPMEMCTL_GEN_SAME || cmp == RPMEMCTL_GEN_AHEAD)
		return 0;
	if (s->discard) {
		cmd_warn(s->ctx, "pool %s holds writes the stream does not "
			 "(%s); --discard-target overwrites them", s->target,
			 rpmemctl_gen_cmp_str(cmp));
		return 0;
	}
	if (s->raw)
		what = "a raw image carries no history";
	else if (s->xs.info.flags & XSTREAM_F_VERSION)
		what = "the stream is an older version of its pool (--at)";
	else if (!st.count)
		what = "the stream carries no history";
	else if (cmp == RPMEMCTL_GEN_BEHIND)
		what = "it was written since the stream was exported";
	else if (cmp == RPMEMCTL_GEN_DIVERGED)
		what = "both were written since they last agreed";
	else
		what = "they share no writes (another pool's stream?)";
	cmd_err(s->ctx, "pool %s holds writes the stream does not (%s): the "
		"import is refused and the pool is unchanged (overwrite them "
		"with --discard-target)", s->target, what);
	return CMD_EXIT_REFUSED;
}

/*
 * import_open -- open (or create) the pool for writing; an existing pool
 * is overwritten only with --force. *created says if we created it.
 */
static int import_open(struct stream *s, int *created)
{
	struct rpmemctl_open_info info = { 0 };
	char sz[CMD_NUM_MAX];
	int ret;

	ret = rpmemctl_pool_open_or_create(s->sess, s->t.region, s->t.pool,
					   s->size, RPMEMCTL_OPEN_RDWR |
					   RPMEMCTL_OPEN_CREATE, &s->pool,
					   &info);
	*created = info.created;
	if (ret)
		return cmd_remote_err(s->ctx, s->sess, ret, NULL,
				      "cannot %s pool '%s/%s' on %s",
				      info.create_failed ? "create" : "open",
				      s->t.region, s->t.pool, s->hp);
	if (info.created) {
		cmd_info(s->ctx, "created pool '%s/%s' of %s on %s",
			 s->t.region, s->t.pool,
			 rpmemctl_size_format(s->size, sz, sizeof(sz)), s->hp);
		return 0;
	}
	if (s->force)
		return import_gen_check(s);
	cmd_err(s->ctx, "pool %s exists; importing would overwrite it (use "
		"--force, or remove it first)", s->target);
	return CMD_EXIT_REFUSED;
}

/* import_bad_length -- the input's length is wrong: say so; exit code */
static int import_bad_length(struct stream *s, uint64_t got, int longer)
{
	char nb[STREAM_NAME_MAX];
	const char *in = stream_name(s, nb, sizeof(nb), "standard input");

	if (longer)
		cmd_err(s->ctx, "%s holds more than the %" PRIu64 " bytes of "
			"--size; the import is refused and pool %s is not "
			"consistent", in, s->size, s->target);
	else
		cmd_err(s->ctx, "%s ended after %" PRIu64 " of %" PRIu64
			" bytes; the import is refused and pool %s is not "
			"consistent", in, got, s->size, s->target);
	return CMD_EXIT_LOCAL;
}

/* import_raw -- a bare image's bytes into the pool, one more read */
static int import_raw(struct stream *s)
{
	char nb[STREAM_NAME_MAX];
	uint64_t off = 0;
	ssize_t n;
	int ret = 0;

	while (!ret && off < s->size) {
		size_t want = s->size - off < STREAM_CHUNK ?
				      (size_t)(s->size - off) : STREAM_CHUNK;

		n = read_full(s->fd, s->buf, want);
		if (n < 0) {
			cmd_err(s->ctx, "cannot read %s: %s",
				stream_name(s, nb, sizeof(nb),
					    "standard input"),
				strerror((int)-n));
			return CMD_EXIT_LOCAL;
		}
		if (n > 0)
			ret = rpmemctl_pool_write(s->pool, s->buf, off,
						  (size_t)n);
		off += (uint64_t)n;
		if ((size_t)n < want)
			return ret ? cmd_remote_err(s->ctx, s->sess, ret,
						    NULL, "cannot write pool %s",
						    s->target) :
				     import_bad_length(s, off, 0);
		cmd_progress_cb(off, s->size, &s->prog);
	}
	if (!ret && (n = read_full(s->fd, s->buf, 1)) != 0)
		return n < 0 ? CMD_EXIT_LOCAL : import_bad_length(s, off, 1);
	return ret ? cmd_remote_err(s->ctx, s->sess, ret, NULL,
				    "cannot write pool %s", s->target) :
		     0;
}

/*
 * import_frames -- a stream's chunks, each checked against its hash
 * before it is written, then its trailer and its end; an exit code
 */
static int import_frames(struct stream *s)
{
	uint8_t tr[XSTREAM_TRAILER_SIZE];
	const char *why = NULL;
	uint64_t off;
	ssize_t n;
	int ret;

	for (off = 0; off < s->size; off += XSTREAM_CHUNK) {
		size_t k = s->size - off < XSTREAM_CHUNK ?
				   (size_t)(s->size - off) : XSTREAM_CHUNK;

		n = read_full(s->fd, s->buf, k + XSTREAM_HASH_SIZE);
		if (n < 0)
			return import_bad(s, "%s", strerror((int)-n));
		if ((size_t)n < k + XSTREAM_HASH_SIZE)
			return import_bad(s, "it ends after %" PRIu64 " of "
					  "its %" PRIu64 " image bytes "
					  "(truncated)", off + (uint64_t)
					  (n < (ssize_t)k ? n : (ssize_t)k),
					  s->size);
		if (!xstream_chunk_ok(&s->xs, s->buf, k, s->buf + k))
			return import_bad(s, "chunk %" PRIu64 " (bytes %"
					  PRIu64 " to %" PRIu64 " of the "
					  "image) does not match its hash "
					  "(damaged)", off / XSTREAM_CHUNK,
					  off, off + k - 1);
		ret = rpmemctl_pool_write(s->pool, s->buf, off, k);
		if (ret)
			return cmd_remote_err(s->ctx, s->sess, ret, NULL,
					      "cannot write pool %s",
					      s->target);
		cmd_progress_cb(off + k, s->size, &s->prog);
	}
	n = read_full(s->fd, tr, sizeof(tr));
	if (n < 0)
		return import_bad(s, "%s", strerror((int)-n));
	if (n < (ssize_t)sizeof(tr))
		return import_bad(s, "it ends %s its trailer (truncated: an "
				  "export that failed writes none)",
				  n ? "inside" : "before");
	if (xstream_trailer_ok(&s->xs, tr, &why))
		return import_bad(s, "%s", why);
	if ((n = read_full(s->fd, s->buf, 1)) != 0)
		return n < 0 ? import_bad(s, "%s", strerror((int)-n)) :
			       import_bad(s, "it holds bytes after its "
					  "trailer");
	return 0;
}

/*
 * import_fresh_id -- a stream without a history (--raw, --at, format 1)
 * over a pool that has one: a new id in front of the pool's ids, as for
 * writes no copy saw, so a file whose history is the pool's former one is
 * behind it and cannot push over the imported image as "same"; 0 with g
 * set, 1 if the pool keeps none (nothing to adopt)
 */
static int import_fresh_id(struct stream *s, struct rpmemctl_generations *g)
{
	uint64_t id = 0;

	if (rpmemctl_pool_get_generations(s->pool, g) || !g->count)
		return 1;
	do {
		if (getrandom(&id, sizeof(id), 0) != (ssize_t)sizeof(id))
			return 1;
		id &= ~(1ull << 63); /* bit 63 marks a promotion's id */
	} while (!id);
	if (g->count == RPMEMCTL_GENERATIONS_MAX)
		g->count--;
	memmove(g->ids + 1, g->ids, g->count * sizeof(g->ids[0]));
	g->ids[0] = id;
	g->count++;
	return 0;
}

/*
 * import_adopt -- the pool, now holding the stream's image, takes the
 * stream's history (none for --raw, --at, format 1: a new id in front of
 * its own), so
 * an older stream of it is refused next; a failure is a warning (the
 * image is in, consistent)
 */
static void import_adopt(struct stream *s)
{
	struct rpmemctl_generations g;
	int ret;

	import_ids(s, &g);
	if (!g.count && import_fresh_id(s, &g))
		return;
	ret = rpmemctl_pool_adopt_generations(s->pool, g.ids, g.count);
	if (ret && ret != -ENOTSUP) /* -ENOTSUP: an older target, none */
		cmd_warn(s->ctx, "pool %s keeps its former generation history: "
			 "%s", s->target, rpmemctl_session_errmsg(s->sess));
}

/* import_copy -- syncing, SOURCE's bytes, flush, consistent; exit code */
static int import_copy(struct stream *s, const char *src)
{
	int code, ret;

	ret = rpmemctl_pool_set_state(s->pool, RPMEMCTL_POOL_SYNCING, src);
	if (ret)
		return cmd_remote_err(s->ctx, s->sess, ret, NULL,
				      "cannot write pool %s", s->target);
	s->syncing = 1;
	stream_progress(s, "import");
	code = s->raw ? import_raw(s) : import_frames(s);
	if (code)
		return code;
	ret = rpmemctl_pool_flush(s->pool, 0, s->size);
	if (ret)
		return cmd_remote_err(s->ctx, s->sess, ret, NULL,
				      "cannot write pool %s", s->target);
	cmd_progress_end(&s->prog);
	ret = rpmemctl_pool_set_state(s->pool, RPMEMCTL_POOL_CONSISTENT, src);
	if (ret)
		return cmd_remote_err(s->ctx, s->sess, ret, NULL,
				      "cannot mark pool %s consistent",
				      s->target);
	import_adopt(s);
	return 0;
}

/*
 * import_undo -- a refused import of a stream into a pool that existed:
 * the target rolls back what it wrote (its undo journal), so the pool is
 * what it was, bytes, state and generation
 */
static void import_undo(struct stream *s)
{
	cmd_progress_end(&s->prog);
	/* every write of ours reaches the target before the rollback */
	rpmemctl_pool_flush(s->pool, 0, s->size);
	if (rpmemctl_pool_rollback(s->pool)) {
		cmd_warn(s->ctx, "pool %s stays syncing: %s (rpmemctl "
			 "rollback restores it)", s->target,
			 rpmemctl_session_errmsg(s->sess));
		return;
	}
	cmd_info(s->ctx, "rolled back pool %s: it holds generation %" PRIu64
		 " again, as before the import", s->target,
		 rpmemctl_pool_get_generation(s->pool));
}

/* import_report -- the summary line or JSON object */
static void import_report(struct stream *s, int created)
{
	char a[CMD_NUM_MAX], nb[STREAM_NAME_MAX];
	struct json j;

	if (s->ctx->json) {
		json_begin(&j, stdout, "import", s->hp);
		json_str(&j, "region", s->t.region);
		json_str(&j, "pool", s->t.pool);
		json_str(&j, "input", s->path);
		json_u64(&j, "pool_size", s->size);
		json_u64(&j, "generation",
			 rpmemctl_pool_get_generation(s->pool));
		json_bool(&j, "created", created);
		json_str(&j, "transport", rpmemctl_pool_get_transport(s->pool));
		json_double(&j, "elapsed_s",
			    (double)(cmd_now_ns() - s->t0) / 1e9);
		json_end(&j);
		return;
	}
	cmd_info(s->ctx, "imported %s into %s: %s in %.0f MiB/s, generation %"
		 PRIu64, stream_name(s, nb, sizeof(nb), "standard input"),
		 s->target, rpmemctl_size_format(s->size, a, sizeof(a)),
		 rate_mib(s, s->size), rpmemctl_pool_get_generation(s->pool));
}

/* import_run -- source, connect, open, copy, report; an exit code */
static int import_run(struct stream *s, const char *target)
{
	char src[CMD_SOURCE_MAX];
	int code, created = 0;

	if ((code = import_source(s)) || (code = stream_begin(s, target)))
		return code;
	code = import_open(s, &created);
	if (code)
		goto out;
	code = import_copy(s, strcmp(s->path, "-") ?
			      cmd_source(s->path, src, sizeof(src)) :
			      "import from standard input");
	if (!code)
		import_report(s, created);
	else if (!created && s->syncing && !s->raw)
		import_undo(s);
out:
	if (code && created) {
		/* nothing of a failed import stays behind in its own pool */
		rpmemctl_pool_close(&s->pool);
		if (rpmemctl_pool_remove(s->sess, s->t.region, s->t.pool,
					 RPMEMCTL_REMOVE_FORCE))
			cmd_warn(s->ctx, "pool %s stays syncing: %s",
				 s->target, rpmemctl_session_errmsg(s->sess));
		else
			cmd_info(s->ctx, "removed pool %s, which this import "
				 "created", s->target);
	}
	return code;
}

/* cmd_import -- rpmemctl import */
int cmd_import(int argc, char **argv, struct rpmemctl_ctx *ctx)
{
	struct stream s = { .ctx = ctx, .fd = -1 };
	int code = stream_opts(&s, argc, argv, CMD_COMMON_SHORT "s:fjt:",
			       import_opts, import_usage);

	if (code != -1)
		return code;
	s.path = argv[optind];
	code = import_run(&s, argv[optind + 1]);
	stream_end(&s);
	return code;
}
