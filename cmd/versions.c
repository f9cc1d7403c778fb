/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * versions.c -- rpmemctl versions (list, prune, cut), and what --at does for
 * sync --pull, verify and export: a pool's point-in-time versions
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "json.h"

/* a version damaged on the target: its header, or (a scrub's mark) data */
#define VERSION_BAD (RPMEMCTL_VERSION_DAMAGED | RPMEMCTL_VERSION_BAD_DATA)

/* the hint of an unknown version */
#define VERSIONS_HINT "'rpmemctl versions TARGET' lists the versions"

/* bytes a --at restore or verify moves per library call */
#define AT_CHUNK (4u << 20)

static const char versions_usage[] =
	"usage: rpmemctl versions [options] HOST[:PORT]/REGION/POOL\n"
	"\n"
	"List the pool's point-in-time versions on the target (kept when a\n"
	"sync replaced them, where the region is configured to keep versions:\n"
	"rpmemd.conf(5)): generation, when that image became current, when it\n"
	"was kept, its size, the space it takes on the target, its hash and\n"
	"its source. Restore one with 'rpmemctl sync --pull --at GENERATION'.\n"
	"\n"
	"  -c, --create           cut a version of a live pool (one the preload\n"
	"                         library or the replica API writes) at its\n"
	"                         writer's next drain boundary: a crash-consistent\n"
	"                         image, listed once the next one is cut or the\n"
	"                         writer's sync commits (the append right)\n"
	"  -p, --prune GEN[,GEN...]  prune these versions (the write right);\n"
	"                            the others stay restorable\n"
	"  -k, --keep POLICY      prune the versions POLICY does not keep, e.g.\n"
	"                         last=10,hourly=24,daily=7,weekly=4,monthly=12\n"
	"  -n, --dry-run          with --keep: say what would be pruned\n"
	"  -j, --json             one JSON object on stdout\n"
	"  -v, --verbose          more detail on stderr\n"
	"  -q, --quiet            no informational lines\n"
	"  -h, --help             this help\n";

static const struct option versions_opts[] = {
	CMD_COMMON_OPTS,
	{ "create", no_argument, NULL, 'c' },
	{ "prune", required_argument, NULL, 'p' },
	{ "keep", required_argument, NULL, 'k' },
	{ "dry-run", no_argument, NULL, 'n' },
	{ "json", no_argument, NULL, 'j' },
	{ NULL, 0, NULL, 0 },
};

/* what a versions command does */
struct vcmd {
	struct rpmemctl_ctx *ctx;
	struct cmd_target t;
	char hp[CMD_HP_MAX], target[CMD_TARGET_MAX];
	const char *prune; /* --prune list, or NULL */
	const char *keep;  /* --keep POLICY, or NULL */
	int dry_run;
	int create;	  /* --create */
	uint64_t created; /* the generation it cut, 0: none */
	uint64_t *pruned; /* the generations pruned */
	size_t npruned;
};

/* hash_str -- a hash as 16 hex digits, "-" (or "") for 0 */
static const char *hash_str(uint64_t h, char *buf, size_t len, int json)
{
	if (!h)
		snprintf(buf, len, "%s", json ? "" : "-");
	else
		snprintf(buf, len, "%016" PRIx64, h);
	return buf;
}

/* print_json -- the versions object */
static void print_json(struct vcmd *c, struct rpmemctl_pool *pool,
		       const struct rpmemctl_version *v, size_t n)
{
	struct json j;
	char h[CMD_NUM_MAX];
	uint64_t total = 0;

	json_begin(&j, stdout, "versions", c->hp);
	json_str(&j, "region", c->t.region);
	json_str(&j, "pool", c->t.pool);
	json_u64(&j, "pool_size", rpmemctl_pool_get_size(pool));
	json_u64(&j, "generation", rpmemctl_pool_get_generation(pool));
	json_arr_begin(&j, "versions");
	for (size_t i = 0; i < n; i++) {
		json_obj_begin(&j, NULL);
		json_u64(&j, "generation", v[i].generation);
		json_u64(&j, "current_at", v[i].time);
		json_u64(&j, "kept_at", v[i].committed);
		json_u64(&j, "size", v[i].size);
		json_u64(&j, "space_bytes", v[i].bytes);
		json_str(&j, "hash", hash_str(v[i].hash, h, sizeof(h), 1));
		json_str(&j, "source", v[i].source);
		json_bool(&j, "damaged", !!(v[i].flags & VERSION_BAD));
		json_obj_end(&j);
		total += v[i].bytes;
	}
	json_arr_end(&j);
	json_u64(&j, "versions_bytes", total);
	if (c->created)
		json_u64(&j, "created", c->created);
	else
		json_null(&j, "created");
	json_arr_begin(&j, "pruned");
	for (size_t i = 0; i < c->npruned; i++)
		fprintf(stdout, "%s%" PRIu64, i ? "," : "", c->pruned[i]);
	json_arr_end(&j);
	json_end(&j);
}

