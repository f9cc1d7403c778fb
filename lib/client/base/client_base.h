/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * client_base.h -- the bottom layer of librpmemctl (lib/client/base/):
 * where an error's message lives for the calling thread, and the text
 * helpers. It knows no session, pool, sync or link.
 */
#ifndef RPMEM_CLIENT_BASE_H
#define RPMEM_CLIENT_BASE_H

#include <stdarg.h>
#include <stddef.h>

#include "librpmemctl.h"
#include "proto.h"

/* room for a target's message plus our own context */
#define CLIENT_ERRMSG_MAX (RPMEM_MSG_MAX + 256)

/* --- errors.c ----------------------------------------------------------- */

/*
 * Every public call returning int is bracketed: a *_begin at its start
 * clears the calling thread's message (and the object's), the matching
 * *_end on its way out makes sure a failure has a message, in the object
 * it concerns and in the thread (rpmemctl_strerror, *_open_err). Calls
 * nested inside another public call do the same; the outer *_end has
 * the last word.
 */

/*
 * client_vmsg -- printf into an error message buffer dst[len], the text
 * escaped (rpmem_text_escape): a message may quote what a target sent,
 * and whoever prints it must not pass a terminal's controls on. Every
 * error message of the library is written through it.
 */
void client_vmsg(char *dst, size_t len, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));

/*
 * client_set_last -- err and its text for this thread's current call
 * (errors with no object to hold them)
 */
void client_set_last(int err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* client_last -- the current call's message if it failed with err, or NULL */
const char *client_last(int err);
/* client_api_begin -- a public call starts: forget the thread's message */
void client_api_begin(void);
/* client_api_end -- give a failure with no message a generic one */
int client_api_end(int ret, const char *what);
/* client_copy_err -- the current call's message for ret into buf */
void client_copy_err(int ret, char *buf, size_t len);

#endif
