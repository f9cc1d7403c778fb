/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * req_data.c -- requests that move or hash pool data: WRITE, READ, FLUSH,
 * HASH, HASHV
 */
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "guard.h"
#include "events.h"
#include "hash.h"
#include "history.h"
#include "journal.h"
#include "log.h"
#include "net.h"
#include "session_int.h"
#include "sock.h"
#include "store.h"
#include "util.h"
#include "wire.h"

/* io_args -- one transfer between the connection and a pool */
struct io_args {
	struct rpmemd_session *s;
	const struct rpmem_hdr *hd;
	uint8_t *addr; /* in the mapping */
	size_t len;
	int fd;	      /* take_file: the pool file */
	uint64_t off; /* take_file: addr's offset in it */
	int ferr;     /* take_file: the first failed write into the file */
};

/* take_fn -- the n bytes of a WRITE's data from done on into the pool */
typedef int (*take_fn)(struct io_args *a, size_t done, size_t n);

/* take_mapped -- read them into the mapping (guarded by the caller) */
static int take_mapped(struct io_args *a, size_t done, size_t n)
{
	return rpmem_net_read_full(&a->s->conn, a->addr + done, n);
}

/*
 * take_file -- move them into the pool file with its write path; after
 * a failed write into the file (a->ferr), drop the rest
 */
static int take_file(struct io_args *a, size_t done, size_t n)
{
	int ferr, ret;

	if (a->ferr)
		return rpmem_net_discard(&a->s->conn, n);
	ret = rpmem_net_read_to_file(&a->s->conn, a->fd, a->off + done, n,
				     &ferr);
	a->ferr = ferr;
	return ret;
}

/*
 * paced_read -- a WRITE's data under the daemon's bwlimit: a chunk at a
 * time, each when the pacer lets it in. The frame's deadline moves on by
 * the time the daemon itself waited: a limit that makes a frame take
 * longer than frame_timeout does not time the client out.
 */
static int paced_read(struct io_args *a, take_fn take)
{
	struct rpmemd_session *s = a->s;
	struct rpmemd_pacer *pc = &s->set->pacer;
	size_t done = 0;

	if (!rpmemd_pacer_rate(pc))
		return take(a, 0, a->len);
	while (done < a->len) {
		size_t n = a->len - done;
		if (n > RPMEMD_PACE_CHUNK)
			n = RPMEMD_PACE_CHUNK;
		uint64_t wait = rpmemd_pacer_take(pc, n);
		if (wait) {
			struct timespec ts = { .tv_sec = (time_t)(wait / 1000000000u),
					       .tv_nsec = (long)(wait % 1000000000u) };
			while (nanosleep(&ts, &ts) && errno == EINTR)
				;
			if (s->conn.deadline_ns)
				rpmem_conn_set_deadline(&s->conn,
							s->conn.deadline_ns +
								wait);
		}
		int ret = take(a, done, n);
		if (ret)
			return ret;
		done += n;
	}
	return 0;
}

/*
 * changed_msg -- the words for a fault (guard.h) on pool p's mapping:
 * poisoned memory (-EHWPOISON); else its file shrank under rpmemd, or,
 * still whole, its file system had no page for it (a full tmpfs under a
 * pool with holes: rpmemd_pool_sparse)
 */
static const char *changed_msg(const struct rpmemd_pool *p, int err)
{
	if (err == -EHWPOISON)
		return "a media error (poisoned memory) in its mapping on the target";
	if (rpmemd_pool_fd(p) >= 0 && !rpmemd_pool_shrunk(p))
		return "the target's file system could not allocate a page of the pool file (is the region full?)";
	return "the pool file changed on the target (it was truncated while rpmemd used it)";
}

/* recv_into -- read a WRITE's data into the mapping (guarded) */
static int recv_into(void *arg)
{
	return paced_read(arg, take_mapped);
}

/* send_from -- a DATA reply from the mapping (guarded) */
static int send_from(void *arg)
{
	struct io_args *a = arg;
	return rpmem_send_frame(&a->s->conn, RPMEM_MSG_DATA, a->hd->id, NULL,
				0, a->addr, a->len);
}

/*
 * mapping_fault -- a fault moving data of pool p: the stream is out of
 * step (part of a frame went), so the session ends; a plaintext client
 * is told why first (over TLS the record state is unknown)
 */
