#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "utf8.h"

/* utf8_char_len - the length of the valid character at s[0], or 0. */
size_t
utf8_char_len(const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	unsigned long cp;
	size_t need, k;

	if (n == 0)
		return 0;
	if (u[0] < 0x80)
		return 1;
	if (u[0] >= 0xc2 && u[0] <= 0xdf) {
		need = 2;
		cp = u[0] & 0x1f;
	} else if (u[0] >= 0xe0 && u[0] <= 0xef) {
		need = 3;
		cp = u[0] & 0x0f;
	} else if (u[0] >= 0xf0 && u[0] <= 0xf4) {
		need = 4;
		cp = u[0] & 0x07;
	} else {
		return 0;
	}
	if (n < need)
		return 0;
	for (k = 1; k < need; k++) {
		if ((u[k] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (u[k] & 0x3f);
	}
	if ((need == 3 && cp < 0x800) || (need == 4 && cp < 0x10000) ||
	    cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return need;
}

/* utf8_valid - 1 if every byte belongs to a valid character. */
int
utf8_valid(const char *s, size_t len)
{
	size_t pos = 0, n;
	uint64_t w;

	while (pos < len) {
		/* Eight ASCII bytes at a time: a chat's text is mostly
		 * ASCII, and a 128 KB request is checked more than once. */
		if (len - pos >= 8) {
			memcpy(&w, s + pos, 8);
			if ((w & 0x8080808080808080ULL) == 0) {
				pos += 8;
				continue;
			}
		}
		if ((unsigned char)s[pos] < 0x80) {
			pos++;
			continue;
		}
		n = utf8_char_len(s + pos, len - pos);
		if (n == 0)
			return 0;
		pos += n;
	}
	return 1;
}

/* utf8_next - the offset after the character (or bad byte) at pos. */
size_t
utf8_next(const char *s, size_t len, size_t pos)
{
	size_t n = utf8_char_len(s + pos, len - pos);

	return pos + (n == 0 ? 1 : n);
}

/* utf8_floor - step back from pos out of any valid character it cuts. */
size_t
utf8_floor(const char *s, size_t len, size_t pos)
{
	size_t back, start, n;

	if (pos >= len)
		return len;
	/* A character is at most 4 bytes: look at most 3 bytes back for a
	 * lead byte whose character spans pos. */
	for (back = 1; back <= 3 && back <= pos; back++) {
		start = pos - back;
		if (((unsigned char)s[start] & 0xc0) == 0x80)
			continue;
		n = utf8_char_len(s + start, len - start);
		if (n > back)
			return start;
		break;
	}
	return pos;
}

/* utf8_count - how many characters s holds. */
size_t
utf8_count(const char *s, size_t len)
{
	size_t pos = 0, count = 0;

	while (pos < len) {
		pos = utf8_next(s, len, pos);
		count++;
	}
	return count;
}

/* utf8_skip - the offset after n characters. */
size_t
utf8_skip(const char *s, size_t len, size_t n)
{
	size_t pos = 0;

	while (pos < len && n > 0) {
		pos = utf8_next(s, len, pos);
		n--;
	}
	return pos;
}

/* utf8_blank - whether s[0..len) is empty or only white space. */
int
utf8_blank(const char *s, size_t len)
{
	size_t k;

	for (k = 0; k < len; k++)
		if (s[k] != ' ' && s[k] != '\t' && s[k] != '\n' && s[k] != '\r')
			return 0;
	return 1;
}
