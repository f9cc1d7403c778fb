/* SPDX-License-Identifier: BSD-3-Clause */
/* events.c -- rpmemctl events: what happens on a target, as it happens */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmd.h"
#include "json.h"

static const char events_usage[] =
	"usage: rpmemctl events [options] HOST[:PORT]\n"
	"\n"
	"Print what happens on the target, one line per event, until\n"
	"interrupted: sessions opened and closed, pools created, removed and\n"
	"changing state, transfers started and finished, refusals at limits.\n"
	"\n"
	"  -n, --now              first the current pools and sessions\n"
	"                         ('exists' lines), then 'exists -'\n"
	"  -c, --count N          exit after N events (0 after N, 1 if\n"
	"                         --timeout came first)\n"
	"  -t, --timeout S        exit after S seconds\n"
	"  -r, --reconnect        when the target closes the stream (rpmemd\n"
	"                         restarted or stopped), say so and reconnect,\n"
	"                         once a second, until --timeout (with --now,\n"
	"                         the current state again)\n"
	"  -j, --json             one JSON object per event, one a line\n"
	"  -v, --verbose          more detail on stderr\n"
	"  -q, --quiet            no informational lines\n"
	"  -h, --help             this help\n";

static const struct option events_opts[] = {
	CMD_COMMON_OPTS,
	{ "json", no_argument, NULL, 'j' },
	{ "now", no_argument, NULL, 'n' },
	{ "count", required_argument, NULL, 'c' },
	{ "timeout", required_argument, NULL, 't' },
	{ "reconnect", no_argument, NULL, 'r' },
	{ NULL, 0, NULL, 0 },
};

/* kv -- " key:value", the value quoted (JSON style) if it needs it */
static void kv(const char *key, const char *v)
{
	printf(" %s:", key);
	if (!*v || strpbrk(v, " \"\\") ||
	    rpmemctl_text_escape(v, NULL, 0) != strlen(v))
		json_escape(stdout, v);
	else
		fputs(v, stdout);
}

/* kv_u64 -- " key:N" */
static void kv_u64(const char *key, uint64_t v)
{
	printf(" %s:%llu", key, (unsigned long long)v);
}

/*
 * gen_action -- text is a GEN's ("ACTION key:value ...", ACTION one of
 * the target's generation ops), not a version's report: its action's
 * length, else 0
 */
static size_t gen_action(const char *text)
{
	static const char *const acts[] = { "promote", "demote", "adopt",
					    "split-brain", NULL };
	size_t n = strcspn(text, " ");
	for (const char *const *a = acts; *a; a++)
		if (strlen(*a) == n && !strncmp(text, *a, n))
			return n;
	return 0;
}

/*
 * pool_text -- a pool event's GEN text: its action, then each
 * well-formed key:value (new keys print as they come); other words are
 * left out
 */
static void pool_text(const char *text)
{
	char buf[CMD_LINE_MAX], *save = NULL;
	snprintf(buf, sizeof(buf), "%s", text);
	char *w = strtok_r(buf, " ", &save);
	if (!w)
		return;
	kv("action", w);
	while ((w = strtok_r(NULL, " ", &save))) {
		char *colon = strchr(w, ':');
		if (!colon || colon == w ||
		    strspn(w, "abcdefghijklmnopqrstuvwxyz_") != (size_t)(colon - w))
			continue;
		*colon = '\0';
		kv(w, colon + 1);
	}
}

/* action_of -- the first word of a pool event's text into buf, or "" */
static const char *action_of(const struct rpmemctl_event *e, char *buf,
			     size_t len)
{
	const char *t = rpmemctl_event_text(e);
	size_t n = gen_action(t);
	buf[0] = '\0';
	if (rpmemctl_event_object(e) == RPMEMCTL_EVENT_POOL && n && n < len)
		snprintf(buf, len, "%.*s", (int)n, t);
	return buf;
}

