/* SPDX-License-Identifier: BSD-3-Clause */
/* proto.c -- encoding and strict decoding of rpmem control messages */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "proto.h"
#include "wire.h"

void rpmem_hdr_encode(uint8_t *buf, const struct rpmem_hdr *h)
{
	le32_put(buf, RPMEM_PROTO_MAGIC);
	le16_put(buf + 4, h->type);
	le16_put(buf + 6, h->flags);
	le32_put(buf + 8, h->id);
	le32_put(buf + 12, h->len);
}

int rpmem_hdr_decode(const uint8_t *buf, struct rpmem_hdr *h)
{
	if (le32_get(buf) != RPMEM_PROTO_MAGIC)
		return -EBADMSG;
	h->type = le16_get(buf + 4);
	h->flags = le16_get(buf + 6);
	h->id = le32_get(buf + 8);
	h->len = le32_get(buf + 12);
	if (h->type == 0 || h->type > RPMEM_MSG_TYPE_MAX)
		return -ENOTSUP;
	if (h->len > RPMEM_MAX_PAYLOAD)
		return -EMSGSIZE;
	return 0;
}

/* enc_end -- the encoded length, or the buffer's error */
static int enc_end(const struct wbuf *w)
{
	return w->err ? w->err : (int)w->len;
}

/* dec_end -- the payload was consumed exactly and without error */
static int dec_end(const struct rbuf *r)
{
	if (r->err || rbuf_left(r) != 0)
		return -EBADMSG;
	return 0;
}

/* rbuf_name -- a region or pool name field (may be empty) */
static void rbuf_name(struct rbuf *r, char *out)
{
	rbuf_str(r, out, RPMEM_NAME_MAX + 1);
}

#define ENC_BEGIN                                                             \
	struct wbuf w;                                                        \
	wbuf_init(&w, buf, cap)
#define DEC_BEGIN                                                             \
	struct rbuf r;                                                        \
	rbuf_init(&r, buf, len);                                              \
	memset(m, 0, sizeof(*m))

int rpmem_hello_encode(void *buf, size_t cap, const struct rpmem_msg_hello *m)
{
	ENC_BEGIN;
	wbuf_u16(&w, m->ver_min);
	wbuf_u16(&w, m->ver_max);
	wbuf_u16(&w, m->auth_method);
	wbuf_str(&w, m->client, RPMEM_STR_MAX);
	if (m->auth_len > sizeof(m->auth))
		return -EMSGSIZE;
	wbuf_u16(&w, m->auth_len);
	wbuf_bytes(&w, m->auth, m->auth_len);
	return enc_end(&w);
}

int rpmem_hello_decode(const void *buf, size_t len, struct rpmem_msg_hello *m)
{
	DEC_BEGIN;
	m->ver_min = rbuf_u16(&r);
	m->ver_max = rbuf_u16(&r);
	m->auth_method = rbuf_u16(&r);
	rbuf_str(&r, m->client, sizeof(m->client));
	m->auth_len = rbuf_u16(&r);
	if (m->auth_len > sizeof(m->auth))
		return -EBADMSG;
	rbuf_bytes(&r, m->auth, m->auth_len);
	if (m->ver_min > m->ver_max)
		return -EBADMSG;
	return dec_end(&r);
}

int rpmem_hello_ok_encode(void *buf, size_t cap,
			  const struct rpmem_msg_hello_ok *m)
{
	ENC_BEGIN;
	wbuf_u16(&w, m->version);
	wbuf_u32(&w, m->session_id);
	wbuf_u32(&w, m->caps);
	wbuf_str(&w, m->server, RPMEM_STR_MAX);
	return enc_end(&w);
}

int rpmem_hello_ok_decode(const void *buf, size_t len,
			  struct rpmem_msg_hello_ok *m)
{
	DEC_BEGIN;
	m->version = rbuf_u16(&r);
	m->session_id = rbuf_u32(&r);
	m->caps = rbuf_u32(&r);
	rbuf_str(&r, m->server, sizeof(m->server));
	return dec_end(&r);
}

int rpmem_error_encode(void *buf, size_t cap, const struct rpmem_msg_error *m)
{
	ENC_BEGIN;
	wbuf_u32(&w, m->code);
	wbuf_str(&w, m->msg, RPMEM_MSG_MAX);
	return enc_end(&w);
}

int rpmem_error_decode(const void *buf, size_t len, struct rpmem_msg_error *m)
{
	DEC_BEGIN;
	m->code = rbuf_u32(&r);
	rbuf_str(&r, m->msg, sizeof(m->msg));
	if (m->code == 0 || m->code > RPMEM_E_MAX)
		m->code = RPMEM_E_INTERNAL; /* newer peer: keep the message */
	return dec_end(&r);
}

int rpmem_list_encode(void *buf, size_t cap, const struct rpmem_msg_list *m)
{
	ENC_BEGIN;
	/* a cursor goes with RPMEM_LIST_PAGE only */
	if ((m->flags & ~RPMEM_LIST_FLAGS) ||
	    (!(m->flags & RPMEM_LIST_PAGE) && m->cursor[0]))
		return -EINVAL;
	wbuf_str(&w, m->region, RPMEM_NAME_MAX);
	if (m->flags)
		wbuf_u32(&w, m->flags);
	if (m->flags & RPMEM_LIST_PAGE)
		wbuf_str(&w, m->cursor, RPMEM_CURSOR_MAX);
	return enc_end(&w);
}

int rpmem_list_decode(const void *buf, size_t len, struct rpmem_msg_list *m)
{
	DEC_BEGIN;
	rbuf_name(&r, m->region);
	if (r.err || rbuf_left(&r) == 0)
		return dec_end(&r);
	m->flags = rbuf_u32(&r);
	/* flags are never sent as 0; unknown ones ask for an unknown layout */
	if (m->flags == 0 || (m->flags & ~RPMEM_LIST_FLAGS))
		return -EBADMSG;
	if (m->flags & RPMEM_LIST_PAGE)
		rbuf_str(&r, m->cursor, sizeof(m->cursor));
	return dec_end(&r);
}

/* sizes of one encoded entry at its smallest, to bound counts early */
#define REGION_MIN_ENC (2 + 1 + 2 + 8 + 8 + 4 + 4)
#define POOL_MIN_ENC (2 + 2 + 16 + 8 + 1 + 8 + 8 + 8 + 2 + 2 + 4 + 8 + 8)

