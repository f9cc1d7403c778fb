/* SPDX-License-Identifier: BSD-3-Clause */
/* net.c -- TCP sockets and framed message I/O shared by both ends */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <unistd.h>

#include "net.h"
#include "tls.h"
#include "util.h"
#include "wire.h"

/* NET_DRAIN_BUF -- what one read of a connection's drain takes */
#define NET_DRAIN_BUF 16384

#define SOCK_BUF (4 << 20)

/* tune -- low latency for control replies, deep buffers for data */
static void tune(int fd)
{
	int one = 1, sz = SOCK_BUF;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
}

/* connect_one -- a non-blocking connect bounded by timeout_ms */
static int connect_one(const struct addrinfo *ai, int timeout_ms, int *out)
{
	int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC |
					       SOCK_NONBLOCK,
			ai->ai_protocol);
	if (fd < 0)
		return -errno;
	tune(fd);
	int ret = 0;
	if (connect(fd, ai->ai_addr, ai->ai_addrlen) < 0) {
		if (errno != EINPROGRESS) {
			ret = -errno;
			goto err;
		}
		struct pollfd pfd = { .fd = fd, .events = POLLOUT };
		int n;
		do {
			n = poll(&pfd, 1, timeout_ms);
		} while (n < 0 && errno == EINTR);
		if (n == 0) {
			ret = -ETIMEDOUT;
			goto err;
		}
		int soerr = 0;
		socklen_t sl = sizeof(soerr);
		if (n < 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl))
			soerr = errno;
		if (soerr) {
			ret = -soerr;
			goto err;
		}
	}
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
		ret = -errno;
		goto err;
	}
	*out = fd;
	return 0;
err:
	close(fd);
	return ret;
}

int rpmem_net_peer_loopback(int fd)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);

	if (getpeername(fd, (struct sockaddr *)&ss, &sl))
		return 0;
	if (ss.ss_family == AF_INET)
		return ntohl(((struct sockaddr_in *)&ss)->sin_addr.s_addr) >>
			       24 ==
		       127;
	if (ss.ss_family != AF_INET6)
		return 0;
	const struct in6_addr *a = &((struct sockaddr_in6 *)&ss)->sin6_addr;
	/* ::1, or an IPv4 loopback address mapped */
	return IN6_IS_ADDR_LOOPBACK(a) ||
	       (IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127);
}

int rpmem_net_connect(const char *host, const char *port, int timeout_ms,
		      int *fd)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
				  .ai_family = AF_UNSPEC };
	struct addrinfo *res;
	int gai = getaddrinfo(host, port ? port : RPMEM_DEFAULT_PORT, &hints,
			      &res);
	if (gai)
		return gai == EAI_SYSTEM ? -errno : -ENOENT;
	int ret = -EHOSTUNREACH;
	for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
		ret = connect_one(ai, timeout_ms, fd);
		if (ret == 0)
			break;
	}
	freeaddrinfo(res);
	return ret;
}

void rpmem_conn_init(struct rpmem_conn *c, int fd)
{
	/* not the read-ahead buffer: its pages stay untouched until used */
	memset(c, 0, offsetof(struct rpmem_conn, ra));
	c->fd = fd;
	c->pipe_rd = c->pipe_wr = -1;
}

void rpmem_conn_close(struct rpmem_conn *c)
{
	if (c->tls)
		rpmem_tls_free(&c->tls);
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	if (c->pipe_rd >= 0) {
		close(c->pipe_rd);
		close(c->pipe_wr);
	}
	c->pipe_rd = c->pipe_wr = -1;
}

/* set_timeo -- SO_RCVTIMEO or SO_SNDTIMEO in ms (0: none) */
static int set_timeo(int fd, int opt, int ms)
{
	struct timeval tv = { .tv_sec = ms / 1000,
			      .tv_usec = (ms % 1000) * 1000 };
	return setsockopt(fd, SOL_SOCKET, opt, &tv, sizeof(tv)) ? -errno : 0;
}

int rpmem_conn_set_rcvtimeo(struct rpmem_conn *c, int ms)
{
	c->rcvtimeo_ms = ms;
	c->armed_ms = ms;
	return set_timeo(c->fd, SO_RCVTIMEO, ms);
}

int rpmem_conn_set_sndtimeo(struct rpmem_conn *c, int ms)
{
	return set_timeo(c->fd, SO_SNDTIMEO, ms);
}

