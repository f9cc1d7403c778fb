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

/*
 * the handler before ours (the process's own, once interposed); guarded
 * by lock while it changes
 */
static struct sigaction old_bus;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
/* rpmem_guard_own_process: 1; 2 once the handler is installed */
static atomic_int owned;
/* the sigaction this file calls: libc's, or the one an interposer gave */
static rpmem_sigaction_fn real_sa;
/* rpmem_guard_interpose was called: every change of SIGBUS comes here */
static atomic_int interposed;

/* sa -- the sigaction this file calls */
static int sa(int sig, const struct sigaction *act, struct sigaction *old)
{
	return real_sa ? real_sa(sig, act, old) : sigaction(sig, act, old);
}

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
	struct sigaction old = old_bus, dfl = { .sa_handler = SIG_DFL };

	if (f && synchronous(si->si_code)) {
		f->code = si->si_code;
		cur = f->prev;
		siglongjmp(f->jb, 1);
	}
	if (old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN) {
		/* as the kernel would deliver it (the mask returns after) */
		pthread_sigmask(SIG_BLOCK, &old.sa_mask, NULL);
		if (old.sa_flags & SA_RESETHAND)
			old_bus = dfl;
		if (old.sa_flags & SA_SIGINFO)
			old.sa_sigaction(sig, si, uc);
		else
			old.sa_handler(sig);
		return;
	}
	if (old.sa_handler == SIG_IGN && !synchronous(si->si_code))
		return; /* a sent SIGBUS the process ignores */
	/* as before: the faulting access repeats and ends the process */
	sigemptyset(&dfl.sa_mask);
	sa(SIGBUS, &dfl, NULL);
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
	struct sigaction now, mine = { .sa_sigaction = on_sigbus,
				       .sa_flags = SA_SIGINFO };
	int ret = 0;

	if (atomic_load_explicit(&owned, memory_order_acquire) == 2)
		return 0; /* nothing else in the process replaces it */
	if (sa(SIGBUS, NULL, &now))
		return -errno;
	if (ours(&now))
		return owned_installed();
	sigemptyset(&mine.sa_mask);
	pthread_mutex_lock(&lock);
	if (sa(SIGBUS, NULL, &now))
		ret = -errno;
	else if (!ours(&now) && sa(SIGBUS, &mine, &old_bus))
		ret = -errno;
	pthread_mutex_unlock(&lock);
	return ret ? ret : owned_installed();
}

void rpmem_guard_own_process(void)
{
	int want = 0;
	atomic_compare_exchange_strong(&owned, &want, 1);
}

int rpmem_guard_interpose(rpmem_sigaction_fn real)
{
	if (!real)
		return -EINVAL;
	pthread_mutex_lock(&lock);
	real_sa = real;
	pthread_mutex_unlock(&lock);
	rpmem_guard_own_process();
	int ret = install();
	if (!ret)
		atomic_store(&interposed, 1);
	return ret;
}

int rpmem_guard_sigaction(const struct sigaction *act, struct sigaction *old)
{
	if (!atomic_load(&interposed))
		return -EPERM;
	pthread_mutex_lock(&lock);
	if (old)
		*old = old_bus;
	if (act)
		old_bus = *act;
	pthread_mutex_unlock(&lock);
	return 0;
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
