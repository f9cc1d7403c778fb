/* SPDX-License-Identifier: BSD-3-Clause */
/* pmem.h -- PMem namespace discovery (libndctl, libdaxctl) and DAX mounts */
#ifndef RPMEMD_PMEM_H
#define RPMEMD_PMEM_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"

#define RPMEMD_MOUNTS "/proc/self/mounts"

/* one active namespace, as `ndctl list -N` shows it */
struct rpmemd_pmem_ns {
	char ns[32];	      /* "namespace1.0" */
	char region[32];      /* "region1" */
	char dev[64];	      /* "/dev/pmem0", "/dev/dax1.0"; "" if none */
	char mode[16];	      /* fsdax, devdax, sector, raw, unknown */
	uint64_t size;	      /* usable bytes (after pfn/dax/btt metadata) */
	uint32_t align;	      /* mapping alignment (fsdax, devdax), else 0 */
	int numa;	      /* NUMA node, -1 if unknown */
	char mount[PATH_MAX]; /* fsdax: a mount of dev with DAX on, else "" */
};

/*
 * rpmemd_pmem_discover -- every active namespace of every ndctl bus into a
 * malloc'd array (free with rpmemd_pmem_free); fsdax namespaces get their
 * DAX mount point from /proc/self/mounts. A machine without PMem gives 0
 * namespaces and *list = NULL, not an error.
 */
int rpmemd_pmem_discover(struct rpmemd_pmem_ns **list, size_t *n);
/* rpmemd_pmem_discover_mounts -- the same with another mount table */
int rpmemd_pmem_discover_mounts(const char *mounts,
				struct rpmemd_pmem_ns **list, size_t *n);
/* rpmemd_pmem_free -- release a discovered list; accepts NULL */
void rpmemd_pmem_free(struct rpmemd_pmem_ns **list);

/*
 * rpmemd_pmem_auto_regions -- the regions `regions_auto = true` exports:
 * each devdax namespace (name "dax1.0", type devdax, path "/dev/dax1.0")
 * and each fsdax namespace mounted with DAX (name "pmem0", type fsdax,
 * path = the mount point), direct_pmem 0. A malloc'd array the caller
 * frees (NULL when there are none).
 */
int rpmemd_pmem_auto_regions(const struct rpmemd_pmem_ns *ns, size_t n,
			     struct rpmemd_region_cfg **out, size_t *nout);

/* rpmemd_pmem_opts_dax -- mount options (comma separated) enable DAX for
 * every file: "dax" or "dax=always" (not "dax=inode"/"dax=never") */
int rpmemd_pmem_opts_dax(const char *opts);

/*
 * rpmemd_pmem_dax_mount -- the first mount of block device dev (or of a
 * partition of it, "/dev/pmem0p1") in the mount table mounts that has DAX
 * on: 1 with the mount point in mnt[len], 0 if none, -errno.
 */
int rpmemd_pmem_dax_mount(const char *mounts, const char *dev, char *mnt,
			  size_t len);

/*
 * rpmemd_is_dax_mount -- the mount holding directory dir has DAX on: 1,
 * 0 (not DAX), -errno (table unreadable).
 */
int rpmemd_is_dax_mount(const char *dir);
/* rpmemd_is_dax_mount_in -- the same in the mount table file mounts */
int rpmemd_is_dax_mount_in(const char *mounts, const char *dir);

#endif
