/*
 * test_store_notes - each project's notes and task list in the store:
 * kept across a reopen, the caps (300 notes, 400 characters, 50 tasks),
 * a duplicate refused, hits counted, notes removed, every bad argument
 * refused, and records damaged on disk reported without losing the
 * others.
 */
#include <lmdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/buf.h"
#include "proto/err.h"
#include "proto/sha256.h"
#include "proto/xmalloc.h"
#include "store/store.h"
#include "tests/harness.h"

#define PROJ "/home/me/src/shop"
#define OTHER "/home/me/src/blog"

/* open_home - the store in dir (the test fails if it does not open). */
static struct store *
open_home(const char *dir)
{
	struct store *s = NULL;

	CHECK_EQ_INT(store_open(dir, NULL, &s, NULL), 0);
	return s;
}

/* keep - store_note_add of text, which must succeed; its number. */
static uint64_t
keep(struct store *s, const char *project, enum store_note_kind kind,
    const char *text)
{
	uint64_t seq = 0;
	int ret;

	ret = store_note_add(s, project, kind, text, strlen(text), 1000, &seq);
	CHECKF(ret == 0, "keep %.40s: %s: %s", text, err_str(ret),
	    store_errmsg(s));
	return seq;
}

/* count - the notes of project. */
static size_t
count(struct store *s, const char *project)
{
	struct store_note *v;
	size_t n;

	CHECK_EQ_INT(store_note_list(s, project, &v, &n, NULL), 0);
	store_notes_free(v, n);
	return n;
}

/* Notes come back after a reopen, oldest first, each with its number,
 * kind, date and text; each project has its own. */
static void
notes_are_kept_per_project(void)
{
	const char *home = harness_tmpdir();
	struct store *s = open_home(home);
	struct store_note *v;
	size_t n, bad = 9;

	CHECK_EQ_INT(keep(s, PROJ, STORE_NOTE_COMMAND,
			 "tests run with make check, not npm test"),
	    1);
	CHECK_EQ_INT(keep(s, PROJ, STORE_NOTE_GOTCHA,
			 "the migration must run before the seed"),
	    2);
	CHECK_EQ_INT(
	    keep(s, OTHER, STORE_NOTE_FACT, "posts live in _posts/"), 1);
	store_close(&s);
	s = open_home(home);
	CHECK_EQ_INT(store_note_list(s, PROJ, &v, &n, &bad), 0);
	CHECK_EQ_INT(n, 2);
	CHECK_EQ_INT(bad, 0);
	CHECK_EQ_INT(v[0].seq, 1);
	CHECK_EQ_INT(v[0].kind, STORE_NOTE_COMMAND);
	CHECK_EQ_INT(v[0].date_ms, 1000);
	CHECK_EQ_INT(v[0].hits, 0);
	CHECK_EQ_STR(v[0].text, "tests run with make check, not npm test");
	CHECK_EQ_INT(v[1].seq, 2);
	CHECK_EQ_STR(v[1].text, "the migration must run before the seed");
	store_notes_free(v, n);
	CHECK_EQ_INT(count(s, OTHER), 1);
	CHECK_EQ_INT(count(s, "/home/me/src/none"), 0);
	CHECK_EQ_STR(store_note_kind_name(STORE_NOTE_DECISION), "decision");
	CHECK_EQ_INT(store_note_kind_parse("gotcha"), STORE_NOTE_GOTCHA);
	CHECK_EQ_INT(store_note_kind_parse("Gotcha"), -1);
	store_close(&s);
}

/* The same text again, in any ASCII case, is refused with the number of
 * the note that has it; another project may have it. */