/* print_human -- the versions table */
static void print_human(struct vcmd *c, const struct rpmemctl_version *v,
			size_t n)
{
	char t1[CMD_NUM_MAX], t2[CMD_NUM_MAX];
	char sz[CMD_NUM_MAX], sp[CMD_NUM_MAX], h[CMD_NUM_MAX];
	uint64_t total = 0;

	if (c->created)
		cmd_info(c->ctx, "version %" PRIu64 " of %s cut (listed once "
			 "the next one is cut or the writer's sync commits)",
			 c->created, c->target);
	for (size_t i = 0; i < c->npruned; i++)
		cmd_info(c->ctx, "%s version %" PRIu64 " of %s",
			 c->dry_run ? "would prune" : "pruned", c->pruned[i],
			 c->target);
	if (!n) {
		cmd_info(c->ctx, "%s has no versions", c->target);
		return;
	}
	printf("%-10s  %-19s  %-19s  %9s  %9s  %-16s  %s\n", "GENERATION",
	       "CURRENT SINCE", "KEPT AT", "SIZE", "SPACE", "HASH", "SOURCE");
	for (size_t i = 0; i < n; i++) {
		int bad = !!(v[i].flags & VERSION_BAD);
		printf("%-10" PRIu64 "  %-19s  %-19s  %9s  %9s  %-16s  %s%s\n",
		       v[i].generation, cmd_fmt_time(v[i].time, t1, sizeof(t1)),
		       cmd_fmt_time(v[i].committed, t2, sizeof(t2)),
		       rpmemctl_size_format(v[i].size, sz, sizeof(sz)),
		       rpmemctl_size_format(v[i].bytes, sp, sizeof(sp)),
		       hash_str(v[i].hash, h, sizeof(h), 0),
		       bad ? "DAMAGED " : "", cmd_text(v[i].source));
		total += v[i].bytes;
	}
	for (size_t i = 0; i < n; i++)
		if (v[i].flags & RPMEMCTL_VERSION_DAMAGED)
			cmd_warn(c->ctx, "version %" PRIu64 " of %s is damaged on "
				 "the target: kept; a restore of it or of an "
				 "older version through it fails (see rpmemctl "
				 "scrub --at %" PRIu64 ")",
				 v[i].generation, c->target, v[i].generation);
		else if (v[i].flags & RPMEMCTL_VERSION_BAD_DATA)
			cmd_warn(c->ctx, "version %" PRIu64 " of %s is damaged on "
				 "the target: a scrub found a record of it not "
				 "checking; kept (rpmemctl scrub --repair --from "
				 "another copy heals it)",
				 v[i].generation, c->target);
	cmd_info(c->ctx, "%zu versions of %s take %s on the target", n,
		 c->target, rpmemctl_size_format(total, sp, sizeof(sp)));
}

/* prune_one -- prune version gen, remember it; an exit code */
static int prune_one(struct vcmd *c, struct rpmemctl_session *sess,
		     struct rpmemctl_pool *pool, uint64_t gen)
{
	int ret = c->dry_run ? 0 : rpmemctl_pool_version_prune(pool, gen);

	if (ret)
		return cmd_remote_err(c->ctx, sess, ret, VERSIONS_HINT,
				      "cannot prune version %" PRIu64 " of %s",
				      gen, c->target);
	c->pruned[c->npruned++] = gen;
	return 0;
}

/* prune_list -- the versions of --prune GEN,GEN...; an exit code */
static int prune_list(struct vcmd *c, struct rpmemctl_session *sess,
		      struct rpmemctl_pool *pool)
{
	char *dup = strdup(c->prune), *save = NULL;
	int code = dup ? 0 : CMD_EXIT_INTERNAL;

