/*
 * test_notes - project memory and the task list through a real shirod,
 * the real model worker and the loopback mock provider speaking the
 * anthropic wire: what remember, recall, forget and todo_write answer
 * the model (the caps, the duplicate refusal, the AND search, the hit
 * counts, the warnings), where the per-turn state goes in the request
 * as it reaches the provider (after the view's last block, never in the
 * system prompt, the same bytes at every step, the changed list after
 * the last cache mark), the `todos` event, the NOTES request, and the
 * client's `shiro notes`, `shiro todos`, /notes, /todos and live list.
 */
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proto/buf.h"
#include "proto/err.h"
#include "proto/msg.h"
#include "proto/xmalloc.h"
#include "tests/harness.h"
#include "tests/mock_util.h"
#include "tests/test_shirod_util.h"

#define NOTES_KEY "sk-notes-SECRET-4242"

/* need_worker - skip when the model worker is not built. */
static void
need_worker(void)
{
	if (access(tsd_bin("shiro-model-worker"), X_OK) != 0)
		harness_skip("build/shiro-model-worker is not built");
}

/* start - config.json for provider "mock" (anthropic's wire at the
 * mock; compactions offline), then shirod; its pid. */
static pid_t
start(const char *home, const struct mock *mk)
{
	char cfg[2048];
	pid_t pid;
	int st;

	tsd_write(home, "key", NOTES_KEY "\n");
	snprintf(cfg, sizeof(cfg),
	    "{\"providers\": {\"mock\": {\"type\": \"anthropic\", \"url\": "
	    "\"%s\", \"keyFile\": \"%s/key\", \"model\": \"m-big\"}},"
	    " \"turns\": {\"provider\": \"mock\"},"
	    " \"memory\": {\"provider\": \"offline\"}}",
	    mk->base, home);
	tsd_write(home, "config.json", cfg);
	pid = tsd_start(home, NULL, &st);
	CHECKF(
	    pid > 0, "shirod did not start (%d); see %s/shirod.err", st, home);
	return pid;
}

/* attach - a client that said HELLO (it gets events). */
static void *
attach(const char *home)
{
	void *sock = tsd_connect(home);

	CHECK(sock != NULL);
	CHECK(tsd_hello(sock) == 0);
	return sock;
}

/* todos_seen - add a `todos` event's text to the buffer arg, after a
 * line "EVENT". */
static void
todos_seen(void *arg, const struct msg *ev)
{
	const char *name = "", *t = "";

	(void)msg_get_str(ev, "ev", &name, NULL);
	(void)msg_get_str(ev, "text", &t, NULL);
	if (arg != NULL && strcmp(name, "todos") == 0) {
		buf_adds(arg, "EVENT\n");
		buf_adds(arg, t);
	}
}

/* turn - SEND text as a turn from working directory cwd (NULL: none)
 * and wait for its end; its code in code, the `todos` events' texts in
 * todos (may be NULL). */
static void
turn(void *sock, const char *text, const char *cwd, char *code, size_t len,
    struct buf *todos)
{
	struct msg *done;

	done = tsd_turn(sock, text, cwd, code, len, todos_seen, todos);
	CHECKF(done != NULL, "the turn of \"%.40s\": %s", text, code);
	msg_destroy(&done);
}

/* notes_req - NOTES {cwd, what}: the answer (caller destroys). */
static struct msg *
notes_req(void *sock, const char *cwd, const char *what)
{
	struct msg *m = msg_new(MSG_NOTES), *r;

	msg_set_str(m, "cwd", cwd);
	if (what != NULL)
		msg_set_str(m, "what", what);
	r = tsd_call(sock, m, 5000, NULL);
	msg_destroy(&m);
	CHECK(r != NULL);
	return r;
}

/* body - request k (0 first) of the mock's log, parsed (caller decrefs). */
static json_t *
body(const struct mock *mk, size_t k)
{
	json_t *reqs = mock_requests(mk, k + 1, 10000), *b;

	b = mock_body(json_array_get(reqs, k));
	json_decref(reqs);
	CHECK(b != NULL);
	return b;
}

/* result - the text of the tool_result for tool id in request b. */
static const char *
result(json_t *b, const char *id, int *errorp)
{
	json_t *msgs = json_object_get(b, "messages"), *c, *p;
	size_t k, j;

	json_array_foreach(msgs, k, c)
	{
		json_array_foreach(json_object_get(c, "content"), j, p)
		{
			const char *tid = json_string_value(
			    json_object_get(p, "tool_use_id"));

			if (tid != NULL && strcmp(tid, id) == 0) {
				if (errorp != NULL)
					*errorp = json_is_true(
					    json_object_get(p, "is_error"));
				return json_string_value(
				    json_object_get(p, "content"));
			}
		}
	}
	CHECKF(0, "no result for %s", id);
	return NULL;
}