int rpmem_list_reply_encode(void *buf, size_t cap,
			    const struct rpmem_msg_list_reply *m)
{
	ENC_BEGIN;
	wbuf_u32(&w, m->nregions);
	for (uint32_t i = 0; i < m->nregions; i++) {
		const struct rpmem_region_info *ri = &m->regions[i];
		wbuf_str(&w, ri->name, RPMEM_NAME_MAX);
		wbuf_u8(&w, ri->type);
		wbuf_str(&w, ri->path, RPMEM_STR_MAX);
		wbuf_u64(&w, ri->size);
		wbuf_u64(&w, ri->free);
		wbuf_u32(&w, ri->align);
		wbuf_u32(&w, ri->caps);
	}
	wbuf_u32(&w, m->npools);
	for (uint32_t i = 0; i < m->npools; i++) {
		const struct rpmem_pool_info *p = &m->pools[i];
		wbuf_str(&w, p->region, RPMEM_NAME_MAX);
		wbuf_str(&w, p->name, RPMEM_NAME_MAX);
		wbuf_bytes(&w, p->uuid, 16);
		wbuf_u64(&w, p->size);
		wbuf_u8(&w, p->state);
		wbuf_u64(&w, p->generation);
		wbuf_u64(&w, p->created);
		wbuf_u64(&w, p->last_sync);
		wbuf_str(&w, p->source, RPMEM_STR_MAX);
		wbuf_str(&w, p->writer, RPMEM_STR_MAX);
		wbuf_u32(&w, p->readers);
		wbuf_u64(&w, p->bytes_written);
		wbuf_u64(&w, p->flushes);
		if (m->flags & RPMEM_LIST_UNDO) {
			wbuf_u8(&w, p->pending);
			wbuf_u64(&w, p->undo_generation);
			wbuf_u64(&w, p->undo_bytes);
		}
		if (m->flags & RPMEM_LIST_VERSIONS) {
			wbuf_u32(&w, p->versions);
			wbuf_u64(&w, p->versions_bytes);
		}
		if (m->flags & RPMEM_LIST_GENERATIONS) {
			if (p->ngens > RPMEM_MAX_GENERATIONS)
				return -EMSGSIZE;
			wbuf_u8(&w, p->role);
			wbuf_u8(&w, p->ngens);
			for (uint8_t k = 0; k < p->ngens; k++)
				wbuf_u64(&w, p->gens[k]);
		}
		if (m->flags & RPMEM_LIST_DAMAGED)
			wbuf_u64(&w, p->damaged);
	}
	if (m->flags & ~RPMEM_LIST_FLAGS)
		return -EINVAL;
	if (m->flags & RPMEM_LIST_PAGE)
		wbuf_str(&w, m->next, RPMEM_CURSOR_MAX);
	return enc_end(&w);
}

/*
 * gens_decode -- role u8 | count u8 | count x u64 (LIST entries,
 * GEN_REPLY); a bad role or count sets r->err
 */
static void gens_decode(struct rbuf *r, uint8_t *role, uint8_t *count,
			uint64_t *ids)
{
	*role = rbuf_u8(r);
	*count = rbuf_u8(r);
	if (r->err || *role > RPMEM_ROLE_MAX ||
	    *count > RPMEM_MAX_GENERATIONS) {
		r->err = -EBADMSG;
		*count = 0;
		return;
	}
	for (uint8_t k = 0; k < *count; k++)
		ids[k] = rbuf_u64(r);
}

int rpmem_list_reply_decode(const void *buf, size_t len,
			    struct rpmem_msg_list_reply *m)
{
	return rpmem_list_reply_decode_flags(buf, len, 0, m);
}

int rpmem_list_reply_decode_flags(const void *buf, size_t len, uint32_t flags,
				  struct rpmem_msg_list_reply *m)
{
	DEC_BEGIN;
	if (flags & ~RPMEM_LIST_FLAGS)
		return -EINVAL;
	m->flags = flags;
	uint32_t n = rbuf_u32(&r);
	if (r.err || n > rbuf_left(&r) / REGION_MIN_ENC)
		return -EBADMSG;
	m->regions = calloc(n ? n : 1, sizeof(*m->regions));
	if (!m->regions)
		return -ENOMEM;
	m->nregions = n;
	for (uint32_t i = 0; i < n; i++) {
		struct rpmem_region_info *ri = &m->regions[i];
		rbuf_name(&r, ri->name);
		ri->type = rbuf_u8(&r);
		rbuf_str(&r, ri->path, sizeof(ri->path));
		ri->size = rbuf_u64(&r);
		ri->free = rbuf_u64(&r);
		ri->align = rbuf_u32(&r);
		ri->caps = rbuf_u32(&r);
		if (ri->type > RPMEM_REGION_DEVDAX)
			r.err = -EBADMSG;
	}
	n = rbuf_u32(&r);
	if (r.err || n > rbuf_left(&r) / POOL_MIN_ENC)
		goto err;
	m->pools = calloc(n ? n : 1, sizeof(*m->pools));
	if (!m->pools) {
		rpmem_list_reply_free(m);
		return -ENOMEM;
	}
	m->npools = n;
	for (uint32_t i = 0; i < n; i++) {
		struct rpmem_pool_info *p = &m->pools[i];
		rbuf_name(&r, p->region);
		rbuf_name(&r, p->name);
		rbuf_bytes(&r, p->uuid, 16);
		p->size = rbuf_u64(&r);
		p->state = rbuf_u8(&r);
		p->generation = rbuf_u64(&r);
		p->created = rbuf_u64(&r);
		p->last_sync = rbuf_u64(&r);
		rbuf_str(&r, p->source, sizeof(p->source));
		rbuf_str(&r, p->writer, sizeof(p->writer));
		p->readers = rbuf_u32(&r);
		p->bytes_written = rbuf_u64(&r);
		p->flushes = rbuf_u64(&r);
		if (flags & RPMEM_LIST_UNDO) {
			p->pending = rbuf_u8(&r);
			p->undo_generation = rbuf_u64(&r);
			p->undo_bytes = rbuf_u64(&r);
		}
		if (flags & RPMEM_LIST_VERSIONS) {
			p->versions = rbuf_u32(&r);
			p->versions_bytes = rbuf_u64(&r);
		}
		if (flags & RPMEM_LIST_GENERATIONS)
			gens_decode(&r, &p->role, &p->ngens, p->gens);
		if (flags & RPMEM_LIST_DAMAGED)
			p->damaged = rbuf_u64(&r);
		if (p->state > RPMEM_POOL_CONSISTENT || p->pending > 1)
			r.err = -EBADMSG;
	}
	if (flags & RPMEM_LIST_PAGE)
		rbuf_str(&r, m->next, sizeof(m->next));
	if (dec_end(&r) == 0)
		return 0;
err:
	rpmem_list_reply_free(m);
	return -EBADMSG;
}

