/* SPDX-License-Identifier: BSD-3-Clause */
/* proto_query.c -- the LIST and STATUS messages and their replies */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "proto.h"
#include "proto_int.h"
#include "wire.h"

int rpmem_list_encode(void *buf, size_t cap, const struct rpmem_msg_list *m)
{
	ENC_BEGIN;
	/* a cursor goes with RPMEM_LIST_PAGE only */
	if ((m->flags & ~RPMEM_LIST_FLAGS) ||
	    (!(m->flags & RPMEM_LIST_PAGE) && m->cursor[0]))
		return -EINVAL;
	wbuf_str(&w, m->region, RPMEM_NAME_MAX);
	if (m->flags)
		wbuf_u32(&w, m->flags);
	if (m->flags & RPMEM_LIST_PAGE)
		wbuf_str(&w, m->cursor, RPMEM_CURSOR_MAX);
	return enc_end(&w);
}

int rpmem_list_decode(const void *buf, size_t len, struct rpmem_msg_list *m)
{
	DEC_BEGIN;
	rbuf_name(&r, m->region);
	if (r.err || rbuf_left(&r) == 0)
		return dec_end(&r);
	m->flags = rbuf_u32(&r);
	/* flags are never sent as 0; unknown ones ask for an unknown layout */
	if (m->flags == 0 || (m->flags & ~RPMEM_LIST_FLAGS))
		return -EBADMSG;
	if (m->flags & RPMEM_LIST_PAGE)
		rbuf_str(&r, m->cursor, sizeof(m->cursor));
	return dec_end(&r);
}

/* sizes of one encoded entry at its smallest, to bound counts early */
#define REGION_MIN_ENC (2 + 1 + 2 + 8 + 8 + 4 + 4)
#define POOL_MIN_ENC (2 + 2 + 16 + 8 + 1 + 8 + 8 + 8 + 2 + 2 + 4 + 8 + 8)

int rpmem_list_reply_encode(void *buf, size_t cap,
			    const struct rpmem_msg_list_reply *m)
{
	ENC_BEGIN;
	wbuf_u32(&w, m->nregions);
	for (uint32_t i = 0; i < m->nregions; i++) {
		const struct rpmem_region_info *ri = &m->regions[i];
		wbuf_str(&w, ri->name, RPMEM_NAME_MAX);
		wbuf_u8(&w, ri->type);
		wbuf_str(&w, ri->path, RPMEM_STR_MAX);
		wbuf_u64(&w, ri->size);
		wbuf_u64(&w, ri->free);
		wbuf_u32(&w, ri->align);
		wbuf_u32(&w, ri->caps);
	}
	wbuf_u32(&w, m->npools);
	for (uint32_t i = 0; i < m->npools; i++) {
		const struct rpmem_pool_info *p = &m->pools[i];
		wbuf_str(&w, p->region, RPMEM_NAME_MAX);
		wbuf_str(&w, p->name, RPMEM_NAME_MAX);
		wbuf_bytes(&w, p->uuid, 16);
		wbuf_u64(&w, p->size);
		wbuf_u8(&w, p->state);
		wbuf_u64(&w, p->generation);
		wbuf_u64(&w, p->created);
		wbuf_u64(&w, p->last_sync);
		wbuf_str(&w, p->source, RPMEM_STR_MAX);
		wbuf_str(&w, p->writer, RPMEM_STR_MAX);
		wbuf_u32(&w, p->readers);
		wbuf_u64(&w, p->bytes_written);
		wbuf_u64(&w, p->flushes);
		if (m->flags & RPMEM_LIST_UNDO) {
			wbuf_u8(&w, p->pending);
			wbuf_u64(&w, p->undo_generation);
			wbuf_u64(&w, p->undo_bytes);
		}
		if (m->flags & RPMEM_LIST_VERSIONS) {
			wbuf_u32(&w, p->versions);
			wbuf_u64(&w, p->versions_bytes);
		}
		if (m->flags & RPMEM_LIST_GENERATIONS) {
			if (p->ngens > RPMEM_MAX_GENERATIONS)
				return -EMSGSIZE;
			wbuf_u8(&w, p->role);
			wbuf_u8(&w, p->ngens);
			for (uint8_t k = 0; k < p->ngens; k++)
				wbuf_u64(&w, p->gens[k]);
		}
		if (m->flags & RPMEM_LIST_DAMAGED)
			wbuf_u64(&w, p->damaged);
		if (m->flags & RPMEM_LIST_SPLIT)
			wbuf_u64(&w, p->split_at);
	}
	if (m->flags & ~RPMEM_LIST_FLAGS)
		return -EINVAL;
	if (m->flags & RPMEM_LIST_PAGE)
		wbuf_str(&w, m->next, RPMEM_CURSOR_MAX);
	return enc_end(&w);
}

