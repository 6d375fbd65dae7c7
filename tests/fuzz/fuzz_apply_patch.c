/*
 * fuzz_apply_patch - libFuzzer target for apply_patch's diff parser.
 *
 * The input is the patch text a model gives apply_patch.  It runs as a
 * call of the tool (fuzz_tool_run: the permission engine, the tool, the
 * checks every call gets) in a workspace of known files; on top of
 * those, a patch that applies must list each file it touched with what
 * it did ("created", "modified", "moved" or "deleted") under a path
 * inside the workspace, and leave the workspace saying the same: a file
 * created, modified or moved to exists as a regular file, a deleted one
 * does not.  A patch that does not apply writes nothing at all.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "proto/log.h"
#include "proto/utf8.h"
#include "tests/fuzz/fuzz_util.h"

/* fuzz_inside - path, read lexically, stays inside the workspace. */
static int
fuzz_inside(const char *path)
{
	const char *p = path, *e;
	long depth = 0;

	if (path[0] == '\0' || path[0] == '/')
		return 0;
	for (; *p != '\0'; p = *e ? e + 1 : e) {
		e = strchrnul(p, '/');
		if (e - p == 2 && p[0] == '.' && p[1] == '.')
			depth--;
		else if (e - p > 0 && !(e - p == 1 && p[0] == '.'))
			depth++;
		if (depth < 0)
			return 0;
	}
	return depth > 0;
}

/* fuzz_check_file - one entry of the result's files list. */
static void
fuzz_check_file(json_t *f)
{
	const char *path = json_string_value(json_object_get(f, "path"));
	const char *action = json_string_value(json_object_get(f, "action"));
	char full[8192];
	struct stat st;
	int there;

	if (path == NULL || action == NULL)
		panic("a files entry without path and action");
	if (!fuzz_inside(path))
		panic("the patch touched \"%s\", not a workspace path", path);
	snprintf(full, sizeof(full), "%s/%s", fuzz_ws_path(), path);
	there = lstat(full, &st) == 0;
	if (strcmp(action, "deleted") == 0) {
		if (there)
			panic("%s is said deleted but is there", path);
	} else if (strcmp(action, "created") == 0 ||
	    strcmp(action, "modified") == 0 || strcmp(action, "moved") == 0) {
		if (!there || !S_ISREG(st.st_mode))
			panic("%s is said %s but is no file", path, action);
	} else {
		panic("%s: unknown action \"%s\"", path, action);
	}
}

/* LLVMFuzzerTestOneInput - apply one patch and check what it did. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_call c;
	json_t *args, *files, *f;
	size_t i;

	/* The patch arrives as a JSON string: valid UTF-8, no NUL. */
	if (!utf8_valid((const char *)data, size) ||
	    memchr(data, '\0', size) != NULL)
		return 0;
	args = json_pack("{s:s%}", "patch", (const char *)data, size);
	if (args == NULL)
		panic("json_pack refused a valid UTF-8 patch");
	fuzz_tool_run("apply_patch", args, &c);
	if (json_is_true(json_object_get(c.result, "ok"))) {
		files = json_object_get(c.result, "files");
		if (!json_is_array(files) || json_array_size(files) == 0)
			panic("a patch applied to no files");
		json_array_foreach(files, i, f)
		{
			fuzz_check_file(f);
		}
	}
	fuzz_call_done(&c);
	json_decref(args);
	return 0;
}
