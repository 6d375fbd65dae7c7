/* test_tools - the file tools: behaviour, caps and errors, on disk. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "proto/buf.h"
#include "proto/utf8.h"
#include "proto/xmalloc.h"
#include "tests/harness.h"
#include "tests/test_tools_util.h"
#include "tools/text.h"
#include "sandbox/jail.h"
#include "tools/perm.h"
#include "tools/rg.h"
#include "tools/tool.h"

/* grep_cmp - byte order of strings, for qsort. */
static int
grep_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* read_file gives lines, pages with offset/limit, and says what is left. */
static void
read_file_pages(void)
{
	struct tt t;
	struct buf b = BUF_INIT;
	json_t *r;
	int i;

	tt_setup(&t);
	for (i = 1; i <= 2500; i++)
		buf_printf(&b, "line %d\n", i);
	tt_put(t.ws, "big.txt", b.data);
	buf_free(&b);
	r = tt_call(&t, "read_file", json_pack("{ss}", "path", "big.txt"));
	CHECK(tt_ok(r));
	CHECK_EQ_INT(json_integer_value(json_object_get(r, "last_line")), 2000);
	CHECK(json_is_true(json_object_get(r, "more")));
	CHECK_EQ_INT(
	    json_integer_value(json_object_get(r, "next_offset")), 2001);
	CHECK(strncmp(tt_str(r, "content"), "line 1\nline 2\n", 14) == 0);
	json_decref(r);
	r = tt_call(&t, "read_file",
	    json_pack(
		"{sssisi}", "path", "big.txt", "offset", 2499, "limit", 10));
	CHECK(tt_ok(r));
	CHECK_EQ_STR(tt_str(r, "content"), "line 2499\nline 2500\n");
	CHECK(json_is_false(json_object_get(r, "more")));
	json_decref(r);
	r = tt_call(&t, "read_file",
	    json_pack("{sssi}", "path", "big.txt", "limit", 5000));
	CHECK(!tt_ok(r));
	json_decref(r);
	/* A last line without a newline is still a line. */
	tt_put(t.ws, "nonl.txt", "a\nb");
	r = tt_call(&t, "read_file", json_pack("{ss}", "path", "./nonl.txt"));
	CHECK_EQ_STR(tt_str(r, "content"), "a\nb");
	CHECK_EQ_INT(json_integer_value(json_object_get(r, "last_line")), 2);
	json_decref(r);
}

/* read_file refuses binaries, secrets, directories, FIFOs, and missing
 * files, each with a sentence. */
static void
read_file_refuses(void)
{
	struct tt t;
	char path[PATH_MAX + 16];
	json_t *r;
	int fd;

	tt_setup(&t);
	snprintf(path, sizeof(path), "%s/bin.dat", t.ws);
	fd = open(path, O_WRONLY | O_CREAT, 0644);
	CHECK(write(fd, "ab\0cd", 5) == 5);
	close(fd);
	r = tt_call(&t, "read_file", json_pack("{ss}", "path", "bin.dat"));
	CHECK(!tt_ok(r) && strstr(tt_str(r, "error"), "binary"));
	json_decref(r);
	tt_put(t.ws, ".env", "TOKEN=1\n");
	tt_put(t.ws, "keys/server.pem", "KEY\n");
	tt_put(t.ws, ".env.example", "TOKEN=\n");
	r = tt_call(&t, "read_file", json_pack("{ss}", "path", ".env"));
	CHECK(!tt_ok(r) && strstr(tt_str(r, "error"), "secret"));
	json_decref(r);
	r = tt_call(
	    &t, "read_file", json_pack("{ss}", "path", "keys/server.pem"));
	CHECK(!tt_ok(r) && strstr(tt_str(r, "error"), "secret"));
	json_decref(r);
	r = tt_call(&t, "read_file", json_pack("{ss}", "path", ".env.example"));
	CHECK(tt_ok(r));
	json_decref(r);
	r = tt_call(&t, "read_file", json_pack("{ss}", "path", "keys"));
	CHECK(!tt_ok(r) && strstr(tt_str(r, "error"), "directory"));
	json_decref(r);
	snprintf(path, sizeof(path), "%s/fifo", t.ws);
	CHECK(mkfifo(path, 0644) == 0);
	r = tt_call(&t, "read_file", json_pack("{ss}", "path", "fifo"));
	CHECK(!tt_ok(r) && strstr(tt_str(r, "error"), "not a regular file"));
	json_decref(r);
	r = tt_call(&t, "read_file", json_pack("{ss}", "path", "nope.txt"));
	CHECK(!tt_ok(r) && strstr(tt_str(r, "error"), "does not exist"));
	json_decref(r);
	r = tt_call(&t, "read_file", json_pack("{si}", "path", 3));
	CHECK(!tt_ok(r));
	json_decref(r);
	r = tt_call(&t, "read_file", json_pack("{}"));
	CHECK(!tt_ok(r) && strstr(tt_str(r, "error"), "missing"));
	json_decref(r);
}

/* Output is clipped to head and tail, 30,000 characters in all. */
static void
read_file_clips_output(void)
{
	struct tt t;
	struct buf b = BUF_INIT;
	const char *c;
	json_t *r;
	int i;

	tt_setup(&t);
	buf_adds(&b, "HEAD");
	for (i = 0; i < 100000; i++)
		buf_adds(&b, "\xc3\xa9"); /* two bytes, one character */
	buf_adds(&b, "TAIL\n");
	tt_put(t.ws, "long.txt", b.data);
	buf_free(&b);
	r = tt_call(&t, "read_file", json_pack("{ss}", "path", "long.txt"));
	CHECK(tt_ok(r));
	c = tt_str(r, "content");
	CHECK(utf8_count(c, strlen(c)) <= TOOL_MAX_OUTPUT);
	CHECK(utf8_count(c, strlen(c)) > TOOL_MAX_OUTPUT - 200);
	CHECK(strncmp(c, "HEAD", 4) == 0);
	CHECK(strstr(c, "TAIL\n") != NULL);
	CHECK(strstr(c, "characters cut") != NULL);
	CHECK(text_utf8_valid(c, strlen(c)));
	CHECK(json_is_true(json_object_get(r, "clipped")));
	json_decref(r);
}

