/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * req_scrub.c -- SCRUB: re-read pieces of a pool and compare them with the
 * hashes recorded at its last commit; the record made at that commit
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "events.h"
#include "log.h"
#include "scrub.h"
#include "session_int.h"
#include "sock.h"
#include "util.h"
#include "versions.h"

/* threads one request hashes with, as HASH */
#define SCRUB_THREADS 2

/*
 * scrub_refuse -- the reply to a SCRUB this target will not do (a
 * version, pieces past the end), in *ret; 1 if it was refused
 */
static int scrub_refuse(struct rpmemd_session *s, const struct rpmem_hdr *hd,
			const struct rpmem_msg_scrub *m,
			const struct rpmemd_pool *p, int *ret)
{
	if (m->offset < rpmemd_pool_size(p) &&
	    (uint64_t)(m->count - 1) * RPMEM_HASH_PIECE <
		    rpmemd_pool_size(p) - m->offset)
		return 0;
	*ret = conn_reply_err(s, hd->id, RPMEM_E_INVAL,
			      "SCRUB of %u pieces at offset %llu goes past the end of pool '%s' (%llu bytes)",
			      m->count, (unsigned long long)m->offset,
			      rpmemd_pool_name(p),
			      (unsigned long long)rpmemd_pool_size(p));
	return 1;
}

void rpmemd_damage_event(struct rpmemd_session *s, struct rpmemd_pool *p,
			 const char *text)
{
	struct rpmemd_meta m;
	struct rpmem_msg_event e = { .verb = RPMEM_EV_CHANGE,
				     .object = RPMEM_EVO_POOL,
				     .session = s->id,
				     .size = rpmemd_pool_size(p) };

	rpmemd_pool_get_meta(p, &m);
	e.state = m.state;
	e.generation = m.generation;
	rpmem_strlcpy(e.region, rpmemd_pool_region(p)->cfg.name,
		      sizeof(e.region));
	rpmem_strlcpy(e.pool, rpmemd_pool_name(p), sizeof(e.pool));
	rpmem_strlcpy(e.identity, s->identity, sizeof(e.identity));
	rpmem_strlcpy(e.text, text, sizeof(e.text));
	rpmemd_event_publish(s->set, &e, s->identity);
}

void rpmemd_damage_report(struct rpmemd_session *s, struct rpmemd_pool *p,
			  const struct rpmemd_damage_change *c, int scrub)
{
	char text[RPMEM_STR_MAX + 1];
	unsigned long long kib = (unsigned long long)c->after * 4;

	if (scrub && c->found && c->after > c->before) {
		snprintf(text, sizeof(text),
			 "pool '%s' damaged: scrub found %zu damaged piece%s, %zu listed (%llu KiB); a sync from a good copy repairs them",
			 rpmemd_pool_name(p), c->found,
			 c->found == 1 ? "" : "s", c->after, kib);
		WARN("session %u: region '%s': %s", s->id,
		     rpmemd_pool_region(p)->cfg.name, text);
	} else if (c->before && !c->after) {
		snprintf(text, sizeof(text),
			 "pool '%s' repaired: no damaged piece is left (%zu were listed)",
			 rpmemd_pool_name(p), c->before);
		NOTICE("session %u: region '%s': %s", s->id,
		       rpmemd_pool_region(p)->cfg.name, text);
	} else if (c->after < c->before) {
		snprintf(text, sizeof(text),
			 "pool '%s' partly repaired: %zu damaged piece%s left (%llu KiB)",
			 rpmemd_pool_name(p), c->after,
			 c->after == 1 ? "" : "s", kib);
		NOTICE("session %u: region '%s': %s", s->id,
		       rpmemd_pool_region(p)->cfg.name, text);
	} else {
		return;
	}
	rpmemd_damage_event(s, p, text);
}

/*
 * req_scrub -- SCRUB of an open pool (a read open will do: the read right
 * was checked when it was opened). One request covers at most
 * RPMEM_MAX_SCRUB_PIECES (64 MiB), so a large pool is scrubbed in many
 * requests and no lock is held between them; it takes a hashing slot as
 * HASH does.
 */
