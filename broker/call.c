/*
 * call.c - a turn's tool calls: logged, decided, asked, run in the
 * workspace's workers, answered (see turn_int.h for their states;
 * docs/tools.md, "How calls flow").
 *
 * shirod is the monitor: it decides every call's permission with the
 * catalogue's engine (tools/perm.h) before any worker sees it, so a
 * denied call never reaches one.  Each call is logged as a tool line
 * (its name and JSON input) before it runs, and its result as an echo
 * line after (rule 48); the echo carries the key "echo.T" (T the tool
 * line's id), so that the echo shirod writes at a restart for a call a
 * crash interrupted is logged once, however often it restarts.
 *
 * Calls of one step run in the model's order with one rule: a call that
 * writes or runs a command waits for every call before it and holds
 * back every call after it; calls that read run side by side.
 *
 * Everything a tool worker sends back is untrusted: a result must be a
 * JSON object with a boolean "ok"; anything else is a tool error.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/buf.h"
#include "proto/err.h"
#include "proto/log.h"
#include "proto/xmalloc.h"
#include "tools/perm.h"
#include "tools/tool.h"

#include "broker.h"
#include "out.h"
#include "turn.h"
#include "turn_int.h"

/* The most bytes of a call or a result an event carries. */
#define CALL_EVENT_TEXT 2048
/* The most bytes of an approval's subject (a diff, a command). */
#define CALL_SUBJECT_MAX 8000
/* What a call a person interrupted says. */
#define CALL_INTERRUPTED \
	"interrupted by the person: the command did not finish and its " \
	"effects are unknown"

/* The state record of the tool lines in flight and the day's spend. */
#define CALL_STATE_KEY "turn"
/* A record whose turn began more messages ago than this is damage (a
 * turn has at most 1000 steps): the log is not read that far. */
#define CALL_RECOVER_MAX 1000000

/* call_free - release a call's memory. */
void
call_free(struct turn_call *c)
{
	size_t i;

	free(c->name);
	free(c->input);
	json_decref(c->args);
	free(c->out.id);
	free(c->out.text);
	for (i = 0; i < c->out.nimages; i++)
		free(c->out.images[i].data);
	free(c->out.images);
	memset(c, 0, sizeof(*c));
}

/* call_step - the last step of t, or NULL. */
static struct turn_step *
call_step(const struct turn *t)
{
	return t->nsteps > 0 ? &t->steps[t->nsteps - 1] : NULL;
}

/* call_of_job - the running call of the last step with job. */
struct turn_call *
call_of_job(struct turn *t, uint64_t job)
{
	struct turn_step *s = call_step(t);
	size_t k;

	for (k = 0; s != NULL && job != 0 && k < s->ncalls; k++)
		if (s->calls[k].state == TURN_C_RUN && s->calls[k].job == job)
			return &s->calls[k];
	return NULL;
}

/* call_busy - calls of the last step that are not DONE. */
size_t
call_busy(const struct turn *t)
{
	const struct turn_step *s = call_step(t);
	size_t k, n = 0;

	for (k = 0; s != NULL && k < s->ncalls; k++)
		n += s->calls[k].state != TURN_C_DONE;
	return n;
}

/* call_state_save - the record of where the running turn's tool lines
 * begin and of the day's spend, in one commit. */
void
call_state_save(struct broker *b, uint64_t first)
{
	char v[160];
	int n, rc;

	if (first == TURN_NONE)
		n = snprintf(v, sizeof(v), "calls -\nspend %s %llu\n",
		    b->spend_day[0] ? b->spend_day : "-", b->spend_uusd);
	else
		n = snprintf(v, sizeof(v), "calls %llu\nspend %s %llu\n",
		    (unsigned long long)first,
		    b->spend_day[0] ? b->spend_day : "-", b->spend_uusd);
	rc = store_state_put(b->store, CALL_STATE_KEY, v, (size_t)n);
	if (rc != 0)
		log_warnx("the record of the turn's tool calls was not "
			  "written (%s): a crash now would leave their tool "
			  "lines without an echo",
		    store_errmsg(b->store));
	b->spend_saved = b->spend_uusd;
}

/* call_clip - text as the model reads it and the log keeps it: head
 * and tail, 30,000 characters (rule 9); caller frees. */
static char *
call_clip(const char *text, size_t len, size_t *outlen)
{
	return store_text_clip(text, len, STORE_TOOL_CHARS, outlen);
}

