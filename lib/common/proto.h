/* SPDX-License-Identifier: BSD-3-Clause */
/* proto.h -- rpmem control protocol: frames, messages, codec (see docs/PROTOCOL.md) */
#ifndef RPMEM_PROTO_H
#define RPMEM_PROTO_H

#include <stddef.h>
#include <stdint.h>

#define RPMEM_PROTO_MAGIC 0x4d4d5052u /* "RPMM" little-endian on the wire */
#define RPMEM_PROTO_VERSION 1
#define RPMEM_DEFAULT_PORT "7636"

#define RPMEM_HDR_SIZE 16
/* largest payload of any frame; WRITE/DATA carry at most RPMEM_MAX_IO */
#define RPMEM_MAX_IO (1u << 20)
#define RPMEM_MAX_PAYLOAD (RPMEM_MAX_IO + 64)
/* most hashes in one HASH or HASHV request / HASHES reply */
#define RPMEM_MAX_HASHES 16384u
/* most ranges in one HASHV request: 12 + 12 * 340 = 4092 payload bytes */
#define RPMEM_MAX_HASHV_RANGES 340u
/*
 * most pool bytes one HASH or HASHV request may make the target hash (its
 * ranges' blocks, clipped to the pool); a target refuses more with LIMIT
 */
#define RPMEM_MAX_HASH_BYTES (1ull << 30)
#define RPMEM_NAME_MAX 64      /* region and pool names */
#define RPMEM_STR_MAX 255      /* peer names, sources, versions */
#define RPMEM_MSG_MAX 1024     /* error message text */
/* room for an encoded request built on the stack: a fixed one, any */
#define RPMEM_REQ_SMALL 32
#define RPMEM_REQ_MAX 1024
#define RPMEM_TOKEN_LEN 16
/* PMem namespaces, and links of a region to one, in one STATUS_REPLY */
#define RPMEM_MAX_NAMESPACES 1024u
#define RPMEM_MAX_NS_LINKS 1024u
#define RPMEM_XPORT_BLOB_MAX 1024

/* frame header: magic u32 | type u16 | flags u16 | id u32 | len u32 */
struct rpmem_hdr {
	uint16_t type;
	uint16_t flags;
	uint32_t id;  /* request id, echoed in the reply */
	uint32_t len; /* payload length */
};

enum rpmem_msg_type {
	RPMEM_MSG_HELLO = 1,
	RPMEM_MSG_HELLO_OK = 2,
	RPMEM_MSG_ERROR = 3,
	RPMEM_MSG_OK = 4,
	RPMEM_MSG_LIST = 5,
	RPMEM_MSG_LIST_REPLY = 6,
	RPMEM_MSG_CREATE = 7,
	RPMEM_MSG_REMOVE = 8,
	RPMEM_MSG_OPEN = 9,
	RPMEM_MSG_OPEN_OK = 10,
	RPMEM_MSG_CLOSE = 11,
	RPMEM_MSG_WRITE = 12, /* no reply; a failure is reported by the next FLUSH */
	RPMEM_MSG_READ = 13,
	RPMEM_MSG_DATA = 14,
	RPMEM_MSG_FLUSH = 15,
	RPMEM_MSG_HASH = 16,
	RPMEM_MSG_HASHES = 17,
	RPMEM_MSG_SET_STATE = 18,
	RPMEM_MSG_STATUS = 19,
	RPMEM_MSG_STATUS_REPLY = 20,
	RPMEM_MSG_BYE = 21,
	RPMEM_MSG_HASHV = 22, /* hashes of several ranges, one HASHES reply */
	RPMEM_MSG_STATE = 23, /* SET_STATE reply if asked: state, generation */
	RPMEM_MSG_KICK = 24,  /* end another session (administrators) */
	/* 25 is reserved */
	RPMEM_MSG_EVENTS = 26, /* turn the session into an event subscriber */
	RPMEM_MSG_EVENT = 27,  /* one event of a subscription (T -> I) */
	/* keep ranges' old contents in the undo journal before writing them */
	RPMEM_MSG_PRESERVE = 28,
	RPMEM_MSG_SCRUB = 29,  /* check pieces against the recorded hashes */
	RPMEM_MSG_SCRUB_REPLY = 30,
	/* a FLUSH without a reply: an ordered barrier (RPMEM_CAP_BARRIER) */
	RPMEM_MSG_BARRIER = 31,
	/* a pool's versions: list, prune (RPMEM_CAP_VERSIONS) */
	RPMEM_MSG_VERSIONS = 32,
	RPMEM_MSG_VERSIONS_REPLY = 33,
	/* READ of a version's image, answered by DATA (RPMEM_CAP_VERSIONS) */
	RPMEM_MSG_READ_AT = 34,
	/* a pool's role and generation history: read, promote, demote, adopt */
	RPMEM_MSG_GEN = 35,
	RPMEM_MSG_GEN_REPLY = 36,
	/*
	 * pieces of a consistent pool rewritten with data that hashes as its
	 * scrub record says, answered by OK (RPMEM_CAP_REPAIR)
	 */
	RPMEM_MSG_REPAIR = 37,
	/*
	 * pieces of a version's records rewritten with data that checks as
	 * their own records say, answered by OK (RPMEM_CAP_REPAIR_AT)
	 */
	RPMEM_MSG_REPAIR_AT = 38,
	RPMEM_MSG_TYPE_MAX = 38,
};

