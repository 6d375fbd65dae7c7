/*
 * turn.c - a turn from the client's side: send a message that asks for
 * one, show what the daemon streams, and end with the turn's outcome
 * (docs/client.md, "shiro -p").
 *
 * The daemon's events of a turn carry the id of the message that
 * started it: `turn` (it started), `text` and `thinking` (deltas),
 * `tool` (a tool call and its result), `notice`, and `done` (the code,
 * the whole reply, the usage, the ids of every message it answered).
 * A message sent while another turn runs is handed to that turn: the
 * `notice` that says so names it, and from then on this client follows
 * that turn.  With --json every event becomes one line:
 *
 *	{"ev":"text","text":"..."}       {"ev":"thinking","text":"..."}
 *	{"ev":"memory","what":"node",...} {"ev":"notice","code":"...",...}
 *	{"ev":"error","code":"...","text":"..."}
 *	{"ev":"done","outcome":"ok","exit":0,"id":..,"text":"...",
 *	 "usage":{"input":..,"output":..,"cache_read":..,"cache_write":..}}
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proto/buf.h"
#include "proto/err.h"

#include "cmd.h"
#include "json_out.h"
#include "render.h"

/* cmd_turn_exit - the exit code of a turn's end code. */
int
cmd_turn_exit(const char *code)
{
	if (code == NULL || strcmp(code, "ok") == 0)
		return SHIRO_EXIT_OK;
	if (strcmp(code, "unreachable") == 0)
		return SHIRO_EXIT_PROVIDER;
	return cmd_error_exit(code);
}

/* turn_json_keys - the keys of body but ev, into an open object. */
static void
turn_json_keys(struct json_out *j, const struct msg_val *body, const char *skip)
{
	size_t k;

	for (k = 0; body != NULL && k < body->u.m.n; k++) {
		const char *key = body->u.m.kv[k].key;

		if (strcmp(key, "ev") == 0 || strcmp(key, "seq") == 0 ||
		    (skip != NULL && strcmp(key, skip) == 0))
			continue;
		json_out_key(j, key);
		json_out_val(j, body->u.m.kv[k].val);
	}
}

/* turn_json_line - one event as a line of -p --json: ev renamed as ev,
 * with what (the daemon's event name) when it is a memory event. */
static void
turn_json_line(const struct msg *m, const char *ev, const char *what)
{
	struct buf b = BUF_INIT;
	struct json_out j;

	json_out_init(&j, &b);
	json_out_begin_object(&j);
	json_out_key(&j, "ev");
	json_out_str(&j, ev);
	if (what != NULL) {
		json_out_key(&j, "what");
		json_out_str(&j, what);
	}
	turn_json_keys(&j, msg_body(m), NULL);
	json_out_end_object(&j);
	printf("%s\n", b.data);
	buf_free(&b);
}

/* turn_usage - the done event's usage map into j (zeros when absent). */
static void
turn_usage(struct json_out *j, const struct msg_val *data)
{
	static const char *const keys[] = {
	    "input", "output", "cache_read", "cache_write"};
	const struct msg_val *u = data ? msg_val_get(data, "usage") : NULL;
	int64_t v;
	size_t k;

	json_out_key(j, "usage");
	json_out_begin_object(j);
	for (k = 0; k < 4; k++) {
		v = 0;
		if (u != NULL)
			(void)msg_val_int(u, keys[k], &v);
		json_out_key(j, keys[k]);
		json_out_int(j, v);
	}
	json_out_end_object(j);
}

