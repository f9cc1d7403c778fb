/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdma_initiator.h -- internals of the initiator half (librpmemctl):
 * rdma_initiator.c connects and closes, rdma_initiator_queue.c keeps the
 * work-request queue, rdma_initiator_io.c implements the operations
 */
#ifndef RPMEM_RDMA_INITIATOR_H
#define RPMEM_RDMA_INITIATOR_H

#include <stddef.h>
#include <stdint.h>

#include <librpma.h>

#include "xport.h"
#include "log.h"
#include "rdma_int.h"

/* a staging-ring allocation waiting for its work request to complete */
struct rdma_stage {
	uint64_t seq;   /* its work request */
	uint64_t end;   /* ring position after it */
	void *copy_dst; /* read: copy the ring bytes here on completion */
	uint64_t roff;  /* ring offset */
	size_t len;
};

struct rdma_client {
	struct rpmem_xport x; /* first: the transport interface */
	struct rpmem_log_sink log; /* its session's (fn NULL: the global) */
	char host[256];
	char port[RDMA_PORT_MAX + 1];
	uint64_t pool_size;
	int apm;
	unsigned qd;
	unsigned sig_every;
	unsigned read_chunk; /* bytes per RDMA READ */
	unsigned read_depth; /* RDMA READs in flight */
	int timeout_ms;
	int err;    /* sticky: 0 or -errno */
	int closed; /* CLOSED/LOST seen */
	char why[512]; /* the reason of the last failure (sticky once err) */

	struct rpma_peer *peer;
	struct rpma_conn *conn;
	struct rpma_cq *cq;
	int cq_fd;
	int ev_fd;
	struct rpma_mr_remote *rmr;

	uint64_t posted;   /* last sequence number posted */
	uint64_t done;     /* last sequence number known complete */
	uint64_t last_sig; /* last signalled sequence number posted */
	uint64_t last_zc;  /* last zero-copy write posted */
	uint64_t awaited;  /* flushes awaited (GPSPM barriers included) */
	uint64_t barriers; /* APM flushes posted and not awaited */
	uint64_t events;   /* completion events taken (wake-ups) */

	void *base; /* attached local mapping (zero copy) */
	size_t base_len;
	struct rpma_mr_local *base_mr;

	uint8_t *ring; /* staging ring */
	struct rpma_mr_local *ring_mr;
	uint64_t ring_head, ring_tail; /* virtual positions */
	struct rdma_stage *fifo;
	unsigned fifo_cap, fifo_first, fifo_n;

	uint8_t *msg; /* GPSPM send + receive slots */
	struct rpma_mr_local *msg_mr;
	uint32_t flush_seq;
	int inline_ok; /* the target takes write + flush requests */
	uint32_t gp_out; /* GPSPM: the posted flush not finished yet, 0 none */
	uint64_t gp_seq; /* its send's work request */
	uint64_t gp_off, gp_len;
	int reply_ready;
	uint32_t reply_seq;
	int32_t reply_status;

	/*
	 * GPSPM batches (a target with RDMA_BLOB_F_BATCH): requests numbered
	 * 1, 2, ... in the order sent, request n in slot n % RDMA_SLOTS,
	 * answered in that order
	 */
	int batch_ok;
	uint64_t gb_sent;  /* last request sent */
	uint64_t gb_acked; /* last request answered */
	uint64_t gb_fence; /* last request a barrier or flush sent */
	uint64_t gb_wr[RDMA_SLOTS]; /* each slot's send work request */
	uint32_t gb_len;   /* bytes of the open batch, 0: none open */
	uint32_t gb_nent;  /* its entries */
	/* ranges RDMA-written (too large for a batch) since the last send */
	struct {
		uint64_t off, len;
	} gb_dir[16];
	unsigned gb_ndir;
};

#define CL_WAIT_SEQ 0
#define CL_WAIT_REPLY 1 /* batches: request seq answered */

/* --- rdma_initiator_queue.c: the work-request queue ------------------- */

/* cl_set_err -- the first error makes the transport unusable (sticky) */
void cl_set_err(struct rdma_client *c, int err);
/* cl_fail_once -- a failure that leaves the transport usable: its reason */
int cl_fail_once(struct rdma_client *c, int err);
/* cl_fail -- a failing librpma call makes the transport unusable */
int cl_fail(struct rdma_client *c, const char *what, int ret);
/* cl_drain -- consume every available completion without blocking: how many */
unsigned cl_drain(struct rdma_client *c);
/* cl_posted -- work request seq was posted with these completion flags */
void cl_posted(struct rdma_client *c, uint64_t seq, int flags);
/* cl_wait -- until seq completed (CL_WAIT_SEQ) or a flush reply came */
int cl_wait(struct rdma_client *c, int what, uint64_t seq);
/* cl_next -- reserve a send-queue slot: its seq and completion flags */
int cl_next(struct rdma_client *c, int force, uint64_t *seq, int *flags);
/*
 * cl_ring_next -- n bytes of the staging ring at *start and cl_next's
 * send-queue slot for the request that uses them, no wait in between
 */
int cl_ring_next(struct rdma_client *c, size_t n, int force,
		 uint64_t *start, uint64_t *seq, int *flags);
/* cl_ring_push -- the ring allocation belongs to work request seq */
void cl_ring_push(struct rdma_client *c, uint64_t start, size_t n,
		  uint64_t seq, void *copy_dst);
/* cl_enter -- a call on [off, off + len) begins: 0 or its failure */
int cl_enter(struct rdma_client *c, uint64_t off, uint64_t len);
/* cl_in_base -- 1 if [p, p + len) lies inside the attached mapping */
int cl_in_base(struct rdma_client *c, const void *p, size_t len);
/* cl_poll_events -- completions (and events) that came, without blocking */
void cl_poll_events(struct rdma_client *c);

/* --- rdma_initiator_batch.c: GPSPM batch requests ---------------------- */

int gb_send(struct rdma_client *c);
int gb_settle(struct rdma_client *c);
int gb_write(struct rdma_client *c, uint64_t off, const void *src,
	     size_t len);
int gb_post(struct rdma_client *c, uint64_t *tok);
int gb_flush(struct rdma_client *c);
int gb_barrier(struct rdma_client *c);
int gb_done(struct rdma_client *c, uint64_t tok, int wait);

/* --- rdma_initiator_io.c: the operations of rdma_ops -------------------- */

/* cl_write_direct -- RDMA writes of [off, off + len) from src, pipelined */
int cl_write_direct(struct rdma_client *c, uint64_t off, const void *src,
		    size_t len);

int rdma_attach(struct rpmem_xport *x, void *base, size_t len);
int rdma_write(struct rpmem_xport *x, uint64_t off, const void *src,
	       size_t len);
int rdma_read(struct rpmem_xport *x, uint64_t off, void *dst, size_t len);
int rdma_flush(struct rpmem_xport *x, uint64_t off, uint64_t len);
int rdma_flush_post(struct rpmem_xport *x, uint64_t off, uint64_t len,
		    uint64_t *tok);
int rdma_flush_done(struct rpmem_xport *x, uint64_t tok, int wait);
int rdma_flush_serial(struct rpmem_xport *x);
int rdma_wait_fd(struct rpmem_xport *x);
int rdma_barrier(struct rpmem_xport *x, uint64_t off, uint64_t len);
int rdma_persist(struct rpmem_xport *x, uint64_t off, const void *src,
		 size_t len);

#endif
