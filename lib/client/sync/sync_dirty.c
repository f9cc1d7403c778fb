/* SPDX-License-Identifier: BSD-3-Clause */
/* sync_dirty.c -- a push whose dirty log may stand in for the compare */
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "sync_int.h"
#include "util.h"

/*
 * same_source -- the pool's recorded source is src, or "src (live)": the
 * preload library's mark while it replicates src's writes as they happen
 * (docs/ARCHITECTURE.md, "Continuous replication"), which its dirty log
 * covers too
 */
static int same_source(const char *recorded, const char *src)
{
	size_t n = strlen(src);

	if (strncmp(recorded, src, n))
		return 0;
	return !recorded[n] || !strcmp(recorded + n, " (live)");
}

/*
 * recorded_source -- the pool's source as the target's LIST records it
 * (into src, "" if unknown)
 */
static void recorded_source(struct sync_ctx *c, char *src, size_t len)
{
	struct rpmemctl_list *ls = NULL;
	struct rpmemctl_pool *p = c->p;

	src[0] = 0;
	if (rpmemctl_list_get(c->s, p->region, &ls))
		return;
	for (unsigned i = 0; i < rpmemctl_list_pool_count(ls); i++)
		if (!strcmp(rpmemctl_list_pool_name(ls, i), p->name))
			rpmem_strlcpy(src, rpmemctl_list_pool_source(ls, i),
				      len);
	rpmemctl_list_free(&ls);
}

/*
 * cut_since -- the log is bound to this pool at an older generation, and
 * the pool is syncing with our own live source: only the target's cuts
 * of our live stream into versions (rpmemctl versions --create) moved
 * the generation since, and every write since the binding was ours and
 * marked (another writer's sync would have recorded its own source or
 * made the pool consistent)
 */
static int cut_since(struct sync_ctx *c)
{
	const struct rpmemctl_dirtylog *l = c->o->dirty_log;
	struct rpmemctl_pool *p = c->p;
	uint64_t gen = client_dirtylog_generation(l);
	char src[RPMEM_STR_MAX + 1], live[RPMEM_STR_MAX + 1];

	if (p->state != RPMEM_POOL_SYNCING || !c->o->source ||
	    gen >= p->generation || !client_dirtylog_bound(l, p->uuid, gen))
		return 0;
	snprintf(live, sizeof(live), "%s (live)", c->o->source);
	recorded_source(c, src, sizeof(src));
	return !strcmp(src, live);
}

/*
 * dirty_usable -- the dirty log of the push may stand in for the
 * comparison: the pool is the one and at the generation the log is
 * relative to (or a later one its own live stream was cut at), and if it
 * is syncing, this source marked it so (another writer interrupted
 * mid-sync leaves it syncing at the same generation). 1 if so, else 0
 * with the reason in the result.
 */
static int dirty_usable(struct sync_ctx *c)
{
	const struct rpmemctl_dirtylog *l = c->o->dirty_log;
	struct rpmemctl_pool *p = c->p;
	char *why = c->st.dirty_fallback;
	size_t wl = sizeof(c->st.dirty_fallback);
	uint64_t ext = client_dirtylog_extent(l);
	char src[RPMEM_STR_MAX + 1];

	if (client_dirtylog_nextents(l) != (c->size + ext - 1) / ext) {
		snprintf(why, wl, "the dirty log is for a pool of another size");
		return 0;
	}
	if (!client_dirtylog_clean(l)) {
		snprintf(why, wl, "the dirty log has no clean mark (its writer "
			 "crashed or still runs)");
		return 0;
	}
	if (cut_since(c))
		return 1;
	if (!client_dirtylog_bound(l, p->uuid, p->generation)) {
		if (client_dirtylog_bound(l, p->uuid,
					  client_dirtylog_generation(l)))
			snprintf(why, wl, "the dirty log is relative to "
				 "generation %llu, the pool is at %llu",
				 (unsigned long long)
					 client_dirtylog_generation(l),
				 (unsigned long long)p->generation);
		else
			snprintf(why, wl, "the dirty log is not relative to "
				 "this pool");
		return 0;
	}
	if (p->state == RPMEM_POOL_CONSISTENT || c->o->syncing_ours)
		return 1;
	if (p->state == RPMEM_POOL_SYNCING && c->o->source) {
		recorded_source(c, src, sizeof(src));
		if (same_source(src, c->o->source))
			return 1;
	}
	snprintf(why, wl, "the pool is %s and another source may have "
		 "written to it", rpmem_state_str(p->state));
	return 0;
}

/* dirty_ranges -- the marked extents as the ranges to send */
static int dirty_ranges(struct sync_ctx *c)
{
	const struct rpmemctl_dirtylog *l = c->o->dirty_log;
	uint64_t ext = client_dirtylog_extent(l);
	uint64_t last_block = UINT64_MAX;

	const uint8_t *x = c->o->extents;

	/* a resync's: the ranges written since its last pass, in order */
	for (size_t i = 0; !x && i < c->o->nranges; i++) {
		const struct client_range *r = &c->o->ranges[i];
		int ret = sync_ranges_add(&c->diff, r->off, r->len);
		if (ret)
			return ret;
		c->st.bytes_differ += r->len;
		c->st.blocks_differ += (r->off + r->len - 1) / c->bs -
				       r->off / c->bs + 1;
	}
	if (!x && c->o->ranges)
		return 0;
	for (uint64_t e = 0; e < client_dirtylog_nextents(l); e++) {
		if (x ? !((x[e / 8] >> (e % 8)) & 1) :
			!client_dirtylog_marked(l, e))
			continue;
		uint64_t off = e * ext;
		uint64_t len = off + ext > c->size ? c->size - off : ext;
		int ret = sync_ranges_add(&c->diff, off, len);
		if (ret)
			return ret;
		c->st.bytes_differ += len;
		for (uint64_t b = off / c->bs; b <= (off + len - 1) / c->bs;
		     b++)
			if (b != last_block) {
				c->st.blocks_differ++;
				last_block = b;
			}
	}
	return 0;
}

/*
 * sync_push_dirty -- a push with a dirty log: only its extents if it may stand
 * in for the comparison, else the full comparison; then the log is bound
 * to the pool's generation and cleared. 0 or -errno.
 */
int sync_push_dirty(struct sync_ctx *c)
{
	int ret;

	/* a resync's later passes and its catch-up: what its passes left */
	if (c->o->extents || c->o->ranges ||
	    (!c->o->compare_all && dirty_usable(c))) {
		ret = dirty_ranges(c);
		c->dirty_standin = !ret;
		if (!ret)
			ret = sync_push(c);
		c->st.dirty_only = !ret;
	} else {
		ret = sync_compare(c);
		if (!ret)
			ret = sync_push(c);
	}
	if (!ret)
		ret = sync_local_check(c, "sync");
	/* a resync's pass leaves the pool syncing and the log as it is */
	if (ret || c->o->resync_pass)
		return ret;
	/* a log without the clean mark is its writer's to clear */
	if (!client_dirtylog_clean(c->o->dirty_log))
		return 0;
	/* the two copies are equal now: what the log says is void */
	ret = client_dirtylog_reset(c->o->dirty_log, c->p->uuid,
				    c->p->generation);
	if (ret)
		client_log(c->s, LOG_WARNING, "cannot clear the dirty log: "
			   "%s; the next sync compares everything",
			   strerror(-ret));
	return 0;
}
