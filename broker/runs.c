/*
 * runs.c - a person's own tool calls in a workspace on shirod's machine
 * (see runs.h; docs/protocol.md, RUN; docs/remote.md).
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/err.h"
#include "proto/log.h"
#include "proto/xmalloc.h"
#include "tools/tool.h"

#include "broker.h"
#include "out.h"
#include "runs.h"
#include "timer.h"
#include "turn.h"
#include "turn_int.h"

/* runs_same - whether two routing identities are the same client. */
static int
runs_same(const struct msg_ident *a, const struct msg_ident *b)
{
	return a->len == b->len && memcmp(a->data, b->data, a->len) == 0;
}

/* runs_send - m to r's client; the send's result (not destroyed). */
static int
runs_send(struct broker *b, struct runs_job *r, struct msg *m)
{
	int rc;

	if (r->gone)
		return -SHIRO_ERR_NOENT;
	rc = msg_send(b->csock, m, &r->client);
	if (rc == -SHIRO_ERR_NOENT)
		r->gone = 1;
	return rc;
}

/* runs_forget - remove r (by index k) from the table. */
static void
runs_forget(struct broker *b, size_t k)
{
	struct runs_job *r = &b->runs[k];

	free(r->tool);
	free(r->args);
	free(r->workspace);
	buf_free(&r->pend);
	msg_destroy(&r->final);
	if (k + 1 < b->nruns)
		b->runs[k] = b->runs[b->nruns - 1];
	b->nruns--;
}

/* runs_index - the index of the RUN whose job is job, or -1. */
static long
runs_index(const struct broker *b, uint64_t job)
{
	size_t k;

	if (job == 0)
		return -1;
	for (k = 0; k < b->nruns; k++)
		if (b->runs[k].state == RUNS_RUN && b->runs[k].job == job)
			return (long)k;
	return -1;
}

/* runs_cut - how much of the waiting output one REPLY takes: up to
 * RUNS_CHUNK bytes, never inside a UTF-8 sequence (the worker's pieces
 * are whole text, so a cut before a lead byte leaves whole text). */
static size_t
runs_cut(const struct runs_job *r)
{
	const unsigned char *p =
	    (const unsigned char *)r->pend.data + r->pend_off;
	size_t n = r->pend.len - r->pend_off, cut;

	if (n <= RUNS_CHUNK)
		return n;
	cut = RUNS_CHUNK;
	while (cut > RUNS_CHUNK - 4 && (p[cut] & 0xc0) == 0x80)
		cut--;
	return cut;
}

/* runs_drop_pending - the output still waiting goes, counted. */
static void
runs_drop_pending(struct runs_job *r)
{
	r->dropped += r->pend.len - r->pend_off;
	buf_reset(&r->pend);
	r->pend_off = 0;
}

/* runs_send_final - RUN k's end, with what its output came to. */
static int
runs_send_final(struct broker *b, size_t k)
{
	struct runs_job *r = &b->runs[k];

	if (r->final_doc != NULL) {
		msg_val_set_int(
		    r->final_doc, "output_bytes", (int64_t)r->out_bytes);
		msg_val_set_int(r->final_doc, "dropped", (int64_t)r->dropped);
	}
	return runs_send(b, r, r->final);
}

/*
 * runs_flush - send RUN k's waiting output while the client's window has
 * room, then its end once nothing waits before it.  Returns 1 when the
 * RUN was forgotten (its end went, or its client is gone).
 */
