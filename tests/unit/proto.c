/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * proto.c -- unit tests of the protocol codec (lib/common/proto*.c,
 * lib/common/wire.c)
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "proto.h"

/*
 * calloc and free are wrapped at link time (-Wl,--wrap=calloc,--wrap=free)
 * to fail an allocation on demand, to see how much a decoder asks for, and
 * to check that every block a decoder allocates is freed exactly once.
 */
void *__real_calloc(size_t nmemb, size_t size);
void __real_free(void *p);

#define LIVE_MAX 64
static struct {
	int fail_in;	    /* 1: the next calloc fails, 2: the one after */
	size_t calls;	    /* callocs since the last reset */
	size_t max_nmemb;   /* largest nmemb asked for since the last reset */
	void *live[LIVE_MAX]; /* blocks from calloc not yet freed */
} mem;

void *__wrap_calloc(size_t nmemb, size_t size);
void *__wrap_calloc(size_t nmemb, size_t size)
{
	mem.calls++;
	if (nmemb > mem.max_nmemb)
		mem.max_nmemb = nmemb;
	if (mem.fail_in && --mem.fail_in == 0)
		return NULL;
	void *p = __real_calloc(nmemb, size);
	for (int i = 0; p && i < LIVE_MAX; i++) {
		if (!mem.live[i]) {
			mem.live[i] = p;
			break;
		}
	}
	return p;
}

void __wrap_free(void *p);
void __wrap_free(void *p)
{
	for (int i = 0; p && i < LIVE_MAX; i++)
		if (mem.live[i] == p)
			mem.live[i] = NULL;
	__real_free(p);
}

/* mem_reset -- forget earlier calls (blocks still live stay live) */
static void mem_reset(void)
{
	mem.fail_in = 0;
	mem.calls = 0;
	mem.max_nmemb = 0;
}

/* mem_live -- number of calloc'd blocks not freed yet */
static int mem_live(void)
{
	int n = 0;
	for (int i = 0; i < LIVE_MAX; i++)
		n += mem.live[i] != NULL;
	return n;
}

/* --- a payload builder independent of lib/common/wire.c ------------------- */

struct pb {
	uint8_t b[32768]; /* room for RPMEM_MAX_NAMESPACES small entries */
	size_t len;
};

static void pb_u8(struct pb *p, uint8_t v)
{
	p->b[p->len++] = v;
}

static void pb_u16(struct pb *p, uint16_t v)
{
	pb_u8(p, (uint8_t)v);
	pb_u8(p, (uint8_t)(v >> 8));
}

static void pb_u32(struct pb *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		pb_u8(p, (uint8_t)(v >> (8 * i)));
}

static void pb_u64(struct pb *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		pb_u8(p, (uint8_t)(v >> (8 * i)));
}

static void pb_bytes(struct pb *p, const void *b, size_t n)
{
	memcpy(p->b + p->len, b, n);
	p->len += n;
}

/* pb_strn -- a wire string of n bytes (may hold a NUL) */
static void pb_strn(struct pb *p, const char *s, size_t n)
{
	pb_u16(p, (uint16_t)n);
	pb_bytes(p, s, n);
}

static void pb_str(struct pb *p, const char *s)
{
	pb_strn(p, s, strlen(s));
}

/* pb_rep -- a wire string of n copies of 'x' */
static void pb_rep(struct pb *p, size_t n)
{
	pb_u16(p, (uint16_t)n);
	memset(p->b + p->len, 'x', n);
	p->len += n;
}

/* --- sample messages, one per codec; every field set and distinct ------- */

static struct rpmem_region_info sample_regions[3];
static struct rpmem_pool_info sample_pools[4];
static struct rpmem_session_info sample_sessions[3];
static struct rpmem_ns_info sample_ns[3];
static struct rpmem_ns_link sample_links[3];
static const uint8_t sample_hashes[5 * 8] = {
	1, 2, 3, 4, 5, 6, 7, 8, 0xff, 0xfe, 0, 0, 0, 0, 0, 0x80,
	9, 9, 9, 9, 9, 9, 9, 9, 0, 0, 0, 0, 0, 0, 0, 0,
	0xde, 0xad, 0xbe, 0xef, 0xca, 0xfe, 0xba, 0xbe,
};

static void fill_hello(void *p)
{
	struct rpmem_msg_hello *m = p;
	m->ver_min = 1;
	m->ver_max = 3;
	m->auth_method = 0x1234;
	strcpy(m->client, "rpmemctl 0.1.0 host-a");
	m->auth_len = 5;
	memcpy(m->auth, "\x01\x02\x00\xff\x7f", 5);
}

static void fill_hello_ok(void *p)
{
	struct rpmem_msg_hello_ok *m = p;
	m->version = 1;
	m->session_id = 0xa1b2c3d4;
	m->caps = RPMEM_CAP_RDMA | RPMEM_CAP_APM;
	strcpy(m->server, "rpmemd 0.1.0 target-b");
}

static void fill_error(void *p)
{
	struct rpmem_msg_error *m = p;
	m->code = RPMEM_E_BUSY;
	strcpy(m->msg, "pool 'db1' is open for writing by 10.0.0.5");
}

static void fill_list(void *p)
{
	struct rpmem_msg_list *m = p;
	strcpy(m->region, "pmem0");
}

static void fill_list_reply(void *p)
{
	struct rpmem_msg_list_reply *m = p;
	for (uint32_t i = 0; i < 3; i++) {
		struct rpmem_region_info *r = &sample_regions[i];
		snprintf(r->name, sizeof(r->name), "region-%u", i);
		r->type = (uint8_t)(i % 3);
		snprintf(r->path, sizeof(r->path), "/mnt/pmem%u/rpmem", i);
		r->size = (1ull << 40) + i;
		r->free = (1ull << 33) + i;
		r->align = 4096u << i;
		r->caps = i;
	}
	for (uint32_t i = 0; i < 4; i++) {
		struct rpmem_pool_info *q = &sample_pools[i];
		snprintf(q->region, sizeof(q->region), "region-%u", i % 3);
		snprintf(q->name, sizeof(q->name), "pool_%u.db", i);
		for (int j = 0; j < 16; j++)
			q->uuid[j] = (uint8_t)(i * 16 + j);
		q->size = (64ull << 20) * (i + 1);
		q->state = (uint8_t)(i % 3);
		q->generation = 1000 + i;
		q->created = 1700000000 + i;
		q->last_sync = i ? 1700000100 + i : 0;
		snprintf(q->source, sizeof(q->source), "host-%u:/pmem/p%u", i,
			 i);
		strcpy(q->writer, i == 1 ? "10.0.0.5 (session 12)" : "");
		q->readers = i * 2;
		q->bytes_written = 0x0102030405060708ull + i;
		q->flushes = 77 + i;
	}
	m->nregions = 3;
	m->regions = sample_regions;
	m->npools = 4;
	m->pools = sample_pools;
}

static void fill_create(void *p)
{
	struct rpmem_msg_create *m = p;
	strcpy(m->region, "pmem0");
	strcpy(m->pool, "db1");
	m->size = 0x123456789abcull;
}

static void fill_remove(void *p)
{
	struct rpmem_msg_remove *m = p;
	strcpy(m->region, "pmem0");
	strcpy(m->pool, "db-2");
	m->flags = RPMEM_REMOVE_FORCE;
}

static void fill_open(void *p)
{
	struct rpmem_msg_open *m = p;
	strcpy(m->region, "pmem1");
	strcpy(m->pool, "db_3");
	m->mode = RPMEM_OPEN_RW;
	m->xport = RPMEM_XPORT_AUTO;
}

static void fill_open_ok(void *p)
{
	struct rpmem_msg_open_ok *m = p;
	m->handle = 0xdeadbeef;
	m->size = 1ull << 30;
	m->state = RPMEM_POOL_CONSISTENT;
	m->generation = 42;
	for (int i = 0; i < 16; i++)
		m->uuid[i] = (uint8_t)(0xf0 + i);
	m->xport = RPMEM_XPORT_RDMA;
	m->blob_len = 7;
	memcpy(m->blob, "\x00rdma\xff\x01", 7);
}

static void fill_handle(void *p)
{
	struct rpmem_msg_handle *m = p;
	m->handle = 0x01020304;
}

static void fill_kick(void *p)
{
	struct rpmem_msg_kick *m = p;
	m->session = 0xfeedf00d;
}

static void fill_scrub(void *p)
{
	struct rpmem_msg_scrub *m = p;
	m->handle = 9;
	m->offset = 64ull << 20;
	m->count = RPMEM_MAX_SCRUB_PIECES;
	m->version = 0x0102030405060708ull;
}

static void fill_io(void *p)
{
	struct rpmem_msg_io *m = p;
	m->handle = 7;
	m->offset = 0x1122334455667788ull;
	m->len = RPMEM_MAX_IO;
}

static void fill_flush(void *p)
{
	struct rpmem_msg_flush *m = p;
	m->handle = 8;
	m->offset = 4096;
	m->len = 1ull << 35;
}

static void fill_hash(void *p)
{
	struct rpmem_msg_hash *m = p;
	m->handle = 9;
	m->offset = 1ull << 20;
	m->block_size = 65536;
	m->count = 300;
}

static void fill_hashv(void *p)
{
	struct rpmem_msg_hashv *m = p;
	m->handle = 11;
	m->block_size = 4096;
	m->nranges = 3;
	m->ranges[0].offset = 0;
	m->ranges[0].count = 16;
	m->ranges[1].offset = 1ull << 30;
	m->ranges[1].count = 1;
	m->ranges[2].offset = (1ull << 40) + 4096;
	m->ranges[2].count = 300;
	m->total = 317;
}

static void fill_hashes(void *p)
{
	struct rpmem_msg_hashes *m = p;
	m->count = 5;
	m->hashes = sample_hashes;
}

static void fill_set_state(void *p)
{
	struct rpmem_msg_set_state *m = p;
	m->handle = 10;
	m->state = RPMEM_POOL_SYNCING;
	strcpy(m->source, "host-a:/mnt/pmem/db1");
}

static void fill_state(void *p)
{
	struct rpmem_msg_state *m = p;
	m->state = RPMEM_POOL_CONSISTENT;
	m->generation = 0x0102030405060708ull;
}

static void fill_status_reply(void *p)
{
	struct rpmem_msg_status_reply *m = p;
	strcpy(m->server, "rpmemd 0.1.0 target-b");
	m->pid = 4242;
	m->uptime = 86400 * 3;
	m->caps = RPMEM_CAP_RDMA;
	m->max_sessions = 64;
	for (uint32_t i = 0; i < 3; i++) {
		struct rpmem_session_info *s = &sample_sessions[i];
		s->id = 100 + i;
		/* whole: the extended sample leaves bytes after the NUL */
		memset(s->identity, 0, sizeof(s->identity));
		s->auth = RPMEM_AUTH_NONE;
		snprintf(s->peer, sizeof(s->peer), "10.0.0.%u:5000%u", i, i);
		snprintf(s->client, sizeof(s->client), "rpmemctl 0.1.%u", i);
		s->xport = (uint8_t)(i % 2);
		snprintf(s->pool, sizeof(s->pool), i ? "pmem0/db%u" : "", i);
		s->mode = (uint8_t)(i % 2);
		s->started = 1700000000 + i;
		s->bytes_written = 1ull << (40 + i);
		s->bytes_read = 1ull << (20 + i);
		s->flushes = 5 + i;
		s->last_flush_ns = 123456789 + i;
	}
	m->nsessions = 3;
	m->sessions = sample_sessions;
	/* an fsdax namespace with a DAX mount, a devdax one, a raw one */
	for (uint32_t i = 0; i < 3; i++) {
		struct rpmem_ns_info *ns = &sample_ns[i];
		snprintf(ns->name, sizeof(ns->name), "namespace%u.0", i);
		snprintf(ns->nd_region, sizeof(ns->nd_region), "region%u", i);
		ns->size = (250ull << 20) + i;
		ns->align = i == 2 ? 0 : 2u << 20;
		ns->numa = (int32_t)i - 1;
	}
	strcpy(sample_ns[0].dev, "/dev/pmem0");
	sample_ns[0].mode = RPMEM_NS_FSDAX;
	strcpy(sample_ns[0].mount, "/mnt/pmem 0");
	strcpy(sample_ns[1].dev, "/dev/dax1.0");
	sample_ns[1].mode = RPMEM_NS_DEVDAX;
	sample_ns[2].mode = RPMEM_NS_RAW;
	m->nnamespaces = 3;
	m->namespaces = sample_ns;
	/* two regions on the fsdax namespace, one on the devdax one */
	strcpy(sample_links[0].region, "fs");
	sample_links[0].ns = 0;
	strcpy(sample_links[1].region, "dd");
	sample_links[1].ns = 1;
	strcpy(sample_links[2].region, "fs-too");
	sample_links[2].ns = 0;
	m->nlinks = 3;
	m->links = sample_links;
}

static void fill_status(void *p)
{
	struct rpmem_msg_status *m = p;
	m->flags = RPMEM_STATUS_IDENTITY;
}

/* fill_list_page -- a LIST asking for the page after a cursor */
static void fill_list_page(void *p)
{
	struct rpmem_msg_list *m = p;
	fill_list(p);
	m->flags = RPMEM_LIST_PAGE;
	strcpy(m->cursor, "pmem0/pool_511.db");
}

/* fill_list_reply_page -- the sample reply as a page with a next cursor */
static void fill_list_reply_page(void *p)
{
	struct rpmem_msg_list_reply *m = p;
	fill_list_reply(p);
	m->flags = RPMEM_LIST_PAGE;
	strcpy(m->next, "region-0/pool_3.db");
}

/* fill_status_page -- a STATUS asking for the extended page after 512 */
static void fill_status_page(void *p)
{
	struct rpmem_msg_status *m = p;
	m->flags = RPMEM_STATUS_IDENTITY | RPMEM_STATUS_PAGE;
	strcpy(m->cursor, "512");
}

/* fill_status_reply_page -- the sample reply as a page with a next cursor */
static void fill_status_reply_page(void *p)
{
	struct rpmem_msg_status_reply *m = p;
	fill_status_reply(p);
	m->flags = RPMEM_STATUS_PAGE;
	strcpy(m->next, "1024");
}

/* fill_status_reply_id -- the sample reply in the extended layout */
static void fill_status_reply_id(void *p)
{
	struct rpmem_msg_status_reply *m = p;
	fill_status_reply(p);
	m->flags = RPMEM_STATUS_IDENTITY;
	strcpy(sample_sessions[0].identity, "");
	sample_sessions[0].auth = RPMEM_AUTH_NONE;
	strcpy(sample_sessions[1].identity, "backup1");
	sample_sessions[1].auth = RPMEM_AUTH_PSK;
	memset(sample_sessions[2].identity, 'c', RPMEM_IDENTITY_MAX);
	sample_sessions[2].identity[RPMEM_IDENTITY_MAX] = '\0';
	sample_sessions[2].auth = RPMEM_AUTH_X509;
}

/* --- the codec table ---------------------------------------------------- */

union any_msg {
	struct rpmem_msg_hello hello;
	struct rpmem_msg_hello_ok hello_ok;
	struct rpmem_msg_error error;
	struct rpmem_msg_list list;
	struct rpmem_msg_list_reply list_reply;
	struct rpmem_msg_create create;
	struct rpmem_msg_remove remove;
	struct rpmem_msg_open open;
	struct rpmem_msg_open_ok open_ok;
	struct rpmem_msg_handle handle;
	struct rpmem_msg_io io;
	struct rpmem_msg_flush flush;
	struct rpmem_msg_hash hash;
	struct rpmem_msg_hashv hashv;
	struct rpmem_msg_hashes hashes;
	struct rpmem_msg_set_state set_state;
	struct rpmem_msg_state state;
	struct rpmem_msg_status status;
	struct rpmem_msg_status_reply status_reply;
	struct rpmem_msg_kick kick;
	struct rpmem_msg_scrub scrub;
};

struct codec {
	const char *name;
	int (*enc)(void *buf, size_t cap, const void *m);
	int (*dec)(const void *buf, size_t len, void *m);
	void (*fill)(void *m);
	void (*fini)(void *m); /* releases what dec allocated, or NULL */
	void (*cmp)(const void *a, const void *b); /* NULL: memcmp */
	size_t size;
};

#define WRAP(n, T)                                                            \
	static int n##_enc(void *b, size_t c, const void *m)                 \
	{                                                                     \
		return rpmem_##n##_encode(b, c, (const T *)m);                \
	}                                                                     \
	static int n##_dec(const void *b, size_t l, void *m)                 \
	{                                                                     \
		return rpmem_##n##_decode(b, l, (T *)m);                      \
	}

WRAP(hello, struct rpmem_msg_hello)
WRAP(hello_ok, struct rpmem_msg_hello_ok)
WRAP(error, struct rpmem_msg_error)
WRAP(list, struct rpmem_msg_list)
WRAP(list_reply, struct rpmem_msg_list_reply)
WRAP(create, struct rpmem_msg_create)
WRAP(remove, struct rpmem_msg_remove)
WRAP(open, struct rpmem_msg_open)
WRAP(open_ok, struct rpmem_msg_open_ok)
WRAP(handle, struct rpmem_msg_handle)
WRAP(io, struct rpmem_msg_io)
WRAP(flush, struct rpmem_msg_flush)
WRAP(hash, struct rpmem_msg_hash)
WRAP(hashv, struct rpmem_msg_hashv)
WRAP(hashes, struct rpmem_msg_hashes)
WRAP(set_state, struct rpmem_msg_set_state)
WRAP(state, struct rpmem_msg_state)
WRAP(status, struct rpmem_msg_status)
WRAP(status_reply, struct rpmem_msg_status_reply)
WRAP(kick, struct rpmem_msg_kick)
WRAP(scrub, struct rpmem_msg_scrub)

/* the extended STATUS_REPLY: encoded by m->flags, decoded by the flag */
static int status_reply_id_enc(void *b, size_t c, const void *m)
{
	return rpmem_status_reply_encode(b, c, m);
}

static int status_reply_id_dec(const void *b, size_t l, void *m)
{
	return rpmem_status_reply_decode_flags(b, l, RPMEM_STATUS_IDENTITY, m);
}

/* the paged replies: encoded by m->flags, decoded by the flag */
static int list_reply_page_enc(void *b, size_t c, const void *m)
{
	return rpmem_list_reply_encode(b, c, m);
}

static int list_reply_page_dec(const void *b, size_t l, void *m)
{
	return rpmem_list_reply_decode_flags(b, l, RPMEM_LIST_PAGE, m);
}

