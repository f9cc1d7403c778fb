/* SPDX-License-Identifier: BSD-3-Clause */
/* cmd.h -- rpmemctl: command context, exit codes and shared helpers */
#ifndef RPMEMCTL_CMD_H
#define RPMEMCTL_CMD_H

#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "librpmemctl.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* exit codes of rpmemctl (documented in rpmemctl(1)) */
enum cmd_exit {
	CMD_EXIT_OK = 0,
	CMD_EXIT_DIFFER = 1,   /* verify found differences */
	CMD_EXIT_USAGE = 2,    /* bad option, target, size or name */
	CMD_EXIT_CONNECT = 3,  /* cannot connect, handshake, auth, lost */
	CMD_EXIT_REFUSED = 4,  /* the target refused (ERROR reply) */
	CMD_EXIT_LOCAL = 5,    /* local file missing, unreadable, wrong size */
	CMD_EXIT_INTERNAL = 6, /* internal, protocol or output error */
	CMD_EXIT_DAMAGED = 7,  /* scrub found damaged data on the target */
	CMD_EXIT_UNVERIFIED = 8, /* scrub: nothing damaged, some unverifiable */
	CMD_EXIT_BELOW_QUORUM = 9, /* replicas: fewer than k copies hold */
};

struct rpmemctl_ctx {
	int verbose;     /* -v, may be repeated */
	int quiet;       /* -q: no informational lines */
	int json;        /* the command was given --json */
	int mute;        /* messages are not printed (a retry's failures) */
	const char *cmd; /* name of the running command */
	const char *usage; /* its usage text, once cmd_getopt has seen it */
	/* credentials (--config, --psk-file, ...; rpmemctl.conf otherwise) */
	const char *config;
	const char *psk_file;
	const char *psk_identity;
	const char *tls_ca;
	const char *tls_cert;
	const char *tls_key;
	const char *tls_name; /* --tls-name: the target's certificate name */
	int plaintext;	      /* --plaintext: no credentials, not loopback */
	int no_progress;      /* several transfers at once: no progress line */
};

typedef int (*cmd_fn)(int argc, char **argv, struct rpmemctl_ctx *ctx);

int cmd_list(int argc, char **argv, struct rpmemctl_ctx *ctx);
int cmd_create(int argc, char **argv, struct rpmemctl_ctx *ctx);
int cmd_remove(int argc, char **argv, struct rpmemctl_ctx *ctx);
int cmd_rollback(int argc, char **argv, struct rpmemctl_ctx *ctx);
int cmd_promote(int argc, char **argv, struct rpmemctl_ctx *ctx);
int cmd_demote(int argc, char **argv, struct rpmemctl_ctx *ctx);
int cmd_mirror(int argc, char **argv, struct rpmemctl_ctx *ctx);
int cmd_sync(int argc, char **argv, struct rpmemctl_ctx *ctx);
int cmd_verify(int argc, char **argv, struct rpmemctl_ctx *ctx);
int cmd_status(int argc, char **argv, struct rpmemctl_ctx *ctx);
int cmd_bench(int argc, char **argv, struct rpmemctl_ctx *ctx);
int cmd_psk_gen(int argc, char **argv, struct rpmemctl_ctx *ctx);
int cmd_kick(int argc, char **argv, struct rpmemctl_ctx *ctx);
int cmd_events(int argc, char **argv, struct rpmemctl_ctx *ctx);
int cmd_export(int argc, char **argv, struct rpmemctl_ctx *ctx);
int cmd_import(int argc, char **argv, struct rpmemctl_ctx *ctx);
int cmd_scrub(int argc, char **argv, struct rpmemctl_ctx *ctx);
int cmd_versions(int argc, char **argv, struct rpmemctl_ctx *ctx);
int cmd_replicas(int argc, char **argv, struct rpmemctl_ctx *ctx);

/*
 * cmd_prometheus -- a daemon's status and pools in the Prometheus text
 * exposition format (rpmemctl status --prometheus); cmd_prometheus_down --
 * only rpmem_up 0, for a daemon that did not answer
 */
void cmd_prometheus(FILE *f, const char *hp, const struct rpmemctl_status *st,
		    const struct rpmemctl_list *l);
void cmd_prometheus_down(FILE *f, const char *hp);

/* --- option parsing (options.c) ------------------------------------------- */

