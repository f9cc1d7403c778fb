/* SPDX-License-Identifier: BSD-3-Clause */
/* fake_target.h -- an in-process rpmemd stand-in for the client unit tests */
#ifndef RPMEM_FAKE_TARGET_H
#define RPMEM_FAKE_TARGET_H 1

#include <stddef.h>
#include <stdint.h>

#include "proto.h"

/*
 * A fake target listens on 127.0.0.1, on a port the kernel picks, and
 * serves one connection at a time in a thread of its own, speaking the
 * real protocol (lib/common/proto.h, lib/common/net.h): HELLO, CREATE,
 * REMOVE, OPEN (tcp only), WRITE, READ, FLUSH, LIST (its one pool, or
 * paged ones), STATUS (only with paged ones), HASH,
 * HASHV (only when its
 * caps have RPMEM_CAP_HASHV, else ERROR as an older rpmemd would),
 * SCRUB (with RPMEM_CAP_SCRUB; see do_scrub for the verdicts it gives),
 * SET_STATE, CLOSE, BYE. It serves one pool, held in memory. A failed
 * WRITE is remembered and reported by the next FLUSH (or SET_STATE
 * consistent), as rpmemd does. It records what it received, so that
 * tests check what the far end saw, and can be scripted to misbehave.
 *
 * The recorded counts and logs are complete for every request whose reply
 * the client has received (the target works in request order).
 */
struct fake_target;

struct fake_target_opts {
	uint32_t caps;	    /* RPMEM_CAP_* in HELLO_OK */
	uint16_t version;   /* HELLO_OK's version; 0 = RPMEM_PROTO_VERSION */
	const char *region; /* the pool's region; NULL = "r1" */
	const char *pool;   /* the pool's name; NULL = "p1" */
	uint64_t size;	    /* pool size; 0 = none until a CREATE */
	uint8_t state;	    /* enum rpmem_pool_state at start */
	uint64_t generation;
	/*
	 * paged > 0: LIST answers pools "p0".."p<paged-1>" of the region
	 * (and a region "g<first>" per page) and STATUS sessions 0..paged-1
	 * (and a namespace linked to the region on the last page), per_page
	 * of them a page when the request asks for pages (RPMEM_*_PAGE), all
	 * at once when not; STATUS's uptime is the page's number (1 = the
	 * first). Page number stuck_page (> 1) names its own cursor as the
	 * next: a target that does not move on.
	 */
	unsigned paged, per_page, stuck_page;
};

/* what the target does instead of its normal reply */
enum fake_action {
	/* ERROR code (WRITE: remembered for the next FLUSH, as rpmemd) */
	FAKE_ERROR = 1,
	/* close the connection without replying */
	FAKE_HANG_UP,
	/* send the first half of the reply frame (header + payload), close */
	FAKE_HANG_UP_MID_REPLY,
	/* the normal reply, with the request id + 1000 */
	FAKE_WRONG_ID,
	/* an ERROR code with the id of the request before, then the reply */
	FAKE_UNSOLICITED_ERROR,
	/* the normal reply with one byte too many in its payload */
	FAKE_MALFORMED,
	/* a frame header with a bad magic instead of the reply */
	FAKE_BAD_MAGIC,
	/* the normal reply, held until fake_target_release (or down) */
	FAKE_STALL,
};

/* one HASH request, or one range of a HASHV request, as received */
struct fake_hash_req {
	uint16_t type; /* RPMEM_MSG_HASH or RPMEM_MSG_HASHV */
	uint32_t seq;  /* the request's number among HASH and HASHV ones */
	uint64_t offset;
	uint32_t block_size;
	uint32_t count;
	uint32_t flags; /* HASH: RPMEM_HASH_* as sent */
};

/* one WRITE whose data went into the pool */
struct fake_write {
	uint64_t offset;
	uint32_t len;
};

