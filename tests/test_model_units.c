/*
 * test_model_units - the model worker's pure parts alone: the server-sent
 * events parser (line ends, pieces of any size, the byte order mark,
 * comments, the cap), the retry policy (statuses, headers, dates, the
 * backoff and its jitter), a compaction's tries (D9), the bodies'
 * JSON writer (byte for byte jansson's compact form) and the Responses
 * wire's bound on output_index.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "proto/buf.h"
#include "proto/err.h"
#include "proto/utf8.h"
#include "tests/harness.h"
#include "workers/model/mjson.h"
#include "workers/model/model.h"
#include "workers/model/retry.h"
#include "workers/model/sse.h"
#include "workers/model/tries.h"

/* The events a parser dispatched, as "name=data;" pieces. */
static int
collect(void *arg, const char *name, const char *data, size_t len)
{
	struct buf *b = arg;

	buf_printf(b, "%s=", name);
	buf_add(b, data, len);
	buf_addc(b, ';');
	return 0;
}

/* parse - feed s in pieces of step bytes (0: all at once). */
static void
parse(const char *s, size_t step, struct buf *out, int *rcp)
{
	struct sse p;
	size_t len = strlen(s), k, n;
	int rc = 0;

	buf_reset(out);
	buf_adds(out, "");
	sse_init(&p, 64, collect, out);
	for (k = 0; k < len && rc == 0; k += n) {
		n = step == 0 || step > len - k ? len - k : step;
		rc = sse_feed(&p, s + k, n);
	}
	if (rcp != NULL)
		*rcp = rc;
	sse_free(&p);
}

/* Events, data lines, comments and line ends, in pieces of any size. */
static void
sse_frames_events(void)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
	    {"event: a\ndata: 1\n\n", "a=1;"},
	    {"data: x\n\n", "message=x;"},
	    {"data:x\ndata: y\n\n", "message=x\ny;"},
	    {": comment\nevent: e\r\ndata: 1\r\n\r\n", "e=1;"},
	    {"event: e\rdata: 2\r\r", "e=2;"},
	    {"data: a\n\ndata: b\n\n", "message=a;message=b;"},
	    {"event: lonely\n\n", ""},
	    {"event: x\n\ndata: y\n\n", "message=y;"},
	    {"id: 7\nretry: 10\ndata\nfoo: bar\n\n", "message=;"},
	    {"\xef\xbb\xbf"
	     "data: bom\n\n",
		"message=bom;"},
	    {"data:  two spaces\n\n", "message= two spaces;"},
	    {"data: no end", ""},
	};
	struct buf out = BUF_INIT, one = BUF_INIT;
	size_t k, step;

	for (k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		parse(cases[k].in, 0, &one, NULL);
		CHECKF(strcmp(one.data, cases[k].out) == 0, "case %zu: %s", k,
		    one.data);
		for (step = 1; step < 8; step++) {
			parse(cases[k].in, step, &out, NULL);
			CHECKF(strcmp(out.data, one.data) == 0,
			    "case %zu in pieces of %zu: %s", k, step, out.data);
		}
	}
	buf_free(&out);
	buf_free(&one);
}

/* A line or an event past the cap is an error, and stays one. */
static void
sse_caps_lines_and_events(void)
{
	struct buf out = BUF_INIT, big = BUF_INIT;
	struct sse p;
	int rc, k;

	for (k = 0; k < 70; k++)
		buf_addc(&big, 'x');
	parse(big.data, 7, &out, &rc);
	CHECK_EQ_INT(rc, -SHIRO_ERR_TOOBIG);
	buf_reset(&big);
	for (k = 0; k < 5; k++)
		buf_adds(&big, "data: 0123456789abc\n");
	parse(big.data, 0, &out, &rc);
	CHECK_EQ_INT(rc, -SHIRO_ERR_TOOBIG);
	sse_init(&p, 64, collect, &out);
	CHECK_EQ_INT(sse_feed(&p, big.data, big.len), -SHIRO_ERR_TOOBIG);
	CHECK_EQ_INT(sse_feed(&p, "\n\n", 2), -SHIRO_ERR_TOOBIG);
	sse_free(&p);
	/* Pending: a cut in the middle of an event. */
	sse_init(&p, 64, collect, &out);
	CHECK(!sse_pending(&p));
	CHECK_EQ_INT(sse_feed(&p, "data: a\n", 8), 0);
	CHECK(sse_pending(&p));
	CHECK_EQ_INT(sse_feed(&p, "\n", 1), 0);
	CHECK(!sse_pending(&p));
	sse_free(&p);
	buf_free(&out);
	buf_free(&big);
}