void rpmem_list_reply_free(struct rpmem_msg_list_reply *m)
{
	free(m->regions);
	free(m->pools);
	m->regions = NULL;
	m->pools = NULL;
	m->nregions = m->npools = 0;
}

int rpmem_create_encode(void *buf, size_t cap, const struct rpmem_msg_create *m)
{
	ENC_BEGIN;
	wbuf_str(&w, m->region, RPMEM_NAME_MAX);
	wbuf_str(&w, m->pool, RPMEM_NAME_MAX);
	wbuf_u64(&w, m->size);
	return enc_end(&w);
}

int rpmem_create_decode(const void *buf, size_t len, struct rpmem_msg_create *m)
{
	DEC_BEGIN;
	rbuf_name(&r, m->region);
	rbuf_name(&r, m->pool);
	m->size = rbuf_u64(&r);
	return dec_end(&r);
}

int rpmem_remove_encode(void *buf, size_t cap, const struct rpmem_msg_remove *m)
{
	ENC_BEGIN;
	wbuf_str(&w, m->region, RPMEM_NAME_MAX);
	wbuf_str(&w, m->pool, RPMEM_NAME_MAX);
	wbuf_u32(&w, m->flags);
	return enc_end(&w);
}

int rpmem_remove_decode(const void *buf, size_t len, struct rpmem_msg_remove *m)
{
	DEC_BEGIN;
	rbuf_name(&r, m->region);
	rbuf_name(&r, m->pool);
	m->flags = rbuf_u32(&r);
	if (m->flags & ~RPMEM_REMOVE_FORCE)
		return -EBADMSG;
	return dec_end(&r);
}

int rpmem_open_encode(void *buf, size_t cap, const struct rpmem_msg_open *m)
{
	ENC_BEGIN;
	wbuf_str(&w, m->region, RPMEM_NAME_MAX);
	wbuf_str(&w, m->pool, RPMEM_NAME_MAX);
	wbuf_u8(&w, m->mode);
	wbuf_u8(&w, m->xport);
	return enc_end(&w);
}

int rpmem_open_decode(const void *buf, size_t len, struct rpmem_msg_open *m)
{
	DEC_BEGIN;
	rbuf_name(&r, m->region);
	rbuf_name(&r, m->pool);
	m->mode = rbuf_u8(&r);
	m->xport = rbuf_u8(&r);
	if (m->mode > RPMEM_OPEN_RW || m->xport > RPMEM_XPORT_AUTO)
		return -EBADMSG;
	return dec_end(&r);
}

int rpmem_open_ok_encode(void *buf, size_t cap,
			 const struct rpmem_msg_open_ok *m)
{
	ENC_BEGIN;
	if (m->blob_len > RPMEM_XPORT_BLOB_MAX)
		return -EMSGSIZE;
	wbuf_u32(&w, m->handle);
	wbuf_u64(&w, m->size);
	wbuf_u8(&w, m->state);
	wbuf_u64(&w, m->generation);
	wbuf_bytes(&w, m->uuid, 16);
	wbuf_u8(&w, m->xport);
	wbuf_u16(&w, m->blob_len);
	wbuf_bytes(&w, m->blob, m->blob_len);
	return enc_end(&w);
}

int rpmem_open_ok_decode(const void *buf, size_t len,
			 struct rpmem_msg_open_ok *m)
{
	DEC_BEGIN;
	m->handle = rbuf_u32(&r);
	m->size = rbuf_u64(&r);
	m->state = rbuf_u8(&r);
	m->generation = rbuf_u64(&r);
	rbuf_bytes(&r, m->uuid, 16);
	m->xport = rbuf_u8(&r);
	m->blob_len = rbuf_u16(&r);
	if (m->blob_len > RPMEM_XPORT_BLOB_MAX)
		return -EBADMSG;
	rbuf_bytes(&r, m->blob, m->blob_len);
	if (m->state > RPMEM_POOL_CONSISTENT || m->xport > RPMEM_XPORT_RDMA)
		return -EBADMSG;
	return dec_end(&r);
}

int rpmem_handle_encode(void *buf, size_t cap, const struct rpmem_msg_handle *m)
{
	ENC_BEGIN;
	wbuf_u32(&w, m->handle);
	return enc_end(&w);
}

int rpmem_handle_decode(const void *buf, size_t len, struct rpmem_msg_handle *m)
{
	DEC_BEGIN;
	m->handle = rbuf_u32(&r);
	return dec_end(&r);
}

int rpmem_kick_encode(void *buf, size_t cap, const struct rpmem_msg_kick *m)
{
	ENC_BEGIN;
	wbuf_u32(&w, m->session);
	wbuf_u32(&w, m->flags);
	return enc_end(&w);
}

int rpmem_kick_decode(const void *buf, size_t len, struct rpmem_msg_kick *m)
{
	DEC_BEGIN;
	m->session = rbuf_u32(&r);
	m->flags = rbuf_u32(&r);
	if (r.err == 0 && m->flags != 0)
		return -EBADMSG;
	return dec_end(&r);
}

int rpmem_events_encode(void *buf, size_t cap,
			const struct rpmem_msg_events *m)
{
	ENC_BEGIN;
	wbuf_u32(&w, m->flags);
	return enc_end(&w);
}

int rpmem_events_decode(const void *buf, size_t len,
			struct rpmem_msg_events *m)
{
	DEC_BEGIN;
	m->flags = rbuf_u32(&r);
	if (r.err == 0 && (m->flags & ~RPMEM_EVENTS_NOW))
		return -EBADMSG;
	return dec_end(&r);
}

