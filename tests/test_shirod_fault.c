/*
 * test_shirod_fault - shirod when the disk fails it: a log fsync that
 * fails (the store is poisoned) and a tree commit that LMDB refuses.
 * shirod must not limp on: it says why and exits with code 4, having
 * acknowledged only what is durable; the next start has every
 * acknowledged message and the view the planner folds from it.
 *
 * The failing calls come from tests/fault/fault.so (LD_PRELOAD) in
 * shirod only: the variables that load it are not passed to workers.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proto/msg.h"
#include "proto/xmalloc.h"
#include "tests/harness.h"
#include "tests/test_shirod_util.h"

/* fault_env - make the next shirod run under fault (SHIRO_FAULT). */
static void
fault_env(const char *fault)
{
	const char *asan = getenv("ASAN_OPTIONS");
	char *opts;

	CHECK(access(tsd_bin("tests/fault.so"), R_OK) == 0);
	setenv("SHIRO_FAULT", fault, 1);
	setenv("LD_PRELOAD", tsd_bin("tests/fault.so"), 1);
	/* Under ASan the shim cannot come first; that is fine. */
	opts = xasprintf(
	    "%s%sverify_asan_link_order=0", asan ? asan : "", asan ? ":" : "");
	setenv("ASAN_OPTIONS", opts, 1);
	free(opts);
}

/* no_fault - the next shirod runs without the shim. */
static void
no_fault(void)
{
	unsetenv("SHIRO_FAULT");
	unsetenv("LD_PRELOAD");
}

/* send_keyed - SEND "m-K" with key "k-K" and wait up to ms: its id, -1
 * for an ERROR (its code in code), -2 for no answer. */
static int64_t
send_keyed(void *sock, int k, long ms, char *code, size_t codelen)
{
	struct msg *m = msg_new(MSG_SEND), *r;
	char text[32], key[32];
	const char *c = "";
	int64_t id = -2;

	snprintf(text, sizeof(text), "m-%d", k);
	snprintf(key, sizeof(key), "k-%d", k);
	msg_set_str(m, "text", text);
	msg_set_str(m, "kind", "user");
	msg_set_str(m, "key", key);
	r = tsd_call(sock, m, ms, NULL);
	msg_destroy(&m);
	if (r != NULL && msg_type(r) == MSG_ACK)
		(void)msg_get_int(r, "id", &id);
	else if (r != NULL && msg_type(r) == MSG_ERROR) {
		(void)msg_get_str(r, "code", &c, NULL);
		snprintf(code, codelen, "%s", c);
		id = -1;
	}
	msg_destroy(&r);
	return id;
}

/* exit_code - wait up to 10 s for pid; its exit code, or -1. */
static int
exit_code(pid_t pid)
{
	int st, k;

	for (k = 0; k < 1000; k++) {
		if (waitpid(pid, &st, WNOHANG) == pid)
			return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
		usleep(10000);
	}
	tsd_kill9(pid);
	return -1;
}

/* the_log - the texts of the chat's messages, in order, one a line. */
static char *
the_log(void *sock)
{
	struct msg *m = msg_new(MSG_LOG), *r;
	const struct msg_val *doc, *log;
	char *out = xstrdup(""), *next;
	size_t k;

	msg_set_int(m, "tail", 1000);
	r = tsd_call(sock, m, 5000, NULL);
	msg_destroy(&m);
	CHECK(r != NULL && msg_type(r) == MSG_REPLY);
	CHECK(msg_get_map(r, "doc", &doc) == 0);
	log = msg_val_get(doc, "log");
	CHECK(log != NULL);
	for (k = 0; k < log->u.a.n; k++) {
		next = xasprintf(
		    "%s%s\n", out, msg_val_str(log->u.a.items[k], "text"));
		free(out);
		out = next;
	}
	msg_destroy(&r);
	return out;
}

/* log_has - whether shirod's output in home holds text. */
static int
log_has(const char *home, const char *text)
{
	char path[PATH_MAX + 16];

	snprintf(path, sizeof(path), "%s/shirod.err", home);
	return tsd_file_has(path, text) == 1;
}

