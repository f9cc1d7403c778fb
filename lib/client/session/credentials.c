/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * credentials.c -- how an initiator authenticates to a target: the
 * session configuration object, the client configuration files
 * (rpmemctl.conf), and the TLS context built from them
 */
#include <errno.h>
#include <libconfig.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "client_session.h"
#include "log.h"
#include "tls.h"
#include "util.h"

#ifndef RPMEM_SYSCONFDIR
#define RPMEM_SYSCONFDIR "/etc"
#endif
#define CLIENT_CONF_SYSTEM RPMEM_SYSCONFDIR "/rpmem/rpmemctl.conf"
#define CLIENT_CONF_USER "rpmem/rpmemctl.conf" /* under XDG_CONFIG_HOME */

/* set_str -- replace *dst with a copy of src (NULL clears) */
static int set_str(char **dst, const char *src)
{
	char *c = NULL;
	if (src && !(c = strdup(src)))
		return -ENOMEM;
	free(*dst);
	*dst = c;
	return 0;
}

RPMEM_EXPORT int rpmemctl_session_cfg_new(struct rpmemctl_session_cfg **out)
{
	client_api_begin();
	struct rpmemctl_session_cfg *c = out ? calloc(1, sizeof(*c)) : NULL;
	if (!c)
		return client_api_end(out ? -ENOMEM : -EINVAL, __func__);
	*out = c;
	return 0;
}

RPMEM_EXPORT void rpmemctl_session_cfg_delete(struct rpmemctl_session_cfg **pc)
{
	struct rpmemctl_session_cfg *c = pc ? *pc : NULL;
	if (!c)
		return;
	free(c->ca);
	free(c->cert);
	free(c->key);
	free(c->psk_file);
	free(c->psk_identity);
	free(c->tls_name);
	free(c->source);
	free(c);
	*pc = NULL;
}

RPMEM_EXPORT int rpmemctl_session_cfg_set_tls_ca(struct rpmemctl_session_cfg *c,
						 const char *ca_file)
{
	client_api_begin();
	if (!c)
		return client_api_end(-EINVAL, __func__);
	int ret = set_str(&c->ca, ca_file && *ca_file ? ca_file : NULL);
	return client_api_end(ret, __func__);
}

RPMEM_EXPORT int
rpmemctl_session_cfg_set_tls_cert(struct rpmemctl_session_cfg *c,
				  const char *cert_file, const char *key_file)
{
	client_api_begin();
	if (!c || !cert_file != !key_file)
		return client_api_end(-EINVAL, __func__);
	int ret = set_str(&c->cert, cert_file);
	return client_api_end(ret ? ret : set_str(&c->key, key_file), __func__);
}

RPMEM_EXPORT int
rpmemctl_session_cfg_set_psk_file(struct rpmemctl_session_cfg *c,
				  const char *psk_file, const char *identity)
{
	client_api_begin();
	if (!c || (identity && *identity && !rpmem_psk_valid_identity(identity)))
		return client_api_end(-EINVAL, __func__);
	int ret = set_str(&c->psk_file, psk_file && *psk_file ? psk_file :
								  NULL);
	if (!ret)
		ret = set_str(&c->psk_identity,
			      identity && *identity ? identity : NULL);
	return client_api_end(ret, __func__);
}

RPMEM_EXPORT int
rpmemctl_session_cfg_set_tls_name(struct rpmemctl_session_cfg *c,
				  const char *name)
{
	client_api_begin();
	if (!c || (name && strlen(name) > 253))
		return client_api_end(-EINVAL, __func__);
	int ret = set_str(&c->tls_name, name && *name ? name : NULL);
	return client_api_end(ret, __func__);
}

RPMEM_EXPORT int
rpmemctl_session_cfg_set_plaintext(struct rpmemctl_session_cfg *c, int allow)
{
	client_api_begin();
	if (!c)
		return client_api_end(-EINVAL, __func__);
	c->plaintext = !!allow;
	return 0;
}

