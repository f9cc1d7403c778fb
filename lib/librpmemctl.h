/* SPDX-License-Identifier: BSD-3-Clause */
/* librpmemctl.h -- initiator library for remote persistent-memory mirroring */
#ifndef LIBRPMEMCTL_H
#define LIBRPMEMCTL_H 1

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Conventions: functions return 0 on success or a negative errno value;
 * constructors fill *out only on success; destructors take a pointer to
 * the handle, accept NULL and set it to NULL. Objects are opaque.
 * Errors reported by the target are mapped to errno values and the
 * target's message is kept.
 *
 * Which error message to read: after a failed call on an object, that
 * object's: rpmemctl_session_errmsg() (calls given the session: list,
 * status, events, kick, pool create, remove and open),
 * rpmemctl_pool_errmsg() (calls on a pool; the session keeps the reason
 * too), rpmemctl_replica_errmsg(); it stays until the next call on that
 * object. rpmemctl_strerror(err): the same text for the last call this
 * thread made, whatever it was called on, and the only message of a call
 * with no object to hold one (a constructor that failed, a setter, a
 * parser); the thread's next call replaces it. rpmemctl_session_open_err()
 * and rpmemctl_replica_open_err() copy that message into a buffer: a
 * convenience, not another message.
 *
 * The library writes nothing on standard error unless RPMEM_LOG_LEVEL is
 * set; rpmemctl_log_set_fn() takes its log lines, and
 * rpmemctl_session_cfg_set_log() those of the sessions opened with a
 * configuration.
 */

struct rpmemctl_session;
struct rpmemctl_pool;
struct rpmemctl_list;
struct rpmemctl_status;
struct rpmemctl_replica;

enum rpmemctl_transport {
	RPMEMCTL_TRANSPORT_AUTO = 0,
	RPMEMCTL_TRANSPORT_TCP = 1,
	RPMEMCTL_TRANSPORT_RDMA = 2,
};

enum rpmemctl_pool_state {
	RPMEMCTL_POOL_EMPTY = 0,
	RPMEMCTL_POOL_SYNCING = 1,
	RPMEMCTL_POOL_CONSISTENT = 2,
};

/* --- sessions ------------------------------------------------------------ */

/*
 * rpmemctl_session_open -- connect to rpmemd at host:port (port NULL =
 * 7636) and complete the version handshake. transport is the data plane
 * that later pool opens request (AUTO prefers RDMA when both ends can).
 * Returns -ECONNREFUSED, -EHOSTUNREACH, -ETIMEDOUT, -EPROTO, -EACCES...
 */
int rpmemctl_session_open(const char *host, const char *port,
			  enum rpmemctl_transport transport,
			  struct rpmemctl_session **out);
/*
 * rpmemctl_session_open_err -- rpmemctl_session_open; on failure the
 * reason, naming host and port, is written to errbuf (errlen bytes, NUL
 * terminated, truncated if need be; errbuf may be NULL if errlen is 0)
 */
int rpmemctl_session_open_err(const char *host, const char *port,
			      enum rpmemctl_transport transport,
			      struct rpmemctl_session **out, char *errbuf,
			      size_t errlen);
void rpmemctl_session_close(struct rpmemctl_session **sess);

/* fn(message, arg): the target's message naming damaged ranges read */
typedef void (*rpmemctl_damaged_fn)(const char *message, void *arg);

/*
 * rpmemctl_session_read_damaged -- how reads of the session's pools
 * (pulls, exports, rpmemctl_pool_read_at) take data the target finds not
 * as its scrub record says (a target that checks: rpmemd with damage
 * tracking, over TCP): deliver 0 (the default) fails the read with
 * -EILSEQ and the target's message naming the ranges; 1 reads the data
 * as it is, fn(message, arg) called first for each request the target
 * refused (fn NULL: not reported). Since LIBRPMEMCTL_3.
 */
void rpmemctl_session_read_damaged(struct rpmemctl_session *sess,
				   int deliver, rpmemctl_damaged_fn fn,
				   void *arg);

/*
 * why the last call on the session or one of its pools failed: the
 * target's message or a local description ("" if it succeeded; once the
 * connection is lost, what broke it); never NULL
 */
const char *rpmemctl_session_errmsg(const struct rpmemctl_session *sess);
/* "rpmemd 0.1.0 host" as the target introduced itself */
const char *rpmemctl_session_server(const struct rpmemctl_session *sess);
/*
 * rpmemctl_strerror -- text for err: the message of the calling thread's
 * last library call that can fail, if that call failed with err; else a
 * generic description. Call it right after the failing call; after a
 * call on an object, the object's errmsg says the same and stays.
 */
const char *rpmemctl_strerror(int err);

/*
 * --- credentials (LIBRPMEMCTL_2) ------------------------------------------
 *
 * A session configuration says how to authenticate to a target: TLS 1.3
 * with an external pre-shared key (a PSK file as `rpmemctl psk-gen`
 * writes it, "IDENTITY:HEXKEY"), or with X.509 (the CA that signed the
 * target's certificate, and our certificate and key). Without any, the
 * session is plaintext, which rpmemd accepts on loopback only (unless it
 * sets allow_insecure_remote); a session configuration without
 * credentials reaches a target not on loopback only with
 * rpmemctl_session_cfg_set_plaintext.
 */
struct rpmemctl_session_cfg;

int rpmemctl_session_cfg_new(struct rpmemctl_session_cfg **out);
void rpmemctl_session_cfg_delete(struct rpmemctl_session_cfg **cfg);
int rpmemctl_session_cfg_set_tls_ca(struct rpmemctl_session_cfg *cfg,
				    const char *ca_file);
int rpmemctl_session_cfg_set_tls_cert(struct rpmemctl_session_cfg *cfg,
				      const char *cert_file,
				      const char *key_file);
/* identity NULL: the file's first one */
int rpmemctl_session_cfg_set_psk_file(struct rpmemctl_session_cfg *cfg,
				      const char *psk_file,
				      const char *identity);
/*
 * rpmemctl_session_cfg_set_tls_name -- the name (DNS name or IP address)
 * the target's certificate must carry, if not the host connected to
 * (NULL: that host). A session with a PSK accepts only the PSK handshake,
 * and one with certificates only a target certificate that the CA signed
 * and that carries this name.
 */
int rpmemctl_session_cfg_set_tls_name(struct rpmemctl_session_cfg *cfg,
				      const char *name);
/*
 * rpmemctl_session_cfg_set_plaintext -- allow (1) a session without
 * credentials to a target that is not on loopback; without it such a
 * session is refused (-EACCES) before anything is sent
 */
int rpmemctl_session_cfg_set_plaintext(struct rpmemctl_session_cfg *cfg,
				       int allow);
/*
 * rpmemctl_session_cfg_load -- the entry of a client configuration file
 * (rpmemctl.conf(5) format, see rpmemctl(1)) for host[:port], else its
 * "*" entry: 1 applied, 0 none matched, -ENOENT no file, -EINVAL
 */
int rpmemctl_session_cfg_load(struct rpmemctl_session_cfg *cfg,
			      const char *file, const char *host,
			      const char *port);
/*
 * rpmemctl_session_cfg_load_default -- as rpmemctl does: the user's
 * ~/.config/rpmem/rpmemctl.conf, else /etc/rpmem/rpmemctl.conf
 */
int rpmemctl_session_cfg_load_default(struct rpmemctl_session_cfg *cfg,
				      const char *host, const char *port);

/*
 * rpmemctl_client_cfg_get_int -- an integer setting NAME (a libconfig
 * path, e.g. "replicate.quorum") of the client configuration: the user's
 * rpmemctl.conf if it sets it, else the system's; the file it came from
 * into file (if not NULL). Returns 1 if found, 0 if neither sets it
 * (missing files included), -EINVAL for a malformed file or a value that
 * is not an integer (rpmemctl_strerror names the file and line).
 */
int rpmemctl_client_cfg_get_int(const char *name, long long *value,
				char *file, size_t filelen);
/*
 * rpmemctl_session_open_cfg -- rpmemctl_session_open with credentials
 * (cfg NULL: plaintext). An authentication failure is -EACCES, a target
 * that does not speak TLS -EPROTO; rpmemctl_strerror says which.
 */
int rpmemctl_session_open_cfg(const char *host, const char *port,
			      enum rpmemctl_transport transport,
			      const struct rpmemctl_session_cfg *cfg,
			      struct rpmemctl_session **out);
/* the identity the session authenticated as ("" over plaintext) */
const char *rpmemctl_session_identity(const struct rpmemctl_session *sess);

/* --- listing and status -------------------------------------------------- */

/* rpmemctl_list_get -- regions and pools (region NULL or "" = all) */
int rpmemctl_list_get(struct rpmemctl_session *sess, const char *region,
		      struct rpmemctl_list **out);
void rpmemctl_list_free(struct rpmemctl_list **list);

unsigned rpmemctl_list_region_count(const struct rpmemctl_list *l);
const char *rpmemctl_list_region_name(const struct rpmemctl_list *l, unsigned i);
const char *rpmemctl_list_region_type(const struct rpmemctl_list *l, unsigned i);
const char *rpmemctl_list_region_path(const struct rpmemctl_list *l, unsigned i);
uint64_t rpmemctl_list_region_size(const struct rpmemctl_list *l, unsigned i);
uint64_t rpmemctl_list_region_free(const struct rpmemctl_list *l, unsigned i);

unsigned rpmemctl_list_pool_count(const struct rpmemctl_list *l);
const char *rpmemctl_list_pool_region(const struct rpmemctl_list *l, unsigned i);
const char *rpmemctl_list_pool_name(const struct rpmemctl_list *l, unsigned i);
uint64_t rpmemctl_list_pool_size(const struct rpmemctl_list *l, unsigned i);
enum rpmemctl_pool_state rpmemctl_list_pool_state(const struct rpmemctl_list *l,
						  unsigned i);
uint64_t rpmemctl_list_pool_generation(const struct rpmemctl_list *l, unsigned i);
/* 36-character uuid string */
const char *rpmemctl_list_pool_uuid(const struct rpmemctl_list *l, unsigned i);
uint64_t rpmemctl_list_pool_created(const struct rpmemctl_list *l, unsigned i);
uint64_t rpmemctl_list_pool_last_sync(const struct rpmemctl_list *l, unsigned i);
const char *rpmemctl_list_pool_source(const struct rpmemctl_list *l, unsigned i);
/* the session holding the write open ("" if none) */
const char *rpmemctl_list_pool_writer(const struct rpmemctl_list *l, unsigned i);
unsigned rpmemctl_list_pool_readers(const struct rpmemctl_list *l, unsigned i);
uint64_t rpmemctl_list_pool_bytes_written(const struct rpmemctl_list *l,
					  unsigned i);
uint64_t rpmemctl_list_pool_flushes(const struct rpmemctl_list *l, unsigned i);
/*
 * an interrupted sync the target can roll back (1) or continue; the
 * generation the pool rolls back to and its undo journal's size in
 * bytes (0 for a target without undo journals). Since LIBRPMEMCTL_3.
 */
