/*
 * render.h - the view as the model reads it (docs/memory.md rules 15-18,
 * 29).
 *
 *	<chat>
 *	0+256|summary of messages 0..255
 *	256+1|(not summarized yet: zoom it)
 *	</chat>
 *
 * One "id+n|text" line per node, every newline of the text ("\n",
 * "\r\n", "\r") turned into one space, no dates, and the placeholder for
 * a message not summarized yet.  The planner holds no text: the caller
 * lends each node's text through a callback.  Lines come in blocks of 4;
 * the renderer reports where the last whole block ends, for a cache mark.
 */
#ifndef SHIRO_RENDER_H
#define SHIRO_RENDER_H

#include <stddef.h>
#include <stdint.h>

#include "broker/plan.h"
#include "proto/buf.h"

#define RENDER_PLACEHOLDER "(not summarized yet: zoom it)"
#define RENDER_BLOCK 4 /* lines per cache block */

/*
 * Where the text of node (l, i) comes from.  text() sets *s and *len to
 * the node's text, borrowed until render_view() returns, and returns 0
 * or a negative SHIRO_ERR_* that render_view() hands back.  It is asked
 * only for built lines.  input, when not NULL, is asked for the text of
 * an unbuilt message m the same way, and the line shows that text
 * flattened and cut to cut bytes at a character boundary instead of the
 * placeholder (D10: a turn that stopped waiting for its summaries).
 */
struct render_source {
	int (*text)(
	    void *arg, unsigned l, uint64_t i, const char **s, size_t *len);
	int (*input)(void *arg, uint64_t m, const char **s, size_t *len);
	void *arg;
	size_t cut;
};

/*
 * The cache mark: the first mark_lines lines (a multiple of 4, the
 * whole blocks) end at byte mark_offset of the output, counted from the
 * start of what render_view() appended.  mark_lines 0: no whole block.
 */
struct render_mark {
	size_t mark_lines;
	size_t mark_offset;
};

/*
 * render_flat_size - the size of a line with text s: its bytes once each
 * "\n", "\r\n" and "\r" is one space.  This is the size the planner
 * counts (plan.h, Line size).
 */
size_t render_flat_size(const char *s, size_t len);

/* render_flatten - append s to out with every newline as one space. */
void render_flatten(struct buf *out, const char *s, size_t len);

/*
 * render_cut - the length of the longest start of s[0..len) that is at
 * most max bytes and does not end inside a UTF-8 character.
 */
size_t render_cut(const char *s, size_t len, size_t max);

/* render_name - append node (l, i)'s name "id+n" to out. */
void render_name(struct buf *out, unsigned l, uint64_t i);

/*
 * render_view - append "<chat>\n", one line per view line and
 * "</chat>\n" to out; mark (may be NULL) gets the cache mark.  On an
 * error from src->text, out is left as it was and the error returned.
 * -SHIRO_ERR_CORRUPT: a text's flattened size is not the line's size.
 */
int render_view(struct buf *out, const struct plan_line *lines, size_t n,
    const struct render_source *src, struct render_mark *mark);

#endif
