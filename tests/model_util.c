/*
 * model_util.c - a model worker against the mock (model_util.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/mono.h"
#include "proto/xmalloc.h"
#include "tests/harness.h"
#include "tests/model_util.h"

/* mw_worker - a model worker for x->wire at base, READY read, key sent. */
void
mw_worker(
    struct mw *x, const char *base, const char *key, const char *const *extra)
{
	const char *argv[48];
	struct msg *m;
	int n = 0, k;

	argv[n++] = "--provider";
	argv[n++] = MW_PROVIDER;
	argv[n++] = "--wire";
	argv[n++] = x->wire;
	argv[n++] = "--base-url";
	argv[n++] = base;
	for (k = 0; extra != NULL && extra[k] != NULL && n < 46; k++)
		argv[n++] = extra[k];
	argv[n] = NULL;
	snprintf(x->t.err_path, sizeof(x->t.err_path), "%s/worker.log",
	    harness_tmpdir());
	tw_start(&x->t, "../shiro-model-worker", 200, 10000, NULL, argv);
	tw_drop(tw_recv(&x->t, MSG_READY, 10000));
	if (key != NULL) {
		m = msg_new(MSG_SECRET);
		msg_set_str(m, "provider", MW_PROVIDER);
		msg_set_bin(m, "key", key, strlen(key));
		tw_send(&x->t, m);
	}
}

/* mw_start - the mock, then a model worker for wire against it. */
void
mw_start(struct mw *x, const char *wire, const char *script, const char *key,
    const char *const *extra)
{
	char base[96];

	memset(x, 0, sizeof(*x));
	x->wire = wire;
	mock_start(&x->mk, script);
	snprintf(base, sizeof(base), "%s%s", x->mk.base,
	    strncmp(wire, "openai", 6) == 0 ? "/v1" : "");
	mw_worker(x, base, key, extra);
}

/* mw_stop - stop the worker and the mock. */
void
mw_stop(struct mw *x)
{
	while (x->nstash > 0)
		msg_destroy(&x->stash[--x->nstash]);
	/* A clean exit: in sanitizer builds the leak check runs then. */
	if (x->t.pid > 0) {
		tw_send(&x->t, msg_new(MSG_SHUTDOWN));
		CHECK_EQ_INT(tw_exit(&x->t, 10000), 0);
	}
	tw_stop(&x->t);
	mock_stop(&x->mk);
}

/* mw_add - the JSON value j appended to the array a. */
static void
mw_add(struct msg_val *a, const json_t *j)
{
	const char *k;
	json_t *v;
	size_t i;

	switch (json_typeof(j)) {
	case JSON_STRING:
		msg_val_add_strn(
		    a, json_string_value(j), json_string_length(j));
		break;
	case JSON_INTEGER:
		msg_val_add_int(a, json_integer_value(j));
		break;
	case JSON_TRUE:
	case JSON_FALSE:
		msg_val_add_bool(a, json_is_true(j));
		break;
	case JSON_ARRAY: {
		struct msg_val *sub = msg_val_add_arr(a);

		json_array_foreach(j, i, v) mw_add(sub, v);
		break;
	}
	case JSON_OBJECT: {
		struct msg_val *sub = msg_val_add_map(a);

		json_object_foreach((json_t *)j, k, v) mw_val(sub, k, v);
		break;
	}
	default:
		harness_fail(__FILE__, __LINE__, "no msg value for this JSON");
	}
}

/* mw_val - the JSON value j into map m as key. */
void
mw_val(struct msg_val *m, const char *key, const json_t *j)
{
	const char *k;
	json_t *v;
	size_t i;

	switch (json_typeof(j)) {
	case JSON_STRING:
		if (strcmp(key, "data") == 0)
			msg_val_set_bin(m, key, json_string_value(j),
			    json_string_length(j));
		else
			msg_val_set_strn(m, key, json_string_value(j),
			    json_string_length(j));
		break;
	case JSON_INTEGER:
		msg_val_set_int(m, key, json_integer_value(j));
		break;
	case JSON_TRUE:
	case JSON_FALSE:
		msg_val_set_bool(m, key, json_is_true(j));
		break;
	case JSON_ARRAY: {
		struct msg_val *sub = msg_val_set_arr(m, key);

		json_array_foreach(j, i, v) mw_add(sub, v);
		break;
	}
	case JSON_OBJECT: {
		struct msg_val *sub = msg_val_set_map(m, key);

		json_object_foreach((json_t *)j, k, v) mw_val(sub, k, v);
		break;
	}
	default:
		harness_fail(__FILE__, __LINE__, "no msg value for this JSON");
	}
}

/* mw_parse - mock_json text parsed. */
static json_t *
mw_parse(const char *text)
{
	char *s = mock_json(text);
	json_error_t err;
	json_t *j = json_loads(s, 0, &err);

	CHECKF(j != NULL, "bad test JSON: %s: %s", err.text, s);
	free(s);
	return j;
}

/* mw_call - a call JOB with request. */
struct msg *
mw_call(uint64_t id, const char *request)
{
	struct msg *m = msg_new(MSG_JOB);
	json_t *r = mw_parse(request);

	msg_set_int(m, "job", (int64_t)id);
	msg_set_str(m, "kind", "call");
	msg_set_int(m, "deadline_ms", 600000);
	mw_val(msg_set_map(m, "data"), "request", r);
	json_decref(r);
	return m;
}

