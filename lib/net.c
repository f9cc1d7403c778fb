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

int rpmem_net_listen(const char *addr, const char *port, int *fd)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_PASSIVE | AI_NUMERICSERV };
	struct addrinfo *res;
	int gai = getaddrinfo(addr, port, &hints, &res);
	if (gai)
		return gai == EAI_SYSTEM ? -errno : -EADDRNOTAVAIL;
	int ret = -EADDRNOTAVAIL;
	for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
		int s = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC,
			       ai->ai_protocol);
		if (s < 0) {
			ret = -errno;
			continue;
		}
		int one = 1;
		setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (ai->ai_family == AF_INET6)
			setsockopt(s, IPPROTO_IPV6, IPV6_V6ONLY, &one,
				   sizeof(one));
		if (bind(s, ai->ai_addr, ai->ai_addrlen) < 0 ||
		    listen(s, 64) < 0) {
			ret = -errno;
			close(s);
			continue;
		}
		*fd = s;
		ret = 0;
		break;
	}
	freeaddrinfo(res);
	return ret;
}

void rpmem_net_peer(int fd, char *buf, size_t len)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char host[INET6_ADDRSTRLEN] = "?", port[8] = "?";
	if (getpeername(fd, (struct sockaddr *)&ss, &sl) == 0)
		getnameinfo((struct sockaddr *)&ss, sl, host, sizeof(host),
			    port, sizeof(port), NI_NUMERICHOST | NI_NUMERICSERV);
	if (ss.ss_family == AF_INET6 && strchr(host, ':'))
		snprintf(buf, len, "[%s]:%s", host, port);
	else
		snprintf(buf, len, "%s:%s", host, port);
}

int rpmem_net_is_loopback(const char *addr)
{
	struct in_addr a4;
	struct in6_addr a6;
	if (!strcmp(addr, "localhost"))
		return 1;
	if (inet_pton(AF_INET, addr, &a4) == 1)
		return (ntohl(a4.s_addr) >> 24) == 127;
	if (inet_pton(AF_INET6, addr, &a6) == 1)
		return IN6_IS_ADDR_LOOPBACK(&a6);
	return 0;
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

int rpmem_recv_frame(int fd, struct rpmem_hdr *h, void *buf, size_t cap)
{
	int ret = rpmem_recv_hdr(fd, h);
	if (ret)
		return ret;
	if (h->len > cap) {
		ret = rpmem_net_discard(fd, h->len);
		return ret ? ret : -EMSGSIZE;
	}
	return rpmem_net_read_full(fd, buf, h->len);
}

int rpmem_send_error(int fd, uint32_t id, uint32_t code, const char *fmt, ...)
{
	struct rpmem_msg_error m = { .code = code };
	uint8_t buf[RPMEM_MSG_MAX + 8];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(m.msg, sizeof(m.msg), fmt, ap);
	va_end(ap);
	int len = rpmem_error_encode(buf, sizeof(buf), &m);
	if (len < 0)
		return len;
	return rpmem_send_frame(fd, RPMEM_MSG_ERROR, id, buf, (size_t)len,
				NULL, 0);
}
