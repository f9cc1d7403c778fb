/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * store_undo.c -- atomic syncs: the pool store's use of the undo journal
 * (undo.h): started when a sync marks a consistent pool syncing, filled
 * before blocks are overwritten, discarded at the commit, applied by a
 * rollback, found again after a crash
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include "backend.h"
#include "guard.h"
#include "journal.h"
#include "journal_int.h"
#include "log.h"
#include "store.h"
#include "undo.h"
#include "util.h"

/* QUOTA_TEXT_MAX -- room for each part of a quota refusal's message */
#define QUOTA_TEXT_MAX 160

#define LIVE_SUFFIX " (live)"

/* undo_dir -- the directory of the region's journals, or -ENOTSUP */
static int undo_dir(const struct rpmemd_region *r)
{
	return r->ops->undo_dir ? r->ops->undo_dir(r) : -ENOTSUP;
}

/* journal_dir -- the path of the region's journal directory, for messages */
static void journal_dir(const struct rpmemd_region *r, char *buf, size_t len)
{
	if (r->undofd >= 0)
		rpmem_strlcpy(buf, r->undo_path, len);
	else
		snprintf(buf, len, "%s/%s", r->cfg.path, RPMEMD_META_DIR);
}

/* is_live -- source names a live replica (preload, replica API) */
static int is_live(const char *source)
{
	size_t n = source ? strlen(source) : 0, s = strlen(LIVE_SUFFIX);
	return n >= s && !strcmp(source + n - s, LIVE_SUFFIX);
}

void rpmemd_store_undo_open(struct rpmemd_pool *p)
{
	struct rpmemd_pool_journal *j = journal_of(p);
	struct rpmemd_undo *u = NULL;
	int dfd = undo_dir(p->region);
	int ret;

	if (dfd < 0)
		return;
	if (p->meta.state != RPMEM_POOL_SYNCING) {
		/* a commit or rollback that crashed before the unlink */
		rpmemd_undo_unlink(dfd, p->name);
		return;
	}
	ret = rpmemd_undo_load(dfd, p->name, p->meta.uuid, p->size, &u);
	if (ret == -ENOENT)
		return;
	if (ret == -EPERM) { /* someone else's: not ours to remove either */
		ERR("region '%s': pool '%s': its undo journal is not rpmemd's own (see above): it is not applied and left in place; the pool cannot be rolled back",
		    p->region->cfg.name, p->name);
		return;
	}
	if (!ret && rpmemd_undo_generation(u) == p->meta.generation) {
		NOTICE("region '%s': pool '%s': an interrupted sync: %llu blocks of generation %llu kept in its undo journal (roll back or sync again)",
		       p->region->cfg.name, p->name,
		       (unsigned long long)rpmemd_undo_blocks(u),
		       (unsigned long long)p->meta.generation);
		j->undo = u;
		return;
	}
	WARN("region '%s': pool '%s': its undo journal is %s; removing it",
	     p->region->cfg.name, p->name,
	     ret ? strerror(-ret) : "bound to another generation");
	rpmemd_undo_close(&u);
	rpmemd_undo_unlink(dfd, p->name);
}

/*
 * journal_need -- the most a journal of a sync writing change bytes takes:
 * its header, and each 4 KiB block with a record head of its own (runs of
 * blocks share one; librpmemctl's ranges are 4 KiB-aligned)
 */
static uint64_t journal_need(uint64_t change)
{
	uint64_t blocks = (change + RPMEMD_UNDO_BS - 1) / RPMEMD_UNDO_BS;
	return RPMEMD_UNDO_HDR + blocks * (RPMEMD_UNDO_BS + RPMEMD_UNDO_REC);
}

/* region_free -- the bytes an unprivileged writer may still take at dfd */
static uint64_t region_free(int dfd)
{
	struct statvfs sv;
	if (fstatvfs(dfd, &sv))
		return UINT64_MAX; /* unknown: the write-time check stays */
	return (uint64_t)sv.f_bavail * sv.f_frsize;
}

/* record_bytes -- the size of pool's scrub record (kept with its version) */
static uint64_t record_bytes(const struct rpmemd_pool *p)
{
	const struct rpmemd_journal_history *history = journal_history();

	return history ? history->record_bytes(p) : 0;
}

