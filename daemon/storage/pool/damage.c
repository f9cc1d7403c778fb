/* SPDX-License-Identifier: BSD-3-Clause */
/* damage.c -- the damaged pieces of a pool's image (damage.h) */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include "damage.h"
#include "log.h"
#include "meta.h"
#include "pool_int.h"
#include "store.h"
#include "util.h"

#define DM_MAGIC "rpmemd-damaged\0"
#define DM_VERSION 1
/* most pieces a list holds (a whole 1 TiB pool is 2^28 pieces) */
#define DM_MAX (1ull << 28)

struct dm_hdr {
	char magic[RPMEM_MAGIC_LEN];
	uint32_t version;
	uint32_t reserved;
	uint8_t uuid[RPMEM_UUID_LEN];
	uint64_t count;
	uint64_t csum; /* XXH3 of everything above and the entries */
};

/* dm_name -- "<pool>.damaged" (plus suffix) into out */
static void dm_name(const char *pool, const char *suffix, char *out,
		    size_t len)
{
	snprintf(out, len, "%s%s%s", pool, RPMEMD_DAMAGE_SUFFIX, suffix);
}

/* dm_csum -- the checksum of a header and its entries */
static uint64_t dm_csum(const struct dm_hdr *h, const struct rpmemd_damage *v)
{
	XXH3_state_t *st = XXH3_createState();
	uint64_t c;

	if (!st)
		return 0;
	XXH3_64bits_reset(st);
	XXH3_64bits_update(st, h, offsetof(struct dm_hdr, csum));
	XXH3_64bits_update(st, v, h->count * sizeof(*v));
	c = XXH3_64bits_digest(st);
	XXH3_freeState(st);
	return c;
}

/* dm_header -- read and check the header of the open list fd */
static int dm_header(int fd, const uint8_t *uuid, struct dm_hdr *h)
{
	if (rpmem_pread_full(fd, h, sizeof(*h), 0) ||
	    memcmp(h->magic, DM_MAGIC, sizeof(h->magic)) ||
	    h->version != DM_VERSION || h->count > DM_MAX ||
	    (uuid && memcmp(h->uuid, uuid, sizeof(h->uuid))))
		return -EBADMSG;
	return 0;
}

int rpmemd_damage_load(int metafd, const char *pool, const uint8_t *uuid,
		       struct rpmemd_damage **v, size_t *n)
{
	char fn[RPMEM_NAME_MAX + 16];
	struct rpmemd_damage *e = NULL;
	struct dm_hdr h;
	int fd, ret;

	*v = NULL;
	*n = 0;
	if (metafd < 0)
		return 0;
	dm_name(pool, "", fn, sizeof(fn));
	fd = rpmemd_open_ro(metafd, fn);
	if (fd < 0)
		return fd == -ENOENT ? 0 : fd;
	ret = dm_header(fd, uuid, &h);
	if (!ret && !(e = malloc((h.count ? h.count : 1) * sizeof(*e))))
		ret = -ENOMEM;
	if (!ret && (rpmem_pread_full(fd, e, h.count * sizeof(*e), sizeof(h)) ||
		     dm_csum(&h, e) != h.csum))
		ret = -EBADMSG;
	close(fd);
	if (ret == -EBADMSG)
		WARN("pool '%s': its list of damaged pieces is damaged or not its own; a scrub lists them again",
		     pool);
	if (ret) {
		free(e);
		return ret;
	}
	*v = e;
	*n = h.count;
	return 0;
}

/* write_all -- len bytes at off; 0 or -errno */
static int write_all(int fd, const void *buf, size_t len, uint64_t off)
{
	const uint8_t *p = buf;

	while (len) {
		ssize_t k = pwrite(fd, p, len, (off_t)off);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -errno;
		p += k;
		off += (uint64_t)k;
		len -= (size_t)k;
	}
	return 0;
}

int rpmemd_damage_store(int metafd, const char *pool, const uint8_t *uuid,
			const struct rpmemd_damage *v, size_t n)
{
	char fn[RPMEM_NAME_MAX + 16], tmp[RPMEM_NAME_MAX + 16];
	struct dm_hdr h = { .version = DM_VERSION, .count = n };
	int fd, ret;

	if (!n)
		return rpmemd_damage_unlink(metafd, pool);
	dm_name(pool, "", fn, sizeof(fn));
	dm_name(pool, ".tmp", tmp, sizeof(tmp));
	memcpy(h.magic, DM_MAGIC, sizeof(h.magic));
	memcpy(h.uuid, uuid, sizeof(h.uuid));
	h.csum = dm_csum(&h, v);
	fd = rpmemd_open_own(metafd, tmp, O_RDWR | O_CREAT);
	if (fd < 0)
		return fd;
	ret = ftruncate(fd, 0) ? -errno : 0;
	if (!ret)
		ret = write_all(fd, &h, sizeof(h), 0);
	if (!ret)
		ret = write_all(fd, v, n * sizeof(*v), sizeof(h));
	if (!ret && fsync(fd))
		ret = -errno;
	close(fd);
	if (!ret && renameat(metafd, tmp, metafd, fn))
		ret = -errno;
	if (!ret && fsync(metafd))
		ret = -errno;
	if (ret)
		unlinkat(metafd, tmp, 0);
	return ret;
}

