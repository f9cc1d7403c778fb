/* SPDX-License-Identifier: BSD-3-Clause */
/* preload.h -- internals of librpmem_preload, replication by LD_PRELOAD */
#ifndef RPMEM_PRELOAD_H
#define RPMEM_PRELOAD_H 1

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "librpmemctl.h"
#include "util.h"

/*
 * The library's parts: config.c reads the environment, maps.c knows which
 * address ranges of the process are mappings of configured files,
 * remote.c drives one replication link (librpmemctl) per configured
 * file (bring-up, writes, drains, failures, the final sync), interpose.c
 * holds the interposed libc, libpmem and libpmem2 entry points, order.c
 * tells a libpmemobj drain that may be a barrier, signals.c keeps
 * librpmemctl's SIGBUS handler under the application's own.
 */

#define PL_FILES_MAX 16	   /* configured files */
#define PL_MAPS_MAX 64	   /* tracked mappings of them */
#define PL_MSG_MAX 512
#define PL_TARGETS_MAX 8   /* targets of one file */
#define PL_TARGET_LEN 400  /* "[rpmem://]host[:port]/region/pool" */

enum pl_policy {
	PL_FAIL_STOP = 0, /* a failed replication stops the process */
	PL_DEGRADED = 1,  /* it continues unreplicated and resyncs later */
};

struct pl_file;

/* one target of a file: what its link's notify hook is told about */
struct pl_target {
	struct pl_file *f;
	unsigned i;		 /* its index: its log is PATH.rpmemlog[.i] */
	int behind;		 /* degraded since its last push */
	char spec[PL_TARGET_LEN]; /* as configured, for messages */
};

/* a configured local file and its replicas */
struct pl_file {
	char path[PATH_MAX];		 /* absolute */
	char target[PL_TARGET_LEN];	 /* the first, as configured */
	struct rpmem_target t;		 /* the first */
	unsigned ntargets;
	struct pl_target targets[PL_TARGETS_MAX];
	char source[RPMEM_STR_MAX + 1];	 /* "host:path", for syncs */
	char live_src[RPMEM_STR_MAX + 1]; /* "host:path (live)" */
	/*
	 * read: the calls on the set (writes, barriers, drains: the set
	 * serializes them itself); write: start and stop
	 */
	pthread_rwlock_t lock;
	int started;	     /* mapped once: shadow, link or degraded */
	int below_k;	     /* degraded below the quorum: said so */
	uint64_t size;	     /* of the file when it was first mapped */
	dev_t dev;
	ino_t ino;
	uint8_t *shadow;     /* our own shared mapping of the whole file */
	/* a link per target (the replication lifecycle), k of n */
	struct rpmemctl_links *set;
	/*
	 * PATH.rpmemlog (target i > 0: PATH.rpmemlog.i): the extents
	 * written since that replica was last equal; set before the first
	 * mapping is tracked, never closed
	 */
	struct rpmemctl_dirtylog *log[PL_TARGETS_MAX];
	atomic_int log_bad;  /* a mark failed: the log is not to be used */
	int log_new;	     /* this process created the logs */
	char errmsg[PL_MSG_MAX];
};

enum pl_drain_mode {
	/* libpmemobj's drains inside a transaction are ordered barriers */
	PL_DRAIN_COMMIT = 0,
	PL_DRAIN_EVERY = 1, /* every drain waits for the target */
};

struct pl_config {
	unsigned nfiles;
	struct pl_file files[PL_FILES_MAX];
	enum pl_policy policy;
	long retry_s; /* degraded: seconds between reconnects; -1 never */
	enum rpmemctl_transport transport;
	enum pl_drain_mode drain;
	unsigned quorum; /* the variable or replicate.quorum; 0: every target */
	int spin_us;	 /* RPMEM_REPLICATE_SPIN; -1: the library's default */
	long kickout_ms; /* RPMEM_REPLICATE_KICKOUT; -1: the library's */
	uint64_t kickout_bytes; /* RPMEM_REPLICATE_KICKOUT_BYTES; 0: none */
	int verbose;  /* RPMEM_LOG_LEVEL is info or debug */
	int lib_prio; /* RPMEM_LOG_LEVEL as LOG_*, -1 unset: pl_log drops */
};

extern struct pl_config pl_cfg;
/*
 * set while the library itself runs librpmemctl or a real libpmem call:
 * calls made meanwhile are only forwarded (initial-exec: the library is
 * preloaded, its TLS is static)
 */
extern __thread int pl_busy __attribute__((tls_model("initial-exec")));

/* --- config.c ------------------------------------------------------------ */

/*
 * pl_config_parse -- fill c from the values of RPMEM_REPLICATE,
 * RPMEM_REPLICATE_POLICY, RPMEM_REPLICATE_RETRY and
 * RPMEM_REPLICATE_TRANSPORT (each may be NULL: the default); relative
 * paths are taken from cwd. Returns 0, or -EINVAL with the reason in err.
 */
int pl_config_parse(struct pl_config *c, const char *spec, const char *policy,
		    const char *retry, const char *transport, const char *cwd,
		    char *err, size_t errlen);
/*
 * pl_config_drain -- RPMEM_REPLICATE_DRAIN ("commit", the default, or
 * "every") into c; 0 or -EINVAL with the reason in err
 */
int pl_config_drain(struct pl_config *c, const char *drain, char *err,
		    size_t errlen);
/*
 * pl_config_quorum -- RPMEM_REPLICATE_QUORUM (NULL or "": every target)
 * into c, after pl_config_parse: 1 to the number of targets of every
 * file; 0 or -EINVAL with the reason in err
 */
