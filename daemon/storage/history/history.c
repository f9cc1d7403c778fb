/* SPDX-License-Identifier: BSD-3-Clause */
/* history.c -- the history layer's callbacks, registered below (history.h) */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "backend.h"
#include "history.h"
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

/* what history keeps beside a pool */
static const struct rpmemd_keeper history_keeper = {
	.found = history_found,
	.removed = history_removed,
	.listed = rpmemd_versions_info,
};

void rpmemd_history_init(void)
{
	rpmemd_journal_init();
	rpmemd_store_add_keeper(&history_keeper);
	rpmemd_journal_set_history(&journal_history);
}
