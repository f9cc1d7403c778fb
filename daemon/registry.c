/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * registry.c -- the daemon's sessions: limits, shutdown, reaping, the
 * facts STATUS reports
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "access.h"
#include "log.h"
#include "session_int.h"
#include "util.h"

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
	set->regions = regions;
	set->max_sessions = max_sessions;
	set->next_id = 1;
	set->started_ns = rpmem_now_ns();
	/* RPMEM_CAP_RDMA: set by the server with set->rdma */
	set->caps = RPMEM_CAP_HASHV | RPMEM_CAP_STATE | RPMEM_CAP_IDENTITY;
	rpmem_strlcpy(set->server, server, sizeof(set->server));
	*out = set;
	return 0;

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

unsigned rpmemd_sessions_count(struct rpmemd_sessions *set)
{
	pthread_mutex_lock(&set->lock);
	unsigned n = set->count;
	pthread_mutex_unlock(&set->lock);
	return n;
}

void rpmemd_sessions_shutdown(struct rpmemd_sessions *set, int how)
{
	pthread_mutex_lock(&set->lock);
	__atomic_store_n(&set->stopping, 1, __ATOMIC_RELAXED);
	for (struct rpmemd_session *s = set->head; s; s = s->next)
		if (!s->done)
			shutdown(s->conn.fd, how);
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
	while (dead) {
		struct rpmemd_session *s = dead;
		dead = s->next;
		pthread_join(s->thread, NULL);
		rpmem_conn_close(&s->conn);
		free(s->out);
		free(s);
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

int rpmemd_sessions_reserve(struct rpmemd_sessions *set, uint32_t *id)
{
	pthread_mutex_lock(&set->lock);
	int over = set->count >= set->max_sessions + RPMEMD_THREAD_SLACK;
	*id = set->next_id++;
	if (set->next_id == 0)
		set->next_id = 1;
	pthread_mutex_unlock(&set->lock);
	return over ? -EUSERS : 0;
}

int rpmemd_sessions_add(struct rpmemd_sessions *set, struct rpmemd_session *s,
			void *(*fn)(void *))
{
	/* under the lock: the thread cannot leave before it is listed */
	pthread_mutex_lock(&set->lock);
	int ret = -pthread_create(&s->thread, NULL, fn, s);
	if (!ret) {
		s->next = set->head;
		set->head = s;
		set->count++;
	}
	pthread_mutex_unlock(&set->lock);
	return ret;
}

int rpmemd_sessions_admit(struct rpmemd_sessions *set, struct rpmemd_session *s,
			  const char *client, unsigned *max)
{
	int ret = 0;

	pthread_mutex_lock(&set->lock);
	*max = set->max_sessions;
	if (set->stopping) {
		ret = -ESHUTDOWN;
	} else if (set->established >= set->max_sessions) {
		ret = -EUSERS;
	} else {
		set->established++;
		s->established = 1;
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
	s->cur_pool[0] = '\0';
	s->done = 1;
	pthread_mutex_unlock(&set->lock);
	if (write(set->wake_fd, &one, sizeof(one)) < 0)
		WARN("session %u: wake-up: %s", s->id, strerror(errno));
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