int rpmem_event_encode(void *buf, size_t cap, const struct rpmem_msg_event *m)
{
	ENC_BEGIN;
	wbuf_u8(&w, m->verb);
	wbuf_u8(&w, m->object);
	wbuf_u64(&w, m->time_ms);
	wbuf_u32(&w, m->session);
	wbuf_str(&w, m->region, RPMEM_NAME_MAX);
	wbuf_str(&w, m->pool, RPMEM_NAME_MAX);
	wbuf_u8(&w, m->state);
	wbuf_u64(&w, m->generation);
	wbuf_u64(&w, m->size);
	wbuf_u64(&w, m->bytes);
	wbuf_u64(&w, m->lost);
	wbuf_str(&w, m->peer, RPMEM_STR_MAX);
	wbuf_str(&w, m->client, RPMEM_STR_MAX);
	wbuf_str(&w, m->identity, RPMEM_IDENTITY_MAX);
	wbuf_str(&w, m->limit, RPMEM_EV_LIMIT_MAX);
	wbuf_str(&w, m->text, RPMEM_STR_MAX);
	return enc_end(&w);
}

int rpmem_event_decode(const void *buf, size_t len, struct rpmem_msg_event *m)
{
	DEC_BEGIN;
	m->verb = rbuf_u8(&r);
	m->object = rbuf_u8(&r);
	m->time_ms = rbuf_u64(&r);
	m->session = rbuf_u32(&r);
	rbuf_str(&r, m->region, sizeof(m->region));
	rbuf_str(&r, m->pool, sizeof(m->pool));
	m->state = rbuf_u8(&r);
	m->generation = rbuf_u64(&r);
	m->size = rbuf_u64(&r);
	m->bytes = rbuf_u64(&r);
	m->lost = rbuf_u64(&r);
	rbuf_str(&r, m->peer, sizeof(m->peer));
	rbuf_str(&r, m->client, sizeof(m->client));
	rbuf_str(&r, m->identity, sizeof(m->identity));
	rbuf_str(&r, m->limit, sizeof(m->limit));
	rbuf_str(&r, m->text, sizeof(m->text));
	if (m->verb > RPMEM_EV_VERB_MAX || m->object > RPMEM_EVO_OBJECT_MAX ||
	    m->state > RPMEM_POOL_CONSISTENT)
		return -EBADMSG;
	return dec_end(&r);
}

int rpmem_io_encode(void *buf, size_t cap, const struct rpmem_msg_io *m)
{
	ENC_BEGIN;
	wbuf_u32(&w, m->handle);
	wbuf_u64(&w, m->offset);
	wbuf_u32(&w, m->len);
	return enc_end(&w);
}

/*
 * rpmem_io_decode -- the 16-byte head of READ and WRITE; for WRITE the
 * caller checks that the frame's payload is exactly 16 + len bytes.
 */
int rpmem_io_decode(const void *buf, size_t len, struct rpmem_msg_io *m)
{
	DEC_BEGIN;
	m->handle = rbuf_u32(&r);
	m->offset = rbuf_u64(&r);
	m->len = rbuf_u32(&r);
	if (m->len > RPMEM_MAX_IO || m->offset > UINT64_MAX - m->len)
		return -EBADMSG;
	return dec_end(&r);
}

int rpmem_read_encode(void *buf, size_t cap, const struct rpmem_msg_io *m,
		      uint32_t flags)
{
	ENC_BEGIN;
	wbuf_u32(&w, m->handle);
	wbuf_u64(&w, m->offset);
	wbuf_u32(&w, m->len);
	if (flags & ~RPMEM_READ_FLAGS)
		return -EINVAL;
	if (flags)
		wbuf_u32(&w, flags);
	return enc_end(&w);
}

int rpmem_read_decode(const void *buf, size_t len, struct rpmem_msg_io *m,
		      uint32_t *flags)
{
	DEC_BEGIN;
	m->handle = rbuf_u32(&r);
	m->offset = rbuf_u64(&r);
	m->len = rbuf_u32(&r);
	*flags = 0;
	if (!r.err && rbuf_left(&r)) {
		*flags = rbuf_u32(&r);
		if (!*flags || (*flags & ~RPMEM_READ_FLAGS))
			return -EBADMSG;
	}
	if (m->len > RPMEM_MAX_IO || m->offset > UINT64_MAX - m->len)
		return -EBADMSG;
	return dec_end(&r);
}

int rpmem_flush_encode(void *buf, size_t cap, const struct rpmem_msg_flush *m)
{
	ENC_BEGIN;
	wbuf_u32(&w, m->handle);
	wbuf_u64(&w, m->offset);
	wbuf_u64(&w, m->len);
	return enc_end(&w);
}

int rpmem_flush_decode(const void *buf, size_t len, struct rpmem_msg_flush *m)
{
	DEC_BEGIN;
	m->handle = rbuf_u32(&r);
	m->offset = rbuf_u64(&r);
	m->len = rbuf_u64(&r);
	if (m->offset > UINT64_MAX - m->len)
		return -EBADMSG;
	return dec_end(&r);
}

int rpmem_hash_encode(void *buf, size_t cap, const struct rpmem_msg_hash *m)
{
	ENC_BEGIN;
	wbuf_u32(&w, m->handle);
	wbuf_u64(&w, m->offset);
	wbuf_u32(&w, m->block_size);
	wbuf_u32(&w, m->count);
	/* 20 bytes without flags: what a target without the cap expects */
	if (m->flags)
		wbuf_u32(&w, m->flags);
	return enc_end(&w);
}

int rpmem_hash_decode(const void *buf, size_t len, struct rpmem_msg_hash *m)
{
	DEC_BEGIN;
	m->handle = rbuf_u32(&r);
	m->offset = rbuf_u64(&r);
	m->block_size = rbuf_u32(&r);
	m->count = rbuf_u32(&r);
	if (rbuf_left(&r) == 4)
		m->flags = rbuf_u32(&r);
	if (m->flags & ~RPMEM_HASH_FLAGS_ALL)
		return -EBADMSG;
	uint32_t bs = m->block_size;
	if (!rpmem_bs_ok(bs, RPMEM_HASH_BS_MIN))
		return -EBADMSG;
	/* a tree hash is made of whole 4 KiB pieces */
	if ((m->flags & RPMEM_HASH_TREE) && bs < RPMEM_HASH_PIECE)
		return -EBADMSG;
	if (m->count == 0 || m->count > RPMEM_MAX_HASHES)
		return -EBADMSG;
	if (m->offset > UINT64_MAX - (uint64_t)bs * m->count)
		return -EBADMSG;
	return dec_end(&r);
}

#define HASHV_RANGE_ENC (8 + 4)