/* expand -- "~/x" as $HOME/x into buf; other paths as they are */
static const char *expand(const char *p, char *buf, size_t len)
{
	const char *home = secure_getenv("HOME");
	if (p[0] != '~' || p[1] != '/' || !home)
		return p;
	snprintf(buf, len, "%s%s", home, p + 1);
	return buf;
}

/* entry_matches -- a targets entry for host (or "*") and port (if set) */
static int entry_matches(const config_setting_t *e, const char *host,
			 const char *port, int wildcard)
{
	const char *h = NULL;
	int p;
	if (!config_setting_lookup_string(e, "host", &h))
		return 0;
	if (wildcard ? strcmp(h, "*") : strcmp(h, host))
		return 0;
	if (config_setting_lookup_int(e, "port", &p) &&
	    p != atoi(port && *port ? port : RPMEM_DEFAULT_PORT))
		return 0;
	return 1;
}

/* apply -- the credentials of one targets entry */
static int apply(struct rpmemctl_session_cfg *c, const config_setting_t *e,
		 const char *file)
{
	static const char *const known[] = { "host",	     "port",
					      "ca",	     "certificate",
					      "key",	     "psk_file",
					      "psk_identity", "tls_name",
					      "plaintext",   NULL };
	const char *ca = NULL, *cert = NULL, *key = NULL, *psk = NULL,
		   *id = NULL, *name = NULL;
	int plain = 0;
	char b1[PATH_MAX], b2[PATH_MAX], b3[PATH_MAX], b4[PATH_MAX];
	int ret;

	for (int i = 0; i < config_setting_length(e); i++) {
		const char *n = config_setting_name(
			config_setting_get_elem(e, (unsigned)i));
		int ok = 0;
		for (const char *const *k = known; *k && n; k++)
			ok |= !strcmp(n, *k);
		if (!ok) {
			client_set_last(-EINVAL, "%s:%d: unknown setting '%s'",
					file, config_setting_source_line(e),
					n ? n : "?");
			return -EINVAL;
		}
	}
	config_setting_lookup_string(e, "ca", &ca);
	config_setting_lookup_string(e, "certificate", &cert);
	config_setting_lookup_string(e, "key", &key);
	config_setting_lookup_string(e, "psk_file", &psk);
	config_setting_lookup_string(e, "psk_identity", &id);
	config_setting_lookup_string(e, "tls_name", &name);
	if (config_setting_lookup_bool(e, "plaintext", &plain))
		c->plaintext = plain;
	if (name && (ret = rpmemctl_session_cfg_set_tls_name(c, name))) {
		client_set_last(ret, "%s:%d: invalid tls_name '%s'", file,
				config_setting_source_line(e), name);
		return ret;
	}
	if (!cert != !key) {
		client_set_last(-EINVAL,
				"%s:%d: a certificate needs its key and a key its certificate",
				file, config_setting_source_line(e));
		return -EINVAL;
	}
	if ((ca && (ret = set_str(&c->ca, expand(ca, b1, sizeof(b1))))) ||
	    (cert && (ret = rpmemctl_session_cfg_set_tls_cert(
			      c, expand(cert, b2, sizeof(b2)),
			      expand(key, b3, sizeof(b3))))) ||
	    (psk && (ret = rpmemctl_session_cfg_set_psk_file(
			     c, expand(psk, b4, sizeof(b4)), id)))) {
		if (ret == -EINVAL)
			client_set_last(ret,
					"%s:%d: invalid psk_identity '%s'",
					file, config_setting_source_line(e),
					id ? id : "");
		return ret;
	}
	return set_str(&c->source, file);
}

/*
 * cfg_read -- file parsed into lc (config_destroy it after): 0, -errno if
 * it cannot be opened, -EINVAL (file and line) if it is malformed; the
 * thread's message says which
 */
static int cfg_read(const char *file, config_t *lc)
{
	FILE *f = fopen(file, "re");
	int ret = 0;

	if (!f) {
		ret = -errno;
		client_set_last(ret, "client configuration %s: %s", file,
				strerror(-ret));
		return ret;
	}
	config_init(lc);
	if (config_read(lc, f) != CONFIG_TRUE) {
		client_set_last(-EINVAL, "%s:%d: %s", file,
				config_error_line(lc), config_error_text(lc));
		config_destroy(lc);
		ret = -EINVAL;
	}
	fclose(f);
	return ret;
}

