/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdma_blob.c -- unit tests of the OPEN_OK transport blob's decoder
 * (lib/rdma/rdma_common.c): it parses bytes the target sent, so every
 * truncation, trailing byte and out-of-range field is refused
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "rdma_int.h"

#define POOL_SIZE (8ull << 20)

/* a_blob -- a valid v2 blob with a 20-byte descriptor */
static void a_blob(struct rdma_blob *b)
{
	memset(b, 0, sizeof(*b));
	b->version = RDMA_BLOB_VERSION_TLS;
	b->mode = RDMA_MODE_APM;
	b->flags = 1;
	strcpy(b->port, "7637");
	for (unsigned i = 0; i < RPMEM_TOKEN_LEN; i++)
		b->token[i] = (uint8_t)(0xa0 + i);
	b->size = POOL_SIZE;
	b->desc_len = 20;
	for (unsigned i = 0; i < b->desc_len; i++)
		b->desc[i] = (uint8_t)i;
}

/* encoded -- b on the wire into buf; its length */
static size_t encoded(const struct rdma_blob *b, uint8_t *buf, size_t cap)
{
	size_t len = 0;
	assert_int_equal(rdma_blob_encode(b, buf, cap, &len), 0);
	return len;
}

static void rdma_blob__a_round_trip_keeps_every_field(void **st)
{
	struct rdma_blob in, out;
	uint8_t buf[256];
	(void)st;

	a_blob(&in);
	size_t len = encoded(&in, buf, sizeof(buf));
	memset(&out, 0xff, sizeof(out));
	assert_int_equal(rdma_blob_decode(buf, len, POOL_SIZE, &out), 0);
	assert_int_equal(out.version, in.version);
	assert_int_equal(out.mode, in.mode);
	assert_int_equal(out.flags, in.flags);
	assert_string_equal(out.port, in.port);
	assert_memory_equal(out.token, in.token, RPMEM_TOKEN_LEN);
	assert_int_equal(out.size, in.size);
	assert_int_equal(out.desc_len, in.desc_len);
	assert_memory_equal(out.desc, in.desc, in.desc_len);
}

static void rdma_blob__every_truncation_is_eproto(void **st)
{
	struct rdma_blob in, out;
	uint8_t buf[256];
	(void)st;

	a_blob(&in);
	size_t len = encoded(&in, buf, sizeof(buf));
	for (size_t n = 0; n < len; n++)
		assert_int_equal(rdma_blob_decode(buf, n, POOL_SIZE, &out),
				 -EPROTO);
}

static void rdma_blob__a_trailing_byte_is_eproto(void **st)
{
	struct rdma_blob in, out;
	uint8_t buf[256];
	(void)st;

	a_blob(&in);
	size_t len = encoded(&in, buf, sizeof(buf));
	buf[len] = 0;
	assert_int_equal(rdma_blob_decode(buf, len + 1, POOL_SIZE, &out),
			 -EPROTO);
}

static void rdma_blob__an_unknown_version_is_eproto(void **st)
{
	struct rdma_blob in, out;
	uint8_t buf[256];
	(void)st;

	a_blob(&in);
	size_t len = encoded(&in, buf, sizeof(buf));
	buf[0] = 3; /* u16 version, little-endian */
	assert_int_equal(rdma_blob_decode(buf, len, POOL_SIZE, &out),
			 -EPROTO);
	in.version = 3;
	size_t l2 = 0;
	assert_int_equal(rdma_blob_encode(&in, buf, sizeof(buf), &l2),
			 -EINVAL);
}

static void rdma_blob__an_unknown_mode_is_eproto(void **st)
{
	struct rdma_blob in, out;
	uint8_t buf[256];
	(void)st;

	a_blob(&in);
	in.mode = 2;
	size_t len = encoded(&in, buf, sizeof(buf));
	assert_int_equal(rdma_blob_decode(buf, len, POOL_SIZE, &out),
			 -EPROTO);
}