/* print_line -- one event as "VERB OBJECT key:value ..." */
static void print_line(const struct rpmemctl_event *e)
{
	enum rpmemctl_event_type t = rpmemctl_event_type(e);
	enum rpmemctl_event_object o = rpmemctl_event_object(e);
	char name[2 * 65 + 2];

	printf("%s %s", rpmemctl_event_type_str(t),
	       rpmemctl_event_object_str(o));
	snprintf(name, sizeof(name), "%s/%s", rpmemctl_event_region(e),
		 rpmemctl_event_pool(e));
	switch (o) {
	case RPMEMCTL_EVENT_POOL:
		kv("name", name);
		if (t != RPMEMCTL_EVENT_DESTROY) {
			kv("state", rpmemctl_pool_state_str(
					    rpmemctl_event_state(e)));
			kv_u64("generation", rpmemctl_event_generation(e));
			kv_u64("size", rpmemctl_event_size(e));
		}
		if (t == RPMEMCTL_EVENT_EXISTS && *rpmemctl_event_client(e))
			kv("writer", rpmemctl_event_client(e));
		if (t != RPMEMCTL_EVENT_EXISTS)
			kv_u64("session", rpmemctl_event_session_id(e));
		if (t == RPMEMCTL_EVENT_CHANGE &&
		    gen_action(rpmemctl_event_text(e)))
			pool_text(rpmemctl_event_text(e));
		break;
	case RPMEMCTL_EVENT_SESSION:
		kv_u64("id", rpmemctl_event_session_id(e));
		kv("peer", rpmemctl_event_peer(e));
		kv("client", rpmemctl_event_client(e));
		if (*rpmemctl_event_identity(e))
			kv("identity", rpmemctl_event_identity(e));
		if (t != RPMEMCTL_EVENT_CREATE)
			kv_u64("bytes_written", rpmemctl_event_bytes(e));
		if (*rpmemctl_event_text(e))
			kv("reason", rpmemctl_event_text(e));
		break;
	case RPMEMCTL_EVENT_TRANSFER:
		kv("pool", name);
		kv_u64("session", rpmemctl_event_session_id(e));
		kv("peer", rpmemctl_event_peer(e));
		if (t == RPMEMCTL_EVENT_DESTROY) {
			kv_u64("bytes", rpmemctl_event_bytes(e));
			kv("result", rpmemctl_event_text(e));
		}
		break;
	case RPMEMCTL_EVENT_CONNECTION:
		kv("peer", rpmemctl_event_peer(e));
		if (rpmemctl_event_session_id(e))
			kv_u64("session", rpmemctl_event_session_id(e));
		kv("limit", rpmemctl_event_limit(e));
		kv("reason", rpmemctl_event_text(e));
		break;
	default:
		if (t == RPMEMCTL_EVENT_OVERFLOW) {
			kv_u64("lost", rpmemctl_event_lost(e));
			kv("reason", rpmemctl_event_text(e));
		}
		break;
	}
	putchar('\n');
}

/* print_json -- one event as one JSON object on a line */
static void print_json(const struct rpmemctl_event *e, const char *hp)
{
	char action[CMD_WORD_MAX];
	struct json j;

	json_begin(&j, stdout, "events", hp);
	json_str(&j, "event", rpmemctl_event_type_str(rpmemctl_event_type(e)));
	json_str(&j, "object",
		 rpmemctl_event_object_str(rpmemctl_event_object(e)));
	json_u64(&j, "time_ms", rpmemctl_event_time_ms(e));
	json_u64(&j, "session", rpmemctl_event_session_id(e));
	json_str(&j, "region", rpmemctl_event_region(e));
	json_str(&j, "pool", rpmemctl_event_pool(e));
	json_str(&j, "state", rpmemctl_pool_state_str(rpmemctl_event_state(e)));
	json_u64(&j, "generation", rpmemctl_event_generation(e));
	json_u64(&j, "pool_size", rpmemctl_event_size(e));
	json_u64(&j, "bytes", rpmemctl_event_bytes(e));
	json_u64(&j, "lost", rpmemctl_event_lost(e));
	json_str(&j, "peer", rpmemctl_event_peer(e));
	json_str(&j, "client", rpmemctl_event_client(e));
	json_str(&j, "identity", rpmemctl_event_identity(e));
	json_str(&j, "limit", rpmemctl_event_limit(e));
	json_str(&j, "text", rpmemctl_event_text(e));
	json_str(&j, "action", action_of(e, action, sizeof(action)));
	json_end(&j);
}

/* a subscription, kept across reconnects with --reconnect */
struct sub {
	struct rpmemctl_ctx *ctx;
	struct cmd_target t;
	unsigned flags;
	int reconnect;
	uint64_t end; /* --timeout's, in cmd_now_ns; 0: none */
	char hp[CMD_HP_MAX];
	struct rpmemctl_session *sess;
	struct rpmemctl_events *ev;
};