/* call_event - a new EVENT ev about call c, with its text cut; *dp
 * (may be NULL) gets its data map. */
static struct msg *
call_event(const struct turn *t, const struct turn_call *c, const char *ev,
    const char *text, size_t len, struct msg_val **dp)
{
	struct msg *m = turn_event(t, ev);
	struct msg_val *d;

	msg_set_strn(m, "text", text, compact_cut(text, len, CALL_EVENT_TEXT));
	d = msg_set_map(m, "data");
	msg_val_set_str(d, "call", c->out.id);
	msg_val_set_str(d, "name", c->name);
	if (c->msg != TURN_NONE)
		msg_val_set_int(d, "call_message", (int64_t)c->msg);
	if (dp != NULL)
		*dp = d;
	return m;
}

/* call_finish - c is answered with text: what the model reads, the echo
 * line, the event (tool_result, tool_error or tool_denied). */
static void
call_finish(struct broker *b, struct turn *t, struct turn_call *c,
    const char *text, size_t len, int error)
{
	struct buf line = BUF_INIT;
	char key[40];
	uint64_t id = TURN_NONE;
	struct msg_val *d;
	struct msg *ev;
	int dup = 0;

	free(c->out.text);
	c->out.text = call_clip(text, len, &c->out.len);
	c->out.error = error;
	c->state = TURN_C_DONE;
	c->job = 0;
	c->worker = -1;
	if (c->msg != TURN_NONE)
		buf_printf(
		    &line, "%llu %s: ", (unsigned long long)c->msg, c->name);
	else
		buf_printf(&line, "%s: ", c->name);
	buf_add(&line, c->out.text, c->out.len);
	snprintf(key, sizeof(key), "echo.%llu", (unsigned long long)c->msg);
	if (serve_append_keyed(b, STORE_KIND_ECHO, line.data, line.len,
		c->msg != TURN_NONE ? key : NULL, &id, &dup) == 0)
		c->echo = id;
	buf_free(&line);
	ev = call_event(t, c,
	    c->denied	? "tool_denied"
		: error ? "tool_error"
			: "tool_result",
	    c->out.text, c->out.len, &d);
	msg_set_str(ev, "code", c->denied ? "denied" : error ? "error" : "ok");
	if (c->echo != TURN_NONE)
		msg_val_set_int(d, "message", (int64_t)c->echo);
	out_publish(b, &ev);
}

/* call_finish_doc - c is answered with a result document {"ok": false,
 * "error": why} (what the workers write). */
static void
call_finish_error(
    struct broker *b, struct turn *t, struct turn_call *c, const char *why)
{
	json_t *doc = json_pack("{s:b,s:s}", "ok", 0, "error", why);
	char *text = doc != NULL ? json_dumps(doc, JSON_COMPACT) : NULL;

	if (text != NULL)
		call_finish(b, t, c, text, strlen(text), 1);
	else
		call_finish(b, t, c, why, strlen(why), 1);
	free(text);
	json_decref(doc);
}

/* call_deny - c never runs: why is what the model and the person read. */
static void
call_deny(
    struct broker *b, struct turn *t, struct turn_call *c, const char *why)
{
	struct buf text = BUF_INIT;

	c->denied = 1;
	t->denied++;
	buf_printf(&text, "denied: %s", why);
	call_finish(b, t, c, text.data, text.len, 1);
	buf_free(&text);
}

/* call_deny_person - c was asked and a person (or the clock) said no. */
void
call_deny_person(
    struct broker *b, struct turn *t, struct turn_call *c, const char *why)
{
	call_deny(b, t, c, why);
}

/* call_lines - the lines of s[0..len) each behind prefix, into out. */
static void
call_lines(struct buf *out, const char *prefix, const char *s, size_t len)
{
	const char *end = s + len, *nl;

	while (s < end) {
		nl = memchr(s, '\n', (size_t)(end - s));
		buf_adds(out, prefix);
		buf_add(out, s, nl ? (size_t)(nl - s) : (size_t)(end - s));
		buf_addc(out, '\n');
		s = nl ? nl + 1 : end;
	}
}

/* call_jstr - args[key] as a string, or "". */
static const char *
call_jstr(json_t *args, const char *key)
{
	const char *s = json_string_value(json_object_get(args, key));

	return s != NULL ? s : "";
}

