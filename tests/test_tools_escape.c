/*
 * test_tools_escape - the file tools cannot leave the workspace: symlinks
 * (final and intermediate), hard links, "..", absolute paths,
 * /proc/self/root and a rename race.  Each attempt is refused and the
 * host directory next to the workspace is unchanged.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tests/harness.h"
#include "tests/test_tools_util.h"
#include "tools/tool.h"

#define SECRET "OUTSIDE-SECRET\n"

/* esc_host - put the host's secret next to the workspace. */
static void
esc_host(struct tt *t)
{
	tt_setup(t);
	tt_put(t->out, "secret.txt", SECRET);
}

/* esc_host_unchanged - the outside directory holds only its secret. */
static void
esc_host_unchanged(struct tt *t)
{
	char cmd[PATH_MAX * 2];
	FILE *p;
	char line[256];
	int n = 0;

	CHECK(tt_same(t->out, "secret.txt", SECRET));
	snprintf(cmd, sizeof(cmd), "find '%s' -mindepth 1", t->out);
	p = popen(cmd, "r");
	CHECK(p != NULL);
	while (fgets(line, sizeof(line), p) != NULL)
		n++;
	pclose(p);
	CHECKF(n == 1, "the outside directory has %d entries", n);
}

/* esc_refused - every tool call on path is refused and leaks nothing. */
static void
esc_refused(struct tt *t, const char *path)
{
	static const char *const reads[] = {"read_file", "list_dir", "grep"};
	json_t *r;
	char *dump;
	size_t i;

	for (i = 0; i < sizeof(reads) / sizeof(reads[0]); i++) {
		r = tt_call(t, reads[i],
		    json_pack("{ssss}", "path", path, "pattern", "SECRET"));
		dump = json_dumps(r, 0);
		CHECKF(strstr(dump, "OUTSIDE-SECRET") == NULL,
		    "%s %s leaked: %s", reads[i], path, dump);
		CHECKF(!tt_ok(r) ||
			json_integer_value(json_object_get(r, "hits")) == 0,
		    "%s %s: %s", reads[i], path, dump);
		free(dump);
		json_decref(r);
	}
	r = tt_call(t, "write_file",
	    json_pack("{ssss}", "path", path, "content", "PWNED\n"));
	CHECKF(!tt_ok(r), "write_file %s was allowed", path);
	json_decref(r);
	r = tt_call(t, "edit_file",
	    json_pack("{ssssss}", "path", path, "old_string", "OUTSIDE",
		"new_string", "PWNED"));
	CHECKF(!tt_ok(r), "edit_file %s was allowed", path);
	json_decref(r);
	r = tt_call(t, "read_many_files", json_pack("{s[s]}", "paths", path));
	dump = json_dumps(r, 0);
	CHECKF(strstr(dump, "OUTSIDE-SECRET") == NULL, "leaked: %s", dump);
	free(dump);
	json_decref(r);
	r = tt_call(t, "delete_file", json_pack("{ss}", "path", path));
	json_decref(r);
	r = tt_call(t, "move_file",
	    json_pack("{ssss}", "from", "moved.txt", "to", path));
	json_decref(r);
	esc_host_unchanged(t);
}

/* A final symlink to an outside file: refused, host unchanged. */
static void
escape_final_symlink(void)
{
	struct tt t;
	char target[PATH_MAX + 32], link[PATH_MAX + 32];

	esc_host(&t);
	snprintf(target, sizeof(target), "%s/secret.txt", t.out);
	snprintf(link, sizeof(link), "%s/link.txt", t.ws);
	CHECK(symlink(target, link) == 0);
	esc_refused(&t, "link.txt");
	/* A relative one climbing out. */
	snprintf(link, sizeof(link), "%s/rel.txt", t.ws);
	CHECK(symlink("../outside/secret.txt", link) == 0);
	esc_refused(&t, "rel.txt");
	/* delete_file removes the link itself, never the target. */
	tt_call(&t, "delete_file", json_pack("{ss}", "path", "rel.txt"));
	CHECK(!tt_exists(t.ws, "rel.txt"));
	esc_host_unchanged(&t);
}

/* A final symlink inside the workspace is read through, never written
 * through. */
