/* zsock.c - ZeroMQ sockets with shiro's limits, and polling. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include "proto/err.h"
#include "proto/log.h"
#include "proto/mono.h"
#include "proto/msg.h"
#include "proto/xmalloc.h"
#include "proto/zsock.h"

/* A stable option of libzmq 4.3 still listed among its drafts. */
#ifndef ZMQ_ZAP_ENFORCE_DOMAIN
#define ZMQ_ZAP_ENFORCE_DOMAIN 93
#endif

/* Where libzmq asks its ZAP questions (RFC 27). */
#define ZSOCK_ZAP_ENDPOINT "inproc://zeromq.zap.01"

/* The first line of a credential: its format and revision. */
#define ZSOCK_CRED_HEAD "shiro-cred/1\n"

static void *zsock_ctx;
static unsigned zsock_open_n; /* sockets made and not yet closed */

/* zsock_context - the process-wide context, made on first use. */
static void *
zsock_context(void)
{
	if (zsock_ctx == NULL) {
		zsock_ctx = zmq_ctx_new();
		if (zsock_ctx == NULL)
			fatal("zmq_ctx_new");
		/* One I/O thread is plenty for ipc and a few tcp peers. */
		zmq_ctx_set(zsock_ctx, ZMQ_IO_THREADS, 1);
	}
	return zsock_ctx;
}

/* zsock_znew - a socket of type in the context, counted. */
static void *
zsock_znew(int type)
{
	void *sock = zmq_socket(zsock_context(), type);

	if (sock != NULL)
		zsock_open_n++;
	return sock;
}

/* zsock_zclose - close a socket zsock_znew made. */
static void
zsock_zclose(void *sock)
{
	zmq_close(sock);
	zsock_open_n--;
}

/* zsock_setint - set an int option; a failure is a bug or an old libzmq. */
static int
zsock_setint(void *sock, int opt, int value)
{
	if (zmq_setsockopt(sock, opt, &value, sizeof(value)) < 0) {
		log_warnx("zmq_setsockopt %d: %s", opt, zmq_strerror(errno));
		return -SHIRO_ERR_INVAL;
	}
	return 0;
}

/* zsock_setkey - set a Z85 key option (40 characters and the NUL). */
static int
zsock_setkey(void *sock, int opt, const char *z85)
{
	if (strlen(z85) != ZSOCK_KEY_Z85 ||
	    zmq_setsockopt(sock, opt, z85, ZSOCK_KEY_Z85 + 1) < 0) {
		log_warnx("zmq_setsockopt %d: a bad CURVE key", opt);
		return -SHIRO_ERR_INVAL;
	}
	return 0;
}

/* zsock_security - the ZAP domain and CURVE roles of opts on sock. */
static int
zsock_security(void *sock, int type, const struct zsock_opts *opts)
{
	const struct zsock_cred *c = opts->curve;
	int rc;

	if (type == ZMQ_ROUTER && opts->zap_domain != NULL) {
		if (zmq_setsockopt(sock, ZMQ_ZAP_DOMAIN, opts->zap_domain,
			strlen(opts->zap_domain)) < 0)
			return -SHIRO_ERR_INVAL;
		/* Refuse a connection when no handler answers, rather than
		 * let it in unasked.  The handler is bound before any such
		 * ROUTER and closed after it, so this never fires; an older
		 * libzmq without the option is still safe by that order. */
		(void)zsock_setint(sock, ZMQ_ZAP_ENFORCE_DOMAIN, 1);
	}
	if (type == ZMQ_ROUTER && opts->curve_secret != NULL) {
		if ((rc = zsock_setint(sock, ZMQ_CURVE_SERVER, 1)) < 0 ||
		    (rc = zsock_setkey(
			 sock, ZMQ_CURVE_SECRETKEY, opts->curve_secret)) < 0)
			return rc;
	}
	if (type == ZMQ_DEALER && c != NULL) {
		if ((rc = zsock_setkey(sock, ZMQ_CURVE_SERVERKEY, c->server)) <
			0 ||
		    (rc = zsock_setkey(sock, ZMQ_CURVE_PUBLICKEY, c->own.pub)) <
			0 ||
		    (rc = zsock_setkey(sock, ZMQ_CURVE_SECRETKEY, c->own.sec)) <
			0)
			return rc;
	}
	return 0;
}