int rpmemctl_list_pool_pending(const struct rpmemctl_list *l, unsigned i);
uint64_t rpmemctl_list_pool_undo_generation(const struct rpmemctl_list *l,
					    unsigned i);
uint64_t rpmemctl_list_pool_undo_bytes(const struct rpmemctl_list *l,
				       unsigned i);
/*
 * rpmemctl_list_pool_versions, _versions_bytes -- how many point-in-time
 * versions of pool i its target keeps and the bytes their files take (0
 * for a target without versions). Since LIBRPMEMCTL_3.
 */
unsigned rpmemctl_list_pool_versions(const struct rpmemctl_list *l,
				     unsigned i);
uint64_t rpmemctl_list_pool_versions_bytes(const struct rpmemctl_list *l,
					   unsigned i);

/*
 * rpmemctl_list_pool_damaged -- the bytes of pool i's image that a scrub
 * found damaged and no sync rewrote since (0: none, or a target that
 * does not keep them). Since LIBRPMEMCTL_3.
 */
uint64_t rpmemctl_list_pool_damaged(const struct rpmemctl_list *l,
				    unsigned i);

/*
 * rpmemctl_list_pool_split_brain -- unix seconds of the last split brain
 * an initiator reported of pool i (its sync refused because both copies
 * were written since they last agreed), kept until the pool's history
 * changes (promote, demote, a sync that adopts); 0: none, or a target
 * that does not keep it. Since LIBRPMEMCTL_5.
 */
uint64_t rpmemctl_list_pool_split_brain(const struct rpmemctl_list *l,
					unsigned i);

/*
 * rpmemctl_list_pool_role, _generations -- pool i's role (enum
 * rpmemctl_role) and its generation history, newest first: up to max ids
 * into ids, the count it has returned (0 for a target without
 * histories). Since LIBRPMEMCTL_3.
 */
int rpmemctl_list_pool_role(const struct rpmemctl_list *l, unsigned i);
unsigned rpmemctl_list_pool_generations(const struct rpmemctl_list *l,
					unsigned i, uint64_t *ids,
					unsigned max);

const char *rpmemctl_pool_state_str(enum rpmemctl_pool_state s);

/*
 * A copy's disk state, as DRBD names them (docs/ARCHITECTURE.md, "Disk
 * states"). What a target alone can tell of its copy: UpToDate while a
 * live writer replicates to it (it acknowledges every drain) or when it
 * is the primary; Consistent for a complete image whose newest the
 * target cannot know (a synced copy, or a live copy whose writer is
 * gone: its crash-consistent image); Inconsistent for an empty pool or
 * one in the middle of a sync. Outdated is what a comparison of
 * histories says of a copy another copy is ahead of (the agent, the
 * replicas status of its primary). Since LIBRPMEMCTL_4.
 */
enum rpmemctl_disk_state {
	RPMEMCTL_DISK_INCONSISTENT = 0,
	RPMEMCTL_DISK_OUTDATED = 1,
	RPMEMCTL_DISK_CONSISTENT = 2,
	RPMEMCTL_DISK_UPTODATE = 3,
};

/* rpmemctl_disk_state_str -- "UpToDate", "Outdated", ... */
const char *rpmemctl_disk_state_str(int d);

/* rpmemctl_list_pool_disk_state -- pool i's disk state, as its target sees it */
int rpmemctl_list_pool_disk_state(const struct rpmemctl_list *l, unsigned i);

/*
 * rpmemctl_session_kick -- end session `id` (as rpmemctl_status_session_id
 * lists it) on the target: its socket is shut down and its pools are
 * released. Needs the administrator right on the target. Returns 0,
 * -EINVAL (no such session, or sess's own), -EACCES, -ENOTSUP (a target
 * without KICK), or another -errno (rpmemctl_session_errmsg says why).
 * Since LIBRPMEMCTL_2.
 */
int rpmemctl_session_kick(struct rpmemctl_session *sess, uint32_t id);

/*
 * --- the event stream (LIBRPMEMCTL_2) -------------------------------------
 *
 * rpmemctl_events_subscribe turns a session into a subscription to what
 * happens on the target: sessions opened and closed, pools created,
 * removed and changing state (with the generation), transfers started and
 * finished (with the bytes written), refusals at limits. An identity sees
 * the pools and transfers of the regions it may read, and the sessions
 * and refusals of its own identity (an admin: all). From then on the
 * session takes no other request (-EBUSY); close it when done.
 */
#define RPMEMCTL_EVENTS_NOW (1u << 0) /* the current state first, then a marker */

struct rpmemctl_events;
struct rpmemctl_event;

enum rpmemctl_event_type {
	RPMEMCTL_EVENT_EXISTS = 0,   /* the current state (RPMEMCTL_EVENTS_NOW) */
	RPMEMCTL_EVENT_CREATE = 1,   /* a session opened, a pool or transfer began */
	RPMEMCTL_EVENT_CHANGE = 2,   /* a pool's state changed */
	RPMEMCTL_EVENT_DESTROY = 3,  /* a session closed, a pool or transfer ended */
	RPMEMCTL_EVENT_REFUSE = 4,   /* a connection or request refused at a limit */
	RPMEMCTL_EVENT_OVERFLOW = 5, /* the subscriber fell behind: lost events */
};

enum rpmemctl_event_object {
	RPMEMCTL_EVENT_NONE = 0, /* EXISTS: end of the current state; OVERFLOW */
	RPMEMCTL_EVENT_SESSION = 1,
	RPMEMCTL_EVENT_POOL = 2,
	RPMEMCTL_EVENT_TRANSFER = 3,
	RPMEMCTL_EVENT_CONNECTION = 4, /* REFUSE */
};

/*
 * rpmemctl_events_subscribe -- subscribe sess (flags: RPMEMCTL_EVENTS_*);
 * fills *out. -ENOTSUP from a target without events, -EACCES, -errno.
 */
int rpmemctl_events_subscribe(struct rpmemctl_session *sess, unsigned flags,
			      struct rpmemctl_events **out);
/*
 * rpmemctl_events_next -- wait up to timeout_ms (< 0: for ever) for the
 * next event: 0 with *out (valid until the next call on ev), -ETIMEDOUT
 * if none came (ev stays usable), or the -errno that ended the
 * subscription (rpmemctl_session_errmsg says why)
 */
int rpmemctl_events_next(struct rpmemctl_events *ev, int timeout_ms,
			 const struct rpmemctl_event **out);
/* rpmemctl_events_delete -- forget the subscription; NULL is fine */
void rpmemctl_events_delete(struct rpmemctl_events **ev);

enum rpmemctl_event_type rpmemctl_event_type(const struct rpmemctl_event *e);
enum rpmemctl_event_object
rpmemctl_event_object(const struct rpmemctl_event *e);
/* "exists", "create", "change", "destroy", "refuse", "overflow" */
const char *rpmemctl_event_type_str(enum rpmemctl_event_type t);
/* "-", "session", "pool", "transfer", "connection" */
const char *rpmemctl_event_object_str(enum rpmemctl_event_object o);
/* when it happened on the target: unix milliseconds */
uint64_t rpmemctl_event_time_ms(const struct rpmemctl_event *e);
/* the session it concerns or that did it (0: none) */
uint32_t rpmemctl_event_session_id(const struct rpmemctl_event *e);
/* a pool's or a transfer's region and pool ("" otherwise) */
const char *rpmemctl_event_region(const struct rpmemctl_event *e);
const char *rpmemctl_event_pool(const struct rpmemctl_event *e);
enum rpmemctl_pool_state rpmemctl_event_state(const struct rpmemctl_event *e);
uint64_t rpmemctl_event_generation(const struct rpmemctl_event *e);
/* a pool's size in bytes */
uint64_t rpmemctl_event_size(const struct rpmemctl_event *e);
/* a transfer's bytes written; a session's bytes written in all */
uint64_t rpmemctl_event_bytes(const struct rpmemctl_event *e);
/* OVERFLOW: how many events were lost in its place */
uint64_t rpmemctl_event_lost(const struct rpmemctl_event *e);
const char *rpmemctl_event_peer(const struct rpmemctl_event *e);
/* a session's client; an existing pool's writer */
const char *rpmemctl_event_client(const struct rpmemctl_event *e);
const char *rpmemctl_event_identity(const struct rpmemctl_event *e);
/* REFUSE: the limit's name in rpmemd.conf ("max_sessions", ...) */
const char *rpmemctl_event_limit(const struct rpmemctl_event *e);
/* why: a refusal, a session's end, a transfer's end ("consistent") */
const char *rpmemctl_event_text(const struct rpmemctl_event *e);

/* rpmemctl_status_get -- the daemon and its sessions */
int rpmemctl_status_get(struct rpmemctl_session *sess,
			struct rpmemctl_status **out);
void rpmemctl_status_free(struct rpmemctl_status **st);
const char *rpmemctl_status_server(const struct rpmemctl_status *st);
uint64_t rpmemctl_status_pid(const struct rpmemctl_status *st);
uint64_t rpmemctl_status_uptime(const struct rpmemctl_status *st);
unsigned rpmemctl_status_max_sessions(const struct rpmemctl_status *st);
int rpmemctl_status_rdma_capable(const struct rpmemctl_status *st);
unsigned rpmemctl_status_session_count(const struct rpmemctl_status *st);
unsigned rpmemctl_status_session_id(const struct rpmemctl_status *st, unsigned i);
const char *rpmemctl_status_session_peer(const struct rpmemctl_status *st,
					 unsigned i);
const char *rpmemctl_status_session_client(const struct rpmemctl_status *st,
					   unsigned i);
const char *rpmemctl_status_session_transport(const struct rpmemctl_status *st,
					      unsigned i);
/* "region/pool" opened by the session, "" if none */
const char *rpmemctl_status_session_pool(const struct rpmemctl_status *st,
					 unsigned i);
const char *rpmemctl_status_session_mode(const struct rpmemctl_status *st,
					 unsigned i);
uint64_t rpmemctl_status_session_bytes_written(const struct rpmemctl_status *st,
					       unsigned i);
uint64_t rpmemctl_status_session_bytes_read(const struct rpmemctl_status *st,
					    unsigned i);
uint64_t rpmemctl_status_session_flushes(const struct rpmemctl_status *st,
					 unsigned i);
uint64_t rpmemctl_status_session_last_flush_ns(const struct rpmemctl_status *st,
					       unsigned i);
/*
 * (LIBRPMEMCTL_2) who the session proved to be over TLS (its PSK identity
 * or certificate name; "" over plaintext), and how: "psk", "x509" or
 * "none". Both are "" from a target that does not report them. A target
 * with access rules shows a non-admin identity its own sessions only.
 */
const char *rpmemctl_status_session_identity(const struct rpmemctl_status *st,
					     unsigned i);
const char *rpmemctl_status_session_auth(const struct rpmemctl_status *st,
					 unsigned i);

/*
 * The target's active PMem namespaces (as `ndctl list -N` shows them on
 * the target; none on a machine without PMem) and the exported regions
 * that lie on each.
 */
unsigned rpmemctl_status_namespace_count(const struct rpmemctl_status *st);
/* "namespace1.0" */
const char *rpmemctl_status_namespace_name(const struct rpmemctl_status *st,
					   unsigned i);
