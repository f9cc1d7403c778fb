/* SPDX-License-Identifier: BSD-3-Clause */
/* psk_gen.c -- rpmemctl psk-gen: make a TLS pre-shared key file */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"

static const char psk_gen_usage[] =
	"usage: rpmemctl psk-gen [options] FILE\n"
	"\n"
	"Write a new random TLS 1.3 pre-shared key to FILE (mode 0600) as one\n"
	"line IDENTITY:HEXKEY. Give the client FILE (--psk-file, or psk_file in\n"
	"rpmemctl.conf) and append the same line to the target's tls.psk_file,\n"
	"over a channel you trust. The key itself never crosses the network.\n"
	"\n"
	"  -i, --identity ID      the identity (default: this host's name)\n"
	"  -f, --force            replace FILE if it exists\n"
	"  -v, --verbose          more detail on stderr\n"
	"  -q, --quiet            no informational lines\n"
	"  -h, --help             this help\n";

static const struct option psk_gen_opts[] = {
	CMD_COMMON_OPTS,
	{ "identity", required_argument, NULL, 'i' },
	{ "force", no_argument, NULL, 'f' },
	{ NULL, 0, NULL, 0 },
};

/* default_identity -- the host name, cut to the identity character set */
static void default_identity(char *id, size_t len)
{
	char host[CMD_HOST_MAX] = "";
	size_t n = 0;

	gethostname(host, sizeof(host) - 1);
	for (const char *p = host; *p && n + 1 < len; p++)
		if (strchr("._@-", *p) || (*p >= '0' && *p <= '9') ||
		    (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z'))
			id[n++] = *p;
	id[n] = '\0';
	if (!n)
		snprintf(id, len, "rpmemctl");
}

/* cmd_psk_gen -- rpmemctl psk-gen */
int cmd_psk_gen(int argc, char **argv, struct rpmemctl_ctx *ctx)
{
	char id[RPMEMCTL_PSK_IDENTITY_MAX + 1] = "";
	char line[RPMEMCTL_PSK_LINE_MAX];
	int c, code = 0, force = 0, ret;

	while ((c = cmd_getopt(ctx, argc, argv, CMD_COMMON_SHORT "i:f",
			       psk_gen_opts, psk_gen_usage, &code)) != -1) {
		switch (c) {
		case -2:
			return code;
		case 'i':
			if (rpmemctl_psk_identity_check(optarg))
				return cmd_usage_error(ctx,
						       "invalid identity '%s' (1-128 of letters, digits, '.', '_', '@', '-')",
						       optarg);
			snprintf(id, sizeof(id), "%s", optarg);
			break;
		case 'f':
			force = 1;
			break;
		}
	}
	code = cmd_check_args(ctx, argc, argv, 1, 1);
	if (code)
		return code;
	const char *path = argv[optind];
	if (!id[0])
		default_identity(id, sizeof(id));
	ret = rpmemctl_psk_generate(id, line, sizeof(line));
	if (ret) {
		cmd_err(ctx, "cannot make a key: %s", strerror(-ret));
		return CMD_EXIT_INTERNAL;
	}
	ssize_t n = (ssize_t)strlen(line);

	if (force && unlink(path) && errno != ENOENT) {
		cmd_err(ctx, "cannot replace %s: %s", path, strerror(errno));
		return CMD_EXIT_LOCAL;
	}
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		cmd_err(ctx, "cannot create %s: %s%s", path, strerror(errno),
			errno == EEXIST ? " (use --force to replace it)" : "");
		memset(line, 0, sizeof(line));
		return CMD_EXIT_LOCAL;
	}
	int bad = write(fd, line, (size_t)n) != n || fsync(fd);
	int err = errno;
	memset(line, 0, sizeof(line));
	if (close(fd) || bad) {
		cmd_err(ctx, "cannot write %s: %s", path, strerror(err));
		unlink(path);
		return CMD_EXIT_LOCAL;
	}
	cmd_info(ctx,
		 "wrote a %d-byte key for identity '%s' to %s; append its line to the target's tls.psk_file over a channel you trust",
		 RPMEMCTL_PSK_LEN, id, path);
	return CMD_EXIT_OK;
}
