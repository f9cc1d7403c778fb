/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * versions.c -- point-in-time versions of pools (versions.h): their files,
 * listing, keeping, repair (pruning: versions_prune.c; reading:
 * versions_chain.c)
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "crashpoint.h"
#include "journal.h"
#include "log.h"
#include "meta.h"
#include "scrub.h"
#include "undo.h"
#include "util.h"
#include "versions.h"
#include "versions_int.h"

/* ver_name -- "<pool>.v<gen>.ver" into out */
void ver_name(const char *pool, uint64_t gen, char *out, size_t len)
{
	snprintf(out, len, "%s.v%llu%s", pool, (unsigned long long)gen,
		 RPMEMD_VER_SUFFIX);
}

/*
 * ver_parse -- a version file's name into its pool and generation;
 * 0, or -1 if name is not one
 */
static int ver_parse(const char *name, char *pool, uint64_t *gen)
{
	size_t n = strlen(name), s = strlen(RPMEMD_VER_SUFFIX), d = 0;

	if (n <= s || strcmp(name + n - s, RPMEMD_VER_SUFFIX))
		return -1;
	n -= s;
	while (d < n && isdigit((unsigned char)name[n - 1 - d]))
		d++;
	if (!d || d > 19 || n < d + 3 || name[n - d - 1] != 'v' ||
	    name[n - d - 2] != '.' || n - d - 2 > RPMEM_NAME_MAX)
		return -1;
	memcpy(pool, name, n - d - 2);
	pool[n - d - 2] = '\0';
	*gen = strtoull(name + n - d, NULL, 10);
	return rpmem_name_valid(pool) ? 0 : -1;
}

/* file_bytes -- the size of name in dirfd (0 if none) */
static uint64_t file_bytes(int dirfd, const char *name)
{
	struct stat st;
	return fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) ? 0 :
							       (uint64_t)st.st_size;
}

/* ver_bytes -- the bytes of version gen of pool: journal, scrub record */
uint64_t ver_bytes(int dirfd, const char *pool, uint64_t gen)
{
	char fn[RPMEM_NAME_MAX + 48];
	uint64_t b;

	ver_name(pool, gen, fn, sizeof(fn));
	b = file_bytes(dirfd, fn);
	snprintf(fn, sizeof(fn), "%s.scrub.v%llu", pool,
		 (unsigned long long)gen);
	return b + file_bytes(dirfd, fn);
}

/* vl_add -- append v */
static int vl_add(struct vlist *l, const struct rpmemd_version *v)
{
	if (l->n == l->cap) {
		size_t nc = l->cap ? 2 * l->cap : 16;
		void *nv = realloc(l->v, nc * sizeof(*l->v));
		if (!nv)
			return -ENOMEM;
		l->v = nv;
		l->cap = nc;
	}
	l->v[l->n++] = *v;
	return 0;
}

/* by_gen -- order versions by pool, then generation */
static int by_gen(const void *a, const void *b)
{
	const struct rpmemd_version *x = a, *y = b;
	int c = strcmp(x->pool, y->pool);
	if (c)
		return c;
	return x->gen < y->gen ? -1 : x->gen > y->gen;
}

/*
 * scan_dir -- every version file in metafd (of pool only, unless NULL)
 * as found, headers unread (only pool, gen, bytes), sorted
 */
int scan_dir(int metafd, const char *pool, struct vlist *l)
{
	int fd = openat(metafd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *e;
	int ret = 0;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return -errno;
	}
	while (!ret && (e = readdir(d))) {
		struct rpmemd_version v = { 0 };
		if (ver_parse(e->d_name, v.pool, &v.gen) ||
		    (pool && strcmp(pool, v.pool)))
			continue;
		v.bytes = ver_bytes(metafd, v.pool, v.gen);
		ret = vl_add(l, &v);
	}
	closedir(d);
	if (l->n)
		qsort(l->v, l->n, sizeof(*l->v), by_gen);
	return ret;
}

/*
 * ver_salvage_info -- what damaged version v's trailer still says (when
 * it became current, its hash), to list it by; its next is not trusted
 */
