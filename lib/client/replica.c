/* SPDX-License-Identifier: BSD-3-Clause */
/* replica.c -- a local pool file mapped with libpmem2 and its remote replica */
#include <errno.h>
#include <fcntl.h>
#include <libpmem2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client.h"
#include "util.h"

/*
 * A replica owns everything it opens: the file descriptor, the libpmem2
 * config, source and mapping, the session and the pool. All of it is
 * released by rpmemctl_replica_close. Errors are kept for
 * rpmemctl_strerror() in the calling thread.
 *
 * States: the open's sync leaves the replica consistent; the first
 * persist marks it syncing (the application is changing it, so a crash
 * leaves it marked); close marks it consistent again (generation + 1).
 */
struct rpmemctl_replica {
	int fd;
	struct pmem2_config *cfg;
	struct pmem2_source *src;
	struct pmem2_map *map;
	pmem2_persist_fn persist;
	int dirty; /* marked syncing by a persist since the open */
	uint8_t *addr;
	size_t size;
	struct rpmemctl_session *sess;
	struct rpmemctl_pool *pool;
	char name[2 * RPMEM_NAME_MAX + 2]; /* "region/pool" for messages */
	char source[RPMEM_STR_MAX + 1];	   /* "host:path" */
};

/* pmem2_err -- a libpmem2 error as -errno (its own codes become -EINVAL) */
static int pmem2_err(int ret)
{
	if (ret < 0 && ret > -4096)
		return ret;
	return ret == 0 ? 0 : -EINVAL;
}

/* map_local -- open and map path with libpmem2, page granularity or finer */
static int map_local(struct rpmemctl_replica *r, const char *path)
{
	int ret;
	r->fd = open(path, O_RDWR | O_CLOEXEC);
	if (r->fd < 0) {
		ret = -errno;
		client_set_last(ret, "cannot open '%s': %s", path,
				strerror(-ret));
		return ret;
	}
	ret = pmem2_config_new(&r->cfg);
	if (ret)
		goto err_pmem2;
	ret = pmem2_config_set_required_store_granularity(
		r->cfg, PMEM2_GRANULARITY_PAGE);
	if (ret)
		goto err_pmem2;
	ret = pmem2_source_from_fd(&r->src, r->fd);
	if (ret)
		goto err_pmem2;
	ret = pmem2_map_new(&r->map, r->cfg, r->src);
	if (ret)
		goto err_pmem2;
	r->addr = pmem2_map_get_address(r->map);
	r->size = pmem2_map_get_size(r->map);
	r->persist = pmem2_get_persist_fn(r->map);
	if (r->size == 0) {
		client_set_last(-EINVAL, "'%s' is empty", path);
		return -EINVAL;
	}
	return 0;

err_pmem2:
	client_set_last(pmem2_err(ret), "cannot map '%s': %s", path,
			pmem2_errormsg());
	return pmem2_err(ret);
}

/* open_remote -- session, then the pool read-write, created if missing */
static int open_remote(struct rpmemctl_replica *r, const struct rpmem_target *t,
		       enum rpmemctl_transport transport)
{
	int ret = rpmemctl_session_open(t->host, t->port, transport, &r->sess);
	if (ret)
		return ret; /* the details are kept for rpmemctl_strerror */
	ret = rpmemctl_pool_open_or_create(r->sess, t->region, t->pool,
					   r->size, RPMEMCTL_OPEN_RDWR |
					   RPMEMCTL_OPEN_CREATE, &r->pool,
					   NULL);
	if (ret)
		client_set_last(ret, "replica %s on %s:%s: %s", r->name,
				t->host, t->port,
				rpmemctl_session_errmsg(r->sess));
	return ret;
}

/* release -- everything the replica holds, in reverse order of opening */
static void release(struct rpmemctl_replica *r)
{
	rpmemctl_pool_close(&r->pool);
	rpmemctl_session_close(&r->sess);
	if (r->map)
		pmem2_map_delete(&r->map);
	if (r->src)
		pmem2_source_delete(&r->src);
	if (r->cfg)
		pmem2_config_delete(&r->cfg);
	if (r->fd >= 0)
		close(r->fd);
	free(r);
}

/*
 * rpmemctl_replica_open -- map path, open (or create) the remote pool at
 * target and bring it up to date with one push
 */
