/* SPDX-License-Identifier: BSD-3-Clause */
/* replica.c -- a local pool file mapped with libpmem2 and its remote replica */
#include <errno.h>
#include <fcntl.h>
#include <libpmem2.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client.h"
#include "util.h"

/*
 * A replica owns everything it opens: the file descriptor, the libpmem2
 * config, source and mapping, the session and the pool. All of it is
 * released by rpmemctl_replica_close. The message of a failed call is
 * kept in the replica (rpmemctl_replica_errmsg) and, for the call just
 * made, in the calling thread (rpmemctl_strerror, and the errbuf of
 * rpmemctl_replica_open_err when there is no replica yet).
 *
 * States: the open's sync leaves the replica consistent; the first
 * persist marks it syncing (the application is changing it, so a crash
 * leaves it marked); close marks it consistent again (generation + 1).
 *
 * The dirty log PATH.rpmemlog records the extents every persist covers,
 * before their local persist: after a persist that reached only the
 * local file (the target gone, or a crash in between), the next open (or
 * `rpmemctl sync`) sends only those extents. The open's sync and a clean
 * close, which leave the two copies equal, clear it. Its clean mark stays
 * set: a mark is persistent before its persist, so a crash keeps it true.
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
	struct rpmemctl_dirtylog *log; /* PATH.rpmemlog */
	char name[2 * RPMEM_NAME_MAX + 2]; /* "region/pool" for messages */
	char source[RPMEM_STR_MAX + 1];	   /* "host:path" */
	char errmsg[CLIENT_ERRMSG_MAX];	   /* why the last call failed */
};

/* pmem2_err -- a libpmem2 error as -errno (its own codes become -EINVAL) */
static int pmem2_err(int ret)
{
	if (ret < 0 && ret > -4096)
		return ret;
	return ret == 0 ? 0 : -EINVAL;
}

/* rerr -- keep the reason of a failure in the replica; returns err */
__attribute__((format(printf, 3, 4))) static int
rerr(struct rpmemctl_replica *r, int err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->errmsg, sizeof(r->errmsg), fmt, ap);
	va_end(ap);
	return err;
}

