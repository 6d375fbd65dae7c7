/*
 * test_shirod_hostile.c - a real shirod given hostile input: requests with
 * every odd field value, broken config files and a chat on disk that is
 * corrupt.  Whatever comes, shirod answers with an error or exits with a
 * message, never with a signal, and keeps every acknowledged message.
 */
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
#include "proto/msg.h"
#include "proto/xmalloc.h"
#include "tests/harness.h"
#include "tests/test_shirod_util.h"

/* hostile_file - the whole of path (malloc'd), or NULL. */
static char *
hostile_file(const char *path)
{
	FILE *f = fopen(path, "r");
	char *s;
	long n;

	if (f == NULL)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	s = xmalloc((size_t)n + 1);
	n = (long)fread(s, 1, (size_t)n, f);
	s[n] = '\0';
	fclose(f);
	return s;
}

/* hostile_big - a text of the longest size a SEND takes, all c. */
static char *
hostile_big(char c)
{
	char *big = xmalloc(MSG_MAX_TEXT);

	memset(big, c, MSG_MAX_TEXT);
	return big;
}

/* hostile_answer - send m and return the type of the answer, or -1. */
static int
hostile_answer(void *sock, struct msg *m, char *code, size_t codelen)
{
	struct msg *r = tsd_call(sock, m, 5000, NULL);
	const char *c = "";
	int t;

	msg_destroy(&m);
	if (r == NULL)
		return -1;
	t = (int)msg_type(r);
	if (code != NULL) {
		if (t == MSG_ERROR)
			(void)msg_get_str(r, "code", &c, NULL);
		snprintf(code, codelen, "%s", c);
	}
	msg_destroy(&r);
	return t;
}

/* hostile_zoom - ZOOM id n; the answer's type and error code. */
static int
hostile_zoom(void *sock, uint64_t id, uint64_t n, char *code, size_t len)
{
	struct msg *m = msg_new(MSG_ZOOM);

	msg_set_int(m, "id", (int64_t)id);
	msg_set_int(m, "n", (int64_t)n);
	return hostile_answer(sock, m, code, len);
}

/* hostile_send - SEND text of kind with key (may be NULL). */
static int
hostile_send(void *sock, const char *text, size_t len, const char *kind,
    const char *key, char *code, size_t codelen)
{
	struct msg *m = msg_new(MSG_SEND);

	msg_set_strn(m, "text", text, len);
	msg_set_str(m, "kind", kind);
	if (key != NULL)
		msg_set_str(m, "key", key);
	return hostile_answer(sock, m, code, codelen);
}

/* hostile_log_count - the "messages" of a LOG answer (the log's count,
 * where STATUS gives the planner's), or -1. */
static int64_t
hostile_log_count(void *sock)
{
	struct msg *m = msg_new(MSG_LOG), *r;
	const struct msg_val *doc;
	int64_t n = -1;

	msg_set_int(m, "tail", 1);
	r = tsd_call(sock, m, 5000, NULL);
	msg_destroy(&m);
	if (r != NULL && msg_type(r) == MSG_REPLY &&
	    msg_get_map(r, "doc", &doc) == 0)
		n = tsd_doc_int(doc, "messages");
	msg_destroy(&r);
	return n;
}

/* hostile_restart - stop shirod pid (it must exit 0), start it again
 * and check it has total messages, both in the planner and in the log. */
static void
hostile_restart(const char *home, pid_t pid, int64_t total)
{
	void *sock;
	int st;

	st = tsd_stop(pid);
	CHECKF(WIFEXITED(st) && WEXITSTATUS(st) == 0, "shirod ended %#x", st);
	pid = tsd_start(home, NULL, &st);
	CHECKF(pid > 0, "shirod did not start again; see %s/shirod.err", home);
	sock = tsd_connect(home);
	CHECK_EQ_INT(tsd_status_int(sock, "messages"), total);
	CHECK_EQ_INT(hostile_log_count(sock), total);
	tsd_close(&sock);
	tsd_stop(pid);
}

/* Odd ZOOM, LOG, SEND and HELLO values get an answer each; shirod stays up
 * and every acknowledged message is in the log. */
