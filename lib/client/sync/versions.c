/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * versions.c -- a pool's point-in-time versions on the target: list,
 * prune, cut (of a live pool), read (rpmemctl_pool_versions,
 * _version_prune, _version_create, _read_at)
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "client_sync.h"
#include "hash.h"
#include "retain.h"
#include "util.h"

/* versions_usable -- the pool is open and its target keeps versions */
static int versions_usable(struct rpmemctl_pool *p)
{
	int ret = client_pool_usable(p);
	if (ret)
		return ret;
	if (p->sess->caps & RPMEM_CAP_VERSIONS)
		return 0;
	client_seterr(p->sess, "%s:%s (%s) keeps no versions: it is older than this client",
		      p->sess->host, p->sess->port, p->sess->server);
	return -ENOTSUP;
}

/* versions_call -- a VERSIONS request of op; its reply type */
static int versions_call(struct rpmemctl_pool *p, uint8_t op, uint64_t gen,
			 uint16_t reply, size_t *rlen)
{
	struct rpmem_msg_versions m = { p->handle, op, gen };
	uint8_t buf[RPMEM_REQ_SMALL];
	int len = rpmem_versions_encode(buf, sizeof(buf), &m);

	return len < 0 ? len :
			 client_call(p->sess, RPMEM_MSG_VERSIONS, buf,
				     (size_t)len, reply, rlen);
}

/* pool_versions -- the list, oldest first (check: every record read) */
static int pool_versions(struct rpmemctl_pool *p,
			 struct rpmemctl_version **out, size_t *n, int check)
{
	struct rpmem_version_entry *e = calloc(RPMEM_MAX_VERSIONS, sizeof(*e));
	struct rpmem_msg_versions_reply rep = { 0, e };
	struct rpmemctl_version *v;
	size_t rlen;
	int ret = e ? versions_usable(p) : -ENOMEM;

	if (!ret && check && !(p->sess->caps & RPMEM_CAP_REPAIR_AT)) {
		client_seterr(p->sess, "%s:%s (%s) cannot check its versions' records: it is older than this client",
			      p->sess->host, p->sess->port, p->sess->server);
		ret = -ENOTSUP;
	}
	if (!ret)
		ret = versions_call(p, RPMEM_VERSIONS_LIST,
				    RPMEM_VERSIONS_LIST_FLAGS |
					    (check ? RPMEM_VERSIONS_LIST_CHECK :
						     0),
				    RPMEM_MSG_VERSIONS_REPLY, &rlen);
	if (!ret && rpmem_versions_reply_decode(p->sess->rbuf, rlen, &rep))
		ret = client_bad_reply(p->sess, RPMEM_MSG_VERSIONS_REPLY);
	if (!ret && !(v = calloc(rep.count + 1, sizeof(*v))))
		ret = -ENOMEM;
	if (ret) {
		free(e);
		return ret;
	}
	for (uint32_t i = 0; i < rep.count; i++) {
		v[i] = (struct rpmemctl_version){
			.generation = e[i].generation, .time = e[i].time,
			.committed = e[i].committed, .size = e[i].size,
			.bytes = e[i].bytes, .hash = e[i].hash,
			.flags = (e[i].flags & RPMEM_VERSION_DAMAGED ?
					  RPMEMCTL_VERSION_DAMAGED : 0) |
				 (e[i].flags & RPMEM_VERSION_BAD_DATA ?
					  RPMEMCTL_VERSION_BAD_DATA : 0)
		};
		rpmem_strlcpy(v[i].source, e[i].source, sizeof(v[i].source));
	}
	free(e);
	*out = v;
	*n = rep.count;
	return 0;
}

RPMEM_EXPORT int rpmemctl_pool_versions(struct rpmemctl_pool *pool,
					struct rpmemctl_version **out,
					size_t *n)
{
	client_pool_begin(pool);
	return client_pool_end(pool, pool_versions(pool, out, n, 0),
			       "list versions");
}

RPMEM_EXPORT int rpmemctl_pool_versions_check(struct rpmemctl_pool *pool,
					      struct rpmemctl_version **out,
					      size_t *n)
{
	client_pool_begin(pool);
	return client_pool_end(pool, pool_versions(pool, out, n, 1),
			       "check versions");
}

/* version_prune -- prune one version */
static int version_prune(struct rpmemctl_pool *p, uint64_t version)
{
	int ret = versions_usable(p);
	return ret ? ret :
		     versions_call(p, RPMEM_VERSIONS_PRUNE, version,
				   RPMEM_MSG_OK, NULL);
}

RPMEM_EXPORT int rpmemctl_pool_version_prune(struct rpmemctl_pool *pool,
					     uint64_t version)
{
	client_pool_begin(pool);
	return client_pool_end(pool, version_prune(pool, version),
			       "prune a version");
}

/* version_create -- cut a version of the live pool; its generation */
static int version_create(struct rpmemctl_pool *p, uint64_t *generation)
{
	struct rpmem_msg_state st;
	size_t rlen;
	int ret = versions_usable(p);

	if (!ret)
		ret = versions_call(p, RPMEM_VERSIONS_CREATE, 0,
				    RPMEM_MSG_STATE, &rlen);
	if (!ret && rpmem_state_decode(p->sess->rbuf, rlen, &st))
		ret = client_bad_reply(p->sess, RPMEM_MSG_STATE);
	if (!ret)
		p->generation = st.generation;
	if (!ret && generation)
		*generation = st.generation;
	return ret;
}

