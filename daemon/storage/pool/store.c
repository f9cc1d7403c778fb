/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * store.c -- the pool store: the open table, counters kept between opens,
 * state changes and hash-cache commits, above the region's backend
 * (backend.h)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend.h"
#include "guard.h"
#include "log.h"
#include "store.h"
#include "util.h"

/* the layers above the pool (backend.h): the journal, then history */
static const struct rpmemd_keeper *keepers[RPMEMD_KEEPERS_MAX];
static unsigned nkeepers;

int rpmemd_store_add_keeper(const struct rpmemd_keeper *k)
{
	for (unsigned i = 0; i < nkeepers; i++)
		if (keepers[i] == k)
			return (int)i;
	if (nkeepers == RPMEMD_KEEPERS_MAX)
		return -1;
	keepers[nkeepers] = k;
	return (int)nkeepers++;
}

/* keepers_detach -- the state of the first n keepers of p let go */
static void keepers_detach(struct rpmemd_pool *p, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		if (keepers[i]->detach && p->kept[i])
			keepers[i]->detach(p->kept[i]);
		p->kept[i] = NULL;
	}
}

/* keepers_attach -- each keeper's state of the new pool p */
static int keepers_attach(struct rpmemd_pool *p)
{
	int ret;
	for (unsigned i = 0; i < nkeepers; i++) {
		if (!keepers[i]->attach)
			continue;
		if ((ret = keepers[i]->attach(p, &p->kept[i]))) {
			keepers_detach(p, i);
			return ret;
		}
	}
	return 0;
}

/* each -- call hook of each keeper that has one, with the arguments */
#define each(hook, ...)                              \
	for (unsigned i_ = 0; i_ < nkeepers; i_++)   \
		if (keepers[i_]->hook)               \
			keepers[i_]->hook(__VA_ARGS__)

void rpmemd_keepers_found(struct rpmemd_region *r, const char *name,
			  const struct rpmemd_meta *m)
{
	each(found, r, name, m);
}

void rpmemd_keepers_opened(struct rpmemd_pool *p)
{
	each(opened, p);
}

void rpmemd_keepers_shared(struct rpmemd_pool *p)
{
	each(shared, p);
}

void rpmemd_keepers_removed(struct rpmemd_region *r, const char *name)
{
	each(removed, r, name);
}

void rpmemd_keepers_info(struct rpmemd_region *r, const char *name,
			 const struct rpmemd_meta *m, struct rpmem_pool_info *pi)
{
	each(info, r, name, m, pi);
}

void rpmemd_keepers_listed(struct rpmemd_region *r, struct rpmem_pool_info *v,
			   uint32_t n)
{
	each(listed, r, v, n);
}

int rpmemd_store_busy(struct rpmemd_region *r, const char *name, char *err,
		      size_t errlen)
{
	int ret = 0;
	pthread_mutex_lock(&r->set->lock);
	struct rpmemd_pool *p = r->ops->find_open(r, name);
	if (p) {
		if (p->writer_sid)
			snprintf(err, errlen,
				 "pool '%s' is open for writing by %s; close it first",
				 name, p->writer);
		else
			snprintf(err, errlen,
				 "pool '%s' is open by %u reader(s); close it first",
				 name, p->readers);
		ret = -EBUSY;
	}
	pthread_mutex_unlock(&r->set->lock);
	return ret;
}

int rpmemd_store_syncing(const struct rpmemd_meta *m, const char *name,
			 int force, char *err, size_t errlen)
{
	if (m->state != RPMEM_POOL_SYNCING || force)
		return 0;
	snprintf(err, errlen,
		 "pool '%s' is in the middle of a sync (state syncing); a new sync resumes it, or remove it with --force",
		 name);
	return -EBUSY;
}

/* stats_find -- the saved counters of pool name; set->lock held */
static struct rpmemd_pool_stats *stats_find(struct rpmemd_region *r,
					    const char *name)
{
	for (struct rpmemd_pool_stats *st = r->stats; st; st = st->next)
		if (!strcmp(st->name, name))
			return st;
	return NULL;
}

