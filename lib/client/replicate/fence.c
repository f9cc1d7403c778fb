/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fence.c -- the fence-peer handler (DRBD's "fencing resource-only"): a
 * writer about to acknowledge writes a target lacks first has the
 * cluster fence that target's copy (never promoted while it is behind),
 * and unfences it once the copy holds every write again
 * (docs/design/fencing.md)
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "client_replicate.h"
#include "util.h"

/* how long a fence-peer handler may run before it counts as failed */
#define FENCE_TIMEOUT_S 60
/* the handler's environment, one variable a slot: a name and a path */
enum { FENCE_ENV_ACTION, FENCE_ENV_FILE, FENCE_ENV_TARGET, FENCE_ENV_PATH,
       FENCE_ENV_TIMEOUT, FENCE_ENV_COUNT };
#define FENCE_ENV_MAX (PATH_MAX + 64)

/*
 * client_fence_cmd -- the fence-peer handler's command
 * (RPMEM_FENCE_PEER_HANDLER, else replicate.fence_peer_handler of
 * rpmemctl.conf) into buf; "" if none
 */
void client_fence_cmd(char *buf, size_t len)
{
	const char *e = getenv("RPMEM_FENCE_PEER_HANDLER");
	buf[0] = '\0';
	if (e)
		rpmem_strlcpy(buf, e, len);
	else if (client_cfg_get_str("replicate.fence_peer_handler", buf, len) <
		 1)
		buf[0] = '\0';
}

/* fence_wait -- wait for pid up to FENCE_TIMEOUT_S; its status, or -1 */
static int fence_wait(pid_t pid)
{
	struct timespec nap = { 0, 20 * 1000 * 1000 };
	int st = 0;
	for (int i = 0; i < FENCE_TIMEOUT_S * 50; i++) {
		pid_t r = waitpid(pid, &st, WNOHANG);
		if (r == pid)
			return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
		if (r < 0 && errno != EINTR)
			return -1;
		nanosleep(&nap, NULL);
	}
	kill(-pid, SIGKILL);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return -1;
}

/*
 * client_fence_run -- run the handler cmd for the target name (host:port/
 * region/pool) of file: action "fence" waited for (its exit status, -1
 * if it ran out of time or could not start), "unfence" not waited for
 * (0 once started)
 */
int client_fence_run(const char *cmd, const char *action, const char *file,
		     const char *name)
{
	char env[FENCE_ENV_COUNT][FENCE_ENV_MAX];
	char *argv[] = { "/bin/sh", "-c", (char *)cmd, NULL };
	int wait = !strcmp(action, "fence");
	snprintf(env[FENCE_ENV_ACTION], FENCE_ENV_MAX, "RPMEM_FENCE_ACTION=%s",
		 action);
	snprintf(env[FENCE_ENV_FILE], FENCE_ENV_MAX, "RPMEM_FENCE_FILE=%s",
		 file);
	snprintf(env[FENCE_ENV_TARGET], FENCE_ENV_MAX, "RPMEM_FENCE_TARGET=%s",
		 name);
	snprintf(env[FENCE_ENV_PATH], FENCE_ENV_MAX,
		 "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
	snprintf(env[FENCE_ENV_TIMEOUT], FENCE_ENV_MAX,
		 "RPMEM_FENCE_TIMEOUT=%d", FENCE_TIMEOUT_S);
	char *envp[FENCE_ENV_COUNT + 1];
	for (int i = 0; i < FENCE_ENV_COUNT; i++)
		envp[i] = env[i];
	envp[FENCE_ENV_COUNT] = NULL;
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		setpgid(0, 0);
		if (!wait && fork() != 0)
			_exit(0);
		execve(argv[0], argv, envp);
		_exit(127);
	}
	setpgid(pid, pid);
	if (!wait) {
		int st;
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
		return 0;
	}
	return fence_wait(pid);
}
