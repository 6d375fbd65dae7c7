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
