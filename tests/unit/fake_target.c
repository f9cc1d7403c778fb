/* SPDX-License-Identifier: BSD-3-Clause */
/* fake_target.c -- an in-process rpmemd stand-in for the client unit tests */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "fake_target.h"
#include "hash.h"
#include "net.h"
#include "util.h"
#include "wait.h"
#include "wire.h"

#define FAKE_SCRIPTS 32
#define FAKE_HANDLES 16
#define FAKE_IDLE_WAIT_S WAIT_S /* the unit tests' one deadline (wait.h) */

struct script {
	uint16_t type; /* 0 = any */
	unsigned nth;
	enum fake_action action;
	uint32_t code;
};

struct handle {
	int used;
	uint8_t mode; /* enum rpmem_open_mode */
};

struct fake_target {
	pthread_t tid;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int lfd;
	int wake[2]; /* a byte in wake[1] stops the accept loop */
	int stopping;
	int down; /* fake_target_set_down: connections closed at once */
	int released; /* fake_target_release: a FAKE_STALL may reply */
	unsigned release_n; /* fake_target_release_one: so many may */
	unsigned delay_us; /* fake_target_set_reply_delay */
	unsigned refused; /* connections closed while down */
	int conn; /* the connection being served, -1 if none */
	char port[16];

	/* the pool (under lock) */
	char region[RPMEM_NAME_MAX + 1];
	char pool[RPMEM_NAME_MAX + 1];
	uint8_t *mem; /* NULL = no pool */
	uint64_t size;
	uint8_t state;
	uint64_t generation;
	char source[RPMEM_STR_MAX + 1];

	/* what was received (under lock) */
	unsigned counts[RPMEM_MSG_TYPE_MAX + 1];
	uint64_t flushed; /* bytes the FLUSH requests answered OK covered */
	unsigned total;
	unsigned accepted;
	unsigned ended;
	struct fake_write *writes;
	size_t nwrites, capwrites;
	struct fake_hash_req *hashes;
	size_t nhashes, caphashes;
	uint32_t hash_seq;

	/* the script (under lock) */
	struct script scripts[FAKE_SCRIPTS];
	unsigned nscripts;
	char err_text[RPMEM_MSG_MAX + 1]; /* of scripted ERRORs; "" default */
	uint32_t caps;
	uint16_t version;
	unsigned paged, per_page, stuck_page; /* fake_target_opts */

	/* the session being served (serving thread only) */
	struct handle handles[FAKE_HANDLES];
	uint32_t derr_code;
	char derr_msg[RPMEM_MSG_MAX + 1];
	uint8_t *req; /* RPMEM_MAX_PAYLOAD */
	uint8_t *out; /* RPMEM_HDR_SIZE + RPMEM_MAX_PAYLOAD + 1 */
};

/* scripted_text -- the text of a scripted ERROR with code, into buf */
static const char *scripted_text(struct fake_target *ft, uint32_t code,
				 char *buf, size_t len)
{
	if (ft->err_text[0])
		snprintf(buf, len, "%s", ft->err_text);
	else
		snprintf(buf, len, "scripted %s", rpmem_err_str(code));
	return buf;
}

