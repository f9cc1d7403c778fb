/* SPDX-License-Identifier: BSD-3-Clause */
/* rdma_int.h -- internals shared by the RDMA initiator and target halves */
#ifndef RPMEM_RDMA_INT_H
#define RPMEM_RDMA_INT_H

/*
 * Design (docs/RDMA.md has the long form):
 *
 * - Only the files of lib/rdma/ include <librpma.h>; librpma 1.2.0 is
 *   discontinued upstream, so nothing else may depend on it. The
 *   initiator half (rdma_initiator*.c) is linked into librpmemctl, the
 *   target half (rdma_target.c) into rpmemd only, and rdma_common.c
 *   (librpma logging and errors, the OPEN_OK blob) into both.
 *
 * - Target: one rpmem_rdma_srv per daemon owns an rpma_peer (protection
 *   domain) and an rpma_ep listening on addr:port, plus one listener
 *   thread that accepts connection requests. rpmem_rdma_expose registers
 *   ONLY the pool range, with the access of the open (READ_SRC only for
 *   a read-only one), and makes a single-use 16-byte token. Over a TLS
 *   control connection the blob carries a random nonce and both ends
 *   derive the token from the TLS session (exporter label
 *   RDMA_TOKEN_LABEL, context = nonce; blob version 2), so a blob seen
 *   outside that session is useless; over plaintext the blob carries a
 *   random token (version 1). The initiator sends "RPMT" + token as
 *   connection private data; an unknown, wrong, already used or expired
 *   (RDMA_TOKEN_TTL_S) token is rejected (rpma_conn_req_delete sends a
 *   REJECT). An accepted connection gets its own thread that
 *   serves GPSPM flush requests (send/recv) and connection events, so a
 *   slow persist in one session never blocks another one or the listener.
 *
 * - Persistence: APM (rpma_flush PERSISTENT, a read-after-write) is used
 *   only when the target declared direct write to PMem (cfg->apm), the
 *   mapping is PMem, the pool mapping itself is registered, and the MR
 *   descriptor carries FLUSH_TYPE_PERSISTENT. Otherwise GPSPM: after its
 *   writes the initiator sends {seq, off, len} on the same RC queue pair
 *   (in-order placement: the writes are in memory before the receive
 *   completes), the target validates the range, calls cfg->persist and
 *   replies {seq, status}. The target always serves GPSPM, so an
 *   initiator can fall back to it.
 *
 * - Staging: when the pool mapping cannot be registered (an FS-DAX file
 *   on an RNIC without On-Demand Paging, e.g. Soft-RoCE), a DRAM buffer
 *   of the pool's size is registered instead, initialised from the pool.
 *   Writes land there; each GPSPM flush copies the flushed range into the
 *   pool mapping and persists it; reads come from the buffer, which
 *   mirrors the pool. APM is never offered in this mode.
 *
 * - Initiator: one connection per opened pool, a single CQ (send and
 *   receive completions), a queue depth QD (RPMEM_RDMA_QD, default 64).
 *   Every work request gets a sequence number as its wr_id; only every
 *   QD/4-th one (and every one whose buffer must be recycled or waited
 *   for) is signalled. Send-queue completions arrive in order, so one
 *   signalled completion retires everything posted before it. Writes
 *   from the attached local mapping are zero copy (the mapping is read
 *   when the transfer happens, i.e. up to the next flush); other sources
 *   are copied into a registered 4 MiB staging ring. Large requests are
 *   cut into 1 MiB pieces.
 *
 * - Waiting never blocks without a bound: completions are polled first,
 *   then the completion channel fd and the connection event fd are
 *   poll()ed with the remaining time (RPMEM_RDMA_TIMEOUT seconds, default
 *   30); rpma_cq_wait is only called when the fd is readable, and an
 *   RPMA_E_NO_COMPLETION after it is retried. An error completion, a
 *   LOST/CLOSED event or a timeout becomes a sticky error returned by
 *   that call and every later one.
 */

#include <stddef.h>
#include <stdint.h>

#include <librpma.h>

#include "proto.h"

#define RDMA_BLOB_VERSION 1	/* the token field is the token */
#define RDMA_BLOB_VERSION_TLS 2 /* the token field is a nonce (TLS-bound) */
#define RDMA_MODE_GPSPM 0
#define RDMA_MODE_APM 1
#define RDMA_BLOB_F_STAGING 1u
#define RDMA_BLOB_F_INLINE 2u /* accepts RPFW requests (write + flush) */
#define RDMA_BLOB_F_BATCH 4u  /* accepts RPFB requests, RDMA_SLOTS in flight */
#define RDMA_PORT_MAX 15
/* librpma's last message (rdma_last), the first error kept (rdma_err) */
#define RDMA_LAST_MAX 256
#define RDMA_MSG_MAX 512
/* completions consumed by one ibv_poll_cq */
#define RDMA_WC_BATCH 16
#define RDMA_DESC_MAX 64

