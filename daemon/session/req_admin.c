/* SPDX-License-Identifier: BSD-3-Clause */
/* req_admin.c -- administrative requests: KICK (end another session) */
#include <errno.h>

#include "access.h"
#include "log.h"
#include "session_int.h"
#include "util.h"

/* req_kick -- KICK: end session m.session, release its pools */
int req_kick(struct rpmemd_session *s, const struct rpmem_hdr *hd)
{
	struct rpmem_msg_kick m;
	char by[RPMEM_STR_MAX + 1], victim[2 * RPMEM_STR_MAX + 64];
	int ret;

	if (rpmem_kick_decode(s->req, hd->len, &m))
		return conn_bad_payload(s, hd);
	/* the admin right of the access rules (plaintext daemons: anyone) */
	int ok;
	if ((ret = rpmemd_authz_check(s, hd->id, RPMEMD_RIGHT_ADMIN, NULL,
				      &ok)) ||
	    !ok)
		return ret;
	rpmem_strlcpy(by, s->holder, sizeof(by));
	ret = rpmemd_sessions_kick(s->set, s, m.session, by, victim,
				   sizeof(victim));
	if (ret == -EINVAL)
		return conn_reply_err(s, hd->id, RPMEM_E_INVAL,
				      "session %u is the one asking; end it with BYE",
				      m.session);
	if (ret)
		return conn_reply_err(s, hd->id, RPMEM_E_INVAL,
				      "no session %u on this target (see rpmemctl status)",
				      m.session);
	NOTICE("%s kicked %s", by, victim);
	return conn_reply_ok(s, hd->id);
}
