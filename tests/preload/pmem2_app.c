/* SPDX-License-Identifier: BSD-3-Clause */
/* pmem2_app.c -- test tool: an unmodified libpmem2 application, by steps */
#include <fcntl.h>
#include <libpmem2.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "../tools/lat.h"

/*
 * pmem2_app FILE STEP...: maps FILE (page granularity) with libpmem2 and
 * runs the steps; knows nothing about rpmem.
 *   memcpy:OFF:TEXT   the map's memcpy function (flags 0: persists)
 *   store:OFF:TEXT    plain stores, then the map's persist function
 *   flush:OFF:TEXT    plain stores, the flush function, then drain
 *   also:PATH         maps a second file the same way
 *   both:OFF:TEXT     plain stores into both maps, each map's flush
 *                     function, then one drain (a commit of two files)
 *   commits:N         N commits of 8 bytes at changing offsets (both
 *                     maps' flushes and one drain once a second file is
 *                     mapped); prints "commits N median_us=M p99_us=P"
 *   kill              SIGKILL itself
 *   sigbus            its own SIGBUS handler, set with sigaction(2);
 *                     then as sigbus-state
 *   sigbus-signal     the same with signal(3)
 *   sigbus-sysv       the same with sysv_signal(3) (reset at delivery)
 *   sigbus-hold       sigset(SIGBUS, SIG_HOLD): blocks it
 *   sigbus-sigset     sigset(3) of the plain handler: unblocks it; prints
 *                     "sigset was hold" if it was held
 *   sigbus-state      prints "sigbus own", "sigbus default" or "sigbus
 *                     other", as sigaction reads it back
 *   raise-bus         sends itself SIGBUS (the handler prints "SIGBUS
 *                     sent" and returns)
 *   truncate:SIZE     cuts the file to SIZE bytes
 *   flushonly:OFF:N   the flush function on N bytes at OFF, then drain,
 *                     no store (the handler prints "SIGBUS fault" and
 *                     exits 3 if its own access faults)
 */

struct map {
	int fd;
	struct pmem2_config *cfg;
	struct pmem2_source *src;
	struct pmem2_map *map;
	char *base;
	size_t size;
};

/* on_bus -- the application's own SIGBUS handler */
static void on_bus(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	if (si->si_code == SI_USER || si->si_code == SI_TKILL) {
		static const char m[] = "SIGBUS sent\n";
		(void)!write(1, m, sizeof(m) - 1);
		return;
	}
	static const char m[] = "SIGBUS fault\n";
	(void)!write(1, m, sizeof(m) - 1);
	_exit(3);
}

/* on_bus_plain -- the same for signal(3) (a sent one only) */
static void on_bus_plain(int sig)
{
	(void)sig;
	static const char m[] = "SIGBUS sent\n";
	(void)!write(1, m, sizeof(m) - 1);
}

/* bus_state -- "sigbus own/default/other", as sigaction reads it back */
static void bus_state(void)
{
	struct sigaction now;
	sigaction(SIGBUS, NULL, &now);
	int own = (now.sa_flags & SA_SIGINFO) ? now.sa_sigaction == on_bus :
						now.sa_handler == on_bus_plain;
	printf("sigbus %s\n", own ? "own" :
	       now.sa_handler == SIG_DFL ? "default" : "other");
	fflush(stdout);
}

/* own_bus -- our SIGBUS handler set (with signal(3) if plain), read back */
static void own_bus(int plain)
{
	struct sigaction sa = { .sa_sigaction = on_bus,
				.sa_flags = SA_SIGINFO };
	sigemptyset(&sa.sa_mask);
	if (plain)
		signal(SIGBUS, on_bus_plain);
	else
		sigaction(SIGBUS, &sa, NULL);
	bus_state();
}

/* map_file -- path mapped at page granularity; 0, or 1 with a message */
static int map_file(const char *path, struct map *m)
{
	m->fd = open(path, O_RDWR);
	if (m->fd < 0 || pmem2_config_new(&m->cfg) ||
	    pmem2_config_set_required_store_granularity(
		    m->cfg, PMEM2_GRANULARITY_PAGE) ||
	    pmem2_source_from_fd(&m->src, m->fd) ||
	    pmem2_map_new(&m->map, m->cfg, m->src)) {
		fprintf(stderr, "pmem2_app: %s: %s\n", path,
			m->fd < 0 ? "cannot open" : pmem2_errormsg());
		return 1;
	}
	m->base = pmem2_map_get_address(m->map);
	m->size = pmem2_map_get_size(m->map);
	return 0;
}