static void
a_duplicate_is_refused(void)
{
	struct store *s = open_home(harness_tmpdir());
	uint64_t seq = 0;

	keep(s, PROJ, STORE_NOTE_FACT, "the API is versioned under /v2");
	keep(s, PROJ, STORE_NOTE_FACT, "prices are in cents");
	CHECK_EQ_INT(store_note_add(s, PROJ, STORE_NOTE_DECISION,
			 "Prices are in CENTS", 19, 2000, &seq),
	    -SHIRO_ERR_EXIST);
	CHECK_EQ_INT(seq, 2);
	CHECK(strstr(store_errmsg(s), "note 2") != NULL);
	CHECK_EQ_INT(count(s, PROJ), 2);
	keep(s, OTHER, STORE_NOTE_FACT, "prices are in cents");
	/* Not a duplicate: one more character. */
	keep(s, PROJ, STORE_NOTE_FACT, "prices are in cents.");
	store_close(&s);
}

/* A project keeps at most 300 notes: the next is refused until one is
 * removed; numbers go on after the highest. */
static void
at_most_300_notes(void)
{
	struct store *s = open_home(harness_tmpdir());
	uint64_t seq = 0, gone[2] = {5, 300};
	char text[64];
	size_t k, ndel = 0;

	for (k = 1; k <= STORE_NOTES_MAX; k++) {
		snprintf(text, sizeof(text), "note number %zu", k);
		CHECK_EQ_INT(keep(s, PROJ, STORE_NOTE_FACT, text), k);
	}
	CHECK_EQ_INT(
	    store_note_add(s, PROJ, STORE_NOTE_FACT, "one more", 8, 0, &seq),
	    -SHIRO_ERR_NOSPC);
	CHECK(strstr(store_errmsg(s), "300") != NULL);
	CHECK_EQ_INT(count(s, PROJ), 300);
	/* Another project is not full. */
	keep(s, OTHER, STORE_NOTE_FACT, "one more");
	CHECK_EQ_INT(store_note_del(s, PROJ, gone, 2, &ndel), 0);
	CHECK_EQ_INT(ndel, 2);
	CHECK_EQ_INT(keep(s, PROJ, STORE_NOTE_FACT, "one more"), 300);
	CHECK_EQ_INT(keep(s, PROJ, STORE_NOTE_FACT, "and another"), 301);
	CHECK_EQ_INT(
	    store_note_add(s, PROJ, STORE_NOTE_FACT, "a third", 7, 0, &seq),
	    -SHIRO_ERR_NOSPC);
	store_close(&s);
}

/* A note is one line of 1 to 400 characters (not bytes) of UTF-8 with
 * no control character; a kind and a project path are checked. */
static void
bad_notes_are_refused(void)
{
	struct store *s = open_home(harness_tmpdir());
	struct buf b = BUF_INIT;
	uint64_t seq;
	char *longpath;
	size_t k;

	for (k = 0; k < STORE_NOTE_CHARS; k++)
		buf_adds(&b, "\xc3\xa9"); /* é: 400 characters, 800 bytes */
	CHECK_EQ_INT(
	    store_note_add(s, PROJ, STORE_NOTE_FACT, b.data, b.len, 0, &seq),
	    0);
	buf_adds(&b, "e");
	CHECK_EQ_INT(
	    store_note_add(s, PROJ, STORE_NOTE_FACT, b.data, b.len, 0, &seq),
	    -SHIRO_ERR_INVAL);
	CHECK_EQ_INT(store_note_add(s, PROJ, STORE_NOTE_FACT, "", 0, 0, &seq),
	    -SHIRO_ERR_INVAL);
	CHECK_EQ_INT(
	    store_note_add(s, PROJ, STORE_NOTE_FACT, "two\nlines", 9, 0, &seq),
	    -SHIRO_ERR_INVAL);
	CHECK_EQ_INT(
	    store_note_add(s, PROJ, STORE_NOTE_FACT, "a\ttab", 5, 0, &seq),
	    -SHIRO_ERR_INVAL);
	CHECK_EQ_INT(
	    store_note_add(s, PROJ, STORE_NOTE_FACT, "bad \xff", 5, 0, &seq),
	    -SHIRO_ERR_INVAL);
	CHECK_EQ_INT(store_note_add(
			 s, PROJ, (enum store_note_kind)4, "kind", 4, 0, &seq),
	    -SHIRO_ERR_INVAL);
	CHECK_EQ_INT(store_note_add(
			 s, "relative/path", STORE_NOTE_FACT, "x", 1, 0, &seq),
	    -SHIRO_ERR_INVAL);
	CHECK_EQ_INT(store_note_add(s, "", STORE_NOTE_FACT, "x", 1, 0, &seq),
	    -SHIRO_ERR_INVAL);
	longpath = xmalloc(STORE_PROJECT_MAX + 2);
	memset(longpath, 'a', STORE_PROJECT_MAX + 1);
	longpath[0] = '/';
	longpath[STORE_PROJECT_MAX + 1] = '\0';
	CHECK_EQ_INT(
	    store_note_add(s, longpath, STORE_NOTE_FACT, "x", 1, 0, &seq),
	    -SHIRO_ERR_INVAL);
	longpath[STORE_PROJECT_MAX] = '\0';
	CHECK_EQ_INT(keep(s, longpath, STORE_NOTE_FACT, "x"), 1);
	CHECK_EQ_INT(count(s, PROJ), 1);
	free(longpath);
	buf_free(&b);
	store_close(&s);
}