static int mapping_fault(struct rpmemd_session *s, const struct rpmem_hdr *hd,
			 const struct rpmemd_pool *p, int err)
{
	WARN("session %u: pool '%s': %s during %s; ending the session", s->id,
	     rpmemd_pool_name(p), changed_msg(p, err),
	     rpmem_msg_type_str(hd->type));
	if (!s->conn.tls && err == -EFAULT && hd->type == RPMEM_MSG_WRITE)
		conn_reply_err(s, hd->id, RPMEM_E_IO, "pool '%s': %s",
			       rpmemd_pool_name(p), changed_msg(p, err));
	return -EIO;
}

/*
 * write_by_file -- a new pool's data goes through the file, not the
 * mapping: on tmpfs (and a disk file system's unwritten extents) the
 * first touch of a page through the mapping faults and zeroes it before
 * the data overwrites it, while a write of whole pages into the file
 * skips the zeroing and the fault. That pays only where the pages are
 * not in use yet (a pool that was empty, a dense sync's new file, which
 * on a disk has its blocks allocated but unwritten: through the mapping
 * each page's first store converts them at a fault, 3 to 4 times a
 * first mirror's time for 1 GiB on ext4), and only for page-granularity
 * files: on PMem (fsdax, devdax) persistence is the mapping's cache
 * flush, and over TLS the data is decrypted into user memory anyway.
 * A FLUSH persists the range as before (msync of a mapping range syncs
 * the file's pages however they were written; tmpfs has nothing to do).
 * Only WRITEs of a page or more take the file (write_apply): a shorter
 * one overwrites no whole page, so its page is faulted in and zeroed
 * either way, and through the file it would cost two system calls (the
 * shrink check's fstat and the pwrite) where the mapping costs none. A
 * live replica's WRITEs are mostly such (a transaction's log entries
 * and its object).
 */
int write_by_file(const struct rpmemd_session *s,
		  const struct rpmemd_handle *h)
{
	const struct rpmemd_pool *p = h->pool;

	return rpmemd_pool_fd(p) >= 0 && !rpmemd_pool_is_pmem(p) &&
	       !s->conn.tls;
}

/*
 * recv_to_file -- a WRITE's data into the pool file (write_by_file). A
 * file shrunk under rpmemd fails it as a fault of the mapping would (a
 * write would grow it back); a failed write into the file (ENOSPC, EIO)
 * is deferred to the next FLUSH like any failed WRITE, and the session
 * goes on (the data left the stream whole).
 */
static int recv_to_file(struct rpmemd_session *s, const struct rpmem_hdr *hd,
			struct rpmemd_handle *h, const struct rpmem_msg_io *io)
{
	struct rpmemd_pool *p = h->pool;
	struct io_args a = { s,
			     hd,
			     rpmemd_pool_addr(p) + io->offset,
			     io->len,
			     rpmemd_pool_fd(p),
			     io->offset,
			     0 };
	int ret;

	if (rpmemd_pool_shrunk(p))
		return -EFAULT;
	ret = paced_read(&a, take_file);
	if (ret || !a.ferr)
		return ret;
	rpmem_log_limited(&rpmemd_log_write_failed, LOG_WARNING,
			  "session %u: pool '%s': writing %u bytes at offset %llu into %s/%s failed: %s",
			  s->id, rpmemd_pool_name(p), io->len,
			  (unsigned long long)io->offset,
			  rpmemd_pool_region(p)->cfg.path, rpmemd_pool_name(p),
			  strerror(-a.ferr));
	conn_defer(s, rpmem_err_from_errno(a.ferr),
		   "WRITE of %u bytes at offset %llu into pool '%s' failed on the target: %s",
		   io->len, (unsigned long long)io->offset, rpmemd_pool_name(p),
		   strerror(-a.ferr));
	return 1;
}

/*
 * undo_msg -- why the blocks a write overwrites could not be kept in the
 * pool's undo journal, or (dense: a dense sync into a new file) the old
 * blocks around it copied into the new file (rpmemd_pool_preserve failed
 * with err)
 */