static void ver_salvage_info(int metafd, const char *fn,
			     const struct rpmemd_meta *m,
			     struct rpmemd_version *v)
{
	struct rpmemd_undo *u;

	if (rpmemd_undo_load_salvage(metafd, fn, m->uuid, m->size, v->gen,
				     &u))
		return;
	const struct rpmemd_undo_ver *t = rpmemd_undo_ver(u);
	if (t->next > v->gen) {
		v->time = t->time;
		v->committed = t->committed;
		v->hash = t->hash;
	}
	rpmemd_undo_close(&u);
}

/* bad_name -- "<pool>.v<gen>.ver.bad" into out */
static void bad_name(const char *pool, uint64_t gen, char *out, size_t len)
{
	snprintf(out, len, "%s.v%llu%s%s", pool, (unsigned long long)gen,
		 RPMEMD_VER_SUFFIX, RPMEMD_VER_BAD_SUFFIX);
}

/* ver_marked -- version gen of pool is marked damaged in its data */
static int ver_marked(int metafd, const char *pool, uint64_t gen)
{
	char fn[RPMEM_NAME_MAX + 64];
	int fd;

	bad_name(pool, gen, fn, sizeof(fn));
	fd = rpmemd_open_ro(metafd, fn);
	if (fd < 0)
		return 0;
	close(fd);
	return 1;
}

/* mark_create -- the mark fn of a version, made durable; 0 or -errno */
static int mark_create(int metafd, const char *fn)
{
	int fd = rpmemd_open_own(metafd, fn, O_RDWR | O_CREAT);
	int ret = fd < 0 ? fd : 0;

	if (fd >= 0 && fsync(fd))
		ret = -errno;
	if (fd >= 0)
		close(fd);
	if (!ret && fsync(metafd))
		ret = -errno;
	return ret;
}

void rpmemd_version_mark(struct rpmemd_region *r, const char *pool,
			 uint64_t gen, int bad)
{
	char fn[RPMEM_NAME_MAX + 64], vf[RPMEM_NAME_MAX + 48];
	int ret = 0;

	if (r->metafd < 0)
		return;
	bad_name(pool, gen, fn, sizeof(fn));
	ver_name(pool, gen, vf, sizeof(vf));
	pthread_mutex_lock(&r->ver_lock);
	if (!bad && unlinkat(r->metafd, fn, 0) && errno != ENOENT)
		ret = -errno;
	else if (bad && !faccessat(r->metafd, vf, F_OK, AT_SYMLINK_NOFOLLOW))
		ret = mark_create(r->metafd, fn);
	pthread_mutex_unlock(&r->ver_lock);
	if (ret)
		WARN("region '%s': pool '%s': cannot %s version %llu as damaged in its data: %s",
		     r->cfg.name, pool, bad ? "mark" : "unmark",
		     (unsigned long long)gen, strerror(-ret));
}

/* ver_read -- version v's header (of the pool of metadata m) into v */
int ver_read(int metafd, const struct rpmemd_meta *m,
	     struct rpmemd_version *v)
{
	char fn[RPMEM_NAME_MAX + 48];
	struct rpmemd_undo *u;
	int ret;

	ver_name(v->pool, v->gen, fn, sizeof(fn));
	v->size = m->size;
	v->bad_data = ver_marked(metafd, v->pool, v->gen);
	ret = rpmemd_undo_load_file(metafd, fn, m->uuid, m->size, 0, &u);
	v->damaged = ret == -EBADMSG;
	if (v->damaged)
		ver_salvage_info(metafd, fn, m, v);
	if (ret)
		return ret;
	const struct rpmemd_undo_ver *t = rpmemd_undo_ver(u);
	if (rpmemd_undo_generation(u) != v->gen || t->next <= v->gen)
		ret = -EBADMSG;
	v->damaged = ret == -EBADMSG;
	v->next = t->next;
	v->time = t->time;
	v->committed = t->committed;
	v->hash = t->hash;
	rpmem_strlcpy(v->source, rpmemd_undo_source(u), sizeof(v->source));
	rpmemd_undo_close(&u);
	return ret;
}

/*
 * leftover -- version i lies inside an older readable one's span: a prune
 * that a crash cut short after the older one took its blocks
 */
