/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * psk.c -- pre-shared keys as files: the key-file mode check, PSK
 * identities, IDENTITY:HEXKEY lines and the files of them (declared in
 * tls.h, whose handshakes use them)
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "tls.h"
#include "util.h"

int rpmem_key_file_check(const char *path, char *err, size_t errlen)
{
	struct stat st;

	if (stat(path, &st)) {
		int e = errno;
		rpmem_set_err(err, errlen, "key file %s: %s", path,
			      strerror(e));
		return -e;
	}
	if (!S_ISREG(st.st_mode)) {
		rpmem_set_err(err, errlen, "key file %s is not a regular file",
			      path);
		return -EINVAL;
	}
	if (st.st_mode & (S_IRWXG | S_IRWXO)) {
		rpmem_set_err(err, errlen,
			"key file %s is accessible by group or others (mode %04o): run chmod 600 %s",
			path, (unsigned)(st.st_mode & 07777), path);
		return -EPERM;
	}
	return 0;
}

int rpmem_psk_valid_identity(const char *id)
{
	size_t n = strlen(id);
	if (n == 0 || n > RPMEM_IDENTITY_MAX)
		return 0;
	for (; *id; id++)
		if (!isalnum((unsigned char)*id) && !strchr("._@-", *id))
			return 0;
	return 1;
}

/* hexval -- one hex digit, or -1 */
static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = tolower(c);
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

int rpmem_psk_parse_line(const char *line, char *identity, uint8_t *key,
			 size_t *len)
{
	const char *colon = strchr(line, ':');
	if (!colon || (size_t)(colon - line) > RPMEM_IDENTITY_MAX)
		return -EINVAL;
	memcpy(identity, line, (size_t)(colon - line));
	identity[colon - line] = '\0';
	if (!rpmem_psk_valid_identity(identity))
		return -EINVAL;
	const char *h = colon + 1;
	size_t n = 0;
	while (h[0] && h[0] != '\n' && h[0] != '\r') {
		int hi = hexval((unsigned char)h[0]);
		int lo = h[1] ? hexval((unsigned char)h[1]) : -1;
		if (hi < 0 || lo < 0 || n == RPMEM_PSK_MAX)
			return -EINVAL;
		key[n++] = (uint8_t)(hi << 4 | lo);
		h += 2;
	}
	if (n < RPMEM_PSK_MIN)
		return -EINVAL;
	*len = n;
	return 0;
}

int rpmem_psk_read(const char *path, char *identity, uint8_t *key,
		   size_t *len, char *err, size_t errlen)
{
	char want[RPMEM_IDENTITY_MAX + 1], id[RPMEM_IDENTITY_MAX + 1];
	char line[RPMEM_PSK_LINE_MAX];
	unsigned lineno = 0;
	int ret;

	if ((ret = rpmem_key_file_check(path, err, errlen)))
		return ret;
	rpmem_strlcpy(want, identity, sizeof(want));
	FILE *f = fopen(path, "re");
	if (!f) {
		ret = -errno;
		rpmem_set_err(err, errlen, "PSK file %s: %s", path,
			      strerror(-ret));
		return ret;
	}
	ret = -ENOENT;
	while (fgets(line, sizeof(line), f)) {
		lineno++;
		char *p = line + strspn(line, " \t");
		if (*p == '#' || *p == '\n' || !*p)
			continue;
		if (rpmem_psk_parse_line(p, id, key, len)) {
			rpmem_set_err(err, errlen,
				"PSK file %s:%u: expected IDENTITY:HEXKEY (identity of letters, digits, '.', '_', '@', '-'; a key of %d to %d bytes in hex)",
				path, lineno, RPMEM_PSK_MIN, RPMEM_PSK_MAX);
			ret = -EINVAL;
			break;
		}
		if (want[0] && strcmp(want, id))
			continue;
		rpmem_strlcpy(identity, id, RPMEM_IDENTITY_MAX + 1);
		ret = 0;
		break;
	}
	fclose(f);
	if (ret == -ENOENT)
		rpmem_set_err(err, errlen, "PSK file %s has no key%s%s", path,
			want[0] ? " for identity " : "", want);
	return ret;
}