/* the ndctl region holding it: "region1" */
const char *
rpmemctl_status_namespace_nd_region(const struct rpmemctl_status *st,
				    unsigned i);
/* "/dev/pmem0", "/dev/dax1.0"; "" if it has no device */
const char *rpmemctl_status_namespace_device(const struct rpmemctl_status *st,
					     unsigned i);
/* "fsdax", "devdax", "sector", "raw" or "unknown" */
const char *rpmemctl_status_namespace_mode(const struct rpmemctl_status *st,
					   unsigned i);
/* usable bytes */
uint64_t rpmemctl_status_namespace_size(const struct rpmemctl_status *st,
					unsigned i);
/* mapping alignment in bytes (fsdax, devdax), 0 if none */
uint64_t rpmemctl_status_namespace_align(const struct rpmemctl_status *st,
					 unsigned i);
/* NUMA node, -1 if unknown (or i out of range) */
int rpmemctl_status_namespace_numa_node(const struct rpmemctl_status *st,
					unsigned i);
/* fsdax: where the device is mounted with DAX on, "" if it is not */
const char *rpmemctl_status_namespace_mount(const struct rpmemctl_status *st,
					    unsigned i);
/* the exported regions on namespace i, and the k-th of them */
unsigned
rpmemctl_status_namespace_region_count(const struct rpmemctl_status *st,
				       unsigned i);
const char *rpmemctl_status_namespace_region(const struct rpmemctl_status *st,
					     unsigned i, unsigned k);
/* rpmemctl_status_region_namespace -- index of the namespace region lies
 * on, -1 if none */
int rpmemctl_status_region_namespace(const struct rpmemctl_status *st,
				     const char *region);

/* --- pools --------------------------------------------------------------- */

int rpmemctl_pool_create(struct rpmemctl_session *sess, const char *region,
			 const char *pool, uint64_t size);

#define RPMEMCTL_REMOVE_FORCE (1u << 0) /* even if syncing (never while open) */
int rpmemctl_pool_remove(struct rpmemctl_session *sess, const char *region,
			 const char *pool, unsigned flags);

#define RPMEMCTL_OPEN_RDONLY 0u
#define RPMEMCTL_OPEN_RDWR (1u << 0)
/*
 * rpmemctl_pool_open -- open a remote pool; one writer at a time (-EBUSY,
 * with the holder named in the session's errmsg), readers may share.
 */
int rpmemctl_pool_open(struct rpmemctl_session *sess, const char *region,
		       const char *pool, unsigned flags,
		       struct rpmemctl_pool **out);

#define RPMEMCTL_OPEN_CREATE (1u << 1) /* create a missing pool of size bytes */

/* what rpmemctl_pool_open_or_create found and did */
struct rpmemctl_open_info {
	uint64_t size;	   /* the pool's size once opened, also when refused */
	int created;	   /* this call created the pool */
	int create_failed; /* the pool was missing and creating it failed */
};

/*
 * rpmemctl_pool_open_or_create -- open a remote pool the way rpmemctl
 * does. An open refused as busy is retried for up to 2 s (a writer that
 * just died holds the pool until the target notices). With
 * RPMEMCTL_OPEN_CREATE a missing pool is created with size bytes; one
 * that another initiator created in the meantime is opened. A size other
 * than 0 is the size the pool must have: a pool of another size is
 * refused with -EINVAL and a message naming both sizes. info (may be
 * NULL) is filled on success and on failure.
 */
int rpmemctl_pool_open_or_create(struct rpmemctl_session *sess,
				 const char *region, const char *pool,
				 uint64_t size, unsigned flags,
				 struct rpmemctl_pool **out,
				 struct rpmemctl_open_info *info);
/* rpmemctl_pool_close -- close; pending writes are not flushed */
int rpmemctl_pool_close(struct rpmemctl_pool **pool);

/*
 * rpmemctl_pool_errmsg -- why the last failed call on the pool failed,
 * naming the pool ("" after a call that succeeded); never NULL
 */
const char *rpmemctl_pool_errmsg(const struct rpmemctl_pool *pool);

uint64_t rpmemctl_pool_get_size(const struct rpmemctl_pool *pool);
enum rpmemctl_pool_state rpmemctl_pool_get_state(const struct rpmemctl_pool *pool);
uint64_t rpmemctl_pool_get_generation(const struct rpmemctl_pool *pool);
/* the data plane in use: "tcp" or "rdma" */
const char *rpmemctl_pool_get_transport(const struct rpmemctl_pool *pool);

/*
 * rpmemctl_pool_attach -- tell the data plane where the local copy of the
 * pool is mapped, so writes from it and reads into it avoid copies
 * (RDMA registers it). Optional.
 */
int rpmemctl_pool_attach(struct rpmemctl_pool *pool, void *base, size_t len);

/*
 * rpmemctl_pool_write -- start writing len bytes at offset; returns once
 * the source buffer may be reused. Many writes may be in flight; an error
 * is reported by this call or by the next flush. Not persistent until
 * rpmemctl_pool_flush returns 0.
 */
int rpmemctl_pool_write(struct rpmemctl_pool *pool, const void *src,
			uint64_t offset, size_t len);
int rpmemctl_pool_read(struct rpmemctl_pool *pool, void *dst, uint64_t offset,
		       size_t len);
/*
 * rpmemctl_pool_barrier -- (LIBRPMEMCTL_3) the target persists
 * [offset, offset + len) before it applies any later write of this
 * session, and the call returns without waiting for it: an ordered
 * barrier. A failure is reported by the next rpmemctl_pool_flush. A
 * target or data plane without barriers (RDMA with GPSPM, or a write
 * of over 64 KiB still in flight with APM) gets a flush instead, which
 * waits.
 */
int rpmemctl_pool_barrier(struct rpmemctl_pool *pool, uint64_t offset,
			  uint64_t len);
/* rpmemctl_pool_flush -- every write so far is persistent on the target */
int rpmemctl_pool_flush(struct rpmemctl_pool *pool, uint64_t offset,
			uint64_t len);
/* rpmemctl_pool_persist -- write + flush */
int rpmemctl_pool_persist(struct rpmemctl_pool *pool, const void *src,
			  uint64_t offset, size_t len);
/* rpmemctl_pool_hash -- XXH3-64 of count blocks of block_size from offset */
int rpmemctl_pool_hash(struct rpmemctl_pool *pool, uint64_t offset,
		       uint32_t block_size, uint32_t count, uint64_t *hashes);
/*
 * rpmemctl_pool_set_state -- syncing, or consistent (generation + 1, as
 * the target reports it)
 */
int rpmemctl_pool_set_state(struct rpmemctl_pool *pool,
			    enum rpmemctl_pool_state state, const char *source);

/*
 * rpmemctl_pool_rollback -- undo an interrupted sync: the target restores
 * the previous image from the pool's undo journal and marks the pool
 * consistent at the generation it had before that sync
 * (rpmemctl_pool_get_generation). The pool must be open for writing.
 * Returns 0, -EINVAL (no interrupted sync to roll back: the message says
 * the pool's state), -ENOTSUP (a target without undo journals), -EROFS,
 * or another -errno. Since LIBRPMEMCTL_3.
 */
int rpmemctl_pool_rollback(struct rpmemctl_pool *pool);

/* --- sync and verify ----------------------------------------------------- */

enum rpmemctl_sync_mode {
	RPMEMCTL_SYNC_PUSH = 0,   /* local -> remote, only differing blocks */
	RPMEMCTL_SYNC_PULL = 1,   /* remote -> local */
	RPMEMCTL_SYNC_VERIFY = 2, /* compare only */
	RPMEMCTL_SYNC_MIRROR = 3, /* local -> remote, every byte, no hashing */
};

#define RPMEMCTL_SYNC_DRY_RUN (1u << 0) /* compare, report, move nothing */
/*
 * the target hashes every block from its data, not from its cache of
 * block hashes (a target with RPMEM_CAP_HASH_CACHE; others always do)
 */
#define RPMEMCTL_SYNC_FULL (1u << 1)

/* sync block sizes: a power of two from MIN to MAX; 0 = DEFAULT */
#define RPMEMCTL_BLOCK_SIZE_DEFAULT (64u << 10)
#define RPMEMCTL_BLOCK_SIZE_MIN (4u << 10)
#define RPMEMCTL_BLOCK_SIZE_MAX (64u << 20)

/* called at most a few times a second with bytes done out of total */
typedef void (*rpmemctl_progress_fn)(uint64_t done, uint64_t total, void *arg);
/*
 * called for each differing range found (verify, dry runs), in offset
 * order, adjacent ones merged
 */
typedef void (*rpmemctl_range_fn)(uint64_t offset, uint64_t len, void *arg);

/*
 * Since LIBRPMEMCTL_2 a sync is configured by a struct rpmemctl_sync_cfg
 * and reports into a struct rpmemctl_sync_result, both opaque: the
 * library may add settings and counters without breaking a program built
 * against an older header.
 */
struct rpmemctl_sync_cfg;
struct rpmemctl_sync_result;

/*
 * rpmemctl_sync_cfg_new -- a configuration with the defaults: push, no
 * flags, 64 KiB blocks, no source, no callbacks
 */
int rpmemctl_sync_cfg_new(struct rpmemctl_sync_cfg **out);
void rpmemctl_sync_cfg_delete(struct rpmemctl_sync_cfg **cfg);
/* the setters return 0, or -EINVAL for a value the sync would refuse */
int rpmemctl_sync_cfg_set_mode(struct rpmemctl_sync_cfg *cfg,
			       enum rpmemctl_sync_mode mode);
/* RPMEMCTL_SYNC_* */
int rpmemctl_sync_cfg_set_flags(struct rpmemctl_sync_cfg *cfg,
				unsigned flags);
/* a power of two from 4 KiB to 64 MiB; 0 = 64 KiB */
int rpmemctl_sync_cfg_set_block_size(struct rpmemctl_sync_cfg *cfg,
				     uint32_t block_size);
/* recorded in the target's metadata; copied (NULL = keep the target's) */
int rpmemctl_sync_cfg_set_source(struct rpmemctl_sync_cfg *cfg,
				 const char *source);
/* fn (NULL = none) gets arg */
int rpmemctl_sync_cfg_set_progress(struct rpmemctl_sync_cfg *cfg,
				   rpmemctl_progress_fn fn, void *arg);
int rpmemctl_sync_cfg_set_range(struct rpmemctl_sync_cfg *cfg,
				rpmemctl_range_fn fn, void *arg);
/*
 * the open file behind the local copy (-1 = none, the default): a regular
 * file whose size, mtime or ctime changed while the sync ran fails it
 * with -ESTALE, and a push or mirror then leaves the pool syncing
 */
int rpmemctl_sync_cfg_set_local_fd(struct rpmemctl_sync_cfg *cfg, int fd);
/*
 * Local hashes shared by syncs of one local file to several targets
 * (LIBRPMEMCTL_3): the first sync given h (and the local file, with
 * rpmemctl_sync_cfg_set_local_fd) hashes the file and keeps the result
 * in h; the others, in parallel or later, copy it instead of reading and
 * hashing the file again, as long as the file is as it was (device,
 * inode, size, mtime, ctime when each sync began) and the block size and
 * hash kind are the same. h is thread-safe and must outlive the syncs.
 */
