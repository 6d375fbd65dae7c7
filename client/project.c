/*
 * project.c - a project's notes and task list for a person (see
 * project.h).
 */
#include <inttypes.h>
#include <string.h>

#include "project.h"

/* project_int - the number at key of map v, or 0. */
static int64_t
project_int(const struct msg_val *v, const char *key)
{
	int64_t i = 0;

	if (msg_val_int(v, key, &i) != 0)
		i = 0;
	return i;
}

/* project_str - the string at key of map v, or "". */
static const char *
project_str(const struct msg_val *v, const char *key)
{
	const char *s = msg_val_str(v, key);

	return s != NULL ? s : "";
}

/* project_notes - the notes document: a header, then one line a note. */
static void
project_notes(struct buf *out, const struct msg_val *doc)
{
	const struct msg_val *arr = msg_val_get(doc, "notes"), *n;
	int64_t count = project_int(doc, "count"), hits;
	size_t k;

	if (count == 0) {
		buf_printf(
		    out, "no notes on %s yet\n", project_str(doc, "project"));
		return;
	}
	buf_printf(out,
	    "%" PRId64 " note%s on %s (at most %" PRId64 "), the most used "
	    "first; the first %" PRId64 " go with every turn:\n",
	    count, count == 1 ? "" : "s", project_str(doc, "project"),
	    project_int(doc, "max"), project_int(doc, "shown"));
	for (k = 0; arr != NULL && arr->type == MSG_V_ARR && k < arr->u.a.n;
	     k++) {
		n = arr->u.a.items[k];
		hits = project_int(n, "hits");
		buf_printf(out, "  [%" PRId64 "] %s, ", project_int(n, "id"),
		    project_str(n, "kind"));
		if (hits > 0)
			buf_printf(out, "%" PRId64 " hit%s, ", hits,
			    hits == 1 ? "" : "s");
		buf_printf(out, "%s: %s\n", project_str(n, "date"),
		    project_str(n, "text"));
	}
	if (project_int(doc, "unreadable") > 0)
		buf_printf(out,
		    "(%" PRId64 " more do not read: shirod's log names them)\n",
		    project_int(doc, "unreadable"));
}

/* project_render - a NOTES document (see project.h). */
void
project_render(struct buf *out, const struct msg_val *doc)
{
	if (msg_val_get(doc, "notes") != NULL) {
		project_notes(out, doc);
		return;
	}
	if (project_int(doc, "total") == 0) {
		buf_printf(
		    out, "no task list for %s\n", project_str(doc, "project"));
		return;
	}
	buf_printf(out, "task list of %s:\n%s", project_str(doc, "project"),
	    project_str(doc, "text"));
}

/* project_live - the lines of a `todos` event (see project.h). */
int
project_live(struct buf *out, const struct msg *ev)
{
	const struct msg_val *data = NULL;
	const char *name = "", *text = "";

	(void)msg_get_str(ev, "ev", &name, NULL);
	if (strcmp(name, "todos") != 0)
		return -1;
	(void)msg_get_str(ev, "text", &text, NULL);
	(void)msg_get_map(ev, "data", &data);
	if (text[0] == '\0') {
		buf_printf(out, "tasks: the list of %s was cleared\n",
		    data != NULL ? project_str(data, "project") : "a project");
		return 0;
	}
	buf_printf(out, "task list of %s, now:\n",
	    data != NULL ? project_str(data, "project") : "a project");
	buf_adds(out, text);
	if (out->len > 0 && out->data[out->len - 1] != '\n')
		buf_addc(out, '\n');
	return 0;
}
