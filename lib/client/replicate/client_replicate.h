/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * client_replicate.h -- the replication layer of librpmemctl
 * (lib/client/replicate/): a link keeps one remote pool up to date, a set
 * of links k of n, a replica persists through them, the status file
 * publishes their states. It sees every layer below it.
 */
#ifndef RPMEM_CLIENT_REPLICATE_H
#define RPMEM_CLIENT_REPLICATE_H

#include <stdint.h>

#include "client_share.h"
#include "client_sync.h"

/* --- fence.c ------------------------------------------------------------ */

/*
 * client_fence_cmd -- the fence-peer handler's command
 * (RPMEM_FENCE_PEER_HANDLER, else replicate.fence_peer_handler of
 * rpmemctl.conf) into buf; "" if none
 */
void client_fence_cmd(char *buf, size_t len);
/*
 * client_fence_run -- run the handler cmd for the target name of file:
 * "fence" waited for (its exit status, -1 if it ran out of time or could
 * not start), "unfence" not waited for (0 once started)
 */
int client_fence_run(const char *cmd, const char *action, const char *file,
		     const char *name);

/* --- link.c: what a set of links (links.c) drives ------------------------ */

/*
 * client_link_flush_send -- a set's drain, first half: a flush posted
 * for every pending range, its completion owed (a DEGRADED link retries
 * if due, a data plane that does not split a flush drains in full); 0
 * or the link's failure; 1 if, under the kick-out, the link owes so many
 * that none was posted (the next round's covers these writes)
 */
int client_link_flush_send(struct rpmemctl_link *l);
/* client_link_flush_recv -- read one owed FLUSH reply (0 if none owed) */
int client_link_flush_recv(struct rpmemctl_link *l);
/*
 * a set's drain rounds in flight at most (links.c: pipelined rounds); 1
 * while a link's data plane posts one flush at a time
 * (client_link_flush_serial)
 */
#define LINKS_ROUNDS 4
/*
 * client_links_wakes -- waiting drains the set has woken so far (links.c;
 * each drain that waits is woken once its round ended, or to read)
 */
uint64_t client_links_wakes(const struct rpmemctl_links *s);
/* client_links_spins -- the reader's waits for replies that spun first */
uint64_t client_links_spins(const struct rpmemctl_links *s);
/*
 * client_links_linger -- what a drain that lingers before its round does
 * (links.c; sched_yield: the threads ready to run on its CPU come to
 * their drains first); a test puts its own
 */
extern void (*client_links_linger)(void);
/*
 * client_links_clear_ns -- the least time between two clears of a link's
 * dirty log (links.c; LINKS_CLEAR_NS); a test sets it small, so as not
 * to sit through real seconds
 */
extern uint64_t client_links_clear_ns;
/* client_links_waiting -- drains waiting for a round or their turn */
unsigned client_links_waiting(struct rpmemctl_links *s);

/* client_link_owed -- FLUSH replies owed */
unsigned client_link_owed(const struct rpmemctl_link *l);
/*
 * client_link_flushes_sent, _read -- FLUSHes the link ever sent, and
 * their replies read (or dropped when its session closed): every FLUSH
 * sent so far is answered once _read reaches what _sent is now
 */
uint64_t client_link_flushes_sent(const struct rpmemctl_link *l);
uint64_t client_link_flushes_read(const struct rpmemctl_link *l);
/* client_link_flush_serial -- its data plane posts one flush at a time */
int client_link_flush_serial(const struct rpmemctl_link *l);
/*
 * client_link_wait_fd -- the descriptor owed completions come on (the
 * data plane's wait_fd); -1 if none is owed
 */
int client_link_wait_fd(struct rpmemctl_link *l);
/*
 * client_link_wait_edge -- it owes, and its descriptor's news may be
 * taken by another waiter: poll it briefly
 */
int client_link_wait_edge(const struct rpmemctl_link *l);
/*
 * client_link_ready -- the link's oldest owed flush can be collected
 * without waiting for the network (client_pool_flush_collect)
 */
int client_link_ready(struct rpmemctl_link *l);
/*
 * the kick-out (link.c, docs/ARCHITECTURE.md "A frozen target is kicked
 * out"): client_link_set_kickout sets its bounds (ms 0: off, bytes 0: no
 * bound on bytes) and the bound of the probe and the resync (probe_ms,
 * 0: none), which a set gives every link whatever k;
 * client_link_overdue says a LIVE link passed them (how long its oldest
 * reply has been awaited, 0 if it did not); client_link_kick drops it
 * (DEGRADED, -ETIMEDOUT); client_link_retry_now is a DEGRADED link's last
 * retry, at most probe_ms waiting for its target
 */
