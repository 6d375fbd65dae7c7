#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "xmalloc.h"

/* xmalloc - malloc that aborts on failure; size 0 gives a valid pointer. */
void *
xmalloc(size_t size)
{
	void *p;

	p = malloc(size != 0 ? size : 1);
	if (p == NULL)
		panic("xmalloc: out of memory allocating %zu bytes", size);
	return p;
}

/* xcalloc - zeroed array allocation that aborts on failure or overflow. */
void *
xcalloc(size_t nmemb, size_t size)
{
	void *p;

	if (nmemb == 0 || size == 0)
		nmemb = size = 1;
	p = calloc(nmemb, size);
	if (p == NULL)
		panic(
		    "xcalloc: out of memory allocating %zu x %zu", nmemb, size);
	return p;
}

/* xrealloc - realloc that aborts on failure. */
void *
xrealloc(void *ptr, size_t size)
{
	void *p;

	p = realloc(ptr, size != 0 ? size : 1);
	if (p == NULL)
		panic("xrealloc: out of memory allocating %zu bytes", size);
	return p;
}

/* xreallocarray - array realloc that aborts on failure or overflow. */
void *
xreallocarray(void *ptr, size_t nmemb, size_t size)
{
	if (size != 0 && nmemb > SIZE_MAX / size)
		panic("xreallocarray: %zu x %zu overflows", nmemb, size);
	return xrealloc(ptr, nmemb * size);
}

/* xstrdup - strdup that aborts on failure. */
char *
xstrdup(const char *s)
{
	return xmemdup(s, strlen(s) + 1);
}

/* xstrndup - copy at most n bytes of s and a NUL. */
char *
xstrndup(const char *s, size_t n)
{
	size_t len;
	char *p;

	len = strnlen(s, n);
	p = xmalloc(len + 1);
	memcpy(p, s, len);
	p[len] = '\0';
	return p;
}

/* xmemdup - copy n bytes into new memory. */
void *
xmemdup(const void *src, size_t n)
{
	void *p;

	p = xmalloc(n);
	if (n != 0)
		memcpy(p, src, n);
	return p;
}

/* xasprintf - a newly allocated formatted string; the caller frees it. */
char *
xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0)
		panic("xasprintf: out of memory");
	return s;
}
