/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * req_pool.c -- requests about pools: LIST, CREATE, REMOVE, OPEN, CLOSE,
 * SET_STATE
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "access.h"
#include "events.h"
#include "journal.h"
#include "log.h"
#include "net.h"
#include "rdma.h"
#include "session_int.h"
#include "store.h"
#include "util.h"

/* check_names -- region (and pool if not NULL) are valid names */
static int check_names(struct rpmemd_session *s, uint32_t id,
		       const char *region, const char *pool, int *ok)
{
	*ok = 0;
	if (!rpmem_name_valid(region))
		return conn_reply_err(s, id, RPMEM_E_INVAL,
				      "invalid region name (" RPMEM_NAME_RULE ")");
	if (pool && !rpmem_name_valid(pool))
		return conn_reply_err(s, id, RPMEM_E_INVAL,
				      "invalid pool name (" RPMEM_NAME_RULE ")");
	*ok = 1;
	return 0;
}

/* get_region -- a reference to a region by name, or an ERROR reply */
static int get_region(struct rpmemd_session *s, uint32_t id, const char *name,
		      struct rpmemd_region **r)
{
	*r = NULL;
	if (rpmemd_region_get(s->set->regions, name, r) == 0)
		return 0;
	return conn_reply_err(s, id, RPMEM_E_NOREGION,
			      "no region '%s' on this target", name);
}

/*
 * allowed_region -- the prologue of a request naming region (and pool):
 * valid names, then the right (before the lookup: a refusal does not say
 * whether the region exists), then a reference to the region. On a
 * refusal the ERROR has been sent and *r is NULL; returns 0 or the send
 * failure.
 */
static int allowed_region(struct rpmemd_session *s, uint32_t id,
			  const char *region, const char *pool,
			  enum rpmemd_right right, struct rpmemd_region **r)
{
	int ret, ok;

	*r = NULL;
	if ((ret = check_names(s, id, region, pool, &ok)) || !ok)
		return ret;
	if ((ret = rpmemd_authz_check(s, id, right, region, &ok)) || !ok)
		return ret;
	return get_region(s, id, region, r);
}

/*
 * readable_only -- drop the regions of v[n] the session may not read
 * (they are not listed, as if they did not exist); the number left
 */
static unsigned readable_only(struct rpmemd_session *s,
			      struct rpmemd_region **v, unsigned n)
{
	unsigned k = 0;

	for (unsigned i = 0; i < n; i++) {
		if (rpmemd_may(s, RPMEMD_RIGHT_READ, v[i]->cfg.name))
			v[k++] = v[i];
		else
			rpmemd_region_put(&v[i]);
	}
	return k;
}

/*
 * cursor_parse -- a LIST cursor: "" (the first page) or "region/pool",
 * the last pool of the previous page, both valid names; 0 or -EINVAL
 */
static int cursor_parse(const char *cursor, char *region, char *pool)
{
	const char *slash = strchr(cursor, '/');

	region[0] = pool[0] = '\0';
	if (!cursor[0])
		return 0;
	if (!slash || (size_t)(slash - cursor) > RPMEM_NAME_MAX)
		return -EINVAL;
	memcpy(region, cursor, (size_t)(slash - cursor));
	region[slash - cursor] = '\0';
	if (strlen(slash + 1) > RPMEM_NAME_MAX)
		return -EINVAL;
	strcpy(pool, slash + 1);
	return rpmem_name_valid(region) && rpmem_name_valid(pool) ? 0 :
								    -EINVAL;
}

/*
 * list_pools -- the pools of the regions v[n] into rep: all of them, or
 * with RPMEM_LIST_PAGE at most RPMEM_PAGE_ENTRIES after m's cursor (and
 * rep->next set when more follow); 0 or the ERROR reply's result
 */
static int list_pools(struct rpmemd_session *s, const struct rpmem_hdr *hd,
		      const struct rpmem_msg_list *m,
		      struct rpmemd_region **v, unsigned n,
		      struct rpmem_msg_list_reply *rep, int *ok)
{
	char region[RPMEM_NAME_MAX + 1], after[RPMEM_NAME_MAX + 1];
	uint32_t max = UINT32_MAX;
	unsigned i = 0;
	int ret;

