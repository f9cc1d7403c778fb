/* SPDX-License-Identifier: BSD-3-Clause */
/* region.c -- regions: open, reconcile with the configuration, refcount */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend.h"
#include "devdax.h"
#include "log.h"
#include "meta.h"
#include "region.h"
#include "util.h"

#define REGION_MIN_ALIGN 4096u

int rpmemd_regions_new(struct rpmemd_regions **out)
{
	struct rpmemd_regions *set = calloc(1, sizeof(*set));
	if (!set)
		return -ENOMEM;
	int ret = pthread_mutex_init(&set->lock, NULL);
	if (ret) {
		free(set);
		return -ret;
	}
	*out = set;
	return 0;
}

/* dax_find -- the open device path of another region object, or NULL */
static struct rpmemd_dax *dax_find(struct rpmemd_regions *set,
				   const char *path)
{
	for (unsigned i = 0; i < set->n; i++)
		if (set->v[i]->dax && !strcmp(set->v[i]->cfg.path, path))
			return set->v[i]->dax;
	for (struct rpmemd_region *r = set->retired; r; r = r->next)
		if (r->dax && !strcmp(r->cfg.path, path))
			return r->dax;
	return NULL;
}

/* dax_why -- what an error of rpmemd_devdax_open means for the admin */
static const char *dax_why(int ret)
{
	switch (ret) {
	case -EMEDIUMTYPE:
		return "it holds data that is not an rpmemd pool table (a foreign signature); it is left untouched";
	case -EBADMSG:
	case -EUCLEAN:
		return "its pool table is corrupt";
	case -EPROTONOSUPPORT:
		return "its pool table has a version this rpmemd does not know";
	case -EBUSY:
		return "it is in use by another process";
	case -ENOSPC:
		return "it is too small for a pool table";
	default:
		return strerror(-ret);
	}
}

/*
 * region_open_dax -- open the device of a devdax region (formatting it
 * if it is blank), or share it with the region object that has it open
 */
static int region_open_dax(struct rpmemd_region *r, char *err, size_t errlen)
{
	struct rpmemd_regions *set = r->set;
	struct rpmemd_dax *dax;
	int ret;

	pthread_mutex_lock(&set->lock);
	dax = dax_find(set, r->cfg.path);
	if (dax)
		dax->refs++;
	pthread_mutex_unlock(&set->lock);
	if (dax) {
		r->dax = dax;
		return 0;
	}
	dax = calloc(1, sizeof(*dax));
	if (!dax) {
		snprintf(err, errlen, "region '%s': out of memory", r->cfg.name);
		return -ENOMEM;
	}
	ret = pthread_mutex_init(&dax->lock, NULL);
	if (ret) {
		ret = -ret;
		snprintf(err, errlen, "region '%s': %s", r->cfg.name,
			 strerror(-ret));
		goto err_free;
	}
	ret = rpmemd_devdax_open(r->cfg.path, RPMEMD_DEVDAX_FORMAT_BLANK,
				 &dax->dd);
	if (ret) {
		snprintf(err, errlen, "region '%s': cannot use %s: %s",
			 r->cfg.name, r->cfg.path, dax_why(ret));
		goto err_mutex;
	}
	dax->refs = 1;
	r->dax = dax;
	return 0;

err_mutex:
	pthread_mutex_destroy(&dax->lock);
err_free:
	free(dax);
	return ret;
}

/* dax_put -- drop a region object's use of a device; the last closes it */
static void dax_put(struct rpmemd_regions *set, struct rpmemd_dax **pdax)
{
	struct rpmemd_dax *dax = *pdax;
	if (!dax)
		return;
	*pdax = NULL;
	pthread_mutex_lock(&set->lock);
	int last = --dax->refs == 0;
	pthread_mutex_unlock(&set->lock);
	if (!last)
		return;
	rpmemd_devdax_close(&dax->dd);
	pthread_mutex_destroy(&dax->lock);
	free(dax);
}

/*
 * dir_check -- directory fd (path) is rpmemd's own (rpmemd_untrusted):
 * 0; else -EPERM with the reason in err, or with region_check "warn" a
 * warning and 0
 */