int rpmem_hashv_encode(void *buf, size_t cap, const struct rpmem_msg_hashv *m)
{
	ENC_BEGIN;
	if (m->nranges > RPMEM_MAX_HASHV_RANGES)
		return -EMSGSIZE;
	wbuf_u32(&w, m->handle);
	wbuf_u32(&w, m->block_size);
	wbuf_u32(&w, m->nranges);
	for (uint32_t i = 0; i < m->nranges; i++) {
		wbuf_u64(&w, m->ranges[i].offset);
		wbuf_u32(&w, m->ranges[i].count);
	}
	return enc_end(&w);
}

/*
 * rpmem_hashv_decode -- HASHV: every range holds 1 or more blocks and
 * ends below 2^64; the counts add up to at most RPMEM_MAX_HASHES (the
 * sum cannot wrap: 340 counts below 2^32 stay below 2^41)
 */
int rpmem_hashv_decode(const void *buf, size_t len, struct rpmem_msg_hashv *m)
{
	uint64_t total = 0;

	DEC_BEGIN;
	m->handle = rbuf_u32(&r);
	m->block_size = rbuf_u32(&r);
	m->nranges = rbuf_u32(&r);
	if (r.err || !rpmem_bs_ok(m->block_size, RPMEM_HASH_BS_MIN) || m->nranges == 0 ||
	    m->nranges > RPMEM_MAX_HASHV_RANGES ||
	    rbuf_left(&r) != (size_t)m->nranges * HASHV_RANGE_ENC)
		return -EBADMSG;
	for (uint32_t i = 0; i < m->nranges; i++) {
		struct rpmem_hash_range *rg = &m->ranges[i];
		rg->offset = rbuf_u64(&r);
		rg->count = rbuf_u32(&r);
		total += rg->count;
		if (rg->count == 0 || total > RPMEM_MAX_HASHES ||
		    rg->offset > UINT64_MAX -
					 (uint64_t)m->block_size * rg->count)
			return -EBADMSG;
	}
	m->total = (uint32_t)total;
	return dec_end(&r);
}

int rpmem_hashes_encode(void *buf, size_t cap, const struct rpmem_msg_hashes *m)
{
	ENC_BEGIN;
	if (m->count > RPMEM_MAX_HASHES)
		return -EMSGSIZE;
	wbuf_u32(&w, m->count);
	wbuf_bytes(&w, m->hashes, (size_t)m->count * 8);
	return enc_end(&w);
}

int rpmem_hashes_decode(const void *buf, size_t len, struct rpmem_msg_hashes *m)
{
	DEC_BEGIN;
	m->count = rbuf_u32(&r);
	if (r.err || m->count > RPMEM_MAX_HASHES ||
	    rbuf_left(&r) != (size_t)m->count * 8)
		return -EBADMSG;
	m->hashes = (const uint8_t *)buf + 4;
	return 0;
}

int rpmem_versions_encode(void *buf, size_t cap,
			  const struct rpmem_msg_versions *m)
{
	ENC_BEGIN;
	wbuf_u32(&w, m->handle);
	wbuf_u8(&w, m->op);
	wbuf_u64(&w, m->version);
	return enc_end(&w);
}

int rpmem_versions_decode(const void *buf, size_t len,
			  struct rpmem_msg_versions *m)
{
	DEC_BEGIN;
	m->handle = rbuf_u32(&r);
	m->op = rbuf_u8(&r);
	m->version = rbuf_u64(&r);
	if (r.err == 0 && m->op > RPMEM_VERSIONS_OP_MAX)
		return -EBADMSG;
	return dec_end(&r);
}

int rpmem_versions_reply_encode(void *buf, size_t cap,
				const struct rpmem_msg_versions_reply *m)
{
	ENC_BEGIN;
	if (m->count > RPMEM_MAX_VERSIONS)
		return -EMSGSIZE;
	wbuf_u32(&w, m->count);
	for (uint32_t i = 0; i < m->count; i++) {
		const struct rpmem_version_entry *e = &m->v[i];
		wbuf_u64(&w, e->generation);
		wbuf_u64(&w, e->time);
		wbuf_u64(&w, e->committed);
		wbuf_u64(&w, e->size);
		wbuf_u64(&w, e->bytes);
		wbuf_u64(&w, e->hash);
		wbuf_str(&w, e->source, RPMEM_STR_MAX);
	}
	for (uint32_t i = 0; m->with_flags && i < m->count; i++)
		wbuf_u8(&w, m->v[i].flags);
	return enc_end(&w);
}

int rpmem_versions_reply_decode(const void *buf, size_t len,
				struct rpmem_msg_versions_reply *m)
{
	struct rpmem_version_entry *v = m->v; /* the caller's */
	DEC_BEGIN;
	m->v = v;
	m->count = rbuf_u32(&r);
	if (r.err || m->count > RPMEM_MAX_VERSIONS)
		return -EBADMSG;
	for (uint32_t i = 0; i < m->count && !r.err; i++) {
		struct rpmem_version_entry *e = &m->v[i];
		e->generation = rbuf_u64(&r);
		e->time = rbuf_u64(&r);
		e->committed = rbuf_u64(&r);
		e->size = rbuf_u64(&r);
		e->bytes = rbuf_u64(&r);
		e->hash = rbuf_u64(&r);
		rbuf_str(&r, e->source, sizeof(e->source));
		e->flags = 0;
	}
	/* each entry's flags, if asked for and the target knows them */
	m->with_flags = !r.err && m->count && rbuf_left(&r) == m->count;
	for (uint32_t i = 0; m->with_flags && i < m->count; i++)
		m->v[i].flags = rbuf_u8(&r);
	return dec_end(&r);
}

int rpmem_read_at_encode(void *buf, size_t cap,
			 const struct rpmem_msg_read_at *m)
{
	ENC_BEGIN;
	wbuf_u32(&w, m->handle);
	wbuf_u64(&w, m->offset);
	wbuf_u32(&w, m->len);
	wbuf_u64(&w, m->version);
	if (m->flags & ~RPMEM_READ_FLAGS)
		return -EINVAL;
	if (m->flags)
		wbuf_u32(&w, m->flags);
	return enc_end(&w);
}