/* reply_error -- an ERROR payload in out; returns its length */
static int reply_error(struct fake_target *ft, uint16_t *rtype,
		       uint32_t code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int reply_error(struct fake_target *ft, uint16_t *rtype,
		       uint32_t code, const char *fmt, ...)
{
	struct rpmem_msg_error m = { .code = code };
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(m.msg, sizeof(m.msg), fmt, ap);
	va_end(ap);
	*rtype = RPMEM_MSG_ERROR;
	return rpmem_error_encode(ft->out + RPMEM_HDR_SIZE, RPMEM_MAX_PAYLOAD,
				  &m);
}

/* take_deferred -- the remembered WRITE failure as the reply, if any */
static int take_deferred(struct fake_target *ft, uint16_t *rtype)
{
	if (!ft->derr_code)
		return -1;
	uint32_t code = ft->derr_code;
	ft->derr_code = 0;
	return reply_error(ft, rtype, code, "%s", ft->derr_msg);
}

/* defer -- remember a WRITE failure for the next FLUSH */
static void defer(struct fake_target *ft, uint32_t code, const char *msg)
{
	if (ft->derr_code)
		return;
	ft->derr_code = code;
	rpmem_strlcpy(ft->derr_msg, msg, sizeof(ft->derr_msg));
}

/* handle_get -- the open handle h of this session, or NULL */
static struct handle *handle_get(struct fake_target *ft, uint32_t h)
{
	if (h == 0 || h > FAKE_HANDLES || !ft->handles[h - 1].used)
		return NULL;
	return &ft->handles[h - 1];
}

/* grow -- room for one more element in *v (cap in *cap) */
static int grow(void **v, size_t n, size_t *cap, size_t elem)
{
	if (n < *cap)
		return 0;
	size_t c = *cap ? 2 * *cap : 64;
	void *nv = realloc(*v, c * elem);
	if (!nv)
		return -ENOMEM;
	*v = nv;
	*cap = c;
	return 0;
}

/* log_hash -- record one HASH request or HASHV range */
static void log_hash(struct fake_target *ft, uint16_t type, uint64_t off,
		     uint32_t bs, uint32_t count, uint32_t flags)
{
	if (grow((void **)&ft->hashes, ft->nhashes, &ft->caphashes,
		 sizeof(*ft->hashes)))
		return;
	ft->hashes[ft->nhashes++] = (struct fake_hash_req){
		.type = type, .seq = ft->hash_seq, .offset = off,
		.block_size = bs, .count = count, .flags = flags };
}

/* find_script -- the script for the message just counted, if any */
static const struct script *find_script(struct fake_target *ft,
					uint16_t type)
{
	for (unsigned i = 0; i < ft->nscripts; i++) {
		const struct script *s = &ft->scripts[i];
		if (s->type == 0 && s->nth == ft->total)
			return s;
		if (s->type == type && s->nth == ft->counts[type])
			return s;
	}
	return NULL;
}

/* do_hello -- HELLO_OK with the configured version and caps */
static int do_hello(struct fake_target *ft, uint32_t len, uint16_t *rtype)
{
	struct rpmem_msg_hello m;
	if (rpmem_hello_decode(ft->req, len, &m))
		return reply_error(ft, rtype, RPMEM_E_PROTO, "bad HELLO");
	struct rpmem_msg_hello_ok ok = {
		.version = ft->version,
		.session_id = 7,
		.caps = ft->caps,
	};
	snprintf(ok.server, sizeof(ok.server), "fake-rpmemd 0 unit");
	*rtype = RPMEM_MSG_HELLO_OK;
	return rpmem_hello_ok_encode(ft->out + RPMEM_HDR_SIZE,
				     RPMEM_MAX_PAYLOAD, &ok);
}

/* do_create -- CREATE the one pool if the slot is free */
static int do_create(struct fake_target *ft, uint32_t len, uint16_t *rtype)
{
	struct rpmem_msg_create m;
	if (rpmem_create_decode(ft->req, len, &m))
		return reply_error(ft, rtype, RPMEM_E_PROTO, "bad CREATE");
	if (strcmp(m.region, ft->region))
		return reply_error(ft, rtype, RPMEM_E_NOREGION,
				   "unknown region '%s'", m.region);
	if (ft->mem && !strcmp(m.pool, ft->pool))
		return reply_error(ft, rtype, RPMEM_E_EXISTS,
				   "pool '%s' exists", m.pool);
	if (ft->mem)
		return reply_error(ft, rtype, RPMEM_E_LIMIT,
				   "the fake target holds one pool");
	ft->mem = calloc(1, m.size);
	if (!ft->mem)
		return reply_error(ft, rtype, RPMEM_E_NOSPACE, "no memory");
	rpmem_strlcpy(ft->pool, m.pool, sizeof(ft->pool));
	ft->size = m.size;
	ft->state = RPMEM_POOL_EMPTY;
	ft->generation = 0;
	*rtype = RPMEM_MSG_OK;
	return 0;
}

/* do_remove -- REMOVE the pool unless it is open */
static int do_remove(struct fake_target *ft, uint32_t len, uint16_t *rtype)
{
	struct rpmem_msg_remove m;
	if (rpmem_remove_decode(ft->req, len, &m))
		return reply_error(ft, rtype, RPMEM_E_PROTO, "bad REMOVE");
	if (strcmp(m.region, ft->region) || !ft->mem ||
	    strcmp(m.pool, ft->pool))
		return reply_error(ft, rtype, RPMEM_E_NOPOOL,
				   "no pool '%s'", m.pool);
	for (unsigned i = 0; i < FAKE_HANDLES; i++)
		if (ft->handles[i].used)
			return reply_error(ft, rtype, RPMEM_E_BUSY,
					   "pool '%s' is open", m.pool);
	free(ft->mem);
	ft->mem = NULL;
	ft->size = 0;
	*rtype = RPMEM_MSG_OK;
	return 0;
}

/* do_open -- OPEN over tcp: a handle and OPEN_OK */
static int do_open(struct fake_target *ft, uint32_t len, uint16_t *rtype)
{
	struct rpmem_msg_open m;
	if (rpmem_open_decode(ft->req, len, &m))
		return reply_error(ft, rtype, RPMEM_E_PROTO, "bad OPEN");
	if (strcmp(m.region, ft->region))
		return reply_error(ft, rtype, RPMEM_E_NOREGION,
				   "unknown region '%s'", m.region);
	if (!ft->mem || strcmp(m.pool, ft->pool))
		return reply_error(ft, rtype, RPMEM_E_NOPOOL,
				   "no pool '%s' in region '%s'", m.pool,
				   m.region);
	if (m.xport == RPMEM_XPORT_RDMA)
		return reply_error(ft, rtype, RPMEM_E_XPORT,
				   "the fake target serves tcp only");
	unsigned i;
	for (i = 0; i < FAKE_HANDLES; i++)
		if (!ft->handles[i].used)
			break;
	if (i == FAKE_HANDLES)
		return reply_error(ft, rtype, RPMEM_E_LIMIT, "too many opens");
	ft->handles[i] = (struct handle){ .used = 1, .mode = m.mode };
	struct rpmem_msg_open_ok ok = {
		.handle = i + 1,
		.size = ft->size,
		.state = ft->state,
		.generation = ft->generation,
		.uuid = { 0xfa, 0x4e, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 },
		.xport = RPMEM_XPORT_TCP,
	};
	*rtype = RPMEM_MSG_OPEN_OK;
	return rpmem_open_ok_encode(ft->out + RPMEM_HDR_SIZE,
				    RPMEM_MAX_PAYLOAD, &ok);
}

/* do_close -- CLOSE a handle */
static int do_close(struct fake_target *ft, uint32_t len, uint16_t *rtype)
{
	struct rpmem_msg_handle m;
	if (rpmem_handle_decode(ft->req, len, &m))
		return reply_error(ft, rtype, RPMEM_E_PROTO, "bad CLOSE");
	struct handle *h = handle_get(ft, m.handle);
	if (!h)
		return reply_error(ft, rtype, RPMEM_E_INVAL,
				   "CLOSE of unknown handle %u", m.handle);
	h->used = 0;
	*rtype = RPMEM_MSG_OK;
	return 0;
}

/* do_read -- READ: DATA from the pool */
static int do_read(struct fake_target *ft, uint32_t len, uint16_t *rtype)
{
	struct rpmem_msg_io m;
	if (rpmem_io_decode(ft->req, len, &m))
		return reply_error(ft, rtype, RPMEM_E_PROTO, "bad READ");
	if (!handle_get(ft, m.handle))
		return reply_error(ft, rtype, RPMEM_E_INVAL,
				   "READ from unknown handle %u", m.handle);
	if (!rpmem_range_ok(m.offset, m.len, ft->size))
		return reply_error(ft, rtype, RPMEM_E_INVAL,
				   "READ outside the pool");
	memcpy(ft->out + RPMEM_HDR_SIZE, ft->mem + m.offset, m.len);
	*rtype = RPMEM_MSG_DATA;
	return (int)m.len;
}

/* do_flush -- FLUSH: a deferred WRITE failure, or OK */
static int do_flush(struct fake_target *ft, uint32_t len, uint16_t *rtype)
{
	struct rpmem_msg_flush m;
	if (rpmem_flush_decode(ft->req, len, &m))
		return reply_error(ft, rtype, RPMEM_E_PROTO, "bad FLUSH");
	int ret = take_deferred(ft, rtype);
	if (ret >= 0)
		return ret;
	struct handle *h = handle_get(ft, m.handle);
	if (!h)
		return reply_error(ft, rtype, RPMEM_E_INVAL,
				   "FLUSH of unknown handle %u", m.handle);
	if (h->mode != RPMEM_OPEN_RW)
		return reply_error(ft, rtype, RPMEM_E_RDONLY,
				   "FLUSH of a read-only open");
	if (!rpmem_range_ok(m.offset, m.len, ft->size))
		return reply_error(ft, rtype, RPMEM_E_INVAL,
				   "FLUSH outside the pool");
	ft->flushed += m.len;
	*rtype = RPMEM_MSG_OK;
	return 0;
}

/*
 * reply_hashes -- HASHES of n ranges of blocks of bs bytes, tree hashes
 * if the flags say so (the caps permitting, as rpmemd)
 */
static int reply_hashes(struct fake_target *ft, uint16_t *rtype, uint32_t bs,
			const struct rpmem_hash_range *rv, uint32_t n,
			uint32_t flags)
{
	int tree = (flags & RPMEM_HASH_TREE) != 0;
	if (tree && !(ft->caps & RPMEM_CAP_HASH_TREE))
		return reply_error(ft, rtype, RPMEM_E_PROTO,
				   "unexpected tree HASH from a client");
	uint32_t total = 0;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t off = rv[i].offset;
		if (off >= ft->size ||
		    (uint64_t)(rv[i].count - 1) * bs >= ft->size - off)
			return reply_error(ft, rtype, RPMEM_E_INVAL,
					   "hash range %u past the pool", i);
		total += rv[i].count;
	}
	uint64_t *h = malloc((size_t)total * sizeof(*h));
	if (!h)
		return reply_error(ft, rtype, RPMEM_E_LIMIT, "no memory");
	uint64_t *dst = h;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t len = (uint64_t)rv[i].count * bs;
		if (len > ft->size - rv[i].offset)
			len = ft->size - rv[i].offset;
		if (tree)
			rpmem_hash_tree_blocks(ft->mem + rv[i].offset, len, bs,
					       dst, NULL, 1);
		else
			rpmem_hash_blocks(ft->mem + rv[i].offset, len, bs, dst,
					  1);
		dst += rv[i].count;
	}
	for (uint32_t i = 0; i < total; i++)
		le64_put((uint8_t *)&h[i], h[i]);
	struct rpmem_msg_hashes m = { .count = total,
				      .hashes = (const uint8_t *)h };
	*rtype = RPMEM_MSG_HASHES;
	int len = rpmem_hashes_encode(ft->out + RPMEM_HDR_SIZE,
				      RPMEM_MAX_PAYLOAD, &m);
	free(h);
	return len;
}

