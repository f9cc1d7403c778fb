/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * config_region.c -- the regions of rpmemd.conf: regions = ( ... ) with
 * their versions, quotas, undo_dir and scrub_interval, region_check, and
 * the regions regions_auto adds
 */
#include <ctype.h>
#include <errno.h>
#include <libconfig.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "config_int.h"
#include "log.h"
#include "pmem.h"
#include "util.h"

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
	char what[RPMEMD_SETTING_MAX];
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
	char what[RPMEMD_SETTING_MAX], why[RPMEM_MSG_MAX];
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
	char what[RPMEMD_SETTING_MAX], real[PATH_MAX];
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
			char what[RPMEMD_SETTING_MAX];
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
	char what[RPMEMD_SETTING_MAX], *end;
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
	char pfx[RPMEMD_SETTING_PFX_MAX], what[RPMEMD_SETTING_MAX];
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
int parse_regions(struct cfg_ctx *c, const config_setting_t *root,
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

/*
 * parse_region_check -- region_check = "strict" | "warn": what a region
 * directory, its .rpmemd or a file in them that someone else could have
 * written does (refused, or a warning)
 */
int parse_region_check(struct cfg_ctx *c, const config_setting_t *root,
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
