/*
 * request.c - reading a job: the compaction's inputs, and the
 * provider-neutral request in its data (docs/providers.md).
 *
 * The broker is trusted, but a request is still checked whole before a
 * byte goes to a provider: each key its type, each part its role, so a
 * wire never has to guess.  A bad request fails the job (`badjob`).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/err.h"
#include "proto/xmalloc.h"
#include "workers/model/model.h"

/* model_input_read - one input map of a JOB into in. */
static int
model_input_read(const struct msg_val *v, struct model_input *in)
{
	const struct msg_val *text = msg_val_get(v, "text");
	const struct msg_val *kind = msg_val_get(v, "kind");
	int64_t id, n;

	if (v->type != MSG_V_MAP || text == NULL || text->type != MSG_V_STR ||
	    msg_val_int(v, "id", &id) < 0 || msg_val_int(v, "n", &n) < 0 ||
	    id < 0 || n < 1)
		return -SHIRO_ERR_PROTO;
	if (kind != NULL && kind->type != MSG_V_STR)
		return -SHIRO_ERR_PROTO;
	in->id = (uint64_t)id;
	in->n = (uint64_t)n;
	in->kind = kind ? kind->u.s.ptr : NULL;
	in->text = text->u.s.ptr;
	in->len = text->u.s.len;
	return 0;
}

/* model_compact_read - a compaction job from JOB m, checked. */
int
model_compact_read(const struct msg *m, struct model_compact *job)
{
	const struct msg_val *inputs = NULL;
	uint64_t limit = MODEL_NODE_MAX;
	size_t k;

	memset(job, 0, sizeof(*job));
	if (msg_get_uint(m, "job", &job->job) < 0 ||
	    msg_get_uint(m, "l", &job->l) < 0 ||
	    msg_get_uint(m, "i", &job->i) < 0 ||
	    msg_get_arr(m, "inputs", &inputs) < 0)
		return -SHIRO_ERR_PROTO;
	msg_get_uint(m, "limit", &limit);
	if (limit < 16 || limit > MODEL_NODE_MAX)
		return -SHIRO_ERR_PROTO;
	job->limit = (size_t)limit;
	if (msg_get_arr(m, "context", &job->context) < 0)
		job->context = NULL;
	/* A message (l = 0) has one input, a merge two. */
	if (inputs->u.a.n != (job->l == 0 ? 1u : 2u))
		return -SHIRO_ERR_PROTO;
	for (k = 0; k < inputs->u.a.n; k++)
		if (model_input_read(inputs->u.a.items[k], &job->inputs[k]) < 0)
			return -SHIRO_ERR_PROTO;
	job->ninputs = inputs->u.a.n;
	if (job->l == 0 && job->inputs[0].kind == NULL)
		return -SHIRO_ERR_PROTO;
	return 0;
}

/* req_why - fill why; -SHIRO_ERR_PROTO. */
static int __attribute__((format(printf, 3, 4)))
req_why(char *why, size_t whylen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, whylen, fmt, ap);
	va_end(ap);
	return -SHIRO_ERR_PROTO;
}

/* req_str - the STR of key in map v, or NULL (absent or another type). */
static const char *
req_str(const struct msg_val *v, const char *key, bool *wrong)
{
	const struct msg_val *x = msg_val_get(v, key);

	if (x == NULL)
		return NULL;
	if (x->type != MSG_V_STR) {
		*wrong = true;
		return NULL;
	}
	return x->u.s.ptr;
}

/* req_bool - the BOOL of key in v into *bp (false when absent). */
static bool
req_bool(const struct msg_val *v, const char *key, bool *bp)
{
	const struct msg_val *x = msg_val_get(v, key);

	*bp = false;
	if (x == NULL)
		return true;
	if (x->type != MSG_V_BOOL)
		return false;
	*bp = x->u.b;
	return true;
}

/* req_uint - the UINT of key in v into *up; false if absent or wrong. */
static bool
req_uint(const struct msg_val *v, const char *key, uint64_t *up)
{
	const struct msg_val *x = msg_val_get(v, key);

	if (x == NULL || x->type != MSG_V_INT || x->u.i < 0)
		return false;
	*up = (uint64_t)x->u.i;
	return true;
}

