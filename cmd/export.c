/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * export.c -- rpmemctl export: a pool's image as a byte stream (stdout or
 * a file), for backup tools that read one; what import shares with it
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd.h"
#include "json.h"
#include "stream.h"

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

static const struct option export_opts[] = {
	CMD_COMMON_OPTS,
	{ "at", required_argument, NULL, 'a' },
	{ "force", no_argument, NULL, 'f' },
	{ "transport", required_argument, NULL, 't' },
	{ "raw", no_argument, NULL, OPT_RAW },
	{ "salvage", no_argument, NULL, OPT_SALVAGE },
	{ NULL, 0, NULL, 0 },
};

/* stream_name -- "standard output/input" or 'PATH', for messages */
const char *stream_name(const struct stream *s, char *buf, size_t len,
			       const char *std)
{
	if (!strcmp(s->path, "-"))
		return std;
	snprintf(buf, len, "'%s'", s->path);
	return buf;
}

/* stream_begin -- parse TARGET, connect; returns an exit code */
int stream_begin(struct stream *s, const char *target)
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
void stream_progress(struct stream *s, const char *label)
{
	cmd_progress_init(&s->prog, s->ctx, label);
	if (s->ctx->verbose && !s->ctx->quiet)
		s->prog.enabled = 1;
	s->t0 = cmd_now_ns();
}

/* stream_end -- close everything stream_begin and the command opened */
void stream_end(struct stream *s)
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
double rate_mib(const struct stream *s, uint64_t n)
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
	char nb[STREAM_NAME_MAX];
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
	char a[CMD_NUM_MAX], nb[STREAM_NAME_MAX];
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
int stream_opts(struct stream *s, int argc, char **argv,
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
