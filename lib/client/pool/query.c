/* SPDX-License-Identifier: BSD-3-Clause */
/* query.c -- rpmemctl_list_* and rpmemctl_status_*: LIST and STATUS replies */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "client_pool.h"
#include "util.h"

/*
 * The objects own the decoded reply (freed by rpmemctl_list_free and
 * rpmemctl_status_free); returned strings live as long as the object.
 * An accessor given NULL or an index out of range returns NULL or 0.
 */
struct rpmemctl_list {
	struct rpmem_msg_list_reply r;
	char (*uuids)[37]; /* text form of each pool's uuid */
};

struct rpmemctl_status {
	struct rpmem_msg_status_reply r;
};

/*
 * append -- move the n entries of size sz at *from behind the *dn at *dst
 * (*from is freed and set to NULL); 0 or -ENOMEM
 */
static int append(void **dst, uint32_t *dn, void **from, uint32_t n,
		  size_t sz)
{
	if (!n)
		return 0;
	if (*dn > UINT32_MAX - n)
		return -ENOMEM;
	uint8_t *v = realloc(*dst, ((size_t)*dn + n) * sz);
	if (!v)
		return -ENOMEM;
	memcpy(v + (size_t)*dn * sz, *from, (size_t)n * sz);
	*dst = v;
	*dn += n;
	free(*from);
	*from = NULL;
	return 0;
}

/*
 * page_check -- a page's next cursor moves on: not the one just sent, and
 * a page with a next cursor is not empty (or a target could loop us)
 */
static int page_check(struct rpmemctl_session *sess, uint16_t type,
		      const char *sent, const char *next, uint32_t n)
{
	if (!next[0] || (strcmp(next, sent) && n))
		return 0;
	client_seterr(sess, "%s:%s sent a %s page that does not move on (cursor '%s')",
		      sess->host, sess->port, rpmem_msg_type_str(type), next);
	return -EPROTO;
}

/*
 * pager -- what differs between paged LIST and STATUS: the messages, the
 * request's cursor and the reply's next one (offsets), how a reply
 * decodes, counts for page_check, joins a page behind the rest, is freed
 */
struct pager {
	uint16_t type, rtype; /* the request and its reply */
	const char *what;     /* for messages: "the pool list" */
	size_t size;	      /* of a decoded reply */
	size_t cursor_at;     /* offsetof the request's cursor */
	size_t next_at;	      /* offsetof the reply's next cursor */
	int (*encode)(void *buf, size_t cap, const void *req);
	int (*decode)(const void *buf, size_t len, const void *req,
		      void *page);
	uint32_t (*count)(const void *page);
	int (*join)(void *r, void *page);
	void (*free)(void *page);
};

/* at -- the cursor at offset off of a request or reply */
static char *at(const void *m, size_t off)
{
	return (char *)m + off;
}

/* pager_page -- one request from req's cursor, decoded into page */
static int pager_page(struct rpmemctl_session *sess, const struct pager *pg,
		      const void *req, void *page)
{
	uint8_t buf[RPMEM_REQ_MAX];
	size_t rlen;

	int len = pg->encode(buf, sizeof(buf), req);
	if (len < 0)
		return len;
	int ret = client_call(sess, pg->type, buf, (size_t)len, pg->rtype,
			      &rlen);
	if (ret)
		return ret;
	ret = pg->decode(sess->rbuf, rlen, req, page);
	if (ret == -ENOMEM) {
		client_seterr(sess, "out of memory decoding %s", pg->what);
		return ret;
	}
	if (ret)
		return client_bad_reply(sess, pg->rtype);
	return page_check(sess, pg->rtype, at(req, pg->cursor_at),
			  at(page, pg->next_at), pg->count(page));
}

/*
 * pager_run -- the request into *r: one page, or while a page names the
 * next, every page joined behind the first (page: room for one); on
 * failure *r is freed
 */
