/* SPDX-License-Identifier: BSD-3-Clause */
/* hold_pool.c -- test tool: open a remote pool for writing and hold it */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "librpmemctl.h"
#include "util.h"

int main(int argc, char *argv[])
{
	struct rpmem_target t;
	char err[256];
	struct rpmemctl_session_cfg *cfg = NULL;
	struct rpmemctl_session *s;
	struct rpmemctl_pool *p;

	if (argc != 3 && argc != 4) {
		fprintf(stderr, "usage: hold_pool HOST[:PORT]/REGION/POOL SECONDS [PSK_FILE]\n");
		return 2;
	}
	if (rpmem_parse_target(argv[1], RPMEM_TARGET_NEED_POOL, &t, err,
			       sizeof(err))) {
		fprintf(stderr, "hold_pool: %s\n", err);
		return 2;
	}
	/* with a PSK file: over TLS as its identity */
	if (argc == 4 &&
	    (rpmemctl_session_cfg_new(&cfg) ||
	     rpmemctl_session_cfg_set_psk_file(cfg, argv[3], NULL))) {
		fprintf(stderr, "hold_pool: %s: %s\n", argv[3],
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
	printf("holding\n");
	fflush(stdout);
	sleep((unsigned)atoi(argv[2]));
	rpmemctl_pool_close(&p);
	rpmemctl_session_close(&s);
	return 0;
}
