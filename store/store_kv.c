/*
 * store_kv.c - the small records: each project's notes and task list
 * (the notes and todos databases), and in the meta database the usage
 * counters and shirod's own state records.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lmdb.h>

#include "proto/buf.h"
#include "proto/err.h"
#include "proto/sha256.h"
#include "proto/utf8.h"
#include "proto/xmalloc.h"
#include "store_int.h"

/* A project's key: the first bytes of its path's SHA-256. */
#define STORE_PKEY 16
/* A note's key: the project's, then its number (big-endian). */
#define STORE_NKEY (STORE_PKEY + 8)
/* A note's value: kind (1), hits (8), date ms (8), then its text. */
#define STORE_NOTE_HEAD 17

static const char *const store_note_kinds[STORE_NOTE_KINDS] = {
    "fact", "decision", "gotcha", "command"};
static const char *const store_todo_states[STORE_TODO_STATES] = {
    "pending", "in_progress", "done", "blocked"};

/* store_name_of - names[k] for k below n, else "?". */
static const char *
store_name_of(const char *const *names, unsigned n, unsigned k)
{
	return k < n ? names[k] : "?";
}

/* store_name_find - the index of name in names[0..n), or -1. */
static int
store_name_find(const char *const *names, int n, const char *name)
{
	int k;

	for (k = 0; k < n; k++)
		if (name != NULL && strcmp(name, names[k]) == 0)
			return k;
	return -1;
}

/* store_note_kind_name - the name of kind k ("fact"), or "?". */
const char *
store_note_kind_name(enum store_note_kind k)
{
	return store_name_of(store_note_kinds, STORE_NOTE_KINDS, k);
}

/* store_note_kind_parse - the kind called name, or -1. */
int
store_note_kind_parse(const char *name)
{
	return store_name_find(store_note_kinds, STORE_NOTE_KINDS, name);
}

/* store_todo_state_name - the name of state st ("in_progress"), or "?". */
const char *
store_todo_state_name(enum store_todo_state st)
{
	return store_name_of(store_todo_states, STORE_TODO_STATES, st);
}

/* store_todo_state_parse - the state called name, or -1. */
int
store_todo_state_parse(const char *name)
{
	return store_name_find(store_todo_states, STORE_TODO_STATES, name);
}

/* store_pkey - the key of project into k after checking the path. */
static int
store_pkey(struct store *s, const char *project, unsigned char k[STORE_PKEY])
{
	uint8_t d[SHA256_LEN];
	size_t n = project != NULL ? strlen(project) : 0;

	if (n == 0 || project[0] != '/' || n > STORE_PROJECT_MAX ||
	    !utf8_valid(project, n))
		return store_fail(s, -SHIRO_ERR_INVAL,
		    "a project is an absolute path of at most %d bytes",
		    STORE_PROJECT_MAX);
	sha256(project, n, d);
	memcpy(k, d, STORE_PKEY);
	return 0;
}

/* store_line_ok - text is UTF-8 of 1..max characters on one line, with
 * no control character in it (or empty, when may_be_empty). */
static int
store_line_ok(const char *text, size_t len, size_t max, int may_be_empty)
{
	size_t k;

	if (len == 0)
		return may_be_empty;
	if (text == NULL || len > 4 * max || !utf8_valid(text, len) ||
	    utf8_count(text, len) > max)
		return 0;
	for (k = 0; k < len; k++)
		if ((unsigned char)text[k] < 0x20 || text[k] == 0x7f)
			return 0;
	return 1;
}

/* store_same_text - a and b are equal but for the case of ASCII letters. */
static int
store_same_text(const char *a, size_t alen, const char *b, size_t blen)
{
	size_t k;
	unsigned char x, y;

	if (alen != blen)
		return 0;
	for (k = 0; k < alen; k++) {
		x = (unsigned char)a[k];
		y = (unsigned char)b[k];
		if (x >= 'A' && x <= 'Z')
			x = (unsigned char)(x - 'A' + 'a');
		if (y >= 'A' && y <= 'Z')
			y = (unsigned char)(y - 'A' + 'a');
		if (x != y)
			return 0;
	}
	return 1;
}

