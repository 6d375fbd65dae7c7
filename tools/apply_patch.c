/* apply_patch - apply a unified diff to the workspace, all or nothing. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "proto/xmalloc.h"
#include "tools/vec.h"
#include "tools/tool.h"
#include "tools/ws.h"

#define APPLY_PATCH_FILES 100

struct apply_patch_line {
	const char *p;
	size_t n;
};

struct apply_patch_vec {
	struct apply_patch_line *v;
	size_t n, cap;
};

struct apply_patch_hunk {
	long old_start, old_count;
	struct apply_patch_vec old, new_;
	int new_no_nl;
};

struct apply_patch_file {
	char *old_path, *new_path; /* NULL for /dev/null */
	struct apply_patch_hunk *hunks;
	size_t nh;
};

struct apply_patch {
	struct apply_patch_file files[APPLY_PATCH_FILES];
	size_t nf;
};

/* apply_patch_push - append one line to v. */
static void
apply_patch_push(struct apply_patch_vec *v, const char *p, size_t n)
{
	if (v->n == v->cap) {
		v->cap = v->cap ? v->cap * 2 : 16;
		v->v = xreallocarray(v->v, v->cap, sizeof(*v->v));
	}
	v->v[v->n].p = p;
	v->v[v->n].n = n;
	v->n++;
}

/* apply_patch_free - release everything p holds. */
static void
apply_patch_free(struct apply_patch *p)
{
	size_t i, j;

	for (i = 0; i < p->nf; i++) {
		for (j = 0; j < p->files[i].nh; j++) {
			free(p->files[i].hunks[j].old.v);
			free(p->files[i].hunks[j].new_.v);
		}
		free(p->files[i].hunks);
		free(p->files[i].old_path);
		free(p->files[i].new_path);
	}
	p->nf = 0;
}

/* apply_patch_name - the path of a "--- " or "+++ " header line. */
static char *
apply_patch_name(const char *s, size_t n, const char *prefix)
{
	size_t i;

	for (i = 0; i < n && s[i] != '\t'; i++)
		;
	while (i > 0 && (s[i - 1] == ' ' || s[i - 1] == '\r'))
		i--;
	if (i == 9 && strncmp(s, "/dev/null", 9) == 0)
		return NULL;
	if (i > 2 && strncmp(s, prefix, 2) == 0)
		return xstrndup(s + 2, i - 2);
	return xstrndup(s, i);
}

/* apply_patch_next - the line at *pos of text (without '\n'). */
static int
apply_patch_next(
    const char *text, size_t len, size_t *pos, struct apply_patch_line *l)
{
	const char *nl;

	if (*pos >= len)
		return 0;
	l->p = text + *pos;
	nl = memchr(l->p, '\n', len - *pos);
	l->n = nl ? (size_t)(nl - l->p) : len - *pos;
	*pos += l->n + (nl != NULL);
	return 1;
}

/* apply_patch_parse - split a unified diff into files and hunks; an
 * error sentence in *why when it is not one. */