/* call_edit_diff - one edit (old_string, new_string) as -/+ lines. */
static void
call_edit_diff(struct buf *out, json_t *edit, const char *path)
{
	const char *old = call_jstr(edit, "old_string");
	const char *new_ = call_jstr(edit, "new_string");

	buf_printf(out, "--- %s\n+++ %s%s\n", path, path,
	    json_is_true(json_object_get(edit, "replace_all"))
		? " (every occurrence)"
		: "");
	call_lines(out, "-", old, strlen(old));
	call_lines(out, "+", new_, strlen(new_));
}

/*
 * call_subject - what a person is asked to approve: the command for
 * bash, a diff for an edit, the content for a write, the patch, the
 * move; made from the arguments alone (shirod never reads the
 * workspace), cut at CALL_SUBJECT_MAX bytes.
 */
static void
call_subject(const struct turn_call *c, struct buf *out)
{
	json_t *a = c->args, *e;
	const char *path = call_jstr(a, "path");
	size_t k, cut;

	if (strcmp(c->name, "bash") == 0) {
		buf_printf(out, "$ %s\n", call_jstr(a, "command"));
	} else if (strcmp(c->name, "edit_file") == 0) {
		call_edit_diff(out, a, path);
	} else if (strcmp(c->name, "multi_edit") == 0) {
		json_array_foreach(json_object_get(a, "edits"), k, e)
		{
			const char *p = call_jstr(e, "path");

			call_edit_diff(out, e, p[0] ? p : path);
		}
	} else if (strcmp(c->name, "write_file") == 0) {
		const char *content = call_jstr(a, "content");

		buf_printf(
		    out, "write %s (%zu bytes):\n", path, strlen(content));
		call_lines(out, "+", content, strlen(content));
	} else if (strcmp(c->name, "apply_patch") == 0) {
		buf_adds(out, call_jstr(a, "patch"));
	} else if (strcmp(c->name, "move_file") == 0) {
		buf_printf(out, "move %s to %s%s\n", call_jstr(a, "from"),
		    call_jstr(a, "to"),
		    json_is_true(json_object_get(a, "overwrite"))
			? " (replacing it)"
			: "");
	} else if (strcmp(c->name, "delete_file") == 0) {
		buf_printf(out, "delete %s\n", path);
	} else {
		buf_printf(out, "%s %s\n", c->name, c->input);
	}
	if (out->len > CALL_SUBJECT_MAX) {
		cut = compact_cut(out->data, out->len, CALL_SUBJECT_MAX);
		out->len = cut;
		buf_printf(
		    out, "\n(... %zu more bytes)\n", strlen(out->data + cut));
		out->data[out->len] = '\0';
	}
}

/* call_ask - c waits for a person's answer; every attached client is
 * shown it. */
static void
call_ask(struct broker *b, struct turn *t, struct turn_call *c,
    const char *reason, uint64_t now)
{
	struct buf subject = BUF_INIT;
	struct msg *ev;
	struct msg_val *d;

	c->state = TURN_C_ASK;
	c->approval = ++b->next_approval;
	c->deadline = now + b->cfg.turns.approval_ms;
	buf_add(&subject, "", 0);
	call_subject(c, &subject);
	ev = turn_event(t, "approval");
	msg_set_str(ev, "code", "ask");
	msg_set_strn(ev, "text", subject.data, subject.len);
	d = msg_set_map(ev, "data");
	msg_val_set_int(d, "approval", (int64_t)c->approval);
	msg_val_set_str(d, "call", c->out.id);
	msg_val_set_str(d, "name", c->name);
	msg_val_set_str(d, "reason", reason);
	msg_val_set_str(d, "kind",
	    c->kind == TURN_K_EXEC	  ? "exec"
		: c->kind == TURN_K_WRITE ? "write"
					  : "read");
	if (c->msg != TURN_NONE)
		msg_val_set_int(d, "call_message", (int64_t)c->msg);
	msg_val_set_int(d, "timeout_ms", (int64_t)b->cfg.turns.approval_ms);
	out_publish(b, &ev);
	buf_free(&subject);
}

/* call_resolved - tell every client that approval of c is over. */
static void
call_resolved(struct broker *b, struct turn *t, struct turn_call *c,
    const char *answer, const char *by, const char *text)
{
	struct msg *ev = turn_event(t, "approval");
	struct msg_val *d;

	msg_set_str(ev, "code", "resolved");
	msg_set_str(ev, "text", text);
	d = msg_set_map(ev, "data");
	msg_val_set_int(d, "approval", (int64_t)c->approval);
	msg_val_set_str(d, "answer", answer);
	msg_val_set_str(d, "by", by);
	msg_val_set_str(d, "name", c->name);
	out_publish(b, &ev);
}