/* store_note_decode - a note's value into n (text borrowed); 0 or -1. */
static int
store_note_decode(const MDB_val *v, struct store_note *n)
{
	const unsigned char *p = v->mv_data;

	if (v->mv_size <= STORE_NOTE_HEAD || p[0] >= STORE_NOTE_KINDS)
		return -1;
	n->kind = (enum store_note_kind)p[0];
	n->hits = store_get64(p + 1);
	n->date_ms = (int64_t)store_get64(p + 9);
	n->text = (char *)p + STORE_NOTE_HEAD;
	n->len = v->mv_size - STORE_NOTE_HEAD;
	if (!store_line_ok(n->text, n->len, STORE_NOTE_CHARS, 0))
		return -1;
	return 0;
}

/* store_note_encode - n's value into buf (STORE_NOTE_HEAD + text). */
static void
store_note_encode(const struct store_note *n, struct buf *b)
{
	unsigned char head[STORE_NOTE_HEAD];

	head[0] = (unsigned char)n->kind;
	store_be64(head + 1, n->hits);
	store_be64(head + 9, (uint64_t)n->date_ms);
	buf_reset(b);
	buf_add(b, head, sizeof(head));
	buf_add(b, n->text, n->len);
}

/* store_project_check - the project record of pk in txn names project;
 * 0 (also when there is none: *havep says), or CORRUPT. */
static int
store_project_check(struct store *s, MDB_txn *txn, const unsigned char *pk,
    const char *project, int *havep)
{
	MDB_val k = {STORE_PKEY, (void *)pk}, v;
	int rc;

	*havep = 0;
	rc = mdb_get(txn, s->db_notes, &k, &v);
	if (rc == MDB_NOTFOUND)
		return 0;
	if (rc != 0)
		return store_fail(
		    s, store_db_err(rc), "notes: %s", mdb_strerror(rc));
	if (v.mv_size != strlen(project) ||
	    memcmp(v.mv_data, project, v.mv_size) != 0)
		return store_fail(s, -SHIRO_ERR_CORRUPT,
		    "the notes kept under the key of %.200s belong to "
		    "another path",
		    project);
	*havep = 1;
	return 0;
}

/* A walk over one project's notes. */
struct store_nwalk {
	MDB_cursor *cur;
	unsigned char start[STORE_NKEY];
	int rc;
	MDB_val k, v;
};

/* store_nwalk_next - the next note of the walk (the first when first):
 * 1 with w->k and w->v, 0 at the end, or a negative error. */
static int
store_nwalk_next(struct store *s, struct store_nwalk *w, int first)
{
	if (first) {
		w->k.mv_size = STORE_NKEY;
		w->k.mv_data = w->start;
		w->rc = mdb_cursor_get(w->cur, &w->k, &w->v, MDB_SET_RANGE);
	} else {
		w->rc = mdb_cursor_get(w->cur, &w->k, &w->v, MDB_NEXT);
	}
	if (w->rc == MDB_NOTFOUND)
		return 0;
	if (w->rc != 0)
		return store_fail(
		    s, store_db_err(w->rc), "notes: %s", mdb_strerror(w->rc));
	if (w->k.mv_size < STORE_PKEY ||
	    memcmp(w->k.mv_data, w->start, STORE_PKEY) != 0)
		return 0;
	return 1;
}

/* store_nwalk_open - a walk over pk's notes in txn. */
static int
store_nwalk_open(struct store *s, MDB_txn *txn, const unsigned char *pk,
    struct store_nwalk *w)
{
	int rc;

	memset(w, 0, sizeof(*w));
	memcpy(w->start, pk, STORE_PKEY);
	rc = mdb_cursor_open(txn, s->db_notes, &w->cur);
	if (rc != 0)
		return store_fail(
		    s, store_db_err(rc), "notes: %s", mdb_strerror(rc));
	return 0;
}

/* What store_note_add writes, and what it found. */
struct store_note_op {
	const char *project;
	unsigned char pk[STORE_PKEY];
	struct store_note note;
	uint64_t seq; /* out: the new note's, or the duplicate's */
	struct buf val;
};

/* store_note_add_fn - refuse a duplicate or a full project, else put the
 * note (and the project's record when it is the first). */
