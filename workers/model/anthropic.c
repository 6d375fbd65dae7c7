/*
 * anthropic.c - the `anthropic` wire: Anthropic's Messages API, streamed.
 *
 * POST {base}/v1/messages with x-api-key and anthropic-version.  The
 * body: model, max_tokens, stream, system blocks, tools, messages and
 * thinking.  A part marked `cache` gets cache_control {type: ephemeral};
 * `cache_tools` marks the last system block (or the last tool when there
 * is no system block), so tools and system are cached together.
 * Thinking from this wire goes back as a thinking block with its
 * signature, or as redacted_thinking when it has no text and its
 * signature holds the data.
 *
 * Events: message_start (model, usage), content_block_start/_delta/_stop
 * (text, thinking, signature, tool input JSON), message_delta (stop
 * reason, usage), message_stop (the end), ping, error.  Unknown events
 * and block types are skipped, as Anthropic asks of clients.
 */
#include <stdio.h>
#include <string.h>

#include "proto/err.h"
#include "workers/model/wire.h"

/* an_cache - a cache_control {type: ephemeral} mark on o. */
static void
an_cache(json_t *o)
{
	json_object_set_new(
	    o, "cache_control", json_pack("{s:s}", "type", "ephemeral"));
}

/* an_part - one request part as a content block, or NULL to skip it. */
static json_t *
an_part(const struct model_part *p, struct buf *tmp, char *why, size_t whylen,
    int *bad)
{
	json_t *b = json_object(), *v;

	switch (p->type) {
	case MODEL_P_TEXT:
		if (p->len == 0)
			goto skip; /* the API refuses empty text blocks */
		json_object_set_new(b, "type", json_string("text"));
		*bad |= mjson_setstr(b, "text", p->text, p->len);
		if (p->cache)
			an_cache(b);
		return b;
	case MODEL_P_IMAGE:
		buf_reset(tmp);
		mjson_base64(p->data, p->data_len, tmp);
		v = json_object();
		json_object_set_new(v, "type", json_string("base64"));
		json_object_set_new(v, "media_type", json_string(p->media));
		*bad |= mjson_setstr(v, "data", tmp->data, tmp->len);
		json_object_set_new(b, "type", json_string("image"));
		json_object_set_new(b, "source", v);
		if (p->cache)
			an_cache(b);
		return b;
	case MODEL_P_THINKING:
		if (strcmp(p->wire, model_wire_anthropic.name) != 0)
			goto skip;
		if (p->len == 0 && p->signature != NULL &&
		    p->signature[0] != '\0') {
			json_object_set_new(
			    b, "type", json_string("redacted_thinking"));
			json_object_set_new(
			    b, "data", json_string(p->signature));
			return b;
		}
		json_object_set_new(b, "type", json_string("thinking"));
		*bad |= mjson_setstr(b, "thinking", p->text, p->len);
		json_object_set_new(b, "signature",
		    json_string(p->signature ? p->signature : ""));
		return b;
	case MODEL_P_TOOL_USE:
		if ((v = wire_input(p, why, whylen)) == NULL) {
			*bad = -1;
			goto skip;
		}
		json_object_set_new(b, "type", json_string("tool_use"));
		json_object_set_new(b, "id", json_string(p->id));
		json_object_set_new(b, "name", json_string(p->name));
		json_object_set_new(b, "input", v);
		return b;
	case MODEL_P_TOOL_RESULT:
		json_object_set_new(b, "type", json_string("tool_result"));
		json_object_set_new(b, "tool_use_id", json_string(p->id));
		*bad |= mjson_setstr(b, "content", p->text, p->len);
		if (p->error)
			json_object_set_new(b, "is_error", json_true());
		/* A turn's later steps end with a tool result: their mark. */
		if (p->cache)
			an_cache(b);
		return b;
	}
skip:
	json_decref(b);
	return NULL;
}

