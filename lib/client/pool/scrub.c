/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * scrub.c -- rpmemctl_pool_scrub: the target re-reads the pool and
 * compares it with the hashes it recorded at its last commit
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client_pool.h"
#include "util.h"

/* a run of pieces with the same verdict, not yet reported */
struct scrub_run {
	uint64_t off, len;
	enum rpmemctl_scrub_status st;
	uint8_t why;
	rpmemctl_scrub_fn fn;
	void *arg;
	int result; /* 0, 1 (damage seen), 2 (unverified, no damage) */
};

/* run_flush -- report the run, if any, and count it into the result */
static void run_flush(struct scrub_run *r)
{
	if (!r->len)
		return;
	if (r->st == RPMEMCTL_SCRUB_DAMAGED)
		r->result = 1;
	else if (r->st == RPMEMCTL_SCRUB_UNVERIFIED && r->result == 0)
		r->result = 2;
	if (r->fn)
		r->fn(r->off, r->len, r->st,
		      r->st == RPMEMCTL_SCRUB_UNVERIFIED ?
			      rpmem_scrub_why_str(r->why) : "",
		      r->arg);
	r->len = 0;
}

/* run_add -- [off, off + len) is st (why): extend the run or start one */
static void run_add(struct scrub_run *r, uint64_t off, uint64_t len,
		    enum rpmemctl_scrub_status st, uint8_t why)
{
	if (st != RPMEMCTL_SCRUB_UNVERIFIED)
		why = 0;
	if (r->len && r->st == st && r->why == why && r->off + r->len == off) {
		r->len += len;
		return;
	}
	run_flush(r);
	*r = (struct scrub_run){ off, len, st, why, r->fn, r->arg, r->result };
}

/* scrub_call -- one SCRUB of count pieces of version from off, into rep */
static int scrub_call(struct rpmemctl_pool *p, uint64_t version,
		      uint64_t off, uint32_t count,
		      struct rpmem_msg_scrub_reply *rep)
{
	struct rpmemctl_session *s = p->sess;
	struct rpmem_msg_scrub m = { .handle = p->handle, .offset = off,
				     .count = count, .version = version };
	uint8_t buf[RPMEM_REQ_SMALL];
	size_t rlen;
	int len = rpmem_scrub_encode(buf, sizeof(buf), &m);
	int ret = len < 0 ? len :
			    client_call(s, RPMEM_MSG_SCRUB, buf, (size_t)len,
					RPMEM_MSG_SCRUB_REPLY, &rlen);

	if (ret)
		return ret;
	if (rpmem_scrub_reply_decode(s->rbuf, rlen, rep) ||
	    rep->count != count)
		return client_bad_reply(s, RPMEM_MSG_SCRUB_REPLY);
	return 0;
}

/* scrub_chunk -- one SCRUB of count pieces from off, into the runs */
static int scrub_chunk(struct rpmemctl_pool *p, uint64_t version,
		       uint64_t off, uint32_t count, struct scrub_run *run)
{
	struct rpmem_msg_scrub_reply rep;
	int ret = scrub_call(p, version, off, count, &rep);

	if (ret)
		return ret;
	for (uint32_t i = 0; i < count; i++) {
		uint64_t o = off + (uint64_t)i * RPMEM_HASH_PIECE;
		uint64_t n = p->size - o < RPMEM_HASH_PIECE ? p->size - o :
							      RPMEM_HASH_PIECE;
		run_add(run, o, n, (enum rpmemctl_scrub_status)rep.pieces[i],
			rep.why);
	}
	return 0;
}

/* pool_scrub -- every piece of the pool, a SCRUB request at a time */
static int pool_scrub(struct rpmemctl_pool *p, uint64_t version,
		      unsigned flags, rpmemctl_scrub_fn fn,
		      rpmemctl_progress_fn progress, void *arg)
{
	struct scrub_run run = { .fn = fn, .arg = arg };
	uint64_t step = (uint64_t)RPMEM_MAX_SCRUB_PIECES * RPMEM_HASH_PIECE;
	int ret = client_pool_usable(p);

	if (ret)
		return ret;
	if (flags) {
		client_seterr(p->sess, "invalid scrub flags 0x%x", flags);
		return -EINVAL;
	}
	if (version && !(p->sess->caps & RPMEM_CAP_VERSIONS)) {
		client_seterr(p->sess, "%s:%s (%s) keeps no versions: it is older than this client",
			      p->sess->host, p->sess->port, p->sess->server);
		return -ENOTSUP;
	}
	if (!(p->sess->caps & RPMEM_CAP_SCRUB)) {
		client_seterr(p->sess, "%s:%s (%s) cannot scrub pools: it is older than this client",
			      p->sess->host, p->sess->port, p->sess->server);
		return -ENOTSUP;
	}
	for (uint64_t off = 0; off < p->size && !ret; off += step) {
		uint64_t left = p->size - off;
		uint32_t count = left >= step ? RPMEM_MAX_SCRUB_PIECES :
				 (uint32_t)((left + RPMEM_HASH_PIECE - 1) /
					    RPMEM_HASH_PIECE);
		ret = scrub_chunk(p, version, off, count, &run);
		if (!ret && progress)
			progress(off + (left < step ? left : step), p->size,
				 arg);
	}
	if (ret)
		return ret;
	run_flush(&run);
	return run.result;
}

