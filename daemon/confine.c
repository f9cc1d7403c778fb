/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * confine.c -- rpmemd started as root gives up root's privileges, and
 * rpmemd's own system call filter
 */
#include <errno.h>
#include <grp.h>
#include <linux/capability.h>
#include <linux/securebits.h>
#include <pwd.h>
#include <sched.h>
#include <seccomp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "config.h"
#include "confine.h"
#include "log.h"
#include "util.h"

/*
 * What rpmemd calls once running: I/O on sockets, pools and pipes
 * (splice), the files a reload reads and the region directories it
 * opens, threads, time and signals. ioctl stays whole: the RDMA verbs
 * (/dev/infiniband/uverbs*, ibv_reg_mr, queue creation) and the
 * rdma_cm device (write) run on it, as do FIONREAD and friends; madvise
 * (MADV_DONTFORK on registered memory), mmap and munmap of the verbs'
 * doorbell and queue pages, sched_getaffinity and get_mempolicy (verbs
 * providers), eventfd (the RDMA threads' stop signal) and epoll are the
 * RDMA target's. Names this architecture lacks are skipped.
 */
static const char *const allowed[] = {
	/* descriptors and plain I/O */
	"read", "write", "readv", "writev", "pread64", "pwrite64", "preadv",
	"pwritev", "preadv2", "pwritev2", "lseek", "close", "close_range",
	"dup", "dup2", "dup3", "fcntl", "ioctl", "splice", "tee", "pipe",
	"pipe2",
	/* files: pools, metadata, the hash cache, reload, sysfs (ndctl) */
	"open", "openat", "creat", "stat", "fstat", "lstat", "newfstatat",
	"statx", "statfs", "fstatfs", "access", "faccessat", "faccessat2",
	"readlink", "readlinkat", "getdents", "getdents64", "mkdir",
	"mkdirat", "unlink", "unlinkat", "rename", "renameat", "renameat2",
	"rmdir", "link", "linkat", "truncate", "ftruncate", "fallocate",
	"fsync", "fdatasync", "msync", "sync_file_range", "fchmod", "fchmodat",
	"umask", "utimensat", "flock", "getcwd", "chdir", "fchdir",
	"fadvise64", "copy_file_range",
	/* memory (mmap and mprotect: below, without W+X) */
	"brk", "munmap", "mremap", "madvise", "get_mempolicy", "membarrier",
	/* threads, identity (read only), scheduling */
	"futex", "futex_waitv", "set_robust_list", "get_robust_list", "rseq",
	"set_tid_address", "exit", "exit_group", "sched_yield",
	"sched_getaffinity", "getcpu", "gettid", "getpid", "getppid",
	"getuid", "geteuid", "getgid", "getegid", "getresuid", "getresgid",
	"getgroups", "uname", "sysinfo", "getrusage", "getrlimit",
	/* signals */
	"rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "rt_sigsuspend",
	"rt_sigpending", "rt_sigtimedwait", "sigaltstack", "restart_syscall",
	/* time, randomness, waiting */
	"clock_gettime", "clock_getres", "clock_nanosleep", "nanosleep",
	"gettimeofday", "time", "getrandom", "eventfd", "eventfd2",
	"timerfd_create", "timerfd_settime", "timerfd_gettime", "poll",
	"ppoll", "select", "pselect6", "epoll_create", "epoll_create1",
	"epoll_ctl", "epoll_wait", "epoll_pwait", "epoll_pwait2",
	/* sockets (socket: below, by family; no listen after start-up) */
	"socketpair", "connect", "bind", "accept", "accept4", "recvfrom",
	"recvmsg", "recvmmsg", "sendto", "sendmsg", "sendmmsg", "setsockopt",
	"getsockopt", "getsockname", "getpeername", "shutdown",
};

/*
 * What nothing in rpmemd calls and an intruder would: run a program,
 * debug or read another process, mount, load kernel code, change
 * identity or namespace, or get around the filter (io_uring). These kill
 * the process instead of failing.
 */
static const char *const fatal[] = {
	"execve", "execveat", "fork", "vfork", "ptrace", "process_vm_readv",
	"process_vm_writev", "pidfd_getfd", "mount", "umount", "umount2",
	"pivot_root", "chroot", "move_mount", "open_tree", "fsopen",
	"fsconfig", "fsmount", "fspick", "mount_setattr", "init_module",
	"finit_module", "delete_module", "kexec_load", "kexec_file_load",
	"bpf", "perf_event_open", "reboot", "swapon", "swapoff", "unshare",
	"setns", "keyctl", "add_key", "request_key", "userfaultfd",
	"personality", "iopl", "ioperm", "acct", "settimeofday",
	"clock_settime", "clock_adjtime", "adjtimex", "open_by_handle_at",
	"name_to_handle_at", "syslog", "quotactl", "quotactl_fd",
	"lookup_dcookie", "setuid", "setgid", "setreuid", "setregid",
	"setresuid", "setresgid", "setgroups", "setfsuid", "setfsgid",
	"capset", "sethostname", "setdomainname", "vhangup", "uselib",
	"io_uring_setup", "io_uring_enter", "io_uring_register",
};