/* Hits add up durably; a removed note takes its hits with it; the last
 * note removed leaves the project as if it never had one. */
static void
hits_and_removal(void)
{
	const char *home = harness_tmpdir();
	struct store *s = open_home(home);
	struct store_note *v;
	uint64_t one[1] = {1}, both[3] = {1, 2, 77};
	size_t n, ndel = 9;

	keep(s, PROJ, STORE_NOTE_FACT, "first");
	keep(s, PROJ, STORE_NOTE_FACT, "second");
	CHECK_EQ_INT(store_note_hit(s, PROJ, both, 3), 0);
	CHECK_EQ_INT(store_note_hit(s, PROJ, one, 1), 0);
	store_close(&s);
	s = open_home(home);
	CHECK_EQ_INT(store_note_list(s, PROJ, &v, &n, NULL), 0);
	CHECK_EQ_INT(n, 2);
	CHECK_EQ_INT(v[0].hits, 2);
	CHECK_EQ_INT(v[1].hits, 1);
	CHECK_EQ_INT(v[0].date_ms, 1000);
	store_notes_free(v, n);
	CHECK_EQ_INT(store_note_del(s, PROJ, one, 1, &ndel), 0);
	CHECK_EQ_INT(ndel, 1);
	CHECK_EQ_INT(store_note_del(s, PROJ, one, 1, &ndel), 0);
	CHECK_EQ_INT(ndel, 0);
	CHECK_EQ_INT(count(s, PROJ), 1);
	CHECK_EQ_INT(store_note_del(s, PROJ, both + 1, 1, &ndel), 0);
	CHECK_EQ_INT(ndel, 1);
	CHECK_EQ_INT(count(s, PROJ), 0);
	CHECK_EQ_INT(keep(s, PROJ, STORE_NOTE_FACT, "first"), 1);
	store_close(&s);
}

/* A task list replaces the one before, comes back after a reopen with
 * its states and notes, and goes when it is emptied. */
