/*
 * test_shirod_util.c - a small client of shirod for tests and benches.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "proto/buf.h"
#include "proto/err.h"
#include "proto/xmalloc.h"
#include "proto/zsock.h"
#include "tests/test_shirod_util.h"

static uint64_t tsd_rid;
static const char *const *tsd_env_set;

/* tsd_env - variables (NAME=value) the next shirods get, after the
 * provider variables of the test's own environment are cleared. */
void
tsd_env(const char *const *env)
{
	tsd_env_set = env;
}

/* tsd_env_apply - in a child: no provider variable of the caller's, so a
 * developer's real key never reaches a test's shirod; then tsd_env's. */
static void
tsd_env_apply(void)
{
	static const char *const vars[] = {"ANTHROPIC_API_KEY",
	    "ANTHROPIC_BASE_URL", "OPENAI_API_KEY", "OPENAI_BASE_URL",
	    "SHIRO_PROVIDER", "SHIRO_BASE_URL", "SHIRO_API_KEY", "SHIRO_MODEL",
	    "OPENROUTER_API_KEY", "GROQ_API_KEY", "DEEPSEEK_API_KEY",
	    "XAI_API_KEY", NULL};
	const char *const *e;
	size_t k;

	for (k = 0; vars[k] != NULL; k++)
		unsetenv(vars[k]);
	for (e = tsd_env_set; e != NULL && *e != NULL; e++)
		putenv((char *)*e);
}

/* tsd_now_ms - a monotonic clock. */
uint64_t
tsd_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* tsd_bin - the path of a program built next to the tests. */
const char *
tsd_bin(const char *name)
{
	static char out[4][PATH_MAX];
	static int next;
	char self[PATH_MAX];
	ssize_t n;
	char *p, *d;

	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		n = 0;
	self[n] = '\0';
	/* build/tests/test_x -> build/name */
	d = dirname(dirname(self));
	p = out[next++ % 4];
	snprintf(p, PATH_MAX, "%s/%s", d, name);
	return p;
}

/* tsd_write - write text to dir/name. */
void
tsd_write(const char *dir, const char *name, const char *text)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (f == NULL)
		return;
	fputs(text, f);
	fclose(f);
}

/* tsd_connect - a DEALER connected to home's client socket. */
void *
tsd_connect(const char *home)
{
	char ep[PATH_MAX + 16];
	void *sock = NULL;

	snprintf(ep, sizeof(ep), "ipc://%s/run/shirod.sock", home);
	if (zsock_dealer(ep, NULL, &sock) != 0)
		return NULL;
	return sock;
}

/* tsd_worker_dealer - a DEALER with the credential of --cred-fd N. */
void *
tsd_worker_dealer(const char *endpoint, int argc, char **argv)
{
	struct zsock_opts o = {0};
	struct zsock_cred cred;
	void *sock = NULL;
	int k, fd = -1, rc;

	for (k = 1; k + 1 < argc; k++)
		if (strcmp(argv[k], "--cred-fd") == 0)
			fd = atoi(argv[k + 1]);
	if (fd < 0)
		return NULL;
	rc = zsock_cred_read(fd, &cred);
	close(fd);
	if (rc != 0)
		return NULL;
	o.curve = &cred;
	if (zsock_dealer(endpoint, &o, &sock) != 0)
		sock = NULL;
	explicit_bzero(&cred, sizeof(cred));
	return sock;
}

/* tsd_ready - a model worker's READY. */
struct msg *
tsd_ready(const char *provider, pid_t pid)
{
	struct msg *m = msg_new(MSG_READY);

	msg_set_str(m, "role", "model");
	msg_set_str(m, "provider", provider);
	msg_set_int(m, "pid", pid);
	msg_set_int(m, "jobs", 1);
	msg_set_int(m, "version", MSG_VERSION);
	return m;
}

/* tsd_ask_stop - send STOP; the answer's type. */
enum msg_type
tsd_ask_stop(void *sock)
{
	struct msg *m = msg_new(MSG_STOP), *r;
	enum msg_type t;

	r = tsd_call(sock, m, 5000, NULL);
	t = r != NULL ? msg_type(r) : MSG_NONE;
	msg_destroy(&r);
	msg_destroy(&m);
	return t;
}

/* tsd_hello - attach sock as a client. */
int
tsd_hello(void *sock)
{
	struct msg *m = msg_new(MSG_HELLO), *r;
	int rc;

	msg_set_str(m, "client", "test");
	msg_set_int(m, "version", MSG_VERSION);
	r = tsd_call(sock, m, 5000, NULL);
	rc = r != NULL && msg_type(r) == MSG_WELCOME ? 0 : -1;
	msg_destroy(&r);
	msg_destroy(&m);
	return rc;
}

