/*
 * test_tools_worker - shiro-fs-worker and shiro-tool-worker as real
 * processes.  The test plays the broker: a ROUTER in a temporary
 * directory, JOBs for tools, and checks of the CHUNKs, RESULTs and
 * FAILs that come back.
 */
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "proto/msg.h"
#include "proto/zsock.h"
#include "sandbox/jail.h"
#include "tests/harness.h"
#include "tests/test_tools_util.h"

struct tw {
	char endpoint[PATH_MAX + 16];
	void *router;
	pid_t pid;
	struct msg_ident id;
};

/* tw_start_hb - bind the ROUTER and start the worker program prog, with
 * --workspace ws (NULL: none) and --heartbeat-ms hb.  The ROUTER sends
 * no ZMTP pings, as shirod's does not. */
static void
tw_start_hb(struct tw *w, const char *prog, const char *ws, const char *hb)
{
	char self[PATH_MAX], path[PATH_MAX + 64];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	struct zsock_opts zo = {0};

	CHECK(n > 0);
	self[n] = '\0';
	snprintf(path, sizeof(path), "%s/../%s", dirname(self), prog);
	if (access(path, X_OK) != 0)
		harness_skip("%s is not built", path);
	snprintf(w->endpoint, sizeof(w->endpoint), "ipc://%s/w.sock",
	    harness_tmpdir());
	zo.heartbeat_ms = -1;
	CHECK(zsock_router(w->endpoint, &zo, &w->router) == 0);
	w->pid = fork();
	CHECK(w->pid >= 0);
	if (w->pid == 0) {
		/* A locked-down worker (no ptrace, no /proc) is out of
		 * reach of LeakSanitizer, in ASan builds. */
		setenv("ASAN_OPTIONS", "detect_leaks=0", 1);
		if (ws != NULL)
			execl(path, path, "--endpoint", w->endpoint,
			    "--heartbeat-ms", hb, "--give-up-ms", "20000",
			    "--workspace", ws, (char *)NULL);
		else
			execl(path, path, "--endpoint", w->endpoint,
			    "--heartbeat-ms", hb, "--give-up-ms", "20000",
			    (char *)NULL);
		_exit(127);
	}
}

/* tw_start - tw_start_hb with heartbeats every 200 ms. */
static void
tw_start(struct tw *w, const char *prog, const char *ws)
{
	tw_start_hb(w, prog, ws, "200");
}

/* tw_recv - the next message of one of the types want/also within ms. */
static struct msg *
tw_recv(struct tw *w, enum msg_type want, enum msg_type also, long ms)
{
	long long end = zsock_now_ms() + ms;
	struct zsock_poll it = {w->router, -1, ZSOCK_IN, 0};
	struct msg_ident from;
	struct msg *m;

	while (zsock_now_ms() < end) {
		if (zsock_poll(&it, 1, (long)(end - zsock_now_ms())) <= 0)
			continue;
		while (msg_recv(w->router, &m, &from) == 0) {
			if (msg_type(m) == want || msg_type(m) == also) {
				w->id = from;
				return m;
			}
			msg_destroy(&m);
		}
	}
	harness_fail(
	    __FILE__, __LINE__, "no %s within %ld ms", msg_type_name(want), ms);
}

/* tw_stop - kill the worker and close the socket. */
static void
tw_stop(struct tw *w)
{
	if (w->pid > 0) {
		kill(w->pid, SIGKILL);
		waitpid(w->pid, NULL, 0);
		w->pid = 0;
	}
	zsock_close(&w->router);
}

/* tw_job - send a tool JOB. */
static void
tw_job(struct tw *w, unsigned id, const char *tool, const char *args,
    const char *ws)
{
	struct msg *m = msg_new(MSG_JOB);
	struct msg_val *d;

	msg_set_int(m, "job", (int64_t)id);
	msg_set_str(m, "kind", "tool");
	d = msg_set_map(m, "data");
	msg_val_set_str(d, "tool", tool);
	msg_val_set_str(d, "args", args);
	msg_val_set_str(d, "workspace", ws);
	CHECK(msg_send(w->router, m, &w->id) == 0);
	msg_destroy(&m);
}

/* drop_ready - wait for the worker's READY. */
static void
drop_ready(struct tw *w)
{
	struct msg *m = tw_recv(w, MSG_READY, MSG_READY, 5000);

	msg_destroy(&m);
}

/* tw_result - the result document of a RESULT (caller frees). */
static json_t *
tw_result(struct msg *m)
{
	const char *text = NULL;
	json_t *doc;

	CHECK(msg_get_str(m, "text", &text, NULL) == 0);
	doc = json_loads(text, 0, NULL);
	CHECK(doc != NULL);
	return doc;
}

