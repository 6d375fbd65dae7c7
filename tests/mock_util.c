/*
 * mock_util.c - tests/mock_provider.py from C (mock_util.h).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <libgen.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "proto/mono.h"
#include "proto/xmalloc.h"
#include "proto/buf.h"
#include "tests/harness.h"
#include "tests/mock_util.h"

/* mock_json - s with every ' made ". */
char *
mock_json(const char *s)
{
	char *j = xstrdup(s), *p;

	for (p = j; *p != '\0'; p++)
		if (*p == '\'')
			*p = '"';
	return j;
}

/* mock_file - tests/NAME, found above the binary. */
static void
mock_file(const char *name, char *out, size_t size)
{
	char self[PATH_MAX], *dir;
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	int up;

	CHECK(n > 0);
	self[n] = '\0';
	dir = dirname(self);
	for (up = 0; up < 5; up++) {
		snprintf(out, size, "%s/tests/%s", dir, name);
		if (access(out, R_OK) == 0)
			return;
		dir = dirname(dir);
	}
	harness_fail(__FILE__, __LINE__, "tests/%s not found", name);
}

/* mock_run - run the mock with script, over TLS when tls. */
static void
mock_run(struct mock *m, const char *script, bool tls)
{
	static unsigned nth;
	char py[PATH_MAX], sp[PATH_MAX], pp[PATH_MAX], pem[PATH_MAX];
	char *text = mock_json(script ? script : "{}");
	FILE *fp;
	uint64_t end;

	memset(m, 0, sizeof(*m));
	mock_file("mock_provider.py", py, sizeof(py));
	mock_file("mock_tls.pem", pem, sizeof(pem));
	/* Each mock of a test has files of its own (a test may run one
	 * per network namespace). */
	nth++;
	snprintf(
	    sp, sizeof(sp), "%s/mock-script-%u.json", harness_tmpdir(), nth);
	snprintf(pp, sizeof(pp), "%s/mock-port-%u", harness_tmpdir(), nth);
	snprintf(m->log, sizeof(m->log), "%s/mock-log-%u.jsonl",
	    harness_tmpdir(), nth);
	unlink(pp);
	unlink(m->log);
	fp = fopen(sp, "w");
	CHECK(fp != NULL);
	fputs(text, fp);
	CHECK(fclose(fp) == 0);
	free(text);
	m->pid = fork();
	CHECK(m->pid >= 0);
	if (m->pid == 0) {
		if (tls)
			execlp("python3", "python3", py, "--port-file", pp,
			    "--log", m->log, "--script", sp, "--tls", pem,
			    (char *)NULL);
		else
			execlp("python3", "python3", py, "--port-file", pp,
			    "--log", m->log, "--script", sp, (char *)NULL);
		_exit(127);
	}
	end = mono_ms() + 10000;
	while (mono_ms() < end) {
		struct timespec tick = {0, 5 * 1000 * 1000};

		if ((fp = fopen(pp, "r")) != NULL) {
			if (fscanf(fp, "%d", &m->port) != 1)
				m->port = 0;
			fclose(fp);
			if (m->port > 0)
				break;
		}
		CHECKF(waitpid(m->pid, NULL, WNOHANG) == 0,
		    "the mock provider exited at start");
		nanosleep(&tick, NULL);
	}
	CHECKF(m->port > 0, "the mock provider gave no port in 10 s");
	snprintf(m->base, sizeof(m->base), "%s://127.0.0.1:%d",
	    tls ? "https" : "http", m->port);
}

/* mock_start - run the mock with script. */
void
mock_start(struct mock *m, const char *script)
{
	mock_run(m, script, false);
}

/* mock_start_tls - run the mock with script, over TLS. */
void
mock_start_tls(struct mock *m, const char *script)
{
	mock_run(m, script, true);
}

/* mock_post - POST body to path of the running mock (see mock_util.h). */
int
mock_post(
    const struct mock *m, const char *path, const char *body, char **replyp)
{
	struct buf reply = BUF_INIT;
	char head[512], chunk[4096];
	struct sockaddr_in sa;
	size_t len = strlen(body);
	ssize_t got;
	int fd, status = 0;

	fd = socket(AF_INET, SOCK_STREAM, 0);
	CHECK(fd >= 0);
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)m->port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	CHECK(connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0);
	snprintf(head, sizeof(head),
	    "POST %s HTTP/1.1\r\nHost: mock\r\nConnection: close\r\n"
	    "Content-Type: application/json\r\nContent-Length: %zu\r\n\r\n",
	    path, len);
	CHECK(write(fd, head, strlen(head)) == (ssize_t)strlen(head));
	CHECK(write(fd, body, len) == (ssize_t)len);
	while ((got = read(fd, chunk, sizeof(chunk))) > 0)
		buf_add(&reply, chunk, (size_t)got);
	close(fd);
	buf_add(&reply, "", 0);
	if (reply.len > 12 && strncmp(reply.data, "HTTP/1.", 7) == 0)
		status = atoi(reply.data + 9);
	if (replyp != NULL)
		*replyp = buf_steal(&reply, NULL);
	buf_free(&reply);
	return status;
}