int rpmem_read_at_decode(const void *buf, size_t len,
			 struct rpmem_msg_read_at *m)
{
	DEC_BEGIN;
	m->handle = rbuf_u32(&r);
	m->offset = rbuf_u64(&r);
	m->len = rbuf_u32(&r);
	m->version = rbuf_u64(&r);
	m->flags = 0;
	if (!r.err && rbuf_left(&r)) {
		m->flags = rbuf_u32(&r);
		if (!m->flags || (m->flags & ~RPMEM_READ_FLAGS))
			return -EBADMSG;
	}
	if (r.err == 0 &&
	    (m->len > RPMEM_MAX_IO || m->offset > UINT64_MAX - m->len))
		return -EBADMSG;
	return dec_end(&r);
}

int rpmem_scrub_encode(void *buf, size_t cap, const struct rpmem_msg_scrub *m)
{
	ENC_BEGIN;
	wbuf_u32(&w, m->handle);
	wbuf_u64(&w, m->offset);
	wbuf_u32(&w, m->count);
	wbuf_u64(&w, m->version);
	return enc_end(&w);
}

int rpmem_scrub_decode(const void *buf, size_t len, struct rpmem_msg_scrub *m)
{
	DEC_BEGIN;
	m->handle = rbuf_u32(&r);
	m->offset = rbuf_u64(&r);
	m->count = rbuf_u32(&r);
	m->version = rbuf_u64(&r);
	if (r.err == 0 &&
	    (m->count == 0 || m->count > RPMEM_MAX_SCRUB_PIECES ||
	     m->offset % RPMEM_HASH_PIECE ||
	     m->offset > UINT64_MAX - (uint64_t)m->count * RPMEM_HASH_PIECE))
		return -EBADMSG;
	return dec_end(&r);
}

int rpmem_scrub_reply_encode(void *buf, size_t cap,
			     const struct rpmem_msg_scrub_reply *m)
{
	ENC_BEGIN;
	if (m->count > RPMEM_MAX_SCRUB_PIECES)
		return -EMSGSIZE;
	wbuf_u8(&w, m->why);
	wbuf_u64(&w, m->generation);
	wbuf_u32(&w, m->count);
	wbuf_bytes(&w, m->pieces, m->count);
	return enc_end(&w);
}

int rpmem_scrub_reply_decode(const void *buf, size_t len,
			     struct rpmem_msg_scrub_reply *m)
{
	DEC_BEGIN;
	m->why = rbuf_u8(&r);
	m->generation = rbuf_u64(&r);
	m->count = rbuf_u32(&r);
	if (r.err || m->why > RPMEM_SCRUB_WHY_MAX ||
	    m->count > RPMEM_MAX_SCRUB_PIECES || rbuf_left(&r) != m->count)
		return -EBADMSG;
	m->pieces = (const uint8_t *)buf + 13;
	for (uint32_t i = 0; i < m->count; i++)
		if (m->pieces[i] > RPMEM_SCRUB_PIECE_MAX)
			return -EBADMSG;
	return 0;
}

int rpmem_set_state_encode(void *buf, size_t cap,
			   const struct rpmem_msg_set_state *m)
{
	ENC_BEGIN;
	wbuf_u32(&w, m->handle);
	wbuf_u8(&w, m->state);
	wbuf_str(&w, m->source, RPMEM_STR_MAX);
	if (m->flags)
		wbuf_u32(&w, m->flags);
	if (m->flags & RPMEM_SET_STATE_CHANGE)
		wbuf_u64(&w, m->change);
	return enc_end(&w);
}

int rpmem_set_state_decode(const void *buf, size_t len,
			   struct rpmem_msg_set_state *m)
{
	DEC_BEGIN;
	m->handle = rbuf_u32(&r);
	m->state = rbuf_u8(&r);
	rbuf_str(&r, m->source, sizeof(m->source));
	m->flags = 0;
	m->change = 0;
	if (!r.err && rbuf_left(&r) >= 4)
		m->flags = rbuf_u32(&r);
	if (m->flags & RPMEM_SET_STATE_CHANGE)
		m->change = rbuf_u64(&r);
	if (m->state > RPMEM_POOL_CONSISTENT ||
	    (m->flags & ~RPMEM_SET_STATE_FLAGS) ||
	    ((m->flags & RPMEM_SET_STATE_ROLLBACK) &&
	     m->state != RPMEM_POOL_CONSISTENT) ||
	    ((m->flags & RPMEM_SET_STATE_CHANGE) &&
	     m->state != RPMEM_POOL_SYNCING) ||
	    ((m->flags & RPMEM_SET_STATE_NOTE) &&
	     !(m->flags & RPMEM_SET_STATE_REPLY)))
		return -EBADMSG;
	return dec_end(&r);
}

#define PRESERVE_RANGE_ENC 16

int rpmem_preserve_encode(void *buf, size_t cap,
			  const struct rpmem_msg_preserve *m)
{
	ENC_BEGIN;
	if (m->nranges == 0 || m->nranges > RPMEM_MAX_PRESERVE_RANGES)
		return -EMSGSIZE;
	wbuf_u32(&w, m->handle);
	wbuf_u32(&w, m->nranges);
	for (uint32_t i = 0; i < m->nranges; i++) {
		wbuf_u64(&w, m->ranges[i].offset);
		wbuf_u64(&w, m->ranges[i].len);
	}
	return enc_end(&w);
}

/*
 * rpmem_preserve_decode -- PRESERVE: 1 .. RPMEM_MAX_PRESERVE_RANGES
 * ranges, each at least a byte long and ending below 2^64
 */
int rpmem_preserve_decode(const void *buf, size_t len,
			  struct rpmem_msg_preserve *m)
{
	DEC_BEGIN;
	m->handle = rbuf_u32(&r);
	m->nranges = rbuf_u32(&r);
	if (r.err || m->nranges == 0 ||
	    m->nranges > RPMEM_MAX_PRESERVE_RANGES ||
	    rbuf_left(&r) != (size_t)m->nranges * PRESERVE_RANGE_ENC)
		return -EBADMSG;
	for (uint32_t i = 0; i < m->nranges; i++) {
		struct rpmem_preserve_range *rg = &m->ranges[i];
		rg->offset = rbuf_u64(&r);
		rg->len = rbuf_u64(&r);
		if (rg->len == 0 || rg->offset > UINT64_MAX - rg->len)
			return -EBADMSG;
	}
	return dec_end(&r);
}

int rpmem_state_encode(void *buf, size_t cap, const struct rpmem_msg_state *m)
{
	ENC_BEGIN;
	wbuf_u8(&w, m->state);
	wbuf_u64(&w, m->generation);
	if (m->note[0])
		wbuf_str(&w, m->note, RPMEM_MSG_MAX);
	return enc_end(&w);
}

