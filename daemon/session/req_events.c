/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * req_events.c -- the EVENTS request: subscribe, then the subscriber's
 * session thread sends the current state and every event queued for it
 * (the queues themselves are events.c)
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "access.h"
#include "events.h"
#include "log.h"
#include "session_int.h"
#include "store.h"
#include "util.h"

/* send_event -- one EVENT frame */
static int send_event(struct rpmemd_session *s, uint32_t id,
		      const struct rpmem_msg_event *e)
{
	uint8_t buf[RPMEMD_EVENT_FRAME_MAX];
	int len = rpmem_event_encode(buf, sizeof(buf), e);

	if (len < 0)
		return len;
	return rpmem_send_frame(&s->conn, RPMEM_MSG_EVENT, id, buf,
				(size_t)len, NULL, 0);
}

/* may_read -- the subscriber may read region (plaintext: everyone) */
static int may_read(struct rpmemd_session *s, const char *region)
{
	return rpmemd_may(s, RPMEMD_RIGHT_READ, region);
}

/* send_now_pools -- an "exists pool" event per pool s may read */
static int send_now_pools(struct rpmemd_session *s, uint32_t id)
{
	struct rpmemd_region **v = NULL;
	struct rpmem_pool_info *pv = NULL;
	uint32_t np = 0;
	unsigned n = 0;
	int ret;

	if ((ret = rpmemd_regions_get_all(s->set->regions, &v, &n)))
		return ret;
	for (unsigned i = 0; i < n; i++)
		if (may_read(s, v[i]->cfg.name) &&
		    rpmemd_pool_list(v[i], &pv, &np))
			WARN("session %u: events: cannot list region '%s'",
			     s->id, v[i]->cfg.name);
	rpmemd_regions_put_all(&v, n);
	uint64_t t = rpmemd_events_now_ms();
	for (uint32_t i = 0; i < np && !ret; i++) {
		struct rpmem_msg_event e = { .verb = RPMEM_EV_EXISTS,
					     .object = RPMEM_EVO_POOL,
					     .time_ms = t,
					     .state = pv[i].state,
					     .generation = pv[i].generation,
					     .size = pv[i].size,
					     .bytes = pv[i].bytes_written };
		rpmem_strlcpy(e.region, pv[i].region, sizeof(e.region));
		rpmem_strlcpy(e.pool, pv[i].name, sizeof(e.pool));
		rpmem_strlcpy(e.client, pv[i].writer, sizeof(e.client));
		ret = send_event(s, id, &e);
	}
	free(pv);
	return ret;
}

/* send_now_sessions -- an "exists session" event per session s may see */
static int send_now_sessions(struct rpmemd_session *s, uint32_t id)
{
	struct rpmem_msg_status_reply rep = { 0 };
	int admin = rpmemd_may(s, RPMEMD_RIGHT_ADMIN, NULL);
	int ret = rpmemd_sessions_info(s->set, &rep,
				       admin ? NULL : s->identity);
	uint64_t t = rpmemd_events_now_ms();

	for (uint32_t i = 0; i < rep.nsessions && !ret; i++) {
		const struct rpmem_session_info *si = &rep.sessions[i];
		struct rpmem_msg_event e = { .verb = RPMEM_EV_EXISTS,
					     .object = RPMEM_EVO_SESSION,
					     .time_ms = t,
					     .session = si->id,
					     .bytes = si->bytes_written };
		rpmem_strlcpy(e.peer, si->peer, sizeof(e.peer));
		rpmem_strlcpy(e.client, si->client, sizeof(e.client));
		rpmem_strlcpy(e.identity, si->identity, sizeof(e.identity));
		ret = send_event(s, id, &e);
	}
	rpmem_status_reply_free(&rep);
	return ret;
}

/* send_item -- one queued event, or the overflow event in its place */
static int send_item(struct rpmemd_session *s, uint32_t id, struct rpmemd_ev_item *it)
{
	if (it->p) {
		int ret = rpmem_send_frame(&s->conn, RPMEM_MSG_EVENT, id, it->p,
					   it->len, NULL, 0);
		free(it->p);
		return ret;
	}
	struct rpmem_msg_event e = { .verb = RPMEM_EV_OVERFLOW,
				     .object = RPMEM_EVO_NONE,
				     .time_ms = rpmemd_events_now_ms(),
				     .lost = it->lost };
	snprintf(e.text, sizeof(e.text),
		 "%llu events lost: this subscriber did not keep up (event_queue = %u)",
		 (unsigned long long)it->lost, rpmemd_events_cap(s));
	return send_event(s, id, &e);
}