static void rdma_blob__a_port_not_all_digits_or_empty_is_eproto(void **st)
{
	static const char *bad[] = { "", "76a", "-1", " 80", "80 " };
	struct rdma_blob in, out;
	uint8_t buf[256];
	(void)st;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		a_blob(&in);
		strcpy(in.port, bad[i]);
		size_t len = encoded(&in, buf, sizeof(buf));
		assert_int_equal(rdma_blob_decode(buf, len, POOL_SIZE, &out),
				 -EPROTO);
	}
}

static void rdma_blob__a_port_longer_than_15_is_eproto(void **st)
{
	struct rdma_blob in, out;
	uint8_t buf[256];
	(void)st;

	a_blob(&in);
	size_t len = encoded(&in, buf, sizeof(buf));
	/* port length is at offset 4 (u16 version, u8 mode, u8 flags) */
	uint8_t big[300];
	size_t plen = RDMA_PORT_MAX + 1, head = 4;
	size_t old = buf[4] | (size_t)buf[5] << 8;
	memcpy(big, buf, head);
	big[4] = (uint8_t)plen;
	big[5] = 0;
	memset(big + 6, '7', plen);
	memcpy(big + 6 + plen, buf + 6 + old, len - 6 - old);
	assert_int_equal(rdma_blob_decode(big, len - old + plen, POOL_SIZE,
					  &out),
			 -EPROTO);
}

static void rdma_blob__a_descriptor_over_64_bytes_is_eproto(void **st)
{
	struct rdma_blob in, out;
	uint8_t buf[256];
	(void)st;

	a_blob(&in);
	size_t len = encoded(&in, buf, sizeof(buf));
	/* the descriptor length is the u16 before the 20 descriptor bytes */
	size_t at = len - in.desc_len - 2;
	uint8_t big[256];
	memcpy(big, buf, at);
	big[at] = RDMA_DESC_MAX + 1;
	big[at + 1] = 0;
	memset(big + at + 2, 0x5a, RDMA_DESC_MAX + 1);
	assert_int_equal(rdma_blob_decode(big, at + 2 + RDMA_DESC_MAX + 1,
					  POOL_SIZE, &out),
			 -EPROTO);
}

static void rdma_blob__a_size_other_than_the_pool_s_is_eproto(void **st)
{
	struct rdma_blob in, out;
	uint8_t buf[256];
	(void)st;

	a_blob(&in);
	size_t len = encoded(&in, buf, sizeof(buf));
	assert_int_equal(rdma_blob_decode(buf, len, POOL_SIZE - 4096, &out),
			 -EPROTO);
	assert_int_equal(rdma_blob_decode(buf, len, POOL_SIZE + 4096, &out),
			 -EPROTO);
}

static void rdma_blob__encode_into_a_short_buffer_is_enobufs(void **st)
{
	struct rdma_blob in;
	uint8_t buf[256];
	size_t len = 0;
	(void)st;

	a_blob(&in);
	size_t need = encoded(&in, buf, sizeof(buf));
	assert_int_equal(rdma_blob_encode(&in, buf, need - 1, &len),
			 -ENOBUFS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(rdma_blob__a_round_trip_keeps_every_field),
		cmocka_unit_test(rdma_blob__every_truncation_is_eproto),
		cmocka_unit_test(rdma_blob__a_trailing_byte_is_eproto),
		cmocka_unit_test(rdma_blob__an_unknown_version_is_eproto),
		cmocka_unit_test(rdma_blob__an_unknown_mode_is_eproto),
		cmocka_unit_test(
			rdma_blob__a_port_not_all_digits_or_empty_is_eproto),
		cmocka_unit_test(rdma_blob__a_port_longer_than_15_is_eproto),
		cmocka_unit_test(
			rdma_blob__a_descriptor_over_64_bytes_is_eproto),
		cmocka_unit_test(
			rdma_blob__a_size_other_than_the_pool_s_is_eproto),
		cmocka_unit_test(
			rdma_blob__encode_into_a_short_buffer_is_enobufs),
	};
	return cmocka_run_group_tests_name("rdma_blob", tests, NULL, NULL);
}