static int pager_run(struct rpmemctl_session *sess, const struct pager *pg,
		     void *req, void *r, void *page)
{
	int ret = pager_page(sess, pg, req, r);

	while (!ret && at(r, pg->next_at)[0]) {
		rpmem_strlcpy(at(req, pg->cursor_at), at(r, pg->next_at),
			      RPMEM_CURSOR_MAX + 1);
		memset(page, 0, pg->size);
		ret = pager_page(sess, pg, req, page);
		if (!ret)
			ret = pg->join(r, page);
		if (ret == -ENOMEM)
			client_seterr(sess, "out of memory joining %s",
				      pg->what);
		memcpy(at(r, pg->next_at), at(page, pg->next_at),
		       RPMEM_CURSOR_MAX + 1);
		pg->free(page);
	}
	if (ret)
		pg->free(r);
	return ret;
}

/* list_encode -- the pager's LIST encoder */
static int list_encode(void *buf, size_t cap, const void *req)
{
	return rpmem_list_encode(buf, cap, req);
}

/* list_decode -- a LIST_REPLY in the layout the request's flags ask for */
static int list_decode(const void *buf, size_t len, const void *req,
		       void *page)
{
	const struct rpmem_msg_list *m = req;
	return rpmem_list_reply_decode_flags(buf, len, m->flags, page);
}

/* list_count -- a LIST page's pools */
static uint32_t list_count(const void *page)
{
	return ((const struct rpmem_msg_list_reply *)page)->npools;
}

/* list_join -- page's regions and pools behind r's */
static int list_join(void *r, void *page)
{
	struct rpmem_msg_list_reply *l = r, *p = page;
	int ret = append((void **)&l->regions, &l->nregions,
			 (void **)&p->regions, p->nregions,
			 sizeof(*l->regions));
	if (ret)
		return ret;
	return append((void **)&l->pools, &l->npools, (void **)&p->pools,
		      p->npools, sizeof(*l->pools));
}

/* list_free -- the pager's LIST_REPLY free */
static void list_free(void *page)
{
	rpmem_list_reply_free(page);
}

static const struct pager list_pager = {
	.type = RPMEM_MSG_LIST,
	.rtype = RPMEM_MSG_LIST_REPLY,
	.what = "the pool list",
	.size = sizeof(struct rpmem_msg_list_reply),
	.cursor_at = offsetof(struct rpmem_msg_list, cursor),
	.next_at = offsetof(struct rpmem_msg_list_reply, next),
	.encode = list_encode,
	.decode = list_decode,
	.count = list_count,
	.join = list_join,
	.free = list_free,
};

/*
 * list_pages -- LIST into *r: one request, or from a target that lists in
 * pages (RPMEM_CAP_PAGE) every page, their regions and pools joined
 */
static int list_pages(struct rpmemctl_session *sess,
		      struct rpmem_msg_list *req,
		      struct rpmem_msg_list_reply *r)
{
	struct rpmem_msg_list_reply page;

	req->flags = ((sess->caps & RPMEM_CAP_PAGE) ? RPMEM_LIST_PAGE : 0) |
		     ((sess->caps & RPMEM_CAP_UNDO) ? RPMEM_LIST_UNDO : 0) |
		     ((sess->caps & RPMEM_CAP_VERSIONS) ? RPMEM_LIST_VERSIONS :
							 0) |
		     ((sess->caps & RPMEM_CAP_GENERATIONS) ?
			      RPMEM_LIST_GENERATIONS :
			      0) |
		     ((sess->caps & RPMEM_CAP_DAMAGE) ? RPMEM_LIST_DAMAGED : 0) |
		     ((sess->caps & RPMEM_CAP_SPLIT_LIST) ? RPMEM_LIST_SPLIT :
							    0);
	return pager_run(sess, &list_pager, req, r, &page);
}

