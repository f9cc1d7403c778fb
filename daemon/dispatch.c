/* SPDX-License-Identifier: BSD-3-Clause */
/* dispatch.c -- the request loop of an established session */
#include <errno.h>

#include "session_int.h"

/*
 * rpmemd_serve -- the request loop after the handshake. Returns 0 after BYE,
 * -ECONNRESET when the client went away, -ESHUTDOWN when the daemon
 * stops, or another -errno.
 */
int rpmemd_serve(struct rpmemd_session *s)
{
	struct rpmem_hdr hd;
	for (;;) {
		int ret = conn_recv_request(s, &hd);
		if (ret == 1)
			continue;
		if (ret)
			return ret;
		switch (hd.type) {
		case RPMEM_MSG_WRITE:
			ret = req_write(s, &hd);
			break;
		case RPMEM_MSG_READ:
			ret = req_read(s, &hd);
			break;
		case RPMEM_MSG_FLUSH:
			ret = req_flush(s, &hd);
			break;
		case RPMEM_MSG_HASH:
			ret = req_hash(s, &hd);
			break;
		case RPMEM_MSG_HASHV:
			ret = req_hashv(s, &hd);
			break;
		case RPMEM_MSG_LIST:
			ret = req_list(s, &hd);
			break;
		case RPMEM_MSG_CREATE:
			ret = req_create(s, &hd);
			break;
		case RPMEM_MSG_REMOVE:
			ret = req_remove(s, &hd);
			break;
		case RPMEM_MSG_OPEN:
			ret = req_open(s, &hd);
			break;
		case RPMEM_MSG_CLOSE:
			ret = req_close(s, &hd);
			break;
		case RPMEM_MSG_SET_STATE:
			ret = req_set_state(s, &hd);
			break;
		case RPMEM_MSG_STATUS:
			ret = req_status(s, &hd);
			break;
		case RPMEM_MSG_BYE:
			return 0;
		case RPMEM_MSG_HELLO:
			ret = conn_reply_err(s, hd.id, RPMEM_E_PROTO,
					     "HELLO received twice");
			break;
		default:
			ret = conn_reply_err(s, hd.id, RPMEM_E_PROTO,
					     "unexpected %s from a client",
					     rpmem_msg_type_str(hd.type));
			break;
		}
		if (ret)
			return ret;
		/* stopping: this request is done, take no other */
		if (__atomic_load_n(&s->set->stopping, __ATOMIC_RELAXED))
			return -ESHUTDOWN;
	}
}
