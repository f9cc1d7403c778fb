/* SPDX-License-Identifier: BSD-3-Clause */
/* xport.h -- the data-plane interface that tcp and rdma implement */
#ifndef RPMEM_XPORT_H
#define RPMEM_XPORT_H

#include <stddef.h>
#include <stdint.h>

#include "proto.h"

/*
 * Everything above this interface (pool I/O, sync, verify, replicas) is
 * transport-agnostic. A transport is created when a pool is opened and
 * bound to that pool's handle; offsets are pool offsets.
 */
struct rpmem_xport;

/*
 * one range of a pool: [off, off + len), whose data is at src, or at
 * base + off (the local copy) when src is NULL
 */
struct rpmem_xrange {
	uint64_t off;
	uint64_t len;
	const uint8_t *src;
};

/* rpmem_xrange_src -- where the data of range r is, base the local copy */
static inline const uint8_t *rpmem_xrange_src(const struct rpmem_xrange *r,
					      const uint8_t *base)
{
	return r->src ? r->src : base + r->off;
}

struct rpmem_xport_ops {
	const char *name; /* "tcp", "rdma" */
	/* optional: the local copy of the pool lives at base (zero copy) */
	int (*attach)(struct rpmem_xport *x, void *base, size_t len);
	/* start a write; src is reusable on return; errors may be deferred */
	int (*write)(struct rpmem_xport *x, uint64_t off, const void *src,
		     size_t len);
	/*
	 * optional: write n ranges whose data is at their src or at
	 * base + off (the local copy), small ones gathered into one send;
	 * both are reusable on return; errors may be deferred
	 */
	int (*write_ranges)(struct rpmem_xport *x, const uint8_t *base,
			    const struct rpmem_xrange *r, size_t n);
	/* read synchronously into dst */
	int (*read)(struct rpmem_xport *x, uint64_t off, void *dst, size_t len);
	/* every earlier write is persistent on the target when this returns */
	int (*flush)(struct rpmem_xport *x, uint64_t off, uint64_t len);
	/*
	 * optional, with flush_collect and wait_fd: flush's first half,
	 * posted without waiting; *tok is what flush_collect awaits. The
	 * transport keeps what it posted until it is collected; close gives
	 * up what was not (its replies are dropped as they come)
	 */
	int (*flush_post)(struct rpmem_xport *x, uint64_t off, uint64_t len,
			  uint64_t *tok);
	/*
	 * 1 once the posted flush tok completed (every write before it is
	 * persistent on the target; the flushes posted before it complete
	 * and are collected first, in order), 0 if not yet, or -errno;
	 * wait: blocks until it did, else 1 also where its news can be read
	 * without waiting for the target
	 */
	int (*flush_collect)(struct rpmem_xport *x, uint64_t tok, int wait);
	/* a descriptor that is readable when flush_collect may have news */
	int (*wait_fd)(struct rpmem_xport *x);
	/*
	 * optional, with flush_post: 1 if a posted flush is outstanding one
	 * at a time (a later post first waits for the earlier one)
	 */
	int (*flush_serial)(struct rpmem_xport *x);
	/*
	 * optional: [off, off + len) is persisted on the target before any
	 * later write is applied; returns without waiting; errors deferred
	 */
	int (*barrier)(struct rpmem_xport *x, uint64_t off, uint64_t len);
	/* optional: write then flush [off, off + len) in one step */
	int (*persist)(struct rpmem_xport *x, uint64_t off, const void *src,
		       size_t len);
	/* release; the control session stays open */
	void (*close)(struct rpmem_xport *x);
	/* optional: why the first failed call failed, "" if none */
	const char *(*errmsg)(struct rpmem_xport *x);
	/*
	 * wait_fd's readiness may be taken by another waiter (a completion
	 * channel's event): a waiter polls it briefly and looks again
	 */
	int wait_edge;
	/*
	 * writes go in the control session's stream, in order with its
	 * requests: the target handles a request sent before a write (a
	 * PRESERVE) before it, so its reply need not be awaited first
	 */
	int in_band;
	/* reads bypass the target's daemon, which cannot check them (RDMA) */
	int reads_bypass;
};

/*
 * a transport's handle: what it can do is in ops, never asked by which
 * transport it is
 */
struct rpmem_xport {
	const struct rpmem_xport_ops *ops;
};

#endif
