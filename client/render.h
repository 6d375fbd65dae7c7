/*
 * render.h - what the client shows a person: documents, events and the
 * status line, as plain text.
 *
 * The daemon defines the documents (docs/protocol.md); the client shows
 * the keys it knows in a fixed way and any other key generically, as
 * "key: value" lines, so a newer daemon's fields still show.
 */
#ifndef SHIRO_CLIENT_RENDER_H
#define SHIRO_CLIENT_RENDER_H

#include <stdint.h>
#include <stdio.h>

#include "proto/buf.h"
#include "proto/msg.h"

/* The view's ceiling when the daemon does not say (docs/memory.md). */
#define RENDER_CEILING 128000

/*
 * render_escape - append s[0..len) with every character that could drive
 * a terminal shown as text instead: C0 controls but newline and tab as
 * ^X (ESC is ^[), DEL as ^?, C1 controls (U+0080-U+009F) as M-^X, and a
 * byte that is not UTF-8 as \xHH.  Plain text passes unchanged.  What
 * the client prints of the chat (messages, summaries, tool output,
 * errors) goes through it, so chat content never reaches the terminal
 * as control sequences.
 */
void render_escape(struct buf *out, const char *s, size_t len);

/* render_printf - the formatted text through render_escape onto out
 * (out->data is a C string afterwards, even when empty). */
void render_printf(struct buf *out, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* render_puts - s (a C string) through render_escape, to f. */
void render_puts(FILE *f, const char *s);

/*
 * render_size - a byte count the way the status line shows it: "812B",
 * "3.4K" under ten thousand, "12K", "1.2M" (K = 1000 bytes).
 */
void render_size(struct buf *out, uint64_t bytes);

/* render_status_line - "mem N/128K" for a view of bytes under ceiling. */
void render_status_line(struct buf *out, uint64_t bytes, uint64_t ceiling);

/* render_doc - a REPLY's document as "key: value" lines. */
void render_doc(struct buf *out, const struct msg_val *doc);

/* render_usage - the tokens and estimated cost of a STATUS document
 * (client/usage.c). */
void render_usage(struct buf *out, const struct msg_val *doc);

/* render_memory - the memory document: its status, then each view line. */
void render_memory(struct buf *out, const struct msg_val *doc);

/* render_zoom - a ZOOM document: the node, its children or message. */
void render_zoom(struct buf *out, const struct msg_val *doc);

/* render_log - a LOG document: "#i date kind: text" per message. */
void render_log(struct buf *out, const struct msg_val *doc);

/* render_reply - the document that answers a request of type req. */
void render_reply(
    struct buf *out, enum msg_type req, const struct msg_val *doc);

/* render_event - an EVENT as one or more lines (each ends with '\n'). */
void render_event(struct buf *out, const struct msg *ev);

/*
 * render_event_json - an EVENT as one JSON object (no newline); an
 * answer (ERROR, ACK) as its keys after "ev": its type's name.
 */
void render_event_json(struct buf *out, const struct msg *ev);

#endif
