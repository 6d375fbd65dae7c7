/*
 * test_turn - turns and model calls through a real shirod, against a
 * model worker played by this program: what shirod sends (every JOB is
 * recorded as JSON, byte for byte of its strings), what the clients get
 * (streamed text and thinking, tools, the end), what is logged, what the
 * prefix gate holds back, and how failures end a turn.
 *
 * The fake worker (fake_main) is this binary, named as the worker
 * program of a provider in the test's config.json.  It reads its script
 * from HOME/fake.json:
 *
 *	{"jobs": 4,                      calls in flight it announces
 *	 "calls": [CALL, ...],           answers to "call" jobs, in order
 *	 "compact": {"line": 300,        a compaction's line, this long
 *	             "start_ms": 0,      before its CHUNK start
 *	             "result_ms": 0,     after it, before its RESULT
 *	             "wait": "file",     answer once HOME/file exists
 *	             "hold": true}}      never answer
 *
 *	CALL = {"wait": "file", "chunks": [[part, text], ...],
 *	        "text": "...", "content": [part, ...], "stop": "end",
 *	        "usage": {...}, "fail": [code, text], "die": true}
 *
 * and writes HOME/jobs.jsonl (one line per JOB: {"t": ms, "pid": pid,
 * "job": body}) and HOME/secrets (one "provider key" line per SECRET).
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proto/buf.h"
#include "proto/err.h"
#include "proto/msg.h"
#include "proto/xmalloc.h"
#include "proto/zsock.h"
#include "tests/harness.h"
#include "tests/test_shirod_util.h"

/* ---- The fake worker ---- */

/* One thing the fake will send, when due (and when its file exists). */
struct fake_act {
	uint64_t at;
	uint64_t job;
	char wait[PATH_MAX + 64];
	struct msg *m; /* NULL with die: exit */
	int die;
};

static struct fake_act fake_acts[512];
static size_t fake_nacts;
static char fake_home[PATH_MAX - 64];

/* fake_json_val - a msg value as JSON (bins as {"bin": length}). */
static json_t *
fake_json_val(const struct msg_val *v)
{
	json_t *j;
	size_t k;

	switch (v->type) {
	case MSG_V_NIL:
		return json_null();
	case MSG_V_BOOL:
		return json_boolean(v->u.b);
	case MSG_V_INT:
		return json_integer(v->u.i);
	case MSG_V_STR:
		return json_stringn(v->u.s.ptr, v->u.s.len);
	case MSG_V_BIN:
		return json_pack("{s:I}", "bin", (json_int_t)v->u.s.len);
	case MSG_V_ARR:
		j = json_array();
		for (k = 0; k < v->u.a.n; k++)
			json_array_append_new(
			    j, fake_json_val(v->u.a.items[k]));
		return j;
	case MSG_V_MAP:
		j = json_object();
		for (k = 0; k < v->u.m.n; k++)
			json_object_set_new(j, v->u.m.kv[k].key,
			    fake_json_val(v->u.m.kv[k].val));
		return j;
	}
	return json_null();
}

/* fake_append - append a line to HOME/name. */
static void
fake_append(const char *name, const char *line)
{
	char path[PATH_MAX + 32];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", fake_home, name);
	f = fopen(path, "a");
	if (f == NULL)
		return;
	fputs(line, f);
	fputc('\n', f);
	fclose(f);
}

/* fake_record - the JOB as one JSON line of HOME/jobs.jsonl. */
static void
fake_record(const struct msg *m)
{
	json_t *line = json_object();
	char *s;

	json_object_set_new(line, "t", json_integer((json_int_t)tsd_now_ms()));
	json_object_set_new(line, "pid", json_integer(getpid()));
	json_object_set_new(line, "job", fake_json_val(msg_body(m)));
	s = json_dumps(line, JSON_COMPACT);
	fake_append("jobs.jsonl", s);
	free(s);
	json_decref(line);
}

/* fake_next_call - the index of the next call script entry, shared by
 * every fake worker of the home (a counter under flock). */
static size_t
fake_next_call(void)
{
	char path[PATH_MAX + 32], buf[32];
	size_t n = 0;
	ssize_t r;
	int fd;

	snprintf(path, sizeof(path), "%s/fake.count", fake_home);
	fd = open(path, O_RDWR | O_CREAT, 0600);
	if (fd < 0)
		return 0;
	(void)flock(fd, LOCK_EX);
	r = pread(fd, buf, sizeof(buf) - 1, 0);
	if (r > 0) {
		buf[r] = '\0';
		n = strtoul(buf, NULL, 10);
	}
	r = snprintf(buf, sizeof(buf), "%zu", n + 1);
	(void)ftruncate(fd, 0);
	(void)pwrite(fd, buf, (size_t)r, 0);
	(void)flock(fd, LOCK_UN);
	close(fd);
	return n;
}

/* fake_act_add - schedule m (taken) for job at time at. */
static void
fake_act_add(uint64_t at, uint64_t job, const char *wait, struct msg *m)
{
	struct fake_act *a;

	if (fake_nacts == sizeof(fake_acts) / sizeof(fake_acts[0])) {
		msg_destroy(&m);
		return;
	}
	a = &fake_acts[fake_nacts++];
	memset(a, 0, sizeof(*a));
	a->at = at;
	a->job = job;
	a->m = m;
	a->die = m == NULL;
	if (wait != NULL)
		snprintf(a->wait, sizeof(a->wait), "%s/%s", fake_home, wait);
}

/* fake_chunk - a CHUNK of job. */
static struct msg *
fake_chunk(uint64_t job, const char *part, const char *text)
{
	struct msg *m = msg_new(MSG_CHUNK);

	msg_set_int(m, "job", (int64_t)job);
	msg_set_str(m, "text", text);
	msg_set_str(m, "part", part);
	return m;
}

/* fake_val - a JSON value into a msg map under key. */
static void
fake_val(struct msg_val *map, const char *key, json_t *j)
{
	const char *k;
	json_t *v;
	size_t i;

	if (json_is_string(j)) {
		msg_val_set_str(map, key, json_string_value(j));
	} else if (json_is_integer(j)) {
		msg_val_set_int(map, key, json_integer_value(j));
	} else if (json_is_boolean(j)) {
		msg_val_set_bool(map, key, json_is_true(j));
	} else if (json_is_object(j)) {
		struct msg_val *m = msg_val_set_map(map, key);

		json_object_foreach(j, k, v) fake_val(m, k, v);
	} else if (json_is_array(j)) {
		struct msg_val *a = msg_val_set_arr(map, key);

		json_array_foreach(j, i, v)
		{
			if (json_is_object(v)) {
				struct msg_val *m = msg_val_add_map(a);
				json_t *x;

				json_object_foreach(v, k, x) fake_val(m, k, x);
			} else if (json_is_string(v)) {
				msg_val_add_str(a, json_string_value(v));
			}
		}
	}
}

/* fake_call - schedule the answer to a call job from script entry c. */
static void
fake_call(uint64_t job, json_t *c, uint64_t now)
{
	const char *wait = json_string_value(json_object_get(c, "wait"));
	json_t *chunks = json_object_get(c, "chunks"), *x, *fail;
	struct msg *m;
	struct msg_val *data;
	size_t k;

	if (json_is_true(json_object_get(c, "die"))) {
		fake_act_add(now, job, wait, NULL);
		return;
	}
	json_array_foreach(chunks, k, x)
	    fake_act_add(now, job, k == 0 ? wait : NULL,
		fake_chunk(job, json_string_value(json_array_get(x, 0)),
		    json_string_value(json_array_get(x, 1))));
	fail = json_object_get(c, "fail");
	if (fail != NULL) {
		m = msg_new(MSG_FAIL);
		msg_set_int(m, "job", (int64_t)job);
		msg_set_str(
		    m, "code", json_string_value(json_array_get(fail, 0)));
		msg_set_str(
		    m, "text", json_string_value(json_array_get(fail, 1)));
		fake_act_add(
		    now, job, json_array_size(chunks) ? NULL : wait, m);
		return;
	}
	m = msg_new(MSG_RESULT);
	msg_set_int(m, "job", (int64_t)job);
	if (json_object_get(c, "text") != NULL)
		msg_set_str(
		    m, "text", json_string_value(json_object_get(c, "text")));
	if (json_object_get(c, "usage") != NULL) {
		struct msg_val *u = msg_set_map(m, "usage");
		const char *key;

		json_object_foreach(json_object_get(c, "usage"), key, x)
		    msg_val_set_int(u, key, json_integer_value(x));
	}
	data = msg_set_map(m, "data");
	if (json_object_get(c, "content") != NULL)
		fake_val(data, "content", json_object_get(c, "content"));
	msg_val_set_str(data, "stop",
	    json_object_get(c, "stop")
		? json_string_value(json_object_get(c, "stop"))
		: "end");
	fake_act_add(now, job, json_array_size(chunks) ? NULL : wait, m);
}

