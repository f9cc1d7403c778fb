/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * seccomp_probe.c -- test preload: what a compromised rpmemd could still
 * do. LD_PRELOAD=seccomp_probe.so with RPMEM_PROBE_OUT=FILE makes the
 * process, on SIGUSR2 (whichever of its threads takes it), try calls
 * rpmemd never makes, append "name result errno" for each to FILE, and
 * then exec "sh -c 'echo escaped >>FILE'": under rpmemd's filter the
 * calls fail and the exec kills the process (SIGSYS); without it they
 * work and the shell writes "escaped".
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

static char out[4096];
static char cmd[4200];

/* note -- one line "name result errno" */
static void note(int fd, const char *name, long r)
{
	char line[128];
	int n = snprintf(line, sizeof(line), "%s %ld %d\n", name, r,
			 r < 0 ? errno : 0);
	if (write(fd, line, (size_t)n) < 0)
		_exit(3);
}

/* try_listen -- a new listening socket (rpmemd opens its own at start) */
static long try_listen(void)
{
	int s = socket(AF_INET, SOCK_STREAM, 0);
	long r = s < 0 ? -1 : listen(s, 1);
	int e = errno;
	if (s >= 0)
		close(s);
	errno = e;
	return r;
}

/* try_mprotect_exec -- an anonymous page made executable */
static long try_mprotect_exec(void)
{
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return -1;
	long r = mprotect(p, 4096, PROT_READ | PROT_EXEC);
	int e = errno;
	munmap(p, 4096);
	errno = e;
	return r;
}

/* try_setrlimit -- raise nothing, but set a limit (prlimit64 writing) */
static long try_setrlimit(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_CORE, &rl))
		return -1;
	return setrlimit(RLIMIT_CORE, &rl);
}

/* probe -- SIGUSR2: try, note, then exec */
static void probe(int sig)
{
	(void)sig;
	int fd = open(out, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (fd < 0)
		_exit(2);
	note(fd, "socket_packet", socket(AF_PACKET, SOCK_RAW, 0));
	note(fd, "listen", try_listen());
	note(fd, "kill", kill(getpid(), 0));
	note(fd, "mprotect_exec", try_mprotect_exec());
	note(fd, "setrlimit", try_setrlimit());
	note(fd, "memfd_create", syscall(SYS_memfd_create, "x", 0));
	note(fd, "clone3", syscall(SYS_clone3, NULL, 0));
	note(fd, "exec", 0);
	close(fd);
	char *argv[] = { "sh", "-c", cmd, NULL };
	execv("/bin/sh", argv);
	_exit(4);
}

/* init -- the SIGUSR2 handler, if RPMEM_PROBE_OUT names a file */
__attribute__((constructor)) static void init(void)
{
	const char *o = getenv("RPMEM_PROBE_OUT");
	struct sigaction sa;

	if (!o || strlen(o) >= sizeof(out) || strchr(o, '\''))
		return;
	strcpy(out, o);
	snprintf(cmd, sizeof(cmd), "echo escaped >>'%s'", out);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = probe;
	sigaction(SIGUSR2, &sa, NULL);
}
