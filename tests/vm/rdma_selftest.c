/* SPDX-License-Identifier: BSD-3-Clause */
/* rdma_selftest.c -- exercise lib/rdma/ (both ends) without the daemon */

/*
 * rdma_selftest server ADDR PORT SIZE [--apm] [--file PATH] [--sessions N]
 *	Maps SIZE bytes (anonymous DRAM, or PATH with libpmem2: a devdax
 *	device or a file, created/extended to SIZE), listens on ADDR:PORT,
 *	exposes the mapping N times (default 1; each exposure takes one
 *	client) and prints one "blob=HEX" line per exposure plus what the
 *	first blob offers. Serves until SIGTERM/SIGINT; SIGUSR1 prints "hash=XXH3" of
 *	the mapping.
 *
 *	--tls-psk FILE --tls-port TP: a TLS (PSK) control connection per
 *	exposure instead: accepts one TLS client on ADDR:TP at a time,
 *	exposes the mapping bound to that TLS session (blob v2), prints the
 *	blob and sends it to the client inside the session (u16 length +
 *	blob). --readonly exposes the mapping for remote reads only.
 *
 * rdma_selftest client HOST BLOBHEX [--iters N] [--bad-token] [--quick]
 *                     [--read-only] [--kill-test GOFILE]
 *                     [--tls-psk FILE --tls-port TP [--raw-nonce]]
 *                     [--wait SECS] [--write-refused]
 *	Connects with the blob, writes patterns (staged and zero copy),
 *	flushes, reads back and compares, checks that persists (inline in
 *	the GPSPM flush request when small) land after overlapping writes,
 *	checks range validation, measures
 *	write+flush latency (4 KiB, 256 B; median of N, default 1000) and
 *	1 MiB write bandwidth, and prints key=value lines; the last is
 *	"hash=XXH3" of what the target must hold. --bad-token corrupts the
 *	token; --quick skips the measurements; --read-only only measures
 *	read bandwidth (RPMEM_RDMA_READ_CHUNK / _DEPTH tune it);
 *	--kill-test writes and flushes once, waits for GOFILE to appear
 *	(the target kills its server meanwhile), then checks that the next
 *	write + flush fails in bounded time and that the error sticks.
 *	--tls-psk/--tls-port: get a blob from the server's TLS port and
 *	derive the token from that session; BLOBHEX "-" uses that blob,
 *	another BLOBHEX (an earlier session's blob) is presented with this
 *	session's TLS (a replay); --raw-nonce presents the blob's nonce as a
 *	plain token, without TLS (what anyone who saw the blob could do).
 *	--wait SECS sleeps before connecting the data plane (token expiry).
 *	--write-refused: one write + flush must fail (a read-only exposure);
 *	prints "write_refused=ok" and exits 0 if it does.
 *
 * rdma_selftest hash PATH SIZE
 *	Prints "hash=XXH3" of the first SIZE bytes of PATH (read(2)).
 *
 * Exit status: 0 ok, 1 verification failed, 2 usage, 3 connect or
 * expose failed, 4 I/O error.
 *
 * The blob is opaque to everything but lib/rdma/; this test knows the
 * v1/v2 layout (docs/RDMA.md) only to print it, to corrupt the token and
 * to turn a v2 blob into a v1 one (--raw-nonce).
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netdb.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libpmem2.h>

#include "hash.h"
#include "log.h"
#include "net.h"
#include "rdma.h"
#include "tls.h"
#include "util.h"
#include "wire.h"

#define KIB 1024ull
#define MIB (1024ull * 1024)

static void usage(void)
{
	fprintf(stderr,
		"usage: rdma_selftest server ADDR PORT SIZE [--apm] [--file PATH] [--sessions N]\n"
		"                     [--tls-psk FILE --tls-port TP] [--readonly]\n"
		"       rdma_selftest client HOST BLOBHEX [--iters N] [--bad-token] [--quick] [--read-only]\n"
		"                     [--kill-test GOFILE] [--tls-psk FILE --tls-port TP [--raw-nonce]]\n"
		"                     [--wait SECS] [--write-refused]\n"
		"       rdma_selftest hash PATH SIZE\n");
	exit(2);
}

/* blob_info -- the v1 fields this test cares about */
struct blob_info {
	unsigned version, mode, flags;
	char port[16];
	size_t token_off;
	uint64_t size;
};

