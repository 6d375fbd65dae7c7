/*
 * test_model - the model worker's three wire formats against the mock
 * provider, with the test playing shirod.
 *
 * For each wire: one call whose request holds every kind of part
 * (system blocks, tools, cache marks, an image, thinking of this wire and
 * of another, tool use and its result), answered by a streamed reply
 * with thinking, text, a tool call and usage.  What went on the wire is
 * checked from the mock's log (the path, the headers with the key only
 * in its auth header, the body's JSON), and what came back from the
 * CHUNKs and the RESULT.  Then the compaction's tries (D9) on each wire:
 * follow-ups in the same conversation, the shortest kept, a line not
 * shorter or an empty reply ending the tries, the cut at the limit on a
 * character boundary; and several jobs at once.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "proto/buf.h"
#include "proto/mono.h"
#include "proto/utf8.h"
#include "tests/harness.h"
#include "tests/model_util.h"

/* The request of the wire tests: one part of every kind. */
#define REQUEST \
	"{'model':'m-1','max_tokens':1000,'cache_key':'chat-42'," \
	"'cache_tools':true,'system':['You are shiro.','User rules.']," \
	"'tools':[{'name':'zoom','description':'Zoom into a node'," \
	"'schema':'{\\'type\\':\\'object\\',\\'properties\\':{\\'id\\':" \
	"{\\'type\\':\\'integer\\'}}}'}]," \
	"'messages':[{'role':'user','content':[" \
	"{'type':'text','text':'block one\\n'}," \
	"{'type':'text','text':'block two\\n','cache':true}," \
	"{'type':'image','media':'image/png','data':'PNGDATA'}," \
	"{'type':'text','text':'Turn: answer.','cache':true}]}," \
	"{'role':'assistant','content':[" \
	"{'type':'thinking','text':'I thought','signature':'sig-a'," \
	"'wire':'anthropic'}," \
	"{'type':'thinking','text':'','signature':'redacted-data'," \
	"'wire':'anthropic'}," \
	"{'type':'thinking','text':'oai','signature':'enc-r','id':'rs_1'," \
	"'wire':'openai-responses'}," \
	"{'type':'text','text':'Let me look.'}," \
	"{'type':'tool_use','id':'tu_1','name':'zoom','input':'{\\'id\\':0}'}" \
	"]},{'role':'user','content':[" \
	"{'type':'tool_result','id':'tu_1','text':'zoomed " \
	"text','error':true,'cache':true}," \
	"{'type':'text','text':'go on'}]}]}"

/* The reply of the wire tests. */
#define REPLY \
	"{'responses':[{'thinking':'Let me think','signature':'SIG-1'," \
	"'text':'H\xc3\xa9llo w\xc3\xb6rld, done.','chunk':5," \
	"'tools':[{'id':'tc_9','name':'zoom','input':{'id':4,'n':2}}]," \
	"'usage':{'input':100,'output':20,'cache_read':30," \
	"'cache_write':7},'request_id':'req_abc'}]}"

/* check_no_key - the key appears in no header but auth, nor the body. */
static void
check_no_key(const json_t *req, const char *auth)
{
	json_t *hs = json_object_get(req, "headers"), *h;
	size_t k;

	CHECK(strstr(mock_str(req, "body"), MW_KEY) == NULL);
	CHECK(strstr(mock_str(req, "path"), MW_KEY) == NULL);
	json_array_foreach(hs, k, h)
	{
		const char *name = json_string_value(json_array_get(h, 0));
		const char *v = json_string_value(json_array_get(h, 1));

		if (strcasecmp(name, auth) == 0)
			continue;
		CHECKF(
		    strstr(v, MW_KEY) == NULL, "the key is in header %s", name);
	}
}