static void
odd_requests_are_answered(void)
{
	const char *home = harness_tmpdir();
	static const uint64_t zooms[][2] = {{0, 0}, {0, 3}, {1, 2},
	    {INT64_MAX, 1}, {0, 1ULL << 62}, {1ULL << 62, 1ULL << 62},
	    {INT64_MAX - 1, 2}, {4, 4}, {0, 8}, {2, 1}};
	char code[64], *big;
	struct msg *m;
	void *sock;
	pid_t pid;
	size_t k;
	int64_t total;
	int t, acked = 0;

	tsd_write(home, "config.json", "{\"workers\": []}");
	pid = tsd_start(home, NULL, &t);
	CHECKF(pid > 0, "shirod did not start; see %s/shirod.err", home);
	sock = tsd_connect(home);
	CHECK(tsd_send_text(sock, "one", NULL, NULL) == 0);
	CHECK(tsd_send_text(sock, "two", NULL, NULL) == 1);
	acked = 2;
	for (k = 0; k < sizeof(zooms) / sizeof(zooms[0]); k++) {
		t = hostile_zoom(
		    sock, zooms[k][0], zooms[k][1], code, sizeof(code));
		CHECKF(t == MSG_ERROR && strcmp(code, "zoom") == 0,
		    "zoom %llu %llu: answer %d %s",
		    (unsigned long long)zooms[k][0],
		    (unsigned long long)zooms[k][1], t, code);
	}
	CHECK(hostile_zoom(sock, 0, 2, NULL, 0) == MSG_REPLY);
	CHECK(hostile_zoom(sock, 1, 1, NULL, 0) == MSG_REPLY);
	/* LOG: a tail of 0, of 1 and of nearly 2^64. */
	for (k = 0; k < 3; k++) {
		m = msg_new(MSG_LOG);
		msg_set_int(m, "tail",
		    k == 0	 ? 0
			: k == 1 ? 1
				 : (int64_t)(UINT64_MAX >> 1));
		CHECK(hostile_answer(sock, m, NULL, 0) == MSG_REPLY);
	}
	/* SEND: unknown kinds are refused, an empty text is answered. */
	CHECK(hostile_send(sock, "x", 1, "agent", NULL, code, sizeof(code)) ==
	    MSG_ERROR);
	CHECK(strcmp(code, "kind") == 0);
	CHECK(hostile_send(sock, "x", 1, "", NULL, code, sizeof(code)) ==
	    MSG_ERROR);
	t = hostile_send(sock, "", 0, "user", NULL, code, sizeof(code));
	CHECKF(t == MSG_ACK || t == MSG_ERROR, "empty text: answer %d", t);
	acked += t == MSG_ACK;
	t = hostile_send(sock, "", 0, "note", "empty-key", code, sizeof(code));
	CHECKF(t == MSG_ACK || t == MSG_ERROR, "empty note: answer %d", t);
	acked += t == MSG_ACK;
	/* One key, two texts: the second is the first's retry. */
	CHECK(hostile_send(sock, "first", 5, "user", "k", NULL, 0) == MSG_ACK);
	acked++;
	CHECK(hostile_send(sock, "other", 5, "user", "k", NULL, 0) == MSG_ACK);
	/* The longest text a frame takes, in one message, with a key. */
	big = hostile_big('a');
	t = hostile_send(
	    sock, big, MSG_MAX_TEXT, "user", "big", code, sizeof(code));
	CHECKF(t == MSG_ACK || t == MSG_ERROR, "big text: answer %d", t);
	acked += t == MSG_ACK;
	free(big);
	/* Texts with a NUL and with invalid UTF-8, and an unknown type,
	 * encoded by hand: each gets an ERROR and nothing is logged. */
	{
		static const char *const bodies[] = {
		    "\x83\xa3rid\x01\xa4text\xa3"
		    "a\0b\xa4kind\xa4user",
		    "\x83\xa3rid\x01\xa4text\xa3"
		    "a\xff"
		    "b\xa4kind\xa4user",
		    "\x81\xa3rid\x01"};
		static const size_t lens[] = {25, 25, 6};
		static const char types[] = {MSG_SEND, MSG_SEND, 99};

		total = tsd_status_int(sock, "messages");
		for (k = 0; k < 3; k++) {
			zmq_send(sock, MSG_HEADER, 7, ZMQ_SNDMORE);
			zmq_send(sock, &types[k], 1, ZMQ_SNDMORE);
			zmq_send(sock, bodies[k], lens[k], 0);
			m = tsd_recv(sock, 5000);
			while (m != NULL && msg_type(m) == MSG_EVENT) {
				msg_destroy(&m);
				m = tsd_recv(sock, 5000);
			}
			CHECKF(m != NULL && msg_type(m) == MSG_ERROR,
			    "raw frame %zu: no ERROR", k);
			if (k < 2) {
				const char *why = "";

				(void)msg_get_str(m, "text", &why, NULL);
				CHECKF(strstr(why, "not UTF-8") != NULL,
				    "raw frame %zu: \"%s\"", k, why);
			}
			msg_destroy(&m);
		}
		CHECK_EQ_INT(tsd_status_int(sock, "messages"), total);
	}
	/* HELLO from the future and with a sequence never reached. */
	m = msg_new(MSG_HELLO);
	msg_set_str(m, "client", "test");
	msg_set_int(m, "version", 999);
	CHECK(hostile_answer(sock, m, code, sizeof(code)) == MSG_ERROR);
	m = msg_new(MSG_HELLO);
	msg_set_str(m, "client", "test");
	msg_set_int(m, "version", MSG_VERSION);
	msg_set_int(m, "last_seq", (int64_t)(UINT64_MAX >> 1));
	CHECK(hostile_answer(sock, m, NULL, 0) == MSG_WELCOME);
	/* The view and every zoom still answer. */
	CHECK(hostile_answer(sock, msg_new(MSG_MEMORY), NULL, 0) == MSG_REPLY);
	total = tsd_status_int(sock, "messages");
	for (k = 0; total > 0 && k < (size_t)total; k++)
		CHECK(hostile_zoom(sock, k, 1, NULL, 0) == MSG_REPLY);
	/* Still serving, every acknowledged message there. */
	CHECK(kill(pid, 0) == 0);
	total = tsd_status_int(sock, "messages");
	CHECKF(total >= acked, "%lld messages, %d acknowledged",
	    (long long)total, acked);
	tsd_close(&sock);
	hostile_restart(home, pid, total);
}

