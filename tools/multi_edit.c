/* multi_edit - several edits over one or more files, all or nothing. */
#include <stdlib.h>
#include <string.h>

#include "proto/xmalloc.h"
#include "tools/tool.h"
#include "tools/ws.h"

#define MULTI_EDIT_MAX 100

struct multi_edit_file {
	char *rel;
	struct buf text;
};

/* multi_edit_run - the multi_edit tool. */
static int
multi_edit_run(json_t *args, struct tool_ctx *ctx, json_t **result)
{
	json_t *edits = json_object_get(args, "edits"), *e;
	struct multi_edit_file files[MULTI_EDIT_MAX];
	size_t nf = 0, i, j, n, total = 0;
	struct ws_txn *t = NULL;
	char *defrel = NULL, *rel, *why = NULL, *failed = NULL;
	int r;

	*result = NULL;
	if (json_object_get(args, "path") != NULL &&
	    tool_path(ctx, args, "path", NULL, &defrel, result) != 0)
		goto out;
	n = json_array_size(edits);
	if (!json_is_array(edits) || n == 0 || n > MULTI_EDIT_MAX) {
		*result = tool_error(
		    "edits must be an array of 1 to %d edits", MULTI_EDIT_MAX);
		goto out;
	}
	for (i = 0; (e = json_array_get(edits, i)) != NULL; i++) {
		const char *old = tool_str(e, "old_string");
		const char *new_ = tool_str(e, "new_string");
		if (json_object_get(e, "path") != NULL) {
			if (tool_path(ctx, e, "path", NULL, &rel, result) != 0)
				goto out;
		} else if (defrel != NULL) {
			rel = xstrdup(defrel);
		} else {
			*result = tool_error("edit %zu has no path (and there "
					     "is no top-level path)",
			    i + 1);
			goto out;
		}
		if (old == NULL || new_ == NULL) {
			free(rel);
			*result = tool_error("edit %zu: old_string and "
					     "new_string must be strings",
			    i + 1);
			goto out;
		}
		for (j = 0; j < nf && strcmp(files[j].rel, rel) != 0; j++)
			;
		if (j == nf) {
			files[nf].rel = rel;
			buf_init(&files[nf].text);
			nf++;
			if (edit_file_load(ctx, rel, &files[j].text, result) !=
			    0)
				goto out;
		} else {
			free(rel);
		}
		if (edit_file_apply(&files[j].text, old, new_,
			tool_bool(e, "replace_all", 0), &why) == 0) {
			*result = tool_error("edit %zu on %s: %s; nothing was "
					     "written",
			    i + 1, files[j].rel, why);
			goto out;
		}
		total++;
	}
	t = ws_txn_new(ctx->wsfd);
	for (j = 0; j < nf; j++)
		ws_txn_write(t, files[j].rel, files[j].text.data,
		    files[j].text.len, 0, 0);
	r = ws_txn_commit(t, &failed);
	if (r < 0) {
		*result = tool_path_error(failed ? failed : "?", r);
		goto out;
	}
	*result = tool_ok();
	json_object_set_new(*result, "edits", json_integer((json_int_t)total));
	json_object_set_new(*result, "files", json_array());
	for (j = 0; j < nf; j++)
		json_array_append_new(json_object_get(*result, "files"),
		    json_string(files[j].rel));
out:
	for (j = 0; j < nf; j++) {
		free(files[j].rel);
		buf_free(&files[j].text);
	}
	ws_txn_destroy(&t);
	free(failed);
	free(why);
	free(defrel);
	return 0;
}

/* multi_edit_subjects - every path an edit touches. */
static int
multi_edit_subjects(json_t *args, json_t *arr)
{
	json_t *e, *def = json_object_get(args, "path");
	size_t i;

	for (i = 0;
	     (e = json_array_get(json_object_get(args, "edits"), i)) != NULL;
	     i++) {
		json_t *p = json_object_get(e, "path");
		if (p == NULL)
			p = def;
		if (!json_is_string(p))
			return -1;
		json_array_append(arr, p);
	}
	return 0;
}

const struct tool_def multi_edit_def = {
    .name = "multi_edit",
    .kind = TOOL_WRITE,
    .description = "Apply several edits in order (each like edit_file), "
		   "to one file (path) or to several (a path per edit). "
		   "Nothing is written unless every edit applies.",
    .schema = "{\"type\":\"object\",\"properties\":{"
	      "\"path\":{\"type\":\"string\"},"
	      "\"edits\":{\"type\":\"array\",\"items\":{\"type\":"
	      "\"object\",\"properties\":{"
	      "\"path\":{\"type\":\"string\"},"
	      "\"old_string\":{\"type\":\"string\"},"
	      "\"new_string\":{\"type\":\"string\"},"
	      "\"replace_all\":{\"type\":\"boolean\"}},"
	      "\"required\":[\"old_string\",\"new_string\"]}}},"
	      "\"required\":[\"edits\"]}",
    .subjects = multi_edit_subjects,
    .run = multi_edit_run,
};
