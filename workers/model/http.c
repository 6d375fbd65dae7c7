/*
 * http.c - HTTP calls over libcurl's multi socket interface (http.h).
 */
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "proto/err.h"
#include "proto/log.h"
#include "proto/mono.h"
#include "proto/xmalloc.h"
#include "workers/model/http.h"

#define HTTP_HDR_MAX 256 /* bytes kept of one header's value */

/* A socket curl asked us to watch. */
struct http_sock {
	curl_socket_t fd;
	int what; /* CURL_POLL_IN, _OUT or _INOUT */
};

struct http {
	CURLM *multi;
	struct http_sock *socks;
	size_t nsocks, cap;
	long long timer_at; /* when curl's timer fires (mono_ms), -1 none */
	struct http_call *calls; /* every call, for http_destroy */
};

struct http_call {
	struct http *h;
	CURL *easy;
	struct curl_slist *headers;
	const struct http_hooks *hooks;
	void *arg;
	uint64_t max_bytes, bytes, body_bytes;
	uint64_t last_byte;
	long status;
	char hdr[HTTP_H_N][HTTP_HDR_MAX];
	bool capped, hooked;
	char err[CURL_ERROR_SIZE];
	struct http_call *next, **prevp;
};

/* http_socket_cb - curl's CURLMOPT_SOCKETFUNCTION: track the socket. */
static int
http_socket_cb(CURL *easy, curl_socket_t fd, int what, void *userp, void *sockp)
{
	struct http *h = userp;
	size_t k;

	(void)easy;
	(void)sockp;
	for (k = 0; k < h->nsocks && h->socks[k].fd != fd; k++)
		;
	if (what == CURL_POLL_REMOVE) {
		if (k < h->nsocks)
			h->socks[k] = h->socks[--h->nsocks];
		return 0;
	}
	if (k == h->nsocks) {
		if (h->nsocks == h->cap) {
			h->cap = h->cap ? h->cap * 2 : 8;
			h->socks =
			    xreallocarray(h->socks, h->cap, sizeof(*h->socks));
		}
		h->nsocks++;
	}
	h->socks[k].fd = fd;
	h->socks[k].what = what;
	return 0;
}

/* http_timer_cb - curl's CURLMOPT_TIMERFUNCTION: when to wake it. */
static int
http_timer_cb(CURLM *multi, long timeout_ms, void *userp)
{
	struct http *h = userp;

	(void)multi;
	h->timer_at =
	    timeout_ms < 0 ? -1 : (long long)mono_ms() + (long long)timeout_ms;
	return 0;
}

/* http_new - a multi handle. */
int
http_new(struct http **hp)
{
	static bool inited;
	struct http *h;

	if (!inited) {
		if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
			return -SHIRO_ERR_FAILED;
		inited = true;
	}
	h = xcalloc(1, sizeof(*h));
	h->timer_at = -1;
	if ((h->multi = curl_multi_init()) == NULL) {
		free(h);
		return -SHIRO_ERR_FAILED;
	}
	curl_multi_setopt(h->multi, CURLMOPT_SOCKETFUNCTION, http_socket_cb);
	curl_multi_setopt(h->multi, CURLMOPT_SOCKETDATA, h);
	curl_multi_setopt(h->multi, CURLMOPT_TIMERFUNCTION, http_timer_cb);
	curl_multi_setopt(h->multi, CURLMOPT_TIMERDATA, h);
	*hp = h;
	return 0;
}

/* http_free_call - take c out of its multi and free it. */
static void
http_free_call(struct http_call *c)
{
	curl_multi_remove_handle(c->h->multi, c->easy);
	curl_easy_cleanup(c->easy);
	curl_slist_free_all(c->headers);
	*c->prevp = c->next;
	if (c->next != NULL)
		c->next->prevp = c->prevp;
	free(c);
}

