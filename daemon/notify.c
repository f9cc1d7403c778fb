/* SPDX-License-Identifier: BSD-3-Clause */
/* notify.c -- tell systemd (sd_notify) the state and liveness of rpmemd */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <systemd/sd-daemon.h>

#include "log.h"
#include "notify.h"
#include "session.h"
#include "store.h"
#include "util.h"

/* NOTIFY_TEXT_MAX -- room for one sd_notify message or STATUS= text */
#define NOTIFY_TEXT_MAX 128

#define NS_PER_MS 1000000ull
#define NS_PER_US 1000ull
#define NS_PER_SEC 1000000000ull

/* the main thread's notification state */
static struct {
	int on;		    /* NOTIFY_SOCKET is set */
	int failed;	    /* a send failed (logged once) */
	uint64_t wd_ns;	    /* WATCHDOG=1 period: half the interval; 0 off */
	uint64_t next_wd;   /* CLOCK_MONOTONIC ns of the next WATCHDOG=1 */
	uint64_t status_ns; /* period of the STATUS= check */
	uint64_t next_status;
	char status[NOTIFY_TEXT_MAX]; /* the last STATUS= sent */
} nt;

/* notify_send -- one sd_notify message; the first failure is logged */
static void notify_send(const char *msg)
{
	int ret = sd_notify(0, msg);
	if (ret < 0 && !nt.failed) {
		WARN("sd_notify to $NOTIFY_SOCKET failed: %s; systemd is not told the daemon's state",
		     strerror(-ret));
		nt.failed = 1;
	}
}

/* plural -- "s" unless n is 1 */
static const char *plural(unsigned n)
{
	return n == 1 ? "" : "s";
}

/* status_text -- "N sessions, N pools open; N writing" into buf */
static void status_text(struct rpmemd_sessions *set, char *buf, size_t len)
{
	struct rpmemd_regions *rs = set->regions;
	unsigned sessions, pools = 0, writing = 0;

	pthread_mutex_lock(&set->lock);
	sessions = set->established;
	pthread_mutex_unlock(&set->lock);
	rpmemd_pools_open_count(rs, &pools, &writing);
	snprintf(buf, len, "%u session%s, %u pool%s open; %u writing", sessions,
		 plural(sessions), pools, plural(pools), writing);
}

/* send_status -- STATUS= with the counts of now, if they changed */
static void send_status(struct rpmemd_sessions *set)
{
	char text[sizeof(nt.status)], msg[sizeof(nt.status) + 16];

	status_text(set, text, sizeof(text));
	if (!strcmp(text, nt.status))
		return;
	rpmem_strlcpy(nt.status, text, sizeof(nt.status));
	snprintf(msg, sizeof(msg), "STATUS=%s", text);
	notify_send(msg);
}

void rpmemd_notify_init(void)
{
	uint64_t usec = 0;
	const char *sock = getenv("NOTIFY_SOCKET");

	memset(&nt, 0, sizeof(nt));
	nt.on = sock && *sock;
	if (!nt.on)
		return;
	nt.status_ns = RPMEMD_NOTIFY_STATUS_SEC * NS_PER_SEC;
	if (sd_watchdog_enabled(0, &usec) > 0 && usec > 0) {
		nt.wd_ns = usec * NS_PER_US / 2;
		if (nt.wd_ns < nt.status_ns)
			nt.status_ns = nt.wd_ns;
		INFO("systemd watchdog: %llu ms; alive every %llu ms",
		     (unsigned long long)(usec / 1000),
		     (unsigned long long)(nt.wd_ns / NS_PER_MS));
	}
	uint64_t now = rpmem_now_ns();
	nt.next_wd = now + nt.wd_ns;
	nt.next_status = now + nt.status_ns;
}

void rpmemd_notify_ready(struct rpmemd_sessions *set)
{
	char text[sizeof(nt.status)], msg[sizeof(nt.status) + 32];

	if (!nt.on)
		return;
	status_text(set, text, sizeof(text));
	rpmem_strlcpy(nt.status, text, sizeof(nt.status));
	snprintf(msg, sizeof(msg), "READY=1\nSTATUS=%s", text);
	notify_send(msg);
}

void rpmemd_notify_reloading(void)
{
	char msg[NOTIFY_TEXT_MAX];

	if (!nt.on)
		return;
	/* MONOTONIC_USEC: what Type=notify-reload (systemd 253) expects */
	snprintf(msg, sizeof(msg),
		 "RELOADING=1\nSTATUS=reloading\nMONOTONIC_USEC=%llu",
		 (unsigned long long)(rpmem_now_ns() / NS_PER_US));
	nt.status[0] = '\0';
	notify_send(msg);
}

void rpmemd_notify_stopping(struct rpmemd_sessions *set)
{
	char msg[NOTIFY_TEXT_MAX];

	if (!nt.on)
		return;
	unsigned n = rpmemd_sessions_count(set);
	snprintf(msg, sizeof(msg),
		 "STOPPING=1\nSTATUS=stopping: %u session%s to close", n,
		 plural(n));
	notify_send(msg);
}

long rpmemd_notify_due_ms(void)
{
	if (!nt.on)
		return -1;
	uint64_t now = rpmem_now_ns(), due = nt.next_status;
	if (nt.wd_ns && nt.next_wd < due)
		due = nt.next_wd;
	if (due <= now)
		return 0;
	/* rounded up: waking before the due time would spin */
	return (long)((due - now + NS_PER_MS - 1) / NS_PER_MS);
}

void rpmemd_notify_tick(struct rpmemd_sessions *set)
{
	if (!nt.on)
		return;
	uint64_t now = rpmem_now_ns();
	if (nt.wd_ns && now >= nt.next_wd) {
		notify_send("WATCHDOG=1");
		nt.next_wd = now + nt.wd_ns;
	}
	if (now >= nt.next_status)
		nt.next_status = now + nt.status_ns;
	send_status(set);
}