/* stats_save -- keep the counters of a pool being closed; set->lock held */
static void stats_save(struct rpmemd_pool *p)
{
	struct rpmemd_region *r = p->region;
	struct rpmemd_pool_stats *st = stats_find(r, p->name);
	if (!st) {
		st = calloc(1, sizeof(*st));
		if (!st)
			return; /* the counters start over: no harm */
		rpmem_strlcpy(st->name, p->name, sizeof(st->name));
		st->next = r->stats;
		r->stats = st;
	}
	st->bytes_written =
		__atomic_load_n(&p->bytes_written, __ATOMIC_RELAXED);
	st->flushes = __atomic_load_n(&p->flushes, __ATOMIC_RELAXED);
}

void rpmemd_store_stats_drop(struct rpmemd_region *r, const char *name)
{
	pthread_mutex_lock(&r->set->lock);
	for (struct rpmemd_pool_stats **pp = &r->stats; *pp;
	     pp = &(*pp)->next) {
		if (!strcmp((*pp)->name, name)) {
			struct rpmemd_pool_stats *st = *pp;
			*pp = st->next;
			free(st);
			break;
		}
	}
	pthread_mutex_unlock(&r->set->lock);
}

int rpmemd_pool_create(struct rpmemd_region *r, const char *name,
		       uint64_t size, char *err, size_t errlen)
{
	if (!rpmem_name_valid(name)) {
		snprintf(err, errlen,
			 "invalid pool name '%s' (" RPMEM_NAME_RULE ")",
			 name);
		return -EINVAL;
	}
	if (size > RPMEM_SIZE_MAX) {
		snprintf(err, errlen,
			 "size %llu of pool '%s' is larger than the largest size supported (%llu bytes: 8 EiB less one byte)",
			 (unsigned long long)size, name,
			 (unsigned long long)RPMEM_SIZE_MAX);
		return -EFBIG;
	}
	if (size == 0 || size % r->align) {
		snprintf(err, errlen,
			 "invalid size %llu for pool '%s': a positive multiple of %u bytes is required",
			 (unsigned long long)size, name, r->align);
		return -EINVAL;
	}

	return r->ops->create(r, name, size, err, errlen);
}

int rpmemd_pool_remove(struct rpmemd_region *r, const char *name, int force,
		       char *err, size_t errlen)
{
	if (!rpmem_name_valid(name)) {
		snprintf(err, errlen, "invalid pool name '%s'", name);
		return -EINVAL;
	}
	return r->ops->remove(r, name, force, err, errlen);
}

int rpmemd_store_attach(struct rpmemd_pool *p, uint8_t mode, uint32_t sid,
			const char *holder, char *err, size_t errlen)
{
	if (mode == RPMEM_OPEN_RW) {
		if (p->writer_sid) {
			snprintf(err, errlen,
				 "pool '%s/%s' is open for writing by %s; retry later",
				 p->region->cfg.name, p->name, p->writer);
			return -EBUSY;
		}
		p->writer_sid = sid;
		rpmem_strlcpy(p->writer, holder, sizeof(p->writer));
	} else {
		p->readers++;
	}
	p->refs++;
	return 0;
}

void rpmemd_store_hc_commit(struct rpmemd_pool *p)
{
	struct stat st;
	if (!p->hc)
		return;
	int ret = p->region->ops->stat(p, &st);
	if (!ret)
		ret = rpmemd_hcache_commit(p->hc, &st);
	if (ret)
		WARN("region '%s': pool '%s': its hash cache stays dirty (every block will be hashed again): %s",
		     p->region->cfg.name, p->name, strerror(-ret));
}

void rpmemd_pool_check_file(struct rpmemd_pool *p)
{
	struct stat st;
	if (!p->hc)
		return;
	if (p->region->ops->stat(p, &st))
		memset(&st, 0, sizeof(st)); /* gone or replaced: drop all */
	rpmemd_hcache_check_file(p->hc, &st);
}

void rpmemd_store_free(struct rpmemd_pool *p)
{
	/* a pool never used (a lost race in open): no commit */
	each(freed, p);
	rpmemd_hcache_close(&p->hc);
	p->region->ops->release(p);
	pthread_mutex_destroy(&p->meta_lock);
	keepers_detach(p, nkeepers);
	rpmemd_region_put(&p->region);
	free(p);
}

