/*
 * mjson.h - small helpers over jansson for the wires: strict reading of
 * the providers' JSON, and writing bodies byte for byte the same for the
 * same request (keys in insertion order, compact, UTF-8 kept as is).
 */
#ifndef SHIRO_MJSON_H
#define SHIRO_MJSON_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/buf.h"

/*
 * mjson_parse - the JSON value in s[0..n) (all of it), or NULL with why
 * filled.  \u0000 is allowed (strings are read with their length).
 */
json_t *mjson_parse(const char *s, size_t n, char *why, size_t whylen);

/* mjson_dump - v as compact JSON appended to out; 0 or -SHIRO_ERR_PROTO. */
int mjson_dump(const json_t *v, struct buf *out);

/*
 * mjson_str - the string of key in object o (NULL if absent or not a
 * string); *lenp its length (may be NULL).
 */
const char *mjson_str(const json_t *o, const char *key, size_t *lenp);

/*
 * mjson_uint - the non-negative integer of key in o into *vp: true, or
 * false (and *vp untouched) when absent or not one.
 */
bool mjson_uint(const json_t *o, const char *key, uint64_t *vp);

/* mjson_obj - the object of key in o, or NULL. */
json_t *mjson_obj(const json_t *o, const char *key);

/* mjson_arr - the array of key in o, or NULL. */
json_t *mjson_arr(const json_t *o, const char *key);

/* mjson_setstr - o[key] = the string s (n bytes, valid UTF-8). */
int mjson_setstr(json_t *o, const char *key, const char *s, size_t n);

/* mjson_base64 - n bytes of p in base64 (RFC 4648, padded) onto out. */
void mjson_base64(const void *p, size_t n, struct buf *out);

#endif
