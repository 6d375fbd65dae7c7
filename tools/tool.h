/*
 * tool.h - the catalogue of tools the model may call.
 *
 * Each tool has a name, a JSON schema of its arguments (sent to the
 * model), a kind (read, write or exec) and a subject extractor that says
 * what the permission engine (perm.h) matches rules on: the command for
 * bash, the path or paths for the file tools.
 *
 * tool_call() runs one tool.  A tool's failure (a missing file, an edit
 * that does not apply, a path outside the workspace) is not an error of
 * tool_call(): it is a result document {"ok": false, "error": "..."}
 * that the model reads.  Every result has "ok"; a successful one carries
 * the tool's own fields.  The caller owns *result.
 *
 * File tools resolve every path with openat2(RESOLVE_BENEATH |
 * RESOLVE_NO_MAGICLINKS) from ctx->wsfd; writes add RESOLVE_NO_SYMLINKS
 * so no write goes through any symlink.  See docs/tools.md.
 */
#ifndef SHIRO_TOOL_H
#define SHIRO_TOOL_H

#include <signal.h>
#include <stddef.h>

#include <jansson.h>

#include "proto/buf.h"

/* The caps of the catalogue (docs/tools.md). */
#define TOOL_MAX_OUTPUT 30000 /* characters of output kept, head+tail */
#define TOOL_MAX_HITS 200 /* grep hits, glob matches */
#define TOOL_MAX_ENTRIES 300 /* list_dir entries */
#define TOOL_READ_LINES 2000 /* read_file lines by default */
#define TOOL_MAX_FILES 20 /* read_many_files paths */
#define TOOL_MAX_FILE (8u << 20) /* bytes a file tool reads or writes */
#define TOOL_BASH_TIMEOUT 120 /* seconds, default */
#define TOOL_BASH_TIMEOUT_MAX 600

enum tool_kind { TOOL_READ, TOOL_WRITE, TOOL_EXEC };

/* tool_emit_fn - receives output as it comes (bash); may be NULL. */
typedef void (*tool_emit_fn)(void *arg, const char *data, size_t len);

struct tool_ctx {
	int wsfd; /* the workspace directory, opened O_DIRECTORY */
	const char *wspath; /* its absolute path, or NULL (absolute path
				arguments under it are accepted) */
	size_t max_output; /* characters; 0 means TOOL_MAX_OUTPUT */
	unsigned timeout_s; /* bash default; 0 means TOOL_BASH_TIMEOUT */
	unsigned timeout_max_s; /* 0 means TOOL_BASH_TIMEOUT_MAX */
	int may_exec; /* this process may run programs (bash, rg) */
	int net; /* bash gets the network (set by a person only) */
	tool_emit_fn emit;
	void *emit_arg;
	volatile sig_atomic_t *cancel; /* nonzero: stop, kill what runs */
	/* tick - called at least every 100 ms while a long tool runs (a
	 * worker heartbeats from it); nonzero cancels the call.  May be
	 * NULL. */
	int (*tick)(void *arg);
	void *tick_arg;
};

struct tool_def {
	const char *name;
	enum tool_kind kind;
	const char *description;
	const char *schema; /* JSON text of the arguments' schema */
	/* subjects - append the permission subjects of args to arr. */
	int (*subjects)(json_t *args, json_t *arr);
	/* run - run the tool; *result is always set when 0 is returned. */
	int (*run)(json_t *args, struct tool_ctx *ctx, json_t **result);
};

/* tool_find - the catalogue entry named name, or NULL. */
const struct tool_def *tool_find(const char *name);

/* tool_at - the i-th catalogue entry, NULL past the end. */
const struct tool_def *tool_at(size_t i);

/* tool_kind_name - "read", "write" or "exec". */
const char *tool_kind_name(enum tool_kind kind);

/*
 * tool_call - run the tool name with args (borrowed) in ctx.  Returns 0
 * with a result document in *result (caller frees with json_decref),
 * even when the tool failed; an unknown tool or malformed arguments are
 * error results too.  Returns a negative SHIRO_ERR_* only when ctx is
 * unusable.
 */
int tool_call(
    const char *name, json_t *args, struct tool_ctx *ctx, json_t **result);

/*
 * tool_subjects - the permission subjects of a call: a new JSON array of
 * strings in *out.  Returns -SHIRO_ERR_INVAL (with *out NULL) when the
 * tool is unknown or the arguments lack what the subject needs.
 */
int tool_subjects(const char *name, json_t *args, json_t **out);

/* tool_schemas - a new array of {name, description, kind, parameters}. */
json_t *tool_schemas(void);

/* tool_error - a new error result: {"ok": false, "error": printf text}. */
json_t *tool_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* tool_ok - a new success result {"ok": true}, to add fields to. */
json_t *tool_ok(void);

/* tool_ctx_max - ctx's output cap in characters. */
size_t tool_ctx_max(const struct tool_ctx *ctx);

/* tool_canceled - nonzero when the call should stop (runs the tick). */
int tool_canceled(const struct tool_ctx *ctx);

/* Helpers for the tools' own files. */

/* tool_str - args[key] when it is a string without NUL bytes, else NULL. */
const char *tool_str(json_t *args, const char *key);

/*
 * tool_int - args[key] as an integer in *out: def when absent; an error
 * result in *err when it is not an integer within [min, max].
 */
int tool_int(json_t *args, const char *key, long long def, long long min,
    long long max, long long *out, json_t **err);

/* tool_bool - args[key] as a boolean; def when absent or not boolean. */
int tool_bool(json_t *args, const char *key, int def);

/*
 * tool_path - the workspace-relative path in args[key] (caller frees);
 * def when absent (NULL: the key is required).  On failure returns
 * nonzero and puts an error result in *err.
 */
int tool_path(const struct tool_ctx *ctx, json_t *args, const char *key,
    const char *def, char **rel, json_t **err);

/* tool_path_error - a new error result for errno e on path. */
json_t *tool_path_error(const char *path, int e);

/* tool_subject_path - subjects for tools whose subject is args[key]. */
int tool_subject_key(
    json_t *args, json_t *arr, const char *key, const char *def);

/*
 * read_file_text - read lines [first, first+limit) of rel, clipped to
 * max characters: a new result document (read_file.c).
 */
json_t *read_file_text(const struct tool_ctx *ctx, const char *rel,
    long long first, long long limit, size_t max);

/*
 * edit_file_apply - replace old with new in *text (edit_file.c): once
 * when old occurs exactly once, everywhere when all is set.  Returns the
 * number of replacements, or 0 with an error sentence in *why (caller
 * frees).
 */
size_t edit_file_apply(
    struct buf *text, const char *old, const char *new_, int all, char **why);

/*
 * edit_file_load - read rel for an edit (edit_file.c): 0, or an error
 * result in *err.
 */
int edit_file_load(const struct tool_ctx *ctx, const char *rel,
    struct buf *text, json_t **err);

/* The catalogue's entries, one per file in tools/. */
extern const struct tool_def read_file_def, read_many_files_def, write_file_def,
    edit_file_def, multi_edit_def, apply_patch_def, move_file_def,
    delete_file_def, list_dir_def, glob_def, grep_def, bash_def;

#endif