int rpmemd_store_new(struct rpmemd_region *r, const char *name,
		     const struct rpmemd_meta *m, struct rpmemd_pool **out,
		     char *err, size_t errlen)
{
	struct rpmemd_pool *np = calloc(1, sizeof(*np));
	int ret;
	if (!np) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	if ((ret = -pthread_mutex_init(&np->meta_lock, NULL))) {
		free(np);
		snprintf(err, errlen, "pool '%s': %s", name, strerror(-ret));
		return ret;
	}
	if ((ret = keepers_attach(np))) {
		pthread_mutex_destroy(&np->meta_lock);
		free(np);
		snprintf(err, errlen, "pool '%s': %s", name, strerror(-ret));
		return ret;
	}
	rpmemd_region_ref(r);
	np->region = r;
	rpmem_strlcpy(np->name, name, sizeof(np->name));
	np->size = m->size;
	np->meta = *m;
	np->pagesize = (size_t)sysconf(_SC_PAGESIZE);
	np->fd = -1;
	*out = np;
	return 0;
}

void rpmemd_store_insert(struct rpmemd_pool *np)
{
	struct rpmemd_regions *set = np->region->set;
	struct rpmemd_pool_stats *saved = stats_find(np->region, np->name);
	np->next = set->open;
	set->open = np;
	if (saved) {
		np->bytes_written = saved->bytes_written;
		np->flushes = saved->flushes;
	}
}

int rpmemd_pool_open(struct rpmemd_region *r, const char *name, uint8_t mode,
		     uint32_t sid, const char *holder,
		     struct rpmemd_pool **out, char *err, size_t errlen)
{
	if (!rpmem_name_valid(name)) {
		snprintf(err, errlen, "invalid pool name '%s'", name);
		return -EINVAL;
	}
	return r->ops->open(r, name, mode, sid, holder, out, err, errlen);
}

void rpmemd_pool_close(struct rpmemd_pool **pp, uint8_t mode, uint32_t sid)
{
	struct rpmemd_pool *p = pp ? *pp : NULL;
	if (!p)
		return;
	*pp = NULL;
	struct rpmemd_region *r = p->region;
	struct rpmemd_regions *set = r->set;
	/* an open of this pool waits until its hash cache is committed */
	pthread_mutex_lock(&r->lock);
	pthread_mutex_lock(&set->lock);
	if (mode == RPMEM_OPEN_RW && p->writer_sid == sid) {
		p->writer_sid = 0;
		p->writer[0] = '\0';
	} else if (p->readers) {
		p->readers--;
	}
	int last = --p->refs == 0;
	if (last) {
		stats_save(p);
		for (struct rpmemd_pool **q = &set->open; *q; q = &(*q)->next) {
			if (*q == p) {
				*q = p->next;
				break;
			}
		}
	}
	pthread_mutex_unlock(&set->lock);
	if (last)
		each(closing, p);
	if (last && p->hc) {
		rpmemd_store_hc_commit(p);
		rpmemd_hcache_close(&p->hc);
	}
	pthread_mutex_unlock(&r->lock);
	if (last)
		rpmemd_store_free(p);
}

int rpmemd_pool_sparse(const struct rpmemd_pool *p)
{
	struct stat st;

	if (p->fd < 0 || !p->in_memory || fstat(p->fd, &st))
		return 0;
	return (uint64_t)st.st_blocks * 512 < p->size;
}

int rpmemd_pool_shrunk(const struct rpmemd_pool *p)
{
	struct stat st;

	if (p->fd < 0 || fstat(p->fd, &st))
		return 0;
	return (uint64_t)st.st_size < p->size;
}

int rpmemd_pool_persist(struct rpmemd_pool *p, uint64_t off, uint64_t len)
{
	if (len == 0)
		return 0;
	return p->region->ops->persist(p, off, len);
}

/* a range of a pool to persist under the guard */
struct persist_args {
	struct rpmemd_pool *p;
	uint64_t off;
	uint64_t len;
};

/* persist_range -- rpmemd_pool_persist of one range (the guard's body) */
static int persist_range(void *arg)
{
	struct persist_args *a = arg;
	return rpmemd_pool_persist(a->p, a->off, a->len);
}

int rpmemd_pool_persist_guarded(struct rpmemd_pool *p, uint64_t off,
				uint64_t len)
{
	struct persist_args a = { p, off, len };
	return rpmem_guard_run(persist_range, &a);
}

void rpmemd_pool_get_meta(struct rpmemd_pool *p, struct rpmemd_meta *m)
{
	pthread_mutex_lock(&p->meta_lock);
	*m = p->meta;
	pthread_mutex_unlock(&p->meta_lock);
}

