/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * state_churn.c -- test tool: open a remote pool for writing and set its
 * state syncing, then consistent, N times over: 2 N events on the target
 * in one session, as fast as the target answers
 */
#include <stdio.h>
#include <stdlib.h>

#include "librpmemctl.h"
#include "util.h"

int main(int argc, char *argv[])
{
	struct rpmem_target t;
	struct rpmemctl_session *s;
	struct rpmemctl_pool *p;
	char err[256];

	if (argc != 3) {
		fprintf(stderr, "usage: state_churn HOST[:PORT]/REGION/POOL N\n");
		return 2;
	}
	if (rpmem_parse_target(argv[1], RPMEM_TARGET_NEED_POOL, &t, err,
			       sizeof(err))) {
		fprintf(stderr, "state_churn: %s\n", err);
		return 2;
	}
	long n = atol(argv[2]);
	int ret = rpmemctl_session_open(t.host, t.port, RPMEMCTL_TRANSPORT_TCP,
					&s);
	if (ret) {
		fprintf(stderr, "state_churn: connect: %s\n",
			rpmemctl_strerror(ret));
		return 3;
	}
	ret = rpmemctl_pool_open(s, t.region, t.pool, RPMEMCTL_OPEN_RDWR, &p);
	if (ret) {
		fprintf(stderr, "state_churn: open: %s\n",
			rpmemctl_session_errmsg(s));
		return 4;
	}
	for (long i = 0; i < n && !ret; i++) {
		ret = rpmemctl_pool_set_state(p, RPMEMCTL_POOL_SYNCING, NULL);
		if (!ret)
			ret = rpmemctl_pool_set_state(p, RPMEMCTL_POOL_CONSISTENT,
						      NULL);
	}
	if (ret)
		fprintf(stderr, "state_churn: set state: %s\n",
			rpmemctl_pool_errmsg(p));
	rpmemctl_pool_close(&p);
	rpmemctl_session_close(&s);
	return ret ? 4 : 0;
}