/* has - CHECK that s holds needle, saying what s was. */
#define HAS(s, needle) \
	CHECKF((s) != NULL && strstr((s), (needle)) != NULL, \
	    "no \"%s\" in: %s", (needle), (s) ? (s) : "(null)")

/* last_part - the last part of the last message of request b. */
static json_t *
last_part(json_t *b)
{
	json_t *msgs = json_object_get(b, "messages");
	json_t *c = json_object_get(
	    json_array_get(msgs, json_array_size(msgs) - 1), "content");

	return json_array_get(c, json_array_size(c) - 1);
}

/* marked - whether part p carries a cache mark. */
static int
marked(json_t *p)
{
	return json_object_get(p, "cache_control") != NULL;
}

/* The state of the second turn of notes_and_tasks_on_the_wire: notes
 * newest first (no hits yet), the list with its bar, then the Turn: line;
 * the working directory (the turn's workspace) comes first. */
#define WANT_STATE \
	"</chat>\n\n" \
	"Working directory: %s (the file tools' paths are relative to it; " \
	"commands run in it).\n\n" \
	"Notes on this project (%s) from earlier turns, the most used " \
	"first. Trust them, but verify anything that contradicts what you " \
	"see " \
	"in the code now:\n" \
	"- (gotcha) the seed needs the migration first\n" \
	"- (command) tests run with make check\n" \
	"\n" \
	"Your task list for this project, as todo_write left it:\n" \
	"tasks ########................ 1/3, 1 blocked\n" \
	"[x] read the code\n" \
	"[~] fix the bug\n" \
	"[!] update the docs (no access)\n" \
	"\n" \
	"Turn: "

/* Two turns of one project, on the wire: the first keeps two notes (a
 * third, the same in another case, refused) and writes a list; the
 * second finds them in its state after the view, recalls with every
 * term required, counts hits, and rewrites the list. */
