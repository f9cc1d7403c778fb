/* SPDX-License-Identifier: BSD-3-Clause */
/* store.c -- unit tests of the pool store over both backends (daemon/) */

/*
 * A dir region in a temporary directory and a devdax region on a regular
 * temporary file (devdax.c formats it; libpmem2 maps it with page
 * granularity) go through the same calls: the store asks neither which
 * backend it has. What a real device adds (PMem granularity, the CPU
 * cache flush of rpmemd_devdax_persist) is left to the VM bed.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "backend.h"
#include "config.h"
#include "history.h"
#include "history_int.h"
#include "journal.h"
#include "region.h"
#include "store.h"
#include "util.h"
#include "versions.h"
#include "wait.h"

#define MiB (1024ull * 1024)

struct fx {
	char dir[64];
	char pools[96];	 /* the dir region */
	char dev[96];	 /* the devdax region's stand-in */
	char undo[96];	 /* its undo_dir */
	struct rpmemd_regions *set;
};

/* regions -- the fixture's regions "d" and "x" (undo_dir: undo) again */
static int regions(struct fx *fx, const char *undo)
{
	struct rpmemd_region_cfg rc[2] = { 0 };
	struct rpmemd_config cfg = { 0 };
	char err[256];

	rpmem_strlcpy(rc[0].name, "d", sizeof(rc[0].name));
	rc[0].type = RPMEM_REGION_DIR;
	rpmem_strlcpy(rc[0].path, fx->pools, sizeof(rc[0].path));
	rpmem_strlcpy(rc[1].name, "x", sizeof(rc[1].name));
	rc[1].type = RPMEM_REGION_DEVDAX;
	rpmem_strlcpy(rc[1].path, fx->dev, sizeof(rc[1].path));
	rpmem_strlcpy(rc[1].undo_dir, undo, sizeof(rc[1].undo_dir));
	cfg.regions = rc;
	cfg.nregions = 2;
	return rpmemd_regions_apply(fx->set, &cfg, err, sizeof(err));
}

/*
 * fx_setup -- a dir region "d" and a devdax region "x" with its undo_dir,
 * both open
 */
static int fx_setup(void **state)
{
	struct fx *fx = calloc(1, sizeof(*fx));
	int fd;

	if (!fx)
		return -1;
	strcpy(fx->dir, "/tmp/rpmem-store-test.XXXXXX");
	if (!mkdtemp(fx->dir))
		return -1;
	snprintf(fx->pools, sizeof(fx->pools), "%s/pools", fx->dir);
	snprintf(fx->dev, sizeof(fx->dev), "%s/dax", fx->dir);
	snprintf(fx->undo, sizeof(fx->undo), "%s/undo", fx->dir);
	fd = open(fx->dev, O_RDWR | O_CREAT | O_EXCL, 0600);
	if (mkdir(fx->pools, 0700) || mkdir(fx->undo, 0700) || fd < 0 ||
	    ftruncate(fd, (off_t)(16 * MiB)))
		return -1;
	close(fd);
	rpmemd_history_init();
	if (rpmemd_regions_new(&fx->set) || regions(fx, fx->undo))
		return -1;
	*state = fx;
	return 0;
}

/* fx_teardown -- close the regions, remove the files */
static int fx_teardown(void **state)
{
	struct fx *fx = *state;
	char cmd[128];

	rpmemd_regions_delete(&fx->set);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", fx->dir);
	if (system(cmd))
		return -1;
	free(fx);
	return 0;
}

/* region -- a reference to region name of the fixture */
static struct rpmemd_region *region(struct fx *fx, const char *name)
{
	struct rpmemd_region *r = NULL;

	assert_int_equal(rpmemd_region_get(fx->set, name, &r), 0);
	return r;
}

static void region_ops__set_by_type(void **state)
{
	struct fx *fx = *state;
	struct rpmemd_region *d = region(fx, "d"), *x = region(fx, "x");

	assert_ptr_equal(d->ops, &rpmemd_backend_file);
	assert_ptr_equal(x->ops, &rpmemd_backend_devdax);
	assert_string_equal(d->ops->name, "file");
	assert_string_equal(x->ops->name, "devdax");
	rpmemd_region_put(&d);
	rpmemd_region_put(&x);
}