/* under_systemd -- started by systemd: its unit decides the privileges */
static int under_systemd(void)
{
	return getenv("NOTIFY_SOCKET") || getenv("INVOCATION_ID");
}

/* caps_set -- the thread's effective and permitted sets: keep (bits of
 * the first 32 capabilities), nothing inheritable */
static int caps_set(uint32_t keep)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3] = {
		{ .effective = keep, .permitted = keep },
	};
	return syscall(SYS_capset, &h, d) ? -errno : 0;
}

/*
 * bound -- every capability but keep out of the bounding set and the
 * ambient set, and uid 0 no longer a source of capabilities (securebits)
 */
static int bound(uint32_t keep)
{
	for (int c = 0; prctl(PR_CAPBSET_READ, c, 0, 0, 0) >= 0; c++)
		if (!(c < 32 && (keep & (1u << c))) &&
		    prctl(PR_CAPBSET_DROP, c, 0, 0, 0))
			return -errno;
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) &&
	    errno != EINVAL)
		return -errno;
	if (prctl(PR_SET_SECUREBITS, SECBIT_NOROOT | SECBIT_NOROOT_LOCKED, 0,
		  0, 0))
		return -errno;
	return 0;
}

/* ipc_lock_effective -- CAP_IPC_LOCK is in the effective set */
static int ipc_lock_effective(void)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3] = { { 0 } };
	return !syscall(SYS_capget, &h, d) &&
	       (d[0].effective & (1u << CAP_IPC_LOCK));
}

/* become -- user pw: its groups, then its uid (capabilities keep only
 * keep, PR_SET_KEEPCAPS holding them across the change) */
static int become(const struct passwd *pw, uint32_t keep)
{
	if (keep && prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0))
		return -errno;
	if (initgroups(pw->pw_name, pw->pw_gid) ||
	    setresgid(pw->pw_gid, pw->pw_gid, pw->pw_gid) ||
	    setresuid(pw->pw_uid, pw->pw_uid, pw->pw_uid))
		return -errno;
	if (keep && prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0))
		return -errno;
	return 0;
}

int rpmemd_privileges_drop(const struct rpmemd_config *cfg, int check)
{
	const char *name = cfg->user[0] ? cfg->user : "rpmemd";
	/* a port below 1024 is bound after this */
	uint32_t keep = atoi(cfg->port) < 1024 ? 1u << CAP_NET_BIND_SERVICE : 0;
	const char *kept = keep ? " but CAP_NET_BIND_SERVICE (port below 1024)" :
				  "";
	struct rlimit inf = { RLIM_INFINITY, RLIM_INFINITY };
	int ret;

	if (geteuid() != 0 || under_systemd())
		return 0;
	/*
	 * RDMA registers pool memory: with CAP_IPC_LOCK it pinned past
	 * RLIMIT_MEMLOCK, so its loss is made up by the unit's
	 * LimitMEMLOCK=infinity; started without it (setpriv, a container),
	 * the limit it was given is the operator's and stays
	 */
	if (!check && ipc_lock_effective() && setrlimit(RLIMIT_MEMLOCK, &inf))
		DBG("RLIMIT_MEMLOCK stays as it is (errno %d)", errno);
	struct passwd *pw = getpwnam(name);
	if (pw && pw->pw_uid == 0)
		pw = NULL; /* user = "root": capabilities only */
	if (check)
		return pw ? become(pw, 0) : 0;
	if ((ret = bound(keep)) || (pw && (ret = become(pw, keep))) ||
	    (ret = caps_set(keep))) {
		ERR("running as root outside systemd: cannot give up root's privileges: %s",
		    strerror(-ret));
		return ret;
	}
	if (pw)
		INFO("running as root outside systemd: now user '%s' (uid %u, gid %u) without capabilities%s, as the packaged unit runs it",
		     pw->pw_name, (unsigned)pw->pw_uid, (unsigned)pw->pw_gid,
		     kept);
	else if (cfg->user[0])
		INFO("running as root outside systemd (user = \"%s\"): every capability dropped%s",
		     cfg->user, kept);
	else
		WARN("running as root outside systemd: still uid 0, with every capability dropped%s (no user 'rpmemd'): files are reached as their owner root, not past their modes; set user = in rpmemd.conf to run as an unprivileged user that owns the regions, as the packaged unit runs it as rpmemd (see rpmemd(8))",
		     kept);
	return 0;
}