/* http_destroy - abort every call and free *hp. */
void
http_destroy(struct http **hp)
{
	struct http *h = *hp;

	if (h == NULL)
		return;
	while (h->calls != NULL)
		http_free_call(h->calls);
	curl_multi_cleanup(h->multi);
	free(h->socks);
	free(h);
	*hp = NULL;
}

/* http_keep - whether header line (name: value) is one we keep. */
static void
http_keep(struct http_call *c, const char *line, size_t n)
{
	static const char *const names[HTTP_H_N] = {
	    [HTTP_H_REQUEST_ID] = "request-id",
	    [HTTP_H_X_REQUEST_ID] = "x-request-id",
	    [HTTP_H_RETRY_AFTER] = "retry-after",
	    [HTTP_H_RETRY_AFTER_MS] = "retry-after-ms",
	    [HTTP_H_SHOULD_RETRY] = "x-should-retry",
	    [HTTP_H_CONTENT_TYPE] = "content-type",
	};
	const char *colon = memchr(line, ':', n), *v, *end = line + n;
	size_t k, nl, vl;

	if (colon == NULL)
		return;
	nl = (size_t)(colon - line);
	for (v = colon + 1; v < end && (*v == ' ' || *v == '\t'); v++)
		;
	while (end > v &&
	    (end[-1] == '\r' || end[-1] == '\n' || end[-1] == ' ' ||
		end[-1] == '\t'))
		end--;
	vl = (size_t)(end - v);
	for (k = 0; k < HTTP_H_N; k++) {
		if (strlen(names[k]) != nl ||
		    strncasecmp(line, names[k], nl) != 0)
			continue;
		if (vl >= HTTP_HDR_MAX)
			vl = HTTP_HDR_MAX - 1;
		memcpy(c->hdr[k], v, vl);
		c->hdr[k][vl] = '\0';
		/* Only printable bytes reach a log line. */
		for (nl = 0; nl < vl; nl++)
			if ((unsigned char)c->hdr[k][nl] < 0x20 ||
			    (unsigned char)c->hdr[k][nl] >= 0x7f)
				c->hdr[k][nl] = '?';
	}
}

/* http_count - n more bytes arrived: the clock, and the cap. */
static bool
http_count(struct http_call *c, size_t n)
{
	c->last_byte = mono_ms();
	c->bytes += n;
	if (c->bytes > c->max_bytes) {
		c->capped = true;
		return false;
	}
	return true;
}

/* http_header_cb - curl's CURLOPT_HEADERFUNCTION. */
static size_t
http_header_cb(char *p, size_t size, size_t nmemb, void *userp)
{
	struct http_call *c = userp;
	size_t n = size * nmemb;
	long status;

	if (!http_count(c, n))
		return 0;
	if (n >= 5 && memcmp(p, "HTTP/", 5) == 0) {
		/* A status line: a new response (after a 1xx, say). */
		const char *sp = memchr(p, ' ', n);

		memset(c->hdr, 0, sizeof(c->hdr));
		status = 0;
		if (sp != NULL && sp + 4 <= p + n)
			status = strtol(sp + 1, NULL, 10);
		c->status = status >= 100 && status <= 999 ? status : 0;
		return n;
	}
	http_keep(c, p, n);
	return n;
}

/* http_write_cb - curl's CURLOPT_WRITEFUNCTION: the body to the hook. */
static size_t
http_write_cb(char *p, size_t size, size_t nmemb, void *userp)
{
	struct http_call *c = userp;
	size_t n = size * nmemb;

	if (!http_count(c, n))
		return 0;
	c->body_bytes += n;
	if (c->hooks->body(c->arg, c, p, n) < 0) {
		c->hooked = true;
		return 0;
	}
	return n;
}