/* error codes carried in ERROR replies (stable on the wire) */
enum rpmem_err {
	RPMEM_E_PROTO = 1,     /* malformed or unexpected message */
	RPMEM_E_VERSION = 2,   /* no common protocol version */
	RPMEM_E_AUTH = 3,      /* authentication required or failed */
	RPMEM_E_NOREGION = 4,  /* unknown region */
	RPMEM_E_NOPOOL = 5,    /* unknown pool */
	RPMEM_E_EXISTS = 6,    /* pool exists */
	RPMEM_E_BUSY = 7,      /* pool open for writing by another session */
	RPMEM_E_NOSPACE = 8,   /* region full */
	RPMEM_E_INVAL = 9,     /* bad argument (name, size, range) */
	RPMEM_E_IO = 10,       /* I/O or persist failure on the target */
	RPMEM_E_LIMIT = 11,    /* too many sessions or open pools */
	RPMEM_E_RDONLY = 12,   /* write on a read-only open */
	RPMEM_E_XPORT = 13,    /* requested transport unavailable */
	RPMEM_E_SHUTDOWN = 14, /* daemon is stopping */
	RPMEM_E_INTERNAL = 15,
	RPMEM_E_DENIED = 16,   /* the identity lacks the right (rpmemd.conf) */
	/* data read is not as the pool's scrub record says (RPMEM_CAP_DAMAGE) */
	RPMEM_E_DAMAGED = 17,
	RPMEM_E_MAX = 17,
};

enum rpmem_pool_state {
	RPMEM_POOL_EMPTY = 0,
	RPMEM_POOL_SYNCING = 1,
	RPMEM_POOL_CONSISTENT = 2,
};

/*
 * a pool's role: a secondary takes pushes; a primary (promoted) is used
 * in place on the target host and refuses write opens from initiators
 */
enum rpmem_pool_role {
	RPMEM_ROLE_SECONDARY = 0,
	RPMEM_ROLE_PRIMARY = 1,
	RPMEM_ROLE_MAX = 1,
};

/* most generation ids a history keeps (newest first) */
#define RPMEM_MAX_GENERATIONS 16u

enum rpmem_open_mode { RPMEM_OPEN_RO = 0, RPMEM_OPEN_RW = 1 };

enum rpmem_xport_type {
	RPMEM_XPORT_TCP = 0,
	RPMEM_XPORT_RDMA = 1,
	RPMEM_XPORT_AUTO = 2, /* only in OPEN requests */
};

enum rpmem_region_type {
	RPMEM_REGION_DIR = 0,
	RPMEM_REGION_FSDAX = 1,
	RPMEM_REGION_DEVDAX = 2,
};

/* mode of a PMem namespace, as ndctl names it */
enum rpmem_ns_mode {
	RPMEM_NS_UNKNOWN = 0,
	RPMEM_NS_RAW = 1,
	RPMEM_NS_SECTOR = 2,
	RPMEM_NS_FSDAX = 3,
	RPMEM_NS_DEVDAX = 4,
	RPMEM_NS_MODE_MAX = 4,
};

#define RPMEM_CAP_RDMA (1u << 0)  /* target can serve the rdma data plane */
#define RPMEM_CAP_APM (1u << 1)   /* direct write to PMem declared (APM) */
#define RPMEM_CAP_HASHV (1u << 2) /* target answers HASHV requests */
/* target answers SET_STATE with RPMEM_SET_STATE_REPLY by STATE */
#define RPMEM_CAP_STATE (1u << 3)
#define RPMEM_CAP_KICK (1u << 4)  /* target answers KICK requests */
/* target answers STATUS with RPMEM_STATUS_IDENTITY: identity, auth */
#define RPMEM_CAP_IDENTITY (1u << 5)
/* target answers LIST and STATUS in pages (RPMEM_LIST_PAGE, _STATUS_PAGE) */
#define RPMEM_CAP_PAGE (1u << 6)

/*
 * paging: a cursor says where the next page starts; the target writes it
 * (the "next" of a page, "" = the last page), the initiator sends it back
 * verbatim (the "cursor" of a request, "" = the first page)
 */
#define RPMEM_CURSOR_MAX 255
/* most pools (LIST) or sessions (STATUS) rpmemd puts in one page */
#define RPMEM_PAGE_ENTRIES 512u

/*
 * target keeps a cache of 64 KiB block hashes and honours HASH's flags
 * (RPMEM_HASH_FULL); bit 6 is paging
 */
#define RPMEM_CAP_HASH_CACHE (1u << 8)
/* the target answers EVENTS and streams EVENT frames */
#define RPMEM_CAP_EVENTS (1u << 7)
/*
 * the target answers HASH with RPMEM_HASH_TREE (tree hashes of blocks of
 * 4 KiB or more) and keeps its hash cache in 4 KiB pieces
 */
#define RPMEM_CAP_HASH_TREE (1u << 9)
/*
 * syncs are atomic on the target (an undo journal): it answers PRESERVE,
 * SET_STATE with RPMEM_SET_STATE_ROLLBACK and LIST with RPMEM_LIST_UNDO
 */
#define RPMEM_CAP_UNDO (1u << 10)
/* the target records piece hashes at commit and answers SCRUB */
#define RPMEM_CAP_SCRUB (1u << 11)
/*
 * the target takes BARRIER: the range persisted, in the order of the
 * session's requests, with no reply; a failure is reported by the next
 * FLUSH as a failed WRITE is
 */
#define RPMEM_CAP_BARRIER (1u << 12)
/*
 * the target keeps point-in-time versions of pools (where a region is
 * configured to) and answers VERSIONS, READ_AT and SCRUB of a version
 */
#define RPMEM_CAP_VERSIONS (1u << 13)
/*
 * the target keeps a role and a generation history per pool: it answers
 * GEN and LIST with RPMEM_LIST_GENERATIONS
 */
#define RPMEM_CAP_GENERATIONS (1u << 14)
/*
 * the target takes SET_STATE with RPMEM_SET_STATE_CHANGE (the bytes a sync
 * will write) and refuses up front a sync whose undo journal cannot fit
 */
#define RPMEM_CAP_SYNC_SIZE (1u << 15)
/*
 * the target keeps what a scrub found damaged in a pool's image (until a
 * sync rewrites it) and answers LIST with RPMEM_LIST_DAMAGED; it checks
 * the data of READ and READ_AT against the scrub record and refuses
 * damaged data with RPMEM_E_DAMAGED unless the request carries flags
 * with RPMEM_READ_DAMAGED
 */
