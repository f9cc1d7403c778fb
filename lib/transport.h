/* SPDX-License-Identifier: BSD-3-Clause */
/* transport.h -- the data-plane interface that tcp and rdma implement */
#ifndef RPMEM_TRANSPORT_H
#define RPMEM_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>

#include "proto.h"

/*
 * Everything above this interface (pool I/O, sync, verify, replicas) is
 * transport-agnostic. A transport is created when a pool is opened and
 * bound to that pool's handle; offsets are pool offsets.
 */
struct rpmem_xport;

struct rpmem_xport_ops {
	const char *name; /* "tcp", "rdma" */
	/* optional: the local copy of the pool lives at base (zero copy) */
	int (*attach)(struct rpmem_xport *x, void *base, size_t len);
	/* start a write; src is reusable on return; errors may be deferred */
	int (*write)(struct rpmem_xport *x, uint64_t off, const void *src,
		     size_t len);
	/* read synchronously into dst */
	int (*read)(struct rpmem_xport *x, uint64_t off, void *dst, size_t len);
	/* every earlier write is persistent on the target when this returns */
	int (*flush)(struct rpmem_xport *x, uint64_t off, uint64_t len);
	/* optional: write then flush [off, off + len) in one step */
	int (*persist)(struct rpmem_xport *x, uint64_t off, const void *src,
		       size_t len);
	/* release; the control session stays open */
	void (*close)(struct rpmem_xport *x);
};

struct rpmem_xport {
	const struct rpmem_xport_ops *ops;
	uint8_t type; /* enum rpmem_xport_type */
};

/* --- rdma.c, the only file that includes librpma.h ---------------------- */

/*
 * rpmem_rdma_client_new -- connect the RDMA data plane described by the
 * OPEN_OK transport blob (MR descriptor, persistence mode, token, port)
 * to host; fills *out. -ENODEV if no RDMA device reaches host.
 */
int rpmem_rdma_client_new(const char *host, const void *blob, size_t blob_len,
			  uint64_t pool_size, struct rpmem_xport **out);

/* rpmem_rdma_usable -- 1 if an RDMA device serves the local address addr */
int rpmem_rdma_usable(const char *addr);

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
	rpmem_persist_fn persist;
	void *arg;
};

/* rpmem_rdma_srv_new -- listen for RDMA connections on addr:port */
int rpmem_rdma_srv_new(const char *addr, const char *port,
		       struct rpmem_rdma_srv **out);
void rpmem_rdma_srv_delete(struct rpmem_rdma_srv **srv);

/*
 * rpmem_rdma_expose -- register the pool range, make a single-use token
 * and fill blob[*blob_len] (in: capacity) for OPEN_OK; the listener
 * accepts one connection carrying that token.
 */
int rpmem_rdma_expose(struct rpmem_rdma_srv *srv,
		      const struct rpmem_rdma_expo_cfg *cfg, void *blob,
		      size_t *blob_len, struct rpmem_rdma_expo **out);
void rpmem_rdma_unexpose(struct rpmem_rdma_expo **e);

#endif
