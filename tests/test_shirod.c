/*
 * test_shirod - shirod as a real process: start-up under the lock, the
 * message path, the tree built by real offline model workers, the view
 * against the scenario runner, crash and restart, worker supervision,
 * and bad clients.  Each test runs in its own temporary home and kills
 * every process it started, by pid.
 *
 * The same binary is also a misbehaving worker: shirod runs it when a
 * test's config.json names it as a worker program (see rogue_main).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zmq.h>

#include "proto/buf.h"
#include "proto/err.h"
#include "proto/msg.h"
#include "proto/xmalloc.h"
#include "proto/zsock.h"
#include "tests/harness.h"
#include "tests/test_shirod_util.h"

/* A config with one offline worker, fast heartbeats and restarts. */
#define CFG_ONE \
	"{\"workers\": [{\"role\": \"model\", \"provider\": \"offline\"," \
	" \"count\": 1}], \"heartbeat\": {\"intervalMs\": 300}," \
	" \"restart\": {\"minMs\": 50, \"maxMs\": 400}}"

/* need_worker - skip the test when the offline model worker is not built. */
static void
need_worker(void)
{
	if (access(tsd_bin("shiro-model-worker"), X_OK) != 0)
		harness_skip("build/shiro-model-worker is not built yet");
}

/* start - shirod in home with config text (NULL: none); its pid. */
static pid_t
start(const char *home, const char *config, const char *const *extra)
{
	pid_t pid;
	int st;

	if (config != NULL)
		tsd_write(home, "config.json", config);
	pid = tsd_start(home, extra, &st);
	CHECKF(pid > 0, "shirod did not start (status %d); see %s/shirod.err",
	    st, home);
	return pid;
}

/*
 * long_text - a message of about len bytes that needs a model call, of
 * varied clauses as a real one is: the offline summarizer says no run of
 * three words twice, so a text repeating one phrase would summarize to a
 * short line.  11 and 13 words give 143 distinct pairs, more than the
 * clauses of a 3,000-byte text.
 */
static char *
long_text(unsigned n, size_t len)
{
	static const char *const what[] = {"build", "link", "test", "install",
	    "lint", "format", "fuzz", "bench", "deploy", "merge", "release"};
	static const char *const how[] = {"failed", "passed", "stalled",
	    "crashed", "skipped", "hung", "flaked", "finished", "restarted",
	    "waited", "retried", "resumed", "stopped"};
	struct buf b = BUF_INIT;
	unsigned k = 0;

	buf_printf(&b, "message %u: ", n);
	while (b.len < len) {
		buf_printf(&b, "step %u: %s %s after %u ms; ", k, what[k % 11],
		    how[k % 13], (unsigned)b.len);
		k++;
	}
	return buf_steal(&b, NULL);
}

/* A second shirod on the same home exits with code 3 and says why; the
 * first one keeps serving. */
