/* glob - find paths matching a pattern, honouring .gitignore. */
#include <stdlib.h>
#include <string.h>

#include "tools/match.h"
#include "tools/text.h"
#include "tools/tool.h"
#include "tools/walk.h"
#include "tools/ws.h"

#define GLOB_VISIT 200000
#define GLOB_DEPTH 64

struct glob_state {
	const char *pat;
	size_t skip;
	json_t *matches;
	size_t chars, max; /* characters of the matches so far, the cap */
	int truncated;
};

/* glob_one - test one entry against the pattern. */
static int
glob_one(const struct walk_entry *e, void *arg)
{
	struct glob_state *s = arg;
	const char *sub = e->rel + s->skip;

	/* A pattern without a slash matches names at any depth. */
	if (!match_glob(s->pat, strchr(s->pat, '/') ? sub : e->name, 1))
		return 0;
	s->chars += strlen(e->rel) + 4;
	if (json_array_size(s->matches) == TOOL_MAX_HITS || s->chars > s->max) {
		s->truncated = 1;
		return 1;
	}
	/* Names are bytes: cleaned to UTF-8 for the result. */
	json_array_append_new(s->matches, text_string(e->rel, strlen(e->rel)));
	return 0;
}

/* glob_run - the glob tool. */
static int
glob_run(json_t *args, struct tool_ctx *ctx, json_t **result)
{
	struct glob_state s = {NULL, 0, NULL, 0, 0, 0};
	char *rel = NULL;
	int r, truncated;

	s.pat = tool_str(args, "pattern");
	if (tool_path(ctx, args, "path", ".", &rel, result) != 0)
		goto out;
	if (s.pat == NULL || s.pat[0] == '\0' || !match_valid(s.pat)) {
		*result = tool_error("pattern must be a glob pattern such as "
				     "\"**/*.c\"");
		goto out;
	}
	while (s.pat[0] == '.' && s.pat[1] == '/')
		s.pat += 2;
	s.skip = strcmp(rel, ".") == 0 ? 0 : strlen(rel) + 1;
	s.matches = json_array();
	s.max = tool_ctx_max(ctx);
	r = walk_tree(
	    ctx->wsfd, rel, GLOB_DEPTH, GLOB_VISIT, glob_one, &s, &truncated);
	if (r < 0) {
		*result = tool_path_error(rel, r);
		goto out;
	}
	*result = tool_ok();
	json_object_set(*result, "matches", s.matches);
	json_object_set_new(
	    *result, "truncated", json_boolean(truncated || s.truncated));
out:
	json_decref(s.matches);
	free(rel);
	return 0;
}

/* glob_subjects - the directory searched. */
static int
glob_subjects(json_t *args, json_t *arr)
{
	return tool_subject_key(args, arr, "path", ".");
}

const struct tool_def glob_def = {
    .name = "glob",
    .kind = TOOL_READ,
    .description = "Find files and directories whose path matches a glob "
		   "(*, ?, [..], ** for any directories; a pattern "
		   "without / matches names at any depth). Honours "
		   ".gitignore; at most 200 matches.",
    .schema = "{\"type\":\"object\",\"properties\":{"
	      "\"pattern\":{\"type\":\"string\"},"
	      "\"path\":{\"type\":\"string\",\"description\":\"directory "
	      "to search, default the workspace\"}},"
	      "\"required\":[\"pattern\"]}",
    .subjects = glob_subjects,
    .run = glob_run,
};
