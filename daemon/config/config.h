/* SPDX-License-Identifier: BSD-3-Clause */
/* config.h -- rpmemd configuration file (libconfig) */
#ifndef RPMEMD_CONFIG_H
#define RPMEMD_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "proto.h"
#include "retain.h"

#define RPMEMD_DEFAULT_CONFIG "/etc/rpmemd/rpmemd.conf"
#define RPMEMD_MAX_LISTEN 16
#define RPMEMD_MAX_REGIONS 256
#define RPMEMD_ADDR_MAX 64
/* a setting's name as a message gives it: "regions[3].versions_quota" */
#define RPMEMD_SETTING_MAX 128
/* a setting's list prefix: "regions.[3]." */
#define RPMEMD_SETTING_PFX_MAX 32
#define RPMEMD_USER_MAX 33 /* a user name (32 bytes, as useradd) */
#define RPMEMD_MAX_ACCESS 4096 /* (identity, region) entries of access */

/* rights an access rule grants (write includes append, both read) */
enum rpmemd_right {
	RPMEMD_RIGHT_READ = 1u << 0,  /* list, pool status, verify, pull */
	RPMEMD_RIGHT_WRITE = 1u << 1, /* append's, and remove, prune, ... */
	RPMEMD_RIGHT_ADMIN = 1u << 2, /* every session in STATUS, kick */
	RPMEMD_RIGHT_APPEND = 1u << 3, /* create, mirror, sync: lose nothing */
};

enum rpmemd_log_target {
	RPMEMD_LOG_STDERR = 0,
	RPMEMD_LOG_SYSLOG = 1,
};

struct rpmemd_region_cfg {
	char name[RPMEM_NAME_MAX + 1];
	uint8_t type;		      /* enum rpmem_region_type */
	char path[RPMEM_STR_MAX + 1]; /* canonical (realpath) */
	int direct_pmem;	      /* declared: writes reach PMem directly */
	int is_auto;		      /* found by regions_auto, not listed */
	int versions;		      /* keeps versions (versions = "...") */
	struct rpmem_keep keep;	      /* which (all zero: every one) */
	uint64_t versions_quota;      /* bytes of all its versions; 0: none */
	unsigned versions_floor;      /* newest of each pool space keeps */
	uint64_t versions_min_age;    /* s: kept since, space keeps; 0 none */
	int versions_full_prune;      /* versions_full = "prune" */
	uint64_t scrub_interval_ns;   /* scrub its pools this often; 0: never */
	/* devdax: the directory of its undo journals ("": the default) */
	char undo_dir[RPMEM_STR_MAX + 1];
};

/* tls = { ... }: the daemon's credentials (empty strings: not set) */
struct rpmemd_tls_cfg {
	int enabled; /* the group is present: every connection uses TLS */
	char certificate[RPMEM_STR_MAX + 1];
	char key[RPMEM_STR_MAX + 1];
	char ca[RPMEM_STR_MAX + 1];
	char psk_file[RPMEM_STR_MAX + 1];
};

/*
 * struct rpmemd_limits -- the limits = { ... } group: how long a peer may
 * take, how many connections may wait for their handshake, how much DRAM
 * RDMA staging copies may pin
 */
struct rpmemd_limits {
	unsigned handshake_timeout;   /* s, from accept to HELLO_OK */
	unsigned frame_timeout;	      /* s, a frame's payload after its header */
	unsigned writer_idle_timeout; /* s without a request, RW pool (0: off) */
	unsigned session_idle_timeout; /* s without a request, no pool (0: off) */
	unsigned reader_idle_timeout; /* s without a request, RO pools (0: off) */
	unsigned max_per_identity;     /* sessions of one identity (0: half of
					  max_sessions) */
	unsigned admin_reserved;       /* of max_sessions, for admins only */
	unsigned max_unauth;	      /* connections before HELLO_OK, in all */
	unsigned max_unauth_per_addr; /* ... from one source address */
	unsigned event_queue;	      /* events a subscriber may fall behind */
	/* bytes of DRAM staging copies of all RDMA exposures together */
	uint64_t rdma_staging_max; /* RPMEMD_STAGING_AUTO: see expose.c */
};

/* limits.rdma_staging_max not set: the lesser of 4 GiB and half the RAM */
#define RPMEMD_STAGING_AUTO UINT64_MAX

/*
 * One (identity, region) entry of the access list: a rule naming n
 * regions becomes n entries; an admin-only rule one entry with region "".
 * Region "*" is every region.
 */
struct rpmemd_access_rule {
	char identity[RPMEM_IDENTITY_MAX + 1];
	char region[RPMEM_NAME_MAX + 1];
	unsigned rights; /* RPMEMD_RIGHT_*, write and append with read */
	unsigned line;	 /* in the configuration file, for warnings */
};

struct rpmemd_config {
	char file[RPMEM_STR_MAX + 1];
	unsigned nlisten;
	char listen[RPMEMD_MAX_LISTEN][RPMEMD_ADDR_MAX];
	char port[8];
	int log_level;	/* LOG_ERR .. LOG_DEBUG */
	int log_target; /* enum rpmemd_log_target */
	unsigned max_sessions;
	uint64_t bwlimit; /* bytes/s of WRITE data, all sessions; 0 = none */
	struct rpmemd_limits limits;
	int regions_auto;	   /* also serve the discovered namespaces */
	int require_auth;	   /* auth.require_auth (reserved) */
	int allow_insecure_remote; /* non-loopback listeners without TLS */
	int region_check_warn;	   /* region_check = "warn" (else strict) */
	/* user = "NAME": whom rpmemd started as root becomes; "" = default */
	char user[RPMEMD_USER_MAX];
	struct rpmemd_tls_cfg tls;
	int has_access; /* an access list is present (maybe empty) */
	unsigned naccess;
	struct rpmemd_access_rule *access; /* owned; rpmemd_config_free */
	unsigned nregions;
	struct rpmemd_region_cfg *regions; /* owned; rpmemd_config_free */
};

/*
 * rpmemd_config_load -- parse and validate the configuration file at path
 * into *out (filled only on success; free with rpmemd_config_free).
 * Returns 0, or -errno with "FILE:LINE: SETTING: reason" in err[errlen].
 */
int rpmemd_config_load(const char *path, struct rpmemd_config *out, char *err,
		       size_t errlen);

/* rpmemd_config_load_mounts -- the same with another mount table (tests) */
int rpmemd_config_load_mounts(const char *path, const char *mounts,
			      struct rpmemd_config *out, char *err,
			      size_t errlen);

/* rpmemd_config_free -- release what rpmemd_config_load allocated */
void rpmemd_config_free(struct rpmemd_config *cfg);

/*
 * rpmemd_config_add_regions -- append the regions v[n] found by
 * regions_auto (marked is_auto) to cfg, except those whose name is taken
 * or whose path is a configured one (or overlaps a configured directory):
 * explicit regions win; each one left out is logged. Returns the number
 * added or -ENOMEM (cfg unchanged).
 */
int rpmemd_config_add_regions(struct rpmemd_config *cfg,
			      const struct rpmemd_region_cfg *v, size_t n);

/* rpmemd_region_type_parse -- "dir", "fsdax", "devdax"; -1 if unknown */
int rpmemd_region_type_parse(const char *s);

#endif
