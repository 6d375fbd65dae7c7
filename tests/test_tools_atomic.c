/*
 * test_tools_atomic - a write set survives kill -9 at any point: after
 * recovery every file of the set is old or every one is new, and no
 * temp or journal is left.  A real child process runs apply_patch and
 * is killed with SIGKILL, at each step of the commit in turn and at
 * random times.
 */
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "proto/buf.h"
#include "tests/harness.h"
#include "tests/test_tools_util.h"
#include "tools/tool.h"
#include "tools/ws.h"

#define AT_FILES 5

static int at_kill_at; /* the step at which the child kills itself */
static int at_step; /* steps reached so far */
static unsigned at_delay_us; /* or: sleep this long at each step */

/* at_hook - the commit's test hook in the child. */
static void
at_hook(const char *step)
{
	(void)step;
	if (++at_step == at_kill_at)
		raise(SIGKILL);
	if (at_delay_us > 0)
		usleep(at_delay_us);
}

/* at_name - the name of file i of the set. */
static void
at_name(int i, char *name, size_t len)
{
	snprintf(name, len, "%sf%d.txt", i % 2 ? "sub/" : "", i);
}

/* at_old - put the old state of the set in place. */
static void
at_old(struct tt *t)
{
	char name[64], text[64];
	int i;

	for (i = 0; i < AT_FILES; i++) {
		at_name(i, name, sizeof(name));
		snprintf(text, sizeof(text), "head\nold %d\ntail\n", i);
		tt_put(t->ws, name, text);
	}
	tt_put(t->ws, "sub/gone.txt", "bye\n");
	if (tt_exists(t->ws, "made.txt")) {
		char path[PATH_MAX + 16];
		snprintf(path, sizeof(path), "%s/made.txt", t->ws);
		unlink(path);
	}
}

/* at_patch - the patch turning the old state into the new one. */
static char *
at_patch(void)
{
	struct buf b = BUF_INIT;
	char name[64];
	int i;

	for (i = 0; i < AT_FILES; i++) {
		at_name(i, name, sizeof(name));
		buf_printf(&b,
		    "--- a/%s\n+++ b/%s\n@@ -1,3 +1,3 @@\n head\n-old %d\n"
		    "+new %d\n tail\n",
		    name, name, i, i);
	}
	buf_adds(&b, "--- /dev/null\n+++ b/made.txt\n@@ -0,0 +1 @@\n+made\n");
	buf_adds(
	    &b, "--- a/sub/gone.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-bye\n");
	return buf_steal(&b, NULL);
}

/* at_leftovers - the number of temps and journals in dir. */
static int
at_leftovers(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	if (d == NULL)
		return 0;
	while ((de = readdir(d)) != NULL)
		if (strncmp(de->d_name, ".shiro-", 7) == 0)
			n++;
	closedir(d);
	return n;
}

/* at_state - 0 when the set is all old, 1 when all new, -1 mixed. */
static int
at_state(struct tt *t)
{
	char name[64], text[64], sub[PATH_MAX + 16];
	int i, olds = 0, news = 0;

	for (i = 0; i < AT_FILES; i++) {
		at_name(i, name, sizeof(name));
		snprintf(text, sizeof(text), "head\nold %d\ntail\n", i);
		if (tt_same(t->ws, name, text))
			olds++;
		snprintf(text, sizeof(text), "head\nnew %d\ntail\n", i);
		if (tt_same(t->ws, name, text))
			news++;
	}
	if (tt_exists(t->ws, "sub/gone.txt") &&
	    tt_same(t->ws, "sub/gone.txt", "bye\n"))
		olds++;
	else if (!tt_exists(t->ws, "sub/gone.txt"))
		news++;
	if (!tt_exists(t->ws, "made.txt"))
		olds++;
	else if (tt_same(t->ws, "made.txt", "made\n"))
		news++;
	snprintf(sub, sizeof(sub), "%s/sub", t->ws);
	CHECKF(at_leftovers(t->ws) == 0 && at_leftovers(sub) == 0,
	    "temps or journals left behind");
	if (olds == AT_FILES + 2)
		return 0;
	if (news == AT_FILES + 2)
		return 1;
	return -1;
}