/*
 * rpmemctl_session_cfg_load -- the credentials file gives for host:port:
 * the entry naming host (and port, if it has one), else the "*" entry.
 * Returns 1 if an entry applied, 0 if none matched, -ENOENT if there is
 * no such file, -EINVAL with the file and line for a bad file.
 */
RPMEM_EXPORT int rpmemctl_session_cfg_load(struct rpmemctl_session_cfg *c,
					   const char *file, const char *host,
					   const char *port)
{
	config_t lc;
	int ret = 0;

	client_api_begin();
	if (!c || !file || !host)
		return client_api_end(-EINVAL, __func__);
	if ((ret = cfg_read(file, &lc)))
		return ret;
	const config_setting_t *t = config_lookup(&lc, "targets");
	if (!t) {
		ret = 0;
		goto out;
	}
	if (!config_setting_is_list(t)) {
		client_set_last(-EINVAL, "%s:%d: targets must be a list ( ... )",
				file, config_setting_source_line(t));
		ret = -EINVAL;
		goto out;
	}
	for (int wild = 0; wild < 2 && !ret; wild++)
		for (int i = 0; i < config_setting_length(t) && !ret; i++) {
			const config_setting_t *e =
				config_setting_get_elem(t, (unsigned)i);
			if (!entry_matches(e, host, port, wild))
				continue;
			ret = apply(c, e, file);
			if (!ret)
				ret = 1;
		}
out:
	config_destroy(&lc);
	return client_api_end(ret, __func__);
}

/* user_conf -- the user's rpmemctl.conf into buf ("" without a home) */
static void user_conf(char *buf, size_t len)
{
	/* in a set-uid program, not the invoking user's choice */
	const char *xdg = secure_getenv("XDG_CONFIG_HOME");
	const char *home = secure_getenv("HOME");

	buf[0] = '\0';
	if (xdg && *xdg)
		snprintf(buf, len, "%s/%s", xdg, CLIENT_CONF_USER);
	else if (home && *home)
		snprintf(buf, len, "%s/.config/%s", home, CLIENT_CONF_USER);
}

/*
 * rpmemctl_session_cfg_load_default -- as rpmemctl does: the user's file
 * ($XDG_CONFIG_HOME or ~/.config, rpmem/rpmemctl.conf) if it has an entry
 * for host, else the system's (/etc/rpmem/rpmemctl.conf). Missing files
 * are not an error. Returns 1 if an entry applied, 0 if none, -EINVAL.
 */
RPMEM_EXPORT int
rpmemctl_session_cfg_load_default(struct rpmemctl_session_cfg *c,
				  const char *host, const char *port)
{
	char user[PATH_MAX];
	int ret;

	client_api_begin();
	user_conf(user, sizeof(user));
	if (user[0]) {
		ret = rpmemctl_session_cfg_load(c, user, host, port);
		if (ret != -ENOENT && ret != 0)
			return ret;
	}
	ret = rpmemctl_session_cfg_load(c, CLIENT_CONF_SYSTEM, host, port);
	return client_api_end(ret == -ENOENT ? 0 : ret, __func__);
}

/*
 * cfg_int -- the integer setting name of file: 1 (*value set), 0 if the
 * file does not set it, -errno if it cannot be opened, -EINVAL (file and
 * line) for a malformed file or a value that is not an integer
 */
static int cfg_int(const char *file, const char *name, long long *value)
{
	config_t lc;
	int ret = cfg_read(file, &lc);
	const config_setting_t *s;

	if (ret)
		return ret;
	if ((s = config_lookup(&lc, name)) &&
	    config_setting_type(s) != CONFIG_TYPE_INT &&
	    config_setting_type(s) != CONFIG_TYPE_INT64) {
		client_set_last(-EINVAL, "%s:%d: %s must be an integer", file,
				config_setting_source_line(s), name);
		ret = -EINVAL;
	} else if (s) {
		*value = config_setting_get_int64(s);
		ret = 1;
	}
	config_destroy(&lc);
	return ret;
}