/* turn_done_line - the closing line of -p --json. */
static void
turn_done_line(const struct cmd_turn *t, const char *code, const char *text,
    const struct msg_val *data)
{
	static const char *const keys[] = {
	    "steps", "stop", "provider", "model", "messages"};
	struct buf b = BUF_INIT;
	struct json_out j;
	size_t k;

	json_out_init(&j, &b);
	json_out_begin_object(&j);
	json_out_key(&j, "ev");
	json_out_str(&j, "done");
	json_out_key(&j, "outcome");
	json_out_str(&j, code);
	json_out_key(&j, "exit");
	json_out_int(&j, t->exit_code);
	json_out_key(&j, "id");
	json_out_uint(&j, t->id);
	json_out_key(&j, "text");
	json_out_str(&j, strcmp(code, "ok") == 0 && text ? text : "");
	turn_usage(&j, data);
	for (k = 0; data != NULL && k < sizeof(keys) / sizeof(keys[0]); k++) {
		const struct msg_val *v = msg_val_get(data, keys[k]);

		if (v == NULL)
			continue;
		json_out_key(&j, keys[k]);
		json_out_val(&j, v);
	}
	json_out_end_object(&j);
	printf("%s\n", b.data);
	buf_free(&b);
}

/* turn_answers - whether the done event m answers message id. */
static int
turn_answers(const struct msg *m, uint64_t id, uint64_t turn)
{
	const struct msg_val *d, *ms;
	uint64_t eid;
	size_t k;

	if (msg_get_uint(m, "id", &eid) == 0 && (eid == id || eid == turn))
		return 1;
	if (msg_get_map(m, "data", &d) != 0 ||
	    (ms = msg_val_get(d, "messages")) == NULL || ms->type != MSG_V_ARR)
		return 0;
	for (k = 0; k < ms->u.a.n; k++)
		if (ms->u.a.items[k]->type == MSG_V_INT &&
		    (uint64_t)ms->u.a.items[k]->u.i == id)
			return 1;
	return 0;
}

/* turn_failed - say why the turn ended without a reply (not --json);
 * the daemon's words go through render_puts, so they cannot drive the
 * terminal. */
static void
turn_failed(const struct cmd_turn *t, const char *code, const char *text)
{
	struct buf b = BUF_INIT;

	if (t->printed && !t->printed_nl)
		fputc('\n', stdout);
	fflush(stdout);
	if (t->exit_code == SHIRO_EXIT_NO_MODEL && text == NULL)
		buf_adds(&b,
		    "shiro: no model is configured for turns, so nothing "
		    "answers; the message was logged and is summarized. "
		    "See docs/providers.md.\n");
	else if (t->exit_code == SHIRO_EXIT_NO_MODEL)
		buf_printf(&b, "shiro: %s\n", text);
	else
		buf_printf(&b, "shiro: the turn failed (%s)%s%s\n",
		    code != NULL ? code : "error", text != NULL ? ": " : "",
		    text != NULL ? text : "");
	render_puts(stderr, b.data);
	buf_free(&b);
}

/* turn_end - the turn ended with code (and text, data). */
static void
turn_end(struct cmd_turn *t, const char *code, const char *text,
    const struct msg_val *data)
{
	t->done = 1;
	t->exit_code = cmd_turn_exit(code);
	if (t->thought && isatty(STDERR_FILENO))
		fputs("\033[0m\n", stderr);
	t->thought = 0;
	if (t->json)
		turn_done_line(t, code, text, data);
	else if (t->exit_code != SHIRO_EXIT_OK)
		turn_failed(t, code, text);
	fflush(stdout);
}

/* turn_adopt - a notice that this client's message was handed to the
 * running turn: follow that one. */
static void
turn_adopt(struct cmd_turn *t, const struct msg *m)
{
	const struct msg_val *d;
	int64_t handed;
	uint64_t id;

	if (msg_get_map(m, "data", &d) == 0 &&
	    msg_val_int(d, "message", &handed) == 0 &&
	    (uint64_t)handed == t->id && msg_get_uint(m, "id", &id) == 0)
		t->turn = id;
}

