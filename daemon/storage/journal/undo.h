/* SPDX-License-Identifier: BSD-3-Clause */
/* undo.h -- a pool's undo journal: the blocks a sync overwrites, kept aside */
#ifndef RPMEMD_UNDO_H
#define RPMEMD_UNDO_H

#include <stddef.h>
#include <stdint.h>

#include "proto.h"

/*
 * <region>/.rpmemd/<pool>.undo (a devdax region: <undo_dir>/<pool>.undo)
 * keeps the previous contents of every 4 KiB block a sync overwrites, so
 * that an interrupted sync can be rolled back to the image it started
 * from (generation N) or continued forward to the new one. Layout (little endian):
 *
 *	bytes 0..4095	header: magic "RPMEMUND", version, block size,
 *			the pool's uuid and size, the generation N the
 *			journal is bound to, the pool's source at N,
 *			XXH3 checksum of all that
 *	then records	magic u32 | count u32 (blocks) | offset u64 |
 *			check u64 | reserved u64, then count * 4096 bytes
 *			of the blocks' contents at generation N
 *
 * A record's check is XXH3 of its data seeded with its offset, count and
 * the generation; a record that does not check (torn by a crash) and
 * everything after it is cut off at load. A block is journaled at most
 * once: the first copy is the block at generation N, a later one would be
 * a mix. The data of a journaled block may be overwritten only after
 * rpmemd_undo_sync returned 0 (the record is durable).
 */
#define RPMEMD_UNDO_SUFFIX ".undo"
#define RPMEMD_UNDO_BS 4096u
#define RPMEMD_UNDO_HDR 4096u
#define RPMEMD_UNDO_REC 32u
/* the longest record: runs longer than this are split */
#define RPMEMD_UNDO_REC_MAX (1u << 20)

struct rpmemd_undo;

/*
 * rpmemd_undo_create -- a new, empty journal <pool>.undo in the metadata
 * directory dirfd for a pool of size bytes with uuid, bound to
 * generation gen (whose source was source); its header and the
 * directory entry are durable when it returns. An existing journal is
 * replaced. 0 or -errno (-ENOSPC: no room for the header).
 */
int rpmemd_undo_create(int dirfd, const char *pool, const uint8_t *uuid,
		       uint64_t size, uint64_t gen, const char *source,
		       struct rpmemd_undo **out);

/*
 * rpmemd_undo_load -- open the journal of a pool of size bytes with
 * uuid: its valid records (a torn tail is cut off). -ENOENT if there is
 * none, -EBADMSG if its header is not one of this pool's.
 */
int rpmemd_undo_load(int dirfd, const char *pool, const uint8_t *uuid,
		     uint64_t size, struct rpmemd_undo **out);

/*
 * rpmemd_undo_peek -- the generation a journal is bound to and its size
 * in bytes, without loading it; -ENOENT if none, -EBADMSG if corrupt
 */
int rpmemd_undo_peek(int dirfd, const char *pool, uint64_t *gen,
		     uint64_t *bytes);

/* rpmemd_undo_generation -- the generation the journal is bound to */
uint64_t rpmemd_undo_generation(const struct rpmemd_undo *u);
/* rpmemd_undo_source -- the pool's source at that generation */
const char *rpmemd_undo_source(const struct rpmemd_undo *u);
/* rpmemd_undo_bytes -- the journal's size (header and records) */
uint64_t rpmemd_undo_bytes(const struct rpmemd_undo *u);
/* rpmemd_undo_blocks -- how many blocks it holds */
uint64_t rpmemd_undo_blocks(const struct rpmemd_undo *u);

/*
 * rpmemd_undo_covered -- every block of [off, off + len) is journaled
 * already (nothing to save before it is written)
 */
int rpmemd_undo_covered(const struct rpmemd_undo *u, uint64_t off,
			uint64_t len);

/*
 * rpmemd_undo_save -- append the blocks of [off, off + len) (rounded out
 * to whole blocks) not journaled yet, their contents read from pool (the
 * pool's mapping, size bytes). Not durable until rpmemd_undo_sync. On a
 * failed write (-ENOSPC: a full region) nothing of this call stays. May
 * fault on the mapping: call it under rpmem_guard_run.
 */
