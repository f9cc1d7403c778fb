/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * journal_history.c -- the callbacks the history layer registers with the
 * journal (journal.h), below both the store's use of the journal
 * (store_undo.c) and its thread (undo_queue.c): room reclaimed, the space
 * of a pool's versions
 */
#include <errno.h>

#include "journal.h"
#include "journal_int.h"

/* the history layer's callbacks: none until it registers them */
static const struct rpmemd_journal_history *history;

void rpmemd_journal_set_history(const struct rpmemd_journal_history *h)
{
	history = h;
}

const struct rpmemd_journal_history *journal_history(void)
{
	return history;
}

int rpmemd_journal_reclaim(struct rpmemd_pool *p)
{
	return history ? history->reclaim(p) : -ENOENT;
}

void journal_versions_space(struct rpmemd_region *r, const char *pool,
			    struct rpmemd_vspace *s)
{
	if (history)
		history->space(r, pool, s);
	else
		*s = (struct rpmemd_vspace){ 0 };
}
