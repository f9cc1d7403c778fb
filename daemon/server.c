/* SPDX-License-Identifier: BSD-3-Clause */
/* server.c -- listeners, the main loop, signals, reload and drain */
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <limits.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "access.h"
#include "auth.h"
#include "history.h"
#include "log.h"
#include "meta.h"
#include "scrubd.h"
#include "net.h"
#include "notify.h"
#include "sock.h"
#include "pmem.h"
#include "region.h"
#include "server.h"
#include "session.h"
#include "rdma.h"
#include "util.h"

#ifndef RPMEM_VERSION
#define RPMEM_VERSION "unknown"
#endif

#define DRAIN_GRACE_SEC 10 /* then replies blocked on a slow client break */
#define SOCK_BUF (4 << 20)

struct rpmemd_server {
	struct rpmemd_config cfg;
	int debug;
	struct rpmemd_regions *regions;
	struct rpmemd_sessions *sessions;
	struct rpmemd_auth *auth; /* TLS; fixed until restart */
	struct rpmemd_scrubd *scrubd; /* scrub_interval's thread */
	int lfd[RPMEMD_MAX_LISTEN];
	unsigned nlfd;
};

/* set by the signal handlers, acted upon by the main loop */
static volatile sig_atomic_t got_hup;
static volatile sig_atomic_t got_term;

/* on_signal -- only note which signal arrived */
static void on_signal(int sig)
{
	if (sig == SIGHUP)
		got_hup = 1;
	else
		got_term++;
}

/*
 * catch_signals -- SIGHUP, SIGTERM and SIGINT only set a flag, from
 * before the listeners open: a client (or systemd) that sees the port
 * accept may signal at once, before the main loop runs
 */
static void catch_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
}

void rpmemd_log_setup(const struct rpmemd_config *cfg, int debug)
{
	if (debug) {
		rpmem_log_init("rpmemd", LOG_DEBUG, NULL, NULL);
	} else if (cfg->log_target == RPMEMD_LOG_SYSLOG) {
		openlog("rpmemd", LOG_PID | LOG_NDELAY, LOG_DAEMON);
		rpmem_log_init("rpmemd", cfg->log_level, rpmem_log_syslog,
			       NULL);
	} else {
		rpmem_log_init("rpmemd", cfg->log_level, NULL, NULL);
	}
}

/* addr_port -- "addr:port" or "[v6]:port" for the log */
static const char *addr_port(const char *addr, const char *port, char *buf,
			     size_t len)
{
	if (strchr(addr, ':'))
		snprintf(buf, len, "[%s]:%s", addr, port);
	else
		snprintf(buf, len, "%s:%s", addr, port);
	return buf;
}

/* open_listeners -- a non-blocking listening socket per address */
static int open_listeners(struct rpmemd_server *srv)
{
	char ap[RPMEMD_ADDR_MAX + 16];
	for (unsigned i = 0; i < srv->cfg.nlisten; i++) {
		const char *a = srv->cfg.listen[i];
		int fd, ret = rpmemd_listen(a, srv->cfg.port, &fd);
		if (ret) {
			ERR("cannot listen on %s: %s",
			    addr_port(a, srv->cfg.port, ap, sizeof(ap)),
			    strerror(-ret));
			return ret;
		}
		int fl = fcntl(fd, F_GETFL);
		if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0) {
			ret = -errno;
			ERR("listener %s: fcntl: %s",
			    addr_port(a, srv->cfg.port, ap, sizeof(ap)),
			    strerror(errno));
			close(fd);
			return ret;
		}
		srv->lfd[srv->nlfd++] = fd;
		INFO("listening on %s",
		     addr_port(a, srv->cfg.port, ap, sizeof(ap)));
	}
	return 0;
}