/* an_build - the Messages body of req. */
static int
an_build(
    const struct model_request *req, struct buf *body, char *why, size_t whylen)
{
	json_t *o = json_object(), *arr, *x, *last = NULL;
	struct buf tmp = BUF_INIT;
	int bad = 0;
	size_t k, j;

	why[0] = '\0';
	json_object_set_new(o, "model", json_string(req->model));
	json_object_set_new(
	    o, "max_tokens", json_integer((json_int_t)req->max_tokens));
	json_object_set_new(o, "stream", json_true());
	if (req->nsystem > 0) {
		arr = json_array();
		for (k = 0; k < req->nsystem; k++) {
			x = json_object();
			json_object_set_new(x, "type", json_string("text"));
			json_object_set_new(
			    x, "text", json_string(req->system[k]));
			json_array_append_new(arr, x);
			last = x;
		}
		json_object_set_new(o, "system", arr);
	}
	if (req->ntools > 0) {
		json_t *tlast = NULL;

		arr = json_array();
		for (k = 0; k < req->ntools; k++) {
			json_t *schema =
			    wire_schema(&req->tools[k], why, whylen);

			if (schema == NULL) {
				bad = -1;
				break;
			}
			x = json_object();
			json_object_set_new(
			    x, "name", json_string(req->tools[k].name));
			json_object_set_new(x, "description",
			    json_string(req->tools[k].description));
			json_object_set_new(x, "input_schema", schema);
			json_array_append_new(arr, x);
			tlast = x;
		}
		json_object_set_new(o, "tools", arr);
		if (last == NULL)
			last = tlast;
	}
	if (req->cache_tools && last != NULL)
		an_cache(last);
	arr = json_array();
	for (k = 0; k < req->nmsgs && bad == 0; k++) {
		const struct model_message *m = &req->msgs[k];
		json_t *content = json_array(), *b;

		for (j = 0; j < m->nparts && bad == 0; j++)
			if ((b = an_part(&m->parts[j], &tmp, why, whylen,
				 &bad)) != NULL)
				json_array_append_new(content, b);
		if (json_array_size(content) == 0) {
			json_decref(content);
			continue;
		}
		x = json_object();
		json_object_set_new(x, "role",
		    json_string(m->assistant ? "assistant" : "user"));
		json_object_set_new(x, "content", content);
		json_array_append_new(arr, x);
	}
	json_object_set_new(o, "messages", arr);
	if (req->thinking > 0)
		json_object_set_new(o, "thinking",
		    json_pack("{s:s,s:I}", "type", "enabled", "budget_tokens",
			(json_int_t)req->thinking));
	buf_free(&tmp);
	return wire_build_out(o, bad, body, why, whylen);
}

/* an_usage - the usage object u into the reply's usage. */
static void
an_usage(struct model_stream *st, const json_t *u)
{
	struct model_usage *x = &st->reply.usage;

	if (u == NULL)
		return;
	mjson_uint(u, "input_tokens", &x->input);
	mjson_uint(u, "output_tokens", &x->output);
	mjson_uint(u, "cache_read_input_tokens", &x->cache_read);
	mjson_uint(u, "cache_creation_input_tokens", &x->cache_write);
}

/* an_stop - our stop reason for Anthropic's. */
static const char *
an_stop(const char *s)
{
	if (s == NULL)
		return "other";
	if (strcmp(s, "end_turn") == 0 || strcmp(s, "stop_sequence") == 0)
		return "end";
	if (strcmp(s, "tool_use") == 0)
		return "tool_use";
	if (strcmp(s, "max_tokens") == 0)
		return "max_tokens";
	if (strcmp(s, "refusal") == 0)
		return "refusal";
	return "other";
}