/* zsock_make - a socket of type with the limits and options applied. */
static int
zsock_make(int type, const struct zsock_opts *opts, void **sockp)
{
	int64_t maxsize = MSG_MAX_FRAME;
	int hwm = 1000, linger = 200, hb = 1000, rc = 0;
	int ivl = 100, ivl_max = 2000;
	void *sock;

	*sockp = NULL;
	if (opts != NULL) {
		if (opts->hwm > 0)
			hwm = opts->hwm;
		if (opts->linger_ms > 0)
			linger = opts->linger_ms;
		if (opts->heartbeat_ms != 0)
			hb = opts->heartbeat_ms;
		if (opts->reconnect_ms > 0)
			ivl = opts->reconnect_ms;
		if (opts->reconnect_max_ms > 0)
			ivl_max = opts->reconnect_max_ms;
	}
	sock = zsock_znew(type);
	if (sock == NULL) {
		log_warnx("zmq_socket: %s", zmq_strerror(errno));
		return -SHIRO_ERR_IO;
	}
	/* A larger frame drops the connection before it is read whole. */
	if (zmq_setsockopt(sock, ZMQ_MAXMSGSIZE, &maxsize, sizeof(maxsize)) <
	    0) {
		rc = -SHIRO_ERR_INVAL;
		goto out;
	}
	if ((rc = zsock_setint(sock, ZMQ_LINGER, linger)) < 0 ||
	    (rc = zsock_setint(sock, ZMQ_SNDHWM, hwm)) < 0 ||
	    (rc = zsock_setint(sock, ZMQ_RCVHWM, hwm)) < 0 ||
	    (rc = zsock_setint(sock, ZMQ_RECONNECT_IVL, ivl)) < 0 ||
	    (rc = zsock_setint(sock, ZMQ_RECONNECT_IVL_MAX, ivl_max)) < 0)
		goto out;
	if (hb > 0) {
		if ((rc = zsock_setint(sock, ZMQ_HEARTBEAT_IVL, hb)) < 0 ||
		    (rc = zsock_setint(sock, ZMQ_HEARTBEAT_TIMEOUT, 3 * hb)) <
			0)
			goto out;
	} else {
		/*
		 * No ZMTP pings from here.  libzmq 4.3.4 aborts a process
		 * whose receive queue for a connection is full when the
		 * peer closes it and a ping of ours falls due before the
		 * queue is read (its issues 4364, 3937, 4767); a socket
		 * that sends none cannot get there.  The kernel watches a
		 * tcp connection instead: keepalive probes after 2 s of
		 * silence, 1 s apart, 3 lost close it; data unacknowledged
		 * for 5 s closes it too (TCP_USER_TIMEOUT).  Both are
		 * answered by the peer's kernel, so a peer that is alive
		 * but reads nothing keeps its connection.
		 */
		if ((rc = zsock_setint(sock, ZMQ_HEARTBEAT_IVL, 0)) < 0 ||
		    (rc = zsock_setint(sock, ZMQ_TCP_KEEPALIVE, 1)) < 0 ||
		    (rc = zsock_setint(sock, ZMQ_TCP_KEEPALIVE_IDLE, 2)) < 0 ||
		    (rc = zsock_setint(sock, ZMQ_TCP_KEEPALIVE_INTVL, 1)) < 0 ||
		    (rc = zsock_setint(sock, ZMQ_TCP_KEEPALIVE_CNT, 3)) < 0 ||
		    (rc = zsock_setint(sock, ZMQ_TCP_MAXRT, 5000)) < 0)
			goto out;
	}
	if (opts != NULL && opts->handshake_ms > 0 &&
	    (rc = zsock_setint(sock, ZMQ_HANDSHAKE_IVL, opts->handshake_ms)) <
		0)
		goto out;
	if (type == ZMQ_ROUTER &&
	    (rc = zsock_setint(sock, ZMQ_ROUTER_MANDATORY, 1)) < 0)
		goto out;
	if (type == ZMQ_DEALER && opts != NULL && opts->identity != NULL &&
	    zmq_setsockopt(sock, ZMQ_ROUTING_ID, opts->identity,
		strlen(opts->identity)) < 0) {
		rc = -SHIRO_ERR_INVAL;
		goto out;
	}
	if (opts != NULL && (rc = zsock_security(sock, type, opts)) < 0)
		goto out;
out:
	if (rc < 0)
		zsock_zclose(sock);
	else
		*sockp = sock;
	return rc;
}