struct rpmemctl_local_hashes;
int rpmemctl_local_hashes_new(struct rpmemctl_local_hashes **out);
void rpmemctl_local_hashes_delete(struct rpmemctl_local_hashes **h);
/* rpmemctl_local_hashes_computed -- how many times h's file was hashed */
unsigned rpmemctl_local_hashes_computed(const struct rpmemctl_local_hashes *h);
int rpmemctl_sync_cfg_set_local_hashes(struct rpmemctl_sync_cfg *cfg,
				       struct rpmemctl_local_hashes *h);

/*
 * rpmemctl_sync_cfg_set_commit -- (LIBRPMEMCTL_3) a pull calls fn(arg)
 * once every differing range is in the local copy and the local file was
 * found unchanged, before it records the file's generation history: fn
 * makes the copy durable and may rename it into place (the history then
 * describes the file renamed). fn's -errno fails the pull. NULL: none.
 */
int rpmemctl_sync_cfg_set_commit(struct rpmemctl_sync_cfg *cfg,
				 int (*fn)(void *arg), void *arg);

/*
 * rpmemctl_sync_cfg_set_bwlimit -- move pool data (push, mirror, pull) at
 * most bytes_per_s on average (0: no limit; else at least 4096)
 */
int rpmemctl_sync_cfg_set_bwlimit(struct rpmemctl_sync_cfg *cfg,
				  uint64_t bytes_per_s);

/* rpmemctl_sync_result_new -- an empty result (every counter 0) */
int rpmemctl_sync_result_new(struct rpmemctl_sync_result **out);
void rpmemctl_sync_result_delete(struct rpmemctl_sync_result **res);
/* bytes compared */
uint64_t rpmemctl_sync_result_get_size(const struct rpmemctl_sync_result *res);
uint64_t
rpmemctl_sync_result_get_block_size(const struct rpmemctl_sync_result *res);
uint64_t
rpmemctl_sync_result_get_blocks_total(const struct rpmemctl_sync_result *res);
/* coarse blocks that differed */
uint64_t
rpmemctl_sync_result_get_blocks_differ(const struct rpmemctl_sync_result *res);
/*
 * coarse blocks whose hashes were compared: all of them, or for a push
 * that a sample of them showed dense only the sample (the others were
 * sent whole and count as differing); 0 for a mirror or a push that sent
 * only its dirty log's extents
 */
uint64_t rpmemctl_sync_result_get_blocks_compared(
	const struct rpmemctl_sync_result *res);
/* bytes in differing fine blocks */
uint64_t
rpmemctl_sync_result_get_bytes_differ(const struct rpmemctl_sync_result *res);
/* payload bytes moved (data + hashes) */
uint64_t rpmemctl_sync_result_get_bytes_transferred(
	const struct rpmemctl_sync_result *res);
/* payload bytes of pool data moved */
uint64_t
rpmemctl_sync_result_get_data_bytes(const struct rpmemctl_sync_result *res);
/* pool generation afterwards */
uint64_t
rpmemctl_sync_result_get_generation(const struct rpmemctl_sync_result *res);
uint64_t
rpmemctl_sync_result_get_elapsed_ns(const struct rpmemctl_sync_result *res);

/*
 * --- dirty logs (LIBRPMEMCTL_2) -------------------------------------------
 *
 * A dirty log is a small file beside a local pool (rpmemctl uses
 * POOL.rpmemlog) recording which extents of the pool were written since
 * the remote pool was last known equal to it, relative to that pool's
 * uuid and generation. Marking an extent persists the mark before
 * returning, once per extent until the log is cleared. Given to a push
 * (rpmemctl_sync_cfg_set_dirty_log), it lets the push send only the
 * marked extents, without hashing, when the remote pool is still the one
 * and the generation the log is relative to (and, if it is syncing, was
 * last marked so by this source); otherwise the push compares everything
 * as usual. Either way, a push that succeeds binds the log to the pool's
 * new generation and clears it. A verify ignores it.
 */
struct rpmemctl_dirtylog;

#define RPMEMCTL_DIRTYLOG_EXTENT_DEFAULT (1u << 20)

/*
 * rpmemctl_dirtylog_open -- open the log at path (created, bound to
 * nothing, if missing) for a pool of pool_size bytes in extents of
 * extent_size (0 = 1 MiB; a power of two from 4 KiB to 1 GiB). A log
 * made for another size is refused with -EINVAL.
 */
int rpmemctl_dirtylog_open(const char *path, uint64_t pool_size,
			   uint32_t extent_size,
			   struct rpmemctl_dirtylog **out);
/* an existing log that cannot be used is replaced by a new one */
#define RPMEMCTL_DIRTYLOG_REPLACE 1u
/*
 * rpmemctl_dirtylog_open_pool -- the same for the pool file open at
 * pool_fd. A log is opened without following a symbolic link and trusted
 * only if it is a regular file with one link, owned by the pool file's
 * owner and writable by no group or others that cannot write the pool
 * file (rpmemctl_dirtylog_open: by the caller, writable by no one else).
 * A log it may not trust is -ELOOP (a link) or -EPERM, one for another
 * size or version -EINVAL; with RPMEMCTL_DIRTYLOG_REPLACE in flags such a
 * log, or one without the clean mark, is replaced by a new one bound to
 * nothing instead.
 */
int rpmemctl_dirtylog_open_pool(const char *path, int pool_fd,
				uint64_t pool_size, uint32_t extent_size,
				unsigned flags, struct rpmemctl_dirtylog **out);
/*
 * rpmemctl_dirtylog_set_clean -- set (clean != 0) or clear the log's
 * clean mark, persistently. A new log has it. A push uses a log without
 * it only through the handle that cleared it: a writer that cannot
 * vouch for every change through a crash clears it at its start and
 * sets it at its clean exit, so a crash means a full comparison.
 */
int rpmemctl_dirtylog_set_clean(struct rpmemctl_dirtylog *log, int clean);
void rpmemctl_dirtylog_close(struct rpmemctl_dirtylog **log);
/*
 * rpmemctl_dirtylog_mark -- mark the extents of [offset, offset + len);
 * they are persistently marked when it returns 0. Call it before the
 * data can become persistent locally. Thread-safe; an extent already
 * marked costs no I/O.
 */
int rpmemctl_dirtylog_mark(struct rpmemctl_dirtylog *log, uint64_t offset,
			   uint64_t len);
/* rpmemctl_dirtylog_count -- the extents marked */
uint64_t rpmemctl_dirtylog_count(const struct rpmemctl_dirtylog *log);
/*
 * rpmemctl_sync_cfg_set_dirty_log -- a push consults and then clears log
 * (NULL = none; not owned: it must outlive the sync)
 */
int rpmemctl_sync_cfg_set_dirty_log(struct rpmemctl_sync_cfg *cfg,
				    struct rpmemctl_dirtylog *log);
/* a push with a dirty log sent only its marked extents: 1, else 0 */
int rpmemctl_sync_result_get_dirty_only(
	const struct rpmemctl_sync_result *res);
/*
 * why a push with a dirty log compared everything instead ("" if it did
 * not, or had no log); valid as long as res
 */
const char *rpmemctl_sync_result_get_dirty_fallback(
	const struct rpmemctl_sync_result *res);
/*
 * what the target did beyond the sync that its user must hear, one line
 * each ("" if nothing): the versions it pruned for space ("version 3 of
 * pool 'db' pruned (quota)"; see rpmemd.conf(5), versions_quota,
 * versions_full); valid as long as res
 */
const char *rpmemctl_sync_result_get_note(
	const struct rpmemctl_sync_result *res);

/*
 * rpmemctl_pool_sync2 -- bring the remote pool (push, mirror) or the local
 * buffer (pull) up to date, or compare them (verify), as cfg says. local
 * must be exactly rpmemctl_pool_get_size() bytes. Push and mirror mark
 * the pool syncing before the first byte and consistent after the final
 * flush. res (may be NULL) is filled, also after an error during the sync
 * (not when the call fails before it starts). Returns 0, or 1 for
 * verify/dry run when differences were found.
 */
int rpmemctl_pool_sync2(struct rpmemctl_pool *pool, void *local, size_t len,
			const struct rpmemctl_sync_cfg *cfg,
			struct rpmemctl_sync_result *res);

/*
 * Deprecated (LIBRPMEMCTL_1): rpmemctl_pool_sync with caller-allocated
 * structs. It still works as released; new code uses rpmemctl_pool_sync2.
 * The two structs are frozen: LIBRPMEMCTL_1. They never grow; the library
 * reads and writes exactly these fields.
 */
struct rpmemctl_sync_stats { /* frozen: LIBRPMEMCTL_1 */
	uint64_t size;             /* bytes compared */
	uint64_t block_size;
	uint64_t blocks_total;
	uint64_t blocks_differ;    /* coarse blocks that differed */
	uint64_t bytes_differ;     /* bytes in differing fine blocks */
	uint64_t bytes_transferred; /* payload bytes moved (data + hashes) */
	uint64_t data_bytes;       /* payload bytes of pool data moved */
	uint64_t generation;       /* pool generation afterwards */
	uint64_t elapsed_ns;
};

struct rpmemctl_sync_opts { /* frozen: LIBRPMEMCTL_1 */
	enum rpmemctl_sync_mode mode;
	unsigned flags;          /* RPMEMCTL_SYNC_* */
	uint32_t block_size;     /* RPMEMCTL_BLOCK_SIZE_*; 0 = the default */
	const char *source;      /* recorded in the target's metadata */
	rpmemctl_progress_fn progress;
	rpmemctl_range_fn range;
	void *arg;               /* given to both progress and range */
};

/*
 * rpmemctl_pool_sync -- deprecated: rpmemctl_pool_sync2 with the settings
 * of opts and the counters copied into stats (may be NULL)
 */
int rpmemctl_pool_sync(struct rpmemctl_pool *pool, void *local, size_t len,
		       const struct rpmemctl_sync_opts *opts,
		       struct rpmemctl_sync_stats *stats);

/*
 * --- scrub (LIBRPMEMCTL_3) ------------------------------------------------
 *
 * rpmemctl_pool_scrub has the target re-read the whole pool (opened
 * read-only will do) and compare every 4 KiB piece with the hash it
 * recorded when the pool last went consistent, as `zpool scrub` does. It
 * repairs nothing. The pool is checked in requests of 64 MiB, so the
 * target keeps serving others meanwhile. Pieces it cannot vouch for are
 * unverified, with the reason: a pool that is not consistent or open for
 * writing, no record (a pool last committed by an older rpmemd, or on a
 * devdax region), a sync during the scrub. The target must advertise
 * RPMEM_CAP_SCRUB (else -ENOTSUP).
 */
