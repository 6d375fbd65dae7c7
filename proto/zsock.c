/* zsock.c - ZeroMQ sockets with shiro's limits, and polling. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zmq.h>

#include "proto/err.h"
#include "proto/log.h"
#include "proto/mono.h"
#include "proto/msg.h"
#include "proto/xmalloc.h"
#include "proto/zsock.h"

static void *zsock_ctx;

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

/* zsock_make - a socket of type with the limits and options applied. */
static int
zsock_make(int type, const struct zsock_opts *opts, void **sockp)
{
	int64_t maxsize = MSG_MAX_FRAME;
	int hwm = 1000, linger = 200, hb = 1000, rc = 0;
	void *sock;

	*sockp = NULL;
	if (opts != NULL) {
		if (opts->hwm > 0)
			hwm = opts->hwm;
		if (opts->linger_ms > 0)
			linger = opts->linger_ms;
		if (opts->heartbeat_ms > 0)
			hb = opts->heartbeat_ms;
	}
	sock = zmq_socket(zsock_context(), type);
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
	    (rc = zsock_setint(sock, ZMQ_HEARTBEAT_IVL, hb)) < 0 ||
	    (rc = zsock_setint(sock, ZMQ_HEARTBEAT_TIMEOUT, 3 * hb)) < 0 ||
	    (rc = zsock_setint(sock, ZMQ_RECONNECT_IVL, 100)) < 0 ||
	    (rc = zsock_setint(sock, ZMQ_RECONNECT_IVL_MAX, 2000)) < 0)
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
out:
	if (rc < 0)
		zmq_close(sock);
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
		zmq_close(sock);
		return e == EADDRINUSE ? -SHIRO_ERR_EXIST : err_from_errno(e);
	}
	*sockp = sock;
	return 0;
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
		zmq_close(sock);
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

/* zsock_dealer_wait - a DEALER whose handshake succeeded. */
int
zsock_dealer_wait(const char *endpoint, const struct zsock_opts *opts,
    long timeout_ms, void **sockp)
{
	static unsigned seq;
	char addr[64];
	void *sock = NULL, *mon = NULL;
	long long end = zsock_now_ms() + timeout_ms;
	int rc, ev,
	    events = ZMQ_EVENT_HANDSHAKE_SUCCEEDED |
	    ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL |
	    ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL |
	    ZMQ_EVENT_HANDSHAKE_FAILED_AUTH;

	*sockp = NULL;
	if ((rc = zsock_make(ZMQ_DEALER, opts, &sock)) < 0)
		return rc;
	/* The monitor's peer is connected before the connection starts,
	 * so that no event is lost (inproc makes no file descriptor). */
	snprintf(addr, sizeof(addr), "inproc://shiro-handshake-%u", seq++);
	rc = -SHIRO_ERR_IO;
	if (zmq_socket_monitor(sock, addr, events) < 0 ||
	    (mon = zmq_socket(zsock_context(), ZMQ_PAIR)) == NULL ||
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
	if (mon != NULL) {
		(void)zmq_socket_monitor(sock, NULL, 0);
		zmq_close(mon);
	}
	if (rc < 0)
		zmq_close(sock);
	else
		*sockp = sock;
	return rc;
}

/* zsock_close - close *sockp and set it to NULL. */
void
zsock_close(void **sockp)
{
	if (*sockp == NULL)
		return;
	zmq_close(*sockp);
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
