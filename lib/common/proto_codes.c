/* SPDX-License-Identifier: BSD-3-Clause */
/* proto_codes.c -- the protocol's codes as text; the errno/ERROR-code map */
#include <errno.h>
#include <stddef.h>

#include "proto.h"

static const char *const err_names[] = {
	[RPMEM_E_PROTO] = "protocol error",
	[RPMEM_E_VERSION] = "protocol version mismatch",
	[RPMEM_E_AUTH] = "authentication failed",
	[RPMEM_E_NOREGION] = "no such region",
	[RPMEM_E_NOPOOL] = "no such pool",
	[RPMEM_E_EXISTS] = "pool exists",
	[RPMEM_E_BUSY] = "pool busy",
	[RPMEM_E_NOSPACE] = "no space left in region",
	[RPMEM_E_INVAL] = "invalid argument",
	[RPMEM_E_IO] = "I/O error on the target",
	[RPMEM_E_LIMIT] = "limit reached",
	[RPMEM_E_RDONLY] = "pool opened read-only",
	[RPMEM_E_XPORT] = "transport unavailable",
	[RPMEM_E_SHUTDOWN] = "target shutting down",
	[RPMEM_E_INTERNAL] = "internal error on the target",
	[RPMEM_E_DENIED] = "permission denied",
	[RPMEM_E_DAMAGED] = "data damaged on the target",
};

/* rpmem_err_str -- an ERROR code as text */
const char *rpmem_err_str(uint32_t code)
{
	if (code == 0 || code > RPMEM_E_MAX)
		return "unknown error";
	return err_names[code];
}

/* rpmem_state_str -- a pool state as text */
const char *rpmem_state_str(uint8_t state)
{
	switch (state) {
	case RPMEM_POOL_EMPTY:
		return "empty";
	case RPMEM_POOL_SYNCING:
		return "syncing";
	case RPMEM_POOL_CONSISTENT:
		return "consistent";
	}
	return "unknown";
}

/* rpmem_xport_str -- a transport as text */
const char *rpmem_xport_str(uint8_t xport)
{
	switch (xport) {
	case RPMEM_XPORT_TCP:
		return "tcp";
	case RPMEM_XPORT_RDMA:
		return "rdma";
	case RPMEM_XPORT_AUTO:
		return "auto";
	}
	return "unknown";
}

/* rpmem_region_type_str -- a region type as text */
const char *rpmem_region_type_str(uint8_t type)
{
	switch (type) {
	case RPMEM_REGION_DIR:
		return "dir";
	case RPMEM_REGION_FSDAX:
		return "fsdax";
	case RPMEM_REGION_DEVDAX:
		return "devdax";
	}
	return "unknown";
}

/* rpmem_ns_mode_str -- a namespace mode as text */
const char *rpmem_ns_mode_str(uint8_t mode)
{
	switch (mode) {
	case RPMEM_NS_RAW:
		return "raw";
	case RPMEM_NS_SECTOR:
		return "sector";
	case RPMEM_NS_FSDAX:
		return "fsdax";
	case RPMEM_NS_DEVDAX:
		return "devdax";
	}
	return "unknown";
}

/* rpmem_auth_str -- an authentication method as text */
const char *rpmem_auth_str(uint8_t auth)
{
	switch (auth) {
	case RPMEM_AUTH_NONE:
		return "none";
	case RPMEM_AUTH_PSK:
		return "psk";
	case RPMEM_AUTH_X509:
		return "x509";
	}
	return "unknown";
}

