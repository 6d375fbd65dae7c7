/*
 * plan.h - the planner: the chat's view, its merge order, the sawtooth,
 * the compaction view and the work queue of the compactor
 * (docs/memory.md, rules 11-24, 28, 33, 34, 39-42, D5, F1, F2).
 *
 * The planner is pure: it does no I/O, reads no clock and stores no
 * text.  It knows the messages only by their count T and the tree nodes
 * only by their place (l, i) and their size.  Its memory grows with the
 * view (a few hundred lines), the built nodes that wait above the view
 * (fewer than the view's lines), the unbuilt messages, and one bit per
 * tree node for "built" (about T/4 bytes in all): never with the text.
 *
 * Nodes.  Node (l, i) covers messages i*2^l .. (i+1)*2^l - 1 and is named
 * "id+n" with id = i*2^l and n = 2^l.  Node (0, i) is message i's line;
 * node (l, i) for l > 0 merges (l-1, 2i) and (l-1, 2i+1).
 *
 * Line size.  This is the one definition every part of shiro uses: the
 * size of a built node's line is the byte length of its text after every
 * newline ("\n", "\r\n", "\r") has become one space, which is what
 * render_flat_size() in broker/render.h computes and what callers pass as
 * SIZE to plan_append() and plan_built().  The line of a message that is
 * not built yet is the placeholder, settings.placeholder bytes (29, the
 * length of "(not summarized yet: zoom it)").  With PLAN_UNIT_LINES every
 * line counts 1 instead (a test setting).  plan_line_size() applies it.
 *
 * Ownership.  struct plan is opaque and owned by whoever called
 * plan_new(); plan_destroy() frees it.  Pointers the planner hands out
 * (the view's lines, a batch's merges) are borrowed: they stay valid
 * until the next call that takes a non-const struct plan *.
 *
 * Errors.  Every int function returns 0 or a negative SHIRO_ERR_* code
 * (proto/err.h); the codes each may return are listed with it.  A call
 * that fails changes nothing.  Allocation never fails (xmalloc).
 */
#ifndef SHIRO_PLAN_H
#define SHIRO_PLAN_H

#include <stddef.h>
#include <stdint.h>

/* The design's numbers (docs/memory.md): the defaults of struct
 * plan_settings. */
#define PLAN_CEILING 128000 /* a batch starts past this view size */
#define PLAN_FLOOR 64000 /* and merges down to this */
#define PLAN_CCEILING 32000 /* the compaction view's ceiling */
#define PLAN_CFLOOR 16000 /* and floor */
#define PLAN_JOBS 8 /* compactor calls in flight */
#define PLAN_WINDOW 8 /* unbuilt lines allowed before a new leaf */
#define PLAN_NODE_SIZE 512 /* a node's line is at most this long */
#define PLAN_PLACEHOLDER_SIZE 29 /* bytes of the placeholder line */
#define PLAN_MAX_LEVEL 62 /* deepest level a node may have */

/* How a line counts towards the view's size. */
enum plan_unit {
	PLAN_UNIT_BYTES, /* its size in bytes (the real setting) */
	PLAN_UNIT_LINES /* 1 per line: push's list length as a budget */
};

/* How due a sibling pair is (rule 19). */
enum plan_order {
	PLAN_ORDER_LAST, /* due = (T - last)/2^l: the right order */
	PLAN_ORDER_FIRST /* due = (T - first)/2^l: the gist's mistake, tests only */
};

struct plan_settings {
	uint64_t ceiling; /* chat view: batch when size > ceiling */
	uint64_t floor; /* chat view: a batch merges to size <= floor */
	uint64_t cceiling; /* compaction view ceiling */
	uint64_t cfloor; /* compaction view floor */
	uint32_t jobs; /* at most this many jobs running (>= 1) */
	uint32_t window; /* a leaf is ready once fewer than this many
			         lines before it are unbuilt (>= 1) */
	uint32_t node_size; /* largest node, and the "no call" limit */
	uint32_t placeholder; /* size of an unbuilt message's line */
	enum plan_unit unit;
	enum plan_order order;
};

/* A node of the tree. */
struct plan_node {
	uint64_t i;
	unsigned l;
};

/* One line of a view: node (l, i), its size in bytes, built or not. */
struct plan_line {
	uint64_t i;
	uint32_t size; /* bytes of the built text; 0 while unbuilt */
	uint8_t l;
	uint8_t built; /* 0 only for a message not summarized yet */
};

