/* SPDX-License-Identifier: BSD-3-Clause */
/* sync_ctx.c -- shared by a sync's phases: ranges, progress, the local copy */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "hash.h"
#include "util.h"
#include "sync_int.h"

#define PROGRESS_NS 100000000ull /* at most ~10 progress calls a second */

/*
 * sync_ranges_add -- append [off, off + len), merged with an adjacent last
 * range
 */
int sync_ranges_add(struct ranges *r, uint64_t off, uint64_t len)
{
	if (r->n && r->v[r->n - 1].off + r->v[r->n - 1].len == off) {
		r->v[r->n - 1].len += len;
		return 0;
	}
	if (r->n == r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 64;
		struct range *v = realloc(r->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		r->v = v;
		r->cap = cap;
	}
	r->v[r->n++] = (struct range){ off, len };
	return 0;
}

/* sync_diff_add -- [off, off + len) differs: into c->diff, counted; -ENOMEM */
int sync_diff_add(struct sync_ctx *c, uint64_t off, uint64_t len)
{
	if (sync_ranges_add(&c->diff, off, len)) {
		client_seterr(c->s, "out of memory");
		return -ENOMEM;
	}
	c->st.bytes_differ += len;
	return 0;
}

/* sync_progress -- report at most every PROGRESS_NS, or now if force */
void sync_progress(struct sync_ctx *c, uint64_t done, uint64_t total,
		   int force)
{
	if (!c->o->progress)
		return;
	uint64_t now = rpmem_now_ns();
	if (!force && now - c->last_progress < PROGRESS_NS)
		return;
	c->last_progress = now;
	c->o->progress(done, total, c->o->progress_arg);
}

/* sync_phase -- log (debug) how long the phase that just ended took */
void sync_phase(struct sync_ctx *c, const char *what)
{
	uint64_t now = rpmem_now_ns(), from = c->t_phase ? c->t_phase : c->t0;
	c->t_phase = now;
	client_log(c->s, LOG_DEBUG, "sync of pool '%s': %s in %.1f ms (%.1f ms in all)",
		   c->p->name, what, (double)(now - from) / 1e6,
		   (double)(now - c->t0) / 1e6);
}

/*
 * sync_local_hash_range -- the hashes of the bs-blocks of [off, off + len)
 * of the local copy on one thread: read from its file where the caller
 * named one (as the coarse pass does: the mapping's pages are then never
 * faulted in for hashing), else from the mapping
 */
int sync_local_hash_range(struct sync_ctx *c, uint64_t off, uint64_t len,
			  uint32_t bs, uint64_t *hashes)
{
	if (c->watch)
		return rpmem_hash_fd_blocks(c->o->local_fd, off, len, bs,
					    hashes, 1);
	return rpmem_hash_blocks(c->local + off, (size_t)len, bs, hashes, 1);
}

/*
 * sync_local_fault -- hashing the local copy faulted (guard.h): say so;
 * the connection is fine
 */
int sync_local_fault(struct sync_ctx *c, int err)
{
	if (err == -EHWPOISON)
		client_seterr(c->s, "a media error (poisoned memory) in the local copy while it was read");
	else if (err != -EFAULT)
		client_seterr(c->s, "cannot read the local copy: %s",
			      strerror(-err));
	else
		client_seterr(c->s, "the local copy changed while it was read: part of it is no longer backed by its file (it shrank)");
	return err;
}

/* ts_differ -- two timestamps differ */
static int ts_differ(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec != b->tv_sec || a->tv_nsec != b->tv_nsec;
}

/*
 * sync_local_check -- the local copy's file (if the caller named it) is as
 * it was when the sync began: same size, and for anything but a pull
 * (which writes it) same mtime and ctime; else -ESTALE. A file that shrank
 * and grew back has another ctime.
 */
int sync_local_check(struct sync_ctx *c, const char *what)
{
	struct stat st;
	char how[RPMEM_MSG_MAX];

	if (!c->watch)
		return 0;
	if (fstat(c->o->local_fd, &st)) {
		int e = errno;
		client_seterr(c->s, "cannot stat the local file: %s",
			      strerror(e));
		return -e;
	}
	if (st.st_size != c->st0.st_size || (uint64_t)st.st_size != c->size)
		snprintf(how, sizeof(how), "its size is now %llu bytes, not %llu",
			 (unsigned long long)st.st_size,
			 (unsigned long long)c->size);
	else if (c->o->mode != RPMEMCTL_SYNC_PULL &&
		 (ts_differ(&st.st_mtim, &c->st0.st_mtim) ||
		  ts_differ(&st.st_ctim, &c->st0.st_ctim)))
		snprintf(how, sizeof(how), "it was modified or truncated");
	else
		return 0;
	client_seterr(c->s, "the local file changed during the %s (%s)", what,
		      how);
	return -ESTALE;
}