static void
second_shirod_exits_already_running(void)
{
	const char *home = harness_tmpdir();
	pid_t pid, pid2;
	char *err, path[PATH_MAX];
	void *sock;
	int st;

	pid = start(home, "{\"workers\": []}", NULL);
	pid2 = fork();
	if (pid2 == 0) {
		snprintf(path, sizeof(path), "%s/second.err", home);
		st = open(path, O_WRONLY | O_CREAT, 0600);
		dup2(st, 2);
		execl(
		    tsd_bin("shirod"), "shirod", "--home", home, (char *)NULL);
		_exit(127);
	}
	CHECK(waitpid(pid2, &st, 0) == pid2);
	CHECK(WIFEXITED(st));
	CHECK_EQ_INT(WEXITSTATUS(st), 3);
	snprintf(path, sizeof(path), "%s/second.err", home);
	err = tsd_read_file(path);
	CHECK(err != NULL && strstr(err, "already runs") != NULL);
	free(err);
	sock = tsd_connect(home);
	CHECK(tsd_status_int(sock, "messages") == 0);
	CHECK_EQ_INT(tsd_status_int(sock, "pid"), pid);
	tsd_close(&sock);
	st = tsd_stop(pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* --daemon: the first process exits 0 once the daemon serves, the log
 * goes to shirod.log, and a second --daemon exits 3. */
static void
daemon_mode_detaches(void)
{
	const char *home = harness_tmpdir();
	char cmd[PATH_MAX * 2], path[PATH_MAX], *log;
	int64_t pid;
	void *sock;
	int rc;

	tsd_write(home, "config.json", "{\"workers\": []}");
	snprintf(cmd, sizeof(cmd), "%s --home %s --daemon 2>/dev/null",
	    tsd_bin("shirod"), home);
	rc = system(cmd);
	CHECK(WIFEXITED(rc) && WEXITSTATUS(rc) == 0);
	sock = tsd_connect(home);
	pid = tsd_status_int(sock, "pid");
	CHECK(pid > 0);
	rc = system(cmd);
	CHECK(WIFEXITED(rc) && WEXITSTATUS(rc) == 3);
	snprintf(path, sizeof(path), "%s/shirod.log", home);
	log = tsd_read_file(path);
	CHECK(log != NULL && strstr(log, "serving") != NULL);
	free(log);
	tsd_close(&sock);
	kill((pid_t)pid, SIGTERM);
	for (rc = 0; rc < 500 && kill((pid_t)pid, 0) == 0; rc++)
		usleep(10000);
	CHECK(kill((pid_t)pid, 0) != 0);
}

/* A socket file left by a dead shirod is taken over. */
static void
stale_socket_is_taken_over(void)
{
	const char *home = harness_tmpdir();
	char path[PATH_MAX];
	pid_t pid;
	void *sock;

	snprintf(path, sizeof(path), "%s/run", home);
	mkdir(path, 0700);
	tsd_write(path, "shirod.sock", "left behind by a dead shirod");
	pid = start(home, "{\"workers\": []}", NULL);
	sock = tsd_connect(home);
	CHECK(tsd_status_int(sock, "messages") == 0);
	tsd_close(&sock);
	tsd_stop(pid);
}

/* A bad config.json stops shirod with code 2 and names the key. */
static void
bad_config_names_the_key(void)
{
	const char *home = harness_tmpdir();
	char path[PATH_MAX], *err;
	int st;

	tsd_write(home, "config.json", "{\"memory\": {\"floor\": -5}}");
	CHECK(tsd_start(home, NULL, &st) < 0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 2);
	snprintf(path, sizeof(path), "%s/shirod.err", home);
	err = tsd_read_file(path);
	CHECK(err != NULL && strstr(err, "memory.floor") != NULL);
	free(err);
}

/* Messages from two clients are logged once each, in the order of their
 * acknowledgements; a retried key gets the same id and no second line. */
static void
messages_logged_in_order_once(void)
{
	const char *home = harness_tmpdir();
	char key[32], text[64], path[PATH_MAX];
	const struct msg_val *doc, *log;
	struct msg *m, *r;
	int64_t id, ids[200];
	void *a, *b;
	pid_t pid;
	int k;

	pid = start(home, "{\"workers\": []}", NULL);
	a = tsd_connect(home);
	b = tsd_connect(home);
	for (k = 0; k < 200; k++) {
		snprintf(key, sizeof(key), "k%d", k);
		snprintf(text, sizeof(text), "hello %d", k);
		ids[k] = tsd_send_text(k % 2 ? b : a, text, key, NULL);
		CHECKF(ids[k] == k, "message %d got id %lld", k,
		    (long long)ids[k]);
	}
	/* A retry after a lost ACK: the same id, nothing logged. */
	id = tsd_send_text(a, "hello 7 again", "k7", NULL);
	CHECK_EQ_INT(id, 7);
	m = msg_new(MSG_LOG);
	msg_set_int(m, "tail", 1000);
	r = tsd_call(a, m, 5000, NULL);
	msg_destroy(&m);
	CHECK(r != NULL && msg_get_map(r, "doc", &doc) == 0);
	CHECK_EQ_INT(tsd_doc_int(doc, "messages"), 200);
	log = msg_val_get(doc, "log");
	CHECK(log != NULL && log->u.a.n == 200);
	for (k = 0; k < 200; k++) {
		snprintf(text, sizeof(text), "hello %d", k);
		CHECK_EQ_INT(tsd_doc_int(log->u.a.items[k], "id"), k);
		CHECK_EQ_STR(msg_val_str(log->u.a.items[k], "text"), text);
	}
	msg_destroy(&r);
	tsd_close(&a);
	tsd_close(&b);
	tsd_stop(pid);
	/* On disk: 200 lines in the day file. */
	snprintf(path, sizeof(path),
	    "cat %s/chat/main/*.jsonl | wc -l | grep -qx 200", home);
	CHECK(system(path) == 0);
}

/* The offline workers build the whole tree; every view line is built,
 * each node at most 512 bytes. */
static void
tree_built_by_offline_workers(void)
{
	const char *home = harness_tmpdir();
	const struct msg_val *doc, *lines;
	struct tsd_events ev;
	struct msg *m, *r;
	const char *t;
	char *text;
	void *sock;
	pid_t pid;
	size_t k;
	unsigned n;

	need_worker();
	pid = start(home,
	    "{\"memory\": {\"ceiling\": 6000, \"floor\": 3000,"
	    " \"compactionCeiling\": 3000, \"compactionFloor\": 1500}}",
	    NULL);
	sock = tsd_connect(home);
	memset(&ev, 0, sizeof(ev));
	m = msg_new(MSG_HELLO);
	msg_set_str(m, "client", "test");
	msg_set_int(m, "version", MSG_VERSION);
	r = tsd_call(sock, m, 5000, &ev);
	CHECK(r != NULL && msg_type(r) == MSG_WELCOME);
	msg_destroy(&m);
	msg_destroy(&r);
	for (n = 0; n < 60; n++) {
		text = n % 3 ? long_text(n, 900 + 37 * n)
			     : xasprintf("short note %u", n);
		CHECK(tsd_send_text(sock, text, NULL, &ev) == n);
		free(text);
	}
	CHECKF(tsd_settle(sock, 30000, &ev) == 0, "the view did not settle");
	m = msg_new(MSG_MEMORY);
	r = tsd_call(sock, m, 5000, &ev);
	msg_destroy(&m);
	CHECK(r != NULL && msg_get_map(r, "doc", &doc) == 0);
	lines = msg_val_get(doc, "lines");
	CHECK(lines != NULL && lines->u.a.n > 0);
	for (k = 0; k < lines->u.a.n; k++) {
		const struct msg_val *ln = lines->u.a.items[k];
		const struct msg_val *bv = msg_val_get(ln, "built");

		CHECK(bv != NULL && bv->type == MSG_V_BOOL && bv->u.b);
		t = msg_val_str(ln, "text");
		CHECK(t != NULL && strlen(t) > 0 && strlen(t) <= 512);
	}
	/* The view was merged: fewer lines than messages, under the ceiling. */
	CHECK(lines->u.a.n < 60);
	CHECK(tsd_doc_int(doc, "status.view.bytes") <= 6000);
	msg_destroy(&r);
	CHECKF(ev.messages == 60 && ev.nodes > 40 && ev.batches > 0,
	    "events: %llu messages, %llu nodes, %llu batches",
	    (unsigned long long)ev.messages, (unsigned long long)ev.nodes,
	    (unsigned long long)ev.batches);
	CHECK(!ev.gap);
	tsd_close(&sock);
	tsd_stop(pid);
}

/* run_plan - build/shiro-plan --final on a trace; its view as "l:i ...". */
static char *
run_plan(const char *prog, const char *trace)
{
	char cmd[PATH_MAX * 2], line[1 << 16], *v, *p;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "%s --final %s", prog, trace);
	f = popen(cmd, "r");
	if (f == NULL)
		return NULL;
	if (fgets(line, sizeof(line), f) == NULL) {
		pclose(f);
		return NULL;
	}
	pclose(f);
	line[strcspn(line, "\n")] = '\0';
	v = strstr(line, " view");
	if (v == NULL)
		return NULL;
	v += 5;
	if (*v == ' ')
		v++;
	/* Placeholders carry a '*'; the daemon's view has none once built. */
	for (p = v; *p; p++)
		if (*p == '*')
			memmove(p, p + 1, strlen(p));
	return xstrdup(v);
}

/* The daemon's view is what the scenario runner (and the independent
 * Python model) computes from the same events, and a restart after
 * kill -9 gives the identical view and keeps every acknowledged message. */
static void
view_matches_planner_and_survives_kill9(void)
{
	const char *home = harness_tmpdir();
	const char *extra[] = {"--trace", NULL, NULL};
	char trace[PATH_MAX], cmd[PATH_MAX * 3], *view, *plan, *view2, *text;
	pid_t pid, wp[8];
	void *sock;
	int64_t last = -1;
	int nw, k;
	unsigned n;

	need_worker();
	snprintf(trace, sizeof(trace), "%s/trace.txt", home);
	extra[1] = trace;
	pid = start(home,
	    "{\"memory\": {\"ceiling\": 4000, \"floor\": 2000,"
	    " \"compactionCeiling\": 2000, \"compactionFloor\": 1000}}",
	    extra);
	sock = tsd_connect(home);
	for (n = 0; n < 120; n++) {
		text = n % 4 ? long_text(n, 600 + (n * 53) % 900)
			     : xasprintf("ok %u", n);
		last = tsd_send_text(sock, text, NULL, NULL);
		CHECK(last == n);
		free(text);
		if (n % 10 == 9)
			CHECK(tsd_settle(sock, 30000, NULL) == 0);
	}
	CHECK(tsd_settle(sock, 30000, NULL) == 0);
	view = tsd_view(sock);
	CHECK(view != NULL && *view != '\0');
	plan = run_plan(tsd_bin("shiro-plan"), trace);
	CHECKF(plan != NULL && strcmp(plan, view) == 0, "daemon %s\nplanner %s",
	    view, plan ? plan : "(none)");
	free(plan);
	/* The independent model agrees too (when python3 is there). */
	snprintf(
	    cmd, sizeof(cmd), "python3 tests/planref.py --final %s", trace);
	if (system("python3 -c '' 2>/dev/null") == 0 &&
	    access("tests/planref.py", R_OK) == 0) {
		snprintf(cmd, sizeof(cmd), "python3 tests/planref.py");
		plan = run_plan(cmd, trace);
		CHECKF(plan != NULL && strcmp(plan, view) == 0,
		    "daemon %s\nplanref %s", view, plan ? plan : "(none)");
		free(plan);
	}

	/* kill -9 (workers die with it), then restart: the same view. */
	nw = tsd_worker_pids(sock, wp, 8);
	tsd_close(&sock);
	tsd_kill9(pid);
	for (k = 0; k < nw; k++)
		kill(wp[k], SIGKILL);
	pid = start(home, NULL, NULL);
	sock = tsd_connect(home);
	CHECK_EQ_INT(tsd_status_int(sock, "messages"), last + 1);
	view2 = tsd_view(sock);
	CHECKF(view2 != NULL && strcmp(view, view2) == 0,
	    "before %s\nafter  %s", view, view2 ? view2 : "(none)");
	/* And it goes on. */
	CHECK(tsd_send_text(sock, "after the crash", NULL, NULL) == last + 1);
	free(view);
	free(view2);
	tsd_close(&sock);
	tsd_stop(pid);
}

/* kill -9 in the middle of a stream of SENDs: every acknowledged message
 * is there after the restart, exactly once. */
static void
no_acknowledged_message_lost(void)
{
	const char *home = harness_tmpdir();
	char key[32], text[64];
	int64_t acked = -1, id;
	void *sock;
	pid_t pid;
	int k, st;

	pid = start(home, "{\"workers\": []}", NULL);
	sock = tsd_connect(home);
	for (k = 0; k < 300; k++) {
		snprintf(key, sizeof(key), "key-%d", k);
		snprintf(text, sizeof(text), "durable %d", k);
		if (k == 150) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			break;
		}
		id = tsd_send_text(sock, text, key, NULL);
		CHECK(id == k);
		acked = id;
	}
	tsd_close(&sock);
	pid = start(home, NULL, NULL);
	sock = tsd_connect(home);
	CHECK_EQ_INT(tsd_status_int(sock, "messages"), acked + 1);
	/* Retrying every key gives the old ids and logs nothing new. */
	for (k = 0; k <= acked; k++) {
		snprintf(key, sizeof(key), "key-%d", k);
		CHECK_EQ_INT(tsd_send_text(sock, "retry", key, NULL), k);
	}
	CHECK_EQ_INT(tsd_status_int(sock, "messages"), acked + 1);
	tsd_close(&sock);
	tsd_stop(pid);
}

