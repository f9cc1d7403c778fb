/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sess_err.c -- a failed call on a session: its message kept in the
 * session and in the calling thread (base/errors.c)
 */
#include <string.h>

#include "client_session.h"

void client_sess_begin(struct rpmemctl_session *s)
{
	client_api_begin();
	/* a lost connection keeps what broke it: every call fails with it */
	if (s && !s->lost) {
		s->errmsg[0] = '\0';
		s->err_pool = NULL;
	}
}

int client_sess_end(struct rpmemctl_session *s, int ret, const char *what)
{
	if (ret >= 0)
		return client_api_end(ret, what);
	if (!s) {
		client_set_last(ret, "%s: no session", what);
		return ret;
	}
	if (!s->errmsg[0])
		client_seterr(s, "%s on %s:%s failed: %s", what, s->host,
			      s->port, strerror(-ret));
	client_set_last(ret, "%s", s->errmsg);
	return ret;
}