static int
store_note_add_fn(struct store *s, MDB_txn *txn, void *arg)
{
	struct store_note_op *op = arg;
	struct store_nwalk w;
	struct store_note have;
	unsigned char key[STORE_NKEY];
	MDB_val k, v;
	uint64_t last = 0;
	size_t count = 0;
	int rc, ret, haveproj;

	if ((ret = store_project_check(
		 s, txn, op->pk, op->project, &haveproj)) != 0 ||
	    (ret = store_nwalk_open(s, txn, op->pk, &w)) != 0)
		return ret;
	for (rc = store_nwalk_next(s, &w, 1); rc == 1;
	     rc = store_nwalk_next(s, &w, 0)) {
		if (w.k.mv_size != STORE_NKEY)
			continue;
		count++;
		last = store_get64(
		    (const unsigned char *)w.k.mv_data + STORE_PKEY);
		if (store_note_decode(&w.v, &have) == 0 &&
		    store_same_text(
			have.text, have.len, op->note.text, op->note.len)) {
			op->seq = last;
			mdb_cursor_close(w.cur);
			return -SHIRO_ERR_EXIST;
		}
	}
	mdb_cursor_close(w.cur);
	if (rc < 0)
		return rc;
	if (count >= STORE_NOTES_MAX)
		return -SHIRO_ERR_NOSPC;
	if (!haveproj) {
		k.mv_size = STORE_PKEY;
		k.mv_data = op->pk;
		v.mv_size = strlen(op->project);
		v.mv_data = (void *)op->project;
		if ((rc = mdb_put(txn, s->db_notes, &k, &v, 0)) != 0)
			goto fail;
	}
	op->seq = last + 1;
	memcpy(key, op->pk, STORE_PKEY);
	store_be64(key + STORE_PKEY, op->seq);
	store_note_encode(&op->note, &op->val);
	k.mv_size = sizeof(key);
	k.mv_data = key;
	v.mv_size = op->val.len;
	v.mv_data = op->val.data;
	if ((rc = mdb_put(txn, s->db_notes, &k, &v, 0)) != 0)
		goto fail;
	return 0;
fail:
	if (rc == MDB_MAP_FULL)
		return -SHIRO_ERR_AGAIN;
	return store_fail(s, store_db_err(rc), "notes: %s", mdb_strerror(rc));
}

/* store_note_add - keep a note (see store.h). */
int
store_note_add(struct store *s, const char *project, enum store_note_kind kind,
    const char *text, size_t len, int64_t date_ms, uint64_t *seqp)
{
	struct store_note_op op;
	int ret;

	*seqp = 0;
	memset(&op, 0, sizeof(op));
	if ((ret = store_check(s, 1)) != 0 ||
	    (ret = store_pkey(s, project, op.pk)) != 0)
		return ret;
	if ((unsigned)kind >= STORE_NOTE_KINDS)
		return store_fail(s, -SHIRO_ERR_INVAL, "bad note kind");
	if (!store_line_ok(text, len, STORE_NOTE_CHARS, 0))
		return store_fail(s, -SHIRO_ERR_INVAL,
		    "a note is one line of 1 to %d characters of UTF-8",
		    STORE_NOTE_CHARS);
	op.project = project;
	op.note.kind = kind;
	op.note.date_ms = date_ms;
	op.note.text = (char *)text;
	op.note.len = len;
	ret = store_db_write(s, store_note_add_fn, &op);
	buf_free(&op.val);
	*seqp = op.seq;
	if (ret == -SHIRO_ERR_EXIST)
		return store_fail(s, ret,
		    "the project has this note already "
		    "(note %llu)",
		    (unsigned long long)op.seq);
	if (ret == -SHIRO_ERR_NOSPC)
		return store_fail(s, ret,
		    "the project has %d notes, the most "
		    "it keeps",
		    STORE_NOTES_MAX);
	return ret;
}

/* store_notes_free - release a list from store_note_list. */
void
store_notes_free(struct store_note *v, size_t n)
{
	size_t k;

	for (k = 0; k < n; k++)
		free(v[k].text);
	free(v);
}

