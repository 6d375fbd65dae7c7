/*
 * model_util.h - a model worker against the mock provider, with the test
 * (or bench) playing shirod: start both, send JOBs built from JSON, and
 * collect what the worker streams and answers.
 */
#ifndef SHIRO_MODEL_UTIL_H
#define SHIRO_MODEL_UTIL_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "proto/buf.h"
#include "proto/msg.h"
#include "tests/mock_util.h"
#include "tests/worker_util.h"

#define MW_KEY "sk-test-mock-0123456789"
#define MW_PROVIDER "mockprov"

/* A model worker and its mock. */
struct mw {
	struct tw t;
	struct mock mk;
	const char *wire;
	struct msg *stash[64]; /* other jobs' messages, for a later wait */
	size_t nstash;
};

/*
 * mw_start - the mock with script, then a model worker for wire pointed
 * at it (the base URL with /v1 for the OpenAI wires), READY read, and
 * key (if not NULL) sent as SECRET.  extra: more worker arguments.
 */
void mw_start(struct mw *x, const char *wire, const char *script,
    const char *key, const char *const *extra);

/*
 * mw_worker - only the worker part of mw_start: a model worker for
 * x->wire (set by the caller, with x zeroed and x->mk started) at base.
 */
void mw_worker(
    struct mw *x, const char *base, const char *key, const char *const *extra);

/* mw_stop - stop the worker and the mock. */
void mw_stop(struct mw *x);

/*
 * mw_val - the JSON value j into the map m as key (mock_json form is not
 * applied): strings STR (but a key "data" becomes BIN), integers INT,
 * booleans BOOL, arrays ARR, objects MAP.
 */
void mw_val(struct msg_val *m, const char *key, const json_t *j);

/*
 * mw_call - a JOB {job, kind "call", data {request}} with the request in
 * mock_json form.
 */
struct msg *mw_call(uint64_t id, const char *request);

/*
 * mw_compact - a JOB {job, kind "compact", l 0, i id, limit, inputs (one
 * message), data {request, tries}} with the request in mock_json form.
 */
struct msg *mw_compact(
    uint64_t id, const char *request, unsigned tries, unsigned limit);

/* What a job streamed before its answer. */
struct mw_out {
	struct buf text, thinking; /* CHUNKs' text, by part */
	unsigned starts, retries; /* CHUNKs "start" and "retry" */
	char retry_note[256]; /* the last "retry" text */
	unsigned beats; /* HEARTBEATs naming the job */
	uint64_t first_start_ms; /* when the first "start" came (mono_ms) */
};

/*
 * mw_wait - read until the RESULT or FAIL of job id (within ms), filling
 * out (may be NULL); returns that message (caller destroys it).  Other
 * jobs' messages are kept for their own mw_wait (up to 64).
 */
struct msg *mw_wait(struct mw *x, uint64_t id, struct mw_out *out, long ms);

/* mw_out_free - free what out holds. */
void mw_out_free(struct mw_out *out);

/* mw_fail_code - the code of a FAIL (test fails on a RESULT). */
const char *mw_fail_code(const struct msg *m);

/* mw_text - the text key of a RESULT or FAIL ("" if none). */
const char *mw_text(const struct msg *m);

/* mw_file_has - whether the file at path holds needle. */
bool mw_file_has(const char *path, const char *needle);

#endif