/* the regions' ver_reserved and their pools' (keep_fits) */
static pthread_mutex_t reserve_lock = PTHREAD_MUTEX_INITIALIZER;

void rpmemd_store_undo_unreserve(struct rpmemd_pool *p)
{
	struct rpmemd_pool_journal *j = journal_of(p);

	pthread_mutex_lock(&reserve_lock);
	p->region->ver_reserved -= j->ver_reserved;
	j->ver_reserved = 0;
	pthread_mutex_unlock(&reserve_lock);
}

/*
 * reserve -- the version of p's sync (ver bytes, leaves: of p's oldest
 * in its floor, which its commit moves out) fits versions_quota beside
 * the floors and what the other syncs under way reserved: reserved for
 * it until its journal ends (rpmemd_store_undo_unreserve); else 0 with
 * *need and *others the numbers
 */
static int reserve(struct rpmemd_pool *p, uint64_t ver, uint64_t *need,
		   uint64_t *floor, uint64_t *others)
{
	struct rpmemd_pool_journal *j = journal_of(p);
	struct rpmemd_region *r = p->region;
	struct rpmemd_vspace s;
	int ok;

	pthread_mutex_lock(&reserve_lock);
	journal_versions_space(r, p->name, &s);
	*floor = s.floor - s.leaves;
	*others = r->ver_reserved - j->ver_reserved;
	*need = ver + *floor + *others;
	ok = *need <= r->cfg.versions_quota;
	if (ok) {
		uint64_t grow = ver > s.leaves ? ver - s.leaves : 0;
		r->ver_reserved += grow;
		j->ver_reserved += grow;
	}
	pthread_mutex_unlock(&reserve_lock);
	return ok;
}

/*
 * keep_fits -- a sync of p writing change bytes (its journal up to need,
 * avail free; undeclared: it did not say, and change is the pool's size)
 * can keep the image it replaces within the region's versions_quota with
 * only the floors left (each pool's newest versions_floor, its own newest
 * versions_floor - 1 then) and the versions the other syncs under way
 * will keep (reserved, as this one's is then until its journal ends);
 * else -ENOSPC with the numbers in err, unless the region says
 * versions_full = "prune"
 */
static int keep_fits(struct rpmemd_pool *p, uint64_t change, int undeclared,
		     uint64_t need, uint64_t avail, char *err, size_t errlen)
{
	struct rpmemd_region *r = p->region;
	uint64_t ver = need + record_bytes(p), total, floor, others;
	char what[QUOTA_TEXT_MAX], res[QUOTA_TEXT_MAX] = "";

	if (!r->cfg.versions || !r->cfg.versions_quota ||
	    r->cfg.versions_full_prune)
		return 0;
	if (reserve(p, ver, &total, &floor, &others))
		return 0;
	if (undeclared)
		snprintf(what, sizeof(what),
			 "a sync that does not say how much it will write (an older client, an import) may write all %llu bytes of it and",
			 (unsigned long long)change);
	else
		snprintf(what, sizeof(what), "a sync of %llu bytes",
			 (unsigned long long)change);
	if (others)
		snprintf(res, sizeof(res),
			 ", with the %llu bytes the versions of the syncs of other pools under way may take,",
			 (unsigned long long)others);
	snprintf(err, errlen,
		 "pool '%s' stays consistent, nothing was pruned: %s would keep the image it replaces as a version of up to %llu bytes; with the newest %u versions of each pool that space never prunes (versions_floor%s: %llu bytes)%s region '%s' needs %llu bytes, more than its versions_quota of %llu (%llu bytes free); raise versions_quota, prune versions (rpmemctl versions --prune) or set versions_full = \"prune\"",
		 p->name, what, (unsigned long long)ver,
		 r->cfg.versions_floor ? r->cfg.versions_floor : 1,
		 r->cfg.versions_min_age ?
			 ", and those kept within versions_min_age" :
			 "",
		 (unsigned long long)floor, res, r->cfg.name,
		 (unsigned long long)total,
		 (unsigned long long)r->cfg.versions_quota,
		 (unsigned long long)avail);
	WARN("region '%s': %s", r->cfg.name, err);
	return -ENOSPC;
}

