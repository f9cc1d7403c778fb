/* SPDX-License-Identifier: BSD-3-Clause */
/* util.c -- names, sizes, targets, uuids and clocks */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <unistd.h>
#include <time.h>

#include "util.h"

/* UTF8_SEQ_MAX -- bytes of the longest UTF-8 sequence */
#define UTF8_SEQ_MAX 4
/* ESCAPE_MAX -- room for one escaped character: "\\u{10FFFF}" */
#define ESCAPE_MAX 16

int rpmem_name_valid(const char *name)
{
	size_t n = name ? strlen(name) : 0;
	if (n == 0 || n > RPMEM_NAME_MAX || name[0] == '.' || name[0] == '-')
		return 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)name[i];
		if (!isalnum(c) && c != '.' && c != '_' && c != '-')
			return 0;
	}
	return 1;
}

int rpmem_parse_size(const char *s, uint64_t *out)
{
	if (!s || !isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno == ERANGE)
		return -ERANGE;
	unsigned shift = 0;
	switch (toupper((unsigned char)*end)) {
	case 'K':
		shift = 10;
		break;
	case 'M':
		shift = 20;
		break;
	case 'G':
		shift = 30;
		break;
	case 'T':
		shift = 40;
		break;
	case '\0':
		break;
	case 'B':
		break;
	default:
		return -EINVAL;
	}
	if (shift) {
		end++;
		if (*end == 'i')
			end++;
	}
	if (toupper((unsigned char)*end) == 'B')
		end++;
	if (*end)
		return -EINVAL;
	if (shift && v > (UINT64_MAX >> shift))
		return -ERANGE;
	*out = (uint64_t)v << shift;
	return 0;
}

/* rpmem_parse_interval -- a duration with a unit into nanoseconds */
int rpmem_parse_interval(const char *s, uint64_t *ns)
{
	static const struct {
		const char *unit;
		uint64_t ns;
	} units[] = {
		{ "ms", 1000000ull },	     { "s", 1000000000ull },
		{ "", 1000000000ull },	     { "m", 60000000000ull },
		{ "h", 3600000000000ull },
	};
	if (!s || !isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno == ERANGE)
		return -ERANGE;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(end, units[i].unit))
			continue;
		if (v > 24ull * 3600000000000ull / units[i].ns)
			return -ERANGE;
		uint64_t t = (uint64_t)v * units[i].ns;
		if (t < 1000000ull)
			return -ERANGE;
		*ns = t;
		return 0;
	}
	return -EINVAL;
}

int rpmem_memlock_limit(unsigned long long *lim)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_MEMLOCK, &rl) || rl.rlim_cur == RLIM_INFINITY)
		return 0;
	*lim = (unsigned long long)rl.rlim_cur;
	return 1;
}

const char *rpmem_fmt_size(uint64_t v, char *buf, size_t len)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB",
					    "PiB" };
	unsigned u = 0;
	double d = (double)v;
	while (d >= 1024 && u < 5) {
		d /= 1024;
		u++;
	}
	if (u == 0 || d == (double)(uint64_t)d)
		snprintf(buf, len, "%.0f %s", d, unit[u]);
	else
		snprintf(buf, len, "%.1f %s", d, unit[u]);
	return buf;
}

