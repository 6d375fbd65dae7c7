#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proto/buf.h"
#include "proto/err.h"
#include "proto/log.h"
#include "proto/sha256.h"
#include "proto/xmalloc.h"

#include "hist.h"
#include "json_out.h"

/* hist_path - the history file of cwd under home; the caller frees it. */
char *
hist_path(const char *home, const char *cwd)
{
	uint8_t d[SHA256_LEN];
	char hex[33];
	int i;

	sha256(cwd, strlen(cwd), d);
	for (i = 0; i < 16; i++)
		snprintf(hex + 2 * i, 3, "%02x", d[i]);
	return xasprintf("%s/history/%s.json", home, hex);
}

/* hist_free_items - free an array of n strings. */
static void
hist_free_items(char **items, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(items[i]);
	free(items);
}

/* hist_ws - skip JSON white space. */
static size_t
hist_ws(const char *s, size_t i, size_t len)
{
	while (i < len &&
	    (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r'))
		i++;
	return i;
}

/* hist_hex4 - read four hex digits at s into *v; 0 or -1. */
static int
hist_hex4(const char *s, unsigned *v)
{
	int i;

	*v = 0;
	for (i = 0; i < 4; i++) {
		char c = s[i];

		*v <<= 4;
		if (c >= '0' && c <= '9')
			*v |= (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			*v |= (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			*v |= (unsigned)(c - 'A' + 10);
		else
			return -1;
	}
	return 0;
}

/* hist_put_utf8 - append code point cp to b as UTF-8. */
static void
hist_put_utf8(struct buf *b, unsigned cp)
{
	if (cp < 0x80) {
		buf_addc(b, (char)cp);
	} else if (cp < 0x800) {
		buf_addc(b, (char)(0xc0 | cp >> 6));
		buf_addc(b, (char)(0x80 | (cp & 0x3f)));
	} else if (cp < 0x10000) {
		buf_addc(b, (char)(0xe0 | cp >> 12));
		buf_addc(b, (char)(0x80 | ((cp >> 6) & 0x3f)));
		buf_addc(b, (char)(0x80 | (cp & 0x3f)));
	} else {
		buf_addc(b, (char)(0xf0 | cp >> 18));
		buf_addc(b, (char)(0x80 | ((cp >> 12) & 0x3f)));
		buf_addc(b, (char)(0x80 | ((cp >> 6) & 0x3f)));
		buf_addc(b, (char)(0x80 | (cp & 0x3f)));
	}
}

/* hist_string - decode the JSON string at s[*ip] (a quote) into out. */
static int
hist_string(const char *s, size_t len, size_t *ip, struct buf *out)
{
	size_t i = *ip + 1;
	unsigned cp, lo;

	while (i < len && s[i] != '"') {
		unsigned char c = (unsigned char)s[i];

		if (c < 0x20)
			return -SHIRO_ERR_CORRUPT;
		if (c != '\\') {
			buf_addc(out, (char)c);
			i++;
			continue;
		}
		if (++i >= len)
			return -SHIRO_ERR_CORRUPT;
		switch (s[i]) {
		case '"':
		case '\\':
		case '/':
			buf_addc(out, s[i]);
			break;
		case 'b':
			buf_addc(out, '\b');
			break;
		case 'f':
			buf_addc(out, '\f');
			break;
		case 'n':
			buf_addc(out, '\n');
			break;
		case 'r':
			buf_addc(out, '\r');
			break;
		case 't':
			buf_addc(out, '\t');
			break;
		case 'u':
			if (len - i < 5 || hist_hex4(s + i + 1, &cp) < 0)
				return -SHIRO_ERR_CORRUPT;
			i += 4;
			if (cp >= 0xdc00 && cp <= 0xdfff)
				return -SHIRO_ERR_CORRUPT;
			if (cp >= 0xd800 && cp <= 0xdbff) {
				if (len - i < 7 || s[i + 1] != '\\' ||
				    s[i + 2] != 'u' ||
				    hist_hex4(s + i + 3, &lo) < 0 ||
				    lo < 0xdc00 || lo > 0xdfff)
					return -SHIRO_ERR_CORRUPT;
				cp = 0x10000 + ((cp - 0xd800) << 10) +
				    (lo - 0xdc00);
				i += 6;
			}
			hist_put_utf8(out, cp);
			break;
		default:
			return -SHIRO_ERR_CORRUPT;
		}
		i++;
	}
	if (i >= len)
		return -SHIRO_ERR_CORRUPT;
	*ip = i + 1;
	return 0;
}

/* hist_parse - decode a history file's text into items; for tests too. */
int
hist_parse(const char *text, size_t len, char ***itemsp, size_t *np)
{
	struct buf one = BUF_INIT;
	char **items = NULL;
	size_t n = 0, i;
	int rc = -SHIRO_ERR_CORRUPT;

	i = hist_ws(text, 0, len);
	if (i >= len || text[i] != '[')
		goto out;
	i = hist_ws(text, i + 1, len);
	if (i < len && text[i] == ']') {
		i++;
		goto end;
	}
	for (;;) {
		if (i >= len || text[i] != '"')
			goto out;
		buf_reset(&one);
		if (hist_string(text, len, &i, &one) < 0)
			goto out;
		if (strlen(one.data != NULL ? one.data : "") != one.len)
			goto out; /* an entry with a NUL in it */
		items = xreallocarray(items, n + 1, sizeof(*items));
		items[n++] = xstrdup(one.data != NULL ? one.data : "");
		i = hist_ws(text, i, len);
		if (i < len && text[i] == ',') {
			i = hist_ws(text, i + 1, len);
			continue;
		}
		if (i < len && text[i] == ']') {
			i++;
			break;
		}
		goto out;
	}
end:
	if (hist_ws(text, i, len) != len)
		goto out;
	*itemsp = items;
	*np = n;
	items = NULL;
	n = 0;
	rc = 0;
out:
	hist_free_items(items, n);
	buf_free(&one);
	return rc;
}

/* hist_load - read the file into h's items; a missing file is empty. */
static int
hist_load(struct hist *h)
{
	struct buf text = BUF_INIT;
	char chunk[8192], **items = NULL;
	size_t n = 0;
	ssize_t r;
	int fd, rc = 0;

	fd = open(h->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		rc = errno == ENOENT ? 0 : err_from_errno(errno);
		goto out;
	}
	while ((r = read(fd, chunk, sizeof(chunk))) != 0) {
		if (r < 0) {
			if (errno == EINTR)
				continue;
			rc = err_from_errno(errno);
			goto out;
		}
		if (text.len + (size_t)r > HIST_FILE_MAX) {
			rc = -SHIRO_ERR_TOOBIG;
			goto out;
		}
		buf_add(&text, chunk, (size_t)r);
	}
	rc = hist_parse(
	    text.data != NULL ? text.data : "", text.len, &items, &n);
	if (rc < 0)
		goto out;
	hist_free_items(h->items, h->n);
	h->items = items;
	h->n = n;
out:
	if (fd >= 0)
		close(fd);
	buf_free(&text);
	return rc;
}

/* hist_open - load the history of cwd (see hist.h). */
struct hist *
hist_open(const char *home, const char *cwd)
{
	struct hist *h;
	int rc;

	h = xcalloc(1, sizeof(*h));
	h->path = hist_path(home, cwd);
	rc = hist_load(h);
	if (rc < 0)
		log_warnx("history %s: %s; starting an empty history (the "
			  "file is replaced at the next entry)",
		    h->path, err_str(rc));
	return h;
}

/* hist_save - write the items to the file atomically. */
static int
hist_save(struct hist *h)
{
	struct buf text = BUF_INIT;
	char *dir = NULL, *tmp = NULL, *slash;
	size_t i;
	int fd = -1, rc = 0;

	dir = xstrdup(h->path);
	slash = strrchr(dir, '/');
	if (slash != NULL)
		*slash = '\0';
	if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
		rc = err_from_errno(errno);
		goto out;
	}
	buf_adds(&text, "[\n");
	for (i = 0; i < h->n; i++) {
		json_out_quote(&text, h->items[i], strlen(h->items[i]));
		buf_adds(&text, i + 1 < h->n ? ",\n" : "\n");
	}
	buf_adds(&text, "]\n");
	tmp = xasprintf("%s.%d.tmp", h->path, (int)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		rc = err_from_errno(errno);
		goto out;
	}
	if (write(fd, text.data, text.len) != (ssize_t)text.len ||
	    close(fd) < 0) {
		fd = -1;
		rc = err_from_errno(errno != 0 ? errno : EIO);
		unlink(tmp);
		goto out;
	}
	fd = -1;
	if (rename(tmp, h->path) < 0) {
		rc = err_from_errno(errno);
		unlink(tmp);
	}
out:
	if (fd >= 0)
		close(fd);
	free(dir);
	free(tmp);
	buf_free(&text);
	return rc;
}

/* hist_add - add line and save (see hist.h). */
int
hist_add(struct hist *h, const char *line)
{
	size_t drop, i;

	if (line[0] == '\0')
		return 0;
	/* Pick up what other sessions in this directory added meanwhile. */
	(void)hist_load(h);
	if (h->n > 0 && strcmp(h->items[h->n - 1], line) == 0)
		return 0;
	h->items = xreallocarray(h->items, h->n + 1, sizeof(*h->items));
	h->items[h->n++] = xstrdup(line);
	if (h->n > HIST_MAX) {
		drop = h->n - HIST_MAX;
		for (i = 0; i < drop; i++)
			free(h->items[i]);
		memmove(
		    h->items, h->items + drop, HIST_MAX * sizeof(*h->items));
		h->n = HIST_MAX;
	}
	return hist_save(h);
}

/* hist_destroy - free *hp and set it to NULL. */
void
hist_destroy(struct hist **hp)
{
	struct hist *h = *hp;

	if (h == NULL)
		return;
	hist_free_items(h->items, h->n);
	free(h->path);
	free(h);
	*hp = NULL;
}