/* restart_has - start shirod again on home (no fault): every message of
 * 0..acked-1 is in the log with its id, the planner has the log's count,
 * the view settles, and a message sent now is logged after them. */
static void
restart_has(const char *home, int acked)
{
	char want[32], code[33] = "", *log;
	int64_t id;
	pid_t pid;
	void *sock;
	int st, k;

	no_fault();
	pid = tsd_start(home, NULL, &st);
	CHECKF(pid > 0, "no restart (status %d); see %s/shirod.err", st, home);
	sock = tsd_connect(home);
	log = the_log(sock);
	for (k = 0; k < acked; k++) {
		snprintf(want, sizeof(want), "m-%d\n", k);
		CHECKF(strstr(log, want) != NULL, "m-%d lost: %s", k, log);
	}
	CHECK(tsd_status_int(sock, "messages") >= acked);
	CHECK_EQ_INT(tsd_settle(sock, 20000, NULL), 0);
	CHECK_EQ_INT(tsd_status_int(sock, "unbuilt"), 0);
	id = send_keyed(sock, 1000, 5000, code, sizeof(code));
	CHECKF(
	    id >= acked, "after the restart: %lld (%s)", (long long)id, code);
	free(log);
	tsd_close(&sock);
	CHECK(WIFEXITED(tsd_stop(pid)));
}

/*
 * A log fsync that fails poisons the store: the message is refused with
 * ERROR store, shirod says the log refuses appends and exits with 4,
 * and the next start has the three messages acknowledged before it.
 */
static void
a_failed_log_fsync_stops_shirod(void)
{
	const char *home = harness_tmpdir();
	char code[33] = "";
	int64_t id = 0;
	pid_t pid;
	void *sock;
	int st, k;

	tsd_write(home, "config.json", "{\"workers\": []}");
	fault_env("fdatasync:/chat/main/:4:eio");
	pid = tsd_start(home, NULL, &st);
	CHECKF(pid > 0, "shirod did not start (status %d)", st);
	sock = tsd_connect(home);
	for (k = 0; k < 3; k++)
		CHECK_EQ_INT(send_keyed(sock, k, 5000, code, sizeof(code)), k);
	id = send_keyed(sock, 3, 5000, code, sizeof(code));
	CHECKF(id == -1 && strcmp(code, "store") == 0, "got %lld (%s)",
	    (long long)id, code);
	tsd_close(&sock);
	CHECK_EQ_INT(exit_code(pid), 4);
	CHECK(log_has(home, "the log refuses appends until reopened"));
	CHECK(log_has(home, "shirod stops now (exit 4)"));
	restart_has(home, 3);
}

/*
 * LMDB refusing the tree's commit is not retried forever: shirod says
 * so and exits with 4; the next start has every acknowledged message,
 * builds the lost nodes again and serves.
 */
static void
a_refused_tree_commit_stops_shirod(void)
{
	const char *home = harness_tmpdir();
	char code[33] = "";
	int64_t id;
	pid_t pid;
	void *sock;
	int st, k, acked = 0;

	tsd_write(home, "config.json", "{\"workers\": []}");
	/* Two commits open the store; the third is the first tree
	 * commit, 20 ms after the first message's leaf is built. */
	fault_env("fdatasync:data.mdb:3:eio");
	pid = tsd_start(home, NULL, &st);
	CHECKF(pid > 0, "shirod did not start (status %d)", st);
	sock = tsd_connect(home);
	for (k = 0; k < 5000; k++) {
		id = send_keyed(sock, k, 3000, code, sizeof(code));
		if (id < 0)
			break;
		CHECK_EQ_INT(id, k);
		acked++;
	}
	CHECKF(acked >= 1 && k < 5000, "acked %d of %d", acked, k);
	tsd_close(&sock);
	CHECK_EQ_INT(exit_code(pid), 4);
	CHECK(log_has(home, "the tree refused a commit"));
	restart_has(home, acked);
}

static const struct harness_test tests[] = {
    HT_SLOW(a_failed_log_fsync_stops_shirod, 60),
    HT_SLOW(a_refused_tree_commit_stops_shirod, 60),
};

HARNESS_MAIN(tests)
