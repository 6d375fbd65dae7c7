/*
 * mjson.c - jansson helpers for the wires.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/err.h"
#include "proto/utf8.h"
#include "workers/model/mjson.h"

/* mjson_parse - the JSON value of s[0..n), or NULL with why. */
json_t *
mjson_parse(const char *s, size_t n, char *why, size_t whylen)
{
	json_error_t err;
	json_t *v = json_loadb(s, n, JSON_ALLOW_NUL | JSON_DECODE_ANY, &err);

	if (v == NULL)
		snprintf(why, whylen, "%s at byte %d", err.text, err.position);
	return v;
}

/* The deepest nesting mjson_dump writes (bodies are a few levels deep;
 * a tool's input schema or arguments a few more). */
#define MJSON_DEPTH 128

/* mjson_put_str - s[0..n) as a JSON string, escaped as jansson does:
 * quote, backslash and the control characters, the rest as is. */
static void
mjson_put_str(struct buf *out, const char *s, size_t n)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t run = 0, k;
	char e[6];

	buf_reserve(out, n + 2);
	buf_addc(out, '"');
	for (k = 0; k < n; k++) {
		unsigned char c = (unsigned char)s[k];

		if (c >= 0x20 && c != '"' && c != '\\')
			continue;
		buf_add(out, s + run, k - run);
		run = k + 1;
		e[0] = '\\';
		switch (c) {
		case '"':
		case '\\':
			e[1] = (char)c;
			break;
		case '\b':
			e[1] = 'b';
			break;
		case '\f':
			e[1] = 'f';
			break;
		case '\n':
			e[1] = 'n';
			break;
		case '\r':
			e[1] = 'r';
			break;
		case '\t':
			e[1] = 't';
			break;
		default:
			e[1] = 'u';
			e[2] = '0';
			e[3] = '0';
			e[4] = hex[c >> 4];
			e[5] = hex[c & 15];
			buf_add(out, e, 6);
			continue;
		}
		buf_add(out, e, 2);
	}
	buf_add(out, s + run, n - run);
	buf_addc(out, '"');
}

/* mjson_put - v onto out; 0, or -1 for a value jansson cannot write or
 * nesting past MJSON_DEPTH. */
static int
mjson_put(const json_t *v, struct buf *out, int depth)
{
	const char *key;
	json_t *x;
	size_t k, n;
	void *it;
	char tmp[64];
	int first = 1;

	if (v == NULL || depth > MJSON_DEPTH)
		return -1;
	switch (json_typeof(v)) {
	case JSON_STRING:
		mjson_put_str(out, json_string_value(v), json_string_length(v));
		return 0;
	case JSON_ARRAY:
		buf_addc(out, '[');
		n = json_array_size(v);
		for (k = 0; k < n; k++) {
			if (k > 0)
				buf_addc(out, ',');
			if (mjson_put(json_array_get(v, k), out, depth + 1) !=
			    0)
				return -1;
		}
		buf_addc(out, ']');
		return 0;
	case JSON_OBJECT:
		buf_addc(out, '{');
		/* jansson keeps an object's keys in insertion order. */
		for (it = json_object_iter((json_t *)v); it != NULL;
		     it = json_object_iter_next((json_t *)v, it)) {
			if (first == 0)
				buf_addc(out, ',');
			first = 0;
			key = json_object_iter_key(it);
			mjson_put_str(out, key, json_object_iter_key_len(it));
			buf_addc(out, ':');
			x = json_object_iter_value(it);
			if (mjson_put(x, out, depth + 1) != 0)
				return -1;
		}
		buf_addc(out, '}');
		return 0;
	default:
		/* Numbers, true, false and null: few and short, written by
		 * jansson itself so that reals come out as it writes them. */
		n = json_dumpb(v, tmp, sizeof(tmp), JSON_ENCODE_ANY);
		if (n == 0 || n > sizeof(tmp))
			return -1;
		buf_add(out, tmp, n);
		return 0;
	}
}

/* mjson_dump - v as compact JSON onto out, byte for byte what jansson's
 * json_dumpb(JSON_COMPACT | JSON_ENCODE_ANY) writes, in one pass over
 * each string (jansson's own takes a code point at a time and checks
 * every container for a loop: about 1 ms for a 128 KB body).  The
 * strings were checked for UTF-8 when they were made. */
int
mjson_dump(const json_t *v, struct buf *out)
{
	size_t start = out->len;

	if (mjson_put(v, out, 0) != 0) {
		buf_truncate(out, start);
		return -SHIRO_ERR_PROTO;
	}
	buf_reserve(out, 1);
	out->data[out->len] = '\0';
	return 0;
}

/* mjson_str - the string of key in o, or NULL. */
const char *
mjson_str(const json_t *o, const char *key, size_t *lenp)
{
	json_t *v = json_is_object(o) ? json_object_get(o, key) : NULL;

	if (!json_is_string(v))
		return NULL;
	if (lenp != NULL)
		*lenp = json_string_length(v);
	return json_string_value(v);
}

/* mjson_uint - the non-negative integer of key in o. */
bool
mjson_uint(const json_t *o, const char *key, uint64_t *vp)
{
	json_t *v = json_is_object(o) ? json_object_get(o, key) : NULL;

	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return false;
	*vp = (uint64_t)json_integer_value(v);
	return true;
}

/* mjson_obj - the object of key in o, or NULL. */
json_t *
mjson_obj(const json_t *o, const char *key)
{
	json_t *v = json_is_object(o) ? json_object_get(o, key) : NULL;

	return json_is_object(v) ? v : NULL;
}

/* mjson_arr - the array of key in o, or NULL. */
json_t *
mjson_arr(const json_t *o, const char *key)
{
	json_t *v = json_is_object(o) ? json_object_get(o, key) : NULL;

	return json_is_array(v) ? v : NULL;
}

/* mjson_setstr - o[key] = s. */
int
mjson_setstr(json_t *o, const char *key, const char *s, size_t n)
{
	json_t *v;

	/* proto's check takes eight ASCII bytes at a time; jansson's own,
	 * in json_stringn, one code point. */
	if (!utf8_valid(s, n))
		return -SHIRO_ERR_PROTO;
	v = json_stringn_nocheck(s, n);
	if (v == NULL)
		return -SHIRO_ERR_PROTO;
	return json_object_set_new(o, key, v) == 0 ? 0 : -SHIRO_ERR_PROTO;
}

/* mjson_base64 - p in base64 onto out. */
void
mjson_base64(const void *p, size_t n, struct buf *out)
{
	static const char abc[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	const unsigned char *u = p;
	size_t k;
	char q[4];

	buf_reserve(out, (n + 2) / 3 * 4 + 1);
	for (k = 0; k + 3 <= n; k += 3) {
		q[0] = abc[u[k] >> 2];
		q[1] = abc[((u[k] & 3) << 4) | (u[k + 1] >> 4)];
		q[2] = abc[((u[k + 1] & 15) << 2) | (u[k + 2] >> 6)];
		q[3] = abc[u[k + 2] & 63];
		buf_add(out, q, 4);
	}
	if (n - k == 1) {
		q[0] = abc[u[k] >> 2];
		q[1] = abc[(u[k] & 3) << 4];
		q[2] = q[3] = '=';
		buf_add(out, q, 4);
	} else if (n - k == 2) {
		q[0] = abc[u[k] >> 2];
		q[1] = abc[((u[k] & 3) << 4) | (u[k + 1] >> 4)];
		q[2] = abc[(u[k + 1] & 15) << 2];
		q[3] = '=';
		buf_add(out, q, 4);
	}
}