/* rdma_add -- an RDMA listener on the numeric local address addr */
static void rdma_add(struct rpmemd_sessions *set, const char *addr,
		     const char *port)
{
	struct rpmem_rdma_srv *rs;
	int ret;

	for (unsigned i = 0; i < set->nrdma; i++)
		if (!strcmp(set->rdma[i].addr, addr))
			return;
	if (!rpmem_rdma_usable(addr)) {
		INFO("no RDMA device serves %s: tcp only on this address",
		     addr);
		return;
	}
	if (set->nrdma == RPMEMD_MAX_RDMA) {
		WARN("rdma: more than %d addresses; %s is served over tcp only",
		     RPMEMD_MAX_RDMA, addr);
		return;
	}
	ret = rpmem_rdma_srv_new(addr, port, &rs);
	if (ret == -ENODEV) {
		INFO("no RDMA device serves %s: tcp only on this address",
		     addr);
		return;
	}
	if (ret) {
		WARN("rdma: cannot listen on %s port %s: %s; tcp only on this address",
		     addr, port, strerror(-ret));
		return;
	}
	rpmem_strlcpy(set->rdma[set->nrdma].addr, addr,
		      sizeof(set->rdma[0].addr));
	set->rdma[set->nrdma++].srv = rs;
}

/* rdma_add_any -- RDMA listeners on every local address of family af */
static void rdma_add_any(struct rpmemd_sessions *set, int af, const char *port)
{
	struct ifaddrs *ifa, *i;
	char host[NI_MAXHOST];

	if (getifaddrs(&ifa)) {
		WARN("rdma: getifaddrs: %s; no RDMA on the wildcard listener",
		     strerror(errno));
		return;
	}
	for (i = ifa; i; i = i->ifa_next) {
		const struct sockaddr *sa = i->ifa_addr;
		if (!sa || sa->sa_family != af ||
		    (i->ifa_flags & IFF_LOOPBACK) || !(i->ifa_flags & IFF_UP))
			continue;
		if (af == AF_INET6 && IN6_IS_ADDR_LINKLOCAL(
				&((const struct sockaddr_in6 *)sa)->sin6_addr))
			continue;
		if (getnameinfo(sa, af == AF_INET ? sizeof(struct sockaddr_in) :
						    sizeof(struct sockaddr_in6),
				host, sizeof(host), NULL, 0, NI_NUMERICHOST))
			continue;
		rdma_add(set, host, port);
	}
	freeifaddrs(ifa);
}

/* is_any -- the socket address is the wildcard address */
static int is_any(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return ((const struct sockaddr_in *)sa)->sin_addr.s_addr ==
		       htonl(INADDR_ANY);
	if (sa->sa_family == AF_INET6)
		return IN6_IS_ADDR_UNSPECIFIED(
			&((const struct sockaddr_in6 *)sa)->sin6_addr);
	return 0;
}

/*
 * open_rdma -- an RDMA listener (port = control port + 1) for each listen
 * address that an RDMA device serves (every local address for a wildcard
 * one); loopback never has RDMA. Sets RPMEM_CAP_RDMA if there is one.
 * RDMA is optional: whatever fails here is logged and TCP remains.
 */
static void open_rdma(struct rpmemd_server *srv)
{
	struct rpmemd_sessions *set = srv->sessions;
	char port[NI_MAXSERV], host[NI_MAXHOST];
	unsigned long p = strtoul(srv->cfg.port, NULL, 10);

	if (p == 0 || p >= 65535) {
		INFO("rdma: control port %s leaves no port for RDMA; tcp only",
		     srv->cfg.port);
		return;
	}
	snprintf(port, sizeof(port), "%lu", p + 1);
	for (unsigned i = 0; i < srv->cfg.nlisten; i++) {
		const char *a = srv->cfg.listen[i];
		struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
					  .ai_flags = AI_PASSIVE };
		struct addrinfo *res;

		if (rpmemd_is_loopback(a)) {
			DBG("rdma: %s is a loopback address: tcp only", a);
			continue;
		}
		if (getaddrinfo(a, NULL, &hints, &res)) {
			INFO("rdma: cannot resolve %s: tcp only", a);
			continue;
		}
		for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
			if (is_any(ai->ai_addr))
				rdma_add_any(set, ai->ai_family, port);
			else if (!getnameinfo(ai->ai_addr, ai->ai_addrlen, host,
					      sizeof(host), NULL, 0,
					      NI_NUMERICHOST))
				rdma_add(set, host, port);
		}
		freeaddrinfo(res);
	}
	if (set->nrdma)
		set->caps |= RPMEM_CAP_RDMA;
	INFO("rdma: %u RDMA listener(s)", set->nrdma);
}