/*
 * make_room -- a sync will write change bytes: it can keep the image it
 * replaces (keep_fits), and the region has room for its journal. Only a
 * region with versions_full = "prune" prunes versions for it (the oldest
 * first, never a pool's floor); otherwise, or when even that would not
 * make room, -ENOSPC with the numbers in err (nothing is pruned then):
 * free space another region or program took never costs versions. A
 * sync that did not say what it will write is checked against the quota
 * as one of the whole pool (a live replica's, whose end no one knows, is
 * not), its journal's room as it is written
 */
static int make_room(struct rpmemd_pool *p, int dfd, const char *source,
		     uint64_t change, char *err, size_t errlen)
{
	struct rpmemd_region *r = p->region;
	uint64_t avail = region_free(dfd);
	uint64_t need = change == RPMEMD_CHANGE_UNDECLARED ?
				0 :
				journal_need(change);
	int prune = r->cfg.versions && r->cfg.versions_full_prune;
	struct rpmemd_vspace s = { 0 };
	int ret;

	if (change == RPMEMD_CHANGE_UNDECLARED)
		return is_live(source) ? 0 :
					 keep_fits(p, p->size, 1,
						   journal_need(p->size), avail,
						   err, errlen);
	if (!change)
		return 0;
	if ((ret = keep_fits(p, change, 0, need, avail, err, errlen)))
		return ret;
	if (need <= avail)
		return 0;
	if (r->cfg.versions)
		journal_versions_space(r, p->name, &s);
	uint64_t give = prune ? s.all - s.floor : 0;
	if (avail == UINT64_MAX || need > avail + give) {
		snprintf(err, errlen,
			 "pool '%s' stays consistent: a sync of %llu bytes needs up to %llu bytes for its undo journal, region '%s' (%s) has %llu bytes free and %llu bytes of versions that could give way (versions_quota %llu%s)",
			 p->name, (unsigned long long)change,
			 (unsigned long long)need, r->cfg.name, r->cfg.path,
			 (unsigned long long)avail, (unsigned long long)give,
			 (unsigned long long)r->cfg.versions_quota,
			 r->cfg.versions && !prune ?
				 "; its versions never give way to free space (versions_full = \"refuse\"): nothing was pruned" :
				 "");
		if (r->cfg.versions)
			WARN("region '%s': %s", r->cfg.name, err);
		return -ENOSPC;
	}
	while (need > avail && !rpmemd_journal_reclaim(p))
		avail = region_free(dfd);
	NOTICE("region '%s': pool '%s': a sync of %llu bytes needs up to %llu bytes for its undo journal; the region's oldest versions were pruned first (%llu bytes free now)",
	       r->cfg.name, p->name, (unsigned long long)change,
	       (unsigned long long)need, (unsigned long long)avail);
	return 0;
}

int rpmemd_store_undo_begin(struct rpmemd_pool *p, const char *source,
			    uint64_t change, char *err, size_t errlen)
{
	struct rpmemd_pool_journal *j = journal_of(p);
	int dfd = undo_dir(p->region);
	char dir[RPMEM_STR_MAX + 16];
	int ret;

	/*
	 * a sync of a consistent pool; a live replica keeps no journal
	 * unless its region keeps versions (its start image is one)
	 */
	if (dfd < 0 || j->undo || p->meta.state != RPMEM_POOL_CONSISTENT ||
	    (is_live(source) && !p->region->cfg.versions))
		return 0;
	if ((ret = make_room(p, dfd, source, change, err, errlen))) {
		rpmemd_store_undo_unreserve(p);
		return ret;
	}
	ret = rpmemd_undo_create(dfd, p->name, p->meta.uuid, p->size,
				 p->meta.generation, p->meta.source, &j->undo);
	if (!ret)
		return 0;
	rpmemd_store_undo_unreserve(p);
	journal_dir(p->region, dir, sizeof(dir));
	snprintf(err, errlen,
		 "pool '%s' stays consistent: cannot start its undo journal (%s/%s%s): %s",
		 p->name, dir, p->name, RPMEMD_UNDO_SUFFIX, strerror(-ret));
	return ret;
}