	for (char *g = dup ? strtok_r(dup, ",", &save) : NULL; g && !code;
	     g = strtok_r(NULL, ",", &save)) {
		uint64_t gen;
		code = cmd_parse_version(c->ctx, g, &gen);
		if (!code)
			code = prune_one(c, sess, pool, gen);
	}
	free(dup);
	return code;
}

/* prune_keep -- the versions --keep does not keep, oldest first */
static int prune_keep(struct vcmd *c, struct rpmemctl_session *sess,
		      struct rpmemctl_pool *pool,
		      const struct rpmemctl_version *v, size_t n)
{
	uint8_t *keep = calloc(n + 1, 1);
	int code = keep ? 0 : CMD_EXIT_INTERNAL;

	/* parsed already: cannot fail */
	if (!code && rpmemctl_versions_keep(c->keep, v, n, keep, NULL, 0))
		code = CMD_EXIT_INTERNAL;
	for (size_t i = 0; !code && i < n; i++) /* oldest first */
		if (!keep[i] && (v[i].flags & RPMEMCTL_VERSION_DAMAGED))
			cmd_warn(c->ctx, "version %" PRIu64 " of %s is damaged: "
				 "kept (prune it with --prune)",
				 v[i].generation, c->target);
		else if (!keep[i])
			code = prune_one(c, sess, pool, v[i].generation);
	free(keep);
	return code;
}

/* versions_run -- open, prune as asked, list; an exit code */
static int versions_run(struct vcmd *c, struct rpmemctl_session *sess)
{
	struct rpmemctl_version *v = NULL;
	struct rpmemctl_pool *pool = NULL;
	size_t n = 0;
	int rw = (c->prune || c->keep) && !c->dry_run;
	int ret = rpmemctl_pool_open_or_create(sess, c->t.region, c->t.pool,
					       0, rw ? RPMEMCTL_OPEN_RDWR :
						       RPMEMCTL_OPEN_RDONLY,
					       &pool, NULL);
	int code = 0;

	if (ret)
		return cmd_remote_err(c->ctx, sess, ret, NULL,
				      "cannot open pool '%s/%s' on %s",
				      c->t.region, c->t.pool, c->hp);
	ret = rpmemctl_pool_versions(pool, &v, &n);
	if (!ret && !(c->pruned = calloc(n + 64, sizeof(*c->pruned))))
		ret = -ENOMEM;
	if (ret)
		code = cmd_remote_err(c->ctx, sess, ret, NULL,
				      "cannot list the versions of %s",
				      c->target);
	if (!code && c->create && (ret = rpmemctl_pool_version_create(
					    pool, &c->created)))
		code = cmd_remote_err(c->ctx, sess, ret, NULL,
				      "cannot cut a version of %s",
				      c->target);
	if (!code && c->prune)
		code = prune_list(c, sess, pool);
	if (!code && c->keep)
		code = prune_keep(c, sess, pool, v, n);
	if (!code && (c->npruned || c->created) && !c->dry_run) {
		free(v);
		v = NULL;
		if ((ret = rpmemctl_pool_versions(pool, &v, &n)))
			code = cmd_remote_err(c->ctx, sess, ret, NULL,
					      "cannot list the versions of %s",
					      c->target);
	}
	if (!code && c->ctx->json)
		print_json(c, pool, v, n);
	else if (!code)
		print_human(c, v, n);
	free(v);
	rpmemctl_pool_close(&pool);
	return code;
}