	*ok = 0;
	if (m->flags & RPMEM_LIST_PAGE) {
		/* one more than a page: tells if more follow */
		max = RPMEM_PAGE_ENTRIES + 1;
		if (cursor_parse(m->cursor, region, after))
			return conn_reply_err(s, hd->id, RPMEM_E_INVAL,
					      "invalid LIST cursor '%s'",
					      m->cursor);
		/* the first page ("" cursor) of no regions: an empty list */
		for (i = 0; region[0] && i < n; i++)
			if (!strcmp(v[i]->cfg.name, region))
				break;
		if (region[0] && i == n)
			return conn_reply_err(s, hd->id, RPMEM_E_NOREGION,
					      "region '%s' went away while it was listed; list again",
					      region);
	} else {
		after[0] = '\0';
	}
	for (; i < n && rep->npools < max; i++) {
		ret = rpmemd_pool_list_page(v[i], after, max - rep->npools,
					    &rep->pools, &rep->npools);
		if (ret)
			return conn_reply_err(s, hd->id,
					      rpmem_err_from_errno(ret),
					      "cannot list region '%s': %s",
					      v[i]->cfg.name, strerror(-ret));
		after[0] = '\0'; /* the next regions from their first pool */
	}
	if ((m->flags & RPMEM_LIST_PAGE) && rep->npools > RPMEM_PAGE_ENTRIES) {
		const struct rpmem_pool_info *last =
			&rep->pools[RPMEM_PAGE_ENTRIES - 1];
		rep->npools = RPMEM_PAGE_ENTRIES;
		snprintf(rep->next, sizeof(rep->next), "%s/%s", last->region,
			 last->name);
	}
	*ok = 1;
	return 0;
}

/*
 * req_list -- LIST: regions and their pools; in pages (RPMEM_LIST_PAGE)
 * the regions come with the first page only
 */
int req_list(struct rpmemd_session *s, const struct rpmem_hdr *hd)
{
	struct rpmem_msg_list m;
	struct rpmem_msg_list_reply rep = { 0 };
	struct rpmemd_region **v = NULL;
	unsigned n = 0, nr;
	int ret, ok;

	if (rpmem_list_decode(s->req, hd->len, &m))
		return conn_bad_payload(s, hd);
	if (m.region[0]) {
		struct rpmemd_region *r;
		if ((ret = check_names(s, hd->id, m.region, NULL, &ok)) || !ok)
			return ret;
		/* before the lookup: a refusal does not say if it exists */
		ret = rpmemd_authz_check(s, hd->id, RPMEMD_RIGHT_READ, m.region,
					 &ok);
		if (ret || !ok)
			return ret;
		if ((ret = get_region(s, hd->id, m.region, &r)) || !r)
			return ret;
		v = calloc(1, sizeof(*v));
		if (!v) {
			rpmemd_region_put(&r);
			return conn_reply_err(s, hd->id, RPMEM_E_LIMIT,
					      "out of memory");
		}
		v[0] = r;
		n = 1;
	} else {
		ret = rpmemd_authz_check(s, hd->id, RPMEMD_RIGHT_READ, NULL,
					 &ok);
		if (ret || !ok)
			return ret;
		if (rpmemd_regions_get_all(s->set->regions, &v, &n))
			return conn_reply_err(s, hd->id, RPMEM_E_LIMIT,
					      "out of memory");
		n = readable_only(s, v, n);
	}
	rep.flags = m.flags & RPMEM_LIST_FLAGS;
	nr = (m.flags & RPMEM_LIST_PAGE) && m.cursor[0] ? 0 : n;
	rep.regions = calloc(nr ? nr : 1, sizeof(*rep.regions));
	if (!rep.regions) {
		ret = conn_reply_err(s, hd->id, RPMEM_E_LIMIT, "out of memory");
		goto out;
	}
	rep.nregions = nr;
	for (unsigned i = 0; i < nr; i++)
		if (rpmemd_region_info(v[i], &rep.regions[i]))
			WARN("region '%s': statvfs %s: %s", v[i]->cfg.name,
			     v[i]->cfg.path, strerror(errno));
	if ((ret = list_pools(s, hd, &m, v, n, &rep, &ok)) || !ok)
		goto out;
	uint8_t *buf = conn_out_buf(s);
	int len = buf ? rpmem_list_reply_encode(buf, RPMEM_MAX_PAYLOAD, &rep) :
			-ENOMEM;
	if (len < 0)
		ret = conn_reply_err(s, hd->id, RPMEM_E_LIMIT,
				     "%u pools do not fit in one reply; list one region at a time or use a client that lists in pages",
				     rep.npools);
	else
		ret = rpmem_send_frame(&s->conn, RPMEM_MSG_LIST_REPLY, hd->id,
				       buf, (size_t)len, NULL, 0);
out:
	rpmem_list_reply_free(&rep);
	rpmemd_regions_put_all(&v, n);
	return ret;
}

