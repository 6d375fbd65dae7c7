/*
 * utf8.h - small UTF-8 helpers: validation, counting characters and
 * finding character boundaries.  Strict: overlong forms, surrogates and
 * code points past U+10FFFF are invalid.  No allocation.
 */
#ifndef SHIRO_UTF8_H
#define SHIRO_UTF8_H

#include <stddef.h>

/* utf8_valid - 1 if s[0..len) is valid UTF-8, else 0. */
int utf8_valid(const char *s, size_t len);

/*
 * utf8_char_len - the length of the valid character that starts at
 * s[0] (with n bytes available), or 0 if none does.
 */
size_t utf8_char_len(const char *s, size_t n);

/*
 * utf8_next - the offset after the character at pos (pos < len); an
 * invalid byte counts as one character of one byte.
 */
size_t utf8_next(const char *s, size_t len, size_t pos);

/*
 * utf8_floor - the largest offset <= pos (pos <= len) that does not fall
 * inside a valid character.
 */
size_t utf8_floor(const char *s, size_t len, size_t pos);

/* utf8_count - the characters in s[0..len) (invalid bytes count one). */
size_t utf8_count(const char *s, size_t len);

/*
 * utf8_skip - the offset after the first n characters of s[0..len), or
 * len when there are fewer.
 */
size_t utf8_skip(const char *s, size_t len, size_t n);

/*
 * utf8_blank - 1 if s[0..len) holds nothing but spaces, tabs and line
 * ends (an empty text too): the one rule for an empty message, kept by
 * the client and by shirod alike.
 */
int utf8_blank(const char *s, size_t len);

#endif