void rpmemd_store_undo_end(struct rpmemd_pool *p)
{
	struct rpmemd_pool_journal *j = journal_of(p);
	int dfd = undo_dir(p->region);

	rpmemd_store_undo_unreserve(p);
	if (!j->undo || dfd < 0)
		return;
	INFO("region '%s': pool '%s': its undo journal of generation %llu (%llu blocks, %llu bytes) removed",
	     p->region->cfg.name, p->name,
	     (unsigned long long)rpmemd_undo_generation(j->undo),
	     (unsigned long long)rpmemd_undo_blocks(j->undo),
	     (unsigned long long)rpmemd_undo_bytes(j->undo));
	rpmemd_undo_close(&j->undo);
	int ret = rpmemd_undo_unlink(dfd, p->name);
	if (ret)
		WARN("region '%s': pool '%s': cannot remove its undo journal (removed at its next open): %s",
		     p->region->cfg.name, p->name, strerror(-ret));
}

void rpmemd_store_undo_keep(struct rpmemd_pool *p,
			    const struct rpmemd_meta *was)
{
	const struct rpmemd_journal_history *history = journal_history();
	struct rpmemd_pool_journal *j = journal_of(p);
	int ret;

	if (!j->undo || !p->region->cfg.versions)
		return rpmemd_store_undo_end(p);
	ret = history ? history->keep(p, was) : -ENOTSUP;
	if (ret) {
		WARN("region '%s': pool '%s': cannot keep generation %llu as a version (older versions of it will be removed): %s",
		     p->region->cfg.name, p->name,
		     (unsigned long long)was->generation, strerror(-ret));
		return rpmemd_store_undo_end(p);
	}
	INFO("region '%s': pool '%s': generation %llu kept as a version (%llu blocks, %llu bytes)",
	     p->region->cfg.name, p->name,
	     (unsigned long long)was->generation,
	     (unsigned long long)rpmemd_undo_blocks(j->undo),
	     (unsigned long long)rpmemd_undo_bytes(j->undo));
	rpmemd_undo_close(&j->undo);
	rpmemd_store_undo_unreserve(p); /* its version is counted now */
}

/* the ranges one preserve saves, for the guard */
struct save_args {
	struct rpmemd_pool *p;
	const struct rpmem_preserve_range *v;
	uint32_t n;
};

/* save_ranges -- rpmemd_undo_save of each range (the guard's body) */
static int save_ranges(void *arg)
{
	struct save_args *a = arg;
	int ret = 0;
	for (uint32_t i = 0; i < a->n && !ret; i++)
		ret = rpmemd_undo_save(journal_of(a->p)->undo, a->p->addr,
				       a->v[i].offset, a->v[i].len);
	return ret;
}

/*
 * queue_wait -- until the journal thread has neither queued nor in flight
 * any of the n ranges of v (their records durable, or dropped by a
 * failure), and with all, until it is idle; undo_lock held
 */
static void queue_wait(struct rpmemd_pool *p,
		       const struct rpmem_preserve_range *v, uint32_t n,
		       int all)
{
	struct rpmemd_pool_journal *j = journal_of(p);

	for (uint32_t i = 0; j->uq && i < n; i++)
		while (rpmemd_undo_queue_holds(j->uq, v[i].offset, v[i].len))
			pthread_cond_wait(&j->undo_cond, &j->undo_lock);
	while (all && j->uq && rpmemd_undo_queue_holds(j->uq, 0, UINT64_MAX))
		pthread_cond_wait(&j->undo_cond, &j->undo_lock);
}

int rpmemd_pool_preserve(struct rpmemd_pool *p,
			 const struct rpmem_preserve_range *v, uint32_t n)
{
	struct rpmemd_pool_journal *j = journal_of(p);
	struct save_args a = { p, v, n };
	uint32_t i;
	int ret = 0;

	pthread_mutex_lock(&j->undo_lock);
	if (j->swap) {
		/* a dense sync into a new file: nothing to journal */
		ret = rpmemd_store_swap_prepare(p, v, n);
		goto out;
	}
	queue_wait(p, v, n, 0);
	if (j->undo && (ret = rpmemd_undo_queue_err(j->uq)))
		goto out;
	for (i = 0; j->undo && i < n; i++)
		if (!rpmemd_undo_covered(j->undo, v[i].offset, v[i].len))
			break;
	if (j->undo && i < n) {
		/* the journal is ours alone while we append to it */
		queue_wait(p, v, n, 1);
		a.v += i;
		a.n -= i;
		ret = rpmem_guard_run(save_ranges, &a);
		/* versions give way to a sync's journal: the oldest first */
		while (ret == -ENOSPC && !rpmemd_journal_reclaim(p))
			ret = rpmem_guard_run(save_ranges, &a);
		if (!ret)
			ret = rpmemd_undo_sync(j->undo);
	}
out:
	pthread_mutex_unlock(&j->undo_lock);
	if (ret && rpmemd_pool_swapping(p))
		rpmem_log(ret == -ENOSPC ? LOG_WARNING : LOG_ERR,
			  "region '%s': pool '%s': cannot copy the old blocks around a write into the dense sync's new file (.rpmemd/%s.next): %s",
			  p->region->cfg.name, p->name, p->name,
			  strerror(-ret));
	else if (ret)
		rpmem_log(ret == -ENOSPC ? LOG_WARNING : LOG_ERR,
			  "region '%s': pool '%s': cannot keep the blocks a write overwrites in its undo journal: %s",
			  p->region->cfg.name, p->name, strerror(-ret));
	return ret;
}

