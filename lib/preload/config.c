/* SPDX-License-Identifier: BSD-3-Clause */
/* config.c -- librpmem_preload's configuration: environment, rpmemctl.conf */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "preload.h"

struct pl_config pl_cfg;

/* pl_msg -- "rpmem_preload: ..." on stderr and to syslog at prio */
void pl_msg(int prio, const char *fmt, ...)
{
	char line[2 * PL_MSG_MAX];
	va_list ap;
	if (prio > LOG_NOTICE && !pl_cfg.verbose)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	fprintf(stderr, "rpmem_preload: %s\n", line);
	if (prio <= LOG_NOTICE)
		syslog(LOG_USER | prio, "rpmem_preload: %s", line);
}

void pl_log(int prio, const char *msg, void *arg)
{
	(void)arg;
	if (pl_cfg.lib_prio >= 0 && prio <= pl_cfg.lib_prio)
		pl_msg(prio, "%s", msg);
}

/* cfg_err -- the reason of a refused configuration; returns -EINVAL */
__attribute__((format(printf, 3, 4))) static int
cfg_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* add_target -- target (spec) of f, parsed; into *t if t is not NULL */
static int add_target(struct pl_file *f, const char *spec,
		      struct rpmem_target *t, char *err, size_t errlen)
{
	struct rpmem_target tt;
	char why[RPMEM_MSG_MAX];
	if (f->ntargets == PL_TARGETS_MAX)
		return cfg_err(err, errlen, "RPMEM_REPLICATE: '%s' has more "
			       "than %d targets", f->path, PL_TARGETS_MAX);
	if (strlen(spec) >= PL_TARGET_LEN)
		return cfg_err(err, errlen, "RPMEM_REPLICATE: target '%.60s...' "
			       "too long", spec);
	if (rpmem_parse_target(spec, RPMEM_TARGET_NEED_POOL, t ? t : &tt, why,
			       sizeof(why)))
		return cfg_err(err, errlen, "RPMEM_REPLICATE: '%s': %s", spec,
			       why);
	struct pl_target *pt = &f->targets[f->ntargets];
	pt->f = f;
	pt->i = f->ntargets++;
	rpmem_strlcpy(pt->spec, spec, sizeof(pt->spec));
	return 0;
}

