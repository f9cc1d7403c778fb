/* SPDX-License-Identifier: BSD-3-Clause */
/* session.c -- a client session: handshake, then one request at a time */
#include <errno.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "log.h"
#include "net.h"
#include "sock.h"
#include "pmem.h"
#include "store.h"
#include "session.h"
#include "rdma.h"
#include "util.h"
#include "wire.h"

/* the largest request payload apart from WRITE (HELLO is ~520 bytes) */
#define REQ_MAX 4096
_Static_assert(12 + 12 * RPMEM_MAX_HASHV_RANGES <= REQ_MAX,
	       "the largest HASHV request fits the request buffer");
#define SMALL_REPLY 2048

struct rpmemd_handle {
	uint32_t id; /* 0 = free slot */
	uint8_t mode;
	uint8_t xport; /* RPMEM_XPORT_TCP or _RDMA */
	struct rpmemd_pool *pool;
	struct rpmemd_session *s;     /* for the RDMA persist callback */
	struct rpmem_rdma_expo *expo; /* the pool exposed over RDMA */
};

struct rpmemd_session {
	struct rpmemd_sessions *set;
	struct rpmemd_session *next;
	pthread_t thread;
	int fd; /* closed by the reaper, after the join */
	uint32_t id;
	uint64_t started; /* unix seconds */
	char peer[64];			/* "addr:port" */
	char local[RPMEMD_ADDR_MAX];	/* our address, numeric */
	struct rpmem_rdma_srv *rdma;	/* RDMA listener on it, or NULL */
	char holder[RPMEM_STR_MAX + 1]; /* how busy errors name us */

	/* protected by set->lock */
	char client[RPMEM_STR_MAX + 1];
	char cur_pool[2 * RPMEM_NAME_MAX + 2]; /* shown by STATUS */
	uint8_t cur_mode;
	uint8_t cur_xport;
	int established;
	int done;

	/* the session thread's own */
	struct rpmemd_handle h[RPMEMD_MAX_HANDLES];
	uint32_t next_handle;
	uint32_t derr_code; /* a failed WRITE, reported by the next FLUSH */
	char derr_msg[RPMEM_MSG_MAX + 1];
	uint8_t req[REQ_MAX];
	uint8_t *out; /* RPMEM_MAX_PAYLOAD, allocated on first use */

	/* atomics, read by STATUS */
	uint64_t bytes_written;
	uint64_t bytes_read;
	uint64_t flushes;
	uint64_t last_flush_ns;
};

int rpmemd_sessions_new(struct rpmemd_regions *regions, unsigned max_sessions,
			const char *server, struct rpmemd_sessions **out)
{
	struct rpmemd_sessions *set = calloc(1, sizeof(*set));
	int ret;
	if (!set)
		return -ENOMEM;
	set->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (set->wake_fd < 0) {
		ret = -errno;
		goto err_free;
	}
	if ((ret = -pthread_mutex_init(&set->lock, NULL)))
		goto err_close;
	set->regions = regions;
	set->max_sessions = max_sessions;
	set->next_id = 1;
	set->started_ns = rpmem_now_ns();
	/* RPMEM_CAP_RDMA: set by the server with set->rdma */
	set->caps = RPMEM_CAP_HASHV;
	rpmem_strlcpy(set->server, server, sizeof(set->server));
	*out = set;
	return 0;

err_close:
	close(set->wake_fd);
err_free:
	free(set);
	return ret;
}

void rpmemd_sessions_delete(struct rpmemd_sessions **pset)
{
	struct rpmemd_sessions *set = pset ? *pset : NULL;
	if (!set)
		return;
	pthread_mutex_destroy(&set->lock);
	close(set->wake_fd);
	free(set);
	*pset = NULL;
}

void rpmemd_sessions_set_max(struct rpmemd_sessions *set, unsigned max)
{
	pthread_mutex_lock(&set->lock);
	set->max_sessions = max;
	pthread_mutex_unlock(&set->lock);
}

unsigned rpmemd_sessions_count(struct rpmemd_sessions *set)
{
	pthread_mutex_lock(&set->lock);
	unsigned n = set->count;
	pthread_mutex_unlock(&set->lock);
	return n;
}

void rpmemd_sessions_shutdown(struct rpmemd_sessions *set, int how)
{
	pthread_mutex_lock(&set->lock);
	__atomic_store_n(&set->stopping, 1, __ATOMIC_RELAXED);
	for (struct rpmemd_session *s = set->head; s; s = s->next)
		if (!s->done)
			shutdown(s->fd, how);
	pthread_mutex_unlock(&set->lock);
}

