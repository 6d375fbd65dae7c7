/*
 * gate.c - the prefix gate (see gate.h).
 */
#include <stdlib.h>
#include <string.h>

#include "proto/xmalloc.h"

#include "gate.h"
#include "timer.h"

/* gate_init - an empty gate. */
void
gate_init(struct gate *g, uint64_t life_ms)
{
	memset(g, 0, sizeof(*g));
	g->life_ms = life_ms;
}

/* gate_free - release g's memory. */
void
gate_free(struct gate *g)
{
	free(g->v);
	memset(g, 0, sizeof(*g));
}

/* gate_find - the entry of key, or NULL. */
static struct gate_entry *
gate_find(struct gate *g, uint64_t key)
{
	size_t k;

	for (k = 0; k < g->n; k++)
		if (g->v[k].key == key)
			return &g->v[k];
	return NULL;
}

/* gate_live - e is cached and its entry has not expired at now. */
static int
gate_live(const struct gate *g, const struct gate_entry *e, uint64_t now)
{
	return e->cached && timer_since(now, e->used_at) <= g->life_ms;
}

/* gate_prune - drop entries nobody writes and whose life is over. */
static void
gate_prune(struct gate *g, uint64_t now)
{
	size_t k = 0;

	while (k < g->n) {
		if (g->v[k].writer == 0 && !gate_live(g, &g->v[k], now))
			g->v[k] = g->v[--g->n];
		else
			k++;
	}
}

/* gate_may_go - whether no other call is writing one of keys. */
int
gate_may_go(struct gate *g, const uint64_t *keys, size_t n, uint64_t now)
{
	struct gate_entry *e;
	size_t k;

	for (k = 0; k < n; k++) {
		e = gate_find(g, keys[k]);
		if (e != NULL && e->writer != 0 && !gate_live(g, e, now))
			return 0;
	}
	return 1;
}

/* gate_sent - call marks keys: writes the unknown ones. */
void
gate_sent(
    struct gate *g, uint64_t call, const uint64_t *keys, size_t n, uint64_t now)
{
	struct gate_entry *e;
	size_t k;

	if (g->n >= 256)
		gate_prune(g, now);
	for (k = 0; k < n; k++) {
		e = gate_find(g, keys[k]);
		if (e == NULL) {
			if (g->n == g->cap) {
				g->cap = g->cap ? 2 * g->cap : 16;
				g->v =
				    xreallocarray(g->v, g->cap, sizeof(*g->v));
			}
			e = &g->v[g->n++];
			memset(e, 0, sizeof(*e));
			e->key = keys[k];
		}
		if (gate_live(g, e, now))
			e->used_at = now;
		else if (e->writer == 0)
			e->writer = call;
	}
}

/* gate_started - call's keys are cached now. */
int
gate_started(struct gate *g, uint64_t call, uint64_t now)
{
	size_t k;
	int released = 0;

	for (k = 0; k < g->n; k++) {
		if (g->v[k].writer != call)
			continue;
		g->v[k].writer = 0;
		g->v[k].cached = 1;
		g->v[k].used_at = now;
		released = 1;
	}
	return released;
}

/* gate_done - call writes nothing any more. */
int
gate_done(struct gate *g, uint64_t call)
{
	size_t k;
	int released = 0;

	for (k = 0; k < g->n; k++) {
		if (g->v[k].writer == call) {
			g->v[k].writer = 0;
			released = 1;
		}
	}
	return released;
}

/* gate_unread - the marked prefix's bytes past the longest cached one. */
size_t
gate_unread(const struct gate *g, const uint64_t *keys, const size_t *bytes,
    size_t n, uint64_t now)
{
	size_t j, k;

	if (n == 0)
		return 0;
	for (j = n; j-- > 0;)
		for (k = 0; k < g->n; k++)
			if (g->v[k].key == keys[j] &&
			    gate_live(g, &g->v[k], now))
				return bytes[n - 1] - bytes[j];
	return bytes[n - 1];
}

/* gate_writing - keys being written. */
size_t
gate_writing(const struct gate *g)
{
	size_t k, n = 0;

	for (k = 0; k < g->n; k++)
		n += g->v[k].writer != 0;
	return n;
}
