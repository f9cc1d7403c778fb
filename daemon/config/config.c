/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * config.c -- parse and validate rpmemd.conf with libconfig (the regions:
 * config_region.c)
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <libconfig.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "config_int.h"
#include "log.h"
#include "net.h"
#include "sock.h"
#include "pmem.h"
#include "tls.h"
#include "util.h"

#define DEFAULT_LISTEN "127.0.0.1"
#define DEFAULT_MAX_SESSIONS 64
#define MAX_SESSIONS_LIMIT 4096
#define DEFAULT_HANDSHAKE_TIMEOUT 10
#define DEFAULT_FRAME_TIMEOUT 60
#define DEFAULT_WRITER_IDLE_TIMEOUT 600
#define DEFAULT_SESSION_IDLE_TIMEOUT 600
#define DEFAULT_READER_IDLE_TIMEOUT 600
#define DEFAULT_ADMIN_RESERVED 2
#define DEFAULT_MAX_UNAUTH 64
#define DEFAULT_MAX_UNAUTH_PER_ADDR 8
#define DEFAULT_EVENT_QUEUE 1024
#define BWLIMIT_MIN 4096 /* bytes per second */

/* addr_valid -- a numeric IPv4/IPv6 address or "localhost" */
static int addr_valid(const char *a)
{
	struct in6_addr a6;
	struct in_addr a4;
	return !strcmp(a, "localhost") || inet_pton(AF_INET, a, &a4) == 1 ||
	       inet_pton(AF_INET6, a, &a6) == 1;
}

/* parse_listen -- listen = "addr" or ["addr", ...] */
static int parse_listen(struct cfg_ctx *c, const config_setting_t *root,
			struct rpmemd_config *cfg)
{
	const config_setting_t *s = config_setting_get_member(root, "listen");
	if (!s) {
		cfg->nlisten = 1;
		rpmem_strlcpy(cfg->listen[0], DEFAULT_LISTEN,
			      sizeof(cfg->listen[0]));
		return 0;
	}
	int t = config_setting_type(s);
	int n = 1;
	if (t == CONFIG_TYPE_LIST || t == CONFIG_TYPE_ARRAY)
		n = config_setting_length(s);
	else if (t != CONFIG_TYPE_STRING)
		return cfg_err(c, s, "listen",
			       "must be a list of addresses, e.g. [\"127.0.0.1\"]");
	if (n == 0)
		return cfg_err(c, s, "listen", "needs at least one address");
	if (n > RPMEMD_MAX_LISTEN)
		return cfg_err(c, s, "listen", "at most %d addresses",
			       RPMEMD_MAX_LISTEN);
	for (int i = 0; i < n; i++) {
		const config_setting_t *e =
			t == CONFIG_TYPE_STRING ? s :
			config_setting_get_elem(s, (unsigned)i);
		char what[RPMEMD_SETTING_MAX];
		snprintf(what, sizeof(what), "listen[%d]", i);
		const char *a = config_setting_get_string(e);
		if (!a)
			return cfg_err(c, e, what, "must be a string");
		if (!addr_valid(a) || strlen(a) >= RPMEMD_ADDR_MAX)
			return cfg_err(c, e, what,
				       "'%s' is not a numeric IPv4/IPv6 address",
				       a);
		for (unsigned j = 0; j < cfg->nlisten; j++)
			if (!strcmp(cfg->listen[j], a))
				return cfg_err(c, e, what,
					       "'%s' is listed twice", a);
		rpmem_strlcpy(cfg->listen[cfg->nlisten++], a,
			      sizeof(cfg->listen[0]));
	}
	return 0;
}

