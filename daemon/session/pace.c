/* SPDX-License-Identifier: BSD-3-Clause */
/* pace.c -- the daemon-wide bandwidth limit on incoming WRITE data */
#include "pace.h"
#include "util.h"

int rpmemd_pacer_init(struct rpmemd_pacer *p)
{
	p->rate = 0;
	p->next_ns = 0;
	return -pthread_mutex_init(&p->lock, NULL);
}

void rpmemd_pacer_fini(struct rpmemd_pacer *p)
{
	pthread_mutex_destroy(&p->lock);
}

void rpmemd_pacer_set_rate(struct rpmemd_pacer *p, uint64_t rate)
{
	pthread_mutex_lock(&p->lock);
	p->rate = rate;
	p->next_ns = 0;
	pthread_mutex_unlock(&p->lock);
}

uint64_t rpmemd_pacer_rate(struct rpmemd_pacer *p)
{
	return __atomic_load_n(&p->rate, __ATOMIC_RELAXED);
}

uint64_t rpmemd_pacer_take(struct rpmemd_pacer *p, uint64_t n)
{
	uint64_t wait = 0;

	pthread_mutex_lock(&p->lock);
	if (p->rate) {
		uint64_t now = rpmem_now_ns();
		/*
		 * an idle link saves up at most RPMEMD_PACE_SLACK_NS of
		 * credit: enough to make up for sleeps that overshoot, so
		 * the average holds, and no real burst
		 */
		uint64_t floor = now > RPMEMD_PACE_SLACK_NS ?
					 now - RPMEMD_PACE_SLACK_NS :
					 0;
		uint64_t start = p->next_ns > floor ? p->next_ns : floor;
		p->next_ns = start + (uint64_t)((unsigned __int128)n *
						1000000000u / p->rate);
		wait = start > now ? start - now : 0;
	}
	pthread_mutex_unlock(&p->lock);
	return wait;
}