static int status_reply_page_enc(void *b, size_t c, const void *m)
{
	return rpmem_status_reply_encode(b, c, m);
}

static int status_reply_page_dec(const void *b, size_t l, void *m)
{
	return rpmem_status_reply_decode_flags(b, l, RPMEM_STATUS_PAGE, m);
}

/* the paged requests: the same codecs, other samples */
static int list_page_enc(void *b, size_t c, const void *m)
{
	return rpmem_list_encode(b, c, m);
}

static int list_page_dec(const void *b, size_t l, void *m)
{
	return rpmem_list_decode(b, l, m);
}

static int status_page_enc(void *b, size_t c, const void *m)
{
	return rpmem_status_encode(b, c, m);
}

static int status_page_dec(const void *b, size_t l, void *m)
{
	return rpmem_status_decode(b, l, m);
}

static void list_reply_fini(void *m)
{
	rpmem_list_reply_free(m);
}

static void status_reply_fini(void *m)
{
	rpmem_status_reply_free(m);
}

static void list_reply_cmp(const void *pa, const void *pb)
{
	const struct rpmem_msg_list_reply *a = pa, *b = pb;
	assert_int_equal(a->nregions, b->nregions);
	assert_int_equal(a->npools, b->npools);
	assert_memory_equal(a->regions, b->regions,
			    a->nregions * sizeof(*a->regions));
	assert_memory_equal(a->pools, b->pools, a->npools * sizeof(*a->pools));
	assert_int_equal(a->flags, b->flags);
	assert_string_equal(a->next, b->next);
}

static void status_reply_cmp(const void *pa, const void *pb)
{
	const struct rpmem_msg_status_reply *a = pa, *b = pb;
	assert_string_equal(a->server, b->server);
	assert_int_equal(a->pid, b->pid);
	assert_int_equal(a->uptime, b->uptime);
	assert_int_equal(a->caps, b->caps);
	assert_int_equal(a->max_sessions, b->max_sessions);
	assert_int_equal(a->flags, b->flags);
	assert_int_equal(a->nsessions, b->nsessions);
	assert_memory_equal(a->sessions, b->sessions,
			    a->nsessions * sizeof(*a->sessions));
	assert_int_equal(a->nnamespaces, b->nnamespaces);
	assert_memory_equal(a->namespaces, b->namespaces,
			    a->nnamespaces * sizeof(*a->namespaces));
	assert_int_equal(a->nlinks, b->nlinks);
	assert_memory_equal(a->links, b->links, a->nlinks * sizeof(*a->links));
	assert_string_equal(a->next, b->next);
}

static void hashv_cmp(const void *pa, const void *pb)
{
	const struct rpmem_msg_hashv *a = pa, *b = pb;
	assert_int_equal(a->handle, b->handle);
	assert_int_equal(a->block_size, b->block_size);
	assert_int_equal(a->nranges, b->nranges);
	assert_int_equal(a->total, b->total);
	for (uint32_t i = 0; i < a->nranges; i++) {
		assert_int_equal(a->ranges[i].offset, b->ranges[i].offset);
		assert_int_equal(a->ranges[i].count, b->ranges[i].count);
	}
}

static void hashes_cmp(const void *pa, const void *pb)
{
	const struct rpmem_msg_hashes *a = pa, *b = pb;
	assert_int_equal(a->count, b->count);
	assert_memory_equal(a->hashes, b->hashes, (size_t)a->count * 8);
}

enum {
	C_hello, C_hello_ok, C_error, C_list, C_list_reply, C_create,
	C_remove, C_open, C_open_ok, C_handle, C_io, C_flush, C_hash,
	C_hashv, C_hashes, C_set_state, C_state, C_status, C_status_reply,
	C_status_reply_id, C_kick, C_list_page, C_list_reply_page,
	C_status_page, C_status_reply_page, C_scrub, C_NUM
};

#define CODEC(n, T, fi, cm)                                                   \
	[C_##n] = { #n, n##_enc, n##_dec, fill_##n, fi, cm, sizeof(T) }

static const struct codec codecs[C_NUM] = {
	CODEC(hello, struct rpmem_msg_hello, NULL, NULL),
	CODEC(hello_ok, struct rpmem_msg_hello_ok, NULL, NULL),
	CODEC(error, struct rpmem_msg_error, NULL, NULL),
	CODEC(list, struct rpmem_msg_list, NULL, NULL),
	CODEC(list_reply, struct rpmem_msg_list_reply, list_reply_fini,
	      list_reply_cmp),
	CODEC(create, struct rpmem_msg_create, NULL, NULL),
	CODEC(remove, struct rpmem_msg_remove, NULL, NULL),
	CODEC(open, struct rpmem_msg_open, NULL, NULL),
	CODEC(open_ok, struct rpmem_msg_open_ok, NULL, NULL),
	CODEC(handle, struct rpmem_msg_handle, NULL, NULL),
	CODEC(io, struct rpmem_msg_io, NULL, NULL),
	CODEC(flush, struct rpmem_msg_flush, NULL, NULL),
	CODEC(hash, struct rpmem_msg_hash, NULL, NULL),
	CODEC(hashv, struct rpmem_msg_hashv, NULL, hashv_cmp),
	CODEC(hashes, struct rpmem_msg_hashes, NULL, hashes_cmp),
	CODEC(set_state, struct rpmem_msg_set_state, NULL, NULL),
	CODEC(state, struct rpmem_msg_state, NULL, NULL),
	CODEC(status, struct rpmem_msg_status, NULL, NULL),
	CODEC(status_reply, struct rpmem_msg_status_reply, status_reply_fini,
	      status_reply_cmp),
	CODEC(status_reply_id, struct rpmem_msg_status_reply,
	      status_reply_fini, status_reply_cmp),
	CODEC(kick, struct rpmem_msg_kick, NULL, NULL),
	CODEC(list_page, struct rpmem_msg_list, NULL, NULL),
	CODEC(list_reply_page, struct rpmem_msg_list_reply, list_reply_fini,
	      list_reply_cmp),
	CODEC(status_page, struct rpmem_msg_status, NULL, NULL),
	CODEC(status_reply_page, struct rpmem_msg_status_reply,
	      status_reply_fini, status_reply_cmp),
	CODEC(scrub, struct rpmem_msg_scrub, NULL, NULL),
};

/* encode_sample -- the sample message of c encoded into buf; its length */
static size_t encode_sample(const struct codec *c, uint8_t *buf, size_t cap)
{
	union any_msg m;
	memset(&m, 0, sizeof(m));
	c->fill(&m);
	int n = c->enc(buf, cap, &m);
	assert_true(n > 0);
	return (size_t)n;
}

/* decode_copy -- decode n bytes from an exactly sized heap copy */
static int decode_copy(const struct codec *c, const void *b, size_t n,
		       union any_msg *m)
{
	void *copy = malloc(n ? n : 1);
	assert_non_null(copy);
	memcpy(copy, b, n);
	int ret = c->dec(copy, n, m);
	/* a HASHES reply points into the buffer: compare before freeing */
	if (ret == 0 && c == &codecs[C_hashes]) {
		assert_true(m->hashes.hashes == (uint8_t *)copy + 4);
		m->hashes.hashes = (const uint8_t *)b + 4;
	}
	free(copy);
	return ret;
}

/* expect_fail -- decoding b[n] fails with err and leaves nothing allocated */
static void expect_fail(const struct codec *c, const void *b, size_t n,
			int err)
{
	union any_msg m;
	memset(&m, 0x5a, sizeof(m));
	int live = mem_live();
	assert_int_equal(decode_copy(c, b, n, &m), err);
	assert_int_equal(mem_live(), live);
}

static void expect_ok(const struct codec *c, const void *b, size_t n,
		      union any_msg *m)
{
	assert_int_equal(decode_copy(c, b, n, m), 0);
}

/* --- generic tests, run for every codec --------------------------------- */

/* round trip: encode then decode gives the same message */
static void test_round_trip(void **state)
{
	const struct codec *c = *state;
	uint8_t buf[8192];
	union any_msg in, out;
	memset(&in, 0, sizeof(in));
	c->fill(&in);
	int n = c->enc(buf, sizeof(buf), &in);
	assert_true(n > 0);
	memset(&out, 0xa5, sizeof(out));
	expect_ok(c, buf, (size_t)n, &out);
	if (c->cmp)
		c->cmp(&in, &out);
	else
		assert_memory_equal(&in, &out, c->size);
	/* the encoding is canonical: re-encoding gives the same bytes */
	uint8_t again[8192];
	int n2 = c->enc(again, sizeof(again), &out);
	assert_int_equal(n2, n);
	assert_memory_equal(again, buf, (size_t)n);
	if (c->fini) {
		c->fini(&out);
		assert_int_equal(mem_live(), 0);
	}
}

/* every proper prefix of a valid payload is -EBADMSG */
static void test_truncation(void **state)
{
	const struct codec *c = *state;
	uint8_t buf[8192];
	size_t n = encode_sample(c, buf, sizeof(buf));
	for (size_t l = 0; l < n; l++)
		expect_fail(c, buf, l, -EBADMSG);
}

/* bytes after a valid payload are -EBADMSG */
static void test_trailing(void **state)
{
	const struct codec *c = *state;
	uint8_t buf[8192];
	size_t n = encode_sample(c, buf, sizeof(buf) - 8);
	memset(buf + n, 0, 8);
	expect_fail(c, buf, n + 1, -EBADMSG);
	expect_fail(c, buf, n + 8, -EBADMSG);
}

/* an output buffer one byte (or more) too small is -EMSGSIZE, no overrun */
static void test_enc_small(void **state)
{
	const struct codec *c = *state;
	uint8_t ref[8192];
	size_t n = encode_sample(c, ref, sizeof(ref));
	union any_msg m;
	memset(&m, 0, sizeof(m));
	c->fill(&m);
	for (size_t cap = 0; cap < n; cap++) {
		uint8_t buf[8192 + 16];
		memset(buf, 0xee, cap + 16);
		assert_int_equal(c->enc(buf, cap, &m), -EMSGSIZE);
		for (size_t i = cap; i < cap + 16; i++)
			assert_int_equal(buf[i], 0xee);
	}
	uint8_t exact[8192];
	assert_int_equal(c->enc(exact, n, &m), (int)n);
	assert_memory_equal(exact, ref, n);
}

/* --- frame header -------------------------------------------------------- */

static void rpmem_hdr_encode__writes_magic_and_le_fields(void **state)
{
	(void)state;
	uint8_t b[RPMEM_HDR_SIZE];
	struct rpmem_hdr h = { .type = 0x0102, .flags = 0x0304,
			       .id = 0x05060708, .len = 0x090a0b0c };
	rpmem_hdr_encode(b, &h);
	static const uint8_t want[RPMEM_HDR_SIZE] = {
		'R', 'P', 'M', 'M', 2, 1, 4, 3, 8, 7, 6, 5, 0xc, 0xb, 0xa, 9
	};
	assert_memory_equal(b, want, sizeof(want));
}

static void rpmem_hdr_decode__every_type_round_trips(void **state)
{
	(void)state;
	for (uint16_t t = 1; t <= RPMEM_MSG_TYPE_MAX; t++) {
		uint8_t b[RPMEM_HDR_SIZE];
		struct rpmem_hdr h = { t, 0xabcd, 0xffffffffu - t, t * 100u };
		struct rpmem_hdr o;
		rpmem_hdr_encode(b, &h);
		assert_int_equal(rpmem_hdr_decode(b, &o), 0);
		assert_int_equal(o.type, h.type);
		assert_int_equal(o.flags, h.flags);
		assert_int_equal(o.id, h.id);
		assert_int_equal(o.len, h.len);
	}
}

static void rpmem_hdr_decode__bad_magic_is_ebadmsg(void **state)
{
	(void)state;
	uint8_t b[RPMEM_HDR_SIZE];
	struct rpmem_hdr h = { RPMEM_MSG_HELLO, 0, 1, 0 }, o;
	for (int i = 0; i < 4; i++) {
		rpmem_hdr_encode(b, &h);
		b[i] ^= 0x20;
		assert_int_equal(rpmem_hdr_decode(b, &o), -EBADMSG);
	}
	/* the magic is checked first: bad magic and bad type is -EBADMSG */
	h.type = 0;
	rpmem_hdr_encode(b, &h);
	memcpy(b, "MMPR", 4);
	assert_int_equal(rpmem_hdr_decode(b, &o), -EBADMSG);
}

static void rpmem_hdr_decode__unknown_type_is_enotsup(void **state)
{
	(void)state;
	static const uint16_t bad[] = { 0, RPMEM_MSG_TYPE_MAX + 1, 0x100,
					0xffff };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		uint8_t b[RPMEM_HDR_SIZE];
		struct rpmem_hdr h = { bad[i], 0, 1, 0 }, o;
		rpmem_hdr_encode(b, &h);
		assert_int_equal(rpmem_hdr_decode(b, &o), -ENOTSUP);
	}
}

static void rpmem_hdr_decode__oversize_len_is_emsgsize(void **state)
{
	(void)state;
	uint8_t b[RPMEM_HDR_SIZE];
	struct rpmem_hdr h = { RPMEM_MSG_WRITE, 0, 1, RPMEM_MAX_PAYLOAD }, o;
	rpmem_hdr_encode(b, &h);
	assert_int_equal(rpmem_hdr_decode(b, &o), 0);
	assert_int_equal(o.len, RPMEM_MAX_PAYLOAD);
	h.len = RPMEM_MAX_PAYLOAD + 1;
	rpmem_hdr_encode(b, &h);
	assert_int_equal(rpmem_hdr_decode(b, &o), -EMSGSIZE);
	h.len = UINT32_MAX;
	rpmem_hdr_encode(b, &h);
	assert_int_equal(rpmem_hdr_decode(b, &o), -EMSGSIZE);
}

/* --- strings ------------------------------------------------------------- */

static void rpmem_list_decode__name_of_64_ok_65_ebadmsg(void **state)
{
	(void)state;
	const struct codec *c = &codecs[C_list];
	union any_msg m;
	struct pb p = { .len = 0 };
	pb_rep(&p, RPMEM_NAME_MAX);
	expect_ok(c, p.b, p.len, &m);
	assert_int_equal(strlen(m.list.region), RPMEM_NAME_MAX);
	p.len = 0;
	pb_rep(&p, RPMEM_NAME_MAX + 1);
	expect_fail(c, p.b, p.len, -EBADMSG);
	p.len = 0;
	pb_u16(&p, 0xffff); /* a length far past the end of the payload */
	pb_bytes(&p, "pmem0", 5);
	expect_fail(c, p.b, p.len, -EBADMSG);
}

static void rpmem_list_decode__empty_region_means_all(void **state)
{
	(void)state;
	union any_msg m;
	struct pb p = { .len = 0 };
	pb_str(&p, "");
	expect_ok(&codecs[C_list], p.b, p.len, &m);
	assert_string_equal(m.list.region, "");
}

static void rpmem_list_decode__embedded_nul_is_ebadmsg(void **state)
{
	(void)state;
	struct pb p = { .len = 0 };
	pb_strn(&p, "pm\0em", 5);
	expect_fail(&codecs[C_list], p.b, p.len, -EBADMSG);
	p.len = 0;
	pb_strn(&p, "pmem\0", 5); /* a trailing NUL is no terminator */
	expect_fail(&codecs[C_list], p.b, p.len, -EBADMSG);
}

static void rpmem_create_decode__long_or_nul_names_are_ebadmsg(void **state)
{
	(void)state;
	const struct codec *c = &codecs[C_create];
	struct pb p = { .len = 0 };
	union any_msg m;
	pb_str(&p, "r");
	pb_rep(&p, RPMEM_NAME_MAX);
	pb_u64(&p, 4096);
	expect_ok(c, p.b, p.len, &m);
	assert_string_equal(m.create.region, "r");
	assert_int_equal(m.create.size, 4096);
	p.len = 0;
	pb_rep(&p, RPMEM_NAME_MAX + 1);
	pb_str(&p, "p");
	pb_u64(&p, 4096);
	expect_fail(c, p.b, p.len, -EBADMSG);
	p.len = 0;
	pb_str(&p, "r");
	pb_rep(&p, RPMEM_NAME_MAX + 1);
	pb_u64(&p, 4096);
	expect_fail(c, p.b, p.len, -EBADMSG);
	p.len = 0;
	pb_str(&p, "r");
	pb_strn(&p, "p\0../x", 6);
	pb_u64(&p, 4096);
	expect_fail(c, p.b, p.len, -EBADMSG);
}

/* --- per-message checks -------------------------------------------------- */

static void put_hello(struct pb *p, uint16_t vmin, uint16_t vmax,
		      size_t client_len, uint16_t auth_len)
{
	pb_u16(p, vmin);
	pb_u16(p, vmax);
	pb_u16(p, 0);
	pb_rep(p, client_len);
	pb_u16(p, auth_len);
	for (unsigned i = 0; i < auth_len; i++)
		pb_u8(p, (uint8_t)i);
}

static void rpmem_hello_decode__ver_min_above_ver_max_is_ebadmsg(void **state)
{
	(void)state;
	const struct codec *c = &codecs[C_hello];
	union any_msg m;
	struct pb p = { .len = 0 };
	put_hello(&p, 2, 2, 3, 0);
	expect_ok(c, p.b, p.len, &m);
	assert_int_equal(m.hello.ver_min, 2);
	assert_int_equal(m.hello.ver_max, 2);
	p.len = 0;
	put_hello(&p, 3, 2, 3, 0);
	expect_fail(c, p.b, p.len, -EBADMSG);
}

static void rpmem_hello_decode__client_and_auth_limits(void **state)
{
	(void)state;
	const struct codec *c = &codecs[C_hello];
	union any_msg m;
	struct pb p = { .len = 0 };
	put_hello(&p, 1, 1, RPMEM_STR_MAX, 256);
	expect_ok(c, p.b, p.len, &m);
	assert_int_equal(strlen(m.hello.client), RPMEM_STR_MAX);
	assert_int_equal(m.hello.auth_len, 256);
	assert_int_equal(m.hello.auth[255], 255);
	p.len = 0;
	put_hello(&p, 1, 1, RPMEM_STR_MAX + 1, 0);
	expect_fail(c, p.b, p.len, -EBADMSG);
	p.len = 0;
	put_hello(&p, 1, 1, 3, 257);
	expect_fail(c, p.b, p.len, -EBADMSG);
	p.len = 0;
	put_hello(&p, 1, 1, 3, 0);
	p.b[9] = '\0'; /* the second byte of the client string */
	expect_fail(c, p.b, p.len, -EBADMSG);
}