enum rpmemctl_scrub_status {
	RPMEMCTL_SCRUB_OK = 0,	       /* the bytes hash as recorded */
	RPMEMCTL_SCRUB_DAMAGED = 1,    /* they do not, or cannot be read */
	RPMEMCTL_SCRUB_UNVERIFIED = 2, /* nothing to compare them with */
};

/*
 * called for every range of the pool in offset order, adjacent pieces of
 * the same status (and reason) merged; why says why a range is
 * unverified ("" otherwise)
 */
typedef void (*rpmemctl_scrub_fn)(uint64_t offset, uint64_t len,
				  enum rpmemctl_scrub_status status,
				  const char *why, void *arg);

/*
 * rpmemctl_pool_scrub -- scrub the pool (flags: 0); fn and progress (may
 * be NULL) get arg. Returns 0 if every byte was verified and matches, 1
 * if a range is damaged, 2 if none is but some could not be verified, or
 * -errno.
 */
int rpmemctl_pool_scrub(struct rpmemctl_pool *pool, unsigned flags,
			rpmemctl_scrub_fn fn, rpmemctl_progress_fn progress,
			void *arg);

/*
 * rpmemctl_pool_repair -- rewrite len bytes at offset of the pool (opened
 * read-write; whole 4 KiB pieces, the pool's last one may be short) with
 * data, in place, which the target accepts only if every piece hashes as
 * the scrub record of the pool's generation says: the pool's data as it
 * was committed, taken from another copy (scrub --repair). The pool stays
 * consistent at its generation and the pieces leave its damaged list.
 * 0, -EILSEQ (a piece does not hash so: nothing of that request written),
 * -EINVAL (not consistent, no record, not whole pieces), -ENOTSUP (an
 * older target), or another -errno. Since LIBRPMEMCTL_3.
 */
int rpmemctl_pool_repair(struct rpmemctl_pool *pool, uint64_t offset,
			 const void *data, size_t len);

/*
 * rpmemctl_pool_repair_at -- as rpmemctl_pool_repair, for the kept
 * version of the given generation (rpmemctl_pool_versions): data is that
 * version's image at offset (a multiple of 4 KiB), from another copy.
 * The target rewrites, in place, the blocks a restore of the version
 * reads from records of its version files whose data does not check,
 * each only if its record then checks (or the block hashes as that
 * version's scrub record says); blocks whose records check, and those
 * no version file holds (the pool's: rpmemctl_pool_repair), are left
 * alone. With len 0 and offset 0 the target mends the version's header
 * instead, if it does not check and can be rebuilt from what the target
 * knows to match its own check (-EILSEQ if not: nothing written). 0
 * (also when nothing needed it), -EILSEQ (data a record does not vouch
 * for: nothing of that request written), -ENOENT (no such version), -EIO
 * (a damaged version whose records cannot all be found), -ENOTSUP (an
 * older target), or another -errno. Since LIBRPMEMCTL_3.
 */
int rpmemctl_pool_repair_at(struct rpmemctl_pool *pool, uint64_t version,
			    uint64_t offset, const void *data, size_t len);

/*
 * --- versions (LIBRPMEMCTL_3) ---------------------------------------------
 *
 * A target whose region keeps versions (rpmemd.conf(5), versions) keeps
 * the image a sync replaced as a point-in-time version, named by the
 * generation it had: the blocks that sync overwrote (a reverse delta).
 * The target must advertise RPMEM_CAP_VERSIONS (else -ENOTSUP). Listing,
 * reading and scrubbing need the pool opened (read-only will do; the read
 * right); pruning needs it opened read-write (the write right). The
 * image's hash is XXH3-64 of the sequence of its 4 KiB pieces' hashes
 * (rpmemctl_hash_blocks with 4096), each as 8 bytes little endian.
 */
struct rpmemctl_version {
	uint64_t generation; /* its name: the pool's generation then */
	uint64_t time;	     /* unix seconds the image became current */
	uint64_t committed;  /* unix seconds it was kept (the next sync) */
	uint64_t size;	     /* of the image (the pool's) */
	uint64_t bytes;	     /* space its files take on the target */
	uint64_t hash;	     /* the image's hash (below); 0: unknown */
	char source[256];    /* where that image came from */
	unsigned flags;	     /* RPMEMCTL_VERSION_* */
};

/*
 * a version's flag: it is damaged on the target (its journal does not
 * read: its header, trailer or records do not check). It is kept and
 * listed, never pruned by the target's retention; restoring it, or an
 * older version through it, fails (-EIO) until it is repaired or pruned
 * by request. Its time, hash and source may be unknown (0, "").
 */
#define RPMEMCTL_VERSION_DAMAGED (1u << 0)
/*
 * a version's flag: the data of one of its records does not check on the
 * target (a flipped byte in its version file), found by
 * rpmemctl_pool_versions_check or, from a target that keeps what its
 * scrubs found, by an earlier scrub (until repaired); restores through it name the ranges (rpmemctl scrub
 * --at), rpmemctl_pool_repair_at heals it. Since LIBRPMEMCTL_3.
 */
#define RPMEMCTL_VERSION_BAD_DATA (1u << 1)

/*
 * rpmemctl_pool_versions -- the pool's versions, oldest first, into *out
 * (free it with free()) and *n; 0 or -errno
 */
int rpmemctl_pool_versions(struct rpmemctl_pool *pool,
			   struct rpmemctl_version **out, size_t *n);

/*
 * rpmemctl_pool_versions_check -- rpmemctl_pool_versions, the target
 * reading and checking every record of each version's files (what a
 * scrub of the pool costs for its versions): RPMEMCTL_VERSION_BAD_DATA
 * flags a version one of whose records does not check. -ENOTSUP for an
 * older target. Since LIBRPMEMCTL_3.
 */
int rpmemctl_pool_versions_check(struct rpmemctl_pool *pool,
				 struct rpmemctl_version **out, size_t *n);

/*
 * rpmemctl_pool_version_prune -- prune one version; the others stay
 * restorable (its blocks move into the next older one where that lacks
 * them). -ENOENT if there is none such, -EROFS without a write open.
 */
int rpmemctl_pool_version_prune(struct rpmemctl_pool *pool, uint64_t version);

/*
 * rpmemctl_pool_version_create -- cut a version of a live pool (one a
 * replica API or preload library writer holds syncing with its live
 * source): the target keeps the pool's image at its writer's next drain
 * boundary, a crash-consistent image, as version *generation (may be
 * NULL), listed and restorable once the next version is cut or the
 * writer's sync commits. The pool may be opened read-only; the write
 * right is needed. -EINVAL (not a live pool: a consistent one's image
 * becomes a version at the next sync that changes it), -ENOTSUP (written
 * over RDMA: the target cannot see those writes), -EPERM (no write
 * right).
 */
int rpmemctl_pool_version_create(struct rpmemctl_pool *pool,
				 uint64_t *generation);

/*
 * rpmemctl_pool_read_at -- len bytes at offset of version's image (the
 * pool's current generation: its image now) into dst. -ENOENT (no such
 * version), -EBUSY (the pool is syncing, or a sync committed meanwhile:
 * read again), -EIO (the version is damaged on the target).
 */
int rpmemctl_pool_read_at(struct rpmemctl_pool *pool, uint64_t version,
			  void *dst, uint64_t offset, size_t len);

/*
 * rpmemctl_versions_keep -- which of the n versions v (oldest first, as
 * rpmemctl_pool_versions gives them) a retention policy keeps: keep[i]
 * 1 or 0. policy: "last=N,hourly=N,daily=N,weekly=N,monthly=N" (any of
 * them), as rpmemd.conf(5) versions and `rpmemctl versions --keep`;
 * -EINVAL with why in err[errlen] if it does not parse
 */
int rpmemctl_versions_keep(const char *policy,
			   const struct rpmemctl_version *v, size_t n,
			   uint8_t *keep, char *err, size_t errlen);

/*
 * rpmemctl_image_hash_* -- the image hash of struct rpmemctl_version,
 * over an image fed in order to _update in pieces of multiples of 4 KiB
 * (only the last may be shorter): to check a restored version
 */
struct rpmemctl_image_hash;
int rpmemctl_image_hash_new(struct rpmemctl_image_hash **out);
void rpmemctl_image_hash_update(struct rpmemctl_image_hash *h,
				const void *buf, size_t len);
uint64_t rpmemctl_image_hash_digest(const struct rpmemctl_image_hash *h);
void rpmemctl_image_hash_delete(struct rpmemctl_image_hash **h);

/*
 * rpmemctl_pool_scrub_at -- rpmemctl_pool_scrub of a version: its image
 * restored on the target and compared with the hashes recorded when it
 * was current
 */
int rpmemctl_pool_scrub_at(struct rpmemctl_pool *pool, uint64_t version,
			   unsigned flags, rpmemctl_scrub_fn fn,
			   rpmemctl_progress_fn progress, void *arg);

/* rpmemctl_hash_blocks -- the same block hash the target computes */
void rpmemctl_hash_blocks(const void *buf, size_t len, uint32_t block_size,
			  uint64_t *hashes);

/*
 * --- roles and generation histories (LIBRPMEMCTL_3) -------------------------
 *
 * A copy's generation history (newest first) says which writes it holds:
 * a new id is put in front when the copy is promoted to primary or was
 * written since it last agreed with a target; a completed push gives the
 * target the source's history. Two histories decide which copy is newer
 * (docs/ARCHITECTURE.md, "Generation histories"). A target's pool
 * history and role are kept by rpmemd (RPMEM_CAP_GENERATIONS); a local
 * file's beside it, in FILE.rpmemgen.
 */
#define RPMEMCTL_GENERATIONS_MAX 16

enum rpmemctl_role {
	RPMEMCTL_ROLE_SECONDARY = 0, /* takes pushes */
	RPMEMCTL_ROLE_PRIMARY = 1,   /* promoted: used in place, takes none */
};

/* rpmemctl_role_str -- "secondary" or "primary" */
const char *rpmemctl_role_str(int role);

struct rpmemctl_generations {
	int role;	     /* enum rpmemctl_role (a local file: primary) */
	int state;	     /* the pool's RPMEMCTL_POOL_* (local: consistent) */
	uint64_t generation; /* the pool's generation counter (local: 0) */
	uint64_t changed;    /* unix seconds of its last write or sync */
	int rolled_back;     /* a forced promotion rolled a journal back */
	unsigned count;
	uint64_t ids[RPMEMCTL_GENERATIONS_MAX]; /* newest first */
};

/*
 * rpmemctl_pool_get_generations -- the pool's role and history;
 * -ENOTSUP from a target that keeps none
 */
int rpmemctl_pool_get_generations(struct rpmemctl_pool *pool,
				  struct rpmemctl_generations *out);

/* promote a syncing copy (an atomic sync's journal is rolled back) */
#define RPMEMCTL_PROMOTE_FORCE (1u << 0)
/*
 * rpmemctl_pool_promote -- make the copy the primary in place: a new id
 * in its history, role primary (write opens refused until demoted).
 * -EBUSY: a writer holds it, or it is syncing without the force flag;
 * out (if not NULL) gets the result
 */
int rpmemctl_pool_promote(struct rpmemctl_pool *pool, unsigned flags,
			  struct rpmemctl_generations *out);
