/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * scrub.c -- rpmemctl scrub: the target re-reads a pool and checks it
 * against the hashes it recorded when the pool was last committed
 */

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cmd.h"
#include "json.h"

static const char scrub_usage[] =
	"usage: rpmemctl scrub [options] HOST[:PORT]/REGION/POOL\n"
	"\n"
	"Have the target re-read the pool and compare every 4 KiB piece with\n"
	"the hash it recorded when the pool last went consistent. Each damaged\n"
	"range is printed as \"damaged at 0xOFFSET length N\", each range that\n"
	"cannot be verified as \"unverified at 0xOFFSET length N: REASON\".\n"
	"The target lists the pool as damaged (list, status) and forgets the\n"
	"damaged pieces' hashes, so the next sync from a good copy rewrites\n"
	"them; nothing is rewritten by the scrub itself.\n"
	"Exit status 0 if every byte was verified, 7 if a range is damaged,\n"
	"8 if none is but some could not be verified.\n"
	"\n"
	"  -a, --at GENERATION    scrub that version of the pool (rpmemctl\n"
	"                         versions): its image, restored on the target,\n"
	"                         against the hashes recorded when it was current\n"
	"      --rebuild          first have the target record the hashes of the\n"
	"                         pool's image if its record is missing or of an\n"
	"                         older generation (a crash right after a\n"
	"                         commit): an open for writing, the append right\n"
	"      --repair           rewrite each damaged range with the data of\n"
	"                         --from, which the target takes only if it\n"
	"                         hashes as its record says (the pool stays\n"
	"                         consistent at its generation; needs the\n"
	"                         append or write right); from a target, the\n"
	"                         damaged ranges of every version too; with\n"
	"                         --at, those of that version\n"
	"      --from SOURCE      the copy a repair reads: another target\n"
	"                         HOST[:PORT]/REGION/POOL at the same\n"
	"                         generation (for versions: keeping them), or\n"
	"                         an existing local FILE (with --at: that\n"
	"                         version's image)\n"
	"  -j, --json             one JSON object on stdout\n"
	"  -v, --verbose          more detail on stderr\n"
	"  -q, --quiet            only the damaged and unverified ranges\n"
	"  -h, --help             this help\n";

static const struct option scrub_opts[] = {
	CMD_COMMON_OPTS,
	{ "json", no_argument, NULL, 'j' },
	{ "at", required_argument, NULL, 'a' },
	{ "rebuild", no_argument, NULL, CMD_OPT_FIRST_PRIVATE },
	{ "repair", no_argument, NULL, CMD_OPT_FIRST_PRIVATE + 1 },
	{ "from", required_argument, NULL, CMD_OPT_FIRST_PRIVATE + 2 },
	{ NULL, 0, NULL, 0 },
};

/* one damaged or unverified range */
struct scrub_range {
	uint64_t off, len;
	enum rpmemctl_scrub_status st;
	const char *why; /* a constant of the library */
};

/* a damaged range of a version that --repair found (and repaired) */
struct vfix {
	uint64_t gen, off, len;
	enum rpmemctl_scrub_status st; /* OK: repaired */
};

/* what the callbacks collect */
struct scrub_acc {
	struct cmd_progress prog;
	struct scrub_range *v;
	size_t n, cap;
	int oom;
	uint64_t bytes[RPMEMCTL_SCRUB_UNVERIFIED + 1]; /* by status */
	uint64_t at;	   /* --at: the version; 0: the pool's image */
	uint64_t *vbad;	   /* the pool's damaged versions */
	size_t nvbad;
	const char *from;  /* --repair --from SOURCE; NULL: no repair */
	uint64_t repaired; /* bytes of damaged ranges rewritten */
	struct vfix *vfix; /* --repair: the versions' damaged ranges */
	size_t nvfix;
	uint64_t vrepaired; /* bytes of them rewritten */
};