/* the TLS exporter label of a bound token (context: the blob's nonce) */
#define RDMA_TOKEN_LABEL "EXPORTER-rpmem-rdma-token"
/*
 * an exposure whose connection has not arrived within this many seconds
 * is refused (RPMEM_RDMA_TOKEN_TTL, 1..RDMA_TOKEN_TTL_MAX_S, overrides it)
 */
#define RDMA_TOKEN_TTL_S 10
#define RDMA_TOKEN_TTL_MAX_S 3600

/* connection private data: magic + token */
#define RDMA_PDATA_MAGIC 0x544d5052u /* "RPMT" */
#define RDMA_PDATA_LEN (4 + RPMEM_TOKEN_LEN)

/*
 * GPSPM messages. A flush request (RPFL) names a range to persist; a
 * write + flush request (RPFW) carries up to RDMA_INLINE_MAX bytes after
 * the same 24-byte head, which the target stores at off before persisting
 * off + len: a small persist is one send instead of a write and a send.
 * A batch request (RPFB, targets whose blob has RDMA_BLOB_F_BATCH) is
 * magic u32 | seq u32 | entries u32 | 0 u32, then per entry off u64 |
 * len u32 | flags u32 (RDMA_ENT_DATA: len data bytes follow, padded to 8)
 * : the target applies the entries in order, each stored (with data) and
 * persisted before the next, and a session's requests in the order sent;
 * up to RDMA_SLOTS are in flight, each answered in order.
 */
#define RDMA_REQ_MAGIC 0x4c465052u  /* "RPFL" */
#define RDMA_REQW_MAGIC 0x57465052u /* "RPFW" */
#define RDMA_REQB_MAGIC 0x42465052u /* "RPFB" */
#define RDMA_REP_MAGIC 0x52465052u  /* "RPFR" */
#define RDMA_REQ_LEN 24 /* magic u32, seq u32, off u64, len u64 */
#define RDMA_REQB_LEN 16 /* magic u32, seq u32, entries u32, 0 u32 */
#define RDMA_ENT_LEN 16	 /* off u64, len u32, flags u32 */
#define RDMA_ENT_DATA 1u
#define RDMA_ENT_RANGE_MAX (1ull << 30) /* an entry without data */
#define RDMA_REP_LEN 16 /* magic u32, seq u32, status i32, 0 u32 */
#define RDMA_INLINE_MAX 4096
#define RDMA_BATCH_MAX (16u << 10) /* bytes of a batch request */
/* the largest write a batch carries (larger ones are RDMA writes) */
#define RDMA_BATCH_DATA_MAX (RDMA_BATCH_MAX - RDMA_REQB_LEN - RDMA_ENT_LEN)
#define RDMA_SLOTS 8 /* requests in flight: the target's receives */
#define RDMA_MSG_SLOT 64			       /* a reply, a nop read */
#define RDMA_REQ_SLOT (RDMA_BATCH_MAX + RDMA_MSG_SLOT) /* a request */
#define RDMA_PAGE_UP(n) (((n) + 4095u) & ~4095u) /* aligned_alloc sizes */
/* initiator: RDMA_SLOTS request slots, reply slots, 8-byte nop target */
#define RDMA_CL_REQ_OFF(i) ((i) * RDMA_REQ_SLOT)
#define RDMA_CL_RECV_OFF(i) (RDMA_SLOTS * RDMA_REQ_SLOT + (i) * RDMA_MSG_SLOT)
#define RDMA_SCRATCH_OFF RDMA_CL_RECV_OFF(RDMA_SLOTS)
#define RDMA_CL_MSG_BUF RDMA_PAGE_UP(RDMA_SCRATCH_OFF + 8)
/* target: RDMA_SRV_RECVS reply slots, then as many request slots */
#define RDMA_SRV_RECVS RDMA_SLOTS /* requests pre-posted per connection */
/*
 * the target signals one reply in RDMA_REP_SIG; a reply slot is reused
 * RDMA_SRV_RECVS replies later, by when a signalled one has followed it
 */
#define RDMA_REP_SIG (RDMA_SRV_RECVS / 2)
#define RDMA_SRV_REP_OFF(i) ((i) * RDMA_MSG_SLOT)
#define RDMA_SRV_RECV_OFF(i) \
	(RDMA_SRV_RECVS * RDMA_MSG_SLOT + (i) * RDMA_REQ_SLOT)
#define RDMA_SRV_MSG_BUF RDMA_PAGE_UP(RDMA_SRV_RECV_OFF(RDMA_SRV_RECVS))