static void
escape_inner_symlink_not_written(void)
{
	struct tt t;
	char link[PATH_MAX + 32];
	json_t *r;

	esc_host(&t);
	tt_put(t.ws, "real.txt", "real\n");
	snprintf(link, sizeof(link), "%s/alias.txt", t.ws);
	CHECK(symlink("real.txt", link) == 0);
	r = tt_call(&t, "read_file", json_pack("{ss}", "path", "alias.txt"));
	CHECK(tt_ok(r));
	json_decref(r);
	r = tt_call(&t, "write_file",
	    json_pack("{ssss}", "path", "alias.txt", "content", "x"));
	CHECK(!tt_ok(r) && strstr(tt_str(r, "error"), "symlink"));
	json_decref(r);
	CHECK(tt_same(t.ws, "real.txt", "real\n"));
}

/* An intermediate symlinked directory leading out: refused. */
static void
escape_intermediate_symlink(void)
{
	struct tt t;
	char link[PATH_MAX + 32];

	esc_host(&t);
	snprintf(link, sizeof(link), "%s/dir", t.ws);
	CHECK(symlink(t.out, link) == 0);
	esc_refused(&t, "dir/secret.txt");
	esc_refused(&t, "dir/new.txt");
	/* Walks list the link but never descend into it. */
	{
		json_t *r =
		    tt_call(&t, "grep", json_pack("{ss}", "pattern", "SECRET"));
		CHECK(tt_ok(r));
		CHECK_EQ_INT(json_integer_value(json_object_get(r, "hits")), 0);
		json_decref(r);
		r = tt_call(&t, "glob", json_pack("{ss}", "pattern", "**"));
		CHECK_EQ_INT(json_array_size(json_object_get(r, "matches")), 1);
		json_decref(r);
	}
	/* Last, as delete_file removes the link itself (not its target). */
	esc_refused(&t, "dir");
	CHECK(!tt_exists(t.ws, "dir"));
}

/* A hard link to an outside file: refused for reads and writes. */
static void
escape_hardlink(void)
{
	struct tt t;
	char target[PATH_MAX + 32], hl[PATH_MAX + 32];
	json_t *r;

	esc_host(&t);
	snprintf(target, sizeof(target), "%s/secret.txt", t.out);
	snprintf(hl, sizeof(hl), "%s/hard.txt", t.ws);
	CHECK(link(target, hl) == 0);
	r = tt_call(&t, "read_file", json_pack("{ss}", "path", "hard.txt"));
	CHECK(!tt_ok(r) && strstr(tt_str(r, "error"), "hard link"));
	json_decref(r);
	esc_refused(&t, "hard.txt");
	/* multi_edit and apply_patch refuse it too. */
	r = tt_call(&t, "apply_patch",
	    json_pack("{ss}", "patch",
		"--- a/hard.txt\n+++ b/hard.txt\n@@ -1 +1 @@\n"
		"-OUTSIDE-SECRET\n+PWNED\n"));
	CHECK(!tt_ok(r));
	json_decref(r);
	esc_host_unchanged(&t);
}

