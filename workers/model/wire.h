/*
 * wire.h - what the three wire formats share: reading an event's JSON,
 * a body's excerpt for an error message, the tool schemas.
 */
#ifndef SHIRO_WIRE_H
#define SHIRO_WIRE_H

#include <stddef.h>

#include "proto/buf.h"
#include "workers/model/mjson.h"
#include "workers/model/model.h"

/*
 * wire_event_json - the event's data as a JSON object, or NULL after
 * model_stream_fail() said why (naming the event).
 */
json_t *wire_event_json(
    struct model_stream *st, const char *name, const char *data, size_t len);

/*
 * wire_excerpt - up to 200 bytes of body as printable one-line text,
 * appended to out (for a body that is not the error JSON expected).
 */
void wire_excerpt(const char *body, size_t len, struct buf *out);

/*
 * wire_schema - tool t's schema parsed (a JSON object), or NULL with
 * why filled.
 */
json_t *wire_schema(const struct model_tool *t, char *why, size_t whylen);

/*
 * wire_input - a tool_use part's input parsed (a JSON object), or NULL
 * with why filled.
 */
json_t *wire_input(const struct model_part *p, char *why, size_t whylen);

/*
 * wire_data_url - "data:MEDIA;base64,..." of an image part onto out
 * (reset first).
 */
void wire_data_url(const struct model_part *p, struct buf *out);

/*
 * wire_finish_tool - check a finished tool_use part: its input, if any,
 * must be a JSON object.  0, or model_stream_fail()'s error.
 */
int wire_finish_tool(struct model_stream *st, const struct model_rpart *p);

/*
 * wire_build_out - the end of a wire's build: unless bad (a part failed
 * and said why in why), body as JSON into out (reset first); body is
 * freed either way.  0 or -SHIRO_ERR_PROTO with why filled.
 */
int wire_build_out(
    json_t *body, int bad, struct buf *out, char *why, size_t whylen);

/*
 * wire_openai_error - the message of an OpenAI-style error body
 * ({"error": {"message", "type", "code"}}) onto out: the error_text of
 * both OpenAI wires.
 */
void wire_openai_error(const char *body, size_t len, struct buf *out);

#endif
