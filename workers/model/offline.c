/*
 * offline.c - the `offline` wire: a deterministic extractive summarizer
 * that needs no network.
 *
 * Each input is first made safe: invalid UTF-8 becomes U+FFFD, control
 * characters become spaces, line ends and sentence ends split it into
 * segments, and a long segment splits further at its commas, semicolons
 * and colons: those are the clauses.  The line is then made of whole
 * clauses and tokens, in this order while they fit (offline.h):
 *
 *   1. the kind tags, "user: " or "user+shiro: ";
 *   2. the opening clause of each source, the user's first (cut at a
 *      word boundary when it alone is too long for its share);
 *   3. the clauses that report errors;
 *   4. the clauses that hold a path, a file name or an identifier;
 *   5. the paths, file names, identifiers and error names not said yet,
 *      each alone;
 *   6. the remaining clauses, in order;
 *   7. the numbers not said yet with their unit ("50 ms", "3 tests"): a
 *      bare number says nothing and stays out.
 *
 * Nothing goes in that would say a run of three words a second time, or
 * a key token twice: a merge of two lines that both list src/store.c
 * says it once.  Work is bounded: only the first OFFLINE_SCAN bytes of an
 * input are read, since a 512-byte line cannot use more.
 */
#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "proto/buf.h"
#include "proto/utf8.h"
#include "proto/xmalloc.h"
#include "workers/model/offline.h"

#define OFFLINE_SCAN (64u << 10) /* bytes read of each input */
#define OFFLINE_WORDS 8192 /* words kept of each input */
#define OFFLINE_TAGS 64 /* bytes of the tag list */
#define OFFLINE_SEP " / " /* between two sources that fit whole */
#define OFFLINE_CLAUSE 160 /* a longer segment splits at , ; : */
#define OFFLINE_RUN 3 /* words: a run this long is never said twice */
#define OFFLINE_LINE_WORDS 512 /* words of a line, at most */
#define OFFLINE_LONG_WORD 32 /* a longer word may be cut to fit */

static const char offline_repl[] = "\xef\xbf\xbd";

/* Kinds of key tokens. */
enum offline_tok {
	OFFLINE_NONE,
	OFFLINE_ERROR,
	OFFLINE_PATH,
	OFFLINE_NAME,
	OFFLINE_NUM
};

/* A word of a source: its bytes in the source's text. */
struct offline_word {
	size_t start, len; /* the word as written */
	size_t kstart, klen; /* trimmed of punctuation, for tokens */
	enum offline_tok kind;
	bool end; /* the last word of its segment */
};

/* A clause: words [first, first + n) of a source. */
struct offline_clause {
	size_t first, n;
	bool error, key, used;
};

/* An input, normalized and cut into words and clauses. */
struct offline_src {
	struct buf text; /* words split by ' ', segments by '\n' */
	bool user; /* the user's words (or a line that holds them) */
	struct offline_word *w;
	size_t nw;
	struct offline_clause *c;
	size_t nc;
};

