/* SPDX-License-Identifier: BSD-3-Clause */
/* access.h -- who may do what: the access rules of rpmemd.conf, matched */
#ifndef RPMEMD_ACCESS_H
#define RPMEMD_ACCESS_H

#include <stdint.h>

#include "config.h"

struct rpmemd_session;
struct rpmemd_sessions;

/* the access rules in force: a copy of a configuration's, immutable */
struct rpmemd_access {
	unsigned n;
	struct rpmemd_access_rule *v;
};

/* rpmemd_access_new -- the rules of cfg (none: nobody may do anything) */
int rpmemd_access_new(const struct rpmemd_config *cfg,
		      struct rpmemd_access **out);
/* rpmemd_access_delete -- release the rules; NULL is fine */
void rpmemd_access_delete(struct rpmemd_access **a);

/*
 * rpmemd_access_allows -- 1 if identity holds right on region by some
 * rule (rules add up; write includes append, both include read), else 0. region NULL asks
 * about the daemon: ADMIN whether the identity is an admin, READ or WRITE
 * whether it has any rule at all (who may ask LIST and STATUS).
 */
int rpmemd_access_allows(const struct rpmemd_access *a, const char *identity,
			 enum rpmemd_right right, const char *region);

/* rpmemd_right_str -- "read", "write", "admin", "append" */
const char *rpmemd_right_str(enum rpmemd_right right);

/*
 * rpmemd_access_warn -- log what in cfg's access rules is probably not
 * meant: TLS without rules (nobody may do anything), rules without TLS
 * (they do not apply), rules naming regions cfg does not have (yet).
 * Returns the number of warnings.
 */
int rpmemd_access_warn(const struct rpmemd_config *cfg);

/* --- authz.c: the rules applied to a session's requests ------------------ */

/*
 * rpmemd_may -- the session's identity holds right on region under the
 * rules in force now (region NULL: see rpmemd_access_allows). A
 * plaintext daemon (no tls group) allows everything.
 */
int rpmemd_may(struct rpmemd_session *s, enum rpmemd_right right,
	       const char *region);

/*
 * rpmemd_authz_check -- rpmemd_may, or a refusal: ERROR{DENIED} naming
 * the identity, the right and the region, logged at notice level. *ok
 * says whether the request may go on; returns 0 or the send failure.
 */
int rpmemd_authz_check(struct rpmemd_session *s, uint32_t id,
		       enum rpmemd_right right, const char *region, int *ok);

/* rpmemd_sessions_set_access -- new rules for every next request (takes *a) */
void rpmemd_sessions_set_access(struct rpmemd_sessions *set,
				struct rpmemd_access **a);

#endif