static int
runs_flush(struct broker *b, size_t k, uint64_t now)
{
	struct runs_job *r = &b->runs[k];
	struct msg *rep;
	struct msg_val *doc;
	size_t n;
	int rc;

	while (r->pend.len > r->pend_off && !r->gone &&
	    r->sent - r->read < RUNS_WINDOW) {
		n = runs_cut(r);
		rep = msg_new(MSG_REPLY);
		msg_set_int(rep, "rid", (int64_t)r->rid);
		doc = msg_set_map(rep, "doc");
		msg_val_set_strn(doc, "output", r->pend.data + r->pend_off, n);
		rc = runs_send(b, r, rep);
		msg_destroy(&rep);
		if (rc == -SHIRO_ERR_AGAIN)
			break; /* its queue is full: the next tick */
		r->pend_off += n;
		if (rc != 0) {
			r->dropped += n; /* gone (then the rest goes too) */
			continue;
		}
		r->sent++;
		r->out_bytes += n;
		r->progress_at = now;
	}
	if (r->gone)
		runs_drop_pending(r);
	else if (r->pend_off == r->pend.len) {
		buf_reset(&r->pend);
		r->pend_off = 0;
	} else if (r->pend_off >= RUNS_PENDING_MAX / 2) {
		/* Keep the buffer from growing past what waits in it. */
		memmove(r->pend.data, r->pend.data + r->pend_off,
		    r->pend.len - r->pend_off);
		buf_truncate(&r->pend, r->pend.len - r->pend_off);
		r->pend_off = 0;
	}
	if (r->state != RUNS_DONE || r->pend.len > r->pend_off)
		return 0;
	rc = runs_send_final(b, k);
	if (rc == -SHIRO_ERR_AGAIN)
		return 0;
	if (rc != 0)
		log_info("run %llu of %s: its end could not be sent (the "
			 "client is gone)",
		    (unsigned long long)r->rid,
		    r->who[0] ? r->who : "a client");
	runs_forget(b, k);
	return 1;
}

/* runs_deliver - RUN k ends with *mp (taken; doc is its doc, for a
 * REPLY): it goes after the output still waiting (see runs_flush). */
static void
runs_deliver(struct broker *b, size_t k, struct msg **mp, struct msg_val *doc)
{
	struct runs_job *r = &b->runs[k];

	b->runs_done++;
	msg_destroy(&r->final);
	r->final = *mp;
	r->final_doc = doc;
	*mp = NULL;
	r->state = RUNS_DONE;
	r->worker = -1;
	r->progress_at = timer_now();
	(void)runs_flush(b, k, r->progress_at);
}

/* runs_error - end RUN k with ERROR {rid, code, text}. */
static void
runs_error(struct broker *b, size_t k, const char *code, const char *text)
{
	struct runs_job *r = &b->runs[k];
	struct msg *m = msg_new(MSG_ERROR);

	msg_set_int(m, "rid", (int64_t)r->rid);
	msg_set_str(m, "code", code);
	msg_set_str(m, "text", text);
	log_info("run %llu of %s (%s in %s) ended: %s: %.200s",
	    (unsigned long long)r->rid, r->who[0] ? r->who : "a client",
	    r->tool, r->workspace, code, text);
	runs_deliver(b, k, &m, NULL);
}

/* runs_release - r's worker holds its job no more. */
static void
runs_release(struct broker *b, struct runs_job *r)
{
	if (r->worker >= 0 && (unsigned)r->worker < b->pool.n)
		(void)pool_done(&b->pool.w[r->worker], r->job);
	r->worker = -1;
}

/* runs_cancel - send CANCEL for r's job to its worker, if it has one. */
static void
runs_cancel(struct broker *b, const struct runs_job *r)
{
	struct msg *c;

	if (r->worker < 0 || (unsigned)r->worker >= b->pool.n)
		return;
	c = msg_new(MSG_CANCEL);
	msg_set_int(c, "job", (int64_t)r->job);
	(void)msg_send(b->wsock, c, &b->pool.w[r->worker].ident);
	msg_destroy(&c);
}

/* runs_client_count - the RUNs client from has. */
static unsigned
runs_client_count(const struct broker *b, const struct msg_ident *from)
{
	unsigned n = 0;
	size_t k;

	for (k = 0; k < b->nruns; k++)
		n += runs_same(&b->runs[k].client, from);
	return n;
}

/* The outcomes of runs_start. */
#define RUNS_STARTED 0
#define RUNS_WAITS 1
#define RUNS_ENDED 2 /* answered and forgotten */

/* runs_start - send RUN k to a worker of its workspace if one is free. */
static int
runs_start(struct broker *b, size_t k, uint64_t now)
{
	struct runs_job *r = &b->runs[k];
	struct pool_worker *w;
	unsigned failed = 0;
	char why[600];
	int rc;

	w = pool_for_workspace(&b->pool, r->role, r->workspace, now, &failed);
	if (w == NULL && failed >= POOL_WS_FAILED) {
		snprintf(why, sizeof(why),
		    "the jail is unavailable: the %s workers for %.300s ended "
		    "before they were ready (shirod's log says why)",
		    config_role_name(r->role), r->workspace);
		runs_error(b, k, "jail", why);
		return RUNS_ENDED;
	}
	if (w == NULL)
		return RUNS_WAITS;
	r->job = ++b->next_job;
	rc = call_send_job(
	    b, w, r->job, r->tool, r->args, r->workspace, r->deadline_ms, now);
	if (rc == -SHIRO_ERR_AGAIN) {
		r->job = 0;
		return RUNS_WAITS;
	}
	if (rc != 0) {
		r->job = 0;
		runs_error(b, k, "args",
		    "the call could not be sent to its worker: its arguments "
		    "are larger than one message may be (4 MiB)");
		return RUNS_ENDED;
	}
	r->worker = (int)w->idx;
	r->state = RUNS_RUN;
	r->started_at = now;
	r->deadline = now + r->deadline_ms;
	log_info("run %llu of %s: %s in %s (worker %u)",
	    (unsigned long long)r->rid, r->who[0] ? r->who : "a client",
	    r->tool, r->workspace, w->idx);
	return RUNS_STARTED;
}

