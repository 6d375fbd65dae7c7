/*
 * run.c - shiro run and shiro tool against a shirod on another machine:
 * one RUN request, its output as it streams, its result (see run.h;
 * docs/remote.md, "Commands in the build box's workspace").
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proto/buf.h"
#include "proto/err.h"
#include "proto/xmalloc.h"

#include "cmd.h"
#include "conn.h"
#include "render.h"
#include "run.h"

/* What a RUN's answers left. */
struct run_state {
	const char *tool;
	int is_cmd; /* shiro run: output streams, the command's status */
	int tty; /* stdout is a terminal: escape the box's bytes */
	uint64_t rid;
	int done;
	int rc;
	int interrupted; /* an INTERRUPT went out */
	struct conn *c;
	uint64_t outputs, said; /* output REPLYs read, and said read */
};

/* Output REPLYs read between two PINGs saying so: shirod sends at most
 * RUNS_WINDOW (32) before it hears (docs/protocol.md, RUN). */
#define RUN_SAY_READ 8

/* run_bool - whether key of doc is true. */
static int
run_bool(const struct msg_val *doc, const char *key)
{
	const struct msg_val *v = msg_val_get(doc, key);

	return v != NULL && v->type == MSG_V_BOOL && v->u.b;
}

/* run_write - the box's bytes to stdout: as they are into a pipe or a
 * file, escaped on a terminal (they never drive it). */
static void
run_write(const struct run_state *st, const char *text, size_t len)
{
	struct buf safe = BUF_INIT;

	if (!st->tty) {
		fwrite(text, 1, len, stdout);
	} else {
		render_escape(&safe, text, len);
		if (safe.len > 0)
			fwrite(safe.data, 1, safe.len, stdout);
		buf_free(&safe);
	}
	fflush(stdout);
}

/* run_final - the RUN's last REPLY: its exit code (see run.h). */
static int
run_final(struct run_state *st, const struct msg_val *doc)
{
	const char *result = msg_val_str(doc, "result");
	const char *error = msg_val_str(doc, "error");
	int64_t code = 0, sig = 0, dropped = 0;
	struct buf b = BUF_INIT;

	if (msg_val_int(doc, "dropped", &dropped) == 0 && dropped > 0)
		fprintf(stderr,
		    "shiro %s: %lld bytes of output were not shown (past "
		    "what shirod sends, or this client read too slowly)\n",
		    st->is_cmd ? "run" : "tool", (long long)dropped);
	if (!st->is_cmd) {
		/* The result document, as the local shiro tool prints it. */
		render_escape(&b, result != NULL ? result : "",
		    result != NULL ? strlen(result) : 0);
		buf_addc(&b, '\n');
		fwrite(b.data, 1, b.len, stdout);
		buf_free(&b);
		fflush(stdout);
		return SHIRO_EXIT_OK;
	}
	if (run_bool(doc, "ok")) {
		if (msg_val_int(doc, "signal", &sig) == 0 && sig > 0 &&
		    sig < 128)
			return 128 + (int)sig;
		if (msg_val_int(doc, "exit_code", &code) == 0 && code >= 0 &&
		    code <= 255)
			return (int)code;
		return SHIRO_EXIT_FAIL;
	}
	render_printf(&b, "shiro run: %s\n",
	    error != NULL ? error : "the command failed on shirod's machine");
	fputs(b.data, stderr);
	buf_free(&b);
	if (run_bool(doc, "timed_out"))
		return 124; /* as shiro-jail's timeout */
	if (run_bool(doc, "interrupted") || st->interrupted)
		return SHIRO_EXIT_INTERRUPTED;
	return 125; /* as shiro-jail when the jail cannot be set up */
}

/* run_error - an ERROR ending the RUN: said on stderr; its exit code. */
static int
run_error(struct run_state *st, const struct msg *m)
{
	const char *code = "error", *text = "";
	struct buf b = BUF_INIT;

	(void)msg_get_str(m, "code", &code, NULL);
	(void)msg_get_str(m, "text", &text, NULL);
	if (strcmp(code, "run") == 0)
		render_printf(&b,
		    "shiro %s: it ended on shirod's machine without a "
		    "result: %s\n",
		    st->is_cmd ? "run" : "tool", text);
	else
		render_printf(&b, "shiro %s: shirod did not run it (%s): %s\n",
		    st->is_cmd ? "run" : "tool", code, text);
	fputs(b.data, stderr);
	buf_free(&b);
	if (st->interrupted && strcmp(code, "run") == 0)
		return SHIRO_EXIT_INTERRUPTED;
	if (strcmp(code, "tool") == 0 || strcmp(code, "args") == 0 ||
	    strcmp(code, "cwd") == 0)
		return SHIRO_EXIT_USAGE;
	if (strcmp(code, "jail") == 0)
		return SHIRO_EXIT_JAIL;
	if (strcmp(code, "stopping") == 0)
		return SHIRO_EXIT_UNREACHABLE;
	return SHIRO_EXIT_FAIL;
}

/* run_say_read - tell shirod how much output was read (and written
 * out): it sends the next only then, so a slow reader is never flooded. */
