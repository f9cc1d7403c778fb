/* SPDX-License-Identifier: BSD-3-Clause */
/* maps.c -- which address ranges of the process map configured files */
#include <errno.h>
#include <string.h>

#include "preload.h"

/*
 * A fixed table, read without a lock by every flush: a slot is published
 * by storing its end, offset and file first and its start last (release);
 * a lookup loads the start first (acquire). A slot is retired by setting
 * its start to 0. Writers (mmap, munmap) take maps_lock. Unmapping a
 * range while another thread flushes it is the application's bug, as
 * without this library.
 */
struct pl_map {
	atomic_uintptr_t start; /* 0 = free */
	atomic_uintptr_t end;
	uint64_t off;		/* file offset of start */
	struct pl_file *f;
};

static struct pl_map maps[PL_MAPS_MAX];
static pthread_mutex_t maps_lock = PTHREAD_MUTEX_INITIALIZER;
atomic_uint pl_nmaps; /* slots 0 .. pl_nmaps - 1 may be in use */

/* put -- publish a slot; maps_lock held. Returns 0 or -ENOSPC */
static int put(uintptr_t start, uintptr_t end, uint64_t off, struct pl_file *f)
{
	unsigned n = atomic_load(&pl_nmaps);
	unsigned i;
	for (i = 0; i < n; i++)
		if (!atomic_load(&maps[i].start))
			break;
	if (i == PL_MAPS_MAX)
		return -ENOSPC;
	maps[i].off = off;
	maps[i].f = f;
	atomic_store(&maps[i].end, end);
	atomic_store_explicit(&maps[i].start, start, memory_order_release);
	if (i == n)
		atomic_store(&pl_nmaps, n + 1);
	return 0;
}

/* pl_maps_add -- [addr, addr + len) maps f from file offset off */
int pl_maps_add(void *addr, size_t len, uint64_t off, struct pl_file *f)
{
	pthread_mutex_lock(&maps_lock);
	int ret = put((uintptr_t)addr, (uintptr_t)addr + len, off, f);
	pthread_mutex_unlock(&maps_lock);
	return ret;
}

/*
 * pl_maps_remove -- forget [addr, addr + len): slots inside it go, slots
 * overlapping it shrink, a slot around it splits in two
 */
void pl_maps_remove(void *addr, size_t len)
{
	uintptr_t lo = (uintptr_t)addr, hi = lo + len;
	pthread_mutex_lock(&maps_lock);
	unsigned n = atomic_load(&pl_nmaps);
	for (unsigned i = 0; i < n; i++) {
		uintptr_t s = atomic_load(&maps[i].start);
		uintptr_t e = atomic_load(&maps[i].end);
		if (!s || e <= lo || s >= hi)
			continue;
		uint64_t off = maps[i].off;
		struct pl_file *f = maps[i].f;
		atomic_store(&maps[i].start, 0);
		/* the parts left on either side; a full table drops them */
		if (s < lo)
			(void)put(s, lo, off, f);
		if (e > hi)
			(void)put(hi, e, off + (hi - s), f);
	}
	pthread_mutex_unlock(&maps_lock);
}

/* pl_maps_lookup -- the pieces of [addr, addr + len) in configured files */
unsigned pl_maps_lookup(const void *addr, size_t len, struct pl_hit *hits,
			unsigned max)
{
	uintptr_t lo = (uintptr_t)addr, hi = lo + len;
	unsigned n = atomic_load_explicit(&pl_nmaps, memory_order_acquire);
	unsigned k = 0;
	for (unsigned i = 0; i < n && k < max; i++) {
		uintptr_t s = atomic_load_explicit(&maps[i].start,
						   memory_order_acquire);
		if (!s)
			continue;
		uintptr_t e = atomic_load(&maps[i].end);
		if (e <= lo || s >= hi)
			continue;
		uintptr_t a = lo > s ? lo : s;
		uintptr_t b = hi < e ? hi : e;
		struct pl_file *f = maps[i].f;
		uint64_t off = maps[i].off + (a - s);
		/* a mapping may reach past the end of the file */
		if (off >= f->size)
			continue;
		uint64_t l = b - a;
		if (l > f->size - off)
			l = f->size - off;
		hits[k++] = (struct pl_hit){ f, off, l };
	}
	return k;
}

/* pl_maps_forget_all -- a forked child replicates nothing */
void pl_maps_forget_all(void)
{
	/* the child has one thread: no lock (another may have held it) */
	atomic_store(&pl_nmaps, 0);
	memset(maps, 0, sizeof(maps));
}