/* the socket's timeout may outlast a deadline by this much (see arm) */
#define ARM_SLACK_MS 50

void rpmem_conn_set_deadline(struct rpmem_conn *c, uint64_t abs_ns)
{
	/* the socket's timeout is set by the next read that waits (arm) */
	c->deadline_ns = abs_ns;
}

/* arm_ms -- SO_RCVTIMEO to ms unless it is set so already */
static int arm_ms(struct rpmem_conn *c, int ms)
{
	if (c->armed_ms == ms)
		return 0;
	int ret = set_timeo(c->fd, SO_RCVTIMEO, ms);
	if (!ret)
		c->armed_ms = ms;
	return ret;
}

/*
 * arm -- before a blocking read: outside a deadline, the socket's own
 * timeout; under one, bound the read by the time left instead (a recv's
 * SO_RCVTIMEO covers the whole call, MSG_WAITALL included); -ETIMEDOUT if
 * none is left. A timeout already set that ends at most ARM_SLACK_MS after
 * the deadline, and not before half the time left, is kept: a read that
 * times out early is retried, so only the setsockopt is saved.
 */
static int arm(struct rpmem_conn *c)
{
	if (!c->deadline_ns)
		return arm_ms(c, c->rcvtimeo_ms);
	uint64_t now = rpmem_now_ns();
	if (now >= c->deadline_ns)
		return -ETIMEDOUT;
	uint64_t left_ms = (c->deadline_ns - now + 999999) / 1000000;
	uint64_t armed = (uint64_t)c->armed_ms;
	if (armed && armed <= left_ms + ARM_SLACK_MS && 2 * armed >= left_ms)
		return 0;
	return arm_ms(c, (int)left_ms);
}

/*
 * recv_result -- what a receive from the socket returned: n > 0 as it is,
 * 0 (the peer closed) as -ECONNRESET, a receive timeout as -ETIMEDOUT,
 * another failure as -errno; 0 for EINTR (receive again)
 */
static ssize_t recv_result(ssize_t n)
{
	if (n > 0)
		return n;
	if (n == 0)
		return -ECONNRESET;
	if (errno == EINTR)
		return 0;
	if (errno == EAGAIN || errno == EWOULDBLOCK)
		return -ETIMEDOUT;
	return -errno;
}

/*
 * sock_read -- one plaintext recv of up to len bytes (all of them with
 * MSG_WAITALL in flags); >0, or -errno
 */
static ssize_t sock_read(struct rpmem_conn *c, void *buf, size_t len,
			 int flags)
{
	for (;;) {
		ssize_t n = recv_result(recv(c->fd, buf, len, flags));
		if (n)
			return n;
	}
}

/* take_ahead -- up to len bytes read ahead already into buf; how many */
static size_t take_ahead(struct rpmem_conn *c, uint8_t *buf, size_t len)
{
	size_t n = c->ra_len - c->ra_pos;
	if (n > len)
		n = len;
	memcpy(buf, c->ra + c->ra_pos, n);
	c->ra_pos += (uint32_t)n;
	if (c->ra_pos == c->ra_len)
		c->ra_pos = c->ra_len = 0;
	return n;
}

/*
 * conn_read -- one read towards len bytes into p: what was read ahead;
 * else a read ahead for a short rest (plaintext), or a read straight
 * into p; >0, or -errno
 */
static ssize_t conn_read(struct rpmem_conn *c, uint8_t *p, size_t len)
{
	if (c->ra_len > c->ra_pos)
		return (ssize_t)take_ahead(c, p, len);
	int ret = arm(c);
	if (ret)
		return ret;
	if (c->tls)
		return rpmem_tls_read(c->tls, p, len);
	if (len >= sizeof(c->ra))
		return sock_read(c, p, len, MSG_WAITALL);
	ssize_t n = sock_read(c, c->ra, sizeof(c->ra), 0);
	if (n < 0)
		return n;
	c->ra_pos = 0;
	c->ra_len = (uint32_t)n;
	return (ssize_t)take_ahead(c, p, len);
}

int rpmem_conn_wait(struct rpmem_conn *c, int ms)
{
	return rpmem_conn_wait_or(c, -1, ms);
}

int rpmem_conn_ready(struct rpmem_conn *c)
{
	if (c->tls || c->ra_len > c->ra_pos)
		return rpmem_conn_wait(c, 0);
	ssize_t n = recv(c->fd, c->ra, sizeof(c->ra), MSG_DONTWAIT);
	if (n > 0) {
		c->ra_pos = 0;
		c->ra_len = (uint32_t)n;
		return 1;
	}
	/* the end or a failure: the read says which */
	return n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK &&
			  errno != EINTR);
}