/* The line being made: its bytes, its words' and its runs' hashes. */
struct offline_line {
	struct buf *out;
	size_t limit;
	uint64_t h[OFFLINE_LINE_WORDS]; /* each word */
	size_t nh;
	uint64_t run[OFFLINE_LINE_WORDS]; /* each run of OFFLINE_RUN words */
	size_t nrun;
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
	buf_adds(b, "");
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
	if (camel || memchr(w, '_', n) != NULL ||
	    (n > 2 && memmem(w, n, "::", 2) != NULL) ||
	    offline_ends(w, n, "()"))
		return OFFLINE_NAME;
	if (digit)
		return OFFLINE_NUM;
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

/* offline_words - cut src's text into words. */
static void
offline_words(struct offline_src *src)
{
	const char *t = src->text.data;
	size_t len = src->text.len, pos = 0, end;
	bool first = true;

	src->w = xreallocarray(NULL, OFFLINE_WORDS, sizeof(*src->w));
	while (pos < len && src->nw < OFFLINE_WORDS) {
		struct offline_word *w = &src->w[src->nw++];
		const char *k;
		size_t kn;

		for (end = pos; end < len && t[end] != ' ' && t[end] != '\n';
		     end++)
			;
		w->start = pos;
		w->len = end - pos;
		k = t + pos;
		kn = w->len;
		offline_trim(&k, &kn);
		w->kstart = (size_t)(k - t);
		w->klen = kn;
		w->kind = offline_classify(k, kn, first);
		w->end = end >= len || t[end] == '\n';
		first = w->end;
		pos = end + 1;
	}
	if (src->nw > 0)
		src->w[src->nw - 1].end = true;
}

/* offline_clauses - group src's words into clauses. */
static void
offline_clauses(struct offline_src *src)
{
	const char *t = src->text.data;
	size_t k = 0, bytes;

	src->c = xreallocarray(NULL, src->nw + 1, sizeof(*src->c));
	while (k < src->nw) {
		struct offline_clause *c = &src->c[src->nc++];
		size_t seg_end = k;

		/* The segment's length decides whether it splits further. */
		while (!src->w[seg_end].end)
			seg_end++;
		bytes = src->w[seg_end].start + src->w[seg_end].len -
		    src->w[k].start;
		memset(c, 0, sizeof(*c));
		c->first = k;
		for (;;) {
			const struct offline_word *w = &src->w[k];
			char last = w->len ? t[w->start + w->len - 1] : ' ';

			c->n++;
			if (w->kind == OFFLINE_ERROR)
				c->error = true;
			if (w->kind == OFFLINE_PATH || w->kind == OFFLINE_NAME)
				c->key = true;
			k++;
			if (w->end ||
			    (bytes > OFFLINE_CLAUSE &&
				strchr(",;:", last) != NULL))
				break;
		}
	}
}

/* offline_hash - a hash of a word, the same for the same bytes. */
static uint64_t
offline_hash(const char *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	size_t k;

	for (k = 0; k < n; k++) {
		h ^= (unsigned char)p[k];
		h *= 0x100000001b3ULL;
	}
	return h;
}

/* offline_run_hash - the hash of the run of words w[0..OFFLINE_RUN). */
static uint64_t
offline_run_hash(const uint64_t *w)
{
	uint64_t h = 0x9e3779b97f4a7c15ULL;
	size_t k;

	for (k = 0; k < OFFLINE_RUN; k++)
		h = (h ^ w[k]) * 0xff51afd7ed558ccdULL;
	return h;
}

/*
 * offline_runs - the runs that the words h[0..n), appended to the line,
 * would add (those that span the line's end too) into runs; their
 * number, or -1 when one of them is said already (by the line or by an
 * earlier new run) or the line would pass its word cap.
 */
static long
offline_runs(
    const struct offline_line *ln, const uint64_t *h, size_t n, uint64_t *runs)
{
	uint64_t all[OFFLINE_LINE_WORDS + OFFLINE_RUN];
	size_t back = ln->nh < OFFLINE_RUN - 1 ? ln->nh : OFFLINE_RUN - 1;
	size_t total = back + n, s, k;
	long m = 0;

	if (ln->nh + n > OFFLINE_LINE_WORDS)
		return -1;
	memcpy(all, ln->h + ln->nh - back, back * sizeof(*all));
	memcpy(all + back, h, n * sizeof(*all));
	for (s = 0; s + OFFLINE_RUN <= total; s++) {
		uint64_t r = offline_run_hash(all + s);

		for (k = 0; k < ln->nrun; k++)
			if (ln->run[k] == r)
				return -1;
		for (k = 0; k < (size_t)m; k++)
			if (runs[k] == r)
				return -1;
		runs[m++] = r;
	}
	return m;
}

/* offline_said - whether the line holds the word hashed h. */
static bool
offline_said(const struct offline_line *ln, uint64_t h)
{
	size_t k;

	for (k = 0; k < ln->nh; k++)
		if (ln->h[k] == h)
			return true;
	return false;
}

/* offline_fits - whether n more bytes (and a space) fit in the line. */
static bool
offline_fits(const struct offline_line *ln, size_t n)
{
	return ln->out->len + 1 + n <= ln->limit;
}

/*
 * offline_piece - append words [first, first + n) of src whole, if they
 * fit within budget and say nothing twice; true if they went in.
 */
static bool
offline_piece(struct offline_line *ln, const struct offline_src *src,
    size_t first, size_t n, size_t budget)
{
	const char *t = src->text.data;
	uint64_t h[OFFLINE_LINE_WORDS], runs[OFFLINE_LINE_WORDS];
	size_t k, bytes;
	long m;

	if (n == 0 || n > OFFLINE_LINE_WORDS)
		return false;
	bytes = src->w[first + n - 1].start + src->w[first + n - 1].len -
	    src->w[first].start;
	if (!offline_fits(ln, bytes) || ln->out->len + 1 + bytes > budget)
		return false;
	for (k = 0; k < n; k++) {
		const struct offline_word *w = &src->w[first + k];

		h[k] = offline_hash(t + w->kstart, w->klen);
		/* A key token is said once. */
		if (w->kind != OFFLINE_NONE && w->kind != OFFLINE_NUM &&
		    offline_said(ln, h[k]))
			return false;
	}
	if ((m = offline_runs(ln, h, n, runs)) < 0)
		return false;
	if (ln->out->len > 0 && ln->out->data[ln->out->len - 1] != ' ')
		buf_addc(ln->out, ' ');
	buf_add(ln->out, t + src->w[first].start, bytes);
	memcpy(ln->h + ln->nh, h, n * sizeof(*h));
	ln->nh += n;
	memcpy(ln->run + ln->nrun, runs, (size_t)m * sizeof(*runs));
	ln->nrun += (size_t)m;
	return true;
}

/*
 * offline_opening - as much of clause c as fits in budget, word by word,
 * stopping before a word that would say something twice; a word too long
 * for the budget is cut at a character boundary when it is the first, or
 * longer than OFFLINE_LONG_WORD (a run of bytes without spaces).
 */
static void
offline_opening(struct offline_line *ln, const struct offline_src *src,
    struct offline_clause *c, size_t budget)
{
	const struct offline_word *w;
	const char *t = src->text.data;
	size_t k, room, cut;
	uint64_t h, runs[OFFLINE_RUN];
	long m;

