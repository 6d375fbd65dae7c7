/*
 * fold.h - the planner rebuilt from the store at start (docs/memory.md:
 * D1, D8, F1, rule 25), and a generator of synthetic chats that writes
 * what a live chat writes.
 *
 * The fold never decides a merge: it appends the messages in order, tells
 * the planner each stored node once its last message exists, and at each
 * logged batch record replays that record's merges in their order, then
 * restores the record's shrinking flag at its T.  Messages after the last
 * record are appended with no batch: if the view is over its ceiling or
 * still shrinking, the batch runs at the next message, as in the live
 * chat (D8).  It reads ids, sizes and node sizes from the indexes, and
 * the text of a message only when its leaf is not built yet.
 *
 * view.json is then compared with the fold and the difference reported;
 * the fold wins (a lost or stale view.json changes nothing).
 */
#ifndef SHIRO_FOLD_H
#define SHIRO_FOLD_H

#include <stddef.h>
#include <stdint.h>

#include "broker/plan.h"
#include "proto/buf.h"
#include "store/store.h"

/* How view.json compares with the folded view. */
enum fold_saved {
	FOLD_SAVED_SAME = 0, /* equal, line for line */
	FOLD_SAVED_MISSING, /* no view.json */
	FOLD_SAVED_STALE, /* differs (a crash before its save) */
	FOLD_SAVED_BAD /* does not decode */
};

/* What a fold did. */
struct fold_report {
	uint64_t t; /* messages */
	uint64_t batches; /* batch records replayed */
	uint64_t merges; /* merges replayed */
	uint64_t nodes; /* stored nodes given to the planner */
	uint64_t texts; /* message texts read (unbuilt leaves) */
	int shrinking; /* restored from the last record (F1) */
	enum fold_saved saved;
	size_t saved_lines; /* lines in view.json */
	uint64_t saved_t; /* fold_view_live: the messages view.json covers */
	char msg[512]; /* why the fold failed, or the view.json difference */
};

/*
 * fold_view - a new planner with settings ps, folded from s.  *out is the
 * caller's (plan_destroy).  r may be NULL.  Returns -SHIRO_ERR_CORRUPT
 * when a record cannot be replayed (a merge whose halves are not two
 * lines of the view, a record past the log's end; r->msg says which), or
 * the store's errors.
 */
int fold_view(struct store *s, const struct plan_settings *ps,
    struct plan **out, struct fold_report *r);

/*
 * fold_view_live - fold_view for a chat a running shirod writes to, read
 * beside it from a read-only store (store_owner): batch records past the
 * log as it was read are newer than that read and left out, and
 * view.json, which shirod writes a moment after the view changes, is
 * compared with the fold as it stood once it had the messages view.json
 * covers and their records, not with the fold's end.  A view.json that
 * covers more messages than the log, or whose lines are not a run of
 * nodes from message 0, is reported too.
 */
int fold_view_live(struct store *s, const struct plan_settings *ps,
    struct plan **out, struct fold_report *r);

/* fold_save - write p's view to view.json (store_view_save). */
int fold_save(struct store *s, const struct plan *p);

/*
 * fold_render - append p's view as the model reads it (render_view), the
 * node texts read from s.  Returns render_view's and the store's errors.
 */
int fold_render(struct store *s, const struct plan *p, struct buf *out);

/*
 * A synthetic chat.  Messages get random text of min_msg..max_msg bytes
 * (some with newlines and "\r\n"), summaries min_node..max_node bytes.
 * A message of at most the node size is its own leaf at once (rule 12).
 * late (0..1000): the per-mille chance that a running compactor job does
 * NOT finish at a given message, so batches stop above the floor and
 * shrink over later messages (F1).  chunk: messages per group commit
 * (1 writes each message, its nodes and its batch record as the broker
 * does, in that order).  keys: each message carries the key "gen-<id>".
 */
struct fold_gen_opts {
	uint64_t n;
	uint64_t seed;
	uint32_t min_msg, max_msg;
	uint32_t min_node, max_node;
	unsigned late;
	size_t chunk;
	int keys;
	int save_view; /* save view.json after each batch (chunk 1 only) */
	/* Called after each message is acknowledged (may be NULL). */
	void (*acked)(void *arg, uint64_t id);
	void *arg;
};

/*
 * fold_gen - add o->n messages to s, driving the live planner p (fresh,
 * or folded from s), with their nodes and batch records written as the
 * broker writes them.  Returns the store's and planner's errors.
 */
int fold_gen(struct store *s, struct plan *p, const struct fold_gen_opts *o);

#endif