#define RPMEM_CAP_DAMAGE (1u << 16)
/*
 * the target answers a SET_STATE with RPMEM_SET_STATE_NOTE with a STATE
 * that may carry a note: what it did beyond the request that the user
 * must hear (versions pruned for space)
 */
#define RPMEM_CAP_NOTE (1u << 17)
/*
 * the target takes REPAIR: damaged pieces of a consistent pool rewritten
 * in place with data it checks against the pool's scrub record
 */
#define RPMEM_CAP_REPAIR (1u << 18)
/*
 * the target takes REPAIR_AT: damaged records of a pool's versions
 * rewritten in place with data it checks against their own records
 */
#define RPMEM_CAP_REPAIR_AT (1u << 19)
/*
 * the target takes GEN split (RPMEM_GEN_SPLIT): an initiator reports the
 * split brain its comparison refused, for the target's log and events
 */
#define RPMEM_CAP_SPLIT (1u << 20)
/*
 * the target keeps the time of the last split brain reported of each pool
 * until its history changes (promote, demote, adopt) and answers LIST
 * with RPMEM_LIST_SPLIT
 */
#define RPMEM_CAP_SPLIT_LIST (1u << 21)

/* who a session proved to be, carried in extended STATUS_REPLY entries */
#define RPMEM_IDENTITY_MAX 128 /* PSK identity or certificate name */

enum rpmem_auth_kind {
	RPMEM_AUTH_NONE = 0, /* plaintext */
	RPMEM_AUTH_PSK = 1,  /* TLS, external pre-shared key */
	RPMEM_AUTH_X509 = 2, /* TLS, client certificate */
	RPMEM_AUTH_MAX = 2,
};

struct rpmem_msg_hello {
	uint16_t ver_min;
	uint16_t ver_max;
	uint16_t auth_method; /* 0 = none */
	char client[RPMEM_STR_MAX + 1];
	uint16_t auth_len;
	uint8_t auth[256];
};

struct rpmem_msg_hello_ok {
	uint16_t version;
	uint32_t session_id;
	uint32_t caps;
	char server[RPMEM_STR_MAX + 1]; /* "rpmemd 0.1.0 hostname" */
};

struct rpmem_msg_error {
	uint32_t code;
	char msg[RPMEM_MSG_MAX + 1];
};

/* LIST flags: answer one page from cursor (needs RPMEM_CAP_PAGE) */
#define RPMEM_LIST_PAGE (1u << 0)
/* each pool entry ends with pending u8 | undo_generation u64 | undo_bytes u64 */
#define RPMEM_LIST_UNDO (1u << 1)
/*
 * each pool entry ends (after the undo fields, if any) with versions u32 |
 * versions_bytes u64 (needs RPMEM_CAP_VERSIONS)
 */
#define RPMEM_LIST_VERSIONS (1u << 2)
/*
 * each pool entry ends (after the versions fields, if any) with role u8 |
 * count u8 | count x u64, its generation history newest first (needs
 * RPMEM_CAP_GENERATIONS)
 */
#define RPMEM_LIST_GENERATIONS (1u << 3)
/*
 * each pool entry ends (after the generations fields, if any) with
 * damaged u64: the bytes of its image a scrub found damaged and no sync
 * rewrote since (needs RPMEM_CAP_DAMAGE)
 */
#define RPMEM_LIST_DAMAGED (1u << 4)
/*
 * each pool entry ends (after the damaged field, if any) with split u64:
 * unix seconds of the last split brain an initiator reported of the pool
 * (GEN split) since its history last changed, 0 if none (needs
 * RPMEM_CAP_SPLIT_LIST)
 */
#define RPMEM_LIST_SPLIT (1u << 5)
#define RPMEM_LIST_FLAGS                                                       \
	(RPMEM_LIST_PAGE | RPMEM_LIST_UNDO | RPMEM_LIST_VERSIONS |             \
	 RPMEM_LIST_GENERATIONS | RPMEM_LIST_DAMAGED | RPMEM_LIST_SPLIT)

/*
 * LIST: region str | [flags u32 | cursor str]; flags are sent only when
 * not 0 (an older target refuses more than the region), the cursor only
 * with RPMEM_LIST_PAGE
 */
struct rpmem_msg_list {
	char region[RPMEM_NAME_MAX + 1]; /* "" = all */
	uint32_t flags;			 /* RPMEM_LIST_*; 0 when absent */
	char cursor[RPMEM_CURSOR_MAX + 1];
};

struct rpmem_pool_info {
	char region[RPMEM_NAME_MAX + 1];
	char name[RPMEM_NAME_MAX + 1];
	uint8_t uuid[16];
	uint64_t size;
	uint8_t state;
	uint64_t generation;
	uint64_t created;   /* unix seconds */
	uint64_t last_sync; /* unix seconds, 0 = never */
	char source[RPMEM_STR_MAX + 1];
	char writer[RPMEM_STR_MAX + 1]; /* holder of the write open, "" = none */
	uint32_t readers;
	uint64_t bytes_written;
	uint64_t flushes;
	/* with RPMEM_LIST_UNDO: an interrupted sync can be rolled back */
	uint8_t pending;
	uint64_t undo_generation; /* the generation it rolls back to */
	uint64_t undo_bytes;	  /* the undo journal's size */
	/* with RPMEM_LIST_VERSIONS: its kept versions, their files' bytes */
	uint32_t versions;
	uint64_t versions_bytes;
	/* with RPMEM_LIST_GENERATIONS: its role and history, newest first */
	uint8_t role; /* enum rpmem_pool_role */
	uint8_t ngens;
	uint64_t gens[RPMEM_MAX_GENERATIONS];
	/* with RPMEM_LIST_DAMAGED: bytes found damaged, not rewritten since */
	uint64_t damaged;
	/* with RPMEM_LIST_SPLIT: unix seconds of a split brain reported, 0 */
	uint64_t split_at;
};

