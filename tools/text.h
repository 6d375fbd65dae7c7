/*
 * text.h - text helpers of the tool catalogue: UTF-8 cleaning, clipping
 * to head and tail, binary detection.
 */
#ifndef SHIRO_TOOLS_TEXT_H
#define SHIRO_TOOLS_TEXT_H

#include <stddef.h>

#include <jansson.h>

#include "proto/buf.h"

/* text_utf8_clean - append s to out with every invalid byte as U+FFFD. */
void text_utf8_clean(const char *s, size_t len, struct buf *out);

/* text_utf8_valid - nonzero when s holds only valid UTF-8 and no NUL. */
int text_utf8_valid(const char *s, size_t len);

/*
 * text_clip - append s to out, cleaned to UTF-8; when it has more than
 * max characters keep its head and tail around a line that says how
 * many characters were cut, max characters in all.  Returns nonzero
 * when something was cut.
 */
int text_clip(const char *s, size_t len, size_t max, struct buf *out);

/* text_string - a new JSON string of s, invalid UTF-8 replaced. */
json_t *text_string(const char *s, size_t len);

/* text_is_binary - nonzero when the data looks binary (a NUL byte). */
int text_is_binary(const char *s, size_t len);

#endif