/* A worker that hangs (SIGSTOP) or dies (SIGKILL) holding a job is
 * replaced, and the job completes on the new worker. */
static void
worker_killed_mid_job_is_replaced(void)
{
	const char *home = harness_tmpdir();
	pid_t pid, wp[2];
	char *text;
	void *sock;
	int round;

	need_worker();
	pid = start(home, CFG_ONE, NULL);
	sock = tsd_connect(home);
	CHECK(tsd_settle(sock, 10000, NULL) == 0);
	for (round = 0; round < 2; round++) {
		uint64_t t0;

		/* Wait until the worker is ready, then freeze it. */
		t0 = tsd_now_ms();
		while (tsd_now_ms() - t0 < 10000 &&
		    (tsd_worker_pids(sock, wp, 2) != 1 ||
			tsd_status_int(sock, "workers_ready") == 0))
			usleep(50000);
		CHECK(tsd_worker_pids(sock, wp, 2) == 1);
		kill(wp[0], SIGSTOP);
		text = long_text((unsigned)round, 2000);
		CHECK(tsd_send_text(sock, text, NULL, NULL) == round);
		free(text);
		/* The job is in flight to the frozen worker. */
		usleep(300000);
		CHECK_EQ_INT(tsd_status_int(sock, "unbuilt"), 1);
		if (round == 1)
			kill(wp[0], SIGKILL); /* dies mid-job */
		/* round 0: hangs; missed heartbeats (3 x 300 ms) kill it. */
		CHECKF(tsd_settle(sock, 15000, NULL) == 0,
		    "round %d: the job did not complete", round);
		kill(wp[0], SIGKILL);
		CHECK(tsd_status_int(sock, "failures.total") == 0);
	}
	tsd_close(&sock);
	tsd_stop(pid);
}

/* send_raw - send frames as given (no encoding) on a DEALER. */
static void
send_raw(void *sock, const void *const *frames, const size_t *lens, int n)
{
	int k;

	for (k = 0; k < n; k++)
		zmq_send(sock, frames[k], lens[k],
		    ZMQ_DONTWAIT | (k + 1 < n ? ZMQ_SNDMORE : 0));
}

/* Garbage, oversized frames, wrong types and a flood: shirod answers a
 * well-behaved client all along, quickly, and stays up. */