static void
notes_and_tasks_on_the_wire(void)
{
	const char *tmp = harness_tmpdir();
	char home[PATH_MAX], proj[PATH_MAX], code[32];
	struct buf want = BUF_INIT;
	struct buf todos = BUF_INIT;
	const char *t, *tail;
	json_t *b0, *b1, *b2, *b3, *p, *c0;
	struct msg *r;
	const struct msg_val *doc, *notes;
	size_t k, mark;
	int err;
	struct mock mk;
	void *sock;
	pid_t pid;

	need_worker();
	/* The project is a real directory outside the chat's home, so that
	 * it is the turn's workspace too. */
	snprintf(home, sizeof(home), "%s/home", tmp);
	snprintf(proj, sizeof(proj), "%s/src", tmp);
	CHECK(mkdir(home, 0700) == 0 && mkdir(proj, 0700) == 0);
	snprintf(proj, sizeof(proj), "%s/src/shop", tmp);
	CHECK(mkdir(proj, 0700) == 0);
	mock_start(&mk,
	    "{'responses': ["
	    "{'tools': ["
	    "{'id': 't1', 'name': 'remember', 'input': {'kind': 'command', "
	    "'text': 'tests run with make check'}},"
	    "{'id': 't2', 'name': 'remember', 'input': {'kind': 'gotcha', "
	    "'text': 'the seed  needs\\nthe migration first '}},"
	    "{'id': 't3', 'name': 'remember', 'input': {'kind': 'fact', "
	    "'text': 'Tests run with MAKE check'}},"
	    "{'id': 't4', 'name': 'todo_write', 'input': {'todos': ["
	    "{'text': 'read the code', 'state': 'done'},"
	    "{'text': 'fix the bug', 'state': 'in_progress'},"
	    "{'text': 'update the docs', 'state': 'blocked', 'note': "
	    "'no access'}]}}]},"
	    "{'text': 'noted.'},"
	    "{'tools': ["
	    "{'id': 't5', 'name': 'recall', 'input': {'terms': 'MAKE tests'}},"
	    "{'id': 't6', 'name': 'recall', 'input': {'terms': 'seed make'}},"
	    "{'id': 't7', 'name': 'recall', 'input': {'terms': 'check'}},"
	    "{'id': 't8', 'name': 'todo_write', 'input': {'todos': ["
	    "{'text': 'read the code', 'state': 'done'},"
	    "{'text': 'fix the bug', 'state': 'done'},"
	    "{'text': 'update the docs', 'state': 'pending'}]}},"
	    "{'id': 't9', 'name': 'remember', 'input': {'kind': 'fact', "
	    "'text': 'tests run with make'}},"
	    "{'id': 't10', 'name': 'forget', 'input': {'substring': "
	    "'Tests run with make'}}]},"
	    "{'text': 'on it.'}]}");
	pid = start(home, &mk);
	sock = attach(home);
	/* A view of four lines: one whole block before the turns. */
	for (k = 0; k < 4; k++)
		CHECK(tsd_send_text(sock, "an earlier note", NULL, NULL) ==
		    (int64_t)k);
	turn(sock, "keep what matters", proj, code, sizeof(code), &todos);
	CHECK_EQ_STR(code, "ok");
	b0 = body(&mk, 0);
	b1 = body(&mk, 1);
	/* The first turn had nothing kept yet: no notes nor tasks, only
	 * its working directory. */
	tail = json_string_value(json_object_get(last_part(b0), "text"));
	buf_printf(&want,
	    "</chat>\n\nWorking directory: %s (the file tools' paths are "
	    "relative to it; commands run in it).\n\nTurn: ",
	    proj);
	CHECKF(strncmp(tail, want.data, want.len) == 0, "%s", tail);
	buf_reset(&want);
	CHECK_EQ_STR(mock_str(b0, "tools.2.name"), "remember");
	CHECK_EQ_STR(mock_str(b0, "tools.5.name"), "todo_write");
	/* What the tools answered, as the provider received it. */
	t = result(b1, "t1", &err);
	CHECKF(strcmp(t,
		   "Kept as note 1 (command): tests run with make "
		   "check") == 0 &&
		!err,
	    "%s", t);
	t = result(b1, "t2", &err);
	CHECKF(strcmp(t,
		   "Kept as note 2 (gotcha): the seed needs the "
		   "migration first") == 0 &&
		!err,
	    "%s", t);
	t = result(b1, "t3", &err);
	HAS(t, "has this note already (note 1)");
	CHECK(err);
	t = result(b1, "t4", &err);
	HAS(t,
	    "Saved 3 tasks:\ntasks ########................ 1/3, 1 "
	    "blocked\n[x] read the code\n[~] fix the bug\n[!] update the "
	    "docs (no access)\n");
	CHECK(strstr(t, "Warnings") == NULL && !err);
	/* The changed list rides after the request's last mark. */
	p = last_part(b1);
	HAS(json_string_value(json_object_get(p, "text")),
	    "Your task list now (todo_write changed it");
	CHECK(!marked(p));
	{
		json_t *msgs = json_object_get(b1, "messages");
		json_t *c = json_object_get(
		    json_array_get(msgs, json_array_size(msgs) - 1), "content");

		CHECK(marked(json_array_get(c, json_array_size(c) - 2)));
		CHECK_EQ_STR(mock_str(json_array_get(c, json_array_size(c) - 2),
				 "tool_use_id"),
		    "t4");
	}
	/* Every attached client heard the list. */
	HAS(todos.data, "EVENT\ntasks ########................ 1/3");

	buf_reset(&todos);
	turn(sock, "what next?", proj, code, sizeof(code), &todos);
	CHECK_EQ_STR(code, "ok");
	b2 = body(&mk, 2);
	b3 = body(&mk, 3);
	/* The state: after the view's last whole block (its mark), before
	 * the Turn: line, in the last part (the request's end mark). */
	c0 = mock_at(b2, "messages.0.content");
	mark = json_array_size(c0);
	for (k = 0; k + 1 < json_array_size(c0); k++)
		if (marked(json_array_get(c0, k)))
			mark = k;
	CHECK(mark + 1 < json_array_size(c0));
	CHECK(marked(last_part(b2)));
	buf_printf(&want, WANT_STATE, proj, proj);
	tail = json_string_value(json_object_get(last_part(b2), "text"));
	CHECKF(strncmp(tail, want.data, want.len) == 0, "%s", tail);
	for (k = 0; k <= mark; k++)
		CHECK(strstr(mock_str(json_array_get(c0, k), "text"),
			  "Notes on this project") == NULL);
	/* Never in the system prompt nor the tools: both as before. */
	CHECK(json_equal(
	    json_object_get(b0, "system"), json_object_get(b2, "system")));
	CHECK(json_equal(
	    json_object_get(b0, "tools"), json_object_get(b2, "tools")));
	/* The same first message at the next step, byte for byte (only
	 * the end mark moved on, to the step's last tool result). */
	{
		json_t *c3 = mock_at(b3, "messages.0.content");

		CHECK_EQ_INT(json_array_size(c3), json_array_size(c0));
		for (k = 0; k < json_array_size(c0); k++)
			CHECK_EQ_STR(mock_str(json_array_get(c3, k), "text"),
			    mock_str(json_array_get(c0, k), "text"));
	}
	/* recall: every term, any case, the hits counted. */
	t = result(b3, "t5", &err);
	CHECKF(strcmp(t,
		   "1 note holds every one of: MAKE tests; newest "
		   "first:\n- (command) tests run with make check\n") == 0,
	    "%s", t);
	t = result(b3, "t6", &err);
	HAS(t,
	    "No note of this project holds every one of: seed make (it "
	    "has 2 notes)");
	t = result(b3, "t8", &err);
	HAS(t, "tasks ################........ 2/3\n");
	HAS(t, "Warnings:\n- nothing is in_progress while 1 task is pending");
	HAS(json_string_value(json_object_get(last_part(b3), "text")),
	    "[ ] update the docs\n");
	/* forget: a note that is the substring goes alone, though another
	 * contains it too. */
	t = result(b3, "t10", &err);
	CHECKF(
	    strcmp(t, "Removed 1 note:\n- (fact) tests run with make\n") == 0 &&
		!err,
	    "%s", t);
	HAS(todos.data, "EVENT\ntasks ################........ 2/3");
	/* NOTES: ranked by hits (the command note found twice), then
	 * newest. */
	r = notes_req(sock, proj, NULL);
	CHECK_EQ_INT(msg_type(r), MSG_REPLY);
	CHECK(msg_get_map(r, "doc", &doc) == 0);
	CHECK_EQ_INT(tsd_doc_int(doc, "count"), 2);
	CHECK_EQ_INT(tsd_doc_int(doc, "max"), 300);
	notes = msg_val_get(doc, "notes");
	CHECK(notes != NULL && notes->type == MSG_V_ARR && notes->u.a.n == 2);
	CHECK_EQ_STR(msg_val_str(notes->u.a.items[0], "text"),
	    "tests run with make check");
	CHECK_EQ_INT(tsd_doc_int(notes->u.a.items[0], "hits"), 2);
	CHECK_EQ_STR(msg_val_str(notes->u.a.items[0], "kind"), "command");
	CHECK_EQ_INT(tsd_doc_int(notes->u.a.items[1], "hits"), 0);
	CHECK_EQ_STR(msg_val_str(doc, "project"), proj);
	msg_destroy(&r);
	/* Asking counts no hit. */
	r = notes_req(sock, proj, NULL);
	CHECK(msg_get_map(r, "doc", &doc) == 0);
	notes = msg_val_get(doc, "notes");
	CHECK_EQ_INT(tsd_doc_int(notes->u.a.items[0], "hits"), 2);
	msg_destroy(&r);
	/* A directory inside the project is a project of its own. */
	buf_reset(&want);
	buf_printf(&want, "%s/sub", proj);
	r = notes_req(sock, want.data, NULL);
	CHECK(msg_get_map(r, "doc", &doc) == 0);
	CHECK_EQ_INT(tsd_doc_int(doc, "count"), 0);
	msg_destroy(&r);
	r = notes_req(sock, proj, "todos");
	CHECK(msg_get_map(r, "doc", &doc) == 0);
	CHECK_EQ_INT(tsd_doc_int(doc, "done"), 2);
	CHECK_EQ_INT(tsd_doc_int(doc, "total"), 3);
	HAS(msg_val_str(doc, "text"), "[ ] update the docs\n");
	msg_destroy(&r);
	json_decref(b0);
	json_decref(b1);
	json_decref(b2);
	json_decref(b3);
	buf_free(&todos);
	buf_free(&want);
	tsd_close(&sock);
	tsd_stop(pid);
	mock_stop(&mk);
}