/* list_get -- fetch regions and pools from the target */
static int list_get(struct rpmemctl_session *sess, const char *region,
		    struct rpmemctl_list **out)
{
	if (!sess || !out)
		return -EINVAL;
	struct rpmem_msg_list req = { .region = "" };
	if (region && *region) {
		if (!rpmem_name_valid(region)) {
			client_seterr(sess, "invalid region name '%s'", region);
			return -EINVAL;
		}
		rpmem_strlcpy(req.region, region, sizeof(req.region));
	}
	struct rpmemctl_list *l = calloc(1, sizeof(*l));
	if (!l) {
		client_seterr(sess, "out of memory");
		return -ENOMEM;
	}
	int ret = list_pages(sess, &req, &l->r);
	if (ret)
		goto err_free;
	l->uuids = calloc(l->r.npools ? l->r.npools : 1, sizeof(*l->uuids));
	if (!l->uuids) {
		ret = -ENOMEM;
		client_seterr(sess, "out of memory");
		goto err_reply;
	}
	for (uint32_t i = 0; i < l->r.npools; i++)
		rpmem_uuid_fmt(l->r.pools[i].uuid, l->uuids[i]);
	*out = l;
	return 0;

err_reply:
	rpmem_list_reply_free(&l->r);
err_free:
	free(l);
	return ret;
}

/* rpmemctl_list_get -- fetch regions and pools from the target */
RPMEM_EXPORT int rpmemctl_list_get(struct rpmemctl_session *sess,
				   const char *region,
				   struct rpmemctl_list **out)
{
	client_sess_begin(sess);
	return client_sess_end(sess, list_get(sess, region, out),
			       "listing regions and pools");
}

RPMEM_EXPORT void rpmemctl_list_free(struct rpmemctl_list **list)
{
	if (!list || !*list)
		return;
	rpmem_list_reply_free(&(*list)->r);
	free((*list)->uuids);
	free(*list);
	*list = NULL;
}

/* region -- the i-th region or NULL */
static const struct rpmem_region_info *region(const struct rpmemctl_list *l,
					      unsigned i)
{
	return l && i < l->r.nregions ? &l->r.regions[i] : NULL;
}

/* pool -- the i-th pool or NULL */
static const struct rpmem_pool_info *pool(const struct rpmemctl_list *l,
					  unsigned i)
{
	return l && i < l->r.npools ? &l->r.pools[i] : NULL;
}

RPMEM_EXPORT unsigned rpmemctl_list_region_count(const struct rpmemctl_list *l)
{
	return l ? l->r.nregions : 0;
}

RPMEM_EXPORT const char *
rpmemctl_list_region_name(const struct rpmemctl_list *l, unsigned i)
{
	const struct rpmem_region_info *r = region(l, i);
	return r ? r->name : NULL;
}

RPMEM_EXPORT const char *
rpmemctl_list_region_type(const struct rpmemctl_list *l, unsigned i)
{
	const struct rpmem_region_info *r = region(l, i);
	return r ? rpmem_region_type_str(r->type) : NULL;
}

RPMEM_EXPORT const char *
rpmemctl_list_region_path(const struct rpmemctl_list *l, unsigned i)
{
	const struct rpmem_region_info *r = region(l, i);
	return r ? r->path : NULL;
}

RPMEM_EXPORT uint64_t rpmemctl_list_region_size(const struct rpmemctl_list *l,
						unsigned i)
{
	const struct rpmem_region_info *r = region(l, i);
	return r ? r->size : 0;
}

RPMEM_EXPORT uint64_t rpmemctl_list_region_free(const struct rpmemctl_list *l,
						unsigned i)
{
	const struct rpmem_region_info *r = region(l, i);
	return r ? r->free : 0;
}

RPMEM_EXPORT unsigned rpmemctl_list_pool_count(const struct rpmemctl_list *l)
{
	return l ? l->r.npools : 0;
}

RPMEM_EXPORT const char *
rpmemctl_list_pool_region(const struct rpmemctl_list *l, unsigned i)
{
	const struct rpmem_pool_info *p = pool(l, i);
	return p ? p->region : NULL;
}

RPMEM_EXPORT const char *rpmemctl_list_pool_name(const struct rpmemctl_list *l,
						 unsigned i)
{
	const struct rpmem_pool_info *p = pool(l, i);
	return p ? p->name : NULL;
}

RPMEM_EXPORT uint64_t rpmemctl_list_pool_size(const struct rpmemctl_list *l,
					      unsigned i)
{
	const struct rpmem_pool_info *p = pool(l, i);
	return p ? p->size : 0;
}

