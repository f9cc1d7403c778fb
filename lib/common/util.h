/* SPDX-License-Identifier: BSD-3-Clause */
/* util.h -- names, sizes, targets, time: small helpers shared by all parts */
#ifndef RPMEM_UTIL_H
#define RPMEM_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "proto.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define RPMEM_EXPORT __attribute__((visibility("default")))

/*
 * the rule for region and pool names: a name starting with '-' would read
 * as an option to the shell scripts that handle pool files, one starting
 * with '.' could clash with the metadata directory
 */
#define RPMEM_NAME_RULE \
	"1-64 of letters, digits, '.', '_', '-'; not starting with '.' or '-'"

/*
 * rpmem_name_valid -- a region or pool name (RPMEM_NAME_RULE): 1..64 of
 * [A-Za-z0-9._-], not starting with '.' or '-', so never "", ".", "..",
 * an option or a path. Returns 1 or 0.
 */
int rpmem_name_valid(const char *name);

/*
 * RPMEM_SIZE_MAX -- the largest size of a pool or a file (off_t:
 * 8 EiB less one byte); larger sizes are refused as such, by both ends
 */
#define RPMEM_SIZE_MAX ((uint64_t)INT64_MAX)
/* RPMEM_MAGIC_LEN -- the magic string that starts each rpmemd side file */
#define RPMEM_MAGIC_LEN 16

/*
 * rpmem_parse_size -- "4096", "64K", "64KiB", "1M", "2G", "1T" (powers of
 * 1024; a trailing "B" is allowed) into bytes. Returns 0 or -EINVAL
 * (empty, junk, negative) or -ERANGE (overflow).
 */
int rpmem_parse_size(const char *s, uint64_t *out);
/*
 * rpmem_parse_interval -- "500ms", "5s", "1m", "2h" (a bare number is
 * seconds) into nanoseconds; from 1 ms to 24 h, else -EINVAL or -ERANGE
 */
int rpmem_parse_interval(const char *s, uint64_t *ns);
/* RPMEM_SIZE_STR -- room for rpmem_fmt_size's text */
#define RPMEM_SIZE_STR 32
/* rpmem_fmt_size -- "64 MiB", "1.5 GiB" into buf */
const char *rpmem_fmt_size(uint64_t v, char *buf, size_t len);
/*
 * rpmem_memlock_limit -- 1 and the limit in *lim if this process's
 * RLIMIT_MEMLOCK is finite (a failed RDMA registration may be its fault),
 * 0 if it is unlimited or unknown
 */
int rpmem_memlock_limit(unsigned long long *lim);

struct rpmem_target {
	char host[256];
	char port[16];
	char region[RPMEM_NAME_MAX + 1]; /* "" if not given */
	char pool[RPMEM_NAME_MAX + 1];   /* "" if not given */
};

#define RPMEM_TARGET_NEED_REGION 1
#define RPMEM_TARGET_NEED_POOL 2 /* implies region */
#define RPMEM_TARGET_NO_PATH 4   /* only HOST[:PORT] allowed */

/*
 * rpmem_parse_target -- "HOST[:PORT][/REGION[/POOL]]", with an optional
 * "rpmem://" prefix; HOST may be a name, IPv4 or "[IPv6]". Names are
 * validated with rpmem_name_valid. Returns 0 or -EINVAL with a reason in
 * err[errlen].
 */
int rpmem_parse_target(const char *s, unsigned need, struct rpmem_target *t,
		       char *err, size_t errlen);

/*
 * Text sizes shared by both ends, the NUL included: RPMEM_HOST_MAX a host
 * name, RPMEM_PORT_STR a port, RPMEM_ADDR_STR an address with its port as
 * a message names it, RPMEM_TIME_STR a date and time
 */
#define RPMEM_HOST_MAX 256
#define RPMEM_PORT_STR 16
#define RPMEM_ADDR_STR 64
#define RPMEM_TIME_STR 32
/* RPMEM_UUID_LEN -- bytes of a uuid; RPMEM_UUID_STR -- its text, NUL too */
#define RPMEM_UUID_LEN 16
#define RPMEM_UUID_STR 37
/* rpmem_uuid_fmt -- 36-character text form of a 16-byte uuid */
void rpmem_uuid_fmt(const uint8_t uuid[RPMEM_UUID_LEN],
		    char out[RPMEM_UUID_STR]);