/* remember_calls - calls remember1 .. remembern of "note K" (kind
 * fact), as the mock's "tools" array, into b. */
static void
remember_calls(struct buf *b, size_t n)
{
	size_t k;

	buf_adds(b, "[");
	for (k = 1; k <= n; k++)
		buf_printf(b,
		    "%s{'id': 'remember%zu', 'name': 'remember', 'input': "
		    "{'kind': 'fact', 'text': 'note %zu'}}",
		    k > 1 ? ", " : "", k, k);
	buf_adds(b, "]");
}

/* The caps and the refusals, each answered to the model as an error it
 * can act on: the 301st note, a 401-character note (counted in
 * characters), a kind that is none, a forget that matches too many, a
 * bad state; recall's 15 newest; the warnings of a list. */
static void
caps_and_refusals_on_the_wire(void)
{
	const char *home = harness_tmpdir();
	char proj[PATH_MAX], code[32];
	struct buf script = BUF_INIT, many = BUF_INIT, big = BUF_INIT;
	const struct msg_val *doc, *notes;
	json_t *b1, *b2;
	const char *t;
	struct mock mk;
	struct msg *r;
	size_t k;
	int err;
	void *sock;
	pid_t pid;

	need_worker();
	snprintf(proj, sizeof(proj), "%s/proj", home);
	remember_calls(&many, 301);
	for (k = 0; k < 400; k++)
		buf_adds(&big, "\xc3\xa9");
	buf_printf(&script,
	    "{'responses': [{'tools': %s},"
	    "{'tools': ["
	    "{'id': 'a1', 'name': 'recall', 'input': {'terms': 'note'}},"
	    "{'id': 'a2', 'name': 'forget', 'input': {'substring': 'ote 1'}},"
	    "{'id': 'a3', 'name': 'forget', 'input': {'substring': 'NOTE "
	    "300'}},"
	    "{'id': 'a4', 'name': 'remember', 'input': {'kind': 'fact', "
	    "'text': '%s'}},"
	    "{'id': 'a5', 'name': 'remember', 'input': {'kind': 'fact', "
	    "'text': '%se'}},"
	    "{'id': 'a6', 'name': 'remember', 'input': {'kind': 'opinion', "
	    "'text': 'x'}},"
	    "{'id': 'a7', 'name': 'remember', 'input': {'kind': 'fact', "
	    "'text': ' \\n\\t '}},"
	    "{'id': 'a8', 'name': 'todo_write', 'input': {'todos': ["
	    "{'text': 'a', 'state': 'started'}]}},"
	    "{'id': 'a9', 'name': 'todo_write', 'input': {'todos': ["
	    "{'text': 'a', 'state': 'in_progress'},"
	    "{'text': 'b', 'state': 'in_progress'},"
	    "{'text': 'c', 'state': 'blocked'},"
	    "{'text': 'd', 'state': 'blocked', 'note': 'waits for e'}]}},"
	    "{'id': 'a10', 'name': 'forget', 'input': {'substring': 'nothing "
	    "like it'}},"
	    "{'id': 'a11', 'name': 'remember', 'input': {'kind': 'fact', "
	    "'text': 'x', 'when': 'now'}},"
	    "{'id': 'a12', 'name': 'recall', 'input': {'terms': 7}},"
	    "{'id': 'a13', 'name': 'recall', 'input': {'terms': ['note', "
	    "'ZZZ']}},"
	    "{'id': 'a14', 'name': 'recall', 'input': {'terms': 'a b c d e f "
	    "g h i j k l m n o p q'}}]},"
	    "{'text': 'done.'}]}",
	    many.data, big.data, big.data);
	mock_start(&mk, script.data);
	pid = start(home, &mk);
	sock = attach(home);
	turn(sock, "fill it up", proj, code, sizeof(code), NULL);
	CHECK_EQ_STR(code, "ok");
	b1 = body(&mk, 1);
	t = result(b1, "remember300", &err);
	HAS(t, "Kept as note 300 (fact): note 300");
	t = result(b1, "remember301", &err);
	HAS(t, "the project has 300 notes, the most it keeps");
	CHECK(err);
	b2 = body(&mk, 2);
	t = result(b2, "a1", &err);
	HAS(t,
	    "300 notes hold every one of: note; newest first, the 15 "
	    "newest:\n- (fact) note 300\n- (fact) note 299\n");
	HAS(t, "- (fact) note 286\n");
	CHECK(strstr(t, "note 285") == NULL);
	t = result(b2, "a2", &err);
	HAS(t, "111 notes contain it, more than 5; nothing was removed");
	CHECK(err);
	t = result(b2, "a3", &err);
	CHECKF(strcmp(t, "Removed 1 note:\n- (fact) note 300\n") == 0 && !err,
	    "%s", t);
	t = result(b2, "a4", &err);
	HAS(t, "Kept as note 300 (fact): ");
	CHECK(!err);
	t = result(b2, "a5", &err);
	HAS(t, "remember: text is 401 characters, at most 400");
	CHECK(err);
	t = result(b2, "a6", &err);
	HAS(t, "kind must be one of fact, decision, gotcha, command");
	t = result(b2, "a7", &err);
	HAS(t, "remember: text is empty");
	t = result(b2, "a8", &err);
	HAS(t, "todo_write: task 1: state must be one of pending");
	CHECK(err);
	t = result(b2, "a9", &err);
	HAS(t, "Saved 4 tasks:\n");
	HAS(t, "- 2 tasks are in_progress: work on one at a time");
	HAS(t, "- blocked without a note saying what blocks it: task 3\n");
	CHECK(strstr(t, "nothing is in_progress") == NULL && !err);
	t = result(b2, "a10", &err);
	HAS(t, "no note of this project contains \"nothing like it\"");
	t = result(b2, "a11", &err);
	HAS(t, "remember: unknown argument \"when\"");
	t = result(b2, "a12", &err);
	HAS(t, "recall: terms must be a string of words");
	t = result(b2, "a13", &err);
	HAS(t, "No note of this project holds every one of: note ZZZ");
	t = result(b2, "a14", &err);
	HAS(t, "recall: at most 16 words");
	CHECK(err);
	/* What is kept: 300 notes; recall's hits put its 15 first (less
	 * the one forgotten), newest first, then the rest newest first. */
	r = notes_req(sock, proj, "notes");
	CHECK(msg_get_map(r, "doc", &doc) == 0);
	CHECK_EQ_INT(tsd_doc_int(doc, "count"), 300);
	notes = msg_val_get(doc, "notes");
	CHECK(notes != NULL && notes->u.a.n == 300);
	CHECK_EQ_STR(msg_val_str(notes->u.a.items[0], "text"), "note 299");
	CHECK_EQ_INT(tsd_doc_int(notes->u.a.items[0], "hits"), 1);
	CHECK_EQ_STR(msg_val_str(notes->u.a.items[13], "text"), "note 286");
	CHECK_EQ_INT(tsd_doc_int(notes->u.a.items[14], "hits"), 0);
	CHECK(strncmp(msg_val_str(notes->u.a.items[14], "text"), "\xc3\xa9",
		  2) == 0);
	CHECK_EQ_STR(msg_val_str(notes->u.a.items[15], "text"), "note 285");
	msg_destroy(&r);
	json_decref(b1);
	json_decref(b2);
	buf_free(&script);
	buf_free(&many);
	buf_free(&big);
	tsd_close(&sock);
	tsd_stop(pid);
	mock_stop(&mk);
}

