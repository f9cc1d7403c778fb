/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * decode_fuzz.c -- fuzz target for every wire decoder: the frame header,
 * each message codec of lib/common/proto.h (with both layouts of the
 * paged replies) and the RDMA transport blob. The first byte picks the
 * decoder, the rest is its payload. A payload a decoder accepts must
 * encode, the encoding decode, and that encode to the same bytes again
 * (nothing is lost or changed between the two ends).
 *
 * Built two ways (tests/fuzz/fuzz.mk):
 * - with clang -fsanitize=fuzzer,address,undefined: a libFuzzer target,
 *   run for a bounded time by `make check-fuzz` from the seeds in
 *   tests/fuzz/corpus/decode_fuzz;
 * - with the normal compiler (-DFUZZ_DRIVER): `decode_fuzz FILE...` runs
 *   each file once, as libFuzzer would (the corpus as a regression test).
 * The seeds are real traffic, captured by tests/fuzz/make_seeds.sh.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto.h"
#include "rdma_int.h"
#include "log.h"

/* the most a decoded payload's encoding may take */
#define OUT_MAX (RPMEM_MAX_PAYLOAD + 4096)

static uint8_t out[OUT_MAX], out2[OUT_MAX];
static unsigned accepted; /* inputs a decoder accepted */

/*
 * same -- what an accepted payload encodes to (e1, len1, in out) decoded
 * and encoded again (e2, len2): the same bytes
 */
static void same(const char *what, int len1, int len2)
{
	if (len1 < 0 || len2 != len1 || memcmp(out, out2, (size_t)len1)) {
		fprintf(stderr, "%s: an accepted payload encodes to %d bytes, "
				"and those to %d other bytes\n", what, len1,
			len2);
		abort();
	}
	accepted++;
}

/*
 * ROUND_TRIP -- fn: dec; if accepted, enc, dec that and enc again: both
 * encodings the same (fr frees what a dec allocated, if anything)
 */
#define ROUND_TRIP(fn, what, type, dec, enc, fr)                               \
	static void fn(const uint8_t *p, size_t n)                             \
	{                                                                      \
		type m, m2;                                                    \
		memset(&m, 0, sizeof(m));                                      \
		memset(&m2, 0, sizeof(m2));                                    \
		if (dec(p, n, &m))                                             \
			return;                                                \
		int l1 = enc(out, OUT_MAX, &m);                                \
		if (l1 < 0 || dec(out, (size_t)l1, &m2))                       \
			abort();                                               \
		same(what, l1, enc(out2, OUT_MAX, &m2));                       \
		fr(&m);                                                        \
		fr(&m2);                                                       \
	}