/* runs_request - RUN m from client cl (see runs.h). */
void
runs_request(struct broker *b, const struct msg_ident *from,
    const struct clients_client *cl, uint64_t rid, const struct msg *m,
    uint64_t now)
{
	const char *tool = NULL, *args = NULL, *cwd = NULL;
	const struct tool_def *def;
	struct runs_job *r;
	json_error_t jerr;
	json_t *obj;
	char *ws, *why = NULL, *text;

	if (b->stopping) {
		out_error(b, from, rid, "stopping",
		    "shirod is stopping; nothing was run");
		return;
	}
	(void)msg_get_str(m, "tool", &tool, NULL);
	(void)msg_get_str(m, "args", &args, NULL);
	(void)msg_get_str(m, "cwd", &cwd, NULL);
	def = tool != NULL ? tool_find(tool) : NULL;
	if (def == NULL) {
		out_error(b, from, rid, "tool",
		    "there is no workspace tool %.100s: a RUN takes bash or "
		    "a file tool ('shiro tool --list'); %s are the chat's, "
		    "for the model",
		    tool != NULL ? tool : "(none)", turn_chat_tools());
		return;
	}
	obj =
	    json_loads(args != NULL ? args : "", JSON_REJECT_DUPLICATES, &jerr);
	if (obj == NULL || !json_is_object(obj)) {
		out_error(b, from, rid, "args",
		    "%s: the arguments must be one JSON object (%s)", def->name,
		    obj != NULL ? "not an object" : jerr.text);
		json_decref(obj);
		return;
	}
	ws = turn_workspace(b, cwd, &why);
	if (ws == NULL) {
		out_error(b, from, rid, "cwd", "no workspace: %s", why);
		free(why);
		json_decref(obj);
		return;
	}
	if (b->nruns >= RUNS_MAX ||
	    runs_client_count(b, from) >= RUNS_PER_CLIENT) {
		out_error(b, from, rid, "run",
		    "%s runs at once already (%u for one client, %u in "
		    "all); try again when one ended",
		    b->nruns >= RUNS_MAX ? "every call shirod takes"
					 : "this client's calls",
		    RUNS_PER_CLIENT, RUNS_MAX);
		free(ws);
		json_decref(obj);
		return;
	}
	if (b->nruns == b->runs_cap) {
		b->runs_cap = b->runs_cap ? b->runs_cap * 2 : 4;
		b->runs = xreallocarray(b->runs, b->runs_cap, sizeof(*b->runs));
	}
	r = &b->runs[b->nruns++];
	memset(r, 0, sizeof(*r));
	r->client = *from;
	if (cl != NULL)
		snprintf(r->who, sizeof(r->who), "%s", cl->name);
	r->rid = rid;
	r->tool = xstrdup(def->name);
	/* The worker runs exactly what was read here. */
	text = json_dumps(obj, JSON_COMPACT);
	r->args = text != NULL ? text : xstrdup("{}");
	r->deadline_ms = call_tool_deadline_ms(b, def->kind == TOOL_EXEC, obj);
	json_decref(obj);
	r->workspace = ws;
	r->role = def->kind == TOOL_EXEC ? CONFIG_ROLE_TOOL : CONFIG_ROLE_FS;
	r->state = RUNS_WAIT;
	r->worker = -1;
	r->queued_at = now;
	/* A workspace whose workers failed before is tried again, as a new
	 * turn tries it; at most every RUNS_RETRY_MS, so that a stream of
	 * RUNs cannot make a stream of processes. */
	if (b->runs_reset_at == 0 ||
	    timer_since(now, b->runs_reset_at) >= RUNS_RETRY_MS) {
		pool_ws_reset(&b->pool, ws);
		b->runs_reset_at = now;
	}
	(void)runs_start(b, b->nruns - 1, now);
}

