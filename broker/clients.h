/*
 * clients.h - the clients attached to shirod, and the events they get.
 *
 * A client is known by its ZeroMQ routing identity.  It gets an entry on
 * its first message; the entry is forgotten after BYE, when the client
 * stays silent longer than the idle limit, when sending to it fails, or
 * when it keeps exceeding its rate.  Only entries that said HELLO are
 * "attached" and receive events.
 *
 * Every event gets the next sequence number and is kept in a bounded
 * ring, so that a client that reconnects with the last number it saw gets
 * what it missed, or learns that the ring no longer reaches back that far.
 *
 * Fairness: each client has a token bucket (clients.rate per second, up
 * to clients.burst); a message that finds the bucket empty is refused.
 * ZeroMQ's ROUTER already reads its peers' queues in turn, and the broker
 * reads at most clients.perRound messages per poll round, so a flooding
 * client costs the others at most its share of one round.
 */
#ifndef SHIRO_BROKER_CLIENTS_H
#define SHIRO_BROKER_CLIENTS_H

#include <stddef.h>
#include <stdint.h>

#include "proto/msg.h"

#include "config.h"

struct clients_client {
	struct msg_ident ident;
	char name[129]; /* the client's own name, from HELLO */
	int attached; /* said HELLO: gets events */
	uint64_t last_seen;
	uint64_t tokens; /* rate bucket, in thousandths of a message */
	uint64_t refill_at;
	uint64_t received; /* messages accepted */
	uint64_t refused; /* messages refused for rate, in a row */
	uint64_t warned_at;
};

struct clients {
	struct clients_client **v;
	size_t n, cap;
	unsigned max, rate, burst;
	unsigned idle_ms;
	/* The replay ring: events seq - len + 1 .. seq, oldest at head. */
	struct msg **ring;
	size_t ring_cap, ring_len, ring_head;
	uint64_t seq; /* the last sequence number given; 0 = none yet */
};

/* clients_init - an empty registry with cfg's limits. */
void clients_init(
    struct clients *c, const struct config_clients *cfg, unsigned idle_ms);

/* clients_free - forget every client and event. */
void clients_free(struct clients *c);

/*
 * clients_get - the entry of ident, created at now if new.  NULL when it
 * is new and the registry already holds clients.max entries.  Borrowed
 * until clients_drop() or clients_expire().
 */
struct clients_client *clients_get(
    struct clients *c, const struct msg_ident *ident, uint64_t now);

/* clients_find - the entry of ident, or NULL. */
struct clients_client *clients_find(
    struct clients *c, const struct msg_ident *ident);

/*
 * clients_admit - take one message from cl's bucket at now: 0, or
 * -SHIRO_ERR_AGAIN when the bucket is empty (refuse the message).
 */
int clients_admit(struct clients *c, struct clients_client *cl, uint64_t now);

/* clients_drop - forget cl (it is freed). */
void clients_drop(struct clients *c, struct clients_client *cl);

/* clients_expire - forget clients silent since before now - idle_ms. */
unsigned clients_expire(struct clients *c, uint64_t now);

/*
 * clients_publish - give the event *evp the next sequence number (its
 * "seq" key) and keep it in the ring; takes ownership (*evp is set to
 * NULL).  Returns the stored event (borrowed, valid until the ring drops
 * it, at the latest at the next clients_publish()).
 */
const struct msg *clients_publish(struct clients *c, struct msg **evp);

/*
 * clients_replay - call fn for every kept event after last_seq, oldest
 * first.  0, or -SHIRO_ERR_NOENT when events after last_seq are no longer
 * all kept (or last_seq is in the future): then fn is not called.
 * fn may be NULL, to ask only whether a replay is possible.
 */
int clients_replay(struct clients *c, uint64_t last_seq,
    void (*fn)(void *arg, const struct msg *ev), void *arg);

/* clients_attached - the number of attached clients. */
size_t clients_attached(const struct clients *c);

#endif
