/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * registry.c -- the daemon's sessions: limits, shutdown, reaping, the
 * facts STATUS reports
 */
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "access.h"
#include "events.h"
#include "log.h"
#include "region.h"
#include "session_int.h"
#include "store.h"
#include "util.h"

struct rpmemd_session *rpmemd_session_alloc(void)
{
	void *p = mmap(NULL, sizeof(struct rpmemd_session),
		       PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
		       0);
	return p == MAP_FAILED ? NULL : p;
}

void rpmemd_session_free(struct rpmemd_session *s)
{
	if (s)
		munmap(s, sizeof(*s));
}

int rpmemd_sessions_new(struct rpmemd_regions *regions, unsigned max_sessions,
			const char *server, struct rpmemd_sessions **out)
{
	struct rpmemd_sessions *set = calloc(1, sizeof(*set));
	int ret;
	if (!set)
		return -ENOMEM;
	set->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (set->wake_fd < 0) {
		ret = -errno;
		goto err_free;
	}
	if ((ret = -pthread_mutex_init(&set->lock, NULL)))
		goto err_close;
	if ((ret = -pthread_mutex_init(&set->hash_lock, NULL)))
		goto err_lock;
	if ((ret = -pthread_cond_init(&set->hash_cond, NULL)))
		goto err_hash_lock;
	if ((ret = rpmemd_pacer_init(&set->pacer)))
		goto err_hash_cond;
	if ((ret = rpmemd_events_new(&set->events)))
		goto err_pacer;
	/* a hashing request runs on two threads (reply_hashes) */
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	set->hash_max = ncpu > 2 ? (unsigned)(ncpu / 2) : 1;
	if (set->hash_max > RPMEMD_HASH_SLOTS_MAX)
		set->hash_max = RPMEMD_HASH_SLOTS_MAX;
	set->regions = regions;
	set->max_sessions = max_sessions;
	set->next_id = 1;
	set->started_ns = rpmem_now_ns();
	/* RPMEM_CAP_RDMA: set by the server with set->rdma */
	set->caps = RPMEM_CAP_HASHV | RPMEM_CAP_STATE | RPMEM_CAP_KICK |
		    RPMEM_CAP_IDENTITY | RPMEM_CAP_PAGE | RPMEM_CAP_HASH_CACHE |
		    RPMEM_CAP_EVENTS | RPMEM_CAP_HASH_TREE | RPMEM_CAP_UNDO |
		    RPMEM_CAP_SCRUB | RPMEM_CAP_BARRIER | RPMEM_CAP_VERSIONS |
		    RPMEM_CAP_GENERATIONS | RPMEM_CAP_SYNC_SIZE |
		    RPMEM_CAP_DAMAGE | RPMEM_CAP_NOTE |
		    RPMEM_CAP_REPAIR | RPMEM_CAP_REPAIR_AT |
		    RPMEM_CAP_SPLIT | RPMEM_CAP_SPLIT_LIST;
	rpmem_strlcpy(set->server, server, sizeof(set->server));
	set->limits = (struct rpmemd_limits){ .handshake_timeout = 10,
					      .frame_timeout = 60,
					      .session_idle_timeout = 600,
					      .reader_idle_timeout = 600,
					      .admin_reserved = 2,
					      .max_unauth = 64,
					      .max_unauth_per_addr = 8,
					      .event_queue =
						      RPMEMD_EVENT_QUEUE_DEFAULT,
					      .rdma_staging_max =
						      RPMEMD_STAGING_AUTO };
	*out = set;
	return 0;

err_pacer:
	rpmemd_pacer_fini(&set->pacer);
err_hash_cond:
	pthread_cond_destroy(&set->hash_cond);
err_hash_lock:
	pthread_mutex_destroy(&set->hash_lock);
err_lock:
	pthread_mutex_destroy(&set->lock);
err_close:
	close(set->wake_fd);
err_free:
	free(set);
	return ret;
}

void rpmemd_sessions_delete(struct rpmemd_sessions **pset)
{
	struct rpmemd_sessions *set = pset ? *pset : NULL;
	if (!set)
		return;
	rpmemd_events_delete(&set->events);
	rpmemd_pacer_fini(&set->pacer);
	pthread_cond_destroy(&set->hash_cond);
	pthread_mutex_destroy(&set->hash_lock);
	pthread_mutex_destroy(&set->lock);
	rpmemd_access_delete(&set->access);
	close(set->wake_fd);
	free(set);
	*pset = NULL;
}

