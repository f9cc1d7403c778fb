/* SPDX-License-Identifier: BSD-3-Clause */
/* hash_pipeline.c -- keep several HASH or HASHV requests of a pool in flight */
#include <errno.h>

#include "client.h"

/*
 * client_hash_pipeline -- see client.h: up to window requests in flight,
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