/*
 * gens_decode -- role u8 | count u8 | count x u64 (LIST entries,
 * GEN_REPLY); a bad role or count sets r->err
 */
static void gens_decode(struct rbuf *r, uint8_t *role, uint8_t *count,
			uint64_t *ids)
{
	*role = rbuf_u8(r);
	*count = rbuf_u8(r);
	if (r->err || *role > RPMEM_ROLE_MAX ||
	    *count > RPMEM_MAX_GENERATIONS) {
		r->err = -EBADMSG;
		*count = 0;
		return;
	}
	for (uint8_t k = 0; k < *count; k++)
		ids[k] = rbuf_u64(r);
}

int rpmem_list_reply_decode(const void *buf, size_t len,
			    struct rpmem_msg_list_reply *m)
{
	return rpmem_list_reply_decode_flags(buf, len, 0, m);
}

int rpmem_list_reply_decode_flags(const void *buf, size_t len, uint32_t flags,
				  struct rpmem_msg_list_reply *m)
{
	DEC_BEGIN;
	if (flags & ~RPMEM_LIST_FLAGS)
		return -EINVAL;
	m->flags = flags;
	uint32_t n = rbuf_u32(&r);
	if (r.err || n > rbuf_left(&r) / REGION_MIN_ENC)
		return -EBADMSG;
	m->regions = calloc(n ? n : 1, sizeof(*m->regions));
	if (!m->regions)
		return -ENOMEM;
	m->nregions = n;
	for (uint32_t i = 0; i < n; i++) {
		struct rpmem_region_info *ri = &m->regions[i];
		rbuf_name(&r, ri->name);
		ri->type = rbuf_u8(&r);
		rbuf_str(&r, ri->path, sizeof(ri->path));
		ri->size = rbuf_u64(&r);
		ri->free = rbuf_u64(&r);
		ri->align = rbuf_u32(&r);
		ri->caps = rbuf_u32(&r);
		if (ri->type > RPMEM_REGION_DEVDAX)
			r.err = -EBADMSG;
	}
	n = rbuf_u32(&r);
	if (r.err || n > rbuf_left(&r) / POOL_MIN_ENC)
		goto err;
	m->pools = calloc(n ? n : 1, sizeof(*m->pools));
	if (!m->pools) {
		rpmem_list_reply_free(m);
		return -ENOMEM;
	}
	m->npools = n;
	for (uint32_t i = 0; i < n; i++) {
		struct rpmem_pool_info *p = &m->pools[i];
		rbuf_name(&r, p->region);
		rbuf_name(&r, p->name);
		rbuf_bytes(&r, p->uuid, 16);
		p->size = rbuf_u64(&r);
		p->state = rbuf_u8(&r);
		p->generation = rbuf_u64(&r);
		p->created = rbuf_u64(&r);
		p->last_sync = rbuf_u64(&r);
		rbuf_str(&r, p->source, sizeof(p->source));
		rbuf_str(&r, p->writer, sizeof(p->writer));
		p->readers = rbuf_u32(&r);
		p->bytes_written = rbuf_u64(&r);
		p->flushes = rbuf_u64(&r);
		if (flags & RPMEM_LIST_UNDO) {
			p->pending = rbuf_u8(&r);
			p->undo_generation = rbuf_u64(&r);
			p->undo_bytes = rbuf_u64(&r);
		}
		if (flags & RPMEM_LIST_VERSIONS) {
			p->versions = rbuf_u32(&r);
			p->versions_bytes = rbuf_u64(&r);
		}
		if (flags & RPMEM_LIST_GENERATIONS)
			gens_decode(&r, &p->role, &p->ngens, p->gens);
		if (flags & RPMEM_LIST_DAMAGED)
			p->damaged = rbuf_u64(&r);
		if (flags & RPMEM_LIST_SPLIT)
			p->split_at = rbuf_u64(&r);
		if (p->state > RPMEM_POOL_CONSISTENT || p->pending > 1)
			r.err = -EBADMSG;
	}
	if (flags & RPMEM_LIST_PAGE)
		rbuf_str(&r, m->next, sizeof(m->next));
	if (dec_end(&r) == 0)
		return 0;
err:
	rpmem_list_reply_free(m);
	return -EBADMSG;
}

void rpmem_list_reply_free(struct rpmem_msg_list_reply *m)
{
	free(m->regions);
	free(m->pools);
	m->regions = NULL;
	m->pools = NULL;
	m->nregions = m->npools = 0;
}

#define SESSION_MIN_ENC (4 + 2 + 2 + 1 + 2 + 1 + 8 * 6)
#define SESSION_ID_ENC (2 + 1) /* identity and auth, extended layout */