/* req_create -- CREATE a pool of the given size */
int req_create(struct rpmemd_session *s, const struct rpmem_hdr *hd)
{
	struct rpmem_msg_create m;
	struct rpmemd_region *r;
	char err[RPMEM_MSG_MAX], sz[RPMEM_SIZE_STR];
	int ret;

	if (rpmem_create_decode(s->req, hd->len, &m))
		return conn_bad_payload(s, hd);
	ret = allowed_region(s, hd->id, m.region, m.pool, RPMEMD_RIGHT_APPEND,
			     &r);
	if (ret || !r)
		return ret;
	ret = rpmemd_pool_create(r, m.pool, m.size, err, sizeof(err));
	rpmemd_region_put(&r);
	if (ret)
		return conn_reply_err(s, hd->id, rpmem_err_from_errno(ret), "%s", err);
	INFO("session %u: created pool %s/%s (%s)", s->id, m.region, m.pool,
	     rpmem_fmt_size(m.size, sz, sizeof(sz)));
	rpmemd_ev_pool(s, RPMEM_EV_CREATE, m.region, m.pool, RPMEM_POOL_EMPTY,
		       0, m.size);
	return conn_reply_ok(s, hd->id);
}

/* how long remove --force waits for the readers it kicked to close */
#define REMOVE_WAIT_MS 10000u

/*
 * remove_readers -- remove --force of a pool that sessions hold open
 * read-only (and none for writing): those sessions are ended as by an
 * administrator's kick, then the removal is tried again until their
 * pools are closed (at most REMOVE_WAIT_MS). ret: the first attempt's
 * result; returns the last one's
 */
static int remove_readers(struct rpmemd_session *s, struct rpmemd_region *r,
			  const struct rpmem_msg_remove *m, int ret,
			  char *err, size_t errlen)
{
	char by[RPMEM_STR_MAX + 2 * RPMEM_NAME_MAX + 32];

	if (ret != -EBUSY || !(m->flags & RPMEM_REMOVE_FORCE))
		return ret;
	snprintf(by, sizeof(by), "remove --force of %s/%s by %s", m->region,
		 m->pool, s->holder);
	if (rpmemd_sessions_kick_readers(s->set, s, m->region, m->pool, by) <=
	    0)
		return ret;
	for (unsigned ms = 0; ret == -EBUSY && ms < REMOVE_WAIT_MS; ms += 10) {
		struct timespec ts = { 0, 10000000 };
		nanosleep(&ts, NULL);
		ret = rpmemd_pool_remove(r, m->pool, 1, err, errlen);
	}
	return ret;
}

/* req_remove -- REMOVE a pool (see rpmemd_pool_remove for force) */
int req_remove(struct rpmemd_session *s, const struct rpmem_hdr *hd)
{
	struct rpmem_msg_remove m;
	struct rpmemd_region *r;
	char err[RPMEM_MSG_MAX];
	int ret;

	if (rpmem_remove_decode(s->req, hd->len, &m))
		return conn_bad_payload(s, hd);
	ret = allowed_region(s, hd->id, m.region, m.pool, RPMEMD_RIGHT_WRITE,
			     &r);
	if (ret || !r)
		return ret;
	ret = rpmemd_pool_remove(r, m.pool, !!(m.flags & RPMEM_REMOVE_FORCE),
				 err, sizeof(err));
	ret = remove_readers(s, r, &m, ret, err, sizeof(err));
	rpmemd_region_put(&r);
	if (ret)
		return conn_reply_err(s, hd->id, rpmem_err_from_errno(ret), "%s", err);
	INFO("session %u: removed pool %s/%s%s", s->id, m.region, m.pool,
	     (m.flags & RPMEM_REMOVE_FORCE) ? " (forced)" : "");
	rpmemd_ev_pool(s, RPMEM_EV_DESTROY, m.region, m.pool, 0, 0, 0);
	return conn_reply_ok(s, hd->id);
}

