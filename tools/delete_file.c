/* delete_file - remove one file (never a directory). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tools/tool.h"
#include "tools/ws.h"

/* delete_file_run - the delete_file tool. */
static int
delete_file_run(json_t *args, struct tool_ctx *ctx, json_t **result)
{
	char *rel = NULL;
	const char *base;
	struct stat st;
	int fd = -1, r;

	if (tool_path(ctx, args, "path", NULL, &rel, result) != 0)
		goto out;
	if ((r = ws_parent(ctx->wsfd, rel, &fd, &base)) < 0) {
		*result = tool_path_error(rel, r);
		goto out;
	}
	if (fstatat(fd, base, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		*result = tool_path_error(rel, -errno);
		goto out;
	}
	if (S_ISDIR(st.st_mode)) {
		*result = tool_error("%s is a directory; delete_file removes "
				     "files only",
		    rel);
		goto out;
	}
	if (unlinkat(fd, base, 0) < 0) {
		*result = tool_path_error(rel, -errno);
		goto out;
	}
	fsync(fd);
	*result = tool_ok();
	json_object_set_new(*result, "path", json_string(rel));
out:
	if (fd >= 0)
		close(fd);
	free(rel);
	return 0;
}

/* delete_file_subjects - the path removed. */
static int
delete_file_subjects(json_t *args, json_t *arr)
{
	return tool_subject_key(args, arr, "path", NULL);
}

const struct tool_def delete_file_def = {
    .name = "delete_file",
    .kind = TOOL_WRITE,
    .description = "Delete one file (a symlink is removed itself, never "
		   "its target). Directories are refused.",
    .schema = "{\"type\":\"object\",\"properties\":{"
	      "\"path\":{\"type\":\"string\"}},\"required\":[\"path\"]}",
    .subjects = delete_file_subjects,
    .run = delete_file_run,
};