RPMEM_EXPORT enum rpmemctl_pool_state
rpmemctl_list_pool_state(const struct rpmemctl_list *l, unsigned i)
{
	const struct rpmem_pool_info *p = pool(l, i);
	return p ? (enum rpmemctl_pool_state)p->state : RPMEMCTL_POOL_EMPTY;
}

RPMEM_EXPORT uint64_t
rpmemctl_list_pool_generation(const struct rpmemctl_list *l, unsigned i)
{
	const struct rpmem_pool_info *p = pool(l, i);
	return p ? p->generation : 0;
}

RPMEM_EXPORT const char *rpmemctl_list_pool_uuid(const struct rpmemctl_list *l,
						 unsigned i)
{
	return pool(l, i) ? l->uuids[i] : NULL;
}

RPMEM_EXPORT uint64_t rpmemctl_list_pool_created(const struct rpmemctl_list *l,
						 unsigned i)
{
	const struct rpmem_pool_info *p = pool(l, i);
	return p ? p->created : 0;
}

RPMEM_EXPORT uint64_t
rpmemctl_list_pool_last_sync(const struct rpmemctl_list *l, unsigned i)
{
	const struct rpmem_pool_info *p = pool(l, i);
	return p ? p->last_sync : 0;
}

RPMEM_EXPORT const char *
rpmemctl_list_pool_source(const struct rpmemctl_list *l, unsigned i)
{
	const struct rpmem_pool_info *p = pool(l, i);
	return p ? p->source : NULL;
}

RPMEM_EXPORT const char *
rpmemctl_list_pool_writer(const struct rpmemctl_list *l, unsigned i)
{
	const struct rpmem_pool_info *p = pool(l, i);
	return p ? p->writer : NULL;
}

RPMEM_EXPORT unsigned rpmemctl_list_pool_readers(const struct rpmemctl_list *l,
						 unsigned i)
{
	const struct rpmem_pool_info *p = pool(l, i);
	return p ? p->readers : 0;
}

RPMEM_EXPORT uint64_t
rpmemctl_list_pool_bytes_written(const struct rpmemctl_list *l, unsigned i)
{
	const struct rpmem_pool_info *p = pool(l, i);
	return p ? p->bytes_written : 0;
}

RPMEM_EXPORT uint64_t rpmemctl_list_pool_flushes(const struct rpmemctl_list *l,
						 unsigned i)
{
	const struct rpmem_pool_info *p = pool(l, i);
	return p ? p->flushes : 0;
}

RPMEM_EXPORT int rpmemctl_list_pool_pending(const struct rpmemctl_list *l,
					   unsigned i)
{
	const struct rpmem_pool_info *p = pool(l, i);
	return p ? p->pending : 0;
}

RPMEM_EXPORT uint64_t
rpmemctl_list_pool_undo_generation(const struct rpmemctl_list *l, unsigned i)
{
	const struct rpmem_pool_info *p = pool(l, i);
	return p ? p->undo_generation : 0;
}

RPMEM_EXPORT uint64_t
rpmemctl_list_pool_undo_bytes(const struct rpmemctl_list *l, unsigned i)
{
	const struct rpmem_pool_info *p = pool(l, i);
	return p ? p->undo_bytes : 0;
}

RPMEM_EXPORT unsigned
rpmemctl_list_pool_versions(const struct rpmemctl_list *l, unsigned i)
{
	const struct rpmem_pool_info *p = pool(l, i);
	return p ? p->versions : 0;
}

RPMEM_EXPORT uint64_t
rpmemctl_list_pool_versions_bytes(const struct rpmemctl_list *l, unsigned i)
{
	const struct rpmem_pool_info *p = pool(l, i);
	return p ? p->versions_bytes : 0;
}

RPMEM_EXPORT uint64_t
rpmemctl_list_pool_damaged(const struct rpmemctl_list *l, unsigned i)
{
	const struct rpmem_pool_info *p = pool(l, i);
	return p ? p->damaged : 0;
}

