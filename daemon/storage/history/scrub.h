/* SPDX-License-Identifier: BSD-3-Clause */
/* scrub.h -- the hashes a pool's image had when it was committed, and scrub */
#ifndef RPMEMD_SCRUB_H
#define RPMEMD_SCRUB_H

#include <stdint.h>

#include "damage.h"
#include "store.h"

/*
 * <region>/.rpmemd/<pool>.scrub records the XXH3-64 hash of every 4 KiB
 * piece of a pool's image as it was when the pool went consistent (a
 * commit), for SCRUB to re-read the pool and compare. Its layout (host
 * byte order):
 *
 *	page 0		header: magic, version, piece size, the pool's uuid
 *			and size, the generation the image became, a
 *			random key, and an XXH3 checksum of all that
 *	page 1 ...	one 16-byte entry per piece: hash, check
 *
 * An entry's check is mix(hash, piece index, key): a damaged entry is
 * found, not taken for damaged data. The file is written beside the
 * record it replaces and renamed over it, so a crash leaves the old
 * record (of an older generation: every piece unverified) or the new
 * one. It is not the hash cache (hcache.h): that one forgets a piece
 * when it is written and all of them when the pool file changes behind
 * rpmemd's back, which is what a scrub looks for; this one changes only
 * at a commit. The hashes come from the hash cache where it has them
 * (the pieces a sync compared and did not write), the others are hashed
 * from the pool then. Versions (point-in-time images) will get a record
 * each, named by the version, checked by the same SCRUB with its
 * version field set.
 */
#define RPMEMD_SCRUB_SUFFIX ".scrub"

/*
 * how a long hashing job takes turns with other hashing: take() before
 * each batch of pieces (64 MiB), give() after it; NULL functions: none
 */
struct rpmemd_scrub_turns {
	void (*take)(void *arg);
	void (*give)(void *arg);
	void *arg;
};

/*
 * rpmemd_scrub_record -- record the hashes of the open pool p's image, now
 * of generation gen (a commit just made it consistent), hashing with
 * nthreads threads, a batch a turn. -ENOTSUP for a pool without a
 * metadata directory (devdax), else 0 or -errno; a failure leaves the old
 * record. The pieces the pool's list of damaged pieces (damage.h) holds
 * keep the old record's hashes while their data is as the scrub found
 * it (the sync did not rewrite them), the others leave the list: chg.
 */
int rpmemd_scrub_record(struct rpmemd_pool *p, uint64_t gen,
			unsigned nthreads, const struct rpmemd_scrub_turns *t,
			struct rpmemd_damage_change *chg);

/*
 * rpmemd_scrub_gen -- the generation of the image <pool>.scrub records
 * (of a pool of size bytes); -ENOENT if there is none, -EBADMSG if it is
 * not a valid one
 */
int rpmemd_scrub_gen(int metafd, const char *pool, uint64_t size,
		     uint64_t *gen);

/*
 * rpmemd_scrub_clean -- remove a <pool>.scrub.tmp that a crash left while
 * the record was written (before a pool that is not open is opened)
 */
void rpmemd_scrub_clean(int metafd, const char *pool);
/* rpmemd_scrub_unlink -- remove <pool>.scrub (and a leftover .tmp) */
int rpmemd_scrub_unlink(int metafd, const char *pool);

/*
 * rpmemd_scrub_check -- re-read count pieces of p from off (4 KiB
 * aligned, inside the pool) and compare them with the record: piece[i]
 * gets enum rpmem_scrub_piece, *why enum rpmem_scrub_why (why nothing,
 * or some, were verified), *gen the record's generation (0: none). The
 * verdicts go into the pool's list of damaged pieces (damage.h): chg.
 * 0, or -ENOMEM.
 */
int rpmemd_scrub_check(struct rpmemd_pool *p, uint64_t off, uint32_t count,
		       uint8_t *piece, uint8_t *why, uint64_t *gen,
		       unsigned nthreads, struct rpmemd_damage_change *chg);

/*
 * rpmemd_scrub_image -- compare the whole image of the open pool p (a
 * rollback's result, before it is marked consistent again) with the
 * record of generation gen, hashing with nthreads threads: 0 if every
 * piece is as recorded (a piece its list of damaged pieces holds counts
 * while it is as the scrub found it: the old image had that damage too),
 * -EILSEQ with the first run of differing pieces [*off, *off + *len) and
 * their *count in all, -ENOENT if there is no valid record of gen,
 * -ENOMEM or the read error of a piece
 */
int rpmemd_scrub_image(struct rpmemd_pool *p, uint64_t gen, unsigned nthreads,
		       uint64_t *off, uint64_t *len, uint64_t *count);

/*
 * rpmemd_scrub_repair -- rewrite len bytes at off (whole pieces; the
 * pool's last one may be short) of the open pool p with data, in place,
 * if every piece of data hashes as the record of the pool's generation
 * says: the data the pool had when it was committed, whoever sent it.
 * The pool stays consistent at its generation; the pieces leave its list
 * of damaged pieces (chg). The caller holds the pool's write open. 0,
 * -ESTALE (not consistent), -ENOENT (no valid record of its generation),
 * -EILSEQ (*bad: the offset of the first piece that does not hash so;
 * nothing written), -ENOMEM or the write's -errno.
 */
int rpmemd_scrub_repair(struct rpmemd_pool *p, uint64_t off,
			const uint8_t *data, uint64_t len, uint64_t *bad,
			struct rpmemd_damage_change *chg);

/*
 * rpmemd_scrub_keep -- a commit keeps the image of generation gen as a
 * version: its record (if it is of gen) becomes <pool>.scrub.v<gen>.
 * Returns the image's hash (XXH3 of its pieces' hashes, 8 bytes little
 * endian each), 0 if there is no valid record of gen.
 */
uint64_t rpmemd_scrub_keep(int metafd, const char *pool, uint64_t size,
			   uint64_t gen);

/* rpmemd_scrub_version_unlink -- remove <pool>.scrub.v<gen> */
int rpmemd_scrub_version_unlink(int metafd, const char *pool, uint64_t gen);

/*
 * rpmemd_scrub_version_check -- compare count pieces from off of version
 * gen's image (data, restored from the version) with its kept record
 * (none kept: the pool's own record if it is of gen, as a pending pool's
 * is of the generation it rolls back to): piece[] (set by the caller for pieces that could not be restored:
 * RPMEM_SCRUB_DAMAGED), *why as rpmemd_scrub_check. 0 or -ENOMEM.
 */
int rpmemd_scrub_version_check(int metafd, const char *pool, uint64_t size,
			       uint64_t gen, uint64_t off, uint32_t count,
			       const uint8_t *data, uint8_t *piece,
			       uint8_t *why);

#endif
