/* SPDX-License-Identifier: BSD-3-Clause */
/* wire.h -- explicit little-endian encoding helpers and bounded buffers */
#ifndef RPMEM_WIRE_H
#define RPMEM_WIRE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline void le16_put(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static inline void le32_put(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static inline void le64_put(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static inline uint16_t le16_get(const uint8_t *p)
{
	return (uint16_t)(p[0] | (p[1] << 8));
}

static inline uint32_t le32_get(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static inline uint64_t le64_get(const uint8_t *p)
{
	return (uint64_t)le32_get(p) | (uint64_t)le32_get(p + 4) << 32;
}

/*
 * wbuf -- an append-only output buffer of fixed capacity; the first
 * overflow sets err and every later put is ignored, so encoders check once.
 */
struct wbuf {
	uint8_t *p;
	size_t len;
	size_t cap;
	int err;
};

/*
 * rbuf -- a bounded input cursor; reading past the end sets err and
 * yields zeroes, so decoders check once at the end.
 */
struct rbuf {
	const uint8_t *p;
	size_t len;
	size_t off;
	int err;
};

void wbuf_init(struct wbuf *w, void *buf, size_t cap);
void wbuf_u8(struct wbuf *w, uint8_t v);
void wbuf_u16(struct wbuf *w, uint16_t v);
void wbuf_u32(struct wbuf *w, uint32_t v);
void wbuf_u64(struct wbuf *w, uint64_t v);
void wbuf_bytes(struct wbuf *w, const void *b, size_t n);
/* a string as u16 length + bytes (no NUL); longer than max sets err */
void wbuf_str(struct wbuf *w, const char *s, size_t max);

void rbuf_init(struct rbuf *r, const void *buf, size_t len);
uint8_t rbuf_u8(struct rbuf *r);
uint16_t rbuf_u16(struct rbuf *r);
uint32_t rbuf_u32(struct rbuf *r);
uint64_t rbuf_u64(struct rbuf *r);
void rbuf_bytes(struct rbuf *r, void *b, size_t n);
/* a u16-length string into out[outsz]; longer than outsz - 1 or with a NUL sets err */
void rbuf_str(struct rbuf *r, char *out, size_t outsz);
static inline size_t rbuf_left(const struct rbuf *r)
{
	return r->len - r->off;
}

#endif
