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

/* rpmem_net_peer_loopback -- fd's peer is a loopback address (127/8, ::1) */
int rpmem_net_peer_loopback(int fd);

struct rpmem_tls; /* tls.c */

/* bytes a short plaintext read may take ahead (a 4 KiB persist fits) */
#define RPMEM_READ_AHEAD 8192

/*
 * struct rpmem_conn -- one control connection as both ends use it: the
 * socket, and the TLS session on it once one is established. Everything
 * that reads or writes frames goes through it, so plaintext and TLS are
 * the same to the layers above.
 */
struct rpmem_conn {
	int fd;
	struct rpmem_tls *tls; /* NULL: plaintext; owned (rpmem_conn_close) */
	/*
	 * reads fail with -ETIMEDOUT once CLOCK_MONOTONIC passes this (0:
	 * only the socket's own SO_RCVTIMEO bounds them)
	 */
	uint64_t deadline_ns;
	int rcvtimeo_ms; /* the socket's SO_RCVTIMEO outside deadlines */
	int armed_ms;	 /* the SO_RCVTIMEO set on the socket now */
	/*
	 * read-ahead (plaintext only): a short read takes whatever the
	 * socket holds, up to RPMEM_READ_AHEAD bytes, so that a small frame,
	 * or a WRITE and the FLUSH behind it, cost one recv, not one per
	 * header and payload; ra[ra_pos, ra_len) is not consumed yet
	 */
	uint32_t ra_pos;
	uint32_t ra_len;
	/*
	 * more: set by the sender around frames that await no reply (a
	 * WRITE, a BARRIER): they are held in the socket (MSG_MORE; over
	 * TLS TCP_CORK, corked) until a frame sent without it, which goes
	 * out with them in as few segments as fit, waking the peer once
	 */
	int more;
	int corked;
	/* the pipe of rpmem_net_read_to_file; -1 until its first use */
	int pipe_rd;
	int pipe_wr;
	size_t pipe_size;
	uint8_t ra[RPMEM_READ_AHEAD]; /* last: rpmem_conn_init leaves it */
};

/* rpmem_conn_init -- a plaintext connection on fd */
void rpmem_conn_init(struct rpmem_conn *c, int fd);
/* rpmem_conn_close -- end TLS (if any) and close the socket */
void rpmem_conn_close(struct rpmem_conn *c);
/*
 * rpmem_conn_set_rcvtimeo / _sndtimeo -- bound each blocking receive or
 * send, in ms (0: none)
 */
int rpmem_conn_set_rcvtimeo(struct rpmem_conn *c, int ms);
int rpmem_conn_set_sndtimeo(struct rpmem_conn *c, int ms);
/*
 * rpmem_conn_set_deadline -- every read fails with -ETIMEDOUT after
 * CLOCK_MONOTONIC abs_ns (0: no deadline), however the bytes trickle in
 */
void rpmem_conn_set_deadline(struct rpmem_conn *c, uint64_t abs_ns);

/*
 * rpmem_conn_wait -- whether a read would find data (or the end of the
 * connection) within ms: 1, or 0 if nothing came. Data already buffered
 * (read-ahead, TLS) answers at once.
 */
int rpmem_conn_wait(struct rpmem_conn *c, int ms);
/*
 * rpmem_conn_ready -- rpmem_conn_wait(c, 0) in one system call where
 * the answer is yes: a plaintext connection with nothing read ahead
 * reads what the socket holds into its read-ahead at once (a poll and
 * then the read would take two); over TLS a poll
 */
int rpmem_conn_ready(struct rpmem_conn *c);
/*
 * rpmem_conn_wait_or -- rpmem_conn_wait that also ends when wake_fd (an
 * eventfd or a pipe; -1: none) is readable: 2 then, else as
 * rpmem_conn_wait
 */
int rpmem_conn_wait_or(struct rpmem_conn *c, int wake_fd, int ms);
/*
 * rpmem_conn_close_notify -- over TLS, end the session cleanly: a
 * close_notify after what was sent (best effort, nothing awaited); nothing
 * for plaintext
 */
void rpmem_conn_close_notify(struct rpmem_conn *c);
/*
 * rpmem_conn_trim -- give back the TLS buffers of an idle connection
 * (rpmem_tls_trim); nothing for plaintext
 */
void rpmem_conn_trim(struct rpmem_conn *c);

/* full-length I/O; EOF is -ECONNRESET; EINTR is retried */
int rpmem_net_read_full(struct rpmem_conn *c, void *buf, size_t len);
int rpmem_net_write_full(struct rpmem_conn *c, const void *buf, size_t len);
/* rpmem_net_discard -- read and drop len bytes */
int rpmem_net_discard(struct rpmem_conn *c, size_t len);
/*
 * rpmem_net_read_to_file -- the next len bytes of the stream into file fd
 * at offset off with the file's write path, not a mapping of it: over
 * plaintext spliced (socket -> pipe -> file, no copy in user space),
 * over TLS or into a file that takes no splice through a buffer and
 * pwrite. Returns 0 once all len bytes are off the stream, with *ferr 0
 * or the -errno of the first failed write to the file (the bytes from
 * there on are dropped; a short write is -EIO); or the -errno of the
 * connection (then the stream is out of step).
 */
int rpmem_net_read_to_file(struct rpmem_conn *c, int fd, uint64_t off,
			   size_t len, int *ferr);

/*
 * rpmem_send_frame -- header + payload (p1, l1) + extra data (p2, l2) in
 * one gathered write; p2 may be NULL.
 */
int rpmem_send_frame(struct rpmem_conn *c, uint16_t type, uint32_t id,
		     const void *p1, size_t l1, const void *p2, size_t l2);

/* struct rpmem_frame -- one frame of rpmem_send_frames */
struct rpmem_frame {
	uint16_t type;
	uint32_t id;
	const void *p1; /* payload */
	size_t l1;
	const void *p2; /* extra data (may be NULL) */
	size_t l2;
};

/* most frames rpmem_send_frames takes at once */
#define RPMEM_SEND_FRAMES_MAX 64

/*
 * rpmem_send_frames -- n (<= RPMEM_SEND_FRAMES_MAX) frames back to back
 * in one gathered write (plaintext), so that with TCP_NODELAY they leave
 * in one segment and wake the peer once; over TLS one after the other
 */
int rpmem_send_frames(struct rpmem_conn *c, const struct rpmem_frame *f,
		      size_t n);

/* rpmem_recv_hdr -- read and check a frame header (rpmem_hdr_decode) */
int rpmem_recv_hdr(struct rpmem_conn *c, struct rpmem_hdr *h);

#endif