RPMEM_EXPORT uint64_t
rpmemctl_list_pool_split_brain(const struct rpmemctl_list *l, unsigned i)
{
	const struct rpmem_pool_info *p = pool(l, i);
	return p ? p->split_at : 0;
}

RPMEM_EXPORT int rpmemctl_list_pool_role(const struct rpmemctl_list *l,
					 unsigned i)
{
	const struct rpmem_pool_info *p = pool(l, i);
	return p ? p->role : RPMEMCTL_ROLE_SECONDARY;
}

RPMEM_EXPORT unsigned
rpmemctl_list_pool_generations(const struct rpmemctl_list *l, unsigned i,
			       uint64_t *ids, unsigned max)
{
	const struct rpmem_pool_info *p = pool(l, i);
	unsigned n = p ? p->ngens : 0;
	if (n > max)
		n = max;
	if (n)
		memcpy(ids, p->gens, n * sizeof(ids[0]));
	return p ? p->ngens : 0;
}

/* live_source -- a source a live writer recorded ("HOST:PATH (live)") */
static int live_source(const char *src)
{
	size_t n = strlen(src), k = strlen(" (live)");
	return n > k && !strcmp(src + n - k, " (live)");
}

RPMEM_EXPORT int rpmemctl_list_pool_disk_state(const struct rpmemctl_list *l,
					       unsigned i)
{
	const struct rpmem_pool_info *p = pool(l, i);
	if (!p || p->state == RPMEM_POOL_EMPTY)
		return RPMEMCTL_DISK_INCONSISTENT;
	if (p->role == RPMEM_ROLE_PRIMARY)
		return RPMEMCTL_DISK_UPTODATE;
	if (p->state == RPMEM_POOL_CONSISTENT)
		return RPMEMCTL_DISK_CONSISTENT;
	/* syncing: a live copy holds its writer's every drain */
	if (!live_source(p->source))
		return RPMEMCTL_DISK_INCONSISTENT;
	return p->writer[0] ? RPMEMCTL_DISK_UPTODATE :
			      RPMEMCTL_DISK_CONSISTENT;
}

int client_pool_live_copy(struct rpmemctl_pool *p, char *src, size_t len)
{
	struct rpmemctl_list *l = NULL;
	int ret = list_get(p->sess, p->region, &l);
	if (ret)
		return ret;
	ret = 0;
	for (uint32_t i = 0; i < l->r.npools; i++) {
		const struct rpmem_pool_info *q = &l->r.pools[i];
		if (strcmp(q->name, p->name) || strcmp(q->region, p->region))
			continue;
		ret = q->state == RPMEM_POOL_SYNCING && live_source(q->source);
		if (ret && q->writer[0])
			ret = -EBUSY;
		rpmem_strlcpy(src, q->writer[0] ? q->writer : q->source, len);
	}
	rpmemctl_list_free(&l);
	return ret;
}

RPMEM_EXPORT const char *rpmemctl_disk_state_str(int d)
{
	static const char *const s[] = { "Inconsistent", "Outdated",
					 "Consistent", "UpToDate" };
	return d >= 0 && d <= RPMEMCTL_DISK_UPTODATE ? s[d] : "Unknown";
}

RPMEM_EXPORT const char *rpmemctl_pool_state_str(enum rpmemctl_pool_state s)
{
	return rpmem_state_str((uint8_t)s);
}

/*
 * status_join -- page's sessions behind r's, and its namespaces and links
 * (they come on one page, the last) into r; page is left to free
 */
static int status_join(void *rv, void *pv)
{
	struct rpmem_msg_status_reply *r = rv, *page = pv;
	int ret = append((void **)&r->sessions, &r->nsessions,
			 (void **)&page->sessions, page->nsessions,
			 sizeof(*r->sessions));
	if (ret || !page->nnamespaces)
		return ret;
	free(r->namespaces);
	free(r->links);
	r->namespaces = page->namespaces;
	r->nnamespaces = page->nnamespaces;
	r->links = page->links;
	r->nlinks = page->nlinks;
	page->namespaces = NULL;
	page->links = NULL;
	page->nnamespaces = page->nlinks = 0;
	/* the daemon's figures as of the last page */
	r->uptime = page->uptime;
	return 0;
}

