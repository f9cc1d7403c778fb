/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * authz.c -- the access rules applied to a session's requests: the one
 * check every request handler calls, and the refusal it answers
 */
#include <pthread.h>
#include <stdio.h>

#include "access.h"
#include "log.h"
#include "session_int.h"
#include "store.h"

int rpmemd_may(struct rpmemd_session *s, enum rpmemd_right right,
	       const char *region)
{
	struct rpmemd_sessions *set = s->set;
	int ok;

	/* plaintext (loopback or allow_insecure_remote): nobody to ask */
	if (!set->tls)
		return 1;
	pthread_mutex_lock(&set->lock);
	ok = rpmemd_access_allows(set->access, s->identity, right, region);
	pthread_mutex_unlock(&set->lock);
	return ok;
}

/*
 * verb -- right in "identity 'x' may not VERB region 'r'": a refused
 * append is one of write (create, open for writing), which an identity
 * with neither right is told
 */
static const char *verb(enum rpmemd_right right)
{
	return right == RPMEMD_RIGHT_APPEND ? "write" : rpmemd_right_str(right);
}

/* refused requests, at a peer's will: a few a second are logged */
static struct rpmem_log_limit log_denied =
	RPMEM_LOG_LIMIT_INIT("refused requests", 5);

int rpmemd_authz_check(struct rpmemd_session *s, uint32_t id,
		       enum rpmemd_right right, const char *region, int *ok)
{
	*ok = rpmemd_may(s, right, region);
	if (*ok)
		return 0;
	if (region && right == RPMEMD_RIGHT_WRITE &&
	    rpmemd_may(s, RPMEMD_RIGHT_APPEND, region)) {
		rpmem_log_limited(&log_denied, LOG_NOTICE,
				  "session %u from %s: refused: identity '%s' may only append to region '%s'",
				  s->id, s->peer, s->identity, region);
		return conn_reply_err(s, id, RPMEM_E_DENIED,
				      "identity '%s' may only append to region '%s' (create, mirror, sync, read): removing pools, pruning versions, promoting and demoting need the write right",
				      s->identity, region);
	}
	if (region) {
		rpmem_log_limited(&log_denied, LOG_NOTICE,
				  "session %u from %s: refused: identity '%s' may not %s region '%s'",
				  s->id, s->peer, s->identity, verb(right),
				  region);
		return conn_reply_err(s, id, RPMEM_E_DENIED,
				      "identity '%s' may not %s region '%s'",
				      s->identity, verb(right), region);
	}
	if (right == RPMEMD_RIGHT_ADMIN) {
		rpmem_log_limited(&log_denied, LOG_NOTICE,
				  "session %u from %s: refused: identity '%s' is not an admin",
				  s->id, s->peer, s->identity);
		return conn_reply_err(s, id, RPMEM_E_DENIED,
				      "identity '%s' is not an admin of this target",
				      s->identity);
	}
	rpmem_log_limited(&log_denied, LOG_NOTICE,
			  "session %u from %s: refused: identity '%s' has no access rules",
			  s->id, s->peer, s->identity);
	return conn_reply_err(s, id, RPMEM_E_DENIED,
			      "identity '%s' has no access rules on this target",
			      s->identity);
}

void rpmemd_sessions_set_access(struct rpmemd_sessions *set,
				struct rpmemd_access **a)
{
	struct rpmemd_access *old;

	pthread_mutex_lock(&set->lock);
	old = set->access;
	set->access = *a;
	pthread_mutex_unlock(&set->lock);
	*a = NULL;
	rpmemd_access_delete(&old);
}

int rpmemd_append_refused(const struct rpmemd_session *s,
			  struct rpmemd_handle *h, char *err, size_t errlen)
{
	struct rpmemd_pool *p = h->pool;
	struct rpmemd_meta m;

	if (!h->append || rpmemd_pool_region(p)->cfg.versions)
		return 0;
	rpmemd_pool_get_meta(p, &m);
	if (!m.generation)
		return 0;
	snprintf(err, errlen,
		 "identity '%s' may only append to region '%s', which keeps no versions: changing pool '%s' would lose its image of generation %llu for good (write a new pool, or use a region that keeps versions)",
		 s->identity, rpmemd_pool_region(p)->cfg.name,
		 rpmemd_pool_name(p), (unsigned long long)m.generation);
	return 1;
}
