/* SPDX-License-Identifier: BSD-3-Clause */
/* replica.c -- a local pool file mapped with libpmem2 and its remote replica */
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <libpmem2.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client_replicate.h"
#include "util.h"

/*
 * A replica owns everything it opens: the file descriptor, the libpmem2
 * config, source and mapping, a dirty log per target and the set of
 * links (links.c, one per target) that keeps the remote pools up to date
 * with the mapping: one target under the fail-stop policy; n targets
 * (rpmemctl_replica_open_targets) each under the degrade policy,
 * retried every REPLICA_RETRY_MS, the set fail-stop below k. All of it is released by rpmemctl_replica_close. The message of
 * a failed call is kept in the replica (rpmemctl_replica_errmsg) and, for
 * the call just made, in the calling thread (rpmemctl_strerror, and the
 * errbuf of rpmemctl_replica_open_err when there is no replica yet).
 *
 * States are the link's: the open's push leaves the pool consistent
 * (SYNCED); the first persist marks it syncing (LIVE: the application is
 * changing it, so a crash leaves it marked); close pushes what the
 * persists marked (only the extents of the dirty log, which compare
 * equal unless the mapping was written without a persist) and leaves it
 * consistent (generation + 1).
 *
 * The dirty log PATH.rpmemlog (target i > 0: PATH.rpmemlog.i; each is
 * bound to its pool's uuid and generation, so targets given in another
 * order cost a full compare, never a wrong sync) records the extents
 * every persist covers,
 * before their local persist: after a persist that reached only the
 * local file (the target gone, or a crash in between), the next open (or
 * `rpmemctl sync`) sends only those extents. A push that leaves the two
 * copies equal clears it. Its clean mark stays set: a mark is persistent
 * before its persist, so a crash keeps it true.
 */
#define REPLICA_TARGETS_MAX 16
#define REPLICA_RETRY_MS 5000 /* n targets: a degraded one's reconnects */

