/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * xstream.h -- rpmemctl: the framed export stream (a header, the image in
 * chunks each followed by its hash, a trailer), written by export and
 * checked by import; the format is in docs/ARCHITECTURE.md, "Export
 * streams"
 */
#ifndef RPMEMCTL_XSTREAM_H
#define RPMEMCTL_XSTREAM_H

#include <stddef.h>
#include <stdint.h>

#define XSTREAM_MAGIC "RPMEMEXP"
#define XSTREAM_END_MAGIC "RPMEMEND"
#define XSTREAM_VERSION 2 /* 1: no history ids (still read) */
#define XSTREAM_HDR_SIZE 512
#define XSTREAM_TRAILER_SIZE 64
#define XSTREAM_HASH_SIZE 16 /* XXH3-128 */
#define XSTREAM_HASH_XXH3_128 1
#define XSTREAM_CHUNK (1u << 20)
#define XSTREAM_UUID_LEN 40
#define XSTREAM_NAME_LEN 136
#define XSTREAM_MAX_IDS 16 /* RPMEMCTL_GENERATIONS_MAX */

/* header flags */
#define XSTREAM_F_VERSION 0x1 /* a version of the pool (export --at) */
#define XSTREAM_F_FORCED 0x2  /* a pool not consistent (export --force) */
/* export --at --salvage: ranges a damaged version could not give are zeros */
#define XSTREAM_F_SALVAGE 0x4
/* the exported pool's generation history ids follow the name (format 2) */
#define XSTREAM_F_HISTORY 0x8

/* what a header says */
struct xstream_info {
	uint64_t size;	     /* the image's bytes */
	uint64_t generation; /* the pool's, or the version's (--at) */
	uint64_t flags;	     /* XSTREAM_F_* */
	char uuid[XSTREAM_UUID_LEN]; /* the pool's, "" if unknown */
	char name[XSTREAM_NAME_LEN]; /* "REGION/POOL" */
	unsigned nids;		     /* with XSTREAM_F_HISTORY: 1..16 */
	uint64_t ids[XSTREAM_MAX_IDS]; /* the pool's history, newest first */
};

/* one stream being written or read */
struct xstream {
	struct xstream_info info;
	uint8_t hh[XSTREAM_HASH_SIZE]; /* the header's hash: binds the rest */
	void *img;		       /* the image's hash state */
	uint64_t chunks;	       /* chunks so far */
	uint64_t bytes;		       /* image bytes so far */
};

/* xstream_init -- an empty stream; 0 or -ENOMEM */
int xstream_init(struct xstream *x);
/* xstream_fini -- free what xstream_init allocated */
void xstream_fini(struct xstream *x);
/* xstream_length -- the whole stream's length for an image of size */
uint64_t xstream_length(uint64_t size);

/* xstream_header -- x->info as a header into out; sets x->hh */
void xstream_header(struct xstream *x, uint8_t out[XSTREAM_HDR_SIZE]);
/*
 * xstream_header_parse -- a header into x->info and x->hh; 0, or -1
 * with *why saying what is wrong
 */
int xstream_header_parse(struct xstream *x, const uint8_t *in,
			 const char **why);

/* xstream_chunk -- the next chunk's hash into out; counts it */
void xstream_chunk(struct xstream *x, const void *data, size_t n,
		   uint8_t out[XSTREAM_HASH_SIZE]);
/* xstream_chunk_ok -- the next chunk matches hash h (counted if so) */
int xstream_chunk_ok(struct xstream *x, const void *data, size_t n,
		     const uint8_t *h);

/* xstream_trailer -- the trailer of everything counted, into out */
void xstream_trailer(struct xstream *x, uint8_t out[XSTREAM_TRAILER_SIZE]);
/* xstream_trailer_ok -- 0, or -1 with *why saying what is wrong */
int xstream_trailer_ok(struct xstream *x, const uint8_t *in,
		       const char **why);

#endif /* RPMEMCTL_XSTREAM_H */