/* cmd_versions -- rpmemctl versions */
int cmd_versions(int argc, char **argv, struct rpmemctl_ctx *ctx)
{
	struct rpmemctl_session *sess = NULL;
	struct vcmd c = { .ctx = ctx };
	char why[CMD_ERR_MAX];
	int o, code = 0;

	while ((o = cmd_getopt(ctx, argc, argv, CMD_COMMON_SHORT "cp:k:nj",
			       versions_opts, versions_usage, &code)) != -1) {
		switch (o) {
		case -2:
			return code;
		case 'c':
			c.create = 1;
			break;
		case 'p':
			c.prune = optarg;
			break;
		case 'k':
			if (rpmemctl_versions_keep(optarg, NULL, 0, NULL, why,
						   sizeof(why)))
				return cmd_usage_error(ctx, "--keep %s: %s",
						       optarg, why);
			c.keep = optarg;
			break;
		case 'n':
			c.dry_run = 1;
			break;
		}
	}
	code = cmd_check_args(ctx, argc, argv, 1, 1);
	if (!code && c.prune && c.keep)
		code = cmd_usage_error(ctx, "--prune and --keep cannot be "
				       "combined");
	if (!code && c.create && (c.prune || c.keep))
		code = cmd_usage_error(ctx, "--create cannot be combined with "
				       "--prune or --keep");
	if (!code && c.dry_run && !c.keep)
		code = cmd_usage_error(ctx, "--dry-run goes with --keep");
	if (!code)
		code = cmd_parse_target(ctx, argv[optind],
					 RPMEMCTL_TARGET_NEED_POOL, &c.t);
	if (code)
		return code;
	cmd_hostport(&c.t, c.hp, sizeof(c.hp));
	cmd_target_str(&c.t, c.target, sizeof(c.target));
	code = cmd_connect(ctx, &c.t, RPMEMCTL_TRANSPORT_TCP, &sess);
	if (!code)
		code = versions_run(&c, sess);
	rpmemctl_session_close(&sess);
	free(c.pruned);
	return code;
}

/* --- --at: restore (sync --pull) and verify of a version ---------------- */

/* a --at run */
struct at_run {
	struct rpmemctl_ctx *ctx;
	const struct cmd_xfer *x;
	struct cmd_target t;
	char hp[CMD_HP_MAX], target[CMD_TARGET_MAX];
	struct rpmemctl_session *sess;
	struct rpmemctl_pool *pool;
	uint64_t size, hash; /* the version's; hash 0: unknown */
	uint8_t *buf, *lbuf;
	struct cmd_progress prog;
	/* the ranges of the version that do not check on the target */
	struct at_bad {
		uint64_t off, len;
	} *bad;
	size_t nbad, capbad;
	uint64_t bad_bytes;
	struct cmd_damaged dmg; /* --force: damaged data read as it is */
};

/* at_find -- the version exists (or is the current image): its hash */
static int at_find(struct at_run *r)
{
	struct rpmemctl_version *v = NULL;
	size_t n = 0, i;
	int ret = rpmemctl_pool_versions(r->pool, &v, &n);

	if (ret)
		return cmd_remote_err(r->ctx, r->sess, ret, NULL,
				      "cannot list the versions of %s",
				      r->target);
	for (i = 0; i < n && v[i].generation != r->x->at; i++)
		;
	if (i < n)
		r->hash = v[i].hash;
	free(v);
	if (i < n || r->x->at == rpmemctl_pool_get_generation(r->pool))
		return 0;
	cmd_err(r->ctx, "%s has no version %" PRIu64 " (rpmemctl versions "
		"lists them); nothing was done", r->target, r->x->at);
	return CMD_EXIT_REFUSED;
}

/* at_open -- connect, open the pool read-only, find the version */
static int at_open(struct at_run *r)
{
	int code = cmd_parse_target(r->ctx, r->x->target,
				    RPMEMCTL_TARGET_NEED_POOL, &r->t);
	int ret;

	if (code)
		return code;
	cmd_hostport(&r->t, r->hp, sizeof(r->hp));
	cmd_target_str(&r->t, r->target, sizeof(r->target));
	r->buf = malloc(AT_CHUNK);
	r->lbuf = malloc(AT_CHUNK);
	if (!r->buf || !r->lbuf) {
		cmd_err(r->ctx, "out of memory");
		return CMD_EXIT_INTERNAL;
	}
	if ((code = cmd_connect(r->ctx, &r->t, RPMEMCTL_TRANSPORT_TCP,
				&r->sess)))
		return code;
	r->dmg.ctx = r->ctx;
	if (r->x->force)
		cmd_read_damaged(r->sess, &r->dmg);
	ret = rpmemctl_pool_open_or_create(r->sess, r->t.region, r->t.pool, 0,
					   RPMEMCTL_OPEN_RDONLY, &r->pool,
					   NULL);
	if (ret)
		return cmd_remote_err(r->ctx, r->sess, ret, NULL,
				      "cannot open pool '%s/%s' on %s",
				      r->t.region, r->t.pool, r->hp);
	r->size = rpmemctl_pool_get_size(r->pool);
	return at_find(r);
}