/*
 * What a batch or a fit did.  merges lists the parents made, in merge
 * order (borrowed, see Ownership).  ran is 1 when a batch or fit ran,
 * even one that merged nothing.  shrinking is the flag afterwards.
 */
struct plan_batch {
	const struct plan_node *merges;
	size_t nmerges;
	int ran;
	int shrinking;
};

/*
 * A job of the compactor.  src_size is the size of the node's source:
 * for a leaf the message's size (flattened, as a line's size), for a
 * merge the two children's sizes plus 1 (joined by a newline).  free is
 * 1 when src_size <= node_size: the source is its own node, built
 * without a model call (rule 12), with that text and that size.
 */
struct plan_job {
	uint64_t i;
	unsigned l;
	uint32_t src_size;
	int free;
};

struct plan;

/* plan_settings_default - fill s with the design's numbers. */
void plan_settings_default(struct plan_settings *s);

/*
 * plan_new - a planner with no message.  *out is the caller's, to be
 * freed with plan_destroy().  -SHIRO_ERR_INVAL: floor > ceiling,
 * cfloor > cceiling, jobs, window or node_size 0, or an unknown enum.
 */
int plan_new(const struct plan_settings *s, struct plan **out);

/* plan_destroy - free *pp and set it to NULL; NULL is fine. */
void plan_destroy(struct plan **pp);

/*
 * plan_configure - change the settings.  Sizes are counted again at once
 * (unit, placeholder); budgets apply from the next batch or fit.
 * -SHIRO_ERR_INVAL as plan_new().
 */
int plan_configure(struct plan *p, const struct plan_settings *s);

/* plan_get_settings - the settings in use (borrowed). */
const struct plan_settings *plan_get_settings(const struct plan *p);

/* plan_count - T, the number of messages appended. */
uint64_t plan_count(const struct plan *p);

/*
 * plan_line_size - how much line ln counts in the view: the one place
 * where a line's size is decided (see Line size above).
 */
uint64_t plan_line_size(const struct plan *p, const struct plan_line *ln);

/*
 * plan_append - message T arrives: its line goes at the end of the view
 * and of the compaction view, nothing else changes (rules 14, 22).  With
 * built, its node (0, T) is built at once with size bytes; otherwise the
 * line is the placeholder and size is the message's own (flattened)
 * size, which decides whether its leaf needs a model call.  Run
 * plan_sawtooth() next.  -SHIRO_ERR_TOOBIG: built and size > node_size.
 */
int plan_append(struct plan *p, int built, uint32_t size);

/*
 * plan_built - node (l, i) has been built with size bytes (a finished
 * job, or a node read back from the store).  Nothing merges now.  The
 * node leaves the work queue; if its sibling is built too, their parent
 * becomes ready.  Errors: -SHIRO_ERR_INVAL l > PLAN_MAX_LEVEL;
 * -SHIRO_ERR_TOOBIG size > node_size; -SHIRO_ERR_NOENT one of its
 * messages does not exist yet; -SHIRO_ERR_EXIST already built;
 * -SHIRO_ERR_STATE l > 0 and a child is not built.  A merge costs
 * amortized O(1); a leaf O(log u) plus moving the unbuilt messages
 * before or after it, u of them (none when the oldest is built first).
 */
int plan_built(struct plan *p, unsigned l, uint64_t i, uint32_t size);

/* plan_is_built - 1 if node (l, i) is built, else 0. */
int plan_is_built(const struct plan *p, unsigned l, uint64_t i);

/*
 * plan_sawtooth - the batch of rules 23-24 and F1, run once after each
 * plan_append(): if the view is shrinking or its size is over the
 * ceiling, merge the most due pairs with built parents one at a time
 * until size <= floor or none can merge; shrinking is then size > floor.
 * The compaction view follows (rule 33).  *b says what happened.
 * Always 0.
 */
int plan_sawtooth(struct plan *p, struct plan_batch *b);

/*
 * plan_fit - merge the chat's view down to budget now, outside the
 * sawtooth, leaving the shrinking flag alone.  Always 0.
 */
int plan_fit(struct plan *p, uint64_t budget, struct plan_batch *b);