struct rpmemctl_replica {
	int fd;
	struct pmem2_config *cfg;
	struct pmem2_source *src;
	struct pmem2_map *map;
	pmem2_persist_fn persist;
	uint8_t *addr;
	size_t size;
	struct rpmemctl_links *set;
	unsigned n;			     /* targets */
	struct rpmemctl_dirtylog *log[REPLICA_TARGETS_MAX]; /* one each */
	char name[2 * RPMEM_NAME_MAX + 2]; /* "region/pool" for messages */
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
	client_vmsg(r->errmsg, sizeof(r->errmsg), fmt, ap);
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

/* release -- everything the replica holds, in reverse order of opening */
static void release(struct rpmemctl_replica *r)
{
	rpmemctl_links_delete(&r->set);
	for (unsigned i = 0; i < r->n; i++)
		rpmemctl_dirtylog_close(&r->log[i]);
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
 * add_link -- a link to target with the last log opened, into the set;
 * degrade: one of several targets (the set is fail-stop below k)
 */
static int add_link(struct rpmemctl_replica *r, const char *target,
		    enum rpmemctl_transport transport, const char *path,
		    const char *source, const char *live, int degrade)
{
	struct rpmemctl_link *l = NULL;
	int ret = rpmemctl_link_new(target, transport, &l);
	if (!ret)
		ret = rpmemctl_link_set_data(l, r->addr, r->size);
	if (!ret)
		ret = rpmemctl_link_set_history(l, path);
	if (!ret)
		ret = rpmemctl_link_set_dirty_log(l, r->log[r->n - 1]);
	if (!ret)
		ret = rpmemctl_link_set_source(l, source, live);
	if (!ret && degrade)
		ret = rpmemctl_link_set_policy(l, RPMEMCTL_LINK_DEGRADE,
					       REPLICA_RETRY_MS);
	if (!ret)
		ret = rpmemctl_links_add(r->set, l);
	if (ret) {
		rpmemctl_link_delete(&l);
		return rerr(r, ret, "%s", rpmemctl_strerror(ret));
	}
	return 0;
}

/* set_status_file -- the set publishes to PATH.rpmemstat */
static int set_status_file(struct rpmemctl_links *set, const char *path)
{
	char spath[PATH_MAX];
	if (snprintf(spath, sizeof(spath), "%s.rpmemstat", path) >=
	    (int)sizeof(spath))
		return -ENAMETOOLONG;
	return rpmemctl_links_set_status_file(set, spath);
}

/* open_log -- PATH.rpmemlog for target 0, PATH.rpmemlog.i for target i */
static int open_log(struct rpmemctl_replica *r, const char *path)
{
	char lpath[RPMEM_STR_MAX + 32];
	unsigned i = r->n;
	if (i)
		snprintf(lpath, sizeof(lpath), "%s.rpmemlog.%u", path, i);
	else
		snprintf(lpath, sizeof(lpath), "%s.rpmemlog", path);
	/* one it may not trust or use is replaced: a full sync */
	int ret = rpmemctl_dirtylog_open_pool(lpath, r->fd, r->size, 0,
					      RPMEMCTL_DIRTYLOG_REPLACE,
					      &r->log[i]);
	if (ret)
		return rerr(r, ret, "%s", rpmemctl_strerror(ret));
	r->n++;
	return 0;
}

/* start -- a link to each target over transport, k of them pushed */
static int start(struct rpmemctl_replica *r, const char *const *targets,
		 unsigned n, enum rpmemctl_transport transport,
		 const char *path)
{
	char source[RPMEM_STR_MAX + 1], live[RPMEM_STR_MAX + 1];
	char host[HOST_NAME_MAX + 1] = "";
	gethostname(host, sizeof(host) - 1);
	snprintf(source, sizeof(source), "%s:%s", host, path);
	/* live, as the preload library's: the target keeps no undo */
	snprintf(live, sizeof(live), "%.*s (live)",
		 (int)sizeof(live) - 8, source);
	int ret = 0;
	for (unsigned i = 0; i < n && !ret; i++) {
		ret = open_log(r, path);
		if (!ret)
			ret = add_link(r, targets[i], transport, path, source,
				       live, n > 1);
	}
	if (ret)
		return ret;
	ret = rpmemctl_links_push(r->set);
	if (ret)
		return rerr(r, ret, "initial sync of replica %s failed: %s",
			    r->name, rpmemctl_links_errmsg(r->set));
	return 0;
}

/* check_targets -- every target names a pool; the first's names r */
static int check_targets(const char *const *targets, unsigned n,
			 unsigned k, char *name, size_t len)
{
	struct rpmem_target t;
	char err[RPMEM_MSG_MAX];
	if (n == 0 || n > REPLICA_TARGETS_MAX || k > n) {
		client_set_last(-EINVAL, "a replica takes 1 to %d targets "
				"and k <= n (%u of %u given)",
				REPLICA_TARGETS_MAX, k, n);
		return -EINVAL;
	}
	for (unsigned i = n; i-- > 0;) {
		if (!targets[i] ||
		    rpmem_parse_target(targets[i], RPMEM_TARGET_NEED_POOL, &t,
				       err, sizeof(err))) {
			client_set_last(-EINVAL, "target %u: %s", i + 1,
					targets[i] ? err : "missing");
			return -EINVAL;
		}
	}
	snprintf(name, len, "%s/%s", t.region, t.pool);
	return 0;
}

/*
 * replica_open -- map path, open (or create) the remote pool at every
 * target and bring k of them up to date with one push each
 */
static int replica_open(const char *path, const char *const *targets,
			unsigned n, unsigned k,
			enum rpmemctl_transport transport,
			struct rpmemctl_replica **out)
{
	if (!path || !targets || !out) {
		client_set_last(-EINVAL, "invalid argument");
		return -EINVAL;
	}
	char msg[CLIENT_ERRMSG_MAX];
	char name[2 * RPMEM_NAME_MAX + 2];
	int ret = check_targets(targets, n, k, name, sizeof(name));
	if (ret)
		return ret;
	struct rpmemctl_replica *r = calloc(1, sizeof(*r));
	if (!r) {
		client_set_last(-ENOMEM, "out of memory");
		return -ENOMEM;
	}
	r->fd = -1;
	rpmem_strlcpy(r->name, name, sizeof(r->name));
	ret = map_local(r, path);
	if (!ret)
		ret = rpmemctl_links_new(k, RPMEMCTL_LINK_FAIL_STOP, &r->set);
	if (!ret)
		ret = set_status_file(r->set, path);
	if (!ret)
		ret = start(r, targets, n, transport, path);
	if (ret)
		goto err_release;
	*out = r;
	return 0;

err_release:
	/* release() makes library calls of its own: keep the reason first */
	rpmem_strlcpy(msg, r->errmsg[0] ? r->errmsg : rpmemctl_strerror(ret),
		      sizeof(msg));
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
	return client_api_end(replica_open(path, &target, 1, 0, transport,
					   out), "opening a replica");
}

/* rpmemctl_replica_open_targets -- a replica over n targets, k of n */
RPMEM_EXPORT int rpmemctl_replica_open_targets(
	const char *path, const char *const *targets, unsigned n, unsigned k,
	enum rpmemctl_transport transport, struct rpmemctl_replica **out)
{
	client_api_begin();
	return client_api_end(replica_open(path, targets, n, k, transport,
					   out), "opening a replica");
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

/* rpmemctl_replica_get_links -- the set, for each target's getters */
RPMEM_EXPORT const struct rpmemctl_links *
rpmemctl_replica_get_links(const struct rpmemctl_replica *r)
{
	return r ? r->set : NULL;
}

/* rpmemctl_replica_set_spin -- rpmemctl_links_set_spin of its set */
RPMEM_EXPORT int rpmemctl_replica_set_spin(struct rpmemctl_replica *r,
					   unsigned us)
{
	return rpmemctl_links_set_spin(r ? r->set : NULL, us);
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
	uint64_t off = (uint64_t)(p - r->addr);
	int ret = rpmemctl_links_mark(r->set, off, len);
	if (!ret) {
		r->persist(addr, len);
		ret = rpmemctl_links_write(r->set, off, len);
	}
	if (!ret)
		ret = rpmemctl_links_drain(r->set);
	if (ret) {
		rerr(r, ret, "replica %s: %s", r->name,
		     rpmemctl_links_errmsg(r->set));
		client_set_last(ret, "%s", r->errmsg);
	}
	return ret;
}

/*
 * rpmemctl_replica_close -- stop the link (a push of what the persists
 * marked, the pool consistent) and release everything
 */
RPMEM_EXPORT int rpmemctl_replica_close(struct rpmemctl_replica **rp)
{
	client_api_begin();
	if (!rp || !*rp)
		return 0;
	struct rpmemctl_replica *r = *rp;
	int ret = rpmemctl_links_stop(r->set);
	if (ret)
		rerr(r, ret, "closing replica %s: %s", r->name,
		     rpmemctl_links_errmsg(r->set));
	/* release() makes library calls of its own: keep the reason first */
	char msg[CLIENT_ERRMSG_MAX];
	rpmem_strlcpy(msg, r->errmsg, sizeof(msg));
	release(r);
	*rp = NULL;
	if (ret)
		client_set_last(ret, "%s", msg);
	return ret;
}
