/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdma_reorder.h -- a target that persists GPSPM batch requests out of
 * order, on purpose: built into build/tests/rpmemd-rdma-reorder only
 * (rdma_target.c compiled with -DRPMEM_RDMA_TEST_REORDER), never into
 * rpmemd. A batch it receives is answered at once, before it is
 * persisted (the reply overtakes the writes), and gets every other
 * 64-byte line of each of its entries but the first stored and
 * persisted, as caches that evict lines in any order would; the rest
 * waits until REORDER_MAX later batches came, then the batch is applied
 * in full and in order. A connection lost meanwhile drops what waits:
 * the application was told of commits the pool lacks, and the pool holds
 * parts of transactions without their undo logs, what a target that
 * reorders persistence and its answers leaves after a crash. The
 * rdma-preload suite's SIGKILL loop must find it
 * (tests/vm/suites/rdma-preload.bats).
 */
#ifndef RPMEM_RDMA_REORDER_H
#define RPMEM_RDMA_REORDER_H

#define REORDER_MAX 64
#define REORDER_LINE 64

struct reorder {
	uint8_t buf[REORDER_MAX][RDMA_REQ_SLOT]; /* the batches held, a ring */
	uint32_t len[REORDER_MAX];
	unsigned first, n;
};

/* reorder_get -- the exposure's reorder state, made on first use */
static struct reorder *reorder_get(struct rpmem_rdma_expo *e)
{
	if (!e->ro) {
		e->ro = calloc(1, sizeof(*e->ro));
		if (e->ro)
			WARN("rdma: TEST BUILD: GPSPM requests answered before they are persisted, persisted out of order");
	}
	return e->ro;
}

/* reorder_release -- apply the oldest held batch in full, in order */
static void reorder_release(struct rpmem_rdma_expo *e)
{
	struct reorder *ro = e->ro;
	uint32_t seq = 0;

	(void)expo_serve(e, ro->buf[ro->first], ro->len[ro->first], &seq);
	ro->first = (ro->first + 1) % REORDER_MAX;
	ro->n--;
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

/*
 * reorder_request -- the request answered at once, in part persisted,
 * held (the oldest held one applied when the ring is full)
 */
static int reorder_request(struct rpmem_rdma_expo *e, unsigned slot,
			   uint32_t byte_len)
{
	const uint8_t *p = e->msg + RDMA_SRV_RECV_OFF(slot);
	struct reorder *ro = reorder_get(e);
	unsigned i;
	int ret;

	if (!ro)
		return -ENOMEM;
	if (ro->n == REORDER_MAX)
		reorder_release(e);
	reorder_lines(e, p, byte_len);
	i = (ro->first + ro->n++) % REORDER_MAX;
	memcpy(ro->buf[i], p, byte_len);
	ro->len[i] = byte_len;
	ret = expo_repost(e, slot);
	return ret ? ret : expo_reply(e, le32_get(ro->buf[i] + 4), 0);
}

#endif
