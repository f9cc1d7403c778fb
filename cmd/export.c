/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * export.c -- rpmemctl export and import: a pool's image as a byte stream
 * (stdout, stdin or a file), for backup tools that read or write one
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
#include "xstream.h"

/* bytes moved per library call (the library pipelines its requests) */
#define STREAM_CHUNK (8u << 20)
/* a frame: a chunk of the image and its hash */
#define FRAME (XSTREAM_CHUNK + XSTREAM_HASH_SIZE)

/* --raw, --salvage: long options only */
#define OPT_RAW CMD_OPT_FIRST_PRIVATE
#define OPT_SALVAGE (CMD_OPT_FIRST_PRIVATE + 1)
#define OPT_DISCARD_TARGET (CMD_OPT_FIRST_PRIVATE + 2)

static const char export_usage[] =
	"usage: rpmemctl export [options] HOST[:PORT]/REGION/POOL DEST\n"
	"\n"
	"Write the remote pool's image to DEST ('-': standard output) as a\n"
	"framed stream that import checks (a header, each 1 MiB chunk with\n"
	"its hash, a trailer written only when the export succeeded), e.g.\n"
	"  set -o pipefail\n"
	"  rpmemctl export host/r/pool - | restic backup --stdin \\\n"
	"      --stdin-filename pool.rpmemexp\n"
	"A pool that is not consistent (a sync was interrupted or is running)\n"
	"is refused unless --force, and so is data the target finds damaged\n"
	"(not as its scrub record says; the ranges are named).\n"
	"\n"
	"  -a, --at GENERATION    export that version of the pool (rpmemctl\n"
	"                         versions) instead of its current image\n"
	"  -f, --force            export a pool that is not consistent, and\n"
	"                         damaged data as it is (its ranges named)\n"
	"      --raw              the bare image, with no frame (nothing for\n"
	"                         import to check)\n"
	"      --salvage          with --at: a version damaged on the target is\n"
	"                         exported with zeros where it does not check\n"
	"                         (the ranges named on stderr); exit status 7\n"
	"  -t, --transport T      auto, tcp or rdma (default auto)\n"
	"  -v, --verbose          progress and a summary on stderr\n"
	"  -q, --quiet            no informational lines or progress\n"
	"  -h, --help             this help\n";

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

static const struct option export_opts[] = {
	CMD_COMMON_OPTS,
	{ "at", required_argument, NULL, 'a' },
	{ "force", no_argument, NULL, 'f' },
	{ "transport", required_argument, NULL, 't' },
	{ "raw", no_argument, NULL, OPT_RAW },
	{ "salvage", no_argument, NULL, OPT_SALVAGE },
	{ NULL, 0, NULL, 0 },
};

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

/* what export and import share */
struct stream {
	struct rpmemctl_ctx *ctx;
	struct cmd_target t;
	char hp[300];
	char target[700];
	const char *path; /* DEST or SOURCE as given */
	int fd;
	int dest_file; /* export: DEST is a regular file (removed on failure) */
	int force;
	int raw;     /* --raw: the bare image, no frame */
	int forced;  /* export: a pool not consistent, with --force */
	int syncing; /* import: the pool was marked syncing */
	int has_at;  /* export: --at */
	uint64_t at; /* that version */
	int salvage; /* export: --salvage */
	int discard; /* import: --discard-target */
	uint64_t bad_off, bad_len, bad_bytes; /* export --at: not checking */
	uint64_t size;
	enum rpmemctl_transport transport;
	struct rpmemctl_session *sess;
	struct rpmemctl_pool *pool;
	uint8_t *buf;
	struct cmd_progress prog;
	uint64_t t0;
	struct xstream xs; /* the frame written or checked */
};

/* stream_name -- "standard output/input" or 'PATH', for messages */
static const char *stream_name(const struct stream *s, char *buf, size_t len,
			       const char *std)
{
	if (!strcmp(s->path, "-"))
		return std;
	snprintf(buf, len, "'%s'", s->path);
	return buf;
}