static void rpmem_hello_encode__auth_len_over_256_is_emsgsize(void **state)
{
	(void)state;
	struct rpmem_msg_hello m;
	uint8_t buf[1024];
	memset(&m, 0, sizeof(m));
	fill_hello(&m);
	m.auth_len = 257;
	assert_int_equal(rpmem_hello_encode(buf, sizeof(buf), &m), -EMSGSIZE);
}

static void rpmem_hello_ok_decode__server_too_long_is_ebadmsg(void **state)
{
	(void)state;
	struct pb p = { .len = 0 };
	union any_msg m;
	pb_u16(&p, 1);
	pb_u32(&p, 1);
	pb_u32(&p, 0);
	size_t head = p.len;
	pb_rep(&p, RPMEM_STR_MAX);
	expect_ok(&codecs[C_hello_ok], p.b, p.len, &m);
	p.len = head;
	pb_rep(&p, RPMEM_STR_MAX + 1);
	expect_fail(&codecs[C_hello_ok], p.b, p.len, -EBADMSG);
	p.len = head;
	pb_strn(&p, "rpmemd\0x", 8);
	expect_fail(&codecs[C_hello_ok], p.b, p.len, -EBADMSG);
}

static void rpmem_error_decode__unknown_code_becomes_internal(void **state)
{
	(void)state;
	static const uint32_t bad[] = { 0, RPMEM_E_MAX + 1, UINT32_MAX };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct pb p = { .len = 0 };
		union any_msg m;
		pb_u32(&p, bad[i]);
		pb_str(&p, "from a newer peer");
		expect_ok(&codecs[C_error], p.b, p.len, &m);
		assert_int_equal(m.error.code, RPMEM_E_INTERNAL);
		assert_string_equal(m.error.msg, "from a newer peer");
	}
}

static void rpmem_error_decode__message_of_1024_ok_1025_ebadmsg(void **state)
{
	(void)state;
	struct pb p = { .len = 0 };
	union any_msg m;
	pb_u32(&p, RPMEM_E_IO);
	pb_rep(&p, RPMEM_MSG_MAX);
	expect_ok(&codecs[C_error], p.b, p.len, &m);
	assert_int_equal(strlen(m.error.msg), RPMEM_MSG_MAX);
	p.len = 0;
	pb_u32(&p, RPMEM_E_IO);
	pb_rep(&p, RPMEM_MSG_MAX + 1);
	expect_fail(&codecs[C_error], p.b, p.len, -EBADMSG);
}

static void put_remove(struct pb *p, uint32_t flags)
{
	pb_str(p, "pmem0");
	pb_str(p, "db1");
	pb_u32(p, flags);
}

static void rpmem_remove_decode__unknown_flag_is_ebadmsg(void **state)
{
	(void)state;
	struct pb p = { .len = 0 };
	union any_msg m;
	put_remove(&p, 0);
	expect_ok(&codecs[C_remove], p.b, p.len, &m);
	assert_int_equal(m.remove.flags, 0);
	for (int bit = 1; bit < 32; bit++) {
		p.len = 0;
		put_remove(&p, RPMEM_REMOVE_FORCE | 1u << bit);
		expect_fail(&codecs[C_remove], p.b, p.len, -EBADMSG);
	}
}

static void put_open(struct pb *p, uint8_t mode, uint8_t xport)
{
	pb_str(p, "pmem0");
	pb_str(p, "db1");
	pb_u8(p, mode);
	pb_u8(p, xport);
}

static void rpmem_open_decode__bad_mode_or_xport_is_ebadmsg(void **state)
{
	(void)state;
	const struct codec *c = &codecs[C_open];
	union any_msg m;
	for (uint8_t mode = 0; mode <= RPMEM_OPEN_RW; mode++) {
		for (uint8_t x = 0; x <= RPMEM_XPORT_AUTO; x++) {
			struct pb p = { .len = 0 };
			put_open(&p, mode, x);
			expect_ok(c, p.b, p.len, &m);
			assert_int_equal(m.open.mode, mode);
			assert_int_equal(m.open.xport, x);
		}
	}
	static const uint8_t bad_mode[] = { 2, 3, 0x80, 0xff };
	static const uint8_t bad_xport[] = { 3, 4, 0x80, 0xff };
	for (size_t i = 0; i < sizeof(bad_mode); i++) {
		struct pb p = { .len = 0 };
		put_open(&p, bad_mode[i], RPMEM_XPORT_TCP);
		expect_fail(c, p.b, p.len, -EBADMSG);
		p.len = 0;
		put_open(&p, RPMEM_OPEN_RO, bad_xport[i]);
		expect_fail(c, p.b, p.len, -EBADMSG);
	}
}

static void put_open_ok(struct pb *p, uint8_t state, uint8_t xport,
			uint16_t blob_len)
{
	pb_u32(p, 1);
	pb_u64(p, 1 << 20);
	pb_u8(p, state);
	pb_u64(p, 3);
	for (int i = 0; i < 16; i++)
		pb_u8(p, (uint8_t)i);
	pb_u8(p, xport);
	pb_u16(p, blob_len);
	for (unsigned i = 0; i < blob_len; i++)
		pb_u8(p, (uint8_t)(i * 7));
}

static void rpmem_open_ok_decode__bad_state_xport_blob_is_ebadmsg(void **state)
{
	(void)state;
	const struct codec *c = &codecs[C_open_ok];
	union any_msg m;
	struct pb p = { .len = 0 };
	put_open_ok(&p, RPMEM_POOL_CONSISTENT, RPMEM_XPORT_RDMA,
		    RPMEM_XPORT_BLOB_MAX);
	expect_ok(c, p.b, p.len, &m);
	assert_int_equal(m.open_ok.blob_len, RPMEM_XPORT_BLOB_MAX);
	assert_int_equal(m.open_ok.blob[RPMEM_XPORT_BLOB_MAX - 1],
			 (uint8_t)((RPMEM_XPORT_BLOB_MAX - 1) * 7));
	p.len = 0;
	put_open_ok(&p, RPMEM_POOL_CONSISTENT + 1, RPMEM_XPORT_TCP, 0);
	expect_fail(c, p.b, p.len, -EBADMSG);
	p.len = 0;
	/* the reply names the chosen transport: "auto" is not one */
	put_open_ok(&p, RPMEM_POOL_EMPTY, RPMEM_XPORT_AUTO, 0);
	expect_fail(c, p.b, p.len, -EBADMSG);
	p.len = 0;
	put_open_ok(&p, RPMEM_POOL_EMPTY, RPMEM_XPORT_TCP,
		    RPMEM_XPORT_BLOB_MAX + 1);
	expect_fail(c, p.b, p.len, -EBADMSG);
}

static void rpmem_open_ok_encode__blob_over_max_is_emsgsize(void **state)
{
	(void)state;
	struct rpmem_msg_open_ok m;
	static uint8_t buf[4096];
	memset(&m, 0, sizeof(m));
	fill_open_ok(&m);
	m.blob_len = RPMEM_XPORT_BLOB_MAX;
	assert_true(rpmem_open_ok_encode(buf, sizeof(buf), &m) > 0);
	m.blob_len = RPMEM_XPORT_BLOB_MAX + 1;
	assert_int_equal(rpmem_open_ok_encode(buf, sizeof(buf), &m),
			 -EMSGSIZE);
}

static void put_io(struct pb *p, uint64_t off, uint32_t len)
{
	pb_u32(p, 1);
	pb_u64(p, off);
	pb_u32(p, len);
}

static void rpmem_io_decode__len_over_max_io_is_ebadmsg(void **state)
{
	(void)state;
	const struct codec *c = &codecs[C_io];
	union any_msg m;
	struct pb p = { .len = 0 };
	put_io(&p, 0, RPMEM_MAX_IO);
	expect_ok(c, p.b, p.len, &m);
	assert_int_equal(m.io.len, RPMEM_MAX_IO);
	assert_int_equal(p.len, RPMEM_WRITE_HDR_SIZE);
	p.len = 0;
	put_io(&p, 0, RPMEM_MAX_IO + 1);
	expect_fail(c, p.b, p.len, -EBADMSG);
	p.len = 0;
	put_io(&p, 0, UINT32_MAX);
	expect_fail(c, p.b, p.len, -EBADMSG);
}

static void rpmem_io_decode__offset_plus_len_overflow_is_ebadmsg(void **state)
{
	(void)state;
	const struct codec *c = &codecs[C_io];
	union any_msg m;
	struct pb p = { .len = 0 };
	put_io(&p, UINT64_MAX - 4096, 4096); /* ends exactly at 2^64 - 1 */
	expect_ok(c, p.b, p.len, &m);
	assert_int_equal(m.io.offset, UINT64_MAX - 4096);
	p.len = 0;
	put_io(&p, UINT64_MAX - 4095, 4096);
	expect_fail(c, p.b, p.len, -EBADMSG);
	p.len = 0;
	put_io(&p, UINT64_MAX, 1);
	expect_fail(c, p.b, p.len, -EBADMSG);
}

static void put_flush(struct pb *p, uint64_t off, uint64_t len)
{
	pb_u32(p, 1);
	pb_u64(p, off);
	pb_u64(p, len);
}

static void rpmem_flush_decode__offset_plus_len_overflow_is_ebadmsg(
	void **state)
{
	(void)state;
	const struct codec *c = &codecs[C_flush];
	union any_msg m;
	struct pb p = { .len = 0 };
	put_flush(&p, UINT64_MAX, 0);
	expect_ok(c, p.b, p.len, &m);
	p.len = 0;
	put_flush(&p, 0, UINT64_MAX);
	expect_ok(c, p.b, p.len, &m);
	assert_int_equal(m.flush.len, UINT64_MAX);
	p.len = 0;
	put_flush(&p, 1, UINT64_MAX);
	expect_fail(c, p.b, p.len, -EBADMSG);
	p.len = 0;
	put_flush(&p, UINT64_MAX, 1);
	expect_fail(c, p.b, p.len, -EBADMSG);
	p.len = 0;
	put_flush(&p, 1ull << 63, 1ull << 63);
	expect_fail(c, p.b, p.len, -EBADMSG);
}

static void put_hash(struct pb *p, uint64_t off, uint32_t bs, uint32_t count)
{
	pb_u32(p, 1);
	pb_u64(p, off);
	pb_u32(p, bs);
	pb_u32(p, count);
}

static int hash_req_dec(uint64_t off, uint32_t bs, uint32_t count)
{
	struct pb p = { .len = 0 };
	union any_msg m;
	put_hash(&p, off, bs, count);
	return decode_copy(&codecs[C_hash], p.b, p.len, &m);
}

static void rpmem_hash_decode__block_size_must_be_pow2_512_to_64m(void **state)
{
	(void)state;
	for (uint32_t bs = 512; bs <= (64u << 20); bs <<= 1)
		assert_int_equal(hash_req_dec(0, bs, 1), 0);
	static const uint32_t bad[] = { 0,	  1,	     256,
					511,	  513,	     1000,
					3 * 512,  65535,     65537,
					(64u << 20) + 512, 128u << 20,
					1u << 31, UINT32_MAX };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(hash_req_dec(0, bad[i], 1), -EBADMSG);
}

static void rpmem_hash_decode__count_0_or_over_max_is_ebadmsg(void **state)
{
	(void)state;
	assert_int_equal(hash_req_dec(0, 4096, 1), 0);
	assert_int_equal(hash_req_dec(0, 4096, RPMEM_MAX_HASHES), 0);
	assert_int_equal(hash_req_dec(0, 4096, 0), -EBADMSG);
	assert_int_equal(hash_req_dec(0, 4096, RPMEM_MAX_HASHES + 1), -EBADMSG);
	assert_int_equal(hash_req_dec(0, 4096, UINT32_MAX), -EBADMSG);
}

static void rpmem_hash_decode__offset_plus_range_overflow_is_ebadmsg(
	void **state)
{
	(void)state;
	uint64_t span = 2ull * (64u << 20);
	assert_int_equal(hash_req_dec(UINT64_MAX - span, 64u << 20, 2), 0);
	assert_int_equal(hash_req_dec(UINT64_MAX - span + 1, 64u << 20, 2),
			 -EBADMSG);
	assert_int_equal(hash_req_dec(UINT64_MAX, 512, 1), -EBADMSG);
	/* the largest request spans 2^40 bytes: a u32 product would wrap */
	assert_int_equal(hash_req_dec(UINT64_MAX - (1ull << 40) + 1, 64u << 20,
				  RPMEM_MAX_HASHES),
			 -EBADMSG);
}

/* put_hashv -- a HASHV payload with handle 1: n ranges of off[i], count[i] */
static void put_hashv(struct pb *p, uint32_t bs, uint32_t nranges, size_t n,
		      const uint64_t *off, const uint32_t *count)
{
	pb_u32(p, 1);
	pb_u32(p, bs);
	pb_u32(p, nranges);
	for (size_t i = 0; i < n; i++) {
		pb_u64(p, off[i]);
		pb_u32(p, count[i]);
	}
}

/* hashv_req_dec -- a HASHV of n ranges: count[i] blocks at i MiB */
static int hashv_req_dec(uint32_t bs, size_t n, const uint32_t *count,
		     union any_msg *m)
{
	static struct pb p;
	static uint64_t off[RPMEM_MAX_HASHV_RANGES + 1];
	for (size_t i = 0; i < n; i++)
		off[i] = (uint64_t)i << 20;
	p.len = 0;
	put_hashv(&p, bs, (uint32_t)n, n, off, count);
	return decode_copy(&codecs[C_hashv], p.b, p.len, m);
}

static void rpmem_hashv_decode__nranges_0_or_over_max_is_ebadmsg(void **state)
{
	(void)state;
	static uint32_t ones[RPMEM_MAX_HASHV_RANGES + 1];
	union any_msg m;
	for (size_t i = 0; i <= RPMEM_MAX_HASHV_RANGES; i++)
		ones[i] = 1;
	assert_int_equal(hashv_req_dec(4096, 1, ones, &m), 0);
	assert_int_equal(m.hashv.nranges, 1);
	assert_int_equal(m.hashv.total, 1);
	assert_int_equal(hashv_req_dec(4096, RPMEM_MAX_HASHV_RANGES, ones, &m),
			 0);
	assert_int_equal(m.hashv.nranges, RPMEM_MAX_HASHV_RANGES);
	assert_int_equal(m.hashv.total, RPMEM_MAX_HASHV_RANGES);
	assert_int_equal(m.hashv.ranges[RPMEM_MAX_HASHV_RANGES - 1].offset,
			 (uint64_t)(RPMEM_MAX_HASHV_RANGES - 1) << 20);
	assert_int_equal(hashv_req_dec(4096, 0, ones, &m), -EBADMSG);
	assert_int_equal(
		hashv_req_dec(4096, RPMEM_MAX_HASHV_RANGES + 1, ones, &m),
		-EBADMSG);
}

/* the largest HASHV fits the target's 4 KiB request buffer */
static void rpmem_hashv_encode__largest_is_under_4k(void **state)
{
	(void)state;
	static struct rpmem_msg_hashv m;
	static uint8_t buf[8192];
	m.block_size = 4096;
	m.nranges = RPMEM_MAX_HASHV_RANGES;
	for (uint32_t i = 0; i < m.nranges; i++)
		m.ranges[i] = (struct rpmem_hash_range){ (uint64_t)i << 16, 1 };
	int n = rpmem_hashv_encode(buf, sizeof(buf), &m);
	assert_int_equal(n, 12 + 12 * RPMEM_MAX_HASHV_RANGES);
	assert_true(n <= 4096);
	m.nranges = RPMEM_MAX_HASHV_RANGES + 1;
	assert_int_equal(rpmem_hashv_encode(buf, sizeof(buf), &m), -EMSGSIZE);
}

static void rpmem_hashv_decode__nranges_must_match_payload(void **state)
{
	(void)state;
	const struct codec *c = &codecs[C_hashv];
	static const uint64_t off[3] = { 0, 4096, 8192 };
	static const uint32_t cnt[3] = { 1, 2, 3 };
	union any_msg m;
	struct pb p = { .len = 0 };
	put_hashv(&p, 4096, 3, 3, off, cnt);
	expect_ok(c, p.b, p.len, &m);
	assert_int_equal(m.hashv.total, 6);
	/* fewer ranges than announced, more ranges, a partial range */
	p.len = 0;
	put_hashv(&p, 4096, 3, 2, off, cnt);
	expect_fail(c, p.b, p.len, -EBADMSG);
	p.len = 0;
	put_hashv(&p, 4096, 2, 3, off, cnt);
	expect_fail(c, p.b, p.len, -EBADMSG);
	p.len = 0;
	put_hashv(&p, 4096, 3, 3, off, cnt);
	expect_fail(c, p.b, p.len - 4, -EBADMSG);
	/* a count whose byte size wraps 32 bits (0x15555556 * 12 > 2^32) */
	p.len = 0;
	put_hashv(&p, 4096, 0x15555556u, 3, off, cnt);
	expect_fail(c, p.b, p.len, -EBADMSG);
	p.len = 0;
	put_hashv(&p, 4096, UINT32_MAX, 3, off, cnt);
	expect_fail(c, p.b, p.len, -EBADMSG);
}

static void rpmem_hashv_decode__count_0_is_ebadmsg(void **state)
{
	(void)state;
	union any_msg m;
	static const uint32_t a[3] = { 0, 1, 1 }, b[3] = { 1, 1, 0 },
			      ok[3] = { 1, 1, 1 };
	assert_int_equal(hashv_req_dec(4096, 3, ok, &m), 0);
	assert_int_equal(hashv_req_dec(4096, 3, a, &m), -EBADMSG);
	assert_int_equal(hashv_req_dec(4096, 3, b, &m), -EBADMSG);
}

