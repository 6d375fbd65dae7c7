/*
 * test_model_faults - the model worker when things go wrong, against the
 * mock provider (or a port nobody answers), with the test playing shirod.
 *
 * The retry schedule as the official SDKs have it (which statuses, how
 * many, how long between them from the mock's arrival times, the
 * headers that change it), connection failures, every deadline (connect,
 * idle, total, the job's own), the response cap, and every kind of bad
 * stream: each ends in a clear FAIL whose text, and the worker's log,
 * name the provider's request id.  Also CANCEL, a missing key, bad jobs,
 * the probe, and the jail.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proto/mono.h"
#include "tests/harness.h"
#include "tests/model_util.h"

#define REQ \
	"{'model':'m-1','max_tokens':100,'system':['sys']," \
	"'messages':[{'role':'user','content':[{'type':'text'," \
	"'text':'hello'}]}]}"

/* one_call - one call on a fresh worker: its FAIL (or RESULT). */
static struct msg *
one_call(struct mw *x, const char *wire, const char *script,
    const char *const *extra, struct mw_out *out)
{
	mw_start(x, wire, script, MW_KEY, extra);
	tw_send(&x->t, mw_call(1, REQ));
	return mw_wait(x, 1, out, 30000);
}

/* gap_ms - the time between requests k-1 and k at the mock. */
static double
gap_ms(const json_t *reqs, size_t k)
{
	return mock_t_ms(json_array_get(reqs, k)) -
	    mock_t_ms(json_array_get(reqs, k - 1));
}

/* check_retry - a FAIL's retry key. */
static void
check_retry(const struct msg *m, bool want)
{
	bool retry = !want;

	CHECK(msg_get_bool(m, "retry", &retry) == 0);
	CHECK_EQ_INT(retry, want);
}

/* 408, 409, 429, 5xx and 529 are retried, with a notice each time. */
static void
retried_statuses(void)
{
	static const int statuses[] = {408, 409, 429, 500, 503, 529};
	struct mw x;
	struct buf script = BUF_INIT;
	size_t k;

	buf_adds(&script, "{'responses':[");
	for (k = 0; k < 6; k++)
		buf_printf(&script,
		    "{'status':%d,'error':{'type':'e%d','message':'try "
		    "later'}},"
		    "{'text':'ok %d'},",
		    statuses[k], statuses[k], statuses[k]);
	buf_adds(&script, "{'text':'end'}]}");
	mw_start(&x, "anthropic", script.data, MW_KEY, NULL);
	for (k = 0; k < 6; k++) {
		struct mw_out out = {0};
		const struct msg_val *data;
		char want[64];
		struct msg *m;
		int64_t retries;

		tw_send(&x.t, mw_call(k + 1, REQ));
		m = mw_wait(&x, k + 1, &out, 10000);
		CHECKF(msg_type(m) == MSG_RESULT, "%d: %s", statuses[k],
		    mw_text(m));
		snprintf(want, sizeof(want), "ok %d", statuses[k]);
		CHECK_EQ_STR(mw_text(m), want);
		CHECK(msg_get_map(m, "data", &data) == 0);
		CHECK(msg_val_int(data, "retries", &retries) == 0 &&
		    retries == 1);
		CHECK_EQ_INT(out.retries, 1);
		snprintf(want, sizeof(want), "%d from %s, retry 1 of 2 in 0.",
		    statuses[k], MW_PROVIDER);
		CHECKF(strncmp(out.retry_note, want, strlen(want)) == 0, "%s",
		    out.retry_note);
		msg_destroy(&m);
		mw_out_free(&out);
	}
	buf_free(&script);
	mw_stop(&x);
}