/* rpmemctl_pool_demote -- role secondary: pushes are taken again */
int rpmemctl_pool_demote(struct rpmemctl_pool *pool,
			 struct rpmemctl_generations *out);
/*
 * rpmemctl_pool_adopt_generations -- the pool (consistent, open for
 * writing) takes count ids (1 .. RPMEMCTL_GENERATIONS_MAX, newest first)
 * as its history, as a push's target does: an import of an image whose
 * history is known (LIBRPMEMCTL_4)
 */
int rpmemctl_pool_adopt_generations(struct rpmemctl_pool *pool,
				    const uint64_t *ids, unsigned count);

/* how two histories relate (rpmemctl_generations_compare) */
enum rpmemctl_gen_cmp {
	RPMEMCTL_GEN_SAME = 0,	    /* the same newest id: the same writes */
	RPMEMCTL_GEN_AHEAD = 1,	    /* a holds b's writes and newer ones */
	RPMEMCTL_GEN_BEHIND = 2,    /* b holds a's writes and newer ones */
	RPMEMCTL_GEN_DIVERGED = 3,  /* both written since they last agreed */
	RPMEMCTL_GEN_UNRELATED = 4, /* no id in common */
	RPMEMCTL_GEN_UNKNOWN = 5,   /* a side has no history */
};
int rpmemctl_generations_compare(const struct rpmemctl_generations *a,
				 const struct rpmemctl_generations *b);
/* rpmemctl_gen_cmp_str -- "same", "ahead", "behind", "diverged", ... */
const char *rpmemctl_gen_cmp_str(int cmp);

/*
 * rpmemctl_history_read -- the local history of file (FILE.rpmemgen);
 * -ENOENT if it has none, -EBADMSG if damaged
 */
int rpmemctl_history_read(const char *file,
			  struct rpmemctl_generations *out);
/*
 * rpmemctl_history_split_brains -- how many split brains the syncs of
 * file were refused for and reported since its last completed sync (its
 * history keeps them); 0 without a history, -EBADMSG if damaged
 * (LIBRPMEMCTL_4)
 */
int rpmemctl_history_split_brains(const char *file);
/*
 * rpmemctl_history_promote -- file becomes a primary: a new id in front
 * of ids (count of them: the copy it was made from; 0: none), recorded
 * with file's current size and mtime in FILE.rpmemgen
 */
int rpmemctl_history_promote(const char *file, const uint64_t *ids,
			     unsigned count, struct rpmemctl_generations *out);

/*
 * rpmemctl_history_utime -- set file's modification time to *mtime
 * (utimensat) and keep its history current: a history that recorded the
 * file as it was records the new time, so the change does not count as a
 * write (the preload library's stamp at a clean exit)
 */
int rpmemctl_history_utime(const char *file, const struct timespec *mtime);

/*
 * rpmemctl_sync_cfg_set_history -- the sync compares file's history
 * (FILE.rpmemgen) with the target's before it moves data, refuses what
 * would lose the other side's newer writes (-EUCLEAN, the reason in the
 * session's message) unless a discard flag allows it, and records the
 * result in both (NULL = no history: as before histories). Copied.
 */
int rpmemctl_sync_cfg_set_history(struct rpmemctl_sync_cfg *cfg,
				  const char *file);
/* a push may overwrite a target that holds newer or other writes */
#define RPMEMCTL_SYNC_DISCARD_TARGET (1u << 2)
/* a pull may overwrite a local copy that holds newer or other writes */
#define RPMEMCTL_SYNC_DISCARD_LOCAL (1u << 3)
/* how the sync's histories compared (enum rpmemctl_gen_cmp) */
int rpmemctl_sync_result_get_gen_cmp(const struct rpmemctl_sync_result *res);

/* --- application replication ---------------------------------------------- */

/*
 * rpmemctl_replica_open -- map a local pool file with libpmem2 and open
 * its replica at target ("host[:port]/region/pool" or rpmem://...),
 * creating the remote pool if missing and bringing it up to date with
 * one sync. The local file's size is the pool size.
 */
int rpmemctl_replica_open(const char *path, const char *target,
			  enum rpmemctl_transport transport,
			  struct rpmemctl_replica **out);
/*
 * rpmemctl_replica_open_err -- rpmemctl_replica_open; on failure the
 * reason is written to errbuf (errlen bytes, NUL terminated)
 */
int rpmemctl_replica_open_err(const char *path, const char *target,
			      enum rpmemctl_transport transport,
			      struct rpmemctl_replica **out, char *errbuf,
			      size_t errlen);
/*
 * rpmemctl_replica_open_targets -- (LIBRPMEMCTL_3) rpmemctl_replica_open
 * over n targets (1 to 16): a persist returns once the local file and k
 * of them (k = 0: all) hold the range. A target that fails is left
 * behind (its dirty log PATH.rpmemlog.i, i > 0, keeps what it misses;
 * target 0's is PATH.rpmemlog) and retried every 5 s by the persist
 * then made, which resyncs only its logged extents; fewer than k: the
 * persist fails, and every later one. Close retries every target left
 * behind once more before it stops.
 */
int rpmemctl_replica_open_targets(const char *path,
				  const char *const *targets, unsigned n,
				  unsigned k, enum rpmemctl_transport transport,
				  struct rpmemctl_replica **out);
/*
 * rpmemctl_replica_get_links -- (LIBRPMEMCTL_3) the replica's set of
 * links, one per target in the order given, for its getters: each
 * target's state (rpmemctl_links_get, rpmemctl_link_get_state) and lag
 * (rpmemctl_links_get_lag); owned by the replica, not to be driven
 */
const struct rpmemctl_links *
rpmemctl_replica_get_links(const struct rpmemctl_replica *r);
/*
 * rpmemctl_replica_set_spin -- (LIBRPMEMCTL_3) rpmemctl_links_set_spin of
 * the replica's set: how long (us) a persist that reads the targets'
 * replies looks for them before it sleeps; 0 or -EINVAL
 */
int rpmemctl_replica_set_spin(struct rpmemctl_replica *r, unsigned us);
/* why the last replica call failed ("" if it succeeded); never NULL */
const char *rpmemctl_replica_errmsg(const struct rpmemctl_replica *r);
void *rpmemctl_replica_addr(const struct rpmemctl_replica *r);
size_t rpmemctl_replica_size(const struct rpmemctl_replica *r);
/*
 * rpmemctl_replica_persist -- make [addr, addr + len) of the mapping
 * persistent locally and on the replica: local persist, remote write and
 * flush; returns only when both are done.
 */
int rpmemctl_replica_persist(struct rpmemctl_replica *r, const void *addr,
			     size_t len);
/* rpmemctl_replica_close -- mark the replica consistent and close */
int rpmemctl_replica_close(struct rpmemctl_replica **r);

/*
 * --- replication links (LIBRPMEMCTL_3) -------------------------------------
 *
 * A link keeps one remote pool up to date with local data that lives at
 * an address the caller gives (its own mapping of a file, or an
 * application's mapping). It owns the session and the pool, and follows
 * the states below; the replica calls above, the preload library and
 * `rpmemctl sync --follow` are all built on it (librpmemctl(3), "Links").
 *
 *	DOWN --connect--> OPEN --push--> SYNCED --write--> LIVE
 *	LIVE --push or stop--> SYNCED;  stop: back to DOWN
 *	any failure: DEGRADED (policy degrade) or FAILED (policy fail-stop)
 *	DEGRADED --connect or push (or write/drain once retry is due)--> ...
 *	under a set's kick-out (rpmemctl_links_set_kickout), once a probe of
 *	the target answered: DEGRADED --write/drain--> RESYNCING (a thread
 *	of its own sends what the target missed; the pool stays syncing)
 *	--write/drain once it is done: the catch-up push--> SYNCED
 *
 * A link is used by one thread at a time. Its calls return 0 or -errno;
 * rpmemctl_link_errmsg says why the last call failed.
 */
struct rpmemctl_link;

enum rpmemctl_link_state {
	RPMEMCTL_LINK_DOWN = 0,	 /* not connected: not yet, or stopped */
	RPMEMCTL_LINK_OPEN,	 /* pool open; not known equal to the data */
	RPMEMCTL_LINK_SYNCED,	 /* pool consistent, equal as of a push */
	RPMEMCTL_LINK_LIVE,	 /* pool syncing (live): writes go to it */
	RPMEMCTL_LINK_DEGRADED,	 /* lost; the data goes on; retried later */
	RPMEMCTL_LINK_FAILED,	 /* fail-stop: only delete is left */
	/* (LIBRPMEMCTL_5) back, resynced by a thread of its own */
	RPMEMCTL_LINK_RESYNCING,
};

enum rpmemctl_link_policy {
	/* a failure ends the link: FAILED, every later call fails */
	RPMEMCTL_LINK_FAIL_STOP = 0,
	/* a failure drops the connection: DEGRADED, writes only marked */
	RPMEMCTL_LINK_DEGRADE = 1,
};

/*
 * rpmemctl_link_open_fn -- how a link connects: open a session and the
 * pool read-write; 0 or -errno (the reason in the session's errmsg or
 * the thread's rpmemctl_strerror)
 */
typedef int (*rpmemctl_link_open_fn)(void *arg,
				     struct rpmemctl_session **sess,
				     struct rpmemctl_pool **pool);
/* rpmemctl_link_notify_fn -- the link went from one state to another */
typedef void (*rpmemctl_link_notify_fn)(void *arg, struct rpmemctl_link *link,
					enum rpmemctl_link_state from,
					enum rpmemctl_link_state to);

/*
 * rpmemctl_link_new -- a link to target ("host[:port]/region/pool" or
 * rpmem://...), DOWN. By default it connects with the credentials
 * rpmemctl would use (rpmemctl_session_cfg_load_default) and opens the
 * pool read-write, creating it with the data's size if missing. target
 * may be NULL for a link that connects only through its open hook.
 */
int rpmemctl_link_new(const char *target, enum rpmemctl_transport transport,
		      struct rpmemctl_link **out);
/* rpmemctl_link_delete -- disconnect without a word and free; NULL is ok */
void rpmemctl_link_delete(struct rpmemctl_link **link);
/* rpmemctl_link_set_data -- where the local copy is: [addr, addr + len) */
int rpmemctl_link_set_data(struct rpmemctl_link *link, void *addr,
			   uint64_t len);
/*
 * rpmemctl_link_set_dirty_log -- the log marked before local writes
 * (borrowed: it must outlive the link); pushes send only its extents
 * where it may stand in for the comparison, and clear it
 */
int rpmemctl_link_set_dirty_log(struct rpmemctl_link *link,
				struct rpmemctl_dirtylog *log);
/*
 * rpmemctl_link_set_history -- pushes compare the generation history of
 * the local file (FILE.rpmemgen, rpmemctl_sync_cfg_set_history) with the
 * target's and refuse one that would lose the target's newer writes
 * (copied; NULL: none). Since LIBRPMEMCTL_3.
 */
int rpmemctl_link_set_history(struct rpmemctl_link *link, const char *file);
/*
 * rpmemctl_link_set_source -- the source recorded by pushes ("host:path")
 * and while live (live, e.g. "host:path (live)"); NULL keeps a value
 */
