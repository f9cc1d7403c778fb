/* SPDX-License-Identifier: BSD-3-Clause */
/* pace.h -- the daemon-wide bandwidth limit on incoming WRITE data */
#ifndef RPMEMD_PACE_H
#define RPMEMD_PACE_H

#include <pthread.h>
#include <stdint.h>

/* bytes of WRITE data received between two looks at the limit */
#define RPMEMD_PACE_CHUNK (64u << 10)
/* credit an idle pacer keeps: makes up for late wake-ups, 10 ms */
#define RPMEMD_PACE_SLACK_NS 10000000ull

/*
 * struct rpmemd_pacer -- one virtual clock for all sessions: each chunk
 * received reserves its time at the rate after the chunks before it, so
 * the daemon takes in at most `rate` bytes a second in all
 */
struct rpmemd_pacer {
	pthread_mutex_t lock;
	uint64_t rate;	  /* bytes per second; 0 = no limit */
	uint64_t next_ns; /* CLOCK_MONOTONIC when the next chunk may start */
};

/* rpmemd_pacer_init -- no limit; 0 or -errno */
int rpmemd_pacer_init(struct rpmemd_pacer *p);
/* rpmemd_pacer_fini -- release the lock */
void rpmemd_pacer_fini(struct rpmemd_pacer *p);
/* rpmemd_pacer_set_rate -- bytes per second from now on (0: none) */
void rpmemd_pacer_set_rate(struct rpmemd_pacer *p, uint64_t rate);
/* rpmemd_pacer_rate -- the rate in force (0: none) */
uint64_t rpmemd_pacer_rate(struct rpmemd_pacer *p);
/*
 * rpmemd_pacer_take -- reserve the time to receive n bytes: how many ns
 * the caller must wait before it reads them (0: at once, or no limit)
 */
uint64_t rpmemd_pacer_take(struct rpmemd_pacer *p, uint64_t n);

#endif