static int dir_check(const struct rpmemd_region *r, int fd, const char *path,
		     char *err, size_t errlen)
{
	struct stat st;
	char why[RPMEM_MSG_MAX];

	if (fstat(fd, &st)) {
		snprintf(err, errlen, "region '%s': %s: %s", r->cfg.name, path,
			 strerror(errno));
		return -errno;
	}
	if (!rpmemd_untrusted(&st, why, sizeof(why)))
		return 0;
	if (rpmemd_region_check_warn()) {
		WARN("region '%s': %s is %s: someone else could replace its pools' files (region_check = \"warn\")",
		     r->cfg.name, path, why);
		return 0;
	}
	snprintf(err, errlen,
		 "region '%s': %s is %s: someone else could replace its pools' files (chown it to rpmemd's user and chmod go-w, or set region_check = \"warn\")",
		 r->cfg.name, path, why);
	return -EPERM;
}

/*
 * undo_default -- the default undo_dir of a devdax region: undo/<name>
 * in the daemon's state directory ($STATE_DIRECTORY, set by systemd's
 * StateDirectory=), created; 0, 1 if there is none, or -errno
 */
static int undo_default(struct rpmemd_region *r)
{
	const char *sd = getenv("STATE_DIRECTORY");
	size_t n = sd ? strcspn(sd, ":") : 0;
	char top[RPMEM_STR_MAX + 1];

	if (!n || sd[0] != '/')
		return 1;
	snprintf(top, sizeof(top), "%.*s/undo", (int)n, sd);
	if (snprintf(r->undo_path, sizeof(r->undo_path), "%s/%s", top,
		     r->cfg.name) >= (int)sizeof(r->undo_path))
		return -ENAMETOOLONG;
	if ((mkdir(top, 0700) && errno != EEXIST) ||
	    (mkdir(r->undo_path, 0700) && errno != EEXIST))
		return -errno;
	return 0;
}

/*
 * region_open_undo -- the directory of a devdax region's undo journals
 * (undo_dir, or the default); without one its syncs are not atomic
 */
