/*
 * responses.c - the `openai-responses` wire: OpenAI's Responses API,
 * streamed.
 *
 * POST {base}/responses with "Authorization: Bearer KEY".  The body:
 * model, input (a system message of the system blocks joined by blank
 * lines, then the conversation as items), tools (functions, not
 * strict), max_output_tokens, stream, store false, include
 * reasoning.encrypted_content, prompt_cache_key, and reasoning {effort,
 * summary auto} when thinking is asked for.  A reasoning item from this
 * wire goes back inline with its id and encrypted_content (never as an
 * item_reference, which needs stored responses).  Cache marks are not
 * sent: OpenAI caches prefixes by itself.
 *
 * Events: response.created (model), response.output_item.added/.done,
 * response.output_text.delta, response.refusal.delta,
 * response.reasoning_summary_text.delta, response.reasoning_text.delta,
 * response.function_call_arguments.delta, response.completed,
 * response.incomplete, response.failed, error.  Others are skipped.
 */
#include <stdio.h>
#include <string.h>

#include "proto/err.h"
#include "workers/model/wire.h"

/* A part's key: the output item's index, and the content's within it. */
#define RS_KEY(out, sub) ((long)(out)*1024 + (long)(sub))
/* The largest output_index taken: a reply has a few items, and a part's
 * key (RS_KEY) must not overflow (the fuzzer sent 444444444444444440). */
#define RS_OUT_MAX 65535
#define RS_REFUSAL 1 /* st->state bit: a refusal came */

/* rs_out - ev's output_index, when it is there and at most RS_OUT_MAX. */
static bool
rs_out(const json_t *ev, uint64_t *outp)
{
	return mjson_uint(ev, "output_index", outp) && *outp <= RS_OUT_MAX;
}

/* rs_message - an empty message item of role. */
static json_t *
rs_message(const char *role)
{
	return json_pack(
	    "{s:s,s:s,s:[]}", "type", "message", "role", role, "content");
}

/* rs_effort - the reasoning effort for a thinking budget. */
static const char *
rs_effort(uint64_t budget)
{
	if (budget < 4096)
		return "low";
	if (budget < 16384)
		return "medium";
	return "high";
}

/* rs_user - a user message's parts as items onto input. */
static int
rs_user(const struct model_message *m, json_t *input, struct buf *tmp)
{
	json_t *msg = NULL, *c;
	int bad = 0;
	size_t j;

	for (j = 0; j < m->nparts; j++) {
		const struct model_part *p = &m->parts[j];

		if (p->type == MODEL_P_TOOL_RESULT) {
			c = json_object();
			json_object_set_new(
			    c, "type", json_string("function_call_output"));
			json_object_set_new(c, "call_id", json_string(p->id));
			bad |= mjson_setstr(c, "output", p->text, p->len);
			json_array_append_new(input, c);
			msg = NULL;
			continue;
		}
		if (p->type == MODEL_P_TEXT && p->len == 0)
			continue;
		if (msg == NULL) {
			msg = rs_message("user");
			json_array_append_new(input, msg);
		}
		c = json_object();
		if (p->type == MODEL_P_IMAGE) {
			wire_data_url(p, tmp);
			json_object_set_new(
			    c, "type", json_string("input_image"));
			bad |=
			    mjson_setstr(c, "image_url", tmp->data, tmp->len);
		} else {
			json_object_set_new(
			    c, "type", json_string("input_text"));
			bad |= mjson_setstr(c, "text", p->text, p->len);
		}
		json_array_append_new(json_object_get(msg, "content"), c);
	}
	return bad;
}