/* A turn without a usable project keeps nothing: no state goes out and
 * the tools say why; NOTES refuses such a directory, and a bad what. */
static void
no_project_keeps_nothing(void)
{
	const char *home = harness_tmpdir();
	char code[32];
	const char *t, *c = NULL;
	struct mock mk;
	struct msg *r;
	json_t *b;
	int err;
	void *sock;
	pid_t pid;

	need_worker();
	mock_start(&mk,
	    "{'responses': ["
	    "{'tools': [{'id': 'n1', 'name': 'remember', 'input': {'kind': "
	    "'fact', 'text': 'x'}}]}, {'text': 'ok'},"
	    "{'tools': [{'id': 'n2', 'name': 'todo_write', 'input': "
	    "{'todos': []}}]}, {'text': 'ok'}]}");
	pid = start(home, &mk);
	sock = attach(home);
	turn(sock, "no directory", NULL, code, sizeof(code), NULL);
	CHECK_EQ_STR(code, "ok");
	b = body(&mk, 1);
	t = result(b, "n1", &err);
	HAS(t,
	    "remember: this turn has no project, so it keeps no notes or "
	    "tasks: the client that asked for it sent no working "
	    "directory");
	CHECK(err);
	json_decref(b);
	turn(sock, "a bad directory", "/a/../b", code, sizeof(code), NULL);
	b = body(&mk, 3);
	t = result(b, "n2", &err);
	HAS(t, "it has a \"..\" part");
	json_decref(b);
	r = notes_req(sock, "relative/dir", NULL);
	CHECK_EQ_INT(msg_type(r), MSG_ERROR);
	(void)msg_get_str(r, "code", &c, NULL);
	CHECK_EQ_STR(c, "cwd");
	msg_destroy(&r);
	r = notes_req(sock, "/x", "everything");
	CHECK_EQ_INT(msg_type(r), MSG_ERROR);
	(void)msg_get_str(r, "code", &c, NULL);
	CHECK_EQ_STR(c, "what");
	msg_destroy(&r);
	/* The same directory written three ways is one project. */
	r = notes_req(sock, "/x//y/./", "todos");
	CHECK_EQ_INT(msg_type(r), MSG_REPLY);
	{
		const struct msg_val *doc;

		CHECK(msg_get_map(r, "doc", &doc) == 0);
		CHECK_EQ_STR(msg_val_str(doc, "project"), "/x/y");
		CHECK_EQ_INT(tsd_doc_int(doc, "total"), 0);
		CHECK_EQ_STR(msg_val_str(doc, "text"), "");
	}
	msg_destroy(&r);
	tsd_close(&sock);
	tsd_stop(pid);
	mock_stop(&mk);
}

