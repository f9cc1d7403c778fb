/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * store_gen.c -- a pool's role and generation history (meta.h): read,
 * promote, demote, adopt (docs/ARCHITECTURE.md, "Generation histories")
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "backend.h"
#include "devdax.h"
#include "log.h"
#include "scrub.h"
#include "store.h"
#include "util.h"

/* gen_write -- m becomes the pool's metadata, persisted; meta_lock held */
static int gen_write(struct rpmemd_pool *p, struct rpmemd_meta *m, char *err,
		     size_t errlen)
{
	int ret;
	if (p->dax) {
		/* the slot keeps fewer: the oldest fall off */
		if (m->nhist > RPMEMD_DEVDAX_HIST)
			m->nhist = RPMEMD_DEVDAX_HIST;
		ret = rpmemd_devdax_set_gen(p->dax->dd, p->name, m);
	} else {
		ret = p->region->ops->write_meta(p, m->state, NULL, m);
	}
	if (ret) {
		snprintf(err, errlen, "cannot write the metadata of pool '%s': %s",
			 p->name, strerror(-ret));
		return ret;
	}
	p->meta = *m;
	return 0;
}

/*
 * gen_unsettled -- a forced promotion of a syncing pool settles it first:
 * rolled back from its journal (*rolled = 1), else its partial image
 * marked consistent; 0 or -errno with err set
 */
static int gen_unsettled(struct rpmemd_pool *p, int *rolled, char *err,
			 size_t errlen)
{
	struct rpmemd_meta m;
	pthread_mutex_lock(&p->undo_lock);
	int journal = p->undo != NULL;
	pthread_mutex_unlock(&p->undo_lock);
	if (journal) {
		*rolled = 1;
		return rpmemd_pool_rollback(p, &m, err, errlen);
	}
	return rpmemd_pool_set_state(p, RPMEM_POOL_CONSISTENT, NULL, 0, 0, &m,
				     err, errlen);
}

/*
 * gen_unrecord -- a pool about to be promoted loses the scrub record of its
 * image: applications on this host write it from now on, outside rpmemd,
 * so the record could no longer vouch for it, and reads and scrubs checked
 * against it would call their writes damage. Removed before the role
 * changes: a crash in between leaves a secondary without a record, which
 * its next writer's open records again (scrub.h). 0 or -errno, err set
 */
static int gen_unrecord(struct rpmemd_pool *p, char *err, size_t errlen)
{
	int ret;
	if (p->dax)
		return 0; /* devdax pools have no record */
	if ((ret = rpmemd_scrub_unlink(p->region->metafd, p->name)))
		snprintf(err, errlen,
			 "cannot remove the scrub record of pool '%s' before promoting it: %s",
			 p->name, strerror(-ret));
	return ret;
}

/* gen_promote -- a new id in front of the history, role primary */
static int gen_promote(struct rpmemd_pool *p, uint32_t flags, int *rolled,
		       char *err, size_t errlen)
{
	int ret;
	struct rpmemd_meta cur;
	rpmemd_pool_get_meta(p, &cur);
	/* promoted already: nothing changes (a cluster manager may repeat) */
	if (cur.role == RPMEM_ROLE_PRIMARY &&
	    cur.state == RPMEM_POOL_CONSISTENT)
		return 0;
	if (__atomic_load_n(&p->writer_sid, __ATOMIC_ACQUIRE)) {
		snprintf(err, errlen,
			 "pool '%s' is open for writing by session %u (%s): stop that writer (or `rpmemctl kick` its session) before promoting",
			 p->name, p->writer_sid, p->writer);
		return -EBUSY;
	}
	if (rpmemd_pool_state(p) == RPMEM_POOL_EMPTY) {
		snprintf(err, errlen,
			 "pool '%s' is empty: it holds no copy to promote",
			 p->name);
		return -EINVAL;
	}
	if (rpmemd_pool_state(p) == RPMEM_POOL_SYNCING) {
		if (!(flags & RPMEM_GEN_FORCE)) {
			snprintf(err, errlen,
				 "pool '%s' is syncing: a sync was interrupted or is running, so the copy is partly old and partly new (refused without force)",
				 p->name);
			return -EAGAIN;
		}
		if ((ret = gen_unsettled(p, rolled, err, errlen)))
			return ret;
	}
	uint64_t id;
	if ((ret = rpmem_gen_new(&id))) {
		snprintf(err, errlen, "no random generation id: %s",
			 strerror(-ret));
		return ret;
	}
	if ((ret = gen_unrecord(p, err, errlen)))
		return ret;
	pthread_mutex_lock(&p->meta_lock);
	struct rpmemd_meta m = p->meta;
	rpmemd_meta_hist_push(&m, id);
	m.role = RPMEM_ROLE_PRIMARY;
	ret = gen_write(p, &m, err, errlen);
	pthread_mutex_unlock(&p->meta_lock);
	return ret;
}

/* gen_set -- role secondary (DEMOTE), or the history ids (ADOPT) */
static int gen_set(struct rpmemd_pool *p, const struct rpmem_msg_gen *g,
		   char *err, size_t errlen)
{
	pthread_mutex_lock(&p->meta_lock);
	struct rpmemd_meta m = p->meta;
	int ret = 0;
	if (g->op == RPMEM_GEN_DEMOTE) {
		m.role = RPMEM_ROLE_SECONDARY;
	} else if (m.state != RPMEM_POOL_CONSISTENT) {
		snprintf(err, errlen,
			 "pool '%s' is %s: only a consistent copy takes a generation history",
			 p->name, rpmem_state_str(m.state));
		ret = -EINVAL;
	} else {
		memcpy(m.hist, g->ids, g->count * sizeof(g->ids[0]));
		m.nhist = g->count;
	}
	if (!ret)
		ret = gen_write(p, &m, err, errlen);
	pthread_mutex_unlock(&p->meta_lock);
	return ret;
}

int rpmemd_pool_gen(struct rpmemd_pool *p, const struct rpmem_msg_gen *g,
		    struct rpmemd_meta *out, int *rolled, char *err,
		    size_t errlen)
{
	int ret = 0;
	*rolled = 0;
	if (g->op == RPMEM_GEN_PROMOTE)
		ret = gen_promote(p, g->flags, rolled, err, errlen);
	else if (g->op != RPMEM_GEN_GET)
		ret = gen_set(p, g, err, errlen);
	if (ret)
		return ret;
	rpmemd_pool_get_meta(p, out);
	return 0;
}

uint64_t rpmemd_pool_changed(struct rpmemd_pool *p, const struct rpmemd_meta *m)
{
	struct stat st;
	uint64_t t = m->last_sync;
	if (p->fd >= 0 && !fstat(p->fd, &st) && (uint64_t)st.st_mtime > t)
		t = (uint64_t)st.st_mtime;
	return t;
}