/* rs_assistant - an assistant message's parts as items onto input. */
static int
rs_assistant(
    const struct model_message *m, json_t *input, char *why, size_t whylen)
{
	json_t *msg = NULL, *c;
	int bad = 0;
	size_t j;

	for (j = 0; j < m->nparts; j++) {
		const struct model_part *p = &m->parts[j];

		switch (p->type) {
		case MODEL_P_TEXT:
			if (p->len == 0)
				break;
			if (msg == NULL) {
				msg = rs_message("assistant");
				json_array_append_new(input, msg);
			}
			c = json_object();
			json_object_set_new(
			    c, "type", json_string("output_text"));
			bad |= mjson_setstr(c, "text", p->text, p->len);
			json_array_append_new(
			    json_object_get(msg, "content"), c);
			break;
		case MODEL_P_THINKING:
			if (strcmp(p->wire, model_wire_responses.name) != 0)
				break;
			c = json_object();
			json_object_set_new(
			    c, "type", json_string("reasoning"));
			if (p->id != NULL)
				json_object_set_new(
				    c, "id", json_string(p->id));
			if (p->signature != NULL)
				json_object_set_new(c, "encrypted_content",
				    json_string(p->signature));
			json_object_set_new(c, "summary",
			    p->len > 0
				? json_pack("[{s:s,s:s%}]", "type",
				      "summary_text", "text", p->text, p->len)
				: json_array());
			json_array_append_new(input, c);
			msg = NULL;
			break;
		case MODEL_P_TOOL_USE: {
			json_t *in = wire_input(p, why, whylen);

			if (in == NULL)
				return -1;
			json_decref(in);
			c = json_object();
			json_object_set_new(
			    c, "type", json_string("function_call"));
			json_object_set_new(c, "call_id", json_string(p->id));
			json_object_set_new(c, "name", json_string(p->name));
			json_object_set_new(
			    c, "arguments", json_string(p->input));
			json_array_append_new(input, c);
			msg = NULL;
			break;
		}
		default:
			break;
		}
	}
	return bad;
}

/* rs_system - the system blocks joined by blank lines, onto out. */
static void
rs_system(const struct model_request *req, struct buf *out)
{
	size_t k;

	buf_reset(out);
	for (k = 0; k < req->nsystem; k++) {
		if (k > 0)
			buf_adds(out, "\n\n");
		buf_adds(out, req->system[k]);
	}
}

/* rs_build - the Responses body of req. */
static int
rs_build(
    const struct model_request *req, struct buf *body, char *why, size_t whylen)
{
	json_t *o = json_object(), *input = json_array(), *arr, *x;
	struct buf tmp = BUF_INIT;
	int bad = 0;
	size_t k;

	why[0] = '\0';
	json_object_set_new(o, "model", json_string(req->model));
	if (req->nsystem > 0) {
		rs_system(req, &tmp);
		x = rs_message("system");
		json_array_append_new(json_object_get(x, "content"),
		    json_pack("{s:s,s:s%}", "type", "input_text", "text",
			tmp.data, tmp.len));
		json_array_append_new(input, x);
	}
	for (k = 0; k < req->nmsgs && bad == 0; k++)
		bad = req->msgs[k].assistant
		    ? rs_assistant(&req->msgs[k], input, why, whylen)
		    : rs_user(&req->msgs[k], input, &tmp);
	json_object_set_new(o, "input", input);
	if (req->ntools > 0) {
		arr = json_array();
		for (k = 0; k < req->ntools && bad == 0; k++) {
			json_t *schema =
			    wire_schema(&req->tools[k], why, whylen);

			if (schema == NULL) {
				bad = -1;
				break;
			}
			x = json_object();
			json_object_set_new(x, "type", json_string("function"));
			json_object_set_new(
			    x, "name", json_string(req->tools[k].name));
			json_object_set_new(x, "description",
			    json_string(req->tools[k].description));
			json_object_set_new(x, "parameters", schema);
			json_object_set_new(x, "strict", json_false());
			json_array_append_new(arr, x);
		}
		json_object_set_new(o, "tools", arr);
	}
	json_object_set_new(
	    o, "max_output_tokens", json_integer((json_int_t)req->max_tokens));
	json_object_set_new(o, "stream", json_true());
	json_object_set_new(o, "store", json_false());
	json_object_set_new(
	    o, "include", json_pack("[s]", "reasoning.encrypted_content"));
	if (req->cache_key != NULL)
		json_object_set_new(
		    o, "prompt_cache_key", json_string(req->cache_key));
	if (req->thinking > 0)
		json_object_set_new(o, "reasoning",
		    json_pack("{s:s,s:s}", "effort", rs_effort(req->thinking),
			"summary", "auto"));
	buf_free(&tmp);
	return wire_build_out(o, bad, body, why, whylen);
}

