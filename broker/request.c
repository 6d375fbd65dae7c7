/*
 * request.c - build the request of a model call for the prompt cache
 * (see request.h).
 */
#include <stdlib.h>
#include <string.h>

#include "proto/err.h"
#include "proto/xmalloc.h"

#include "request.h"

/* The largest strings of an assistant's part passed back to a model. */
#define REQUEST_PART_TEXT (1u << 20)
#define REQUEST_PART_NAME 256
#define REQUEST_PART_SIG (64u << 10)

/* request_hash - FNV-1a 64, continued from h. */
uint64_t
request_hash(uint64_t h, const void *s, size_t len)
{
	const unsigned char *p = s;
	size_t k;

	for (k = 0; k < len; k++) {
		h ^= p[k];
		h *= 0x100000001b3ULL;
	}
	return h;
}

/* request_mix - a 64-bit finalizer (MurmurHash3's). */
static uint64_t
request_mix(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 33;
	return h;
}

/* request_bytes_hash - s[0..len), a word at a time. */
uint64_t
request_bytes_hash(const void *s, size_t len)
{
	const unsigned char *p = s;
	uint64_t h = 0x9e3779b97f4a7c15ULL ^ (uint64_t)len, w;
	size_t k = 0;

	for (; k + 8 <= len; k += 8) {
		memcpy(&w, p + k, 8);
		h = (h ^ w) * 0x9fb21c651e98df25ULL;
		h ^= h >> 29;
	}
	if (k < len) {
		w = 0;
		memcpy(&w, p + k, len - k);
		h = (h ^ w) * 0x9fb21c651e98df25ULL;
	}
	return request_mix(h);
}

/* request_fold - a prefix's key h followed by a block of hash x. */
static uint64_t
request_fold(uint64_t h, uint64_t x)
{
	return request_mix(h ^ x) + 0x9e3779b97f4a7c15ULL;
}

/* request_base_init - the system blocks and tools of every request. */
void
request_base_init(struct request_base *rb, const char *home,
    char *const *instructions, size_t ninstructions)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	size_t k;

	memset(rb, 0, sizeof(*rb));
	rb->system = xcalloc(ninstructions + 1, sizeof(*rb->system));
	rb->system[rb->nsystem++] = xstrdup(prompt_system());
	for (k = 0; k < ninstructions; k++)
		rb->system[rb->nsystem++] = xstrdup(instructions[k]);
	rb->tools = prompt_tools(&rb->ntools);
	for (k = 0; k < rb->nsystem; k++)
		h = request_hash(h, rb->system[k], strlen(rb->system[k]) + 1);
	for (k = 0; k < rb->ntools; k++) {
		h = request_hash(
		    h, rb->tools[k].name, strlen(rb->tools[k].name) + 1);
		h = request_hash(h, rb->tools[k].description,
		    strlen(rb->tools[k].description) + 1);
		h = request_hash(
		    h, rb->tools[k].schema, strlen(rb->tools[k].schema) + 1);
	}
	rb->hash = h;
	/* The chat's home names the chat; the key is a hash of it, so the
	 * path itself goes nowhere. */
	rb->cache_key = xasprintf("shiro-%016llx",
	    (unsigned long long)request_hash(
		0xcbf29ce484222325ULL, home, strlen(home)));
}

/* request_base_free - release rb's contents. */
void
request_base_free(struct request_base *rb)
{
	size_t k;

	for (k = 0; k < rb->nsystem; k++)
		free(rb->system[k]);
	free(rb->system);
	free(rb->cache_key);
	memset(rb, 0, sizeof(*rb));
}

/* request_base_bytes - what every request repeats, in bytes. */
size_t
request_base_bytes(const struct request_base *rb)
{
	size_t k, n = 0;

	for (k = 0; k < rb->nsystem; k++)
		n += strlen(rb->system[k]);
	for (k = 0; k < rb->ntools; k++)
		n += strlen(rb->tools[k].name) +
		    strlen(rb->tools[k].description) +
		    strlen(rb->tools[k].schema);
	return n;
}

/* request_view_init - an empty view. */
void
request_view_init(struct request_view *v)
{
	memset(v, 0, sizeof(*v));
	buf_adds(&v->text, "<chat>\n");
}