/* close_rdma -- stop the RDMA listeners; every pool is unexposed */
static void close_rdma(struct rpmemd_sessions *set)
{
	for (unsigned i = 0; i < set->nrdma; i++)
		rpmem_rdma_srv_delete(&set->rdma[i].srv);
	set->nrdma = 0;
	set->caps &= ~RPMEM_CAP_RDMA;
}

/* close_listeners -- stop accepting connections */
static void close_listeners(struct rpmemd_server *srv)
{
	for (unsigned i = 0; i < srv->nlfd; i++)
		close(srv->lfd[i]);
	srv->nlfd = 0;
}

/*
 * discover_pmem -- find the PMem namespaces now and publish them for
 * STATUS; with regions_auto, the ones usable as regions (devdax devices,
 * fsdax namespaces mounted with DAX) that are not configured explicitly
 * join cfg's regions. A failed discovery is logged (the listed regions
 * are served anyway) and publishes no namespaces.
 */
static void discover_pmem(struct rpmemd_config *cfg)
{
	struct rpmemd_region_cfg *v = NULL;
	struct rpmemd_pmem_ns *ns = NULL;
	size_t nns = 0, nv = 0;
	int ret;

	ret = rpmemd_pmem_discover(&ns, &nns);
	if (ret < 0 && !cfg->regions_auto)
		WARN("PMem discovery failed: %s; status shows no namespaces",
		     strerror(-ret));
	if (!cfg->regions_auto)
		goto out;
	if (!ret)
		ret = rpmemd_pmem_auto_regions(ns, nns, &v, &nv);
	if (!ret)
		ret = rpmemd_config_add_regions(cfg, v, nv);
	if (ret < 0)
		ERR("regions_auto: PMem discovery failed: %s; only the regions listed are served",
		    strerror(-ret));
	else
		INFO("regions_auto: %zu namespace(s), %zu usable, %d region(s) added",
		     nns, nv, ret);
	free(v);
out:
	rpmemd_pmem_publish(&ns, nns);
}

int rpmemd_server_new(struct rpmemd_config *cfg, int debug,
		      struct rpmemd_server **out)
{
	char host[HOST_NAME_MAX + 1] = "localhost", server[RPMEM_STR_MAX + 1];
	char err[RPMEM_MSG_MAX];
	struct rpmemd_server *srv = calloc(1, sizeof(*srv));
	struct rpmemd_access *acc = NULL;
	int ret;

	if (!srv)
		return -ENOMEM;
	srv->cfg = *cfg;
	memset(cfg, 0, sizeof(*cfg));
	srv->debug = debug;
	gethostname(host, sizeof(host) - 1);
	snprintf(server, sizeof(server), "rpmemd %s %.200s", RPMEM_VERSION,
		 host);

