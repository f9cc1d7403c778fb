/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pmdk_ex_common.h -- stand-in for PMDK's src/examples/ex_common.h, which
 * the map example includes and Debian's libpmemobj-dev does not ship
 * (tests/tools/build_pmdk_examples.sh copies it in as ex_common.h): what the
 * map, tree_map and hashmap sources use of it, as PMDK defines it on Linux
 */
#ifndef PMDK_EX_COMMON_H
#define PMDK_EX_COMMON_H

#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#define CREATE_MODE_RW (S_IWUSR | S_IRUSR)

#ifndef MIN
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#endif

/* file_exists -- 0 if file exists, as access(2) */
static inline int
file_exists(char const *file)
{
	return access(file, F_OK);
}

/* find_last_set_64 -- index of the highest set bit of val */
static inline unsigned
find_last_set_64(uint64_t val)
{
	return 64 - __builtin_clzll(val) - 1;
}

#endif