int req_scrub(struct rpmemd_session *s, const struct rpmem_hdr *hd)
{
	struct rpmem_msg_scrub m;
	struct rpmemd_handle *h;
	uint8_t *buf = conn_out_buf(s);
	struct rpmem_msg_scrub_reply rep = { 0 };
	int ret, len;

	if (rpmem_scrub_decode(s->req, hd->len, &m))
		return conn_bad_payload(s, hd);
	if (!(h = handle_get(s, m.handle)))
		return conn_reply_err(s, hd->id, RPMEM_E_INVAL,
				      "SCRUB of unknown handle %u", m.handle);
	if (scrub_refuse(s, hd, &m, h->pool, &ret))
		return ret;
	uint8_t *piece = malloc(m.count);
	if (!buf || !piece) {
		free(piece);
		return conn_reply_err(s, hd->id, RPMEM_E_LIMIT, "out of memory");
	}
	if (m.version) {
		ret = scrub_version(s, hd, h, &m, piece, &rep);
		if (ret) {
			free(piece);
			return ret > 0 ? 0 : ret;
		}
	} else {
		struct rpmemd_damage_change chg;
		rpmemd_hash_enter(s);
		ret = rpmemd_scrub_check(h->pool, m.offset, m.count, piece,
					 &rep.why, &rep.generation,
					 SCRUB_THREADS, &chg);
		rpmemd_hash_leave(s);
		rpmemd_damage_report(s, h->pool, &chg, 1);
	}
	rep.count = m.count;
	rep.pieces = piece;
	len = ret ? -ENOMEM :
		    rpmem_scrub_reply_encode(buf, RPMEM_MAX_PAYLOAD, &rep);
	free(piece);
	if (len < 0)
		return conn_reply_err(s, hd->id, ret ? RPMEM_E_LIMIT :
						       RPMEM_E_INTERNAL,
				      ret ? "out of memory" :
					    "cannot encode SCRUB_REPLY");
	return rpmem_send_frame(&s->conn, RPMEM_MSG_SCRUB_REPLY, hd->id, buf,
				(size_t)len, NULL, 0);
}

/* most damaged ranges a refused read names */
#define READ_RANGES_MAX 8

/*
 * damaged_ranges -- the runs of damaged pieces of piece[count] (piece
 * first at first) as ", 0xOFF length N" into out[len]; how many runs
 */
static unsigned damaged_ranges(const uint8_t *piece, uint32_t count,
			       uint64_t first, uint64_t size, char *out,
			       size_t len)
{
	unsigned runs = 0;
	size_t n = 0;

	out[0] = '\0';
	for (uint32_t i = 0; i < count; i++) {
		uint32_t j = i;
		if (piece[i] != RPMEM_SCRUB_DAMAGED)
			continue;
		while (j + 1 < count && piece[j + 1] == RPMEM_SCRUB_DAMAGED)
			j++;
		uint64_t o = (first + i) * RPMEM_HASH_PIECE;
		uint64_t e = (first + j + 1) * RPMEM_HASH_PIECE;
		if (++runs <= READ_RANGES_MAX && n < len)
			n += (size_t)snprintf(out + n, len - n,
					      "%s0x%llx length %llu",
					      runs > 1 ? ", " : "",
					      (unsigned long long)o,
					      (unsigned long long)((e < size ?
								    e : size) -
								   o));
		i = j;
	}
	if (runs > READ_RANGES_MAX && n < len)
		snprintf(out + n, len - n, " and %u more ranges",
			 runs - READ_RANGES_MAX);
	return runs;
}

/* read_pieces -- the verdicts of count pieces from first; 0 or -ENOMEM */
static int read_pieces(struct rpmemd_session *s, struct rpmemd_pool *p,
		       uint64_t version, const uint8_t *data, uint64_t first,
		       uint32_t count, uint8_t *piece)
{
	struct rpmemd_damage_change chg;
	uint64_t gen;
	uint8_t why;
	int ret;

	rpmemd_hash_enter(s);
	if (version) {
		memset(piece, RPMEM_SCRUB_OK, count);
		ret = rpmemd_scrub_version_check(rpmemd_pool_region(p)->metafd,
						 rpmemd_pool_name(p),
						 rpmemd_pool_size(p), version,
						 first * RPMEM_HASH_PIECE,
						 count, data, piece, &why);
	} else {
		ret = rpmemd_scrub_check(p, first * RPMEM_HASH_PIECE, count,
					 piece, &why, &gen, SCRUB_THREADS,
					 &chg);
	}
	rpmemd_hash_leave(s);
	if (!ret && !version)
		rpmemd_damage_report(s, p, &chg, 1);
	return ret;
}