/* vfix_add -- remember the range r of version gen (a->oom if it cannot) */
static void vfix_add(struct scrub_acc *a, uint64_t gen,
		     const struct scrub_range *r)
{
	void *v = realloc(a->vfix, (a->nvfix + 1) * sizeof(*a->vfix));

	if (!v) {
		a->oom = 1;
		return;
	}
	a->vfix = v;
	a->vfix[a->nvfix++] = (struct vfix){ gen, r->off, r->len, r->st };
}

/* scrub_cb -- an rpmemctl_scrub_fn: count, keep the ranges not ok */
static void scrub_cb(uint64_t off, uint64_t len,
		     enum rpmemctl_scrub_status st, const char *why, void *arg)
{
	struct scrub_acc *a = arg;

	if ((unsigned)st < 3)
		a->bytes[st] += len;
	if (st == RPMEMCTL_SCRUB_OK)
		return;
	if (a->n == a->cap) {
		size_t cap = a->cap ? 2 * a->cap : 16;
		void *v = realloc(a->v, cap * sizeof(*a->v));

		if (!v) {
			a->oom = 1;
			return;
		}
		a->v = v;
		a->cap = cap;
	}
	a->v[a->n++] = (struct scrub_range){ off, len, st, why };
}

static void scrub_progress(uint64_t done, uint64_t total, void *arg)
{
	cmd_progress_cb(done, total, &((struct scrub_acc *)arg)->prog);
}

/* status_str -- a range's status; OK among the findings: repaired */
static const char *status_str(enum rpmemctl_scrub_status st)
{
	return st == RPMEMCTL_SCRUB_DAMAGED ? "damaged" :
	       st == RPMEMCTL_SCRUB_OK	    ? "repaired" :
					      "unverified";
}

/* report_json -- the scrub's one JSON object */
static void report_json(const struct cmd_target *t, const char *hp,
			struct rpmemctl_pool *pool, const struct scrub_acc *a)
{
	struct json j;

	json_begin(&j, stdout, "scrub", hp);
	json_str(&j, "region", t->region);
	json_str(&j, "pool", t->pool);
	json_u64(&j, "pool_size", rpmemctl_pool_get_size(pool));
	json_str(&j, "state",
		 rpmemctl_pool_state_str(rpmemctl_pool_get_state(pool)));
	json_u64(&j, "generation", rpmemctl_pool_get_generation(pool));
	json_u64(&j, "version", a->at);
	json_u64(&j, "bytes_checked", a->bytes[RPMEMCTL_SCRUB_OK] +
				      a->bytes[RPMEMCTL_SCRUB_DAMAGED]);
	json_u64(&j, "bytes_damaged", a->bytes[RPMEMCTL_SCRUB_DAMAGED]);
	json_u64(&j, "bytes_unverified", a->bytes[RPMEMCTL_SCRUB_UNVERIFIED]);
	json_bool(&j, "clean", a->n == 0 && a->nvbad == 0);
	json_u64(&j, "repaired_bytes", a->repaired);
	json_arr_begin(&j, "findings");
	for (size_t i = 0; i < a->n; i++) {
		json_obj_begin(&j, NULL);
		json_u64(&j, "offset", a->v[i].off);
		json_u64(&j, "length", a->v[i].len);
		json_str(&j, "status", status_str(a->v[i].st));
		json_str(&j, "reason", a->v[i].why);
		json_obj_end(&j);
	}
	json_arr_end(&j);
	json_arr_begin(&j, "version_findings");
	for (size_t i = 0; i < a->nvfix; i++) {
		json_obj_begin(&j, NULL);
		json_u64(&j, "version", a->vfix[i].gen);
		json_u64(&j, "offset", a->vfix[i].off);
		json_u64(&j, "length", a->vfix[i].len);
		json_str(&j, "status", status_str(a->vfix[i].st));
		json_obj_end(&j);
	}
	json_arr_end(&j);
	json_u64(&j, "version_repaired_bytes", a->vrepaired);
	json_arr_begin(&j, "damaged_versions");
	for (size_t i = 0; i < a->nvbad; i++)
		json_u64(&j, NULL, a->vbad[i]);
	json_arr_end(&j);
	json_end(&j);
}

