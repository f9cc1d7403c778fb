/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * client_pool.h -- the pool layer of librpmemctl (lib/client/pool/): a
 * remote pool opened on a session, its data planes (the TCP one here,
 * RDMA in lib/rdma), its I/O, hashes, scrub and the target's listings.
 * It sees session/ and base/ below it.
 */
#ifndef RPMEM_CLIENT_POOL_H
#define RPMEM_CLIENT_POOL_H

#include <stddef.h>
#include <stdint.h>

#include "client_session.h"
#include "xport.h"

/*
 * struct rpmemctl_pool -- one open remote pool. It does not own its
 * session; closing the session first detaches it (sess = NULL) and every
 * later call except rpmemctl_pool_close fails with -ENOTCONN.
 */
struct rpmemctl_pool {
	struct rpmemctl_session *sess;
	struct client_close_hook closing; /* on its session's list */
	uint32_t handle;
	unsigned flags; /* RPMEMCTL_OPEN_* */
	char region[RPMEM_NAME_MAX + 1];
	char name[RPMEM_NAME_MAX + 1];
	uint64_t size;
	uint8_t state;
	uint64_t generation;
	uint8_t uuid[16];
	struct rpmem_xport *xport; /* owned; released by ops->close */
	int xport_broken; /* a data-plane call timed out or was reset */
	uint32_t hash_flags; /* RPMEM_HASH_* of HASH requests (a sync's) */
	char errmsg[CLIENT_ERRMSG_MAX]; /* why the last call failed, or "" */
	/* the target's notes to SET_STATE since a sync began, a line each */
	char note[RPMEM_MSG_MAX + 1];
};

/* --- pool_err.c: a call on a pool -------------------------------------- */

/*
 * client_pool_seterr -- set the message of p's session to one that says
 * which pool and what failed (printf style): a failure of the pool call
 * under way reports it as it is, without naming the pool again
 */