struct rpmem_region_info {
	char name[RPMEM_NAME_MAX + 1];
	uint8_t type;
	char path[RPMEM_STR_MAX + 1];
	uint64_t size;
	uint64_t free;
	uint32_t align;
	uint32_t caps; /* RPMEM_CAP_* this region can serve */
};

/*
 * LIST_REPLY: arrays owned by the struct; free with rpmem_list_reply_free.
 * A page (RPMEM_LIST_PAGE) ends with next str.
 */
struct rpmem_msg_list_reply {
	uint32_t nregions;
	struct rpmem_region_info *regions;
	uint32_t npools;
	struct rpmem_pool_info *pools;
	/*
	 * RPMEM_LIST_* the layout follows: read by the encoder, set by the
	 * decoder from its flags argument; not sent
	 */
	uint32_t flags;
	char next[RPMEM_CURSOR_MAX + 1]; /* a page's: "" = the last */
};

struct rpmem_msg_create {
	char region[RPMEM_NAME_MAX + 1];
	char pool[RPMEM_NAME_MAX + 1];
	uint64_t size;
};

#define RPMEM_REMOVE_FORCE (1u << 0)

struct rpmem_msg_remove {
	char region[RPMEM_NAME_MAX + 1];
	char pool[RPMEM_NAME_MAX + 1];
	uint32_t flags;
};

struct rpmem_msg_open {
	char region[RPMEM_NAME_MAX + 1];
	char pool[RPMEM_NAME_MAX + 1];
	uint8_t mode;  /* enum rpmem_open_mode */
	uint8_t xport; /* enum rpmem_xport_type */
};

struct rpmem_msg_open_ok {
	uint32_t handle;
	uint64_t size;
	uint8_t state;
	uint64_t generation;
	uint8_t uuid[16];
	uint8_t xport; /* transport chosen: tcp or rdma */
	uint16_t blob_len;
	uint8_t blob[RPMEM_XPORT_BLOB_MAX]; /* transport parameters (rdma) */
};

struct rpmem_msg_handle {
	uint32_t handle; /* CLOSE */
};

/* WRITE: handle u32 | offset u64 | len u32 | len bytes of data */
#define RPMEM_WRITE_HDR_SIZE 16
struct rpmem_msg_io {
	uint32_t handle;
	uint64_t offset;
	uint32_t len; /* WRITE, READ (<= RPMEM_MAX_IO) */
};

struct rpmem_msg_flush {
	uint32_t handle;
	uint64_t offset;
	uint64_t len;
};

/*
 * The block size rule, in one place: a power of two from min to
 * RPMEM_BS_MAX. HASH and HASHV take RPMEM_HASH_BS_MIN and up on the wire;
 * a sync's blocks start at its 4 KiB fine block (RPMEMCTL_BLOCK_SIZE_MIN).
 */
#define RPMEM_HASH_BS_MIN 512u
#define RPMEM_BS_MAX (64u << 20)

/* rpmem_bs_ok -- bs is a power of two from min to RPMEM_BS_MAX */
static inline int rpmem_bs_ok(uint64_t bs, uint64_t min)
{
	return bs >= min && bs <= RPMEM_BS_MAX && !(bs & (bs - 1));
}

struct rpmem_msg_hash {
	uint32_t handle;
	uint64_t offset;
	uint32_t block_size; /* power of two, 512 .. 64 MiB */
	uint32_t count;      /* <= RPMEM_MAX_HASHES; last block may be short */
	uint32_t flags;      /* RPMEM_HASH_*; on the wire only if not 0 */
};

/*
 * HASH flags (an optional trailing u32; only to a target with
 * RPMEM_CAP_HASH_CACHE): hash every block from the data, not the cache
 */
#define RPMEM_HASH_FULL (1u << 0)
/*
 * HASH flag (only to a target with RPMEM_CAP_HASH_TREE; block_size 4 KiB
 * or more): each hash is a tree hash, the XXH3-64 of the little-endian
 * XXH3-64 hashes of the block's 4 KiB pieces (util.h, rpmem_hash_tree)
 */
#define RPMEM_HASH_TREE (1u << 1)
#define RPMEM_HASH_PIECE 4096u /* the piece of a tree hash */
#define RPMEM_HASH_FLAGS_ALL (RPMEM_HASH_FULL | RPMEM_HASH_TREE)

/* one range of a HASHV request: count blocks from offset */
struct rpmem_hash_range {
	uint64_t offset;
	uint32_t count; /* >= 1 */
};

/*
 * HASHV: handle u32 | block_size u32 | nranges u32 | nranges x (offset
 * u64 | count u32); answered by one HASHES reply with the hashes of all
 * ranges in request order
 */
struct rpmem_msg_hashv {
	uint32_t handle;
	uint32_t block_size; /* as in HASH */
	uint32_t nranges;    /* 1 .. RPMEM_MAX_HASHV_RANGES */
	uint32_t total;	     /* sum of counts; set by the decoder, not sent */
	struct rpmem_hash_range ranges[RPMEM_MAX_HASHV_RANGES];
};

/* HASHES reply: count u32 | count x u64; hashes points into the frame buffer */
struct rpmem_msg_hashes {
	uint32_t count;
	const uint8_t *hashes; /* count * 8 bytes, little-endian u64 each */
};

/* SET_STATE flags: answer with STATE rather than OK (needs RPMEM_CAP_STATE) */
#define RPMEM_SET_STATE_REPLY (1u << 0)
/*
 * SET_STATE flag, with state consistent (needs RPMEM_CAP_UNDO): roll an
 * interrupted sync back from the undo journal to the previous generation
 */
#define RPMEM_SET_STATE_ROLLBACK (1u << 1)
/*
 * SET_STATE flag, with state syncing (needs RPMEM_CAP_SYNC_SIZE): a u64
 * follows the flags, the bytes the sync will write (its ranges' sum)
 */