/* do_hash -- HASH: one range */
static int do_hash(struct fake_target *ft, uint32_t len, uint16_t *rtype)
{
	struct rpmem_msg_hash m;
	if (rpmem_hash_decode(ft->req, len, &m))
		return reply_error(ft, rtype, RPMEM_E_PROTO, "bad HASH");
	ft->hash_seq++;
	log_hash(ft, RPMEM_MSG_HASH, m.offset, m.block_size, m.count, m.flags);
	if (!handle_get(ft, m.handle))
		return reply_error(ft, rtype, RPMEM_E_INVAL,
				   "HASH of unknown handle %u", m.handle);
	struct rpmem_hash_range rg = { .offset = m.offset, .count = m.count };
	return reply_hashes(ft, rtype, m.block_size, &rg, 1, m.flags);
}

/* do_hashv -- HASHV: several ranges, if the caps say so */
static int do_hashv(struct fake_target *ft, uint32_t len, uint16_t *rtype)
{
	if (!(ft->caps & RPMEM_CAP_HASHV))
		return reply_error(ft, rtype, RPMEM_E_PROTO,
				   "unexpected HASHV from a client");
	struct rpmem_msg_hashv *m = malloc(sizeof(*m));
	if (!m)
		return reply_error(ft, rtype, RPMEM_E_LIMIT, "no memory");
	int ret;
	if (rpmem_hashv_decode(ft->req, len, m)) {
		ret = reply_error(ft, rtype, RPMEM_E_PROTO, "bad HASHV");
		goto out;
	}
	ft->hash_seq++;
	for (uint32_t i = 0; i < m->nranges; i++)
		log_hash(ft, RPMEM_MSG_HASHV, m->ranges[i].offset,
			 m->block_size, m->ranges[i].count, 0);
	if (!handle_get(ft, m->handle))
		ret = reply_error(ft, rtype, RPMEM_E_INVAL,
				  "HASHV of unknown handle %u", m->handle);
	else
		ret = reply_hashes(ft, rtype, m->block_size, m->ranges,
				   m->nranges, 0);
out:
	free(m);
	return ret;
}

