/* SPDX-License-Identifier: BSD-3-Clause */
/* connect.c -- rpmemctl: credentials and connections to a target */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"

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
	char hp[CMD_HP_MAX];

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
	char why[CMD_MSG_MAX];
	const char *hint;
	char hp[CMD_HP_MAX];
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

int cmd_open_target(struct rpmemctl_ctx *ctx, int argc, char **argv,
		    const struct cmd_open *o, struct cmd_target *t, char *hp,
		    struct rpmemctl_session **sess)
{
	const char *s = optind < argc ? argv[optind] : o->def;
	int code = cmd_check_args(ctx, argc, argv, o->min, o->max);

	if (code)
		return code;
	code = cmd_parse_target(ctx, s, o->need, t);
	if (code)
		return code;
	cmd_hostport(t, hp, CMD_HP_MAX);
	return sess ? cmd_connect(ctx, t, o->transport, sess) : 0;
}
