/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * proto.c -- encoding and strict decoding of rpmem control messages: the
 * header, the helpers of every codec (proto_int.h), the handshake and the
 * pool's lifecycle (create, remove, open, kick, events). The other
 * families: proto_query.c (LIST, STATUS), proto_io.c (the data path),
 * proto_history.c (versions, scrub, generations).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "proto.h"
#include "proto_int.h"
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
int enc_end(const struct wbuf *w)
{
	return w->err ? w->err : (int)w->len;
}

/* dec_end -- the payload was consumed exactly and without error */
int dec_end(const struct rbuf *r)
{
	if (r->err || rbuf_left(r) != 0)
		return -EBADMSG;
	return 0;
}

/* rbuf_name -- a region or pool name field (may be empty) */
void rbuf_name(struct rbuf *r, char *out)
{
	rbuf_str(r, out, RPMEM_NAME_MAX + 1);
}

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
