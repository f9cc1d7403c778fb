/* SPDX-License-Identifier: BSD-3-Clause */
/* devdax.h -- devdax region: a pool table carving a /dev/daxX.Y into pools */
#ifndef RPMEMD_DEVDAX_H
#define RPMEMD_DEVDAX_H

#include <stddef.h>
#include <stdint.h>

#include "meta.h"
#include "proto.h"

/*
 * On-media layout (all integers little-endian; see devdax_table.c for the
 * crash-consistency argument):
 *
 *	0        header block (4 KiB): magic "RPMEMDAX", version, uuid,
 *	         device size, alignment, table size, slot size, pool count,
 *	         checksum
 *	4096     max_pools slot pairs of 2 x 512 bytes (A, B)
 *	table    pools, each at an offset aligned to the region alignment
 *	size     (table size = 4096 + max_pools * 1024 rounded up to it)
 */
#define RPMEMD_DEVDAX_MAGIC "RPMEMDAX"
#define RPMEMD_DEVDAX_VERSION 1
#define RPMEMD_DEVDAX_HDR_BLOCK 4096
#define RPMEMD_DEVDAX_SLOT_SIZE 512
#define RPMEMD_DEVDAX_MIN_ALIGN 4096
#define RPMEMD_DEVDAX_DEFAULT_POOLS 1020 /* table of exactly 1 MiB */
#define RPMEMD_DEVDAX_MAX_POOLS 65536

/* what rpmemd_devdax_open may do to a device that holds no pool table */
enum rpmemd_devdax_format {
	RPMEMD_DEVDAX_NO_FORMAT = 0,	/* blank device: -ENODATA */
	RPMEMD_DEVDAX_FORMAT_BLANK = 1, /* format an all-zero header block */
	RPMEMD_DEVDAX_FORMAT_FORCE = 2, /* also overwrite a foreign signature
					 * or a corrupt table: destroys data */
};

struct rpmemd_devdax_opts {
	int format;	    /* enum rpmemd_devdax_format */
	uint64_t align;	    /* at format: pool alignment, raised to the
			     * device alignment and 4 KiB; 0 = device's */
	uint32_t max_pools; /* at format: table entries; 0 = default */
};

struct rpmemd_devdax;

/* one pool of the table; meta.size is the size asked for at create */
struct rpmemd_devdax_pool {
	char name[RPMEM_NAME_MAX + 1];
	uint64_t offset; /* from the start of the device, aligned */
	uint64_t extent; /* bytes reserved: meta.size rounded up to align */
	struct rpmemd_meta meta;
};

struct rpmemd_devdax_info {
	uint8_t uuid[16];	/* of the pool table (set at format) */
	uint64_t dev_size;	/* bytes the table manages */
	uint64_t align;		/* pool alignment */
	uint64_t data_offset;	/* table size: first byte usable by pools */
	uint32_t max_pools;
	uint32_t npools;
	uint64_t free;		/* unreserved bytes */
	uint64_t largest_free;	/* largest aligned free extent */
	int granularity;	/* enum pmem2_granularity of the mapping */
};

/*
 * rpmemd_devdax_open -- map the whole device (or a regular file standing
 * in for one) with libpmem2 and load its pool table; format is an enum
 * rpmemd_devdax_format. The device is locked (flock) against a second
 * user. Errors: -ENODATA blank and not allowed to format, -EMEDIUMTYPE
 * foreign signature, -EBADMSG corrupt header, -EUCLEAN inconsistent
 * table, -EBUSY used by another process, -ENOSPC too small to format.
 */
int rpmemd_devdax_open(const char *path, int format,
		       struct rpmemd_devdax **out);
/* rpmemd_devdax_open_opts -- the same with format-time options */
int rpmemd_devdax_open_opts(const char *path,
			    const struct rpmemd_devdax_opts *opts,
			    struct rpmemd_devdax **out);
/* rpmemd_devdax_close -- unmap, unlock; accepts NULL, sets *dd = NULL */
void rpmemd_devdax_close(struct rpmemd_devdax **dd);

/* rpmemd_devdax_info -- sizes and free space of the region */
void rpmemd_devdax_info(struct rpmemd_devdax *dd,
			struct rpmemd_devdax_info *info);

/*
 * rpmemd_devdax_list -- all pools sorted by name, in a malloc'd array the
 * caller frees (NULL when there are none).
 */
int rpmemd_devdax_list(struct rpmemd_devdax *dd,
		       struct rpmemd_devdax_pool **pools, size_t *n);

/*
 * rpmemd_devdax_create -- reserve an aligned extent (first fit), zero it
 * and add the pool in state empty with a random uuid; out may be NULL.
 * -EINVAL bad name or size, -EEXIST, -ENOSPC no extent large enough or
 * table full (rpmemd_devdax_info tells the free space; it is logged).
 */
int rpmemd_devdax_create(struct rpmemd_devdax *dd, const char *name,
			 uint64_t size, struct rpmemd_devdax_pool *out);

/* rpmemd_devdax_remove -- drop the pool; -ENOENT if there is none */
int rpmemd_devdax_remove(struct rpmemd_devdax *dd, const char *name);

/* rpmemd_devdax_lookup -- the pool named name; -ENOENT if there is none */
int rpmemd_devdax_lookup(struct rpmemd_devdax *dd, const char *name,
			 struct rpmemd_devdax_pool *out);

/* most generation ids a devdax pool keeps (its slot has room for 11) */
#define RPMEMD_DEVDAX_HIST 11u

/*
 * rpmemd_devdax_set_gen -- the pool's role and generation history become
 * m's (its newest RPMEMD_DEVDAX_HIST ids); -ENOENT if there is none
 */
int rpmemd_devdax_set_gen(struct rpmemd_devdax *dd, const char *name,
			  const struct rpmemd_meta *m);

/*
 * rpmemd_devdax_set_state -- a state change under rpmemd_meta_transition
 * rules (syncing -> consistent bumps the generation); source (may be
 * NULL = keep) is recorded. -ENOENT, -EINVAL for a forbidden transition.
 */
int rpmemd_devdax_set_state(struct rpmemd_devdax *dd, const char *name,
			    uint8_t state, const char *source);

/*
 * rpmemd_devdax_set_meta -- the pool's state, generation, last sync and
 * source become m's, as they are (a rollback goes back to a generation);
 * -ENOENT if there is no such pool
 */
int rpmemd_devdax_set_meta(struct rpmemd_devdax *dd, const char *name,
			   const struct rpmemd_meta *m);

/*
 * rpmemd_devdax_pool_addr -- where the pool is mapped (base + offset) and
 * its size; valid until rpmemd_devdax_close.
 */
int rpmemd_devdax_pool_addr(struct rpmemd_devdax *dd, const char *name,
			    void **addr, uint64_t *size);

/* rpmemd_devdax_persist -- make [addr, addr + len) of a pool durable */
int rpmemd_devdax_persist(struct rpmemd_devdax *dd, const void *addr,
			  size_t len);

#endif