/* rpmem_uuid_parse -- returns 0 or -EINVAL */
int rpmem_uuid_parse(const char *s, uint8_t uuid[RPMEM_UUID_LEN]);
/*
 * rpmem_gen_ids_fmt -- generation ids as 16 hex digits each, joined by sep,
 * into out[len] (truncated to fit)
 */
void rpmem_gen_ids_fmt(const uint64_t *ids, unsigned n, const char *sep,
		       char *out, size_t len);
/*
 * rpmem_gen_ids_parse -- at most max ids of 16 hex digits joined by sep
 * (one character) from s; their count or -EINVAL
 */
int rpmem_gen_ids_parse(const char *s, char sep, uint64_t *ids,
			unsigned max);
/*
 * RPMEM_GEN_PROMOTED -- the bit set in the id a promotion makes (in place
 * or to a file) and clear in every other new id, so that a history shows
 * whether a copy was ever promoted (ids made before it are random in it)
 */
#define RPMEM_GEN_PROMOTED (1ull << 63)

/* rpmem_gen_new -- a random generation id, never 0, RPMEM_GEN_PROMOTED clear */
int rpmem_gen_new(uint64_t *id);
/* rpmem_gen_new_promotion -- a random promotion id, RPMEM_GEN_PROMOTED set */
int rpmem_gen_new_promotion(uint64_t *id);
/* rpmem_random -- len bytes from getrandom(2) */
int rpmem_random(void *buf, size_t len);

uint64_t rpmem_now_ns(void);   /* CLOCK_MONOTONIC */
uint64_t rpmem_wall_sec(void); /* CLOCK_REALTIME seconds */

/* rpmem_strlcpy -- bounded copy, always NUL-terminated; returns strlen(src) */
size_t rpmem_strlcpy(char *dst, const char *src, size_t size);

/*
 * rpmem_set_err -- printf into the caller's error buffer err[errlen] (NULL
 * or 0 bytes: nothing); returns -EINVAL
 */
int rpmem_set_err(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * rpmem_utf8_len -- the length in bytes (1 to 4) of the well-formed UTF-8
 * character s starts with, 0 if it starts with none (a stray continuation
 * byte, an overlong form, a surrogate, beyond U+10FFFF, a truncated one)
 */
size_t rpmem_utf8_len(const char *s);

/*
 * rpmem_utf8_control -- the length in bytes of the control character the
 * well-formed UTF-8 text s starts with, 0 if it starts with another one
 * (or s is ""): the C0 controls and DEL, the C1 controls U+0080-U+009F
 * (U+009B is CSI, U+009D OSC on a terminal), the bidirectional formatting
 * characters U+061C, U+200E, U+200F, U+202A-U+202E, U+2066-U+2069, and
 * the line and paragraph separators U+2028, U+2029. Text from a peer
 * shows none of them raw.
 */
size_t rpmem_utf8_control(const char *s);

/*
 * rpmem_str_sanitize -- make s fit for one line of text and for JSON: a
 * control character (rpmem_utf8_control) and every byte that is not part
 * of well-formed UTF-8 become one '?' each, in place
 */
void rpmem_str_sanitize(char *s);

/*
 * rpmem_escape -- in[n] (bytes from a peer) as text fit for a log line:
 * NUL, control characters (rpmem_utf8_control: every byte of a multibyte
 * one), bytes outside well-formed UTF-8 and '\\' as \\xHH; as much as
 * fits in out[size] (whole escapes only), always NUL-terminated. Returns
 * out.
 */
char *rpmem_escape(const void *in, size_t n, char *out, size_t size);

/*
 * rpmem_text_escape -- the text s (from a peer) as people are shown it:
 * a C0 control, DEL and a byte outside well-formed UTF-8 as \\xHH, any
 * other rpmem_utf8_control character as \\u{HHHH}, the rest as it is
 * ('\\' too, so that escaping twice changes nothing). As much as fits in
 * out[size] (whole escapes and characters only), NUL-terminated when size
 * > 0. Returns the length of the whole escaped text, as snprintf does.
 */
size_t rpmem_text_escape(const char *s, char *out, size_t size);

/*
 * rpmem_prefault -- map in the pages of [addr, addr + len) for reading in
 * one call (MADV_POPULATE_READ), which is much cheaper than a page fault per
 * page when a large mapping is about to be read once; a no-op where the
 * kernel lacks it.
 */
void rpmem_prefault(const void *addr, size_t len);

/*
 * rpmem_pread_full -- len bytes of file fd at off into buf: 0, -EFAULT
 * when the file ends first (it shrank), or the read's -errno
 */
int rpmem_pread_full(int fd, void *buf, size_t len, uint64_t off);

#endif
