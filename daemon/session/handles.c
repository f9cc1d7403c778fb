/* SPDX-License-Identifier: BSD-3-Clause */
/* handles.c -- the pools a session has open, by handle */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "events.h"
#include "log.h"
#include "rdma.h"
#include "session_int.h"
#include "versions.h"
#include "store.h"

/* handle_get -- the open pool behind handle id, or NULL */
struct rpmemd_handle *handle_get(struct rpmemd_session *s, uint32_t id)
{
	if (id == 0)
		return NULL;
	for (unsigned i = 0; i < RPMEMD_MAX_HANDLES; i++)
		if (s->h[i].id == id)
			return &s->h[i];
	return NULL;
}

/* handle_free_slot -- a free slot of the table, or NULL if all are taken */
struct rpmemd_handle *handle_free_slot(struct rpmemd_session *s)
{
	for (unsigned i = 0; i < RPMEMD_MAX_HANDLES; i++)
		if (!s->h[i].id)
			return &s->h[i];
	return NULL;
}

/*
 * handle_issue -- give the slot h, its pool open, the session's next id.
 * Ids are never 0 (a free slot) and never one still open: past 2^32 opens
 * the counter wraps and skips the ids of pools held since (a closed id
 * may then come back, the one reuse a 32-bit id allows)
 */
uint32_t handle_issue(struct rpmemd_session *s, struct rpmemd_handle *h)
{
	uint32_t id;

	do {
		id = s->next_handle++;
		if (s->next_handle == 0)
			s->next_handle = 1;
	} while (handle_get(s, id));
	/* under the lock: rpmemd_sessions_kick_readers reads the table */
	pthread_mutex_lock(&s->set->lock);
	h->id = id;
	pthread_mutex_unlock(&s->set->lock);
	return id;
}

/* handle_update_cur -- show the most recently opened pool in STATUS */
void handle_update_cur(struct rpmemd_session *s)
{
	struct rpmemd_handle *best = NULL;
	for (unsigned i = 0; i < RPMEMD_MAX_HANDLES; i++)
		if (s->h[i].id && (!best || s->h[i].id > best->id))
			best = &s->h[i];
	pthread_mutex_lock(&s->set->lock);
	if (best) {
		snprintf(s->cur_pool, sizeof(s->cur_pool), "%s/%s",
			 rpmemd_pool_region(best->pool)->cfg.name,
			 rpmemd_pool_name(best->pool));
		s->cur_mode = best->mode;
		s->cur_xport = best->xport;
	} else {
		s->cur_pool[0] = '\0';
		s->cur_mode = RPMEM_OPEN_RO;
		s->cur_xport = RPMEM_XPORT_TCP;
	}
	pthread_mutex_unlock(&s->set->lock);
}

/*
 * handle_close -- close one open pool of the session: the RDMA exposure
 * (disconnect, deregister) goes before the mapping
 */
void handle_close(struct rpmemd_session *s, struct rpmemd_handle *h)
{
	struct rpmemd_pool *p = h->pool;
	int rdma_writer = h->expo && h->mode == RPMEM_OPEN_RW;
	unexpose_pool(h);
	/* its RDMA writes are over: the hash cache is on again, all invalid */
	if (rdma_writer) {
		rpmemd_hcache_rdma_end(rpmemd_pool_hcache(p));
		rpmemd_pool_rdma_writer(p, -1);
	}
	if (h->xfer == 2)
		rpmemd_ev_transfer(s, h, RPMEM_EV_DESTROY,
				   "aborted: the pool was closed before it was consistent");
	INFO("session %u: closed pool %s/%s (%s, %s)", s->id,
	     rpmemd_pool_region(p)->cfg.name, rpmemd_pool_name(p),
	     h->mode == RPMEM_OPEN_RW ? "rw" : "ro",
	     h->xport == RPMEM_XPORT_RDMA ? "rdma" : "tcp");
	rpmemd_vchain_close(&h->vc);
	pthread_mutex_lock(&s->set->lock);
	h->id = 0; /* rpmemd_sessions_kick_readers looks no further */
	pthread_mutex_unlock(&s->set->lock);
	rpmemd_pool_close(&h->pool, h->mode, s->id);
	memset(h, 0, sizeof(*h));
}

/* handle_close_all -- the session ends: close every pool it has open */
void handle_close_all(struct rpmemd_session *s)
{
	for (unsigned i = 0; i < RPMEMD_MAX_HANDLES; i++)
		if (s->h[i].id)
			handle_close(s, &s->h[i]);
}