/* runs_interrupt - a person stops a RUN of theirs (see runs.h). */
void
runs_interrupt(struct broker *b, const struct msg_ident *from, uint64_t rid,
    const struct msg *m, uint64_t now)
{
	struct msg *rep;
	struct msg_val *doc;
	uint64_t id = 0;
	size_t k;

	(void)msg_get_uint(m, "id", &id);
	for (k = 0; k < b->nruns; k++)
		if (b->runs[k].rid == id && b->runs[k].state != RUNS_DONE &&
		    runs_same(&b->runs[k].client, from))
			break;
	if (k == b->nruns) {
		out_error(b, from, rid, "interrupt",
		    "this client has no call %llu running (INTERRUPT run "
		    "takes the RUN's rid as id)",
		    (unsigned long long)id);
		return;
	}
	rep = msg_new(MSG_REPLY);
	msg_set_int(rep, "rid", (int64_t)rid);
	doc = msg_set_map(rep, "doc");
	msg_val_set_str(doc, "interrupted", "run");
	msg_val_set_int(doc, "run", (int64_t)id);
	(void)out_send_client(b, from, rep);
	msg_destroy(&rep);
	if (b->runs[k].state == RUNS_WAIT) {
		runs_error(b, k, "run", "interrupted before it began");
		return;
	}
	if (!b->runs[k].canceling) {
		b->runs[k].canceling = 1;
		b->runs[k].cancel_at = now + TURN_CANCEL_MS;
		runs_cancel(b, &b->runs[k]);
	}
}

/* runs_owns - whether job is a RUN's. */
int
runs_owns(const struct broker *b, uint64_t job)
{
	return runs_index(b, job) >= 0;
}

/* runs_slot - the worker slot of a RUN's job, or -1. */
int
runs_slot(const struct broker *b, uint64_t job)
{
	long k = runs_index(b, job);

	return k >= 0 ? b->runs[k].worker : -1;
}

/* runs_of - the RUN that w holds, named by m's job; its index or -1. */
static long
runs_of(
    const struct broker *b, const struct pool_worker *w, const struct msg *m)
{
	uint64_t job = 0;
	long k;

	if (msg_get_uint(m, "job", &job) != 0)
		return -1;
	k = runs_index(b, job);
	if (k < 0 || b->runs[k].worker != (int)w->idx)
		return -1;
	return k;
}

/* runs_chunk - a piece of a command's output, to the client that asked
 * as it reads (see runs.h). */
void
runs_chunk(struct broker *b, struct pool_worker *w, const struct msg *m)
{
	long k = runs_of(b, w, m);
	struct runs_job *r;
	const char *text = "";
	size_t len = 0, waiting;

	if (k < 0)
		return;
	r = &b->runs[k];
	(void)msg_get_str(m, "text", &text, &len);
	if (len == 0 || r->gone)
		return;
	waiting = r->pend.len - r->pend_off;
	if (r->out_bytes + waiting + len > RUNS_OUTPUT_MAX ||
	    waiting + len > RUNS_PENDING_MAX) {
		r->dropped += len; /* past the cap, or the client is behind */
		return;
	}
	buf_add(&r->pend, text, len);
	(void)runs_flush(b, (size_t)k, timer_now());
}

/* runs_read - see runs.h. */
void
runs_read(struct broker *b, const struct msg_ident *from, const struct msg *m,
    uint64_t now)
{
	uint64_t run = 0, read = 0;
	size_t k;

	if (msg_get_uint(m, "run", &run) != 0 ||
	    msg_get_uint(m, "read", &read) != 0)
		return;
	for (k = 0; k < b->nruns; k++) {
		struct runs_job *r = &b->runs[k];

		if (r->rid != run || !runs_same(&r->client, from))
			continue;
		/* A client says what it read of what was sent, no more. */
		if (read > r->sent)
			read = r->sent;
		if (read > r->read) {
			r->read = read;
			r->progress_at = now;
			(void)runs_flush(b, k, now);
		}
		return;
	}
}

/* runs_outcome - what a client needs of a result document without a
 * JSON parser: a command's exit code or signal, whether it timed out or
 * was interrupted, and the tool's error text. */