/* sub_close -- the subscription and its session ended */
static void sub_close(struct sub *b)
{
	rpmemctl_events_delete(&b->ev);
	rpmemctl_session_close(&b->sess);
}

/*
 * sub_resume -- the stream ended with ret: said; with --reconnect,
 * subscribe again, once a second until --timeout; 0 once subscribed,
 * CMD_EXIT_DIFFER if --timeout came first, else the exit code
 */
static int sub_resume(struct sub *b, int ret)
{
	int code = cmd_remote_err(b->ctx, b->sess, ret, NULL,
				  "the event stream of %s ended (the target closed it: rpmemd stopped or restarted, or this subscriber fell too far behind)%s",
				  b->hp, b->reconnect ?
				  "; reconnecting" :
				  "; events after this were not seen (--reconnect follows a target across restarts)");
	sub_close(b);
	if (!b->reconnect)
		return code;
	for (;;) {
		struct timespec ts = { 1, 0 };
		nanosleep(&ts, NULL);
		if (b->end && cmd_now_ns() >= b->end)
			return CMD_EXIT_DIFFER;
		/* one message per outage, not one per attempt */
		b->ctx->mute = 1;
		code = cmd_connect(b->ctx, &b->t, RPMEMCTL_TRANSPORT_AUTO,
				   &b->sess);
		b->ctx->mute = 0;
		if (!code && !rpmemctl_events_subscribe(b->sess, b->flags,
							&b->ev))
			break;
		sub_close(b);
	}
	cmd_err(b->ctx, "reconnected to %s: events while it was away were not seen",
		b->hp);
	return 0;
}

/* cmd_events -- rpmemctl events */
int cmd_events(int argc, char **argv, struct rpmemctl_ctx *ctx)
{
	const struct cmd_open o = { 1, 1, RPMEMCTL_TARGET_NO_PATH, NULL,
				    RPMEMCTL_TRANSPORT_AUTO };
	struct sub b = { .ctx = ctx };
	const struct rpmemctl_event *e;
	uint64_t count = 0, timeout_s = 0, seen = 0;
	int c, ret, code = 0;

	while ((c = cmd_getopt(ctx, argc, argv, CMD_COMMON_SHORT "jnc:t:r",
			       events_opts, events_usage, &code)) != -1) {
		switch (c) {
		case -2:
			return code;
		case 'n':
			b.flags |= RPMEMCTL_EVENTS_NOW;
			break;
		case 'r':
			b.reconnect = 1;
			break;
		case 'c':
			if (cmd_parse_num(optarg, UINT32_MAX, &count))
				return cmd_usage_error(ctx, "invalid --count '%s' (a number of events, at least 1)",
						       optarg);
			break;
		case 't':
			if (cmd_parse_num(optarg, 86400 * 365, &timeout_s))
				return cmd_usage_error(ctx, "invalid --timeout '%s' (seconds, at least 1)",
						       optarg);
			break;
		}
	}
	code = cmd_open_target(ctx, argc, argv, &o, &b.t, b.hp, &b.sess);
	if (code)
		return code;
	ret = rpmemctl_events_subscribe(b.sess, b.flags, &b.ev);
	if (ret) {
		code = cmd_remote_err(ctx, b.sess, ret, NULL,
				      "cannot subscribe to the events of %s",
				      b.hp);
		goto out;
	}
	b.end = timeout_s ? cmd_now_ns() + timeout_s * 1000000000ull : 0;
	while (!count || seen < count) {
		int ms = -1;
		if (b.end) {
			uint64_t now = cmd_now_ns();
			if (now >= b.end)
				break;
			ms = (int)((b.end - now + 999999) / 1000000);
		}
		ret = rpmemctl_events_next(b.ev, ms, &e);
		if (ret == -ETIMEDOUT && b.end)
			break;
		if (ret) {
			code = sub_resume(&b, ret);
			if (code == CMD_EXIT_DIFFER)
				break; /* --timeout while reconnecting */
			if (code)
				goto out;
			continue;
		}
		if (ctx->json)
			print_json(e, b.hp);
		else
			print_line(e);
		if (fflush(stdout)) {
			code = CMD_EXIT_INTERNAL;
			goto out;
		}
		seen++;
	}
	code = count && seen < count ? CMD_EXIT_DIFFER : CMD_EXIT_OK;
out:
	sub_close(&b);
	return code;
}
