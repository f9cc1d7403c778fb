/* SPDX-License-Identifier: BSD-3-Clause */
/* dirty_writer.c -- replica persists that outlive the target: tests/bats/dirtylog.bats */
/*
 * dirty_writer FILE TARGET OFFSET:LEN...
 *
 * Opens the replica of FILE (an existing pool file) at TARGET, says
 * "open" on stdout and waits for a line on stdin (the test stops the
 * target meanwhile), then for each OFFSET:LEN fills that range with new
 * bytes and persists it with rpmemctl_replica_persist, whose remote part
 * fails. Exits without closing the replica, as a crash would: only the
 * local file and its dirty log hold the writes. Exit 0 if every range
 * was persisted locally (the remote failures are expected), 1 otherwise.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "librpmemctl.h"

/* main -- open, wait, persist each range, leave without closing */
int main(int argc, char *argv[])
{
	struct rpmemctl_replica *r;
	char err[512], line[16];
	int i;

	if (argc < 4) {
		fprintf(stderr, "usage: %s FILE TARGET OFFSET:LEN...\n",
			argv[0]);
		return 2;
	}
	if (rpmemctl_replica_open_err(argv[1], argv[2],
				      RPMEMCTL_TRANSPORT_TCP, &r, err,
				      sizeof(err))) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	printf("open\n");
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return 1;
	for (i = 3; i < argc; i++) {
		char *colon;
		unsigned long long off = strtoull(argv[i], &colon, 0);
		unsigned long long len = strtoull(colon + 1, NULL, 0);
		unsigned char *p = (unsigned char *)rpmemctl_replica_addr(r);

		if (*colon != ':' || off + len > rpmemctl_replica_size(r))
			return 2;
		for (unsigned long long k = 0; k < len; k++)
			p[off + k] = (unsigned char)(p[off + k] + 1 + k % 7);
		if (rpmemctl_replica_persist(r, p + off, len))
			fprintf(stderr, "remote part failed (expected): %s\n",
				rpmemctl_replica_errmsg(r));
	}
	return 0; /* no close: as if the process died here */
}
