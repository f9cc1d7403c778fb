/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * devdax.c -- devdax region: the device mapped whole with libpmem2, and
 * its pools (create, remove, state changes) as records of its pool table
 * (devdax_table.c)
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "devdax_table.h"
#include "log.h"
#include "util.h"

/* pmem2_err -- a libpmem2 return code as -errno */
static int pmem2_err(int ret)
{
	/* libpmem2's own codes are below -100000; keep real errnos */
	if (ret < 0 && ret > -4096)
		return ret;
	return -EINVAL;
}

/* dd_map -- open, lock and map the device */
static int dd_map(struct rpmemd_devdax *dd, const char *path)
{
	struct pmem2_config *cfg = NULL;
	size_t size, align;
	int ret;

	dd->fd = open(path, O_RDWR | O_CLOEXEC);
	if (dd->fd < 0) {
		ret = -errno;
		ERR("devdax %s: open: %s", path, strerror(errno));
		return ret;
	}
	if (flock(dd->fd, LOCK_EX | LOCK_NB) < 0) {
		ret = errno == EWOULDBLOCK ? -EBUSY : -errno;
		ERR("devdax %s: in use by another process (flock: %s)", path,
		    strerror(errno));
		goto err_close;
	}
	ret = pmem2_source_from_fd(&dd->src, dd->fd);
	if (ret) {
		ERR("devdax %s: pmem2_source_from_fd: %s", path,
		    pmem2_errormsg());
		ret = pmem2_err(ret);
		goto err_close;
	}
	ret = pmem2_source_size(dd->src, &size);
	if (!ret)
		ret = pmem2_source_alignment(dd->src, &align);
	if (ret) {
		ERR("devdax %s: pmem2_source_size/alignment: %s", path,
		    pmem2_errormsg());
		ret = pmem2_err(ret);
		goto err_src;
	}
	if (align == 0 || (align & (align - 1))) {
		ERR("devdax %s: alignment %zu is not a power of two", path,
		    align);
		ret = -EINVAL;
		goto err_src;
	}
	dd->map_size = size;
	dd->src_align = align;
	ret = pmem2_config_new(&cfg);
	if (ret) {
		ERR("devdax %s: pmem2_config_new: %s", path, pmem2_errormsg());
		ret = pmem2_err(ret);
		goto err_src;
	}
	/* any: a regular file (tests) has page granularity */
	ret = pmem2_config_set_required_store_granularity(
		cfg, PMEM2_GRANULARITY_PAGE);
	if (ret) {
		ERR("devdax %s: pmem2_config_set_required_store_granularity: %s",
		    path, pmem2_errormsg());
		ret = pmem2_err(ret);
		goto err_cfg;
	}
	ret = pmem2_map_new(&dd->map, cfg, dd->src);
	if (ret) {
		ERR("devdax %s: pmem2_map_new: %s", path, pmem2_errormsg());
		ret = pmem2_err(ret);
		goto err_cfg;
	}
	pmem2_config_delete(&cfg);
	dd->base = pmem2_map_get_address(dd->map);
	dd->granularity = (int)pmem2_map_get_store_granularity(dd->map);
	dd->persist = pmem2_get_persist_fn(dd->map);
	dd->memcpy_fn = pmem2_get_memcpy_fn(dd->map);
	dd->memset_fn = pmem2_get_memset_fn(dd->map);
	return 0;

err_cfg:
	pmem2_config_delete(&cfg);
err_src:
	pmem2_source_delete(&dd->src);
err_close:
	close(dd->fd);
	dd->fd = -1;
	return ret;
}

/* dd_unmap -- undo dd_map */
static void dd_unmap(struct rpmemd_devdax *dd)
{
	if (dd->map)
		pmem2_map_delete(&dd->map);
	if (dd->src)
		pmem2_source_delete(&dd->src);
	if (dd->fd >= 0)
		close(dd->fd);
	dd->fd = -1;
}

/* rpmemd_devdax_open_opts -- map the device, load or format its table */
int rpmemd_devdax_open_opts(const char *path,
			    const struct rpmemd_devdax_opts *opts,
			    struct rpmemd_devdax **out)
{
	struct rpmemd_devdax *dd;
	int ret;