static void
bad_clients_do_not_hurt_a_good_one(void)
{
	const char *home = harness_tmpdir();
	static const unsigned char junk[] = {0xc1, 0xff, 0x00, 0x92};
	const void *fr[3];
	size_t lens[3];
	char *huge;
	void *bad, *good, *flood;
	struct msg *m, *r;
	uint64_t t0, worst = 0, dt;
	pid_t pid;
	int k, j, errors = 0;

	pid = start(home,
	    "{\"workers\": [], \"clients\": {\"rate\": 2000, \"burst\": "
	    "500}}",
	    NULL);
	good = tsd_connect(home);
	bad = tsd_connect(home);
	flood = tsd_connect(home);
	huge = xmalloc(MSG_MAX_FRAME + 100);
	memset(huge, 'x', MSG_MAX_FRAME + 100);
	for (k = 0; k < 40; k++) {
		/* garbage: wrong header, bad type byte, bad msgpack, extra
		 * frames, a lone frame. */
		fr[0] = k % 2 ? "shiro/9" : MSG_HEADER;
		lens[0] = 7;
		fr[1] = k % 3 ? "\x03" : "\xee";
		lens[1] = 1;
		fr[2] = junk;
		lens[2] = sizeof(junk);
		send_raw(bad, fr, lens, 1 + k % 3);
		/* a type only workers may send */
		m = msg_new(MSG_RESULT);
		msg_set_int(m, "job", 1);
		(void)msg_send(bad, m, NULL);
		msg_destroy(&m);
		if (k % 10 == 0) {
			fr[2] = huge;
			lens[2] = MSG_MAX_FRAME + 100;
			send_raw(bad, fr, lens, 3);
		}
		/* a flood of pings */
		m = msg_new(MSG_PING);
		for (j = 0; j < 500; j++) {
			msg_set_int(m, "rid", j + 1);
			(void)msg_send(flood, m, NULL);
		}
		msg_destroy(&m);
		/* the good client */
		t0 = tsd_now_ms();
		m = msg_new(MSG_STATUS);
		r = tsd_call(good, m, 5000, NULL);
		msg_destroy(&m);
		dt = tsd_now_ms() - t0;
		if (dt > worst)
			worst = dt;
		if (r == NULL || msg_type(r) != MSG_REPLY)
			errors++;
		msg_destroy(&r);
		CHECK(tsd_send_text(good, "still here", NULL, NULL) == k);
	}
	free(huge);
	CHECK_EQ_INT(errors, 0);
	CHECKF(worst < 1000, "the good client waited %llu ms",
	    (unsigned long long)worst);
	/* The bad one was told; the daemon counted what it refused. */
	CHECK(tsd_status_int(good, "clients.bad") > 0);
	CHECK(tsd_status_int(good, "clients.refused") > 0);
	CHECK(kill(pid, 0) == 0);
	tsd_close(&bad);
	tsd_close(&flood);
	tsd_close(&good);
	tsd_stop(pid);
}

/* A turn with no provider configured: the message is logged, summarized,
 * and the answer is ERROR no_model. */
static void
turn_without_model_says_so(void)
{
	const char *home = harness_tmpdir();
	struct msg *m, *r;
	const char *code = "";
	uint64_t id;
	void *sock;
	pid_t pid;

	pid = start(home, "{\"workers\": []}", NULL);
	sock = tsd_connect(home);
	m = msg_new(MSG_SEND);
	msg_set_str(m, "text", "what does this code do?");
	msg_set_str(m, "kind", "user");
	msg_set_bool(m, "turn", true);
	r = tsd_call(sock, m, 5000, NULL);
	CHECK(r != NULL && msg_type(r) == MSG_ACK);
	CHECK(msg_get_uint(r, "id", &id) == 0 && id == 0);
	msg_destroy(&r);
	/* The ERROR has the same rid; wait for it. */
	r = tsd_recv(sock, 5000);
	while (r != NULL && msg_type(r) == MSG_EVENT) {
		msg_destroy(&r);
		r = tsd_recv(sock, 5000);
	}
	CHECK(r != NULL && msg_type(r) == MSG_ERROR);
	(void)msg_get_str(r, "code", &code, NULL);
	CHECK_EQ_STR(code, "no_model");
	msg_destroy(&r);
	msg_destroy(&m);
	CHECK_EQ_INT(tsd_status_int(sock, "unbuilt"), 0);
	tsd_close(&sock);
	tsd_stop(pid);
}

/* HELLO with last_seq replays what a client missed, or says it cannot. */
static void
hello_replays_missed_events(void)
{
	const char *home = harness_tmpdir();
	struct tsd_events ev;
	struct msg *m, *r;
	uint64_t seq = 0, k;
	bool replay = true;
	void *sock;
	pid_t pid;
	int n = 0;

	pid = start(
	    home, "{\"workers\": [], \"clients\": {\"replay\": 8}}", NULL);
	sock = tsd_connect(home);
	for (k = 0; k < 3; k++)
		CHECK(tsd_send_text(sock, "x", NULL, NULL) == (int64_t)k);
	m = msg_new(MSG_HELLO);
	msg_set_str(m, "client", "t");
	msg_set_int(m, "version", MSG_VERSION);
	msg_set_int(m, "last_seq", 1);
	r = tsd_call(sock, m, 5000, NULL);
	CHECK(r != NULL && msg_type(r) == MSG_WELCOME);
	CHECK(msg_get_uint(r, "seq", &seq) == 0);
	/* 3 messages and the free merge of the first two: 4 events. */
	CHECK_EQ_INT(seq, 4);
	CHECK(msg_get_bool(r, "replay", &replay) == 0 && replay);
	msg_destroy(&r);
	memset(&ev, 0, sizeof(ev));
	while ((r = tsd_recv(sock, 300)) != NULL) {
		if (msg_type(r) == MSG_EVENT) {
			CHECK(msg_get_uint(r, "seq", &k) == 0);
			CHECK_EQ_INT(k, 2 + (uint64_t)n);
			n++;
		}
		msg_destroy(&r);
	}
	CHECK_EQ_INT(n, 3);
	/* Beyond the ring (8 kept): no replay. */
	for (k = 0; k < 10; k++)
		CHECK(tsd_send_text(sock, "y", NULL, NULL) >= 0);
	msg_set_int(m, "last_seq", 1);
	r = tsd_call(sock, m, 5000, NULL);
	CHECK(r != NULL && msg_get_bool(r, "replay", &replay) == 0 && !replay);
	msg_destroy(&r);
	msg_destroy(&m);
	tsd_close(&sock);
	tsd_stop(pid);
}

