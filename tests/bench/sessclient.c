/* SPDX-License-Identifier: BSD-3-Clause */
/* sessclient.c -- many concurrent librpmemctl sessions that work, then idle */

/*
 * Usage: sessclient HOST PORT REGION COUNT [PSK_FILE]
 *
 * Opens COUNT sessions to rpmemd at HOST:PORT (TLS with the PSK file if
 * given), one after the other, and in each does what a mirroring client
 * does: opens or creates its own 1 MiB pool REGION/sNNNN, marks it
 * syncing, writes 256 KiB, flushes and marks it consistent, hashes the
 * pool in 4 KiB blocks (checked against the local data), lists the
 * region and asks STATUS. Every session stays open. Then prints "open
 * COUNT" and waits for a line on stdin; closes them all, prints "closed"
 * and waits for another line (or EOF) before it exits, so that the
 * caller can measure the daemon in each state. Exit 1 on any failure,
 * naming it.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "librpmemctl.h"

#define POOL_SIZE (1u << 20)
#define WRITE_LEN (256u << 10)
#define BS 4096u
#define NBLOCKS (POOL_SIZE / BS)

struct one {
	struct rpmemctl_session *sess;
	struct rpmemctl_pool *pool;
};

/* fail -- report what failed in session i and exit */
static void fail(unsigned i, const char *what, int ret,
		 struct rpmemctl_session *sess)
{
	fprintf(stderr, "sessclient: session %u: %s: %s (%s)\n", i, what,
		rpmemctl_strerror(ret), sess ? rpmemctl_session_errmsg(sess) :
					       "");
	exit(1);
}

/* work -- session i: pool, write + flush, hash check, LIST, STATUS */
static void work(unsigned i, const char *host, const char *port,
		 const char *region, const struct rpmemctl_session_cfg *cfg,
		 const uint8_t *data, struct one *o)
{
	static uint64_t hashes[NBLOCKS];
	struct rpmemctl_list *l = NULL;
	struct rpmemctl_status *st = NULL;
	char name[32];
	int ret;

	ret = rpmemctl_session_open_cfg(host, port, RPMEMCTL_TRANSPORT_TCP,
					cfg, &o->sess);
	if (ret)
		fail(i, "session open", ret, NULL);
	snprintf(name, sizeof(name), "s%04u", i);
	ret = rpmemctl_pool_open_or_create(o->sess, region, name, POOL_SIZE,
					   RPMEMCTL_OPEN_RDWR |
						   RPMEMCTL_OPEN_CREATE,
					   &o->pool, NULL);
	if (ret)
		fail(i, "pool open", ret, o->sess);
	if ((ret = rpmemctl_pool_set_state(o->pool, RPMEMCTL_POOL_SYNCING,
					   "sessclient")) ||
	    (ret = rpmemctl_pool_write(o->pool, data, 0, WRITE_LEN)) ||
	    (ret = rpmemctl_pool_flush(o->pool, 0, WRITE_LEN)) ||
	    (ret = rpmemctl_pool_set_state(o->pool, RPMEMCTL_POOL_CONSISTENT,
					   "sessclient")))
		fail(i, "write + flush", ret, o->sess);
	ret = rpmemctl_pool_hash(o->pool, 0, BS, NBLOCKS, hashes);
	if (ret)
		fail(i, "hash", ret, o->sess);
	for (unsigned b = 0; b < WRITE_LEN / BS; b++)
		if (hashes[b] != XXH3_64bits(data + (size_t)b * BS, BS)) {
			fprintf(stderr,
				"sessclient: session %u: block %u differs on the target\n",
				i, b);
			exit(1);
		}
	if ((ret = rpmemctl_list_get(o->sess, region, &l)))
		fail(i, "list", ret, o->sess);
	rpmemctl_list_free(&l);
	if ((ret = rpmemctl_status_get(o->sess, &st)))
		fail(i, "status", ret, o->sess);
	if (rpmemctl_status_session_count(st) < 1) {
		fprintf(stderr, "sessclient: session %u: STATUS shows none\n",
			i);
		exit(1);
	}
	rpmemctl_status_free(&st);
}

/* wait_line -- block until a line (or EOF) on stdin */
static void wait_line(void)
{
	char line[64];

	if (!fgets(line, sizeof(line), stdin))
		return;
}

int main(int argc, char **argv)
{
	struct rpmemctl_session_cfg *cfg = NULL;
	int ret;

	if (argc != 5 && argc != 6) {
		fprintf(stderr,
			"usage: sessclient HOST PORT REGION COUNT [PSK_FILE]\n");
		return 2;
	}
	unsigned n = (unsigned)strtoul(argv[4], NULL, 10);
	struct one *v = calloc(n ? n : 1, sizeof(*v));
	uint8_t *data = malloc(WRITE_LEN);
	if (!v || !data) {
		fprintf(stderr, "sessclient: out of memory\n");
		return 1;
	}
	for (unsigned k = 0; k < WRITE_LEN; k++)
		data[k] = (uint8_t)(k * 2654435761u >> 13);
	if (argc == 6 &&
	    ((ret = rpmemctl_session_cfg_new(&cfg)) ||
	     (ret = rpmemctl_session_cfg_set_psk_file(cfg, argv[5], NULL)))) {
		fprintf(stderr, "sessclient: %s: %s\n", argv[5],
			rpmemctl_strerror(ret));
		return 1;
	}
	for (unsigned i = 0; i < n; i++)
		work(i, argv[1], argv[2], argv[3], cfg, data, &v[i]);
	printf("open %u\n", n);
	fflush(stdout);
	wait_line();
	for (unsigned i = 0; i < n; i++) {
		rpmemctl_pool_close(&v[i].pool);
		rpmemctl_session_close(&v[i].sess);
	}
	printf("closed\n");
	fflush(stdout);
	wait_line();
	rpmemctl_session_cfg_delete(&cfg);
	free(data);
	free(v);
	return 0;
}
