/* SPDX-License-Identifier: BSD-3-Clause */
/* xxh3_blocks.c -- print the XXH3-64 of every block of a file, plain or tree */
/*
 * Usage: xxh3_blocks FILE BLOCK_SIZE [tree]
 *
 * One 16-digit hex hash per line, the last block short if the file is.
 * "tree": each block's hash is the XXH3-64 of the little-endian XXH3-64
 * hashes of its 4 KiB pieces (docs/PROTOCOL.md, HASH). Written straight
 * on libxxhash, not on rpmem's own hashing, so that the BATS suites can
 * check what rpmemd answers against an independent reckoning.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#define PIECE 4096u

/* tree -- the tree hash of len bytes at p */
static uint64_t tree(const uint8_t *p, size_t len)
{
	size_t n = (len + PIECE - 1) / PIECE;
	uint8_t *le = malloc(n * 8);
	if (!le) {
		perror("malloc");
		exit(1);
	}
	for (size_t k = 0; k < n; k++) {
		size_t l = len - k * PIECE < PIECE ? len - k * PIECE : PIECE;
		uint64_t h = XXH3_64bits(p + k * PIECE, l);
		for (unsigned b = 0; b < 8; b++)
			le[k * 8 + b] = (uint8_t)(h >> (8 * b));
	}
	uint64_t h = XXH3_64bits(le, n * 8);
	free(le);
	return h;
}

int main(int argc, char **argv)
{
	struct stat st;
	if (argc < 3 || argc > 4 || (argc == 4 && strcmp(argv[3], "tree"))) {
		fprintf(stderr, "usage: xxh3_blocks FILE BLOCK_SIZE [tree]\n");
		return 2;
	}
	size_t bs = strtoul(argv[2], NULL, 0);
	int fd = open(argv[1], O_RDONLY);
	if (fd < 0 || fstat(fd, &st) || bs == 0) {
		perror(argv[1]);
		return 1;
	}
	size_t size = (size_t)st.st_size;
	const uint8_t *p = size ? mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0)
				: NULL;
	if (p == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	for (size_t off = 0; off < size; off += bs) {
		size_t l = size - off < bs ? size - off : bs;
		printf("%016llx\n",
		       (unsigned long long)(argc == 4 ? tree(p + off, l)
						      : XXH3_64bits(p + off, l)));
	}
	return 0;
}
