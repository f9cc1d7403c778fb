/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdma_common.c -- what both RDMA halves use: librpma logging, errors, the
 * OPEN_OK blob
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>
#include <librpma.h>

#include "log.h"
#include "util.h"
#include "wire.h"
#include "rdma.h"
#include "rdma_int.h"
#include "tls.h"

/* --- logging ------------------------------------------------------------ */

static pthread_once_t rdma_log_once = PTHREAD_ONCE_INIT;
/* the last message librpma logged in this thread, for our error messages */
__thread char rdma_last[RDMA_LAST_MAX];
__thread const struct rpmem_log_sink *rdma_sink;
__thread int rdma_last_errno;

/* the first error logged since the last rdma_take_err, in this thread */
static __thread char rdma_pending[RDMA_MSG_MAX];

void rdma_err(const char *fmt, ...)
{
	char msg[sizeof(rdma_pending)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	rpmem_log_to(rdma_sink, LOG_ERR, "%s", msg);
	/* the caller names the transport itself: keep the text without it */
	if (!rdma_pending[0])
		rpmem_strlcpy(rdma_pending,
			      strncmp(msg, "rdma: ", 6) ? msg : msg + 6,
			      sizeof(rdma_pending));
}

void rdma_take_err(char *buf, size_t len)
{
	if (buf && len)
		rpmem_strlcpy(buf, rdma_pending, len);
	rdma_pending[0] = '\0';
}

/* rdma_log_fn -- librpma's messages go to our log (debug level) */
__attribute__((format(printf, 5, 6))) static void
rdma_log_fn(enum rpma_log_level level, const char *file, const int line,
	    const char *func, const char *fmt, ...)
{
	char msg[RDMA_MSG_MAX];
	va_list ap;
	int saved = errno;

	(void)file, (void)line;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	msg[strcspn(msg, "\n")] = '\0';
	if (level <= RPMA_LOG_LEVEL_WARNING) {
		rpmem_strlcpy(rdma_last, msg, sizeof(rdma_last));
		rdma_last_errno = saved;
	}
	rpmem_log_to(rdma_sink, LOG_DEBUG, "librpma: %s%s%s", func ? func : "",
		     func ? ": " : "", msg);
	errno = saved;
}

/* rdma_log_setup -- route librpma's log through ours, once per process */
static void rdma_log_setup(void)
{
	enum rpma_log_level lvl = RPMA_LOG_LEVEL_WARNING;

	if (rpmem_log_get_prio() >= LOG_DEBUG)
		lvl = RPMA_LOG_LEVEL_NOTICE;
	(void)rpma_log_set_function(rdma_log_fn);
	(void)rpma_log_set_threshold(RPMA_LOG_THRESHOLD, lvl);
	(void)rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX, RPMA_LOG_DISABLED);
}

void rdma_init(void)
{
	(void)pthread_once(&rdma_log_once, rdma_log_setup);
	rdma_last[0] = '\0';
	rdma_last_errno = 0;
	rdma_pending[0] = '\0';
}

/* rdma_fail -- log a failing librpma call with its name and the detail */
void rdma_fail(const char *what, int ret)
{
	if (rdma_last[0])
		rdma_err("%s: %s (%s)", what, rpma_err_2str(ret), rdma_last);
	else
		rdma_err("%s: %s", what, rpma_err_2str(ret));
	rdma_last[0] = '\0';
}

/* rdma_errno -- a librpma error code as -errno */
int rdma_errno(int ret)
{
	switch (ret) {
	case 0:
		return 0;
	case RPMA_E_NOMEM:
		return -ENOMEM;
	case RPMA_E_INVAL:
		return -EINVAL;
	case RPMA_E_NOSUPP:
		return -ENOTSUP;
	case RPMA_E_AGAIN:
		return -EAGAIN;
	default:
		return -EIO;
	}
}