/* store_note_list - every note of project, oldest first (see store.h). */
int
store_note_list(struct store *s, const char *project, struct store_note **vp,
    size_t *np, size_t *nbadp)
{
	unsigned char pk[STORE_PKEY];
	struct store_note *v = NULL, one;
	struct store_nwalk w;
	size_t n = 0, cap = 0, nbad = 0;
	MDB_txn *txn;
	int rc, ret, haveproj;

	*vp = NULL;
	*np = 0;
	if (nbadp != NULL)
		*nbadp = 0;
	if ((ret = store_check(s, 0)) != 0 ||
	    (ret = store_pkey(s, project, pk)) != 0 ||
	    (ret = store_db_read(s, &txn)) != 0)
		return ret;
	if ((ret = store_project_check(s, txn, pk, project, &haveproj)) != 0 ||
	    (ret = store_nwalk_open(s, txn, pk, &w)) != 0) {
		mdb_txn_abort(txn);
		return ret;
	}
	for (rc = store_nwalk_next(s, &w, 1); rc == 1;
	     rc = store_nwalk_next(s, &w, 0)) {
		if (w.k.mv_size != STORE_NKEY)
			continue;
		if (store_note_decode(&w.v, &one) != 0) {
			/* Left where it is: fsck or a person can look. */
			nbad++;
			continue;
		}
		one.seq = store_get64(
		    (const unsigned char *)w.k.mv_data + STORE_PKEY);
		if (n == cap) {
			cap = cap ? 2 * cap : 16;
			v = xreallocarray(v, cap, sizeof(*v));
		}
		v[n] = one;
		v[n].text = xmemdup(one.text, one.len + 1);
		v[n].text[one.len] = '\0';
		n++;
	}
	mdb_cursor_close(w.cur);
	mdb_txn_abort(txn);
	if (rc < 0) {
		store_notes_free(v, n);
		return rc;
	}
	if (n > 0 && !haveproj) {
		store_notes_free(v, n);
		return store_fail(s, -SHIRO_ERR_CORRUPT,
		    "notes of %.200s have no project record", project);
	}
	*vp = v;
	*np = n;
	if (nbadp != NULL)
		*nbadp = nbad;
	return 0;
}

/* What store_note_hit and store_note_del change. */
struct store_note_chg {
	unsigned char pk[STORE_PKEY];
	const uint64_t *seqs;
	size_t n;
	int del;
	size_t done; /* out: notes changed */
	struct buf val;
};

/* store_note_chg_fn - add a hit to each note, or delete each; the
 * project's record goes with its last note. */
static int
store_note_chg_fn(struct store *s, MDB_txn *txn, void *arg)
{
	struct store_note_chg *op = arg;
	unsigned char key[STORE_NKEY];
	struct store_note note;
	struct store_nwalk w;
	MDB_val k, v;
	size_t j;
	int rc = 0, left;

	op->done = 0;
	memcpy(key, op->pk, STORE_PKEY);
	for (j = 0; j < op->n; j++) {
		store_be64(key + STORE_PKEY, op->seqs[j]);
		k.mv_size = sizeof(key);
		k.mv_data = key;
		rc = mdb_get(txn, s->db_notes, &k, &v);
		if (rc == MDB_NOTFOUND)
			continue;
		if (rc != 0)
			goto fail;
		if (op->del) {
			if ((rc = mdb_del(txn, s->db_notes, &k, NULL)) != 0)
				goto fail;
			op->done++;
			continue;
		}
		if (store_note_decode(&v, &note) != 0)
			continue;
		note.hits++;
		store_note_encode(&note, &op->val);
		v.mv_size = op->val.len;
		v.mv_data = op->val.data;
		if ((rc = mdb_put(txn, s->db_notes, &k, &v, 0)) != 0)
			goto fail;
		op->done++;
	}
	if (!op->del || op->done == 0)
		return 0;
	if ((rc = store_nwalk_open(s, txn, op->pk, &w)) != 0)
		return rc;
	left = 0;
	for (rc = store_nwalk_next(s, &w, 1); rc == 1 && !left;
	     rc = store_nwalk_next(s, &w, 0))
		left = w.k.mv_size == STORE_NKEY;
	mdb_cursor_close(w.cur);
	if (rc < 0)
		return rc;
	if (!left) {
		k.mv_size = STORE_PKEY;
		k.mv_data = op->pk;
		rc = mdb_del(txn, s->db_notes, &k, NULL);
		if (rc != 0 && rc != MDB_NOTFOUND)
			goto fail;
	}
	return 0;
fail:
	if (rc == MDB_MAP_FULL)
		return -SHIRO_ERR_AGAIN;
	return store_fail(s, store_db_err(rc), "notes: %s", mdb_strerror(rc));
}

/* store_note_chg - store_note_hit or store_note_del. */
static int
store_note_chg(struct store *s, const char *project, const uint64_t *seqs,
    size_t n, int del, size_t *donep)
{
	struct store_note_chg op;
	int ret;

	if (donep != NULL)
		*donep = 0;
	memset(&op, 0, sizeof(op));
	if ((ret = store_check(s, 1)) != 0 ||
	    (ret = store_pkey(s, project, op.pk)) != 0)
		return ret;
	if (n == 0)
		return 0;
	op.seqs = seqs;
	op.n = n;
	op.del = del;
	ret = store_db_write(s, store_note_chg_fn, &op);
	buf_free(&op.val);
	if (ret == 0 && donep != NULL)
		*donep = op.done;
	return ret;
}