/*
 * shiro_spawn - build/shiro ARGS in directory dir for home, its stdin
 * and stdout pipes in *inp and *outp (stderr to home/client.err); its
 * pid.
 */
static pid_t
shiro_spawn(const char *home, const char *dir, const char *const *args,
    int *inp, int *outp)
{
	const char *argv[16];
	char env[PATH_MAX + 16], err[PATH_MAX + 16];
	int in[2], out[2], fd;
	size_t k, n = 0;
	pid_t pid;

	CHECK(pipe(in) == 0 && pipe(out) == 0);
	argv[n++] = tsd_bin("shiro");
	for (k = 0; args[k] != NULL && n < 15; k++)
		argv[n++] = args[k];
	argv[n] = NULL;
	snprintf(env, sizeof(env), "SHIRO_HOME=%s", home);
	snprintf(err, sizeof(err), "%s/client.err", home);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		dup2(in[0], STDIN_FILENO);
		dup2(out[1], STDOUT_FILENO);
		fd = open(err, O_WRONLY | O_CREAT | O_APPEND, 0600);
		if (fd >= 0)
			dup2(fd, STDERR_FILENO);
		close(in[1]);
		close(out[0]);
		if (chdir(dir) != 0)
			_exit(126);
		putenv(env);
		unsetenv("SHIRO_ENDPOINT");
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	*inp = in[1];
	*outp = out[0];
	return pid;
}

