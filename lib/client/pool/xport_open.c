/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * xport_open.c -- which data plane a pool is opened with: the one its
 * OPEN asks for, and the one the target chose brought up (tcp_initiator.c
 * or lib/rdma); above this, a data plane is known by its operations only
 */
#include <errno.h>
#include <netdb.h>
#include <string.h>
#include <sys/socket.h>

#include "client_pool.h"
#include "rdma.h"
#include "util.h"

/* local_addr -- numeric address of our end of the control socket */
static void local_addr(int fd, char *buf, size_t len)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	buf[0] = '\0';
	if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0)
		getnameinfo((struct sockaddr *)&ss, sl, buf, (socklen_t)len,
			    NULL, 0, NI_NUMERICHOST);
}

uint8_t client_xport_wanted(struct rpmemctl_session *s, int fallback)
{
	if (fallback)
		return RPMEM_XPORT_TCP;
	switch (s->transport) {
	case RPMEMCTL_TRANSPORT_TCP:
		return RPMEM_XPORT_TCP;
	case RPMEMCTL_TRANSPORT_RDMA:
		return RPMEM_XPORT_RDMA;
	case RPMEMCTL_TRANSPORT_AUTO:
		break;
	}
	if (!(s->caps & RPMEM_CAP_RDMA))
		return RPMEM_XPORT_TCP;
	char addr[RPMEM_ADDR_STR];
	local_addr(s->conn.fd, addr, sizeof(addr));
	return addr[0] && rpmem_rdma_usable(addr) ? RPMEM_XPORT_AUTO :
						   RPMEM_XPORT_TCP;
}

int client_xport_open(struct rpmemctl_session *s, const char *region,
		      const char *pool, uint8_t wanted,
		      const struct rpmem_msg_open_ok *ok,
		      struct rpmem_xport **x)
{
	if (ok->xport == RPMEM_XPORT_TCP) {
		if (wanted == RPMEM_XPORT_RDMA) {
			client_seterr(s,
				      "pool '%s' in region '%s': %s:%s offered "
				      "tcp, rdma was requested",
				      pool, region, s->host, s->port);
			return -ENOTSUP;
		}
		int ret = rpmem_tcp_client_new(s, ok->handle, ok->size, x);
		if (ret)
			client_seterr(s, "out of memory");
		return ret;
	}
	if (wanted == RPMEM_XPORT_TCP) {
		client_seterr(s, "%s:%s chose rdma for pool '%s', tcp was "
			      "requested", s->host, s->port, pool);
		return client_lost(s, -EPROTO, "opening a pool");
	}
	char why[RPMEM_MSG_MAX];
	int ret = rpmem_rdma_client_new(s->host, s->conn.tls, ok->blob,
					ok->blob_len, ok->size, &s->log, x,
					why, sizeof(why));
	if (ret == 0)
		return 0;
	if (!why[0])
		rpmem_strlcpy(why, strerror(-ret), sizeof(why));
	if (wanted == RPMEM_XPORT_AUTO) {
		client_log(s, LOG_DEBUG, "rdma to %s unusable (%s), falling "
			   "back to tcp", s->host, why);
		return -EAGAIN;
	}
	if (ret == -EKEYREJECTED) {
		/* the control connection works: the target said no */
		client_seterr(s, "%s:%s rejected the RDMA connection for pool "
			      "'%s' in region '%s' (token refused or expired; "
			      "see rpmemd's log)", s->host, s->port, pool,
			      region);
		return ret;
	}
	unsigned long long lim;
	if (ret == -ENOMEM && rpmem_memlock_limit(&lim)) {
		/* rdma-unusable here, like a target that offers only tcp */
		client_seterr(s, "pool '%s' in region '%s': cannot connect the "
			      "rdma data plane to %s: this process's "
			      "locked-memory limit is %llu bytes: raise "
			      "RLIMIT_MEMLOCK (ulimit -l, or "
			      "LimitMEMLOCK=infinity in the systemd unit that "
			      "runs it)", pool, region, s->host, lim);
		return -ENOTSUP;
	}
	client_seterr(s, "pool '%s' in region '%s': cannot connect the rdma "
		      "data plane to %s: %s", pool, region, s->host, why);
	return ret;
}
