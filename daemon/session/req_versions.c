/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * req_versions.c -- VERSIONS (list, prune) and READ_AT (a version's
 * image) of an open pool; the retention applied after a commit
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "access.h"
#include "events.h"
#include "history.h"
#include "log.h"
#include "scrub.h"
#include "session_int.h"
#include "sock.h"
#include "util.h"
#include "versions.h"

/* ROOM_PRUNED_MAX -- versions pruned for room reported by one SET_STATE */
#define ROOM_PRUNED_MAX 8

/* version_event -- a pool event: version gen kept or pruned (text) */
static void version_event(struct rpmemd_session *s, struct rpmemd_pool *p,
			  uint64_t gen, const char *text)
{
	struct rpmem_msg_event e = { .verb = RPMEM_EV_CHANGE,
				     .object = RPMEM_EVO_POOL,
				     .session = s->id,
				     .state = RPMEM_POOL_CONSISTENT,
				     .generation = gen,
				     .size = rpmemd_pool_size(p) };

	rpmem_strlcpy(e.region, rpmemd_pool_region(p)->cfg.name,
		      sizeof(e.region));
	rpmem_strlcpy(e.pool, rpmemd_pool_name(p), sizeof(e.pool));
	rpmem_strlcpy(e.identity, s->identity, sizeof(e.identity));
	rpmem_strlcpy(e.text, text, sizeof(e.text));
	rpmemd_event_publish(s->set, &e, s->identity);
}

/* the session and pool a retention reports to, the writer's note */
struct retain_arg {
	struct rpmemd_session *s;
	struct rpmemd_pool *p;
	char *note; /* NULL: none */
	size_t len;
};

/* note_add -- a line for the writer's note ("..." once it is full) */
static void note_add(char *note, size_t len, const char *line)
{
	size_t n = strlen(note);

	if (n + strlen(line) + 2 < len)
		snprintf(note + n, len - n, "%s%s", n ? "\n" : "", line);
	else if (n + 5 < len && (n < 3 || strcmp(note + n - 3, "...")))
		snprintf(note + n, len - n, "\n...");
}

/* pruned -- the event of a version the retention pruned; for space, a note */
static void pruned(void *arg, const struct rpmemd_version *v, const char *why)
{
	struct retain_arg *a = arg;
	char text[RPMEM_STR_MAX + 1];

	snprintf(text, sizeof(text), "version %llu of pool '%s' pruned (%s)",
		 (unsigned long long)v->gen, v->pool, why);
	version_event(a->s, a->p, v->gen, text);
	if (a->note && (!strcmp(why, "quota") || !strcmp(why, "room")))
		note_add(a->note, a->len, text);
}

void rpmemd_versions_room(struct rpmemd_session *s, struct rpmemd_pool *p,
			  char *note, size_t len)
{
	struct retain_arg a = { s, p, note, len };
	struct rpmemd_room_pruned r[ROOM_PRUNED_MAX];
	struct rpmemd_version v = { 0 };
	unsigned lost;
	size_t n = rpmemd_versions_take_room(p, r, ROOM_PRUNED_MAX, &lost);

	for (size_t i = 0; i < n; i++) {
		rpmem_strlcpy(v.pool, r[i].pool, sizeof(v.pool));
		v.gen = r[i].gen;
		pruned(&a, &v, "room");
	}
	if (lost) {
		char text[RPMEM_STR_MAX + 1];
		snprintf(text, sizeof(text),
			 "%u more versions pruned (room; see the daemon's log)",
			 lost);
		note_add(note, len, text);
	}
}

void rpmemd_versions_commit(struct rpmemd_session *s, struct rpmemd_pool *p,
			    uint64_t gen, char *note, size_t len)
{
	struct retain_arg a = { s, p, note, len };
	struct rpmemd_version *v = NULL;
	struct rpmemd_meta m;
	size_t n = 0;

	rpmemd_versions_retain(p, pruned, &a);
	rpmemd_pool_get_meta(p, &m);
	if (m.generation != gen ||
	    rpmemd_versions_list(rpmemd_pool_region(p), rpmemd_pool_name(p), &m,
				 &v, &n))
		return;
	for (size_t i = 0; i < n; i++)
		if (v[i].damaged) {
			char text[RPMEM_STR_MAX + 1];
			snprintf(text, sizeof(text),
				 "version %llu of pool '%s' is damaged (kept; see rpmemctl scrub)",
				 (unsigned long long)v[i].gen,
				 rpmemd_pool_name(p));
			version_event(s, p, v[i].gen, text);
		}
	if (!rpmemd_pool_region(p)->cfg.versions) {
		free(v);
		return;
	}
	if (n && v[n - 1].gen == gen - 1) {
		char text[RPMEM_STR_MAX + 1];
		snprintf(text, sizeof(text),
			 "version %llu of pool '%s' kept (%llu bytes)",
			 (unsigned long long)(gen - 1), rpmemd_pool_name(p),
			 (unsigned long long)v[n - 1].bytes);
		version_event(s, p, gen - 1, text);
	}
	free(v);
}

