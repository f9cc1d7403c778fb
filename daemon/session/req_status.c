/* SPDX-License-Identifier: BSD-3-Clause */
/* req_status.c -- STATUS: the daemon, its sessions and its PMem namespaces */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "access.h"
#include "log.h"
#include "net.h"
#include "pmem.h"
#include "session_int.h"
#include "sock.h"
#include "util.h"

/* ns_info -- a discovered namespace as STATUS_REPLY carries it */
static void ns_info(const struct rpmemd_pmem_ns *e, struct rpmem_ns_info *ni)
{
	rpmem_strlcpy(ni->name, e->ns, sizeof(ni->name));
	rpmem_strlcpy(ni->nd_region, e->region, sizeof(ni->nd_region));
	rpmem_strlcpy(ni->dev, e->dev, sizeof(ni->dev));
	ni->mode = rpmemd_pmem_mode_code(e->mode);
	ni->size = e->size;
	ni->align = e->align;
	ni->numa = e->numa < -1 ? -1 : e->numa;
	/* a longer mount point is not cut short: it is left out */
	if (strlen(e->mount) <= RPMEM_STR_MAX)
		rpmem_strlcpy(ni->mount, e->mount, sizeof(ni->mount));
}

/*
 * status_namespaces -- the PMem namespaces found at start or the last
 * reload, and which active regions lie on them, into rep
 */
static int status_namespaces(struct rpmemd_sessions *set,
			     struct rpmem_msg_status_reply *rep)
{
	struct rpmemd_region **v = NULL;
	struct rpmemd_pmem_ns *ns = NULL;
	unsigned nr = 0;
	size_t n = 0;
	int ret;

	if ((ret = rpmemd_pmem_published(&ns, &n)))
		return ret;
	if (n > RPMEM_MAX_NAMESPACES) {
		WARN("STATUS: %zu namespaces, only the first %u are shown", n,
		     RPMEM_MAX_NAMESPACES);
		n = RPMEM_MAX_NAMESPACES;
	}
	rep->namespaces = calloc(n ? n : 1, sizeof(*rep->namespaces));
	if (!rep->namespaces) {
		ret = -ENOMEM;
		goto out;
	}
	rep->nnamespaces = (uint32_t)n;
	for (size_t i = 0; i < n; i++)
		ns_info(&ns[i], &rep->namespaces[i]);
	if ((ret = rpmemd_regions_get_all(set->regions, &v, &nr)))
		goto out;
	rep->links = calloc(nr ? nr : 1, sizeof(*rep->links));
	if (!rep->links) {
		ret = -ENOMEM;
		goto out;
	}
	for (unsigned j = 0; j < nr && rep->nlinks < RPMEM_MAX_NS_LINKS; j++) {
		int k = rpmemd_pmem_region_ns(ns, n, v[j]->cfg.type,
					      v[j]->cfg.path);
		if (k < 0)
			continue;
		struct rpmem_ns_link *l = &rep->links[rep->nlinks++];
		rpmem_strlcpy(l->region, v[j]->cfg.name, sizeof(l->region));
		l->ns = (uint32_t)k;
	}
out:
	rpmemd_regions_put_all(&v, nr);
	rpmemd_pmem_free(&ns);
	return ret;
}

/*
 * cursor_id -- a STATUS cursor: "" (the first page, 0) or the decimal id
 * of the last session of the previous page; 0 or -EINVAL
 */
static int cursor_id(const char *cursor, uint32_t *id)
{
	uint64_t v = 0;

	*id = 0;
	if (strlen(cursor) > 10)
		return -EINVAL;
	for (const char *c = cursor; *c; c++) {
		if (*c < '0' || *c > '9')
			return -EINVAL;
		v = v * 10 + (uint64_t)(*c - '0');
	}
	if (v > UINT32_MAX)
		return -EINVAL;
	*id = (uint32_t)v;
	return 0;
}

/*
 * status_page -- keep the sessions of rep (sorted by id) of one page: at
 * most RPMEM_PAGE_ENTRIES after the cursor's id; rep->next is set when
 * more sessions follow. Returns 1 when it did, 0 when this is the last
 * page of sessions (the namespaces may come with it).
 */
