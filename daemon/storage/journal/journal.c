/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * journal.c -- the journal layer on the pool (journal.h): a state change
 * with its journal started, committed or ended around the metadata
 * write, and what the journal keeps beside a pool through the pool's
 * life (its keeper, backend.h)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "journal.h"
#include "journal_int.h"
#include "log.h"
#include "store.h"
#include "undo.h"

/*
 * set_state_locked -- the transition, its journal started before the
 * metadata says syncing and removed after it says consistent (the
 * commit); meta_lock and undo_lock held
 */
static int set_state_locked(struct rpmemd_pool *p, uint8_t state,
			    const char *source, uint64_t change, int may_swap,
			    struct rpmemd_meta *out, char *err, size_t errlen)
{
	struct rpmemd_pool_journal *j = journal_of(p);
	struct rpmemd_meta m = p->meta, was = p->meta;
	int ret = rpmemd_meta_transition(&m, state);
	if (ret) {
		snprintf(err, errlen, "pool '%s' cannot go from %s to %s",
			 p->name, rpmem_state_str(p->meta.state),
			 rpmem_state_str(state));
		return ret;
	}
	if (source && source[0])
		rpmemd_meta_set_source(&m, source);
	int started = !j->undo && state == RPMEM_POOL_SYNCING;
	if (started &&
	    (ret = rpmemd_store_undo_begin(p, source, change, err, errlen)))
		return ret;
	started = started && j->undo;
	if (started && may_swap)
		rpmemd_store_swap_begin(p, change == RPMEMD_CHANGE_UNDECLARED ?
						   0 :
						   change);
	int swapped = j->swap && state == RPMEM_POOL_CONSISTENT;
	if (swapped && (ret = rpmemd_store_swap_commit(p, err, errlen)))
		return ret;
	ret = p->region->ops->write_meta(p, state, source, &m);
	if (ret) {
		snprintf(err, errlen, "cannot write the metadata of pool '%s': %s",
			 p->name, strerror(-ret));
		ERR("region '%s': pool '%s': metadata write failed: %s",
		    p->region->cfg.name, p->name, strerror(-ret));
		if (swapped)
			rpmemd_store_swap_uncommit(p);
		if (started) {
			rpmemd_store_swap_abort(p);
			rpmemd_store_undo_end(p); /* still consistent */
		}
		return ret;
	}
	p->meta = m;
	*out = m;
	if (swapped)
		rpmemd_store_swap_done(p);
	if (state == RPMEM_POOL_CONSISTENT) {
		rpmemd_undo_queue_drain(p);
		/* a new file's sync has an empty journal: no version of N */
		if (swapped)
			rpmemd_store_undo_end(p);
		else
			rpmemd_store_undo_keep(p, &was);
	}
	return 0;
}

int rpmemd_pool_set_state(struct rpmemd_pool *p, uint8_t state,
			  const char *source, uint64_t change, int may_swap,
			  struct rpmemd_meta *out, char *err, size_t errlen)
{
	struct rpmemd_pool_journal *j = journal_of(p);

	pthread_mutex_lock(&j->undo_lock);
	pthread_mutex_lock(&p->meta_lock);
	int ret = set_state_locked(p, state, source, change, may_swap, out,
				   err, errlen);
	pthread_mutex_unlock(&p->meta_lock);
	pthread_mutex_unlock(&j->undo_lock);
	/* consistent: no more writes; the written blocks' hashes are kept */
	if (!ret && state == RPMEM_POOL_CONSISTENT)
		rpmemd_store_hc_commit(p);
	return ret;
}

/* journal_found -- a dense sync's files a crash left (store_swap.c) */
static void journal_found(struct rpmemd_region *r, const char *name,
			  const struct rpmemd_meta *m)
{
	rpmemd_store_swap_recover(r, name, m);
}

/*
 * journal_shared -- a reader (RDMA too) sees the pool, not a half-written
 * new file (logged if the copy fails)
 */
static void journal_shared(struct rpmemd_pool *p)
{
	rpmemd_pool_read_prepare(p);
}

/* journal_closing -- the last close of a pool whose dense sync is undone */
static void journal_closing(struct rpmemd_pool *p)
{
	struct rpmemd_pool_journal *j = journal_of(p);

	if (!j->swap)
		return;
	pthread_mutex_lock(&j->undo_lock);
	rpmemd_store_swap_abort(p);
	pthread_mutex_unlock(&j->undo_lock);
}

/* journal_freed -- the journal, its thread and reservation let go */
static void journal_freed(struct rpmemd_pool *p)
{
	struct rpmemd_pool_journal *j = journal_of(p);

	rpmemd_store_swap_release(p, 1);
	rpmemd_undo_queue_stop(p);
	rpmemd_undo_close(&j->undo);
	rpmemd_store_undo_unreserve(p);
}

/* journal_removed -- a removed pool's journal and dense sync's files */
static void journal_removed(struct rpmemd_region *r, const char *name)
{
	int dfd = rpmemd_store_undo_dir(r), ret;

	/* of a devdax pool: the journal of a forced remove's sync */
	if (dfd >= 0 && (ret = rpmemd_undo_unlink(dfd, name)))
		WARN("region '%s': pool '%s': cannot remove its undo journal%s: %s",
		     r->cfg.name, name,
		     r->metafd < 0 ?
			     " (removed at the next open of a pool of that name)" :
			     "",
		     strerror(-ret));
	if (r->metafd >= 0) /* a dense sync's leftovers */
		rpmemd_store_swap_recover(r, name, NULL);
}

/* journal_attach -- the journal's state of a new pool (journal_int.h) */
static int journal_attach(struct rpmemd_pool *p, void **state)
{
	struct rpmemd_pool_journal *j = calloc(1, sizeof(*j));
	int ret;

	(void)p;
	if (!j)
		return -ENOMEM;
	if ((ret = -pthread_mutex_init(&j->undo_lock, NULL))) {
		free(j);
		return ret;
	}
	if ((ret = -pthread_cond_init(&j->undo_cond, NULL))) {
		pthread_mutex_destroy(&j->undo_lock);
		free(j);
		return ret;
	}
	*state = j;
	return 0;
}

/* journal_detach -- the state let go (journal_freed emptied it) */
static void journal_detach(void *state)
{
	struct rpmemd_pool_journal *j = state;

	pthread_mutex_destroy(&j->undo_lock);
	pthread_cond_destroy(&j->undo_cond);
	free(j);
}

/* the journal's keeper */
static const struct rpmemd_keeper journal_keeper = {
	.attach = journal_attach,
	.detach = journal_detach,
	.found = journal_found,
	.opened = rpmemd_store_undo_open,
	.shared = journal_shared,
	.closing = journal_closing,
	.freed = journal_freed,
	.removed = journal_removed,
	.info = rpmemd_store_undo_info,
};

int rpmemd_journal_slot = -1;

void rpmemd_journal_init(void)
{
	rpmemd_journal_slot = rpmemd_store_add_keeper(&journal_keeper);
}

void rpmemd_journal_lock(struct rpmemd_pool *p)
{
	pthread_mutex_lock(&journal_of(p)->undo_lock);
}

void rpmemd_journal_unlock(struct rpmemd_pool *p)
{
	pthread_mutex_unlock(&journal_of(p)->undo_lock);
}

struct rpmemd_undo *rpmemd_journal_undo(const struct rpmemd_pool *p)
{
	return journal_of(p)->undo;
}

int rpmemd_journal_swap(const struct rpmemd_pool *p)
{
	return journal_of(p)->swap != NULL;
}