#define RDMA_CHUNK (1u << 20)
#define RDMA_RING_SIZE (4u << 20)
/*
 * initiator, APM: writes up to this size are copied into the staging ring
 * when posted, so that an unawaited barrier after them does not leave the
 * application's later stores racing the RNIC's fetch of their source;
 * a larger (zero-copy) write still in flight makes the next barrier wait
 */
#define RDMA_BARRIER_COPY_MAX (64u << 10)
#define RDMA_READ_CHUNK_DEFAULT (64u << 10)
#define RDMA_READ_DEPTH_DEFAULT 4
#define RDMA_QD_DEFAULT 64
#define RDMA_QD_MIN 4
#define RDMA_QD_MAX 1024
#define RDMA_TIMEOUT_MS_DEFAULT 30000
#define RDMA_CLOSE_TIMEOUT_MS 5000
#define RDMA_RESOLVE_TIMEOUT_MS 5000

/* the receive of reply slot i (work request ids above any sequence) */
#define RDMA_RECV_WRID(i) (UINT64_MAX - (uint64_t)(i))
#define RDMA_IS_RECV_WRID(id) ((id) > UINT64_MAX - RDMA_SLOTS)

/* the last warning librpma logged in this thread, for our error messages */
extern __thread char rdma_last[RDMA_LAST_MAX];
/*
 * rdma_sink -- the log of the initiator call under way in this thread
 * (its session's): every initiator entry point sets it before anything
 * logs; NULL (the target, a test) is the global log
 */
extern __thread const struct rpmem_log_sink *rdma_sink;
extern __thread int rdma_last_errno;

/*
 * rdma_err -- log an error ("rdma: " is not added) and keep its text as
 * this thread's pending RDMA error unless one is pending already: the
 * first failure is the cause, what follows its consequence
 */
void rdma_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* rdma_take_err -- the pending RDMA error into buf ("" if none); clears it */
void rdma_take_err(char *buf, size_t len);

/*
 * rdma_init -- route librpma's log through ours (once); clear rdma_last
 * and the pending error
 */
void rdma_init(void);
/* rdma_fail -- log a failing librpma call with its name and the detail */
void rdma_fail(const char *what, int ret);
/* rdma_errno -- a librpma error code as -errno */
int rdma_errno(int ret);
/* rdma_memlock_limited -- a failed registration looks like RLIMIT_MEMLOCK */
int rdma_memlock_limited(int saved_errno, unsigned long long *lim);
/* rdma_reg_failed -- log a failed rpma_mr_reg, with the memlock advice */
int rdma_reg_failed(const char *what, size_t len, int ret, int saved_errno);
/* rdma_env_uint -- an unsigned environment setting within [lo, hi] */
unsigned rdma_env_uint(const char *name, unsigned def, unsigned lo,
		       unsigned hi);
/* rdma_poll1 -- poll one fd for input; 1 ready, 0 timeout, -errno */
int rdma_poll1(int fd, int timeout_ms);
/* rdma_wait_closed -- after a disconnect, wait for CLOSED/LOST (bounded) */
void rdma_wait_closed(struct rpma_conn *conn, int ev_fd);

/* --- the transport blob in OPEN_OK -------------------------------------- */

/*
 * Blob v1 and v2 (all little-endian): u16 version | u8 mode (0 GPSPM, 1
 * APM) | u8 flags (bit 0: staging, bit 1: inline) | u16 port length +
 * port (<= 15 digits) | 16 bytes: v1 the token, v2 a nonce | u64 pool
 * size | u16 descriptor length (<= 64) + descriptor. Nothing may follow.
 * A v2 blob is sent only on a TLS control connection; its token is
 * rdma_token_bind(session, nonce).
 */
struct rdma_blob {
	unsigned version; /* RDMA_BLOB_VERSION or RDMA_BLOB_VERSION_TLS */
	unsigned mode;
	unsigned flags;
	char port[RDMA_PORT_MAX + 1];
	uint8_t token[RPMEM_TOKEN_LEN]; /* v1: the token; v2: the nonce */
	uint64_t size;
	uint16_t desc_len;
	uint8_t desc[RDMA_DESC_MAX];
};

/* rdma_blob_encode -- the blob for OPEN_OK into buf[cap], its length in *len */
int rdma_blob_encode(const struct rdma_blob *b, void *buf, size_t cap,
		     size_t *len);
/* rdma_blob_decode -- parse and validate a blob from the wire */
int rdma_blob_decode(const void *buf, size_t len, uint64_t pool_size,
		     struct rdma_blob *b);


struct rpmem_tls;

/*
 * rdma_token_bind -- the token of a v2 blob: TLS exporter keying material
 * of the control connection's session tls (label RDMA_TOKEN_LABEL,
 * context nonce), RPMEM_TOKEN_LEN bytes into token
 */
int rdma_token_bind(struct rpmem_tls *tls, const uint8_t *nonce,
		    uint8_t *token);

#endif