int rpmemd_read_check(struct rpmemd_session *s, const struct rpmem_hdr *hd,
		      struct rpmemd_pool *p, uint64_t version,
		      const uint8_t *data, uint64_t off, uint64_t len,
		      int *ret)
{
	uint64_t first = off / RPMEM_HASH_PIECE;
	uint64_t end = (off + len + RPMEM_HASH_PIECE - 1) / RPMEM_HASH_PIECE;
	uint32_t count = (uint32_t)(end - first);
	char ranges[RPMEM_MSG_MAX / 2];
	uint8_t *piece;
	unsigned runs;

	/* a version's image is at hand for whole pieces only */
	if (!len || (version && (off % RPMEM_HASH_PIECE ||
				 (len % RPMEM_HASH_PIECE &&
				  off + len != rpmemd_pool_size(p)))))
		return 0;
	if (!(piece = malloc(count)) ||
	    read_pieces(s, p, version, data, first, count, piece)) {
		free(piece);
		return 0; /* unverifiable: answered as before */
	}
	runs = damaged_ranges(piece, count, first, rpmemd_pool_size(p), ranges,
			      sizeof(ranges));
	free(piece);
	if (!runs)
		return 0;
	WARN("session %u: pool '%s': a read of %llu bytes at offset %llu%s refused: damaged at %s",
	     s->id, rpmemd_pool_name(p), (unsigned long long)len,
	     (unsigned long long)off, version ? " of a version" : "", ranges);
	if (version)
		*ret = conn_reply_err(s, hd->id, RPMEM_E_DAMAGED,
				      "version %llu of pool '%s' is damaged at %s: its image is not as recorded when it was current; the read is refused (read it with --force to take the data as it is)",
				      (unsigned long long)version,
				      rpmemd_pool_name(p), ranges);
	else
		*ret = conn_reply_err(s, hd->id, RPMEM_E_DAMAGED,
				      "pool '%s' is damaged at %s: its data is not as recorded at its last commit (rpmemctl scrub); the read is refused (read it with --force to take the data as it is, or repair it with a sync from a good copy)",
				      rpmemd_pool_name(p), ranges);
	return 1;
}

int read_at_chain(struct rpmemd_session *s, const struct rpmem_hdr *hd,
		  struct rpmemd_handle *h, uint64_t version, int *ret)
{
	char err[RPMEM_STR_MAX + 1];
	int r;

	if (h->vc && (rpmemd_vchain_gen(h->vc) == version ||
		      !rpmemd_vchain_retarget(h->vc, version)))
		return 0;
	rpmemd_vchain_close(&h->vc);
	r = rpmemd_vchain_open(h->pool, version, s, &h->vc, err,
			       sizeof(err));
	if (!r)
		return 0;
	*ret = conn_reply_err(s, hd->id,
			      r == -ENOENT ? RPMEM_E_NOPOOL :
			      r == -EAGAIN ? RPMEM_E_BUSY : RPMEM_E_IO,
			      "%s", err);
	return -1;
}

/*
 * restore_pieces -- version pieces [off, off + len) into buf; a range
 * that does not check is read again piece by piece, the pieces that
 * still fail marked damaged. 0, or -EAGAIN (the pool changed)
 */
static int restore_pieces(struct rpmemd_handle *h, uint64_t off,
			  uint64_t len, uint8_t *buf, uint8_t *piece)
{
	uint64_t bad;
	int ret = rpmemd_vchain_read(h->pool, h->vc, off, len, buf, &bad);

	if (ret != -EIO)
		return ret;
	for (uint64_t o = 0; o < len; o += RPMEM_HASH_PIECE) {
		uint64_t n = len - o < RPMEM_HASH_PIECE ? len - o :
							  RPMEM_HASH_PIECE;
		ret = rpmemd_vchain_read(h->pool, h->vc, off + o, n, buf + o,
					 &bad);
		if (ret == -EAGAIN)
			return ret;
		if (ret)
			piece[o / RPMEM_HASH_PIECE] = RPMEM_SCRUB_DAMAGED;
	}
	return 0;
}

