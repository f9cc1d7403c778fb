/* SPDX-License-Identifier: BSD-3-Clause */
/* interpose.c -- the libc, libpmem and libpmem2 calls librpmem_preload takes */
#include <dlfcn.h>
#include <errno.h>
#include <libpmem.h>
#include <libpmem2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <syslog.h>

#include "preload.h"

/*
 * Every entry point does the real call (dlsym(RTLD_NEXT)), then its
 * part: a flush writes the ranges that lie in configured mappings to their
 * targets, a drain waits until the targets have persisted them. Before a
 * call that flushes (or stores), the ranges are marked in the files'
 * dirty logs, so that they are marked before they can be persistent
 * locally. When no
 * configured file is mapped a call costs one relaxed load more than
 * without the library. The version script (preload.map) gives the libpmem
 * and libpmem2 definitions the versions their callers reference, and
 * mmap/munmap glibc's, so that versioned references bind here.
 */

#define LIBPMEM_VER "LIBPMEM_1.0"
#define LIBPMEM2_VER "LIBPMEM2_1.0"
#define GLIBC_VER "GLIBC_2.2.5"

static void *(*r_mmap)(void *, size_t, int, int, int, off_t);
static void *(*r_mmap64)(void *, size_t, int, int, int, off_t);
static int (*r_munmap)(void *, size_t);

/* resolve -- the next definition of name (version ver), or stop */
static void *resolve(const char *name, const char *ver)
{
	void *p = dlvsym(RTLD_NEXT, name, ver);
	if (!p)
		p = dlsym(RTLD_NEXT, name);
	if (!p) {
		fprintf(stderr, "rpmem_preload: no %s@%s to forward to: %s\n",
			name, ver, dlerror());
		abort();
	}
	return p;
}

/* pl_real_mmap -- libc's mmap */
void *pl_real_mmap(void *addr, size_t len, int prot, int flags, int fd,
		   off_t off)
{
	if (!r_mmap)
		r_mmap = resolve("mmap", GLIBC_VER);
	return r_mmap(addr, len, prot, flags, fd, off);
}

/* pl_real_munmap -- libc's munmap */
int pl_real_munmap(void *addr, size_t len)
{
	if (!r_munmap)
		r_munmap = resolve("munmap", GLIBC_VER);
	return r_munmap(addr, len);
}

/* file_of -- the configured file fd is open on, or NULL */
static struct pl_file *file_of(int fd)
{
	struct stat st, cs;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode))
		return NULL;
	for (unsigned i = 0; i < pl_cfg.nfiles; i++) {
		struct pl_file *f = &pl_cfg.files[i];
		/* the path is looked at each time: it may be created late */
		if (!stat(f->path, &cs) && cs.st_dev == st.st_dev &&
		    cs.st_ino == st.st_ino)
			return f;
	}
	return NULL;
}

/*
 * mapped -- p = mmap(...) succeeded: track it if it is a writable shared
 * mapping of a configured file, starting its replica on the first one.
 * Returns p, or MAP_FAILED (errno set) if fail-stop refused to start.
 */
static void *mapped(void *p, size_t len, int prot, int flags, int fd,
		    off_t off)
{
	pl_init();
	if (!pl_cfg.nfiles)
		return p;
	int saved = errno;
	/* a fixed mapping replaces whatever was there */
	if ((flags & MAP_FIXED) && atomic_load(&pl_nmaps))
		pl_maps_remove(p, len);
	int type = flags & MAP_TYPE;
	struct pl_file *f = NULL;
	if (fd >= 0 && (prot & PROT_WRITE) &&
	    (type == MAP_SHARED || type == MAP_SHARED_VALIDATE))
		f = file_of(fd);
	if (!f) {
		errno = saved;
		return p;
	}
	int ret = 0;
	pthread_rwlock_wrlock(&f->lock);
	if (!f->started)
		ret = pl_file_start(f, fd);
	if (!ret && f->started && pl_maps_add(p, len, (uint64_t)off, f)) {
		pl_msg(LOG_CRIT, "cannot track more than %d mappings of "
		       "replicated files; the mapping of '%s' fails",
		       PL_MAPS_MAX, f->path);
		ret = -ENOMEM;
	}
	pthread_rwlock_unlock(&f->lock);
	if (ret) {
		pl_real_munmap(p, len);
		errno = -ret;
		return MAP_FAILED;
	}
	errno = saved;
	return p;
}