/* check_reply - CHUNKs and RESULT of the wire tests' reply. */
static void
check_reply(struct mw *x, const char *wire, bool signature)
{
	struct mw_out out = {0};
	struct msg *m = mw_wait(x, 1, &out, 10000);
	const struct msg_val *data, *content, *usage, *p;
	int64_t v;

	CHECKF(msg_type(m) == MSG_RESULT, "%s: %s", wire, mw_text(m));
	CHECK_EQ_STR(mw_text(m), "H\xc3\xa9llo w\xc3\xb6rld, done.");
	CHECK_EQ_INT(out.starts, 1);
	CHECK_EQ_STR(out.text.data, "H\xc3\xa9llo w\xc3\xb6rld, done.");
	CHECK_EQ_STR(out.thinking.data, "Let me think");
	CHECK(msg_get_map(m, "usage", &usage) == 0);
	CHECK(msg_val_int(usage, "input", &v) == 0 && v == 100);
	CHECK(msg_val_int(usage, "output", &v) == 0 && v == 20);
	CHECK(msg_val_int(usage, "cache_read", &v) == 0 && v == 30);
	CHECK(msg_val_int(usage, "cache_write", &v) == 0);
	CHECK_EQ_INT(v, strcmp(wire, "anthropic") == 0 ? 7 : 0);
	CHECK(msg_get_map(m, "data", &data) == 0);
	CHECK_EQ_STR(msg_val_str(data, "stop"), "tool_use");
	CHECK_EQ_STR(msg_val_str(data, "request_id"), "req_abc");
	CHECK_EQ_STR(msg_val_str(data, "model"), "m-1");
	content = msg_val_get(data, "content");
	CHECK(content != NULL && content->type == MSG_V_ARR);
	CHECK_EQ_INT(content->u.a.n, 3);
	p = content->u.a.items[0];
	CHECK_EQ_STR(msg_val_str(p, "type"), "thinking");
	CHECK_EQ_STR(msg_val_str(p, "text"), "Let me think");
	CHECK_EQ_STR(msg_val_str(p, "wire"), wire);
	if (signature)
		CHECK_EQ_STR(msg_val_str(p, "signature"), "SIG-1");
	p = content->u.a.items[1];
	CHECK_EQ_STR(msg_val_str(p, "type"), "text");
	CHECK_EQ_STR(
	    msg_val_str(p, "text"), "H\xc3\xa9llo w\xc3\xb6rld, done.");
	p = content->u.a.items[2];
	CHECK_EQ_STR(msg_val_str(p, "type"), "tool_use");
	CHECK_EQ_STR(msg_val_str(p, "id"), "tc_9");
	CHECK_EQ_STR(msg_val_str(p, "name"), "zoom");
	CHECK_EQ_STR(msg_val_str(p, "input"), "{\"id\":4,\"n\":2}");
	msg_destroy(&m);
	mw_out_free(&out);
}

/*
 * call_on - run the wire tests' call on wire, check its reply, and
 * return its one request (*reqsp: the array holding it) and its body.
 */
static json_t *
call_on(struct mw *x, const char *wire, bool signature, json_t **reqsp,
    json_t **reqp)
{
	mw_start(x, wire, REPLY, MW_KEY, NULL);
	tw_send(&x->t, mw_call(1, REQUEST));
	check_reply(x, wire, signature);
	*reqsp = mock_requests(&x->mk, 1, 5000);
	CHECK_EQ_INT(json_array_size(*reqsp), 1);
	*reqp = json_array_get(*reqsp, 0);
	return mock_body(*reqp);
}

