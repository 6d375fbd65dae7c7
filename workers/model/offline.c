/*
 * offline.c - the `offline` provider: a deterministic extractive
 * summarizer that needs no network.
 *
 * The text of each input is first made safe: invalid UTF-8 becomes
 * U+FFFD, control characters become spaces, line ends and sentence ends
 * split it into segments.  The line is then filled in priority order
 * (offline.h): tags, the user's words, error sentences, key tokens, the
 * rest.  Work is bounded: only the first OFFLINE_SCAN bytes of an input
 * are read, since a 512-byte line cannot use more.
 */
#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "proto/buf.h"
#include "proto/err.h"
#include "proto/utf8.h"
#include "proto/xmalloc.h"
#include "workers/model/offline.h"

#define OFFLINE_SCAN (64u << 10) /* bytes read of each input */
#define OFFLINE_SEGS 2048 /* segments kept of each input */
#define OFFLINE_TOKENS 96 /* key tokens kept in all */
#define OFFLINE_TOKEN_MAX 96 /* bytes of a key token */
#define OFFLINE_TAGS 64 /* bytes of the tag list */
#define OFFLINE_SEP " / " /* between two sources that fit whole */
#define OFFLINE_LONG_WORD 32 /* a longer word may be cut to fit */

static const char offline_repl[] = "\xef\xbf\xbd";

/* A segment: a sentence or a line of an input's normalized text. */
struct offline_seg {
	size_t start, len;
	size_t used; /* bytes of it already in the line */
	bool error; /* it reports an error */
};

/* An input, normalized. */
struct offline_src {
	struct buf text; /* words split by ' ', segments by '\n' */
	bool user; /* the user's words (or a line that holds them) */
	struct offline_seg *segs;
	size_t nsegs;
};

/* Kinds of key tokens, in the order they are kept. */
enum offline_tok {
	OFFLINE_NONE,
	OFFLINE_ERROR,
	OFFLINE_PATH,
	OFFLINE_NUM,
	OFFLINE_NAME
};

struct offline_token {
	enum offline_tok kind;
	const char *p;
	size_t len;
};

/* offline_space - a character of n bytes at s: 0 visible, 1 space, 2 end. */
static int
offline_space(const unsigned char *s, size_t n)
{
	if (n == 1 &&
	    (s[0] == '\n' || s[0] == '\r' || s[0] == '\f' || s[0] == '\v'))
		return 2;
	if (n == 1 && (s[0] <= 0x20 || s[0] == 0x7f))
		return 1;
	/* C1 controls and the no-break space. */
	if (n == 2 && s[0] == 0xc2 && (s[1] < 0xa0 || s[1] == 0xa0))
		return 1;
	/* U+2028 and U+2029, the line and paragraph separators. */
	if (n == 3 && s[0] == 0xe2 && s[1] == 0x80 &&
	    (s[2] == 0xa8 || s[2] == 0xa9))
		return 2;
	return 0;
}

/* offline_normalize - safe text of s into b: see the top of this file. */
static void
offline_normalize(const char *s, size_t len, struct buf *b)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t pos = 0, n;
	int pend = 0, kind;
	char last;

	if (len > OFFLINE_SCAN)
		len = OFFLINE_SCAN;
	while (pos < len) {
		n = utf8_char_len(s + pos, len - pos);
		kind = n == 0 ? 0 : offline_space(u + pos, n);
		if (kind != 0) {
			if (kind > pend)
				pend = kind;
			pos += n;
			continue;
		}
		if (pend != 0 && b->len > 0) {
			last = b->data[b->len - 1];
			/* A sentence end before a space ends a segment. */
			if (pend == 1 && strchr(".!?;", last) != NULL)
				pend = 2;
			buf_addc(b, pend == 2 ? '\n' : ' ');
		}
		pend = 0;
		if (n == 0) {
			/* A run of invalid bytes becomes one U+FFFD. */
			if (b->len < 3 ||
			    memcmp(b->data + b->len - 3, offline_repl, 3) != 0)
				buf_add(b, offline_repl, 3);
			pos++;
			continue;
		}
		buf_add(b, s + pos, n);
		pos += n;
	}
}

/* offline_lower_in - whether the word w (n bytes) is in the list. */
static bool
offline_lower_in(const char *w, size_t n, const char *const *list)
{
	char low[24];
	size_t k;

	if (n >= sizeof(low))
		return false;
	for (k = 0; k < n; k++)
		low[k] = (char)tolower((unsigned char)w[k]);
	low[n] = '\0';
	for (; *list != NULL; list++)
		if (strcmp(low, *list) == 0)
			return true;
	return false;
}