/* list_one -- region r lists exactly pool name in state */
static void list_one(struct rpmemd_region *r, const char *name, uint8_t state)
{
	struct rpmem_pool_info *v = NULL;
	uint32_t n = 0;

	assert_int_equal(rpmemd_pool_list(r, &v, &n), 0);
	assert_int_equal(n, 1);
	assert_string_equal(v[0].name, name);
	assert_int_equal(v[0].size, 2 * MiB);
	assert_int_equal(v[0].state, state);
	free(v);
}

/*
 * lifecycle -- create, list, open, write, persist, state changes, the
 * busy and exists errors, reopen, remove: one pool of region name
 */
static void lifecycle(struct fx *fx, const char *name)
{
	struct rpmemd_region *r = region(fx, name);
	struct rpmemd_pool *p = NULL, *q = NULL;
	struct rpmemd_meta m;
	struct rpmem_pool_info *v = NULL;
	struct rpmem_region_info ri0, ri1;
	uint32_t n = 0;
	char err[256];

	assert_int_equal(rpmemd_pool_create(r, "big", 1ull << 50, err,
					    sizeof(err)),
			 -ENOSPC);
	assert_non_null(strstr(err, "pool 'big' needs 1"));
	assert_int_equal(rpmemd_region_info(r, &ri0), 0);
	assert_int_equal(rpmemd_pool_create(r, "p", 2 * MiB, err, sizeof(err)),
			 0);
	assert_int_equal(rpmemd_region_info(r, &ri1), 0);
	assert_true(ri1.size > 0 && ri1.free <= ri1.size);
	/* a device's free bytes are its own; a file system's are shared */
	if (r->cfg.type == RPMEM_REGION_DEVDAX)
		assert_int_equal(ri0.free - ri1.free, 2 * MiB);
	assert_int_equal(rpmemd_pool_create(r, "p", 2 * MiB, err, sizeof(err)),
			 -EEXIST);
	assert_non_null(strstr(err, "already exists"));
	list_one(r, "p", RPMEM_POOL_EMPTY);

	assert_int_equal(rpmemd_pool_open(r, "p", RPMEM_OPEN_RW, 7, "s7", &p,
					  err, sizeof(err)),
			 0);
	assert_int_equal(rpmemd_pool_open(r, "p", RPMEM_OPEN_RW, 8, "s8", &q,
					  err, sizeof(err)),
			 -EBUSY);
	assert_non_null(strstr(err, "open for writing by s7"));
	assert_int_equal(rpmemd_pool_remove(r, "p", 1, err, sizeof(err)),
			 -EBUSY);
	assert_int_equal(rpmemd_pool_set_state(p, RPMEM_POOL_SYNCING, "src", 0, 0,
					       &m, err, sizeof(err)),
			 0);
	memset(p->addr + MiB, 0xa5, 4096);
	assert_int_equal(rpmemd_pool_persist(p, MiB, 4096), 0);
	rpmemd_pool_count(p, 4096, 1);
	assert_int_equal(rpmemd_pool_set_state(p, RPMEM_POOL_CONSISTENT, "", 0, 0,
					       &m, err, sizeof(err)),
			 0);
	assert_int_equal(m.state, RPMEM_POOL_CONSISTENT);
	assert_string_equal(m.source, "src");
	rpmemd_pool_close(&p, RPMEM_OPEN_RW, 7);

	/* the counters and the data outlive the open */
	assert_int_equal(rpmemd_pool_list(r, &v, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(v[0].bytes_written, 4096);
	assert_int_equal(v[0].flushes, 1);
	free(v);
	assert_int_equal(rpmemd_pool_open(r, "p", RPMEM_OPEN_RO, 9, "s9", &p,
					  err, sizeof(err)),
			 0);
	assert_int_equal(p->addr[MiB], 0xa5);
	assert_int_equal(p->addr[MiB + 4095], 0xa5);
	assert_int_equal(rpmemd_pool_state(p), RPMEM_POOL_CONSISTENT);
	rpmemd_pool_close(&p, RPMEM_OPEN_RO, 9);

	assert_int_equal(rpmemd_pool_remove(r, "p", 0, err, sizeof(err)), 0);
	assert_int_equal(rpmemd_pool_remove(r, "p", 0, err, sizeof(err)),
			 -ENOENT);
	assert_non_null(strstr(err, "no pool 'p'"));
	v = NULL;
	n = 0;
	assert_int_equal(rpmemd_pool_list(r, &v, &n), 0);
	assert_int_equal(n, 0);
	free(v);
	rpmemd_region_put(&r);
}

static void pool_lifecycle__dir_region(void **state)
{
	lifecycle(*state, "d");
}

static void pool_lifecycle__devdax_region(void **state)
{
	lifecycle(*state, "x");
}

/* state -- pool p goes to st, recording source src */
static void state(struct rpmemd_pool *p, uint8_t st, const char *src)
{
	struct rpmemd_meta m;
	char err[256];
	assert_int_equal(rpmemd_pool_set_state(p, st, src, 0, 0, &m, err,
					       sizeof(err)), 0);
}

/* pending -- what LIST says of pool name: pending, its generation */
static int pending(struct rpmemd_region *r, uint64_t *gen)
{
	struct rpmem_pool_info *v = NULL;
	uint32_t n = 0;
	assert_int_equal(rpmemd_pool_list(r, &v, &n), 0);
	assert_int_equal(n, 1);
	int ret = v[0].pending;
	*gen = v[0].undo_generation;
	free(v);
	return ret;
}

/* open_rw -- pool a of region r, read-write */
static struct rpmemd_pool *open_rw(struct rpmemd_region *r)
{
	struct rpmemd_pool *p = NULL;
	char err[256];
	assert_int_equal(rpmemd_pool_open(r, "a", RPMEM_OPEN_RW, 1, "t", &p,
					  err, sizeof(err)), 0);
	return p;
}

/*
 * mirrored -- pool a of 2 MiB created in r, open for writing, and its
 * first mirror done (syncing, every byte fill if not 0, consistent at
 * generation 1)
 */
static struct rpmemd_pool *mirrored(struct rpmemd_region *r, int fill)
{
	char err[256];

	assert_int_equal(rpmemd_pool_create(r, "a", 2 * MiB, err, sizeof(err)),
			 0);
	struct rpmemd_pool *p = open_rw(r);
	state(p, RPMEM_POOL_SYNCING, "h:/a");
	if (fill)
		memset(p->addr, fill, 2 * MiB);
	state(p, RPMEM_POOL_CONSISTENT, "");
	return p;
}

/*
 * an interrupted sync of a dir region's pool: blocks PRESERVEd through
 * the journal thread and by a WRITE of its own, overwritten, the pool
 * closed (rpmemd gone) and reopened: the rollback gives generation 1 back
 */
static void rollback_after_reopen(struct fx *fx, const char *name)
{
	struct rpmemd_region *r = region(fx, name);
	struct rpmemd_meta m;
	uint64_t gen = 0;
	char err[256];

	struct rpmemd_pool *p = mirrored(r, 'A');
	assert_int_equal(pending(r, &gen), 0);
	state(p, RPMEM_POOL_SYNCING, "h:/b");
	assert_int_equal(pending(r, &gen), 1);
	assert_int_equal(gen, 1);
	struct rpmem_preserve_range ahead = { 0, MiB }, own = { MiB, 4096 },
				    w = { 4096, 8192 };
	assert_int_equal(rpmemd_pool_preserve_async(p, &ahead, 1), 0);
	/* a WRITE waits for its blocks in the journal thread's queue */
	assert_int_equal(rpmemd_pool_preserve(p, &w, 1), 0);
	memset(p->addr, 'B', MiB);
	assert_int_equal(rpmemd_pool_preserve(p, &own, 1), 0);
	memset(p->addr + MiB, 'C', 4096);
	rpmemd_pool_close(&p, RPMEM_OPEN_RW, 1);

	p = open_rw(r);
	assert_int_equal(pending(r, &gen), 1);
	assert_int_equal(rpmemd_pool_rollback(p, &m, err, sizeof(err)), 0);
	assert_int_equal(m.state, RPMEM_POOL_CONSISTENT);
	assert_int_equal(m.generation, 1);
	assert_string_equal(m.source, "h:/a");
	for (uint64_t i = 0; i < 2 * MiB; i++)
		if (p->addr[i] != 'A')
			fail_msg("byte %llu is %c", (unsigned long long)i,
				 p->addr[i]);
	assert_int_equal(pending(r, &gen), 0);
	assert_int_not_equal(rpmemd_pool_rollback(p, &m, err, sizeof(err)), 0);
	/* a live replica's syncing keeps none; the commit removes one */
	state(p, RPMEM_POOL_SYNCING, "h:/a (live)");
	assert_int_equal(pending(r, &gen), 0);
	state(p, RPMEM_POOL_CONSISTENT, "");
	state(p, RPMEM_POOL_SYNCING, "h:/c");
	assert_int_equal(pending(r, &gen), 1);
	state(p, RPMEM_POOL_CONSISTENT, "");
	assert_int_equal(pending(r, &gen), 0);
	assert_int_equal(faccessat(rpmemd_store_undo_dir(r), "a.undo", F_OK,
				   0), -1);
	rpmemd_pool_close(&p, RPMEM_OPEN_RW, 1);
	rpmemd_region_put(&r);
}

static void atomic_sync__rollback_after_reopen(void **state_)
{
	rollback_after_reopen(*state_, "d");
}

/* the same on a devdax region: its journal in its undo_dir */
static void atomic_sync__devdax_rollback_after_reopen(void **state_)
{
	rollback_after_reopen(*state_, "x");
}

/* undo_file -- the journal of pool a is in directory dir */
static int undo_file(const char *dir)
{
	char fn[160];
	snprintf(fn, sizeof(fn), "%s/a.undo", dir);
	return access(fn, F_OK) == 0;
}

/*
 * a devdax pool's journal is in its region's undo_dir, not beside it;
 * rpmemd killed after the commit's metadata (journal of N beside a pool
 * at N + 1): the stale journal goes at the next open; a forced remove
 * takes an interrupted sync's journal with it
 */
static void atomic_sync__devdax_journal_in_undo_dir(void **state_)
{
	struct fx *fx = *state_;
	struct rpmemd_region *r = region(fx, "x");
	uint64_t gen = 0;
	char err[256], stale[256];

	assert_int_equal(rpmemd_pool_create(r, "a", 2 * MiB, err, sizeof(err)),
			 0);
	struct rpmemd_pool *p = open_rw(r);
	state(p, RPMEM_POOL_SYNCING, "h:/a");
	assert_false(undo_file(fx->undo)); /* a first mirror keeps none */
	state(p, RPMEM_POOL_CONSISTENT, "");
	state(p, RPMEM_POOL_SYNCING, "h:/b");
	assert_true(undo_file(fx->undo));
	assert_int_equal(pending(r, &gen), 1);
	assert_int_equal(gen, 1);
	snprintf(stale, sizeof(stale), "cp %s/a.undo %s/a.old", fx->undo,
		 fx->undo);
	assert_int_equal(system(stale), 0);
	state(p, RPMEM_POOL_CONSISTENT, "");
	assert_false(undo_file(fx->undo));
	rpmemd_pool_close(&p, RPMEM_OPEN_RW, 1);
	/* the journal of generation 1 back beside the pool at 2 */
	snprintf(stale, sizeof(stale), "mv %s/a.old %s/a.undo", fx->undo,
		 fx->undo);
	assert_int_equal(system(stale), 0);
	assert_int_equal(pending(r, &gen), 0);
	p = open_rw(r);
	assert_false(undo_file(fx->undo));
	/* an interrupted sync, its pool removed by force */
	state(p, RPMEM_POOL_SYNCING, "h:/c");
	assert_true(undo_file(fx->undo));
	rpmemd_pool_close(&p, RPMEM_OPEN_RW, 1);
	assert_int_equal(rpmemd_pool_remove(r, "a", 1, err, sizeof(err)), 0);
	assert_false(undo_file(fx->undo));
	rpmemd_region_put(&r);
}

/*
 * its undo_dir gone under a running rpmemd: the sync is refused, the
 * pool stays consistent with its bytes
 */
static void atomic_sync__devdax_undo_dir_gone(void **state_)
{
	struct fx *fx = *state_;
	struct rpmemd_region *r = region(fx, "x");
	struct rpmemd_meta m;
	char err[256];

	struct rpmemd_pool *p = mirrored(r, 'A');
	assert_int_equal(rmdir(fx->undo), 0);
	assert_int_not_equal(rpmemd_pool_set_state(p, RPMEM_POOL_SYNCING,
						   "h:/b", 0, 0, &m, err,
						   sizeof(err)), 0);
	assert_non_null(strstr(err, "stays consistent"));
	assert_non_null(strstr(err, fx->undo));
	rpmemd_pool_get_meta(p, &m);
	assert_int_equal(m.state, RPMEM_POOL_CONSISTENT);
	assert_int_equal(m.generation, 1);
	assert_int_equal(p->addr[0], 'A');
	rpmemd_pool_close(&p, RPMEM_OPEN_RW, 1);
	rpmemd_region_put(&r);
}

/*
 * without undo_dir: the default in $STATE_DIRECTORY (created), or
 * without one no journal (not atomic), as a reload that drops it says
 */
static void atomic_sync__devdax_default_undo_dir(void **state_)
{
	struct fx *fx = *state_;
	struct rpmemd_region *r;
	struct rpmemd_meta m;
	uint64_t gen = 0;
	char err[256], sd[96], dflt[128];

	snprintf(sd, sizeof(sd), "%s/state", fx->dir);
	snprintf(dflt, sizeof(dflt), "%s/undo/x", sd);
	assert_int_equal(mkdir(sd, 0700), 0);
	assert_int_equal(setenv("STATE_DIRECTORY", sd, 1), 0);
	assert_int_equal(regions(fx, ""), 0);
	r = region(fx, "x");
	assert_string_equal(r->undo_path, dflt);
	struct rpmemd_pool *p = mirrored(r, 0);
	state(p, RPMEM_POOL_SYNCING, "h:/b");
	assert_true(undo_file(dflt));
	state(p, RPMEM_POOL_CONSISTENT, "");
	rpmemd_pool_close(&p, RPMEM_OPEN_RW, 1);
	rpmemd_region_put(&r);

	/* rpmemd started without a state directory: the region anew */
	assert_int_equal(unsetenv("STATE_DIRECTORY"), 0);
	snprintf(err, sizeof(err), "%s/nowhere", fx->dir);
	assert_int_equal(regions(fx, err), 0);
	assert_int_equal(regions(fx, ""), 0);
	r = region(fx, "x");
	assert_int_equal(rpmemd_store_undo_dir(r), -ENOTSUP);
	p = open_rw(r);
	state(p, RPMEM_POOL_SYNCING, "h:/c");
	assert_int_equal(pending(r, &gen), 0);
	struct rpmem_preserve_range w = { 0, 4096 };
	assert_int_equal(rpmemd_pool_preserve_async(p, &w, 1), 0);
	assert_int_equal(rpmemd_pool_preserve(p, &w, 1), 0);
	assert_int_equal(rpmemd_pool_rollback(p, &m, err, sizeof(err)),
			 -EINVAL);
	assert_false(undo_file(dflt));
	assert_false(undo_file(fx->undo));
	rpmemd_pool_close(&p, RPMEM_OPEN_RW, 1);
	rpmemd_region_put(&r);
}

/* an undo_dir that cannot be opened: the region is not served */
static void atomic_sync__devdax_undo_dir_missing(void **state_)
{
	struct fx *fx = *state_;
	struct rpmemd_region *r = NULL;
	char bad[128];

	snprintf(bad, sizeof(bad), "%s/nowhere", fx->dir);
	assert_int_equal(regions(fx, bad), 0);
	assert_int_equal(rpmemd_region_get(fx->set, "x", &r), -ENODEV);
	/* the device is free again: a good undo_dir serves it */
	assert_int_equal(regions(fx, fx->undo), 0);
	r = region(fx, "x");
	assert_int_equal(rpmemd_store_undo_dir(r) >= 0, 1);
	rpmemd_region_put(&r);
}

/* gen_of -- the open pool's generation */
static uint64_t gen_of(struct rpmemd_pool *p)
{
	struct rpmemd_meta m;
	rpmemd_pool_get_meta(p, &m);
	return m.generation;
}

/* a cut asked for from another thread, as another session would */
struct cut_req {
	struct rpmemd_pool *p;
	unsigned wait_ms;
	uint64_t gen;
	int ret;
	char err[256];
};

/* cut_thread -- rpmemd_pool_cut of the request */
static void *cut_thread(void *arg)
{
	struct cut_req *c = arg;
	c->ret = rpmemd_pool_cut(c->p, c->wait_ms, &c->gen, c->err,
				 sizeof(c->err));
	return NULL;
}

/* cut_wanted -- a cut waits for the writer's next drain boundary */
static int cut_wanted(struct rpmemd_pool *p)
{
	struct rpmemd_pool_history *h = history_of(p);

	pthread_mutex_lock(&h->cut_lock);
	int want = h->cut_want > 0;
	pthread_mutex_unlock(&h->cut_lock);
	return want;
}

/*
 * versions of a live pool: refused where the region keeps none, for a
 * pool that is not live, and while an RDMA writer bypasses rpmemd (the
 * generation unchanged); cut at once at a drain boundary, else by the
 * writer's next FLUSH or BARRIER (rpmemd_pool_drained), else after the
 * wait at a request boundary; each cut keeps the previous journal as a
 * version and opens a new one bound to the new generation
 */
static void live_cut__drain_boundary_and_refusals(void **state_)
{
	struct fx *fx = *state_;
	struct rpmemd_region *r = region(fx, "d");
	struct cut_req c = { 0 };
	pthread_t t;
	uint64_t gen = 0, g0;
	char err[256];

	struct rpmemd_pool *p = mirrored(r, 0);
	state(p, RPMEM_POOL_SYNCING, "h:/a (live)");
	g0 = gen_of(p);
	assert_int_equal(rpmemd_pool_cut(p, 0, &gen, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "keeps no versions"));
	r->cfg.versions = 1;
	/* the live stream journals where the region keeps versions */
	state(p, RPMEM_POOL_CONSISTENT, "");
	state(p, RPMEM_POOL_SYNCING, "h:/a (live)");
	assert_non_null(rpmemd_journal_undo(p));
	g0 = gen_of(p);
	p->rdma_writers = 1;
	assert_int_equal(rpmemd_pool_cut(p, 0, &gen, err, sizeof(err)),
			 -EXDEV);
	assert_non_null(strstr(err, "written over RDMA"));
	assert_int_equal(gen_of(p), g0);
	p->rdma_writers = 0;
	/* at a drain boundary (no WRITE since the last FLUSH): at once */
	assert_int_equal(rpmemd_pool_cut(p, 0, &gen, err, sizeof(err)), 0);
	assert_int_equal(gen, g0 + 1);
	assert_int_equal(gen_of(p), g0 + 1);
	/* a WRITE since: the writer's next FLUSH makes the cut */
	rpmemd_pool_write_begin(p);
	memset(p->addr, 'W', 4096);
	rpmemd_pool_write_end(p);
	c.p = p;
	c.wait_ms = 600000;
	assert_int_equal(pthread_create(&t, NULL, cut_thread, &c), 0);
	WAIT_UNTIL(cut_wanted(p));
	assert_int_equal(gen_of(p), g0 + 1);
	rpmemd_pool_drained(p);
	pthread_join(t, NULL);
	assert_int_equal(c.ret, 0);
	assert_int_equal(c.gen, g0 + 2);
	/* a WRITE and no drain within the wait: cut between requests */
	rpmemd_pool_write_begin(p);
	rpmemd_pool_write_end(p);
	assert_int_equal(rpmemd_pool_cut(p, 1, &gen, err, sizeof(err)), 0);
	assert_int_equal(gen, g0 + 3);
	/* each cut kept the journal before it as a version */
	struct rpmemd_version *v = NULL;
	struct rpmemd_meta m;
	size_t n = 0;
	rpmemd_pool_get_meta(p, &m);
	assert_int_equal(rpmemd_versions_list(r, "a", &m, &v, &n), 0);
	assert_int_equal(n, 3);
	assert_int_equal(v[0].gen, g0);
	assert_int_equal(v[n - 1].gen, g0 + 2);
	assert_string_equal(v[n - 1].source, "h:/a (live)");
	free(v);
	/* no longer live: refused */
	state(p, RPMEM_POOL_CONSISTENT, "");
	assert_int_equal(rpmemd_pool_cut(p, 0, &gen, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "is not live"));
	rpmemd_pool_close(&p, RPMEM_OPEN_RW, 1);
	rpmemd_region_put(&r);
}

/* a keeper that counts its states, and one whose attach fails on demand */
static unsigned attached, detached, fail_attach;
static int marker;

static int count_attach(struct rpmemd_pool *p, void **st)
{
	(void)p;
	attached++;
	*st = &marker;
	return 0;
}

static void count_detach(void *st)
{
	assert_ptr_equal(st, &marker);
	detached++;
}

static int fail_attach_hook(struct rpmemd_pool *p, void **st)
{
	(void)p;
	if (fail_attach)
		return -ENOMEM;
	*st = &marker;
	return 0;
}

static const struct rpmemd_keeper counting = { .attach = count_attach,
					       .detach = count_detach };
static const struct rpmemd_keeper failing = { .attach = fail_attach_hook,
					      .detach = count_detach };
static const struct rpmemd_keeper extra = { 0 };

/*
 * each layer's state of a pool lives in the slot its keeper was given:
 * made when the pool object is, let go when it is freed; an attach that
 * fails refuses the open with its error, the states already made let go
 * (the journal's and history's too: ASan's leak check), and a later open
 * succeeds
 */
static void keepers__state_slots_and_a_failed_attach(void **state_)
{
	struct fx *fx = *state_;
	struct rpmemd_region *r = region(fx, "d");
	struct rpmemd_pool *p = NULL;
	char err[256];

	/* the journal's and history's slots are 0 and 1 (history.c) */
	int c = rpmemd_store_add_keeper(&counting);
	assert_int_equal(c, 2);
	assert_int_equal(rpmemd_store_add_keeper(&failing), 3);
	assert_int_equal(rpmemd_store_add_keeper(&counting), c);
	assert_int_equal(rpmemd_store_add_keeper(&extra), -1);
	assert_int_equal(rpmemd_pool_create(r, "a", 2 * MiB, err, sizeof(err)),
			 0);
	fail_attach = 1;
	assert_int_equal(rpmemd_pool_open(r, "a", RPMEM_OPEN_RW, 1, "t", &p,
					  err, sizeof(err)), -ENOMEM);
	assert_null(p);
	assert_non_null(strstr(err, "pool 'a'"));
	assert_int_equal(attached, 1);
	assert_int_equal(detached, 1);
	fail_attach = 0;
	p = open_rw(r);
	assert_ptr_equal(p->kept[c], &marker);
	assert_non_null(p->kept[0]);
	assert_non_null(p->kept[1]);
	state(p, RPMEM_POOL_SYNCING, "h:/a");
	state(p, RPMEM_POOL_CONSISTENT, "");
	assert_int_equal(attached, 2);
	assert_int_equal(detached, 1);
	rpmemd_pool_close(&p, RPMEM_OPEN_RW, 1);
	assert_int_equal(detached, 3); /* counting's and failing's */
	rpmemd_region_put(&r);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(region_ops__set_by_type),
		T(pool_lifecycle__dir_region),
		T(pool_lifecycle__devdax_region),
		T(atomic_sync__rollback_after_reopen),
		T(atomic_sync__devdax_rollback_after_reopen),
		T(atomic_sync__devdax_journal_in_undo_dir),
		T(atomic_sync__devdax_undo_dir_gone),
		T(atomic_sync__devdax_default_undo_dir),
		T(atomic_sync__devdax_undo_dir_missing),
		T(live_cut__drain_boundary_and_refusals),
		T(keepers__state_slots_and_a_failed_attach), /* the last */
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
