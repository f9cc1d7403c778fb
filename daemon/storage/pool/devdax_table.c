/* SPDX-License-Identifier: BSD-3-Clause */
/* devdax_table.c -- the crash-consistent pool table on a DAX device */

/*
 * The device (mapped whole by devdax.c) starts with a header block and a
 * table of fixed-size slots; pools follow, aligned.
 *
 * Header (bytes 0..127 of the 4 KiB header block, the rest zero):
 *	0 magic "RPMEMDAX" | 8 version u32 | 12 header size u32 (128) |
 *	16 uuid[16] | 32 device size u64 | 40 alignment u64 |
 *	48 table size u64 | 56 slot size u32 (512) | 60 pool count u32 |
 *	64 slots offset u64 (4096) | 72 created u64 | 80 reserved |
 *	120 checksum u64 = XXH3-64 of bytes 8..119
 *
 * Slot (512 bytes; pool i owns slots 2i (A) and 2i+1 (B)):
 *	0 magic "PDXS" u32 | 4 flags u32 (1 = in use) | 8 sequence u64 |
 *	16 pool uuid[16] | 32 offset u64 | 40 size u64 | 48 generation u64 |
 *	56 created u64 | 64 last_sync u64 | 72 state u8 | 80 name[65] |
 *	152 source[256] | 408 reserved | 504 checksum u64 = XXH3-64 of
 *	bytes 0..503 seeded with XXH3-64(table uuid) + slot index
 *
 * Crash consistency. PMem guarantees atomicity of aligned 8-byte stores
 * only, so a 512-byte slot can be torn by a crash in any pattern. Every
 * change of the table is therefore one whole-slot write (memcpy + persist)
 * that is valid only if complete: a torn slot fails its checksum and does
 * not count. The seed ties a slot to its position and to one format of
 * the table, so a stale or moved slot does not count either.
 *
 * A pool's record is rewritten on every state change, and overwriting the
 * only copy in place would lose the pool if torn. So each pool has two
 * slots (A/B): the record is the valid slot with the higher sequence
 * number, and an update writes sequence + 1 into the other slot. A torn
 * update leaves the previous record in force; a complete one supersedes
 * it. (A journal or an undo log would also work but needs its own
 * recovery step; A/B slots need none: opening *is* recovery.)
 *
 *	create: zero the extent, then write the record (in use, seq n + 1)
 *	        into a free pair: torn = absent, complete = present.
 *	state:  write the updated record into the other slot of the pair:
 *	        torn = old state, complete = new state.
 *	remove: write a tombstone (not in use, seq n + 1) into the other
 *	        slot: torn = still present, complete = absent; then zero the
 *	        superseded slot (only to erase the name; any outcome = absent).
 *
 * Allocation is derived from the valid records (first fit at aligned
 * offsets), so there is no bitmap that could disagree with the table.
 * Opening checks that records lie inside the device, are aligned, do not
 * overlap and have distinct names; none of that can be broken by a crash,
 * so a violation is reported as a corrupt table (-EUCLEAN).
 *
 * Format writes in this order: zero the header block, zero the slots,
 * the header without its magic, the magic. An interrupted format leaves a
 * header block that is zero except for bytes 8..127, or a valid header
 * with a partial magic and no valid slot; both count as blank, so
 * format-if-blank finishes the job. Anything else that is not our header
 * is a foreign signature and is never overwritten without FORMAT_FORCE.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "devdax_table.h"
#include "log.h"
#include "util.h"
#include "wire.h"

#define HDR_SIZE 128
#define HDR_CSUM_OFF 120
#define SLOT_MAGIC 0x53584450u /* "PDXS" */
#define SLOT_IN_USE 1u
#define DD_PAIR 2 /* slots per pool: the record in force and the next */
#define SLOT_CSUM_OFF 504
#define SLOT_NAME_OFF 80
#define SLOT_SOURCE_OFF 152
#define SLOT_SOURCE_LEN 256
/* role u8 | count u8 | 6 bytes 0 | count x u64 ids (RPMEMD_DEVDAX_HIST) */
#define SLOT_GEN_OFF 408
#define SLOT_GEN_IDS_OFF 416
#define PAIR_SIZE (2 * RPMEMD_DEVDAX_SLOT_SIZE)
#define SLOTS_OFF RPMEMD_DEVDAX_HDR_BLOCK