int scrub_version(struct rpmemd_session *s, const struct rpmem_hdr *hd,
		  struct rpmemd_handle *h, const struct rpmem_msg_scrub *m,
		  uint8_t *piece, struct rpmem_msg_scrub_reply *rep)
{
	uint64_t len = (uint64_t)m->count * RPMEM_HASH_PIECE;
	uint8_t *buf;
	int ret = 0;

	if (read_at_chain(s, hd, h, m->version, &ret))
		return ret ? ret : 1;
	if (len > rpmemd_pool_size(h->pool) - m->offset)
		len = rpmemd_pool_size(h->pool) - m->offset;
	if (!(buf = malloc(len)))
		return conn_reply_err(s, hd->id, RPMEM_E_LIMIT,
				      "out of memory") ?: 1;
	memset(piece, RPMEM_SCRUB_OK, m->count);
	rep->generation = m->version;
	rpmemd_hash_enter(s);
	ret = restore_pieces(h, m->offset, len, buf, piece);
	if (ret == -EAGAIN) {
		rep->why = RPMEM_SCRUB_CHANGED;
		memset(piece, RPMEM_SCRUB_UNVERIFIED, m->count);
		rpmemd_vchain_close(&h->vc);
		ret = 0;
	} else if (!ret) {
		ret = rpmemd_scrub_version_check(rpmemd_pool_region(h->pool)
							 ->metafd,
						 rpmemd_pool_name(h->pool),
						 rpmemd_pool_size(h->pool),
						 m->version, m->offset,
						 m->count, buf, piece,
						 &rep->why);
	}
	rpmemd_hash_leave(s);
	free(buf);
	return ret ? conn_reply_err(s, hd->id, RPMEM_E_LIMIT,
				    "out of memory") ?: 1 :
		     0;
}

/*
 * repair_data -- the head (hsize bytes: REPAIR's or REPAIR_AT's) and data
 * of a repair off the connection: 0 with *io (*version for REPAIR_AT)
 * and *data (malloc'ed), 1 after a refusal was sent (*ret), or the
 * read's -errno
 */
static int repair_data(struct rpmemd_session *s, const struct rpmem_hdr *hd,
		       size_t hsize, struct rpmem_msg_io *io,
		       uint64_t *version, uint8_t **data, int *ret)
{
	uint8_t head[RPMEM_REPAIR_AT_HDR_SIZE];
	const char *name = rpmem_msg_type_str(hd->type);
	struct rpmem_msg_read_at at;
	size_t dlen;
	int r, bad;

	*data = NULL;
	if (hd->len < hsize) {
		if ((r = rpmem_net_discard(&s->conn, hd->len)))
			return r;
		*ret = conn_reply_err(s, hd->id, RPMEM_E_PROTO,
				      "invalid %s received: %u-byte payload is shorter than its %zu-byte head",
				      name, hd->len, hsize);
		return 1;
	}
	if ((r = rpmem_net_read_full(&s->conn, head, hsize)))
		return r;
	dlen = hd->len - hsize;
	if (hsize == RPMEM_REPAIR_AT_HDR_SIZE) {
		bad = rpmem_read_at_decode(head, hsize, &at) || at.len != dlen;
		*io = (struct rpmem_msg_io){ at.handle, at.offset, at.len };
		*version = at.version;
	} else {
		bad = rpmem_io_decode(head, hsize, io) || io->len != dlen;
	}
	if (bad || !(*data = malloc(dlen ? dlen : 1))) {
		if ((r = rpmem_net_discard(&s->conn, dlen)))
			return r;
		*ret = bad ? conn_reply_err(s, hd->id, RPMEM_E_PROTO,
					    "invalid %s received: its head does not match its %zu data bytes",
					    name, dlen) :
			     conn_reply_err(s, hd->id, RPMEM_E_LIMIT,
					    "out of memory");
		return 1;
	}
	if ((r = rpmem_net_read_full(&s->conn, *data, dlen))) {
		free(*data);
		*data = NULL;
		return r;
	}
	return 0;
}

