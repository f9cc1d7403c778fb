/* SPDX-License-Identifier: BSD-3-Clause */
/* access.c -- who may do what: the access rules of rpmemd.conf, matched */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "access.h"
#include "log.h"

int rpmemd_access_new(const struct rpmemd_config *cfg,
		      struct rpmemd_access **out)
{
	struct rpmemd_access *a = calloc(1, sizeof(*a));

	if (!a)
		return -ENOMEM;
	a->v = calloc(cfg->naccess ? cfg->naccess : 1, sizeof(*a->v));
	if (!a->v) {
		free(a);
		return -ENOMEM;
	}
	if (cfg->naccess)
		memcpy(a->v, cfg->access, cfg->naccess * sizeof(*a->v));
	a->n = cfg->naccess;
	*out = a;
	return 0;
}

void rpmemd_access_delete(struct rpmemd_access **pa)
{
	struct rpmemd_access *a = pa ? *pa : NULL;

	if (!a)
		return;
	free(a->v);
	free(a);
	*pa = NULL;
}

/*
 * grants -- rule r gives right (on region, or daemon-wide if NULL);
 * write includes append
 */
static int grants(const struct rpmemd_access_rule *r, enum rpmemd_right right,
		  const char *region)
{
	unsigned has = r->rights;

	if (has & RPMEMD_RIGHT_WRITE)
		has |= RPMEMD_RIGHT_APPEND;
	if (!region)
		return right == RPMEMD_RIGHT_ADMIN ?
			       !!(has & RPMEMD_RIGHT_ADMIN) : 1;
	if (right == RPMEMD_RIGHT_ADMIN || !(has & right))
		return 0;
	return !strcmp(r->region, "*") || !strcmp(r->region, region);
}

int rpmemd_access_allows(const struct rpmemd_access *a, const char *identity,
			 enum rpmemd_right right, const char *region)
{
	if (!a || !identity || !identity[0])
		return 0;
	for (unsigned i = 0; i < a->n; i++)
		if (!strcmp(a->v[i].identity, identity) &&
		    grants(&a->v[i], right, region))
			return 1;
	return 0;
}

const char *rpmemd_right_str(enum rpmemd_right right)
{
	switch (right) {
	case RPMEMD_RIGHT_READ:
		return "read";
	case RPMEMD_RIGHT_WRITE:
		return "write";
	case RPMEMD_RIGHT_ADMIN:
		return "admin";
	case RPMEMD_RIGHT_APPEND:
		return "append";
	}
	return "unknown";
}

/* region_find -- cfg's region of that name (now), or NULL */
static const struct rpmemd_region_cfg *
region_find(const struct rpmemd_config *cfg, const char *name)
{
	for (unsigned i = 0; i < cfg->nregions; i++)
		if (!strcmp(cfg->regions[i].name, name))
			return &cfg->regions[i];
	return NULL;
}

/*
 * append_only -- the identity of rule r holds append but not write on
 * its region by any rule of cfg
 */
static int append_only(const struct rpmemd_config *cfg,
		       const struct rpmemd_access_rule *r)
{
	if (!(r->rights & RPMEMD_RIGHT_APPEND))
		return 0;
	for (unsigned i = 0; i < cfg->naccess; i++) {
		const struct rpmemd_access_rule *o = &cfg->access[i];
		if (!strcmp(o->identity, r->identity) &&
		    (o->rights & RPMEMD_RIGHT_WRITE) &&
		    (!strcmp(o->region, "*") || !strcmp(o->region, r->region)))
			return 0;
	}
	return 1;
}

int rpmemd_access_warn(const struct rpmemd_config *cfg)
{
	int n = 0;

	if (cfg->tls.enabled && !cfg->naccess) {
		WARN("%s: tls is on but there are no access rules: nobody may do anything (add an access list, see rpmemd.conf(5))",
		     cfg->file);
		n++;
	}
	if (!cfg->tls.enabled && cfg->has_access) {
		WARN("%s: access rules apply only to TLS sessions: without a tls group every client may do everything",
		     cfg->file);
		n++;
	}
	for (unsigned i = 0; i < cfg->naccess; i++) {
		const struct rpmemd_access_rule *r = &cfg->access[i];
		const struct rpmemd_region_cfg *rc;
		if (!r->region[0] || !strcmp(r->region, "*"))
			continue;
		if (!(rc = region_find(cfg, r->region))) {
			WARN("%s:%u: access: identity '%s': there is no region '%s' (yet): the rule applies once a reload adds it",
			     cfg->file, r->line, r->identity, r->region);
			n++;
		} else if (!rc->versions && append_only(cfg, r)) {
			WARN("%s:%u: access: identity '%s' may only append to region '%s', which keeps no versions: it can fill new pools but not sync one that holds an image (give the region versions, see rpmemd.conf(5))",
			     cfg->file, r->line, r->identity, r->region);
			n++;
		}
	}
	return n;
}