/* Other statuses fail at once, saying the status, message and id. */
static void
other_statuses_fail_at_once(void)
{
	static const int statuses[] = {400, 401, 404, 422};
	struct mw x;
	struct buf script = BUF_INIT;
	size_t k;

	buf_adds(&script, "{'responses':[");
	for (k = 0; k < 4; k++)
		buf_printf(&script,
		    "%s{'status':%d,'request_id':'req_s%d','error':{'type':"
		    "'invalid_request_error','message':'bad thing %d'}}",
		    k ? "," : "", statuses[k], statuses[k], statuses[k]);
	buf_adds(&script, "]}");
	mw_start(&x, "openai-responses", script.data, MW_KEY, NULL);
	for (k = 0; k < 4; k++) {
		char want[64];
		struct msg *m;

		tw_send(&x.t, mw_call(k + 1, REQ));
		m = mw_wait(&x, k + 1, NULL, 10000);
		CHECK_EQ_STR(mw_fail_code(m), "http");
		check_retry(m, false);
		snprintf(
		    want, sizeof(want), "%d from %s", statuses[k], MW_PROVIDER);
		CHECKF(strstr(mw_text(m), want) != NULL, "%s", mw_text(m));
		snprintf(want, sizeof(want), "bad thing %d", statuses[k]);
		CHECK(strstr(mw_text(m), want) != NULL);
		snprintf(want, sizeof(want), "request id req_s%d", statuses[k]);
		CHECK(strstr(mw_text(m), want) != NULL);
		CHECK(mw_file_has(x.t.err_path, want));
		msg_destroy(&m);
	}
	mock_expect(&x.mk, 4);
	buf_free(&script);
	mw_stop(&x);
}

/*
 * At most 2 retries, after min(0.5 s * 2^n, 8 s) times a jitter in
 * [0.75, 1]: the gaps at the mock are at least 375 and 750 ms, and not
 * much more than 500 and 1000 ms.
 */
static void
retry_schedule_and_limit(void)
{
	struct mw x;
	struct mw_out out = {0};
	struct msg *m;
	json_t *reqs;
	double g1, g2;

	m = one_call(&x, "anthropic",
	    "{'responses':[{'status':503,'times':3,'error':{'type':"
	    "'overloaded_error','message':'Overloaded'}},{'text':'never'}]}",
	    NULL, &out);
	CHECK_EQ_STR(mw_fail_code(m), "http");
	check_retry(m, true);
	CHECKF(strstr(mw_text(m), "after 2 retries") != NULL, "%s", mw_text(m));
	CHECK(strstr(mw_text(m), "request id req_mock_3") != NULL);
	CHECK_EQ_INT(out.retries, 2);
	msg_destroy(&m);
	reqs = mock_requests(&x.mk, 3, 5000);
	CHECK_EQ_INT(json_array_size(reqs), 3);
	g1 = gap_ms(reqs, 1);
	g2 = gap_ms(reqs, 2);
	CHECKF(g1 >= 370 && g1 <= 1500, "first gap %.0f ms", g1);
	CHECKF(g2 >= 745 && g2 <= 2000, "second gap %.0f ms", g2);
	json_decref(reqs);
	mw_out_free(&out);
	mw_stop(&x);

	/* --max-retries 0: one request only. */
	{
		const char *extra[] = {"--max-retries", "0", NULL};

		m = one_call(&x, "openai-chat",
		    "{'responses':[{'status':500},{'text':'never'}]}", extra,
		    NULL);
		CHECK_EQ_STR(mw_fail_code(m), "http");
		msg_destroy(&m);
		mock_expect(&x.mk, 1);
		mw_stop(&x);
	}
}

/* x-should-retry overrides the status, both ways. */
static void
should_retry_header_is_obeyed(void)
{
	struct mw x;
	struct msg *m;

	m = one_call(&x, "anthropic",
	    "{'responses':[{'status':503,'headers':{'x-should-retry':"
	    "'false'}},{'text':'never'}]}",
	    NULL, NULL);
	CHECK_EQ_STR(mw_fail_code(m), "http");
	check_retry(m, false);
	msg_destroy(&m);
	mock_expect(&x.mk, 1);
	mw_stop(&x);

	m = one_call(&x, "anthropic",
	    "{'responses':[{'status':400,'headers':{'x-should-retry':"
	    "'true'}},{'text':'again'}]}",
	    NULL, NULL);
	CHECK_EQ_STR(mw_text(m), "again");
	msg_destroy(&m);
	mw_stop(&x);
}

/*
 * retry-after-ms, then retry-after (seconds), are waited when within
 * 60 s; a longer one is ignored for the computed backoff.
 */
