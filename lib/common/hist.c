/* SPDX-License-Identifier: BSD-3-Clause */
/* hist.c -- the head of a generation history file (hist.h) */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "hist.h"
#include "util.h"

int rpmem_hist_parse(const char *text, struct rpmem_hist_head *h)
{
	/* 16 ids of 16 hex digits and their commas: the width below + 1 */
	char ids[RPMEM_MAX_GENERATIONS * 17 + 1];
	_Static_assert(RPMEM_MAX_GENERATIONS * 17 == 272,
		       "the sscanf width is the ids buffer's size - 1");
	unsigned long long size, sec, nsec;
	size_t m = strlen(RPMEM_HIST_MAGIC);

	if (strncmp(text, RPMEM_HIST_MAGIC, m) ||
	    sscanf(text + m, "ids=%272[0-9a-f,]\nsize=%llu\nmtime=%llu.%llu\n",
		   ids, &size, &sec, &nsec) != 4)
		return -EBADMSG;
	int n = rpmem_gen_ids_parse(ids, ',', h->ids, RPMEM_MAX_GENERATIONS);
	if (n <= 0)
		return -EBADMSG;
	h->count = (unsigned)n;
	h->size = size;
	h->sec = sec;
	h->nsec = nsec;
	return 0;
}

int rpmem_hist_fmt(const struct rpmem_hist_head *h, const char *tail,
		   char *out, size_t len)
{
	char ids[RPMEM_MAX_GENERATIONS * 17 + 1];

	rpmem_gen_ids_fmt(h->ids, h->count, ",", ids, sizeof(ids));
	int n = snprintf(out, len, "%sids=%s\nsize=%llu\nmtime=%llu.%09llu\n%s",
			 RPMEM_HIST_MAGIC, ids, (unsigned long long)h->size,
			 (unsigned long long)h->sec,
			 (unsigned long long)h->nsec, tail);
	return n < 0 || (size_t)n >= len ? -ENOBUFS : n;
}