#define RPMEM_SET_STATE_CHANGE (1u << 2)
/*
 * SET_STATE flag, with RPMEM_SET_STATE_REPLY (needs RPMEM_CAP_NOTE): the
 * STATE reply may carry a note
 */
#define RPMEM_SET_STATE_NOTE (1u << 3)
#define RPMEM_SET_STATE_FLAGS                                                  \
	(RPMEM_SET_STATE_REPLY | RPMEM_SET_STATE_ROLLBACK |                    \
	 RPMEM_SET_STATE_CHANGE | RPMEM_SET_STATE_NOTE)

/* most ranges in one PRESERVE request: 8 + 16 * 255 = 4088 payload bytes */
#define RPMEM_MAX_PRESERVE_RANGES 255u

/* one range of a PRESERVE request */
struct rpmem_preserve_range {
	uint64_t offset;
	uint64_t len; /* >= 1 */
};

/*
 * PRESERVE: handle u32 | nranges u32 | nranges x (offset u64 | len u64);
 * answered OK once the old contents of every block the ranges touch are
 * durable in the pool's undo journal (at once if it has none)
 */
struct rpmem_msg_preserve {
	uint32_t handle;
	uint32_t nranges; /* 1 .. RPMEM_MAX_PRESERVE_RANGES */
	struct rpmem_preserve_range ranges[RPMEM_MAX_PRESERVE_RANGES];
};

/*
 * SET_STATE: handle u32 | state u8 | source str | [flags u32 | [change
 * u64]]; flags are sent only when not 0 (an older target knows no
 * flags), change only with RPMEM_SET_STATE_CHANGE
 */
/* KICK: session u32 | flags u32 (none defined: 0) */
struct rpmem_msg_kick {
	uint32_t session; /* the id STATUS_REPLY lists */
	uint32_t flags;
};

/* EVENTS flags: first the current state as "exists" events, then a marker */
#define RPMEM_EVENTS_NOW (1u << 0)

/* EVENTS: flags u32 */
struct rpmem_msg_events {
	uint32_t flags; /* RPMEM_EVENTS_* */
};

/* what happened (EVENT verb) */
enum rpmem_event_verb {
	RPMEM_EV_EXISTS = 0,   /* the current state (--now); object none: end */
	RPMEM_EV_CREATE = 1,   /* a session opened, a pool or transfer began */
	RPMEM_EV_CHANGE = 2,   /* a pool's state changed */
	RPMEM_EV_DESTROY = 3,  /* a session closed, a pool or transfer ended */
	RPMEM_EV_REFUSE = 4,   /* a connection or request refused at a limit */
	RPMEM_EV_OVERFLOW = 5, /* events were dropped: `lost` of them */
	RPMEM_EV_VERB_MAX = 5,
};

/* what it happened to (EVENT object) */
enum rpmem_event_object {
	RPMEM_EVO_NONE = 0, /* the stream itself: end of --now, overflow */
	RPMEM_EVO_SESSION = 1,
	RPMEM_EVO_POOL = 2,
	RPMEM_EVO_TRANSFER = 3,	  /* a sync: first WRITE .. consistent */
	RPMEM_EVO_CONNECTION = 4, /* a refusal: of whom */
	RPMEM_EVO_OBJECT_MAX = 4,
};

#define RPMEM_EV_LIMIT_MAX 64 /* the name of a limit */

/*
 * EVENT: verb u8 | object u8 | time u64 (unix ms) | session u32 |
 * region str(64) | pool str(64) | state u8 | generation u64 | size u64 |
 * bytes u64 | lost u64 | peer str(255) | client str(255) |
 * identity str(128) | limit str(64) | text str(255). Fields that do not
 * apply are 0 or "".
 */
struct rpmem_msg_event {
	uint8_t verb;	/* enum rpmem_event_verb */
	uint8_t object; /* enum rpmem_event_object */
	uint64_t time_ms;
	uint32_t session;
	char region[RPMEM_NAME_MAX + 1];
	char pool[RPMEM_NAME_MAX + 1];
	uint8_t state;
	uint64_t generation;
	uint64_t size;
	uint64_t bytes; /* transfer: written; session: written in all */
	uint64_t lost;	/* overflow: events dropped */
	char peer[RPMEM_STR_MAX + 1];
	char client[RPMEM_STR_MAX + 1];
	char identity[RPMEM_IDENTITY_MAX + 1];
	char limit[RPMEM_EV_LIMIT_MAX + 1]; /* refuse: the limit's name */
	char text[RPMEM_STR_MAX + 1];	    /* why: a refusal, a close */
};

/* most 4 KiB pieces one SCRUB request checks (64 MiB of pool) */
#define RPMEM_MAX_SCRUB_PIECES 16384u

/*
 * SCRUB: handle u32 | offset u64 | count u32 | version u64. The target
 * re-reads count 4 KiB pieces (RPMEM_HASH_PIECE; the last of the pool may
 * be short) from offset (a multiple of 4 KiB) and compares them with the
 * hashes it recorded when the image was committed. version 0 is the
 * pool's current image; other values are reserved for point-in-time
 * versions (a target without them refuses them with INVAL).
 */
struct rpmem_msg_scrub {
	uint32_t handle;
	uint64_t offset;
	uint32_t count; /* 1 .. RPMEM_MAX_SCRUB_PIECES */
	uint64_t version;
};

/* SCRUB_REPLY: what a piece is */
enum rpmem_scrub_piece {
	RPMEM_SCRUB_OK = 0,	    /* its data hashes as recorded */
	RPMEM_SCRUB_DAMAGED = 1,    /* it does not (or cannot be read) */
	RPMEM_SCRUB_UNVERIFIED = 2, /* nothing to compare it with: see why */
	RPMEM_SCRUB_PIECE_MAX = 2,
};