/* repair_refuse -- why REPAIR of io into h cannot be done, or NULL */
static const char *repair_refuse(const struct rpmemd_handle *h,
				 const struct rpmem_msg_io *io, uint32_t *code)
{
	const struct rpmemd_pool *p = h->pool;

	*code = RPMEM_E_INVAL;
	if (h->mode != RPMEM_OPEN_RW) {
		*code = RPMEM_E_RDONLY;
		return "a REPAIR needs the pool opened for writing";
	}
	if (!io->len ||
	    !rpmem_range_ok(io->offset, io->len, rpmemd_pool_size(p)) ||
	    io->offset % RPMEM_HASH_PIECE ||
	    (io->len % RPMEM_HASH_PIECE &&
	     io->offset + io->len != rpmemd_pool_size(p)))
		return "a REPAIR covers whole 4 KiB pieces inside the pool";
	return NULL;
}

int req_repair(struct rpmemd_session *s, const struct rpmem_hdr *hd)
{
	struct rpmemd_damage_change chg;
	struct rpmem_msg_io io;
	struct rpmemd_handle *h;
	uint8_t *data;
	uint64_t bad = 0;
	const char *why;
	uint32_t code;
	uint64_t version = 0;
	int ret = 0, r = repair_data(s, hd, RPMEM_WRITE_HDR_SIZE, &io, &version,
				     &data, &ret);

	if (r)
		return r < 0 ? r : ret;
	if (!(h = handle_get(s, io.handle))) {
		free(data);
		return conn_reply_err(s, hd->id, RPMEM_E_INVAL,
				      "REPAIR of unknown handle %u", io.handle);
	}
	if ((why = repair_refuse(h, &io, &code))) {
		free(data);
		return conn_reply_err(s, hd->id, code,
				      "%s: %u bytes at offset %llu of pool '%s' (%llu bytes)",
				      why, io.len,
				      (unsigned long long)io.offset,
				      rpmemd_pool_name(h->pool),
				      (unsigned long long)rpmemd_pool_size(
					      h->pool));
	}
	rpmemd_hash_enter(s);
	r = rpmemd_scrub_repair(h->pool, io.offset, data, io.len, &bad, &chg);
	rpmemd_hash_leave(s);
	free(data);
	if (r == -EILSEQ)
		return conn_reply_err(s, hd->id, RPMEM_E_DAMAGED,
				      "REPAIR of pool '%s' refused: the piece at 0x%llx does not hash as its scrub record says (not the data it had when it was committed); nothing was written",
				      rpmemd_pool_name(h->pool),
				      (unsigned long long)bad);
	if (r == -ESTALE || r == -ENOENT)
		return conn_reply_err(s, hd->id, RPMEM_E_INVAL,
				      "REPAIR of pool '%s' refused: %s",
				      rpmemd_pool_name(h->pool),
				      r == -ESTALE ?
					      "it is not consistent (a sync completes it)" :
					      "it has no scrub record of its generation to check the data against");
	if (r)
		return conn_reply_err(s, hd->id, rpmem_err_from_errno(r),
				      "REPAIR of pool '%s' failed: %s",
				      rpmemd_pool_name(h->pool), strerror(-r));
	INFO("session %u: pool %s/%s: %u bytes at offset %llu repaired (the data its scrub record holds)",
	     s->id, rpmemd_pool_region(h->pool)->cfg.name,
	     rpmemd_pool_name(h->pool), io.len, (unsigned long long)io.offset);
	rpmemd_damage_report(s, h->pool, &chg, 0);
	return conn_reply_ok(s, hd->id);
}

