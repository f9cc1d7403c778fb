/* SPDX-License-Identifier: BSD-3-Clause */
/* retain.c -- retention policies for versions (retain.h) */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "retain.h"
#include "util.h"

static const char *const rule_name[] = { "last", "hourly", "daily",
					 "weekly", "monthly" };
#define NRULES 5

/* rule -- the count of rule i of k */
static unsigned *rule(struct rpmem_keep *k, int i)
{
	unsigned *r[NRULES] = { &k->last, &k->hourly, &k->daily, &k->weekly,
				&k->monthly };
	return r[i];
}

/* parse_one -- "name=N" of len bytes into k */
static int parse_one(const char *s, size_t len, struct rpmem_keep *k,
		     char *err, size_t errlen)
{
	const char *eq = memchr(s, '=', len);
	char *end;
	int i;

	for (i = 0; eq && i < NRULES; i++)
		if (strlen(rule_name[i]) == (size_t)(eq - s) &&
		    !strncmp(s, rule_name[i], (size_t)(eq - s)))
			break;
	if (!eq || i == NRULES)
		return rpmem_set_err(err, errlen,
				     "'%.*s' is not a retention rule (last=N, hourly=N, daily=N, weekly=N, monthly=N)",
				     (int)len, s);
	errno = 0;
	unsigned long v = strtoul(eq + 1, &end, 10);
	if (eq + 1 == s + len || end != s + len || errno || v == 0 ||
	    v > 100000 || eq[1] == '-' || eq[1] == '+')
		return rpmem_set_err(err, errlen,
				     "'%.*s': the count must be a number from 1 to 100000",
				     (int)len, s);
	*rule(k, i) = (unsigned)v;
	return 0;
}

int rpmem_keep_parse(const char *s, struct rpmem_keep *k, char *err,
		     size_t errlen)
{
	struct rpmem_keep n = { 0 };

	if (!s || !*s || strlen(s) >= RPMEM_KEEP_MAX)
		return rpmem_set_err(err, errlen,
				     "a retention policy is a list such as 'last=10,daily=7' (at most %d characters)",
				     RPMEM_KEEP_MAX - 1);
	while (*s) {
		size_t len = strcspn(s, ",");
		int ret = parse_one(s, len, &n, err, errlen);
		if (ret)
			return ret;
		s += len;
		if (*s == ',' && !*++s)
			return rpmem_set_err(err, errlen,
					     "a retention policy does not end with ','");
	}
	*k = n;
	return 0;
}

void rpmem_keep_format(const struct rpmem_keep *k, char *buf, size_t len)
{
	struct rpmem_keep c = *k;
	size_t at = 0;

	buf[0] = '\0';
	for (int i = 0; i < NRULES && at < len; i++)
		if (*rule(&c, i))
			at += (size_t)snprintf(buf + at, len - at, "%s%s=%u",
					       at ? "," : "", rule_name[i],
					       *rule(&c, i));
}

int rpmem_keep_all(const struct rpmem_keep *k)
{
	return !k->last && !k->hourly && !k->daily && !k->weekly &&
	       !k->monthly;
}

/* bucket -- the hour, day, week or month (rule 1..4) time t falls in */
static uint64_t bucket(int r, uint64_t t)
{
	time_t tt = (time_t)t;
	struct tm tm;

	switch (r) {
	case 1:
		return t / 3600;
	case 2:
		return t / 86400;
	case 3:
		return (t / 86400 + 3) / 7; /* 1970-01-01 was a Thursday */
	default:
		if (!gmtime_r(&tt, &tm))
			return t / (86400 * 31);
		return (uint64_t)tm.tm_year * 12 + (uint64_t)tm.tm_mon;
	}
}

void rpmem_keep_apply(const struct rpmem_keep *k, const uint64_t *time,
		      size_t n, uint8_t *keep)
{
	struct rpmem_keep c = *k;

	for (size_t i = 0; i < n; i++)
		keep[i] = rpmem_keep_all(k) || i < k->last;
	for (int r = 1; r < NRULES; r++) {
		unsigned left = *rule(&c, r);
		for (size_t i = 0; i < n && left; i++) {
			/* the newest of its bucket: none newer in it */
			if (i && bucket(r, time[i - 1]) == bucket(r, time[i]))
				continue;
			keep[i] = 1;
			left--;
		}
	}
}
