/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * undo_mend.c -- the repair of a version's journal: the blocks of its
 * records that do not check rewritten from a good copy, where the record
 * then checks; a damaged header rebuilt from what rpmemd knows
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "crashpoint.h"
#include "meta.h"
#include "undo.h"
#include "undo_int.h"
#include "util.h"
#include "wire.h"

/*
 * mend_mask -- the blocks of record r that are in [off, off + len) and not
 * claimed yet (by an older journal), marked claimed now: their bits in
 * mine (a bit per block of r); how many
 */
static uint32_t mend_mask(const struct undo_rec *r, uint64_t off, uint64_t len,
			  uint64_t *claimed, uint64_t *mine)
{
	uint64_t base = off / RPMEMD_UNDO_BS;
	uint32_t n = 0;

	for (uint32_t i = 0; i < r->count; i++) {
		uint64_t b = r->off / RPMEMD_UNDO_BS + i;
		if (b < base || b >= base + len / RPMEMD_UNDO_BS ||
		    (claimed[(b - base) / 64] & (1ull << ((b - base) % 64))))
			continue;
		claimed[(b - base) / 64] |= 1ull << ((b - base) % 64);
		mine[i / 64] |= 1ull << (i % 64);
		n++;
	}
	return n;
}

/* plan_add -- the runs of blocks of r marked in mine into the plan */
static int plan_add(const struct undo_rec *r, const uint64_t *mine,
		    size_t file, struct rpmemd_undo_patch **plan, size_t *n)
{
	for (uint32_t i = 0; i < r->count;) {
		uint32_t j = i;
		if (!(mine[i / 64] & (1ull << (i % 64)))) {
			i++;
			continue;
		}
		while (j < r->count && (mine[j / 64] & (1ull << (j % 64))))
			j++;
		void *np = realloc(*plan, (*n + 1) * sizeof(**plan));
		if (!np)
			return -ENOMEM;
		*plan = np;
		(*plan)[(*n)++] = (struct rpmemd_undo_patch){
			.file = file,
			.fpos = r->fpos + (uint64_t)i * RPMEMD_UNDO_BS,
			.off = r->off + (uint64_t)i * RPMEMD_UNDO_BS,
			.len = (uint64_t)(j - i) * RPMEMD_UNDO_BS
		};
		i = j;
	}
	return 0;
}

/*
 * mend_vouched -- the blocks of r in mine, with data (the pool's
 * [off, ...)), make r check (the rest of r as the file holds it), or
 * vouch says each of those runs is the version's
 */
static int mend_vouched(const struct rpmemd_undo *u, const struct undo_rec *r,
			const uint64_t *mine, uint64_t off, const uint8_t *data,
			uint8_t *tmp, rpmemd_undo_vouch_fn vouch, void *varg)
{
	size_t rlen = (size_t)r->count * RPMEMD_UNDO_BS;
	int ret = rpmem_pread_full(u->fd, tmp, rlen, r->fpos);

	if (ret)
		return ret;
	for (uint32_t i = 0; i < r->count; i++)
		if (mine[i / 64] & (1ull << (i % 64)))
			memcpy(tmp + (size_t)i * RPMEMD_UNDO_BS,
			       data + (r->off - off) + (size_t)i * RPMEMD_UNDO_BS,
			       RPMEMD_UNDO_BS);
	if (undo_rec_check(tmp, r->off, r->count, u->gen) == r->check)
		return 0;
	/* the damage may lie outside what was sent: each block by its own */
	for (uint32_t i = 0; i < r->count; i++) {
		uint64_t b = r->off + (uint64_t)i * RPMEMD_UNDO_BS;
		if ((mine[i / 64] & (1ull << (i % 64))) &&
		    (!vouch || vouch(varg, b, data + (b - off), RPMEMD_UNDO_BS)))
			return -EILSEQ;
	}
	return 0;
}

