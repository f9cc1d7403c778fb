/* SPDX-License-Identifier: BSD-3-Clause */
/* history.c -- the history layer's callbacks, registered below (history.h) */
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>

#include "history.h"
#include "journal.h"
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

void rpmemd_history_init(void)
{
	rpmemd_journal_set_history(&journal_history);
}
