/* SPDX-License-Identifier: BSD-3-Clause */
/* notify.h -- tell systemd (sd_notify) the daemon's state and liveness */
#ifndef RPMEMD_NOTIFY_H
#define RPMEMD_NOTIFY_H

struct rpmemd_sessions;

/*
 * Every call here is for the main thread only and does nothing when
 * systemd did not ask for notifications (NOTIFY_SOCKET unset). A failed
 * send is logged once and otherwise ignored: the daemon serves anyway.
 */

/*
 * rpmemd_notify_init -- read NOTIFY_SOCKET and the watchdog interval
 * (WATCHDOG_USEC, WATCHDOG_PID); call once before the main loop
 */
void rpmemd_notify_init(void);

/* rpmemd_notify_ready -- READY=1 and STATUS=: the listeners accept */
void rpmemd_notify_ready(struct rpmemd_sessions *set);

/* rpmemd_notify_reloading -- RELOADING=1: a SIGHUP reload begins */
void rpmemd_notify_reloading(void);

/* rpmemd_notify_stopping -- STOPPING=1 and STATUS=: the drain begins */
void rpmemd_notify_stopping(struct rpmemd_sessions *set);

/*
 * rpmemd_notify_due_ms -- milliseconds until rpmemd_notify_tick has
 * something to send (0: now), or -1 when nothing is ever due: the main
 * loop's poll timeout
 */
long rpmemd_notify_due_ms(void);

/*
 * rpmemd_notify_tick -- WATCHDOG=1 when due (every half watchdog
 * interval), and STATUS= ("3 sessions, 12 pools open; 2 writing") if it
 * changed; call after every wake-up of the main loop. The counts are
 * looked at on every call and at least every RPMEMD_NOTIFY_STATUS_SEC.
 */
void rpmemd_notify_tick(struct rpmemd_sessions *set);

#define RPMEMD_NOTIFY_STATUS_SEC 10

#endif