/* read_until - read fd into b until it holds needle or ms pass; whether
 * it does. */
static int
read_until(int fd, struct buf *b, const char *needle, long ms)
{
	uint64_t end = tsd_now_ms() + (uint64_t)ms;
	struct pollfd p = {fd, POLLIN, 0};
	char chunk[4096];
	ssize_t r;

	buf_add(b, "", 0);
	while (strstr(b->data, needle) == NULL && tsd_now_ms() < end) {
		if (poll(&p, 1, (int)(end - tsd_now_ms())) <= 0)
			continue;
		r = read(fd, chunk, sizeof(chunk));
		if (r <= 0)
			break;
		buf_add(b, chunk, (size_t)r);
	}
	return strstr(b->data, needle) != NULL;
}

/* shiro_run - build/shiro ARGS in dir for home with no input: its
 * output (malloc'd) and exit status. */
static char *
shiro_run(
    const char *home, const char *dir, const char *const *args, int *statusp)
{
	struct buf b = BUF_INIT;
	int in, out;
	pid_t pid = shiro_spawn(home, dir, args, &in, &out);

	close(in);
	(void)read_until(out, &b, "\001never", 20000);
	close(out);
	CHECK(waitpid(pid, statusp, 0) == pid);
	return buf_steal(&b, NULL);
}

/* The client's commands from a project's directory: `shiro notes` and
 * `shiro todos` (text and --json), and an attached client that lists
 * both with /notes and /todos, shows the list it finds at the start, and
 * shows each new list above its input as a turn writes it. */