int rpmem_conn_wait_or(struct rpmem_conn *c, int wake_fd, int ms)
{
	/* poll(2) skips a negative fd */
	struct pollfd pfd[] = { { .fd = c->fd, .events = POLLIN },
				 { .fd = wake_fd, .events = POLLIN } };

	if (c->ra_len > c->ra_pos || (c->tls && rpmem_tls_pending(c->tls)))
		return 1;
	int n = poll(pfd, 2, ms);
	if (n > 0 && pfd[1].revents)
		return 2;
	/* a failed poll: let the read say what is wrong */
	return n != 0;
}

void rpmem_conn_close_notify(struct rpmem_conn *c)
{
	if (c->tls)
		rpmem_tls_close_notify(c->tls);
}

void rpmem_conn_trim(struct rpmem_conn *c)
{
	if (c->tls)
		rpmem_tls_trim(c->tls);
}

int rpmem_net_read_full(struct rpmem_conn *c, void *buf, size_t len)
{
	uint8_t *p = buf;
	while (len) {
		ssize_t n = conn_read(c, p, len);
		if (n < 0) {
			/* a timeout that only the deadline made */
			if (n == -ETIMEDOUT && c->deadline_ns &&
			    rpmem_now_ns() < c->deadline_ns)
				continue;
			return (int)n;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/*
 * file_put -- write buf[0, len) at *off of file fd (unless an earlier
 * write failed: *ferr) and move *off past it either way
 */
static void file_put(int fd, uint64_t *off, const uint8_t *buf, size_t len,
		     int *ferr)
{
	uint64_t o = *off;

	*off += len;
	while (len && !*ferr) {
		ssize_t w = pwrite(fd, buf, len, (off_t)o);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			*ferr = w < 0 ? -errno : -EIO;
			break;
		}
		buf += w;
		len -= (size_t)w;
		o += (uint64_t)w;
	}
}

/*
 * pipe_get -- the connection's pipe for splicing, made on first use as
 * large as one WRITE (or what the user's pipe quota allows); 0 or -errno
 */
static int pipe_get(struct rpmem_conn *c)
{
	int p[2];

	if (c->pipe_rd >= 0)
		return 0;
	if (pipe2(p, O_CLOEXEC))
		return -errno;
	int sz = fcntl(p[1], F_SETPIPE_SZ, (int)RPMEM_MAX_IO);
	if (sz < 0)
		sz = fcntl(p[1], F_GETPIPE_SZ);
	if (sz <= 0) {
		int ret = sz < 0 ? -errno : -EINVAL;
		close(p[0]);
		close(p[1]);
		return ret;
	}
	c->pipe_rd = p[0];
	c->pipe_wr = p[1];
	c->pipe_size = (size_t)sz;
	return 0;
}

/*
 * pipe_to_file -- move n bytes the pipe holds into file fd at *off (moved
 * past them): spliced while *spliced and the file takes it, else read and
 * written; after a failed file write (*ferr) read and dropped. 0, or
 * -errno of the pipe (the connection is then unusable).
 */
static int pipe_to_file(struct rpmem_conn *c, int fd, uint64_t *off, size_t n,
			int *spliced, int *ferr)
{
	uint8_t buf[NET_DRAIN_BUF];

	while (n) {
		if (*spliced && !*ferr) {
			loff_t o = (loff_t)*off;
			ssize_t w = splice(c->pipe_rd, NULL, fd, &o, n,
					   SPLICE_F_MOVE);
			if (w > 0) {
				*off += (uint64_t)w;
				n -= (size_t)w;
				continue;
			}
			if (w < 0 && errno == EINTR)
				continue;
			if (w < 0 && errno == EINVAL) {
				*spliced = 0; /* no splice into this file */
				continue;
			}
			*ferr = w < 0 ? -errno : -EIO;
		}
		ssize_t r = read(c->pipe_rd, buf, n < sizeof(buf) ? n :
								  sizeof(buf));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? -errno : -EIO;
		file_put(fd, off, buf, (size_t)r, ferr);
		n -= (size_t)r;
	}
	return 0;
}

/* sock_splice -- one splice of up to len bytes of the socket into its pipe */
static ssize_t sock_splice(struct rpmem_conn *c, size_t len)
{
	int ret = arm(c);

	if (ret)
		return ret;
	if (len > c->pipe_size)
		len = c->pipe_size;
	for (;;) {
		ssize_t n = recv_result(splice(c->fd, NULL, c->pipe_wr, NULL,
					       len, SPLICE_F_MOVE));
		if (n)
			return n;
	}
}

int rpmem_net_read_to_file(struct rpmem_conn *c, int fd, uint64_t off,
			   size_t len, int *ferr)
{
	uint8_t buf[NET_DRAIN_BUF];
	int spliced = 1;

	*ferr = 0;
	if (!c->tls)
		(void)pipe_get(c); /* without a pipe: through buf */
	while (len) {
		ssize_t n;
		if (c->tls || c->pipe_rd < 0 || c->ra_len > c->ra_pos) {
			n = conn_read(c, buf, len < sizeof(buf) ? len :
								  sizeof(buf));
			if (n > 0)
				file_put(fd, &off, buf, (size_t)n, ferr);
		} else {
			n = sock_splice(c, len);
			if (n > 0) {
				int ret = pipe_to_file(c, fd, &off, (size_t)n,
						       &spliced, ferr);
				if (ret)
					return ret;
			}
		}
		if (n < 0) {
			/* a timeout that only the deadline made */
			if (n == -ETIMEDOUT && c->deadline_ns &&
			    rpmem_now_ns() < c->deadline_ns)
				continue;
			return (int)n;
		}
		len -= (size_t)n;
	}
	return 0;
}

/* send_iov -- send all of iov[0..n) in gathered writes; -errno */
static int send_iov(int fd, struct iovec *iov, size_t n, int flags)
{
	struct msghdr mh = { .msg_iov = iov, .msg_iovlen = n };
	size_t left = 0;

	for (size_t i = 0; i < n; i++)
		left += iov[i].iov_len;
	while (left) {
		ssize_t w = sendmsg(fd, &mh, MSG_NOSIGNAL | flags);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return -ETIMEDOUT;
			return errno == EPIPE ? -ECONNRESET : -errno;
		}
		left -= (size_t)w;
		/* advance past what was sent */
		while (w > 0 && mh.msg_iovlen) {
			if ((size_t)w >= mh.msg_iov->iov_len) {
				w -= (ssize_t)mh.msg_iov->iov_len;
				mh.msg_iov++;
				mh.msg_iovlen--;
			} else {
				mh.msg_iov->iov_base =
					(uint8_t *)mh.msg_iov->iov_base + w;
				mh.msg_iov->iov_len -= (size_t)w;
				w = 0;
			}
		}
	}
	return 0;
}

int rpmem_net_write_full(struct rpmem_conn *c, const void *buf, size_t len)
{
	if (c->tls)
		return rpmem_tls_write(c->tls, buf, len);
	struct iovec v = { (void *)buf, len };
	return send_iov(c->fd, &v, 1, 0);
}

int rpmem_net_discard(struct rpmem_conn *c, size_t len)
{
	uint8_t buf[NET_DRAIN_BUF];
	while (len) {
		size_t n = len < sizeof(buf) ? len : sizeof(buf);
		int ret = rpmem_net_read_full(c, buf, n);
		if (ret)
			return ret;
		len -= n;
	}
	return 0;
}

/*
 * tls_frame -- a frame over TLS: small frames are gathered into one
 * record (one write, one record header and tag), large ones go as is
 */
static int tls_frame(struct rpmem_conn *c, const uint8_t *hdr, const void *p1,
		     size_t l1, const void *p2, size_t l2)
{
	uint8_t small[RPMEM_TLS_GATHER];
	size_t total = RPMEM_HDR_SIZE + l1 + l2;
	int ret;

	if (total <= sizeof(small)) {
		memcpy(small, hdr, RPMEM_HDR_SIZE);
		if (l1)
			memcpy(small + RPMEM_HDR_SIZE, p1, l1);
		if (l2)
			memcpy(small + RPMEM_HDR_SIZE + l1, p2, l2);
		return rpmem_tls_write(c->tls, small, total);
	}
	/* header and head in one record, then the data, one flush */
	if (RPMEM_HDR_SIZE + l1 <= sizeof(small)) {
		memcpy(small, hdr, RPMEM_HDR_SIZE);
		if (l1)
			memcpy(small + RPMEM_HDR_SIZE, p1, l1);
		struct iovec v[] = { { small, RPMEM_HDR_SIZE + l1 },
				      { (void *)p2, l2 } };
		return rpmem_tls_writev(c->tls, v, 2);
	}
	struct iovec v[] = { { (void *)hdr, RPMEM_HDR_SIZE },
			      { (void *)p1, l1 },
			      { (void *)p2, l2 } };
	(void)ret;
	return rpmem_tls_writev(c->tls, v, 3);
}

/*
 * cork -- over TLS, hold what is sent (on) or send it now (off), if it
 * changes; plaintext sends say MSG_MORE instead, which costs no call
 */
static void cork(struct rpmem_conn *c, int on)
{
	if (!c->tls || c->corked == on)
		return;
	c->corked = on;
	(void)setsockopt(c->fd, IPPROTO_TCP, TCP_CORK, &on, sizeof(on));
}

static int send_frame(struct rpmem_conn *c, uint16_t type, uint32_t id,
		      const void *p1, size_t l1, const void *p2, size_t l2);
static int send_frames(struct rpmem_conn *c, const struct rpmem_frame *f,
		       size_t n);

/*
 * rpmem_send_frame -- one frame; held with the frames before it while
 * c->more is set (see struct rpmem_conn), else sent with them
 */
int rpmem_send_frame(struct rpmem_conn *c, uint16_t type, uint32_t id,
		     const void *p1, size_t l1, const void *p2, size_t l2)
{
	if (c->more)
		cork(c, 1);
	int ret = send_frame(c, type, id, p1, l1, p2, l2);
	if (!c->more)
		cork(c, 0);
	return ret;
}

int rpmem_send_frames(struct rpmem_conn *c, const struct rpmem_frame *f,
		      size_t n)
{
	if (c->more)
		cork(c, 1);
	int ret = send_frames(c, f, n);
	if (!c->more)
		cork(c, 0);
	return ret;
}

static int send_frame(struct rpmem_conn *c, uint16_t type, uint32_t id,
		      const void *p1, size_t l1, const void *p2, size_t l2)
{
	uint8_t hdr[RPMEM_HDR_SIZE];
	int fd = c->fd;
	if (l1 + l2 > RPMEM_MAX_PAYLOAD)
		return -EMSGSIZE;
	struct rpmem_hdr h = { .type = type, .id = id,
			       .len = (uint32_t)(l1 + l2) };
	rpmem_hdr_encode(hdr, &h);
	if (c->tls)
		return tls_frame(c, hdr, p1, l1, p2, l2);
	struct iovec iov[] = {
		{ hdr, sizeof(hdr) },
		{ (void *)p1, l1 },
		{ (void *)p2, l2 },
	};
	return send_iov(fd, iov, 3, c->more ? MSG_MORE : 0);
}

static int send_frames(struct rpmem_conn *c, const struct rpmem_frame *f,
		       size_t n)
{
	uint8_t hdr[RPMEM_SEND_FRAMES_MAX][RPMEM_HDR_SIZE];
	struct iovec iov[3 * RPMEM_SEND_FRAMES_MAX];

	if (n > RPMEM_SEND_FRAMES_MAX)
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (f[i].l1 + f[i].l2 > RPMEM_MAX_PAYLOAD)
			return -EMSGSIZE;
	if (c->tls) {
		for (size_t i = 0; i < n; i++) {
			int ret = send_frame(c, f[i].type, f[i].id,
						   f[i].p1, f[i].l1, f[i].p2,
						   f[i].l2);
			if (ret)
				return ret;
		}
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		struct rpmem_hdr h = { .type = f[i].type, .id = f[i].id,
				       .len = (uint32_t)(f[i].l1 + f[i].l2) };
		rpmem_hdr_encode(hdr[i], &h);
		iov[3 * i] = (struct iovec){ hdr[i], RPMEM_HDR_SIZE };
		iov[3 * i + 1] = (struct iovec){ (void *)f[i].p1, f[i].l1 };
		iov[3 * i + 2] = (struct iovec){ (void *)f[i].p2, f[i].l2 };
	}
	return send_iov(c->fd, iov, 3 * n, c->more ? MSG_MORE : 0);
}

int rpmem_recv_hdr(struct rpmem_conn *c, struct rpmem_hdr *h)
{
	uint8_t hdr[RPMEM_HDR_SIZE];
	int ret = rpmem_net_read_full(c, hdr, sizeof(hdr));
	if (ret)
		return ret;
	return rpmem_hdr_decode(hdr, h);
}

