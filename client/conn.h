/*
 * conn.h - the client's connection to shirod: a DEALER socket, requests
 * matched to their answers by rid, events, and heartbeats.
 *
 * The daemon counts as dead when nothing at all (answer, event or PONG)
 * has come from it for dead_ms; while it waits, a connection sends PING
 * every SHIRO_PING_MS so that a live but idle daemon always says
 * something.  Events that arrive while a request waits for its answer go
 * to the handler, in order, and advance last_seq.
 */
#ifndef SHIRO_CLIENT_CONN_H
#define SHIRO_CLIENT_CONN_H

#include <signal.h>
#include <stdint.h>
#include <sys/types.h>

#include "proto/msg.h"

/*
 * What a connection does with each EVENT, and with each ACK, REPLY or
 * ERROR that no request is waiting for (a turn's SEND is answered by an
 * ACK, and its outcome may come later as an ERROR with the same rid).
 */
struct conn_handler {
	void (*event)(void *arg, const struct msg *ev);
	void *arg;
};

struct conn {
	void *sock; /* the DEALER */
	char *endpoint; /* where it connects */
	uint64_t next_rid; /* the rid of the next request */
	uint64_t last_seq; /* the last event's sequence number */
	long long last_heard; /* when the daemon last said anything */
	long long last_ping; /* when the last PING went out */
	int dead_ms; /* silence that means the daemon is dead */
	pid_t daemon_pid; /* from WELCOME */
	int replay; /* WELCOME said the missed events follow */
	struct conn_handler handler; /* events; may be NULL functions */
};

/*
 * conn_open - connect to endpoint and say HELLO with last_seq (0: none).
 * Returns 0 and *cp; -SHIRO_ERR_TIMEOUT when no WELCOME came within
 * dead_ms; -SHIRO_ERR_PROTO for a daemon that speaks another protocol
 * revision (the text is logged); -SHIRO_ERR_IO for a socket error.
 */
int conn_open(const char *endpoint, int dead_ms, uint64_t last_seq,
    const struct conn_handler *h, struct conn **cp);

/*
 * conn_request - send req (its rid is set here) and wait for the answer
 * with that rid: ACK, REPLY, WELCOME, PONG or ERROR, returned in *replyp
 * (the caller destroys it).  An ERROR answer is returned as 0 too: look
 * at its type.  Returns -SHIRO_ERR_TIMEOUT when the daemon died (silent
 * for dead_ms) or when timeout_ms (-1: no limit) passed without the
 * answer, -SHIRO_ERR_CANCELED when a signal interrupted the wait and
 * *stop is set, -SHIRO_ERR_IO for a socket error.  A MEMORY without an
 * offset is answered with the whole view: when shirod's REPLY says a
 * next page follows, the pages after it are asked for (each within
 * timeout_ms) and their lines appended to the first REPLY's.
 */
int conn_request(struct conn *c, struct msg *req, long timeout_ms,
    volatile sig_atomic_t *stop, struct msg **replyp);

/*
 * conn_pump - wait up to timeout_ms for the daemon's messages (and, when
 * fd >= 0, for fd to become readable), handle them, and send a PING when
 * one is due.  Returns 1 when fd is readable, 0 otherwise;
 * -SHIRO_ERR_TIMEOUT once the daemon is dead; -SHIRO_ERR_AGAIN when a
 * signal interrupted the wait; -SHIRO_ERR_IO for a socket error.
 */
int conn_pump(struct conn *c, int fd, long timeout_ms);

/* conn_bye - tell the daemon this client leaves (best effort). */
void conn_bye(struct conn *c);

/* conn_close - close *cp's socket, free it and set *cp to NULL. */
void conn_close(struct conn **cp);

#endif
