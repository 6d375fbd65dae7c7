/*
 * model.h - the model worker: its wires, the jobs they do, and the types
 * every part of it shares.
 *
 * One model worker serves one provider (--provider, a label) over one
 * wire format (--wire): `offline`, the built-in extractive summarizer, or
 * `anthropic`, `openai-responses`, `openai-chat` over libcurl.  Only this
 * directory includes curl.h, and only http.c and probe.c do.
 *
 * A job is a JOB message (docs/protocol.md): kind `compact` builds a tree
 * node's line, kind `call` makes one model call of a turn.  Its `data`
 * carries a provider-neutral request (struct model_request, read by
 * request.c); a wire turns it into its JSON body and decodes the
 * provider's event stream into a struct model_reply (reply.c).  The loop
 * (loop.c) runs the calls, their retries and deadlines, and the
 * compaction's tries (tries.c).  docs/providers.md describes the whole.
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
#define MODEL_TRIES_MAX 5 /* tries of one compaction, at most */

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

/* model_compact_read - a compaction job from JOB m, checked. */
int model_compact_read(const struct msg *m, struct model_compact *job);

/* The kinds of part of a request's or a reply's message. */
enum model_ptype {
	MODEL_P_TEXT,
	MODEL_P_IMAGE,
	MODEL_P_THINKING,
	MODEL_P_TOOL_USE,
	MODEL_P_TOOL_RESULT
};

/*
 * A part of a request's message.  Strings are borrowed (from the JOB, or
 * from the loop's follow-ups) and NUL-terminated; NULL when absent.
 */
struct model_part {
	enum model_ptype type;
	const char *text; /* text, thinking, tool_result */
	size_t len;
	const char *signature; /* thinking: its signature or encrypted data */
	const char *id; /* thinking: its item id; tool_use, tool_result */
	const char *name; /* tool_use */
	const char *input; /* tool_use: the input as JSON text */
	const char *media; /* image: "image/png" ... */
	const void *data; /* image bytes */
	size_t data_len;
	const char *wire; /* thinking: the wire it came from */
	bool cache; /* text: a cache mark at its end */
	bool error; /* tool_result: the tool failed */
};

/* A message of the conversation. */
struct model_message {
	bool assistant; /* role "assistant", else "user" */
	struct model_part *parts; /* owned array */
	size_t nparts;
};

/* A tool the model may call. */
struct model_tool {
	const char *name, *description;
	const char *schema; /* its JSON Schema as JSON text */
};

/*
 * The provider-neutral request of a call or a compaction
 * (docs/providers.md, "The request").  The arrays are owned (freed by
 * model_request_free()); every string in them is borrowed.
 */
struct model_request {
	const char *model;
	uint64_t max_tokens;
	const char **system;
	size_t nsystem;
	struct model_tool *tools;
	size_t ntools;
	struct model_message *msgs;
	size_t nmsgs, cap;
	const char *cache_key; /* OpenAI's prompt_cache_key, or NULL */
	uint64_t thinking; /* a thinking budget in tokens; 0: off */
	bool cache_tools; /* a cache mark after the tools and system */
};

/*
 * model_request_read - the request map v into req (zeroed first); strings
 * stay in v.  0, or -SHIRO_ERR_PROTO with why filled.
 */
int model_request_read(const struct msg_val *v, struct model_request *req,
    char *why, size_t whylen);

/*
 * model_request_add - append a message of one text part (borrowing text,
 * which must outlive req) to req.
 */
void model_request_add(
    struct model_request *req, bool assistant, const char *text, size_t len);

/* model_request_free - free req's arrays (not the strings). */
void model_request_free(struct model_request *req);

/* Token counts of a call (or the sum over a compaction's tries). */
struct model_usage {
	uint64_t input; /* not read from the cache */
	uint64_t output;
	uint64_t cache_read;
	uint64_t cache_write;
};

/* A part of the reply, owned. */
struct model_rpart {
	enum model_ptype type; /* TEXT, THINKING or TOOL_USE */
	long key; /* the wire's number for it (block or output index) */
	struct buf text; /* text or thinking */
	struct buf signature; /* thinking */
	struct buf id; /* thinking item id, tool_use id */
	struct buf name; /* tool_use */
	struct buf input; /* tool_use: JSON text */
};

/* Caps on a reply's content (RESULT must stay within one message). */
#define MODEL_REPLY_TEXT_MAX MSG_MAX_TEXT /* bytes of text, all parts */
#define MODEL_REPLY_MAX (3u << 20) /* bytes of content of every kind */
#define MODEL_REPLY_PARTS 512 /* parts */