/* tsd_attach - a client of home that said HELLO as name, or NULL. */
void *
tsd_attach(const char *home, const char *name)
{
	void *sock = tsd_connect(home);
	struct msg *m, *r;

	if (sock == NULL)
		return NULL;
	m = msg_new(MSG_HELLO);
	msg_set_str(m, "client", name);
	msg_set_int(m, "version", MSG_VERSION);
	r = tsd_call(sock, m, 5000, NULL);
	if (r == NULL || msg_type(r) != MSG_WELCOME)
		tsd_close(&sock);
	msg_destroy(&r);
	msg_destroy(&m);
	return sock;
}

/* tsd_worker_pids - the pids of the running workers, from STATUS. */
int
tsd_worker_pids(void *sock, pid_t *pids, int max)
{
	struct msg *m = msg_new(MSG_STATUS), *r;
	const struct msg_val *doc, *ws;
	int64_t pid;
	int n = 0;
	size_t k;

	r = tsd_call(sock, m, 5000, NULL);
	msg_destroy(&m);
	if (r == NULL || msg_get_map(r, "doc", &doc) != 0 ||
	    (ws = msg_val_get(doc, "workers")) == NULL) {
		msg_destroy(&r);
		return 0;
	}
	for (k = 0; k < ws->u.a.n && n < max; k++)
		if (msg_val_int(ws->u.a.items[k], "pid", &pid) == 0 && pid > 0)
			pids[n++] = (pid_t)pid;
	msg_destroy(&r);
	return n;
}

/* tsd_read_file - a file's whole text (malloc'd), or NULL. */
char *
tsd_read_file(const char *path)
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
	buf_adds(&b, "");
	return buf_steal(&b, NULL);
}

/* tsd_file_has - whether the file at path holds needle. */
int
tsd_file_has(const char *path, const char *needle)
{
	struct buf b = BUF_INIT;
	char chunk[4096];
	size_t n;
	int found;
	FILE *f = fopen(path, "r");

	if (f == NULL)
		return -1;
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		buf_add(&b, chunk, n);
	fclose(f);
	found =
	    b.len > 0 && memmem(b.data, b.len, needle, strlen(needle)) != NULL;
	buf_free(&b);
	return found;
}

/* tsd_close - close a socket from tsd_connect. */
void
tsd_close(void **sockp)
{
	zsock_close(sockp);
}

/* tsd_recv - receive one message within timeout_ms, or NULL. */
struct msg *
tsd_recv(void *sock, long timeout_ms)
{
	struct zsock_poll it;
	uint64_t end = tsd_now_ms() + (uint64_t)timeout_ms, now;
	struct msg *m = NULL;
	int rc;

	for (;;) {
		rc = msg_recv(sock, &m, NULL);
		if (rc == 0)
			return m;
		if (rc != -SHIRO_ERR_AGAIN && rc != -SHIRO_ERR_PROTO)
			return NULL;
		now = tsd_now_ms();
		if (now >= end)
			return NULL;
		memset(&it, 0, sizeof(it));
		it.sock = sock;
		it.events = ZSOCK_IN;
		(void)zsock_poll(&it, 1, (long)(end - now));
	}
}

/* tsd_count - count an event. */
static void
tsd_count(struct tsd_events *ev, const struct msg *m)
{
	const char *kind = "";
	uint64_t seq = 0;

	if (ev == NULL)
		return;
	(void)msg_get_str(m, "ev", &kind, NULL);
	(void)msg_get_uint(m, "seq", &seq);
	if (ev->last_seq != 0 && seq != ev->last_seq + 1)
		ev->gap = 1;
	ev->last_seq = seq;
	ev->total++;
	if (strcmp(kind, "message") == 0)
		ev->messages++;
	else if (strcmp(kind, "node") == 0)
		ev->nodes++;
	else if (strcmp(kind, "batch") == 0)
		ev->batches++;
	else if (strcmp(kind, "failure") == 0)
		ev->failures++;
}

