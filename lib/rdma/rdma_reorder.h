/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdma_reorder.h -- a target that persists GPSPM batch requests out of
 * order, on purpose: built into build/tests/rpmemd-rdma-reorder only
 * (rdma_target.c compiled with -DRPMEM_RDMA_TEST_REORDER), never into
 * rpmemd. A batch it receives gets every other 64-byte line of each of
 * its entries but the first stored and persisted at once, as caches
 * that evict lines in any order would; the batch is then held for
 * REORDER_HOLD_MS (or until the next request arrives), applied in full
 * and in order, and only then answered (the initiator is never told of
 * a write that is not in the pool). A connection lost within the hold
 * leaves those lines in the pool without the first entry: in a
 * libpmemobj transaction part of its data without its undo log, what a
 * target that reorders persistence leaves after a crash. The
 * rdma-preload suite's SIGKILL loop must find it
 * (tests/vm/suites/rdma-preload.bats).
 */
#ifndef RPMEM_RDMA_REORDER_H
#define RPMEM_RDMA_REORDER_H

#define REORDER_HOLD_MS 1000
#define REORDER_LINE 64

struct reorder {
	uint8_t buf[RDMA_REQ_SLOT]; /* the held request */
	uint32_t len;
	int held;
	uint64_t since_ns;
};

/* reorder_get -- the exposure's reorder state, made on first use */
static struct reorder *reorder_get(struct rpmem_rdma_expo *e)
{
	if (!e->ro) {
		e->ro = calloc(1, sizeof(*e->ro));
		if (e->ro)
			WARN("rdma: TEST BUILD: GPSPM requests persisted out of order");
	}
	return e->ro;
}

/* reorder_release -- apply the held request in full, in order; answer */
static int reorder_release(struct rpmem_rdma_expo *e)
{
	struct reorder *ro = e->ro;
	uint32_t seq = 0;
	int status;

	if (!ro || !ro->held)
		return 0;
	ro->held = 0;
	status = expo_serve(e, ro->buf, ro->len, &seq);
	return expo_reply(e, seq, status);
}

/* reorder_lines -- every other line of the entries after the first */
static void reorder_lines(struct rpmem_rdma_expo *e, const uint8_t *p,
			  uint32_t byte_len)
{
	uint32_t n, pos = RDMA_REQB_LEN;

	if (byte_len < RDMA_REQB_LEN || le32_get(p) != RDMA_REQB_MAGIC)
		return;
	n = le32_get(p + 8);
	for (uint32_t i = 0; i < n && byte_len - pos >= RDMA_ENT_LEN; i++) {
		uint64_t off = le64_get(p + pos), len = le32_get(p + pos + 8);
		int data = le32_get(p + pos + 12) & RDMA_ENT_DATA;
		uint64_t padded = data ? (len + 7) & ~7ull : 0;

		pos += RDMA_ENT_LEN;
		if (padded > byte_len - pos)
			return;
		for (uint64_t o = off; i && data && o < off + len;) {
			uint64_t end = (o / REORDER_LINE + 1) * REORDER_LINE;

			if (end > off + len)
				end = off + len;
			if (!(o / REORDER_LINE % 2))
				(void)expo_persist(e, o, end - o,
						   p + pos + (o - off));
			o = end;
		}
		pos += (uint32_t)padded;
	}
}

/* reorder_request -- the held one applied; this one in part, held */
static int reorder_request(struct rpmem_rdma_expo *e, unsigned slot,
			   uint32_t byte_len)
{
	const uint8_t *p = e->msg + RDMA_SRV_RECV_OFF(slot);
	struct reorder *ro = reorder_get(e);
	int ret;

	if (!ro)
		return -ENOMEM;
	if ((ret = reorder_release(e)))
		return ret;
	reorder_lines(e, p, byte_len);
	memcpy(ro->buf, p, byte_len);
	ro->len = byte_len;
	ro->held = 1;
	ro->since_ns = rpmem_now_ns();
	return expo_repost(e, slot);
}

/* reorder_timeout_ms -- the poll timeout: the rest of the hold */
static int reorder_timeout_ms(struct rpmem_rdma_expo *e)
{
	uint64_t held;

	if (!e->ro || !e->ro->held)
		return -1;
	held = (rpmem_now_ns() - e->ro->since_ns) / 1000000;
	return held >= REORDER_HOLD_MS ? 0 : (int)(REORDER_HOLD_MS - held);
}

#endif
