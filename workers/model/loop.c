/*
 * loop.c - the model worker's jobs, calls, retries, deadlines and
 * compaction tries (loop.h).
 *
 * Everything runs in the skeleton's one thread.  The hooks are called
 * from the skeleton (job, cancel, poll, ready) and from libcurl inside
 * http_ready() (body, done).  A job is freed only by itself: when it
 * answers, or when the skeleton cancels it.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "proto/buf.h"
#include "proto/err.h"
#include "proto/log.h"
#include "proto/mono.h"
#include "proto/xmalloc.h"
#include "workers/model/http.h"
#include "workers/model/loop.h"
#include "workers/model/offline.h"
#include "workers/model/retry.h"
#include "workers/model/sse.h"
#include "workers/model/tries.h"
#include "workers/model/wire.h"

/* A job in flight. */
struct loop_job {
	struct loop *lp;
	uint64_t id;
	bool compact; /* kind compact; else call */
	struct msg *m; /* the JOB; the request's strings live here */
	struct model_request req;
	struct buf body; /* this try's JSON body */
	struct http_call *call; /* the call in flight, or NULL */
	struct model_stream st;
	struct sse sse;
	bool sse_on; /* sse and st hold this attempt's state */
	struct buf errbody; /* a non-2xx response's body (its start) */
	bool checked; /* a 2xx response's content type was checked */
	bool event; /* this attempt's first event came */
	bool delivered; /* text or thinking went to the broker */
	/* Why the body hook stopped the call. */
	char hook_code[16], hook_why[600];
	bool hook_retry;
	unsigned retries; /* of this try */
	unsigned retries_total;
	uint64_t wake_at; /* a retry's backoff ends; 0: none */
	uint64_t started; /* when the job came */
	uint64_t deadline; /* its total deadline */
	struct buf pend; /* deltas not sent yet */
	bool pend_thinking;
	/* A compaction's tries. */
	struct tries tries;
	struct buf follow[2 * MODEL_TRIES_MAX];
	unsigned nfollow;
	struct model_usage sum;
	char request_id[256];
	struct loop_job *next;
};

struct loop {
	struct worker *w;
	struct model_opts o;
	struct http *http;
	struct loop_job *jobs;
	char *url, *host;
	uint64_t rng;
};

static void loop_attempt(struct loop_job *j);

/* loop_rand - a draw in [0, 1) (xorshift64*; jitter needs no more). */
static double
loop_rand(struct loop *lp)
{
	uint64_t x = lp->rng;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	lp->rng = x;
	return (double)((x * 0x2545f4914f6cdd1dULL) >> 11) / 9007199254740992.0;
}

/* loop_new - the loop for w with o. */
int
loop_new(struct worker *w, const struct model_opts *o, struct loop **lpp)
{
	struct loop *lp = xcalloc(1, sizeof(*lp));
	const char *base, *p;
	size_t n;

	lp->w = w;
	lp->o = *o;
	lp->rng =
	    (mono_ms() << 20) ^ (uint64_t)getpid() ^ 0x9e3779b97f4a7c15ULL;
	if (o->wire != NULL) {
		if (http_new(&lp->http) < 0) {
			free(lp);
			return -SHIRO_ERR_FAILED;
		}
		base = o->base_url ? o->base_url : o->wire->base;
		n = strlen(base);
		while (n > 0 && base[n - 1] == '/')
			n--;
		lp->url = xasprintf("%.*s%s", (int)n, base, o->wire->path);
		/* The host part, for messages: after "://", up to '/'. */
		p = strstr(base, "://");
		p = p ? p + 3 : base;
		lp->host = xasprintf("%.*s", (int)strcspn(p, "/"), p);
	}
	*lpp = lp;
	return 0;
}

/* loop_name - the provider's name for messages (its wire's when the
 * worker was given no --provider). */
static const char *
loop_name(const struct loop *lp)
{
	const char *name = worker_provider(lp->w);

	if (strcmp(name, "offline") == 0 && lp->o.wire != NULL)
		return lp->o.wire->name;
	return name;
}

/* loop_find - the job numbered id, or NULL. */
static struct loop_job *
loop_find(struct loop *lp, uint64_t id)
{
	struct loop_job *j;

	for (j = lp->jobs; j != NULL; j = j->next)
		if (j->id == id)
			return j;
	return NULL;
}

