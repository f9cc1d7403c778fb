/* SPDX-License-Identifier: BSD-3-Clause */
/* versions.c -- point-in-time versions of pools (versions.h) */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "crashpoint.h"
#include "guard.h"
#include "log.h"
#include "scrub.h"
#include "undo.h"
#include "util.h"
#include "versions.h"

/* ver_name -- "<pool>.v<gen>.ver" into out */
static void ver_name(const char *pool, uint64_t gen, char *out, size_t len)
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
static uint64_t ver_bytes(int dirfd, const char *pool, uint64_t gen)
{
	char fn[RPMEM_NAME_MAX + 48];
	uint64_t b;

	ver_name(pool, gen, fn, sizeof(fn));
	b = file_bytes(dirfd, fn);
	snprintf(fn, sizeof(fn), "%s.scrub.v%llu", pool,
		 (unsigned long long)gen);
	return b + file_bytes(dirfd, fn);
}

/* a growing array of versions */
struct vlist {
	struct rpmemd_version *v;
	size_t n, cap;
};

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
static int scan_dir(int metafd, const char *pool, struct vlist *l)
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

/* ver_read -- version v's header (of the pool of metadata m) into v */
static int ver_read(int metafd, const struct rpmemd_meta *m,
		    struct rpmemd_version *v)
{
	char fn[RPMEM_NAME_MAX + 48];
	struct rpmemd_undo *u;
	int ret;