/* offline_ends - whether w (n bytes) ends with suffix. */
static bool
offline_ends(const char *w, size_t n, const char *suffix)
{
	size_t k = strlen(suffix);

	return n > k && memcmp(w + n - k, suffix, k) == 0;
}

/* offline_is_error - whether a word names an error. */
static bool
offline_is_error(const char *w, size_t n)
{
	static const char *const words[] = {"error", "errors", "failed",
	    "failure", "fails", "fatal", "panic", "exception", "traceback",
	    "denied", "refused", "segfault", "abort", "aborted", "crash",
	    "crashed", "errno", "timeout", "cannot", "undefined", "warning",
	    NULL};
	size_t k;

	if (offline_lower_in(w, n, words))
		return true;
	if (offline_ends(w, n, "Error") || offline_ends(w, n, "Exception"))
		return true;
	/* errno names such as ENOENT. */
	if (n >= 4 && w[0] == 'E') {
		for (k = 1; k < n && isupper((unsigned char)w[k]); k++)
			;
		if (k == n)
			return true;
	}
	return false;
}

/* offline_classify - the kind of key token w is (after trimming). */
static enum offline_tok
offline_classify(const char *w, size_t n, bool first)
{
	size_t k, dot = 0;
	bool digit = false, lower = false, camel = false, alpha = true;

	if (n == 0)
		return OFFLINE_NONE;
	if (offline_is_error(w, n))
		return OFFLINE_ERROR;
	if ((n >= 2 && memchr(w, '/', n) != NULL) || memchr(w, '\\', n))
		return OFFLINE_PATH;
	for (k = 0; k < n; k++) {
		unsigned char c = (unsigned char)w[k];

		if (isdigit(c))
			digit = true;
		if (c == '.')
			dot = k;
		if (islower(c))
			lower = true;
		else if (isupper(c) && lower)
			camel = true;
		if (!isalpha(c))
			alpha = false;
	}
	/* name.ext: a file name. */
	if (dot > 0 && dot + 1 < n && isalpha((unsigned char)w[dot + 1]) &&
	    n - dot - 1 <= 6 && !digit)
		return OFFLINE_PATH;
	if (digit)
		return OFFLINE_NUM;
	if (camel || memchr(w, '_', n) != NULL ||
	    (n > 2 && memmem(w, n, "::", 2) != NULL) ||
	    offline_ends(w, n, "()"))
		return OFFLINE_NAME;
	/* A capitalized word inside a sentence: a proper name. */
	if (!first && alpha && n >= 2 && isupper((unsigned char)w[0]))
		return OFFLINE_NAME;
	return OFFLINE_NONE;
}

/* offline_trim - strip the punctuation around a word. */
static void
offline_trim(const char **wp, size_t *np)
{
	const char *w = *wp;
	size_t n = *np;

	while (n > 0 && strchr("([{<\"'`", w[0]) != NULL) {
		w++;
		n--;
	}
	while (n > 0 && strchr(")]}>\"'`,.;:!?", w[n - 1]) != NULL) {
		/* Keep the parentheses of a call such as main(). */
		if (n >= 2 && w[n - 1] == ')' && w[n - 2] == '(')
			break;
		n--;
	}
	*wp = w;
	*np = n;
}

/* offline_segment - split src's text into segments; mark error ones. */
static void
offline_segment(
    struct offline_src *src, struct offline_token *toks, size_t *ntoks)
{
	const char *t = src->text.data;
	size_t len = src->text.len, pos = 0, end, w, we;

	src->segs = xreallocarray(NULL, OFFLINE_SEGS, sizeof(*src->segs));
	while (pos < len && src->nsegs < OFFLINE_SEGS) {
		struct offline_seg *sg = &src->segs[src->nsegs++];
		const char *nl = memchr(t + pos, '\n', len - pos);

		end = nl ? (size_t)(nl - t) : len;
		sg->start = pos;
		sg->len = end - pos;
		sg->used = 0;
		sg->error = false;
		for (w = pos; w < end; w = we + 1) {
			const char *word = t + w;
			const char *sp = memchr(word, ' ', end - w);
			size_t n;
			enum offline_tok kind;

			we = sp ? (size_t)(sp - t) : end;
			n = we - w;
			offline_trim(&word, &n);
			kind = offline_classify(word, n, w == pos);
			if (kind == OFFLINE_ERROR)
				sg->error = true;
			if (kind != OFFLINE_NONE && n <= OFFLINE_TOKEN_MAX &&
			    *ntoks < OFFLINE_TOKENS) {
				toks[*ntoks].kind = kind;
				toks[*ntoks].p = word;
				toks[*ntoks].len = n;
				(*ntoks)++;
			}
		}
		pos = end + 1;
	}
}