/* STOP: a reply, then shirod exits 0 and removes its sockets. */
static void
stop_ends_the_daemon(void)
{
	const char *home = harness_tmpdir();
	char path[PATH_MAX];
	void *sock;
	pid_t pid;
	int st = 0, k;

	pid = start(home, NULL, NULL);
	sock = tsd_connect(home);
	/* Not before HELLO: only an attached client may stop shirod. */
	CHECK(tsd_ask_stop(sock) == MSG_ERROR);
	CHECK(kill(pid, 0) == 0);
	CHECK(tsd_hello(sock) == 0);
	CHECK(tsd_ask_stop(sock) == MSG_REPLY);
	for (k = 0; k < 500; k++) {
		if (waitpid(pid, &st, WNOHANG) == pid)
			break;
		usleep(10000);
	}
	CHECK(k < 500);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	snprintf(path, sizeof(path), "%s/run/shirod.sock", home);
	CHECK(access(path, F_OK) != 0);
	tsd_close(&sock);
}

/* rogue_next_job - heartbeat and wait for the next JOB until end (ms);
 * 1 with its id, or 0 at the end. */
static int
rogue_next_job(void *sock, uint64_t end, uint64_t *jobp)
{
	struct msg *in, *out;

	while (tsd_now_ms() < end) {
		in = tsd_recv(sock, 300);
		out = msg_new(MSG_HEARTBEAT);
		(void)msg_send(sock, out, NULL);
		msg_destroy(&out);
		if (in != NULL && msg_type(in) == MSG_JOB &&
		    msg_get_uint(in, "job", jobp) == 0) {
			msg_destroy(&in);
			return 1;
		}
		msg_destroy(&in);
	}
	return 0;
}

/*
 * rogue_serve - answer every JOB for 30 s: with a 2,000-byte line of
 * two-byte characters (an over-long, untrusted result), or with FAIL.
 * Heartbeats keep it alive.
 */
static void
rogue_serve(void *sock, int fail)
{
	uint64_t end = tsd_now_ms() + 30000, job;
	struct buf text = BUF_INIT;
	struct msg *out;
	int k;

	for (k = 0; k < 1000; k++)
		buf_adds(&text, "\xc3\xa9"); /* e with an acute accent */
	while (rogue_next_job(sock, end, &job)) {
		out = msg_new(fail ? MSG_FAIL : MSG_RESULT);
		msg_set_int(out, "job", (int64_t)job);
		if (fail) {
			msg_set_str(out, "code", "provider");
			msg_set_str(
			    out, "text", "the test provider always fails");
		} else {
			msg_set_strn(out, "text", text.data, text.len);
		}
		(void)msg_send(sock, out, NULL);
		msg_destroy(&out);
	}
	buf_free(&text);
}

/* rogue_reply - send RESULT (text, may be NULL: none) or FAIL for job. */
static void
rogue_reply(
    void *sock, enum msg_type t, uint64_t job, const char *text, size_t len)
{
	struct msg *out = msg_new(t);

	msg_set_int(out, "job", (int64_t)job);
	if (t == MSG_FAIL) {
		msg_set_str(out, "code", "provider");
		msg_set_str(out, "text", "a failure for a job not held");
	} else if (text != NULL) {
		msg_set_strn(out, "text", text, len);
	}
	(void)msg_send(sock, out, NULL);
	msg_destroy(&out);
}

/*
 * rogue_wild - answer JOBs for 30 s, the first ones wrongly: answers for
 * jobs it does not hold, a storm of CHUNKs, no text, an empty text, the
 * same answer twice, a line of the largest size a frame takes; then a
 * second READY (shirod must kill it).
 */
static void
rogue_wild(void *sock)
{
	uint64_t end = tsd_now_ms() + 30000, job;
	char *big = xmalloc(MSG_MAX_TEXT);
	struct msg *out;
	int n = 0, k;

	memset(big, 'w', MSG_MAX_TEXT);
	while (rogue_next_job(sock, end, &job)) {
		switch (n++) {
		case 0:
			rogue_reply(sock, MSG_RESULT, job + 1000, "x", 1);
			rogue_reply(sock, MSG_FAIL, job + 2000, NULL, 0);
			rogue_reply(sock, MSG_RESULT, 0, "x", 1);
			/* A storm, within the socket's high-water mark. */
			for (k = 0; k < 500; k++)
				rogue_reply(sock, MSG_CHUNK, job, big, 1000);
			usleep(200000);
			rogue_reply(sock, MSG_RESULT, job, NULL, 0);
			break;
		case 1:
			rogue_reply(sock, MSG_RESULT, job, "", 0);
			break;
		case 2:
			rogue_reply(sock, MSG_RESULT, job, "twice", 5);
			rogue_reply(sock, MSG_RESULT, job, "twice", 5);
			rogue_reply(sock, MSG_FAIL, job, NULL, 0);
			break;
		case 3:
			rogue_reply(sock, MSG_RESULT, job, big, MSG_MAX_TEXT);
			break;
		case 4:
			rogue_reply(sock, MSG_RESULT, job, "then ready", 10);
			out = tsd_ready("offline", getpid());
			(void)msg_send(sock, out, NULL);
			msg_destroy(&out);
			break;
		default:
			rogue_reply(sock, MSG_RESULT, job, "fine", 4);
			break;
		}
	}
	free(big);
}

/*
 * rogue_main - this program run by shirod as a model worker: it says
 * READY like a real one, then does what HOME/rogue says: "client" sends
 * a type only clients may send, "garbage" a malformed frame (shirod must
 * kill it and start another), "secret" writes the key it is sent to
 * HOME/got-secret, "long" answers every job with an over-long line,
 * "fail" fails every job, "wild" answers wrongly (rogue_wild).
 */
