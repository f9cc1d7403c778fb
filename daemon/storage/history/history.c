/* SPDX-License-Identifier: BSD-3-Clause */
/* history.c -- the history layer's callbacks, registered below (history.h) */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "backend.h"
#include "history.h"
#include "history_int.h"
#include "journal.h"
#include "log.h"
#include "scrub.h"
#include "versions.h"

/* record_bytes -- the size of pool's scrub record (kept with its version) */
static uint64_t record_bytes(const struct rpmemd_pool *p)
{
	char fn[RPMEM_NAME_MAX + 16];
	struct stat st;

	snprintf(fn, sizeof(fn), "%s%s", p->name, RPMEMD_SCRUB_SUFFIX);
	return fstatat(p->region->metafd, fn, &st, AT_SYMLINK_NOFOLLOW) ?
		       0 :
		       (uint64_t)st.st_size;
}

/* what the journal asks of versions and scrub records */
static const struct rpmemd_journal_history journal_history = {
	.reclaim = rpmemd_versions_make_room,
	.space = rpmemd_versions_space,
	.keep = rpmemd_version_keep,
	.record_bytes = record_bytes,
	.image_check = rpmemd_scrub_image,
};

/* history_found -- a scrub record's leftovers a crash left (its .tmp) */
static void history_found(struct rpmemd_region *r, const char *name,
			  const struct rpmemd_meta *m)
{
	(void)m;
	rpmemd_scrub_clean(r->metafd, name);
}

/* history_removed -- a removed pool's scrub record and versions */
static void history_removed(struct rpmemd_region *r, const char *name)
{
	int ret;

	if (r->metafd < 0)
		return;
	if ((ret = rpmemd_scrub_unlink(r->metafd, name)))
		WARN("region '%s': pool '%s': cannot remove its scrub record: %s",
		     r->cfg.name, name, strerror(-ret));
	rpmemd_versions_remove(r, name);
}

/* history_attach -- history's state of a new pool (history_int.h) */
static int history_attach(struct rpmemd_pool *p, void **state)
{
	struct rpmemd_pool_history *h = calloc(1, sizeof(*h));

	(void)p;
	if (!h)
		return -ENOMEM;
	h->cut_lock = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
	h->cut_cond = (pthread_cond_t)PTHREAD_COND_INITIALIZER;
	*state = h;
	return 0;
}

/* history_detach -- the state let go */
static void history_detach(void *state)
{
	struct rpmemd_pool_history *h = state;

	pthread_mutex_destroy(&h->cut_lock);
	pthread_cond_destroy(&h->cut_cond);
	free(h);
}

/* what history keeps beside a pool */
static const struct rpmemd_keeper history_keeper = {
	.attach = history_attach,
	.detach = history_detach,
	.found = history_found,
	.removed = history_removed,
	.listed = rpmemd_versions_info,
};

int rpmemd_history_slot = -1;

void rpmemd_history_init(void)
{
	rpmemd_journal_init();
	rpmemd_history_slot = rpmemd_store_add_keeper(&history_keeper);
	rpmemd_journal_set_history(&journal_history);
}
