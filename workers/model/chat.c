/*
 * chat.c - the `openai-chat` wire: Chat Completions, streamed, as OpenAI
 * and the compatible servers (Ollama, llama.cpp, vLLM, LM Studio,
 * OpenRouter, Groq, DeepSeek, xAI) speak it.
 *
 * POST {base}/chat/completions with "Authorization: Bearer KEY".  The
 * body: model, messages (one system message of the system blocks joined
 * by blank lines; a user message's text parts joined into one string,
 * or an array of parts when it holds an image; tool results as `tool`
 * messages before the rest of their user message; an assistant message's
 * text and tool_calls), tools, max_tokens, stream, stream_options
 * {include_usage}, and prompt_cache_key when the request has a cache
 * key.  Thinking parts are never sent back: this format has no field
 * for them.  The thinking budget is not sent either (no common field).
 *
 * Events: data-only; each a chat.completion.chunk whose choices[0].delta
 * carries content, reasoning_content or reasoning (thinking, as DeepSeek,
 * vLLM and Ollama name it) and tool_calls by index; finish_reason ends
 * the choice; a last chunk carries usage; "[DONE]" ends the stream.  A
 * stream is whole once a finish_reason came ([DONE] optional: not every
 * server sends it).
 */
#include <stdio.h>
#include <string.h>

#include "proto/err.h"
#include "workers/model/wire.h"

#define CH_TEXT (-2L) /* the text part's key */
#define CH_THINK (-3L) /* the thinking part's key */
#define CH_TOOL(i) (1000L + (long)(i)) /* tool call i's key */
#define CH_DONE 1 /* st->state bit: "[DONE]" came */
#define CH_FINISHED 2 /* st->state bit: a finish_reason came */

/* ch_user - a user message: tool results, then the rest, onto msgs. */
static int
ch_user(const struct model_message *m, json_t *msgs, struct buf *tmp)
{
	json_t *parts = json_array(), *c;
	struct buf text = BUF_INIT;
	bool image = false;
	int bad = 0;
	size_t j;

	for (j = 0; j < m->nparts; j++) {
		const struct model_part *p = &m->parts[j];

		if (p->type == MODEL_P_TOOL_RESULT) {
			c = json_object();
			json_object_set_new(c, "role", json_string("tool"));
			json_object_set_new(
			    c, "tool_call_id", json_string(p->id));
			bad |= mjson_setstr(c, "content", p->text, p->len);
			json_array_append_new(msgs, c);
		} else if (p->type == MODEL_P_IMAGE) {
			image = true;
			wire_data_url(p, tmp);
			c = json_object();
			json_object_set_new(
			    c, "type", json_string("image_url"));
			json_object_set_new(c, "image_url", json_object());
			bad |= mjson_setstr(json_object_get(c, "image_url"),
			    "url", tmp->data, tmp->len);
			json_array_append_new(parts, c);
		} else if (p->type == MODEL_P_TEXT && p->len > 0) {
			buf_add(&text, p->text, p->len);
			c = json_object();
			json_object_set_new(c, "type", json_string("text"));
			bad |= mjson_setstr(c, "text", p->text, p->len);
			json_array_append_new(parts, c);
		}
	}
	if (json_array_size(parts) > 0) {
		c = json_object();
		json_object_set_new(c, "role", json_string("user"));
		if (image)
			json_object_set(c, "content", parts);
		else
			bad |= mjson_setstr(c, "content", text.data, text.len);
		json_array_append_new(msgs, c);
	}
	json_decref(parts);
	buf_free(&text);
	return bad;
}

/* ch_assistant - an assistant message: text and tool_calls. */
static int
ch_assistant(
    const struct model_message *m, json_t *msgs, char *why, size_t whylen)
{
	json_t *calls = json_array(), *c, *in;
	struct buf text = BUF_INIT;
	int bad = 0;
	size_t j;

	for (j = 0; j < m->nparts; j++) {
		const struct model_part *p = &m->parts[j];

		if (p->type == MODEL_P_TEXT) {
			buf_add(&text, p->text, p->len);
		} else if (p->type == MODEL_P_TOOL_USE) {
			if ((in = wire_input(p, why, whylen)) == NULL) {
				bad = -1;
				break;
			}
			json_decref(in);
			json_array_append_new(calls,
			    json_pack("{s:s,s:s,s:{s:s,s:s}}", "id", p->id,
				"type", "function", "function", "name", p->name,
				"arguments", p->input));
		}
	}
	if (bad == 0 && (text.len > 0 || json_array_size(calls) > 0)) {
		c = json_object();
		json_object_set_new(c, "role", json_string("assistant"));
		if (text.len > 0)
			bad |= mjson_setstr(c, "content", text.data, text.len);
		else
			json_object_set_new(c, "content", json_null());
		if (json_array_size(calls) > 0)
			json_object_set(c, "tool_calls", calls);
		json_array_append_new(msgs, c);
	}
	json_decref(calls);
	buf_free(&text);
	return bad;
}