/* offline_tag_ok - whether s (n bytes) looks like a kind tag list. */
static bool
offline_tag_ok(const char *s, size_t n)
{
	size_t k;

	if (n == 0 || n > OFFLINE_TAGS || !islower((unsigned char)s[0]))
		return false;
	for (k = 0; k < n; k++)
		if (!islower((unsigned char)s[k]) &&
		    !isdigit((unsigned char)s[k]) && s[k] != '+' &&
		    s[k] != '_' && s[k] != '-')
			return false;
	return true;
}

/* offline_add_tags - add the tags of list (split by '+') to tags. */
static void
offline_add_tags(struct buf *tags, const char *list, size_t n)
{
	size_t pos = 0, end;

	while (pos < n) {
		const char *plus = memchr(list + pos, '+', n - pos);
		const char *have;

		end = plus ? (size_t)(plus - list) : n;
		if (end > pos) {
			/* Already listed? Compare whole tags only. */
			bool dup = false;

			for (have = tags->data;
			     have != NULL && *have != '\0';) {
				const char *e = strchr(have, '+');
				size_t hl =
				    e ? (size_t)(e - have) : strlen(have);

				if (hl == end - pos &&
				    memcmp(have, list + pos, hl) == 0)
					dup = true;
				have = e ? e + 1 : NULL;
			}
			if (!dup &&
			    tags->len + 1 + (end - pos) <= OFFLINE_TAGS) {
				if (tags->len > 0)
					buf_addc(tags, '+');
				buf_add(tags, list + pos, end - pos);
			}
		}
		pos = end + 1;
	}
}

/* offline_fits - whether n more bytes (and a space) fit in out. */
static bool
offline_fits(const struct buf *out, size_t n, size_t limit)
{
	return out->len + 1 + n <= limit;
}

/* offline_put - append a space (unless out ends in one) and n bytes. */
static void
offline_put(struct buf *out, const char *p, size_t n)
{
	if (out->len > 0 && out->data[out->len - 1] != ' ')
		buf_addc(out, ' ');
	buf_add(out, p, n);
}

/*
 * offline_words - append the words of segment sg from where it stopped,
 * while out stays within budget.  A word too long for the room left is
 * cut at a character boundary when it is the first word and cut is set,
 * or when it is longer than OFFLINE_LONG_WORD (a run of bytes with no
 * spaces would otherwise block the rest).  Returns false when a word did
 * not fit whole.
 */
static bool
offline_words(struct buf *out, const struct offline_src *src,
    struct offline_seg *sg, size_t budget, bool cut)
{
	const char *t = src->text.data + sg->start;
	size_t pos = sg->used, we, n, room;

	while (pos < sg->len) {
		const char *sp = memchr(t + pos, ' ', sg->len - pos);

		we = sp ? (size_t)(sp - t) : sg->len;
		n = we - pos;
		if (!offline_fits(out, n, budget)) {
			if ((!cut && n <= OFFLINE_LONG_WORD) ||
			    out->len + 2 > budget)
				return false;
			room = budget - out->len - 1;
			n = utf8_floor(t + pos, sg->len - pos, room);
			if (n == 0)
				return false;
			offline_put(out, t + pos, n);
			sg->used = pos + n;
			return false;
		}
		offline_put(out, t + pos, n);
		pos = we + 1;
		sg->used = pos > sg->len ? sg->len : pos;
		cut = false;
	}
	sg->used = sg->len;
	return true;
}

/* offline_whole - the sources joined, when they fit whole in limit. */
static bool
offline_whole(struct offline_src *src, size_t n, struct buf *out, size_t limit)
{
	size_t k, total = out->len;

	for (k = 0; k < n; k++)
		total += src[k].text.len + (k ? strlen(OFFLINE_SEP) : 1);
	if (total > limit)
		return false;
	for (k = 0; k < n; k++) {
		size_t j, start = out->len;

		if (k > 0)
			buf_adds(out, OFFLINE_SEP);
		else
			buf_addc(out, ' ');
		start = out->len;
		buf_add(out, src[k].text.data, src[k].text.len);
		for (j = start; j < out->len; j++)
			if (out->data[j] == '\n')
				out->data[j] = ' ';
	}
	return true;
}