/* SCRUB_REPLY: why pieces are unverified (or 0: compared with a record) */
enum rpmem_scrub_why {
	RPMEM_SCRUB_RECORDED = 0,  /* compared with the record */
	RPMEM_SCRUB_NO_RECORD = 1, /* no record (older rpmemd, devdax) */
	RPMEM_SCRUB_SYNCING = 2,   /* the pool is not consistent */
	RPMEM_SCRUB_STALE = 3,	   /* the record is of another image */
	RPMEM_SCRUB_CHANGED = 4,   /* a sync ran during the scrub */
	RPMEM_SCRUB_WRITER = 5,	   /* open for writing: data may change */
	RPMEM_SCRUB_BAD_ENTRY = 6, /* some recorded hashes are damaged */
	RPMEM_SCRUB_WHY_MAX = 6,
};

/*
 * SCRUB_REPLY: why u8 | generation u64 | count u32 | count x u8 (enum
 * rpmem_scrub_piece, one a piece in request order); generation is the
 * record's (0: none); pieces points into the frame buffer
 */
struct rpmem_msg_scrub_reply {
	uint8_t why;
	uint64_t generation;
	uint32_t count;
	const uint8_t *pieces;
};

/* VERSIONS op */
enum rpmem_versions_op {
	RPMEM_VERSIONS_LIST = 0,  /* VERSIONS_REPLY: the pool's versions */
	RPMEM_VERSIONS_PRUNE = 1, /* prune version (a write open); OK */
	/*
	 * cut a version of a live pool at its writer's next drain boundary
	 * (the write right); STATE: the pool's state and the generation the
	 * cut image has
	 */
	RPMEM_VERSIONS_CREATE = 2,
	RPMEM_VERSIONS_OP_MAX = 2,
};

/*
 * VERSIONS: handle u32 | op u8 | version u64 (PRUNE; LIST: its flags,
 * RPMEM_VERSIONS_LIST_FLAGS or 0; else 0)
 */
struct rpmem_msg_versions {
	uint32_t handle;
	uint8_t op;
	uint64_t version;
};

/*
 * LIST's version field: the reply ends with each entry's flags (a
 * target older than them ignores it and sends none)
 */
#define RPMEM_VERSIONS_LIST_FLAGS 1u
/*
 * LIST's version field, with RPMEM_VERSIONS_LIST_FLAGS: the target reads
 * and checks every record of each version (a scrub's cost), flagging
 * RPMEM_VERSION_BAD_DATA (only to a target with RPMEM_CAP_REPAIR_AT: an
 * older one ignores it)
 */
#define RPMEM_VERSIONS_LIST_CHECK (1u << 1)
/* a version entry's flags: its journal does not read on the target */
#define RPMEM_VERSION_DAMAGED (1u << 0)
/*
 * ... a record's data does not check (found now by RPMEM_VERSIONS_LIST_CHECK,
 * or by an earlier scrub, until a repair or a scrub finds it checking)
 */
#define RPMEM_VERSION_BAD_DATA (1u << 1)

/* most versions one VERSIONS_REPLY lists (the newest ones) */
#define RPMEM_MAX_VERSIONS 1024u

/* one version in VERSIONS_REPLY */
struct rpmem_version_entry {
	uint64_t generation;
	uint64_t time;	    /* unix seconds the image became current */
	uint64_t committed; /* unix seconds it was kept */
	uint64_t size;	    /* of the image */
	uint64_t bytes;	    /* space its files take on the target */
	uint64_t hash;	    /* the image's hash (0: unknown) */
	char source[RPMEM_STR_MAX + 1];
	uint8_t flags; /* RPMEM_VERSION_* (with_flags) */
};

/*
 * VERSIONS_REPLY: count u32 | count x (generation u64 | time u64 |
 * committed u64 | size u64 | bytes u64 | hash u64 | source str(255)),
 * oldest first, then if with_flags (asked by RPMEM_VERSIONS_LIST_FLAGS)
 * count x flags u8; v has room for RPMEM_MAX_VERSIONS (the caller's)
 */
struct rpmem_msg_versions_reply {
	uint32_t count;
	struct rpmem_version_entry *v;
	uint8_t with_flags;
};

/*
 * READ_AT: handle u32 | offset u64 | len u32 | version u64: READ of
 * version's image (the pool's generation: its current one); DATA
 */
struct rpmem_msg_read_at {
	uint32_t handle;
	uint64_t offset;
	uint32_t len; /* <= RPMEM_MAX_IO */
	uint64_t version;
	uint32_t flags; /* RPMEM_READ_*; sent only when not 0 */
};

/*
 * REPAIR_AT: the 24 bytes of READ_AT's head (flags never sent), then len
 * bytes of version's image at offset, in the same frame
 */
#define RPMEM_REPAIR_AT_HDR_SIZE 24

/* READ and READ_AT flag: deliver data the scrub record calls damaged */
#define RPMEM_READ_DAMAGED (1u << 0)
#define RPMEM_READ_FLAGS RPMEM_READ_DAMAGED

/*
 * READ: the 16-byte head of rpmem_msg_io, then flags u32 (RPMEM_READ_*)
 * when not 0 (to a target with RPMEM_CAP_DAMAGE only: an older one
 * refuses a longer READ as malformed); unknown flags are malformed
 */
int rpmem_read_encode(void *buf, size_t cap, const struct rpmem_msg_io *m,
		      uint32_t flags);
int rpmem_read_decode(const void *buf, size_t len, struct rpmem_msg_io *m,
		      uint32_t *flags);

/* GEN op */
enum rpmem_gen_op {
	RPMEM_GEN_GET = 0,     /* the role and history (a read open will do) */
	RPMEM_GEN_PROMOTE = 1, /* new id, role primary (the write right) */
	RPMEM_GEN_DEMOTE = 2,  /* role secondary (the write right) */
	/* the history becomes ids (a write open; after a completed push) */
	RPMEM_GEN_ADOPT = 3,
	/*
	 * a split brain refused: ids are the initiator's history; nothing
	 * changes, the target logs it and publishes an event
	 * (RPMEM_CAP_SPLIT; any open)
	 */
	RPMEM_GEN_SPLIT = 4,
	RPMEM_GEN_OP_MAX = 4,
};

