/* SPDX-License-Identifier: BSD-3-Clause */
/* net.h -- TCP connections and framed message I/O shared by both ends */
#ifndef RPMEM_NET_H
#define RPMEM_NET_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "proto.h"

/*
 * rpmem_net_connect -- connect to host:port (names, IPv4, IPv6) within
 * timeout_ms; sets TCP_NODELAY and large buffers. Fills *fd. Returns 0 or
 * -errno (-ECONNREFUSED, -ETIMEDOUT, -EHOSTUNREACH, -ENOENT for an
 * unknown host name).
 */
int rpmem_net_connect(const char *host, const char *port, int timeout_ms,
		      int *fd);

/* full-length I/O; EOF is -ECONNRESET; EINTR is retried */
int rpmem_net_read_full(int fd, void *buf, size_t len);
int rpmem_net_write_full(int fd, const void *buf, size_t len);
/* rpmem_net_discard -- read and drop len bytes */
int rpmem_net_discard(int fd, size_t len);

/*
 * rpmem_send_frame -- header + payload (p1, l1) + extra data (p2, l2) in
 * one gathered write; p2 may be NULL.
 */
int rpmem_send_frame(int fd, uint16_t type, uint32_t id, const void *p1,
		     size_t l1, const void *p2, size_t l2);

/* rpmem_recv_hdr -- read and check a frame header (rpmem_hdr_decode) */
int rpmem_recv_hdr(int fd, struct rpmem_hdr *h);

#endif
