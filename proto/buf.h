/*
 * buf.h - a growable byte buffer.
 *
 * struct buf owns its memory.  data is always NUL-terminated after len
 * bytes (the NUL is not counted), so text can be used as a C string.
 * Growth is amortized doubling; allocation failure aborts (xmalloc).
 */
#ifndef SHIRO_BUF_H
#define SHIRO_BUF_H

#include <stdarg.h>
#include <stddef.h>

struct buf {
	char *data;
	size_t len;
	size_t cap;
};

#define BUF_INIT \
	{ \
		NULL, 0, 0 \
	}

void buf_init(struct buf *b);
void buf_free(struct buf *b);
void buf_reset(struct buf *b);
void buf_reserve(struct buf *b, size_t extra);
void buf_add(struct buf *b, const void *data, size_t len);
void buf_addc(struct buf *b, char c);
void buf_adds(struct buf *b, const char *s);
void buf_printf(struct buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void buf_vprintf(struct buf *b, const char *fmt, va_list ap);
void buf_truncate(struct buf *b, size_t len);
/* buf_steal - hand the bytes to the caller (who frees them); b is reset. */
char *buf_steal(struct buf *b, size_t *lenp);

#endif