/* A reply as it streams in. */
struct model_reply {
	const char *wire; /* the wire's name, for thinking parts */
	struct model_rpart *parts;
	size_t nparts, cap;
	struct model_usage usage;
	const char *stop; /* "end", "tool_use", ...; NULL until known */
	struct buf model; /* as the provider reported it */
	size_t bytes, text_bytes; /* content so far, for the caps */
};

/* What a wire's decoder tells the loop as the stream goes. */
struct model_stream {
	struct model_reply reply;
	/* delta - a piece of text (thinking false) or thinking. */
	void (*delta)(void *arg, bool thinking, const char *s, size_t n);
	void *arg;
	bool done; /* the wire's last event came */
	size_t events; /* events decoded */
	char why[512]; /* why decoding failed */
	bool retry; /* whether such a failure may pass if tried again */
	long state; /* wire's own: e.g. the chat wire's [DONE] seen */
};

/* A wire format. */
struct model_wire {
	const char *name; /* "anthropic", "openai-responses", ... */
	const char *base; /* default base URL */
	const char *path; /* appended to the base URL */
	const char *probe; /* a path to GET for --probe */
	const char *auth; /* the auth header's name, e.g. "x-api-key" */
	const char *auth_prefix; /* before the key, e.g. "Bearer " */
	const char *const *headers; /* more headers, NULL-terminated */
	const char *request_id; /* the header of the provider's request id */
	/*
	 * build - req as this wire's JSON body into body (reset first).
	 * 0, or -SHIRO_ERR_PROTO with why filled (a bad schema, say).
	 */
	int (*build)(const struct model_request *req, struct buf *body,
	    char *why, size_t whylen);
	/*
	 * event - one server-sent event (its name, NULL-free data) into st:
	 * 0, or -SHIRO_ERR_PROTO with st->why and st->retry set.
	 */
	int (*event)(struct model_stream *st, const char *name,
	    const char *data, size_t len);
	/*
	 * finish - the stream ended: 0 when it was whole (st->done, the
	 * stop reason known), else -SHIRO_ERR_PROTO with st->why set.
	 */
	int (*finish)(struct model_stream *st);
	/* error_text - the provider's own message in an error body. */
	void (*error_text)(const char *body, size_t len, struct buf *out);
};

extern const struct model_wire model_wire_anthropic;
extern const struct model_wire model_wire_responses;
extern const struct model_wire model_wire_chat;

/* model_wire_of - the wire named name, or NULL (offline too is NULL). */
const struct model_wire *model_wire_of(const char *name);

/* reply.c: the reply being built. */
void model_reply_init(struct model_reply *r, const char *wire);
void model_reply_free(struct model_reply *r);
/*
 * model_reply_part - a new part of type with the wire's key (NULL when
 * the reply already has MODEL_REPLY_PARTS parts).
 */
struct model_rpart *model_reply_part(
    struct model_reply *r, enum model_ptype type, long key);
/* model_reply_find - the last part with key, or NULL. */
struct model_rpart *model_reply_find(struct model_reply *r, long key);
/*
 * model_reply_add - append n bytes to b, a buffer of one of r's parts
 * (text counts against the text cap when is_text): 0 or
 * -SHIRO_ERR_TOOBIG when a cap would be passed (nothing is added).
 */
int model_reply_add(struct model_reply *r, struct buf *b, bool is_text,
    const char *s, size_t n);
/* model_reply_text - every text part joined, into out (reset first). */
void model_reply_text(const struct model_reply *r, struct buf *out);
/* model_reply_usage - usage as RESULT's usage map of m. */
void model_reply_usage(const struct model_usage *u, struct msg *m);
/*
 * model_reply_content - the parts as RESULT's data.content into the map
 * data (thinking with signature, id and wire; text; tool_use).
 */
void model_reply_content(const struct model_reply *r, struct msg_val *data);

/* model_stream_init - st ready for a reply of wire, deltas to delta. */
void model_stream_init(struct model_stream *st, const char *wire,
    void (*delta)(void *, bool, const char *, size_t), void *arg);
/* model_stream_fail - set st->why (and retry); -SHIRO_ERR_PROTO. */
int model_stream_fail(struct model_stream *st, bool retry, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/*
 * model_stream_delta - append s to part's text (or thinking), pass it to
 * st->delta: 0, or -SHIRO_ERR_PROTO when a cap is passed.
 */
int model_stream_delta(
    struct model_stream *st, struct model_rpart *part, const char *s, size_t n);

#endif