	if (!path || !opts || !out)
		return -EINVAL;
	dd = calloc(1, sizeof(*dd));
	if (!dd)
		return -ENOMEM;
	dd->fd = -1;
	rpmem_strlcpy(dd->path, path, sizeof(dd->path));
	ret = dd_map(dd, path);
	if (ret)
		goto err_free;
	ret = dd_table_attach(dd, opts);
	if (ret)
		goto err_unmap;
	ret = pthread_mutex_init(&dd->lock, NULL);
	if (ret) {
		ret = -ret;
		goto err_ent;
	}
	INFO("devdax %s: %u pools, alignment %" PRIu64, path, dd->npools,
	     dd->align);
	*out = dd;
	return 0;

err_ent:
	free(dd->ent);
err_unmap:
	dd_unmap(dd);
err_free:
	free(dd);
	return ret;
}

/* rpmemd_devdax_open -- open with default format-time options */
int rpmemd_devdax_open(const char *path, int format,
		       struct rpmemd_devdax **out)
{
	struct rpmemd_devdax_opts opts = { .format = format };

	return rpmemd_devdax_open_opts(path, &opts, out);
}

/* rpmemd_devdax_close -- unmap and free */
void rpmemd_devdax_close(struct rpmemd_devdax **pdd)
{
	struct rpmemd_devdax *dd;

	if (!pdd || !*pdd)
		return;
	dd = *pdd;
	pthread_mutex_destroy(&dd->lock);
	free(dd->ent);
	dd_unmap(dd);
	free(dd);
	*pdd = NULL;
}

/* dd_find -- index of the pool named name, -1 if none */
static int dd_find(struct rpmemd_devdax *dd, const char *name)
{
	for (uint32_t i = 0; i < dd->max_pools; i++)
		if (dd_ent_used(&dd->ent[i]) &&
		    !strcmp(dd->ent[i].rec.name, name))
			return (int)i;
	return -1;
}

static void to_pool(const struct rpmemd_devdax *dd, const struct dd_rec *r,
		    struct rpmemd_devdax_pool *p)
{
	memset(p, 0, sizeof(*p));
	rpmem_strlcpy(p->name, r->name, sizeof(p->name));
	p->offset = r->offset;
	p->extent = dd_rec_extent(dd, r);
	p->meta = r->meta;
}

/* rpmemd_devdax_info -- sizes and free space */
void rpmemd_devdax_info(struct rpmemd_devdax *dd,
			struct rpmemd_devdax_info *info)
{
	memset(info, 0, sizeof(*info));
	pthread_mutex_lock(&dd->lock);
	memcpy(info->uuid, dd->uuid, 16);
	info->dev_size = dd->dev_size;
	info->align = dd->align;
	info->data_offset = dd->table_size;
	info->max_pools = dd->max_pools;
	info->npools = dd->npools;
	info->granularity = dd->granularity;
	if (dd_space(dd, &info->free, &info->largest_free)) {
		/* out of memory: a conservative answer */
		info->free = 0;
		info->largest_free = 0;
	}
	pthread_mutex_unlock(&dd->lock);
}

/* rpmemd_devdax_list -- copies of all pools, sorted by name */
int rpmemd_devdax_list(struct rpmemd_devdax *dd,
		       struct rpmemd_devdax_pool **pools, size_t *n)
{
	struct rpmemd_devdax_pool *p = NULL;
	struct dd_entry **v;
	uint32_t np;
	int ret;

	pthread_mutex_lock(&dd->lock);
	ret = dd_used_sorted(dd, dd_cmp_name, &v);
	if (ret)
		goto out;
	np = dd->npools;
	if (np) {
		p = calloc(np, sizeof(*p));
		if (!p) {
			ret = -ENOMEM;
			free(v);
			goto out;
		}
		for (uint32_t i = 0; i < np; i++)
			to_pool(dd, &v[i]->rec, &p[i]);
	}
	free(v);
	*pools = p;
	*n = np;
out:
	pthread_mutex_unlock(&dd->lock);
	return ret;
}

