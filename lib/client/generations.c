/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * generations.c -- a remote pool's role and generation history (GEN:
 * read, promote, demote, adopt) and the sync's check of the two
 * histories before it moves data (docs/ARCHITECTURE.md, "Generation
 * histories")
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>

#include "client.h"
#include "sync_int.h"
#include "util.h"

/* gen_usable -- the pool is open and its target keeps histories */
static int gen_usable(struct rpmemctl_pool *p)
{
	int ret = client_pool_usable(p);
	if (ret)
		return ret;
	if (p->sess->caps & RPMEM_CAP_GENERATIONS)
		return 0;
	client_seterr(p->sess, "%s:%s (%s) keeps no generation histories: it is older than this client",
		      p->sess->host, p->sess->port, p->sess->server);
	return -ENOTSUP;
}

/* gen_call -- a GEN request of op; *out from its GEN_REPLY */
static int gen_call(struct rpmemctl_pool *p, uint8_t op, uint32_t flags,
		    const uint64_t *ids, unsigned count,
		    struct rpmemctl_generations *out)
{
	struct rpmem_msg_gen m = { .handle = p->handle, .op = op,
				   .flags = flags, .count = (uint8_t)count };
	struct rpmem_msg_gen_reply rep;
	uint8_t buf[32 + RPMEM_MAX_GENERATIONS * 8];
	size_t rlen;
	int ret = gen_usable(p);

	if (ret)
		return ret;
	if (count)
		memcpy(m.ids, ids, count * sizeof(ids[0]));
	int len = rpmem_gen_encode(buf, sizeof(buf), &m);
	if (len < 0)
		return len;
	ret = client_call(p->sess, RPMEM_MSG_GEN, buf, (size_t)len,
			  RPMEM_MSG_GEN_REPLY, &rlen);
	if (ret)
		return ret;
	if (rpmem_gen_reply_decode(p->sess->rbuf, rlen, &rep))
		return client_bad_reply(p->sess, RPMEM_MSG_GEN_REPLY);
	if (out) {
		memset(out, 0, sizeof(*out));
		out->role = rep.role;
		out->state = rep.state;
		out->generation = rep.generation;
		out->changed = rep.changed;
		out->rolled_back = rep.rolled_back;
		out->count = rep.count;
		memcpy(out->ids, rep.ids, rep.count * sizeof(rep.ids[0]));
	}
	p->state = rep.state;
	p->generation = rep.generation;
	return 0;
}

RPMEM_EXPORT int
rpmemctl_pool_get_generations(struct rpmemctl_pool *pool,
			      struct rpmemctl_generations *out)
{
	client_pool_begin(pool);
	int ret = out ? gen_call(pool, RPMEM_GEN_GET, 0, NULL, 0, out) :
			-EINVAL;
	return client_pool_end(pool, ret, "reading the generation history");
}

RPMEM_EXPORT int rpmemctl_pool_promote(struct rpmemctl_pool *pool,
				       unsigned flags,
				       struct rpmemctl_generations *out)
{
	client_pool_begin(pool);
	int ret = flags & ~RPMEMCTL_PROMOTE_FORCE ?
			  -EINVAL :
			  gen_call(pool, RPMEM_GEN_PROMOTE,
				   flags & RPMEMCTL_PROMOTE_FORCE ?
					   RPMEM_GEN_FORCE :
					   0,
				   NULL, 0, out);
	return client_pool_end(pool, ret, "promoting");
}

RPMEM_EXPORT int rpmemctl_pool_demote(struct rpmemctl_pool *pool,
				      struct rpmemctl_generations *out)
{
	client_pool_begin(pool);
	int ret = gen_call(pool, RPMEM_GEN_DEMOTE, 0, NULL, 0, out);
	return client_pool_end(pool, ret, "demoting");
}

int client_pool_gen_adopt(struct rpmemctl_pool *p, const uint64_t *ids,
			  unsigned count)
{
	return gen_call(p, RPMEM_GEN_ADOPT, 0, ids, count, NULL);
}

RPMEM_EXPORT const char *rpmemctl_role_str(int role)
{
	return rpmem_role_str((uint8_t)role);
}

/* --- the sync's check --------------------------------------------------- */

/* when_str -- unix seconds t as local "YYYY-MM-DD HH:MM:SS", or "never" */
static const char *when_str(uint64_t t, char *buf, size_t len)
{
	time_t tt = (time_t)t;
	struct tm tm;
	if (!t || !localtime_r(&tt, &tm) ||
	    !strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm))
		snprintf(buf, len, "never");
	return buf;
}

/* side_str -- "last written T, history ID, ID" of g into buf */
static const char *side_str(const struct rpmemctl_generations *g, char *buf,
			    size_t len)
{
	char when[32], ids[4 * 17 + 1];
	rpmem_gen_ids_fmt(g->ids, g->count < 4 ? g->count : 4, ", ", ids,
			  sizeof(ids));
	snprintf(buf, len, "last written %s, history %s%s",
		 when_str(g->changed, when, sizeof(when)), ids,
		 g->count > 4 ? ", ..." : "");
	return buf;
}