unsigned rpmemd_sessions_reap(struct rpmemd_sessions *set)
{
	uint64_t v;
	struct rpmemd_session *dead = NULL;
	if (read(set->wake_fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		WARN("session wake-up: read: %s", strerror(errno));
	pthread_mutex_lock(&set->lock);
	for (struct rpmemd_session **pp = &set->head; *pp;) {
		struct rpmemd_session *s = *pp;
		if (!s->done) {
			pp = &s->next;
			continue;
		}
		*pp = s->next;
		s->next = dead;
		dead = s;
		set->count--;
	}
	unsigned left = set->count;
	pthread_mutex_unlock(&set->lock);
	while (dead) {
		struct rpmemd_session *s = dead;
		dead = s->next;
		pthread_join(s->thread, NULL);
		close(s->fd);
		free(s->out);
		free(s);
	}
	return left;
}

/*
 * apm_cap -- RPMEM_CAP_APM if a region declares direct_pmem (regions
 * change with a reload, so this is asked each time)
 */
static uint32_t apm_cap(struct rpmemd_sessions *set)
{
	struct rpmemd_regions *rs = set->regions;
	uint32_t caps = 0;

	pthread_mutex_lock(&rs->lock);
	for (unsigned i = 0; i < rs->n && !caps; i++)
		if (rs->v[i]->cfg.direct_pmem)
			caps = RPMEM_CAP_APM;
	pthread_mutex_unlock(&rs->lock);
	return caps;
}

/*
 * local_rdma -- the numeric local address of the connection fd into
 * s->local, and the RDMA listener serving it (if any) into s->rdma
 */
static void local_rdma(struct rpmemd_session *s, int fd)
{
	struct rpmemd_sessions *set = s->set;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char *a = s->local;

	s->local[0] = '\0';
	s->rdma = NULL;
	if (getsockname(fd, (struct sockaddr *)&ss, &sl) ||
	    getnameinfo((struct sockaddr *)&ss, sl, s->local,
			sizeof(s->local), NULL, 0, NI_NUMERICHOST))
		return;
	/* an IPv4 client of a dual-stack socket */
	if (!strncmp(a, "::ffff:", 7) && strchr(a + 7, '.'))
		a += 7;
	for (unsigned i = 0; i < set->nrdma; i++)
		if (!strcmp(set->rdma[i].addr, a)) {
			s->rdma = set->rdma[i].srv;
			break;
		}
	if (a != s->local)
		memmove(s->local, a, strlen(a) + 1);
}

/* sanitize -- replace control characters in a string from the wire */
static void sanitize(char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			*s = '?';
}

/* errno_code -- the ERROR code for a -errno from the pool store */
static uint32_t errno_code(int err)
{
	switch (-err) {
	case ENOENT:
		return RPMEM_E_NOPOOL;
	case ENODEV:
		return RPMEM_E_NOREGION;
	case EEXIST:
		return RPMEM_E_EXISTS;
	case EBUSY:
		return RPMEM_E_BUSY;
	case ENOSPC:
	case EDQUOT:
		return RPMEM_E_NOSPACE;
	case EINVAL:
		return RPMEM_E_INVAL;
	case EROFS:
		return RPMEM_E_RDONLY;
	case ENOMEM:
		return RPMEM_E_LIMIT;
	}
	return RPMEM_E_IO;
}

/* reply_err -- an ERROR reply; returns 0 or the send failure */
static int __attribute__((format(printf, 4, 5)))
reply_err(struct rpmemd_session *s, uint32_t id, uint32_t code,
	  const char *fmt, ...)
{
	char msg[RPMEM_MSG_MAX + 1];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	DBG("session %u: error %u (%s): %s", s->id, code, rpmem_err_str(code),
	    msg);
	return rpmemd_send_error(s->fd, id, code, "%s", msg);
}

/* reply_ok -- an empty OK reply */
static int reply_ok(struct rpmemd_session *s, uint32_t id)
{
	return rpmem_send_frame(s->fd, RPMEM_MSG_OK, id, NULL, 0, NULL, 0);
}

/* out_buf -- the large reply buffer */
static uint8_t *out_buf(struct rpmemd_session *s)
{
	if (!s->out)
		s->out = malloc(RPMEM_MAX_PAYLOAD);
	return s->out;
}

/* defer -- remember the first failed WRITE for the next FLUSH */
static void __attribute__((format(printf, 3, 4)))
defer(struct rpmemd_session *s, uint32_t code, const char *fmt, ...)
{
	if (s->derr_code)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(s->derr_msg, sizeof(s->derr_msg), fmt, ap);
	va_end(ap);
	s->derr_code = code;
	WARN("session %u: %s (reported at the next FLUSH)", s->id,
	     s->derr_msg);
}

/* handle_get -- the open pool behind handle id, or NULL */
static struct rpmemd_handle *handle_get(struct rpmemd_session *s, uint32_t id)
{
	if (id == 0)
		return NULL;
	for (unsigned i = 0; i < RPMEMD_MAX_HANDLES; i++)
		if (s->h[i].id == id)
			return &s->h[i];
	return NULL;
}

/* update_cur -- show the most recently opened pool in STATUS */
static void update_cur(struct rpmemd_session *s)
{
	struct rpmemd_handle *best = NULL;
	for (unsigned i = 0; i < RPMEMD_MAX_HANDLES; i++)
		if (s->h[i].id && (!best || s->h[i].id > best->id))
			best = &s->h[i];
	pthread_mutex_lock(&s->set->lock);
	if (best) {
		snprintf(s->cur_pool, sizeof(s->cur_pool), "%s/%s",
			 best->pool->region->cfg.name, best->pool->name);
		s->cur_mode = best->mode;
		s->cur_xport = best->xport;
	} else {
		s->cur_pool[0] = '\0';
		s->cur_mode = RPMEM_OPEN_RO;
		s->cur_xport = RPMEM_XPORT_TCP;
	}
	pthread_mutex_unlock(&s->set->lock);
}

/*
 * handle_close -- close one open pool of the session: the RDMA exposure
 * (disconnect, deregister) goes before the mapping
 */
static void handle_close(struct rpmemd_session *s, struct rpmemd_handle *h)
{
	struct rpmemd_pool *p = h->pool;
	rpmem_rdma_unexpose(&h->expo);
	INFO("session %u: closed pool %s/%s (%s, %s)", s->id,
	     p->region->cfg.name, p->name,
	     h->mode == RPMEM_OPEN_RW ? "rw" : "ro",
	     h->xport == RPMEM_XPORT_RDMA ? "rdma" : "tcp");
	rpmemd_pool_close(&h->pool, h->mode, s->id);
	memset(h, 0, sizeof(*h));
}

/*
 * rdma_persist -- the persist callback of an RDMA exposure (GPSPM flush),
 * called from its connection thread: persist through the pool's path and
 * count the flushed bytes (RDMA writes themselves bypass this CPU)
 */
static int rdma_persist(void *arg, uint64_t off, uint64_t len)
{
	struct rpmemd_handle *h = arg;
	struct rpmemd_session *s = h->s;

	if (h->mode != RPMEM_OPEN_RW)
		return -EROFS;
	uint64_t t0 = rpmem_now_ns();
	int ret = rpmemd_pool_persist(h->pool, off, len);
	uint64_t dt = rpmem_now_ns() - t0;
	if (ret)
		return ret;
	rpmemd_pool_count(h->pool, len, 1);
	__atomic_add_fetch(&s->bytes_written, len, __ATOMIC_RELAXED);
	__atomic_add_fetch(&s->flushes, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&s->last_flush_ns, dt, __ATOMIC_RELAXED);
	return 0;
}

/*
 * rdma_expose -- expose the pool of h to this session over RDMA; fills
 * blob[*blob_len] (in: capacity). On failure, why[] says why.
 */
static int rdma_expose(struct rpmemd_session *s, struct rpmemd_handle *h,
		       void *blob, size_t *blob_len, char *why, size_t wlen)
{
	struct rpmemd_pool *p = h->pool;
	struct rpmem_rdma_expo_cfg cfg = {
		.addr = p->addr,
		.len = (size_t)p->size,
		.apm = p->region->cfg.direct_pmem && p->is_pmem,
		.is_pmem = p->is_pmem,
		.readonly = h->mode == RPMEM_OPEN_RO,
		.persist = rdma_persist,
		.arg = h,
	};
	unsigned long long lim;
	char sz[32];

	h->s = s;
	int ret = rpmem_rdma_expose(s->rdma, &cfg, blob, blob_len, &h->expo);
	if (!ret)
		return 0;
	if (ret == -ENOMEM && rpmem_memlock_limit(&lim))
		snprintf(why, wlen,
			 "registering pool '%s' (%s) for RDMA failed: the target's locked-memory limit is %llu bytes: raise RLIMIT_MEMLOCK: LimitMEMLOCK=infinity in rpmemd.service, or ulimit -l",
			 p->name, rpmem_fmt_size(p->size, sz, sizeof(sz)),
			 lim);
	else
		snprintf(why, wlen,
			 "registering pool '%s' (%s) for RDMA failed: %s (see rpmemd's log)",
			 p->name, rpmem_fmt_size(p->size, sz, sizeof(sz)),
			 strerror(-ret));
	return ret;
}

/* bad_payload -- the reply to a well-framed request that did not decode */
static int bad_payload(struct rpmemd_session *s, const struct rpmem_hdr *hd)
{
	return reply_err(s, hd->id, RPMEM_E_PROTO,
			 "invalid %s received: malformed %u-byte payload",
			 rpmem_msg_type_str(hd->type), hd->len);
}

/* check_names -- region (and pool if not NULL) are valid names */
static int check_names(struct rpmemd_session *s, uint32_t id,
		       const char *region, const char *pool, int *ok)
{
	*ok = 0;
	if (!rpmem_name_valid(region))
		return reply_err(s, id, RPMEM_E_INVAL,
				 "invalid region name (1-64 of letters, digits, '.', '_', '-'; not starting with '.')");
	if (pool && !rpmem_name_valid(pool))
		return reply_err(s, id, RPMEM_E_INVAL,
				 "invalid pool name (1-64 of letters, digits, '.', '_', '-'; not starting with '.')");
	*ok = 1;
	return 0;
}

/* get_region -- a reference to a region by name, or an ERROR reply */
static int get_region(struct rpmemd_session *s, uint32_t id, const char *name,
		      struct rpmemd_region **r)
{
	*r = NULL;
	if (rpmemd_region_get(s->set->regions, name, r) == 0)
		return 0;
	return reply_err(s, id, RPMEM_E_NOREGION,
			 "no region '%s' on this target", name);
}

/* do_list -- LIST: regions and their pools */
static int do_list(struct rpmemd_session *s, const struct rpmem_hdr *hd)
{
	struct rpmem_msg_list m;
	struct rpmem_msg_list_reply rep = { 0 };
	struct rpmemd_region **v = NULL;
	unsigned n = 0;
	int ret, ok;

	if (rpmem_list_decode(s->req, hd->len, &m))
		return bad_payload(s, hd);
	if (m.region[0]) {
		struct rpmemd_region *r;
		if ((ret = check_names(s, hd->id, m.region, NULL, &ok)) || !ok)
			return ret;
		if ((ret = get_region(s, hd->id, m.region, &r)) || !r)
			return ret;
		v = calloc(1, sizeof(*v));
		if (!v) {
			rpmemd_region_put(&r);
			return reply_err(s, hd->id, RPMEM_E_LIMIT,
					 "out of memory");
		}
		v[0] = r;
		n = 1;
	} else if (rpmemd_regions_get_all(s->set->regions, &v, &n)) {
		return reply_err(s, hd->id, RPMEM_E_LIMIT, "out of memory");
	}
	rep.regions = calloc(n ? n : 1, sizeof(*rep.regions));
	if (!rep.regions) {
		ret = reply_err(s, hd->id, RPMEM_E_LIMIT, "out of memory");
		goto out;
	}
	rep.nregions = n;
	for (unsigned i = 0; i < n; i++) {
		if (rpmemd_region_info(v[i], &rep.regions[i]))
			WARN("region '%s': statvfs %s: %s", v[i]->cfg.name,
			     v[i]->cfg.path, strerror(errno));
		ret = rpmemd_pool_list(v[i], &rep.pools, &rep.npools);
		if (ret) {
			ret = reply_err(s, hd->id, errno_code(ret),
					"cannot list region '%s': %s",
					v[i]->cfg.name, strerror(-ret));
			goto out;
		}
	}
	uint8_t *buf = out_buf(s);
	int len = buf ? rpmem_list_reply_encode(buf, RPMEM_MAX_PAYLOAD, &rep) :
			-ENOMEM;
	if (len < 0)
		ret = reply_err(s, hd->id, RPMEM_E_LIMIT,
				"%u pools do not fit in one reply; list one region at a time",
				rep.npools);
	else
		ret = rpmem_send_frame(s->fd, RPMEM_MSG_LIST_REPLY, hd->id,
				       buf, (size_t)len, NULL, 0);
out:
	rpmem_list_reply_free(&rep);
	rpmemd_regions_put_all(&v, n);
	return ret;
}

/* do_create -- CREATE a pool of the given size */
static int do_create(struct rpmemd_session *s, const struct rpmem_hdr *hd)
{
	struct rpmem_msg_create m;
	struct rpmemd_region *r;
	char err[RPMEM_MSG_MAX], sz[32];
	int ret, ok;

	if (rpmem_create_decode(s->req, hd->len, &m))
		return bad_payload(s, hd);
	if ((ret = check_names(s, hd->id, m.region, m.pool, &ok)) || !ok)
		return ret;
	if ((ret = get_region(s, hd->id, m.region, &r)) || !r)
		return ret;
	ret = rpmemd_pool_create(r, m.pool, m.size, err, sizeof(err));
	rpmemd_region_put(&r);
	if (ret)
		return reply_err(s, hd->id, errno_code(ret), "%s", err);
	INFO("session %u: created pool %s/%s (%s)", s->id, m.region, m.pool,
	     rpmem_fmt_size(m.size, sz, sizeof(sz)));
	return reply_ok(s, hd->id);
}

/* do_remove -- REMOVE a pool (see rpmemd_pool_remove for force) */
static int do_remove(struct rpmemd_session *s, const struct rpmem_hdr *hd)
{
	struct rpmem_msg_remove m;
	struct rpmemd_region *r;
	char err[RPMEM_MSG_MAX];
	int ret, ok;

	if (rpmem_remove_decode(s->req, hd->len, &m))
		return bad_payload(s, hd);
	if ((ret = check_names(s, hd->id, m.region, m.pool, &ok)) || !ok)
		return ret;
	if ((ret = get_region(s, hd->id, m.region, &r)) || !r)
		return ret;
	ret = rpmemd_pool_remove(r, m.pool, !!(m.flags & RPMEM_REMOVE_FORCE),
				 err, sizeof(err));
	rpmemd_region_put(&r);
	if (ret)
		return reply_err(s, hd->id, errno_code(ret), "%s", err);
	INFO("session %u: removed pool %s/%s%s", s->id, m.region, m.pool,
	     (m.flags & RPMEM_REMOVE_FORCE) ? " (forced)" : "");
	return reply_ok(s, hd->id);
}

/* do_open -- OPEN a pool ro or rw; one writer at a time */
static int do_open(struct rpmemd_session *s, const struct rpmem_hdr *hd)
{
	struct rpmem_msg_open m;
	struct rpmem_msg_open_ok rep;
	struct rpmemd_handle *h = NULL;
	struct rpmemd_region *r;
	struct rpmemd_meta meta;
	char err[RPMEM_MSG_MAX];
	uint8_t buf[SMALL_REPLY];
	int ret, ok, len;

	if (rpmem_open_decode(s->req, hd->len, &m))
		return bad_payload(s, hd);
	if ((ret = check_names(s, hd->id, m.region, m.pool, &ok)) || !ok)
		return ret;
	if (m.xport == RPMEM_XPORT_RDMA && !s->rdma)
		return reply_err(s, hd->id, RPMEM_E_XPORT,
				 "rdma is not available on %s: no RDMA device serves the address this session connected to",
				 s->local[0] ? s->local : "this target");
	for (unsigned i = 0; i < RPMEMD_MAX_HANDLES && !h; i++)
		if (!s->h[i].id)
			h = &s->h[i];
	if (!h)
		return reply_err(s, hd->id, RPMEM_E_LIMIT,
				 "a session may have at most %d pools open",
				 RPMEMD_MAX_HANDLES);
	if ((ret = get_region(s, hd->id, m.region, &r)) || !r)
		return ret;
	ret = rpmemd_pool_open(r, m.pool, m.mode, s->id, s->holder, &h->pool,
			       err, sizeof(err));
	rpmemd_region_put(&r);
	if (ret)
		return reply_err(s, hd->id, errno_code(ret), "%s", err);
	h->mode = m.mode;
	h->xport = RPMEM_XPORT_TCP;
	memset(&rep, 0, sizeof(rep));
	/*
	 * RDMA (asked for, or AUTO on an address with an RDMA listener):
	 * register just this pool's range, the blob goes into OPEN_OK; the
	 * exposure lives in the handle until handle_close
	 */
	if (m.xport != RPMEM_XPORT_TCP && s->rdma) {
		size_t blen = sizeof(rep.blob);
		ret = rdma_expose(s, h, rep.blob, &blen, err, sizeof(err));
		if (!ret) {
			h->xport = RPMEM_XPORT_RDMA;
			rep.blob_len = (uint16_t)blen;
		} else if (m.xport == RPMEM_XPORT_RDMA) {
			rpmemd_pool_close(&h->pool, h->mode, s->id);
			memset(h, 0, sizeof(*h));
			return reply_err(s, hd->id, RPMEM_E_XPORT, "%s", err);
		} else {
			INFO("session %u: pool %s/%s: %s; using tcp", s->id,
			     m.region, m.pool, err);
		}
	}
	h->id = s->next_handle++;
	if (s->next_handle == 0)
		s->next_handle = 1;
	rpmemd_pool_get_meta(h->pool, &meta);

	rep.handle = h->id;
	rep.size = h->pool->size;
	rep.state = meta.state;
	rep.generation = meta.generation;
	memcpy(rep.uuid, meta.uuid, sizeof(rep.uuid));
	rep.xport = h->xport;
	update_cur(s);
	INFO("session %u: opened pool %s/%s (%s, %s, generation %llu, %s)",
	     s->id, m.region, m.pool, m.mode == RPMEM_OPEN_RW ? "rw" : "ro",
	     rpmem_state_str(meta.state), (unsigned long long)meta.generation,
	     h->xport == RPMEM_XPORT_RDMA ? "rdma" : "tcp");
	len = rpmem_open_ok_encode(buf, sizeof(buf), &rep);
	if (len < 0)
		return reply_err(s, hd->id, RPMEM_E_INTERNAL,
				 "cannot encode OPEN_OK");
	return rpmem_send_frame(s->fd, RPMEM_MSG_OPEN_OK, hd->id, buf,
				(size_t)len, NULL, 0);
}

/* do_close -- CLOSE a handle */
static int do_close(struct rpmemd_session *s, const struct rpmem_hdr *hd)
{
	struct rpmem_msg_handle m;
	struct rpmemd_handle *h;
	if (rpmem_handle_decode(s->req, hd->len, &m))
		return bad_payload(s, hd);
	if (!(h = handle_get(s, m.handle)))
		return reply_err(s, hd->id, RPMEM_E_INVAL,
				 "CLOSE of unknown handle %u", m.handle);
	handle_close(s, h);
	update_cur(s);
	return reply_ok(s, hd->id);
}

/*
 * do_write -- WRITE: receive the data straight into the pool mapping.
 * WRITE has no reply, so whatever is wrong with it (a malformed head, an
 * unknown or read-only handle, a range outside the pool) is remembered
 * and reported by the next FLUSH; the data is read and dropped so the
 * stream stays in sync. Only a lost connection ends the session.
 */
static int do_write(struct rpmemd_session *s, const struct rpmem_hdr *hd)
{
	struct rpmem_msg_io io;
	struct rpmemd_handle *h;
	uint8_t head[RPMEM_WRITE_HDR_SIZE];
	int ret;

	if (hd->len < RPMEM_WRITE_HDR_SIZE) {
		defer(s, RPMEM_E_PROTO,
		      "invalid WRITE received: %u-byte payload is shorter than its %d-byte head",
		      hd->len, RPMEM_WRITE_HDR_SIZE);
		return rpmem_net_discard(s->fd, hd->len);
	}
	if ((ret = rpmem_net_read_full(s->fd, head, sizeof(head))))
		return ret;
	size_t dlen = hd->len - RPMEM_WRITE_HDR_SIZE;
	if (rpmem_io_decode(head, sizeof(head), &io)) {
		defer(s, RPMEM_E_PROTO,
		      "invalid WRITE received: malformed head (a length over %u or an offset + length that overflows)",
		      RPMEM_MAX_IO);
		return rpmem_net_discard(s->fd, dlen);
	}
	if (io.len != dlen) {
		defer(s, RPMEM_E_PROTO,
		      "invalid WRITE received: its head (%u bytes at offset %llu) does not match the %zu data bytes of the frame",
		      io.len, (unsigned long long)io.offset, dlen);
		return rpmem_net_discard(s->fd, dlen);
	}
	h = handle_get(s, io.handle);
	if (!h) {
		defer(s, RPMEM_E_INVAL, "WRITE to unknown handle %u",
		      io.handle);
		return rpmem_net_discard(s->fd, dlen);
	}
	if (h->mode != RPMEM_OPEN_RW) {
		defer(s, RPMEM_E_RDONLY, "WRITE to pool '%s' opened read-only",
		      h->pool->name);
		return rpmem_net_discard(s->fd, dlen);
	}
	if (!rpmem_range_ok(io.offset, io.len, h->pool->size)) {
		defer(s, RPMEM_E_INVAL,
		      "WRITE of %u bytes at offset %llu is outside pool '%s' (%llu bytes)",
		      io.len, (unsigned long long)io.offset, h->pool->name,
		      (unsigned long long)h->pool->size);
		return rpmem_net_discard(s->fd, dlen);
	}
	ret = rpmem_net_read_full(s->fd, h->pool->addr + io.offset, io.len);
	if (ret)
		return ret;
	rpmemd_pool_count(h->pool, io.len, 0);
	__atomic_add_fetch(&s->bytes_written, io.len, __ATOMIC_RELAXED);
	return 0;
}

/* do_read -- READ: reply DATA straight from the mapping */
static int do_read(struct rpmemd_session *s, const struct rpmem_hdr *hd)
{
	struct rpmem_msg_io m;
	struct rpmemd_handle *h;
	if (rpmem_io_decode(s->req, hd->len, &m))
		return bad_payload(s, hd);
	if (!(h = handle_get(s, m.handle)))
		return reply_err(s, hd->id, RPMEM_E_INVAL,
				 "READ from unknown handle %u", m.handle);
	if (!rpmem_range_ok(m.offset, m.len, h->pool->size))
		return reply_err(s, hd->id, RPMEM_E_INVAL,
				 "READ of %u bytes at offset %llu is outside pool '%s' (%llu bytes)",
				 m.len, (unsigned long long)m.offset,
				 h->pool->name,
				 (unsigned long long)h->pool->size);
	__atomic_add_fetch(&s->bytes_read, m.len, __ATOMIC_RELAXED);
	return rpmem_send_frame(s->fd, RPMEM_MSG_DATA, hd->id, NULL, 0,
				h->pool->addr + m.offset, m.len);
}

/* take_deferred -- reply the remembered WRITE failure, if any */
static int take_deferred(struct rpmemd_session *s, uint32_t id, int *had)
{
	*had = s->derr_code != 0;
	if (!*had)
		return 0;
	uint32_t code = s->derr_code;
	s->derr_code = 0;
	return reply_err(s, id, code, "%s", s->derr_msg);
}

/* do_flush -- FLUSH: persist a range, or report a deferred WRITE error */
static int do_flush(struct rpmemd_session *s, const struct rpmem_hdr *hd)
{
	struct rpmem_msg_flush m;
	struct rpmemd_handle *h;
	int ret, had;

	if (rpmem_flush_decode(s->req, hd->len, &m))
		return bad_payload(s, hd);
	if ((ret = take_deferred(s, hd->id, &had)) || had)
		return ret;
	if (!(h = handle_get(s, m.handle)))
		return reply_err(s, hd->id, RPMEM_E_INVAL,
				 "FLUSH of unknown handle %u", m.handle);
	if (h->mode != RPMEM_OPEN_RW)
		return reply_err(s, hd->id, RPMEM_E_RDONLY,
				 "FLUSH of pool '%s' opened read-only",
				 h->pool->name);
	if (!rpmem_range_ok(m.offset, m.len, h->pool->size))
		return reply_err(s, hd->id, RPMEM_E_INVAL,
				 "FLUSH of %llu bytes at offset %llu is outside pool '%s' (%llu bytes)",
				 (unsigned long long)m.len,
				 (unsigned long long)m.offset, h->pool->name,
				 (unsigned long long)h->pool->size);
	uint64_t t0 = rpmem_now_ns();
	ret = rpmemd_pool_persist(h->pool, m.offset, m.len);
	uint64_t dt = rpmem_now_ns() - t0;
	if (ret)
		return reply_err(s, hd->id, RPMEM_E_IO,
				 "persisting %llu bytes at offset %llu of pool '%s' failed: %s",
				 (unsigned long long)m.len,
				 (unsigned long long)m.offset, h->pool->name,
				 strerror(-ret));
	rpmemd_pool_count(h->pool, 0, 1);
	__atomic_add_fetch(&s->flushes, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&s->last_flush_ns, dt, __ATOMIC_RELAXED);
	return reply_ok(s, hd->id);
}

/*
 * hash_check -- every block of every range starts inside the pool (the
 * last one of a range may be short); else an ERROR reply naming the first
 * range that does not, and *ok = 0
 */
static int hash_check(struct rpmemd_session *s, const struct rpmem_hdr *hd,
		      const struct rpmemd_handle *h, uint32_t bs,
		      const struct rpmem_hash_range *rv, uint32_t n, int *ok)
{
	uint64_t size = h->pool->size;

	*ok = 0;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t off = rv[i].offset;
		if (off < size && (uint64_t)(rv[i].count - 1) * bs < size - off)
			continue;
		if (hd->type == RPMEM_MSG_HASH)
			return reply_err(s, hd->id, RPMEM_E_INVAL,
					 "HASH of %u blocks of %u bytes at offset %llu goes past the end of pool '%s' (%llu bytes)",
					 rv[i].count, bs,
					 (unsigned long long)off, h->pool->name,
					 (unsigned long long)size);
		return reply_err(s, hd->id, RPMEM_E_INVAL,
				 "HASHV range %u of %u (offset %llu, %u x %u bytes) goes past the end of pool '%s' (%llu bytes)",
				 i + 1, n, (unsigned long long)off,
				 rv[i].count, bs, h->pool->name,
				 (unsigned long long)size);
	}
	*ok = 1;
	return 0;
}

/*
 * reply_hashes -- HASHES: XXH3-64 of the blocks of n checked ranges
 * (total blocks in all), in request order
 */
static int reply_hashes(struct rpmemd_session *s, const struct rpmem_hdr *hd,
			const struct rpmemd_handle *h, uint32_t bs,
			const struct rpmem_hash_range *rv, uint32_t n,
			uint32_t total)
{
	uint64_t size = h->pool->size;
	uint64_t *hashes = malloc((size_t)total * sizeof(*hashes));
	uint8_t *buf = out_buf(s);

	if (!hashes || !buf) {
		free(hashes);
		return reply_err(s, hd->id, RPMEM_E_LIMIT, "out of memory");
	}
	uint64_t *dst = hashes;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t len = (uint64_t)rv[i].count * bs;
		if (len > size - rv[i].offset)
			len = size - rv[i].offset;
		rpmem_hash_blocks(h->pool->addr + rv[i].offset, len, bs, dst,
				  2);
		dst += rv[i].count;
	}
	/* to little-endian in place */
	for (uint32_t i = 0; i < total; i++)
		le64_put((uint8_t *)&hashes[i], hashes[i]);
	struct rpmem_msg_hashes rep = { .count = total,
					.hashes = (const uint8_t *)hashes };
	int len = rpmem_hashes_encode(buf, RPMEM_MAX_PAYLOAD, &rep);
	free(hashes);
	if (len < 0)
		return reply_err(s, hd->id, RPMEM_E_INTERNAL,
				 "cannot encode HASHES");
	return rpmem_send_frame(s->fd, RPMEM_MSG_HASHES, hd->id, buf,
				(size_t)len, NULL, 0);
}