int rpmemctl_link_set_source(struct rpmemctl_link *link, const char *source,
			     const char *live);
/* rpmemctl_link_set_policy -- failure policy; retry_ms < 0: never retry */
int rpmemctl_link_set_policy(struct rpmemctl_link *link,
			     enum rpmemctl_link_policy policy, long retry_ms);
/* rpmemctl_link_set_open -- connect through fn instead of the default */
int rpmemctl_link_set_open(struct rpmemctl_link *link,
			   rpmemctl_link_open_fn fn, void *arg);
/* rpmemctl_link_set_notify -- call fn at every change of state */
int rpmemctl_link_set_notify(struct rpmemctl_link *link,
			     rpmemctl_link_notify_fn fn, void *arg);
/* rpmemctl_link_connect -- DOWN or DEGRADED to OPEN */
int rpmemctl_link_connect(struct rpmemctl_link *link);
/*
 * rpmemctl_link_push -- bring the pool up to date with the data (a sync;
 * cfg NULL: the link's source and dirty log; res may be NULL), connecting
 * first if need be: the pool is consistent and SYNCED. A push that read
 * the data while it changed (-ESTALE) leaves the link OPEN.
 */
int rpmemctl_link_push(struct rpmemctl_link *link,
		       const struct rpmemctl_sync_cfg *cfg,
		       struct rpmemctl_sync_result *res);
/*
 * rpmemctl_link_mark -- mark [offset, offset + len) in the dirty log
 * before it is written locally; a failed mark stops the log's use
 */
int rpmemctl_link_mark(struct rpmemctl_link *link, uint64_t offset,
		       uint64_t len);
/*
 * rpmemctl_link_write -- send [offset, offset + len) of the data (the
 * first write of a SYNCED link marks the pool syncing: LIVE); DEGRADED:
 * 0 without sending, or a reconnect and push once the retry is due
 */
int rpmemctl_link_write(struct rpmemctl_link *link, uint64_t offset,
			uint64_t len);
/*
 * rpmemctl_link_barrier -- every write so far is persisted on the target
 * before any later one, without waiting (rpmemctl_pool_barrier); the
 * next drain waits for them too
 */
int rpmemctl_link_barrier(struct rpmemctl_link *link);
/* rpmemctl_link_drain -- every write so far is persistent on the target */
int rpmemctl_link_drain(struct rpmemctl_link *link);
/*
 * rpmemctl_link_stop -- the clean end: drain; if written since the last
 * push, push comparing every block (the pool byte-identical and
 * consistent); disconnect: DOWN. DEGRADED or
 * FAILED: disconnect, the pool stays syncing for the next start.
 */
int rpmemctl_link_stop(struct rpmemctl_link *link);
enum rpmemctl_link_state
rpmemctl_link_get_state(const struct rpmemctl_link *link);
/*
 * rpmemctl_link_get_retry_ns -- DEGRADED: nanoseconds until a write or a
 * drain reconnects (0: due; UINT64_MAX: never); 0 in other states
 */
uint64_t rpmemctl_link_get_retry_ns(const struct rpmemctl_link *link);
/* the open pool (NULL unless OPEN, SYNCED or LIVE), owned by the link */
struct rpmemctl_pool *rpmemctl_link_get_pool(const struct rpmemctl_link *link);
/* the last push's result, owned by the link; NULL before one */
const struct rpmemctl_sync_result *
rpmemctl_link_get_result(const struct rpmemctl_link *link);
/* why the last call on the link failed ("" if it succeeded); never NULL */
const char *rpmemctl_link_errmsg(const struct rpmemctl_link *link);
/* rpmemctl_link_state_str -- "down", "open", "synced", "live", ... */
const char *rpmemctl_link_state_str(enum rpmemctl_link_state state);

/*
 * --- targets, sizes, names and keys as text (LIBRPMEMCTL_2) --------------
 *
 * What rpmemctl accepts on its command line, for applications and scripts
 * that take the same input: a target "[rpmem://]HOST[:PORT][/REGION[/POOL]]"
 * (HOST a name, an IPv4 address or "[IPv6]"), a size with K, M, G or T
 * (powers of 1024, a trailing "B" or "iB" allowed), an interval with ms,
 * s, m or h, a region or pool name, a PSK identity and a PSK file line.
 */
#define RPMEMCTL_DEFAULT_PORT "7636"
/* region and pool names: 1-64 of [A-Za-z0-9._-], not starting '.' or '-' */
#define RPMEMCTL_NAME_MAX 64
/* the largest pool or file size (8 EiB less one byte, as off_t) */
#define RPMEMCTL_SIZE_MAX ((uint64_t)INT64_MAX)
#define RPMEMCTL_PSK_LEN 32 /* bytes of key rpmemctl_psk_generate makes */
#define RPMEMCTL_PSK_IDENTITY_MAX 128 /* 1-128 of [A-Za-z0-9._@-] */
/* "IDENTITY:HEXKEY\n" and its NUL */
#define RPMEMCTL_PSK_LINE_MAX                                                  \
	(RPMEMCTL_PSK_IDENTITY_MAX + 1 + 2 * RPMEMCTL_PSK_LEN + 2)

struct rpmemctl_target;

#define RPMEMCTL_TARGET_NEED_REGION (1u << 0)
#define RPMEMCTL_TARGET_NEED_POOL (1u << 1) /* and a region */
#define RPMEMCTL_TARGET_NO_PATH (1u << 2)   /* HOST[:PORT] only */

/*
 * rpmemctl_target_parse -- a target string into *out; flags say what it
 * must (NEED_*) or must not (NO_PATH) name; names are checked as by
 * rpmemctl_name_check. -EINVAL with the reason,
 * naming the string, in errbuf (errlen bytes, NUL terminated; errbuf may
 * be NULL if errlen is 0), -ENOMEM.
 */
int rpmemctl_target_parse(const char *s, unsigned flags,
			  struct rpmemctl_target **out, char *errbuf,
			  size_t errlen);
void rpmemctl_target_delete(struct rpmemctl_target **t);
/* its parts, never NULL ("" for a NULL t) */
const char *rpmemctl_target_get_host(const struct rpmemctl_target *t);
/* the port given, else RPMEMCTL_DEFAULT_PORT */
const char *rpmemctl_target_get_port(const struct rpmemctl_target *t);
/* the region and pool names, "" when not given */
const char *rpmemctl_target_get_region(const struct rpmemctl_target *t);
const char *rpmemctl_target_get_pool(const struct rpmemctl_target *t);

/*
 * rpmemctl_size_parse -- "4096", "64K", "1MiB", "2G" into bytes: 0,
 * -EINVAL (empty, junk, a sign) or -ERANGE (above RPMEMCTL_SIZE_MAX)
 */
int rpmemctl_size_parse(const char *s, uint64_t *out);
/* rpmemctl_size_format -- "512 B", "64 MiB", "1.5 GiB" into buf */
const char *rpmemctl_size_format(uint64_t size, char *buf, size_t len);
/*
 * rpmemctl_interval_parse -- "500ms", "5s", "1m", "2h" (a bare number is
 * seconds) into nanoseconds: 0, -EINVAL or -ERANGE (not 1 ms to 24 h)
 */
int rpmemctl_interval_parse(const char *s, uint64_t *ns);
/* rpmemctl_name_check -- a valid region or pool name: 0, else -EINVAL */
int rpmemctl_name_check(const char *name);
/* rpmemctl_psk_identity_check -- a valid PSK identity: 0, else -EINVAL */
int rpmemctl_psk_identity_check(const char *identity);
/*
 * rpmemctl_psk_generate -- a PSK file line "IDENTITY:HEXKEY\n" with a new
 * random key of RPMEMCTL_PSK_LEN bytes into line (len bytes, at least
 * RPMEMCTL_PSK_LINE_MAX will do): 0, -EINVAL (identity), -ENOSPC (len),
 * or getrandom(2)'s error. The caller should clear line after use.
 */
int rpmemctl_psk_generate(const char *identity, char *line, size_t len);
/*
 * rpmemctl_utf8_len -- the length in bytes (1 to 4) of the well-formed
 * UTF-8 character s starts with, 0 if none (a stray continuation byte,
 * an overlong form, a surrogate, beyond U+10FFFF, a truncated one); the
 * rule by which the library's strings are made UTF-8
 */
size_t rpmemctl_utf8_len(const char *s);
/*
 * rpmemctl_utf8_control -- the length in bytes of the control character
 * the UTF-8 text s starts with, 0 if it starts with another character or
 * s is "": a C0 control or DEL, a C1 control (U+0080-U+009F), a
 * bidirectional control (U+061C, U+200E, U+200F, U+202A-U+202E,
 * U+2066-U+2069) or U+2028, U+2029
 */
size_t rpmemctl_utf8_control(const char *s);
/*
 * rpmemctl_text_escape -- s (text a target sent: a path, a source, a
 * message) as it may be shown on a terminal or in a log: a C0 control,
 * DEL or a byte outside well-formed UTF-8 as \xHH, a C1 or bidirectional
 * control as \u{HHHH}, everything else as it is (escaping twice changes
 * nothing). Writes as much as fits in out[size] (whole escapes only,
 * NUL-terminated when size > 0; out may be NULL when size is 0); returns
 * the length of the whole escaped text, as snprintf does. The library's
 * own error messages are escaped so already.
 */
size_t rpmemctl_text_escape(const char *s, char *out, size_t size);

/* --- logging ------------------------------------------------------------- */

/*
 * A log line of the library: prio is a syslog(3) priority (LOG_ERR ..
 * LOG_DEBUG), msg one line without a newline.
 */
typedef void (*rpmemctl_log_fn)(int prio, const char *msg, void *arg);
/*
 * rpmemctl_log_set_fn -- pass the library's log lines to fn; NULL = the
 * default: nothing, or standard error ("librpmemctl: <level>: <message>")
 * when RPMEM_LOG_LEVEL is set. Process-wide: call it before other threads
 * use the library. The lines about a session opened with a configuration
 * that has a log of its own (rpmemctl_session_cfg_set_log) go there
 * instead, never here.
 */
void rpmemctl_log_set_fn(rpmemctl_log_fn fn, void *arg);
/*
 * rpmemctl_log_set_priority -- the highest priority passed on (LOG_ERR ..
 * LOG_DEBUG; default LOG_WARNING, or RPMEM_LOG_LEVEL when it is set)
 */
void rpmemctl_log_set_priority(int prio);
int rpmemctl_log_get_priority(void);
/*
 * rpmemctl_log_parse_priority -- a level as RPMEM_LOG_LEVEL takes it
 * ("err", "warning", "notice", "info", "debug" or a number 0-7) as a
 * LOG_* priority; -EINVAL if it names none (LIBRPMEMCTL_2)
 */