/* rs_part - the part of key, made with type if new; NULL when full. */
static struct model_rpart *
rs_part(struct model_stream *st, enum model_ptype type, long key)
{
	struct model_rpart *p = model_reply_find(&st->reply, key);

	if (p != NULL && p->type == type)
		return p;
	return model_reply_part(&st->reply, type, key);
}

/* rs_set - replace b with s (n bytes), within the caps. */
static int
rs_set(struct model_stream *st, struct buf *b, const char *s, size_t n)
{
	if (b->len > 0)
		return 0; /* the deltas already said it */
	if (model_reply_add(&st->reply, b, false, s, n) < 0)
		return model_stream_fail(
		    st, false, "the reply passed its size cap");
	return 0;
}

/* rs_item_added - response.output_item.added: a part for the item. */
static int
rs_item_added(struct model_stream *st, const json_t *ev)
{
	json_t *item = mjson_obj(ev, "item");
	const char *type = mjson_str(item, "type", NULL), *s;
	struct model_rpart *p;
	uint64_t out;
	size_t n;

	if (!rs_out(ev, &out) || type == NULL)
		return model_stream_fail(st, true,
		    "response.output_item.added without type or an "
		    "output_index up to 65535");
	if (strcmp(type, "function_call") == 0) {
		p = rs_part(st, MODEL_P_TOOL_USE, RS_KEY(out, 0));
		if (p == NULL)
			return model_stream_fail(st, false, "too many parts");
		if ((s = mjson_str(item, "call_id", &n)) == NULL ||
		    rs_set(st, &p->id, s, n) < 0 ||
		    (s = mjson_str(item, "name", &n)) == NULL ||
		    rs_set(st, &p->name, s, n) < 0)
			return model_stream_fail(st, true,
			    "a function_call without call_id or name");
	} else if (strcmp(type, "reasoning") == 0) {
		p = rs_part(st, MODEL_P_THINKING, RS_KEY(out, 0));
		if (p == NULL)
			return model_stream_fail(st, false, "too many parts");
		if ((s = mjson_str(item, "id", &n)) != NULL &&
		    rs_set(st, &p->id, s, n) < 0)
			return -SHIRO_ERR_PROTO;
	}
	return 0;
}

/* rs_item_done - response.output_item.done: what the deltas left out. */
static int
rs_item_done(struct model_stream *st, const json_t *ev)
{
	json_t *item = mjson_obj(ev, "item"), *arr, *x;
	const char *type = mjson_str(item, "type", NULL), *s;
	struct model_rpart *p;
	uint64_t out;
	size_t n, k;

	if (!rs_out(ev, &out) || type == NULL)
		return model_stream_fail(st, true,
		    "response.output_item.done without type or an output_index "
		    "up to 65535");
	if (strcmp(type, "function_call") == 0) {
		p = model_reply_find(&st->reply, RS_KEY(out, 0));
		if (p == NULL || p->type != MODEL_P_TOOL_USE)
			return model_stream_fail(st, true,
			    "a function_call done that never started");
		if ((s = mjson_str(item, "arguments", &n)) != NULL &&
		    rs_set(st, &p->input, s, n) < 0)
			return -SHIRO_ERR_PROTO;
		return wire_finish_tool(st, p);
	}
	if (strcmp(type, "reasoning") == 0) {
		p = rs_part(st, MODEL_P_THINKING, RS_KEY(out, 0));
		if (p == NULL)
			return model_stream_fail(st, false, "too many parts");
		if ((s = mjson_str(item, "encrypted_content", &n)) != NULL &&
		    rs_set(st, &p->signature, s, n) < 0)
			return -SHIRO_ERR_PROTO;
		if ((s = mjson_str(item, "id", &n)) != NULL &&
		    rs_set(st, &p->id, s, n) < 0)
			return -SHIRO_ERR_PROTO;
		if (p->text.len > 0 ||
		    (arr = mjson_arr(item, "summary")) == NULL)
			return 0;
		/* A server that sent the summary only here. */
		json_array_foreach(arr, k, x)
		{
			if ((s = mjson_str(x, "text", &n)) == NULL)
				continue;
			if (p->text.len > 0 &&
			    model_stream_delta(st, p, "\n\n", 2) < 0)
				return -SHIRO_ERR_PROTO;
			if (model_stream_delta(st, p, s, n) < 0)
				return -SHIRO_ERR_PROTO;
		}
		return 0;
	}
	if (strcmp(type, "message") == 0 &&
	    (arr = mjson_arr(item, "content")) != NULL) {
		/* A server that sent the text only here. */
		json_array_foreach(arr, k, x)
		{
			const char *ct = mjson_str(x, "type", NULL);

			if (k >= 1024)
				break;
			if (ct == NULL || strcmp(ct, "output_text") != 0 ||
			    (s = mjson_str(x, "text", &n)) == NULL)
				continue;
			if (model_reply_find(&st->reply, RS_KEY(out, k)) !=
			    NULL)
				continue;
			p = rs_part(st, MODEL_P_TEXT, RS_KEY(out, k));
			if (p == NULL)
				return model_stream_fail(
				    st, false, "too many parts");
			if (model_stream_delta(st, p, s, n) < 0)
				return -SHIRO_ERR_PROTO;
		}
	}
	return 0;
}