/*
 * versions_check -- LIST_CHECK: the records of each listed version that
 * is not damaged already are read and checked, in a hashing slot; one
 * that does not check flags its version RPMEM_VERSION_BAD_DATA, marked
 * (rpmemd_version_mark: the plain listing flags it too), logged and
 * announced (a pool event); a marked one that checks is unmarked
 */
static void versions_check(struct rpmemd_session *s, struct rpmemd_pool *p,
			   const struct rpmemd_meta *m,
			   struct rpmem_version_entry *e, uint32_t n)
{
	char text[RPMEM_STR_MAX + 1];
	uint64_t bad = 0, len = 0;

	rpmemd_hash_enter(s);
	for (uint32_t i = 0; i < n; i++) {
		int ret = e[i].flags & RPMEM_VERSION_DAMAGED ?
				  -EBADMSG :
				  rpmemd_version_check(rpmemd_pool_region(p),
						       rpmemd_pool_name(p), m,
						       e[i].generation, &bad,
						       &len);
		if (!ret && (e[i].flags & RPMEM_VERSION_BAD_DATA)) {
			e[i].flags &= (uint8_t)~RPMEM_VERSION_BAD_DATA;
			rpmemd_version_mark(rpmemd_pool_region(p),
					    rpmemd_pool_name(p),
					    e[i].generation, 0);
		}
		if (ret != -EIO)
			continue;
		e[i].flags |= RPMEM_VERSION_BAD_DATA;
		rpmemd_version_mark(rpmemd_pool_region(p), rpmemd_pool_name(p),
				    e[i].generation, 1);
		WARN("session %u: pool %s/%s: version %llu is damaged: its record at 0x%llx length %llu does not check (kept; scrub --repair from another copy heals it)",
		     s->id, rpmemd_pool_region(p)->cfg.name,
		     rpmemd_pool_name(p), (unsigned long long)e[i].generation,
		     (unsigned long long)bad, (unsigned long long)len);
		snprintf(text, sizeof(text),
			 "version %llu of pool '%s' is damaged at 0x%llx length %llu (a record does not check)",
			 (unsigned long long)e[i].generation,
			 rpmemd_pool_name(p), (unsigned long long)bad,
			 (unsigned long long)len);
		version_event(s, p, e[i].generation, text);
	}
	rpmemd_hash_leave(s);
}

/* versions_list -- VERSIONS_REPLY of the pool's newest versions */
static int versions_list(struct rpmemd_session *s, const struct rpmem_hdr *hd,
			 struct rpmemd_pool *p, uint64_t flags)
{
	struct rpmem_version_entry *e = calloc(RPMEM_MAX_VERSIONS, sizeof(*e));
	struct rpmem_msg_versions_reply rep = {
		0, e, !!(flags & RPMEM_VERSIONS_LIST_FLAGS)
	};
	struct rpmemd_version *v = NULL;
	uint8_t *buf = conn_out_buf(s);
	struct rpmemd_meta m;
	size_t n = 0, first;
	int len, ret;

	rpmemd_pool_get_meta(p, &m);
	ret = e && buf ? rpmemd_versions_list(rpmemd_pool_region(p),
					      rpmemd_pool_name(p), &m, &v, &n) :
			 -ENOMEM;
	if (ret) {
		free(e);
		return conn_reply_err(s, hd->id, RPMEM_E_IO,
				      "cannot list the versions of pool '%s': %s",
				      rpmemd_pool_name(p), strerror(-ret));
	}
	first = n > RPMEM_MAX_VERSIONS ? n - RPMEM_MAX_VERSIONS : 0;
	for (size_t i = first; i < n; i++, rep.count++)
		e[rep.count] = (struct rpmem_version_entry){
			.generation = v[i].gen, .time = v[i].time,
			.committed = v[i].committed, .size = v[i].size,
			.bytes = v[i].bytes, .hash = v[i].hash,
			.flags = (v[i].damaged ? RPMEM_VERSION_DAMAGED : 0) |
				 (v[i].bad_data ? RPMEM_VERSION_BAD_DATA : 0)
		}, rpmem_strlcpy(e[rep.count].source, v[i].source,
				 sizeof(e[rep.count].source));
	free(v);
	if ((flags & RPMEM_VERSIONS_LIST_FLAGS) &&
	    (flags & RPMEM_VERSIONS_LIST_CHECK))
		versions_check(s, p, &m, e, rep.count);
	len = rpmem_versions_reply_encode(buf, RPMEM_MAX_PAYLOAD, &rep);
	free(e);
	if (len < 0)
		return conn_reply_err(s, hd->id, RPMEM_E_INTERNAL,
				      "cannot encode VERSIONS_REPLY");
	return rpmem_send_frame(&s->conn, RPMEM_MSG_VERSIONS_REPLY, hd->id,
				buf, (size_t)len, NULL, 0);
}