_Static_assert(SLOT_SOURCE_LEN >= RPMEM_STR_MAX + 1, "source field");
_Static_assert(SLOT_NAME_OFF + RPMEM_NAME_MAX + 1 <= SLOT_SOURCE_OFF,
	       "name field");
_Static_assert(SLOT_SOURCE_OFF + SLOT_SOURCE_LEN <= SLOT_GEN_OFF,
	       "slot layout");
_Static_assert(SLOT_GEN_IDS_OFF + 8 * RPMEMD_DEVDAX_HIST <= SLOT_CSUM_OFF,
	       "generation history field");

static const uint8_t zero_slot[RPMEMD_DEVDAX_SLOT_SIZE];

/* dd_round_up -- v rounded up to a (a power of two); 0 on overflow */
uint64_t dd_round_up(uint64_t v, uint64_t a)
{
	if (v > UINT64_MAX - (a - 1))
		return 0;
	return (v + a - 1) & ~(a - 1);
}

static uint64_t table_size_of(uint32_t max_pools, uint64_t align)
{
	return dd_round_up(SLOTS_OFF + (uint64_t)max_pools * PAIR_SIZE, align);
}

static uint64_t slot_off(uint32_t idx)
{
	return SLOTS_OFF + (uint64_t)idx * RPMEMD_DEVDAX_SLOT_SIZE;
}

/* table_write -- copy len bytes to offset off of the device and persist */
static void table_write(struct rpmemd_devdax *dd, uint64_t off,
			const void *src, size_t len)
{
	dd->memcpy_fn(dd->base + off, src, len, 0);
}

/* hdr_encode -- header of dd into buf[HDR_SIZE] (magic included) */
static void hdr_encode(const struct rpmemd_devdax *dd, uint64_t created,
		       uint8_t *buf)
{
	memset(buf, 0, HDR_SIZE);
	memcpy(buf, RPMEMD_DEVDAX_MAGIC, 8);
	le32_put(buf + 8, RPMEMD_DEVDAX_VERSION);
	le32_put(buf + 12, HDR_SIZE);
	memcpy(buf + 16, dd->uuid, 16);
	le64_put(buf + 32, dd->dev_size);
	le64_put(buf + 40, dd->align);
	le64_put(buf + 48, dd->table_size);
	le32_put(buf + 56, RPMEMD_DEVDAX_SLOT_SIZE);
	le32_put(buf + 60, dd->max_pools);
	le64_put(buf + 64, SLOTS_OFF);
	le64_put(buf + 72, created);
	le64_put(buf + HDR_CSUM_OFF, XXH3_64bits(buf + 8, HDR_CSUM_OFF - 8));
}

static int hdr_csum_ok(const uint8_t *buf)
{
	return le64_get(buf + HDR_CSUM_OFF) ==
	       XXH3_64bits(buf + 8, HDR_CSUM_OFF - 8);
}

static uint64_t slot_seed(const struct rpmemd_devdax *dd, uint32_t idx)
{
	return dd->seed + idx;
}