void rpmemd_sessions_set_max(struct rpmemd_sessions *set, unsigned max)
{
	pthread_mutex_lock(&set->lock);
	set->max_sessions = max;
	pthread_mutex_unlock(&set->lock);
}

void rpmemd_sessions_set_limits(struct rpmemd_sessions *set,
				const struct rpmemd_limits *lim)
{
	pthread_mutex_lock(&set->lock);
	set->limits = *lim;
	pthread_mutex_unlock(&set->lock);
}

unsigned rpmemd_sessions_count(struct rpmemd_sessions *set)
{
	pthread_mutex_lock(&set->lock);
	unsigned n = set->count;
	pthread_mutex_unlock(&set->lock);
	return n;
}

/*
 * session_wake -- make o's thread notice a kick or a stop: over TLS
 * through its kick_fd (it then ends the TLS session cleanly itself: a
 * socket shut down under a TLS read ends it with an alert, as if tampered
 * with); over plaintext its next read ends
 */
static void session_wake(struct rpmemd_session *o)
{
	uint64_t one = 1;

	if (o->kick_fd >= 0 &&
	    write(o->kick_fd, &one, sizeof(one)) == sizeof(one))
		return;
	shutdown(o->conn.fd, SHUT_RD);
}

void rpmemd_sessions_shutdown(struct rpmemd_sessions *set, int how)
{
	pthread_mutex_lock(&set->lock);
	__atomic_store_n(&set->stopping, 1, __ATOMIC_RELAXED);
	for (struct rpmemd_session *s = set->head; s; s = s->next) {
		if (s->done)
			continue;
		if (how == SHUT_RD && s->established)
			session_wake(s);
		else
			shutdown(s->conn.fd, how);
	}
	pthread_mutex_unlock(&set->lock);
}

