/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * session_int.h -- what the files serving one client session share: the
 * session and handle objects and the calls between the layers.
 *
 * Layers, each calling only those below it (docs/ARCHITECTURE.md):
 *   worker.c     the session thread: handshake, request loop, teardown
 *   handshake.c  HELLO                dispatch.c  one request -> its handler
 *   req_pool.c, req_data.c, req_status.c   the request handlers
 *   handles.c    open pools by handle   expose.c  RDMA exposure of a pool
 *   conn.c       framing and replies    registry.c  the set of sessions
 *   req_admin.c  KICK (an administrator ends another session)
 */
#ifndef RPMEMD_SESSION_INT_H
#define RPMEMD_SESSION_INT_H

#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "net.h"
#include "tls.h"
#include "proto.h"
#include "session.h"

/* the largest request payload apart from WRITE (HELLO is ~520 bytes) */
#define REQ_MAX 4096
_Static_assert(12 + 12 * RPMEM_MAX_HASHV_RANGES <= REQ_MAX,
	       "the largest HASHV request fits the request buffer");
_Static_assert(8 + 16 * RPMEM_MAX_PRESERVE_RANGES <= REQ_MAX,
	       "the largest PRESERVE request fits the request buffer");
#define SMALL_REPLY 2048

struct rpmemd_handle {
	uint32_t id; /* 0 = free slot */
	uint8_t mode;
	uint8_t xport; /* RPMEM_XPORT_TCP or _RDMA */
	struct rpmemd_pool *pool;
	struct rpmemd_session *s;     /* for the RDMA persist callback */
	struct rpmem_rdma_expo *expo; /* the pool exposed over RDMA */
	/* a transfer for the event stream: SET_STATE syncing .. consistent */
	uint8_t xfer;	     /* 0 none, 1 syncing, 2 written to (started) */
	uint64_t xfer_bytes; /* WRITE bytes since syncing */
	/* WRITEs go through the pool file, not its mapping (req_write) */
	uint8_t by_file;
	size_t staged; /* bytes of its DRAM staging copy (expose.c counts) */
	struct rpmemd_vchain *vc; /* the version READ_AT reads, or NULL */
	/* opened for writing on the append right alone (authz.c) */
	uint8_t append;
};

struct rpmemd_session {
	struct rpmemd_sessions *set;
	struct rpmemd_session *next;
	pthread_t thread;
	uint32_t id;
	uint64_t started; /* unix seconds */
	char peer[64];			/* "addr:port" */
	char addr[64];			/* the peer's address alone */
	uint64_t accepted_ns;		/* CLOCK_MONOTONIC */
	struct rpmemd_limits lim;	/* the set's limits when accepted */
	char local[RPMEMD_ADDR_MAX];	/* our address, numeric */
	struct rpmem_rdma_srv *rdma;	/* RDMA listener on it, or NULL */
	char holder[RPMEM_STR_MAX + 1]; /* how busy errors name us */
	/* who the client proved to be over TLS; "" over plaintext */
	char identity[RPMEM_IDENTITY_MAX + 1];
	const char *auth_method; /* "psk", "x509" or "none" */

	/* protected by set->lock */
	char client[RPMEM_STR_MAX + 1];
	char cur_pool[2 * RPMEM_NAME_MAX + 2]; /* shown by STATUS */
	uint8_t cur_mode;
	uint8_t cur_xport;
	int established;
	int done;
	int unauth;  /* counted in set->unauth: before HELLO_OK */
	int evicted; /* closed to make room for a newer connection (2: a
		      * newer one from its address, it being silent) */
	int heard;   /* the peer has sent something (atomic) */
	int expired; /* shut down past its handshake's deadline */
	char kicked_by[RPMEM_STR_MAX + 1]; /* who ended it with KICK, or "" */
	/*
	 * TLS: an eventfd that KICK and a stopping daemon write to wake the
	 * session's thread from its wait for a request (a shut-down socket
	 * would end a TLS read with an alert); -1 over plaintext, or when
	 * none could be made
	 */
	int kick_fd;