/* zsock_router - a ROUTER bound to endpoint. */
int
zsock_router(const char *endpoint, const struct zsock_opts *opts, void **sockp)
{
	void *sock;
	int rc;

	if ((rc = zsock_make(ZMQ_ROUTER, opts, &sock)) < 0)
		return rc;
	if (zmq_bind(sock, endpoint) < 0) {
		int e = errno;

		log_warnx("bind %s: %s", endpoint, zmq_strerror(e));
		zsock_zclose(sock);
		return e == EADDRINUSE ? -SHIRO_ERR_EXIST : err_from_errno(e);
	}
	*sockp = sock;
	return 0;
}

/* zsock_bind - bind the ROUTER sock to one more endpoint. */
int
zsock_bind(void *sock, const char *endpoint, const struct zsock_opts *opts,
    char *bound, size_t boundlen)
{
	size_t len = boundlen;
	int rc;

	if (opts != NULL) {
		if ((rc = zsock_security(sock, ZMQ_ROUTER, opts)) < 0)
			return rc;
		if (opts->handshake_ms > 0 &&
		    (rc = zsock_setint(
			 sock, ZMQ_HANDSHAKE_IVL, opts->handshake_ms)) < 0)
			return rc;
	}
	if (zmq_bind(sock, endpoint) < 0) {
		int e = errno;

		log_warnx("bind %s: %s", endpoint, zmq_strerror(e));
		return e == EADDRINUSE ? -SHIRO_ERR_EXIST : err_from_errno(e);
	}
	if (bound != NULL && boundlen > 0 &&
	    zmq_getsockopt(sock, ZMQ_LAST_ENDPOINT, bound, &len) != 0)
		snprintf(bound, boundlen, "%s", endpoint);
	return 0;
}

/* zsock_unbind - stop listening on endpoint. */
int
zsock_unbind(void *sock, const char *endpoint)
{
	return zmq_unbind(sock, endpoint) == 0 ? 0 : -SHIRO_ERR_NOENT;
}

/* zsock_dealer - a DEALER connected to endpoint. */
int
zsock_dealer(const char *endpoint, const struct zsock_opts *opts, void **sockp)
{
	void *sock;
	int rc;

	if ((rc = zsock_make(ZMQ_DEALER, opts, &sock)) < 0)
		return rc;
	if (zmq_connect(sock, endpoint) < 0) {
		int e = errno;

		log_warnx("connect %s: %s", endpoint, zmq_strerror(e));
		zsock_zclose(sock);
		return err_from_errno(e);
	}
	*sockp = sock;
	return 0;
}

/* zsock_monitor_event - read one event of the monitor mon: its number,
 * or -1 when what came is not one. */
static int
zsock_monitor_event(void *mon)
{
	unsigned char head[6];
	uint16_t event;
	int more = 0, n;
	size_t len = sizeof(more);

	n = zmq_recv(mon, head, sizeof(head), ZMQ_DONTWAIT);
	if (n < 0)
		return -1;
	/* The second frame is the endpoint: read and drop it. */
	if (zmq_getsockopt(mon, ZMQ_RCVMORE, &more, &len) == 0 && more) {
		char addr[256];
		(void)zmq_recv(mon, addr, sizeof(addr), 0);
	}
	if (n != (int)sizeof(head))
		return -1;
	memcpy(&event, head, sizeof(event));
	return event;
}

/* zsock_dealer_watch - a DEALER whose handshake succeeded, and its
 * monitor. */