/* mmap -- libc's, then track mappings of configured files */
RPMEM_EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd,
			off_t off)
{
	void *p = pl_real_mmap(addr, len, prot, flags, fd, off);
	if (p == MAP_FAILED || pl_busy)
		return p;
	return mapped(p, len, prot, flags, fd, off);
}

/* mmap64 -- the same (off_t is 64 bits here) */
RPMEM_EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd,
			  off_t off)
{
	if (!r_mmap64)
		r_mmap64 = resolve("mmap64", GLIBC_VER);
	void *p = r_mmap64(addr, len, prot, flags, fd, off);
	if (p == MAP_FAILED || pl_busy)
		return p;
	return mapped(p, len, prot, flags, fd, off);
}

/* munmap -- libc's, then forget what was tracked there */
RPMEM_EXPORT int munmap(void *addr, size_t len)
{
	int ret = pl_real_munmap(addr, len);
	if (!ret && !pl_busy && atomic_load(&pl_nmaps)) {
		int saved = errno;
		pl_maps_remove(addr, len);
		errno = saved;
	}
	return ret;
}

/* --- libpmem -------------------------------------------------------------- */

static struct {
	void (*persist)(const void *, size_t);
	void (*flush)(const void *, size_t);
	void (*drain)(void);
	int (*msync)(const void *, size_t);
	void (*deep_flush)(const void *, size_t);
	int (*deep_drain)(const void *, size_t);
	int (*deep_persist)(const void *, size_t);
	void *(*memcpy)(void *, const void *, size_t, unsigned);
	void *(*memmove)(void *, const void *, size_t, unsigned);
	void *(*memset)(void *, int, size_t, unsigned);
	void *(*memcpy_persist)(void *, const void *, size_t);
	void *(*memcpy_nodrain)(void *, const void *, size_t);
	void *(*memmove_persist)(void *, const void *, size_t);
	void *(*memmove_nodrain)(void *, const void *, size_t);
	void *(*memset_persist)(void *, int, size_t);
	void *(*memset_nodrain)(void *, int, size_t);
} real;

/* resolve_pmem -- every real libpmem function, once */
static void resolve_pmem(void)
{
#define R(f) real.f = (__typeof__(real.f))resolve("pmem_" #f, LIBPMEM_VER)
	R(persist);
	R(flush);
	R(drain);
	R(msync);
	R(deep_flush);
	R(deep_drain);
	R(deep_persist);
	R(memcpy);
	R(memmove);
	R(memset);
	R(memcpy_persist);
	R(memcpy_nodrain);
	R(memmove_persist);
	R(memmove_nodrain);
	R(memset_persist);
	R(memset_nodrain);
#undef R
}

/* resolve_pmem_once -- resolve_pmem, whichever thread comes first */
static void resolve_pmem_once(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, resolve_pmem);
}

/* REAL -- the real libpmem function f */
#define REAL(f) (real.f ? real.f : (resolve_pmem_once(), real.f))

/*
 * CALL -- the real f(...); libpmem calls its own exported functions
 * (pmem_persist calls pmem_flush and pmem_drain), which land here too:
 * pl_busy makes those inner calls forward without doing our part twice
 */
#define CALL(f, ...)                                                    \
	({                                                              \
		pl_busy++;                                              \
		__typeof__(REAL(f)(__VA_ARGS__)) r_ = REAL(f)(__VA_ARGS__); \
		pl_busy--;                                              \
		r_;                                                     \
	})