void client_link_set_kickout(struct rpmemctl_link *l, unsigned ms,
			     uint64_t bytes, unsigned probe_ms);
uint64_t client_link_overdue(struct rpmemctl_link *l);
int client_link_kick(struct rpmemctl_link *l);
int client_link_retry_now(struct rpmemctl_link *l);
/*
 * a set's start where k < n under the kick-out: client_link_start_probe
 * probes a DOWN link's target in a thread (0) or says the link pushes
 * as before (1); client_link_start_probed says how its probe went (1
 * answered, 0 running, -1 failed; done: the answer taken);
 * client_link_defer drops a link whose target did not answer in time
 * (DEGRADED, behind; its reconnect waits for the probe)
 */
int client_link_start_probe(struct rpmemctl_link *l);
int client_link_start_probed(struct rpmemctl_link *l, int done);
int client_link_defer(struct rpmemctl_link *l, uint64_t waited_ns);
/*
 * client_link_resync_left -- a RESYNCING link: the bytes its background
 * resync still has to send (its pass's rest and what was written since)
 */
uint64_t client_link_resync_left(struct rpmemctl_link *l);

/* --- link_resync.c: a returning target resynced by a thread of its own -- */
struct client_resync;
/* what the thread needs of its link; copied, the strings not owned */
struct client_resync_cfg {
	const struct rpmem_target *t;
	enum rpmemctl_transport transport;
	rpmemctl_log_fn log_fn;
	void *log_arg;
	int log_prio;
	uint8_t *addr; /* the data */
	uint64_t len;
	struct rpmemctl_dirtylog *log;
	const char *source;
	const char *history; /* NULL: none */
};
enum client_resync_state { RESYNC_RUNNING, RESYNC_READY, RESYNC_FAILED };
int client_resync_start(const struct client_resync_cfg *cfg,
			struct client_resync **out);
enum client_resync_state client_resync_state(const struct client_resync *r);
uint64_t client_resync_left(struct client_resync *r);
uint64_t client_resync_moved(const struct client_resync *r);
void client_resync_wait(struct client_resync *r, uint64_t stall_ns);
/* at most this many ranges are noted between two passes (else extents) */
#define CLIENT_RESYNC_RANGES 256
/* the ranges written since the resync's last pass; over: too many */
struct client_resync_ranges {
	struct client_range v[CLIENT_RESYNC_RANGES];
	unsigned n;
	int over;
};
void client_resync_note(struct client_resync *r, uint64_t off, uint64_t len);
int client_resync_end(struct client_resync **rp,
		      struct rpmemctl_session **sess,
		      struct rpmemctl_pool **pool,
		      struct client_resync_ranges *left, char *msg,
		      size_t len);

/*
 * client_link_clear_acked -- a LIVE link clears from its dirty log the
 * marks of the writes its target acknowledged (replies that came read
 * first): in full, or in steps from a cut (link_flush.c). 1 if it
 * cleared marks, 0 if none, -EAGAIN to be called again at the next
 * write (no cut could be made), or -errno.
 */
int client_link_clear_acked(struct rpmemctl_link *l);
/*
 * links_status -- where a set of links publishes its replicas' state and
 * lag (links_status.c), and what it published last
 */
#define LINKS_STATUS_MAX 8192
struct links_status {
	char path[4096];
	uint8_t state[16];
	/* links a clean stop left consistent and equal: published synced */
	uint16_t stopped_synced;
	uint64_t at_ns;
	int written;
	int failed;
};
int links_status_set(struct links_status *st, const char *path);
void links_status_update(struct links_status *st, unsigned k, unsigned n,
			 unsigned holding, struct rpmemctl_link *const *link,
			 const uint64_t *bytes, const uint64_t *t0);

/* client_link_name -- "host:port/region/pool" of the link's target */
const char *client_link_name(const struct rpmemctl_link *l);
/* client_link_history -- the file whose history the link's pushes keep */
const char *client_link_history(const struct rpmemctl_link *l);
/*
 * client_link_adopt -- the link's pool (live or synced) takes the ids as
 * its history (GEN adopt, after every owed reply is read); a failure is
 * the link's (degraded or failed by its policy). 0 or -errno
 */
int client_link_adopt(struct rpmemctl_link *l, const uint64_t *ids,
		      unsigned count);

#endif