static int
rogue_main(const char *endpoint, const char *provider, int argc, char **argv)
{
	char path[PATH_MAX], *mode;
	struct msg *m;
	void *sock = NULL;
	const char *home;

	home = strstr(endpoint, "ipc://");
	if (home == NULL)
		return 1;
	home += 6;
	snprintf(path, sizeof(path), "%.*s/rogue",
	    (int)(strstr(home, "/run/") - home), home);
	mode = tsd_read_file(path);
	if (mode == NULL ||
	    (sock = tsd_worker_dealer(endpoint, argc, argv)) == NULL)
		return 1;
	m = tsd_ready(provider, getpid());
	(void)msg_send(sock, m, NULL);
	msg_destroy(&m);
	usleep(200000);
	if (strncmp(mode, "wild", 4) == 0) {
		rogue_wild(sock);
	} else if (strncmp(mode, "long", 4) == 0 ||
	    strncmp(mode, "fail", 4) == 0) {
		rogue_serve(sock, mode[0] == 'f');
	} else if (strncmp(mode, "secret", 6) == 0) {
		/* Wait for the key and write what came, for the test. */
		struct msg *in;
		const void *key;
		size_t klen;
		char out[PATH_MAX];
		FILE *f;

		in = tsd_recv(sock, 5000);
		while (in != NULL && msg_type(in) != MSG_SECRET) {
			msg_destroy(&in);
			in = tsd_recv(sock, 5000);
		}
		if (in != NULL && msg_get_bin(in, "key", &key, &klen) == 0) {
			snprintf(out, sizeof(out), "%.*s/got-secret",
			    (int)(strstr(home, "/run/") - home), home);
			f = fopen(out, "w");
			if (f != NULL) {
				fwrite(key, 1, klen, f);
				fclose(f);
			}
		}
		msg_destroy(&in);
	} else if (strncmp(mode, "client", 6) == 0) {
		m = msg_new(MSG_STATUS);
		msg_set_int(m, "rid", 1);
		(void)msg_send(sock, m, NULL);
		msg_destroy(&m);
	} else {
		zmq_send(sock, MSG_HEADER, 7, ZMQ_SNDMORE);
		zmq_send(sock, "\x21", 1, ZMQ_SNDMORE);
		zmq_send(sock, "\xff\xff", 2, 0);
	}
	sleep(30);
	return 0;
}

/* A worker that sends what its role may not, or garbage, is killed and
 * started again; the daemon keeps serving. */
static void
rogue_worker_is_killed(void)
{
	const char *home = harness_tmpdir();
	const char *modes[] = {"client", "garbage"};
	char cfg[PATH_MAX * 2], path[PATH_MAX], *log;
	void *sock;
	pid_t pid;
	int k, i;

	for (k = 0; k < 2; k++) {
		tsd_write(home, "rogue", modes[k]);
		snprintf(cfg, sizeof(cfg),
		    "{\"workers\": [{\"role\": \"model\", \"count\": 1, "
		    "\"path\": \"%s\"}], \"restart\": {\"minMs\": 50, "
		    "\"maxMs\": 200}}",
		    tsd_bin("tests/test_shirod"));
		pid = start(home, cfg, NULL);
		sock = tsd_connect(home);
		for (i = 0; i < 100; i++) {
			usleep(50000);
			log = NULL;
			snprintf(path, sizeof(path), "%s/shirod.err", home);
			log = tsd_read_file(path);
			if (log != NULL && strstr(log, "killed") != NULL &&
			    tsd_status_int(sock, "messages") >= 0) {
				free(log);
				break;
			}
			free(log);
		}
		CHECKF(i < 100, "mode %s: the rogue was not killed", modes[k]);
		snprintf(path, sizeof(path), "%s/shirod.err", home);
		log = tsd_read_file(path);
		CHECK(log != NULL &&
		    strstr(log, k == 0 ? "may not" : "malformed") != NULL);
		free(log);
		CHECK(tsd_send_text(sock, "fine", NULL, NULL) == k);
		tsd_close(&sock);
		tsd_stop(pid);
		snprintf(path, sizeof(path), "%s/shirod.err", home);
		unlink(path);
	}
}

/* A provider's key reaches its worker in a SECRET message, and never in
 * the worker's argv or environment. */
static void
secret_goes_over_the_socket(void)
{
	const char *home = harness_tmpdir();
	char cfg[PATH_MAX * 3], path[PATH_MAX], *got;
	const char *key = "sk-test-0123456789abcdef";
	pid_t pid, wp[2];
	void *sock;
	int k, n;

	tsd_write(home, "rogue", "secret");
	tsd_write(home, "key", key);
	snprintf(cfg, sizeof(cfg),
	    "{\"providers\": {\"p\": {\"type\": \"openai\", "
	    "\"keyFile\": \"%s/key\"}}, \"workers\": [{\"role\": "
	    "\"model\", \"provider\": \"p\", \"count\": 1, \"path\": "
	    "\"%s\"}]}",
	    home, tsd_bin("tests/test_shirod"));
	pid = start(home, cfg, NULL);
	sock = tsd_connect(home);
	snprintf(path, sizeof(path), "%s/got-secret", home);
	for (k = 0; k < 200 && access(path, F_OK) != 0; k++)
		usleep(25000);
	usleep(50000);
	got = tsd_read_file(path);
	CHECKF(got != NULL && strcmp(got, key) == 0, "the worker got \"%s\"",
	    got ? got : "(nothing)");
	free(got);
	n = tsd_worker_pids(sock, wp, 2);
	CHECK(n == 1);
	/* Nothing of shirod's is open in the worker: no lock, no log. */
	{
		char fdpath[PATH_MAX], target[PATH_MAX];
		ssize_t tn;
		int fd;

		for (fd = 3; fd < 256; fd++) {
			snprintf(fdpath, sizeof(fdpath), "/proc/%d/fd/%d",
			    (int)wp[0], fd);
			tn = readlink(fdpath, target, sizeof(target) - 1);
			if (tn <= 0)
				continue;
			target[tn] = '\0';
			CHECKF(strstr(target, "/chat/") == NULL,
			    "the worker holds %s", target);
		}
	}
	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)wp[0]);
	CHECK_EQ_INT(tsd_file_has(path, "sk-test"), 0);
	snprintf(path, sizeof(path), "/proc/%d/environ", (int)wp[0]);
	CHECK_EQ_INT(tsd_file_has(path, "sk-test"), 0);
	tsd_close(&sock);
	tsd_stop(pid);
}

/* rogue_config - config.json running this program as the one worker. */
static void
rogue_config(const char *home, const char *mode, const char *extra)
{
	char cfg[PATH_MAX * 2];

	tsd_write(home, "rogue", mode);
	snprintf(cfg, sizeof(cfg),
	    "{\"workers\": [{\"role\": \"model\", \"count\": 1, "
	    "\"path\": \"%s\"}]%s}",
	    tsd_bin("tests/test_shirod"), extra);
	tsd_write(home, "config.json", cfg);
}