/* repair_at_refused -- the ERROR for a refused REPAIR_AT (r) of h */
static int repair_at_refused(struct rpmemd_session *s,
			     const struct rpmem_hdr *hd,
			     const struct rpmemd_handle *h, uint64_t version,
			     const struct rpmemd_vrepair *res, int r)
{
	const char *pool = rpmemd_pool_name(h->pool);

	if (r == -EILSEQ)
		return conn_reply_err(s, hd->id, RPMEM_E_DAMAGED,
				      "REPAIR_AT of version %llu of pool '%s' refused: the data sent for its record at 0x%llx length %llu (of version %llu) does not check as that record, nor as the version's scrub record, says (not the data it had); nothing was written",
				      (unsigned long long)version, pool,
				      (unsigned long long)res->bad,
				      (unsigned long long)res->bad_len,
				      (unsigned long long)res->bad_gen);
	if (r == -EBADMSG)
		return conn_reply_err(s, hd->id, RPMEM_E_IO,
				      "REPAIR_AT of version %llu of pool '%s' refused: a record head of version %llu does not read, so where its data lies is not known; nothing was written",
				      (unsigned long long)version, pool,
				      (unsigned long long)res->bad_gen);
	if (r == -ENOENT)
		return conn_reply_err(s, hd->id, RPMEM_E_NOPOOL,
				      "REPAIR_AT refused: pool '%s' has no version %llu (see rpmemctl versions; its current image is repaired with REPAIR)",
				      pool, (unsigned long long)version);
	return conn_reply_err(s, hd->id, rpmem_err_from_errno(r),
			      "REPAIR_AT of version %llu of pool '%s' failed: %s",
			      (unsigned long long)version, pool, strerror(-r));
}

/*
 * repair_header -- REPAIR_AT of 0 bytes: version's header mended, if it
 * can be rebuilt to match its own check
 */
static int repair_header(struct rpmemd_session *s, const struct rpmem_hdr *hd,
			 struct rpmemd_handle *h, uint64_t version)
{
	char text[RPMEM_STR_MAX + 1];
	int r;

	if (h->mode != RPMEM_OPEN_RW)
		return conn_reply_err(s, hd->id, RPMEM_E_RDONLY,
				      "a REPAIR_AT needs the pool opened for writing");
	r = rpmemd_version_mend_header(h->pool, version);
	if (r == 1)
		return conn_reply_ok(s, hd->id);
	if (r == -EILSEQ)
		return conn_reply_err(s, hd->id, RPMEM_E_DAMAGED,
				      "REPAIR_AT of version %llu of pool '%s' refused: its damaged header cannot be rebuilt to match its own check (the byte flipped is in its source or its check); nothing was written",
				      (unsigned long long)version,
				      rpmemd_pool_name(h->pool));
	if (r) {
		struct rpmemd_vrepair res = { .bad_gen = version };
		return repair_at_refused(s, hd, h, version, &res, r);
	}
	NOTICE("session %u: pool %s/%s: version %llu: its damaged header rebuilt (it matches its own check)",
	       s->id, rpmemd_pool_region(h->pool)->cfg.name,
	       rpmemd_pool_name(h->pool), (unsigned long long)version);
	snprintf(text, sizeof(text),
		 "version %llu of pool '%s' repaired: its header",
		 (unsigned long long)version, rpmemd_pool_name(h->pool));
	rpmemd_damage_event(s, h->pool, text);
	return conn_reply_ok(s, hd->id);
}

/*
 * repaired_unmark -- a repair of version gen of p mended records: if
 * every record now checks, its damage mark goes (in a hashing slot)
 */
static void repaired_unmark(struct rpmemd_pool *p, uint64_t gen)
{
	struct rpmemd_meta m;
	uint64_t bad = 0, len = 0;

	rpmemd_pool_get_meta(p, &m);
	if (!rpmemd_version_check(rpmemd_pool_region(p), rpmemd_pool_name(p),
				  &m, gen, &bad, &len))
		rpmemd_version_mark(rpmemd_pool_region(p), rpmemd_pool_name(p),
				    gen, 0);
}

