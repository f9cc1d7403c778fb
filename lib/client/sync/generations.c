/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * generations.c -- a remote pool's role and generation history (GEN:
 * read, promote, demote, adopt) and the sync's check of the two
 * histories before it moves data (docs/ARCHITECTURE.md, "Generation
 * histories")
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "client_sync.h"
#include "sync_int.h"
#include "util.h"

/*
 * GEN_IDS_TEXT_MAX -- room for a history's newest ids as a message lists them;
 * GEN_POLICY_MAX an after-split-brain policy's name; GEN_HANDLER_MAX the
 * split-brain handler's command; GEN_ENV_N its environment's entries,
 * GEN_ENV_MAX each entry's room
 */
#define GEN_IDS_TEXT_MAX 200
#define GEN_POLICY_MAX 64
#define GEN_HANDLER_MAX 1024
#define GEN_ENV_N 8
#define GEN_ENV_MAX 1200

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

RPMEM_EXPORT int rpmemctl_pool_adopt_generations(struct rpmemctl_pool *pool,
						const uint64_t *ids,
						unsigned count)
{
	client_pool_begin(pool);
	int ret = !ids || !count || count > RPMEMCTL_GENERATIONS_MAX ?
			  -EINVAL :
			  gen_call(pool, RPMEM_GEN_ADOPT, 0, ids, count, NULL);
	return client_pool_end(pool, ret, "adopting a generation history");
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
	char when[RPMEM_TIME_STR], ids[4 * 17 + 1];
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
	char ls[GEN_IDS_TEXT_MAX], rs[GEN_IDS_TEXT_MAX];
	char t[256 + 16 + 2 * RPMEM_NAME_MAX + 8];
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
	char rs[GEN_IDS_TEXT_MAX], t[256 + 16 + 2 * RPMEM_NAME_MAX + 8];
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

/* --- split brain: reported, handled, resolved by policy ------------------ */

enum sb_policy { SB_REFUSE, SB_ZERO_CHANGES, SB_YOUNGER_PRIMARY };

/*
 * sb_policy -- the after-split-brain policy: RPMEM_AFTER_SB, else
 * replicate.after_sb of rpmemctl.conf; refuse unless one is named (an
 * unknown name refuses too, and says so)
 */
static enum sb_policy sb_policy(struct sync_ctx *c)
{
	char v[GEN_POLICY_MAX] = "";
	const char *e = getenv("RPMEM_AFTER_SB");
	if (e)
		rpmem_strlcpy(v, e, sizeof(v));
	else if (client_cfg_get_str("replicate.after_sb", v, sizeof(v)) < 0)
		return SB_REFUSE;
	if (!v[0] || !strcmp(v, "refuse"))
		return SB_REFUSE;
	if (!strcmp(v, "discard-zero-changes"))
		return SB_ZERO_CHANGES;
	if (!strcmp(v, "discard-younger-primary"))
		return SB_YOUNGER_PRIMARY;
	client_log(c->s, LOG_WARNING,
		   "unknown after-split-brain policy '%s' (refuse, discard-zero-changes, discard-younger-primary): refused",
		   v);
	return SB_REFUSE;
}

/* has_id -- id is one of g's */
static int has_id(const struct rpmemctl_generations *g, uint64_t id)
{
	for (unsigned i = 0; i < g->count; i++)
		if (g->ids[i] == id)
			return 1;
	return 0;
}

/*
 * since_split -- how many of g's newest ids came after the last id it
 * shares with o (g->count if none)
 */
static unsigned since_split(const struct rpmemctl_generations *g,
			    const struct rpmemctl_generations *o)
{
	unsigned i = 0;
	while (i < g->count && !has_id(o, g->ids[i]))
		i++;
	return i;
}

/*
 * spawn_detached -- argv run with envp in a grandchild (stdin from
 * /dev/null), not waited for: the caller, maybe an application's
 * persist, goes on; 0 or -errno
 */
static int spawn_detached(char *const argv[], char *const envp[])
{
	int st = 0;
	pid_t pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		pid_t g = fork();
		if (g == 0) {
			int fd = open("/dev/null", O_RDONLY);
			if (fd >= 0)
				dup2(fd, 0);
			execve(argv[0], argv, envp);
			_exit(127);
		}
		_exit(g < 0 ? 1 : 0);
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return WIFEXITED(st) && !WEXITSTATUS(st) ? 0 : -EAGAIN;
}

/* promotions -- how many of g's n newest ids are promotions' */
static unsigned promotions(const struct rpmemctl_generations *g, unsigned n)
{
	unsigned k = 0;
	for (unsigned i = 0; i < n; i++)
		k += (g->ids[i] & RPMEM_GEN_PROMOTED) != 0;
	return k;
}

/*
 * sb_resolves -- the policy lets a diverged sync of this direction go
 * on: the side it overwrites made no change since the split (only a
 * promotion), or was the one promoted after it (the younger primary)
 * while the other was not; why into why
 */
static int sb_resolves(struct sync_ctx *c, int cmp, char *why, size_t len)
{
	const struct rpmemctl_generations *l = &c->hist.g, *r = &c->rgen;
	if (cmp != RPMEMCTL_GEN_DIVERGED)
		return 0;
	int pull = c->o->mode == RPMEMCTL_SYNC_PULL;
	/* the side the sync overwrites, and the side it keeps */
	const struct rpmemctl_generations *lose = pull ? l : r,
					  *keep = pull ? r : l;
	unsigned nl = since_split(lose, keep), nk = since_split(keep, lose);
	switch (sb_policy(c)) {
	case SB_ZERO_CHANGES:
		if (promotions(lose, nl) != nl)
			return 0;
		snprintf(why, len, "discard-zero-changes: the %s was not written since the split (%s)",
			 pull ? "local file" : "target",
			 nl ? "only promoted" : "no id since");
		return 1;
	case SB_YOUNGER_PRIMARY:
		if (!promotions(lose, nl) || promotions(keep, nk))
			return 0;
		snprintf(why, len, "discard-younger-primary: the %s was promoted after the split, the %s was not",
			 pull ? "local file" : "target",
			 pull ? "target" : "local file");
		return 1;
	default:
		return 0;
	}
}

/* sb_tag -- one split brain: this pool and the two newest ids */
static uint64_t sb_tag(const struct sync_ctx *c)
{
	uint64_t t = 0x9e3779b97f4a7c15ull;
	for (int i = 0; i < 16; i++)
		t = (t ^ c->p->uuid[i]) * 0x100000001b3ull;
	t ^= c->hist.g.count ? c->hist.g.ids[0] : 0;
	t *= 0xff51afd7ed558ccdull;
	t ^= c->rgen.count ? c->rgen.ids[0] : 0;
	return (t * 0xc4ceb9fe1a85ec53ull) | 1;
}

/*
 * sb_handler -- the split-brain handler (RPMEM_SPLIT_BRAIN_HANDLER, else
 * replicate.split_brain_handler of rpmemctl.conf): run through /bin/sh,
 * not waited for, the file, the pool and both histories in its
 * environment
 */
static void sb_handler(struct sync_ctx *c, const char *f)
{
	char cmd[GEN_HANDLER_MAX] = "", env[GEN_ENV_N][GEN_ENV_MAX];
	char ls[RPMEM_MAX_GENERATIONS * 17 + 1],
	     rs[RPMEM_MAX_GENERATIONS * 17 + 1];
	const char *e = getenv("RPMEM_SPLIT_BRAIN_HANDLER");
	if (e)
		rpmem_strlcpy(cmd, e, sizeof(cmd));
	else if (client_cfg_get_str("replicate.split_brain_handler", cmd,
				    sizeof(cmd)) < 0)
		return;
	if (!cmd[0])
		return;
	rpmem_gen_ids_fmt(c->hist.g.ids, c->hist.g.count, ",", ls, sizeof(ls));
	rpmem_gen_ids_fmt(c->rgen.ids, c->rgen.count, ",", rs, sizeof(rs));
	snprintf(env[0], sizeof(env[0]), "RPMEM_SB_FILE=%s", f);
	snprintf(env[1], sizeof(env[1]), "RPMEM_SB_TARGET=%s%s%s:%s",
		 strchr(c->s->host, ':') ? "[" : "", c->s->host,
		 strchr(c->s->host, ':') ? "]" : "", c->s->port);
	snprintf(env[2], sizeof(env[2]), "RPMEM_SB_POOL=%s/%s", c->p->region,
		 c->p->name);
	snprintf(env[3], sizeof(env[3]), "RPMEM_SB_LOCAL_HISTORY=%s", ls);
	snprintf(env[4], sizeof(env[4]), "RPMEM_SB_TARGET_HISTORY=%s", rs);
	snprintf(env[5], sizeof(env[5]), "RPMEM_SB_REFUSED=%s",
		 c->o->mode == RPMEMCTL_SYNC_PULL ? "pull" : "push");
	snprintf(env[6], sizeof(env[6]), "PATH=/usr/local/bin:/usr/bin:/bin");
	char *envp[] = { env[0], env[1], env[2], env[3], env[4], env[5],
			 env[6], NULL };
	char *argv[] = { "/bin/sh", "-c", cmd, NULL };
	int ret = spawn_detached(argv, envp);
	client_log(c->s, ret ? LOG_ERR : LOG_NOTICE,
		   "split brain of '%s' and %s/%s: handler '%s' %s%s", f,
		   c->p->region, c->p->name, cmd,
		   ret ? "could not be started: " : "started",
		   ret ? strerror(-ret) : "");
}

/*
 * sb_report -- a split brain refused: the target logs it and publishes an
 * event (where it takes GEN split), the handler runs; once per split
 * brain, not per refused retry
 */
static void sb_report(struct sync_ctx *c, const char *f)
{
	client_history_lock();
	int fresh = client_history_split(f, sb_tag(c));
	client_history_unlock();
	if (!fresh)
		return;
	if (c->s->caps & RPMEM_CAP_SPLIT)
		(void)gen_call(c->p, RPMEM_GEN_SPLIT,
			       c->o->mode == RPMEMCTL_SYNC_PULL ? RPMEM_GEN_PULL :
								  0,
			       c->hist.g.ids, c->hist.g.count, NULL);
	sb_handler(c, f);
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
	struct stat st;
	int err, ret = client_history_read(f, &c->hist);
	/* the file is gone (a pull makes it anew): its history went with it */
	if (!ret && stat(f, &st) && errno == ENOENT) {
		memset(&c->hist, 0, sizeof(c->hist));
		ret = -ENOENT;
	}
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
	char why[RPMEM_MSG_MAX];
	int split = cmp == RPMEMCTL_GEN_DIVERGED ||
		    cmp == RPMEMCTL_GEN_UNRELATED;
	if (!allowed(c, cmp) && split && sb_resolves(c, cmp, why, sizeof(why))) {
		client_log(c->s, LOG_WARNING,
			   "split brain of '%s' and the target resolved by the after-split-brain policy %s: its writes since the split are discarded",
			   f, why);
	} else if (!allowed(c, cmp)) {
		if (split) {
			/* the refusal's message first: the report may fail */
			int ret2 = refuse(c, cmp, &c->hist.g, &c->rgen);
			char msg[CLIENT_ERRMSG_MAX];
			rpmem_strlcpy(msg, c->p->errmsg, sizeof(msg));
			sb_report(c, f);
			rpmem_strlcpy(c->p->errmsg, msg, sizeof(c->p->errmsg));
			return ret2;
		}
		return refuse(c, cmp, &c->hist.g, &c->rgen);
	}
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
	c->hist.nsplit = 0;
	return client_history_record(f, &c->hist, c->hist.g.ids,
				     c->hist.g.count, 0);
}

int sync_gen_done(struct sync_ctx *c, int ret)
{
	const char *f = c->o->history;
	/* a resync's pass leaves the copy behind: its history too */
	if (ret || !c->hist_ok || (c->o->flags & RPMEMCTL_SYNC_DRY_RUN) ||
	    c->o->mode == RPMEMCTL_SYNC_VERIFY || c->o->resync_pass)
		return ret;
	client_history_lock();
	if (c->o->mode == RPMEMCTL_SYNC_PULL) {
		/* the local copy now holds the target's writes */
		c->hist.nlive = 0;
		c->hist.local = 0;
		c->hist.nsplit = 0;
		ret = client_history_record(f, &c->hist, c->rgen.ids,
					    c->rgen.count, 0);
	} else {
		ret = push_record(c, f);
	}
	client_history_unlock();
	if (!ret && c->o->mode != RPMEMCTL_SYNC_PULL)
		ret = gen_call(c->p, RPMEM_GEN_ADOPT, 0, c->hist.g.ids,
			       c->hist.g.count, NULL);
	/*
	 * a split brain resolved by taking the target's copy: the target is
	 * told, and shows it no more (its history does not change)
	 */
	else if (!ret && c->st.gen_cmp == RPMEMCTL_GEN_DIVERGED &&
		 (c->s->caps & RPMEM_CAP_SPLIT_LIST))
		(void)gen_call(c->p, RPMEM_GEN_SPLIT, RPMEM_GEN_RESOLVED,
			       c->rgen.ids, c->rgen.count, NULL);
	return ret;
}
