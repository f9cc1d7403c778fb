/* SPDX-License-Identifier: BSD-3-Clause */
/* auth.h -- who a client is: the daemon's TLS context and PSK identities */
#ifndef RPMEMD_AUTH_H
#define RPMEMD_AUTH_H

#include <stddef.h>

#include "config.h"
#include "tls.h"

struct rpmemd_psk {
	char identity[RPMEM_IDENTITY_MAX + 1];
	uint8_t key[RPMEM_PSK_MAX];
	size_t len;
};

/* struct rpmemd_auth -- fixed from start to stop (a reload does not swap it) */
struct rpmemd_auth {
	struct rpmem_tls_ctx *tls; /* NULL: plaintext (loopback, or opt-out) */
	struct rpmemd_psk *psk;	   /* from tls.psk_file */
	size_t npsk;
	struct rpmemd_tls_cfg cfg; /* what it was built from */
};

/*
 * rpmemd_auth_new -- the TLS context of cfg->tls (none if not enabled),
 * with the PSK file read and checked; on failure err says why
 */
int rpmemd_auth_new(const struct rpmemd_config *cfg, struct rpmemd_auth **out,
		    char *err, size_t errlen);
void rpmemd_auth_delete(struct rpmemd_auth **a);

/* rpmemd_auth_same -- 1 if cfg asks for the TLS settings a was built with */
int rpmemd_auth_same(const struct rpmemd_auth *a,
		     const struct rpmemd_config *cfg);

#endif