int rpmem_state_decode(const void *buf, size_t len, struct rpmem_msg_state *m)
{
	DEC_BEGIN;
	m->state = rbuf_u8(&r);
	m->generation = rbuf_u64(&r);
	if (!r.err && rbuf_left(&r))
		rbuf_str(&r, m->note, sizeof(m->note));
	if (m->state > RPMEM_POOL_CONSISTENT)
		return -EBADMSG;
	return dec_end(&r);
}

#define SESSION_MIN_ENC (4 + 2 + 2 + 1 + 2 + 1 + 8 * 6)
#define SESSION_ID_ENC (2 + 1) /* identity and auth, extended layout */

int rpmem_status_encode(void *buf, size_t cap, const struct rpmem_msg_status *m)
{
	ENC_BEGIN;
	/* a cursor goes with RPMEM_STATUS_PAGE only */
	if ((m->flags & ~RPMEM_STATUS_FLAGS) ||
	    (!(m->flags & RPMEM_STATUS_PAGE) && m->cursor[0]))
		return -EINVAL;
	if (m->flags)
		wbuf_u32(&w, m->flags);
	if (m->flags & RPMEM_STATUS_PAGE)
		wbuf_str(&w, m->cursor, RPMEM_CURSOR_MAX);
	return enc_end(&w);
}

int rpmem_status_decode(const void *buf, size_t len,
			struct rpmem_msg_status *m)
{
	DEC_BEGIN;
	if (len == 0)
		return 0;
	m->flags = rbuf_u32(&r);
	/* a flag this end does not know asks for a layout it cannot send */
	if (m->flags == 0 || (m->flags & ~RPMEM_STATUS_FLAGS))
		return -EBADMSG;
	if (m->flags & RPMEM_STATUS_PAGE)
		rbuf_str(&r, m->cursor, sizeof(m->cursor));
	return dec_end(&r);
}
#define NS_MIN_ENC (2 + 2 + 2 + 1 + 8 + 4 + 4 + 2)
#define LINK_MIN_ENC (2 + 4)

int rpmem_status_reply_encode(void *buf, size_t cap,
			      const struct rpmem_msg_status_reply *m)
{
	ENC_BEGIN;
	wbuf_str(&w, m->server, RPMEM_STR_MAX);
	wbuf_u64(&w, m->pid);
	wbuf_u64(&w, m->uptime);
	wbuf_u32(&w, m->caps);
	wbuf_u32(&w, m->max_sessions);
	wbuf_u32(&w, m->nsessions);
	if (m->flags & ~RPMEM_STATUS_FLAGS)
		return -EINVAL;
	for (uint32_t i = 0; i < m->nsessions; i++) {
		const struct rpmem_session_info *s = &m->sessions[i];
		wbuf_u32(&w, s->id);
		if (m->flags & RPMEM_STATUS_IDENTITY) {
			wbuf_str(&w, s->identity, RPMEM_IDENTITY_MAX);
			wbuf_u8(&w, s->auth);
		}
		wbuf_str(&w, s->peer, RPMEM_STR_MAX);
		wbuf_str(&w, s->client, RPMEM_STR_MAX);
		wbuf_u8(&w, s->xport);
		wbuf_str(&w, s->pool, sizeof(s->pool) - 1);
		wbuf_u8(&w, s->mode);
		wbuf_u64(&w, s->started);
		wbuf_u64(&w, s->bytes_written);
		wbuf_u64(&w, s->bytes_read);
		wbuf_u64(&w, s->flushes);
		wbuf_u64(&w, s->last_flush_ns);
	}
	if (m->nnamespaces > RPMEM_MAX_NAMESPACES ||
	    m->nlinks > RPMEM_MAX_NS_LINKS)
		return -EMSGSIZE;
	wbuf_u32(&w, m->nnamespaces);
	for (uint32_t i = 0; i < m->nnamespaces; i++) {
		const struct rpmem_ns_info *ns = &m->namespaces[i];
		wbuf_str(&w, ns->name, RPMEM_NAME_MAX);
		wbuf_str(&w, ns->nd_region, RPMEM_NAME_MAX);
		wbuf_str(&w, ns->dev, RPMEM_STR_MAX);
		wbuf_u8(&w, ns->mode);
		wbuf_u64(&w, ns->size);
		wbuf_u32(&w, ns->align);
		wbuf_u32(&w, (uint32_t)ns->numa);
		wbuf_str(&w, ns->mount, RPMEM_STR_MAX);
	}
	wbuf_u32(&w, m->nlinks);
	for (uint32_t i = 0; i < m->nlinks; i++) {
		wbuf_str(&w, m->links[i].region, RPMEM_NAME_MAX);
		wbuf_u32(&w, m->links[i].ns);
	}
	if (m->flags & RPMEM_STATUS_PAGE)
		wbuf_str(&w, m->next, RPMEM_CURSOR_MAX);
	return enc_end(&w);
}

/*
 * status_ns_decode -- the namespaces and region links of a STATUS_REPLY
 * into m (which owns what is allocated, also on failure): 0, -EBADMSG or
 * -ENOMEM
 */
static int status_ns_decode(struct rbuf *r, struct rpmem_msg_status_reply *m)
{
	uint32_t n = rbuf_u32(r);

	if (r->err || n > RPMEM_MAX_NAMESPACES || n > rbuf_left(r) / NS_MIN_ENC)
		return -EBADMSG;
	m->namespaces = calloc(n ? n : 1, sizeof(*m->namespaces));
	if (!m->namespaces)
		return -ENOMEM;
	m->nnamespaces = n;
	for (uint32_t i = 0; i < n; i++) {
		struct rpmem_ns_info *ns = &m->namespaces[i];
		rbuf_name(r, ns->name);
		rbuf_name(r, ns->nd_region);
		rbuf_str(r, ns->dev, sizeof(ns->dev));
		ns->mode = rbuf_u8(r);
		ns->size = rbuf_u64(r);
		ns->align = rbuf_u32(r);
		ns->numa = (int32_t)rbuf_u32(r);
		rbuf_str(r, ns->mount, sizeof(ns->mount));
		if (r->err || !ns->name[0] || ns->mode > RPMEM_NS_MODE_MAX ||
		    ns->numa < -1)
			return -EBADMSG;
	}
	n = rbuf_u32(r);
	if (r->err || n > RPMEM_MAX_NS_LINKS || n > rbuf_left(r) / LINK_MIN_ENC)
		return -EBADMSG;
	m->links = calloc(n ? n : 1, sizeof(*m->links));
	if (!m->links)
		return -ENOMEM;
	m->nlinks = n;
	for (uint32_t i = 0; i < n; i++) {
		struct rpmem_ns_link *l = &m->links[i];
		rbuf_name(r, l->region);
		l->ns = rbuf_u32(r);
		if (r->err || !l->region[0] || l->ns >= m->nnamespaces)
			return -EBADMSG;
	}
	return 0;
}