static void
retry_after_headers_are_honoured(void)
{
	static const struct {
		const char *headers;
		double min, max;
	} cases[] = {
	    {"{'retry-after-ms':'1300'}", 1295, 4000},
	    {"{'retry-after':'2'}", 1995, 5000},
	    {"{'retry-after-ms':'100','retry-after':'9'}", 95, 4000},
	    {"{'retry-after':'61'}", 370, 4000},
	};
	size_t k;

	for (k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		struct mw x;
		char script[256];
		struct msg *m;
		json_t *reqs;
		double g;

		snprintf(script, sizeof(script),
		    "{'responses':[{'status':429,'headers':%s},{'text':'ok'}]}",
		    cases[k].headers);
		m = one_call(&x, "openai-responses", script, NULL, NULL);
		CHECK_EQ_STR(mw_text(m), "ok");
		msg_destroy(&m);
		reqs = mock_requests(&x.mk, 2, 5000);
		g = gap_ms(reqs, 1);
		CHECKF(g >= cases[k].min && g <= cases[k].max,
		    "%s: a gap of %.0f ms", cases[k].headers, g);
		json_decref(reqs);
		mw_stop(&x);
	}
}

/* closed_port - a loopback port with nothing listening (bound, closed). */
static int
closed_port(void)
{
	struct sockaddr_in sa;
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM, 0), port;

	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	CHECK(bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0);
	CHECK(getsockname(fd, (struct sockaddr *)&sa, &len) == 0);
	port = ntohs(sa.sin_port);
	close(fd);
	return port;
}

/*
 * A refused connection, and one closed before the status line, are
 * retried twice, then FAIL unreachable.
 */
static void
connection_errors_are_retried(void)
{
	struct sockaddr_in sa;
	socklen_t len = sizeof(sa);
	struct mw x;
	struct mw_out out = {0};
	char base[64];
	const char *extra[] = {"--base-url", base, NULL};
	struct msg *m;
	int lfd, k;
	pid_t pid;

	snprintf(base, sizeof(base), "http://127.0.0.1:%d", closed_port());
	/* The later --base-url wins over the mock's. */
	m = one_call(&x, "anthropic", NULL, extra, &out);
	CHECK_EQ_STR(mw_fail_code(m), "unreachable");
	check_retry(m, true);
	CHECK(strstr(mw_text(m), "after 2 retries") != NULL);
	CHECK_EQ_INT(out.retries, 2);
	CHECK(strncmp(out.retry_note, "unreachable from", 16) == 0);
	msg_destroy(&m);
	mw_out_free(&out);
	mw_stop(&x);

	/* A server that reads the request and closes without a word. */
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	CHECK(bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) == 0);
	CHECK(listen(lfd, 8) == 0);
	CHECK(getsockname(lfd, (struct sockaddr *)&sa, &len) == 0);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		for (k = 0; k < 3; k++) {
			char buf[4096];
			int c = accept(lfd, NULL, NULL);

			if (c >= 0 && read(c, buf, sizeof(buf)) >= 0)
				close(c);
		}
		_exit(0);
	}
	close(lfd);
	snprintf(base, sizeof(base), "http://127.0.0.1:%d", ntohs(sa.sin_port));
	memset(&out, 0, sizeof(out));
	m = one_call(&x, "openai-chat", NULL, extra, &out);
	CHECK_EQ_STR(mw_fail_code(m), "unreachable");
	CHECKF(strstr(mw_text(m), "Empty reply from server") != NULL, "%s",
	    mw_text(m));
	CHECK_EQ_INT(out.retries, 2);
	msg_destroy(&m);
	mw_out_free(&out);
	mw_stop(&x);
	CHECK(waitpid(pid, NULL, 0) == pid);
}

/* A stream cut before its first event is retried like a failed call. */
static void
cut_before_any_event_is_retried(void)
{
	struct mw x;
	struct msg *m;

	m = one_call(&x, "openai-chat",
	    "{'responses':[{'cut_after':0},{'text':'second'}]}", NULL, NULL);
	CHECK_EQ_STR(mw_text(m), "second");
	msg_destroy(&m);
	mock_expect(&x.mk, 2);
	mw_stop(&x);
}

