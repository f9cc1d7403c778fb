/* SPDX-License-Identifier: BSD-3-Clause */
/* client.h -- internal initiator objects: sessions, pools, request helpers */
#ifndef RPMEM_CLIENT_H
#define RPMEM_CLIENT_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "librpmemctl.h"
#include "log.h"
#include "net.h"
#include "proto.h"
#include "tls.h"
#include "xport.h"

/* control-socket timeouts */
#define CLIENT_CONNECT_TIMEOUT_MS 10000
#define CLIENT_IO_TIMEOUT_S 60
/*
 * the CLOSE after the pool's data plane broke (timeout or reset): the
 * control connection has probably gone the same way, so do not wait out
 * CLIENT_IO_TIMEOUT_S a second time before reporting
 */
#define CLIENT_TEARDOWN_TIMEOUT_S 5

/* room for a target's message plus our own context */
#define CLIENT_ERRMSG_MAX (RPMEM_MSG_MAX + 256)

/* struct rpmemctl_session_cfg -- credentials; strings owned, NULL unset */
struct rpmemctl_session_cfg {
	char *ca;
	char *cert;
	char *key;
	char *psk_file;
	char *psk_identity;
	char *tls_name; /* the name the target's certificate must carry */
	int plaintext;	/* no credentials to a non-loopback target is fine */
	char *source; /* the configuration file the entry came from */
	struct rpmem_log_sink log; /* its sessions' log; fn NULL: global */
};

/*
 * struct rpmemctl_session -- one control connection to rpmemd.
 *
 * A session and its pools are used by one thread at a time. Requests
 * and replies are strictly ordered on the socket: a request gets a fresh
 * id and its reply must carry the same id. Once the connection is lost
 * (EOF, reset, timeout, or a reply that desynchronizes the stream) `lost`
 * is set and every later call fails with -ECONNRESET.
 */
struct rpmemctl_session {
	struct rpmem_conn conn;
	struct rpmem_tls_ctx *tls_ctx; /* owned; NULL over plaintext */
	char identity[RPMEM_IDENTITY_MAX + 1]; /* we authenticated as */
	int lost;      /* 0 or the -errno that broke the connection */
	int timeout_s; /* the control socket's current send/receive bound */
	uint32_t next_id;
	uint32_t id;   /* the target's session id */
	uint32_t caps; /* RPMEM_CAP_* from HELLO_OK */
	enum rpmemctl_transport transport;
	char host[256];
	char port[16];
	char server[RPMEM_STR_MAX + 1];
	char errmsg[CLIENT_ERRMSG_MAX];
	/*
	 * An ERROR the target sent for an earlier request that expects no
	 * reply (a WRITE): returned by the next awaited reply instead.
	 */
	int pending_err;
	char pending_msg[RPMEM_MSG_MAX + 1];
	uint8_t *rbuf; /* RPMEM_MAX_PAYLOAD bytes; owned, reply payloads */
	struct rpmemctl_pool *pools; /* open pools, linked by ->next */
	int subscribed; /* an event subscription: no other request now */
	/*
	 * the pool whose name, region and call errmsg already gives, set
	 * where the message was written (client_pool_seterr); NULL if it
	 * names none (a target's message, a session-wide failure)
	 */
	const struct rpmemctl_pool *err_pool;
	struct rpmem_log_sink log; /* from its configuration; fn NULL: global */
	/*
	 * small frames that await no reply (WRITE, BARRIER), their payloads
	 * copied into hbuf: sent in one gathered send with the next frame
	 * that awaits one (channel.c)
	 */
	struct rpmem_frame held[RPMEM_SEND_FRAMES_MAX];
	unsigned nheld;
	uint8_t *hbuf; /* CLIENT_HOLD_BYTES, allocated at the first use */
	size_t hused;
	/*
	 * replies owed to a caller that reads them later (a FLUSH sent
	 * without waiting): a read for another request that meets one keeps
	 * it here (client_owe); on a session shared by several links, a
	 * link's reply may be read by another's call
	 */
	struct client_owed *owed;
	unsigned nowed, owed_cap;
	unsigned users; /* links that share it (share.c); 0: not shared */
	/* rpmemctl_session_read_damaged: take damaged data, and tell fn */
	int read_damaged;
	rpmemctl_damaged_fn damaged_fn;
	void *damaged_arg;
};

