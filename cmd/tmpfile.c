/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tmpfile.c -- rpmemctl: a local file replaced whole (sync --pull, with
 * or without --at): a temporary file beside it, renamed over it once
 * complete and durable (docs/ARCHITECTURE.md, "Atomic pulls")
 */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <linux/fs.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd.h"

#define TMP_TAG ".rpmem-tmp."

/* tmp_dest -- LOCAL with its symbolic links followed, into t->dest */
static int tmp_dest(struct rpmemctl_ctx *ctx, const char *local,
		    struct cmd_tmp *t)
{
	struct stat st;
	char *real;

	if (lstat(local, &st) && errno == ENOENT) {
		snprintf(t->dest, sizeof(t->dest), "%s", local);
		return 0;
	}
	real = realpath(local, NULL);
	if (!real || strlen(real) >= sizeof(t->dest)) {
		cmd_err(ctx, "cannot resolve '%s': %s", local,
			real ? strerror(ENAMETOOLONG) : strerror(errno));
		free(real);
		return CMD_EXIT_LOCAL;
	}
	snprintf(t->dest, sizeof(t->dest), "%s", real);
	free(real);
	return 0;
}

/*
 * tmp_stale -- remove the temporary files of NAME in dir that runs
 * killed before their rename left: their pid is gone and nobody holds
 * their lock
 */