/* read_many_files reports each file in order, errors inline. */
static void
read_many_files_inline_errors(void)
{
	struct tt t;
	json_t *r, *files, *paths = json_array();
	int i;

	tt_setup(&t);
	tt_put(t.ws, "a", "A\n");
	tt_put(t.ws, "b", "B\n");
	r = tt_call(&t, "read_many_files",
	    json_pack("{s[sss]}", "paths", "a", "missing", "b"));
	CHECK(tt_ok(r));
	files = json_object_get(r, "files");
	CHECK_EQ_INT(json_array_size(files), 3);
	CHECK_EQ_STR(tt_str(json_array_get(files, 0), "content"), "A\n");
	CHECK(!tt_ok(json_array_get(files, 1)));
	CHECK_EQ_STR(tt_str(json_array_get(files, 1), "path"), "missing");
	CHECK_EQ_STR(tt_str(json_array_get(files, 2), "content"), "B\n");
	json_decref(r);
	for (i = 0; i < 21; i++)
		json_array_append_new(paths, json_string("a"));
	r = tt_call(&t, "read_many_files", json_pack("{so}", "paths", paths));
	CHECK(!tt_ok(r) && strstr(tt_str(r, "error"), "at most 20"));
	json_decref(r);
}

/* write_file creates (with parents) and replaces, keeps the mode, and
 * leaves no temp or journal behind. */
static void
write_file_atomic_replace(void)
{
	struct tt t;
	char path[PATH_MAX + 16];
	struct stat st;
	json_t *r;

	tt_setup(&t);
	r = tt_call(&t, "write_file",
	    json_pack("{ssss}", "path", "d/e/new.txt", "content", "one\n"));
	CHECK(tt_ok(r) && json_is_true(json_object_get(r, "created")));
	json_decref(r);
	CHECK(tt_same(t.ws, "d/e/new.txt", "one\n"));
	snprintf(path, sizeof(path), "%s/d/e/new.txt", t.ws);
	CHECK(chmod(path, 0751) == 0);
	r = tt_call(&t, "write_file",
	    json_pack("{ssss}", "path", "d/e/new.txt", "content", "two\n"));
	CHECK(tt_ok(r) && json_is_false(json_object_get(r, "created")));
	json_decref(r);
	CHECK(tt_same(t.ws, "d/e/new.txt", "two\n"));
	CHECK(stat(path, &st) == 0 && (st.st_mode & 07777) == 0751);
	r = tt_call(
	    &t, "list_dir", json_pack("{sssi}", "path", ".", "depth", 6));
	CHECK_EQ_STR(tt_str(r, "entries"), "d/\nd/e/\nd/e/new.txt\n");
	json_decref(r);
	CHECK(!tt_exists(t.ws, ".shiro-journal") &&
	    !tt_exists(t.ws, ".shiro-journal.prep"));
	r = tt_call(&t, "write_file", json_pack("{ss}", "path", "x"));
	CHECK(!tt_ok(r));
	json_decref(r);
	r = tt_call(
	    &t, "write_file", json_pack("{ssss}", "path", "d", "content", "x"));
	CHECK(!tt_ok(r) && strstr(tt_str(r, "error"), "directory"));
	json_decref(r);
}

/* edit_file: a unique match, replace_all, and clear refusals. */
static void
edit_file_unique_or_all(void)
{
	struct tt t;
	json_t *r;

	tt_setup(&t);
	tt_put(t.ws, "f.c", "int a;\nint b;\nint a;\n");
	r = tt_call(&t, "edit_file",
	    json_pack("{ssssss}", "path", "f.c", "old_string", "int b;",
		"new_string", "long b;"));
	CHECK(tt_ok(r));
	json_decref(r);
	CHECK(tt_same(t.ws, "f.c", "int a;\nlong b;\nint a;\n"));
	r = tt_call(&t, "edit_file",
	    json_pack("{ssssss}", "path", "f.c", "old_string", "int a;",
		"new_string", "x"));
	CHECK(!tt_ok(r) && strstr(tt_str(r, "error"), "occurs 2 times"));
	json_decref(r);
	r = tt_call(&t, "edit_file",
	    json_pack("{sssssssb}", "path", "f.c", "old_string", "int a;",
		"new_string", "char a;", "replace_all", 1));
	CHECK(tt_ok(r));
	CHECK_EQ_INT(json_integer_value(json_object_get(r, "replacements")), 2);
	json_decref(r);
	CHECK(tt_same(t.ws, "f.c", "char a;\nlong b;\nchar a;\n"));
	r = tt_call(&t, "edit_file",
	    json_pack("{ssssss}", "path", "f.c", "old_string", "nothing",
		"new_string", "x"));
	CHECK(!tt_ok(r) && strstr(tt_str(r, "error"), "not found"));
	json_decref(r);
	r = tt_call(&t, "edit_file",
	    json_pack("{ssssss}", "path", "f.c", "old_string", "", "new_string",
		"x"));
	CHECK(!tt_ok(r));
	json_decref(r);
	CHECK(tt_same(t.ws, "f.c", "char a;\nlong b;\nchar a;\n"));
}

