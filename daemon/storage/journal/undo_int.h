/* SPDX-License-Identifier: BSD-3-Clause */
/* undo_int.h -- the journal's format, shared by undo.c and undo_mend.c */
#ifndef RPMEMD_UNDO_INT_H
#define RPMEMD_UNDO_INT_H

#include <stddef.h>
#include <stdint.h>

#include "undo.h"

#define UNDO_MAGIC "RPMEMUND"
#define UNDO_VERSION 1u
#define REC_MAGIC 0x43455255u /* "UREC" */
/* header fields: magic 8 | version 4 | bs 4 | uuid 16 | size 8 | gen 8 */
#define H_SOURCE 48 /* source str: u16 length, then its bytes */
#define H_CHECK (H_SOURCE + 2 + RPMEM_STR_MAX + 1)
/* the version trailer in the header page: magic 8 | 4 x u64 | check u64 */
#define H_VER 2048
#define VER_MAGIC "RPMEMVER"
#define VER_LEN 40
/*
 * then the end of its records: magic 8 | end u64 | check u64 (of the
 * trailer and these), written with it (older files have none)
 */
#define VER_END_MAGIC "RPMEMEND"
#define VER_ALL (VER_LEN + 8 + 24)

/* one record: where its data is in the file */
struct undo_rec {
	uint64_t off;	/* in the pool */
	uint32_t count; /* blocks */
	uint64_t fpos;	/* of its data in the journal */
	uint64_t check; /* of its data (undo_rec_check) */
};

struct rpmemd_undo {
	int fd;
	uint8_t uuid[16];
	uint64_t size; /* of the pool */
	uint64_t gen;
	char source[RPMEM_STR_MAX + 1];
	uint64_t end;	 /* of the valid records */
	uint64_t *bits;	 /* journaled blocks */
	uint64_t blocks; /* how many are */
	struct undo_rec *rec;
	size_t nrec, caprec;
	int unsynced; /* records appended since the last fdatasync */
	int heads;    /* loaded without reading the records' data */
	int partial;  /* salvaged: records past a bad head are unknown */
	/*
	 * a damaged record followed by valid ones (not a torn tail): its
	 * file offset and pool range; bad_len 0: none
	 */
	uint64_t bad_pos, bad_off, bad_len;
	struct rpmemd_undo_ver ver; /* the version trailer (zero: none) */
};

/* --- undo.c -------------------------------------------------------------- */

/* undo_rec_check -- a record's check: its data seeded with where it belongs */
uint64_t undo_rec_check(const void *data, uint64_t off, uint32_t count,
		   uint64_t gen);
/* undo_hdr_encode -- the header of u into buf[RPMEMD_UNDO_HDR] */
void undo_hdr_encode(const struct rpmemd_undo *u, uint8_t *buf);
/* undo_hdr_decode -- a header into u; -EBADMSG if it is not a valid one */
int undo_hdr_decode(const uint8_t *buf, struct rpmemd_undo *u);
/* undo_pwrite_full -- all of buf at off */
int undo_pwrite_full(int fd, const void *buf, size_t len, uint64_t off);
/* undo_rec_data -- the data of record r into buf, checked; 0 or -EIO/-errno */
int undo_rec_data(const struct rpmemd_undo *u, const struct undo_rec *r,
	     uint8_t *buf);

#endif