/* parse_log -- log = { level = "info"; target = "stderr" | "syslog"; } */
static int parse_log(struct cfg_ctx *c, const config_setting_t *root,
		     struct rpmemd_config *cfg)
{
	static const char *const known[] = { "level", "target", NULL };
	const config_setting_t *g = config_setting_get_member(root, "log");
	const char *v;
	int ret;
	if (!g)
		return 0;
	if (config_setting_type(g) != CONFIG_TYPE_GROUP)
		return cfg_err(c, g, "log",
			       "must be a group: log = { level = \"info\"; };");
	if ((ret = check_known(c, g, "log.", known)))
		return ret;
	if ((ret = get_str(c, g, "level", "log.level", &v)))
		return ret;
	if (v) {
		int prio = rpmem_log_parse_prio(v);
		if (prio < LOG_ERR)
			return cfg_err(c, config_setting_get_member(g, "level"),
				       "log.level",
				       "'%s' is not one of err, warning, notice, info, debug",
				       v);
		cfg->log_level = prio;
	}
	if ((ret = get_str(c, g, "target", "log.target", &v)))
		return ret;
	if (v) {
		if (!strcmp(v, "stderr"))
			cfg->log_target = RPMEMD_LOG_STDERR;
		else if (!strcmp(v, "syslog"))
			cfg->log_target = RPMEMD_LOG_SYSLOG;
		else
			return cfg_err(c, config_setting_get_member(g, "target"),
				       "log.target",
				       "'%s' is not one of stderr, syslog", v);
	}
	return 0;
}

/* get_path -- an optional absolute path member of group g into out */
static int get_path(struct cfg_ctx *c, const config_setting_t *g,
		    const char *name, const char *what, char *out,
		    size_t len)
{
	static const char cred[] = "$CREDENTIALS_DIRECTORY/";
	const char *v, *dir = getenv("CREDENTIALS_DIRECTORY");
	char buf[RPMEM_STR_MAX + 1];
	int ret = get_str(c, g, name, what, &v);
	if (ret || !v)
		return ret;
	/* systemd's LoadCredential= puts the files there */
	if (!strncmp(v, cred, sizeof(cred) - 1)) {
		if (!dir || !*dir)
			return cfg_err(c, config_setting_get_member(g, name),
				       what,
				       "'%s' names $CREDENTIALS_DIRECTORY, which is not set (LoadCredential= in the unit sets it)",
				       v);
		snprintf(buf, sizeof(buf), "%s/%s", dir, v + sizeof(cred) - 1);
		v = buf;
	}
	if (v[0] != '/')
		return cfg_err(c, config_setting_get_member(g, name), what,
			       "'%s' is not an absolute path", v);
	if (strlen(v) >= len)
		return cfg_err(c, config_setting_get_member(g, name), what,
			       "path too long");
	rpmem_strlcpy(out, v, len);
	return 0;
}

/*
 * tls_file -- get_path of a file of the tls group, which must exist; a
 * secret one (the key, the PSK file) also only for its owner
 * (rpmem_key_file_check): a problem is reported at its setting's line
 */
static int tls_file(struct cfg_ctx *c, const config_setting_t *g,
		    const char *name, char *out, size_t len, int secret)
{
	char what[RPMEMD_SETTING_MAX], why[RPMEM_STR_MAX + 128];
	struct stat st;
	int ret;

	snprintf(what, sizeof(what), "tls.%s", name);
	if ((ret = get_path(c, g, name, what, out, len)) || !out[0])
		return ret;
	if (secret && rpmem_key_file_check(out, why, sizeof(why)))
		return cfg_err(c, config_setting_get_member(g, name), what,
			       "%s", why);
	if (!secret && stat(out, &st))
		return cfg_err(c, config_setting_get_member(g, name), what,
			       "%s: %s", out, strerror(errno));
	return 0;
}

/*
 * parse_tls -- tls = { certificate = "..."; key = "..."; ca = "...";
 * psk_file = "..."; }: X.509 (all three) and/or PSK identities
 */
static int parse_tls(struct cfg_ctx *c, const config_setting_t *root,
		     struct rpmemd_config *cfg)
{
	static const char *const known[] = { "certificate", "key", "ca",
					      "psk_file", NULL };
	const config_setting_t *g = config_setting_get_member(root, "tls");
	struct rpmemd_tls_cfg *t = &cfg->tls;
	int ret;

