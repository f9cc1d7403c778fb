/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * versions_int.h -- what versions.c, versions_prune.c and
 * versions_chain.c share, nothing else
 */
#ifndef RPMEMD_VERSIONS_INT_H
#define RPMEMD_VERSIONS_INT_H

#include <stddef.h>
#include <stdint.h>

#include "pool_int.h"
#include "versions.h"

/* a growing array of versions */
struct vlist {
	struct rpmemd_version *v;
	size_t n, cap;
};

/* --- versions.c ----------------------------------------------------------- */

/* ver_name -- "<pool>.v<gen>.ver" into out */
void ver_name(const char *pool, uint64_t gen, char *out, size_t len);
/* ver_bytes -- the bytes of version gen of pool: journal, scrub record */
uint64_t ver_bytes(int dirfd, const char *pool, uint64_t gen);
/*
 * scan_dir -- every version file in metafd (of pool only, unless NULL)
 * as found, headers unread (only pool, gen, bytes), sorted
 */
int scan_dir(int metafd, const char *pool, struct vlist *l);
/* ver_read -- version v's header (of the pool of metadata m) into v */
int ver_read(int metafd, const struct rpmemd_meta *m,
	     struct rpmemd_version *v);
/* ver_unlink -- remove version gen of pool (its journal, its record) */
void ver_unlink(int metafd, const char *pool, uint64_t gen);
/* ver_unlink_folded -- remove version gen of pool, folded into an older */
void ver_unlink_folded(int metafd, const char *pool, uint64_t gen);
/*
 * pool_versions -- the versions of pool (metadata m) in l, ok[] (malloc'd)
 * marking the ones on its chain; r->ver_lock held
 */
int pool_versions(struct rpmemd_region *r, const char *pool,
		  const struct rpmemd_meta *m, struct vlist *l, uint8_t **ok);

/* --- versions_chain.c ----------------------------------------------------- */

/* vchain_has -- l has restorable version gen */
int vchain_has(const struct vlist *l, const uint8_t *ok, uint64_t gen);

#endif
