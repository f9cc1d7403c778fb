/* SPDX-License-Identifier: BSD-3-Clause */
/* sock.h -- the daemon's TCP: listening sockets, peers, ERROR replies */
#ifndef RPMEMD_SOCK_H
#define RPMEMD_SOCK_H

#include <stddef.h>
#include <stdint.h>

/* rpmemd_listen -- bound, listening, close-on-exec socket on addr:port */
int rpmemd_listen(const char *addr, const char *port, int *fd);

/* rpmemd_peer_name -- "addr:port" of the socket's peer into buf */
void rpmemd_peer_name(int fd, char *buf, size_t len);
/*
 * rpmemd_is_loopback -- addr (numeric, or a name such as localhost) gives
 * loopback addresses only (127/8, ::1): a name is resolved, and one that
 * does not resolve is not loopback
 */
int rpmemd_is_loopback(const char *addr);

/* rpmemd_send_error -- an ERROR reply with code and printf-style message */
struct rpmem_conn;
int rpmemd_send_error(struct rpmem_conn *c, uint32_t id, uint32_t code,
		      const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/*
 * rpmemd_refuse -- tell a peer we are closing its connection on us (a
 * limit, a timeout) without blocking for long: an ERROR with request id 0
 * if the socket takes it at once (over TLS once the handshake is done; on
 * a TLS daemon's connection, never in plaintext before that: the client
 * would take it for a target that does not speak TLS), then the write
 * side shut down and what the peer sent already drained (so that the
 * close sends FIN, not RST, and the peer can read the ERROR). The caller
 * closes the connection.
 */
void rpmemd_refuse(struct rpmem_conn *c, int tls_daemon, uint32_t code,
		   const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/*
 * rpmemd_drain -- after a refusal was sent: shut the write side down and
 * drain what the peer sends, so that closing sends FIN, not RST, and the
 * refusal is not destroyed before the peer read it. wait_ms 0: only what
 * has arrived, never blocking (the accept loop); else until the peer
 * closes, for up to wait_ms (a session's own thread, which may wait for a
 * TLS alert to be read), sleeping while nothing arrives
 */
void rpmemd_drain(struct rpmem_conn *c, unsigned wait_ms);

#endif
