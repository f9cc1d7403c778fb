/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * config_int.h -- what config.c, config_region.c and config_get.c share,
 * nothing else
 */
#ifndef RPMEMD_CONFIG_INT_H
#define RPMEMD_CONFIG_INT_H

#include <stddef.h>
#include <libconfig.h>

#include "config.h"

/* parse state: where errors go and which mount table to consult */
struct cfg_ctx {
	const char *file;
	const char *mounts;
	char *err;
	size_t errlen;
};

/* --- config_get.c --------------------------------------------------------- */

/*
 * cfg_err -- "FILE:LINE: SETTING: reason" into the caller's buffer; the
 * line comes from the setting (s may be NULL). Returns -EINVAL.
 */
int __attribute__((format(printf, 4, 5)))
cfg_err(struct cfg_ctx *c, const config_setting_t *s, const char *what,
	const char *fmt, ...);
/* check_known -- every child of group s is one of the names in known[] */
int check_known(struct cfg_ctx *c, const config_setting_t *s,
		const char *prefix, const char *const *known);
/* get_bool -- an optional boolean member of group g (default 0) */
int get_bool(struct cfg_ctx *c, const config_setting_t *g, const char *name,
	     const char *what, int *out);
/* get_int -- an optional integer member of g within [min, max] */
int get_int(struct cfg_ctx *c, const config_setting_t *g, const char *name,
	    long long min, long long max, long long *out);
/* get_str -- an optional string member of g; NULL if absent */
int get_str(struct cfg_ctx *c, const config_setting_t *g, const char *name,
	    const char *what, const char **out);

/* --- config_region.c ------------------------------------------------------ */

/* parse_regions -- regions = ( { ... }, ... ) */
int parse_regions(struct cfg_ctx *c, const config_setting_t *root,
		  struct rpmemd_config *cfg);
/* parse_region_check -- region_check = "strict" | "warn" */
int parse_region_check(struct cfg_ctx *c, const config_setting_t *root,
		       struct rpmemd_config *cfg);

#endif