/* Anthropic Messages: the body, the marks, the headers, the reply. */
static void
anthropic_call_on_the_wire(void)
{
	struct mw x;
	json_t *reqs, *req, *b;

	b = call_on(&x, "anthropic", true, &reqs, &req);
	CHECK_EQ_STR(mock_str(req, "path"), "/v1/messages");
	CHECK_EQ_STR(mock_header(req, "x-api-key"), MW_KEY);
	CHECK_EQ_STR(mock_header(req, "anthropic-version"), "2023-06-01");
	CHECK_EQ_STR(mock_header(req, "content-type"), "application/json");
	CHECK(mock_header(req, "authorization") == NULL);
	check_no_key(req, "x-api-key");
	CHECK_EQ_STR(mock_str(b, "model"), "m-1");
	CHECK_EQ_INT(json_integer_value(mock_at(b, "max_tokens")), 1000);
	CHECK(json_is_true(mock_at(b, "stream")));
	/* System blocks in order; cache_tools marks the last one. */
	CHECK_EQ_STR(mock_str(b, "system.0.text"), "You are shiro.");
	CHECK(mock_at(b, "system.0.cache_control") == NULL);
	CHECK_EQ_STR(mock_str(b, "system.1.text"), "User rules.");
	CHECK_EQ_STR(mock_str(b, "system.1.cache_control.type"), "ephemeral");
	CHECK_EQ_STR(mock_str(b, "tools.0.name"), "zoom");
	CHECK_EQ_STR(mock_str(b, "tools.0.description"), "Zoom into a node");
	CHECK_EQ_STR(mock_str(b, "tools.0.input_schema.type"), "object");
	CHECK(mock_at(b, "tools.0.cache_control") == NULL);
	/* Cache marks on exactly the marked blocks. */
	CHECK_EQ_STR(mock_str(b, "messages.0.role"), "user");
	CHECK_EQ_STR(mock_str(b, "messages.0.content.0.text"), "block one\n");
	CHECK(mock_at(b, "messages.0.content.0.cache_control") == NULL);
	CHECK_EQ_STR(mock_str(b, "messages.0.content.1.cache_control.type"),
	    "ephemeral");
	CHECK_EQ_STR(mock_str(b, "messages.0.content.2.type"), "image");
	CHECK_EQ_STR(mock_str(b, "messages.0.content.2.source.type"), "base64");
	CHECK_EQ_STR(
	    mock_str(b, "messages.0.content.2.source.media_type"), "image/png");
	CHECK_EQ_STR(
	    mock_str(b, "messages.0.content.2.source.data"), "UE5HREFUQQ==");
	CHECK(mock_at(b, "messages.0.content.2.cache_control") == NULL);
	CHECK_EQ_STR(mock_str(b, "messages.0.content.3.cache_control.type"),
	    "ephemeral");
	/* Thinking of this wire goes back with its signature (or redacted);
	 * the other wire's is dropped. */
	CHECK_EQ_STR(mock_str(b, "messages.1.role"), "assistant");
	CHECK_EQ_STR(mock_str(b, "messages.1.content.0.type"), "thinking");
	CHECK_EQ_STR(mock_str(b, "messages.1.content.0.thinking"), "I thought");
	CHECK_EQ_STR(mock_str(b, "messages.1.content.0.signature"), "sig-a");
	CHECK_EQ_STR(
	    mock_str(b, "messages.1.content.1.type"), "redacted_thinking");
	CHECK_EQ_STR(mock_str(b, "messages.1.content.1.data"), "redacted-data");
	CHECK_EQ_STR(mock_str(b, "messages.1.content.2.text"), "Let me look.");
	CHECK_EQ_STR(mock_str(b, "messages.1.content.3.type"), "tool_use");
	CHECK_EQ_STR(mock_str(b, "messages.1.content.3.id"), "tu_1");
	CHECK_EQ_INT(
	    json_integer_value(mock_at(b, "messages.1.content.3.input.id")), 0);
	CHECK(mock_at(b, "messages.1.content.4") == NULL);
	CHECK_EQ_STR(mock_str(b, "messages.2.content.0.type"), "tool_result");
	CHECK_EQ_STR(mock_str(b, "messages.2.content.0.tool_use_id"), "tu_1");
	CHECK_EQ_STR(
	    mock_str(b, "messages.2.content.0.content"), "zoomed text");
	CHECK(json_is_true(mock_at(b, "messages.2.content.0.is_error")));
	/* A tool result marked for the cache carries the mark too. */
	CHECK_EQ_STR(mock_str(b, "messages.2.content.0.cache_control.type"),
	    "ephemeral");
	CHECK_EQ_STR(mock_str(b, "messages.2.content.1.text"), "go on");
	CHECK(mock_at(b, "messages.2.content.1.cache_control") == NULL);
	CHECK(strstr(mock_str(req, "body"), "prompt_cache_key") == NULL);
	CHECK(strstr(mock_str(req, "body"), "enc-r") == NULL);
	json_decref(b);
	json_decref(reqs);
	mw_stop(&x);
}