/* loop_reset_stream - drop the attempt's decoder state. */
static void
loop_reset_stream(struct loop_job *j)
{
	if (j->sse_on) {
		sse_free(&j->sse);
		model_reply_free(&j->st.reply);
		j->sse_on = false;
	}
}

/* loop_free - take j out of the loop and free it (aborting its call). */
static void
loop_free(struct loop_job *j)
{
	struct loop_job **pp;
	unsigned k;

	for (pp = &j->lp->jobs; *pp != NULL; pp = &(*pp)->next)
		if (*pp == j) {
			*pp = j->next;
			break;
		}
	http_abort(&j->call);
	loop_reset_stream(j);
	model_request_free(&j->req);
	msg_destroy(&j->m);
	buf_free(&j->body);
	buf_free(&j->errbody);
	buf_free(&j->pend);
	tries_free(&j->tries);
	for (k = 0; k < j->nfollow; k++)
		buf_free(&j->follow[k]);
	free(j);
}

/* loop_flush - send the deltas not sent yet as one CHUNK. */
static void
loop_flush(struct loop_job *j)
{
	if (j->pend.len == 0)
		return;
	worker_job_chunk(j->lp->w, j->id, j->pend_thinking ? "thinking" : NULL,
	    j->pend.data, j->pend.len);
	buf_reset(&j->pend);
}

/* loop_delta - a piece of text or thinking from the decoder. */
static void
loop_delta(void *arg, bool thinking, const char *s, size_t n)
{
	struct loop_job *j = arg;

	if (j->compact)
		return; /* a compaction streams no text */
	if (j->pend.len > 0 && j->pend_thinking != thinking)
		loop_flush(j);
	j->pend_thinking = thinking;
	buf_add(&j->pend, s, n);
	j->delivered = true;
	/* Keep a CHUNK well within a message. */
	if (j->pend.len >= 64 * 1024)
		loop_flush(j);
}

/* loop_fail - answer FAIL, log it with the request id; frees j. */
static void __attribute__((format(printf, 4, 5))) loop_fail(
    struct loop_job *j, const char *code, bool retry, const char *fmt, ...)
{
	char text[1024];
	size_t n;
	va_list ap;

	loop_flush(j);
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	n = strlen(text);
	if (j->request_id[0] != '\0')
		snprintf(text + n, sizeof(text) - n, " (request id %s)",
		    j->request_id);
	log_warnx(
	    "job %llu failed: %s: %s", (unsigned long long)j->id, code, text);
	worker_job_fail(j->lp->w, j->id, code, retry, "%s", text);
	loop_free(j);
}

/* loop_usage_add - a try's usage onto the sum. */
static void
loop_usage_add(struct model_usage *sum, const struct model_usage *u)
{
	sum->input += u->input;
	sum->output += u->output;
	sum->cache_read += u->cache_read;
	sum->cache_write += u->cache_write;
}

/* loop_result_call - RESULT for a call; frees j. */
static void
loop_result_call(struct loop_job *j)
{
	struct msg *r = msg_new(MSG_RESULT);
	struct buf text = BUF_INIT;
	struct msg_val *data;

	loop_flush(j);
	msg_set_int(r, "job", (int64_t)j->id);
	model_reply_text(&j->st.reply, &text);
	msg_set_strn(r, "text", text.data, text.len);
	model_reply_usage(&j->st.reply.usage, r);
	data = msg_set_map(r, "data");
	model_reply_content(&j->st.reply, data);
	msg_val_set_str(
	    data, "stop", j->st.reply.stop ? j->st.reply.stop : "other");
	if (j->request_id[0] != '\0')
		msg_val_set_str(data, "request_id", j->request_id);
	if (j->st.reply.model.len > 0)
		msg_val_set_strn(data, "model", j->st.reply.model.data,
		    j->st.reply.model.len);
	if (j->retries_total > 0)
		msg_val_set_int(data, "retries", j->retries_total);
	buf_free(&text);
	worker_job_result(j->lp->w, &r);
	loop_free(j);
}