/* commits -- n timed commits into m (and m2 if mapped); 0, or 1 */
static int commits(struct map *m, struct map *m2, long n)
{
	uint64_t *ns = n > 0 ? calloc((size_t)n, sizeof(*ns)) : NULL;
	if (!ns)
		return 1;
	pmem2_flush_fn flush = pmem2_get_flush_fn(m->map);
	pmem2_flush_fn flush2 = m2->fd >= 0 ? pmem2_get_flush_fn(m2->map) :
					      NULL;
	pmem2_drain_fn drain = pmem2_get_drain_fn(m->map);
	size_t slots = m->size / 64;
	if (m2->fd >= 0 && m2->size / 64 < slots)
		slots = m2->size / 64;
	for (long i = 0; i < n; i++) {
		size_t off = (size_t)i % slots * 64;
		uint64_t t0 = now_ns();
		memcpy(m->base + off, &t0, sizeof(t0));
		flush(m->base + off, sizeof(t0));
		if (flush2) {
			memcpy(m2->base + off, &t0, sizeof(t0));
			flush2(m2->base + off, sizeof(t0));
		}
		drain();
		ns[i] = now_ns() - t0;
	}
	qsort(ns, (size_t)n, sizeof(*ns), cmp_u64);
	printf("commits %ld median_us=%.1f p99_us=%.1f\n", n,
	       (double)ns[n / 2] / 1000, (double)ns[n * 99 / 100] / 1000);
	free(ns);
	return 0;
}

/* unmap -- undo map_file */
static void unmap(struct map *m)
{
	pmem2_map_delete(&m->map);
	pmem2_source_delete(&m->src);
	pmem2_config_delete(&m->cfg);
	close(m->fd);
}

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
	struct map m, m2 = { .fd = -1 };
	if (argc < 2) {
		fprintf(stderr, "usage: pmem2_app FILE STEP...\n");
		return 2;
	}
	if (map_file(argv[1], &m))
		return 1;
	char *base = m.base;
	size_t size = m.size;
	pmem2_memcpy_fn cpy = pmem2_get_memcpy_fn(m.map);
	pmem2_persist_fn persist = pmem2_get_persist_fn(m.map);
	pmem2_flush_fn flush = pmem2_get_flush_fn(m.map);
	pmem2_drain_fn drain = pmem2_get_drain_fn(m.map);
	for (int k = 2; k < argc; k++) {
		const char *s = argv[k], *text;
		long off = -1;
		if (!strcmp(s, "kill"))
			raise(SIGKILL);
		if (!strcmp(s, "sigbus") || !strcmp(s, "sigbus-signal")) {
			own_bus(s[6] == '-');
			continue;
		}
		if (!strcmp(s, "sigbus-sysv")) {
			sysv_signal(SIGBUS, on_bus_plain);
			bus_state();
			continue;
		}
/* sigset(3) is obsolescent, and still what some applications call */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
		if (!strcmp(s, "sigbus-hold")) {
			sigset(SIGBUS, SIG_HOLD);
			continue;
		}
		if (!strcmp(s, "sigbus-sigset")) {
			if (sigset(SIGBUS, on_bus_plain) == SIG_HOLD)
				printf("sigset was hold\n");
			fflush(stdout);
			continue;
		}
#pragma GCC diagnostic pop
		if (!strcmp(s, "sigbus-state")) {
			bus_state();
			continue;
		}
		if (!strcmp(s, "raise-bus")) {
			raise(SIGBUS);
			fflush(stdout);
			continue;
		}
		if (!strncmp(s, "truncate:", 9)) {
			if (ftruncate(m.fd, strtol(s + 9, NULL, 0)))
				return 1;
			continue;
		}
		if (!strncmp(s, "flushonly:", 10)) {
			char *end;
			long o = strtol(s + 10, &end, 0);
			long n = *end == ':' ? strtol(end + 1, NULL, 0) : 0;
			if (o < 0 || n <= 0 || (size_t)(o + n) > size) {
				fprintf(stderr, "pmem2_app: bad step '%s'\n", s);
				return 1;
			}
			flush(base + o, (size_t)n);
			drain();
			continue;
		}
		if (!strncmp(s, "also:", 5) && m2.fd < 0) {
			if (map_file(s + 5, &m2))
				return 1;
			continue;
		}
		if (!strncmp(s, "commits:", 8)) {
			if (commits(&m, &m2, strtol(s + 8, NULL, 10)))
				return 1;
			continue;
		}
		if (!strncmp(s, "memcpy:", 7) || !strncmp(s, "store:", 6) ||
		    !strncmp(s, "flush:", 6) ||
		    (!strncmp(s, "both:", 5) && m2.fd >= 0))
			off = parse(strchr(s, ':') + 1, &text);
		if (off < 0 || (size_t)off + strlen(text) > size ||
		    (s[0] == 'b' && (size_t)off + strlen(text) > m2.size)) {
			fprintf(stderr, "pmem2_app: bad step '%s'\n", s);
			return 1;
		}
		size_t len = strlen(text);
		if (s[0] == 'b') {
			memcpy(base + off, text, len);
			memcpy(m2.base + off, text, len);
			flush(base + off, len);
			pmem2_get_flush_fn(m2.map)(m2.base + off, len);
			drain();
		} else if (s[0] == 'm') {
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
	if (m2.fd >= 0)
		unmap(&m2);
	unmap(&m);
	return 0;
}