/* do_set_state -- SET_STATE; the generation grows on syncing->consistent */
static int do_set_state(struct fake_target *ft, uint32_t len,
			uint16_t *rtype)
{
	struct rpmem_msg_set_state m;
	if (rpmem_set_state_decode(ft->req, len, &m))
		return reply_error(ft, rtype, RPMEM_E_PROTO, "bad SET_STATE");
	struct handle *h = handle_get(ft, m.handle);
	if (!h)
		return reply_error(ft, rtype, RPMEM_E_INVAL,
				   "SET_STATE of unknown handle %u", m.handle);
	if (h->mode != RPMEM_OPEN_RW)
		return reply_error(ft, rtype, RPMEM_E_RDONLY,
				   "SET_STATE of a read-only open");
	if (m.state == RPMEM_POOL_CONSISTENT) {
		int ret = take_deferred(ft, rtype);
		if (ret >= 0)
			return ret;
		if (ft->state != RPMEM_POOL_SYNCING)
			return reply_error(ft, rtype, RPMEM_E_INVAL,
					   "pool '%s' cannot go from %s to %s",
					   ft->pool, rpmem_state_str(ft->state),
					   rpmem_state_str(m.state));
		ft->generation++;
	} else if (m.state != RPMEM_POOL_SYNCING) {
		return reply_error(ft, rtype, RPMEM_E_INVAL, "bad state %u",
				   m.state);
	}
	ft->state = m.state;
	if (m.source[0])
		rpmem_strlcpy(ft->source, m.source, sizeof(ft->source));
	*rtype = RPMEM_MSG_OK;
	return 0;
}

/*
 * do_scrub -- SCRUB, if the caps say so: each piece's verdict is the
 * first byte of the piece in the fake pool when it is 0, 1 or 2 (else 0,
 * intact), so a test writes its verdicts into the pool; why is
 * RPMEM_SCRUB_BAD_ENTRY if any piece is unverified
 */
static int do_scrub(struct fake_target *ft, uint32_t len, uint16_t *rtype)
{
	struct rpmem_msg_scrub m;
	if (!(ft->caps & RPMEM_CAP_SCRUB))
		return reply_error(ft, rtype, RPMEM_E_PROTO,
				   "unexpected SCRUB from a client");
	if (rpmem_scrub_decode(ft->req, len, &m))
		return reply_error(ft, rtype, RPMEM_E_PROTO, "bad SCRUB");
	if (!handle_get(ft, m.handle))
		return reply_error(ft, rtype, RPMEM_E_INVAL,
				   "SCRUB of unknown handle %u", m.handle);
	if (m.offset >= ft->size || (uint64_t)(m.count - 1) *
					    RPMEM_HASH_PIECE >=
				    ft->size - m.offset)
		return reply_error(ft, rtype, RPMEM_E_INVAL,
				   "SCRUB past the pool");
	static uint8_t piece[RPMEM_MAX_SCRUB_PIECES];
	struct rpmem_msg_scrub_reply r = { .generation = ft->generation,
					   .count = m.count,
					   .pieces = piece };
	for (uint32_t i = 0; i < m.count; i++) {
		uint8_t b = ft->mem[m.offset + (uint64_t)i * RPMEM_HASH_PIECE];
		piece[i] = b <= RPMEM_SCRUB_PIECE_MAX ? b : RPMEM_SCRUB_OK;
		if (piece[i] == RPMEM_SCRUB_UNVERIFIED)
			r.why = RPMEM_SCRUB_BAD_ENTRY;
	}
	*rtype = RPMEM_MSG_SCRUB_REPLY;
	return rpmem_scrub_reply_encode(ft->out + RPMEM_HDR_SIZE,
					RPMEM_MAX_PAYLOAD, &r);
}

/*
 * page_of -- the entries a paged request from cursor gets: *first, the
 * count, and the next cursor ("" after the last) into next; the page's
 * number (1 = the first)
 */
static unsigned page_of(struct fake_target *ft, int paging, const char *cursor,
			unsigned *first, unsigned *n, char *next)
{
	*first = paging ? (unsigned)strtoul(cursor, NULL, 10) : 0;
	*n = ft->paged > *first ? ft->paged - *first : 0;
	if (paging && *n > ft->per_page)
		*n = ft->per_page;
	unsigned page = *first / ft->per_page + 1;
	next[0] = 0;
	if (*first + *n < ft->paged)
		snprintf(next, RPMEM_CURSOR_MAX + 1, "%u", *first + *n);
	if (page == ft->stuck_page)
		snprintf(next, RPMEM_CURSOR_MAX + 1, "%s", cursor);
	return page;
}

