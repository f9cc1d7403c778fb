/* SPDX-License-Identifier: BSD-3-Clause */
/* rpmemd.c -- rpmemd: command line, configuration check, start and stop */
#include <getopt.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "access.h"
#include "auth.h"
#include "config.h"
#include "confine.h"
#include "guard.h"
#include "log.h"
#include "region.h"
#include "server.h"

/* blocks from this size on are mappings of their own (malloc_setup) */
#define RPMEMD_MMAP_THRESHOLD (128 << 10)
/*
 * malloc arenas shared by the session threads (glibc's default: 8 per
 * core). Fewer arenas hold fewer half-used pages; sessions allocate
 * little once they run (the data path not at all), so more would not
 * buy concurrency.
 */
#define RPMEMD_ARENA_MAX 4

#ifndef RPMEM_VERSION
#define RPMEM_VERSION "unknown"
#endif

/* usage -- the options, to f */
static void usage(FILE *f)
{
	fprintf(f,
		"Usage: rpmemd [-c FILE] [-n] [-d] [-f] [-S] [-h] [-V]\n"
		"Serve persistent-memory pools to rpmemctl initiators.\n"
		"\n"
		"  -c, --config FILE  configuration file (default %s)\n"
		"  -n, --check        check the configuration and exit\n"
		"  -d, --debug        log everything to stderr\n"
		"  -f, --foreground   stay in the foreground (always the case)\n"
		"  -S, --no-seccomp   no system call filter (for debugging)\n"
		"  -h, --help         show this help\n"
		"  -V, --version      show the version\n"
		"\n"
		"Signals: SIGHUP reloads the configuration, SIGTERM and SIGINT\n"
		"stop after the requests in progress.\n",
		RPMEMD_DEFAULT_CONFIG);
}

/*
 * malloc_setup -- blocks of 128 KiB and more (a TLS connection's read
 * buffer, a large reply) get mappings of their own, returned to the
 * system when freed. glibc's default raises that threshold to the
 * largest such block freed so far, after which these buffers come from
 * the per-thread arenas and stay resident there once freed: with 1,024
 * sessions, hundreds of MiB (docs/PERFORMANCE.md).
 */
static void malloc_setup(void)
{
	mallopt(M_MMAP_THRESHOLD, RPMEMD_MMAP_THRESHOLD);
	mallopt(M_ARENA_MAX, RPMEMD_ARENA_MAX);
}

int main(int argc, char *argv[])
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "check", no_argument, NULL, 'n' },
		{ "debug", no_argument, NULL, 'd' },
		{ "foreground", no_argument, NULL, 'f' },
		{ "no-seccomp", no_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *path = RPMEMD_DEFAULT_CONFIG;
	struct rpmemd_config cfg;
	struct rpmemd_server *srv;
	char err[RPMEM_MSG_MAX];
	int check = 0, debug = 0, filter = 1, c;

	malloc_setup();
	while ((c = getopt_long(argc, argv, "c:ndfShV", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			path = optarg;
			break;
		case 'n':
			check = 1;
			break;
		case 'd':
			debug = 1;
			break;
		case 'f':
			break;
		case 'S':
			filter = 0;
			break;
		case 'h':
			usage(stdout);
			return fflush(stdout) || ferror(stdout) ? 1 : 0;
		case 'V':
			printf("rpmemd %s\n", RPMEM_VERSION);
			return fflush(stdout) || ferror(stdout) ? 1 : 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "rpmemd: unexpected argument '%s'\n",
			argv[optind]);
		usage(stderr);
		return 2;
	}

	/* until the configuration says how: standard error, as a program */
	rpmem_log_init("rpmemd", LOG_WARNING, NULL, NULL);
	if (rpmemd_config_load(path, &cfg, err, sizeof(err))) {
		fprintf(stderr, "rpmemd: %s\n", err);
		return 1;
	}
	if (check) {
		struct rpmemd_auth *auth = NULL;
		if (rpmemd_privileges_drop(&cfg, 1)) {
			fprintf(stderr, "rpmemd: %s: cannot become its user\n",
				path);
			rpmemd_config_free(&cfg);
			return 1;
		}
		int bad = rpmemd_auth_new(&cfg, &auth, err, sizeof(err));
		rpmemd_auth_delete(&auth);
		if (!bad)
			rpmemd_access_warn(&cfg);
		int unsafe = rpmemd_regions_check(&cfg);
		rpmemd_config_free(&cfg);
		if (bad) {
			fprintf(stderr, "rpmemd: %s: %s\n", path, err);
			return 1;
		}
		if (unsafe) {
			fprintf(stderr, "rpmemd: %s: %d region director%s that someone else could write (region_check = \"strict\")\n",
				path, unsafe, unsafe == 1 ? "y" : "ies");
			return 1;
		}
		printf("configuration OK\n");
		return fflush(stdout) || ferror(stdout) ? 1 : 0;
	}

	rpmemd_log_setup(&cfg, debug);
	/* as root outside systemd: before anything is opened or created */
	if (rpmemd_privileges_drop(&cfg, 0)) {
		ERR("startup failed");
		rpmemd_config_free(&cfg);
		return 1;
	}
	/* no library of ours replaces the SIGBUS handler: checked once */
	rpmem_guard_own_process();
	if (rpmemd_server_new(&cfg, debug, &srv)) {
		ERR("startup failed");
		return 1;
	}
	/* listeners bound, TLS keys read, regions open: the steady state */
	if (!filter) {
		WARN("seccomp: filter off (-S): rpmemd may call anything");
	} else if (rpmemd_seccomp_apply()) {
		ERR("startup failed");
		rpmemd_server_delete(&srv);
		return 1;
	}
	int ret = rpmemd_server_run(srv);
	rpmemd_server_delete(&srv);
	return ret ? 1 : 0;
}