/* http_start - start a call. */
int
http_start(struct http *h, const struct http_opts *o,
    const struct http_hooks *hooks, void *arg, struct http_call **cp)
{
	struct http_call *c = xcalloc(1, sizeof(*c));
	CURLcode rc = CURLE_OK;
	size_t k;

	c->h = h;
	c->hooks = hooks;
	c->arg = arg;
	c->max_bytes = o->max_bytes;
	c->last_byte = mono_ms();
	if ((c->easy = curl_easy_init()) == NULL) {
		free(c);
		return -SHIRO_ERR_FAILED;
	}
	for (k = 0; o->headers != NULL && o->headers[k] != NULL; k++)
		c->headers = curl_slist_append(c->headers, o->headers[k]);
	/* No 100-continue round trip before a large body. */
	c->headers = curl_slist_append(c->headers, "Expect:");
#define HTTP_SET(opt, val) \
	if (rc == CURLE_OK) \
	rc = curl_easy_setopt(c->easy, opt, val)
	HTTP_SET(CURLOPT_URL, o->url);
	HTTP_SET(CURLOPT_PROTOCOLS_STR, "http,https");
	HTTP_SET(CURLOPT_FOLLOWLOCATION, 0L);
	HTTP_SET(CURLOPT_NOSIGNAL, 1L);
	HTTP_SET(CURLOPT_HTTPHEADER, c->headers);
	HTTP_SET(CURLOPT_USERAGENT, "shiro-model-worker/1");
	HTTP_SET(CURLOPT_CONNECTTIMEOUT_MS, o->connect_ms);
	HTTP_SET(CURLOPT_TCP_KEEPALIVE, 1L);
	HTTP_SET(CURLOPT_HEADERFUNCTION, http_header_cb);
	HTTP_SET(CURLOPT_HEADERDATA, c);
	HTTP_SET(CURLOPT_WRITEFUNCTION, http_write_cb);
	HTTP_SET(CURLOPT_WRITEDATA, c);
	HTTP_SET(CURLOPT_ERRORBUFFER, c->err);
	HTTP_SET(CURLOPT_PRIVATE, c);
	if (o->body != NULL) {
		HTTP_SET(CURLOPT_POST, 1L);
		HTTP_SET(CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)o->body_len);
		HTTP_SET(CURLOPT_POSTFIELDS, o->body);
	}
#undef HTTP_SET
	if (rc != CURLE_OK) {
		log_warnx("curl refused an option: %s", curl_easy_strerror(rc));
		curl_easy_cleanup(c->easy);
		curl_slist_free_all(c->headers);
		free(c);
		return -SHIRO_ERR_FAILED;
	}
	c->next = h->calls;
	if (c->next != NULL)
		c->next->prevp = &c->next;
	c->prevp = &h->calls;
	h->calls = c;
	if (curl_multi_add_handle(h->multi, c->easy) != CURLM_OK) {
		http_free_call(c);
		return -SHIRO_ERR_FAILED;
	}
	*cp = c;
	return 0;
}

/* http_abort - stop a call now without its done hook. */
void
http_abort(struct http_call **cp)
{
	if (*cp == NULL)
		return;
	http_free_call(*cp);
	*cp = NULL;
}

/* http_items - curl's sockets as poll items. */
int
http_items(struct http *h, struct zsock_poll *items, int max, long *timeout_ms)
{
	long long now = (long long)mono_ms();
	size_t k;
	int n = 0;

	for (k = 0; k < h->nsocks && n < max; k++, n++) {
		items[n].sock = NULL;
		items[n].fd = h->socks[k].fd;
		items[n].events = 0;
		if (h->socks[k].what & CURL_POLL_IN)
			items[n].events |= ZSOCK_IN;
		if (h->socks[k].what & CURL_POLL_OUT)
			items[n].events |= ZSOCK_OUT;
		items[n].revents = 0;
	}
	if (h->timer_at < 0)
		*timeout_ms = -1;
	else
		*timeout_ms =
		    h->timer_at <= now ? 0 : (long)(h->timer_at - now);
	return n;
}