/* OpenAI Responses: items, reasoning inline, prompt_cache_key. */
static void
responses_call_on_the_wire(void)
{
	struct mw x;
	json_t *reqs, *req, *b;
	char auth[128];

	b = call_on(&x, "openai-responses", true, &reqs, &req);
	CHECK_EQ_STR(mock_str(req, "path"), "/v1/responses");
	snprintf(auth, sizeof(auth), "Bearer %s", MW_KEY);
	CHECK_EQ_STR(mock_header(req, "authorization"), auth);
	CHECK(mock_header(req, "x-api-key") == NULL);
	check_no_key(req, "authorization");
	CHECK_EQ_STR(mock_str(b, "input.0.role"), "system");
	CHECK_EQ_STR(mock_str(b, "input.0.content.0.text"),
	    "You are shiro.\n\nUser rules.");
	CHECK_EQ_STR(mock_str(b, "input.1.role"), "user");
	CHECK_EQ_STR(mock_str(b, "input.1.content.0.type"), "input_text");
	CHECK_EQ_STR(mock_str(b, "input.1.content.1.text"), "block two\n");
	CHECK_EQ_STR(mock_str(b, "input.1.content.2.type"), "input_image");
	CHECK_EQ_STR(mock_str(b, "input.1.content.2.image_url"),
	    "data:image/png;base64,UE5HREFUQQ==");
	CHECK_EQ_STR(mock_str(b, "input.1.content.3.text"), "Turn: answer.");
	CHECK_EQ_STR(mock_str(b, "input.2.type"), "reasoning");
	CHECK_EQ_STR(mock_str(b, "input.2.id"), "rs_1");
	CHECK_EQ_STR(mock_str(b, "input.2.encrypted_content"), "enc-r");
	CHECK_EQ_STR(mock_str(b, "input.2.summary.0.text"), "oai");
	CHECK_EQ_STR(mock_str(b, "input.3.role"), "assistant");
	CHECK_EQ_STR(mock_str(b, "input.3.content.0.type"), "output_text");
	CHECK_EQ_STR(mock_str(b, "input.3.content.0.text"), "Let me look.");
	CHECK_EQ_STR(mock_str(b, "input.4.type"), "function_call");
	CHECK_EQ_STR(mock_str(b, "input.4.call_id"), "tu_1");
	CHECK_EQ_STR(mock_str(b, "input.4.arguments"), "{\"id\":0}");
	CHECK_EQ_STR(mock_str(b, "input.5.type"), "function_call_output");
	CHECK_EQ_STR(mock_str(b, "input.5.output"), "zoomed text");
	CHECK_EQ_STR(mock_str(b, "input.6.content.0.text"), "go on");
	CHECK(mock_at(b, "input.7") == NULL);
	CHECK_EQ_STR(mock_str(b, "tools.0.type"), "function");
	CHECK_EQ_STR(mock_str(b, "tools.0.parameters.type"), "object");
	CHECK(json_is_false(mock_at(b, "tools.0.strict")));
	CHECK_EQ_STR(mock_str(b, "prompt_cache_key"), "chat-42");
	CHECK(json_is_false(mock_at(b, "store")));
	CHECK_EQ_STR(mock_str(b, "include.0"), "reasoning.encrypted_content");
	CHECK_EQ_INT(json_integer_value(mock_at(b, "max_output_tokens")), 1000);
	/* No Anthropic marks, no Anthropic thinking. */
	CHECK(strstr(mock_str(req, "body"), "cache_control") == NULL);
	CHECK(strstr(mock_str(req, "body"), "sig-a") == NULL);
	json_decref(b);
	json_decref(reqs);
	mw_stop(&x);
}

/* Chat Completions: messages, tool messages, no thinking sent back. */
static void
chat_call_on_the_wire(void)
{
	struct mw x;
	json_t *reqs, *req, *b;
	char auth[128];

	b = call_on(&x, "openai-chat", false, &reqs, &req);
	CHECK_EQ_STR(mock_str(req, "path"), "/v1/chat/completions");
	snprintf(auth, sizeof(auth), "Bearer %s", MW_KEY);
	CHECK_EQ_STR(mock_header(req, "authorization"), auth);
	check_no_key(req, "authorization");
	CHECK_EQ_STR(mock_str(b, "messages.0.role"), "system");
	CHECK_EQ_STR(
	    mock_str(b, "messages.0.content"), "You are shiro.\n\nUser rules.");
	CHECK_EQ_STR(mock_str(b, "messages.1.role"), "user");
	CHECK_EQ_STR(mock_str(b, "messages.1.content.2.type"), "image_url");
	CHECK_EQ_STR(mock_str(b, "messages.1.content.2.image_url.url"),
	    "data:image/png;base64,UE5HREFUQQ==");
	CHECK_EQ_STR(mock_str(b, "messages.2.role"), "assistant");
	CHECK_EQ_STR(mock_str(b, "messages.2.content"), "Let me look.");
	CHECK_EQ_STR(mock_str(b, "messages.2.tool_calls.0.id"), "tu_1");
	CHECK_EQ_STR(
	    mock_str(b, "messages.2.tool_calls.0.function.name"), "zoom");
	CHECK_EQ_STR(mock_str(b, "messages.2.tool_calls.0.function.arguments"),
	    "{\"id\":0}");
	CHECK_EQ_STR(mock_str(b, "messages.3.role"), "tool");
	CHECK_EQ_STR(mock_str(b, "messages.3.tool_call_id"), "tu_1");
	CHECK_EQ_STR(mock_str(b, "messages.3.content"), "zoomed text");
	CHECK_EQ_STR(mock_str(b, "messages.4.role"), "user");
	CHECK_EQ_STR(mock_str(b, "messages.4.content"), "go on");
	CHECK(mock_at(b, "messages.5") == NULL);
	CHECK_EQ_STR(mock_str(b, "tools.0.function.name"), "zoom");
	CHECK_EQ_STR(mock_str(b, "tools.0.function.parameters.type"), "object");
	CHECK(json_is_true(mock_at(b, "stream_options.include_usage")));
	CHECK_EQ_STR(mock_str(b, "prompt_cache_key"), "chat-42");
	CHECK_EQ_INT(json_integer_value(mock_at(b, "max_tokens")), 1000);
	CHECK(strstr(mock_str(req, "body"), "I thought") == NULL);
	CHECK(strstr(mock_str(req, "body"), "cache_control") == NULL);
	json_decref(b);
	json_decref(reqs);
	mw_stop(&x);
}