/* ch_build - the Chat Completions body of req. */
static int
ch_build(
    const struct model_request *req, struct buf *body, char *why, size_t whylen)
{
	json_t *o = json_object(), *msgs = json_array(), *arr, *x;
	struct buf tmp = BUF_INIT;
	int bad = 0;
	size_t k;

	why[0] = '\0';
	json_object_set_new(o, "model", json_string(req->model));
	if (req->nsystem > 0) {
		for (k = 0; k < req->nsystem; k++) {
			if (k > 0)
				buf_adds(&tmp, "\n\n");
			buf_adds(&tmp, req->system[k]);
		}
		x = json_object();
		json_object_set_new(x, "role", json_string("system"));
		bad |= mjson_setstr(x, "content", tmp.data, tmp.len);
		json_array_append_new(msgs, x);
	}
	for (k = 0; k < req->nmsgs && bad == 0; k++)
		bad = req->msgs[k].assistant
		    ? ch_assistant(&req->msgs[k], msgs, why, whylen)
		    : ch_user(&req->msgs[k], msgs, &tmp);
	json_object_set_new(o, "messages", msgs);
	if (req->ntools > 0 && bad == 0) {
		arr = json_array();
		for (k = 0; k < req->ntools; k++) {
			json_t *schema =
			    wire_schema(&req->tools[k], why, whylen);

			if (schema == NULL) {
				bad = -1;
				break;
			}
			x = json_pack("{s:s,s:{s:s,s:s,s:o}}", "type",
			    "function", "function", "name", req->tools[k].name,
			    "description", req->tools[k].description,
			    "parameters", schema);
			json_array_append_new(arr, x);
		}
		json_object_set_new(o, "tools", arr);
	}
	json_object_set_new(
	    o, "max_tokens", json_integer((json_int_t)req->max_tokens));
	json_object_set_new(o, "stream", json_true());
	json_object_set_new(
	    o, "stream_options", json_pack("{s:b}", "include_usage", 1));
	if (req->cache_key != NULL)
		json_object_set_new(
		    o, "prompt_cache_key", json_string(req->cache_key));
	buf_free(&tmp);
	return wire_build_out(o, bad, body, why, whylen);
}

/* ch_stop - our stop reason for a finish_reason. */
static const char *
ch_stop(const char *s)
{
	if (strcmp(s, "stop") == 0)
		return "end";
	if (strcmp(s, "tool_calls") == 0 || strcmp(s, "function_call") == 0)
		return "tool_use";
	if (strcmp(s, "length") == 0)
		return "max_tokens";
	if (strcmp(s, "content_filter") == 0)
		return "refusal";
	return "other";
}

/* ch_part - the part of key, made with type if new; NULL when full. */
static struct model_rpart *
ch_part(struct model_stream *st, enum model_ptype type, long key)
{
	struct model_rpart *p = model_reply_find(&st->reply, key);

	return p != NULL ? p : model_reply_part(&st->reply, type, key);
}

/* ch_tool - one tool_calls item of a delta. */
static int
ch_tool(struct model_stream *st, const json_t *tc)
{
	json_t *fn = mjson_obj(tc, "function");
	struct model_rpart *p;
	uint64_t index = 0;
	const char *s;
	size_t n;

	if (!mjson_uint(tc, "index", &index) || index >= 1024)
		return model_stream_fail(
		    st, true, "a tool call delta without an index");
	if ((p = ch_part(st, MODEL_P_TOOL_USE, CH_TOOL(index))) == NULL)
		return model_stream_fail(st, false, "too many parts");
	if ((s = mjson_str(tc, "id", &n)) != NULL && n > 0 && p->id.len == 0 &&
	    model_reply_add(&st->reply, &p->id, false, s, n) < 0)
		return model_stream_fail(st, false, "a tool call id too long");
	if ((s = mjson_str(fn, "name", &n)) != NULL && p->name.len == 0 &&
	    model_reply_add(&st->reply, &p->name, false, s, n) < 0)
		return model_stream_fail(st, false, "a tool name too long");
	if ((s = mjson_str(fn, "arguments", &n)) != NULL &&
	    model_reply_add(&st->reply, &p->input, false, s, n) < 0)
		return model_stream_fail(
		    st, false, "the reply passed its size cap");
	return 0;
}