int rpmemd_undo_save(struct rpmemd_undo *u, const uint8_t *pool,
		     uint64_t off, uint64_t len);

/* rpmemd_undo_sync -- make what was saved durable (fdatasync); 0 or -errno */
int rpmemd_undo_sync(struct rpmemd_undo *u);

/* restores len bytes of data at off of the pool; 0 or -errno */
typedef int (*rpmemd_undo_restore_fn)(void *arg, uint64_t off,
				      const void *data, uint64_t len);

/*
 * rpmemd_undo_damaged -- the journal holds a damaged record followed by
 * valid ones (found at load; a torn last record is cut off instead): 1
 * with its file offset *pos and the pool range [*off, *off + *len) it
 * covers (the whole pool if its head is damaged too), else 0. Such a
 * journal cannot give back the old image.
 */
int rpmemd_undo_damaged(const struct rpmemd_undo *u, uint64_t *pos,
			uint64_t *off, uint64_t *len);

/*
 * rpmemd_undo_apply -- hand every record back to restore (last first),
 * the image of generation N once all returned 0; 0 or -errno
 */
int rpmemd_undo_apply(struct rpmemd_undo *u, rpmemd_undo_restore_fn restore,
		      void *arg);

/*
 * A journal kept as a version (versions.h) carries a trailer in its
 * header page: when the image it restores was current, its hash, and the
 * generation it is the reverse delta from (next: its own generation + 1,
 * or more once newer versions were folded into it).
 */
struct rpmemd_undo_ver {
	uint64_t time;	    /* unix seconds the image became current */
	uint64_t hash;	    /* the image's hash (0: unknown) */
	uint64_t next;	    /* restores from the image of this generation */
	uint64_t committed; /* unix seconds it was kept */
	uint64_t end;	    /* where its records end (0: not recorded) */
};

/*
 * rpmemd_undo_load_file -- open the journal file (a version) of a pool
 * of size bytes with uuid; rw: for appending (every record checked, a
 * torn tail cut off), else read-only, its records known by their heads
 * (their data checked as it is read; a torn tail ignored). A torn tail
 * is what lies past the end its trailer records (an append a crash cut
 * short), or, in a file whose trailer records none, a last record that a
 * crash left half written (too short, or its head not written yet); a
 * record that does not check before that is damage: -EBADMSG.
 */
int rpmemd_undo_load_file(int dirfd, const char *file, const uint8_t *uuid,
			  uint64_t size, int rw, struct rpmemd_undo **out);

/*
 * rpmemd_undo_load_salvage -- open a damaged version (generation gen) of
 * a pool of size bytes with uuid for reading what it can give: its
 * header need not check (gen is the file name's); its records by their
 * heads up to its recorded end, their data checked as it is read. If a
 * head before that end does not read, or the header checks but is
 * another pool's or generation's, what it holds is not known: every
 * overlay through it is -EIO.
 */
int rpmemd_undo_load_salvage(int dirfd, const char *file, const uint8_t *uuid,
			     uint64_t size, uint64_t gen,
			     struct rpmemd_undo **out);

/* rpmemd_undo_ver -- its version trailer (all zero: none) */
const struct rpmemd_undo_ver *rpmemd_undo_ver(const struct rpmemd_undo *u);

/*
 * rpmemd_undo_set_ver -- write the version trailer, durably, with the
 * end of the records the journal holds now (v->end is not used)
 */
int rpmemd_undo_set_ver(struct rpmemd_undo *u,
			const struct rpmemd_undo_ver *v);

/*
 * rpmemd_undo_save_buf -- as rpmemd_undo_save, the blocks' contents from
 * data (len bytes of the pool at off, both multiples of a block)
 */
int rpmemd_undo_save_buf(struct rpmemd_undo *u, uint64_t off,
			 const void *data, uint64_t len);

/*
 * rpmemd_undo_overlay -- copy what the journal holds of [off, off + len)
 * over out (len bytes), tmp a buffer of RPMEMD_UNDO_REC_MAX; -EIO (*bad:
 * the pool offset of the record) if a record does not check
 */
int rpmemd_undo_overlay(const struct rpmemd_undo *u, uint64_t off,
			uint64_t len, uint8_t *out, uint8_t *tmp,
			uint64_t *bad);