/* req_part - part v of a message (assistant or not) into p. */
static int
req_part(const struct msg_val *v, bool assistant, struct model_part *p,
    char *why, size_t whylen)
{
	bool wrong = false;
	const char *type;
	const struct msg_val *data;

	memset(p, 0, sizeof(*p));
	if (v->type != MSG_V_MAP || (type = req_str(v, "type", &wrong)) == NULL)
		return req_why(why, whylen, "a part without a type");
	p->text = req_str(v, "text", &wrong);
	p->len = p->text ? strlen(p->text) : 0;
	p->signature = req_str(v, "signature", &wrong);
	p->id = req_str(v, "id", &wrong);
	p->name = req_str(v, "name", &wrong);
	p->input = req_str(v, "input", &wrong);
	p->media = req_str(v, "media", &wrong);
	p->wire = req_str(v, "wire", &wrong);
	if (wrong || !req_bool(v, "cache", &p->cache) ||
	    !req_bool(v, "error", &p->error))
		return req_why(why, whylen,
		    "a %.32s part with a key of the "
		    "wrong type",
		    type);
	if (strcmp(type, "text") == 0) {
		p->type = MODEL_P_TEXT;
		if (p->text == NULL)
			return req_why(why, whylen, "a text part without text");
	} else if (strcmp(type, "image") == 0) {
		p->type = MODEL_P_IMAGE;
		data = msg_val_get(v, "data");
		if (p->media == NULL || data == NULL ||
		    data->type != MSG_V_BIN || data->u.s.len == 0)
			return req_why(why, whylen,
			    "an image part needs media and data (BIN)");
		if (strncmp(p->media, "image/", 6) != 0 ||
		    strpbrk(p->media, "\";, ") != NULL)
			return req_why(why, whylen,
			    "an image part's media must be image/...");
		p->data = data->u.s.ptr;
		p->data_len = data->u.s.len;
	} else if (strcmp(type, "thinking") == 0) {
		p->type = MODEL_P_THINKING;
		if (!assistant || p->text == NULL || p->wire == NULL)
			return req_why(why, whylen,
			    "a thinking part needs "
			    "text and wire, in an assistant message");
	} else if (strcmp(type, "tool_use") == 0) {
		p->type = MODEL_P_TOOL_USE;
		if (!assistant || p->id == NULL || p->name == NULL ||
		    p->input == NULL)
			return req_why(why, whylen,
			    "a tool_use part needs id, "
			    "name and input, in an assistant message");
	} else if (strcmp(type, "tool_result") == 0) {
		p->type = MODEL_P_TOOL_RESULT;
		if (assistant || p->id == NULL || p->text == NULL)
			return req_why(why, whylen,
			    "a tool_result part needs "
			    "id and text, in a user message");
	} else {
		return req_why(
		    why, whylen, "a part of unknown type %.32s", type);
	}
	return 0;
}

/* req_message - message v into m. */
static int
req_message(
    const struct msg_val *v, struct model_message *m, char *why, size_t whylen)
{
	const struct msg_val *content = msg_val_get(v, "content");
	bool wrong = false;
	const char *role = req_str(v, "role", &wrong);
	size_t k;
	int rc;

	if (v->type != MSG_V_MAP || role == NULL)
		return req_why(why, whylen, "a message without a role");
	if (strcmp(role, "assistant") == 0)
		m->assistant = true;
	else if (strcmp(role, "user") != 0)
		return req_why(why, whylen, "a message of role %.32s", role);
	if (content == NULL || content->type != MSG_V_ARR ||
	    content->u.a.n == 0)
		return req_why(why, whylen, "a message without content");
	m->parts = xreallocarray(NULL, content->u.a.n, sizeof(*m->parts));
	m->nparts = content->u.a.n;
	for (k = 0; k < content->u.a.n; k++)
		if ((rc = req_part(content->u.a.items[k], m->assistant,
			 &m->parts[k], why, whylen)) < 0)
			return rc;
	return 0;
}