void client_pool_seterr(struct rpmemctl_pool *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/*
 * client_pool_begin / client_pool_end -- bracket a call on pool p: a
 * failure's message names the pool and is kept in the pool, its session
 * and the thread
 */
void client_pool_begin(struct rpmemctl_pool *p);
int client_pool_end(struct rpmemctl_pool *p, int ret, const char *what);

/* --- pool.c ------------------------------------------------------------- */

/*
 * client_pool_write_ranges -- rpmemctl_pool_write of n ranges whose data
 * is at their src, or at base + off (the local copy), short ones gathered
 * into one send where the transport can (TCP); reusable on return
 */
int client_pool_write_ranges(struct rpmemctl_pool *pool, const void *base,
			     const struct rpmem_xrange *r, size_t n);

/*
 * client_send_set_state -- SET_STATE with flags (RPMEM_SET_STATE_*); a
 * target with RPMEM_CAP_STATE says the resulting state and generation
 * (STATE), an older one only OK: then the generation is the one it
 * increments on consistent
 */
int client_send_set_state(struct rpmemctl_pool *pool, uint8_t state,
			  const char *source, uint32_t flags, uint64_t change);

/*
 * client_pool_set_syncing -- rpmemctl_pool_set_state(syncing) telling a
 * target with RPMEM_CAP_SYNC_SIZE that the sync will write change bytes,
 * so that it refuses up front a sync its journal cannot hold
 */
int client_pool_set_syncing(struct rpmemctl_pool *pool, const char *source,
			    uint64_t change);

/*
 * client_pool_splits_flush -- the pool's data plane posts a flush and
 * collects it apart (client_pool_flush_post, _collect, _wait_fd); 0 once
 * it broke (timed out, reset): a flush then waits
 */
int client_pool_splits_flush(const struct rpmemctl_pool *pool);
/*
 * client_pool_flush_serial -- it does, one posted flush at a time (a
 * later post waits for the earlier flush's end)
 */
int client_pool_flush_serial(const struct rpmemctl_pool *pool);
/*
 * client_pool_flush_post -- a flush posted; *tok for
 * client_pool_flush_collect
 */
int client_pool_flush_post(struct rpmemctl_pool *pool, uint64_t offset,
			   uint64_t len, uint64_t *tok);
/*
 * client_pool_flush_collect -- 1 once tok's flush completed and the ones
 * posted before it (wait: blocks until they did; else 1 also where the
 * news can be read without waiting for the target), 0 if not yet, or
 * -errno (the session's message set)
 */
int client_pool_flush_collect(struct rpmemctl_pool *pool, uint64_t tok,
			      int wait);
/* client_pool_wait_fd -- readable when a collect may have news; -1 none */
int client_pool_wait_fd(struct rpmemctl_pool *pool);
/*
 * client_pool_wait_edge -- the wait_fd's news may be taken by another
 * waiter (a completion channel): poll it briefly and look again
 */
int client_pool_wait_edge(const struct rpmemctl_pool *pool);
/* client_pool_usable -- the pool's session is open and connected */
int client_pool_usable(struct rpmemctl_pool *p);

/*
 * client_hash_send / client_hash_recv -- one HASH request (count <=
 * RPMEM_MAX_HASHES) and its reply, split so that several can be in
 * flight; replies arrive in request order. flags: RPMEM_HASH_TREE (only
 * to a target with RPMEM_CAP_HASH_TREE, else -EOPNOTSUPP), added to the
 * pool's hash_flags.
 */
int client_hash_send(struct rpmemctl_pool *p, uint64_t off, uint32_t bs,
		     uint32_t count, uint32_t flags, uint32_t *id);
int client_hash_recv(struct rpmemctl_pool *p, uint32_t id, uint32_t count,
		     uint64_t *hashes);

/*
 * client_hashv_send -- one HASHV request for the blocks of n ranges (1 ..
 * RPMEM_MAX_HASHV_RANGES, RPMEM_MAX_HASHES blocks in all; the target must
 * advertise RPMEM_CAP_HASHV); client_hash_recv takes its reply, the hashes
 * of all ranges in order
 */
int client_hashv_send(struct rpmemctl_pool *p, uint32_t bs,
		      const struct rpmem_hash_range *rv, uint32_t n,
		      uint32_t *id);

/*
 * client_pool_live_copy -- p (by the target's listing) is a live copy
 * whose writer is gone: syncing with a live writer's source, held by no
 * writer (1, its source into src); -EBUSY while a writer holds it (its
 * name into src); 0 for any other pool; -errno of the listing
 */
int client_pool_live_copy(struct rpmemctl_pool *p, char *src, size_t len);

/*
 * client_read_check -- before a read of [off, off + len) through a data
 * plane that bypasses rpmemd (RDMA; every transport with RPMEM_READ_SCRUB=1
 * in the environment), a SCRUB of the pieces it covers: 0 to read them
 * (intact, unverifiable, or damaged and taken as it is, the session's
 * callback told), -EILSEQ naming the damaged ranges, or -errno
 */
int client_read_check(struct rpmemctl_pool *p, uint64_t off, uint64_t len);

/* --- hash_pipeline.c ----------------------------------------------------- */

/* most requests client_hash_pipeline keeps in flight */
#define CLIENT_HASH_WINDOW_MAX 32

/* one HASH (nr == 1) or HASHV (several ranges) request of a pipeline */
struct client_hreq {
	struct rpmem_hash_range *rv; /* nr ranges */
	uint32_t nr;
	uint32_t bs;
	uint32_t count; /* blocks in all ranges */
	uint32_t flags; /* RPMEM_HASH_* of this HASH request (TREE) */
	uint64_t *dst;	/* where its count hashes go */
	uint32_t id;
	struct rpmem_hash_range one; /* rv of a single-range request */
};

/*
 * what a pipeline asks for: next() fills the request for a ring slot
 * (returns 0 when there are no more), sent() (may be NULL) works on it
 * while the target does, done() (may be NULL) consumes each answer in
 * request order and may fail (-errno)
 */
struct client_hash_ops {
	int (*next)(void *arg, struct client_hreq *r, unsigned slot);
	void (*sent)(void *arg, struct client_hreq *r, unsigned slot);
	int (*done)(void *arg, struct client_hreq *r, unsigned slot);
};

/*
 * client_hash_pipeline -- keep up to window (<= CLIENT_HASH_WINDOW_MAX)
 * HASH or HASHV requests of pool p in flight; adds the hash bytes
 * received to *hash_bytes (may be NULL). After a failed request no new
 * one is sent and the rest are drained, so the stream stays in step; the
 * first error is returned.
 */
int client_hash_pipeline(struct rpmemctl_pool *p, unsigned window,
			 const struct client_hash_ops *ops, void *arg,
			 uint64_t *hash_bytes);

/* --- xport_open.c -------------------------------------------------------- */

/*
 * client_xport_wanted -- the data plane an OPEN asks for, from the
 * session; fallback: an AUTO open got RDMA that cannot be used here
 */
uint8_t client_xport_wanted(struct rpmemctl_session *s, int fallback);
/*
 * client_xport_open -- bring up the data plane the target chose (ok);
 * -EAGAIN when an AUTO open got RDMA that cannot be used here: the caller
 * closes the handle and opens again (client_xport_wanted's fallback)
 */
int client_xport_open(struct rpmemctl_session *s, const char *region,
		      const char *pool, uint8_t wanted,
		      const struct rpmem_msg_open_ok *ok,
		      struct rpmem_xport **x);

/* --- tcp_initiator.c ---------------------------------------------------- */

/*
 * rpmem_tcp_client_new -- the TCP data plane for pool handle `handle` on
 * the session's control socket; fills *out (freed by ops->close)
 */
int rpmem_tcp_client_new(struct rpmemctl_session *s, uint32_t handle,
			 uint64_t pool_size, struct rpmem_xport **out);

#endif