static void rpmem_hashv_decode__sum_of_counts_over_max_is_ebadmsg(
	void **state)
{
	(void)state;
	union any_msg m;
	uint32_t c[4] = { RPMEM_MAX_HASHES - 10, 10 };
	assert_int_equal(hashv_req_dec(512, 2, c, &m), 0);
	assert_int_equal(m.hashv.total, RPMEM_MAX_HASHES);
	c[1] = 11;
	assert_int_equal(hashv_req_dec(512, 2, c, &m), -EBADMSG);
	c[0] = RPMEM_MAX_HASHES + 1;
	assert_int_equal(hashv_req_dec(512, 1, c, &m), -EBADMSG);
	/* counts whose sum wraps 32 bits to a small number */
	c[0] = 1;
	c[1] = UINT32_MAX;
	assert_int_equal(hashv_req_dec(512, 2, c, &m), -EBADMSG);
	c[0] = 10;
	c[1] = UINT32_MAX - 5;
	c[2] = 1;
	assert_int_equal(hashv_req_dec(512, 3, c, &m), -EBADMSG);
	c[0] = 0x80000000u;
	c[1] = 0x80000000u;
	c[2] = 5;
	assert_int_equal(hashv_req_dec(512, 3, c, &m), -EBADMSG);
	c[0] = c[1] = c[2] = c[3] = UINT32_MAX;
	assert_int_equal(hashv_req_dec(512, 4, c, &m), -EBADMSG);
	/* many small ranges add up too */
	static uint32_t many[RPMEM_MAX_HASHV_RANGES];
	for (size_t i = 0; i < RPMEM_MAX_HASHV_RANGES; i++)
		many[i] = RPMEM_MAX_HASHES / RPMEM_MAX_HASHV_RANGES;
	assert_int_equal(hashv_req_dec(512, RPMEM_MAX_HASHV_RANGES, many, &m),
			 0);
	many[RPMEM_MAX_HASHV_RANGES - 1] += RPMEM_MAX_HASHES -
					    m.hashv.total;
	assert_int_equal(hashv_req_dec(512, RPMEM_MAX_HASHV_RANGES, many, &m),
			 0);
	assert_int_equal(m.hashv.total, RPMEM_MAX_HASHES);
	many[0]++;
	assert_int_equal(hashv_req_dec(512, RPMEM_MAX_HASHV_RANGES, many, &m),
			 -EBADMSG);
}

static void rpmem_hashv_decode__block_size_must_be_pow2_512_to_64m(
	void **state)
{
	(void)state;
	union any_msg m;
	static const uint32_t one[1] = { 1 };
	for (uint32_t bs = 512; bs <= (64u << 20); bs <<= 1)
		assert_int_equal(hashv_req_dec(bs, 1, one, &m), 0);
	static const uint32_t bad[] = { 0, 256, 511, 4095, 4097, 3 * 4096,
					128u << 20, 1u << 31, UINT32_MAX };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(hashv_req_dec(bad[i], 1, one, &m), -EBADMSG);
}

static void rpmem_hashv_decode__offset_plus_range_overflow_is_ebadmsg(
	void **state)
{
	(void)state;
	const struct codec *c = &codecs[C_hashv];
	union any_msg m;
	uint64_t span = 2ull * (64u << 20);
	uint64_t off[2] = { 0, UINT64_MAX - span };
	static const uint32_t cnt[2] = { 1, 2 };
	struct pb p = { .len = 0 };
	put_hashv(&p, 64u << 20, 2, 2, off, cnt);
	expect_ok(c, p.b, p.len, &m);
	assert_int_equal(m.hashv.ranges[1].offset, UINT64_MAX - span);
	/* the second range wraps: the first one does not excuse it */
	off[1]++;
	p.len = 0;
	put_hashv(&p, 64u << 20, 2, 2, off, cnt);
	expect_fail(c, p.b, p.len, -EBADMSG);
	/* the product of block size and count is taken in 64 bits */
	static const uint32_t big[1] = { RPMEM_MAX_HASHES };
	off[0] = UINT64_MAX - (1ull << 40) + 1;
	p.len = 0;
	put_hashv(&p, 64u << 20, 1, 1, off, big);
	expect_fail(c, p.b, p.len, -EBADMSG);
}

static void rpmem_hashes_decode__count_must_match_payload(void **state)
{
	(void)state;
	const struct codec *c = &codecs[C_hashes];
	union any_msg m;
	struct pb p = { .len = 0 };
	pb_u32(&p, 0);
	expect_ok(c, p.b, p.len, &m);
	assert_int_equal(m.hashes.count, 0);
	p.len = 0;
	pb_u32(&p, 2);
	pb_u64(&p, 1);
	expect_fail(c, p.b, p.len, -EBADMSG);
	pb_u64(&p, 2);
	expect_ok(c, p.b, p.len, &m);
	assert_int_equal(m.hashes.count, 2);
	pb_u64(&p, 3);
	expect_fail(c, p.b, p.len, -EBADMSG);
}

static void rpmem_hashes_decode__count_over_max_is_ebadmsg(void **state)
{
	(void)state;
	static uint8_t big[4 + (RPMEM_MAX_HASHES + 1) * 8];
	const struct codec *c = &codecs[C_hashes];
	union any_msg m;
	big[0] = (uint8_t)RPMEM_MAX_HASHES;
	big[1] = (uint8_t)(RPMEM_MAX_HASHES >> 8);
	expect_ok(c, big, 4 + RPMEM_MAX_HASHES * 8, &m);
	assert_int_equal(m.hashes.count, RPMEM_MAX_HASHES);
	uint32_t n = RPMEM_MAX_HASHES + 1;
	big[0] = (uint8_t)n;
	big[1] = (uint8_t)(n >> 8);
	expect_fail(c, big, sizeof(big), -EBADMSG);
	/* a count whose byte size wraps 32 bits is refused too */
	memset(big, 0, 4);
	big[3] = 0x20; /* 0x20000000 * 8 == 2^32 */
	expect_fail(c, big, 4, -EBADMSG);
}

static void rpmem_hashes_encode__count_over_max_is_emsgsize(void **state)
{
	(void)state;
	static uint8_t buf[4 + (RPMEM_MAX_HASHES + 1) * 8];
	static uint8_t h[(RPMEM_MAX_HASHES + 1) * 8];
	struct rpmem_msg_hashes m = { RPMEM_MAX_HASHES + 1, h };
	assert_int_equal(rpmem_hashes_encode(buf, sizeof(buf), &m), -EMSGSIZE);
	m.count = RPMEM_MAX_HASHES;
	assert_int_equal(rpmem_hashes_encode(buf, sizeof(buf), &m),
			 4 + RPMEM_MAX_HASHES * 8);
}

static void rpmem_set_state_decode__bad_state_is_ebadmsg(void **state)
{
	(void)state;
	const struct codec *c = &codecs[C_set_state];
	union any_msg m;
	for (unsigned s = 0; s <= 0xff; s++) {
		struct pb p = { .len = 0 };
		pb_u32(&p, 1);
		pb_u8(&p, (uint8_t)s);
		pb_str(&p, "src");
		if (s <= RPMEM_POOL_CONSISTENT) {
			expect_ok(c, p.b, p.len, &m);
			assert_int_equal(m.set_state.state, s);
		} else {
			expect_fail(c, p.b, p.len, -EBADMSG);
		}
	}
	struct pb p = { .len = 0 };
	pb_u32(&p, 1);
	pb_u8(&p, RPMEM_POOL_SYNCING);
	pb_rep(&p, RPMEM_STR_MAX + 1);
	expect_fail(c, p.b, p.len, -EBADMSG);
}

/* set_state_payload -- SET_STATE of handle 1, syncing, source "src" */
static void set_state_payload(struct pb *p)
{
	p->len = 0;
	pb_u32(p, 1);
	pb_u8(p, RPMEM_POOL_SYNCING);
	pb_str(p, "src");
}

static void rpmem_set_state_encode__flags_only_when_set(void **state)
{
	(void)state;
	struct rpmem_msg_set_state m = { .handle = 1,
					 .state = RPMEM_POOL_SYNCING };
	strcpy(m.source, "src");
	struct pb p;
	set_state_payload(&p);
	uint8_t buf[64];
	/* no flags: what a target without RPMEM_CAP_STATE decodes */
	assert_int_equal(rpmem_set_state_encode(buf, sizeof(buf), &m),
			 (int)p.len);
	assert_memory_equal(buf, p.b, p.len);
	m.flags = RPMEM_SET_STATE_REPLY;
	pb_u32(&p, RPMEM_SET_STATE_REPLY);
	assert_int_equal(rpmem_set_state_encode(buf, sizeof(buf), &m),
			 (int)p.len);
	assert_memory_equal(buf, p.b, p.len);
}

static void rpmem_set_state_decode__flags_are_optional(void **state)
{
	(void)state;
	const struct codec *c = &codecs[C_set_state];
	union any_msg m;
	struct pb p;
	set_state_payload(&p);
	memset(&m, 0xa5, sizeof(m));
	expect_ok(c, p.b, p.len, &m);
	assert_int_equal(m.set_state.flags, 0);
	pb_u32(&p, RPMEM_SET_STATE_REPLY);
	expect_ok(c, p.b, p.len, &m);
	assert_int_equal(m.set_state.flags, RPMEM_SET_STATE_REPLY);
	assert_int_equal(m.set_state.state, RPMEM_POOL_SYNCING);
	assert_string_equal(m.set_state.source, "src");
}

static void
rpmem_set_state_decode__partial_or_long_flags_are_ebadmsg(void **state)
{
	(void)state;
	const struct codec *c = &codecs[C_set_state];
	struct pb p;
	set_state_payload(&p);
	size_t base = p.len;
	pb_u32(&p, RPMEM_SET_STATE_REPLY);
	pb_u32(&p, 0);
	for (size_t extra = 1; extra <= 8; extra++)
		if (extra != 4)
			expect_fail(c, p.b, base + extra, -EBADMSG);
}

static void rpmem_set_state_decode__unknown_flag_is_ebadmsg(void **state)
{
	(void)state;
	const struct codec *c = &codecs[C_set_state];
	for (unsigned bit = 1; bit < 32; bit++) {
		struct pb p;
		if ((1u << bit) == RPMEM_SET_STATE_NOTE)
			continue; /* a flag of its own, with REPLY (below) */
		set_state_payload(&p);
		pb_u32(&p, RPMEM_SET_STATE_REPLY | (1u << bit));
		expect_fail(c, p.b, p.len, -EBADMSG);
	}
}

static void rpmem_set_state_decode__note_only_with_reply(void **state)
{
	(void)state;
	const struct codec *c = &codecs[C_set_state];
	union any_msg m;
	struct pb p;

	set_state_payload(&p);
	pb_u32(&p, RPMEM_SET_STATE_REPLY | RPMEM_SET_STATE_NOTE);
	expect_ok(c, p.b, p.len, &m);
	assert_int_equal(m.set_state.flags,
			 RPMEM_SET_STATE_REPLY | RPMEM_SET_STATE_NOTE);
	set_state_payload(&p);
	pb_u32(&p, RPMEM_SET_STATE_NOTE);
	expect_fail(c, p.b, p.len, -EBADMSG);
}

static void rpmem_state__note_round_trip(void **state)
{
	(void)state;
	struct rpmem_msg_state in = { .state = RPMEM_POOL_CONSISTENT,
				      .generation = 9 }, out;
	uint8_t buf[16 + RPMEM_MSG_MAX];
	int len;

	/* no note: the 9 bytes older initiators take */
	assert_int_equal(rpmem_state_encode(buf, sizeof(buf), &in), 9);
	snprintf(in.note, sizeof(in.note), "%s",
		 "version 3 of pool 'p' pruned (quota)");
	len = rpmem_state_encode(buf, sizeof(buf), &in);
	assert_int_equal(len, 9 + 2 + (int)strlen(in.note));
	assert_int_equal(rpmem_state_decode(buf, (size_t)len, &out), 0);
	assert_string_equal(out.note, in.note);
	assert_int_equal(out.generation, 9);
	/* a torn note, or bytes after it, are malformed */
	assert_int_equal(rpmem_state_decode(buf, (size_t)len - 1, &out),
			 -EBADMSG);
	assert_int_equal(rpmem_state_decode(buf, 10, &out), -EBADMSG);
}

static void rpmem_state_decode__bad_state_is_ebadmsg(void **state)
{
	(void)state;
	const struct codec *c = &codecs[C_state];
	union any_msg m;
	for (unsigned s = 0; s <= 0xff; s++) {
		struct pb p = { .len = 0 };
		pb_u8(&p, (uint8_t)s);
		pb_u64(&p, 7);
		if (s <= RPMEM_POOL_CONSISTENT) {
			expect_ok(c, p.b, p.len, &m);
			assert_int_equal(m.state.state, s);
			assert_int_equal(m.state.generation, 7);
		} else {
			expect_fail(c, p.b, p.len, -EBADMSG);
		}
	}
}

/* SCRUB: 1 .. 16384 pieces at a 4 KiB offset that does not overflow */
static void rpmem_scrub_decode__bounds(void **state)
{
	(void)state;
	struct rpmem_msg_scrub m = { 1, 0, 1, 0 }, o;
	uint8_t b[64];
	static const struct { uint64_t off; uint32_t count; int ok; } v[] = {
		{ 0, 1, 1 }, { 4096, RPMEM_MAX_SCRUB_PIECES, 1 },
		{ 0, 0, 0 }, { 0, RPMEM_MAX_SCRUB_PIECES + 1, 0 },
		{ 100, 1, 0 }, { UINT64_MAX - 4095, 1, 0 },
		{ UINT64_MAX - 8191, 1, 1 },
	};
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		m.offset = v[i].off;
		m.count = v[i].count;
		int n = rpmem_scrub_encode(b, sizeof(b), &m);
		assert_int_equal(n, 24);
		assert_int_equal(rpmem_scrub_decode(b, (size_t)n, &o),
				 v[i].ok ? 0 : -EBADMSG);
	}
}

/* VERSIONS, VERSIONS_REPLY, READ_AT: round trips and bounds */
static void rpmem_versions__round_trips_and_bounds(void **state)
{
	(void)state;
	static struct rpmem_version_entry e[RPMEM_MAX_VERSIONS + 1], o[2];
	struct rpmem_msg_versions v = { 3, RPMEM_VERSIONS_PRUNE, 7 }, vo;
	struct rpmem_msg_read_at r = { 3, 4096, RPMEM_MAX_IO, 9 }, ro;
	struct rpmem_msg_versions_reply m = { 2, e }, mo = { 0, o };
	static uint8_t b[RPMEM_MAX_PAYLOAD];
	int n = rpmem_versions_encode(b, sizeof(b), &v);

	assert_int_equal(n, 13);
	assert_int_equal(rpmem_versions_decode(b, (size_t)n, &vo), 0);
	assert_int_equal(vo.version, 7);
	b[4] = RPMEM_VERSIONS_OP_MAX + 1;
	assert_int_equal(rpmem_versions_decode(b, (size_t)n, &vo), -EBADMSG);
	n = rpmem_read_at_encode(b, sizeof(b), &r);
	assert_int_equal(n, 24);
	assert_int_equal(rpmem_read_at_decode(b, (size_t)n, &ro), 0);
	assert_int_equal(ro.version, 9);
	r.len = RPMEM_MAX_IO + 1;
	n = rpmem_read_at_encode(b, sizeof(b), &r);
	assert_int_equal(rpmem_read_at_decode(b, (size_t)n, &ro), -EBADMSG);
	e[0] = (struct rpmem_version_entry){ 1, 2, 3, 4, 5, 6, "host:/a" };
	e[1] = (struct rpmem_version_entry){ 7, 8, 9, 10, 11, 12, "" };
	n = rpmem_versions_reply_encode(b, sizeof(b), &m);
	assert_true(n > 0);
	assert_int_equal(rpmem_versions_reply_decode(b, (size_t)n, &mo), 0);
	assert_ptr_equal(mo.v, o);
	assert_int_equal(mo.count, 2);
	assert_memory_equal(&o[0], &e[0], sizeof(o[0]));
	assert_int_equal(o[1].hash, 12);
	assert_int_equal(rpmem_versions_reply_decode(b, (size_t)n - 1, &mo),
			 -EBADMSG);
	m.count = RPMEM_MAX_VERSIONS + 1;
	assert_int_equal(rpmem_versions_reply_encode(b, sizeof(b), &m),
			 -EMSGSIZE);
}

/* GEN, GEN_REPLY: round trips, ids only with ADOPT, bounds */
static void rpmem_gen__round_trips_and_bounds(void **state)
{
	(void)state;
	struct rpmem_msg_gen g = { 5, RPMEM_GEN_ADOPT, 0, 2, { 0xa1, 0xb2 } };
	struct rpmem_msg_gen go;
	struct rpmem_msg_gen_reply r = { RPMEM_ROLE_PRIMARY, 2, 7, 99, 1, 3,
					 { 3, 2, 1 } },
				   ro;
	uint8_t b[256];
	int n = rpmem_gen_encode(b, sizeof(b), &g);

	assert_int_equal(n, 10 + 16);
	assert_int_equal(rpmem_gen_decode(b, (size_t)n, &go), 0);
	assert_int_equal(go.count, 2);
	assert_int_equal(go.ids[1], 0xb2);
	/* ids with another op, an unknown op or flag, a short payload */
	b[4] = RPMEM_GEN_PROMOTE;
	assert_int_equal(rpmem_gen_decode(b, (size_t)n, &go), -EBADMSG);
	b[4] = RPMEM_GEN_OP_MAX + 1;
	assert_int_equal(rpmem_gen_decode(b, (size_t)n, &go), -EBADMSG);
	b[4] = RPMEM_GEN_ADOPT;
	b[5] = 2;
	assert_int_equal(rpmem_gen_decode(b, (size_t)n, &go), -EBADMSG);
	b[5] = 0;
	assert_int_equal(rpmem_gen_decode(b, (size_t)n - 1, &go), -EBADMSG);
	g.count = RPMEM_MAX_GENERATIONS + 1;
	assert_int_equal(rpmem_gen_encode(b, sizeof(b), &g), -EMSGSIZE);
	n = rpmem_gen_reply_encode(b, sizeof(b), &r);
	assert_int_equal(n, 20 + 24);
	assert_int_equal(rpmem_gen_reply_decode(b, (size_t)n, &ro), 0);
	assert_int_equal(ro.role, RPMEM_ROLE_PRIMARY);
	assert_int_equal(ro.changed, 99);
	assert_int_equal(ro.ids[2], 1);
	b[0] = RPMEM_ROLE_MAX + 1;
	assert_int_equal(rpmem_gen_reply_decode(b, (size_t)n, &ro), -EBADMSG);
	b[0] = 0;
	b[19] = RPMEM_MAX_GENERATIONS + 1;
	assert_int_equal(rpmem_gen_reply_decode(b, (size_t)n, &ro), -EBADMSG);
}

