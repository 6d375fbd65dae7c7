/*
 * offline.h - the `offline` wire: an extractive summarizer built in.
 *
 * It needs no network and no key, so the chat's memory works on a fresh
 * machine.  It writes one line of at most `limit` bytes: the kind tags
 * first ("user: ", "user+shiro: "), then the user's words, then sentences
 * that report errors, then the names, paths and numbers it finds (each
 * kept byte for byte when it fits whole), then the rest of the text in
 * order while room remains; the cut falls at a character boundary.
 * Sources that fit whole are kept whole.  The same input always gives the
 * same line.
 */
#ifndef SHIRO_OFFLINE_H
#define SHIRO_OFFLINE_H

#include <stddef.h>

#include "proto/buf.h"
#include "workers/model/model.h"

/*
 * offline_summarize - the line for n inputs (1 or 2) into out (reset
 * first): 1 to limit bytes of valid UTF-8 without control characters,
 * for any input bytes.  limit must be at least 16.
 */
void offline_summarize(
    const struct model_input *in, size_t n, size_t limit, struct buf *out);

#endif
