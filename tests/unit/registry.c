/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * registry.c -- unit tests of the daemon's hashing slots
 * (daemon/session/registry.c: rpmemd_hash_enter, rpmemd_hash_leave): at
 * most hash_max requests hash at once, one identity (without TLS: one
 * address) holds or awaits at most half of the slots, and the slots go
 * in turn, so the many readers of one identity cannot crowd out another
 * identity's sync.
 *
 * The event stream and the access rules are stubbed.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "access.h"
#include "events.h"
#include "session_int.h"
#include "util.h"
#include "wait.h"

/* no pool is open in these tests: what names one is never asked */
const char *rpmemd_pool_name(const struct rpmemd_pool *p)
{
	(void)p;
	return "";
}

struct rpmemd_region *rpmemd_pool_region(const struct rpmemd_pool *p)
{
	(void)p;
	return NULL;
}

int rpmemd_events_new(struct rpmemd_events **out)
{
	*out = NULL;
	return 0;
}

void rpmemd_events_delete(struct rpmemd_events **ev)
{
	(void)ev;
}

void rpmemd_access_delete(struct rpmemd_access **a)
{
	(void)a;
}

int rpmemd_access_allows(const struct rpmemd_access *a, const char *identity,
			 enum rpmemd_right right, const char *region)
{
	(void)a;
	(void)identity;
	(void)region;
	(void)right;
	return 1;
}

/* a session of identity id that hashes in a thread of its own */
struct hasher {
	struct rpmemd_session s;
	pthread_t t;
	int in; /* 1 once it holds a slot (under order_lock) */
	int leave; /* gives the slot back at once */
	int order; /* which it was to get one, from 1 */
};

static pthread_mutex_t order_lock = PTHREAD_MUTEX_INITIALIZER;
static int order;

/* hasher_new -- a session of identity id in set */
static struct hasher *hasher_new(struct rpmemd_sessions *set, const char *id)
{
	struct hasher *h = calloc(1, sizeof(*h));

	assert_non_null(h);
	h->s.set = set;
	strcpy(h->s.identity, id);
	return h;
}

/* take -- the thread's body: wait for a slot, note its turn */
static void *take(void *arg)
{
	struct hasher *h = arg;

	rpmemd_hash_enter(&h->s);
	pthread_mutex_lock(&order_lock);
	h->in = 1;
	h->order = ++order;
	pthread_mutex_unlock(&order_lock);
	if (h->leave)
		rpmemd_hash_leave(&h->s);
	return NULL;
}

/* entered -- h holds a slot */
static int entered(struct hasher *h)
{
	pthread_mutex_lock(&order_lock);
	int in = h->in;
	pthread_mutex_unlock(&order_lock);
	return in;
}

/* waiting -- set gave out at least tickets turns (hash_lock) */
static int waiting(struct rpmemd_sessions *set, uint64_t tickets)
{
	pthread_mutex_lock(&set->hash_lock);
	int r = set->hash_next >= tickets;
	pthread_mutex_unlock(&set->hash_lock);
	return r;
}

/* settle -- let the threads started run to their wait (not a timing) */
static void settle(void)
{
	struct timespec ts = { 0, 50 * 1000 * 1000 };
	nanosleep(&ts, NULL);
}

static struct rpmemd_sessions *set_new(unsigned hash_max)
{
	struct rpmemd_sessions *set = NULL;

	assert_int_equal(rpmemd_sessions_new(NULL, 16, "test", &set), 0);
	set->hash_max = hash_max;
	order = 0;
	return set;
}

/*
 * with 2 slots, one identity takes the second only as it is free and
 * nobody waits; its third waits, and another identity that comes then
 * gets the next slot before it
 */
static void hash_enter__one_identity_past_half_only_takes_free_slots(
	void **state)
{
	(void)state;
	struct rpmemd_sessions *set = set_new(2);
	struct hasher *a1 = hasher_new(set, "reader"),
		      *a2 = hasher_new(set, "reader"),
		      *a3 = hasher_new(set, "reader"),
		      *b = hasher_new(set, "backup");

	rpmemd_hash_enter(&a1->s);
	rpmemd_hash_enter(&a2->s); /* past its share: the free slot */
	assert_int_equal(set->hash_busy, 2);
	a3->leave = 1;
	assert_int_equal(pthread_create(&a3->t, NULL, take, a3), 0);
	settle();
	assert_false(entered(a3));
	b->leave = 1;
	assert_int_equal(pthread_create(&b->t, NULL, take, b), 0);
	WAIT_UNTIL(waiting(set, 3));
	/* a slot frees: the other identity's, though a3 came first */
	rpmemd_hash_leave(&a1->s);
	assert_int_equal(pthread_join(b->t, NULL), 0);
	assert_int_equal(b->order, 1);
	rpmemd_hash_leave(&a2->s);
	assert_int_equal(pthread_join(a3->t, NULL), 0);
	assert_int_equal(a3->order, 2);
	assert_null(set->shares); /* nothing kept once all left */
	assert_int_equal(set->hash_busy, 0);
	free(a1);
	free(a2);
	free(a3);
	free(b);
	rpmemd_sessions_delete(&set);
}

/*
 * with 1 slot, the slot goes in turn: a sync's request that came while 3
 * readers of one identity wait gets the slot before any of them but the
 * one already queued
 */
static void hash_enter__turns_not_crowded_out(void **state)
{
	(void)state;
	struct rpmemd_sessions *set = set_new(1);
	struct hasher *holder = hasher_new(set, "reader"), *r[3],
		      *sync = hasher_new(set, "backup");

	rpmemd_hash_enter(&holder->s);
	for (int i = 0; i < 3; i++) {
		r[i] = hasher_new(set, "reader");
		r[i]->leave = 1;
		assert_int_equal(pthread_create(&r[i]->t, NULL, take, r[i]),
				 0);
	}
	settle();
	assert_int_equal(pthread_create(&sync->t, NULL, take, sync), 0);
	/* the sync has its ticket: the holder's and its own */
	WAIT_UNTIL(waiting(set, 2));
	rpmemd_hash_leave(&holder->s);
	/* each gives its slot back as soon as it has it, in order */
	assert_int_equal(pthread_join(sync->t, NULL), 0);
	assert_int_equal(sync->order, 1);
	rpmemd_hash_leave(&sync->s);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(pthread_join(r[i]->t, NULL), 0);
		assert_true(r[i]->order > 1);
	}
	assert_null(set->shares);
	assert_int_equal(set->hash_busy, 0);
	rpmemd_sessions_delete(&set);
	free(holder);
	free(sync);
	for (int i = 0; i < 3; i++)
		free(r[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(
			hash_enter__one_identity_past_half_only_takes_free_slots),
		cmocka_unit_test(hash_enter__turns_not_crowded_out),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
