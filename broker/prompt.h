/*
 * prompt.h - the words shiro sends a model: the one system prompt, the
 * tools, the line that marks a turn and the tasks of a compaction
 * (docs/memory.md, "Requests and the cache").
 *
 * The system prompt and the tools are the same bytes in every request of
 * a chat, turns and compactions alike (rules 27, 44): they hold no date,
 * no path, no state, so a provider's prompt cache keeps matching them.
 * The user's own instructions follow them: $SHIRO_HOME/AGENTS.md and the
 * AGENTS.md of each workspace the settings trust, read once when shirod
 * starts (prompt_instructions).
 *
 * The tools: a name, what the model reads about it, and its JSON Schema
 * as JSON text.  The broker's own tools (turn.c serves them from the
 * store) come first, then the workspace's tools of the catalogue
 * (tools/tool.h: its descriptions and schemas), which run in workers.
 */
#ifndef SHIRO_BROKER_PROMPT_H
#define SHIRO_BROKER_PROMPT_H

#include <stddef.h>
#include <stdint.h>

#include "proto/buf.h"

/* The line before a turn's new message (D11). */
#define PROMPT_TURN_MARK "Turn:"
/* A compaction task begins with this word. */
#define PROMPT_COMPACTION_MARK "Compaction:"
/* The most bytes of one AGENTS.md that are read. */
#define PROMPT_INSTRUCTIONS_MAX 65536

/* One tool the model may call. */
struct prompt_tool {
	const char *name;
	const char *description;
	const char *schema; /* JSON Schema of the input, as JSON text */
};

/* prompt_system - the system prompt (static). */
const char *prompt_system(void);

/* prompt_tools - the tools, *np of them (static). */
const struct prompt_tool *prompt_tools(size_t *np);

/* prompt_turn_line - append the line that tells the model a turn's
 * message follows, with its newline. */
void prompt_turn_line(struct buf *out);

/*
 * prompt_compress_task - append the task of a leaf compaction: message
 * id of kind, its text whole, and the 512-byte ruler.
 */
void prompt_compress_task(struct buf *out, uint64_t id, const char *kind,
    const char *text, size_t len, size_t limit);

/*
 * prompt_merge_task - append the task of merging the two lines of node
 * (l, i)'s halves (texts a and b, lines without their names) into one.
 */
void prompt_merge_task(struct buf *out, unsigned l, uint64_t i, const char *a,
    size_t alen, const char *b, size_t blen, size_t limit);

/* prompt_ruler - append limit dashes and a newline. */
void prompt_ruler(struct buf *out, size_t limit);

/*
 * prompt_read_file - read path for the prompt, refusing what a model
 * could have planted in a workspace: a symbolic link (at the last part
 * of the path), a file with more than one hard link, anything but a
 * regular file, more than PROMPT_INSTRUCTIONS_MAX bytes, bytes that are
 * not UTF-8.  0 and *textp (malloc'd) and *lenp; -SHIRO_ERR_NOENT when
 * there is no such file; another negative SHIRO_ERR_* with *whyp (a
 * static text) when it is refused.
 */
int prompt_read_file(
    const char *path, char **textp, size_t *lenp, const char **whyp);

/*
 * prompt_instructions - the user's instructions: $SHIRO_HOME/AGENTS.md,
 * then DIR/AGENTS.md for each trusted workspace DIR, each a system block
 * of its own (appended to *blocks, a malloc'd array of *nblocks malloc'd
 * strings).  A refused file is left out and described in *notesp
 * (malloc'd, may stay NULL).
 */
void prompt_instructions(const char *home, char *const *trusted,
    size_t ntrusted, char ***blocks, size_t *nblocks, char **notesp);

#endif