/*
 * client_read_damaged -- a READ or READ_AT was refused (ret) as damaged
 * data: 1 if the session takes it anyway (the target's message reported:
 * send it again with RPMEM_READ_DAMAGED), else 0
 */
int client_read_damaged(struct rpmemctl_session *s, int ret);

/*
 * client_read_check -- before a read of [off, off + len) through a data
 * plane that bypasses rpmemd (RDMA; every transport with RPMEM_READ_SCRUB=1
 * in the environment), a SCRUB of the pieces it covers: 0 to read them
 * (intact, unverifiable, or damaged and taken as it is, the session's
 * callback told), -EILSEQ naming the damaged ranges, or -errno
 */
int client_read_check(struct rpmemctl_pool *p, uint64_t off, uint64_t len);

/* a reply owed to a later read: awaited, arrived, or nobody's any more */
struct client_owed {
	uint32_t id;
	uint8_t state; /* CLIENT_OWED_* */
	int err;       /* arrived: 0 (OK) or the ERROR's -errno */
	char *msg;     /* arrived ERROR: its message (owned) */
};

#define CLIENT_OWED_AWAITED 0
#define CLIENT_OWED_ARRIVED 1
#define CLIENT_OWED_ORPHAN 2

/* client_owe -- request id's reply is read later, maybe by another call */
int client_owe(struct rpmemctl_session *s, uint32_t id);
/*
 * client_owed_take -- 1 if id's reply arrived while another call read
 * (its result in *err, an ERROR's message the session's errmsg) and is
 * forgotten now; 0 if it has not come yet
 */
int client_owed_take(struct rpmemctl_session *s, uint32_t id, int *err);
/* client_owed_arrived -- id's reply is kept, ready to take */
int client_owed_arrived(const struct rpmemctl_session *s, uint32_t id);
/* client_owed_done -- id's reply was read by its owner: forget it */
void client_owed_done(struct rpmemctl_session *s, uint32_t id);
/* client_owed_orphan -- nobody will take id's reply: drop it when it comes */
void client_owed_orphan(struct rpmemctl_session *s, uint32_t id);
/* client_owed_free -- forget every owed reply (the session's end) */
void client_owed_free(struct rpmemctl_session *s);

/*
 * share.c -- the session of a process's shared links to one target. Every
 * call of a link with an entry that may use the session holds the entry's
 * lock (client_share_lock).
 */
#define CLIENT_SHARE_POOLS 16 /* pools a shared session (rpmemd's handles) */
struct client_share;
/* client_share_get -- the entry of these settings, made if need be */
struct client_share *client_share_get(const char *host, const char *port,
				      enum rpmemctl_transport transport,
				      rpmemctl_log_fn log_fn, void *log_arg,
				      int log_prio);
/* client_share_put -- one link less; the last frees the entry */
void client_share_put(struct client_share **e);
void client_share_lock(struct client_share *e);
void client_share_unlock(struct client_share *e);
/*
 * client_share_join -- the entry's session, one user more; NULL if it has
 * none, it is lost or full: the caller opens one and adopts it
 */
struct rpmemctl_session *client_share_join(struct client_share *e);
/* client_share_adopt -- s, just opened, is the one new links join */
void client_share_adopt(struct client_share *e, struct rpmemctl_session *s);
/* client_share_leave -- one user less; the last closes it; *s = NULL */
void client_share_leave(struct client_share *e, struct rpmemctl_session **s);

/*
 * struct rpmemctl_pool -- one open remote pool. It does not own its
 * session; closing the session first detaches it (sess = NULL) and every
 * later call except rpmemctl_pool_close fails with -ENOTCONN.
 */
