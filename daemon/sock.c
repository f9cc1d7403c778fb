/* SPDX-License-Identifier: BSD-3-Clause */
/* sock.c -- the daemon's TCP: listening sockets, peers, ERROR replies */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "net.h"
#include "proto.h"
#include "sock.h"
#include "util.h"

/* SOCK_DRAIN_BUF -- what one read of a refused connection's drain takes */
#define SOCK_DRAIN_BUF 4096

int rpmemd_listen(const char *addr, const char *port, int *fd)
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
		/*
		 * a deep accept queue: under a connection flood a full
		 * one drops SYNs, and an honest client waits 1 s or more
		 * for its retransmission before rpmemd even sees it
		 */
		if (bind(s, ai->ai_addr, ai->ai_addrlen) < 0 ||
		    listen(s, SOMAXCONN) < 0) {
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

void rpmemd_peer_name(int fd, char *buf, size_t len)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char host[INET6_ADDRSTRLEN] = "?", port[NI_MAXSERV] = "?";
	if (getpeername(fd, (struct sockaddr *)&ss, &sl) == 0)
		getnameinfo((struct sockaddr *)&ss, sl, host, sizeof(host),
			    port, sizeof(port), NI_NUMERICHOST | NI_NUMERICSERV);
	if (ss.ss_family == AF_INET6 && strchr(host, ':'))
		snprintf(buf, len, "[%s]:%s", host, port);
	else
		snprintf(buf, len, "%s:%s", host, port);
}

/* sa_loopback -- the socket address is in 127/8, ::1 or ::ffff:127/104 */
static int sa_loopback(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >>
			24) == 127;
	if (sa->sa_family != AF_INET6)
		return 0;
	const struct in6_addr *a6 = &((const struct sockaddr_in6 *)sa)->sin6_addr;
	return IN6_IS_ADDR_LOOPBACK(a6) ||
	       (IN6_IS_ADDR_V4MAPPED(a6) && a6->s6_addr[12] == 127);
}

int rpmemd_is_loopback(const char *addr)
{
	/* what rpmemd_listen would bind: every address the name gives */
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_PASSIVE };
	struct addrinfo *res;
	int all = 1;

	if (getaddrinfo(addr, NULL, &hints, &res))
		return 0;
	for (struct addrinfo *ai = res; ai; ai = ai->ai_next)
		all &= sa_loopback(ai->ai_addr);
	freeaddrinfo(res);
	return all;
}

int rpmemd_send_error(struct rpmem_conn *c, uint32_t id, uint32_t code,
		      const char *fmt, ...)
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
	return rpmem_send_frame(c, RPMEM_MSG_ERROR, id, buf, (size_t)len,
				NULL, 0);
}

void rpmemd_refuse(struct rpmem_conn *c, int tls_daemon, uint32_t code,
		   const char *fmt, ...)
{
	struct rpmem_msg_error m = { .code = code };
	uint8_t buf[RPMEM_HDR_SIZE + RPMEM_MSG_MAX + 8];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(m.msg, sizeof(m.msg), fmt, ap);
	va_end(ap);
	int len = rpmem_error_encode(buf + RPMEM_HDR_SIZE,
				     sizeof(buf) - RPMEM_HDR_SIZE, &m);
	if (len >= 0 && c->tls) {
		/* a few hundred bytes on a connection that has sent little */
		rpmem_conn_set_sndtimeo(c, 100);
		(void)rpmem_send_frame(c, RPMEM_MSG_ERROR, 0,
				       buf + RPMEM_HDR_SIZE, (size_t)len, NULL,
				       0);
	} else if (len >= 0 && !tls_daemon) {
		struct rpmem_hdr h = { .type = RPMEM_MSG_ERROR,
				       .len = (uint32_t)len };
		rpmem_hdr_encode(buf, &h);
		ssize_t n = send(c->fd, buf, RPMEM_HDR_SIZE + (size_t)len,
				 MSG_DONTWAIT | MSG_NOSIGNAL);
		(void)n;
	}
	rpmemd_drain(c, 0);
}

void rpmemd_drain(struct rpmem_conn *c, unsigned wait_ms)
{
	uint64_t end = rpmem_now_ns() + wait_ms * 1000000ull;
	struct pollfd pfd = { .fd = c->fd, .events = POLLIN };
	char buf[SOCK_DRAIN_BUF];

	shutdown(c->fd, SHUT_WR);
	for (int i = 0; !wait_ms && i < 16; i++)
		if (recv(c->fd, buf, sizeof(buf), MSG_DONTWAIT) <= 0)
			return;
	while (wait_ms) {
		uint64_t now = rpmem_now_ns();
		if (now >= end)
			return;
		/* nothing yet: wait for it, not past the end */
		int n = poll(&pfd, 1, (int)((end - now) / 1000000) + 1);
		if (n < 0 && errno != EINTR)
			return;
		if (n <= 0)
			continue;
		ssize_t r = recv(c->fd, buf, sizeof(buf), MSG_DONTWAIT);
		/* the peer closed (0), or the connection failed */
		if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR))
			return;
	}
}