/* stop_at_second - a callback that stops the parser at its 2nd event. */
static int
stop_at_second(void *arg, const char *name, const char *data, size_t len)
{
	int *n = arg;

	(void)name;
	(void)data;
	(void)len;
	return ++*n == 2 ? -SHIRO_ERR_PROTO : 0;
}

/* The callback's error stops the parser and is returned. */
static void
sse_callback_stops_it(void)
{
	struct sse p;
	int n = 0;

	sse_init(&p, 64, stop_at_second, &n);
	CHECK_EQ_INT(sse_feed(&p, "data: 1\n\ndata: 2\n\ndata: 3\n\n", 27),
	    -SHIRO_ERR_PROTO);
	CHECK_EQ_INT(n, 2);
	sse_free(&p);
}

/* A NUL byte in an event's name cannot cut it short (a fuzz find). */
static void
sse_names_are_c_strings(void)
{
	static const char in[] = "event: a\0b\ndata: 1\n\n";
	struct buf out = BUF_INIT;
	struct sse p;

	sse_init(&p, 64, collect, &out);
	CHECK_EQ_INT(sse_feed(&p, in, sizeof(in) - 1), 0);
	CHECK_EQ_STR(out.data, "a?b=1;");
	sse_free(&p);
	buf_free(&out);
}

/* Which statuses are retried, and what x-should-retry does. */
static void
retry_statuses_and_header(void)
{
	static const long yes[] = {408, 409, 429, 500, 502, 503, 504, 529};
	static const long no[] = {200, 400, 401, 403, 404, 413, 422};
	size_t k;

	for (k = 0; k < sizeof(yes) / sizeof(yes[0]); k++) {
		CHECK(retry_status(yes[k], -1));
		CHECK(!retry_status(yes[k], 0));
	}
	for (k = 0; k < sizeof(no) / sizeof(no[0]); k++) {
		CHECK(!retry_status(no[k], -1));
		CHECK(retry_status(no[k], 1));
	}
	CHECK_EQ_INT(retry_should("true"), 1);
	CHECK_EQ_INT(retry_should("FALSE"), 0);
	CHECK_EQ_INT(retry_should("maybe"), -1);
	CHECK_EQ_INT(retry_should(NULL), -1);
}

/* retry-after-ms, then retry-after (seconds or a date), within 60 s. */
static void
retry_after_values(void)
{
	time_t now = 1700000000; /* Tue, 14 Nov 2023 22:13:20 GMT */

	CHECK_EQ_INT(retry_after_ms("1500", NULL, now), 1500);
	CHECK_EQ_INT(retry_after_ms("1500", "9", now), 1500);
	CHECK_EQ_INT(retry_after_ms(NULL, "2", now), 2000);
	CHECK_EQ_INT(retry_after_ms(NULL, "0.25", now), 250);
	CHECK_EQ_INT(retry_after_ms("bad", "3", now), 3000);
	CHECK_EQ_INT(retry_after_ms(NULL, "60", now), 60000);
	CHECK_EQ_INT(retry_after_ms(NULL, "61", now), -1);
	CHECK_EQ_INT(retry_after_ms("60001", NULL, now), -1);
	CHECK_EQ_INT(retry_after_ms("0", NULL, now), -1);
	CHECK_EQ_INT(retry_after_ms(NULL, "-3", now), -1);
	CHECK_EQ_INT(retry_after_ms(NULL, "soon", now), -1);
	CHECK_EQ_INT(retry_after_ms(NULL, NULL, now), -1);
	CHECK_EQ_INT(
	    retry_after_ms(NULL, "Tue, 14 Nov 2023 22:13:30 GMT", now), 10000);
	CHECK_EQ_INT(
	    retry_after_ms(NULL, "Tue, 14 Nov 2023 22:13:10 GMT", now), -1);
	CHECK_EQ_INT(
	    retry_after_ms(NULL, "Tue, 14 Nov 2023 22:15:00 GMT", now), -1);
}

/* min(0.5 s * 2^n, 8 s), times 1 - 0.25 r. */
static void
retry_backoff_values(void)
{
	static const long base[] = {500, 1000, 2000, 4000, 8000, 8000, 8000};
	unsigned n;

	for (n = 0; n < 7; n++) {
		CHECK_EQ_INT(retry_backoff_ms(n, 0.0), base[n]);
		CHECK_EQ_INT(retry_backoff_ms(n, 0.5), base[n] * 7 / 8);
		CHECK(retry_backoff_ms(n, 0.999999) >= base[n] * 3 / 4);
	}
	CHECK_EQ_INT(retry_backoff_ms(1000, 0.0), 8000);
	CHECK_EQ_INT(retry_backoff_ms(0, 7.0), 500); /* a bad draw: none */
}