/* an_block_start - content_block_start: a new part. */
static int
an_block_start(struct model_stream *st, const json_t *ev)
{
	json_t *cb = mjson_obj(ev, "content_block");
	uint64_t index;
	const char *type = mjson_str(cb, "type", NULL), *s;
	struct model_rpart *p;
	size_t n;

	if (!mjson_uint(ev, "index", &index) || type == NULL)
		return model_stream_fail(
		    st, true, "content_block_start without index or type");
	if (strcmp(type, "text") == 0)
		p = model_reply_part(&st->reply, MODEL_P_TEXT, (long)index);
	else if (strcmp(type, "thinking") == 0 ||
	    strcmp(type, "redacted_thinking") == 0)
		p = model_reply_part(&st->reply, MODEL_P_THINKING, (long)index);
	else if (strcmp(type, "tool_use") == 0)
		p = model_reply_part(&st->reply, MODEL_P_TOOL_USE, (long)index);
	else
		return 0; /* a block of a kind we do not use */
	if (p == NULL)
		return model_stream_fail(st, false, "too many content blocks");
	if (p->type == MODEL_P_TOOL_USE) {
		if ((s = mjson_str(cb, "id", &n)) == NULL ||
		    model_reply_add(&st->reply, &p->id, false, s, n) < 0 ||
		    (s = mjson_str(cb, "name", &n)) == NULL ||
		    model_reply_add(&st->reply, &p->name, false, s, n) < 0)
			return model_stream_fail(
			    st, true, "a tool_use block without id or name");
		return 0;
	}
	if (strcmp(type, "redacted_thinking") == 0) {
		if ((s = mjson_str(cb, "data", &n)) == NULL ||
		    model_reply_add(&st->reply, &p->signature, false, s, n) < 0)
			return model_stream_fail(
			    st, true, "redacted_thinking without data");
		return 0;
	}
	if ((s = mjson_str(cb, "signature", &n)) != NULL &&
	    model_reply_add(&st->reply, &p->signature, false, s, n) < 0)
		return model_stream_fail(st, false, "a signature too long");
	s = mjson_str(cb, p->type == MODEL_P_TEXT ? "text" : "thinking", &n);
	return s != NULL ? model_stream_delta(st, p, s, n) : 0;
}

/* an_block_delta - content_block_delta: more of a part. */
static int
an_block_delta(struct model_stream *st, const json_t *ev)
{
	json_t *d = mjson_obj(ev, "delta");
	const char *type = mjson_str(d, "type", NULL), *s;
	struct model_rpart *p;
	uint64_t index;
	size_t n;

	if (!mjson_uint(ev, "index", &index) || type == NULL)
		return model_stream_fail(
		    st, true, "content_block_delta without index or type");
	if ((p = model_reply_find(&st->reply, (long)index)) == NULL)
		return 0; /* a block we skipped */
	if (strcmp(type, "text_delta") == 0 && p->type == MODEL_P_TEXT &&
	    (s = mjson_str(d, "text", &n)) != NULL)
		return model_stream_delta(st, p, s, n);
	if (strcmp(type, "thinking_delta") == 0 &&
	    p->type == MODEL_P_THINKING &&
	    (s = mjson_str(d, "thinking", &n)) != NULL)
		return model_stream_delta(st, p, s, n);
	if (strcmp(type, "signature_delta") == 0 &&
	    p->type == MODEL_P_THINKING &&
	    (s = mjson_str(d, "signature", &n)) != NULL) {
		if (model_reply_add(&st->reply, &p->signature, false, s, n) < 0)
			return model_stream_fail(
			    st, false, "the reply passed its size cap");
		return 0;
	}
	if (strcmp(type, "input_json_delta") == 0 &&
	    p->type == MODEL_P_TOOL_USE &&
	    (s = mjson_str(d, "partial_json", &n)) != NULL) {
		if (model_reply_add(&st->reply, &p->input, false, s, n) < 0)
			return model_stream_fail(
			    st, false, "the reply passed its size cap");
		return 0;
	}
	if (strcmp(type, "text_delta") == 0 ||
	    strcmp(type, "thinking_delta") == 0 ||
	    strcmp(type, "signature_delta") == 0 ||
	    strcmp(type, "input_json_delta") == 0)
		return model_stream_fail(st, true,
		    "a %.32s that does not fit block %llu", type,
		    (unsigned long long)index);
	return 0; /* citations and other deltas we do not use */
}