static const char *undo_msg(int err, int dense)
{
	if (dense && (err == -ENOSPC || err == -EDQUOT))
		return "the target's region has no room for the new file this dense sync is written into; the pool file was not written: the pool can still be rolled back (rpmemctl rollback) or synced again once there is room";
	if (dense)
		return "the old blocks around it could not be copied into the new file this dense sync is written into (see rpmemd's log); the pool file was not written";
	if (err == -ENOSPC || err == -EDQUOT)
		return "the target's region has no room for the undo journal of the blocks it overwrites; nothing was written: the pool can still be rolled back (rpmemctl rollback) or synced again once there is room";
	if (err == -EFAULT || err == -EHWPOISON)
		return "the pool's mapping faulted while its old blocks were read into the undo journal";
	return "its old blocks could not be kept in the undo journal (see rpmemd's log); nothing was written";
}

/*
 * write_apply -- a checked WRITE into the pool: its old blocks kept in
 * the undo journal if there is one, its hashes forgotten, its data
 * received
 */
static int write_apply(struct rpmemd_session *s, const struct rpmem_hdr *hd,
		       struct rpmemd_handle *h, const struct rpmem_msg_io *iop,
		       size_t dlen)
{
	struct rpmem_msg_io io = *iop;
	int ret;

	/* the old blocks kept first (a client that sent no PRESERVE) */
	struct rpmem_preserve_range pr = { io.offset, io.len };
	if (io.len && (ret = rpmemd_pool_preserve(h->pool, &pr, 1))) {
		conn_defer(s, rpmem_err_from_errno(ret),
			   "WRITE of %u bytes at offset %llu into pool '%s' refused: %s",
			   io.len, (unsigned long long)io.offset,
			   rpmemd_pool_name(h->pool),
			   undo_msg(ret, rpmemd_pool_swapping(h->pool)));
		return rpmem_net_discard(&s->conn, dlen);
	}
	/* the block hashes are invalid before the data changes */
	if (rpmemd_hcache_write_begin(rpmemd_pool_hcache(h->pool), io.offset,
				      io.len)) {
		conn_defer(s, RPMEM_E_IO,
			   "WRITE to pool '%s' refused: its hash cache cannot be marked dirty (see rpmemd's log)",
			   rpmemd_pool_name(h->pool));
		return rpmem_net_discard(&s->conn, dlen);
	}
	if (h->xfer == 1) {
		h->xfer = 2;
		rpmemd_ev_transfer(s, h, RPMEM_EV_CREATE, NULL);
	}
	if ((ret = reorder_take(s, io.handle, io.offset, io.len))) {
		ret = ret > 0 ? 0 : ret; /* a test build held it */
	} else if (h->by_file && io.len >= rpmemd_pool_pagesize(h->pool)) {
		ret = recv_to_file(s, hd, h, &io);
	} else {
		struct io_args a = {
			s,	hd, rpmemd_pool_addr(h->pool) + io.offset,
			io.len, -1, 0,
			0
		};
		ret = rpmem_guard_run(recv_into, &a);
	}
	rpmemd_hcache_write_end(rpmemd_pool_hcache(h->pool), io.offset, io.len);
	if (ret == -EFAULT || ret == -EHWPOISON)
		return mapping_fault(s, hd, h->pool, ret);
	if (ret)
		return ret > 0 ? 0 : ret; /* > 0: deferred to the FLUSH */
	h->xfer_bytes += io.len;
	rpmemd_pool_count(h->pool, io.len, 0);
	__atomic_add_fetch(&s->bytes_written, io.len, __ATOMIC_RELAXED);
	return 0;
}

/*
 * req_write -- WRITE: receive the data straight into the pool mapping
 * (a new pool's through its file: write_by_file).
 * WRITE has no reply, so whatever is wrong with it (a malformed head, an
 * unknown or read-only handle, a range outside the pool) is remembered
 * and reported by the next FLUSH; the data is read and dropped so the
 * stream stays in sync. Only a lost connection ends the session.
 */
