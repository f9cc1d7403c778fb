/* SPDX-License-Identifier: BSD-3-Clause */
/* log.c -- log context with a replaceable sink, priority and env override */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "log.h"
#include "util.h"

/* LOG_LINE_MAX -- room for one formatted log line */
#define LOG_LINE_MAX 1024

/*
 * Until rpmem_log_init (the programs) or rpmemctl_log_set_fn (an
 * application) says otherwise, the library's messages go nowhere, or to
 * standard error when RPMEM_LOG_LEVEL is set: a library does not write on
 * its application's stderr unasked.
 */
static struct {
	const char *ident;
	int prio;
	rpmem_log_fn fn;
	void *arg;
	int to_stderr; /* with no fn: 1 writes to stderr, 0 drops */
	int env_read;
} ctx = { "librpmemctl", LOG_WARNING, NULL, NULL, 0, 0 };

/* env_level -- RPMEM_LOG_LEVEL as a LOG_* priority, -1 if unset or bad */
static int env_level(void)
{
	const char *env = secure_getenv("RPMEM_LOG_LEVEL");

	return env ? rpmem_log_parse_prio(env) : -1;
}

/* env_prio -- apply RPMEM_LOG_LEVEL once, for applications too */
static void env_prio(void)
{
	int p = env_level();

	ctx.env_read = 1;
	if (p >= 0) {
		ctx.prio = p;
		if (!ctx.fn)
			ctx.to_stderr = 1;
	}
}

/* rpmem_log_parse_prio -- "err".."debug" or a number to LOG_*; -1 if bad */
int rpmem_log_parse_prio(const char *s)
{
	static const struct {
		const char *name;
		int prio;
	} names[] = {
		{ "err", LOG_ERR },	  { "error", LOG_ERR },
		{ "warning", LOG_WARNING }, { "warn", LOG_WARNING },
		{ "notice", LOG_NOTICE }, { "info", LOG_INFO },
		{ "debug", LOG_DEBUG },
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcasecmp(s, names[i].name))
			return names[i].prio;
	char *end;
	long v = strtol(s, &end, 10);
	if (*s && !*end && v >= LOG_EMERG && v <= LOG_DEBUG)
		return (int)v;
	return -1;
}

/* rpmem_log_init -- a program's identity, priority and sink (NULL = stderr) */
void rpmem_log_init(const char *ident, int prio, rpmem_log_fn fn, void *arg)
{
	ctx.ident = ident;
	ctx.prio = prio;
	ctx.fn = fn;
	ctx.arg = arg;
	ctx.to_stderr = 1;
	env_prio();
}

/* rpmem_log_set_prio -- the highest priority logged from now on */
void rpmem_log_set_prio(int prio)
{
	if (!ctx.env_read)
		env_prio(); /* read now, or it would undo this later */
	ctx.prio = prio;
}

/* rpmem_log_get_prio -- the highest priority logged */
int rpmem_log_get_prio(void)
{
	if (!ctx.env_read)
		env_prio();
	return ctx.prio;
}

/* rpmem_log_syslog -- a sink that writes to syslog/the journal */
void rpmem_log_syslog(int prio, const char *msg, void *arg)
{
	(void)arg;
	syslog(prio, "%s", msg);
}

/* emit -- hand msg to the global sink: its function, or standard error */
static void emit(int prio, const char *msg)
{
	static const char *const tag[] = { "emerg", "alert", "crit", "error",
					   "warning", "notice", "info",
					   "debug" };
	if (ctx.fn)
		ctx.fn(prio, msg, ctx.arg);
	else
		fprintf(stderr, "%s: %s: %s\n", ctx.ident, tag[prio & 7], msg);
}

/* rpmem_vlog_to -- rpmem_log_to with a va_list */
void rpmem_vlog_to(const struct rpmem_log_sink *sink, int prio,
		   const char *fmt, va_list ap)
{
	char msg[LOG_LINE_MAX];

	if (sink && sink->fn) {
		if (prio > sink->prio)
			return;
		vsnprintf(msg, sizeof(msg), fmt, ap);
		sink->fn(prio, msg, sink->arg);
		return;
	}
	if (!ctx.env_read)
		env_prio();
	if (prio > ctx.prio || (!ctx.fn && !ctx.to_stderr))
		return;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	emit(prio, msg);
}

/* rpmem_log_to -- to sink if it has a function, else to the global one */
void rpmem_log_to(const struct rpmem_log_sink *sink, int prio,
		  const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	rpmem_vlog_to(sink, prio, fmt, ap);
	va_end(ap);
}

/* rpmem_log -- format and hand a message to the sink, if prio is logged */
void rpmem_log(int prio, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	rpmem_vlog_to(NULL, prio, fmt, ap);
	va_end(ap);
}

/* rpmem_log_set_fn -- a new sink; NULL = the library's default */
void rpmem_log_set_fn(rpmem_log_fn fn, void *arg)
{
	if (!ctx.env_read)
		env_prio();
	ctx.fn = fn;
	ctx.arg = fn ? arg : NULL;
	ctx.to_stderr = !fn && env_level() >= 0;
}

/* now_sec -- CLOCK_MONOTONIC seconds (rpmem_now_ns: a test's clock) */
static uint64_t now_sec(void)
{
	return rpmem_now_ns() / 1000000000ull;
}

int rpmem_log_limited(struct rpmem_log_limit *l, int prio, const char *fmt,
		      ...)
{
	uint64_t sec = now_sec();
	unsigned long gone = 0;
	int ok;

	pthread_mutex_lock(&l->lock);
	if (sec != l->window) {
		gone = l->suppressed;
		l->window = sec;
		l->n = 0;
		l->suppressed = 0;
	}
	ok = l->n < l->per_sec;
	if (ok)
		l->n++;
	else
		l->suppressed++;
	pthread_mutex_unlock(&l->lock);
	if (gone)
		rpmem_log(prio, "... %lu more %s suppressed (at most %u a second are logged)",
			  gone, l->kind, l->per_sec);
	if (!ok)
		return 0;
	char msg[LOG_LINE_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	rpmem_log(prio, "%s", msg);
	return 1;
}