/* do_list_paged -- LIST of the paged pools, a page from the cursor */
static int do_list_paged(struct fake_target *ft, const struct rpmem_msg_list *m,
			 uint16_t *rtype)
{
	struct rpmem_region_info g;
	struct rpmem_msg_list_reply r = { .flags = m->flags, .regions = &g,
					  .nregions = 1 };
	unsigned first;

	memset(&g, 0, sizeof(g));
	page_of(ft, !!(m->flags & RPMEM_LIST_PAGE), m->cursor, &first,
		&r.npools, r.next);
	snprintf(g.name, sizeof(g.name), "g%u", first);
	r.pools = calloc(r.npools ? r.npools : 1, sizeof(*r.pools));
	if (!r.pools)
		return -ENOMEM;
	for (unsigned i = 0; i < r.npools; i++) {
		rpmem_strlcpy(r.pools[i].region, ft->region,
			      sizeof(r.pools[i].region));
		snprintf(r.pools[i].name, sizeof(r.pools[i].name), "p%u",
			 first + i);
	}
	*rtype = RPMEM_MSG_LIST_REPLY;
	int len = rpmem_list_reply_encode(ft->out + RPMEM_HDR_SIZE,
					  RPMEM_MAX_PAYLOAD, &r);
	free(r.pools);
	return len;
}

/* status_sessions -- n sessions with ids from first on, or NULL */
static struct rpmem_session_info *status_sessions(unsigned first, unsigned n)
{
	struct rpmem_session_info *v = calloc(n ? n : 1, sizeof(*v));
	for (unsigned i = 0; v && i < n; i++) {
		v[i].id = first + i;
		snprintf(v[i].peer, sizeof(v[i].peer), "peer%u", first + i);
	}
	return v;
}

/*
 * do_status -- STATUS of the paged sessions, a page from the cursor; the
 * namespace and its link on the last
 */
static int do_status(struct fake_target *ft, uint32_t len, uint16_t *rtype)
{
	struct rpmem_msg_status m;
	struct rpmem_ns_info ns = { .name = "ns0", .numa = -1 };
	struct rpmem_ns_link link = { .ns = 0 };
	unsigned first;

	if (!ft->paged || rpmem_status_decode(ft->req, len, &m))
		return reply_error(ft, rtype, RPMEM_E_PROTO, "bad STATUS");
	struct rpmem_msg_status_reply r = { .flags = m.flags, .pid = 1,
					    .server = "fake" };
	r.uptime = page_of(ft, !!(m.flags & RPMEM_STATUS_PAGE), m.cursor,
			   &first, &r.nsessions, r.next);
	rpmem_strlcpy(link.region, ft->region, sizeof(link.region));
	if (!r.next[0]) {
		r.namespaces = &ns;
		r.links = &link;
		r.nnamespaces = r.nlinks = 1;
	}
	if (!(r.sessions = status_sessions(first, r.nsessions)))
		return -ENOMEM;
	*rtype = RPMEM_MSG_STATUS_REPLY;
	int n = rpmem_status_reply_encode(ft->out + RPMEM_HDR_SIZE,
					  RPMEM_MAX_PAYLOAD, &r);
	free(r.sessions);
	return n;
}

/*
 * do_list -- LIST: the one pool (in any region asked, or all), with its
 * state, generation and the source of the last SET_STATE
 */
static int do_list(struct fake_target *ft, uint32_t len, uint16_t *rtype)
{
	struct rpmem_msg_list m;
	if (rpmem_list_decode(ft->req, len, &m))
		return reply_error(ft, rtype, RPMEM_E_PROTO, "bad LIST");
	if (ft->paged)
		return do_list_paged(ft, &m, rtype);
	struct rpmem_pool_info pi;
	memset(&pi, 0, sizeof(pi));
	struct rpmem_msg_list_reply r = { .flags = m.flags, .pools = &pi };
	if (ft->mem && (!m.region[0] || !strcmp(m.region, ft->region))) {
		rpmem_strlcpy(pi.region, ft->region, sizeof(pi.region));
		rpmem_strlcpy(pi.name, ft->pool, sizeof(pi.name));
		rpmem_strlcpy(pi.source, ft->source, sizeof(pi.source));
		pi.size = ft->size;
		pi.state = ft->state;
		pi.generation = ft->generation;
		r.npools = 1;
	}
	*rtype = RPMEM_MSG_LIST_REPLY;
	return rpmem_list_reply_encode(ft->out + RPMEM_HDR_SIZE,
				       RPMEM_MAX_PAYLOAD, &r);
}

/* handle_request -- the reply to a request read into req: payload in out */
static int handle_request(struct fake_target *ft, const struct rpmem_hdr *h,
			  uint16_t *rtype)
{
	switch (h->type) {
	case RPMEM_MSG_HELLO:
		return do_hello(ft, h->len, rtype);
	case RPMEM_MSG_CREATE:
		return do_create(ft, h->len, rtype);
	case RPMEM_MSG_REMOVE:
		return do_remove(ft, h->len, rtype);
	case RPMEM_MSG_OPEN:
		return do_open(ft, h->len, rtype);
	case RPMEM_MSG_CLOSE:
		return do_close(ft, h->len, rtype);
	case RPMEM_MSG_READ:
		return do_read(ft, h->len, rtype);
	case RPMEM_MSG_FLUSH:
		return do_flush(ft, h->len, rtype);
	case RPMEM_MSG_HASH:
		return do_hash(ft, h->len, rtype);
	case RPMEM_MSG_HASHV:
		return do_hashv(ft, h->len, rtype);
	case RPMEM_MSG_SET_STATE:
		return do_set_state(ft, h->len, rtype);
	case RPMEM_MSG_SCRUB:
		return do_scrub(ft, h->len, rtype);
	case RPMEM_MSG_LIST:
		return do_list(ft, h->len, rtype);
	case RPMEM_MSG_STATUS:
		return do_status(ft, h->len, rtype);
	}
	return reply_error(ft, rtype, RPMEM_E_PROTO, "unexpected %s",
			   rpmem_msg_type_str(h->type));
}