int rpmem_status_reply_decode(const void *buf, size_t len,
			      struct rpmem_msg_status_reply *m)
{
	return rpmem_status_reply_decode_flags(buf, len, 0, m);
}

int rpmem_status_reply_decode_flags(const void *buf, size_t len,
				    uint32_t flags,
				    struct rpmem_msg_status_reply *m)
{
	size_t min = SESSION_MIN_ENC;
	int ret;

	DEC_BEGIN;
	if (flags & ~RPMEM_STATUS_FLAGS)
		return -EINVAL;
	m->flags = flags;
	if (flags & RPMEM_STATUS_IDENTITY)
		min += SESSION_ID_ENC;
	rbuf_str(&r, m->server, sizeof(m->server));
	m->pid = rbuf_u64(&r);
	m->uptime = rbuf_u64(&r);
	m->caps = rbuf_u32(&r);
	m->max_sessions = rbuf_u32(&r);
	uint32_t n = rbuf_u32(&r);
	if (r.err || n > rbuf_left(&r) / min)
		return -EBADMSG;
	m->sessions = calloc(n ? n : 1, sizeof(*m->sessions));
	if (!m->sessions)
		return -ENOMEM;
	m->nsessions = n;
	for (uint32_t i = 0; i < n; i++) {
		struct rpmem_session_info *s = &m->sessions[i];
		s->id = rbuf_u32(&r);
		if (flags & RPMEM_STATUS_IDENTITY) {
			rbuf_str(&r, s->identity, sizeof(s->identity));
			s->auth = rbuf_u8(&r);
			if (s->auth > RPMEM_AUTH_MAX)
				r.err = -EBADMSG;
		}
		rbuf_str(&r, s->peer, sizeof(s->peer));
		rbuf_str(&r, s->client, sizeof(s->client));
		s->xport = rbuf_u8(&r);
		rbuf_str(&r, s->pool, sizeof(s->pool));
		s->mode = rbuf_u8(&r);
		s->started = rbuf_u64(&r);
		s->bytes_written = rbuf_u64(&r);
		s->bytes_read = rbuf_u64(&r);
		s->flushes = rbuf_u64(&r);
		s->last_flush_ns = rbuf_u64(&r);
		if (s->xport > RPMEM_XPORT_RDMA || s->mode > RPMEM_OPEN_RW)
			r.err = -EBADMSG;
	}
	ret = status_ns_decode(&r, m);
	if (ret == 0 && (flags & RPMEM_STATUS_PAGE))
		rbuf_str(&r, m->next, sizeof(m->next));
	if (ret == 0 && dec_end(&r) == 0)
		return 0;
	rpmem_status_reply_free(m);
	return ret == -ENOMEM ? -ENOMEM : -EBADMSG;
}

void rpmem_status_reply_free(struct rpmem_msg_status_reply *m)
{
	free(m->sessions);
	free(m->namespaces);
	free(m->links);
	m->sessions = NULL;
	m->namespaces = NULL;
	m->links = NULL;
	m->nsessions = m->nnamespaces = m->nlinks = 0;
}

int rpmem_gen_encode(void *buf, size_t cap, const struct rpmem_msg_gen *m)
{
	ENC_BEGIN;
	if (m->count > RPMEM_MAX_GENERATIONS)
		return -EMSGSIZE;
	wbuf_u32(&w, m->handle);
	wbuf_u8(&w, m->op);
	wbuf_u32(&w, m->flags);
	wbuf_u8(&w, m->count);
	for (uint8_t k = 0; k < m->count; k++)
		wbuf_u64(&w, m->ids[k]);
	return enc_end(&w);
}

int rpmem_gen_decode(const void *buf, size_t len, struct rpmem_msg_gen *m)
{
	DEC_BEGIN;
	m->handle = rbuf_u32(&r);
	m->op = rbuf_u8(&r);
	m->flags = rbuf_u32(&r);
	m->count = rbuf_u8(&r);
	if (r.err || m->op > RPMEM_GEN_OP_MAX ||
	    (m->flags & ~RPMEM_GEN_FLAGS) ||
	    m->count > RPMEM_MAX_GENERATIONS ||
	    (m->count && m->op != RPMEM_GEN_ADOPT))
		return -EBADMSG;
	for (uint8_t k = 0; k < m->count; k++)
		m->ids[k] = rbuf_u64(&r);
	return dec_end(&r);
}

int rpmem_gen_reply_encode(void *buf, size_t cap,
			   const struct rpmem_msg_gen_reply *m)
{
	ENC_BEGIN;
	if (m->count > RPMEM_MAX_GENERATIONS)
		return -EMSGSIZE;
	wbuf_u8(&w, m->role);
	wbuf_u8(&w, m->state);
	wbuf_u64(&w, m->generation);
	wbuf_u64(&w, m->changed);
	wbuf_u8(&w, m->rolled_back);
	wbuf_u8(&w, m->count);
	for (uint8_t k = 0; k < m->count; k++)
		wbuf_u64(&w, m->ids[k]);
	return enc_end(&w);
}

int rpmem_gen_reply_decode(const void *buf, size_t len,
			   struct rpmem_msg_gen_reply *m)
{
	DEC_BEGIN;
	uint8_t role = rbuf_u8(&r);
	m->state = rbuf_u8(&r);
	m->generation = rbuf_u64(&r);
	m->changed = rbuf_u64(&r);
	m->rolled_back = rbuf_u8(&r);
	m->count = rbuf_u8(&r);
	if (r.err || role > RPMEM_ROLE_MAX ||
	    m->state > RPMEM_POOL_CONSISTENT || m->rolled_back > 1 ||
	    m->count > RPMEM_MAX_GENERATIONS)
		return -EBADMSG;
	m->role = role;
	for (uint8_t k = 0; k < m->count; k++)
		m->ids[k] = rbuf_u64(&r);
	return dec_end(&r);
}
