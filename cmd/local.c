/* SPDX-License-Identifier: BSD-3-Clause */
/* local.c -- rpmemctl: the local pool file (open, map, persist, close) */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "cmd.h"

/* cmd_source -- "hostname:/abs/path" recorded as a pool's source */
const char *cmd_source(const char *path, char *buf, size_t len)
{
	char host[CMD_HOST_MAX] = "localhost";
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
	char path[CMD_PATH_MAX];
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