	/* the session thread's own */
	struct rpmemd_handle h[RPMEMD_MAX_HANDLES];
	uint32_t next_handle;
	uint32_t derr_code; /* a failed WRITE, reported by the next FLUSH */
	char derr_msg[RPMEM_MSG_MAX + 1];
	uint8_t req[REQ_MAX];
	uint8_t *out; /* RPMEM_MAX_PAYLOAD, allocated on first use */
	int trim;     /* out or TLS buffers to give back once idle */
	void *stack_lo; /* the lowest address of the thread's stack */
	uint64_t hs_deadline_ns; /* the handshake's deadline, 0 after it */
	int in_frame;		 /* a frame's header is in, its payload not */
	uint64_t last_active_ns; /* the last request done */
	struct rpmemd_sub *sub;	 /* an event subscriber (events.c), or NULL */
	struct rpmemd_hash_share *share; /* its identity's, while hashing */
	uint64_t hashed;	  /* requests that took a hashing slot */
	uint64_t hash_ahead_max;  /* the most turns before one of them */

	/* atomics, read by STATUS */
	uint64_t bytes_written;
	uint64_t bytes_read;
	uint64_t flushes;
	uint64_t barriers; /* BARRIERs persisted (no reply) */
	uint64_t last_flush_ns;

	/*
	 * closed by the reaper, after the join. Last: the pages of its
	 * read-ahead buffer, which a TLS session never uses, are never
	 * touched (rpmemd_session_alloc)
	 */
	struct rpmem_conn conn;
};

/* --- conn.c: framing and replies ---------------------------------------- */

