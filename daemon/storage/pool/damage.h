/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * damage.h -- the pieces of a pool's image a scrub found damaged, kept
 * until a sync rewrites them
 */
#ifndef RPMEMD_DAMAGE_H
#define RPMEMD_DAMAGE_H

#include <stddef.h>
#include <stdint.h>

#include "proto.h"

struct rpmemd_pool;
struct rpmemd_region;

/*
 * <region>/.rpmemd/<pool>.damaged lists the 4 KiB pieces of the pool's
 * image that a scrub found not as its record says (host byte order):
 *
 *	header		magic, version, the pool's uuid, the count, and an
 *			XXH3 checksum of the header and the entries
 *	entries		piece index, the hash of what the scrub read (0:
 *			unreadable), the hash the record holds; by index
 *
 * A scrub adds the damaged pieces it finds (and drops from the hash cache
 * their entries, which may still hold the good hash: a byte flipped
 * behind rpmemd's back without a change of the file's stat) and removes
 * the listed pieces it finds intact. A commit's scrub record keeps, for a
 * listed piece whose data still hashes as the scrub read it, the hash the
 * old record held (so the piece still scrubs as damaged), and the list
 * loses the pieces the sync rewrote. The pool is "damaged" while the
 * list is not empty (LIST, events). The file is replaced crash-safely
 * (temporary file, fsync, rename); no file: nothing damaged.
 */
#define RPMEMD_DAMAGE_SUFFIX ".damaged"

struct rpmemd_damage {
	uint64_t piece; /* its index: offset / RPMEM_HASH_PIECE */
	uint64_t found; /* the hash of what a scrub read; 0: unreadable */
	uint64_t want;	/* the hash the scrub record holds for it */
};

/* what a scrub or a commit did to a pool's list */
struct rpmemd_damage_change {
	size_t before, after; /* its length around it */
	size_t found;	      /* damaged pieces the scrub found */
};

/*
 * rpmemd_damage_load -- the list of pool (uuid) into *v (malloc'ed,
 * sorted by piece, the caller frees) and *n: 0 (none: *n 0), -EBADMSG
 * (a damaged or foreign list, logged) or -errno
 */
int rpmemd_damage_load(int metafd, const char *pool, const uint8_t *uuid,
		       struct rpmemd_damage **v, size_t *n);

/*
 * rpmemd_damage_store -- replace the list of pool (uuid) with v[n] (n 0:
 * remove it); 0 or -errno
 */
int rpmemd_damage_store(int metafd, const char *pool, const uint8_t *uuid,
			const struct rpmemd_damage *v, size_t n);

/* rpmemd_damage_unlink -- remove the list and a leftover .tmp */
int rpmemd_damage_unlink(int metafd, const char *pool);

/* rpmemd_damage_find -- the entry of piece in v[n] (sorted), or NULL */
const struct rpmemd_damage *rpmemd_damage_find(const struct rpmemd_damage *v,
					       size_t n, uint64_t piece);

/*
 * rpmemd_damage_update -- a scrub of the open pool p found the nadd
 * pieces of add damaged and the nok pieces of ok (indexes) intact: merge
 * them into its list (under the pool's metadata lock), the hash cache's
 * entries of the damaged pieces dropped first; chg's before and after
 * get the list's length around it. 0 or -errno (the list unchanged).
 */
int rpmemd_damage_update(struct rpmemd_pool *p,
			 const struct rpmemd_damage *add, size_t nadd,
			 const uint64_t *ok, size_t nok,
			 struct rpmemd_damage_change *chg);

/*
 * rpmemd_damage_bytes -- the bytes of the open pool p's image listed as
 * damaged (0: none or unreadable list)
 */
uint64_t rpmemd_damage_bytes(struct rpmemd_pool *p);

/*
 * rpmemd_damage_info -- the damaged bytes of the n pools of v (LIST)
 * into their damaged fields
 */
void rpmemd_damage_info(struct rpmemd_region *r, struct rpmem_pool_info *v,
			uint32_t n);

#endif
