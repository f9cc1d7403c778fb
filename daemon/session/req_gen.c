/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * req_gen.c -- GEN: a pool's role and generation history (read, promote,
 * demote, adopt); the refusal of write opens of a primary
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "access.h"
#include "events.h"
#include "history.h"
#include "journal.h"
#include "log.h"
#include "session_int.h"
#include "sock.h"
#include "store.h"
#include "util.h"

static const char *const gen_ops[] = { "read", "promote", "demote", "adopt",
					"split-brain" };

/* gen_allowed -- the handle and right the op needs; 1 to go on */
static int gen_allowed(struct rpmemd_session *s, const struct rpmem_hdr *hd,
		       const struct rpmem_msg_gen *m,
		       const struct rpmemd_handle *h, int *ret)
{
	int ok = 1;
	*ret = 0;
	if (m->op == RPMEM_GEN_ADOPT && h->mode != RPMEM_OPEN_RW) {
		*ret = conn_reply_err(s, hd->id, RPMEM_E_RDONLY,
				      "GEN adopt of pool '%s' opened read-only",
				      rpmemd_pool_name(h->pool));
		return 0;
	}
	if (m->op == RPMEM_GEN_PROMOTE || m->op == RPMEM_GEN_DEMOTE)
		*ret = rpmemd_authz_check(s, hd->id, RPMEMD_RIGHT_WRITE,
					  rpmemd_pool_region(h->pool)->cfg.name,
					  &ok);
	return !*ret && ok;
}

/* gen_reply -- GEN_REPLY with the pool's role and history */
static int gen_reply(struct rpmemd_session *s, const struct rpmem_hdr *hd,
		     struct rpmemd_pool *p, const struct rpmemd_meta *meta,
		     int rolled)
{
	struct rpmem_msg_gen_reply rep = {
		.role = meta->role,
		.state = meta->state,
		.generation = meta->generation,
		.changed = rpmemd_pool_changed(p, meta),
		.rolled_back = (uint8_t)rolled,
		.count = meta->nhist,
	};
	uint8_t buf[64 + RPMEM_MAX_GENERATIONS * 8];

	memcpy(rep.ids, meta->hist, sizeof(rep.ids));
	int len = rpmem_gen_reply_encode(buf, sizeof(buf), &rep);
	if (len < 0)
		return conn_reply_err(s, hd->id, RPMEM_E_INTERNAL,
				      "cannot encode GEN_REPLY");
	return rpmem_send_frame(&s->conn, RPMEM_MSG_GEN_REPLY, hd->id, buf,
				(size_t)len, NULL, 0);
}

/*
 * gen_resolved -- GEN split, resolved: an initiator that reported a split
 * brain took the pool's copy; the pool shows none any more (refused
 * unless the initiator now holds the pool's newest id), then GEN_REPLY
 */
static int gen_resolved(struct rpmemd_session *s, const struct rpmem_hdr *hd,
			const struct rpmem_msg_gen *m, struct rpmemd_pool *p)
{
	char err[RPMEM_MSG_MAX];
	struct rpmemd_meta meta;
	int rolled;

	if (rpmemd_pool_gen(p, m, &meta, &rolled, err, sizeof(err)))
		return conn_reply_err(s, hd->id, RPMEM_E_INVAL, "%s", err);
	INFO("session %u: pool %s/%s: split brain resolved: %s (%s) took the pool's copy",
	     s->id, rpmemd_pool_region(p)->cfg.name, rpmemd_pool_name(p),
	     s->peer, s->client);
	return gen_reply(s, hd, p, &meta, 0);
}

/*
 * gen_split -- GEN split: an initiator's comparison refused a sync of
 * this pool as a split brain; its time kept with the pool (list and
 * status show it until the pool's history changes), logged and
 * published (nothing else changes), then GEN_REPLY
 */
static int gen_split(struct rpmemd_session *s, const struct rpmem_hdr *hd,
		     const struct rpmem_msg_gen *m, struct rpmemd_pool *p)
{
	char lids[RPMEM_MAX_GENERATIONS * 17 + 1];
	char pids[RPMEM_MAX_GENERATIONS * 17 + 1];
	char text[RPMEM_STR_MAX + 1];
	char err[RPMEM_MSG_MAX];
	struct rpmemd_meta meta;
	int rolled;

	if (rpmemd_pool_gen(p, m, &meta, &rolled, err, sizeof(err)))
		WARN("session %u: pool %s/%s: the split brain is not kept with it: %s",
		     s->id, rpmemd_pool_region(p)->cfg.name,
		     rpmemd_pool_name(p), err);
	rpmemd_pool_get_meta(p, &meta);
	rpmem_gen_ids_fmt(m->ids, m->count, ",", lids, sizeof(lids));
	rpmem_gen_ids_fmt(meta.hist, meta.nhist, ",", pids, sizeof(pids));
	WARN("session %u: pool %s/%s: split brain: %s (%s) was refused a %s: both its copy and this pool were written since they last agreed (its history %s; the pool's %s, role %s); nothing was overwritten, an operator must choose the copy to keep",
	     s->id, rpmemd_pool_region(p)->cfg.name, rpmemd_pool_name(p),
	     s->peer, s->client, m->flags & RPMEM_GEN_PULL ? "pull" : "push",
	     lids[0] ? lids : "(none)", pids[0] ? pids : "(none)",
	     rpmem_role_str(meta.role));
	snprintf(text, sizeof(text), "split-brain role:%s refused:%s local:%.16s pool:%.16s",
		 rpmem_role_str(meta.role),
		 m->flags & RPMEM_GEN_PULL ? "pull" : "push",
		 lids[0] ? lids : "none", pids[0] ? pids : "none");
	rpmemd_ev_pool_text(s, rpmemd_pool_region(p)->cfg.name,
			    rpmemd_pool_name(p), meta.state, meta.generation,
			    rpmemd_pool_size(p), text);
	return gen_reply(s, hd, p, &meta, 0);
}