int
zsock_dealer_watch(const char *endpoint, const struct zsock_opts *opts,
    long timeout_ms, void **sockp, void **monp)
{
	static unsigned seq;
	char addr[64];
	void *sock = NULL, *mon = NULL;
	long long end = zsock_now_ms() + timeout_ms;
	int rc, ev,
	    events = ZMQ_EVENT_HANDSHAKE_SUCCEEDED |
	    ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL |
	    ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL |
	    ZMQ_EVENT_HANDSHAKE_FAILED_AUTH | ZMQ_EVENT_DISCONNECTED;

	*sockp = NULL;
	if (monp != NULL)
		*monp = NULL;
	if ((rc = zsock_make(ZMQ_DEALER, opts, &sock)) < 0)
		return rc;
	/* The monitor's peer is connected before the connection starts,
	 * so that no event is lost (inproc makes no file descriptor). */
	snprintf(addr, sizeof(addr), "inproc://shiro-handshake-%u", seq++);
	rc = -SHIRO_ERR_IO;
	if (zmq_socket_monitor(sock, addr, events) < 0 ||
	    (mon = zsock_znew(ZMQ_PAIR)) == NULL ||
	    zmq_connect(mon, addr) < 0) {
		log_warnx("handshake monitor: %s", zmq_strerror(errno));
		goto out;
	}
	if (zmq_connect(sock, endpoint) < 0) {
		log_warnx("connect %s: %s", endpoint, zmq_strerror(errno));
		rc = err_from_errno(errno);
		goto out;
	}
	rc = -SHIRO_ERR_TIMEOUT;
	while (zsock_now_ms() < end) {
		zmq_pollitem_t it = {mon, 0, ZMQ_POLLIN, 0};
		if (zmq_poll(&it, 1, (long)(end - zsock_now_ms())) <= 0)
			continue;
		ev = zsock_monitor_event(mon);
		if (ev == ZMQ_EVENT_HANDSHAKE_SUCCEEDED) {
			rc = 0;
			break;
		}
		if (ev == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH) {
			rc = -SHIRO_ERR_PERM;
			break;
		}
		if (ev == ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL ||
		    ev == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL) {
			rc = -SHIRO_ERR_PROTO;
			break;
		}
	}
out:
	if (mon != NULL && (rc < 0 || monp == NULL)) {
		(void)zmq_socket_monitor(sock, NULL, 0);
		zsock_zclose(mon);
		mon = NULL;
	}
	if (rc < 0) {
		zsock_zclose(sock);
		return rc;
	}
	*sockp = sock;
	if (monp != NULL)
		*monp = mon;
	return 0;
}

/* zsock_dealer_wait - a DEALER whose handshake succeeded. */
int
zsock_dealer_wait(const char *endpoint, const struct zsock_opts *opts,
    long timeout_ms, void **sockp)
{
	return zsock_dealer_watch(endpoint, opts, timeout_ms, sockp, NULL);
}

/* zsock_monitor_next - the next event of a DEALER's monitor. */
enum zsock_event
zsock_monitor_next(void *mon)
{
	int ev = zsock_monitor_event(mon);

	switch (ev) {
	case -1:
		return ZSOCK_EV_NONE;
	case ZMQ_EVENT_HANDSHAKE_SUCCEEDED:
		return ZSOCK_EV_UP;
	case ZMQ_EVENT_DISCONNECTED:
		return ZSOCK_EV_DOWN;
	case ZMQ_EVENT_HANDSHAKE_FAILED_AUTH:
		return ZSOCK_EV_REFUSED;
	case ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL:
	case ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL:
		return ZSOCK_EV_FAILED;
	default:
		return ZSOCK_EV_OTHER;
	}
}

/* zsock_close - close *sockp and set it to NULL. */
void
zsock_close(void **sockp)
{
	if (*sockp == NULL)
		return;
	zsock_zclose(*sockp);
	*sockp = NULL;
}

/* zsock_term - end the process-wide context. */
void
zsock_term(void)
{
	if (zsock_ctx == NULL)
		return;
	while (zmq_ctx_term(zsock_ctx) < 0 && errno == EINTR)
		;
	zsock_ctx = NULL;
}

/* zsock_done - flush and end the context if no socket is open. */
void
zsock_done(void)
{
	if (zsock_open_n == 0)
		zsock_term();
}