	ver_name(v->pool, v->gen, fn, sizeof(fn));
	v->size = m->size;
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
static void ver_unlink(int metafd, const char *pool, uint64_t gen)
{
	char fn[RPMEM_NAME_MAX + 48];

	rpmemd_vchains_release(metafd, pool); /* its file is closed too */
	ver_name(pool, gen, fn, sizeof(fn));
	if (unlinkat(metafd, fn, 0) && errno != ENOENT)
		WARN("pool '%s': cannot remove version %llu: %s", pool,
		     (unsigned long long)gen, strerror(errno));
	rpmemd_scrub_version_unlink(metafd, pool, gen);
}

/*
 * ver_unlink_folded -- remove version gen of pool, folded into an older
 * one: its record first, so that a crash leaves no record without its
 * journal; the journal left is inside the older one's span (leftover)
 */
static void ver_unlink_folded(int metafd, const char *pool, uint64_t gen)
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

/*
 * pool_versions -- the versions of pool (metadata m) in l, ok[] (malloc'd)
 * marking the ones on its chain; r->ver_lock held
 */
static int pool_versions(struct rpmemd_region *r, const char *pool,
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
	uint64_t gen = rpmemd_undo_generation(p->undo);
	int ret;

	if (gen != was->generation)
		return -EINVAL;
	snprintf(from, sizeof(from), "%s%s", p->name, RPMEMD_UNDO_SUFFIX);
	ver_name(p->name, gen, to, sizeof(to));
	pthread_mutex_lock(&r->ver_lock);
	rpmemd_vchains_release(r->metafd, p->name); /* they read gen + 1 */
	v.hash = rpmemd_scrub_keep(r->metafd, p->name, p->size, gen);
	ret = rpmemd_undo_set_ver(p->undo, &v);
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

/* fold_block -- a record of the pruned version into the older one */
static int fold_block(void *arg, uint64_t off, const void *data, uint64_t len)
{
	return rpmemd_undo_save_buf(arg, off, data, len);
}

/*
 * fold -- the blocks of version newer that version older lacks appended
 * to older, which then restores from where newer did; then newer goes.
 * A crash before the trailer is rewritten leaves older with extra blocks
 * (the same contents newer has: restoring older needs them anyway) and
 * newer intact; after it, newer lies inside older's span and is skipped.
 */
static int fold(int metafd, const struct rpmemd_meta *m,
		const struct rpmemd_version *older,
		const struct rpmemd_version *newer)
{
	char fo[RPMEM_NAME_MAX + 48], fn[RPMEM_NAME_MAX + 48];
	struct rpmemd_undo *uo = NULL, *un = NULL;
	int ret;

	ver_name(older->pool, older->gen, fo, sizeof(fo));
	ver_name(newer->pool, newer->gen, fn, sizeof(fn));
	ret = rpmemd_undo_load_file(metafd, fo, m->uuid, m->size, 1, &uo);
	if (!ret)
		ret = rpmemd_undo_load_file(metafd, fn, m->uuid, m->size, 0,
					    &un);
	if (!ret)
		ret = rpmemd_undo_apply(un, fold_block, uo);
	crash_point("fold-appended");
	if (!ret)
		ret = rpmemd_undo_sync(uo);
	crash_point("fold-synced");
	if (!ret) {
		struct rpmemd_undo_ver v = *rpmemd_undo_ver(uo);
		v.next = newer->next;
		ret = rpmemd_undo_set_ver(uo, &v);
	}
	crash_point("fold-trailer");
	rpmemd_undo_close(&uo);
	rpmemd_undo_close(&un);
	if (!ret)
		ver_unlink_folded(metafd, newer->pool, newer->gen);
	return ret;
}

/*
 * prune_at -- prune version i of l (restorable ones ok[]); r->ver_lock
 * held. The next older restorable version, if any, takes its blocks.
 */
static int prune_at(struct rpmemd_region *r, const struct rpmemd_meta *m,
		    struct vlist *l, uint8_t *ok, size_t i)
{
	size_t j = i;
	int ret = 0;

	while (j-- > 0 && !ok[j])
		;
	/* one off the chain (a damaged stray) holds no one's blocks */
	int into = ok[i] && j < i && ok[j];
	if (into)
		ret = fold(r->metafd, m, &l->v[j], &l->v[i]);
	else
		ver_unlink(r->metafd, l->v[i].pool, l->v[i].gen);
	if (ret)
		return ret;
	if (into) {
		l->v[j].next = l->v[i].next;
		l->v[j].bytes = ver_bytes(r->metafd, l->v[j].pool, l->v[j].gen);
	}
	ok[i] = 0;
	INFO("region '%s': pool '%s': version %llu pruned", r->cfg.name,
	     l->v[i].pool, (unsigned long long)l->v[i].gen);
	return 0;
}

int rpmemd_version_prune(struct rpmemd_region *r, const char *pool,
			 const struct rpmemd_meta *m, uint64_t gen,
			 char *err, size_t errlen)
{
	struct vlist l = { 0 };
	uint8_t *ok = NULL;
	size_t i;
	int ret;

	if (r->metafd < 0)
		return rpmem_set_err(err, errlen,
				     "region '%s' keeps no versions",
				     r->cfg.name), -ENOENT;
	pthread_mutex_lock(&r->ver_lock);
	ret = pool_versions(r, pool, m, &l, &ok);
	for (i = 0; !ret && i < l.n; i++)
		if ((ok[i] || l.v[i].damaged) && l.v[i].gen == gen)
			break;
	if (!ret && i == l.n) {
		snprintf(err, errlen, "pool '%s' has no version %llu", pool,
			 (unsigned long long)gen);
		ret = -ENOENT;
	} else if (!ret && l.v[i].damaged && ok[i] &&
		   memchr(ok, 1, i)) { /* an older one on the chain needs it */
		snprintf(err, errlen, "version %llu of pool '%s' is damaged: the older versions need its blocks, which it cannot give; kept (see rpmemctl scrub)",
			 (unsigned long long)gen, pool);
		ret = -EBADMSG;
	} else if (!ret && (ret = prune_at(r, m, &l, ok, i))) {
		snprintf(err, errlen, "pruning version %llu of pool '%s' failed (every version kept): %s",
			 (unsigned long long)gen, pool, strerror(-ret));
	}
	pthread_mutex_unlock(&r->ver_lock);
	free(l.v);
	free(ok);
	return ret;
}

/* a pruning for the retention and the quota */
struct retain_ctx {
	struct rpmemd_region *r;
	rpmemd_version_fn fn;
	void *arg;
};

/*
 * drop_bad -- remove the versions of l that cannot be restored (off the
 * chain: a sync kept no version after them); a damaged one is kept
 */
static void drop_bad(struct retain_ctx *c, struct vlist *l, uint8_t *ok)
{
	for (size_t i = 0; i < l->n; i++) {
		if (l->v[i].damaged)
			WARN("region '%s': pool '%s': version %llu is damaged (its journal does not read): kept, see rpmemctl scrub",
			     c->r->cfg.name, l->v[i].pool,
			     (unsigned long long)l->v[i].gen);
		if (ok[i] || l->v[i].damaged)
			continue;
		WARN("region '%s': pool '%s': version %llu cannot be restored any more (a sync kept no version after it, or it is not of this pool); removed",
		     c->r->cfg.name, l->v[i].pool,
		     (unsigned long long)l->v[i].gen);
		ver_unlink(c->r->metafd, l->v[i].pool, l->v[i].gen);
		if (c->fn)
			c->fn(c->arg, &l->v[i], "unrestorable");
	}
}

/* apply_policy -- prune what the region's retention policy does not keep */
static void apply_policy(struct retain_ctx *c, const struct rpmemd_meta *m,
			 struct vlist *l, uint8_t *ok)
{
	size_t n = 0;
	uint64_t *t = malloc((l->n + 1) * sizeof(*t));
	size_t *idx = malloc((l->n + 1) * sizeof(*idx));
	uint8_t *keep = malloc(l->n + 1);

	for (size_t i = l->n; t && idx && keep && i-- > 0;)
		if (ok[i]) {
			t[n] = l->v[i].time;
			idx[n++] = i;
		}
	if (t && idx && keep)
		rpmem_keep_apply(&c->r->cfg.keep, t, n, keep);
	for (size_t k = n; t && idx && keep && k-- > 0;) {
		size_t i = idx[k]; /* oldest first */
		if (!keep[k] && !l->v[i].damaged &&
		    !prune_at(c->r, m, l, ok, i) && c->fn)
			c->fn(c->arg, &l->v[i], "retention");
	}
	free(t);
	free(idx);
	free(keep);
}

/* vfloor -- the newest versions of each pool space pressure keeps */
static size_t vfloor(const struct rpmemd_region *r)
{
	return r->cfg.versions_floor ? r->cfg.versions_floor : 1;
}

/* young -- a version kept at unix time committed is within min_age */
static int young(const struct rpmemd_region *r, uint64_t committed)
{
	uint64_t now = (uint64_t)time(NULL);
	return r->cfg.versions_min_age &&
	       committed + r->cfg.versions_min_age > now;
}

/*
 * prune_pool_oldest -- prune the oldest restorable version of pool unless
 * it is one of the newest vfloor() or kept within versions_min_age (the
 * floor space never prunes) or damaged; -ENOENT if it has none to give. A pool whose metadata is gone (removed
 * mid-way) has its oldest file removed.
 */
static int prune_pool_oldest(struct retain_ctx *c, const char *pool,
			     const char *why)
{
	struct vlist l = { 0 };
	struct rpmemd_meta m;
	uint8_t *ok = NULL;
	size_t i, n = 0;
	int ret, gone = rpmemd_meta_read(c->r->metafd, pool, &m) != 0;

	if (gone)
		memset(&m, 0, sizeof(m));
	ret = pool_versions(c->r, pool, &m, &l, &ok);
	for (i = 0; !ret && i < l.n; i++)
		n += ok[i];
	for (i = 0; !ret && i < l.n && !ok[i] && !gone; i++)
		;
	/* a damaged version is never pruned for room */
	if (!ret && (i == l.n || (!gone && (n <= vfloor(c->r) ||
					     l.v[i].damaged ||
					     young(c->r, l.v[i].committed)))))
		ret = -ENOENT;
	if (!ret && gone) {
		ver_unlink(c->r->metafd, pool, l.v[0].gen);
	} else if (!ret && !(ret = prune_at(c->r, &m, &l, ok, i))) {
		WARN("region '%s': pool '%s': version %llu pruned (%s: %s)",
		     c->r->cfg.name, pool, (unsigned long long)l.v[i].gen, why,
		     !strcmp(why, "quota") ?
			     "the region's versions exceeded versions_quota" :
			     "a sync's undo journal needed the room");
		if (c->fn)
			c->fn(c->arg, &l.v[i], why);
	}
	free(l.v);
	free(ok);
	return ret;
}

/* a pool that may give a version to space pressure */
struct cand {
	char pool[RPMEM_NAME_MAX + 1];
	uint64_t time; /* of its oldest version */
};

/* by_time -- order candidates oldest first */
static int by_time(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;
	return x->time < y->time ? -1 : x->time > y->time;
}

/*
 * prune_oldest -- prune the region's oldest version (by time) outside
 * every pool's floor; -ENOENT: none
 */
static int prune_oldest(struct retain_ctx *c, const char *why)
{
	struct vlist l = { 0 };
	struct cand *cd = NULL;
	struct rpmemd_meta m;
	size_t n = 0, first = 0;
	int ret = scan_dir(c->r->metafd, NULL, &l);

	if (!ret && !(cd = calloc(l.n + 1, sizeof(*cd))))
		ret = -ENOMEM;
	/* each pool with more files than its floor, by its first's time */
	for (size_t i = 0; !ret && i < l.n; i++) {
		if (i + 1 < l.n && !strcmp(l.v[i].pool, l.v[i + 1].pool))
			continue;
		if (i + 1 - first > vfloor(c->r)) {
			struct rpmemd_version *v = &l.v[first];
			if (rpmemd_meta_read(c->r->metafd, v->pool, &m) ||
			    ver_read(c->r->metafd, &m, v))
				v->time = 0; /* unreadable: goes first */
			rpmem_strlcpy(cd[n].pool, v->pool, sizeof(cd[n].pool));
			cd[n++].time = v->time;
		}
		first = i + 1;
	}
	free(l.v);
	if (n)
		qsort(cd, n, sizeof(*cd), by_time);
	if (!ret)
		ret = -ENOENT;
	for (size_t i = 0; ret == -ENOENT && i < n; i++)
		ret = prune_pool_oldest(c, cd[i].pool, why);
	free(cd);
	return ret;
}

/*
 * ver_young -- version gen of pool was kept within versions_min_age, by
 * its file's mtime (the journal's last write: its commit, or a later fold)
 */
static int ver_young(const struct rpmemd_region *r, const char *pool,
		     uint64_t gen)
{
	char fn[RPMEM_NAME_MAX + 48];
	struct stat st;

	if (!r->cfg.versions_min_age)
		return 0;
	ver_name(pool, gen, fn, sizeof(fn));
	return !fstatat(r->metafd, fn, &st, AT_SYMLINK_NOFOLLOW) &&
	       young(r, (uint64_t)st.st_mtime);
}

void rpmemd_versions_space(struct rpmemd_region *r, const char *pool,
			   struct rpmemd_vspace *s)
{
	struct vlist l = { 0 };
	size_t f = vfloor(r), first = 0;

	memset(s, 0, sizeof(*s));
	if (r->metafd < 0 || scan_dir(r->metafd, NULL, &l)) {
		free(l.v);
		return;
	}
	for (size_t i = 0; i < l.n; i++) {
		s->all += l.v[i].bytes;
		if (i + 1 < l.n && !strcmp(l.v[i].pool, l.v[i + 1].pool))
			continue;
		/* the pool's newest f: l.v[first..i], by generation */
		size_t lo = i + 1 - first > f ? i + 1 - f : first;
		for (size_t k = first; k < lo; k++)
			if (ver_young(r, l.v[k].pool, l.v[k].gen))
				s->floor += l.v[k].bytes;
		for (size_t k = lo; k <= i; k++)
			s->floor += l.v[k].bytes;
		if (pool && !strcmp(pool, l.v[i].pool) && i + 1 - lo == f &&
		    !ver_young(r, l.v[lo].pool, l.v[lo].gen))
			s->leaves = l.v[lo].bytes;
		first = i + 1;
	}
	free(l.v);
}

/* over_quota -- the region's versions take more than its quota */
static int over_quota(struct rpmemd_region *r)
{
	return r->cfg.versions_quota &&
	       rpmemd_versions_bytes(r, NULL) > r->cfg.versions_quota;
}

/*
 * drop_orphan_records -- the scrub records of pool's versions whose
 * journal is gone (a prune killed between its two unlinks); ver_lock held
 */
static void drop_orphan_records(struct rpmemd_region *r, const char *pool)
{
	int fd = openat(r->metafd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	size_t n = strlen(pool), s = strlen(RPMEMD_SCRUB_SUFFIX ".v");
	char fn[RPMEM_NAME_MAX + 48];
	struct dirent *e;
	struct stat st;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((e = readdir(d))) {
		const char *g = e->d_name + n + s;
		char *end;
		if (strncmp(e->d_name, pool, n) ||
		    strncmp(e->d_name + n, RPMEMD_SCRUB_SUFFIX ".v", s) ||
		    !isdigit((unsigned char)*g))
			continue;
		uint64_t gen = strtoull(g, &end, 10);
		ver_name(pool, gen, fn, sizeof(fn));
		if (*end || !fstatat(r->metafd, fn, &st, AT_SYMLINK_NOFOLLOW))
			continue;
		INFO("region '%s': pool '%s': the scrub record of version %llu, whose journal is gone (a prune cut short), removed",
		     r->cfg.name, pool, (unsigned long long)gen);
		rpmemd_scrub_version_unlink(r->metafd, pool, gen);
	}
	closedir(d);
}

void rpmemd_versions_retain(struct rpmemd_pool *p, rpmemd_version_fn fn,
			    void *arg)
{
	struct retain_ctx c = { p->region, fn, arg };
	struct rpmemd_region *r = p->region;
	struct vlist l = { 0 };
	struct rpmemd_meta m;
	uint8_t *ok = NULL;

	if (r->metafd < 0)
		return;
	rpmemd_pool_get_meta(p, &m);
	pthread_mutex_lock(&r->ver_lock);
	drop_orphan_records(r, p->name);
	if (!pool_versions(r, p->name, &m, &l, &ok)) {
		drop_bad(&c, &l, ok);
		if (r->cfg.versions)
			apply_policy(&c, &m, &l, ok);
	}
	/* bounded: each round removes a file or fails */
	for (int i = 0; i < 100000 && over_quota(r); i++)
		if (prune_oldest(&c, "quota")) {
			WARN("region '%s': its versions take %llu bytes, more than versions_quota (%llu): only the newest %zu of each pool are left, which space never prunes (versions_floor)%s",
			     r->cfg.name,
			     (unsigned long long)rpmemd_versions_bytes(r, NULL),
			     (unsigned long long)r->cfg.versions_quota,
			     vfloor(r),
			     r->cfg.versions_min_age ?
				     ", and those kept within versions_min_age" :
				     "");
			break;
		}
	pthread_mutex_unlock(&r->ver_lock);
	free(l.v);
	free(ok);
}

/* room_pruned -- a version pruned for p's journal, kept to report */
static void room_pruned(void *arg, const struct rpmemd_version *v,
			const char *why)
{
	struct rpmemd_pool *p = arg;

	(void)why;
	if (p->nroom == sizeof(p->room) / sizeof(p->room[0])) {
		p->room_lost++;
		return;
	}
	rpmem_strlcpy(p->room[p->nroom].pool, v->pool,
		      sizeof(p->room[p->nroom].pool));
	p->room[p->nroom++].gen = v->gen;
}

size_t rpmemd_versions_take_room(struct rpmemd_pool *p,
				 struct rpmemd_room_pruned *out, size_t max,
				 unsigned *lost)
{
	size_t n;

	pthread_mutex_lock(&p->region->ver_lock);
	n = p->nroom < max ? p->nroom : max;
	memcpy(out, p->room, n * sizeof(*out));
	*lost = p->room_lost + (unsigned)(p->nroom - n);
	p->nroom = 0;
	p->room_lost = 0;
	pthread_mutex_unlock(&p->region->ver_lock);
	return n;
}

int rpmemd_versions_make_room(struct rpmemd_pool *p)
{
	struct retain_ctx c = { p->region, room_pruned, p };
	int ret;

	if (p->region->metafd < 0 || !p->region->cfg.versions ||
	    !p->region->cfg.versions_full_prune)
		return -ENOENT;
	pthread_mutex_lock(&p->region->ver_lock);
	ret = prune_oldest(&c, "room");
	pthread_mutex_unlock(&p->region->ver_lock);
	if (!ret)
		NOTICE("region '%s': a version was pruned to make room for the undo journal of pool '%s'",
		       p->region->cfg.name, p->name);
	return ret;
}

/*
 * The chains open in the daemon, most recently read first: together they
 * hold at most vc_reg.max journals open (a quarter of RLIMIT_NOFILE), and
 * the chains of one owner (a session) at most a quarter of that (its
 * share); a chain that would take its owner past its share closes that
 * owner's least recently read chains first, never another's, then the
 * least recently read of all are closed to make room for it; each is
 * reopened at its next read. A commit or a prune of a pool's version closes its pool's
 * chains (rpmemd_vchains_release), so no reader keeps a stale or pruned
 * version's file, and its space, alive. Locks: the region's ver_lock,
 * then vc_reg.lock, then a chain's lk.
 */
static struct {
	pthread_mutex_t lock;
	struct rpmemd_vchain *head; /* loaded chains, most recent first */
	size_t fds;		    /* journals they hold open */
	size_t max;		    /* 0: not known yet */
	uint64_t loads;		    /* journals loaded, since the start */
} vc_reg = { PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0, 0 };

struct rpmemd_vchain {
	struct rpmemd_vchain *prev, *next; /* in vc_reg, while loaded */
	const void *owner; /* the session reading it: its share is bounded */
	struct rpmemd_region *r;
	char pool[RPMEM_NAME_MAX + 1];
	uint64_t gen;	 /* the version */
	uint64_t at;	 /* the pool's generation it reads from */
	uint64_t loads;	 /* journals loaded, reloads included */
	uint64_t checked; /* bytes of records its last read checked */
	int pending;	  /* reads a pending pool: its journal overlaid too */
	pthread_mutex_t lk; /* held while u[] is read, or closed */
	int loaded;	    /* u[] open (changed under vc_reg.lock and lk) */
	struct rpmemd_undo **u; /* newest first */
	size_t n;
	size_t use; /* of u[], from u[0]: the versions >= gen */
	uint8_t *tmp; /* a record's data */
};

/* vc_max -- the journals all chains may hold open together */
static size_t vc_max(void)
{
	struct rlimit rl;

	if (!vc_reg.max) {
		rlim_t n = getrlimit(RLIMIT_NOFILE, &rl) ? 1024 : rl.rlim_cur;
		if (n == RLIM_INFINITY || n > (1u << 20))
			n = 1u << 20;
		vc_reg.max = n / 4 > 16 ? (size_t)(n / 4) : 16;
	}
	return vc_reg.max;
}

/* vc_share -- the journals the chains of one owner may hold open */
static size_t vc_share(void)
{
	size_t max = vc_max();

	return max / 4 > 16 ? max / 4 : (max < 16 ? max : 16);
}

/* vc_owner_fds -- the journals owner's chains hold open; vc_reg.lock */
static size_t vc_owner_fds(const void *owner)
{
	size_t n = 0;

	for (struct rpmemd_vchain *t = vc_reg.head; t; t = t->next)
		if (t->owner == owner)
			n += t->n;
	return n;
}

/* vc_unlink -- take c out of vc_reg's list; vc_reg.lock held */
static void vc_unlink(struct rpmemd_vchain *c)
{
	if (c->prev)
		c->prev->next = c->next;
	else if (vc_reg.head == c)
		vc_reg.head = c->next;
	if (c->next)
		c->next->prev = c->prev;
	c->prev = c->next = NULL;
}

/* vc_front -- c becomes the most recently read; vc_reg.lock held */
static void vc_front(struct rpmemd_vchain *c)
{
	vc_unlink(c);
	c->next = vc_reg.head;
	if (c->next)
		c->next->prev = c;
	vc_reg.head = c;
}

/* vc_drop -- close c's journals (reopened at its next read); vc_reg.lock */
static void vc_drop(struct rpmemd_vchain *c)
{
	pthread_mutex_lock(&c->lk); /* a read of it under way ends first */
	for (size_t i = 0; i < c->n; i++)
		rpmemd_undo_close(&c->u[i]);
	vc_reg.fds -= c->n;
	c->n = 0;
	c->use = 0;
	c->loaded = 0;
	pthread_mutex_unlock(&c->lk);
	vc_unlink(c);
}

/* vc_tail -- the least recently read chain; vc_reg.lock held */
static struct rpmemd_vchain *vc_tail(void)
{
	struct rpmemd_vchain *t = vc_reg.head;

	while (t && t->next)
		t = t->next;
	return t;
}

/*
 * vc_make_room -- room for need more journals of c: c's owner's least
 * recently read chains but c closed to keep it within its share, then
 * the least recently read of all but c for the daemon's bound
 */
static void vc_make_room(struct rpmemd_vchain *c, size_t need)
{
	size_t max = vc_max(), share = vc_share();
	size_t own = vc_owner_fds(c->owner);
	struct rpmemd_vchain *t, *prev;

	for (t = vc_tail(); t && own + need > share; t = prev) {
		prev = t->prev;
		if (t == c || t->owner != c->owner)
			continue;
		DBG("pool '%s': version %llu's chain closed (%zu journals): its session's chains hold %zu of its share of %zu",
		    t->pool, (unsigned long long)t->gen, t->n, own, share);
		own -= t->n;
		vc_drop(t);
	}
	for (t = vc_tail(); t && vc_reg.fds + need > max; t = prev) {
		prev = t->prev;
		if (t == c)
			continue;
		DBG("pool '%s': version %llu's chain closed (%zu journals): the chains hold %zu of %zu",
		    t->pool, (unsigned long long)t->gen, t->n, vc_reg.fds,
		    max);
		vc_drop(t);
	}
}

void rpmemd_vchains_release(int metafd, const char *pool)
{
	pthread_mutex_lock(&vc_reg.lock);
	for (struct rpmemd_vchain *c = vc_reg.head, *next; c; c = next) {
		next = c->next;
		if (c->r->metafd == metafd && !strcmp(c->pool, pool))
			vc_drop(c);
	}
	pthread_mutex_unlock(&vc_reg.lock);
}

void rpmemd_vchain_close(struct rpmemd_vchain **cp)
{
	struct rpmemd_vchain *c = cp ? *cp : NULL;
	if (!c)
		return;
	*cp = NULL;
	pthread_mutex_lock(&vc_reg.lock);
	if (c->loaded)
		vc_drop(c);
	pthread_mutex_unlock(&vc_reg.lock);
	free(c->u);
	free(c->tmp);
	pthread_mutex_destroy(&c->lk);
	free(c);
}

uint64_t rpmemd_vchain_gen(const struct rpmemd_vchain *c)
{
	return c->gen;
}

void rpmemd_vchain_cost(const struct rpmemd_vchain *c, uint64_t *loads,
			uint64_t *checked)
{
	pthread_mutex_lock(&vc_reg.lock);
	*loads = vc_reg.loads;
	pthread_mutex_unlock(&vc_reg.lock);
	*checked = c->checked;
}

int rpmemd_vchain_retarget(struct rpmemd_vchain *c, uint64_t gen)
{
	int ret = -ENOENT;

	/* u[] changes only under vc_reg.lock (and lk): read it under it */
	pthread_mutex_lock(&vc_reg.lock);
	if (c->loaded && gen == c->at) {
		c->use = 0;
		ret = 0;
	}
	for (size_t i = 0; c->loaded && ret && i < c->n; i++)
		if (rpmemd_undo_generation(c->u[i]) == gen) {
			c->use = i + 1;
			ret = 0;
		}
	if (!ret)
		c->gen = gen;
	pthread_mutex_unlock(&vc_reg.lock);
	return ret;
}

/*
 * vchain_load -- open into u[] the journals of l's restorable versions
 * >= c->gen, newest first; *n of them
 */
static int vchain_load(struct rpmemd_vchain *c, int metafd,
		       const struct rpmemd_meta *m, const struct vlist *l,
		       const uint8_t *ok, struct rpmemd_undo **u, size_t *n)
{
	char fn[RPMEM_NAME_MAX + 48];

	for (size_t i = l->n; i-- > 0 && l->v[i].gen >= c->gen;) {
		if (!ok[i])
			continue;
		ver_name(l->v[i].pool, l->v[i].gen, fn, sizeof(fn));
		/* a damaged one gives what checks, and -EIO for the rest */
		int ret = l->v[i].damaged ?
				  rpmemd_undo_load_salvage(metafd, fn, m->uuid,
							   m->size, l->v[i].gen,
							   &u[*n]) :
				  rpmemd_undo_load_file(metafd, fn, m->uuid,
							m->size, 0, &u[*n]);
		if (ret)
			return ret;
		(*n)++;
	}
	return 0;
}

/* vchain_has -- l has restorable version gen */
static int vchain_has(const struct vlist *l, const uint8_t *ok, uint64_t gen)
{
	for (size_t i = 0; i < l->n; i++)
		if (ok[i] && l->v[i].gen == gen)
			return 1;
	return 0;
}

/* vchain_install -- c's journals are u[n]: in vc_reg, c->lk held after */
static void vchain_install(struct rpmemd_vchain *c, struct rpmemd_undo **u,
			   size_t n)
{
	pthread_mutex_lock(&vc_reg.lock);
	vc_make_room(c, n);
	pthread_mutex_lock(&c->lk);
	free(c->u);
	c->u = u;
	c->n = n;
	c->use = n;
	c->loaded = 1;
	c->loads += n;
	vc_reg.loads += n;
	vc_reg.fds += n;
	vc_front(c);
	pthread_mutex_unlock(&vc_reg.lock);
}

/*
 * pool_pending -- p is pending at generation gen: an interrupted or
 * running sync's journal, bound to gen, holds every block it overwrote
 * as it was at gen (written before the block was), so the pool's image
 * with it overlaid is gen's. Not so for a dense sync into a new file, a
 * live pool, or RDMA writers (whose writes rpmemd does not journal).
 */
static int pool_pending(struct rpmemd_pool *p, const struct rpmemd_meta *m)
{
	int ok;

	if (m->state != RPMEM_POOL_SYNCING || rpmemd_source_live(m->source))
		return 0;
	pthread_mutex_lock(&p->undo_lock);
	ok = p->undo && rpmemd_undo_generation(p->undo) == m->generation &&
	     !p->swap && !__atomic_load_n(&p->rdma_writers, __ATOMIC_ACQUIRE);
	pthread_mutex_unlock(&p->undo_lock);
	return ok;
}

/* vchain_current -- the pool is as c was opened on: state, generation */
static int vchain_current(const struct rpmemd_vchain *c,
			  const struct rpmemd_meta *m)
{
	return m->generation == c->at &&
	       m->state == (c->pending ? RPMEM_POOL_SYNCING :
					 RPMEM_POOL_CONSISTENT);
}

/*
 * vchain_fill -- (re)open the journals of chain c of pool p: -EAGAIN if
 * the pool is not consistent (or, c->pending, pending) at c->at, -ENOENT
 * if version c->gen is not on its chain; else 0 with c->lk held
 */
static int vchain_fill(struct rpmemd_pool *p, struct rpmemd_vchain *c)
{
	struct rpmemd_region *r = p->region;
	struct rpmemd_undo **u = NULL;
	struct vlist l = { 0 };
	struct rpmemd_meta m;
	uint8_t *ok = NULL;
	size_t n = 0;
	int ret = 0;

	rpmemd_pool_get_meta(p, &m);
	if (!vchain_current(c, &m))
		return -EAGAIN;
	if (r->metafd < 0) {
		if (c->gen != m.generation)
			return -ENOENT;
		vchain_install(c, NULL, 0);
		return 0;
	}
	/* under ver_lock: no prune unlinks a file between list and open */
	pthread_mutex_lock(&r->ver_lock);
	ret = pool_versions(r, p->name, &m, &l, &ok);
	if (!ret && c->gen != m.generation && !vchain_has(&l, ok, c->gen))
		ret = -ENOENT;
	if (!ret && !(u = calloc(l.n + 1, sizeof(*u))))
		ret = -ENOMEM;
	if (!ret)
		ret = vchain_load(c, r->metafd, &m, &l, ok, u, &n);
	if (!ret)
		vchain_install(c, u, n);
	pthread_mutex_unlock(&r->ver_lock);
	if (ret) {
		for (size_t i = 0; i < n; i++)
			rpmemd_undo_close(&u[i]);
		free(u);
	}
	free(l.v);
	free(ok);
	return ret;
}

/* vchain_hold -- c's journals open, c->lk held; as vchain_fill */
static int vchain_hold(struct rpmemd_pool *p, struct rpmemd_vchain *c)
{
	pthread_mutex_lock(&vc_reg.lock);
	if (c->loaded) {
		vc_front(c);
		pthread_mutex_lock(&c->lk);
		pthread_mutex_unlock(&vc_reg.lock);
		return 0;
	}
	pthread_mutex_unlock(&vc_reg.lock);
	return vchain_fill(p, c);
}

int rpmemd_vchain_open(struct rpmemd_pool *p, uint64_t gen,
		       const void *owner, struct rpmemd_vchain **out,
		       char *err, size_t errlen)
{
	struct rpmemd_vchain *c = calloc(1, sizeof(*c));
	struct rpmemd_meta m;
	int ret = c && (c->tmp = malloc(RPMEMD_UNDO_REC_MAX)) ? 0 : -ENOMEM;

	*out = NULL;
	if (ret) {
		if (c)
			free(c);
		snprintf(err, errlen, "cannot open version %llu of pool '%s': %s",
			 (unsigned long long)gen, p->name, strerror(ENOMEM));
		return ret;
	}
	pthread_mutex_init(&c->lk, NULL);
	rpmemd_pool_get_meta(p, &m);
	c->owner = owner;
	c->r = p->region;
	rpmem_strlcpy(c->pool, p->name, sizeof(c->pool));
	c->gen = gen;
	c->at = m.generation;
	c->pending = pool_pending(p, &m);
	ret = vchain_fill(p, c);
	if (!ret)
		pthread_mutex_unlock(&c->lk);
	if (ret == -EAGAIN)
		snprintf(err, errlen, "pool '%s' is %s: its versions can be read once it is consistent again",
			 p->name, rpmem_state_str(m.state));
	else if (ret == -ENOENT)
		snprintf(err, errlen, "pool '%s' has no version %llu (see rpmemctl versions)",
			 p->name, (unsigned long long)gen);
	else if (ret)
		snprintf(err, errlen, "cannot open version %llu of pool '%s': %s",
			 (unsigned long long)gen, p->name, strerror(-ret));
	if (ret)
		rpmemd_vchain_close(&c);
	*out = c;
	return ret;
}

/* a read of the pool's mapping, for the guard */
struct copy_args {
	uint8_t *dst;
	const uint8_t *src;
	uint64_t len;
};

/* copy_out -- the copy (the guard's body) */
static int copy_out(void *arg)
{
	struct copy_args *a = arg;
	memcpy(a->dst, a->src, a->len);
	return 0;
}

/*
 * pending_base -- [off, off + len) of the image of generation c->at of
 * the pending pool p into buf: the pool read and its journal overlaid,
 * together under undo_lock (no record is appended, no rollback runs in
 * between; a block being written has its record already). -EAGAIN if the
 * journal is gone (committed, rolled back) or no longer bound to c->at.
 * Taken with no chain's lock held: a commit holds undo_lock while it
 * closes the chains.
 */
static int pending_base(struct rpmemd_pool *p, struct rpmemd_vchain *c,
			uint64_t off, uint64_t len, uint8_t *buf,
			uint64_t *bad)
{
	struct copy_args a = { buf, p->addr + off, len };
	uint64_t *filled = calloc((off % RPMEMD_UNDO_BS + len +
				   64ull * RPMEMD_UNDO_BS - 1) /
					  (64ull * RPMEMD_UNDO_BS) + 1,
				  sizeof(*filled));
	int ret = filled ? -EAGAIN : -ENOMEM;

	pthread_mutex_lock(&p->undo_lock);
	if (filled && p->undo && rpmemd_undo_generation(p->undo) == c->at &&
	    !p->swap && !(ret = rpmem_guard_run(copy_out, &a)))
		ret = rpmemd_undo_overlay_older(p->undo, off, len, buf, c->tmp,
						filled, &c->checked, bad);
	pthread_mutex_unlock(&p->undo_lock);
	free(filled);
	return ret;
}

int rpmemd_vchain_read(struct rpmemd_pool *p, struct rpmemd_vchain *c,
		       uint64_t off, uint64_t len, uint8_t *buf, uint64_t *bad)
{
	struct copy_args a = { buf, p->addr + off, len };
	uint64_t words = (off % RPMEMD_UNDO_BS + len + 64ull * RPMEMD_UNDO_BS - 1) /
			 (64ull * RPMEMD_UNDO_BS);
	uint64_t *filled = NULL;
	struct rpmemd_meta m;
	int ret;

	if (off > p->size || len > p->size - off)
		return -EINVAL;
	rpmemd_pool_get_meta(p, &m);
	if (!vchain_current(c, &m))
		return -EAGAIN;
	c->checked = 0;
	ret = c->pending ? pending_base(p, c, off, len, buf, bad) :
			   rpmem_guard_run(copy_out, &a);
	if (ret || (ret = vchain_hold(p, c)))
		return ret;
	if (!(filled = calloc(words ? words : 1, sizeof(*filled))))
		ret = -ENOMEM;
	/*
	 * oldest first: a block's oldest copy is its image at c->gen, and
	 * a newer version's record is read (and checked) only for blocks
	 * no older one holds: a 1-byte read checks one record, not one
	 * per version
	 */
	for (size_t i = c->use; !ret && i-- > 0;)
		ret = rpmemd_undo_overlay_older(c->u[i], off, len, buf, c->tmp,
						filled, &c->checked, bad);
	pthread_mutex_unlock(&c->lk);
	free(filled);
	if (ret)
		return ret;
	/*
	 * the pool's blocks read were not written meanwhile (a pending
	 * pool's were journaled first: its journal is still the same)
	 */
	rpmemd_pool_get_meta(p, &m);
	if (!vchain_current(c, &m))
		return -EAGAIN;
	return 0;
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
