#include <stdio.h>
#include <string.h>

#include "proto/utf8.h"
#include "tools/text.h"

/* text_utf8_clean - append s to out with every invalid byte as U+FFFD. */
void
text_utf8_clean(const char *s, size_t len, struct buf *out)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, start = 0, n;

	buf_reserve(out, len);
	while (i < len) {
		if (p[i] > 0 && p[i] < 0x80) {
			i++; /* ASCII, the common case */
			continue;
		}
		n = utf8_char_len(s + i, len - i);
		if (n > 0 && p[i] != 0) {
			i += n;
			continue;
		}
		buf_add(out, s + start, i - start);
		buf_adds(out, "\xef\xbf\xbd");
		i++;
		start = i;
	}
	buf_add(out, s + start, i - start);
}

/* text_utf8_valid - nonzero when s holds only valid UTF-8 and no NUL. */
int
text_utf8_valid(const char *s, size_t len)
{
	return utf8_valid(s, len) && memchr(s, '\0', len) == NULL;
}

/*
 * text_clip - append s cleaned to out, head and tail kept within max
 * characters.  The marker line counts against max.
 */
int
text_clip(const char *s, size_t len, size_t max, struct buf *out)
{
	struct buf clean = BUF_INIT;
	char marker[96];
	size_t chars, mlen, keep, head, tail, hb, tb;
	int clipped = 0;

	text_utf8_clean(s, len, &clean);
	chars = utf8_count(clean.data ? clean.data : "", clean.len);
	if (chars <= max) {
		buf_add(out, clean.data ? clean.data : "", clean.len);
		goto out;
	}
	clipped = 1;
	/* The marker names the cut; its size is roughly fixed. */
	mlen = (size_t)snprintf(
	    marker, sizeof(marker), "\n[... %zu characters cut ...]\n", chars);
	keep = max > mlen ? max - mlen : 0;
	head = keep / 2;
	tail = keep - head;
	snprintf(marker, sizeof(marker), "\n[... %zu characters cut ...]\n",
	    chars - head - tail);
	hb = utf8_skip(clean.data, clean.len, head);
	tb = utf8_skip(clean.data, clean.len, chars - tail);
	buf_add(out, clean.data, hb);
	buf_adds(out, marker);
	buf_add(out, clean.data + tb, clean.len - tb);
out:
	buf_free(&clean);
	return clipped;
}

/* text_string - a new JSON string of s, invalid UTF-8 replaced. */
json_t *
text_string(const char *s, size_t len)
{
	struct buf b = BUF_INIT;
	json_t *j;

	text_utf8_clean(s, len, &b);
	j = json_stringn(b.data ? b.data : "", b.len);
	buf_free(&b);
	if (j == NULL)
		j = json_string("");
	return j;
}

/* text_is_binary - nonzero when the data looks binary (a NUL byte). */
int
text_is_binary(const char *s, size_t len)
{
	return memchr(s, '\0', len < 65536 ? len : 65536) != NULL;
}
