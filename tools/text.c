#include <stdio.h>
#include <string.h>

#include "proto/xmalloc.h"
#include "tools/text.h"

/* text_seq - length of the valid UTF-8 sequence at s, 0 when invalid. */
static size_t
text_seq(const unsigned char *s, size_t len)
{
	unsigned c = s[0];
	size_t n, i;
	unsigned cp;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2, cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3, cp = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4, cp = c & 0x07;
	else
		return 0;
	if (len < n)
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
	    cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

/* text_utf8_clean - append s to out with every invalid byte as U+FFFD. */
void
text_utf8_clean(const char *s, size_t len, struct buf *out)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, start = 0, n;

	buf_reserve(out, len);
	while (i < len) {
		n = text_seq(p + i, len - i);
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
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, n;

	while (i < len) {
		n = text_seq(p + i, len - i);
		if (n == 0 || p[i] == 0)
			return 0;
		i += n;
	}
	return 1;
}

/* text_chars - the number of characters (code points) of UTF-8 text s. */
size_t
text_chars(const char *s, size_t len)
{
	size_t i, n = 0;

	for (i = 0; i < len; i++)
		if (((unsigned char)s[i] & 0xc0) != 0x80)
			n++;
	return n;
}

/* text_skip_chars - byte offset after the first n characters of s. */
static size_t
text_skip_chars(const char *s, size_t len, size_t n)
{
	size_t i = 0;

	while (i < len && n > 0) {
		i++;
		while (i < len && ((unsigned char)s[i] & 0xc0) == 0x80)
			i++;
		n--;
	}
	return i;
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
	chars = text_chars(clean.data ? clean.data : "", clean.len);
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
	hb = text_skip_chars(clean.data, clean.len, head);
	tb = text_skip_chars(clean.data, clean.len, chars - tail);
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