/* store_note_hit - count a recall of each note (see store.h). */
int
store_note_hit(
    struct store *s, const char *project, const uint64_t *seqs, size_t n)
{
	return store_note_chg(s, project, seqs, n, 0, NULL);
}

/* store_note_del - remove notes (see store.h). */
int
store_note_del(struct store *s, const char *project, const uint64_t *seqs,
    size_t n, size_t *ndelp)
{
	return store_note_chg(s, project, seqs, n, 1, ndelp);
}

/* store_todo_encode - the task list record: the path's length (2) and
 * bytes, the count (1), then per task its state (1) and its text's and
 * note's lengths (2 each) and bytes. */
static void
store_todo_encode(
    const char *project, const struct store_todo *v, size_t n, struct buf *b)
{
	unsigned char h[2];
	size_t k, len;

	len = strlen(project);
	h[0] = (unsigned char)(len >> 8);
	h[1] = (unsigned char)len;
	buf_add(b, h, 2);
	buf_add(b, project, len);
	h[0] = (unsigned char)n;
	buf_add(b, h, 1);
	for (k = 0; k < n; k++) {
		h[0] = (unsigned char)v[k].state;
		buf_add(b, h, 1);
		len = strlen(v[k].text);
		h[0] = (unsigned char)(len >> 8);
		h[1] = (unsigned char)len;
		buf_add(b, h, 2);
		buf_add(b, v[k].text, len);
		len = v[k].note != NULL ? strlen(v[k].note) : 0;
		h[0] = (unsigned char)(len >> 8);
		h[1] = (unsigned char)len;
		buf_add(b, h, 2);
		if (len > 0)
			buf_add(b, v[k].note, len);
	}
}

/* store_todo_str - a length-prefixed string at *pp within end: a copy
 * (caller frees) that passes store_line_ok, or NULL. */
static char *
store_todo_str(
    const unsigned char **pp, const unsigned char *end, int may_be_empty)
{
	const unsigned char *p = *pp;
	size_t len;
	char *str;

	if (end - p < 2)
		return NULL;
	len = ((size_t)p[0] << 8) | p[1];
	p += 2;
	if ((size_t)(end - p) < len ||
	    !store_line_ok(
		(const char *)p, len, STORE_TODO_CHARS, may_be_empty))
		return NULL;
	str = xmemdup(p, len + 1);
	str[len] = '\0';
	*pp = p + len;
	return str;
}

/* store_todo_decode - a task list record into *vp (caller frees); 0, or
 * CORRUPT when it does not read or names another path. */
static int
store_todo_decode(struct store *s, const MDB_val *val, const char *project,
    struct store_todo **vp, size_t *np)
{
	const unsigned char *p = val->mv_data, *end = p + val->mv_size;
	struct store_todo *v = NULL;
	size_t len, n = 0, k;

	*vp = NULL;
	*np = 0;
	if (end - p < 3)
		goto bad;
	len = ((size_t)p[0] << 8) | p[1];
	p += 2;
	if ((size_t)(end - p) < len + 1)
		goto bad;
	if (len != strlen(project) || memcmp(p, project, len) != 0)
		return store_fail(s, -SHIRO_ERR_CORRUPT,
		    "the task list kept under the key of %.200s belongs to "
		    "another path",
		    project);
	p += len;
	n = *p++;
	if (n == 0 || n > STORE_TODOS_MAX)
		goto bad;
	v = xcalloc(n, sizeof(*v));
	for (k = 0; k < n; k++) {
		if (p >= end || *p >= STORE_TODO_STATES)
			goto bad;
		v[k].state = (enum store_todo_state) * p++;
		if ((v[k].text = store_todo_str(&p, end, 0)) == NULL ||
		    (v[k].note = store_todo_str(&p, end, 1)) == NULL)
			goto bad;
	}
	if (p != end)
		goto bad;
	*vp = v;
	*np = n;
	return 0;
bad:
	store_todos_free(v, v != NULL ? n : 0);
	return store_fail(s, -SHIRO_ERR_CORRUPT,
	    "the task list of %.200s does not read", project);
}

/* store_todos_free - release a list from store_todo_get. */
void
store_todos_free(struct store_todo *v, size_t n)
{
	size_t k;

	for (k = 0; k < n; k++) {
		free(v[k].text);
		free(v[k].note);
	}
	free(v);
}

/* One put (or removal) of a task list. */
struct store_todo_op {
	unsigned char pk[STORE_PKEY];
	const struct buf *val; /* NULL: remove */
};