/*
 * refuse -- the comparison forbids the sync: why, both sides' last
 * writes, the commands that would discard one side; -EUCLEAN
 */
static int refuse(struct sync_ctx *c, int cmp,
		  const struct rpmemctl_generations *l,
		  const struct rpmemctl_generations *r)
{
	char ls[200], rs[200], t[256 + 16 + 2 * RPMEM_NAME_MAX + 8];
	const char *f = c->o->history;
	snprintf(t, sizeof(t), "%s%s%s:%s/%s/%s",
		 strchr(c->s->host, ':') ? "[" : "", c->s->host,
		 strchr(c->s->host, ':') ? "]" : "", c->s->port, c->p->region,
		 c->p->name);
	side_str(l, ls, sizeof(ls));
	side_str(r, rs, sizeof(rs));
	if (cmp == RPMEMCTL_GEN_BEHIND)
		client_pool_seterr(c->p, "the target holds newer writes than '%s' (target: %s; local: %s): a push would lose them. Pull them with `rpmemctl sync --pull %s %s`, or discard them with `rpmemctl sync --discard-target %s %s`",
				   f, rs, ls, f, t, f, t);
	else if (cmp == RPMEMCTL_GEN_AHEAD)
		client_pool_seterr(c->p, "'%s' holds newer writes than the target (local: %s; target: %s): a pull would lose them. Push them with `rpmemctl sync %s %s`, or discard them with `rpmemctl sync --pull --discard-local %s %s`",
				   f, ls, rs, f, t, f, t);
	else
		client_pool_seterr(c->p, "split brain: '%s' and the target were both written since they last agreed%s (local: %s; target: %s). Nothing was overwritten. Keep the local copy with `rpmemctl sync --discard-target %s %s`, or keep the target's with `rpmemctl sync --pull --discard-local %s %s`",
				   f, cmp == RPMEMCTL_GEN_UNRELATED ?
					      " (their histories have no id in common)" :
					      "",
				   ls, rs, f, t, f, t);
	return -EUCLEAN;
}

/* promoted -- g's history shows a promotion (RPMEM_GEN_PROMOTED) */
static int promoted(const struct rpmemctl_generations *g)
{
	for (unsigned i = 0; i < g->count; i++)
		if (g->ids[i] & RPMEM_GEN_PROMOTED)
			return 1;
	return 0;
}

/*
 * refuse_unknown -- a push of a file without a history into a target
 * whose history shows a promotion: the target was written by a primary
 * the file cannot show it followed; -EUCLEAN
 */
static int refuse_unknown(struct sync_ctx *c)
{
	char rs[200], t[256 + 16 + 2 * RPMEM_NAME_MAX + 8];
	const char *f = c->o->history;
	snprintf(t, sizeof(t), "%s%s%s:%s/%s/%s",
		 strchr(c->s->host, ':') ? "[" : "", c->s->host,
		 strchr(c->s->host, ':') ? "]" : "", c->s->port, c->p->region,
		 c->p->name);
	side_str(&c->rgen, rs, sizeof(rs));
	client_pool_seterr(c->p, "the target was promoted and may hold writes '%s' never saw: '%s' has no generation history to show it followed them (target: %s). Pull the target's copy with `rpmemctl sync --pull %s %s`, or discard its writes with `rpmemctl sync --discard-target %s %s`",
			   f, f, rs, f, t, f, t);
	return -EUCLEAN;
}

/* allowed -- cmp permits a sync of mode (discard flags included) */
static int allowed(const struct sync_ctx *c, int cmp)
{
	int pull = c->o->mode == RPMEMCTL_SYNC_PULL;
	if (cmp == RPMEMCTL_GEN_SAME || cmp == RPMEMCTL_GEN_UNKNOWN)
		return 1;
	if (cmp == (pull ? RPMEMCTL_GEN_BEHIND : RPMEMCTL_GEN_AHEAD))
		return 1;
	return c->o->flags & (pull ? RPMEMCTL_SYNC_DISCARD_LOCAL :
				     RPMEMCTL_SYNC_DISCARD_TARGET);
}

/*
 * hist_load -- under client_history_lock: f's history into c->hist, a
 * new id for writes since it was recorded; a missing one must be writable
 */