/* tsd_call - send m with a fresh rid and wait for its answer. */
struct msg *
tsd_call(void *sock, struct msg *m, long timeout_ms, struct tsd_events *ev)
{
	uint64_t rid = ++tsd_rid, got, end;
	struct msg *r;
	long left;

	msg_set_int(m, "rid", (int64_t)rid);
	if (msg_send(sock, m, NULL) != 0)
		return NULL;
	end = tsd_now_ms() + (uint64_t)timeout_ms;
	for (;;) {
		left = (long)(end - tsd_now_ms());
		if (left <= 0)
			return NULL;
		r = tsd_recv(sock, left);
		if (r == NULL)
			return NULL;
		if (msg_type(r) == MSG_EVENT) {
			tsd_count(ev, r);
			msg_destroy(&r);
			continue;
		}
		got = 0;
		(void)msg_get_uint(r, "rid", &got);
		if (got == rid)
			return r;
		msg_destroy(&r);
	}
}

/* tsd_send_text - SEND text with key; the acknowledged id, or -1. */
int64_t
tsd_send_text(
    void *sock, const char *text, const char *key, struct tsd_events *ev)
{
	struct msg *m = msg_new(MSG_SEND), *r;
	uint64_t id = 0;
	int64_t out = -1;

	msg_set_str(m, "text", text);
	msg_set_str(m, "kind", "user");
	if (key != NULL)
		msg_set_str(m, "key", key);
	r = tsd_call(sock, m, 10000, ev);
	msg_destroy(&m);
	if (r != NULL && msg_type(r) == MSG_ACK &&
	    msg_get_uint(r, "id", &id) == 0)
		out = (int64_t)id;
	msg_destroy(&r);
	return out;
}

/* tsd_doc_int - a number at path ("a" or "a.b") of a document map. */
int64_t
tsd_doc_int(const struct msg_val *doc, const char *path)
{
	char first[64];
	const char *dot = strchr(path, '.');
	const struct msg_val *v = doc;
	int64_t n;

	if (dot != NULL) {
		snprintf(first, sizeof(first), "%.*s", (int)(dot - path), path);
		v = msg_val_get(doc, first);
		if (v == NULL || v->type != MSG_V_MAP)
			return -1;
		path = dot + 1;
	}
	if (msg_val_int(v, path, &n) != 0)
		return -1;
	return n;
}

/* tsd_status_int - a number of the STATUS document, or -1. */
int64_t
tsd_status_int(void *sock, const char *path)
{
	struct msg *m = msg_new(MSG_STATUS), *r;
	const struct msg_val *doc;
	int64_t n = -1;

	r = tsd_call(sock, m, 5000, NULL);
	msg_destroy(&m);
	if (r != NULL && msg_type(r) == MSG_REPLY &&
	    msg_get_map(r, "doc", &doc) == 0)
		n = tsd_doc_int(doc, path);
	msg_destroy(&r);
	return n;
}

/* tsd_settle - wait until the view is built and no job runs or waits. */
int
tsd_settle(void *sock, long timeout_ms, struct tsd_events *ev)
{
	uint64_t end = tsd_now_ms() + (uint64_t)timeout_ms;
	struct msg *m, *r;
	const struct msg_val *doc;
	int done;

	while (tsd_now_ms() < end) {
		m = msg_new(MSG_STATUS);
		r = tsd_call(sock, m, 5000, ev);
		msg_destroy(&m);
		done = 0;
		if (r != NULL && msg_get_map(r, "doc", &doc) == 0)
			done = tsd_doc_int(doc, "unbuilt") == 0 &&
			    tsd_doc_int(doc, "queues.running") == 0 &&
			    tsd_doc_int(doc, "queues.waiting_for_worker") ==
				0 &&
			    tsd_doc_int(doc, "queues.tree_pending") == 0;
		msg_destroy(&r);
		if (done)
			return 0;
		usleep(20000);
	}
	return -1;
}

/* tsd_view - the view as "l:i l:i ..." from MEMORY, or NULL. */
char *
tsd_view(void *sock)
{
	struct msg *m = msg_new(MSG_MEMORY), *r;
	const struct msg_val *doc, *lines, *ln;
	struct buf b = BUF_INIT;
	int64_t id, n;
	unsigned l;
	size_t k;

	r = tsd_call(sock, m, 10000, NULL);
	msg_destroy(&m);
	if (r == NULL || msg_get_map(r, "doc", &doc) != 0 ||
	    (lines = msg_val_get(doc, "lines")) == NULL ||
	    lines->type != MSG_V_ARR) {
		msg_destroy(&r);
		return NULL;
	}
	buf_adds(&b, "");
	for (k = 0; k < lines->u.a.n; k++) {
		ln = lines->u.a.items[k];
		if (msg_val_int(ln, "id", &id) != 0 ||
		    msg_val_int(ln, "n", &n) != 0 || n <= 0)
			continue;
		for (l = 0; (1LL << l) < n; l++)
			;
		buf_printf(
		    &b, "%s%u:%lld", k ? " " : "", l, (long long)(id >> l));
	}
	msg_destroy(&r);
	return buf_steal(&b, NULL);
}