/* multi_edit: applied in order across files, or not at all. */
static void
multi_edit_all_or_nothing(void)
{
	struct tt t;
	json_t *r;

	tt_setup(&t);
	tt_put(t.ws, "a.txt", "alpha beta\n");
	tt_put(t.ws, "b.txt", "gamma\n");
	r = tt_call(&t, "multi_edit",
	    json_pack("{ss s[{ssss} {ssss} {ssssss}]}", "path", "a.txt",
		"edits", "old_string", "alpha", "new_string", "ALPHA",
		"old_string", "ALPHA beta", "new_string", "done", "path",
		"b.txt", "old_string", "gamma", "new_string", "GAMMA"));
	CHECK(tt_ok(r));
	json_decref(r);
	CHECK(tt_same(t.ws, "a.txt", "done\n"));
	CHECK(tt_same(t.ws, "b.txt", "GAMMA\n"));
	/* The second file's edit fails: the first file stays as it was. */
	r = tt_call(&t, "multi_edit",
	    json_pack("{s[{ssssss} {ssssss}]}", "edits", "path", "a.txt",
		"old_string", "done", "new_string", "redone", "path", "b.txt",
		"old_string", "absent", "new_string", "x"));
	CHECK(!tt_ok(r) && strstr(tt_str(r, "error"), "nothing was written"));
	json_decref(r);
	CHECK(tt_same(t.ws, "a.txt", "done\n"));
	CHECK(tt_same(t.ws, "b.txt", "GAMMA\n"));
}

/* apply_patch modifies, creates and deletes in one set, tolerates
 * shifted hunks, and writes nothing when any part fails. */
static void
apply_patch_applies_or_nothing(void)
{
	struct tt t;
	json_t *r;
	const char *patch =
	    "diff --git a/src/m.c b/src/m.c\n"
	    "--- a/src/m.c\n"
	    "+++ b/src/m.c\n"
	    "@@ -10,3 +10,3 @@\n" /* wrong line numbers: found nearby */
	    " one\n"
	    "-two\n"
	    "+TWO\n"
	    " three\n"
	    "--- /dev/null\n"
	    "+++ b/docs/new.md\n"
	    "@@ -0,0 +1,2 @@\n"
	    "+# New\n"
	    "+text\n"
	    "--- a/old.txt\n"
	    "+++ /dev/null\n"
	    "@@ -1 +0,0 @@\n"
	    "-bye\n";

	tt_setup(&t);
	tt_put(t.ws, "src/m.c", "zero\none\ntwo\nthree\nfour\n");
	tt_put(t.ws, "old.txt", "bye\n");
	r = tt_call(&t, "apply_patch", json_pack("{ss}", "patch", patch));
	CHECKF(tt_ok(r), "%s", tt_str(r, "error"));
	CHECK_EQ_INT(json_array_size(json_object_get(r, "files")), 3);
	json_decref(r);
	CHECK(tt_same(t.ws, "src/m.c", "zero\none\nTWO\nthree\nfour\n"));
	CHECK(tt_same(t.ws, "docs/new.md", "# New\ntext\n"));
	CHECK(!tt_exists(t.ws, "old.txt"));
	/* The second hunk does not apply: the first file is untouched. */
	r = tt_call(&t, "apply_patch",
	    json_pack("{ss}", "patch",
		"--- a/src/m.c\n+++ b/src/m.c\n@@ -1,2 +1,2 @@\n zero\n-one\n"
		"+ONE\n--- a/docs/new.md\n+++ b/docs/new.md\n@@ -1 +1 @@\n"
		"-# Old\n+# Newer\n"));
	CHECK(!tt_ok(r) && strstr(tt_str(r, "error"), "does not apply"));
	json_decref(r);
	CHECK(tt_same(t.ws, "src/m.c", "zero\none\nTWO\nthree\nfour\n"));
	CHECK(tt_same(t.ws, "docs/new.md", "# New\ntext\n"));
	/* A new file in a new directory, and a hunk that fails: not even
	 * the directory is made. */
	r = tt_call(&t, "apply_patch",
	    json_pack("{ss}", "patch",
		"--- /dev/null\n+++ b/newdir/sub/x.c\n@@ -0,0 +1 @@\n+x\n"
		"--- a/src/m.c\n+++ b/src/m.c\n@@ -1 +1 @@\n-absent\n+y\n"));
	CHECK(!tt_ok(r));
	json_decref(r);
	CHECK(!tt_exists(t.ws, "newdir"));
	/* Creating a file that exists is refused. */
	r = tt_call(&t, "apply_patch",
	    json_pack("{ss}", "patch",
		"--- /dev/null\n+++ b/src/m.c\n@@ -0,0 +1 @@\n+x\n"));
	CHECK(!tt_ok(r));
	json_decref(r);
	CHECK(tt_same(t.ws, "src/m.c", "zero\none\nTWO\nthree\nfour\n"));
	/* "\ No newline at end of file" is honoured. */
	r = tt_call(&t, "apply_patch",
	    json_pack("{ss}", "patch",
		"--- a/docs/new.md\n+++ b/docs/new.md\n@@ -1,2 +1,2 @@\n"
		" # New\n-text\n+last\n\\ No newline at end of file\n"));
	CHECKF(tt_ok(r), "%s", tt_str(r, "error"));
	json_decref(r);
	CHECK(tt_same(t.ws, "docs/new.md", "# New\nlast"));
	r = tt_call(&t, "apply_patch", json_pack("{ss}", "patch", "hello"));
	CHECK(!tt_ok(r) && strstr(tt_str(r, "error"), "unified diff"));
	json_decref(r);
}