/*
 * one_request -- the client sent something to a subscribed session: BYE
 * ends it (1), anything else is answered ERROR{PROTO} (0); -errno
 */
static int one_request(struct rpmemd_session *s)
{
	struct rpmem_hdr hd;
	int ret = conn_recv_request(s, &hd);

	rpmem_conn_set_deadline(&s->conn, 0);
	s->in_frame = 0;
	if (ret == 1)
		return 0;
	if (ret)
		return ret;
	if (hd.type == RPMEM_MSG_BYE)
		return 1;
	if (hd.type == RPMEM_MSG_WRITE &&
	    (ret = rpmem_net_discard(&s->conn, hd.len)))
		return ret;
	return conn_reply_err(s, hd.id, RPMEM_E_PROTO,
			      "%s on an event subscription: this session only takes BYE now",
			      rpmem_msg_type_str(hd.type));
}

int rpmemd_events_serve(struct rpmemd_session *s, uint32_t id,
			uint32_t flags)
{
	int ret = 0, sz = RPMEMD_EVENT_SNDBUF;
	struct rpmemd_ev_item it;

	/* a stalled subscriber fills its queue, not megabytes of kernel */
	setsockopt(s->conn.fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
	INFO("session %u from %s: subscribed to events%s", s->id, s->peer,
	     (flags & RPMEM_EVENTS_NOW) ? " (with the current state)" : "");
	if (flags & RPMEM_EVENTS_NOW) {
		struct rpmem_msg_event end = { .verb = RPMEM_EV_EXISTS,
					       .object = RPMEM_EVO_NONE };
		if (!(ret = send_now_pools(s, id)) &&
		    !(ret = send_now_sessions(s, id))) {
			end.time_ms = rpmemd_events_now_ms();
			ret = send_event(s, id, &end);
		}
	}
	while (!ret) {
		if (rpmemd_events_take(s, &it)) {
			ret = send_item(s, id, &it);
			continue;
		}
		struct pollfd p[] = {
			{ .fd = s->conn.fd, .events = POLLIN },
			{ .fd = rpmemd_events_fd(s), .events = POLLIN },
			{ .fd = s->kick_fd, .events = POLLIN },
		};
		if (poll(p, 3, -1) < 0) {
			if (errno == EINTR)
				continue;
			ret = -errno;
			break;
		}
		if (p[2].revents) { /* kicked (TLS): the caller says so */
			ret = -ECONNABORTED;
			break;
		}
		if (p[1].revents) {
			uint64_t v;
			if (read(rpmemd_events_fd(s), &v, sizeof(v)) < 0 &&
			    errno != EAGAIN)
				WARN("session %u: events: %s", s->id,
				     strerror(errno));
		}
		if (p[0].revents) {
			ret = one_request(s);
			if (ret == 1) {
				ret = 0;
				break;
			}
		}
	}
	if (ret == -EAGAIN || ret == -EWOULDBLOCK)
		NOTICE("session %u from %s: event subscriber read nothing for %d s; closing the session",
		       s->id, s->peer, RPMEMD_SEND_TIMEOUT);
	rpmemd_events_unsubscribe(s);
	return ret;
}

/* req_events -- EVENTS: subscribe, OK, then serve the subscription */
int req_events(struct rpmemd_session *s, const struct rpmem_hdr *hd,
	       int *over)
{
	struct rpmem_msg_events m;
	int ret, ok;

	*over = 0;
	if (rpmem_events_decode(s->req, hd->len, &m))
		return conn_bad_payload(s, hd);
	/* like LIST: any rule; each event is filtered by what it is about */
	ret = rpmemd_authz_check(s, hd->id, RPMEMD_RIGHT_READ, NULL, &ok);
	if (ret || !ok)
		return ret;
	ret = rpmemd_events_subscribe(s, s->lim.event_queue);
	if (ret)
		return conn_reply_err(s, hd->id, RPMEM_E_LIMIT,
				      "cannot subscribe to events: %s",
				      strerror(-ret));
	*over = 1;
	rpmem_conn_set_deadline(&s->conn, 0);
	ret = conn_reply_ok(s, hd->id);
	if (ret) {
		rpmemd_events_unsubscribe(s);
		return ret;
	}
	return rpmemd_events_serve(s, hd->id, m.flags);
}