/* at_run_child - run the patch in a child; kill_at 0: to the end, with
 * delay_us at each step.  Returns the child's pid. */
static pid_t
at_run_child(struct tt *t, const char *patch, int kill_at, unsigned delay_us)
{
	pid_t pid = fork();

	CHECK(pid >= 0);
	if (pid == 0) {
		json_t *r = NULL;
		at_kill_at = kill_at;
		at_delay_us = delay_us;
		ws_commit_hook = at_hook;
		tool_call("apply_patch", json_pack("{ss}", "patch", patch),
		    &t->ctx, &r);
		_exit(tt_ok(r) ? 0 : 1);
	}
	return pid;
}

/* at_recover - what the next tool call does first: recovery. */
static void
at_recover(struct tt *t)
{
	json_decref(tt_call(t, "list_dir", json_pack("{}")));
}

/* Killed at each step of the commit in turn: all or nothing each time,
 * and both outcomes happen. */
static void
atomic_kill_at_every_step(void)
{
	struct tt t;
	char *patch = at_patch();
	int k, status, seen[2] = {0, 0}, st;
	pid_t pid;

	tt_setup(&t);
	for (k = 1; k <= 40; k++) {
		at_old(&t);
		pid = at_run_child(&t, patch, k, 0);
		CHECK(waitpid(pid, &status, 0) == pid);
		at_recover(&t);
		st = at_state(&t);
		CHECKF(st >= 0, "mixed state after a kill at step %d", k);
		seen[st]++;
		if (WIFEXITED(status)) {
			CHECKF(WEXITSTATUS(status) == 0 && st == 1,
			    "the patch did not apply (step %d)", k);
			break;
		}
		CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	}
	CHECKF(k > 10 && k <= 40, "the commit took %d steps", k);
	CHECK(seen[0] > 0 && seen[1] > 0);
	free(patch);
}

/* Killed from outside at random times: all or nothing each time. */
static void
atomic_kill_at_random_times(void)
{
	struct tt t;
	char *patch = at_patch();
	int i, status, st, seen[2] = {0, 0};
	pid_t pid;

	struct timespec a, b;
	long span_us;

	tt_setup(&t);
	srand((unsigned)time(NULL) ^ (unsigned)getpid());
	/* One run to the end measures how long a commit takes here, so the
	 * kills spread over all of it. */
	at_old(&t);
	clock_gettime(CLOCK_MONOTONIC, &a);
	pid = at_run_child(&t, patch, 0, 300);
	CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	    WEXITSTATUS(status) == 0);
	clock_gettime(CLOCK_MONOTONIC, &b);
	CHECK_EQ_INT(at_state(&t), 1);
	span_us =
	    (b.tv_sec - a.tv_sec) * 1000000L + (b.tv_nsec - a.tv_nsec) / 1000L;
	for (i = 0; i < 40; i++) {
		at_old(&t);
		pid = at_run_child(&t, patch, 0, 300);
		usleep((useconds_t)(rand() % (span_us + 1)));
		kill(pid, SIGKILL);
		CHECK(waitpid(pid, &status, 0) == pid);
		at_recover(&t);
		st = at_state(&t);
		CHECKF(st >= 0, "mixed state after a random kill (run %d)", i);
		seen[st]++;
	}
	printf("# random kills over %ld us: %d left the old set, %d the new "
	       "one\n",
	    span_us, seen[0], seen[1]);
	free(patch);
}

