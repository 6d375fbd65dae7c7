/*
 * notes.c - project memory and the task list (see notes.h).
 *
 * What the model sends to these tools is untrusted like the rest of its
 * reply: every argument is checked for its type and size before the
 * store is touched, text is made one line (runs of white space and
 * control characters become one space), and a note that holds something
 * the code now contradicts is answered by the line the state carries:
 * trust the notes, but verify.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "proto/buf.h"
#include "proto/err.h"
#include "proto/log.h"
#include "proto/utf8.h"
#include "proto/xmalloc.h"

#include "broker.h"
#include "notes.h"
#include "out.h"
#include "request.h"

/* The width of the task list's progress bar, in characters. */
#define NOTES_BAR 24

struct notes_turn {
	struct broker *b;
	char *project; /* NULL: the turn has none */
	const char *why; /* ... and why */
	int rendered; /* state holds the turn's state */
	struct buf state;
	int changed; /* todo_write ran during the turn */
	struct buf tasks; /* the list as it left it */
};

/* notes_project - canonical text of a working directory (see notes.h). */
int
notes_project(const char *cwd, char **projectp, const char **whyp)
{
	struct buf out = BUF_INIT;
	const char *p = cwd, *end;
	size_t len;

	*projectp = NULL;
	*whyp = "";
	if (cwd == NULL || cwd[0] != '/') {
		*whyp = "it is not an absolute path";
		return -SHIRO_ERR_INVAL;
	}
	while (*p != '\0') {
		while (*p == '/')
			p++;
		end = strchr(p, '/');
		len = end != NULL ? (size_t)(end - p) : strlen(p);
		if (len == 2 && p[0] == '.' && p[1] == '.') {
			buf_free(&out);
			*whyp = "it has a \"..\" part";
			return -SHIRO_ERR_INVAL;
		}
		if (len > 0 && !(len == 1 && p[0] == '.')) {
			buf_addc(&out, '/');
			buf_add(&out, p, len);
		}
		p += len;
	}
	if (out.len == 0)
		buf_addc(&out, '/');
	if (out.len > STORE_PROJECT_MAX) {
		buf_free(&out);
		*whyp = "it is longer than 4096 bytes";
		return -SHIRO_ERR_INVAL;
	}
	*projectp = buf_steal(&out, NULL);
	return 0;
}

/* notes_turn_new - the notes of a turn (see notes.h). */
struct notes_turn *
notes_turn_new(struct broker *b, const char *cwd)
{
	struct notes_turn *nt = xcalloc(1, sizeof(*nt));

	nt->b = b;
	nt->why = "the client that asked for it sent no working directory";
	if (cwd != NULL && notes_project(cwd, &nt->project, &nt->why) != 0)
		log_info(
		    "a turn's working directory is no project (%s)", nt->why);
	return nt;
}

/* notes_turn_destroy - free *ntp. */
void
notes_turn_destroy(struct notes_turn **ntp)
{
	struct notes_turn *nt = *ntp;

	if (nt == NULL)
		return;
	free(nt->project);
	buf_free(&nt->state);
	buf_free(&nt->tasks);
	free(nt);
	*ntp = NULL;
}

/* notes_now_ms - the wall clock in ms, for a note's date. */
static int64_t
notes_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* notes_flatten - s as one line into out: every run of white space and
 * control characters one space, none at either end. */
static void
notes_flatten(const char *s, size_t len, struct buf *out)
{
	size_t k;
	int gap = 0;

	buf_reset(out);
	buf_add(out, "", 0);
	for (k = 0; k < len; k++) {
		unsigned char c = (unsigned char)s[k];

		if (c <= 0x20 || c == 0x7f) {
			gap = out->len > 0;
			continue;
		}
		if (gap)
			buf_addc(out, ' ');
		gap = 0;
		buf_addc(out, (char)c);
	}
}

/* notes_lower - c with ASCII letters made lower case. */
static unsigned char
notes_lower(unsigned char c)
{
	return c >= 'A' && c <= 'Z' ? (unsigned char)(c - 'A' + 'a') : c;
}

/* notes_contains - whether needle occurs in hay, ASCII letters in any
 * case. */
