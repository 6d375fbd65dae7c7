/* edit_file - replace a unique piece of text in a file, atomically. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "proto/xmalloc.h"
#include "tools/text.h"
#include "tools/tool.h"
#include "tools/ws.h"

/* edit_file_count - occurrences of old in text, without overlaps. */
static size_t
edit_file_count(const struct buf *text, const char *old, size_t ol)
{
	const char *p = text->data, *end = text->data + text->len, *hit;
	size_t n = 0;

	while (p < end && (hit = memmem(p, (size_t)(end - p), old, ol))) {
		n++;
		p = hit + ol;
	}
	return n;
}

/* edit_file_apply - replace old with new_ in *text. */
size_t
edit_file_apply(
    struct buf *text, const char *old, const char *new_, int all, char **why)
{
	struct buf out = BUF_INIT;
	size_t ol = strlen(old), nl = strlen(new_), n;
	const char *p, *end, *hit;

	*why = NULL;
	if (ol == 0) {
		*why = xstrdup("old_string is empty; use write_file to create "
			       "or replace a whole file");
		return 0;
	}
	if (strcmp(old, new_) == 0) {
		*why = xstrdup("old_string and new_string are the same");
		return 0;
	}
	n = edit_file_count(text, old, ol);
	if (n == 0) {
		*why = xstrdup("old_string was not found (it must match the "
			       "file exactly, whitespace and indentation "
			       "included)");
		return 0;
	}
	if (n > 1 && !all) {
		*why = xasprintf("old_string occurs %zu times; include more "
				 "surrounding text to make it unique, or set "
				 "replace_all",
		    n);
		return 0;
	}
	p = text->data;
	end = text->data + text->len;
	while ((hit = memmem(p, (size_t)(end - p), old, ol)) != NULL) {
		buf_add(&out, p, (size_t)(hit - p));
		buf_add(&out, new_, nl);
		p = hit + ol;
	}
	buf_add(&out, p, (size_t)(end - p));
	buf_free(text);
	*text = out;
	if (text->data == NULL)
		buf_adds(text, "");
	return n;
}

/* edit_file_load - read rel for an edit. */
int
edit_file_load(
    const struct tool_ctx *ctx, const char *rel, struct buf *text, json_t **err)
{
	struct stat st;
	int r;

	r = ws_read_text(ctx->wsfd, rel, text, &st);
	if (r < 0) {
		*err = tool_path_error(rel, r);
		return -1;
	}
	if (text_is_binary(text->data, text->len)) {
		*err = tool_error("%s is a binary file; it cannot be edited as "
				  "text",
		    rel);
		return -1;
	}
	return 0;
}

/* edit_file_run - the edit_file tool. */
static int
edit_file_run(json_t *args, struct tool_ctx *ctx, json_t **result)
{
	const char *old = tool_str(args, "old_string");
	const char *new_ = tool_str(args, "new_string");
	struct buf text = BUF_INIT;
	struct ws_txn *t = NULL;
	char *rel = NULL, *why = NULL, *failed = NULL;
	size_t n;
	int r;

	if (tool_path(ctx, args, "path", NULL, &rel, result) != 0)
		goto out;
	if (old == NULL || new_ == NULL) {
		*result =
		    tool_error("old_string and new_string must be strings");
		goto out;
	}
	if (edit_file_load(ctx, rel, &text, result) != 0)
		goto out;
	n = edit_file_apply(
	    &text, old, new_, tool_bool(args, "replace_all", 0), &why);
	if (n == 0) {
		*result = tool_error("%s: %s", rel, why);
		goto out;
	}
	t = ws_txn_new(ctx->wsfd);
	ws_txn_write(t, rel, text.data, text.len, 0, 0);
	r = ws_txn_commit(t, &failed);
	if (r < 0) {
		*result = tool_path_error(rel, r);
		goto out;
	}
	*result = tool_ok();
	json_object_set_new(*result, "path", json_string(rel));
	json_object_set_new(
	    *result, "replacements", json_integer((json_int_t)n));
out:
	ws_txn_destroy(&t);
	buf_free(&text);
	free(failed);
	free(why);
	free(rel);
	return 0;
}

/* edit_file_subjects - the path edited. */
static int
edit_file_subjects(json_t *args, json_t *arr)
{
	return tool_subject_key(args, arr, "path", NULL);
}

const struct tool_def edit_file_def = {
    .name = "edit_file",
    .kind = TOOL_WRITE,
    .description = "Replace old_string with new_string in a file. "
		   "old_string must occur exactly once unless replace_all "
		   "is set. The file is replaced atomically.",
    .schema = "{\"type\":\"object\",\"properties\":{"
	      "\"path\":{\"type\":\"string\"},"
	      "\"old_string\":{\"type\":\"string\"},"
	      "\"new_string\":{\"type\":\"string\"},"
	      "\"replace_all\":{\"type\":\"boolean\"}},"
	      "\"required\":[\"path\",\"old_string\",\"new_string\"]}",
    .subjects = edit_file_subjects,
    .run = edit_file_run,
};
