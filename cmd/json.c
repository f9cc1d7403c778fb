/* SPDX-License-Identifier: BSD-3-Clause */
/* json.c -- a tiny streaming JSON emitter for rpmemctl --json */

/*
 * With --json every command writes exactly one JSON object, on one line,
 * to stdout and nothing else there (errors still go to stderr, and on an
 * error no object is written). The keys of every command's object, their
 * types and meanings are in docs/JSON.md and, machine-readably, in
 * tests/json/schema.json (tests/bats/json.bats checks the commands against
 * it); a key is added there first.
 */

#include <math.h>

#include "json.h"
#include "librpmemctl.h"

/* code_point -- the code point of the UTF-8 character p[n] */
static unsigned code_point(const unsigned char *p, size_t n)
{
	unsigned c = n == 2 ? p[0] & 0x1f : p[0] & 0x0f;

	for (size_t i = 1; i < n; i++)
		c = c << 6 | (p[i] & 0x3f);
	return c;
}

/*
 * json_escape -- write s as a quoted JSON string; UTF-8 passes through
 * except the controls a terminal acts on (C1 and bidirectional ones,
 * rpmemctl_utf8_control), written \u0080, \u202e, ...,
 * a byte that is not part of well-formed UTF-8 (a file name in another
 * encoding) becomes U+FFFD, written \ufffd, so that the document is UTF-8
 */
void json_escape(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n;

	fputc('"', f);
	for (; *p; p++) {
		switch (*p) {
		case '"':
			fputs("\\\"", f);
			break;
		case '\\':
			fputs("\\\\", f);
			break;
		case '\b':
			fputs("\\b", f);
			break;
		case '\f':
			fputs("\\f", f);
			break;
		case '\n':
			fputs("\\n", f);
			break;
		case '\r':
			fputs("\\r", f);
			break;
		case '\t':
			fputs("\\t", f);
			break;
		default:
			if (*p < 0x20 || *p == 0x7f) {
				fprintf(f, "\\u%04x", *p);
			} else if (!(n = rpmemctl_utf8_len((const char *)p))) {
				fputs("\\ufffd", f);
			} else if (rpmemctl_utf8_control((const char *)p)) {
				/* C1, bidi: valid JSON raw, not on a terminal */
				fprintf(f, "\\u%04x", code_point(p, n));
				p += n - 1;
			} else {
				fwrite(p, 1, n, f);
				p += n - 1;
			}
		}
	}
	fputc('"', f);
}

/* json_init -- an emitter writing to f, nothing open */
void json_init(struct json *j, FILE *f)
{
	j->f = f;
	j->depth = 0;
	j->first[0] = 1;
}

/* json_begin -- the top-level object and its schema, command and target */
void json_begin(struct json *j, FILE *f, const char *command,
		const char *target)
{
	json_init(j, f);
	json_obj_begin(j, NULL);
	json_u64(j, "schema", RPMEMCTL_JSON_SCHEMA);
	json_str(j, "command", command);
	json_str(j, "target", target);
}

/* json_key -- the separator and, inside an object, the key */
static void json_key(struct json *j, const char *key)
{
	if (!j->first[j->depth])
		fputc(',', j->f);
	j->first[j->depth] = 0;
	if (key) {
		json_escape(j->f, key);
		fputc(':', j->f);
	}
}

/* json_open -- start an object or an array */
static void json_open(struct json *j, const char *key, char open, char close)
{
	json_key(j, key);
	fputc(open, j->f);
	if (j->depth + 1 < JSON_MAX_DEPTH) {
		j->depth++;
		j->first[j->depth] = 1;
		j->close[j->depth] = close;
	}
}

static void json_close(struct json *j)
{
	if (j->depth > 0) {
		fputc(j->close[j->depth], j->f);
		j->depth--;
	}
}

void json_obj_begin(struct json *j, const char *key)
{
	json_open(j, key, '{', '}');
}

void json_obj_end(struct json *j)
{
	json_close(j);
}

void json_arr_begin(struct json *j, const char *key)
{
	json_open(j, key, '[', ']');
}

void json_arr_end(struct json *j)
{
	json_close(j);
}

void json_str(struct json *j, const char *key, const char *v)
{
	json_key(j, key);
	if (v)
		json_escape(j->f, v);
	else
		fputs("null", j->f);
}

void json_u64(struct json *j, const char *key, uint64_t v)
{
	json_key(j, key);
	fprintf(j->f, "%llu", (unsigned long long)v);
}

void json_i64(struct json *j, const char *key, int64_t v)
{
	json_key(j, key);
	fprintf(j->f, "%lld", (long long)v);
}

void json_double(struct json *j, const char *key, double v)
{
	json_key(j, key);
	if (!isfinite(v))
		v = 0;
	/* %.6g never gives a bare "." or a leading "+" */
	fprintf(j->f, "%.6g", v);
}

void json_bool(struct json *j, const char *key, int v)
{
	json_key(j, key);
	fputs(v ? "true" : "false", j->f);
}

void json_null(struct json *j, const char *key)
{
	json_key(j, key);
	fputs("null", j->f);
}

/* json_end -- close everything still open and end the line */
void json_end(struct json *j)
{
	while (j->depth > 0)
		json_close(j);
	fputc('\n', j->f);
}
