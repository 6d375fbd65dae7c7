#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "proto/utf8.h"

#include "json_out.h"
#include "project.h"
#include "render.h"

/* render_escape - s with every control shown as text (see render.h). */
void
render_escape(struct buf *out, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, n, run;

	while (i < len) {
		/* Copy the longest run of plain characters at once. */
		for (run = i; run < len && p[run] >= 0x20 && p[run] < 0x7f;
		     run++)
			;
		if (run > i) {
			buf_add(out, p + i, run - i);
			i = run;
			continue;
		}
		if (p[i] == '\n' || p[i] == '\t') {
			buf_addc(out, (char)p[i]);
			i++;
		} else if (p[i] < 0x20) {
			buf_addc(out, '^');
			buf_addc(out, (char)(p[i] + 0x40));
			i++;
		} else if (p[i] == 0x7f) {
			buf_adds(out, "^?");
			i++;
		} else if ((n = utf8_char_len(s + i, len - i)) == 0) {
			buf_printf(out, "\\x%02x", p[i]);
			i++;
		} else if (n == 2 && p[i] == 0xc2 && p[i + 1] < 0xa0) {
			/* C1 controls (U+0080-U+009F) drive terminals too. */
			buf_adds(out, "M-^");
			buf_addc(out, (char)(p[i + 1] - 0x80 + 0x40));
			i += 2;
		} else {
			buf_add(out, p + i, n);
			i += n;
		}
	}
}

/* render_printf - formatted, then escaped, onto out (see render.h). */
void
render_printf(struct buf *out, const char *fmt, ...)
{
	struct buf raw = BUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	buf_vprintf(&raw, fmt, ap);
	va_end(ap);
	render_escape(out, raw.data != NULL ? raw.data : "", raw.len);
	buf_add(out, "", 0); /* a C string even when empty */
	buf_free(&raw);
}

/* render_puts - s, escaped, to f (see render.h). */
void
render_puts(FILE *f, const char *s)
{
	struct buf b = BUF_INIT;

	render_escape(&b, s, strlen(s));
	if (b.len > 0)
		fwrite(b.data, 1, b.len, f);
	buf_free(&b);
}

/* render_size - a byte count as the status line shows it. */
void
render_size(struct buf *out, uint64_t bytes)
{
	if (bytes < 1000)
		buf_printf(out, "%" PRIu64 "B", bytes);
	else if (bytes < 10000)
		buf_printf(out, "%" PRIu64 ".%" PRIu64 "K", bytes / 1000,
		    bytes % 1000 / 100);
	else if (bytes < 1000000)
		buf_printf(out, "%" PRIu64 "K", bytes / 1000);
	else
		buf_printf(out, "%" PRIu64 ".%" PRIu64 "M", bytes / 1000000,
		    bytes % 1000000 / 100000);
}

/* render_status_line - "mem N/128K". */
void
render_status_line(struct buf *out, uint64_t bytes, uint64_t ceiling)
{
	buf_adds(out, "mem ");
	render_size(out, bytes);
	buf_addc(out, '/');
	render_size(out, ceiling != 0 ? ceiling : RENDER_CEILING);
}

/* render_scalar - a scalar value inline; containers as compact JSON. */
static void
render_scalar(struct buf *out, const struct msg_val *v)
{
	struct json_out j;
	size_t k;

	switch (v->type) {
	case MSG_V_NIL:
		buf_adds(out, "-");
		break;
	case MSG_V_BOOL:
		buf_adds(out, v->u.b ? "yes" : "no");
		break;
	case MSG_V_INT:
		buf_printf(out, "%" PRId64, v->u.i);
		break;
	case MSG_V_STR:
	case MSG_V_BIN:
		buf_add(out, v->u.s.ptr, v->u.s.len);
		break;
	case MSG_V_MAP:
		for (k = 0; k < v->u.m.n; k++) {
			buf_printf(
			    out, "%s%s=", k > 0 ? " " : "", v->u.m.kv[k].key);
			render_scalar(out, v->u.m.kv[k].val);
		}
		break;
	default:
		json_out_init(&j, out);
		json_out_val(&j, v);
		break;
	}
}

/* render_simple - whether v shows on one line. */
static int
render_simple(const struct msg_val *v)
{
	size_t k;

	if (v->type == MSG_V_MAP) {
		for (k = 0; k < v->u.m.n; k++)
			if (v->u.m.kv[k].val->type == MSG_V_ARR ||
			    v->u.m.kv[k].val->type == MSG_V_MAP)
				return 0;
		return v->u.m.n <= 12;
	}
	if (v->type != MSG_V_ARR)
		return 1;
	for (k = 0; k < v->u.a.n; k++)
		if (v->u.a.items[k]->type == MSG_V_ARR ||
		    v->u.a.items[k]->type == MSG_V_MAP)
			return 0;
	return v->u.a.n <= 8;
}