/* report_human -- the ranges (always), then a summary (informational) */
static void report_human(struct rpmemctl_ctx *ctx, const char *target,
			 struct rpmemctl_pool *pool,
			 const struct scrub_acc *a)
{
	uint64_t bad = a->bytes[RPMEMCTL_SCRUB_DAMAGED];
	uint64_t unv = a->bytes[RPMEMCTL_SCRUB_UNVERIFIED];
	char c[CMD_BYTES_MAX], d[CMD_BYTES_MAX], u[CMD_BYTES_MAX];

	for (size_t i = 0; i < a->n; i++)
		printf("%s at 0x%" PRIx64 " length %" PRIu64 "%s%s\n",
		       status_str(a->v[i].st), a->v[i].off, a->v[i].len,
		       a->v[i].why[0] ? ": " : "", a->v[i].why);
	cmd_fmt_bytes(a->bytes[RPMEMCTL_SCRUB_OK] + bad, c, sizeof(c));
	cmd_fmt_bytes(bad, d, sizeof(d));
	cmd_fmt_bytes(unv, u, sizeof(u));
	if (a->vrepaired)
		cmd_info(ctx, "%" PRIu64 " bytes of damaged versions repaired "
			 "from %s", a->vrepaired, a->from);
	if (bad && a->repaired == bad)
		cmd_info(ctx, "scrubbed %s: %s damaged of %s checked, %s "
			 "unverified; all of it repaired from %s", target, d,
			 c, u, a->from);
	else if (bad && a->from)
		cmd_info(ctx, "scrubbed %s: %s damaged of %s checked, %s "
			 "unverified; %" PRIu64 " bytes repaired from %s, the "
			 "rest is still damaged", target, d, c, u, a->repaired,
			 a->from);
	else if (bad)
		cmd_info(ctx, "scrubbed %s: %s damaged of %s checked, %s "
			 "unverified; nothing was repaired: the target lists "
			 "the pool as damaged until a sync from a good copy "
			 "rewrites them", target, d, c, u);
	else if (unv)
		cmd_info(ctx, "scrubbed %s: %s checked and intact, %s could "
			 "not be verified", target, c, u);
	else
		cmd_info(ctx, "scrubbed %s%s: all %s checked, every piece as "
			 "recorded at generation %" PRIu64, target,
			 a->at ? " (a version)" : "", c,
			 a->at ? a->at : rpmemctl_pool_get_generation(pool));
}

/*
 * damaged_versions -- the pool's versions that are damaged on the target
 * (their journals do not read, or a record's data does not check: the
 * target reads them all, an older one only their heads): printed
 * (human) or into *out (JSON); how many
 */
static size_t damaged_versions(struct rpmemctl_ctx *ctx,
			       struct rpmemctl_pool *pool, const char *target,
			       uint64_t **out)
{
	struct rpmemctl_version *v = NULL;
	size_t n = 0, k = 0;

	*out = NULL;
	if (rpmemctl_pool_versions_check(pool, &v, &n) == -ENOTSUP)
		rpmemctl_pool_versions(pool, &v, &n);
	if (!v || !n || !(*out = calloc(n, sizeof(**out)))) {
		free(v);
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		if (!(v[i].flags & (RPMEMCTL_VERSION_DAMAGED |
				    RPMEMCTL_VERSION_BAD_DATA)))
			continue;
		(*out)[k++] = v[i].generation;
		if (ctx->json)
			continue;
		if (v[i].flags & RPMEMCTL_VERSION_DAMAGED)
			printf("damaged version %" PRIu64 ": its journal on the "
			       "target does not read (kept; rpmemctl scrub "
			       "--at %" PRIu64 " of %s names the ranges)\n",
			       v[i].generation, v[i].generation, target);
		else
			printf("damaged version %" PRIu64 ": a record of its "
			       "journal on the target does not check (kept; "
			       "rpmemctl scrub --at %" PRIu64 " of %s names the "
			       "ranges, scrub --repair --from another copy "
			       "heals them)\n", v[i].generation,
			       v[i].generation, target);
	}
	free(v);
	return k;
}

