#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "log.h"
#include "xmalloc.h"

/* buf_init - make b empty, owning nothing. */
void
buf_init(struct buf *b)
{
	b->data = NULL;
	b->len = 0;
	b->cap = 0;
}

/* buf_free - release b's memory and make it empty. */
void
buf_free(struct buf *b)
{
	free(b->data);
	buf_init(b);
}

/* buf_reset - keep the memory, drop the contents. */
void
buf_reset(struct buf *b)
{
	b->len = 0;
	if (b->data != NULL)
		b->data[0] = '\0';
}

/* buf_reserve - make room for extra more bytes and the NUL. */
void
buf_reserve(struct buf *b, size_t extra)
{
	size_t need, cap;

	if (extra > (size_t)-1 - b->len - 1)
		panic("buf_reserve: size overflow");
	need = b->len + extra + 1;
	if (need <= b->cap)
		return;
	cap = b->cap != 0 ? b->cap : 64;
	while (cap < need)
		cap = cap > (size_t)-1 / 2 ? need : cap * 2;
	b->data = xrealloc(b->data, cap);
	b->cap = cap;
}

/* buf_add - append len bytes. */
void
buf_add(struct buf *b, const void *data, size_t len)
{
	buf_reserve(b, len);
	if (len != 0)
		memcpy(b->data + b->len, data, len);
	b->len += len;
	b->data[b->len] = '\0';
}

/* buf_addc - append one byte. */
void
buf_addc(struct buf *b, char c)
{
	buf_add(b, &c, 1);
}

/* buf_adds - append a C string. */
void
buf_adds(struct buf *b, const char *s)
{
	buf_add(b, s, strlen(s));
}

/* buf_vprintf - append formatted text. */
void
buf_vprintf(struct buf *b, const char *fmt, va_list ap)
{
	va_list cp;
	int n;

	va_copy(cp, ap);
	n = vsnprintf(NULL, 0, fmt, cp);
	va_end(cp);
	if (n < 0)
		panic("buf_vprintf: bad format");
	buf_reserve(b, (size_t)n);
	(void)vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
}

/* buf_printf - append formatted text. */
void
buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	buf_vprintf(b, fmt, ap);
	va_end(ap);
}

/* buf_truncate - cut the contents to len bytes (len <= b->len). */
void
buf_truncate(struct buf *b, size_t len)
{
	if (len > b->len)
		panic("buf_truncate: %zu past the end %zu", len, b->len);
	b->len = len;
	if (b->data != NULL)
		b->data[len] = '\0';
}

/* buf_steal - hand the bytes to the caller (who frees them); b is reset. */
char *
buf_steal(struct buf *b, size_t *lenp)
{
	char *p;

	if (b->data == NULL)
		buf_reserve(b, 0);
	p = b->data;
	if (lenp != NULL)
		*lenp = b->len;
	buf_init(b);
	return p;
}
