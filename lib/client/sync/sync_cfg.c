/* SPDX-License-Identifier: BSD-3-Clause */
/* sync_cfg.c -- the opaque sync configuration and result objects */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "client_sync.h"
#include "util.h"

/* client_sync_mode_valid -- a known enum rpmemctl_sync_mode */
int client_sync_mode_valid(enum rpmemctl_sync_mode mode)
{
	return mode == RPMEMCTL_SYNC_PUSH || mode == RPMEMCTL_SYNC_PULL ||
	       mode == RPMEMCTL_SYNC_VERIFY || mode == RPMEMCTL_SYNC_MIRROR;
}

/* client_sync_flags_valid -- only known RPMEMCTL_SYNC_* flags */
int client_sync_flags_valid(unsigned flags)
{
	return !(flags & ~(RPMEMCTL_SYNC_DRY_RUN | RPMEMCTL_SYNC_FULL |
			   RPMEMCTL_SYNC_DISCARD_TARGET |
			   RPMEMCTL_SYNC_DISCARD_LOCAL));
}

/* client_sync_bs_valid -- a power of two from 4 KiB to 64 MiB (not 0) */
int client_sync_bs_valid(uint32_t bs)
{
	return rpmem_bs_ok(bs, CLIENT_SYNC_MIN_BS);
}

/* rpmemctl_sync_cfg_new -- push, no flags, default blocks, no callbacks */
RPMEM_EXPORT int rpmemctl_sync_cfg_new(struct rpmemctl_sync_cfg **out)
{
	client_api_begin();
	if (!out) {
		client_set_last(-EINVAL, "invalid argument");
		return -EINVAL;
	}
	struct rpmemctl_sync_cfg *cfg = calloc(1, sizeof(*cfg));
	if (!cfg) {
		client_set_last(-ENOMEM, "out of memory");
		return -ENOMEM;
	}
	cfg->mode = RPMEMCTL_SYNC_PUSH;
	cfg->local_fd = -1;
	*out = cfg;
	return 0;
}

/* rpmemctl_sync_cfg_delete -- free the configuration; NULL is fine */
RPMEM_EXPORT void rpmemctl_sync_cfg_delete(struct rpmemctl_sync_cfg **cfg)
{
	if (!cfg || !*cfg)
		return;
	free((*cfg)->source_buf);
	free((*cfg)->history);
	free(*cfg);
	*cfg = NULL;
}

/* rpmemctl_sync_cfg_set_mode -- push, pull, verify or mirror */
RPMEM_EXPORT int rpmemctl_sync_cfg_set_mode(struct rpmemctl_sync_cfg *cfg,
					    enum rpmemctl_sync_mode mode)
{
	client_api_begin();
	if (!cfg || !client_sync_mode_valid(mode)) {
		client_set_last(-EINVAL, "invalid sync mode %d", (int)mode);
		return -EINVAL;
	}
	cfg->mode = mode;
	return 0;
}

/* rpmemctl_sync_cfg_set_flags -- RPMEMCTL_SYNC_* flags */
RPMEM_EXPORT int rpmemctl_sync_cfg_set_flags(struct rpmemctl_sync_cfg *cfg,
					     unsigned flags)
{
	client_api_begin();
	if (!cfg || !client_sync_flags_valid(flags)) {
		client_set_last(-EINVAL, "invalid sync flags 0x%x", flags);
		return -EINVAL;
	}
	cfg->flags = flags;
	return 0;
}

/* rpmemctl_sync_cfg_set_block_size -- coarse block size, 0 for the default */
RPMEM_EXPORT int
rpmemctl_sync_cfg_set_block_size(struct rpmemctl_sync_cfg *cfg,
				 uint32_t block_size)
{
	client_api_begin();
	if (!cfg || (block_size && !client_sync_bs_valid(block_size))) {
		client_set_last(-EINVAL, "invalid block size %u: a power of "
				"two from 4 KiB to 64 MiB", block_size);
		return -EINVAL;
	}
	cfg->block_size = block_size;
	return 0;
}

