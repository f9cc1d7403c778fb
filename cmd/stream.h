/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * stream.h -- what rpmemctl export (export.c) and import (import.c) share:
 * the stream's state, its options and its messages
 */

#ifndef RPMEMCTL_CMD_STREAM_H
#define RPMEMCTL_CMD_STREAM_H 1

#include <stdint.h>
#include <getopt.h>
#include <sys/types.h>

#include "cmd.h"
#include "xstream.h"

/* bytes moved per library call (the library pipelines its requests) */
#define STREAM_CHUNK (8u << 20)
/* a frame: a chunk of the image and its hash */
#define FRAME (XSTREAM_CHUNK + XSTREAM_HASH_SIZE)

/* --raw, --salvage: long options only */
#define OPT_RAW CMD_OPT_FIRST_PRIVATE
#define OPT_SALVAGE (CMD_OPT_FIRST_PRIVATE + 1)
#define OPT_DISCARD_TARGET (CMD_OPT_FIRST_PRIVATE + 2)

/* what export and import share */
struct stream {
	struct rpmemctl_ctx *ctx;
	struct cmd_target t;
	char hp[300];
	char target[700];
	const char *path; /* DEST or SOURCE as given */
	int fd;
	int dest_file; /* export: DEST is a regular file (removed on failure) */
	int force;
	int raw;     /* --raw: the bare image, no frame */
	int forced;  /* export: a pool not consistent, with --force */
	int syncing; /* import: the pool was marked syncing */
	int has_at;  /* export: --at */
	uint64_t at; /* that version */
	int salvage; /* export: --salvage */
	int discard; /* import: --discard-target */
	uint64_t bad_off, bad_len, bad_bytes; /* export --at: not checking */
	uint64_t size;
	enum rpmemctl_transport transport;
	struct rpmemctl_session *sess;
	struct rpmemctl_pool *pool;
	uint8_t *buf;
	struct cmd_progress prog;
	uint64_t t0;
	struct xstream xs; /* the frame written or checked */
};

/* STREAM_NAME_MAX -- room for stream_name's text */
#define STREAM_NAME_MAX 1100

/* stream_name -- "standard output/input" or 'PATH', for messages */
const char *stream_name(const struct stream *s, char *buf, size_t len, const char *std);

/* stream_begin -- parse TARGET, connect; returns an exit code */
int stream_begin(struct stream *s, const char *target);

/* stream_progress -- progress on stderr if a terminal, or with -v */
void stream_progress(struct stream *s, const char *label);

/* stream_end -- close everything stream_begin and the command opened */
void stream_end(struct stream *s);

/* rate_mib -- MiB/s of n bytes since s->t0 */
double rate_mib(const struct stream *s, uint64_t n);

/*
 * stream_opts -- parse export's or import's options (shorts says which)
 * into s; -1 when done, else the exit code to return
 */
int stream_opts(struct stream *s, int argc, char **argv, const char *shorts,
		const struct option *opts, const char *usage);

#endif