/* slot_encode -- record r for slot idx into buf[SLOT_SIZE] */
static void slot_encode(const struct rpmemd_devdax *dd, uint32_t idx,
			const struct dd_rec *r, uint8_t *buf)
{
	memset(buf, 0, RPMEMD_DEVDAX_SLOT_SIZE);
	le32_put(buf, SLOT_MAGIC);
	le32_put(buf + 4, r->in_use ? SLOT_IN_USE : 0);
	le64_put(buf + 8, r->seq);
	if (r->in_use) {
		memcpy(buf + 16, r->meta.uuid, 16);
		le64_put(buf + 32, r->offset);
		le64_put(buf + 40, r->meta.size);
		le64_put(buf + 48, r->meta.generation);
		le64_put(buf + 56, r->meta.created);
		le64_put(buf + 64, r->meta.last_sync);
		buf[72] = r->meta.state;
		rpmem_strlcpy((char *)buf + SLOT_NAME_OFF, r->name,
			      RPMEM_NAME_MAX + 1);
		rpmem_strlcpy((char *)buf + SLOT_SOURCE_OFF, r->meta.source,
			      SLOT_SOURCE_LEN);
		unsigned n = r->meta.nhist < RPMEMD_DEVDAX_HIST ?
				     r->meta.nhist :
				     RPMEMD_DEVDAX_HIST;
		buf[SLOT_GEN_OFF] = r->meta.role;
		buf[SLOT_GEN_OFF + 1] = (uint8_t)n;
		for (unsigned k = 0; k < n; k++)
			le64_put(buf + SLOT_GEN_IDS_OFF + 8 * k,
				 r->meta.hist[k]);
	}
	le64_put(buf + SLOT_CSUM_OFF,
		 XXH3_64bits_withSeed(buf, SLOT_CSUM_OFF, slot_seed(dd, idx)));
}

/*
 * slot_decode -- slot idx from buf; 1 if valid (r filled), 0 if not (a
 * blank, torn or stale slot), -EUCLEAN if its checksum holds but its
 * contents do not make sense
 */
static int slot_decode(const struct rpmemd_devdax *dd, uint32_t idx,
		       const uint8_t *buf, struct dd_rec *r)
{
	uint32_t flags;

	if (le32_get(buf) != SLOT_MAGIC ||
	    le64_get(buf + SLOT_CSUM_OFF) !=
		    XXH3_64bits_withSeed(buf, SLOT_CSUM_OFF,
					 slot_seed(dd, idx)))
		return 0;
	memset(r, 0, sizeof(*r));
	flags = le32_get(buf + 4);
	r->seq = le64_get(buf + 8);
	r->in_use = !!(flags & SLOT_IN_USE);
	if (!r->in_use)
		return 1;
	memcpy(r->meta.uuid, buf + 16, 16);
	r->offset = le64_get(buf + 32);
	r->meta.size = le64_get(buf + 40);
	r->meta.generation = le64_get(buf + 48);
	r->meta.created = le64_get(buf + 56);
	r->meta.last_sync = le64_get(buf + 64);
	r->meta.state = buf[72];
	if (!memchr(buf + SLOT_NAME_OFF, 0, RPMEM_NAME_MAX + 1) ||
	    !memchr(buf + SLOT_SOURCE_OFF, 0, SLOT_SOURCE_LEN))
		return -EUCLEAN;
	memcpy(r->name, buf + SLOT_NAME_OFF, RPMEM_NAME_MAX + 1);
	memcpy(r->meta.source, buf + SLOT_SOURCE_OFF,
	       sizeof(r->meta.source) - 1);
	rpmem_str_sanitize(r->meta.source);
	/* a slot written before histories has zeros: a secondary, none */
	r->meta.role = buf[SLOT_GEN_OFF];
	r->meta.nhist = buf[SLOT_GEN_OFF + 1];
	if (r->meta.role > RPMEM_ROLE_MAX || r->meta.nhist > RPMEMD_DEVDAX_HIST)
		return -EUCLEAN;
	for (unsigned k = 0; k < r->meta.nhist; k++)
		r->meta.hist[k] = le64_get(buf + SLOT_GEN_IDS_OFF + 8 * k);
	if (!rpmem_name_valid(r->name) || r->meta.state > RPMEM_POOL_CONSISTENT)
		return -EUCLEAN;
	return 1;
}

/* dd_rec_extent -- the bytes a record reserves: its size, aligned */
uint64_t dd_rec_extent(const struct rpmemd_devdax *dd,
		       const struct dd_rec *r)
{
	return dd_round_up(r->meta.size, dd->align);
}