/* call_decide - the verdict on c: WAIT (it may run), ASK, or DONE. */
static void
call_decide(struct broker *b, struct turn *t, struct turn_call *c, uint64_t now)
{
	const struct tool_def *def = tool_find(c->name);
	struct perm_verdict v;
	char why[900];

	if (turn_is_chat_tool(c->name)) {
		c->kind = TURN_K_CHAT;
		return;
	}
	if (def == NULL) {
		c->kind = TURN_K_BAD;
		snprintf(why, sizeof(why),
		    "there is no tool %.100s; the tools are %s and the "
		    "workspace's file tools and bash",
		    c->name, turn_chat_tools());
		call_finish_error(b, t, c, why);
		return;
	}
	c->kind = def->kind == TOOL_EXEC ? TURN_K_EXEC
	    : def->kind == TOOL_WRITE	 ? TURN_K_WRITE
					 : TURN_K_READ;
	if (c->args == NULL || !json_is_object(c->args)) {
		c->kind = TURN_K_BAD;
		snprintf(why, sizeof(why),
		    "%s: its input is not a JSON object; give the arguments "
		    "its schema names",
		    c->name);
		call_finish_error(b, t, c, why);
		return;
	}
	if (t->workspace == NULL) {
		snprintf(why, sizeof(why),
		    "%s cannot run: this turn has no working directory (%s)",
		    c->name, t->ws_why ? t->ws_why : "none");
		call_finish_error(b, t, c, why);
		return;
	}
	perm_set_workspace(b->perm, t->workspace);
	perm_set_yolo(b->perm, b->cfg.yolo || t->mode == TURN_MODE_YOLO);
	perm_check(b->perm, t->pt, c->name, c->args, &v);
	switch (v.action) {
	case PERM_ALLOW:
		return;
	case PERM_DENY:
		call_deny(b, t, c, v.reason);
		return;
	case PERM_ASK:
		break;
	}
	if (t->mode == TURN_MODE_DENY) {
		snprintf(why, sizeof(why),
		    "%s; nobody is asked in a headless turn (shiro -p "
		    "without --yolo), so it is no",
		    v.reason);
		call_deny(b, t, c, why);
	} else if (t->mode == TURN_MODE_YOLO) {
		snprintf(why, sizeof(why),
		    "%s; yolo does not pass this, and nobody is asked in a "
		    "yolo turn",
		    v.reason);
		call_deny(b, t, c, why);
	} else if (clients_attached(&b->clients) == 0) {
		snprintf(why, sizeof(why),
		    "%s; no client is attached to answer it", v.reason);
		call_deny(b, t, c, why);
	} else {
		call_ask(b, t, c, v.reason, now);
	}
}

/* call_begin - log the last step's calls and decide each. */
void
call_begin(struct broker *b, struct turn *t, uint64_t now)
{
	struct turn_step *s = call_step(t);
	const struct msg_val *d, *parts;
	struct buf line = BUF_INIT;
	json_error_t jerr;
	uint64_t first, id;
	size_t k, n = 0;
	struct msg *ev;

	if (msg_get_map(s->reply, "data", &d) != 0 ||
	    (parts = msg_val_get(d, "content")) == NULL)
		return;
	for (k = 0; k < parts->u.a.n; k++)
		n += strcmp(msg_val_str(parts->u.a.items[k], "type"),
			 "tool_use") == 0;
	s->calls = xcalloc(n ? n : 1, sizeof(*s->calls));
	/* Where the turn's tool lines begin, written once before the first:
	 * a crash from here on leaves them for call_recover.  The day's
	 * spend goes with it at each step when a day's ceiling counts on
	 * it. */
	first = store_count(b->store);
	if (t->first_tool == TURN_NONE) {
		t->first_tool = first;
		call_state_save(b, first);
	} else if (b->cfg.limits.day_uusd != 0 &&
	    b->spend_saved != b->spend_uusd) {
		call_state_save(b, t->first_tool);
	}
	for (k = 0; k < parts->u.a.n; k++) {
		const struct msg_val *p = parts->u.a.items[k];
		struct turn_call *c;

		if (strcmp(msg_val_str(p, "type"), "tool_use") != 0)
			continue;
		c = &s->calls[s->ncalls++];
		c->name = xstrdup(msg_val_str(p, "name"));
		c->input = xstrdup(msg_val_str(p, "input"));
		c->out.id = xstrdup(msg_val_str(p, "id"));
		c->args = json_loads(c->input, JSON_REJECT_DUPLICATES, &jerr);
		c->msg = c->echo = TURN_NONE;
		c->worker = -1;
		c->state = TURN_C_WAIT;
		buf_reset(&line);
		buf_printf(&line, "%s %s", c->name, c->input);
		if (serve_append_own(
			b, STORE_KIND_TOOL, line.data, line.len, &id) == 0)
			c->msg = id;
		ev = call_event(t, c, "tool_call", line.data, line.len, NULL);
		msg_set_str(ev, "code", "call");
		out_publish(b, &ev);
	}
	buf_free(&line);
	t->ncalls += (unsigned)s->ncalls;
	b->tool_calls += s->ncalls;
	for (k = 0; k < s->ncalls && b->turn == t; k++)
		call_decide(b, t, &s->calls[k], now);
	if (b->turn == t)
		call_run(b, t, now);
}

