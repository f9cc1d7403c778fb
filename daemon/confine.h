/* SPDX-License-Identifier: BSD-3-Clause */
/* confine.h -- what rpmemd does to itself to limit a compromise */
#ifndef RPMEMD_CONFINE_H
#define RPMEMD_CONFINE_H

/*
 * rpmemd_root_warn -- a loud warning when rpmemd runs as root and not
 * under systemd (neither NOTIFY_SOCKET nor INVOCATION_ID is set): the
 * packaged unit runs it as the rpmemd user. Returns 1 if it warned.
 */
int rpmemd_root_warn(void);

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
