/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * scrubd.c -- scheduled scrubs: a region with scrub_interval has rpmemd
 * scrub each of its consistent pools and their versions' records that
 * often, as rpmemctl scrub does, and say what it found in events and its
 * log
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "events.h"
#include "log.h"
#include "scrub.h"
#include "scrubd.h"
#include "session_int.h"
#include "util.h"
#include "versions.h"

/* SCRUBD_VLIST_MAX -- room for the generations of damaged versions */
#define SCRUBD_VLIST_MAX 128

/* how often the thread looks at the regions' schedules */
#define SCRUBD_TICK_MS 1000
/* threads one batch hashes with, as a SCRUB request */
#define SCRUBD_THREADS 2

/* when a region's pools are scrubbed next */
struct scrubd_due {
	char region[RPMEM_NAME_MAX + 1];
	uint64_t due_ns;
};

struct rpmemd_scrubd {
	struct rpmemd_sessions *set;
	struct rpmemd_session self; /* its hashing slots and events */
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int stop;
	struct scrubd_due *due;
	unsigned ndue;
};

/* stopping -- the daemon or the scheduler is stopping */
static int stopping(struct rpmemd_scrubd *d)
{
	pthread_mutex_lock(&d->lock);
	int stop = d->stop;
	pthread_mutex_unlock(&d->lock);
	return stop || __atomic_load_n(&d->set->stopping, __ATOMIC_RELAXED);
}

/* what one pool's scheduled scrub found */
struct scrubd_result {
	uint64_t damaged, unverified, checked; /* bytes; checked: compared */
	int cut;			       /* the daemon stopped first */
	unsigned vbad;			       /* damaged versions */
	char vlist[SCRUBD_VLIST_MAX];	       /* their generations, named */
};

/* count -- the verdicts of count pieces from off into res */
static void count(const struct rpmemd_pool *p, uint64_t off, uint32_t n,
		  const uint8_t *piece, struct scrubd_result *res)
{
	for (uint32_t i = 0; i < n; i++) {
		uint64_t o = off + (uint64_t)i * RPMEM_HASH_PIECE;
		uint64_t len = rpmemd_pool_size(p) - o < RPMEM_HASH_PIECE ?
				       rpmemd_pool_size(p) - o :
				       RPMEM_HASH_PIECE;
		if (piece[i] == RPMEM_SCRUB_UNVERIFIED)
			res->unverified += len;
		else
			res->checked += len; /* intact or damaged */
		if (piece[i] == RPMEM_SCRUB_DAMAGED)
			res->damaged += len;
	}
}

/*
 * scrub_pool -- every piece of the open pool p, 64 MiB a batch, each in a
 * hashing slot; what is found goes into the pool's list (events, log)
 */
static int scrub_pool(struct rpmemd_scrubd *d, struct rpmemd_pool *p,
		      struct scrubd_result *res)
{
	uint64_t step = (uint64_t)RPMEM_MAX_SCRUB_PIECES * RPMEM_HASH_PIECE;
	uint8_t *piece = malloc(RPMEM_MAX_SCRUB_PIECES);
	int ret = piece ? 0 : -ENOMEM;

	for (uint64_t off = 0; !ret && off < rpmemd_pool_size(p); off += step) {
		struct rpmemd_damage_change chg;
		uint64_t gen;
		uint8_t why;
		uint32_t n = rpmemd_pool_size(p) - off >= step ?
				     RPMEM_MAX_SCRUB_PIECES :
				     (uint32_t)((rpmemd_pool_size(p) - off +
						 RPMEM_HASH_PIECE - 1) /
						RPMEM_HASH_PIECE);
		if (stopping(d)) {
			res->cut = 1;
			break;
		}
		rpmemd_hash_enter(&d->self);
		ret = rpmemd_scrub_check(p, off, n, piece, &why, &gen,
					 SCRUBD_THREADS, &chg);
		rpmemd_hash_leave(&d->self);
		if (!ret) {
			count(p, off, n, piece, res);
			rpmemd_damage_report(&d->self, p, &chg, 1);
		}
	}
	free(piece);
	return ret;
}

/* version_bad -- version gen of p is damaged (text): log, event, count */
static void version_bad(struct rpmemd_scrubd *d, struct rpmemd_pool *p,
			uint64_t gen, const char *text,
			struct scrubd_result *res)
{
	size_t n = strlen(res->vlist);

