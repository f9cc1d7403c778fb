/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * undo.c -- a pool's undo journal (undo.h): save, load, apply, discard
 * (the repair of a version's journal: undo_mend.c)
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>
#include <xxhash.h>

#include "crashpoint.h"
#include "log.h"
#include "meta.h"
#include "undo.h"
#include "util.h"
#include "undo_int.h"
#include "wire.h"


/* undo_file -- "<pool>.undo" into out */
static int undo_file(const char *pool, char *out, size_t len)
{
	if (!rpmem_name_valid(pool))
		return -EINVAL;
	snprintf(out, len, "%s%s", pool, RPMEMD_UNDO_SUFFIX);
	return 0;
}

/* undo_rec_check -- a record's check: its data seeded with where it belongs */
uint64_t undo_rec_check(const void *data, uint64_t off, uint32_t count,
			uint64_t gen)
{
	uint64_t seed = off ^ ((uint64_t)count << 40) ^ (gen * 0x9e3779b97f4a7c15ull);
	return XXH3_64bits_withSeed(data, (size_t)count * RPMEMD_UNDO_BS, seed);
}

/* undo_hdr_encode -- the header of u into buf[RPMEMD_UNDO_HDR] */
void undo_hdr_encode(const struct rpmemd_undo *u, uint8_t *buf)
{
	size_t sl = strlen(u->source);
	memset(buf, 0, RPMEMD_UNDO_HDR);
	memcpy(buf, UNDO_MAGIC, 8);
	le32_put(buf + 8, UNDO_VERSION);
	le32_put(buf + 12, RPMEMD_UNDO_BS);
	memcpy(buf + 16, u->uuid, 16);
	le64_put(buf + 32, u->size);
	le64_put(buf + 40, u->gen);
	le16_put(buf + H_SOURCE, (uint16_t)sl);
	memcpy(buf + H_SOURCE + 2, u->source, sl);
	le64_put(buf + H_CHECK, XXH3_64bits(buf, H_CHECK));
}

/* undo_hdr_decode -- a header into u; -EBADMSG if it is not a valid one */
int undo_hdr_decode(const uint8_t *buf, struct rpmemd_undo *u)
{
	uint16_t sl = le16_get(buf + H_SOURCE);
	if (memcmp(buf, UNDO_MAGIC, 8) || le32_get(buf + 8) != UNDO_VERSION ||
	    le32_get(buf + 12) != RPMEMD_UNDO_BS || sl > RPMEM_STR_MAX ||
	    le64_get(buf + H_CHECK) != XXH3_64bits(buf, H_CHECK))
		return -EBADMSG;
	memcpy(u->uuid, buf + 16, 16);
	u->size = le64_get(buf + 32);
	u->gen = le64_get(buf + 40);
	memcpy(u->source, buf + H_SOURCE + 2, sl);
	u->source[sl] = '\0';
	return 0;
}

/* undo_new -- an empty journal object for a pool of size bytes */
static struct rpmemd_undo *undo_new(uint64_t size)
{
	struct rpmemd_undo *u = calloc(1, sizeof(*u));
	uint64_t nb = size / RPMEMD_UNDO_BS;
	if (!u)
		return NULL;
	u->bits = calloc((size_t)(nb + 63) / 64 ? (size_t)(nb + 63) / 64 : 1,
			 sizeof(uint64_t));
	if (!u->bits) {
		free(u);
		return NULL;
	}
	u->fd = -1;
	u->size = size;
	u->end = RPMEMD_UNDO_HDR;
	return u;
}

void rpmemd_undo_close(struct rpmemd_undo **up)
{
	struct rpmemd_undo *u = up ? *up : NULL;
	if (!u)
		return;
	*up = NULL;
	if (u->fd >= 0)
		close(u->fd);
	free(u->bits);
	free(u->rec);
	free(u);
}

/* undo_pwrite_full -- all of buf at off */
int undo_pwrite_full(int fd, const void *buf, size_t len, uint64_t off)
{
	const uint8_t *p = buf;
	while (len) {
		ssize_t n = pwrite(fd, p, len, (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO;
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

int rpmemd_undo_create(int dirfd, const char *pool, const uint8_t *uuid,
		       uint64_t size, uint64_t gen, const char *source,
		       struct rpmemd_undo **out)
{
	char file[RPMEM_NAME_MAX + 16];
	uint8_t hdr[RPMEMD_UNDO_HDR];
	struct rpmemd_undo *u;
	int ret = undo_file(pool, file, sizeof(file));

	if (ret)
		return ret;
	if (!(u = undo_new(size)))
		return -ENOMEM;
	memcpy(u->uuid, uuid, 16);
	u->gen = gen;
	rpmem_strlcpy(u->source, source ? source : "", sizeof(u->source));
	u->fd = rpmemd_open_own(dirfd, file, O_RDWR | O_CREAT);
	if (u->fd < 0) {
		ret = u->fd;
		goto err;
	}
	undo_hdr_encode(u, hdr);
	if (ftruncate(u->fd, 0) ||
	    (ret = undo_pwrite_full(u->fd, hdr, sizeof(hdr), 0)) ||
	    fdatasync(u->fd) || fsync(dirfd)) {
		ret = ret ? ret : -errno;
		goto err_unlink;
	}
	*out = u;
	return 0;

err_unlink:
	unlinkat(dirfd, file, 0);
err:
	rpmemd_undo_close(&u);
	return ret;
}

/* bit_get, bit_set -- block b is journaled / make it so */
static int bit_get(const struct rpmemd_undo *u, uint64_t b)
{
	/* a WRITE reads the bits while the journal thread sets others */
	return (__atomic_load_n(&u->bits[b / 64], __ATOMIC_ACQUIRE) >>
		(b % 64)) & 1;
}

static void bit_set(struct rpmemd_undo *u, uint64_t b)
{
	__atomic_fetch_or(&u->bits[b / 64], 1ull << (b % 64),
			  __ATOMIC_RELEASE);
}

/* rec_add -- remember a record (and its blocks) */
static int rec_add(struct rpmemd_undo *u, uint64_t off, uint32_t count,
		   uint64_t fpos, uint64_t check)
{
	if (u->nrec == u->caprec) {
		size_t nc = u->caprec ? 2 * u->caprec : 64;
		void *nr = realloc(u->rec, nc * sizeof(*u->rec));
		if (!nr)
			return -ENOMEM;
		u->rec = nr;
		u->caprec = nc;
	}
	u->rec[u->nrec++] = (struct undo_rec){ off, count, fpos, check };
	for (uint64_t b = off / RPMEMD_UNDO_BS; b < off / RPMEMD_UNDO_BS + count;
	     b++) {
		if (!bit_get(u, b))
			u->blocks++;
		bit_set(u, b);
	}
	return 0;
}

/*
 * head_read -- the record at pos by its head only (a kept version's
 * records were durable before it was kept; their data is checked when it
 * is read): 0, 1 at a clean end, -EBADMSG
 */
static int head_read(struct rpmemd_undo *u, uint64_t pos, uint64_t fsize,
		     struct undo_rec *r)
{
	uint8_t h[RPMEMD_UNDO_REC];
	int ret;

	if (pos == fsize)
		return 1;
	if (fsize - pos < RPMEMD_UNDO_REC)
		return -EBADMSG;
	if ((ret = rpmem_pread_full(u->fd, h, sizeof(h), pos)))
		return ret;
	r->count = le32_get(h + 4);
	r->off = le64_get(h + 8);
	r->fpos = pos + RPMEMD_UNDO_REC;
	r->check = le64_get(h + 16);
	uint64_t len = (uint64_t)r->count * RPMEMD_UNDO_BS;
	if (le32_get(h) != REC_MAGIC || r->count == 0 ||
	    len > RPMEMD_UNDO_REC_MAX || r->off % RPMEMD_UNDO_BS ||
	    r->off > u->size || len > u->size - r->off ||
	    len > fsize - r->fpos)
		return -EBADMSG;
	return 0;
}

/*
 * rec_read -- the record at pos: 0 with *r (its data read into buf, at
 * least RPMEMD_UNDO_REC_MAX bytes), 1 at a clean end, -EBADMSG if it is
 * torn or not a record, -errno on a read error
 */
static int rec_read(struct rpmemd_undo *u, uint64_t pos, uint64_t fsize,
		    uint8_t *buf, struct undo_rec *r)
{
	int ret = head_read(u, pos, fsize, r);

	if (ret)
		return ret;
	ret = rpmem_pread_full(u->fd, buf, (size_t)r->count * RPMEMD_UNDO_BS,
			       r->fpos);
	if (ret)
		return ret;
	if (undo_rec_check(buf, r->off, r->count, u->gen) != r->check)
		return -EBADMSG;
	return 0;
}

/*
 * rec_walk -- the one walk over a journal's valid records: from *pos up
 * to lim, each one read (buf: with its data, checked, into buf; NULL: by
 * its head) and remembered (rec_add); *pos ends where the walk stopped.
 * 1 at a clean end at lim, -EBADMSG at a record that does not read,
 * -errno.
 */
static int rec_walk(struct rpmemd_undo *u, uint64_t *pos, uint64_t lim,
		    uint8_t *buf)
{
	struct undo_rec r;
	int ret;

	while ((ret = buf ? rec_read(u, *pos, lim, buf, &r) :
			    head_read(u, *pos, lim, &r)) == 0) {
		if ((ret = rec_add(u, r.off, r.count, r.fpos, r.check)))
			break;
		*pos = r.fpos + (uint64_t)r.count * RPMEMD_UNDO_BS;
	}
	return ret;
}

/*
 * valid_after -- a valid record starts somewhere after the one at pos
 * (records start at multiples of RPMEMD_UNDO_REC): 1 if so, 0 if none,
 * -errno; buf as rec_read's
 */
static int valid_after(struct rpmemd_undo *u, uint64_t pos, uint64_t fsize,
		       uint8_t *buf)
{
	const size_t csize = 64 << 10;
	uint8_t *chunk = malloc(csize);
	struct undo_rec r;
	int ret = chunk ? 0 : -ENOMEM;

	for (uint64_t at = pos + RPMEMD_UNDO_REC;
	     !ret && at + RPMEMD_UNDO_REC <= fsize; at += csize) {
		size_t n = fsize - at < csize ? (size_t)(fsize - at) : csize;
		if ((ret = rpmem_pread_full(u->fd, chunk, n, at)))
			break;
		for (size_t i = 0; i + RPMEMD_UNDO_REC <= n;
		     i += RPMEMD_UNDO_REC) {
			if (le32_get(chunk + i) != REC_MAGIC)
				continue;
			ret = rec_read(u, at + i, fsize, buf, &r);
			if (ret != -EBADMSG) {
				free(chunk);
				return ret ? ret : 1;
			}
			ret = 0;
		}
	}
	free(chunk);
	return ret;
}

/*
 * bad_record -- the record at pos does not check but valid records follow
 * it: not a torn tail (a crash tears only the last one) but damage, which
 * a rollback must not cut off and call the old image; kept in the file
 * and remembered (its range too, if its head is readable)
 */
static void bad_record(struct rpmemd_undo *u, uint64_t pos, uint64_t fsize)
{
	uint8_t h[RPMEMD_UNDO_REC];

	u->bad_pos = pos;
	u->bad_off = 0;
	u->bad_len = u->size;
	if (!rpmem_pread_full(u->fd, h, sizeof(h), pos) &&
	    le32_get(h) == REC_MAGIC && le32_get(h + 4) &&
	    le32_get(h + 4) <= RPMEMD_UNDO_REC_MAX / RPMEMD_UNDO_BS &&
	    le64_get(h + 8) < u->size) {
		u->bad_off = le64_get(h + 8);
		u->bad_len = (uint64_t)le32_get(h + 4) * RPMEMD_UNDO_BS;
		if (u->bad_len > u->size - u->bad_off)
			u->bad_len = u->size - u->bad_off;
	}
	u->end = fsize; /* appends go after all of it */
	WARN("undo journal: the record at byte %llu is damaged and valid records follow it: kept, not cut off; a rollback is refused",
	     (unsigned long long)pos);
}

/*
 * scan -- the valid records from the header on; the rest is cut off if it
 * is a torn tail (bad_record if valid records follow)
 */
static int scan(struct rpmemd_undo *u, uint64_t fsize)
{
	uint8_t *buf = malloc(RPMEMD_UNDO_REC_MAX);
	uint64_t pos = RPMEMD_UNDO_HDR;
	int ret;

	if (!buf)
		return -ENOMEM;
	ret = rec_walk(u, &pos, fsize, buf);
	if (ret == -EBADMSG && (ret = valid_after(u, pos, fsize, buf)) > 0) {
		free(buf);
		bad_record(u, pos, fsize);
		return 0;
	}
	free(buf);
	if (ret < 0 && ret != -EBADMSG)
		return ret;
	u->end = pos;
	if (pos < fsize) {
		NOTICE("undo journal: %llu bytes of a torn record cut off",
		       (unsigned long long)(fsize - pos));
		if (ftruncate(u->fd, (off_t)pos) || fdatasync(u->fd))
			return -errno;
	}
	return 0;
}

/*
 * torn_at -- what lies from pos to fsize (a record that does not read) is
 * one record an append left half written when a crash cut it short: too
 * short for a head, its head not written yet (zeros: the data goes
 * first) or its data running past the end; not a damaged record
 */
static int torn_at(struct rpmemd_undo *u, uint64_t pos, uint64_t fsize)
{
	static const uint8_t zero[RPMEMD_UNDO_REC];
	uint8_t h[RPMEMD_UNDO_REC];
	uint64_t left = fsize - pos;

	if (left < RPMEMD_UNDO_REC)
		return 1;
	if (left > RPMEMD_UNDO_REC + RPMEMD_UNDO_REC_MAX ||
	    rpmem_pread_full(u->fd, h, sizeof(h), pos))
		return 0;
	if (!memcmp(h, zero, sizeof(h)))
		return 1;
	return le32_get(h) == REC_MAGIC &&
	       (uint64_t)le32_get(h + 4) * RPMEMD_UNDO_BS >
		       left - RPMEMD_UNDO_REC;
}

/*
 * scan_ver -- the records of a version (rw: each one's data checked, else
 * by their heads) up to the end its trailer records; past it, or a torn
 * last record of a file whose trailer records no end, is cut off (rw) or
 * ignored; a record before that which does not read is -EBADMSG
 */
static int scan_ver(struct rpmemd_undo *u, uint64_t fsize, int rw)
{
	uint64_t lim = u->ver.end ? u->ver.end : fsize;
	uint64_t pos = RPMEMD_UNDO_HDR;
	uint8_t *buf = rw ? malloc(RPMEMD_UNDO_REC_MAX) : NULL;
	int ret;

	if (rw && !buf)
		return -ENOMEM;
	if (lim < RPMEMD_UNDO_HDR || lim > fsize)
		ret = -EBADMSG; /* records it had are gone */
	else
		ret = rec_walk(u, &pos, lim, buf);
	free(buf);
	if (ret == -EBADMSG && lim == fsize && !u->ver.end &&
	    pos <= fsize && torn_at(u, pos, fsize))
		ret = 1;
	if (ret < 0)
		return ret;
	u->end = pos;
	if (pos < fsize && rw) {
		NOTICE("version journal: %llu bytes of a torn record cut off",
		       (unsigned long long)(fsize - pos));
		if (ftruncate(u->fd, (off_t)pos) || fdatasync(u->fd))
			return -errno;
	}
	return 0;
}

/* ver_decode -- the version trailer of a header, if it has a valid one */
static void ver_decode(const uint8_t *buf, struct rpmemd_undo *u)
{
	const uint8_t *t = buf + H_VER;
	if (memcmp(t, VER_MAGIC, 8) ||
	    le64_get(t + VER_LEN) != XXH3_64bits(t, VER_LEN))
		return;
	u->ver.time = le64_get(t + 8);
	u->ver.hash = le64_get(t + 16);
	u->ver.next = le64_get(t + 24);
	u->ver.committed = le64_get(t + 32);
	if (!memcmp(t + VER_LEN + 8, VER_END_MAGIC, 8) &&
	    le64_get(t + VER_ALL - 8) == XXH3_64bits(t, VER_ALL - 8))
		u->ver.end = le64_get(t + VER_LEN + 16);
}

/* open_hdr -- open file and read its header into u */
static int open_hdr(int dirfd, const char *file, int flags,
		    struct rpmemd_undo *u, uint64_t *fsize)
{
	uint8_t hdr[RPMEMD_UNDO_HDR];
	struct stat st;
	int ret;

	u->fd = flags & O_RDWR ? rpmemd_open_own(dirfd, file, O_RDWR) :
				 rpmemd_open_ro(dirfd, file);
	if (u->fd < 0)
		return u->fd;
	if (fstat(u->fd, &st))
		return -errno;
	*fsize = (uint64_t)st.st_size;
	if (*fsize < RPMEMD_UNDO_HDR)
		return -EBADMSG;
	if ((ret = rpmem_pread_full(u->fd, hdr, sizeof(hdr), 0)))
		return ret;
	if ((ret = undo_hdr_decode(hdr, u)))
		return ret;
	ver_decode(hdr, u);
	return 0;
}

/* undo_open_hdr -- open <pool>.undo and read its header into u */
static int undo_open_hdr(int dirfd, const char *pool, int flags,
			 struct rpmemd_undo *u, uint64_t *fsize)
{
	char file[RPMEM_NAME_MAX + 16];
	int ret = undo_file(pool, file, sizeof(file));
	return ret ? ret : open_hdr(dirfd, file, flags, u, fsize);
}

int rpmemd_undo_load(int dirfd, const char *pool, const uint8_t *uuid,
		     uint64_t size, struct rpmemd_undo **out)
{
	struct rpmemd_undo *u = undo_new(size);
	uint64_t fsize = 0;
	int ret;

	if (!u)
		return -ENOMEM;
	ret = undo_open_hdr(dirfd, pool, O_RDWR, u, &fsize);
	if (!ret && (u->size != size || memcmp(u->uuid, uuid, 16)))
		ret = -EBADMSG;
	if (!ret)
		ret = scan(u, fsize);
	if (ret) {
		rpmemd_undo_close(&u);
		return ret;
	}
	*out = u;
	return 0;
}

int rpmemd_undo_load_file(int dirfd, const char *file, const uint8_t *uuid,
			  uint64_t size, int rw, struct rpmemd_undo **out)
{
	struct rpmemd_undo *u = undo_new(size);
	uint64_t fsize = 0;
	int ret;

	if (!u)
		return -ENOMEM;
	if (!rpmem_name_valid(file))
		ret = -EINVAL;
	else
		ret = open_hdr(dirfd, file, rw ? O_RDWR : O_RDONLY, u, &fsize);
	if (!ret && (u->size != size || memcmp(u->uuid, uuid, 16)))
		ret = -EBADMSG;
	u->heads = !rw;
	if (!ret)
		ret = scan_ver(u, fsize, rw);
	if (ret) {
		rpmemd_undo_close(&u);
		return ret;
	}
	*out = u;
	return 0;
}

/*
 * salvage_heads -- the records of a damaged version by their heads, up to
 * its recorded end (or the file's): past a head that does not read (but
 * a torn last record) they are unknown (partial)
 */
static int salvage_heads(struct rpmemd_undo *u, uint64_t fsize)
{
	uint64_t lim = u->ver.end && u->ver.end <= fsize ? u->ver.end : fsize;
	uint64_t pos = RPMEMD_UNDO_HDR;
	int ret = rec_walk(u, &pos, lim, NULL);

	if (ret == -EBADMSG && !(lim == fsize && !u->ver.end &&
				 torn_at(u, pos, fsize)))
		u->partial = 1;
	else if (ret < 0 && ret != -EBADMSG)
		return ret;
	u->partial |= u->ver.end > fsize; /* records it had are gone */
	u->end = pos;
	return 0;
}

int rpmemd_undo_load_salvage(int dirfd, const char *file, const uint8_t *uuid,
			     uint64_t size, uint64_t gen,
			     struct rpmemd_undo **out)
{
	struct rpmemd_undo *u = undo_new(size);
	uint8_t hdr[RPMEMD_UNDO_HDR];
	struct stat st;
	int ret = 0;

	if (!u)
		return -ENOMEM;
	u->fd = rpmem_name_valid(file) ?
			openat(dirfd, file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC) :
			-1;
	if (u->fd < 0 || fstat(u->fd, &st))
		ret = -errno;
	if (!ret && (uint64_t)st.st_size < RPMEMD_UNDO_HDR)
		ret = -EBADMSG;
	if (!ret)
		ret = rpmem_pread_full(u->fd, hdr, sizeof(hdr), 0);
	if (ret) {
		rpmemd_undo_close(&u);
		return ret;
	}
	/* a header that checks but is another pool's or generation's */
	if (!undo_hdr_decode(hdr, u) &&
	    (u->size != size || memcmp(u->uuid, uuid, 16) || u->gen != gen))
		u->partial = 1;
	u->size = size;
	u->gen = gen;
	u->heads = 1;
	ver_decode(hdr, u);
	if (!u->partial && (ret = salvage_heads(u, (uint64_t)st.st_size))) {
		rpmemd_undo_close(&u);
		return ret;
	}
	*out = u;
	return 0;
}

const struct rpmemd_undo_ver *rpmemd_undo_ver(const struct rpmemd_undo *u)
{
	return &u->ver;
}

int rpmemd_undo_set_ver(struct rpmemd_undo *u, const struct rpmemd_undo_ver *v)
{
	uint8_t t[VER_ALL];

	memcpy(t, VER_MAGIC, 8);
	le64_put(t + 8, v->time);
	le64_put(t + 16, v->hash);
	le64_put(t + 24, v->next);
	le64_put(t + 32, v->committed);
	le64_put(t + VER_LEN, XXH3_64bits(t, VER_LEN));
	memcpy(t + VER_LEN + 8, VER_END_MAGIC, 8);
	le64_put(t + VER_LEN + 16, u->end);
	le64_put(t + VER_ALL - 8, XXH3_64bits(t, VER_ALL - 8));
	/* one write of 72 bytes in one sector: a crash leaves old or new */
	int ret = undo_pwrite_full(u->fd, t, sizeof(t), H_VER);
	if (!ret && fdatasync(u->fd))
		ret = -errno;
	if (!ret) {
		u->ver = *v;
		u->ver.end = u->end;
	}
	return ret;
}

/* undo_rec_data -- the data of record r into buf, checked; 0 or -EIO/-errno */
int undo_rec_data(const struct rpmemd_undo *u, const struct undo_rec *r,
		  uint8_t *buf)
{
	size_t len = (size_t)r->count * RPMEMD_UNDO_BS;
	int ret = rpmem_pread_full(u->fd, buf, len, r->fpos);
	/* a record that rotted since it was written gives nothing */
	if (!ret && undo_rec_check(buf, r->off, r->count, u->gen) != r->check)
		ret = -EIO;
	return ret;
}

int rpmemd_undo_overlay(const struct rpmemd_undo *u, uint64_t off,
			uint64_t len, uint8_t *out, uint8_t *tmp,
			uint64_t *bad)
{
	if (u->partial) { /* any block may be in what does not read */
		*bad = off;
		return -EIO;
	}
	for (size_t i = 0; i < u->nrec; i++) {
		const struct undo_rec *r = &u->rec[i];
		uint64_t rend = r->off + (uint64_t)r->count * RPMEMD_UNDO_BS;
		if (rend <= off || r->off >= off + len)
			continue;
		int ret = undo_rec_data(u, r, tmp);
		if (ret) {
			*bad = r->off;
			return ret;
		}
		uint64_t a = r->off > off ? r->off : off;
		uint64_t b = rend < off + len ? rend : off + len;
		memcpy(out + (a - off), tmp + (a - r->off), (size_t)(b - a));
	}
	return 0;
}

/* rec_wanted -- r covers a block of [off, off + len) not in filled */
static int rec_wanted(const struct undo_rec *r, uint64_t off, uint64_t len,
		      const uint64_t *filled)
{
	uint64_t base = off / RPMEMD_UNDO_BS * RPMEMD_UNDO_BS;
	uint64_t a = r->off > off ? r->off : off;
	uint64_t e = r->off + (uint64_t)r->count * RPMEMD_UNDO_BS;
	uint64_t b = e < off + len ? e : off + len;

	for (uint64_t k = (a - base) / RPMEMD_UNDO_BS;
	     base + k * RPMEMD_UNDO_BS < b; k++)
		if (!(filled[k / 64] & (1ull << (k % 64))))
			return 1;
	return 0;
}

int rpmemd_undo_overlay_older(const struct rpmemd_undo *u, uint64_t off,
			      uint64_t len, uint8_t *out, uint8_t *tmp,
			      uint64_t *filled, uint64_t *checked,
			      uint64_t *bad)
{
	uint64_t base = off / RPMEMD_UNDO_BS * RPMEMD_UNDO_BS;

	for (size_t i = 0; i < u->nrec; i++) {
		const struct undo_rec *r = &u->rec[i];
		uint64_t rend = r->off + (uint64_t)r->count * RPMEMD_UNDO_BS;
		if (rend <= off || r->off >= off + len ||
		    !rec_wanted(r, off, len, filled))
			continue;
		int ret = undo_rec_data(u, r, tmp);
		*checked += (uint64_t)r->count * RPMEMD_UNDO_BS;
		if (ret) {
			*bad = r->off;
			return ret;
		}
		/* block by block: the ones an older version gave stay */
		for (uint64_t a = r->off > off ? r->off : off; a < rend &&
							       a < off + len;) {
			uint64_t k = (a - base) / RPMEMD_UNDO_BS;
			uint64_t be = base + (k + 1) * RPMEMD_UNDO_BS;
			uint64_t b = be < off + len ? be : off + len;
			if (!(filled[k / 64] & (1ull << (k % 64)))) {
				memcpy(out + (a - off), tmp + (a - r->off),
				       (size_t)(b - a));
				filled[k / 64] |= 1ull << (k % 64);
			}
			a = b;
		}
	}
	return 0;
}

int rpmemd_undo_peek(int dirfd, const char *pool, uint64_t *gen,
		     uint64_t *bytes)
{
	struct rpmemd_undo u = { .fd = -1 };
	uint64_t fsize = 0;
	int ret = undo_open_hdr(dirfd, pool, O_RDONLY, &u, &fsize);

	if (u.fd >= 0)
		close(u.fd);
	*gen = u.gen;
	*bytes = fsize;
	return ret;
}

uint64_t rpmemd_undo_generation(const struct rpmemd_undo *u)
{
	return u->gen;
}

const char *rpmemd_undo_source(const struct rpmemd_undo *u)
{
	return u->source;
}

uint64_t rpmemd_undo_bytes(const struct rpmemd_undo *u)
{
	return u->end;
}

uint64_t rpmemd_undo_blocks(const struct rpmemd_undo *u)
{
	return u->blocks;
}

/* block_span -- the blocks of [off, off + len), clipped to the pool */
static void block_span(const struct rpmemd_undo *u, uint64_t off,
		       uint64_t len, uint64_t *first, uint64_t *end)
{
	uint64_t nb = u->size / RPMEMD_UNDO_BS;
	*first = off / RPMEMD_UNDO_BS;
	*end = len && off < u->size ?
		       (off + len - 1 < u->size ? off + len - 1 : u->size - 1) /
				       RPMEMD_UNDO_BS + 1 :
		       *first;
	if (*end > nb)
		*end = nb;
}

int rpmemd_undo_covered(const struct rpmemd_undo *u, uint64_t off,
			uint64_t len)
{
	uint64_t b, end;
	block_span(u, off, len, &b, &end);
	for (; b < end; b++)
		if (!bit_get(u, b))
			return 0;
	return 1;
}

/* append -- one record of count blocks from b, their data at data */
static int append(struct rpmemd_undo *u, const uint8_t *data, uint64_t b,
		  uint32_t count)
{
	uint8_t h[RPMEMD_UNDO_REC] = { 0 };
	uint64_t off = b * RPMEMD_UNDO_BS, len = (uint64_t)count * RPMEMD_UNDO_BS;
	int ret;

	le32_put(h, REC_MAGIC);
	le32_put(h + 4, count);
	le64_put(h + 8, off);
	uint64_t check = undo_rec_check(data, off, count, u->gen);
	le64_put(h + 16, check);
	/* data first, then the head that makes the record valid */
	ret = undo_pwrite_full(u->fd, data, (size_t)len,
			       u->end + RPMEMD_UNDO_REC);
	crash_point("undo-append-data");
	if (ret || (ret = undo_pwrite_full(u->fd, h, sizeof(h), u->end))) {
		if (ftruncate(u->fd, (off_t)u->end))
			WARN("undo journal: cannot cut a failed record off: %s",
			     strerror(errno));
		return ret;
	}
	if ((ret = rec_add(u, off, count, u->end + RPMEMD_UNDO_REC, check)))
		return ret;
	u->end += RPMEMD_UNDO_REC + len;
	u->unsynced = 1;
	return 0;
}

/*
 * save_from -- the blocks of [off, off + len) not journaled yet, data
 * holding the contents of the blocks from block base on
 */
static int save_from(struct rpmemd_undo *u, const uint8_t *data,
		     uint64_t base, uint64_t off, uint64_t len)
{
	uint64_t b, end;
	block_span(u, off, len, &b, &end);
	while (b < end) {
		if (bit_get(u, b)) {
			b++;
			continue;
		}
		uint32_t n = 1;
		while (b + n < end && !bit_get(u, b + n) &&
		       n < RPMEMD_UNDO_REC_MAX / RPMEMD_UNDO_BS)
			n++;
		int ret = append(u, data + (b - base) * RPMEMD_UNDO_BS, b, n);
		if (ret)
			return ret;
		b += n;
	}
	return 0;
}

int rpmemd_undo_save(struct rpmemd_undo *u, const uint8_t *pool,
		     uint64_t off, uint64_t len)
{
	return save_from(u, pool, 0, off, len);
}

int rpmemd_undo_save_buf(struct rpmemd_undo *u, uint64_t off,
			 const void *data, uint64_t len)
{
	if (off % RPMEMD_UNDO_BS || len % RPMEMD_UNDO_BS)
		return -EINVAL;
	return save_from(u, data, off / RPMEMD_UNDO_BS, off, len);
}

int rpmemd_undo_sync(struct rpmemd_undo *u)
{
	if (!u->unsynced)
		return 0;
	if (fdatasync(u->fd))
		return -errno;
	u->unsynced = 0;
	return 0;
}

int rpmemd_undo_damaged(const struct rpmemd_undo *u, uint64_t *pos,
			uint64_t *off, uint64_t *len)
{
	*pos = u->bad_pos;
	*off = u->bad_off;
	*len = u->bad_len;
	return u->bad_len != 0;
}

int rpmemd_undo_apply(struct rpmemd_undo *u, rpmemd_undo_restore_fn restore,
		      void *arg)
{
	uint8_t *buf = malloc(RPMEMD_UNDO_REC_MAX);
	int ret = 0;

	if (!buf)
		return -ENOMEM;
	for (size_t i = u->nrec; i-- > 0 && !ret;) {
		const struct undo_rec *r = &u->rec[i];
		ret = undo_rec_data(u, r, buf);
		if (!ret)
			ret = restore(arg, r->off, buf,
				      (uint64_t)r->count * RPMEMD_UNDO_BS);
	}
	free(buf);
	return ret;
}

int rpmemd_undo_unlink(int dirfd, const char *pool)
{
	char file[RPMEM_NAME_MAX + 16];
	int ret = undo_file(pool, file, sizeof(file));
	if (ret)
		return ret;
	/*
	 * not made durable: a journal that comes back after a crash is bound
	 * to a generation the metadata has left (a commit) or is beside a
	 * consistent pool (a rollback): stale, removed at the next open
	 */
	return unlinkat(dirfd, file, 0) && errno != ENOENT ? -errno : 0;
}

int rpmemd_undo_check(const struct rpmemd_undo *u, uint8_t *tmp,
		      uint64_t *bad, uint64_t *badlen)
{
	for (size_t i = 0; i < u->nrec; i++) {
		int ret = undo_rec_data(u, &u->rec[i], tmp);
		if (ret) {
			*bad = u->rec[i].off;
			*badlen = (uint64_t)u->rec[i].count * RPMEMD_UNDO_BS;
			return ret;
		}
	}
	return 0;
}
