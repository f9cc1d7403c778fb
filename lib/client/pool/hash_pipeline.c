/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * hash_pipeline.c -- the HASH and HASHV requests of a pool, and a pipeline
 * that keeps several of them in flight
 */
#include <errno.h>
#include <string.h>

#include "client_pool.h"
#include "wire.h"

/*
 * client_hash_pipeline -- see client_pool.h: up to window requests in flight,
 * answers consumed in request order; after a failure no new request is
 * sent and those in flight are drained, so the stream stays in step
 */
int client_hash_pipeline(struct rpmemctl_pool *p, unsigned window,
			 const struct client_hash_ops *ops, void *arg,
			 uint64_t *hash_bytes)
{
	struct client_hreq ring[CLIENT_HASH_WINDOW_MAX];
	unsigned head = 0, nout = 0;
	int more = 1, err = 0, ret;

	if (window == 0 || window > CLIENT_HASH_WINDOW_MAX)
		window = CLIENT_HASH_WINDOW_MAX;
	while (nout || (!err && more)) {
		while (!err && more && nout < window) {
			unsigned slot = (head + nout) % window;
			struct client_hreq *r = &ring[slot];
			*r = (struct client_hreq){ 0 };
			more = ops->next(arg, r, slot);
			if (!more)
				break;
			if (r->nr == 1)
				ret = client_hash_send(p, r->rv[0].offset, r->bs,
						       r->rv[0].count, r->flags,
						       &r->id);
			else
				ret = client_hashv_send(p, r->bs, r->rv, r->nr,
							&r->id);
			if (ret)
				return ret; /* the connection is gone */
			nout++;
			if (ops->sent)
				ops->sent(arg, r, slot);
		}
		if (!nout)
			break;
		unsigned slot = head;
		struct client_hreq *r = &ring[slot];
		head = (head + 1) % window;
		nout--;
		ret = client_hash_recv(p, r->id, r->count, r->dst);
		if (ret && p->sess->lost)
			return ret;
		if (!ret) {
			if (hash_bytes)
				*hash_bytes += 8ull * r->count;
			if (!err && ops->done)
				ret = ops->done(arg, r, slot);
		}
		if (ret && !err)
			err = ret;
	}
	return err;
}

int client_hash_send(struct rpmemctl_pool *p, uint64_t off, uint32_t bs,
		     uint32_t count, uint32_t flags, uint32_t *id)
{
	struct rpmem_msg_hash m = { .handle = p->handle, .offset = off,
				    .block_size = bs, .count = count };
	/* a target without the cap takes no flags (and hashes everything) */
	if (p->sess->caps & RPMEM_CAP_HASH_CACHE)
		m.flags = p->hash_flags;
	/* tree hashes compared with plain ones would all differ */
	if ((flags & RPMEM_HASH_TREE) && !(p->sess->caps & RPMEM_CAP_HASH_TREE))
		return -EOPNOTSUPP;
	m.flags |= flags & RPMEM_HASH_TREE;
	uint8_t buf[RPMEM_REQ_SMALL];
	int len = rpmem_hash_encode(buf, sizeof(buf), &m);
	if (len < 0)
		return len;
	return client_send(p->sess, RPMEM_MSG_HASH, buf, (size_t)len, NULL, 0,
			   id);
}

int client_hashv_send(struct rpmemctl_pool *p, uint32_t bs,
		      const struct rpmem_hash_range *rv, uint32_t n,
		      uint32_t *id)
{
	struct rpmem_msg_hashv m = { .handle = p->handle, .block_size = bs,
				     .nranges = n };
	uint8_t buf[12 + 12 * RPMEM_MAX_HASHV_RANGES];

	if (n == 0 || n > RPMEM_MAX_HASHV_RANGES)
		return -EINVAL;
	memcpy(m.ranges, rv, n * sizeof(*rv));
	int len = rpmem_hashv_encode(buf, sizeof(buf), &m);
	if (len < 0)
		return len;
	return client_send(p->sess, RPMEM_MSG_HASHV, buf, (size_t)len, NULL,
			   0, id);
}

int client_hash_recv(struct rpmemctl_pool *p, uint32_t id, uint32_t count,
		     uint64_t *hashes)
{
	struct rpmemctl_session *s = p->sess;
	size_t rlen;
	int ret = client_recv(s, id, RPMEM_MSG_HASHES, &rlen);
	if (ret)
		return ret;
	struct rpmem_msg_hashes m;
	if (rpmem_hashes_decode(s->rbuf, rlen, &m))
		return client_bad_reply(s, RPMEM_MSG_HASHES);
	if (m.count != count) {
		client_seterr(s, "HASHES reply with %u hashes from %s:%s for "
			      "a request of %u", m.count, s->host, s->port,
			      count);
		return client_lost(s, -EPROTO, "receiving hashes");
	}
	for (uint32_t i = 0; i < count; i++)
		hashes[i] = le64_get(m.hashes + 8 * (size_t)i);
	return 0;
}