static int region_open_undo(struct rpmemd_region *r, char *err, size_t errlen)
{
	int ret = 0;

	if (r->cfg.undo_dir[0])
		rpmem_strlcpy(r->undo_path, r->cfg.undo_dir,
			      sizeof(r->undo_path));
	else if ((ret = undo_default(r)) > 0) {
		WARN("region '%s': syncs into its pools are not atomic: it has no undo_dir (rpmemd.conf(5)) and rpmemd has no state directory ($STATE_DIRECTORY) for one",
		     r->cfg.name);
		return 0;
	}
	if (!ret) {
		r->undofd = open(r->undo_path,
				 O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (r->undofd < 0 ||
		    faccessat(r->undofd, ".", W_OK | X_OK, AT_EACCESS))
			ret = -errno;
	}
	if (!ret && (ret = dir_check(r, r->undofd, r->undo_path, err, errlen)))
		goto err_close;
	if (!ret)
		return 0;
	snprintf(err, errlen,
		 "region '%s': cannot use %s for its undo journals (undo_dir): %s",
		 r->cfg.name, r->undo_path, strerror(-ret));
err_close:
	if (r->undofd >= 0)
		close(r->undofd);
	r->undofd = -1;
	return ret;
}

/* region_open_dir -- open the directory and its metadata directory */
static int region_open_dir(struct rpmemd_region *r, char *err, size_t errlen)
{
	const struct rpmemd_region_cfg *cfg = &r->cfg;
	char meta[RPMEM_STR_MAX + 16];
	int ret;

	r->dirfd = open(cfg->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (r->dirfd < 0) {
		ret = -errno;
		snprintf(err, errlen, "region '%s': cannot open %s: %s",
			 cfg->name, cfg->path, strerror(errno));
		return ret;
	}
	/* before anything is created in it */
	if ((ret = dir_check(r, r->dirfd, cfg->path, err, errlen)))
		goto err_close_dir;
	if (mkdirat(r->dirfd, RPMEMD_META_DIR, 0755) && errno != EEXIST) {
		ret = -errno;
		snprintf(err, errlen, "region '%s': cannot create %s/%s: %s",
			 cfg->name, cfg->path, RPMEMD_META_DIR,
			 strerror(errno));
		goto err_close_dir;
	}
	r->metafd = openat(r->dirfd, RPMEMD_META_DIR,
			   O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (r->metafd < 0) {
		ret = -errno;
		snprintf(err, errlen, "region '%s': cannot open %s/%s: %s",
			 cfg->name, cfg->path, RPMEMD_META_DIR,
			 strerror(errno));
		goto err_close_dir;
	}
	if (faccessat(r->dirfd, ".", W_OK | X_OK, AT_EACCESS) ||
	    faccessat(r->metafd, ".", W_OK | X_OK, AT_EACCESS)) {
		ret = -errno;
		snprintf(err, errlen, "region '%s': %s is not writable: %s",
			 cfg->name, cfg->path, strerror(errno));
		goto err_close_meta;
	}
	snprintf(meta, sizeof(meta), "%s/%s", cfg->path, RPMEMD_META_DIR);
	if ((ret = dir_check(r, r->metafd, meta, err, errlen)))
		goto err_close_meta;
	return 0;

err_close_meta:
	close(r->metafd);
	r->metafd = -1;
err_close_dir:
	close(r->dirfd);
	r->dirfd = -1;
	return ret;
}

/* region_open -- open a region's directory or device */
static int region_open(struct rpmemd_regions *set,
		       const struct rpmemd_region_cfg *cfg,
		       struct rpmemd_region **out, char *err, size_t errlen)
{
	struct rpmemd_region *r = calloc(1, sizeof(*r));
	int ret;
	if (!r)
		return -ENOMEM;
	r->set = set;
	r->cfg = *cfg;
	r->dirfd = -1;
	r->metafd = -1;
	r->undofd = -1;
	long pg = sysconf(_SC_PAGESIZE);
	r->align = pg > (long)REGION_MIN_ALIGN ? (uint32_t)pg :
						  REGION_MIN_ALIGN;

	if (cfg->type == RPMEM_REGION_DEVDAX) {
		r->ops = &rpmemd_backend_devdax;
		ret = region_open_dax(r, err, errlen);
		if (!ret && (ret = region_open_undo(r, err, errlen)))
			dax_put(set, &r->dax);
	} else {
		r->ops = &rpmemd_backend_file;
		ret = region_open_dir(r, err, errlen);
	}
	if (ret)
		goto err_free;
	ret = pthread_mutex_init(&r->lock, NULL);
	if (!ret && (ret = pthread_mutex_init(&r->ver_lock, NULL)))
		pthread_mutex_destroy(&r->lock);
	if (ret) {
		ret = -ret;
		snprintf(err, errlen, "region '%s': %s", cfg->name,
			 strerror(-ret));
		goto err_close;
	}
	r->refs = 1; /* the active list's */
	*out = r;
	return 0;

err_close:
	dax_put(set, &r->dax);
	if (r->undofd >= 0)
		close(r->undofd);
	if (r->metafd >= 0)
		close(r->metafd);
	if (r->dirfd >= 0)
		close(r->dirfd);
err_free:
	free(r);
	return ret;
}

/* region_close -- release a region nobody references any more */
static void region_close(struct rpmemd_region *r)
{
	while (r->stats) {
		struct rpmemd_pool_stats *st = r->stats;
		r->stats = st->next;
		free(st);
	}
	pthread_mutex_destroy(&r->lock);
	pthread_mutex_destroy(&r->ver_lock);
	dax_put(r->set, &r->dax);
	if (r->undofd >= 0)
		close(r->undofd);
	if (r->metafd >= 0)
		close(r->metafd);
	if (r->dirfd >= 0)
		close(r->dirfd);
	free(r);
}

void rpmemd_regions_delete(struct rpmemd_regions **pset)
{
	struct rpmemd_regions *set = pset ? *pset : NULL;
	if (!set)
		return;
	for (unsigned i = 0; i < set->n; i++)
		region_close(set->v[i]);
	while (set->retired) {
		struct rpmemd_region *r = set->retired;
		set->retired = r->next;
		region_close(r);
	}
	free(set->v);
	pthread_mutex_destroy(&set->lock);
	free(set);
	*pset = NULL;
}

/* check_path -- rpmemd_regions_check of one directory: 1 if refused */
static int check_path(const struct rpmemd_region_cfg *rc, const char *path,
		      int warn)
{
	struct stat st;
	char why[RPMEM_MSG_MAX];

	if (lstat(path, &st))
		return 0; /* not there (yet): opening it says what is wrong */
	if (!rpmemd_untrusted(&st, why, sizeof(why)))
		return 0;
	if (warn) {
		WARN("region '%s': %s is %s: someone else could replace its pools' files (region_check = \"warn\")",
		     rc->name, path, why);
		return 0;
	}
	ERR("region '%s': %s is %s: someone else could replace its pools' files (chown it to rpmemd's user and chmod go-w, or set region_check = \"warn\")",
	    rc->name, path, why);
	return 1;
}

int rpmemd_regions_check(const struct rpmemd_config *cfg)
{
	char meta[RPMEM_STR_MAX + 16];
	int n = 0, warn = cfg->region_check_warn;

	for (unsigned i = 0; i < cfg->nregions; i++) {
		const struct rpmemd_region_cfg *rc = &cfg->regions[i];
		if (rc->type == RPMEM_REGION_DEVDAX) {
			if (rc->undo_dir[0])
				n += check_path(rc, rc->undo_dir, warn);
			continue;
		}
		n += check_path(rc, rc->path, warn);
		snprintf(meta, sizeof(meta), "%s/%s", rc->path,
			 RPMEMD_META_DIR);
		n += check_path(rc, meta, warn);
	}
	return n;
}

/* region_same -- the configuration of a region did not change */
static int region_same(const struct rpmemd_region_cfg *a,
		       const struct rpmemd_region_cfg *b)
{
	return !strcmp(a->name, b->name) && !strcmp(a->path, b->path) &&
	       a->type == b->type && a->direct_pmem == b->direct_pmem &&
	       !strcmp(a->undo_dir, b->undo_dir);
}

/* region_optional -- a region whose failure to open is not fatal */
static int region_optional(const struct rpmemd_region_cfg *cfg)
{
	return cfg->type == RPMEM_REGION_DEVDAX || cfg->is_auto;
}

int rpmemd_regions_apply(struct rpmemd_regions *set,
			 const struct rpmemd_config *cfg, char *err,
			 size_t errlen)
{
	unsigned n = cfg->nregions, k = 0;
	struct rpmemd_region **nv = calloc(n ? n : 1, sizeof(*nv));
	char *fresh = calloc(n ? n : 1, 1);
	struct rpmemd_region *dead = NULL;
	int ret = 0;

	if (!nv || !fresh) {
		snprintf(err, errlen, "out of memory");
		ret = -ENOMEM;
		goto err_free;
	}
	/* only the main thread changes set->v, so it may read it unlocked */
	for (unsigned i = 0; i < n; i++) {
		const struct rpmemd_region_cfg *rc = &cfg->regions[i];
		for (unsigned j = 0; j < set->n; j++)
			if (region_same(&set->v[j]->cfg, rc))
				nv[k] = set->v[j];
		if (nv[k]) {
			/* a reload may change what versions it keeps */
			pthread_mutex_lock(&nv[k]->ver_lock);
			nv[k]->cfg.versions = rc->versions;
			nv[k]->cfg.keep = rc->keep;
			nv[k]->cfg.versions_quota = rc->versions_quota;
			nv[k]->cfg.versions_floor = rc->versions_floor;
			nv[k]->cfg.versions_min_age = rc->versions_min_age;
			nv[k]->cfg.versions_full_prune =
				rc->versions_full_prune;
			pthread_mutex_unlock(&nv[k]->ver_lock);
			k++;
			continue;
		}
		ret = region_open(set, rc, &nv[k], err, errlen);
		if (ret && ret != -ENOMEM && region_optional(rc)) {
			ERR("%s; the region is not served%s", err,
			    rc->is_auto ? " (found by regions_auto)" : "");
			ret = 0;
			continue;
		}
		if (ret)
			goto err_close;
		fresh[k++] = 1;
	}

	pthread_mutex_lock(&set->lock);
	for (unsigned j = 0; j < set->n; j++) {
		struct rpmemd_region *r = set->v[j];
		int kept = 0;
		for (unsigned i = 0; i < k; i++)
			kept |= nv[i] == r;
		if (kept)
			continue;
		r->retired = 1;
		if (--r->refs == 0) {
			r->next = dead;
			dead = r;
			INFO("region '%s' (%s) removed", r->cfg.name,
			     r->cfg.path);
		} else {
			r->next = set->retired;
			set->retired = r;
			INFO("region '%s' (%s) removed from the configuration; it closes when its %u open pool(s) are closed",
			     r->cfg.name, r->cfg.path, r->refs);
		}
	}
	free(set->v);
	set->v = nv;
	set->n = k;
	pthread_mutex_unlock(&set->lock);

	for (unsigned i = 0; i < k; i++)
		if (fresh[i])
			INFO("region '%s' (%s, %s) added%s", nv[i]->cfg.name,
			     rpmem_region_type_str(nv[i]->cfg.type),
			     nv[i]->cfg.path,
			     nv[i]->cfg.is_auto ? " (found by regions_auto)" :
						  "");
	while (dead) {
		struct rpmemd_region *r = dead;
		dead = r->next;
		region_close(r);
	}
	free(fresh);
	return 0;

err_close:
	for (unsigned i = 0; i < k; i++)
		if (fresh[i])
			region_close(nv[i]);
err_free:
	free(fresh);
	free(nv);
	return ret;
}

int rpmemd_region_get(struct rpmemd_regions *set, const char *name,
		      struct rpmemd_region **out)
{
	int ret = -ENODEV;
	pthread_mutex_lock(&set->lock);
	for (unsigned i = 0; i < set->n; i++) {
		if (strcmp(set->v[i]->cfg.name, name))
			continue;
		set->v[i]->refs++;
		*out = set->v[i];
		ret = 0;
		break;
	}
	pthread_mutex_unlock(&set->lock);
	return ret;
}

void rpmemd_region_ref(struct rpmemd_region *r)
{
	pthread_mutex_lock(&r->set->lock);
	r->refs++;
	pthread_mutex_unlock(&r->set->lock);
}

void rpmemd_region_put(struct rpmemd_region **pr)
{
	struct rpmemd_region *r = pr ? *pr : NULL;
	if (!r)
		return;
	*pr = NULL;
	struct rpmemd_regions *set = r->set;
	pthread_mutex_lock(&set->lock);
	int last = --r->refs == 0;
	if (last) {
		/* only a retired region loses its last reference */
		for (struct rpmemd_region **pp = &set->retired; *pp;
		     pp = &(*pp)->next) {
			if (*pp == r) {
				*pp = r->next;
				break;
			}
		}
	}
	pthread_mutex_unlock(&set->lock);
	if (last) {
		INFO("region '%s' (%s) closed", r->cfg.name, r->cfg.path);
		region_close(r);
	}
}

int rpmemd_regions_get_all(struct rpmemd_regions *set,
			   struct rpmemd_region ***out, unsigned *n)
{
	pthread_mutex_lock(&set->lock);
	struct rpmemd_region **v = calloc(set->n ? set->n : 1, sizeof(*v));
	if (!v) {
		pthread_mutex_unlock(&set->lock);
		return -ENOMEM;
	}
	for (unsigned i = 0; i < set->n; i++) {
		v[i] = set->v[i];
		v[i]->refs++;
	}
	*n = set->n;
	pthread_mutex_unlock(&set->lock);
	*out = v;
	return 0;
}

void rpmemd_regions_put_all(struct rpmemd_region ***pv, unsigned n)
{
	struct rpmemd_region **v = pv ? *pv : NULL;
	if (!v)
		return;
	for (unsigned i = 0; i < n; i++)
		rpmemd_region_put(&v[i]);
	free(v);
	*pv = NULL;
}

int rpmemd_region_free_space(struct rpmemd_region *r, uint64_t *avail)
{
	uint64_t size;
	return r->ops->space(r, &size, avail);
}

int rpmemd_region_info(struct rpmemd_region *r, struct rpmem_region_info *ri)
{
	memset(ri, 0, sizeof(*ri));
	rpmem_strlcpy(ri->name, r->cfg.name, sizeof(ri->name));
	ri->type = r->cfg.type;
	rpmem_strlcpy(ri->path, r->cfg.path, sizeof(ri->path));
	ri->align = r->align;
	/* RPMEM_CAP_RDMA comes with the rdma data plane */
	ri->caps = r->cfg.direct_pmem ? RPMEM_CAP_APM : 0;
	return r->ops->space(r, &ri->size, &ri->free);
}