/* do_hash -- HASH: XXH3-64 of count blocks; the last one may be short */
static int do_hash(struct rpmemd_session *s, const struct rpmem_hdr *hd)
{
	struct rpmem_msg_hash m;
	struct rpmemd_handle *h;
	int ret, ok;

	if (rpmem_hash_decode(s->req, hd->len, &m))
		return bad_payload(s, hd);
	if (!(h = handle_get(s, m.handle)))
		return reply_err(s, hd->id, RPMEM_E_INVAL,
				 "HASH of unknown handle %u", m.handle);
	struct rpmem_hash_range rg = { .offset = m.offset, .count = m.count };
	if ((ret = hash_check(s, hd, h, m.block_size, &rg, 1, &ok)) || !ok)
		return ret;
	return reply_hashes(s, hd, h, m.block_size, &rg, 1, m.count);
}

/*
 * do_hashv -- HASHV: the hashes of several ranges in one HASHES reply,
 * each range as HASH would hash it
 */
static int do_hashv(struct rpmemd_session *s, const struct rpmem_hdr *hd)
{
	struct rpmem_msg_hashv m;
	struct rpmemd_handle *h;
	int ret, ok;

	if (rpmem_hashv_decode(s->req, hd->len, &m))
		return bad_payload(s, hd);
	if (!(h = handle_get(s, m.handle)))
		return reply_err(s, hd->id, RPMEM_E_INVAL,
				 "HASHV of unknown handle %u", m.handle);
	ret = hash_check(s, hd, h, m.block_size, m.ranges, m.nranges, &ok);
	if (ret || !ok)
		return ret;
	return reply_hashes(s, hd, h, m.block_size, m.ranges, m.nranges,
			    m.total);
}