/* cfg_str -- the string setting name of file into buf: as cfg_int */
static int cfg_str(const char *file, const char *name, char *buf, size_t len)
{
	config_t lc;
	int ret = cfg_read(file, &lc);
	const config_setting_t *s;

	if (ret)
		return ret;
	if ((s = config_lookup(&lc, name)) &&
	    config_setting_type(s) != CONFIG_TYPE_STRING) {
		client_set_last(-EINVAL, "%s:%d: %s must be a string", file,
				config_setting_source_line(s), name);
		ret = -EINVAL;
	} else if (s) {
		rpmem_strlcpy(buf, config_setting_get_string(s), len);
		ret = 1;
	}
	config_destroy(&lc);
	return ret;
}

int client_cfg_get_str(const char *name, char *buf, size_t len)
{
	char user[PATH_MAX];
	int ret = 0;

	user_conf(user, sizeof(user));
	if (user[0])
		ret = cfg_str(user, name, buf, len);
	if (ret == 0 || ret == -ENOENT)
		ret = cfg_str(CLIENT_CONF_SYSTEM, name, buf, len);
	return ret == -ENOENT ? 0 : ret;
}

/*
 * rpmemctl_client_cfg_get_int -- an integer setting (a libconfig path,
 * e.g. "replicate.quorum") of the user's rpmemctl.conf if it sets it,
 * else of the system's; the file it came from into file (if not NULL).
 * Returns 1 if found, 0 if neither sets it (missing files included),
 * -EINVAL for a malformed file or a value that is not an integer.
 */
RPMEM_EXPORT int rpmemctl_client_cfg_get_int(const char *name,
					     long long *value, char *file,
					     size_t filelen)
{
	char user[PATH_MAX];
	const char *from = user;
	int ret = 0;

	client_api_begin();
	if (!name || !value || (file && !filelen))
		return client_api_end(-EINVAL, __func__);
	user_conf(user, sizeof(user));
	if (user[0])
		ret = cfg_int(user, name, value);
	if (ret == 0 || ret == -ENOENT) {
		from = CLIENT_CONF_SYSTEM;
		ret = cfg_int(from, name, value);
	}
	if (ret == 1 && file)
		snprintf(file, filelen, "%s", from);
	return client_api_end(ret == -ENOENT ? 0 : ret, __func__);
}

/* client_cfg_uses_tls -- the configuration asks for TLS */
int client_cfg_uses_tls(const struct rpmemctl_session_cfg *c)
{
	return c && (c->psk_file || c->ca || c->cert);
}

/*
 * client_tls_ctx -- the TLS context cfg describes, for host:port; on
 * failure the thread's message says why (the files named, what is wrong
 * with them)
 */
int client_tls_ctx(const struct rpmemctl_session_cfg *c, const char *host,
		   const char *port, struct rpmem_tls_ctx **out)
{
	char err[CLIENT_ERRMSG_MAX - 300];
	size_t errlen = sizeof(err);
	char id[RPMEM_IDENTITY_MAX + 1] = "";
	uint8_t key[RPMEM_PSK_MAX];
	size_t klen = 0;
	int ret;

	if (c->psk_file) {
		if (c->psk_identity)
			rpmem_strlcpy(id, c->psk_identity, sizeof(id));
		if ((ret = rpmem_psk_read(c->psk_file, id, key, &klen, err,
					  errlen))) {
			client_set_last(-EINVAL, "credentials for %s:%s: %s",
					host, port, err);
			return -EINVAL;
		}
	}
	struct rpmem_tls_cfg tc = {
		.server = 0,
		.ca_file = c->ca,
		.cert_file = c->cert,
		.key_file = c->key,
		.psk_identity = klen ? id : NULL,
		.psk = klen ? key : NULL,
		.psk_len = klen,
	};
	ret = rpmem_tls_ctx_new(&tc, out, err, errlen);
	OPENSSL_cleanse(key, sizeof(key));
	if (ret)
		client_set_last(-EINVAL, "credentials for %s:%s: %s", host,
				port, err);
	return ret ? -EINVAL : 0;
}