/* add_file -- one "PATH=TARGET" entry (len bytes of s) */
static int add_file(struct pl_config *c, const char *s, size_t len,
		    const char *cwd, const char *host, char *err,
		    size_t errlen)
{
	char entry[2 * PATH_MAX];
	if (len >= sizeof(entry))
		return cfg_err(err, errlen, "RPMEM_REPLICATE: entry too long");
	memcpy(entry, s, len);
	entry[len] = '\0';
	/* targets have no '=': the last one separates */
	char *eq = strrchr(entry, '=');
	/* a target alone: one more for the file before */
	if (!eq && c->nfiles)
		return add_target(&c->files[c->nfiles - 1], entry, NULL, err,
				  errlen);
	if (!eq || eq == entry || !eq[1])
		return cfg_err(err, errlen,
			       "RPMEM_REPLICATE: '%s' is not "
			       "LOCAL_PATH=HOST[:PORT]/REGION/POOL", entry);
	*eq = '\0';
	if (c->nfiles == PL_FILES_MAX)
		return cfg_err(err, errlen,
			       "RPMEM_REPLICATE: more than %d files",
			       PL_FILES_MAX);
	struct pl_file *f = &c->files[c->nfiles];
	memset(f, 0, sizeof(*f));
	int ret = add_target(f, eq + 1, &f->t, err, errlen);
	if (ret)
		return ret;
	char path[PATH_MAX + 1];
	int n = entry[0] == '/' ?
		snprintf(path, sizeof(path), "%s", entry) :
		snprintf(path, sizeof(path), "%s/%s", cwd, entry);
	if (n < 0 || (size_t)n >= sizeof(f->path))
		return cfg_err(err, errlen, "RPMEM_REPLICATE: path too long");
	rpmem_strlcpy(f->path, path, sizeof(f->path));
	for (unsigned i = 0; i < c->nfiles; i++)
		if (!strcmp(c->files[i].path, f->path))
			return cfg_err(err, errlen,
				       "RPMEM_REPLICATE: '%s' is named twice",
				       f->path);
	rpmem_strlcpy(f->target, eq + 1, sizeof(f->target));
	char src[PATH_MAX + 80]; /* truncated into source */
	snprintf(src, sizeof(src), "%s:%s", host, path);
	rpmem_strlcpy(f->source, src, sizeof(f->source));
	snprintf(f->live_src, sizeof(f->live_src), "%.*s (live)",
		 (int)sizeof(f->live_src) - 8, src);
	pthread_rwlockattr_t a;
	pthread_rwlockattr_init(&a);
	/* a start or stop is not held off by a stream of writes */
	pthread_rwlockattr_setkind_np(&a,
		PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	pthread_rwlock_init(&f->lock, &a);
	pthread_rwlockattr_destroy(&a);
	c->nfiles++;
	return 0;
}

/* parse_files -- "PATH=TARGET[,PATH=TARGET...]"; empty entries are skipped */
static int parse_files(struct pl_config *c, const char *spec, const char *cwd,
		       char *err, size_t errlen)
{
	char host[HOST_NAME_MAX + 1] = "";
	gethostname(host, sizeof(host) - 1);
	for (const char *p = spec; p && *p;) {
		size_t len = strcspn(p, ",");
		int ret = len ? add_file(c, p, len, cwd, host, err, errlen) : 0;
		if (ret)
			return ret;
		p += len;
		if (*p == ',')
			p++;
	}
	return 0;
}

/* number -- s as a whole decimal number from lo to hi into *v; 0 or -1 */
static int number(const char *s, long lo, long hi, long *v)
{
	char *end;
	errno = 0;
	long n = strtol(s, &end, 10);
	if (errno || *end || n < lo || n > hi)
		return -1;
	*v = n;
	return 0;
}

/* parse_retry -- seconds (0 = at every flush) or "never" (-1) */
static int parse_retry(struct pl_config *c, const char *retry, char *err,
		       size_t errlen)
{
	c->retry_s = 10;
	if (!retry || !*retry)
		return 0;
	if (!strcmp(retry, "never")) {
		c->retry_s = -1;
		return 0;
	}
	long v;
	if (number(retry, 0, 86400, &v))
		return cfg_err(err, errlen,
			       "RPMEM_REPLICATE_RETRY: '%s' is not a number of "
			       "seconds (0 to 86400) or 'never'", retry);
	c->retry_s = v;
	return 0;
}

/*
 * pl_config_parse -- the environment's values into c (see preload.h);
 * on failure c may hold part of them and must not be used
 */
int pl_config_parse(struct pl_config *c, const char *spec, const char *policy,
		    const char *retry, const char *transport, const char *cwd,
		    char *err, size_t errlen)
{
	memset(c, 0, sizeof(*c));
	if (!policy || !*policy || !strcmp(policy, "fail-stop"))
		c->policy = PL_FAIL_STOP;
	else if (!strcmp(policy, "degraded"))
		c->policy = PL_DEGRADED;
	else
		return cfg_err(err, errlen,
			       "RPMEM_REPLICATE_POLICY: '%s' is neither "
			       "'fail-stop' nor 'degraded'", policy);
	if (!transport || !*transport || !strcmp(transport, "auto"))
		c->transport = RPMEMCTL_TRANSPORT_AUTO;
	else if (!strcmp(transport, "tcp"))
		c->transport = RPMEMCTL_TRANSPORT_TCP;
	else if (!strcmp(transport, "rdma"))
		c->transport = RPMEMCTL_TRANSPORT_RDMA;
	else
		return cfg_err(err, errlen,
			       "RPMEM_REPLICATE_TRANSPORT: '%s' is not auto, "
			       "tcp or rdma", transport);
	int ret = parse_retry(c, retry, err, errlen);
	return ret ? ret : parse_files(c, spec, cwd ? cwd : "", err, errlen);
}

/*
 * quorum_set -- v, given by what (the variable or the file's setting),
 * into c: 1 to the number of targets of every file; 0 or -EINVAL
 */
static int quorum_set(struct pl_config *c, long long v, const char *what,
		      char *err, size_t errlen)
{
	if (v < 1 || v > PL_TARGETS_MAX)
		return cfg_err(err, errlen, "%s: %lld is not a number of "
			       "targets (1 to %d)", what, v, PL_TARGETS_MAX);
	for (unsigned i = 0; i < c->nfiles; i++)
		if ((unsigned long long)v > c->files[i].ntargets)
			return cfg_err(err, errlen, "%s: %lld is more than "
				       "the %u target%s of '%s'", what, v,
				       c->files[i].ntargets,
				       c->files[i].ntargets == 1 ? "" : "s",
				       c->files[i].path);
	c->quorum = (unsigned)v;
	return 0;
}

/* pl_config_quorum -- RPMEM_REPLICATE_QUORUM into c (see preload.h) */
int pl_config_quorum(struct pl_config *c, const char *quorum, char *err,
		     size_t errlen)
{
	c->quorum = 0;
	if (!quorum || !*quorum)
		return 0;
	long v;
	if (number(quorum, 1, PL_TARGETS_MAX, &v))
		return cfg_err(err, errlen, "RPMEM_REPLICATE_QUORUM: '%s' is "
			       "not a number of targets (1 to %d)", quorum,
			       PL_TARGETS_MAX);
	return quorum_set(c, v, "RPMEM_REPLICATE_QUORUM", err, errlen);
}

/* pl_config_quorum_cfg -- replicate.quorum of rpmemctl.conf (preload.h) */
int pl_config_quorum_cfg(struct pl_config *c, char *err, size_t errlen)
{
	char file[PATH_MAX], what[PATH_MAX + 32];
	long long v = 0;

	if (!c->nfiles)
		return 0;
	/* its reads may map memory: forward those without starting us */
	pl_busy++;
	int ret = rpmemctl_client_cfg_get_int("replicate.quorum", &v, file,
					      sizeof(file));
	const char *why = ret < 0 ? rpmemctl_strerror(ret) : "";
	pl_busy--;
	if (ret < 0)
		return cfg_err(err, errlen, "%s", why);
	if (!ret)
		return 0;
	snprintf(what, sizeof(what), "%s: replicate.quorum", file);
	return quorum_set(c, v, what, err, errlen);
}

/*
 * pl_config_drain -- RPMEM_REPLICATE_DRAIN (NULL or "": commit) into c;
 * 0 or -EINVAL with the reason in err
 */
int pl_config_drain(struct pl_config *c, const char *drain, char *err,
		    size_t errlen)
{
	if (!drain || !*drain || !strcmp(drain, "commit"))
		c->drain = PL_DRAIN_COMMIT;
	else if (!strcmp(drain, "every"))
		c->drain = PL_DRAIN_EVERY;
	else
		return cfg_err(err, errlen, "RPMEM_REPLICATE_DRAIN: '%s' is "
			       "neither 'commit' nor 'every'", drain);
	return 0;
}

/* pl_config_spin -- RPMEM_REPLICATE_SPIN into c (see preload.h) */
int pl_config_spin(struct pl_config *c, const char *spin, char *err,
		   size_t errlen)
{
	c->spin_us = -1;
	if (!spin || !*spin)
		return 0;
	long v;
	if (number(spin, 0, RPMEMCTL_SPIN_MAX_US, &v))
		return cfg_err(err, errlen, "RPMEM_REPLICATE_SPIN: '%s' is "
			       "not a number of microseconds (0 to %u)", spin,
			       RPMEMCTL_SPIN_MAX_US);
	c->spin_us = (int)v;
	return 0;
}

/* pl_config_kickout -- the kick-out's bounds into c (see preload.h) */
int pl_config_kickout(struct pl_config *c, const char *ms, const char *bytes,
		      char *err, size_t errlen)
{
	long v;
	c->kickout_ms = -1;
	c->kickout_bytes = 0;
	if (ms && *ms && number(ms, 0, RPMEMCTL_KICKOUT_MS_MAX, &v))
		return cfg_err(err, errlen, "RPMEM_REPLICATE_KICKOUT: '%s' is "
			       "not a number of milliseconds (0 to %u)", ms,
			       RPMEMCTL_KICKOUT_MS_MAX);
	if (ms && *ms)
		c->kickout_ms = v;
	if (bytes && *bytes && rpmem_parse_size(bytes, &c->kickout_bytes))
		return cfg_err(err, errlen, "RPMEM_REPLICATE_KICKOUT_BYTES: "
			       "'%s' is not a size (bytes, or with K, M, G)",
			       bytes);
	return 0;
}

/*
 * init_once -- read the environment (secure_getenv); an invalid one stops
 * the process. In a secure-execution process (set-uid, set-gid, file
 * capabilities: AT_SECURE) the environment is the invoking user's, who
 * would choose the targets and the credentials file: nothing is
 * replicated, and the library says so once.
 */
static void init_once(void)
{
	char cwd[PATH_MAX] = "";
	char err[PL_MSG_MAX];

	if (getauxval(AT_SECURE)) {
		pl_cfg.nfiles = 0;
		pl_msg(LOG_NOTICE, "a set-uid or set-gid program (secure "
		       "execution): its environment is not trusted; nothing "
		       "is replicated");
		return;
	}
	const char *lvl = secure_getenv("RPMEM_LOG_LEVEL");
	const char *q = secure_getenv("RPMEM_REPLICATE_QUORUM");
	if (!getcwd(cwd, sizeof(cwd)))
		cwd[0] = '\0';
	int ret = pl_config_parse(&pl_cfg, secure_getenv("RPMEM_REPLICATE"),
				  secure_getenv("RPMEM_REPLICATE_POLICY"),
				  secure_getenv("RPMEM_REPLICATE_RETRY"),
				  secure_getenv("RPMEM_REPLICATE_TRANSPORT"),
				  cwd, err, sizeof(err));
	if (!ret)
		ret = pl_config_drain(&pl_cfg,
				      secure_getenv("RPMEM_REPLICATE_DRAIN"),
				      err, sizeof(err));
	if (!ret)
		ret = pl_config_quorum(&pl_cfg, q, err, sizeof(err));
	if (!ret)
		ret = pl_config_spin(&pl_cfg,
				     secure_getenv("RPMEM_REPLICATE_SPIN"),
				     err, sizeof(err));
	if (!ret)
		ret = pl_config_kickout(&pl_cfg,
					secure_getenv("RPMEM_REPLICATE_KICKOUT"),
					secure_getenv(
						"RPMEM_REPLICATE_KICKOUT_BYTES"),
					err, sizeof(err));
	/* the variable, if set, else the client configuration's */
	if (!ret && !(q && *q))
		ret = pl_config_quorum_cfg(&pl_cfg, err, sizeof(err));
	pl_cfg.verbose = lvl && (!strcmp(lvl, "info") || !strcmp(lvl, "debug"));
	pl_cfg.lib_prio = lvl ? rpmemctl_log_parse_priority(lvl) : -1;
	if (pl_cfg.lib_prio < 0)
		pl_cfg.lib_prio = -1;
	if (ret) {
		/* never run unreplicated because of a typo */
		pl_cfg.nfiles = 0;
		pl_msg(LOG_CRIT, "%s; stopping", err);
		abort();
	}
}

/* pl_init -- parse the environment once, whichever entry point is first */
void pl_init(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, init_once);
}
