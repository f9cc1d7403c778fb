/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pool_err.c -- a failed call on a pool: its message names the pool and
 * is kept in the pool, its session and the calling thread; whether a call
 * can be made on it at all (client_pool_usable)
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "client_pool.h"
#include "util.h"

void client_pool_seterr(struct rpmemctl_pool *p, const char *fmt, ...)
{
	struct rpmemctl_session *s = p->sess;
	va_list ap;
	va_start(ap, fmt);
	client_vmsg(s->errmsg, sizeof(s->errmsg), fmt, ap);
	va_end(ap);
	s->err_pool = p;
}

void client_pool_begin(struct rpmemctl_pool *p)
{
	if (!p) {
		client_api_begin();
		return;
	}
	client_sess_begin(p->sess);
	p->errmsg[0] = '\0';
}

/* pool_seterr -- set the pool's message (printf style, truncated) */
__attribute__((format(printf, 2, 3))) static void
pool_seterr(struct rpmemctl_pool *p, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	client_vmsg(p->errmsg, sizeof(p->errmsg), fmt, ap);
	va_end(ap);
}

int client_pool_end(struct rpmemctl_pool *p, int ret, const char *what)
{
	if (ret >= 0)
		return client_api_end(ret, what);
	if (!p) {
		client_set_last(ret, "%s: no pool", what);
		return ret;
	}
	struct rpmemctl_session *s = p->sess;
	if (!s)
		pool_seterr(p, "%s on pool '%s' in region '%s' failed: its "
			    "session was closed", what, p->name, p->region);
	else if (!s->errmsg[0])
		pool_seterr(p, "%s on pool '%s' in region '%s' failed: %s",
			    what, p->name, p->region, strerror(-ret));
	else if (s->err_pool == p)
		rpmem_strlcpy(p->errmsg, s->errmsg, sizeof(p->errmsg));
	else
		pool_seterr(p, "%s on pool '%s' in region '%s' failed: %s",
			    what, p->name, p->region, s->errmsg);
	/* the session reports its pools' failures too */
	if (s && !s->errmsg[0]) {
		rpmem_strlcpy(s->errmsg, p->errmsg, sizeof(s->errmsg));
		s->err_pool = p;
	}
	client_set_last(ret, "%s", p->errmsg);
	return ret;
}

int client_pool_usable(struct rpmemctl_pool *p)
{
	if (!p)
		return -EINVAL;
	if (!p->sess)
		return -ENOTCONN;
	return client_check(p->sess);
}
