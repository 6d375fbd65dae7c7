/* move_file - rename a file or directory inside the workspace. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tools/tool.h"
#include "tools/ws.h"

/* move_file_run - the move_file tool. */
static int
move_file_run(json_t *args, struct tool_ctx *ctx, json_t **result)
{
	char *from = NULL, *to = NULL;
	const char *fb, *tb;
	int fd = -1, td = -1, r;
	unsigned flags = tool_bool(args, "overwrite", 0) ? 0 : RENAME_NOREPLACE;
	struct stat st;

	if (tool_path(ctx, args, "from", NULL, &from, result) != 0 ||
	    tool_path(ctx, args, "to", NULL, &to, result) != 0)
		goto out;
	if ((r = ws_parent(ctx->wsfd, from, &fd, &fb)) < 0) {
		*result = tool_path_error(from, r);
		goto out;
	}
	if (fstatat(fd, fb, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		*result = tool_path_error(from, -errno);
		goto out;
	}
	if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
		*result =
		    tool_error("%s is not a regular file or a directory", from);
		goto out;
	}
	r = ws_mkdirs(ctx->wsfd, to);
	if (r == 0)
		r = ws_parent(ctx->wsfd, to, &td, &tb);
	if (r < 0) {
		*result = tool_path_error(to, r);
		goto out;
	}
	if (flags == 0 && fstatat(td, tb, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    !S_ISREG(st.st_mode)) {
		*result = tool_error("%s exists and is not a regular file; "
				     "move_file overwrites only files",
		    to);
		goto out;
	}
	if (renameat2(fd, fb, td, tb, flags) < 0) {
		*result = tool_path_error(errno == EEXIST ? to : from, -errno);
		goto out;
	}
	fsync(fd);
	fsync(td);
	*result = tool_ok();
	json_object_set_new(*result, "from", json_string(from));
	json_object_set_new(*result, "to", json_string(to));
out:
	if (fd >= 0)
		close(fd);
	if (td >= 0)
		close(td);
	free(from);
	free(to);
	return 0;
}

/* move_file_subjects - both ends of the move. */
static int
move_file_subjects(json_t *args, json_t *arr)
{
	if (tool_subject_key(args, arr, "from", NULL) < 0)
		return -1;
	return tool_subject_key(args, arr, "to", NULL);
}

const struct tool_def move_file_def = {
    .name = "move_file",
    .kind = TOOL_WRITE,
    .description = "Move or rename a file or directory inside the "
		   "workspace. An existing target is refused unless "
		   "overwrite is set (files only).",
    .schema = "{\"type\":\"object\",\"properties\":{"
	      "\"from\":{\"type\":\"string\"},"
	      "\"to\":{\"type\":\"string\"},"
	      "\"overwrite\":{\"type\":\"boolean\"}},"
	      "\"required\":[\"from\",\"to\"]}",
    .subjects = move_file_subjects,
    .run = move_file_run,
};
