/*
 * xmalloc.h - allocation that never fails visibly.
 *
 * Each call returns usable memory or logs and aborts: no caller checks
 * for NULL.  Sizes that overflow abort too.
 */
#ifndef SHIRO_XMALLOC_H
#define SHIRO_XMALLOC_H

#include <stddef.h>

void *xmalloc(size_t size);
void *xcalloc(size_t nmemb, size_t size);
void *xrealloc(void *ptr, size_t size);
void *xreallocarray(void *ptr, size_t nmemb, size_t size);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
void *xmemdup(const void *p, size_t n);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
