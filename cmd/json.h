/* SPDX-License-Identifier: BSD-3-Clause */
/* json.h -- a tiny streaming JSON emitter for rpmemctl --json */
#ifndef RPMEMCTL_JSON_H
#define RPMEMCTL_JSON_H

#include <stdint.h>
#include <stdio.h>

#define JSON_MAX_DEPTH 16

/*
 * the schema of every top-level object (its "schema" key): raised when a
 * key is renamed, removed or changes its type or meaning; see docs/JSON.md
 * and tests/json/schema.json
 */
#define RPMEMCTL_JSON_SCHEMA 2

/*
 * Values are written as they come, compactly, to one FILE. A key is given
 * inside objects and must be NULL inside arrays and at the top level.
 * json_end() closes what is still open and ends the line.
 */
struct json {
	FILE *f;
	int depth;
	int first[JSON_MAX_DEPTH]; /* no member written yet at this level */
	char close[JSON_MAX_DEPTH];
};

void json_init(struct json *j, FILE *f);
/*
 * json_begin -- json_init and open the top-level object with the keys
 * every one has: "schema", "command" and "target" (the daemon, HOST:PORT)
 */
void json_begin(struct json *j, FILE *f, const char *command,
		const char *target);
void json_obj_begin(struct json *j, const char *key);
void json_obj_end(struct json *j);
void json_arr_begin(struct json *j, const char *key);
void json_arr_end(struct json *j);
/* json_str -- a string value, escaped; NULL is written as null */
void json_str(struct json *j, const char *key, const char *v);
void json_u64(struct json *j, const char *key, uint64_t v);
void json_i64(struct json *j, const char *key, int64_t v);
/* json_double -- a finite number; NaN and infinities are written as 0 */
void json_double(struct json *j, const char *key, double v);
void json_bool(struct json *j, const char *key, int v);
void json_null(struct json *j, const char *key);
void json_end(struct json *j);

/* json_escape -- write s as a quoted JSON string */
void json_escape(FILE *f, const char *s);

#endif