/* zsock_poll - wait for events on sockets and descriptors. */
int
zsock_poll(struct zsock_poll *items, int n, long timeout_ms)
{
	zmq_pollitem_t stack[16], *zi = stack;
	int k, rc;

	if (n < 0)
		return -SHIRO_ERR_INVAL;
	if (n > 16)
		zi = xreallocarray(NULL, (size_t)n, sizeof(*zi));
	for (k = 0; k < n; k++) {
		zi[k].socket = items[k].sock;
		zi[k].fd = items[k].fd;
		zi[k].events = 0;
		if (items[k].events & ZSOCK_IN)
			zi[k].events |= ZMQ_POLLIN;
		if (items[k].events & ZSOCK_OUT)
			zi[k].events |= ZMQ_POLLOUT;
		zi[k].revents = 0;
	}
	rc = zmq_poll(zi, n, timeout_ms);
	if (rc < 0) {
		rc = errno == EINTR ? -SHIRO_ERR_AGAIN : -SHIRO_ERR_IO;
		goto out;
	}
	for (k = 0; k < n; k++) {
		items[k].revents = 0;
		if (zi[k].revents & ZMQ_POLLIN)
			items[k].revents |= ZSOCK_IN;
		if (zi[k].revents & ZMQ_POLLOUT)
			items[k].revents |= ZSOCK_OUT;
		if (zi[k].revents & ZMQ_POLLERR)
			items[k].revents |= ZSOCK_ERR;
	}
out:
	if (zi != stack)
		free(zi);
	return rc;
}

/* zsock_now_ms - a monotonic clock in milliseconds. */
long long
zsock_now_ms(void)
{
	return (long long)mono_ms();
}

/* zsock_keypair - a fresh CURVE key pair. */
int
zsock_keypair(struct zsock_keypair *kp)
{
	if (zmq_curve_keypair(kp->pub, kp->sec) != 0) {
		log_warnx("zmq_curve_keypair: %s", zmq_strerror(errno));
		return -SHIRO_ERR_UNSUPP;
	}
	return 0;
}

/* zsock_z85_valid - whether s is a Z85 key: 40 characters of the
 * alphabet. */
static int
zsock_z85_valid(const char *s, size_t len)
{
	static const char alphabet[] = "0123456789abcdefghijklmnopqrstuvwxyz"
				       "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
				       ".-:+=^!/*?&<>()[]{}@%$#";
	size_t k;

	if (len != ZSOCK_KEY_Z85)
		return 0;
	for (k = 0; k < len; k++)
		if (s[k] == '\0' || strchr(alphabet, s[k]) == NULL)
			return 0;
	return 1;
}

/* zsock_key_public - the public key of a secret one. */
int
zsock_key_public(const char *sec, char pub[ZSOCK_KEY_Z85 + 1])
{
	if (sec == NULL || !zsock_z85_valid(sec, strlen(sec)) ||
	    zmq_curve_public(pub, sec) != 0)
		return -SHIRO_ERR_INVAL;
	return 0;
}

/* zsock_key_decode - the binary form of a Z85 key. */
int
zsock_key_decode(const char *z85, unsigned char bin[ZSOCK_KEY_BIN])
{
	if (z85 == NULL || !zsock_z85_valid(z85, strlen(z85)) ||
	    zmq_z85_decode(bin, z85) == NULL)
		return -SHIRO_ERR_INVAL;
	return 0;
}

/* zsock_key_encode - the Z85 form of a binary key. */
void
zsock_key_encode(
    const unsigned char bin[ZSOCK_KEY_BIN], char z85[ZSOCK_KEY_Z85 + 1])
{
	if (zmq_z85_encode(z85, bin, ZSOCK_KEY_BIN) == NULL)
		z85[0] = '\0';
}

/* zsock_cred_write - write c to fd as one short text. */
int
zsock_cred_write(int fd, const struct zsock_cred *c)
{
	char text[256];
	int n;
	ssize_t w;

	n = snprintf(text, sizeof(text),
	    ZSOCK_CRED_HEAD "server %s\npublic %s\nsecret %s\n", c->server,
	    c->own.pub, c->own.sec);
	if (n < 0 || (size_t)n >= sizeof(text))
		return -SHIRO_ERR_INVAL;
	do
		w = write(fd, text, (size_t)n);
	while (w < 0 && errno == EINTR);
	explicit_bzero(text, sizeof(text));
	return w == n ? 0 : -SHIRO_ERR_IO;
}