/* hostile_run - run shirod --home home, its output to home/shirod.err;
 * the wait status if it ended within ms, else stop it and say 0. */
static int
hostile_run(const char *home, long ms)
{
	char errpath[PATH_MAX];
	uint64_t end;
	pid_t pid;
	int st = 0;

	snprintf(errpath, sizeof(errpath), "%s/shirod.err", home);
	unlink(errpath);
	pid = tsd_spawn(home, NULL);
	if (pid < 0)
		return -1;
	end = tsd_now_ms() + (uint64_t)ms;
	while (tsd_now_ms() < end) {
		if (waitpid(pid, &st, WNOHANG) == pid)
			return st;
		usleep(10000);
	}
	st = tsd_stop(pid);
	CHECKF(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	    "shirod ended with %#x when stopped", st);
	return 0;
}

/* hostile_config - run shirod on config text: it must serve, or exit 2
 * with a line in shirod.err; never die of a signal. */
static void
hostile_config(const char *home, const char *text, const char *what)
{
	char path[PATH_MAX], *err;
	int st;

	tsd_write(home, "config.json", text);
	st = hostile_run(home, 3000);
	if (st == 0)
		return;
	CHECKF(WIFEXITED(st) && WEXITSTATUS(st) == 2,
	    "%.40s: shirod ended with %#x", what, st);
	snprintf(path, sizeof(path), "%s/shirod.err", home);
	err = hostile_file(path);
	CHECKF(err != NULL && strstr(err, "config") != NULL,
	    "%.40s: shirod said \"%s\"", what, err ? err : "(nothing)");
	free(err);
}

/* Garbage, deep, huge and mistyped config files: an error naming the
 * file, or a daemon that serves; never a crash. */