/* fake_compact - schedule the answer to a compaction job. */
static void
fake_compact(uint64_t job, const struct msg *in, json_t *c, uint64_t now)
{
	const struct msg_val *inputs;
	const char *src = "", *wait;
	json_int_t line = 300, start = 0, result = 0;
	struct buf t = BUF_INIT;
	struct msg *m;

	if (c == NULL || json_is_true(json_object_get(c, "hold")))
		return;
	if (json_object_get(c, "line") != NULL)
		line = json_integer_value(json_object_get(c, "line"));
	start = json_integer_value(json_object_get(c, "start_ms"));
	result = json_integer_value(json_object_get(c, "result_ms"));
	wait = json_string_value(json_object_get(c, "wait"));
	if (msg_get_arr(in, "inputs", &inputs) == 0 && inputs->u.a.n > 0 &&
	    msg_val_str(inputs->u.a.items[0], "text") != NULL)
		src = msg_val_str(inputs->u.a.items[0], "text");
	buf_printf(&t, "sum %.20s", src);
	while (t.len < (size_t)line)
		buf_addc(&t, 'x');
	buf_truncate(&t, (size_t)line);
	for (size_t k = 0; k < t.len; k++)
		if (t.data[k] == '\n' || t.data[k] == '\r')
			t.data[k] = ' ';
	fake_act_add(
	    now + (uint64_t)start, job, wait, fake_chunk(job, "start", ""));
	m = msg_new(MSG_RESULT);
	msg_set_int(m, "job", (int64_t)job);
	msg_set_strn(m, "text", t.data, t.len);
	{
		struct msg_val *u = msg_set_map(m, "usage");

		msg_val_set_int(u, "input", 1000);
		msg_val_set_int(u, "output", 80);
		msg_val_set_int(u, "cache_read", 900);
		msg_val_set_int(u, "cache_write", 100);
	}
	fake_act_add(now + (uint64_t)(start + result), job, NULL, m);
	buf_free(&t);
}

/* fake_main - this program as a model worker (see the top comment). */
static int
fake_main(const char *endpoint, const char *provider, int argc, char **argv)
{
	char path[PATH_MAX + 32], line[9000];
	const char *home = strstr(endpoint, "ipc://");
	json_t *script, *calls;
	json_error_t jerr;
	struct zsock_poll it;
	struct msg *m, *in;
	uint64_t now, last_sent = 0, job;
	void *sock = NULL;
	size_t k;

	if (home == NULL)
		return 1;
	home += 6;
	snprintf(fake_home, sizeof(fake_home), "%.*s",
	    (int)(strstr(home, "/run/") - home), home);
	snprintf(path, sizeof(path), "%s/fake.json", fake_home);
	script = json_load_file(path, 0, &jerr);
	if (script == NULL)
		script = json_object();
	calls = json_object_get(script, "calls");
	if ((sock = tsd_worker_dealer(endpoint, argc, argv)) == NULL)
		return 1;
	m = msg_new(MSG_READY);
	msg_set_str(m, "role", "model");
	msg_set_str(m, "provider", provider);
	msg_set_int(m, "pid", getpid());
	msg_set_int(m, "jobs",
	    json_object_get(script, "jobs")
		? json_integer_value(json_object_get(script, "jobs"))
		: 4);
	msg_set_int(m, "version", MSG_VERSION);
	(void)msg_send(sock, m, NULL);
	msg_destroy(&m);
	for (;;) {
		memset(&it, 0, sizeof(it));
		it.sock = sock;
		it.events = ZSOCK_IN;
		(void)zsock_poll(&it, 1, 20);
		now = tsd_now_ms();
		while (msg_recv(sock, &in, NULL) == 0) {
			enum msg_type t = msg_type(in);

			if (t == MSG_SHUTDOWN) {
				msg_destroy(&in);
				return 0;
			}
			if (t == MSG_SECRET) {
				const void *key;
				size_t klen;
				const char *pv = "";

				(void)msg_get_str(in, "provider", &pv, NULL);
				if (msg_get_bin(in, "key", &key, &klen) == 0) {
					snprintf(line, sizeof(line), "%s %.*s",
					    pv, (int)klen, (const char *)key);
					fake_append("secrets", line);
				}
			} else if (t == MSG_CANCEL &&
			    msg_get_uint(in, "job", &job) == 0) {
				snprintf(line, sizeof(line), "%llu",
				    (unsigned long long)job);
				fake_append("cancels", line);
				for (k = 0; k < fake_nacts; k++)
					if (fake_acts[k].job == job)
						fake_acts[k].at = UINT64_MAX;
			} else if (t == MSG_JOB &&
			    msg_get_uint(in, "job", &job) == 0) {
				const char *kind = "";

				fake_record(in);
				(void)msg_get_str(in, "kind", &kind, NULL);
				if (strcmp(kind, "call") == 0) {
					json_t *c = json_array_get(
					    calls, fake_next_call());

					if (c != NULL)
						fake_call(job, c, now);
				} else {
					fake_compact(job, in,
					    json_object_get(script, "compact"),
					    now);
				}
			}
			msg_destroy(&in);
		}
		/* Due acts go in the order they were made; a job's later
		 * acts wait for its earlier ones. */
		{
			uint64_t blocked[64];
			size_t nb = 0, j;

			for (k = 0; k < fake_nacts;) {
				struct fake_act *a = &fake_acts[k];
				int held = 0;

				for (j = 0; j < nb; j++)
					held |= blocked[j] == a->job;
				if (held || a->at > now ||
				    (a->wait[0] &&
					access(a->wait, F_OK) != 0)) {
					if (!held && nb < 64)
						blocked[nb++] = a->job;
					k++;
					continue;
				}
				if (a->die)
					_exit(9);
				(void)msg_send(sock, a->m, NULL);
				msg_destroy(&a->m);
				memmove(a, a + 1,
				    (fake_nacts - k - 1) * sizeof(*a));
				fake_nacts--;
				last_sent = now;
			}
		}
		if (now - last_sent >= 300) {
			m = msg_new(MSG_HEARTBEAT);
			(void)msg_send(sock, m, NULL);
			msg_destroy(&m);
			last_sent = now;
		}
	}
}

/* ---- The tests' side ---- */

/* The key of the fake provider: it must travel only as SECRET. */
#define FAKE_KEY "sk-fake-SECRET-0123456789"

/* need_offline - skip when the offline model worker is not built. */
static void
need_offline(void)
{
	if (access(tsd_bin("shiro-model-worker"), X_OK) != 0)
		harness_skip("build/shiro-model-worker is not built");
}

/*
 * fake_setup - config.json with provider "fake" (anthropic's wire, a URL
 * nothing listens on) played by nfake fake workers, serving turns, and
 * compactions too when memory names it; script is HOME/fake.json.
 */
static pid_t
fake_setup(const char *home, const char *memory, int nfake, const char *script,
    const char *extra)
{
	char cfg[8192];
	pid_t pid;
	int st;

	tsd_write(home, "key", FAKE_KEY "\n");
	tsd_write(home, "fake.json", script);
	snprintf(cfg, sizeof(cfg),
	    "{\"providers\": {\"fake\": {\"type\": \"anthropic\", \"url\": "
	    "\"http://127.0.0.1:9\", \"keyFile\": \"%s/key\"}},"
	    " \"turns\": {\"provider\": \"fake\"},"
	    " \"memory\": %s,"
	    " \"workers\": [{\"role\": \"model\", \"provider\": \"fake\", "
	    "\"count\": %d, \"path\": \"%s\"}, {\"role\": \"model\", "
	    "\"provider\": \"offline\", \"count\": 1}],"
	    " \"heartbeat\": {\"intervalMs\": 300}%s}",
	    home, memory, nfake, tsd_bin("tests/test_turn"),
	    extra ? extra : "");
	tsd_write(home, "config.json", cfg);
	pid = tsd_start(home, NULL, &st);
	CHECKF(
	    pid > 0, "shirod did not start (%d); see %s/shirod.err", st, home);
	return pid;
}