/* status_encode -- the pager's STATUS encoder */
static int status_encode(void *buf, size_t cap, const void *req)
{
	return rpmem_status_encode(buf, cap, req);
}

/* status_decode -- a STATUS_REPLY in the layout the request asks for */
static int status_decode(const void *buf, size_t len, const void *req,
			 void *page)
{
	const struct rpmem_msg_status *m = req;
	return rpmem_status_reply_decode_flags(buf, len, m->flags, page);
}

/*
 * status_count -- a STATUS page's sessions (the namespaces may be alone
 * on the last page)
 */
static uint32_t status_count(const void *page)
{
	const struct rpmem_msg_status_reply *p = page;
	return p->next[0] ? p->nsessions : 1;
}

/* status_free -- the pager's STATUS_REPLY free */
static void status_free(void *page)
{
	rpmem_status_reply_free(page);
}

static const struct pager status_pager = {
	.type = RPMEM_MSG_STATUS,
	.rtype = RPMEM_MSG_STATUS_REPLY,
	.what = "the status",
	.size = sizeof(struct rpmem_msg_status_reply),
	.cursor_at = offsetof(struct rpmem_msg_status, cursor),
	.next_at = offsetof(struct rpmem_msg_status_reply, next),
	.encode = status_encode,
	.decode = status_decode,
	.count = status_count,
	.join = status_join,
	.free = status_free,
};

/*
 * status_pages -- STATUS into *r: one request, or from a target that
 * answers in pages (RPMEM_CAP_PAGE) every page, joined
 */
static int status_pages(struct rpmemctl_session *sess,
			struct rpmem_msg_status *req,
			struct rpmem_msg_status_reply *r)
{
	struct rpmem_msg_status_reply page;

	if (sess->caps & RPMEM_CAP_PAGE)
		req->flags |= RPMEM_STATUS_PAGE;
	return pager_run(sess, &status_pager, req, r, &page);
}

/* status_get -- the daemon and its sessions */
static int status_get(struct rpmemctl_session *sess,
		      struct rpmemctl_status **out)
{
	if (!sess || !out)
		return -EINVAL;
	/* identities only from a target that knows the flag */
	struct rpmem_msg_status req = {
		.flags = (sess->caps & RPMEM_CAP_IDENTITY) ?
				 RPMEM_STATUS_IDENTITY : 0,
	};
	struct rpmemctl_status *st = calloc(1, sizeof(*st));
	if (!st) {
		client_seterr(sess, "out of memory");
		return -ENOMEM;
	}
	int ret = status_pages(sess, &req, &st->r);
	if (ret) {
		free(st);
		return ret;
	}
	*out = st;
	return 0;
}

/* rpmemctl_status_get -- the daemon and its sessions */
RPMEM_EXPORT int rpmemctl_status_get(struct rpmemctl_session *sess,
				     struct rpmemctl_status **out)
{
	client_sess_begin(sess);
	return client_sess_end(sess, status_get(sess, out),
			       "getting the status");
}

RPMEM_EXPORT void rpmemctl_status_free(struct rpmemctl_status **st)
{
	if (!st || !*st)
		return;
	rpmem_status_reply_free(&(*st)->r);
	free(*st);
	*st = NULL;
}

/* sinfo -- the i-th session or NULL */
static const struct rpmem_session_info *sinfo(const struct rpmemctl_status *st,
					      unsigned i)
{
	return st && i < st->r.nsessions ? &st->r.sessions[i] : NULL;
}

RPMEM_EXPORT const char *
rpmemctl_status_server(const struct rpmemctl_status *st)
{
	return st ? st->r.server : NULL;
}

RPMEM_EXPORT uint64_t rpmemctl_status_pid(const struct rpmemctl_status *st)
{
	return st ? st->r.pid : 0;
}

