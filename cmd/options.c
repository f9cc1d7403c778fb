/* SPDX-License-Identifier: BSD-3-Clause */
/* options.c -- rpmemctl: option parsing, arguments and targets */

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"

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
 * cmd_getopt -- getopt_long for a command: handles -h, -v, -q, -j and
 * option errors (shortopts must start with ':'). Returns the option, -1 at the
 * end, or -2 when the command must return *code.
 */
int cmd_getopt(struct rpmemctl_ctx *ctx, int argc, char **argv,
	       const char *shortopts, const struct option *longopts,
	       const char *usage, int *code)
{
	const char *opt;
	char sopt[sizeof("-x")];
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
		case 'j': /* in shortopts only where it is --json */
			ctx->json = 1;
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
	char buf[CMD_ARG_MAX];
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
	char err[CMD_ERR_MAX] = "";
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

/* cmd_parse_version -- a --at or --prune GENERATION, from 1 */
int cmd_parse_version(struct rpmemctl_ctx *ctx, const char *s, uint64_t *out)
{
	char *end;

	errno = 0;
	*out = s && *s >= '0' && *s <= '9' ? strtoull(s, &end, 10) : 0;
	if (!s || *s < '0' || *s > '9' || *end || errno || *out == 0)
		return cmd_usage_error(ctx, "'%s' is not a version: give its "
				       "generation, a number from 1 (see "
				       "rpmemctl versions)", s ? s : "");
	return 0;
}

int cmd_xfer_opt(struct rpmemctl_ctx *ctx, int c, const char *arg,
		 struct cmd_xfer *x)
{
	switch (c) {
	case 'a':
		x->has_at = 1;
		return cmd_parse_version(ctx, arg, &x->at);
	case 'b':
		return cmd_parse_block_size(ctx, arg, &x->block_size);
	case 't':
		return cmd_parse_transport(ctx, arg, &x->transport);
	case CMD_OPT_BWLIMIT:
		return cmd_parse_bwlimit(ctx, arg, &x->bwlimit);
	case CMD_OPT_NO_HISTORY:
		x->no_history = 1;
		return 0;
	case CMD_OPT_DISCARD_TARGET:
		x->discard |= RPMEMCTL_SYNC_DISCARD_TARGET;
		return 0;
	}
	return 0;
}