int pl_config_quorum(struct pl_config *c, const char *quorum, char *err,
		     size_t errlen);
/*
 * pl_config_quorum_cfg -- without RPMEM_REPLICATE_QUORUM: the client
 * configuration's replicate.quorum (rpmemctl.conf, the user's else the
 * system's) into c, after pl_config_parse, checked as the variable is;
 * 0 (unset there too: every target) or -EINVAL with the reason in err
 */
int pl_config_quorum_cfg(struct pl_config *c, char *err, size_t errlen);
/*
 * pl_config_spin -- RPMEM_REPLICATE_SPIN (NULL or "": the library's
 * default) into c: microseconds, 0 to 10000; 0 or -EINVAL with the
 * reason in err
 */
int pl_config_spin(struct pl_config *c, const char *spin, char *err,
		   size_t errlen);
/*
 * pl_config_kickout -- RPMEM_REPLICATE_KICKOUT (milliseconds, 0 to
 * RPMEMCTL_KICKOUT_MS_MAX; NULL or "": the library's default) and
 * RPMEM_REPLICATE_KICKOUT_BYTES (a size, "64M"; NULL or "": no bound)
 * into c; 0 or -EINVAL with the reason in err
 */
int pl_config_kickout(struct pl_config *c, const char *ms, const char *bytes,
		      char *err, size_t errlen);
/* pl_init -- parse the environment once; an invalid one stops the process */
void pl_init(void);

/* --- maps.c -------------------------------------------------------------- */

/* the pieces of one flushed range looked up at most (pl_maps_lookup) */
#define PL_HITS_MAX 4

/* a piece of a flushed range that lies in a configured file's mapping */
struct pl_hit {
	struct pl_file *f;
	uint64_t off; /* in the file */
	uint64_t len;
};

extern atomic_uint pl_nmaps; /* slots in use, 0 = nothing to look up */

/* pl_maps_add -- [addr, addr + len) maps f from file offset off */
int pl_maps_add(void *addr, size_t len, uint64_t off, struct pl_file *f);
/* pl_maps_remove -- forget [addr, addr + len) (munmap, MAP_FIXED) */
void pl_maps_remove(void *addr, size_t len);
/* pl_maps_lookup -- the pieces of [addr, addr + len) in configured files */
unsigned pl_maps_lookup(const void *addr, size_t len, struct pl_hit *hits,
			unsigned max);
/* pl_maps_forget_all -- a forked child replicates nothing */
void pl_maps_forget_all(void);

/* --- remote.c ------------------------------------------------------------ */

/*
 * the files (bit i: pl_cfg.files[i]) the calling thread wrote to since
 * its last drain of them that waited: a thread's drain waits for its own
 * writes (the set's group commit, docs/ARCHITECTURE.md)
 */
extern __thread unsigned pl_dirty __attribute__((tls_model("initial-exec")));

/*
 * pl_file_start -- the first mapping of f (fd) in this process: map the
 * whole file, open the replica, bring it up to date, mark it syncing
 * (live). f->lock held. Returns 0 (also when degraded), or -errno under
 * fail-stop, with the reason reported.
 */
int pl_file_start(struct pl_file *f, int fd);
/*
 * pl_mark -- [addr, addr + len) is about to be flushed: mark its configured
 * parts in their dirty logs. Returns 1 if it did, with the sync lock held
 * for reading until pl_mark_done (no push may clear the logs between a
 * mark and the local flush it precedes), else 0.
 */
int pl_mark(const void *addr, size_t len);
/* pl_mark_done -- the flush that pl_mark preceded is done */
void pl_mark_done(void);
/* pl_flushed -- [addr, addr + len) was flushed: write its configured parts */
void pl_flushed(const void *addr, size_t len);
/*
 * pl_drain -- every write so far is persistent on its target; ordered:
 * only ordered before every later write (barriers), not waited for
 */
void pl_drain(int ordered);
/* pl_commit -- a point the application is promised durability: wait */
void pl_commit(void);

/* --- order.c ------------------------------------------------------------- */

/*
 * pl_order_refresh -- find libpmemobj's code and pmemobj_tx_stage, if
 * the process has them (at the start of a replica)
 */
void pl_order_refresh(void);
/*
 * pl_may_order -- a drain called from ra may be a barrier: the mode is
 * commit, ra is in libpmemobj, and this thread's transaction is in its
 * work stage (nothing has been promised durable yet)
 */
int pl_may_order(const void *ra);
/* pl_stop_all -- clean exit: final sync, replicas consistent, closed */
void pl_stop_all(void);
/* pl_forked -- in a forked child: drop every replica without a word */
void pl_forked(void);

/* --- interpose.c --------------------------------------------------------- */

/* the real mmap and munmap (libc's) */
void *pl_real_mmap(void *addr, size_t len, int prot, int flags, int fd,
		   off_t off);
int pl_real_munmap(void *addr, size_t len);

/* --- signals.c ----------------------------------------------------------- */

/*
 * pl_signals_interpose -- from now on the process's changes of SIGBUS's
 * action go to librpmemctl, whose handler stays (rpmemctl_sigbus_*)
 */
void pl_signals_interpose(void);

/* --- log ------------------------------------------------------------------ */

/* pl_msg -- "rpmem_preload: ..." on stderr and to syslog at prio */
__attribute__((format(printf, 2, 3))) void pl_msg(int prio, const char *fmt,
						   ...);
/*
 * pl_log -- the log of our sessions (rpmemctl_session_cfg_set_log): the
 * library's lines about them as ours (pl_msg), up to RPMEM_LOG_LEVEL, and
 * none without it; never the application's log
 */
void pl_log(int prio, const char *msg, void *arg);

#endif