int rpmem_set_err(char *err, size_t errlen, const char *fmt, ...)
{
	if (err && errlen) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

int rpmem_parse_target(const char *s, unsigned need, struct rpmem_target *t,
		       char *err, size_t errlen)
{
	const char *p = s;
	memset(t, 0, sizeof(*t));
	rpmem_strlcpy(t->port, RPMEM_DEFAULT_PORT, sizeof(t->port));
	if (!s || !*s)
		return rpmem_set_err(err, errlen, "empty target%s", "");
	if (!strncmp(p, "rpmem://", 8))
		p += 8;
	else if (strstr(p, "://"))
		return rpmem_set_err(err, errlen,
			       "invalid target '%s': only rpmem:// URIs", s);

	/* host: [v6] or up to ':' or '/' */
	const char *hend;
	if (*p == '[') {
		hend = strchr(p, ']');
		if (!hend)
			return rpmem_set_err(err, errlen,
				       "invalid target '%s': missing ']'", s);
		if ((size_t)(hend - p - 1) >= sizeof(t->host) || hend == p + 1)
			return rpmem_set_err(err, errlen,
				       "invalid target '%s': bad host", s);
		memcpy(t->host, p + 1, (size_t)(hend - p - 1));
		p = hend + 1;
	} else {
		hend = p + strcspn(p, ":/");
		if (hend == p || (size_t)(hend - p) >= sizeof(t->host))
			return rpmem_set_err(err, errlen,
				       "invalid target '%s': bad host", s);
		memcpy(t->host, p, (size_t)(hend - p));
		p = hend;
	}
	if (*p == ':') {
		p++;
		size_t n = strspn(p, "0123456789");
		long port = strtol(p, NULL, 10);
		if (n == 0 || n > 5 || port < 1 || port > 65535 ||
		    (p[n] && p[n] != '/'))
			return rpmem_set_err(err, errlen,
				       "invalid target '%s': bad port", s);
		memcpy(t->port, p, n);
		t->port[n] = '\0';
		p += n;
	}
	if (*p && *p != '/')
		return rpmem_set_err(err, errlen, "invalid target '%s'", s);
	if (*p == '/' && p[1]) {
		if (need & RPMEM_TARGET_NO_PATH)
			return rpmem_set_err(err, errlen,
				       "invalid target '%s': expected HOST[:PORT]",
				       s);
		p++;
		const char *slash = strchr(p, '/');
		size_t n = slash ? (size_t)(slash - p) : strlen(p);
		if (n > RPMEM_NAME_MAX)
			return rpmem_set_err(err, errlen,
				       "invalid region name in '%s'", s);
		memcpy(t->region, p, n);
		t->region[n] = '\0';
		if (!rpmem_name_valid(t->region))
			return rpmem_set_err(err, errlen,
				       "invalid region name in '%s' (" RPMEM_NAME_RULE ")",
				       s);
		if (slash) {
			p = slash + 1;
			if (strlen(p) > RPMEM_NAME_MAX || !rpmem_name_valid(p))
				return rpmem_set_err(err, errlen,
					       "invalid pool name in '%s' (" RPMEM_NAME_RULE "; no '/')",
					       s);
			rpmem_strlcpy(t->pool, p, sizeof(t->pool));
		}
	}
	if ((need & RPMEM_TARGET_NEED_POOL) && !t->pool[0])
		return rpmem_set_err(err, errlen,
			       "invalid target '%s': expected HOST[:PORT]/REGION/POOL",
			       s);
	if ((need & RPMEM_TARGET_NEED_REGION) && !t->region[0])
		return rpmem_set_err(err, errlen,
			       "invalid target '%s': expected HOST[:PORT]/REGION",
			       s);
	return 0;
}

void rpmem_uuid_fmt(const uint8_t u[16], char out[37])
{
	snprintf(out, 37,
		 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9],
		 u[10], u[11], u[12], u[13], u[14], u[15]);
}

int rpmem_uuid_parse(const char *s, uint8_t u[16])
{
	if (!s || strlen(s) != 36)
		return -EINVAL;
	int j = 0;
	for (int i = 0; i < 36; i++) {
		if (i == 8 || i == 13 || i == 18 || i == 23) {
			if (s[i] != '-')
				return -EINVAL;
			continue;
		}
		if (!isxdigit((unsigned char)s[i]) ||
		    !isxdigit((unsigned char)s[i + 1]))
			return -EINVAL;
		char hex[] = { s[i], s[i + 1], 0 };
		u[j++] = (uint8_t)strtoul(hex, NULL, 16);
		i++;
	}
	return j == 16 ? 0 : -EINVAL;
}

void rpmem_gen_ids_fmt(const uint64_t *ids, unsigned n, const char *sep,
		       char *out, size_t len)
{
	size_t o = 0;
	if (len)
		out[0] = '\0';
	for (unsigned i = 0; i < n && o < len; i++)
		o += (size_t)snprintf(out + o, len - o, "%s%016llx",
				      i ? sep : "",
				      (unsigned long long)ids[i]);
}

int rpmem_gen_ids_parse(const char *s, char sep, uint64_t *ids,
			unsigned max)
{
	unsigned n = 0;
	while (*s) {
		uint64_t v = 0;
		for (int i = 0; i < 16; i++, s++) {
			if (!isxdigit((unsigned char)*s))
				return -EINVAL;
			v = v << 4 | (uint64_t)(isdigit((unsigned char)*s) ?
						*s - '0' :
						(*s | 0x20) - 'a' + 10);
		}
		if (n == max || !v)
			return -EINVAL;
		ids[n++] = v;
		if (*s == sep && s[1])
			s++;
		else if (*s)
			return -EINVAL;
	}
	return (int)n;
}

int rpmem_gen_new(uint64_t *id)
{
	do {
		int ret = rpmem_random(id, sizeof(*id));
		if (ret)
			return ret;
		*id &= ~RPMEM_GEN_PROMOTED;
	} while (!*id);
	return 0;
}

int rpmem_gen_new_promotion(uint64_t *id)
{
	int ret = rpmem_gen_new(id);
	*id |= RPMEM_GEN_PROMOTED;
	return ret;
}