/* RPMEM_LIST_GENERATIONS: each pool entry ends with role and history */
static void rpmem_list_reply__generations_layout_round_trips(void **state)
{
	(void)state;
	uint8_t buf[8192];
	union any_msg m, d;
	memset(&m, 0, sizeof(m));
	fill_list_reply(&m);
	m.list_reply.flags = RPMEM_LIST_GENERATIONS;
	m.list_reply.pools[0].role = RPMEM_ROLE_PRIMARY;
	m.list_reply.pools[0].ngens = 2;
	m.list_reply.pools[0].gens[0] = 0x1234;
	m.list_reply.pools[0].gens[1] = 0x99;
	int n = rpmem_list_reply_encode(buf, sizeof(buf), &m.list_reply);
	assert_true(n > 0);
	assert_int_equal(rpmem_list_reply_decode_flags(buf, (size_t)n,
						       RPMEM_LIST_GENERATIONS,
						       &d.list_reply),
			 0);
	assert_int_equal(d.list_reply.pools[0].role, RPMEM_ROLE_PRIMARY);
	assert_int_equal(d.list_reply.pools[0].ngens, 2);
	assert_int_equal(d.list_reply.pools[0].gens[1], 0x99);
	rpmem_list_reply_free(&d.list_reply);
	/* a history longer than the most is refused both ways */
	m.list_reply.pools[0].ngens = RPMEM_MAX_GENERATIONS + 1;
	assert_int_equal(rpmem_list_reply_encode(buf, sizeof(buf),
						 &m.list_reply),
			 -EMSGSIZE);
	/* the samples are shared: as the other tests expect them */
	struct rpmem_pool_info *q = &m.list_reply.pools[0];
	q->role = 0;
	q->ngens = 0;
	memset(q->gens, 0, sizeof(q->gens));
}

/* RPMEM_LIST_DAMAGED: each pool entry ends with its damaged bytes, last */
static void rpmem_list_reply__damaged_layout_round_trips(void **state)
{
	(void)state;
	uint8_t buf[8192];
	union any_msg m, d;
	memset(&m, 0, sizeof(m));
	fill_list_reply(&m);
	m.list_reply.flags = RPMEM_LIST_GENERATIONS | RPMEM_LIST_DAMAGED;
	m.list_reply.pools[0].ngens = 1;
	m.list_reply.pools[0].gens[0] = 0x77;
	m.list_reply.pools[0].damaged = 8192;
	int n = rpmem_list_reply_encode(buf, sizeof(buf), &m.list_reply);
	assert_true(n > 0);
	assert_int_equal(rpmem_list_reply_decode_flags(buf, (size_t)n,
						       m.list_reply.flags,
						       &d.list_reply),
			 0);
	assert_int_equal(d.list_reply.pools[0].gens[0], 0x77);
	assert_int_equal(d.list_reply.pools[0].damaged, 8192);
	rpmem_list_reply_free(&d.list_reply);
	/* without the flag the field is not on the wire: 8 bytes a pool less */
	m.list_reply.flags = RPMEM_LIST_GENERATIONS;
	int n2 = rpmem_list_reply_encode(buf, sizeof(buf), &m.list_reply);
	assert_int_equal(n - n2, 8 * (int)m.list_reply.npools);
	/* the samples are shared: as the other tests expect them */
	struct rpmem_pool_info *q = &m.list_reply.pools[0];
	q->ngens = 0;
	q->damaged = 0;
	memset(q->gens, 0, sizeof(q->gens));
}

static void rpmem_list_reply__split_layout_round_trips(void **state)
{
	(void)state;
	uint8_t buf[8192];
	union any_msg m, d;
	memset(&m, 0, sizeof(m));
	fill_list_reply(&m);
	m.list_reply.flags = RPMEM_LIST_DAMAGED | RPMEM_LIST_SPLIT;
	m.list_reply.pools[0].damaged = 4096;
	m.list_reply.pools[0].split_at = 1796000000;
	int n = rpmem_list_reply_encode(buf, sizeof(buf), &m.list_reply);
	assert_true(n > 0);
	assert_int_equal(rpmem_list_reply_decode_flags(buf, (size_t)n,
						       m.list_reply.flags,
						       &d.list_reply),
			 0);
	assert_int_equal(d.list_reply.pools[0].damaged, 4096);
	assert_int_equal(d.list_reply.pools[0].split_at, 1796000000);
	rpmem_list_reply_free(&d.list_reply);
	/* without the flag the field is not on the wire: 8 bytes a pool less */
	m.list_reply.flags = RPMEM_LIST_DAMAGED;
	int n2 = rpmem_list_reply_encode(buf, sizeof(buf), &m.list_reply);
	assert_int_equal(n - n2, 8 * (int)m.list_reply.npools);
	m.list_reply.pools[0].damaged = 0;
	m.list_reply.pools[0].split_at = 0;
}

/* READ and READ_AT: flags only when not 0, unknown or zero ones refused */
static void rpmem_read__flags_optional_and_checked(void **state)
{
	(void)state;
	struct rpmem_msg_io io = { 7, 4096, 8192 }, o;
	struct rpmem_msg_read_at ra = { 7, 4096, 8192, 3, 0 }, ro;
	uint8_t b[64];
	uint32_t f;
	assert_int_equal(rpmem_read_encode(b, sizeof(b), &io, 0), 16);
	assert_int_equal(rpmem_read_decode(b, 16, &o, &f), 0);
	assert_int_equal(f, 0);
	assert_int_equal(rpmem_read_encode(b, sizeof(b), &io,
					   RPMEM_READ_DAMAGED), 20);
	assert_int_equal(rpmem_read_decode(b, 20, &o, &f), 0);
	assert_int_equal(f, RPMEM_READ_DAMAGED);
	assert_int_equal(o.offset, 4096);
	assert_int_equal(rpmem_read_encode(b, sizeof(b), &io, 1u << 5),
			 -EINVAL);
	/* a flags field of 0 or with an unknown bit is malformed */
	memset(b + 16, 0, 4);
	assert_int_equal(rpmem_read_decode(b, 20, &o, &f), -EBADMSG);
	b[16] = 2;
	assert_int_equal(rpmem_read_decode(b, 20, &o, &f), -EBADMSG);
	assert_int_equal(rpmem_read_at_encode(b, sizeof(b), &ra), 24);
	ra.flags = RPMEM_READ_DAMAGED;
	assert_int_equal(rpmem_read_at_encode(b, sizeof(b), &ra), 28);
	assert_int_equal(rpmem_read_at_decode(b, 28, &ro), 0);
	assert_int_equal(ro.flags, RPMEM_READ_DAMAGED);
	assert_int_equal(ro.version, 3);
	b[24] = 4;
	assert_int_equal(rpmem_read_at_decode(b, 28, &ro), -EBADMSG);
}

/* SCRUB_REPLY: one verdict a piece, each and the reason in range */
static void rpmem_scrub_reply__round_trip_and_bad_values(void **state)
{
	(void)state;
	static const uint8_t pieces[5] = { 0, 1, 2, 0, 1 };
	struct rpmem_msg_scrub_reply m = { RPMEM_SCRUB_BAD_ENTRY, 42, 5,
					   pieces }, o;
	uint8_t b[64];
	int n = rpmem_scrub_reply_encode(b, sizeof(b), &m);
	assert_int_equal(n, 13 + 5);
	assert_int_equal(rpmem_scrub_reply_decode(b, (size_t)n, &o), 0);
	assert_int_equal(o.why, RPMEM_SCRUB_BAD_ENTRY);
	assert_int_equal(o.generation, 42);
	assert_int_equal(o.count, 5);
	assert_memory_equal(o.pieces, pieces, 5);
	assert_int_equal(rpmem_scrub_reply_decode(b, (size_t)n - 1, &o),
			 -EBADMSG);
	b[13 + 2] = RPMEM_SCRUB_PIECE_MAX + 1;
	assert_int_equal(rpmem_scrub_reply_decode(b, (size_t)n, &o), -EBADMSG);
	b[13 + 2] = 2;
	b[0] = RPMEM_SCRUB_WHY_MAX + 1;
	assert_int_equal(rpmem_scrub_reply_decode(b, (size_t)n, &o), -EBADMSG);
	m.count = RPMEM_MAX_SCRUB_PIECES + 1;
	assert_int_equal(rpmem_scrub_reply_encode(b, sizeof(b), &m),
			 -EMSGSIZE);
}

static void rpmem_kick_decode__nonzero_flags_is_ebadmsg(void **state)
{
	(void)state;
	const struct codec *c = &codecs[C_kick];
	union any_msg m;
	struct pb p = { .len = 0 };
	pb_u32(&p, 7);
	pb_u32(&p, 0);
	expect_ok(c, p.b, p.len, &m);
	assert_int_equal(m.kick.session, 7);
	for (unsigned bit = 0; bit < 32; bit++) {
		struct pb q = { .len = 0 };
		pb_u32(&q, 7);
		pb_u32(&q, 1u << bit);
		expect_fail(c, q.b, q.len, -EBADMSG);
	}
}

/* --- EVENTS, EVENT -------------------------------------------------------- */

static void rpmem_events_decode__unknown_flags_are_ebadmsg(void **state)
{
	(void)state;
	struct rpmem_msg_events m = { .flags = RPMEM_EVENTS_NOW }, o;
	uint8_t b[8];
	int len = rpmem_events_encode(b, sizeof(b), &m);
	assert_int_equal(len, 4);
	assert_int_equal(rpmem_events_decode(b, 4, &o), 0);
	assert_int_equal(o.flags, RPMEM_EVENTS_NOW);
	for (unsigned bit = 1; bit < 32; bit++) {
		struct pb q = { .len = 0 };
		pb_u32(&q, 1u << bit);
		assert_int_equal(rpmem_events_decode(q.b, q.len, &o), -EBADMSG);
	}
	assert_int_equal(rpmem_events_decode(b, 3, &o), -EBADMSG);
}

static void rpmem_event_decode__round_trips_every_field(void **state)
{
	(void)state;
	struct rpmem_msg_event m = { .verb = RPMEM_EV_DESTROY,
				     .object = RPMEM_EVO_TRANSFER,
				     .time_ms = 1718000000123ull,
				     .session = 42,
				     .region = "r1",
				     .pool = "db",
				     .state = RPMEM_POOL_CONSISTENT,
				     .generation = 7,
				     .size = 1ull << 30,
				     .bytes = 12345,
				     .lost = 3,
				     .peer = "127.0.0.1:4000",
				     .client = "rpmemctl x",
				     .identity = "alice",
				     .limit = "frame_timeout",
				     .text = "consistent" },
				o;
	uint8_t b[2048];
	int len = rpmem_event_encode(b, sizeof(b), &m);
	assert_true(len > 0);
	assert_int_equal(rpmem_event_decode(b, (size_t)len, &o), 0);
	assert_memory_equal(&m, &o, sizeof(m));
	/* short or long by a byte: malformed */
	assert_int_equal(rpmem_event_decode(b, (size_t)len - 1, &o), -EBADMSG);
	assert_int_equal(rpmem_event_decode(b, (size_t)len + 1, &o), -EBADMSG);
}

static void rpmem_event_decode__verb_object_state_out_of_range_are_ebadmsg(
	void **state)
{
	(void)state;
	struct rpmem_msg_event m = { 0 }, o;
	uint8_t b[2048];
	int len;

	m.verb = RPMEM_EV_VERB_MAX + 1;
	len = rpmem_event_encode(b, sizeof(b), &m);
	assert_int_equal(rpmem_event_decode(b, (size_t)len, &o), -EBADMSG);
	m.verb = 0;
	m.object = RPMEM_EVO_OBJECT_MAX + 1;
	len = rpmem_event_encode(b, sizeof(b), &m);
	assert_int_equal(rpmem_event_decode(b, (size_t)len, &o), -EBADMSG);
	m.object = 0;
	m.state = RPMEM_POOL_CONSISTENT + 1;
	len = rpmem_event_encode(b, sizeof(b), &m);
	assert_int_equal(rpmem_event_decode(b, (size_t)len, &o), -EBADMSG);
	assert_string_equal(rpmem_event_verb_str(RPMEM_EV_OVERFLOW), "overflow");
	assert_string_equal(rpmem_event_object_str(RPMEM_EVO_NONE), "-");
	assert_string_equal(rpmem_event_verb_str(99), "unknown");
}

/* --- LIST_REPLY ---------------------------------------------------------- */

static void put_region(struct pb *p, const char *name, uint8_t type)
{
	pb_str(p, name);
	pb_u8(p, type);
	pb_str(p, "/mnt/pmem0");
	pb_u64(p, 1 << 30);
	pb_u64(p, 1 << 29);
	pb_u32(p, 4096);
	pb_u32(p, 0);
}

static void put_pool(struct pb *p, const char *name, uint8_t state)
{
	pb_str(p, "pmem0");
	pb_str(p, name);
	for (int i = 0; i < 16; i++)
		pb_u8(p, 0);
	pb_u64(p, 1 << 20);
	pb_u8(p, state);
	pb_u64(p, 1);
	pb_u64(p, 2);
	pb_u64(p, 3);
	pb_str(p, "src");
	pb_str(p, "");
	pb_u32(p, 0);
	pb_u64(p, 0);
	pb_u64(p, 0);
}

static void rpmem_list_reply_decode__empty_lists_round_trip(void **state)
{
	(void)state;
	struct rpmem_msg_list_reply in = { 0, NULL, 0, NULL }, out;
	uint8_t buf[16];
	int n = rpmem_list_reply_encode(buf, sizeof(buf), &in);
	assert_int_equal(n, 8);
	assert_int_equal(rpmem_list_reply_decode(buf, (size_t)n, &out), 0);
	assert_int_equal(out.nregions, 0);
	assert_int_equal(out.npools, 0);
	rpmem_list_reply_free(&out);
	assert_null(out.regions);
	assert_null(out.pools);
	assert_int_equal(mem_live(), 0);
}

static void rpmem_list_reply_decode__bad_region_type_is_ebadmsg(void **state)
{
	(void)state;
	const struct codec *c = &codecs[C_list_reply];
	union any_msg m;
	struct pb p = { .len = 0 };
	pb_u32(&p, 3);
	put_region(&p, "a", RPMEM_REGION_DIR);
	put_region(&p, "b", RPMEM_REGION_FSDAX);
	put_region(&p, "c", RPMEM_REGION_DEVDAX);
	pb_u32(&p, 0);
	expect_ok(c, p.b, p.len, &m);
	assert_int_equal(m.list_reply.nregions, 3);
	assert_int_equal(m.list_reply.regions[2].type, RPMEM_REGION_DEVDAX);
	rpmem_list_reply_free(&m.list_reply);
	p.len = 0;
	pb_u32(&p, 2);
	put_region(&p, "a", RPMEM_REGION_DIR);
	put_region(&p, "b", RPMEM_REGION_DEVDAX + 1);
	pb_u32(&p, 0);
	expect_fail(c, p.b, p.len, -EBADMSG);
}

static void rpmem_list_reply_decode__bad_pool_state_is_ebadmsg(void **state)
{
	(void)state;
	const struct codec *c = &codecs[C_list_reply];
	union any_msg m;
	struct pb p = { .len = 0 };
	pb_u32(&p, 0);
	pb_u32(&p, 2);
	put_pool(&p, "p1", RPMEM_POOL_CONSISTENT);
	put_pool(&p, "p2", RPMEM_POOL_EMPTY);
	expect_ok(c, p.b, p.len, &m);
	assert_string_equal(m.list_reply.pools[1].name, "p2");
	rpmem_list_reply_free(&m.list_reply);
	p.len = 0;
	pb_u32(&p, 0);
	pb_u32(&p, 2);
	put_pool(&p, "p1", RPMEM_POOL_CONSISTENT);
	put_pool(&p, "p2", RPMEM_POOL_CONSISTENT + 1);
	expect_fail(c, p.b, p.len, -EBADMSG);
}

static void rpmem_list_reply_decode__long_name_in_entry_is_ebadmsg(
	void **state)
{
	(void)state;
	struct pb p = { .len = 0 };
	pb_u32(&p, 1);
	pb_rep(&p, RPMEM_NAME_MAX + 1);
	pb_u8(&p, 0);
	pb_str(&p, "/x");
	pb_u64(&p, 0);
	pb_u64(&p, 0);
	pb_u32(&p, 0);
	pb_u32(&p, 0);
	pb_u32(&p, 0);
	expect_fail(&codecs[C_list_reply], p.b, p.len, -EBADMSG);
}

static void rpmem_list_reply_decode__huge_count_fails_before_allocating(
	void **state)
{
	(void)state;
	const struct codec *c = &codecs[C_list_reply];
	struct pb p = { .len = 0 };
	pb_u32(&p, UINT32_MAX);
	put_region(&p, "a", 0);
	pb_u32(&p, 0);
	mem_reset();
	expect_fail(c, p.b, p.len, -EBADMSG);
	assert_true(mem.max_nmemb <= p.len);
	/* the same for the pool count, after a valid region list */
	p.len = 0;
	pb_u32(&p, 1);
	put_region(&p, "a", 0);
	pb_u32(&p, 0x40000000);
	put_pool(&p, "p", 0);
	mem_reset();
	expect_fail(c, p.b, p.len, -EBADMSG);
	assert_true(mem.max_nmemb <= p.len);
}

static void rpmem_list_reply_decode__calloc_failure_is_enomem(void **state)
{
	(void)state;
	const struct codec *c = &codecs[C_list_reply];
	uint8_t buf[8192];
	size_t n = encode_sample(c, buf, sizeof(buf));
	/* fail the region array, then the pool array: nothing stays owned */
	for (int nth = 1; nth <= 2; nth++) {
		mem_reset();
		mem.fail_in = nth;
		expect_fail(c, buf, n, -ENOMEM);
		assert_int_equal(mem.calls, nth);
	}
}

/* --- STATUS_REPLY -------------------------------------------------------- */

static void put_status_head(struct pb *p, uint32_t n)
{
	pb_str(p, "rpmemd");
	pb_u64(p, 1);
	pb_u64(p, 2);
	pb_u32(p, 0);
	pb_u32(p, 8);
	pb_u32(p, n);
}

static void put_session(struct pb *p, uint8_t xport, uint8_t mode,
			size_t pool_len)
{
	pb_u32(p, 1);
	pb_str(p, "10.0.0.1:1234");
	pb_str(p, "rpmemctl");
	pb_u8(p, xport);
	pb_rep(p, pool_len);
	pb_u8(p, mode);
	for (int i = 0; i < 5; i++)
		pb_u64(p, (uint64_t)i);
}

/* put_no_ns -- the empty namespace and link lists of a machine without PMem */
static void put_no_ns(struct pb *p)
{
	pb_u32(p, 0);
	pb_u32(p, 0);
}

/* a namespace entry: the strings' lengths, mode and numa as given */
struct ns_spec {
	size_t name_len;
	size_t region_len;
	size_t dev_len;
	uint8_t mode;
	int32_t numa;
	size_t mount_len;
};

static const struct ns_spec ns_ok = { 12, 7, 11, RPMEM_NS_DEVDAX, 0, 0 };

