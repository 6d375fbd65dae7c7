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

/* CURVE keys: Z85 text (40 characters) as libzmq takes them, or binary. */
#define ZSOCK_KEY_Z85 40
#define ZSOCK_KEY_BIN 32

/* A CURVE key pair in Z85 text; the secret half is wiped by its owner. */
struct zsock_keypair {
	char pub[ZSOCK_KEY_Z85 + 1];
	char sec[ZSOCK_KEY_Z85 + 1];
};

/*
 * A peer's credential for a CURVE server: the server's public key, which
 * the peer checks, and the peer's own key pair, which the server's ZAP
 * handler checks.  shirod hands one to each worker it starts, over an
 * inherited pipe (zsock_cred_write, zsock_cred_read).
 */
struct zsock_cred {
	char server[ZSOCK_KEY_Z85 + 1];
	struct zsock_keypair own;
};

/* Socket options beyond the defaults; zero fields keep the default. */
struct zsock_opts {
	int hwm; /* queue length each way, default 1000 messages */
	int linger_ms; /* on close, default 200 ms */
	/* ZMTP ping interval, default 1000 ms (libzmq closes a connection
	 * that is silent for 3 of them).  Negative: no ZMTP pings from this
	 * side; the kernel's TCP keepalive and user timeout close a dead
	 * tcp connection instead (about 5 s), and a live peer that reads
	 * nothing is never closed for it (see zsock.c). */
	int heartbeat_ms;
	const char *identity; /* DEALER routing identity, default random */
	/*
	 * ROUTER: with zap_domain set, every connection is put to the ZAP
	 * handler (zsock_zap_open) before any message of it is read, and
	 * one that the handler refuses never gets through.  With
	 * curve_secret set too, the ROUTER is a CURVE server with that
	 * secret key (Z85): a peer must speak CURVE, and the handler sees
	 * its public key.  Without curve_secret, the NULL mechanism: the
	 * handler sees the peer's address (for ipc ":uid:gid:pid").
	 */
	const char *zap_domain;
	const char *curve_secret;
	/* DEALER: be a CURVE client with this credential (copied). */
	const struct zsock_cred *curve;
	/* DEALER: the first reconnection's delay, doubling up to the
	 * maximum (defaults 100 ms and 2 s). */
	int reconnect_ms, reconnect_max_ms;
	/* A connection's handshake must end within this (default 30 s). */
	int handshake_ms;
};

/* zsock_router - a ROUTER bound to endpoint ("ipc:///.../x.sock"). */
int zsock_router(
    const char *endpoint, const struct zsock_opts *opts, void **sockp);

/*
 * zsock_bind - bind the ROUTER sock to one more endpoint, with opts's
 * zap_domain, curve_secret and handshake_ms for the connections made
 * there (libzmq takes a socket's options at each bind, so endpoints
 * bound before keep theirs; the options stay set for later binds).
 * bound (may be NULL) gets the endpoint as bound, with the port the
 * kernel chose for ":0" or ":*".  0, -SHIRO_ERR_EXIST (in use), or
 * another negative SHIRO_ERR_*.
 */
int zsock_bind(void *sock, const char *endpoint, const struct zsock_opts *opts,
    char *bound, size_t boundlen);

/*
 * zsock_unbind - stop listening on endpoint (as zsock_bind returned it);
 * every connection accepted there is closed.  0 or -SHIRO_ERR_NOENT.
 */
int zsock_unbind(void *sock, const char *endpoint);

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

/*
 * zsock_dealer_watch - zsock_dealer_wait, keeping the socket monitor it
 * waited with in *monp: from then on zsock_monitor_next tells each time
 * the connection goes down or its handshake succeeds again (libzmq
 * reconnects a tcp DEALER by itself).  A process that can make no new
 * socket later (a worker after its lockdown) has the monitor made now.
 * The caller closes *monp before *sockp.
 */
int zsock_dealer_watch(const char *endpoint, const struct zsock_opts *opts,
    long timeout_ms, void **sockp, void **monp);

/* What a monitor from zsock_dealer_watch reports. */
enum zsock_event {
	ZSOCK_EV_NONE, /* nothing (more) waiting */
	ZSOCK_EV_UP, /* a connection's handshake succeeded */
	ZSOCK_EV_DOWN, /* the connection was lost */
	ZSOCK_EV_REFUSED, /* the peer refused this socket's key */
	ZSOCK_EV_FAILED, /* a handshake failed otherwise */
	ZSOCK_EV_OTHER /* another event: ignore it */
};

/* zsock_monitor_next - the next event of mon without waiting. */
enum zsock_event zsock_monitor_next(void *mon);

/* zsock_close - close *sockp (NULL is fine) and set it to NULL. */
void zsock_close(void **sockp);