int rpmemctl_log_parse_priority(const char *level);
/*
 * rpmemctl_session_cfg_set_log -- a log of their own for the sessions
 * opened with cfg: every line the library logs about such a session, its
 * pools, syncs and events goes to fn (with arg) if its priority is at most
 * prio (LOG_EMERG .. LOG_DEBUG), and never to the global log
 * (rpmemctl_log_set_fn, RPMEM_LOG_LEVEL, whose priority does not apply).
 * fn NULL: the global log again. 0 or -EINVAL (no cfg, prio out of
 * range). The session copies the setting when it opens. Lines about
 * nothing that has a session (a dirty log opened alone, a parser) go to
 * the global log. (LIBRPMEMCTL_3)
 */
int rpmemctl_session_cfg_set_log(struct rpmemctl_session_cfg *cfg,
				 rpmemctl_log_fn fn, void *arg, int prio);
/*
 * rpmemctl_link_set_log -- (replication links) the sessions the default open
 * makes log to fn (rpmemctl_session_cfg_set_log); NULL: the global log
 */
int rpmemctl_link_set_log(struct rpmemctl_link *link, rpmemctl_log_fn fn,
			  void *arg, int prio);
/*
 * rpmemctl_link_set_shared -- (replication links) on: the default open
 * shares one session with the process's other shared links to the same
 * host, port and transport that log alike (at most 16 pools a session:
 * a further one opens the next session); every call of such a link holds
 * a lock of that target, and a reply one link reads for another waits in
 * the session for its owner. Set before the first call that connects;
 * the pool the link opened must not be called directly (only through the
 * link). A failed write on a shared session fails every link on it (each
 * reconnects and pushes under the degrade policy). (LIBRPMEMCTL_3)
 */
int rpmemctl_link_set_shared(struct rpmemctl_link *link, int on);

/*
 * --- sets of links: several targets (LIBRPMEMCTL_3) ----------------------
 *
 * A set drives n links (at most 16) that replicate the same data, each
 * to its own target with its own dirty log (give each link a log of its
 * own and the degrade policy: a link that fails goes DEGRADED and its
 * retry resyncs only its logged extents). A write goes to every link; a
 * drain sends a FLUSH to every target first, then reads the replies as
 * they come and returns once k links hold every write so far persistent
 * (k = 0 or >= n: all), without waiting for the others, whose replies
 * are read by their next drain. Fewer than k holding: under the set's
 * fail-stop policy the call fails and so does every later one but
 * delete; under degrade it returns 0 while the links retry. Calls return
 * 0 or -errno; rpmemctl_links_errmsg names the targets that do not hold
 * and why. Use a set's links only through the set once it drains.
 */
struct rpmemctl_links;
/* rpmemctl_links_new -- an empty set; a drain returns when k links hold */
int rpmemctl_links_new(unsigned k, enum rpmemctl_link_policy policy,
		       struct rpmemctl_links **out);
/* rpmemctl_links_delete -- delete every link, then the set; NULL is ok */
void rpmemctl_links_delete(struct rpmemctl_links **set);
/* rpmemctl_links_add -- the set owns link from now on (-EINVAL: full) */
int rpmemctl_links_add(struct rpmemctl_links *set, struct rpmemctl_link *link);
unsigned rpmemctl_links_count(const struct rpmemctl_links *set);
/* rpmemctl_links_quorum -- the k in effect (n if 0 or more than n) */
unsigned rpmemctl_links_quorum(const struct rpmemctl_links *set);
/* rpmemctl_links_holding -- links SYNCED or LIVE now */
unsigned rpmemctl_links_holding(const struct rpmemctl_links *set);
/* rpmemctl_links_get -- the link i (in the order added), NULL past the end */
struct rpmemctl_link *rpmemctl_links_get(const struct rpmemctl_links *set,
					 unsigned i);
/* rpmemctl_links_push -- push every link; k must end SYNCED */
int rpmemctl_links_push(struct rpmemctl_links *set);
/* rpmemctl_links_mark -- mark every link's dirty log */
int rpmemctl_links_mark(struct rpmemctl_links *set, uint64_t offset,
			uint64_t len);
/* rpmemctl_links_write -- rpmemctl_link_write on every link */
int rpmemctl_links_write(struct rpmemctl_links *set, uint64_t offset,
			 uint64_t len);
/* rpmemctl_links_barrier -- rpmemctl_link_barrier on every link */
int rpmemctl_links_barrier(struct rpmemctl_links *set);
/* rpmemctl_links_drain -- k links hold every write so far persistent */
int rpmemctl_links_drain(struct rpmemctl_links *set);
/*
 * rpmemctl_links_drain_start -- a drain's first half: the FLUSHes sent,
 * no reply awaited; the set's next rpmemctl_links_drain (of any thread)
 * reads them. Drains of several sets overlap their round trips so.
 */
int rpmemctl_links_drain_start(struct rpmemctl_links *set);
/* rpmemctl_links_stop -- rpmemctl_link_stop on every link */
int rpmemctl_links_stop(struct rpmemctl_links *set);
/*
 * rpmemctl_links_get_lag -- link i's lag: the bytes written to the set
 * since it was last left behind (not SYNCED or LIVE) and for how long
 * (ns); both 0 while it holds. 0 or -EINVAL (no such link).
 */
int rpmemctl_links_get_lag(const struct rpmemctl_links *set, unsigned i,
			   uint64_t *bytes, uint64_t *ns);
/*
 * rpmemctl_links_set_status_file -- publish each link's state and lag to
 * path (usually the data file's path + ".rpmemstat", which `rpmemctl
 * status --replicas` reads): rewritten (tmp + rename, never synced) after
 * a call that changed a link's state, and at most once a second while a
 * link lags; NULL stops. 0 or -errno (-ENAMETOOLONG).
 */
int rpmemctl_links_set_status_file(struct rpmemctl_links *set,
				   const char *path);

/* at most so many replicas in a status file (the links of a set) */
#define RPMEMCTL_REPLICAS_MAX 16
/* one replica of a status file */
struct rpmemctl_replica_report {
	char target[512];	  /* "host:port/region/pool" */
	int state;		  /* enum rpmemctl_link_state */
	uint64_t behind_bytes;	  /* written while it did not hold */
	uint64_t behind_since_ns; /* CLOCK_REALTIME; 0: it holds */
};
/* a status file: the process that publishes it and its replicas */
struct rpmemctl_replicas_report {
	long pid;
	uint64_t updated_ns; /* CLOCK_REALTIME of the last rewrite */
	unsigned quorum, count, holding; /* k, n and links holding */
	struct rpmemctl_replica_report replica[RPMEMCTL_REPLICAS_MAX];
};
/*
 * rpmemctl_replicas_read -- the status file at path (as
 * rpmemctl_links_set_status_file writes it) into *out. 0, -errno of
 * reading it (-ENOENT: none), or -EBADMSG (torn, damaged or forged: every
 * line and field is checked, *out left zeroed) with the reason, naming
 * the line, in errbuf (errlen bytes, NUL terminated; errbuf may be NULL if
 * errlen is 0). (LIBRPMEMCTL_4)
 */
int rpmemctl_replicas_read(const char *path,
			   struct rpmemctl_replicas_report *out, char *errbuf,
			   size_t errlen);
/* the longest spin rpmemctl_links_set_spin takes (us) */
#define RPMEMCTL_SPIN_MAX_US 10000u
/*
 * rpmemctl_links_set_spin -- how long (us; 50 unless set, 0 never, at
 * most RPMEMCTL_SPIN_MAX_US) the drain that reads the targets' replies
 * looks for them without sleeping (poll with no timeout, sched_yield
 * between looks) before it sleeps in poll, when the round it waits for
 * is due by then
 * (a moving average of the set's recent rounds): a reply that comes
 * meanwhile costs no sleep and wake-up. The other drains sleep. 0 or
 * -EINVAL.
 */
int rpmemctl_links_set_spin(struct rpmemctl_links *set, unsigned us);
/* the kick-out's timeout unless set (ms), and the longest it takes */
#define RPMEMCTL_KICKOUT_MS_DEFAULT 5000u
#define RPMEMCTL_KICKOUT_MS_MAX 3600000u
/*
 * rpmemctl_links_set_kickout -- (LIBRPMEMCTL_4) where k < n, a link that
 * has not answered a FLUSH for ms (RPMEMCTL_KICKOUT_MS_DEFAULT unless
 * set; 0: never kicked out), or has more than bytes written and not
 * acknowledged (0, the default: no bound on bytes), is dropped while k
 * others hold: DEGRADED, behind (its lag in the status file), its dirty
 * log keeping what it misses. A send to it that blocks for ms (the
 * target reads nothing) drops it too. Its reconnect waits for a probe
 * (a session opened and closed by a thread of its own), so a target that
 * accepts connections but never answers costs the set's calls nothing;
 * the set's stop waits at most ms for it. A drain never waits for a link
 * beyond the k-th. 0 or -EINVAL (ms over RPMEMCTL_KICKOUT_MS_MAX).
 */
int rpmemctl_links_set_kickout(struct rpmemctl_links *set, unsigned ms,
			       uint64_t bytes);
/*
 * rpmemctl_links_fence -- (LIBRPMEMCTL_5) with a fence-peer handler
 * configured (RPMEM_FENCE_PEER_HANDLER, replicate.fence_peer_handler;
 * rpmem_preload(7)): every link that does not hold is fenced (the
 * handler waited for) and every one fenced that holds again unfenced, as
 * each drain does before its round is acknowledged; for a writer that
 * goes on while no link holds (no drain round). 0, or -ENOTRECOVERABLE
 * if a fence failed: the set fails, no write is to be acknowledged.
 */
int rpmemctl_links_fence(struct rpmemctl_links *set);
/* why the last call on the set failed ("" if it succeeded); never NULL */
const char *rpmemctl_links_errmsg(const struct rpmemctl_links *set);

/*
 * SIGBUS. The library turns a SIGBUS of its own reads and writes of a
 * file mapping (the file shrank, poisoned memory) into an error of that
 * call, with a handler it installs at its first such access and, unless
 * told otherwise, checks (a system call) at every one of them: another
 * handler may have replaced it. A SIGBUS it did not cause goes to the
 * handler the process had before.
 */
struct sigaction;
typedef int (*rpmemctl_sigaction_fn)(int sig, const struct sigaction *act,
				     struct sigaction *oldact);
/*
 * rpmemctl_sigbus_interpose -- for a process that from now on routes
 * every change of SIGBUS's action through rpmemctl_sigbus_sigaction (an
 * interposer of sigaction(2) and signal(3), as librpmem_preload): the
 * handler installed now by real (libc's sigaction, which the library
 * calls for every change of its own from then on), and never checked
 * again. 0 or -errno (-EINVAL: real is NULL).
 */
int rpmemctl_sigbus_interpose(rpmemctl_sigaction_fn real);
/*
 * rpmemctl_sigbus_sigaction -- what sigaction(SIGBUS, act, oldact) does
 * once interposed: oldact gets the action the library passes the SIGBUS
 * it did not cause to (the process's own), act (if not NULL) becomes it;
 * the library's handler stays. 0, or -EPERM before
 * rpmemctl_sigbus_interpose.
 */
int rpmemctl_sigbus_sigaction(const struct sigaction *act,
			      struct sigaction *oldact);

#ifdef __cplusplus
}
#endif

#endif
