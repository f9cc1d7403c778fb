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
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "net.h"
#include "wire.h"

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

int rpmem_net_read_full(int fd, void *buf, size_t len)
{
	uint8_t *p = buf;
	while (len) {
		ssize_t n = recv(fd, p, len, MSG_WAITALL);
		if (n == 0)
			return -ECONNRESET;
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return -ETIMEDOUT;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int rpmem_net_write_full(int fd, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return -ETIMEDOUT;
			return errno == EPIPE ? -ECONNRESET : -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int rpmem_net_discard(int fd, size_t len)
{
	uint8_t buf[16384];
	while (len) {
		size_t n = len < sizeof(buf) ? len : sizeof(buf);
		int ret = rpmem_net_read_full(fd, buf, n);
		if (ret)
			return ret;
		len -= n;
	}
	return 0;
}

int rpmem_send_frame(int fd, uint16_t type, uint32_t id, const void *p1,
		     size_t l1, const void *p2, size_t l2)
{
	uint8_t hdr[RPMEM_HDR_SIZE];
	if (l1 + l2 > RPMEM_MAX_PAYLOAD)
		return -EMSGSIZE;
	struct rpmem_hdr h = { .type = type, .id = id,
			       .len = (uint32_t)(l1 + l2) };
	rpmem_hdr_encode(hdr, &h);
	struct iovec iov[3] = {
		{ hdr, sizeof(hdr) },
		{ (void *)p1, l1 },
		{ (void *)p2, l2 },
	};
	struct msghdr mh = { .msg_iov = iov, .msg_iovlen = 3 };
	size_t left = sizeof(hdr) + l1 + l2;
	while (left) {
		ssize_t n = sendmsg(fd, &mh, MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return -ETIMEDOUT;
			return errno == EPIPE ? -ECONNRESET : -errno;
		}
		left -= (size_t)n;
		/* advance past what was sent */
		while (n > 0 && mh.msg_iovlen) {
			if ((size_t)n >= mh.msg_iov->iov_len) {
				n -= (ssize_t)mh.msg_iov->iov_len;
				mh.msg_iov++;
				mh.msg_iovlen--;
			} else {
				mh.msg_iov->iov_base =
					(uint8_t *)mh.msg_iov->iov_base + n;
				mh.msg_iov->iov_len -= (size_t)n;
				n = 0;
			}
		}
	}
	return 0;
}

int rpmem_recv_hdr(int fd, struct rpmem_hdr *h)
{
	uint8_t hdr[RPMEM_HDR_SIZE];
	int ret = rpmem_net_read_full(fd, hdr, sizeof(hdr));
	if (ret)
		return ret;
	return rpmem_hdr_decode(hdr, h);
}