/*
 * rebuild -- open the pool for writing and close it: the target records
 * the hashes of a consistent image that has none; an exit code
 */
static int rebuild(struct rpmemctl_ctx *ctx, struct rpmemctl_session *sess,
		   const struct cmd_target *t, const char *hp)
{
	struct rpmemctl_pool *pool = NULL;
	int ret = rpmemctl_pool_open_or_create(sess, t->region, t->pool, 0,
					       RPMEMCTL_OPEN_RDWR, &pool, NULL);

	if (ret)
		return cmd_remote_err(ctx, sess, ret, NULL,
				      "cannot open pool '%s/%s' on %s for "
				      "writing to rebuild its scrub record",
				      t->region, t->pool, hp);
	rpmemctl_pool_close(&pool);
	return 0;
}

/* the copy a repair reads from: a local file, or another target's pool */
struct repair_src {
	struct cmd_local local; /* a file: fd >= 0 */
	struct rpmemctl_session *sess;
	struct rpmemctl_pool *pool;
};

/*
 * src_target -- open the pool of target from read-only, of the damaged
 * pool's size; an exit code
 */
static int src_target(struct rpmemctl_ctx *ctx, const char *from,
		      uint64_t size, struct repair_src *s)
{
	struct cmd_target t;
	char hp[CMD_HP_MAX];
	int ret, code = cmd_parse_target(ctx, from, RPMEMCTL_TARGET_NEED_POOL,
					 &t);

	if (!code)
		code = cmd_connect(ctx, &t, RPMEMCTL_TRANSPORT_TCP, &s->sess);
	if (code)
		return code;
	cmd_hostport(&t, hp, sizeof(hp));
	ret = rpmemctl_pool_open_or_create(s->sess, t.region, t.pool, 0,
					   RPMEMCTL_OPEN_RDONLY, &s->pool,
					   NULL);
	if (ret)
		return cmd_remote_err(ctx, s->sess, ret, NULL,
				      "cannot open pool '%s/%s' on %s",
				      t.region, t.pool, hp);
	if (rpmemctl_pool_get_size(s->pool) == size)
		return 0;
	cmd_err(ctx, "%s holds another image (%" PRIu64 " bytes; the damaged "
		"pool is %" PRIu64 " bytes): it cannot repair it; nothing was "
		"written", from, rpmemctl_pool_get_size(s->pool), size);
	return CMD_EXIT_REFUSED;
}

/*
 * src_same_gen -- the source target's image is the damaged pool's
 * (consistent at generation gen), as a repair of the pool needs; an exit
 * code
 */
static int src_same_gen(struct rpmemctl_ctx *ctx, const char *from,
			uint64_t gen, const struct repair_src *s)
{
	if (s->local.fd >= 0 ||
	    (rpmemctl_pool_get_generation(s->pool) == gen &&
	     rpmemctl_pool_get_state(s->pool) == RPMEMCTL_POOL_CONSISTENT))
		return 0;
	cmd_err(ctx, "%s holds another image (%s at generation %" PRIu64
		"; the damaged pool is consistent at generation %" PRIu64
		"): it cannot repair it; nothing was written", from,
		rpmemctl_pool_state_str(rpmemctl_pool_get_state(s->pool)),
		rpmemctl_pool_get_generation(s->pool), gen);
	return CMD_EXIT_REFUSED;
}

/*
 * src_open -- --from: an existing local file of the pool's size, else
 * another target's pool of the same size; an exit code
 */
