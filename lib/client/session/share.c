/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * share.c -- one session for the links of a process to one target: links
 * marked shared (rpmemctl_link_set_shared) with the same host, port,
 * transport and log open their pools on one session, at most
 * CLIENT_SHARE_POOLS pools a session (rpmemd's handles a session). The
 * entry's mutex is held by every call of such a link that uses the
 * session (link.c); the replies one link reads for another wait in the
 * session (channel.c, client_owe).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "client_share.h"
#include "util.h"

struct client_share {
	struct client_share *next;
	unsigned refs; /* links that use the entry */
	pthread_mutex_t mu;
	char host[RPMEM_HOST_MAX];
	char port[RPMEM_PORT_STR];
	enum rpmemctl_transport transport;
	rpmemctl_log_fn log_fn;
	void *log_arg;
	int log_prio;
	struct rpmemctl_session *sess; /* the one new links join; or NULL */
};

static pthread_mutex_t shares_mu = PTHREAD_MUTEX_INITIALIZER;
static struct client_share *shares;

/* same -- e is the entry of these settings */
static int same(const struct client_share *e, const char *host,
		const char *port, enum rpmemctl_transport transport,
		rpmemctl_log_fn log_fn, void *log_arg, int log_prio)
{
	return !strcmp(e->host, host) && !strcmp(e->port, port) &&
	       e->transport == transport && e->log_fn == log_fn &&
	       e->log_arg == log_arg && e->log_prio == log_prio;
}

struct client_share *client_share_get(const char *host, const char *port,
				      enum rpmemctl_transport transport,
				      rpmemctl_log_fn log_fn, void *log_arg,
				      int log_prio)
{
	pthread_mutex_lock(&shares_mu);
	struct client_share *e = shares;
	while (e && !same(e, host, port, transport, log_fn, log_arg, log_prio))
		e = e->next;
	if (!e && (e = calloc(1, sizeof(*e)))) {
		pthread_mutex_init(&e->mu, NULL);
		strncpy(e->host, host, sizeof(e->host) - 1);
		strncpy(e->port, port, sizeof(e->port) - 1);
		e->transport = transport;
		e->log_fn = log_fn;
		e->log_arg = log_arg;
		e->log_prio = log_prio;
		e->next = shares;
		shares = e;
	}
	if (e)
		e->refs++;
	pthread_mutex_unlock(&shares_mu);
	return e;
}

void client_share_put(struct client_share **ep)
{
	struct client_share *e = *ep;
	if (!e)
		return;
	*ep = NULL;
	pthread_mutex_lock(&shares_mu);
	if (--e->refs == 0) {
		struct client_share **pp = &shares;
		while (*pp != e)
			pp = &(*pp)->next;
		*pp = e->next;
		pthread_mutex_destroy(&e->mu);
		free(e);
	}
	pthread_mutex_unlock(&shares_mu);
}

void client_share_lock(struct client_share *e)
{
	if (e)
		pthread_mutex_lock(&e->mu);
}

void client_share_unlock(struct client_share *e)
{
	if (e)
		pthread_mutex_unlock(&e->mu);
}

struct rpmemctl_session *client_share_join(struct client_share *e)
{
	struct rpmemctl_session *s = e->sess;
	if (!s || s->lost || s->users >= CLIENT_SHARE_POOLS)
		return NULL;
	s->users++;
	return s;
}

void client_share_adopt(struct client_share *e, struct rpmemctl_session *s)
{
	/* a lost or full one before it lives on while links still use it */
	e->sess = s;
	s->users = 1;
}

void client_share_leave(struct client_share *e, struct rpmemctl_session **sp)
{
	struct rpmemctl_session *s = *sp;
	*sp = NULL;
	if (!s || --s->users)
		return;
	if (e->sess == s)
		e->sess = NULL;
	rpmemctl_session_close(&s);
}
