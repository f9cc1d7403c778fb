/* SPDX-License-Identifier: BSD-3-Clause */
/* meta.h -- pool metadata kept beside the pool file, never inside it */
#ifndef RPMEMD_META_H
#define RPMEMD_META_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "proto.h"

/*
 * <region>/.rpmemd/<pool>.meta is a small text file of key=value lines:
 *
 *	magic=rpmemd-pool-meta
 *	version=1
 *	uuid=0f8c...
 *	size=1073741824
 *	created=1700000000
 *	source=host:/mnt/pmem/db1
 *	state=consistent
 *	generation=3
 *	last_sync=1700000100
 *
 * and, for a pool that was promoted or took a push from an initiator
 * that keeps a generation history (docs/ARCHITECTURE.md, "Generation
 * histories"), the optional keys
 *
 *	role=primary
 *	history=9f3c0a1e22b4d5c6,51aa...
 *
 * (history: up to RPMEM_MAX_GENERATIONS ids of 16 hex digits, newest
 * first; role missing: secondary, history missing: none).
 * magic and version come first, in that order; the other keys may come
 * in any order, source may be missing (""), unknown keys are ignored (a
 * newer daemon may add some). A missing key, a bad value, a second copy
 * of a key or a last line without its newline (a torn file) is an error;
 * the writer puts a required key last so that no torn file parses. The
 * file is replaced crash-safely (temporary file, fsync, rename, fsync of
 * the directory), so a reader sees the old or the new version.
 */
#define RPMEMD_META_DIR ".rpmemd"
#define RPMEMD_META_SUFFIX ".meta"
#define RPMEMD_META_MAGIC "rpmemd-pool-meta"
#define RPMEMD_META_VERSION 1
#define RPMEMD_META_MAX 2048 /* largest metadata file accepted */

struct rpmemd_meta {
	uint8_t uuid[16];
	uint64_t size;
	uint8_t state; /* enum rpmem_pool_state */
	uint64_t generation;
	uint64_t created;   /* unix seconds */
	uint64_t last_sync; /* unix seconds of the last consistent, 0 = never */
	char source[RPMEM_STR_MAX + 1];
	uint8_t role; /* enum rpmem_pool_role */
	uint8_t nhist;
	uint64_t hist[RPMEM_MAX_GENERATIONS]; /* newest first */
	/*
	 * unix seconds of the last split brain an initiator reported of the
	 * pool (GEN split), 0 if none since its history last changed; kept
	 * in a dir or fsdax pool's metadata file, for the daemon's lifetime
	 * in a devdax pool (its slot has no room)
	 */
	uint64_t split_at;
};

/*
 * rpmemd_meta_hist_push -- put id in front of the history (the oldest id
 * falls off a full one)
 */
void rpmemd_meta_hist_push(struct rpmemd_meta *m, uint64_t id);

/* rpmemd_meta_init -- a new, empty pool of size bytes with a random uuid */
int rpmemd_meta_init(struct rpmemd_meta *m, uint64_t size);

/*
 * rpmemd_meta_transition -- apply a state change requested by a writer:
 * empty -> syncing, syncing -> syncing (a resumed sync), consistent ->
 * syncing, syncing -> consistent (generation + 1, last_sync = now).
 * Anything else, empty -> consistent included (a mirror always passes
 * through syncing), is -EINVAL and leaves *m untouched.
 */
int rpmemd_meta_transition(struct rpmemd_meta *m, uint8_t new_state);

/* rpmemd_meta_set_source -- record where the data came from (sanitized) */
void rpmemd_meta_set_source(struct rpmemd_meta *m, const char *source);

/* rpmemd_meta_format -- text form into buf[len]; its length or -EMSGSIZE */
int rpmemd_meta_format(const struct rpmemd_meta *m, char *buf, size_t len);

/* rpmemd_meta_parse -- text form of len bytes into *m; 0 or -EBADMSG */
int rpmemd_meta_parse(const char *buf, size_t len, struct rpmemd_meta *m);

/*
 * rpmemd_meta_read -- <pool>.meta from the metadata directory dirfd;
 * -ENOENT if missing, -EBADMSG if corrupt.
 */
int rpmemd_meta_read(int dirfd, const char *pool, struct rpmemd_meta *m);

/*
 * rpmemd_region_check_set -- what a directory or file that someone else
 * could have written does: refused (0, region_check = "strict", the
 * default) or only warned about (1, "warn"); from the configuration
 */
void rpmemd_region_check_set(int warn);
/* rpmemd_region_check_warn -- region_check is "warn" */
int rpmemd_region_check_warn(void);

/*
 * rpmemd_untrusted -- why st (a region's directory or .rpmemd, or a file
 * in them) is not rpmemd's own: owned by another user than rpmemd's
 * effective one, or writable by its group or others. The reason in
 * buf[len] and buf; NULL if it is rpmemd's own.
 */
const char *rpmemd_untrusted(const struct stat *st, char *buf, size_t len);

/*
 * rpmemd_open_own -- open name in dirfd (a region's directory or its
 * metadata directory) for writing with flags (O_CREAT: 0600), without
 * following a symbolic link and never truncating: the fd if it is a
 * regular file with one link and rpmemd's own (rpmemd_untrusted), else
 * -EMLINK (a hard link: the other may be a file outside the region),
 * -EINVAL or -EPERM (someone else's; with region_check "warn" opened all
 * the same), the refusal logged. Every file rpmemd writes in a region is
 * opened so.
 */
int rpmemd_open_own(int dirfd, const char *name, int flags);

/*
 * rpmemd_open_ro -- open name in dirfd read-only, without following a
 * symbolic link: the fd, or -errno; -EPERM (logged) if the file is not
 * rpmemd's own (rpmemd_untrusted; with region_check "warn" a warning and
 * the fd). Every side file rpmemd reads in a region is opened so.
 */
int rpmemd_open_ro(int dirfd, const char *name);

/*
 * rpmemd_own_at -- name in dirfd, not followed if a symbolic link, is a
 * regular file with one link and rpmemd's own, for a rename that makes
 * it a pool file: 0, -errno, or -EPERM (logged; with region_check "warn"
 * a warning and 0 when only its owner or mode is wrong)
 */
int rpmemd_own_at(int dirfd, const char *name);

/*
 * rpmemd_unlink_own -- remove name in dirfd if it is rpmemd's own: a
 * regular file with one link, owned by rpmemd's user (a hard link to
 * another file is left alone)
 */
void rpmemd_unlink_own(int dirfd, const char *name);

/*
 * rpmemd_meta_clean -- remove a <pool>.meta.tmp that a crash left while
 * the metadata was written (before a pool that is not open is opened)
 */
void rpmemd_meta_clean(int dirfd, const char *pool);

/* rpmemd_meta_write -- replace <pool>.meta crash-safely */
int rpmemd_meta_write(int dirfd, const char *pool,
		      const struct rpmemd_meta *m);

/* rpmemd_meta_unlink -- remove <pool>.meta and make that durable */
int rpmemd_meta_unlink(int dirfd, const char *pool);

/*
 * rpmemd_meta_pool_name -- if file is "<valid pool name>.meta", copy the
 * pool name to out[RPMEM_NAME_MAX + 1] and return 1, else 0.
 */
int rpmemd_meta_pool_name(const char *file, char *out);

#endif