/* http_end_of - how a call ended, from curl's code. */
static enum http_end
http_end_of(const struct http_call *c, CURLcode code)
{
	if (c->capped)
		return HTTP_END_CAPPED;
	if (c->hooked)
		return HTTP_END_HOOK;
	switch (code) {
	case CURLE_OK:
		return HTTP_END_OK;
	case CURLE_COULDNT_RESOLVE_PROXY:
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_COULDNT_CONNECT:
	case CURLE_SSL_CONNECT_ERROR:
	case CURLE_PEER_FAILED_VERIFICATION:
	case CURLE_SSL_CACERT_BADFILE:
	case CURLE_SSL_CERTPROBLEM:
	case CURLE_SSL_CIPHER:
	case CURLE_SSL_ISSUER_ERROR:
	case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
	case CURLE_SSL_INVALIDCERTSTATUS:
		return HTTP_END_CONNECT;
	case CURLE_OPERATION_TIMEDOUT:
		/* We set no total timeout: only the connect one fires. */
		return HTTP_END_CONNECT_TIMEOUT;
	case CURLE_SEND_ERROR:
	case CURLE_RECV_ERROR:
	case CURLE_GOT_NOTHING:
	case CURLE_PARTIAL_FILE:
	case CURLE_HTTP2:
	case CURLE_HTTP2_STREAM:
	case CURLE_WEIRD_SERVER_REPLY:
		return c->status == 0 && c->bytes == 0 ? HTTP_END_CONNECT
						       : HTTP_END_CUT;
	default:
		return HTTP_END_OTHER;
	}
}

/* http_ready - hand curl what became ready and run its timer. */
void
http_ready(struct http *h, const struct zsock_poll *items, int n)
{
	struct http_call *c;
	CURLMsg *msg;
	int k, running, left, ev;

	for (k = 0; k < n; k++) {
		if (items[k].sock != NULL || items[k].revents == 0)
			continue;
		ev = 0;
		if (items[k].revents & ZSOCK_IN)
			ev |= CURL_CSELECT_IN;
		if (items[k].revents & ZSOCK_OUT)
			ev |= CURL_CSELECT_OUT;
		if (items[k].revents & ZSOCK_ERR)
			ev |= CURL_CSELECT_ERR;
		curl_multi_socket_action(h->multi, items[k].fd, ev, &running);
	}
	if (h->timer_at >= 0 && h->timer_at <= (long long)mono_ms()) {
		h->timer_at = -1;
		curl_multi_socket_action(
		    h->multi, CURL_SOCKET_TIMEOUT, 0, &running);
	}
	while ((msg = curl_multi_info_read(h->multi, &left)) != NULL) {
		CURLcode code;
		enum http_end end;
		char *priv = NULL;
		const char *text;

		if (msg->msg != CURLMSG_DONE)
			continue;
		code = msg->data.result;
		curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, &priv);
		c = (struct http_call *)(void *)priv;
		end = http_end_of(c, code);
		text = c->capped	? "the response passed its size cap"
		    : c->err[0] != '\0' ? c->err
					: curl_easy_strerror(code);
		curl_multi_remove_handle(h->multi, c->easy);
		c->hooks->done(c->arg, c, end, text);
		http_free_call(c);
	}
}

/* http_status - the response's status. */
long
http_status(const struct http_call *c)
{
	return c->status;
}

/* http_header - a kept response header, or NULL. */
const char *
http_header(const struct http_call *c, enum http_hdr which)
{
	return c->hdr[which][0] != '\0' ? c->hdr[which] : NULL;
}

/* http_last_byte - when the call last received a byte. */
uint64_t
http_last_byte(const struct http_call *c)
{
	return c->last_byte;
}

/* http_body_bytes - bytes of response body received. */
uint64_t
http_body_bytes(const struct http_call *c)
{
	return c->body_bytes;
}

/* http_version - curl's version text. */
const char *
http_version(void)
{
	return curl_version();
}