static void tmp_stale(struct rpmemctl_ctx *ctx, const char *dir,
		      const char *name)
{
	char prefix[NAME_MAX + 32];
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t pl;

	if (!d)
		return;
	pl = (size_t)snprintf(prefix, sizeof(prefix), ".%s" TMP_TAG, name);
	while ((e = readdir(d))) {
		char *end;
		long pid;
		int fd;

		if (strncmp(e->d_name, prefix, pl))
			continue;
		pid = strtol(e->d_name + pl, &end, 10);
		if (*end || pid <= 0 || pid == getpid() ||
		    !kill((pid_t)pid, 0) || errno != ESRCH)
			continue;
		fd = openat(dirfd(d), e->d_name,
			    O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (!flock(fd, LOCK_EX | LOCK_NB) &&
		    !unlinkat(dirfd(d), e->d_name, 0))
			cmd_info(ctx, "removed '%s/%s', left by an interrupted "
				 "run (pid %ld)", dir, e->d_name, pid);
		close(fd);
	}
	closedir(d);
}

/* tmp_copy -- dest's bytes into the temporary file: a reflink if can */
static int tmp_copy(struct rpmemctl_ctx *ctx, struct cmd_tmp *t, int src,
		    uint64_t size)
{
	loff_t in = 0, out = 0;

	if (!ioctl(t->fd, FICLONE, src))
		return 0;
	while ((uint64_t)in < size) {
		ssize_t n = copy_file_range(src, &in, t->fd, &out,
					    (size_t)(size - (uint64_t)in), 0);
		if (n > 0)
			continue;
		cmd_err(ctx, "cannot copy '%s' into '%s': %s", t->dest,
			t->path, n ? strerror(errno) : "it ended early");
		return CMD_EXIT_LOCAL;
	}
	return 0;
}

/* tmp_like -- the temporary file gets dest's owner and mode, or fails */
static int tmp_like(struct rpmemctl_ctx *ctx, struct cmd_tmp *t,
		    const struct stat *st)
{
	struct stat me;

	if (!fstat(t->fd, &me) &&
	    (me.st_uid != st->st_uid || me.st_gid != st->st_gid) &&
	    fchown(t->fd, st->st_uid, st->st_gid)) {
		cmd_err(ctx, "cannot give '%s' the owner of '%s' (%u:%u): %s; "
			"nothing was written", t->path, t->dest,
			(unsigned)st->st_uid, (unsigned)st->st_gid,
			strerror(errno));
		return CMD_EXIT_LOCAL;
	}
	if (fchmod(t->fd, st->st_mode & 07777)) {
		cmd_err(ctx, "cannot set the mode of '%s': %s", t->path,
			strerror(errno));
		return CMD_EXIT_LOCAL;
	}
	return 0;
}

/* tmp_fill -- the new file sized, like dest and holding its bytes */
static int tmp_fill(struct rpmemctl_ctx *ctx, struct cmd_tmp *t,
		    uint64_t size, int copy)
{
	struct stat st;
	int src, code, ret;

	src = open(t->dest, O_RDONLY | O_CLOEXEC);
	if (src < 0 && errno != ENOENT) {
		cmd_err(ctx, "cannot open '%s': %s", t->dest, strerror(errno));
		return CMD_EXIT_LOCAL;
	}
	t->existed = src >= 0;
	code = src >= 0 && fstat(src, &st) ? CMD_EXIT_LOCAL : 0;
	if (!code && src >= 0)
		code = tmp_like(ctx, t, &st);
	if (!code && ftruncate(t->fd, (off_t)size)) {
		cmd_err(ctx, "cannot size '%s' to %llu bytes: %s", t->path,
			(unsigned long long)size, strerror(errno));
		code = CMD_EXIT_LOCAL;
	}
	if (!code && copy && src >= 0)
		code = tmp_copy(ctx, t, src, size);
	else if (!code &&
		 (ret = posix_fallocate(t->fd, 0, (off_t)size)) &&
		 ret != EOPNOTSUPP && ret != EINVAL) {
		cmd_err(ctx, "cannot allocate '%s': %s", t->path,
			strerror(ret));
		code = CMD_EXIT_LOCAL;
	}
	if (src >= 0)
		close(src);
	return code;
}

int cmd_tmp_open(struct rpmemctl_ctx *ctx, const char *local, uint64_t size,
		 int copy, struct cmd_tmp *t)
{
	char d[sizeof(t->dest)], b[sizeof(t->dest)];
	const char *dir, *base;
	int code;

	t->fd = -1;
	t->path[0] = '\0';
	if ((code = tmp_dest(ctx, local, t)))
		return code;
	snprintf(d, sizeof(d), "%s", t->dest);
	snprintf(b, sizeof(b), "%s", t->dest);
	dir = dirname(d);
	base = basename(b);
	tmp_stale(ctx, dir, base);
	if (snprintf(t->path, sizeof(t->path), "%s/.%s" TMP_TAG "%ld", dir,
		     base, (long)getpid()) >= (int)sizeof(t->path)) {
		cmd_err(ctx, "cannot create a file beside '%s': %s", t->dest,
			strerror(ENAMETOOLONG));
		t->path[0] = '\0';
		return CMD_EXIT_LOCAL;
	}
	t->fd = open(t->path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW |
				      O_CLOEXEC, 0644);
	if (t->fd < 0) {
		cmd_err(ctx, "cannot create '%s': %s", t->path,
			strerror(errno));
		t->path[0] = '\0';
		return CMD_EXIT_LOCAL;
	}
	/* held until the rename: a later run sees the file is in use */
	flock(t->fd, LOCK_EX | LOCK_NB);
	code = tmp_fill(ctx, t, size, copy);
	if (code)
		cmd_tmp_abort(t);
	return code;
}

/* fsync_dir -- the directory holding path, synced (a rename durable) */
static int fsync_dir(const char *path)
{
	char dir[CMD_PATH_MAX];
	int fd, ret;

	snprintf(dir, sizeof(dir), "%s", path);
	fd = open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ret = fsync(fd);
	close(fd);
	return ret;
}

int cmd_tmp_commit(struct rpmemctl_ctx *ctx, struct cmd_tmp *t)
{
	if (fsync(t->fd)) {
		cmd_err(ctx, "cannot write '%s': %s", t->path, strerror(errno));
		return CMD_EXIT_LOCAL;
	}
	if (rename(t->path, t->dest)) {
		cmd_err(ctx, "cannot rename '%s' to '%s': %s", t->path,
			t->dest, strerror(errno));
		return CMD_EXIT_LOCAL;
	}
	t->path[0] = '\0';
	close(t->fd);
	t->fd = -1;
	if (fsync_dir(t->dest)) {
		cmd_err(ctx, "cannot sync the directory of '%s': %s", t->dest,
			strerror(errno));
		return CMD_EXIT_LOCAL;
	}
	return 0;
}

void cmd_tmp_abort(struct cmd_tmp *t)
{
	if (t->path[0])
		unlink(t->path);
	t->path[0] = '\0';
	if (t->fd >= 0)
		close(t->fd);
	t->fd = -1;
}