/* request_view_add - one more line. */
void
request_view_add(struct request_view *v, const char *line, size_t len)
{
	size_t k, start = v->text.len;

	if (v->nlines == v->cap) {
		v->cap = v->cap ? 2 * v->cap : 64;
		v->ends = xreallocarray(v->ends, v->cap, sizeof(*v->ends));
		v->blocks = xreallocarray(
		    v->blocks, v->cap / REQUEST_BLOCK, sizeof(*v->blocks));
	}
	buf_add(&v->text, line, len);
	for (k = start; k < v->text.len; k++)
		if (v->text.data[k] == '\n' || v->text.data[k] == '\r')
			v->text.data[k] = ' ';
	buf_addc(&v->text, '\n');
	v->ends[v->nlines++] = v->text.len;
	if (v->nlines % REQUEST_BLOCK == 0) {
		start = v->nlines == REQUEST_BLOCK
		    ? 0
		    : v->ends[v->nlines - REQUEST_BLOCK - 1];
		v->blocks[v->nlines / REQUEST_BLOCK - 1] = request_bytes_hash(
		    v->text.data + start, v->text.len - start);
	}
}

/* request_view_free - release v's contents. */
void
request_view_free(struct request_view *v)
{
	buf_free(&v->text);
	free(v->ends);
	free(v->blocks);
	memset(v, 0, sizeof(*v));
}

/* request_head - model, limits, system, tools, the cache's keys. */
void
request_head(struct msg_val *req, const struct request_base *rb,
    const char *model, unsigned max_tokens, unsigned thinking)
{
	struct msg_val *arr, *t;
	size_t k;

	msg_val_set_str(req, "model", model);
	msg_val_set_int(req, "max_tokens", max_tokens);
	arr = msg_val_set_arr(req, "system");
	for (k = 0; k < rb->nsystem; k++)
		msg_val_add_str(arr, rb->system[k]);
	arr = msg_val_set_arr(req, "tools");
	for (k = 0; k < rb->ntools; k++) {
		t = msg_val_add_map(arr);
		msg_val_set_str(t, "name", rb->tools[k].name);
		msg_val_set_str(t, "description", rb->tools[k].description);
		msg_val_set_str(t, "schema", rb->tools[k].schema);
	}
	msg_val_set_str(req, "cache_key", rb->cache_key);
	msg_val_set_bool(req, "cache_tools", true);
	if (thinking != 0)
		msg_val_set_int(req, "thinking", thinking);
}

/* request_text_part - one text part, marked when cache. */
struct msg_val *
request_text_part(
    struct msg_val *content, const char *text, size_t len, int cache)
{
	struct msg_val *p = msg_val_add_map(content);

	msg_val_set_str(p, "type", "text");
	msg_val_set_strn(p, "text", text, len);
	if (cache)
		msg_val_set_bool(p, "cache", true);
	return p;
}

/* request_message - a new message of role; its content array. */
struct msg_val *
request_message(struct msg_val *messages, const char *role)
{
	struct msg_val *m = msg_val_add_map(messages);

	msg_val_set_str(m, "role", role);
	return msg_val_set_arr(m, "content");
}

/* request_prefix_hash - the hash of the view's first lines. */
uint64_t
request_prefix_hash(
    const struct request_view *v, const struct request_base *rb, size_t lines)
{
	uint64_t h = rb->hash;
	size_t j, from;

	if (lines == 0 || lines > v->nlines)
		return rb->hash;
	for (j = 0; j < lines / REQUEST_BLOCK; j++)
		h = request_fold(h, v->blocks[j]);
	if (lines % REQUEST_BLOCK != 0) {
		from = j == 0 ? 0 : v->ends[j * REQUEST_BLOCK - 1];
		h = request_fold(h,
		    request_bytes_hash(
			v->text.data + from, v->ends[lines - 1] - from));
	}
	return h;
}

/* request_boundaries - keys and sizes of the block boundaries. */
size_t
request_boundaries(const struct request_view *v, const struct request_base *rb,
    uint64_t mh, uint64_t *keys, size_t *bytes, size_t max)
{
	size_t base = request_base_bytes(rb), n = 0, line;
	uint64_t h = rb->hash;

	if (max == 0)
		return 0;
	keys[n] = h ^ mh;
	bytes[n++] = base;
	for (line = REQUEST_BLOCK; line <= v->nlines && n < max;
	     line += REQUEST_BLOCK) {
		h = request_fold(h, v->blocks[line / REQUEST_BLOCK - 1]);
		keys[n] = h ^ mh;
		bytes[n++] = base + v->ends[line - 1];
	}
	return n;
}

/* request_lookback - the extra mark's place, or 0. */
size_t
request_lookback(const struct request_view *v, const struct request_base *rb,
    const struct request_mark *last)
{
	size_t whole = v->nlines - v->nlines % REQUEST_BLOCK;

	/* Four blocks of slack: the provider counts every content part
	 * between the marks, and the system blocks are parts too. */
	if (last == NULL || last->lines == 0 || last->lines >= whole ||
	    (whole - last->lines) / REQUEST_BLOCK < REQUEST_LOOKBACK - 4)
		return 0;
	if (request_prefix_hash(v, rb, last->lines) != last->hash)
		return 0;
	return last->lines;
}