/* attach - a client that said HELLO. */
static void *
attach(const char *home)
{
	void *sock = tsd_attach(home, "test_turn");

	CHECK(sock != NULL);
	return sock;
}

/* send_msg - SEND text (turn or not); the acknowledged id. */
static uint64_t
send_msg(void *sock, const char *text, int turn)
{
	static unsigned n;
	struct msg *m = msg_new(MSG_SEND), *r;
	char key[64];
	uint64_t id = 0;

	snprintf(key, sizeof(key), "k%d-%u", (int)getpid(), n++);
	msg_set_str(m, "text", text);
	msg_set_str(m, "kind", "user");
	msg_set_str(m, "key", key);
	msg_set_bool(m, "turn", turn != 0);
	r = tsd_call(sock, m, 5000, NULL);
	CHECKF(
	    r != NULL && msg_type(r) == MSG_ACK, "no ACK for \"%.40s\"", text);
	CHECK(msg_get_uint(r, "id", &id) == 0);
	msg_destroy(&r);
	msg_destroy(&m);
	return id;
}

/* What a client saw of a turn. */
struct seen {
	struct buf text, thinking, evs; /* deltas joined; event names */
	char code[32];
	char *done_text;
	int64_t usage[4];
	json_t *messages; /* done's data.messages */
	int error; /* an ERROR came instead */
	char errcode[32];
	char *errtext;
};

/* seen_free - release s. */
static void
seen_free(struct seen *s)
{
	buf_free(&s->text);
	buf_free(&s->thinking);
	buf_free(&s->evs);
	free(s->done_text);
	free(s->errtext);
	json_decref(s->messages);
	memset(s, 0, sizeof(*s));
}

/* wait_done - read sock until the turn answering message id ends (its
 * `done` event, or an ERROR), within timeout_ms. */
static int
wait_done(void *sock, uint64_t id, long timeout_ms, struct seen *s)
{
	uint64_t end = tsd_now_ms() + (uint64_t)timeout_ms, eid;
	const char *ev, *text;
	const struct msg_val *d, *u, *ms;
	struct msg *m;
	size_t k;
	int mine;

	memset(s, 0, sizeof(*s));
	while (tsd_now_ms() < end) {
		m = tsd_recv(sock, (long)(end - tsd_now_ms()));
		if (m == NULL)
			break;
		if (msg_type(m) == MSG_ERROR) {
			s->error = 1;
			(void)msg_get_str(m, "code", &text, NULL);
			snprintf(s->errcode, sizeof(s->errcode), "%s", text);
			(void)msg_get_str(m, "text", &text, NULL);
			s->errtext = xstrdup(text);
			msg_destroy(&m);
			return 0;
		}
		if (msg_type(m) != MSG_EVENT ||
		    msg_get_str(m, "ev", &ev, NULL) != 0) {
			msg_destroy(&m);
			continue;
		}
		buf_printf(&s->evs, "%s ", ev);
		text = "";
		(void)msg_get_str(m, "text", &text, NULL);
		if (strcmp(ev, "text") == 0)
			buf_adds(&s->text, text);
		else if (strcmp(ev, "thinking") == 0)
			buf_adds(&s->thinking, text);
		if (strcmp(ev, "done") != 0) {
			msg_destroy(&m);
			continue;
		}
		mine = msg_get_uint(m, "id", &eid) == 0 && eid == id;
		if (msg_get_map(m, "data", &d) == 0 &&
		    (ms = msg_val_get(d, "messages")) != NULL) {
			s->messages = json_array();
			for (k = 0; k < ms->u.a.n; k++) {
				json_array_append_new(s->messages,
				    json_integer(ms->u.a.items[k]->u.i));
				mine |= ms->u.a.items[k]->u.i == (int64_t)id;
			}
			if ((u = msg_val_get(d, "usage")) != NULL) {
				(void)msg_val_int(u, "input", &s->usage[0]);
				(void)msg_val_int(u, "output", &s->usage[1]);
				(void)msg_val_int(
				    u, "cache_read", &s->usage[2]);
				(void)msg_val_int(
				    u, "cache_write", &s->usage[3]);
			}
		}
		if (!mine) {
			json_decref(s->messages);
			s->messages = NULL;
			msg_destroy(&m);
			continue;
		}
		(void)msg_get_str(m, "code", &ev, NULL);
		snprintf(s->code, sizeof(s->code), "%s", ev);
		s->done_text = xstrdup(text);
		msg_destroy(&m);
		return 0;
	}
	return -1;
}

/* read_all - a file's bytes (malloc'd), or NULL. */
static char *
read_all(const char *path)
{
	struct buf b = BUF_INIT;
	char chunk[4096];
	size_t n;
	FILE *f = fopen(path, "r");

	if (f == NULL)
		return NULL;
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		buf_add(&b, chunk, n);
	fclose(f);
	if (b.data == NULL)
		buf_adds(&b, "");
	return buf_steal(&b, NULL);
}

/* jobs - the recorded JOBs (an array of their bodies), kind filtered
 * (NULL: every one). */
static json_t *
jobs(const char *home, const char *kind)
{
	char path[PATH_MAX + 16], *text, *line, *save = NULL;
	json_t *arr = json_array(), *j, *b;

	snprintf(path, sizeof(path), "%s/jobs.jsonl", home);
	text = read_all(path);
	if (text == NULL)
		return arr;
	for (line = strtok_r(text, "\n", &save); line != NULL;
	     line = strtok_r(NULL, "\n", &save)) {
		j = json_loads(line, 0, NULL);
		if (j == NULL)
			continue;
		b = json_object_get(j, "job");
		json_object_set(b, "_t", json_object_get(j, "t"));
		json_object_set(b, "_pid", json_object_get(j, "pid"));
		if (kind == NULL ||
		    strcmp(json_string_value(json_object_get(b, "kind")),
			kind) == 0)
			json_array_append(arr, b);
		json_decref(j);
	}
	free(text);
	return arr;
}

/* wait_jobs - wait until n JOBs of kind are recorded; the array. */
static json_t *
wait_jobs(const char *home, const char *kind, size_t n, long timeout_ms)
{
	uint64_t end = tsd_now_ms() + (uint64_t)timeout_ms;
	json_t *a;

	for (;;) {
		a = jobs(home, kind);
		if (json_array_size(a) >= n || tsd_now_ms() >= end)
			return a;
		json_decref(a);
		usleep(20000);
	}
}

/* request_of - a JOB's data.request. */
static json_t *
request_of(json_t *job)
{
	return json_object_get(json_object_get(job, "data"), "request");
}

/* content_of - message k's content of a JOB's request. */
static json_t *
content_of(json_t *job, size_t k)
{
	return json_object_get(
	    json_array_get(json_object_get(request_of(job), "messages"), k),
	    "content");
}

/* part_text - the text of part k of content. */
static const char *
part_text(json_t *content, size_t k)
{
	return json_string_value(
	    json_object_get(json_array_get(content, k), "text"));
}

/* part_marked - part k of content has a cache mark. */
static int
part_marked(json_t *content, size_t k)
{
	return json_is_true(
	    json_object_get(json_array_get(content, k), "cache"));
}

/* memory_lines - "<chat>\n" and the view's first n lines as the model
 * reads them, from MEMORY. */
static char *
memory_lines(void *sock, size_t n)
{
	struct msg *m = msg_new(MSG_MEMORY), *r;
	const struct msg_val *doc, *lines;
	struct buf b = BUF_INIT;
	int64_t id, cnt;
	size_t k;

	r = tsd_call(sock, m, 5000, NULL);
	msg_destroy(&m);
	CHECK(r != NULL && msg_get_map(r, "doc", &doc) == 0);
	lines = msg_val_get(doc, "lines");
	buf_adds(&b, "<chat>\n");
	for (k = 0; k < n && k < lines->u.a.n; k++) {
		(void)msg_val_int(lines->u.a.items[k], "id", &id);
		(void)msg_val_int(lines->u.a.items[k], "n", &cnt);
		buf_printf(&b, "%lld+%lld|%s\n", (long long)id, (long long)cnt,
		    msg_val_str(lines->u.a.items[k], "text"));
	}
	msg_destroy(&r);
	return buf_steal(&b, NULL);
}