/* rpmemd_devdax_create -- reserve, zero and record a new pool */
int rpmemd_devdax_create(struct rpmemd_devdax *dd, const char *name,
			 uint64_t size, struct rpmemd_devdax_pool *out)
{
	char b1[RPMEM_SIZE_STR], b2[RPMEM_SIZE_STR], b3[RPMEM_SIZE_STR];
	uint64_t ext, off, free_b, largest;
	struct dd_rec r;
	int ret, slot = -1;

	if (!rpmem_name_valid(name)) {
		ERR("devdax %s: invalid pool name", dd->path);
		return -EINVAL;
	}
	ext = dd_round_up(size, dd->align);
	if (size == 0 || ext == 0) {
		ERR("devdax %s: invalid pool size %" PRIu64, dd->path, size);
		return -EINVAL;
	}
	pthread_mutex_lock(&dd->lock);
	if (dd_find(dd, name) >= 0) {
		ret = -EEXIST;
		goto out;
	}
	for (uint32_t i = 0; i < dd->max_pools; i++) {
		if (!dd_ent_used(&dd->ent[i])) {
			slot = (int)i;
			break;
		}
	}
	if (slot < 0) {
		ERR("devdax %s: pool table is full (%u pools)", dd->path,
		    dd->max_pools);
		ret = -ENOSPC;
		goto out;
	}
	ret = dd_alloc(dd, ext, &off);
	if (ret == -ENOSPC) {
		if (!dd_space(dd, &free_b, &largest))
			ERR("devdax %s: no room for pool '%s' of %s: %s free, largest free extent %s",
			    dd->path, name,
			    rpmem_fmt_size(size, b1, sizeof(b1)),
			    rpmem_fmt_size(free_b, b2, sizeof(b2)),
			    rpmem_fmt_size(largest, b3, sizeof(b3)));
	}
	if (ret)
		goto out;
	memset(&r, 0, sizeof(r));
	ret = rpmemd_meta_init(&r.meta, size);
	if (ret)
		goto out;
	r.in_use = 1;
	r.offset = off;
	rpmem_strlcpy(r.name, name, sizeof(r.name));
	/* the data first: a pool is never visible before it is zeroed */
	dd->memset_fn(dd->base + off, 0, ext, 0);
	dd_slot_put(dd, (uint32_t)slot, &r);
	dd->npools++;
	if (out)
		to_pool(dd, &r, out);
	INFO("devdax %s: created pool '%s' of %" PRIu64 " bytes at %" PRIu64,
	     dd->path, name, size, off);
out:
	pthread_mutex_unlock(&dd->lock);
	return ret;
}

/* rpmemd_devdax_remove -- tombstone the pool, then erase its old record */
int rpmemd_devdax_remove(struct rpmemd_devdax *dd, const char *name)
{
	struct dd_entry *e;
	struct dd_rec r;
	int i, old;

	if (!rpmem_name_valid(name))
		return -EINVAL;
	pthread_mutex_lock(&dd->lock);
	i = dd_find(dd, name);
	if (i < 0) {
		pthread_mutex_unlock(&dd->lock);
		return -ENOENT;
	}
	e = &dd->ent[i];
	old = e->cur;
	memset(&r, 0, sizeof(r));
	dd_slot_put(dd, (uint32_t)i, &r);
	dd_slot_erase(dd, (uint32_t)i, old);
	dd->npools--;
	INFO("devdax %s: removed pool '%s'", dd->path, name);
	pthread_mutex_unlock(&dd->lock);
	return 0;
}

/* rpmemd_devdax_lookup -- a copy of the pool's record */
int rpmemd_devdax_lookup(struct rpmemd_devdax *dd, const char *name,
			 struct rpmemd_devdax_pool *out)
{
	int i;

	if (!rpmem_name_valid(name))
		return -EINVAL;
	pthread_mutex_lock(&dd->lock);
	i = dd_find(dd, name);
	if (i >= 0 && out)
		to_pool(dd, &dd->ent[i].rec, out);
	pthread_mutex_unlock(&dd->lock);
	return i < 0 ? -ENOENT : 0;
}

