/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * errors.c -- where an error's message lives for the call that failed:
 * in the calling thread until its next library call (rpmemctl_strerror,
 * *_open_err); the session, pool or replica it concerns keeps its own
 * (session/sess_err.c, pool/pool_err.c, their layers' objects)
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "client_base.h"
#include "util.h"

/*
 * The message of the failed call that is running or just returned, in
 * this thread. Every public call returning int starts by clearing it
 * (client_api_begin), so it never describes an earlier call.
 */
static __thread int last_err;
static __thread char last_msg[CLIENT_ERRMSG_MAX];

void client_vmsg(char *dst, size_t len, const char *fmt, va_list ap)
{
	char raw[CLIENT_ERRMSG_MAX];

	vsnprintf(raw, sizeof(raw), fmt, ap);
	rpmem_text_escape(raw, dst, len);
}

void client_set_last(int err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	client_vmsg(last_msg, sizeof(last_msg), fmt, ap);
	va_end(ap);
	last_err = err;
}

void client_api_begin(void)
{
	last_err = 0;
	last_msg[0] = '\0';
}

const char *client_last(int err)
{
	return err && err == last_err && last_msg[0] ? last_msg : NULL;
}

int client_api_end(int ret, const char *what)
{
	if (ret >= 0)
		client_api_begin(); /* nested calls' messages are not its */
	else if (!client_last(ret))
		client_set_last(ret, "%s: %s", what, rpmemctl_strerror(ret));
	return ret;
}

void client_copy_err(int ret, char *buf, size_t len)
{
	if (!buf || !len)
		return;
	const char *msg = ret < 0 ? client_last(ret) : "";
	snprintf(buf, len, "%s", msg ? msg : rpmemctl_strerror(ret));
}

/*
 * rpmemctl_strerror -- the message of this thread's last call when it
 * failed with err, else a generic description of err
 */
RPMEM_EXPORT const char *rpmemctl_strerror(int err)
{
	const char *msg = client_last(err);
	if (msg)
		return msg;
	switch (err) {
	case 0:
		return "success";
	case -ECONNREFUSED:
		return "connection refused (is rpmemd running?)";
	case -ECONNRESET:
		return "connection to the target lost";
	case -EPROTO:
		return "protocol error";
	case -EPROTONOSUPPORT:
		return "no common protocol version with the target";
	case -EACCES:
		return "authentication required or failed";
	case -EKEYREJECTED:
		return "the target rejected the RDMA connection (token "
		       "refused or expired)";
	case -ENODEV:
		return "no such region";
	case -ENOENT:
		return "no such pool";
	case -EBUSY:
		return "pool is open for writing by another session";
	case -EROFS:
		return "pool is open read-only";
	case -EUSERS:
		return "too many sessions or open pools on the target";
	case -ESHUTDOWN:
		return "the target is shutting down";
	case -EREMOTEIO:
		return "internal error on the target";
	}
	return strerror(err < 0 ? -err : err);
}