static void
task_lists_replace_and_persist(void)
{
	const char *home = harness_tmpdir();
	struct store *s = open_home(home);
	struct store_todo t[3] = {
	    {STORE_TODO_DONE, "read the pagination code", NULL},
	    {STORE_TODO_IN_PROGRESS, "fix the boundary", ""},
	    {STORE_TODO_BLOCKED, "update the docs", "no write access"},
	};
	struct store_todo *v;
	size_t n = 9;

	CHECK_EQ_INT(store_todo_get(s, PROJ, &v, &n), 0);
	CHECK_EQ_INT(n, 0);
	CHECK_EQ_INT(store_todo_put(s, PROJ, t, 3), 0);
	CHECK_EQ_INT(store_todo_put(s, OTHER, t + 2, 1), 0);
	store_close(&s);
	s = open_home(home);
	CHECK_EQ_INT(store_todo_get(s, PROJ, &v, &n), 0);
	CHECK_EQ_INT(n, 3);
	CHECK_EQ_INT(v[0].state, STORE_TODO_DONE);
	CHECK_EQ_STR(v[0].text, "read the pagination code");
	CHECK_EQ_STR(v[0].note, "");
	CHECK_EQ_INT(v[2].state, STORE_TODO_BLOCKED);
	CHECK_EQ_STR(v[2].note, "no write access");
	store_todos_free(v, n);
	CHECK_EQ_INT(store_todo_put(s, PROJ, t + 1, 1), 0);
	CHECK_EQ_INT(store_todo_get(s, PROJ, &v, &n), 0);
	CHECK_EQ_INT(n, 1);
	CHECK_EQ_STR(v[0].text, "fix the boundary");
	store_todos_free(v, n);
	CHECK_EQ_INT(store_todo_put(s, PROJ, NULL, 0), 0);
	CHECK_EQ_INT(store_todo_get(s, PROJ, &v, &n), 0);
	CHECK_EQ_INT(n, 0);
	CHECK_EQ_INT(store_todo_get(s, OTHER, &v, &n), 0);
	CHECK_EQ_INT(n, 1);
	store_todos_free(v, n);
	CHECK_EQ_STR(
	    store_todo_state_name(STORE_TODO_IN_PROGRESS), "in_progress");
	CHECK_EQ_INT(store_todo_state_parse("blocked"), STORE_TODO_BLOCKED);
	CHECK_EQ_INT(store_todo_state_parse("started"), -1);
	store_close(&s);
}

/* At most 50 tasks; a state, a text of 1 to 300 characters on one line,
 * a note of at most 300; nothing is written when one is wrong. */
static void
bad_task_lists_are_refused(void)
{
	struct store *s = open_home(harness_tmpdir());
	struct store_todo t[STORE_TODOS_MAX + 1], *v;
	char *big = xmalloc(STORE_TODO_CHARS + 2);
	size_t k, n;

	for (k = 0; k <= STORE_TODOS_MAX; k++) {
		t[k].state = STORE_TODO_PENDING;
		t[k].text = "a task";
		t[k].note = NULL;
	}
	CHECK_EQ_INT(
	    store_todo_put(s, PROJ, t, STORE_TODOS_MAX + 1), -SHIRO_ERR_TOOBIG);
	CHECK_EQ_INT(store_todo_put(s, PROJ, t, STORE_TODOS_MAX), 0);
	memset(big, 'x', STORE_TODO_CHARS + 1);
	big[STORE_TODO_CHARS + 1] = '\0';
	t[3].text = big;
	CHECK_EQ_INT(store_todo_put(s, PROJ, t, 5), -SHIRO_ERR_INVAL);
	CHECK(strstr(store_errmsg(s), "task 4") != NULL);
	t[3].text = "";
	CHECK_EQ_INT(store_todo_put(s, PROJ, t, 5), -SHIRO_ERR_INVAL);
	t[3].text = "two\nlines";
	CHECK_EQ_INT(store_todo_put(s, PROJ, t, 5), -SHIRO_ERR_INVAL);
	t[3].text = "fine";
	t[3].note = big;
	CHECK_EQ_INT(store_todo_put(s, PROJ, t, 5), -SHIRO_ERR_INVAL);
	big[STORE_TODO_CHARS] = '\0';
	CHECK_EQ_INT(store_todo_put(s, PROJ, t, 5), 0);
	t[3].state = (enum store_todo_state)7;
	CHECK_EQ_INT(store_todo_put(s, PROJ, t, 5), -SHIRO_ERR_INVAL);
	CHECK_EQ_INT(store_todo_put(s, "no/slash", t, 1), -SHIRO_ERR_INVAL);
	CHECK_EQ_INT(store_todo_get(s, PROJ, &v, &n), 0);
	CHECK_EQ_INT(n, 5);
	CHECK_EQ_INT(strlen(v[3].note), STORE_TODO_CHARS);
	store_todos_free(v, n);
	free(big);
	store_close(&s);
}