/*
 * dd_update -- name's record changed by fn(meta, arg) and written to its
 * other slot; fn's error (0 or -errno) leaves it as it was
 */
static int dd_update(struct rpmemd_devdax *dd, const char *name,
		     int (*fn)(struct rpmemd_meta *, const void *),
		     const void *arg)
{
	struct dd_rec r;
	int i, ret = -ENOENT;

	if (!rpmem_name_valid(name))
		return -EINVAL;
	pthread_mutex_lock(&dd->lock);
	i = dd_find(dd, name);
	if (i >= 0) {
		r = dd->ent[i].rec;
		ret = fn(&r.meta, arg);
		if (!ret)
			dd_slot_put(dd, (uint32_t)i, &r);
	}
	pthread_mutex_unlock(&dd->lock);
	return ret;
}

struct dd_state_arg {
	uint8_t state;
	const char *source;
};

/* new_state -- dd_update's change of rpmemd_devdax_set_state */
static int new_state(struct rpmemd_meta *m, const void *arg)
{
	const struct dd_state_arg *a = arg;
	int ret = rpmemd_meta_transition(m, a->state);

	if (!ret && a->source)
		rpmemd_meta_set_source(m, a->source);
	return ret;
}

/* rpmemd_devdax_set_state -- write the changed record to the other slot */
int rpmemd_devdax_set_state(struct rpmemd_devdax *dd, const char *name,
			    uint8_t state, const char *source)
{
	struct dd_state_arg a = { state, source };

	return dd_update(dd, name, new_state, &a);
}

/* new_meta -- dd_update's change of rpmemd_devdax_set_meta */
static int new_meta(struct rpmemd_meta *m, const void *arg)
{
	const struct rpmemd_meta *n = arg;

	m->state = n->state;
	m->generation = n->generation;
	m->last_sync = n->last_sync;
	rpmemd_meta_set_source(m, n->source);
	return 0;
}

/* rpmemd_devdax_set_meta -- write the record with m's state and generation */
int rpmemd_devdax_set_meta(struct rpmemd_devdax *dd, const char *name,
			   const struct rpmemd_meta *m)
{
	return dd_update(dd, name, new_meta, m);
}

/* new_gen -- dd_update's change of rpmemd_devdax_set_gen */
static int new_gen(struct rpmemd_meta *m, const void *arg)
{
	const struct rpmemd_meta *n = arg;

	m->role = n->role;
	m->nhist = (uint8_t)(n->nhist < RPMEMD_DEVDAX_HIST ?
				     n->nhist : RPMEMD_DEVDAX_HIST);
	memcpy(m->hist, n->hist, m->nhist * sizeof(m->hist[0]));
	m->split_at = n->split_at; /* in memory only: the slot has no room */
	return 0;
}

/* rpmemd_devdax_set_gen -- write the record with m's role and history */
int rpmemd_devdax_set_gen(struct rpmemd_devdax *dd, const char *name,
			  const struct rpmemd_meta *m)
{
	return dd_update(dd, name, new_gen, m);
}

/* rpmemd_devdax_pool_addr -- base + offset of the pool and its size */
int rpmemd_devdax_pool_addr(struct rpmemd_devdax *dd, const char *name,
			    void **addr, uint64_t *size)
{
	int i;

	if (!rpmem_name_valid(name))
		return -EINVAL;
	pthread_mutex_lock(&dd->lock);
	i = dd_find(dd, name);
	if (i >= 0) {
		*addr = dd->base + dd->ent[i].rec.offset;
		*size = dd->ent[i].rec.meta.size;
	}
	pthread_mutex_unlock(&dd->lock);
	return i < 0 ? -ENOENT : 0;
}

/* rpmemd_devdax_persist -- flush a range of the data area to the media */
int rpmemd_devdax_persist(struct rpmemd_devdax *dd, const void *addr,
			  size_t len)
{
	const uint8_t *p = addr;

	if (p < dd->base + dd->table_size || p > dd->base + dd->dev_size ||
	    len > (size_t)(dd->base + dd->dev_size - p))
		return -ERANGE;
	if (len)
		dd->persist(addr, len);
	return 0;
}