/* stream_begin -- parse TARGET, connect; returns an exit code */
static int stream_begin(struct stream *s, const char *target)
{
	int code = cmd_parse_target(s->ctx, target, RPMEMCTL_TARGET_NEED_POOL,
				     &s->t);
	if (code)
		return code;
	cmd_hostport(&s->t, s->hp, sizeof(s->hp));
	cmd_target_str(&s->t, s->target, sizeof(s->target));
	s->buf = malloc(STREAM_CHUNK);
	if (!s->buf || (!s->raw && !s->xs.img && xstream_init(&s->xs))) {
		cmd_err(s->ctx, "out of memory");
		return CMD_EXIT_INTERNAL;
	}
	return cmd_connect(s->ctx, &s->t, s->transport, &s->sess);
}

/* stream_progress -- progress on stderr if a terminal, or with -v */
static void stream_progress(struct stream *s, const char *label)
{
	cmd_progress_init(&s->prog, s->ctx, label);
	if (s->ctx->verbose && !s->ctx->quiet)
		s->prog.enabled = 1;
	s->t0 = cmd_now_ns();
}

/* stream_end -- close everything stream_begin and the command opened */
static void stream_end(struct stream *s)
{
	cmd_progress_end(&s->prog);
	rpmemctl_pool_close(&s->pool);
	rpmemctl_session_close(&s->sess);
	if (s->fd > STDERR_FILENO)
		close(s->fd);
	free(s->buf);
	xstream_fini(&s->xs);
}

/* rate_mib -- MiB/s of n bytes since s->t0 */
static double rate_mib(const struct stream *s, uint64_t n)
{
	double el = (double)(cmd_now_ns() - s->t0) / 1e9;

	return el > 0 ? (double)n / (1024.0 * 1024.0) / el : 0;
}

/* --- export --------------------------------------------------------------- */

