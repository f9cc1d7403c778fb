/* SPDX-License-Identifier: BSD-3-Clause */
/* rdma.h -- the RDMA data plane as the rest of the code sees it */
#ifndef RPMEM_RDMA_H
#define RPMEM_RDMA_H

#include <stddef.h>
#include <stdint.h>

#include "xport.h"

/* --- both ends (rdma_common.c) ------------------------------------------ */

/* rpmem_rdma_usable -- 1 if an RDMA device serves the local address addr */
int rpmem_rdma_usable(const char *addr);

/* --- initiator, in librpmemctl (rdma_initiator*.c) ----------------------- */

struct rpmem_tls;

/*
 * rpmem_rdma_client_new -- connect the RDMA data plane described by the
 * OPEN_OK transport blob (MR descriptor, persistence mode, token or
 * nonce, port) to host; tls is the TLS session of the control connection
 * that carried the blob (NULL over plaintext), from which the token of a
 * TLS-bound blob is derived. Fills *out. -ENODEV if no RDMA device
 * reaches host, -EKEYREJECTED if the target rejected the connection
 * (token refused or expired), -EPROTO for a TLS-bound blob without tls.
 * On failure the reason, as logged, is written to errbuf (errlen bytes;
 * "" if nothing was logged). What it and the transport log goes to log
 * (copied; NULL or no fn: the global log), its session's.
 */
struct rpmem_log_sink;
int rpmem_rdma_client_new(const char *host, struct rpmem_tls *tls,
			  const void *blob, size_t blob_len,
			  uint64_t pool_size, const struct rpmem_log_sink *log,
			  struct rpmem_xport **out, char *errbuf,
			  size_t errlen);

/* --- target, in rpmemd only (rdma_target.c) ------------------------------ */

struct rpmem_rdma_srv;  /* a target's RDMA listener */
struct rpmem_rdma_expo; /* one pool range exposed to one session */

/* persist callback the target gives for GPSPM flushes */
typedef int (*rpmem_persist_fn)(void *arg, uint64_t off, uint64_t len);

struct rpmem_rdma_expo_cfg {
	void *addr;   /* the pool's mapping */
	size_t len;
	int apm;      /* direct write to PMem declared: allow APM flushes */
	int is_pmem;  /* mapping is PMem (devdax/fsdax) */
	int readonly; /* the session opened the pool read-only: no remote writes */
	/*
	 * the TLS session of the control connection the blob goes out on:
	 * the token is derived from it (blob v2); NULL over plaintext (a
	 * random token, blob v1). Used only during rpmem_rdma_expose.
	 */
	struct rpmem_tls *tls;
	rpmem_persist_fn persist;
	void *arg;
	/*
	 * the mapping cannot be registered (fsdax without on-demand paging):
	 * may the pool be served through a DRAM staging copy of len bytes?
	 * 0 takes it (the caller counts it until rpmem_rdma_unexpose), -errno
	 * refuses it and rpmem_rdma_expose returns that. NULL: always.
	 */
	int (*stage)(void *arg, size_t len);
	/*
	 * may the daemon's side change the mapping now (a write + flush
	 * request's data, a staging copy's flushed range)? 0, or -errno to
	 * refuse the request before any byte moves. NULL: always.
	 */
	int (*may_write)(void *arg);
};

/* rpmem_rdma_srv_new -- listen for RDMA connections on addr:port */
int rpmem_rdma_srv_new(const char *addr, const char *port,
		       struct rpmem_rdma_srv **out);
void rpmem_rdma_srv_delete(struct rpmem_rdma_srv **srv);

/*
 * rpmem_rdma_expose -- register the pool range (READ_SRC only when
 * cfg->readonly), make a single-use token (bound to cfg->tls when set)
 * and fill blob[*blob_len] (in: capacity) for OPEN_OK; the listener
 * accepts one connection carrying that token, within 10 s of this call
 * (RPMEM_RDMA_TOKEN_TTL seconds when set).
 */
int rpmem_rdma_expose(struct rpmem_rdma_srv *srv,
		      const struct rpmem_rdma_expo_cfg *cfg, void *blob,
		      size_t *blob_len, struct rpmem_rdma_expo **out);
void rpmem_rdma_unexpose(struct rpmem_rdma_expo **e);

#endif
