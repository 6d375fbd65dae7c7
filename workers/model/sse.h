/*
 * sse.h - a parser of server-sent events (the WHATWG "event stream"
 * format), fed the body of a response in pieces of any size.
 *
 * Lines end in CRLF, LF or CR (a CRLF split between two pieces counts
 * once).  A line "field: value" sets event or adds a data line (several
 * data lines are joined with LF); "id" and "retry" are read and ignored;
 * a line starting with ':' is a comment; a blank line dispatches the
 * event when it has data (name "message" when none was given).  A
 * leading byte order mark is skipped.  An event's name and data, and any
 * one line, are capped at max bytes: a longer one is an error, never a
 * larger allocation.
 */
#ifndef SHIRO_SSE_H
#define SHIRO_SSE_H

#include <stdbool.h>
#include <stddef.h>

#include "proto/buf.h"

/*
 * sse_event_fn - one event: name (a C string, never empty: a NUL byte in
 * it becomes '?') and data (NUL-terminated; it may hold NUL bytes).
 * Return 0 to go on, or a negative SHIRO_ERR_* to stop (sse_feed()
 * returns it).
 */
typedef int (*sse_event_fn)(
    void *arg, const char *name, const char *data, size_t len);

struct sse {
	sse_event_fn fn;
	void *arg;
	size_t max;
	struct buf line, name, data;
	bool has_data; /* a data line came since the last dispatch */
	bool cr; /* the last byte was a CR */
	bool started; /* past the byte order mark check */
	unsigned bom; /* bytes of a byte order mark matched so far */
	size_t events; /* dispatched */
	int err; /* the error that stopped it, sticky */
};

/* sse_init - a parser calling fn(arg, ...) per event, lines <= max. */
void sse_init(struct sse *s, size_t max, sse_event_fn fn, void *arg);

/* sse_free - free what s holds. */
void sse_free(struct sse *s);

/*
 * sse_feed - n more bytes of the stream: 0, -SHIRO_ERR_TOOBIG for a line
 * or event over max, or the callback's error.  After an error every
 * later call returns it again.
 */
int sse_feed(struct sse *s, const char *p, size_t n);

/*
 * sse_pending - whether the stream stopped inside an event (bytes of a
 * line or an undispatched event), as a cut stream does.
 */
bool sse_pending(const struct sse *s);

#endif