static int blob_parse(const uint8_t *b, size_t len, struct blob_info *bi)
{
	uint8_t tok[RPMEM_TOKEN_LEN];
	struct rbuf r;

	uint16_t ver;

	rbuf_init(&r, b, len);
	ver = rbuf_u16(&r);
	if (ver != 1 && ver != 2)
		return -1;
	bi->version = ver;
	bi->mode = rbuf_u8(&r);
	bi->flags = rbuf_u8(&r);
	rbuf_str(&r, bi->port, sizeof(bi->port));
	bi->token_off = r.off;
	rbuf_bytes(&r, tok, sizeof(tok));
	bi->size = rbuf_u64(&r);
	return r.err ? -1 : 0;
}

/* --- TLS control connection (--tls-psk) --------------------------------- */

struct psk {
	char identity[RPMEM_IDENTITY_MAX + 1];
	uint8_t key[RPMEM_PSK_MAX];
	size_t len;
};

/* psk_load -- the first identity and key of a PSK file */
static int psk_load(const char *path, struct psk *p)
{
	char err[256];

	p->identity[0] = '\0';
	if (rpmem_psk_read(path, p->identity, p->key, &p->len, err,
			   sizeof(err))) {
		fprintf(stderr, "%s: %s\n", path, err);
		return -1;
	}
	return 0;
}

/* psk_lookup -- the server's PSK callback: the file's one identity */
static int psk_lookup(void *arg, const char *identity, uint8_t *key,
		      size_t *len)
{
	const struct psk *p = arg;

	if (strcmp(identity, p->identity))
		return -ENOENT;
	memcpy(key, p->key, p->len);
	*len = p->len;
	return 0;
}

/* tls_ctx -- a PSK TLS context for a server or a client */
static struct rpmem_tls_ctx *tls_ctx(struct psk *p, int server)
{
	struct rpmem_tls_cfg cfg = { .server = server };
	struct rpmem_tls_ctx *ctx = NULL;
	char err[256];

	if (server) {
		cfg.psk_lookup = psk_lookup;
		cfg.psk_arg = p;
	} else {
		cfg.psk_identity = p->identity;
		cfg.psk = p->key;
		cfg.psk_len = p->len;
	}
	if (rpmem_tls_ctx_new(&cfg, &ctx, err, sizeof(err))) {
		fprintf(stderr, "TLS context: %s\n", err);
		return NULL;
	}
	return ctx;
}

/* tcp_listen -- a listening TCP socket on addr:port, or -1 */
static int tcp_listen(const char *addr, const char *port)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_PASSIVE };
	struct addrinfo *ai = NULL;
	int fd = -1, one = 1;

	if (getaddrinfo(addr, port, &hints, &ai) || !ai) {
		fprintf(stderr, "getaddrinfo %s:%s failed\n", addr, port);
		return -1;
	}
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd >= 0)
		(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one,
				 sizeof(one));
	if (fd < 0 || bind(fd, ai->ai_addr, ai->ai_addrlen) ||
	    listen(fd, 4)) {
		fprintf(stderr, "listen %s:%s: %s\n", addr, port,
			strerror(errno));
		if (fd >= 0)
			close(fd);
		fd = -1;
	}
	freeaddrinfo(ai);
	return fd;
}

/* print_blob -- "blob=HEX" */
static void print_blob(const uint8_t *blob, size_t len)
{
	printf("blob=");
	for (size_t i = 0; i < len; i++)
		printf("%02x", blob[i]);
	printf("\n");
	fflush(stdout);
}

/* --- server --------------------------------------------------------------- */

struct srv_map {
	struct pmem2_map *map;
	pmem2_persist_fn persist;
	uint8_t *addr;
};

static int srv_persist(void *arg, uint64_t off, uint64_t len)
{
	struct srv_map *m = arg;

	if (m->persist)
		m->persist(m->addr + off, len);
	return 0;
}

/* map_file -- map PATH with libpmem2; fills m, *is_pmem */
static int map_file(const char *path, size_t size, struct srv_map *m,
		    int *is_pmem)
{
	struct pmem2_config *cfg = NULL;
	struct pmem2_source *src = NULL;
	struct stat st;
	int fd, ret = -1;

	fd = open(path, O_RDWR | O_CREAT, 0644);
	if (fd < 0 || fstat(fd, &st)) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		goto out;
	}
	if (S_ISREG(st.st_mode) && (uint64_t)st.st_size < size &&
	    ftruncate(fd, (off_t)size)) {
		fprintf(stderr, "%s: ftruncate: %s\n", path, strerror(errno));
		goto out;
	}
	if (pmem2_config_new(&cfg) || pmem2_source_from_fd(&src, fd) ||
	    pmem2_config_set_required_store_granularity(
		    cfg, PMEM2_GRANULARITY_PAGE) ||
	    pmem2_config_set_length(cfg, size) ||
	    pmem2_map_new(&m->map, cfg, src)) {
		fprintf(stderr, "%s: libpmem2: %s\n", path,
			pmem2_errormsg());
		goto out;
	}
	m->addr = pmem2_map_get_address(m->map);
	m->persist = pmem2_get_persist_fn(m->map);
	*is_pmem = pmem2_map_get_store_granularity(m->map) !=
		   PMEM2_GRANULARITY_PAGE;
	ret = 0;