/* log_has - whether the chat log (LOG of the last 50) holds a message of
 * kind whose text contains needle. */
static int
log_has(void *sock, const char *kind, const char *needle)
{
	struct msg *m = msg_new(MSG_LOG), *r;
	const struct msg_val *doc, *log;
	size_t k;
	int found = 0;

	msg_set_int(m, "tail", 50);
	r = tsd_call(sock, m, 5000, NULL);
	msg_destroy(&m);
	if (r == NULL || msg_get_map(r, "doc", &doc) != 0 ||
	    (log = msg_val_get(doc, "log")) == NULL) {
		msg_destroy(&r);
		return 0;
	}
	for (k = 0; k < log->u.a.n; k++)
		if (strcmp(msg_val_str(log->u.a.items[k], "kind"), kind) == 0 &&
		    strstr(msg_val_str(log->u.a.items[k], "text"), needle))
			found = 1;
	msg_destroy(&r);
	return found;
}

/* file_grep - whether any file under dir (one level of subdirectories)
 * contains needle. */
static int
file_grep(const char *dir, const char *needle)
{
	char cmd[PATH_MAX * 2];

	snprintf(cmd, sizeof(cmd), "grep -rqF -- '%s' '%s'", needle, dir);
	return system(cmd) == 0;
}

/* status_usage - key of the STATUS usage row of provider and model; -1
 * when there is no such row. */
static int64_t
status_usage(
    void *sock, const char *provider, const char *model, const char *key)
{
	struct msg *m = msg_new(MSG_STATUS), *r;
	const struct msg_val *doc, *rows;
	int64_t v = -1;
	size_t k;

	r = tsd_call(sock, m, 5000, NULL);
	msg_destroy(&m);
	if (r == NULL || msg_get_map(r, "doc", &doc) != 0 ||
	    (rows = msg_val_get(doc, "usage")) == NULL) {
		msg_destroy(&r);
		return -1;
	}
	for (k = 0; k < rows->u.a.n; k++) {
		const struct msg_val *row = rows->u.a.items[k];

		if (strcmp(msg_val_str(row, "provider"), provider) == 0 &&
		    strcmp(msg_val_str(row, "model"), model) == 0 &&
		    msg_val_int(row, key, &v) != 0)
			v = -1;
		if (strcmp(msg_val_str(row, "provider"), provider) == 0 &&
		    strcmp(msg_val_str(row, "model"), model) == 0)
			break;
	}
	msg_destroy(&r);
	return v;
}

/* joined - the texts of content's parts first .. last-1, joined. */
static char *
joined(json_t *content, size_t first, size_t last)
{
	struct buf b = BUF_INIT;
	size_t k;

	for (k = first; k < last; k++)
		buf_adds(&b, part_text(content, k));
	if (b.data == NULL)
		buf_adds(&b, "");
	return buf_steal(&b, NULL);
}

/* same_key - key of two requests is the same JSON, byte for byte. */
static void
same_key(json_t *r1, json_t *r2, const char *key)
{
	char *d1 = json_dumps(json_object_get(r1, key), JSON_COMPACT);
	char *d2 = json_dumps(json_object_get(r2, key), JSON_COMPACT);

	CHECK(d1 != NULL && strlen(d1) > 2);
	CHECK_EQ_STR(d1, d2);
	free(d1);
	free(d2);
}

/* ends_with - s ends with tail. */
static int
ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), t = strlen(tail);

	return n >= t && strcmp(s + n - t, tail) == 0;
}

/* A turn streams its thinking and text to every attached client, ends
 * with `done` (the whole reply and the usage), logs the reply as shiro
 * and never the thinking; its request has the empty view and the Turn:
 * line before the message. */
static void
turn_streams_to_every_client(void)
{
	const char *home = harness_tmpdir();
	struct seen sa, sb;
	json_t *js, *c;
	char chat[PATH_MAX + 8];
	const char *tail;
	void *a, *b;
	uint64_t id;
	pid_t pid;

	need_offline();
	pid = fake_setup(home, "{\"provider\": \"offline\"}", 1,
	    "{\"calls\": [{\"chunks\": [[\"start\", \"\"], [\"thinking\", "
	    "\"pondering the view\"], [\"text\", \"Hi\"], [\"text\", \" "
	    "there.\"]], \"text\": \"Hi there.\", \"usage\": {\"input\": "
	    "100, \"output\": 5, \"cache_read\": 50, \"cache_write\": 10}}]}",
	    NULL);
	a = attach(home);
	b = attach(home);
	id = send_msg(a, "hello there", 1);
	CHECK_EQ_INT(id, 0);
	CHECK_EQ_INT(wait_done(a, id, 10000, &sa), 0);
	CHECK_EQ_INT(wait_done(b, id, 10000, &sb), 0);
	CHECK_EQ_STR(sa.code, "ok");
	CHECK_EQ_STR(sa.text.data, "Hi there.");
	CHECK_EQ_STR(sa.thinking.data, "pondering the view");
	CHECK_EQ_STR(sa.done_text, "Hi there.");
	CHECK(sa.usage[0] == 100 && sa.usage[1] == 5 && sa.usage[2] == 50 &&
	    sa.usage[3] == 10);
	CHECK_EQ_STR(sb.code, "ok");
	CHECK_EQ_STR(sb.text.data, "Hi there.");
	CHECK_EQ_STR(sb.thinking.data, "pondering the view");
	CHECK(strstr(sa.evs.data, "turn ") != NULL);
	CHECK(log_has(a, "user", "hello there"));
	CHECK(log_has(a, "shiro", "Hi there."));
	snprintf(chat, sizeof(chat), "%s/chat", home);
	CHECK(!file_grep(chat, "pondering"));
	CHECK_EQ_INT(
	    status_usage(a, "fake", "claude-sonnet-4-5", "cache_read"), 50);
	CHECK_EQ_INT(status_usage(a, "fake", "claude-sonnet-4-5", "calls"), 1);
	/* The request: the empty view, then the message after Turn:. */
	js = jobs(home, "call");
	CHECK_EQ_INT(json_array_size(js), 1);
	CHECK_EQ_STR(json_string_value(json_object_get(
			 request_of(json_array_get(js, 0)), "model")),
	    "claude-sonnet-4-5");
	c = content_of(json_array_get(js, 0), 0);
	CHECK_EQ_INT(json_array_size(c), 2);
	CHECK_EQ_STR(part_text(c, 0), "<chat>\n");
	tail = part_text(c, 1);
	/* The per-turn state between the view and the Turn: line: this
	 * client sent no working directory. */
	CHECK(strncmp(tail, "</chat>\n\nNo working directory: ",
		  strlen("</chat>\n\nNo working directory: ")) == 0);
	CHECK(strstr(tail, ".\n\nTurn: ") != NULL);
	CHECK(ends_with(tail, "\n\nhello there"));
	CHECK(part_marked(c, 1) && !part_marked(c, 0));
	json_decref(js);
	seen_free(&sa);
	seen_free(&sb);
	tsd_close(&a);
	tsd_close(&b);
	tsd_stop(pid);
}

/* A turn's request holds the view as it was before its message, in
 * blocks of 4 lines with the last whole block marked; the next turn's
 * view extends it byte for byte; system, tools and cache key stay. */