static void put_ns(struct pb *p, const struct ns_spec *n)
{
	pb_rep(p, n->name_len);
	pb_rep(p, n->region_len);
	pb_rep(p, n->dev_len);
	pb_u8(p, n->mode);
	pb_u64(p, 250 << 20);
	pb_u32(p, 4096);
	pb_u32(p, (uint32_t)n->numa);
	pb_rep(p, n->mount_len);
}

static void put_link(struct pb *p, size_t region_len, uint32_t ns)
{
	pb_rep(p, region_len);
	pb_u32(p, ns);
}

/* status_ns -- a STATUS_REPLY without sessions, one namespace n, a link */
static void status_ns(struct pb *p, const struct ns_spec *n)
{
	p->len = 0;
	put_status_head(p, 0);
	pb_u32(p, 1);
	put_ns(p, n);
	pb_u32(p, 1);
	put_link(p, 2, 0);
}

static void rpmem_status_reply_decode__bad_session_fields_are_ebadmsg(
	void **state)
{
	(void)state;
	const struct codec *c = &codecs[C_status_reply];
	union any_msg m;
	struct pb p = { .len = 0 };
	put_status_head(&p, 2);
	put_session(&p, RPMEM_XPORT_TCP, RPMEM_OPEN_RO, 0);
	put_session(&p, RPMEM_XPORT_RDMA, RPMEM_OPEN_RW,
		    2 * RPMEM_NAME_MAX + 1);
	put_no_ns(&p);
	expect_ok(c, p.b, p.len, &m);
	assert_int_equal(m.status_reply.nsessions, 2);
	assert_int_equal(strlen(m.status_reply.sessions[1].pool),
			 2 * RPMEM_NAME_MAX + 1);
	assert_int_equal(m.status_reply.nnamespaces, 0);
	assert_int_equal(m.status_reply.nlinks, 0);
	rpmem_status_reply_free(&m.status_reply);
	/* sessions run on a real transport, never "auto" */
	p.len = 0;
	put_status_head(&p, 1);
	put_session(&p, RPMEM_XPORT_AUTO, RPMEM_OPEN_RO, 3);
	put_no_ns(&p);
	expect_fail(c, p.b, p.len, -EBADMSG);
	p.len = 0;
	put_status_head(&p, 1);
	put_session(&p, RPMEM_XPORT_TCP, RPMEM_OPEN_RW + 1, 3);
	put_no_ns(&p);
	expect_fail(c, p.b, p.len, -EBADMSG);
	p.len = 0;
	put_status_head(&p, 1);
	put_session(&p, RPMEM_XPORT_TCP, RPMEM_OPEN_RW, 2 * RPMEM_NAME_MAX + 2);
	put_no_ns(&p);
	expect_fail(c, p.b, p.len, -EBADMSG);
}

static void rpmem_status_reply_decode__namespace_string_limits(void **state)
{
	(void)state;
	const struct codec *c = &codecs[C_status_reply];
	union any_msg m;
	struct pb p;
	struct ns_spec n = ns_ok;

	/* every string at its limit */
	n.name_len = RPMEM_NAME_MAX;
	n.region_len = RPMEM_NAME_MAX;
	n.dev_len = RPMEM_STR_MAX;
	n.mount_len = RPMEM_STR_MAX;
	status_ns(&p, &n);
	expect_ok(c, p.b, p.len, &m);
	assert_int_equal(m.status_reply.nnamespaces, 1);
	assert_int_equal(strlen(m.status_reply.namespaces[0].name),
			 RPMEM_NAME_MAX);
	assert_int_equal(strlen(m.status_reply.namespaces[0].dev),
			 RPMEM_STR_MAX);
	assert_int_equal(strlen(m.status_reply.namespaces[0].mount),
			 RPMEM_STR_MAX);
	assert_int_equal(m.status_reply.nlinks, 1);
	assert_int_equal(m.status_reply.links[0].ns, 0);
	rpmem_status_reply_free(&m.status_reply);
	/* one byte over, each in turn */
	n = ns_ok;
	n.name_len = RPMEM_NAME_MAX + 1;
	status_ns(&p, &n);
	expect_fail(c, p.b, p.len, -EBADMSG);
	n = ns_ok;
	n.region_len = RPMEM_NAME_MAX + 1;
	status_ns(&p, &n);
	expect_fail(c, p.b, p.len, -EBADMSG);
	n = ns_ok;
	n.dev_len = RPMEM_STR_MAX + 1;
	status_ns(&p, &n);
	expect_fail(c, p.b, p.len, -EBADMSG);
	n = ns_ok;
	n.mount_len = RPMEM_STR_MAX + 1;
	status_ns(&p, &n);
	expect_fail(c, p.b, p.len, -EBADMSG);
	/* a namespace always has a name; dev, region, mount may be empty */
	n = ns_ok;
	n.name_len = 0;
	status_ns(&p, &n);
	expect_fail(c, p.b, p.len, -EBADMSG);
	n = ns_ok;
	n.region_len = n.dev_len = n.mount_len = 0;
	status_ns(&p, &n);
	expect_ok(c, p.b, p.len, &m);
	assert_string_equal(m.status_reply.namespaces[0].dev, "");
	rpmem_status_reply_free(&m.status_reply);
	/* a region name in a link over 64 bytes, or empty */
	status_ns(&p, &ns_ok);
	p.len -= 2 + 2 + 4;
	put_link(&p, RPMEM_NAME_MAX, 0);
	expect_ok(c, p.b, p.len, &m);
	assert_int_equal(strlen(m.status_reply.links[0].region),
			 RPMEM_NAME_MAX);
	rpmem_status_reply_free(&m.status_reply);
	p.len -= 2 + RPMEM_NAME_MAX + 4;
	put_link(&p, RPMEM_NAME_MAX + 1, 0);
	expect_fail(c, p.b, p.len, -EBADMSG);
	p.len -= 2 + RPMEM_NAME_MAX + 1 + 4;
	put_link(&p, 0, 0);
	expect_fail(c, p.b, p.len, -EBADMSG);
}

static void rpmem_status_reply_decode__namespace_mode_numa_link(void **state)
{
	(void)state;
	const struct codec *c = &codecs[C_status_reply];
	union any_msg m;
	struct pb p;
	struct ns_spec n = ns_ok;

	for (uint8_t mode = 0; mode <= RPMEM_NS_MODE_MAX; mode++) {
		n.mode = mode;
		status_ns(&p, &n);
		expect_ok(c, p.b, p.len, &m);
		assert_int_equal(m.status_reply.namespaces[0].mode, mode);
		assert_string_not_equal(rpmem_ns_mode_str(mode), "");
		rpmem_status_reply_free(&m.status_reply);
	}
	assert_string_equal(rpmem_ns_mode_str(RPMEM_NS_DEVDAX), "devdax");
	assert_string_equal(rpmem_ns_mode_str(RPMEM_NS_FSDAX), "fsdax");
	assert_string_equal(rpmem_ns_mode_str(RPMEM_NS_MODE_MAX + 1),
			    "unknown");
	n.mode = RPMEM_NS_MODE_MAX + 1;
	status_ns(&p, &n);
	expect_fail(c, p.b, p.len, -EBADMSG);
	/* NUMA node -1 is "unknown"; nothing below it */
	n = ns_ok;
	n.numa = -1;
	status_ns(&p, &n);
	expect_ok(c, p.b, p.len, &m);
	assert_int_equal(m.status_reply.namespaces[0].numa, -1);
	rpmem_status_reply_free(&m.status_reply);
	n.numa = 1023;
	status_ns(&p, &n);
	expect_ok(c, p.b, p.len, &m);
	assert_int_equal(m.status_reply.namespaces[0].numa, 1023);
	rpmem_status_reply_free(&m.status_reply);
	n.numa = -2;
	status_ns(&p, &n);
	expect_fail(c, p.b, p.len, -EBADMSG);
	n.numa = INT32_MIN;
	status_ns(&p, &n);
	expect_fail(c, p.b, p.len, -EBADMSG);
	/* a link names a namespace of the reply */
	status_ns(&p, &ns_ok);
	p.len -= 4;
	pb_u32(&p, 1);
	expect_fail(c, p.b, p.len, -EBADMSG);
	p.len = 0;
	put_status_head(&p, 0);
	pb_u32(&p, 0);
	pb_u32(&p, 1);
	put_link(&p, 2, 0);
	expect_fail(c, p.b, p.len, -EBADMSG);
}

/* fill_ns -- n valid namespaces of the smallest encoding into v */
static void fill_ns(struct rpmem_ns_info *v, size_t n)
{
	memset(v, 0, n * sizeof(*v));
	for (size_t i = 0; i < n; i++)
		strcpy(v[i].name, "n");
}

static void rpmem_status_reply__too_many_entries(void **state)
{
	(void)state;
	const struct codec *c = &codecs[C_status_reply];
	static struct rpmem_ns_info ns[RPMEM_MAX_NAMESPACES + 1];
	static struct rpmem_ns_link links[RPMEM_MAX_NS_LINKS + 1];
	static uint8_t buf[RPMEM_MAX_PAYLOAD];
	struct rpmem_msg_status_reply in, out;
	int len;

	/* RPMEM_MAX_NAMESPACES and RPMEM_MAX_NS_LINKS entries are fine */
	memset(&in, 0, sizeof(in));
	fill_ns(ns, RPMEM_MAX_NAMESPACES + 1);
	for (size_t i = 0; i <= RPMEM_MAX_NS_LINKS; i++) {
		snprintf(links[i].region, sizeof(links[i].region), "r%zu", i);
		links[i].ns = (uint32_t)(i % RPMEM_MAX_NAMESPACES);
	}
	in.nnamespaces = RPMEM_MAX_NAMESPACES;
	in.namespaces = ns;
	in.nlinks = RPMEM_MAX_NS_LINKS;
	in.links = links;
	len = rpmem_status_reply_encode(buf, sizeof(buf), &in);
	assert_true(len > 0);
	assert_int_equal(rpmem_status_reply_decode(buf, (size_t)len, &out), 0);
	assert_int_equal(out.nnamespaces, RPMEM_MAX_NAMESPACES);
	assert_int_equal(out.nlinks, RPMEM_MAX_NS_LINKS);
	assert_string_equal(out.links[RPMEM_MAX_NS_LINKS - 1].region, "r1023");
	rpmem_status_reply_free(&out);

	/* one more is refused by the encoder ... */
	in.nnamespaces = RPMEM_MAX_NAMESPACES + 1;
	assert_int_equal(rpmem_status_reply_encode(buf, sizeof(buf), &in),
			 -EMSGSIZE);
	in.nnamespaces = 1;
	in.nlinks = RPMEM_MAX_NS_LINKS + 1;
	assert_int_equal(rpmem_status_reply_encode(buf, sizeof(buf), &in),
			 -EMSGSIZE);

	/* ... and by the decoder, though the payload holds them all */
	struct pb *p = calloc(1, sizeof(*p));
	assert_non_null(p);
	put_status_head(p, 0);
	pb_u32(p, RPMEM_MAX_NAMESPACES + 1);
	for (size_t i = 0; i <= RPMEM_MAX_NAMESPACES; i++) {
		pb_str(p, "n");
		pb_str(p, "");
		pb_str(p, "");
		pb_u8(p, 0);
		pb_u64(p, 0);
		pb_u32(p, 0);
		pb_u32(p, 0);
		pb_str(p, "");
	}
	pb_u32(p, 0);
	mem_reset();
	expect_fail(c, p->b, p->len, -EBADMSG);
	assert_int_equal(mem.calls, 1); /* only the sessions' array */
	p->len = 0;
	put_status_head(p, 0);
	pb_u32(p, 1);
	put_ns(p, &ns_ok);
	pb_u32(p, RPMEM_MAX_NS_LINKS + 1);
	for (size_t i = 0; i <= RPMEM_MAX_NS_LINKS; i++)
		put_link(p, 1, 0);
	mem_reset();
	expect_fail(c, p->b, p->len, -EBADMSG);
	assert_int_equal(mem.calls, 2);
	free(p);
}

static void rpmem_status_reply_decode__huge_count_fails_before_allocating(
	void **state)
{
	(void)state;
	struct pb p = { .len = 0 };
	put_status_head(&p, UINT32_MAX);
	put_session(&p, 0, 0, 1);
	put_no_ns(&p);
	mem_reset();
	expect_fail(&codecs[C_status_reply], p.b, p.len, -EBADMSG);
	assert_true(mem.max_nmemb <= p.len);
	/* the same for the namespace and the link counts */
	p.len = 0;
	put_status_head(&p, 0);
	pb_u32(&p, 0x10000000);
	put_ns(&p, &ns_ok);
	pb_u32(&p, 0);
	mem_reset();
	expect_fail(&codecs[C_status_reply], p.b, p.len, -EBADMSG);
	assert_true(mem.max_nmemb <= p.len);
	p.len = 0;
	put_status_head(&p, 0);
	pb_u32(&p, 1);
	put_ns(&p, &ns_ok);
	pb_u32(&p, 1000);
	put_link(&p, 1, 0);
	mem_reset();
	expect_fail(&codecs[C_status_reply], p.b, p.len, -EBADMSG);
	assert_true(mem.max_nmemb <= p.len);
}

static void rpmem_status_reply_decode__calloc_failure_is_enomem(void **state)
{
	(void)state;
	const struct codec *c = &codecs[C_status_reply];
	uint8_t buf[8192];
	size_t n = encode_sample(c, buf, sizeof(buf));
	/* fail the session, namespace, link array: nothing stays owned */
	for (int nth = 1; nth <= 3; nth++) {
		mem_reset();
		mem.fail_in = nth;
		expect_fail(c, buf, n, -ENOMEM);
		assert_int_equal(mem.calls, nth);
	}
}

static void rpmem_status_reply_free__twice_is_harmless(void **state)
{
	(void)state;
	const struct codec *c = &codecs[C_status_reply];
	uint8_t buf[8192];
	union any_msg m;
	size_t n = encode_sample(c, buf, sizeof(buf));
	expect_ok(c, buf, n, &m);
	rpmem_status_reply_free(&m.status_reply);
	assert_null(m.status_reply.sessions);
	assert_int_equal(m.status_reply.nsessions, 0);
	assert_null(m.status_reply.namespaces);
	assert_int_equal(m.status_reply.nnamespaces, 0);
	assert_null(m.status_reply.links);
	assert_int_equal(m.status_reply.nlinks, 0);
	rpmem_status_reply_free(&m.status_reply);
	assert_int_equal(mem_live(), 0);
}

/* --- ranges and errors --------------------------------------------------- */

static void rpmem_range_ok__edges(void **state)
{
	(void)state;
	assert_true(rpmem_range_ok(0, 0, 0));
	assert_false(rpmem_range_ok(0, 1, 0));
	assert_false(rpmem_range_ok(1, 0, 0));
	assert_true(rpmem_range_ok(0, 4096, 4096));
	assert_true(rpmem_range_ok(4096, 0, 4096)); /* empty, at the end */
	assert_false(rpmem_range_ok(4097, 0, 4096));
	assert_false(rpmem_range_ok(1, 4096, 4096));
	assert_false(rpmem_range_ok(4095, 2, 4096));
	assert_true(rpmem_range_ok(4095, 1, 4096));
	assert_true(rpmem_range_ok(0, UINT64_MAX, UINT64_MAX));
	assert_true(rpmem_range_ok(UINT64_MAX, 0, UINT64_MAX));
	assert_false(rpmem_range_ok(1, UINT64_MAX, UINT64_MAX));
	assert_false(rpmem_range_ok(UINT64_MAX, 1, UINT64_MAX));
	/* off + len wraps to a small number: still refused */
	assert_false(rpmem_range_ok(2, UINT64_MAX - 1, 4096));
	assert_false(rpmem_range_ok(UINT64_MAX, 2, 4096));
}

/* --- STATUS and the extended STATUS_REPLY ------------------------------- */

static void rpmem_status_encode__flags_only_when_set(void **state)
{
	(void)state;
	uint8_t b[8];
	struct rpmem_msg_status m = { 0 };
	assert_int_equal(rpmem_status_encode(b, sizeof(b), &m), 0);
	m.flags = RPMEM_STATUS_IDENTITY;
	assert_int_equal(rpmem_status_encode(b, sizeof(b), &m), 4);
	static const uint8_t want[4] = { 1, 0, 0, 0 };
	assert_memory_equal(b, want, sizeof(want));
}

static void rpmem_status_decode__empty_payload_is_no_flags(void **state)
{
	(void)state;
	union any_msg m;
	memset(&m, 0x5a, sizeof(m));
	expect_ok(&codecs[C_status], "", 0, &m);
	assert_int_equal(m.status.flags, 0);
}

static void rpmem_status_decode__bad_flags_are_ebadmsg(void **state)
{
	(void)state;
	const struct codec *c = &codecs[C_status];
	static const uint32_t bad[] = { 0, 1u << 2, 1u << 31, UINT32_MAX };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct pb p = { .len = 0 };
		pb_u32(&p, bad[i]);
		expect_fail(c, p.b, p.len, -EBADMSG);
	}
	struct pb p = { .len = 0 };
	pb_u32(&p, RPMEM_STATUS_IDENTITY);
	expect_fail(c, p.b, 2, -EBADMSG);
}

/* put_session_id -- a session entry of the extended layout */
static void put_session_id(struct pb *p, size_t id_len, uint8_t auth)
{
	pb_u32(p, 1);
	pb_rep(p, id_len);
	pb_u8(p, auth);
	pb_str(p, "10.0.0.1:1234");
	pb_str(p, "rpmemctl");
	pb_u8(p, RPMEM_XPORT_TCP);
	pb_rep(p, 0);
	pb_u8(p, RPMEM_OPEN_RO);
	for (int i = 0; i < 5; i++)
		pb_u64(p, (uint64_t)i);
}

static void rpmem_status_reply_decode__identity_limits_and_auth(void **state)
{
	(void)state;
	const struct codec *c = &codecs[C_status_reply_id];
	union any_msg m;
	struct pb p = { .len = 0 };
	put_status_head(&p, 1);
	put_session_id(&p, RPMEM_IDENTITY_MAX, RPMEM_AUTH_X509);
	put_no_ns(&p);
	expect_ok(c, p.b, p.len, &m);
	assert_int_equal(strlen(m.status_reply.sessions[0].identity),
			 RPMEM_IDENTITY_MAX);
	assert_int_equal(m.status_reply.sessions[0].auth, RPMEM_AUTH_X509);
	assert_string_equal(m.status_reply.sessions[0].peer, "10.0.0.1:1234");
	rpmem_status_reply_free(&m.status_reply);
	p.len = 0;
	put_status_head(&p, 1);
	put_session_id(&p, RPMEM_IDENTITY_MAX + 1, RPMEM_AUTH_PSK);
	put_no_ns(&p);
	expect_fail(c, p.b, p.len, -EBADMSG);
	p.len = 0;
	put_status_head(&p, 1);
	put_session_id(&p, 5, RPMEM_AUTH_MAX + 1);
	put_no_ns(&p);
	expect_fail(c, p.b, p.len, -EBADMSG);
}