/* long options every command accepts besides its own */
enum {
	CMD_OPT_HELP = 'h',
	CMD_OPT_VERBOSE = 'v',
	CMD_OPT_QUIET = 'q',
	CMD_OPT_JSON = 0x100,
	CMD_OPT_TRANSPORT,
	CMD_OPT_BLOCK_SIZE,
	CMD_OPT_CONFIG,
	CMD_OPT_PSK_FILE,
	CMD_OPT_PSK_IDENTITY,
	CMD_OPT_TLS_CA,
	CMD_OPT_TLS_CERT,
	CMD_OPT_TLS_KEY,
	CMD_OPT_TLS_NAME,
	CMD_OPT_PLAINTEXT,
	CMD_OPT_BWLIMIT,
	CMD_OPT_NO_HISTORY,
	CMD_OPT_DISCARD_TARGET,
	CMD_OPT_FIRST_PRIVATE, /* first value free for a command's options */
};

#define CMD_CRED_OPTS                                                         \
	{ "config", required_argument, NULL, CMD_OPT_CONFIG },                \
	{ "psk-file", required_argument, NULL, CMD_OPT_PSK_FILE },            \
	{ "psk-identity", required_argument, NULL, CMD_OPT_PSK_IDENTITY },    \
	{ "tls-ca", required_argument, NULL, CMD_OPT_TLS_CA },                \
	{ "tls-cert", required_argument, NULL, CMD_OPT_TLS_CERT },            \
	{ "tls-key", required_argument, NULL, CMD_OPT_TLS_KEY },              \
	{ "tls-name", required_argument, NULL, CMD_OPT_TLS_NAME },            \
	{ "plaintext", no_argument, NULL, CMD_OPT_PLAINTEXT }

#define CMD_COMMON_OPTS                                                       \
	{ "help", no_argument, NULL, CMD_OPT_HELP },                          \
	{ "verbose", no_argument, NULL, CMD_OPT_VERBOSE },                    \
	{ "quiet", no_argument, NULL, CMD_OPT_QUIET }, CMD_CRED_OPTS

/*
 * the options of the transfer commands, decoded by cmd_xfer_opt: every
 * one takes CMD_XFER_OPTS; a push (sync, mirror) CMD_PUSH_OPTS; a
 * comparison (sync, verify) CMD_CMP_OPTS
 */
#define CMD_XFER_OPTS                                                         \
	CMD_COMMON_OPTS, { "json", no_argument, NULL, 'j' },                  \
	{ "transport", required_argument, NULL, 't' }
#define CMD_PUSH_OPTS                                                         \
	{ "bwlimit", required_argument, NULL, CMD_OPT_BWLIMIT },              \
	{ "no-history", no_argument, NULL, CMD_OPT_NO_HISTORY },              \
	{ "discard-target", no_argument, NULL, CMD_OPT_DISCARD_TARGET }
#define CMD_CMP_OPTS                                                          \
	{ "at", required_argument, NULL, 'a' },                               \
	{ "block-size", required_argument, NULL, 'b' }

/*
 * cmd_cred_opt -- take a credential option c (its argument arg) into
 * ctx; 1 if c was one
 */
int cmd_cred_opt(struct rpmemctl_ctx *ctx, int c, const char *arg);
#define CMD_COMMON_SHORT ":hvq"

/*
 * cmd_getopt -- getopt_long for a command: handles -h, -v, -q, -j (if
 * the command takes it) and option errors. Returns the option, -1 at the
 * end, or -2 when the command must return *code (usage printed, or an
 * error reported).
 */
int cmd_getopt(struct rpmemctl_ctx *ctx, int argc, char **argv,
	       const char *shortopts, const struct option *longopts,
	       const char *usage, int *code);
