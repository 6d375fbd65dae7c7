/*
 * gate.h - the prefix gate (rule 30): a call whose marked prefix another
 * call is writing into the provider's cache waits until that call's
 * response has started, and then reads the entry instead of paying to
 * write it a second time.
 *
 * A call is held back only when waiting would spare it the writing of a
 * real prefix: when the cache lacks at least memory.gateBytes (8 KB) of
 * its marked prefix (gate_unread).  A few lines past the last cached
 * block, the common case of each compaction a line or two past the one
 * before, cost less to write again than a wait for another call's first
 * byte: with 100 ms to a response's start, holding those back took a
 * third of the compactions' throughput (bench_turn).
 *
 * A prefix is known by a key: the hash of its bytes up to a cache mark,
 * with the provider and model mixed in (request.h).  A key is "writing"
 * from the moment a call that marks it is sent while no entry is known,
 * until that call's response starts (then the key is cached) or the call
 * ends without starting (then nobody writes it).  A cached key is known
 * for the cache's life after its last use (Anthropic: 5 minutes).
 *
 * Pure: the clock is an argument, and nothing here sends or receives.
 */
#ifndef SHIRO_BROKER_GATE_H
#define SHIRO_BROKER_GATE_H

#include <stddef.h>
#include <stdint.h>

/* How long a provider keeps an entry after its last use. */
#define GATE_LIFE_MS (5 * 60 * 1000)
/* The marks of one request the gate knows about. */
#define GATE_KEYS 3

struct gate_entry {
	uint64_t key;
	uint64_t writer; /* the call writing it, 0: none */
	uint64_t used_at; /* last written or read, while cached */
	int cached;
};

struct gate {
	struct gate_entry *v;
	size_t n, cap;
	uint64_t life_ms;
	uint64_t waits; /* calls held back, counted by the caller */
};

/* gate_init - an empty gate whose entries live life_ms. */
void gate_init(struct gate *g, uint64_t life_ms);

/* gate_free - release g's memory. */
void gate_free(struct gate *g);

/*
 * gate_may_go - whether a call marking keys[0..n) may be sent at now:
 * 0 when another call is writing one of them (the call waits), else 1.
 */
int gate_may_go(struct gate *g, const uint64_t *keys, size_t n, uint64_t now);

/* gate_sent - call (not 0) was sent marking keys: it writes each key not
 * cached, and each cached one is used again. */
void gate_sent(struct gate *g, uint64_t call, const uint64_t *keys, size_t n,
    uint64_t now);

/* gate_started - call's response started: the keys it wrote are cached.
 * Returns 1 if that released any key (waiting calls may go). */
int gate_started(struct gate *g, uint64_t call, uint64_t now);

/* gate_done - call ended: a key it still writes has no writer.  Returns
 * 1 if that released any key. */
int gate_done(struct gate *g, uint64_t call);

/*
 * gate_unread - how much of a call's marked prefix the cache does not
 * hold at now: keys[0..n) and bytes[0..n) are its block boundaries in
 * order (request_boundaries), the last its mark; the bytes past the
 * longest one the gate knows as cached.
 */
size_t gate_unread(const struct gate *g, const uint64_t *keys,
    const size_t *bytes, size_t n, uint64_t now);

/* gate_writing - the number of keys being written now. */
size_t gate_writing(const struct gate *g);

#endif
