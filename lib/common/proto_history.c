/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * proto_history.c -- the history messages: VERSIONS, READ_AT, SCRUB, GEN
 * and their replies
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "proto.h"
#include "proto_int.h"
#include "wire.h"

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
	    (m->count && m->op != RPMEM_GEN_ADOPT &&
	     m->op != RPMEM_GEN_SPLIT) ||
	    ((m->flags & (RPMEM_GEN_PULL | RPMEM_GEN_RESOLVED)) &&
	     m->op != RPMEM_GEN_SPLIT))
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
