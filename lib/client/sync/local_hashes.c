/* SPDX-License-Identifier: BSD-3-Clause */
/* local_hashes.c -- the local copy's hashes, shared by parallel syncs */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "client_sync.h"
#include "util.h"

/*
 * Syncs of one local file to several targets (rpmemctl mirror|sync|verify
 * FILE TARGET...) each hash the whole file in their coarse pass (and,
 * with tree hashes, keep its 4 KiB piece hashes for the fine pass). Given
 * one of these, the first sync to get there hashes the file and keeps the
 * result; the others, arriving while it hashes, wait for it and copy. A
 * result is reused only for the same file as it was when hashed: its
 * device, inode, size, mtime and ctime as the sync's own start saw them
 * (so a sync that began after a change hashes anew), the same block size
 * and hash kind. Only syncs given the local file (local_fd) share.
 */
struct rpmemctl_local_hashes {
	pthread_mutex_t lock;
	int valid;
	struct stat st; /* the file as it was when hashed */
	uint64_t len;
	uint32_t bs;
	int tree;
	uint64_t *lh;	/* len / bs coarse hashes */
	uint64_t *fl;	/* tree: the 4 KiB piece hashes, or NULL */
	unsigned computed; /* times the file was hashed */
};

/* rpmemctl_local_hashes_new -- an empty cache of local hashes */
RPMEM_EXPORT int rpmemctl_local_hashes_new(struct rpmemctl_local_hashes **out)
{
	client_api_begin();
	if (!out) {
		client_set_last(-EINVAL, "invalid argument");
		return -EINVAL;
	}
	struct rpmemctl_local_hashes *h = calloc(1, sizeof(*h));
	if (!h) {
		client_set_last(-ENOMEM, "out of memory");
		return -ENOMEM;
	}
	pthread_mutex_init(&h->lock, NULL);
	*out = h;
	return 0;
}

RPMEM_EXPORT void
rpmemctl_local_hashes_delete(struct rpmemctl_local_hashes **hp)
{
	if (!hp || !*hp)
		return;
	pthread_mutex_destroy(&(*hp)->lock);
	free((*hp)->lh);
	free((*hp)->fl);
	free(*hp);
	*hp = NULL;
}

RPMEM_EXPORT unsigned
rpmemctl_local_hashes_computed(const struct rpmemctl_local_hashes *h)
{
	return h ? h->computed : 0;
}

/* same_file -- st and the cached file are one file, unchanged */
static int same_file(const struct rpmemctl_local_hashes *h,
		     const struct stat *st)
{
	return h->st.st_dev == st->st_dev && h->st.st_ino == st->st_ino &&
	       h->st.st_size == st->st_size &&
	       h->st.st_mtim.tv_sec == st->st_mtim.tv_sec &&
	       h->st.st_mtim.tv_nsec == st->st_mtim.tv_nsec &&
	       h->st.st_ctim.tv_sec == st->st_ctim.tv_sec &&
	       h->st.st_ctim.tv_nsec == st->st_ctim.tv_nsec;
}

/*
 * client_local_hashes_get -- lh (len / bs, rounded up) and, if fl is not
 * NULL, the npieces 4 KiB hashes of the file st describes: copied from h
 * if it holds them, else computed by hash (which fills lh and fl; 0 or
 * an error) and kept. Returns hash's error, or 0.
 */
int client_local_hashes_get(struct rpmemctl_local_hashes *h,
			    const struct stat *st, uint64_t len, uint32_t bs,
			    int tree, uint64_t *lh, uint64_t *fl,
			    uint64_t npieces, int (*hash)(void *), void *arg)
{
	uint64_t n = (len + bs - 1) / bs;
	pthread_mutex_lock(&h->lock);
	if (!h->valid || !same_file(h, st) || h->len != len ||
	    h->bs != bs || h->tree != tree || (fl && !h->fl)) {
		int err = hash(arg);
		h->computed++;
		h->valid = 0;
		free(h->lh);
		free(h->fl);
		h->lh = err ? NULL : malloc(n * sizeof(*lh));
		h->fl = err || !fl ? NULL : malloc(npieces * sizeof(*fl));
		if (h->lh && (!fl || h->fl)) {
			memcpy(h->lh, lh, n * sizeof(*lh));
			if (fl)
				memcpy(h->fl, fl, npieces * sizeof(*fl));
			h->st = *st;
			h->len = len;
			h->bs = bs;
			h->tree = tree;
			h->valid = 1;
		}
		pthread_mutex_unlock(&h->lock);
		return err;
	}
	memcpy(lh, h->lh, n * sizeof(*lh));
	if (fl)
		memcpy(fl, h->fl, npieces * sizeof(*fl));
	pthread_mutex_unlock(&h->lock);
	return 0;
}