/*
 * disk_of -- the copy's disk state as this target sees it, as
 * rpmemctl_list_pool_disk_state derives it from LIST (docs/ARCHITECTURE.md,
 * "Disk states")
 */
static const char *disk_of(struct rpmemd_pool *p, const struct rpmemd_meta *m)
{
	if (m->state == RPMEM_POOL_EMPTY)
		return "Inconsistent";
	if (m->role == RPMEM_ROLE_PRIMARY)
		return "UpToDate";
	if (m->state == RPMEM_POOL_CONSISTENT)
		return "Consistent";
	if (!rpmemd_source_live(m->source))
		return "Inconsistent";
	return rpmemd_pool_writer_sid(p) ? "UpToDate" : "Consistent";
}

/* req_gen -- GEN: the op applied and persisted, then GEN_REPLY */
int req_gen(struct rpmemd_session *s, const struct rpmem_hdr *hd)
{
	struct rpmem_msg_gen m;
	struct rpmemd_handle *h;
	struct rpmemd_meta meta;
	char err[RPMEM_MSG_MAX];
	int ret, rolled;

	if (rpmem_gen_decode(s->req, hd->len, &m))
		return conn_bad_payload(s, hd);
	if (!(h = handle_get(s, m.handle)))
		return conn_reply_err(s, hd->id, RPMEM_E_INVAL,
				      "GEN of unknown handle %u", m.handle);
	if (!gen_allowed(s, hd, &m, h, &ret))
		return ret;
	if (m.op == RPMEM_GEN_SPLIT && (m.flags & RPMEM_GEN_RESOLVED))
		return gen_resolved(s, hd, &m, h->pool);
	if (m.op == RPMEM_GEN_SPLIT)
		return gen_split(s, hd, &m, h->pool);
	/* the pool's own live writer may record a new id on its copy */
	if (m.op == RPMEM_GEN_ADOPT && rpmemd_pool_writer_sid(h->pool) == s->id)
		m.flags |= RPMEMD_GEN_LIVE_WRITER;
	ret = rpmemd_pool_gen(h->pool, &m, &meta, &rolled, err, sizeof(err));
	if (ret == -EAGAIN) /* syncing, refused without force */
		ret = -EBUSY;
	if (ret)
		return conn_reply_err(s, hd->id, rpmem_err_from_errno(ret),
				      "%s", err);
	if (m.op != RPMEM_GEN_GET) {
		char ids[RPMEM_MAX_GENERATIONS * 17 + 1];
		rpmem_gen_ids_fmt(meta.hist, meta.nhist, ",", ids, sizeof(ids));
		NOTICE("session %u: pool %s/%s: %s%s: role %s, generation history %s",
		       s->id, rpmemd_pool_region(h->pool)->cfg.name,
		       rpmemd_pool_name(h->pool), gen_ops[m.op],
		       rolled ? " (its interrupted sync rolled back)" : "",
		       rpmem_role_str(meta.role), ids[0] ? ids : "(none)");
		char text[RPMEM_STR_MAX + 1];
		snprintf(text, sizeof(text), "%s role:%s disk:%s", gen_ops[m.op],
			 rpmem_role_str(meta.role), disk_of(h->pool, &meta));
		rpmemd_ev_pool_text(s, rpmemd_pool_region(h->pool)->cfg.name,
				    rpmemd_pool_name(h->pool), meta.state,
				    meta.generation, rpmemd_pool_size(h->pool),
				    text);
	}
	return gen_reply(s, hd, h->pool, &meta, rolled);
}

int rpmemd_open_primary(struct rpmemd_session *s, const struct rpmem_hdr *hd,
			struct rpmemd_pool *p, int *refused)
{
	struct rpmemd_meta meta;
	rpmemd_pool_get_meta(p, &meta);
	*refused = meta.role == RPMEM_ROLE_PRIMARY;
	if (!*refused)
		return 0;
	/* RDONLY: every client knows it, and its errno (EROFS) has no hint */
	return conn_reply_err(s, hd->id, RPMEM_E_RDONLY,
			      "pool '%s/%s' is the primary on this target (promoted): it takes no pushes, mirrors or live writers; `rpmemctl demote` makes it a secondary again",
			      rpmemd_pool_region(p)->cfg.name,
			      rpmemd_pool_name(p));
}