/* send_error -- an ERROR frame with id and code */
static int send_error(struct rpmem_conn *fd, uint32_t id,
		      uint32_t code)
{
	struct rpmem_msg_error m = { .code = code };
	snprintf(m.msg, sizeof(m.msg), "scripted %s", rpmem_err_str(code));
	uint8_t buf[RPMEM_MSG_MAX + 16];
	int len = rpmem_error_encode(buf, sizeof(buf), &m);
	if (len < 0)
		return len;
	return rpmem_send_frame(fd, RPMEM_MSG_ERROR, id, buf, (size_t)len,
				NULL, 0);
}

/*
 * send_reply -- the reply frame (payload already in out), as the script
 * says; returns 0, or -errno to end the connection
 */
static int send_reply(struct fake_target *ft, struct rpmem_conn *fd,
		      uint32_t id,
		      uint16_t rtype, int len, const struct script *sc)
{
	if (len < 0)
		return len;
	struct rpmem_hdr h = { .type = rtype, .id = id, .len = (uint32_t)len };
	enum fake_action a = sc ? sc->action : 0;
	if (a == FAKE_WRONG_ID)
		h.id = id + 1000;
	if (a == FAKE_MALFORMED)
		ft->out[RPMEM_HDR_SIZE + h.len++] = 0;
	if (a == FAKE_UNSOLICITED_ERROR) {
		int ret = send_error(fd, id - 1, sc->code);
		if (ret)
			return ret;
	}
	rpmem_hdr_encode(ft->out, &h);
	if (a == FAKE_BAD_MAGIC)
		ft->out[0] ^= 0xff;
	size_t n = RPMEM_HDR_SIZE + h.len;
	if (a == FAKE_HANG_UP_MID_REPLY) {
		rpmem_net_write_full(fd, ft->out, n / 2);
		return -ECONNRESET;
	}
	return rpmem_net_write_full(fd, ft->out, n);
}

/*
 * do_write -- WRITE: data into the pool, or a failure remembered for the
 * next FLUSH (the data is dropped to keep the stream in step)
 */
static int do_write(struct fake_target *ft, struct rpmem_conn *fd,
		    const struct rpmem_hdr *h,
		    const struct script *sc)
{
	uint8_t head[RPMEM_WRITE_HDR_SIZE];
	struct rpmem_msg_io io;
	if (h->len < RPMEM_WRITE_HDR_SIZE) {
		defer(ft, RPMEM_E_PROTO, "short WRITE");
		return rpmem_net_discard(fd, h->len);
	}
	int ret = rpmem_net_read_full(fd, head, sizeof(head));
	if (ret)
		return ret;
	size_t dlen = h->len - RPMEM_WRITE_HDR_SIZE;
	if (rpmem_io_decode(head, sizeof(head), &io) || io.len != dlen) {
		defer(ft, RPMEM_E_PROTO, "bad WRITE head");
		return rpmem_net_discard(fd, dlen);
	}
	if (sc && sc->action == FAKE_UNSOLICITED_ERROR) {
		/* an eager report, with the WRITE's own id */
		if ((ret = rpmem_net_discard(fd, dlen)))
			return ret;
		return send_error(fd, h->id, sc->code);
	}
	if (sc && sc->action == FAKE_ERROR) {
		char msg[RPMEM_MSG_MAX + 1];
		scripted_text(ft, sc->code, msg, sizeof(msg));
		defer(ft, sc->code, msg);
		return rpmem_net_discard(fd, dlen);
	}
	struct handle *hd = handle_get(ft, io.handle);
	if (!hd) {
		defer(ft, RPMEM_E_INVAL, "WRITE to unknown handle");
		return rpmem_net_discard(fd, dlen);
	}
	if (hd->mode != RPMEM_OPEN_RW) {
		defer(ft, RPMEM_E_RDONLY, "WRITE to a read-only open");
		return rpmem_net_discard(fd, dlen);
	}
	pthread_mutex_lock(&ft->lock);
	int inside = ft->mem && rpmem_range_ok(io.offset, io.len, ft->size);
	uint8_t *dst = ft->mem;
	pthread_mutex_unlock(&ft->lock);
	if (!inside) {
		defer(ft, RPMEM_E_INVAL, "WRITE outside the pool");
		return rpmem_net_discard(fd, dlen);
	}
	/* the test does not touch the pool while a request is out */
	if ((ret = rpmem_net_read_full(fd, dst + io.offset, io.len)))
		return ret;
	pthread_mutex_lock(&ft->lock);
	if (!grow((void **)&ft->writes, ft->nwrites, &ft->capwrites,
		  sizeof(*ft->writes)))
		ft->writes[ft->nwrites++] = (struct fake_write){ io.offset,
								 io.len };
	pthread_mutex_unlock(&ft->lock);
	return 0;
}