int rpmem_random(void *buf, size_t len)
{
	uint8_t *p = buf;
	while (len) {
		ssize_t n = getrandom(p, len, 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

uint64_t rpmem_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t rpmem_wall_sec(void)
{
	return (uint64_t)time(NULL);
}

size_t rpmem_strlcpy(char *dst, const char *src, size_t size)
{
	size_t n = strlen(src);
	if (size) {
		size_t c = n < size - 1 ? n : size - 1;
		memcpy(dst, src, c);
		dst[c] = '\0';
	}
	return n;
}

size_t rpmem_utf8_len(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	unsigned char lo = 0x80, hi = 0xbf;
	size_t n;

	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf) {
		n = 2;
	} else if (p[0] >= 0xe0 && p[0] <= 0xef) {
		n = 3;
		lo = p[0] == 0xe0 ? 0xa0 : 0x80; /* no overlong form */
		hi = p[0] == 0xed ? 0x9f : 0xbf; /* no surrogate */
	} else if (p[0] >= 0xf0 && p[0] <= 0xf4) {
		n = 4;
		lo = p[0] == 0xf0 ? 0x90 : 0x80; /* no overlong form */
		hi = p[0] == 0xf4 ? 0x8f : 0xbf; /* up to U+10FFFF */
	} else {
		return 0;
	}
	if (p[1] < lo || p[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	return n;
}

size_t rpmem_utf8_control(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	if (!p[0])
		return 0;
	if (p[0] < 0x20 || p[0] == 0x7f)
		return 1;
	if (p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f)
		return 2; /* C1 */
	if (p[0] == 0xd8 && p[1] == 0x9c)
		return 2; /* U+061C arabic letter mark */
	if (p[0] != 0xe2 || !p[1] || !p[2])
		return 0;
	if (p[1] == 0x80 && (p[2] == 0x8e || p[2] == 0x8f)) /* LRM, RLM */
		return 3;
	if (p[1] == 0x80 && p[2] >= 0xa8 && p[2] <= 0xae) /* LS, PS, LRE-RLO */
		return 3;
	if (p[1] == 0x81 && p[2] >= 0xa6 && p[2] <= 0xa9) /* LRI-PDI */
		return 3;
	return 0;
}

void rpmem_str_sanitize(char *s)
{
	char *o = s;

	while (*s) {
		size_t n = rpmem_utf8_len(s);

		if (!n || rpmem_utf8_control(s)) {
			*o++ = '?';
			s += n ? n : 1;
		} else {
			memmove(o, s, n);
			o += n;
			s += n;
		}
	}
	*o = '\0';
}

/*
 * escape_char -- the length of the character at s[i] of in[n] (1 for a
 * byte outside well-formed UTF-8); *esc: whether rpmem_escape writes it
 * as hex
 */
static size_t escape_char(const unsigned char *s, size_t i, size_t n,
			  int *esc)
{
	char c[UTF8_SEQ_MAX + 1] = { 0 };

	for (size_t k = 0; k < 4 && i + k < n; k++)
		c[k] = (char)s[i + k];
	size_t len = rpmem_utf8_len(c);
	*esc = !len || s[i] == '\\' || s[i] == '\0' || rpmem_utf8_control(c);
	return len ? len : 1;
}

char *rpmem_escape(const void *in, size_t n, char *out, size_t size)
{
	const unsigned char *s = in;
	size_t o = 0, left = 0;
	int esc = 0;

	for (size_t i = 0; i < n && size; i++) {
		if (!left)
			left = escape_char(s, i, n, &esc);
		size_t w = esc ? 4 : 1;
		if (o + w >= size)
			break;
		if (esc)
			snprintf(out + o, 5, "\\x%02x", s[i]);
		else
			out[o] = (char)s[i];
		o += w;
		left--;
	}
	if (size)
		out[o] = '\0';
	return out;
}

/* text_code -- the code point of the well-formed UTF-8 character s[n] */
static unsigned text_code(const unsigned char *s, size_t n)
{
	static const unsigned char lead[] = { 0, 0x7f, 0x1f, 0x0f, 0x07 };
	unsigned c = s[0] & lead[n];

	for (size_t i = 1; i < n; i++)
		c = c << 6 | (s[i] & 0x3f);
	return c;
}

size_t rpmem_text_escape(const char *s, char *out, size_t size)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t o = 0, full = 0;
	int cut = 0;

	while (*p) {
		char e[ESCAPE_MAX];
		size_t n = rpmem_utf8_len((const char *)p);
		size_t w;

		if (!n || (n == 1 && rpmem_utf8_control((const char *)p))) {
			w = (size_t)snprintf(e, sizeof(e), "\\x%02x", *p);
			n = 1;
		} else if (rpmem_utf8_control((const char *)p)) {
			w = (size_t)snprintf(e, sizeof(e), "\\u{%04x}",
					     text_code(p, n));
		} else {
			memcpy(e, p, n);
			w = n;
		}
		if (!cut && o + w < size) {
			memcpy(out + o, e, w);
			o += w;
		} else {
			cut = 1;
		}
		full += w;
		p += n;
	}
	if (size)
		out[o] = '\0';
	return full;
}

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif

int rpmem_pread_full(int fd, void *buf, size_t len, uint64_t off)
{
	uint8_t *p = buf;
	while (len) {
		ssize_t n = pread(fd, p, len, (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EFAULT; /* 0: it shrank */
		p += n;
		off += (uint64_t)n;
		len -= (size_t)n;
	}
	return 0;
}

void rpmem_prefault(const void *addr, size_t len)
{
	static size_t pg;
	if (!pg)
		pg = (size_t)sysconf(_SC_PAGESIZE);
	uintptr_t start = (uintptr_t)addr & ~(pg - 1);
	uintptr_t end = ((uintptr_t)addr + len + pg - 1) & ~(pg - 1);
	if (len)
		(void)madvise((void *)start, end - start, MADV_POPULATE_READ);
}
