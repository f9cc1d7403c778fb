/* SPDX-License-Identifier: BSD-3-Clause */
/* pingpong.c -- round trip of a blocking TCP ping-pong: the yardstick of a persist */

/*
 * Usage: pingpong SIZE COUNT [PORT [VIA]]
 * A server thread on 127.0.0.1 (PORT, 0: any) answers each SIZE-byte
 * message with 16 bytes; the client sends COUNT (+ 10 warm-up) messages
 * one at a time, both ends blocking with TCP_NODELAY, the way a persist
 * travels over TCP. With VIA, the client connects to 127.0.0.1:VIA (a
 * proxy to PORT, such as build/tests/delay_line) instead. Prints
 * "median_us=... min_us=... p99_us=..." of the round trips.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define REPLY 16
#define WARMUP 10

struct srv {
	int lfd;
	size_t size;
	unsigned long count;
};

/* now_ns -- CLOCK_MONOTONIC in ns */
static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* read_full -- len bytes or -1 */
static int read_full(int fd, void *buf, size_t len)
{
	uint8_t *p = buf;

	while (len) {
		ssize_t n = recv(fd, p, len, MSG_WAITALL);
		if (n <= 0) {
			if (n < 0 && errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* write_full -- len bytes or -1 */
static int write_full(int fd, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* nodelay -- TCP_NODELAY on fd */
static void nodelay(int fd)
{
	int one = 1;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

/* serve -- answer every message of the one connection (thread body) */
static void *serve(void *arg)
{
	struct srv *s = arg;
	uint8_t reply[REPLY] = { 0 };
	uint8_t *buf = malloc(s->size);
	int fd = accept(s->lfd, NULL, NULL);

	if (fd < 0 || !buf)
		goto out;
	nodelay(fd);
	for (unsigned long i = 0; i < s->count + WARMUP; i++)
		if (read_full(fd, buf, s->size) || write_full(fd, reply, REPLY))
			break;
out:
	if (fd >= 0)
		close(fd);
	free(buf);
	return NULL;
}

/* cmp_u64 -- qsort order of uint64_t */
static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t sl = sizeof(sa);
	struct srv s;
	pthread_t tid;
	uint8_t reply[REPLY];
	uint64_t *lat;
	uint8_t *buf;
	int fd;

	if (argc < 3) {
		fprintf(stderr, "usage: pingpong SIZE COUNT [PORT [VIA]]\n");
		return 2;
	}
	s.size = strtoul(argv[1], NULL, 0);
	s.count = strtoul(argv[2], NULL, 0);
	if (!s.size || !s.count)
		return 2;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sa.sin_port = htons(argc > 3 ? (uint16_t)atoi(argv[3]) : 0);
	s.lfd = socket(AF_INET, SOCK_STREAM, 0);
	int one = 1; /* a fixed PORT again while the last is in TIME_WAIT */
	if (s.lfd >= 0)
		setsockopt(s.lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (s.lfd < 0 || bind(s.lfd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    listen(s.lfd, 1) ||
	    getsockname(s.lfd, (struct sockaddr *)&sa, &sl)) {
		perror("pingpong: listen");
		return 1;
	}
	if (pthread_create(&tid, NULL, serve, &s))
		return 1;
	if (argc > 4)
		sa.sin_port = htons((uint16_t)atoi(argv[4]));
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		perror("pingpong: connect");
		return 1;
	}
	nodelay(fd);
	buf = calloc(1, s.size);
	lat = calloc(s.count, sizeof(*lat));
	if (!buf || !lat)
		return 1;
	for (unsigned long i = 0; i < s.count + WARMUP; i++) {
		uint64_t t0 = now_ns();
		if (write_full(fd, buf, s.size) ||
		    read_full(fd, reply, sizeof(reply))) {
			fprintf(stderr, "pingpong: connection lost\n");
			return 1;
		}
		if (i >= WARMUP)
			lat[i - WARMUP] = now_ns() - t0;
	}
	close(fd);
	pthread_join(tid, NULL);
	qsort(lat, s.count, sizeof(*lat), cmp_u64);
	printf("median_us=%.2f min_us=%.2f p99_us=%.2f\n",
	       (double)lat[s.count / 2] / 1e3, (double)lat[0] / 1e3,
	       (double)lat[(s.count * 99 + 99) / 100 - 1] / 1e3);
	free(buf);
	free(lat);
	close(s.lfd);
	return 0;
}
