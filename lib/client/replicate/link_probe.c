/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * link_probe.c -- the reconnect's probe of a link's target: a session
 * opened and closed by a thread of its own, awaited by the kick-out's
 * reconnect and a set's start
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "link_int.h"
#include "util.h"

/* link_probe_put -- drop a reference to p; the last frees it */
void link_probe_put(struct link_probe *p)
{
	if (p && atomic_fetch_sub(&p->refs, 1) == 1)
		free(p);
}

/* probe_main -- the probe's thread: a session opened and closed */
static void *probe_main(void *arg)
{
	struct link_probe *p = arg;
	struct rpmemctl_session_cfg *cfg = NULL;
	struct rpmemctl_session *sess = NULL;
	int ret = rpmemctl_session_cfg_new(&cfg);
	if (!ret && p->log_fn)
		ret = rpmemctl_session_cfg_set_log(cfg, p->log_fn, p->log_arg,
						   p->log_prio);
	if (!ret) {
		ret = rpmemctl_session_cfg_load_default(cfg, p->host, p->port);
		ret = ret == -ENOENT || ret > 0 ? 0 : ret;
	}
	if (!ret)
		ret = rpmemctl_session_open_cfg(p->host, p->port, p->transport,
						cfg, &sess);
	rpmemctl_session_close(&sess);
	rpmemctl_session_cfg_delete(&cfg);
	atomic_store(&p->state, ret ? PROBE_FAILED : PROBE_OK);
	link_probe_put(p);
	return NULL;
}

/* link_probe_start -- a probe of l's target in a thread of its own */
static int link_probe_start(struct rpmemctl_link *l)
{
	struct link_probe *p = l->probe;
	if (!p && !(p = l->probe = calloc(1, sizeof(*p))))
		return -ENOMEM;
	if (!p->refs) {
		atomic_store(&p->refs, 1);
		rpmem_strlcpy(p->host, l->t.host, sizeof(p->host));
		rpmem_strlcpy(p->port, l->t.port, sizeof(p->port));
		p->transport = l->transport;
		p->log_fn = l->log_fn;
		p->log_arg = l->log_arg;
		p->log_prio = l->log_prio;
	}
	pthread_attr_t a;
	pthread_t th;
	atomic_store(&p->state, PROBE_RUNNING);
	atomic_fetch_add(&p->refs, 1);
	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	int ret = pthread_create(&th, &a, probe_main, p);
	pthread_attr_destroy(&a);
	if (ret) {
		atomic_fetch_sub(&p->refs, 1);
		atomic_store(&p->state, PROBE_FAILED);
		return -ret;
	}
	return 0;
}

/* link_probed -- the kick-out's reconnect waits for a probe of the target */
int link_probed(const struct rpmemctl_link *l)
{
	return l->probe_ms && !l->open_fn && l->t.host[0];
}

/*
 * link_probe_poll -- where the reconnect waits for a probe: 1 once one has
 * answered (the target is back: reconnect now), else 0, one started if
 * none runs; a failed one counts as a failed retry
 */
int link_probe_poll(struct rpmemctl_link *l)
{
	int st = l->probe ? atomic_load(&l->probe->state) : PROBE_IDLE;
	if (st == PROBE_OK) {
		atomic_store(&l->probe->state, PROBE_IDLE);
		return 1;
	}
	if (st == PROBE_FAILED) {
		atomic_store(&l->probe->state, PROBE_IDLE);
		l->retry_at = rpmem_now_ns() + (uint64_t)l->retry_ms * 1000000u;
		return 0;
	}
	if (st == PROBE_IDLE && link_probe_start(l))
		l->retry_at = rpmem_now_ns() + (uint64_t)l->retry_ms * 1000000u;
	return 0;
}

/*
 * client_link_retry_now -- a DEGRADED link's last retry (a set's stop):
 * where it probes only once a probe answers within probe_ms, else a
 * push at once; 0, or why not
 */
int client_link_retry_now(struct rpmemctl_link *l)
{
	if (!link_probed(l))
		return rpmemctl_link_push(l, NULL, NULL);
	uint64_t end = rpmem_now_ns() + (uint64_t)l->probe_ms * 1000000u;
	int st = l->probe ? atomic_load(&l->probe->state) : PROBE_IDLE;
	if (st != PROBE_RUNNING && st != PROBE_OK && link_probe_start(l))
		return link_err(l, -ENOMEM,
				"cannot start a probe of the target");
	while ((st = atomic_load(&l->probe->state)) == PROBE_RUNNING &&
	       rpmem_now_ns() < end)
		poll(NULL, 0, LINK_PROBE_POLL_MS);
	if (st == PROBE_RUNNING)
		return link_err(l, -ETIMEDOUT, "no answer from the target "
				"within the kick-out timeout (%u ms)",
				l->probe_ms);
	atomic_store(&l->probe->state, PROBE_IDLE);
	if (st != PROBE_OK)
		return link_err(l, -ECONNREFUSED,
				"the target cannot be reached");
	return rpmemctl_link_push(l, NULL, NULL);
}

/*
 * client_link_start_probe -- a set's start (k < n under the kick-out)
 * probes a DOWN link's target before it pushes: 0 once a probe runs or
 * answered, 1 where the link takes none (no kick-out, an open hook, not
 * DOWN, its own policy fail-stop) or one cannot start: it pushes as before
 */
int client_link_start_probe(struct rpmemctl_link *l)
{
	if (!link_probed(l) || l->state != RPMEMCTL_LINK_DOWN ||
	    l->policy != RPMEMCTL_LINK_DEGRADE)
		return 1;
	int st = l->probe ? atomic_load(&l->probe->state) : PROBE_IDLE;
	if (st == PROBE_RUNNING || st == PROBE_OK)
		return 0;
	return link_probe_start(l) ? 1 : 0;
}

/*
 * client_link_start_probed -- the start's probe of l: 1 answered, 0
 * still running, -1 failed or none; done: an answer is taken (the next
 * reconnect waits for a probe of its own)
 */
int client_link_start_probed(struct rpmemctl_link *l, int done)
{
	int st = l->probe ? atomic_load(&l->probe->state) : PROBE_IDLE;
	if (done && (st == PROBE_OK || st == PROBE_FAILED))
		atomic_store(&l->probe->state, PROBE_IDLE);
	return st == PROBE_OK ? 1 : st == PROBE_RUNNING ? 0 : -1;
}

/*
 * client_link_defer -- the start goes on without l: its target did not
 * answer its probe within the kick-out timeout after k others did (or k
 * cannot answer); DEGRADED and behind, its reconnect waits for that
 * probe; returns -ETIMEDOUT
 */
int client_link_defer(struct rpmemctl_link *l, uint64_t waited_ns)
{
	link_lock(l);
	link_err(l, -ETIMEDOUT, "kicked out at the start: no answer to a "
		 "probe for %llu ms (the kick-out timeout is %u ms); resynced "
		 "once it answers", (unsigned long long)(waited_ns / 1000000u),
		 l->probe_ms);
	int ret = link_failed(l, -ETIMEDOUT);
	client_share_unlock(l->share);
	return ret;
}