static int leftover(const struct vlist *l, size_t i)
{
	for (size_t j = 0; j < i; j++)
		if (l->v[j].next > l->v[i].gen && l->v[j].gen < l->v[i].gen)
			return 1;
	return 0;
}

/*
 * chain -- of the versions of one pool in l (sorted, headers read: bad
 * ones are damaged, next 0; leftovers gone), mark in ok[] the ones on
 * its chain: from the pool's generation cur down, each version's next is
 * the one newer kept. A damaged one's next is unknown: it is taken to
 * link where the chain stands, so the older ones stay on it.
 */
static void chain(const struct vlist *l, uint64_t cur, uint8_t *ok)
{
	uint64_t expect = cur;
	size_t i;

	for (i = l->n; i-- > 0;) {
		ok[i] = 0;
		if (l->v[i].damaged) {
			if (l->v[i].gen < expect) { /* taken as the link */
				ok[i] = 1;
				expect = l->v[i].gen;
			}
			continue; /* else a stray: off the chain, kept */
		}
		if (l->v[i].next != expect)
			break; /* older ones lack a link to the image */
		ok[i] = 1;
		expect = l->v[i].gen;
	}
}

/* ver_unlink -- remove version gen of pool (its journal, its record) */
void ver_unlink(int metafd, const char *pool, uint64_t gen)
{
	char fn[RPMEM_NAME_MAX + 48];

	rpmemd_vchains_release(metafd, pool); /* its file is closed too */
	ver_name(pool, gen, fn, sizeof(fn));
	if (unlinkat(metafd, fn, 0) && errno != ENOENT)
		WARN("pool '%s': cannot remove version %llu: %s", pool,
		     (unsigned long long)gen, strerror(errno));
	rpmemd_scrub_version_unlink(metafd, pool, gen);
	bad_name(pool, gen, fn, sizeof(fn));
	if (unlinkat(metafd, fn, 0) && errno != ENOENT)
		WARN("pool '%s': cannot remove the damage mark of version %llu: %s",
		     pool, (unsigned long long)gen, strerror(errno));
}

/*
 * ver_unlink_folded -- remove version gen of pool, folded into an older
 * one: its record first, so that a crash leaves no record without its
 * journal; the journal left is inside the older one's span (leftover)
 */
void ver_unlink_folded(int metafd, const char *pool, uint64_t gen)
{
	rpmemd_scrub_version_unlink(metafd, pool, gen);
	crash_point("prune-unlinked");
	ver_unlink(metafd, pool, gen);
}

/*
 * complete_prunes -- the versions of l inside an older one's span (a
 * prune a crash cut short once the older one's trailer took them in) are
 * removed, as the prune would have, and dropped from l
 */
static void complete_prunes(struct rpmemd_region *r, struct vlist *l)
{
	size_t k = 0;

	for (size_t i = 0; i < l->n; i++) {
		if (!leftover(l, i)) {
			l->v[k++] = l->v[i];
			continue;
		}
		NOTICE("region '%s': pool '%s': version %llu was being pruned when rpmemd stopped (an older version holds its blocks): its prune completed",
		       r->cfg.name, l->v[i].pool,
		       (unsigned long long)l->v[i].gen);
		ver_unlink_folded(r->metafd, l->v[i].pool, l->v[i].gen);
	}
	l->n = k;
}

/* vchain_has -- l has restorable version gen */
int vchain_has(const struct vlist *l, const uint8_t *ok, uint64_t gen)
{
	for (size_t i = 0; i < l->n; i++)
		if (ok[i] && l->v[i].gen == gen)
			return 1;
	return 0;
}

/*
 * pool_versions -- the versions of pool (metadata m) in l, ok[] (malloc'd)
 * marking the ones on its chain; r->ver_lock held
 */
int pool_versions(struct rpmemd_region *r, const char *pool,
		  const struct rpmemd_meta *m, struct vlist *l,
		  uint8_t **ok)
{
	int ret = scan_dir(r->metafd, pool, l);

	*ok = NULL;
	if (ret)
		return ret;
	for (size_t i = 0; i < l->n; i++)
		if (ver_read(r->metafd, m, &l->v[i]))
			l->v[i].next = 0;
	complete_prunes(r, l);
	if (!(*ok = calloc(l->n + 1, 1)))
		return -ENOMEM;
	chain(l, m->generation, *ok);
	return 0;
}