out:
	if (src)
		pmem2_source_delete(&src);
	if (cfg)
		pmem2_config_delete(&cfg);
	if (fd >= 0)
		close(fd);
	return ret;
}

/* the server's state shared with its TLS accept thread */
struct srv_tls {
	struct rpmem_rdma_srv *srv;
	struct rpmem_rdma_expo_cfg cfg;
	struct rpmem_rdma_expo **expo;
	struct rpmem_conn conn[16];
	struct rpmem_tls_ctx *ctx;
	unsigned sessions, done;
	int lfd;
};

/*
 * tls_serve -- per exposure: accept a TLS client, expose the mapping with
 * the token bound to its session, send it the blob inside the session
 */
static void *tls_serve(void *arg)
{
	struct srv_tls *t = arg;
	uint8_t blob[RPMEM_XPORT_BLOB_MAX], len[2];
	char err[256];

	for (unsigned k = 0; k < t->sessions; k++) {
		size_t blob_len = sizeof(blob);
		struct rpmem_rdma_expo_cfg cfg = t->cfg;
		int fd = accept4(t->lfd, NULL, NULL, SOCK_CLOEXEC), ret;

		if (fd < 0)
			break;
		rpmem_conn_init(&t->conn[k], fd);
		(void)rpmem_conn_set_rcvtimeo(&t->conn[k], 30000);
		ret = rpmem_tls_start(t->ctx, &t->conn[k], NULL, err,
				      sizeof(err));
		if (ret) {
			fprintf(stderr, "TLS session %u: %s\n", k, err);
			continue;
		}
		cfg.tls = t->conn[k].tls;
		ret = rpmem_rdma_expose(t->srv, &cfg, blob, &blob_len,
					&t->expo[k]);
		if (ret) {
			fprintf(stderr, "rpmem_rdma_expose: %s\n",
				strerror(-ret));
			continue;
		}
		printf("tls_session=%u identity=%s\n", k,
		       rpmem_tls_peer(t->conn[k].tls));
		print_blob(blob, blob_len);
		le16_put(len, (uint16_t)blob_len);
		if (rpmem_net_write_full(&t->conn[k], len, 2) ||
		    rpmem_net_write_full(&t->conn[k], blob, blob_len))
			fprintf(stderr,
				"TLS session %u: cannot send the blob\n", k);
		t->done = k + 1;
	}
	return NULL;
}

