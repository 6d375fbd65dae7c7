/*
 * test_client - the client's parts that need no daemon: the JSON writer
 * (checked by a real JSON parser, python3), SHA-256 against published
 * vectors, the history file on disk, and the status line's numbers.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <zmq.h>

#include "client/hist.h"
#include "client/json_out.h"
#include "client/render.h"
#include "proto/sha256.h"
#include "proto/buf.h"
#include "proto/msg.h"
#include "proto/zsock.h"
#include "proto/xmalloc.h"
#include "tests/harness.h"

/* hex - d as lower-case hex in out (2 * n + 1 bytes). */
static void
hex(const uint8_t *d, size_t n, char *out)
{
	size_t k;

	for (k = 0; k < n; k++)
		snprintf(out + 2 * k, 3, "%02x", d[k]);
}

/* SHA-256 gives the published digests (FIPS 180-4 examples, and a
 * two-block message whose padding spills into a second block). */
static void
sha256_matches_known_vectors(void)
{
	uint8_t d[SHA256_LEN];
	char h[65], *million;

	sha256("", 0, d);
	hex(d, sizeof(d), h);
	CHECK_EQ_STR(h,
	    "e3b0c44298fc1c149afbf4c8996fb924"
	    "27ae41e4649b934ca495991b7852b855");
	sha256("abc", 3, d);
	hex(d, sizeof(d), h);
	CHECK_EQ_STR(h,
	    "ba7816bf8f01cfea414140de5dae2223"
	    "b00361a396177a9cb410ff61f20015ad");
	sha256(
	    "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56, d);
	hex(d, sizeof(d), h);
	CHECK_EQ_STR(h,
	    "248d6a61d20638b8e5c026930c3e6039"
	    "a33ce45964ff2167f6ecedd419db06c1");
	million = xmalloc(1000000);
	memset(million, 'a', 1000000);
	sha256(million, 1000000, d);
	hex(d, sizeof(d), h);
	CHECK_EQ_STR(h,
	    "cdc76e5c9914fb9281a1c7e284d73e67"
	    "f1809a48a497200e046d39ccc7112cd0");
	free(million);
}

/* python_json_ok - whether python3 parses text as JSON (and, when want
 * is not NULL, re-dumps it as want). -1 when python3 is missing. */
static int
python_json_ok(const char *text, const char *want)
{
	char path[512], cmd[1400];
	FILE *f;
	int st;

	snprintf(path, sizeof(path), "%s/doc.json", harness_tmpdir());
	f = fopen(path, "w");
	CHECK(f != NULL);
	fputs(text, f);
	fclose(f);
	if (system("python3 -c 'pass' 2>/dev/null") != 0)
		return -1;
	if (want != NULL)
		snprintf(cmd, sizeof(cmd),
		    "python3 -c 'import json,sys; "
		    "v=json.load(open(sys.argv[1])); "
		    "sys.exit(0 if json.dumps(v, ensure_ascii=False, "
		    "separators=(\",\",\":\")) == sys.argv[2] else 1)' %s '%s'",
		    path, want);
	else
		snprintf(cmd, sizeof(cmd),
		    "python3 -c 'import json,sys; "
		    "json.load(open(sys.argv[1]))' "
		    "%s",
		    path);
	st = system(cmd);
	return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

/* The writer puts commas and escapes where JSON wants them, and turns
 * control characters and bad UTF-8 into escapes a parser accepts. */
static void
json_out_writes_valid_json(void)
{
	struct buf b = BUF_INIT;
	struct json_out j;
	const char nasty[] = "q\"b\\s\n\t\x01\x7f"
			     "\xc3\xa9"
			     "\xff\xc0\xaf"
			     "\xed\xa0\x80";
	int ok;

	json_out_init(&j, &b);
	json_out_begin_object(&j);
	json_out_key(&j, "a");
	json_out_int(&j, -5);
	json_out_key(&j, "b");
	json_out_begin_array(&j);
	json_out_uint(&j, UINT64_MAX);
	json_out_bool(&j, 1);
	json_out_null(&j);
	json_out_double(&j, 0.5);
	json_out_begin_object(&j);
	json_out_end_object(&j);
	json_out_end_array(&j);
	json_out_key(&j, "s");
	json_out_strn(&j, nasty, sizeof(nasty) - 1);
	json_out_end_object(&j);
	CHECK_EQ_STR(b.data,
	    "{\"a\":-5,\"b\":[18446744073709551615,true,null,"
	    "0.5,{}],\"s\":\"q\\\"b\\\\s\\n\\t\\u0001\\u007f"
	    "\xc3\xa9\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd"
	    "\\ufffd\"}");
	ok = python_json_ok(b.data, NULL);
	if (ok < 0)
		harness_skip("python3 is not installed");
	CHECK(ok == 1);
	buf_free(&b);
}

/* A decoded protocol value (what REPLY carries) comes out as the same
 * JSON document: maps in order, arrays, strings, numbers, booleans. */
static void
json_out_writes_protocol_values(void)
{
	struct msg *m = msg_new(MSG_REPLY);
	struct buf b = BUF_INIT;
	struct json_out j;
	struct msg_val *doc, *arr, *sub;
	const struct msg_val *got;
	int ok;

	msg_set_int(m, "rid", 7);
	doc = msg_set_map(m, "doc");
	msg_val_set_int(doc, "messages", 42);
	msg_val_set_str(doc, "state", "ok \"quoted\"");
	msg_val_set_bool(doc, "busy", false);
	msg_val_set_nil(doc, "none");
	arr = msg_val_set_arr(doc, "view");
	msg_val_add_str(arr, "0+4|four messages");
	sub = msg_val_add_map(arr);
	msg_val_set_int(sub, "id", 4);
	CHECK(msg_get_map(m, "doc", &got) == 0);
	json_out_init(&j, &b);
	json_out_val(&j, got);
	CHECK_EQ_STR(b.data,
	    "{\"messages\":42,\"state\":\"ok \\\"quoted\\\"\","
	    "\"busy\":false,\"none\":null,\"view\":[\"0+4|four "
	    "messages\",{\"id\":4}]}");
	ok = python_json_ok(b.data, b.data);
	if (ok < 0)
		harness_skip("python3 is not installed");
	CHECK(ok == 1);
	msg_destroy(&m);
	buf_free(&b);
}

/* read_file - the whole file at path (caller frees). */
static char *
read_file(const char *path)
{
	struct buf b = BUF_INIT;
	char chunk[4096];
	ssize_t r;
	int fd = open(path, O_RDONLY);

	CHECKF(fd >= 0, "cannot open %s", path);
	while ((r = read(fd, chunk, sizeof(chunk))) > 0)
		buf_add(&b, chunk, (size_t)r);
	close(fd);
	return b.data != NULL ? buf_steal(&b, NULL) : xstrdup("");
}

/* The history file is named by the directory's hash, holds a JSON
 * array, skips a repeat of the last entry, keeps the last 200, and a
 * second session sees the first one's entries. */
static void
hist_is_per_directory_and_capped(void)
{
	const char *home = harness_tmpdir();
	struct hist *h1, *h2, *other;
	char *path, *text, **items = NULL;
	char want[128], line[32];
	size_t n = 0, k;
	uint8_t d[SHA256_LEN];
	char hx[65];

	sha256("/some/project", 13, d);
	hex(d, 16, hx);
	snprintf(want, sizeof(want), "%s/history/%s.json", home, hx);
	path = hist_path(home, "/some/project");
	CHECK_EQ_STR(path, want);
	h1 = hist_open(home, "/some/project");
	CHECK_EQ_INT(h1->n, 0);
	CHECK(hist_add(h1, "first \"line\" \xc3\xa9") == 0);
	CHECK(hist_add(h1, "first \"line\" \xc3\xa9") == 0);
	CHECK(hist_add(h1, "second") == 0);
	CHECK_EQ_INT(h1->n, 2);
	text = read_file(path);
	CHECK_EQ_STR(
	    text, "[\n\"first \\\"line\\\" \xc3\xa9\",\n\"second\"\n]\n");
	free(text);
	h2 = hist_open(home, "/some/project");
	CHECK_EQ_INT(h2->n, 2);
	CHECK_EQ_STR(h2->items[0], "first \"line\" \xc3\xa9");
	CHECK(hist_add(h2, "third") == 0);
	CHECK(hist_add(h1, "fourth") == 0); /* h1 picks up "third" first */
	CHECK_EQ_INT(h1->n, 4);
	CHECK_EQ_STR(h1->items[2], "third");
	other = hist_open(home, "/another");
	CHECK_EQ_INT(other->n, 0);
	for (k = 0; k < 250; k++) {
		snprintf(line, sizeof(line), "entry %zu", k);
		CHECK(hist_add(h1, line) == 0);
	}
	CHECK_EQ_INT(h1->n, HIST_MAX);
	text = read_file(path);
	CHECK(hist_parse(text, strlen(text), &items, &n) == 0);
	CHECK_EQ_INT(n, HIST_MAX);
	CHECK_EQ_STR(items[0], "entry 50");
	CHECK_EQ_STR(items[HIST_MAX - 1], "entry 249");
	for (k = 0; k < n; k++)
		free(items[k]);
	free(items);
	free(text);
	free(path);
	hist_destroy(&h1);
	hist_destroy(&h2);
	hist_destroy(&other);
	CHECK(h1 == NULL);
}

/* A malformed history file is refused (and then ignored), never crashes;
 * escapes decode, including surrogate pairs. */
static void
hist_parse_is_strict(void)
{
	static const char *bad[] = {"", "[", "[\"a\"", "[\"a\",]", "{}", "[1]",
	    "[\"a\"] x", "[\"\\q\"]", "[\"\\ud800\"]", "[\"\\u00\"]",
	    "[\"a\nb\"]", "[\"\\u0000\"]"};
	char **items = NULL;
	size_t n = 0, k;
	const char *home = harness_tmpdir();
	struct hist *h;
	char *path, dir[512];
	const char *good;
	int fd;

	for (k = 0; k < sizeof(bad) / sizeof(bad[0]); k++)
		CHECKF(hist_parse(bad[k], strlen(bad[k]), &items, &n) < 0,
		    "accepted %s", bad[k]);
	good = " [ \"\\u00e9\\ud83d\\ude00\\n\" , \"x\" ] ";
	CHECK(hist_parse(good, strlen(good), &items, &n) == 0);
	CHECK_EQ_INT(n, 2);
	CHECK_EQ_STR(items[0], "\xc3\xa9\xf0\x9f\x98\x80\n");
	for (k = 0; k < n; k++)
		free(items[k]);
	free(items);
	snprintf(dir, sizeof(dir), "%s/history", home);
	CHECK(mkdir(dir, 0700) == 0);
	path = hist_path(home, "/p");
	fd = open(path, O_WRONLY | O_CREAT, 0600);
	CHECK(fd >= 0);
	CHECK(write(fd, "[\"x\", garbage", 13) == 13);
	close(fd);
	h = hist_open(home, "/p");
	CHECK_EQ_INT(h->n, 0);
	CHECK(hist_add(h, "fresh") == 0);
	hist_destroy(&h);
	h = hist_open(home, "/p");
	CHECK_EQ_INT(h->n, 1);
	CHECK_EQ_STR(h->items[0], "fresh");
	hist_destroy(&h);
	free(path);
}

/* The status line reads "mem 812B/128K": a unit on both sides. */
static void
render_status_line_reads_well(void)
{
	static const struct {
		uint64_t bytes;
		const char *want;
	} cases[] = {{0, "mem 0B/128K"}, {812, "mem 812B/128K"},
	    {3456, "mem 3.4K/128K"}, {64000, "mem 64K/128K"},
	    {127999, "mem 127K/128K"}, {1250000, "mem 1.2M/128K"}};
	struct buf b = BUF_INIT;
	size_t k;

	for (k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		buf_reset(&b);
		render_status_line(&b, cases[k].bytes, 128000);
		CHECK_EQ_STR(b.data, cases[k].want);
	}
	buf_free(&b);
}

/* What the client shows of chat text: every control as text, plain text
 * and UTF-8 unchanged; JSON escapes the C1 controls and DEL too. */
static void
render_escape_shows_controls_as_text(void)
{
	static const struct {
		const char *in, *want;
	} cases[] = {{"plain text, no change", "plain text, no change"},
	    {"line one\nline\ttwo", "line one\nline\ttwo"},
	    {"\x1b[31mred\x1b[0m", "^[[31mred^[[0m"},
	    {"\x1b]0;title\x07", "^[]0;title^G"}, {"a\rb", "a^Mb"},
	    {"bell\x07 del\x7f", "bell^G del^?"},
	    {"csi \xc2\x9b"
	     "2J nel \xc2\x85",
		"csi M-^[2J nel M-^E"},
	    {"caf\xc3\xa9 \xe6\x97\xa5 \xc2\xa0",
		"caf\xc3\xa9 \xe6\x97\xa5 \xc2\xa0"},
	    {"bad \xff\xc3", "bad \\xff\\xc3"}};
	struct buf b = BUF_INIT;
	size_t k, i;

	for (k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		buf_reset(&b);
		render_escape(&b, cases[k].in, strlen(cases[k].in));
		buf_add(&b, "", 0);
		CHECK_EQ_STR(b.data, cases[k].want);
		for (i = 0; i < b.len; i++)
			CHECKF((unsigned char)b.data[i] >= 0x20 ||
				b.data[i] == '\n' || b.data[i] == '\t',
			    "case %zu: byte %zu is 0x%02x", k, i,
			    (unsigned char)b.data[i]);
	}
	/* A NUL inside the text is shown too, not an end. */
	buf_reset(&b);
	render_escape(&b, "a\0b", 3);
	CHECK_EQ_STR(b.data, "a^@b");
	buf_reset(&b);
	json_out_quote(&b, "\xc2\x9b\x7f\x1b\xc3\xa9", 6);
	CHECK_EQ_STR(b.data, "\"\\u009b\\u007f\\u001b\xc3\xa9\"");
	buf_free(&b);
}

/* output_tail - the end of what the last run printed (static buffer). */
static const char *
output_tail(void)
{
	static char tail[1024];
	char path[512];
	ssize_t r;
	off_t size;
	int fd;

	snprintf(path, sizeof(path), "%s/output", harness_tmpdir());
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return "(no output)";
	size = lseek(fd, 0, SEEK_END);
	(void)lseek(fd, size > 1000 ? size - 1000 : 0, SEEK_SET);
	r = read(fd, tail, sizeof(tail) - 1);
	close(fd);
	tail[r > 0 ? r : 0] = '\0';
	return tail;
}

/* shiro_bin - the client under test: $SHIRO_BIN, else build/shiro. */
static const char *
shiro_bin(void)
{
	const char *p = getenv("SHIRO_BIN");

	return p != NULL && p[0] != '\0' ? p : "build/shiro";
}

/* hostile_answer - what a broker that breaks the rules sends for m. */
static void
hostile_answer(void *sock, struct msg *m, const struct msg_ident *from)
{
	struct msg *r;
	struct msg_val *data;
	uint64_t rid = 0;

	if (msg_type(m) == MSG_BYE)
		return;
	(void)msg_get_uint(m, "rid", &rid);
	/* Types a client never gets: a worker's job and shutdown. */
	r = msg_new(MSG_JOB);
	msg_set_int(r, "job", 1);
	msg_set_str(r, "kind", "compact");
	CHECK(msg_send(sock, r, from) == 0);
	msg_destroy(&r);
	r = msg_new(MSG_SHUTDOWN);
	CHECK(msg_send(sock, r, from) == 0);
	msg_destroy(&r);
	/* Events of unknown kinds, with odd keys. */
	r = msg_new(MSG_EVENT);
	msg_set_int(r, "seq", 7);
	msg_set_str(r, "ev", "from-the-future");
	data = msg_set_map(r, "data");
	msg_val_set_arr(msg_val_set_map(data, "deep"), "er");
	CHECK(msg_send(sock, r, from) == 0);
	msg_destroy(&r);
	r = msg_new(MSG_EVENT);
	msg_set_int(r, "seq", 8);
	msg_set_str(r, "ev", "batch");
	msg_set_arr(r, "merges");
	CHECK(msg_send(sock, r, from) == 0);
	msg_destroy(&r);
	/* An answer of the wrong type for every request but HELLO. */
	if (msg_type(m) == MSG_HELLO) {
		r = msg_new(MSG_WELCOME);
		msg_set_int(r, "seq", 8);
		msg_set_bool(r, "replay", false);
		msg_set_int(r, "pid", getpid());
		msg_set_int(r, "version", MSG_VERSION);
	} else if (msg_type(m) == MSG_PING || msg_type(m) == MSG_SEND) {
		r = msg_new(MSG_REPLY);
		msg_set_map(r, "doc");
	} else {
		r = msg_new(MSG_PONG);
	}
	msg_set_int(r, "rid", (int64_t)rid);
	CHECK(msg_send(sock, r, from) == 0);
	msg_destroy(&r);
}

/* Which broker run_against plays: 0 the wrong types (hostile_answer),
 * 1 the right types with odd documents (odd_answer). */
static int broker_mode;

/* odd_doc - fill doc with values of every wrong shape under the keys a
 * client reads. */
static void
odd_doc(struct msg_val *doc, int variant)
{
	static const char *const keys[] = {"messages", "view", "cview", "lines",
	    "log", "node", "parts", "workers", "clients", "queues", "failures",
	    "turns", "seq", "pid", "uptime_ms", "unbuilt", "truncated", "id",
	    "n", "text", "kind", "date", "built", "size", "bytes", "ceiling",
	    "floor", "stopping", "in_flight", "version", "home", "jobs_done",
	    "workers_ready", "shrinking", "known", "attached", "provider"};
	struct msg_val *v, *a;
	size_t k;
	int j;

	for (k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
		switch ((variant + (int)k) % 6) {
		case 0:
			msg_val_set_int(doc, keys[k], INT64_MIN);
			break;
		case 1:
			msg_val_set_str(doc, keys[k], "");
			break;
		case 2:
			a = msg_val_set_arr(doc, keys[k]);
			msg_val_add_int(a, -1);
			msg_val_add_str(a, "x");
			msg_val_add_arr(a);
			v = msg_val_add_map(a);
			msg_val_set_int(v, "id", INT64_MAX);
			msg_val_set_int(v, "n", -5);
			msg_val_set_nil(v, "text");
			msg_val_set_str(v, "built", "no");
			break;
		case 3:
			v = msg_val_set_map(doc, keys[k]);
			for (j = 0; j < 4; j++)
				v = msg_val_set_map(v, "deeper");
			break;
		case 4:
			msg_val_set_nil(doc, keys[k]);
			break;
		default:
			msg_val_set_bool(doc, keys[k], true);
			break;
		}
	}
}

/* odd_answer - the right answer type for m, with odd contents, after a
 * malformed frame and odd events. */
static void
odd_answer(void *sock, struct msg *m, const struct msg_ident *from)
{
	static int variant;
	struct msg *r;
	uint64_t rid = 0;

	if (msg_type(m) == MSG_BYE)
		return;
	(void)msg_get_uint(m, "rid", &rid);
	variant++;
	zmq_send(sock, from->data, from->len, ZMQ_SNDMORE);
	zmq_send(sock, MSG_HEADER, 7, ZMQ_SNDMORE);
	zmq_send(sock, "\x13", 1, ZMQ_SNDMORE);
	zmq_send(sock,
	    "\x81\xa3"
	    "doc\xc1",
	    6, 0);
	r = msg_new(MSG_EVENT);
	msg_set_int(r, "seq", INT64_MAX);
	msg_set_str(r, "ev", variant % 2 ? "message" : "failure");
	msg_set_int(r, "id", INT64_MAX);
	msg_set_int(r, "n", 0);
	odd_doc(msg_set_map(r, "data"), variant);
	CHECK(msg_send(sock, r, from) == 0);
	msg_destroy(&r);
	r = msg_new(MSG_EVENT);
	msg_set_int(r, "seq", 1);
	msg_set_str(r, "ev", "batch");
	msg_val_add_int(msg_set_arr(r, "merges"), -1);
	CHECK(msg_send(sock, r, from) == 0);
	msg_destroy(&r);
	switch (msg_type(m)) {
	case MSG_HELLO:
		r = msg_new(MSG_WELCOME);
		msg_set_int(r, "seq", INT64_MAX);
		msg_set_bool(r, "replay", true);
		msg_set_int(r, "pid", 0);
		msg_set_int(r, "version", MSG_VERSION);
		break;
	case MSG_SEND:
		r = msg_new(MSG_ACK);
		msg_set_int(r, "id", INT64_MAX);
		msg_set_bool(r, "dup", true);
		break;
	case MSG_PING:
		r = msg_new(MSG_PONG);
		break;
	default:
		r = msg_new(MSG_REPLY);
		odd_doc(msg_set_map(r, "doc"), variant);
		break;
	}
	msg_set_int(r, "rid", (int64_t)rid);
	CHECK(msg_send(sock, r, from) == 0);
	msg_destroy(&r);
}

/* run_against - run shiro with args (stdin from input) against the
 * broker on sock, playing hostile_answer, and return its wait status. */
static int
run_against(void *sock, const char *endpoint, const char *input,
    const char *const *args)
{
	struct zsock_poll item;
	struct msg *m;
	struct msg_ident from;
	char *argv[16], path[512];
	long long end = zsock_now_ms() + 20000;
	int fd, st = -1, n = 0, k;
	pid_t pid;

	snprintf(path, sizeof(path), "%s/input", harness_tmpdir());
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	CHECK(fd >= 0);
	CHECK(write(fd, input, strlen(input)) == (ssize_t)strlen(input));
	close(fd);
	argv[n++] = (char *)shiro_bin();
	argv[n++] = "--no-start";
	argv[n++] = "--endpoint";
	argv[n++] = (char *)endpoint;
	for (k = 0; args[k] != NULL && n < 15; k++)
		argv[n++] = (char *)args[k];
	argv[n] = NULL;
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		fd = open(path, O_RDONLY);
		if (fd < 0 || dup2(fd, 0) < 0)
			_exit(99);
		snprintf(path, sizeof(path), "%s/output", harness_tmpdir());
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
			_exit(99);
		execv(argv[0], argv);
		_exit(98);
	}
	while (zsock_now_ms() < end) {
		if (waitpid(pid, &st, WNOHANG) == pid)
			return st;
		item.sock = sock;
		item.fd = -1;
		item.events = ZSOCK_IN;
		item.revents = 0;
		if (zsock_poll(&item, 1, 100) <= 0)
			continue;
		while (msg_recv(sock, &m, &from) == 0) {
			if (broker_mode == 1)
				odd_answer(sock, m, &from);
			else
				hostile_answer(sock, m, &from);
			msg_destroy(&m);
		}
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	harness_fail(__FILE__, __LINE__, "shiro %s did not finish in 20 s: %s",
	    args[0] != NULL ? args[0] : "(attach)", output_tail());
}

/* A broker that sends types meant for workers, unknown events and
 * answers of the wrong type never makes the client crash: it ignores or
 * reports them and exits normally. */
static void
client_survives_a_hostile_broker(void)
{
	static const char *const status[] = {"status", NULL};
	static const char *const memory[] = {"memory", "--json", NULL};
	static const char *const send[] = {"send", "hi", NULL};
	static const char *const print[] = {"-p", "hi", NULL};
	static const char *const attach[] = {NULL};
	char endpoint[512];
	void *sock = NULL;
	int st;

	if (access(shiro_bin(), X_OK) != 0)
		harness_skip("%s is not built (run from the top)", shiro_bin());
	snprintf(
	    endpoint, sizeof(endpoint), "ipc://%s/b.sock", harness_tmpdir());
	CHECK(zsock_router(endpoint, NULL, &sock) == 0);
	st = run_against(sock, endpoint, "", status);
	CHECKF(WIFEXITED(st), "status: killed by signal %d", WTERMSIG(st));
	st = run_against(sock, endpoint, "", memory);
	CHECKF(WIFEXITED(st), "memory: killed by signal %d", WTERMSIG(st));
	st = run_against(sock, endpoint, "", send);
	CHECKF(WIFEXITED(st) && WEXITSTATUS(st) == 1,
	    "send: status %d (a REPLY is not an ACK: exit 1)", st);
	st = run_against(sock, endpoint, "", print);
	CHECKF(WIFEXITED(st) && WEXITSTATUS(st) == 1, "-p: status %d", st);
	st = run_against(sock, endpoint,
	    "/status\n/memory\n/memory zoom 0 1\n/log 3\nhello\n/exit\n",
	    attach);
	CHECKF(WIFEXITED(st) && WEXITSTATUS(st) == 0, "attach: status %d: %s",
	    st, output_tail());
	zsock_close(&sock);
}

/* A broker that answers with the right types but documents of every
 * wrong shape, after malformed frames and odd events: the client prints
 * what it can or says what is wrong; it is never killed by a signal. */
static void
client_survives_odd_documents(void)
{
	static const char *const cmds[][6] = {{"status", NULL},
	    {"status", "--json", NULL}, {"memory", NULL},
	    {"memory", "--json", NULL}, {"memory", "zoom", "0", "1", NULL},
	    {"zoom", "0", "2", NULL}, {"log", NULL}, {"log", "--json", NULL},
	    {"send", "hi", NULL}, {"stop", NULL}};
	static const char *const attach[] = {NULL};
	char endpoint[512];
	void *sock = NULL;
	size_t k;
	int st, v;

	if (access(shiro_bin(), X_OK) != 0)
		harness_skip("%s is not built (run from the top)", shiro_bin());
	broker_mode = 1;
	snprintf(
	    endpoint, sizeof(endpoint), "ipc://%s/b.sock", harness_tmpdir());
	CHECK(zsock_router(endpoint, NULL, &sock) == 0);
	for (v = 0; v < 6; v++) {
		for (k = 0; k < sizeof(cmds) / sizeof(cmds[0]); k++) {
			st = run_against(sock, endpoint, "", cmds[k]);
			CHECKF(WIFEXITED(st), "%s (variant %d): signal %d: %s",
			    cmds[k][0], v, WTERMSIG(st), output_tail());
		}
		st = run_against(sock, endpoint,
		    "/status\n/memory\n/memory zoom 0 1\n/log 3\n/exit\n",
		    attach);
		CHECKF(WIFEXITED(st), "attach (variant %d): signal %d: %s", v,
		    WTERMSIG(st), output_tail());
	}
	zsock_close(&sock);
}

static const struct harness_test tests[] = {
    HT(sha256_matches_known_vectors),
    HT(json_out_writes_valid_json),
    HT(json_out_writes_protocol_values),
    HT(hist_is_per_directory_and_capped),
    HT(hist_parse_is_strict),
    HT(render_status_line_reads_well),
    HT(render_escape_shows_controls_as_text),
    HT_SLOW(client_survives_a_hostile_broker, 120),
    HT_SLOW(client_survives_odd_documents, 300),
};

HARNESS_MAIN(tests)