/* do_set_state -- SET_STATE: persisted in the metadata before the reply */
static int do_set_state(struct rpmemd_session *s, const struct rpmem_hdr *hd)
{
	struct rpmem_msg_set_state m;
	struct rpmemd_handle *h;
	struct rpmemd_meta meta;
	char err[RPMEM_MSG_MAX];
	int ret, had;

	if (rpmem_set_state_decode(s->req, hd->len, &m))
		return bad_payload(s, hd);
	if (!(h = handle_get(s, m.handle)))
		return reply_err(s, hd->id, RPMEM_E_INVAL,
				 "SET_STATE of unknown handle %u", m.handle);
	if (h->mode != RPMEM_OPEN_RW)
		return reply_err(s, hd->id, RPMEM_E_RDONLY,
				 "SET_STATE of pool '%s' opened read-only",
				 h->pool->name);
	/* a pool with a failed WRITE behind it is not consistent */
	if (m.state == RPMEM_POOL_CONSISTENT &&
	    ((ret = take_deferred(s, hd->id, &had)) || had))
		return ret;
	ret = rpmemd_pool_set_state(h->pool, m.state, m.source, &meta, err,
				    sizeof(err));
	if (ret)
		return reply_err(s, hd->id, errno_code(ret), "%s", err);
	INFO("session %u: pool %s/%s is %s (generation %llu)", s->id,
	     h->pool->region->cfg.name, h->pool->name,
	     rpmem_state_str(meta.state), (unsigned long long)meta.generation);
	return reply_ok(s, hd->id);
}

