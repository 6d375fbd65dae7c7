/*
 * reply.c - a model's reply as it streams in, and as RESULT carries it.
 *
 * Every wire decodes its events into the same struct model_reply: parts
 * in order (thinking, text, tool_use), usage, the stop reason.  The caps
 * keep a RESULT within one message: at most MODEL_REPLY_TEXT_MAX bytes
 * of text, MODEL_REPLY_MAX bytes of content and MODEL_REPLY_PARTS parts;
 * a reply past them fails (the stream is refused, never cut silently).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/err.h"
#include "proto/xmalloc.h"
#include "workers/model/model.h"

/* model_reply_init - an empty reply of wire. */
void
model_reply_init(struct model_reply *r, const char *wire)
{
	memset(r, 0, sizeof(*r));
	r->wire = wire;
}

/* model_reply_free - free the parts. */
void
model_reply_free(struct model_reply *r)
{
	size_t k;

	for (k = 0; k < r->nparts; k++) {
		buf_free(&r->parts[k].text);
		buf_free(&r->parts[k].signature);
		buf_free(&r->parts[k].id);
		buf_free(&r->parts[k].name);
		buf_free(&r->parts[k].input);
	}
	free(r->parts);
	buf_free(&r->model);
	model_reply_init(r, r->wire);
}

/* model_reply_part - a new part of type with the wire's key. */
struct model_rpart *
model_reply_part(struct model_reply *r, enum model_ptype type, long key)
{
	struct model_rpart *p;

	if (r->nparts >= MODEL_REPLY_PARTS)
		return NULL;
	if (r->nparts == r->cap) {
		r->cap = r->cap ? r->cap * 2 : 4;
		r->parts = xreallocarray(r->parts, r->cap, sizeof(*r->parts));
	}
	p = &r->parts[r->nparts++];
	memset(p, 0, sizeof(*p));
	p->type = type;
	p->key = key;
	return p;
}

/* model_reply_find - the last part with key, or NULL. */
struct model_rpart *
model_reply_find(struct model_reply *r, long key)
{
	size_t k;

	for (k = r->nparts; k > 0; k--)
		if (r->parts[k - 1].key == key)
			return &r->parts[k - 1];
	return NULL;
}

/* model_reply_add - append to one of r's buffers within the caps. */
int
model_reply_add(
    struct model_reply *r, struct buf *b, bool is_text, const char *s, size_t n)
{
	if (n > MODEL_REPLY_MAX - r->bytes ||
	    (is_text && n > MODEL_REPLY_TEXT_MAX - r->text_bytes))
		return -SHIRO_ERR_TOOBIG;
	buf_add(b, s, n);
	r->bytes += n;
	if (is_text)
		r->text_bytes += n;
	return 0;
}

/* model_reply_text - every text part joined. */
void
model_reply_text(const struct model_reply *r, struct buf *out)
{
	size_t k;

	buf_reset(out);
	buf_adds(out, "");
	for (k = 0; k < r->nparts; k++)
		if (r->parts[k].type == MODEL_P_TEXT)
			buf_add(
			    out, r->parts[k].text.data, r->parts[k].text.len);
}

/* model_reply_usage - usage as RESULT's usage map. */
void
model_reply_usage(const struct model_usage *u, struct msg *m)
{
	struct msg_val *v = msg_set_map(m, "usage");

	msg_val_set_int(v, "input", (int64_t)(u->input & INT64_MAX));
	msg_val_set_int(v, "output", (int64_t)(u->output & INT64_MAX));
	msg_val_set_int(v, "cache_read", (int64_t)(u->cache_read & INT64_MAX));
	msg_val_set_int(
	    v, "cache_write", (int64_t)(u->cache_write & INT64_MAX));
}

/* model_reply_setbuf - v[key] = the bytes of b ("" when empty). */
static void
model_reply_setbuf(struct msg_val *v, const char *key, const struct buf *b)
{
	msg_val_set_strn(v, key, b->data ? b->data : "", b->len);
}

/* model_reply_content - the parts as data.content. */
void
model_reply_content(const struct model_reply *r, struct msg_val *data)
{
	struct msg_val *arr = msg_val_set_arr(data, "content"), *p;
	size_t k;

	for (k = 0; k < r->nparts; k++) {
		const struct model_rpart *rp = &r->parts[k];

		p = msg_val_add_map(arr);
		switch (rp->type) {
		case MODEL_P_THINKING:
			msg_val_set_str(p, "type", "thinking");
			model_reply_setbuf(p, "text", &rp->text);
			if (rp->signature.len > 0)
				model_reply_setbuf(
				    p, "signature", &rp->signature);
			if (rp->id.len > 0)
				model_reply_setbuf(p, "id", &rp->id);
			msg_val_set_str(p, "wire", r->wire);
			break;
		case MODEL_P_TOOL_USE:
			msg_val_set_str(p, "type", "tool_use");
			model_reply_setbuf(p, "id", &rp->id);
			model_reply_setbuf(p, "name", &rp->name);
			if (rp->input.len > 0)
				model_reply_setbuf(p, "input", &rp->input);
			else
				msg_val_set_str(p, "input", "{}");
			break;
		default:
			msg_val_set_str(p, "type", "text");
			model_reply_setbuf(p, "text", &rp->text);
			break;
		}
	}
}

/* model_stream_init - st ready for a reply of wire. */
void
model_stream_init(struct model_stream *st, const char *wire,
    void (*delta)(void *, bool, const char *, size_t), void *arg)
{
	memset(st, 0, sizeof(*st));
	model_reply_init(&st->reply, wire);
	st->delta = delta;
	st->arg = arg;
}

/* model_stream_fail - say why the stream fails. */
int
model_stream_fail(struct model_stream *st, bool retry, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(st->why, sizeof(st->why), fmt, ap);
	va_end(ap);
	st->retry = retry;
	return -SHIRO_ERR_PROTO;
}

/* model_stream_delta - text or thinking onto part, and to st->delta. */
int
model_stream_delta(
    struct model_stream *st, struct model_rpart *part, const char *s, size_t n)
{
	bool thinking = part->type == MODEL_P_THINKING;

	if (n == 0)
		return 0;
	if (model_reply_add(&st->reply, &part->text, !thinking, s, n) < 0)
		return model_stream_fail(st, false,
		    "the reply passed %u bytes of %s",
		    thinking ? MODEL_REPLY_MAX : MODEL_REPLY_TEXT_MAX,
		    thinking ? "content" : "text");
	if (st->delta != NULL)
		st->delta(st->arg, thinking, s, n);
	return 0;
}