/* rs_delta - a text, refusal, reasoning or arguments delta. */
static int
rs_delta(struct model_stream *st, const json_t *ev, enum model_ptype type,
    bool by_content)
{
	uint64_t out, sub = 0;
	struct model_rpart *p;
	const char *s;
	size_t n;

	if (!rs_out(ev, &out) || (s = mjson_str(ev, "delta", &n)) == NULL)
		return model_stream_fail(st, true,
		    "a delta without delta or an output_index up to 65535");
	if (by_content)
		mjson_uint(ev, "content_index", &sub);
	if (sub >= 1024)
		return model_stream_fail(st, true, "a content_index past 1023");
	if (type == MODEL_P_TOOL_USE) {
		p = model_reply_find(&st->reply, RS_KEY(out, 0));
		if (p == NULL || p->type != MODEL_P_TOOL_USE)
			return model_stream_fail(st, true,
			    "arguments for a function_call never started");
		if (model_reply_add(&st->reply, &p->input, false, s, n) < 0)
			return model_stream_fail(
			    st, false, "the reply passed its size cap");
		return 0;
	}
	p = rs_part(st, type, RS_KEY(out, sub));
	if (p == NULL)
		return model_stream_fail(st, false, "too many parts");
	return model_stream_delta(st, p, s, n);
}

/* rs_completed - response.completed or .incomplete: the end. */
static int
rs_completed(struct model_stream *st, const json_t *ev, bool incomplete)
{
	json_t *r = mjson_obj(ev, "response"), *u = mjson_obj(r, "usage");
	struct model_usage *x = &st->reply.usage;
	uint64_t cached = 0, input = 0;
	const char *reason, *s;
	size_t k, n;

	if (u != NULL) {
		mjson_uint(u, "input_tokens", &input);
		mjson_uint(mjson_obj(u, "input_tokens_details"),
		    "cached_tokens", &cached);
		mjson_uint(u, "output_tokens", &x->output);
		x->cache_read = cached;
		x->input = input > cached ? input - cached : 0;
		x->cache_write = 0;
	}
	if ((s = mjson_str(r, "model", &n)) != NULL && n < 256 &&
	    st->reply.model.len == 0)
		buf_add(&st->reply.model, s, n);
	st->done = true;
	if (incomplete) {
		reason = mjson_str(
		    mjson_obj(r, "incomplete_details"), "reason", NULL);
		st->reply.stop = reason == NULL		       ? "other"
		    : strcmp(reason, "max_output_tokens") == 0 ? "max_tokens"
		    : strcmp(reason, "content_filter") == 0    ? "refusal"
							       : "other";
		return 0;
	}
	st->reply.stop = st->state & RS_REFUSAL ? "refusal" : "end";
	for (k = 0; k < st->reply.nparts; k++)
		if (st->reply.parts[k].type == MODEL_P_TOOL_USE)
			st->reply.stop = "tool_use";
	return 0;
}