/* call_args_text - the arguments as the engine saw them (caller frees):
 * what the worker runs is exactly what was checked. */
static char *
call_args_text(const struct turn_call *c)
{
	char *s = json_dumps(c->args, JSON_COMPACT);

	return s != NULL ? s : xstrdup("{}");
}

/* call_tool_deadline_ms - how long a tool call may run (turn_int.h). */
uint64_t
call_tool_deadline_ms(const struct broker *b, int exec, json_t *args)
{
	json_t *v;

	if (!exec)
		return b->cfg.turns.file_tool_ms;
	v = json_object_get(args, "timeout");
	if (json_is_integer(v) && json_integer_value(v) > 0 &&
	    json_integer_value(v) <= TOOL_BASH_TIMEOUT_MAX)
		return (uint64_t)json_integer_value(v) * 1000 +
		    TURN_TOOL_GRACE_MS;
	return (uint64_t)TOOL_BASH_TIMEOUT * 1000 + TURN_TOOL_GRACE_MS;
}

/* call_send_job - JOB kind tool to w (turn_int.h). */
int
call_send_job(struct broker *b, struct pool_worker *w, uint64_t job,
    const char *tool, const char *args, const char *workspace,
    uint64_t deadline_ms, uint64_t now)
{
	struct msg_val *d;
	struct msg *m = msg_new(MSG_JOB);
	int rc;

	msg_set_int(m, "job", (int64_t)job);
	msg_set_str(m, "kind", "tool");
	msg_set_int(m, "deadline_ms", (int64_t)deadline_ms);
	d = msg_set_map(m, "data");
	msg_val_set_str(d, "tool", tool);
	msg_val_set_str(d, "args", args);
	msg_val_set_str(d, "workspace", workspace);
	rc = msg_send(b->wsock, m, &w->ident);
	msg_destroy(&m);
	if (rc == -SHIRO_ERR_NOENT || rc == -SHIRO_ERR_AGAIN) {
		(void)pool_kill(&b->pool, w, "cannot take a tool call", now);
		return -SHIRO_ERR_AGAIN;
	}
	if (rc == 0)
		pool_assign(w, job, now);
	return rc;
}

/* The outcomes of call_start. */
#define CALL_STARTED 0
#define CALL_NO_WORKER 1 /* none free yet: ask again later */
#define CALL_NO_JAIL 2 /* the workspace's workers cannot start */

/* call_start - send c to a worker of the workspace. */
static int
call_start(struct broker *b, struct turn *t, struct turn_call *c, uint64_t now)
{
	enum config_role role =
	    c->kind == TURN_K_EXEC ? CONFIG_ROLE_TOOL : CONFIG_ROLE_FS;
	struct pool_worker *w;
	unsigned failed = 0;
	uint64_t ms = call_tool_deadline_ms(b, c->kind == TURN_K_EXEC, c->args);
	char *args;
	int rc;

	w = pool_for_workspace(&b->pool, role, t->workspace, now, &failed);
	if (w == NULL)
		return failed >= POOL_WS_FAILED ? CALL_NO_JAIL : CALL_NO_WORKER;
	c->job = ++b->next_job;
	args = call_args_text(c);
	rc = call_send_job(b, w, c->job, c->name, args, t->workspace, ms, now);
	free(args);
	if (rc == -SHIRO_ERR_AGAIN) {
		c->job = 0;
		return CALL_NO_WORKER;
	}
	if (rc != 0) {
		c->job = 0;
		call_finish_error(b, t, c,
		    "the call could not be sent to its worker: its arguments "
		    "are larger than one message may be (4 MiB)");
		return CALL_STARTED;
	}
	c->worker = (int)w->idx;
	c->state = TURN_C_RUN;
	c->deadline = now + ms;
	c->started_us = turn_us();
	return CALL_STARTED;
}

