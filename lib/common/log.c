/* SPDX-License-Identifier: BSD-3-Clause */
/* log.c -- log context with a replaceable sink, priority and env override */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "log.h"

static struct {
	const char *ident;
	int prio;
	rpmem_log_fn fn;
	void *arg;
	int env_read;
} ctx = { "librpmemctl", LOG_WARNING, NULL, NULL, 0 };

/* env_prio -- apply RPMEM_LOG_LEVEL once, for applications too */
static void env_prio(void)
{
	const char *env = getenv("RPMEM_LOG_LEVEL");
	ctx.env_read = 1;
	if (env && rpmem_log_parse_prio(env) >= 0)
		ctx.prio = rpmem_log_parse_prio(env);
}

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

void rpmem_log_init(const char *ident, int prio, rpmem_log_fn fn, void *arg)
{
	ctx.ident = ident;
	ctx.prio = prio;
	ctx.fn = fn;
	ctx.arg = arg;
	env_prio();
}

void rpmem_log_set_prio(int prio)
{
	ctx.prio = prio;
}

int rpmem_log_get_prio(void)
{
	return ctx.prio;
}

void rpmem_log_syslog(int prio, const char *msg, void *arg)
{
	(void)arg;
	syslog(prio, "%s", msg);
}

void rpmem_log(int prio, const char *fmt, ...)
{
	if (!ctx.env_read)
		env_prio();
	if (prio > ctx.prio)
		return;
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (ctx.fn) {
		ctx.fn(prio, msg, ctx.arg);
		return;
	}
	static const char *const tag[] = { "emerg", "alert", "crit", "error",
					   "warning", "notice", "info",
					   "debug" };
	fprintf(stderr, "%s: %s: %s\n", ctx.ident, tag[prio & 7], msg);
}

/* now_sec -- CLOCK_MONOTONIC seconds */
static uint64_t now_sec(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec;
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
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	rpmem_log(prio, "%s", msg);
	return 1;
}