/* write_all -- n bytes to fd; 0 or -errno */
static int write_all(int fd, const uint8_t *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/*
 * export_open -- open the pool read-only; refuse one that holds no
 * consistent image unless forced. Returns an exit code.
 */
static int export_open(struct stream *s)
{
	struct rpmemctl_ctx *ctx = s->ctx;
	enum rpmemctl_pool_state st;
	int ret;

	ret = rpmemctl_pool_open_or_create(s->sess, s->t.region, s->t.pool, 0,
					   RPMEMCTL_OPEN_RDONLY, &s->pool,
					   NULL);
	if (ret)
		return cmd_remote_err(ctx, s->sess, ret, NULL,
				      "cannot open pool '%s/%s' on %s",
				      s->t.region, s->t.pool, s->hp);
	s->size = rpmemctl_pool_get_size(s->pool);
	st = rpmemctl_pool_get_state(s->pool);
	/* a version is read only while the pool is consistent (the target) */
	if (st == RPMEMCTL_POOL_CONSISTENT || s->has_at)
		return 0;
	if (s->force) {
		s->forced = 1;
		cmd_warn(ctx, "pool %s is %s: exporting it anyway (--force); "
			 "the image may be a mix of two", s->target,
			 rpmemctl_pool_state_str(st));
		return 0;
	}
	cmd_err(ctx, "pool %s is %s: %s; refusing to export it (--force "
		"exports it anyway)", s->target, rpmemctl_pool_state_str(st),
		st == RPMEMCTL_POOL_SYNCING ?
		"a sync into it was interrupted or is running, so it may "
		"hold a mix of the old and the new image" :
		"nothing was ever synced into it");
	return CMD_EXIT_REFUSED;
}

/* export_dest -- open DEST for writing ('-': stdout, never a terminal) */
static int export_dest(struct stream *s)
{
	struct stat st;

	if (!strcmp(s->path, "-")) {
		if (isatty(STDOUT_FILENO)) {
			cmd_err(s->ctx, "standard output is a terminal; "
				"redirect it or name a file");
			return CMD_EXIT_USAGE;
		}
		s->fd = STDOUT_FILENO;
		return 0;
	}
	s->fd = open(s->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (s->fd < 0) {
		cmd_err(s->ctx, "cannot create '%s': %s", s->path,
			strerror(errno));
		return CMD_EXIT_LOCAL;
	}
	/* a FIFO or a tape device is written, never removed */
	s->dest_file = !fstat(s->fd, &st) && S_ISREG(st.st_mode);
	return 0;
}

/*
 * export_unchanged -- the pool is still consistent at the generation it
 * was opened with (a sync that ran meanwhile would tear the image);
 * returns an exit code
 */
static int export_unchanged(struct stream *s)
{
	struct rpmemctl_list *l = NULL;
	uint64_t gen = rpmemctl_pool_get_generation(s->pool);
	int ret = rpmemctl_list_get(s->sess, s->t.region, &l);
	unsigned i, n = ret ? 0 : rpmemctl_list_pool_count(l);
	int code = 0;

	if (ret)
		return cmd_remote_err(s->ctx, s->sess, ret, NULL,
				      "cannot list region '%s' on %s after "
				      "the export", s->t.region, s->hp);
	for (i = 0; i < n; i++)
		if (!strcmp(rpmemctl_list_pool_name(l, i), s->t.pool))
			break;
	if (i == n || rpmemctl_list_pool_generation(l, i) != gen ||
	    (!s->force &&
	     rpmemctl_list_pool_state(l, i) != RPMEMCTL_POOL_CONSISTENT)) {
		cmd_err(s->ctx, "pool %s changed during the export (a sync "
			"ran): the image written may be torn; export again",
			s->target);
		code = CMD_EXIT_REFUSED;
	}
	rpmemctl_list_free(&l);
	return code;
}

/* export_write -- n bytes to DEST; an exit code */
static int export_write(struct stream *s, const void *p, size_t n)
{
	char nb[1100];
	int ret = write_all(s->fd, p, n);

	if (!ret)
		return 0;
	cmd_err(s->ctx, "cannot write to %s: %s",
		stream_name(s, nb, sizeof(nb), "standard output"),
		strerror(-ret));
	return CMD_EXIT_LOCAL;
}

/* export_uuid -- the pool's uuid as LIST says it into the header */
static void export_uuid(struct stream *s)
{
	struct rpmemctl_list *l = NULL;
	unsigned i, n;

	if (rpmemctl_list_get(s->sess, s->t.region, &l))
		return; /* the header then names the pool only */
	n = rpmemctl_list_pool_count(l);
	for (i = 0; i < n; i++)
		if (!strcmp(rpmemctl_list_pool_name(l, i), s->t.pool))
			snprintf(s->xs.info.uuid, sizeof(s->xs.info.uuid),
				 "%s", rpmemctl_list_pool_uuid(l, i) ?: "");
	rpmemctl_list_free(&l);
}

/*
 * export_history -- the pool's generation history into the header (the
 * writes its image holds, for import's check); none for a version (--at:
 * an older image than the history says) or from a target keeping none
 */
static void export_history(struct stream *s)
{
	struct rpmemctl_generations g;

	if (s->has_at || rpmemctl_pool_get_generations(s->pool, &g) ||
	    !g.count)
		return;
	s->xs.info.flags |= XSTREAM_F_HISTORY;
	s->xs.info.nids = g.count;
	memcpy(s->xs.info.ids, g.ids, g.count * sizeof(g.ids[0]));
}

/* export_header -- the frame's header, first in DEST; an exit code */
static int export_header(struct stream *s)
{
	struct xstream_info *in = &s->xs.info;
	uint8_t hdr[XSTREAM_HDR_SIZE];

	in->size = s->size;
	in->generation = s->has_at ? s->at :
				     rpmemctl_pool_get_generation(s->pool);
	in->flags = (s->has_at ? XSTREAM_F_VERSION : 0) |
		    (s->forced ? XSTREAM_F_FORCED : 0) |
		    (s->salvage ? XSTREAM_F_SALVAGE : 0);
	snprintf(in->name, sizeof(in->name), "%s/%s", s->t.region, s->t.pool);
	export_uuid(s);
	export_history(s);
	xstream_header(&s->xs, hdr);
	return export_write(s, hdr, sizeof(hdr));
}

/* export_frames -- n bytes of s->buf as frames (a chunk, its hash) */
static int export_frames(struct stream *s, size_t n)
{
	uint8_t h[XSTREAM_HASH_SIZE];
	size_t o, k;
	int code = 0;

	for (o = 0; !code && o < n; o += k) {
		k = n - o < XSTREAM_CHUNK ? n - o : XSTREAM_CHUNK;
		xstream_chunk(&s->xs, s->buf + o, k, h);
		code = export_write(s, s->buf + o, k) ?:
		       export_write(s, h, sizeof(h));
	}
	return code;
}

/* bad_flush -- name the range of the version that does not check */
static void bad_flush(struct stream *s)
{
	if (s->bad_len)
		cmd_warn(s->ctx, "damaged at 0x%" PRIx64 " length %" PRIu64
			 ": version %" PRIu64 " of %s does not check there%s",
			 s->bad_off, s->bad_len, s->at, s->target,
			 s->salvage ? ": zeros exported" : "");
	s->bad_len = 0;
}

/*
 * export_pieces -- n bytes of version s->at at off into s->buf again 4 KiB
 * at a time (a read of them was -EIO): a piece that does not check is
 * zeros, its range named; 0 or -errno
 */
static int export_pieces(struct stream *s, uint64_t off, size_t n)
{
	for (size_t o = 0; o < n; o += 4096) {
		size_t k = n - o < 4096 ? n - o : 4096;
		int ret = rpmemctl_pool_read_at(s->pool, s->at, s->buf + o,
						off + o, k);
		if (ret != -EIO) {
			if (ret)
				return ret;
			continue;
		}
		memset(s->buf + o, 0, k);
		s->bad_bytes += k;
		if (s->bad_len && s->bad_off + s->bad_len != off + o)
			bad_flush(s);
		if (!s->bad_len)
			s->bad_off = off + o;
		s->bad_len += k;
	}
	return 0;
}

/*
 * export_copy -- the pool's bytes into s->fd (framed unless --raw: the
 * trailer only once every byte was read and the pool found unchanged);
 * returns an exit code
 */
static int export_copy(struct stream *s)
{
	uint8_t tr[XSTREAM_TRAILER_SIZE];
	uint64_t off;
	int ret, code = s->raw ? 0 : export_header(s);

	stream_progress(s, "export");
	for (off = 0; !code && off < s->size; off += STREAM_CHUNK) {
		size_t n = s->size - off < STREAM_CHUNK ?
				   (size_t)(s->size - off) : STREAM_CHUNK;

		ret = s->has_at ? rpmemctl_pool_read_at(s->pool, s->at,
							s->buf, off, n) :
				  rpmemctl_pool_read(s->pool, s->buf, off, n);
		if (ret == -EIO && s->has_at)
			ret = export_pieces(s, off, n);
		if (ret)
			return cmd_remote_err(s->ctx, s->sess, ret, NULL,
					      "cannot read pool %s",
					      s->target);
		code = s->raw ? export_write(s, s->buf, n) :
				export_frames(s, n);
		cmd_progress_cb(off + n, s->size, &s->prog);
	}
	cmd_progress_end(&s->prog);
	bad_flush(s);
	if (!code && s->bad_bytes && !s->salvage) {
		cmd_err(s->ctx, "version %" PRIu64 " of %s is damaged on the "
			"target: the ranges above cannot be exported; the "
			"stream has no trailer (--salvage exports zeros there)",
			s->at, s->target);
		return CMD_EXIT_DAMAGED;
	}
	/* a version's reads fail, rather than tear, if a sync commits */
	if (code || (!s->has_at && (code = export_unchanged(s))))
		return code;
	if (!s->raw) {
		xstream_trailer(&s->xs, tr);
		if ((code = export_write(s, tr, sizeof(tr))))
			return code;
	}
	if (s->dest_file && fsync(s->fd)) {
		cmd_err(s->ctx, "cannot write '%s': %s", s->path,
			strerror(errno));
		return CMD_EXIT_LOCAL;
	}
	if (s->bad_bytes) {
		cmd_err(s->ctx, "salvaged version %" PRIu64 " of %s: zeros in "
			"the ranges above", s->at, s->target);
		return CMD_EXIT_DAMAGED;
	}
	return 0;
}

/* export_run -- open, check, copy; returns an exit code */
static int export_run(struct stream *s, const char *target)
{
	struct cmd_damaged dmg = { s->ctx, 0 };
	char a[32], nb[1100];
	int code;

	if ((code = stream_begin(s, target)))
		return code;
	if (s->force)
		cmd_read_damaged(s->sess, &dmg);
	if ((code = export_open(s)) || (code = export_dest(s)) ||
	    (code = export_copy(s)))
		return code;
	/* stdout carries the image: the summary goes to stderr, with -v */
	if (s->ctx->verbose && !s->ctx->quiet) {
		fprintf(stderr, "rpmemctl: export: exported %s to %s: %s in "
			"%.0f MiB/s, generation %" PRIu64 "\n", s->target,
			stream_name(s, nb, sizeof(nb), "standard output"),
			rpmemctl_size_format(s->size, a, sizeof(a)),
			rate_mib(s, s->size),
			rpmemctl_pool_get_generation(s->pool));
	}
	return 0;
}

/*
 * stream_opts -- parse export's or import's options (shorts says which)
 * into s; -1 when done, else the exit code to return
 */
static int stream_opts(struct stream *s, int argc, char **argv,
		       const char *shorts, const struct option *opts,
		       const char *usage)
{
	int c, code = 0;

	while ((c = cmd_getopt(s->ctx, argc, argv, shorts, opts, usage,
			       &code)) != -1) {
		switch (c) {
		case -2:
			return code;
		case 'a':
			code = cmd_parse_version(s->ctx, optarg, &s->at);
			s->has_at = 1;
			break;
		case 's':
			code = cmd_parse_size(s->ctx, "--size", optarg,
					      &s->size);
			break;
		case 'f':
			s->force = 1;
			break;
		case 't':
			code = cmd_parse_transport(s->ctx, optarg,
						   &s->transport);
			break;
		case OPT_RAW:
			s->raw = 1;
			break;
		case OPT_SALVAGE:
			s->salvage = 1;
			break;
		case OPT_DISCARD_TARGET:
			s->discard = 1;
			break;
		}
		if (code)
			return code;
	}
	return cmd_check_args(s->ctx, argc, argv, 2, 2) ?: -1;
}

/* cmd_export -- rpmemctl export */
int cmd_export(int argc, char **argv, struct rpmemctl_ctx *ctx)
{
	struct stream s = { .ctx = ctx, .fd = -1 };
	int code = stream_opts(&s, argc, argv, CMD_COMMON_SHORT "a:ft:",
			       export_opts, export_usage);

	if (code != -1)
		return code;
	if (s.salvage && !s.has_at)
		return cmd_usage_error(ctx, "--salvage exports a version: it "
				       "needs --at GENERATION");
	s.path = argv[optind + 1];
	code = export_run(&s, argv[optind]);
	/* a file we did not fill is not left looking whole */
	if (code && s.dest_file && !(s.salvage && s.bad_bytes &&
				      code == CMD_EXIT_DAMAGED))
		unlink(s.path);
	stream_end(&s);
	return code;
}

/* --- import --------------------------------------------------------------- */

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
	char nb[1100], why[600];
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
	char a[32];
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
	char sz[32];
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
	char nb[1100];
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
	char nb[1100];
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
	char a[32], nb[1100];
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
	char src[1024];
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
