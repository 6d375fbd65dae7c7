/*
 * fuzz_wire - libFuzzer target for a wire's event decoder, built once
 * per wire (FUZZ_WIRE names it: model_wire_anthropic, ...).
 *
 * An input is a response body: it goes through the SSE parser into the
 * wire's decoder, then the stream's end.  Whatever the bytes, decoding
 * must return without a crash, a leak or an overread; a failure must say
 * why; a reply the decoder accepts must stay within the reply's caps and
 * make a RESULT that passes msg_check() (so the broker gets a valid
 * message, whatever the provider sent).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto/buf.h"
#include "proto/err.h"
#include "proto/log.h"
#include "proto/msg.h"
#include "workers/model/model.h"
#include "workers/model/sse.h"

#ifndef FUZZ_WIRE /* the Makefile names it; anthropic for a plain build */
#define FUZZ_WIRE model_wire_anthropic
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* fuzz_event - an event to the wire's decoder. */
static int
fuzz_event(void *arg, const char *name, const char *d, size_t len)
{
	struct model_stream *st = arg;

	return FUZZ_WIRE.event(st, name, d, len);
}

/* fuzz_delta - the deltas the decoder streams (counted, not kept). */
static void
fuzz_delta(void *arg, bool thinking, const char *s, size_t n)
{
	size_t *total = arg;

	(void)thinking;
	if (n > 0 && s == NULL)
		panic("a delta without bytes");
	*total += n;
}

/* LLVMFuzzerTestOneInput - decode one response body. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct model_stream st;
	struct sse sse;
	struct msg *r;
	struct buf text = BUF_INIT;
	size_t deltas = 0;
	int rc;

	model_stream_init(&st, FUZZ_WIRE.name, fuzz_delta, &deltas);
	sse_init(&sse, 1u << 20, fuzz_event, &st);
	rc = sse_feed(&sse, (const char *)data, size);
	if (rc == 0)
		rc = FUZZ_WIRE.finish(&st);
	if (rc == -SHIRO_ERR_PROTO && st.why[0] == '\0')
		panic("a failure that does not say why");
	if (rc == 0) {
		size_t k, streamed = 0;

		if (st.reply.bytes > MODEL_REPLY_MAX ||
		    st.reply.text_bytes > MODEL_REPLY_TEXT_MAX ||
		    st.reply.nparts > MODEL_REPLY_PARTS)
			panic("a reply past its caps");
		/* What was streamed is what the RESULT holds. */
		for (k = 0; k < st.reply.nparts; k++)
			if (st.reply.parts[k].type != MODEL_P_TOOL_USE)
				streamed += st.reply.parts[k].text.len;
		if (streamed != deltas)
			panic("%zu bytes streamed, %zu in the reply", deltas,
			    streamed);
		r = msg_new(MSG_RESULT);
		msg_set_int(r, "job", 1);
		model_reply_text(&st.reply, &text);
		msg_set_strn(r, "text", text.data, text.len);
		model_reply_usage(&st.reply.usage, r);
		model_reply_content(&st.reply, msg_set_map(r, "data"));
		if (msg_check(r) != 0)
			panic("an accepted reply makes a bad RESULT: %s",
			    msg_strerror());
		msg_destroy(&r);
	}
	buf_free(&text);
	sse_free(&sse);
	model_reply_free(&st.reply);
	return 0;
}