/*
 * rpmemctl_sync_cfg_set_source -- a copy of source, or none (NULL); the
 * target keeps its first RPMEM_STR_MAX bytes
 */
RPMEM_EXPORT int rpmemctl_sync_cfg_set_source(struct rpmemctl_sync_cfg *cfg,
					      const char *source)
{
	client_api_begin();
	if (!cfg) {
		client_set_last(-EINVAL, "invalid argument");
		return -EINVAL;
	}
	char *copy = NULL;
	if (source) {
		copy = strdup(source);
		if (!copy) {
			client_set_last(-ENOMEM, "out of memory");
			return -ENOMEM;
		}
	}
	free(cfg->source_buf);
	cfg->source_buf = copy;
	cfg->source = copy;
	return 0;
}

/* rpmemctl_sync_cfg_set_progress -- the progress callback and its arg */
RPMEM_EXPORT int rpmemctl_sync_cfg_set_progress(struct rpmemctl_sync_cfg *cfg,
						rpmemctl_progress_fn fn,
						void *arg)
{
	client_api_begin();
	if (!cfg) {
		client_set_last(-EINVAL, "invalid argument");
		return -EINVAL;
	}
	cfg->progress = fn;
	cfg->progress_arg = arg;
	return 0;
}

/* rpmemctl_sync_cfg_set_range -- the differing-range callback and its arg */
RPMEM_EXPORT int rpmemctl_sync_cfg_set_range(struct rpmemctl_sync_cfg *cfg,
					     rpmemctl_range_fn fn, void *arg)
{
	client_api_begin();
	if (!cfg) {
		client_set_last(-EINVAL, "invalid argument");
		return -EINVAL;
	}
	cfg->range = fn;
	cfg->range_arg = arg;
	return 0;
}

/*
 * rpmemctl_sync_cfg_set_local_fd -- the file behind the local copy (-1 =
 * none): the sync fails with -ESTALE, before it marks the pool
 * consistent, if the file changed while it ran
 */
RPMEM_EXPORT int rpmemctl_sync_cfg_set_local_fd(struct rpmemctl_sync_cfg *cfg,
						int fd)
{
	client_api_begin();
	if (!cfg || fd < -1) {
		client_set_last(-EINVAL, "invalid argument");
		return -EINVAL;
	}
	cfg->local_fd = fd;
	return 0;
}

/* rpmemctl_sync_cfg_set_local_hashes -- share the local copy's hashes */
RPMEM_EXPORT int
rpmemctl_sync_cfg_set_local_hashes(struct rpmemctl_sync_cfg *cfg,
				   struct rpmemctl_local_hashes *h)
{
	client_api_begin();
	if (!cfg) {
		client_set_last(-EINVAL, "invalid argument");
		return -EINVAL;
	}
	cfg->local_hashes = h;
	return 0;
}

/* rpmemctl_sync_cfg_set_dirty_log -- a push consults and clears log */
RPMEM_EXPORT int
rpmemctl_sync_cfg_set_dirty_log(struct rpmemctl_sync_cfg *cfg,
				struct rpmemctl_dirtylog *log)
{
	client_api_begin();
	if (!cfg) {
		client_set_last(-EINVAL, "invalid argument");
		return -EINVAL;
	}
	cfg->dirty_log = log;
	return 0;
}

/* rpmemctl_sync_cfg_set_history -- compare and record file's history */
RPMEM_EXPORT int rpmemctl_sync_cfg_set_history(struct rpmemctl_sync_cfg *cfg,
					       const char *file)
{
	client_api_begin();
	if (!cfg) {
		client_set_last(-EINVAL, "invalid argument");
		return -EINVAL;
	}
	char *copy = file ? strdup(file) : NULL;
	if (file && !copy) {
		client_set_last(-ENOMEM, "out of memory");
		return -ENOMEM;
	}
	free(cfg->history);
	cfg->history = copy;
	return 0;
}