static int
notes_contains(const char *hay, size_t hlen, const char *needle, size_t nlen)
{
	size_t k, j;

	if (nlen > hlen)
		return 0;
	for (k = 0; k + nlen <= hlen; k++) {
		for (j = 0; j < nlen; j++)
			if (notes_lower((unsigned char)hay[k + j]) !=
			    notes_lower((unsigned char)needle[j]))
				break;
		if (j == nlen)
			return 1;
	}
	return 0;
}

/* notes_rank - qsort order of the state: most hits first, then newest. */
static int
notes_rank(const void *a, const void *b)
{
	const struct store_note *x = a, *y = b;

	if (x->hits != y->hits)
		return x->hits > y->hits ? -1 : 1;
	if (x->seq != y->seq)
		return x->seq > y->seq ? -1 : 1;
	return 0;
}

/* notes_store_failed - a write the store refused: say so in text, and
 * stop shirod when the store can no longer be trusted. */
static void
notes_store_failed(struct broker *b, const char *tool, int rc, struct buf *text)
{
	buf_printf(text, "%s: the store refused it (%s): %s", tool, err_str(rc),
	    store_errmsg(b->store));
	log_warnx("%s: the store refused a write (%s): %s", tool, err_str(rc),
	    store_errmsg(b->store));
	if (store_poisoned(b->store))
		broker_fail(b, "the store refused a write of %s: %s", tool,
		    store_errmsg(b->store));
}

/* notes_ready - whether the turn has a project; else the error in text. */
static int
notes_ready(const struct notes_turn *nt, const char *tool, struct buf *text)
{
	if (nt != NULL && nt->project != NULL)
		return 1;
	buf_printf(text,
	    "%s: this turn has no project, so it keeps no notes or tasks: "
	    "%s",
	    tool,
	    nt != NULL ? nt->why
		       : "the client that asked for it sent no working "
			 "directory");
	return 0;
}

/* notes_keys_ok - in has only the keys named in keys (NULL-ended);
 * else the error in text. */
static int
notes_keys_ok(
    json_t *in, const char *const *keys, const char *tool, struct buf *text)
{
	const char *key;
	json_t *v;
	size_t k;

	json_object_foreach(in, key, v)
	{
		for (k = 0; keys[k] != NULL; k++)
			if (strcmp(key, keys[k]) == 0)
				break;
		if (keys[k] == NULL) {
			buf_printf(
			    text, "%s: unknown argument \"%.64s\"", tool, key);
			return 0;
		}
	}
	return 1;
}

/* notes_str_arg - the string argument key of in, flattened into out;
 * 1, or 0 with the error in text (missing, not a string, empty, or more
 * than max characters). */
static int
notes_str_arg(json_t *in, const char *key, size_t max, const char *tool,
    struct buf *out, struct buf *text)
{
	json_t *v = json_object_get(in, key);
	size_t n;

	if (v == NULL || !json_is_string(v)) {
		buf_printf(text, "%s: %s must be a string", tool, key);
		return 0;
	}
	notes_flatten(json_string_value(v), json_string_length(v), out);
	if (out->len == 0) {
		buf_printf(text, "%s: %s is empty", tool, key);
		return 0;
	}
	n = utf8_count(out->data, out->len);
	if (n > max) {
		buf_printf(text,
		    "%s: %s is %zu characters, at most %zu are kept: say it "
		    "in fewer words",
		    tool, key, n, max);
		return 0;
	}
	return 1;
}