static int hist_load(struct sync_ctx *c, const char *f)
{
	int err, ret = client_history_read(f, &c->hist);
	if (ret == -ENOENT && c->o->mode != RPMEMCTL_SYNC_PULL &&
	    !(c->o->flags & RPMEMCTL_SYNC_DRY_RUN) &&
	    (err = client_history_writable(f))) {
		client_pool_seterr(c->p, "cannot write the generation history '%s.rpmemgen': %s; a push without one could overwrite newer writes on the target unnoticed, so it is refused (push without a history with --no-history)",
				   f, strerror(-err));
		return -EUCLEAN;
	}
	if (ret && ret != -ENOENT) {
		client_pool_seterr(c->p, "cannot read the generation history of '%s': %s",
				   f, ret == -EBADMSG ? "damaged" : strerror(-ret));
		return ret == -EBADMSG ? -EUCLEAN : ret;
	}
	if (ret || !client_history_written(f, &c->hist))
		return 0;
	/* written by a live writer that replicated it here: no new writes */
	if (client_history_is_live(&c->hist, c->p->uuid)) {
		client_log(c->s, LOG_INFO,
			   "'%s' was written since its history was recorded by a live writer replicating to this pool: its writes are no new ones here",
			   f);
		return 0;
	}
	/*
	 * written since it last agreed: a new id, kept if the sync fails;
	 * writes after one no copy took yet join it (a refused retry adds
	 * no id)
	 */
	int fresh = !c->hist.local;
	c->hist.nlive = 0;
	c->hist.local = 1;
	return client_history_record(f, &c->hist, c->hist.g.ids,
				     c->hist.g.count, fresh);
}

int sync_gen_check(struct sync_ctx *c)
{
	const char *f = c->o->history;
	c->st.gen_cmp = RPMEMCTL_GEN_UNKNOWN;
	if (!f || c->o->mode == RPMEMCTL_SYNC_VERIFY)
		return 0;
	if (!(c->s->caps & RPMEM_CAP_GENERATIONS)) {
		client_log(c->s, LOG_INFO,
			   "%s:%s keeps no generation histories: '%s' synced without comparing them",
			   c->s->host, c->s->port, f);
		return 0;
	}
	client_history_lock();
	int ret = hist_load(c, f);
	client_history_unlock();
	if (ret)
		return ret;
	if ((ret = gen_call(c->p, RPMEM_GEN_GET, 0, NULL, 0, &c->rgen)))
		return ret;
	int cmp = rpmemctl_generations_compare(&c->hist.g, &c->rgen);
	c->st.gen_cmp = cmp;
	client_log(c->s, LOG_INFO,
		   "generation histories of '%s' and the target: %s%s", f,
		   rpmemctl_gen_cmp_str(cmp),
		   cmp != RPMEMCTL_GEN_UNKNOWN ? "" :
		   c->hist.g.count ? " (the target has none: as before histories)" :
				     " (the local file has none yet: as before histories)");
	if (!allowed(c, cmp))
		return refuse(c, cmp, &c->hist.g, &c->rgen);
	if (cmp == RPMEMCTL_GEN_UNKNOWN && !c->hist.g.count &&
	    c->o->mode != RPMEMCTL_SYNC_PULL && promoted(&c->rgen) &&
	    !(c->o->flags & RPMEMCTL_SYNC_DISCARD_TARGET))
		return refuse_unknown(c);
	c->hist_ok = 1;
	return 0;
}

/*
 * push_record -- under client_history_lock, after a push: the local
 * history records it, unless another target's push recorded a newer id
 * meanwhile (that one stays; this target adopts the ids this push
 * carried). A file without a history takes the one a sibling push
 * started, else a new one.
 */
static int push_record(struct sync_ctx *c, const char *f)
{
	struct client_history now;
	int ret = client_history_read(f, &now);
	if (ret && ret != -ENOENT)
		return ret;
	if (!c->hist.g.count && !ret) {
		c->hist = now;
		return 0;
	}
	if (!ret && now.g.ids[0] != c->hist.g.ids[0])
		return 0;
	/* equal now: a live writer adds its pools again as it writes */
	c->hist.nlive = 0;
	c->hist.local = 0;
	return client_history_record(f, &c->hist, c->hist.g.ids,
				     c->hist.g.count, 0);
}

int sync_gen_done(struct sync_ctx *c, int ret)
{
	const char *f = c->o->history;
	if (ret || !c->hist_ok || (c->o->flags & RPMEMCTL_SYNC_DRY_RUN) ||
	    c->o->mode == RPMEMCTL_SYNC_VERIFY)
		return ret;
	client_history_lock();
	if (c->o->mode == RPMEMCTL_SYNC_PULL) {
		/* the local copy now holds the target's writes */
		c->hist.nlive = 0;
		c->hist.local = 0;
		ret = client_history_record(f, &c->hist, c->rgen.ids,
					    c->rgen.count, 0);
	} else {
		ret = push_record(c, f);
	}
	client_history_unlock();
	if (!ret && c->o->mode != RPMEMCTL_SYNC_PULL)
		ret = gen_call(c->p, RPMEM_GEN_ADOPT, 0, c->hist.g.ids,
			       c->hist.g.count, NULL);
	return ret;
}
