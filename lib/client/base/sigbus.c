/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sigbus.c -- the library's SIGBUS handler (lib/common/guard.c) for a
 * process that routes its own changes of SIGBUS's action through the
 * library (librpmem_preload interposes sigaction(2) and signal(3))
 */
#include <errno.h>
#include <signal.h>

#include "guard.h"
#include "librpmemctl.h"
#include "util.h"

_Static_assert(sizeof(rpmemctl_sigaction_fn) == sizeof(rpmem_sigaction_fn),
	       "sigaction function");

RPMEM_EXPORT int rpmemctl_sigbus_interpose(rpmemctl_sigaction_fn real)
{
	return rpmem_guard_interpose(real);
}

RPMEM_EXPORT int rpmemctl_sigbus_sigaction(const struct sigaction *act,
					   struct sigaction *oldact)
{
	return rpmem_guard_sigaction(act, oldact);
}
