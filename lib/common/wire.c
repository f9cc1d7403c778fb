/* SPDX-License-Identifier: BSD-3-Clause */
/* wire.c -- bounded little-endian buffers used by the protocol codec */
#include <errno.h>

#include "wire.h"

void wbuf_init(struct wbuf *w, void *buf, size_t cap)
{
	w->p = buf;
	w->len = 0;
	w->cap = cap;
	w->err = 0;
}

/* wbuf_room -- reserve n bytes; NULL (and err set) if they do not fit */
static uint8_t *wbuf_room(struct wbuf *w, size_t n)
{
	if (w->err || n > w->cap - w->len) {
		w->err = -EMSGSIZE;
		return NULL;
	}
	uint8_t *p = w->p + w->len;
	w->len += n;
	return p;
}

void wbuf_u8(struct wbuf *w, uint8_t v)
{
	uint8_t *p = wbuf_room(w, 1);
	if (p)
		*p = v;
}

void wbuf_u16(struct wbuf *w, uint16_t v)
{
	uint8_t *p = wbuf_room(w, 2);
	if (p)
		le16_put(p, v);
}

void wbuf_u32(struct wbuf *w, uint32_t v)
{
	uint8_t *p = wbuf_room(w, 4);
	if (p)
		le32_put(p, v);
}

void wbuf_u64(struct wbuf *w, uint64_t v)
{
	uint8_t *p = wbuf_room(w, 8);
	if (p)
		le64_put(p, v);
}

void wbuf_bytes(struct wbuf *w, const void *b, size_t n)
{
	uint8_t *p = wbuf_room(w, n);
	if (p && n)
		memcpy(p, b, n);
}

void wbuf_str(struct wbuf *w, const char *s, size_t max)
{
	size_t n = s ? strlen(s) : 0;
	if (n > max || n > UINT16_MAX) {
		w->err = -EMSGSIZE;
		return;
	}
	wbuf_u16(w, (uint16_t)n);
	wbuf_bytes(w, s, n);
}

void rbuf_init(struct rbuf *r, const void *buf, size_t len)
{
	r->p = buf;
	r->len = len;
	r->off = 0;
	r->err = 0;
}

/* rbuf_take -- consume n bytes; NULL (and err set) past the end */
static const uint8_t *rbuf_take(struct rbuf *r, size_t n)
{
	if (r->err || n > r->len - r->off) {
		r->err = -EBADMSG;
		return NULL;
	}
	const uint8_t *p = r->p + r->off;
	r->off += n;
	return p;
}

uint8_t rbuf_u8(struct rbuf *r)
{
	const uint8_t *p = rbuf_take(r, 1);
	return p ? *p : 0;
}

uint16_t rbuf_u16(struct rbuf *r)
{
	const uint8_t *p = rbuf_take(r, 2);
	return p ? le16_get(p) : 0;
}

uint32_t rbuf_u32(struct rbuf *r)
{
	const uint8_t *p = rbuf_take(r, 4);
	return p ? le32_get(p) : 0;
}

uint64_t rbuf_u64(struct rbuf *r)
{
	const uint8_t *p = rbuf_take(r, 8);
	return p ? le64_get(p) : 0;
}

void rbuf_bytes(struct rbuf *r, void *b, size_t n)
{
	const uint8_t *p = rbuf_take(r, n);
	if (p)
		memcpy(b, p, n);
	else
		memset(b, 0, n);
}

void rbuf_str(struct rbuf *r, char *out, size_t outsz)
{
	uint16_t n = rbuf_u16(r);
	out[0] = '\0';
	if (r->err)
		return;
	if ((size_t)n >= outsz) {
		r->err = -EBADMSG;
		return;
	}
	const uint8_t *p = rbuf_take(r, n);
	if (!p)
		return;
	if (memchr(p, '\0', n)) {
		r->err = -EBADMSG;
		return;
	}
	memcpy(out, p, n);
	out[n] = '\0';
}