/* rpmemd_pool_state -- the open pool's state (RPMEM_POOL_*) */
uint8_t rpmemd_pool_state(struct rpmemd_pool *p)
{
	pthread_mutex_lock(&p->meta_lock);
	uint8_t state = p->meta.state;
	pthread_mutex_unlock(&p->meta_lock);
	return state;
}

void rpmemd_store_info(struct rpmemd_region *r, const char *name,
		       const struct rpmemd_meta *m, struct rpmem_pool_info *pi)
{
	memset(pi, 0, sizeof(*pi));
	rpmem_strlcpy(pi->region, r->cfg.name, sizeof(pi->region));
	rpmem_strlcpy(pi->name, name, sizeof(pi->name));
	memcpy(pi->uuid, m->uuid, sizeof(pi->uuid));
	pi->size = m->size;
	pi->state = m->state;
	pi->generation = m->generation;
	pi->created = m->created;
	pi->last_sync = m->last_sync;
	rpmem_strlcpy(pi->source, m->source, sizeof(pi->source));
	pi->role = m->role;
	pi->ngens = m->nhist;
	memcpy(pi->gens, m->hist, sizeof(pi->gens));
	pi->split_at = m->split_at;
	pthread_mutex_lock(&r->set->lock);
	struct rpmemd_pool *p = r->ops->find_open(r, name);
	if (p) {
		rpmem_strlcpy(pi->writer, p->writer, sizeof(pi->writer));
		pi->readers = p->readers;
		pi->bytes_written =
			__atomic_load_n(&p->bytes_written, __ATOMIC_RELAXED);
		pi->flushes = __atomic_load_n(&p->flushes, __ATOMIC_RELAXED);
	} else {
		struct rpmemd_pool_stats *st = stats_find(r, name);
		if (st) {
			pi->bytes_written = st->bytes_written;
			pi->flushes = st->flushes;
		}
	}
	pthread_mutex_unlock(&r->set->lock);
}

int rpmemd_pool_list_page(struct rpmemd_region *r, const char *after,
			  uint32_t max, struct rpmem_pool_info **v,
			  uint32_t *n)
{
	return r->ops->list_page(r, after, max, v, n);
}

int rpmemd_pool_list(struct rpmemd_region *r, struct rpmem_pool_info **v,
		     uint32_t *n)
{
	return rpmemd_pool_list_page(r, "", UINT32_MAX, v, n);
}

const char *rpmemd_pool_name(const struct rpmemd_pool *p)
{
	return p->name;
}

uint64_t rpmemd_pool_size(const struct rpmemd_pool *p)
{
	return p->size;
}

struct rpmemd_region *rpmemd_pool_region(const struct rpmemd_pool *p)
{
	return p->region;
}

uint8_t *rpmemd_pool_addr(const struct rpmemd_pool *p)
{
	return p->addr;
}

int rpmemd_pool_fd(const struct rpmemd_pool *p)
{
	return p->fd;
}

int rpmemd_pool_is_pmem(const struct rpmemd_pool *p)
{
	return p->is_pmem;
}

size_t rpmemd_pool_pagesize(const struct rpmemd_pool *p)
{
	return p->pagesize;
}

uint32_t rpmemd_pool_writer_sid(const struct rpmemd_pool *p)
{
	return __atomic_load_n(&p->writer_sid, __ATOMIC_ACQUIRE);
}

struct rpmemd_hcache *rpmemd_pool_hcache(const struct rpmemd_pool *p)
{
	return p->hc;
}

void rpmemd_pool_count(struct rpmemd_pool *p, uint64_t written,
		       uint64_t flushes)
{
	__atomic_add_fetch(&p->bytes_written, written, __ATOMIC_RELAXED);
	__atomic_add_fetch(&p->flushes, flushes, __ATOMIC_RELAXED);
}

void rpmemd_pool_rdma_writer(struct rpmemd_pool *p, int delta)
{
	if (delta > 0)
		__atomic_add_fetch(&p->rdma_writers, 1, __ATOMIC_RELEASE);
	else
		__atomic_sub_fetch(&p->rdma_writers, 1, __ATOMIC_RELEASE);
}

void rpmemd_pools_open_count(struct rpmemd_regions *rs, unsigned *pools,
			     unsigned *writing)
{
	*pools = *writing = 0;
	pthread_mutex_lock(&rs->lock);
	for (struct rpmemd_pool *p = rs->open; p; p = p->next) {
		(*pools)++;
		*writing += p->writer_sid != 0;
	}
	pthread_mutex_unlock(&rs->lock);
}
