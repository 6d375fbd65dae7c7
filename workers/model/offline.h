/*
 * offline.h - the `offline` wire: an extractive summarizer built in.
 *
 * It needs no network and no key, so the chat's memory works on a fresh
 * machine, and it is the fallback when no provider is configured.  Its
 * line (docs/protocol.md, "The offline provider"): the kind tags, then
 * whole clauses (the opening clause of each source, then those that
 * carry errors, paths and names), the key tokens not said yet, the other
 * clauses, numbers with their units; never a run of three words twice,
 * never a key token twice, never past the limit, cut at a character
 * boundary.  The same input always gives the same line.
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