static void
runs_outcome(struct msg_val *d, json_t *doc)
{
	json_t *v;

	v = json_object_get(doc, "exit_code");
	if (json_is_integer(v))
		msg_val_set_int(d, "exit_code", (int64_t)json_integer_value(v));
	v = json_object_get(doc, "signal");
	if (json_is_integer(v))
		msg_val_set_int(d, "signal", (int64_t)json_integer_value(v));
	if (json_is_true(json_object_get(doc, "timed_out")))
		msg_val_set_bool(d, "timed_out", true);
	if (json_is_true(json_object_get(doc, "interrupted")))
		msg_val_set_bool(d, "interrupted", true);
	v = json_object_get(doc, "error");
	if (json_is_string(v))
		msg_val_set_str(d, "error", json_string_value(v));
}

/* runs_result - the RUN's RESULT: its document, to the client. */
void
runs_result(
    struct broker *b, struct pool_worker *w, const struct msg *m, uint64_t now)
{
	long k = runs_of(b, w, m);
	struct runs_job *r;
	const char *text = NULL;
	size_t len = 0;
	json_t *doc;
	struct msg *rep;
	struct msg_val *d;
	int ok = 0;

	if (k < 0)
		return;
	r = &b->runs[k];
	runs_release(b, r);
	doc = msg_get_str(m, "text", &text, &len) == 0
	    ? json_loadb(text, len, JSON_REJECT_DUPLICATES, NULL)
	    : NULL;
	if (doc == NULL || !json_is_object(doc) ||
	    !json_is_boolean(json_object_get(doc, "ok"))) {
		json_decref(doc);
		log_warnx("worker %u: a tool result that is not a result "
			  "document, refused",
		    w->idx);
		runs_error(b, (size_t)k, "run",
		    "the worker's result did not read as a result document; "
		    "the call's effects are unknown");
		runs_kick(b, now);
		return;
	}
	ok = json_is_true(json_object_get(doc, "ok"));
	rep = msg_new(MSG_REPLY);
	msg_set_int(rep, "rid", (int64_t)r->rid);
	d = msg_set_map(rep, "doc");
	msg_val_set_str(d, "tool", r->tool);
	msg_val_set_str(d, "workspace", r->workspace);
	msg_val_set_strn(d, "result", text, len);
	msg_val_set_bool(d, "ok", ok != 0);
	runs_outcome(d, doc);
	json_decref(doc);
	msg_val_set_int(d, "ms", (int64_t)timer_since(now, r->started_at));
	/* What the output came to is set when the end is sent. */
	msg_val_set_int(d, "output_bytes", 0);
	msg_val_set_int(d, "dropped", 0);
	if (msg_check(rep) != 0) {
		/* Never leave the client waiting for an end it cannot get. */
		msg_destroy(&rep);
		runs_error(b, (size_t)k, "run",
		    "the call ended, but its result is larger than one "
		    "message may be");
		runs_kick(b, now);
		return;
	}
	log_info("run %llu of %s (%s in %s) ended: %s",
	    (unsigned long long)r->rid, r->who[0] ? r->who : "a client",
	    r->tool, r->workspace, ok ? "ok" : "the tool's error");
	runs_deliver(b, (size_t)k, &rep, d);
	runs_kick(b, now);
}

/* runs_fail - the RUN's FAIL: an ERROR run naming it. */
void
runs_fail(
    struct broker *b, struct pool_worker *w, const struct msg *m, uint64_t now)
{
	long k = runs_of(b, w, m);
	const char *code = "failed", *text = "";
	char why[4400];
	int canceling;

	if (k < 0)
		return;
	canceling = b->runs[k].canceling;
	runs_release(b, &b->runs[k]);
	(void)msg_get_str(m, "code", &code, NULL);
	(void)msg_get_str(m, "text", &text, NULL);
	if (canceling == 1)
		snprintf(why, sizeof(why), "interrupted: %s", text);
	else if (canceling == 2)
		snprintf(why, sizeof(why),
		    "it did not end within %llu s and was canceled: %s",
		    (unsigned long long)b->runs[k].deadline_ms / 1000, text);
	else
		snprintf(
		    why, sizeof(why), "the call failed (%s): %s", code, text);
	runs_error(b, (size_t)k, "run", why);
	runs_kick(b, now);
}

