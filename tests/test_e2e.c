/*
 * test_e2e - shirod, the real model worker and the loopback mock
 * provider together (tests/mock_provider.py): a turn over the anthropic
 * wire as it goes on the wire, zero configuration from the environment,
 * the doctor's probe, and a chat of 3,000 messages whose compactions are
 * late, failed and cut, with a restart in the middle.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
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

#define E2E_KEY "sk-e2e-SECRET-5550123"

/* The 512-dash ruler every compaction's task ends with. */
static char e2e_ruler[513];

/* need_worker - skip when the model worker is not built. */
static void
need_worker(void)
{
	if (access(tsd_bin("shiro-model-worker"), X_OK) != 0)
		harness_skip("build/shiro-model-worker is not built");
	memset(e2e_ruler, '-', 512);
	e2e_ruler[512] = '\0';
}

/* e2e_config - config.json for provider "mock" (anthropic's wire at the
 * mock), serving turns, and compactions too when memory says so. */
static void
e2e_config(const char *home, const struct mock *mk, const char *memory,
    const char *extra)
{
	char cfg[4096];

	tsd_write(home, "key", E2E_KEY "\n");
	snprintf(cfg, sizeof(cfg),
	    "{\"providers\": {\"mock\": {\"type\": \"anthropic\", \"url\": "
	    "\"%s\", \"keyFile\": \"%s/key\", \"model\": \"m-big\"}},"
	    " \"turns\": {\"provider\": \"mock\"}, \"memory\": %s%s}",
	    mk->base, home, memory, extra ? extra : "");
	tsd_write(home, "config.json", cfg);
}

/* e2e_thinking - add a thinking event's text to the buffer arg. */
static void
e2e_thinking(void *arg, const struct msg *ev)
{
	const char *name = "", *t = "";

	(void)msg_get_str(ev, "ev", &name, NULL);
	(void)msg_get_str(ev, "text", &t, NULL);
	if (arg != NULL && strcmp(name, "thinking") == 0)
		buf_adds(arg, t);
}

/* e2e_turn - SEND text as a turn and wait for its done (or ERROR):
 * the code, the reply (malloc'd, may be NULL) and the thinking seen. */
static void
e2e_turn(void *sock, const char *text, char *code, size_t codelen,
    char **replyp, struct buf *thinking)
{
	struct msg *done;
	const char *t = "";

	*replyp = NULL;
	done =
	    tsd_turn(sock, text, NULL, code, codelen, e2e_thinking, thinking);
	CHECKF(strcmp(code, "no end") != 0 && strcmp(code, "no ack") != 0,
	    "the turn of \"%.40s\" did not end (%s)", text, code);
	if (done == NULL)
		return;
	(void)msg_get_str(done, "text", &t, NULL);
	*replyp = xstrdup(t);
	msg_destroy(&done);
}

/* last_user_text - the text of the last part of the first message. */
static const char *
last_user_text(json_t *body)
{
	json_t *c = mock_at(body, "messages.0.content");

	return json_string_value(
	    json_object_get(json_array_get(c, json_array_size(c) - 1), "text"));
}

/* A turn goes through the real worker to the mock over the anthropic
 * wire: the key only in x-api-key, the system prompt and tools with
 * their cache mark, the view's parts and the Turn: line, the reply and
 * its thinking streamed back, usage counted. */