/* line - n bytes of 'a' words. */
static char *
line(size_t n)
{
	char *s = malloc(n + 1);
	size_t k;

	for (k = 0; k < n; k++)
		s[k] = k % 5 == 4 ? ' ' : 'a';
	s[n - 1] = 'z';
	s[n] = '\0';
	return s;
}

/* The tries: first fit, shorter goes on, not shorter or empty stops. */
static void
tries_follow_d9(void)
{
	struct tries t;
	struct buf fu = BUF_INIT, out = BUF_INIT;
	char *a = line(700), *b = line(600), *c = line(650);

	tries_init(&t, 512, 5);
	CHECK(tries_add(&t, a, 700, &fu));
	CHECK(strstr(fu.data, "700 bytes") != NULL);
	CHECK(strstr(fu.data, "at most 512") != NULL);
	CHECK(tries_add(&t, b, 600, &fu));
	CHECK(!tries_add(&t, c, 650, &fu)); /* not shorter */
	CHECK_EQ_INT(t.done, 3);
	CHECK(tries_result(&t, &out));
	CHECK(out.len <= 512 && strncmp(out.data, b, out.len) == 0);
	CHECK(out.data[out.len - 1] != ' ');
	tries_free(&t);

	tries_init(&t, 512, 5);
	CHECK(!tries_add(&t, "  fits\n\tfine  ", 14, &fu));
	CHECK(tries_result(&t, &out));
	CHECK_EQ_STR(out.data, "fits fine");
	tries_free(&t);

	tries_init(&t, 512, 5);
	CHECK(!tries_add(&t, "", 0, &fu)); /* empty: the last try */
	CHECK(!tries_result(&t, &out));
	tries_free(&t);

	tries_init(&t, 512, 2);
	CHECK(tries_add(&t, a, 700, &fu));
	CHECK(!tries_add(&t, b, 600, &fu)); /* no tries left */
	CHECK(tries_result(&t, &out) && strncmp(out.data, b, 500) == 0);
	tries_free(&t);
	free(a);
	free(b);
	free(c);
	buf_free(&fu);
	buf_free(&out);
}

/* The cut never splits a character; a reply becomes one valid line. */
static void
tries_cut_and_line(void)
{
	struct tries t;
	struct buf fu = BUF_INIT, out = BUF_INIT;
	char s[1200];
	size_t k, limit;

	/* 3-byte characters: the cut falls at a multiple of 3. */
	for (k = 0; k + 3 <= 1197; k += 3)
		memcpy(s + k, "\xe6\x97\xa5", 3);
	s[1197] = '\0';
	for (limit = 16; limit < 40; limit++) {
		tries_init(&t, limit, 1);
		CHECK(!tries_add(&t, s, strlen(s), &fu));
		CHECK(tries_result(&t, &out));
		CHECK_EQ_INT(out.len, limit / 3 * 3);
		CHECK(utf8_valid(out.data, out.len));
		tries_free(&t);
	}
	static const char messy[] = "a\r\nb\xe2\x80\xa8"
				    "c\xff"
				    "d\x01\x7f";

	tries_line(messy, sizeof(messy) - 1, &out);
	CHECK_EQ_STR(out.data,
	    "a b c\xef\xbf\xbd"
	    "d");
	buf_free(&fu);
	buf_free(&out);
}

/* mjson_same - mjson_dump of v is jansson's compact dump of it. */
static void
mjson_same(json_t *v)
{
	char *want = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
	struct buf got = BUF_INIT;

	CHECK(want != NULL);
	CHECK_EQ_INT(mjson_dump(v, &got), 0);
	CHECK_EQ_INT(got.len, strlen(want));
	CHECK_EQ_STR(got.data, want);
	free(want);
	buf_free(&got);
	json_decref(v);
}