/* map_local -- open and map path with libpmem2, page granularity or finer */
static int map_local(struct rpmemctl_replica *r, const char *path)
{
	int ret;
	r->fd = open(path, O_RDWR | O_CLOEXEC);
	if (r->fd < 0) {
		ret = -errno;
		return rerr(r, ret, "cannot open '%s': %s", path,
			    strerror(-ret));
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
	if (r->size == 0)
		return rerr(r, -EINVAL, "'%s' is empty", path);
	return 0;

err_pmem2:
	return rerr(r, pmem2_err(ret), "cannot map '%s': %s", path,
		    pmem2_errormsg());
}

/* open_remote -- session, then the pool read-write, created if missing */
static int open_remote(struct rpmemctl_replica *r, const struct rpmem_target *t,
		       enum rpmemctl_transport transport)
{
	int ret = rpmemctl_session_open(t->host, t->port, transport, &r->sess);
	if (ret) /* the message of the open just made */
		return rerr(r, ret, "%s", rpmemctl_strerror(ret));
	ret = rpmemctl_pool_open_or_create(r->sess, t->region, t->pool,
					   r->size, RPMEMCTL_OPEN_RDWR |
					   RPMEMCTL_OPEN_CREATE, &r->pool,
					   NULL);
	if (ret)
		return rerr(r, ret, "replica %s on %s:%s: %s", r->name,
			    t->host, t->port, rpmemctl_session_errmsg(r->sess));
	return 0;
}

/* release -- everything the replica holds, in reverse order of opening */
static void release(struct rpmemctl_replica *r)
{
	rpmemctl_pool_close(&r->pool);
	rpmemctl_session_close(&r->sess);
	rpmemctl_dirtylog_close(&r->log);
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

/* initial_sync -- push the local file to the replica, recording its source */
static int initial_sync(struct rpmemctl_replica *r)
{
	struct rpmemctl_sync_cfg *cfg;
	int ret = rpmemctl_sync_cfg_new(&cfg);
	if (ret)
		goto err_msg;
	ret = rpmemctl_sync_cfg_set_source(cfg, r->source);
	if (!ret)
		ret = rpmemctl_sync_cfg_set_dirty_log(cfg, r->log);
	if (ret)
		goto err_delete;
	ret = rpmemctl_pool_sync2(r->pool, r->addr, r->size, cfg, NULL);
	rpmemctl_sync_cfg_delete(&cfg);
	return ret;

err_delete:
	rpmemctl_sync_cfg_delete(&cfg);
err_msg:
	client_seterr(r->sess, "%s", rpmemctl_strerror(ret));
	return ret;
}

/*
 * replica_open -- map path, open (or create) the remote pool at target
 * and bring it up to date with one push
 */
static int replica_open(const char *path, const char *target,
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
	char msg[CLIENT_ERRMSG_MAX];
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
	char lpath[RPMEM_STR_MAX + 16];
	snprintf(lpath, sizeof(lpath), "%s.rpmemlog", path);
	/* one it may not trust or use is replaced: a full sync */
	ret = rpmemctl_dirtylog_open_pool(lpath, r->fd, r->size, 0,
					  RPMEMCTL_DIRTYLOG_REPLACE, &r->log);
	if (ret) {
		rerr(r, ret, "%s", rpmemctl_strerror(ret));
		goto err_release;
	}
	ret = open_remote(r, &t, transport);
	if (ret)
		goto err_release;
	ret = rpmemctl_pool_attach(r->pool, r->addr, r->size);
	if (ret) {
		rerr(r, ret, "replica %s: %s", r->name,
		     rpmemctl_pool_errmsg(r->pool));
		goto err_release;
	}
	ret = initial_sync(r);
	if (ret) {
		rerr(r, ret, "initial sync of replica %s failed: %s", r->name,
		     rpmemctl_pool_errmsg(r->pool));
		goto err_release;
	}
	*out = r;
	return 0;

err_release:
	/* release() makes library calls of its own: keep the reason first */
	rpmem_strlcpy(msg, r->errmsg, sizeof(msg));
	release(r);
	client_set_last(ret, "%s", msg);
	return ret;
}

/* rpmemctl_replica_open -- replica_open; the reason of a failure is kept */
RPMEM_EXPORT int rpmemctl_replica_open(const char *path, const char *target,
				       enum rpmemctl_transport transport,
				       struct rpmemctl_replica **out)
{
	client_api_begin();
	return client_api_end(replica_open(path, target, transport, out),
			      "opening a replica");
}

/* rpmemctl_replica_open_err -- the same, the reason of a failure in errbuf */
RPMEM_EXPORT int rpmemctl_replica_open_err(const char *path,
					   const char *target,
					   enum rpmemctl_transport transport,
					   struct rpmemctl_replica **out,
					   char *errbuf, size_t errlen)
{
	int ret = rpmemctl_replica_open(path, target, transport, out);
	client_copy_err(ret, errbuf, errlen);
	return ret;
}

/* rpmemctl_replica_errmsg -- why the last call on the replica failed */
RPMEM_EXPORT const char *
rpmemctl_replica_errmsg(const struct rpmemctl_replica *r)
{
	return r ? r->errmsg : "no replica";
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
	client_api_begin();
	if (!r || !addr) {
		client_set_last(-EINVAL, "replica persist: invalid argument");
		return -EINVAL;
	}
	r->errmsg[0] = '\0';
	const uint8_t *p = addr;
	if (p < r->addr || (size_t)(p - r->addr) > r->size ||
	    len > r->size - (size_t)(p - r->addr)) {
		rerr(r, -EINVAL, "persist range %p+%zu is outside the "
		     "mapping of replica %s", addr, len, r->name);
		client_set_last(-EINVAL, "%s", r->errmsg);
		return -EINVAL;
	}
	if (len == 0)
		return 0;
	/* marked before the data can be persistent locally */
	int ret = rpmemctl_dirtylog_mark(r->log, (uint64_t)(p - r->addr), len);
	if (ret) {
		rerr(r, ret, "replica %s: cannot mark the dirty log: %s",
		     r->name, strerror(-ret));
		client_set_last(ret, "%s", r->errmsg);
		return ret;
	}
	r->persist(addr, len);
	if (!r->dirty) {
		ret = rpmemctl_pool_set_state(r->pool, RPMEMCTL_POOL_SYNCING,
					      r->source);
		r->dirty = ret == 0;
	}
	if (!ret)
		ret = rpmemctl_pool_persist(r->pool, addr,
					    (uint64_t)(p - r->addr), len);
	if (ret) {
		rerr(r, ret, "replica %s: %s", r->name,
		     rpmemctl_pool_errmsg(r->pool));
		client_set_last(ret, "%s", r->errmsg);
	}
	return ret;
}

/*
 * rpmemctl_replica_close -- mark the replica consistent if it was changed
 * since the open (every persist is flushed already) and release it
 */
RPMEM_EXPORT int rpmemctl_replica_close(struct rpmemctl_replica **rp)
{
	client_api_begin();
	if (!rp || !*rp)
		return 0;
	struct rpmemctl_replica *r = *rp;
	int ret = 0;
	if (r->dirty)
		ret = rpmemctl_pool_set_state(r->pool,
					      RPMEMCTL_POOL_CONSISTENT,
					      r->source);
	if (ret)
		rerr(r, ret, "replica %s: %s", r->name,
		     rpmemctl_pool_errmsg(r->pool));
	else if (r->dirty && r->pool)
		/* every persist reached both copies: the log is void */
		(void)client_dirtylog_reset(r->log, r->pool->uuid,
					    r->pool->generation);
	int ret2 = rpmemctl_pool_close(&r->pool);
	if (ret2 && !ret) {
		ret = ret2;
		rerr(r, ret, "closing replica %s: %s", r->name,
		     rpmemctl_session_errmsg(r->sess));
	}
	/* release() makes library calls of its own: keep the reason first */
	char msg[CLIENT_ERRMSG_MAX];
	rpmem_strlcpy(msg, r->errmsg, sizeof(msg));
	release(r);
	*rp = NULL;
	if (ret)
		client_set_last(ret, "%s", msg);
	return ret;
}
