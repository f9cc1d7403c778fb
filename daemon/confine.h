/* SPDX-License-Identifier: BSD-3-Clause */
/* confine.h -- what rpmemd does to itself to limit a compromise */
#ifndef RPMEMD_CONFINE_H
#define RPMEMD_CONFINE_H

struct rpmemd_config;

/*
 * rpmemd_privileges_drop -- when rpmemd runs as root and not under
 * systemd (neither NOTIFY_SOCKET nor INVOCATION_ID is set), before it
 * opens anything: become cfg->user (default: the rpmemd user if it
 * exists), as the packaged unit runs it, or stay uid 0 without any
 * capability (a warning says so); either way no capability is left in
 * any set nor can be regained (bounding set, ambient set, securebits),
 * but CAP_NET_BIND_SERVICE for a port below 1024, and RLIMIT_MEMLOCK is
 * raised as the unit's LimitMEMLOCK=infinity does. Call it while the
 * process has one thread (capabilities are per thread). With check
 * (rpmemd -n), only the user changes, silently: the regions are checked
 * as the daemon will see them. 0 (also when nothing was to be done), or
 * -errno (logged).
 */
int rpmemd_privileges_drop(const struct rpmemd_config *cfg, int check);

/*
 * rpmemd_seccomp_apply -- install the system call filter on every thread
 * of the process (and set no_new_privs): the calls rpmemd needs once its
 * listeners, TLS keys and regions are open, including a SIGHUP reload.
 * exec, ptrace, mount, module loading, bpf, namespace and identity
 * changes kill the process; any other call not allowed fails with EPERM
 * (rpmemd(8), SECURITY). Returns 0 or a negative errno.
 */
int rpmemd_seccomp_apply(void);

#endif