/* versions_prune -- prune one version; the write open's (write right) */
static int versions_prune(struct rpmemd_session *s,
			  const struct rpmem_hdr *hd, struct rpmemd_handle *h,
			  uint64_t gen)
{
	struct rpmemd_pool *p = h->pool;
	struct rpmemd_meta m;
	char err[RPMEM_STR_MAX + 1], text[RPMEM_STR_MAX + 1];
	int ret, ok;

	if (h->mode != RPMEM_OPEN_RW)
		return conn_reply_err(s, hd->id, RPMEM_E_RDONLY,
				      "pruning a version of pool '%s' needs it opened for writing (the write right)",
				      rpmemd_pool_name(p));
	/* an appender opens for writing too, and prunes nothing */
	ret = rpmemd_authz_check(s, hd->id, RPMEMD_RIGHT_WRITE,
				 rpmemd_pool_region(p)->cfg.name, &ok);
	if (ret || !ok)
		return ret;
	rpmemd_pool_get_meta(p, &m);
	ret = rpmemd_version_prune(rpmemd_pool_region(p), rpmemd_pool_name(p),
				   &m, gen, err, sizeof(err));
	if (ret)
		return conn_reply_err(s, hd->id,
				      ret == -ENOENT ? RPMEM_E_NOPOOL :
						       RPMEM_E_IO,
				      "%s", err);
	INFO("session %u: pool %s/%s: version %llu pruned on request", s->id,
	     rpmemd_pool_region(p)->cfg.name, rpmemd_pool_name(p),
	     (unsigned long long)gen);
	snprintf(text, sizeof(text),
		 "version %llu of pool '%s' pruned (request)",
		 (unsigned long long)gen, rpmemd_pool_name(p));
	version_event(s, p, gen, text);
	return conn_reply_ok(s, hd->id);
}

/* how long a cut waits for the live writer's next drain boundary */
#define CUT_WAIT_MS 1000u

/*
 * versions_create -- cut a version of a live pool: the write right on its
 * region (the live writer holds the pool's write open, so the request
 * comes on a read open); STATE with the generation the cut image has
 */
static int versions_create(struct rpmemd_session *s,
			   const struct rpmem_hdr *hd, struct rpmemd_handle *h)
{
	struct rpmemd_pool *p = h->pool;
	struct rpmem_msg_state st = { RPMEM_POOL_SYNCING, 0 };
	char err[RPMEM_STR_MAX + 1];
	uint8_t buf[16 + RPMEM_MSG_MAX];
	int ret, ok, len;

	/* a cut adds a version and loses nothing: append will do */
	ret = rpmemd_authz_check(s, hd->id, RPMEMD_RIGHT_APPEND,
				 rpmemd_pool_region(p)->cfg.name, &ok);
	if (ret || !ok)
		return ret;
	/* the writer asking itself: this request is its own boundary */
	ret = rpmemd_pool_cut(p, h->mode == RPMEM_OPEN_RW ? 0 : CUT_WAIT_MS,
			      &st.generation, err, sizeof(err));
	if (ret)
		return conn_reply_err(s, hd->id,
				      ret == -EXDEV ? RPMEM_E_XPORT :
				      ret == -EBUSY ? RPMEM_E_BUSY :
				      ret == -EINVAL || ret == -ENOTSUP ?
						      RPMEM_E_INVAL :
						      RPMEM_E_IO,
				      "%s", err);
	INFO("session %u: pool %s/%s: a version cut on request at generation %llu",
	     s->id, rpmemd_pool_region(p)->cfg.name, rpmemd_pool_name(p),
	     (unsigned long long)st.generation);
	rpmemd_versions_commit(s, p, st.generation, NULL, 0);
	len = rpmem_state_encode(buf, sizeof(buf), &st);
	if (len < 0)
		return conn_reply_err(s, hd->id, RPMEM_E_INTERNAL,
				      "cannot encode STATE");
	return rpmem_send_frame(&s->conn, RPMEM_MSG_STATE, hd->id, buf,
				(size_t)len, NULL, 0);
}