static int src_open(struct rpmemctl_ctx *ctx, const char *from,
		    uint64_t size, struct repair_src *s)
{
	struct stat st;
	int code;

	s->local.fd = -1;
	if (stat(from, &st))
		return src_target(ctx, from, size, s);
	if ((code = cmd_local_open(ctx, from, 0, 0, &s->local)))
		return code;
	if (s->local.len == size)
		return 0;
	cmd_err(ctx, "'%s' is %zu bytes, the pool %" PRIu64 ": it cannot "
		"repair it; nothing was written", from, s->local.len, size);
	return CMD_EXIT_LOCAL;
}

static void src_close(struct repair_src *s)
{
	if (s->local.fd >= 0)
		cmd_local_close(&s->local, 0);
	rpmemctl_pool_close(&s->pool);
	rpmemctl_session_close(&s->sess);
}

/*
 * src_read -- n bytes at off of the source into buf: of version gen's
 * image (0: the pool's), a file being the image asked for; 0 or -errno
 */
static int src_read(struct repair_src *s, uint64_t gen, uint64_t off,
		    uint8_t *buf, size_t n)
{
	if (s->local.fd >= 0) {
		memcpy(buf, (const uint8_t *)s->local.addr + off, n);
		return 0;
	}
	return gen ? rpmemctl_pool_read_at(s->pool, gen, buf, off, n) :
		     rpmemctl_pool_read(s->pool, buf, off, n);
}

/*
 * repair_range -- the damaged range r of version gen (0: the pool's
 * image) rewritten from the source, 1 MiB a request; 1 if all of it was
 * taken by the target, else 0 (why on stderr)
 */
static int repair_range(struct rpmemctl_ctx *ctx,
			struct rpmemctl_session *sess, struct rpmemctl_pool *rw,
			struct repair_src *s, const char *from, uint64_t gen,
			const struct scrub_range *r, uint8_t *buf)
{
	const uint64_t chunk = 1u << 20;

	for (uint64_t o = r->off; o < r->off + r->len; o += chunk) {
		size_t n = r->off + r->len - o < chunk ?
				   (size_t)(r->off + r->len - o) :
				   (size_t)chunk;
		int ret = src_read(s, gen, o, buf, n);

		if (ret) {
			cmd_warn(ctx, "not repaired at 0x%" PRIx64 " length "
				 "%zu: reading it from %s failed: %s", o, n,
				 from, rpmemctl_session_errmsg(s->sess));
			return 0;
		}
		ret = gen ? rpmemctl_pool_repair_at(rw, gen, o, buf, n) :
			    rpmemctl_pool_repair(rw, o, buf, n);
		if (!ret)
			continue;
		cmd_warn(ctx, "not repaired at 0x%" PRIx64 " length %zu with "
			 "the data of %s: %s", o, n, from,
			 rpmemctl_session_errmsg(sess));
		return 0;
	}
	return 1;
}

/* still_damaged -- a damaged range of b overlaps r */
static int still_damaged(const struct scrub_acc *b, const struct scrub_range *r)
{
	for (size_t i = 0; i < b->n; i++)
		if (b->v[i].st == RPMEMCTL_SCRUB_DAMAGED &&
		    b->v[i].off < r->off + r->len &&
		    r->off < b->v[i].off + b->v[i].len)
			return 1;
	return 0;
}

/*
 * repair_version -- a's damaged ranges of version gen (scrubbed into a)
 * rewritten from the source (REPAIR_AT), then the version scrubbed again:
 * the ranges that check now are repaired (status OK, a->repaired); the
 * exit code of the pass (0: every damaged range repaired)
 */