int rpmemd_undo_mend_plan(const struct rpmemd_undo *u, size_t file,
			  uint64_t off, uint64_t len, const uint8_t *data,
			  uint64_t *claimed, rpmemd_undo_vouch_fn vouch,
			  void *varg, uint8_t *tmp,
			  struct rpmemd_undo_patch **plan, size_t *n,
			  uint64_t *bad, uint64_t *badlen)
{
	uint64_t mine[RPMEMD_UNDO_REC_MAX / RPMEMD_UNDO_BS / 64];
	int ret = 0;

	if (u->partial) { /* what it holds past a bad head is not known */
		*bad = off;
		*badlen = len;
		return -EBADMSG;
	}
	for (size_t i = 0; !ret && i < u->nrec; i++) {
		const struct undo_rec *r = &u->rec[i];
		uint64_t rend = r->off + (uint64_t)r->count * RPMEMD_UNDO_BS;
		if (rend <= off || r->off >= off + len)
			continue;
		memset(mine, 0, sizeof(mine));
		if (!mend_mask(r, off, len, claimed, mine))
			continue;
		ret = undo_rec_data(u, r, tmp);
		if (ret != -EIO) /* it checks: nothing to mend */
			continue;
		ret = mend_vouched(u, r, mine, off, data, tmp, vouch, varg);
		if (!ret)
			ret = plan_add(r, mine, file, plan, n);
		if (ret == -EILSEQ) {
			*bad = r->off;
			*badlen = (uint64_t)r->count * RPMEMD_UNDO_BS;
		}
	}
	return ret;
}

int rpmemd_undo_mend_write(int fd, const struct rpmemd_undo_patch *pt,
			   const uint8_t *data, uint64_t off)
{
	const uint8_t *src = data + (pt->off - off);
	uint64_t half = pt->len / 2;
	int ret;

	/*
	 * in place: every byte written is the record's own, so a crash
	 * leaves each byte old (damaged as before) or right, never worse
	 */
	ret = undo_pwrite_full(fd, src, (size_t)half, pt->fpos);
	crash_point("mend-half");
	if (!ret)
		ret = undo_pwrite_full(fd, src + half, (size_t)(pt->len - half),
				       pt->fpos + half);
	return ret;
}

/*
 * hdr_rebuild -- the header of generation gen of the pool (uuid, size)
 * with the source of the damaged header hdr, of length sl, into buf:
 * 1 if it hashes to hdr's own check (the bytes the header had)
 */
static int hdr_rebuild(const uint8_t *hdr, size_t sl, const uint8_t *uuid,
		       uint64_t size, uint64_t gen, uint8_t *buf)
{
	struct rpmemd_undo u = { .size = size, .gen = gen };

	memcpy(u.uuid, uuid, 16);
	memcpy(u.source, hdr + H_SOURCE + 2, sl);
	u.source[sl] = '\0';
	if (strlen(u.source) != sl)
		return 0;
	undo_hdr_encode(&u, buf);
	return le64_get(buf + H_CHECK) == le64_get(hdr + H_CHECK);
}

int rpmemd_undo_mend_header(int dirfd, const char *file, const uint8_t *uuid,
			    uint64_t size, uint64_t gen)
{
	uint8_t hdr[RPMEMD_UNDO_HDR], buf[RPMEMD_UNDO_HDR];
	struct rpmemd_undo u = { .fd = -1 };
	size_t sl, sl2;
	int fd, ret, ok;

	if (!rpmem_name_valid(file))
		return -EINVAL;
	if ((fd = rpmemd_open_own(dirfd, file, O_RDWR)) < 0)
		return fd;
	ret = rpmem_pread_full(fd, hdr, sizeof(hdr), 0);
	if (!ret && !undo_hdr_decode(hdr, &u)) {
		close(fd);
		return 1; /* it checks: nothing to mend */
	}
	/* the source's length as its field says, or as its bytes end */
	sl = le16_get(hdr + H_SOURCE);
	sl2 = strnlen((const char *)hdr + H_SOURCE + 2, RPMEM_STR_MAX);
	ok = !ret && ((sl <= RPMEM_STR_MAX &&
		       hdr_rebuild(hdr, sl, uuid, size, gen, buf)) ||
		      hdr_rebuild(hdr, sl2, uuid, size, gen, buf));
	if (!ret && !ok)
		ret = -EILSEQ;
	/*
	 * the header's fields only, up to its check: the trailer beside it
	 * is not touched; a torn write leaves it damaged as before
	 */
	if (!ret)
		ret = undo_pwrite_full(fd, buf, H_CHECK + 8, 0);
	crash_point("mend-header");
	if (!ret && fdatasync(fd))
		ret = -errno;
	close(fd);
	return ret;
}