int rpmemd_versions_list(struct rpmemd_region *r, const char *pool,
			 const struct rpmemd_meta *m, struct rpmemd_version **v,
			 size_t *n)
{
	struct vlist l = { 0 }, out = { 0 };
	uint8_t *ok = NULL;
	int ret;

	*v = NULL;
	*n = 0;
	if (r->metafd < 0)
		return 0;
	pthread_mutex_lock(&r->ver_lock);
	ret = pool_versions(r, pool, m, &l, &ok);
	pthread_mutex_unlock(&r->ver_lock);
	for (size_t i = 0; !ret && i < l.n; i++)
		if (ok[i] || l.v[i].damaged)
			ret = vl_add(&out, &l.v[i]);
	free(l.v);
	free(ok);
	if (ret) {
		free(out.v);
		return ret;
	}
	*v = out.v;
	*n = out.n;
	return 0;
}

uint64_t rpmemd_versions_bytes(struct rpmemd_region *r, const char *pool)
{
	struct vlist l = { 0 };
	uint64_t b = 0;

	if (r->metafd < 0)
		return 0;
	if (!scan_dir(r->metafd, pool, &l))
		for (size_t i = 0; i < l.n; i++)
			b += l.v[i].bytes;
	free(l.v);
	return b;
}

/* by_pool_name -- bsearch a pool's entry by its name */
static int by_pool_name(const void *key, const void *e)
{
	return strcmp(key, ((const struct rpmem_pool_info *)e)->name);
}

void rpmemd_versions_info(struct rpmemd_region *r, struct rpmem_pool_info *v,
			  uint32_t n)
{
	struct vlist l = { 0 };

	if (r->metafd < 0 || !n || scan_dir(r->metafd, NULL, &l)) {
		free(l.v);
		return;
	}
	for (size_t i = 0; i < l.n; i++) {
		struct rpmem_pool_info *p = bsearch(l.v[i].pool, v, n,
						    sizeof(*v), by_pool_name);
		if (p) {
			p->versions++;
			p->versions_bytes += l.v[i].bytes;
		}
	}
	free(l.v);
}

int rpmemd_version_keep(struct rpmemd_pool *p, const struct rpmemd_meta *was)
{
	char from[RPMEM_NAME_MAX + 16], to[RPMEM_NAME_MAX + 48];
	struct rpmemd_region *r = p->region;
	struct rpmemd_undo_ver v = { .time = was->last_sync,
				     .next = was->generation + 1,
				     .committed = (uint64_t)time(NULL) };
	uint64_t gen = rpmemd_undo_generation(rpmemd_journal_undo(p));
	int ret;

	if (gen != was->generation)
		return -EINVAL;
	snprintf(from, sizeof(from), "%s%s", p->name, RPMEMD_UNDO_SUFFIX);
	ver_name(p->name, gen, to, sizeof(to));
	pthread_mutex_lock(&r->ver_lock);
	rpmemd_vchains_release(r->metafd, p->name); /* they read gen + 1 */
	v.hash = rpmemd_scrub_keep(r->metafd, p->name, p->size, gen);
	ret = rpmemd_undo_set_ver(rpmemd_journal_undo(p), &v);
	if (!ret && renameat(r->metafd, from, r->metafd, to))
		ret = -errno;
	if (!ret && fsync(r->metafd))
		ret = -errno;
	pthread_mutex_unlock(&r->ver_lock);
	if (ret)
		rpmemd_scrub_version_unlink(r->metafd, p->name, gen);
	return ret;
}

void rpmemd_versions_remove(struct rpmemd_region *r, const char *pool)
{
	struct vlist l = { 0 };

	if (r->metafd < 0)
		return;
	pthread_mutex_lock(&r->ver_lock);
	if (!scan_dir(r->metafd, pool, &l))
		for (size_t i = 0; i < l.n; i++)
			ver_unlink(r->metafd, pool, l.v[i].gen);
	pthread_mutex_unlock(&r->ver_lock);
	if (l.n)
		INFO("region '%s': pool '%s': its %zu versions removed with it",
		     r->cfg.name, pool, l.n);
	free(l.v);
}

