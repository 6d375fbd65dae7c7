/*
 * mjson.c - jansson helpers for the wires.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/err.h"
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

/* mjson_dump - v as compact JSON onto out. */
int
mjson_dump(const json_t *v, struct buf *out)
{
	size_t flags = JSON_COMPACT | JSON_ENCODE_ANY;
	size_t n = json_dumpb(v, NULL, 0, flags);

	if (n == 0)
		return -SHIRO_ERR_PROTO;
	buf_reserve(out, n + 1);
	if (json_dumpb(v, out->data + out->len, n, flags) != n)
		return -SHIRO_ERR_PROTO;
	out->len += n;
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
	json_t *v = json_stringn(s, n);

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