/* bad_add -- [off, off + len) of the version does not check: remember */
static int bad_add(struct at_run *r, uint64_t off, uint64_t len)
{
	r->bad_bytes += len;
	if (r->nbad && r->bad[r->nbad - 1].off + r->bad[r->nbad - 1].len ==
			       off) {
		r->bad[r->nbad - 1].len += len;
		return 0;
	}
	if (r->nbad == r->capbad) {
		size_t cap = r->capbad ? 2 * r->capbad : 16;
		void *v = realloc(r->bad, cap * sizeof(*r->bad));
		if (!v)
			return -ENOMEM;
		r->bad = v;
		r->capbad = cap;
	}
	r->bad[r->nbad++] = (struct at_bad){ off, len };
	return 0;
}

/*
 * at_pieces -- n bytes at off read again piece by piece (a read of them
 * was -EIO): a piece that does not check on the target is zeros in
 * r->buf and remembered; 0 or -errno
 */
static int at_pieces(struct at_run *r, uint64_t off, size_t n)
{
	for (size_t o = 0; o < n; o += 4096) {
		size_t k = n - o < 4096 ? n - o : 4096;
		int ret = rpmemctl_pool_read_at(r->pool, r->x->at, r->buf + o,
						off + o, k);
		if (ret == -EIO) {
			memset(r->buf + o, 0, k);
			ret = bad_add(r, off + o, k);
		}
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * at_read -- n bytes of the version at off into r->buf (the pieces that
 * do not check on the target: zeros, in r->bad); an exit code
 */
static int at_read(struct at_run *r, uint64_t off, size_t n)
{
	int ret = rpmemctl_pool_read_at(r->pool, r->x->at, r->buf, off, n);
	if (ret == -EIO)
		ret = at_pieces(r, off, n);
	return ret ? cmd_remote_err(r->ctx, r->sess, ret,
				    ret == -ENOENT ? VERSIONS_HINT : NULL,
				    "cannot read version %" PRIu64 " of %s",
				    r->x->at, r->target) :
		     0;
}

/* at_bad_report -- the ranges that do not check, as scrub prints them */
static void at_bad_report(struct at_run *r)
{
	for (size_t i = 0; i < r->nbad; i++)
		printf("damaged at 0x%" PRIx64 " length %" PRIu64 "\n",
		       r->bad[i].off, r->bad[i].len);
}

/* local_size_ok -- FILE (if it exists: *exists) has the version's size */
static int local_size_ok(struct at_run *r, const char *verb, int *exists,
			 mode_t *mode)
{
	struct stat st;
	char a[CMD_NUM_MAX], b[CMD_NUM_MAX];

	*exists = !stat(r->x->local, &st);
	if (!*exists && errno == ENOENT)
		return 0;
	if (!*exists || !S_ISREG(st.st_mode)) {
		cmd_err(r->ctx, "cannot %s '%s': %s", verb, r->x->local,
			*exists ? "not a regular file" : strerror(errno));
		return CMD_EXIT_LOCAL;
	}
	*mode = st.st_mode & 07777;
	if ((uint64_t)st.st_size == r->size)
		return 0;
	cmd_err(r->ctx, "cannot %s '%s': version %" PRIu64 " of %s is %s, the "
		"file is %s; nothing was written (remove the file or name a "
		"new one)", verb, r->x->local, r->x->at, r->target,
		rpmemctl_size_format(r->size, a, sizeof(a)),
		rpmemctl_size_format((uint64_t)st.st_size, b, sizeof(b)));
	return CMD_EXIT_LOCAL;
}

/*
 * at_step -- bytes read at a time: AT_CHUNK, or with --bwlimit about
 * 50 ms worth (whole 4 KiB pieces)
 */
static size_t at_step(const struct at_run *r)
{
	uint64_t n = r->x->bwlimit / 20 / 4096 * 4096;

	if (!r->x->bwlimit || n >= AT_CHUNK)
		return AT_CHUNK;
	return n ? (size_t)n : 4096;
}

/* at_pace -- with --bwlimit, wait until off bytes have had their time */
static void at_pace(const struct at_run *r, uint64_t t0, uint64_t off)
{
	uint64_t due, now = cmd_now_ns();
	struct timespec ts;

	if (!r->x->bwlimit)
		return;
	due = t0 + (uint64_t)((unsigned __int128)off * 1000000000u /
			      r->x->bwlimit);
	if (due <= now)
		return;
	ts.tv_sec = (time_t)((due - now) / 1000000000u);
	ts.tv_nsec = (long)((due - now) % 1000000000u);
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* restore_copy -- the version into fd, its hash checked; an exit code */
static int restore_copy(struct at_run *r, int fd, const char *tmp)
{
	struct rpmemctl_image_hash *st = NULL;
	int code = rpmemctl_image_hash_new(&st) ? CMD_EXIT_INTERNAL : 0;
	size_t step = at_step(r);
	uint64_t t0 = cmd_now_ns();

	cmd_progress_init(&r->prog, r->ctx, "restore");
	for (uint64_t off = 0; !code && off < r->size; off += step) {
		size_t n = r->size - off < step ? (size_t)(r->size - off) :
						  step;
		at_pace(r, t0, off);
		if ((code = at_read(r, off, n)))
			break;
		rpmemctl_image_hash_update(st, r->buf, n);
		if (pwrite(fd, r->buf, n, (off_t)off) != (ssize_t)n) {
			cmd_err(r->ctx, "cannot write '%s': %s", tmp,
				strerror(errno ? errno : EIO));
			code = CMD_EXIT_LOCAL;
		}
		cmd_progress_cb(off + n, r->size, &r->prog);
	}
	cmd_progress_end(&r->prog);
	if (!code && r->nbad) {
		char a[CMD_NUM_MAX];
		at_bad_report(r);
		cmd_err(r->ctx, "version %" PRIu64 " of %s is damaged on the "
			"target: %s in %zu ranges (above) cannot be restored; "
			"%s", r->x->at, r->target,
			rpmemctl_size_format(r->bad_bytes, a, sizeof(a)),
			r->nbad, r->x->salvage ? "--salvage writes zeros there "
			"and the rest" : "nothing was written (--salvage "
			"writes the rest)");
		code = CMD_EXIT_DAMAGED;
	} else if (!code && r->hash && r->dmg.n &&
		   rpmemctl_image_hash_digest(st) != r->hash) {
		cmd_warn(r->ctx, "version %" PRIu64 " of %s was restored with "
			 "the damaged data named above (--force): it does not "
			 "hash as it did when it was current", r->x->at,
			 r->target);
	} else if (!code && r->hash &&
		   rpmemctl_image_hash_digest(st) != r->hash) {
		cmd_err(r->ctx, "version %" PRIu64 " of %s does not hash as it "
			"did when it was current (%016" PRIx64 "): it is damaged "
			"on the target; nothing was written", r->x->at,
			r->target, r->hash);
		code = CMD_EXIT_DAMAGED;
	}
	rpmemctl_image_hash_delete(&st);
	if ((!code || (r->nbad && r->x->salvage)) && fsync(fd)) {
		cmd_err(r->ctx, "cannot write '%s': %s", tmp, strerror(errno));
		code = CMD_EXIT_LOCAL;
	}
	return code;
}

/* at_restore -- the version into FILE: a new file renamed over it */
static int at_restore(struct at_run *r)
{
	struct cmd_tmp tmp;
	char a[CMD_NUM_MAX];
	mode_t mode = 0644;
	int salvaged, exists;
	int code = local_size_ok(r, "restore into", &exists, &mode);

	if (!code)
		code = cmd_tmp_open(r->ctx, r->x->local, r->size, 0, &tmp);
	if (code)
		return code;
	code = restore_copy(r, tmp.fd, tmp.path);
	/* salvaged: what could be restored, the rest zeros, still exit 7 */
	salvaged = code == CMD_EXIT_DAMAGED && r->nbad && r->x->salvage;
	if (!code || salvaged) {
		int c = cmd_tmp_commit(r->ctx, &tmp);
		if (c) {
			code = c;
			salvaged = 0;
		}
	}
	cmd_tmp_abort(&tmp);
	if (salvaged)
		cmd_info(r->ctx, "salvaged version %" PRIu64 " of %s into '%s': "
			 "all but the ranges above", r->x->at, r->target,
			 r->x->local);
	else if (!code)
		cmd_info(r->ctx, "restored version %" PRIu64 " of %s into "
			 "'%s' (%s%s)", r->x->at, r->target, r->x->local,
			 rpmemctl_size_format(r->size, a, sizeof(a)),
			 r->hash ? ", its hash checked" : "");
	return code;
}

/* differ -- report [off, off + len) as differing */
static void differ(uint64_t off, uint64_t len)
{
	printf("differs at 0x%" PRIx64 " length %" PRIu64 "\n", off, len);
}

/* verify_chunk -- compare n bytes at off; the open run of differences */
static void verify_chunk(struct at_run *r, uint64_t off, size_t n,
			 uint64_t *d_off, uint64_t *d_len, uint64_t *total)
{
	for (size_t o = 0; o < n; o += 4096) {
		size_t k = n - o < 4096 ? n - o : 4096;
		if (!memcmp(r->buf + o, r->lbuf + o, k))
			continue;
		*total += k;
		if (*d_len && *d_off + *d_len == off + o) {
			*d_len += k;
			continue;
		}
		if (*d_len)
			differ(*d_off, *d_len);
		*d_off = off + o;
		*d_len = k;
	}
}

/* at_verify -- compare FILE with the version; 0 same, 1 differs */
static int at_verify(struct at_run *r)
{
	uint64_t d_off = 0, d_len = 0, total = 0;
	mode_t mode;
	int exists, fd, code = local_size_ok(r, "verify", &exists, &mode);
	char a[CMD_NUM_MAX];

	if (!code && !exists) {
		cmd_err(r->ctx, "cannot verify '%s': %s", r->x->local,
			strerror(ENOENT));
		code = CMD_EXIT_LOCAL;
	}
	if (code)
		return code;
	if ((fd = open(r->x->local, O_RDONLY | O_CLOEXEC)) < 0) {
		cmd_err(r->ctx, "cannot open '%s': %s", r->x->local,
			strerror(errno));
		return CMD_EXIT_LOCAL;
	}
	for (uint64_t off = 0; !code && off < r->size; off += AT_CHUNK) {
		size_t n = r->size - off < AT_CHUNK ? (size_t)(r->size - off) :
						      AT_CHUNK;
		if ((code = at_read(r, off, n)))
			break;
		if (pread(fd, r->lbuf, n, (off_t)off) != (ssize_t)n) {
			cmd_err(r->ctx, "cannot read '%s'", r->x->local);
			code = CMD_EXIT_LOCAL;
			break;
		}
		/* what does not check on the target is not compared */
		for (size_t i = 0; i < r->nbad; i++)
			if (r->bad[i].off < off + n &&
			    r->bad[i].off + r->bad[i].len > off) {
				uint64_t a0 = r->bad[i].off > off ?
						      r->bad[i].off : off;
				uint64_t b0 = r->bad[i].off + r->bad[i].len;
				b0 = b0 < off + n ? b0 : off + n;
				memcpy(r->buf + (a0 - off),
				       r->lbuf + (a0 - off), b0 - a0);
			}
		verify_chunk(r, off, n, &d_off, &d_len, &total);
	}
	close(fd);
	if (code)
		return code;
	if (d_len)
		differ(d_off, d_len);
	if (r->nbad) {
		at_bad_report(r);
		cmd_err(r->ctx, "version %" PRIu64 " of %s is damaged on the "
			"target: %s in %zu ranges (above) were not compared; "
			"%s of the rest differ", r->x->at, r->target,
			rpmemctl_size_format(r->bad_bytes, a, sizeof(a)),
			r->nbad, total ? "some" : "none");
		return CMD_EXIT_DAMAGED;
	}
	cmd_info(r->ctx, "'%s' and version %" PRIu64 " of %s %s (%s differ)",
		 r->x->local, r->x->at, r->target,
		 total ? "differ" : "are identical",
		 rpmemctl_size_format(total, a, sizeof(a)));
	return total ? CMD_EXIT_DIFFER : 0;
}

int cmd_transfer_at(struct rpmemctl_ctx *ctx, const struct cmd_xfer *x)
{
	struct at_run r = { .ctx = ctx, .x = x };
	int code;

	if (ctx->json)
		return cmd_usage_error(ctx, "--at writes no JSON object: "
				       "leave out --json");
	code = at_open(&r);
	if (!code)
		code = x->mode == RPMEMCTL_SYNC_PULL ? at_restore(&r) :
						       at_verify(&r);
	rpmemctl_pool_close(&r.pool);
	rpmemctl_session_close(&r.sess);
	free(r.buf);
	free(r.lbuf);
	free(r.bad);
	return code;
}