/* loop_next_try - a compaction's try ended well: another, or the line. */
static void
loop_next_try(struct loop_job *j)
{
	struct buf text = BUF_INIT, line = BUF_INIT, fu = BUF_INIT;
	struct msg *r;
	bool again;

	loop_usage_add(&j->sum, &j->st.reply.usage);
	model_reply_text(&j->st.reply, &text);
	again = tries_add(&j->tries, text.data, text.len, &fu);
	/* tries.max <= MODEL_TRIES_MAX: there is room for its follow-ups. */
	if (again && j->nfollow + 2 <= 2 * MODEL_TRIES_MAX) {
		/* The model's own line, then the follow-up, in the same
		 * conversation. */
		tries_line(text.data, text.len, &j->follow[j->nfollow]);
		j->follow[j->nfollow + 1] = fu;
		model_request_add(&j->req, true, j->follow[j->nfollow].data,
		    j->follow[j->nfollow].len);
		model_request_add(&j->req, false, fu.data, fu.len);
		j->nfollow += 2;
		buf_free(&text);
		j->retries = 0;
		loop_reset_stream(j);
		buf_reset(&j->body);
		loop_attempt(j);
		return;
	}
	buf_free(&fu);
	if (!tries_result(&j->tries, &line)) {
		buf_free(&text);
		loop_fail(j, "protocol", true,
		    "%s gave no line in %u tries (empty or thinking only)",
		    loop_name(j->lp), j->tries.done);
		return;
	}
	r = msg_new(MSG_RESULT);
	msg_set_int(r, "job", (int64_t)j->id);
	msg_set_strn(r, "text", line.data, line.len);
	msg_set_int(r, "tries", j->tries.done);
	model_reply_usage(&j->sum, r);
	if (j->request_id[0] != '\0' || j->retries_total > 0) {
		struct msg_val *data = msg_set_map(r, "data");

		if (j->request_id[0] != '\0')
			msg_val_set_str(data, "request_id", j->request_id);
		if (j->retries_total > 0)
			msg_val_set_int(data, "retries", j->retries_total);
	}
	buf_free(&text);
	buf_free(&line);
	worker_job_result(j->lp->w, &r);
	loop_free(j);
}

/*
 * loop_trouble - a failed attempt: retry after a backoff when it may be
 * retried (retryable, no event yet, retries left, time left), else FAIL
 * code with why.  brief names the failure in the retry notice ("429",
 * "timeout"); after_ms: the wait the response asked for, or -1.
 */
static void
loop_trouble(struct loop_job *j, const char *code, const char *brief,
    bool retryable, long after_ms, const char *why)
{
	struct loop *lp = j->lp;
	uint64_t now = mono_ms();
	char note[256];
	long wait;

	if (!retryable || j->event || j->delivered ||
	    j->retries >= lp->o.max_retries) {
		if (retryable && j->retries > 0)
			loop_fail(j, code, true, "%s (after %u retries)", why,
			    j->retries);
		else
			loop_fail(j, code, retryable, "%s", why);
		return;
	}
	wait = after_ms >= 0 ? after_ms
			     : retry_backoff_ms(j->retries, loop_rand(lp));
	if (now + (uint64_t)wait >= j->deadline) {
		loop_fail(j, code, true,
		    "%s; no time left to retry before the job's deadline", why);
		return;
	}
	j->retries++;
	j->retries_total++;
	j->wake_at = now + (uint64_t)wait;
	snprintf(note, sizeof(note),
	    "%.32s from %.64s, retry %u of %u in %.1f s", brief, loop_name(lp),
	    j->retries, lp->o.max_retries, (double)wait / 1000.0);
	log_info("job %llu: %s: %s", (unsigned long long)j->id, why, note);
	worker_job_chunk(lp->w, j->id, "retry", note, strlen(note));
	loop_reset_stream(j);
}

/* loop_keep_request_id - remember the call's request id. */
static void
loop_keep_request_id(struct loop_job *j, struct http_call *c)
{
	const char *id = http_header(c, HTTP_H_REQUEST_ID);

	if (id == NULL)
		id = http_header(c, HTTP_H_X_REQUEST_ID);
	if (id != NULL)
		snprintf(j->request_id, sizeof(j->request_id), "%s", id);
}

