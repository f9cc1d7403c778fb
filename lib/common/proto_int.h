/* SPDX-License-Identifier: BSD-3-Clause */
/* proto_int.h -- what the codec files (proto*.c) share, nothing else */
#ifndef RPMEM_PROTO_INT_H
#define RPMEM_PROTO_INT_H

#include <string.h>

#include "wire.h"

/* enc_end -- the encoded length, or the buffer's error */
int enc_end(const struct wbuf *w);
/* dec_end -- the payload was consumed exactly and without error */
int dec_end(const struct rbuf *r);
/* rbuf_name -- a region or pool name field (may be empty) */
void rbuf_name(struct rbuf *r, char *out);

#define ENC_BEGIN                                                             \
	struct wbuf w;                                                        \
	wbuf_init(&w, buf, cap)
#define DEC_BEGIN                                                             \
	struct rbuf r;                                                        \
	rbuf_init(&r, buf, len);                                              \
	memset(m, 0, sizeof(*m))

#endif
