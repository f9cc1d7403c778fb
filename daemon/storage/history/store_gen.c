/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * store_gen.c -- a pool's role and generation history (meta.h): read,
 * promote, demote, adopt (docs/ARCHITECTURE.md, "Generation histories")
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "backend.h"
#include "devdax.h"
#include "hist.h"
#include "history.h"
#include "journal.h"
#include "log.h"
#include "scrub.h"
#include "region.h"
#include "store.h"
#include "util.h"

/* HIST_TEXT_MAX -- room for a history file's text */
#define HIST_TEXT_MAX 1024

/*
 * A pool promoted in place is written by a local application through its
 * pool file in the region, which may replicate it onward (rpmemctl, the
 * replica API, the preload library): those keep the file's history in
 * <pool>.rpmemgen beside it, in lib/common/hist.h's format. So that
 * the in-place primary carries on the pool's history instead of starting
 * an unrelated one, promotion writes that file with the pool's ids, and
 * demotion takes back what it says (the application's ids, a new one
 * for writes made since it was last recorded) and removes it.
 */

/* local_hist_name -- "<pool>.rpmemgen" (plus suffix) into out */
static void local_hist_name(const struct rpmemd_pool *p, const char *suffix,
			    char *out, size_t len)
{
	snprintf(out, len, "%s%s%s", p->name, RPMEM_HIST_SUFFIX, suffix);
}

/*
 * local_hist_pool -- a pool of the region is named name (pool names may
 * hold dots): its file is never written, read or removed as a history
 */
static int local_hist_pool(const struct rpmemd_pool *p, const char *name)
{
	char meta[RPMEM_NAME_MAX + 64];
	snprintf(meta, sizeof(meta), "%s%s", name, RPMEMD_META_SUFFIX);
	return !faccessat(p->region->metafd, meta, F_OK, AT_SYMLINK_NOFOLLOW);
}

/* local_hist_write -- <pool>.rpmemgen with m's ids and the file's stat */
static int local_hist_write(struct rpmemd_pool *p, const struct rpmemd_meta *m)
{
	char name[RPMEM_NAME_MAX + 32], tmp[RPMEM_NAME_MAX + 40];
	char text[HIST_TEXT_MAX];
	struct rpmem_hist_head h = { .count = m->nhist };
	struct stat st;
	int dirfd = p->region->dirfd;
	if (fstat(p->fd, &st))
		return -errno;
	local_hist_name(p, "", name, sizeof(name));
	local_hist_name(p, ".tmp", tmp, sizeof(tmp));
	if (local_hist_pool(p, name) || local_hist_pool(p, tmp))
		return -EEXIST;
	memcpy(h.ids, m->hist, m->nhist * sizeof(h.ids[0]));
	h.size = (uint64_t)st.st_size;
	h.sec = (uint64_t)st.st_mtim.tv_sec;
	h.nsec = (uint64_t)st.st_mtim.tv_nsec;
	int n = rpmem_hist_fmt(&h, "", text, sizeof(text));
	if (n < 0)
		return n;
	if (unlinkat(dirfd, tmp, 0) && errno != ENOENT)
		return -errno;
	int fd = openat(dirfd, tmp,
			O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			0644);
	if (fd < 0)
		return -errno;
	int ret = write(fd, text, (size_t)n) == n ? 0 : -EIO;
	if (!ret && fsync(fd))
		ret = -errno;
	close(fd);
	if (!ret && renameat(dirfd, tmp, dirfd, name))
		ret = -errno;
	if (ret)
		unlinkat(dirfd, tmp, 0);
	return ret ? ret : (fsync(dirfd) ? -errno : 0);
}

/*
 * local_hist_take -- at demotion: the ids of <pool>.rpmemgen into m if
 * they descend from the pool's newest (a new id in front if the pool file
 * was written since they were recorded), then the file removed; m as it
 * was without a usable file (a note in the log)
 */
