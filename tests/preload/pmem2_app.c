/* SPDX-License-Identifier: BSD-3-Clause */
/* pmem2_app.c -- test tool: an unmodified libpmem2 application, by steps */
#include <fcntl.h>
#include <libpmem2.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
 * pmem2_app FILE STEP...: maps FILE (page granularity) with libpmem2 and
 * runs the steps; knows nothing about rpmem.
 *   memcpy:OFF:TEXT   the map's memcpy function (flags 0: persists)
 *   store:OFF:TEXT    plain stores, then the map's persist function
 *   flush:OFF:TEXT    plain stores, the flush function, then drain
 *   kill              SIGKILL itself
 */

/* parse -- "OFF:TEXT" -> offset, *text; -1 if bad */
static long parse(const char *s, const char **text)
{
	char *end;
	long off = strtol(s, &end, 0);
	if (end == s || *end != ':' || off < 0)
		return -1;
	*text = end + 1;
	return off;
}

int main(int argc, char *argv[])
{
	struct pmem2_config *cfg;
	struct pmem2_source *src;
	struct pmem2_map *map;
	if (argc < 2) {
		fprintf(stderr, "usage: pmem2_app FILE STEP...\n");
		return 2;
	}
	int fd = open(argv[1], O_RDWR);
	if (fd < 0 || pmem2_config_new(&cfg) ||
	    pmem2_config_set_required_store_granularity(
		    cfg, PMEM2_GRANULARITY_PAGE) ||
	    pmem2_source_from_fd(&src, fd) || pmem2_map_new(&map, cfg, src)) {
		fprintf(stderr, "pmem2_app: %s: %s\n", argv[1],
			fd < 0 ? "cannot open" : pmem2_errormsg());
		return 1;
	}
	char *base = pmem2_map_get_address(map);
	size_t size = pmem2_map_get_size(map);
	pmem2_memcpy_fn cpy = pmem2_get_memcpy_fn(map);
	pmem2_persist_fn persist = pmem2_get_persist_fn(map);
	pmem2_flush_fn flush = pmem2_get_flush_fn(map);
	pmem2_drain_fn drain = pmem2_get_drain_fn(map);
	for (int k = 2; k < argc; k++) {
		const char *s = argv[k], *text;
		long off = -1;
		if (!strcmp(s, "kill"))
			raise(SIGKILL);
		if (!strncmp(s, "memcpy:", 7) || !strncmp(s, "store:", 6) ||
		    !strncmp(s, "flush:", 6))
			off = parse(strchr(s, ':') + 1, &text);
		if (off < 0 || (size_t)off + strlen(text) > size) {
			fprintf(stderr, "pmem2_app: bad step '%s'\n", s);
			return 1;
		}
		size_t len = strlen(text);
		if (s[0] == 'm') {
			cpy(base + off, text, len, 0);
		} else {
			memcpy(base + off, text, len);
			if (s[0] == 's') {
				persist(base + off, len);
			} else {
				flush(base + off, len);
				drain();
			}
		}
	}
	pmem2_map_delete(&map);
	pmem2_source_delete(&src);
	pmem2_config_delete(&cfg);
	close(fd);
	return 0;
}