/* The same request gives the same body, byte for byte (the cache). */
static void
bodies_are_stable(void)
{
	static const char *const wires[] = {
	    "anthropic", "openai-responses", "openai-chat"};
	size_t w;

	for (w = 0; w < 3; w++) {
		struct mw x;
		json_t *reqs;
		struct msg *m;

		mw_start(&x, wires[w], "{'responses':[{'text':'a','times':2}]}",
		    MW_KEY, NULL);
		tw_send(&x.t, mw_call(1, REQUEST));
		tw_send(&x.t, mw_call(2, REQUEST));
		m = mw_wait(&x, 1, NULL, 10000);
		msg_destroy(&m);
		m = mw_wait(&x, 2, NULL, 10000);
		msg_destroy(&m);
		reqs = mock_requests(&x.mk, 2, 5000);
		CHECK_EQ_STR(mock_str(json_array_get(reqs, 0), "body"),
		    mock_str(json_array_get(reqs, 1), "body"));
		json_decref(reqs);
		mw_stop(&x);
	}
}

/* The compaction request: a context block, then the task. */
#define CREQ \
	"{'model':'m-small','max_tokens':600,'system':['You are shiro.']," \
	"'messages':[{'role':'user','content':[" \
	"{'type':'text','text':'<chat>\\n0+1|user: hi\\n','cache':true}," \
	"{'type':'text','text':'Compress message 1 into one line.'," \
	"'cache':true}]}]}"

/* long_line - a line of n bytes: "x" words and a two-byte character at
 * byte 511, so a cut at 512 must fall before it. */
static char *
long_line(size_t n, char fill)
{
	char *s = malloc(n + 1);
	size_t k;

	for (k = 0; k < n; k++)
		s[k] = k % 7 == 6 ? ' ' : fill;
	s[0] = 'L';
	s[n - 1] = 'Z'; /* a line never ends in a space */
	if (n > 512) {
		s[511] = '\xc3';
		s[512] = '\xa9';
	}
	s[n] = '\0';
	return s;
}

/* compaction_script - replies of the given texts, in order. */
static char *
compaction_script(const char *const *texts, size_t n)
{
	struct buf b = BUF_INIT;
	size_t k;

	buf_adds(&b, "{'responses':[");
	for (k = 0; k < n; k++)
		buf_printf(&b,
		    "%s{'text':'%s','usage':{'input':%zu,'output':"
		    "10,'cache_read':5,'cache_write':1}}",
		    k ? "," : "", texts[k], 100 + k);
	buf_adds(&b, "]}");
	return buf_steal(&b, NULL);
}

/* run_compaction - one compaction on wire with replies texts. */
static struct msg *
run_compaction(struct mw *x, const char *wire, const char *const *texts,
    size_t n, unsigned tries, struct mw_out *out)
{
	char *script = compaction_script(texts, n);

	mw_start(x, wire, script, MW_KEY, NULL);
	free(script);
	tw_send(&x->t, mw_compact(7, CREQ, tries, 512));
	return mw_wait(x, 7, out, 20000);
}

/* request_text - the whole body text of request k. */
static const char *
request_text(const json_t *reqs, size_t k)
{
	return mock_str(json_array_get(reqs, k), "body");
}

