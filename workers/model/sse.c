/*
 * sse.c - the server-sent events parser (sse.h).
 */
#include <string.h>

#include "proto/err.h"
#include "workers/model/sse.h"

static const char sse_bom[] = "\xef\xbb\xbf";

/* sse_init - a parser for events of at most max bytes. */
void
sse_init(struct sse *s, size_t max, sse_event_fn fn, void *arg)
{
	memset(s, 0, sizeof(*s));
	s->fn = fn;
	s->arg = arg;
	s->max = max;
}

/* sse_free - free what s holds. */
void
sse_free(struct sse *s)
{
	buf_free(&s->line);
	buf_free(&s->name);
	buf_free(&s->data);
}

/* sse_dispatch - a blank line: hand over the event, if it has data. */
static int
sse_dispatch(struct sse *s)
{
	int rc = 0;

	if (s->has_data) {
		s->events++;
		rc = s->fn(s->arg, s->name.len ? s->name.data : "message",
		    s->data.data ? s->data.data : "", s->data.len);
	}
	buf_reset(&s->name);
	buf_reset(&s->data);
	s->has_data = false;
	return rc;
}

/* sse_field - one complete line of s->line. */
static int
sse_field(struct sse *s)
{
	const char *l = s->line.data, *colon, *v;
	size_t n = s->line.len, fl, vl;

	if (n == 0)
		return sse_dispatch(s);
	if (l[0] == ':')
		return 0;
	colon = memchr(l, ':', n);
	fl = colon ? (size_t)(colon - l) : n;
	v = colon ? colon + 1 : l + n;
	vl = (size_t)(l + n - v);
	if (vl > 0 && v[0] == ' ') {
		v++;
		vl--;
	}
	if (fl == 5 && memcmp(l, "event", 5) == 0) {
		size_t k;

		buf_reset(&s->name);
		buf_add(&s->name, v, vl);
		/* The name is handed over as a C string: no NUL inside. */
		for (k = 0; k < s->name.len; k++)
			if (s->name.data[k] == '\0')
				s->name.data[k] = '?';
	} else if (fl == 4 && memcmp(l, "data", 4) == 0) {
		if (s->has_data)
			buf_addc(&s->data, '\n');
		if (s->data.len + vl > s->max)
			return -SHIRO_ERR_TOOBIG;
		buf_add(&s->data, v, vl);
		s->has_data = true;
	}
	/* "id", "retry" and unknown fields are ignored, as the format says. */
	return 0;
}

/* sse_feed - more bytes of the stream. */
int
sse_feed(struct sse *s, const char *p, size_t n)
{
	const char *end = p + n, *q;
	int rc;

	if (s->err != 0)
		return s->err;
	/* A byte order mark may come split over pieces: match it byte by
	 * byte; bytes that turn out not to be one are fed as text. */
	while (!s->started && p < end) {
		if (*p == sse_bom[s->bom]) {
			p++;
			if (++s->bom == 3)
				s->started = true;
			continue;
		}
		s->started = true;
		if (s->bom > 0 && (rc = sse_feed(s, sse_bom, s->bom)) < 0)
			return rc;
	}
	while (p < end) {
		if (s->cr && *p == '\n') {
			/* The LF of a CRLF whose CR ended the line. */
			s->cr = false;
			p++;
			continue;
		}
		s->cr = false;
		for (q = p; q < end && *q != '\n' && *q != '\r'; q++)
			;
		if (s->line.len + (size_t)(q - p) > s->max) {
			s->err = -SHIRO_ERR_TOOBIG;
			return s->err;
		}
		buf_add(&s->line, p, (size_t)(q - p));
		if (q == end)
			break;
		s->cr = *q == '\r';
		p = q + 1;
		rc = sse_field(s);
		buf_reset(&s->line);
		if (rc < 0) {
			s->err = rc;
			return rc;
		}
	}
	return 0;
}

/* sse_pending - whether the stream stopped inside an event. */
bool
sse_pending(const struct sse *s)
{
	return s->line.len > 0 || s->has_data || s->name.len > 0;
}