/* The fs worker runs file tools and refuses bash and malformed jobs. */
static void
fs_worker_runs_file_tools(void)
{
	struct tt t;
	struct tw w = {0};
	struct msg *m;
	const char *s = NULL;
	json_t *doc;

	tt_setup(&t);
	tt_put(t.ws, "a.txt", "hello\n");
	tw_start(&w, "shiro-fs-worker", t.ws);
	m = tw_recv(&w, MSG_READY, MSG_READY, 5000);
	CHECK(msg_get_str(m, "role", &s, NULL) == 0 && strcmp(s, "fs") == 0);
	msg_destroy(&m);
	tw_job(&w, 1, "read_file", "{\"path\":\"a.txt\"}", t.ws);
	m = tw_recv(&w, MSG_RESULT, MSG_FAIL, 5000);
	CHECK(msg_type(m) == MSG_RESULT);
	doc = tw_result(m);
	CHECK(tt_ok(doc));
	CHECK_EQ_STR(tt_str(doc, "content"), "hello\n");
	json_decref(doc);
	msg_destroy(&m);
	tw_job(
	    &w, 2, "write_file", "{\"path\":\"../x\",\"content\":\"\"}", t.ws);
	m = tw_recv(&w, MSG_RESULT, MSG_FAIL, 5000);
	doc = tw_result(m);
	CHECK(!tt_ok(doc) && strstr(tt_str(doc, "error"), "outside"));
	json_decref(doc);
	msg_destroy(&m);
	tw_job(&w, 3, "bash", "{\"command\":\"true\"}", t.ws);
	m = tw_recv(&w, MSG_FAIL, MSG_RESULT, 5000);
	CHECK(msg_type(m) == MSG_FAIL);
	CHECK(
	    msg_get_str(m, "code", &s, NULL) == 0 && strcmp(s, "badjob") == 0);
	msg_destroy(&m);
	tw_job(&w, 4, "read_file", "{\"path\":\"a.txt\"}", "relative/ws");
	m = tw_recv(&w, MSG_FAIL, MSG_RESULT, 5000);
	CHECK(msg_type(m) == MSG_FAIL);
	msg_destroy(&m);
	tw_job(&w, 5, "read_file", "{not json", t.ws);
	m = tw_recv(&w, MSG_RESULT, MSG_FAIL, 5000);
	doc = tw_result(m);
	CHECK(!tt_ok(doc) && strstr(tt_str(doc, "error"), "not JSON"));
	json_decref(doc);
	msg_destroy(&m);
	tw_stop(&w);
}

/* The tool worker streams bash output and a CANCEL kills the command. */
static void
tool_worker_streams_and_cancels(void)
{
	struct jail_features f;
	struct tt t;
	struct tw w = {0};
	struct msg *m;
	const char *s = NULL;
	long long start;
	json_t *doc;

	jail_probe(&f);
	if (f.missing[0] != '\0')
		harness_skip("the jail lacks: %s", f.missing);
	tt_setup(&t);
	tw_start(&w, "shiro-tool-worker", t.ws);
	m = tw_recv(&w, MSG_READY, MSG_READY, 5000);
	CHECK(msg_get_str(m, "role", &s, NULL) == 0 && strcmp(s, "tool") == 0);
	msg_destroy(&m);
	tw_job(&w, 1, "bash", "{\"command\":\"echo one; sleep 0.5; echo two\"}",
	    t.ws);
	m = tw_recv(&w, MSG_CHUNK, MSG_FAIL, 10000);
	CHECKF(msg_type(m) == MSG_CHUNK, "no CHUNK: %s",
	    msg_get_str(m, "text", &s, NULL) == 0 ? s : "?");
	CHECK(msg_get_str(m, "text", &s, NULL) == 0 && strcmp(s, "one\n") == 0);
	msg_destroy(&m);
	m = tw_recv(&w, MSG_RESULT, MSG_FAIL, 10000);
	CHECK(msg_type(m) == MSG_RESULT);
	doc = tw_result(m);
	CHECK(tt_ok(doc));
	CHECK_EQ_STR(tt_str(doc, "output"), "one\ntwo\n");
	json_decref(doc);
	msg_destroy(&m);
	tw_job(&w, 2, "bash", "{\"command\":\"echo started; sleep 30\"}", t.ws);
	m = tw_recv(&w, MSG_CHUNK, MSG_FAIL, 10000);
	CHECK(msg_type(m) == MSG_CHUNK);
	msg_destroy(&m);
	m = msg_new(MSG_CANCEL);
	msg_set_int(m, "job", 2);
	CHECK(msg_send(w.router, m, &w.id) == 0);
	msg_destroy(&m);
	start = zsock_now_ms();
	m = tw_recv(&w, MSG_FAIL, MSG_RESULT, 10000);
	CHECK(msg_type(m) == MSG_FAIL);
	CHECK(zsock_now_ms() - start < 5000);
	CHECK(msg_get_str(m, "code", &s, NULL) == 0 &&
	    strcmp(s, "canceled") == 0);
	msg_destroy(&m);
	/* The worker still serves afterwards. */
	tw_job(&w, 3, "bash", "{\"command\":\"echo again\"}", t.ws);
	m = tw_recv(&w, MSG_RESULT, MSG_FAIL, 10000);
	CHECK(msg_type(m) == MSG_RESULT);
	msg_destroy(&m);
	tw_stop(&w);
}