/* a reply in one layout does not decode as the other */
static void rpmem_status_reply_decode__layouts_do_not_mix(void **state)
{
	(void)state;
	uint8_t buf[8192];
	size_t n = encode_sample(&codecs[C_status_reply_id], buf, sizeof(buf));
	expect_fail(&codecs[C_status_reply], buf, n, -EBADMSG);
	n = encode_sample(&codecs[C_status_reply], buf, sizeof(buf));
	expect_fail(&codecs[C_status_reply_id], buf, n, -EBADMSG);
	/* with no sessions the layouts agree */
	struct pb p = { .len = 0 };
	union any_msg m;
	put_status_head(&p, 0);
	put_no_ns(&p);
	expect_ok(&codecs[C_status_reply_id], p.b, p.len, &m);
	assert_int_equal(m.status_reply.flags, RPMEM_STATUS_IDENTITY);
	rpmem_status_reply_free(&m.status_reply);
}

static void rpmem_status_reply__unknown_flags_are_einval(void **state)
{
	(void)state;
	uint8_t buf[8192];
	union any_msg m;
	memset(&m, 0, sizeof(m));
	fill_status_reply(&m);
	m.status_reply.flags = 1u << 2;
	assert_int_equal(rpmem_status_reply_encode(buf, sizeof(buf),
						   &m.status_reply),
			 -EINVAL);
	size_t n = encode_sample(&codecs[C_status_reply], buf, sizeof(buf));
	assert_int_equal(rpmem_status_reply_decode_flags(buf, n, 1u << 2,
							 &m.status_reply),
			 -EINVAL);
}

static void rpmem_errno_from_err__denied_is_eperm(void **state)
{
	(void)state;
	assert_int_equal(rpmem_errno_from_err(RPMEM_E_DENIED), -EPERM);
	assert_string_equal(rpmem_err_str(RPMEM_E_DENIED),
			    "permission denied");
}

/* the codes only ever sent on purpose, never derived from an errno */
static int explicit_code(uint32_t code)
{
	return code == RPMEM_E_AUTH || code == RPMEM_E_VERSION ||
	       code == RPMEM_E_XPORT || code == RPMEM_E_INTERNAL ||
	       code == RPMEM_E_DENIED || code == RPMEM_E_DAMAGED;
}

static void rpmem_err_from_errno__round_trips_every_code(void **state)
{
	(void)state;
	int seen[RPMEM_E_MAX + 1];
	for (uint32_t code = 1; code <= RPMEM_E_MAX; code++) {
		int e = rpmem_errno_from_err(code);
		assert_true(e < 0);
		seen[code] = e;
		for (uint32_t k = 1; k < code; k++)
			assert_int_not_equal(seen[k], e);
		if (explicit_code(code))
			continue;
		assert_int_equal(rpmem_err_from_errno(e), code);
		assert_int_equal(rpmem_err_from_errno(-e), code);
	}
}

static void
rpmem_err_from_errno__explicit_codes_never_come_from_errno(void **state)
{
	(void)state;
	/* a target file's permission error is I/O, not failed authentication */
	assert_int_equal(rpmem_err_from_errno(-EACCES), RPMEM_E_IO);
	assert_int_equal(rpmem_err_from_errno(-EPERM), RPMEM_E_IO);
	assert_int_equal(rpmem_err_from_errno(-ENOTSUP), RPMEM_E_IO);
	assert_int_equal(rpmem_err_from_errno(-EPROTONOSUPPORT), RPMEM_E_IO);
	assert_int_equal(rpmem_err_from_errno(-EREMOTEIO), RPMEM_E_IO);
	for (int e = 0; e < 200; e++)
		assert_false(explicit_code(rpmem_err_from_errno(-e)));
}

/* what the pool store returns, as rpmemd reports it */
static void rpmem_err_from_errno__pool_store_errors(void **state)
{
	(void)state;
	assert_int_equal(rpmem_err_from_errno(-ENOENT), RPMEM_E_NOPOOL);
	assert_int_equal(rpmem_err_from_errno(-ENODEV), RPMEM_E_NOREGION);
	assert_int_equal(rpmem_err_from_errno(-EEXIST), RPMEM_E_EXISTS);
	assert_int_equal(rpmem_err_from_errno(-EBUSY), RPMEM_E_BUSY);
	assert_int_equal(rpmem_err_from_errno(-ENOSPC), RPMEM_E_NOSPACE);
	assert_int_equal(rpmem_err_from_errno(-EDQUOT), RPMEM_E_NOSPACE);
	assert_int_equal(rpmem_err_from_errno(-EINVAL), RPMEM_E_INVAL);
	assert_int_equal(rpmem_err_from_errno(-EFBIG), RPMEM_E_INVAL);
	assert_int_equal(rpmem_err_from_errno(-EROFS), RPMEM_E_RDONLY);
	assert_int_equal(rpmem_err_from_errno(-ENOMEM), RPMEM_E_LIMIT);
	assert_int_equal(rpmem_err_from_errno(-ENFILE), RPMEM_E_LIMIT);
	assert_int_equal(rpmem_err_from_errno(-EIO), RPMEM_E_IO);
}

static void rpmem_errno_from_err__unknown_code_is_eremoteio(void **state)
{
	(void)state;
	assert_int_equal(rpmem_errno_from_err(0), -EREMOTEIO);
	assert_int_equal(rpmem_errno_from_err(RPMEM_E_MAX + 1), -EREMOTEIO);
	assert_int_equal(rpmem_errno_from_err(UINT32_MAX), -EREMOTEIO);
}

static void rpmem_err_from_errno__unmapped_errnos(void **state)
{
	(void)state;
	assert_int_equal(rpmem_err_from_errno(-ENOMEM), RPMEM_E_LIMIT);
	assert_int_equal(rpmem_err_from_errno(-EMFILE), RPMEM_E_LIMIT);
	assert_int_equal(rpmem_err_from_errno(-ERANGE), RPMEM_E_INVAL);
	assert_int_equal(rpmem_err_from_errno(-EOVERFLOW), RPMEM_E_INVAL);
	assert_int_equal(rpmem_err_from_errno(-EDQUOT), RPMEM_E_NOSPACE);
	assert_int_equal(rpmem_err_from_errno(-EXDEV), RPMEM_E_IO);
	assert_int_equal(rpmem_err_from_errno(0), RPMEM_E_IO);
	/* every code maps to some wire code within range */
	for (int e = 0; e < 200; e++) {
		uint32_t c = rpmem_err_from_errno(-e);
		assert_in_range(c, 1, RPMEM_E_MAX);
	}
}

static void rpmem_err_str__names_every_code(void **state)
{
	(void)state;
	for (uint32_t c = 1; c <= RPMEM_E_MAX; c++) {
		assert_non_null(rpmem_err_str(c));
		assert_string_not_equal(rpmem_err_str(c), "unknown error");
		for (uint32_t k = 1; k < c; k++)
			assert_string_not_equal(rpmem_err_str(c),
						rpmem_err_str(k));
	}
	assert_string_equal(rpmem_err_str(0), "unknown error");
	assert_string_equal(rpmem_err_str(RPMEM_E_MAX + 1), "unknown error");
	for (uint16_t t = 1; t <= RPMEM_MSG_TYPE_MAX; t++)
		assert_string_not_equal(rpmem_msg_type_str(t), "UNKNOWN");
	assert_string_equal(rpmem_msg_type_str(0), "UNKNOWN");
	assert_string_equal(rpmem_msg_type_str(RPMEM_MSG_TYPE_MAX + 1),
			    "UNKNOWN");
	assert_string_equal(rpmem_msg_type_str(RPMEM_MSG_HELLO), "HELLO");
	assert_string_equal(rpmem_state_str(RPMEM_POOL_CONSISTENT),
			    "consistent");
	assert_string_equal(rpmem_state_str(3), "unknown");
	assert_string_equal(rpmem_xport_str(RPMEM_XPORT_AUTO), "auto");
	assert_string_equal(rpmem_xport_str(3), "unknown");
	assert_string_equal(rpmem_region_type_str(RPMEM_REGION_FSDAX),
			    "fsdax");
	assert_string_equal(rpmem_region_type_str(3), "unknown");
}

/* --- fuzz ---------------------------------------------------------------- */

#define FUZZ_ROUNDS 100000

/* fuzz_check -- decode b[n] with c; on success the result is sane */
static unsigned fuzz_ok[C_NUM];
static void fuzz_check(const struct codec *c, const uint8_t *b, size_t n)
{
	union any_msg m;
	mem_reset();
	int ret = c->dec(b, n, &m);
	/* a decoder never asks for more entries than there are bytes */
	assert_true(mem.max_nmemb <= (n ? n : 1));
	if (ret != 0) {
		assert_true(ret == -EBADMSG || ret == -ENOMEM);
		assert_int_equal(mem_live(), 0);
		return;
	}
	/* accepted input is canonical: re-encoding gives the same bytes */
	static uint8_t again[RPMEM_MAX_PAYLOAD];
	int n2 = c->enc(again, sizeof(again), &m);
	assert_int_equal(n2, (int)n);
	if (c == &codecs[C_error] && m.error.code == RPMEM_E_INTERNAL)
		assert_memory_equal(again + 4, b + 4, n - 4);
	else
		assert_memory_equal(again, b, n);
	if (c->fini)
		c->fini(&m);
	assert_int_equal(mem_live(), 0);
	fuzz_ok[c - codecs]++;
}

/* --- pages (RPMEM_CAP_PAGE) ---------------------------------------------- */

/*
 * test_page_request_truncation -- every proper prefix of a paged request
 * is -EBADMSG, but the one that is the request without flags (short)
 */
static void test_page_request_truncation(void **state)
{
	const struct codec *c = *state;
	uint8_t buf[8192];
	union any_msg m;
	size_t short_len = c == &codecs[C_list_page] ? 2 + strlen("pmem0") : 0;
	size_t n = encode_sample(c, buf, sizeof(buf));
	for (size_t l = 0; l < n; l++) {
		if (l != short_len) {
			expect_fail(c, buf, l, -EBADMSG);
			continue;
		}
		expect_ok(c, buf, l, &m);
		if (c == &codecs[C_list_page]) {
			assert_int_equal(m.list.flags, 0);
			assert_string_equal(m.list.cursor, "");
		} else {
			assert_int_equal(m.status.flags, 0);
		}
	}
}

static void rpmem_list_encode__flags_and_cursor_only_when_paged(void **state)
{
	(void)state;
	uint8_t b[512];
	struct rpmem_msg_list m = { .region = "r1" };
	assert_int_equal(rpmem_list_encode(b, sizeof(b), &m), 4);
	m.flags = RPMEM_LIST_PAGE;
	assert_int_equal(rpmem_list_encode(b, sizeof(b), &m), 4 + 4 + 2);
	static const uint8_t want[10] = { 2, 0, 'r', '1', 1, 0, 0, 0, 0, 0 };
	assert_memory_equal(b, want, sizeof(want));
	/* a cursor without the flag, or an unknown flag, is refused */
	m.flags = 0;
	strcpy(m.cursor, "r1/p");
	assert_int_equal(rpmem_list_encode(b, sizeof(b), &m), -EINVAL);
	m.flags = RPMEM_LIST_PAGE | (1u << 6);
	assert_int_equal(rpmem_list_encode(b, sizeof(b), &m), -EINVAL);
}

static void rpmem_list_decode__zero_or_unknown_flags_are_ebadmsg(void **state)
{
	(void)state;
	static const uint32_t bad[] = { 0, 1u << 6, 1u << 31, UINT32_MAX };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct pb p = { .len = 0 };
		pb_str(&p, "r1");
		pb_u32(&p, bad[i]);
		pb_str(&p, "");
		expect_fail(&codecs[C_list], p.b, p.len, -EBADMSG);
	}
	/* the flag without its cursor is short */
	struct pb p = { .len = 0 };
	pb_str(&p, "r1");
	pb_u32(&p, RPMEM_LIST_PAGE);
	expect_fail(&codecs[C_list], p.b, p.len, -EBADMSG);
}

static void rpmem_list_decode__cursor_of_255_ok_256_ebadmsg(void **state)
{
	(void)state;
	union any_msg m;
	struct pb p = { .len = 0 };
	pb_str(&p, "");
	pb_u32(&p, RPMEM_LIST_PAGE);
	pb_rep(&p, RPMEM_CURSOR_MAX);
	expect_ok(&codecs[C_list], p.b, p.len, &m);
	assert_int_equal(m.list.flags, RPMEM_LIST_PAGE);
	assert_int_equal(strlen(m.list.cursor), RPMEM_CURSOR_MAX);
	p.len = 0;
	pb_str(&p, "");
	pb_u32(&p, RPMEM_LIST_PAGE);
	pb_rep(&p, RPMEM_CURSOR_MAX + 1);
	expect_fail(&codecs[C_list], p.b, p.len, -EBADMSG);
	p.len = 0;
	pb_str(&p, "");
	pb_u32(&p, RPMEM_LIST_PAGE);
	pb_strn(&p, "r1\0p", 4);
	expect_fail(&codecs[C_list], p.b, p.len, -EBADMSG);
}

static void rpmem_list_reply_decode__page_layouts_do_not_mix(void **state)
{
	(void)state;
	uint8_t buf[8192];
	union any_msg m;
	/* a page read as a whole reply has trailing bytes, and back */
	size_t n = encode_sample(&codecs[C_list_reply_page], buf, sizeof(buf));
	expect_fail(&codecs[C_list_reply], buf, n, -EBADMSG);
	n = encode_sample(&codecs[C_list_reply], buf, sizeof(buf));
	expect_fail(&codecs[C_list_reply_page], buf, n, -EBADMSG);
	/* the last page: an empty next */
	struct pb p = { .len = 0 };
	pb_u32(&p, 0);
	pb_u32(&p, 0);
	pb_str(&p, "");
	expect_ok(&codecs[C_list_reply_page], p.b, p.len, &m);
	assert_int_equal(m.list_reply.flags, RPMEM_LIST_PAGE);
	assert_string_equal(m.list_reply.next, "");
	rpmem_list_reply_free(&m.list_reply);
	/* a next over its limit */
	p.len = 0;
	pb_u32(&p, 0);
	pb_u32(&p, 0);
	pb_rep(&p, RPMEM_CURSOR_MAX + 1);
	expect_fail(&codecs[C_list_reply_page], p.b, p.len, -EBADMSG);
}

static void rpmem_list_reply__unknown_flags_are_einval(void **state)
{
	(void)state;
	uint8_t buf[8192];
	union any_msg m;
	memset(&m, 0, sizeof(m));
	fill_list_reply(&m);
	m.list_reply.flags = 1u << 6;
	assert_int_equal(rpmem_list_reply_encode(buf, sizeof(buf),
						 &m.list_reply),
			 -EINVAL);
	size_t n = encode_sample(&codecs[C_list_reply], buf, sizeof(buf));
	assert_int_equal(rpmem_list_reply_decode_flags(buf, n, 1u << 6,
						       &m.list_reply),
			 -EINVAL);
}

/* RPMEM_LIST_UNDO: each pool entry ends with pending and its journal */
static void rpmem_list_reply__undo_layout_round_trips(void **state)
{
	(void)state;
	uint8_t buf[8192];
	union any_msg m, d;
	memset(&m, 0, sizeof(m));
	memset(&d, 0, sizeof(d));
	fill_list_reply(&m);
	size_t plain = encode_sample(&codecs[C_list_reply], buf, sizeof(buf));
	sample_pools[2].pending = 1;
	sample_pools[2].undo_generation = 41;
	sample_pools[2].undo_bytes = 1u << 20;
	m.list_reply.flags = RPMEM_LIST_UNDO;
	int n = rpmem_list_reply_encode(buf, sizeof(buf), &m.list_reply);
	assert_int_equal(n, (int)plain + 4 * 17);
	assert_int_equal(rpmem_list_reply_decode_flags(buf, (size_t)n,
						       RPMEM_LIST_UNDO,
						       &d.list_reply), 0);
	assert_int_equal(d.list_reply.pools[2].pending, 1);
	assert_int_equal(d.list_reply.pools[2].undo_generation, 41);
	assert_int_equal(d.list_reply.pools[2].undo_bytes, 1u << 20);
	assert_int_equal(d.list_reply.pools[1].pending, 0);
	rpmem_list_reply_free(&d.list_reply);
	/* the layouts do not mix; pending is 0 or 1 */
	assert_int_equal(rpmem_list_reply_decode_flags(buf, (size_t)n, 0,
						       &d.list_reply),
			 -EBADMSG);
	sample_pools[2].pending = 2;
	n = rpmem_list_reply_encode(buf, sizeof(buf), &m.list_reply);
	assert_int_equal(rpmem_list_reply_decode_flags(buf, (size_t)n,
						       RPMEM_LIST_UNDO,
						       &d.list_reply),
			 -EBADMSG);
	sample_pools[2].pending = 0;
	sample_pools[2].undo_generation = 0;
	sample_pools[2].undo_bytes = 0;
}

/* PRESERVE: 1 to 255 ranges of a byte or more that end below 2^64 */
static void rpmem_preserve__round_trip_and_bounds(void **state)
{
	(void)state;
	static struct rpmem_msg_preserve m, d;
	uint8_t buf[4096];
	m.handle = 3;
	m.nranges = RPMEM_MAX_PRESERVE_RANGES;
	for (uint32_t i = 0; i < m.nranges; i++)
		m.ranges[i] = (struct rpmem_preserve_range){ i * 8192ull, 4096 };
	int n = rpmem_preserve_encode(buf, sizeof(buf), &m);
	assert_int_equal(n, 8 + 16 * RPMEM_MAX_PRESERVE_RANGES);
	assert_int_equal(rpmem_preserve_decode(buf, (size_t)n, &d), 0);
	assert_int_equal(d.handle, 3);
	assert_int_equal(d.nranges, m.nranges);
	assert_memory_equal(d.ranges, m.ranges, sizeof(m.ranges));
	assert_int_equal(rpmem_preserve_decode(buf, (size_t)n - 1, &d),
			 -EBADMSG);
	m.nranges = 0;
	assert_int_equal(rpmem_preserve_encode(buf, sizeof(buf), &m),
			 -EMSGSIZE);
	m.nranges = 1;
	m.ranges[0] = (struct rpmem_preserve_range){ UINT64_MAX - 10, 11 };
	n = rpmem_preserve_encode(buf, sizeof(buf), &m);
	assert_int_equal(rpmem_preserve_decode(buf, (size_t)n, &d), -EBADMSG);
	m.ranges[0] = (struct rpmem_preserve_range){ 0, 0 };
	n = rpmem_preserve_encode(buf, sizeof(buf), &m);
	assert_int_equal(rpmem_preserve_decode(buf, (size_t)n, &d), -EBADMSG);
}

