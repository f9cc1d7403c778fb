/* SPDX-License-Identifier: BSD-3-Clause */
/* server.h -- listeners, the main loop, signals, reload and drain */
#ifndef RPMEMD_SERVER_H
#define RPMEMD_SERVER_H

#include "config.h"

struct rpmemd_server;

/* rpmemd_log_setup -- log level and sink from cfg (debug: stderr, debug) */
void rpmemd_log_setup(const struct rpmemd_config *cfg, int debug);

/*
 * rpmemd_server_new -- open the regions and the listeners of cfg (whose
 * contents the server takes over; cfg is cleared); fills *out. Returns
 * -errno after logging what failed. SIGHUP, SIGTERM and SIGINT are caught
 * from here on; rpmemd_server_run acts upon them.
 */
int rpmemd_server_new(struct rpmemd_config *cfg, int debug,
		      struct rpmemd_server **out);

/*
 * rpmemd_server_run -- serve until SIGTERM or SIGINT, then stop
 * accepting, let every session finish its current request and close its
 * pools, and return 0. SIGHUP reloads the configuration.
 */
int rpmemd_server_run(struct rpmemd_server *srv);

/* rpmemd_server_delete -- release everything; sessions must be done */
void rpmemd_server_delete(struct rpmemd_server **srv);

#endif
