/* SPDX-License-Identifier: BSD-3-Clause */
/* scrub.c -- the hashes of a pool's committed image, and scrub (scrub.h) */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include "crashpoint.h"
#include "damage.h"
#include "guard.h"
#include "hash.h"
#include "log.h"
#include "meta.h"
#include "pool_int.h"
#include "scrub.h"
#include "util.h"
#include "wire.h"

#define SC_MAGIC "rpmemd-scrub\0\0\0"
#define SC_VERSION 1
#define SC_HDR_SIZE 4096u
#define SC_PIECE RPMEM_HASH_PIECE
/* pieces hashed and written at once while recording (64 MiB of pool) */
#define SC_BATCH RPMEM_MAX_SCRUB_PIECES
#define SC_SUFFIX_MAX 32 /* ".scrub.v<N>" and the like */

struct sc_hdr {
	char magic[RPMEM_MAGIC_LEN];
	uint32_t version;
	uint32_t piece;
	uint8_t uuid[RPMEM_UUID_LEN];
	uint64_t size;
	uint64_t generation;
	uint64_t npieces;
	uint64_t key;
	uint64_t csum; /* XXH3 of everything above */
};

struct sc_entry {
	uint64_t hash;
	uint64_t check;
};

/* sc_check -- the check of piece i's hash under key (never 0) */
static uint64_t sc_check(uint64_t hash, uint64_t i, uint64_t key)
{
	return rpmem_mix64(hash ^ rpmem_mix64(i ^ key)) | 1;
}

static uint64_t hdr_csum(const struct sc_hdr *h)
{
	return XXH3_64bits(h, offsetof(struct sc_hdr, csum));
}

/* sc_name -- "<pool>.scrub" (plus suffix) into out */
static void sc_name(const char *pool, const char *suffix, char *out,
		    size_t len)
{
	snprintf(out, len, "%s%s%s", pool, RPMEMD_SCRUB_SUFFIX, suffix);
}