static void
turn_view_is_pinned_in_blocks(void)
{
	const char *home = harness_tmpdir();
	struct seen s;
	json_t *js, *c1, *c2, *r1, *r2;
	char text[64], *mem, *v1, *v2;
	uint64_t id;
	void *a;
	pid_t pid;
	int k;

	need_offline();
	pid = fake_setup(home, "{\"provider\": \"offline\"}", 1,
	    "{\"calls\": [{\"text\": \"ok one\"}, {\"text\": \"ok two\"}]}",
	    NULL);
	a = attach(home);
	for (k = 0; k < 10; k++) {
		snprintf(text, sizeof(text), "note %d\nwith a second line", k);
		CHECK_EQ_INT(send_msg(a, text, 0), k);
	}
	id = send_msg(a, "what now?", 1);
	CHECK_EQ_INT(wait_done(a, id, 10000, &s), 0);
	CHECK_EQ_STR(s.code, "ok");
	seen_free(&s);
	mem = memory_lines(a, 10);
	js = jobs(home, "call");
	c1 = content_of(json_array_get(js, 0), 0);
	/* [<chat> 0-3] [4-7, marked] [8-9] [tail, marked] */
	CHECK_EQ_INT(json_array_size(c1), 4);
	v1 = joined(c1, 0, 3);
	CHECK_EQ_STR(v1, mem);
	CHECK(strstr(part_text(c1, 0), "0+1|note 0 with a second line\n") !=
	    NULL);
	CHECK(!part_marked(c1, 0) && part_marked(c1, 1) && !part_marked(c1, 2));
	CHECK(strncmp(part_text(c1, 3), "</chat>\n", 8) == 0);
	json_decref(js);
	free(mem);
	for (k = 0; k < 3; k++)
		(void)send_msg(a, "more", 0);
	id = send_msg(a, "and now?", 1);
	CHECK_EQ_INT(wait_done(a, id, 10000, &s), 0);
	seen_free(&s);
	js = jobs(home, "call");
	CHECK_EQ_INT(json_array_size(js), 2);
	c1 = content_of(json_array_get(js, 0), 0);
	c2 = content_of(json_array_get(js, 1), 0);
	v2 = joined(c2, 0, json_array_size(c2) - 1);
	/* 10 + the message + its reply + 3 = 15 lines: a prefix grown. */
	CHECK(strlen(v2) > strlen(v1) && strncmp(v2, v1, strlen(v1)) == 0);
	CHECK(strstr(v2, "10+1|what now?\n11+1|ok one\n") != NULL);
	CHECK_EQ_STR(part_text(c1, 0), part_text(c2, 0));
	CHECK_EQ_STR(part_text(c1, 1), part_text(c2, 1));
	CHECK(part_marked(c2, 2) && !part_marked(c2, 1));
	r1 = request_of(json_array_get(js, 0));
	r2 = request_of(json_array_get(js, 1));
	same_key(r1, r2, "system");
	same_key(r1, r2, "tools");
	CHECK_EQ_STR(json_string_value(json_object_get(r1, "cache_key")),
	    json_string_value(json_object_get(r2, "cache_key")));
	CHECK(json_is_true(json_object_get(r1, "cache_tools")));
	free(v1);
	free(v2);
	json_decref(js);
	tsd_close(&a);
	tsd_stop(pid);
}

/* A compaction sends the turns' very system prompt and tools, its
 * message whole in the task with the 512-dash ruler, and 5 tries; an
 * over-long line is cut to 512 bytes again; no key and no placeholder
 * is in any JOB, and the key came as SECRET. */
static void
compactions_share_the_prompt(void)
{
	const char *home = harness_tmpdir();
	struct seen s;
	json_t *cj, *tj, *c, *rc, *rt;
	char *text, *d1, path[PATH_MAX + 16], ruler[520], *sec;
	const char *task;
	uint64_t id;
	void *a;
	pid_t pid;
	size_t k;

	pid = fake_setup(home, "{\"provider\": \"fake\"}", 1,
	    "{\"calls\": [{\"text\": \"fine\"}], \"compact\": {\"line\": 700}}",
	    NULL);
	a = attach(home);
	text = xmalloc(2001);
	for (k = 0; k < 2000; k++)
		text[k] = k % 50 == 49 ? '\n' : (char)('a' + k % 26);
	text[2000] = '\0';
	CHECK_EQ_INT(send_msg(a, text, 0), 0);
	CHECK(tsd_settle(a, 10000, NULL) == 0);
	id = send_msg(a, "and?", 1);
	CHECK_EQ_INT(wait_done(a, id, 10000, &s), 0);
	seen_free(&s);
	cj = jobs(home, "compact");
	tj = jobs(home, "call");
	CHECK(json_array_size(cj) >= 1 && json_array_size(tj) == 1);
	CHECK_EQ_INT(
	    json_integer_value(json_object_get(
		json_object_get(json_array_get(cj, 0), "data"), "tries")),
	    5);
	rc = request_of(json_array_get(cj, 0));
	rt = request_of(json_array_get(tj, 0));
	CHECK_EQ_STR(json_string_value(json_object_get(rc, "model")),
	    "claude-haiku-4-5");
	same_key(rc, rt, "system");
	same_key(rc, rt, "tools");
	c = content_of(json_array_get(cj, 0), 0);
	CHECK_EQ_INT(json_array_size(c), 2);
	CHECK_EQ_STR(part_text(c, 0), "<chat>\n");
	task = part_text(c, 1);
	CHECK(strncmp(task, "</chat>\n\nCompaction: ", 21) == 0);
	CHECK(strstr(task, text) != NULL);
	memset(ruler, '-', 512);
	ruler[512] = '\n';
	ruler[513] = '\0';
	CHECK(ends_with(task, ruler));
	CHECK(part_marked(c, 1));
	/* The line was 700 bytes: cut to 512 by shirod. */
	d1 = memory_lines(a, 1);
	CHECKF(strlen(d1) == 7 + 4 + 512 + 1, "%zu", strlen(d1));
	free(d1);
	CHECK(status_usage(a, "fake", "claude-haiku-4-5", "calls") >= 1);
	snprintf(path, sizeof(path), "%s/jobs.jsonl", home);
	CHECK(!file_grep(path, FAKE_KEY));
	CHECK(!file_grep(path, "(not summarized yet: zoom it)"));
	snprintf(path, sizeof(path), "%s/secrets", home);
	sec = read_all(path);
	CHECK(sec != NULL && strstr(sec, "fake " FAKE_KEY) != NULL);
	free(sec);
	free(text);
	json_decref(cj);
	json_decref(tj);
	tsd_close(&a);
	tsd_stop(pid);
}

/* tool_result - the tool_result part answering id in content. */
static json_t *
tool_result(json_t *content, const char *id)
{
	size_t k;

	for (k = 0; k < json_array_size(content); k++) {
		json_t *p = json_array_get(content, k);

		if (strcmp(json_string_value(json_object_get(p, "type")),
			"tool_result") == 0 &&
		    strcmp(json_string_value(json_object_get(p, "id")), id) ==
			0)
			return p;
	}
	return NULL;
}

/* result_has - the result for id has needle, and is an error or not. */
static void
result_has(json_t *content, const char *id, const char *needle, int error)
{
	json_t *p = tool_result(content, id);
	const char *t;

	CHECKF(p != NULL, "no result for %s", id);
	t = json_string_value(json_object_get(p, "text"));
	CHECKF(t != NULL && strstr(t, needle) != NULL, "%s: \"%s\"", id,
	    t ? t : "");
	CHECKF(json_is_true(json_object_get(p, "error")) == error,
	    "%s: error %d", id, !error);
}

/* zoom and date answer from the store; each bad call gets a clear tool
 * error, and the next step carries the reply's parts and the results. */