/* "..", absolute paths and /proc/self/root: refused. */
static void
escape_dotdot_absolute_proc(void)
{
	struct tt t;
	char abs[PATH_MAX + 32], link[PATH_MAX + 32];
	json_t *r;

	esc_host(&t);
	esc_refused(&t, "../outside/secret.txt");
	esc_refused(&t, "sub/../../outside/secret.txt");
	snprintf(abs, sizeof(abs), "%s/secret.txt", t.out);
	esc_refused(&t, abs);
	esc_refused(&t, "/proc/self/root/etc/hostname");
	snprintf(abs, sizeof(abs), "/proc/self/root%s/secret.txt", t.out);
	esc_refused(&t, abs);
	snprintf(link, sizeof(link), "%s/proc", t.ws);
	CHECK(symlink("/proc/self/root", link) == 0);
	snprintf(abs, sizeof(abs), "proc%s/secret.txt", t.out);
	esc_refused(&t, abs);
	snprintf(link, sizeof(link), "%s/fd", t.ws);
	CHECK(symlink("/proc/self/fd", link) == 0);
	esc_refused(&t, "fd/0");
	/* An absolute path under the workspace itself is fine. */
	snprintf(abs, sizeof(abs), "%s/in.txt", t.ws);
	r = tt_call(&t, "write_file",
	    json_pack("{ssss}", "path", abs, "content", "in\n"));
	CHECK(tt_ok(r));
	json_decref(r);
	CHECK(tt_same(t.ws, "in.txt", "in\n"));
	/* A name that only starts like the workspace is outside. */
	snprintf(abs, sizeof(abs), "%sx/secret.txt", t.ws);
	r = tt_call(&t, "read_file", json_pack("{ss}", "path", abs));
	CHECK(!tt_ok(r));
	json_decref(r);
	/* A patch naming a path outside writes nothing anywhere. */
	tt_put(t.ws, "ok.txt", "a\n");
	r = tt_call(&t, "apply_patch",
	    json_pack("{ss}", "patch",
		"--- a/ok.txt\n+++ b/ok.txt\n@@ -1 +1 @@\n-a\n+b\n"
		"--- /dev/null\n+++ b/../outside/new.txt\n@@ -0,0 +1 @@\n"
		"+x\n"));
	CHECK(!tt_ok(r));
	json_decref(r);
	CHECK(tt_same(t.ws, "ok.txt", "a\n"));
	esc_host_unchanged(&t);
}

struct esc_race {
	struct tt *t;
	volatile int stop;
	unsigned long swaps;
};

/* esc_swapper - swap ws/d (a directory) and ws/l (a symlink out) with
 * RENAME_EXCHANGE until told to stop. */
static void *
esc_swapper(void *arg)
{
	struct esc_race *race = arg;

	while (!race->stop) {
		if (renameat2(race->t->wsfd, "d", race->t->wsfd, "l",
			RENAME_EXCHANGE) == 0)
			race->swaps++;
	}
	return NULL;
}

/* A directory swapped for a symlink in a loop while the tools run:
 * never a read or write outside. */
static void
escape_rename_race(void)
{
	struct tt t;
	struct esc_race race;
	pthread_t th;
	char link[PATH_MAX + 32];
	int i, inside = 0;
	json_t *r;
	time_t end;

	esc_host(&t);
	tt_put(t.ws, "d/secret.txt", "inside\n");
	snprintf(link, sizeof(link), "%s/l", t.ws);
	CHECK(symlink(t.out, link) == 0);
	memset(&race, 0, sizeof(race));
	race.t = &t;
	CHECK(pthread_create(&th, NULL, esc_swapper, &race) == 0);
	end = time(NULL) + 5;
	for (i = 0; i < 1500 && time(NULL) < end; i++) {
		char *dump;
		const char *tool = i % 3 == 0 ? "read_file"
		    : i % 3 == 1	      ? "write_file"
					      : "grep";
		r = tt_call(&t, tool,
		    json_pack("{ssssss}", "path",
			i % 3 == 1 ? "d/new.txt" : "d/secret.txt", "content",
			"PWNED\n", "pattern", "SECRET"));
		dump = json_dumps(r, 0);
		CHECKF(strstr(dump, "OUTSIDE-SECRET") == NULL,
		    "%s leaked during the race: %s", tool, dump);
		if (tt_ok(r) && i % 3 == 0)
			inside++;
		free(dump);
		json_decref(r);
	}
	race.stop = 1;
	pthread_join(th, NULL);
	CHECKF(race.swaps > 100, "only %lu swaps", race.swaps);
	CHECKF(inside > 0, "no read ever went through");
	/* Put things back where the checks expect them. */
	if (!tt_exists(t.ws, "d/secret.txt") || tt_exists(t.out, "new.txt"))
		CHECK(tt_same(t.out, "secret.txt", SECRET));
	CHECK(!tt_exists(t.out, "new.txt"));
	esc_host_unchanged(&t);
}

static const struct harness_test tests[] = {
    HT(escape_final_symlink),
    HT(escape_inner_symlink_not_written),
    HT(escape_intermediate_symlink),
    HT(escape_hardlink),
    HT(escape_dotdot_absolute_proc),
    HT_SLOW(escape_rename_race, 60),
};

HARNESS_MAIN(tests)