static void
mjson_dump_is_janssons(void)
{
	static const char odd[] = "a\"b\\c/d\x01\x1f\x7f\b\f\n\r\t"
				  "\xc3\xa9\xe2\x80\xa8\xf0\x9f\x98\x80";
	char ctl[40], big[3000];
	json_t *o = json_object(), *a = json_array(), *deep;
	struct buf out = BUF_INIT;
	int k;

	for (k = 0; k < 32; k++)
		ctl[k] = (char)k;
	memset(big, 'x', sizeof(big));
	big[1000] = '"';
	json_object_set_new(o, "z", json_stringn(odd, sizeof(odd) - 1));
	json_object_set_new(o, "a\"\n", json_stringn(ctl, 32));
	json_object_set_new(o, "empty", json_object());
	json_object_set_new(o, "none", json_array());
	json_object_set_new(o, "big", json_stringn(big, sizeof(big)));
	json_array_append_new(a, json_integer(-9007199254740993LL));
	json_array_append_new(a, json_real(0.1));
	json_array_append_new(a, json_real(1e300));
	json_array_append_new(a, json_real(2.0));
	json_array_append_new(a, json_true());
	json_array_append_new(a, json_false());
	json_array_append_new(a, json_null());
	json_array_append_new(a, json_string(""));
	json_object_set_new(o, "list", a);
	mjson_same(o);
	mjson_same(json_string("alone"));
	mjson_same(json_integer(7));
	mjson_same(json_array());
	/* Too deep is an error, and nothing is left on out. */
	deep = json_array();
	for (k = 0; k < 200; k++) {
		json_t *up = json_array();

		json_array_append_new(up, deep);
		deep = up;
	}
	buf_adds(&out, "kept");
	CHECK_EQ_INT(mjson_dump(deep, &out), -SHIRO_ERR_PROTO);
	CHECK_EQ_INT(out.len, 4);
	json_decref(deep);
	/* A string made by mjson_setstr is checked for UTF-8. */
	o = json_object();
	CHECK_EQ_INT(mjson_setstr(o, "ok", "\xc3\xa9", 2), 0);
	CHECK_EQ_INT(mjson_setstr(o, "bad", "\xc3(", 2), -SHIRO_ERR_PROTO);
	CHECK_EQ_INT(mjson_setstr(o, "nul", "a\0b", 3), 0);
	mjson_same(o);
	buf_free(&out);
}

/* wire_event - an SSE event to the Responses decoder. */
static int
wire_event(void *arg, const char *name, const char *d, size_t len)
{
	return model_wire_responses.event(arg, name, d, len);
}

/* no_delta - deltas are not looked at here. */
static void
no_delta(void *arg, bool thinking, const char *s, size_t n)
{
	(void)arg;
	(void)thinking;
	(void)s;
	(void)n;
}

/* An output_index past 65535 is a clear failure, not a part's key that
 * overflows (the fuzzer's 444444444444444440 did, signed, in RS_KEY);
 * 65535 itself is taken. */
static void
responses_bounds_output_index(void)
{
	static const char *const huge[] = {
	    "data: {\"type\":\"response.output_item.added\","
	    "\"output_index\":444444444444444440,\"item\":{\"type\":"
	    "\"reasoning\",\"id\":\"rs_1\"}}\n\n",
	    "data: {\"type\":\"response.output_text.delta\","
	    "\"output_index\":65536,\"content_index\":0,\"delta\":\"x\"}"
	    "\n\n"};
	const char *fine = "data: {\"type\":\"response.output_text.delta\","
			   "\"output_index\":65535,\"content_index\":0,"
			   "\"delta\":\"x\"}\n\n";
	struct model_stream st;
	struct sse p;
	size_t k;

	for (k = 0; k < 2; k++) {
		model_stream_init(&st, "openai-responses", no_delta, NULL);
		sse_init(&p, 1u << 20, wire_event, &st);
		CHECKF(
		    sse_feed(&p, huge[k], strlen(huge[k])) == -SHIRO_ERR_PROTO,
		    "case %zu was taken", k);
		CHECKF(
		    strstr(st.why, "65535") != NULL, "case %zu: %s", k, st.why);
		sse_free(&p);
		model_reply_free(&st.reply);
	}
	model_stream_init(&st, "openai-responses", no_delta, NULL);
	sse_init(&p, 1u << 20, wire_event, &st);
	CHECKF(sse_feed(&p, fine, strlen(fine)) == 0, "%s", st.why);
	sse_free(&p);
	model_reply_free(&st.reply);
}

static const struct harness_test tests[] = {
    HT(sse_frames_events),
    HT(sse_caps_lines_and_events),
    HT(sse_callback_stops_it),
    HT(sse_names_are_c_strings),
    HT(retry_statuses_and_header),
    HT(retry_after_values),
    HT(retry_backoff_values),
    HT(tries_follow_d9),
    HT(tries_cut_and_line),
    HT(mjson_dump_is_janssons),
    HT(responses_bounds_output_index),
};

HARNESS_MAIN(tests)