int req_repair_at(struct rpmemd_session *s, const struct rpmem_hdr *hd)
{
	struct rpmemd_vrepair res;
	struct rpmem_msg_io io;
	struct rpmemd_handle *h;
	uint64_t version = 0;
	uint8_t *data;
	const char *why;
	char text[RPMEM_STR_MAX + 1];
	uint32_t code;
	int ret = 0, r = repair_data(s, hd, RPMEM_REPAIR_AT_HDR_SIZE, &io,
				     &version, &data, &ret);

	if (r)
		return r < 0 ? r : ret;
	if (!(h = handle_get(s, io.handle))) {
		free(data);
		return conn_reply_err(s, hd->id, RPMEM_E_INVAL,
				      "REPAIR_AT of unknown handle %u",
				      io.handle);
	}
	if (!io.len && !io.offset) {
		free(data);
		return repair_header(s, hd, h, version);
	}
	/* the append right will do, as REPAIR: only vouched data is written */
	if ((why = repair_refuse(h, &io, &code))) {
		free(data);
		return conn_reply_err(s, hd->id, code,
				      "%s: %u bytes at offset %llu of version %llu of pool '%s' (%llu bytes)",
				      why, io.len,
				      (unsigned long long)io.offset,
				      (unsigned long long)version,
				      rpmemd_pool_name(h->pool),
				      (unsigned long long)rpmemd_pool_size(
					      h->pool));
	}
	rpmemd_hash_enter(s);
	r = rpmemd_version_repair(h->pool, version, io.offset, data, io.len,
				  &res);
	if (!r && res.mended)
		repaired_unmark(h->pool, version);
	rpmemd_hash_leave(s);
	free(data);
	if (r)
		return repair_at_refused(s, hd, h, version, &res, r);
	if (res.mended) {
		NOTICE("session %u: pool %s/%s: version %llu: %llu bytes of its damaged records in %u bytes at offset %llu repaired (data its records vouch for)",
		       s->id, rpmemd_pool_region(h->pool)->cfg.name,
		       rpmemd_pool_name(h->pool), (unsigned long long)version,
		       (unsigned long long)res.mended, io.len,
		       (unsigned long long)io.offset);
		snprintf(text, sizeof(text),
			 "version %llu of pool '%s' repaired: %llu bytes at offset %llu",
			 (unsigned long long)version, rpmemd_pool_name(h->pool),
			 (unsigned long long)res.mended,
			 (unsigned long long)io.offset);
		rpmemd_damage_event(s, h->pool, text);
	}
	return conn_reply_ok(s, hd->id);
}

/* hash_take, hash_give -- a recording's turns at the hashing slots */
static void hash_take(void *arg)
{
	rpmemd_hash_enter(arg);
}

static void hash_give(void *arg)
{
	rpmemd_hash_leave(arg);
}

/*
 * rpmemd_scrub_commit -- the pool just went consistent at generation gen
 * (and the writer was told): record its pieces' hashes for later scrubs,
 * 64 MiB at a time between other sessions' hashing. Logged, never fatal:
 * a pool without a record of its image is scrubbed as unverified.
 */
void rpmemd_scrub_commit(struct rpmemd_session *s, struct rpmemd_pool *p,
			 uint64_t gen)
{
	const struct rpmemd_scrub_turns turns = { hash_take, hash_give, s };
	struct rpmemd_damage_change chg;
	uint64_t t0 = rpmem_now_ns();
	int ret = rpmemd_scrub_record(p, gen, SCRUB_THREADS, &turns, &chg);

	rpmemd_damage_report(s, p, &chg, 0);

	if (ret && ret != -ENOTSUP)
		WARN("session %u: pool '%s': cannot record its hashes for scrub (a scrub will call it unverifiable): %s",
		     s->id, rpmemd_pool_name(p), strerror(-ret));
	else if (!ret)
		DBG("session %u: pool '%s': hashes of generation %llu recorded for scrub in %llu ms",
		    s->id, rpmemd_pool_name(p), (unsigned long long)gen,
		    (unsigned long long)((rpmem_now_ns() - t0) / 1000000));
}

void rpmemd_scrub_ensure(struct rpmemd_session *s, struct rpmemd_pool *p,
			 uint64_t gen)
{
	uint64_t rg = 0;
	int ret;

	if (rpmemd_pool_region(p)->metafd < 0 || !rpmemd_pool_addr(p))
		return;
	ret = rpmemd_scrub_gen(rpmemd_pool_region(p)->metafd,
			       rpmemd_pool_name(p), rpmemd_pool_size(p), &rg);
	if (!ret && rg == gen)
		return;
	NOTICE("session %u: pool '%s': its image (generation %llu) has no scrub record (%s): recording it now",
	       s->id, rpmemd_pool_name(p), (unsigned long long)gen,
	       ret ? strerror(-ret) : "the record is of another generation");
	rpmemd_scrub_commit(s, p, gen);
}