/* an_error - an error event: its type says whether to try again. */
static int
an_error(struct model_stream *st, const json_t *ev)
{
	json_t *e = mjson_obj(ev, "error");
	const char *type = mjson_str(e, "type", NULL);
	const char *text = mjson_str(e, "message", NULL);
	bool retry = type != NULL &&
	    (strcmp(type, "overloaded_error") == 0 ||
		strcmp(type, "api_error") == 0 ||
		strcmp(type, "rate_limit_error") == 0 ||
		strcmp(type, "timeout_error") == 0);

	return model_stream_fail(st, retry, "an error event: %.64s: %.300s",
	    type ? type : "?", text ? text : "(no message)");
}

/* an_event - one event of the stream. */
static int
an_event(
    struct model_stream *st, const char *name, const char *data, size_t len)
{
	json_t *ev = wire_event_json(st, name, data, len), *m;
	const char *type, *s;
	struct model_rpart *p;
	uint64_t index;
	size_t n;
	int rc = 0;

	if (ev == NULL)
		return -SHIRO_ERR_PROTO;
	type = mjson_str(ev, "type", NULL);
	if (type == NULL)
		type = name;
	st->events++;
	if (st->done) {
		rc = model_stream_fail(st, true, "an event after message_stop");
	} else if (strcmp(type, "message_start") == 0) {
		m = mjson_obj(ev, "message");
		an_usage(st, mjson_obj(m, "usage"));
		if ((s = mjson_str(m, "model", &n)) != NULL && n < 256) {
			buf_reset(&st->reply.model);
			buf_add(&st->reply.model, s, n);
		}
	} else if (strcmp(type, "content_block_start") == 0) {
		rc = an_block_start(st, ev);
	} else if (strcmp(type, "content_block_delta") == 0) {
		rc = an_block_delta(st, ev);
	} else if (strcmp(type, "content_block_stop") == 0) {
		if (mjson_uint(ev, "index", &index) &&
		    (p = model_reply_find(&st->reply, (long)index)) != NULL)
			rc = wire_finish_tool(st, p);
	} else if (strcmp(type, "message_delta") == 0) {
		s = mjson_str(mjson_obj(ev, "delta"), "stop_reason", NULL);
		if (s != NULL)
			st->reply.stop = an_stop(s);
		an_usage(st, mjson_obj(ev, "usage"));
	} else if (strcmp(type, "message_stop") == 0) {
		st->done = true;
	} else if (strcmp(type, "error") == 0) {
		rc = an_error(st, ev);
	}
	json_decref(ev);
	return rc;
}

/* an_finish - the stream ended: whole only after message_stop. */
static int
an_finish(struct model_stream *st)
{
	if (!st->done)
		return model_stream_fail(st, true,
		    "the stream ended before message_stop, after %zu events",
		    st->events);
	if (st->reply.stop == NULL)
		st->reply.stop = "other";
	return 0;
}

/* an_error_text - the message of Anthropic's error body. */
static void
an_error_text(const char *body, size_t len, struct buf *out)
{
	char why[64];
	json_t *v = mjson_parse(body, len, why, sizeof(why));
	json_t *e = mjson_obj(v, "error");
	const char *type = mjson_str(e, "type", NULL);
	const char *text = mjson_str(e, "message", NULL);

	if (text != NULL)
		buf_printf(out, "%.64s: %.400s", type ? type : "error", text);
	else
		wire_excerpt(body, len, out);
	json_decref(v);
}

static const char *const an_headers[] = {"anthropic-version: 2023-06-01", NULL};

const struct model_wire model_wire_anthropic = {
    .name = "anthropic",
    .base = "https://api.anthropic.com",
    .path = "/v1/messages",
    .probe = "/v1/models",
    .auth = "x-api-key",
    .auth_prefix = "",
    .headers = an_headers,
    .request_id = "request-id",
    .build = an_build,
    .event = an_event,
    .finish = an_finish,
    .error_text = an_error_text,
};