/* offline_fill - the line when the sources do not fit whole. */
static void
offline_fill(struct offline_src *src, size_t n, struct offline_token *toks,
    size_t ntoks, struct buf *out, size_t limit)
{
	size_t k, s, half = out->len + (limit - out->len) / 2;
	enum offline_tok kind;

	/* The user's words first, up to half of the room. */
	for (k = 0; k < n; k++) {
		if (!src[k].user)
			continue;
		for (s = 0; s < src[k].nsegs; s++)
			if (!offline_words(
				out, &src[k], &src[k].segs[s], half, s == 0))
				break;
		break;
	}
	/* Then sentences that report errors, whole. */
	for (k = 0; k < n; k++)
		for (s = 0; s < src[k].nsegs; s++) {
			struct offline_seg *sg = &src[k].segs[s];

			if (sg->error && sg->used == 0 &&
			    offline_fits(out, sg->len, limit))
				offline_words(out, &src[k], sg, limit, false);
		}
	/* Then names, paths and numbers not in the line yet, whole. */
	for (kind = OFFLINE_ERROR; kind <= OFFLINE_NAME; kind++)
		for (k = 0; k < ntoks; k++) {
			if (toks[k].kind != kind ||
			    !offline_fits(out, toks[k].len, limit) ||
			    memmem(out->data, out->len, toks[k].p,
				toks[k].len) != NULL)
				continue;
			offline_put(out, toks[k].p, toks[k].len);
		}
	/* Then the rest in order, the user's first, while words fit. */
	for (k = 0; k < n; k++)
		for (s = 0; s < src[k].nsegs; s++) {
			struct offline_seg *sg = &src[k].segs[s];

			if (sg->used < sg->len &&
			    !offline_words(out, &src[k], sg, limit, false))
				return;
		}
}

/* offline_summarize - the line for n inputs into out. */
void
offline_summarize(
    const struct model_input *in, size_t n, size_t limit, struct buf *out)
{
	struct offline_src src[MODEL_INPUTS_MAX];
	struct offline_token toks[OFFLINE_TOKENS];
	struct buf tags = BUF_INIT;
	size_t k, ntoks = 0, cut;

	if (n > MODEL_INPUTS_MAX)
		n = MODEL_INPUTS_MAX;
	if (limit < 16)
		limit = 16;
	memset(src, 0, sizeof(src));
	buf_reset(out);
	buf_adds(&tags, "");
	for (k = 0; k < n; k++) {
		const char *t = in[k].text ? in[k].text : "";
		size_t len = in[k].text ? in[k].len : 0;
		const char *colon = memchr(t, ':', len < 80 ? len : 80);

		if (in[k].kind != NULL) {
			size_t kl = strlen(in[k].kind);

			if (offline_tag_ok(in[k].kind, kl))
				offline_add_tags(&tags, in[k].kind, kl);
			else
				offline_add_tags(&tags, "message", 7);
			src[k].user = strcmp(in[k].kind, "user") == 0;
		} else if (colon != NULL && colon + 1 < t + len &&
		    colon[1] == ' ' && offline_tag_ok(t, (size_t)(colon - t))) {
			/* A child line: its tags, then its text. */
			offline_add_tags(&tags, t, (size_t)(colon - t));
			src[k].user =
			    memmem(t, (size_t)(colon - t), "user", 4) != NULL;
			len -= (size_t)(colon + 2 - t);
			t = colon + 2;
		}
		offline_normalize(t, len, &src[k].text);
		offline_segment(&src[k], toks, &ntoks);
	}
	if (tags.len == 0)
		buf_adds(&tags, "message");
	buf_add(out, tags.data, tags.len);
	buf_addc(out, ':');
	if (!offline_whole(src, n, out, limit))
		offline_fill(src, n, toks, ntoks, out, limit);
	/* The limit holds whatever happened above; no trailing space. */
	cut = utf8_floor(out->data, out->len, limit);
	while (cut > 0 && out->data[cut - 1] == ' ')
		cut--;
	buf_truncate(out, cut);
	if (out->len <= tags.len + 1) {
		buf_truncate(out, utf8_floor(out->data, out->len, limit - 8));
		buf_adds(out, " (empty)");
	}
	for (k = 0; k < n; k++) {
		buf_free(&src[k].text);
		free(src[k].segs);
	}
	buf_free(&tags);
}