RPMEM_EXPORT uint64_t rpmemctl_status_uptime(const struct rpmemctl_status *st)
{
	return st ? st->r.uptime : 0;
}

RPMEM_EXPORT unsigned
rpmemctl_status_max_sessions(const struct rpmemctl_status *st)
{
	return st ? st->r.max_sessions : 0;
}

RPMEM_EXPORT int rpmemctl_status_rdma_capable(const struct rpmemctl_status *st)
{
	return st && (st->r.caps & RPMEM_CAP_RDMA) ? 1 : 0;
}

RPMEM_EXPORT unsigned
rpmemctl_status_session_count(const struct rpmemctl_status *st)
{
	return st ? st->r.nsessions : 0;
}

RPMEM_EXPORT unsigned
rpmemctl_status_session_id(const struct rpmemctl_status *st, unsigned i)
{
	const struct rpmem_session_info *s = sinfo(st, i);
	return s ? s->id : 0;
}

RPMEM_EXPORT const char *
rpmemctl_status_session_peer(const struct rpmemctl_status *st, unsigned i)
{
	const struct rpmem_session_info *s = sinfo(st, i);
	return s ? s->peer : NULL;
}

RPMEM_EXPORT const char *
rpmemctl_status_session_client(const struct rpmemctl_status *st, unsigned i)
{
	const struct rpmem_session_info *s = sinfo(st, i);
	return s ? s->client : NULL;
}

RPMEM_EXPORT const char *
rpmemctl_status_session_transport(const struct rpmemctl_status *st, unsigned i)
{
	const struct rpmem_session_info *s = sinfo(st, i);
	return s ? rpmem_xport_str(s->xport) : NULL;
}

RPMEM_EXPORT const char *
rpmemctl_status_session_pool(const struct rpmemctl_status *st, unsigned i)
{
	const struct rpmem_session_info *s = sinfo(st, i);
	return s ? s->pool : NULL;
}

/* rpmemctl_status_session_mode -- "rw", "ro", or "" with no pool open */
RPMEM_EXPORT const char *
rpmemctl_status_session_mode(const struct rpmemctl_status *st, unsigned i)
{
	const struct rpmem_session_info *s = sinfo(st, i);
	if (!s)
		return NULL;
	if (!s->pool[0])
		return "";
	return s->mode == RPMEM_OPEN_RW ? "rw" : "ro";
}

/*
 * rpmemctl_status_session_identity -- who the session proved to be over
 * TLS, "" over plaintext or from a target that does not say
 */
RPMEM_EXPORT const char *
rpmemctl_status_session_identity(const struct rpmemctl_status *st, unsigned i)
{
	const struct rpmem_session_info *s = sinfo(st, i);
	return s ? s->identity : NULL;
}

/*
 * rpmemctl_status_session_auth -- "psk", "x509" or "none" (plaintext);
 * "" from a target that does not say
 */
RPMEM_EXPORT const char *
rpmemctl_status_session_auth(const struct rpmemctl_status *st, unsigned i)
{
	const struct rpmem_session_info *s = sinfo(st, i);
	if (!s)
		return NULL;
	if (!(st->r.flags & RPMEM_STATUS_IDENTITY))
		return "";
	return rpmem_auth_str(s->auth);
}

RPMEM_EXPORT uint64_t
rpmemctl_status_session_bytes_written(const struct rpmemctl_status *st,
				      unsigned i)
{
	const struct rpmem_session_info *s = sinfo(st, i);
	return s ? s->bytes_written : 0;
}

RPMEM_EXPORT uint64_t
rpmemctl_status_session_bytes_read(const struct rpmemctl_status *st, unsigned i)
{
	const struct rpmem_session_info *s = sinfo(st, i);
	return s ? s->bytes_read : 0;
}

RPMEM_EXPORT uint64_t
rpmemctl_status_session_flushes(const struct rpmemctl_status *st, unsigned i)
{
	const struct rpmem_session_info *s = sinfo(st, i);
	return s ? s->flushes : 0;
}

