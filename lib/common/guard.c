/* SPDX-License-Identifier: BSD-3-Clause */
/* guard.c -- SIGBUS from a file mapping fails one call, not the process */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>

#include "guard.h"

struct guard_frame {
	sigjmp_buf jb;
	int code; /* si_code of the fault */
	struct guard_frame *prev;
};

/* the innermost guarded call of this thread, or NULL */
static __thread struct guard_frame *cur
	__attribute__((tls_model("initial-exec")));

/* the handler before ours; guarded by lock while it changes */
static struct sigaction old_bus;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
/* rpmem_guard_own_process: 1; 2 once the handler is installed */
static atomic_int owned;

/* synchronous -- a fault of the thread's own access, not a sent signal */
static int synchronous(int code)
{
	return code == BUS_ADRERR || code == BUS_OBJERR ||
	       code == BUS_ADRALN || code == BUS_MCEERR_AR;
}

/*
 * on_sigbus -- jump back into the guarded call that faulted; any other
 * SIGBUS goes where it went before the guard was installed
 */
static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	struct guard_frame *f = cur;

	if (f && synchronous(si->si_code)) {
		f->code = si->si_code;
		cur = f->prev;
		siglongjmp(f->jb, 1);
	}
	if (old_bus.sa_flags & SA_SIGINFO) {
		old_bus.sa_sigaction(sig, si, uc);
		return;
	}
	if (old_bus.sa_handler != SIG_DFL && old_bus.sa_handler != SIG_IGN) {
		old_bus.sa_handler(sig);
		return;
	}
	/* as before: the faulting access repeats and ends the process */
	signal(SIGBUS, SIG_DFL);
	if (!synchronous(si->si_code))
		raise(SIGBUS);
}

/* ours -- the SIGBUS action act is this file's handler */
static int ours(const struct sigaction *act)
{
	return (act->sa_flags & SA_SIGINFO) && act->sa_sigaction == on_sigbus;
}

/* owned_installed -- our handler is there: an owned process stops checking */
static int owned_installed(void)
{
	int want = 1;
	atomic_compare_exchange_strong(&owned, &want, 2);
	return 0;
}

/*
 * install -- make sure our handler is the process's SIGBUS handler: at
 * the first guarded call, and again if someone replaced it since (that
 * one becomes the handler we pass other faults to); 0 or -errno
 */
static int install(void)
{
	struct sigaction now, sa = { .sa_sigaction = on_sigbus,
				     .sa_flags = SA_SIGINFO };
	int ret = 0;

	if (atomic_load_explicit(&owned, memory_order_acquire) == 2)
		return 0; /* nothing else in the process replaces it */
	if (sigaction(SIGBUS, NULL, &now))
		return -errno;
	if (ours(&now))
		return owned_installed();
	sigemptyset(&sa.sa_mask);
	pthread_mutex_lock(&lock);
	if (sigaction(SIGBUS, NULL, &now))
		ret = -errno;
	else if (!ours(&now) && sigaction(SIGBUS, &sa, &old_bus))
		ret = -errno;
	pthread_mutex_unlock(&lock);
	return ret ? ret : owned_installed();
}

void rpmem_guard_own_process(void)
{
	int want = 0;
	atomic_compare_exchange_strong(&owned, &want, 1);
}

int rpmem_guard_run(int (*fn)(void *), void *arg)
{
	struct guard_frame f = { .prev = cur };

	if (install())
		return fn(arg); /* unguarded, as without the guard */
	/* no mask saved: a system call per guarded call saved */
	if (sigsetjmp(f.jb, 0)) {
		/* cur was reset by the handler, which wrote code */
		int code = ((volatile struct guard_frame *)&f)->code;
		/* the handler's SIGBUS stays blocked after the jump */
		sigset_t bus;
		sigemptyset(&bus);
		sigaddset(&bus, SIGBUS);
		pthread_sigmask(SIG_UNBLOCK, &bus, NULL);
		return code == BUS_MCEERR_AR ? -EHWPOISON : -EFAULT;
	}
	cur = &f;
	int ret = fn(arg);
	cur = f.prev;
	return ret;
}
