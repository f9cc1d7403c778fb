/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cli.c -- rpmemctl: messages, exit codes and hints (options: options.c,
 * connections: connect.c, the local file: local.c, progress, tables and
 * formatting: output.c)
 */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"

/* --- messages ------------------------------------------------------------ */

/* CMD_TEXT_MAX -- room for an escaped message: 4 bytes per byte at most */
#define CMD_TEXT_MAX (4 * CMD_MSG_MAX + 1)
/* CMD_TEXT_BUFS -- how many results of cmd_text one call may use at once */
#define CMD_TEXT_BUFS 4

const char *cmd_text(const char *s)
{
	static __thread char buf[CMD_TEXT_BUFS][CMD_TEXT_MAX];
	static __thread unsigned next;
	char *b = buf[next++ % CMD_TEXT_BUFS];

	rpmemctl_text_escape(s ? s : "", b, CMD_TEXT_MAX);
	return b;
}

/* cmd_vtext -- printf, escaped (cmd_text) */
static void cmd_vtext(FILE *f, const char *fmt, va_list ap)
{
	char raw[CMD_MSG_MAX];

	vsnprintf(raw, sizeof(raw), fmt, ap);
	fputs(cmd_text(raw), f);
}

/* cmd_vmsg -- "rpmemctl: <command>: <prefix><message>\n" on f */
void cmd_vmsg(struct rpmemctl_ctx *ctx, FILE *f, const char *prefix,
	      const char *fmt, va_list ap)
{
	if (ctx && ctx->mute)
		return;
	fflush(stdout); /* keep the order of interleaved stdout and stderr */
	fputs("rpmemctl: ", f);
	if (ctx && ctx->cmd)
		fprintf(f, "%s: ", ctx->cmd);
	fputs(prefix, f);
	cmd_vtext(f, fmt, ap);
	fputc('\n', f);
}

void cmd_err(struct rpmemctl_ctx *ctx, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cmd_vmsg(ctx, stderr, "", fmt, ap);
	va_end(ap);
}

void cmd_warn(struct rpmemctl_ctx *ctx, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cmd_vmsg(ctx, stderr, "warning: ", fmt, ap);
	va_end(ap);
}