	INFO("rpmemd %s starting (pid %d, configuration %s)", RPMEM_VERSION,
	     (int)getpid(), srv->cfg.file);
	catch_signals();
	if ((ret = rpmemd_auth_new(&srv->cfg, &srv->auth, err, sizeof(err)))) {
		ERR("%s: %s", srv->cfg.file, err);
		goto err_free;
	}
	if (srv->auth->tls)
		INFO("tls: required on every connection (%s%s%s)",
		     srv->cfg.tls.certificate[0] ? "certificates" : "",
		     srv->cfg.tls.certificate[0] && srv->auth->npsk ? ", " : "",
		     srv->auth->npsk ? "PSK identities" : "");
	else if (srv->cfg.allow_insecure_remote)
		WARN("allow_insecure_remote = true: clients are neither authenticated nor encrypted; anyone who reaches the port can read, write and remove every pool");
	rpmemd_history_init(); /* before a pool opens (history.h) */
	if ((ret = rpmemd_regions_new(&srv->regions)))
		goto err_free;
	discover_pmem(&srv->cfg);
	rpmemd_region_check_set(srv->cfg.region_check_warn);
	if ((ret = rpmemd_regions_apply(srv->regions, &srv->cfg, err,
					sizeof(err)))) {
		ERR("%s", err);
		goto err_regions;
	}
	if (srv->regions->n == 0)
		WARN("no regions %s: clients can only list and query status",
		     srv->cfg.nregions ? "could be opened" : "configured");
	if ((ret = rpmemd_sessions_new(srv->regions, srv->cfg.max_sessions,
				       server, &srv->sessions)))
		goto err_regions;
	srv->sessions->tls = srv->auth->tls;
	rpmemd_sessions_set_limits(srv->sessions, &srv->cfg.limits);
	rpmemd_pacer_set_rate(&srv->sessions->pacer, srv->cfg.bwlimit);
	if ((ret = rpmemd_access_new(&srv->cfg, &acc)))
		goto err_sessions;
	rpmemd_sessions_set_access(srv->sessions, &acc);
	rpmemd_access_warn(&srv->cfg);
	if ((ret = open_listeners(srv)))
		goto err_sessions;
	if ((ret = rpmemd_scrubd_start(srv->sessions, &srv->scrubd)))
		goto err_sessions;
	open_rdma(srv);
	*out = srv;
	return 0;

err_sessions:
	close_listeners(srv);
	rpmemd_sessions_delete(&srv->sessions);
err_regions:
	rpmemd_regions_delete(&srv->regions);
err_free:
	rpmemd_auth_delete(&srv->auth);
	rpmemd_pmem_publish(NULL, 0);
	rpmemd_config_free(&srv->cfg);
	free(srv);
	return ret;
}

void rpmemd_server_delete(struct rpmemd_server **psrv)
{
	struct rpmemd_server *srv = psrv ? *psrv : NULL;
	if (!srv)
		return;
	close_listeners(srv);
	rpmemd_scrubd_stop(&srv->scrubd);
	close_rdma(srv->sessions);
	rpmemd_sessions_delete(&srv->sessions);
	rpmemd_regions_delete(&srv->regions);
	rpmemd_auth_delete(&srv->auth);
	rpmemd_pmem_publish(NULL, 0);
	rpmemd_config_free(&srv->cfg);
	free(srv);
	*psrv = NULL;
}

/*
 * reload -- SIGHUP: read the configuration again. Regions are reconciled
 * (added ones opened, removed ones closed once unused), the log level
 * max_sessions and limits applied; a bad configuration is logged and the old
 * one kept. Listeners and the log target change only with a restart.
 */
