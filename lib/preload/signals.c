/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * signals.c -- sigaction(2), signal(3) and their kin, for SIGBUS: the
 * SIGBUS handler of librpmemctl (which turns a fault of its own access
 * to a mapping into an error of that call) stays installed while the
 * process sees and sets its own action, which the handler passes every
 * other SIGBUS to. So no replicated write checks with a system call that
 * the handler is still there. Other signals, and every call before a
 * file is replicated, go to libc's as they are.
 */
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <syslog.h>

#include "preload.h"

typedef sighandler_t (*signal_fn)(int, sighandler_t);

/* SIGBUS's action goes to librpmemctl (pl_signals_interpose) */
static atomic_int on;

/* next -- libc's name, looked up once into *slot; NULL if none */
static void *next(void *_Atomic *slot, const char *name)
{
	void *f = atomic_load(slot);
	if (!f) {
		f = dlsym(RTLD_NEXT, name);
		atomic_store(slot, f);
	}
	return f;
}

/* real_sigaction -- libc's sigaction, NULL if not found */
static rpmemctl_sigaction_fn real_sigaction(void)
{
	static void *_Atomic real;
	return (rpmemctl_sigaction_fn)next(&real, "sigaction");
}

/* bus -- SIGBUS's action goes to librpmemctl */
static int bus(int sig)
{
	return sig == SIGBUS && atomic_load_explicit(&on, memory_order_acquire);
}

void pl_signals_interpose(void)
{
	rpmemctl_sigaction_fn real = real_sigaction();
	int ret = real ? rpmemctl_sigbus_interpose(real) : -ENOSYS;
	if (ret) {
		pl_msg(LOG_WARNING, "SIGBUS handler not interposed (%s): each "
		       "replicated write checks it", rpmemctl_strerror(ret));
		return;
	}
	atomic_store_explicit(&on, 1, memory_order_release);
}

RPMEM_EXPORT int sigaction(int sig, const struct sigaction *act,
			   struct sigaction *old)
{
	if (bus(sig)) {
		int ret = rpmemctl_sigbus_sigaction(act, old);
		if (!ret)
			return 0;
		errno = -ret;
		return -1;
	}
	rpmemctl_sigaction_fn real = real_sigaction();
	if (!real) {
		errno = ENOSYS;
		return -1;
	}
	return real(sig, act, old);
}

/*
 * set_bus -- SIGBUS's handler h with flags, its own signal blocked while
 * it runs unless flags say SA_NODEFER; the one before, or SIG_ERR
 */
static sighandler_t set_bus(sighandler_t h, int flags)
{
	struct sigaction act = { .sa_handler = h, .sa_flags = flags }, old;
	sigemptyset(&act.sa_mask);
	if (!(flags & SA_NODEFER))
		sigaddset(&act.sa_mask, SIGBUS);
	if (h == SIG_ERR || rpmemctl_sigbus_sigaction(&act, &old)) {
		errno = EINVAL;
		return SIG_ERR;
	}
	return old.sa_handler;
}

/* pass -- libc's name (signal, sigset, ...) of sig and h; SIG_ERR if none */
static sighandler_t pass(void *_Atomic *real, const char *name, int sig,
			 sighandler_t h)
{
	signal_fn f = (signal_fn)next(real, name);
	return f ? f(sig, h) : SIG_ERR;
}

/* handler -- SIGBUS: h with flags through librpmemctl; else libc's name */
static sighandler_t handler(int sig, sighandler_t h, int flags,
			    void *_Atomic *real, const char *name)
{
	return bus(sig) ? set_bus(h, flags) : pass(real, name, sig, h);
}

/* signal -- glibc's semantics (BSD): restarted calls, handler not reentered */
RPMEM_EXPORT sighandler_t signal(int sig, sighandler_t h)
{
	static void *_Atomic real;
	return handler(sig, h, SA_RESTART, &real, "signal");
}

RPMEM_EXPORT sighandler_t bsd_signal(int sig, sighandler_t h)
{
	static void *_Atomic real;
	return handler(sig, h, SA_RESTART, &real, "bsd_signal");
}

/* sysv_signal -- reset at delivery, not blocked while it runs */
RPMEM_EXPORT sighandler_t sysv_signal(int sig, sighandler_t h)
{
	static void *_Atomic real;
	return handler(sig, h, SA_RESETHAND | SA_NODEFER, &real,
		       "sysv_signal");
}

/*
 * sigset -- as glibc's: SIG_HOLD blocks the signal, any other action
 * unblocks it; returns SIG_HOLD if it was blocked, else the action before
 */
RPMEM_EXPORT sighandler_t sigset(int sig, sighandler_t h)
{
	static void *_Atomic real;
	if (!bus(sig))
		return pass(&real, "sigset", sig, h);
	sigset_t one, was;
	sigemptyset(&one);
	sigaddset(&one, SIGBUS);
	struct sigaction old;
	if (h == SIG_HOLD) {
		if (pthread_sigmask(SIG_BLOCK, &one, &was) ||
		    rpmemctl_sigbus_sigaction(NULL, &old))
			return SIG_ERR;
	} else {
		struct sigaction act = { .sa_handler = h };
		sigemptyset(&act.sa_mask);
		if (h == SIG_ERR || rpmemctl_sigbus_sigaction(&act, &old) ||
		    pthread_sigmask(SIG_UNBLOCK, &one, &was)) {
			errno = EINVAL;
			return SIG_ERR;
		}
	}
	return sigismember(&was, SIGBUS) ? SIG_HOLD : old.sa_handler;
}
