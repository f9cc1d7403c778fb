/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * log_app.c -- test tool: an application that uses librpmemctl with a
 * global log function and maps a file with libpmem2, as one run under
 * librpmem_preload would
 */
#include <fcntl.h>
#include <libpmem2.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include <librpmemctl.h>

/*
 * log_app FILE HOST PORT: logs every librpmemctl line at debug to
 * standard output as "app-log: PRIO MSG", opens and closes a session of
 * its own to HOST:PORT, then maps FILE with libpmem2 and persists "hello"
 * at offset 0. Exit 0 when all of that worked.
 */

/* app_log -- the application's global log function */
static void app_log(int prio, const char *msg, void *arg)
{
	(void)arg;
	printf("app-log: %d %s\n", prio, msg);
	fflush(stdout);
}

/* own_session -- a session of the application's own */
static int own_session(const char *host, const char *port)
{
	struct rpmemctl_session *s = NULL;
	char err[512];

	if (rpmemctl_session_open_err(host, port, RPMEMCTL_TRANSPORT_TCP, &s,
				      err, sizeof(err))) {
		fprintf(stderr, "log_app: %s\n", err);
		return 1;
	}
	rpmemctl_session_close(&s);
	return 0;
}

/* persist_hello -- map file with libpmem2 and persist "hello" at 0 */
static int persist_hello(const char *file)
{
	struct pmem2_config *cfg;
	struct pmem2_source *src;
	struct pmem2_map *map;
	int fd = open(file, O_RDWR);

	if (fd < 0 || pmem2_config_new(&cfg) ||
	    pmem2_config_set_required_store_granularity(
		    cfg, PMEM2_GRANULARITY_PAGE) ||
	    pmem2_source_from_fd(&src, fd) || pmem2_map_new(&map, cfg, src)) {
		fprintf(stderr, "log_app: %s: %s\n", file,
			fd < 0 ? "cannot open" : pmem2_errormsg());
		return 1;
	}
	pmem2_memcpy_fn cpy = pmem2_get_memcpy_fn(map);
	cpy(pmem2_map_get_address(map), "hello", 5, 0);
	pmem2_map_delete(&map);
	pmem2_source_delete(&src);
	pmem2_config_delete(&cfg);
	close(fd);
	return 0;
}

int main(int argc, char *argv[])
{
	if (argc != 4) {
		fprintf(stderr, "usage: log_app FILE HOST PORT\n");
		return 2;
	}
	rpmemctl_log_set_fn(app_log, NULL);
	rpmemctl_log_set_priority(LOG_DEBUG);
	if (own_session(argv[2], argv[3]))
		return 1;
	return persist_hello(argv[1]);
}
