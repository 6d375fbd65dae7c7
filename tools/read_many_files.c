/* read_many_files - read several files at once, errors inline. */
#include <stdlib.h>

#include "tools/tool.h"
#include "tools/ws.h"

/* read_many_files_run - the read_many_files tool. */
static int
read_many_files_run(json_t *args, struct tool_ctx *ctx, json_t **result)
{
	json_t *paths = json_object_get(args, "paths"), *files, *v, *one;
	size_t i, n, share;
	char *rel;
	int r;

	n = json_array_size(paths);
	if (!json_is_array(paths) || n == 0) {
		*result =
		    tool_error("paths must be a non-empty array of paths");
		return 0;
	}
	if (n > TOOL_MAX_FILES) {
		*result = tool_error(
		    "at most %d paths at once (got %zu)", TOOL_MAX_FILES, n);
		return 0;
	}
	/* The output cap is shared evenly between the files. */
	share = tool_ctx_max(ctx) / n;
	files = json_array();
	for (i = 0; (v = json_array_get(paths, i)) != NULL; i++) {
		if (!json_is_string(v)) {
			one = tool_error("paths[%zu] is not a string", i);
			json_array_append_new(files, one);
			continue;
		}
		r = ws_path(ctx, v, &rel);
		if (r < 0)
			one = tool_path_error(json_string_value(v), r);
		else
			one =
			    read_file_text(ctx, rel, 1, TOOL_READ_LINES, share);
		if (json_object_get(one, "path") == NULL)
			json_object_set(one, "path", v);
		json_array_append_new(files, one);
		free(rel);
	}
	*result = tool_ok();
	json_object_set_new(*result, "files", files);
	return 0;
}

/* read_many_files_subjects - every path read. */
static int
read_many_files_subjects(json_t *args, json_t *arr)
{
	json_t *v;
	size_t i;

	for (i = 0;
	     (v = json_array_get(json_object_get(args, "paths"), i)) != NULL;
	     i++) {
		if (!json_is_string(v))
			return -1;
		json_array_append(arr, v);
	}
	return 0;
}

const struct tool_def read_many_files_def = {
    .name = "read_many_files",
    .kind = TOOL_READ,
    .description = "Read up to 20 text files at once; each file's result "
		   "or error is given in order.",
    .schema = "{\"type\":\"object\",\"properties\":{"
	      "\"paths\":{\"type\":\"array\",\"items\":{\"type\":"
	      "\"string\"},\"minItems\":1,\"maxItems\":20}},"
	      "\"required\":[\"paths\"]}",
    .subjects = read_many_files_subjects,
    .run = read_many_files_run,
};