/*
 * Over-long lines get a follow-up in the same conversation; the tries go
 * on while each line is shorter, and the first line within the limit is
 * the result, with usage summed and a "start" per try.
 */
static void
compaction_tries_shrink(void)
{
	static const char *const wires[] = {
	    "anthropic", "openai-responses", "openai-chat"};
	size_t w;

	for (w = 0; w < 3; w++) {
		struct mw x;
		struct mw_out out = {0};
		char *a = long_line(700, 'a'), *b = long_line(600, 'b');
		const char *texts[] = {a, b, "the short line"};
		const struct msg_val *usage;
		struct msg *m;
		json_t *reqs;
		uint64_t tries;
		int64_t v;
		char cut[700];

		m = run_compaction(&x, wires[w], texts, 3, 5, &out);
		CHECKF(
		    msg_type(m) == MSG_RESULT, "%s: %s", wires[w], mw_text(m));
		CHECK_EQ_STR(mw_text(m), "the short line");
		CHECK(msg_get_uint(m, "tries", &tries) == 0 && tries == 3);
		CHECK(msg_get_map(m, "usage", &usage) == 0);
		CHECK(msg_val_int(usage, "input", &v) == 0 && v == 303);
		CHECK(msg_val_int(usage, "output", &v) == 0 && v == 30);
		CHECK(msg_val_int(usage, "cache_read", &v) == 0 && v == 15);
		CHECK_EQ_INT(out.starts, 3);
		CHECK_EQ_INT(out.text.len, 0); /* no text CHUNKs */
		msg_destroy(&m);
		reqs = mock_requests(&x.mk, 3, 5000);
		CHECK_EQ_INT(json_array_size(reqs), 3);
		/* The second request: the first one's prefix, then the line
		 * as the model's, then the follow-up with the cut. */
		CHECK(strstr(request_text(reqs, 1), "Compress message 1") !=
		    NULL);
		CHECK(strstr(request_text(reqs, 1), a) != NULL);
		CHECK(strstr(request_text(reqs, 1), "that line is 700 bytes") !=
		    NULL);
		/* Cut at 512: the 2-byte character at 511 does not fit, and
		 * the space at 510 goes; then the follow-up goes on. */
		snprintf(cut, sizeof(cut), "%.510s\\n\\nWrite the line", a);
		CHECK(strstr(request_text(reqs, 1), cut) != NULL);
		CHECK(strstr(request_text(reqs, 2), "that line is 700 bytes") !=
		    NULL);
		CHECK(strstr(request_text(reqs, 2), "that line is 600 bytes") !=
		    NULL);
		json_decref(reqs);
		free(a);
		free(b);
		mw_out_free(&out);
		mw_stop(&x);
	}
}

/*
 * A line not shorter than the best ends the tries; the best is cut at
 * the limit on a character boundary.
 */
static void
compaction_stops_when_not_shorter(void)
{
	struct mw x;
	struct mw_out out = {0};
	char *a = long_line(700, 'a'), *b = long_line(800, 'b');
	const char *texts[] = {a, b, "never asked"};
	struct msg *m;
	uint64_t tries;

	m = run_compaction(&x, "anthropic", texts, 3, 5, &out);
	CHECK(msg_type(m) == MSG_RESULT);
	CHECK(msg_get_uint(m, "tries", &tries) == 0 && tries == 2);
	/* 511 bytes: the character at 511..512 would pass 512. */
	CHECK_EQ_INT(strlen(mw_text(m)), 510); /* and the space before */
	CHECK(strncmp(mw_text(m), a, 510) == 0);
	CHECK(utf8_valid(mw_text(m), strlen(mw_text(m))));
	msg_destroy(&m);
	mock_expect(&x.mk, 2);
	free(a);
	free(b);
	mw_out_free(&out);
	mw_stop(&x);
}

/*
 * An empty or thinking-only reply counts as a try and ends the tries;
 * with no line from any try the job fails, never returns empty.
 */
