/*
 * turn.c - a turn from the client's side: send a message that asks for
 * one, show what the daemon streams, and end with the turn's outcome
 * (docs/client.md, "shiro -p").
 *
 * The daemon's events of a turn carry the id of the message that
 * started it: `turn` (it started), `text` and `thinking` (deltas),
 * `tool_call`, `tool_output`, `tool_result`, `tool_error` and
 * `tool_denied` (a tool call, its command's output as it comes, its
 * outcome), `approval` (a call asks; resolved), `notice`, and `done`
 * (the code, the whole reply, the usage, the ids of every message it
 * answered).  A message sent while another turn runs is handed to that
 * turn: the `notice` that says so names it, and from then on this
 * client follows that turn.  With --json every event becomes one line:
 *
 *	{"ev":"text","text":"..."}       {"ev":"thinking","text":"..."}
 *	{"ev":"tool_call","text":"bash {...}","data":{...}}  (and the
 *	 other tool_ events by their names)
 *	{"ev":"memory","what":"node",...} {"ev":"notice","what":"...",...}
 *	{"ev":"error","code":"...","text":"..."}
 *	{"ev":"done","outcome":"ok","exit":0,"id":..,"text":"...",
 *	 "usage":{"input":..,"output":..,"cache_read":..,"cache_write":..}}
 *
 * A person at a terminal answers the turn's approvals on it; Ctrl-C
 * interrupts the running command (the turn goes on), a second Ctrl-C
 * the turn, a third stops waiting.
 */
#include <errno.h>
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
	if (strcmp(code, "stopped") == 0 || strcmp(code, "stopping") == 0)
		return SHIRO_EXIT_STOPPED;
	if (strcmp(code, "limit") == 0)
		return SHIRO_EXIT_LIMIT;
	if (strcmp(code, "jail") == 0)
		return SHIRO_EXIT_JAIL;
	return cmd_error_exit(code);
}