#define CALL_VOID(f, ...)                                               \
	do {                                                            \
		pl_busy++;                                              \
		REAL(f)(__VA_ARGS__);                                   \
		pl_busy--;                                              \
	} while (0)

/*
 * before_flush -- [a, a + n) is about to be flushed (or stored and
 * flushed): its configured parts are marked in their dirty logs first.
 * Returns what after_flush takes.
 */
static inline int before_flush(const void *a, size_t n)
{
	if (atomic_load_explicit(&pl_nmaps, memory_order_relaxed) &&
	    !pl_busy)
		return pl_mark(a, n);
	return 0;
}

/*
 * after_flush -- the configured parts of [a, a + n) go to their targets;
 * marked: what before_flush returned
 */
static inline void after_flush(const void *a, size_t n, int marked)
{
	if (marked)
		pl_mark_done();
	if (atomic_load_explicit(&pl_nmaps, memory_order_relaxed) &&
	    !pl_busy)
		pl_flushed(a, n);
}

/*
 * after_drain -- what was written is persistent on the targets, or, for
 * a drain libpmemobj makes inside a transaction (ra: the caller), ordered
 * before what comes next
 */
static inline void after_drain(const void *ra)
{
	if (pl_dirty && !pl_busy)
		pl_drain(pl_may_order(ra));
}

/* RA -- the caller of the interposed function this is written in */
#define RA __builtin_return_address(0)

/* after_mem -- a pmem_mem* call with flags wrote [d, d + n); ra: caller */
static inline void after_mem(void *d, size_t n, unsigned flags, int marked,
			     const void *ra)
{
	if (!(flags & PMEM_F_MEM_NOFLUSH))
		after_flush(d, n, marked);
	else if (marked)
		pl_mark_done();
	if (!(flags & PMEM_F_MEM_NODRAIN))
		after_drain(ra);
}

RPMEM_EXPORT void pmem_persist(const void *addr, size_t len)
{
	int m = before_flush(addr, len);
	CALL_VOID(persist, addr, len);
	after_flush(addr, len, m);
	after_drain(RA);
}

RPMEM_EXPORT void pmem_flush(const void *addr, size_t len)
{
	int m = before_flush(addr, len);
	CALL_VOID(flush, addr, len);
	after_flush(addr, len, m);
}

RPMEM_EXPORT void pmem_drain(void)
{
	CALL_VOID(drain);
	after_drain(RA);
}

/* pmem_msync -- a persist when msync succeeded */
RPMEM_EXPORT int pmem_msync(const void *addr, size_t len)
{
	int m = before_flush(addr, len);
	int ret = CALL(msync, addr, len);
	if (!ret) {
		after_flush(addr, len, m);
		after_drain(RA);
	} else if (m) {
		pl_mark_done();
	}
	return ret;
}

RPMEM_EXPORT void pmem_deep_flush(const void *addr, size_t len)
{
	int m = before_flush(addr, len);
	CALL_VOID(deep_flush, addr, len);
	after_flush(addr, len, m);
}

RPMEM_EXPORT int pmem_deep_drain(const void *addr, size_t len)
{
	int ret = CALL(deep_drain, addr, len);
	after_drain(RA);
	return ret;
}

RPMEM_EXPORT int pmem_deep_persist(const void *addr, size_t len)
{
	int m = before_flush(addr, len);
	int ret = CALL(deep_persist, addr, len);
	after_flush(addr, len, m);
	after_drain(RA);
	return ret;
}

RPMEM_EXPORT void *pmem_memcpy(void *dst, const void *src, size_t len,
			       unsigned flags)
{
	int m = before_flush(dst, len);
	void *r = CALL(memcpy, dst, src, len, flags);
	after_mem(dst, len, flags, m, RA);
	return r;
}