int req_write(struct rpmemd_session *s, const struct rpmem_hdr *hd)
{
	struct rpmem_msg_io io;
	struct rpmemd_handle *h;
	uint8_t head[RPMEM_WRITE_HDR_SIZE];
	char why[RPMEM_MSG_MAX];
	uint8_t st;
	int ret;

	if (hd->len < RPMEM_WRITE_HDR_SIZE) {
		conn_defer(s, RPMEM_E_PROTO,
			   "invalid WRITE received: %u-byte payload is shorter than its %d-byte head",
			   hd->len, RPMEM_WRITE_HDR_SIZE);
		return rpmem_net_discard(&s->conn, hd->len);
	}
	if ((ret = rpmem_net_read_full(&s->conn, head, sizeof(head))))
		return ret;
	size_t dlen = hd->len - RPMEM_WRITE_HDR_SIZE;
	if (rpmem_io_decode(head, sizeof(head), &io)) {
		conn_defer(s, RPMEM_E_PROTO,
			   "invalid WRITE received: malformed head (a length over %u or an offset + length that overflows)",
			   RPMEM_MAX_IO);
		return rpmem_net_discard(&s->conn, dlen);
	}
	if (io.len != dlen) {
		conn_defer(s, RPMEM_E_PROTO,
			   "invalid WRITE received: its head (%u bytes at offset %llu) does not match the %zu data bytes of the frame",
			   io.len, (unsigned long long)io.offset, dlen);
		return rpmem_net_discard(&s->conn, dlen);
	}
	h = handle_get(s, io.handle);
	if (!h) {
		conn_defer(s, RPMEM_E_INVAL, "WRITE to unknown handle %u",
			   io.handle);
		return rpmem_net_discard(&s->conn, dlen);
	}
	if (h->mode != RPMEM_OPEN_RW) {
		conn_defer(s, RPMEM_E_RDONLY,
			   "WRITE to pool '%s' opened read-only",
			   rpmemd_pool_name(h->pool));
		return rpmem_net_discard(&s->conn, dlen);
	}
	if (!rpmem_range_ok(io.offset, io.len, rpmemd_pool_size(h->pool))) {
		conn_defer(s, RPMEM_E_INVAL,
			   "WRITE of %u bytes at offset %llu is outside pool '%s' (%llu bytes)",
			   io.len, (unsigned long long)io.offset,
			   rpmemd_pool_name(h->pool),
			   (unsigned long long)rpmemd_pool_size(h->pool));
		return rpmem_net_discard(&s->conn, dlen);
	}
	if ((st = rpmemd_pool_state(h->pool)) != RPMEM_POOL_SYNCING) {
		conn_defer(s, RPMEM_E_INVAL,
			   "WRITE to pool '%s' refused: it is %s; a pool must be marked syncing (SET_STATE) before its data changes",
			   rpmemd_pool_name(h->pool), rpmem_state_str(st));
		return rpmem_net_discard(&s->conn, dlen);
	}
	if (rpmemd_append_refused(s, h, why, sizeof(why))) {
		conn_defer(s, RPMEM_E_DENIED, "WRITE refused: %s", why);
		return rpmem_net_discard(&s->conn, dlen);
	}
	/* no cut of a live pool sees it half applied (store_cut.c) */
	rpmemd_pool_write_begin(h->pool);
	ret = write_apply(s, hd, h, &io, dlen);
	rpmemd_pool_write_end(h->pool);
	return ret;
}

/* req_read -- READ: reply DATA straight from the mapping */
int req_read(struct rpmemd_session *s, const struct rpmem_hdr *hd)
{
	struct rpmem_msg_io m;
	struct rpmemd_handle *h;
	uint32_t flags;
	int ret;

	if (rpmem_read_decode(s->req, hd->len, &m, &flags))
		return conn_bad_payload(s, hd);
	if (!(h = handle_get(s, m.handle)))
		return conn_reply_err(s, hd->id, RPMEM_E_INVAL,
				      "READ from unknown handle %u", m.handle);
	if (!rpmem_range_ok(m.offset, m.len, rpmemd_pool_size(h->pool)))
		return conn_reply_err(s, hd->id, RPMEM_E_INVAL,
				      "READ of %u bytes at offset %llu is outside pool '%s' (%llu bytes)",
				      m.len, (unsigned long long)m.offset,
				      rpmemd_pool_name(h->pool),
				      (unsigned long long)rpmemd_pool_size(
					      h->pool));
	if (rpmemd_pool_read_prepare(h->pool))
		return conn_reply_err(s, hd->id, RPMEM_E_IO,
				      "pool '%s' cannot be read: a dense sync's new file could not be completed (see rpmemd's log)",
				      rpmemd_pool_name(h->pool));
	/* data the scrub record calls damaged only when asked for */
	if (!(flags & RPMEM_READ_DAMAGED) &&
	    rpmemd_read_check(s, hd, h->pool, 0, NULL, m.offset, m.len, &ret))
		return ret;
	__atomic_add_fetch(&s->bytes_read, m.len, __ATOMIC_RELAXED);
	struct io_args a = { s,	    hd, rpmemd_pool_addr(h->pool) + m.offset,
			     m.len, -1, 0,
			     0 };
	ret = rpmem_guard_run(send_from, &a);
	if (ret == -EFAULT || ret == -EHWPOISON)
		return mapping_fault(s, hd, h->pool, ret);
	return ret;
}

