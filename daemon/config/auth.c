/* SPDX-License-Identifier: BSD-3-Clause */
/* auth.c -- who a client is: the daemon's TLS context and PSK identities */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "auth.h"
#include "log.h"
#include "util.h"

/* PSK_FILE_LINE_MAX -- the longest line of a PSK file read whole */
#define PSK_FILE_LINE_MAX 512

#define PSK_MAX_ENTRIES 4096

/* psk_lookup -- the TLS server's PSK callback: identity -> key */
static int psk_lookup(void *arg, const char *identity, uint8_t *key,
		      size_t *len)
{
	const struct rpmemd_auth *a = arg;
	for (size_t i = 0; i < a->npsk; i++) {
		if (strcmp(a->psk[i].identity, identity))
			continue;
		memcpy(key, a->psk[i].key, a->psk[i].len);
		*len = a->psk[i].len;
		return 0;
	}
	return -ENOENT;
}

/* load_psk -- every IDENTITY:HEXKEY line of path; duplicates refused */
static int load_psk(struct rpmemd_auth *a, const char *path, char *err,
		    size_t errlen)
{
	char line[PSK_FILE_LINE_MAX];
	unsigned lineno = 0;
	int ret;

	if ((ret = rpmem_key_file_check(path, err, errlen)))
		return ret;
	FILE *f = fopen(path, "re");
	if (!f) {
		ret = -errno;
		snprintf(err, errlen, "tls.psk_file %s: %s", path,
			 strerror(-ret));
		return ret;
	}
	a->psk = calloc(PSK_MAX_ENTRIES, sizeof(*a->psk));
	ret = a->psk ? 0 : -ENOMEM;
	while (!ret && fgets(line, sizeof(line), f)) {
		struct rpmemd_psk *e = &a->psk[a->npsk];
		char *p = line + strspn(line, " \t");
		lineno++;
		if (*p == '#' || *p == '\n' || !*p)
			continue;
		if (a->npsk == PSK_MAX_ENTRIES) {
			snprintf(err, errlen, "%s:%u: more than %d identities",
				 path, lineno, PSK_MAX_ENTRIES);
			ret = -E2BIG;
		} else if (rpmem_psk_parse_line(p, e->identity, e->key,
						&e->len)) {
			snprintf(err, errlen,
				 "%s:%u: expected IDENTITY:HEXKEY (identity of letters, digits, '.', '_', '@', '-'; %d to %d bytes of key in hex, as rpmemctl psk-gen writes)",
				 path, lineno, RPMEM_PSK_MIN, RPMEM_PSK_MAX);
			ret = -EINVAL;
		} else if (psk_lookup(a, e->identity, (uint8_t[RPMEM_PSK_MAX]){ 0 },
				      &(size_t){ 0 }) == 0) {
			snprintf(err, errlen, "%s:%u: identity '%s' is listed twice",
				 path, lineno, e->identity);
			ret = -EINVAL;
		} else {
			a->npsk++;
		}
	}
	fclose(f);
	if (!ret && !a->npsk) {
		snprintf(err, errlen, "tls.psk_file %s holds no identity", path);
		ret = -EINVAL;
	}
	return ret;
}

int rpmemd_auth_new(const struct rpmemd_config *cfg, struct rpmemd_auth **out,
		    char *err, size_t errlen)
{
	const struct rpmemd_tls_cfg *t = &cfg->tls;
	struct rpmemd_auth *a = calloc(1, sizeof(*a));
	char why[RPMEM_MSG_MAX];
	int ret;

	if (!a)
		return -ENOMEM;
	a->cfg = *t;
	if (!t->enabled) {
		*out = a;
		return 0;
	}
	if (t->psk_file[0] && (ret = load_psk(a, t->psk_file, err, errlen)))
		goto err_free;
	struct rpmem_tls_cfg tc = {
		.server = 1,
		.ca_file = t->ca[0] ? t->ca : NULL,
		.cert_file = t->certificate[0] ? t->certificate : NULL,
		.key_file = t->key[0] ? t->key : NULL,
		.psk_lookup = a->npsk ? psk_lookup : NULL,
		.psk_arg = a,
	};
	if ((ret = rpmem_tls_ctx_new(&tc, &a->tls, why, sizeof(why)))) {
		snprintf(err, errlen, "tls: %s", why);
		goto err_free;
	}
	*out = a;
	return 0;

err_free:
	rpmemd_auth_delete(&a);
	return ret;
}

void rpmemd_auth_delete(struct rpmemd_auth **pa)
{
	struct rpmemd_auth *a = pa ? *pa : NULL;
	if (!a)
		return;
	rpmem_tls_ctx_free(&a->tls);
	if (a->psk)
		OPENSSL_cleanse(a->psk, a->npsk * sizeof(*a->psk));
	free(a->psk);
	free(a);
	*pa = NULL;
}

int rpmemd_auth_same(const struct rpmemd_auth *a,
		     const struct rpmemd_config *cfg)
{
	return !memcmp(&a->cfg, &cfg->tls, sizeof(a->cfg));
}