/* memory_line0 - the text of the view's first line (malloc'd). */
static char *
memory_line0(void *sock)
{
	struct msg *m = msg_new(MSG_MEMORY), *r;
	const struct msg_val *doc, *lines;
	char *t = NULL;

	r = tsd_call(sock, m, 5000, NULL);
	msg_destroy(&m);
	if (r != NULL && msg_get_map(r, "doc", &doc) == 0 &&
	    (lines = msg_val_get(doc, "lines")) != NULL && lines->u.a.n > 0 &&
	    msg_val_str(lines->u.a.items[0], "text") != NULL)
		t = xstrdup(msg_val_str(lines->u.a.items[0], "text"));
	msg_destroy(&r);
	return t;
}

/* A worker's over-long line is cut to 512 bytes at a character
 * boundary before it becomes a node. */
static void
untrusted_results_are_cut(void)
{
	const char *home = harness_tmpdir();
	char *text, *line;
	void *sock;
	pid_t pid;

	rogue_config(home, "long", "");
	pid = start(home, NULL, NULL);
	sock = tsd_connect(home);
	text = long_text(0, 3000);
	CHECK(tsd_send_text(sock, text, NULL, NULL) == 0);
	free(text);
	CHECK(tsd_settle(sock, 10000, NULL) == 0);
	line = memory_line0(sock);
	CHECK(line != NULL);
	CHECKF(strlen(line) == 512, "a %zu-byte line", strlen(line));
	CHECK((unsigned char)line[510] == 0xc3 &&
	    (unsigned char)line[511] == 0xa9);
	free(line);
	tsd_close(&sock);
	tsd_stop(pid);
}

/* A worker that answers jobs it does not hold, twice, with nothing, with
 * a storm of CHUNKs, then says READY again: shirod ignores or fails each
 * answer, cuts the long one, kills it for the second READY, and serves a
 * client all along. */
static void
wild_worker_is_survived(void)
{
	const char *home = harness_tmpdir();
	char path[PATH_MAX], *log = NULL, *text;
	void *sock;
	pid_t pid;
	int k;

	rogue_config(
	    home, "wild", ", \"restart\": {\"minMs\": 50, \"maxMs\": 200}");
	pid = start(home, NULL, NULL);
	sock = tsd_connect(home);
	for (k = 0; k < 12; k++) {
		text = long_text((unsigned)k, 700);
		CHECK(tsd_send_text(sock, text, NULL, NULL) == k);
		free(text);
	}
	snprintf(path, sizeof(path), "%s/shirod.err", home);
	for (k = 0; k < 200; k++) {
		free(log);
		log = tsd_read_file(path);
		if (log != NULL && strstr(log, "READY twice") != NULL)
			break;
		usleep(50000);
	}
	CHECK(log != NULL && strstr(log, "does not hold") != NULL);
	CHECK(log != NULL && strstr(log, "returned no text") != NULL);
	CHECK(log != NULL && strstr(log, "cut to 512") != NULL);
	CHECK(log != NULL && strstr(log, "READY twice") != NULL);
	free(log);
	CHECK(kill(pid, 0) == 0);
	CHECK_EQ_INT(tsd_status_int(sock, "messages"), 12);
	CHECK(tsd_status_int(sock, "failures.total") >= 2);
	CHECK(tsd_status_int(sock, "jobs_done") >= 2);
	tsd_close(&sock);
	k = tsd_stop(pid);
	CHECKF(WIFEXITED(k) && WEXITSTATUS(k) == 0, "shirod ended with %#x", k);
}

/* A node that keeps failing is tried again at each next message; its
 * third failure builds it from its input cut to 512 bytes (D5). */
static void
third_failure_cuts_the_input(void)
{
	const char *home = harness_tmpdir();
	char *text, *line;
	void *sock;
	pid_t pid;
	int k;

	rogue_config(home, "fail", "");
	pid = start(home, NULL, NULL);
	sock = tsd_connect(home);
	text = long_text(0, 3000);
	CHECK(tsd_send_text(sock, text, NULL, NULL) == 0);
	for (k = 0; k < 50 && tsd_status_int(sock, "failures.total") < 1; k++)
		usleep(50000);
	CHECK_EQ_INT(tsd_status_int(sock, "failures.total"), 1);
	CHECK_EQ_INT(tsd_status_int(sock, "unbuilt"), 1);
	/* Nothing retries it until the next message. */
	usleep(500000);
	CHECK_EQ_INT(tsd_status_int(sock, "failures.total"), 1);
	CHECK(tsd_send_text(sock, "next", NULL, NULL) == 1);
	for (k = 0; k < 50 && tsd_status_int(sock, "failures.total") < 2; k++)
		usleep(50000);
	CHECK_EQ_INT(tsd_status_int(sock, "failures.total"), 2);
	CHECK(tsd_send_text(sock, "and next", NULL, NULL) == 2);
	CHECK(tsd_settle(sock, 10000, NULL) == 0);
	/* Three failures of message 0's leaf (the merge of 0 and 1, too
	 * long to need no call, fails on its own afterwards). */
	CHECK(tsd_status_int(sock, "failures.total") >= 3);
	CHECK_EQ_INT(tsd_status_int(sock, "failures.cut"), 1);
	line = memory_line0(sock);
	CHECK(line != NULL && strlen(line) == 512 &&
	    strncmp(line, text, 512) == 0);
	free(line);
	free(text);
	tsd_close(&sock);
	tsd_stop(pid);
}

/* While a turn waits, a failing node is retried every retryMs, so the
 * turn gets its answer after three failures, long before the settle
 * timeout. */
static void
waiting_turn_retries_failed_nodes(void)
{
	const char *home = harness_tmpdir();
	struct msg *m, *r;
	const char *code = "";
	uint64_t t0;
	char *text;
	void *sock;
	pid_t pid;

	rogue_config(home, "fail", ", \"memory\": {\"retryMs\": 200}");
	pid = start(home, NULL, NULL);
	sock = tsd_connect(home);
	/* The failing node is an earlier message's: a turn waits for the
	 * view before its own message (rule 49). */
	text = long_text(0, 3000);
	CHECK(tsd_send_text(sock, text, NULL, NULL) == 0);
	m = msg_new(MSG_SEND);
	msg_set_str(m, "text", "what did I just send?");
	msg_set_str(m, "kind", "user");
	msg_set_bool(m, "turn", true);
	t0 = tsd_now_ms();
	r = tsd_call(sock, m, 5000, NULL);
	CHECK(r != NULL && msg_type(r) == MSG_ACK);
	msg_destroy(&r);
	r = tsd_recv(sock, 10000);
	while (r != NULL && msg_type(r) == MSG_EVENT) {
		msg_destroy(&r);
		r = tsd_recv(sock, 10000);
	}
	CHECK(r != NULL && msg_type(r) == MSG_ERROR);
	(void)msg_get_str(r, "code", &code, NULL);
	CHECK_EQ_STR(code, "no_model");
	CHECKF(tsd_now_ms() - t0 < 5000, "the turn waited %llu ms",
	    (unsigned long long)(tsd_now_ms() - t0));
	CHECK_EQ_INT(tsd_status_int(sock, "failures.cut"), 1);
	msg_destroy(&r);
	msg_destroy(&m);
	free(text);
	tsd_close(&sock);
	tsd_stop(pid);
}

