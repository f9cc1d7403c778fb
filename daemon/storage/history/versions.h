/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * versions.h -- point-in-time versions of a pool: the undo journals of
 * committed syncs, kept (docs/ARCHITECTURE.md, "Versions")
 */
#ifndef RPMEMD_VERSIONS_H
#define RPMEMD_VERSIONS_H

#include <stddef.h>
#include <stdint.h>

#include "journal.h"
#include "store.h"

/*
 * <region>/.rpmemd/<pool>.v<N>.ver is the undo journal (undo.h) of the
 * sync that made generation N + 1 out of N, kept at its commit: the
 * blocks that sync overwrote, as they were at N, with a version trailer
 * (time, image hash, next). Restoring N = the pool's image with every
 * kept version from N up overlaid newest first (the oldest copy of a
 * block wins); a block in none of them is unchanged since N.
 * <pool>.scrub.v<N> is the scrub record of image N, kept beside it.
 */
#define RPMEMD_VER_SUFFIX ".ver"

struct rpmemd_version {
	char pool[RPMEM_NAME_MAX + 1];
	uint64_t gen;
	uint64_t next;	    /* the reverse delta is from this generation */
	uint64_t time;	    /* unix seconds image gen became current */
	uint64_t committed; /* unix seconds it was kept */
	uint64_t hash;	    /* the image's hash, 0: unknown */
	uint64_t bytes;	    /* of its files */
	uint64_t size;	    /* of the pool */
	char source[RPMEM_STR_MAX + 1];
	int damaged; /* its journal does not read: listed, kept, reported */
	int bad_data; /* a scrub found a record of it not checking (marked) */
};

/*
 * <pool>.v<N>.bad marks version N whose records a scrub (rpmemctl scrub,
 * the scheduled one) found not checking: the plain listing flags it
 * until a repair or a later scrub finds every record checking, or the
 * version goes (prune, fold, the pool removed).
 */
#define RPMEMD_VER_BAD_SUFFIX ".bad"

/*
 * rpmemd_version_mark -- mark (bad) or unmark version gen of pool as
 * damaged in its data; marking a version gone does nothing. Logged.
 */
void rpmemd_version_mark(struct rpmemd_region *r, const char *pool,
			 uint64_t gen, int bad);

/*
 * rpmemd_versions_list -- the versions of pool (its metadata m) on its
 * chain, and the damaged ones, oldest first, into *v (malloc'd) and *n.
 * A prune a crash cut short is completed first (docs/ARCHITECTURE.md,
 * "Versions").
 */
int rpmemd_versions_list(struct rpmemd_region *r, const char *pool,
			 const struct rpmemd_meta *m, struct rpmemd_version **v,
			 size_t *n);

/*
 * rpmemd_versions_bytes -- bytes of the version files of pool (NULL:
 * every pool's) in region r
 */
uint64_t rpmemd_versions_bytes(struct rpmemd_region *r, const char *pool);

/*
 * rpmemd_versions_info -- count the version files of the n pools of v
 * (sorted by name) into their versions and versions_bytes: one scan of
 * the region's metadata directory
 */
void rpmemd_versions_info(struct rpmemd_region *r, struct rpmem_pool_info *v,
			  uint32_t n);

/*
 * rpmemd_version_keep -- the commit of p (its metadata before it: was):
 * its undo journal kept as version was->generation; 0 or -errno (then
 * the journal is removed as without versions)
 */
int rpmemd_version_keep(struct rpmemd_pool *p, const struct rpmemd_meta *was);

/* rpmemd_versions_remove -- the pool was removed: its versions go too */
void rpmemd_versions_remove(struct rpmemd_region *r, const char *pool);

/* reports a version pruned (why: "retention", "quota", "request", ...) */
typedef void (*rpmemd_version_fn)(void *arg, const struct rpmemd_version *v,
				  const char *why);

/*
 * rpmemd_version_prune -- prune version gen of pool (metadata m): its
 * blocks that the next older version lacks are folded into it first, so
 * every other version stays restorable. -ENOENT (no such version), else
 * 0 or -errno; why in err
 */
int rpmemd_version_prune(struct rpmemd_region *r, const char *pool,
			 const struct rpmemd_meta *m, uint64_t gen,
			 char *err, size_t errlen);

/*
 * rpmemd_versions_retain -- after a commit of p: the versions its
 * region's policy does not keep are pruned, then the oldest of the
 * region while over its quota, but never the newest versions_floor of a
 * pool (the floor may exceed the quota: logged); versions of p that are
 * no longer restorable (a commit kept no journal) are removed. fn is
 * told of each pruned version.
 */
void rpmemd_versions_retain(struct rpmemd_pool *p, rpmemd_version_fn fn,
			    void *arg);

/*
 * rpmemd_versions_make_room -- the journal's reclaim callback (journal.h,
 * registered by history.c): a sync's journal needs room: in a region
 * with versions_full = "prune", prune the oldest version of the region
 * outside every pool's floor (versions_floor); 0 if one was, -ENOENT if
 * none is left or the region refuses (the default)
 */
int rpmemd_versions_make_room(struct rpmemd_pool *p);

/* a version pruned for the room of a pool's journal, to report */
struct rpmemd_room_pruned {
	char pool[RPMEM_NAME_MAX + 1];
	uint64_t gen;
};