/* notes_remember - remember(kind, text): keep a note. */
int
notes_remember(struct notes_turn *nt, json_t *in, struct buf *text)
{
	static const char *const keys[] = {"kind", "text", NULL};
	struct buf note = BUF_INIT;
	json_t *kv = json_object_get(in, "kind");
	uint64_t seq = 0;
	int kind, rc, ret = -1;

	if (!notes_ready(nt, "remember", text) ||
	    !notes_keys_ok(in, keys, "remember", text))
		goto out;
	kind = json_is_string(kv) ? store_note_kind_parse(json_string_value(kv))
				  : -1;
	if (kind < 0) {
		buf_adds(text,
		    "remember: kind must be one of fact, decision, "
		    "gotcha, command");
		goto out;
	}
	if (!notes_str_arg(
		in, "text", STORE_NOTE_CHARS, "remember", &note, text))
		goto out;
	rc = store_note_add(nt->b->store, nt->project,
	    (enum store_note_kind)kind, note.data, note.len, notes_now_ms(),
	    &seq);
	if (rc == -SHIRO_ERR_EXIST) {
		buf_printf(text,
		    "remember: the project has this note already (note %llu); "
		    "nothing was added",
		    (unsigned long long)seq);
	} else if (rc == -SHIRO_ERR_NOSPC) {
		buf_printf(text,
		    "remember: the project has %d notes, the most it keeps: "
		    "forget one that is wrong or stale first",
		    STORE_NOTES_MAX);
	} else if (rc != 0) {
		notes_store_failed(nt->b, "remember", rc, text);
	} else {
		buf_printf(text,
		    "Kept as note %llu (%s): ", (unsigned long long)seq,
		    store_note_kind_name(kind));
		buf_add(text, note.data, note.len);
		ret = 0;
	}
out:
	buf_free(&note);
	return ret;
}

/* notes_terms - recall's terms (a string, or an array of strings) as
 * one line of words in words, and how many in *np; 1, or 0 with the
 * error in text. */
static int
notes_terms(json_t *in, struct buf *words, size_t *np, struct buf *text)
{
	json_t *v = json_object_get(in, "terms"), *x;
	struct buf all = BUF_INIT;
	size_t k, len;
	int ok = 1;

	*np = 0;
	if (json_is_string(v)) {
		buf_add(&all, json_string_value(v), json_string_length(v));
	} else if (json_is_array(v)) {
		json_array_foreach(v, k, x)
		{
			if (!json_is_string(x)) {
				ok = 0;
				break;
			}
			buf_addc(&all, ' ');
			buf_add(
			    &all, json_string_value(x), json_string_length(x));
		}
	} else {
		ok = 0;
	}
	if (!ok) {
		buf_adds(text,
		    "recall: terms must be a string of words, as "
		    "{\"terms\": \"migration seed order\"}");
		goto out;
	}
	notes_flatten(all.data != NULL ? all.data : "", all.len, words);
	for (k = 0; k < words->len; k += len + 1) {
		len = strcspn(words->data + k, " ");
		if (++*np > NOTES_TERMS_MAX || len > 200) {
			buf_printf(text,
			    "recall: at most %d words of at most 200 bytes",
			    NOTES_TERMS_MAX);
			ok = 0;
			goto out;
		}
	}
	if (*np == 0) {
		buf_adds(text,
		    "recall: terms is empty; the notes used most "
		    "come with every turn already");
		ok = 0;
	}
out:
	buf_free(&all);
	return ok;
}

/* notes_match - whether text holds every word of words (one line of
 * words separated by single spaces), ASCII letters in any case. */
static int
notes_match(const char *text, size_t tlen, const struct buf *words)
{
	size_t k, len;

	for (k = 0; k < words->len; k += len + 1) {
		len = strcspn(words->data + k, " ");
		if (!notes_contains(text, tlen, words->data + k, len))
			return 0;
	}
	return 1;
}

/* notes_line - one note as the model and the tools show it. */
static void
notes_line(struct buf *out, const struct store_note *n)
{
	buf_printf(out, "- (%s) ", store_note_kind_name(n->kind));
	buf_add(out, n->text, n->len);
	buf_addc(out, '\n');
}

