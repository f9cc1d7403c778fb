/* SPDX-License-Identifier: BSD-3-Clause */
/* lib_errors.c -- what a librpmemctl application sees of errors and logs */
/*
 * Usage: lib_errors log HOST PORT           open and close a session with
 *                                           the log priority at debug
 *        lib_errors log-fn HOST PORT        the same with a log function
 *                                           that prints "fn: PRIO MSG"
 *        lib_errors pool HOST PORT REGION POOL
 *                                           a failed call on a pool, then
 *                                           one that succeeds: the pool's
 *                                           and session's messages
 *        lib_errors kill HOST PORT REGION POOL
 *                                           open the pool for writing,
 *                                           print "open", wait for a line
 *                                           on stdin, then write and flush
 *                                           and print the pool's message
 *
 * Links the shared library and uses only its public API, as an
 * application does. Exit 0 when every call did what the usage says.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include <librpmemctl.h>

/* print_fn -- a log function: "fn: <prio> <msg>" on standard output */
static void print_fn(int prio, const char *msg, void *arg)
{
	printf("%s: %d %s\n", (const char *)arg, prio, msg);
}

/* session -- open a tcp session or say why not */
static struct rpmemctl_session *session(const char *host, const char *port)
{
	struct rpmemctl_session *s = NULL;
	char err[512];

	if (rpmemctl_session_open_err(host, port, RPMEMCTL_TRANSPORT_TCP, &s,
				      err, sizeof(err))) {
		printf("session: %s\n", err);
		return NULL;
	}
	return s;
}

/* do_log -- a session open and close, logged at debug */
static int do_log(const char *host, const char *port, int with_fn)
{
	if (with_fn)
		rpmemctl_log_set_fn(print_fn, "fn");
	rpmemctl_log_set_priority(LOG_DEBUG);
	struct rpmemctl_session *s = session(host, port);
	if (!s)
		return 1;
	rpmemctl_session_close(&s);
	return 0;
}

/* do_pool -- a write on a read-only open, then a read */
static int do_pool(char **argv)
{
	struct rpmemctl_session *s = session(argv[2], argv[3]);
	struct rpmemctl_pool *p = NULL;
	char buf[4096] = { 0 };
	int ret;

	if (!s)
		return 1;
	ret = rpmemctl_pool_open(s, argv[4], argv[5], RPMEMCTL_OPEN_RDONLY, &p);
	if (ret) {
		printf("open: %s\n", rpmemctl_session_errmsg(s));
		rpmemctl_session_close(&s);
		return 1;
	}
	ret = rpmemctl_pool_write(p, buf, 0, sizeof(buf));
	printf("write=%d pool: %s\n", ret, rpmemctl_pool_errmsg(p));
	printf("write=%d session: %s\n", ret, rpmemctl_session_errmsg(s));
	ret = rpmemctl_pool_read(p, buf, 0, sizeof(buf));
	printf("read=%d pool: '%s'\n", ret, rpmemctl_pool_errmsg(p));
	rpmemctl_pool_close(&p);
	rpmemctl_session_close(&s);
	return 0;
}

/* do_kill -- a write and flush after the target went away */
static int do_kill(char **argv)
{
	struct rpmemctl_session *s = session(argv[2], argv[3]);
	struct rpmemctl_pool *p = NULL;
	static char buf[1 << 20];
	char line[16];
	int ret;

	if (!s)
		return 1;
	ret = rpmemctl_pool_open(s, argv[4], argv[5], RPMEMCTL_OPEN_RDWR, &p);
	if (ret) {
		printf("open: %s\n", rpmemctl_session_errmsg(s));
		rpmemctl_session_close(&s);
		return 1;
	}
	printf("open\n");
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return 1;
	ret = rpmemctl_pool_write(p, buf, 0, sizeof(buf));
	if (!ret)
		ret = rpmemctl_pool_flush(p, 0, sizeof(buf));
	printf("flush=%d pool: %s\n", ret, rpmemctl_pool_errmsg(p));
	rpmemctl_pool_close(&p);
	rpmemctl_session_close(&s);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "log"))
		return do_log(argv[2], argv[3], 0);
	if (argc == 4 && !strcmp(argv[1], "log-fn"))
		return do_log(argv[2], argv[3], 1);
	if (argc == 6 && !strcmp(argv[1], "pool"))
		return do_pool(argv);
	if (argc == 6 && !strcmp(argv[1], "kill"))
		return do_kill(argv);
	fprintf(stderr, "usage: lib_errors log|log-fn HOST PORT | "
		"pool|kill HOST PORT REGION POOL\n");
	return 2;
}
