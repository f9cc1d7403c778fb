/* SPDX-License-Identifier: BSD-3-Clause */
/* replica_example.c -- replicated persist of a local pool with librpmemctl */
/*
 * Usage: replica_example FILE HOST[:PORT]/REGION/POOL
 *
 * Creates FILE (4 MiB of a pattern) if it does not exist, opens its
 * replica at the target (created and synced if needed), changes a few
 * bytes in place, persists them locally and remotely, and closes. Only
 * the public API of librpmemctl is used.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <librpmemctl.h>

#define POOL_SIZE (4u << 20)

/* create_file -- a POOL_SIZE file with a recognisable pattern */
static int create_file(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		return errno == EEXIST ? 0 : -errno;
	char buf[4096];
	int ret = 0;
	for (unsigned off = 0; off < POOL_SIZE && !ret; off += sizeof(buf)) {
		for (unsigned i = 0; i < sizeof(buf); i++)
			buf[i] = (char)((off + i) * 31 / 7);
		if (write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
			ret = -EIO;
	}
	if (fsync(fd) && !ret)
		ret = -errno;
	close(fd);
	return ret;
}

int main(int argc, char *argv[])
{
	if (argc != 3) {
		fprintf(stderr, "usage: %s FILE HOST[:PORT]/REGION/POOL\n",
			argv[0]);
		return 2;
	}
	int ret = create_file(argv[1]);
	if (ret) {
		fprintf(stderr, "%s: %s\n", argv[1], strerror(-ret));
		return 1;
	}

	struct rpmemctl_replica *r;
	ret = rpmemctl_replica_open(argv[1], argv[2], RPMEMCTL_TRANSPORT_AUTO,
				    &r);
	if (ret) {
		fprintf(stderr, "replica open: %s\n", rpmemctl_strerror(ret));
		return 1;
	}

	/* an application update: a record at the start, one in the middle */
	char *base = rpmemctl_replica_addr(r);
	size_t size = rpmemctl_replica_size(r);
	static const char rec[] = "hello, replicated persistent memory";
	memcpy(base + 100, rec, sizeof(rec));
	memset(base + size / 2, 0xab, 8192);

	ret = rpmemctl_replica_persist(r, base + 100, sizeof(rec));
	if (!ret)
		ret = rpmemctl_replica_persist(r, base + size / 2, 8192);
	if (ret) {
		fprintf(stderr, "replica persist: %s\n",
			rpmemctl_strerror(ret));
		rpmemctl_replica_close(&r);
		return 1;
	}

	ret = rpmemctl_replica_close(&r);
	if (ret) {
		fprintf(stderr, "replica close: %s\n", rpmemctl_strerror(ret));
		return 1;
	}
	return 0;
}