static int repair_version(struct rpmemctl_ctx *ctx,
			  struct rpmemctl_session *sess,
			  struct rpmemctl_pool *ro, struct rpmemctl_pool *rw,
			  struct repair_src *s, struct scrub_acc *a,
			  uint64_t gen, uint8_t *buf)
{
	struct scrub_acc b = { .at = gen };
	int ret, left = 0;

	for (size_t i = 0; i < a->n; i++)
		if (a->v[i].st == RPMEMCTL_SCRUB_DAMAGED)
			repair_range(ctx, sess, rw, s, a->from, gen, &a->v[i],
				     buf);
	/* what the target took is known by scrubbing the version again */
	ret = rpmemctl_pool_scrub_at(ro, gen, 0, scrub_cb, NULL, &b);
	for (size_t i = 0; i < a->n; i++) {
		if (a->v[i].st != RPMEMCTL_SCRUB_DAMAGED)
			continue;
		if (ret < 0 || b.oom || still_damaged(&b, &a->v[i])) {
			left = 1;
			continue;
		}
		a->v[i].st = RPMEMCTL_SCRUB_OK; /* repaired */
		a->repaired += a->v[i].len;
	}
	free(b.v);
	return left ? CMD_EXIT_DAMAGED : 0;
}

/*
 * repair_versions -- without --at, from another target: each version of
 * the pool scrubbed and its damaged ranges repaired from the source's
 * image of that version (printed, into a->vfix); an exit code (0: none
 * is left damaged)
 */
static int repair_versions(struct rpmemctl_ctx *ctx,
			   struct rpmemctl_session *sess,
			   struct rpmemctl_pool *ro, struct rpmemctl_pool *rw,
			   struct repair_src *s, struct scrub_acc *a,
			   uint8_t *buf)
{
	struct rpmemctl_version *v = NULL;
	size_t n = 0;
	int code = 0;

	if (rpmemctl_pool_versions(ro, &v, &n))
		return 0; /* a target without versions */
	for (size_t i = n; i-- > 0;) {
		struct scrub_acc b = { .at = v[i].generation, .from = a->from };
		int ret = rpmemctl_pool_scrub_at(ro, b.at, 0, scrub_cb, NULL,
						 &b);
		int c = ret == 1 && !b.oom ?
				repair_version(ctx, sess, ro, rw, s, &b, b.at,
					       buf) :
				0;

		for (size_t k = 0; k < b.n; k++) {
			if (b.v[k].st == RPMEMCTL_SCRUB_UNVERIFIED)
				continue;
			if (!ctx->json)
				printf("version %" PRIu64 ": %s at 0x%" PRIx64
				       " length %" PRIu64 "\n", b.at,
				       status_str(b.v[k].st), b.v[k].off,
				       b.v[k].len);
			vfix_add(a, b.at, &b.v[k]);
		}
		a->vrepaired += b.repaired;
		if (c && !code)
			code = c;
		free(b.v);
	}
	free(v);
	return code;
}

/*
 * mend_headers -- the versions of the pool listed damaged (a journal
 * header that does not read; only version gen, if not 0) have the target
 * rebuild their header to match its own check (REPAIR_AT of 0 bytes);
 * printed; 1 if one is left damaged
 */
static int mend_headers(struct rpmemctl_ctx *ctx,
			struct rpmemctl_session *sess,
			struct rpmemctl_pool *ro, struct rpmemctl_pool *rw,
			uint64_t gen)
{
	struct rpmemctl_version *v = NULL;
	size_t n = 0;
	int left = 0;

	if (rpmemctl_pool_versions(ro, &v, &n))
		return 0; /* a target without versions */
	for (size_t i = 0; i < n; i++) {
		if (!(v[i].flags & RPMEMCTL_VERSION_DAMAGED) ||
		    (gen && v[i].generation != gen))
			continue;
		if (!rpmemctl_pool_repair_at(rw, v[i].generation, 0, NULL, 0)) {
			if (!ctx->json)
				printf("version %" PRIu64 ": header repaired\n",
				       v[i].generation);
			continue;
		}
		cmd_warn(ctx, "version %" PRIu64 ": its header is not "
			 "repaired: %s", v[i].generation,
			 rpmemctl_session_errmsg(sess));
		left = 1;
	}
	free(v);
	return left;
}