/*
 * rdma_memlock_limited -- 1 if a failed registration looks like the
 * RLIMIT_MEMLOCK limit (pinning refused with ENOMEM/EPERM/EAGAIN while a
 * finite limit is set); fills the limit
 */
int rdma_memlock_limited(int saved_errno, unsigned long long *lim)
{
	int e = saved_errno ? saved_errno : rdma_last_errno;

	if (!rpmem_memlock_limit(lim))
		return 0;
	if (e == ENOMEM || e == EPERM || e == EAGAIN)
		return 1;
	return strstr(rdma_last, "Cannot allocate memory") ||
	       strstr(rdma_last, "Operation not permitted");
}

/* rdma_reg_failed -- log a failed rpma_mr_reg, with the memlock advice */
int rdma_reg_failed(const char *what, size_t len, int ret,
			   int saved_errno)
{
	unsigned long long lim;
	char sz[RPMEM_SIZE_STR];

	if (rdma_memlock_limited(saved_errno, &lim)) {
		rdma_err("%s: cannot register %s for RDMA: %s (%s); this process's locked-memory limit is %llu bytes: raise RLIMIT_MEMLOCK (ulimit -l, or LimitMEMLOCK=infinity in the systemd unit that runs it: rpmemd.service on a target)",
			 what, rpmem_fmt_size(len, sz, sizeof(sz)),
			 rpma_err_2str(ret),
			 rdma_last[0] ? rdma_last : "no detail", lim);
		rdma_last[0] = '\0';
		return -ENOMEM;
	}
	rdma_fail(what, ret);
	return rdma_errno(ret);
}

/* rdma_env_uint -- an unsigned environment setting within [lo, hi] */
unsigned rdma_env_uint(const char *name, unsigned def, unsigned lo,
			      unsigned hi)
{
	const char *s = getenv(name);
	char *end;
	unsigned long v;

	if (!s || !*s)
		return def;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v < lo || v > hi) {
		WARN("rdma: ignoring %s=%s (expected %u..%u)", name, s, lo, hi);
		return def;
	}
	return (unsigned)v;
}

/* rdma_poll1 -- poll one fd for input; 1 ready, 0 timeout, -errno */
int rdma_poll1(int fd, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int r;

	do
		r = poll(&p, 1, timeout_ms);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return -errno;
	return r > 0;
}

/*
 * rdma_wait_closed -- after rpma_conn_disconnect, consume connection
 * events until CLOSED/LOST or the timeout
 */
void rdma_wait_closed(struct rpma_conn *conn, int ev_fd)
{
	uint64_t end = rpmem_now_ns() + RDMA_CLOSE_TIMEOUT_MS * 1000000ull;
	enum rpma_conn_event ev;

	for (;;) {
		uint64_t now = rpmem_now_ns();
		int r;

		if (now >= end) {
			rpmem_log_to(rdma_sink, LOG_DEBUG,
				     "rdma: no CLOSED event within %d ms",
				     RDMA_CLOSE_TIMEOUT_MS);
			return;
		}
		r = rdma_poll1(ev_fd, (int)((end - now) / 1000000 + 1));
		if (r < 0)
			return;
		if (!r)
			continue;
		r = rpma_conn_next_event(conn, &ev);
		if (r == RPMA_E_NO_EVENT || r == RPMA_E_UNKNOWN)
			continue;
		if (r || ev == RPMA_CONN_CLOSED || ev == RPMA_CONN_LOST)
			return;
	}
}

/* --- blob ----------------------------------------------------------------- */