/* render_indent - two spaces per level. */
static void
render_indent(struct buf *out, int depth)
{
	int k;

	for (k = 0; k < depth; k++)
		buf_adds(out, "  ");
}

/* render_tree - v under key (may be NULL) at depth, as indented lines. */
static void
render_tree(
    struct buf *out, const char *key, const struct msg_val *v, int depth)
{
	size_t k;

	render_indent(out, depth);
	if (key != NULL)
		buf_printf(out, "%s:", key);
	if (render_simple(v)) {
		buf_adds(out, key != NULL ? " " : "- ");
		render_scalar(out, v);
		buf_addc(out, '\n');
		return;
	}
	if (key == NULL)
		buf_adds(out, "-");
	buf_addc(out, '\n');
	if (depth >= 8)
		return;
	if (v->type == MSG_V_MAP) {
		for (k = 0; k < v->u.m.n; k++)
			render_tree(
			    out, v->u.m.kv[k].key, v->u.m.kv[k].val, depth + 1);
	} else {
		for (k = 0; k < v->u.a.n; k++)
			render_tree(out, NULL, v->u.a.items[k], depth + 1);
	}
}

/* render_doc_except - the keys of doc other than skip, as lines. */
static void
render_doc_except(struct buf *out, const struct msg_val *doc, const char *skip)
{
	size_t k;

	if (doc == NULL || doc->type != MSG_V_MAP)
		return;
	for (k = 0; k < doc->u.m.n; k++) {
		if (skip != NULL && strcmp(doc->u.m.kv[k].key, skip) == 0)
			continue;
		render_tree(out, doc->u.m.kv[k].key, doc->u.m.kv[k].val, 0);
	}
}

/* render_doc - a REPLY's document as "key: value" lines. */
void
render_doc(struct buf *out, const struct msg_val *doc)
{
	render_doc_except(out, doc, NULL);
}

/* render_view_line - one line of the view: "id+n|text". */
static void
render_view_line(struct buf *out, const struct msg_val *v)
{
	const struct msg_val *built;
	const char *text;
	int64_t id, n;

	if (v->type == MSG_V_STR) {
		buf_add(out, v->u.s.ptr, v->u.s.len);
	} else if (v->type == MSG_V_MAP) {
		text = msg_val_str(v, "line");
		if (text != NULL) {
			buf_adds(out, text);
		} else if (msg_val_int(v, "id", &id) == 0 &&
		    msg_val_int(v, "n", &n) == 0) {
			text = msg_val_str(v, "text");
			built = msg_val_get(v, "built");
			if ((text == NULL || text[0] == '\0') &&
			    built != NULL && built->type == MSG_V_BOOL &&
			    !built->u.b)
				text = "(not summarized yet)";
			buf_printf(out, "%" PRId64 "+%" PRId64 "|%s", id, n,
			    text != NULL ? text : "");
		} else {
			render_scalar(out, v);
		}
	} else {
		render_scalar(out, v);
	}
	buf_addc(out, '\n');
}

/* render_memory - the status, then every view line. */
void
render_memory(struct buf *out, const struct msg_val *doc)
{
	const struct msg_val *lines = NULL;
	const char *key = "lines";
	size_t k;

	if (doc != NULL && doc->type == MSG_V_MAP) {
		lines = msg_val_get(doc, "lines");
		if (lines == NULL || lines->type != MSG_V_ARR) {
			key = "view";
			lines = msg_val_get(doc, "view");
		}
	}
	if (lines == NULL || lines->type != MSG_V_ARR) {
		render_doc(out, doc);
		return;
	}
	render_doc_except(out, doc, key);
	buf_printf(out, "view (%zu lines):\n", lines->u.a.n);
	for (k = 0; k < lines->u.a.n; k++)
		render_view_line(out, lines->u.a.items[k]);
}

/* render_merges - the parents a batch made: " 0+8 8+8".  shirod sends
 * each as the string "id+n" (docs/protocol.md); a map {id, n} is read
 * too. */
static void
render_merges(struct buf *out, const struct msg_val *merges)
{
	const struct msg_val *v;
	int64_t id, n;
	size_t k;

	for (k = 0;
	     merges != NULL && merges->type == MSG_V_ARR && k < merges->u.a.n;
	     k++) {
		if (k == 16) {
			buf_printf(out, " ... (%zu in all)", merges->u.a.n);
			break;
		}
		v = merges->u.a.items[k];
		if (v->type == MSG_V_STR)
			buf_printf(out, " %s", v->u.s.ptr);
		else if (v->type == MSG_V_MAP &&
		    msg_val_int(v, "id", &id) == 0 &&
		    msg_val_int(v, "n", &n) == 0)
			buf_printf(out, " %" PRId64 "+%" PRId64, id, n);
	}
}

