/*
 * conn.h - the client's connection to shirod: a DEALER socket, requests
 * matched to their answers by rid, events, and heartbeats.
 *
 * The daemon counts as dead when nothing at all (answer, event or PONG)
 * has come from it for dead_ms; while it waits, a connection sends PING
 * every SHIRO_PING_MS so that a live but idle daemon always says
 * something.  Events that arrive while a request waits for its answer go
 * to the handler, in order, and advance last_seq.  A PONG whose seq is
 * past last_seq means this client missed events (shirod forgot it: its
 * connection was closed and made again, or its queue was full): the
 * connection says HELLO again with last_seq, and the events it missed
 * follow, as after a reconnection.
 *
 * A tcp endpoint (a shirod on another machine, docs/remote.md) is
 * reached over CURVE with a credential: shirod's public key and this
 * client's own key pair.
 */
#ifndef SHIRO_CLIENT_CONN_H
#define SHIRO_CLIENT_CONN_H

#include <signal.h>
#include <stdint.h>
#include <sys/types.h>

#include "proto/msg.h"
#include "proto/zsock.h"

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
	int catching_up; /* a HELLO for missed events is on its way */
	uint64_t rehellos; /* HELLOs sent again for missed events */
	struct conn_handler handler; /* events; may be NULL functions */
};

/*
 * conn_open - connect to endpoint and say HELLO with last_seq (0: none);
 * with cred (for a tcp endpoint), over CURVE.  Returns 0 and *cp;
 * -SHIRO_ERR_TIMEOUT when no WELCOME came within dead_ms (over tcp: or
 * no handshake); -SHIRO_ERR_PERM when shirod refused this client's key;
 * -SHIRO_ERR_FAILED when the handshake failed (a wrong server key);
 * -SHIRO_ERR_PROTO for a daemon that speaks another protocol revision
 * (the text is logged); -SHIRO_ERR_IO for a socket error.
 */
int conn_open(const char *endpoint, const struct zsock_cred *cred, int dead_ms,
    uint64_t last_seq, const struct conn_handler *h, struct conn **cp);

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

/* The length of a token, with its NUL: 32 hex digits. */
#define CONN_TOKEN_LEN 33

/* conn_token - 16 random bytes in hex (an idempotency key, a routing
 * identity); unique enough from the clock and pid without getrandom. */
void conn_token(char out[CONN_TOKEN_LEN]);

/* conn_bye - tell the daemon this client leaves (best effort). */
void conn_bye(struct conn *c);

/* conn_close - close *cp's socket, free it and set *cp to NULL. */
void conn_close(struct conn **cp);

#endif