/* serve -- one connection, until BYE, EOF or a scripted hang-up */
static void serve(struct fake_target *ft, int sfd)
{
	struct rpmem_conn conn, *fd = &conn;

	rpmem_conn_init(&conn, sfd);
	for (;;) {
		struct rpmem_hdr h;
		if (rpmem_recv_hdr(fd, &h))
			return;
		pthread_mutex_lock(&ft->lock);
		ft->counts[h.type]++;
		ft->total++;
		const struct script *sc = find_script(ft, h.type);
		pthread_mutex_unlock(&ft->lock);
		if (sc && sc->action == FAKE_HANG_UP)
			return;
		if (h.type == RPMEM_MSG_WRITE) {
			if (do_write(ft, fd, &h, sc))
				return;
			if (sc && sc->action == FAKE_HANG_UP_MID_REPLY)
				return;
			continue;
		}
		if (rpmem_net_read_full(fd, ft->req, h.len))
			return;
		if (h.type == RPMEM_MSG_BYE)
			return;
		uint16_t rtype;
		int len;
		pthread_mutex_lock(&ft->lock);
		char msg[RPMEM_MSG_MAX + 1];
		if (sc && sc->action == FAKE_ERROR)
			len = reply_error(ft, &rtype, sc->code, "%s",
					  scripted_text(ft, sc->code, msg,
							sizeof(msg)));
		else
			len = handle_request(ft, &h, &rtype);
		/* FAKE_STALL: the reply waits for fake_target_release */
		while (sc && sc->action == FAKE_STALL && !ft->released &&
		       !ft->release_n && !ft->down)
			pthread_cond_wait(&ft->cond, &ft->lock);
		if (sc && sc->action == FAKE_STALL && !ft->released &&
		    ft->release_n)
			ft->release_n--;
		unsigned delay_us = ft->delay_us;
		pthread_mutex_unlock(&ft->lock);
		if (delay_us)
			usleep(delay_us);
		if (send_reply(ft, fd, h.id, rtype, len, sc))
			return;
	}
}