/* turn_show - show one event of the turn (not the end). */
static void
turn_show(
    struct cmd_turn *t, const struct msg *m, const char *name, const char *text)
{
	if (t->json) {
		if (strcmp(name, "text") == 0 || strcmp(name, "thinking") == 0)
			turn_json_line(m, name, NULL);
		else
			turn_json_line(m, "notice", name);
		return;
	}
	if (strcmp(name, "text") == 0 && text != NULL) {
		if (t->thought && isatty(STDERR_FILENO))
			fputs("\033[0m\n", stderr);
		t->thought = 0;
		render_puts(stdout, text);
		t->printed = 1;
		t->printed_nl =
		    text[0] != '\0' && text[strlen(text) - 1] == '\n';
	} else if (strcmp(name, "thinking") == 0 && text != NULL &&
	    isatty(STDERR_FILENO)) {
		/* Thinking is shown to a person, dim, and never on stdout. */
		if (!t->thought)
			fputs("\033[2m", stderr);
		render_puts(stderr, text);
		t->thought = 1;
	} else if (strcmp(name, "notice") == 0 && text != NULL) {
		fflush(stdout);
		fputs("shiro: ", stderr);
		render_puts(stderr, text);
		fputc('\n', stderr);
	}
}

/* cmd_turn_take - route m to the turn t (see cmd.h). */
int
cmd_turn_take(struct cmd_turn *t, const struct msg *m)
{
	const char *name = "", *text = NULL, *code = NULL, *kind = "";
	const struct msg_val *data = NULL;
	enum msg_type type = msg_type(m);
	uint64_t rid = 0, id = 0;

	if (t->rid == 0 || t->done || (type != MSG_EVENT && type != MSG_ERROR))
		return 0;
	(void)msg_get_str(m, "text", &text, NULL);
	(void)msg_get_str(m, "code", &code, NULL);
	if (type == MSG_ERROR) {
		if (msg_get_uint(m, "rid", &rid) != 0 || rid != t->rid)
			return 0;
		if (t->json)
			turn_json_line(m, "error", NULL);
		turn_end(t, code != NULL ? code : "error", text, NULL);
		return 1;
	}
	(void)msg_get_str(m, "ev", &name, NULL);
	(void)msg_get_str(m, "kind", &kind, NULL);
	(void)msg_get_map(m, "data", &data);
	if (strcmp(name, "message") == 0) {
		/* The turn's own message, logged: not news to its sender;
		 * the agent's reply was streamed already. */
		if ((strcmp(kind, "user") == 0 && text != NULL &&
			t->text != NULL && strcmp(text, t->text) == 0 &&
			!t->echoed) ||
		    strcmp(kind, "shiro") == 0 || strcmp(kind, "tool") == 0) {
			t->echoed |= strcmp(kind, "user") == 0;
			return t->acked;
		}
		return 0;
	}
	if (strcmp(name, "node") == 0 || strcmp(name, "batch") == 0 ||
	    strcmp(name, "failure") == 0) {
		if (!t->json || !t->acked)
			return 0;
		turn_json_line(m, "memory", name);
		return 1;
	}
	if (!t->acked)
		return 0;
	if (strcmp(name, "notice") == 0 && code != NULL &&
	    strcmp(code, "handed") == 0)
		turn_adopt(t, m);
	if (strcmp(name, "done") == 0) {
		if (!turn_answers(m, t->id, t->turn))
			return 0;
		turn_end(t, code != NULL ? code : "ok", text, data);
		return 1;
	}
	if (msg_get_uint(m, "id", &id) != 0 || (id != t->id && id != t->turn))
		return 0;
	turn_show(t, m, name, text);
	fflush(stdout);
	return 1;
}

/* turn_lost - the turn's wait failed: say why; the exit code. */
static int
turn_lost(const struct cmd_turn *t, int rc)
{
	struct shiro s;

	memset(&s, 0, sizeof(s));
	s.home = (char *)t->home;
	s.endpoint = (char *)t->endpoint;
	return cmd_lost(&s, rc);
}