static int
apply_patch_parse(
    const char *text, size_t len, struct apply_patch *p, char **why)
{
	struct apply_patch_line l, peek;
	struct apply_patch_file *f = NULL;
	struct apply_patch_hunk *h = NULL;
	size_t pos = 0, save;
	char last = 0;

	while (apply_patch_next(text, len, &pos, &l)) {
		save = pos;
		if (l.n >= 4 && strncmp(l.p, "--- ", 4) == 0 &&
		    apply_patch_next(text, len, &save, &peek) && peek.n >= 4 &&
		    strncmp(peek.p, "+++ ", 4) == 0) {
			if (p->nf == APPLY_PATCH_FILES) {
				*why = xasprintf("more than %d files in one "
						 "patch",
				    APPLY_PATCH_FILES);
				return -1;
			}
			f = &p->files[p->nf++];
			memset(f, 0, sizeof(*f));
			f->old_path = apply_patch_name(l.p + 4, l.n - 4, "a/");
			f->new_path =
			    apply_patch_name(peek.p + 4, peek.n - 4, "b/");
			if (f->old_path == NULL && f->new_path == NULL) {
				*why = xstrdup("a file goes from /dev/null to "
					       "/dev/null");
				return -1;
			}
			h = NULL;
			pos = save;
			continue;
		}
		if (l.n >= 2 && strncmp(l.p, "@@", 2) == 0) {
			char *end;
			if (f == NULL) {
				*why = xstrdup("a hunk (@@) comes before any "
					       "---/+++ file header");
				return -1;
			}
			f->hunks = vec_room(f->hunks, f->nh, sizeof(*f->hunks));
			h = &f->hunks[f->nh++];
			memset(h, 0, sizeof(*h));
			h->old_start = -1;
			h->old_count = -1;
			if (l.n > 4 && l.p[3] == '-') {
				h->old_start = strtol(l.p + 4, &end, 10);
				h->old_count =
				    *end == ',' ? strtol(end + 1, NULL, 10) : 1;
			}
			last = 0;
			continue;
		}
		if (h == NULL)
			continue; /* "diff --git", "index" and other chatter */
		if (l.n > 0 && l.p[l.n - 1] == '\r')
			l.n--;
		if (l.n == 0 || l.p[0] == ' ') {
			apply_patch_push(
			    &h->old, l.p + (l.n > 0), l.n - (l.n > 0));
			apply_patch_push(
			    &h->new_, l.p + (l.n > 0), l.n - (l.n > 0));
			last = ' ';
		} else if (l.p[0] == '-') {
			apply_patch_push(&h->old, l.p + 1, l.n - 1);
			last = '-';
		} else if (l.p[0] == '+') {
			apply_patch_push(&h->new_, l.p + 1, l.n - 1);
			last = '+';
		} else if (l.p[0] == '\\') {
			if (last == '+' || last == ' ')
				h->new_no_nl = 1;
		} else {
			h = NULL; /* the hunk ended; chatter until the next */
		}
	}
	if (p->nf == 0) {
		*why =
		    xstrdup("no file headers (--- a/PATH, +++ b/PATH) found; "
			    "apply_patch takes a unified diff");
		return -1;
	}
	return 0;
}

/* apply_patch_eq - compare two lines, exactly or ignoring trailing
 * white space. */
static int
apply_patch_eq(const struct apply_patch_line *a,
    const struct apply_patch_line *b, int loose)
{
	size_t an = a->n, bn = b->n;

	if (loose) {
		while (an > 0 &&
		    (a->p[an - 1] == ' ' || a->p[an - 1] == '\t' ||
			a->p[an - 1] == '\r'))
			an--;
		while (bn > 0 &&
		    (b->p[bn - 1] == ' ' || b->p[bn - 1] == '\t' ||
			b->p[bn - 1] == '\r'))
			bn--;
	}
	return an == bn && memcmp(a->p, b->p, an) == 0;
}

/* apply_patch_at - nonzero when old matches lines at pos. */
static int
apply_patch_at(const struct apply_patch_vec *lines,
    const struct apply_patch_vec *old, size_t pos, int loose)
{
	size_t i;

	if (pos + old->n > lines->n)
		return 0;
	for (i = 0; i < old->n; i++)
		if (!apply_patch_eq(&lines->v[pos + i], &old->v[i], loose))
			return 0;
	return 1;
}

/* apply_patch_find - where the hunk applies at or after from, nearest
 * to want; -1 when nowhere. */
static long
apply_patch_find(const struct apply_patch_vec *lines,
    const struct apply_patch_vec *old, size_t from, size_t want)
{
	size_t d, maxd;
	int loose;

	if (want < from)
		want = from;
	maxd = (want > lines->n ? want : lines->n) + 1;
	for (loose = 0; loose < 2; loose++)
		for (d = 0; d <= maxd; d++) {
			if (want + d <= lines->n &&
			    apply_patch_at(lines, old, want + d, loose))
				return (long)(want + d);
			if (d > 0 && d <= want - from &&
			    apply_patch_at(lines, old, want - d, loose))
				return (long)(want - d);
		}
	return -1;
}