/*
 * flush_apply -- the checks and the persist of a FLUSH or BARRIER (what:
 * its name): 0, or an RPMEM_E_* code with the reason in why
 */
static uint32_t flush_apply(struct rpmemd_session *s, const char *what,
			    const struct rpmem_msg_flush *m, char *why,
			    size_t wl)
{
	struct rpmemd_handle *h;
	uint8_t st;

	if (!(h = handle_get(s, m->handle))) {
		snprintf(why, wl, "%s of unknown handle %u", what, m->handle);
		return RPMEM_E_INVAL;
	}
	if (h->mode != RPMEM_OPEN_RW) {
		snprintf(why, wl, "%s of pool '%s' opened read-only", what,
			 rpmemd_pool_name(h->pool));
		return RPMEM_E_RDONLY;
	}
	if (!rpmem_range_ok(m->offset, m->len, rpmemd_pool_size(h->pool))) {
		snprintf(why, wl,
			 "%s of %llu bytes at offset %llu is outside "
			 "pool '%s' (%llu bytes)",
			 what, (unsigned long long)m->len,
			 (unsigned long long)m->offset,
			 rpmemd_pool_name(h->pool),
			 (unsigned long long)rpmemd_pool_size(h->pool));
		return RPMEM_E_INVAL;
	}
	if ((st = rpmemd_pool_state(h->pool)) != RPMEM_POOL_SYNCING) {
		snprintf(why, wl,
			 "%s of pool '%s' refused: it is %s; a pool "
			 "must be marked syncing (SET_STATE) before its data "
			 "changes",
			 what, rpmemd_pool_name(h->pool), rpmem_state_str(st));
		return RPMEM_E_INVAL;
	}
	uint64_t t0 = rpmem_now_ns();
	int ret = rpmemd_pool_persist_guarded(h->pool, m->offset, m->len);
	uint64_t dt = rpmem_now_ns() - t0;
	if (ret == -EFAULT || ret == -EHWPOISON) {
		WARN("session %u: pool '%s': %s during %s", s->id,
		     rpmemd_pool_name(h->pool), changed_msg(h->pool, ret),
		     what);
		snprintf(why, wl, "persisting pool '%s' failed: %s",
			 rpmemd_pool_name(h->pool), changed_msg(h->pool, ret));
		return RPMEM_E_IO;
	}
	if (ret) {
		snprintf(why, wl,
			 "persisting %llu bytes at offset %llu of pool "
			 "'%s' failed: %s",
			 (unsigned long long)m->len,
			 (unsigned long long)m->offset,
			 rpmemd_pool_name(h->pool), strerror(-ret));
		return RPMEM_E_IO;
	}
	rpmemd_hcache_flushed(rpmemd_pool_hcache(h->pool), m->offset, m->len);
	rpmemd_pool_count(h->pool, 0, 1);
	/* a drain boundary of the writer: a cut asked for is made here */
	rpmemd_pool_drained(h->pool);
	__atomic_store_n(&s->last_flush_ns, dt, __ATOMIC_RELAXED);
	return 0;
}

/* req_flush -- FLUSH: persist a range, or report a deferred WRITE error */
int req_flush(struct rpmemd_session *s, const struct rpmem_hdr *hd)
{
	struct rpmem_msg_flush m;
	char why[RPMEM_MSG_MAX];
	uint32_t code;
	int ret, had;

	if (rpmem_flush_decode(s->req, hd->len, &m))
		return conn_bad_payload(s, hd);
	if ((ret = conn_take_deferred(s, hd->id, &had)) || had)
		return ret;
	reorder_apply(s, 0);
	if ((code = flush_apply(s, "FLUSH", &m, why, sizeof(why))))
		return conn_reply_err(s, hd->id, code, "%s", why);
	__atomic_add_fetch(&s->flushes, 1, __ATOMIC_RELAXED);
	return conn_reply_ok(s, hd->id);
}

