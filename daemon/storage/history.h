/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * history.h -- the history layer of the storage (versions, cuts, scrub
 * records, generations): the layers below it never call it by name; it
 * registers what they ask of it (docs/ARCHITECTURE.md, "The storage
 * layers")
 */
#ifndef RPMEMD_HISTORY_H
#define RPMEMD_HISTORY_H

/*
 * rpmemd_history_init -- register the history layer's callbacks with the
 * journal (the reclaim callback, version space, keep, image check); once,
 * before any region opens
 */
void rpmemd_history_init(void);

#endif