/* call_barrier - whether c runs alone (it writes or runs a command). */
static int
call_barrier(const struct turn_call *c)
{
	return c->kind == TURN_K_WRITE || c->kind == TURN_K_EXEC;
}

/* call_jail - the workspace's workers cannot start: the turn ends. */
static void
call_jail(struct broker *b, struct turn *t, struct turn_call *c)
{
	char why[700];

	snprintf(why, sizeof(why),
	    "the jail is unavailable: the %s workers for %.300s ended "
	    "before they were ready (shirod's log says why); no tool can "
	    "run in this workspace",
	    c->kind == TURN_K_EXEC ? "tool" : "fs", t->workspace);
	call_finish_error(b, t, c, why);
	turn_end(b, "jail", why);
}

/* call_run_once - one pass over the step's calls, starting what may
 * start; -1 when the turn ended. */
static int
call_run_once(struct broker *b, struct turn *t, uint64_t now)
{
	struct turn_step *s = call_step(t);
	size_t k, j;
	int rc;

	for (k = 0; s != NULL && k < s->ncalls; k++) {
		struct turn_call *c = &s->calls[k];
		int before = 0;

		if (c->state == TURN_C_DONE)
			continue;
		if (c->state == TURN_C_RUN || c->state == TURN_C_ASK) {
			if (call_barrier(c))
				break;
			continue;
		}
		for (j = 0; j < k; j++)
			before += s->calls[j].state != TURN_C_DONE;
		if (call_barrier(c) && before > 0)
			break;
		if (t->state == TURN_STOPPING) {
			call_finish_error(
			    b, t, c, "not run: the turn was interrupted first");
			continue;
		}
		if (c->kind == TURN_K_CHAT) {
			char *text;
			size_t len;

			(void)turn_serve_chat(b, c);
			text = c->out.text;
			len = c->out.len;
			c->out.text = NULL;
			call_finish(b, t, c, text, len, c->out.error);
			free(text);
			continue;
		}
		rc = call_start(b, t, c, now);
		if (rc == CALL_NO_JAIL) {
			call_jail(b, t, c);
			return -1;
		}
		if (call_barrier(c))
			break;
	}
	return 0;
}

/* call_run - start the calls whose turn it is (see turn_int.h). */
void
call_run(struct broker *b, struct turn *t, uint64_t now)
{
	if (t->in_run) {
		t->rerun = 1;
		return;
	}
	t->in_run = 1;
	do {
		t->rerun = 0;
		if (call_run_once(b, t, now) < 0 || b->turn != t)
			return;
	} while (t->rerun);
	t->in_run = 0;
	if (call_busy(t) == 0)
		turn_step_done(b, now);
}

/* call_chunk - a piece of a command's output: shown, not logged (the
 * result has it, clipped). */
void
call_chunk(
    struct broker *b, struct turn *t, struct turn_call *c, const struct msg *m)
{
	const char *text = "";
	size_t len = 0;
	struct msg *ev;

	(void)msg_get_str(m, "text", &text, &len);
	if (len == 0)
		return;
	ev = turn_event(t, "tool_output");
	msg_set_strn(ev, "text", text, len);
	{
		struct msg_val *d = msg_set_map(ev, "data");

		msg_val_set_str(d, "call", c->out.id);
		msg_val_set_str(d, "name", c->name);
		if (c->msg != TURN_NONE)
			msg_val_set_int(d, "call_message", (int64_t)c->msg);
	}
	out_publish(b, &ev);
}

/* call_worker_done - c's worker holds its job no more. */
static void
call_worker_done(struct broker *b, struct turn *t, struct turn_call *c)
{
	if (c->worker >= 0 && (unsigned)c->worker < b->pool.n)
		(void)pool_done(&b->pool.w[c->worker], c->job);
	t->tool_us += turn_us() - c->started_us;
}

