/* list_dir - list a directory tree, honouring .gitignore. */
#include <stdlib.h>
#include <string.h>

#include "proto/buf.h"
#include "tools/text.h"
#include "tools/tool.h"
#include "tools/walk.h"
#include "tools/ws.h"

struct list_dir_state {
	size_t skip; /* length of the listed directory's prefix */
	struct buf out;
	size_t count;
};

/* list_dir_one - add one entry to the listing. */
static int
list_dir_one(const struct walk_entry *e, void *arg)
{
	struct list_dir_state *s = arg;

	buf_adds(&s->out, e->rel + s->skip);
	buf_adds(&s->out, e->isdir ? "/\n" : e->islink ? "@\n" : "\n");
	s->count++;
	return 0;
}

/* list_dir_run - the list_dir tool. */
static int
list_dir_run(json_t *args, struct tool_ctx *ctx, json_t **result)
{
	struct list_dir_state s = {0, BUF_INIT, 0};
	struct buf text = BUF_INIT;
	long long depth;
	char *rel = NULL;
	int r, truncated, clipped;

	if (tool_path(ctx, args, "path", ".", &rel, result) != 0 ||
	    tool_int(args, "depth", 2, 1, 6, &depth, result) != 0)
		goto out;
	s.skip = strcmp(rel, ".") == 0 ? 0 : strlen(rel) + 1;
	r = walk_tree(ctx->wsfd, rel, (int)depth, TOOL_MAX_ENTRIES,
	    list_dir_one, &s, &truncated);
	if (r < 0) {
		*result = tool_path_error(rel, r);
		goto out;
	}
	/* Names are bytes: cleaned to UTF-8 and clipped like any output. */
	clipped = text_clip(
	    s.out.data ? s.out.data : "", s.out.len, tool_ctx_max(ctx), &text);
	*result = tool_ok();
	json_object_set_new(*result, "path", json_string(rel));
	json_object_set_new(*result, "entries",
	    json_stringn(text.data ? text.data : "", text.len));
	if (clipped)
		json_object_set_new(*result, "clipped", json_true());
	json_object_set_new(
	    *result, "count", json_integer((json_int_t)s.count));
	json_object_set_new(*result, "truncated", json_boolean(truncated));
out:
	buf_free(&s.out);
	buf_free(&text);
	free(rel);
	return 0;
}

/* list_dir_subjects - the directory listed. */
static int
list_dir_subjects(json_t *args, json_t *arr)
{
	return tool_subject_key(args, arr, "path", ".");
}

const struct tool_def list_dir_def = {
    .name = "list_dir",
    .kind = TOOL_READ,
    .description = "List a directory down to depth levels (1-6, default "
		   "2), one path per line: directories end in /, "
		   "symlinks in @. Honours .gitignore; at most 300 "
		   "entries, nearest levels first.",
    .schema = "{\"type\":\"object\",\"properties\":{"
	      "\"path\":{\"type\":\"string\"},"
	      "\"depth\":{\"type\":\"integer\",\"minimum\":1,"
	      "\"maximum\":6}}}",
    .subjects = list_dir_subjects,
    .run = list_dir_run,
};