/* loop_hook_fail - the body hook stops the call, saying why. */
static int __attribute__((format(printf, 4, 5))) loop_hook_fail(
    struct loop_job *j, const char *code, bool retry, const char *fmt, ...)
{
	va_list ap;

	snprintf(j->hook_code, sizeof(j->hook_code), "%s", code);
	va_start(ap, fmt);
	vsnprintf(j->hook_why, sizeof(j->hook_why), fmt, ap);
	va_end(ap);
	j->hook_retry = retry;
	return -1;
}

/* loop_sse_event - one server-sent event: to the wire's decoder. */
static int
loop_sse_event(void *arg, const char *name, const char *data, size_t len)
{
	struct loop_job *j = arg;

	if (!j->event) {
		j->event = true;
		worker_job_chunk(j->lp->w, j->id, "start", "", 0);
	}
	return j->lp->o.wire->event(&j->st, name, data, len);
}

/* loop_body - the http body hook: events, or an error body. */
static int
loop_body(void *arg, struct http_call *c, const char *p, size_t n)
{
	struct loop_job *j = arg;
	long status = http_status(c);
	const char *ct;
	struct buf ex = BUF_INIT;
	int rc;

	if (status < 200 || status > 299) {
		if (j->errbody.len < MODEL_ERROR_BODY_MAX)
			buf_add(&j->errbody, p,
			    n < MODEL_ERROR_BODY_MAX - j->errbody.len
				? n
				: MODEL_ERROR_BODY_MAX - j->errbody.len);
		return 0;
	}
	/* The body's first bytes, to show when it holds no event. */
	if (j->errbody.len < 200)
		buf_add(&j->errbody, p,
		    n < 200 - j->errbody.len ? n : 200 - j->errbody.len);
	if (!j->checked) {
		j->checked = true;
		ct = http_header(c, HTTP_H_CONTENT_TYPE);
		if (ct == NULL ||
		    strncasecmp(ct, "text/event-stream", 17) != 0) {
			wire_excerpt(p, n, &ex);
			rc = loop_hook_fail(j, "protocol", false,
			    "%s answered %ld with %s%s, not an event stream: "
			    "%s",
			    loop_name(j->lp), status,
			    ct ? "content-type " : "no content-type",
			    ct ? ct : "", ex.data ? ex.data : "");
			buf_free(&ex);
			return rc;
		}
	}
	if ((rc = sse_feed(&j->sse, p, n)) == 0)
		return 0;
	if (rc == -SHIRO_ERR_TOOBIG)
		return loop_hook_fail(j, "protocol", false,
		    "an event or line of more than %llu bytes",
		    (unsigned long long)j->lp->o.max_bytes);
	return loop_hook_fail(j, "protocol", j->st.retry, "%s", j->st.why);
}

/* loop_http_error - a complete non-2xx response. */
static void
loop_http_error(struct loop_job *j, struct http_call *c)
{
	struct loop *lp = j->lp;
	long status = http_status(c);
	struct buf text = BUF_INIT;
	char why[900], brief[16];
	size_t keylen;
	bool retryable;
	long after;

	lp->o.wire->error_text(
	    j->errbody.data ? j->errbody.data : "", j->errbody.len, &text);
	retryable = retry_status(
	    status, retry_should(http_header(c, HTTP_H_SHOULD_RETRY)));
	after = retry_after_ms(http_header(c, HTTP_H_RETRY_AFTER_MS),
	    http_header(c, HTTP_H_RETRY_AFTER), time(NULL));
	snprintf(why, sizeof(why), "%ld from %s: %s", status, loop_name(lp),
	    text.data ? text.data : "");
	snprintf(brief, sizeof(brief), "%ld", status);
	buf_free(&text);
	if ((status == 401 || status == 403) &&
	    worker_secret(lp->w, &keylen) == NULL) {
		loop_fail(j, "nokey", false, "%s needs a key and none came: %s",
		    loop_name(lp), why);
		return;
	}
	loop_trouble(j, "http", brief, retryable, after, why);
}

