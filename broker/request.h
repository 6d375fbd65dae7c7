/*
 * request.h - the provider-neutral request of a model call, as JOB's
 * data.request carries it to a model worker (docs/protocol.md, "JOB").
 *
 * Every request, turn or compaction, is laid out for the provider's
 * prompt cache (rules 26-31, 44-51):
 *
 *	[tools][system prompt][user's instructions]     same in every call
 *	[<chat> view in blocks of 4 lines]              grows at its end
 *	[</chat>, per-turn state, the new message]      changes every call
 *
 * Each block of 4 view lines is a content part of its own (the `<chat>`
 * line rides with the first and is not counted), because a cache can
 * match only at part boundaries.  The last whole block carries a cache
 * mark, and so does the request's last part; the system blocks carry
 * one through cache_tools.  When the view grew by more than a provider
 * looks back from a mark (Anthropic: 20 blocks), one more mark goes on
 * the block the previous request marked, so that its entry is still
 * read: four marks at most, Anthropic's limit.
 *
 * This file builds msg_val trees and hashes prefixes; it does no I/O.
 */
#ifndef SHIRO_BROKER_REQUEST_H
#define SHIRO_BROKER_REQUEST_H

#include <stddef.h>
#include <stdint.h>

#include "proto/buf.h"
#include "proto/msg.h"

#include "prompt.h"

/* Lines per cache block, as the renderer counts them. */
#define REQUEST_BLOCK 4
/* Blocks a provider looks back from a mark for an entry (Anthropic). */
#define REQUEST_LOOKBACK 20
/* A compaction's output cap in tokens (a 512-byte line, some slack). */
#define REQUEST_COMPACT_TOKENS 2048

/* What every request of this chat shares (built once at start). */
struct request_base {
	char **system; /* the system prompt, then the user's instructions */
	size_t nsystem;
	const struct prompt_tool *tools;
	size_t ntools;
	char *cache_key; /* stable for the chat (OpenAI's prompt_cache_key) */
	uint64_t hash; /* of system and tools: the start of every prefix */
};

/*
 * Where the previous request of a family (turns, or compactions) put
 * its view's mark: its lines and the hash of the view's bytes up to it.
 */
struct request_mark {
	size_t lines;
	uint64_t hash;
};

/*
 * A view rendered for a request: "<chat>\n" and one "\n"-terminated line
 * per view line, without "</chat>".  ends[k] is the offset just past
 * line k.  blocks[j] is the hash of block j's bytes (lines 4j to 4j+3,
 * "<chat>\n" in block 0), made as the block's last line is added: a
 * prefix's key is those folded in order (request_prefix_hash), so a
 * request's keys take one pass over its view however many are asked
 * for.
 */
struct request_view {
	struct buf text;
	size_t *ends;
	uint64_t *blocks;
	size_t nlines, cap;
};

/* request_base_init - system blocks (copied) and the tools. */
void request_base_init(struct request_base *rb, const char *home,
    char *const *instructions, size_t ninstructions);

/* request_base_free - release rb's contents. */
void request_base_free(struct request_base *rb);

/* request_base_bytes - the bytes of the system blocks and the tools
 * (names, descriptions, schemas): what every request repeats. */
size_t request_base_bytes(const struct request_base *rb);

/* request_view_init - an empty view ("<chat>\n"). */
void request_view_init(struct request_view *v);

/* request_view_add - append one line (without its newline; a newline
 * inside is the caller's bug and becomes a space). */
void request_view_add(struct request_view *v, const char *line, size_t len);

/* request_view_free - release v's contents. */
void request_view_free(struct request_view *v);

/* request_hash - FNV-1a 64 of s[0..len) continued from h. */
uint64_t request_hash(uint64_t h, const void *s, size_t len);

/*
 * request_bytes_hash - a 64-bit hash of s[0..len), eight bytes at a time
 * (FNV-1a takes one: a 128 KB view costs it about 0.2 ms each time).
 */
uint64_t request_bytes_hash(const void *s, size_t len);

/*
 * request_head - set the parts of req (a map) that every request has:
 * model, max_tokens, system, tools, cache_key, cache_tools, and thinking
 * when not 0.
 */
void request_head(struct msg_val *req, const struct request_base *rb,
    const char *model, unsigned max_tokens, unsigned thinking);

/*
 * request_lookback - where the extra mark of a request goes: the lines
 * of the block the previous request of the family marked (last), when
 * this request's mark is at least the lookback beyond it and the view up
 * to it is byte for byte the same (no batch since); else 0.
 */
size_t request_lookback(const struct request_view *v,
    const struct request_base *rb, const struct request_mark *last);

/* request_mark_set - *last becomes this view's mark (lines in whole
 * blocks and their hash), when it has a whole block. */
void request_mark_set(struct request_mark *last, const struct request_view *v,
    const struct request_base *rb);

/*
 * request_view_parts - append v to content (an array of parts) in
 * blocks of REQUEST_BLOCK lines.  The last whole block gets a cache
 * mark, and so does the block ending at line extra when extra is not 0
 * (request_lookback).  Returns the lines in whole blocks; *markhash (may
 * be NULL) gets the hash of the prefix up to the mark, base included
 * (the base's hash when there is no whole block).
 */
size_t request_view_parts(struct msg_val *content, const struct request_view *v,
    size_t extra, const struct request_base *rb, uint64_t *markhash);

/*
 * request_boundaries - the cache keys and prefix sizes of v's block
 * boundaries: keys[0] the base (system and tools), keys[b] the prefix
 * through block b, each hash mixed with mh (the provider and model, as
 * the gate's keys are), bytes[b] the bytes up to it, base included.
 * Returns how many were written (at most max).
 */
size_t request_boundaries(const struct request_view *v,
    const struct request_base *rb, uint64_t mh, uint64_t *keys, size_t *bytes,
    size_t max);

/* request_prefix_hash - the key of v's first lines (in whole blocks),
 * base included: rb's hash, then each block's folded in (a last part
 * block hashed as it is). */
uint64_t request_prefix_hash(
    const struct request_view *v, const struct request_base *rb, size_t lines);

/* request_text_part - append a text part; cache puts a mark on it. */
struct msg_val *request_text_part(
    struct msg_val *content, const char *text, size_t len, int cache);

/* request_user_message - append {role user, content []} to messages;
 * returns its content array. */
struct msg_val *request_message(struct msg_val *messages, const char *role);

/* request_parts_ok - whether parts (RESULT data.content from an
 * untrusted worker) is an array of text, thinking and tool_use parts
 * with their keys present and within their limits. */
int request_parts_ok(const struct msg_val *parts);

/*
 * request_copy_parts - append to content a checked copy of the parts of
 * an assistant's reply (RESULT data.content from an untrusted worker):
 * only their known keys.  Returns the parts copied; -1 (nothing copied)
 * when request_parts_ok() refuses them.
 */
int request_copy_parts(struct msg_val *content, const struct msg_val *parts);

#endif