/* render_first_line - the first line of s, at most max bytes of it. */
static void
render_first_line(struct buf *out, const char *s, size_t max)
{
	size_t n = strcspn(s, "\n");

	if (n > max)
		n = max;
	buf_add(out, s, n);
	if (s[n] != '\0')
		buf_adds(out, " ...");
}

/* render_tool_event - a tool call, its outcome, or an approval. */
static void
render_tool_event(struct buf *out, const struct msg *ev, const char *name,
    const char *code, const char *text)
{
	const struct msg_val *d = NULL;
	const char *tool = "?", *by = NULL, *answer = NULL;
	int64_t approval = 0;

	if (msg_get_map(ev, "data", &d) == 0) {
		if (msg_val_str(d, "name") != NULL)
			tool = msg_val_str(d, "name");
		by = msg_val_str(d, "by");
		answer = msg_val_str(d, "answer");
		(void)msg_val_int(d, "approval", &approval);
	}
	if (text == NULL)
		text = "";
	if (strcmp(name, "tool_call") == 0) {
		buf_adds(out, "tool: ");
		render_first_line(out, text, 200);
	} else if (strcmp(name, "tool_result") == 0) {
		buf_printf(out, "tool: %s done", tool);
	} else if (strcmp(name, "tool_error") == 0) {
		buf_printf(out, "tool: %s failed: ", tool);
		render_first_line(out, text, 300);
	} else if (strcmp(name, "tool_denied") == 0) {
		buf_printf(out, "tool: %s ", tool);
		render_first_line(out, text, 300);
	} else if (code != NULL && strcmp(code, "ask") == 0) {
		buf_printf(out,
		    "approval %lld: %s asks:\n%s%sanswer with /approve %lld "
		    "yes, always or no [reason]",
		    (long long)approval, tool, text,
		    text[0] && text[strlen(text) - 1] != '\n' ? "\n" : "",
		    (long long)approval);
	} else {
		buf_printf(out, "approval %lld: %s (%s)", (long long)approval,
		    answer != NULL ? answer : "resolved",
		    by != NULL ? by : "?");
	}
	buf_addc(out, '\n');
}

/* render_event - an EVENT as lines (see render.h). */
void
render_event(struct buf *out, const struct msg *ev)
{
	const struct msg_val *body = msg_body(ev), *merges = NULL;
	const char *name = "event", *text = NULL, *kind = "", *code = NULL;
	uint64_t id = 0, n = 0, bytes = 0, lines = 0;
	size_t k;

	(void)msg_get_str(ev, "ev", &name, NULL);
	(void)msg_get_str(ev, "text", &text, NULL);
	(void)msg_get_str(ev, "kind", &kind, NULL);
	(void)msg_get_str(ev, "code", &code, NULL);
	(void)msg_get_uint(ev, "id", &id);
	(void)msg_get_uint(ev, "n", &n);
	if (strcmp(name, "message") == 0) {
		buf_printf(out, "[#%" PRIu64 " %s] %s\n", id, kind,
		    text != NULL ? text : "");
	} else if (strcmp(name, "node") == 0) {
		/* The summary itself shows in /memory, at full detail. */
		buf_printf(
		    out, "memory: built %" PRIu64 "+%" PRIu64 "\n", id, n);
	} else if (strcmp(name, "batch") == 0) {
		(void)msg_get_arr(ev, "merges", &merges);
		(void)msg_get_uint(ev, "view_bytes", &bytes);
		(void)msg_get_uint(ev, "view_lines", &lines);
		buf_adds(out, "memory: batch merged");
		render_merges(out, merges);
		buf_adds(out, "; view ");
		render_size(out, bytes);
		buf_printf(out, " in %" PRIu64 " lines\n", lines);
	} else if (strcmp(name, "failure") == 0) {
		buf_printf(out,
		    "memory: failed %" PRIu64 "+%" PRIu64 " (%s)%s%s\n", id, n,
		    code != NULL ? code : "error", text != NULL ? ": " : "",
		    text != NULL ? text : "");
	} else if (strcmp(name, "notice") == 0 || strcmp(name, "turn") == 0) {
		buf_printf(out, "%s: %s\n", name, text != NULL ? text : "");
	} else if (strcmp(name, "tool_output") == 0) {
		/* A command's output as it comes: as it is. */
		buf_adds(out, text != NULL ? text : "");
	} else if (strncmp(name, "tool_", 5) == 0 ||
	    strcmp(name, "approval") == 0) {
		render_tool_event(out, ev, name, code, text);
	} else {
		/* A kind this client does not know: every key, generically. */
		buf_printf(out, "%s:", name);
		for (k = 0; body != NULL && k < body->u.m.n; k++) {
			if (strcmp(body->u.m.kv[k].key, "seq") == 0 ||
			    strcmp(body->u.m.kv[k].key, "ev") == 0)
				continue;
			buf_printf(out, " %s=", body->u.m.kv[k].key);
			render_scalar(out, body->u.m.kv[k].val);
		}
		buf_addc(out, '\n');
	}
}