static void
broken_configs_are_refused(void)
{
	const char *home = harness_tmpdir();
	static const char *const bad[] = {"", "garbage", "[]", "null", "1",
	    "{\"workers\": 5}", "{\"workers\": [5]}",
	    "{\"workers\": [{\"role\": 7}]}",
	    "{\"workers\": [{\"role\": \"nope\", \"count\": 1}]}",
	    "{\"workers\": [{\"role\": \"model\", \"count\": -1}]}",
	    "{\"workers\": [{\"role\": \"model\", \"count\": 1e30}]}",
	    "{\"workers\": [{\"role\": \"model\", \"provider\": \"none\"}]}",
	    "{\"providers\": []}", "{\"providers\": {\"p\": 1}}",
	    "{\"providers\": {\"p\": {\"type\": 1}}}", "{\"memory\": \"x\"}",
	    "{\"memory\": {\"ceiling\": 1e300}}",
	    "{\"memory\": {\"ceiling\": 3, \"floor\": 9}}",
	    "{\"memory\": {\"retryMs\": -1}}", "{\"clients\": {\"rate\": []}}",
	    "{\"restart\": {\"minMs\": 1000, \"maxMs\": 1}}",
	    "{\"heartbeatMs\": 0}", "{\"unknown\": {\"a\": [1, {}]}}",
	    "{\"workers\": [], \"workers\": [{}]}", "{\"a\": \"\\u0000\"}",
	    "{\"a\": \"\xff\xfe\"}", "\xef\xbb\xbf{}"};
	struct buf deep = BUF_INIT;
	size_t k;

	for (k = 0; k < sizeof(bad) / sizeof(bad[0]); k++)
		hostile_config(home, bad[k], bad[k]);
	/* Nested 100,000 deep. */
	buf_adds(&deep, "{\"x\": ");
	for (k = 0; k < 100000; k++)
		buf_adds(&deep, "[");
	for (k = 0; k < 100000; k++)
		buf_adds(&deep, "]");
	buf_adds(&deep, "}");
	hostile_config(home, deep.data, "deep");
	/* 20 MB of one string. */
	buf_reset(&deep);
	buf_adds(&deep, "{\"x\": \"");
	for (k = 0; k < 20u << 20; k += 64)
		buf_adds(&deep,
		    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
		    "aaaaaaaaaaaaa");
	buf_adds(&deep, "\"}");
	hostile_config(home, deep.data, "huge");
	buf_free(&deep);
}

/* hostile_chat - write name under home/chat, start shirod: it must serve
 * (and answer STATUS) or exit with a message; never die of a signal. */
static void
hostile_chat(const char *home, const char *name, const char *text)
{
	char path[PATH_MAX];
	void *sock;
	pid_t pid;
	int st = 0;

	snprintf(path, sizeof(path), "%s/chat", home);
	tsd_write(path, name, text);
	snprintf(path, sizeof(path), "%s/shirod.err", home);
	unlink(path);
	pid = tsd_start(home, NULL, &st);
	if (pid > 0) {
		sock = tsd_connect(home);
		CHECKF(tsd_status_int(sock, "messages") >= 0,
		    "%s: no STATUS answer", name);
		tsd_close(&sock);
		st = tsd_stop(pid);
	}
	CHECKF(WIFEXITED(st), "chat/%s \"%.40s\": shirod ended with %#x", name,
	    text, st);
}

/* hostile_chat_of - a chat of n messages in home; with sockp, shirod
 * goes on serving (its pid returned, *sockp connected), else it is
 * stopped (0 returned). */
static pid_t
hostile_chat_of(const char *home, int n, void **sockp)
{
	void *sock;
	pid_t pid;
	int k, st;

	tsd_write(home, "config.json", "{\"workers\": []}");
	pid = tsd_start(home, NULL, &st);
	CHECK(pid > 0);
	sock = tsd_connect(home);
	for (k = 0; k < n; k++)
		CHECK(tsd_send_text(sock, "a message", NULL, NULL) == k);
	if (sockp != NULL) {
		*sockp = sock;
		return pid;
	}
	tsd_close(&sock);
	tsd_stop(pid);
	return 0;
}

/* A chat whose view.json is garbage: shirod serves or refuses with a
 * message; the messages stay. */
static void
corrupt_view_is_survived(void)
{
	const char *home = harness_tmpdir();
	static const char *const views[] = {"", "garbage", "[[0", "{}",
	    "[[99, 0]]", "[[0, 18446744073709551615]]", "[[-1, 0]]",
	    "[[0, 0], [0, 0]]", "[[1, 0], [0, 0]]", "[[0, 5]]", "[\"a\"]",
	    "[[0]]", "[[0, 0, 0]]", "[[63, 0]]", "[[64, 0]]",
	    "[[0, 1], [0, 0]]"};
	char path[PATH_MAX];
	void *sock;
	pid_t pid;
	size_t k;
	int st;

	(void)hostile_chat_of(home, 2, NULL);
	for (k = 0; k < sizeof(views) / sizeof(views[0]); k++)
		hostile_chat(home, "view.json", views[k]);
	snprintf(path, sizeof(path), "%s/chat/view.json", home);
	unlink(path);
	pid = tsd_start(home, NULL, &st);
	CHECK(pid > 0);
	sock = tsd_connect(home);
	CHECK_EQ_INT(tsd_status_int(sock, "messages"), 2);
	tsd_close(&sock);
	tsd_stop(pid);
}