/* rdma_blob_encode -- the blob for OPEN_OK into buf[cap] */
int rdma_blob_encode(const struct rdma_blob *b, void *buf, size_t cap,
			    size_t *len)
{
	struct wbuf w;

	if (b->version != RDMA_BLOB_VERSION &&
	    b->version != RDMA_BLOB_VERSION_TLS)
		return -EINVAL;
	wbuf_init(&w, buf, cap);
	wbuf_u16(&w, (uint16_t)b->version);
	wbuf_u8(&w, (uint8_t)b->mode);
	wbuf_u8(&w, (uint8_t)b->flags);
	wbuf_str(&w, b->port, RDMA_PORT_MAX);
	wbuf_bytes(&w, b->token, RPMEM_TOKEN_LEN);
	wbuf_u64(&w, b->size);
	wbuf_u16(&w, b->desc_len);
	wbuf_bytes(&w, b->desc, b->desc_len);
	if (w.err)
		return -ENOBUFS;
	*len = w.len;
	return 0;
}

/* rdma_blob_decode -- parse and validate a blob from the wire */
int rdma_blob_decode(const void *buf, size_t len, uint64_t pool_size,
			    struct rdma_blob *b)
{
	struct rbuf r;
	uint16_t ver;

	rbuf_init(&r, buf, len);
	ver = rbuf_u16(&r);
	if (r.err || (ver != RDMA_BLOB_VERSION &&
		      ver != RDMA_BLOB_VERSION_TLS)) {
		rdma_err("rdma: transport parameters of version %u, expected %u or %u",
			 ver, RDMA_BLOB_VERSION, RDMA_BLOB_VERSION_TLS);
		return -EPROTO;
	}
	b->version = ver;
	b->mode = rbuf_u8(&r);
	b->flags = rbuf_u8(&r);
	rbuf_str(&r, b->port, sizeof(b->port));
	rbuf_bytes(&r, b->token, RPMEM_TOKEN_LEN);
	b->size = rbuf_u64(&r);
	b->desc_len = rbuf_u16(&r);
	if (!r.err && b->desc_len > RDMA_DESC_MAX) {
		rdma_err("rdma: invalid transport parameters: descriptor of %u bytes (at most %u)",
			 b->desc_len, RDMA_DESC_MAX);
		return -EPROTO;
	}
	rbuf_bytes(&r, b->desc, b->desc_len);
	if (r.err || rbuf_left(&r)) {
		rdma_err("rdma: invalid transport parameters (%zu bytes, %s)", len,
			 r.err ? "truncated" : "trailing bytes");
		return -EPROTO;
	}
	if (b->mode != RDMA_MODE_GPSPM && b->mode != RDMA_MODE_APM) {
		rdma_err("rdma: unknown persistence mode %u", b->mode);
		return -EPROTO;
	}
	if (!b->port[0] || strspn(b->port, "0123456789") != strlen(b->port)) {
		rdma_err("rdma: invalid RDMA port '%s' in the transport parameters",
			 b->port);
		return -EPROTO;
	}
	if (b->size != pool_size) {
		rdma_err("rdma: the target exposes %" PRIu64 " bytes, the pool has %" PRIu64,
			 b->size, pool_size);
		return -EPROTO;
	}
	return 0;
}

/* rdma_token_bind -- a v2 token from the TLS session and the blob's nonce */
int rdma_token_bind(struct rpmem_tls *tls, const uint8_t *nonce,
		    uint8_t *token)
{
	int ret = rpmem_tls_export(tls, RDMA_TOKEN_LABEL, nonce,
				   RPMEM_TOKEN_LEN, token, RPMEM_TOKEN_LEN);

	if (ret)
		rdma_err("rdma: cannot derive the session token from the TLS session: %s",
			 strerror(-ret));
	return ret;
}

/* rpmem_rdma_usable -- 1 if an RDMA device serves the local address addr */
int rpmem_rdma_usable(const char *addr)
{
	struct ibv_context *ibv = NULL;
	int ret;

	if (!addr || !*addr)
		return 0;
	rdma_init();
	ret = rpma_utils_get_ibv_context(addr, RPMA_UTIL_IBV_CONTEXT_LOCAL,
					 &ibv);
	rdma_last[0] = '\0';
	return ret == 0;
}