/* apply_patch_file - the new text of one file in out; an error
 * sentence in *why when a hunk does not apply. */
static int
apply_patch_file(struct apply_patch_file *f, const struct buf *old,
    struct buf *out, char **why)
{
	struct apply_patch_vec lines = {0}, res = {0};
	struct apply_patch_line l;
	size_t pos = 0, cursor = 0, i, k;
	long at, start = 0, offset = 0, want;
	int final_nl = old->len == 0 || old->data[old->len - 1] == '\n';
	int r = 0;

	while (apply_patch_next(old->data, old->len, &pos, &l))
		apply_patch_push(&lines, l.p, l.n);
	for (k = 0; k < f->nh; k++) {
		struct apply_patch_hunk *h = &f->hunks[k];
		/* The "-" line numbers count lines of the file as it was
		 * (lines), so they are looked for there, shifted by how far
		 * the previous hunk was from where it said (as patch(1)
		 * does).  A number past the end means the end. */
		if (h->old_start < 0) {
			want = (long)cursor;
		} else {
			start =
			    h->old_count == 0 ? h->old_start : h->old_start - 1;
			if (start > (long)lines.n)
				start = (long)lines.n;
			want = start + offset;
		}
		if (want < 0)
			want = 0;
		if (want > (long)lines.n)
			want = (long)lines.n;
		if (h->old.n == 0)
			at = (size_t)want <= lines.n ? want : (long)lines.n;
		else
			at = apply_patch_find(
			    &lines, &h->old, cursor, (size_t)want);
		if (at < 0 || (size_t)at < cursor) {
			*why = xasprintf("hunk %zu does not apply: its context "
					 "and removed lines were not found "
					 "(first line: \"%.*s\")",
			    k + 1,
			    h->old.n
				? (int)(h->old.v[0].n > 80 ? 80 : h->old.v[0].n)
				: 0,
			    h->old.n ? h->old.v[0].p : "");
			r = -1;
			goto out;
		}
		for (i = cursor; i < (size_t)at; i++)
			apply_patch_push(&res, lines.v[i].p, lines.v[i].n);
		for (i = 0; i < h->new_.n; i++)
			apply_patch_push(&res, h->new_.v[i].p, h->new_.v[i].n);
		cursor = (size_t)at + h->old.n;
		if (h->old_start >= 0)
			offset = at - start;
		if (cursor == lines.n)
			final_nl = !h->new_no_nl;
	}
	for (i = cursor; i < lines.n; i++)
		apply_patch_push(&res, lines.v[i].p, lines.v[i].n);
	for (i = 0; i < res.n; i++) {
		buf_add(out, res.v[i].p, res.v[i].n);
		if (i + 1 < res.n || final_nl)
			buf_addc(out, '\n');
	}
	if (out->data == NULL)
		buf_adds(out, "");
out:
	free(lines.v);
	free(res.v);
	return r;
}

/* apply_patch_rel - the workspace-relative form of a patch path. */
static int
apply_patch_rel(
    const struct tool_ctx *ctx, const char *path, char **rel, json_t **err)
{
	json_t *s = json_string(path);
	int r;

	if (s == NULL) {
		*err = tool_error("a path in the patch is not valid UTF-8");
		return -1;
	}
	r = ws_path(ctx, s, rel);
	json_decref(s);
	if (r < 0) {
		*err = tool_path_error(path, r);
		return -1;
	}
	return 0;
}