/* raw_put - write key/val into database name of home's LMDB directly. */
static void
raw_put(const char *home, const char *name, const void *key, size_t klen,
    const void *val, size_t vlen)
{
	MDB_env *env;
	MDB_txn *txn;
	MDB_dbi dbi;
	MDB_val k = {klen, (void *)key}, v = {vlen, (void *)val};
	char *path = xasprintf("%s/chat/tree.lmdb", home);

	CHECK(mdb_env_create(&env) == 0);
	mdb_env_set_maxdbs(env, 16);
	CHECK(mdb_env_open(env, path, 0, 0600) == 0);
	CHECK(mdb_txn_begin(env, NULL, 0, &txn) == 0);
	CHECK(mdb_dbi_open(txn, name, 0, &dbi) == 0);
	CHECK(mdb_put(txn, dbi, &k, &v, 0) == 0);
	CHECK(mdb_txn_commit(txn) == 0);
	mdb_env_close(env);
	free(path);
}

/* pkey - a project's key: the first 16 bytes of its path's SHA-256,
 * then (when seq) the note's number big-endian. */
static size_t
pkey(const char *project, uint64_t seq, unsigned char *k)
{
	uint8_t d[SHA256_LEN];
	int j;

	sha256(project, strlen(project), d);
	memcpy(k, d, 16);
	if (seq == 0)
		return 16;
	for (j = 0; j < 8; j++)
		k[16 + j] = (unsigned char)(seq >> (56 - 8 * j));
	return 24;
}

/* todo_rec - a task list record of path with one pending task "a task"
 * and no note, as store_kv.c writes it, into rec; its length. */
static size_t
todo_rec(const char *path, unsigned char *rec)
{
	size_t len = strlen(path);

	rec[0] = 0;
	rec[1] = (unsigned char)len;
	memcpy(rec + 2, path, len);
	rec[2 + len] = 1;
	rec[3 + len] = STORE_TODO_PENDING;
	rec[4 + len] = 0;
	rec[5 + len] = 6;
	memcpy(rec + 6 + len, "a task", 6);
	rec[12 + len] = 0;
	rec[13 + len] = 0;
	return 14 + len;
}

/* Damage on disk: a note that does not read is skipped and counted while
 * the others still serve; a project record naming another path and a
 * task list that does not read are reported as corrupt, and the store
 * keeps working for every other project. */
