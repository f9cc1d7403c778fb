/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * secure_app.c -- test tool: an application linked with the preload
 * library (as /etc/ld.so.preload would put it in every process), for a
 * set-uid copy: secure_app FILE TEXT prints "secure N" (getauxval
 * AT_SECURE), maps FILE shared, writes TEXT at its start, persists it
 * with libpmem's pmem_msync (which the library follows) and exits
 */
#include <fcntl.h>
#include <libpmem.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct stat st;
	char *p;
	int fd;

	if (argc != 3) {
		fprintf(stderr, "usage: secure_app FILE TEXT\n");
		return 2;
	}
	printf("secure %lu\n", getauxval(AT_SECURE));
	fflush(stdout);
	fd = open(argv[1], O_RDWR);
	if (fd < 0 || fstat(fd, &st) || (size_t)st.st_size < strlen(argv[2])) {
		perror(argv[1]);
		return 1;
	}
	p = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		 fd, 0);
	if (p == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	memcpy(p, argv[2], strlen(argv[2]));
	if (pmem_msync(p, strlen(argv[2]))) {
		perror("pmem_msync");
		return 1;
	}
	munmap(p, (size_t)st.st_size);
	close(fd);
	return 0;
}