RPMEM_EXPORT int rpmemctl_replica_open(const char *path, const char *target,
				       enum rpmemctl_transport transport,
				       struct rpmemctl_replica **out)
{
	if (!path || !target || !out) {
		client_set_last(-EINVAL, "invalid argument");
		return -EINVAL;
	}
	struct rpmem_target t;
	char err[256];
	if (rpmem_parse_target(target, RPMEM_TARGET_NEED_POOL, &t, err,
			       sizeof(err))) {
		client_set_last(-EINVAL, "%s", err);
		return -EINVAL;
	}
	struct rpmemctl_replica *r = calloc(1, sizeof(*r));
	if (!r) {
		client_set_last(-ENOMEM, "out of memory");
		return -ENOMEM;
	}
	r->fd = -1;
	snprintf(r->name, sizeof(r->name), "%s/%s", t.region, t.pool);
	char host[64] = "";
	gethostname(host, sizeof(host) - 1);
	snprintf(r->source, sizeof(r->source), "%s:%s", host, path);

	int ret = map_local(r, path);
	if (ret)
		goto err_release;
	ret = open_remote(r, &t, transport);
	if (ret)
		goto err_release;
	ret = rpmemctl_pool_attach(r->pool, r->addr, r->size);
	if (ret) {
		client_set_last(ret, "replica %s: %s", r->name,
				rpmemctl_session_errmsg(r->sess));
		goto err_release;
	}
	struct rpmemctl_sync_opts opts = {
		.mode = RPMEMCTL_SYNC_PUSH,
		.source = r->source,
	};
	ret = rpmemctl_pool_sync(r->pool, r->addr, r->size, &opts, NULL);
	if (ret) {
		client_set_last(ret, "initial sync of replica %s failed: %s",
				r->name, rpmemctl_session_errmsg(r->sess));
		goto err_release;
	}
	*out = r;
	return 0;

err_release:
	release(r);
	return ret;
}

RPMEM_EXPORT void *rpmemctl_replica_addr(const struct rpmemctl_replica *r)
{
	return r ? r->addr : NULL;
}

RPMEM_EXPORT size_t rpmemctl_replica_size(const struct rpmemctl_replica *r)
{
	return r ? r->size : 0;
}

/*
 * rpmemctl_replica_persist -- local persist, then remote write and flush;
 * returns once both copies hold [addr, addr + len)
 */
RPMEM_EXPORT int rpmemctl_replica_persist(struct rpmemctl_replica *r,
					  const void *addr, size_t len)
{
	if (!r || !addr) {
		client_set_last(-EINVAL, "invalid argument");
		return -EINVAL;
	}
	const uint8_t *p = addr;
	if (p < r->addr || (size_t)(p - r->addr) > r->size ||
	    len > r->size - (size_t)(p - r->addr)) {
		client_set_last(-EINVAL, "persist range %p+%zu is outside the "
				"mapping of replica %s", addr, len, r->name);
		return -EINVAL;
	}
	if (len == 0)
		return 0;
	r->persist(addr, len);
	int ret = 0;
	if (!r->dirty) {
		ret = rpmemctl_pool_set_state(r->pool, RPMEMCTL_POOL_SYNCING,
					      r->source);
		r->dirty = ret == 0;
	}
	if (!ret)
		ret = rpmemctl_pool_persist(r->pool, addr,
					    (uint64_t)(p - r->addr), len);
	if (ret)
		client_set_last(ret, "replica %s: %s", r->name,
				rpmemctl_session_errmsg(r->sess));
	return ret;
}

/*
 * rpmemctl_replica_close -- mark the replica consistent if it was changed
 * since the open (every persist is flushed already) and release it
 */
RPMEM_EXPORT int rpmemctl_replica_close(struct rpmemctl_replica **rp)
{
	if (!rp || !*rp)
		return 0;
	struct rpmemctl_replica *r = *rp;
	int ret = 0;
	if (r->dirty)
		ret = rpmemctl_pool_set_state(r->pool,
					      RPMEMCTL_POOL_CONSISTENT,
					      r->source);
	if (ret)
		client_set_last(ret, "replica %s: %s", r->name,
				rpmemctl_session_errmsg(r->sess));
	int ret2 = rpmemctl_pool_close(&r->pool);
	if (ret2 && !ret) {
		ret = ret2;
		client_set_last(ret, "closing replica %s: %s", r->name,
				rpmemctl_session_errmsg(r->sess));
	}
	release(r);
	*rp = NULL;
	return ret;
}