/* notes_recall - recall(terms): the newest notes holding every term. */
int
notes_recall(struct notes_turn *nt, json_t *in, struct buf *text)
{
	static const char *const keys[] = {"terms", NULL};
	struct buf words = BUF_INIT;
	struct store_note *v = NULL;
	uint64_t seqs[NOTES_RECALL_MAX];
	size_t pick[NOTES_RECALL_MAX];
	size_t n = 0, nterms, k, found = 0, shown = 0;
	int rc, ret = -1;

	if (!notes_ready(nt, "recall", text) ||
	    !notes_keys_ok(in, keys, "recall", text) ||
	    !notes_terms(in, &words, &nterms, text))
		goto out;
	rc = store_note_list(nt->b->store, nt->project, &v, &n, NULL);
	if (rc != 0) {
		buf_printf(text, "recall: the notes cannot be read (%s): %s",
		    err_str(rc), store_errmsg(nt->b->store));
		goto out;
	}
	/* Newest first: the list is oldest first. */
	for (k = n; k-- > 0;) {
		if (!notes_match(v[k].text, v[k].len, &words))
			continue;
		if (shown < NOTES_RECALL_MAX) {
			seqs[shown] = v[k].seq;
			pick[shown++] = k;
		}
		found++;
	}
	ret = 0;
	if (found == 0) {
		buf_printf(text,
		    "No note of this project holds every one of: %s (it has "
		    "%zu notes)",
		    words.data, n);
		goto out;
	}
	buf_printf(text,
	    "%zu note%s hold%s every one of: %s; newest first%s:\n", found,
	    found == 1 ? "" : "s", found == 1 ? "s" : "", words.data,
	    found > shown ? ", the 15 newest" : "");
	for (k = 0; k < shown; k++)
		notes_line(text, &v[pick[k]]);
	rc = store_note_hit(nt->b->store, nt->project, seqs, shown);
	if (rc != 0)
		notes_store_failed(
		    nt->b, "recall (counting its hits)", rc, text);
out:
	store_notes_free(v, n);
	buf_free(&words);
	return ret;
}

/* notes_forget - forget(substring): remove the notes that contain it
 * (only those equal to it, when some are), at most NOTES_FORGET_MAX. */
int
notes_forget(struct notes_turn *nt, json_t *in, struct buf *text)
{
	static const char *const keys[] = {"substring", NULL};
	struct buf sub = BUF_INIT;
	struct store_note *v = NULL;
	uint64_t seqs[NOTES_FORGET_MAX];
	size_t n = 0, k, found = 0, exact = 0, ndel = 0, take = 0;
	int rc, ret = -1, whole;

	if (!notes_ready(nt, "forget", text) ||
	    !notes_keys_ok(in, keys, "forget", text) ||
	    !notes_str_arg(
		in, "substring", STORE_NOTE_CHARS, "forget", &sub, text))
		goto out;
	rc = store_note_list(nt->b->store, nt->project, &v, &n, NULL);
	if (rc != 0) {
		buf_printf(text, "forget: the notes cannot be read (%s): %s",
		    err_str(rc), store_errmsg(nt->b->store));
		goto out;
	}
	for (k = 0; k < n; k++) {
		if (!notes_contains(v[k].text, v[k].len, sub.data, sub.len))
			continue;
		found++;
		exact += v[k].len == sub.len;
	}
	whole = exact > 0;
	if (found == 0) {
		buf_adds(text, "forget: no note of this project contains \"");
		buf_add(text, sub.data, sub.len);
		buf_adds(text, "\"; nothing was removed");
		goto out;
	}
	if ((whole ? exact : found) > NOTES_FORGET_MAX) {
		buf_printf(text,
		    "forget: %zu notes contain it, more than %d; nothing was "
		    "removed. Give more of the one note to remove. Some of "
		    "them:\n",
		    whole ? exact : found, NOTES_FORGET_MAX);
		for (k = 0; k < n && take < NOTES_FORGET_MAX; k++)
			if (notes_contains(
				v[k].text, v[k].len, sub.data, sub.len) &&
			    (!whole || v[k].len == sub.len)) {
				notes_line(text, &v[k]);
				take++;
			}
		goto out;
	}
	for (k = 0; k < n; k++)
		if (notes_contains(v[k].text, v[k].len, sub.data, sub.len) &&
		    (!whole || v[k].len == sub.len))
			seqs[take++] = v[k].seq;
	rc = store_note_del(nt->b->store, nt->project, seqs, take, &ndel);
	if (rc != 0) {
		notes_store_failed(nt->b, "forget", rc, text);
		goto out;
	}
	buf_printf(text, "Removed %zu note%s:\n", ndel, ndel == 1 ? "" : "s");
	for (k = 0; k < n; k++)
		if (notes_contains(v[k].text, v[k].len, sub.data, sub.len) &&
		    (!whole || v[k].len == sub.len))
			notes_line(text, &v[k]);
	ret = 0;
out:
	store_notes_free(v, n);
	buf_free(&sub);
	return ret;
}