RPMEM_EXPORT void *pmem_memmove(void *dst, const void *src, size_t len,
				unsigned flags)
{
	int m = before_flush(dst, len);
	void *r = CALL(memmove, dst, src, len, flags);
	after_mem(dst, len, flags, m, RA);
	return r;
}

RPMEM_EXPORT void *pmem_memset(void *dst, int c, size_t len, unsigned flags)
{
	int m = before_flush(dst, len);
	void *r = CALL(memset, dst, c, len, flags);
	after_mem(dst, len, flags, m, RA);
	return r;
}

RPMEM_EXPORT void *pmem_memcpy_persist(void *dst, const void *src, size_t len)
{
	int m = before_flush(dst, len);
	void *r = CALL(memcpy_persist, dst, src, len);
	after_mem(dst, len, 0, m, RA);
	return r;
}

RPMEM_EXPORT void *pmem_memcpy_nodrain(void *dst, const void *src, size_t len)
{
	int m = before_flush(dst, len);
	void *r = CALL(memcpy_nodrain, dst, src, len);
	after_mem(dst, len, PMEM_F_MEM_NODRAIN, m, RA);
	return r;
}

RPMEM_EXPORT void *pmem_memmove_persist(void *dst, const void *src,
					size_t len)
{
	int m = before_flush(dst, len);
	void *r = CALL(memmove_persist, dst, src, len);
	after_mem(dst, len, 0, m, RA);
	return r;
}

RPMEM_EXPORT void *pmem_memmove_nodrain(void *dst, const void *src,
					size_t len)
{
	int m = before_flush(dst, len);
	void *r = CALL(memmove_nodrain, dst, src, len);
	after_mem(dst, len, PMEM_F_MEM_NODRAIN, m, RA);
	return r;
}

RPMEM_EXPORT void *pmem_memset_persist(void *dst, int c, size_t len)
{
	int m = before_flush(dst, len);
	void *r = CALL(memset_persist, dst, c, len);
	after_mem(dst, len, 0, m, RA);
	return r;
}

RPMEM_EXPORT void *pmem_memset_nodrain(void *dst, int c, size_t len)
{
	int m = before_flush(dst, len);
	void *r = CALL(memset_nodrain, dst, c, len);
	after_mem(dst, len, PMEM_F_MEM_NODRAIN, m, RA);
	return r;
}

/* --- libpmem2 ------------------------------------------------------------- */

/*
 * libpmem2 hands out function pointers. For a map of a configured file we
 * hand out ours instead; they call the real functions of the map's store
 * granularity (libpmem2 picks its functions by granularity alone), then
 * do their part. Maps of other files get the real functions: no cost.
 */
#define PL_GRAN 3

static struct {
	pmem2_persist_fn persist;
	pmem2_flush_fn flush;
	pmem2_drain_fn drain;
	pmem2_memcpy_fn memcpy;
	pmem2_memmove_fn memmove;
	pmem2_memset_fn memset;
} real2[PL_GRAN];