/* apply_patch_run - the apply_patch tool. */
static int
apply_patch_run(json_t *args, struct tool_ctx *ctx, json_t **result)
{
	json_t *patch = json_object_get(args, "patch"), *files;
	struct apply_patch p;
	struct ws_txn *t = NULL;
	struct buf old = BUF_INIT, out = BUF_INIT;
	char *why = NULL, *failed = NULL, *orel = NULL, *nrel = NULL;
	const char *action;
	size_t i;
	int r;

	p.nf = 0;
	*result = NULL;
	files = json_array();
	if (!json_is_string(patch) ||
	    json_string_length(patch) > TOOL_MAX_FILE) {
		*result = tool_error("patch must be a string (a unified diff) "
				     "of at most 8 MiB");
		goto out;
	}
	if (apply_patch_parse(json_string_value(patch),
		json_string_length(patch), &p, &why) != 0) {
		*result = tool_error("the patch cannot be read: %s", why);
		goto out;
	}
	t = ws_txn_new(ctx->wsfd);
	for (i = 0; i < p.nf; i++) {
		struct apply_patch_file *f = &p.files[i];
		free(orel);
		free(nrel);
		orel = nrel = NULL;
		buf_reset(&old);
		buf_reset(&out);
		if ((f->old_path &&
			apply_patch_rel(ctx, f->old_path, &orel, result) !=
			    0) ||
		    (f->new_path &&
			apply_patch_rel(ctx, f->new_path, &nrel, result) != 0))
			goto fail;
		if (orel != NULL &&
		    edit_file_load(ctx, orel, &old, result) != 0)
			goto fail;
		if (apply_patch_file(f, &old, &out, &why) != 0) {
			*result = tool_error("%s: %s; nothing was written",
			    nrel ? nrel : orel, why);
			goto fail;
		}
		if (nrel == NULL) {
			if (out.len != 0) {
				*result =
				    tool_error("%s: the patch deletes the "
					       "file but its hunks leave "
					       "text in it; nothing was "
					       "written",
					orel);
				goto fail;
			}
			ws_txn_unlink(t, orel);
			action = "deleted";
		} else {
			ws_txn_write(
			    t, nrel, out.data, out.len, 0, orel == NULL);
			action = orel == NULL ? "created" : "modified";
			if (orel != NULL && strcmp(orel, nrel) != 0) {
				ws_txn_unlink(t, orel);
				action = "moved";
			}
		}
		json_array_append_new(files,
		    json_pack("{ssss}", "path", nrel ? nrel : orel, "action",
			action));
	}
	r = ws_txn_commit(t, &failed);
	if (r < 0) {
		char *text = ws_strerror(failed ? failed : "?", r);
		*result = tool_error("%s; nothing was written", text);
		free(text);
		goto out;
	}
	*result = tool_ok();
	json_object_set(*result, "files", files);
	goto out;
fail:
	if (*result == NULL)
		*result = tool_error("the patch does not apply");
out:
	apply_patch_free(&p);
	ws_txn_destroy(&t);
	json_decref(files);
	buf_free(&old);
	buf_free(&out);
	free(orel);
	free(nrel);
	free(why);
	free(failed);
	return 0;
}

/* apply_patch_subjects - every path the patch names. */
static int
apply_patch_subjects(json_t *args, json_t *arr)
{
	json_t *patch = json_object_get(args, "patch");
	struct apply_patch p;
	char *why = NULL;
	size_t i;
	int r;

	p.nf = 0;
	if (!json_is_string(patch))
		return -1;
	r = apply_patch_parse(
	    json_string_value(patch), json_string_length(patch), &p, &why);
	for (i = 0; r == 0 && i < p.nf; i++) {
		if (p.files[i].old_path)
			json_array_append_new(
			    arr, json_string(p.files[i].old_path));
		if (p.files[i].new_path &&
		    (p.files[i].old_path == NULL ||
			strcmp(p.files[i].old_path, p.files[i].new_path) != 0))
			json_array_append_new(
			    arr, json_string(p.files[i].new_path));
	}
	apply_patch_free(&p);
	free(why);
	return r;
}

const struct tool_def apply_patch_def = {
    .name = "apply_patch",
    .kind = TOOL_WRITE,
    .description = "Apply a unified diff (--- a/PATH, +++ b/PATH, @@ "
		   "hunks; /dev/null to create or delete a file) to one "
		   "or more files. Nothing is written unless every hunk "
		   "of every file applies.",
    .schema = "{\"type\":\"object\",\"properties\":{"
	      "\"patch\":{\"type\":\"string\",\"description\":\"a unified "
	      "diff\"}},\"required\":[\"patch\"]}",
    .subjects = apply_patch_subjects,
    .run = apply_patch_run,
};