/* conn_reply_err -- an ERROR reply; returns 0 or the send failure */
int conn_reply_err(struct rpmemd_session *s, uint32_t id, uint32_t code,
		   const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* conn_reply_ok -- an empty OK reply */
int conn_reply_ok(struct rpmemd_session *s, uint32_t id);
/* conn_out_buf -- the large reply buffer (RPMEM_MAX_PAYLOAD), or NULL */
uint8_t *conn_out_buf(struct rpmemd_session *s);
/*
 * RPMEMD_IDLE_MS -- a session that received no request for this long
 * gives back its large reply buffer, TLS buffers and the stack pages its
 * deepest calls touched (conn_idle)
 */
#define RPMEMD_IDLE_MS 100
/*
 * RPMEMD_STACK_SIZE -- a session thread's stack. The deepest path
 * measured (an X.509 TLS handshake) touches 40 KiB; 512 KiB leaves room
 * for what was not measured (RDMA, ndctl), and is too small to be backed
 * by a transparent huge page.
 */
#define RPMEMD_STACK_SIZE (512u << 10)
/*
 * conn_idle -- before waiting for the next request: if none comes within
 * RPMEMD_IDLE_MS, give back what the last ones took, and wait for one
 * (until deadline_ns, 0: none) without taking it again. Over TLS it always
 * waits before the read, for a request or a KICK (s->kick_fd). 0 to read
 * the request, -ECONNABORTED once kicked.
 */
int conn_idle(struct rpmemd_session *s, uint64_t deadline_ns);
/*
 * conn_trim_at -- a plaintext session with a trim due: when the wait for
 * the next request ends to trim (RPMEMD_IDLE_MS from now); 0 otherwise
 */
uint64_t conn_trim_at(const struct rpmemd_session *s);
/* conn_trim -- give back what the last requests took (see conn_idle) */
void conn_trim(struct rpmemd_session *s);
/*
 * rpmemd_log_write_failed -- the warnings about failed WRITEs, at a
 * peer's will: a few a second are logged (rpmem_log_limited)
 */
extern struct rpmem_log_limit rpmemd_log_write_failed;
/*
 * reorder.c: a target that breaks the session's order, for tests only
 * (build/tests/rpmemd-reorder); the product build has no-ops
 */
#ifdef RPMEMD_TEST_REORDER
int reorder_take(struct rpmemd_session *s, uint32_t handle, uint64_t off,
		 uint32_t len);
void reorder_barrier(struct rpmemd_session *s);
void reorder_apply(struct rpmemd_session *s, int end);
#else
static inline int reorder_take(struct rpmemd_session *s, uint32_t handle,
			       uint64_t off, uint32_t len)
{
	(void)s, (void)handle, (void)off, (void)len;
	return 0;
}
static inline void reorder_barrier(struct rpmemd_session *s)
{
	(void)s;
}
static inline void reorder_apply(struct rpmemd_session *s, int end)
{
	(void)s, (void)end;
}
#endif

/* conn_defer -- remember the first failed WRITE for the next FLUSH */
void conn_defer(struct rpmemd_session *s, uint32_t code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* conn_take_deferred -- reply the remembered WRITE failure, if any (*had) */
int conn_take_deferred(struct rpmemd_session *s, uint32_t id, int *had);
/* conn_bad_payload -- the reply to a well-framed request that did not decode */
int conn_bad_payload(struct rpmemd_session *s, const struct rpmem_hdr *hd);
/*
 * conn_recv_request -- one frame header and (except for WRITE) its
 * payload into s->req: 0, 1 if answered and skipped, or -errno
 */
int conn_recv_request(struct rpmemd_session *s, struct rpmem_hdr *hd);

/* --- handles.c: the session's open pools -------------------------------- */

/* handle_get -- the open pool behind handle id, or NULL */
struct rpmemd_handle *handle_get(struct rpmemd_session *s, uint32_t id);
/* handle_free_slot -- a free slot of the table, or NULL if all are taken */
struct rpmemd_handle *handle_free_slot(struct rpmemd_session *s);
/*
 * handle_issue -- give the slot h, its pool open, the session's next id
 * (what the client names it by); returns the id
 */
uint32_t handle_issue(struct rpmemd_session *s, struct rpmemd_handle *h);
/* handle_update_cur -- show the most recently opened pool in STATUS */
void handle_update_cur(struct rpmemd_session *s);
/* handle_close -- close one open pool: RDMA exposure first, then the pool */
void handle_close(struct rpmemd_session *s, struct rpmemd_handle *h);
/* handle_close_all -- the session ends: close every pool it has open */
void handle_close_all(struct rpmemd_session *s);

/* --- expose.c: RDMA ----------------------------------------------------- */

/*
 * expose_pool -- expose the pool of h to this session over RDMA; fills
 * blob[*blob_len] (in: capacity). On failure, why[] says why.
 */
int expose_pool(struct rpmemd_session *s, struct rpmemd_handle *h, void *blob,
		size_t *blob_len, char *why, size_t wlen);

/*
 * unexpose_pool -- end the RDMA exposure of h, if any, and give back its
 * staging bytes
 */
void unexpose_pool(struct rpmemd_handle *h);

/* rpmemd_staging_limit -- limits.rdma_staging_max in bytes (AUTO resolved) */
uint64_t rpmemd_staging_limit(const struct rpmemd_limits *lim);

/* --- the request handlers: 0, or -errno to end the session --------------- */

/*
 * RPMEMD_HASH_SLOTS_MAX -- at most this many requests hash at once in the
 * whole daemon (fewer on fewer CPUs), each at most RPMEM_MAX_HASH_BYTES
 */
#define RPMEMD_HASH_SLOTS_MAX 8

int req_list(struct rpmemd_session *s, const struct rpmem_hdr *hd);
int req_create(struct rpmemd_session *s, const struct rpmem_hdr *hd);
int req_remove(struct rpmemd_session *s, const struct rpmem_hdr *hd);
int req_open(struct rpmemd_session *s, const struct rpmem_hdr *hd);
int req_close(struct rpmemd_session *s, const struct rpmem_hdr *hd);
int req_set_state(struct rpmemd_session *s, const struct rpmem_hdr *hd);
int req_write(struct rpmemd_session *s, const struct rpmem_hdr *hd);
/*
 * write_by_file -- whether the WRITEs into h's pool, new (empty) until
 * now, go through its file rather than its mapping (req_data.c)
 */
int write_by_file(const struct rpmemd_session *s,
		  const struct rpmemd_handle *h);
int req_read(struct rpmemd_session *s, const struct rpmem_hdr *hd);
int req_flush(struct rpmemd_session *s, const struct rpmem_hdr *hd);
int req_barrier(struct rpmemd_session *s, const struct rpmem_hdr *hd);
int req_hash(struct rpmemd_session *s, const struct rpmem_hdr *hd);
int req_hashv(struct rpmemd_session *s, const struct rpmem_hdr *hd);
int req_preserve(struct rpmemd_session *s, const struct rpmem_hdr *hd);
int req_status(struct rpmemd_session *s, const struct rpmem_hdr *hd);
int req_kick(struct rpmemd_session *s, const struct rpmem_hdr *hd);
int req_scrub(struct rpmemd_session *s, const struct rpmem_hdr *hd);
/*
 * req_repair -- REPAIR: its head and data read from the connection (as
 * WRITE's), written into the pool only if the data hashes as its scrub
 * record says; OK or ERROR
 */
int req_repair(struct rpmemd_session *s, const struct rpmem_hdr *hd);
/*
 * req_repair_at -- REPAIR_AT: as REPAIR, into the records of a version
 * that do not check, only data they (or its scrub record) vouch for
 */
int req_repair_at(struct rpmemd_session *s, const struct rpmem_hdr *hd);
/* req_versions -- VERSIONS: list or prune a pool's versions */
int req_versions(struct rpmemd_session *s, const struct rpmem_hdr *hd);
/* req_read_at -- READ_AT: a range of a version's image */
int req_read_at(struct rpmemd_session *s, const struct rpmem_hdr *hd);
/* req_gen -- GEN: a pool's role and generation history */
int req_gen(struct rpmemd_session *s, const struct rpmem_hdr *hd);
/*
 * rpmemd_open_primary -- a write open of pool p: refused with ERROR
 * (*refused = 1; the send's result returned) when p is a primary
 */
int rpmemd_open_primary(struct rpmemd_session *s, const struct rpmem_hdr *hd,
			struct rpmemd_pool *p, int *refused);
/*
 * rpmemd_append_refused -- h was opened for writing on the append right
 * alone, its region keeps no versions and its pool holds a committed
 * image (generation above 0): changing its data would lose that image
 * for good. 1 with the reason in err, else 0. A rollback is not a
 * change: it restores the committed image.
 */
int rpmemd_append_refused(const struct rpmemd_session *s,
			  struct rpmemd_handle *h, char *err,
			  size_t errlen);
/*
 * read_at_chain -- the handle's open version (opened now if need be): 0,
 * or -1 after a refusal was sent (*ret the send's result)
 */
int read_at_chain(struct rpmemd_session *s, const struct rpmem_hdr *hd,
		  struct rpmemd_handle *h, uint64_t version, int *ret);
/*
 * scrub_version -- SCRUB of a version (m->version): piece[] and rep
 * filled (0), or a reply sent (1, or < 0 if sending it failed)
 */
int scrub_version(struct rpmemd_session *s, const struct rpmem_hdr *hd,
		  struct rpmemd_handle *h, const struct rpmem_msg_scrub *m,
		  uint8_t *piece, struct rpmem_msg_scrub_reply *rep);
/*
 * rpmemd_versions_commit -- after a commit: retention, events; the
 * versions pruned for space a line each into note (if not NULL)
 */
void rpmemd_versions_commit(struct rpmemd_session *s, struct rpmemd_pool *p,
			    uint64_t gen, char *note, size_t len);
/*
 * rpmemd_versions_room -- the events of the versions pruned for the room
 * of p's journals since the last call, a line each into note (if not NULL)
 */
void rpmemd_versions_room(struct rpmemd_session *s, struct rpmemd_pool *p,
			  char *note, size_t len);
/*
 * rpmemd_read_check -- before a READ (version 0) or READ_AT (a version) of
 * [off, off + len) of p is answered with data (the version's image in
 * data, else read from the pool): its 4 KiB pieces against the scrub
 * record, in a hashing slot. 0 to answer it (intact or unverifiable), 1
 * if it was refused with ERROR DAMAGED naming the damaged ranges (*ret
 * the send's result)
 */
int rpmemd_read_check(struct rpmemd_session *s, const struct rpmem_hdr *hd,
		      struct rpmemd_pool *p, uint64_t version,
		      const uint8_t *data, uint64_t off, uint64_t len,
		      int *ret);
/*
 * rpmemd_scrub_ensure -- the pool (opened for writing by s: nothing else
 * writes it) is consistent at generation gen: record its hashes now if
 * its scrub record is not of gen (rpmemd stopped between a commit and
 * its record)
 */
void rpmemd_scrub_ensure(struct rpmemd_session *s, struct rpmemd_pool *p,
			 uint64_t gen);

struct rpmemd_damage_change;
/* rpmemd_damage_event -- a pool event of s about p's damage (text) */
void rpmemd_damage_event(struct rpmemd_session *s, struct rpmemd_pool *p,
			 const char *text);
/*
 * rpmemd_damage_report -- log and publish what a scrub (scrub set) or a
 * commit or repair did to p's list of damaged pieces (c)
 */
void rpmemd_damage_report(struct rpmemd_session *s, struct rpmemd_pool *p,
			  const struct rpmemd_damage_change *c, int scrub);
/* rpmemd_scrub_commit -- record a pool's hashes as it goes consistent */
void rpmemd_scrub_commit(struct rpmemd_session *s, struct rpmemd_pool *p,
			 uint64_t gen);
/*
 * req_events -- EVENTS: the session becomes an event subscriber and
 * serves its subscription until it ends (*over set, the subscription's
 * end in the return value), or the request is refused (ERROR sent)
 */
int req_events(struct rpmemd_session *s, const struct rpmem_hdr *hd,
	       int *over);

/* --- handshake.c, dispatch.c --------------------------------------------- */

/* rpmemd_handshake -- HELLO until HELLO_OK; 0 or -errno (session ends) */
int rpmemd_handshake(struct rpmemd_session *s);
/*
 * rpmemd_serve -- the request loop after the handshake: 0 after BYE,
 * -ECONNRESET when the client went away, -ESHUTDOWN when the daemon
 * stops, or another -errno
 */
int rpmemd_serve(struct rpmemd_session *s);

/* --- registry.c: what needs the set's lock ------------------------------- */

/*
 * rpmemd_session_alloc -- a zeroed session, a mapping of its own: only
 * the pages it uses become resident (calloc would clear them all); NULL
 */
struct rpmemd_session *rpmemd_session_alloc(void);
/* rpmemd_session_free -- give back a session of rpmemd_session_alloc */
void rpmemd_session_free(struct rpmemd_session *s);

/* rpmemd_sessions_apm_cap -- RPMEM_CAP_APM if a region declares direct_pmem */
uint32_t rpmemd_sessions_apm_cap(struct rpmemd_sessions *set);
/*
 * rpmemd_sessions_reserve -- admit a new connection from address addr
 * before its handshake: its id, and its limits into *lim. When addr has
 * max_unauthenticated_per_address connections awaiting their handshake
 * already, its oldest silent one (nothing received yet) is closed to
 * make room, so that silent connections cannot lock the honest clients
 * of their address out; if none is silent, -EUSERS with why[] filled
 * ("too many unauthenticated connections from your address"). Also
 * -EUSERS when max_sessions +
 * max_unauthenticated + RPMEMD_THREAD_SLACK threads exist. When
 * max_unauthenticated are waiting, one from a busier address is evicted
 * to make room, or if none is busier, -EUSERS (registry.c: evict).
 */
int rpmemd_sessions_reserve(struct rpmemd_sessions *set, const char *addr,
			    uint32_t *id, struct rpmemd_limits *lim,
			    char *why, size_t wlen);
/*
 * rpmemd_sessions_add -- list the new session s (counted as
 * unauthenticated) and start its thread fn
 */
int rpmemd_sessions_add(struct rpmemd_sessions *set, struct rpmemd_session *s,
			void *(*fn)(void *));
/* why rpmemd_sessions_admit refused a session */
struct rpmemd_refusal {
	const char *limit; /* "max_sessions", "admin_reserved_sessions",
			      "max_sessions_per_identity" or "access" */
	unsigned value;	   /* the limit's value in force */
	unsigned max_sessions;
};
/*
 * rpmemd_sessions_admit -- s passed HELLO as client: count it against
 * max_sessions and, over TLS, the bounds of its identity (registry.c:
 * admit_identity). -ESHUTDOWN when stopping, -EUSERS at a limit, -EACCES
 * for an identity without any access rule (the limit in *why),
 * -ECONNRESET if s was evicted or expired (its socket is shut down).
 */
int rpmemd_sessions_admit(struct rpmemd_sessions *set, struct rpmemd_session *s,
			  const char *client, struct rpmemd_refusal *why);
/*
 * rpmemd_sessions_kick -- end session id on behalf of `by`: its thread is
 * woken (TLS: by its kick_fd, at its next wait for a request; plaintext:
 * its socket is shut down for reading), tells its client why, ends the
 * connection and releases its pools.
 * -ENOENT if no such established session, -EINVAL if id is self's.
 */
int rpmemd_sessions_kick(struct rpmemd_sessions *set,
			 struct rpmemd_session *self, uint32_t id,
			 const char *by, char *victim, size_t vlen);
/*
 * rpmemd_sessions_kick_readers -- remove --force of pool region/pool:
 * kick (as rpmemd_sessions_kick, on behalf of `by`) every other session
 * that holds it open read-only. How many were kicked, or -EBUSY (none
 * kicked) if a session holds it open for writing, or self holds it.
 * Reads the handle tables under set->lock: handle_issue and handle_close
 * change a handle's id under it.
 */
int rpmemd_sessions_kick_readers(struct rpmemd_sessions *set,
				 struct rpmemd_session *self,
				 const char *region, const char *pool,
				 const char *by);
/*
 * rpmemd_sessions_fate -- why s's socket was shut down under it:
 * SESSION_EVICTED, SESSION_DISPLACED (silent, by a newer connection
 * from its address), SESSION_KICKED (who did it into by[len]),
 * SESSION_EXPIRED (rpmemd_sessions_expire) or 0
 */
enum {
	SESSION_EVICTED = 1,
	SESSION_KICKED = 2,
	SESSION_EXPIRED = 3,
	SESSION_DISPLACED = 4
};
int rpmemd_sessions_fate(struct rpmemd_sessions *set, struct rpmemd_session *s,
			 char *by, size_t len);
/*
 * rpmemd_hash_enter -- s waits for a hashing slot (of set->hash_max),
 * in turn (first come, first served), its identity (without TLS: its
 * address) holding or awaiting at most half of them (rounded up), more
 * only while a slot is free and nobody waits: the many sessions of one
 * identity cannot crowd out another's, nor leave slots idle. Counts in
 * s->hashed and s->hash_ahead_max (the most requests given a slot while
 * one of s's waited in turn), which rpmemd logs as the session ends
 */
void rpmemd_hash_enter(struct rpmemd_session *s);
/* rpmemd_hash_share_of -- the slots one identity holds or awaits at most */
unsigned rpmemd_hash_share_of(const struct rpmemd_sessions *set);
/* rpmemd_hash_leave -- give s's hashing slot back */
void rpmemd_hash_leave(struct rpmemd_session *s);
/* rpmemd_sessions_leave -- s's thread ends: uncount it, wake the reaper */
void rpmemd_sessions_leave(struct rpmemd_sessions *set,
			   struct rpmemd_session *s);
/*
 * rpmemd_sessions_info -- the daemon facts and established sessions of
 * STATUS_REPLY, sessions by id; with identity, only the sessions of that
 * identity; -ENOMEM
 */
int rpmemd_sessions_info(struct rpmemd_sessions *set,
			 struct rpmem_msg_status_reply *rep,
			 const char *identity);

#endif