/* info_cmp -- order session infos by id */
static int info_cmp(const void *a, const void *b)
{
	const struct rpmem_session_info *x = a, *y = b;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* ns_info -- a discovered namespace as STATUS_REPLY carries it */
static void ns_info(const struct rpmemd_pmem_ns *e, struct rpmem_ns_info *ni)
{
	rpmem_strlcpy(ni->name, e->ns, sizeof(ni->name));
	rpmem_strlcpy(ni->nd_region, e->region, sizeof(ni->nd_region));
	rpmem_strlcpy(ni->dev, e->dev, sizeof(ni->dev));
	ni->mode = rpmemd_pmem_mode_code(e->mode);
	ni->size = e->size;
	ni->align = e->align;
	ni->numa = e->numa < -1 ? -1 : e->numa;
	/* a longer mount point is not cut short: it is left out */
	if (strlen(e->mount) <= RPMEM_STR_MAX)
		rpmem_strlcpy(ni->mount, e->mount, sizeof(ni->mount));
}

/*
 * status_namespaces -- the PMem namespaces found at start or the last
 * reload, and which active regions lie on them, into rep
 */
static int status_namespaces(struct rpmemd_sessions *set,
			     struct rpmem_msg_status_reply *rep)
{
	struct rpmemd_region **v = NULL;
	struct rpmemd_pmem_ns *ns = NULL;
	unsigned nr = 0;
	size_t n = 0;
	int ret;

	if ((ret = rpmemd_pmem_published(&ns, &n)))
		return ret;
	if (n > RPMEM_MAX_NAMESPACES) {
		WARN("STATUS: %zu namespaces, only the first %u are shown", n,
		     RPMEM_MAX_NAMESPACES);
		n = RPMEM_MAX_NAMESPACES;
	}
	rep->namespaces = calloc(n ? n : 1, sizeof(*rep->namespaces));
	if (!rep->namespaces) {
		ret = -ENOMEM;
		goto out;
	}
	rep->nnamespaces = (uint32_t)n;
	for (size_t i = 0; i < n; i++)
		ns_info(&ns[i], &rep->namespaces[i]);
	if ((ret = rpmemd_regions_get_all(set->regions, &v, &nr)))
		goto out;
	rep->links = calloc(nr ? nr : 1, sizeof(*rep->links));
	if (!rep->links) {
		ret = -ENOMEM;
		goto out;
	}
	for (unsigned j = 0; j < nr && rep->nlinks < RPMEM_MAX_NS_LINKS; j++) {
		int k = rpmemd_pmem_region_ns(ns, n, v[j]->cfg.type,
					      v[j]->cfg.path);
		if (k < 0)
			continue;
		struct rpmem_ns_link *l = &rep->links[rep->nlinks++];
		rpmem_strlcpy(l->region, v[j]->cfg.name, sizeof(l->region));
		l->ns = (uint32_t)k;
	}
out:
	rpmemd_regions_put_all(&v, nr);
	rpmemd_pmem_free(&ns);
	return ret;
}

/* do_status -- STATUS: the daemon, its sessions and its PMem namespaces */
static int do_status(struct rpmemd_session *s, const struct rpmem_hdr *hd)
{
	struct rpmemd_sessions *set = s->set;
	struct rpmem_msg_status_reply rep;
	int ret;

	if (hd->len != 0)
		return bad_payload(s, hd);
	uint32_t apm = apm_cap(set);
	memset(&rep, 0, sizeof(rep));
	pthread_mutex_lock(&set->lock);
	rpmem_strlcpy(rep.server, set->server, sizeof(rep.server));
	rep.pid = (uint64_t)getpid();
	rep.uptime = (rpmem_now_ns() - set->started_ns) / 1000000000ull;
	rep.caps = set->caps | apm;
	rep.max_sessions = set->max_sessions;
	rep.sessions = calloc(set->count ? set->count : 1,
			      sizeof(*rep.sessions));
	for (struct rpmemd_session *o = set->head; o && rep.sessions;
	     o = o->next) {
		if (!o->established || o->done)
			continue;
		struct rpmem_session_info *si = &rep.sessions[rep.nsessions++];
		si->id = o->id;
		rpmem_strlcpy(si->peer, o->peer, sizeof(si->peer));
		rpmem_strlcpy(si->client, o->client, sizeof(si->client));
		si->xport = o->cur_xport;
		rpmem_strlcpy(si->pool, o->cur_pool, sizeof(si->pool));
		si->mode = o->cur_mode;
		si->started = o->started;
		si->bytes_written =
			__atomic_load_n(&o->bytes_written, __ATOMIC_RELAXED);
		si->bytes_read =
			__atomic_load_n(&o->bytes_read, __ATOMIC_RELAXED);
		si->flushes = __atomic_load_n(&o->flushes, __ATOMIC_RELAXED);
		si->last_flush_ns =
			__atomic_load_n(&o->last_flush_ns, __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&set->lock);
	if (rep.nsessions > 1)
		qsort(rep.sessions, rep.nsessions, sizeof(*rep.sessions),
		      info_cmp);
	uint8_t *buf = out_buf(s);
	if (!rep.sessions || !buf || status_namespaces(set, &rep)) {
		rpmem_status_reply_free(&rep);
		return reply_err(s, hd->id, RPMEM_E_LIMIT, "out of memory");
	}
	int len = rpmem_status_reply_encode(buf, RPMEM_MAX_PAYLOAD, &rep);
	rpmem_status_reply_free(&rep);
	if (len < 0)
		return reply_err(s, hd->id, RPMEM_E_INTERNAL,
				 "cannot encode STATUS_REPLY");
	ret = rpmem_send_frame(s->fd, RPMEM_MSG_STATUS_REPLY, hd->id, buf,
			       (size_t)len, NULL, 0);
	return ret;
}

/* frame_error -- report a frame that cannot be resynchronized */
static int frame_error(struct rpmemd_session *s, const uint8_t *raw, int err)
{
	uint32_t id = le32_get(raw + 8), len = le32_get(raw + 12);
	if (err == -EBADMSG)
		reply_err(s, id, RPMEM_E_PROTO,
			  "bad frame magic 0x%08x; closing the connection",
			  le32_get(raw));
	else
		reply_err(s, id, RPMEM_E_PROTO,
			  "%s frame of %u bytes is longer than %u; closing the connection",
			  rpmem_msg_type_str(le16_get(raw + 4)), len,
			  RPMEM_MAX_PAYLOAD);
	WARN("session %u (%s): %s; connection closed", s->id, s->peer,
	     err == -EBADMSG ? "bad frame magic" : "oversized frame");
	return -EPROTO;
}

/*
 * recv_request -- read one frame header and (except for WRITE) its
 * payload into s->req. Returns 0 with *hd filled, 1 if the frame was
 * answered already and skipped, or -errno to end the session.
 */
static int recv_request(struct rpmemd_session *s, struct rpmem_hdr *hd)
{
	uint8_t raw[RPMEM_HDR_SIZE];
	int ret = rpmem_net_read_full(s->fd, raw, sizeof(raw));
	if (ret)
		return ret;
	ret = rpmem_hdr_decode(raw, hd);
	if (ret == -ENOTSUP) {
		/* known length: drop the payload and carry on */
		uint32_t len = le32_get(raw + 12);
		if (len > RPMEM_MAX_PAYLOAD)
			return frame_error(s, raw, -EMSGSIZE);
		if ((ret = rpmem_net_discard(s->fd, len)))
			return ret;
		ret = reply_err(s, le32_get(raw + 8), RPMEM_E_PROTO,
				"unknown message type %u",
				le16_get(raw + 4));
		return ret ? ret : 1;
	}
	if (ret)
		return frame_error(s, raw, ret);
	if (hd->type == RPMEM_MSG_WRITE)
		return 0;
	if (hd->len > sizeof(s->req)) {
		if ((ret = rpmem_net_discard(s->fd, hd->len)))
			return ret;
		ret = reply_err(s, hd->id, RPMEM_E_PROTO,
				"invalid %s received: %u-byte payload is too long",
				rpmem_msg_type_str(hd->type), hd->len);
		return ret ? ret : 1;
	}
	ret = rpmem_net_read_full(s->fd, s->req, hd->len);
	return ret;
}

/*
 * serve -- the request loop after the handshake. Returns 0 after BYE,
 * -ECONNRESET when the client went away, -ESHUTDOWN when the daemon
 * stops, or another -errno.
 */
static int serve(struct rpmemd_session *s)
{
	struct rpmem_hdr hd;
	for (;;) {
		int ret = recv_request(s, &hd);
		if (ret == 1)
			continue;
		if (ret)
			return ret;
		switch (hd.type) {
		case RPMEM_MSG_WRITE:
			ret = do_write(s, &hd);
			break;
		case RPMEM_MSG_READ:
			ret = do_read(s, &hd);
			break;
		case RPMEM_MSG_FLUSH:
			ret = do_flush(s, &hd);
			break;
		case RPMEM_MSG_HASH:
			ret = do_hash(s, &hd);
			break;
		case RPMEM_MSG_HASHV:
			ret = do_hashv(s, &hd);
			break;
		case RPMEM_MSG_LIST:
			ret = do_list(s, &hd);
			break;
		case RPMEM_MSG_CREATE:
			ret = do_create(s, &hd);
			break;
		case RPMEM_MSG_REMOVE:
			ret = do_remove(s, &hd);
			break;
		case RPMEM_MSG_OPEN:
			ret = do_open(s, &hd);
			break;
		case RPMEM_MSG_CLOSE:
			ret = do_close(s, &hd);
			break;
		case RPMEM_MSG_SET_STATE:
			ret = do_set_state(s, &hd);
			break;
		case RPMEM_MSG_STATUS:
			ret = do_status(s, &hd);
			break;
		case RPMEM_MSG_BYE:
			return 0;
		case RPMEM_MSG_HELLO:
			ret = reply_err(s, hd.id, RPMEM_E_PROTO,
					"HELLO received twice");
			break;
		default:
			ret = reply_err(s, hd.id, RPMEM_E_PROTO,
					"unexpected %s from a client",
					rpmem_msg_type_str(hd.type));
			break;
		}
		if (ret)
			return ret;
		/* stopping: this request is done, take no other */
		if (__atomic_load_n(&s->set->stopping, __ATOMIC_RELAXED))
			return -ESHUTDOWN;
	}
}

/* set_timeout -- SO_RCVTIMEO or SO_SNDTIMEO in seconds (0 = none) */
static void set_timeout(int fd, int opt, int sec)
{
	struct timeval tv = { .tv_sec = sec };
	setsockopt(fd, SOL_SOCKET, opt, &tv, sizeof(tv));
}

/*
 * handshake -- HELLO with a common version, no authentication, a free
 * session slot; replies HELLO_OK. Returns 0 or -errno (session ends).
 */
static int handshake(struct rpmemd_session *s)
{
	struct rpmemd_sessions *set = s->set;
	struct rpmem_msg_hello m;
	struct rpmem_hdr hd;
	uint8_t buf[SMALL_REPLY];
	int ret, len;

	ret = recv_request(s, &hd);
	if (ret == 1)
		return -EPROTO;
	if (ret)
		return ret;
	if (hd.type != RPMEM_MSG_HELLO) {
		reply_err(s, hd.id, RPMEM_E_PROTO,
			  "expected HELLO, got %s; closing the connection",
			  rpmem_msg_type_str(hd.type));
		return -EPROTO;
	}
	if (rpmem_hello_decode(s->req, hd.len, &m)) {
		bad_payload(s, &hd);
		return -EPROTO;
	}
	if (m.ver_min > RPMEM_PROTO_VERSION ||
	    m.ver_max < RPMEM_PROTO_VERSION) {
		reply_err(s, hd.id, RPMEM_E_VERSION,
			  "no common protocol version: the client speaks %u..%u, this target %u",
			  m.ver_min, m.ver_max, RPMEM_PROTO_VERSION);
		return -EPROTONOSUPPORT;
	}
	if (m.auth_method != 0) {
		reply_err(s, hd.id, RPMEM_E_AUTH,
			  "authentication method %u is not supported by this target",
			  m.auth_method);
		return -EACCES;
	}
	sanitize(m.client);
	pthread_mutex_lock(&set->lock);
	if (set->stopping || set->established >= set->max_sessions) {
		int stopping = set->stopping;
		unsigned max = set->max_sessions;
		pthread_mutex_unlock(&set->lock);
		if (stopping)
			reply_err(s, hd.id, RPMEM_E_SHUTDOWN,
				  "the target is shutting down");
		else
			reply_err(s, hd.id, RPMEM_E_LIMIT,
				  "too many sessions (max_sessions = %u); retry later",
				  max);
		return -EUSERS;
	}
	set->established++;
	s->established = 1;
	rpmem_strlcpy(s->client, m.client, sizeof(s->client));
	pthread_mutex_unlock(&set->lock);
	if (m.client[0])
		snprintf(s->holder, sizeof(s->holder), "session %u from %s (%.160s)",
			 s->id, s->peer, m.client);
	else
		snprintf(s->holder, sizeof(s->holder), "session %u from %s",
			 s->id, s->peer);

	struct rpmem_msg_hello_ok rep = { .version = RPMEM_PROTO_VERSION,
					  .session_id = s->id,
					  /* RDMA per session, below */
					  .caps = (set->caps &
						   ~RPMEM_CAP_RDMA) |
						  apm_cap(set) };
	if (s->rdma)
		rep.caps |= RPMEM_CAP_RDMA;
	rpmem_strlcpy(rep.server, set->server, sizeof(rep.server));
	len = rpmem_hello_ok_encode(buf, sizeof(buf), &rep);
	if (len < 0)
		return len;
	INFO("session %u from %s (%s) opened", s->id, s->peer,
	     m.client[0] ? m.client : "unnamed client");
	return rpmem_send_frame(s->fd, RPMEM_MSG_HELLO_OK, hd.id, buf,
				(size_t)len, NULL, 0);
}

/* end_reason -- how a session ended, for the log */
static const char *end_reason(int ret)
{
	switch (ret) {
	case 0:
		return "client said BYE";
	case -ECONNRESET:
		return "connection closed";
	case -ETIMEDOUT:
		return "timed out";
	case -EPROTO:
		return "protocol error";
	case -ESHUTDOWN:
		return "the daemon is stopping";
	default:
		return strerror(-ret);
	}
}

/* session_main -- the session thread */
static void *session_main(void *arg)
{
	struct rpmemd_session *s = arg;
	struct rpmemd_sessions *set = s->set;
	uint64_t one = 1;

	set_timeout(s->fd, SO_RCVTIMEO, RPMEMD_HELLO_TIMEOUT);
	set_timeout(s->fd, SO_SNDTIMEO, RPMEMD_SEND_TIMEOUT);
	int ret = handshake(s);
	if (ret == 0) {
		set_timeout(s->fd, SO_RCVTIMEO, 0);
		ret = serve(s);
	}
	for (unsigned i = 0; i < RPMEMD_MAX_HANDLES; i++)
		if (s->h[i].id)
			handle_close(s, &s->h[i]);
	if (s->established)
		INFO("session %u from %s closed: %s (%llu bytes written, %llu read, %llu flushes)",
		     s->id, s->peer, end_reason(ret),
		     (unsigned long long)s->bytes_written,
		     (unsigned long long)s->bytes_read,
		     (unsigned long long)s->flushes);
	else
		DBG("connection %u from %s closed before the handshake completed: %s",
		    s->id, s->peer, end_reason(ret));

	pthread_mutex_lock(&set->lock);
	if (s->established)
		set->established--;
	s->cur_pool[0] = '\0';
	s->done = 1;
	pthread_mutex_unlock(&set->lock);
	if (write(set->wake_fd, &one, sizeof(one)) < 0)
		WARN("session %u: wake-up: %s", s->id, strerror(errno));
	return NULL;
}

int rpmemd_session_start(struct rpmemd_sessions *set, int fd)
{
	struct rpmemd_session *s;
	int ret;

	pthread_mutex_lock(&set->lock);
	int over = set->count >= set->max_sessions + RPMEMD_THREAD_SLACK;
	uint32_t id = set->next_id++;
	if (set->next_id == 0)
		set->next_id = 1;
	pthread_mutex_unlock(&set->lock);
	if (over) {
		/* a fresh socket's buffer takes this without blocking */
		rpmemd_send_error(fd, 0, RPMEM_E_LIMIT,
				 "too many connections; retry later");
		close(fd);
		return -EUSERS;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		close(fd);
		return -ENOMEM;
	}
	s->set = set;
	s->fd = fd;
	s->id = id;
	s->next_handle = 1;
	s->started = rpmem_wall_sec();
	rpmemd_peer_name(fd, s->peer, sizeof(s->peer));
	local_rdma(s, fd);
	snprintf(s->holder, sizeof(s->holder), "session %u from %s", id,
		 s->peer);

	pthread_mutex_lock(&set->lock);
	ret = -pthread_create(&s->thread, NULL, session_main, s);
	if (ret) {
		pthread_mutex_unlock(&set->lock);
		ERR("connection from %s: cannot start a session thread: %s",
		    s->peer, strerror(-ret));
		close(fd);
		free(s);
		return ret;
	}
	s->next = set->head;
	set->head = s;
	set->count++;
	pthread_mutex_unlock(&set->lock);
	DBG("connection %u from %s accepted", id, s->peer);
	return 0;
}