/* a version repair's vouching by the version's scrub record */
struct mend_vouch {
	const struct rpmemd_pool *p;
	uint64_t gen;
};

/* mend_vouch -- the pieces hash as version gen's scrub record says */
static int mend_vouch(void *arg, uint64_t off, const uint8_t *data,
		      uint64_t len)
{
	struct mend_vouch *v = arg;
	uint32_t count = (uint32_t)(len / RPMEM_HASH_PIECE);
	uint8_t *piece = calloc(count ? count : 1, 1), why = 0;
	int ret = piece ? rpmemd_scrub_version_check(v->p->region->metafd,
						     v->p->name, v->p->size,
						     v->gen, off, count, data,
						     piece, &why) :
			  -ENOMEM;

	for (uint32_t i = 0; !ret && i < count; i++)
		if (piece[i] != RPMEM_SCRUB_OK)
			ret = -EILSEQ;
	if (!ret && why != RPMEM_SCRUB_RECORDED)
		ret = -EILSEQ;
	free(piece);
	return ret;
}

/* a repair's journals: those of the versions from gen up, oldest first */
struct mend {
	struct rpmemd_undo **u;
	char (*fn)[RPMEM_NAME_MAX + 48];
	size_t n;
	struct rpmemd_undo_patch *plan;
	size_t np;
	uint64_t *claimed;
	uint8_t *tmp;
};

static void mend_free(struct mend *x)
{
	for (size_t i = 0; i < x->n; i++)
		rpmemd_undo_close(&x->u[i]);
	free(x->u);
	free(x->fn);
	free(x->plan);
	free(x->claimed);
	free(x->tmp);
}

/*
 * mend_plan -- load the journals of l's restorable versions from gen up
 * and plan what data rewrites in them; r->ver_lock held
 */
static int mend_plan(struct rpmemd_pool *p, const struct rpmemd_meta *m,
		     const struct vlist *l, const uint8_t *ok, uint64_t gen,
		     uint64_t off, const uint8_t *data, uint64_t len,
		     struct mend *x, struct rpmemd_vrepair *res)
{
	int metafd = p->region->metafd, ret = 0;

	x->u = calloc(l->n + 1, sizeof(*x->u));
	x->fn = calloc(l->n + 1, sizeof(*x->fn));
	x->claimed = calloc(len / RPMEMD_UNDO_BS / 64 + 1, sizeof(uint64_t));
	x->tmp = malloc(RPMEMD_UNDO_REC_MAX);
	if (!x->u || !x->fn || !x->claimed || !x->tmp)
		return -ENOMEM;
	for (size_t i = 0; !ret && i < l->n; i++) {
		struct mend_vouch v = { p, l->v[i].gen };
		if (!ok[i] || l->v[i].gen < gen)
			continue;
		ver_name(l->v[i].pool, l->v[i].gen, x->fn[x->n],
			 sizeof(x->fn[x->n]));
		ret = l->v[i].damaged ?
			      rpmemd_undo_load_salvage(metafd, x->fn[x->n],
						       m->uuid, m->size,
						       l->v[i].gen, &x->u[x->n]) :
			      rpmemd_undo_load_file(metafd, x->fn[x->n],
						    m->uuid, m->size, 0,
						    &x->u[x->n]);
		if (ret)
			break;
		x->n++;
		ret = rpmemd_undo_mend_plan(x->u[x->n - 1], x->n - 1, off, len,
					    data, x->claimed, mend_vouch, &v,
					    x->tmp, &x->plan, &x->np,
					    &res->bad, &res->bad_len);
		if (ret)
			res->bad_gen = l->v[i].gen;
	}
	return ret;
}

/* mend_apply -- write x's plan into its journals, durably */
static int mend_apply(struct rpmemd_pool *p, struct mend *x,
		      const uint8_t *data, uint64_t off,
		      struct rpmemd_vrepair *res)
{
	int ret = 0;

