/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * xstream.c -- rpmemctl: the framed export stream, encoded and checked
 * (docs/ARCHITECTURE.md, "Export streams"). Every number is little
 * endian; every hash is XXH3-128 in its canonical (big endian) bytes.
 */

#include <endian.h>
#include <errno.h>
#include <string.h>
#include <xxhash.h>

#include "xstream.h"

/* offsets in the header */
#define H_VERSION 8
#define H_HDR_SIZE 12
#define H_HASH_ALG 16
#define H_CHUNK 20
#define H_SIZE 24
#define H_GEN 32
#define H_FLAGS 40
#define H_UUID 56 /* 48..55: reserved, 0 */
#define H_NAME (H_UUID + XSTREAM_UUID_LEN)
#define H_NIDS (H_NAME + XSTREAM_NAME_LEN) /* format 2: u64 */
#define H_IDS (H_NIDS + 8)		   /* format 2: nids u64 */
#define H_IDS_END (H_IDS + XSTREAM_MAX_IDS * 8)
#define H_HASH (XSTREAM_HDR_SIZE - XSTREAM_HASH_SIZE)

/* offsets in the trailer */
#define T_CHUNKS 8
#define T_SIZE 16
#define T_IMAGE 24
#define T_HASH (XSTREAM_TRAILER_SIZE - XSTREAM_HASH_SIZE)

static void put32(uint8_t *p, uint32_t v)
{
	v = htole32(v);
	memcpy(p, &v, sizeof(v));
}

static void put64(uint8_t *p, uint64_t v)
{
	v = htole64(v);
	memcpy(p, &v, sizeof(v));
}

static uint32_t get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return le32toh(v);
}

static uint64_t get64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return le64toh(v);
}

/* canon -- a 128-bit hash as its canonical bytes */
static void canon(XXH128_hash_t h, uint8_t out[XSTREAM_HASH_SIZE])
{
	XXH128_canonical_t c;

	XXH128_canonicalFromHash(&c, h);
	memcpy(out, c.digest, XSTREAM_HASH_SIZE);
}

/* bound_hash -- XXH3-128 of (the header's hash, tag, data) into out */
static void bound_hash(const struct xstream *x, uint64_t tag,
		       const void *data, size_t n,
		       uint8_t out[XSTREAM_HASH_SIZE])
{
	XXH3_state_t *st = XXH3_createState();
	uint8_t t[sizeof(uint64_t)];

	put64(t, tag);
	if (!st) {
		memset(out, 0, XSTREAM_HASH_SIZE);
		return;
	}
	XXH3_128bits_reset(st);
	XXH3_128bits_update(st, x->hh, sizeof(x->hh));
	XXH3_128bits_update(st, t, sizeof(t));
	XXH3_128bits_update(st, data, n);
	canon(XXH3_128bits_digest(st), out);
	XXH3_freeState(st);
}

int xstream_init(struct xstream *x)
{
	memset(x, 0, sizeof(*x));
	x->img = XXH3_createState();
	if (!x->img)
		return -ENOMEM;
	XXH3_128bits_reset(x->img);
	return 0;
}

void xstream_fini(struct xstream *x)
{
	if (x->img)
		XXH3_freeState(x->img);
	x->img = NULL;
}

uint64_t xstream_length(uint64_t size)
{
	uint64_t chunks = (size + XSTREAM_CHUNK - 1) / XSTREAM_CHUNK;

	return XSTREAM_HDR_SIZE + size + chunks * XSTREAM_HASH_SIZE +
	       XSTREAM_TRAILER_SIZE;
}

void xstream_header(struct xstream *x, uint8_t out[XSTREAM_HDR_SIZE])
{
	memset(out, 0, XSTREAM_HDR_SIZE);
	memcpy(out, XSTREAM_MAGIC, 8);
	put32(out + H_VERSION, XSTREAM_VERSION);
	put32(out + H_HDR_SIZE, XSTREAM_HDR_SIZE);
	put32(out + H_HASH_ALG, XSTREAM_HASH_XXH3_128);
	put32(out + H_CHUNK, XSTREAM_CHUNK);
	put64(out + H_SIZE, x->info.size);
	put64(out + H_GEN, x->info.generation);
	put64(out + H_FLAGS, x->info.flags);
	memcpy(out + H_UUID, x->info.uuid,
	       strnlen(x->info.uuid, XSTREAM_UUID_LEN - 1));
	memcpy(out + H_NAME, x->info.name,
	       strnlen(x->info.name, XSTREAM_NAME_LEN - 1));
	if (x->info.flags & XSTREAM_F_HISTORY) {
		unsigned i, n = x->info.nids < XSTREAM_MAX_IDS ?
					x->info.nids : XSTREAM_MAX_IDS;

		put64(out + H_NIDS, n);
		for (i = 0; i < n; i++)
			put64(out + H_IDS + 8 * i, x->info.ids[i]);
	}
	canon(XXH3_128bits(out, H_HASH), out + H_HASH);
	memcpy(x->hh, out + H_HASH, XSTREAM_HASH_SIZE);
}

/* zeros -- n bytes at p are all 0 */
static int zeros(const uint8_t *p, size_t n)
{
	while (n--)
		if (*p++)
			return 0;
	return 1;
}

/*
 * xstream_ids_parse -- the history ids of a format 2 header into x->info
 * (none without XSTREAM_F_HISTORY; format 1 has none); -1 if they are
 * not as an export writes them
 */