	WARN("region '%s': scheduled scrub: %s",
	     rpmemd_pool_region(p)->cfg.name, text);
	rpmemd_damage_event(&d->self, p, text);
	if (n < sizeof(res->vlist))
		snprintf(res->vlist + n, sizeof(res->vlist) - n, "%s%llu",
			 res->vbad ? ", " : "", (unsigned long long)gen);
	res->vbad++;
}

/*
 * scrub_versions -- the versions of p, as rpmemctl scrub has them checked
 * (VERSIONS with RPMEM_VERSIONS_LIST_CHECK): one whose journal does not
 * load, or one of whose records does not check (each read in a hashing
 * slot), is logged and announced, naming the version
 */
static void scrub_versions(struct rpmemd_scrubd *d, struct rpmemd_pool *p,
			   struct scrubd_result *res)
{
	char text[RPMEM_STR_MAX + 1];
	struct rpmemd_version *v = NULL;
	struct rpmemd_meta m;
	size_t n = 0;

	rpmemd_pool_get_meta(p, &m);
	if (rpmemd_versions_list(rpmemd_pool_region(p), rpmemd_pool_name(p), &m,
				 &v, &n))
		return;
	for (size_t i = 0; i < n && !stopping(d); i++) {
		uint64_t bad = 0, len = 0;
		int ret = 0;
		if (v[i].damaged) {
			snprintf(text, sizeof(text),
				 "version %llu of pool '%s' is damaged: its journal does not load (kept; scrub --repair heals it)",
				 (unsigned long long)v[i].gen,
				 rpmemd_pool_name(p));
			version_bad(d, p, v[i].gen, text, res);
			continue;
		}
		rpmemd_hash_enter(&d->self);
		ret = rpmemd_version_check(rpmemd_pool_region(p),
					   rpmemd_pool_name(p), &m, v[i].gen,
					   &bad, &len);
		rpmemd_hash_leave(&d->self);
		if (!ret && v[i].bad_data)
			rpmemd_version_mark(rpmemd_pool_region(p),
					    rpmemd_pool_name(p), v[i].gen, 0);
		if (ret != -EIO)
			continue;
		rpmemd_version_mark(rpmemd_pool_region(p), rpmemd_pool_name(p),
				    v[i].gen, 1);
		snprintf(text, sizeof(text),
			 "version %llu of pool '%s' is damaged at 0x%llx length %llu: a record of its journal does not check (kept; scrub --repair from another copy heals it)",
			 (unsigned long long)v[i].gen, rpmemd_pool_name(p),
			 (unsigned long long)bad, (unsigned long long)len);
		version_bad(d, p, v[i].gen, text, res);
	}
	free(v);
}

/* scrubbed -- the event and log line of a pool's scheduled scrub */
static void scrubbed(struct rpmemd_scrubd *d, struct rpmemd_region *r,
		     struct rpmemd_pool *p, const struct scrubd_result *res)
{
	char text[RPMEM_STR_MAX + 1];

	if (res->cut)
		snprintf(text, sizeof(text),
			 "scheduled scrub of pool '%s' cut short: the daemon is stopping",
			 rpmemd_pool_name(p));
	else if (res->vbad)
		snprintf(text, sizeof(text),
			 "scheduled scrub of pool '%s': %llu bytes checked, %llu damaged, %llu unverified; damaged versions: %.60s (kept; scrub --repair heals them)",
			 rpmemd_pool_name(p), (unsigned long long)res->checked,
			 (unsigned long long)res->damaged,
			 (unsigned long long)res->unverified, res->vlist);
	else
		snprintf(text, sizeof(text),
			 "scheduled scrub of pool '%s': %llu bytes checked, %llu damaged, %llu unverified%s",
			 rpmemd_pool_name(p), (unsigned long long)res->checked,
			 (unsigned long long)res->damaged,
			 (unsigned long long)res->unverified,
			 res->damaged ?
				 " (listed damaged: a sync or scrub --repair from a good copy repairs it)" :
			 res->unverified ? "" :
					   ": clean");
	rpmem_log(res->damaged || res->vbad ? LOG_WARNING : LOG_INFO,
		  "region '%s': %s", r->cfg.name, text);
	rpmemd_damage_event(&d->self, p, text);
}

