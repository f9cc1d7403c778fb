/* SPDX-License-Identifier: BSD-3-Clause */
/* rpmemctl.c -- rpmemctl: global options, command table and dispatcher */

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"

#ifndef RPMEM_VERSION
#define RPMEM_VERSION "unknown"
#endif

struct cmd_struct {
	const char *name;
	cmd_fn fn;
	const char *help;
};

static const struct cmd_struct commands[] = {
	{ "list", cmd_list, "list a target's regions and pools" },
	{ "create", cmd_create, "create a remote pool" },
	{ "remove", cmd_remove, "remove a remote pool" },
	{ "mirror", cmd_mirror, "copy a local pool file to a remote pool" },
	{ "sync", cmd_sync, "send (or --pull) only the blocks that differ" },
	{ "verify", cmd_verify, "compare a local pool file with its replica" },
	{ "export", cmd_export, "write a remote pool's image to stdout or a file" },
	{ "import", cmd_import, "copy an image from stdin or a file into a pool" },
	{ "scrub", cmd_scrub, "check a pool on its target against its recorded hashes" },
	{ "rollback", cmd_rollback, "undo an interrupted sync on the target" },
	{ "promote", cmd_promote, "make the target's copy the primary" },
	{ "demote", cmd_demote, "make a promoted copy a secondary again" },
	{ "versions", cmd_versions, "list or prune a pool's point-in-time versions" },
	{ "replicas", cmd_replicas, "show the state and lag of a file's replicas" },
	{ "status", cmd_status, "show a daemon, its pools and its sessions" },
	{ "kick", cmd_kick, "end a session on a target, releasing its pools" },
	{ "events", cmd_events, "print what happens on a target as it happens" },
	{ "bench", cmd_bench, "measure persist latency and bandwidth" },
	{ "psk-gen", cmd_psk_gen, "write a new TLS pre-shared key file" },
};

static const char main_usage_head[] =
	"usage: rpmemctl [-v|--verbose] [-q|--quiet] [-h|--help] [-V|--version]\n"
	"                [CREDENTIALS] COMMAND [OPTIONS] ARGS\n"
	"\n"
	"Mirror persistent-memory pool files to rpmemd targets.\n"
	"Targets are HOST[:PORT]/REGION/POOL or rpmem://HOST[:PORT]/REGION/POOL\n"
	"(default port " RPMEMCTL_DEFAULT_PORT "); sizes take K, M, G or T.\n"
	"\n"
	"Commands:\n";

static const char main_usage_tail[] =
	"\n"
	"Credentials (before or after COMMAND; default: the target's entry in\n"
	"~/.config/rpmem/rpmemctl.conf or /etc/rpmem/rpmemctl.conf, else none):\n"
	"  --psk-file FILE [--psk-identity ID]   TLS 1.3 with a pre-shared key\n"
	"  --tls-ca FILE --tls-cert FILE --tls-key FILE   TLS 1.3 with X.509\n"
	"  --tls-name NAME   the name the target's certificate must carry\n"
	"                    (default: the host connected to)\n"
	"  --plaintext   allow no credentials for a target not on loopback\n"
	"  --config FILE   read credentials from FILE instead\n"
	"\n"
	"Run 'rpmemctl help COMMAND' or 'rpmemctl COMMAND --help' for details.\n"
	"Exit status: 0 ok, 1 differences found, 2 usage error, 3 connection\n"
	"or authentication failure, 4 refused by the target, 5 local file\n"
	"error, 6 internal, protocol or output error, 7 scrub found damage,\n"
	"8 scrub could not verify everything.\n";

/* main_usage -- the command list */
static void main_usage(FILE *f)
{
	size_t i;

	fputs(main_usage_head, f);
	for (i = 0; i < ARRAY_SIZE(commands); i++)
		fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].help);
	fputs(main_usage_tail, f);
}

static const struct cmd_struct *find_command(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(commands); i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

/* run_command -- look name up and run it with argv[0] = name */
static int run_command(struct rpmemctl_ctx *ctx, int argc, char **argv)
{
	const struct cmd_struct *c = find_command(argv[0]);

	if (!c) {
		fprintf(stderr,
			"rpmemctl: unknown command '%s'; see 'rpmemctl --help'\n",
			argv[0]);
		return CMD_EXIT_USAGE;
	}
	ctx->cmd = c->name;
	optind = 0; /* a fresh getopt scan for the command */
	return c->fn(argc, argv, ctx);
}

/* cmd_help -- "rpmemctl help [COMMAND]" */
static int cmd_help(struct rpmemctl_ctx *ctx, int argc, char **argv)
{
	if (argc < 2) {
		main_usage(stdout);
		return CMD_EXIT_OK;
	}
	if (argc > 2) {
		fprintf(stderr, "rpmemctl: help: unexpected argument '%s'\n",
			argv[2]);
		return CMD_EXIT_USAGE;
	}
	char *hargv[] = { argv[1], (char *)"--help", NULL };
	return run_command(ctx, 2, hargv);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "verbose", no_argument, NULL, 'v' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		CMD_CRED_OPTS,
		{ NULL, 0, NULL, 0 },
	};
	struct rpmemctl_ctx ctx = { 0 };
	int c, code;

	/* a lost connection is an error return (EPIPE), not a signal */
	signal(SIGPIPE, SIG_IGN);

	opterr = 0;
	while ((c = getopt_long(argc, argv, "+vqhV", opts, NULL)) != -1) {
		switch (c) {
		case 'v':
			ctx.verbose++;
			break;
		case 'q':
			ctx.quiet = 1;
			break;
		case 'h':
			main_usage(stdout);
			return cmd_finish(&ctx, CMD_EXIT_OK);
		case 'V':
			printf("rpmemctl %s\n", RPMEM_VERSION);
			return cmd_finish(&ctx, CMD_EXIT_OK);
		default:
			if (cmd_cred_opt(&ctx, c, optarg))
				break;
			if (optopt > 0 && optopt < 0x80)
				fprintf(stderr,
					"rpmemctl: unknown option '-%c'; see 'rpmemctl --help'\n",
					optopt);
			else
				fprintf(stderr,
					"rpmemctl: unknown option '%s'; see 'rpmemctl --help'\n",
					argv[optind - 1]);
			return CMD_EXIT_USAGE;
		}
	}
	argc -= optind;
	argv += optind;
	if (argc < 1) {
		fputs("rpmemctl: missing command\n", stderr);
		main_usage(stderr);
		return CMD_EXIT_USAGE;
	}

	rpmemctl_log_set_fn(cmd_lib_log, &ctx);
	cmd_log_level(&ctx);

	if (!strcmp(argv[0], "help"))
		code = cmd_help(&ctx, argc, argv);
	else
		code = run_command(&ctx, argc, argv);
	return cmd_finish(&ctx, code);
}