static const char *const msg_names[] = {
	[RPMEM_MSG_HELLO] = "HELLO",	   [RPMEM_MSG_HELLO_OK] = "HELLO_OK",
	[RPMEM_MSG_ERROR] = "ERROR",	   [RPMEM_MSG_OK] = "OK",
	[RPMEM_MSG_LIST] = "LIST",	   [RPMEM_MSG_LIST_REPLY] = "LIST_REPLY",
	[RPMEM_MSG_CREATE] = "CREATE",	   [RPMEM_MSG_REMOVE] = "REMOVE",
	[RPMEM_MSG_OPEN] = "OPEN",	   [RPMEM_MSG_OPEN_OK] = "OPEN_OK",
	[RPMEM_MSG_CLOSE] = "CLOSE",	   [RPMEM_MSG_WRITE] = "WRITE",
	[RPMEM_MSG_READ] = "READ",	   [RPMEM_MSG_DATA] = "DATA",
	[RPMEM_MSG_FLUSH] = "FLUSH",	   [RPMEM_MSG_HASH] = "HASH",
	[RPMEM_MSG_HASHES] = "HASHES",	   [RPMEM_MSG_SET_STATE] = "SET_STATE",
	[RPMEM_MSG_STATUS] = "STATUS",	   [RPMEM_MSG_STATUS_REPLY] = "STATUS_REPLY",
	[RPMEM_MSG_BYE] = "BYE",	   [RPMEM_MSG_HASHV] = "HASHV",
	[RPMEM_MSG_STATE] = "STATE",
	[RPMEM_MSG_KICK] = "KICK",
	[25] = "RESERVED_25",
	[RPMEM_MSG_EVENTS] = "EVENTS",	   [RPMEM_MSG_EVENT] = "EVENT",
	[RPMEM_MSG_PRESERVE] = "PRESERVE",
	[RPMEM_MSG_SCRUB] = "SCRUB",	   [RPMEM_MSG_SCRUB_REPLY] = "SCRUB_REPLY",
	[RPMEM_MSG_BARRIER] = "BARRIER",
	[RPMEM_MSG_VERSIONS] = "VERSIONS",
	[RPMEM_MSG_VERSIONS_REPLY] = "VERSIONS_REPLY",
	[RPMEM_MSG_READ_AT] = "READ_AT",
	[RPMEM_MSG_GEN] = "GEN",
	[RPMEM_MSG_GEN_REPLY] = "GEN_REPLY",
	[RPMEM_MSG_REPAIR] = "REPAIR",
	[RPMEM_MSG_REPAIR_AT] = "REPAIR_AT",
};

static const char *const scrub_why[] = {
	[RPMEM_SCRUB_RECORDED] = "compared with the hashes recorded at commit",
	[RPMEM_SCRUB_NO_RECORD] = "no hashes were recorded for this pool (it was last committed by an older rpmemd, or it is on a devdax region)",
	[RPMEM_SCRUB_SYNCING] = "the pool is not consistent (a sync was interrupted or is running): its image was never recorded",
	[RPMEM_SCRUB_STALE] = "the recorded hashes are of another image of the pool (recording its last commit failed)",
	[RPMEM_SCRUB_CHANGED] = "a sync changed the pool during the scrub",
	[RPMEM_SCRUB_WRITER] = "the pool is open for writing (a sync or a live replica): its data may change under the scrub",
	[RPMEM_SCRUB_BAD_ENTRY] = "the recorded hash of the piece is itself damaged",
};

const char *rpmem_scrub_why_str(uint8_t why)
{
	return why < sizeof(scrub_why) / sizeof(scrub_why[0]) ?
		       scrub_why[why] : "unknown reason";
}

/* rpmem_role_str -- a pool's role as text */
const char *rpmem_role_str(uint8_t role)
{
	return role == RPMEM_ROLE_PRIMARY ? "primary" : "secondary";
}

static const char *const verb_names[] = {
	[RPMEM_EV_EXISTS] = "exists",	[RPMEM_EV_CREATE] = "create",
	[RPMEM_EV_CHANGE] = "change",	[RPMEM_EV_DESTROY] = "destroy",
	[RPMEM_EV_REFUSE] = "refuse",	[RPMEM_EV_OVERFLOW] = "overflow",
};

