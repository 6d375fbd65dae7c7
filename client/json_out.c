#include <math.h>
#include <stdio.h>
#include <string.h>

#include "proto/msg.h"
#include "proto/utf8.h"

#include "json_out.h"

/* json_out_init - start writing into b (not reset). */
void
json_out_init(struct json_out *j, struct buf *b)
{
	memset(j, 0, sizeof(*j));
	j->b = b;
	j->first[0] = 1;
}

/* json_out_sep - write the comma that goes before a new value, if any. */
static void
json_out_sep(struct json_out *j)
{
	if (j->after_key) {
		j->after_key = 0;
		return;
	}
	if (!j->first[j->depth])
		buf_addc(j->b, ',');
	j->first[j->depth] = 0;
}

/* json_out_quote - append s (len bytes) to b as a quoted JSON string. */
void
json_out_quote(struct buf *b, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, n;

	buf_addc(b, '"');
	while (i < len) {
		unsigned char c = p[i];

		switch (c) {
		case '"':
			buf_adds(b, "\\\"");
			break;
		case '\\':
			buf_adds(b, "\\\\");
			break;
		case '\n':
			buf_adds(b, "\\n");
			break;
		case '\r':
			buf_adds(b, "\\r");
			break;
		case '\t':
			buf_adds(b, "\\t");
			break;
		default:
			if (c < 0x20 || c == 0x7f) {
				buf_printf(b, "\\u%04x", c);
				break;
			}
			n = utf8_char_len(s + i, len - i);
			if (n == 0) {
				buf_adds(b, "\\ufffd");
				break;
			}
			if (n == 2 && c == 0xc2 && p[i + 1] < 0xa0) {
				/* A C1 control (U+0080-U+009F) is escaped
				 * too: terminals act on it as on ESC. */
				buf_printf(b, "\\u%04x", p[i + 1]);
				i += n;
				continue;
			}
			buf_add(b, p + i, n);
			i += n;
			continue;
		}
		i++;
	}
	buf_addc(b, '"');
}

/* json_out_open - open an object or an array. */
static void
json_out_open(struct json_out *j, char c)
{
	json_out_sep(j);
	buf_addc(j->b, c);
	if (j->depth < JSON_OUT_DEPTH)
		j->depth++;
	j->first[j->depth] = 1;
}

/* json_out_close - close the innermost object or array. */
static void
json_out_close(struct json_out *j, char c)
{
	buf_addc(j->b, c);
	if (j->depth > 0)
		j->depth--;
}

/* json_out_begin_object - open an object. */
void
json_out_begin_object(struct json_out *j)
{
	json_out_open(j, '{');
}

/* json_out_end_object - close the open object. */
void
json_out_end_object(struct json_out *j)
{
	json_out_close(j, '}');
}

/* json_out_begin_array - open an array. */
void
json_out_begin_array(struct json_out *j)
{
	json_out_open(j, '[');
}

/* json_out_end_array - close the open array. */
void
json_out_end_array(struct json_out *j)
{
	json_out_close(j, ']');
}

/* json_out_key - name the next value of the open object. */
void
json_out_key(struct json_out *j, const char *key)
{
	json_out_sep(j);
	json_out_quote(j->b, key, strlen(key));
	buf_addc(j->b, ':');
	j->after_key = 1;
}

/* json_out_str - write a NUL-terminated string value. */
void
json_out_str(struct json_out *j, const char *s)
{
	json_out_strn(j, s, strlen(s));
}

/* json_out_strn - write a string value of len bytes. */
void
json_out_strn(struct json_out *j, const char *s, size_t len)
{
	json_out_sep(j);
	json_out_quote(j->b, s, len);
}

/* json_out_int - write a signed integer. */
void
json_out_int(struct json_out *j, int64_t v)
{
	json_out_sep(j);
	buf_printf(j->b, "%lld", (long long)v);
}

/* json_out_uint - write an unsigned integer. */
void
json_out_uint(struct json_out *j, uint64_t v)
{
	json_out_sep(j);
	buf_printf(j->b, "%llu", (unsigned long long)v);
}

/* json_out_double - write a number; NaN and infinities become null. */
void
json_out_double(struct json_out *j, double v)
{
	json_out_sep(j);
	if (!isfinite(v))
		buf_adds(j->b, "null");
	else
		buf_printf(j->b, "%.17g", v);
}

/* json_out_bool - write true or false. */
void
json_out_bool(struct json_out *j, int v)
{
	json_out_sep(j);
	buf_adds(j->b, v ? "true" : "false");
}

/* json_out_null - write null. */
void
json_out_null(struct json_out *j)
{
	json_out_sep(j);
	buf_adds(j->b, "null");
}

/* json_out_val - write a decoded protocol value (see json_out.h). */
void
json_out_val(struct json_out *j, const struct msg_val *v)
{
	size_t k;

	if (v == NULL) {
		json_out_null(j);
		return;
	}
	switch (v->type) {
	case MSG_V_NIL:
		json_out_null(j);
		break;
	case MSG_V_BOOL:
		json_out_bool(j, v->u.b);
		break;
	case MSG_V_INT:
		json_out_int(j, v->u.i);
		break;
	case MSG_V_STR:
	case MSG_V_BIN:
		json_out_strn(j, v->u.s.ptr, v->u.s.len);
		break;
	case MSG_V_ARR:
		if (j->depth >= JSON_OUT_DEPTH) {
			json_out_null(j);
			break;
		}
		json_out_begin_array(j);
		for (k = 0; k < v->u.a.n; k++)
			json_out_val(j, v->u.a.items[k]);
		json_out_end_array(j);
		break;
	case MSG_V_MAP:
		if (j->depth >= JSON_OUT_DEPTH) {
			json_out_null(j);
			break;
		}
		json_out_begin_object(j);
		for (k = 0; k < v->u.m.n; k++) {
			json_out_key(j, v->u.m.kv[k].key);
			json_out_val(j, v->u.m.kv[k].val);
		}
		json_out_end_object(j);
		break;
	}
}