	if (!g)
		return 0;
	if (config_setting_type(g) != CONFIG_TYPE_GROUP)
		return cfg_err(c, g, "tls", "must be a group");
	if ((ret = check_known(c, g, "tls.", known)) ||
	    (ret = tls_file(c, g, "certificate", t->certificate,
			    sizeof(t->certificate), 0)) ||
	    (ret = tls_file(c, g, "key", t->key, sizeof(t->key), 1)) ||
	    (ret = tls_file(c, g, "ca", t->ca, sizeof(t->ca), 0)) ||
	    (ret = tls_file(c, g, "psk_file", t->psk_file,
			    sizeof(t->psk_file), 1)))
		return ret;
	int x509 = t->certificate[0] || t->key[0] || t->ca[0];
	if (x509 && !(t->certificate[0] && t->key[0] && t->ca[0]))
		return cfg_err(c, g, "tls",
			       "certificates need all of certificate, key and ca (the CA that signs client certificates)");
	if (!x509 && !t->psk_file[0])
		return cfg_err(c, g, "tls",
			       "set certificate, key and ca, or psk_file, or both");
	t->enabled = 1;
	return 0;
}

/*
 * identity_valid -- 1..128 bytes of UTF-8, no control characters
 * (rpmem_utf8_control), not "*"
 */
static int identity_valid(const char *id)
{
	size_t n = strlen(id);
	if (n == 0 || n > RPMEM_IDENTITY_MAX || !strcmp(id, "*"))
		return 0;
	for (; *id; id += n) {
		n = rpmem_utf8_len(id);
		if (!n || rpmem_utf8_control(id))
			return 0;
	}
	return 1;
}

/* str_list -- s is a list or array of strings (NULL: not given) */
static int str_list(struct cfg_ctx *c, const config_setting_t *s,
		    const char *what, int *n)
{
	int t = s ? config_setting_type(s) : CONFIG_TYPE_NONE;
	*n = 0;
	if (!s)
		return 0;
	if (t != CONFIG_TYPE_LIST && t != CONFIG_TYPE_ARRAY)
		return cfg_err(c, s, what,
			       "must be a list of strings, e.g. [ \"read\" ]");
	*n = config_setting_length(s);
	for (int i = 0; i < *n; i++) {
		const config_setting_t *e =
			config_setting_get_elem(s, (unsigned)i);
		if (config_setting_type(e) != CONFIG_TYPE_STRING)
			return cfg_err(c, e, what, "must be a list of strings");
	}
	return 0;
}

/* parse_rights -- rights = [ "read", "write", "admin" ] into *out */
static int parse_rights(struct cfg_ctx *c, const config_setting_t *g,
			const char *pfx, unsigned *out)
{
	const config_setting_t *s = config_setting_get_member(g, "rights");
	char what[RPMEMD_SETTING_MAX];
	int n, ret;

	snprintf(what, sizeof(what), "%srights", pfx);
	if (!s)
		return cfg_err(c, g, what, "missing");
	if ((ret = str_list(c, s, what, &n)))
		return ret;
	if (n == 0)
		return cfg_err(c, s, what,
			       "needs at least one of read, append, write, admin");
	*out = 0;
	for (int i = 0; i < n; i++) {
		const config_setting_t *e =
			config_setting_get_elem(s, (unsigned)i);
		const char *v = config_setting_get_string(e);
		if (!strcmp(v, "read"))
			*out |= RPMEMD_RIGHT_READ;
		else if (!strcmp(v, "write")) /* a writer reads to sync */
			*out |= RPMEMD_RIGHT_WRITE | RPMEMD_RIGHT_READ;
		else if (!strcmp(v, "append")) /* so does an appender */
			*out |= RPMEMD_RIGHT_APPEND | RPMEMD_RIGHT_READ;
		else if (!strcmp(v, "admin"))
			*out |= RPMEMD_RIGHT_ADMIN;
		else
			return cfg_err(c, e, what,
				       "'%s' is not one of read, append, write, admin",
				       v);
	}
	return 0;
}

