/* SPDX-License-Identifier: BSD-3-Clause */
/* link_cfg.c -- a link's settings, and what it reports */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "link_int.h"
#include "util.h"

/* link_check -- a setter's argument check; the setters change no state */
int link_check(struct rpmemctl_link *l, int ok)
{
	client_api_begin();
	if (l && ok)
		return 0;
	client_set_last(-EINVAL, "link: invalid argument");
	return -EINVAL;
}

RPMEM_EXPORT int rpmemctl_link_set_data(struct rpmemctl_link *l, void *addr,
					uint64_t len)
{
	int ret = link_check(l, addr && len && !(l && l->pool));
	if (!ret) {
		l->addr = addr;
		l->len = len;
	}
	return ret;
}

RPMEM_EXPORT int rpmemctl_link_set_dirty_log(struct rpmemctl_link *l,
					     struct rpmemctl_dirtylog *log)
{
	int ret = link_check(l, 1);
	if (!ret)
		l->log = log;
	return ret;
}

RPMEM_EXPORT int rpmemctl_link_set_history(struct rpmemctl_link *l,
					   const char *file)
{
	char *copy = file ? strdup(file) : NULL;
	int ret = link_check(l, !file || copy);
	if (ret) {
		free(copy);
		return ret;
	}
	free(l->history);
	l->history = copy;
	return 0;
}

RPMEM_EXPORT int rpmemctl_link_set_source(struct rpmemctl_link *l,
					  const char *source, const char *live)
{
	int ret = link_check(l, 1);
	if (!ret && source)
		rpmem_strlcpy(l->source, source, sizeof(l->source));
	if (!ret && live)
		rpmem_strlcpy(l->live, live, sizeof(l->live));
	return ret;
}

RPMEM_EXPORT int rpmemctl_link_set_policy(struct rpmemctl_link *l,
					  enum rpmemctl_link_policy policy,
					  long retry_ms)
{
	int ret = link_check(l, policy == RPMEMCTL_LINK_FAIL_STOP ||
			   policy == RPMEMCTL_LINK_DEGRADE);
	if (!ret) {
		l->policy = policy;
		l->retry_ms = retry_ms < 0 ? -1 : retry_ms;
	}
	return ret;
}

RPMEM_EXPORT int rpmemctl_link_set_open(struct rpmemctl_link *l,
					rpmemctl_link_open_fn fn, void *arg)
{
	int ret = link_check(l, 1);
	if (!ret) {
		l->open_fn = fn;
		l->open_arg = arg;
	}
	return ret;
}

RPMEM_EXPORT int rpmemctl_link_set_log(struct rpmemctl_link *l,
				       rpmemctl_log_fn fn, void *arg, int prio)
{
	int ret = link_check(l, prio >= 0 && prio <= 7);
	if (!ret) {
		l->log_fn = fn;
		l->log_arg = arg;
		l->log_prio = prio;
	}
	return ret;
}

RPMEM_EXPORT int rpmemctl_link_set_shared(struct rpmemctl_link *l, int on)
{
	int ret = link_check(l, !(l && (l->pool || l->share)));
	if (!ret)
		l->shared = on != 0;
	return ret;
}

RPMEM_EXPORT int rpmemctl_link_set_notify(struct rpmemctl_link *l,
					  rpmemctl_link_notify_fn fn, void *arg)
{
	int ret = link_check(l, 1);
	if (!ret) {
		l->notify_fn = fn;
		l->notify_arg = arg;
	}
	return ret;
}

/* client_link_name -- "host:port/region/pool" of the link's target */
const char *client_link_history(const struct rpmemctl_link *l)
{
	return l->history;
}

const char *client_link_name(const struct rpmemctl_link *l)
{
	return l->name[0] ? l->name : "(a link without a target)";
}

RPMEM_EXPORT enum rpmemctl_link_state
rpmemctl_link_get_state(const struct rpmemctl_link *l)
{
	return l ? l->state : RPMEMCTL_LINK_DOWN;
}

RPMEM_EXPORT uint64_t
rpmemctl_link_get_retry_ns(const struct rpmemctl_link *l)
{
	if (!l || l->state != RPMEMCTL_LINK_DEGRADED)
		return 0;
	if (l->retry_at == UINT64_MAX)
		return UINT64_MAX;
	uint64_t now = rpmem_now_ns();
	return now >= l->retry_at ? 0 : l->retry_at - now;
}

RPMEM_EXPORT struct rpmemctl_pool *
rpmemctl_link_get_pool(const struct rpmemctl_link *l)
{
	return l ? l->pool : NULL;
}

RPMEM_EXPORT const struct rpmemctl_sync_result *
rpmemctl_link_get_result(const struct rpmemctl_link *l)
{
	return l && l->pushed ? &l->res : NULL;
}

RPMEM_EXPORT const char *rpmemctl_link_errmsg(const struct rpmemctl_link *l)
{
	return l ? l->errmsg : "no link";
}

RPMEM_EXPORT const char *rpmemctl_link_state_str(enum rpmemctl_link_state s)
{
	static const char *const names[] = {
		[RPMEMCTL_LINK_DOWN] = "down",
		[RPMEMCTL_LINK_OPEN] = "open",
		[RPMEMCTL_LINK_SYNCED] = "synced",
		[RPMEMCTL_LINK_LIVE] = "live",
		[RPMEMCTL_LINK_DEGRADED] = "degraded",
		[RPMEMCTL_LINK_FAILED] = "failed",
		[RPMEMCTL_LINK_RESYNCING] = "resyncing",
	};
	if ((unsigned)s < sizeof(names) / sizeof(names[0]))
		return names[s];
	return "unknown";
}

/* client_link_resync_left -- a RESYNCING link's bytes still to send */
uint64_t client_link_resync_left(struct rpmemctl_link *l)
{
	if (l->state != RPMEMCTL_LINK_RESYNCING || !l->resync)
		return 0;
	return client_resync_left(l->resync);
}