/*
 * fake_target_start -- listen and start serving; opts NULL = no caps,
 * pool r1/p1 of 1 MiB, empty. Fills *out; returns 0 or -errno.
 */
int fake_target_start(const struct fake_target_opts *opts,
		      struct fake_target **out);

/*
 * fake_target_stop -- end the connection being served, stop and free;
 * accepts NULL
 */
void fake_target_stop(struct fake_target **ft);

/* fake_target_port -- the port it listens on, as text */
const char *fake_target_port(const struct fake_target *ft);

/*
 * fake_target_script -- do `action` (code: the ERROR code, where one is
 * sent) instead of the normal reply to the nth message of `type` (1 =
 * the first; type 0 = the nth message of any type). At most 32 scripts.
 */
void fake_target_script(struct fake_target *ft, uint16_t type, unsigned nth,
			enum fake_action action, uint32_t code);

/*
 * fake_target_error_text -- the text of the scripted ERRORs from now on
 * (NULL: "scripted <code>")
 */
void fake_target_error_text(struct fake_target *ft, const char *text);

/*
 * fake_target_wait_idle -- wait until every connection accepted so far
 * has ended (the client said BYE or closed). Returns 0, or -ETIMEDOUT
 * after 30 s (a test that left a session open).
 */
int fake_target_wait_idle(struct fake_target *ft);

/*
 * fake_target_set_down -- down != 0: the target disappears (the connection
 * being served is shut down; new ones are closed as soon as accepted,
 * before HELLO); 0: it is back, with the pool as it was
 */
void fake_target_set_down(struct fake_target *ft, int down);

/* fake_target_release -- FAKE_STALL replies go out, now and from now on */
void fake_target_release(struct fake_target *ft);

/* fake_target_release_one -- the next FAKE_STALL reply goes out (only) */
void fake_target_release_one(struct fake_target *ft);

/*
 * fake_target_set_reply_delay -- every reply but a WRITE's (which has
 * none) goes out us microseconds after it is ready (0: at once)
 */
void fake_target_set_reply_delay(struct fake_target *ft, unsigned us);

/* fake_target_refused -- connections closed because the target was down */
unsigned fake_target_refused(struct fake_target *ft);

/* fake_target_count -- messages of `type` received (0 = of any type) */
unsigned fake_target_count(struct fake_target *ft, uint16_t type);

/* fake_target_flushed -- bytes the FLUSHes answered OK covered, summed */
uint64_t fake_target_flushed(struct fake_target *ft);

/* fake_target_connections -- connections accepted so far */
unsigned fake_target_connections(struct fake_target *ft);

/*
 * fake_target_pool -- the pool's bytes (size from opts or the CREATE);
 * read or change them only while no request is outstanding
 */
uint8_t *fake_target_pool(struct fake_target *ft);

/* fake_target_state -- the pool's state and generation on the target */
uint8_t fake_target_state(struct fake_target *ft, uint64_t *generation);

/* fake_target_source -- the source of the last SET_STATE */
const char *fake_target_source(struct fake_target *ft);

/*
 * fake_target_writes -- the WRITEs whose data went into the pool, in
 * order; *n is their number. Valid until the next call of the client.
 */
const struct fake_write *fake_target_writes(struct fake_target *ft,
					    size_t *n);

/*
 * fake_target_written -- bytes the WRITEs put into [off, off + len)
 * (a byte written twice counts twice)
 */
uint64_t fake_target_written(struct fake_target *ft, uint64_t off,
			     uint64_t len);

/*
 * fake_target_hashes -- the HASH requests and HASHV ranges received, in
 * order; *n is their number. Valid until the next call of the client.
 */
const struct fake_hash_req *fake_target_hashes(struct fake_target *ft,
					       size_t *n);

/* fake_pattern -- len bytes that differ from offset to offset, by seed */
void fake_pattern(uint8_t *buf, size_t len, uint32_t seed);

#endif