static void
compaction_empty_is_the_last_try(void)
{
	struct mw x;
	struct msg *m;
	char *a = long_line(700, 'a'), script[2048];
	uint64_t tries;

	snprintf(script, sizeof(script),
	    "{'responses':[{'text':'%s'},{'thinking':'only thoughts',"
	    "'text':''},{'text':'never asked'}]}",
	    a);
	mw_start(&x, "anthropic", script, MW_KEY, NULL);
	tw_send(&x.t, mw_compact(7, CREQ, 5, 512));
	m = mw_wait(&x, 7, NULL, 20000);
	CHECK(msg_type(m) == MSG_RESULT);
	CHECK(msg_get_uint(m, "tries", &tries) == 0 && tries == 2);
	CHECK(strlen(mw_text(m)) <= 512 && strncmp(mw_text(m), a, 500) == 0);
	msg_destroy(&m);
	mock_expect(&x.mk, 2);
	mw_stop(&x);

	mw_start(
	    &x, "openai-chat", "{'responses':[{'text':''}]}", MW_KEY, NULL);
	tw_send(&x.t, mw_compact(8, CREQ, 5, 512));
	m = mw_wait(&x, 8, NULL, 20000);
	CHECK_EQ_STR(mw_fail_code(m), "protocol");
	CHECK(strstr(mw_text(m), "no line") != NULL);
	msg_destroy(&m);
	mw_stop(&x);
	free(a);
}

/* The tries stop at data.tries even while lines still shrink. */
static void
compaction_tries_are_bounded(void)
{
	struct mw x;
	char *l[5];
	const char *texts[5];
	struct msg *m;
	uint64_t tries;
	size_t k;

	for (k = 0; k < 5; k++) {
		l[k] = long_line(900 - 50 * k, (char)('a' + k));
		texts[k] = l[k];
	}
	m = run_compaction(&x, "openai-responses", texts, 5, 3, NULL);
	CHECK(msg_type(m) == MSG_RESULT);
	CHECK(msg_get_uint(m, "tries", &tries) == 0 && tries == 3);
	CHECK(strncmp(mw_text(m), l[2], 500) == 0); /* the shortest: 800 */
	msg_destroy(&m);
	for (k = 0; k < 5; k++)
		free(l[k]);
	mw_stop(&x);
}

/*
 * Several calls run at once in one worker: four calls the mock holds
 * without answering all reach it; canceled, each ends (and its
 * connection closes); the worker then serves the next one.
 */
static void
calls_run_at_once(void)
{
	struct mw x;
	struct msg *m;
	json_t *reqs;
	uint64_t k;
	const char *extra[] = {"--jobs", "4", NULL};

	mw_start(&x, "anthropic",
	    "{'responses':[{'stall_after':0,'times':4},{'text':'after'}]}",
	    MW_KEY, extra);
	for (k = 1; k <= 4; k++)
		tw_send(&x.t, mw_call(k, REQUEST));
	reqs = mock_requests(&x.mk, 4, 10000);
	json_decref(reqs);
	for (k = 1; k <= 4; k++) {
		m = msg_new(MSG_CANCEL);
		msg_set_int(m, "job", (int64_t)k);
		tw_send(&x.t, m);
	}
	for (k = 1; k <= 4; k++) {
		m = mw_wait(&x, k, NULL, 5000);
		CHECK_EQ_STR(mw_fail_code(m), "canceled");
		msg_destroy(&m);
	}
	tw_send(&x.t, mw_call(5, REQUEST));
	m = mw_wait(&x, 5, NULL, 10000);
	CHECK_EQ_STR(mw_text(m), "after");
	msg_destroy(&m);
	mw_stop(&x);
}

/* A JOB beyond --jobs is refused busy; the others are not disturbed. */
static void
jobs_beyond_the_limit_are_busy(void)
{
	struct mw x;
	struct msg *m;
	const char *extra[] = {"--jobs", "2", NULL};
	const char *s;
	uint64_t k;

	mw_start(&x, "anthropic",
	    "{'responses':[{'text':'ok','delay_ms':300,'times':3}]}", MW_KEY,
	    extra);
	for (k = 1; k <= 3; k++)
		tw_send(&x.t, mw_call(k, REQUEST));
	m = mw_wait(&x, 3, NULL, 5000);
	CHECK_EQ_STR(mw_fail_code(m), "busy");
	CHECK(msg_get_str(m, "code", &s, NULL) == 0);
	msg_destroy(&m);
	for (k = 1; k <= 2; k++) {
		m = mw_wait(&x, k, NULL, 5000);
		CHECK_EQ_STR(mw_text(m), "ok");
		msg_destroy(&m);
	}
	mw_stop(&x);
}