/* WRAP2 -- our libpmem2 functions for granularity g */
#define WRAP2(g)                                                          \
	static void persist_##g(const void *p, size_t n)                  \
	{                                                                 \
		int m = before_flush(p, n);                               \
		pl_busy++;                                                \
		real2[g].persist(p, n);                                   \
		pl_busy--;                                                \
		after_flush(p, n, m);                                     \
		after_drain(NULL);                                            \
	}                                                                 \
	static void flush_##g(const void *p, size_t n)                    \
	{                                                                 \
		int m = before_flush(p, n);                               \
		pl_busy++;                                                \
		real2[g].flush(p, n);                                     \
		pl_busy--;                                                \
		after_flush(p, n, m);                                     \
	}                                                                 \
	static void drain_##g(void)                                       \
	{                                                                 \
		pl_busy++;                                                \
		real2[g].drain();                                         \
		pl_busy--;                                                \
		after_drain(NULL);                                            \
	}                                                                 \
	static void *memcpy_##g(void *d, const void *s, size_t n,         \
				unsigned fl)                              \
	{                                                                 \
		int m = before_flush(d, n);                               \
		pl_busy++;                                                \
		void *r = real2[g].memcpy(d, s, n, fl);                   \
		pl_busy--;                                                \
		after_mem(d, n, fl, m, NULL);                                   \
		return r;                                                 \
	}                                                                 \
	static void *memmove_##g(void *d, const void *s, size_t n,        \
				 unsigned fl)                             \
	{                                                                 \
		int m = before_flush(d, n);                               \
		pl_busy++;                                                \
		void *r = real2[g].memmove(d, s, n, fl);                  \
		pl_busy--;                                                \
		after_mem(d, n, fl, m, NULL);                                   \
		return r;                                                 \
	}                                                                 \
	static void *memset_##g(void *d, int c, size_t n, unsigned fl)    \
	{                                                                 \
		int m = before_flush(d, n);                               \
		pl_busy++;                                                \
		void *r = real2[g].memset(d, c, n, fl);                   \
		pl_busy--;                                                \
		after_mem(d, n, fl, m, NULL);                                   \
		return r;                                                 \
	}

WRAP2(0)
WRAP2(1)
WRAP2(2)

static const struct {
	pmem2_persist_fn persist;
	pmem2_flush_fn flush;
	pmem2_drain_fn drain;
	pmem2_memcpy_fn memcpy;
	pmem2_memmove_fn memmove;
	pmem2_memset_fn memset;
} ours2[PL_GRAN] = {
	{ persist_0, flush_0, drain_0, memcpy_0, memmove_0, memset_0 },
	{ persist_1, flush_1, drain_1, memcpy_1, memmove_1, memset_1 },
	{ persist_2, flush_2, drain_2, memcpy_2, memmove_2, memset_2 },
};

/*
 * replicated_gran -- the granularity of map if it maps a configured file
 * (its real functions recorded in real2), else -1
 */
static int replicated_gran(struct pmem2_map *map)
{
	if (!atomic_load(&pl_nmaps) || pl_busy)
		return -1;
	struct pl_hit hit;
	if (!pl_maps_lookup(pmem2_map_get_address(map), 1, &hit, 1))
		return -1;
	int g = (int)pmem2_map_get_store_granularity(map);
	if (g < 0 || g >= PL_GRAN)
		return -1;
	return g;
}

/* GET2 -- pmem2_get_<what>_fn: the real one, or ours for configured files */
#define GET2(what, type)                                                   \
	RPMEM_EXPORT type pmem2_get_##what##_fn(struct pmem2_map *map)     \
	{                                                                  \
		static type (*r)(struct pmem2_map *);                      \
		if (!r)                                                    \
			r = (type(*)(struct pmem2_map *))resolve(          \
				"pmem2_get_" #what "_fn", LIBPMEM2_VER);   \
		type fn = r(map);                                          \
		int g = replicated_gran(map);                              \
		if (g < 0)                                                 \
			return fn;                                         \
		real2[g].what = fn;                                        \
		return ours2[g].what;                                      \
	}

GET2(persist, pmem2_persist_fn)
GET2(flush, pmem2_flush_fn)
GET2(drain, pmem2_drain_fn)
GET2(memcpy, pmem2_memcpy_fn)
GET2(memmove, pmem2_memmove_fn)
GET2(memset, pmem2_memset_fn)

/* --- process life ------------------------------------------------------- */

/*
 * ctor -- read the configuration before main; a file to replicate: SIGBUS's
 * action goes through the library from now on; forked children replicate
 * not
 */
__attribute__((constructor)) static void ctor(void)
{
	pl_init();
	if (pl_cfg.nfiles)
		pl_signals_interpose();
	pthread_atfork(NULL, NULL, pl_forked);
}

/* dtor -- a clean exit leaves every replica consistent */
__attribute__((destructor)) static void dtor(void)
{
	pl_stop_all();
}