/*
 * plan_merge - replay one logged merge: the two lines (l-1, 2i) and
 * (l-1, 2i+1) of the view become their parent (l, i).  The fold of the
 * store uses it; it never chooses a merge.  The compaction view is
 * folded again when next read (D7).  Errors: -SHIRO_ERR_INVAL l == 0 or
 * l > PLAN_MAX_LEVEL; -SHIRO_ERR_STATE the parent is not built;
 * -SHIRO_ERR_NOENT the children are not two lines of the view.
 */
int plan_merge(struct plan *p, unsigned l, uint64_t i);

/*
 * plan_restore - end the replay of one logged batch record {t, open}:
 * the record was written when T was t; shrinking becomes open.  The fold
 * may append messages and replay records in their order (each record
 * after its t messages), or append every message, mark every built node
 * (children before parents) and then replay the merges: plan_merge()
 * only needs the two lines and a built parent.  The first way keeps the
 * sizes map small.  -SHIRO_ERR_STATE: t > plan_count() (a record from
 * after the last message).
 */
int plan_restore(struct plan *p, uint64_t t, int shrinking);

/* plan_shrinking - 1 while a batch could not reach the floor (F1). */
int plan_shrinking(const struct plan *p);

/* plan_view - the chat's view, oldest first (borrowed). */
void plan_view(const struct plan *p, const struct plan_line **lines, size_t *n);

/* plan_view_size - the sum of plan_line_size() over the view. */
uint64_t plan_view_size(const struct plan *p);

/*
 * plan_cview - the compaction view (rule 33), oldest first (borrowed),
 * and its size.  It is the chat's view merged to cfloor whenever the
 * chat's view merges (and at start, D7); between, it gets the new lines
 * and its own sawtooth between cceiling and cfloor.
 */
void plan_cview(
    struct plan *p, const struct plan_line **lines, size_t *n, uint64_t *size);

/*
 * plan_context - the context of a compaction of node (l, i) (rules 34,
 * 41, F2): the first *n lines of the compaction view, those that end at
 * or before the node's last message, stopping before the first unbuilt
 * one.  -SHIRO_ERR_INVAL l > PLAN_MAX_LEVEL; -SHIRO_ERR_NOENT one of its
 * messages does not exist.
 */
int plan_context(struct plan *p, unsigned l, uint64_t i, size_t *n);

/*
 * The work queue (rules 39-42, D5).  A leaf is ready while fewer than
 * window lines before it are unbuilt; a merge once both halves are
 * built.  Ready nodes wait in queues fed by plan_append() and
 * plan_built(): nothing ever scans the tree.
 *
 * plan_work_take - start the next job: the oldest ready leaf, else (when
 * no turn waits) the oldest ready merge.  -SHIRO_ERR_AGAIN: jobs are
 * already running, or nothing is ready.  A job ends with plan_built()
 * (success), plan_work_fail() or plan_work_drop().
 */
int plan_work_take(struct plan *p, struct plan_job *job);

/*
 * plan_work_fail - the running job (l, i) failed; it waits until
 * plan_work_retry().  The caller counts failures and, after the third,
 * builds the node from its input cut to node_size (D5).
 * -SHIRO_ERR_NOENT: (l, i) is not running.
 */
int plan_work_fail(struct plan *p, unsigned l, uint64_t i);

/*
 * plan_work_drop - stop the running job (l, i) without a failure (a turn
 * started to wait, D5): it is ready again.  -SHIRO_ERR_NOENT: not running.
 */
int plan_work_drop(struct plan *p, unsigned l, uint64_t i);

/* plan_work_retry - every failed job is ready again (the caller's clock). */
void plan_work_retry(struct plan *p);

/*
 * plan_work_wait - a turn waits for the view (waiting = 1) or not: while
 * it waits only the view's unbuilt lines start (D5).
 */
void plan_work_wait(struct plan *p, int waiting);

/* plan_work_needed - 1 if (l, i) is an unbuilt line of the chat's view. */
int plan_work_needed(const struct plan *p, unsigned l, uint64_t i);

/* plan_work_running - the number of jobs running now. */
size_t plan_work_running(const struct plan *p);

/* plan_unbuilt - the number of unbuilt lines in the view (0: settled). */
size_t plan_unbuilt(const struct plan *p);

/*
 * What the planner has done since plan_new(), for tests and benches.
 * examined counts the candidate pairs fits have looked at: a batch
 * that can merge nothing looks at none, however long the view.
 */
struct plan_stats {
	uint64_t examined;
};

/* plan_stats - fill *st with the counters (tests and benches only). */
void plan_stats(const struct plan *p, struct plan_stats *st);

#endif