/* CODEC -- ROUND_TRIP of a codec of proto.h: fuzz_NAME */
#define CODEC(name, type, fr)                                                  \
	ROUND_TRIP(fuzz_##name, #name, type, rpmem_##name##_decode,           \
		   rpmem_##name##_encode, fr)

#define NOFREE(m) ((void)(m))

CODEC(hello, struct rpmem_msg_hello, NOFREE)
CODEC(hello_ok, struct rpmem_msg_hello_ok, NOFREE)
CODEC(error, struct rpmem_msg_error, NOFREE)
CODEC(list, struct rpmem_msg_list, NOFREE)
CODEC(list_reply, struct rpmem_msg_list_reply, rpmem_list_reply_free)
CODEC(create, struct rpmem_msg_create, NOFREE)
CODEC(remove, struct rpmem_msg_remove, NOFREE)
CODEC(open, struct rpmem_msg_open, NOFREE)
CODEC(open_ok, struct rpmem_msg_open_ok, NOFREE)
CODEC(handle, struct rpmem_msg_handle, NOFREE)
CODEC(io, struct rpmem_msg_io, NOFREE)
CODEC(flush, struct rpmem_msg_flush, NOFREE)
CODEC(hash, struct rpmem_msg_hash, NOFREE)
CODEC(hashv, struct rpmem_msg_hashv, NOFREE)
CODEC(hashes, struct rpmem_msg_hashes, NOFREE)
CODEC(set_state, struct rpmem_msg_set_state, NOFREE)
CODEC(state, struct rpmem_msg_state, NOFREE)
CODEC(status, struct rpmem_msg_status, NOFREE)
CODEC(status_reply, struct rpmem_msg_status_reply, rpmem_status_reply_free)
CODEC(kick, struct rpmem_msg_kick, NOFREE)
CODEC(events, struct rpmem_msg_events, NOFREE)
CODEC(event, struct rpmem_msg_event, NOFREE)
CODEC(scrub, struct rpmem_msg_scrub, NOFREE)
CODEC(scrub_reply, struct rpmem_msg_scrub_reply, NOFREE)
CODEC(preserve, struct rpmem_msg_preserve, NOFREE)

CODEC(versions, struct rpmem_msg_versions, NOFREE)
CODEC(read_at, struct rpmem_msg_read_at, NOFREE)
CODEC(gen, struct rpmem_msg_gen, NOFREE)
CODEC(gen_reply, struct rpmem_msg_gen_reply, NOFREE)

/* the entries of the two VERSIONS_REPLY a round trip decodes */
static struct rpmem_version_entry vr_a[RPMEM_MAX_VERSIONS];
static struct rpmem_version_entry vr_b[RPMEM_MAX_VERSIONS];

/* versions_reply_decode -- into vr_a and vr_b by turns */
static int versions_reply_decode(const void *buf, size_t len,
				 struct rpmem_msg_versions_reply *m)
{
	static int turn;
	m->v = (turn ^= 1) ? vr_a : vr_b;
	return rpmem_versions_reply_decode(buf, len, m);
}

ROUND_TRIP(fuzz_versions_reply, "versions_reply",
	   struct rpmem_msg_versions_reply, versions_reply_decode,
	   rpmem_versions_reply_encode, NOFREE)

/* list_paged_decode -- LIST_REPLY in the paged layout */
static int list_paged_decode(const void *buf, size_t len,
			     struct rpmem_msg_list_reply *m)
{
	return rpmem_list_reply_decode_flags(buf, len, RPMEM_LIST_PAGE, m);
}

/* status_flags_decode -- STATUS_REPLY with identities and pages */
static int status_flags_decode(const void *buf, size_t len,
			       struct rpmem_msg_status_reply *m)
{
	return rpmem_status_reply_decode_flags(buf, len, RPMEM_STATUS_FLAGS,
					       m);
}

/* list_undo_decode -- LIST_REPLY with the pools' undo journals, paged */
static int list_undo_decode(const void *buf, size_t len,
			    struct rpmem_msg_list_reply *m)
{
	return rpmem_list_reply_decode_flags(buf, len,
					     RPMEM_LIST_PAGE | RPMEM_LIST_UNDO,
					     m);
}

/* list_versions_decode -- LIST_REPLY with undo, versions, paged */
static int list_versions_decode(const void *buf, size_t len,
				struct rpmem_msg_list_reply *m)
{
	return rpmem_list_reply_decode_flags(buf, len,
					     RPMEM_LIST_PAGE | RPMEM_LIST_UNDO |
						     RPMEM_LIST_VERSIONS,
					     m);
}

/* list_gens_decode -- LIST_REPLY with every flag */
static int list_gens_decode(const void *buf, size_t len,
			    struct rpmem_msg_list_reply *m)
{
	return rpmem_list_reply_decode_flags(buf, len, RPMEM_LIST_FLAGS, m);
}

ROUND_TRIP(fuzz_list_gens, "list_reply (every flag)",
	   struct rpmem_msg_list_reply, list_gens_decode,
	   rpmem_list_reply_encode, rpmem_list_reply_free)

ROUND_TRIP(fuzz_list_versions, "list_reply (undo, versions, paged)",
	   struct rpmem_msg_list_reply, list_versions_decode,
	   rpmem_list_reply_encode, rpmem_list_reply_free)

ROUND_TRIP(fuzz_list_undo, "list_reply (undo, paged)",
	   struct rpmem_msg_list_reply, list_undo_decode,
	   rpmem_list_reply_encode, rpmem_list_reply_free)
ROUND_TRIP(fuzz_list_paged, "list_reply (paged)",
	   struct rpmem_msg_list_reply, list_paged_decode,
	   rpmem_list_reply_encode, rpmem_list_reply_free)
ROUND_TRIP(fuzz_status_flags, "status_reply (flags)",
	   struct rpmem_msg_status_reply, status_flags_decode,
	   rpmem_status_reply_encode, rpmem_status_reply_free)

/* fuzz_hdr -- a frame header: 16 bytes or nothing */
static void fuzz_hdr(const uint8_t *p, size_t n)
{
	struct rpmem_hdr h;
	if (n < RPMEM_HDR_SIZE)
		return;
	if (rpmem_hdr_decode(p, &h))
		return;
	if (h.len > RPMEM_MAX_PAYLOAD)
		abort();
	accepted++;
}

/* fuzz_blob -- the RDMA transport blob of OPEN_OK (a 1 MiB pool) */
static void fuzz_blob(const uint8_t *p, size_t n)
{
	struct rdma_blob b, b2;
	size_t l1 = 0, l2 = 0;
	if (rdma_blob_decode(p, n, 1u << 20, &b))
		return;
	if (rdma_blob_encode(&b, out, OUT_MAX, &l1) ||
	    rdma_blob_decode(out, l1, 1u << 20, &b2) ||
	    rdma_blob_encode(&b2, out2, OUT_MAX, &l2))
		abort();
	same("rdma blob", (int)l1, (int)l2);
}

static const struct {
	const char *name;
	void (*fn)(const uint8_t *p, size_t n);
} decoders[] = {
	{ "hdr", fuzz_hdr },
	{ "hello", fuzz_hello },
	{ "hello_ok", fuzz_hello_ok },
	{ "error", fuzz_error },
	{ "list", fuzz_list },
	{ "list_reply", fuzz_list_reply },
	{ "list_paged", fuzz_list_paged },
	{ "create", fuzz_create },
	{ "remove", fuzz_remove },
	{ "open", fuzz_open },
	{ "open_ok", fuzz_open_ok },
	{ "handle", fuzz_handle },
	{ "io", fuzz_io },
	{ "flush", fuzz_flush },
	{ "hash", fuzz_hash },
	{ "hashv", fuzz_hashv },
	{ "hashes", fuzz_hashes },
	{ "set_state", fuzz_set_state },
	{ "state", fuzz_state },
	{ "status", fuzz_status },
	{ "status_reply", fuzz_status_reply },
	{ "status_flags", fuzz_status_flags },
	{ "kick", fuzz_kick },
	{ "events", fuzz_events },
	{ "event", fuzz_event },
	{ "rdma_blob", fuzz_blob },
	/* appended: the seeds' first byte keeps naming the same decoder */
	{ "scrub", fuzz_scrub },
	{ "scrub_reply", fuzz_scrub_reply },
	{ "preserve", fuzz_preserve },
	{ "list_undo", fuzz_list_undo },
	{ "versions", fuzz_versions },
	{ "versions_reply", fuzz_versions_reply },
	{ "read_at", fuzz_read_at },
	{ "list_versions", fuzz_list_versions },
	{ "gen", fuzz_gen },
	{ "gen_reply", fuzz_gen_reply },
	{ "list_gens", fuzz_list_gens },
};
#define NDECODERS (sizeof(decoders) / sizeof(decoders[0]))

/* one_input -- the first byte picks the decoder */
static int one_input(const uint8_t *data, size_t size)
{
	static int quiet;
	if (!quiet) {
		rpmem_log_init("fuzz", LOG_EMERG, NULL, NULL);
		quiet = 1;
	}
	if (size < 1 || size - 1 > RPMEM_MAX_PAYLOAD)
		return 0;
	decoders[data[0] % NDECODERS].fn(data + 1, size - 1);
	return 0;
}

#ifndef FUZZ_DRIVER
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return one_input(data, size);
}
#else
int main(int argc, char **argv)
{
	static uint8_t in[RPMEM_MAX_PAYLOAD + 2];
	int n = 0;

	for (int i = 1; i < argc; i++) {
		FILE *f = fopen(argv[i], "rb");
		if (!f) {
			perror(argv[i]);
			return 1;
		}
		size_t len = fread(in, 1, sizeof(in), f);
		fclose(f);
		one_input(in, len);
		n++;
	}
	printf("decode_fuzz: %d inputs, %u accepted, each round trip stable"
	       "\n", n, accepted);
	return 0;
}
#endif