int req_versions(struct rpmemd_session *s, const struct rpmem_hdr *hd)
{
	struct rpmem_msg_versions m;
	struct rpmemd_handle *h;

	if (rpmem_versions_decode(s->req, hd->len, &m))
		return conn_bad_payload(s, hd);
	if (!(h = handle_get(s, m.handle)))
		return conn_reply_err(s, hd->id, RPMEM_E_INVAL,
				      "VERSIONS of unknown handle %u", m.handle);
	if (m.op == RPMEM_VERSIONS_PRUNE)
		return versions_prune(s, hd, h, m.version);
	if (m.op == RPMEM_VERSIONS_CREATE)
		return versions_create(s, hd, h);
	return versions_list(s, hd, h->pool, m.version);
}

/*
 * record_of -- the scrub record version's image is checked against: its
 * own, or (0) the pool's if it is the current image
 */
static uint64_t record_of(struct rpmemd_pool *p, uint64_t version)
{
	struct rpmemd_meta m;

	rpmemd_pool_get_meta(p, &m);
	return m.state == RPMEM_POOL_CONSISTENT && m.generation == version ?
		       0 :
		       version;
}

int req_read_at(struct rpmemd_session *s, const struct rpmem_hdr *hd)
{
	struct rpmem_msg_read_at m;
	struct rpmemd_handle *h;
	uint8_t *buf;
	uint64_t bad = 0;
	int ret = 0;

	if (rpmem_read_at_decode(s->req, hd->len, &m))
		return conn_bad_payload(s, hd);
	if (!(h = handle_get(s, m.handle)))
		return conn_reply_err(s, hd->id, RPMEM_E_INVAL,
				      "READ_AT from unknown handle %u", m.handle);
	if (!rpmem_range_ok(m.offset, m.len, rpmemd_pool_size(h->pool)))
		return conn_reply_err(s, hd->id, RPMEM_E_INVAL,
				      "READ_AT of %u bytes at offset %llu is outside pool '%s' (%llu bytes)",
				      m.len, (unsigned long long)m.offset,
				      rpmemd_pool_name(h->pool),
				      (unsigned long long)rpmemd_pool_size(
					      h->pool));
	if (!(buf = malloc(m.len ? m.len : 1)))
		return conn_reply_err(s, hd->id, RPMEM_E_LIMIT, "out of memory");
	/* opening a chain and checking its records cost as hashing does */
	rpmemd_hash_enter(s);
	if (read_at_chain(s, hd, h, m.version, &ret)) {
		rpmemd_hash_leave(s);
		free(buf);
		return ret;
	}
	ret = rpmemd_vchain_read(h->pool, h->vc, m.offset, m.len, buf, &bad);
	rpmemd_hash_leave(s);
	if (!ret) {
		uint64_t loads, checked;
		rpmemd_vchain_cost(h->vc, &loads, &checked);
		DBG("session %u: pool '%s': READ_AT of %u bytes of version %llu: %llu bytes of its records checked (the daemon's chains loaded %llu journals so far)",
		    s->id, rpmemd_pool_name(h->pool), m.len,
		    (unsigned long long)m.version, (unsigned long long)checked,
		    (unsigned long long)loads);
	}
	if (ret) {
		free(buf);
		rpmemd_vchain_close(&h->vc);
		if (ret == -EAGAIN)
			return conn_reply_err(s, hd->id, RPMEM_E_BUSY,
					      "pool '%s' changed while version %llu was read (a sync ran): read it again",
					      rpmemd_pool_name(h->pool),
					      (unsigned long long)m.version);
		WARN("session %u: pool '%s': version %llu cannot be read at offset %llu: %s",
		     s->id, rpmemd_pool_name(h->pool),
		     (unsigned long long)m.version, (unsigned long long)bad,
		     strerror(-ret));
		return conn_reply_err(s, hd->id, RPMEM_E_IO,
				      "version %llu of pool '%s' is damaged: its block at offset %llu does not check (%s)",
				      (unsigned long long)m.version,
				      rpmemd_pool_name(h->pool),
				      (unsigned long long)bad, strerror(-ret));
	}
	/*
	 * data the version's scrub record calls damaged only when asked
	 * for; the current image's is the pool's record
	 */
	if (!(m.flags & RPMEM_READ_DAMAGED) &&
	    rpmemd_read_check(s, hd, h->pool, record_of(h->pool, m.version),
			      buf, m.offset, m.len, &ret)) {
		free(buf);
		return ret;
	}
	__atomic_add_fetch(&s->bytes_read, m.len, __ATOMIC_RELAXED);
	ret = rpmem_send_frame(&s->conn, RPMEM_MSG_DATA, hd->id, NULL, 0, buf,
			       m.len);
	free(buf);
	return ret;
}
