/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * proto_io.c -- the data-path messages: I/O, READ, FLUSH, hashes,
 * PRESERVE, pool states
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "proto.h"
#include "proto_int.h"
#include "wire.h"

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