struct rpmemctl_pool {
	struct rpmemctl_session *sess;
	struct rpmemctl_pool *next;
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

/* --- channel.c: framed requests and replies ---------------------------- */

/* client_set_timeout -- send/receive bound of the control socket, seconds */
int client_set_timeout(struct rpmemctl_session *s, int secs);

/*
 * client_seterr -- set the session's error message (printf style); it
 * names no pool
 */
void client_seterr(struct rpmemctl_session *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * client_pool_seterr -- set the message of p's session to one that says
 * which pool and what failed (printf style): a failure of the pool call
 * under way reports it as it is, without naming the pool again
 */
void client_pool_seterr(struct rpmemctl_pool *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * client_check -- 0 if the session can send, else -ECONNRESET (the
 * connection was lost earlier) with the message kept in errmsg
 */
int client_check(struct rpmemctl_session *s);

/*
 * client_lost -- the connection broke while doing `what`: close the
 * stream for good and return the error to report (-ECONNRESET for EOF,
 * reset and broken pipe; -ETIMEDOUT; -EPROTO for a desynchronized
 * stream)
 */
int client_lost(struct rpmemctl_session *s, int err, const char *what);

/*
 * client_local_fault -- reading (or, for a pull, writing) the caller's
 * local copy faulted (guard.h: -EFAULT, its file shrank; -EHWPOISON) while
 * doing `what`: part of a frame may have gone, so the stream is closed for
 * good, and the message blames the local copy, not the network. Returns
 * err.
 */
int client_local_fault(struct rpmemctl_session *s, int err, const char *what);

/*
 * client_send_held -- send the frames held back (small WRITEs and
 * BARRIERs, which await no reply, wait for the next frame that does, to
 * go out in one gathered send with it); 0 or the -errno of a lost session
 */
int client_send_held(struct rpmemctl_session *s);
/*
 * client_send_frames -- send n (<= RPMEM_SEND_FRAMES_MAX) frames in one
 * gathered write, each with a fresh request id (into f[i].id)
 */
int client_send_frames(struct rpmemctl_session *s, struct rpmem_frame *f,
		       size_t n);

/*
 * client_send -- send one frame (header + p1 + p2 in one gathered write)
 * with a fresh request id, returned in *id (may be NULL)
 */
int client_send(struct rpmemctl_session *s, uint16_t type, const void *p1,
		size_t l1, const void *p2, size_t l2, uint32_t *id);

/*
 * client_recv_hdr -- wait for the reply to request id and check that it
 * is of type `type`. On success the payload (h->len bytes) is still
 * unread: the caller reads it with client_recv_payload or straight into
 * its own buffer. An ERROR reply is consumed, its message kept in errmsg
 * and its code returned as -errno. Anything else is a protocol error.
 */
int client_recv_hdr(struct rpmemctl_session *s, uint32_t id, uint16_t type,
		    struct rpmem_hdr *h);

/* client_recv_payload -- read h->len bytes of payload into s->rbuf */
int client_recv_payload(struct rpmemctl_session *s, const struct rpmem_hdr *h);

/*
 * client_recv -- client_recv_hdr + client_recv_payload; the payload is in
 * s->rbuf, its length in *len (may be NULL)
 */
int client_recv(struct rpmemctl_session *s, uint32_t id, uint16_t type,
		size_t *len);

/*
 * client_call -- send a request and wait for its reply of type `reply`;
 * the reply payload is in s->rbuf, its length in *len (may be NULL)
 */
int client_call(struct rpmemctl_session *s, uint16_t type, const void *req,
		size_t req_len, uint16_t reply, size_t *len);

/* client_bad_reply -- a reply payload did not decode: protocol error */
int client_bad_reply(struct rpmemctl_session *s, uint16_t type);

/* --- errors.c ----------------------------------------------------------- */

/*
 * Every public call returning int is bracketed: a *_begin at its start
 * clears the calling thread's message (and the object's), the matching
 * *_end on its way out makes sure a failure has a message, in the object
 * it concerns and in the thread (rpmemctl_strerror, *_open_err). Calls
 * nested inside another public call do the same; the outer *_end has
 * the last word.
 */

/*
 * client_vmsg -- printf into an error message buffer dst[len], the text
 * escaped (rpmem_text_escape): a message may quote what a target sent,
 * and whoever prints it must not pass a terminal's controls on. Every
 * error message of the library is written through it.
 */
void client_vmsg(char *dst, size_t len, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));

/*
 * client_set_last -- err and its text for this thread's current call
 * (errors with no object to hold them)
 */
void client_set_last(int err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* client_last -- the current call's message if it failed with err, or NULL */
const char *client_last(int err);
/* client_api_begin -- a public call starts: forget the thread's message */
void client_api_begin(void);
/* client_api_end -- give a failure with no message a generic one */
int client_api_end(int ret, const char *what);
/* client_copy_err -- the current call's message for ret into buf */
void client_copy_err(int ret, char *buf, size_t len);
/* client_sess_begin / client_sess_end -- bracket a call on session s */
void client_sess_begin(struct rpmemctl_session *s);
int client_sess_end(struct rpmemctl_session *s, int ret, const char *what);
/*
 * client_pool_begin / client_pool_end -- bracket a call on pool p: a
 * failure's message names the pool and is kept in the pool, its session
 * and the thread
 */
void client_pool_begin(struct rpmemctl_pool *p);
int client_pool_end(struct rpmemctl_pool *p, int ret, const char *what);

/* --- logging.c ---------------------------------------------------------- */

/*
 * client_log -- a message about session s (and its pools, syncs and
 * events) to s's sink, or to the global one if s has none or is NULL
 */
void client_log(const struct rpmemctl_session *s, int prio, const char *fmt,
		...) __attribute__((format(printf, 3, 4)));

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

/* --- atomic.c ----------------------------------------------------------- */

/*
 * client_pool_preserve -- PRESERVE the n ranges (any number; sent
 * RPMEM_MAX_PRESERVE_RANGES at a time) before they are written: their
 * old blocks kept in the target's undo journal. 0 at once if the target
 * has no RPMEM_CAP_UNDO or the pool was empty when opened.
 */
int client_pool_preserve(struct rpmemctl_pool *pool,
			 const struct rpmem_preserve_range *v, size_t n);
/*
 * client_pool_preserve_post -- PRESERVE of n <= RPMEM_MAX_PRESERVE_RANGES
 * ranges before the writes that follow: where the data plane is in band
 * (the target journals the ranges before it applies a later write,
 * whatever the reply says), sent and its reply awaited later by
 * client_pool_preserve_wait(*tok); else sent and awaited now (*tok 0:
 * nothing to wait for)
 */
int client_pool_preserve_post(struct rpmemctl_pool *pool,
			      const struct rpmem_preserve_range *v, size_t n,
			      uint32_t *tok);
/* client_pool_preserve_wait -- the reply of PRESERVE tok (0: none) */
int client_pool_preserve_wait(struct rpmemctl_pool *pool, uint32_t tok);

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

/* client_pool_detach -- the session is closing: drop the link to it */
void client_pool_detach(struct rpmemctl_pool *p);

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

/* --- sync_cfg.c: the sync configuration and result objects ------------ */

#define CLIENT_SYNC_DEFAULT_BS RPMEMCTL_BLOCK_SIZE_DEFAULT
#define CLIENT_SYNC_MIN_BS RPMEMCTL_BLOCK_SIZE_MIN /* the fine block size */

/*
 * struct rpmemctl_sync_cfg -- what a sync does. Internal: the deprecated
 * rpmemctl_pool_sync fills one on its stack from the frozen
 * struct rpmemctl_sync_opts (source then points at the caller's string).
 */
struct rpmemctl_sync_cfg {
	enum rpmemctl_sync_mode mode;
	unsigned flags;	     /* RPMEMCTL_SYNC_* */
	uint32_t block_size; /* 0 = CLIENT_SYNC_DEFAULT_BS */
	const char *source;  /* source_buf or a caller's string; may be NULL */
	char *source_buf;    /* owned copy set by rpmemctl_sync_cfg_set_source */
	rpmemctl_progress_fn progress;
	void *progress_arg;
	rpmemctl_range_fn range;
	void *range_arg;
	int local_fd; /* the local copy's file, checked for changes; -1 none */
	struct rpmemctl_dirtylog *dirty_log; /* push: consulted, cleared */
	uint64_t bwlimit; /* bytes per second of pool data sent; 0 = none */
	/*
	 * set by a link (link.c) that marked the pool syncing itself, on
	 * this session: no other writer can have written since
	 */
	int syncing_ours;
	/*
	 * set by a link's stop: a push given a dirty log compares every
	 * block anyway (stores never flushed are not marked), then clears
	 * the log as usual
	 */
	int compare_all;
	/* the local copy's hashes, shared with other syncs; NULL: none */
	struct rpmemctl_local_hashes *local_hashes;
	/* the local file whose history (FILE.rpmemgen) is compared; owned */
	char *history;
	/* a pull's commit hook: after the data, before the history */
	int (*commit)(void *arg);
	void *commit_arg;
};

/* the least bwlimit a sync takes, bytes per second */
#define CLIENT_BWLIMIT_MIN 4096

/*
 * struct rpmemctl_sync_result -- what a sync did. Internal, free to grow:
 * the deprecated rpmemctl_pool_sync copies the LIBRPMEMCTL_1 fields into
 * the caller's frozen struct rpmemctl_sync_stats one by one.
 */
struct rpmemctl_sync_result {
	uint64_t size;
	uint64_t block_size;
	uint64_t blocks_total;
	uint64_t blocks_differ;
	uint64_t bytes_differ;
	uint64_t bytes_transferred;
	uint64_t data_bytes;
	uint64_t generation;
	uint64_t elapsed_ns;
	uint64_t blocks_compared; /* coarse blocks whose hashes were compared */
	int dirty_only;		 /* sent only the dirty log's extents */
	int gen_cmp; /* enum rpmemctl_gen_cmp of the histories compared */
	char dirty_fallback[200]; /* why not, with a log; "" otherwise */
	char note[RPMEM_MSG_MAX + 1]; /* the target's notes (pool->note) */
};

/*
 * client_pool_gen_adopt -- GEN adopt: the pool's history becomes count
 * ids (generations.c)
 */
int client_pool_gen_adopt(struct rpmemctl_pool *p, const uint64_t *ids,
			  unsigned count);

/*
 * client_pool_live_copy -- p (by the target's listing) is a live copy
 * whose writer is gone: syncing with a live writer's source, held by no
 * writer (1, its source into src); -EBUSY while a writer holds it (its
 * name into src); 0 for any other pool; -errno of the listing
 */
int client_pool_live_copy(struct rpmemctl_pool *p, char *src, size_t len);

/* --- history.c: a local file's generation history ------------------------ */

#define CLIENT_HIST_LIVE_MAX 16
struct client_history {
	struct rpmemctl_generations g;
	uint64_t size;	   /* the file's when the newest id last agreed */
	uint64_t mtime_ns; /* its mtime then */
	/*
	 * the pools (uuids) a live writer replicates the file to: every
	 * write made since it was recorded went to each of them before it
	 * was acknowledged (docs/ARCHITECTURE.md, "A crash is not a split
	 * brain")
	 */
	uint8_t live[CLIENT_HIST_LIVE_MAX][16];
	unsigned nlive;
	/* the newest id was made for local writes no copy holds yet */
	int local;
	/* split brains reported already (a tag per pair of newest ids) */
	uint64_t split[CLIENT_HIST_LIVE_MAX];
	unsigned nsplit;
};

/*
 * client_history_lock, client_history_unlock -- serialize the read,
 * new id and record of local histories among the process's syncs
 */
void client_history_lock(void);
void client_history_unlock(void);
/*
 * client_history_read -- file's history (FILE.rpmemgen) into *h; -ENOENT
 * if none, -EBADMSG if damaged
 */
int client_history_read(const char *file, struct client_history *h);
/*
 * client_history_writable -- FILE.rpmemgen can be written (its temporary
 * file created and removed): 0, else -errno
 */
int client_history_writable(const char *file);
/* client_history_written -- file changed since h was recorded: 1, else 0 */
int client_history_written(const char *file, const struct client_history *h);
/*
 * client_history_record -- h's ids become count of ids (a new id in
 * front if new_id, or if there are none), recorded with file's current
 * size and mtime, crash-safely
 */
int client_history_record(const char *file, struct client_history *h,
			  const uint64_t *ids, unsigned count, int new_id);
/* new_id of client_history_record: the new id is a promotion's */
#define CLIENT_HIST_PROMOTION 2
/* client_history_is_live -- uuid is one of h's live pools */
int client_history_is_live(const struct client_history *h,
			   const uint8_t uuid[16]);
/*
 * client_history_live -- under client_history_lock: uuid added to (on)
 * or dropped from (!on) file's live pools (every one if uuid is NULL),
 * the recorded size and mtime kept; 0 if file has no history
 */
int client_history_live(const char *file, const uint8_t uuid[16], int on);
/*
 * client_history_outdate -- under client_history_lock: a new id in front
 * of file's history for the copies a live writer goes on with after
 * leaving one behind (its recorded size, mtime and live pools kept); the
 * ids into *g. -ENOENT without a history
 */
int client_history_outdate(const char *file, struct rpmemctl_generations *g);
/*
 * client_history_split -- under client_history_lock: the split brain
 * tag is kept in file's history (the recorded size and mtime kept): 1 if
 * it is new (or there is no history), 0 if kept before, else -errno
 */
int client_history_split(const char *file, uint64_t tag);
/* client_history_epoch -- moves whenever a record drops the live pools */
unsigned client_history_epoch(void);

/* --- dirtylog.c: the persistent dirty log -------------------------------- */

uint64_t client_dirtylog_extent(const struct rpmemctl_dirtylog *l);
uint64_t client_dirtylog_nextents(const struct rpmemctl_dirtylog *l);
int client_dirtylog_marked(const struct rpmemctl_dirtylog *l, uint64_t e);
uint64_t client_dirtylog_generation(const struct rpmemctl_dirtylog *l);
/* client_dirtylog_clean -- it has the clean mark, or we cleared it */
int client_dirtylog_clean(const struct rpmemctl_dirtylog *l);
/* client_dirtylog_bound -- relative to pool uuid at generation (intact) */
int client_dirtylog_bound(const struct rpmemctl_dirtylog *l,
			  const uint8_t uuid[16], uint64_t generation);
/* client_dirtylog_clear -- clear the marks, keep the binding (dirtylog.c) */
int client_dirtylog_clear(struct rpmemctl_dirtylog *l);
/* client_dirtylog_reset -- bind to uuid, generation, then clear the marks */
int client_dirtylog_reset(struct rpmemctl_dirtylog *l, const uint8_t uuid[16],
			  uint64_t generation);

/* client_sync_mode_valid -- a known enum rpmemctl_sync_mode */
int client_sync_mode_valid(enum rpmemctl_sync_mode mode);
/* client_sync_flags_valid -- only known RPMEMCTL_SYNC_* flags */
int client_sync_flags_valid(unsigned flags);
/* client_sync_bs_valid -- a power of two from 4 KiB to 64 MiB (not 0) */
int client_sync_bs_valid(uint32_t bs);

/* --- fence.c ------------------------------------------------------------ */

/*
 * client_fence_cmd -- the fence-peer handler's command
 * (RPMEM_FENCE_PEER_HANDLER, else replicate.fence_peer_handler of
 * rpmemctl.conf) into buf; "" if none
 */
void client_fence_cmd(char *buf, size_t len);
/*
 * client_fence_run -- run the handler cmd for the target name of file:
 * "fence" waited for (its exit status, -1 if it ran out of time or could
 * not start), "unfence" not waited for (0 once started)
 */
int client_fence_run(const char *cmd, const char *action, const char *file,
		     const char *name);

/* --- credentials.c ------------------------------------------------------ */

/*
 * client_cfg_get_str -- a string setting (a libconfig path) of the
 * user's rpmemctl.conf, else of the system's, into buf: 1 if found, 0 if
 * neither sets it, -EINVAL for a malformed file or a value not a string
 */
int client_cfg_get_str(const char *name, char *buf, size_t len);

/* client_cfg_uses_tls -- the configuration asks for TLS */
int client_cfg_uses_tls(const struct rpmemctl_session_cfg *c);
/* client_tls_ctx -- the TLS context cfg describes; err says why not */
int client_tls_ctx(const struct rpmemctl_session_cfg *c,
		   struct rpmem_tls_ctx **out, char *err, size_t errlen);

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

/* --- link.c: what a set of links (links.c) drives ------------------------ */

/*
 * client_link_flush_send -- a set's drain, first half: a flush posted
 * for every pending range, its completion owed (a DEGRADED link retries
 * if due, a data plane that does not split a flush drains in full); 0
 * or the link's failure; 1 if, under the kick-out, the link owes so many
 * that none was posted (the next round's covers these writes)
 */
int client_link_flush_send(struct rpmemctl_link *l);
/* client_link_flush_recv -- read one owed FLUSH reply (0 if none owed) */
int client_link_flush_recv(struct rpmemctl_link *l);
/*
 * a set's drain rounds in flight at most (links.c: pipelined rounds); 1
 * while a link's data plane posts one flush at a time
 * (client_link_flush_serial)
 */
#define LINKS_ROUNDS 4
/*
 * client_links_wakes -- waiting drains the set has woken so far (links.c;
 * each drain that waits is woken once its round ended, or to read)
 */
uint64_t client_links_wakes(const struct rpmemctl_links *s);
/* client_links_spins -- the reader's waits for replies that spun first */
uint64_t client_links_spins(const struct rpmemctl_links *s);

/* client_link_owed -- FLUSH replies owed */
unsigned client_link_owed(const struct rpmemctl_link *l);
/*
 * client_link_flushes_sent, _read -- FLUSHes the link ever sent, and
 * their replies read (or dropped when its session closed): every FLUSH
 * sent so far is answered once _read reaches what _sent is now
 */
uint64_t client_link_flushes_sent(const struct rpmemctl_link *l);
uint64_t client_link_flushes_read(const struct rpmemctl_link *l);
/* client_link_flush_serial -- its data plane posts one flush at a time */
int client_link_flush_serial(const struct rpmemctl_link *l);
/*
 * client_link_wait_fd -- the descriptor owed completions come on (the
 * data plane's wait_fd); -1 if none is owed
 */
int client_link_wait_fd(struct rpmemctl_link *l);
/*
 * client_link_wait_edge -- it owes, and its descriptor's news may be
 * taken by another waiter: poll it briefly
 */
int client_link_wait_edge(const struct rpmemctl_link *l);
/*
 * client_link_ready -- the link's oldest owed flush can be collected
 * without waiting for the network (client_pool_flush_collect)
 */
int client_link_ready(struct rpmemctl_link *l);
/*
 * the kick-out (link.c, docs/ARCHITECTURE.md "A frozen target is kicked
 * out"): client_link_set_kickout sets its bounds (ms 0: off, bytes 0: no
 * bound on bytes); client_link_overdue says a LIVE link passed them
 * (how long its oldest reply has been awaited, 0 if it did not);
 * client_link_kick drops it (DEGRADED, -ETIMEDOUT); client_link_retry_now
 * is a DEGRADED link's last retry, at most ms waiting for its target
 */
void client_link_set_kickout(struct rpmemctl_link *l, unsigned ms,
			     uint64_t bytes);
uint64_t client_link_overdue(struct rpmemctl_link *l);
int client_link_kick(struct rpmemctl_link *l);
int client_link_retry_now(struct rpmemctl_link *l);
/*
 * a set's start where k < n under the kick-out: client_link_start_probe
 * probes a DOWN link's target in a thread (0) or says the link pushes
 * as before (1); client_link_start_probed says how its probe went (1
 * answered, 0 running, -1 failed; done: the answer taken);
 * client_link_defer drops a link whose target did not answer in time
 * (DEGRADED, behind; its reconnect waits for the probe)
 */
int client_link_start_probe(struct rpmemctl_link *l);
int client_link_start_probed(struct rpmemctl_link *l, int done);
int client_link_defer(struct rpmemctl_link *l, uint64_t waited_ns);
/*
 * client_link_clear_acked -- a LIVE link that holds every write sent to
 * it, acknowledged (replies that came read first), clears its dirty log
 * (client_dirtylog_clear): 1 if it did, 0 if it may not now, or -errno
 */
int client_link_clear_acked(struct rpmemctl_link *l);
/*
 * links_status -- where a set of links publishes its replicas' state and
 * lag (links_status.c), and what it published last
 */
#define LINKS_STATUS_MAX 8192
struct links_status {
	char path[4096];
	uint8_t state[16];
	/* links a clean stop left consistent and equal: published synced */
	uint16_t stopped_synced;
	uint64_t at_ns;
	int written;
	int failed;
};
int links_status_set(struct links_status *st, const char *path);
void links_status_update(struct links_status *st, unsigned k, unsigned n,
			 unsigned holding, struct rpmemctl_link *const *link,
			 const uint64_t *bytes, const uint64_t *t0);

/* client_link_name -- "host:port/region/pool" of the link's target */
const char *client_link_name(const struct rpmemctl_link *l);
/* client_link_history -- the file whose history the link's pushes keep */
const char *client_link_history(const struct rpmemctl_link *l);
/*
 * client_link_adopt -- the link's pool (live or synced) takes the ids as
 * its history (GEN adopt, after every owed reply is read); a failure is
 * the link's (degraded or failed by its policy). 0 or -errno
 */
int client_link_adopt(struct rpmemctl_link *l, const uint64_t *ids,
		      unsigned count);

/* --- local_hashes.c ------------------------------------------------------ */

struct stat;
/*
 * client_local_hashes_get -- lh (and fl, npieces 4 KiB hashes, if not
 * NULL) of the file st describes, len bytes in blocks of bs: from h if it
 * holds them, else computed by hash(arg) into lh and fl and kept; 0 or
 * hash's error
 */
int client_local_hashes_get(struct rpmemctl_local_hashes *h,
			    const struct stat *st, uint64_t len, uint32_t bs,
			    int tree, uint64_t *lh, uint64_t *fl,
			    uint64_t npieces, int (*hash)(void *), void *arg);

#endif