/* send_many - SEND "line K" for K in [0, n), 200 in flight at a time;
 * the number acknowledged. */
static int
send_many(void *sock, int n)
{
	struct msg *m, *r;
	char text[32];
	int k, j, acked = 0;

	for (k = 0; k < n; k += 200) {
		for (j = k; j < n && j < k + 200; j++) {
			m = msg_new(MSG_SEND);
			snprintf(text, sizeof(text), "line %d", j);
			msg_set_int(m, "rid", 900000 + j);
			msg_set_str(m, "text", text);
			msg_set_str(m, "kind", "user");
			CHECK(msg_send(sock, m, NULL) == 0);
			msg_destroy(&m);
		}
		for (j = k; j < n && j < k + 200; j++) {
			r = tsd_recv(sock, 10000);
			CHECK(r != NULL);
			acked += msg_type(r) == MSG_ACK;
			msg_destroy(&r);
		}
	}
	return acked;
}

/* memory_page - MEMORY from offset (-1: none): the REPLY's doc in *r. */
static const struct msg_val *
memory_page(void *sock, int64_t offset, struct msg **r)
{
	struct msg *m = msg_new(MSG_MEMORY);
	const struct msg_val *doc = NULL;

	if (offset >= 0)
		msg_set_int(m, "offset", offset);
	*r = tsd_call(sock, m, 10000, NULL);
	msg_destroy(&m);
	CHECK(*r != NULL);
	if (msg_type(*r) == MSG_REPLY)
		CHECK(msg_get_map(*r, "doc", &doc) == 0);
	return doc;
}

/*
 * A view of more lines than one reply carries comes in pages: each
 * REPLY says its offset, the view's total and where the next page
 * starts; an offset past the view is an ERROR; and the client shows the
 * whole view, every page of it.
 */
static void
memory_is_paged(void)
{
	const char *home = harness_tmpdir();
	const struct msg_val *doc, *lines;
	char cmd[PATH_MAX * 2], *out;
	int64_t v;
	struct msg *r;
	void *sock;
	pid_t pid;

	pid = start(home,
	    "{\"workers\": [], \"memory\": {\"ceiling\": 4000000, \"floor\": "
	    "2000000}}",
	    NULL);
	sock = tsd_connect(home);
	CHECK_EQ_INT(send_many(sock, 4200), 4200);
	doc = memory_page(sock, -1, &r);
	CHECK(doc != NULL);
	lines = msg_val_get(doc, "lines");
	CHECK(lines != NULL && lines->u.a.n == 4096);
	CHECK(msg_val_int(doc, "total", &v) == 0 && v == 4200);
	CHECK(msg_val_int(doc, "offset", &v) == 0 && v == 0);
	CHECK(msg_val_int(doc, "next", &v) == 0 && v == 4096);
	CHECK(msg_val_get(doc, "status") != NULL);
	msg_destroy(&r);
	doc = memory_page(sock, 4096, &r);
	CHECK(doc != NULL);
	lines = msg_val_get(doc, "lines");
	CHECK(lines != NULL && lines->u.a.n == 104);
	CHECK(msg_val_int(lines->u.a.items[0], "id", &v) == 0 && v == 4096);
	CHECK(msg_val_get(doc, "next") == NULL);
	msg_destroy(&r);
	doc = memory_page(sock, 4200, &r);
	CHECK(doc != NULL && msg_val_get(doc, "lines")->u.a.n == 0);
	msg_destroy(&r);
	CHECK(memory_page(sock, 4201, &r) == NULL);
	CHECK(msg_type(r) == MSG_ERROR);
	msg_destroy(&r);
	/* The client asks for every page and shows them as one view. */
	snprintf(cmd, sizeof(cmd),
	    "%s --home %s --no-start memory > %s/memory.out 2>&1",
	    tsd_bin("shiro"), home, home);
	CHECK(system(cmd) == 0);
	snprintf(cmd, sizeof(cmd), "%s/memory.out", home);
	out = tsd_read_file(cmd);
	CHECK(out != NULL);
	CHECKF(strstr(out, "view (4200 lines):") != NULL, "%.300s", out);
	CHECK(
	    strstr(out, "line 4199") != NULL && strstr(out, "line 0") != NULL);
	free(out);
	tsd_close(&sock);
	tsd_stop(pid);
}

static const struct harness_test tests[] = {
    HT(second_shirod_exits_already_running),
    HT(daemon_mode_detaches),
    HT(stale_socket_is_taken_over),
    HT(bad_config_names_the_key),
    HT(messages_logged_in_order_once),
    HT_SLOW(tree_built_by_offline_workers, 90),
    HT_SLOW(view_matches_planner_and_survives_kill9, 120),
    HT(no_acknowledged_message_lost),
    HT_SLOW(worker_killed_mid_job_is_replaced, 90),
    HT(bad_clients_do_not_hurt_a_good_one),
    HT(turn_without_model_says_so),
    HT(hello_replays_missed_events),
    HT(stop_ends_the_daemon),
    HT(rogue_worker_is_killed),
    HT(secret_goes_over_the_socket),
    HT(untrusted_results_are_cut),
    HT_SLOW(wild_worker_is_survived, 60),
    HT(third_failure_cuts_the_input),
    HT(waiting_turn_retries_failed_nodes),
    HT_SLOW(memory_is_paged, 120),
};

int
main(int argc, char **argv)
{
	/* Run by shirod as a worker (rogue_worker_is_killed). */
	if (argc > 2 && strcmp(argv[1], "--endpoint") == 0)
		return rogue_main(argv[2],
		    argc > 4 && strcmp(argv[3], "--provider") == 0 ? argv[4]
								   : "offline",
		    argc, argv);
	return harness_main(
	    tests, sizeof(tests) / sizeof(tests[0]), argc, argv);
}