/* move_file and delete_file. */
static void
move_and_delete(void)
{
	struct tt t;
	json_t *r;

	tt_setup(&t);
	tt_put(t.ws, "a.txt", "A");
	tt_put(t.ws, "b.txt", "B");
	r = tt_call(&t, "move_file",
	    json_pack("{ssss}", "from", "a.txt", "to", "b.txt"));
	CHECK(!tt_ok(r) && strstr(tt_str(r, "error"), "already exists"));
	json_decref(r);
	r = tt_call(&t, "move_file",
	    json_pack("{ssss}", "from", "a.txt", "to", "sub/c.txt"));
	CHECK(tt_ok(r));
	json_decref(r);
	CHECK(tt_same(t.ws, "sub/c.txt", "A") && !tt_exists(t.ws, "a.txt"));
	r = tt_call(&t, "move_file",
	    json_pack("{sssssb}", "from", "sub/c.txt", "to", "b.txt",
		"overwrite", 1));
	CHECK(tt_ok(r));
	json_decref(r);
	CHECK(tt_same(t.ws, "b.txt", "A"));
	r = tt_call(
	    &t, "move_file", json_pack("{ssss}", "from", "sub", "to", "sub2"));
	CHECK(tt_ok(r) && tt_exists(t.ws, "sub2"));
	json_decref(r);
	r = tt_call(&t, "delete_file", json_pack("{ss}", "path", "sub2"));
	CHECK(!tt_ok(r) && strstr(tt_str(r, "error"), "directory"));
	json_decref(r);
	r = tt_call(&t, "delete_file", json_pack("{ss}", "path", "b.txt"));
	CHECK(tt_ok(r) && !tt_exists(t.ws, "b.txt"));
	json_decref(r);
	r = tt_call(&t, "delete_file", json_pack("{ss}", "path", "b.txt"));
	CHECK(!tt_ok(r) && strstr(tt_str(r, "error"), "does not exist"));
	json_decref(r);
}

/* A hunk's "-" line number counts lines of the file as it was, whatever
 * earlier hunks added: with its context found twice, the hunk applies
 * at the place it names.  A line number past the end (up to LONG_MAX)
 * is searched from the end of the file, promptly (found by
 * tests/fuzz/fuzz_apply_patch: the search ran for 2^63 steps). */
static void
apply_patch_line_numbers(void)
{
	struct tt t;
	json_t *r;

	tt_setup(&t);
	tt_put(t.ws, "f.txt", "a\nb\nc\nd\nX\ne\nX\nf\n");
	r = tt_call(&t, "apply_patch",
	    json_pack("{ss}", "patch",
		"--- a/f.txt\n+++ b/f.txt\n"
		"@@ -1,1 +1,5 @@\n-a\n+a1\n+a2\n+a3\n+a4\n+a5\n"
		"@@ -5,1 +9,1 @@\n-X\n+Y\n"));
	CHECKF(tt_ok(r), "%s", tt_str(r, "error"));
	json_decref(r);
	CHECK(tt_same(
	    t.ws, "f.txt", "a1\na2\na3\na4\na5\nb\nc\nd\nY\ne\nX\nf\n"));
	r = tt_call(&t, "apply_patch",
	    json_pack("{ss}", "patch",
		"--- a/f.txt\n+++ b/f.txt\n"
		"@@ -1,1 +1,3 @@\n-a1\n+A\n+B\n+C\n"
		"@@ -9223372036854775807,1 +9223372036854775807,1 @@\n-X\n"
		"+Z\n"));
	CHECKF(tt_ok(r), "%s", tt_str(r, "error"));
	json_decref(r);
	CHECK(tt_same(
	    t.ws, "f.txt", "A\nB\nC\na2\na3\na4\na5\nb\nc\nd\nY\ne\nZ\nf\n"));
}

/* A path's ".." is folded as the permission engine folds it, before the
 * kernel sees the path: through a symlink to secrets/inner,
 * lnk/../plan.txt is plan.txt for the engine and for the tool, never
 * secrets/plan.txt, which a rule denies. */
static void
dotdot_is_folded_as_the_engine_folds_it(void)
{
	struct perm_verdict v;
	struct perm *p = perm_new();
	struct tt t;
	char *why = NULL, *lnk;
	json_t *args, *r;

	tt_setup(&t);
	tt_put(t.ws, "secrets/plan.txt", "the secret plan\n");
	tt_put(t.ws, "secrets/inner/x", "x\n");
	tt_put(t.ws, "src/a.txt", "a\n");
	lnk = xasprintf("%s/lnk", t.ws);
	CHECK(symlink("secrets/inner", lnk) == 0);
	perm_set_workspace(p, t.ws);
	CHECK(perm_add(p, "deny read(secrets/*)", &why) == 0);
	args = json_pack("{ss}", "path", "lnk/../plan.txt");
	perm_check(p, NULL, "read_file", args, &v);
	CHECK(v.action == PERM_ALLOW);
	r = tt_call(&t, "read_file", args);
	CHECK(!tt_ok(r));
	json_decref(r);
	args = json_pack("{ss}", "path", "secrets/plan.txt");
	perm_check(p, NULL, "read_file", args, &v);
	CHECK(v.action == PERM_DENY);
	json_decref(args);
	r = tt_call(
	    &t, "read_file", json_pack("{ss}", "path", "src/./b/../a.txt"));
	CHECKF(tt_ok(r), "%s", tt_str(r, "error"));
	CHECK_EQ_STR(tt_str(r, "path"), "src/a.txt");
	json_decref(r);
	perm_destroy(&p);
	free(lnk);
}