static void
client_commands_and_the_live_list(void)
{
	const char *home = harness_tmpdir();
	const char *notes_args[] = {"--no-start", "notes", NULL};
	const char *notes_json[] = {"--no-start", "notes", "--json", NULL};
	const char *todos_args[] = {"--no-start", "todos", NULL};
	const char *todos_json[] = {"--no-start", "todos", "--json", NULL};
	const char *attach_args[] = {"--no-start", NULL};
	char proj[PATH_MAX], other[PATH_MAX], code[32], *out;
	struct buf seen = BUF_INIT, want = BUF_INIT;
	struct mock mk;
	json_t *j;
	int st, in, fd;
	void *sock;
	pid_t pid, client;

	need_worker();
	if (access(tsd_bin("shiro"), X_OK) != 0)
		harness_skip("build/shiro is not built");
	snprintf(proj, sizeof(proj), "%s/work", home);
	snprintf(other, sizeof(other), "%s/elsewhere", home);
	CHECK(mkdir(proj, 0700) == 0 && mkdir(other, 0700) == 0);
	mock_start(&mk,
	    "{'responses': ["
	    "{'tools': [{'id': 'c1', 'name': 'remember', 'input': {'kind': "
	    "'command', 'text': 'build with make -j2'}},"
	    "{'id': 'c2', 'name': 'todo_write', 'input': {'todos': ["
	    "{'text': 'write the parser', 'state': 'in_progress'},"
	    "{'text': 'test it', 'state': 'pending'}]}}]},"
	    "{'text': 'ok'},"
	    "{'tools': [{'id': 'c3', 'name': 'todo_write', 'input': {'todos': "
	    "[{'text': 'write the parser', 'state': 'done'},"
	    "{'text': 'test it', 'state': 'in_progress'}]}}]},"
	    "{'text': 'ok'}]}");
	pid = start(home, &mk);
	sock = attach(home);
	turn(sock, "start", proj, code, sizeof(code), NULL);
	CHECK_EQ_STR(code, "ok");
	out = shiro_run(home, proj, notes_args, &st);
	CHECKF(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%d: %s", st, out);
	HAS(out, "1 note on ");
	HAS(out, "  [1] command, ");
	HAS(out, ": build with make -j2\n");
	free(out);
	out = shiro_run(home, proj, notes_json, &st);
	j = json_loads(out, 0, NULL);
	CHECKF(j != NULL, "%s", out);
	CHECK_EQ_STR(mock_str(j, "notes.0.text"), "build with make -j2");
	CHECK_EQ_STR(mock_str(j, "project"), proj);
	json_decref(j);
	free(out);
	out = shiro_run(home, proj, todos_args, &st);
	CHECKF(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%d", st);
	HAS(out, "task list of ");
	HAS(out,
	    "tasks ........................ 0/2\n[~] write the parser\n"
	    "[ ] test it\n");
	free(out);
	out = shiro_run(home, proj, todos_json, &st);
	j = json_loads(out, 0, NULL);
	CHECKF(j != NULL, "%s", out);
	CHECK_EQ_STR(mock_str(j, "todos.0.state"), "in_progress");
	CHECK_EQ_INT(json_integer_value(mock_at(j, "total")), 2);
	json_decref(j);
	free(out);
	/* Another directory is another project. */
	out = shiro_run(home, other, todos_args, &st);
	HAS(out, "no task list for ");
	free(out);
	out = shiro_run(home, other, notes_args, &st);
	HAS(out, "no notes on ");
	free(out);
	/* Attached in the project: the list at the start, then live. */
	client = shiro_spawn(home, proj, attach_args, &in, &fd);
	CHECKF(read_until(fd, &seen, "[ ] test it\n", 10000), "%s", seen.data);
	HAS(seen.data, "task list of ");
	buf_reset(&seen);
	CHECK(write(in, "/notes\n", 7) == 7);
	CHECKF(read_until(fd, &seen, ": build with make -j2\n", 10000), "%s",
	    seen.data);
	buf_reset(&seen);
	turn(sock, "next", proj, code, sizeof(code), NULL);
	CHECK_EQ_STR(code, "ok");
	buf_reset(&want);
	buf_printf(&want,
	    "task list of %s, now:\ntasks ############............ 1/2\n"
	    "[x] write the parser\n[~] test it\n",
	    proj);
	CHECKF(read_until(fd, &seen, want.data, 10000), "%s", seen.data);
	buf_reset(&seen);
	CHECK(write(in, "/todos\n", 7) == 7);
	CHECKF(read_until(fd, &seen, "task list of ", 10000), "%s", seen.data);
	HAS(seen.data, "[~] test it\n");
	close(in);
	CHECK(waitpid(client, &st, 0) == client);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	close(fd);
	buf_free(&seen);
	buf_free(&want);
	tsd_close(&sock);
	tsd_stop(pid);
	mock_stop(&mk);
}

static const struct harness_test tests[] = {
    HT(notes_and_tasks_on_the_wire),
    HT(caps_and_refusals_on_the_wire),
    HT(no_project_keeps_nothing),
    HT(client_commands_and_the_live_list),
};

HARNESS_MAIN(tests)