/* tsd_spawn - run shirod --home home [extra], its output to
 * home/shirod.err; its pid, or -1. */
pid_t
tsd_spawn(const char *home, const char *const *extra)
{
	const char *argv[16];
	char errpath[PATH_MAX];
	pid_t pid;
	int i = 0, fd;

	argv[i++] = tsd_bin("shirod");
	argv[i++] = "--home";
	argv[i++] = home;
	while (extra != NULL && *extra != NULL && i < 14)
		argv[i++] = *extra++;
	argv[i] = NULL;
	snprintf(errpath, sizeof(errpath), "%s/shirod.err", home);
	pid = fork();
	if (pid == 0) {
		fd = open(errpath, O_WRONLY | O_CREAT | O_APPEND, 0600);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		tsd_env_apply();
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	return pid;
}

/* tsd_start - run shirod in home and wait until it serves. */
pid_t
tsd_start(const char *home, const char *const *extra, int *statusp)
{
	uint64_t end;
	void *sock;
	pid_t pid;

	*statusp = 0;
	pid = tsd_spawn(home, extra);
	if (pid < 0)
		return -1;
	end = tsd_now_ms() + 10000;
	while (tsd_now_ms() < end) {
		if (waitpid(pid, statusp, WNOHANG) == pid)
			return -1;
		sock = tsd_connect(home);
		if (sock != NULL) {
			int64_t n = tsd_status_int(sock, "messages");

			tsd_close(&sock);
			if (n >= 0)
				return pid;
		}
		usleep(20000);
	}
	tsd_kill9(pid);
	return -1;
}

/* tsd_stop - SIGTERM, wait up to 10 s, then SIGKILL; the wait status. */
int
tsd_stop(pid_t pid)
{
	int st = 0, k;

	if (pid <= 0)
		return -1;
	kill(pid, SIGTERM);
	for (k = 0; k < 1000; k++) {
		if (waitpid(pid, &st, WNOHANG) == pid)
			return st;
		usleep(10000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	return st;
}

/* tsd_kill9 - SIGKILL pid and reap it. */
void
tsd_kill9(pid_t pid)
{
	int st;

	if (pid <= 0)
		return;
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
}

/* tsd_turn - SEND text as a turn and wait for its end (see the header). */
struct msg *
tsd_turn(void *sock, const char *text, const char *cwd, char *code,
    size_t codelen, void (*on_event)(void *arg, const struct msg *ev),
    void *arg)
{
	struct msg *m = msg_new(MSG_SEND), *r;
	const char *ev, *t;
	uint64_t id = 0, eid, end;

	code[0] = '\0';
	msg_set_str(m, "text", text);
	msg_set_str(m, "kind", "user");
	msg_set_bool(m, "turn", true);
	if (cwd != NULL)
		msg_set_str(m, "cwd", cwd);
	r = tsd_call(sock, m, 5000, NULL);
	msg_destroy(&m);
	if (r == NULL || msg_type(r) != MSG_ACK ||
	    msg_get_uint(r, "id", &id) != 0) {
		snprintf(code, codelen, "no ack");
		msg_destroy(&r);
		return NULL;
	}
	msg_destroy(&r);
	end = tsd_now_ms() + 30000;
	while (tsd_now_ms() < end) {
		r = tsd_recv(sock, (long)(end - tsd_now_ms()));
		if (r == NULL)
			break;
		if (msg_type(r) == MSG_ERROR) {
			t = "error";
			(void)msg_get_str(r, "code", &t, NULL);
			snprintf(code, codelen, "%s", t);
			msg_destroy(&r);
			return NULL;
		}
		if (msg_type(r) == MSG_EVENT &&
		    msg_get_str(r, "ev", &ev, NULL) == 0 &&
		    strcmp(ev, "done") == 0 &&
		    msg_get_uint(r, "id", &eid) == 0 && eid == id) {
			t = "";
			(void)msg_get_str(r, "code", &t, NULL);
			snprintf(code, codelen, "%s", t);
			return r;
		}
		if (msg_type(r) == MSG_EVENT && on_event != NULL)
			on_event(arg, r);
		msg_destroy(&r);
	}
	snprintf(code, codelen, "no end");
	return NULL;
}