/* An fs worker started for one workspace serves only that one. */
static void
fs_worker_serves_one_workspace(void)
{
	struct tt t;
	struct tw w = {0};
	struct msg *m;
	const char *s = NULL;
	json_t *doc;

	tt_setup(&t);
	tt_put(t.ws, "a.txt", "mine\n");
	tt_put(t.out, "b.txt", "theirs\n");
	tw_start(&w, "shiro-fs-worker", t.ws);
	drop_ready(&w);
	tw_job(&w, 1, "read_file", "{\"path\":\"a.txt\"}", t.ws);
	m = tw_recv(&w, MSG_RESULT, MSG_FAIL, 5000);
	CHECK(msg_type(m) == MSG_RESULT);
	doc = tw_result(m);
	CHECK_EQ_STR(tt_str(doc, "content"), "mine\n");
	json_decref(doc);
	msg_destroy(&m);
	tw_job(&w, 2, "read_file", "{\"path\":\"b.txt\"}", t.out);
	m = tw_recv(&w, MSG_FAIL, MSG_RESULT, 5000);
	CHECK(msg_type(m) == MSG_FAIL);
	CHECK(msg_get_str(m, "code", &s, NULL) == 0 &&
	    strcmp(s, "workspace") == 0);
	msg_destroy(&m);
	tw_stop(&w);
}

/* tw_ok - run tool with args in ws and check that its result is ok. */
static void
tw_ok(struct tw *w, unsigned id, const char *tool, const char *args,
    const char *ws)
{
	struct msg *m;
	json_t *doc;

	tw_job(w, id, tool, args, ws);
	m = tw_recv(w, MSG_RESULT, MSG_FAIL, 5000);
	CHECKF(msg_type(m) == MSG_RESULT, "%s: FAIL", tool);
	doc = tw_result(m);
	CHECKF(tt_ok(doc), "%s: %s", tool,
	    tt_str(doc, "error") ? tt_str(doc, "error") : "not ok");
	json_decref(doc);
	msg_destroy(&m);
}

/* Every file tool works in the locked-down fs worker: its allow-list
 * and its Landlock rules hold what the tools need. */
static void
fs_worker_runs_every_file_tool(void)
{
	struct tt t;
	struct tw w = {0};

	tt_setup(&t);
	tt_put(t.ws, "a.txt", "one\ntwo\n");
	tt_put(t.ws, "sub/b.txt", "three\n");
	tw_start(&w, "shiro-fs-worker", t.ws);
	drop_ready(&w);
	tw_ok(&w, 1, "read_file", "{\"path\":\"a.txt\"}", t.ws);
	tw_ok(&w, 2, "read_many_files", "{\"paths\":[\"a.txt\",\"sub/b.txt\"]}",
	    t.ws);
	tw_ok(&w, 3, "list_dir", "{\"path\":\".\",\"depth\":3}", t.ws);
	tw_ok(&w, 4, "glob", "{\"pattern\":\"**/*.txt\"}", t.ws);
	tw_ok(&w, 5, "grep", "{\"pattern\":\"t.o\"}", t.ws);
	tw_ok(&w, 6, "write_file",
	    "{\"path\":\"new/c.txt\",\"content\":\"x\\n\"}", t.ws);
	tw_ok(&w, 7, "edit_file",
	    "{\"path\":\"a.txt\",\"old_string\":\"one\",\"new_string\":\"1\"}",
	    t.ws);
	tw_ok(&w, 8, "multi_edit",
	    "{\"path\":\"a.txt\",\"edits\":[{\"old_string\":\"two\","
	    "\"new_string\":\"2\"}]}",
	    t.ws);
	tw_ok(&w, 9, "apply_patch",
	    "{\"patch\":\"--- a/sub/b.txt\\n+++ b/sub/b.txt\\n@@ -1 +1 @@\\n"
	    "-three\\n+3\\n\"}",
	    t.ws);
	tw_ok(&w, 10, "move_file", "{\"from\":\"new/c.txt\",\"to\":\"d.txt\"}",
	    t.ws);
	tw_ok(&w, 11, "delete_file", "{\"path\":\"d.txt\"}", t.ws);
	CHECK(tt_same(t.ws, "a.txt", "1\n2\n"));
	CHECK(tt_same(t.ws, "sub/b.txt", "3\n"));
	CHECK(!tt_exists(t.ws, "d.txt") && !tt_exists(t.ws, "new/c.txt"));
	tw_stop(&w);
}

