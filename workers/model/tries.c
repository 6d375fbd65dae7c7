/*
 * tries.c - a compaction's tries (tries.h).
 */
#include <string.h>

#include "proto/utf8.h"
#include "workers/model/tries.h"

/* tries_init - tries of at most max calls for a line of limit bytes. */
void
tries_init(struct tries *t, size_t limit, unsigned max)
{
	memset(t, 0, sizeof(*t));
	t->limit = limit;
	t->max = max ? max : 1;
}

/* tries_free - free what t holds. */
void
tries_free(struct tries *t)
{
	buf_free(&t->best);
}

/* tries_line - the reply's text as one line. */
void
tries_line(const char *text, size_t len, struct buf *out)
{
	size_t pos = 0, n;
	bool space = false;

	buf_reset(out);
	buf_adds(out, "");
	while (pos < len) {
		unsigned char c = (unsigned char)text[pos];

		n = utf8_char_len(text + pos, len - pos);
		if (n == 0) {
			/* Not UTF-8: U+FFFD, as messages carry it. */
			if (space && out->len > 0)
				buf_addc(out, ' ');
			space = false;
			buf_add(out, "\xef\xbf\xbd", 3);
			pos++;
			continue;
		}
		if (n == 1 && (c <= 0x20 || c == 0x7f)) {
			space = true;
			pos++;
			continue;
		}
		/* U+2028, U+2029 (line and paragraph separators), U+0085. */
		if ((n == 3 && c == 0xe2 &&
			(unsigned char)text[pos + 1] == 0x80 &&
			((unsigned char)text[pos + 2] == 0xa8 ||
			    (unsigned char)text[pos + 2] == 0xa9)) ||
		    (n == 2 && c == 0xc2 &&
			(unsigned char)text[pos + 1] < 0xa0)) {
			space = true;
			pos += n;
			continue;
		}
		if (space && out->len > 0)
			buf_addc(out, ' ');
		space = false;
		buf_add(out, text + pos, n);
		pos += n;
	}
}

/* tries_cut - the first limit bytes of s at a character boundary. */
static size_t
tries_cut(const char *s, size_t len, size_t limit)
{
	size_t cut;

	if (len <= limit)
		return len;
	cut = utf8_floor(s, len, limit);
	while (cut > 0 && s[cut - 1] == ' ')
		cut--;
	return cut;
}

/* tries_add - count a try; true when another should follow. */
bool
tries_add(struct tries *t, const char *text, size_t len, struct buf *followup)
{
	struct buf line = BUF_INIT;
	bool again = false;
	size_t cut;

	t->done++;
	tries_line(text, len, &line);
	if (line.len == 0)
		goto out; /* empty or thinking only: the last try */
	if (t->has_best && line.len >= t->best.len)
		goto out; /* not shorter: asking again asks the same */
	buf_reset(&t->best);
	buf_add(&t->best, line.data, line.len);
	t->has_best = true;
	if (line.len <= t->limit || t->done >= t->max)
		goto out;
	cut = tries_cut(line.data, line.len, t->limit);
	buf_reset(followup);
	buf_printf(followup,
	    "Too long: that line is %zu bytes, and a line may have at most "
	    "%zu. Cut at %zu bytes it reads:\n\n%.*s\n\nWrite the line again "
	    "in at most %zu bytes: keep what a reader needs most (names, "
	    "numbers, errors, decisions) and drop the rest. Reply with the "
	    "line alone.",
	    line.len, t->limit, t->limit, (int)cut, line.data, t->limit);
	again = true;
out:
	buf_free(&line);
	return again;
}

/* tries_result - the best line cut at the limit. */
bool
tries_result(const struct tries *t, struct buf *out)
{
	size_t cut;

	buf_reset(out);
	if (!t->has_best)
		return false;
	cut = tries_cut(t->best.data, t->best.len, t->limit);
	if (cut == 0)
		return false;
	buf_add(out, t->best.data, cut);
	return true;
}
