/*
 * timer.h - the event loop's timers: a binary min-heap keyed by due time.
 *
 * Times are milliseconds of CLOCK_MONOTONIC (timer_now()).  A timer is a
 * (kind, arg) pair the loop interprets; timer_add() returns an id that
 * stays valid until the timer fires or is cancelled, and is never reused
 * for another timer (a slot number plus a generation), so cancelling a
 * timer that already fired is harmless.  Timers due at the same
 * millisecond fire in the order they were added.  Adding, cancelling and
 * popping take O(log n); no call allocates except when the heap grows.
 */
#ifndef SHIRO_BROKER_TIMER_H
#define SHIRO_BROKER_TIMER_H

#include <stddef.h>
#include <stdint.h>

struct timer_entry {
	uint64_t when; /* due time, ms */
	uint64_t seq; /* order of addition, for ties */
	uint64_t arg;
	int kind;
	uint32_t slot; /* index into slots */
};

struct timer_slot {
	uint32_t gen; /* bumped when the slot is freed */
	uint32_t pos; /* position in heap while in use; UINT32_MAX if free */
};

struct timers {
	struct timer_entry *heap;
	size_t len, cap;
	struct timer_slot *slots;
	uint32_t nslots;
	uint32_t *free_list; /* slots not in use, nfree of them */
	uint32_t nfree;
	uint64_t seq;
};

/* timer_now - the monotonic clock in milliseconds. */
uint64_t timer_now(void);

/*
 * timer_since - the ms from then to now, or 0 when then is later: a
 * stamp taken with a fresher clock than the loop's now (a call sent
 * while the loop handled an older event) is never read as a span of
 * some 2^64 ms, which would pass every deadline at once.
 */
uint64_t timer_since(uint64_t now, uint64_t then);

/* timer_init - an empty set of timers. */
void timer_init(struct timers *t);

/* timer_free - release the heap (pending timers are dropped). */
void timer_free(struct timers *t);

/* timer_add - a timer of kind with arg due at when; returns its id (> 0). */
uint64_t timer_add(struct timers *t, uint64_t when, int kind, uint64_t arg);

/*
 * timer_cancel - remove timer id; 0 if it was pending, -SHIRO_ERR_NOENT
 * if it already fired, was cancelled, or never existed.
 */
int timer_cancel(struct timers *t, uint64_t id);

/*
 * timer_timeout - milliseconds from now until the first timer is due
 * (0 if one is due already), capped at cap; cap when there is none.
 */
long timer_timeout(const struct timers *t, uint64_t now, long cap);

/*
 * timer_pop - if a timer is due at now, remove it, set *kindp and *argp
 * and return 1; else return 0.
 */
int timer_pop(struct timers *t, uint64_t now, int *kindp, uint64_t *argp);

/* timer_count - pending timers. */
size_t timer_count(const struct timers *t);

#endif