/*
 * zsock_term - end the process-wide ZeroMQ context, after every socket is
 * closed; the next zsock_router/dealer makes a new one.  A child forked
 * from a process with sockets must not call any zsock function (nor this
 * one): it execs or _exits without touching ZeroMQ.
 */
void zsock_term(void);

/*
 * zsock_done - at a process's end: when every socket is closed, end the
 * context, which first delivers what the closed sockets still queue (a
 * client's BYE, each socket for at most its linger); when some socket is
 * still open, nothing (zsock_term would wait for it for ever).
 */
void zsock_done(void);

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

/* zsock_keypair - a fresh CURVE key pair: 0 or -SHIRO_ERR_UNSUPP. */
int zsock_keypair(struct zsock_keypair *kp);

/*
 * zsock_key_public - the public key (Z85) of the secret key sec (Z85):
 * 0, or -SHIRO_ERR_INVAL when sec is not a key.
 */
int zsock_key_public(const char *sec, char pub[ZSOCK_KEY_Z85 + 1]);

/*
 * zsock_key_decode - the binary form of a Z85 key: 0, or -SHIRO_ERR_INVAL
 * when z85 is not 40 characters of the Z85 alphabet.
 */
int zsock_key_decode(const char *z85, unsigned char bin[ZSOCK_KEY_BIN]);

/*
 * zsock_key_field - the line "LABEL<40 characters of Z85>\n" at *pp
 * (text up to end): the key into out and *pp past the line, or
 * -SHIRO_ERR_PROTO when it is not that.  For the small key texts of
 * shiro (the credential, keys.h's files).
 */
int zsock_key_field(const char **pp, const char *end, const char *label,
    char out[ZSOCK_KEY_Z85 + 1]);

/* zsock_key_encode - the Z85 form of a binary key. */
void zsock_key_encode(
    const unsigned char bin[ZSOCK_KEY_BIN], char z85[ZSOCK_KEY_Z85 + 1]);

/*
 * zsock_cred_write - write c to fd as one short text (under PIPE_BUF, so
 * one write into an empty pipe never blocks): 0 or -SHIRO_ERR_IO.
 */
int zsock_cred_write(int fd, const struct zsock_cred *c);

/*
 * zsock_cred_read - read a credential from fd up to its end (the writer
 * closed it) into *c.  Strict: exactly the text zsock_cred_write writes,
 * keys of the Z85 alphabet, and a public key that belongs to the secret
 * one.  0, -SHIRO_ERR_IO (read failed), -SHIRO_ERR_PROTO (anything else;
 * *c is then wiped).  The caller closes fd and wipes *c when done.
 */
int zsock_cred_read(int fd, struct zsock_cred *c);

/*
 * ZAP (ZeroMQ's RFC 27), the handler side.  One REP socket per process,
 * bound to inproc://zeromq.zap.01, answers libzmq's questions about the
 * connections to every ROUTER made with a zap_domain: open it before
 * binding those ROUTERs and close it after closing them, so that no
 * connection is ever let through without an answer.  Every request must
 * be answered (zsock_zap_reply) before the next one is read.
 */
#define ZSOCK_ZAP_FIELD 255 /* bytes of a domain, address or user id */

struct zsock_zap_req {
	char domain[ZSOCK_ZAP_FIELD + 1];
	char address[ZSOCK_ZAP_FIELD + 1]; /* tcp "ip"; ipc ":uid:gid:pid" */
	char mechanism[8]; /* "NULL" or "CURVE" ("PLAIN" is refused) */
	unsigned char key[ZSOCK_KEY_BIN]; /* CURVE: the peer's public key */
	int has_key;
	unsigned char id[ZSOCK_ZAP_FIELD]; /* the request id, echoed */
	size_t idlen;
};

/* zsock_zap_open - the handler's REP socket: 0 or a negative SHIRO_ERR_*. */
int zsock_zap_open(void **sockp);

/*
 * zsock_zap_recv - read one request without blocking: 0 and *req,
 * -SHIRO_ERR_AGAIN when none waits, -SHIRO_ERR_PROTO when one arrived
 * that does not follow RFC 27 (it has been answered with 500 already),
 * -SHIRO_ERR_IO on a socket error.
 */
int zsock_zap_recv(void *sock, struct zsock_zap_req *req);

/*
 * zsock_zap_reply - answer req: status 200 (admit, with user_id, which
 * then comes with every message of that connection, see msg_recv_user),
 * 400 (refuse) or 500; text is a short reason.  0 or -SHIRO_ERR_IO.
 */
int zsock_zap_reply(void *sock, const struct zsock_zap_req *req, int status,
    const char *text, const char *user_id);

#endif