/* rs_failed - response.failed or error: why, and whether to retry. */
static int
rs_failed(struct model_stream *st, const json_t *e, const char *what)
{
	const char *code = mjson_str(e, "code", NULL);
	const char *text = mjson_str(e, "message", NULL);
	bool retry = code == NULL || strcmp(code, "server_error") == 0 ||
	    strcmp(code, "rate_limit_exceeded") == 0 ||
	    strcmp(code, "server_is_overloaded") == 0;

	return model_stream_fail(st, retry, "%s: %.64s: %.300s", what,
	    code ? code : "?", text ? text : "(no message)");
}

/* rs_event - one event of the stream. */
static int
rs_event(
    struct model_stream *st, const char *name, const char *data, size_t len)
{
	json_t *ev = wire_event_json(st, name, data, len);
	const char *type, *s;
	size_t n;
	int rc = 0;

	if (ev == NULL)
		return -SHIRO_ERR_PROTO;
	type = mjson_str(ev, "type", NULL);
	if (type == NULL)
		type = name;
	st->events++;
	if (st->done) {
		rc = model_stream_fail(
		    st, true, "an event after the response completed");
	} else if (strcmp(type, "response.created") == 0) {
		s = mjson_str(mjson_obj(ev, "response"), "model", &n);
		if (s != NULL && n < 256) {
			buf_reset(&st->reply.model);
			buf_add(&st->reply.model, s, n);
		}
	} else if (strcmp(type, "response.output_item.added") == 0) {
		rc = rs_item_added(st, ev);
	} else if (strcmp(type, "response.output_item.done") == 0) {
		rc = rs_item_done(st, ev);
	} else if (strcmp(type, "response.output_text.delta") == 0) {
		rc = rs_delta(st, ev, MODEL_P_TEXT, true);
	} else if (strcmp(type, "response.refusal.delta") == 0) {
		st->state |= RS_REFUSAL;
		rc = rs_delta(st, ev, MODEL_P_TEXT, true);
	} else if (strcmp(type, "response.reasoning_summary_text.delta") == 0 ||
	    strcmp(type, "response.reasoning_text.delta") == 0) {
		rc = rs_delta(st, ev, MODEL_P_THINKING, false);
	} else if (strcmp(type, "response.reasoning_summary_part.added") == 0) {
		struct model_rpart *p;
		uint64_t out;

		/* Summary parts after the first are set apart. */
		if (rs_out(ev, &out) &&
		    (p = model_reply_find(&st->reply, RS_KEY(out, 0))) !=
			NULL &&
		    p->type == MODEL_P_THINKING && p->text.len > 0)
			rc = model_stream_delta(st, p, "\n\n", 2);
	} else if (strcmp(type, "response.function_call_arguments.delta") ==
	    0) {
		rc = rs_delta(st, ev, MODEL_P_TOOL_USE, false);
	} else if (strcmp(type, "response.completed") == 0) {
		rc = rs_completed(st, ev, false);
	} else if (strcmp(type, "response.incomplete") == 0) {
		rc = rs_completed(st, ev, true);
	} else if (strcmp(type, "response.failed") == 0) {
		rc =
		    rs_failed(st, mjson_obj(mjson_obj(ev, "response"), "error"),
			"the response failed");
	} else if (strcmp(type, "error") == 0) {
		rc = rs_failed(st, ev, "an error event");
	}
	json_decref(ev);
	return rc;
}

/* rs_finish - the stream ended: whole only after response.completed. */
static int
rs_finish(struct model_stream *st)
{
	if (!st->done)
		return model_stream_fail(st, true,
		    "the stream ended before response.completed, after %zu "
		    "events",
		    st->events);
	return 0;
}

static const char *const rs_headers[] = {NULL};

const struct model_wire model_wire_responses = {
    .name = "openai-responses",
    .base = "https://api.openai.com/v1",
    .path = "/responses",
    .probe = "/models",
    .auth = "authorization",
    .auth_prefix = "Bearer ",
    .headers = rs_headers,
    .request_id = "x-request-id",
    .build = rs_build,
    .event = rs_event,
    .finish = rs_finish,
    .error_text = wire_openai_error,
};
