/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * versions_int.h -- what versions.c, versions_prune.c, versions_chain.c
 * and versions_lru.c share, nothing else
 */
#ifndef RPMEMD_VERSIONS_INT_H
#define RPMEMD_VERSIONS_INT_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "pool_int.h"
#include "versions.h"

struct rpmemd_undo;

/* a growing array of versions */
struct vlist {
	struct rpmemd_version *v;
	size_t n, cap;
};

/* --- versions.c ----------------------------------------------------------- */

/* ver_name -- "<pool>.v<gen>.ver" into out */
void ver_name(const char *pool, uint64_t gen, char *out, size_t len);
/* ver_bytes -- the bytes of version gen of pool: journal, scrub record */
uint64_t ver_bytes(int dirfd, const char *pool, uint64_t gen);
/*
 * scan_dir -- every version file in metafd (of pool only, unless NULL)
 * as found, headers unread (only pool, gen, bytes), sorted
 */
int scan_dir(int metafd, const char *pool, struct vlist *l);
/* ver_read -- version v's header (of the pool of metadata m) into v */
int ver_read(int metafd, const struct rpmemd_meta *m,
	     struct rpmemd_version *v);
/* ver_unlink -- remove version gen of pool (its journal, its record) */
void ver_unlink(int metafd, const char *pool, uint64_t gen);
/* ver_unlink_folded -- remove version gen of pool, folded into an older */
void ver_unlink_folded(int metafd, const char *pool, uint64_t gen);
/*
 * pool_versions -- the versions of pool (metadata m) in l, ok[] (malloc'd)
 * marking the ones on its chain; r->ver_lock held
 */
int pool_versions(struct rpmemd_region *r, const char *pool,
		  const struct rpmemd_meta *m, struct vlist *l, uint8_t **ok);

/* vchain_has -- l has restorable version gen */
int vchain_has(const struct vlist *l, const uint8_t *ok, uint64_t gen);

/* --- versions_lru.c ------------------------------------------------------- */

/* an open chain of version journals (versions_chain.c reads it) */
struct rpmemd_vchain {
	struct rpmemd_vchain *prev, *next; /* in vc_reg, while loaded */
	const void *owner; /* the session reading it: its share is bounded */
	struct rpmemd_region *r;
	char pool[RPMEM_NAME_MAX + 1];
	uint64_t gen;	 /* the version */
	uint64_t at;	 /* the pool's generation it reads from */
	uint64_t loads;	 /* journals loaded, reloads included */
	uint64_t checked; /* bytes of records its last read checked */
	int pending;	  /* reads a pending pool: its journal overlaid too */
	pthread_mutex_t lk; /* held while u[] is read, or closed */
	int loaded;	    /* u[] open (changed under vc_reg.lock and lk) */
	struct rpmemd_undo **u; /* newest first */
	size_t n;
	size_t use; /* of u[], from u[0]: the versions >= gen */
	uint8_t *tmp; /* a record's data */
};

/* the open chains, most recently read first (versions_lru.c) */
struct vc_registry {
	pthread_mutex_t lock;
	struct rpmemd_vchain *head; /* loaded chains, most recent first */
	size_t fds;		    /* journals they hold open */
	size_t max;		    /* 0: not known yet */
	uint64_t loads;		    /* journals loaded, since the start */
};
extern struct vc_registry vc_reg;

/* vc_front -- c becomes the most recently read; vc_reg.lock held */
void vc_front(struct rpmemd_vchain *c);
/* vc_drop -- close c's journals (reopened at its next read); vc_reg.lock */
void vc_drop(struct rpmemd_vchain *c);
/* vchain_install -- c's journals are u[n]: in vc_reg, c->lk held after */
void vchain_install(struct rpmemd_vchain *c, struct rpmemd_undo **u,
		    size_t n);

#endif
