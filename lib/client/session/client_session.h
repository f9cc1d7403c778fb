/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * client_session.h -- the session layer of librpmemctl
 * (lib/client/session/): a control connection to rpmemd, its framed
 * channel, credentials, log and errors. It sees only base/ below it; the
 * layers above learn of its end through close hooks.
 */
#ifndef RPMEM_CLIENT_SESSION_H
#define RPMEM_CLIENT_SESSION_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "client_base.h"
#include "librpmemctl.h"
#include "log.h"
#include "net.h"
#include "proto.h"
#include "tls.h"

/* control-socket timeouts */
#define CLIENT_CONNECT_TIMEOUT_MS 10000
#define CLIENT_IO_TIMEOUT_S 60
/*
 * the CLOSE after the pool's data plane broke (timeout or reset): the
 * control connection has probably gone the same way, so do not wait out
 * CLIENT_IO_TIMEOUT_S a second time before reporting
 */
#define CLIENT_TEARDOWN_TIMEOUT_S 5

/*
 * struct client_close_hook -- what a layer above does when a session it
 * uses closes (a pool drops its data plane and its session): fn is
 * called once, in client_session_close, after the hook was taken off the
 * session's list
 */
struct client_close_hook {
	void (*fn)(struct client_close_hook *h);
	struct client_close_hook *next;
};
/* struct rpmemctl_session_cfg -- credentials; strings owned, NULL unset */
struct rpmemctl_session_cfg {
	char *ca;
	char *cert;
	char *key;
	char *psk_file;
	char *psk_identity;
	char *tls_name; /* the name the target's certificate must carry */
	int plaintext;	/* no credentials to a non-loopback target is fine */
	char *source; /* the configuration file the entry came from */
	struct rpmem_log_sink log; /* its sessions' log; fn NULL: global */
};

/*
 * struct rpmemctl_session -- one control connection to rpmemd.
 *
 * A session and its pools are used by one thread at a time. Requests
 * and replies are strictly ordered on the socket: a request gets a fresh
 * id and its reply must carry the same id. Once the connection is lost
 * (EOF, reset, timeout, or a reply that desynchronizes the stream) `lost`
 * is set and every later call fails with -ECONNRESET.
 */
struct rpmemctl_session {
	struct rpmem_conn conn;
	struct rpmem_tls_ctx *tls_ctx; /* owned; NULL over plaintext */
	char identity[RPMEM_IDENTITY_MAX + 1]; /* we authenticated as */
	int lost;      /* 0 or the -errno that broke the connection */
	int timeout_s; /* the control socket's current send/receive bound */
	uint32_t next_id;
	uint32_t id;   /* the target's session id */
	uint32_t caps; /* RPMEM_CAP_* from HELLO_OK */
	enum rpmemctl_transport transport;
	char host[256];
	char port[16];
	char server[RPMEM_STR_MAX + 1];
	char errmsg[CLIENT_ERRMSG_MAX];
	/*
	 * An ERROR the target sent for an earlier request that expects no
	 * reply (a WRITE): returned by the next awaited reply instead.
	 */
	int pending_err;
	char pending_msg[RPMEM_MSG_MAX + 1];
	uint8_t *rbuf; /* RPMEM_MAX_PAYLOAD bytes; owned, reply payloads */
	struct client_close_hook *hooks; /* run at its close (its pools) */
	int subscribed; /* an event subscription: no other request now */
	/*
	 * the pool whose name, region and call errmsg already gives, set
	 * where the message was written (client_pool_seterr); NULL if it
	 * names none (a target's message, a session-wide failure)
	 */
	const struct rpmemctl_pool *err_pool;
	struct rpmem_log_sink log; /* from its configuration; fn NULL: global */
	/*
	 * small frames that await no reply (WRITE, BARRIER), their payloads
	 * copied into hbuf: sent in one gathered send with the next frame
	 * that awaits one (channel.c)
	 */
	struct rpmem_frame held[RPMEM_SEND_FRAMES_MAX];
	unsigned nheld;
	uint8_t *hbuf; /* CLIENT_HOLD_BYTES, allocated at the first use */
	size_t hused;
	/*
	 * replies owed to a caller that reads them later (a FLUSH sent
	 * without waiting): a read for another request that meets one keeps
	 * it here (client_owe); on a session shared by several links, a
	 * link's reply may be read by another's call
	 */
	struct client_owed *owed;
	unsigned nowed, owed_cap;
	unsigned users; /* links that share it (share.c); 0: not shared */
	/* rpmemctl_session_read_damaged: take damaged data, and tell fn */
	int read_damaged;
	rpmemctl_damaged_fn damaged_fn;
	void *damaged_arg;
};

/*
 * client_read_damaged -- a READ or READ_AT was refused (ret) as damaged
 * data: 1 if the session takes it anyway (the target's message reported:
 * send it again with RPMEM_READ_DAMAGED), else 0
 */
int client_read_damaged(struct rpmemctl_session *s, int ret);

/* a reply owed to a later read: awaited, arrived, or nobody's any more */
struct client_owed {
	uint32_t id;
	uint8_t state; /* CLIENT_OWED_* */
	int err;       /* arrived: 0 (OK) or the ERROR's -errno */
	char *msg;     /* arrived ERROR: its message (owned) */
};

#define CLIENT_OWED_AWAITED 0
#define CLIENT_OWED_ARRIVED 1
#define CLIENT_OWED_ORPHAN 2

/* client_owe -- request id's reply is read later, maybe by another call */
int client_owe(struct rpmemctl_session *s, uint32_t id);
/*
 * client_owed_take -- 1 if id's reply arrived while another call read
 * (its result in *err, an ERROR's message the session's errmsg) and is
 * forgotten now; 0 if it has not come yet
 */
