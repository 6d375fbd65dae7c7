/*
 * mock_util.h - tests/mock_provider.py from a C test or bench.
 *
 * mock_start() runs the mock with a script (JSON text; single quotes
 * stand for double quotes, so scripts read well in C) in the test's
 * temporary directory and waits for its port; mock_log() reads what went
 * on the wire; mock_stop() kills it by its pid.
 */
#ifndef SHIRO_MOCK_UTIL_H
#define SHIRO_MOCK_UTIL_H

#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <sys/types.h>

struct mock {
	pid_t pid;
	int port;
	char log[PATH_MAX];
	char base[64]; /* "http://127.0.0.1:PORT" */
};

/* mock_json - s with every ' made ", malloc'ed. */
char *mock_json(const char *s);

/* mock_start - run the mock with script (mock_json form); fails the test
 * if it does not come up within 10 s. */
void mock_start(struct mock *m, const char *script);

/*
 * mock_start_tls - the same speaking HTTPS with tests/mock_tls.pem, a
 * self-signed certificate no client trusts; base is https://...
 */
void mock_start_tls(struct mock *m, const char *script);

/*
 * mock_post - POST body (JSON text) to path of the running mock, as a
 * client of the provider would; the HTTP status, and the whole answer
 * (head and body, malloc'd) in *replyp when not NULL.
 */
int mock_post(
    const struct mock *m, const char *path, const char *body, char **replyp);

/* mock_set - replace the running mock's script (mock_json form). */
void mock_set(struct mock *m, const char *script);

/* mock_log - every log entry so far (a JSON array; caller decrefs). */
json_t *mock_log(const struct mock *m);

/*
 * mock_requests - the request entries, waiting up to ms for at least n
 * of them (a JSON array; caller decrefs).  Fails the test if fewer came.
 */
json_t *mock_requests(const struct mock *m, size_t n, long ms);

/*
 * mock_expect - wait up to 5 s for n requests, then check that exactly n
 * came.
 */
void mock_expect(const struct mock *m, size_t n);

/* mock_wait - whether an entry of kind ("disconnect") came within ms. */
bool mock_wait(const struct mock *m, const char *kind, long ms);

/* mock_header - the value of header name (any case) of a request. */
const char *mock_header(const json_t *req, const char *name);

/* mock_body - a request's body parsed as JSON (caller decrefs). */
json_t *mock_body(const json_t *req);

/*
 * mock_at - the value at path in j ("messages.0.content.1.text": object
 * keys and array indexes split by dots), or NULL.
 */
json_t *mock_at(const json_t *j, const char *path);

/* mock_str - the string at path, or "" (never NULL). */
const char *mock_str(const json_t *j, const char *path);

/* mock_t_ms - a log entry's arrival time in ms (CLOCK_MONOTONIC). */
double mock_t_ms(const json_t *entry);

/* mock_stop - kill the mock. */
void mock_stop(struct mock *m);

#endif