static void reload(struct rpmemd_server *srv)
{
	struct rpmemd_access *acc = NULL;
	struct rpmemd_config nc;
	char err[RPMEM_MSG_MAX];
	int ret;

	INFO("SIGHUP: reloading %s", srv->cfg.file);
	ret = rpmemd_config_load(srv->cfg.file, &nc, err, sizeof(err));
	if (ret) {
		ERR("reload failed, keeping the running configuration: %s",
		    err);
		return;
	}
	discover_pmem(&nc);
	if (rpmemd_access_new(&nc, &acc)) {
		ERR("reload failed, keeping the running configuration: out of memory");
		rpmemd_config_free(&nc);
		return;
	}
	rpmemd_region_check_set(nc.region_check_warn);
	ret = rpmemd_regions_apply(srv->regions, &nc, err, sizeof(err));
	if (ret) {
		rpmemd_region_check_set(srv->cfg.region_check_warn);
		ERR("reload failed, keeping the running configuration: %s",
		    err);
		rpmemd_access_delete(&acc);
		rpmemd_config_free(&nc);
		return;
	}
	/* rights are checked per request: the next one sees these */
	rpmemd_sessions_set_access(srv->sessions, &acc);
	int relisten = nc.nlisten != srv->cfg.nlisten ||
		       strcmp(nc.port, srv->cfg.port);
	for (unsigned i = 0; i < nc.nlisten && !relisten; i++)
		relisten = strcmp(nc.listen[i], srv->cfg.listen[i]) != 0;
	if (relisten)
		WARN("reload: listen and port changes take effect at the next restart");
	if (!rpmemd_auth_same(srv->auth, &nc))
		WARN("reload: tls changes take effect at the next restart");
	if (nc.log_target != srv->cfg.log_target && !srv->debug)
		WARN("reload: log.target changes take effect at the next restart");
	if (nc.log_level != srv->cfg.log_level && !srv->debug &&
	    !getenv("RPMEM_LOG_LEVEL")) {
		rpmem_log_set_prio(nc.log_level);
		INFO("reload: log level is now %d", nc.log_level);
	}
	if (nc.max_sessions != srv->cfg.max_sessions) {
		rpmemd_sessions_set_max(srv->sessions, nc.max_sessions);
		INFO("reload: max_sessions is now %u", nc.max_sessions);
	}
	if (memcmp(&nc.limits, &srv->cfg.limits, sizeof(nc.limits))) {
		rpmemd_sessions_set_limits(srv->sessions, &nc.limits);
		INFO("reload: new limits apply to connections accepted from now on");
	}
	if (nc.bwlimit != srv->cfg.bwlimit) {
		rpmemd_pacer_set_rate(&srv->sessions->pacer, nc.bwlimit);
		INFO("reload: bwlimit is now %llu bytes per second%s",
		     (unsigned long long)nc.bwlimit,
		     nc.bwlimit ? "" : " (no limit)");
	}
	/* the listeners keep running on the old addresses */
	memcpy(nc.listen, srv->cfg.listen, sizeof(nc.listen));
	nc.nlisten = srv->cfg.nlisten;
	memcpy(nc.port, srv->cfg.port, sizeof(nc.port));
	nc.log_target = srv->cfg.log_target;
	nc.tls = srv->cfg.tls;
	nc.allow_insecure_remote = srv->cfg.allow_insecure_remote;
	rpmemd_config_free(&srv->cfg);
	srv->cfg = nc;
	rpmemd_access_warn(&srv->cfg);
	INFO("reload done: %u region(s), %u access rule entries",
	     srv->regions->n, srv->cfg.naccess);
}

/*
 * A client that vanished (host down, link cut for good) must not hold its
 * pools until the kernel's default keepalive (first probe after 2 h):
 * probe an idle connection after KEEP_IDLE_S, every KEEP_INTVL_S, and drop
 * it after KEEP_CNT unanswered probes; unacknowledged data (a reply the
 * peer never ACKs) gives up after USER_TIMEOUT_MS. A live but idle client
 * answers probes from its kernel and is never dropped.
 */
#define KEEP_IDLE_S 30
#define KEEP_INTVL_S 10
#define KEEP_CNT 3
#define USER_TIMEOUT_MS 60000u

/* tune -- socket options of an accepted connection */
static void tune(int fd)
{
	int one = 1, sz = SOCK_BUF, idle = KEEP_IDLE_S, intvl = KEEP_INTVL_S;
	int cnt = KEEP_CNT;
	unsigned uto = USER_TIMEOUT_MS;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	if (setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one)) ||
	    setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle)) ||
	    setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl,
		       sizeof(intvl)) ||
	    setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt)) ||
	    setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &uto, sizeof(uto)))
		WARN("keepalive on a client connection: %s", strerror(errno));
}

/*
 * accept_all -- accept what is pending on listener lfd. Returns 1 if
 * the process ran out of descriptors (the caller pauses accepting).
 */
static int accept_all(struct rpmemd_server *srv, int lfd)
{
	for (unsigned n = 1;; n++) {
		/*
		 * a flood keeps this loop busy: join the threads of the
		 * connections it got closed as it goes, or their count
		 * alone would refuse honest clients
		 */
		if (n % 16 == 0)
			rpmemd_sessions_reap(srv->sessions);
		int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 0;
			ERR("accept: %s", strerror(errno));
			return errno == EMFILE || errno == ENFILE ||
			       errno == ENOBUFS || errno == ENOMEM;
		}
		tune(fd);
		rpmemd_session_start(srv->sessions, fd);
	}
}

/* how often the main loop runs the handshake deadline's backstop */
#define EXPIRE_MS 250

/*
 * expire -- rpmemd_sessions_expire at most every EXPIRE_MS (*next: when
 * next); whether the loop must come back within EXPIRE_MS (a connection
 * may still await its handshake)
 */