/* A tree index cut short (a disk that lost its tail): shirod says so and
 * exits; it is not killed by a bus error reading past the file's end. */
static void
truncated_index_is_refused(void)
{
	const char *home = harness_tmpdir();
	static const off_t sizes[] = {9000, 12288, 20000};
	char path[PATH_MAX], *err;
	struct stat st;
	size_t k;
	int ws;

	(void)hostile_chat_of(home, 5, NULL);
	snprintf(path, sizeof(path), "%s/chat/tree.lmdb/data.mdb", home);
	CHECK(stat(path, &st) == 0 && st.st_size > sizes[2]);
	for (k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		CHECK(truncate(path, sizes[k]) == 0);
		ws = hostile_run(home, 3000);
		CHECKF(WIFEXITED(ws) && WEXITSTATUS(ws) != 0,
		    "a data.mdb of %lld bytes: shirod ended with %#x",
		    (long long)sizes[k], ws);
		snprintf(path, sizeof(path), "%s/shirod.err", home);
		err = hostile_file(path);
		CHECKF(err != NULL && strstr(err, "tree.lmdb") != NULL,
		    "shirod said \"%s\"", err ? err : "(nothing)");
		free(err);
		snprintf(
		    path, sizeof(path), "%s/chat/tree.lmdb/data.mdb", home);
	}
}

/* A key used again with a text of another length (a short one, then one
 * that is split into pages, and the other way round) is the first
 * message's retry: nothing more is logged, the next message gets the
 * next id, and the chat opens again with the same count. */
static void
reused_key_logs_nothing_more(void)
{
	const char *home = harness_tmpdir();
	char *big, code[64];
	int64_t n0, n1;
	void *sock;
	pid_t pid;
	int st;

	big = hostile_big('b');
	pid = hostile_chat_of(home, 1, &sock);
	/* Short first, then long with the same key. */
	CHECK(tsd_send_text(sock, "short", "k1", NULL) == 1);
	n0 = tsd_status_int(sock, "messages");
	st = hostile_send(
	    sock, big, MSG_MAX_TEXT, "user", "k1", code, sizeof(code));
	CHECKF(st == MSG_ACK || st == MSG_ERROR, "answer %d", st);
	n1 = hostile_log_count(sock);
	CHECKF(n1 == n0, "%lld messages after the retry, %lld before",
	    (long long)n1, (long long)n0);
	/* Long first, then short with the same key. */
	CHECK(hostile_send(sock, big, MSG_MAX_TEXT, "user", "k2", NULL, 0) ==
	    MSG_ACK);
	n0 = tsd_status_int(sock, "messages");
	n1 = tsd_send_text(sock, "short", "k2", NULL);
	CHECKF(n1 == 2, "the retry got id %lld, not 2", (long long)n1);
	CHECK_EQ_INT(tsd_status_int(sock, "messages"), n0);
	/* The next message is the next id, the planner agrees. */
	CHECK(tsd_send_text(sock, "next", NULL, NULL) == n0);
	CHECK_EQ_INT(tsd_status_int(sock, "messages"), n0 + 1);
	CHECK_EQ_INT(hostile_log_count(sock), n0 + 1);
	CHECK(hostile_zoom(sock, (uint64_t)n0, 1, NULL, 0) == MSG_REPLY);
	tsd_close(&sock);
	hostile_restart(home, pid, n0 + 1);
	free(big);
}

/* A SEND the store refuses (an empty key) sent in the same round as good
 * ones: it alone gets an error; the others are logged and acknowledged. */