RPMEM_EXPORT int rpmemctl_pool_version_create(struct rpmemctl_pool *pool,
					      uint64_t *generation)
{
	client_pool_begin(pool);
	return client_pool_end(pool, version_create(pool, generation),
			       "cut a version");
}

/* read_at -- one READ_AT of at most RPMEM_MAX_IO bytes into dst */
static int read_at(struct rpmemctl_pool *p, uint64_t version, uint8_t *dst,
		   uint64_t off, uint32_t n)
{
	struct rpmem_msg_read_at m = { p->handle, off, n, version, 0 };
	uint8_t buf[RPMEM_REQ_SMALL];
	size_t rlen;
	int len = rpmem_read_at_encode(buf, sizeof(buf), &m);
	int ret = len < 0 ? len :
			    client_call(p->sess, RPMEM_MSG_READ_AT, buf,
					(size_t)len, RPMEM_MSG_DATA, &rlen);

	/* refused as damaged: again, asking for it, if the session takes it */
	if (ret && client_read_damaged(p->sess, ret)) {
		m.flags = RPMEM_READ_DAMAGED;
		len = rpmem_read_at_encode(buf, sizeof(buf), &m);
		ret = len < 0 ? len :
				client_call(p->sess, RPMEM_MSG_READ_AT, buf,
					    (size_t)len, RPMEM_MSG_DATA, &rlen);
	}
	if (ret)
		return ret;
	if (rlen != n)
		return client_bad_reply(p->sess, RPMEM_MSG_DATA);
	memcpy(dst, p->sess->rbuf, n);
	return 0;
}

/* pool_read_at -- len bytes of version's image at offset into dst */
static int pool_read_at(struct rpmemctl_pool *p, uint64_t version,
			void *dst, uint64_t offset, size_t len)
{
	int ret = versions_usable(p);

	if (!ret && (offset > p->size || len > p->size - offset)) {
		client_seterr(p->sess, "a read of %zu bytes at offset %llu is outside the pool (%llu bytes)",
			      len, (unsigned long long)offset,
			      (unsigned long long)p->size);
		ret = -EINVAL;
	}
	for (size_t done = 0; !ret && done < len;) {
		uint32_t n = len - done < RPMEM_MAX_IO ? (uint32_t)(len - done) :
							 RPMEM_MAX_IO;
		ret = read_at(p, version, (uint8_t *)dst + done, offset + done,
			      n);
		done += n;
	}
	return ret;
}

RPMEM_EXPORT int rpmemctl_pool_read_at(struct rpmemctl_pool *pool,
				       uint64_t version, void *dst,
				       uint64_t offset, size_t len)
{
	client_pool_begin(pool);
	return client_pool_end(pool,
			       pool_read_at(pool, version, dst, offset, len),
			       "read a version");
}

RPMEM_EXPORT int rpmemctl_versions_keep(const char *policy,
					const struct rpmemctl_version *v,
					size_t n, uint8_t *keep, char *err,
					size_t errlen)
{
	struct rpmem_keep k;
	uint64_t *t;
	int ret = rpmem_keep_parse(policy, &k, err, errlen);

	if (ret || !n)
		return ret;
	if (!(t = calloc(n, sizeof(*t))))
		return -ENOMEM;
	/* the policy takes them newest first */
	for (size_t i = 0; i < n; i++)
		t[i] = v[n - 1 - i].time;
	rpmem_keep_apply(&k, t, n, keep);
	for (size_t i = 0; i < n / 2; i++) {
		uint8_t x = keep[i];
		keep[i] = keep[n - 1 - i];
		keep[n - 1 - i] = x;
	}
	free(t);
	return 0;
}

/* the image hash of a stream of pieces */
struct rpmemctl_image_hash {
	XXH3_state_t *st;
};

RPMEM_EXPORT int rpmemctl_image_hash_new(struct rpmemctl_image_hash **out)
{
	struct rpmemctl_image_hash *h = calloc(1, sizeof(*h));

	if (!h || !(h->st = XXH3_createState()) ||
	    XXH3_64bits_reset(h->st) != XXH_OK) {
		if (h)
			XXH3_freeState(h->st);
		free(h);
		return -ENOMEM;
	}
	*out = h;
	return 0;
}

RPMEM_EXPORT void rpmemctl_image_hash_update(struct rpmemctl_image_hash *h,
					     const void *buf, size_t len)
{
	const uint8_t *p = buf;

	for (size_t o = 0; o < len; o += RPMEM_HASH_PIECE) {
		size_t n = len - o < RPMEM_HASH_PIECE ? len - o :
							RPMEM_HASH_PIECE;
		uint64_t v = rpmem_hash_block(p + o, n);
		uint8_t le[sizeof(uint64_t)];
		for (int b = 0; b < 8; b++)
			le[b] = (uint8_t)(v >> (8 * b));
		XXH3_64bits_update(h->st, le, sizeof(le));
	}
}

RPMEM_EXPORT uint64_t
rpmemctl_image_hash_digest(const struct rpmemctl_image_hash *h)
{
	return XXH3_64bits_digest(h->st);
}

RPMEM_EXPORT void rpmemctl_image_hash_delete(struct rpmemctl_image_hash **hp)
{
	if (!hp || !*hp)
		return;
	XXH3_freeState((*hp)->st);
	free(*hp);
	*hp = NULL;
}
