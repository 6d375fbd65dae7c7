/*
 * json_out.h - a small JSON writer for the client's --json output.
 *
 * The writer appends to a struct buf and inserts the commas itself: a
 * caller opens objects and arrays, names keys, and writes values.  Text
 * that is not valid UTF-8 is written with U+FFFD in place of each bad
 * byte, so the output always parses.  Nesting is limited to
 * JSON_OUT_DEPTH levels; deeper values are written as null.
 */
#ifndef SHIRO_CLIENT_JSON_OUT_H
#define SHIRO_CLIENT_JSON_OUT_H

#include <stddef.h>
#include <stdint.h>

#include "proto/buf.h"

#define JSON_OUT_DEPTH 32

struct json_out {
	struct buf *b; /* borrowed: where the text goes */
	int depth; /* open objects and arrays */
	int first[JSON_OUT_DEPTH + 1]; /* no value yet at this depth */
	int after_key; /* a key was written, its value is next */
};

/* json_out_init - start writing into b (not reset). */
void json_out_init(struct json_out *j, struct buf *b);
void json_out_begin_object(struct json_out *j);
void json_out_end_object(struct json_out *j);
void json_out_begin_array(struct json_out *j);
void json_out_end_array(struct json_out *j);
/* json_out_key - name the next value of the open object. */
void json_out_key(struct json_out *j, const char *key);
void json_out_str(struct json_out *j, const char *s);
void json_out_strn(struct json_out *j, const char *s, size_t len);
void json_out_int(struct json_out *j, int64_t v);
void json_out_uint(struct json_out *j, uint64_t v);
void json_out_double(struct json_out *j, double v);
void json_out_bool(struct json_out *j, int v);
void json_out_null(struct json_out *j);

struct msg_val;

/*
 * json_out_val - write a decoded protocol value: maps as objects in
 * their order, arrays, strings, integers, booleans, nil as null, and
 * bytes as a string (invalid UTF-8 replaced).
 */
void json_out_val(struct json_out *j, const struct msg_val *v);

/* json_out_quote - append s (len bytes) to b as a quoted JSON string. */
void json_out_quote(struct buf *b, const char *s, size_t len);

#endif
