/*
 * test_tools_bash - the bash tool through the real jail: the workspace
 * as cwd, exit codes, streaming, clipping, timeout and interrupt (the
 * whole tree killed, nothing outlives the call).
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "proto/utf8.h"
#include "sandbox/jail.h"
#include "tests/harness.h"
#include "tests/test_tools_util.h"
#include "tools/text.h"
#include "tools/tool.h"

/* bt_now - monotonic seconds. */
static double
bt_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* bt_setup - a workspace, or a skip when the jail cannot run here. */
static void
bt_setup(struct tt *t)
{
	struct jail_features f;

	jail_probe(&f);
	if (f.missing[0] != '\0')
		harness_skip("the jail lacks: %s", f.missing);
	tt_setup(t);
	t->ctx.may_exec = 1;
}

/* bt_bash - run command with a timeout (0: the default). */
static json_t *
bt_bash(struct tt *t, const char *command, int timeout)
{
	json_t *args = json_pack("{ss}", "command", command);

	if (timeout > 0)
		json_object_set_new(args, "timeout", json_integer(timeout));
	return tt_call(t, "bash", args);
}

/* Runs in the workspace, returns the exit code and the output. */
static void
bash_runs_in_workspace(void)
{
	struct tt t;
	json_t *r;

	bt_setup(&t);
	r = bt_bash(&t, "pwd; echo made > made.txt; echo err >&2; exit 7", 0);
	CHECKF(tt_ok(r), "%s", tt_str(r, "error"));
	CHECK_EQ_INT(json_integer_value(json_object_get(r, "exit_code")), 7);
	CHECK(strncmp(tt_str(r, "output"), t.ws, strlen(t.ws)) == 0);
	CHECK(strstr(tt_str(r, "output"), "err\n") != NULL);
	json_decref(r);
	CHECK(tt_same(t.ws, "made.txt", "made\n"));
	r = bt_bash(&t, "", 0);
	CHECK(!tt_ok(r));
	json_decref(r);
	r = bt_bash(&t, "true", 601);
	CHECK(!tt_ok(r));
	json_decref(r);
	t.ctx.may_exec = 0;
	r = bt_bash(&t, "true", 0);
	CHECK(!tt_ok(r) && strstr(tt_str(r, "error"), "cannot run here"));
	json_decref(r);
}

struct bt_stream {
	double start, first;
	size_t bytes;
};

/* bt_emit - note when the first output arrived. */
static void
bt_emit(void *arg, const char *data, size_t len)
{
	struct bt_stream *s = arg;

	(void)data;
	if (s->bytes == 0)
		s->first = bt_now();
	s->bytes += len;
}

/* Output streams as it comes, before the command ends. */
static void
bash_streams_output(void)
{
	struct tt t;
	struct bt_stream s = {0, 0, 0};
	double end;
	json_t *r;

	bt_setup(&t);
	t.ctx.emit = bt_emit;
	t.ctx.emit_arg = &s;
	s.start = bt_now();
	r = bt_bash(&t, "echo first; sleep 1.5; echo second", 0);
	end = bt_now();
	CHECK(tt_ok(r));
	CHECK_EQ_STR(tt_str(r, "output"), "first\nsecond\n");
	json_decref(r);
	CHECK(s.bytes == strlen("first\nsecond\n"));
	CHECKF(end - s.first > 1.0,
	    "the first output came %.2f s before "
	    "the end",
	    end - s.first);
}

/* Long output keeps its head and tail, 30,000 characters in all. */
static void
bash_clips_head_and_tail(void)
{
	struct tt t;
	const char *out;
	json_t *r;

	bt_setup(&t);
	r = bt_bash(&t,
	    "echo START; head -c 500000 /dev/zero | tr '\\0' a; echo; "
	    "echo END",
	    0);
	CHECK(tt_ok(r));
	out = tt_str(r, "output");
	CHECK(utf8_count(out, strlen(out)) <= TOOL_MAX_OUTPUT);
	CHECK(strncmp(out, "START\naaa", 9) == 0);
	CHECK(strlen(out) > 6 && strcmp(out + strlen(out) - 5, "\nEND\n") == 0);
	CHECK(strstr(out, "output cut") != NULL);
	CHECK(json_is_true(json_object_get(r, "clipped")));
	json_decref(r);
}

/* A timeout kills the whole tree; a background child does not outlive
 * the call either. */
static void
bash_timeout_kills_tree(void)
{
	struct tt t;
	double start;
	json_t *r;

	bt_setup(&t);
	start = bt_now();
	r = bt_bash(&t, "(sleep 3; echo late > late1.txt) & sleep 30", 1);
	CHECK(bt_now() - start < 10);
	CHECK(!tt_ok(r));
	CHECK(strstr(tt_str(r, "error"), "did not finish") != NULL);
	CHECK(strstr(tt_str(r, "error"), "effects are unknown") != NULL);
	CHECK(json_is_true(json_object_get(r, "timed_out")));
	json_decref(r);
	r = bt_bash(&t, "(sleep 2; echo late > late2.txt) & echo started", 0);
	CHECK(tt_ok(r));
	json_decref(r);
	sleep(4);
	CHECK(!tt_exists(t.ws, "late1.txt"));
	CHECK(!tt_exists(t.ws, "late2.txt"));
}

static volatile sig_atomic_t bt_cancel;

/* bt_canceler - set the cancel flag after a moment. */
static void *
bt_canceler(void *arg)
{
	(void)arg;
	usleep(400000);
	bt_cancel = 1;
	return NULL;
}

/* bt_tick - cancel from the tick after a few calls. */
static int
bt_tick(void *arg)
{
	int *n = arg;

	return ++*n > 10;
}

/* An interrupt (the cancel flag or the tick) kills the command and the
 * call says its effects are unknown. */
static void
bash_interrupt(void)
{
	struct tt t;
	pthread_t th;
	double start;
	json_t *r;
	int ticks = 0;

	bt_setup(&t);
	t.ctx.cancel = &bt_cancel;
	CHECK(pthread_create(&th, NULL, bt_canceler, NULL) == 0);
	start = bt_now();
	r = bt_bash(&t, "sleep 30; echo done > done.txt", 0);
	pthread_join(th, NULL);
	CHECK(bt_now() - start < 10);
	CHECK(!tt_ok(r) && json_is_true(json_object_get(r, "interrupted")));
	CHECK(strstr(tt_str(r, "error"), "effects are unknown") != NULL);
	json_decref(r);
	bt_cancel = 0;
	t.ctx.tick = bt_tick;
	t.ctx.tick_arg = &ticks;
	start = bt_now();
	r = bt_bash(&t, "sleep 30", 0);
	CHECK(bt_now() - start < 10);
	CHECK(!tt_ok(r) && json_is_true(json_object_get(r, "interrupted")));
	json_decref(r);
	CHECK(!tt_exists(t.ws, "done.txt"));
}

static const struct harness_test tests[] = {
    HT(bash_runs_in_workspace),
    HT(bash_streams_output),
    HT(bash_clips_head_and_tail),
    HT(bash_timeout_kills_tree),
    HT(bash_interrupt),
};

HARNESS_MAIN(tests)