/* store_todo_fn - write or remove the task list record. */
static int
store_todo_fn(struct store *s, MDB_txn *txn, void *arg)
{
	struct store_todo_op *op = arg;
	MDB_val k = {STORE_PKEY, op->pk}, v;
	int rc;

	if (op->val != NULL) {
		v.mv_size = op->val->len;
		v.mv_data = op->val->data;
		rc = mdb_put(txn, s->db_todos, &k, &v, 0);
	} else {
		rc = mdb_del(txn, s->db_todos, &k, NULL);
		if (rc == MDB_NOTFOUND)
			rc = 0;
	}
	if (rc == MDB_MAP_FULL)
		return -SHIRO_ERR_AGAIN;
	if (rc != 0)
		return store_fail(
		    s, store_db_err(rc), "todos: %s", mdb_strerror(rc));
	return 0;
}

/* store_todo_put - replace project's task list (see store.h). */
int
store_todo_put(
    struct store *s, const char *project, const struct store_todo *v, size_t n)
{
	struct store_todo_op op;
	struct buf val = BUF_INIT;
	size_t k;
	int ret;

	if ((ret = store_check(s, 1)) != 0 ||
	    (ret = store_pkey(s, project, op.pk)) != 0)
		return ret;
	if (n > STORE_TODOS_MAX)
		return store_fail(s, -SHIRO_ERR_TOOBIG,
		    "a task list has at most %d tasks", STORE_TODOS_MAX);
	for (k = 0; k < n; k++) {
		const char *note = v[k].note != NULL ? v[k].note : "";

		if ((unsigned)v[k].state >= STORE_TODO_STATES ||
		    v[k].text == NULL ||
		    !store_line_ok(
			v[k].text, strlen(v[k].text), STORE_TODO_CHARS, 0) ||
		    !store_line_ok(note, strlen(note), STORE_TODO_CHARS, 1))
			return store_fail(s, -SHIRO_ERR_INVAL,
			    "task %zu: a state, and a text (and a note) of "
			    "one line of at most %d characters",
			    k + 1, STORE_TODO_CHARS);
	}
	op.val = NULL;
	if (n > 0) {
		store_todo_encode(project, v, n, &val);
		op.val = &val;
	}
	ret = store_db_write(s, store_todo_fn, &op);
	buf_free(&val);
	return ret;
}

/* store_todo_get - project's task list (see store.h). */
int
store_todo_get(
    struct store *s, const char *project, struct store_todo **vp, size_t *np)
{
	unsigned char pk[STORE_PKEY];
	MDB_val k = {STORE_PKEY, pk}, v;
	MDB_txn *txn;
	int rc, ret;

	*vp = NULL;
	*np = 0;
	if ((ret = store_check(s, 0)) != 0 ||
	    (ret = store_pkey(s, project, pk)) != 0 ||
	    (ret = store_db_read(s, &txn)) != 0)
		return ret;
	rc = mdb_get(txn, s->db_todos, &k, &v);
	if (rc == 0)
		ret = store_todo_decode(s, &v, project, vp, np);
	else if (rc != MDB_NOTFOUND)
		ret = store_fail(
		    s, store_db_err(rc), "todos: %s", mdb_strerror(rc));
	mdb_txn_abort(txn);
	return ret;
}

/* State records live in the meta database under this prefix, so that a
 * state key can never name one of meta's own records. */
#define STORE_STATE_PREFIX "state/"

/* One put (val != NULL) or delete of a state record. */
struct store_state_op {
	const char *key; /* with its prefix */
	const void *val;
	size_t len;
};

/* store_state_key - key with its prefix into kb (STORE_KV_KEY_MAX + 1
 * bytes); 0, or INVAL for an empty or too long key. */
static int
store_state_key(struct store *s, const char *key, char *kb)
{
	size_t n = key != NULL ? strlen(key) : 0;
	size_t pl = sizeof(STORE_STATE_PREFIX) - 1;

	if (n == 0 || n + pl > STORE_KV_KEY_MAX)
		return store_fail(s, -SHIRO_ERR_INVAL, "bad state key");
	memcpy(kb, STORE_STATE_PREFIX, pl);
	memcpy(kb + pl, key, n + 1);
	return 0;
}

