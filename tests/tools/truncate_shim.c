/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * truncate_shim.c -- test preload: truncate a file just before a process
 * sends its first frame of a given type (plaintext TCP only).
 *
 * LD_PRELOAD=truncate_shim.so with
 *   RPMEM_SHIM_FILE  the file to truncate
 *   RPMEM_SHIM_TYPE  the frame type that triggers it (12 WRITE, 16 HASH)
 *   RPMEM_SHIM_SIZE  the new size in bytes
 * makes "a file changed while it was read" happen at a known point of a
 * transfer instead of at a random time.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int done;

/* frame_type -- the type of a frame header at the start of msg, or -1 */
static int frame_type(const struct msghdr *msg)
{
	const struct iovec *v = msg->msg_iovlen ? &msg->msg_iov[0] : NULL;
	const uint8_t *b = v ? v->iov_base : NULL;

	if (!v || v->iov_len < 16 || memcmp(b, "RPMM", 4))
		return -1;
	return b[4] | b[5] << 8;
}

/* sendmsg -- truncate the file at the first frame of the type, then send */
__attribute__((visibility("default"))) ssize_t
sendmsg(int fd, const struct msghdr *msg, int flags)
{
	static ssize_t (*real)(int, const struct msghdr *, int);
	const char *file = getenv("RPMEM_SHIM_FILE");
	const char *type = getenv("RPMEM_SHIM_TYPE");
	const char *size = getenv("RPMEM_SHIM_SIZE");

	if (!real)
		real = (ssize_t(*)(int, const struct msghdr *, int))dlsym(
			RTLD_NEXT, "sendmsg");
	if (!done && file && type && size &&
	    frame_type(msg) == atoi(type)) {
		done = 1;
		if (truncate(file, (off_t)strtoull(size, NULL, 0)))
			abort();
	}
	return real(fd, msg, flags);
}