static void
zoom_and_date_serve_the_model(void)
{
	const char *home = harness_tmpdir();
	struct seen s;
	json_t *js, *asst, *res;
	uint64_t id;
	void *a;
	pid_t pid;

	need_offline();
	pid = fake_setup(home, "{\"provider\": \"offline\"}", 1,
	    "{\"calls\": [{\"text\": \"Let me look.\", \"stop\": \"tool_use\", "
	    "\"content\": [{\"type\": \"text\", \"text\": \"Let me look.\"},"
	    " {\"type\": \"tool_use\", \"id\": \"t1\", \"name\": \"zoom\", "
	    "\"input\": \"{\\\"id\\\": 0, \\\"n\\\": 1}\"},"
	    " {\"type\": \"tool_use\", \"id\": \"t2\", \"name\": \"date\", "
	    "\"input\": \"{\\\"id\\\": 0}\"},"
	    " {\"type\": \"tool_use\", \"id\": \"t3\", \"name\": \"zoom\", "
	    "\"input\": \"{\\\"id\\\": 1, \\\"n\\\": 3}\"},"
	    " {\"type\": \"tool_use\", \"id\": \"t4\", \"name\": \"zoom\", "
	    "\"input\": \"{\\\"id\\\": \\\"x\\\", \\\"n\\\": 1}\"},"
	    " {\"type\": \"tool_use\", \"id\": \"t5\", \"name\": \"rm\", "
	    "\"input\": \"{}\"},"
	    " {\"type\": \"tool_use\", \"id\": \"t6\", \"name\": \"zoom\", "
	    "\"input\": \"{\\\"id\\\": 0, \\\"n\\\": 64}\"},"
	    " {\"type\": \"tool_use\", \"id\": \"t7\", \"name\": \"zoom\", "
	    "\"input\": \"not json\"},"
	    " {\"type\": \"tool_use\", \"id\": \"t8\", \"name\": \"zoom\", "
	    "\"input\": \"{\\\"id\\\": 0, \\\"n\\\": 2}\"},"
	    " {\"type\": \"tool_use\", \"id\": \"t9\", \"name\": \"date\", "
	    "\"input\": \"{\\\"id\\\": 99}\"}]},"
	    " {\"text\": \"Found it.\"}]}",
	    NULL);
	a = attach(home);
	CHECK_EQ_INT(send_msg(a, "first message with words", 0), 0);
	/* Message 0 has an image, and a planted link that is not one. */
	{
		char dir[PATH_MAX + 16], img[PATH_MAX + 32];

		snprintf(dir, sizeof(dir), "%s/chat/images", home);
		(void)mkdir(dir, 0700);
		snprintf(img, sizeof(img), "%s/0-0.png", dir);
		tsd_write(
		    dir, "0-0.png", "\x89PNG\r\n\x1a\nnot really a picture");
		snprintf(img, sizeof(img), "%s/0-1.png", dir);
		CHECK(symlink("/etc/passwd", img) == 0);
	}
	id = send_msg(a, "look back", 1);
	CHECK_EQ_INT(wait_done(a, id, 10000, &s), 0);
	CHECK_EQ_STR(s.code, "ok");
	CHECK_EQ_STR(s.done_text, "Let me look.\n\nFound it.");
	CHECK(strstr(s.evs.data, "tool_call ") != NULL);
	CHECK(strstr(s.evs.data, "tool_result ") != NULL);
	CHECK(strstr(s.evs.data, "tool_error ") != NULL);
	seen_free(&s);
	js = jobs(home, "call");
	CHECK_EQ_INT(json_array_size(js), 2);
	asst = json_array_get(
	    json_object_get(request_of(json_array_get(js, 1)), "messages"), 1);
	CHECK_EQ_STR(
	    json_string_value(json_object_get(asst, "role")), "assistant");
	CHECK_EQ_INT(json_array_size(json_object_get(asst, "content")), 10);
	res = content_of(json_array_get(js, 1), 2);
	/* The mark moved to the request's end: the last tool result. */
	CHECK(!part_marked(content_of(json_array_get(js, 1), 0),
	    json_array_size(content_of(json_array_get(js, 1), 0)) - 1));
	CHECK(part_marked(res, json_array_size(res) - 1));
	CHECK(part_marked(content_of(json_array_get(js, 0), 0),
	    json_array_size(content_of(json_array_get(js, 0), 0)) - 1));
	result_has(res, "t1", "message 0, kind user", 0);
	result_has(res, "t1", "first message with words", 0);
	result_has(res, "t1", "(1 image of this message follows)", 0);
	result_has(res, "t1", "image 2 of this message cannot be shown", 0);
	{
		json_t *img = NULL;
		size_t q;

		for (q = 0; q < json_array_size(res); q++)
			if (strcmp(json_string_value(json_object_get(
				       json_array_get(res, q), "type")),
				"image") == 0)
				img = json_array_get(res, q);
		CHECK(img != NULL);
		CHECK_EQ_STR(json_string_value(json_object_get(img, "media")),
		    "image/png");
		CHECK_EQ_INT(json_integer_value(json_object_get(
				 json_object_get(img, "data"), "bin")),
		    28);
	}
	result_has(res, "t2", "message 0: ", 0);
	result_has(res, "t3", "power of 2", 1);
	result_has(res, "t4", "whole numbers", 1);
	result_has(res, "t5", "no tool rm", 1);
	result_has(res, "t6", "the chat has messages 0 to", 1);
	result_has(res, "t7", "not a JSON object", 1);
	result_has(
	    res, "t8", "0+1|first message with words\n1+1|look back\n", 0);
	result_has(res, "t9", "the chat has messages 0 to", 1);
	/* Each call as a tool line, each result as an echo line that
	 * names the call's message. */
	CHECK(log_has(a, "tool", "zoom {\"id\": 0, \"n\": 1}"));
	CHECK(log_has(a, "echo", " zoom: message 0, kind user"));
	CHECK(log_has(a, "echo", " zoom: zoom(1, 3): n must be a power of 2"));
	CHECK(log_has(a, "echo", " rm: {\"ok\":false,\"error\":\"there is no"));
	CHECK(log_has(a, "shiro", "Let me look."));
	CHECK(log_has(a, "shiro", "Found it."));
	json_decref(js);
	tsd_close(&a);
	tsd_stop(pid);
}

/* flat_start - the first max bytes of text with newlines as spaces. */
static char *
flat_start(const char *text, size_t max)
{
	char *s = xstrdup(text);
	size_t k;

	for (k = 0; s[k]; k++)
		if (s[k] == '\n')
			s[k] = ' ';
	if (strlen(s) > max)
		s[max] = '\0';
	return s;
}

/* A turn that waits past memory.settleTimeoutMs shows an unsummarized
 * line as its message's start cut to 512 bytes, never the placeholder;
 * one whose summary comes in time waits for it. */
static void
settle_then_cut_lines(void)
{
	const char *home = harness_tmpdir();
	char *text, *start, want[600], path[PATH_MAX + 16];
	struct seen s;
	json_t *js, *cj;
	uint64_t id, t0;
	void *a;
	pid_t pid;
	size_t k;

	pid = fake_setup(home,
	    "{\"provider\": \"fake\", \"settleTimeoutMs\": 1500}", 1,
	    "{\"calls\": [{\"text\": \"late\"}], \"compact\": {\"hold\": "
	    "true}}",
	    NULL);
	a = attach(home);
	text = xmalloc(3001);
	for (k = 0; k < 3000; k++)
		text[k] = k % 40 == 39 ? '\n' : (char)('a' + k % 26);
	text[3000] = '\0';
	CHECK_EQ_INT(send_msg(a, text, 0), 0);
	t0 = tsd_now_ms();
	id = send_msg(a, "summarize my last message", 1);
	CHECK_EQ_INT(wait_done(a, id, 10000, &s), 0);
	CHECK(tsd_now_ms() - t0 >= 1400);
	CHECK_EQ_STR(s.code, "ok");
	CHECK(strstr(s.evs.data, "notice") != NULL);
	seen_free(&s);
	js = jobs(home, "call");
	start = flat_start(text, 512);
	snprintf(want, sizeof(want), "<chat>\n0+1|%s\n", start);
	CHECK_EQ_STR(part_text(content_of(json_array_get(js, 0), 0), 0), want);
	snprintf(path, sizeof(path), "%s/jobs.jsonl", home);
	CHECK(!file_grep(path, "(not summarized yet: zoom it)"));
	free(start);
	json_decref(js);
	tsd_close(&a);
	tsd_stop(pid);

	/* Now with a summary that comes after 400 ms: the turn waits. */
	snprintf(path, sizeof(path), "%s/again", home);
	CHECK(mkdir(path, 0700) == 0);
	home = path;
	pid = fake_setup(home, "{\"provider\": \"fake\"}", 1,
	    "{\"calls\": [{\"text\": \"in time\"}], \"compact\": {\"line\": "
	    "200, \"start_ms\": 300, \"result_ms\": 100}}",
	    NULL);
	a = attach(home);
	CHECK_EQ_INT(send_msg(a, text, 0), 0);
	id = send_msg(a, "and now?", 1);
	CHECK_EQ_INT(wait_done(a, id, 10000, &s), 0);
	CHECK_EQ_STR(s.code, "ok");
	seen_free(&s);
	js = jobs(home, "call");
	cj = jobs(home, "compact");
	CHECK(json_array_size(cj) >= 1);
	CHECK(
	    json_integer_value(json_object_get(json_array_get(js, 0), "_t")) >=
	    json_integer_value(json_object_get(json_array_get(cj, 0), "_t")) +
		350);
	CHECK(strncmp(part_text(content_of(json_array_get(js, 0), 0), 0),
		  "<chat>\n0+1|sum ", 15) == 0);
	json_decref(js);
	json_decref(cj);
	free(text);
	tsd_close(&a);
	tsd_stop(pid);
}