static int server_main(int argc, char **argv)
{
	struct rpmem_rdma_expo_cfg cfg = { 0 };
	struct rpmem_rdma_srv *srv = NULL;
	struct rpmem_rdma_expo *expo[16] = { 0 };
	struct srv_tls t = { .lfd = -1 };
	const char *psk_file = NULL, *tls_port = NULL;
	struct psk psk = { 0 };
	pthread_t tls_thread;
	int readonly = 0;
	struct srv_map m = { 0 };
	uint8_t blob[RPMEM_XPORT_BLOB_MAX];
	size_t blob_len = sizeof(blob);
	struct blob_info bi;
	const char *file = NULL;
	uint64_t size;
	sigset_t set;
	int apm = 0, is_pmem = 0, sig, ret;
	unsigned sessions = 1;

	if (argc < 5 || rpmem_parse_size(argv[4], &size) || size < 4096)
		usage();
	for (int i = 5; i < argc; i++) {
		if (!strcmp(argv[i], "--apm"))
			apm = 1;
		else if (!strcmp(argv[i], "--sessions") && i + 1 < argc)
			sessions = (unsigned)atoi(argv[++i]);
		else if (!strcmp(argv[i], "--file") && i + 1 < argc)
			file = argv[++i];
		else if (!strcmp(argv[i], "--tls-psk") && i + 1 < argc)
			psk_file = argv[++i];
		else if (!strcmp(argv[i], "--tls-port") && i + 1 < argc)
			tls_port = argv[++i];
		else if (!strcmp(argv[i], "--readonly"))
			readonly = 1;
		else
			usage();
	}
	if (sessions < 1 || sessions > ARRAY_SIZE(expo) ||
	    !psk_file != !tls_port)
		usage();
	/* the library's threads inherit the mask; main takes the signals */
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	pthread_sigmask(SIG_BLOCK, &set, NULL);

	if (file) {
		if (map_file(file, size, &m, &is_pmem))
			return 3;
	} else {
		m.addr = aligned_alloc(4096, size);
		if (!m.addr)
			return 3;
		memset(m.addr, 0, size);
	}
	printf("mapping=%s is_pmem=%d size=%" PRIu64 "\n",
	       file ? file : "dram", is_pmem, size);

	ret = rpmem_rdma_srv_new(argv[2], argv[3], &srv);
	if (ret) {
		fprintf(stderr, "rpmem_rdma_srv_new: %s\n", strerror(-ret));
		return 3;
	}
	cfg.addr = m.addr;
	cfg.len = size;
	cfg.apm = apm;
	cfg.is_pmem = is_pmem;
	cfg.persist = srv_persist;
	cfg.arg = &m;
	cfg.readonly = readonly;
	if (psk_file) {
		/* one exposure per TLS client, bound to its session */
		t.srv = srv;
		t.cfg = cfg;
		t.expo = expo;
		t.sessions = sessions;
		if (psk_load(psk_file, &psk) || !(t.ctx = tls_ctx(&psk, 1)) ||
		    (t.lfd = tcp_listen(argv[2], tls_port)) < 0 ||
		    pthread_create(&tls_thread, NULL, tls_serve, &t)) {
			rpmem_rdma_srv_delete(&srv);
			return 3;
		}
		printf("tls=listening port=%s\n", tls_port);
		fflush(stdout);
	}
	for (unsigned k = 0; !psk_file && k < sessions; k++) {
		blob_len = sizeof(blob);
		ret = rpmem_rdma_expose(srv, &cfg, blob, &blob_len, &expo[k]);
		if (ret) {
			fprintf(stderr, "rpmem_rdma_expose: %s\n",
				strerror(-ret));
			while (k--)
				rpmem_rdma_unexpose(&expo[k]);
			rpmem_rdma_srv_delete(&srv);
			return 3;
		}
		if (!k && !blob_parse(blob, blob_len, &bi))
			printf("offer=%s staging=%u port=%s blob_len=%zu\n",
			       bi.mode ? "apm" : "gpspm", bi.flags & 1,
			       bi.port, blob_len);
		print_blob(blob, blob_len);
	}
	fflush(stdout);

	for (;;) {
		if (sigwait(&set, &sig))
			break;
		if (sig != SIGUSR1)
			break;
		printf("hash=%016" PRIx64 "\n",
		       rpmem_hash_block(m.addr, size));
		fflush(stdout);
	}
	if (psk_file) {
		(void)shutdown(t.lfd, SHUT_RDWR); /* ends a waiting accept */
		(void)pthread_join(tls_thread, NULL);
		close(t.lfd);
	}
	for (unsigned k = 0; k < sessions; k++) {
		rpmem_rdma_unexpose(&expo[k]);
		if (psk_file && t.conn[k].fd > 0)
			rpmem_conn_close(&t.conn[k]);
	}
	rpmem_tls_ctx_free(&t.ctx);
	rpmem_rdma_srv_delete(&srv);
	if (m.map)
		pmem2_map_delete(&m.map);
	else
		free(m.addr);
	printf("server=exit\n");
	return 0;
}

/* --- client --------------------------------------------------------------- */

static void fill(uint8_t *p, size_t len, uint64_t seed)
{
	uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;

	for (size_t i = 0; i + 8 <= len; i += 8) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		memcpy(p + i, &x, 8);
	}
	for (size_t i = len & ~(size_t)7; i < len; i++)
		p[i] = (uint8_t)(seed + i);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* persist -- write + flush through the transport's persist, if it has one */
static int persist(struct rpmem_xport *x, uint64_t off, const void *src,
		   size_t len)
{
	int ret;

	if (x->ops->persist)
		return x->ops->persist(x, off, src, len);
	ret = x->ops->write(x, off, src, len);
	return ret ? ret : x->ops->flush(x, off, len);
}

