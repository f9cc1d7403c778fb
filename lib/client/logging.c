/* SPDX-License-Identifier: BSD-3-Clause */
/* logging.c -- librpmemctl's public log hook over the shared log context */
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