/*
 * GEN flag, PROMOTE: promote a syncing copy (an atomic sync's journal is
 * rolled back first, to the last complete image)
 */
#define RPMEM_GEN_FORCE (1u << 0)
/* GEN flag, SPLIT: the refused sync was a pull (else a push) */
#define RPMEM_GEN_PULL (1u << 1)
/*
 * GEN flag, SPLIT (RPMEM_CAP_SPLIT_LIST): the split brain is resolved, the
 * initiator took the pool's copy (its ids are the pool's history): the
 * pool no longer shows the split brain
 */
#define RPMEM_GEN_RESOLVED (1u << 2)
#define RPMEM_GEN_FLAGS (RPMEM_GEN_FORCE | RPMEM_GEN_PULL | RPMEM_GEN_RESOLVED)

/*
 * GEN: handle u32 | op u8 | flags u32 | count u8 | count x u64 (ADOPT's
 * and SPLIT's ids, newest first; else 0); answered by GEN_REPLY
 */
struct rpmem_msg_gen {
	uint32_t handle;
	uint8_t op;
	uint32_t flags;
	uint8_t count; /* <= RPMEM_MAX_GENERATIONS */
	uint64_t ids[RPMEM_MAX_GENERATIONS];
};

/*
 * GEN_REPLY: role u8 | state u8 | generation u64 | changed u64 |
 * rolled_back u8 | count u8 | count x u64: the pool after the op; changed
 * is the unix seconds of its last change (a completed sync or a
 * promotion), rolled_back says a forced PROMOTE rolled a journal back
 */
struct rpmem_msg_gen_reply {
	uint8_t role;
	uint8_t state;
	uint64_t generation;
	uint64_t changed;
	uint8_t rolled_back;
	uint8_t count;
	uint64_t ids[RPMEM_MAX_GENERATIONS];
};

struct rpmem_msg_set_state {
	uint32_t handle;
	uint8_t state;
	char source[RPMEM_STR_MAX + 1];
	uint32_t flags; /* RPMEM_SET_STATE_*; 0 when absent */
	uint64_t change; /* with RPMEM_SET_STATE_CHANGE, else 0 */
};

/* STATE: the pool's state and generation after a SET_STATE */
struct rpmem_msg_state {
	uint8_t state;
	uint64_t generation;
	/* with RPMEM_SET_STATE_NOTE only, "" none: one line a thing done */
	char note[RPMEM_MSG_MAX + 1];
};

struct rpmem_session_info {
	uint32_t id;
	/* only in the extended layout (RPMEM_STATUS_IDENTITY), else "", 0 */
	char identity[RPMEM_IDENTITY_MAX + 1];
	uint8_t auth; /* enum rpmem_auth_kind */
	char peer[RPMEM_STR_MAX + 1];
	char client[RPMEM_STR_MAX + 1];
	uint8_t xport;
	char pool[2 * RPMEM_NAME_MAX + 2]; /* "region/pool" or "" */
	uint8_t mode;
	uint64_t started;
	uint64_t bytes_written;
	uint64_t bytes_read;
	uint64_t flushes;
	uint64_t last_flush_ns;
};

/* an active PMem namespace of the target, as `ndctl list -N` shows it */
struct rpmem_ns_info {
	char name[RPMEM_NAME_MAX + 1];	    /* "namespace1.0" */
	char nd_region[RPMEM_NAME_MAX + 1]; /* ndctl's "region1" */
	char dev[RPMEM_STR_MAX + 1];	    /* "/dev/dax1.0", "" = none */
	uint8_t mode;			    /* enum rpmem_ns_mode */
	uint64_t size;			    /* usable bytes */
	uint32_t align;			    /* mapping alignment, 0 = n/a */
	int32_t numa;			    /* NUMA node, -1 = unknown */
	char mount[RPMEM_STR_MAX + 1];	    /* DAX mount of fsdax, "" = none */
};

/* an exported region that lies on a namespace */
struct rpmem_ns_link {
	char region[RPMEM_NAME_MAX + 1]; /* rpmemd region name */
	uint32_t ns;			 /* index into namespaces */
};

/* STATUS flags: session entries with identity and auth (RPMEM_CAP_IDENTITY) */
#define RPMEM_STATUS_IDENTITY (1u << 0)
/* STATUS flags: answer one page from cursor (RPMEM_CAP_PAGE) */
#define RPMEM_STATUS_PAGE (1u << 1)
#define RPMEM_STATUS_FLAGS (RPMEM_STATUS_IDENTITY | RPMEM_STATUS_PAGE)

/*
 * STATUS: empty, or flags u32 when not 0 (an older target refuses a
 * STATUS with a payload, so flags go only to a target with the caps),
 * then cursor str with RPMEM_STATUS_PAGE
 */
struct rpmem_msg_status {
	uint32_t flags; /* RPMEM_STATUS_*; 0 when absent */
	char cursor[RPMEM_CURSOR_MAX + 1];
};

/* STATUS_REPLY: arrays owned by the struct; free with rpmem_status_reply_free */
struct rpmem_msg_status_reply {
	/*
	 * RPMEM_STATUS_* the layout follows: read by the encoder, set by
	 * the decoder from its flags argument; not sent
	 */
	uint32_t flags;
	char server[RPMEM_STR_MAX + 1];
	uint64_t pid;
	uint64_t uptime;
	uint32_t caps;
	uint32_t max_sessions;
	uint32_t nsessions;
	struct rpmem_session_info *sessions;
	uint32_t nnamespaces; /* <= RPMEM_MAX_NAMESPACES */
	struct rpmem_ns_info *namespaces;
	uint32_t nlinks; /* <= RPMEM_MAX_NS_LINKS */
	struct rpmem_ns_link *links;
	char next[RPMEM_CURSOR_MAX + 1]; /* a page's: "" = the last */
};