/*
 * A stream that delivered content is never retried: cut after some text,
 * the call fails (retry true: shirod may try later), once.
 */
static void
content_is_never_retried(void)
{
	struct mw x;
	struct mw_out out = {0};
	struct msg *m;

	m = one_call(&x, "anthropic",
	    "{'responses':[{'text':'some words then','chunk':4,"
	    "'cut_after':6},{'text':'never'}]}",
	    NULL, &out);
	CHECK_EQ_STR(mw_fail_code(m), "protocol");
	check_retry(m, true);
	CHECKF(strstr(mw_text(m), "cut after") != NULL, "%s", mw_text(m));
	CHECK(strstr(mw_text(m), "request id req_mock_1") != NULL);
	CHECK(mw_file_has(x.t.err_path, "request id req_mock_1"));
	CHECK(out.text.len > 0);
	CHECK_EQ_INT(out.retries, 0);
	msg_destroy(&m);
	mock_expect(&x.mk, 1);
	mw_out_free(&out);
	mw_stop(&x);
}

/* The connect deadline: a listener whose queue is full never accepts. */
static void
connect_deadline(void)
{
	struct sockaddr_in sa;
	socklen_t len = sizeof(sa);
	struct mw x;
	char base[64];
	const char *extra[] = {"--base-url", base, "--connect-timeout-ms",
	    "300", "--max-retries", "1", NULL};
	struct mw_out out = {0};
	int lfd, fill[3], k;
	struct msg *m;

	lfd = socket(AF_INET, SOCK_STREAM, 0);
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	CHECK(bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) == 0);
	CHECK(listen(lfd, 0) == 0);
	CHECK(getsockname(lfd, (struct sockaddr *)&sa, &len) == 0);
	/* Fill the accept queue: later SYNs are dropped, connects hang. */
	for (k = 0; k < 3; k++) {
		fill[k] = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
		connect(fill[k], (struct sockaddr *)&sa, sizeof(sa));
	}
	snprintf(base, sizeof(base), "http://127.0.0.1:%d", ntohs(sa.sin_port));
	m = one_call(&x, "openai-responses", NULL, extra, &out);
	CHECK_EQ_STR(mw_fail_code(m), "timeout");
	CHECKF(strstr(mw_text(m), "connect") != NULL, "%s", mw_text(m));
	CHECK_EQ_INT(out.retries, 1); /* retried, as a connection failure */
	mw_out_free(&out);
	msg_destroy(&m);
	mw_stop(&x);
	for (k = 0; k < 3; k++)
		close(fill[k]);
	close(lfd);
}

/* The idle deadline: mid-stream (no retry), and before the headers. */
static void
idle_deadline(void)
{
	const char *extra[] = {"--idle-timeout-ms", "400", NULL};
	const char *extra1[] = {
	    "--idle-timeout-ms", "300", "--max-retries", "1", NULL};
	struct mw x;
	struct msg *m;

	m = one_call(&x, "anthropic",
	    "{'responses':[{'text':'abcdefghijklmnop','chunk':2,"
	    "'stall_after':5}]}",
	    extra, NULL);
	CHECK_EQ_STR(mw_fail_code(m), "timeout");
	CHECKF(strstr(mw_text(m), "idle: no byte") != NULL, "%s", mw_text(m));
	CHECK(strstr(mw_text(m), "request id req_mock_1") != NULL);
	msg_destroy(&m);
	mock_expect(&x.mk, 1);
	CHECK(mock_wait(&x.mk, "disconnect", 5000));
	mw_stop(&x);

	m = one_call(&x, "openai-chat",
	    "{'responses':[{'text':'late','delay_ms':5000,'times':2}]}", extra1,
	    NULL);
	CHECK_EQ_STR(mw_fail_code(m), "timeout");
	CHECK(strstr(mw_text(m), "after 1 retries") != NULL);
	msg_destroy(&m);
	mock_expect(&x.mk, 2);
	mw_stop(&x);
}

