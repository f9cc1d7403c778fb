/* SPDX-License-Identifier: BSD-3-Clause */
/* req_admin.c -- administrative requests: KICK (end another session) */
#include <errno.h>

#include "log.h"
#include "session_int.h"
#include "util.h"

/*
 * admin_allowed -- may session s act as an administrator (KICK)? 0 or
 * -EACCES. This version has no client identities: every client may, as
 * every client may already remove any pool. The authorization branch
 * fills this in (the admin right of the authenticated client); it is
 * the one place that decides.
 */
static int admin_allowed(const struct rpmemd_session *s)
{
	(void)s;
	return 0;
}

/* req_kick -- KICK: end session m.session, release its pools */
int req_kick(struct rpmemd_session *s, const struct rpmem_hdr *hd)
{
	struct rpmem_msg_kick m;
	char by[RPMEM_STR_MAX + 1], victim[2 * RPMEM_STR_MAX + 64];
	int ret;

	if (rpmem_kick_decode(s->req, hd->len, &m))
		return conn_bad_payload(s, hd);
	if (admin_allowed(s)) {
		NOTICE("%s may not kick session %u: not an administrator",
		       s->holder, m.session);
		return conn_reply_err(s, hd->id, RPMEM_E_AUTH,
				      "kicking a session needs the administrator right");
	}
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
