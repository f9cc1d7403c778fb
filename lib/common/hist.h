/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * hist.h -- the text of a generation history file (a local file's
 * FILE.rpmemgen, lib/client/sync/history.c; a pool promoted in place's
 * <pool>.rpmemgen, daemon/storage/history/store_gen.c): its head, read and
 * written in one place
 *
 *	rpmem-history 1
 *	ids=9f3c0a1e22b4d5c6,51aa...
 *	size=1073741824
 *	mtime=1700000000.123456789
 *
 * Optional lines may follow the head (lib/client/sync/history.c's); a reader
 * of the head alone stops before them.
 */
#ifndef RPMEM_HIST_H
#define RPMEM_HIST_H

#include <stddef.h>
#include <stdint.h>

#include "proto.h"

#define RPMEM_HIST_MAGIC "rpmem-history 1\n"
#define RPMEM_HIST_SUFFIX ".rpmemgen"

/* the head of a history */
struct rpmem_hist_head {
	uint64_t ids[RPMEM_MAX_GENERATIONS]; /* newest first */
	unsigned count;			     /* 1 .. RPMEM_MAX_GENERATIONS */
	uint64_t size;			     /* the file's, when recorded */
	uint64_t sec, nsec;		     /* its mtime then */
};

/*
 * rpmem_hist_parse -- the head of a history's text into *h: 0, or
 * -EBADMSG if text does not start with one (its nsec is as written)
 */
int rpmem_hist_parse(const char *text, struct rpmem_hist_head *h);
/*
 * rpmem_hist_fmt -- h's head, then tail (optional lines, "" if none), as
 * a history's text into out[len]: its length, or -ENOBUFS
 */
int rpmem_hist_fmt(const struct rpmem_hist_head *h, const char *tail,
		   char *out, size_t len);

#endif
