/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cli.c -- rpmemctl: messages, options, exit codes, connections, local
 * files (progress, tables and formatting: output.c)
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
#define CMD_TEXT_MAX (4 * 2048 + 1)

const char *cmd_text(const char *s)
{
	static __thread char buf[4][CMD_TEXT_MAX];
	static __thread unsigned next;
	char *b = buf[next++ % 4];

	rpmemctl_text_escape(s ? s : "", b, CMD_TEXT_MAX);
	return b;
}

/* cmd_vtext -- printf, escaped (cmd_text) */
static void cmd_vtext(FILE *f, const char *fmt, va_list ap)
{
	char raw[2048];

	vsnprintf(raw, sizeof(raw), fmt, ap);
	fputs(cmd_text(raw), f);
}

/* cmd_vmsg -- "rpmemctl: <command>: <prefix><message>\n" on f */
static void cmd_vmsg(struct rpmemctl_ctx *ctx, FILE *f, const char *prefix,
		     const char *fmt, va_list ap)
{
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

/* --- option parsing ------------------------------------------------------ */

int cmd_usage_error(struct rpmemctl_ctx *ctx, const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fputs("rpmemctl: ", stderr);
	if (ctx->cmd)
		fprintf(stderr, "%s: ", ctx->cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	if (ctx->cmd)
		fprintf(stderr, "; see 'rpmemctl %s --help'\n", ctx->cmd);
	else
		fputs("; see 'rpmemctl --help'\n", stderr);
	/* the command's own usage line, as getopt-style tools print it */
	if (ctx->usage)
		fprintf(stderr, "%.*s\n", (int)strcspn(ctx->usage, "\n"),
			ctx->usage);
	return CMD_EXIT_USAGE;
}

/*
 * cmd_getopt -- getopt_long for a command: handles -h, -v, -q and option
 * errors (shortopts must start with ':'). Returns the option, -1 at the
 * end, or -2 when the command must return *code.
 */
int cmd_getopt(struct rpmemctl_ctx *ctx, int argc, char **argv,
	       const char *shortopts, const struct option *longopts,
	       const char *usage, int *code)
{
	const char *opt;
	char sopt[3];
	int c;

	ctx->usage = usage;
	for (;;) {
		c = getopt_long(argc, argv, shortopts, longopts, NULL);
		switch (c) {
		case CMD_OPT_HELP:
			fputs(usage, stdout);
			*code = CMD_EXIT_OK;
			return -2;
		case CMD_OPT_VERBOSE:
			ctx->verbose++;
			cmd_log_level(ctx);
			continue;
		case CMD_OPT_QUIET:
			ctx->quiet = 1;
			continue;
		case CMD_OPT_CONFIG:
		case CMD_OPT_PSK_FILE:
		case CMD_OPT_PSK_IDENTITY:
		case CMD_OPT_TLS_CA:
		case CMD_OPT_TLS_CERT:
		case CMD_OPT_TLS_KEY:
		case CMD_OPT_TLS_NAME:
		case CMD_OPT_PLAINTEXT:
			cmd_cred_opt(ctx, c, optarg);
			continue;
		case ':':
		case '?':
			if (optopt > 0 && optopt < 0x80) {
				sopt[0] = '-';
				sopt[1] = (char)optopt;
				sopt[2] = '\0';
				opt = sopt;
			} else {
				opt = argv[optind - 1];
			}
			if (c == ':')
				*code = cmd_usage_error(ctx,
					"option '%s' requires an argument", opt);
			else
				*code = cmd_usage_error(ctx,
					"unknown or malformed option '%s'",
					opt);
			return -2;
		default:
			return c;
		}
	}
}

int cmd_cred_opt(struct rpmemctl_ctx *ctx, int c, const char *arg)
{
	switch (c) {
	case CMD_OPT_CONFIG:
		ctx->config = arg;
		return 1;
	case CMD_OPT_PSK_FILE:
		ctx->psk_file = arg;
		return 1;
	case CMD_OPT_PSK_IDENTITY:
		ctx->psk_identity = arg;
		return 1;
	case CMD_OPT_TLS_CA:
		ctx->tls_ca = arg;
		return 1;
	case CMD_OPT_TLS_CERT:
		ctx->tls_cert = arg;
		return 1;
	case CMD_OPT_TLS_KEY:
		ctx->tls_key = arg;
		return 1;
	case CMD_OPT_TLS_NAME:
		ctx->tls_name = arg;
		return 1;
	case CMD_OPT_PLAINTEXT:
		ctx->plaintext = 1;
		return 1;
	}
	return 0;
}

/*
 * session_cfg -- the credentials for host:port: the configuration file
 * (--config, else the user's and the system's rpmemctl.conf), then the
 * command line on top; returns 0 or an exit code, the problem reported
 */
static int session_cfg(struct rpmemctl_ctx *ctx, const struct cmd_target *t,
		       struct rpmemctl_session_cfg **out)
{
	struct rpmemctl_session_cfg *cfg = NULL;
	const char *port = t->port[0] ? t->port : NULL;
	int ret;

	if (rpmemctl_session_cfg_new(&cfg))
		return CMD_EXIT_INTERNAL;
	if (ctx->config)
		ret = rpmemctl_session_cfg_load(cfg, ctx->config, t->host, port);
	else
		ret = rpmemctl_session_cfg_load_default(cfg, t->host, port);
	if (ret < 0) {
		cmd_err(ctx, "%s", rpmemctl_strerror(ret));
		rpmemctl_session_cfg_delete(&cfg);
		return CMD_EXIT_USAGE;
	}
	if (ret > 0)
		cmd_dbg(ctx, "credentials for %s from the configuration file",
			t->host);
	if ((ctx->tls_cert || ctx->tls_key) && !(ctx->tls_cert && ctx->tls_key)) {
		rpmemctl_session_cfg_delete(&cfg);
		return cmd_usage_error(ctx,
				       "--tls-cert and --tls-key go together");
	}
	if (ctx->psk_identity && !ctx->psk_file) {
		rpmemctl_session_cfg_delete(&cfg);
		return cmd_usage_error(ctx, "--psk-identity needs --psk-file");
	}
	if ((ctx->tls_ca && rpmemctl_session_cfg_set_tls_ca(cfg, ctx->tls_ca)) ||
	    (ctx->tls_cert &&
	     rpmemctl_session_cfg_set_tls_cert(cfg, ctx->tls_cert,
					       ctx->tls_key)) ||
	    (ctx->psk_file &&
	     rpmemctl_session_cfg_set_psk_file(cfg, ctx->psk_file,
					       ctx->psk_identity))) {
		rpmemctl_session_cfg_delete(&cfg);
		return cmd_usage_error(ctx,
				       "invalid --psk-identity (1-128 of letters, digits, '.', '_', '@', '-')");
	}
	if ((ctx->tls_name &&
	     rpmemctl_session_cfg_set_tls_name(cfg, ctx->tls_name)) ||
	    (ctx->plaintext && rpmemctl_session_cfg_set_plaintext(cfg, 1))) {
		rpmemctl_session_cfg_delete(&cfg);
		return cmd_usage_error(ctx, "invalid --tls-name (too long)");
	}
	*out = cfg;
	return 0;
}

/* cmd_check_args -- min..max positional arguments remain after options */
int cmd_parse_num(const char *s, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!*s || *s == '-' || *s == '+')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v == 0 || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

int cmd_check_args(struct rpmemctl_ctx *ctx, int argc, char **argv, int min,
		   int max)
{
	int n = argc - optind;

	if (n < min)
		return cmd_usage_error(ctx, "missing argument");
	if (n > max)
		return cmd_usage_error(ctx, "unexpected argument '%s'",
				       argv[optind + max]);
	return 0;
}

int cmd_parse_transport(struct rpmemctl_ctx *ctx, const char *s,
			enum rpmemctl_transport *out)
{
	if (!strcmp(s, "auto"))
		*out = RPMEMCTL_TRANSPORT_AUTO;
	else if (!strcmp(s, "tcp"))
		*out = RPMEMCTL_TRANSPORT_TCP;
	else if (!strcmp(s, "rdma"))
		*out = RPMEMCTL_TRANSPORT_RDMA;
	else
		return cmd_usage_error(ctx,
			"invalid transport '%s' (auto, tcp or rdma)", s);
	return 0;
}

int cmd_parse_size(struct rpmemctl_ctx *ctx, const char *what, const char *s,
		   uint64_t *out)
{
	uint64_t v = 0;
	int ret;

	ret = rpmemctl_size_parse(s, &v);
	if (ret == -ERANGE)
		return cmd_usage_error(ctx,
			"%s '%s' is larger than the largest size supported (%llu bytes: 8 EiB less one byte)",
			what, s, (unsigned long long)RPMEMCTL_SIZE_MAX);
	if (ret)
		return cmd_usage_error(ctx,
			"invalid %s '%s' (bytes, or a number with K, M, G or T)",
			what, s);
	if (v == 0)
		return cmd_usage_error(ctx, "%s must not be zero", what);
	*out = v;
	return 0;
}

/* cmd_parse_bwlimit -- bytes per second, K/M/G/T, "/s" allowed, >= 4 KiB */
int cmd_parse_bwlimit(struct rpmemctl_ctx *ctx, const char *s, uint64_t *out)
{
	char buf[64];
	size_t n = strlen(s);
	uint64_t v = 0;

	if (n >= sizeof(buf))
		return cmd_usage_error(ctx, "invalid --bwlimit '%s'", s);
	memcpy(buf, s, n + 1);
	if (n > 2 && !strcmp(buf + n - 2, "/s"))
		buf[n - 2] = '\0';
	if (rpmemctl_size_parse(buf, &v) || v < 4096)
		return cmd_usage_error(ctx,
			"invalid --bwlimit '%s' (bytes per second, at least 4K; K, M, G and T allowed, e.g. 50M)",
			s);
	*out = v;
	return 0;
}

/* cmd_parse_block_size -- a power of two from 4 KiB to 64 MiB */
int cmd_parse_block_size(struct rpmemctl_ctx *ctx, const char *s,
			 uint32_t *out)
{
	uint64_t v = 0;
	int ret;

	ret = cmd_parse_size(ctx, "block size", s, &v);
	if (ret)
		return ret;
	if (v < RPMEMCTL_BLOCK_SIZE_MIN || v > RPMEMCTL_BLOCK_SIZE_MAX ||
	    (v & (v - 1)))
		return cmd_usage_error(ctx,
			"invalid block size '%s': a power of two from 4K to 64M",
			s);
	*out = (uint32_t)v;
	return 0;
}

/* cmd_parse_interval -- "500ms", "5s", "1m" (1 ms to 24 h) into ns */
int cmd_parse_interval(struct rpmemctl_ctx *ctx, const char *s,
		       uint64_t *out)
{
	int ret = rpmemctl_interval_parse(s, out);

	if (ret == -ERANGE)
		return cmd_usage_error(ctx, "invalid interval '%s': from 1ms "
				       "to 24h", s);
	if (ret)
		return cmd_usage_error(ctx, "invalid interval '%s': a number "
				       "with ms, s, m or h (500ms, 5s, 1m)",
				       s);
	return 0;
}

/*
 * cmd_parse_target -- parse and validate a target before any connection;
 * a pool path with '/' or ".." never reaches the network.
 */
int cmd_target_fill(const char *s, unsigned need, struct cmd_target *t,
		    char *err, size_t errlen)
{
	struct rpmemctl_target *pt = NULL;
	int ret = rpmemctl_target_parse(s, need, &pt, err, errlen);

	if (ret)
		return ret;
	snprintf(t->host, sizeof(t->host), "%s", rpmemctl_target_get_host(pt));
	snprintf(t->port, sizeof(t->port), "%s", rpmemctl_target_get_port(pt));
	snprintf(t->region, sizeof(t->region), "%s",
		 rpmemctl_target_get_region(pt));
	snprintf(t->pool, sizeof(t->pool), "%s",
		 rpmemctl_target_get_pool(pt));
	rpmemctl_target_delete(&pt);
	return 0;
}

int cmd_parse_target(struct rpmemctl_ctx *ctx, const char *s, unsigned need,
		     struct cmd_target *t)
{
	char err[256] = "";
	int ret = cmd_target_fill(s, need, t, err, sizeof(err));

	if (ret == -ENOMEM) {
		cmd_err(ctx, "out of memory");
		return CMD_EXIT_INTERNAL;
	}
	if (ret) {
		/* the parser's message names the target */
		if (err[0])
			cmd_err(ctx, "%s", err);
		else
			cmd_err(ctx, "invalid target '%s'", s);
		return CMD_EXIT_USAGE;
	}
	return 0;
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
	char what[512];
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

/* --- connections --------------------------------------------------------- */

const char *cmd_hostport(const struct cmd_target *t, char *buf, size_t len)
{
	const char *port = t->port[0] ? t->port : RPMEMCTL_DEFAULT_PORT;

	if (strchr(t->host, ':'))
		snprintf(buf, len, "[%s]:%s", t->host, port);
	else
		snprintf(buf, len, "%s:%s", t->host, port);
	return buf;
}

const char *cmd_target_str(const struct cmd_target *t, char *buf,
			   size_t len)
{
	char hp[300];

	cmd_hostport(t, hp, sizeof(hp));
	if (t->pool[0])
		snprintf(buf, len, "%s/%s/%s", hp, t->region, t->pool);
	else if (t->region[0])
		snprintf(buf, len, "%s/%s", hp, t->region);
	else
		snprintf(buf, len, "%s", hp);
	return buf;
}

/* damaged_warn -- an rpmemctl_damaged_fn: the target's ranges, on stderr */
static void damaged_warn(const char *msg, void *arg)
{
	struct cmd_damaged *d = arg;

	d->n++;
	cmd_warn(d->ctx, "read as it is (--force): %s", msg);
}

void cmd_read_damaged(struct rpmemctl_session *sess, struct cmd_damaged *d)
{
	rpmemctl_session_read_damaged(sess, 1, damaged_warn, d);
}

/* cmd_connect -- open a session or report why not; returns an exit code */
int cmd_connect(struct rpmemctl_ctx *ctx, const struct cmd_target *t,
		enum rpmemctl_transport transport,
		struct rpmemctl_session **out)
{
	struct rpmemctl_session *sess = NULL;
	char why[1536];
	const char *hint;
	char hp[300];
	int ret;

	struct rpmemctl_session_cfg *cfg = NULL;
	cmd_hostport(t, hp, sizeof(hp));
	if ((ret = session_cfg(ctx, t, &cfg)))
		return ret;
	cmd_dbg(ctx, "connecting to %s", hp);
	ret = rpmemctl_session_open_cfg(t->host, t->port[0] ? t->port : NULL,
					transport, cfg, &sess);
	rpmemctl_session_cfg_delete(&cfg);
	if (ret)
		snprintf(why, sizeof(why), "%s", rpmemctl_strerror(ret));
	if (ret) {
		const char *msg = why;

		hint = cmd_hint(ret);
		switch (-ret) {
		case ECONNREFUSED:
		case ETIMEDOUT:
		case EHOSTUNREACH:
		case EHOSTDOWN:
		case ENETUNREACH:
		case ENETDOWN:
		case ENOENT:
			/* connect(2) failed: our wording, the library's
			 * text only for an unknown host name */
			if (!strstr(msg, "unknown or unreachable host"))
				msg = strerror(-ret);
			else
				msg = "unknown or unreachable host";
			cmd_err(ctx, "cannot connect to %s: %s%s%s", hp, msg,
				hint[0] ? "; " : "", hint);
			break;
		default:
			/* the handshake failed: the library says why */
			if (!strstr(msg, hp) && strncmp(msg, "handshake", 9))
				cmd_err(ctx, "cannot connect to %s: %s%s%s", hp,
					msg, hint[0] ? "; " : "", hint);
			else
				cmd_err(ctx, "%s%s%s", msg,
					hint[0] ? "; " : "", hint);
		}
		if (ret == -EPERM || ret == -EUSERS)
			return CMD_EXIT_REFUSED; /* DENIED, LIMIT: it said no */
		return ret == -ENOMEM ? CMD_EXIT_INTERNAL : CMD_EXIT_CONNECT;
	}
	cmd_dbg(ctx, "connected to %s (%s)", hp,
		rpmemctl_session_server(sess));
	*out = sess;
	return 0;
}

/* cmd_source -- "hostname:/abs/path" recorded as a pool's source */
const char *cmd_source(const char *path, char *buf, size_t len)
{
	char host[256] = "localhost";
	char *abs;

	if (gethostname(host, sizeof(host) - 1))
		strcpy(host, "localhost");
	host[sizeof(host) - 1] = '\0';
	abs = realpath(path, NULL);
	snprintf(buf, len, "%s:%s", host, abs ? abs : path);
	free(abs);
	return buf;
}

/* --- local files --------------------------------------------------------- */

/* cmd_local_err -- "rpmemctl: COMMAND: <message>" for a local file problem */
static int cmd_local_err(struct rpmemctl_ctx *ctx, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int cmd_local_err(struct rpmemctl_ctx *ctx, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cmd_vmsg(ctx, stderr, "", fmt, ap);
	va_end(ap);
	return CMD_EXIT_LOCAL;
}

/* cmd_dev_size -- size of a device DAX character device from sysfs */
static int cmd_dev_size(const struct stat *st, uint64_t *size)
{
	char path[128];
	unsigned long long v;
	FILE *f;
	int ret;

	snprintf(path, sizeof(path), "/sys/dev/char/%u:%u/size",
		 major(st->st_rdev), minor(st->st_rdev));
	f = fopen(path, "re");
	if (!f)
		return -ENOTSUP;
	ret = fscanf(f, "%llu", &v);
	fclose(f);
	if (ret != 1)
		return -ENOTSUP;
	*size = v;
	return 0;
}

/*
 * cmd_local_open -- open and map the whole local pool file (MAP_SHARED);
 * reports errors itself. Returns 0 or CMD_EXIT_LOCAL.
 */
int cmd_local_open(struct rpmemctl_ctx *ctx, const char *path,
		   unsigned flags, uint64_t create_size, struct cmd_local *l)
{
	int rw = !!(flags & CMD_LOCAL_RDWR);
	int created = 0;
	uint64_t size = 0;
	struct stat st;
	void *addr;
	int fd, ret;

	fd = open(path, (rw ? O_RDWR : O_RDONLY) | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT && (flags & CMD_LOCAL_CREATE)) {
		fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (fd < 0)
			return cmd_local_err(ctx, "cannot create '%s': %s", path,
					     strerror(errno));
		created = 1;
		if (ftruncate(fd, (off_t)create_size)) {
			ret = cmd_local_err(ctx, "cannot size '%s' to %llu bytes: %s",
					    path,
					    (unsigned long long)create_size,
					    strerror(errno));
			goto err_close;
		}
		ret = posix_fallocate(fd, 0, (off_t)create_size);
		if (ret && ret != EOPNOTSUPP && ret != EINVAL) {
			ret = cmd_local_err(ctx, "cannot allocate '%s': %s", path,
					    strerror(ret));
			goto err_close;
		}
		cmd_dbg(ctx, "created '%s' (%llu bytes)", path,
			(unsigned long long)create_size);
	}
	if (fd < 0)
		return cmd_local_err(ctx, "cannot open '%s': %s", path,
				     strerror(errno));

	if (fstat(fd, &st)) {
		ret = cmd_local_err(ctx, "cannot stat '%s': %s", path,
				    strerror(errno));
		goto err_close;
	}
	if (S_ISREG(st.st_mode)) {
		size = (uint64_t)st.st_size;
	} else if (S_ISCHR(st.st_mode)) {
		if (cmd_dev_size(&st, &size)) {
			ret = cmd_local_err(ctx, "cannot find the size of '%s'",
					    path);
			goto err_close;
		}
	} else if (S_ISBLK(st.st_mode)) {
		if (ioctl(fd, BLKGETSIZE64, &size)) {
			ret = cmd_local_err(ctx, "cannot find the size of '%s': %s",
					    path, strerror(errno));
			goto err_close;
		}
	} else {
		ret = cmd_local_err(ctx, "cannot open '%s': %s", path,
				    S_ISDIR(st.st_mode) ?
				    strerror(EISDIR) :
				    "not a regular file or device");
		goto err_close;
	}
	if (size == 0) {
		ret = cmd_local_err(ctx, "cannot map '%s': the file is empty", path);
		goto err_close;
	}
	if (size > SIZE_MAX) {
		ret = cmd_local_err(ctx, "cannot map '%s': %s", path,
				    strerror(EFBIG));
		goto err_close;
	}

	addr = mmap(NULL, (size_t)size, PROT_READ | (rw ? PROT_WRITE : 0),
		    MAP_SHARED, fd, 0);
	if (addr == MAP_FAILED) {
		ret = cmd_local_err(ctx, "cannot map '%s': %s", path,
				    strerror(errno));
		goto err_close;
	}

	l->path = path;
	l->fd = fd;
	l->addr = addr;
	l->len = (size_t)size;
	l->writable = rw;
	l->created = created;
	return 0;

err_close:
	close(fd);
	if (created)
		unlink(path);
	return ret;
}

/* cmd_local_persist -- msync + fsync a writable mapping */
int cmd_local_persist(struct rpmemctl_ctx *ctx, struct cmd_local *l)
{
	(void)ctx;
	if (msync(l->addr, l->len, MS_SYNC))
		return cmd_local_err(ctx, "cannot persist '%s': %s", l->path,
				     strerror(errno));
	if (fsync(l->fd) && errno != EINVAL)
		return cmd_local_err(ctx, "cannot persist '%s': %s", l->path,
				     strerror(errno));
	return 0;
}

/* cmd_local_close -- unmap and close; remove a file it created if asked */
void cmd_local_close(struct cmd_local *l, int unlink_created)
{
	if (!l || !l->addr)
		return;
	munmap(l->addr, l->len);
	close(l->fd);
	if (unlink_created && l->created)
		unlink(l->path);
	l->addr = NULL;
	l->fd = -1;
}