/* pwrite_all -- len bytes at off; 0 or -errno */
static int pwrite_all(int fd, const void *buf, size_t len, uint64_t off)
{
	const uint8_t *p = buf;

	while (len) {
		ssize_t n = pwrite(fd, p, len, (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		p += n;
		off += (uint64_t)n;
		len -= (size_t)n;
	}
	return 0;
}

/*
 * piece_hashes -- the hashes of n pieces from piece first: from the hash
 * cache where valid (it keeps what it hashes), else from the data, its
 * long runs read from the pool's file where it has one (a record passes
 * over the whole pool: through the mapping it would fault in every page
 * table entry, which the next dense sync's remapping then tears down)
 */
static int piece_hashes(struct rpmemd_pool *p, uint64_t first, uint32_t n,
			uint64_t *out, unsigned nthreads)
{
	uint64_t off = first * SC_PIECE;
	uint64_t len = (uint64_t)n * SC_PIECE;

	if (len > p->size - off)
		len = p->size - off;
	struct rpmemd_hcache_use use = { 0, 0, 0 };
	if (p->hc && p->fd >= 0)
		return rpmemd_hcache_hash_fd(p->hc, p->addr, p->fd, p->size,
					     off, SC_PIECE, n, 0, out,
					     nthreads, 0, &use);
	if (p->hc)
		return rpmemd_hcache_hash(p->hc, p->addr, p->size, off,
					  SC_PIECE, n, 0, out, nthreads, 0,
					  &use);
	if (p->fd >= 0)
		return rpmem_hash_fd_blocks(p->fd, off, len, SC_PIECE, out,
					    nthreads);
	return rpmem_hash_blocks(p->addr + off, (size_t)len, SC_PIECE, out,
				 nthreads);
}

/* the pool's list of damaged pieces while a commit records its hashes */
struct carry {
	struct rpmemd_damage *v;
	size_t n;
	size_t next; /* the first entry not passed yet */
	size_t kept; /* entries still damaged: moved to the front of v */
};

/*
 * carry_batch -- the listed pieces among n hashes h from piece first: one
 * whose data still hashes as the scrub read it was not rewritten, so it
 * keeps the hash the old record held (it still scrubs as damaged) and
 * stays listed; the others were rewritten and leave the list
 */
static void carry_batch(struct carry *c, uint64_t first, uint32_t n,
			uint64_t *h)
{
	for (; c->next < c->n && c->v[c->next].piece < first + n; c->next++) {
		struct rpmemd_damage d = c->v[c->next];
		if (d.piece < first || h[d.piece - first] != d.found)
			continue;
		h[d.piece - first] = d.want;
		c->v[c->kept++] = d;
	}
}

/* record_entries -- every piece's entry into fd under key; 0 or -errno */
static int record_entries(struct rpmemd_pool *p, int fd, uint64_t npieces,
			  uint64_t key, unsigned nthreads,
			  const struct rpmemd_scrub_turns *t, struct carry *c)
{
	uint64_t *h = malloc(SC_BATCH * sizeof(*h));
	struct sc_entry *e = malloc(SC_BATCH * sizeof(*e));
	int ret = h && e ? 0 : -ENOMEM;

	for (uint64_t first = 0; !ret && first < npieces; first += SC_BATCH) {
		uint32_t n = npieces - first < SC_BATCH ?
				     (uint32_t)(npieces - first) : SC_BATCH;
		if (t && t->take)
			t->take(t->arg);
		ret = piece_hashes(p, first, n, h, nthreads);
		if (t && t->give)
			t->give(t->arg);
		if (!ret)
			carry_batch(c, first, n, h);
		for (uint32_t i = 0; !ret && i < n; i++)
			e[i] = (struct sc_entry){ h[i],
						  sc_check(h[i], first + i,
							   key) };
		if (!ret)
			ret = pwrite_all(fd, e, n * sizeof(*e),
					 SC_HDR_SIZE + first * sizeof(*e));
	}
	free(h);
	free(e);
	return ret;
}

/* record_header -- the header of a record of generation gen under key */
static int record_header(struct rpmemd_pool *p, int fd, uint64_t gen,
			 uint64_t npieces, uint64_t key)
{
	uint8_t page[SC_HDR_SIZE] = { 0 };
	struct sc_hdr h = { .version = SC_VERSION, .piece = SC_PIECE,
			    .size = p->size, .generation = gen,
			    .npieces = npieces, .key = key };
	struct rpmemd_meta m;

	rpmemd_pool_get_meta(p, &m);
	memcpy(h.magic, SC_MAGIC, sizeof(h.magic));
	memcpy(h.uuid, m.uuid, sizeof(h.uuid));
	h.csum = hdr_csum(&h);
	memcpy(page, &h, sizeof(h));
	return pwrite_all(fd, page, sizeof(page), 0);
}

/*
 * carry_end -- the record is in place: the list keeps the pieces still
 * damaged (chg: its length before and after)
 */
static void carry_end(struct rpmemd_pool *p, struct carry *c,
		      struct rpmemd_damage_change *chg)
{
	int ret;

	chg->before = c->n;
	chg->after = c->n;
	if (c->kept == c->n)
		return;
	pthread_mutex_lock(&p->meta_lock);
	ret = rpmemd_damage_store(p->region->metafd, p->name, p->meta.uuid,
				  c->v, c->kept);
	pthread_mutex_unlock(&p->meta_lock);
	if (ret)
		WARN("pool '%s': cannot update its list of damaged pieces (a scrub finds the rewritten ones intact and drops them): %s",
		     p->name, strerror(-ret));
	else
		chg->after = c->kept;
}

int rpmemd_scrub_record(struct rpmemd_pool *p, uint64_t gen,
			unsigned nthreads, const struct rpmemd_scrub_turns *t,
			struct rpmemd_damage_change *chg)
{
	char fn[RPMEM_NAME_MAX + 16], tmp[RPMEM_NAME_MAX + 16];
	int dirfd = p->region->metafd;
	uint64_t npieces = (p->size + SC_PIECE - 1) / SC_PIECE, key;
	struct carry c = { 0 };
	int fd, ret;

	*chg = (struct rpmemd_damage_change){ 0 };
	if (dirfd < 0 || !p->addr)
		return -ENOTSUP;
	crash_point("scrub-record"); /* after a commit, before its record */
	pthread_mutex_lock(&p->meta_lock);
	ret = rpmemd_damage_load(dirfd, p->name, p->meta.uuid, &c.v, &c.n);
	pthread_mutex_unlock(&p->meta_lock);
	if (ret && ret != -EBADMSG)
		return ret; /* the old record stands: it knows the damage */
	if (getrandom(&key, sizeof(key), 0) != sizeof(key))
		key = rpmem_now_ns() ^ gen;
	sc_name(p->name, "", fn, sizeof(fn));
	sc_name(p->name, ".tmp", tmp, sizeof(tmp));
	/* a cached hash of a file changed behind our back is not taken */
	rpmemd_pool_check_file(p);
	fd = rpmemd_open_own(dirfd, tmp, O_RDWR | O_CREAT);
	if (fd < 0) {
		free(c.v);
		return fd;
	}
	ret = ftruncate(fd, 0) ? -errno : 0;
	if (!ret)
		ret = record_entries(p, fd, npieces, key, nthreads, t, &c);
	if (!ret)
		ret = record_header(p, fd, gen, npieces, key);
	if (!ret && fsync(fd))
		ret = -errno;
	close(fd);
	if (!ret && renameat(dirfd, tmp, dirfd, fn))
		ret = -errno;
	if (!ret && fsync(dirfd))
		ret = -errno;
	if (ret)
		unlinkat(dirfd, tmp, 0);
	else
		carry_end(p, &c, chg);
	free(c.v);
	return ret;
}

/* open_named -- the record file fn of a pool of size bytes, its header */
static int open_named(int metafd, const char *fn, uint64_t size,
		      struct sc_hdr *h)
{
	int fd = rpmemd_open_ro(metafd, fn);

	if (fd < 0)
		return -ENOENT;
	if (rpmem_pread_full(fd, h, sizeof(*h), 0) ||
	    memcmp(h->magic, SC_MAGIC, sizeof(h->magic)) ||
	    h->version != SC_VERSION || h->csum != hdr_csum(h) ||
	    h->piece != SC_PIECE || h->size != size ||
	    h->npieces != (size + SC_PIECE - 1) / SC_PIECE) {
		close(fd);
		return -EBADMSG;
	}
	return fd;
}

int rpmemd_scrub_gen(int metafd, const char *pool, uint64_t size,
		     uint64_t *gen)
{
	char fn[RPMEM_NAME_MAX + 16];
	struct sc_hdr h;
	int fd;

	sc_name(pool, "", fn, sizeof(fn));
	if ((fd = open_named(metafd, fn, size, &h)) < 0)
		return fd;
	close(fd);
	*gen = h.generation;
	return 0;
}

void rpmemd_scrub_clean(int metafd, const char *pool)
{
	char tmp[RPMEM_NAME_MAX + 16];

	sc_name(pool, ".tmp", tmp, sizeof(tmp));
	rpmemd_unlink_own(metafd, tmp);
}

int rpmemd_scrub_unlink(int metafd, const char *pool)
{
	char fn[RPMEM_NAME_MAX + 16];

	rpmemd_scrub_clean(metafd, pool);
	sc_name(pool, "", fn, sizeof(fn));
	if (unlinkat(metafd, fn, 0) && errno != ENOENT)
		return -errno;
	return 0;
}

/*
 * record_open -- p's record, its header checked against m: the fd, or
 * -ENOENT (none, or not of this pool: a damaged header is logged)
 */
static int record_open(struct rpmemd_pool *p, const struct rpmemd_meta *m,
		       struct sc_hdr *h)
{
	char fn[RPMEM_NAME_MAX + 16];
	int fd;

	if (p->region->metafd < 0)
		return -ENOENT;
	sc_name(p->name, "", fn, sizeof(fn));
	fd = rpmemd_open_ro(p->region->metafd, fn);
	if (fd < 0)
		return -ENOENT;
	if (rpmem_pread_full(fd, h, sizeof(*h), 0) ||
	    memcmp(h->magic, SC_MAGIC, sizeof(h->magic)) ||
	    h->version != SC_VERSION || h->csum != hdr_csum(h) ||
	    h->piece != SC_PIECE || h->size != p->size ||
	    h->npieces != (p->size + SC_PIECE - 1) / SC_PIECE ||
	    memcmp(h->uuid, m->uuid, sizeof(h->uuid))) {
		WARN("pool '%s': its scrub record is damaged or not its own: nothing can be verified until its next commit",
		     p->name);
		close(fd);
		return -ENOENT;
	}
	return fd;
}

/*
 * data_hashes -- the hashes of the pool's pieces [off, off + len); a
 * piece that cannot be read (poisoned, or the file shrank) is marked
 * damaged in piece[] (its hash left 0)
 */
static void data_hashes(struct rpmemd_pool *p, uint64_t off, uint64_t len,
			uint64_t *h, uint8_t *piece, unsigned nthreads)
{
	if (!rpmem_hash_blocks(p->addr + off, (size_t)len, SC_PIECE, h,
			       nthreads))
		return;
	/* find the faulting pieces one by one */
	for (uint64_t i = 0; i * SC_PIECE < len; i++) {
		uint64_t n = len - i * SC_PIECE < SC_PIECE ?
				     len - i * SC_PIECE : SC_PIECE;
		h[i] = 0;
		if (rpmem_hash_blocks(p->addr + off + i * SC_PIECE, (size_t)n,
				      SC_PIECE, &h[i], 1))
			piece[i] = RPMEM_SCRUB_DAMAGED;
	}
}

/* still -- the pool was not written to: no writer, same state and image */
static int still(struct rpmemd_pool *p, const struct rpmemd_meta *m0)
{
	struct rpmemd_meta m;

	rpmemd_pool_get_meta(p, &m);
	return !__atomic_load_n(&p->writer_sid, __ATOMIC_ACQUIRE) &&
	       m.state == m0->state && m.generation == m0->generation;
}

/* compare -- pieces with readable data against their entries */
static uint8_t compare(const struct sc_entry *e, const uint64_t *h,
		       uint64_t first, uint32_t count, uint64_t key,
		       uint8_t *piece)
{
	uint8_t why = RPMEM_SCRUB_RECORDED;

	for (uint32_t i = 0; i < count; i++) {
		if (piece[i] == RPMEM_SCRUB_DAMAGED)
			continue;
		if (e[i].check != sc_check(e[i].hash, first + i, key)) {
			piece[i] = RPMEM_SCRUB_UNVERIFIED;
			why = RPMEM_SCRUB_BAD_ENTRY;
		} else {
			piece[i] = e[i].hash == h[i] ? RPMEM_SCRUB_OK :
						       RPMEM_SCRUB_DAMAGED;
		}
	}
	return why;
}

/*
 * note -- the verdicts of count pieces from first (their entries e, the
 * data's hashes h) into the pool's list of damaged pieces: the damaged
 * ones in (their cached hashes dropped), the intact ones out
 */
static void note(struct rpmemd_pool *p, uint64_t first, uint32_t count,
		 const uint8_t *piece, const struct sc_entry *e,
		 const uint64_t *h, struct rpmemd_damage_change *chg)
{
	struct rpmemd_damage *add = malloc(count * sizeof(*add));
	uint64_t *ok = malloc(count * sizeof(*ok));
	size_t nadd = 0, nok = 0;
	int ret = add && ok ? 0 : -ENOMEM;

	for (uint32_t i = 0; !ret && i < count; i++) {
		if (piece[i] == RPMEM_SCRUB_DAMAGED)
			add[nadd++] = (struct rpmemd_damage){ first + i, h[i],
							      e[i].hash };
		else if (piece[i] == RPMEM_SCRUB_OK)
			ok[nok++] = first + i;
	}
	if (!ret)
		ret = rpmemd_damage_update(p, add, nadd, ok, nok, chg);
	if (ret)
		WARN("pool '%s': cannot keep the list of its damaged pieces: %s",
		     p->name, strerror(-ret));
	chg->found += nadd;
	free(add);
	free(ok);
}

/* check_record -- the pieces against the open record fd; *why */
static int check_record(struct rpmemd_pool *p, int fd,
			const struct sc_hdr *hd, const struct rpmemd_meta *m0,
			uint64_t off, uint32_t count, uint8_t *piece,
			uint8_t *why, unsigned nthreads,
			struct rpmemd_damage_change *chg)
{
	uint64_t first = off / SC_PIECE;
	uint64_t len = (uint64_t)count * SC_PIECE;
	struct sc_entry *e = malloc(count * sizeof(*e));
	uint64_t *h = malloc(count * sizeof(*h));

	if (!e || !h) {
		free(e);
		free(h);
		return -ENOMEM;
	}
	if (len > p->size - off)
		len = p->size - off;
	if (rpmem_pread_full(fd, e, count * sizeof(*e),
			     SC_HDR_SIZE + first * sizeof(*e))) {
		*why = RPMEM_SCRUB_NO_RECORD; /* truncated */
	} else {
		memset(piece, RPMEM_SCRUB_OK, count);
		data_hashes(p, off, len, h, piece, nthreads);
		if (still(p, m0)) {
			*why = compare(e, h, first, count, hd->key, piece);
			note(p, first, count, piece, e, h, chg);
		} else {
			*why = RPMEM_SCRUB_CHANGED;
			memset(piece, RPMEM_SCRUB_UNVERIFIED, count);
		}
	}
	free(e);
	free(h);
	return 0;
}

int rpmemd_scrub_check(struct rpmemd_pool *p, uint64_t off, uint32_t count,
		       uint8_t *piece, uint8_t *why, uint64_t *gen,
		       unsigned nthreads, struct rpmemd_damage_change *chg)
{
	struct rpmemd_meta m0;
	struct sc_hdr hd;
	int fd, ret;

	*chg = (struct rpmemd_damage_change){ 0 };
	memset(piece, RPMEM_SCRUB_UNVERIFIED, count);
	*gen = 0;
	rpmemd_pool_get_meta(p, &m0);
	fd = record_open(p, &m0, &hd);
	if (fd >= 0)
		*gen = hd.generation;
	if (__atomic_load_n(&p->writer_sid, __ATOMIC_ACQUIRE))
		*why = RPMEM_SCRUB_WRITER;
	else if (m0.state != RPMEM_POOL_CONSISTENT)
		*why = RPMEM_SCRUB_SYNCING;
	else if (fd < 0)
		*why = RPMEM_SCRUB_NO_RECORD;
	else if (hd.generation != m0.generation)
		*why = RPMEM_SCRUB_STALE;
	else {
		ret = check_record(p, fd, &hd, &m0, off, count, piece, why,
				   nthreads, chg);
		close(fd);
		return ret;
	}
	if (fd >= 0)
		close(fd);
	return 0;
}

/* the first differing range of an image and how many pieces differ */
struct diff {
	uint64_t off, len, n;
	int open; /* the first run may still grow */
};

/*
 * diff_batch -- n pieces from first (data hashes h, entries e) against
 * the record: a piece differs if its entry checks and holds another hash,
 * unless the pool's list of damaged pieces (dl, nd) has it as a scrub
 * found it (known damage the old image had too)
 */
static void diff_batch(const struct sc_entry *e, const uint64_t *h,
		       uint64_t first, uint32_t n, uint64_t key,
		       const struct rpmemd_damage *dl, size_t nd,
		       struct diff *d)
{
	for (uint32_t i = 0; i < n; i++) {
		const struct rpmemd_damage *k;
		if (e[i].check != sc_check(e[i].hash, first + i, key) ||
		    e[i].hash == h[i])
			continue;
		k = rpmemd_damage_find(dl, nd, first + i);
		if (k && k->found == h[i])
			continue;
		if (!d->n++) {
			d->off = (first + i) * SC_PIECE;
			d->open = 1;
		} else if (d->off + d->len != (first + i) * SC_PIECE) {
			d->open = 0;
		}
		if (d->open)
			d->len += SC_PIECE;
	}
}

int rpmemd_scrub_image(struct rpmemd_pool *p, uint64_t gen, unsigned nthreads,
		       uint64_t *off, uint64_t *len, uint64_t *count)
{
	uint64_t npieces = (p->size + SC_PIECE - 1) / SC_PIECE;
	struct sc_entry *e = malloc(SC_BATCH * sizeof(*e));
	uint64_t *h = malloc(SC_BATCH * sizeof(*h));
	struct rpmemd_damage *dl = NULL;
	struct diff d = { 0, 0, 0, 0 };
	struct rpmemd_meta m;
	struct sc_hdr hd;
	size_t nd = 0;
	int fd, ret = e && h ? 0 : -ENOMEM;

	/* a cached hash of a file changed behind our back is not taken */
	rpmemd_pool_check_file(p);
	rpmemd_pool_get_meta(p, &m);
	if (!ret && (fd = record_open(p, &m, &hd)) < 0)
		ret = -ENOENT;
	else if (!ret && hd.generation != gen)
		ret = -ENOENT, close(fd);
	if (ret) {
		free(e);
		free(h);
		return ret;
	}
	pthread_mutex_lock(&p->meta_lock);
	rpmemd_damage_load(p->region->metafd, p->name, m.uuid, &dl, &nd);
	pthread_mutex_unlock(&p->meta_lock);
	for (uint64_t first = 0; !ret && first < npieces; first += SC_BATCH) {
		uint32_t n = npieces - first < SC_BATCH ?
				     (uint32_t)(npieces - first) : SC_BATCH;
		ret = piece_hashes(p, first, n, h, nthreads);
		if (!ret && rpmem_pread_full(fd, e, n * sizeof(*e),
					     SC_HDR_SIZE + first * sizeof(*e)))
			ret = -ENOENT; /* a truncated record */
		if (!ret)
			diff_batch(e, h, first, n, hd.key, dl, nd, &d);
	}
	close(fd);
	free(dl);
	free(e);
	free(h);
	*off = d.off;
	*len = d.len;
	*count = d.n;
	return ret ? ret : d.n ? -EILSEQ : 0;
}

/* vouched -- every piece of data hashes as the record fd's entries say */
static int vouched(int fd, const struct sc_hdr *hd, uint64_t off,
		   const uint8_t *data, uint64_t len, uint64_t *bad)
{
	uint32_t count = (uint32_t)((len + SC_PIECE - 1) / SC_PIECE);
	struct sc_entry *e = malloc(count * sizeof(*e));
	uint64_t *h = malloc(count * sizeof(*h)), first = off / SC_PIECE;
	int ret = e && h ? 0 : -ENOMEM;

	if (!ret && (rpmem_pread_full(fd, e, count * sizeof(*e),
				      SC_HDR_SIZE + first * sizeof(*e)) ||
		     rpmem_hash_blocks(data, (size_t)len, SC_PIECE, h, 1)))
		ret = -ENOENT;
	for (uint32_t i = 0; !ret && i < count; i++)
		if (e[i].check != sc_check(e[i].hash, first + i, hd->key) ||
		    e[i].hash != h[i]) {
			*bad = off + (uint64_t)i * SC_PIECE;
			ret = -EILSEQ;
		}
	free(e);
	free(h);
	return ret;
}

/* a repair's copy, for the guard */
struct repair_args {
	struct rpmemd_pool *p;
	uint64_t off, len;
	const uint8_t *data;
};

/* repair_copy -- the vouched data into the mapping, persisted */
static int repair_copy(void *arg)
{
	struct repair_args *a = arg;

	memcpy(a->p->addr + a->off, a->data, a->len);
	return rpmemd_pool_persist(a->p, a->off, a->len);
}

int rpmemd_scrub_repair(struct rpmemd_pool *p, uint64_t off,
			const uint8_t *data, uint64_t len, uint64_t *bad,
			struct rpmemd_damage_change *chg)
{
	struct repair_args a = { p, off, len, data };
	uint64_t first = off / SC_PIECE, n = (len + SC_PIECE - 1) / SC_PIECE;
	uint64_t *ok = NULL;
	struct rpmemd_meta m;
	struct sc_hdr hd;
	int fd, ret;

	*chg = (struct rpmemd_damage_change){ 0 };
	rpmemd_pool_get_meta(p, &m);
	if (m.state != RPMEM_POOL_CONSISTENT)
		return -ESTALE;
	if ((fd = record_open(p, &m, &hd)) < 0)
		return -ENOENT;
	ret = hd.generation == m.generation ?
		      vouched(fd, &hd, off, data, len, bad) :
		      -ENOENT;
	close(fd);
	if (ret)
		return ret;
	if ((ret = rpmemd_hcache_write_begin(p->hc, off, len)))
		return ret;
	ret = rpmem_guard_run(repair_copy, &a);
	rpmemd_hcache_write_end(p->hc, off, len);
	if (ret)
		return ret;
	if (!(ok = malloc(n * sizeof(*ok))))
		return 0; /* repaired; the next scrub drops them from the list */
	for (uint64_t i = 0; i < n; i++)
		ok[i] = first + i;
	ret = rpmemd_damage_update(p, NULL, 0, ok, n, chg);
	if (ret)
		WARN("pool '%s': repaired, but its list of damaged pieces is not updated (a scrub drops them): %s",
		     p->name, strerror(-ret));
	free(ok);
	return 0;
}

/*
 * image_hash -- XXH3 of the piece hashes of record fd (header h), each
 * as 8 bytes little endian: the image's hash; 0 if an entry is damaged
 */
static uint64_t image_hash(int fd, const struct sc_hdr *h)
{
	struct sc_entry *e = malloc(SC_BATCH * sizeof(*e));
	XXH3_state_t *st = XXH3_createState();
	uint64_t out = 0;
	int ok = e && st && XXH3_64bits_reset(st) == XXH_OK;

	for (uint64_t first = 0; ok && first < h->npieces; first += SC_BATCH) {
		uint32_t n = h->npieces - first < SC_BATCH ?
				     (uint32_t)(h->npieces - first) : SC_BATCH;
		ok = !rpmem_pread_full(fd, e, n * sizeof(*e),
				       SC_HDR_SIZE + first * sizeof(*e));
		for (uint32_t i = 0; ok && i < n; i++) {
			uint8_t le[sizeof(uint64_t)];
			ok = e[i].check == sc_check(e[i].hash, first + i, h->key);
			le64_put(le, e[i].hash);
			XXH3_64bits_update(st, le, sizeof(le));
		}
	}
	if (ok)
		out = XXH3_64bits_digest(st);
	XXH3_freeState(st);
	free(e);
	return out;
}


uint64_t rpmemd_scrub_keep(int metafd, const char *pool, uint64_t size,
			   uint64_t gen)
{
	char fn[RPMEM_NAME_MAX + 16], kept[RPMEM_NAME_MAX + 40];
	char sfx[SC_SUFFIX_MAX];
	struct sc_hdr h;
	uint64_t hash = 0;
	int fd;

	sc_name(pool, "", fn, sizeof(fn));
	snprintf(sfx, sizeof(sfx), ".v%llu", (unsigned long long)gen);
	sc_name(pool, sfx, kept, sizeof(kept));
	if ((fd = open_named(metafd, fn, size, &h)) < 0)
		return 0;
	if (h.generation == gen) {
		hash = image_hash(fd, &h);
		if (renameat(metafd, fn, metafd, kept))
			hash = 0;
	}
	close(fd);
	return hash;
}

int rpmemd_scrub_version_unlink(int metafd, const char *pool, uint64_t gen)
{
	char fn[RPMEM_NAME_MAX + 40], sfx[SC_SUFFIX_MAX];

	snprintf(sfx, sizeof(sfx), ".v%llu", (unsigned long long)gen);
	sc_name(pool, sfx, fn, sizeof(fn));
	if (unlinkat(metafd, fn, 0) && errno != ENOENT)
		return -errno;
	return 0;
}

int rpmemd_scrub_version_check(int metafd, const char *pool, uint64_t size,
			       uint64_t gen, uint64_t off, uint32_t count,
			       const uint8_t *data, uint8_t *piece,
			       uint8_t *why)
{
	char fn[RPMEM_NAME_MAX + 40], sfx[SC_SUFFIX_MAX];
	uint64_t first = off / SC_PIECE, len = (uint64_t)count * SC_PIECE;
	struct sc_entry *e = malloc(count * sizeof(*e));
	uint64_t *h = malloc(count * sizeof(*h));
	struct sc_hdr hd;
	int fd = -1, ret = e && h ? 0 : -ENOMEM;

	snprintf(sfx, sizeof(sfx), ".v%llu", (unsigned long long)gen);
	sc_name(pool, sfx, fn, sizeof(fn));
	if (len > size - off)
		len = size - off;
	*why = RPMEM_SCRUB_NO_RECORD;
	if (!ret && (fd = open_named(metafd, fn, size, &hd)) == -ENOENT) {
		/* gen is the pool's image still (a pending pool's N) */
		sc_name(pool, "", fn, sizeof(fn));
		fd = open_named(metafd, fn, size, &hd);
	}
	if (!ret && fd >= 0 && hd.generation == gen &&
	    !rpmem_pread_full(fd, e, count * sizeof(*e),
			      SC_HDR_SIZE + first * sizeof(*e)) &&
	    !rpmem_hash_blocks(data, (size_t)len, SC_PIECE, h, 1))
		*why = compare(e, h, first, count, hd.key, piece);
	for (uint32_t i = 0; *why == RPMEM_SCRUB_NO_RECORD && i < count; i++)
		if (piece[i] != RPMEM_SCRUB_DAMAGED)
			piece[i] = RPMEM_SCRUB_UNVERIFIED;
	if (fd >= 0)
		close(fd);
	free(e);
	free(h);
	return ret;
}
