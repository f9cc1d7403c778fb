/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * guard.h -- run code that touches a file mapping so that a SIGBUS (the
 * file shrank under it, or poisoned memory) fails that call, not the
 * process
 */
#ifndef RPMEM_GUARD_H
#define RPMEM_GUARD_H

/*
 * rpmem_guard_run -- fn(arg) with SIGBUS of the calling thread turned
 * into a return value: fn's result, or -EFAULT when fn touched a page of
 * a mapping beyond the end of its file, or -EHWPOISON when it touched
 * poisoned memory. fn is abandoned at the fault (siglongjmp), so it must
 * hold no lock and own no resource the caller cannot release. Each call
 * makes sure a SIGBUS handler of this file is installed for the process
 * (again if something replaced it); a SIGBUS outside a guarded call goes
 * to the handler the process had before (by default it still ends the
 * process).
 */
int rpmem_guard_run(int (*fn)(void *), void *arg);

/*
 * rpmem_guard_own_process -- the caller owns the process's signal
 * handling (rpmemd): after the first guarded call installed the handler,
 * no later one checks that it is still there (one system call less per
 * guarded call)
 */
void rpmem_guard_own_process(void);

struct sigaction;
typedef int (*rpmem_sigaction_fn)(int sig, const struct sigaction *act,
				  struct sigaction *old);

/*
 * rpmem_guard_interpose -- for a process whose every change of SIGBUS's
 * action goes through rpmem_guard_sigaction (librpmem_preload interposes
 * sigaction(2) and signal(3)): installs the handler now, calling real
 * (libc's sigaction) for it and for every later change of its own, and
 * from then on no guarded call checks that it is still there. 0 or
 * -errno.
 */
int rpmem_guard_interpose(rpmem_sigaction_fn real);

/*
 * rpmem_guard_sigaction -- sigaction(SIGBUS, act, old) of the process,
 * once interposed: old gets the action the handler passes other SIGBUS
 * to (the process's own), act (if not NULL) becomes it; the handler
 * stays. -EPERM before rpmem_guard_interpose.
 */
int rpmem_guard_sigaction(const struct sigaction *act, struct sigaction *old);

#endif