static int xstream_ids_parse(struct xstream *x, const uint8_t *in,
			     uint32_t version)
{
	uint64_t i, n = get64(in + H_NIDS);

	x->info.nids = 0;
	if (version == 1 || !(x->info.flags & XSTREAM_F_HISTORY))
		return (version == 1 && (x->info.flags & XSTREAM_F_HISTORY)) ||
		       !zeros(in + H_NIDS, H_IDS_END - H_NIDS);
	if (!n || n > XSTREAM_MAX_IDS ||
	    !zeros(in + H_IDS + 8 * n, H_IDS_END - H_IDS - 8 * n))
		return -1;
	for (i = 0; i < n; i++)
		if (!(x->info.ids[i] = get64(in + H_IDS + 8 * i)))
			return -1;
	x->info.nids = (unsigned)n;
	return 0;
}

int xstream_header_parse(struct xstream *x, const uint8_t *in,
			 const char **why)
{
	uint8_t h[XSTREAM_HASH_SIZE];

	if (memcmp(in, XSTREAM_MAGIC, 8)) {
		*why = "it is not an rpmem export stream (no RPMEMEXP header; "
		       "a bare image needs --raw)";
		return -1;
	}
	canon(XXH3_128bits(in, H_HASH), h);
	if (memcmp(h, in + H_HASH, XSTREAM_HASH_SIZE)) {
		*why = "its header does not match its hash (damaged)";
		return -1;
	}
	uint32_t version = get32(in + H_VERSION);

	if ((version != 1 && version != XSTREAM_VERSION) ||
	    get32(in + H_HDR_SIZE) != XSTREAM_HDR_SIZE ||
	    get32(in + H_HASH_ALG) != XSTREAM_HASH_XXH3_128 ||
	    get32(in + H_CHUNK) != XSTREAM_CHUNK) {
		*why = "its format version, hash or chunk size is not one "
		       "this rpmemctl reads (format 1 or 2, XXH3-128, 1 MiB)";
		return -1;
	}
	x->info.size = get64(in + H_SIZE);
	x->info.generation = get64(in + H_GEN);
	x->info.flags = get64(in + H_FLAGS);
	memcpy(x->info.uuid, in + H_UUID, XSTREAM_UUID_LEN);
	memcpy(x->info.name, in + H_NAME, XSTREAM_NAME_LEN);
	if (xstream_ids_parse(x, in, version)) {
		*why = "its header holds values no export writes";
		return -1;
	}
	if (!x->info.size || x->info.size % 4096 || get64(in + 48) ||
	    x->info.uuid[XSTREAM_UUID_LEN - 1] ||
	    x->info.name[XSTREAM_NAME_LEN - 1] ||
	    !zeros(in + H_IDS_END, H_HASH - H_IDS_END)) {
		*why = "its header holds values no export writes";
		return -1;
	}
	memcpy(x->hh, in + H_HASH, XSTREAM_HASH_SIZE);
	return 0;
}

void xstream_chunk(struct xstream *x, const void *data, size_t n,
		   uint8_t out[XSTREAM_HASH_SIZE])
{
	bound_hash(x, x->chunks, data, n, out);
	XXH3_128bits_update(x->img, data, n);
	x->chunks++;
	x->bytes += n;
}

int xstream_chunk_ok(struct xstream *x, const void *data, size_t n,
		     const uint8_t *h)
{
	uint8_t want[XSTREAM_HASH_SIZE];

	bound_hash(x, x->chunks, data, n, want);
	if (memcmp(want, h, XSTREAM_HASH_SIZE))
		return 0;
	XXH3_128bits_update(x->img, data, n);
	x->chunks++;
	x->bytes += n;
	return 1;
}

/* trailer_body -- the trailer's first T_HASH bytes of what was counted */
static void trailer_body(struct xstream *x, uint8_t out[XSTREAM_TRAILER_SIZE])
{
	memset(out, 0, XSTREAM_TRAILER_SIZE);
	memcpy(out, XSTREAM_END_MAGIC, 8);
	put64(out + T_CHUNKS, x->chunks);
	put64(out + T_SIZE, x->bytes);
	canon(XXH3_128bits_digest(x->img), out + T_IMAGE);
}

void xstream_trailer(struct xstream *x, uint8_t out[XSTREAM_TRAILER_SIZE])
{
	trailer_body(x, out);
	bound_hash(x, UINT64_MAX, out, T_HASH, out + T_HASH);
}

int xstream_trailer_ok(struct xstream *x, const uint8_t *in,
		       const char **why)
{
	uint8_t want[XSTREAM_TRAILER_SIZE];

	xstream_trailer(x, want);
	if (memcmp(in, XSTREAM_END_MAGIC, 8)) {
		*why = "it has no trailer where its image ends (truncated or "
		       "damaged)";
		return -1;
	}
	if (memcmp(in + T_HASH, want + T_HASH, XSTREAM_HASH_SIZE) &&
	    !memcmp(in + T_CHUNKS, want + T_CHUNKS, T_HASH - T_CHUNKS)) {
		*why = "its trailer does not match its hash (damaged)";
		return -1;
	}
	if (memcmp(in, want, XSTREAM_TRAILER_SIZE)) {
		*why = "its trailer's chunk count or image hash differs from "
		       "the chunks read (damaged or spliced)";
		return -1;
	}
	return 0;
}
