/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * logging.c -- librpmemctl's public log hooks: the global sink over the
 * shared log context, and a session configuration's own sink
 */
#include <errno.h>
#include <stdarg.h>

#include "client_session.h"
#include "librpmemctl.h"
#include "log.h"
#include "util.h"

/* rpmemctl_log_set_fn -- an application's sink; NULL = the default */
RPMEM_EXPORT void rpmemctl_log_set_fn(rpmemctl_log_fn fn, void *arg)
{
	rpmem_log_set_fn(fn, arg);
}

/* rpmemctl_log_set_priority -- the highest priority passed to the sink */
RPMEM_EXPORT void rpmemctl_log_set_priority(int prio)
{
	if (prio < LOG_EMERG)
		prio = LOG_EMERG;
	if (prio > LOG_DEBUG)
		prio = LOG_DEBUG;
	rpmem_log_set_prio(prio);
}

/* rpmemctl_log_get_priority -- the highest priority passed to the sink */
RPMEM_EXPORT int rpmemctl_log_get_priority(void)
{
	return rpmem_log_get_prio();
}

/*
 * rpmemctl_session_cfg_set_log -- the sessions opened with cfg log to fn
 * (with arg), lines up to prio; fn NULL: to the global sink again
 */
RPMEM_EXPORT int
rpmemctl_session_cfg_set_log(struct rpmemctl_session_cfg *cfg,
			     rpmemctl_log_fn fn, void *arg, int prio)
{
	int ret = 0;

	client_api_begin();
	if (!cfg || (fn && (prio < LOG_EMERG || prio > LOG_DEBUG)))
		ret = -EINVAL;
	else
		cfg->log = (struct rpmem_log_sink){ fn, fn ? arg : NULL, prio };
	return client_api_end(ret, __func__);
}

void client_log(const struct rpmemctl_session *s, int prio, const char *fmt,
		...)
{
	va_list ap;
	va_start(ap, fmt);
	rpmem_vlog_to(s ? &s->log : NULL, prio, fmt, ap);
	va_end(ap);
}
