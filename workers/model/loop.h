/*
 * loop.h - the model worker's event loop: its jobs on the skeleton's
 * asynchronous hooks (workers/worker.h), its calls over http.c.
 *
 * Each job runs as a little state machine: build the body, start a call,
 * decode the stream (sse.c and the wire), stream CHUNKs, and end in
 * RESULT or FAIL; a retryable failure before the first event waits its
 * backoff (retry.c) and calls again; a compaction's over-long line gets a
 * follow-up call (tries.c).  Deadlines: connect, idle (no byte for
 * idle_ms), and the job's total (total_ms, or its deadline_ms if
 * shorter).  docs/providers.md has the whole behaviour.
 */
#ifndef SHIRO_LOOP_H
#define SHIRO_LOOP_H

#include <stdbool.h>
#include <stdint.h>

#include "workers/model/model.h"
#include "workers/worker.h"

/* The model worker's settings, from its command line. */
struct model_opts {
	const struct model_wire *wire; /* NULL: offline */
	const char *wire_name;
	const char *base_url; /* NULL: the wire's default */
	unsigned jobs; /* calls at once */
	long connect_ms; /* connect deadline */
	long idle_ms; /* no byte for this long fails the call */
	long total_ms; /* a job's total deadline */
	unsigned max_retries;
	uint64_t max_bytes; /* cap on one response */
};

#define MODEL_JOBS_DEFAULT 4
#define MODEL_CONNECT_MS 5000 /* as the official SDKs */
#define MODEL_IDLE_MS 90000
#define MODEL_TOTAL_MS 600000 /* 10 minutes (D9) */
#define MODEL_MAX_BYTES (8u << 20)
#define MODEL_ERROR_BODY_MAX (64u << 10) /* bytes of an error body read */

struct loop;

/* loop_new - the loop for w with o (copied); 0 or -SHIRO_ERR_FAILED. */
int loop_new(struct worker *w, const struct model_opts *o, struct loop **lpp);

/* The hooks worker_main() runs the loop through. */
extern const struct worker_async loop_async;

#endif
