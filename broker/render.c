/*
 * render.c - the view as text: "<chat>", one "id+n|text" line per node,
 * "</chat>", with newlines flattened and a cache mark per 4 lines.
 */
#include <inttypes.h>
#include <string.h>

#include "broker/render.h"
#include "proto/err.h"

/*
 * render_flat_size - bytes of s once each newline is one space: "\r\n"
 * counts 1, every other byte counts 1.
 */
size_t
render_flat_size(const char *s, size_t len)
{
	size_t k, n = len;

	for (k = 0; k + 1 < len; k++)
		if (s[k] == '\r' && s[k + 1] == '\n')
			n--;
	return n;
}

/* render_flatten - append s with "\r\n", "\r" and "\n" as one space. */
void
render_flatten(struct buf *out, const char *s, size_t len)
{
	size_t k, from = 0;

	buf_reserve(out, len);
	for (k = 0; k < len; k++) {
		if (s[k] != '\r' && s[k] != '\n')
			continue;
		buf_add(out, s + from, k - from);
		buf_addc(out, ' ');
		if (s[k] == '\r' && k + 1 < len && s[k + 1] == '\n')
			k++;
		from = k + 1;
	}
	buf_add(out, s + from, len - from);
}

/* render_cut - cut s to at most max bytes, not inside a character. */
size_t
render_cut(const char *s, size_t len, size_t max)
{
	if (len <= max)
		return len;
	/* Back off continuation bytes (10xxxxxx) of a cut character. */
	while (max > 0 && ((unsigned char)s[max] & 0xc0) == 0x80)
		max--;
	return max;
}

/* render_unbuilt - an unbuilt message's line: placeholder or cut input. */
static int
render_unbuilt(struct buf *out, uint64_t m, const struct render_source *src)
{
	struct buf flat = BUF_INIT;
	const char *s;
	size_t len;
	int rc;

	if (src->input == NULL) {
		buf_adds(out, RENDER_PLACEHOLDER);
		return 0;
	}
	if ((rc = src->input(src->arg, m, &s, &len)) < 0)
		return rc;
	render_flatten(&flat, s, len);
	if (flat.len > 0)
		buf_add(
		    out, flat.data, render_cut(flat.data, flat.len, src->cut));
	buf_free(&flat);
	return 0;
}

/* render_name - "id+n" of node (l, i). */
void
render_name(struct buf *out, unsigned l, uint64_t i)
{
	buf_printf(out, "%" PRIu64 "+%" PRIu64, i << l, UINT64_C(1) << l);
}

/* render_view - the whole view, with the cache mark of its blocks. */
int
render_view(struct buf *out, const struct plan_line *lines, size_t n,
    const struct render_source *src, struct render_mark *mark)
{
	size_t start = out->len, k, before, whole = n - n % RENDER_BLOCK;
	const char *s;
	size_t len;
	int rc = 0;

	if (mark != NULL) {
		mark->mark_lines = 0;
		mark->mark_offset = 0;
	}
	buf_adds(out, "<chat>\n");
	for (k = 0; k < n; k++) {
		render_name(out, lines[k].l, lines[k].i);
		buf_addc(out, '|');
		if (!lines[k].built) {
			if ((rc = render_unbuilt(out, lines[k].i, src)) < 0)
				goto out;
		} else {
			if ((rc = src->text(src->arg, lines[k].l, lines[k].i,
				 &s, &len)) < 0)
				goto out;
			before = out->len;
			render_flatten(out, s, len);
			if (out->len - before != lines[k].size) {
				rc = -SHIRO_ERR_CORRUPT;
				goto out;
			}
		}
		buf_addc(out, '\n');
		if (mark != NULL && k + 1 == whole) {
			mark->mark_lines = whole;
			mark->mark_offset = out->len - start;
		}
	}
	buf_adds(out, "</chat>\n");
out:
	if (rc < 0) {
		buf_truncate(out, start);
		if (mark != NULL)
			mark->mark_lines = mark->mark_offset = 0;
	}
	return rc;
}