/* a restore's copy, for the guard */
struct restore_args {
	struct rpmemd_pool *p;
	uint64_t off;
	const void *data;
	uint64_t len;
};

/* restore_copy -- the old data back into the mapping, persisted */
static int restore_copy(void *arg)
{
	struct restore_args *a = arg;
	memcpy(a->p->addr + a->off, a->data, a->len);
	return rpmemd_pool_persist(a->p, a->off, a->len);
}

/* restore -- one record back into the pool; its hashes forgotten */
static int restore(void *arg, uint64_t off, const void *data, uint64_t len)
{
	struct restore_args a = { arg, off, data, len };
	struct rpmemd_pool *p = arg;
	int ret = rpmemd_hcache_write_begin(p->hc, off, len);
	if (ret)
		return ret;
	ret = rpmem_guard_run(restore_copy, &a);
	rpmemd_hcache_write_end(p->hc, off, len);
	return ret;
}

/* rollback_meta -- the pool consistent again at the journal's generation */
static int rollback_meta(struct rpmemd_pool *p, struct rpmemd_meta *out)
{
	struct rpmemd_pool_journal *j = journal_of(p);

	pthread_mutex_lock(&p->meta_lock);
	struct rpmemd_meta m = p->meta;
	m.state = RPMEM_POOL_CONSISTENT;
	m.generation = rpmemd_undo_generation(j->undo);
	rpmemd_meta_set_source(&m, rpmemd_undo_source(j->undo));
	int ret = p->region->ops->write_meta(p, m.state, m.source, &m);
	if (!ret) {
		p->meta = m;
		*out = m;
	}
	pthread_mutex_unlock(&p->meta_lock);
	return ret;
}

/*
 * journal_damaged -- the journal holds a damaged record followed by valid
 * ones: it cannot give back generation N (what came before the record
 * restored, the rest of the interrupted sync's data left) -- why in err
 */
static int journal_damaged(struct rpmemd_pool *p, char *err, size_t errlen)
{
	struct rpmemd_pool_journal *j = journal_of(p);
	uint64_t pos, off, len;

	if (!rpmemd_undo_damaged(j->undo, &pos, &off, &len))
		return 0;
	snprintf(err, errlen,
		 "pool '%s' is not rolled back: its undo journal's record at byte %llu (the blocks of 0x%llx length %llu) is damaged and valid records follow it, so it cannot give back generation %llu; the pool stays syncing with the journal kept (a sync completes the new image)",
		 p->name, (unsigned long long)pos, (unsigned long long)off,
		 (unsigned long long)len,
		 (unsigned long long)rpmemd_undo_generation(j->undo));
	return -EBADMSG;
}

/*
 * rollback_check -- the image the journal gave back is generation N's, as
 * its scrub record says (no record of N: nothing to compare, logged);
 * -EILSEQ with why in err if not
 */
static int rollback_check(struct rpmemd_pool *p, char *err, size_t errlen)
{
	const struct rpmemd_journal_history *history = journal_history();
	struct rpmemd_pool_journal *j = journal_of(p);
	uint64_t gen = rpmemd_undo_generation(j->undo), off, len, n;
	int ret = history ? history->image_check(p, gen, 2, &off, &len, &n) :
			    -ENOENT; /* no history: no record */

	if (ret == -ENOENT) {
		NOTICE("region '%s': pool '%s': no scrub record of generation %llu: the rolled back image is not checked",
		       p->region->cfg.name, p->name, (unsigned long long)gen);
		return 0;
	}
	if (ret == -EILSEQ)
		snprintf(err, errlen,
			 "pool '%s' is not marked consistent: after the rollback %llu piece%s of 4 KiB differ from generation %llu's scrub record, the first at 0x%llx length %llu; the pool stays syncing with the journal kept (a sync completes the new image)",
			 p->name, (unsigned long long)n, n == 1 ? "" : "s",
			 (unsigned long long)gen, (unsigned long long)off,
			 (unsigned long long)len);
	return ret;
}

