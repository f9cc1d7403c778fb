/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * client_share.h -- one session for the links of a process to one target
 * (share.c)
 */
#ifndef RPMEM_CLIENT_SHARE_H
#define RPMEM_CLIENT_SHARE_H

#include "client_session.h"

/*
 * share.c -- the session of a process's shared links to one target. Every
 * call of a link with an entry that may use the session holds the entry's
 * lock (client_share_lock).
 */
#define CLIENT_SHARE_POOLS 16 /* pools a shared session (rpmemd's handles) */
struct client_share;
/* client_share_get -- the entry of these settings, made if need be */
struct client_share *client_share_get(const char *host, const char *port,
				      enum rpmemctl_transport transport,
				      rpmemctl_log_fn log_fn, void *log_arg,
				      int log_prio);
/* client_share_put -- one link less; the last frees the entry */
void client_share_put(struct client_share **e);
void client_share_lock(struct client_share *e);
void client_share_unlock(struct client_share *e);
/*
 * client_share_join -- the entry's session, one user more; NULL if it has
 * none, it is lost or full: the caller opens one and adopts it
 */
struct rpmemctl_session *client_share_join(struct client_share *e);
/* client_share_adopt -- s, just opened, is the one new links join */
void client_share_adopt(struct client_share *e, struct rpmemctl_session *s);
/* client_share_leave -- one user less; the last closes it; *s = NULL */
void client_share_leave(struct client_share *e, struct rpmemctl_session **s);

#endif