/* mock_set - POST a new script to the running mock. */
void
mock_set(struct mock *m, const char *script)
{
	char *text = mock_json(script);
	int status = mock_post(m, "/_mock/script", text, NULL);

	CHECKF(status == 200, "the mock refused the script (%d)", status);
	free(text);
}

/* mock_log - every log entry so far. */
json_t *
mock_log(const struct mock *m)
{
	json_t *all = json_array(), *v;
	char *line = NULL;
	size_t cap = 0;
	FILE *fp = fopen(m->log, "r");

	if (fp == NULL)
		return all;
	while (getline(&line, &cap, fp) > 0) {
		json_error_t err;

		if (line[0] == '\0' || line[strlen(line) - 1] != '\n')
			break; /* a line still being written */
		v = json_loads(line, JSON_ALLOW_NUL, &err);
		CHECKF(v != NULL, "a bad mock log line: %s", err.text);
		json_array_append_new(all, v);
	}
	free(line);
	fclose(fp);
	return all;
}

/* mock_requests - the request entries, waiting for at least n. */
json_t *
mock_requests(const struct mock *m, size_t n, long ms)
{
	uint64_t end = mono_ms() + (uint64_t)ms;
	struct timespec tick = {0, 5 * 1000 * 1000};
	json_t *all, *reqs, *v;
	size_t k;

	for (;;) {
		all = mock_log(m);
		reqs = json_array();
		json_array_foreach(all, k, v)
		{
			const char *kind =
			    json_string_value(json_object_get(v, "kind"));

			if (kind != NULL && strcmp(kind, "request") == 0)
				json_array_append(reqs, v);
		}
		json_decref(all);
		if (json_array_size(reqs) >= n || mono_ms() >= end)
			break;
		json_decref(reqs);
		nanosleep(&tick, NULL);
	}
	CHECKF(json_array_size(reqs) >= n, "the mock got %zu requests, not %zu",
	    json_array_size(reqs), n);
	return reqs;
}

/* mock_expect - exactly n requests (waiting up to 5 s for them). */
void
mock_expect(const struct mock *m, size_t n)
{
	json_t *reqs = mock_requests(m, n, 5000);

	CHECKF(json_array_size(reqs) == n, "the mock got %zu requests, not %zu",
	    json_array_size(reqs), n);
	json_decref(reqs);
}

/* mock_wait - whether an entry of kind came within ms. */
bool
mock_wait(const struct mock *m, const char *kind, long ms)
{
	uint64_t end = mono_ms() + (uint64_t)ms;
	struct timespec tick = {0, 2 * 1000 * 1000};
	json_t *all, *v;
	size_t k;
	bool found = false;

	while (!found) {
		all = mock_log(m);
		json_array_foreach(all, k, v)
		{
			const char *kd =
			    json_string_value(json_object_get(v, "kind"));

			if (kd != NULL && strcmp(kd, kind) == 0)
				found = true;
		}
		json_decref(all);
		if (found || mono_ms() >= end)
			break;
		nanosleep(&tick, NULL);
	}
	return found;
}

/* mock_header - the value of header name of a request. */
const char *
mock_header(const json_t *req, const char *name)
{
	json_t *hs = json_object_get(req, "headers"), *h;
	size_t k;

	json_array_foreach(hs, k, h)
	{
		const char *n = json_string_value(json_array_get(h, 0));

		if (n != NULL && strcasecmp(n, name) == 0)
			return json_string_value(json_array_get(h, 1));
	}
	return NULL;
}

/* mock_body - a request's body as JSON. */
json_t *
mock_body(const json_t *req)
{
	json_error_t err;
	const char *b = json_string_value(json_object_get(req, "body"));
	json_t *v;

	CHECK(b != NULL);
	v = json_loads(b, 0, &err);
	CHECKF(v != NULL, "the body is not JSON: %s", err.text);
	return v;
}

/* mock_at - the value at path in j. */
json_t *
mock_at(const json_t *j, const char *path)
{
	char key[128];
	const char *p = path, *dot;
	size_t n;

	while (j != NULL && *p != '\0') {
		dot = strchr(p, '.');
		n = dot ? (size_t)(dot - p) : strlen(p);
		if (n >= sizeof(key))
			return NULL;
		memcpy(key, p, n);
		key[n] = '\0';
		if (json_is_array(j))
			j = json_array_get(j, strtoul(key, NULL, 10));
		else
			j = json_object_get(j, key);
		p = dot ? dot + 1 : p + n;
	}
	return (json_t *)j;
}

/* mock_str - the string at path, or "". */
const char *
mock_str(const json_t *j, const char *path)
{
	const char *s = json_string_value(mock_at(j, path));

	return s ? s : "";
}

/* mock_t_ms - a log entry's arrival time in ms. */
double
mock_t_ms(const json_t *entry)
{
	return (double)json_integer_value(json_object_get(entry, "t_ns")) / 1e6;
}

/* mock_stop - kill the mock. */
void
mock_stop(struct mock *m)
{
	if (m->pid > 0) {
		kill(m->pid, SIGKILL);
		waitpid(m->pid, NULL, 0);
		m->pid = -1;
	}
}