/* ch_usage - a chunk's usage. */
static void
ch_usage(struct model_stream *st, const json_t *u)
{
	struct model_usage *x = &st->reply.usage;
	uint64_t prompt = 0, cached = 0;

	mjson_uint(u, "prompt_tokens", &prompt);
	mjson_uint(u, "completion_tokens", &x->output);
	if (!mjson_uint(mjson_obj(u, "prompt_tokens_details"), "cached_tokens",
		&cached))
		mjson_uint(
		    u, "prompt_cache_hit_tokens", &cached); /* DeepSeek */
	x->cache_read = cached;
	x->input = prompt > cached ? prompt - cached : 0;
	x->cache_write = 0;
}

/* ch_event - one chunk of the stream. */
static int
ch_event(
    struct model_stream *st, const char *name, const char *data, size_t len)
{
	json_t *ev, *choices, *c, *d, *tcs, *tc, *u;
	const char *s, *fin;
	struct model_rpart *p;
	size_t n, k;
	int rc = 0;

	if (len == 6 && memcmp(data, "[DONE]", 6) == 0) {
		st->state |= CH_DONE;
		st->done = true;
		return 0;
	}
	if (st->state & CH_DONE)
		return model_stream_fail(st, true, "a chunk after [DONE]");
	if ((ev = wire_event_json(st, name, data, len)) == NULL)
		return -SHIRO_ERR_PROTO;
	st->events++;
	if ((c = json_object_get(ev, "error")) != NULL) {
		const char *text = json_is_string(c)
		    ? json_string_value(c)
		    : mjson_str(c, "message", NULL);

		rc = model_stream_fail(st, true, "an error chunk: %.300s",
		    text ? text : "(no message)");
		goto out;
	}
	if ((s = mjson_str(ev, "model", &n)) != NULL && n < 256 &&
	    st->reply.model.len == 0)
		buf_add(&st->reply.model, s, n);
	if ((u = mjson_obj(ev, "usage")) != NULL)
		ch_usage(st, u);
	choices = mjson_arr(ev, "choices");
	c = json_array_get(choices, 0);
	if (c == NULL)
		goto out;
	d = mjson_obj(c, "delta");
	if ((s = mjson_str(d, "reasoning_content", &n)) != NULL ||
	    (s = mjson_str(d, "reasoning", &n)) != NULL) {
		if ((p = ch_part(st, MODEL_P_THINKING, CH_THINK)) == NULL) {
			rc = model_stream_fail(st, false, "too many parts");
			goto out;
		}
		if ((rc = model_stream_delta(st, p, s, n)) < 0)
			goto out;
	}
	if ((s = mjson_str(d, "content", &n)) != NULL && n > 0) {
		if ((p = ch_part(st, MODEL_P_TEXT, CH_TEXT)) == NULL) {
			rc = model_stream_fail(st, false, "too many parts");
			goto out;
		}
		if ((rc = model_stream_delta(st, p, s, n)) < 0)
			goto out;
	}
	if ((tcs = mjson_arr(d, "tool_calls")) != NULL)
		json_array_foreach(tcs, k, tc)
		{
			if ((rc = ch_tool(st, tc)) < 0)
				goto out;
		}
	if ((fin = mjson_str(c, "finish_reason", NULL)) != NULL) {
		st->reply.stop = ch_stop(fin);
		st->state |= CH_FINISHED;
	}
out:
	json_decref(ev);
	return rc;
}

/* ch_finish - the stream ended: whole once a finish_reason came. */
static int
ch_finish(struct model_stream *st)
{
	size_t k;
	int rc;

	if (!(st->state & CH_FINISHED))
		return model_stream_fail(st, true,
		    "the stream ended before a finish_reason, after %zu "
		    "chunks",
		    st->events);
	for (k = 0; k < st->reply.nparts; k++) {
		struct model_rpart *p = &st->reply.parts[k];

		if (p->type != MODEL_P_TOOL_USE)
			continue;
		if (p->name.len == 0)
			return model_stream_fail(
			    st, true, "a tool call without a name");
		if (p->id.len == 0) /* some servers give none */
			buf_printf(&p->id, "call_%ld", p->key - CH_TOOL(0));
		if ((rc = wire_finish_tool(st, p)) < 0)
			return rc;
	}
	st->done = true;
	return 0;
}

static const char *const ch_headers[] = {NULL};

const struct model_wire model_wire_chat = {
    .name = "openai-chat",
    .base = "https://api.openai.com/v1",
    .path = "/chat/completions",
    .probe = "/models",
    .auth = "authorization",
    .auth_prefix = "Bearer ",
    .headers = ch_headers,
    .request_id = "x-request-id",
    .build = ch_build,
    .event = ch_event,
    .finish = ch_finish,
    .error_text = wire_openai_error,
};