/*
 * req_barrier -- BARRIER: a FLUSH without a reply, in the session's
 * order; a failure is deferred to the next FLUSH like a failed WRITE's,
 * and after one nothing more is persisted until it has been reported
 */
int req_barrier(struct rpmemd_session *s, const struct rpmem_hdr *hd)
{
	struct rpmem_msg_flush m;
	char why[RPMEM_MSG_MAX];
	uint32_t code;

	if (rpmem_flush_decode(s->req, hd->len, &m)) {
		conn_defer(s, RPMEM_E_PROTO, "invalid BARRIER received: "
			   "malformed %u-byte payload", hd->len);
		return 0;
	}
	if (s->derr_code)
		return 0;
	reorder_barrier(s);
	if ((code = flush_apply(s, "BARRIER", &m, why, sizeof(why))))
		conn_defer(s, code, "%s", why);
	else
		__atomic_add_fetch(&s->barriers, 1, __ATOMIC_RELAXED);
	return 0;
}

static struct rpmem_log_limit log_hash =
	RPMEM_LOG_LIMIT_INIT("refused hash requests", 5);

/*
 * hash_check -- every block of every range starts inside the pool (the
 * last one of a range may be short), and the request hashes at most
 * RPMEM_MAX_HASH_BYTES of it (HASHV ranges may overlap: a 4 KiB request
 * could ask for the pool 340 times); else an ERROR reply and *ok = 0
 */
static int hash_check(struct rpmemd_session *s, const struct rpmem_hdr *hd,
		      const struct rpmemd_handle *h, uint32_t bs,
		      const struct rpmem_hash_range *rv, uint32_t n, int *ok)
{
	uint64_t size = rpmemd_pool_size(h->pool), bytes = 0;
	char cap[RPMEM_SIZE_STR];

	*ok = 0;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t off = rv[i].offset;
		if (off < size && (uint64_t)(rv[i].count - 1) * bs < size - off) {
			uint64_t len = (uint64_t)rv[i].count * bs;
			bytes += len < size - off ? len : size - off;
			continue;
		}
		if (hd->type == RPMEM_MSG_HASH)
			return conn_reply_err(s, hd->id, RPMEM_E_INVAL,
					      "HASH of %u blocks of %u bytes at offset %llu goes past the end of pool '%s' (%llu bytes)",
					      rv[i].count, bs,
					      (unsigned long long)off,
					      rpmemd_pool_name(h->pool),
					      (unsigned long long)size);
		return conn_reply_err(s, hd->id, RPMEM_E_INVAL,
				      "HASHV range %u of %u (offset %llu, %u x %u bytes) goes past the end of pool '%s' (%llu bytes)",
				      i + 1, n, (unsigned long long)off,
				      rv[i].count, bs,
				      rpmemd_pool_name(h->pool),
				      (unsigned long long)size);
	}
	if (bytes > RPMEM_MAX_HASH_BYTES) {
		rpmem_fmt_size(RPMEM_MAX_HASH_BYTES, cap, sizeof(cap));
		rpmemd_ev_refuse(s->set, s, NULL, "RPMEM_MAX_HASH_BYTES",
				 "%s of %llu bytes of pool '%s' refused (over %s)",
				 rpmem_msg_type_str(hd->type),
				 (unsigned long long)bytes,
				 rpmemd_pool_name(h->pool), cap);
		rpmem_log_limited(&log_hash, LOG_NOTICE,
				  "%s: %s of %llu bytes refused (over %s a request)",
				  s->holder, rpmem_msg_type_str(hd->type),
				  (unsigned long long)bytes, cap);
		return conn_reply_err(s, hd->id, RPMEM_E_LIMIT,
				      "%s would hash %llu bytes of pool '%s'; this target hashes at most %s (RPMEM_MAX_HASH_BYTES) per request",
				      rpmem_msg_type_str(hd->type),
				      (unsigned long long)bytes,
				      rpmemd_pool_name(h->pool), cap);
	}
	if (rpmemd_pool_read_prepare(h->pool))
		return conn_reply_err(s, hd->id, RPMEM_E_IO,
				      "pool '%s' cannot be read: a dense sync's new file could not be completed (see rpmemd's log)",
				      rpmemd_pool_name(h->pool));
	*ok = 1;
	return 0;
}

/*
 * reply_hashes -- HASHES: XXH3-64 of the blocks of n checked ranges
 * (total blocks in all), in request order
 */
