/* write_file - write a whole file atomically. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proto/xmalloc.h"
#include "tools/tool.h"
#include "tools/ws.h"

/* write_file_run - the write_file tool. */
static int
write_file_run(json_t *args, struct tool_ctx *ctx, json_t **result)
{
	json_t *content = json_object_get(args, "content");
	struct ws_txn *t = NULL;
	char *rel = NULL, *failed = NULL;
	struct stat st;
	const char *base;
	int r, dfd, created = 1;

	if (tool_path(ctx, args, "path", NULL, &rel, result) != 0)
		goto out;
	if (!json_is_string(content)) {
		*result = tool_error("content must be a string");
		goto out;
	}
	if (json_string_length(content) > TOOL_MAX_FILE) {
		*result = tool_path_error(rel, -EFBIG);
		goto out;
	}
	r = ws_parent(ctx->wsfd, rel, &dfd, &base);
	if (r == 0) {
		if (fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) == 0)
			created = 0;
		close(dfd);
	}
	if (r < 0 && r != -ENOENT) {
		*result = tool_path_error(rel, r);
		goto out;
	}
	t = ws_txn_new(ctx->wsfd);
	ws_txn_write(t, rel, json_string_value(content),
	    json_string_length(content), 0, 0);
	r = ws_txn_commit(t, &failed);
	if (r < 0) {
		*result = tool_path_error(rel, r);
		goto out;
	}
	*result = tool_ok();
	json_object_set_new(*result, "path", json_string(rel));
	json_object_set_new(*result, "bytes",
	    json_integer((json_int_t)json_string_length(content)));
	json_object_set_new(*result, "created", json_boolean(created));
out:
	ws_txn_destroy(&t);
	free(failed);
	free(rel);
	return 0;
}

/* write_file_subjects - the path written. */
static int
write_file_subjects(json_t *args, json_t *arr)
{
	return tool_subject_key(args, arr, "path", NULL);
}

const struct tool_def write_file_def = {
    .name = "write_file",
    .kind = TOOL_WRITE,
    .description = "Write a whole file (created or replaced atomically; "
		   "missing parent directories are created). Symlinks and "
		   "hard-linked files are refused.",
    .schema = "{\"type\":\"object\",\"properties\":{"
	      "\"path\":{\"type\":\"string\"},"
	      "\"content\":{\"type\":\"string\"}},"
	      "\"required\":[\"path\",\"content\"]}",
    .subjects = write_file_subjects,
    .run = write_file_run,
};