/* dd_slot_put -- write r as the next record of pair i (the other slot) */
void dd_slot_put(struct rpmemd_devdax *dd, uint32_t i, struct dd_rec *r)
{
	struct dd_entry *e = &dd->ent[i];
	uint8_t buf[RPMEMD_DEVDAX_SLOT_SIZE];
	int s = e->cur < 0 ? 0 : 1 - e->cur;
	uint32_t idx = 2 * i + (uint32_t)s;

	r->seq = e->cur < 0 ? 1 : e->rec.seq + 1;
	slot_encode(dd, idx, r, buf);
	table_write(dd, slot_off(idx), buf, sizeof(buf));
	e->cur = s;
	e->rec = *r;
}

/* dd_slot_erase -- zero slot s (0/1) of pair i */
void dd_slot_erase(struct rpmemd_devdax *dd, uint32_t i, int s)
{
	table_write(dd, slot_off(2 * i + (uint32_t)s), zero_slot,
		    sizeof(zero_slot));
}

static int all_zero(const uint8_t *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (p[i])
			return 0;
	return 1;
}

/* dd_format -- write an empty table (see the order above) */
static int dd_format(struct rpmemd_devdax *dd,
		     const struct rpmemd_devdax_opts *opts)
{
	uint8_t hdr[HDR_SIZE];
	uint64_t align = opts->align, created;
	int ret;

	if (align < dd->src_align)
		align = dd->src_align;
	if (align < RPMEMD_DEVDAX_MIN_ALIGN)
		align = RPMEMD_DEVDAX_MIN_ALIGN;
	if (align & (align - 1)) {
		ERR("devdax %s: alignment %" PRIu64 " is not a power of two",
		    dd->path, align);
		return -EINVAL;
	}
	dd->align = align;
	dd->max_pools = opts->max_pools ? opts->max_pools :
					  RPMEMD_DEVDAX_DEFAULT_POOLS;
	if (dd->max_pools > RPMEMD_DEVDAX_MAX_POOLS) {
		ERR("devdax %s: at most %u pools per device", dd->path,
		    RPMEMD_DEVDAX_MAX_POOLS);
		return -EINVAL;
	}
	dd->table_size = table_size_of(dd->max_pools, align);
	/* whole multiples of the alignment only */
	dd->dev_size = dd->map_size & ~(align - 1);
	if (dd->table_size == 0 || dd->dev_size < dd->table_size + align) {
		ERR("devdax %s: %" PRIu64 " bytes is too small for a pool table of %" PRIu64
		    " bytes and one pool", dd->path, dd->map_size,
		    dd->table_size);
		return -ENOSPC;
	}
	ret = rpmem_random(dd->uuid, sizeof(dd->uuid));
	if (ret)
		return ret;
	dd->uuid[6] = (dd->uuid[6] & 0x0f) | 0x40;
	dd->uuid[8] = (dd->uuid[8] & 0x3f) | 0x80;
	dd->seed = XXH3_64bits(dd->uuid, sizeof(dd->uuid));
	created = rpmem_wall_sec();

	dd->memset_fn(dd->base, 0, RPMEMD_DEVDAX_HDR_BLOCK, 0);
	dd->memset_fn(dd->base + SLOTS_OFF, 0,
		      (size_t)dd->max_pools * PAIR_SIZE, 0);
	hdr_encode(dd, created, hdr);
	table_write(dd, 8, hdr + 8, HDR_SIZE - 8);
	table_write(dd, 0, hdr, 8);
	NOTICE("devdax %s: formatted a pool table for %u pools, %" PRIu64
	       " bytes aligned to %" PRIu64, dd->path, dd->max_pools,
	       dd->dev_size - dd->table_size, dd->align);
	return 0;
}

/* dd_has_valid_slot -- any slot of the table with a valid checksum */
static int dd_has_valid_slot(const struct rpmemd_devdax *dd)
{
	struct dd_rec r;

	for (uint32_t idx = 0; idx < 2 * dd->max_pools; idx++)
		if (slot_decode(dd, idx, dd->base + slot_off(idx), &r))
			return 1;
	return 0;
}

