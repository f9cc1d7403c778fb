/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * versions_lru.c -- the daemon-wide LRU of open version chains
 * (versions_chain.c): their journals held open within the bounds, closed
 * when a commit or a prune changes their pool (rpmemd_vchains_release)
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "log.h"
#include "undo.h"
#include "versions.h"
#include "versions_int.h"

/*
 * The chains open in the daemon, most recently read first: together they
 * hold at most vc_reg.max journals open (a quarter of RLIMIT_NOFILE), and
 * the chains of one owner (a session) at most a quarter of that (its
 * share); a chain that would take its owner past its share closes that
 * owner's least recently read chains first, never another's, then the
 * least recently read of all are closed to make room for it; each is
 * reopened at its next read. A commit or a prune of a pool's version closes its pool's
 * chains (rpmemd_vchains_release), so no reader keeps a stale or pruned
 * version's file, and its space, alive. Locks: the region's ver_lock,
 * then vc_reg.lock, then a chain's lk.
 */
struct vc_registry vc_reg = { PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0, 0 };

/* vc_max -- the journals all chains may hold open together */
static size_t vc_max(void)
{
	struct rlimit rl;

	if (!vc_reg.max) {
		rlim_t n = getrlimit(RLIMIT_NOFILE, &rl) ? 1024 : rl.rlim_cur;
		if (n == RLIM_INFINITY || n > (1u << 20))
			n = 1u << 20;
		vc_reg.max = n / 4 > 16 ? (size_t)(n / 4) : 16;
	}
	return vc_reg.max;
}

/* vc_share -- the journals the chains of one owner may hold open */
static size_t vc_share(void)
{
	size_t max = vc_max();

	return max / 4 > 16 ? max / 4 : (max < 16 ? max : 16);
}

/* vc_owner_fds -- the journals owner's chains hold open; vc_reg.lock */
static size_t vc_owner_fds(const void *owner)
{
	size_t n = 0;

	for (struct rpmemd_vchain *t = vc_reg.head; t; t = t->next)
		if (t->owner == owner)
			n += t->n;
	return n;
}

/* vc_unlink -- take c out of vc_reg's list; vc_reg.lock held */
static void vc_unlink(struct rpmemd_vchain *c)
{
	if (c->prev)
		c->prev->next = c->next;
	else if (vc_reg.head == c)
		vc_reg.head = c->next;
	if (c->next)
		c->next->prev = c->prev;
	c->prev = c->next = NULL;
}

/* vc_front -- c becomes the most recently read; vc_reg.lock held */
void vc_front(struct rpmemd_vchain *c)
{
	vc_unlink(c);
	c->next = vc_reg.head;
	if (c->next)
		c->next->prev = c;
	vc_reg.head = c;
}

/* vc_drop -- close c's journals (reopened at its next read); vc_reg.lock */
void vc_drop(struct rpmemd_vchain *c)
{
	pthread_mutex_lock(&c->lk); /* a read of it under way ends first */
	for (size_t i = 0; i < c->n; i++)
		rpmemd_undo_close(&c->u[i]);
	vc_reg.fds -= c->n;
	c->n = 0;
	c->use = 0;
	c->loaded = 0;
	pthread_mutex_unlock(&c->lk);
	vc_unlink(c);
}

/* vc_tail -- the least recently read chain; vc_reg.lock held */
static struct rpmemd_vchain *vc_tail(void)
{
	struct rpmemd_vchain *t = vc_reg.head;

	while (t && t->next)
		t = t->next;
	return t;
}

/*
 * vc_make_room -- room for need more journals of c: c's owner's least
 * recently read chains but c closed to keep it within its share, then
 * the least recently read of all but c for the daemon's bound
 */
static void vc_make_room(struct rpmemd_vchain *c, size_t need)
{
	size_t max = vc_max(), share = vc_share();
	size_t own = vc_owner_fds(c->owner);
	struct rpmemd_vchain *t, *prev;

	for (t = vc_tail(); t && own + need > share; t = prev) {
		prev = t->prev;
		if (t == c || t->owner != c->owner)
			continue;
		DBG("pool '%s': version %llu's chain closed (%zu journals): its session's chains hold %zu of its share of %zu",
		    t->pool, (unsigned long long)t->gen, t->n, own, share);
		own -= t->n;
		vc_drop(t);
	}
	for (t = vc_tail(); t && vc_reg.fds + need > max; t = prev) {
		prev = t->prev;
		if (t == c)
			continue;
		DBG("pool '%s': version %llu's chain closed (%zu journals): the chains hold %zu of %zu",
		    t->pool, (unsigned long long)t->gen, t->n, vc_reg.fds,
		    max);
		vc_drop(t);
	}
}

void rpmemd_vchains_release(int metafd, const char *pool)
{
	pthread_mutex_lock(&vc_reg.lock);
	for (struct rpmemd_vchain *c = vc_reg.head, *next; c; c = next) {
		next = c->next;
		if (c->r->metafd == metafd && !strcmp(c->pool, pool))
			vc_drop(c);
	}
	pthread_mutex_unlock(&vc_reg.lock);
}

/* vchain_install -- c's journals are u[n]: in vc_reg, c->lk held after */
void vchain_install(struct rpmemd_vchain *c, struct rpmemd_undo **u,
		    size_t n)
{
	pthread_mutex_lock(&vc_reg.lock);
	vc_make_room(c, n);
	pthread_mutex_lock(&c->lk);
	free(c->u);
	c->u = u;
	c->n = n;
	c->use = n;
	c->loaded = 1;
	c->loads += n;
	vc_reg.loads += n;
	vc_reg.fds += n;
	vc_front(c);
	pthread_mutex_unlock(&vc_reg.lock);
}