/* SET_STATE's rollback flag goes with state consistent only */
static void rpmem_set_state__rollback_only_to_consistent(void **state)
{
	(void)state;
	struct rpmem_msg_set_state m = { .handle = 1,
					 .state = RPMEM_POOL_CONSISTENT,
					 .flags = RPMEM_SET_STATE_ROLLBACK },
				   d;
	uint8_t buf[512];
	int n = rpmem_set_state_encode(buf, sizeof(buf), &m);
	assert_int_equal(rpmem_set_state_decode(buf, (size_t)n, &d), 0);
	assert_int_equal(d.flags, RPMEM_SET_STATE_ROLLBACK);
	m.state = RPMEM_POOL_SYNCING;
	n = rpmem_set_state_encode(buf, sizeof(buf), &m);
	assert_int_equal(rpmem_set_state_decode(buf, (size_t)n, &d), -EBADMSG);
}

/* SET_STATE's change: a u64 after the flags, with state syncing only */
static void rpmem_set_state__change_with_syncing_only(void **state)
{
	(void)state;
	struct rpmem_msg_set_state m = { .handle = 1,
					 .state = RPMEM_POOL_SYNCING,
					 .flags = RPMEM_SET_STATE_CHANGE,
					 .change = 0x0102030405060708ull },
				   d;
	uint8_t buf[512];
	struct pb p;
	strcpy(m.source, "src");
	set_state_payload(&p);
	pb_u32(&p, RPMEM_SET_STATE_CHANGE);
	pb_u64(&p, 0x0102030405060708ull);
	int n = rpmem_set_state_encode(buf, sizeof(buf), &m);
	assert_int_equal(n, (int)p.len);
	assert_memory_equal(buf, p.b, p.len);
	assert_int_equal(rpmem_set_state_decode(buf, (size_t)n, &d), 0);
	assert_int_equal(d.change, 0x0102030405060708ull);
	/* a torn u64, or a change without its flag, is malformed */
	assert_int_equal(rpmem_set_state_decode(buf, (size_t)n - 1, &d),
			 -EBADMSG);
	m.flags = RPMEM_SET_STATE_REPLY;
	n = rpmem_set_state_encode(buf, sizeof(buf), &m);
	assert_int_equal(rpmem_set_state_decode(buf, (size_t)n, &d), 0);
	assert_int_equal(d.change, 0);
	memcpy(buf + n, p.b + p.len - 8, 8);
	assert_int_equal(rpmem_set_state_decode(buf, (size_t)n + 8, &d),
			 -EBADMSG);
	m.flags = RPMEM_SET_STATE_CHANGE;
	m.state = RPMEM_POOL_CONSISTENT;
	n = rpmem_set_state_encode(buf, sizeof(buf), &m);
	assert_int_equal(rpmem_set_state_decode(buf, (size_t)n, &d), -EBADMSG);
}

static void rpmem_status_encode__cursor_only_when_paged(void **state)
{
	(void)state;
	uint8_t b[512];
	struct rpmem_msg_status m = { .flags = RPMEM_STATUS_PAGE };
	strcpy(m.cursor, "7");
	assert_int_equal(rpmem_status_encode(b, sizeof(b), &m), 4 + 3);
	static const uint8_t want[7] = { 2, 0, 0, 0, 1, 0, '7' };
	assert_memory_equal(b, want, sizeof(want));
	m.flags = RPMEM_STATUS_IDENTITY;
	assert_int_equal(rpmem_status_encode(b, sizeof(b), &m), -EINVAL);
	m.flags = 0;
	assert_int_equal(rpmem_status_encode(b, sizeof(b), &m), -EINVAL);
	m.flags = RPMEM_STATUS_PAGE | (1u << 2);
	assert_int_equal(rpmem_status_encode(b, sizeof(b), &m), -EINVAL);
}

static void rpmem_status_decode__page_carries_a_cursor(void **state)
{
	(void)state;
	const struct codec *c = &codecs[C_status];
	union any_msg m;
	struct pb p = { .len = 0 };
	pb_u32(&p, RPMEM_STATUS_PAGE);
	pb_str(&p, "42");
	expect_ok(c, p.b, p.len, &m);
	assert_int_equal(m.status.flags, RPMEM_STATUS_PAGE);
	assert_string_equal(m.status.cursor, "42");
	/* identity alone carries none: a cursor after it is trailing */
	p.len = 0;
	pb_u32(&p, RPMEM_STATUS_IDENTITY);
	pb_str(&p, "42");
	expect_fail(c, p.b, p.len, -EBADMSG);
	p.len = 0;
	pb_u32(&p, RPMEM_STATUS_PAGE);
	pb_rep(&p, RPMEM_CURSOR_MAX + 1);
	expect_fail(c, p.b, p.len, -EBADMSG);
}

static void rpmem_status_reply_decode__page_layouts_do_not_mix(void **state)
{
	(void)state;
	uint8_t buf[8192];
	union any_msg m;
	size_t n = encode_sample(&codecs[C_status_reply_page], buf,
				 sizeof(buf));
	expect_fail(&codecs[C_status_reply], buf, n, -EBADMSG);
	n = encode_sample(&codecs[C_status_reply], buf, sizeof(buf));
	expect_fail(&codecs[C_status_reply_page], buf, n, -EBADMSG);
	/* extended and paged at once: the identity entries and a next */
	memset(&m, 0, sizeof(m));
	fill_status_reply_id(&m);
	m.status_reply.flags |= RPMEM_STATUS_PAGE;
	strcpy(m.status_reply.next, "3");
	int len = rpmem_status_reply_encode(buf, sizeof(buf), &m.status_reply);
	assert_true(len > 0);
	union any_msg out;
	assert_int_equal(rpmem_status_reply_decode_flags(buf, (size_t)len,
							 RPMEM_STATUS_FLAGS,
							 &out.status_reply),
			 0);
	status_reply_cmp(&m.status_reply, &out.status_reply);
	rpmem_status_reply_free(&out.status_reply);
}

/*
 * fuzz: random buffers and mutated valid payloads through every decoder;
 * each buffer is an exactly sized heap block so valgrind sees overreads
 */
static void rpmem_decoders__survive_random_input(void **state)
{
	(void)state;
	static uint8_t tmpl[C_NUM][8192];
	size_t tlen[C_NUM];
	for (int i = 0; i < C_NUM; i++)
		tlen[i] = encode_sample(&codecs[i], tmpl[i], sizeof(tmpl[i]));
	srand(0x5eed);
	unsigned rounds = 0;
	for (int round = 0; round < FUZZ_ROUNDS; round++) {
		int t = rand() % (C_NUM + 4);
		size_t n;
		uint8_t *b;
		if (t >= C_NUM) {
			/* pure noise, often with a small leading count */
			n = (size_t)(rand() % 300);
			b = malloc(n ? n : 1);
			assert_non_null(b);
			for (size_t i = 0; i < n; i++)
				b[i] = (uint8_t)rand();
			if (n >= 2 && rand() % 2)
				b[1] = 0;
		} else {
			long d = rand() % 17 - 8;
			if (rand() % 4)
				d = 0;
			n = (size_t)((long)tlen[t] + d < 0 ? 0
							   : (long)tlen[t] + d);
			b = malloc(n ? n : 1);
			assert_non_null(b);
			for (size_t i = 0; i < n; i++)
				b[i] = i < tlen[t] ? tmpl[t][i]
						   : (uint8_t)rand();
			int flips = rand() % 4;
			for (int k = 0; k < flips && n; k++)
				b[(size_t)rand() % n] = (uint8_t)rand();
		}
		for (int i = 0; i < C_NUM; i++)
			fuzz_check(&codecs[i], b, n);
		free(b);
		rounds++;
	}
	assert_int_equal(rounds, FUZZ_ROUNDS);
	/* the mutations reach the end of every decoder, not just its start */
	for (int i = 0; i < C_NUM; i++)
		assert_true(fuzz_ok[i] > 100);
}

/* --- registration -------------------------------------------------------- */

#define GENERIC(n)                                                            \
	{ "rpmem_" #n "_decode__round_trips", test_round_trip, NULL, NULL,   \
	  (void *)&codecs[C_##n] },                                           \
	{ "rpmem_" #n "_decode__every_truncation_is_ebadmsg",                 \
	  test_truncation, NULL, NULL, (void *)&codecs[C_##n] },              \
	{ "rpmem_" #n "_decode__trailing_bytes_are_ebadmsg", test_trailing,  \
	  NULL, NULL, (void *)&codecs[C_##n] },                               \
	{ "rpmem_" #n "_encode__small_buffer_is_emsgsize", test_enc_small,   \
	  NULL, NULL, (void *)&codecs[C_##n] }

static int check_no_leak(void **state)
{
	(void)state;
	return mem_live() == 0 ? 0 : -1;
}

#define T(f) cmocka_unit_test_teardown(f, check_no_leak)

int main(void)
{
	const struct CMUnitTest tests[] = {
		GENERIC(hello), GENERIC(hello_ok), GENERIC(error),
		GENERIC(list), GENERIC(list_reply), GENERIC(create),
		GENERIC(remove), GENERIC(open), GENERIC(open_ok),
		GENERIC(handle), GENERIC(io), GENERIC(flush), GENERIC(hash),
		GENERIC(hashv), GENERIC(hashes), GENERIC(set_state),
		GENERIC(state), GENERIC(status_reply),
		GENERIC(status_reply_id),
		GENERIC(list_reply_page), GENERIC(status_reply_page),
		/* paged LIST and STATUS: a short prefix is the unpaged form */
		{ "rpmem_list_page_decode__round_trips", test_round_trip, NULL,
		  NULL, (void *)&codecs[C_list_page] },
		{ "rpmem_list_page_decode__every_truncation_is_ebadmsg_but_the_unpaged",
		  test_page_request_truncation, NULL, NULL,
		  (void *)&codecs[C_list_page] },
		{ "rpmem_list_page_decode__trailing_bytes_are_ebadmsg",
		  test_trailing, NULL, NULL, (void *)&codecs[C_list_page] },
		{ "rpmem_list_page_encode__small_buffer_is_emsgsize",
		  test_enc_small, NULL, NULL, (void *)&codecs[C_list_page] },
		{ "rpmem_status_page_decode__round_trips", test_round_trip,
		  NULL, NULL, (void *)&codecs[C_status_page] },
		{ "rpmem_status_page_decode__every_truncation_is_ebadmsg_but_the_unpaged",
		  test_page_request_truncation, NULL, NULL,
		  (void *)&codecs[C_status_page] },
		{ "rpmem_status_page_decode__trailing_bytes_are_ebadmsg",
		  test_trailing, NULL, NULL, (void *)&codecs[C_status_page] },
		{ "rpmem_status_page_encode__small_buffer_is_emsgsize",
		  test_enc_small, NULL, NULL, (void *)&codecs[C_status_page] },
		/* STATUS: an empty prefix is a valid STATUS without flags */
		{ "rpmem_status_decode__round_trips", test_round_trip, NULL,
		  NULL, (void *)&codecs[C_status] },
		{ "rpmem_status_decode__trailing_bytes_are_ebadmsg",
		  test_trailing, NULL, NULL, (void *)&codecs[C_status] },
		{ "rpmem_status_encode__small_buffer_is_emsgsize",
		  test_enc_small, NULL, NULL, (void *)&codecs[C_status] },
		T(rpmem_hdr_encode__writes_magic_and_le_fields),
		T(rpmem_hdr_decode__every_type_round_trips),
		T(rpmem_hdr_decode__bad_magic_is_ebadmsg),
		T(rpmem_hdr_decode__unknown_type_is_enotsup),
		T(rpmem_hdr_decode__oversize_len_is_emsgsize),
		T(rpmem_list_decode__name_of_64_ok_65_ebadmsg),
		T(rpmem_list_decode__empty_region_means_all),
		T(rpmem_list_decode__embedded_nul_is_ebadmsg),
		T(rpmem_create_decode__long_or_nul_names_are_ebadmsg),
		T(rpmem_hello_decode__ver_min_above_ver_max_is_ebadmsg),
		T(rpmem_hello_decode__client_and_auth_limits),
		T(rpmem_hello_encode__auth_len_over_256_is_emsgsize),
		T(rpmem_hello_ok_decode__server_too_long_is_ebadmsg),
		T(rpmem_error_decode__unknown_code_becomes_internal),
		T(rpmem_error_decode__message_of_1024_ok_1025_ebadmsg),
		T(rpmem_remove_decode__unknown_flag_is_ebadmsg),
		T(rpmem_open_decode__bad_mode_or_xport_is_ebadmsg),
		T(rpmem_open_ok_decode__bad_state_xport_blob_is_ebadmsg),
		T(rpmem_open_ok_encode__blob_over_max_is_emsgsize),
		T(rpmem_io_decode__len_over_max_io_is_ebadmsg),
		T(rpmem_io_decode__offset_plus_len_overflow_is_ebadmsg),
		T(rpmem_flush_decode__offset_plus_len_overflow_is_ebadmsg),
		T(rpmem_hash_decode__block_size_must_be_pow2_512_to_64m),
		T(rpmem_hash_decode__count_0_or_over_max_is_ebadmsg),
		T(rpmem_hash_decode__offset_plus_range_overflow_is_ebadmsg),
		T(rpmem_hashv_decode__nranges_0_or_over_max_is_ebadmsg),
		T(rpmem_hashv_encode__largest_is_under_4k),
		T(rpmem_hashv_decode__nranges_must_match_payload),
		T(rpmem_hashv_decode__count_0_is_ebadmsg),
		T(rpmem_hashv_decode__sum_of_counts_over_max_is_ebadmsg),
		T(rpmem_hashv_decode__block_size_must_be_pow2_512_to_64m),
		T(rpmem_hashv_decode__offset_plus_range_overflow_is_ebadmsg),
		T(rpmem_hashes_decode__count_must_match_payload),
		T(rpmem_hashes_decode__count_over_max_is_ebadmsg),
		T(rpmem_hashes_encode__count_over_max_is_emsgsize),
		T(rpmem_set_state_decode__bad_state_is_ebadmsg),
		T(rpmem_set_state_encode__flags_only_when_set),
		T(rpmem_set_state_decode__flags_are_optional),
		T(rpmem_set_state_decode__partial_or_long_flags_are_ebadmsg),
		T(rpmem_set_state_decode__unknown_flag_is_ebadmsg),
		T(rpmem_set_state_decode__note_only_with_reply),
		T(rpmem_state__note_round_trip),
		T(rpmem_state_decode__bad_state_is_ebadmsg),
		T(rpmem_kick_decode__nonzero_flags_is_ebadmsg),
		T(rpmem_scrub_decode__bounds),
		T(rpmem_scrub_reply__round_trip_and_bad_values),
		T(rpmem_events_decode__unknown_flags_are_ebadmsg),
		T(rpmem_event_decode__round_trips_every_field),
		T(rpmem_event_decode__verb_object_state_out_of_range_are_ebadmsg),
		T(rpmem_list_reply_decode__empty_lists_round_trip),
		T(rpmem_list_reply_decode__bad_region_type_is_ebadmsg),
		T(rpmem_list_reply_decode__bad_pool_state_is_ebadmsg),
		T(rpmem_list_reply_decode__long_name_in_entry_is_ebadmsg),
		T(rpmem_list_reply_decode__huge_count_fails_before_allocating),
		T(rpmem_list_reply_decode__calloc_failure_is_enomem),
		T(rpmem_status_reply_decode__bad_session_fields_are_ebadmsg),
		T(rpmem_status_reply_decode__namespace_string_limits),
		T(rpmem_status_reply_decode__namespace_mode_numa_link),
		T(rpmem_status_reply__too_many_entries),
		T(rpmem_status_reply_decode__huge_count_fails_before_allocating),
		T(rpmem_status_reply_decode__calloc_failure_is_enomem),
		T(rpmem_status_reply_free__twice_is_harmless),
		T(rpmem_status_encode__flags_only_when_set),
		T(rpmem_status_decode__empty_payload_is_no_flags),
		T(rpmem_status_decode__bad_flags_are_ebadmsg),
		T(rpmem_status_reply_decode__identity_limits_and_auth),
		T(rpmem_status_reply_decode__layouts_do_not_mix),
		T(rpmem_status_reply__unknown_flags_are_einval),
		T(rpmem_errno_from_err__denied_is_eperm),
		T(rpmem_range_ok__edges),
		T(rpmem_err_from_errno__round_trips_every_code),
		T(rpmem_errno_from_err__unknown_code_is_eremoteio),
		T(rpmem_err_from_errno__unmapped_errnos),
		T(rpmem_err_from_errno__explicit_codes_never_come_from_errno),
		T(rpmem_err_from_errno__pool_store_errors),
		T(rpmem_err_str__names_every_code),
		T(rpmem_list_encode__flags_and_cursor_only_when_paged),
		T(rpmem_versions__round_trips_and_bounds),
		T(rpmem_gen__round_trips_and_bounds),
		T(rpmem_list_reply__generations_layout_round_trips),
		T(rpmem_list_reply__damaged_layout_round_trips),
		T(rpmem_list_reply__split_layout_round_trips),
		T(rpmem_read__flags_optional_and_checked),
		T(rpmem_list_decode__zero_or_unknown_flags_are_ebadmsg),
		T(rpmem_list_decode__cursor_of_255_ok_256_ebadmsg),
		T(rpmem_list_reply_decode__page_layouts_do_not_mix),
		T(rpmem_list_reply__unknown_flags_are_einval),
		T(rpmem_list_reply__undo_layout_round_trips),
		T(rpmem_preserve__round_trip_and_bounds),
		T(rpmem_set_state__rollback_only_to_consistent),
		T(rpmem_set_state__change_with_syncing_only),
		T(rpmem_status_encode__cursor_only_when_paged),
		T(rpmem_status_decode__page_carries_a_cursor),
		T(rpmem_status_reply_decode__page_layouts_do_not_mix),
		T(rpmem_decoders__survive_random_input),
	};
	return cmocka_run_group_tests_name("proto", tests, NULL, NULL);
}