static int reply_hashes(struct rpmemd_session *s, const struct rpmem_hdr *hd,
			const struct rpmemd_handle *h, uint32_t bs,
			const struct rpmem_hash_range *rv, uint32_t n,
			uint32_t total, uint32_t flags)
{
	struct rpmemd_hcache_use use = { 0, 0, 0 };
	uint64_t size = rpmemd_pool_size(h->pool);
	uint64_t *hashes = malloc((size_t)total * sizeof(*hashes));
	uint8_t *buf = conn_out_buf(s);

	if (!hashes || !buf) {
		free(hashes);
		return conn_reply_err(s, hd->id, RPMEM_E_LIMIT, "out of memory");
	}
	uint64_t *dst = hashes;
	/*
	 * tree hashes (a sync's coarse pass) and 4 KiB ones (its fine pass)
	 * go through the cache, which keeps 4 KiB pieces
	 */
	int tree = (flags & RPMEM_HASH_TREE) != 0;
	int cached = rpmemd_pool_hcache(h->pool) &&
		     (tree || bs == RPMEM_HASH_PIECE);
	for (uint32_t i = 0; i < n && cached; i++)
		cached = rv[i].offset % RPMEM_HASH_PIECE == 0;
	if (cached)
		rpmemd_pool_check_file(h->pool);
	/* a bounded number of requests hash at once, daemon-wide */
	rpmemd_hash_enter(s);
	int err = 0;
	for (uint32_t i = 0; i < n && !err; i++) {
		uint64_t len = (uint64_t)rv[i].count * bs;
		if (len > size - rv[i].offset)
			len = size - rv[i].offset;
		if (cached)
			err = rpmemd_hcache_hash(rpmemd_pool_hcache(h->pool),
						 rpmemd_pool_addr(h->pool),
						 size, rv[i].offset, bs,
						 rv[i].count, tree, dst, 2,
						 flags & RPMEM_HASH_FULL, &use);
		else if (tree)
			err = rpmem_hash_tree_blocks(rpmemd_pool_addr(h->pool) +
							     rv[i].offset,
						     len, bs, dst, NULL, 2);
		else
			err = rpmem_hash_blocks(rpmemd_pool_addr(h->pool) +
							rv[i].offset,
						len, bs, dst, 2);
		dst += rv[i].count;
	}
	rpmemd_hash_leave(s);
	if (cached)
		DBG("session %u: pool '%s': %s of %u blocks at offset %llu%s: %llu from the hash cache, %llu hashed (%llu KiB read)",
		    s->id, rpmemd_pool_name(h->pool),
		    rpmem_msg_type_str(hd->type), total,
		    (unsigned long long)rv[0].offset,
		    flags & RPMEM_HASH_FULL ? " (full)" : "",
		    (unsigned long long)use.cached,
		    (unsigned long long)use.hashed,
		    (unsigned long long)use.pieces * 4);
	if (err) {
		free(hashes);
		WARN("session %u: pool '%s': %s during %s", s->id,
		     rpmemd_pool_name(h->pool), changed_msg(h->pool, err),
		     rpmem_msg_type_str(hd->type));
		return conn_reply_err(s, hd->id, RPMEM_E_IO,
				      "cannot hash pool '%s': %s",
				      rpmemd_pool_name(h->pool),
				      changed_msg(h->pool, err));
	}
	/* to little-endian in place */
	for (uint32_t i = 0; i < total; i++)
		le64_put((uint8_t *)&hashes[i], hashes[i]);
	struct rpmem_msg_hashes rep = { .count = total,
					.hashes = (const uint8_t *)hashes };
	int len = rpmem_hashes_encode(buf, RPMEM_MAX_PAYLOAD, &rep);
	free(hashes);
	if (len < 0)
		return conn_reply_err(s, hd->id, RPMEM_E_INTERNAL,
				      "cannot encode HASHES");
	return rpmem_send_frame(&s->conn, RPMEM_MSG_HASHES, hd->id, buf,
				(size_t)len, NULL, 0);
}