/* An fs worker without --workspace refuses to start. */
static void
fs_worker_needs_a_workspace(void)
{
	struct tw w = {0};
	int st;

	tw_start(&w, "shiro-fs-worker", NULL);
	CHECK(waitpid(w.pid, &st, 0) == w.pid);
	w.pid = 0;
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 1);
	tw_stop(&w);
}

/* tw_file_has - whether the file at path holds needle. */
static int
tw_file_has(const char *path, const char *needle)
{
	char buf[65536];
	FILE *f = fopen(path, "r");
	size_t n;

	if (f == NULL)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	return strstr(buf, needle) != NULL;
}

/*
 * A broker that stops reading: the tool worker's queue fills, and a
 * piece of output waits for room 10 s at most (WORKER_SEND_WAIT_MS),
 * then goes unsent and the worker says so.  It never waits for good:
 * once the broker reads again the rest of the output and the job's
 * RESULT come, and the worker serves the next job.  (Its heartbeat is
 * 20 s here, so that libzmq does not close the connection first: with
 * the broker's input stopped its ZMTP pings go unanswered.)
 */
static void
tool_worker_gives_up_on_a_full_queue(void)
{
	struct jail_features f;
	struct tt t;
	struct tw w = {0};
	struct msg *m;
	const char *s = NULL;
	char err[PATH_MAX];
	long long stalled, said = 0;
	unsigned long long bytes = 0;
	size_t len;
	int fd, saved;

	jail_probe(&f);
	if (f.missing[0] != '\0')
		harness_skip("the jail lacks: %s", f.missing);
	tt_setup(&t);
	/* The worker's stderr goes to a file (it inherits fd 2). */
	snprintf(err, sizeof(err), "%s/worker.err", harness_tmpdir());
	fd = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	CHECK(fd >= 0);
	saved = dup(2);
	CHECK(saved >= 0 && dup2(fd, 2) == 2);
	tw_start_hb(&w, "shiro-tool-worker", t.ws, "20000");
	CHECK(dup2(saved, 2) == 2);
	close(saved);
	close(fd);
	drop_ready(&w);
	tw_job(&w, 1, "bash",
	    "{\"command\":\"head -c 150000000 /dev/zero | tr '\\\\0' a\"}",
	    t.ws);
	m = tw_recv(&w, MSG_CHUNK, MSG_FAIL, 10000);
	CHECK(msg_type(m) == MSG_CHUNK);
	msg_destroy(&m);
	/* Read nothing until the worker says it gave a piece up. */
	stalled = zsock_now_ms();
	while (zsock_now_ms() - stalled < 60000) {
		if (tw_file_has(err, "unsent so far")) {
			said = zsock_now_ms();
			break;
		}
		(void)zsock_poll(NULL, 0, 100);
	}
	CHECKF(said != 0, "no word of an unsent piece in 60 s");
	CHECKF(said - stalled >= 10000,
	    "a piece was given up %lld ms after the broker stopped reading",
	    said - stalled);
	CHECK(kill(w.pid, 0) == 0);
	/* Reading again: the rest comes, then the RESULT. */
	for (;;) {
		m = tw_recv(&w, MSG_CHUNK, MSG_RESULT, 60000);
		if (msg_type(m) != MSG_CHUNK)
			break;
		if (msg_get_str(m, "text", &s, &len) == 0)
			bytes += len;
		msg_destroy(&m);
	}
	CHECK(msg_type(m) == MSG_RESULT);
	msg_destroy(&m);
	CHECKF(bytes < 150000000ULL, "%llu bytes came, none given up", bytes);
	fprintf(
	    stderr, "  %llu of 150000000 bytes came after the stall\n", bytes);
	tw_job(&w, 2, "bash", "{\"command\":\"echo again\"}", t.ws);
	m = tw_recv(&w, MSG_RESULT, MSG_FAIL, 10000);
	CHECK(msg_type(m) == MSG_RESULT);
	msg_destroy(&m);
	tw_stop(&w);
}

static const struct harness_test tests[] = {
    HT(fs_worker_runs_every_file_tool),
    HT(fs_worker_needs_a_workspace),
    HT(fs_worker_runs_file_tools),
    HT(tool_worker_streams_and_cancels),
    HT(fs_worker_serves_one_workspace),
    HT_SLOW(tool_worker_gives_up_on_a_full_queue, 120),
};

HARNESS_MAIN(tests)