/* req_open -- OPEN a pool ro or rw; one writer at a time */
int req_open(struct rpmemd_session *s, const struct rpmem_hdr *hd)
{
	struct rpmem_msg_open m;
	struct rpmem_msg_open_ok rep;
	struct rpmemd_handle *h;
	struct rpmemd_region *r;
	struct rpmemd_meta meta;
	char err[RPMEM_MSG_MAX];
	uint8_t buf[SMALL_REPLY];
	int ret, ok, len, append;

	if (rpmem_open_decode(s->req, hd->len, &m))
		return conn_bad_payload(s, hd);
	if ((ret = check_names(s, hd->id, m.region, m.pool, &ok)) || !ok)
		return ret;
	/*
	 * an rw open needs append (or write); data requests on the handle
	 * inherit it
	 */
	ret = rpmemd_authz_check(s, hd->id,
				 m.mode == RPMEM_OPEN_RW ? RPMEMD_RIGHT_APPEND :
							   RPMEMD_RIGHT_READ,
				 m.region, &ok);
	if (ret || !ok)
		return ret;
	append = m.mode == RPMEM_OPEN_RW &&
		 !rpmemd_may(s, RPMEMD_RIGHT_WRITE, m.region);
	/* RDMA writes pass no journal: an appender's data goes over TCP */
	if (append && m.xport == RPMEM_XPORT_RDMA)
		return conn_reply_err(s, hd->id, RPMEM_E_XPORT,
				      "identity '%s' may only append to region '%s': its writes go over tcp, where the target keeps every block they overwrite (rdma writes bypass it)",
				      s->identity, m.region);
	if (m.xport == RPMEM_XPORT_RDMA && !s->rdma)
		return conn_reply_err(s, hd->id, RPMEM_E_XPORT,
				      "rdma is not available on %s: no RDMA device serves the address this session connected to",
				      s->local[0] ? s->local : "this target");
	if (!(h = handle_free_slot(s)))
		return conn_reply_err(s, hd->id, RPMEM_E_LIMIT,
				      "a session may have at most %d pools open",
				      RPMEMD_MAX_HANDLES);
	if ((ret = get_region(s, hd->id, m.region, &r)) || !r)
		return ret;
	ret = rpmemd_pool_open(r, m.pool, m.mode, s->id, s->holder, &h->pool,
			       err, sizeof(err));
	rpmemd_region_put(&r);
	if (ret)
		return conn_reply_err(s, hd->id, rpmem_err_from_errno(ret), "%s", err);
	if (m.mode == RPMEM_OPEN_RW &&
	    ((ret = rpmemd_open_primary(s, hd, h->pool, &ok)) || ok)) {
		rpmemd_pool_close(&h->pool, m.mode, s->id);
		return ret;
	}
	h->mode = m.mode;
	h->xport = RPMEM_XPORT_TCP;
	h->append = (uint8_t)append;
	memset(&rep, 0, sizeof(rep));
	/*
	 * RDMA (asked for, or AUTO on an address with an RDMA listener):
	 * register just this pool's range, the blob goes into OPEN_OK; the
	 * exposure lives in the handle until handle_close
	 */
	if (m.xport != RPMEM_XPORT_TCP && s->rdma && !append) {
		size_t blen = sizeof(rep.blob);
		ret = expose_pool(s, h, rep.blob, &blen, err, sizeof(err));
		if (!ret) {
			h->xport = RPMEM_XPORT_RDMA;
			rep.blob_len = (uint16_t)blen;
		} else if (m.xport == RPMEM_XPORT_RDMA) {
			rpmemd_pool_close(&h->pool, h->mode, s->id);
			memset(h, 0, sizeof(*h));
			return conn_reply_err(s, hd->id, RPMEM_E_XPORT, "%s", err);
		} else {
			INFO("session %u: pool %s/%s: %s; using tcp", s->id,
			     m.region, m.pool, err);
		}
	}
	handle_issue(s, h);
	rpmemd_pool_get_meta(h->pool, &meta);
	/* the writer's open: a commit a crash left without its record */
	if (m.mode == RPMEM_OPEN_RW && meta.state == RPMEM_POOL_CONSISTENT)
		rpmemd_scrub_ensure(s, h->pool, meta.generation);

	rep.handle = h->id;
	rep.size = rpmemd_pool_size(h->pool);
	rep.state = meta.state;
	rep.generation = meta.generation;
	memcpy(rep.uuid, meta.uuid, sizeof(rep.uuid));
	rep.xport = h->xport;
	handle_update_cur(s);
	INFO("session %u: opened pool %s/%s (%s, %s, generation %llu, %s)",
	     s->id, m.region, m.pool, m.mode == RPMEM_OPEN_RW ? "rw" : "ro",
	     rpmem_state_str(meta.state), (unsigned long long)meta.generation,
	     h->xport == RPMEM_XPORT_RDMA ? "rdma" : "tcp");
	len = rpmem_open_ok_encode(buf, sizeof(buf), &rep);
	if (len < 0)
		return conn_reply_err(s, hd->id, RPMEM_E_INTERNAL,
				      "cannot encode OPEN_OK");
	return rpmem_send_frame(&s->conn, RPMEM_MSG_OPEN_OK, hd->id, buf,
				(size_t)len, NULL, 0);
}