/* A write whose target can never be made (a ".." that climbs out, a
 * name too long, a file inside another target) is refused before any
 * directory is made: the failed call leaves the workspace as it was
 * (found by tests/fuzz/fuzz_apply_patch and fuzz_tool_args).  A ".."
 * inside the path is folded first, so it makes no directory either. */
static void
failed_writes_make_no_directories(void)
{
	struct tt t;
	json_t *r;
	char longname[300], path[400];

	tt_setup(&t);
	tt_put(t.ws, "a.txt", "one\n");
	r = tt_call(&t, "apply_patch",
	    json_pack("{ss}", "patch",
		"--- a/a.txt\n+++ b/new./../b.txt\n@@ -1 +1 @@\n-one\n+1\n"));
	CHECKF(tt_ok(r), "%s", tt_str(r, "error"));
	json_decref(r);
	CHECK(!tt_exists(t.ws, "new."));
	CHECK(tt_same(t.ws, "b.txt", "1\n") && !tt_exists(t.ws, "a.txt"));
	tt_put(t.ws, "a.txt", "one\n");
	r = tt_call(&t, "write_file",
	    json_pack("{ssss}", "path", "d1/d2/../../x.txt", "content", "x"));
	CHECKF(tt_ok(r), "%s", tt_str(r, "error"));
	json_decref(r);
	CHECK(!tt_exists(t.ws, "d1") && tt_same(t.ws, "x.txt", "x"));
	r = tt_call(&t, "move_file",
	    json_pack("{ssss}", "from", "a.txt", "to", "m1/../../a.txt"));
	CHECK(!tt_ok(r));
	json_decref(r);
	CHECK(!tt_exists(t.ws, "m1"));
	r = tt_call(&t, "move_file",
	    json_pack("{ssss}", "from", "a.txt", "to", "m2/../.."));
	CHECK(!tt_ok(r));
	json_decref(r);
	CHECK(!tt_exists(t.ws, "m2"));
	memset(longname, 'n', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	snprintf(path, sizeof(path), "l1/%s/x.txt", longname);
	r = tt_call(&t, "write_file",
	    json_pack("{ssss}", "path", path, "content", "x"));
	CHECK(!tt_ok(r));
	json_decref(r);
	CHECK(!tt_exists(t.ws, "l1"));
	r = tt_call(
	    &t, "move_file", json_pack("{ssss}", "from", "a.txt", "to", path));
	CHECK(!tt_ok(r));
	json_decref(r);
	CHECK(!tt_exists(t.ws, "l1"));
	/* The last name counts too. */
	snprintf(path, sizeof(path), "w3/%s", longname);
	r = tt_call(&t, "write_file",
	    json_pack("{ssss}", "path", path, "content", "x"));
	CHECK(!tt_ok(r));
	json_decref(r);
	CHECK(!tt_exists(t.ws, "w3"));
	r = tt_call(
	    &t, "move_file", json_pack("{ssss}", "from", "a.txt", "to", path));
	CHECK(!tt_ok(r));
	json_decref(r);
	CHECK(!tt_exists(t.ws, "w3"));
	/* One target the directory of another: refused, nothing made. */
	r = tt_call(&t, "apply_patch",
	    json_pack("{ss}", "patch",
		"--- /dev/null\n+++ b/d\n@@ -0,0 +1 @@\n+x\n"
		"--- /dev/null\n+++ b/d/e\n@@ -0,0 +1 @@\n+y\n"));
	CHECK(!tt_ok(r));
	json_decref(r);
	CHECK(!tt_exists(t.ws, "d"));
	CHECK(tt_same(t.ws, "a.txt", "one\n"));
}

/* list_dir honours .gitignore, depth and the 300-entry cap. */
static void
list_dir_ignore_depth_cap(void)
{
	struct tt t;
	char name[64];
	json_t *r;
	int i;

	tt_setup(&t);
	tt_put(t.ws, ".gitignore", "build/\n*.o\n!keep.o\n");
	tt_put(t.ws, "build/out", "x");
	tt_put(t.ws, "a.o", "x");
	tt_put(t.ws, "keep.o", "x");
	tt_put(t.ws, "src/deep/er/f.c", "x");
	tt_put(t.ws, "src/.gitignore", "gen.c\n");
	tt_put(t.ws, "src/gen.c", "x");
	tt_put(t.ws, ".git/HEAD", "x");
	r = tt_call(&t, "list_dir", json_pack("{si}", "depth", 2));
	CHECK_EQ_STR(tt_str(r, "entries"),
	    ".gitignore\nkeep.o\nsrc/\nsrc/.gitignore\nsrc/deep/\n");
	json_decref(r);
	r = tt_call(
	    &t, "list_dir", json_pack("{sssi}", "path", "src", "depth", 6));
	CHECK_EQ_STR(
	    tt_str(r, "entries"), ".gitignore\ndeep/\ndeep/er/\ndeep/er/f.c\n");
	json_decref(r);
	r = tt_call(&t, "list_dir", json_pack("{si}", "depth", 7));
	CHECK(!tt_ok(r));
	json_decref(r);
	for (i = 0; i < 400; i++) {
		snprintf(name, sizeof(name), "many/f%03d", i);
		tt_put(t.ws, name, "");
	}
	r = tt_call(&t, "list_dir", json_pack("{ss}", "path", "many"));
	CHECK(tt_ok(r));
	CHECK_EQ_INT(json_integer_value(json_object_get(r, "count")), 300);
	CHECK(json_is_true(json_object_get(r, "truncated")));
	json_decref(r);
}

/* glob matches with ** and caps at 200. */
static void
glob_matches_and_caps(void)
{
	struct tt t;
	char name[64];
	json_t *r, *m;
	int i;

	tt_setup(&t);
	tt_put(t.ws, "a.c", "");
	tt_put(t.ws, "src/b.c", "");
	tt_put(t.ws, "src/x/c.c", "");
	tt_put(t.ws, "src/x/c.h", "");
	tt_put(t.ws, ".gitignore", "ignored/\n");
	tt_put(t.ws, "ignored/d.c", "");
	r = tt_call(&t, "glob", json_pack("{ss}", "pattern", "src/**/*.c"));
	m = json_object_get(r, "matches");
	CHECK_EQ_INT(json_array_size(m), 2);
	CHECK_EQ_STR(json_string_value(json_array_get(m, 0)), "src/b.c");
	CHECK_EQ_STR(json_string_value(json_array_get(m, 1)), "src/x/c.c");
	json_decref(r);
	r = tt_call(&t, "glob", json_pack("{ss}", "pattern", "*.c"));
	CHECK_EQ_INT(json_array_size(json_object_get(r, "matches")), 3);
	json_decref(r);
	for (i = 0; i < 250; i++) {
		snprintf(name, sizeof(name), "gen/g%03d.c", i);
		tt_put(t.ws, name, "");
	}
	r = tt_call(
	    &t, "glob", json_pack("{ssss}", "pattern", "*.c", "path", "gen"));
	CHECK_EQ_INT(json_array_size(json_object_get(r, "matches")), 200);
	CHECK(json_is_true(json_object_get(r, "truncated")));
	json_decref(r);
	r = tt_call(&t, "glob", json_pack("{ss}", "pattern", "[a-"));
	CHECK(!tt_ok(r));
	json_decref(r);
	/* A name that is not UTF-8 comes back cleaned, never dropped. */
	tt_put(t.ws, "odd/caf\xe9.c", "");
	r = tt_call(
	    &t, "glob", json_pack("{ssss}", "pattern", "*.c", "path", "odd"));
	CHECK_EQ_INT(json_array_size(json_object_get(r, "matches")), 1);
	CHECK_EQ_STR(
	    json_string_value(json_array_get(json_object_get(r, "matches"), 0)),
	    "odd/caf\xef\xbf\xbd.c");
	json_decref(r);
	r = tt_call(&t, "list_dir", json_pack("{ss}", "path", "odd"));
	CHECK_EQ_STR(tt_str(r, "entries"), "caf\xef\xbf\xbd.c\n");
	json_decref(r);
}

/* grep finds lines, skips ignored, binary and secret files, and caps
 * hits at 200 and output at 30,000 characters. */
static void
grep_finds_and_caps(void)
{
	struct tt t;
	struct buf b = BUF_INIT;
	char name[64], path[PATH_MAX + 16];
	const char *out;
	json_t *r;
	int i, fd;

	tt_setup(&t);
	tt_put(t.ws, "a.c", "int main(void)\n{\n\treturn MAIN;\n}\n");
	tt_put(t.ws, "b.h", "#define MAIN 0\n");
	tt_put(t.ws, ".gitignore", "gen/\n");
	tt_put(t.ws, "gen/c.c", "main\n");
	tt_put(t.ws, ".env", "main=secret\n");
	snprintf(path, sizeof(path), "%s/bin", t.ws);
	fd = open(path, O_WRONLY | O_CREAT, 0644);
	CHECK(write(fd, "main\0", 5) == 5);
	close(fd);
	r = tt_call(&t, "grep", json_pack("{ss}", "pattern", "main"));
	CHECK_EQ_STR(tt_str(r, "output"), "a.c:1:int main(void)\n");
	json_decref(r);
	r = tt_call(&t, "grep",
	    json_pack("{sssb}", "pattern", "main", "ignore_case", 1));
	CHECK_EQ_STR(tt_str(r, "output"),
	    "a.c:1:int main(void)\na.c:3:\treturn MAIN;\nb.h:1:#define MAIN "
	    "0\n");
	json_decref(r);
	r = tt_call(&t, "grep",
	    json_pack("{sssssb}", "pattern", "main", "glob", "*.h",
		"ignore_case", 1));
	CHECK_EQ_STR(tt_str(r, "output"), "b.h:1:#define MAIN 0\n");
	json_decref(r);
	r = tt_call(&t, "grep", json_pack("{ss}", "pattern", "(unclosed"));
	CHECK(!tt_ok(r) && strstr(tt_str(r, "error"), "regular expression"));
	json_decref(r);
	for (i = 0; i < 300; i++)
		buf_printf(&b, "hit %d\n", i);
	tt_put(t.ws, "many/hits.txt", b.data);
	buf_reset(&b);
	r = tt_call(
	    &t, "grep", json_pack("{ssss}", "pattern", "^hit", "path", "many"));
	CHECK_EQ_INT(json_integer_value(json_object_get(r, "hits")), 200);
	CHECK(json_is_true(json_object_get(r, "truncated")));
	json_decref(r);
	for (i = 0; i < 150; i++) {
		int k;
		buf_reset(&b);
		for (k = 0; k < 40; k++)
			buf_adds(&b, "long match line with many words in it; ");
		buf_addc(&b, '\n');
		snprintf(name, sizeof(name), "wide/w%03d.txt", i);
		tt_put(t.ws, name, b.data);
	}
	buf_free(&b);
	r = tt_call(&t, "grep",
	    json_pack("{ssss}", "pattern", "match", "path", "wide"));
	out = tt_str(r, "output");
	CHECK(utf8_count(out, strlen(out)) <= TOOL_MAX_OUTPUT);
	CHECK(strstr(out, "characters cut") != NULL);
	CHECK(strstr(out, "wide/w149.txt") != NULL);
	json_decref(r);
}

/* The catalogue: schemas parse, unknown tools and bad args are results. */
static void
catalogue_schemas_and_errors(void)
{
	struct tt t;
	json_t *s = tool_schemas(), *v, *r, *subj;
	size_t i;

	CHECK_EQ_INT(json_array_size(s), 12);
	for (i = 0; (v = json_array_get(s, i)) != NULL; i++) {
		CHECK(json_is_string(json_object_get(v, "name")));
		CHECK_EQ_STR(json_string_value(json_object_get(
				 json_object_get(v, "parameters"), "type")),
		    "object");
	}
	json_decref(s);
	tt_setup(&t);
	r = tt_call(&t, "no_such_tool", json_object());
	CHECK(!tt_ok(r) && strstr(tt_str(r, "error"), "unknown tool"));
	json_decref(r);
	r = NULL;
	CHECK_EQ_INT(tool_call("read_file", json_array(), &t.ctx, &r), 0);
	CHECK(r != NULL && !tt_ok(r));
	json_decref(r);
	r = json_pack("{ssss}", "from", "a", "to", "b");
	CHECK_EQ_INT(tool_subjects("move_file", r, &subj), 0);
	CHECK_EQ_INT(json_array_size(subj), 2);
	json_decref(subj);
	json_decref(r);
	r = json_pack("{ss}", "command", "ls");
	CHECK_EQ_INT(tool_subjects("bash", r, &subj), 0);
	CHECK_EQ_STR(json_string_value(json_array_get(subj, 0)), "ls");
	json_decref(subj);
	json_decref(r);
	r = json_object();
	CHECK(tool_subjects("read_file", r, &subj) < 0 && subj == NULL);
	json_decref(r);
}

/* Arguments of the wrong shape and random patches get error results,
 * never a crash, and hostile glob patterns end quickly. */
static void
tools_survive_garbage(void)
{
	static const char *const units[] = {"--- a/x\n", "+++ b/x\n",
	    "--- /dev/null\n", "+++ /dev/null\n", "@@ -1,2 +1 @@\n",
	    "@@ -0,0 +1 @@\n", "@@ @@\n", "-a\n", "+b\n", " c\n", "\n",
	    "\\ No newline at end of file\n", "--- a/../y\n", "+++ b/sub/z\n",
	    "-", "+", " "};
	static const char *const shapes[] = {"{}", "{\"path\":1}",
	    "{\"path\":\"\",\"content\":null,\"pattern\":\"\","
	    "\"edits\":\"x\",\"patch\":5,\"paths\":\"x\"}",
	    "{\"path\":\"x\",\"edits\":[1,{},{\"old_string\":1}],"
	    "\"paths\":[1,null,\"x\"],\"offset\":-1,\"limit\":0,"
	    "\"depth\":\"2\",\"from\":[],\"to\":{}}",
	    "{\"path\":\"x\\u0000y\",\"pattern\":\"[\",\"glob\":"
	    "\"[z\",\"old_string\":\"a\",\"new_string\":\"a\"}"};
	struct tt t;
	struct buf b = BUF_INIT;
	const struct tool_def *def;
	unsigned seed = 42;
	size_t i, k;
	json_t *r;
	time_t start;

	tt_setup(&t);
	tt_put(t.ws, "x", "a\nc\n");
	tt_put(t.ws, "d1/d2/d3/d4/d5/d6/d7/d8/f", "");
	for (i = 0; (def = tool_at(i)) != NULL; i++) {
		if (def->kind == TOOL_EXEC)
			continue;
		for (k = 0; k < sizeof(shapes) / sizeof(shapes[0]); k++) {
			json_t *args =
			    json_loads(shapes[k], JSON_ALLOW_NUL, NULL);
			r = tt_call(&t, def->name, args);
			json_decref(r);
		}
	}
	for (k = 0; k < 500; k++) {
		size_t parts = rand_r(&seed) % 14 + 1;
		buf_reset(&b);
		for (i = 0; i < parts; i++)
			buf_adds(&b,
			    units[rand_r(&seed) %
				(sizeof(units) / sizeof(units[0]))]);
		r = tt_call(
		    &t, "apply_patch", json_pack("{ss}", "patch", b.data));
		json_decref(r);
	}
	buf_free(&b);
	CHECK(!tt_exists(t.ws, ".shiro-journal") &&
	    !tt_exists(t.ws, ".shiro-journal.prep"));
	CHECK(!tt_exists(t.out, "y"));
	start = time(NULL);
	r = tt_call(&t, "glob",
	    json_pack("{ss}", "pattern",
		"**/**/**/**/**/**/**/**/**/**/**/**/**/**/**/**/**/**/**/"
		"**/**/**/**/**/**/**/**/**/**/**/**/**/**/nomatch"));
	CHECK(tt_ok(r));
	json_decref(r);
	r = tt_call(&t, "glob",
	    json_pack("{ss}", "pattern", "*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b"));
	json_decref(r);
	CHECKF(time(NULL) - start < 10, "hostile globs took %ld s",
	    (long)(time(NULL) - start));
}

/* grep_lines - the sorted lines of a grep result's output. */
static char *
grep_lines(json_t *r)
{
	const char *out = tt_str(r, "output");
	char *copy = xstrdup(out), **lines = NULL, *save = NULL, *l;
	struct buf b = BUF_INIT;
	size_t n = 0, i;

	for (l = strtok_r(copy, "\n", &save); l;
	     l = strtok_r(NULL, "\n", &save)) {
		lines = xreallocarray(lines, n + 1, sizeof(*lines));
		lines[n++] = l;
	}
	if (n > 1)
		qsort(lines, n, sizeof(*lines), grep_cmp);
	for (i = 0; i < n; i++) {
		buf_adds(&b, lines[i]);
		buf_addc(&b, '\n');
	}
	free(lines);
	free(copy);
	if (b.data == NULL)
		buf_adds(&b, "");
	return buf_steal(&b, NULL);
}

/* With ripgrep installed and a process that may run it, grep finds the
 * same lines as the internal search, with the same refusals. */
static void
grep_ripgrep_agrees(void)
{
	static const char *const queries[] = {
	    "{\"pattern\":\"needle\"}",
	    "{\"pattern\":\"NEEDLE\",\"ignore_case\":true}",
	    "{\"pattern\":\"needle\",\"glob\":\"*.c\"}",
	    "{\"pattern\":\"needle\",\"path\":\"src\"}",
	    "{\"pattern\":\"^hay [0-9]+$\"}",
	};
	struct tt t;
	struct jail_features f;
	char name[64], path[PATH_MAX + 32], target[PATH_MAX + 32];
	size_t q;
	int i, fd;

	tt_setup(&t);
	t.ctx.may_exec = 1;
	if (!rg_available(&t.ctx))
		harness_skip("ripgrep is not installed");
	jail_probe(&f);
	if (f.missing[0] != '\0')
		harness_skip("the jail lacks: %s", f.missing);
	tt_put(t.ws, "a.c", "needle one\nhay\n");
	tt_put(t.ws, "src/b.h", "x\nNeedle two\n");
	tt_put(t.ws, "src/deep/c.c", "needle: three: colons\n");
	tt_put(t.ws, ".hidden.txt", "needle hidden\n");
	tt_put(t.ws, ".gitignore", "ignored/\n");
	tt_put(t.ws, "ignored/d.c", "needle ignored\n");
	tt_put(t.ws, ".env", "needle=secret\n");
	tt_put(t.out, "outside.txt", "needle outside\n");
	snprintf(target, sizeof(target), "%s/outside.txt", t.out);
	snprintf(path, sizeof(path), "%s/hard.txt", t.ws);
	CHECK(link(target, path) == 0);
	snprintf(path, sizeof(path), "%s/bin.dat", t.ws);
	fd = open(path, O_WRONLY | O_CREAT, 0644);
	CHECK(write(fd, "needle\0", 7) == 7);
	close(fd);
	for (i = 0; i < 250; i++) {
		snprintf(name, sizeof(name), "hay/h%03d.txt", i);
		snprintf(target, sizeof(target), "hay %d\n", i);
		tt_put(t.ws, name, target);
	}
	for (q = 0; q < sizeof(queries) / sizeof(queries[0]); q++) {
		json_t *rr, *ri;
		char *lr, *li;
		t.ctx.may_exec = 1;
		rr = tt_call(&t, "grep", json_loads(queries[q], 0, NULL));
		t.ctx.may_exec = 0;
		ri = tt_call(&t, "grep", json_loads(queries[q], 0, NULL));
		CHECK(tt_ok(rr) && tt_ok(ri));
		CHECKF(json_integer_value(json_object_get(rr, "hits")) ==
			json_integer_value(json_object_get(ri, "hits")),
		    "%s: %lld hits with ripgrep, %lld without", queries[q],
		    json_integer_value(json_object_get(rr, "hits")),
		    json_integer_value(json_object_get(ri, "hits")));
		CHECK(json_equal(json_object_get(rr, "truncated"),
		    json_object_get(ri, "truncated")));
		if (!json_is_true(json_object_get(ri, "truncated"))) {
			lr = grep_lines(rr);
			li = grep_lines(ri);
			CHECKF(strcmp(lr, li) == 0, "%s:\n%s---\n%s",
			    queries[q], lr, li);
			CHECK(strstr(lr, "secret") == NULL &&
			    strstr(lr, "outside") == NULL &&
			    strstr(lr, "ignored") == NULL);
			free(lr);
			free(li);
		}
		json_decref(rr);
		json_decref(ri);
	}
	/* ripgrep really ran: it also honours .ignore files, which the
	 * internal search does not read. */
	tt_put(t.ws, ".ignore", "a.c\n");
	{
		json_t *rr;
		t.ctx.may_exec = 1;
		rr = tt_call(&t, "grep", json_pack("{ss}", "pattern", "one"));
		CHECK_EQ_INT(
		    json_integer_value(json_object_get(rr, "hits")), 0);
		json_decref(rr);
		t.ctx.may_exec = 0;
		rr = tt_call(&t, "grep", json_pack("{ss}", "pattern", "one"));
		CHECK_EQ_INT(
		    json_integer_value(json_object_get(rr, "hits")), 1);
		json_decref(rr);
	}
}

static const struct harness_test tests[] = {
    HT(read_file_pages),
    HT(read_file_refuses),
    HT(read_file_clips_output),
    HT(read_many_files_inline_errors),
    HT(write_file_atomic_replace),
    HT(edit_file_unique_or_all),
    HT(multi_edit_all_or_nothing),
    HT(apply_patch_applies_or_nothing),
    HT_SLOW(apply_patch_line_numbers, 20),
    HT(move_and_delete),
    HT(failed_writes_make_no_directories),
    HT(dotdot_is_folded_as_the_engine_folds_it),
    HT(list_dir_ignore_depth_cap),
    HT(glob_matches_and_caps),
    HT(grep_finds_and_caps),
    HT(catalogue_schemas_and_errors),
    HT(tools_survive_garbage),
    HT(grep_ripgrep_agrees),
};

HARNESS_MAIN(tests)