/* call_result - a tool worker's RESULT for c. */
void
call_result(struct broker *b, struct turn *t, struct turn_call *c,
    const struct msg *m, uint64_t now)
{
	const char *text = NULL;
	size_t len = 0;
	json_t *doc, *ok;

	call_worker_done(b, t, c);
	if (msg_get_str(m, "text", &text, &len) != 0) {
		call_finish_error(b, t, c, "the worker's result had no text");
		goto out;
	}
	doc = json_loadb(text, len, JSON_REJECT_DUPLICATES, NULL);
	ok = json_object_get(doc, "ok");
	if (doc == NULL || !json_is_object(doc) || !json_is_boolean(ok)) {
		log_warnx("worker %d: a tool result that is not a result "
			  "document, refused",
		    c->worker);
		call_finish_error(b, t, c,
		    "the worker's result did not read as a result document");
	} else {
		call_finish(b, t, c, text, len, !json_is_true(ok));
	}
	json_decref(doc);
out:
	call_run(b, t, now);
}

/* call_fail - a tool worker's FAIL for c. */
void
call_fail(struct broker *b, struct turn *t, struct turn_call *c,
    const struct msg *m, uint64_t now)
{
	const char *code = "failed", *text = "";
	char why[4400];

	call_worker_done(b, t, c);
	(void)msg_get_str(m, "code", &code, NULL);
	(void)msg_get_str(m, "text", &text, NULL);
	if (c->interrupted == 1)
		snprintf(why, sizeof(why), "%s", CALL_INTERRUPTED);
	else if (c->interrupted == 2)
		snprintf(why, sizeof(why),
		    "timed out: the call did not end in time and was "
		    "stopped; its effects are unknown");
	else
		snprintf(
		    why, sizeof(why), "the call failed (%s): %s", code, text);
	call_finish_error(b, t, c, why);
	call_run(b, t, now);
}

/* call_lost - the worker of slot died under its calls. */
void
call_lost(struct broker *b, struct turn *t, int slot, uint64_t now)
{
	struct turn_step *s = call_step(t);
	size_t k;

	for (k = 0; s != NULL && k < s->ncalls; k++) {
		struct turn_call *c = &s->calls[k];

		if (c->state != TURN_C_RUN || c->worker != slot)
			continue;
		t->tool_us += turn_us() - c->started_us;
		call_finish_error(b, t, c,
		    c->interrupted == 1 ? CALL_INTERRUPTED
					: "the worker running this call died; "
					  "the call's effects are unknown");
	}
	call_run(b, t, now);
}

/* call_cancel - send CANCEL for c, whose answer is then awaited until
 * cancel_at; why is 1 (a person), 2 (its deadline). */
static void
call_cancel(struct broker *b, struct turn_call *c, int why, uint64_t now)
{
	struct msg *m;

	c->interrupted = why;
	if (c->canceling)
		return;
	c->canceling = 1;
	c->cancel_at = now + TURN_CANCEL_MS;
	if (c->worker < 0 || (unsigned)c->worker >= b->pool.n)
		return;
	m = msg_new(MSG_CANCEL);
	msg_set_int(m, "job", (int64_t)c->job);
	(void)msg_send(b->wsock, m, &b->pool.w[c->worker].ident);
	msg_destroy(&m);
}

/* call_overdue - deadlines of running calls and approvals. */
void
call_overdue(struct broker *b, struct turn *t, uint64_t now)
{
	struct turn_step *s = call_step(t);
	char why[200];
	size_t k;

	for (k = 0; s != NULL && k < s->ncalls; k++) {
		struct turn_call *c = &s->calls[k];

		if (c->state == TURN_C_ASK && now >= c->deadline) {
			snprintf(why, sizeof(why),
			    "nobody answered within %u s",
			    b->cfg.turns.approval_ms / 1000);
			call_resolved(b, t, c, "no", "timeout", why);
			call_deny(b, t, c, why);
		} else if (c->state == TURN_C_RUN && !c->canceling &&
		    now >= c->deadline) {
			call_cancel(b, c, 2, now);
		} else if (c->state == TURN_C_RUN && c->canceling &&
		    now >= c->cancel_at) {
			/* It did not answer its CANCEL: its process goes,
			 * and whatever it ran with it. */
			if (c->worker >= 0 && (unsigned)c->worker < b->pool.n)
				(void)pool_kill(&b->pool, &b->pool.w[c->worker],
				    "did not stop a canceled tool call", now);
			t->tool_us += turn_us() - c->started_us;
			call_finish_error(b, t, c,
			    c->interrupted == 1
				? CALL_INTERRUPTED
				: "timed out, and its worker did not stop: "
				  "it was killed; the call's effects are "
				  "unknown");
		}
	}
	call_run(b, t, now);
}

