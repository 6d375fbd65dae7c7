/* grep - search file contents with a regular expression. */
#include <errno.h>
#include <fcntl.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proto/buf.h"
#include "proto/err.h"
#include "proto/xmalloc.h"
#include "tools/match.h"
#include "tools/perm.h"
#include "tools/rg.h"
#include "tools/text.h"
#include "tools/tool.h"
#include "tools/walk.h"
#include "tools/ws.h"

#define GREP_VISIT 200000
#define GREP_DEPTH 64
#define GREP_LINE 500 /* bytes of a matching line shown */

struct grep_state {
	regex_t re;
	const char *include;
	const struct tool_ctx *ctx;
	struct buf out;
	size_t hits, files;
	int truncated;
	char *last; /* ripgrep: the last file reported, and */
	int last_ok; /* whether it passed the checks */
};

/* grep_fd - search the open file fd (consumed), named rel. */
static int
grep_fd(struct grep_state *s, int fd, const char *rel)
{
	struct buf b = BUF_INIT;
	struct stat st;
	char *line, *nl, *end;
	size_t lineno = 0, before = s->hits;
	int stop = 0;

	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_nlink > 1 ||
	    (size_t)st.st_size > TOOL_MAX_FILE ||
	    ws_read_fd(fd, TOOL_MAX_FILE, &b) < 0 ||
	    text_is_binary(b.data, b.len))
		goto out;
	line = b.data;
	end = b.data + b.len;
	while (line < end && !stop) {
		nl = memchr(line, '\n', (size_t)(end - line));
		if (nl == NULL)
			nl = end;
		*nl = '\0';
		lineno++;
		if (regexec(&s->re, line, 0, NULL, 0) == 0) {
			size_t n = (size_t)(nl - line);
			if (s->hits == TOOL_MAX_HITS) {
				s->truncated = 1;
				stop = 1;
				break;
			}
			s->hits++;
			buf_printf(&s->out, "%s:%zu:", rel, lineno);
			text_utf8_clean(
			    line, n > GREP_LINE ? GREP_LINE : n, &s->out);
			buf_adds(&s->out, n > GREP_LINE ? " [...]\n" : "\n");
		}
		line = nl + 1;
	}
	if (s->hits > before)
		s->files++;
out:
	close(fd);
	buf_free(&b);
	return stop;
}