int rpmemd_pool_rollback(struct rpmemd_pool *p, struct rpmemd_meta *out,
			 char *err, size_t errlen)
{
	struct rpmemd_pool_journal *j = journal_of(p);
	int ret;

	pthread_mutex_lock(&j->undo_lock);
	if (!j->undo || rpmemd_pool_state(p) != RPMEM_POOL_SYNCING) {
		snprintf(err, errlen,
			 "pool '%s' has no interrupted sync to roll back (it is %s%s)",
			 p->name, rpmem_state_str(rpmemd_pool_state(p)),
			 rpmemd_pool_state(p) == RPMEM_POOL_SYNCING ?
				 ", with no undo journal: its previous image is gone" :
				 "");
		ret = -EINVAL;
		goto out;
	}
	if (rpmemd_store_swap_shared(p)) {
		snprintf(err, errlen,
			 "pool '%s' is open in other sessions: its interrupted sync can be rolled back once they close it",
			 p->name);
		ret = -EBUSY;
		goto out;
	}
	if ((ret = journal_damaged(p, err, errlen)))
		goto out;
	/* the pool is syncing until the metadata says otherwise */
	rpmemd_undo_queue_drain(p);
	/* a dense sync into a new file: the pool file is the old image */
	ret = rpmemd_store_swap_abort(p);
	if (!ret)
		ret = rpmemd_undo_apply(j->undo, restore, p);
	if (!ret && (ret = rollback_check(p, err, errlen)))
		goto out;
	if (!ret && (ret = rollback_meta(p, out))) {
		snprintf(err, errlen,
			 "pool '%s': the pool file holds generation %llu's image again (every kept block restored), but its metadata could not be written: %s; it stays syncing with the journal kept, and a rollback once the metadata can be written marks it consistent",
			 p->name,
			 (unsigned long long)rpmemd_undo_generation(j->undo),
			 strerror(-ret));
		WARN("region '%s': %s", p->region->cfg.name, err);
		goto out;
	}
	if (ret) {
		snprintf(err, errlen, "rolling back pool '%s' failed (it stays syncing, the journal kept): %s",
			 p->name, strerror(-ret));
		goto out;
	}
	INFO("region '%s': pool '%s': rolled back to generation %llu (%llu blocks restored)",
	     p->region->cfg.name, p->name,
	     (unsigned long long)out->generation,
	     (unsigned long long)rpmemd_undo_blocks(j->undo));
	rpmemd_store_undo_end(p);
out:
	pthread_mutex_unlock(&j->undo_lock);
	if (!ret)
		rpmemd_store_hc_commit(p);
	return ret;
}

void rpmemd_store_undo_info(struct rpmemd_region *r, const char *name,
			    const struct rpmemd_meta *m,
			    struct rpmem_pool_info *pi)
{
	uint64_t gen, bytes;
	int dfd = undo_dir(r);

	if (dfd < 0 || m->state != RPMEM_POOL_SYNCING ||
	    rpmemd_undo_peek(dfd, name, &gen, &bytes) || gen != m->generation)
		return;
	pi->pending = 1;
	pi->undo_generation = gen;
	pi->undo_bytes = bytes;
}

int rpmemd_source_live(const char *source)
{
	return is_live(source);
}

int rpmemd_store_undo_dir(const struct rpmemd_region *r)
{
	return undo_dir(r);
}

int rpmemd_store_undo_renew(struct rpmemd_pool *p)
{
	struct rpmemd_pool_journal *j = journal_of(p);
	int dfd = rpmemd_store_undo_dir(p->region);

	if (j->undo)
		rpmemd_undo_close(&j->undo);
	rpmemd_store_undo_unreserve(p);
	rpmemd_undo_unlink(dfd, p->name); /* one not kept */
	return rpmemd_undo_create(dfd, p->name, p->meta.uuid, p->size,
				  p->meta.generation, p->meta.source, &j->undo);
}