/* req_hash -- HASH: XXH3-64 of count blocks; the last one may be short */
int req_hash(struct rpmemd_session *s, const struct rpmem_hdr *hd)
{
	struct rpmem_msg_hash m;
	struct rpmemd_handle *h;
	int ret, ok;

	if (rpmem_hash_decode(s->req, hd->len, &m))
		return conn_bad_payload(s, hd);
	if (!(h = handle_get(s, m.handle)))
		return conn_reply_err(s, hd->id, RPMEM_E_INVAL,
				      "HASH of unknown handle %u", m.handle);
	struct rpmem_hash_range rg = { .offset = m.offset, .count = m.count };
	if ((ret = hash_check(s, hd, h, m.block_size, &rg, 1, &ok)) || !ok)
		return ret;
	return reply_hashes(s, hd, h, m.block_size, &rg, 1, m.count, m.flags);
}

/*
 * req_hashv -- HASHV: the hashes of several ranges in one HASHES reply,
 * each range as HASH would hash it
 */
int req_hashv(struct rpmemd_session *s, const struct rpmem_hdr *hd)
{
	struct rpmem_msg_hashv m;
	struct rpmemd_handle *h;
	int ret, ok;

	if (rpmem_hashv_decode(s->req, hd->len, &m))
		return conn_bad_payload(s, hd);
	if (!(h = handle_get(s, m.handle)))
		return conn_reply_err(s, hd->id, RPMEM_E_INVAL,
				      "HASHV of unknown handle %u", m.handle);
	ret = hash_check(s, hd, h, m.block_size, m.ranges, m.nranges, &ok);
	if (ret || !ok)
		return ret;
	return reply_hashes(s, hd, h, m.block_size, m.ranges, m.nranges,
			    m.total, 0);
}

/*
 * req_preserve -- PRESERVE: the old contents of the ranges' blocks made
 * durable in the pool's undo journal before the initiator writes them
 * (its RDMA writes bypass rpmemd; over TCP it saves a sync per WRITE)
 */
int req_preserve(struct rpmemd_session *s, const struct rpmem_hdr *hd)
{
	struct rpmem_msg_preserve m;
	struct rpmemd_handle *h;
	int ret;

	if (rpmem_preserve_decode(s->req, hd->len, &m))
		return conn_bad_payload(s, hd);
	if (!(h = handle_get(s, m.handle)))
		return conn_reply_err(s, hd->id, RPMEM_E_INVAL,
				      "PRESERVE of unknown handle %u", m.handle);
	if (h->mode != RPMEM_OPEN_RW)
		return conn_reply_err(s, hd->id, RPMEM_E_RDONLY,
				      "PRESERVE of pool '%s' opened read-only",
				      rpmemd_pool_name(h->pool));
	for (uint32_t i = 0; i < m.nranges; i++)
		if (!rpmem_range_ok(m.ranges[i].offset, m.ranges[i].len,
				    rpmemd_pool_size(h->pool)))
			return conn_reply_err(s, hd->id, RPMEM_E_INVAL,
					      "PRESERVE range %u of %u (%llu bytes at offset %llu) is outside pool '%s' (%llu bytes)",
					      i + 1, m.nranges,
					      (unsigned long long)m.ranges[i]
						      .len,
					      (unsigned long long)m.ranges[i]
						      .offset,
					      rpmemd_pool_name(h->pool),
					      (unsigned long long)
						      rpmemd_pool_size(
							      h->pool));
	if (rpmemd_pool_state(h->pool) != RPMEM_POOL_SYNCING)
		return conn_reply_err(s, hd->id, RPMEM_E_INVAL,
				      "PRESERVE of pool '%s' refused: it is not syncing",
				      rpmemd_pool_name(h->pool));
	/*
	 * over TCP rpmemd sees the WRITEs: they wait for their own blocks
	 * while the journal thread works ahead; RDMA writes come unseen, so
	 * the reply waits until the blocks are durable in the journal
	 */
	if (h->xport == RPMEM_XPORT_TCP)
		ret = rpmemd_pool_preserve_async(h->pool, m.ranges, m.nranges);
	else
		ret = rpmemd_pool_preserve(h->pool, m.ranges, m.nranges);
	if (ret)
		return conn_reply_err(s, hd->id, rpmem_err_from_errno(ret),
				      "pool '%s': %s",
				      rpmemd_pool_name(h->pool),
				      undo_msg(ret,
					       rpmemd_pool_swapping(h->pool)));
	DBG("session %u: pool '%s': PRESERVE of %u ranges", s->id,
	    rpmemd_pool_name(h->pool), m.nranges);
	return conn_reply_ok(s, hd->id);
}