/*
 * rpmemd_undo_overlay_older -- as rpmemd_undo_overlay, for journals
 * overlaid oldest first: only the blocks of [off, off + len) not marked
 * in filled (a bit per block from the block of off on) are copied, then
 * marked; a record without such a block is neither read nor checked.
 * *checked grows by the bytes of the records read and checked.
 */
int rpmemd_undo_overlay_older(const struct rpmemd_undo *u, uint64_t off,
			      uint64_t len, uint8_t *out, uint8_t *tmp,
			      uint64_t *filled, uint64_t *checked,
			      uint64_t *bad);

/* a piece of a version's record to rewrite: data of the pool at off */
struct rpmemd_undo_patch {
	size_t file;   /* which journal (the caller's index) */
	uint64_t fpos; /* where its data lies in that file */
	uint64_t off;  /* the pool offset it holds */
	uint64_t len;  /* whole blocks */
};

/*
 * says whether len bytes (whole blocks) of data are the version's image
 * at pool offset off, by a record other than the journal's: 0 if so
 */
typedef int (*rpmemd_undo_vouch_fn)(void *arg, uint64_t off,
				    const uint8_t *data, uint64_t len);

/*
 * rpmemd_undo_mend_plan -- what a repair of journal u (index file, a
 * version loaded by its heads) with data (the version's image at
 * [off, off + len), whole blocks) rewrites: the blocks of its records in
 * the range that no older journal claimed (claimed: a bit per block from
 * off's, marked now, so call it oldest first as a restore overlays
 * them), of records whose data does not check. A block is planned only
 * if its record then checks with the data sent (the rest as the file
 * holds it), or vouch says each sent block is the version's. Appended to
 * *plan (*n); tmp a buffer of RPMEMD_UNDO_REC_MAX. 0, -EILSEQ (the
 * record [*bad, *bad + *badlen) neither checks nor is vouched for),
 * -EBADMSG (a salvaged journal whose records are not all known) or
 * -errno.
 */
int rpmemd_undo_mend_plan(const struct rpmemd_undo *u, size_t file,
			  uint64_t off, uint64_t len, const uint8_t *data,
			  uint64_t *claimed, rpmemd_undo_vouch_fn vouch,
			  void *varg, uint8_t *tmp,
			  struct rpmemd_undo_patch **plan, size_t *n,
			  uint64_t *bad, uint64_t *badlen);

/*
 * rpmemd_undo_mend_write -- write patch pt (data: the range from pool
 * offset off) into the journal file fd, in place (not synced); 0 or
 * -errno
 */
int rpmemd_undo_mend_write(int fd, const struct rpmemd_undo_patch *pt,
			   const uint8_t *data, uint64_t off);

/*
 * rpmemd_undo_mend_header -- the header of the version file (generation
 * gen, the name's, of the pool with uuid and size) that does not check,
 * rebuilt from what the target knows (the pool's identity, the
 * generation, the constants) and the source its bytes hold, written
 * over it (not its version trailer) and synced only if the rebuilt
 * header hashes to the check the damaged one holds: the bytes it had.
 * 0 (mended), 1 (it checks: nothing written), -EILSEQ (no rebuild
 * checks: a flip in its source or its check; nothing written), -errno
 */
int rpmemd_undo_mend_header(int dirfd, const char *file, const uint8_t *uuid,
			    uint64_t size, uint64_t gen);

/*
 * rpmemd_undo_check -- read and check the data of every record of u
 * (tmp a buffer of RPMEMD_UNDO_REC_MAX): 0, -EIO (the first record that
 * does not check covers [*bad, *bad + *badlen) of the pool) or -errno
 */
int rpmemd_undo_check(const struct rpmemd_undo *u, uint8_t *tmp,
		      uint64_t *bad, uint64_t *badlen);

/* rpmemd_undo_close -- close (the file stays) */
void rpmemd_undo_close(struct rpmemd_undo **u);

/*
 * rpmemd_undo_unlink -- remove <pool>.undo (not synced: a journal that a
 * crash brings back is stale, as its metadata has moved on); 0 if none
 */
int rpmemd_undo_unlink(int dirfd, const char *pool);

#endif
