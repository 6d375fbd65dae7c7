/*
 * usage.h - the tokens every model call used, per provider and model:
 * input, output, cache read and cache write, and the number of calls.
 *
 * The counts live in memory and go to the store (store_usage_add) with
 * the tree's write-behind commit, so a restart keeps them; a crash loses
 * at most the calls of that last moment.  `shiro status` shows them with
 * an estimated cost (provider_cost).
 */
#ifndef SHIRO_BROKER_USAGE_H
#define SHIRO_BROKER_USAGE_H

#include <stddef.h>
#include <stdint.h>

#include "proto/msg.h"
#include "store/store.h"

/* The most a worker may claim for one call, per counter (untrusted). */
#define USAGE_MAX_TOKENS (1ULL << 40)

/* One call's tokens, in provider_tokens order. */
struct usage_tokens {
	uint64_t v[4];
};

struct usage_row {
	struct store_usage total; /* since the chat began (stored + new) */
	struct store_usage pending; /* not stored yet */
	int dirty;
};

struct usage {
	struct usage_row *rows;
	size_t n, cap;
};

/* usage_load - the stored records into u (which starts empty). */
int usage_load(struct usage *u, struct store *s);

/* usage_free - release u's memory. */
void usage_free(struct usage *u);

/*
 * usage_read - the tokens of RESULT's usage map (input, output,
 * cache_read, cache_write; absent counts 0): 0, or -SHIRO_ERR_PROTO for
 * a map whose values are not whole numbers up to USAGE_MAX_TOKENS.
 */
int usage_read(const struct msg *result, struct usage_tokens *t);

/* usage_take - usage_read, a map that does not read counting as nothing
 * (logged, naming worker slot). */
void usage_take(
    const struct msg *result, unsigned worker, struct usage_tokens *t);

/* usage_add - one call of provider's model used t. */
void usage_add(struct usage *u, const char *provider, const char *model,
    const struct usage_tokens *t);

/* usage_flush - store the pending counts in one commit: 0 or the
 * store's error (then they stay pending). */
int usage_flush(struct usage *u, struct store *s);

#endif