/*
 * persist_check -- small and large persists (inline in the GPSPM flush
 * request up to 4 KiB, write + flush above), each after a plain write
 * that overlaps it, so the target must apply them in order; read back
 * and compared. 0 if the target holds l, 1 if not, or -errno.
 */
static int persist_check(struct rpmem_xport *x, uint8_t *l, uint8_t *s,
			 uint8_t *r, uint64_t size)
{
	static const size_t sizes[] = { 1, 200, 256, 4095, 4096, 4097, 65536 };
	uint64_t off = 12345;
	int ret;

	for (unsigned i = 0; i < ARRAY_SIZE(sizes) * 3; i++) {
		size_t n = sizes[i % ARRAY_SIZE(sizes)];

		if (off + 2 * n + 8192 > size)
			off = 777;
		/* a plain write (from the unregistered buffer) over the
		 * range and beyond, then the persist with other bytes from
		 * the attached mapping: the persist must win */
		fill(s + off, n + 8192, 100 + i);
		memcpy(l + off + n, s + off + n, 8192);
		fill(l + off, n, 200 + i);
		ret = x->ops->write(x, off, s + off, n + 8192);
		if (ret)
			return ret;
		ret = persist(x, off, l + off, n);
		if (ret)
			return ret;
		off += 2 * n + 8192 + 333;
	}
	ret = x->ops->flush(x, 0, size);
	if (!ret)
		ret = x->ops->read(x, 0, r, size);
	if (ret)
		return ret;
	return memcmp(l, r, size) ? 1 : 0;
}

/* lat -- median write+flush latency in microseconds */
static int lat(struct rpmem_xport *x, uint8_t *l, uint64_t size, size_t sz,
	       unsigned iters, double *med_us)
{
	uint64_t *t = calloc(iters, sizeof(*t));
	int ret = 0;

	if (!t)
		return -ENOMEM;
	for (unsigned i = 0; i < iters; i++) {
		uint64_t off = ((uint64_t)i * 4096 * 7) % (size - sz);
		uint64_t t0;

		off &= ~(uint64_t)255;
		l[off] ^= (uint8_t)(i + 1);
		t0 = rpmem_now_ns();
		ret = persist(x, off, l + off, sz);
		if (ret)
			break;
		t[i] = rpmem_now_ns() - t0;
	}
	if (!ret) {
		qsort(t, iters, sizeof(*t), cmp_u64);
		*med_us = (double)t[iters / 2] / 1000.0;
	}
	free(t);
	return ret;
}

/* bw -- MiB/s of 1 MiB writes over the pool plus one flush per pass */
static int bw(struct rpmem_xport *x, const uint8_t *src, uint64_t size,
	      int from_pool, double *mibps)
{
	unsigned passes = size >= 64 * MIB ? 1 : (unsigned)(64 * MIB / size);
	uint64_t t0 = rpmem_now_ns(), total = 0;
	int ret;

	for (unsigned p = 0; p < passes; p++) {
		for (uint64_t off = 0; off < size; off += MIB) {
			uint64_t n = size - off < MIB ? size - off : MIB;

			ret = x->ops->write(x, off,
					    from_pool ? src + off : src, n);
			if (ret)
				return ret;
			total += n;
		}
		ret = x->ops->flush(x, 0, size);
		if (ret)
			return ret;
	}
	*mibps = (double)total / MIB /
		 ((double)(rpmem_now_ns() - t0) / 1e9);
	return 0;
}

/*
 * kill_test -- one write + flush, then wait for GOFILE (the target kills
 * the server meanwhile): the next write + flush must fail, in bounded
 * time, and the error must stick
 */
static int kill_test(struct rpmem_xport *x, uint8_t *buf, const char *go)
{
	uint64_t t0;
	int ret, again;

	fill(buf, MIB, 3);
	ret = x->ops->write(x, 0, buf, MIB);
	if (!ret)
		ret = x->ops->flush(x, 0, MIB);
	printf("phase1=%s\n", ret ? strerror(-ret) : "ok");
	if (ret)
		goto out;
	for (int i = 0; access(go, F_OK); i++) {
		if (i > 3000) {
			printf("error=no %s\n", go);
			ret = -ETIMEDOUT;
			goto out;
		}
		usleep(100000);
	}
	t0 = rpmem_now_ns();
	ret = x->ops->write(x, 0, buf, 4096);
	if (!ret)
		ret = x->ops->flush(x, 0, 4096);
	printf("after_kill=%s ms=%.0f\n", ret ? strerror(-ret) : "no error",
	       (double)(rpmem_now_ns() - t0) / 1e6);
	again = x->ops->write(x, 0, buf, 8);
	if (!again)
		again = x->ops->flush(x, 0, 8);
	printf("sticky=%s\n", again && again == ret ? "ok" : "FAIL");
	x->ops->close(x);
	printf("closed=ok\n");
	return ret && again == ret ? 0 : 1;
out:
	x->ops->close(x);
	return 4;
}