/* runs_lost - the worker of slot is gone under its RUN. */
void
runs_lost(struct broker *b, int slot, uint64_t now)
{
	size_t k = 0;

	if (slot < 0)
		return;
	while (k < b->nruns) {
		if (b->runs[k].state != RUNS_RUN || b->runs[k].worker != slot) {
			k++;
			continue;
		}
		b->runs[k].worker = -1;
		runs_error(b, k, "run",
		    b->runs[k].canceling == 1
			? "interrupted: its worker was killed with "
			  "everything it ran; the call's effects are unknown"
			: "the worker running this call died; the call's "
			  "effects are unknown");
	}
	runs_kick(b, now);
}

/* runs_kick - start the RUNs waiting for a worker, oldest first. */
void
runs_kick(struct broker *b, uint64_t now)
{
	size_t k = 0;

	while (k < b->nruns && !b->stopping) {
		if (b->runs[k].state != RUNS_WAIT) {
			k++;
			continue;
		}
		if (runs_start(b, k, now) != RUNS_ENDED)
			k++;
	}
}

/* runs_tick - deadlines, and the clients' presence (see runs.h). */
void
runs_tick(struct broker *b, uint64_t now)
{
	struct msg *probe;
	size_t k = 0;

	if (b->nruns == 0)
		return;
	probe = msg_new(MSG_PONG);
	msg_set_int(probe, "rid", 0);
	msg_set_int(probe, "seq", (int64_t)b->clients.seq);
	while (k < b->nruns) {
		struct runs_job *r = &b->runs[k];

		if (runs_flush(b, k, now))
			continue;
		if (r->state == RUNS_DONE) {
			if (timer_since(now, r->progress_at) < RUNS_FINAL_MS) {
				k++;
				continue;
			}
			/* It read nothing for a minute: what waits goes,
			 * and the end with it if there is room. */
			log_info("run %llu of %s: its client read nothing for "
				 "%u s; %llu bytes of output not sent",
			    (unsigned long long)r->rid,
			    r->who[0] ? r->who : "a client",
			    RUNS_FINAL_MS / 1000,
			    (unsigned long long)(r->pend.len - r->pend_off));
			runs_drop_pending(r);
			(void)runs_send_final(b, k);
			runs_forget(b, k);
			continue;
		}
		(void)runs_send(b, r, probe);
		if (r->gone && r->state == RUNS_WAIT) {
			runs_error(b, k, "run", "its client is gone");
			continue;
		}
		if (r->state == RUNS_RUN && r->canceling &&
		    now >= r->cancel_at) {
			/* It did not answer its CANCEL: its process goes,
			 * and whatever it ran with it. */
			if (r->worker >= 0 && (unsigned)r->worker < b->pool.n)
				(void)pool_kill(&b->pool, &b->pool.w[r->worker],
				    "did not stop a canceled call", now);
			r->worker = -1;
			runs_error(b, k, "run",
			    "it was canceled and its worker did not stop: the "
			    "worker was killed with everything it ran; the "
			    "call's effects are unknown");
			continue;
		}
		if (r->state == RUNS_RUN && !r->canceling &&
		    (r->gone || now >= r->deadline)) {
			r->canceling = r->gone ? 3 : 2;
			r->cancel_at = now + TURN_CANCEL_MS;
			runs_cancel(b, r);
		}
		k++;
	}
	msg_destroy(&probe);
}

/* runs_count - RUNs waiting and running. */
void
runs_count(const struct broker *b, unsigned *waiting, unsigned *running)
{
	size_t k;

	*waiting = *running = 0;
	for (k = 0; k < b->nruns; k++) {
		if (b->runs[k].state == RUNS_WAIT)
			(*waiting)++;
		else if (b->runs[k].state == RUNS_RUN)
			(*running)++;
	}
}

/* runs_stop - shirod stops: every RUN ends. */
void
runs_stop(struct broker *b)
{
	size_t k = b->nruns;

	/* From the last: runs_forget moves the last entry, done already,
	 * into the place it frees. */
	while (k-- > 0) {
		struct runs_job *r = &b->runs[k];

		if (r->state == RUNS_DONE)
			continue; /* its end is on its way */
		if (r->state == RUNS_RUN) {
			runs_cancel(b, r);
			runs_release(b, r);
		}
		runs_error(b, k, "stopping",
		    "shirod is stopping: the call was canceled; its effects "
		    "are unknown");
	}
}

/* runs_free - release the RUNs' memory. */
void
runs_free(struct broker *b)
{
	while (b->nruns > 0)
		runs_forget(b, b->nruns - 1);
	free(b->runs);
	b->runs = NULL;
	b->runs_cap = 0;
}