/* --- codec -------------------------------------------------------------- */

/*
 * rpmem_hdr_encode -- write a 16-byte frame header
 */
void rpmem_hdr_encode(uint8_t *buf, const struct rpmem_hdr *h);

/*
 * rpmem_hdr_decode -- parse and check a 16-byte frame header: magic, known
 * type, payload length within RPMEM_MAX_PAYLOAD. Returns 0, -EBADMSG (bad
 * magic), -ENOTSUP (unknown type) or -EMSGSIZE (too long).
 */
int rpmem_hdr_decode(const uint8_t *buf, struct rpmem_hdr *h);

/*
 * Encoders write a payload into buf[cap] and return its length, or
 * -EMSGSIZE if it does not fit. Decoders parse exactly len bytes and
 * return 0, or -EBADMSG on a short, long or malformed payload (a string
 * too long, a bad enum value, an offset + length that overflows).
 */
#define RPMEM_CODEC(name, type)                                               \
	int rpmem_##name##_encode(void *buf, size_t cap, const type *m);      \
	int rpmem_##name##_decode(const void *buf, size_t len, type *m)

RPMEM_CODEC(hello, struct rpmem_msg_hello);
RPMEM_CODEC(hello_ok, struct rpmem_msg_hello_ok);
RPMEM_CODEC(error, struct rpmem_msg_error);
RPMEM_CODEC(list, struct rpmem_msg_list);
RPMEM_CODEC(list_reply, struct rpmem_msg_list_reply);
RPMEM_CODEC(create, struct rpmem_msg_create);
RPMEM_CODEC(remove, struct rpmem_msg_remove);
RPMEM_CODEC(open, struct rpmem_msg_open);
RPMEM_CODEC(open_ok, struct rpmem_msg_open_ok);
RPMEM_CODEC(handle, struct rpmem_msg_handle);
RPMEM_CODEC(io, struct rpmem_msg_io); /* READ and WRITE's 16-byte head */
RPMEM_CODEC(flush, struct rpmem_msg_flush);
RPMEM_CODEC(versions, struct rpmem_msg_versions);
RPMEM_CODEC(versions_reply, struct rpmem_msg_versions_reply);
RPMEM_CODEC(read_at, struct rpmem_msg_read_at);
RPMEM_CODEC(hash, struct rpmem_msg_hash);
RPMEM_CODEC(hashv, struct rpmem_msg_hashv);
RPMEM_CODEC(hashes, struct rpmem_msg_hashes);
RPMEM_CODEC(set_state, struct rpmem_msg_set_state);
RPMEM_CODEC(state, struct rpmem_msg_state);
RPMEM_CODEC(status, struct rpmem_msg_status);
RPMEM_CODEC(status_reply, struct rpmem_msg_status_reply);
RPMEM_CODEC(kick, struct rpmem_msg_kick);
RPMEM_CODEC(events, struct rpmem_msg_events);
RPMEM_CODEC(event, struct rpmem_msg_event);
RPMEM_CODEC(scrub, struct rpmem_msg_scrub);
RPMEM_CODEC(scrub_reply, struct rpmem_msg_scrub_reply);
RPMEM_CODEC(preserve, struct rpmem_msg_preserve);
RPMEM_CODEC(gen, struct rpmem_msg_gen);
RPMEM_CODEC(gen_reply, struct rpmem_msg_gen_reply);

/*
 * rpmem_status_reply_decode_flags -- decode a STATUS_REPLY in the layout
 * that a STATUS with flags asked for (rpmem_status_reply_decode: flags 0)
 */
int rpmem_status_reply_decode_flags(const void *buf, size_t len,
				    uint32_t flags,
				    struct rpmem_msg_status_reply *m);

/*
 * rpmem_list_reply_decode_flags -- decode a LIST_REPLY in the layout
 * that a LIST with flags asked for (rpmem_list_reply_decode: flags 0)
 */
int rpmem_list_reply_decode_flags(const void *buf, size_t len, uint32_t flags,
				  struct rpmem_msg_list_reply *m);

void rpmem_list_reply_free(struct rpmem_msg_list_reply *m);
void rpmem_status_reply_free(struct rpmem_msg_status_reply *m);

/* rpmem_range_ok -- offset + len lies inside [0, size) without overflow */
static inline int rpmem_range_ok(uint64_t off, uint64_t len, uint64_t size)
{
	return off <= size && len <= size - off;
}

/* --- proto_codes.c: codes as text, the errno map ----------------------- */

const char *rpmem_err_str(uint32_t code);
const char *rpmem_state_str(uint8_t state);
const char *rpmem_xport_str(uint8_t xport);
const char *rpmem_region_type_str(uint8_t type);
const char *rpmem_ns_mode_str(uint8_t mode);
const char *rpmem_auth_str(uint8_t auth); /* "none", "psk", "x509" */
const char *rpmem_msg_type_str(uint16_t type);
const char *rpmem_event_verb_str(uint8_t verb);	    /* "exists", ... */
const char *rpmem_event_object_str(uint8_t object); /* "-", "pool", ... */
/* rpmem_scrub_why_str -- why pieces were not verified, a phrase */
const char *rpmem_scrub_why_str(uint8_t why);
const char *rpmem_role_str(uint8_t role); /* "secondary", "primary" */

/*
 * rpmem_err_from_errno -- the ERROR code rpmemd sends for a failed call's
 * -errno (never AUTH, VERSION, XPORT, INTERNAL or DENIED: those are sent on
 * purpose); rpmem_errno_from_err -- the -errno an initiator returns for a
 * received code (-EREMOTEIO for an unknown one). One table, both ends.
 */
uint32_t rpmem_err_from_errno(int err);
int rpmem_errno_from_err(uint32_t code);

#endif