	for (size_t f = 0; !ret && f < x->n; f++) {
		int fd = -1;
		for (size_t i = 0; !ret && i < x->np; i++) {
			if (x->plan[i].file != f)
				continue;
			if (fd < 0 && (fd = rpmemd_open_own(p->region->metafd,
							    x->fn[f],
							    O_RDWR)) < 0)
				ret = fd;
			if (!ret)
				ret = rpmemd_undo_mend_write(fd, &x->plan[i],
							     data, off);
			if (!ret)
				res->mended += x->plan[i].len;
		}
		if (fd >= 0 && !ret && fdatasync(fd))
			ret = -errno;
		if (fd >= 0)
			close(fd);
	}
	return ret;
}

int rpmemd_version_repair(struct rpmemd_pool *p, uint64_t gen, uint64_t off,
			  const uint8_t *data, uint64_t len,
			  struct rpmemd_vrepair *res)
{
	struct rpmemd_region *r = p->region;
	struct mend x = { 0 };
	struct vlist l = { 0 };
	struct rpmemd_meta m;
	uint8_t *ok = NULL;
	int ret;

	*res = (struct rpmemd_vrepair){ 0 };
	/* a pool's last block may be short: no journal holds it */
	len = len / RPMEMD_UNDO_BS * RPMEMD_UNDO_BS;
	if (off % RPMEMD_UNDO_BS || off > p->size || len > p->size - off)
		return -EINVAL;
	if (r->metafd < 0)
		return -ENOENT;
	rpmemd_pool_get_meta(p, &m);
	pthread_mutex_lock(&r->ver_lock);
	ret = pool_versions(r, p->name, &m, &l, &ok);
	if (!ret && (gen >= m.generation || !vchain_has(&l, ok, gen)))
		ret = -ENOENT;
	if (!ret)
		ret = mend_plan(p, &m, &l, ok, gen, off, data, len, &x, res);
	if (!ret && x.np)
		ret = mend_apply(p, &x, data, off, res);
	if (res->mended)
		rpmemd_vchains_release(r->metafd, p->name);
	pthread_mutex_unlock(&r->ver_lock);
	mend_free(&x);
	free(l.v);
	free(ok);
	return ret;
}

int rpmemd_version_check(struct rpmemd_region *r, const char *pool,
			 const struct rpmemd_meta *m, uint64_t gen,
			 uint64_t *bad, uint64_t *badlen)
{
	char fn[RPMEM_NAME_MAX + 48];
	uint8_t *tmp = malloc(RPMEMD_UNDO_REC_MAX);
	struct rpmemd_undo *u = NULL;
	int ret = tmp ? 0 : -ENOMEM;

	if (r->metafd < 0)
		ret = -ENOENT;
	ver_name(pool, gen, fn, sizeof(fn));
	if (!ret)
		ret = rpmemd_undo_load_file(r->metafd, fn, m->uuid, m->size, 0,
					    &u);
	if (!ret)
		ret = rpmemd_undo_check(u, tmp, bad, badlen);
	rpmemd_undo_close(&u);
	free(tmp);
	return ret;
}

int rpmemd_version_mend_header(struct rpmemd_pool *p, uint64_t gen)
{
	struct rpmemd_region *r = p->region;
	char fn[RPMEM_NAME_MAX + 48];
	struct vlist l = { 0 };
	struct rpmemd_meta m;
	uint8_t *ok = NULL;
	size_t i;
	int ret;

	if (r->metafd < 0)
		return -ENOENT;
	rpmemd_pool_get_meta(p, &m);
	pthread_mutex_lock(&r->ver_lock);
	ret = pool_versions(r, p->name, &m, &l, &ok);
	for (i = 0; !ret && i < l.n; i++)
		if ((ok[i] || l.v[i].damaged) && l.v[i].gen == gen)
			break;
	if (!ret && i == l.n)
		ret = -ENOENT;
	ver_name(p->name, gen, fn, sizeof(fn));
	if (!ret)
		ret = rpmemd_undo_mend_header(r->metafd, fn, m.uuid, m.size,
					      gen);
	if (!ret)
		rpmemd_vchains_release(r->metafd, p->name);
	pthread_mutex_unlock(&r->ver_lock);
	free(l.v);
	free(ok);
	return ret;
}