/* loop_done - the http done hook: what the call's end means. */
static void
loop_done(void *arg, struct http_call *c, enum http_end end, const char *text)
{
	struct loop_job *j = arg;
	struct loop *lp = j->lp;
	long status = http_status(c);
	char why[900];
	int rc;

	j->call = NULL; /* http frees c when we return */
	loop_keep_request_id(j, c);
	switch (end) {
	case HTTP_END_HOOK:
		loop_trouble(j, j->hook_code, j->hook_code, j->hook_retry, -1,
		    j->hook_why);
		return;
	case HTTP_END_CAPPED:
		loop_fail(j, "protocol", false,
		    "the response from %s passed the cap of %llu bytes",
		    loop_name(lp), (unsigned long long)lp->o.max_bytes);
		return;
	case HTTP_END_CONNECT:
		snprintf(why, sizeof(why), "cannot reach %s at %s: %s",
		    loop_name(lp), lp->host, text);
		loop_trouble(j, "unreachable", "unreachable", true, -1, why);
		return;
	case HTTP_END_CONNECT_TIMEOUT:
		snprintf(why, sizeof(why),
		    "connect: no connection to %s within %ld ms", lp->host,
		    lp->o.connect_ms);
		loop_trouble(j, "timeout", "timeout", true, -1, why);
		return;
	case HTTP_END_CUT:
		if (status >= 200 && status <= 299) {
			snprintf(why, sizeof(why),
			    "the stream from %s was cut after %zu events: %s",
			    loop_name(lp), j->st.events, text);
			loop_trouble(
			    j, "protocol", "a cut stream", true, -1, why);
			return;
		}
		if (status != 0) {
			loop_http_error(j, c);
			return;
		}
		snprintf(why, sizeof(why), "%s at %s broke the connection: %s",
		    loop_name(lp), lp->host, text);
		loop_trouble(j, "unreachable", "unreachable", true, -1, why);
		return;
	case HTTP_END_OTHER:
		loop_fail(j, "unreachable", false, "calling %s at %s: %s",
		    loop_name(lp), lp->url, text);
		return;
	case HTTP_END_OK:
		break;
	}
	if (status < 200 || status > 299) {
		loop_http_error(j, c);
		return;
	}
	if (!j->checked) {
		loop_trouble(j, "protocol", "an empty body", true, -1,
		    "an empty response body (no events)");
		return;
	}
	if ((rc = lp->o.wire->finish(&j->st)) < 0 || sse_pending(&j->sse)) {
		struct buf ex = BUF_INIT;

		if (rc == 0)
			model_stream_fail(
			    &j->st, true, "the stream ended inside an event");
		buf_adds(&ex, j->st.why);
		if (j->st.events == 0) {
			buf_adds(&ex, "; the body began: ");
			wire_excerpt(j->errbody.data, j->errbody.len, &ex);
		}
		loop_trouble(
		    j, "protocol", "a bad stream", j->st.retry, -1, ex.data);
		buf_free(&ex);
		return;
	}
	if (j->compact)
		loop_next_try(j);
	else
		loop_result_call(j);
}

static const struct http_hooks loop_http_hooks = {
    .body = loop_body,
    .done = loop_done,
};

/* loop_key_ok - whether the key can go in a header as it is. */
static bool
loop_key_ok(const unsigned char *key, size_t len)
{
	size_t k;

	for (k = 0; k < len; k++)
		if (key[k] <= 0x20 || key[k] >= 0x7f)
			return false;
	return len > 0;
}

/*
 * loop_attempt - start this try's call (building its body first if
 * needed).  Fails the job when it cannot start.
 */