/* most damaged ranges a refused read names, as rpmemd's READ check */
#define READ_RANGES_MAX 8

/* the damaged runs a read check found, named as rpmemd's READ check does */
struct read_runs {
	uint64_t off, end; /* the run under way, [off, end) */
	unsigned runs;
	size_t n;
	char text[RPMEM_MSG_MAX / 2];
};

/* runs_flush -- name the run under way, if any */
static void runs_flush(struct read_runs *r)
{
	if (r->end == r->off)
		return;
	if (++r->runs <= READ_RANGES_MAX && r->n < sizeof(r->text))
		r->n += (size_t)snprintf(r->text + r->n,
					 sizeof(r->text) - r->n,
					 "%s0x%llx length %llu",
					 r->runs > 1 ? ", " : "",
					 (unsigned long long)r->off,
					 (unsigned long long)(r->end - r->off));
	r->off = r->end = 0;
}

/* runs_add -- the piece [off, end) is damaged */
static void runs_add(struct read_runs *r, uint64_t off, uint64_t end)
{
	if (r->end != r->off && r->end == off) {
		r->end = end;
		return;
	}
	runs_flush(r);
	r->off = off;
	r->end = end;
}

/*
 * read_check_chunk -- one SCRUB of count pieces from off, its damaged
 * pieces into r (unverified pieces are read as they are: what the target
 * cannot compare it sends unchecked over TCP too)
 */
static int read_check_chunk(struct rpmemctl_pool *p, uint64_t off,
			    uint32_t count, struct read_runs *r)
{
	struct rpmem_msg_scrub_reply rep;
	int ret = scrub_call(p, 0, off, count, &rep);

	if (ret)
		return ret;
	for (uint32_t i = 0; i < count; i++) {
		uint64_t o = off + (uint64_t)i * RPMEM_HASH_PIECE;
		uint64_t e = p->size - o < RPMEM_HASH_PIECE ?
				     p->size :
				     o + RPMEM_HASH_PIECE;
		if (rep.pieces[i] == RPMEM_SCRUB_DAMAGED)
			runs_add(r, o, e);
	}
	return 0;
}

/* read_check_wanted -- whether reads of p are checked here */
static int read_check_wanted(const struct rpmemctl_pool *p)
{
	const char *e = getenv("RPMEM_READ_SCRUB");
	uint32_t caps = p->sess->caps;

	/* a target that checks its READs keeps the record SCRUB compares */
	if (!(caps & RPMEM_CAP_DAMAGE) || !(caps & RPMEM_CAP_SCRUB))
		return 0;
	return p->xport->ops->reads_bypass || (e && !strcmp(e, "1"));
}

int client_read_check(struct rpmemctl_pool *p, uint64_t off, uint64_t len)
{
	struct rpmemctl_session *s = p->sess;
	uint64_t step = (uint64_t)RPMEM_MAX_SCRUB_PIECES * RPMEM_HASH_PIECE;
	uint64_t at = off / RPMEM_HASH_PIECE * RPMEM_HASH_PIECE;
	uint64_t end = off + len;
	struct read_runs *r;
	int ret = 0;

	if (!len || !read_check_wanted(p))
		return 0;
	if (!(r = calloc(1, sizeof(*r))))
		return -ENOMEM;
	for (; at < end && !ret; at += step) {
		uint64_t left = end - at;
		uint32_t count = left >= step ? RPMEM_MAX_SCRUB_PIECES :
				 (uint32_t)((left + RPMEM_HASH_PIECE - 1) /
					    RPMEM_HASH_PIECE);
		ret = read_check_chunk(p, at, count, r);
	}
	runs_flush(r);
	if (!ret && r->runs) {
		if (r->runs > READ_RANGES_MAX && r->n < sizeof(r->text))
			snprintf(r->text + r->n, sizeof(r->text) - r->n,
				 " and %u more ranges",
				 r->runs - READ_RANGES_MAX);
		client_seterr(s, "pool '%s' is damaged at %s: its data is not as recorded at its last commit (rpmemctl scrub); the read is refused (read it with --force to take the data as it is, or repair it with a sync from a good copy)",
			      p->name, r->text);
		ret = client_read_damaged(s, -EILSEQ) ? 0 : -EILSEQ;
		if (!ret)
			s->errmsg[0] = '\0';
	}
	free(r);
	return ret;
}

