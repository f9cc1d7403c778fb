/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * reorder.c -- a deliberately broken rpmemd for tests only (built as
 * build/tests/rpmemd-reorder with -DRPMEMD_TEST_REORDER; the product
 * rpmemd compiles none of this): a target that does not apply a session's
 * writes in the order of its barriers. It holds every WRITE and applies
 * them at the next FLUSH, so whatever an awaited FLUSH covered is there
 * once it is answered, as with a correct target. With
 * RPMEMD_REORDER_CRASH_AT=N in its environment it crashes (SIGKILL to
 * itself) at the Nth FLUSH having persisted only part of the epoch (the
 * writes between two BARRIERs) before the last it held: in a transaction
 * part of its data without its undo log or its commit, an image the
 * ordered-drain argument forbids, where a correct target crashing at any
 * point leaves a prefix of the stream. tests/bats/preload.bats runs its crash check against this build
 * to show that the check finds what a broken order leaves.
 */
#ifdef RPMEMD_TEST_REORDER
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "session_int.h"
#include "store.h"

struct held {
	const struct rpmemd_session *s;
	uint32_t handle;
	uint64_t off;
	uint32_t len;
	unsigned epoch; /* BARRIERs of its session before it since the FLUSH */
	uint8_t *data;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct held *held;
static size_t nheld, cap;
static unsigned epoch; /* of the session writing (one in the tests) */

/* reorder_take -- hold a WRITE's data: 1 if held, or -errno */
int reorder_take(struct rpmemd_session *s, uint32_t handle, uint64_t off,
		 uint32_t len)
{
	uint8_t *d = malloc(len ? len : 1);
	if (!d)
		return -ENOMEM;
	int ret = rpmem_net_read_full(&s->conn, d, len);
	pthread_mutex_lock(&lock);
	if (!ret && nheld == cap) {
		size_t c = cap ? 2 * cap : 256;
		struct held *n = realloc(held, c * sizeof(*n));
		ret = n ? 0 : -ENOMEM;
		if (n) {
			held = n;
			cap = c;
		}
	}
	if (!ret)
		held[nheld++] = (struct held){ s, handle, off, len, epoch, d };
	pthread_mutex_unlock(&lock);
	if (ret)
		free(d);
	return ret ? ret : 1;
}

/* apply -- write one held range into its pool (mapping or file) */
static void apply(struct rpmemd_session *s, const struct held *w)
{
	struct rpmemd_handle *h = handle_get(s, w->handle);
	if (!h)
		return;
	if (h->by_file) {
		if (pwrite(rpmemd_pool_fd(h->pool), w->data, w->len,
			   (off_t)w->off) < 0)
			WARN("reorder: pwrite: %s", strerror(errno));
	} else {
		memcpy(rpmemd_pool_addr(h->pool) + w->off, w->data, w->len);
	}
	(void)rpmemd_pool_persist_guarded(h->pool, w->off, w->len);
}

/* reorder_barrier -- a BARRIER of s: its later writes are a new epoch */
void reorder_barrier(struct rpmemd_session *s)
{
	(void)s;
	pthread_mutex_lock(&lock);
	epoch++;
	pthread_mutex_unlock(&lock);
}

/* crash_now -- this FLUSH is the one RPMEMD_REORDER_CRASH_AT names */
static int crash_now(void)
{
	static unsigned long flushes;
	const char *at = getenv("RPMEMD_REORDER_CRASH_AT");
	return at && ++flushes == strtoul(at, NULL, 10);
}

/*
 * crash -- persist only the first half (in cache lines) of each write of
 * the epoch before the last held (in a transaction: the first lines of
 * its data, without its undo log before them or its commit after) and die,
 * as a target that persisted out of order and lost the rest would; a
 * correct target crashing there would hold the undo log first
 */
static void crash(struct rpmemd_session *s)
{
	unsigned last = 0;
	size_t n = 0;
	for (size_t i = 0; i < nheld; i++)
		if (held[i].s == s && held[i].epoch > last)
			last = held[i].epoch;
	for (size_t i = 0; i < nheld; i++) {
		struct held w = held[i];
		if (w.s != s || w.epoch + 1 != last)
			continue;
		uint32_t half = w.len / 128 * 64;
		w.len = half ? half : w.len;
		apply(s, &w);
		n++;
	}
	WARN("reorder: crashing at this FLUSH with the first half of %zu "
	     "writes of epoch %u of %u persisted, nothing before or after", n,
	     last ? last - 1 : 0, last);
	raise(SIGKILL);
}

/*
 * reorder_apply -- a FLUSH (end 0) or the end of s (1): apply s's held
 * writes in order (or crash if RPMEMD_REORDER_CRASH_AT says so)
 */
void reorder_apply(struct rpmemd_session *s, int end)
{
	pthread_mutex_lock(&lock);
	if (!end && crash_now())
		crash(s);
	size_t o = 0;
	for (size_t i = 0; i < nheld; i++) {
		if (held[i].s == s) {
			apply(s, &held[i]);
			free(held[i].data);
		} else {
			held[o++] = held[i];
		}
	}
	nheld = o;
	epoch = 0;
	pthread_mutex_unlock(&lock);
}
#endif