static void
loop_attempt(struct loop_job *j)
{
	struct loop *lp = j->lp;
	const struct model_wire *wire = lp->o.wire;
	const char *headers[16];
	struct http_opts ho;
	struct buf auth = BUF_INIT;
	const unsigned char *key;
	char why[512];
	size_t keylen, n = 0, k;
	int rc;

	j->wake_at = 0;
	if (j->body.len == 0 &&
	    wire->build(&j->req, &j->body, why, sizeof(why)) < 0) {
		loop_fail(j, "badjob", false, "%s", why);
		return;
	}
	key = worker_secret(lp->w, &keylen);
	if (key == NULL && lp->o.base_url == NULL) {
		loop_fail(j, "nokey", false,
		    "%s needs a key at %s and none came", loop_name(lp),
		    wire->base);
		return;
	}
	if (key != NULL && !loop_key_ok(key, keylen)) {
		loop_fail(j, "nokey", false,
		    "the key for %s holds bytes a header cannot carry",
		    loop_name(lp));
		return;
	}
	headers[n++] = "content-type: application/json";
	headers[n++] = "accept: text/event-stream";
	for (k = 0; wire->headers[k] != NULL && n < 12; k++)
		headers[n++] = wire->headers[k];
	if (key != NULL) {
		buf_printf(&auth, "%s: %s", wire->auth, wire->auth_prefix);
		buf_add(&auth, key, keylen);
		headers[n++] = auth.data;
	}
	headers[n] = NULL;
	loop_reset_stream(j);
	model_stream_init(&j->st, wire->name, loop_delta, j);
	sse_init(&j->sse, (size_t)lp->o.max_bytes, loop_sse_event, j);
	j->sse_on = true;
	buf_reset(&j->errbody);
	j->checked = j->event = false;
	j->hook_code[0] = j->hook_why[0] = '\0';
	memset(&ho, 0, sizeof(ho));
	ho.url = lp->url;
	ho.headers = headers;
	ho.body = j->body.data;
	ho.body_len = j->body.len;
	ho.connect_ms = lp->o.connect_ms;
	ho.max_bytes = lp->o.max_bytes;
	rc = http_start(lp->http, &ho, &loop_http_hooks, j, &j->call);
	if (auth.data != NULL)
		explicit_bzero(auth.data, auth.len);
	buf_free(&auth);
	if (rc < 0)
		loop_fail(j, "internal", false, "the call could not start");
}

/* loop_offline - a compaction by the built-in summarizer: answered now. */
static void
loop_offline(struct loop *lp, struct msg *m, uint64_t id)
{
	struct model_compact job;
	struct buf out = BUF_INIT;
	struct msg *r;

	if (model_compact_read(m, &job) < 0) {
		worker_job_fail(lp->w, id, "badjob", false,
		    "compact: l, i, limit or inputs missing or wrong");
		msg_destroy(&m);
		return;
	}
	offline_summarize(job.inputs, job.ninputs, job.limit, &out);
	r = msg_new(MSG_RESULT);
	msg_set_int(r, "job", (int64_t)id);
	msg_set_strn(r, "text", out.data, out.len);
	msg_set_int(r, "tries", 0);
	buf_free(&out);
	msg_destroy(&m);
	worker_job_result(lp->w, &r);
}

/* loop_job - the skeleton's job hook: start job m. */
static void
loop_job(struct worker *w, struct msg *m)
{
	struct loop *lp = worker_data(w);
	const struct msg_val *data = NULL, *request;
	struct loop_job *j;
	const char *kind;
	uint64_t id = 0, dl = 0, tries = MODEL_TRIES_MAX,
		 limit = MODEL_NODE_MAX;
	char why[512];

	msg_get_uint(m, "job", &id);
	msg_get_str(m, "kind", &kind, NULL);
	msg_get_map(m, "data", &data);
	request = data ? msg_val_get(data, "request") : NULL;
	if (strcmp(kind, "compact") == 0 && (lp->o.wire == NULL)) {
		loop_offline(lp, m, id);
		return;
	}
	if (strcmp(kind, "compact") != 0 && strcmp(kind, "call") != 0) {
		worker_job_fail(w, id, "badjob", false,
		    "a model worker does no %.32s jobs", kind);
		msg_destroy(&m);
		return;
	}
	if (lp->o.wire == NULL) {
		worker_job_fail(w, id, "badjob", false,
		    "the offline provider answers no calls");
		msg_destroy(&m);
		return;
	}
	j = xcalloc(1, sizeof(*j));
	j->lp = lp;
	j->id = id;
	j->m = m;
	j->compact = strcmp(kind, "compact") == 0;
	j->started = mono_ms();
	j->deadline = j->started + (uint64_t)lp->o.total_ms;
	if (msg_get_uint(m, "deadline_ms", &dl) == 0 && dl > 0 &&
	    j->started + dl < j->deadline)
		j->deadline = j->started + dl;
	j->next = lp->jobs;
	lp->jobs = j;
	if (request == NULL) {
		loop_fail(j, "badjob", false, "%s: data.request missing", kind);
		return;
	}
	if (model_request_read(request, &j->req, why, sizeof(why)) < 0) {
		loop_fail(j, "badjob", false, "%s: %s", kind, why);
		return;
	}
	if (j->compact) {
		msg_get_uint(m, "limit", &limit);
		if (data != NULL && msg_val_get(data, "tries") != NULL) {
			int64_t t;

			if (msg_val_int(data, "tries", &t) < 0 || t < 1) {
				loop_fail(j, "badjob", false,
				    "compact: data.tries must be 1 or more");
				return;
			}
			tries = (uint64_t)t;
		}
		if (tries > MODEL_TRIES_MAX)
			tries = MODEL_TRIES_MAX;
		if (limit < 16 || limit > MODEL_NODE_MAX) {
			loop_fail(j, "badjob", false,
			    "compact: limit must be 16 to %d", MODEL_NODE_MAX);
			return;
		}
		tries_init(&j->tries, (size_t)limit, (unsigned)tries);
	}
	loop_attempt(j);
}