/* cmd_usage_error -- report a usage problem; returns CMD_EXIT_USAGE */
int cmd_usage_error(struct rpmemctl_ctx *ctx, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/*
 * cmd_parse_num -- a plain decimal number 1 .. max (no sign, nothing
 * after it) into *out; 0, or -EINVAL
 */
int cmd_parse_num(const char *s, uint64_t max, uint64_t *out);
/* cmd_check_args -- min..max positional arguments remain after options */
int cmd_check_args(struct rpmemctl_ctx *ctx, int argc, char **argv, int min,
		   int max);

int cmd_parse_transport(struct rpmemctl_ctx *ctx, const char *s,
			enum rpmemctl_transport *out);
int cmd_parse_size(struct rpmemctl_ctx *ctx, const char *what, const char *s,
		   uint64_t *out);
/*
 * cmd_parse_bwlimit -- --bwlimit RATE: bytes per second with K, M, G
 * (powers of 1024) and an optional "/s"; at least 4K
 */
int cmd_parse_bwlimit(struct rpmemctl_ctx *ctx, const char *s, uint64_t *out);
int cmd_parse_block_size(struct rpmemctl_ctx *ctx, const char *s,
			 uint32_t *out);
/* cmd_parse_interval -- "500ms", "5s", "1m" (1 ms to 24 h) into ns */
int cmd_parse_interval(struct rpmemctl_ctx *ctx, const char *s,
		       uint64_t *out);
/*
 * struct cmd_target -- a target as rpmemctl_target_parse read it: port
 * always set (RPMEMCTL_DEFAULT_PORT if not given), region and pool ""
 * if not given
 */
struct cmd_target {
	char host[256];
	char port[16];
	char region[RPMEMCTL_NAME_MAX + 1];
	char pool[RPMEMCTL_NAME_MAX + 1];
};

/*
 * cmd_parse_target -- a target (flags RPMEMCTL_TARGET_*) into t before any
 * connection, or report why not; returns an exit code
 */
int cmd_parse_target(struct rpmemctl_ctx *ctx, const char *s, unsigned need,
		     struct cmd_target *t);
/* cmd_target_fill -- the same without a word: 0, -EINVAL (why in err) */
int cmd_target_fill(const char *s, unsigned need, struct cmd_target *t,
		    char *err, size_t errlen);

/* --- messages (cli.c) ---------------------------------------------------- */

/* cmd_err -- "rpmemctl: <command>: <message>" on stderr */
void cmd_err(struct rpmemctl_ctx *ctx, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* cmd_vmsg -- "rpmemctl: <command>: <prefix><message>" on f */
void cmd_vmsg(struct rpmemctl_ctx *ctx, FILE *f, const char *prefix,
	      const char *fmt, va_list ap);
/* cmd_warn -- "rpmemctl: <command>: warning: <message>" on stderr */
void cmd_warn(struct rpmemctl_ctx *ctx, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/*
 * cmd_text -- s as people may be shown it: a terminal's controls escaped
 * (rpmemctl_text_escape). Every human-readable output of text a target
 * sent goes through it (messages, tables and the lines below do so
 * themselves). The result lives in one of a few rotating buffers: use it
 * at once, several in one printf at most.
 */
const char *cmd_text(const char *s);

/* cmd_info -- an informational line on stdout (not with -q or --json) */
void cmd_info(struct rpmemctl_ctx *ctx, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* cmd_log_level -- the library's log priority for -v, unless RPMEM_LOG_LEVEL */
void cmd_log_level(struct rpmemctl_ctx *ctx);
/* cmd_lib_log -- the library's log sink: "rpmemctl: lib: <msg>" with -v */
void cmd_lib_log(int prio, const char *msg, void *arg);
/* cmd_dbg -- a detail on stderr with -v */
void cmd_dbg(struct rpmemctl_ctx *ctx, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* cmd_human -- data lines on stdout (not with --json) */
int cmd_human(struct rpmemctl_ctx *ctx);

/* cmd_now_ns -- CLOCK_MONOTONIC in nanoseconds */
uint64_t cmd_now_ns(void);

/* cmd_finish -- flush stdout; a failed write turns code into an error */
int cmd_finish(struct rpmemctl_ctx *ctx, int code);

/* --- errors from the library --------------------------------------------- */

/* cmd_exit_code -- exit code for -errno from a call on an open session */
int cmd_exit_code(int err);
/* cmd_hint -- advice appended to an error message, "" if none */
const char *cmd_hint(int err);
/*
 * cmd_remote_err -- report a failed call on sess: "<what>: <target's
 * message>; <hint>". Returns the exit code.
 */
int cmd_remote_err(struct rpmemctl_ctx *ctx, struct rpmemctl_session *sess,
		   int err, const char *hint, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

/* --- connections and pools (connect.c) ----------------------------------- */

/* cmd_hostport -- "host:port" ("[v6]:port") of a target into buf */
const char *cmd_hostport(const struct cmd_target *t, char *buf, size_t len);
/* cmd_target_str -- "host:port/region/pool" into buf */
const char *cmd_target_str(const struct cmd_target *t, char *buf,
			   size_t len);

/*
 * Named sizes of the text buffers the commands fill (each the room for
 * what the named call writes, its NUL included):
 * CMD_HP_MAX -- cmd_hostport's "host:port"
 * CMD_TARGET_MAX -- cmd_target_str's "host:port/region/pool"
 * CMD_NUM_MAX -- a number as text: rpmemctl_size_format, cmd_fmt_u64,
 *	cmd_fmt_duration, cmd_fmt_time
 * CMD_BYTES_MAX -- cmd_fmt_bytes's "8 MiB (8388608 bytes)"
 * CMD_CELL_MAX -- one cell of a table row (a number with its note)
 * CMD_HEX64_MAX -- a 64-bit id as 16 hex digits
 * CMD_HOST_MAX -- this host's name (gethostname)
 * CMD_SOURCE_MAX -- cmd_source's "hostname:/abs/path"
 * CMD_PATH_MAX -- a local path with a suffix (".rpmemstat", a temporary
 *	file's name)
 * CMD_ARG_MAX -- an option's value, copied to be taken apart
 * CMD_WORD_MAX -- a word of a target's text (an event's action)
 * CMD_LIST_MAX -- a comma-separated list of names
 * CMD_ERR_MAX -- a parser's or reader's message into a caller's buffer
 * CMD_LINE_MAX -- a part of a message rpmemctl composes: what failed, a
 *	hint
 * CMD_MSG_MAX -- a whole message, which may quote the library's
 *	(rpmemctl_session_errmsg)
 */
#define CMD_HP_MAX 300
#define CMD_TARGET_MAX 700
#define CMD_NUM_MAX 32
#define CMD_BYTES_MAX 64
#define CMD_CELL_MAX 96
#define CMD_HEX64_MAX 17
#define CMD_HOST_MAX 256
#define CMD_SOURCE_MAX 1024
#define CMD_PATH_MAX (PATH_MAX + 104)
#define CMD_ARG_MAX 64
#define CMD_WORD_MAX 64
#define CMD_LIST_MAX 1024
#define CMD_ERR_MAX 256
#define CMD_LINE_MAX 512
#define CMD_MSG_MAX 2048

/* what a one-target command takes after its options */
struct cmd_open {
	int min, max;	 /* positional arguments, the target first */
	unsigned need;	 /* RPMEMCTL_TARGET_* of the target */
	const char *def; /* the target if none is given, or NULL */
	enum rpmemctl_transport transport;
};

/*
 * cmd_open_target -- the preamble of a one-target command after its
 * options: o->min..o->max arguments, the first the target, parsed into *t
 * with its "host:port" into hp (CMD_HP_MAX bytes), then a session into
 * *sess unless sess is NULL; 0 or an exit code, the problem reported
 */
int cmd_open_target(struct rpmemctl_ctx *ctx, int argc, char **argv,
		    const struct cmd_open *o, struct cmd_target *t, char *hp,
		    struct rpmemctl_session **sess);

/* cmd_connect -- open a session or report why not; returns an exit code */
int cmd_connect(struct rpmemctl_ctx *ctx, const struct cmd_target *t,
		enum rpmemctl_transport transport,
		struct rpmemctl_session **out);

/* cmd_source -- "hostname:/abs/path" recorded as a pool's source */
const char *cmd_source(const char *path, char *buf, size_t len);

/* --- local files (local.c) ----------------------------------------------- */

#define CMD_LOCAL_RDWR (1u << 0)   /* map for writing (pull) */
#define CMD_LOCAL_CREATE (1u << 1) /* create with create_size if missing */

struct cmd_local {
	const char *path; /* as given, not owned */
	int fd;
	void *addr;
	size_t len;
	int writable;
	int created; /* the file did not exist and was created */
};

/*
 * cmd_local_open -- open and map the whole local pool file (MAP_SHARED);
 * reports errors itself. Returns 0 or CMD_EXIT_LOCAL.
 */
int cmd_local_open(struct rpmemctl_ctx *ctx, const char *path,
		   unsigned flags, uint64_t create_size, struct cmd_local *l);
/* cmd_local_persist -- msync + fsync a writable mapping */
int cmd_local_persist(struct rpmemctl_ctx *ctx, struct cmd_local *l);
/* cmd_local_close -- unmap and close; remove the file if unlink is set */
void cmd_local_close(struct cmd_local *l, int unlink_created);

/*
 * a local file replaced whole (tmpfile.c): written into .NAME.rpmem-tmp.PID
 * beside it (its symbolic links followed), renamed over it when complete
 */
struct cmd_tmp {
	char path[4200]; /* the temporary file; "" once renamed or removed */
	char dest[4200]; /* the file it replaces, links followed */
	int fd;
	int existed; /* dest existed: its owner and mode were given to it */
};

/*
 * cmd_tmp_open -- a new temporary file of size bytes for LOCAL, with its
 * owner and mode (refused if they cannot be kept), holding its bytes if
 * copy (a reflink where the file system has them); removes the temporary
 * files of LOCAL that killed runs left. Reports errors; an exit code.
 */
int cmd_tmp_open(struct rpmemctl_ctx *ctx, const char *local, uint64_t size,
		 int copy, struct cmd_tmp *t);
/* cmd_tmp_commit -- fsync, rename over dest, fsync its directory */
int cmd_tmp_commit(struct rpmemctl_ctx *ctx, struct cmd_tmp *t);
/* cmd_tmp_abort -- the temporary file closed and removed (if still there) */
void cmd_tmp_abort(struct cmd_tmp *t);

/* --- progress ------------------------------------------------------------ */

struct cmd_progress {
	struct rpmemctl_ctx *ctx;
	const char *label;
	uint64_t start_ns;
	int enabled; /* stderr is a terminal, no -q, no --json */
	int shown;   /* a line is on the terminal */
};

void cmd_progress_init(struct cmd_progress *p, struct rpmemctl_ctx *ctx,
		       const char *label);
/* cmd_progress_cb -- an rpmemctl_progress_fn; arg is a cmd_progress */
void cmd_progress_cb(uint64_t done, uint64_t total, void *arg);
/* cmd_progress_end -- clear the progress line */
void cmd_progress_end(struct cmd_progress *p);

/* --- tables -------------------------------------------------------------- */

#define CMD_TABLE_MAX_COLS 12

struct cmd_table {
	unsigned ncols;
	unsigned nrows; /* including the header */
	unsigned cap;
	char **cells; /* nrows x ncols, owned */
	unsigned right; /* bit i: right-align column i */
};

int cmd_table_init(struct cmd_table *t, unsigned ncols, unsigned right,
		   const char *const *header);
/* cmd_table_row -- add a row of ncols cells (copied; NULL is "-") */
int cmd_table_row(struct cmd_table *t, const char *const *cells);
void cmd_table_print(const struct cmd_table *t, FILE *f);
void cmd_table_free(struct cmd_table *t);

/* --- transfers (transfer.c, shared by mirror, sync and verify) ---------- */

struct cmd_xfer {
	enum rpmemctl_sync_mode mode;
	int dry_run;
	int full;	     /* verify: the target re-hashes every block */
	int no_create;       /* push/mirror: never create the remote pool */
	uint32_t block_size; /* 0 = the library's default */
	uint64_t bwlimit;    /* bytes per second of data sent; 0 = none */
	enum rpmemctl_transport transport;
	const char *local;  /* LOCAL as given */
	const char *target; /* TARGET as given */
	/* several targets: TARGET... as given (ntargets > 1), run in parallel */
	char *const *targets;
	unsigned ntargets;
	unsigned log_index; /* push: this target's log is LOCAL.rpmemlog.i */
	/* several targets: the local file's hashes, made once, shared */
	struct rpmemctl_local_hashes *hashes;
	uint64_t follow_ns;  /* sync --follow: rounds this far apart, 0 = once */
	const char *follow_arg; /* the interval as given, for messages */
	const char *dirty_log;	/* push: --dirty-log FILE (NULL: LOCAL.rpmemlog
				 * if it exists) */
	int no_dirty_log;	/* push: --no-dirty-log */
	/* --discard-target (push, mirror), --discard-local (pull) */
	unsigned discard;
	int no_history;		/* --no-history: LOCAL.rpmemgen not used */
	int has_at;		/* pull, verify: --at GENERATION */
	uint64_t at;		/* that version */
	int salvage;		/* pull --at: write what can be restored */
	int force;		/* pull: --force, take damaged data */
};

/* what --force (export, sync --pull) read of data the target calls damaged */
struct cmd_damaged {
	struct rpmemctl_ctx *ctx;
	unsigned n; /* reads the target refused, then delivered as they are */
};

/*
 * cmd_read_damaged -- sess reads data its target calls damaged as it is,
 * each refused read's ranges warned of on stderr and counted in d
 */
void cmd_read_damaged(struct rpmemctl_session *sess, struct cmd_damaged *d);

/*
 * cmd_transfer -- run a mirror, push, pull or verify; returns an exit
 * code (several targets: the highest of theirs)
 */
int cmd_transfer(struct rpmemctl_ctx *ctx, const struct cmd_xfer *x);
/*
 * cmd_xfer_targets -- LOCAL TARGET... of argv (from optind) into x; an
 * exit code if there are not at least two, or several where only one
 * may be (why names the option)
 */
int cmd_xfer_targets(struct rpmemctl_ctx *ctx, int argc, char **argv,
		     struct cmd_xfer *x, const char *why);

/*
 * cmd_transfer_at -- sync --pull --at, verify --at: a version of the
 * pool restored into LOCAL (a new file renamed over it) or compared
 * with it (versions.c); returns an exit code
 */
int cmd_transfer_at(struct rpmemctl_ctx *ctx, const struct cmd_xfer *x);

/*
 * cmd_xfer_opt -- take an option of CMD_XFER_OPTS, CMD_PUSH_OPTS or
 * CMD_CMP_OPTS (c, its argument arg) into x; 0 (also for any other c) or
 * an exit code, the problem reported
 */
int cmd_xfer_opt(struct rpmemctl_ctx *ctx, int c, const char *arg,
		 struct cmd_xfer *x);
/* cmd_parse_version -- a --at or --prune GENERATION; an exit code */
int cmd_parse_version(struct rpmemctl_ctx *ctx, const char *s, uint64_t *out);

/* --- listings (list.c, shared with status) ------------------------------ */

struct json;

/*
 * cmd_list_print -- regions and pools tables; pool "" = all, detail:
 * status; st (may be NULL) names the PMem namespace under each region
 */
int cmd_list_print(struct rpmemctl_ctx *ctx, const struct rpmemctl_list *l,
		   const struct rpmemctl_status *st, const char *pool,
		   int detail);
/* cmd_list_json -- "regions" and "pools" arrays into an open object */
void cmd_list_json(struct json *j, const struct rpmemctl_list *l,
		   const struct rpmemctl_status *st, const char *pool);

/* --- replicas (replicas.c): a replicating process's status file -------- */

#define CMD_REPLICAS_MAX 16

struct cmd_replica {
	char target[512]; /* as the status file names it */
	struct cmd_target t; /* its parts */
	char state[16];
	uint64_t behind_bytes;
	uint64_t behind_since_ns; /* CLOCK_REALTIME; 0: it holds */
};

struct cmd_replicas {
	long pid;
	int running; /* the process is still there */
	int split;   /* split brains its syncs were refused for */
	uint64_t updated_ns;
	unsigned k, ntargets, holding, n;
	struct cmd_replica rep[CMD_REPLICAS_MAX];
};

/*
 * cmd_replicas_read -- PATH.rpmemstat, read by the library; 0, -errno, or
 * -EBADMSG with why in err
 */
int cmd_replicas_read(const char *path, struct cmd_replicas *r, char *err,
		      size_t errlen);
/* cmd_replica_holds -- the replica holds every write the file had */
int cmd_replica_holds(const struct cmd_replica *p);
/* cmd_replica_lags -- p misses writes of the file (exit status 1) */
int cmd_replica_lags(const struct cmd_replica *p);
/* cmd_replica_disk -- p's disk state as its primary sees it */
int cmd_replica_disk(const struct cmd_replica *p);
/* cmd_replica_lag_s -- seconds p has been behind, as of now or the update */
uint64_t cmd_replica_lag_s(const struct cmd_replicas *r,
			   const struct cmd_replica *p);
/* cmd_prometheus_replicas -- the replicas' metrics (prometheus.c) */
void cmd_prometheus_replicas(FILE *f, const char *file,
			     const struct cmd_replicas *r);

/* --- formatting ---------------------------------------------------------- */

/* cmd_fmt_u64 -- decimal text of v into buf */
const char *cmd_fmt_u64(uint64_t v, char *buf, size_t len);
/* cmd_fmt_bytes -- "1000 bytes", "8 MiB (8388608 bytes)" */
const char *cmd_fmt_bytes(uint64_t v, char *buf, size_t len);
/* cmd_fmt_duration -- "3d 04h", "1h 02m", "5m 07s", "12s" */
const char *cmd_fmt_duration(uint64_t sec, char *buf, size_t len);
/* cmd_fmt_time -- "2024-05-01 12:00:00" local time, "-" for 0 */
const char *cmd_fmt_time(uint64_t sec, char *buf, size_t len);

#endif
