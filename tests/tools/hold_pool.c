/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * hold_pool.c -- test tool: open a remote pool for writing and hold it
 * for SECONDS, or until SIGUSR1, then close it; with BYTES, first write
 * BYTES at offset 0 and flush them once; with a PSK file, over TLS as its
 * identity
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "librpmemctl.h"
#include "util.h"

/* is_number -- every character a digit (BYTES, not a PSK file path) */
static int is_number(const char *s)
{
	return *s && strspn(s, "0123456789") == strlen(s);
}

/* on_usr1 -- nothing: the signal only cuts the hold's sleep short */
static void on_usr1(int sig)
{
	(void)sig;
}

int main(int argc, char *argv[])
{
	struct sigaction sa = { .sa_handler = on_usr1 };
	struct rpmem_target t;
	char err[256];
	struct rpmemctl_session_cfg *cfg = NULL;
	struct rpmemctl_session *s;
	struct rpmemctl_pool *p;
	const char *bytes = NULL, *psk = NULL;

	if (argc < 3 || argc > 5) {
		fprintf(stderr, "usage: hold_pool HOST[:PORT]/REGION/POOL SECONDS [BYTES] [PSK_FILE]\n");
		return 2;
	}
	for (int i = 3; i < argc; i++) {
		if (is_number(argv[i]))
			bytes = argv[i];
		else
			psk = argv[i];
	}
	if (rpmem_parse_target(argv[1], RPMEM_TARGET_NEED_POOL, &t, err,
			       sizeof(err))) {
		fprintf(stderr, "hold_pool: %s\n", err);
		return 2;
	}
	if (psk && (rpmemctl_session_cfg_new(&cfg) ||
		    rpmemctl_session_cfg_set_psk_file(cfg, psk, NULL))) {
		fprintf(stderr, "hold_pool: %s: %s\n", psk,
			rpmemctl_strerror(-EINVAL));
		return 2;
	}
	int ret = rpmemctl_session_open_cfg(t.host, t.port,
					    RPMEMCTL_TRANSPORT_TCP, cfg, &s);
	rpmemctl_session_cfg_delete(&cfg);
	if (ret) {
		fprintf(stderr, "hold_pool: connect: %s\n",
			rpmemctl_strerror(ret));
		return 3;
	}
	ret = rpmemctl_pool_open(s, t.region, t.pool, RPMEMCTL_OPEN_RDWR, &p);
	if (ret) {
		fprintf(stderr, "hold_pool: open: %s\n",
			rpmemctl_session_errmsg(s));
		return 4;
	}
	if (bytes) {
		size_t len = strtoul(bytes, NULL, 0);
		char *buf = malloc(len ? len : 1);

		if (!buf)
			return 6;
		memset(buf, 0xa5, len);
		/* a pool's bytes change only while it is syncing */
		ret = rpmemctl_pool_set_state(p, RPMEMCTL_POOL_SYNCING,
					      "hold_pool");
		if (!ret)
			ret = rpmemctl_pool_persist(p, buf, 0, len);
		free(buf);
		if (ret) {
			fprintf(stderr, "hold_pool: persist: %s\n",
				rpmemctl_pool_errmsg(p));
			return 4;
		}
	}
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	printf("holding\n");
	fflush(stdout);
	sleep((unsigned)atoi(argv[2]));
	rpmemctl_pool_close(&p);
	rpmemctl_session_close(&s);
	return 0;
}