int rpmemd_damage_unlink(int metafd, const char *pool)
{
	char fn[RPMEM_NAME_MAX + 16];

	dm_name(pool, ".tmp", fn, sizeof(fn));
	rpmemd_unlink_own(metafd, fn);
	dm_name(pool, "", fn, sizeof(fn));
	if (unlinkat(metafd, fn, 0)) {
		if (errno != ENOENT)
			return -errno;
		return 0;
	}
	return fsync(metafd) ? -errno : 0;
}

/* by_piece -- order entries (or a piece index key) by piece */
static int by_piece(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

const struct rpmemd_damage *rpmemd_damage_find(const struct rpmemd_damage *v,
					       size_t n, uint64_t piece)
{
	return n ? bsearch(&piece, v, n, sizeof(*v), by_piece) : NULL;
}

/*
 * merge -- the list v[n] with add[nadd] in (replacing entries of the same
 * piece; both sorted) and the pieces of ok[nok] (sorted) out, into *out (malloc'ed) and *nout
 */
static int merge(const struct rpmemd_damage *v, size_t n,
		 const struct rpmemd_damage *add, size_t nadd,
		 const uint64_t *ok, size_t nok, struct rpmemd_damage **out,
		 size_t *nout)
{
	struct rpmemd_damage *m = malloc((n + nadd ? n + nadd : 1) * sizeof(*m));
	size_t k = 0;

	if (!m)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		if (!rpmemd_damage_find(add, nadd, v[i].piece) &&
		    !(nok && bsearch(&v[i].piece, ok, nok, sizeof(*ok),
				     by_piece)))
			m[k++] = v[i];
	}
	memcpy(&m[k], add, nadd * sizeof(*add));
	k += nadd;
	qsort(m, k, sizeof(*m), by_piece);
	*out = m;
	*nout = k;
	return 0;
}

/* listed -- a piece of ok[nok] (sorted) is in v[n] */
static int listed(const struct rpmemd_damage *v, size_t n, const uint64_t *ok,
		  size_t nok)
{
	for (size_t i = 0; i < nok; i++)
		if (rpmemd_damage_find(v, n, ok[i]))
			return 1;
	return 0;
}

/* forget -- drop the hash cache's entries of the pieces of add */
static void forget(struct rpmemd_pool *p, const struct rpmemd_damage *add,
		   size_t nadd)
{
	for (size_t i = 0; i < nadd; i++)
		rpmemd_hcache_forget(p->hc, add[i].piece * RPMEM_HASH_PIECE,
				     RPMEM_HASH_PIECE);
}

int rpmemd_damage_update(struct rpmemd_pool *p,
			 const struct rpmemd_damage *add, size_t nadd,
			 const uint64_t *ok, size_t nok,
			 struct rpmemd_damage_change *chg)
{
	struct rpmemd_damage *v = NULL, *m = NULL;
	size_t n = 0, k = 0;
	int ret;

	/* the cache first: a crash after it leaves it without them */
	forget(p, add, nadd);
	pthread_mutex_lock(&p->meta_lock);
	ret = rpmemd_damage_load(p->region->metafd, p->name, p->meta.uuid, &v,
				 &n);
	if (ret == -EBADMSG)
		ret = 0; /* rebuilt from what this scrub finds */
	chg->before = chg->after = n;
	if (!ret && !nadd && !listed(v, n, ok, nok))
		goto out; /* intact pieces not listed change nothing */
	if (!ret)
		ret = merge(v, n, add, nadd, ok, nok, &m, &k);
	if (!ret)
		ret = rpmemd_damage_store(p->region->metafd, p->name,
					  p->meta.uuid, m, k);
	if (!ret)
		chg->after = k;
out:
	pthread_mutex_unlock(&p->meta_lock);
	free(v);
	free(m);
	return ret;
}

/* list_bytes -- the bytes of a list of count pieces of a pool of size */
static uint64_t list_bytes(uint64_t count, uint64_t size)
{
	uint64_t b = count * RPMEM_HASH_PIECE;

	return b < size ? b : size;
}

uint64_t rpmemd_damage_bytes(struct rpmemd_pool *p)
{
	struct rpmemd_damage *v = NULL;
	size_t n = 0;

	pthread_mutex_lock(&p->meta_lock);
	rpmemd_damage_load(p->region->metafd, p->name, p->meta.uuid, &v, &n);
	pthread_mutex_unlock(&p->meta_lock);
	free(v);
	return list_bytes(n, p->size);
}

void rpmemd_damage_info(struct rpmemd_region *r, struct rpmem_pool_info *v,
			uint32_t n)
{
	char fn[RPMEM_NAME_MAX + 16];
	struct dm_hdr h;

	for (uint32_t i = 0; r->metafd >= 0 && i < n; i++) {
		dm_name(v[i].name, "", fn, sizeof(fn));
		int fd = rpmemd_open_ro(r->metafd, fn);
		if (fd < 0)
			continue;
		/* a list that is not the pool's: at least a piece */
		if (dm_header(fd, v[i].uuid, &h))
			h.count = 1;
		v[i].damaged = list_bytes(h.count, v[i].size);
		close(fd);
	}
}