int rpmem_status_encode(void *buf, size_t cap, const struct rpmem_msg_status *m)
{
	ENC_BEGIN;
	/* a cursor goes with RPMEM_STATUS_PAGE only */
	if ((m->flags & ~RPMEM_STATUS_FLAGS) ||
	    (!(m->flags & RPMEM_STATUS_PAGE) && m->cursor[0]))
		return -EINVAL;
	if (m->flags)
		wbuf_u32(&w, m->flags);
	if (m->flags & RPMEM_STATUS_PAGE)
		wbuf_str(&w, m->cursor, RPMEM_CURSOR_MAX);
	return enc_end(&w);
}

int rpmem_status_decode(const void *buf, size_t len,
			struct rpmem_msg_status *m)
{
	DEC_BEGIN;
	if (len == 0)
		return 0;
	m->flags = rbuf_u32(&r);
	/* a flag this end does not know asks for a layout it cannot send */
	if (m->flags == 0 || (m->flags & ~RPMEM_STATUS_FLAGS))
		return -EBADMSG;
	if (m->flags & RPMEM_STATUS_PAGE)
		rbuf_str(&r, m->cursor, sizeof(m->cursor));
	return dec_end(&r);
}
#define NS_MIN_ENC (2 + 2 + 2 + 1 + 8 + 4 + 4 + 2)
#define LINK_MIN_ENC (2 + 4)

int rpmem_status_reply_encode(void *buf, size_t cap,
			      const struct rpmem_msg_status_reply *m)
{
	ENC_BEGIN;
	wbuf_str(&w, m->server, RPMEM_STR_MAX);
	wbuf_u64(&w, m->pid);
	wbuf_u64(&w, m->uptime);
	wbuf_u32(&w, m->caps);
	wbuf_u32(&w, m->max_sessions);
	wbuf_u32(&w, m->nsessions);
	if (m->flags & ~RPMEM_STATUS_FLAGS)
		return -EINVAL;
	for (uint32_t i = 0; i < m->nsessions; i++) {
		const struct rpmem_session_info *s = &m->sessions[i];
		wbuf_u32(&w, s->id);
		if (m->flags & RPMEM_STATUS_IDENTITY) {
			wbuf_str(&w, s->identity, RPMEM_IDENTITY_MAX);
			wbuf_u8(&w, s->auth);
		}
		wbuf_str(&w, s->peer, RPMEM_STR_MAX);
		wbuf_str(&w, s->client, RPMEM_STR_MAX);
		wbuf_u8(&w, s->xport);
		wbuf_str(&w, s->pool, sizeof(s->pool) - 1);
		wbuf_u8(&w, s->mode);
		wbuf_u64(&w, s->started);
		wbuf_u64(&w, s->bytes_written);
		wbuf_u64(&w, s->bytes_read);
		wbuf_u64(&w, s->flushes);
		wbuf_u64(&w, s->last_flush_ns);
	}
	if (m->nnamespaces > RPMEM_MAX_NAMESPACES ||
	    m->nlinks > RPMEM_MAX_NS_LINKS)
		return -EMSGSIZE;
	wbuf_u32(&w, m->nnamespaces);
	for (uint32_t i = 0; i < m->nnamespaces; i++) {
		const struct rpmem_ns_info *ns = &m->namespaces[i];
		wbuf_str(&w, ns->name, RPMEM_NAME_MAX);
		wbuf_str(&w, ns->nd_region, RPMEM_NAME_MAX);
		wbuf_str(&w, ns->dev, RPMEM_STR_MAX);
		wbuf_u8(&w, ns->mode);
		wbuf_u64(&w, ns->size);
		wbuf_u32(&w, ns->align);
		wbuf_u32(&w, (uint32_t)ns->numa);
		wbuf_str(&w, ns->mount, RPMEM_STR_MAX);
	}
	wbuf_u32(&w, m->nlinks);
	for (uint32_t i = 0; i < m->nlinks; i++) {
		wbuf_str(&w, m->links[i].region, RPMEM_NAME_MAX);
		wbuf_u32(&w, m->links[i].ns);
	}
	if (m->flags & RPMEM_STATUS_PAGE)
		wbuf_str(&w, m->next, RPMEM_CURSOR_MAX);
	return enc_end(&w);
}

/*
 * status_ns_decode -- the namespaces and region links of a STATUS_REPLY
 * into m (which owns what is allocated, also on failure): 0, -EBADMSG or
 * -ENOMEM
 */
