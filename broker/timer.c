/*
 * timer.c - a binary min-heap of timers with cancellable ids (timer.h).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "proto/err.h"
#include "proto/log.h"
#include "proto/mono.h"
#include "proto/xmalloc.h"

#include "timer.h"

#define TIMER_FREE UINT32_MAX

/* timer_now - the monotonic clock in milliseconds. */
uint64_t
timer_now(void)
{
	return mono_ms();
}

/* timer_init - an empty set of timers. */
void
timer_init(struct timers *t)
{
	memset(t, 0, sizeof(*t));
}

/* timer_free - release the heap (pending timers are dropped). */
void
timer_free(struct timers *t)
{
	free(t->heap);
	free(t->slots);
	free(t->free_list);
	memset(t, 0, sizeof(*t));
}

/* timer_before - entry a fires before entry b. */
static int
timer_before(const struct timer_entry *a, const struct timer_entry *b)
{
	return a->when < b->when || (a->when == b->when && a->seq < b->seq);
}

/* timer_place - put e at heap position pos and record it in its slot. */
static void
timer_place(struct timers *t, size_t pos, const struct timer_entry *e)
{
	t->heap[pos] = *e;
	t->slots[e->slot].pos = (uint32_t)pos;
}

/* timer_up - move the entry at pos towards the root while it is earlier. */
static void
timer_up(struct timers *t, size_t pos)
{
	struct timer_entry e = t->heap[pos];
	size_t parent;

	while (pos > 0) {
		parent = (pos - 1) / 2;
		if (!timer_before(&e, &t->heap[parent]))
			break;
		timer_place(t, pos, &t->heap[parent]);
		pos = parent;
	}
	timer_place(t, pos, &e);
}

/* timer_down - move the entry at pos towards the leaves while later. */
static void
timer_down(struct timers *t, size_t pos)
{
	struct timer_entry e = t->heap[pos];
	size_t child;

	for (;;) {
		child = 2 * pos + 1;
		if (child >= t->len)
			break;
		if (child + 1 < t->len &&
		    timer_before(&t->heap[child + 1], &t->heap[child]))
			child++;
		if (!timer_before(&t->heap[child], &e))
			break;
		timer_place(t, pos, &t->heap[child]);
		pos = child;
	}
	timer_place(t, pos, &e);
}

/* timer_remove_at - take the entry at pos out of the heap; free its slot. */
static void
timer_remove_at(struct timers *t, size_t pos)
{
	uint32_t slot = t->heap[pos].slot;

	t->slots[slot].pos = TIMER_FREE;
	if (++t->slots[slot].gen == 0)
		t->slots[slot].gen = 1;
	t->free_list[t->nfree++] = slot;
	t->len--;
	if (pos == t->len)
		return;
	timer_place(t, pos, &t->heap[t->len]);
	if (pos > 0 && timer_before(&t->heap[pos], &t->heap[(pos - 1) / 2]))
		timer_up(t, pos);
	else
		timer_down(t, pos);
}

/* timer_add - a timer of kind with arg due at when; returns its id. */
uint64_t
timer_add(struct timers *t, uint64_t when, int kind, uint64_t arg)
{
	struct timer_entry e;
	uint32_t slot;

	if (t->nfree == 0) {
		if (t->nslots == UINT32_MAX - 1)
			panic("timer: too many timers");
		t->slots =
		    xreallocarray(t->slots, t->nslots + 1, sizeof(*t->slots));
		t->free_list = xreallocarray(
		    t->free_list, t->nslots + 1, sizeof(*t->free_list));
		t->slots[t->nslots].gen = 1;
		t->slots[t->nslots].pos = TIMER_FREE;
		t->free_list[t->nfree++] = t->nslots++;
	}
	slot = t->free_list[--t->nfree];
	if (t->len == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 16;
		t->heap = xreallocarray(t->heap, t->cap, sizeof(*t->heap));
	}
	e.when = when;
	e.seq = t->seq++;
	e.arg = arg;
	e.kind = kind;
	e.slot = slot;
	t->heap[t->len++] = e;
	timer_up(t, t->len - 1);
	return ((uint64_t)t->slots[slot].gen << 32) | slot;
}

/* timer_cancel - remove timer id if it is still pending. */
int
timer_cancel(struct timers *t, uint64_t id)
{
	uint32_t slot = (uint32_t)(id & 0xffffffffu);
	uint32_t gen = (uint32_t)(id >> 32);

	if (id == 0 || slot >= t->nslots || t->slots[slot].gen != gen ||
	    t->slots[slot].pos == TIMER_FREE)
		return -SHIRO_ERR_NOENT;
	timer_remove_at(t, t->slots[slot].pos);
	return 0;
}

/* timer_timeout - milliseconds until the first timer, capped at cap. */
long
timer_timeout(const struct timers *t, uint64_t now, long cap)
{
	uint64_t d;

	if (t->len == 0)
		return cap;
	if (t->heap[0].when <= now)
		return 0;
	d = t->heap[0].when - now;
	return d < (uint64_t)cap ? (long)d : cap;
}

/* timer_pop - remove and return the first timer if it is due at now. */
int
timer_pop(struct timers *t, uint64_t now, int *kindp, uint64_t *argp)
{
	if (t->len == 0 || t->heap[0].when > now)
		return 0;
	*kindp = t->heap[0].kind;
	*argp = t->heap[0].arg;
	timer_remove_at(t, 0);
	return 1;
}

/* timer_count - pending timers. */
size_t
timer_count(const struct timers *t)
{
	return t->len;
}

/* timer_since - now - then, never below 0. */
uint64_t
timer_since(uint64_t now, uint64_t then)
{
	return now > then ? now - then : 0;
}