/* The total deadline catches a slow drip; a JOB's deadline_ms too. */
static void
total_deadlines(void)
{
	const char *extra[] = {"--total-timeout-ms", "1000", NULL};
	struct mw x;
	struct msg *m, *job;
	uint64_t start;

	m = one_call(&x, "anthropic",
	    "{'responses':[{'text':'a long text that drips slowly, a byte at "
	    "a time','drip':{'bytes':1,'ms':40}}]}",
	    extra, NULL);
	CHECK_EQ_STR(mw_fail_code(m), "timeout");
	CHECKF(strstr(mw_text(m), "total") != NULL, "%s", mw_text(m));
	msg_destroy(&m);
	CHECK(mock_wait(&x.mk, "disconnect", 5000));
	mw_stop(&x);

	mw_start(&x, "openai-chat", "{'responses':[{'stall_after':1}]}", MW_KEY,
	    NULL);
	job = mw_call(2, REQ);
	msg_set_int(job, "deadline_ms", 700);
	start = mono_ms();
	tw_send(&x.t, job);
	m = mw_wait(&x, 2, NULL, 30000);
	CHECK_EQ_STR(mw_fail_code(m), "timeout");
	CHECK(strstr(mw_text(m), "deadline of 700 ms") != NULL);
	CHECK(mono_ms() - start >= 690);
	msg_destroy(&m);
	mw_stop(&x);
}

/* A response past --max-response-bytes fails, not retried. */
static void
response_cap(void)
{
	const char *extra[] = {"--max-response-bytes", "100000", NULL};
	struct mw x;
	struct msg *m;

	m = one_call(&x, "anthropic", "{'responses':[{'long_line':300000}]}",
	    extra, NULL);
	CHECK_EQ_STR(mw_fail_code(m), "protocol");
	check_retry(m, false);
	CHECKF(strstr(mw_text(m), "100000 bytes") != NULL, "%s", mw_text(m));
	msg_destroy(&m);
	mw_stop(&x);

	m = one_call(&x, "anthropic",
	    "{'responses':[{'text':'forever','endless':true}]}", extra, NULL);
	CHECK_EQ_STR(mw_fail_code(m), "protocol");
	CHECKF(strstr(mw_text(m), "cap of 100000") != NULL, "%s", mw_text(m));
	CHECK(strstr(mw_text(m), "request id req_mock_1") != NULL);
	msg_destroy(&m);
	mw_stop(&x);
}

/* One bad stream: its FAIL's code and a piece of its text. */
struct bad {
	const char *wire, *script, *code, *says;
};

/* Every kind of bad stream ends in a clear FAIL naming the request id. */
static void
bad_streams_fail_clearly(void)
{
	static const struct bad cases[] = {
	    {"anthropic", "{'raw_events':[['message_start','{not json']]}",
		"protocol", "a malformed message_start event"},
	    {"anthropic",
		"{'text':'hello there','error_after':4,'error':{'type':"
		"'overloaded_error','message':'Overloaded'}}",
		"protocol", "an error event: overloaded_error: Overloaded"},
	    {"anthropic", "{'text':'no end','omit_end':true}", "protocol",
		"ended before message_stop"},
	    {"anthropic",
		"{'garbage':'<html>busy</html>','content_type':'text/html'}",
		"protocol", "not an event stream"},
	    {"anthropic",
		"{'tools':[{'id':'t','name':'zoom','input_raw':'{\\'id\\':'}]}",
		"protocol", "input is not a JSON object"},
	    {"openai-responses",
		"{'text':'abc','error_after':3,'error':{'code':"
		"'server_error','message':'boom'}}",
		"protocol", "an error event: server_error: boom"},
	    {"openai-responses",
		"{'raw_events':[['response.failed','{\\'type\\':"
		"\\'response.failed\\',\\'response\\':{\\'error\\':{"
		"\\'code\\':\\'invalid_prompt\\',\\'message\\':\\'no\\'}}}']]}",
		"protocol", "the response failed: invalid_prompt: no"},
	    {"openai-responses", "{'text':'cut','omit_end':true}", "protocol",
		"ended before response.completed"},
	    {"openai-chat", "{'text':'abc','omit_end':true}", "protocol",
		"ended before a finish_reason"},
	    {"openai-chat",
		"{'text':'abc','error_after':2,'error':{'message':'oops'}}",
		"protocol", "an error chunk: oops"},
	    {"openai-chat", "{'garbage':'\\u0001\\u0002binary junk'}",
		"protocol", "the body began: ..binary junk"},
	};
	const char *extra[] = {"--max-retries", "0", NULL};
	size_t k;

	for (k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		struct mw x;
		struct msg *m;
		char script[1024];

		snprintf(script, sizeof(script), "{'responses':[%s]}",
		    cases[k].script);
		m = one_call(&x, cases[k].wire, script, extra, NULL);
		CHECKF(msg_type(m) == MSG_FAIL, "case %zu: a RESULT", k);
		CHECK_EQ_STR(mw_fail_code(m), cases[k].code);
		CHECKF(strstr(mw_text(m), cases[k].says) != NULL,
		    "case %zu: %s", k, mw_text(m));
		CHECKF(strstr(mw_text(m), "request id req_mock_1") != NULL,
		    "case %zu: %s", k, mw_text(m));
		CHECK(mw_file_has(x.t.err_path, "request id req_mock_1"));
		msg_destroy(&m);
		mw_stop(&x);
	}
}