/* Heartbeats naming the job keep flowing during a long call. */
static void
heartbeats_during_a_long_call(void)
{
	struct mw x;
	struct mw_out out = {0};
	struct msg *m;

	mw_start(&x, "openai-chat",
	    "{'responses':[{'text':'late','delay_ms':1200}]}", MW_KEY, NULL);
	tw_send(&x.t, mw_call(1, REQUEST));
	m = mw_wait(&x, 1, &out, 10000);
	CHECK_EQ_STR(mw_text(m), "late");
	/* 200 ms heartbeats over 1.2 s of waiting. */
	CHECKF(out.beats >= 3, "%u heartbeats", out.beats);
	msg_destroy(&m);
	mw_out_free(&out);
	mw_stop(&x);
}

/* The offline wire still compacts without data, and answers no call. */
static void
offline_still_compacts(void)
{
	struct tw t = {0};
	struct msg *m, *job;
	struct msg_val *in;

	tw_start(&t, "../shiro-model-worker", 200, 5000, NULL, NULL);
	tw_drop(tw_recv(&t, MSG_READY, 5000));
	job = msg_new(MSG_JOB);
	msg_set_int(job, "job", 3);
	msg_set_str(job, "kind", "compact");
	msg_set_int(job, "l", 0);
	msg_set_int(job, "i", 0);
	in = msg_val_add_map(msg_set_arr(job, "inputs"));
	msg_val_set_int(in, "id", 0);
	msg_val_set_int(in, "n", 1);
	msg_val_set_str(in, "kind", "user");
	msg_val_set_str(in, "text", "fix the build");
	tw_send(&t, job);
	m = tw_recv(&t, MSG_RESULT, 5000);
	CHECK_EQ_STR(mw_text(m), "user: fix the build");
	msg_destroy(&m);
	tw_send(&t, mw_call(4, REQUEST));
	m = tw_recv(&t, MSG_FAIL, 5000);
	CHECK_EQ_STR(mw_fail_code(m), "badjob");
	msg_destroy(&m);
	tw_stop(&t);
}

/* gone - whether process pid has ended (gone, or a zombie) within ms. */
static bool
gone(pid_t pid, long ms)
{
	uint64_t end = mono_ms() + (uint64_t)ms;
	struct timespec tick = {0, 10 * 1000 * 1000};
	char path[64], stat[256];

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	for (;;) {
		FILE *fp = fopen(path, "r");
		const char *paren;
		bool dead = true;

		if (fp != NULL) {
			if (fgets(stat, sizeof(stat), fp) != NULL &&
			    (paren = strrchr(stat, ')')) != NULL)
				dead = paren[1] == ' ' && paren[2] == 'Z';
			fclose(fp);
		}
		if (dead)
			return true;
		if (mono_ms() >= end)
			return false;
		nanosleep(&tick, NULL);
	}
}

/*
 * The mock exits on SIGTERM, and when its parent dies (a test that
 * crashes leaves no server behind).
 */
static void
mock_ends_with_its_parent(void)
{
	struct mock mk;
	int fds[2], status;
	pid_t child, grandchild = -1;

	mock_start(&mk, NULL);
	CHECK(kill(mk.pid, SIGTERM) == 0);
	CHECK(waitpid(mk.pid, &status, 0) == mk.pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);

	/* A child starts a mock, says its pid, and is killed. */
	CHECK(pipe(fds) == 0);
	child = fork();
	CHECK(child >= 0);
	if (child == 0) {
		close(fds[0]);
		mock_start(&mk, NULL);
		if (write(fds[1], &mk.pid, sizeof(mk.pid)) < 0)
			_exit(1);
		for (;;)
			pause();
	}
	close(fds[1]);
	CHECK(read(fds[0], &grandchild, sizeof(grandchild)) ==
	    (ssize_t)sizeof(grandchild));
	close(fds[0]);
	CHECK(!gone(grandchild, 0));
	kill(child, SIGKILL);
	CHECK(waitpid(child, NULL, 0) == child);
	CHECKF(gone(grandchild, 5000), "the mock outlived its parent");
}

static const struct harness_test tests[] = {
    HT(anthropic_call_on_the_wire),
    HT(responses_call_on_the_wire),
    HT(chat_call_on_the_wire),
    HT(bodies_are_stable),
    HT(compaction_tries_shrink),
    HT(compaction_stops_when_not_shorter),
    HT(compaction_empty_is_the_last_try),
    HT(compaction_tries_are_bounded),
    HT(calls_run_at_once),
    HT(jobs_beyond_the_limit_are_busy),
    HT(heartbeats_during_a_long_call),
    HT(offline_still_compacts),
    HT(mock_ends_with_its_parent),
};

HARNESS_MAIN(tests)