/* request_mark_set - remember this view's mark. */
void
request_mark_set(struct request_mark *last, const struct request_view *v,
    const struct request_base *rb)
{
	size_t whole = v->nlines - v->nlines % REQUEST_BLOCK;

	if (whole == 0)
		return;
	last->lines = whole;
	last->hash = request_prefix_hash(v, rb, whole);
}

/* request_view_parts - the view in blocks, with its marks. */
size_t
request_view_parts(struct msg_val *content, const struct request_view *v,
    size_t extra, const struct request_base *rb, uint64_t *markhash)
{
	size_t whole = v->nlines - v->nlines % REQUEST_BLOCK;
	size_t k, start = 0, end, stop;

	/* Part 0 carries "<chat>\n" and the first block; an empty view is
	 * that line alone. */
	for (k = 0;; k += REQUEST_BLOCK) {
		end = k + REQUEST_BLOCK < v->nlines ? k + REQUEST_BLOCK
						    : v->nlines;
		stop = end > 0 ? v->ends[end - 1] : v->text.len;
		request_text_part(content, v->text.data + start, stop - start,
		    (whole > 0 && end == whole) || (extra > 0 && end == extra));
		start = stop;
		if (end >= v->nlines)
			break;
	}
	if (markhash != NULL)
		*markhash = request_prefix_hash(v, rb, whole);
	return whole;
}

/* request_str_ok - key of p is a string within max (or absent and not
 * required). */
static int
request_str_ok(const struct msg_val *p, const char *key, size_t max, int req)
{
	const struct msg_val *v = msg_val_get(p, key);

	if (v == NULL)
		return !req;
	return v->type == MSG_V_STR && v->u.s.len <= max;
}

/* request_part_ok - whether an assistant's part has a shape we pass on:
 * its type's keys present, strings, within their limits. */
static int
request_part_ok(const struct msg_val *p)
{
	const char *type;

	if (p->type != MSG_V_MAP)
		return 0;
	type = msg_val_str(p, "type");
	if (type == NULL)
		return 0;
	if (strcmp(type, "text") == 0)
		return request_str_ok(p, "text", REQUEST_PART_TEXT, 1);
	if (strcmp(type, "thinking") == 0)
		return request_str_ok(p, "text", REQUEST_PART_TEXT, 1) &&
		    request_str_ok(p, "signature", REQUEST_PART_SIG, 0) &&
		    request_str_ok(p, "id", REQUEST_PART_NAME, 0) &&
		    request_str_ok(p, "wire", REQUEST_PART_NAME, 1);
	if (strcmp(type, "tool_use") == 0)
		return request_str_ok(p, "id", REQUEST_PART_NAME, 1) &&
		    request_str_ok(p, "name", REQUEST_PART_NAME, 1) &&
		    request_str_ok(p, "input", REQUEST_PART_TEXT, 1);
	return 0;
}

/* request_parts_ok - every part of parts passes request_part_ok. */
int
request_parts_ok(const struct msg_val *parts)
{
	size_t k;

	if (parts == NULL || parts->type != MSG_V_ARR)
		return 0;
	for (k = 0; k < parts->u.a.n; k++)
		if (!request_part_ok(parts->u.a.items[k]))
			return 0;
	return 1;
}

/* request_copy_key - copy string key of src into dst if present. */
static void
request_copy_key(
    struct msg_val *dst, const struct msg_val *src, const char *key)
{
	const struct msg_val *v = msg_val_get(src, key);

	if (v != NULL && v->type == MSG_V_STR)
		msg_val_set_strn(dst, key, v->u.s.ptr, v->u.s.len);
}

/* request_copy_parts - a checked copy of an assistant's parts. */
int
request_copy_parts(struct msg_val *content, const struct msg_val *parts)
{
	static const char *const text[] = {"type", "text", NULL};
	static const char *const thinking[] = {
	    "type", "text", "signature", "id", "wire", NULL};
	static const char *const tool[] = {"type", "id", "name", "input", NULL};
	const char *const *keys;
	const char *type;
	struct msg_val *d;
	size_t k, j;

	if (!request_parts_ok(parts))
		return -1;
	for (k = 0; k < parts->u.a.n; k++) {
		type = msg_val_str(parts->u.a.items[k], "type");
		keys = strcmp(type, "text") == 0    ? text
		    : strcmp(type, "thinking") == 0 ? thinking
						    : tool;
		d = msg_val_add_map(content);
		for (j = 0; keys[j] != NULL; j++)
			request_copy_key(d, parts->u.a.items[k], keys[j]);
	}
	return (int)parts->u.a.n;
}
