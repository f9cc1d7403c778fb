/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sess_probe.c -- test tool: one session over TLS with a pre-shared key
 * that holds no pool. "hold SECONDS": print "holding", wait, then ask
 * STATUS and print "alive" or "closed: <why>"; "deny REGION N": N LISTs
 * of a region the identity may not read, print "refused K of N"
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "librpmemctl.h"

/* open_psk -- a session to host:port as the PSK file's identity */
static int open_psk(const char *host, const char *port, const char *psk,
		    struct rpmemctl_session **s)
{
	struct rpmemctl_session_cfg *cfg = NULL;
	int ret = rpmemctl_session_cfg_new(&cfg);

	if (!ret)
		ret = rpmemctl_session_cfg_set_psk_file(cfg, psk, NULL);
	if (!ret)
		ret = rpmemctl_session_open_cfg(host, port,
						RPMEMCTL_TRANSPORT_TCP, cfg, s);
	if (ret)
		fprintf(stderr, "sess_probe: connect: %s\n",
			rpmemctl_strerror(ret));
	rpmemctl_session_cfg_delete(&cfg);
	return ret;
}

/* hold -- wait, then say whether the target still serves the session */
static int hold(struct rpmemctl_session *s, unsigned sec)
{
	struct rpmemctl_status *st = NULL;

	printf("holding\n");
	fflush(stdout);
	sleep(sec);
	if (rpmemctl_status_get(s, &st)) {
		printf("closed: %s\n", rpmemctl_session_errmsg(s));
		return 1;
	}
	rpmemctl_status_free(&st);
	printf("alive\n");
	return 0;
}

/* deny -- n LISTs of region; count those refused */
static int deny(struct rpmemctl_session *s, const char *region, unsigned n)
{
	unsigned k = 0;

	for (unsigned i = 0; i < n; i++) {
		struct rpmemctl_list *l = NULL;
		if (rpmemctl_list_get(s, region, &l))
			k++;
		rpmemctl_list_free(&l);
	}
	printf("refused %u of %u: %s\n", k, n, rpmemctl_session_errmsg(s));
	return 0;
}

int main(int argc, char *argv[])
{
	struct rpmemctl_session *s = NULL;
	int ret;

	if (argc < 6 || (strcmp(argv[4], "hold") && strcmp(argv[4], "deny")) ||
	    (!strcmp(argv[4], "deny") && argc < 7)) {
		fprintf(stderr, "usage: sess_probe HOST PORT PSK_FILE hold SECONDS\n"
				"       sess_probe HOST PORT PSK_FILE deny REGION N\n");
		return 2;
	}
	if (open_psk(argv[1], argv[2], argv[3], &s))
		return 3;
	if (!strcmp(argv[4], "hold"))
		ret = hold(s, (unsigned)atoi(argv[5]));
	else
		ret = deny(s, argv[5], (unsigned)atoi(argv[6]));
	rpmemctl_session_close(&s);
	return ret;
}