/* rpmemctl_sync_cfg_set_commit -- a pull's hook before its history */
RPMEM_EXPORT int rpmemctl_sync_cfg_set_commit(struct rpmemctl_sync_cfg *cfg,
					      int (*fn)(void *arg), void *arg)
{
	client_api_begin();
	if (!cfg) {
		client_set_last(-EINVAL, "invalid argument");
		return -EINVAL;
	}
	cfg->commit = fn;
	cfg->commit_arg = arg;
	return 0;
}

/* rpmemctl_sync_result_get_gen_cmp -- how the histories compared */
RPMEM_EXPORT int
rpmemctl_sync_result_get_gen_cmp(const struct rpmemctl_sync_result *res)
{
	return res ? res->gen_cmp : RPMEMCTL_GEN_UNKNOWN;
}

/* rpmemctl_sync_result_get_dirty_only -- only the marked extents moved */
RPMEM_EXPORT int
rpmemctl_sync_result_get_dirty_only(const struct rpmemctl_sync_result *res)
{
	return res ? res->dirty_only : 0;
}

/* rpmemctl_sync_result_get_note -- what the target did beyond the sync */
RPMEM_EXPORT const char *
rpmemctl_sync_result_get_note(const struct rpmemctl_sync_result *res)
{
	return res ? res->note : "";
}

/* rpmemctl_sync_result_get_dirty_fallback -- why everything was compared */
RPMEM_EXPORT const char *
rpmemctl_sync_result_get_dirty_fallback(const struct rpmemctl_sync_result *res)
{
	return res ? res->dirty_fallback : "";
}

/* rpmemctl_sync_cfg_set_bwlimit -- pace pool data sent (0: no limit) */
RPMEM_EXPORT int rpmemctl_sync_cfg_set_bwlimit(struct rpmemctl_sync_cfg *cfg,
					       uint64_t bytes_per_s)
{
	client_api_begin();
	if (!cfg || (bytes_per_s && bytes_per_s < CLIENT_BWLIMIT_MIN)) {
		client_set_last(-EINVAL,
				"invalid bandwidth limit %llu bytes per second (0, or at least %d)",
				(unsigned long long)bytes_per_s,
				CLIENT_BWLIMIT_MIN);
		return -EINVAL;
	}
	cfg->bwlimit = bytes_per_s;
	return 0;
}

/* rpmemctl_sync_result_new -- a result with every counter 0 */
RPMEM_EXPORT int rpmemctl_sync_result_new(struct rpmemctl_sync_result **out)
{
	client_api_begin();
	if (!out) {
		client_set_last(-EINVAL, "invalid argument");
		return -EINVAL;
	}
	struct rpmemctl_sync_result *res = calloc(1, sizeof(*res));
	if (!res) {
		client_set_last(-ENOMEM, "out of memory");
		return -ENOMEM;
	}
	*out = res;
	return 0;
}

/* rpmemctl_sync_result_delete -- free the result; NULL is fine */
RPMEM_EXPORT void
rpmemctl_sync_result_delete(struct rpmemctl_sync_result **res)
{
	if (!res || !*res)
		return;
	free(*res);
	*res = NULL;
}

/* RESULT_GETTER -- rpmemctl_sync_result_get_<field>: the field, 0 for NULL */
#define RESULT_GETTER(field)                                               \
	RPMEM_EXPORT uint64_t rpmemctl_sync_result_get_##field(            \
		const struct rpmemctl_sync_result *res)                    \
	{                                                                  \
		return res ? res->field : 0;                               \
	}

RESULT_GETTER(size)
RESULT_GETTER(block_size)
RESULT_GETTER(blocks_total)
RESULT_GETTER(blocks_differ)
RESULT_GETTER(bytes_differ)
RESULT_GETTER(bytes_transferred)
RESULT_GETTER(data_bytes)
RESULT_GETTER(generation)
RESULT_GETTER(elapsed_ns)
RESULT_GETTER(blocks_compared)