static void
run_say_read(struct run_state *st)
{
	struct msg *m = msg_new(MSG_PING);

	msg_set_int(m, "rid", (int64_t)st->c->next_rid++);
	msg_set_int(m, "run", (int64_t)st->rid);
	msg_set_int(m, "read", (int64_t)st->outputs);
	/* A full queue: the next one says it (the count only grows). */
	if (msg_send(st->c->sock, m, NULL) == 0)
		st->said = st->outputs;
	msg_destroy(&m);
}

/* run_take - one answer with the RUN's rid: output, the end, or an
 * ERROR; anything else is not the RUN's. */
static void
run_take(struct run_state *st, const struct msg *m)
{
	const struct msg_val *doc = NULL;
	const char *out;
	uint64_t rid = 0;

	if (st->done || msg_get_uint(m, "rid", &rid) != 0 || rid != st->rid)
		return;
	if (msg_type(m) == MSG_ERROR) {
		st->rc = run_error(st, m);
		st->done = 1;
		return;
	}
	if (msg_type(m) != MSG_REPLY || msg_get_map(m, "doc", &doc) != 0)
		return;
	out = msg_val_str(doc, "output");
	if (out != NULL) {
		run_write(st, out, strlen(out));
		if (++st->outputs - st->said >= RUN_SAY_READ)
			run_say_read(st);
		return;
	}
	if (msg_val_get(doc, "result") == NULL)
		return; /* the answer to the INTERRUPT has its own rid */
	st->rc = run_final(st, doc);
	st->done = 1;
}

/* run_event - the connection's handler: the RUN's later answers. */
static void
run_event(void *arg, const struct msg *m)
{
	if (msg_type(m) != MSG_EVENT)
		run_take(arg, m);
}

/* run_interrupt - Ctrl-C (or SIGTERM): ask shirod to stop the RUN. */
static void
run_interrupt(struct conn *c, struct run_state *st)
{
	struct msg *req = msg_new(MSG_INTERRUPT), *ans = NULL;

	msg_set_str(req, "what", "run");
	msg_set_int(req, "id", (int64_t)st->rid);
	st->interrupted = 1;
	fprintf(stderr, "shiro %s: interrupting it on shirod's machine\n",
	    st->is_cmd ? "run" : "tool");
	/* Its answer comes before the RUN's end; a failure shows later. */
	(void)conn_request(c, req, 10000, NULL, &ans);
	msg_destroy(&ans);
	msg_destroy(&req);
}

/* run_remote - see run.h. */
int
run_remote(const struct shiro *s, const char *tool, const char *args,
    const char *workspace, int is_cmd)
{
	struct run_state st;
	struct conn_handler h = {run_event, &st};
	struct conn *c = NULL;
	struct msg *req, *ans = NULL;
	volatile sig_atomic_t *stop = cmd_stop_flag();
	int rc;

	memset(&st, 0, sizeof(st));
	st.tool = tool;
	st.is_cmd = is_cmd;
	st.tty = isatty(STDOUT_FILENO);
	cmd_catch_signals();
	rc = cmd_connect(s, 0, 0, &h, &c);
	if (rc != SHIRO_EXIT_OK)
		return rc;
	st.c = c;
	req = msg_new(MSG_RUN);
	msg_set_str(req, "tool", tool);
	msg_set_str(req, "args", args);
	msg_set_str(req, "cwd", workspace);
	/* conn_request gives the request the connection's next rid. */
	st.rid = c->next_rid;
	rc = conn_request(c, req, -1, stop, &ans);
	msg_destroy(&req);
	while (rc == 0 || rc == -SHIRO_ERR_CANCELED || rc == -SHIRO_ERR_AGAIN) {
		if (ans != NULL) {
			run_take(&st, ans);
			msg_destroy(&ans);
		}
		if (st.done)
			break;
		if (*stop) {
			*stop = 0;
			if (st.interrupted) {
				/* A second one: leave without the answer. */
				fprintf(stderr,
				    "shiro %s: left before shirod said the "
				    "call ended\n",
				    is_cmd ? "run" : "tool");
				rc = SHIRO_EXIT_INTERRUPTED;
				goto out;
			}
			if (!st.interrupted)
				run_interrupt(c, &st);
		}
		rc = conn_pump(c, -1, 200);
		if (rc > 0)
			rc = 0;
	}
	if (!st.done) {
		rc = cmd_lost(s, rc);
		fprintf(stderr,
		    "shiro %s: what it did on shirod's machine is unknown\n",
		    is_cmd ? "run" : "tool");
		goto out;
	}
	conn_bye(c);
	rc = st.rc;
out:
	msg_destroy(&ans);
	conn_close(&c);
	return rc;
}

/* run_quote - argv as one bash command line: each word in single quotes
 * (a quote inside as '\''), so the box runs exactly these words. */
char *
run_quote(char *const *argv, int argc)
{
	struct buf b = BUF_INIT;
	const char *p;
	int k;

	for (k = 0; k < argc; k++) {
		if (k > 0)
			buf_addc(&b, ' ');
		buf_addc(&b, '\'');
		for (p = argv[k]; *p != '\0'; p++) {
			if (*p == '\'')
				buf_printf(&b, "'\\''");
			else
				buf_addc(&b, *p);
		}
		buf_addc(&b, '\'');
	}
	if (b.data == NULL)
		return xstrdup("");
	return b.data;
}
