/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * text.c -- targets, sizes, intervals, names, PSK lines and log levels as
 * text: the parsers rpmemctl, rpmemd and the library share, made public
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "client_base.h"
#include "librpmemctl.h"
#include "log.h"
#include "tls.h"
#include "util.h"

/* the public limits are the protocol's */
_Static_assert(RPMEMCTL_NAME_MAX == RPMEM_NAME_MAX, "name max");
_Static_assert(RPMEMCTL_SIZE_MAX == RPMEM_SIZE_MAX, "size max");
_Static_assert(RPMEMCTL_PSK_LEN == RPMEM_PSK_LEN, "psk len");
_Static_assert(RPMEMCTL_PSK_LEN <= RPMEM_PSK_MAX, "psk max");
_Static_assert(RPMEMCTL_PSK_IDENTITY_MAX == RPMEM_IDENTITY_MAX, "identity");
_Static_assert(RPMEMCTL_TARGET_NEED_REGION == RPMEM_TARGET_NEED_REGION &&
		       RPMEMCTL_TARGET_NEED_POOL == RPMEM_TARGET_NEED_POOL &&
		       RPMEMCTL_TARGET_NO_PATH == RPMEM_TARGET_NO_PATH,
	       "target flags");

struct rpmemctl_target {
	struct rpmem_target t;
};

/* rpmemctl_target_parse -- a target string into a new object */
RPMEM_EXPORT int rpmemctl_target_parse(const char *s, unsigned flags,
				       struct rpmemctl_target **out,
				       char *errbuf, size_t errlen)
{
	struct rpmemctl_target *t;
	char why[RPMEM_MSG_MAX] = "";
	int ret;

	client_api_begin();
	if (errbuf && errlen)
		errbuf[0] = '\0';
	if (!out)
		return -EINVAL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	ret = rpmem_parse_target(s, flags, &t->t, why, sizeof(why));
	if (ret) {
		free(t);
		if (!why[0])
			snprintf(why, sizeof(why), "invalid target");
		client_set_last(ret, "%s", why);
		if (errbuf && errlen)
			snprintf(errbuf, errlen, "%s", why);
		return ret;
	}
	*out = t;
	return 0;
}

/* rpmemctl_target_delete -- free a parsed target */
RPMEM_EXPORT void rpmemctl_target_delete(struct rpmemctl_target **t)
{
	if (!t || !*t)
		return;
	free(*t);
	*t = NULL;
}

/* the parts of a parsed target; "" for a NULL one */
RPMEM_EXPORT const char *
rpmemctl_target_get_host(const struct rpmemctl_target *t)
{
	return t ? t->t.host : "";
}

RPMEM_EXPORT const char *
rpmemctl_target_get_port(const struct rpmemctl_target *t)
{
	return t ? t->t.port : "";
}

RPMEM_EXPORT const char *
rpmemctl_target_get_region(const struct rpmemctl_target *t)
{
	return t ? t->t.region : "";
}

RPMEM_EXPORT const char *
rpmemctl_target_get_pool(const struct rpmemctl_target *t)
{
	return t ? t->t.pool : "";
}

/* rpmemctl_size_parse -- bytes with K/M/G/T, at most RPMEMCTL_SIZE_MAX */
RPMEM_EXPORT int rpmemctl_size_parse(const char *s, uint64_t *out)
{
	uint64_t v = 0;
	int ret;

	client_api_begin();
	if (!out)
		return -EINVAL;
	ret = rpmem_parse_size(s, &v);
	if (!ret && v > RPMEMCTL_SIZE_MAX)
		ret = -ERANGE;
	if (!ret)
		*out = v;
	return ret;
}

/* rpmemctl_size_format -- a size for people, in powers of 1024 */
RPMEM_EXPORT const char *rpmemctl_size_format(uint64_t size, char *buf,
					      size_t len)
{
	return rpmem_fmt_size(size, buf, len);
}

/* rpmemctl_interval_parse -- "500ms", "5s", "1m", "2h" into ns */
RPMEM_EXPORT int rpmemctl_interval_parse(const char *s, uint64_t *ns)
{
	client_api_begin();
	if (!s || !ns)
		return -EINVAL;
	return rpmem_parse_interval(s, ns);
}

/* rpmemctl_name_check -- 0 for a valid region or pool name, else -EINVAL */
RPMEM_EXPORT int rpmemctl_name_check(const char *name)
{
	client_api_begin();
	return name && rpmem_name_valid(name) ? 0 : -EINVAL;
}

/* rpmemctl_psk_identity_check -- 0 for a valid PSK identity, else -EINVAL */
RPMEM_EXPORT int rpmemctl_psk_identity_check(const char *identity)
{
	client_api_begin();
	return identity && rpmem_psk_valid_identity(identity) ? 0 : -EINVAL;
}

/* rpmemctl_psk_generate -- "IDENTITY:HEXKEY\n" with a new random key */
RPMEM_EXPORT int rpmemctl_psk_generate(const char *identity, char *line,
				       size_t len)
{
	uint8_t key[RPMEMCTL_PSK_LEN];
	size_t n;
	int ret;

	client_api_begin();
	if (!line || rpmemctl_psk_identity_check(identity))
		return -EINVAL;
	n = strlen(identity);
	if (len < n + 1 + 2 * sizeof(key) + 2)
		return -ENOSPC;
	ret = rpmem_random(key, sizeof(key));
	if (ret)
		return ret;
	memcpy(line, identity, n);
	line[n++] = ':';
	for (size_t i = 0; i < sizeof(key); i++, n += 2)
		snprintf(line + n, 3, "%02x", key[i]);
	line[n++] = '\n';
	line[n] = '\0';
	OPENSSL_cleanse(key, sizeof(key));
	return 0;
}

/* rpmemctl_utf8_len -- the length of the UTF-8 character s starts with */
RPMEM_EXPORT size_t rpmemctl_utf8_len(const char *s)
{
	return rpmem_utf8_len(s);
}

/* rpmemctl_utf8_control -- the length of the control character s starts with */
RPMEM_EXPORT size_t rpmemctl_utf8_control(const char *s)
{
	return s ? rpmem_utf8_control(s) : 0;
}

/* rpmemctl_text_escape -- s fit for a terminal (rpmem_text_escape) */
RPMEM_EXPORT size_t rpmemctl_text_escape(const char *s, char *out,
					 size_t size)
{
	if (!s)
		s = "";
	return rpmem_text_escape(s, out, out ? size : 0);
}

/* rpmemctl_log_parse_priority -- a RPMEM_LOG_LEVEL level as LOG_* */
RPMEM_EXPORT int rpmemctl_log_parse_priority(const char *level)
{
	int prio;

	client_api_begin();
	prio = level ? rpmem_log_parse_prio(level) : -1;
	return prio < 0 ? -EINVAL : prio;
}