/* touch - create HOME/name. */
static void
touch(const char *home, const char *name)
{
	tsd_write(home, name, "");
}

/* A message with turn set that arrives while a turn runs is logged and
 * handed to it between steps; both senders get the one `done`. */
static void
a_message_during_a_turn_is_handed_in(void)
{
	const char *home = harness_tmpdir();
	struct seen sa, sb;
	json_t *js, *last;
	char want[64];
	uint64_t id1, id2;
	void *a, *b;
	pid_t pid;
	size_t n;

	need_offline();
	pid = fake_setup(home, "{\"provider\": \"offline\"}", 1,
	    "{\"calls\": [{\"wait\": \"go\", \"chunks\": [[\"start\", \"\"], "
	    "[\"text\", \"first\"]], \"text\": \"first\"}, {\"text\": "
	    "\"second\"}]}",
	    NULL);
	a = attach(home);
	b = attach(home);
	id1 = send_msg(a, "do X", 1);
	js = wait_jobs(home, "call", 1, 5000);
	CHECK_EQ_INT(json_array_size(js), 1);
	json_decref(js);
	id2 = send_msg(b, "also Y", 1);
	CHECK(log_has(b, "user", "also Y"));
	touch(home, "go");
	CHECK_EQ_INT(wait_done(a, id1, 10000, &sa), 0);
	CHECK_EQ_INT(wait_done(b, id2, 10000, &sb), 0);
	CHECK_EQ_STR(sa.code, "ok");
	CHECK_EQ_STR(sa.done_text, "first\n\nsecond");
	CHECK_EQ_STR(sb.done_text, "first\n\nsecond");
	CHECK_EQ_INT(json_array_size(sa.messages), 2);
	CHECK_EQ_INT(json_integer_value(json_array_get(sa.messages, 1)), id2);
	js = jobs(home, "call");
	CHECK_EQ_INT(json_array_size(js), 2);
	n = json_array_size(
	    json_object_get(request_of(json_array_get(js, 1)), "messages"));
	CHECK_EQ_INT(n, 3);
	last = content_of(json_array_get(js, 1), 2);
	snprintf(want, sizeof(want), "(%llu)", (unsigned long long)id2);
	CHECK(strstr(part_text(last, 0), "also Y") != NULL);
	CHECK(strstr(part_text(last, 0), want) != NULL);
	json_decref(js);
	seen_free(&sa);
	seen_free(&sb);
	tsd_close(&a);
	tsd_close(&b);
	tsd_stop(pid);
}

/* A failed call ends the turn with a code a client can act on; a worker
 * that dies before anything streamed gets its call to another worker. */
static void
failures_end_the_turn(void)
{
	const char *home = harness_tmpdir();
	struct seen s;
	uint64_t id;
	void *a;
	pid_t pid;

	need_offline();
	pid = fake_setup(home, "{\"provider\": \"offline\"}", 2,
	    "{\"calls\": [{\"fail\": [\"unreachable\", \"connection refused "
	    "by 127.0.0.1:9\"]}, {\"fail\": [\"http\", \"429 from "
	    "anthropic: rate limited (request req_1)\"]}, {\"die\": true}, "
	    "{\"text\": \"recovered\"}]}",
	    ", \"restart\": {\"minMs\": 50, \"maxMs\": 200}");
	a = attach(home);
	id = send_msg(a, "one", 1);
	CHECK_EQ_INT(wait_done(a, id, 10000, &s), 0);
	CHECK_EQ_STR(s.code, "unreachable");
	CHECK(strstr(s.done_text, "connection refused") != NULL);
	seen_free(&s);
	id = send_msg(a, "two", 1);
	CHECK_EQ_INT(wait_done(a, id, 10000, &s), 0);
	CHECK_EQ_STR(s.code, "model");
	CHECK(strstr(s.done_text, "429") != NULL);
	seen_free(&s);
	id = send_msg(a, "three", 1);
	CHECK_EQ_INT(wait_done(a, id, 15000, &s), 0);
	CHECK_EQ_STR(s.code, "ok");
	CHECK_EQ_STR(s.done_text, "recovered");
	seen_free(&s);
	CHECK(!log_has(a, "shiro", "connection refused"));
	tsd_close(&a);
	tsd_stop(pid);
}

/* gate_pair - two compactions of a cold cache, marking the same prefix
 * (the system and tools): the ms between their JOBs at the workers. */
static json_int_t
gate_pair(const char *home, const char *memory, int64_t *waits)
{
	json_t *cj;
	char *text;
	void *a;
	pid_t pid;
	size_t k;
	json_int_t t0, t1;

	pid = fake_setup(home, memory, 2,
	    "{\"compact\": {\"line\": 100, \"start_ms\": 600, "
	    "\"result_ms\": 100}}",
	    NULL);
	a = attach(home);
	text = xmalloc(2001);
	for (k = 0; k < 2000; k++)
		text[k] = (char)('a' + k % 26);
	text[2000] = '\0';
	CHECK_EQ_INT(send_msg(a, text, 0), 0);
	text[0] = 'Z';
	CHECK_EQ_INT(send_msg(a, text, 0), 1);
	cj = wait_jobs(home, "compact", 2, 5000);
	CHECK_EQ_INT(json_array_size(cj), 2);
	t0 = json_integer_value(json_object_get(json_array_get(cj, 0), "_t"));
	t1 = json_integer_value(json_object_get(json_array_get(cj, 1), "_t"));
	*waits = tsd_status_int(a, "gate.waits");
	CHECK(tsd_settle(a, 10000, NULL) == 0);
	json_decref(cj);
	free(text);
	tsd_close(&a);
	tsd_stop(pid);
	return t1 - t0;
}

/* Two compactions marking the prefix another is writing: the second is
 * sent only once the first's response started (memory.gateBytes 0:
 * always).  With gateBytes above the prefix (the system prompt and tools,
 * about 10 KB), it is not worth a wait: each writes it. */
static void
prefix_gate_holds_the_second_call(void)
{
	const char *home = harness_tmpdir();
	char other[PATH_MAX + 16];
	int64_t waits;
	json_int_t d;

	d = gate_pair(
	    home, "{\"provider\": \"fake\", \"gateBytes\": 0}", &waits);
	CHECKF(d >= 550, "the second call came %lld ms after the first",
	    (long long)d);
	CHECK(waits >= 1);
	snprintf(other, sizeof(other), "%s/default", home);
	CHECK(mkdir(other, 0700) == 0);
	d = gate_pair(
	    other, "{\"provider\": \"fake\", \"gateBytes\": 65536}", &waits);
	CHECKF(d < 400, "the second call waited %lld ms", (long long)d);
	CHECK_EQ_INT(waits, 0);
}

/* pids_of - the distinct worker pids of the recorded compaction JOBs
 * for node (0, i), in order of arrival, into pids; their number. */
static size_t
pids_of(json_t *cj, uint64_t i, json_int_t *pids, size_t max)
{
	size_t k, n = 0;

	for (k = 0; k < json_array_size(cj) && n < max; k++) {
		json_t *j = json_array_get(cj, k);

		if (json_integer_value(json_object_get(j, "i")) !=
		    (json_int_t)i)
			continue;
		pids[n++] = json_integer_value(json_object_get(j, "_pid"));
	}
	return n;
}

/* One worker runs two compactions at once; when it dies, both go to the
 * worker that replaces it. */