/* notes_has_note - whether task t has a note. */
static int
notes_has_note(const struct store_todo *t)
{
	return t->note != NULL && t->note[0] != '\0';
}

/* notes_tasks_render - a task list as the model and the clients see it:
 * the progress bar, then one line per task. */
static void
notes_tasks_render(const struct store_todo *v, size_t n, struct buf *out)
{
	static const char mark[STORE_TODO_STATES] = {' ', '~', 'x', '!'};
	size_t k, done = 0, blocked = 0, fill;

	for (k = 0; k < n; k++) {
		done += v[k].state == STORE_TODO_DONE;
		blocked += v[k].state == STORE_TODO_BLOCKED;
	}
	fill = n > 0 ? done * NOTES_BAR / n : 0;
	buf_adds(out, "tasks ");
	for (k = 0; k < NOTES_BAR; k++)
		buf_addc(out, k < fill ? '#' : '.');
	buf_printf(out, " %zu/%zu", done, n);
	if (blocked > 0)
		buf_printf(out, ", %zu blocked", blocked);
	buf_addc(out, '\n');
	for (k = 0; k < n; k++) {
		buf_printf(out, "[%c] %s", mark[v[k].state], v[k].text);
		if (notes_has_note(&v[k]))
			buf_printf(out, " (%s)", v[k].note);
		buf_addc(out, '\n');
	}
}

/* notes_tasks_warn - the warnings of a task list into out; how many. */
static int
notes_tasks_warn(const struct store_todo *v, size_t n, struct buf *out)
{
	size_t k, doing = 0, pending = 0, bare = 0;
	int nw = 0;

	for (k = 0; k < n; k++) {
		doing += v[k].state == STORE_TODO_IN_PROGRESS;
		pending += v[k].state == STORE_TODO_PENDING;
		bare +=
		    v[k].state == STORE_TODO_BLOCKED && !notes_has_note(&v[k]);
	}
	if (doing > 1) {
		buf_printf(out,
		    "- %zu tasks are in_progress: work on one at a time and "
		    "set the others back to pending\n",
		    doing);
		nw++;
	}
	if (doing == 0 && pending > 0) {
		buf_printf(out,
		    "- nothing is in_progress while %zu task%s %s pending: "
		    "mark the one you do next in_progress\n",
		    pending, pending == 1 ? "" : "s",
		    pending == 1 ? "is" : "are");
		nw++;
	}
	if (bare > 0) {
		buf_adds(out,
		    "- blocked without a note saying what blocks "
		    "it:");
		for (k = 0; k < n; k++)
			if (v[k].state == STORE_TODO_BLOCKED &&
			    !notes_has_note(&v[k]))
				buf_printf(out, " task %zu", k + 1);
		buf_addc(out, '\n');
		nw++;
	}
	return nw;
}

/* notes_tasks_doc - a task list into map: project, todos [{state, text,
 * note}], done, total, blocked, and text, rendered. */
static void
notes_tasks_doc(struct msg_val *map, const char *project,
    const struct store_todo *v, size_t n)
{
	struct msg_val *arr, *t;
	struct buf r = BUF_INIT;
	size_t k, done = 0, blocked = 0;

	msg_val_set_str(map, "project", project);
	arr = msg_val_set_arr(map, "todos");
	for (k = 0; k < n; k++) {
		t = msg_val_add_map(arr);
		msg_val_set_str(t, "state", store_todo_state_name(v[k].state));
		msg_val_set_str(t, "text", v[k].text);
		if (notes_has_note(&v[k]))
			msg_val_set_str(t, "note", v[k].note);
		done += v[k].state == STORE_TODO_DONE;
		blocked += v[k].state == STORE_TODO_BLOCKED;
	}
	msg_val_set_int(map, "done", (int64_t)done);
	msg_val_set_int(map, "total", (int64_t)n);
	msg_val_set_int(map, "blocked", (int64_t)blocked);
	if (n > 0)
		notes_tasks_render(v, n, &r);
	msg_val_set_strn(map, "text", r.data != NULL ? r.data : "", r.len);
	buf_free(&r);
}