static int client_main(int argc, char **argv)
{
	static const size_t sizes[] = { 4096, 65536, 512, MIB + 123, 300000,
					8, 2 * MIB, 4095 };
	uint8_t blob[RPMEM_XPORT_BLOB_MAX];
	struct rpmem_xport *x = NULL;
	struct blob_info bi;
	char why[512];
	const char *hex;
	unsigned iters = 1000;
	int bad_token = 0, quick = 0, read_only = 0, fails = 0, ret;
	int raw_nonce = 0, write_refused = 0;
	unsigned wait_s = 0;
	const char *kill_go = NULL, *psk_file = NULL, *tls_port = NULL;
	struct rpmem_conn conn = { .fd = -1 };
	struct rpmem_tls_ctx *ctx = NULL;
	struct rpmem_tls *tls = NULL;
	struct psk psk = { 0 };
	size_t blob_len, hl;
	uint8_t *s, *l, *r, *tmp;
	uint64_t size, t0;
	double v;

	if (argc < 4)
		usage();
	hex = argv[3];
	for (int i = 4; i < argc; i++) {
		if (!strcmp(argv[i], "--iters") && i + 1 < argc)
			iters = (unsigned)strtoul(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--bad-token"))
			bad_token = 1;
		else if (!strcmp(argv[i], "--quick"))
			quick = 1;
		else if (!strcmp(argv[i], "--read-only"))
			read_only = 1;
		else if (!strcmp(argv[i], "--kill-test") && i + 1 < argc)
			kill_go = argv[++i];
		else if (!strcmp(argv[i], "--tls-psk") && i + 1 < argc)
			psk_file = argv[++i];
		else if (!strcmp(argv[i], "--tls-port") && i + 1 < argc)
			tls_port = argv[++i];
		else if (!strcmp(argv[i], "--raw-nonce"))
			raw_nonce = 1;
		else if (!strcmp(argv[i], "--wait") && i + 1 < argc)
			wait_s = (unsigned)strtoul(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--write-refused"))
			write_refused = 1;
		else
			usage();
	}
	if (!iters || !psk_file != !tls_port || (raw_nonce && !psk_file))
		usage();
	if (psk_file) {
		/* a TLS session; its blob is the one to use unless given */
		char err[256] = "";
		uint8_t len[2];
		int fd = -1;

		if (psk_load(psk_file, &psk) || !(ctx = tls_ctx(&psk, 0)))
			return 3;
		ret = rpmem_net_connect(argv[2], tls_port, 10000, &fd);
		if (ret) {
			fprintf(stderr, "connect %s:%s: %s\n", argv[2],
				tls_port, strerror(-ret));
			return 3;
		}
		rpmem_conn_init(&conn, fd);
		(void)rpmem_conn_set_rcvtimeo(&conn, 30000);
		ret = rpmem_tls_start(ctx, &conn, NULL, err, sizeof(err));
		if (!ret)
			ret = rpmem_net_read_full(&conn, len, 2);
		if (!ret && le16_get(len) > sizeof(blob))
			ret = -EPROTO;
		if (!ret)
			ret = rpmem_net_read_full(&conn, blob, le16_get(len));
		if (ret) {
			fprintf(stderr, "TLS session: %s\n",
				err[0] ? err : strerror(-ret));
			return 3;
		}
		tls = conn.tls;
		printf("tls_blob_len=%u\n", le16_get(len));
		if (!strcmp(hex, "-")) {
			blob_len = le16_get(len);
			goto parsed;
		}
	}
	hl = strlen(hex);
	if (hl % 2 || hl / 2 > sizeof(blob))
		usage();
	blob_len = hl / 2;
	for (size_t i = 0; i < blob_len; i++) {
		int hi = hexval(hex[2 * i]), lo = hexval(hex[2 * i + 1]);

		if (hi < 0 || lo < 0)
			usage();
		blob[i] = (uint8_t)(hi << 4 | lo);
	}
parsed:
	if (blob_parse(blob, blob_len, &bi)) {
		/* still hand it over: the library must refuse it cleanly */
		bi.size = 4096;
		bi.token_off = 0;
	}
	if (bad_token && bi.token_off)
		for (size_t i = 0; i < RPMEM_TOKEN_LEN; i++)
			blob[bi.token_off + i] ^= 0x5a;
	if (raw_nonce) {
		/* v2 -> v1: the nonce goes out as the token, no TLS */
		le16_put(blob, 1);
		tls = NULL;
	}
	size = bi.size;
	printf("offer=%s staging=%u size=%" PRIu64 " version=%u\n",
	       bi.mode ? "apm" : "gpspm", bi.flags & 1, size, bi.version);
	if (wait_s)
		sleep(wait_s);

	t0 = rpmem_now_ns();
	ret = rpmem_rdma_client_new(argv[2], tls, blob, blob_len, size, NULL,
				    &x, why, sizeof(why));
	printf("connect_ms=%.1f\n", (double)(rpmem_now_ns() - t0) / 1e6);
	if (ret) {
		printf("error=%s\n", strerror(-ret));
		printf("why=%s\n", why);
		return 3;
	}
	printf("xport=%s\n", x->ops->name);

	s = aligned_alloc(4096, size);
	l = aligned_alloc(4096, size);
	r = aligned_alloc(4096, size);
	tmp = aligned_alloc(4096, 2 * MIB);
	if (!s || !l || !r || !tmp)
		return 4;

	if (kill_go)
		return kill_test(x, s, kill_go);
	if (write_refused) {
		/*
		 * a read-only exposure: the write must not get through; 64
		 * KiB is an RDMA write (the RNIC refuses it), not a write
		 * carried in a GPSPM batch request (rpmemd refuses that)
		 */
		fill(s, 65536, 7);
		ret = x->ops->write(x, 0, s, 65536);
		if (!ret)
			ret = x->ops->flush(x, 0, 65536);
		printf("write_error=%s\n", ret ? strerror(-ret) : "none");
		printf("write_refused=%s\n", ret ? "ok" : "FAIL");
		x->ops->close(x);
		rpmem_conn_close(&conn);
		rpmem_tls_ctx_free(&ctx);
		return ret ? 0 : 1;
	}
	if (read_only) {
		/* read bandwidth only: the whole pool, bounced and zero copy */
		t0 = rpmem_now_ns();
		ret = x->ops->read(x, 0, r, size);
		if (ret)
			goto io_err;
		printf("rd_bw_bounce_MiBps=%.2f\n", (double)size / MIB /
		       ((double)(rpmem_now_ns() - t0) / 1e9));
		ret = x->ops->attach(x, l, size);
		t0 = rpmem_now_ns();
		if (!ret)
			ret = x->ops->read(x, 0, l, size);
		if (ret)
			goto io_err;
		printf("rd_bw_MiBps=%.2f\n", (double)size / MIB /
		       ((double)(rpmem_now_ns() - t0) / 1e9));
		printf("read_same=%s\n", memcmp(l, r, size) ? "FAIL" : "ok");
		x->ops->close(x);
		return 0;
	}

	/* 1: staged writes of mixed sizes, one flush, bounced reads */
	fill(s, size, 1);
	t0 = rpmem_now_ns();
	for (uint64_t off = 0, k = 0; off < size; k++) {
		uint64_t n = sizes[k % ARRAY_SIZE(sizes)];

		if (n > size - off)
			n = size - off;
		ret = x->ops->write(x, off, s + off, n);
		if (ret)
			goto io_err;
		off += n;
	}
	ret = x->ops->flush(x, 0, size);
	if (ret)
		goto io_err;
	printf("staged_write_ms=%.0f\n", (double)(rpmem_now_ns() - t0) / 1e6);
	t0 = rpmem_now_ns();
	memset(r, 0, size);
	for (uint64_t off = 0; off < size; off += 3 * MIB) {
		uint64_t n = size - off < 3 * MIB ? size - off : 3 * MIB;

		ret = x->ops->read(x, off, r + off, n);
		if (ret)
			goto io_err;
	}
	printf("staged_write_read=%s (read %.0f ms)\n",
	       memcmp(s, r, size) ? (fails++, "FAIL") : "ok",
	       (double)(rpmem_now_ns() - t0) / 1e6);

	/* 2: ranges outside the pool are refused, the transport survives */
	ret = x->ops->write(x, size - 10, s, 20);
	printf("range_check=%s\n",
	       ret == -EINVAL && !x->ops->flush(x, 0, 8) ? "ok" :
							   (fails++, "FAIL"));

	/* 3: zero copy from the attached mapping, then into it */
	fill(l, size, 2);
	ret = x->ops->attach(x, l, size);
	if (ret)
		goto io_err;
	for (uint64_t off = 0; off < size; off += 256 * KIB) {
		uint64_t n = size - off < 256 * KIB ? size - off : 256 * KIB;

		ret = x->ops->write(x, off, l + off, n);
		if (ret)
			goto io_err;
	}
	/* re-attaching waits for the (unsignalled) writes still in flight */
	ret = x->ops->attach(x, l, size);
	if (!ret)
		ret = x->ops->flush(x, 0, size);
	if (!ret)
		ret = x->ops->read(x, 0, r, size);
	if (ret)
		goto io_err;
	printf("zero_copy_write=%s\n",
	       memcmp(l, r, size) ? (fails++, "FAIL") : "ok");
	if (size >= 3 * MIB) {
		memcpy(tmp, l + MIB, 2 * MIB);
		memset(l + MIB, 0, 2 * MIB);
		ret = x->ops->read(x, MIB, l + MIB, 2 * MIB);
		if (ret)
			goto io_err;
		printf("zero_copy_read=%s\n",
		       memcmp(tmp, l + MIB, 2 * MIB) ? (fails++, "FAIL") :
						       "ok");
	}

	/* 3b: persists, inline or not, ordered after overlapping writes */
	ret = persist_check(x, l, s, r, size);
	if (ret < 0)
		goto io_err;
	printf("persist_write=%s\n", ret ? (fails++, "FAIL") : "ok");

	/* 4: latency and bandwidth */
	if (!quick) {
		ret = lat(x, l, size, 4096, iters, &v);
		if (ret)
			goto io_err;
		printf("lat_4096_us=%.1f\n", v);
		ret = lat(x, l, size, 256, iters, &v);
		if (ret)
			goto io_err;
		printf("lat_256_us=%.1f\n", v);
		printf("lat_iters=%u\n", iters);
		ret = bw(x, l, size, 1, &v);
		if (ret)
			goto io_err;
		printf("bw_1m_MiBps=%.2f\n", v);
		/* staged: the same bytes from an unregistered copy */
		memcpy(s, l, size);
		ret = bw(x, s, size, 1, &v);
		if (ret)
			goto io_err;
		printf("bw_1m_staged_MiBps=%.2f\n", v);
		t0 = rpmem_now_ns();
		ret = x->ops->read(x, 0, l, size);
		if (ret)
			goto io_err;
		printf("rd_bw_MiBps=%.2f\n", (double)size / MIB /
		       ((double)(rpmem_now_ns() - t0) / 1e9));
	}
	ret = x->ops->flush(x, 0, size);
	if (ret)
		goto io_err;
	printf("hash=%016" PRIx64 "\n", rpmem_hash_block(l, size));
	x->ops->close(x);
	printf("result=%s\n", fails ? "FAIL" : "ok");
	free(s), free(l), free(r), free(tmp);
	return fails ? 1 : 0;

io_err:
	printf("error=%s\n", strerror(-ret));
	printf("result=FAIL\n");
	x->ops->close(x);
	return 4;
}

/* hash_main -- XXH3 of the first SIZE bytes of PATH, read with read(2) */
static int hash_main(int argc, char **argv)
{
	uint64_t size, got = 0;
	uint8_t *buf;
	int fd;

	if (argc != 4 || rpmem_parse_size(argv[3], &size) || !size)
		usage();
	buf = malloc(size);
	fd = open(argv[2], O_RDONLY);
	if (!buf || fd < 0) {
		fprintf(stderr, "%s: %s\n", argv[2], strerror(errno));
		return 4;
	}
	while (got < size) {
		ssize_t n = read(fd, buf + got, size - got);

		if (n <= 0) {
			fprintf(stderr, "%s: short read at %" PRIu64 "\n",
				argv[2], got);
			return 4;
		}
		got += (uint64_t)n;
	}
	close(fd);
	printf("hash=%016" PRIx64 "\n", rpmem_hash_block(buf, size));
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	rpmem_log_init("rdma_selftest", LOG_INFO, NULL, NULL);
	if (argc < 2)
		usage();
	if (!strcmp(argv[1], "server"))
		return server_main(argc, argv);
	if (!strcmp(argv[1], "client"))
		return client_main(argc, argv);
	if (!strcmp(argv[1], "hash"))
		return hash_main(argc, argv);
	usage();
	return 2;
}
