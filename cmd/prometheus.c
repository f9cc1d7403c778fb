/* SPDX-License-Identifier: BSD-3-Clause */
/* prometheus.c -- rpmemctl status --prometheus: the text exposition format */

#include <stdio.h>
#include <string.h>

#include "cmd.h"

/*
 * label -- one label NAME="VALUE", the value escaped (\\, \", \n) and UTF-8
 * as the format requires: a byte that is not part of well-formed UTF-8
 * becomes U+FFFD
 */
static void label(FILE *f, const char *name, const char *value, int first)
{
	size_t n;

	fprintf(f, "%s%s=\"", first ? "" : ",", name);
	for (const char *c = value ? value : ""; *c; c += n) {
		n = rpmemctl_utf8_len(c);
		if (!n) {
			fputs("\xef\xbf\xbd", f); /* U+FFFD */
			n = 1;
		} else if (*c == '\\') {
			fputs("\\\\", f);
		} else if (*c == '"') {
			fputs("\\\"", f);
		} else if (*c == '\n') {
			fputs("\\n", f);
		} else {
			fwrite(c, 1, n, f);
		}
	}
	fputc('"', f);
}

/* family -- the # HELP and # TYPE lines of a metric */
static void family(FILE *f, const char *name, const char *type,
		   const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* sample_begin -- "name{target=..." of a sample; labels follow */
static void sample_begin(FILE *f, const char *name, const char *hp)
{
	fprintf(f, "%s{", name);
	label(f, "target", hp, 1);
}

/* sample_end -- the closing brace and an integer value */
static void sample_end(FILE *f, unsigned long long v)
{
	fprintf(f, "} %llu\n", v);
}

/* daemon_metric -- a one-sample family about the daemon */
static void daemon_metric(FILE *f, const char *hp, const char *name,
			  const char *type, const char *help,
			  unsigned long long v)
{
	family(f, name, type, help);
	sample_begin(f, name, hp);
	sample_end(f, v);
}

/* cmd_prometheus_down -- rpmem_up 0: the daemon did not answer */
void cmd_prometheus_down(FILE *f, const char *hp)
{
	daemon_metric(f, hp, "rpmem_up", "gauge",
		      "1 if rpmemctl got the daemon's status and pools, else 0.",
		      0);
}

/* pool_sample -- "name{target, region, pool" of pool i */
static void pool_sample(FILE *f, const char *name, const char *hp,
			const struct rpmemctl_list *l, unsigned i)
{
	sample_begin(f, name, hp);
	label(f, "region", rpmemctl_list_pool_region(l, i), 0);
	label(f, "pool", rpmemctl_list_pool_name(l, i), 0);
}

/* pool_u64 -- the accessors of a pool's integer metrics */
typedef uint64_t (*pool_u64_fn)(const struct rpmemctl_list *, unsigned);

/* pool_family -- one family with a sample per pool */
static void pool_family(FILE *f, const char *hp, const struct rpmemctl_list *l,
			const char *name, const char *type, const char *help,
			pool_u64_fn get)
{
	family(f, name, type, help);
	for (unsigned i = 0; i < rpmemctl_list_pool_count(l); i++) {
		pool_sample(f, name, hp, l, i);
		sample_end(f, (unsigned long long)get(l, i));
	}
}

/* pool_writers -- 1 if a session holds pool i open for writing */
static uint64_t pool_writers(const struct rpmemctl_list *l, unsigned i)
{
	const char *w = rpmemctl_list_pool_writer(l, i);
	return w && w[0] ? 1 : 0;
}

/* pool_versions -- the versions of pool i */
static uint64_t pool_versions(const struct rpmemctl_list *l, unsigned i)
{
	return rpmemctl_list_pool_versions(l, i);
}

/* pool_primary -- 1 if pool i was promoted (role primary) */
static uint64_t pool_primary(const struct rpmemctl_list *l, unsigned i)
{
	return rpmemctl_list_pool_role(l, i) == RPMEMCTL_ROLE_PRIMARY;
}

/* pool_readers -- the read-only opens of pool i */
static uint64_t pool_readers(const struct rpmemctl_list *l, unsigned i)
{
	return rpmemctl_list_pool_readers(l, i);
}

/* disks -- rpmem_pool_disk_state: 1 for the pool's disk state */
static void disks(FILE *f, const char *hp, const struct rpmemctl_list *l)
{
	family(f, "rpmem_pool_disk_state", "gauge",
	       "1 for the pool's disk state as its target sees it (UpToDate, Consistent, Inconsistent, Outdated), 0 for the others.");
	for (unsigned i = 0; i < rpmemctl_list_pool_count(l); i++) {
		for (int k = RPMEMCTL_DISK_UPTODATE; k >= 0; k--) {
			pool_sample(f, "rpmem_pool_disk_state", hp, l, i);
			label(f, "disk", rpmemctl_disk_state_str(k), 0);
			sample_end(f, rpmemctl_list_pool_disk_state(l, i) == k);
		}
	}
}

/* pools -- every per-pool family */
static void pools(FILE *f, const char *hp, const struct rpmemctl_list *l)
{
	static const enum rpmemctl_pool_state states[] = {
		RPMEMCTL_POOL_EMPTY, RPMEMCTL_POOL_SYNCING,
		RPMEMCTL_POOL_CONSISTENT
	};

	pool_family(f, hp, l, "rpmem_pool_size_bytes", "gauge",
		    "Size of the pool.", rpmemctl_list_pool_size);
	family(f, "rpmem_pool_state", "gauge",
	       "1 for the state the pool is in (empty, syncing, consistent), 0 for the others.");
	for (unsigned i = 0; i < rpmemctl_list_pool_count(l); i++) {
		for (unsigned k = 0; k < 3; k++) {
			pool_sample(f, "rpmem_pool_state", hp, l, i);
			label(f, "state", rpmemctl_pool_state_str(states[k]),
			      0);
			sample_end(f, rpmemctl_list_pool_state(l, i) ==
					      states[k]);
		}
	}
	disks(f, hp, l);
	pool_family(f, hp, l, "rpmem_pool_generation", "gauge",
		    "Generation of the pool: completed syncs since it was created.",
		    rpmemctl_list_pool_generation);
	pool_family(f, hp, l, "rpmem_pool_created_timestamp_seconds", "gauge",
		    "When the pool was created, in unix seconds.",
		    rpmemctl_list_pool_created);
	pool_family(f, hp, l, "rpmem_pool_last_sync_timestamp_seconds",
		    "gauge",
		    "When the pool last became consistent, in unix seconds; 0 = never.",
		    rpmemctl_list_pool_last_sync);
	pool_family(f, hp, l, "rpmem_pool_bytes_written_total", "counter",
		    "Bytes written into the pool since the daemon started.",
		    rpmemctl_list_pool_bytes_written);
	pool_family(f, hp, l, "rpmem_pool_flushes_total", "counter",
		    "Flushes of the pool since the daemon started.",
		    rpmemctl_list_pool_flushes);
	pool_family(f, hp, l, "rpmem_pool_writers", "gauge",
		    "1 if a session holds the pool open for writing.",
		    pool_writers);
	pool_family(f, hp, l, "rpmem_pool_readers", "gauge",
		    "Sessions holding the pool open read-only.", pool_readers);
	pool_family(f, hp, l, "rpmem_pool_primary", "gauge",
		    "1 if the pool was promoted to primary (it takes no pushes).",
		    pool_primary);
	pool_family(f, hp, l, "rpmem_pool_versions", "gauge",
		    "Point-in-time versions of the pool kept on the target.",
		    pool_versions);
	pool_family(f, hp, l, "rpmem_pool_versions_bytes", "gauge",
		    "Bytes the pool's versions take on the target.",
		    rpmemctl_list_pool_versions_bytes);
	pool_family(f, hp, l, "rpmem_pool_damaged_bytes", "gauge",
		    "Bytes of the pool's image a scrub found damaged and no sync rewrote since.",
		    rpmemctl_list_pool_damaged);
	pool_family(f, hp, l, "rpmem_pool_split_brain_seconds", "gauge",
		    "Unix time of the last split brain reported of the pool since its history last changed (0: none).",
		    rpmemctl_list_pool_split_brain);
}

/*
 * session_sample -- "name{target, session, peer, identity, client,
 * region, pool" of session i
 */
static void session_sample(FILE *f, const char *name, const char *hp,
			   const struct rpmemctl_status *st, unsigned i)
{
	char id[CMD_NUM_MAX];
	const char *rp = rpmemctl_status_session_pool(st, i);
	const char *slash = rp ? strchr(rp, '/') : NULL;
	char region[RPMEMCTL_NAME_MAX + 1] = "";

	if (slash)
		snprintf(region, sizeof(region), "%.*s", (int)(slash - rp), rp);
	snprintf(id, sizeof(id), "%u", rpmemctl_status_session_id(st, i));
	sample_begin(f, name, hp);
	label(f, "session", id, 0);
	label(f, "peer", rpmemctl_status_session_peer(st, i), 0);
	label(f, "identity", rpmemctl_status_session_identity(st, i), 0);
	label(f, "client", rpmemctl_status_session_client(st, i), 0);
	label(f, "region", region, 0);
	label(f, "pool", slash ? slash + 1 : "", 0);
}

typedef uint64_t (*session_u64_fn)(const struct rpmemctl_status *, unsigned);

/* session_family -- one family with a sample per session */
static void session_family(FILE *f, const char *hp,
			   const struct rpmemctl_status *st, const char *name,
			   const char *type, const char *help,
			   session_u64_fn get)
{
	family(f, name, type, help);
	for (unsigned i = 0; i < rpmemctl_status_session_count(st); i++) {
		session_sample(f, name, hp, st, i);
		sample_end(f, (unsigned long long)get(st, i));
	}
}

/* sessions -- every per-session family */
static void sessions(FILE *f, const char *hp, const struct rpmemctl_status *st)
{
	session_family(f, hp, st, "rpmem_session_bytes_written_total",
		       "counter", "Bytes the session wrote.",
		       rpmemctl_status_session_bytes_written);
	session_family(f, hp, st, "rpmem_session_bytes_read_total", "counter",
		       "Bytes the session read.",
		       rpmemctl_status_session_bytes_read);
	session_family(f, hp, st, "rpmem_session_flushes_total", "counter",
		       "Flushes the session asked for.",
		       rpmemctl_status_session_flushes);
	family(f, "rpmem_session_last_flush_seconds", "gauge",
	       "How long the session's last flush took.");
	for (unsigned i = 0; i < rpmemctl_status_session_count(st); i++) {
		uint64_t ns = rpmemctl_status_session_last_flush_ns(st, i);
		session_sample(f, "rpmem_session_last_flush_seconds", hp, st,
			       i);
		fprintf(f, "} %llu.%09llu\n",
			(unsigned long long)(ns / 1000000000u),
			(unsigned long long)(ns % 1000000000u));
	}
}

/* cmd_prometheus -- the daemon, its regions, pools and sessions as metrics */
void cmd_prometheus(FILE *f, const char *hp, const struct rpmemctl_status *st,
		    const struct rpmemctl_list *l)
{
	daemon_metric(f, hp, "rpmem_up", "gauge",
		      "1 if rpmemctl got the daemon's status and pools, else 0.",
		      1);
	family(f, "rpmem_info", "gauge",
	       "The daemon's version string; always 1.");
	sample_begin(f, "rpmem_info", hp);
	label(f, "server", rpmemctl_status_server(st), 0);
	sample_end(f, 1);
	daemon_metric(f, hp, "rpmem_uptime_seconds", "gauge",
		      "Seconds since the daemon started.",
		      (unsigned long long)rpmemctl_status_uptime(st));
	daemon_metric(f, hp, "rpmem_sessions", "gauge",
		      "Sessions the daemon shows this client.",
		      rpmemctl_status_session_count(st));
	daemon_metric(f, hp, "rpmem_max_sessions", "gauge",
		      "The daemon's max_sessions.",
		      rpmemctl_status_max_sessions(st));
	family(f, "rpmem_region_size_bytes", "gauge", "Size of the region.");
	for (unsigned i = 0; i < rpmemctl_list_region_count(l); i++) {
		sample_begin(f, "rpmem_region_size_bytes", hp);
		label(f, "region", rpmemctl_list_region_name(l, i), 0);
		sample_end(f, (unsigned long long)rpmemctl_list_region_size(
				      l, i));
	}
	family(f, "rpmem_region_free_bytes", "gauge",
	       "Space left in the region for new pools.");
	for (unsigned i = 0; i < rpmemctl_list_region_count(l); i++) {
		sample_begin(f, "rpmem_region_free_bytes", hp);
		label(f, "region", rpmemctl_list_region_name(l, i), 0);
		sample_end(f, (unsigned long long)rpmemctl_list_region_free(
				      l, i));
	}
	pools(f, hp, l);
	sessions(f, hp, st);
}

/* replica_sample -- "name{file=..,replica=.." of replica i */
static void replica_sample(FILE *f, const char *name, const char *file,
			   const struct cmd_replica *p)
{
	fprintf(f, "%s{", name);
	label(f, "file", file, 1);
	label(f, "replica", p->target, 0);
}

/*
 * cmd_prometheus_replicas -- rpmemctl replicas --prometheus: per replica
 * whether it holds the file's writes, its bytes and seconds behind
 */
void cmd_prometheus_replicas(FILE *f, const char *file,
			     const struct cmd_replicas *r)
{
	struct { const char *name, *help; } fam[] = {
		{ "rpmem_replica_holding",
		  "1 if the replica holds every write of the file (live or synced)." },
		{ "rpmem_replica_behind_bytes",
		  "Bytes written to the file while the replica did not hold them." },
		{ "rpmem_replica_behind_seconds",
		  "Seconds since the replica stopped holding the file's writes." },
	};

	fprintf(f, "# HELP rpmem_replicator_up 1 if the process replicating the file runs.\n"
		"# TYPE rpmem_replicator_up gauge\nrpmem_replicator_up{");
	label(f, "file", file, 1);
	fprintf(f, "} %d\n", r->running);
	family(f, "rpmem_replica_disk_state", "gauge",
	       "1 for the replica's disk state as its primary sees it (UpToDate, Consistent, Outdated, Inconsistent), 0 for the others.");
	for (unsigned i = 0; i < r->n; i++) {
		for (int k = RPMEMCTL_DISK_UPTODATE; k >= 0; k--) {
			replica_sample(f, "rpmem_replica_disk_state", file,
				       &r->rep[i]);
			label(f, "disk", rpmemctl_disk_state_str(k), 0);
			sample_end(f, cmd_replica_disk(&r->rep[i]) == k);
		}
	}
	for (unsigned m = 0; m < 3; m++) {
		family(f, fam[m].name, "gauge", fam[m].help);
		for (unsigned i = 0; i < r->n; i++) {
			const struct cmd_replica *p = &r->rep[i];
			uint64_t v = m == 0 ? (uint64_t)cmd_replica_holds(p) :
				     m == 1 ? p->behind_bytes :
					      cmd_replica_lag_s(r, p);
			replica_sample(f, fam[m].name, file, p);
			sample_end(f, (unsigned long long)v);
		}
	}
}
