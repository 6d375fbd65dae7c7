/*
 * zsock.h - ZeroMQ sockets with shiro's limits, and polling.
 *
 * Only proto/ includes zmq.h: the broker, the workers and the client make
 * and poll their sockets through these calls.  Sockets are void * as in
 * libzmq.  Every socket made here has ZMQ_MAXMSGSIZE = MSG_MAX_FRAME (a
 * larger frame makes libzmq drop the connection, so it never reaches our
 * decoder), a short linger, bounded queues, and ZMTP heartbeats so that a
 * dead tcp peer is noticed; ROUTER sockets report an unknown or gone peer
 * (ZMQ_ROUTER_MANDATORY) instead of dropping the message silently.
 */
#ifndef SHIRO_ZSOCK_H
#define SHIRO_ZSOCK_H

#include <stddef.h>

/* Socket options beyond the defaults; zero fields keep the default. */
struct zsock_opts {
	int hwm; /* queue length each way, default 1000 messages */
	int linger_ms; /* on close, default 200 ms */
	int heartbeat_ms; /* ZMTP ping interval, default 1000 ms */
	const char *identity; /* DEALER routing identity, default random */
};

/* zsock_router - a ROUTER bound to endpoint ("ipc:///.../x.sock"). */
int zsock_router(
    const char *endpoint, const struct zsock_opts *opts, void **sockp);

/* zsock_dealer - a DEALER connected to endpoint (reconnects by itself). */
int zsock_dealer(
    const char *endpoint, const struct zsock_opts *opts, void **sockp);

/*
 * zsock_dealer_wait - a DEALER connected to endpoint like zsock_dealer,
 * returned only once its connection's handshake succeeded (ZeroMQ's
 * socket monitor reports it for every mechanism): -SHIRO_ERR_TIMEOUT
 * after timeout_ms without one, -SHIRO_ERR_PERM when the peer refused
 * the handshake (authentication), -SHIRO_ERR_PROTO when it failed
 * otherwise.  A worker waits so before it locks itself down, after
 * which it can make no new connection.
 */
int zsock_dealer_wait(const char *endpoint, const struct zsock_opts *opts,
    long timeout_ms, void **sockp);

/* zsock_close - close *sockp (NULL is fine) and set it to NULL. */
void zsock_close(void **sockp);

/*
 * zsock_term - end the process-wide ZeroMQ context, after every socket is
 * closed; the next zsock_router/dealer makes a new one.  A child forked
 * from a process with sockets must not call any zsock function (nor this
 * one): it execs or _exits without touching ZeroMQ.
 */
void zsock_term(void);

/* Events for zsock_poll. */
#define ZSOCK_IN 1
#define ZSOCK_OUT 2
#define ZSOCK_ERR 4

/* One item to poll: a socket made here, or a file descriptor (sock NULL). */
struct zsock_poll {
	void *sock;
	int fd;
	short events;
	short revents;
};

/*
 * zsock_poll - wait up to timeout_ms (-1: forever) for events on items.
 * Returns the number of items with events, 0 on timeout,
 * -SHIRO_ERR_AGAIN when a signal interrupted the wait, -SHIRO_ERR_IO.
 */
int zsock_poll(struct zsock_poll *items, int n, long timeout_ms);

/* zsock_now_ms - a monotonic clock in milliseconds, for timers. */
long long zsock_now_ms(void);

#endif