static const char *const object_names[] = {
	[RPMEM_EVO_NONE] = "-",		[RPMEM_EVO_SESSION] = "session",
	[RPMEM_EVO_POOL] = "pool",	[RPMEM_EVO_TRANSFER] = "transfer",
	[RPMEM_EVO_CONNECTION] = "connection",
};

/* rpmem_event_verb_str -- an event verb as text */
const char *rpmem_event_verb_str(uint8_t verb)
{
	return verb <= RPMEM_EV_VERB_MAX ? verb_names[verb] : "unknown";
}

/* rpmem_event_object_str -- an event object as text */
const char *rpmem_event_object_str(uint8_t object)
{
	return object <= RPMEM_EVO_OBJECT_MAX ? object_names[object] :
						 "unknown";
}

/* rpmem_msg_type_str -- a message type as text */
const char *rpmem_msg_type_str(uint16_t type)
{
	if (type == 0 || type > RPMEM_MSG_TYPE_MAX)
		return "UNKNOWN";
	return msg_names[type];
}

/*
 * The one map between errno values and ERROR codes, used by both ends:
 * rpmemd turns the -errno of a failed pool-store call into a code, the
 * initiator turns a received code back into -errno. Codes marked
 * `explicit` are only ever sent on purpose (a failed handshake, a missing
 * transport, a right the identity lacks, an internal fault), never
 * derived from an errno: an EACCES
 * from the target's file system is an I/O error on the target, not a
 * failed authentication.
 */
static const struct {
	uint32_t code;
	int err;
	int explicit;
} err_map[] = {
	{ RPMEM_E_PROTO, EPROTO, 0 },
	{ RPMEM_E_VERSION, EPROTONOSUPPORT, 1 },
	{ RPMEM_E_AUTH, EACCES, 1 },
	{ RPMEM_E_NOREGION, ENODEV, 0 },
	{ RPMEM_E_NOPOOL, ENOENT, 0 },
	{ RPMEM_E_EXISTS, EEXIST, 0 },
	{ RPMEM_E_BUSY, EBUSY, 0 },
	{ RPMEM_E_NOSPACE, ENOSPC, 0 },
	{ RPMEM_E_INVAL, EINVAL, 0 },
	{ RPMEM_E_IO, EIO, 0 },
	{ RPMEM_E_LIMIT, EUSERS, 0 },
	{ RPMEM_E_RDONLY, EROFS, 0 },
	{ RPMEM_E_XPORT, ENOTSUP, 1 },
	{ RPMEM_E_SHUTDOWN, ESHUTDOWN, 0 },
	{ RPMEM_E_INTERNAL, EREMOTEIO, 1 },
	/* an EPERM of the target's file system is an I/O error there */
	{ RPMEM_E_DENIED, EPERM, 1 },
	/* sent on purpose: a read refused as damaged (not any EILSEQ) */
	{ RPMEM_E_DAMAGED, EILSEQ, 1 },
};

/* rpmem_err_from_errno -- the ERROR code for a -errno (proto.h) */
uint32_t rpmem_err_from_errno(int err)
{
	if (err < 0)
		err = -err;
	for (size_t i = 0; i < sizeof(err_map) / sizeof(err_map[0]); i++)
		if (err_map[i].err == err && !err_map[i].explicit)
			return err_map[i].code;
	switch (err) {
	case ENOMEM:
	case EMFILE:
	case ENFILE:
		return RPMEM_E_LIMIT;
	case ERANGE:
	case EOVERFLOW:
	case EFBIG:
		return RPMEM_E_INVAL;
	case EDQUOT:
		return RPMEM_E_NOSPACE;
	}
	return RPMEM_E_IO;
}

/* rpmem_errno_from_err -- the -errno for an ERROR code (proto.h) */
int rpmem_errno_from_err(uint32_t code)
{
	for (size_t i = 0; i < sizeof(err_map) / sizeof(err_map[0]); i++)
		if (err_map[i].code == code)
			return -err_map[i].err;
	return -EREMOTEIO;
}