/*
 * rpmemd_versions_take_room -- the versions pruned for the room of p's
 * journals since the last call (at most max into out; *lost: how many
 * more), forgotten then
 */
size_t rpmemd_versions_take_room(struct rpmemd_pool *p,
				 struct rpmemd_room_pruned *out, size_t max,
				 unsigned *lost);

/*
 * rpmemd_versions_space -- the bytes of the versions of region r, and of
 * those space pressure never prunes (each pool's newest versions_floor,
 * by generation); leaves: of pool's versions
 */
void rpmemd_versions_space(struct rpmemd_region *r, const char *pool,
			   struct rpmemd_vspace *s);

/* a version opened for reading: the journals from it up */
struct rpmemd_vchain;

/*
 * rpmemd_vchain_open -- version gen of the open pool p (gen = the pool's
 * generation: its current image), read by owner (a session: the chains
 * of one owner hold at most a quarter of the daemon's bound of journals,
 * its least recently read closed first); -ENOENT (no such version, why
 * in err), -EAGAIN (the pool is not consistent)
 */
int rpmemd_vchain_open(struct rpmemd_pool *p, uint64_t gen,
		       const void *owner, struct rpmemd_vchain **out,
		       char *err, size_t errlen);

/* rpmemd_vchain_gen -- the version it reads */
uint64_t rpmemd_vchain_gen(const struct rpmemd_vchain *c);

/*
 * rpmemd_vchain_retarget -- c reads version gen from now on, if the
 * journals it holds open are enough for it (gen the pool's generation it
 * reads, or a version of those it holds: a newer one than it was opened
 * for); 0, or -ENOENT (open another chain)
 */
int rpmemd_vchain_retarget(struct rpmemd_vchain *c, uint64_t gen);

/*
 * rpmemd_vchain_cost -- what reading versions cost: the journals all
 * chains loaded since the daemon started (reloads included), the bytes of
 * records c's last read checked
 */
void rpmemd_vchain_cost(const struct rpmemd_vchain *c, uint64_t *loads,
			uint64_t *checked);

/*
 * rpmemd_vchain_read -- len bytes of version c's image at off into buf;
 * -EAGAIN if the pool changed (a sync committed or started) since c was
 * opened, -EIO (*bad: a pool offset) if a kept block does not check
 */
int rpmemd_vchain_read(struct rpmemd_pool *p, struct rpmemd_vchain *c,
		       uint64_t off, uint64_t len, uint8_t *buf, uint64_t *bad);

/* rpmemd_vchain_close -- close it */
void rpmemd_vchain_close(struct rpmemd_vchain **c);

/*
 * rpmemd_vchains_release -- close the journals every open chain of pool
 * (of the region whose metadata directory is metafd) holds: a commit or a
 * prune made them stale. Each is reopened at its next read (and refused
 * there if the pool or the version moved on). The open chains of the
 * daemon hold at most a quarter of RLIMIT_NOFILE journals together, one
 * session's at most a quarter of that: the least recently read (of the
 * session, then of all) are closed the same way to make room.
 */
void rpmemd_vchains_release(int metafd, const char *pool);

/*
 * rpmemd_version_check -- read and check every record of version gen of
 * pool (metadata m; not a damaged one: see rpmemd_versions_list): 0,
 * -EIO (the first record that does not check covers [*bad, *bad +
 * *badlen)), -ENOENT (gone: pruned meanwhile) or -errno
 */
int rpmemd_version_check(struct rpmemd_region *r, const char *pool,
			 const struct rpmemd_meta *m, uint64_t gen,
			 uint64_t *bad, uint64_t *badlen);

/*
 * rpmemd_version_mend_header -- the header of version gen of the open
 * pool p, if it does not check, rebuilt and written as
 * rpmemd_undo_mend_header does (its own check the judge); 0 (mended), 1
 * (it checks), -ENOENT (no such version), -EILSEQ (cannot be rebuilt:
 * nothing written), -errno
 */
int rpmemd_version_mend_header(struct rpmemd_pool *p, uint64_t gen);

/* what a version's repair did, or where it was refused */
struct rpmemd_vrepair {
	uint64_t mended;  /* bytes of damaged records rewritten */
	uint64_t bad_gen; /* refused: the version whose record ... */
	uint64_t bad, bad_len; /* ... at this range neither checks */
};

/*
 * rpmemd_version_repair -- data is version gen's image at [off, off +
 * len) (off a multiple of 4 KiB; a short last block is left alone) of
 * the open pool p, from another copy: each block of it that a restore of
 * gen reads from a record that does not check (in gen's journal or a
 * newer one's, as the restore overlays them) is written into that
 * record, in place and synced, if the record then checks or each block
 * hashes as that version's scrub record says; the data that no record
 * vouches for is never written (-EILSEQ: res names the record; nothing
 * written). A crash leaves each record damaged as before or mended. 0
 * (res->mended: 0 if nothing there needed it), -ENOENT (no version gen
 * on the chain, or the pool's current image), -EBADMSG (res: a damaged
 * journal whose records are not all known), -EINVAL or -errno.
 */
int rpmemd_version_repair(struct rpmemd_pool *p, uint64_t gen, uint64_t off,
			  const uint8_t *data, uint64_t len,
			  struct rpmemd_vrepair *res);

#endif