/* cmd_turn - run one turn on c (see cmd.h). */
int
cmd_turn(struct conn *c, struct cmd_turn *t, const char *text)
{
	struct msg *req = NULL, *ans = NULL;
	const char *code = "error", *etext = NULL;
	int rc;

	t->rid = c->next_rid;
	t->id = t->turn = 0;
	t->acked = t->done = t->printed = t->printed_nl = t->echoed = 0;
	t->thought = 0;
	t->text = text;
	t->exit_code = SHIRO_EXIT_OK;
	if (t->key[0] == '\0') {
		char *key = cmd_key();

		snprintf(t->key, sizeof(t->key), "%s", key);
		free(key);
	}
	req = cmd_new_send("user", text, 1, t->key);
	rc = conn_request(c, req, CMD_REQUEST_MS, cmd_stop_flag(), &ans);
	if (rc < 0) {
		rc = turn_lost(t, rc);
		goto out;
	}
	if (msg_type(ans) == MSG_ERROR) {
		(void)msg_get_str(ans, "code", &code, NULL);
		(void)msg_get_str(ans, "text", &etext, NULL);
		if (t->json)
			turn_json_line(ans, "error", NULL);
		turn_end(t, code, etext, NULL);
		rc = t->exit_code;
		goto out;
	}
	if (msg_type(ans) != MSG_ACK || msg_get_uint(ans, "id", &t->id) < 0) {
		fprintf(stderr,
		    "shiro: shirod answered with %s, not an acknowledgement.\n",
		    msg_type_name(msg_type(ans)));
		rc = SHIRO_EXIT_FAIL;
		goto out;
	}
	t->turn = t->id;
	t->acked = 1;
	/* The turn's events come until it ends; the daemon's heartbeat
	 * tells a long model call from a dead daemon. */
	while (!t->done) {
		rc = conn_pump(c, -1, SHIRO_PING_MS);
		if (rc == -SHIRO_ERR_AGAIN && *cmd_stop_flag()) {
			rc = turn_lost(t, -SHIRO_ERR_CANCELED);
			goto out;
		}
		if (rc < 0 && rc != -SHIRO_ERR_AGAIN) {
			rc = turn_lost(t, rc);
			goto out;
		}
	}
	if (t->printed && !t->printed_nl && !t->json)
		fputc('\n', stdout);
	rc = t->exit_code;
	if (fflush(stdout) != 0 && rc == SHIRO_EXIT_OK)
		rc = SHIRO_EXIT_FAIL;
out:
	t->rid = 0;
	t->text = NULL;
	msg_destroy(&req);
	msg_destroy(&ans);
	return rc;
}

/* turn_event - the connection handler of a headless turn. */
static void
turn_event(void *arg, const struct msg *ev)
{
	(void)cmd_turn_take(arg, ev);
}

/* cmd_print - the headless turn: send text, print the reply. */
int
cmd_print(const struct shiro *s, const char *text)
{
	struct cmd_turn t;
	struct conn_handler h = {turn_event, &t};
	struct conn *c = NULL;
	int rc;

	memset(&t, 0, sizeof(t));
	t.json = s->json;
	t.home = s->home;
	t.endpoint = s->endpoint;
	if (strlen(text) > MSG_MAX_TEXT) {
		fprintf(stderr,
		    "shiro -p: the text is over %u bytes, the most "
		    "one message holds; split it.\n",
		    MSG_MAX_TEXT);
		return SHIRO_EXIT_USAGE;
	}
	cmd_catch_signals();
	rc = cmd_connect(s, 1, 0, &h, &c);
	if (rc != SHIRO_EXIT_OK)
		return rc;
	rc = cmd_turn(c, &t, text);
	if (rc != SHIRO_EXIT_UNREACHABLE && rc != SHIRO_EXIT_INTERRUPTED)
		conn_bye(c);
	conn_close(&c);
	return rc;
}