/* rw_open -- the damaged pool opened for writing (the repair); exit code */
static int rw_open(struct rpmemctl_ctx *ctx, struct rpmemctl_session *sess,
		   const struct cmd_target *t, const char *hp,
		   struct rpmemctl_pool **rw)
{
	int ret = rpmemctl_pool_open_or_create(sess, t->region, t->pool, 0,
					       RPMEMCTL_OPEN_RDWR, rw, NULL);

	return ret ? cmd_remote_err(ctx, sess, ret, NULL,
				    "cannot open pool '%s/%s' on %s for "
				    "writing", t->region, t->pool, hp) :
		     0;
}

/*
 * scrub_repair -- --repair: each damaged range of a (the pool's image at
 * generation gen, or with --at that version's) rewritten from the
 * source, through a read-write open of the pool; without --at, from
 * another target, its versions' damaged ranges too. An exit code (0:
 * every damaged range repaired)
 */
static int scrub_repair(struct rpmemctl_ctx *ctx,
			struct rpmemctl_session *sess,
			const struct cmd_target *t, const char *hp,
			struct scrub_acc *a, struct rpmemctl_pool *ro,
			uint64_t gen)
{
	struct repair_src src = { .local = { .fd = -1 } };
	struct rpmemctl_pool *rw = NULL;
	uint8_t *buf = malloc(1u << 20);
	int code = buf ? src_open(ctx, a->from, rpmemctl_pool_get_size(ro),
				  &src) :
			 CMD_EXIT_INTERNAL;
	int pool_bad = a->bytes[RPMEMCTL_SCRUB_DAMAGED] != 0, left = 0;

	if (!code && pool_bad && !a->at)
		code = src_same_gen(ctx, a->from, gen, &src);
	if (!code)
		code = rw_open(ctx, sess, t, hp, &rw);
	if (!code && a->at && pool_bad)
		left = repair_version(ctx, sess, ro, rw, &src, a, a->at, buf);
	/* a version's header is judged by its own check: no source needed */
	if (!code && mend_headers(ctx, sess, ro, rw, a->at))
		left = CMD_EXIT_DAMAGED;
	for (size_t i = 0; !code && !a->at && i < a->n; i++) {
		if (a->v[i].st != RPMEMCTL_SCRUB_DAMAGED)
			continue;
		if (repair_range(ctx, sess, rw, &src, a->from, 0, &a->v[i],
				 buf)) {
			a->v[i].st = RPMEMCTL_SCRUB_OK; /* repaired */
			a->repaired += a->v[i].len;
		} else {
			left = CMD_EXIT_DAMAGED;
		}
	}
	/* a file is one image: the versions are repaired from it by --at */
	if (!code && !a->at && src.local.fd < 0 &&
	    repair_versions(ctx, sess, ro, rw, &src, a, buf))
		left = CMD_EXIT_DAMAGED;
	rpmemctl_pool_close(&rw);
	src_close(&src);
	free(buf);
	return code ? code : left;
}