	for (k = 0; k < c->n; k++) {
		if (offline_piece(ln, src, c->first + k, 1, budget)) {
			c->used = true;
			continue;
		}
		w = &src->w[c->first + k];
		/* A word that does not fit may be cut when it is the first
		 * or a long run of bytes without spaces (else it would block
		 * the rest); one refused for saying something twice, never. */
		if ((k > 0 && w->len <= OFFLINE_LONG_WORD) ||
		    ln->out->len + 2 > budget ||
		    ln->out->len + 1 + w->len <= budget)
			break;
		room = budget - ln->out->len - 1;
		cut = utf8_floor(t + w->start, w->len, room);
		h = offline_hash(t + w->start, cut);
		if (cut == 0 || offline_said(ln, h) ||
		    (m = offline_runs(ln, &h, 1, runs)) < 0)
			break;
		buf_addc(ln->out, ' ');
		buf_add(ln->out, t + w->start, cut);
		ln->h[ln->nh++] = h;
		memcpy(ln->run + ln->nrun, runs, (size_t)m * sizeof(*runs));
		ln->nrun += (size_t)m;
		c->used = true;
		break;
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
		size_t j, start;

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

/* offline_order - the sources in the order they speak: the user's first. */
static void
offline_order(const struct offline_src *src, size_t n, size_t *order)
{
	size_t k, m = 0;

	for (k = 0; k < n; k++)
		if (src[k].user)
			order[m++] = k;
	for (k = 0; k < n; k++)
		if (!src[k].user)
			order[m++] = k;
}

/* offline_clause_pass - step 3, 4 or 6: whole clauses that qualify. */
static void
offline_clause_pass(struct offline_line *ln, struct offline_src *src,
    const size_t *order, size_t n, int which)
{
	size_t k, j;

	for (k = 0; k < n; k++) {
		struct offline_src *s = &src[order[k]];

		for (j = 0; j < s->nc; j++) {
			struct offline_clause *c = &s->c[j];

			if (c->used || (which == 3 && !c->error) ||
			    (which == 4 && !c->key))
				continue;
			if (offline_piece(ln, s, c->first, c->n, ln->limit))
				c->used = true;
		}
	}
}

/* offline_unit - whether word w of src is a unit a number goes with. */
static bool
offline_unit(const struct offline_src *src, const struct offline_word *w)
{
	static const char *const units[] = {"ms", "s", "sec", "secs", "second",
	    "seconds", "min", "minute", "minutes", "h", "hour", "hours", "day",
	    "days", "b", "byte", "bytes", "kb", "kib", "mb", "mib", "gb", "gib",
	    "%", "line", "lines", "test", "tests", "file", "files", "message",
	    "messages", "token", "tokens", "times", "errors", "warnings",
	    "calls", "requests", "retries", "workers", "jobs", NULL};

	return offline_lower_in(src->text.data + w->kstart, w->klen, units);
}

/* offline_named - whether a word has an upper case letter or a '_'. */
static bool
offline_named(const char *w, size_t n)
{
	size_t k;

	for (k = 0; k < n; k++)
		if (isupper((unsigned char)w[k]) || w[k] == '_')
			return true;
	return false;
}

/*
 * offline_token_pass - key tokens of kinds first..last not said yet:
 * paths, names and error names alone, numbers with their unit.
 */
static void
offline_token_pass(struct offline_line *ln, struct offline_src *src,
    const size_t *order, size_t n, enum offline_tok first,
    enum offline_tok last)
{
	enum offline_tok kind;
	size_t k, j;

	for (kind = first; kind <= last; kind++)
		for (k = 0; k < n; k++) {
			struct offline_src *s = &src[order[k]];

			for (j = 0; j < s->nw && ln->out->len + 2 < ln->limit;
			     j++) {
				const struct offline_word *w = &s->w[j];

				if (w->kind != kind)
					continue;
				/* A plain word such as "failed" says little
				 * alone: only names like ENOENT go in. */
				if (kind == OFFLINE_ERROR &&
				    !offline_named(
					s->text.data + w->kstart, w->klen))
					continue;
				if (kind != OFFLINE_NUM) {
					/* The token alone, trimmed. */
					struct offline_src one = *s;
					struct offline_word tw = *w;

					tw.start = w->kstart;
					tw.len = w->klen;
					one.w = &tw;
					offline_piece(
					    ln, &one, 0, 1, ln->limit);
					continue;
				}
				/* A bare number says nothing: only one with
				 * its unit ("50 ms", "3 tests") goes in,
				 * once. */
				if (!w->end && offline_unit(s, &s->w[j + 1]) &&
				    !offline_said(ln,
					offline_hash(
					    s->text.data + w->kstart, w->klen)))
					offline_piece(ln, s, j, 2, ln->limit);
			}
		}
}

/* offline_fill - the line when the sources do not fit whole. */
static void
offline_fill(struct offline_src *src, size_t n, struct buf *out, size_t limit,
    bool generous)
{
	struct offline_line ln;
	size_t order[MODEL_INPUTS_MAX], k, room, share;

	memset(&ln, 0, sizeof(ln));
	ln.out = out;
	ln.limit = limit;
	offline_order(src, n, order);
	room = limit > out->len ? limit - out->len : 0;
	/* The opening clauses share half the room (all of it when the
	 * line would otherwise stay short: see offline_summarize). */
	share = (generous ? room : room / 2) / (n ? n : 1);
	for (k = 0; k < n; k++)
		if (src[order[k]].nc > 0)
			offline_opening(&ln, &src[order[k]],
			    &src[order[k]].c[0], out->len + share);
	offline_clause_pass(&ln, src, order, n, 3);
	offline_clause_pass(&ln, src, order, n, 4);
	offline_token_pass(&ln, src, order, n, OFFLINE_ERROR, OFFLINE_NAME);
	offline_clause_pass(&ln, src, order, n, 6);
	offline_token_pass(&ln, src, order, n, OFFLINE_NUM, OFFLINE_NUM);
}

/* offline_reset_used - forget which clauses went in (for a second pass). */
static void
offline_reset_used(struct offline_src *src, size_t n)
{
	size_t k, j;

	for (k = 0; k < n; k++)
		for (j = 0; j < src[k].nc; j++)
			src[k].c[j].used = false;
}

/* offline_summarize - the line for n inputs into out. */
void
offline_summarize(
    const struct model_input *in, size_t n, size_t limit, struct buf *out)
{
	struct offline_src src[MODEL_INPUTS_MAX];
	struct buf tags = BUF_INIT;
	size_t k, cut, head;

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
		offline_words(&src[k]);
		offline_clauses(&src[k]);
	}
	if (tags.len == 0)
		buf_adds(&tags, "message");
	buf_add(out, tags.data, tags.len);
	buf_addc(out, ':');
	head = out->len;
	if (!offline_whole(src, n, out, limit)) {
		offline_fill(src, n, out, limit, false);
		/* Little said: the opening may take the whole room. */
		if (out->len <= head + (limit - head) / 2 + 1) {
			buf_truncate(out, head);
			offline_reset_used(src, n);
			offline_fill(src, n, out, limit, true);
		}
	}
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
		free(src[k].w);
		free(src[k].c);
	}
	buf_free(&tags);
}