static void
bad_send_spoils_no_other(void)
{
	const char *home = harness_tmpdir();
	struct msg *m, *r;
	uint64_t rid, id;
	int k, acks = 0, errors = 0, bad_error = 0;
	void *sock;
	pid_t pid;

	pid = hostile_chat_of(home, 0, &sock);
	/* Sent back to back, read by shirod in one round. */
	for (k = 0; k < 6; k++) {
		m = msg_new(MSG_SEND);
		msg_set_int(m, "rid", 1000 + k);
		msg_set_str(m, "kind", "user");
		msg_set_str(m, "text", k == 2 ? "bad" : "good");
		if (k == 2)
			msg_set_str(m, "key", "");
		CHECK(msg_send(sock, m, NULL) == 0);
		msg_destroy(&m);
	}
	for (k = 0; k < 6; k++) {
		r = tsd_recv(sock, 5000);
		while (r != NULL && msg_type(r) == MSG_EVENT) {
			msg_destroy(&r);
			r = tsd_recv(sock, 5000);
		}
		CHECK(r != NULL);
		rid = 0;
		(void)msg_get_uint(r, "rid", &rid);
		if (msg_type(r) == MSG_ACK && msg_get_uint(r, "id", &id) == 0)
			acks++;
		else if (msg_type(r) == MSG_ERROR && ++errors > 0 &&
		    rid == 1002)
			bad_error = 1;
		msg_destroy(&r);
	}
	CHECKF(acks == 5 && errors == 1 && bad_error,
	    "%d acks, %d errors (the bad one's: %d)", acks, errors, bad_error);
	CHECK_EQ_INT(tsd_status_int(sock, "messages"), acks);
	tsd_close(&sock);
	hostile_restart(home, pid, acks);
}

/* An empty or blank text is refused by shirod itself, whatever client sent
 * it (the client's one rule, docs/client.md), and nothing is logged; a
 * text with white space around words is logged whole. */
static void
blank_send_is_refused(void)
{
	static const char *const blank[] = {"", " ", "\t\n", "\r\n  \n"};
	const char *home = harness_tmpdir();
	char code[64];
	int64_t n0;
	size_t k;
	void *sock;
	pid_t pid;
	int st;

	pid = hostile_chat_of(home, 0, &sock);
	n0 = hostile_log_count(sock);
	for (k = 0; k < sizeof(blank) / sizeof(blank[0]); k++) {
		code[0] = '\0';
		st = hostile_send(sock, blank[k], strlen(blank[k]), "user",
		    NULL, code, sizeof(code));
		CHECKF(st == MSG_ERROR && strcmp(code, "text") == 0,
		    "blank text %zu: answer %d %s", k, st, code);
	}
	CHECK_EQ_INT(hostile_log_count(sock), n0);
	CHECK(hostile_send(sock, " a \n", 4, "user", NULL, NULL, 0) == MSG_ACK);
	CHECK_EQ_INT(hostile_log_count(sock), n0 + 1);
	tsd_close(&sock);
	hostile_restart(home, pid, n0 + 1);
}

/* A client key that looks like a page key ("K/1") is refused, so that it
 * can never stand in for page 1 of another client's long text "K". */
static void
page_keys_are_not_client_keys(void)
{
	const char *home = harness_tmpdir();
	char *big, code[64];
	int64_t n;
	void *sock;
	pid_t pid;
	int st;

	big = hostile_big('p');
	pid = hostile_chat_of(home, 0, &sock);
	st = hostile_send(sock, "squat", 5, "user", "K/1", code, sizeof(code));
	CHECKF(st == MSG_ERROR && strcmp(code, "key") == 0,
	    "key K/1: answer %d %s", st, code);
	CHECK(hostile_send(sock, big, MSG_MAX_TEXT, "user", "K", NULL, 0) ==
	    MSG_ACK);
	n = hostile_log_count(sock);
	/* Every page of the long text is there: 1 MiB in 30,000-byte pages. */
	CHECKF(
	    n == (MSG_MAX_TEXT + 29999) / 30000, "%lld messages", (long long)n);
	tsd_close(&sock);
	hostile_restart(home, pid, n);
	free(big);
}

static const struct harness_test tests[] = {
    HT(odd_requests_are_answered),
    HT_SLOW(broken_configs_are_refused, 120),
    HT_SLOW(corrupt_view_is_survived, 120),
    HT(truncated_index_is_refused),
    HT(reused_key_logs_nothing_more),
    HT(bad_send_spoils_no_other),
    HT(blank_send_is_refused),
    HT(page_keys_are_not_client_keys),
};

HARNESS_MAIN(tests)