/* add_names -- a rule with action act for each name of list */
static int add_names(scmp_filter_ctx ctx, uint32_t act,
		     const char *const *list, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int nr = seccomp_syscall_resolve_name(list[i]);
		if (nr == __NR_SCMP_ERROR)
			continue;
		int ret = seccomp_rule_add(ctx, act, nr, 0);
		if (ret) {
			ERR("seccomp: %s: %s", list[i], strerror(-ret));
			return ret;
		}
	}
	return 0;
}

/*
 * add_args -- the calls allowed for some arguments only: socket families
 * rpmemd uses; threads, never processes (clone3 hides its flags from the
 * filter: ENOSYS makes glibc fall back to clone); no writable and
 * executable memory; a thread's name; reading resource limits; signals
 * to its own threads
 */
static int add_args(scmp_filter_ctx ctx)
{
	const uint32_t A = SCMP_ACT_ALLOW;
	const int wx = PROT_WRITE | PROT_EXEC;
	int ret = 0;

	ret |= seccomp_rule_add(ctx, A, SCMP_SYS(socket), 1,
				SCMP_A0(SCMP_CMP_EQ, AF_UNIX));
	ret |= seccomp_rule_add(ctx, A, SCMP_SYS(socket), 1,
				SCMP_A0(SCMP_CMP_EQ, AF_INET));
	ret |= seccomp_rule_add(ctx, A, SCMP_SYS(socket), 1,
				SCMP_A0(SCMP_CMP_EQ, AF_INET6));
	ret |= seccomp_rule_add(ctx, A, SCMP_SYS(socket), 1,
				SCMP_A0(SCMP_CMP_EQ, AF_NETLINK));
	ret |= seccomp_rule_add(ctx, A, SCMP_SYS(clone), 1,
				SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD,
					CLONE_THREAD));
	ret |= seccomp_rule_add(ctx, SCMP_ACT_KILL_PROCESS,
				SCMP_SYS(clone), 1,
				SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, 0));
	ret |= seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3),
				0);
	ret |= seccomp_rule_add(ctx, A, SCMP_SYS(mmap), 1,
				SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0));
	ret |= seccomp_rule_add(ctx, A, SCMP_SYS(mmap), 1,
				SCMP_A2(SCMP_CMP_MASKED_EQ, wx, PROT_EXEC));
	ret |= seccomp_rule_add(ctx, A, SCMP_SYS(mprotect), 1,
				SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0));
	ret |= seccomp_rule_add(ctx, A, SCMP_SYS(prctl), 1,
				SCMP_A0(SCMP_CMP_EQ, PR_SET_NAME));
	ret |= seccomp_rule_add(ctx, A, SCMP_SYS(prctl), 1,
				SCMP_A0(SCMP_CMP_EQ, PR_GET_NAME));
	ret |= seccomp_rule_add(ctx, A, SCMP_SYS(prlimit64), 1,
				SCMP_A2(SCMP_CMP_EQ, 0));
	ret |= seccomp_rule_add(ctx, A, SCMP_SYS(tgkill), 1,
				SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)getpid()));
	if (ret)
		ERR("seccomp: cannot add the argument rules");
	return ret ? -EINVAL : 0;
}

int rpmemd_seccomp_apply(void)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ERRNO(EPERM));
	int ret;

	if (!ctx) {
		ERR("seccomp: cannot create a filter");
		return -ENOMEM;
	}
	/*
	 * every thread (the RDMA listeners' run already), no setuid gain;
	 * the kernel logs the kills (audit type 1326), not each EPERM: a
	 * thread's clone3 would log one each
	 */
	if ((ret = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_TSYNC, 1)) ||
	    (ret = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 1)) ||
	    (ret = add_names(ctx, SCMP_ACT_ALLOW, allowed,
			     ARRAY_SIZE(allowed))) ||
	    (ret = add_names(ctx, SCMP_ACT_KILL_PROCESS, fatal,
			     ARRAY_SIZE(fatal))) ||
	    (ret = add_args(ctx)))
		goto out;
	if ((ret = seccomp_load(ctx)))
		ERR("seccomp: cannot load the filter: %s (rpmemd -S runs without it)",
		    strerror(ret < 0 ? -ret : EINVAL));
	else
		INFO("seccomp: filter on (%zu calls allowed; exec, ptrace, mount, module loading, bpf and identity changes kill the process, other calls fail with EPERM)",
		     ARRAY_SIZE(allowed));
out:
	seccomp_release(ctx);
	return ret;
}
