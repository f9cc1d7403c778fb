/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * order.c -- which drains need not wait: libpmemobj's own drains inside
 * a transaction's work stage become ordered barriers, and the points
 * where libpmemobj promises the application durability wait for all of
 * them (docs/ARCHITECTURE.md, "Ordered drains")
 */
#include <dlfcn.h>
#include <link.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "preload.h"

#define OBJ_VER "LIBPMEMOBJ_1.0"
#define OBJ_SEGS 4
#define TX_STAGE_WORK 1 /* libpmemobj's enum pobj_tx_stage */

/* libpmemobj's executable segments, and its pmemobj_tx_stage */
static struct {
	unsigned n;
	uintptr_t lo[OBJ_SEGS];
	uintptr_t hi[OBJ_SEGS];
} obj;
static int (*_Atomic tx_stage)(void);

/* find_obj -- dl_iterate_phdr callback: libpmemobj's code segments */
static int find_obj(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	(void)arg;
	if (!info->dlpi_name || !strstr(info->dlpi_name, "/libpmemobj.so"))
		return 0;
	for (unsigned i = 0; i < info->dlpi_phnum && obj.n < OBJ_SEGS; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		obj.lo[obj.n] = info->dlpi_addr + ph->p_vaddr;
		obj.hi[obj.n] = obj.lo[obj.n] + ph->p_memsz;
		obj.n++;
	}
	return 1;
}

/* pl_order_refresh -- libpmemobj's code and pmemobj_tx_stage, once found */
void pl_order_refresh(void)
{
	if (atomic_load(&tx_stage) || pl_cfg.drain != PL_DRAIN_COMMIT)
		return;
	obj.n = 0;
	dl_iterate_phdr(find_obj, NULL);
	void *fn = dlvsym(RTLD_DEFAULT, "pmemobj_tx_stage", OBJ_VER);
	/* the segments first: a reader that sees tx_stage sees them */
	if (obj.n && fn)
		atomic_store(&tx_stage, (int (*)(void))fn);
}

/* in_obj -- ra is in libpmemobj's code */
static int in_obj(uintptr_t ra)
{
	for (unsigned i = 0; i < obj.n; i++)
		if (ra >= obj.lo[i] && ra < obj.hi[i])
			return 1;
	return 0;
}

/* pl_may_order -- a drain from ra may be a barrier */
int pl_may_order(const void *ra)
{
	int (*stage)(void) = atomic_load_explicit(&tx_stage,
						  memory_order_acquire);
	if (!stage || !in_obj((uintptr_t)ra))
		return 0;
	pl_busy++;
	int s = stage();
	pl_busy--;
	return s == TX_STAGE_WORK;
}

/* obj_real -- libpmemobj's own definition of name, or abort */
static void *obj_real(const char *name)
{
	void *p = dlvsym(RTLD_NEXT, name, OBJ_VER);
	if (!p)
		p = dlsym(RTLD_NEXT, name);
	if (!p) {
		pl_msg(LOG_CRIT, "no %s@%s to forward to: %s", name, OBJ_VER,
		       dlerror());
		abort();
	}
	return p;
}

/* OBJ_REAL -- r_, the real definition of the function it is used in */
#define OBJ_REAL(name)                                                  \
	static __typeof__(&name) r_;                                    \
	if (!r_)                                                        \
		r_ = (__typeof__(&name))obj_real(#name)

/*
 * The application's calls that end a transaction's work stage or make a
 * range persistent itself: after the real call, every barrier before is
 * waited for. libpmemobj calls its own functions directly, not through
 * these: only the application's calls land here.
 */

RPMEM_EXPORT void pmemobj_tx_process(void)
{
	OBJ_REAL(pmemobj_tx_process);
	r_();
	pl_commit();
}

RPMEM_EXPORT void pmemobj_tx_commit(void)
{
	OBJ_REAL(pmemobj_tx_commit);
	r_();
	pl_commit();
}

RPMEM_EXPORT int pmemobj_tx_end(void)
{
	OBJ_REAL(pmemobj_tx_end);
	int ret = r_();
	pl_commit();
	return ret;
}

RPMEM_EXPORT void pmemobj_persist(void *pop, const void *addr, size_t len)
{
	OBJ_REAL(pmemobj_persist);
	r_(pop, addr, len);
	pl_commit();
}

RPMEM_EXPORT int pmemobj_xpersist(void *pop, const void *addr, size_t len,
				  unsigned flags)
{
	OBJ_REAL(pmemobj_xpersist);
	int ret = r_(pop, addr, len, flags);
	pl_commit();
	return ret;
}

RPMEM_EXPORT void pmemobj_drain(void *pop)
{
	OBJ_REAL(pmemobj_drain);
	r_(pop);
	pl_commit();
}

RPMEM_EXPORT void *pmemobj_memcpy_persist(void *pop, void *dest,
					  const void *src, size_t len)
{
	OBJ_REAL(pmemobj_memcpy_persist);
	void *ret = r_(pop, dest, src, len);
	pl_commit();
	return ret;
}

RPMEM_EXPORT void *pmemobj_memset_persist(void *pop, void *dest, int c,
					  size_t len)
{
	OBJ_REAL(pmemobj_memset_persist);
	void *ret = r_(pop, dest, c, len);
	pl_commit();
	return ret;
}

RPMEM_EXPORT void *pmemobj_memcpy(void *pop, void *dest, const void *src,
				  size_t len, unsigned flags)
{
	OBJ_REAL(pmemobj_memcpy);
	void *ret = r_(pop, dest, src, len, flags);
	pl_commit();
	return ret;
}

RPMEM_EXPORT void *pmemobj_memmove(void *pop, void *dest, const void *src,
				   size_t len, unsigned flags)
{
	OBJ_REAL(pmemobj_memmove);
	void *ret = r_(pop, dest, src, len, flags);
	pl_commit();
	return ret;
}

RPMEM_EXPORT void *pmemobj_memset(void *pop, void *dest, int c, size_t len,
				  unsigned flags)
{
	OBJ_REAL(pmemobj_memset);
	void *ret = r_(pop, dest, c, len, flags);
	pl_commit();
	return ret;
}
