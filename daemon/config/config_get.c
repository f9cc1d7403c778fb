/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * config_get.c -- what every section of rpmemd.conf is read with (config.c,
 * config_region.c): errors with file and line, unknown settings, typed
 * members, region types
 */
#include <errno.h>
#include <libconfig.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "config_int.h"
#include "util.h"

/*
 * cfg_err -- "FILE:LINE: SETTING: reason" into the caller's buffer; the
 * line comes from the setting (s may be NULL). Returns -EINVAL.
 */
int __attribute__((format(printf, 4, 5)))
cfg_err(struct cfg_ctx *c, const config_setting_t *s, const char *what,
	const char *fmt, ...)
{
	char msg[RPMEM_MSG_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	unsigned line = s ? config_setting_source_line(s) : 0;
	if (!c->err || !c->errlen)
		return -EINVAL;
	if (line && what)
		snprintf(c->err, c->errlen, "%s:%u: %s: %s", c->file, line,
			 what, msg);
	else if (what)
		snprintf(c->err, c->errlen, "%s: %s: %s", c->file, what, msg);
	else
		snprintf(c->err, c->errlen, "%s: %s", c->file, msg);
	return -EINVAL;
}

int rpmemd_region_type_parse(const char *s)
{
	if (!strcmp(s, "dir"))
		return RPMEM_REGION_DIR;
	if (!strcmp(s, "fsdax"))
		return RPMEM_REGION_FSDAX;
	if (!strcmp(s, "devdax"))
		return RPMEM_REGION_DEVDAX;
	return -1;
}

/* check_known -- every child of group s is one of the names in known[] */
int check_known(struct cfg_ctx *c, const config_setting_t *s,
		const char *prefix, const char *const *known)
{
	int n = config_setting_length(s);
	for (int i = 0; i < n; i++) {
		const config_setting_t *e =
			config_setting_get_elem(s, (unsigned)i);
		const char *name = config_setting_name(e);
		int ok = 0;
		if (!name)
			continue;
		for (const char *const *k = known; *k; k++)
			if (!strcmp(name, *k))
				ok = 1;
		if (!ok) {
			char what[RPMEMD_SETTING_MAX];
			snprintf(what, sizeof(what), "%s%s", prefix, name);
			return cfg_err(c, e, what, "unknown setting");
		}
	}
	return 0;
}

/* get_bool -- an optional boolean member of group g (default 0) */
int get_bool(struct cfg_ctx *c, const config_setting_t *g,
	     const char *name, const char *what, int *out)
{
	const config_setting_t *s = config_setting_get_member(g, name);
	if (!s)
		return 0;
	if (config_setting_type(s) != CONFIG_TYPE_BOOL)
		return cfg_err(c, s, what, "must be true or false");
	*out = config_setting_get_bool(s);
	return 0;
}

/* get_int -- an optional integer member of g within [min, max] */
int get_int(struct cfg_ctx *c, const config_setting_t *g,
	    const char *name, long long min, long long max,
	    long long *out)
{
	const config_setting_t *s = config_setting_get_member(g, name);
	if (!s)
		return 0;
	int t = config_setting_type(s);
	if (t != CONFIG_TYPE_INT && t != CONFIG_TYPE_INT64)
		return cfg_err(c, s, name, "must be an integer");
	long long v = config_setting_get_int64(s);
	if (v < min || v > max)
		return cfg_err(c, s, name, "%lld is out of range %lld..%lld", v,
			       min, max);
	*out = v;
	return 0;
}

/* get_str -- an optional string member of g; NULL if absent */
int get_str(struct cfg_ctx *c, const config_setting_t *g,
	    const char *name, const char *what, const char **out)
{
	const config_setting_t *s = config_setting_get_member(g, name);
	*out = NULL;
	if (!s)
		return 0;
	if (config_setting_type(s) != CONFIG_TYPE_STRING)
		return cfg_err(c, s, what, "must be a string");
	*out = config_setting_get_string(s);
	return 0;
}