/* loop_cancel - the skeleton's cancel hook: forget job now. */
static void
loop_cancel(struct worker *w, uint64_t id)
{
	struct loop *lp = worker_data(w);
	struct loop_job *j = loop_find(lp, id);

	if (j != NULL) {
		log_info("job %llu canceled", (unsigned long long)id);
		loop_free(j);
	}
}

/* loop_due - the earliest deadline of j (idle, total, backoff). */
static uint64_t
loop_due(const struct loop_job *j)
{
	uint64_t due = j->deadline, idle;

	if (j->call != NULL) {
		idle = http_last_byte(j->call) + (uint64_t)j->lp->o.idle_ms;
		if (idle < due)
			due = idle;
	}
	if (j->wake_at != 0 && j->wake_at < due)
		due = j->wake_at;
	return due;
}

/* loop_poll - the skeleton's poll hook: curl's sockets, our timers. */
static int
loop_poll(struct worker *w, struct zsock_poll *items, int max, long *timeout_ms)
{
	struct loop *lp = worker_data(w);
	struct loop_job *j;
	uint64_t now = mono_ms(), due;
	long ms = -1;
	int n = 0;

	if (lp->http != NULL)
		n = http_items(lp->http, items, max, &ms);
	for (j = lp->jobs; j != NULL; j = j->next) {
		due = loop_due(j);
		due = due > now ? due - now : 0;
		if (ms < 0 || (long)due < ms)
			ms = (long)due;
	}
	*timeout_ms = ms;
	return n;
}

/* loop_timers - act on the deadlines and backoffs that are due. */
static void
loop_timers(struct loop *lp)
{
	struct loop_job *j, *next;
	uint64_t now = mono_ms();
	char why[256];

	for (j = lp->jobs; j != NULL; j = next) {
		next = j->next;
		if (j->call != NULL)
			loop_keep_request_id(j, j->call);
		if (now >= j->deadline) {
			http_abort(&j->call);
			loop_fail(j, "timeout", true,
			    "total: the job passed its deadline of %llu ms",
			    (unsigned long long)(j->deadline - j->started));
			continue;
		}
		if (j->call != NULL &&
		    now >= http_last_byte(j->call) + (uint64_t)lp->o.idle_ms) {
			http_abort(&j->call);
			snprintf(why, sizeof(why),
			    "idle: no byte from %s for %ld ms%s", loop_name(lp),
			    lp->o.idle_ms,
			    j->event ? " in the middle of the stream" : "");
			loop_trouble(j, "timeout", "timeout", true, -1, why);
			continue;
		}
		if (j->wake_at != 0 && now >= j->wake_at)
			loop_attempt(j);
	}
}

/* loop_ready - the skeleton's ready hook: curl, then our timers. */
static void
loop_ready(struct worker *w, struct zsock_poll *items, int n)
{
	struct loop *lp = worker_data(w);
	struct loop_job *j;

	if (lp->http != NULL)
		http_ready(lp->http, items, n);
	loop_timers(lp);
	for (j = lp->jobs; j != NULL; j = j->next)
		loop_flush(j);
}

const struct worker_async loop_async = {
    .job = loop_job,
    .cancel = loop_cancel,
    .poll = loop_poll,
    .ready = loop_ready,
};