/* call_interrupt - a person stops the step's calls (see turn_int.h). */
size_t
call_interrupt(struct broker *b, struct turn *t, uint64_t now)
{
	struct turn_step *s = call_step(t);
	size_t k, n = 0;

	for (k = 0; s != NULL && k < s->ncalls; k++) {
		struct turn_call *c = &s->calls[k];

		switch (c->state) {
		case TURN_C_RUN:
			call_cancel(b, c, 1, now);
			n++;
			break;
		case TURN_C_ASK:
			call_resolved(b, t, c, "no", "interrupt",
			    "the step was interrupted");
			call_deny(b, t, c,
			    "the person interrupted the step before "
			    "answering");
			n++;
			break;
		case TURN_C_WAIT:
			call_finish_error(b, t, c,
			    "not run: the person interrupted the step before "
			    "this call began");
			n++;
			break;
		case TURN_C_DONE:
			break;
		}
	}
	return n;
}

/* call_abandon - the turn ends now: every unfinished call ends too. */
void
call_abandon(struct broker *b, struct turn *t)
{
	struct turn_step *s = call_step(t);
	size_t k;

	t->in_run = 1; /* nothing more starts */
	for (k = 0; s != NULL && k < s->ncalls; k++) {
		struct turn_call *c = &s->calls[k];

		if (c->state == TURN_C_RUN) {
			call_cancel(b, c, 3, 0);
			call_worker_done(b, t, c);
			call_finish_error(b, t, c,
			    "the turn ended while this call ran (shirod "
			    "stopped, or the turn was stopped); its effects "
			    "are unknown");
		} else if (c->state == TURN_C_ASK) {
			call_resolved(
			    b, t, c, "no", "shirod", "the turn ended first");
			call_deny(b, t, c, "the turn ended before an answer");
		} else if (c->state == TURN_C_WAIT) {
			call_finish_error(b, t, c,
			    "not run: the turn ended before this call began");
		}
	}
}

/* call_recover - at start: an echo for each tool line of the last
 * turn (from where the record says its tool lines begin) that has none
 * (its key says), and the day's spend. */
void
call_recover(struct broker *b)
{
	unsigned long long first = 0, uusd = 0, id, T = store_count(b->store);
	struct store_msg_info info;
	struct store_msg sm;
	struct buf line = BUF_INIT;
	char *v = NULL, day[16] = "", key[40];
	size_t len = 0, logged = 0, n;
	uint64_t eid;
	int dup, have;

	if (store_state_get(b->store, CALL_STATE_KEY, &v, &len) != 0)
		return;
	have = sscanf(v, "calls %llu", &first) == 1;
	{
		const char *sp = strstr(v, "\nspend ");

		if (sp != NULL &&
		    sscanf(sp, "\nspend %15s %llu", day, &uusd) == 2 &&
		    strcmp(day, "-") != 0) {
			snprintf(b->spend_day, sizeof(b->spend_day), "%s", day);
			b->spend_uusd = uusd;
		}
	}
	free(v);
	if (have && (first > T || T - first > CALL_RECOVER_MAX)) {
		log_warnx("the record of the last turn's tool calls names "
			  "message %llu of %llu; it is not read",
		    first, T);
		have = 0;
	}
	for (id = first; have && id < T; id++) {
		/* The index says the kind: only tool lines are read. */
		if (store_info(b->store, id, &info) != 0 ||
		    info.kind != STORE_KIND_TOOL ||
		    store_read(b->store, id, &sm) != 0)
			continue;
		if (sm.kind == STORE_KIND_TOOL) {
			n = strcspn(sm.text, " ");
			buf_reset(&line);
			buf_printf(&line,
			    "%llu %.*s: interrupted: shirod ended while this "
			    "call ran, so its outcome is unknown",
			    id, (int)(n > 100 ? 100 : n), sm.text);
			snprintf(key, sizeof(key), "echo.%llu", id);
			dup = 0;
			/* A call that was answered has its echo's key
			 * logged: this append then writes nothing. */
			if (serve_append_keyed(b, STORE_KIND_ECHO, line.data,
				line.len, key, &eid, &dup) == 0 &&
			    !dup)
				logged++;
		}
		store_msg_free(&sm);
	}
	buf_free(&line);
	if (logged > 0)
		log_info("%zu tool call%s interrupted when shirod last ended: "
			 "logged as such",
		    logged, logged == 1 ? " was" : "s were");
	call_state_save(b, TURN_NONE);
}