static void local_hist_take(struct rpmemd_pool *p, struct rpmemd_meta *m)
{
	char name[RPMEM_NAME_MAX + 32], text[HIST_TEXT_MAX + 1];
	struct rpmem_hist_head h;
	struct stat st;
	local_hist_name(p, "", name, sizeof(name));
	if (local_hist_pool(p, name))
		return;
	int fd = openat(p->region->dirfd, name,
			O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return;
	ssize_t len = read(fd, text, sizeof(text) - 1);
	close(fd);
	int n = -1;
	if (len > 0) {
		text[len] = '\0';
		if (!rpmem_hist_parse(text, &h))
			n = (int)h.count;
	}
	int descends = 0;
	for (int i = 0; n > 0 && i < n && m->nhist; i++)
		descends |= h.ids[i] == m->hist[0];
	if (!descends) {
		rpmem_log(LOG_WARNING,
			  "pool '%s': its local history '%s' is %s: the pool keeps its own",
			  p->name, name, n <= 0 ? "damaged" :
			  "not descended from the pool's");
	} else {
		memcpy(m->hist, h.ids, (size_t)n * sizeof(h.ids[0]));
		m->nhist = (uint8_t)n;
		uint64_t id;
		if (!fstat(p->fd, &st) &&
		    ((uint64_t)st.st_size != h.size ||
		     (uint64_t)st.st_mtim.tv_sec != h.sec ||
		     (uint64_t)st.st_mtim.tv_nsec != h.nsec) &&
		    !rpmem_gen_new(&id))
			rpmemd_meta_hist_push(m, id);
	}
	unlinkat(p->region->dirfd, name, 0);
}

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
	rpmemd_journal_lock(p);
	int journal = rpmemd_journal_undo(p) != NULL;
	rpmemd_journal_unlock(p);
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
		if (!(flags & RPMEM_GEN_FORCE) &&
		    rpmemd_source_live(cur.source)) {
			snprintf(err, errlen,
				 "pool '%s' is a live copy whose writer is gone (syncing (live)): it holds the writer's last drained image, crash-consistent as a local pool after a crash, but whether another copy went on without it is not known here (refused without force)",
				 p->name);
			return -EAGAIN;
		}
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
	if ((ret = rpmem_gen_new_promotion(&id))) {
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
	m.split_at = 0; /* an operator chose this copy */
	ret = gen_write(p, &m, err, errlen);
	if (!ret && p->fd >= 0 && p->region->dirfd >= 0 &&
	    (ret = local_hist_write(p, &m))) {
		/* promoted all the same: its writers start a history */
		rpmem_log(LOG_WARNING,
			  "pool '%s': cannot write its local history '%s%s': %s",
			  p->name, p->name, RPMEM_HIST_SUFFIX, strerror(-ret));
		ret = 0;
	}
	pthread_mutex_unlock(&p->meta_lock);
	return ret;
}

/*
 * gen_set -- role secondary (DEMOTE), or the history ids (ADOPT): of a
 * consistent copy, or of a live one (syncing) by the session writing it,
 * which records there that it went on without a copy it left behind
 * (docs/ARCHITECTURE.md, "Disk states")
 */
static int gen_set(struct rpmemd_pool *p, const struct rpmem_msg_gen *g,
		   char *err, size_t errlen)
{
	pthread_mutex_lock(&p->meta_lock);
	struct rpmemd_meta m = p->meta;
	int ret = 0;
	if (g->op == RPMEM_GEN_DEMOTE) {
		if (m.role == RPMEM_ROLE_PRIMARY && p->fd >= 0 &&
		    p->region->dirfd >= 0)
			local_hist_take(p, &m);
		m.role = RPMEM_ROLE_SECONDARY;
	} else if (m.state != RPMEM_POOL_CONSISTENT &&
		   !(m.state == RPMEM_POOL_SYNCING &&
		     rpmemd_source_live(m.source) &&
		     (g->flags & RPMEMD_GEN_LIVE_WRITER))) {
		snprintf(err, errlen,
			 "pool '%s' is %s: only a consistent copy (or a live copy, by its writer) takes a generation history",
			 p->name, rpmem_state_str(m.state));
		ret = -EINVAL;
	} else {
		memcpy(m.hist, g->ids, g->count * sizeof(g->ids[0]));
		m.nhist = g->count;
	}
	if (!ret) {
		m.split_at = 0; /* its history moved on: resolved */
		ret = gen_write(p, &m, err, errlen);
	}
	pthread_mutex_unlock(&p->meta_lock);
	return ret;
}

/*
 * gen_split_mark -- GEN split: the time of the split brain kept with the
 * pool's metadata until its history changes (list and status show it);
 * RPMEM_GEN_RESOLVED by an initiator that now holds the pool's newest id
 * (it took the pool's copy) clears it, else -ESTALE
 */
static int gen_split_mark(struct rpmemd_pool *p, const struct rpmem_msg_gen *g,
			  char *err, size_t errlen)
{
	int ret = 0;
	pthread_mutex_lock(&p->meta_lock);
	struct rpmemd_meta m = p->meta;
	if (!(g->flags & RPMEM_GEN_RESOLVED)) {
		m.split_at = (uint64_t)time(NULL);
	} else if (!g->count || !m.nhist || g->ids[0] != m.hist[0]) {
		snprintf(err, errlen,
			 "pool '%s': a split brain is resolved only by a copy that took the pool's history",
			 p->name);
		ret = -ESTALE;
	} else {
		m.split_at = 0;
	}
	if (!ret && m.split_at != p->meta.split_at)
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
	else if (g->op == RPMEM_GEN_SPLIT)
		ret = gen_split_mark(p, g, err, errlen);
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