/* accept_loop -- serve connections one at a time until stopped (thread) */
static void *accept_loop(void *arg)
{
	struct fake_target *ft = arg;
	for (;;) {
		struct pollfd pfd[2] = { { .fd = ft->lfd, .events = POLLIN },
					 { .fd = ft->wake[0],
					   .events = POLLIN } };
		if (poll(pfd, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (pfd[1].revents)
			break;
		int fd = accept4(ft->lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		pthread_mutex_lock(&ft->lock);
		if (ft->stopping) {
			pthread_mutex_unlock(&ft->lock);
			close(fd);
			break;
		}
		if (ft->down) {
			/* gone: the client's HELLO meets a closed socket */
			ft->refused++;
			pthread_mutex_unlock(&ft->lock);
			close(fd);
			continue;
		}
		ft->conn = fd;
		ft->accepted++;
		memset(ft->handles, 0, sizeof(ft->handles));
		ft->derr_code = 0;
		pthread_mutex_unlock(&ft->lock);

		serve(ft, fd);

		pthread_mutex_lock(&ft->lock);
		ft->conn = -1;
		close(fd);
		ft->ended++;
		pthread_cond_broadcast(&ft->cond);
		pthread_mutex_unlock(&ft->lock);
	}
	return NULL;
}

/* listen_any -- a listener on 127.0.0.1 and the port the kernel chose */
static int listen_any(struct fake_target *ft)
{
	ft->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (ft->lfd < 0)
		return -errno;
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t sl = sizeof(sa);
	if (bind(ft->lfd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    listen(ft->lfd, 4) ||
	    getsockname(ft->lfd, (struct sockaddr *)&sa, &sl))
		return -errno;
	snprintf(ft->port, sizeof(ft->port), "%u", ntohs(sa.sin_port));
	return 0;
}

int fake_target_start(const struct fake_target_opts *opts,
		      struct fake_target **out)
{
	static const struct fake_target_opts defaults = { .size = 1u << 20 };
	const struct fake_target_opts *o = opts ? opts : &defaults;
	struct fake_target *ft = calloc(1, sizeof(*ft));
	if (!ft)
		return -ENOMEM;
	int ret = -ENOMEM;
	ft->lfd = -1;
	ft->wake[0] = ft->wake[1] = -1;
	ft->conn = -1;
	rpmem_strlcpy(ft->region, o->region ? o->region : "r1",
		      sizeof(ft->region));
	rpmem_strlcpy(ft->pool, o->pool ? o->pool : "p1", sizeof(ft->pool));
	ft->size = o->size;
	ft->state = o->state;
	ft->generation = o->generation;
	ft->caps = o->caps;
	ft->paged = o->paged;
	ft->per_page = o->per_page ? o->per_page : 1;
	ft->stuck_page = o->stuck_page;
	ft->version = o->version ? o->version : RPMEM_PROTO_VERSION;
	ft->req = malloc(RPMEM_MAX_PAYLOAD);
	ft->out = malloc(RPMEM_HDR_SIZE + RPMEM_MAX_PAYLOAD + 1);
	if (!ft->req || !ft->out)
		goto err_free;
	if (ft->size && !(ft->mem = calloc(1, ft->size)))
		goto err_free;
	if ((ret = listen_any(ft)))
		goto err_close;
	if (pipe2(ft->wake, O_CLOEXEC)) {
		ret = -errno;
		goto err_close;
	}
	pthread_mutex_init(&ft->lock, NULL);
	pthread_cond_init(&ft->cond, NULL);
	if ((ret = -pthread_create(&ft->tid, NULL, accept_loop, ft)))
		goto err_destroy;
	*out = ft;
	return 0;

err_destroy:
	pthread_cond_destroy(&ft->cond);
	pthread_mutex_destroy(&ft->lock);
err_close:
	if (ft->wake[0] >= 0) {
		close(ft->wake[0]);
		close(ft->wake[1]);
	}
	if (ft->lfd >= 0)
		close(ft->lfd);
err_free:
	free(ft->mem);
	free(ft->req);
	free(ft->out);
	free(ft);
	return ret;
}

void fake_target_release(struct fake_target *ft)
{
	pthread_mutex_lock(&ft->lock);
	ft->released = 1;
	pthread_cond_broadcast(&ft->cond);
	pthread_mutex_unlock(&ft->lock);
}

void fake_target_release_one(struct fake_target *ft)
{
	pthread_mutex_lock(&ft->lock);
	ft->release_n++;
	pthread_cond_broadcast(&ft->cond);
	pthread_mutex_unlock(&ft->lock);
}

void fake_target_set_reply_delay(struct fake_target *ft, unsigned us)
{
	pthread_mutex_lock(&ft->lock);
	ft->delay_us = us;
	pthread_mutex_unlock(&ft->lock);
}

void fake_target_set_down(struct fake_target *ft, int down)
{
	pthread_mutex_lock(&ft->lock);
	ft->down = down;
	pthread_cond_broadcast(&ft->cond);
	if (down && ft->conn >= 0)
		shutdown(ft->conn, SHUT_RDWR);
	pthread_mutex_unlock(&ft->lock);
}

unsigned fake_target_refused(struct fake_target *ft)
{
	pthread_mutex_lock(&ft->lock);
	unsigned n = ft->refused;
	pthread_mutex_unlock(&ft->lock);
	return n;
}

void fake_target_stop(struct fake_target **pft)
{
	if (!pft || !*pft)
		return;
	struct fake_target *ft = *pft;
	pthread_mutex_lock(&ft->lock);
	ft->stopping = 1;
	ft->released = 1;
	pthread_cond_broadcast(&ft->cond);
	if (ft->conn >= 0)
		shutdown(ft->conn, SHUT_RDWR);
	pthread_mutex_unlock(&ft->lock);
	ssize_t n = write(ft->wake[1], "x", 1);
	(void)n;
	pthread_join(ft->tid, NULL);
	pthread_cond_destroy(&ft->cond);
	pthread_mutex_destroy(&ft->lock);
	close(ft->wake[0]);
	close(ft->wake[1]);
	close(ft->lfd);
	free(ft->writes);
	free(ft->hashes);
	free(ft->mem);
	free(ft->req);
	free(ft->out);
	free(ft);
	*pft = NULL;
}

const char *fake_target_port(const struct fake_target *ft)
{
	return ft->port;
}

void fake_target_error_text(struct fake_target *ft, const char *text)
{
	pthread_mutex_lock(&ft->lock);
	snprintf(ft->err_text, sizeof(ft->err_text), "%s", text ? text : "");
	pthread_mutex_unlock(&ft->lock);
}

void fake_target_script(struct fake_target *ft, uint16_t type, unsigned nth,
			enum fake_action action, uint32_t code)
{
	pthread_mutex_lock(&ft->lock);
	if (ft->nscripts < FAKE_SCRIPTS)
		ft->scripts[ft->nscripts++] = (struct script){
			.type = type, .nth = nth, .action = action,
			.code = code };
	pthread_mutex_unlock(&ft->lock);
}

int fake_target_wait_idle(struct fake_target *ft)
{
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += FAKE_IDLE_WAIT_S;
	int ret = 0;
	pthread_mutex_lock(&ft->lock);
	while (ft->ended < ft->accepted && !ret)
		ret = -pthread_cond_timedwait(&ft->cond, &ft->lock, &until);
	pthread_mutex_unlock(&ft->lock);
	return ret;
}

unsigned fake_target_count(struct fake_target *ft, uint16_t type)
{
	pthread_mutex_lock(&ft->lock);
	unsigned n = type == 0 ? ft->total :
		     type <= RPMEM_MSG_TYPE_MAX ? ft->counts[type] : 0;
	pthread_mutex_unlock(&ft->lock);
	return n;
}

uint64_t fake_target_flushed(struct fake_target *ft)
{
	pthread_mutex_lock(&ft->lock);
	uint64_t n = ft->flushed;
	pthread_mutex_unlock(&ft->lock);
	return n;
}

unsigned fake_target_connections(struct fake_target *ft)
{
	pthread_mutex_lock(&ft->lock);
	unsigned n = ft->accepted;
	pthread_mutex_unlock(&ft->lock);
	return n;
}

uint8_t *fake_target_pool(struct fake_target *ft)
{
	pthread_mutex_lock(&ft->lock);
	uint8_t *p = ft->mem;
	pthread_mutex_unlock(&ft->lock);
	return p;
}

uint8_t fake_target_state(struct fake_target *ft, uint64_t *generation)
{
	pthread_mutex_lock(&ft->lock);
	uint8_t st = ft->state;
	if (generation)
		*generation = ft->generation;
	pthread_mutex_unlock(&ft->lock);
	return st;
}

const char *fake_target_source(struct fake_target *ft)
{
	return ft->source;
}

const struct fake_write *fake_target_writes(struct fake_target *ft,
					    size_t *n)
{
	pthread_mutex_lock(&ft->lock);
	*n = ft->nwrites;
	const struct fake_write *w = ft->writes;
	pthread_mutex_unlock(&ft->lock);
	return w;
}

uint64_t fake_target_written(struct fake_target *ft, uint64_t off,
			     uint64_t len)
{
	uint64_t sum = 0, end = off + len;
	pthread_mutex_lock(&ft->lock);
	for (size_t i = 0; i < ft->nwrites; i++) {
		uint64_t a = ft->writes[i].offset;
		uint64_t b = a + ft->writes[i].len;
		if (a < off)
			a = off;
		if (b > end)
			b = end;
		if (a < b)
			sum += b - a;
	}
	pthread_mutex_unlock(&ft->lock);
	return sum;
}

const struct fake_hash_req *fake_target_hashes(struct fake_target *ft,
					       size_t *n)
{
	pthread_mutex_lock(&ft->lock);
	*n = ft->nhashes;
	const struct fake_hash_req *h = ft->hashes;
	pthread_mutex_unlock(&ft->lock);
	return h;
}

void fake_pattern(uint8_t *buf, size_t len, uint32_t seed)
{
	uint32_t x = seed * 2654435761u + 1;
	for (size_t i = 0; i < len; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		buf[i] = (uint8_t)x;
	}
}