unsigned rpmemd_sessions_reap(struct rpmemd_sessions *set)
{
	uint64_t v;
	struct rpmemd_session *dead = NULL;
	if (read(set->wake_fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		WARN("session wake-up: read: %s", strerror(errno));
	pthread_mutex_lock(&set->lock);
	for (struct rpmemd_session **pp = &set->head; *pp;) {
		struct rpmemd_session *s = *pp;
		if (!s->done) {
			pp = &s->next;
			continue;
		}
		*pp = s->next;
		s->next = dead;
		dead = s;
		set->count--;
	}
	unsigned left = set->count;
	pthread_mutex_unlock(&set->lock);
	unsigned reaped = 0;
	while (dead) {
		struct rpmemd_session *s = dead;
		dead = s->next;
		pthread_join(s->thread, NULL);
		rpmem_conn_close(&s->conn);
		if (s->kick_fd >= 0)
			close(s->kick_fd);
		free(s->out);
		rpmemd_session_free(s);
		reaped++;
	}
	/*
	 * what the sessions freed is scattered over the allocator's arenas:
	 * give the free pages back when the last one left, or once many did
	 */
	set->reaped += reaped;
	if (set->reaped && (!left || set->reaped >= RPMEMD_TRIM_REAPED)) {
		malloc_trim(0);
		set->reaped = 0;
	}
	return left;
}

/*
 * rpmemd_sessions_apm_cap -- RPMEM_CAP_APM if a region declares
 * direct_pmem (regions change with a reload, so this is asked each time)
 */
uint32_t rpmemd_sessions_apm_cap(struct rpmemd_sessions *set)
{
	struct rpmemd_regions *rs = set->regions;
	uint32_t caps = 0;

	pthread_mutex_lock(&rs->lock);
	for (unsigned i = 0; i < rs->n && !caps; i++)
		if (rs->v[i]->cfg.direct_pmem)
			caps = RPMEM_CAP_APM;
	pthread_mutex_unlock(&rs->lock);
	return caps;
}

/* info_cmp -- order session infos by id */
static int info_cmp(const void *a, const void *b)
{
	const struct rpmem_session_info *x = a, *y = b;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* unauth_from -- connections awaiting their handshake from addr */
static unsigned unauth_from(struct rpmemd_sessions *set, const char *addr)
{
	unsigned n = 0;
	for (struct rpmemd_session *o = set->head; o; o = o->next)
		if (o->unauth && !strcmp(o->addr, addr))
			n++;
	return n;
}

/*
 * evict -- make room among the connections awaiting their handshake for
 * one from an address that holds `mine` of them: the oldest connection of
 * the address that holds the most is closed by its own thread (a read on
 * it fails now) and no longer counted, if that address holds more than
 * `mine`; else -EUSERS (the newcomer is refused: admitting it would not
 * share the room more fairly). An honest client completes its handshake
 * in a few round trips, from an address that holds few: a flood from a
 * few addresses is refused, or evicts its own. Under set->lock.
 */
static int evict(struct rpmemd_sessions *set, unsigned mine)
{
	struct rpmemd_session *v = NULL;
	unsigned vn = 0;

	for (struct rpmemd_session *o = set->head; o; o = o->next) {
		if (!o->unauth)
			continue;
		unsigned n = unauth_from(set, o->addr);
		if (!v || n > vn || (n == vn && o->accepted_ns < v->accepted_ns)) {
			v = o;
			vn = n;
		}
	}
	if (!v || vn <= mine)
		return -EUSERS;
	v->unauth = 0;
	v->evicted = 1;
	set->unauth--;
	shutdown(v->conn.fd, SHUT_RD);
	return 0;
}

/*
 * silent -- o has received nothing: its thread has not heard from the
 * peer, and no byte waits in its socket (an honest client sends its
 * first flight at once, before its thread may have looked)
 */
static int silent(struct rpmemd_session *o)
{
	char c;

	if (__atomic_load_n(&o->heard, __ATOMIC_ACQUIRE))
		return 0;
	ssize_t n = recv(o->conn.fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
	return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
}

/*
 * displace -- make room for a newcomer from addr, which holds
 * max_unauthenticated_per_address connections awaiting their handshake:
 * its oldest one that has been silent for RPMEMD_SILENT_GRACE_MS is
 * closed by its own thread; -EUSERS if none has. (A younger one may be
 * an honest client between its connect and its first flight: the
 * newcomers that an attacker's reopened connections are must not close
 * it.) Under set->lock.
 */
static int displace(struct rpmemd_sessions *set, const char *addr)
{
	uint64_t before = rpmem_now_ns() - RPMEMD_SILENT_GRACE_MS * 1000000ull;
	struct rpmemd_session *v = NULL;

	for (struct rpmemd_session *o = set->head; o; o = o->next)
		if (o->unauth && !strcmp(o->addr, addr) &&
		    o->accepted_ns <= before &&
		    (!v || o->accepted_ns < v->accepted_ns) && silent(o))
			v = o;
	if (!v)
		return -EUSERS;
	v->unauth = 0;
	v->evicted = 2;
	set->unauth--;
	shutdown(v->conn.fd, SHUT_RD);
	return 0;
}

int rpmemd_sessions_reserve(struct rpmemd_sessions *set, const char *addr,
			    uint32_t *id, struct rpmemd_limits *lim,
			    char *why, size_t wlen)
{
	int ret = 0;

	pthread_mutex_lock(&set->lock);
	*lim = set->limits;
	unsigned mine = unauth_from(set, addr);
	if (mine >= lim->max_unauth_per_addr && !displace(set, addr))
		mine--;
	if (mine >= lim->max_unauth_per_addr) {
		snprintf(why, wlen,
			 "too many unauthenticated connections from your address %s: %u awaiting their handshake (max_unauthenticated_per_address = %u); retry later",
			 addr, mine, lim->max_unauth_per_addr);
		ret = -EUSERS;
	} else if (set->count >= set->max_sessions + lim->max_unauth +
					 RPMEMD_THREAD_SLACK) {
		snprintf(why, wlen,
			 "too many connections (max_sessions = %u, max_unauthenticated = %u); retry later",
			 set->max_sessions, lim->max_unauth);
		ret = -EUSERS;
	} else if (set->unauth >= lim->max_unauth && evict(set, mine)) {
		snprintf(why, wlen,
			 "too many connections awaiting their handshake (max_unauthenticated = %u); retry later",
			 lim->max_unauth);
		ret = -EUSERS;
	}
	*id = set->next_id++;
	if (set->next_id == 0)
		set->next_id = 1;
	pthread_mutex_unlock(&set->lock);
	return ret;
}

int rpmemd_sessions_add(struct rpmemd_sessions *set, struct rpmemd_session *s,
			void *(*fn)(void *))
{
	pthread_attr_t attr;
	int ret = -pthread_attr_init(&attr);
	if (ret)
		return ret;
	/* RPMEMD_STACK_SIZE, or the default if refused */
	pthread_attr_setstacksize(&attr, RPMEMD_STACK_SIZE);
	/* under the lock: the thread cannot leave before it is listed */
	pthread_mutex_lock(&set->lock);
	ret = -pthread_create(&s->thread, &attr, fn, s);
	if (!ret) {
		s->next = set->head;
		set->head = s;
		set->count++;
		s->unauth = 1;
		set->unauth++;
	}
	pthread_mutex_unlock(&set->lock);
	pthread_attr_destroy(&attr);
	return ret;
}

/* identity_sessions -- established sessions of identity (set->lock) */
static unsigned identity_sessions(struct rpmemd_sessions *set,
				  const char *identity)
{
	unsigned n = 0;
	for (struct rpmemd_session *o = set->head; o; o = o->next)
		if (o->established && !o->done &&
		    !strcmp(o->identity, identity))
			n++;
	return n;
}

/*
 * admit_identity -- the bounds that depend on who s proved to be (TLS
 * only; a plaintext client may do everything): an identity without any
 * access rule gets no session, the last admin_reserved slots of
 * max_sessions are an admin's, one identity holds at most
 * max_per_identity (0: half of max_sessions). Under set->lock; 0,
 * -EACCES or -EUSERS, with the limit in *why.
 */
static int admit_identity(struct rpmemd_sessions *set,
			  struct rpmemd_session *s, struct rpmemd_refusal *why)
{
	const struct rpmemd_limits *lim = &s->lim;
	unsigned max = set->max_sessions;
	unsigned reserve = lim->admin_reserved < max ? lim->admin_reserved :
						       max - 1;
	unsigned per_id = lim->max_per_identity ? lim->max_per_identity :
						  (max + 1) / 2;

	if (!set->tls)
		return 0;
	if (!rpmemd_access_allows(set->access, s->identity, RPMEMD_RIGHT_READ,
				  NULL)) {
		why->limit = "access";
		return -EACCES;
	}
	if (rpmemd_access_allows(set->access, s->identity, RPMEMD_RIGHT_ADMIN,
				 NULL))
		return 0; /* the reserve is theirs, no share applies */
	if (set->established >= max - reserve) {
		why->limit = "admin_reserved_sessions";
		why->value = reserve;
		return -EUSERS;
	}
	if (identity_sessions(set, s->identity) >= per_id) {
		why->limit = "max_sessions_per_identity";
		why->value = per_id;
		return -EUSERS;
	}
	return 0;
}

int rpmemd_sessions_admit(struct rpmemd_sessions *set, struct rpmemd_session *s,
			  const char *client, struct rpmemd_refusal *why)
{
	int ret = 0;

	pthread_mutex_lock(&set->lock);
	*why = (struct rpmemd_refusal){ .limit = "max_sessions",
					.value = set->max_sessions,
					.max_sessions = set->max_sessions };
	if (set->stopping) {
		ret = -ESHUTDOWN;
	} else if (s->evicted || s->expired) {
		ret = -ECONNRESET;
	} else if (set->established >= set->max_sessions) {
		ret = -EUSERS;
	} else if (!(ret = admit_identity(set, s, why))) {
		set->established++;
		s->established = 1;
		s->unauth = 0;
		set->unauth--;
		rpmem_strlcpy(s->client, client, sizeof(s->client));
	}
	pthread_mutex_unlock(&set->lock);
	return ret;
}

void rpmemd_sessions_leave(struct rpmemd_sessions *set,
			   struct rpmemd_session *s)
{
	uint64_t one = 1;

	pthread_mutex_lock(&set->lock);
	if (s->established)
		set->established--;
	if (s->unauth)
		set->unauth--;
	s->unauth = 0;
	s->cur_pool[0] = '\0';
	s->done = 1;
	pthread_mutex_unlock(&set->lock);
	if (write(set->wake_fd, &one, sizeof(one)) < 0)
		WARN("session %u: wake-up: %s", s->id, strerror(errno));
}

int rpmemd_sessions_kick(struct rpmemd_sessions *set,
			 struct rpmemd_session *self, uint32_t id,
			 const char *by, char *victim, size_t vlen)
{
	int ret = -ENOENT;

	if (id == self->id)
		return -EINVAL;
	pthread_mutex_lock(&set->lock);
	for (struct rpmemd_session *o = set->head; o; o = o->next) {
		if (o->id != id || !o->established || o->done)
			continue;
		if (!o->kicked_by[0]) {
			rpmem_strlcpy(o->kicked_by, by, sizeof(o->kicked_by));
			session_wake(o);
		}
		snprintf(victim, vlen, "session %u from %s (%s)", o->id,
			 o->peer, o->client[0] ? o->client : "unnamed client");
		ret = 0;
		break;
	}
	pthread_mutex_unlock(&set->lock);
	return ret;
}

/* holds -- o has pool region/pool open: 0 no, 1 read-only, 2 for writing */
static int holds(const struct rpmemd_session *o, const char *region,
		 const char *pool)
{
	int how = 0;

	for (unsigned i = 0; i < RPMEMD_MAX_HANDLES; i++) {
		const struct rpmemd_handle *h = &o->h[i];
		if (!h->id || strcmp(rpmemd_pool_name(h->pool), pool) ||
		    strcmp(rpmemd_pool_region(h->pool)->cfg.name, region))
			continue;
		if (h->mode == RPMEM_OPEN_RW)
			return 2;
		how = 1;
	}
	return how;
}

int rpmemd_sessions_kick_readers(struct rpmemd_sessions *set,
				 struct rpmemd_session *self,
				 const char *region, const char *pool,
				 const char *by)
{
	int n = 0;

	pthread_mutex_lock(&set->lock);
	for (struct rpmemd_session *o = set->head; o && n >= 0; o = o->next) {
		int how = o->established && !o->done ? holds(o, region, pool) : 0;
		if (how == 2 || (how && o == self))
			n = -EBUSY;
		else if (how)
			n++;
	}
	for (struct rpmemd_session *o = set->head; o && n > 0; o = o->next) {
		if (!o->established || o->done || !holds(o, region, pool))
			continue;
		if (!o->kicked_by[0]) {
			rpmem_strlcpy(o->kicked_by, by, sizeof(o->kicked_by));
			session_wake(o);
		}
		NOTICE("%s: session %u from %s (%s), a reader of pool %s/%s, ended",
		       by, o->id, o->peer,
		       o->client[0] ? o->client : "unnamed client", region,
		       pool);
	}
	pthread_mutex_unlock(&set->lock);
	return n;
}

unsigned rpmemd_sessions_expire(struct rpmemd_sessions *set, uint64_t now_ns)
{
	unsigned n;

	pthread_mutex_lock(&set->lock);
	for (struct rpmemd_session *s = set->head; s; s = s->next) {
		uint64_t end = s->accepted_ns +
			       s->lim.handshake_timeout * 1000000000ull +
			       RPMEMD_HS_GRACE_MS * 1000000ull;
		if (!s->unauth || s->expired || now_ns < end)
			continue;
		s->expired = 1;
		shutdown(s->conn.fd, SHUT_RD);
	}
	n = set->unauth;
	pthread_mutex_unlock(&set->lock);
	return n;
}

int rpmemd_sessions_fate(struct rpmemd_sessions *set, struct rpmemd_session *s,
			 char *by, size_t len)
{
	int fate = 0;

	pthread_mutex_lock(&set->lock);
	if (s->kicked_by[0]) {
		fate = SESSION_KICKED;
		rpmem_strlcpy(by, s->kicked_by, len);
	} else if (s->evicted) {
		fate = s->evicted == 2 ? SESSION_DISPLACED : SESSION_EVICTED;
	} else if (s->expired) {
		fate = SESSION_EXPIRED;
	}
	pthread_mutex_unlock(&set->lock);
	return fate;
}

/* the requests of one identity (or address) hashing or awaiting a turn */
struct rpmemd_hash_share {
	struct rpmemd_hash_share *next;
	char key[RPMEM_IDENTITY_MAX + 1];
	unsigned n;    /* hashing or holding a turn */
	unsigned refs; /* those and the ones waiting for their share */
};

/* hash_share -- the share of s's identity, made if need be; hash_lock */
static struct rpmemd_hash_share *hash_share(struct rpmemd_sessions *set,
					    const struct rpmemd_session *s)
{
	const char *key = s->identity[0] ? s->identity : s->addr;
	struct rpmemd_hash_share *e;

	for (e = set->shares; e; e = e->next)
		if (!strcmp(e->key, key))
			return e;
	if ((e = calloc(1, sizeof(*e)))) { /* none: no share is kept */
		rpmem_strlcpy(e->key, key, sizeof(e->key));
		e->next = set->shares;
		set->shares = e;
	}
	return e;
}

unsigned rpmemd_hash_share_of(const struct rpmemd_sessions *set)
{
	return (set->hash_max + 1) / 2;
}

void rpmemd_hash_enter(struct rpmemd_session *s)
{
	struct rpmemd_sessions *set = s->set;
	unsigned share = rpmemd_hash_share_of(set);

	pthread_mutex_lock(&set->hash_lock);
	if ((s->share = hash_share(set, s)))
		s->share->refs++;
	/* past its share, only a slot free with nobody waiting for it */
	while (s->share && s->share->n >= share &&
	       (set->hash_next != set->hash_turn ||
		set->hash_busy >= set->hash_max))
		pthread_cond_wait(&set->hash_cond, &set->hash_lock);
	if (s->share)
		s->share->n++;
	uint64_t turn = set->hash_next++;
	/* the turns given out before this one: served before it */
	if (turn - set->hash_turn > s->hash_ahead_max)
		s->hash_ahead_max = turn - set->hash_turn;
	s->hashed++;
	while (turn != set->hash_turn || set->hash_busy >= set->hash_max)
		pthread_cond_wait(&set->hash_cond, &set->hash_lock);
	set->hash_turn++;
	set->hash_busy++;
	pthread_cond_broadcast(&set->hash_cond); /* the next turn's */
	pthread_mutex_unlock(&set->hash_lock);
}

void rpmemd_hash_leave(struct rpmemd_session *s)
{
	struct rpmemd_sessions *set = s->set;

	pthread_mutex_lock(&set->hash_lock);
	set->hash_busy--;
	if (s->share && (s->share->n--, !--s->share->refs)) {
		for (struct rpmemd_hash_share **q = &set->shares; *q;
		     q = &(*q)->next) {
			if (*q == s->share) {
				*q = s->share->next;
				free(s->share);
				break;
			}
		}
	}
	s->share = NULL;
	pthread_cond_broadcast(&set->hash_cond);
	pthread_mutex_unlock(&set->hash_lock);
}

/* auth_kind -- a session's auth_method as STATUS_REPLY carries it */
static uint8_t auth_kind(const char *method)
{
	if (method && !strcmp(method, "psk"))
		return RPMEM_AUTH_PSK;
	if (method && !strcmp(method, "x509"))
		return RPMEM_AUTH_X509;
	return RPMEM_AUTH_NONE;
}

int rpmemd_sessions_info(struct rpmemd_sessions *set,
			 struct rpmem_msg_status_reply *rep,
			 const char *identity)
{
	uint32_t apm = rpmemd_sessions_apm_cap(set);

	pthread_mutex_lock(&set->lock);
	rpmem_strlcpy(rep->server, set->server, sizeof(rep->server));
	rep->pid = (uint64_t)getpid();
	rep->uptime = (rpmem_now_ns() - set->started_ns) / 1000000000ull;
	rep->caps = set->caps | apm;
	rep->max_sessions = set->max_sessions;
	rep->sessions = calloc(set->count ? set->count : 1,
			       sizeof(*rep->sessions));
	for (struct rpmemd_session *o = set->head; o && rep->sessions;
	     o = o->next) {
		if (!o->established || o->done ||
		    (identity && strcmp(o->identity, identity)))
			continue;
		struct rpmem_session_info *si =
			&rep->sessions[rep->nsessions++];
		si->id = o->id;
		rpmem_strlcpy(si->identity, o->identity, sizeof(si->identity));
		si->auth = auth_kind(o->auth_method);
		rpmem_strlcpy(si->peer, o->peer, sizeof(si->peer));
		rpmem_strlcpy(si->client, o->client, sizeof(si->client));
		si->xport = o->cur_xport;
		rpmem_strlcpy(si->pool, o->cur_pool, sizeof(si->pool));
		si->mode = o->cur_mode;
		si->started = o->started;
		si->bytes_written =
			__atomic_load_n(&o->bytes_written, __ATOMIC_RELAXED);
		si->bytes_read =
			__atomic_load_n(&o->bytes_read, __ATOMIC_RELAXED);
		si->flushes = __atomic_load_n(&o->flushes, __ATOMIC_RELAXED);
		si->last_flush_ns =
			__atomic_load_n(&o->last_flush_ns, __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&set->lock);
	if (!rep->sessions)
		return -ENOMEM;
	if (rep->nsessions > 1)
		qsort(rep->sessions, rep->nsessions, sizeof(*rep->sessions),
		      info_cmp);
	return 0;
}