/* notes_todo_item - task k of todo_write's list into t (strings the
 * caller frees); 1, or 0 with the error in text. */
static int
notes_todo_item(json_t *x, size_t k, struct store_todo *t, struct buf *text)
{
	static const char *const keys[] = {"text", "state", "note", NULL};
	json_t *st = json_object_get(x, "state"),
	       *nv = json_object_get(x, "note");
	struct buf s = BUF_INIT;
	char who[48];
	size_t chars;
	int state, ok = 0;

	snprintf(who, sizeof(who), "todo_write: task %zu", k + 1);
	if (!json_is_object(x)) {
		buf_printf(text,
		    "%s is not an object {\"text\", \"state\", \"note\"}", who);
		return 0;
	}
	if (!notes_keys_ok(x, keys, who, text))
		return 0;
	state = json_is_string(st)
	    ? store_todo_state_parse(json_string_value(st))
	    : -1;
	if (state < 0) {
		buf_printf(text,
		    "%s: state must be one of pending, in_progress, done, "
		    "blocked",
		    who);
		return 0;
	}
	t->state = (enum store_todo_state)state;
	if (!notes_str_arg(x, "text", STORE_TODO_CHARS, who, &s, text))
		goto out;
	t->text = buf_steal(&s, NULL);
	if (nv != NULL && !json_is_string(nv)) {
		buf_printf(text, "%s: note must be a string", who);
		goto out;
	}
	if (nv != NULL)
		notes_flatten(
		    json_string_value(nv), json_string_length(nv), &s);
	chars = s.len > 0 ? utf8_count(s.data, s.len) : 0;
	if (chars > STORE_TODO_CHARS) {
		buf_printf(text,
		    "%s: note is %zu characters, at most %d are kept: say it "
		    "in fewer words",
		    who, chars, STORE_TODO_CHARS);
		goto out;
	}
	t->note = s.len > 0 ? buf_steal(&s, NULL) : xstrdup("");
	ok = 1;
out:
	buf_free(&s);
	return ok;
}

/* notes_todos_event - every attached client hears the new list: its
 * text rendered, and as data. */
static void
notes_todos_event(
    struct broker *b, const char *project, const struct store_todo *v, size_t n)
{
	struct msg *ev = msg_new(MSG_EVENT);
	struct msg_val *data = msg_set_map(ev, "data");

	msg_set_str(ev, "ev", "todos");
	notes_tasks_doc(data, project, v, n);
	msg_set_str(ev, "text", msg_val_str(data, "text"));
	out_publish(b, &ev);
}

/* notes_todo_write - todo_write(todos): replace the task list. */
int
notes_todo_write(struct notes_turn *nt, json_t *in, struct buf *text)
{
	static const char *const keys[] = {"todos", NULL};
	json_t *list = json_object_get(in, "todos");
	struct store_todo *v = NULL;
	size_t n = 0, k;
	int rc, ret = -1;

	if (!notes_ready(nt, "todo_write", text) ||
	    !notes_keys_ok(in, keys, "todo_write", text))
		return -1;
	if (!json_is_array(list)) {
		buf_adds(text,
		    "todo_write: todos must be the whole list, as "
		    "{\"todos\": [{\"text\": \"add a test\", "
		    "\"state\": \"pending\"}]}");
		return -1;
	}
	if (json_array_size(list) > STORE_TODOS_MAX) {
		buf_printf(text, "todo_write: %zu tasks, at most %d are kept",
		    json_array_size(list), STORE_TODOS_MAX);
		return -1;
	}
	v = xcalloc(json_array_size(list) + 1, sizeof(*v));
	for (k = 0; k < json_array_size(list); k++, n++)
		if (!notes_todo_item(json_array_get(list, k), k, &v[k], text))
			goto out;
	rc = store_todo_put(nt->b->store, nt->project, v, n);
	if (rc != 0) {
		notes_store_failed(nt->b, "todo_write", rc, text);
		goto out;
	}
	nt->changed = 1;
	buf_reset(&nt->tasks);
	if (n == 0) {
		buf_adds(text, "The task list is empty now.");
		buf_adds(&nt->tasks, "(empty)\n");
	} else {
		notes_tasks_render(v, n, &nt->tasks);
		buf_printf(text, "Saved %zu task%s:\n", n, n == 1 ? "" : "s");
		buf_add(text, nt->tasks.data, nt->tasks.len);
		{
			struct buf w = BUF_INIT;

			if (notes_tasks_warn(v, n, &w) > 0) {
				buf_adds(text, "Warnings:\n");
				buf_add(text, w.data, w.len);
			}
			buf_free(&w);
		}
	}
	notes_todos_event(nt->b, nt->project, v, n);
	ret = 0;
out:
	for (k = 0; k <= n && k < json_array_size(list); k++) {
		free(v[k].text);
		free(v[k].note);
	}
	free(v);
	return ret;
}