/* hdr_decode -- header fields into dd; -EUCLEAN if they do not fit */
static int hdr_decode(struct rpmemd_devdax *dd, const uint8_t *h)
{
	uint32_t version = le32_get(h + 8);

	if (version != RPMEMD_DEVDAX_VERSION) {
		ERR("devdax %s: pool table version %u is not supported (this rpmemd knows %u)",
		    dd->path, version, RPMEMD_DEVDAX_VERSION);
		return -EPROTONOSUPPORT;
	}
	memcpy(dd->uuid, h + 16, 16);
	dd->dev_size = le64_get(h + 32);
	dd->align = le64_get(h + 40);
	dd->table_size = le64_get(h + 48);
	dd->max_pools = le32_get(h + 60);
	dd->seed = XXH3_64bits(dd->uuid, sizeof(dd->uuid));
	if (le32_get(h + 12) != HDR_SIZE ||
	    le32_get(h + 56) != RPMEMD_DEVDAX_SLOT_SIZE ||
	    le64_get(h + 64) != SLOTS_OFF || dd->max_pools == 0 ||
	    dd->max_pools > RPMEMD_DEVDAX_MAX_POOLS ||
	    dd->align < RPMEMD_DEVDAX_MIN_ALIGN ||
	    (dd->align & (dd->align - 1)) ||
	    dd->table_size != table_size_of(dd->max_pools, dd->align) ||
	    dd->dev_size < dd->table_size + dd->align ||
	    dd->dev_size % dd->align) {
		ERR("devdax %s: pool table header has inconsistent fields",
		    dd->path);
		return -EUCLEAN;
	}
	return 0;
}

enum hdr_kind { HDR_OURS, HDR_BLANK, HDR_CORRUPT, HDR_FOREIGN };

/* hdr_classify -- what the header block holds */
static int hdr_classify(struct rpmemd_devdax *dd)
{
	const uint8_t *h = dd->base;
	const char *magic = RPMEMD_DEVDAX_MAGIC;
	int partial = 0, i;

	if (dd->map_size < RPMEMD_DEVDAX_HDR_BLOCK)
		return HDR_FOREIGN;
	if (!memcmp(h, magic, 8))
		return hdr_csum_ok(h) ? HDR_OURS : HDR_CORRUPT;
	/* blank, or a format interrupted while writing the header body */
	if (all_zero(h, 8) &&
	    all_zero(h + HDR_SIZE, RPMEMD_DEVDAX_HDR_BLOCK - HDR_SIZE))
		return HDR_BLANK;
	/* a format interrupted while writing the magic */
	for (i = 0; i < 8; i++) {
		if (h[i] && h[i] != (uint8_t)magic[i])
			return HDR_FOREIGN;
		partial |= h[i] != 0;
	}
	if (partial && hdr_csum_ok(h) &&
	    all_zero(h + HDR_SIZE, RPMEMD_DEVDAX_HDR_BLOCK - HDR_SIZE) &&
	    hdr_decode(dd, h) == 0 && dd->dev_size <= dd->map_size &&
	    !dd_has_valid_slot(dd))
		return HDR_BLANK;
	return HDR_FOREIGN;
}

int dd_cmp_off(const void *a, const void *b)
{
	const struct dd_entry *x = *(const struct dd_entry *const *)a;
	const struct dd_entry *y = *(const struct dd_entry *const *)b;

	return x->rec.offset < y->rec.offset ? -1 :
	       x->rec.offset > y->rec.offset;
}

int dd_cmp_name(const void *a, const void *b)
{
	const struct dd_entry *x = *(const struct dd_entry *const *)a;
	const struct dd_entry *y = *(const struct dd_entry *const *)b;

	return strcmp(x->rec.name, y->rec.name);
}