/* store_state_fn - do one op in the transaction. */
static int
store_state_fn(struct store *s, MDB_txn *txn, void *arg)
{
	struct store_state_op *op = arg;
	MDB_val k = {strlen(op->key), (void *)op->key};
	MDB_val v = {op->len, (void *)op->val};
	int rc;

	if (op->val != NULL)
		rc = mdb_put(txn, s->db_meta, &k, &v, 0);
	else
		rc = mdb_del(txn, s->db_meta, &k, NULL);
	if (rc == MDB_MAP_FULL)
		return -SHIRO_ERR_AGAIN;
	if (rc == MDB_NOTFOUND)
		return -SHIRO_ERR_NOENT;
	if (rc != 0)
		return store_fail(
		    s, store_db_err(rc), "state: %s", mdb_strerror(rc));
	return 0;
}

/* store_state_put - set a state record, durably. */
int
store_state_put(struct store *s, const char *key, const void *val, size_t len)
{
	struct store_state_op op;
	char kb[STORE_KV_KEY_MAX + 1];
	int ret;

	if ((ret = store_check(s, 1)) != 0 ||
	    (ret = store_state_key(s, key, kb)) != 0)
		return ret;
	if (len > STORE_STATE_VALUE_MAX)
		return store_fail(
		    s, -SHIRO_ERR_TOOBIG, "state value too large");
	op.key = kb;
	op.val = val != NULL ? val : "";
	op.len = len;
	return store_db_write(s, store_state_fn, &op);
}

/* store_state_del - remove a state record, durably. */
int
store_state_del(struct store *s, const char *key)
{
	struct store_state_op op;
	char kb[STORE_KV_KEY_MAX + 1];
	int ret;

	if ((ret = store_check(s, 1)) != 0 ||
	    (ret = store_state_key(s, key, kb)) != 0)
		return ret;
	op.key = kb;
	op.val = NULL;
	op.len = 0;
	return store_db_write(s, store_state_fn, &op);
}

/* store_state_get - a copy of a state record's value. */
int
store_state_get(struct store *s, const char *key, char **valp, size_t *lenp)
{
	MDB_txn *txn;
	MDB_val k, v;
	char kb[STORE_KV_KEY_MAX + 1];
	int rc, ret;

	*valp = NULL;
	if ((ret = store_check(s, 0)) != 0 ||
	    (ret = store_state_key(s, key, kb)) != 0)
		return ret;
	if ((ret = store_db_read(s, &txn)) != 0)
		return ret;
	k.mv_size = strlen(kb);
	k.mv_data = kb;
	rc = mdb_get(txn, s->db_meta, &k, &v);
	if (rc == 0) {
		*valp = xmalloc(v.mv_size + 1);
		memcpy(*valp, v.mv_data, v.mv_size);
		(*valp)[v.mv_size] = '\0';
		if (lenp != NULL)
			*lenp = v.mv_size;
	}
	mdb_txn_abort(txn);
	if (rc == MDB_NOTFOUND)
		return -SHIRO_ERR_NOENT;
	if (rc != 0)
		return store_fail(
		    s, store_db_err(rc), "state: %s", mdb_strerror(rc));
	return 0;
}

/* Usage records live in the meta database under this prefix. */
#define STORE_USAGE_PREFIX "usage/"

/* store_usage_key - "usage/PROVIDER/MODEL" of u into kb; its length, or
 * 0 when a name is empty or too long. */
static size_t
store_usage_key(const struct store_usage *u, char *kb, size_t kbsize)
{
	int n;

	if (u->provider[0] == '\0' || strchr(u->provider, '/') != NULL)
		return 0;
	n = snprintf(kb, kbsize, STORE_USAGE_PREFIX "%s/%s", u->provider,
	    u->model[0] ? u->model : "-");
	return n > 0 && (size_t)n < kbsize ? (size_t)n : 0;
}

/* store_usage_parse - the counters of a record's value; 0 or CORRUPT. */
static int
store_usage_parse(const void *val, size_t len, struct store_usage *u)
{
	char text[160];
	unsigned long long v[5];

	if (len >= sizeof(text))
		return -SHIRO_ERR_CORRUPT;
	memcpy(text, val, len);
	text[len] = '\0';
	if (sscanf(text, "%llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
		&v[4]) != 5)
		return -SHIRO_ERR_CORRUPT;
	u->input = v[0];
	u->output = v[1];
	u->cache_read = v[2];
	u->cache_write = v[3];
	u->calls = v[4];
	return 0;
}

/* The records of one store_usage_add. */
struct store_usage_op {
	const struct store_usage *v;
	size_t n;
};

