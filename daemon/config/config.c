/* SPDX-License-Identifier: BSD-3-Clause */
/* config.c -- parse and validate rpmemd.conf with libconfig */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <libconfig.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "log.h"
#include "net.h"
#include "sock.h"
#include "pmem.h"
#include "tls.h"
#include "util.h"

#define DEFAULT_LISTEN "127.0.0.1"
#define DEFAULT_MAX_SESSIONS 64
#define MAX_SESSIONS_LIMIT 4096
#define DEFAULT_HANDSHAKE_TIMEOUT 10
#define DEFAULT_FRAME_TIMEOUT 60
#define DEFAULT_WRITER_IDLE_TIMEOUT 600
#define DEFAULT_SESSION_IDLE_TIMEOUT 600
#define DEFAULT_READER_IDLE_TIMEOUT 600
#define DEFAULT_ADMIN_RESERVED 2
#define DEFAULT_MAX_UNAUTH 64
#define DEFAULT_MAX_UNAUTH_PER_ADDR 8
#define DEFAULT_EVENT_QUEUE 1024
#define BWLIMIT_MIN 4096 /* bytes per second */

/* parse state: where errors go and which mount table to consult */
struct cfg_ctx {
	const char *file;
	const char *mounts;
	char *err;
	size_t errlen;
};

/*
 * cfg_err -- "FILE:LINE: SETTING: reason" into the caller's buffer; the
 * line comes from the setting (s may be NULL). Returns -EINVAL.
 */
static int __attribute__((format(printf, 4, 5)))
cfg_err(struct cfg_ctx *c, const config_setting_t *s, const char *what,
	const char *fmt, ...)
{
	char msg[512];
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
static int check_known(struct cfg_ctx *c, const config_setting_t *s,
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
			char what[128];
			snprintf(what, sizeof(what), "%s%s", prefix, name);
			return cfg_err(c, e, what, "unknown setting");
		}
	}
	return 0;
}