void cmd_info(struct rpmemctl_ctx *ctx, const char *fmt, ...)
{
	va_list ap;

	if (ctx->quiet || ctx->json)
		return;
	va_start(ap, fmt);
	cmd_vtext(stdout, fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
}

void cmd_dbg(struct rpmemctl_ctx *ctx, const char *fmt, ...)
{
	va_list ap;

	if (!ctx->verbose)
		return;
	va_start(ap, fmt);
	cmd_vmsg(ctx, stderr, "", fmt, ap);
	va_end(ap);
}

/*
 * cmd_log_level -- the library's log priority for -v (err, info, debug);
 * RPMEM_LOG_LEVEL, which the library applies itself, wins over -v
 */
void cmd_log_level(struct rpmemctl_ctx *ctx)
{
	const char *env = getenv("RPMEM_LOG_LEVEL");

	if (env && rpmemctl_log_parse_priority(env) >= 0)
		return;
	rpmemctl_log_set_priority(ctx->verbose > 1 ? LOG_DEBUG :
				  ctx->verbose ? LOG_INFO : LOG_ERR);
}

/*
 * cmd_lib_log -- the library's log lines, shown with -v only, as
 * "rpmemctl: lib: <message>"
 */
void cmd_lib_log(int prio, const char *msg, void *arg)
{
	struct rpmemctl_ctx *ctx = arg;

	(void)prio;
	if (!ctx->verbose)
		return;
	fflush(stdout); /* keep the order of interleaved stdout and stderr */
	fprintf(stderr, "rpmemctl: lib: %s\n", cmd_text(msg));
}

int cmd_human(struct rpmemctl_ctx *ctx)
{
	return !ctx->json;
}

/* cmd_now_ns -- CLOCK_MONOTONIC in nanoseconds */
uint64_t cmd_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* cmd_finish -- flush stdout; a failed write turns code into an error */
int cmd_finish(struct rpmemctl_ctx *ctx, int code)
{
	int err = 0;

	if (fflush(stdout) != 0)
		err = errno;
	if (err || ferror(stdout)) {
		fputs("rpmemctl: ", stderr);
		if (ctx && ctx->cmd)
			fprintf(stderr, "%s: ", ctx->cmd);
		fprintf(stderr, "write error on standard output: %s\n",
			err ? strerror(err) : "I/O error");
		if (code == CMD_EXIT_OK || code == CMD_EXIT_DIFFER)
			code = CMD_EXIT_INTERNAL;
	}
	return code;
}

/* --- errors from the library --------------------------------------------- */

/*
 * cmd_exit_code -- exit code for -errno from a call on an open session:
 * the connection failed (3), the target refused (4, also a rejected RDMA
 * data connection: the control connection worked), the local file
 * changed or could not be read under its mapping (5), or something broke
 * (6). Never a raw errno.
 */
int cmd_exit_code(int err)
{
	if (err >= 0)
		return err == 1 ? CMD_EXIT_DIFFER : CMD_EXIT_OK;

	switch (-err) {
	case ECONNREFUSED:
	case ECONNRESET:
	case ECONNABORTED:
	case ETIMEDOUT:
	case EHOSTUNREACH:
	case EHOSTDOWN:
	case ENETUNREACH:
	case ENETDOWN:
	case ENETRESET:
	case EPIPE:
	case ENOTCONN:
	case EACCES:
		return CMD_EXIT_CONNECT;
	case EKEYREJECTED: /* the target rejected the RDMA data connection */
	case ENOENT:
	case EEXIST:
	case EBUSY:
	case ENOSPC:
	case EDQUOT:
	case EFBIG:
	case EINVAL:
	case ERANGE:
	case ENAMETOOLONG:
	case EROFS:
	case EPERM:
	case ENOTSUP:
	case EPROTONOSUPPORT:
	case ENODEV:
	case EIO:
	case EMFILE:
	case ENFILE:
	case EUSERS:
	case EAGAIN:
	case ESHUTDOWN:
	case ENODATA:
	case EREMOTEIO:
	case EUCLEAN: /* generation histories: it would lose newer writes */
		return CMD_EXIT_REFUSED;
	case EILSEQ: /* data the target's scrub record calls damaged */
		return CMD_EXIT_DAMAGED;
	case EFAULT:	 /* the local file shrank under its mapping */
	case EHWPOISON:	 /* a media error in the local file */
	case ESTALE:	 /* the local file changed during the transfer */
		return CMD_EXIT_LOCAL;
	case EPROTO:
	case EBADMSG:
	case EMSGSIZE:
	case ENOMEM:
		return CMD_EXIT_INTERNAL;
	default:
		break;
	}
	return CMD_EXIT_INTERNAL;
}

/* cmd_hint -- advice appended to an error message, "" if none */
const char *cmd_hint(int err)
{
	switch (-err) {
	case ECONNREFUSED:
		return "is rpmemd running?";
	case ETIMEDOUT:
	case EHOSTUNREACH:
	case EHOSTDOWN:
	case ENETUNREACH:
	case ENETDOWN:
		return "check the host name and the network";
	case ECONNRESET:
	case ECONNABORTED:
	case EPIPE:
	case ENOTCONN:
		return "is rpmemd still running? see its log";
	case EACCES:
		return "check the target's authentication settings";
	case EKEYREJECTED:
		return "retry, or try --transport tcp";
	case EBUSY:
		return "retry later";
	case EEXIST:
		return "remove it first or choose another name";
	case ENOSPC:
	case EDQUOT:
		return "see 'rpmemctl list HOST/REGION' for free space";
	case ENOENT:
	case ENODEV:
		return "see 'rpmemctl list HOST'";
	case ENOTSUP:
		return "try --transport tcp";
	case EMFILE:
	case ENFILE:
	case EUSERS:
	case EAGAIN:
		/* sessions, handshakes, hashing, staging: the message names it */
		return "a limit of the target was reached (named above); retry later or see rpmemd.conf(5), limits";
	case EPROTO:
	case EBADMSG:
		return "client and target versions may not match";
	default:
		return "";
	}
}

/* cmd_errmsg -- the best text for err: the session's message or strerror */
static const char *cmd_errmsg(struct rpmemctl_session *sess, int err)
{
	const char *msg = NULL;

	if (sess)
		msg = rpmemctl_session_errmsg(sess);
	if (!msg || !msg[0])
		msg = rpmemctl_strerror(err);
	if (!msg || !msg[0])
		msg = strerror(-err);
	return msg;
}

/*
 * cmd_remote_err -- report a failed call on sess: "<what>: <target's
 * message>; <hint>". hint NULL = the usual one for err. Returns the exit
 * code.
 */
int cmd_remote_err(struct rpmemctl_ctx *ctx, struct rpmemctl_session *sess,
		   int err, const char *hint, const char *fmt, ...)
{
	const char *msg = cmd_errmsg(sess, err);
	char what[CMD_LINE_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	/* on an open session, EPERM is only ever the target's DENIED */
	if (!hint && err == -EPERM)
		hint = "the target's access rules (rpmemd.conf) do not allow it";
	if (!hint)
		hint = cmd_hint(err);
	if (strstr(msg, hint)) /* the target said it already */
		hint = "";
	cmd_err(ctx, "%s: %s%s%s", what, msg, hint[0] ? "; " : "", hint);
	return cmd_exit_code(err);
}