/* store_usage_fn - add each record's counters to what is stored. */
static int
store_usage_fn(struct store *s, MDB_txn *txn, void *arg)
{
	struct store_usage_op *op = arg;
	struct store_usage have;
	char kb[STORE_KV_KEY_MAX + 1], vb[160];
	MDB_val k, v;
	size_t i, kl;
	int rc, vl;

	for (i = 0; i < op->n; i++) {
		const struct store_usage *u = &op->v[i];

		kl = store_usage_key(u, kb, sizeof(kb));
		if (kl == 0)
			return store_fail(s, -SHIRO_ERR_INVAL, "bad usage key");
		k.mv_size = kl;
		k.mv_data = kb;
		memset(&have, 0, sizeof(have));
		rc = mdb_get(txn, s->db_meta, &k, &v);
		if (rc == 0 &&
		    store_usage_parse(v.mv_data, v.mv_size, &have) != 0)
			return store_fail(s, -SHIRO_ERR_CORRUPT,
			    "usage record %s does not read", kb);
		if (rc != 0 && rc != MDB_NOTFOUND)
			return store_fail(
			    s, store_db_err(rc), "usage: %s", mdb_strerror(rc));
		vl = snprintf(vb, sizeof(vb), "%llu %llu %llu %llu %llu",
		    (unsigned long long)(have.input + u->input),
		    (unsigned long long)(have.output + u->output),
		    (unsigned long long)(have.cache_read + u->cache_read),
		    (unsigned long long)(have.cache_write + u->cache_write),
		    (unsigned long long)(have.calls + u->calls));
		v.mv_size = (size_t)vl;
		v.mv_data = vb;
		rc = mdb_put(txn, s->db_meta, &k, &v, 0);
		if (rc == MDB_MAP_FULL)
			return -SHIRO_ERR_AGAIN;
		if (rc != 0)
			return store_fail(
			    s, store_db_err(rc), "usage: %s", mdb_strerror(rc));
	}
	return 0;
}

/* store_usage_add - add counters to the usage records, durably. */
int
store_usage_add(struct store *s, const struct store_usage *v, size_t n)
{
	struct store_usage_op op = {v, n};
	int ret;

	if ((ret = store_check(s, 1)) != 0)
		return ret;
	if (n == 0)
		return 0;
	return store_db_write(s, store_usage_fn, &op);
}

/* store_usage_list - every usage record, in key order. */
int
store_usage_list(struct store *s, struct store_usage **vp, size_t *np)
{
	static const char prefix[] = STORE_USAGE_PREFIX;
	struct store_usage *v = NULL, *u;
	size_t n = 0, cap = 0, pl = sizeof(prefix) - 1;
	MDB_txn *txn;
	MDB_cursor *cur = NULL;
	MDB_val k, val;
	const char *slash;
	int rc, ret;

	*vp = NULL;
	*np = 0;
	if ((ret = store_check(s, 0)) != 0)
		return ret;
	if ((ret = store_db_read(s, &txn)) != 0)
		return ret;
	k.mv_size = pl;
	k.mv_data = (void *)prefix;
	rc = mdb_cursor_open(txn, s->db_meta, &cur);
	if (rc == 0)
		rc = mdb_cursor_get(cur, &k, &val, MDB_SET_RANGE);
	while (
	    rc == 0 && k.mv_size > pl && memcmp(k.mv_data, prefix, pl) == 0) {
		const char *name = (const char *)k.mv_data + pl;
		size_t nl = k.mv_size - pl;

		if (n == cap) {
			cap = cap ? 2 * cap : 8;
			v = xreallocarray(v, cap, sizeof(*v));
		}
		u = &v[n];
		memset(u, 0, sizeof(*u));
		slash = memchr(name, '/', nl);
		if (slash == NULL ||
		    (size_t)(slash - name) >= sizeof(u->provider) ||
		    nl - (size_t)(slash - name) - 1 >= sizeof(u->model) ||
		    store_usage_parse(val.mv_data, val.mv_size, u) != 0) {
			ret = store_fail(s, -SHIRO_ERR_CORRUPT,
			    "a usage record does not read");
			break;
		}
		memcpy(u->provider, name, (size_t)(slash - name));
		memcpy(u->model, slash + 1, nl - (size_t)(slash - name) - 1);
		n++;
		rc = mdb_cursor_get(cur, &k, &val, MDB_NEXT);
	}
	if (ret == 0 && rc != 0 && rc != MDB_NOTFOUND)
		ret = store_fail(
		    s, store_db_err(rc), "usage: %s", mdb_strerror(rc));
	if (cur != NULL)
		mdb_cursor_close(cur);
	mdb_txn_abort(txn);
	if (ret != 0) {
		free(v);
		return ret;
	}
	*vp = v;
	*np = n;
	return 0;
}
