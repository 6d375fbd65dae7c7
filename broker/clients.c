/*
 * clients.c - the attached clients and the replay ring (see clients.h).
 */
#include <stdlib.h>
#include <string.h>

#include "proto/err.h"
#include "proto/xmalloc.h"

#include "clients.h"
#include "timer.h"

/* clients_init - an empty registry with cfg's limits. */
void
clients_init(
    struct clients *c, const struct config_clients *cfg, unsigned idle_ms)
{
	memset(c, 0, sizeof(*c));
	c->max = cfg->max;
	c->rate = cfg->rate;
	c->burst = cfg->burst;
	c->idle_ms = idle_ms;
	c->ring_cap = cfg->replay > 0 ? cfg->replay : 1;
	c->ring = xcalloc(c->ring_cap, sizeof(*c->ring));
}

/* clients_free - forget every client and event. */
void
clients_free(struct clients *c)
{
	size_t k;

	for (k = 0; k < c->n; k++)
		free(c->v[k]);
	free(c->v);
	for (k = 0; k < c->ring_len; k++)
		msg_destroy(&c->ring[(c->ring_head + k) % c->ring_cap]);
	free(c->ring);
	memset(c, 0, sizeof(*c));
}

/* clients_find - the entry of ident, or NULL. */
struct clients_client *
clients_find(struct clients *c, const struct msg_ident *ident)
{
	size_t k;

	for (k = 0; k < c->n; k++) {
		struct clients_client *cl = c->v[k];

		if (cl->ident.len == ident->len &&
		    memcmp(cl->ident.data, ident->data, ident->len) == 0)
			return cl;
	}
	return NULL;
}

/* clients_get - the entry of ident, created at now if new. */
struct clients_client *
clients_get(struct clients *c, const struct msg_ident *ident, uint64_t now)
{
	struct clients_client *cl;

	cl = clients_find(c, ident);
	if (cl != NULL)
		return cl;
	if (c->n >= c->max)
		return NULL;
	cl = xcalloc(1, sizeof(*cl));
	cl->ident = *ident;
	cl->last_seen = now;
	cl->tokens = (uint64_t)c->burst * 1000;
	cl->refill_at = now;
	if (c->n == c->cap) {
		c->cap = c->cap ? 2 * c->cap : 8;
		c->v = xreallocarray(c->v, c->cap, sizeof(*c->v));
	}
	c->v[c->n++] = cl;
	return cl;
}

/* clients_admit - take one message from cl's bucket at now. */
int
clients_admit(struct clients *c, struct clients_client *cl, uint64_t now)
{
	uint64_t full = (uint64_t)c->burst * 1000;

	cl->last_seen = now;
	if (now > cl->refill_at) {
		/* rate messages per second = rate thousandths per ms. */
		uint64_t add = timer_since(now, cl->refill_at) * c->rate;

		cl->tokens = add >= full - cl->tokens ? full : cl->tokens + add;
		cl->refill_at = now;
	}
	if (cl->tokens < 1000) {
		cl->refused++;
		return -SHIRO_ERR_AGAIN;
	}
	cl->tokens -= 1000;
	cl->refused = 0;
	cl->received++;
	return 0;
}

/* clients_drop - forget cl (it is freed). */
void
clients_drop(struct clients *c, struct clients_client *cl)
{
	size_t k;

	for (k = 0; k < c->n; k++) {
		if (c->v[k] == cl) {
			free(cl);
			c->v[k] = c->v[--c->n];
			return;
		}
	}
}

/* clients_expire - forget clients silent since before now - idle_ms. */
unsigned
clients_expire(struct clients *c, uint64_t now)
{
	unsigned dropped = 0;
	size_t k = 0;

	while (k < c->n) {
		if (timer_since(now, c->v[k]->last_seen) > c->idle_ms) {
			free(c->v[k]);
			c->v[k] = c->v[--c->n];
			dropped++;
		} else {
			k++;
		}
	}
	return dropped;
}

/* clients_publish - number the event and keep it in the ring. */
const struct msg *
clients_publish(struct clients *c, struct msg **evp)
{
	struct msg *ev = *evp;
	size_t slot;

	*evp = NULL;
	msg_set_int(ev, "seq", (int64_t)++c->seq);
	if (c->ring_len == c->ring_cap) {
		msg_destroy(&c->ring[c->ring_head]);
		c->ring_head = (c->ring_head + 1) % c->ring_cap;
		c->ring_len--;
	}
	slot = (c->ring_head + c->ring_len) % c->ring_cap;
	c->ring[slot] = ev;
	c->ring_len++;
	return ev;
}

/* clients_replay - call fn for every kept event after last_seq. */
int
clients_replay(struct clients *c, uint64_t last_seq,
    void (*fn)(void *arg, const struct msg *ev), void *arg)
{
	uint64_t first = c->seq - c->ring_len + 1; /* oldest kept */
	size_t k;

	if (last_seq > c->seq || last_seq + 1 < first)
		return -SHIRO_ERR_NOENT;
	for (k = (size_t)(last_seq + 1 - first); fn && k < c->ring_len; k++)
		fn(arg, c->ring[(c->ring_head + k) % c->ring_cap]);
	return 0;
}

/* clients_attached - the number of attached clients. */
size_t
clients_attached(const struct clients *c)
{
	size_t k, n = 0;

	for (k = 0; k < c->n; k++)
		n += c->v[k]->attached != 0;
	return n;
}