/* mw_compact - a compact JOB with request. */
struct msg *
mw_compact(uint64_t id, const char *request, unsigned tries, unsigned limit)
{
	struct msg *m = msg_new(MSG_JOB);
	struct msg_val *in, *data;
	json_t *r = mw_parse(request);

	msg_set_int(m, "job", (int64_t)id);
	msg_set_str(m, "kind", "compact");
	msg_set_int(m, "l", 0);
	msg_set_int(m, "i", (int64_t)id);
	msg_set_int(m, "limit", limit);
	msg_set_int(m, "deadline_ms", 600000);
	in = msg_val_add_map(msg_set_arr(m, "inputs"));
	msg_val_set_int(in, "id", (int64_t)id);
	msg_val_set_int(in, "n", 1);
	msg_val_set_str(in, "kind", "user");
	msg_val_set_str(in, "text", "the message to compress");
	data = msg_set_map(m, "data");
	mw_val(data, "request", r);
	msg_val_set_int(data, "tries", tries);
	json_decref(r);
	return m;
}

/* mw_job_of - the job a message is about, or 0 (READY, BYE...). */
static uint64_t
mw_job_of(const struct msg *m)
{
	enum msg_type t = msg_type(m);
	uint64_t job = 0;

	if (t == MSG_CHUNK || t == MSG_RESULT || t == MSG_FAIL ||
	    t == MSG_HEARTBEAT)
		msg_get_uint(m, "job", &job);
	return job;
}

/* mw_unstash - the first kept message of job id, or NULL. */
static struct msg *
mw_unstash(struct mw *x, uint64_t id)
{
	struct msg *m;
	size_t k;

	for (k = 0; k < x->nstash; k++) {
		if (mw_job_of(x->stash[k]) != id)
			continue;
		m = x->stash[k];
		memmove(&x->stash[k], &x->stash[k + 1],
		    (x->nstash - k - 1) * sizeof(*x->stash));
		x->nstash--;
		return m;
	}
	return NULL;
}

/* mw_wait - read until job id's RESULT or FAIL. */
struct msg *
mw_wait(struct mw *x, uint64_t id, struct mw_out *out, long ms)
{
	uint64_t end = mono_ms() + (uint64_t)ms, job, beat = 0;
	const char *s, *part;
	size_t len;
	struct msg *m;

	for (;;) {
		enum msg_type t;

		/* Play shirod's side of the heartbeats meanwhile. */
		if (mono_ms() >= beat + 100) {
			tw_send(&x->t, msg_new(MSG_HEARTBEAT));
			beat = mono_ms();
		}
		if ((m = mw_unstash(x, id)) == NULL) {
			if (mono_ms() >= end)
				break;
			if (!tw_next(&x->t, 100, &m))
				continue;
		}
		t = msg_type(m);
		job = mw_job_of(m);
		if (job != id) {
			if (job != 0 && t != MSG_HEARTBEAT &&
			    x->nstash < sizeof(x->stash) / sizeof(x->stash[0]))
				x->stash[x->nstash++] = m;
			else
				msg_destroy(&m);
			continue;
		}
		if (t == MSG_RESULT || t == MSG_FAIL)
			return m;
		if (out != NULL && t == MSG_HEARTBEAT)
			out->beats++;
		if (out != NULL && t == MSG_CHUNK) {
			msg_get_str(m, "text", &s, &len);
			if (msg_get_str(m, "part", &part, NULL) < 0)
				part = "text";
			if (strcmp(part, "text") == 0)
				buf_add(&out->text, s, len);
			else if (strcmp(part, "thinking") == 0)
				buf_add(&out->thinking, s, len);
			else if (strcmp(part, "start") == 0) {
				if (out->starts++ == 0)
					out->first_start_ms = mono_ms();
			} else if (strcmp(part, "retry") == 0) {
				out->retries++;
				snprintf(out->retry_note,
				    sizeof(out->retry_note), "%s", s);
			}
		}
		msg_destroy(&m);
	}
	harness_fail(__FILE__, __LINE__,
	    "no RESULT or FAIL for job %llu within %ld ms",
	    (unsigned long long)id, ms);
}

/* mw_out_free - free what out holds. */
void
mw_out_free(struct mw_out *out)
{
	buf_free(&out->text);
	buf_free(&out->thinking);
}

/* mw_fail_code - the code of a FAIL. */
const char *
mw_fail_code(const struct msg *m)
{
	const char *s;

	CHECKF(msg_type(m) == MSG_FAIL, "a RESULT (%s) where a FAIL was due",
	    mw_text(m));
	CHECK(msg_get_str(m, "code", &s, NULL) == 0);
	return s;
}

/* mw_text - the text key of a RESULT or FAIL. */
const char *
mw_text(const struct msg *m)
{
	const char *s;

	return msg_get_str(m, "text", &s, NULL) == 0 ? s : "";
}

/* mw_file_has - whether the file at path holds needle. */
bool
mw_file_has(const char *path, const char *needle)
{
	FILE *fp = fopen(path, "r");
	char *data = NULL;
	size_t cap = 0;
	ssize_t n;
	bool found = false;

	if (fp == NULL)
		return false;
	n = getdelim(&data, &cap, '\0', fp);
	if (n > 0)
		found = memmem(data, (size_t)n, needle, strlen(needle)) != NULL;
	free(data);
	fclose(fp);
	return found;
}