/* write_file killed at random times: the file is whole, old or new. */
static void
atomic_write_file_kill(void)
{
	struct tt t;
	struct buf big = BUF_INIT;
	int i, status;
	pid_t pid;

	tt_setup(&t);
	for (i = 0; i < 200000; i++)
		buf_adds(&big, "new content line\n");
	for (i = 0; i < 20; i++) {
		tt_put(t.ws, "w.txt", "old\n");
		pid = fork();
		CHECK(pid >= 0);
		if (pid == 0) {
			json_t *r = NULL;
			tool_call("write_file",
			    json_pack(
				"{ssss}", "path", "w.txt", "content", big.data),
			    &t.ctx, &r);
			_exit(0);
		}
		usleep((useconds_t)(rand() % 20000));
		kill(pid, SIGKILL);
		CHECK(waitpid(pid, &status, 0) == pid);
		at_recover(&t);
		CHECK(tt_same(t.ws, "w.txt", "old\n") ||
		    tt_same(t.ws, "w.txt", big.data));
		CHECK(at_leftovers(t.ws) == 0);
	}
	buf_free(&big);
}

/* at_writer - in a child: 25 two-file write sets on the files named
 * after tag; exits with the number that failed. */
static void
at_writer(struct tt *t, const char *tag)
{
	char a[64], b[64], text[64], old[32], new_[32];
	int i, bad = 0;

	snprintf(a, sizeof(a), "%s-1.txt", tag);
	snprintf(b, sizeof(b), "%s-2.txt", tag);
	for (i = 0; i < 25; i++) {
		json_t *r = NULL;
		snprintf(text, sizeof(text), "%s %d\n", tag, i);
		tool_call(
		    "apply_patch", json_pack("{ss}", "patch", ""), &t->ctx, &r);
		json_decref(r);
		r = NULL;
		tool_call("write_file",
		    json_pack("{ssss}", "path", a, "content", text), &t->ctx,
		    &r);
		bad += !tt_ok(r);
		json_decref(r);
		r = NULL;
		snprintf(old, sizeof(old), "n=%d\n", i);
		snprintf(new_, sizeof(new_), "n=%d\n", i + 1);
		tool_call("multi_edit",
		    json_pack("{s[{ssssss}{ssssss}]}", "edits", "path", a,
			"old_string", text, "new_string", "x\n", "path", b,
			"old_string", old, "new_string", new_),
		    &t->ctx, &r);
		bad += !tt_ok(r);
		json_decref(r);
	}
	_exit(bad > 100 ? 100 : bad);
}

/* Two processes committing write sets in one workspace at once: each
 * waits for the other's set, none undoes the other's. */
static void
atomic_concurrent_writers(void)
{
	struct tt t;
	pid_t pa, pb;
	int sa, sb;

	tt_setup(&t);
	tt_put(t.ws, "a-2.txt", "n=0\n");
	tt_put(t.ws, "b-2.txt", "n=0\n");
	pa = fork();
	CHECK(pa >= 0);
	if (pa == 0)
		at_writer(&t, "a");
	pb = fork();
	CHECK(pb >= 0);
	if (pb == 0)
		at_writer(&t, "b");
	CHECK(waitpid(pa, &sa, 0) == pa && waitpid(pb, &sb, 0) == pb);
	CHECKF(WIFEXITED(sa) && WEXITSTATUS(sa) == 0, "writer a: %d failed",
	    WEXITSTATUS(sa));
	CHECKF(WIFEXITED(sb) && WEXITSTATUS(sb) == 0, "writer b: %d failed",
	    WEXITSTATUS(sb));
	CHECK(
	    tt_same(t.ws, "a-1.txt", "x\n") && tt_same(t.ws, "b-1.txt", "x\n"));
	CHECK(at_leftovers(t.ws) == 0);
}

static const struct harness_test tests[] = {
    HT_SLOW(atomic_kill_at_every_step, 120),
    HT_SLOW(atomic_kill_at_random_times, 120),
    HT_SLOW(atomic_write_file_kill, 120),
    HT_SLOW(atomic_concurrent_writers, 120),
};

HARNESS_MAIN(tests)
