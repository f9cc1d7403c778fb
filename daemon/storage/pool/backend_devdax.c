/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * backend_devdax.c -- the devdax backend: pools are extents of a device
 * DAX, entries of its pool table (devdax.c), ranges of its one mapping
 */
#include <errno.h>
#include <libpmem2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "devdax.h"
#include "log.h"
#include "region.h"
#include "util.h"

/* dax_find_open -- the open pool name of r's device; set->lock held */
static struct rpmemd_pool *dax_find_open(struct rpmemd_region *r,
					 const char *name)
{
	for (struct rpmemd_pool *p = r->set->open; p; p = p->next)
		if (p->dax == r->dax && !strcmp(p->name, name))
			return p;
	return NULL;
}

/* dax_create -- a pool of a devdax region: an extent and a table entry */
static int dax_create(struct rpmemd_region *r, const char *name,
		      uint64_t size, char *err, size_t errlen)
{
	struct rpmemd_devdax_info di;
	char need[RPMEM_SIZE_STR], have[RPMEM_SIZE_STR], big[RPMEM_SIZE_STR];
	int ret;

	pthread_mutex_lock(&r->dax->lock);
	ret = rpmemd_devdax_create(r->dax->dd, name, size, NULL);
	if (ret == -EEXIST) {
		snprintf(err, errlen, "pool '%s' already exists in region '%s'",
			 name, r->cfg.name);
	} else if (ret == -ENOSPC) {
		rpmemd_devdax_info(r->dax->dd, &di);
		if (di.npools >= di.max_pools)
			snprintf(err, errlen,
				 "region '%s' cannot hold more pools: its pool table is full (%u pools)",
				 r->cfg.name, di.max_pools);
		else
			snprintf(err, errlen,
				 "pool '%s' needs %s but region '%s' has %s free (largest free extent %s)",
				 name, rpmem_fmt_size(size, need, sizeof(need)),
				 r->cfg.name,
				 rpmem_fmt_size(di.free, have, sizeof(have)),
				 rpmem_fmt_size(di.largest_free, big,
						sizeof(big)));
	} else if (ret) {
		snprintf(err, errlen, "cannot create pool '%s' in region '%s': %s",
			 name, r->cfg.name, strerror(-ret));
	}
	pthread_mutex_unlock(&r->dax->lock);
	if (!ret)
		rpmemd_store_stats_drop(r, name);
	return ret;
}

/* dax_remove -- drop a pool from a devdax region's table */
static int dax_remove(struct rpmemd_region *r, const char *name, int force,
		      char *err, size_t errlen)
{
	struct rpmemd_devdax_pool dp;
	int ret;

	pthread_mutex_lock(&r->dax->lock);
	ret = rpmemd_devdax_lookup(r->dax->dd, name, &dp);
	if (ret == -ENOENT) {
		snprintf(err, errlen, "no pool '%s' in region '%s'", name,
			 r->cfg.name);
		goto out;
	}
	if (ret) {
		snprintf(err, errlen, "cannot look up pool '%s': %s", name,
			 strerror(-ret));
		goto out;
	}
	if ((ret = rpmemd_store_busy(r, name, err, errlen)) ||
	    (ret = rpmemd_store_syncing(&dp.meta, name, force, err, errlen)))
		goto out;
	ret = rpmemd_devdax_remove(r->dax->dd, name);
	if (ret) {
		snprintf(err, errlen, "cannot remove pool '%s' from region '%s': %s",
			 name, r->cfg.name, strerror(-ret));
		goto out;
	}
	rpmemd_store_stats_drop(r, name);
	/* the journal of a forced remove's interrupted sync */
	rpmemd_keepers_removed(r, name);
	ret = 0;
out:
	pthread_mutex_unlock(&r->dax->lock);
	return ret;
}

/*
 * dax_open -- open a pool of a devdax region: its range of the device's
 * mapping, shared by every open of the pool
 */
static int dax_open(struct rpmemd_region *r, const char *name, uint8_t mode,
		    uint32_t sid, const char *holder, struct rpmemd_pool **out,
		    char *err, size_t errlen)
{
	struct rpmemd_regions *set = r->set;
	struct rpmemd_devdax_pool dp;
	struct rpmemd_devdax_info di;
	struct rpmemd_pool *p = NULL, *np = NULL;
	void *addr;
	uint64_t size;
	int ret;

	pthread_mutex_lock(&r->dax->lock);
	ret = rpmemd_devdax_lookup(r->dax->dd, name, &dp);
	if (ret) {
		snprintf(err, errlen, ret == -ENOENT ?
				 "no pool '%s' in region '%s'" :
				 "cannot look up pool '%s' in region '%s'",
			 name, r->cfg.name);
		goto out;
	}
	/* already open: share it */
	pthread_mutex_lock(&set->lock);
	p = dax_find_open(r, name);
	if (p)
		ret = rpmemd_store_attach(p, mode, sid, holder, err, errlen);
	pthread_mutex_unlock(&set->lock);
	if (p)
		goto out;

	ret = rpmemd_devdax_pool_addr(r->dax->dd, name, &addr, &size);
	if (ret || size != dp.meta.size) {
		snprintf(err, errlen, "pool '%s' in region '%s': no range in the pool table",
			 name, r->cfg.name);
		ret = -EIO;
		goto out;
	}
	if ((ret = rpmemd_store_new(r, name, &dp.meta, &np, err, errlen)))
		goto out;
	rpmemd_devdax_info(r->dax->dd, &di);
	np->dax = r->dax;
	np->addr = addr;
	np->is_pmem = di.granularity != PMEM2_GRANULARITY_PAGE;
	rpmemd_keepers_opened(np);
	/* the device's lock keeps out a second open of this pool */
	pthread_mutex_lock(&set->lock);
	rpmemd_store_insert(np);
	ret = rpmemd_store_attach(np, mode, sid, holder, err, errlen);
	if (ret)
		set->open = np->next;
	pthread_mutex_unlock(&set->lock);
	if (ret) {
		rpmemd_store_free(np);
		goto out;
	}
	p = np;
out:
	pthread_mutex_unlock(&r->dax->lock);
	if (!ret)
		*out = p;
	return ret;
}