/* scrub_pool -- open read-only, scrub, report; an exit code */
static int scrub_pool(struct rpmemctl_ctx *ctx, struct rpmemctl_session *sess,
		      const struct cmd_target *t, const char *hp,
		      const char *target, struct scrub_acc *a)
{
	struct rpmemctl_pool *pool = NULL;
	int ret = rpmemctl_pool_open_or_create(sess, t->region, t->pool, 0,
					       RPMEMCTL_OPEN_RDONLY, &pool,
					       NULL);

	if (ret)
		return cmd_remote_err(ctx, sess, ret, NULL,
				      "cannot open pool '%s/%s' on %s",
				      t->region, t->pool, hp);
	cmd_progress_init(&a->prog, ctx, "scrub");
	ret = a->at ? rpmemctl_pool_scrub_at(pool, a->at, 0, scrub_cb,
					     scrub_progress, a) :
		      rpmemctl_pool_scrub(pool, 0, scrub_cb, scrub_progress, a);
	cmd_progress_end(&a->prog);
	if (ret < 0) {
		ret = cmd_remote_err(ctx, sess, ret, NULL, "cannot scrub %s",
				     target);
	} else if (a->oom) {
		cmd_err(ctx, "out of memory collecting ranges");
		ret = CMD_EXIT_INTERNAL;
	} else {
		/* --repair: the damaged ranges rewritten from the source */
		int code = ret >= 0 && a->from ?
				   scrub_repair(ctx, sess, t, hp, a, pool,
						rpmemctl_pool_get_generation(pool)) :
				   -1;
		if (code == 0 && ret == 1) /* every damaged range repaired */
			ret = a->bytes[RPMEMCTL_SCRUB_UNVERIFIED] ? 2 : 0;
		if (code == CMD_EXIT_DAMAGED && ret != 1) /* a version's */
			ret = 1;
		/* the pool's scrub also says which of its versions are damaged */
		if (!a->at)
			a->nvbad = damaged_versions(ctx, pool, target, &a->vbad);
		if (ctx->json)
			report_json(t, hp, pool, a);
		else
			report_human(ctx, target, pool, a);
		ret = ret == 1 || a->nvbad ? CMD_EXIT_DAMAGED :
		      ret == 2 ? CMD_EXIT_UNVERIFIED : CMD_EXIT_OK;
		if (code > 0 && code != CMD_EXIT_DAMAGED) /* the repair failed */
			ret = code;
	}
	rpmemctl_pool_close(&pool);
	return ret;
}

/* cmd_scrub -- rpmemctl scrub */
int cmd_scrub(int argc, char **argv, struct rpmemctl_ctx *ctx)
{
	/* only the control connection carries a scrub */
	const struct cmd_open o = { 1, 1, RPMEMCTL_TARGET_NEED_POOL, NULL,
				    RPMEMCTL_TRANSPORT_TCP };
	struct rpmemctl_session *sess = NULL;
	struct scrub_acc a = { 0 };
	struct cmd_target t;
	char hp[CMD_HP_MAX], target[CMD_TARGET_MAX];
	int c, code = 0, rebuild_first = 0, repair = 0;

	while ((c = cmd_getopt(ctx, argc, argv, CMD_COMMON_SHORT "ja:",
			       scrub_opts, scrub_usage, &code)) != -1) {
		switch (c) {
		case -2:
			return code;
		case 'a':
			code = cmd_parse_version(ctx, optarg, &a.at);
			if (code)
				return code;
			break;
		case CMD_OPT_FIRST_PRIVATE:
			rebuild_first = 1;
			break;
		case CMD_OPT_FIRST_PRIVATE + 1:
			repair = 1;
			break;
		case CMD_OPT_FIRST_PRIVATE + 2:
			a.from = optarg;
			break;
		}
	}
	if (repair != !!a.from)
		return cmd_usage_error(ctx, "--repair needs --from SOURCE "
				       "(and --from needs --repair)");
	code = cmd_open_target(ctx, argc, argv, &o, &t, hp, NULL);
	if (code)
		return code;
	cmd_target_str(&t, target, sizeof(target));
	if (rebuild_first && a.at)
		return cmd_usage_error(ctx, "--rebuild records the pool's image: "
				       "not with --at");
	code = cmd_connect(ctx, &t, o.transport, &sess);
	if (!code && rebuild_first)
		code = rebuild(ctx, sess, &t, hp);
	if (!code)
		code = scrub_pool(ctx, sess, &t, hp, target, &a);
	rpmemctl_session_close(&sess);
	free(a.v);
	free(a.vbad);
	free(a.vfix);
	return code;
}