/* CANCEL aborts a call in flight: FAIL canceled, the connection closed. */
static void
cancel_aborts_the_call(void)
{
	struct mw x;
	struct msg *m;
	json_t *reqs;

	mw_start(&x, "anthropic",
	    "{'responses':[{'text':'hi','stall_after':3},{'text':'next'}]}",
	    MW_KEY, NULL);
	tw_send(&x.t, mw_call(1, REQ));
	reqs = mock_requests(&x.mk, 1, 5000);
	json_decref(reqs);
	m = msg_new(MSG_CANCEL);
	msg_set_int(m, "job", 1);
	tw_send(&x.t, m);
	m = mw_wait(&x, 1, NULL, 5000);
	CHECK_EQ_STR(mw_fail_code(m), "canceled");
	msg_destroy(&m);
	CHECK(mock_wait(&x.mk, "disconnect", 5000));
	tw_send(&x.t, mw_call(2, REQ));
	m = mw_wait(&x, 2, NULL, 5000);
	CHECK_EQ_STR(mw_text(m), "next");
	msg_destroy(&m);
	mw_stop(&x);
}

/*
 * No key: toward the official endpoint nothing is sent (FAIL nokey); a
 * server answering 401 to a keyless call is nokey too; a key that cannot
 * go in a header is refused.
 */
static void
missing_or_bad_key(void)
{
	struct tw t = {0};
	struct mw x;
	struct msg *m;
	const char *argv[] = {"--wire", "anthropic", NULL};

	tw_start(&t, "../shiro-model-worker", 200, 5000, NULL, argv);
	tw_drop(tw_recv(&t, MSG_READY, 5000));
	tw_send(&t, mw_call(1, REQ));
	m = tw_recv(&t, MSG_FAIL, 5000);
	CHECK_EQ_STR(mw_fail_code(m), "nokey");
	CHECKF(strstr(mw_text(m),
		   "anthropic needs a key at "
		   "https://api.anthropic.com") != NULL,
	    "%s", mw_text(m));
	msg_destroy(&m);
	tw_stop(&t);

	mw_start(&x, "openai-chat",
	    "{'responses':[{'status':401,'error':{'message':'no key'}}]}", NULL,
	    NULL);
	tw_send(&x.t, mw_call(1, REQ));
	m = mw_wait(&x, 1, NULL, 5000);
	CHECK_EQ_STR(mw_fail_code(m), "nokey");
	CHECK(strstr(mw_text(m), "no key") != NULL);
	msg_destroy(&m);
	mw_stop(&x);

	mw_start(&x, "openai-chat", NULL, "sk-bad\r\nx-injected: 1", NULL);
	tw_send(&x.t, mw_call(1, REQ));
	m = mw_wait(&x, 1, NULL, 5000);
	CHECK_EQ_STR(mw_fail_code(m), "nokey");
	msg_destroy(&m);
	CHECK(json_array_size(mock_log(&x.mk)) == 0);
	mw_stop(&x);
}

