/*
 * wire.c - the wires' table and what they share.
 */
#include <stdio.h>
#include <string.h>

#include "proto/err.h"
#include "workers/model/wire.h"

/* model_wire_of - the wire named name, or NULL. */
const struct model_wire *
model_wire_of(const char *name)
{
	static const struct model_wire *const wires[] = {
	    &model_wire_anthropic, &model_wire_responses, &model_wire_chat};
	size_t k;

	for (k = 0; k < sizeof(wires) / sizeof(wires[0]); k++)
		if (strcmp(wires[k]->name, name) == 0)
			return wires[k];
	return NULL;
}

/* wire_event_json - the event's data as a JSON object, or NULL. */
json_t *
wire_event_json(
    struct model_stream *st, const char *name, const char *data, size_t len)
{
	char why[160];
	json_t *v = mjson_parse(data, len, why, sizeof(why));

	if (v == NULL) {
		model_stream_fail(
		    st, true, "a malformed %.64s event: %s", name, why);
		return NULL;
	}
	if (!json_is_object(v)) {
		json_decref(v);
		model_stream_fail(
		    st, true, "a %.64s event that is not an object", name);
		return NULL;
	}
	return v;
}

/* wire_excerpt - up to 200 bytes of body as one printable line. */
void
wire_excerpt(const char *body, size_t len, struct buf *out)
{
	size_t k;

	for (k = 0; k < len && k < 200; k++) {
		unsigned char c = (unsigned char)body[k];

		buf_addc(out, c >= 0x20 && c < 0x7f ? (char)c : '.');
	}
	if (len > 200)
		buf_adds(out, "...");
}

/* wire_schema - tool t's schema as a JSON object. */
json_t *
wire_schema(const struct model_tool *t, char *why, size_t whylen)
{
	char err[160];
	json_t *v = mjson_parse(t->schema, strlen(t->schema), err, sizeof(err));

	if (v == NULL || !json_is_object(v)) {
		snprintf(why, whylen,
		    "tool %.64s: its schema is not a JSON "
		    "object%s%s",
		    t->name, v ? "" : ": ", v ? "" : err);
		json_decref(v);
		return NULL;
	}
	return v;
}

/* wire_input - a tool_use part's input as a JSON object. */
json_t *
wire_input(const struct model_part *p, char *why, size_t whylen)
{
	char err[160];
	json_t *v = mjson_parse(p->input, strlen(p->input), err, sizeof(err));

	if (v == NULL || !json_is_object(v)) {
		snprintf(why, whylen,
		    "tool_use %.64s: its input is not a "
		    "JSON object",
		    p->id);
		json_decref(v);
		return NULL;
	}
	return v;
}

/* wire_data_url - the data URL of an image part. */
void
wire_data_url(const struct model_part *p, struct buf *out)
{
	buf_reset(out);
	buf_printf(out, "data:%s;base64,", p->media);
	mjson_base64(p->data, p->data_len, out);
}

/* wire_finish_tool - a finished tool_use's input must be an object. */
int
wire_finish_tool(struct model_stream *st, const struct model_rpart *p)
{
	char why[160];
	json_t *v;
	bool ok;

	if (p->type != MODEL_P_TOOL_USE || p->input.len == 0)
		return 0;
	v = mjson_parse(p->input.data, p->input.len, why, sizeof(why));
	ok = json_is_object(v);
	json_decref(v);
	if (!ok)
		return model_stream_fail(st, true,
		    "tool call %.64s: its input is not a JSON object",
		    p->id.data ? p->id.data : "?");
	return 0;
}

/* wire_build_out - dump body into out unless bad; then free body. */
int
wire_build_out(json_t *body, int bad, struct buf *out, char *why, size_t whylen)
{
	int rc = -SHIRO_ERR_PROTO;

	buf_reset(out);
	if (bad != 0) {
		/* A part said why; else a string jansson refused. */
		if (why[0] == '\0')
			snprintf(why, whylen, "a text that is not UTF-8");
	} else if ((rc = mjson_dump(body, out)) < 0) {
		snprintf(why, whylen,
		    "the request could not be written as "
		    "JSON");
	}
	json_decref(body);
	return rc;
}

/* wire_openai_error - the message of an OpenAI-style error body. */
void
wire_openai_error(const char *body, size_t len, struct buf *out)
{
	char why[64];
	json_t *v = mjson_parse(body, len, why, sizeof(why));
	json_t *e = mjson_obj(v, "error");
	const char *type = mjson_str(e, "type", NULL);
	const char *code = mjson_str(e, "code", NULL);
	const char *text = mjson_str(e, "message", NULL);

	if (text == NULL && v != NULL)
		text = mjson_str(v, "error", NULL); /* {"error": "text"} */
	if (text != NULL)
		buf_printf(out, "%.64s: %.400s",
		    code       ? code
			: type ? type
			       : "error",
		    text);
	else
		wire_excerpt(body, len, out);
	json_decref(v);
}