/* render_entry - one message of the log or of a zoom: header, text. */
static void
render_entry(struct buf *out, const struct msg_val *m)
{
	const char *text, *kind, *date;
	int64_t id;

	if (msg_val_int(m, "id", &id) < 0 && msg_val_int(m, "i", &id) < 0)
		id = -1;
	kind = msg_val_str(m, "kind");
	date = msg_val_str(m, "date");
	text = msg_val_str(m, "text");
	buf_printf(out, "#%" PRId64 " %s, %s:\n%s\n", id,
	    kind != NULL ? kind : "?", date != NULL ? date : "no date",
	    text != NULL ? text : "");
}

/* render_zoom - a ZOOM document: the node, then its halves or message. */
void
render_zoom(struct buf *out, const struct msg_val *doc)
{
	const struct msg_val *node, *parts;
	int64_t n = 0;
	size_t k;

	node = doc != NULL && doc->type == MSG_V_MAP ? msg_val_get(doc, "node")
						     : NULL;
	if (node == NULL || node->type != MSG_V_MAP) {
		render_doc(out, doc);
		return;
	}
	(void)msg_val_int(node, "n", &n);
	if (n == 1) {
		render_entry(out, node);
		return;
	}
	render_view_line(out, node);
	parts = msg_val_get(doc, "parts");
	for (k = 0;
	     parts != NULL && parts->type == MSG_V_ARR && k < parts->u.a.n;
	     k++) {
		buf_adds(out, "  ");
		render_view_line(out, parts->u.a.items[k]);
	}
}

/* render_log - a LOG document: each message, oldest first. */
void
render_log(struct buf *out, const struct msg_val *doc)
{
	const struct msg_val *msgs = NULL, *v;
	size_t k;

	if (doc != NULL && doc->type == MSG_V_MAP)
		msgs = msg_val_get(doc, "log");
	if (msgs == NULL || msgs->type != MSG_V_ARR) {
		render_doc(out, doc);
		return;
	}
	for (k = 0; k < msgs->u.a.n; k++)
		if (msgs->u.a.items[k]->type == MSG_V_MAP)
			render_entry(out, msgs->u.a.items[k]);
	v = msg_val_get(doc, "truncated");
	if (v != NULL && v->type == MSG_V_BOOL && v->u.b)
		buf_adds(out, "(older messages left out: use --tail N)\n");
}

/* render_reply - the document answering a request of type req. */
void
render_reply(struct buf *out, enum msg_type req, const struct msg_val *doc)
{
	switch (req) {
	case MSG_MEMORY:
		render_memory(out, doc);
		break;
	case MSG_ZOOM:
		render_zoom(out, doc);
		break;
	case MSG_LOG:
		render_log(out, doc);
		break;
	case MSG_NOTES:
		project_render(out, doc);
		break;
	case MSG_STATUS:
		render_doc_except(out, doc, "usage");
		render_usage(out, doc);
		break;
	default:
		render_doc(out, doc);
		break;
	}
}

/* render_event_json - an EVENT, or an answer, as one JSON object. */
void
render_event_json(struct buf *out, const struct msg *m)
{
	const struct msg_val *body = msg_body(m);
	struct json_out j;
	size_t k;

	json_out_init(&j, out);
	if (msg_type(m) == MSG_EVENT) {
		json_out_val(&j, body);
		return;
	}
	/* An answer: named like an event ("ev": "error"), then its keys. */
	json_out_begin_object(&j);
	json_out_key(&j, "ev");
	json_out_str(&j, msg_type_name(msg_type(m)));
	for (k = 0; body != NULL && k < body->u.m.n; k++) {
		if (strcmp(body->u.m.kv[k].key, "ev") == 0)
			continue;
		json_out_key(&j, body->u.m.kv[k].key);
		json_out_val(&j, body->u.m.kv[k].val);
	}
	json_out_end_object(&j);
}
