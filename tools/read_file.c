/* read_file - read lines of one text file in the workspace. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proto/buf.h"
#include "tools/perm.h"
#include "tools/text.h"
#include "tools/tool.h"
#include "tools/ws.h"

#define READ_FILE_COLLECT (4u << 20) /* bytes of lines gathered at most */

/* read_file_lines - gather lines [first, first+limit) of fd into b;
 * *last is the last line gathered, *more tells whether any follow. */
static int
read_file_lines(int fd, long long first, long long limit, struct buf *b,
    long long *last, int *more, int *binary)
{
	char chunk[65536];
	long long line = 1;
	ssize_t n, i, start;
	int checked = 0, atbol = 1;

	*last = first - 1;
	*more = 0;
	*binary = 0;
	for (;;) {
		n = read(fd, chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		if (!checked) {
			checked = 1;
			if (text_is_binary(chunk, (size_t)n)) {
				*binary = 1;
				return 0;
			}
		}
		for (i = 0, start = 0; i < n; i++) {
			if (atbol && line >= first + limit) {
				*more = 1;
				return 0;
			}
			atbol = 0;
			if (chunk[i] != '\n')
				continue;
			if (line >= first)
				buf_add(
				    b, chunk + start, (size_t)(i + 1 - start));
			if (line >= first)
				*last = line;
			line++;
			start = i + 1;
			atbol = 1;
		}
		if (line >= first && start < n)
			buf_add(b, chunk + start, (size_t)(n - start));
		if (line >= first && start < n)
			*last = line;
		if (b->len > READ_FILE_COLLECT) {
			*more = 1;
			return 0;
		}
	}
	return 0;
}

/* read_file_text - the shared body of read_file and read_many_files. */
json_t *
read_file_text(const struct tool_ctx *ctx, const char *rel, long long first,
    long long limit, size_t max)
{
	struct buf b = BUF_INIT, clip = BUF_INIT;
	struct stat st;
	long long last;
	int fd = -1, r, more, binary, clipped;
	json_t *res;

	if (perm_is_secret(rel)) {
		res = tool_error("%s looks like a secret file (keys, tokens, "
				 ".env); read_file refuses to read it",
		    rel);
		goto out;
	}
	r = ws_open(ctx->wsfd, rel, O_RDONLY | O_NONBLOCK | O_NOCTTY, 0, &fd);
	if (r == 0 && fstat(fd, &st) < 0)
		r = -errno;
	if (r == 0 && S_ISDIR(st.st_mode)) {
		res = tool_error("%s is a directory; use list_dir", rel);
		goto out;
	}
	if (r == 0 && !S_ISREG(st.st_mode))
		r = -ENXIO;
	if (r == 0 && st.st_nlink > 1)
		r = -EMLINK;
	if (r == 0)
		r = read_file_lines(
		    fd, first, limit, &b, &last, &more, &binary);
	if (r < 0) {
		res = tool_path_error(rel, r);
		goto out;
	}
	if (binary) {
		res = tool_error(
		    "%s is a binary file; read_file reads text only", rel);
		goto out;
	}
	clipped = text_clip(b.data ? b.data : "", b.len, max, &clip);
	res = tool_ok();
	json_object_set_new(res, "path", json_string(rel));
	json_object_set_new(
	    res, "content", json_stringn(clip.data ? clip.data : "", clip.len));
	json_object_set_new(res, "first_line", json_integer(first));
	json_object_set_new(res, "last_line", json_integer(last));
	json_object_set_new(res, "more", json_boolean(more));
	if (more)
		json_object_set_new(res, "next_offset", json_integer(last + 1));
	if (clipped)
		json_object_set_new(res, "clipped", json_true());
	if (last < first && st.st_size > 0)
		json_object_set_new(res, "note",
		    json_string("offset is past the end of the file"));
out:
	if (fd >= 0)
		close(fd);
	buf_free(&b);
	buf_free(&clip);
	return res;
}

/* read_file_run - the read_file tool. */
static int
read_file_run(json_t *args, struct tool_ctx *ctx, json_t **result)
{
	long long offset, limit;
	char *rel = NULL;

	if (tool_path(ctx, args, "path", NULL, &rel, result) != 0 ||
	    tool_int(args, "offset", 1, 1, 1LL << 40, &offset, result) != 0 ||
	    tool_int(args, "limit", TOOL_READ_LINES, 1, TOOL_READ_LINES, &limit,
		result) != 0)
		goto out;
	*result = read_file_text(ctx, rel, offset, limit, tool_ctx_max(ctx));
out:
	free(rel);
	return 0;
}

/* read_file_subjects - the path read. */
static int
read_file_subjects(json_t *args, json_t *arr)
{
	return tool_subject_key(args, arr, "path", NULL);
}

const struct tool_def read_file_def = {
    .name = "read_file",
    .kind = TOOL_READ,
    .description = "Read a text file in the workspace: up to 2000 lines "
		   "from offset (1-based). Binary and secret files are "
		   "refused.",
    .schema = "{\"type\":\"object\",\"properties\":{"
	      "\"path\":{\"type\":\"string\",\"description\":\"file path, "
	      "relative to the workspace\"},"
	      "\"offset\":{\"type\":\"integer\",\"minimum\":1,"
	      "\"description\":\"first line to read, 1-based\"},"
	      "\"limit\":{\"type\":\"integer\",\"minimum\":1,"
	      "\"maximum\":2000,\"description\":\"lines to read\"}},"
	      "\"required\":[\"path\"]}",
    .subjects = read_file_subjects,
    .run = read_file_run,
};