/* dax_persist -- rpmemd_devdax_persist of a range; a failure logged */
static int dax_persist(struct rpmemd_pool *p, uint64_t off, uint64_t len)
{
	int ret = rpmemd_devdax_persist(p->dax->dd, p->addr + off, len);
	if (ret)
		ERR("region '%s': pool '%s': persisting %llu bytes at %llu failed: %s",
		    p->region->cfg.name, p->name,
		    (unsigned long long)len, (unsigned long long)off,
		    strerror(-ret));
	return ret;
}

/*
 * dax_write_meta -- *m (state, generation, source: the store applied the
 * change) in the device's pool table, one whole-slot write; *m gets the
 * record as written
 */
static int dax_write_meta(struct rpmemd_pool *p, uint8_t state,
			  const char *source, struct rpmemd_meta *m)
{
	struct rpmemd_devdax_pool dp;
	int ret = rpmemd_devdax_set_meta(p->dax->dd, p->name, m);

	(void)state;
	(void)source;
	if (!ret)
		ret = rpmemd_devdax_lookup(p->dax->dd, p->name, &dp);
	if (!ret)
		*m = dp.meta;
	return ret;
}

/* dax_list -- the first max pools of a devdax region's table after `after` */
static int dax_list(struct rpmemd_region *r, const char *after, uint32_t max,
		    struct rpmem_pool_info **v, uint32_t *n)
{
	struct rpmemd_devdax_pool *dp = NULL;
	size_t cnt = 0, i, k = 0;
	int ret;

	pthread_mutex_lock(&r->dax->lock);
	ret = rpmemd_devdax_list(r->dax->dd, &dp, &cnt);
	if (ret || !cnt)
		goto out;
	/* sorted by name: skip those up to `after` */
	for (i = 0; i < cnt && strcmp(dp[i].name, after) <= 0; i++)
		;
	k = cnt - i < max ? cnt - i : max;
	if (!k)
		goto out;
	struct rpmem_pool_info *nv = realloc(*v, (*n + k) * sizeof(**v));
	if (!nv) {
		ret = -ENOMEM;
		goto out;
	}
	*v = nv;
	for (size_t j = i; j < i + k; j++) {
		rpmemd_store_info(r, dp[j].name, &dp[j].meta, &nv[*n]);
		rpmemd_keepers_info(r, dp[j].name, &dp[j].meta, &nv[(*n)++]);
	}
out:
	pthread_mutex_unlock(&r->dax->lock);
	free(dp);
	return ret;
}

/* dax_release -- nothing: a devdax pool is a range of the device's mapping */
static void dax_release(struct rpmemd_pool *p)
{
	(void)p;
}

/* dax_stat -- no file (a devdax pool has no hash cache) */
static int dax_stat(struct rpmemd_pool *p, struct stat *st)
{
	(void)p;
	(void)st;
	return -EOPNOTSUPP;
}

/* dax_space -- the device less its pool table, and its unreserved bytes */
static int dax_space(struct rpmemd_region *r, uint64_t *size,
		     uint64_t *avail)
{
	struct rpmemd_devdax_info di;
	rpmemd_devdax_info(r->dax->dd, &di);
	*size = di.dev_size - di.data_offset;
	*avail = di.free;
	return 0;
}

/*
 * dax_undo_dir -- journals live in the region's undo_dir, on a file
 * system: a device has none, and its space is the pool table's
 */
static int dax_undo_dir(const struct rpmemd_region *r)
{
	return r->undofd >= 0 ? r->undofd : -ENOTSUP;
}

const struct rpmemd_backend_ops rpmemd_backend_devdax = {
	.name = "devdax",
	.create = dax_create,
	.remove = dax_remove,
	.open = dax_open,
	.find_open = dax_find_open,
	.release = dax_release,
	.persist = dax_persist,
	.write_meta = dax_write_meta,
	.stat = dax_stat,
	.list_page = dax_list,
	.space = dax_space,
	.undo_dir = dax_undo_dir,
};