/* scrub_region -- each consistent pool of r, one at a time */
static void scrub_region(struct rpmemd_scrubd *d, struct rpmemd_region *r)
{
	struct rpmem_pool_info *v = NULL;
	char err[RPMEM_STR_MAX + 1];
	uint32_t n = 0;

	if (rpmemd_pool_list(r, &v, &n)) {
		WARN("region '%s': scheduled scrub: cannot list its pools",
		     r->cfg.name);
		return;
	}
	for (uint32_t i = 0; i < n && !stopping(d); i++) {
		struct scrubd_result res = { 0 };
		struct rpmemd_pool *p = NULL;
		if (v[i].state != RPMEM_POOL_CONSISTENT)
			continue;
		if (rpmemd_pool_open(r, v[i].name, RPMEM_OPEN_RO, d->self.id,
				     "rpmemd's scheduled scrub", &p, err,
				     sizeof(err))) {
			WARN("region '%s': scheduled scrub of pool '%s' skipped: %s",
			     r->cfg.name, v[i].name, err);
			continue;
		}
		if (scrub_pool(d, p, &res)) {
			WARN("region '%s': scheduled scrub of pool '%s' failed: out of memory",
			     r->cfg.name, rpmemd_pool_name(p));
		} else {
			if (!res.cut)
				scrub_versions(d, p, &res);
			scrubbed(d, r, p, &res);
		}
		rpmemd_pool_close(&p, RPMEM_OPEN_RO, d->self.id);
	}
	free(v);
}

/* due_of -- region name's schedule entry (a new one due after ivl) */
static struct scrubd_due *due_of(struct rpmemd_scrubd *d, const char *name,
				 uint64_t now, uint64_t ivl)
{
	struct scrubd_due *e;

	for (unsigned i = 0; i < d->ndue; i++)
		if (!strcmp(d->due[i].region, name))
			return &d->due[i];
	e = realloc(d->due, (d->ndue + 1) * sizeof(*e));
	if (!e)
		return NULL;
	d->due = e;
	e = &d->due[d->ndue++];
	rpmem_strlcpy(e->region, name, sizeof(e->region));
	e->due_ns = now + ivl;
	return e;
}

/* tick -- scrub the regions whose time has come */
static void tick(struct rpmemd_scrubd *d)
{
	struct rpmemd_region **v = NULL;
	unsigned n = 0;

	if (rpmemd_regions_get_all(d->set->regions, &v, &n))
		return;
	for (unsigned i = 0; i < n && !stopping(d); i++) {
		uint64_t ivl = v[i]->cfg.scrub_interval_ns, now = rpmem_now_ns();
		struct scrubd_due *e = ivl ? due_of(d, v[i]->cfg.name, now, ivl) :
					     NULL;
		if (!e || now < e->due_ns)
			continue;
		INFO("region '%s': scheduled scrub (scrub_interval) begins",
		     v[i]->cfg.name);
		scrub_region(d, v[i]);
		e->due_ns = rpmem_now_ns() + ivl;
	}
	rpmemd_regions_put_all(&v, n);
}

/* worker -- tick until stopped */
static void *worker(void *arg)
{
	struct rpmemd_scrubd *d = arg;

	while (!stopping(d)) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += SCRUBD_TICK_MS * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_mutex_lock(&d->lock);
		if (!d->stop)
			pthread_cond_timedwait(&d->cond, &d->lock, &ts);
		pthread_mutex_unlock(&d->lock);
		if (!stopping(d))
			tick(d);
	}
	return NULL;
}

int rpmemd_scrubd_start(struct rpmemd_sessions *set,
			struct rpmemd_scrubd **out)
{
	struct rpmemd_scrubd *d = calloc(1, sizeof(*d));
	int ret;

	if (!d)
		return -ENOMEM;
	d->set = set;
	d->self.set = set;
	rpmem_strlcpy(d->self.identity, "rpmemd (scrub_interval)",
		      sizeof(d->self.identity));
	pthread_mutex_init(&d->lock, NULL);
	pthread_cond_init(&d->cond, NULL);
	if ((ret = -pthread_create(&d->thread, NULL, worker, d))) {
		pthread_cond_destroy(&d->cond);
		pthread_mutex_destroy(&d->lock);
		free(d);
		return ret;
	}
	*out = d;
	return 0;
}

void rpmemd_scrubd_stop(struct rpmemd_scrubd **pd)
{
	struct rpmemd_scrubd *d = pd ? *pd : NULL;

	if (!d)
		return;
	*pd = NULL;
	pthread_mutex_lock(&d->lock);
	d->stop = 1;
	pthread_cond_signal(&d->cond);
	pthread_mutex_unlock(&d->lock);
	pthread_join(d->thread, NULL);
	pthread_cond_destroy(&d->cond);
	pthread_mutex_destroy(&d->lock);
	free(d->due);
	free(d);
}