/* model_request_read - the request map v into req. */
int
model_request_read(const struct msg_val *v, struct model_request *req,
    char *why, size_t whylen)
{
	const struct msg_val *sys, *tools, *msgs, *x;
	bool wrong = false;
	size_t k;
	int rc;

	memset(req, 0, sizeof(*req));
	if (v == NULL || v->type != MSG_V_MAP)
		return req_why(why, whylen, "no request");
	req->model = req_str(v, "model", &wrong);
	if (req->model == NULL || req->model[0] == '\0')
		return req_why(why, whylen, "the request names no model");
	if (!req_uint(v, "max_tokens", &req->max_tokens) ||
	    req->max_tokens == 0)
		return req_why(why, whylen, "max_tokens missing or 0");
	req->cache_key = req_str(v, "cache_key", &wrong);
	if (msg_val_get(v, "thinking") != NULL &&
	    !req_uint(v, "thinking", &req->thinking))
		wrong = true;
	if (wrong || !req_bool(v, "cache_tools", &req->cache_tools))
		return req_why(why, whylen, "a request key of the wrong type");
	if ((sys = msg_val_get(v, "system")) != NULL) {
		if (sys->type != MSG_V_ARR)
			return req_why(why, whylen, "system is not an array");
		req->system =
		    xreallocarray(NULL, sys->u.a.n + 1, sizeof(*req->system));
		for (k = 0; k < sys->u.a.n; k++) {
			x = sys->u.a.items[k];
			if (x->type != MSG_V_STR)
				return req_why(
				    why, whylen, "a system block is not text");
			req->system[req->nsystem++] = x->u.s.ptr;
		}
	}
	if ((tools = msg_val_get(v, "tools")) != NULL) {
		if (tools->type != MSG_V_ARR)
			return req_why(why, whylen, "tools is not an array");
		req->tools =
		    xreallocarray(NULL, tools->u.a.n + 1, sizeof(*req->tools));
		for (k = 0; k < tools->u.a.n; k++) {
			struct model_tool *t = &req->tools[req->ntools++];

			x = tools->u.a.items[k];
			if (x->type != MSG_V_MAP)
				return req_why(
				    why, whylen, "a tool is not a map");
			t->name = req_str(x, "name", &wrong);
			t->description = req_str(x, "description", &wrong);
			t->schema = req_str(x, "schema", &wrong);
			if (wrong || t->name == NULL || t->schema == NULL)
				return req_why(why, whylen,
				    "a tool needs a name and a schema");
			if (t->description == NULL)
				t->description = "";
		}
	}
	msgs = msg_val_get(v, "messages");
	if (msgs == NULL || msgs->type != MSG_V_ARR || msgs->u.a.n == 0)
		return req_why(why, whylen, "the request has no messages");
	/* Room for a compaction's follow-ups. */
	req->cap = msgs->u.a.n + 2 * MODEL_TRIES_MAX;
	req->msgs = xcalloc(req->cap, sizeof(*req->msgs));
	for (k = 0; k < msgs->u.a.n; k++) {
		rc = req_message(
		    msgs->u.a.items[k], &req->msgs[req->nmsgs++], why, whylen);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* model_request_add - append a message of one text part. */
void
model_request_add(
    struct model_request *req, bool assistant, const char *text, size_t len)
{
	struct model_message *m;

	if (req->nmsgs == req->cap) {
		req->cap = req->cap ? req->cap * 2 : 4;
		req->msgs =
		    xreallocarray(req->msgs, req->cap, sizeof(*req->msgs));
	}
	m = &req->msgs[req->nmsgs++];
	memset(m, 0, sizeof(*m));
	m->assistant = assistant;
	m->parts = xcalloc(1, sizeof(*m->parts));
	m->nparts = 1;
	m->parts[0].type = MODEL_P_TEXT;
	m->parts[0].text = text;
	m->parts[0].len = len;
}

/* model_request_free - free req's arrays. */
void
model_request_free(struct model_request *req)
{
	size_t k;

	for (k = 0; k < req->nmsgs; k++)
		free(req->msgs[k].parts);
	free(req->msgs);
	free(req->system);
	free(req->tools);
	memset(req, 0, sizeof(*req));
}