/* turn_is_tool_event - an event of a tool call, by its name. */
static int
turn_is_tool_event(const char *name)
{
	return strcmp(name, "tool_call") == 0 ||
	    strcmp(name, "tool_output") == 0 ||
	    strcmp(name, "tool_result") == 0 ||
	    strcmp(name, "tool_error") == 0 || strcmp(name, "tool_denied") == 0;
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
	static const char *const keys[] = {"steps", "stop", "provider", "model",
	    "messages", "tool_calls", "denied", "limit", "workspace",
	    "cost_uusd", "tool_us", "model_us"};
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
	t->asking = 0;
	t->exit_code = cmd_turn_exit(code);
	if (data != NULL && msg_val_int(data, "denied", &t->denied) == 0 &&
	    t->denied > 0 && t->exit_code == SHIRO_EXIT_OK)
		t->exit_code = SHIRO_EXIT_DENIED;
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

/* turn_ask - an approval of this turn waits: show what it asks, and
 * on a terminal ask the person for the answer. */
static void
turn_ask(struct cmd_turn *t, const struct msg *m)
{
	const struct msg_val *d = NULL;
	const char *name = "?", *reason = "", *subject = "";
	struct buf b = BUF_INIT;
	int64_t approval = 0;

	(void)msg_get_map(m, "data", &d);
	(void)msg_get_str(m, "text", &subject, NULL);
	if (d != NULL) {
		(void)msg_val_int(d, "approval", &approval);
		if (msg_val_str(d, "name") != NULL)
			name = msg_val_str(d, "name");
		if (msg_val_str(d, "reason") != NULL)
			reason = msg_val_str(d, "reason");
	}
	buf_printf(&b, "shiro: approval %lld: %s asks (%s):\n%s",
	    (long long)approval, name, reason, subject);
	if (b.len > 0 && b.data[b.len - 1] != '\n')
		buf_addc(&b, '\n');
	if (t->interactive && approval > 0) {
		t->asking = (uint64_t)approval;
		buf_adds(&b,
		    "allow it? y (yes), a (always, for this shirod run), n "
		    "[reason] (no): ");
	} else {
		buf_printf(&b,
		    "(answer it from an attached shiro: /approve %lld yes, "
		    "always or no)\n",
		    (long long)approval);
	}
	fflush(stdout);
	render_puts(stderr, b.data);
	fflush(stderr);
	buf_free(&b);
}

/* turn_show - show one event of the turn (not the end). */
static void
turn_show(
    struct cmd_turn *t, const struct msg *m, const char *name, const char *text)
{
	const char *code = "";
	const struct msg_val *d = NULL;

	(void)msg_get_str(m, "code", &code, NULL);
	if (strcmp(name, "tool_call") == 0)
		t->calls_running++;
	else if ((strcmp(name, "tool_result") == 0 ||
		     strcmp(name, "tool_error") == 0 ||
		     strcmp(name, "tool_denied") == 0) &&
	    t->calls_running > 0)
		t->calls_running--;
	if (strcmp(name, "approval") == 0 && strcmp(code, "resolved") == 0 &&
	    msg_get_map(m, "data", &d) == 0) {
		int64_t a = 0;

		if (msg_val_int(d, "approval", &a) == 0 &&
		    (uint64_t)a == t->asking && t->asking != 0) {
			t->asking = 0;
			if (!t->json) {
				fputs("\nshiro: answered elsewhere (", stderr);
				render_puts(stderr,
				    msg_val_str(d, "answer")
					? msg_val_str(d, "answer")
					: "?");
				fputs(")\n", stderr);
			}
		}
	}
	if (t->json) {
		if (strcmp(name, "text") == 0 ||
		    strcmp(name, "thinking") == 0 || turn_is_tool_event(name))
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
		if (t->ws_hint && strcmp(code, "workspace") == 0)
			fprintf(stderr, "%s\n", CMD_WS_HINT);
	} else if (strcmp(name, "approval") == 0 && strcmp(code, "ask") == 0) {
		turn_ask(t, m);
	} else if (turn_is_tool_event(name)) {
		struct buf b = BUF_INIT;

		/* The work goes to stderr: stdout keeps the reply alone. */
		if (t->thought && isatty(STDERR_FILENO))
			fputs("\033[0m\n", stderr);
		t->thought = 0;
		fflush(stdout);
		render_event(&b, m);
		render_puts(stderr, b.data != NULL ? b.data : "");
		buf_free(&b);
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
		    strcmp(kind, "shiro") == 0 || strcmp(kind, "tool") == 0 ||
		    strcmp(kind, "echo") == 0) {
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

/* turn_read_line - one line from fd (a byte at a time: nothing past
 * its newline is taken from a reader that comes after); 0, or -1 at the
 * end of the input. */
static int
turn_read_line(int fd, char *line, size_t size)
{
	size_t n = 0;
	ssize_t r;
	char ch;

	for (;;) {
		r = read(fd, &ch, 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return n > 0 ? 0 : -1;
		if (ch == '\n')
			break;
		if (n + 1 < size)
			line[n++] = ch;
	}
	line[n] = '\0';
	return 0;
}

/* turn_answer - the person typed an answer to t->asking: send it. */
static void
turn_answer(struct conn *c, struct cmd_turn *t)
{
	struct msg *req, *ans = NULL;
	const char *answer = NULL, *reason = NULL, *code = "", *etext = "";
	char line[1100], *w = line;

	if (turn_read_line(STDIN_FILENO, line, sizeof(line)) != 0) {
		/* No more input: nobody here answers. */
		t->asking = 0;
		return;
	}
	while (*w == ' ' || *w == '\t')
		w++;
	if (w[0] == 'y' || w[0] == 'Y')
		answer = "yes";
	else if (w[0] == 'a' || w[0] == 'A')
		answer = "always";
	else if (w[0] == 'n' || w[0] == 'N') {
		answer = "no";
		reason = w + strcspn(w, " \t");
		while (*reason == ' ' || *reason == '\t')
			reason++;
		if (*reason == '\0')
			reason = NULL;
	}
	if (answer == NULL) {
		fputs("y, a or n [reason]: ", stderr);
		fflush(stderr);
		return;
	}
	req = msg_new(MSG_APPROVE);
	msg_set_int(req, "approval", (int64_t)t->asking);
	msg_set_str(req, "answer", answer);
	if (reason != NULL) {
		size_t n = strlen(reason);

		/* At most 1,024 bytes, cut between UTF-8 characters. */
		if (n > 1024) {
			n = 1024;
			while (
			    n > 0 && ((unsigned char)reason[n] & 0xc0) == 0x80)
				n--;
		}
		msg_set_strn(req, "reason", reason, n);
	}
	t->asking = 0;
	if (conn_request(c, req, CMD_REQUEST_MS, NULL, &ans) == 0 &&
	    msg_type(ans) == MSG_ERROR) {
		(void)msg_get_str(ans, "code", &code, NULL);
		(void)msg_get_str(ans, "text", &etext, NULL);
		fputs("shiro: the answer was not taken: ", stderr);
		render_puts(stderr, etext);
		fputc('\n', stderr);
	}
	msg_destroy(&req);
	msg_destroy(&ans);
}

/* turn_interrupt - Ctrl-C during the turn: the first one stops the
 * running command (the turn goes on), the next one the turn. */
static void
turn_interrupt(struct conn *c, struct cmd_turn *t)
{
	const char *what =
	    t->interrupts == 0 && (t->calls_running > 0 || t->asking)
	    ? "command"
	    : "turn";
	struct msg *req, *ans = NULL;

	t->interrupts++;
	for (;;) {
		req = msg_new(MSG_INTERRUPT);
		msg_set_str(req, "what", what);
		msg_set_int(req, "id", (int64_t)t->turn);
		if (!t->json) {
			fputs(strcmp(what, "command") == 0
				? "\nshiro: interrupting the command (Ctrl-C "
				  "again stops the turn)\n"
				: "\nshiro: stopping the turn (Ctrl-C again "
				  "stops waiting)\n",
			    stderr);
			fflush(stderr);
		}
		if (conn_request(c, req, CMD_REQUEST_MS, NULL, &ans) != 0 ||
		    msg_type(ans) != MSG_ERROR || strcmp(what, "turn") == 0) {
			msg_destroy(&req);
			msg_destroy(&ans);
			return;
		}
		/* No command runs after all: stop the turn itself. */
		msg_destroy(&req);
		msg_destroy(&ans);
		what = "turn";
		t->interrupts = 2;
	}
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
	t->asking = 0;
	t->calls_running = 0;
	t->denied = 0;
	t->interrupts = 0;
	req = cmd_new_send("user", text, 1, t->key, t->cwd);
	if (t->approvals != NULL)
		msg_set_str(req, "approvals", t->approvals);
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
		rc = conn_pump(c, t->asking ? STDIN_FILENO : -1, SHIRO_PING_MS);
		if (rc == 1) {
			turn_answer(c, t);
			continue;
		}
		/* A signal that came while events were handled, not in the
		 * poll, is seen here too: each wait is at most
		 * SHIRO_PING_MS. */
		if ((rc == 0 || rc == -SHIRO_ERR_AGAIN) && *cmd_stop_flag()) {
			/* SIGTERM, SIGHUP or a third Ctrl-C: stop waiting
			 * (the turn goes on in the daemon). */
			if (cmd_terminated() || t->interrupts >= 2) {
				rc = turn_lost(t, -SHIRO_ERR_CANCELED);
				goto out;
			}
			*cmd_stop_flag() = 0;
			turn_interrupt(c, t);
			continue;
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
	char *cwd = NULL;
	int rc;

	memset(&t, 0, sizeof(t));
	t.json = s->json;
	t.home = s->home;
	t.endpoint = s->endpoint;
	/* Headless: nobody answers here, so a call that asks is denied,
	 * unless --yolo allows it (never the guard or a deny rule). */
	t.approvals = s->yolo ? "yolo" : "deny";
	if (strlen(text) > MSG_MAX_TEXT) {
		fprintf(stderr,
		    "shiro -p: the text is over %u bytes, the most "
		    "one message holds; split it.\n",
		    MSG_MAX_TEXT);
		return SHIRO_EXIT_USAGE;
	}
	rc = cmd_workspace(s, "-p", &cwd);
	if (rc != SHIRO_EXIT_OK)
		return rc;
	t.cwd = cwd;
	t.ws_hint = cwd == NULL;
	cmd_catch_signals();
	rc = cmd_connect(s, 1, 0, &h, &c);
	if (rc != SHIRO_EXIT_OK)
		goto out;
	rc = cmd_turn(c, &t, text);
	if (rc != SHIRO_EXIT_UNREACHABLE && rc != SHIRO_EXIT_INTERRUPTED)
		conn_bye(c);
	conn_close(&c);
out:
	free(cwd);
	return rc;
}