static void
turn_over_the_anthropic_wire(void)
{
	const char *home = harness_tmpdir();
	struct buf thinking = BUF_INIT;
	struct mock mk;
	json_t *reqs, *b;
	char code[32], *reply, *body;
	void *sock;
	pid_t pid;
	int st, k;

	need_worker();
	mock_start(&mk,
	    "{'responses': [{'thinking': 'Reading the view.', 'signature': "
	    "'sig-1', 'text': 'The view has five notes.', 'chunk': 6, "
	    "'usage': {'input': 40, 'output': 9, 'cache_read': 3000, "
	    "'cache_write': 200}}]}");
	e2e_config(home, &mk, "{\"provider\": \"offline\"}", NULL);
	pid = tsd_start(home, NULL, &st);
	CHECKF(pid > 0, "shirod did not start (%d)", st);
	sock = tsd_attach(home, "test_e2e");
	CHECK(sock != NULL);
	for (k = 0; k < 5; k++) {
		char t[32];

		snprintf(t, sizeof(t), "note %d", k);
		CHECK(tsd_send_text(sock, t, NULL, NULL) == k);
	}
	e2e_turn(
	    sock, "how many notes?", code, sizeof(code), &reply, &thinking);
	CHECK_EQ_STR(code, "ok");
	CHECK_EQ_STR(reply, "The view has five notes.");
	CHECK_EQ_STR(thinking.data, "Reading the view.");
	reqs = mock_requests(&mk, 1, 5000);
	CHECK_EQ_INT(json_array_size(reqs), 1);
	CHECK_EQ_STR(mock_str(json_array_get(reqs, 0), "path"), "/v1/messages");
	CHECK_EQ_STR(
	    mock_header(json_array_get(reqs, 0), "x-api-key"), E2E_KEY);
	body = xstrdup(mock_str(json_array_get(reqs, 0), "body"));
	CHECK(strstr(body, E2E_KEY) == NULL);
	b = mock_body(json_array_get(reqs, 0));
	CHECK_EQ_STR(mock_str(b, "model"), "m-big");
	CHECK(strncmp(mock_str(b, "system.0.text"), "You are shiro", 13) == 0);
	CHECK_EQ_STR(mock_str(b, "system.0.cache_control.type"), "ephemeral");
	CHECK_EQ_STR(mock_str(b, "tools.0.name"), "zoom");
	/* Five view lines: a whole block marked, one line, the message. */
	CHECK(strncmp(mock_str(b, "messages.0.content.0.text"),
		  "<chat>\n0+1|note 0\n", 18) == 0);
	CHECK_EQ_STR(mock_str(b, "messages.0.content.0.cache_control.type"),
	    "ephemeral");
	CHECK_EQ_STR(mock_str(b, "messages.0.content.1.text"), "4+1|note 4\n");
	CHECK(mock_at(b, "messages.0.content.1.cache_control") == NULL);
	CHECK(strstr(last_user_text(b), "\nTurn: ") != NULL);
	CHECK(strstr(last_user_text(b), "\n\nhow many notes?") != NULL);
	CHECK_EQ_INT(tsd_status_int(sock, "turns.done"), 1);
	json_decref(b);
	json_decref(reqs);
	free(body);
	free(reply);
	buf_free(&thinking);
	tsd_close(&sock);
	tsd_stop(pid);
	mock_stop(&mk);
}

/* With nothing in config.json, ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL
 * make anthropic serve turns and compactions (its cheap model), through
 * the worker, to the mock. */
static void
environment_alone_reaches_the_mock(void)
{
	const char *home = harness_tmpdir();
	char env_key[64], env_url[128], code[32], *reply, *text;
	const char *env[3];
	struct mock mk;
	json_t *reqs;
	size_t k, compactions = 0, turns = 0;
	void *sock;
	pid_t pid;
	int st;

	need_worker();
	mock_start(&mk,
	    "{'auto': {'latency_ms': 5, 'marker': '----------', "
	    "'summary_bytes': 200, 'reply': 'hello from the environment'}}");
	snprintf(env_key, sizeof(env_key), "ANTHROPIC_API_KEY=%s", E2E_KEY);
	snprintf(env_url, sizeof(env_url), "ANTHROPIC_BASE_URL=%s", mk.base);
	env[0] = env_key;
	env[1] = env_url;
	env[2] = NULL;
	tsd_env(env);
	pid = tsd_start(home, NULL, &st);
	tsd_env(NULL);
	CHECKF(pid > 0, "shirod did not start (%d)", st);
	sock = tsd_attach(home, "test_e2e");
	CHECK(sock != NULL);
	text = xmalloc(1501);
	memset(text, 'w', 1500);
	for (k = 0; k < 1500; k += 6)
		text[k] = ' ';
	text[1500] = '\0';
	CHECK(tsd_send_text(sock, text, NULL, NULL) == 0);
	CHECK(tsd_settle(sock, 20000, NULL) == 0);
	e2e_turn(sock, "are you there?", code, sizeof(code), &reply, NULL);
	CHECK_EQ_STR(code, "ok");
	CHECK_EQ_STR(reply, "hello from the environment");
	reqs = mock_requests(&mk, 2, 5000);
	for (k = 0; k < json_array_size(reqs); k++) {
		json_t *b = mock_body(json_array_get(reqs, k));

		CHECK_EQ_STR(
		    mock_header(json_array_get(reqs, k), "x-api-key"), E2E_KEY);
		if (strstr(mock_str(json_array_get(reqs, k), "body"),
			e2e_ruler) != NULL) {
			compactions++;
			CHECK_EQ_STR(mock_str(b, "model"), "claude-haiku-4-5");
		} else {
			turns++;
			CHECK_EQ_STR(mock_str(b, "model"), "claude-sonnet-4-5");
		}
		json_decref(b);
	}
	CHECK(compactions >= 1 && turns == 1);
	CHECK(tsd_status_int(sock, "jobs_done") >= 1);
	json_decref(reqs);
	free(reply);
	free(text);
	tsd_close(&sock);
	tsd_stop(pid);
	mock_stop(&mk);
}

