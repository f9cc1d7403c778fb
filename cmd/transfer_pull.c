/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * transfer_pull.c -- rpmemctl: a pull into a temporary file beside LOCAL,
 * renamed over it (cmd_tmp_*)
 */
#include <errno.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd.h"
#include "json.h"
#include "transfer.h"

/*
 * xfer_pull_commit -- the library's commit hook of a pull: the temporary
 * file persisted and renamed over LOCAL, before LOCAL's history is
 * recorded; 0 or -EIO (with p->code)
 */
int xfer_pull_commit(void *arg)
{
	struct pull_tmp *p = arg;

	p->code = cmd_local_persist(p->ctx, p->local);
	if (!p->code)
		p->code = cmd_tmp_commit(p->ctx, &p->tmp);
	return p->code ? -EIO : 0;
}

/*
 * xfer_pull_copy -- before any connection (a copy of a large file takes time
 * a session would spend idle): a regular LOCAL's copy beside it, which
 * the pull then updates and renames over it; an exit code
 */
int xfer_pull_copy(struct rpmemctl_ctx *ctx, const struct cmd_xfer *x,
		   struct pull_tmp *p)
{
	struct stat st;
	int code;

	if (stat(x->local, &st) || !S_ISREG(st.st_mode))
		return 0; /* missing: created after the open; a device */
	code = cmd_tmp_open(ctx, x->local, (uint64_t)st.st_size, 1, &p->tmp);
	p->used = !code;
	p->size = (uint64_t)st.st_size;
	return code;
}

/*
 * xfer_pull_open -- LOCAL for a real pull: a regular file (or a missing one)
 * is replaced whole, through a temporary file beside it (xfer_pull_copy's, or
 * a new one); a device is written in place, as it cannot be renamed
 * over. An exit code.
 */
int xfer_pull_open(struct rpmemctl_ctx *ctx, const struct cmd_xfer *x,
		   const struct xfer_result *r, uint64_t psize,
		   struct pull_tmp *p)
{
	char a[CMD_BYTES_MAX], b[CMD_BYTES_MAX];
	int code;

	if (!p->used && !access(x->local, F_OK))
		return cmd_local_open(ctx, x->local, CMD_LOCAL_RDWR, 0,
				      p->local);
	if (p->used && p->size != psize) {
		cmd_fmt_bytes(p->size, a, sizeof(a));
		cmd_fmt_bytes(psize, b, sizeof(b));
		cmd_err(ctx, "cannot pull %s into '%s': the pool's size is %s, "
			"the file's size is %s; remove the file or pull into a "
			"new one", r->target, x->local, b, a);
		return CMD_EXIT_LOCAL;
	}
	if (!p->used) {
		code = cmd_tmp_open(ctx, x->local, psize, 0, &p->tmp);
		if (code)
			return code;
		p->used = 1;
	}
	code = cmd_local_open(ctx, p->tmp.path, CMD_LOCAL_RDWR, 0, p->local);
	if (code)
		return code;
	p->local->created = !p->tmp.existed;
	return 0;
}
