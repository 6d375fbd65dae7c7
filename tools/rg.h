/*
 * rg.h - ripgrep, run in the tool jail, for the grep tool.
 *
 * Used only where the process may run programs (the tool worker,
 * --once) and rg is installed; the fs worker never execs and uses the
 * internal search.  The caller filters what rg reports with the same
 * rules as the internal search (secret and hard-linked files).
 */
#ifndef SHIRO_TOOLS_RG_H
#define SHIRO_TOOLS_RG_H

#include <stddef.h>

#include "tools/tool.h"

/* rg_hit_fn - one matching line; return nonzero to stop the search. */
typedef int (*rg_hit_fn)(void *arg, const char *path, unsigned long line,
    const char *text, size_t len);

/* rg_available - nonzero when ctx may run ripgrep (cached PATH check). */
int rg_available(const struct tool_ctx *ctx);

/*
 * rg_search - search rel (relative to the workspace) for pattern, only
 * in files matching include (may be NULL), ignoring case if icase.
 * Returns 0 (with or without hits), -SHIRO_ERR_INVAL with rg's message
 * in *why (caller frees) for a pattern it refuses, -SHIRO_ERR_CANCELED
 * when ctx was canceled, or another negative SHIRO_ERR_* when rg could
 * not run (the caller then searches by itself).
 */
int rg_search(const struct tool_ctx *ctx, const char *pattern, const char *rel,
    const char *include, int icase, rg_hit_fn hit, void *arg, char **why);

#endif