/* repair_chunk -- one REPAIR of n bytes at off */
static int repair_chunk(struct rpmemctl_pool *p, uint64_t off,
			const uint8_t *data, uint32_t n)
{
	struct rpmem_msg_io io = { .handle = p->handle, .offset = off,
				   .len = n };
	uint8_t head[RPMEM_WRITE_HDR_SIZE];
	uint32_t id = 0;
	size_t rlen;
	int len = rpmem_io_encode(head, sizeof(head), &io);
	int ret = len < 0 ? len :
			    client_send(p->sess, RPMEM_MSG_REPAIR, head,
					(size_t)len, data, n, &id);

	return ret ? ret : client_recv(p->sess, id, RPMEM_MSG_OK, &rlen);
}

/* pool_repair -- [off, off + len) in requests of at most RPMEM_MAX_IO */
static int pool_repair(struct rpmemctl_pool *p, uint64_t off,
		       const uint8_t *data, size_t len)
{
	int ret = client_pool_usable(p);

	if (!ret && !(p->sess->caps & RPMEM_CAP_REPAIR)) {
		client_seterr(p->sess, "%s:%s (%s) cannot repair pools: it is older than this client",
			      p->sess->host, p->sess->port, p->sess->server);
		ret = -ENOTSUP;
	}
	for (size_t done = 0; !ret && done < len;) {
		uint32_t n = len - done < RPMEM_MAX_IO ? (uint32_t)(len - done) :
							 RPMEM_MAX_IO;
		ret = repair_chunk(p, off + done, data + done, n);
		done += n;
	}
	return ret;
}

RPMEM_EXPORT int rpmemctl_pool_repair(struct rpmemctl_pool *pool,
				      uint64_t offset, const void *data,
				      size_t len)
{
	client_pool_begin(pool);
	return client_pool_end(pool, pool_repair(pool, offset, data, len),
			       "repair");
}

/* repair_at_chunk -- one REPAIR_AT of n bytes of version at off */
static int repair_at_chunk(struct rpmemctl_pool *p, uint64_t version,
			   uint64_t off, const uint8_t *data, uint32_t n)
{
	struct rpmem_msg_read_at m = { .handle = p->handle, .offset = off,
				       .len = n, .version = version };
	uint8_t head[RPMEM_REPAIR_AT_HDR_SIZE];
	uint32_t id = 0;
	size_t rlen;
	int len = rpmem_read_at_encode(head, sizeof(head), &m);
	int ret = len < 0 ? len :
			    client_send(p->sess, RPMEM_MSG_REPAIR_AT, head,
					(size_t)len, data, n, &id);

	return ret ? ret : client_recv(p->sess, id, RPMEM_MSG_OK, &rlen);
}

/* pool_repair_at -- pool_repair, into version's records (REPAIR_AT) */
static int pool_repair_at(struct rpmemctl_pool *p, uint64_t version,
			  uint64_t off, const uint8_t *data, size_t len)
{
	int ret = client_pool_usable(p);

	if (!ret && !(p->sess->caps & RPMEM_CAP_REPAIR_AT)) {
		client_seterr(p->sess, "%s:%s (%s) cannot repair versions: it is older than this client",
			      p->sess->host, p->sess->port, p->sess->server);
		ret = -ENOTSUP;
	}
	/* none at offset 0: the version's header */
	if (!ret && !len)
		return off ? -EINVAL : repair_at_chunk(p, version, 0, data, 0);
	for (size_t done = 0; !ret && done < len;) {
		uint32_t n = len - done < RPMEM_MAX_IO ? (uint32_t)(len - done) :
							 RPMEM_MAX_IO;
		ret = repair_at_chunk(p, version, off + done, data + done, n);
		done += n;
	}
	return ret;
}

RPMEM_EXPORT int rpmemctl_pool_repair_at(struct rpmemctl_pool *pool,
					 uint64_t version, uint64_t offset,
					 const void *data, size_t len)
{
	client_pool_begin(pool);
	return client_pool_end(pool,
			       pool_repair_at(pool, version, offset, data,
					      len),
			       "repair a version of");
}

/* rpmemctl_pool_scrub -- pool_scrub; a failure's message names the pool */
RPMEM_EXPORT int rpmemctl_pool_scrub(struct rpmemctl_pool *pool,
				     unsigned flags, rpmemctl_scrub_fn fn,
				     rpmemctl_progress_fn progress, void *arg)
{
	client_pool_begin(pool);
	return client_pool_end(pool,
			       pool_scrub(pool, 0, flags, fn, progress, arg),
			       "scrub");
}

RPMEM_EXPORT int rpmemctl_pool_scrub_at(struct rpmemctl_pool *pool,
					uint64_t version, unsigned flags,
					rpmemctl_scrub_fn fn,
					rpmemctl_progress_fn progress,
					void *arg)
{
	client_pool_begin(pool);
	return client_pool_end(pool,
			       pool_scrub(pool, version, flags, fn, progress,
					  arg),
			       "scrub a version");
}
