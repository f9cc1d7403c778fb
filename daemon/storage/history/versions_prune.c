/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * versions_prune.c -- pruning and folding versions: by hand, by the
 * region's retention policy, for space (versions_quota, a journal's room)
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "crashpoint.h"
#include "history_int.h"
#include "log.h"
#include "scrub.h"
#include "undo.h"
#include "util.h"
#include "versions.h"
#include "versions_int.h"

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
	struct rpmemd_pool_history *h = history_of(arg);

	(void)why;
	if (h->nroom == HISTORY_ROOM_MAX) {
		h->room_lost++;
		return;
	}
	rpmem_strlcpy(h->room[h->nroom].pool, v->pool,
		      sizeof(h->room[h->nroom].pool));
	h->room[h->nroom++].gen = v->gen;
}

size_t rpmemd_versions_take_room(struct rpmemd_pool *p,
				 struct rpmemd_room_pruned *out, size_t max,
				 unsigned *lost)
{
	struct rpmemd_pool_history *h = history_of(p);
	size_t n;

	pthread_mutex_lock(&p->region->ver_lock);
	n = h->nroom < max ? h->nroom : max;
	memcpy(out, h->room, n * sizeof(*out));
	*lost = h->room_lost + (unsigned)(h->nroom - n);
	h->nroom = 0;
	h->room_lost = 0;
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