/* notes_state_notes - the notes section of the state into out. */
static void
notes_state_notes(struct notes_turn *nt, struct buf *out)
{
	struct store_note *v = NULL;
	size_t n = 0, nbad = 0, k;
	int rc;

	rc = store_note_list(nt->b->store, nt->project, &v, &n, &nbad);
	if (rc != 0) {
		log_warnx("the notes of %s cannot be read: %s", nt->project,
		    store_errmsg(nt->b->store));
		buf_adds(out,
		    "The notes on this project cannot be read now "
		    "(the store says why in shirod's log).\n\n");
		return;
	}
	if (nbad > 0)
		log_warnx("%zu notes of %s do not read; they are left as "
			  "they are",
		    nbad, nt->project);
	if (n > 0) {
		qsort(v, n, sizeof(*v), notes_rank);
		buf_printf(out,
		    "Notes on this project (%s) from earlier turns, the most "
		    "used first. Trust them, but verify anything that "
		    "contradicts what you see in the code now:\n",
		    nt->project);
		for (k = 0; k < n && k < NOTES_STATE_MAX; k++)
			notes_line(out, &v[k]);
		if (n > NOTES_STATE_MAX)
			buf_printf(out, "(%zu more: recall finds them)\n",
			    n - NOTES_STATE_MAX);
		buf_addc(out, '\n');
	}
	store_notes_free(v, n);
}

/* notes_turn_state - the turn's state (see notes.h). */
void
notes_turn_state(struct notes_turn *nt, struct buf *out)
{
	struct store_todo *v = NULL;
	size_t n = 0;
	int rc;

	if (nt == NULL)
		return;
	if (!nt->rendered && nt->project != NULL) {
		notes_state_notes(nt, &nt->state);
		rc = store_todo_get(nt->b->store, nt->project, &v, &n);
		if (rc != 0) {
			log_warnx("the task list of %s cannot be read: %s",
			    nt->project, store_errmsg(nt->b->store));
			buf_adds(&nt->state,
			    "Your task list for this project cannot be read "
			    "(it is damaged); todo_write makes a new one.\n\n");
		} else if (n > 0) {
			buf_adds(&nt->state,
			    "Your task list for this project, "
			    "as todo_write left it:\n");
			notes_tasks_render(v, n, &nt->state);
			buf_addc(&nt->state, '\n');
		}
		store_todos_free(v, n);
	}
	nt->rendered = 1;
	buf_add(out, nt->state.data, nt->state.len);
}

/* notes_turn_tail - the list as todo_write changed it (see notes.h). */
void
notes_turn_tail(const struct notes_turn *nt, struct msg_val *messages)
{
	const struct msg_val *last;
	struct msg_val *content;
	struct buf t = BUF_INIT;
	const char *role;

	if (nt == NULL || !nt->changed || messages->u.a.n == 0)
		return;
	last = messages->u.a.items[messages->u.a.n - 1];
	role = msg_val_str(last, "role");
	content = (struct msg_val *)msg_val_get(last, "content");
	if (role == NULL || strcmp(role, "user") != 0 || content == NULL ||
	    content->type != MSG_V_ARR)
		return;
	buf_adds(&t,
	    "Your task list now (todo_write changed it during this "
	    "turn; this replaces any list above):\n");
	buf_add(&t, nt->tasks.data, nt->tasks.len);
	(void)request_text_part(content, t.data, t.len, 0);
	buf_free(&t);
}