/* dd_used_sorted -- the pools in a new array sorted by cmp; NULL if none */
int dd_used_sorted(struct rpmemd_devdax *dd,
		       int (*cmp)(const void *, const void *),
		       struct dd_entry ***out)
{
	struct dd_entry **v;
	uint32_t n = 0;

	*out = NULL;
	if (!dd->npools)
		return 0;
	v = calloc(dd->npools, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (uint32_t i = 0; i < dd->max_pools && n < dd->npools; i++)
		if (dd_ent_used(&dd->ent[i]))
			v[n++] = &dd->ent[i];
	qsort(v, n, sizeof(*v), cmp);
	*out = v;
	return 0;
}

/* dd_check -- records inside the device, aligned, disjoint, unique names */
static int dd_check(struct rpmemd_devdax *dd)
{
	struct dd_entry **v;
	uint64_t ext;
	int ret;

	for (uint32_t i = 0; i < dd->max_pools; i++) {
		struct dd_rec *r = &dd->ent[i].rec;

		if (!dd_ent_used(&dd->ent[i]))
			continue;
		ext = dd_rec_extent(dd, r);
		if (r->meta.size == 0 || ext == 0 || r->offset % dd->align ||
		    r->offset < dd->table_size || r->offset > dd->dev_size ||
		    ext > dd->dev_size - r->offset) {
			ERR("devdax %s: pool '%s' (entry %u) lies outside the device or is misaligned",
			    dd->path, r->name, i);
			return -EUCLEAN;
		}
	}
	ret = dd_used_sorted(dd, dd_cmp_off, &v);
	if (ret)
		return ret;
	for (uint32_t i = 1; i < dd->npools; i++) {
		if (v[i - 1]->rec.offset + dd_rec_extent(dd, &v[i - 1]->rec) >
		    v[i]->rec.offset) {
			ERR("devdax %s: pools '%s' and '%s' overlap",
			    dd->path, v[i - 1]->rec.name, v[i]->rec.name);
			free(v);
			return -EUCLEAN;
		}
	}
	if (v) /* none without pools: qsort takes no NULL */
		qsort(v, dd->npools, sizeof(*v), dd_cmp_name);
	for (uint32_t i = 1; i < dd->npools; i++) {
		if (!strcmp(v[i - 1]->rec.name, v[i]->rec.name)) {
			ERR("devdax %s: two pools named '%s'", dd->path,
			    v[i]->rec.name);
			free(v);
			return -EUCLEAN;
		}
	}
	free(v);
	return 0;
}

/* dd_load -- read every slot pair; the record in force of each */
static int dd_load(struct rpmemd_devdax *dd)
{
	struct dd_rec r[DD_PAIR];
	int valid[DD_PAIR], ret;

	dd->ent = calloc(dd->max_pools, sizeof(*dd->ent));
	if (!dd->ent)
		return -ENOMEM;
	dd->npools = 0;
	for (uint32_t i = 0; i < dd->max_pools; i++) {
		struct dd_entry *e = &dd->ent[i];

		for (int s = 0; s < 2; s++) {
			uint32_t idx = 2 * i + (uint32_t)s;

			valid[s] = slot_decode(dd, idx,
					       dd->base + slot_off(idx), &r[s]);
			if (valid[s] < 0) {
				ERR("devdax %s: slot %u has a valid checksum but bad contents",
				    dd->path, idx);
				ret = valid[s];
				goto err_free;
			}
		}
		e->cur = -1;
		if (valid[0] && (!valid[1] || r[0].seq >= r[1].seq))
			e->cur = 0;
		else if (valid[1])
			e->cur = 1;
		if (e->cur >= 0)
			e->rec = r[e->cur];
		if (dd_ent_used(e))
			dd->npools++;
	}
	ret = dd_check(dd);
	if (ret)
		goto err_free;
	return 0;

err_free:
	free(dd->ent);
	dd->ent = NULL;
	return ret;
}

/* hdr_fits -- our header, decoded into dd, for this device */
static int hdr_fits(struct rpmemd_devdax *dd)
{
	int ret = hdr_decode(dd, dd->base);

	if (ret)
		return ret;
	if (dd->dev_size > dd->map_size) {
		ERR("devdax %s: pool table is for %" PRIu64
		    " bytes but the device has %" PRIu64,
		    dd->path, dd->dev_size, dd->map_size);
		return -EUCLEAN;
	}
	if (dd->align % dd->src_align) {
		ERR("devdax %s: pool alignment %" PRIu64
		    " is not a multiple of the device alignment %" PRIu64,
		    dd->path, dd->align, dd->src_align);
		return -EUCLEAN;
	}
	return 0;
}

/*
 * dd_table_attach -- what the header block holds decides: load our table,
 * format a blank device if allowed, refuse anything else
 */
int dd_table_attach(struct rpmemd_devdax *dd,
		    const struct rpmemd_devdax_opts *opts)
{
	int ret, kind;

	kind = hdr_classify(dd);
	if (opts->format == RPMEMD_DEVDAX_FORMAT_FORCE && kind != HDR_BLANK) {
		WARN("devdax %s: overwriting what it holds with a new pool table (forced)",
		     dd->path);
		kind = HDR_BLANK;
	}
	switch (kind) {
	case HDR_BLANK:
		if (opts->format == RPMEMD_DEVDAX_NO_FORMAT) {
			ERR("devdax %s: no pool table (blank device); allow formatting to create one",
			    dd->path);
			return -ENODATA;
		}
		ret = dd_format(dd, opts);
		if (ret)
			return ret;
		break;
	case HDR_CORRUPT:
		ERR("devdax %s: pool table header checksum mismatch (stored %016" PRIx64
		    ", computed %016" PRIx64
		    "); refusing to use the device: restore it or format it (destroys all pools)",
		    dd->path, le64_get(dd->base + HDR_CSUM_OFF),
		    (uint64_t)XXH3_64bits(dd->base + 8, HDR_CSUM_OFF - 8));
		return -EBADMSG;
	case HDR_FOREIGN:
		ERR("devdax %s: holds data that is not an rpmemd pool table (foreign signature); refusing to format it unless forced",
		    dd->path);
		return -EMEDIUMTYPE;
	default:
		ret = hdr_fits(dd);
		if (ret)
			return ret;
		break;
	}
	return dd_load(dd);
}

/* dd_space -- unreserved bytes and the largest free extent */
int dd_space(struct rpmemd_devdax *dd, uint64_t *free_b,
		    uint64_t *largest)
{
	struct dd_entry **v;
	uint64_t pos = dd->table_size, gap;
	int ret;

	*free_b = 0;
	*largest = 0;
	ret = dd_used_sorted(dd, dd_cmp_off, &v);
	if (ret)
		return ret;
	for (uint32_t i = 0; i <= dd->npools; i++) {
		uint64_t end = i < dd->npools ? v[i]->rec.offset : dd->dev_size;

		gap = end - pos;
		*free_b += gap;
		if (gap > *largest)
			*largest = gap;
		if (i < dd->npools)
			pos = end + dd_rec_extent(dd, &v[i]->rec);
	}
	free(v);
	return 0;
}

/* dd_alloc -- first fit of an extent of ext bytes; -ENOSPC */
int dd_alloc(struct rpmemd_devdax *dd, uint64_t ext, uint64_t *off)
{
	struct dd_entry **v;
	uint64_t pos = dd->table_size;
	int ret;

	ret = dd_used_sorted(dd, dd_cmp_off, &v);
	if (ret)
		return ret;
	ret = -ENOSPC;
	for (uint32_t i = 0; i <= dd->npools; i++) {
		uint64_t end = i < dd->npools ? v[i]->rec.offset : dd->dev_size;

		if (end - pos >= ext) {
			*off = pos;
			ret = 0;
			break;
		}
		if (i < dd->npools)
			pos = end + dd_rec_extent(dd, &v[i]->rec);
	}
	free(v);
	return ret;
}
