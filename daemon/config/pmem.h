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
	uint64_t devno;	      /* device number of dev, 0 if unknown */
	int chr;	      /* dev is a character device (devdax) */
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

/* rpmemd_pmem_mode_code -- enum rpmem_ns_mode of a mode name */
uint8_t rpmemd_pmem_mode_code(const char *mode);

/*
 * rpmemd_pmem_publish -- make *list (n namespaces, taken over; *list is
 * set to NULL) what rpmemd_pmem_published returns from now on, in any
 * thread; the list published before is freed. NULL, 0 publishes none.
 */
void rpmemd_pmem_publish(struct rpmemd_pmem_ns **list, size_t n);
/*
 * rpmemd_pmem_published -- a malloc'd copy of the published namespaces
 * (NULL and 0 when there are none; free with rpmemd_pmem_free), -ENOMEM
 */
int rpmemd_pmem_published(struct rpmemd_pmem_ns **list, size_t *n);

/*
 * rpmemd_pmem_region_ns -- the namespace of v[n] that a region of type
 * (enum rpmem_region_type) at path lies on: a devdax region on the
 * namespace's character device, a dir or fsdax region on a file system
 * on its block device or on a partition of it. Its index, or -1 (none,
 * or path cannot be examined).
 */
int rpmemd_pmem_region_ns(const struct rpmemd_pmem_ns *v, size_t n,
			  uint8_t type, const char *path);
/*
 * rpmemd_pmem_dev_ns -- the same given what the region is on: device
 * number dev (a character device if chr) and, for a partition, the
 * number of its whole disk (else 0)
 */
int rpmemd_pmem_dev_ns(const struct rpmemd_pmem_ns *v, size_t n, int chr,
		       uint64_t dev, uint64_t disk);

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