RPMEM_EXPORT uint64_t
rpmemctl_status_session_last_flush_ns(const struct rpmemctl_status *st,
				      unsigned i)
{
	const struct rpmem_session_info *s = sinfo(st, i);
	return s ? s->last_flush_ns : 0;
}

/* nsinfo -- the i-th namespace or NULL */
static const struct rpmem_ns_info *nsinfo(const struct rpmemctl_status *st,
					  unsigned i)
{
	return st && i < st->r.nnamespaces ? &st->r.namespaces[i] : NULL;
}

RPMEM_EXPORT unsigned
rpmemctl_status_namespace_count(const struct rpmemctl_status *st)
{
	return st ? st->r.nnamespaces : 0;
}

RPMEM_EXPORT const char *
rpmemctl_status_namespace_name(const struct rpmemctl_status *st, unsigned i)
{
	const struct rpmem_ns_info *ns = nsinfo(st, i);
	return ns ? ns->name : NULL;
}

RPMEM_EXPORT const char *
rpmemctl_status_namespace_nd_region(const struct rpmemctl_status *st,
				    unsigned i)
{
	const struct rpmem_ns_info *ns = nsinfo(st, i);
	return ns ? ns->nd_region : NULL;
}

RPMEM_EXPORT const char *
rpmemctl_status_namespace_device(const struct rpmemctl_status *st, unsigned i)
{
	const struct rpmem_ns_info *ns = nsinfo(st, i);
	return ns ? ns->dev : NULL;
}

RPMEM_EXPORT const char *
rpmemctl_status_namespace_mode(const struct rpmemctl_status *st, unsigned i)
{
	const struct rpmem_ns_info *ns = nsinfo(st, i);
	return ns ? rpmem_ns_mode_str(ns->mode) : NULL;
}

RPMEM_EXPORT uint64_t
rpmemctl_status_namespace_size(const struct rpmemctl_status *st, unsigned i)
{
	const struct rpmem_ns_info *ns = nsinfo(st, i);
	return ns ? ns->size : 0;
}

RPMEM_EXPORT uint64_t
rpmemctl_status_namespace_align(const struct rpmemctl_status *st, unsigned i)
{
	const struct rpmem_ns_info *ns = nsinfo(st, i);
	return ns ? ns->align : 0;
}

RPMEM_EXPORT int
rpmemctl_status_namespace_numa_node(const struct rpmemctl_status *st,
				    unsigned i)
{
	const struct rpmem_ns_info *ns = nsinfo(st, i);
	return ns ? ns->numa : -1;
}

RPMEM_EXPORT const char *
rpmemctl_status_namespace_mount(const struct rpmemctl_status *st, unsigned i)
{
	const struct rpmem_ns_info *ns = nsinfo(st, i);
	return ns ? ns->mount : NULL;
}

/* ns_link -- the k-th link to namespace i, or NULL */
static const struct rpmem_ns_link *ns_link(const struct rpmemctl_status *st,
					   unsigned i, unsigned k)
{
	if (!nsinfo(st, i))
		return NULL;
	for (uint32_t j = 0; j < st->r.nlinks; j++)
		if (st->r.links[j].ns == i && k-- == 0)
			return &st->r.links[j];
	return NULL;
}

RPMEM_EXPORT unsigned
rpmemctl_status_namespace_region_count(const struct rpmemctl_status *st,
				       unsigned i)
{
	unsigned n = 0;

	while (ns_link(st, i, n))
		n++;
	return n;
}

RPMEM_EXPORT const char *
rpmemctl_status_namespace_region(const struct rpmemctl_status *st, unsigned i,
				 unsigned k)
{
	const struct rpmem_ns_link *l = ns_link(st, i, k);
	return l ? l->region : NULL;
}

/* rpmemctl_status_region_namespace -- the first link of region decides */
RPMEM_EXPORT int
rpmemctl_status_region_namespace(const struct rpmemctl_status *st,
				 const char *region)
{
	if (!st || !region)
		return -1;
	for (uint32_t j = 0; j < st->r.nlinks; j++)
		if (!strcmp(st->r.links[j].region, region))
			return (int)st->r.links[j].ns;
	return -1;
}