/* run_doctor - shirod --home home --doctor --json with env; its output
 * (malloc'd) and exit status. */
static char *
run_doctor(const char *home, const char *const *env, int *statusp)
{
	int fds[2], st = 0;
	struct buf out = BUF_INIT;
	char chunk[4096];
	ssize_t r;
	pid_t pid;

	CHECK(pipe(fds) == 0);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		dup2(fds[1], STDOUT_FILENO);
		close(fds[0]);
		unsetenv("ANTHROPIC_API_KEY");
		unsetenv("OPENAI_API_KEY");
		for (; env != NULL && *env != NULL; env++)
			putenv((char *)*env);
		execl(tsd_bin("shirod"), "shirod", "--home", home, "--doctor",
		    "--json", (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	while ((r = read(fds[0], chunk, sizeof(chunk))) > 0)
		buf_add(&out, chunk, (size_t)r);
	close(fds[0]);
	(void)waitpid(pid, &st, 0);
	*statusp = st;
	if (out.data == NULL)
		buf_adds(&out, "");
	return buf_steal(&out, NULL);
}

/* shirod --doctor probes the endpoint through the model worker: an
 * endpoint that answers (any status) and one where nothing listens. */
static void
doctor_probes_the_endpoint(void)
{
	const char *home = harness_tmpdir();
	char url[160], *out;
	const char *env[3] = {"SHIRO_PROVIDER=openai-chat", url, NULL};
	struct mock mk;
	json_t *j;
	int st;

	need_worker();
	mock_start(&mk, "{}");
	snprintf(url, sizeof(url), "SHIRO_BASE_URL=%s/v1", mk.base);
	out = run_doctor(home, env, &st);
	j = json_loads(out, 0, NULL);
	CHECKF(j != NULL, "doctor said: %s", out);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	CHECK_EQ_STR(mock_str(j, "turns.provider"), "openai-chat");
	CHECK(json_is_true(mock_at(j, "probes.0.answered")));
	CHECK(json_is_true(mock_at(j, "ok")));
	json_decref(j);
	free(out);
	mock_stop(&mk);
	/* Nothing listens there now. */
	out = run_doctor(home, env, &st);
	j = json_loads(out, 0, NULL);
	CHECKF(j != NULL, "doctor said: %s", out);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 1);
	CHECK(json_is_false(mock_at(j, "probes.0.answered")));
	CHECK(strlen(mock_str(j, "probes.0.text")) > 0);
	json_decref(j);
	free(out);
}

/* e2e_text - message k of the long run: sizes from a word to 2,000 bytes,
 * some with line breaks (malloc'd). */
static char *
e2e_text(unsigned k)
{
	static const char *const w[] = {"store", "planner", "fix", "view",
	    "merge", "test", "line", "node", "error", "cache", "turn"};
	struct buf b = BUF_INIT;
	size_t len = k % 7 == 0 ? 2000 : k % 3 == 0 ? 700 : 20 + (k * 37) % 480;
	unsigned n = 0;

	buf_printf(&b, "m%u", k);
	while (b.len < len) {
		buf_addc(&b, n % 13 == 12 ? '\n' : ' ');
		buf_adds(&b, w[(k + n++) % (sizeof(w) / sizeof(w[0]))]);
	}
	buf_truncate(&b, len);
	return buf_steal(&b, NULL);
}

/* The auto mode of the mock for the long run: a summary from each
 * compaction request, a short reply to anything else. */
#define E2E_AUTO \
	"'auto': {'latency_ms': 3, 'marker': '----------', 'summary_bytes': " \
	"300, 'reply': 'ok'}"

/* plan_view - shiro-plan --final on trace: its view as "l:i ..." with the
 * placeholder's '*' dropped (malloc'd), or NULL. */
static char *
plan_view(const char *trace)
{
	char cmd[PATH_MAX * 2], *line = xmalloc(1 << 20), *v, *p;
	FILE *f;

	snprintf(
	    cmd, sizeof(cmd), "%s --final %s", tsd_bin("shiro-plan"), trace);
	f = popen(cmd, "r");
	if (f == NULL || fgets(line, 1 << 20, f) == NULL) {
		if (f != NULL)
			pclose(f);
		free(line);
		return NULL;
	}
	pclose(f);
	line[strcspn(line, "\n")] = '\0';
	v = strstr(line, " view");
	if (v == NULL) {
		free(line);
		return NULL;
	}
	v += 5;
	if (*v == ' ')
		v++;
	for (p = v; *p; p++)
		if (*p == '*')
			memmove(p, p + 1, strlen(p));
	v = xstrdup(v);
	free(line);
	return v;
}

/* nodes_fit - every node shiro-store exports is 1 to 512 bytes; their
 * number. */
static size_t
nodes_fit(const char *home)
{
	char dir[PATH_MAX + 8], cmd[PATH_MAX * 3], line[8192];
	size_t n = 0;
	FILE *f;

	snprintf(dir, sizeof(dir), "%s/gist", home);
	snprintf(cmd, sizeof(cmd),
	    "%s export --gist %s %s >/dev/null 2>&1 && cat %s/tree/*.jsonl",
	    tsd_bin("shiro-store"), dir, home, dir);
	f = popen(cmd, "r");
	CHECK(f != NULL);
	while (fgets(line, sizeof(line), f) != NULL) {
		json_t *j = json_loads(line, 0, NULL);
		const char *t;

		if (j == NULL || json_object_get(j, "l") == NULL) {
			json_decref(j);
			continue;
		}
		t = json_string_value(json_object_get(j, "text"));
		CHECKF(t != NULL && strlen(t) >= 1 && strlen(t) <= 512,
		    "a node of %zu bytes: %.80s", t ? strlen(t) : 0, line);
		n++;
		json_decref(j);
	}
	pclose(f);
	return n;
}

/*
 * 3,000 messages through shirod, the real worker and the mock: some
 * compactions late (3 s), some failing (500s past the retries), some cut
 * (lines over 512 bytes, retried, then cut), and a restart in the
 * middle.  Every node is 1 to 512 bytes, the daemon's view is what
 * shiro-plan makes of the same events, and no request holds the
 * placeholder.
 */
static void
three_thousand_messages(void)
{
	const char *home = harness_tmpdir();
	const char *extra1[] = {"--trace", NULL, NULL};
	char t1[PATH_MAX + 16], t2[PATH_MAX + 16], all[PATH_MAX + 16];
	char cmd[PATH_MAX * 6], *view, *plan, *text;
	struct mock mk;
	void *sock;
	pid_t pid;
	unsigned k;
	size_t nodes;
	int st;

	need_worker();
	mock_start(&mk, "{" E2E_AUTO "}");
	e2e_config(home, &mk,
	    "{\"provider\": \"mock\", \"ceiling\": 20000, \"floor\": 10000, "
	    "\"compactionCeiling\": 8000, \"compactionFloor\": 4000}",
	    NULL);
	snprintf(t1, sizeof(t1), "%s/trace1.txt", home);
	snprintf(t2, sizeof(t2), "%s/trace2.txt", home);
	snprintf(all, sizeof(all), "%s/trace.txt", home);
	extra1[1] = t1;
	pid = tsd_start(home, extra1, &st);
	CHECKF(pid > 0, "shirod did not start (%d)", st);
	sock = tsd_connect(home);
	for (k = 0; k < 3000; k++) {
		if (k == 400)
			mock_set(&mk,
			    "{'responses': [{'match': '----------', 'status': "
			    "500, 'error': {'type': 'api_error', 'message': "
			    "'overloaded'}, 'times': 30}], " E2E_AUTO "}");
		if (k == 900) {
			/* The 500s have failed some nodes (after the
			 * worker's own retries) before the next phase. */
			uint64_t until = tsd_now_ms() + 30000;

			while (tsd_status_int(sock, "failures.total") < 3 &&
			    tsd_now_ms() < until)
				usleep(50000);
			CHECK(tsd_status_int(sock, "failures.total") >= 3);
		}
		if (k == 900)
			mock_set(&mk,
			    "{'responses': [{'match': '----------', 'text': "
			    "'" /* a line of 700 bytes, every try */
			    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
			    "xxxxxxxx"
			    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
			    "xxxxxxxx"
			    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
			    "xxxxxxxx"
			    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
			    "xxxxxxxx"
			    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
			    "xxxxxxxx"
			    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
			    "xxxxxxxx"
			    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
			    "xxxxxxxx"
			    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
			    "xxxxxxxx"
			    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
			    "xxxxxxxx"
			    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
			    "xxxxxxxx"
			    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
			    "xxxxxxxx"
			    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
			    "xxxxxxxx"
			    "', 'times': 40}], " E2E_AUTO "}");
		if (k == 1300)
			mock_set(&mk,
			    "{'responses': [{'match': '----------', "
			    "'delay_ms': "
			    "3000, 'text': 'a late summary', 'times': "
			    "6}], " E2E_AUTO "}");
		if (k == 1500) {
			/* A restart in the middle: what was built stays,
			 * what was in flight is asked again. */
			CHECK(tsd_settle(sock, 60000, NULL) == 0);
			/* The failed nodes were built all the same. */
			CHECK(tsd_status_int(sock, "failures.total") >= 3);
			tsd_close(&sock);
			st = tsd_stop(pid);
			CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
			extra1[1] = t2;
			pid = tsd_start(home, extra1, &st);
			CHECKF(pid > 0, "shirod did not restart (%d)", st);
			sock = tsd_connect(home);
			CHECK_EQ_INT(tsd_status_int(sock, "messages"), 1500);
		}
		text = e2e_text(k);
		CHECKF(tsd_send_text(sock, text, NULL, NULL) == (int64_t)k,
		    "message %u was not acknowledged", k);
		free(text);
	}
	CHECK(tsd_settle(sock, 120000, NULL) == 0);
	view = tsd_view(sock);
	CHECK(view != NULL && *view != '\0');
	tsd_close(&sock);
	st = tsd_stop(pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	/* The two traces are one history (the second's budget line out). */
	snprintf(cmd, sizeof(cmd), "cat %s > %s && tail -n +2 %s >> %s", t1,
	    all, t2, all);
	CHECK(system(cmd) == 0);
	plan = plan_view(all);
	CHECKF(plan != NULL && strcmp(plan, view) == 0,
	    "daemon %.300s\nplanner %.300s", view, plan ? plan : "(none)");
	nodes = nodes_fit(home);
	CHECKF(nodes > 2000, "%zu nodes", nodes);
	/* No request ever held the placeholder; the cut lines came. */
	snprintf(cmd, sizeof(cmd),
	    "grep -qF '(not summarized yet: zoom it)' %s", mk.log);
	CHECK(system(cmd) != 0);
	snprintf(cmd, sizeof(cmd),
	    "grep -qF 'Too long' %s || grep -qiF "
	    "'too long' %s",
	    mk.log, mk.log);
	CHECK(system(cmd) == 0);
	free(view);
	free(plan);
	mock_stop(&mk);
}

static const struct harness_test tests[] = {
    HT(turn_over_the_anthropic_wire),
    HT(environment_alone_reaches_the_mock),
    HT(doctor_probes_the_endpoint),
    HT_SLOW(three_thousand_messages, 400),
};

HARNESS_MAIN(tests)