/* get_bool -- an optional boolean member of group g (default 0) */
static int get_bool(struct cfg_ctx *c, const config_setting_t *g,
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
static int get_int(struct cfg_ctx *c, const config_setting_t *g,
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
static int get_str(struct cfg_ctx *c, const config_setting_t *g,
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

/* addr_valid -- a numeric IPv4/IPv6 address or "localhost" */
static int addr_valid(const char *a)
{
	struct in6_addr a6;
	struct in_addr a4;
	return !strcmp(a, "localhost") || inet_pton(AF_INET, a, &a4) == 1 ||
	       inet_pton(AF_INET6, a, &a6) == 1;
}

/* parse_listen -- listen = "addr" or ["addr", ...] */
static int parse_listen(struct cfg_ctx *c, const config_setting_t *root,
			struct rpmemd_config *cfg)
{
	const config_setting_t *s = config_setting_get_member(root, "listen");
	if (!s) {
		cfg->nlisten = 1;
		rpmem_strlcpy(cfg->listen[0], DEFAULT_LISTEN,
			      sizeof(cfg->listen[0]));
		return 0;
	}
	int t = config_setting_type(s);
	int n = 1;
	if (t == CONFIG_TYPE_LIST || t == CONFIG_TYPE_ARRAY)
		n = config_setting_length(s);
	else if (t != CONFIG_TYPE_STRING)
		return cfg_err(c, s, "listen",
			       "must be a list of addresses, e.g. [\"127.0.0.1\"]");
	if (n == 0)
		return cfg_err(c, s, "listen", "needs at least one address");
	if (n > RPMEMD_MAX_LISTEN)
		return cfg_err(c, s, "listen", "at most %d addresses",
			       RPMEMD_MAX_LISTEN);
	for (int i = 0; i < n; i++) {
		const config_setting_t *e =
			t == CONFIG_TYPE_STRING ? s :
			config_setting_get_elem(s, (unsigned)i);
		char what[32];
		snprintf(what, sizeof(what), "listen[%d]", i);
		const char *a = config_setting_get_string(e);
		if (!a)
			return cfg_err(c, e, what, "must be a string");
		if (!addr_valid(a) || strlen(a) >= RPMEMD_ADDR_MAX)
			return cfg_err(c, e, what,
				       "'%s' is not a numeric IPv4/IPv6 address",
				       a);
		for (unsigned j = 0; j < cfg->nlisten; j++)
			if (!strcmp(cfg->listen[j], a))
				return cfg_err(c, e, what,
					       "'%s' is listed twice", a);
		rpmem_strlcpy(cfg->listen[cfg->nlisten++], a,
			      sizeof(cfg->listen[0]));
	}
	return 0;
}

/* parse_log -- log = { level = "info"; target = "stderr" | "syslog"; } */
static int parse_log(struct cfg_ctx *c, const config_setting_t *root,
		     struct rpmemd_config *cfg)
{
	static const char *const known[] = { "level", "target", NULL };
	const config_setting_t *g = config_setting_get_member(root, "log");
	const char *v;
	int ret;
	if (!g)
		return 0;
	if (config_setting_type(g) != CONFIG_TYPE_GROUP)
		return cfg_err(c, g, "log",
			       "must be a group: log = { level = \"info\"; };");
	if ((ret = check_known(c, g, "log.", known)))
		return ret;
	if ((ret = get_str(c, g, "level", "log.level", &v)))
		return ret;
	if (v) {
		int prio = rpmem_log_parse_prio(v);
		if (prio < LOG_ERR)
			return cfg_err(c, config_setting_get_member(g, "level"),
				       "log.level",
				       "'%s' is not one of err, warning, notice, info, debug",
				       v);
		cfg->log_level = prio;
	}
	if ((ret = get_str(c, g, "target", "log.target", &v)))
		return ret;
	if (v) {
		if (!strcmp(v, "stderr"))
			cfg->log_target = RPMEMD_LOG_STDERR;
		else if (!strcmp(v, "syslog"))
			cfg->log_target = RPMEMD_LOG_SYSLOG;
		else
			return cfg_err(c, config_setting_get_member(g, "target"),
				       "log.target",
				       "'%s' is not one of stderr, syslog", v);
	}
	return 0;
}

/* mnt_holds -- mount point mnt contains path (component boundary) */
static int mnt_holds(const char *mnt, const char *path)
{
	size_t n = strlen(mnt);
	if (!strcmp(mnt, "/"))
		return path[0] == '/';
	return !strncmp(mnt, path, n) && (path[n] == '/' || path[n] == '\0');
}

/* path_inside -- directory a is b or below b */
static int path_inside(const char *a, const char *b)
{
	return mnt_holds(b, a);
}

/*
 * regions_clash -- a region of type at path would share storage with
 * region o: the same device, or directories one inside the other
 */
static int regions_clash(const struct rpmemd_region_cfg *o, uint8_t type,
			 const char *path)
{
	int dev_a = o->type == RPMEM_REGION_DEVDAX;
	int dev_b = type == RPMEM_REGION_DEVDAX;
	if (dev_a || dev_b)
		return dev_a == dev_b && !strcmp(o->path, path);
	return path_inside(path, o->path) || path_inside(o->path, path);
}

/* the smallest version: its header and one record of one block */
#define VERSION_MIN (4096 + 32 + 4096)

/*
 * parse_age -- "90m", "36h", "7d", "2w" (a bare number is seconds) into
 * seconds, at most 10 years; -EINVAL otherwise
 */
static int parse_age(const char *s, uint64_t *out)
{
	static const struct {
		const char *unit;
		uint64_t s;
	} units[] = { { "", 1 },	 { "s", 1 },	   { "m", 60 },
		      { "h", 3600 }, { "d", 86400 }, { "w", 604800 } };
	char *end;

	if (!s || !isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	for (size_t i = 0; !errno && i < sizeof(units) / sizeof(units[0]);
	     i++) {
		if (strcmp(end, units[i].unit))
			continue;
		if (v > 10ull * 366 * 86400 / units[i].s)
			return -EINVAL;
		*out = v * units[i].s;
		return 0;
	}
	return -EINVAL;
}

/*
 * parse_space -- what space pressure may take from a region's versions:
 * versions_floor = N (the newest N of each pool never; default 1) and
 * versions_full = "refuse" | "prune" (a sync that cannot keep the image
 * it replaces: refused, the default, or let through)
 */
static int parse_space(struct cfg_ctx *c, const config_setting_t *g,
		       const char *pfx, struct rpmemd_region_cfg *r)
{
	const config_setting_t *f = config_setting_get_member(g,
							      "versions_full");
	const config_setting_t *n = config_setting_get_member(g,
							      "versions_floor");
	long long floor = 1;
	char what[64];
	const char *v;
	int ret;

	snprintf(what, sizeof(what), "%sversions_floor", pfx);
	if (n && !r->versions)
		return cfg_err(c, n, what, "needs versions = \"...\" too");
	if ((ret = get_int(c, g, "versions_floor", 1, 100000, &floor)))
		return ret;
	r->versions_floor = (unsigned)floor;
	snprintf(what, sizeof(what), "%sversions_min_age", pfx);
	if ((ret = get_str(c, g, "versions_min_age", what, &v)))
		return ret;
	if (v && !r->versions)
		return cfg_err(c, config_setting_get_member(g,
							    "versions_min_age"),
			       what, "needs versions = \"...\" too");
	if (v && parse_age(v, &r->versions_min_age))
		return cfg_err(c, config_setting_get_member(g,
							    "versions_min_age"),
			       what,
			       "'%s' is not an age like \"7d\" (s, m, h, d, w; at most 10 years)",
			       v);
	snprintf(what, sizeof(what), "%sversions_full", pfx);
	if (f && !r->versions)
		return cfg_err(c, f, what, "needs versions = \"...\" too");
	if ((ret = get_str(c, g, "versions_full", what, &v)))
		return ret;
	if (v && strcmp(v, "refuse") && strcmp(v, "prune"))
		return cfg_err(c, f, what,
			       "'%s' is not one of refuse, prune", v);
	r->versions_full_prune = v && !strcmp(v, "prune");
	return 0;
}

/*
 * parse_versions -- versions = "all" or a retention policy ("last=10,
 * daily=7"); versions_quota = "10G", versions_floor, versions_full
 * (need versions)
 */
static int parse_versions(struct cfg_ctx *c, const config_setting_t *g,
			  const char *pfx, struct rpmemd_region_cfg *r)
{
	const config_setting_t *q = config_setting_get_member(g,
							      "versions_quota");
	char what[64], why[256];
	const char *v;
	int ret;

	snprintf(what, sizeof(what), "%sversions", pfx);
	if ((ret = get_str(c, g, "versions", what, &v)))
		return ret;
	if (v && strcmp(v, "all") &&
	    rpmem_keep_parse(v, &r->keep, why, sizeof(why)))
		return cfg_err(c, config_setting_get_member(g, "versions"),
			       what, "%s (or \"all\")", why);
	if (v && r->type == RPMEM_REGION_DEVDAX)
		return cfg_err(c, config_setting_get_member(g, "versions"),
			       what, "a devdax region keeps no versions (its undo journals are only those of syncs in progress)");
	r->versions = v != NULL;
	if ((ret = parse_space(c, g, pfx, r)))
		return ret;
	snprintf(what, sizeof(what), "%sversions_quota", pfx);
	if (!q)
		return 0;
	if (!v)
		return cfg_err(c, q, what, "needs versions = \"...\" too");
	if (config_setting_type(q) != CONFIG_TYPE_STRING ||
	    rpmem_parse_size(config_setting_get_string(q), &r->versions_quota))
		return cfg_err(c, q, what, "must be a size like \"10G\"");
	if (r->versions_quota < VERSION_MIN)
		return cfg_err(c, q, what,
			       "%llu bytes is smaller than the smallest version (%u bytes: a 4 KiB header and one 4 KiB block)",
			       (unsigned long long)r->versions_quota,
			       VERSION_MIN);
	return 0;
}

/*
 * parse_undo_dir -- a devdax region's undo_dir: an existing directory
 * rpmemd may write, on a file system (not the device)
 */
static int parse_undo_dir(struct cfg_ctx *c, const config_setting_t *g,
			  const char *pfx, struct rpmemd_region_cfg *r)
{
	const config_setting_t *s = config_setting_get_member(g, "undo_dir");
	char what[64], real[PATH_MAX];
	const char *v;
	struct stat st;
	int ret;

	snprintf(what, sizeof(what), "%sundo_dir", pfx);
	if ((ret = get_str(c, g, "undo_dir", what, &v)) || !v)
		return ret;
	if (r->type != RPMEM_REGION_DEVDAX)
		return cfg_err(c, s, what,
			       "only a devdax region takes undo_dir (a dir or fsdax region keeps its journals in %s/.rpmemd)",
			       r->path);
	if (v[0] != '/')
		return cfg_err(c, s, what, "'%s' is not an absolute path", v);
	if (!realpath(v, real) || stat(real, &st))
		return cfg_err(c, s, what,
			       "'%s': %s (create it: a directory on a file system, where rpmemd keeps the undo journals of syncs into the region's pools)",
			       v, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return cfg_err(c, s, what,
			       "'%s' is not a directory: the journals need a file system (not the device itself)",
			       v);
	if (access(real, W_OK | X_OK))
		return cfg_err(c, s, what, "'%s' is not writable: %s", v,
			       strerror(errno));
	if (strlen(real) > RPMEM_STR_MAX)
		return cfg_err(c, s, what, "'%s' is longer than %d characters",
			       real, RPMEM_STR_MAX);
	rpmem_strlcpy(r->undo_dir, real, sizeof(r->undo_dir));
	return 0;
}

/*
 * undo_dir_clash -- why the undo_dir of region r (devdax) may not be
 * where it is, or NULL: in or around another region's directory (a
 * journal <pool>.undo could be a pool file there), or another devdax region's undo_dir
 * (pools of the same name would share a journal)
 */
static const char *undo_dir_clash(const struct rpmemd_region_cfg *r,
				  const struct rpmemd_region_cfg *o)
{
	if (r == o || !r->undo_dir[0])
		return NULL;
	if (o->type == RPMEM_REGION_DEVDAX)
		return strcmp(o->undo_dir, r->undo_dir) ? NULL :
		       "is also the undo_dir of region";
	return path_inside(r->undo_dir, o->path) ||
			       path_inside(o->path, r->undo_dir) ?
		       "overlaps the directory of region" :
		       NULL;
}

/* check_undo_dirs -- no undo_dir clashes with another region */
static int check_undo_dirs(struct cfg_ctx *c, const config_setting_t *list,
			   const struct rpmemd_config *cfg)
{
	for (unsigned i = 0; i < cfg->nregions; i++) {
		const struct rpmemd_region_cfg *r = &cfg->regions[i];
		for (unsigned j = 0; j < cfg->nregions; j++) {
			const char *why = undo_dir_clash(r, &cfg->regions[j]);
			char what[64];
			if (!why)
				continue;
			snprintf(what, sizeof(what), "regions[%u].undo_dir", i);
			return cfg_err(c,
				       config_setting_get_member(
					       config_setting_get_elem(list, i),
					       "undo_dir"),
				       what, "'%s' %s '%s' (%s)", r->undo_dir,
				       why, cfg->regions[j].name,
				       cfg->regions[j].path);
		}
	}
	return 0;
}

/*
 * parse_scrub_interval -- scrub_interval = "12h", "1d", "1w" (s, m, h, d,
 * w; from 1 s to 52 weeks): rpmemd scrubs the region's pools that often
 */
static int parse_scrub_interval(struct cfg_ctx *c, const config_setting_t *g,
				const char *pfx, struct rpmemd_region_cfg *r)
{
	static const struct {
		char unit;
		uint64_t s;
	} units[] = { { 's', 1 },	  { 'm', 60 },	       { 'h', 3600 },
		      { 'd', 86400 }, { 'w', 7 * 86400 } };
	const config_setting_t *s = config_setting_get_member(g,
							      "scrub_interval");
	unsigned long long n;
	char what[64], *end;
	const char *v;
	int ret;

	snprintf(what, sizeof(what), "%sscrub_interval", pfx);
	if ((ret = get_str(c, g, "scrub_interval", what, &v)) || !v)
		return ret;
	errno = 0;
	n = strtoull(v, &end, 10);
	for (size_t i = 0; v[0] >= '0' && v[0] <= '9' && !errno &&
			   i < sizeof(units) / sizeof(units[0]);
	     i++) {
		if (end[0] != units[i].unit || end[1] || !n ||
		    n > 52ull * 7 * 86400 / units[i].s)
			continue;
		r->scrub_interval_ns = n * units[i].s * 1000000000ull;
		return 0;
	}
	return cfg_err(c, s, what,
		       "'%s' is not an interval from 1s to 52w (a number and s, m, h, d or w: \"1d\")",
		       v);
}

/* parse_region -- one element of regions = ( { ... }, ... ) */
static int parse_region(struct cfg_ctx *c, const config_setting_t *g, int idx,
			struct rpmemd_config *cfg)
{
	static const char *const known[] = { "name", "type", "path",
					     "direct_pmem", "versions",
					     "versions_quota", "versions_floor",
					     "versions_min_age", "versions_full",
					     "undo_dir", "scrub_interval", NULL };
	struct rpmemd_region_cfg *r = &cfg->regions[cfg->nregions];
	char pfx[32], what[64];
	const char *name, *type, *path;
	int ret;

	snprintf(pfx, sizeof(pfx), "regions[%d].", idx);
	if (config_setting_type(g) != CONFIG_TYPE_GROUP)
		return cfg_err(c, g, pfx,
			       "must be a group: { name = \"...\"; path = \"...\"; }");
	if ((ret = check_known(c, g, pfx, known)))
		return ret;

	snprintf(what, sizeof(what), "%sname", pfx);
	if ((ret = get_str(c, g, "name", what, &name)))
		return ret;
	if (!name)
		return cfg_err(c, g, what, "missing");
	if (!rpmem_name_valid(name))
		return cfg_err(c, config_setting_get_member(g, "name"), what,
			       "'%s' is not a valid name (" RPMEM_NAME_RULE ")",
			       name);
	for (unsigned i = 0; i < cfg->nregions; i++)
		if (!strcmp(cfg->regions[i].name, name))
			return cfg_err(c, config_setting_get_member(g, "name"),
				       what, "region '%s' is defined twice",
				       name);
	rpmem_strlcpy(r->name, name, sizeof(r->name));

	snprintf(what, sizeof(what), "%stype", pfx);
	if ((ret = get_str(c, g, "type", what, &type)))
		return ret;
	int t = type ? rpmemd_region_type_parse(type) : RPMEM_REGION_DIR;
	if (t < 0)
		return cfg_err(c, config_setting_get_member(g, "type"), what,
			       "'%s' is not one of dir, fsdax, devdax", type);
	r->type = (uint8_t)t;

	snprintf(what, sizeof(what), "%sdirect_pmem", pfx);
	if ((ret = get_bool(c, g, "direct_pmem", what, &r->direct_pmem)))
		return ret;
	if (r->direct_pmem && r->type == RPMEM_REGION_DIR)
		return cfg_err(c, config_setting_get_member(g, "direct_pmem"),
			       what,
			       "only an fsdax or devdax region can declare direct_pmem");

	if ((ret = parse_versions(c, g, pfx, r)))
		return ret;
	if ((ret = parse_scrub_interval(c, g, pfx, r)))
		return ret;

	snprintf(what, sizeof(what), "%spath", pfx);
	if ((ret = get_str(c, g, "path", what, &path)))
		return ret;
	const config_setting_t *ps = config_setting_get_member(g, "path");
	if (!path)
		return cfg_err(c, g, what, "missing");
	if (path[0] != '/')
		return cfg_err(c, ps, what, "'%s' is not an absolute path", path);
	char real[PATH_MAX];
	struct stat st;
	if (!realpath(path, real) || stat(real, &st))
		return cfg_err(c, ps, what, "'%s': %s", path, strerror(errno));
	if (r->type == RPMEM_REGION_DEVDAX && !S_ISCHR(st.st_mode))
		return cfg_err(c, ps, what,
			       "'%s' is not a character device: a devdax region is a whole device DAX device such as /dev/dax0.0 (use type = \"fsdax\" or \"dir\" for a directory)",
			       path);
	if (r->type != RPMEM_REGION_DEVDAX && !S_ISDIR(st.st_mode))
		return cfg_err(c, ps, what, "'%s' is not a directory%s", path,
			       S_ISCHR(st.st_mode) ?
				       " (a /dev/daxX.Y device needs type = \"devdax\")" :
				       "");
	if (strlen(real) > RPMEM_STR_MAX)
		return cfg_err(c, ps, what, "'%s' is longer than %d characters",
			       real, RPMEM_STR_MAX);
	for (unsigned i = 0; i < cfg->nregions; i++) {
		const struct rpmemd_region_cfg *o = &cfg->regions[i];
		if (regions_clash(o, r->type, real))
			return cfg_err(c, ps, what,
				       r->type == RPMEM_REGION_DEVDAX ?
					       "'%s' is also region '%s' (%s)" :
					       "'%s' overlaps region '%s' (%s)",
				       real, o->name, o->path);
	}
	if (r->type == RPMEM_REGION_FSDAX) {
		int dax = rpmemd_is_dax_mount_in(c->mounts, real);
		if (dax < 0)
			return cfg_err(c, ps, what, "cannot read %s: %s",
				       c->mounts, strerror(-dax));
		if (!dax)
			return cfg_err(c, ps, what,
				       "'%s' is not on a file system mounted with -o dax or -o dax=always (with dax=inode files need not be DAX; use type = \"dir\" for a plain directory)",
				       real);
	}
	rpmem_strlcpy(r->path, real, sizeof(r->path));
	if ((ret = parse_undo_dir(c, g, pfx, r)))
		return ret;
	cfg->nregions++;
	return 0;
}

/* parse_regions -- regions = ( { ... }, ... ) */
static int parse_regions(struct cfg_ctx *c, const config_setting_t *root,
			 struct rpmemd_config *cfg)
{
	const config_setting_t *s = config_setting_get_member(root, "regions");
	if (!s)
		return 0;
	int t = config_setting_type(s);
	if (t != CONFIG_TYPE_LIST)
		return cfg_err(c, s, "regions",
			       "must be a list: regions = ( { name = ...; }, ... );");
	int n = config_setting_length(s);
	if (n > RPMEMD_MAX_REGIONS)
		return cfg_err(c, s, "regions", "at most %d regions",
			       RPMEMD_MAX_REGIONS);
	cfg->regions = calloc(n ? (size_t)n : 1, sizeof(*cfg->regions));
	if (!cfg->regions)
		return -ENOMEM;
	for (int i = 0; i < n; i++) {
		int ret = parse_region(
			c, config_setting_get_elem(s, (unsigned)i), i, cfg);
		if (ret)
			return ret;
	}
	return check_undo_dirs(c, s, cfg);
}

/* get_path -- an optional absolute path member of group g into out */
static int get_path(struct cfg_ctx *c, const config_setting_t *g,
		    const char *name, const char *what, char *out,
		    size_t len)
{
	static const char cred[] = "$CREDENTIALS_DIRECTORY/";
	const char *v, *dir = getenv("CREDENTIALS_DIRECTORY");
	char buf[RPMEM_STR_MAX + 1];
	int ret = get_str(c, g, name, what, &v);
	if (ret || !v)
		return ret;
	/* systemd's LoadCredential= puts the files there */
	if (!strncmp(v, cred, sizeof(cred) - 1)) {
		if (!dir || !*dir)
			return cfg_err(c, config_setting_get_member(g, name),
				       what,
				       "'%s' names $CREDENTIALS_DIRECTORY, which is not set (LoadCredential= in the unit sets it)",
				       v);
		snprintf(buf, sizeof(buf), "%s/%s", dir, v + sizeof(cred) - 1);
		v = buf;
	}
	if (v[0] != '/')
		return cfg_err(c, config_setting_get_member(g, name), what,
			       "'%s' is not an absolute path", v);
	if (strlen(v) >= len)
		return cfg_err(c, config_setting_get_member(g, name), what,
			       "path too long");
	rpmem_strlcpy(out, v, len);
	return 0;
}

/*
 * tls_file -- get_path of a file of the tls group, which must exist; a
 * secret one (the key, the PSK file) also only for its owner
 * (rpmem_key_file_check): a problem is reported at its setting's line
 */
static int tls_file(struct cfg_ctx *c, const config_setting_t *g,
		    const char *name, char *out, size_t len, int secret)
{
	char what[32], why[RPMEM_STR_MAX + 128];
	struct stat st;
	int ret;

	snprintf(what, sizeof(what), "tls.%s", name);
	if ((ret = get_path(c, g, name, what, out, len)) || !out[0])
		return ret;
	if (secret && rpmem_key_file_check(out, why, sizeof(why)))
		return cfg_err(c, config_setting_get_member(g, name), what,
			       "%s", why);
	if (!secret && stat(out, &st))
		return cfg_err(c, config_setting_get_member(g, name), what,
			       "%s: %s", out, strerror(errno));
	return 0;
}

/*
 * parse_tls -- tls = { certificate = "..."; key = "..."; ca = "...";
 * psk_file = "..."; }: X.509 (all three) and/or PSK identities
 */
static int parse_tls(struct cfg_ctx *c, const config_setting_t *root,
		     struct rpmemd_config *cfg)
{
	static const char *const known[] = { "certificate", "key", "ca",
					      "psk_file", NULL };
	const config_setting_t *g = config_setting_get_member(root, "tls");
	struct rpmemd_tls_cfg *t = &cfg->tls;
	int ret;

	if (!g)
		return 0;
	if (config_setting_type(g) != CONFIG_TYPE_GROUP)
		return cfg_err(c, g, "tls", "must be a group");
	if ((ret = check_known(c, g, "tls.", known)) ||
	    (ret = tls_file(c, g, "certificate", t->certificate,
			    sizeof(t->certificate), 0)) ||
	    (ret = tls_file(c, g, "key", t->key, sizeof(t->key), 1)) ||
	    (ret = tls_file(c, g, "ca", t->ca, sizeof(t->ca), 0)) ||
	    (ret = tls_file(c, g, "psk_file", t->psk_file,
			    sizeof(t->psk_file), 1)))
		return ret;
	int x509 = t->certificate[0] || t->key[0] || t->ca[0];
	if (x509 && !(t->certificate[0] && t->key[0] && t->ca[0]))
		return cfg_err(c, g, "tls",
			       "certificates need all of certificate, key and ca (the CA that signs client certificates)");
	if (!x509 && !t->psk_file[0])
		return cfg_err(c, g, "tls",
			       "set certificate, key and ca, or psk_file, or both");
	t->enabled = 1;
	return 0;
}

/*
 * identity_valid -- 1..128 bytes of UTF-8, no control characters
 * (rpmem_utf8_control), not "*"
 */
static int identity_valid(const char *id)
{
	size_t n = strlen(id);
	if (n == 0 || n > RPMEM_IDENTITY_MAX || !strcmp(id, "*"))
		return 0;
	for (; *id; id += n) {
		n = rpmem_utf8_len(id);
		if (!n || rpmem_utf8_control(id))
			return 0;
	}
	return 1;
}

/* str_list -- s is a list or array of strings (NULL: not given) */
static int str_list(struct cfg_ctx *c, const config_setting_t *s,
		    const char *what, int *n)
{
	int t = s ? config_setting_type(s) : CONFIG_TYPE_NONE;
	*n = 0;
	if (!s)
		return 0;
	if (t != CONFIG_TYPE_LIST && t != CONFIG_TYPE_ARRAY)
		return cfg_err(c, s, what,
			       "must be a list of strings, e.g. [ \"read\" ]");
	*n = config_setting_length(s);
	for (int i = 0; i < *n; i++) {
		const config_setting_t *e =
			config_setting_get_elem(s, (unsigned)i);
		if (config_setting_type(e) != CONFIG_TYPE_STRING)
			return cfg_err(c, e, what, "must be a list of strings");
	}
	return 0;
}

/* parse_rights -- rights = [ "read", "write", "admin" ] into *out */
static int parse_rights(struct cfg_ctx *c, const config_setting_t *g,
			const char *pfx, unsigned *out)
{
	const config_setting_t *s = config_setting_get_member(g, "rights");
	char what[64];
	int n, ret;

	snprintf(what, sizeof(what), "%srights", pfx);
	if (!s)
		return cfg_err(c, g, what, "missing");
	if ((ret = str_list(c, s, what, &n)))
		return ret;
	if (n == 0)
		return cfg_err(c, s, what,
			       "needs at least one of read, append, write, admin");
	*out = 0;
	for (int i = 0; i < n; i++) {
		const config_setting_t *e =
			config_setting_get_elem(s, (unsigned)i);
		const char *v = config_setting_get_string(e);
		if (!strcmp(v, "read"))
			*out |= RPMEMD_RIGHT_READ;
		else if (!strcmp(v, "write")) /* a writer reads to sync */
			*out |= RPMEMD_RIGHT_WRITE | RPMEMD_RIGHT_READ;
		else if (!strcmp(v, "append")) /* so does an appender */
			*out |= RPMEMD_RIGHT_APPEND | RPMEMD_RIGHT_READ;
		else if (!strcmp(v, "admin"))
			*out |= RPMEMD_RIGHT_ADMIN;
		else
			return cfg_err(c, e, what,
				       "'%s' is not one of read, append, write, admin",
				       v);
	}
	return 0;
}

/* add_rule -- one (identity, region) entry of the access list */
static int add_rule(struct cfg_ctx *c, const config_setting_t *g,
		    struct rpmemd_config *cfg, const char *id,
		    const char *region, unsigned rights)
{
	struct rpmemd_access_rule *v, *r;

	if (cfg->naccess >= RPMEMD_MAX_ACCESS)
		return cfg_err(c, g, "access",
			       "at most %d identity and region pairs",
			       RPMEMD_MAX_ACCESS);
	v = realloc(cfg->access, (cfg->naccess + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	cfg->access = v;
	r = &v[cfg->naccess++];
	memset(r, 0, sizeof(*r));
	rpmem_strlcpy(r->identity, id, sizeof(r->identity));
	rpmem_strlcpy(r->region, region, sizeof(r->region));
	r->rights = rights;
	r->line = config_setting_source_line(g);
	return 0;
}

/*
 * parse_access_rule -- { identity = "..."; regions = [ ... ];
 * rights = [ ... ]; }: read and write name their regions ("*": all);
 * admin is daemon-wide and takes none
 */
static int parse_access_rule(struct cfg_ctx *c, const config_setting_t *g,
			     int idx, struct rpmemd_config *cfg)
{
	static const char *const known[] = { "identity", "regions", "rights",
					     NULL };
	const config_setting_t *rs;
	char pfx[32], what[64];
	const char *id;
	unsigned rights = 0;
	int n, ret;

	snprintf(pfx, sizeof(pfx), "access[%d].", idx);
	if (config_setting_type(g) != CONFIG_TYPE_GROUP)
		return cfg_err(c, g, pfx,
			       "must be a group: { identity = \"...\"; regions = [ ... ]; rights = [ ... ]; }");
	if ((ret = check_known(c, g, pfx, known)))
		return ret;
	snprintf(what, sizeof(what), "%sidentity", pfx);
	if ((ret = get_str(c, g, "identity", what, &id)))
		return ret;
	if (!id)
		return cfg_err(c, g, what, "missing");
	if (!identity_valid(id))
		return cfg_err(c, config_setting_get_member(g, "identity"),
			       what,
			       "'%s' is not an identity (1-%d characters, no control characters; a PSK identity or a certificate's name, no wildcard)",
			       id, RPMEM_IDENTITY_MAX);
	if ((ret = parse_rights(c, g, pfx, &rights)))
		return ret;

	snprintf(what, sizeof(what), "%sregions", pfx);
	rs = config_setting_get_member(g, "regions");
	if ((ret = str_list(c, rs, what, &n)))
		return ret;
	if (!(rights & (RPMEMD_RIGHT_READ | RPMEMD_RIGHT_WRITE))) {
		if (rs)
			return cfg_err(c, rs, what,
				       "admin is daemon-wide and takes no regions; give read or write in the same rule, or drop regions");
		return add_rule(c, g, cfg, id, "", rights);
	}
	if (n == 0)
		return cfg_err(c, rs ? rs : g, what,
			       "%s: read and write need the regions they apply to (\"*\" for every region)",
			       rs ? "empty" : "missing");
	for (int i = 0; i < n; i++) {
		const config_setting_t *e =
			config_setting_get_elem(rs, (unsigned)i);
		const char *r = config_setting_get_string(e);
		if (strcmp(r, "*") && !rpmem_name_valid(r))
			return cfg_err(c, e, what,
				       "'%s' is not a region name (1-64 of letters, digits, '.', '_', '-'; not starting with '.') or \"*\"",
				       r);
		if ((ret = add_rule(c, g, cfg, id, r, rights)))
			return ret;
	}
	return 0;
}

/* parse_access -- access = ( { identity = ...; }, ... ) */
static int parse_access(struct cfg_ctx *c, const config_setting_t *root,
			struct rpmemd_config *cfg)
{
	const config_setting_t *s = config_setting_get_member(root, "access");
	if (!s)
		return 0;
	if (config_setting_type(s) != CONFIG_TYPE_LIST)
		return cfg_err(c, s, "access",
			       "must be a list: access = ( { identity = \"...\"; regions = [ \"r1\" ]; rights = [ \"read\" ]; }, ... );");
	cfg->has_access = 1;
	int n = config_setting_length(s);
	for (int i = 0; i < n; i++) {
		int ret = parse_access_rule(
			c, config_setting_get_elem(s, (unsigned)i), i, cfg);
		if (ret)
			return ret;
	}
	return 0;
}

/* parse_auth -- auth = { require_auth = false; } (reserved) */
static int parse_auth(struct cfg_ctx *c, const config_setting_t *root,
		      struct rpmemd_config *cfg)
{
	static const char *const known[] = { "require_auth", NULL };
	const config_setting_t *g = config_setting_get_member(root, "auth");
	int ret;
	if (!g)
		return 0;
	if (config_setting_type(g) != CONFIG_TYPE_GROUP)
		return cfg_err(c, g, "auth", "must be a group");
	if ((ret = check_known(c, g, "auth.", known)))
		return ret;
	if ((ret = get_bool(c, g, "require_auth", "auth.require_auth",
			    &cfg->require_auth)))
		return ret;
	if (cfg->require_auth)
		return cfg_err(c, config_setting_get_member(g, "require_auth"),
			       "auth.require_auth",
			       "not used: clients authenticate through TLS; configure the tls group (rpmemd.conf(5)) and leave this false");
	return 0;
}

/*
 * get_staging_max -- limits.rdma_staging_max: a size string ("512M",
 * "4G") or an integer of bytes; 0 serves no pool through a staging copy
 */
static int get_staging_max(struct cfg_ctx *c, const config_setting_t *g,
			   uint64_t *out)
{
	static const char what[] = "limits.rdma_staging_max";
	const config_setting_t *s =
		config_setting_get_member(g, "rdma_staging_max");
	int t;

	*out = RPMEMD_STAGING_AUTO;
	if (!s)
		return 0;
	t = config_setting_type(s);
	if (t == CONFIG_TYPE_INT || t == CONFIG_TYPE_INT64) {
		long long v = config_setting_get_int64(s);
		if (v < 0)
			return cfg_err(c, s, what,
				       "%lld is negative: a size like \"4G\", or 0 for no staging",
				       v);
		*out = (uint64_t)v;
		return 0;
	}
	if (t != CONFIG_TYPE_STRING ||
	    rpmem_parse_size(config_setting_get_string(s), out) ||
	    *out == RPMEMD_STAGING_AUTO)
		return cfg_err(c, s, what,
			       "must be a size like \"512M\" or \"4G\" (or bytes; 0: no staging)");
	return 0;
}

/*
 * parse_limits -- limits = { handshake_timeout = 10; frame_timeout = 60;
 * writer_idle_timeout = 600; session_idle_timeout = 600;
 * reader_idle_timeout = 600;
 * max_sessions_per_identity = 32; admin_reserved_sessions = 2;
 * max_unauthenticated = 64;
 * max_unauthenticated_per_address = 8; rdma_staging_max = "4G"; } (all
 * optional)
 */
static int parse_limits(struct cfg_ctx *c, const config_setting_t *root,
			struct rpmemd_config *cfg)
{
	static const char *const known[] = {
		"handshake_timeout", "frame_timeout", "writer_idle_timeout",
		"session_idle_timeout", "reader_idle_timeout",
		"max_sessions_per_identity",
		"admin_reserved_sessions", "max_unauthenticated",
		"max_unauthenticated_per_address", "event_queue",
		"rdma_staging_max", NULL
	};
	static const struct {
		const char *name;
		long long min, max, def;
		size_t off;
	} v[] = {
		{ "handshake_timeout", 1, 3600, DEFAULT_HANDSHAKE_TIMEOUT,
		  offsetof(struct rpmemd_limits, handshake_timeout) },
		{ "frame_timeout", 1, 3600, DEFAULT_FRAME_TIMEOUT,
		  offsetof(struct rpmemd_limits, frame_timeout) },
		{ "writer_idle_timeout", 0, 604800, DEFAULT_WRITER_IDLE_TIMEOUT,
		  offsetof(struct rpmemd_limits, writer_idle_timeout) },
		{ "session_idle_timeout", 0, 604800,
		  DEFAULT_SESSION_IDLE_TIMEOUT,
		  offsetof(struct rpmemd_limits, session_idle_timeout) },
		{ "reader_idle_timeout", 0, 604800, DEFAULT_READER_IDLE_TIMEOUT,
		  offsetof(struct rpmemd_limits, reader_idle_timeout) },
		/* absent: 0, half of max_sessions */
		{ "max_sessions_per_identity", 1, MAX_SESSIONS_LIMIT, 0,
		  offsetof(struct rpmemd_limits, max_per_identity) },
		{ "admin_reserved_sessions", 0, MAX_SESSIONS_LIMIT,
		  DEFAULT_ADMIN_RESERVED,
		  offsetof(struct rpmemd_limits, admin_reserved) },
		{ "max_unauthenticated", 1, 65536, DEFAULT_MAX_UNAUTH,
		  offsetof(struct rpmemd_limits, max_unauth) },
		{ "max_unauthenticated_per_address", 1, 65536,
		  DEFAULT_MAX_UNAUTH_PER_ADDR,
		  offsetof(struct rpmemd_limits, max_unauth_per_addr) },
		{ "event_queue", 2, 1 << 20, DEFAULT_EVENT_QUEUE,
		  offsetof(struct rpmemd_limits, event_queue) },
	};
	const config_setting_t *g = config_setting_get_member(root, "limits");
	int ret;

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		*(unsigned *)((char *)&cfg->limits + v[i].off) =
			(unsigned)v[i].def;
	cfg->limits.rdma_staging_max = RPMEMD_STAGING_AUTO;
	if (!g)
		return 0;
	if (config_setting_type(g) != CONFIG_TYPE_GROUP)
		return cfg_err(c, g, "limits", "must be a group");
	if ((ret = check_known(c, g, "limits.", known)))
		return ret;
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		long long x = v[i].def;
		if ((ret = get_int(c, g, v[i].name, v[i].min, v[i].max, &x)))
			return ret;
		*(unsigned *)((char *)&cfg->limits + v[i].off) = (unsigned)x;
	}
	return get_staging_max(c, g, &cfg->limits.rdma_staging_max);
}

/*
 * parse_bwlimit -- bwlimit = 104857600; or "100M" (K, M, G, T: powers of
 * 1024): bytes of WRITE data a second for all sessions together; absent
 * or 0: no limit
 */
static int parse_bwlimit(struct cfg_ctx *c, const config_setting_t *root,
			 struct rpmemd_config *cfg)
{
	const config_setting_t *s = config_setting_get_member(root, "bwlimit");
	uint64_t v = 0;

	cfg->bwlimit = 0;
	if (!s)
		return 0;
	int t = config_setting_type(s);
	if (t == CONFIG_TYPE_INT || t == CONFIG_TYPE_INT64) {
		long long x = config_setting_get_int64(s);
		if (x < 0)
			return cfg_err(c, s, "bwlimit", "must not be negative");
		v = (uint64_t)x;
	} else if (t != CONFIG_TYPE_STRING ||
		   rpmem_parse_size(config_setting_get_string(s), &v)) {
		return cfg_err(c, s, "bwlimit",
			       "must be bytes per second: a number, or a string like \"100M\" (K, M, G, T)");
	}
	if (v && v < BWLIMIT_MIN)
		return cfg_err(c, s, "bwlimit",
			       "%llu bytes per second is below the least, %d (0: no limit)",
			       (unsigned long long)v, BWLIMIT_MIN);
	cfg->bwlimit = v;
	return 0;
}

/*
 * parse_region_check -- region_check = "strict" | "warn": what a region
 * directory, its .rpmemd or a file in them that someone else could have
 * written does (refused, or a warning)
 */
static int parse_region_check(struct cfg_ctx *c, const config_setting_t *root,
			      struct rpmemd_config *cfg)
{
	const char *v;
	int ret;

	if ((ret = get_str(c, root, "region_check", "region_check", &v)) || !v)
		return ret;
	if (!strcmp(v, "strict") || !strcmp(v, "warn")) {
		cfg->region_check_warn = !strcmp(v, "warn");
		return 0;
	}
	return cfg_err(c, config_setting_get_member(root, "region_check"),
		       "region_check", "'%s' is not one of strict, warn", v);
}

/*
 * parse_user -- user = "NAME": an existing user, whom rpmemd started as
 * root outside systemd becomes (confine.c: rpmemd_privileges_drop)
 */
static int parse_user(struct cfg_ctx *c, const config_setting_t *root,
		      struct rpmemd_config *cfg)
{
	const char *v;
	int ret;

	if ((ret = get_str(c, root, "user", "user", &v)) || !v)
		return ret;
	const config_setting_t *s = config_setting_get_member(root, "user");
	if (!v[0] || strlen(v) >= sizeof(cfg->user))
		return cfg_err(c, s, "user", "'%s' is not a user name", v);
	if (!getpwnam(v))
		return cfg_err(c, s, "user", "no user '%s' on this system", v);
	rpmem_strlcpy(cfg->user, v, sizeof(cfg->user));
	return 0;
}

/* parse_root -- every top-level setting, then cross-checks */
static int parse_root(struct cfg_ctx *c, const config_setting_t *root,
		      struct rpmemd_config *cfg)
{
	static const char *const known[] = {
		"listen", "port", "log", "max_sessions", "regions",
		"regions_auto", "auth", "allow_insecure_remote", "tls",
		"limits", "access", "bwlimit", "region_check", "user", NULL
	};
	long long v;
	int ret;

	if ((ret = check_known(c, root, "", known)))
		return ret;
	if ((ret = parse_listen(c, root, cfg)))
		return ret;
	v = atoi(RPMEM_DEFAULT_PORT);
	if ((ret = get_int(c, root, "port", 1, 65535, &v)))
		return ret;
	snprintf(cfg->port, sizeof(cfg->port), "%lld", v);
	v = DEFAULT_MAX_SESSIONS;
	if ((ret = get_int(c, root, "max_sessions", 1, MAX_SESSIONS_LIMIT, &v)))
		return ret;
	cfg->max_sessions = (unsigned)v;
	if ((ret = parse_log(c, root, cfg)))
		return ret;
	if ((ret = parse_limits(c, root, cfg)))
		return ret;
	if ((ret = parse_bwlimit(c, root, cfg)))
		return ret;
	if ((ret = get_bool(c, root, "regions_auto", "regions_auto",
			    &cfg->regions_auto)))
		return ret;
	if ((ret = get_bool(c, root, "allow_insecure_remote",
			    "allow_insecure_remote",
			    &cfg->allow_insecure_remote)))
		return ret;
	if ((ret = parse_region_check(c, root, cfg)))
		return ret;
	if ((ret = parse_user(c, root, cfg)))
		return ret;
	if ((ret = parse_auth(c, root, cfg)))
		return ret;
	if ((ret = parse_tls(c, root, cfg)))
		return ret;
	if ((ret = parse_regions(c, root, cfg)))
		return ret;
	if ((ret = parse_access(c, root, cfg)))
		return ret;

	/* a non-loopback listener requires TLS, or the explicit opt-out */
	for (unsigned i = 0; i < cfg->nlisten; i++) {
		if (rpmemd_is_loopback(cfg->listen[i]) || cfg->tls.enabled ||
		    cfg->allow_insecure_remote)
			continue;
		const config_setting_t *s =
			config_setting_get_member(root, "listen");
		return cfg_err(c, s, "listen",
			       "'%s' is not a loopback address: a non-loopback listener requires TLS (a tls group with certificates or a psk_file); set allow_insecure_remote = true only to accept unauthenticated, unencrypted clients on a trusted network",
			       cfg->listen[i]);
	}
	return 0;
}

int rpmemd_config_load_mounts(const char *path, const char *mounts,
			      struct rpmemd_config *out, char *err,
			      size_t errlen)
{
	struct cfg_ctx c = { path, mounts, err, errlen };
	struct rpmemd_config cfg;
	config_t lc;
	int ret;

	if (err && errlen)
		err[0] = '\0';
	memset(&cfg, 0, sizeof(cfg));
	cfg.log_level = LOG_INFO;
	cfg.log_target = RPMEMD_LOG_STDERR;
	if (strlen(path) > RPMEM_STR_MAX)
		return cfg_err(&c, NULL, NULL, "path too long");
	rpmem_strlcpy(cfg.file, path, sizeof(cfg.file));

	/* libconfig does not tell why a file cannot be read: ask first */
	FILE *f = fopen(path, "re");
	if (!f) {
		ret = -errno;
		if (err && errlen)
			snprintf(err, errlen, "%s: %s", path, strerror(-ret));
		return ret;
	}
	fclose(f);

	config_init(&lc);
	if (config_read_file(&lc, path) != CONFIG_TRUE) {
		if (err && errlen)
			snprintf(err, errlen, "%s:%d: %s",
				 config_error_file(&lc) ?
					 config_error_file(&lc) : path,
				 config_error_line(&lc),
				 config_error_text(&lc));
		ret = -EINVAL;
		goto err_destroy;
	}
	ret = parse_root(&c, config_root_setting(&lc), &cfg);
	if (ret == -ENOMEM && err && errlen)
		snprintf(err, errlen, "%s: out of memory", path);
	if (ret)
		goto err_free;
	config_destroy(&lc);
	*out = cfg;
	return 0;

err_free:
	rpmemd_config_free(&cfg);
err_destroy:
	config_destroy(&lc);
	return ret;
}

int rpmemd_config_load(const char *path, struct rpmemd_config *out, char *err,
		       size_t errlen)
{
	return rpmemd_config_load_mounts(path, "/proc/self/mounts", out, err,
					 errlen);
}

int rpmemd_config_add_regions(struct rpmemd_config *cfg,
			      const struct rpmemd_region_cfg *v, size_t n)
{
	unsigned room = RPMEMD_MAX_REGIONS - cfg->nregions;
	struct rpmemd_region_cfg *nr;
	int added = 0;

	if (!n)
		return 0;
	nr = realloc(cfg->regions,
		     (cfg->nregions + (n < room ? n : room) + 1) * sizeof(*nr));
	if (!nr)
		return -ENOMEM;
	cfg->regions = nr;
	for (size_t i = 0; i < n; i++) {
		const struct rpmemd_region_cfg *a = &v[i];
		const struct rpmemd_region_cfg *o = NULL;
		for (unsigned j = 0; j < cfg->nregions && !o; j++)
			if (!strcmp(nr[j].name, a->name) ||
			    regions_clash(&nr[j], a->type, a->path))
				o = &nr[j];
		if (o) {
			NOTICE("regions_auto: %s %s is not added as region '%s': region '%s' (%s) is configured",
			       rpmem_region_type_str(a->type), a->path,
			       a->name, o->name, o->path);
			continue;
		}
		if (cfg->nregions >= RPMEMD_MAX_REGIONS) {
			WARN("regions_auto: %s is not added: at most %d regions",
			     a->path, RPMEMD_MAX_REGIONS);
			continue;
		}
		nr[cfg->nregions] = *a;
		nr[cfg->nregions].is_auto = 1;
		cfg->nregions++;
		added++;
	}
	return added;
}

void rpmemd_config_free(struct rpmemd_config *cfg)
{
	if (!cfg)
		return;
	free(cfg->regions);
	cfg->regions = NULL;
	cfg->nregions = 0;
	free(cfg->access);
	cfg->access = NULL;
	cfg->naccess = 0;
	cfg->has_access = 0;
}
