/*
 * http.h - HTTP requests over libcurl's multi interface, driven by the
 * worker skeleton's poll.
 *
 * Why the multi socket interface (CURLMOPT_SOCKETFUNCTION and
 * TIMERFUNCTION) and not curl_multi_poll() with extra descriptors: the
 * worker must wait on the broker's ZeroMQ socket too, and a ZeroMQ
 * socket is not a descriptor one can poll (its ZMQ_FD only signals,
 * edge-triggered).  zsock_poll() waits on ZeroMQ sockets and plain
 * descriptors together, so libcurl tells us its sockets and its timer,
 * they go into the skeleton's one zsock_poll(), and we hand curl back
 * what became ready.  One loop then carries heartbeats, CANCELs and any
 * number of calls.
 *
 * A call is a POST (or a GET) with headers and a body.  Response headers
 * we need are kept (request-id, x-request-id, retry-after,
 * retry-after-ms, x-should-retry, content-type); the body goes to a hook
 * piece by piece; every byte (headers too) counts against the call's cap
 * and restarts its idle clock.  Redirects are not followed; only http
 * and https are allowed.  The "Expect: 100-continue" dance is off.
 */
#ifndef SHIRO_HTTP_H
#define SHIRO_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/zsock.h"

struct http;
struct http_call;

/* The response headers kept. */
enum http_hdr {
	HTTP_H_REQUEST_ID, /* request-id (Anthropic) */
	HTTP_H_X_REQUEST_ID, /* x-request-id (OpenAI and others) */
	HTTP_H_RETRY_AFTER,
	HTTP_H_RETRY_AFTER_MS,
	HTTP_H_SHOULD_RETRY,
	HTTP_H_CONTENT_TYPE,
	HTTP_H_N
};

/* How a call ended. */
enum http_end {
	HTTP_END_OK, /* the whole response came */
	HTTP_END_CONNECT, /* could not connect: DNS, refused, TLS */
	HTTP_END_CONNECT_TIMEOUT, /* the connect deadline passed */
	HTTP_END_CUT, /* the connection broke during the response */
	HTTP_END_CAPPED, /* more bytes than the cap */
	HTTP_END_HOOK, /* the body hook asked to stop */
	HTTP_END_OTHER /* anything else curl refused */
};

struct http_hooks {
	/*
	 * body - n bytes of the response body (of whatever status): 0 to go
	 * on, or negative to stop the call (it ends HTTP_END_HOOK).
	 */
	int (*body)(void *arg, struct http_call *c, const char *p, size_t n);
	/*
	 * done - the call ended; text says why when not HTTP_END_OK.  The
	 * call is freed when done returns.
	 */
	void (*done)(void *arg, struct http_call *c, enum http_end end,
	    const char *text);
};

struct http_opts {
	const char *url;
	const char *const *headers; /* "name: value", NULL-terminated */
	const char *body; /* NULL: a GET; borrowed until the call ends */
	size_t body_len;
	long connect_ms; /* the connect deadline */
	uint64_t max_bytes; /* cap on the response (headers and body) */
};

/* http_new - a multi handle; 0 or -SHIRO_ERR_FAILED. */
int http_new(struct http **hp);

/* http_destroy - abort every call and free *hp. */
void http_destroy(struct http **hp);

/*
 * http_start - start a call: 0 and *cp, or -SHIRO_ERR_FAILED (curl
 * refused the options; nothing started).
 */
int http_start(struct http *h, const struct http_opts *o,
    const struct http_hooks *hooks, void *arg, struct http_call **cp);

/* http_abort - stop a call now without its done hook; *cp = NULL. */
void http_abort(struct http_call **cp);

/*
 * http_items - curl's sockets as poll items (at most max); *timeout_ms
 * gets the wait curl's timer allows (-1: none).  Returns how many.
 */
int http_items(
    struct http *h, struct zsock_poll *items, int max, long *timeout_ms);

/*
 * http_ready - hand curl the items that became ready and run its timer;
 * calls the hooks of calls that progressed or ended.
 */
void http_ready(struct http *h, const struct zsock_poll *items, int n);

/* http_status - the response's status, 0 before its status line. */
long http_status(const struct http_call *c);

/* http_header - a kept response header, or NULL. */
const char *http_header(const struct http_call *c, enum http_hdr which);

/* http_last_byte - when the call last received a byte (mono_ms). */
uint64_t http_last_byte(const struct http_call *c);

/* http_body_bytes - bytes of response body received. */
uint64_t http_body_bytes(const struct http_call *c);

/* http_version - curl's version text, for logs. */
const char *http_version(void);

#endif