/* zsock_key_field - the line "LABEL<key>\n" at *pp. */
int
zsock_key_field(const char **pp, const char *end, const char *label,
    char out[ZSOCK_KEY_Z85 + 1])
{
	unsigned char bin[ZSOCK_KEY_BIN];
	size_t ll = strlen(label);
	const char *p = *pp;

	if ((size_t)(end - p) < ll + ZSOCK_KEY_Z85 + 1 ||
	    memcmp(p, label, ll) != 0 ||
	    !zsock_z85_valid(p + ll, ZSOCK_KEY_Z85) ||
	    p[ll + ZSOCK_KEY_Z85] != '\n')
		return -SHIRO_ERR_PROTO;
	memcpy(out, p + ll, ZSOCK_KEY_Z85);
	out[ZSOCK_KEY_Z85] = '\0';
	if (zsock_key_decode(out, bin) < 0) {
		out[0] = '\0';
		return -SHIRO_ERR_PROTO;
	}
	*pp = p + ll + ZSOCK_KEY_Z85 + 1;
	return 0;
}

/* zsock_cred_read - read and check a credential from fd. */
int
zsock_cred_read(int fd, struct zsock_cred *c)
{
	char text[512], derived[ZSOCK_KEY_Z85 + 1];
	const char *p = text, *end;
	size_t len = 0, hl = strlen(ZSOCK_CRED_HEAD);
	ssize_t n;
	int rc = -SHIRO_ERR_PROTO;

	memset(c, 0, sizeof(*c));
	/* Up to the end of the pipe, bounded: a longer text is wrong. */
	while (len < sizeof(text)) {
		n = read(fd, text + len, sizeof(text) - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = -SHIRO_ERR_IO;
			goto out;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	end = text + len;
	if (len == sizeof(text) || len < hl ||
	    memcmp(text, ZSOCK_CRED_HEAD, hl))
		goto out;
	p += hl;
	if (zsock_key_field(&p, end, "server ", c->server) < 0 ||
	    zsock_key_field(&p, end, "public ", c->own.pub) < 0 ||
	    zsock_key_field(&p, end, "secret ", c->own.sec) < 0 || p != end)
		goto out;
	/* The public key must be the secret key's. */
	if (zmq_curve_public(derived, c->own.sec) != 0 ||
	    strcmp(derived, c->own.pub) != 0)
		goto out;
	rc = 0;
out:
	explicit_bzero(text, sizeof(text));
	if (rc < 0)
		explicit_bzero(c, sizeof(*c));
	return rc;
}

/* zsock_zap_open - the ZAP handler's REP socket. */
int
zsock_zap_open(void **sockp)
{
	void *sock;
	int rc;

	if ((rc = zsock_make(ZMQ_REP, NULL, &sock)) < 0)
		return rc;
	if (zmq_bind(sock, ZSOCK_ZAP_ENDPOINT) < 0) {
		log_warnx(
		    "bind %s: %s", ZSOCK_ZAP_ENDPOINT, zmq_strerror(errno));
		zsock_zclose(sock);
		return -SHIRO_ERR_EXIST;
	}
	*sockp = sock;
	return 0;
}

/* zsock_zap_text - copy frame f (at most max bytes, no NUL) as a string. */
static int
zsock_zap_text(zmq_msg_t *f, char *out, size_t max)
{
	size_t len = zmq_msg_size(f);

	if (len > max || memchr(zmq_msg_data(f), '\0', len) != NULL)
		return -SHIRO_ERR_PROTO;
	memcpy(out, zmq_msg_data(f), len);
	out[len] = '\0';
	return 0;
}

/* zsock_zap_parse - the fields of a request's frames (f[0..n)). */
static int
zsock_zap_parse(zmq_msg_t *f, size_t n, struct zsock_zap_req *req)
{
	char version[4];

	/* version, request id, domain, address, identity, mechanism, and
	 * for CURVE one frame with the client's public key. */
	if (n < 6 || zsock_zap_text(&f[0], version, 3) < 0 ||
	    strcmp(version, "1.0") != 0)
		return -SHIRO_ERR_PROTO;
	if (zsock_zap_text(&f[2], req->domain, ZSOCK_ZAP_FIELD) < 0 ||
	    zsock_zap_text(&f[3], req->address, ZSOCK_ZAP_FIELD) < 0 ||
	    zsock_zap_text(&f[5], req->mechanism, sizeof(req->mechanism) - 1) <
		0)
		return -SHIRO_ERR_PROTO;
	if (strcmp(req->mechanism, "NULL") == 0)
		return n == 6 ? 0 : -SHIRO_ERR_PROTO;
	if (strcmp(req->mechanism, "CURVE") == 0) {
		if (n != 7 || zmq_msg_size(&f[6]) != ZSOCK_KEY_BIN)
			return -SHIRO_ERR_PROTO;
		memcpy(req->key, zmq_msg_data(&f[6]), ZSOCK_KEY_BIN);
		req->has_key = 1;
		return 0;
	}
	/* PLAIN and GSSAPI carry a password or a ticket: never ours. */
	return n <= 8 ? 0 : -SHIRO_ERR_PROTO;
}

/* zsock_zap_recv - read one ZAP request without blocking. */
int
zsock_zap_recv(void *sock, struct zsock_zap_req *req)
{
	zmq_msg_t f[8], spare;
	size_t n = 0, extra = 0;
	int more, rc, flags = ZMQ_DONTWAIT;

	memset(req, 0, sizeof(*req));
	for (;;) {
		zmq_msg_t *m = n < 8 ? &f[n] : &spare;

		zmq_msg_init(m);
		if (zmq_msg_recv(m, sock, flags) < 0) {
			int e = errno;

			zmq_msg_close(m);
			rc = n == 0 && (e == EAGAIN || e == EINTR)
			    ? -SHIRO_ERR_AGAIN
			    : -SHIRO_ERR_IO;
			goto out;
		}
		flags = 0;
		more = zmq_msg_more(m);
		if (m == &spare) {
			zmq_msg_close(m);
			extra++;
		} else {
			n++;
		}
		if (!more || n + extra > 64)
			break;
	}
	if (n >= 2 && zmq_msg_size(&f[1]) <= sizeof(req->id)) {
		req->idlen = zmq_msg_size(&f[1]);
		memcpy(req->id, zmq_msg_data(&f[1]), req->idlen);
	}
	if (more) {
		/* A request of more than 64 frames: drop the rest. */
		while (more) {
			zmq_msg_init(&spare);
			if (zmq_msg_recv(&spare, sock, 0) < 0) {
				zmq_msg_close(&spare);
				break;
			}
			more = zmq_msg_more(&spare);
			zmq_msg_close(&spare);
		}
		extra++;
	}
	rc = extra > 0 ? -SHIRO_ERR_PROTO : zsock_zap_parse(f, n, req);
	if (rc == -SHIRO_ERR_PROTO)
		(void)zsock_zap_reply(sock, req, 500, "malformed request", "");
out:
	while (n > 0)
		zmq_msg_close(&f[--n]);
	return rc;
}

/* zsock_zap_reply - answer a ZAP request. */
int
zsock_zap_reply(void *sock, const struct zsock_zap_req *req, int status,
    const char *text, const char *user_id)
{
	char code[8];

	snprintf(code, sizeof(code), "%03d", status);
	if (zmq_send(sock, "1.0", 3, ZMQ_SNDMORE) < 0 ||
	    zmq_send(sock, req->id, req->idlen, ZMQ_SNDMORE) < 0 ||
	    zmq_send(sock, code, 3, ZMQ_SNDMORE) < 0 ||
	    zmq_send(sock, text, strlen(text), ZMQ_SNDMORE) < 0 ||
	    zmq_send(sock, user_id, strlen(user_id), ZMQ_SNDMORE) < 0 ||
	    zmq_send(sock, "", 0, 0) < 0) {
		log_warnx("zap reply: %s", zmq_strerror(errno));
		return -SHIRO_ERR_IO;
	}
	return 0;
}