static void
damaged_records_are_reported(void)
{
	const char *home = harness_tmpdir();
	struct store *s = open_home(home);
	struct store_note *v;
	struct store_todo t = {STORE_TODO_PENDING, "a task", NULL}, *tv;
	unsigned char k[24], badnote[20] = {9}, rec[64];
	size_t n, bad = 0, kl;
	uint64_t seq;

	keep(s, PROJ, STORE_NOTE_FACT, "first");
	keep(s, PROJ, STORE_NOTE_FACT, "second");
	CHECK_EQ_INT(store_todo_put(s, PROJ, &t, 1), 0);
	CHECK_EQ_INT(store_todo_put(s, OTHER, &t, 1), 0);
	store_close(&s);
	/* Note 2 gets kind 9; note 3 appears, too short to read. */
	kl = pkey(PROJ, 2, k);
	raw_put(home, "notes", k, kl, badnote, sizeof(badnote));
	kl = pkey(PROJ, 3, k);
	raw_put(home, "notes", k, kl, "x", 1);
	/* The task list of PROJ loses the length of its task's note. */
	kl = pkey(PROJ, 0, k);
	raw_put(home, "todos", k, kl, rec, todo_rec(PROJ, rec) - 2);
	/* OTHER's project record names a third path. */
	kl = pkey(OTHER, 0, k);
	raw_put(home, "notes", k, kl, "/elsewhere", 10);
	s = open_home(home);
	CHECK_EQ_INT(store_note_list(s, PROJ, &v, &n, &bad), 0);
	CHECK_EQ_INT(n, 1);
	CHECK_EQ_INT(bad, 2);
	CHECK_EQ_STR(v[0].text, "first");
	store_notes_free(v, n);
	/* The damaged ones still count: numbering goes on after them. */
	CHECK_EQ_INT(keep(s, PROJ, STORE_NOTE_FACT, "third"), 4);
	CHECK_EQ_INT(store_todo_get(s, PROJ, &tv, &n), -SHIRO_ERR_CORRUPT);
	CHECK(strstr(store_errmsg(s), "does not read") != NULL);
	CHECK_EQ_INT(
	    store_note_list(s, OTHER, &v, &n, NULL), -SHIRO_ERR_CORRUPT);
	CHECK(strstr(store_errmsg(s), "another path") != NULL);
	CHECK_EQ_INT(store_note_add(s, OTHER, STORE_NOTE_FACT, "x", 1, 0, &seq),
	    -SHIRO_ERR_CORRUPT);
	/* OTHER's task list is a record of its own: it still reads. */
	CHECK_EQ_INT(store_todo_get(s, OTHER, &tv, &n), 0);
	CHECK_EQ_INT(n, 1);
	store_todos_free(tv, n);
	/* Writing a list replaces the damaged one. */
	CHECK_EQ_INT(store_todo_put(s, PROJ, &t, 1), 0);
	CHECK_EQ_INT(store_todo_get(s, PROJ, &tv, &n), 0);
	CHECK_EQ_INT(n, 1);
	store_todos_free(tv, n);
	store_close(&s);
}

/* A task list stored under a project's key but naming another path is
 * refused, never shown as that project's. */
static void
a_task_list_of_another_path_is_refused(void)
{
	const char *home = harness_tmpdir();
	struct store *s = open_home(home);
	struct store_todo t = {STORE_TODO_PENDING, "a task", NULL}, *tv;
	unsigned char k[24], rec[64];
	size_t kl, rl, n;

	CHECK_EQ_INT(store_todo_put(s, PROJ, &t, 1), 0);
	store_close(&s);
	/* OTHER's well-formed list, under PROJ's key. */
	kl = pkey(PROJ, 0, k);
	rl = todo_rec(OTHER, rec);
	raw_put(home, "todos", k, kl, rec, rl);
	s = open_home(home);
	CHECK_EQ_INT(store_todo_get(s, PROJ, &tv, &n), -SHIRO_ERR_CORRUPT);
	CHECK(strstr(store_errmsg(s), "another path") != NULL);
	store_close(&s);
	/* The same bytes under OTHER's key read as OTHER's list. */
	kl = pkey(OTHER, 0, k);
	raw_put(home, "todos", k, kl, rec, rl);
	s = open_home(home);
	CHECK_EQ_INT(store_todo_get(s, OTHER, &tv, &n), 0);
	CHECK_EQ_INT(n, 1);
	CHECK_EQ_STR(tv[0].text, "a task");
	store_todos_free(tv, n);
	store_close(&s);
}

static const struct harness_test tests[] = {
    HT(notes_are_kept_per_project),
    HT(a_duplicate_is_refused),
    HT(at_most_300_notes),
    HT(bad_notes_are_refused),
    HT(hits_and_removal),
    HT(task_lists_replace_and_persist),
    HT(bad_task_lists_are_refused),
    HT(damaged_records_are_reported),
    HT(a_task_list_of_another_path_is_refused),
};

HARNESS_MAIN(tests)