/* add_rule -- one (identity, region) entry of the access list */
static int add_rule(struct cfg_ctx *c, const config_setting_t *g,
		    struct rpmemd_config *cfg, const char *id,
		    const char *region, unsigned rights)
{
	struct rpmemd_access_rule *v, *r;

	if (cfg->naccess >= RPMEMD_MAX_ACCESS)
		return cfg_err(c, g, "access",
			       "at most %d identity and region pairs",
			       RPMEMD_MAX_ACCESS);
	v = realloc(cfg->access, (cfg->naccess + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	cfg->access = v;
	r = &v[cfg->naccess++];
	memset(r, 0, sizeof(*r));
	rpmem_strlcpy(r->identity, id, sizeof(r->identity));
	rpmem_strlcpy(r->region, region, sizeof(r->region));
	r->rights = rights;
	r->line = config_setting_source_line(g);
	return 0;
}

/*
 * parse_access_rule -- { identity = "..."; regions = [ ... ];
 * rights = [ ... ]; }: read and write name their regions ("*": all);
 * admin is daemon-wide and takes none
 */
static int parse_access_rule(struct cfg_ctx *c, const config_setting_t *g,
			     int idx, struct rpmemd_config *cfg)
{
	static const char *const known[] = { "identity", "regions", "rights",
					     NULL };
	const config_setting_t *rs;
	char pfx[RPMEMD_SETTING_PFX_MAX], what[RPMEMD_SETTING_MAX];
	const char *id;
	unsigned rights = 0;
	int n, ret;

	snprintf(pfx, sizeof(pfx), "access[%d].", idx);
	if (config_setting_type(g) != CONFIG_TYPE_GROUP)
		return cfg_err(c, g, pfx,
			       "must be a group: { identity = \"...\"; regions = [ ... ]; rights = [ ... ]; }");
	if ((ret = check_known(c, g, pfx, known)))
		return ret;
	snprintf(what, sizeof(what), "%sidentity", pfx);
	if ((ret = get_str(c, g, "identity", what, &id)))
		return ret;
	if (!id)
		return cfg_err(c, g, what, "missing");
	if (!identity_valid(id))
		return cfg_err(c, config_setting_get_member(g, "identity"),
			       what,
			       "'%s' is not an identity (1-%d characters, no control characters; a PSK identity or a certificate's name, no wildcard)",
			       id, RPMEM_IDENTITY_MAX);
	if ((ret = parse_rights(c, g, pfx, &rights)))
		return ret;

	snprintf(what, sizeof(what), "%sregions", pfx);
	rs = config_setting_get_member(g, "regions");
	if ((ret = str_list(c, rs, what, &n)))
		return ret;
	if (!(rights & (RPMEMD_RIGHT_READ | RPMEMD_RIGHT_WRITE))) {
		if (rs)
			return cfg_err(c, rs, what,
				       "admin is daemon-wide and takes no regions; give read or write in the same rule, or drop regions");
		return add_rule(c, g, cfg, id, "", rights);
	}
	if (n == 0)
		return cfg_err(c, rs ? rs : g, what,
			       "%s: read and write need the regions they apply to (\"*\" for every region)",
			       rs ? "empty" : "missing");
	for (int i = 0; i < n; i++) {
		const config_setting_t *e =
			config_setting_get_elem(rs, (unsigned)i);
		const char *r = config_setting_get_string(e);
		if (strcmp(r, "*") && !rpmem_name_valid(r))
			return cfg_err(c, e, what,
				       "'%s' is not a region name (1-64 of letters, digits, '.', '_', '-'; not starting with '.') or \"*\"",
				       r);
		if ((ret = add_rule(c, g, cfg, id, r, rights)))
			return ret;
	}
	return 0;
}

/* parse_access -- access = ( { identity = ...; }, ... ) */
static int parse_access(struct cfg_ctx *c, const config_setting_t *root,
			struct rpmemd_config *cfg)
{
	const config_setting_t *s = config_setting_get_member(root, "access");
	if (!s)
		return 0;
	if (config_setting_type(s) != CONFIG_TYPE_LIST)
		return cfg_err(c, s, "access",
			       "must be a list: access = ( { identity = \"...\"; regions = [ \"r1\" ]; rights = [ \"read\" ]; }, ... );");
	cfg->has_access = 1;
	int n = config_setting_length(s);
	for (int i = 0; i < n; i++) {
		int ret = parse_access_rule(
			c, config_setting_get_elem(s, (unsigned)i), i, cfg);
		if (ret)
			return ret;
	}
	return 0;
}

/* parse_auth -- auth = { require_auth = false; } (reserved) */
static int parse_auth(struct cfg_ctx *c, const config_setting_t *root,
		      struct rpmemd_config *cfg)
{
	static const char *const known[] = { "require_auth", NULL };
	const config_setting_t *g = config_setting_get_member(root, "auth");
	int ret;
	if (!g)
		return 0;
	if (config_setting_type(g) != CONFIG_TYPE_GROUP)
		return cfg_err(c, g, "auth", "must be a group");
	if ((ret = check_known(c, g, "auth.", known)))
		return ret;
	if ((ret = get_bool(c, g, "require_auth", "auth.require_auth",
			    &cfg->require_auth)))
		return ret;
	if (cfg->require_auth)
		return cfg_err(c, config_setting_get_member(g, "require_auth"),
			       "auth.require_auth",
			       "not used: clients authenticate through TLS; configure the tls group (rpmemd.conf(5)) and leave this false");
	return 0;
}

/*
 * get_staging_max -- limits.rdma_staging_max: a size string ("512M",
 * "4G") or an integer of bytes; 0 serves no pool through a staging copy
 */
static int get_staging_max(struct cfg_ctx *c, const config_setting_t *g,
			   uint64_t *out)
{
	static const char what[] = "limits.rdma_staging_max";
	const config_setting_t *s =
		config_setting_get_member(g, "rdma_staging_max");
	int t;

	*out = RPMEMD_STAGING_AUTO;
	if (!s)
		return 0;
	t = config_setting_type(s);
	if (t == CONFIG_TYPE_INT || t == CONFIG_TYPE_INT64) {
		long long v = config_setting_get_int64(s);
		if (v < 0)
			return cfg_err(c, s, what,
				       "%lld is negative: a size like \"4G\", or 0 for no staging",
				       v);
		*out = (uint64_t)v;
		return 0;
	}
	if (t != CONFIG_TYPE_STRING ||
	    rpmem_parse_size(config_setting_get_string(s), out) ||
	    *out == RPMEMD_STAGING_AUTO)
		return cfg_err(c, s, what,
			       "must be a size like \"512M\" or \"4G\" (or bytes; 0: no staging)");
	return 0;
}

/*
 * parse_limits -- limits = { handshake_timeout = 10; frame_timeout = 60;
 * writer_idle_timeout = 600; session_idle_timeout = 600;
 * reader_idle_timeout = 600;
 * max_sessions_per_identity = 32; admin_reserved_sessions = 2;
 * max_unauthenticated = 64;
 * max_unauthenticated_per_address = 8; rdma_staging_max = "4G"; } (all
 * optional)
 */
static int parse_limits(struct cfg_ctx *c, const config_setting_t *root,
			struct rpmemd_config *cfg)
{
	static const char *const known[] = {
		"handshake_timeout", "frame_timeout", "writer_idle_timeout",
		"session_idle_timeout", "reader_idle_timeout",
		"max_sessions_per_identity",
		"admin_reserved_sessions", "max_unauthenticated",
		"max_unauthenticated_per_address", "event_queue",
		"rdma_staging_max", NULL
	};
	static const struct {
		const char *name;
		long long min, max, def;
		size_t off;
	} v[] = {
		{ "handshake_timeout", 1, 3600, DEFAULT_HANDSHAKE_TIMEOUT,
		  offsetof(struct rpmemd_limits, handshake_timeout) },
		{ "frame_timeout", 1, 3600, DEFAULT_FRAME_TIMEOUT,
		  offsetof(struct rpmemd_limits, frame_timeout) },
		{ "writer_idle_timeout", 0, 604800, DEFAULT_WRITER_IDLE_TIMEOUT,
		  offsetof(struct rpmemd_limits, writer_idle_timeout) },
		{ "session_idle_timeout", 0, 604800,
		  DEFAULT_SESSION_IDLE_TIMEOUT,
		  offsetof(struct rpmemd_limits, session_idle_timeout) },
		{ "reader_idle_timeout", 0, 604800, DEFAULT_READER_IDLE_TIMEOUT,
		  offsetof(struct rpmemd_limits, reader_idle_timeout) },
		/* absent: 0, half of max_sessions */
		{ "max_sessions_per_identity", 1, MAX_SESSIONS_LIMIT, 0,
		  offsetof(struct rpmemd_limits, max_per_identity) },
		{ "admin_reserved_sessions", 0, MAX_SESSIONS_LIMIT,
		  DEFAULT_ADMIN_RESERVED,
		  offsetof(struct rpmemd_limits, admin_reserved) },
		{ "max_unauthenticated", 1, 65536, DEFAULT_MAX_UNAUTH,
		  offsetof(struct rpmemd_limits, max_unauth) },
		{ "max_unauthenticated_per_address", 1, 65536,
		  DEFAULT_MAX_UNAUTH_PER_ADDR,
		  offsetof(struct rpmemd_limits, max_unauth_per_addr) },
		{ "event_queue", 2, 1 << 20, DEFAULT_EVENT_QUEUE,
		  offsetof(struct rpmemd_limits, event_queue) },
	};
	const config_setting_t *g = config_setting_get_member(root, "limits");
	int ret;

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		*(unsigned *)((char *)&cfg->limits + v[i].off) =
			(unsigned)v[i].def;
	cfg->limits.rdma_staging_max = RPMEMD_STAGING_AUTO;
	if (!g)
		return 0;
	if (config_setting_type(g) != CONFIG_TYPE_GROUP)
		return cfg_err(c, g, "limits", "must be a group");
	if ((ret = check_known(c, g, "limits.", known)))
		return ret;
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		long long x = v[i].def;
		if ((ret = get_int(c, g, v[i].name, v[i].min, v[i].max, &x)))
			return ret;
		*(unsigned *)((char *)&cfg->limits + v[i].off) = (unsigned)x;
	}
	return get_staging_max(c, g, &cfg->limits.rdma_staging_max);
}

/*
 * parse_bwlimit -- bwlimit = 104857600; or "100M" (K, M, G, T: powers of
 * 1024): bytes of WRITE data a second for all sessions together; absent
 * or 0: no limit
 */
static int parse_bwlimit(struct cfg_ctx *c, const config_setting_t *root,
			 struct rpmemd_config *cfg)
{
	const config_setting_t *s = config_setting_get_member(root, "bwlimit");
	uint64_t v = 0;

	cfg->bwlimit = 0;
	if (!s)
		return 0;
	int t = config_setting_type(s);
	if (t == CONFIG_TYPE_INT || t == CONFIG_TYPE_INT64) {
		long long x = config_setting_get_int64(s);
		if (x < 0)
			return cfg_err(c, s, "bwlimit", "must not be negative");
		v = (uint64_t)x;
	} else if (t != CONFIG_TYPE_STRING ||
		   rpmem_parse_size(config_setting_get_string(s), &v)) {
		return cfg_err(c, s, "bwlimit",
			       "must be bytes per second: a number, or a string like \"100M\" (K, M, G, T)");
	}
	if (v && v < BWLIMIT_MIN)
		return cfg_err(c, s, "bwlimit",
			       "%llu bytes per second is below the least, %d (0: no limit)",
			       (unsigned long long)v, BWLIMIT_MIN);
	cfg->bwlimit = v;
	return 0;
}

/*
 * parse_user -- user = "NAME": an existing user, whom rpmemd started as
 * root outside systemd becomes (confine.c: rpmemd_privileges_drop)
 */
static int parse_user(struct cfg_ctx *c, const config_setting_t *root,
		      struct rpmemd_config *cfg)
{
	const char *v;
	int ret;

	if ((ret = get_str(c, root, "user", "user", &v)) || !v)
		return ret;
	const config_setting_t *s = config_setting_get_member(root, "user");
	if (!v[0] || strlen(v) >= sizeof(cfg->user))
		return cfg_err(c, s, "user", "'%s' is not a user name", v);
	if (!getpwnam(v))
		return cfg_err(c, s, "user", "no user '%s' on this system", v);
	rpmem_strlcpy(cfg->user, v, sizeof(cfg->user));
	return 0;
}

/* parse_root -- every top-level setting, then cross-checks */
static int parse_root(struct cfg_ctx *c, const config_setting_t *root,
		      struct rpmemd_config *cfg)
{
	static const char *const known[] = {
		"listen", "port", "log", "max_sessions", "regions",
		"regions_auto", "auth", "allow_insecure_remote", "tls",
		"limits", "access", "bwlimit", "region_check", "user", NULL
	};
	long long v;
	int ret;

	if ((ret = check_known(c, root, "", known)))
		return ret;
	if ((ret = parse_listen(c, root, cfg)))
		return ret;
	v = atoi(RPMEM_DEFAULT_PORT);
	if ((ret = get_int(c, root, "port", 1, 65535, &v)))
		return ret;
	snprintf(cfg->port, sizeof(cfg->port), "%lld", v);
	v = DEFAULT_MAX_SESSIONS;
	if ((ret = get_int(c, root, "max_sessions", 1, MAX_SESSIONS_LIMIT, &v)))
		return ret;
	cfg->max_sessions = (unsigned)v;
	if ((ret = parse_log(c, root, cfg)))
		return ret;
	if ((ret = parse_limits(c, root, cfg)))
		return ret;
	if ((ret = parse_bwlimit(c, root, cfg)))
		return ret;
	if ((ret = get_bool(c, root, "regions_auto", "regions_auto",
			    &cfg->regions_auto)))
		return ret;
	if ((ret = get_bool(c, root, "allow_insecure_remote",
			    "allow_insecure_remote",
			    &cfg->allow_insecure_remote)))
		return ret;
	if ((ret = parse_region_check(c, root, cfg)))
		return ret;
	if ((ret = parse_user(c, root, cfg)))
		return ret;
	if ((ret = parse_auth(c, root, cfg)))
		return ret;
	if ((ret = parse_tls(c, root, cfg)))
		return ret;
	if ((ret = parse_regions(c, root, cfg)))
		return ret;
	if ((ret = parse_access(c, root, cfg)))
		return ret;

	/* a non-loopback listener requires TLS, or the explicit opt-out */
	for (unsigned i = 0; i < cfg->nlisten; i++) {
		if (rpmemd_is_loopback(cfg->listen[i]) || cfg->tls.enabled ||
		    cfg->allow_insecure_remote)
			continue;
		const config_setting_t *s =
			config_setting_get_member(root, "listen");
		return cfg_err(c, s, "listen",
			       "'%s' is not a loopback address: a non-loopback listener requires TLS (a tls group with certificates or a psk_file); set allow_insecure_remote = true only to accept unauthenticated, unencrypted clients on a trusted network",
			       cfg->listen[i]);
	}
	return 0;
}

int rpmemd_config_load_mounts(const char *path, const char *mounts,
			      struct rpmemd_config *out, char *err,
			      size_t errlen)
{
	struct cfg_ctx c = { path, mounts, err, errlen };
	struct rpmemd_config cfg;
	config_t lc;
	int ret;

	if (err && errlen)
		err[0] = '\0';
	memset(&cfg, 0, sizeof(cfg));
	cfg.log_level = LOG_INFO;
	cfg.log_target = RPMEMD_LOG_STDERR;
	if (strlen(path) > RPMEM_STR_MAX)
		return cfg_err(&c, NULL, NULL, "path too long");
	rpmem_strlcpy(cfg.file, path, sizeof(cfg.file));

	/* libconfig does not tell why a file cannot be read: ask first */
	FILE *f = fopen(path, "re");
	if (!f) {
		ret = -errno;
		if (err && errlen)
			snprintf(err, errlen, "%s: %s", path, strerror(-ret));
		return ret;
	}
	fclose(f);

	config_init(&lc);
	if (config_read_file(&lc, path) != CONFIG_TRUE) {
		if (err && errlen)
			snprintf(err, errlen, "%s:%d: %s",
				 config_error_file(&lc) ?
					 config_error_file(&lc) : path,
				 config_error_line(&lc),
				 config_error_text(&lc));
		ret = -EINVAL;
		goto err_destroy;
	}
	ret = parse_root(&c, config_root_setting(&lc), &cfg);
	if (ret == -ENOMEM && err && errlen)
		snprintf(err, errlen, "%s: out of memory", path);
	if (ret)
		goto err_free;
	config_destroy(&lc);
	*out = cfg;
	return 0;

err_free:
	rpmemd_config_free(&cfg);
err_destroy:
	config_destroy(&lc);
	return ret;
}

int rpmemd_config_load(const char *path, struct rpmemd_config *out, char *err,
		       size_t errlen)
{
	return rpmemd_config_load_mounts(path, "/proc/self/mounts", out, err,
					 errlen);
}

void rpmemd_config_free(struct rpmemd_config *cfg)
{
	if (!cfg)
		return;
	free(cfg->regions);
	cfg->regions = NULL;
	cfg->nregions = 0;
	free(cfg->access);
	cfg->access = NULL;
	cfg->naccess = 0;
	cfg->has_access = 0;
}