static void
a_dead_worker_gives_back_every_job(void)
{
	const char *home = harness_tmpdir();
	json_int_t p0[4], p1[4];
	json_t *cj;
	char *text;
	void *a;
	pid_t pid;
	size_t k, n0, n1;

	pid = fake_setup(home, "{\"provider\": \"fake\"}", 1,
	    "{\"jobs\": 4, \"compact\": {\"line\": 100, \"result_ms\": "
	    "600000}}",
	    ", \"restart\": {\"minMs\": 50, \"maxMs\": 200}");
	a = attach(home);
	text = xmalloc(2001);
	for (k = 0; k < 2000; k++)
		text[k] = (char)('a' + k % 26);
	text[2000] = '\0';
	CHECK_EQ_INT(send_msg(a, text, 0), 0);
	text[0] = 'Z';
	CHECK_EQ_INT(send_msg(a, text, 0), 1);
	cj = wait_jobs(home, "compact", 2, 5000);
	CHECK_EQ_INT(json_array_size(cj), 2);
	CHECK(json_integer_value(
		  json_object_get(json_array_get(cj, 0), "_pid")) ==
	    json_integer_value(json_object_get(json_array_get(cj, 1), "_pid")));
	CHECK_EQ_INT(tsd_status_int(a, "in_flight"), 2);
	kill((pid_t)json_integer_value(
		 json_object_get(json_array_get(cj, 0), "_pid")),
	    SIGKILL);
	json_decref(cj);
	cj = wait_jobs(home, "compact", 4, 10000);
	CHECK_EQ_INT(json_array_size(cj), 4);
	n0 = pids_of(cj, 0, p0, 4);
	n1 = pids_of(cj, 1, p1, 4);
	CHECK(n0 == 2 && n1 == 2);
	CHECK(p0[0] != p0[1] && p1[0] != p1[1] && p0[1] == p1[1]);
	json_decref(cj);
	free(text);
	tsd_close(&a);
	tsd_stop(pid);
}

/* Usage and its estimated cost are in STATUS and survive a restart. */
static void
usage_and_cost_survive_a_restart(void)
{
	const char *home = harness_tmpdir();
	struct seen s;
	uint64_t id;
	void *a;
	pid_t pid;
	int st;

	need_offline();
	pid = fake_setup(home, "{\"provider\": \"offline\"}", 1,
	    "{\"calls\": [{\"text\": \"costly\", \"usage\": {\"input\": "
	    "1000000, \"output\": 1000}}]}",
	    NULL);
	a = attach(home);
	id = send_msg(a, "spend", 1);
	CHECK_EQ_INT(wait_done(a, id, 10000, &s), 0);
	seen_free(&s);
	/* $3 per million input, $15 per million output. */
	CHECK_EQ_INT(
	    status_usage(a, "fake", "claude-sonnet-4-5", "cost_uusd"), 3015000);
	tsd_close(&a);
	tsd_stop(pid);
	pid = tsd_start(home, NULL, &st);
	CHECK(pid > 0);
	a = attach(home);
	CHECK_EQ_INT(status_usage(a, "fake", "claude-sonnet-4-5", "calls"), 1);
	CHECK_EQ_INT(
	    status_usage(a, "fake", "claude-sonnet-4-5", "input"), 1000000);
	CHECK_EQ_INT(
	    status_usage(a, "fake", "claude-sonnet-4-5", "cost_uusd"), 3015000);
	tsd_close(&a);
	tsd_stop(pid);
}

/* file_has_bytes - whether path's bytes hold needle (NULs included). */
static int
file_has_bytes(const char *path, const char *needle)
{
	char buf[65536];
	ssize_t n;
	size_t k, nl = strlen(needle);
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf));
	close(fd);
	for (k = 0; n > 0 && k + nl <= (size_t)n; k++)
		if (memcmp(buf + k, needle, nl) == 0)
			return 1;
	return 0;
}

/* With no provider in config.json, ANTHROPIC_API_KEY in the environment
 * of shirod makes anthropic serve turns and compactions: its key goes to
 * the workers only as SECRET, never in a JOB, argv or environment. */
static void
environment_key_reaches_only_secret(void)
{
	static const char *const env[] = {
	    "ANTHROPIC_API_KEY=sk-env-XYZ-42", NULL};
	const char *home = harness_tmpdir();
	char cfg[2048], path[PATH_MAX + 32], *sec;
	struct msg *m, *r;
	const struct msg_val *doc, *ws;
	struct seen s;
	json_t *js;
	uint64_t id;
	void *a;
	pid_t pid;
	int64_t wpid = 0;
	int st;
	size_t k;

	tsd_write(home, "fake.json", "{\"calls\": [{\"text\": \"from env\"}]}");
	snprintf(cfg, sizeof(cfg),
	    "{\"workers\": [{\"role\": \"model\", \"provider\": \"anthropic\", "
	    "\"count\": 1, \"path\": \"%s\"}]}",
	    tsd_bin("tests/test_turn"));
	tsd_write(home, "config.json", cfg);
	tsd_env(env);
	pid = tsd_start(home, NULL, &st);
	tsd_env(NULL);
	CHECK(pid > 0);
	a = attach(home);
	id = send_msg(a, "hi", 1);
	CHECK_EQ_INT(wait_done(a, id, 10000, &s), 0);
	CHECK_EQ_STR(s.code, "ok");
	CHECK_EQ_STR(s.done_text, "from env");
	seen_free(&s);
	snprintf(path, sizeof(path), "%s/secrets", home);
	sec = read_all(path);
	CHECK(sec != NULL && strstr(sec, "anthropic sk-env-XYZ-42") != NULL);
	free(sec);
	js = jobs(home, NULL);
	CHECK(json_array_size(js) >= 1);
	json_decref(js);
	snprintf(path, sizeof(path), "%s/jobs.jsonl", home);
	CHECK(!file_grep(path, "sk-env"));
	m = msg_new(MSG_STATUS);
	r = tsd_call(a, m, 5000, NULL);
	CHECK(r != NULL && msg_get_map(r, "doc", &doc) == 0);
	ws = msg_val_get(doc, "workers");
	for (k = 0; ws != NULL && k < ws->u.a.n; k++)
		if (strcmp(msg_val_str(ws->u.a.items[k], "provider"),
			"anthropic") == 0)
			(void)msg_val_int(ws->u.a.items[k], "pid", &wpid);
	msg_destroy(&r);
	msg_destroy(&m);
	CHECK(wpid > 0);
	snprintf(path, sizeof(path), "/proc/%lld/cmdline", (long long)wpid);
	CHECK(!file_has_bytes(path, "sk-env"));
	CHECK(file_has_bytes(path, "--wire"));
	snprintf(path, sizeof(path), "/proc/%lld/environ", (long long)wpid);
	CHECK(!file_has_bytes(path, "sk-env"));
	CHECK_EQ_INT(
	    status_usage(a, "anthropic", "claude-sonnet-4-5", "calls"), 1);
	tsd_close(&a);
	tsd_stop(pid);
}

/* Without any provider, a turn answers no_model saying how to set one. */
static void
no_provider_says_how(void)
{
	const char *home = harness_tmpdir();
	struct seen s;
	uint64_t id;
	void *a;
	pid_t pid;
	int st;

	need_offline();
	pid = tsd_start(home, NULL, &st);
	CHECK(pid > 0);
	a = attach(home);
	id = send_msg(a, "anyone?", 1);
	CHECK_EQ_INT(wait_done(a, id, 10000, &s), 0);
	CHECK(s.error);
	CHECK_EQ_STR(s.errcode, "no_model");
	CHECK(strstr(s.errtext, "ANTHROPIC_API_KEY") != NULL);
	CHECK(strstr(s.errtext, "docs/providers.md") != NULL);
	seen_free(&s);
	tsd_close(&a);
	tsd_stop(pid);
}

static const struct harness_test tests[] = {
    HT(turn_streams_to_every_client),
    HT(turn_view_is_pinned_in_blocks),
    HT(compactions_share_the_prompt),
    HT(zoom_and_date_serve_the_model),
    HT(settle_then_cut_lines),
    HT(a_message_during_a_turn_is_handed_in),
    HT(failures_end_the_turn),
    HT(prefix_gate_holds_the_second_call),
    HT(a_dead_worker_gives_back_every_job),
    HT(usage_and_cost_survive_a_restart),
    HT(environment_key_reaches_only_secret),
    HT(no_provider_says_how),
};

int
main(int argc, char **argv)
{
	/* shirod runs this program as a model worker. */
	if (argc > 2 && strcmp(argv[1], "--endpoint") == 0)
		return fake_main(argv[2],
		    argc > 4 && strcmp(argv[3], "--provider") == 0 ? argv[4]
								   : "fake",
		    argc, argv);
	return harness_main(
	    tests, sizeof(tests) / sizeof(tests[0]), argc, argv);
}
