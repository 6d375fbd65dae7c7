/*
 * tries.h - a compaction's tries (docs/providers.md, "Compactions").
 *
 * A line over the limit gets a follow-up in the same conversation saying
 * how long it was and showing it cut at the limit; the shortest line is
 * kept; the tries stop at the first line within the limit, at a line not
 * shorter than the best so far, at an empty or thinking-only reply (it
 * counts as a try: asking again would ask the same), or after the
 * tries allowed.  The result is the best line cut at the limit on a
 * character boundary; when no try gave a line, there is none (the job
 * fails).  Pure: the loop makes the calls.
 */
#ifndef SHIRO_TRIES_H
#define SHIRO_TRIES_H

#include <stdbool.h>
#include <stddef.h>

#include "proto/buf.h"

struct tries {
	size_t limit; /* bytes of the line, at most */
	unsigned max; /* tries allowed */
	unsigned done; /* tries made */
	struct buf best; /* the shortest line so far, whole */
	bool has_best;
};

/* tries_init - tries of at most max calls for a line of limit bytes. */
void tries_init(struct tries *t, size_t limit, unsigned max);

/* tries_free - free what t holds. */
void tries_free(struct tries *t);

/*
 * tries_line - the reply's text made one line: line ends and other
 * control characters become spaces, runs of spaces one, no space at
 * either end.  Into out (reset first).
 */
void tries_line(const char *text, size_t len, struct buf *out);

/*
 * tries_add - count a try whose reply text is text (len bytes; empty
 * for a thinking-only reply): true when another try should follow, with
 * its follow-up text in followup (reset first).
 */
bool tries_add(
    struct tries *t, const char *text, size_t len, struct buf *followup);

/*
 * tries_result - the best line cut at the limit into out: true, or
 * false when no try gave a line.
 */
bool tries_result(const struct tries *t, struct buf *out);

#endif