/* A bad request fails badjob and sends nothing. */
static void
bad_jobs_send_nothing(void)
{
	static const char *const bad[] = {
	    "{'max_tokens':10,'messages':[{'role':'user','content':[{'type':"
	    "'text','text':'x'}]}]}",
	    "{'model':'m','max_tokens':10,'tools':[{'name':'t','schema':"
	    "'not json'}],'messages':[{'role':'user','content':[{'type':"
	    "'text','text':'x'}]}]}",
	    "{'model':'m','max_tokens':10,'messages':[{'role':'assistant',"
	    "'content':[{'type':'tool_use','id':'a','name':'t','input':"
	    "'[1'}]}]}",
	    "{'model':'m','max_tokens':10,'messages':[{'role':'user',"
	    "'content':[{'type':'video','text':'x'}]}]}",
	    "{'model':'m','max_tokens':10,'messages':[{'role':'system',"
	    "'content':[{'type':'text','text':'x'}]}]}",
	    "{'model':'m','max_tokens':10,'messages':[{'role':'user',"
	    "'content':[{'type':'tool_use','id':'a','name':'t','input':"
	    "'{}'}]}]}",
	    "{'model':'m','max_tokens':0,'messages':[{'role':'user',"
	    "'content':[{'type':'text','text':'x'}]}]}",
	};
	struct mw x;
	struct msg *m, *job;
	json_t *log;
	size_t k;

	mw_start(&x, "anthropic", NULL, MW_KEY, NULL);
	for (k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		tw_send(&x.t, mw_call(k + 1, bad[k]));
		m = mw_wait(&x, k + 1, NULL, 5000);
		CHECKF(strcmp(mw_fail_code(m), "badjob") == 0, "case %zu", k);
		msg_destroy(&m);
	}
	/* A call without data at all. */
	job = msg_new(MSG_JOB);
	msg_set_int(job, "job", 99);
	msg_set_str(job, "kind", "call");
	tw_send(&x.t, job);
	m = mw_wait(&x, 99, NULL, 5000);
	CHECK_EQ_STR(mw_fail_code(m), "badjob");
	msg_destroy(&m);
	log = mock_log(&x.mk);
	CHECK_EQ_INT(json_array_size(log), 0);
	json_decref(log);
	mw_stop(&x);
}