static int status_ns_decode(struct rbuf *r, struct rpmem_msg_status_reply *m)
{
	uint32_t n = rbuf_u32(r);

	if (r->err || n > RPMEM_MAX_NAMESPACES || n > rbuf_left(r) / NS_MIN_ENC)
		return -EBADMSG;
	m->namespaces = calloc(n ? n : 1, sizeof(*m->namespaces));
	if (!m->namespaces)
		return -ENOMEM;
	m->nnamespaces = n;
	for (uint32_t i = 0; i < n; i++) {
		struct rpmem_ns_info *ns = &m->namespaces[i];
		rbuf_name(r, ns->name);
		rbuf_name(r, ns->nd_region);
		rbuf_str(r, ns->dev, sizeof(ns->dev));
		ns->mode = rbuf_u8(r);
		ns->size = rbuf_u64(r);
		ns->align = rbuf_u32(r);
		ns->numa = (int32_t)rbuf_u32(r);
		rbuf_str(r, ns->mount, sizeof(ns->mount));
		if (r->err || !ns->name[0] || ns->mode > RPMEM_NS_MODE_MAX ||
		    ns->numa < -1)
			return -EBADMSG;
	}
	n = rbuf_u32(r);
	if (r->err || n > RPMEM_MAX_NS_LINKS || n > rbuf_left(r) / LINK_MIN_ENC)
		return -EBADMSG;
	m->links = calloc(n ? n : 1, sizeof(*m->links));
	if (!m->links)
		return -ENOMEM;
	m->nlinks = n;
	for (uint32_t i = 0; i < n; i++) {
		struct rpmem_ns_link *l = &m->links[i];
		rbuf_name(r, l->region);
		l->ns = rbuf_u32(r);
		if (r->err || !l->region[0] || l->ns >= m->nnamespaces)
			return -EBADMSG;
	}
	return 0;
}

int rpmem_status_reply_decode(const void *buf, size_t len,
			      struct rpmem_msg_status_reply *m)
{
	return rpmem_status_reply_decode_flags(buf, len, 0, m);
}

int rpmem_status_reply_decode_flags(const void *buf, size_t len,
				    uint32_t flags,
				    struct rpmem_msg_status_reply *m)
{
	size_t min = SESSION_MIN_ENC;
	int ret;

	DEC_BEGIN;
	if (flags & ~RPMEM_STATUS_FLAGS)
		return -EINVAL;
	m->flags = flags;
	if (flags & RPMEM_STATUS_IDENTITY)
		min += SESSION_ID_ENC;
	rbuf_str(&r, m->server, sizeof(m->server));
	m->pid = rbuf_u64(&r);
	m->uptime = rbuf_u64(&r);
	m->caps = rbuf_u32(&r);
	m->max_sessions = rbuf_u32(&r);
	uint32_t n = rbuf_u32(&r);
	if (r.err || n > rbuf_left(&r) / min)
		return -EBADMSG;
	m->sessions = calloc(n ? n : 1, sizeof(*m->sessions));
	if (!m->sessions)
		return -ENOMEM;
	m->nsessions = n;
	for (uint32_t i = 0; i < n; i++) {
		struct rpmem_session_info *s = &m->sessions[i];
		s->id = rbuf_u32(&r);
		if (flags & RPMEM_STATUS_IDENTITY) {
			rbuf_str(&r, s->identity, sizeof(s->identity));
			s->auth = rbuf_u8(&r);
			if (s->auth > RPMEM_AUTH_MAX)
				r.err = -EBADMSG;
		}
		rbuf_str(&r, s->peer, sizeof(s->peer));
		rbuf_str(&r, s->client, sizeof(s->client));
		s->xport = rbuf_u8(&r);
		rbuf_str(&r, s->pool, sizeof(s->pool));
		s->mode = rbuf_u8(&r);
		s->started = rbuf_u64(&r);
		s->bytes_written = rbuf_u64(&r);
		s->bytes_read = rbuf_u64(&r);
		s->flushes = rbuf_u64(&r);
		s->last_flush_ns = rbuf_u64(&r);
		if (s->xport > RPMEM_XPORT_RDMA || s->mode > RPMEM_OPEN_RW)
			r.err = -EBADMSG;
	}
	ret = status_ns_decode(&r, m);
	if (ret == 0 && (flags & RPMEM_STATUS_PAGE))
		rbuf_str(&r, m->next, sizeof(m->next));
	if (ret == 0 && dec_end(&r) == 0)
		return 0;
	rpmem_status_reply_free(m);
	return ret == -ENOMEM ? -ENOMEM : -EBADMSG;
}

void rpmem_status_reply_free(struct rpmem_msg_status_reply *m)
{
	free(m->sessions);
	free(m->namespaces);
	free(m->links);
	m->sessions = NULL;
	m->namespaces = NULL;
	m->links = NULL;
	m->nsessions = m->nnamespaces = m->nlinks = 0;
}