/* req_close -- CLOSE a handle */
int req_close(struct rpmemd_session *s, const struct rpmem_hdr *hd)
{
	struct rpmem_msg_handle m;
	struct rpmemd_handle *h;
	if (rpmem_handle_decode(s->req, hd->len, &m))
		return conn_bad_payload(s, hd);
	if (!(h = handle_get(s, m.handle)))
		return conn_reply_err(s, hd->id, RPMEM_E_INVAL,
				      "CLOSE of unknown handle %u", m.handle);
	handle_close(s, h);
	handle_update_cur(s);
	return conn_reply_ok(s, hd->id);
}

/*
 * reply_state -- OK, or STATE with the state and generation if asked,
 * and the note if asked for one
 */
static int reply_state(struct rpmemd_session *s, const struct rpmem_hdr *hd,
		       uint32_t flags, const struct rpmemd_meta *meta,
		       const char *note)
{
	if (!(flags & RPMEM_SET_STATE_REPLY))
		return conn_reply_ok(s, hd->id);
	struct rpmem_msg_state rep = { .state = meta->state,
				       .generation = meta->generation };
	uint8_t buf[16 + RPMEM_MSG_MAX];
	if (flags & RPMEM_SET_STATE_NOTE)
		rpmem_strlcpy(rep.note, note, sizeof(rep.note));
	int len = rpmem_state_encode(buf, sizeof(buf), &rep);
	if (len < 0)
		return conn_reply_err(s, hd->id, RPMEM_E_INTERNAL,
				      "cannot encode STATE");
	return rpmem_send_frame(&s->conn, RPMEM_MSG_STATE, hd->id, buf,
				(size_t)len, NULL, 0);
}

/*
 * req_set_state -- SET_STATE: persisted in the metadata before the reply,
 * OK, or STATE with the resulting state and generation if asked for
 */