static int status_page(struct rpmem_msg_status_reply *rep, uint32_t after)
{
	uint32_t i = 0, k;

	while (i < rep->nsessions && rep->sessions[i].id <= after)
		i++;
	k = rep->nsessions - i;
	if (i)
		memmove(rep->sessions, rep->sessions + i,
			k * sizeof(*rep->sessions));
	rep->nsessions = k;
	if (k <= RPMEM_PAGE_ENTRIES)
		return 0;
	rep->nsessions = RPMEM_PAGE_ENTRIES;
	snprintf(rep->next, sizeof(rep->next), "%u",
		 rep->sessions[RPMEM_PAGE_ENTRIES - 1].id);
	return 1;
}

/*
 * status_encode -- rep into buf; a page whose sessions leave no room for
 * the namespaces goes without them, which then come with the next page
 */
static int status_encode(uint8_t *buf, struct rpmem_msg_status_reply *rep,
			 uint32_t after)
{
	int len = rpmem_status_reply_encode(buf, RPMEM_MAX_PAYLOAD, rep);
	if (len != -EMSGSIZE || !(rep->flags & RPMEM_STATUS_PAGE) ||
	    rep->next[0])
		return len;
	uint32_t nns = rep->nnamespaces, nl = rep->nlinks;
	rep->nnamespaces = rep->nlinks = 0;
	snprintf(rep->next, sizeof(rep->next), "%u",
		 rep->nsessions ? rep->sessions[rep->nsessions - 1].id : after);
	len = rpmem_status_reply_encode(buf, RPMEM_MAX_PAYLOAD, rep);
	rep->nnamespaces = nns;
	rep->nlinks = nl;
	return len;
}

/*
 * req_status -- STATUS: the daemon, its sessions and its PMem namespaces;
 * in pages (RPMEM_STATUS_PAGE) the namespaces come with the last one
 */
int req_status(struct rpmemd_session *s, const struct rpmem_hdr *hd)
{
	struct rpmemd_sessions *set = s->set;
	struct rpmem_msg_status_reply rep;
	struct rpmem_msg_status m;
	int ret, ok, admin, more = 0;
	uint32_t after = 0;

	if (rpmem_status_decode(s->req, hd->len, &m))
		return conn_bad_payload(s, hd);
	if ((m.flags & RPMEM_STATUS_PAGE) && cursor_id(m.cursor, &after))
		return conn_reply_err(s, hd->id, RPMEM_E_INVAL,
				      "invalid STATUS cursor '%s'", m.cursor);
	/* any rule lets an identity see the daemon; admin every session */
	if ((ret = rpmemd_authz_check(s, hd->id, RPMEMD_RIGHT_READ, NULL,
				      &ok)) || !ok)
		return ret;
	admin = rpmemd_may(s, RPMEMD_RIGHT_ADMIN, NULL);
	memset(&rep, 0, sizeof(rep));
	ret = rpmemd_sessions_info(set, &rep, admin ? NULL : s->identity);
	/* the extended entries, and pages, only for a client that asked */
	rep.flags = m.flags & RPMEM_STATUS_FLAGS;
	if (!ret && (rep.flags & RPMEM_STATUS_PAGE))
		more = status_page(&rep, after);
	uint8_t *buf = conn_out_buf(s);
	if (ret || !buf || (!more && status_namespaces(set, &rep))) {
		rpmem_status_reply_free(&rep);
		return conn_reply_err(s, hd->id, RPMEM_E_LIMIT, "out of memory");
	}
	int len = status_encode(buf, &rep, after);
	rpmem_status_reply_free(&rep);
	if (len < 0)
		return conn_reply_err(s, hd->id, RPMEM_E_INTERNAL,
				      "cannot encode STATUS_REPLY");
	ret = rpmem_send_frame(&s->conn, RPMEM_MSG_STATUS_REPLY, hd->id, buf,
			       (size_t)len, NULL, 0);
	return ret;
}