int client_owed_take(struct rpmemctl_session *s, uint32_t id, int *err);
/* client_owed_arrived -- id's reply is kept, ready to take */
int client_owed_arrived(const struct rpmemctl_session *s, uint32_t id);
/* client_owed_done -- id's reply was read by its owner: forget it */
void client_owed_done(struct rpmemctl_session *s, uint32_t id);
/* client_owed_orphan -- nobody will take id's reply: drop it when it comes */
void client_owed_orphan(struct rpmemctl_session *s, uint32_t id);
/* client_owed_free -- forget every owed reply (the session's end) */
void client_owed_free(struct rpmemctl_session *s);

/* --- channel.c: framed requests and replies ---------------------------- */

/* client_set_timeout -- send/receive bound of the control socket, seconds */
int client_set_timeout(struct rpmemctl_session *s, int secs);

/*
 * client_seterr -- set the session's error message (printf style); it
 * names no pool
 */
void client_seterr(struct rpmemctl_session *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));


/*
 * client_check -- 0 if the session can send, else -ECONNRESET (the
 * connection was lost earlier) with the message kept in errmsg
 */
int client_check(struct rpmemctl_session *s);

/*
 * client_lost -- the connection broke while doing `what`: close the
 * stream for good and return the error to report (-ECONNRESET for EOF,
 * reset and broken pipe; -ETIMEDOUT; -EPROTO for a desynchronized
 * stream)
 */
int client_lost(struct rpmemctl_session *s, int err, const char *what);

/*
 * client_local_fault -- reading (or, for a pull, writing) the caller's
 * local copy faulted (guard.h: -EFAULT, its file shrank; -EHWPOISON) while
 * doing `what`: part of a frame may have gone, so the stream is closed for
 * good, and the message blames the local copy, not the network. Returns
 * err.
 */
int client_local_fault(struct rpmemctl_session *s, int err, const char *what);

/*
 * client_send_held -- send the frames held back (small WRITEs and
 * BARRIERs, which await no reply, wait for the next frame that does, to
 * go out in one gathered send with it); 0 or the -errno of a lost session
 */
int client_send_held(struct rpmemctl_session *s);
/*
 * client_send_frames -- send n (<= RPMEM_SEND_FRAMES_MAX) frames in one
 * gathered write, each with a fresh request id (into f[i].id)
 */
int client_send_frames(struct rpmemctl_session *s, struct rpmem_frame *f,
		       size_t n);

/*
 * client_send -- send one frame (header + p1 + p2 in one gathered write)
 * with a fresh request id, returned in *id (may be NULL)
 */
int client_send(struct rpmemctl_session *s, uint16_t type, const void *p1,
		size_t l1, const void *p2, size_t l2, uint32_t *id);

/*
 * client_recv_hdr -- wait for the reply to request id and check that it
 * is of type `type`. On success the payload (h->len bytes) is still
 * unread: the caller reads it with client_recv_payload or straight into
 * its own buffer. An ERROR reply is consumed, its message kept in errmsg
 * and its code returned as -errno. Anything else is a protocol error.
 */
int client_recv_hdr(struct rpmemctl_session *s, uint32_t id, uint16_t type,
		    struct rpmem_hdr *h);

/* client_recv_payload -- read h->len bytes of payload into s->rbuf */
int client_recv_payload(struct rpmemctl_session *s, const struct rpmem_hdr *h);

/*
 * client_recv -- client_recv_hdr + client_recv_payload; the payload is in
 * s->rbuf, its length in *len (may be NULL)
 */
int client_recv(struct rpmemctl_session *s, uint32_t id, uint16_t type,
		size_t *len);

/*
 * client_call -- send a request and wait for its reply of type `reply`;
 * the reply payload is in s->rbuf, its length in *len (may be NULL)
 */
int client_call(struct rpmemctl_session *s, uint16_t type, const void *req,
		size_t req_len, uint16_t reply, size_t *len);

/* client_bad_reply -- a reply payload did not decode: protocol error */
int client_bad_reply(struct rpmemctl_session *s, uint16_t type);

/* client_hook_add -- h runs when s closes (client_hook_del: not any more) */
void client_hook_add(struct rpmemctl_session *s, struct client_close_hook *h);
void client_hook_del(struct rpmemctl_session *s, struct client_close_hook *h);

/* --- sess_err.c: a call on a session ------------------------------------ */

/* client_sess_begin / client_sess_end -- bracket a call on session s */
void client_sess_begin(struct rpmemctl_session *s);
int client_sess_end(struct rpmemctl_session *s, int ret, const char *what);

/* --- logging.c ---------------------------------------------------------- */

/*
 * client_log -- a message about session s (and its pools, syncs and
 * events) to s's sink, or to the global one if s has none or is NULL
 */
void client_log(const struct rpmemctl_session *s, int prio, const char *fmt,
		...) __attribute__((format(printf, 3, 4)));

/* --- credentials.c ------------------------------------------------------ */

/*
 * client_cfg_get_str -- a string setting (a libconfig path) of the
 * user's rpmemctl.conf, else of the system's, into buf: 1 if found, 0 if
 * neither sets it, -EINVAL for a malformed file or a value not a string
 */
int client_cfg_get_str(const char *name, char *buf, size_t len);

/* client_cfg_uses_tls -- the configuration asks for TLS */
int client_cfg_uses_tls(const struct rpmemctl_session_cfg *c);
/*
 * client_tls_ctx -- the TLS context cfg describes, for host:port; why
 * not in the thread's message (rpmemctl_strerror)
 */
int client_tls_ctx(const struct rpmemctl_session_cfg *c, const char *host,
		   const char *port, struct rpmem_tls_ctx **out);

#endif
