/* SPDX-License-Identifier: BSD-3-Clause */
/* retain.h -- which versions a retention policy keeps (as restic forget) */
#ifndef RPMEM_RETAIN_H
#define RPMEM_RETAIN_H

#include <stddef.h>
#include <stdint.h>

/*
 * A retention policy, written "last=10,hourly=24,daily=7,weekly=4,
 * monthly=12" (any subset, any order): the newest `last` versions are
 * kept, and the newest version of each of the newest `hourly` hours
 * (days, weeks from Monday, months; UTC) that have one. A version kept
 * by any rule is kept. An empty policy (all zero) keeps everything.
 */
struct rpmem_keep {
	unsigned last, hourly, daily, weekly, monthly;
};

/* longest policy text */
#define RPMEM_KEEP_MAX 128

/*
 * rpmem_keep_parse -- s into *k; 0, or -EINVAL with why in err[errlen]
 * (*k unchanged)
 */
int rpmem_keep_parse(const char *s, struct rpmem_keep *k, char *err,
		     size_t errlen);

/* rpmem_keep_format -- k as text into buf[len] ("" if it keeps all) */
void rpmem_keep_format(const struct rpmem_keep *k, char *buf, size_t len);

/* rpmem_keep_all -- k keeps every version (no rule set) */
int rpmem_keep_all(const struct rpmem_keep *k);

/*
 * rpmem_keep_apply -- keep[i] = 1 for the n versions (unix times time[],
 * newest first) that k keeps, 0 for the others
 */
void rpmem_keep_apply(const struct rpmem_keep *k, const uint64_t *time,
		      size_t n, uint8_t *keep);

#endif