int req_set_state(struct rpmemd_session *s, const struct rpmem_hdr *hd)
{
	struct rpmem_msg_set_state m;
	struct rpmemd_handle *h;
	struct rpmemd_meta meta;
	char err[RPMEM_MSG_MAX];
	int ret, had;

	if (rpmem_set_state_decode(s->req, hd->len, &m))
		return conn_bad_payload(s, hd);
	if (!(h = handle_get(s, m.handle)))
		return conn_reply_err(s, hd->id, RPMEM_E_INVAL,
				      "SET_STATE of unknown handle %u", m.handle);
	if (h->mode != RPMEM_OPEN_RW)
		return conn_reply_err(s, hd->id, RPMEM_E_RDONLY,
				      "SET_STATE of pool '%s' opened read-only",
				      rpmemd_pool_name(h->pool));
	if ((m.flags & RPMEM_SET_STATE_CHANGE) &&
	    m.change > rpmemd_pool_size(h->pool)) {
		WARN("session %u: pool %s/%s: a sync that says it will write %llu bytes of a %llu-byte pool refused",
		     s->id, rpmemd_pool_region(h->pool)->cfg.name,
		     rpmemd_pool_name(h->pool), (unsigned long long)m.change,
		     (unsigned long long)rpmemd_pool_size(h->pool));
		return conn_reply_err(s, hd->id, RPMEM_E_INVAL,
				      "pool '%s' stays as it was: a sync cannot write %llu bytes of its %llu",
				      rpmemd_pool_name(h->pool),
				      (unsigned long long)m.change,
				      (unsigned long long)rpmemd_pool_size(
					      h->pool));
	}
	/* a pool with a failed WRITE behind it is not consistent */
	if (m.state == RPMEM_POOL_CONSISTENT &&
	    !(m.flags & RPMEM_SET_STATE_ROLLBACK) &&
	    ((ret = conn_take_deferred(s, hd->id, &had)) || had))
		return ret;
	if (!(m.flags & RPMEM_SET_STATE_ROLLBACK) &&
	    rpmemd_append_refused(s, h, err, sizeof(err)))
		return conn_reply_err(s, hd->id, RPMEM_E_DENIED, "%s", err);
	uint8_t was = rpmemd_pool_state(h->pool);
	if (m.flags & RPMEM_SET_STATE_ROLLBACK)
		ret = rpmemd_pool_rollback(h->pool, &meta, err, sizeof(err));
	else
		ret = rpmemd_pool_set_state(h->pool, m.state, m.source,
					    (m.flags & RPMEM_SET_STATE_CHANGE) ?
						    m.change :
						    RPMEMD_CHANGE_UNDECLARED,
					    h->xport == RPMEM_XPORT_TCP, &meta,
					    err, sizeof(err));
	if (ret)
		return conn_reply_err(s, hd->id, rpmem_err_from_errno(ret), "%s", err);
	if (meta.state != RPMEM_POOL_SYNCING)
		h->by_file = 0;
	else if (was == RPMEM_POOL_EMPTY || rpmemd_pool_sparse(h->pool) ||
		 rpmemd_pool_swapping(h->pool))
		h->by_file = write_by_file(s, h);
	INFO("session %u: pool %s/%s is %s (generation %llu)%s", s->id,
	     rpmemd_pool_region(h->pool)->cfg.name, rpmemd_pool_name(h->pool),
	     rpmem_state_str(meta.state), (unsigned long long)meta.generation,
	     h->by_file ?
		     "; WRITEs go through its file (pages not written yet)" :
		     "");
	rpmemd_ev_pool(s, RPMEM_EV_CHANGE,
		       rpmemd_pool_region(h->pool)->cfg.name,
		       rpmemd_pool_name(h->pool), meta.state, meta.generation,
		       rpmemd_pool_size(h->pool));
	if (meta.state == RPMEM_POOL_SYNCING && h->xfer != 2) {
		h->xfer = 1; /* the transfer starts with its first WRITE */
		h->xfer_bytes = 0;
	} else if (meta.state != RPMEM_POOL_SYNCING) {
		if (h->xfer == 2)
			rpmemd_ev_transfer(s, h, RPMEM_EV_DESTROY,
					   meta.state == RPMEM_POOL_CONSISTENT ?
						   "consistent" :
						   "aborted: the pool was set empty");
		h->xfer = 0;
	}
	/*
	 * versions pruned for space are the writer's to hear: those for its
	 * journal's room, and the retention's, before the reply
	 */
	char note[RPMEM_MSG_MAX + 1] = "";
	int commit = meta.state == RPMEM_POOL_CONSISTENT && was != meta.state;
	rpmemd_versions_room(s, h->pool, note, sizeof(note));
	if (commit)
		rpmemd_versions_commit(s, h->pool, meta.generation, note,
				       sizeof(note));
	ret = reply_state(s, hd, m.flags, &meta, note);
	/*
	 * after the reply: the writer goes on meanwhile, and its next
	 * request (a new sync's SYNCING first) waits for the record
	 */
	if (!ret && commit)
		rpmemd_scrub_commit(s, h->pool, meta.generation);
	/* a dense sync's previous image, freed while the writer goes on */
	rpmemd_store_swap_release(h->pool, 0);
	return ret;
}
