/* SPDX-License-Identifier: BSD-3-Clause */
/* session.h -- one thread per client connection, serving the protocol */
#ifndef RPMEMD_SESSION_H
#define RPMEMD_SESSION_H

#include <pthread.h>
#include <stdint.h>

#include "config.h"
#include "pace.h"
#include "proto.h"
#include "region.h"

#define RPMEMD_MAX_HANDLES 16	  /* pools open at once in one session */
#define RPMEMD_SEND_TIMEOUT 60	  /* seconds a reply may stay blocked */
/*
 * a connection silent this long (nothing received since its accept) may
 * be closed to make room for a newer one from its address
 * (max_unauthenticated_per_address)
 */
#define RPMEMD_SILENT_GRACE_MS 1000
#define RPMEMD_THREAD_SLACK 16	  /* connections beyond max_sessions and
				     max_unauthenticated that still get a
				     thread (to be told why) */
#define RPMEMD_MAX_RDMA 32	  /* RDMA listeners (local addresses) */
#define RPMEMD_TRIM_REAPED 64	  /* reaped between two malloc_trims */

struct rpmemd_access;
struct rpmemd_events;
struct rpmemd_session;
struct rpmem_rdma_srv;
struct rpmem_tls_ctx;

/* an RDMA listener and the numeric local address it serves */
struct rpmemd_rdma_ep {
	char addr[RPMEMD_ADDR_MAX];
	struct rpmem_rdma_srv *srv; /* owned by the server (server.c) */
};

/* what sessions share: the regions, the session list, daemon facts */
struct rpmemd_sessions {
	struct rpmemd_regions *regions;
	pthread_mutex_t lock; /* everything below */
	struct rpmemd_session *head;
	unsigned count;	      /* threads not yet reaped */
	unsigned established; /* sessions past HELLO */
	unsigned max_sessions;
	struct rpmemd_limits limits;
	unsigned unauth; /* connections before HELLO_OK (not evicted) */
	uint32_t next_id;
	uint64_t started_ns; /* daemon start, CLOCK_MONOTONIC */
	uint32_t caps;	     /* RPMEM_CAP_* of the daemon */
	struct rpmemd_access *access; /* rules in force (access.h); owned */
	struct rpmemd_events *events; /* subscribers (events.h); own lock */
	struct rpmemd_pacer pacer;    /* bwlimit on WRITE data; own lock */
	/* set before the first session starts, constant afterwards */
	struct rpmemd_rdma_ep rdma[RPMEMD_MAX_RDMA];
	unsigned nrdma;
	char server[RPMEM_STR_MAX + 1]; /* "rpmemd 0.1.0 hostname" */
	struct rpmem_tls_ctx *tls; /* every connection starts TLS; or NULL */
	int wake_fd; /* eventfd, written when a session thread ends */
	int stopping;
	/* requests hashing pool data at once, at most hash_max (own lock) */
	pthread_mutex_t hash_lock;
	pthread_cond_t hash_cond;
	unsigned hash_busy, hash_max;
	/* turns, first come first served, and each identity's share */
	uint64_t hash_next, hash_turn;
	struct rpmemd_hash_share *shares;
	/* sessions reaped since the last malloc_trim (the reaper's own) */
	unsigned reaped;
};

/* rpmemd_sessions_new -- an empty session list over regions; fills *out */
int rpmemd_sessions_new(struct rpmemd_regions *regions, unsigned max_sessions,
			const char *server, struct rpmemd_sessions **out);
/* rpmemd_sessions_delete -- every session must have been reaped */
void rpmemd_sessions_delete(struct rpmemd_sessions **set);

/* rpmemd_sessions_set_max -- a new limit for sessions past HELLO */
void rpmemd_sessions_set_max(struct rpmemd_sessions *set, unsigned max);
/*
 * rpmemd_sessions_set_limits -- new timeouts and limits on unauthenticated
 * connections; a connection takes its timeouts when accepted
 */
void rpmemd_sessions_set_limits(struct rpmemd_sessions *set,
				const struct rpmemd_limits *lim);

/*
 * rpmemd_session_start -- serve the accepted connection fd in a new
 * thread; fd belongs to the session from here on, even on failure.
 */
int rpmemd_session_start(struct rpmemd_sessions *set, int fd);

/*
 * rpmemd_sessions_reap -- join the session threads that ended (after a
 * wake_fd event); returns how many sessions remain.
 */
unsigned rpmemd_sessions_reap(struct rpmemd_sessions *set);

/*
 * rpmemd_sessions_shutdown -- stop every session: shutdown(how) of its
 * socket. SHUT_RD lets the current request finish and its reply go out;
 * SHUT_RDWR also breaks a blocked reply.
 */
void rpmemd_sessions_shutdown(struct rpmemd_sessions *set, int how);

/*
 * rpmemd_sessions_expire -- the handshake deadline's backstop: the socket
 * of every connection still awaiting its handshake RPMEMD_HS_GRACE_MS
 * past its handshake_timeout (at now_ns) is shut down for reading, so
 * that a read a peer keeps alive byte by byte (inside a TLS record) ends
 * and its thread reports the timeout. Returns how many connections await
 * their handshake.
 */
#define RPMEMD_HS_GRACE_MS 500
unsigned rpmemd_sessions_expire(struct rpmemd_sessions *set, uint64_t now_ns);

/* rpmemd_sessions_count -- sessions not yet reaped */
unsigned rpmemd_sessions_count(struct rpmemd_sessions *set);

#endif
