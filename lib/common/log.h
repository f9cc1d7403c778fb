/* SPDX-License-Identifier: BSD-3-Clause */
/* log.h -- log context with a replaceable sink, priority and env override */
#ifndef RPMEM_LOG_H
#define RPMEM_LOG_H

#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <syslog.h>

typedef void (*rpmem_log_fn)(int prio, const char *msg, void *arg);

/*
 * rpmem_log_init -- set the identity ("rpmemd"), the highest priority
 * logged (LOG_ERR .. LOG_DEBUG) and the sink (NULL = stderr). The
 * environment variable RPMEM_LOG_LEVEL (err, warning, notice, info,
 * debug or a number) overrides prio.
 */
void rpmem_log_init(const char *ident, int prio, rpmem_log_fn fn, void *arg);
/*
 * rpmem_log_set_fn -- replace the sink; NULL = the library default: no
 * output, or standard error when RPMEM_LOG_LEVEL is set (also the state
 * before any rpmem_log_init)
 */
void rpmem_log_set_fn(rpmem_log_fn fn, void *arg);
void rpmem_log_set_prio(int prio);
int rpmem_log_get_prio(void);
/* rpmem_log_parse_prio -- "err".."debug" to LOG_*; -1 if unknown */
int rpmem_log_parse_prio(const char *s);
/* rpmem_log_syslog -- a sink that writes to syslog/the journal */
void rpmem_log_syslog(int prio, const char *msg, void *arg);

void rpmem_log(int prio, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * struct rpmem_log_sink -- a log of its own for one context (a session
 * and what it does): with a fn, its messages up to prio go to fn only;
 * without (fn NULL, or no sink at all) they go to the global sink above
 */
struct rpmem_log_sink {
	rpmem_log_fn fn;
	void *arg;
	int prio;
};

/* rpmem_log_to -- rpmem_log to sink when it has a fn, else the global one */
void rpmem_log_to(const struct rpmem_log_sink *sink, int prio,
		  const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void rpmem_vlog_to(const struct rpmem_log_sink *sink, int prio,
		   const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));

/*
 * struct rpmem_log_limit -- one kind of log line that a peer can cause at
 * will (a refused connection, a timeout): at most per_sec of them a
 * second; the rest are counted and the count is logged with the next one
 * that gets through ("... N more <kind> suppressed")
 */
struct rpmem_log_limit {
	pthread_mutex_t lock;
	const char *kind; /* "refused connections" */
	unsigned per_sec;
	uint64_t window; /* the current second, CLOCK_MONOTONIC */
	unsigned n;	 /* lines logged in it */
	unsigned long suppressed;
};
#define RPMEM_LOG_LIMIT_INIT(kind_, per_sec_)                                  \
	{ .lock = PTHREAD_MUTEX_INITIALIZER, .kind = (kind_),                 \
	  .per_sec = (per_sec_) }

/*
 * rpmem_log_limited -- rpmem_log(prio, ...) unless l's budget for this
 * second is spent; returns 1 if logged, 0 if suppressed
 */
int rpmem_log_limited(struct rpmem_log_limit *l, int prio, const char *fmt,
		      ...) __attribute__((format(printf, 3, 4)));

#define ERR(...) rpmem_log(LOG_ERR, __VA_ARGS__)
#define WARN(...) rpmem_log(LOG_WARNING, __VA_ARGS__)
#define NOTICE(...) rpmem_log(LOG_NOTICE, __VA_ARGS__)
#define INFO(...) rpmem_log(LOG_INFO, __VA_ARGS__)
#ifdef RPMEM_NO_DEBUG
#define DBG(...) do { } while (0)
#else
#define DBG(...) rpmem_log(LOG_DEBUG, __VA_ARGS__)
#endif

#endif