/* run_probe - the probe's exit status and its line. */
static int
run_probe(const char *wire, const char *base, char *line, size_t size)
{
	char path[PATH_MAX];
	int fds[2], status;
	ssize_t n;
	pid_t pid;

	tw_bin("../shiro-model-worker", path, sizeof(path));
	CHECK(pipe(fds) == 0);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		dup2(fds[1], 1);
		close(fds[0]);
		if (base != NULL)
			execl(path, path, "--probe", "--wire", wire,
			    "--base-url", base, (char *)NULL);
		else
			execl(path, path, "--probe", "--wire", wire,
			    (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	n = read(fds[0], line, size - 1);
	line[n > 0 ? n : 0] = '\0';
	close(fds[0]);
	CHECK(waitpid(pid, &status, 0) == pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* The probe: an answering endpoint exits 0, a dead one 1. */
static void
probe_says_whether_it_answers(void)
{
	struct mock mk;
	char line[512], base[96];
	json_t *reqs;

	mock_start(&mk, NULL);
	CHECK_EQ_INT(run_probe("anthropic", mk.base, line, sizeof(line)), 0);
	CHECKF(strstr(line, "answered HTTP 200") != NULL, "%s", line);
	snprintf(base, sizeof(base), "%s/v1", mk.base);
	CHECK_EQ_INT(run_probe("openai-chat", base, line, sizeof(line)), 0);
	reqs = mock_requests(&mk, 2, 5000);
	CHECK_EQ_STR(mock_str(json_array_get(reqs, 0), "path"), "/v1/models");
	CHECK_EQ_STR(mock_str(json_array_get(reqs, 1), "path"), "/v1/models");
	CHECK(mock_header(json_array_get(reqs, 0), "x-api-key") == NULL);
	CHECK(mock_header(json_array_get(reqs, 1), "authorization") == NULL);
	json_decref(reqs);
	mock_stop(&mk);
	snprintf(base, sizeof(base), "http://127.0.0.1:%d", closed_port());
	CHECK_EQ_INT(run_probe("anthropic", base, line, sizeof(line)), 1);
	CHECKF(strstr(line, "no answer") != NULL, "%s", line);
	CHECK_EQ_INT(run_probe("offline", NULL, line, sizeof(line)), 0);
}

/* A jailed worker (seccomp, no_new_privs) still makes its calls. */
static void
jailed_worker_calls(void)
{
	struct mw x;
	struct msg *m;

#if defined(__SANITIZE_ADDRESS__)
	harness_skip("sanitizer builds run the model worker without its jail");
#endif
	mw_start(&x, "openai-responses",
	    "{'responses':[{'text':'from the jail','thinking':'t'}]}", MW_KEY,
	    NULL);
	CHECK(tw_status_has(&x.t, "Seccomp:\t2"));
	CHECK(tw_status_has(&x.t, "NoNewPrivs:\t1"));
	tw_send(&x.t, mw_call(1, REQ));
	m = mw_wait(&x, 1, NULL, 10000);
	CHECK_EQ_STR(mw_text(m), "from the jail");
	msg_destroy(&m);
	mw_stop(&x);
}

/*
 * A name is resolved (libcurl's resolver thread, /etc/hosts) by a jailed
 * worker: http://localhost:PORT works as 127.0.0.1 does.
 */
static void
jailed_worker_resolves_names(void)
{
	struct mw x;
	struct msg *m;
	char base[96];

	memset(&x, 0, sizeof(x));
	x.wire = "anthropic";
	mock_start(&x.mk, "{'responses':[{'text':'by name'}]}");
	snprintf(base, sizeof(base), "http://localhost:%d", x.mk.port);
	mw_worker(&x, base, NULL, NULL);
	tw_send(&x.t, mw_call(1, REQ));
	m = mw_wait(&x, 1, NULL, 10000);
	CHECKF(msg_type(m) == MSG_RESULT, "%s", mw_text(m));
	CHECK_EQ_STR(mw_text(m), "by name");
	msg_destroy(&m);
	mw_stop(&x);
}

/*
 * TLS: a server whose certificate no one trusts fails as a connection
 * failure (unreachable, retried), naming the certificate problem; the
 * key never reaches it, since the handshake fails first.
 */
static void
untrusted_certificate_fails(void)
{
	const char *extra[] = {"--max-retries", "1", NULL};
	struct mw x;
	struct mw_out out = {0};
	struct msg *m;
	char base[96];

	memset(&x, 0, sizeof(x));
	x.wire = "openai-chat";
	mock_start_tls(&x.mk, "{'responses':[{'text':'never'}]}");
	snprintf(base, sizeof(base), "%s/v1", x.mk.base);
	mw_worker(&x, base, MW_KEY, extra);
	tw_send(&x.t, mw_call(1, REQ));
	m = mw_wait(&x, 1, &out, 20000);
	CHECK_EQ_STR(mw_fail_code(m), "unreachable");
	CHECKF(strstr(mw_text(m), "certificate") != NULL, "%s", mw_text(m));
	CHECK_EQ_INT(out.retries, 1);
	msg_destroy(&m);
	mock_expect(&x.mk, 0);
	mw_out_free(&out);
	mw_stop(&x);
}

static const struct harness_test tests[] = {
    HT(retried_statuses),
    HT(other_statuses_fail_at_once),
    HT(retry_schedule_and_limit),
    HT(should_retry_header_is_obeyed),
    HT(retry_after_headers_are_honoured),
    HT(connection_errors_are_retried),
    HT(cut_before_any_event_is_retried),
    HT(content_is_never_retried),
    HT(connect_deadline),
    HT(idle_deadline),
    HT(total_deadlines),
    HT(response_cap),
    HT(bad_streams_fail_clearly),
    HT(cancel_aborts_the_call),
    HT(missing_or_bad_key),
    HT(bad_jobs_send_nothing),
    HT(probe_says_whether_it_answers),
    HT(jailed_worker_calls),
    HT(jailed_worker_resolves_names),
    HT(untrusted_certificate_fails),
};

HARNESS_MAIN(tests)
