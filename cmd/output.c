/* SPDX-License-Identifier: BSD-3-Clause */
/* output.c -- rpmemctl: progress lines, tables and human-readable values */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"

/* --- progress ------------------------------------------------------------ */

void cmd_progress_init(struct cmd_progress *p, struct rpmemctl_ctx *ctx,
		       const char *label)
{
	p->ctx = ctx;
	p->label = label;
	p->start_ns = cmd_now_ns();
	p->enabled = !ctx->quiet && !ctx->json && !ctx->no_progress &&
		     isatty(STDERR_FILENO);
	p->shown = 0;
}

/* cmd_progress_cb -- one "\r" line on stderr once a transfer lasts > 1 s */
void cmd_progress_cb(uint64_t done, uint64_t total, void *arg)
{
	struct cmd_progress *p = arg;
	char d[CMD_NUM_MAX], t[CMD_NUM_MAX], r[CMD_NUM_MAX];
	uint64_t el;
	double rate;
	unsigned pct;

	if (!p || !p->enabled)
		return;
	el = cmd_now_ns() - p->start_ns;
	if (el < 1000000000ull)
		return;
	rate = (double)done / ((double)el / 1e9);
	pct = total ? (unsigned)(done * 100.0 / (double)total) : 100;
	fprintf(stderr, "\r%s: %s / %s  %3u%%  %s/s\033[K", p->label,
		rpmemctl_size_format(done, d, sizeof(d)),
		rpmemctl_size_format(total, t, sizeof(t)), pct,
		rpmemctl_size_format((uint64_t)rate, r, sizeof(r)));
	fflush(stderr);
	p->shown = 1;
}

/* cmd_progress_end -- clear the progress line */
void cmd_progress_end(struct cmd_progress *p)
{
	if (p->shown) {
		fputs("\r\033[K", stderr);
		fflush(stderr);
		p->shown = 0;
	}
}

/* --- tables -------------------------------------------------------------- */

int cmd_table_init(struct cmd_table *t, unsigned ncols, unsigned right,
		   const char *const *header)
{
	memset(t, 0, sizeof(*t));
	if (ncols == 0 || ncols > CMD_TABLE_MAX_COLS)
		return -EINVAL;
	t->ncols = ncols;
	t->right = right;
	return cmd_table_row(t, header);
}

/* cell_dup -- a copy of s, escaped (cmd_text); NULL or "" is "-" */
static char *cell_dup(const char *s)
{
	size_t n;
	char *c;

	if (!s || !s[0])
		s = "-";
	n = rpmemctl_text_escape(s, NULL, 0) + 1;
	c = malloc(n);
	if (c)
		rpmemctl_text_escape(s, c, n);
	return c;
}

/*
 * cmd_table_row -- add a row of ncols cells (copied, escaped: a cell may
 * hold what a target sent; NULL is "-")
 */
int cmd_table_row(struct cmd_table *t, const char *const *cells)
{
	char **c;
	unsigned i;

	if (t->nrows == t->cap) {
		unsigned cap = t->cap ? 2 * t->cap : 8;

		c = realloc(t->cells, (size_t)cap * t->ncols * sizeof(*c));
		if (!c)
			return -ENOMEM;
		t->cells = c;
		t->cap = cap;
	}
	c = t->cells + (size_t)t->nrows * t->ncols;
	for (i = 0; i < t->ncols; i++) {
		c[i] = cell_dup(cells[i]);
		if (!c[i]) {
			while (i--)
				free(c[i]);
			return -ENOMEM;
		}
	}
	t->nrows++;
	return 0;
}

void cmd_table_print(const struct cmd_table *t, FILE *f)
{
	size_t w[CMD_TABLE_MAX_COLS] = { 0 };
	unsigned r, i;

	for (r = 0; r < t->nrows; r++)
		for (i = 0; i < t->ncols; i++) {
			size_t n = strlen(t->cells[r * t->ncols + i]);

			if (n > w[i])
				w[i] = n;
		}
	for (r = 0; r < t->nrows; r++) {
		for (i = 0; i < t->ncols; i++) {
			const char *s = t->cells[r * t->ncols + i];
			int last = i + 1 == t->ncols;

			if (t->right & (1u << i))
				fprintf(f, "%*s", (int)w[i], s);
			else if (last)
				fputs(s, f);
			else
				fprintf(f, "%-*s", (int)w[i], s);
			fputs(last ? "\n" : "  ", f);
		}
	}
}

void cmd_table_free(struct cmd_table *t)
{
	size_t i;

	if (!t->cells)
		return;
	for (i = 0; i < (size_t)t->nrows * t->ncols; i++)
		free(t->cells[i]);
	free(t->cells);
	t->cells = NULL;
	t->nrows = t->cap = 0;
}

/* --- formatting ---------------------------------------------------------- */

const char *cmd_fmt_u64(uint64_t v, char *buf, size_t len)
{
	snprintf(buf, len, "%llu", (unsigned long long)v);
	return buf;
}

/* cmd_fmt_bytes -- "1000 bytes", "8 MiB (8388608 bytes)" */
const char *cmd_fmt_bytes(uint64_t v, char *buf, size_t len)
{
	char h[CMD_NUM_MAX];

	if (v < 1024)
		snprintf(buf, len, "%llu bytes", (unsigned long long)v);
	else
		snprintf(buf, len, "%s (%llu bytes)",
			 rpmemctl_size_format(v, h, sizeof(h)),
			 (unsigned long long)v);
	return buf;
}

const char *cmd_fmt_duration(uint64_t sec, char *buf, size_t len)
{
	if (sec >= 86400)
		snprintf(buf, len, "%llud %02lluh",
			 (unsigned long long)(sec / 86400),
			 (unsigned long long)(sec % 86400 / 3600));
	else if (sec >= 3600)
		snprintf(buf, len, "%lluh %02llum",
			 (unsigned long long)(sec / 3600),
			 (unsigned long long)(sec % 3600 / 60));
	else if (sec >= 60)
		snprintf(buf, len, "%llum %02llus",
			 (unsigned long long)(sec / 60),
			 (unsigned long long)(sec % 60));
	else
		snprintf(buf, len, "%llus", (unsigned long long)sec);
	return buf;
}

const char *cmd_fmt_time(uint64_t sec, char *buf, size_t len)
{
	time_t t = (time_t)sec;
	struct tm tm;

	if (sec == 0 || !localtime_r(&t, &tm) ||
	    !strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm))
		snprintf(buf, len, "-");
	return buf;
}
