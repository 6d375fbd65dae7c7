/*
 * model.h - the model worker: its providers and the jobs they do.
 *
 * One model worker serves one provider, chosen with --provider.  A
 * provider is a row of model_providers[] (model.c): `offline`, the
 * built-in extractive summarizer, now; the HTTP providers (Anthropic
 * Messages, OpenAI Chat Completions and compatible servers) over libcurl
 * come as further rows, each in its own file.
 */
#ifndef SHIRO_MODEL_H
#define SHIRO_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/buf.h"
#include "proto/msg.h"
#include "workers/worker.h"

#define MODEL_NODE_MAX 512 /* bytes of a tree node's line */
#define MODEL_INPUTS_MAX 2 /* a message, or the two halves of a merge */

/* One source of a node: a message (kind set) or a child's line. */
struct model_input {
	uint64_t id, n;
	const char *kind; /* the message's kind; NULL for a child line */
	const char *text; /* borrowed from the JOB */
	size_t len;
};

/* A compaction job, read from JOB (docs/protocol.md). */
struct model_compact {
	uint64_t job, l, i;
	size_t limit; /* bytes of the line, at most */
	const struct msg_val *context; /* ARR of STR lines, or NULL */
	struct model_input inputs[MODEL_INPUTS_MAX];
	size_t ninputs;
};

/* A provider: what the worker calls for each kind of job. */
struct model_provider {
	const char *name;
	bool needs_secret; /* refuses to start without an API key */
	/*
	 * compact - write the node's line (1 to job->limit bytes of UTF-8,
	 * no newline) into out and the number of model calls into *triesp;
	 * 0, or a negative SHIRO_ERR_* after worker_failure().  A provider
	 * that waits on the network calls worker_poll() while it waits.
	 */
	int (*compact)(struct worker *w, const struct model_compact *job,
	    struct buf *out, unsigned *triesp);
};

/* model_compact_read - a compaction job from JOB m, checked. */
int model_compact_read(const struct msg *m, struct model_compact *job);

#endif