/* grep_one - search one entry of the walk. */
static int
grep_one(const struct walk_entry *e, void *arg)
{
	struct grep_state *s = arg;
	int fd;

	if (tool_canceled(s->ctx))
		return 1;
	if (e->isdir || e->islink || perm_is_secret(e->rel))
		return 0;
	if (s->include != NULL &&
	    !match_glob(
		s->include, strchr(s->include, '/') ? e->rel : e->name, 1))
		return 0;
	fd = openat(e->dirfd, e->name,
	    O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	return grep_fd(s, fd, e->rel);
}

/* grep_file_ok - whether a file ripgrep reports passes the checks of
 * the internal search: not secret, a regular file with one link. */
static int
grep_file_ok(const struct tool_ctx *ctx, const char *path)
{
	struct stat st;
	int fd, ok;

	if (perm_is_secret(path) ||
	    ws_open(ctx->wsfd, path, O_RDONLY | O_NONBLOCK | O_NOCTTY, 0, &fd) <
		0)
		return 0;
	ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_nlink == 1;
	close(fd);
	return ok;
}

/* grep_rg_hit - one line ripgrep found: filtered, counted, printed. */
static int
grep_rg_hit(void *arg, const char *path, unsigned long line, const char *text,
    size_t len)
{
	struct grep_state *s = arg;

	if (s->last == NULL || strcmp(s->last, path) != 0) {
		free(s->last);
		s->last = xstrdup(path);
		s->last_ok = grep_file_ok(s->ctx, path);
		if (s->last_ok)
			s->files++;
	}
	if (!s->last_ok)
		return 0;
	if (s->hits == TOOL_MAX_HITS) {
		s->truncated = 1;
		return 1;
	}
	s->hits++;
	buf_printf(&s->out, "%s:%lu:", path, line);
	text_utf8_clean(text, len > GREP_LINE ? GREP_LINE : len, &s->out);
	buf_adds(&s->out, len > GREP_LINE ? " [...]\n" : "\n");
	return 0;
}

/* grep_run - the grep tool (the internal search). */
static int
grep_run(json_t *args, struct tool_ctx *ctx, json_t **result)
{
	struct grep_state s;
	const char *pattern = tool_str(args, "pattern");
	struct buf clip = BUF_INIT;
	char *rel = NULL, errbuf[200];
	int r, truncated = 0, fd, compiled = 0;

	memset(&s, 0, sizeof(s));
	s.ctx = ctx;
	s.include = tool_str(args, "glob");
	if (tool_path(ctx, args, "path", ".", &rel, result) != 0)
		goto out;
	if (pattern == NULL || pattern[0] == '\0') {
		*result = tool_error("pattern must be a non-empty regular "
				     "expression");
		goto out;
	}
	if (s.include != NULL && !match_valid(s.include)) {
		*result = tool_error("glob is not a valid pattern");
		goto out;
	}
	r = regcomp(&s.re, pattern,
	    REG_EXTENDED | REG_NOSUB |
		(tool_bool(args, "ignore_case", 0) ? REG_ICASE : 0));
	if (r != 0) {
		regerror(r, &s.re, errbuf, sizeof(errbuf));
		*result = tool_error("pattern is not a valid extended regular "
				     "expression: %s",
		    errbuf);
		goto out;
	}
	compiled = 1;
	if (perm_is_secret(rel)) {
		*result =
		    tool_error("%s looks like a secret file; grep refuses "
			       "to search it",
			rel);
		goto out;
	}
	if (rg_available(ctx)) {
		/* ripgrep in the jail, where this process may run it; if it
		 * cannot run, the internal search below does the work. */
		char *why = NULL;
		r = rg_search(ctx, pattern, rel, s.include,
		    tool_bool(args, "ignore_case", 0), grep_rg_hit, &s, &why);
		if (r == -SHIRO_ERR_INVAL) {
			*result =
			    tool_error("ripgrep refused the pattern: %s", why);
			free(why);
			goto out;
		}
		free(why);
		if (r == 0 || r == -SHIRO_ERR_CANCELED)
			goto done;
		buf_reset(&s.out);
		s.hits = s.files = 0;
		s.truncated = 0;
	}
	r = walk_tree(
	    ctx->wsfd, rel, GREP_DEPTH, GREP_VISIT, grep_one, &s, &truncated);
	if (r == -ENOTDIR) {
		/* A single file: the same checks, opened beneath the fd. */
		r = ws_open(
		    ctx->wsfd, rel, O_RDONLY | O_NONBLOCK | O_NOCTTY, 0, &fd);
		if (r == 0)
			grep_fd(&s, fd, rel);
	}
	if (r < 0) {
		*result = tool_path_error(rel, r);
		goto out;
	}
done:
	if (tool_canceled(ctx)) {
		*result = tool_error("grep was interrupted");
		goto out;
	}
	text_clip(
	    s.out.data ? s.out.data : "", s.out.len, tool_ctx_max(ctx), &clip);
	*result = tool_ok();
	json_object_set_new(*result, "output",
	    json_stringn(clip.data ? clip.data : "", clip.len));
	json_object_set_new(*result, "hits", json_integer((json_int_t)s.hits));
	json_object_set_new(
	    *result, "files", json_integer((json_int_t)s.files));
	json_object_set_new(
	    *result, "truncated", json_boolean(truncated || s.truncated));
out:
	if (compiled)
		regfree(&s.re);
	free(s.last);
	buf_free(&s.out);
	buf_free(&clip);
	free(rel);
	return 0;
}

/* grep_subjects - the directory or file searched. */
static int
grep_subjects(json_t *args, json_t *arr)
{
	return tool_subject_key(args, arr, "path", ".");
}

const struct tool_def grep_def = {
    .name = "grep",
    .kind = TOOL_READ,
    .description = "Search file contents for an extended regular "
		   "expression (ripgrep runs it where installed); prints "
		   "path:line:text. Honours .gitignore, skips binary and "
		   "secret files; at most 200 hits.",
    .schema = "{\"type\":\"object\",\"properties\":{"
	      "\"pattern\":{\"type\":\"string\",\"description\":\"POSIX "
	      "extended regular expression\"},"
	      "\"path\":{\"type\":\"string\",\"description\":\"directory "
	      "or file, default the workspace\"},"
	      "\"glob\":{\"type\":\"string\",\"description\":\"only "
	      "files whose name (or path, with a /) matches\"},"
	      "\"ignore_case\":{\"type\":\"boolean\"}},"
	      "\"required\":[\"pattern\"]}",
    .subjects = grep_subjects,
    .run = grep_run,
};