/* notes_date - a note's date as local "YYYY-MM-DD HH:MM" in d. */
static void
notes_date(int64_t ms, char *d, size_t size)
{
	time_t t = (time_t)(ms / 1000);
	struct tm tm;

	if (localtime_r(&t, &tm) == NULL ||
	    strftime(d, size, "%Y-%m-%d %H:%M", &tm) == 0)
		snprintf(d, size, "?");
}

/* notes_notes_doc - the notes of project into doc, as the state ranks
 * them; 0, or the store's error. */
static int
notes_notes_doc(struct broker *b, const char *project, struct msg_val *doc)
{
	struct store_note *v = NULL;
	struct msg_val *arr, *x;
	size_t n = 0, nbad = 0, k;
	char date[32];
	int rc;

	rc = store_note_list(b->store, project, &v, &n, &nbad);
	if (rc != 0)
		return rc;
	if (n > 1)
		qsort(v, n, sizeof(*v), notes_rank);
	msg_val_set_str(doc, "project", project);
	msg_val_set_int(doc, "count", (int64_t)n);
	msg_val_set_int(doc, "max", STORE_NOTES_MAX);
	msg_val_set_int(
	    doc, "shown", (int64_t)(n < NOTES_STATE_MAX ? n : NOTES_STATE_MAX));
	if (nbad > 0)
		msg_val_set_int(doc, "unreadable", (int64_t)nbad);
	arr = msg_val_set_arr(doc, "notes");
	for (k = 0; k < n; k++) {
		x = msg_val_add_map(arr);
		msg_val_set_int(x, "id", (int64_t)v[k].seq);
		msg_val_set_str(x, "kind", store_note_kind_name(v[k].kind));
		msg_val_set_int(x, "hits", (int64_t)v[k].hits);
		notes_date(v[k].date_ms, date, sizeof(date));
		msg_val_set_str(x, "date", date);
		msg_val_set_strn(x, "text", v[k].text, v[k].len);
	}
	store_notes_free(v, n);
	return 0;
}

/* notes_serve - NOTES {cwd, what} (see notes.h). */
void
notes_serve(struct broker *b, const struct msg_ident *from, const struct msg *m,
    uint64_t rid)
{
	const char *cwd = NULL, *what = "notes", *why;
	struct store_todo *v = NULL;
	struct msg_val *doc;
	struct msg *r;
	char *project = NULL;
	size_t n = 0;
	int rc;

	(void)msg_get_str(m, "cwd", &cwd, NULL);
	(void)msg_get_str(m, "what", &what, NULL);
	if (strcmp(what, "notes") != 0 && strcmp(what, "todos") != 0) {
		out_error(b, from, rid, "what",
		    "NOTES asks for \"notes\" or \"todos\", not \"%.32s\"",
		    what);
		return;
	}
	if (notes_project(cwd, &project, &why) != 0) {
		out_error(b, from, rid, "cwd",
		    "the working directory is no project: %s", why);
		return;
	}
	r = msg_new(MSG_REPLY);
	msg_set_int(r, "rid", (int64_t)rid);
	doc = msg_set_map(r, "doc");
	if (what[0] == 'n') {
		rc = notes_notes_doc(b, project, doc);
	} else {
		rc = store_todo_get(b->store, project, &v, &n);
		if (rc == 0)
			notes_tasks_doc(doc, project, v, n);
		store_todos_free(v, n);
	}
	if (rc != 0)
		out_error(b, from, rid, "store",
		    "the %s of %.200s cannot be read (%s): %s", what, project,
		    err_str(rc), store_errmsg(b->store));
	else
		(void)out_send_client(b, from, r);
	msg_destroy(&r);
	free(project);
}
