/*
 * store_text.c - long text: clipping a tool's output (rule 9) and
 * splitting other text into pages (rule 10).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/buf.h"
#include "proto/utf8.h"
#include "proto/xmalloc.h"
#include "store.h"

/* store_text_clip - keep the head and tail, max_chars in all. */
char *
store_text_clip(const char *text, size_t len, size_t max_chars, size_t *outlen)
{
	struct buf b = BUF_INIT;
	size_t chars, head, tail, hend, tstart;

	chars = utf8_count(text, len);
	if (chars <= max_chars) {
		buf_add(&b, len > 0 ? text : "", len);
		return buf_steal(&b, outlen);
	}
	head = max_chars / 2;
	tail = max_chars - head;
	hend = utf8_skip(text, len, head);
	tstart = utf8_skip(text, len, chars - tail);
	buf_add(&b, text, hend);
	buf_printf(&b, "\n[... %zu characters cut ...]\n", chars - max_chars);
	buf_add(&b, text + tstart, len - tstart);
	return buf_steal(&b, outlen);
}

/* store_text_split - page lengths, cut at characters, lines preferred. */
void
store_text_split(
    const char *text, size_t len, size_t page, size_t **lensp, size_t *np)
{
	size_t cap = 4, *lens = xcalloc(cap, sizeof(*lens)), n = 0, pos = 0;
	size_t cut, k;

	if (page < 4)
		page = 4;
	do {
		if (len - pos <= page) {
			cut = len;
		} else {
			cut = pos + page;
			/* The last line end in the second half of the page. */
			for (k = cut; k > pos + page / 2; k--) {
				if (text[k - 1] == '\n')
					break;
			}
			if (k > pos + page / 2)
				cut = k;
			else
				cut = utf8_floor(text, len, cut);
			if (cut == pos)
				cut = pos + page; /* cannot happen: page >= 4 */
		}
		if (n == cap) {
			cap *= 2;
			lens = xreallocarray(lens, cap, sizeof(*lens));
		}
		lens[n++] = cut - pos;
		pos = cut;
	} while (pos < len);
	*lensp = lens;
	*np = n;
}