static int expire(struct rpmemd_server *srv, uint64_t *next)
{
	uint64_t now = rpmem_now_ns();
	if (now < *next)
		return 1;
	*next = now + EXPIRE_MS * 1000000ull;
	return rpmemd_sessions_expire(srv->sessions, now) > 0;
}

/* drain -- SIGTERM: let sessions end after their current request */
static void drain(struct rpmemd_server *srv, const sigset_t *mask)
{
	unsigned left = rpmemd_sessions_count(srv->sessions);
	time_t start = time(NULL);
	int hard = 0;

	INFO("stopping: %u session(s) to close", left);
	rpmemd_notify_stopping(srv->sessions);
	close_listeners(srv);
	rpmemd_sessions_shutdown(srv->sessions, SHUT_RD);
	while ((left = rpmemd_sessions_reap(srv->sessions)) > 0) {
		if (!hard && (got_term > 1 ||
			      time(NULL) - start >= DRAIN_GRACE_SEC)) {
			WARN("stopping: %u session(s) still busy; breaking their connections",
			     left);
			rpmemd_sessions_shutdown(srv->sessions, SHUT_RDWR);
			hard = 1;
		}
		struct pollfd pfd = { .fd = srv->sessions->wake_fd,
				      .events = POLLIN };
		struct timespec ts = { .tv_sec = 1 };
		ppoll(&pfd, 1, &ts, mask);
		rpmemd_notify_tick(srv->sessions);
	}
}

int rpmemd_server_run(struct rpmemd_server *srv)
{
	sigset_t block, orig;

	/*
	 * The signals stay blocked except inside ppoll() of the main
	 * thread; session threads inherit the blocked mask.
	 */
	sigemptyset(&block);
	sigaddset(&block, SIGHUP);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGINT);
	pthread_sigmask(SIG_BLOCK, &block, &orig);
	sigdelset(&orig, SIGHUP);
	sigdelset(&orig, SIGTERM);
	sigdelset(&orig, SIGINT);

	INFO("ready: %u region(s), max_sessions %u", srv->regions->n,
	     srv->cfg.max_sessions);
	rpmemd_notify_init();
	rpmemd_notify_ready(srv->sessions);
	int paused = 0, waiting = 0;
	uint64_t next_expire = 0;
	while (!got_term) {
		struct pollfd pfd[RPMEMD_MAX_LISTEN + 1];
		nfds_t n = 0;
		pfd[n++] = (struct pollfd){ .fd = srv->sessions->wake_fd,
					    .events = POLLIN };
		for (unsigned i = 0; i < srv->nlfd && !paused; i++)
			pfd[n++] = (struct pollfd){ .fd = srv->lfd[i],
						    .events = POLLIN };
		/* systemd's next notification; out of descriptors: retry
		 * accepting in 100 ms; handshakes pending: the backstop */
		long ms = rpmemd_notify_due_ms();
		if (paused && (ms < 0 || ms > 100))
			ms = 100;
		if (waiting && (ms < 0 || ms > EXPIRE_MS))
			ms = EXPIRE_MS;
		struct timespec ts = { .tv_sec = ms / 1000,
				       .tv_nsec = ms % 1000 * 1000000 };
		int ret = ppoll(pfd, n, ms < 0 ? NULL : &ts, &orig);
		if (ret < 0 && errno != EINTR) {
			ERR("ppoll: %s", strerror(errno));
			break;
		}
		paused = 0;
		/* the watchdog, and STATUS= when the counts changed */
		rpmemd_notify_tick(srv->sessions);
		if (got_term)
			break;
		if (got_hup) {
			got_hup = 0;
			rpmemd_notify_reloading();
			reload(srv);
			rpmemd_notify_ready(srv->sessions);
		}
		if (ret > 0 && pfd[0].revents)
			rpmemd_sessions_reap(srv->sessions);
		for (nfds_t i = 1; ret > 0 && i < n; i++)
			if (pfd[i].revents & POLLIN)
				paused |= accept_all(srv, pfd[i].fd);
		waiting = expire(srv, &next_expire);
	}
	drain(srv, &orig);
	INFO("stopped");
	return 0;
}
