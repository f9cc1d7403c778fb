/* SPDX-License-Identifier: BSD-3-Clause */
/* delay_line.c -- a slow link for tests and benchmarks */

/*
 * Usage: delay_line LISTEN_PORT TARGET_PORT DELAY_MS
 *
 * Forwards every TCP connection to 127.0.0.1:LISTEN_PORT to
 * 127.0.0.1:TARGET_PORT and delivers each chunk of the client-to-target
 * stream DELAY_MS after it arrived, in order; replies pass at once.
 * DELAY_MS may be a fraction (0.2). Prints "ready" once it listens.
 *
 * The link is a delay line, not a bottleneck: chunks that arrive
 * together leave together, and a later chunk's delay starts when it
 * arrives, not when the one before it left (a pipelined client sees one
 * DELAY_MS per round trip, not one per message). A client that returns
 * before its target acknowledged its data returns while the data is
 * still here.
 *
 * Each connection has three threads: one reads the client and stamps
 * each chunk, one sends each chunk to the target when it is due
 * (clock_nanosleep to an absolute time, with the timer slack at 1 ns so
 * that the kernel does not round the wake up), one copies the replies.
 * When either end closes or fails, both are shut down.
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
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define CHUNK 65536

struct chunk {
	struct chunk *next;
	struct timespec due;
	size_t len; /* 0: the client's stream ended */
	char data[];
};

struct conn {
	int c, u; /* the client's socket, the target's */
	pthread_mutex_t lock;
	pthread_cond_t more;
	struct chunk *head, **tail;
	int refs; /* threads still running */
};

static struct timespec delay;

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static void shut(struct conn *k)
{
	shutdown(k->c, SHUT_RDWR);
	shutdown(k->u, SHUT_RDWR);
}

/* put -- the last reference closes the sockets and frees the queue */
static void put(struct conn *k)
{
	pthread_mutex_lock(&k->lock);
	int last = --k->refs == 0;
	pthread_mutex_unlock(&k->lock);
	if (!last)
		return;
	while (k->head) {
		struct chunk *n = k->head->next;
		free(k->head);
		k->head = n;
	}
	close(k->c);
	close(k->u);
	free(k);
}

static int send_all(int fd, const char *p, size_t len)
{
	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* stamp -- now + delay */
static struct timespec stamp(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	t.tv_sec += delay.tv_sec;
	t.tv_nsec += delay.tv_nsec;
	if (t.tv_nsec >= 1000000000L) {
		t.tv_sec++;
		t.tv_nsec -= 1000000000L;
	}
	return t;
}

/* reader -- the client's chunks onto the queue, stamped; a chunk of
 * length 0 when its stream ends */
static void *reader(void *arg)
{
	struct conn *k = arg;
	ssize_t n;

	do {
		struct chunk *ch = malloc(sizeof(*ch) + CHUNK);
		if (!ch)
			die("malloc");
		do
			n = recv(k->c, ch->data, CHUNK, 0);
		while (n < 0 && errno == EINTR);
		ch->due = stamp();
		ch->len = n > 0 ? (size_t)n : 0;
		ch->next = NULL;
		pthread_mutex_lock(&k->lock);
		*k->tail = ch;
		k->tail = &ch->next;
		pthread_cond_signal(&k->more);
		pthread_mutex_unlock(&k->lock);
	} while (n > 0);
	put(k);
	return NULL;
}

/* sender -- each chunk to the target when it is due */
static void *sender(void *arg)
{
	struct conn *k = arg;

	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	for (;;) {
		pthread_mutex_lock(&k->lock);
		while (!k->head)
			pthread_cond_wait(&k->more, &k->lock);
		struct chunk *ch = k->head;
		k->head = ch->next;
		if (!k->head)
			k->tail = &k->head;
		pthread_mutex_unlock(&k->lock);

		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ch->due,
				       NULL) == EINTR)
			;
		int end = !ch->len || send_all(k->u, ch->data, ch->len);
		free(ch);
		if (end)
			break;
	}
	shut(k);
	put(k);
	return NULL;
}

/* replies -- the target's bytes to the client at once */
static void *replies(void *arg)
{
	struct conn *k = arg;
	char buf[CHUNK];
	ssize_t n;

	while ((n = recv(k->u, buf, sizeof(buf), 0)) > 0 ||
	       (n < 0 && errno == EINTR))
		if (n > 0 && send_all(k->c, buf, (size_t)n))
			break;
	shut(k);
	put(k);
	return NULL;
}

static struct sockaddr_in loopback(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons((uint16_t)port) };

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return a;
}

static void nodelay(int fd)
{
	int one = 1;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

static void start(void *(*fn)(void *), struct conn *k)
{
	pthread_t t;

	if (pthread_create(&t, NULL, fn, k))
		die("pthread_create");
	pthread_detach(t);
}

int main(int argc, char *argv[])
{
	if (argc != 4) {
		fprintf(stderr, "usage: %s LISTEN_PORT TARGET_PORT DELAY_MS\n",
			argv[0]);
		return 2;
	}
	int lport = atoi(argv[1]), tport = atoi(argv[2]);
	char *end;
	double ms = strtod(argv[3], &end);
	if (lport <= 0 || lport > 65535 || tport <= 0 || tport > 65535 ||
	    *end || !(ms >= 0 && ms < 60000)) {
		fprintf(stderr, "%s: bad port or delay\n", argv[0]);
		return 2;
	}
	long long ns = (long long)(ms * 1e6);
	delay.tv_sec = (time_t)(ns / 1000000000LL);
	delay.tv_nsec = (long)(ns % 1000000000LL);

	int lfd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
	struct sockaddr_in la = loopback(lport), ta = loopback(tport);
	if (lfd < 0)
		die("socket");
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(lfd, (struct sockaddr *)&la, sizeof(la)) || listen(lfd, 16))
		die("listen");
	printf("ready\n");
	fflush(stdout);

	for (;;) {
		int c = accept(lfd, NULL, NULL);
		if (c < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			die("accept");
		}
		int u = socket(AF_INET, SOCK_STREAM, 0);
		if (u < 0 || connect(u, (struct sockaddr *)&ta, sizeof(ta))) {
			perror("connect to the target");
			close(c);
			if (u >= 0)
				close(u);
			continue;
		}
		nodelay(c);
		nodelay(u);
		struct conn *k = calloc(1, sizeof(*k));
		if (!k)
			die("calloc");
		k->c = c;
		k->u = u;
		k->tail = &k->head;
		k->refs = 3;
		pthread_mutex_init(&k->lock, NULL);
		pthread_cond_init(&k->more, NULL);
		start(reader, k);
		start(sender, k);
		start(replies, k);
	}
}
