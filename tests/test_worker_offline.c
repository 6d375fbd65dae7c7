/*
 * test_worker_offline - the offline summarizer's lines: never past the
 * limit whatever the input (huge, binary, invalid UTF-8, only newlines,
 * one endless word), always valid one-line UTF-8 led by the kind tags,
 * the user's words first, the opening clause of each source, paths,
 * names and errors kept exactly when they fit, numbers only with their
 * unit, no run of three words said twice, each path once, and the same
 * line for the same input.
 */
#include <stdlib.h>
#include <string.h>

#include "proto/buf.h"
#include "proto/utf8.h"
#include "proto/xmalloc.h"
#include "tests/harness.h"
#include "workers/model/offline.h"

/* msg_in - a message input. */
static struct model_input
msg_in(const char *kind, const char *text, size_t len)
{
	struct model_input in = {0, 1, kind, text, len};

	return in;
}

/* line_in - a child line input (for a merge). */
static struct model_input
line_in(const char *text)
{
	struct model_input in = {0, 1, NULL, text, strlen(text)};

	return in;
}

/* check_line - the invariants every line keeps. */
static void
check_line(const struct buf *out, size_t limit)
{
	size_t k;

	CHECKF(out->len >= 1 && out->len <= limit, "%zu bytes", out->len);
	CHECK(utf8_valid(out->data, out->len));
	for (k = 0; k < out->len; k++)
		CHECKF(
		    (unsigned char)out->data[k] >= 0x20 && out->data[k] != 0x7f,
		    "control byte at %zu", k);
	CHECK(out->data[out->len - 1] != ' ');
	CHECK(strchr(out->data, ':') != NULL);
}

/* summarize - one input's line, checked. */
static void
summarize(const struct model_input *in, size_t n, struct buf *out)
{
	offline_summarize(in, n, 512, out);
	check_line(out, 512);
}

/* A message that fits is kept word for word after its tag. */
static void
short_message_stays_whole(void)
{
	struct buf out = BUF_INIT;
	struct model_input in = msg_in("user", "hello\nthere  world", 18);

	summarize(&in, 1, &out);
	CHECK_EQ_STR(out.data, "user: hello there world");
	in = msg_in("note", "remember: tabs", 14);
	summarize(&in, 1, &out);
	CHECK_EQ_STR(out.data, "note: remember: tabs");
	in = msg_in("We!rd Kind", "x", 1);
	summarize(&in, 1, &out);
	CHECK_EQ_STR(out.data, "message: x");
	buf_free(&out);
}

/* Two lines that fit are joined; their tags go first, user first. */
static void
merge_joins_lines_and_tags(void)
{
	struct buf out = BUF_INIT;
	struct model_input in[2];

	in[0] = line_in("shiro: I fixed it");
	in[1] = line_in("user: thanks, now ship it");
	summarize(in, 2, &out);
	CHECK_EQ_STR(out.data, "shiro+user: I fixed it / thanks, now ship it");
	in[0] = line_in("user+tool: ran make");
	in[1] = line_in("tool+shiro: 3 tests failed");
	summarize(in, 2, &out);
	CHECK_EQ_STR(out.data, "user+tool+shiro: ran make / 3 tests failed");
	buf_free(&out);
}

/* filler - n bytes of ordinary prose, deterministic. */
static char *
filler(size_t n)
{
	static const char *const words[] = {"the", "model", "thinks", "about",
	    "many", "things", "while", "working", "on", "some", "code"};
	char *s = xmalloc(n + 1);
	size_t k = 0, w = 0;

	while (k < n) {
		const char *word = words[w++ % 11];
		size_t len = strlen(word);

		if (k + len + 1 > n)
			break;
		memcpy(s + k, word, len);
		k += len;
		s[k++] = ' ';
	}
	memset(s + k, 'x', n - k);
	s[n] = '\0';
	return s;
}

/* In a long message the user's first words lead, and key tokens stay. */
static void
long_message_keeps_key_tokens(void)
{
	struct buf out = BUF_INIT;
	struct model_input in;
	char *text = filler(20000);
	const char *keep[] = {"src/broker/loop.c", "4096", "ENOENT",
	    "handle_frame()", "MAX_FRAMES", "config.json"};
	size_t k;

	memcpy(text, "Please look at the crash", 24);
	memcpy(text + 5000, " src/broker/loop.c ", 19);
	memcpy(text + 8000, " read 4096 bytes. ", 18);
	memcpy(text + 9000, ". open failed: ENOENT. ", 23);
	memcpy(text + 12000, " handle_frame() ", 16);
	memcpy(text + 15000, " MAX_FRAMES ", 12);
	memcpy(text + 19000, " config.json ", 13);
	in = msg_in("user", text, strlen(text));
	summarize(&in, 1, &out);
	CHECK(strncmp(out.data, "user: Please look at the crash", 30) == 0);
	for (k = 0; k < sizeof(keep) / sizeof(keep[0]); k++)
		CHECKF(strstr(out.data, keep[k]) != NULL, "%s lost in: %s",
		    keep[k], out.data);
	/* The error's sentence is kept whole. */
	CHECKF(
	    strstr(out.data, "open failed: ENOENT.") != NULL, "%s", out.data);
	free(text);
	buf_free(&out);
}

/* The user's words come first in a merge too. */
static void
user_words_first_in_merge(void)
{
	struct buf out = BUF_INIT;
	struct model_input in[2];
	char *a = filler(500), *b = filler(500), *la, *lb;

	la = xasprintf("shiro: %s", a);
	memcpy(b, "deploy to prod-7 tonight", 24);
	lb = xasprintf("user: %s", b);
	in[0] = line_in(la);
	in[1] = line_in(lb);
	summarize(in, 2, &out);
	CHECKF(
	    strncmp(out.data, "shiro+user: deploy to prod-7 tonight", 36) == 0,
	    "%s", out.data);
	free(a);
	free(b);
	free(la);
	free(lb);
	buf_free(&out);
}

/* The same input gives the same line. */
static void
deterministic(void)
{
	struct buf x = BUF_INIT, y = BUF_INIT;
	char *text = filler(10000);
	struct model_input in = msg_in("tool", text, 10000);

	summarize(&in, 1, &x);
	summarize(&in, 1, &y);
	CHECK(x.len == y.len && memcmp(x.data, y.data, x.len) == 0);
	free(text);
	buf_free(&x);
	buf_free(&y);
}

/* Adversarial inputs: the line stays within the limit and valid. */
static void
adversarial_inputs_stay_in_bounds(void)
{
	struct buf out = BUF_INIT;
	struct model_input in[2];
	size_t big = 1u << 20, k, limit;
	char *s = xmalloc(big);
	unsigned seed = 12345;

	/* Random bytes (binary, invalid UTF-8, NULs, controls). */
	for (k = 0; k < big; k++) {
		seed = seed * 1103515245u + 12345u;
		s[k] = (char)(seed >> 16);
	}
	in[0] = msg_in("tool", s, big);
	summarize(in, 1, &out);
	/* Only newlines; only spaces; nothing at all. */
	memset(s, '\n', big);
	in[0] = msg_in("user", s, big);
	summarize(in, 1, &out);
	CHECK_EQ_STR(out.data, "user: (empty)");
	in[0] = msg_in("user", s, 0);
	summarize(in, 1, &out);
	in[0] = msg_in("user", NULL, 0);
	summarize(in, 1, &out);
	/* One endless word; endless multibyte text cut mid-way. */
	memset(s, 'a', big);
	in[0] = msg_in("user", s, big);
	summarize(in, 1, &out);
	CHECK(out.len > 400);
	for (k = 0; k + 3 <= big; k += 3)
		memcpy(s + k, "\xe6\x97\xa5", 3);
	in[0] = msg_in("user", s, big - big % 3);
	summarize(in, 1, &out);
	CHECK(out.len > 400);
	/* Invalid sequences: lone continuation, overlong, surrogate. */
	for (k = 0; k + 4 <= big; k += 4)
		memcpy(s + k, k % 8 ? "\x80\xc0\xaf " : "\xed\xa0\x80 ", 4);
	in[0] = msg_in("user", s, big);
	in[1] = line_in("user: \xff\xfe");
	summarize(in, 2, &out);
	/* A merge of two full lines; tiny limits. */
	memset(s, 'b', 512);
	memcpy(s, "user: ", 6);
	s[512] = '\0';
	in[0] = line_in(s);
	in[1] = line_in(s);
	summarize(in, 2, &out);
	for (limit = 16; limit < 64; limit++) {
		offline_summarize(in, 2, limit, &out);
		check_line(&out, limit);
	}
	free(s);
	buf_free(&out);
}

/* word_at - the next word of s from *pos, trimmed of punctuation. */
static size_t
word_at(const char *s, size_t *pos, const char **wp)
{
	size_t start, end;

	while (s[*pos] == ' ')
		(*pos)++;
	start = *pos;
	while (s[*pos] != '\0' && s[*pos] != ' ')
		(*pos)++;
	end = *pos;
	while (start < end && strchr("([{<\"'`", s[start]) != NULL)
		start++;
	while (end > start && strchr(")]}>\"'`,.;:!?", s[end - 1]) != NULL &&
	    !(end - start >= 2 && s[end - 1] == ')' && s[end - 2] == '('))
		end--;
	*wp = s + start;
	return end - start;
}

/* check_no_repeated_run - no run of 3 words appears twice in line. */
static void
check_no_repeated_run(const char *line)
{
	const char *w[512];
	size_t len[512], n = 0, pos = 0, a, b, k;

	while (line[pos] != '\0' && n < 512) {
		len[n] = word_at(line, &pos, &w[n]);
		n++;
	}
	for (a = 0; a + 3 <= n; a++)
		for (b = a + 1; b + 3 <= n; b++) {
			for (k = 0; k < 3 && len[a + k] == len[b + k] &&
			     memcmp(w[a + k], w[b + k], len[a + k]) == 0;
			     k++)
				;
			CHECKF(k < 3, "\"%.*s %.*s %.*s\" twice in: %s",
			    (int)len[a], w[a], (int)len[a + 1], w[a + 1],
			    (int)len[a + 2], w[a + 2], line);
		}
}

/* count - how many times needle occurs in s. */
static int
count(const char *s, const char *needle)
{
	int n = 0;

	for (s = strstr(s, needle); s != NULL; s = strstr(s + 1, needle))
		n++;
	return n;
}

/*
 * A merge of two long lines that both list the same paths says each
 * path once, keeps the opening clause of each line, and never says a run
 * of three words twice.
 */
static void
merge_says_things_once(void)
{
	struct buf out = BUF_INIT, a = BUF_INIT, b = BUF_INIT;
	struct model_input in[2];
	int k;

	buf_adds(&a, "user+shiro: The user asked for a fix of the build. ");
	buf_adds(&b, "tool+shiro: make check failed twice in the store. ");
	for (k = 0; k < 12; k++) {
		buf_printf(&a,
		    "Step %d touched src/store.c and src/fix.c "
		    "again, as before. ",
		    k);
		buf_printf(&b,
		    "Run %d read src/store.c and src/fix.c, and "
		    "the same thing happened. ",
		    k);
	}
	buf_adds(&a, "src/store.c src/fix.c");
	buf_adds(&b, "src/store.c src/fix.c");
	in[0] = line_in(a.data);
	in[1] = line_in(b.data);
	summarize(in, 2, &out);
	CHECKF(strncmp(out.data,
		   "user+shiro+tool: The user asked for a fix "
		   "of the build.",
		   54) == 0,
	    "%s", out.data);
	CHECKF(
	    strstr(out.data, "make check failed twice in the store.") != NULL,
	    "%s", out.data);
	CHECKF(count(out.data, "src/store.c") == 1, "%s", out.data);
	CHECKF(count(out.data, "src/fix.c") == 1, "%s", out.data);
	check_no_repeated_run(out.data);
	buf_free(&a);
	buf_free(&b);
	buf_free(&out);
}

/*
 * A number goes in with its unit, never bare: in a long text, "took 50
 * ms" gives "50 ms", while the numbers of sentences left out stay out.
 */
static void
numbers_only_with_their_unit(void)
{
	struct buf out = BUF_INIT;
	struct model_input in;
	char *text = filler(20000);

	memcpy(text, "Look at the build", 17);
	memcpy(text + 3000, " lost 7734 and 9163 here ", 25);
	memcpy(text + 9000, " it took 50 ms then ", 20);
	in = msg_in("tool", text, strlen(text));
	summarize(&in, 1, &out);
	CHECKF(strstr(out.data, "50 ms") != NULL, "%s", out.data);
	CHECKF(strstr(out.data, "7734") == NULL, "%s", out.data);
	CHECKF(strstr(out.data, "9163") == NULL, "%s", out.data);
	check_no_repeated_run(out.data);
	free(text);
	buf_free(&out);
}

/* Composed lines never repeat a run, whatever the input (a sample). */
static void
no_run_is_said_twice(void)
{
	struct buf out = BUF_INIT, a = BUF_INIT;
	struct model_input in[2];
	unsigned seed = 7;
	int round, k;
	static const char *const words[] = {"the", "build", "failed", "in",
	    "src/a.c", "src/b.c", "again", "ENOENT", "50", "ms", "and", "then",
	    "it", "passed.", "make", "check", "42", "tests", "x_y", "Retry."};

	for (round = 0; round < 200; round++) {
		buf_reset(&a);
		for (k = 0; k < 300; k++) {
			seed = seed * 1103515245u + 12345u;
			buf_printf(&a, "%s ", words[(seed >> 16) % 20]);
		}
		in[0] = msg_in(round % 2 ? "user" : "tool", a.data, a.len);
		in[1] = line_in(a.data);
		summarize(in, 1 + (size_t)(round % 2), &out);
		check_no_repeated_run(out.data);
	}
	buf_free(&a);
	buf_free(&out);
}

/* A long run without spaces after a short word is cut, not dropped. */
static void
long_run_after_a_word_is_cut(void)
{
	struct buf out = BUF_INIT;
	struct model_input in;
	char text[700];

	memcpy(text, "m1 ", 3);
	memset(text + 3, 'x', 600);
	text[603] = '\0';
	in = msg_in("user", text, strlen(text));
	summarize(&in, 1, &out);
	CHECKF(out.len > 400 && strncmp(out.data, "user: m1 xxx", 12) == 0,
	    "%zu bytes: %.40s", out.len, out.data);
	buf_free(&out);
}

static const struct harness_test tests[] = {
    HT(short_message_stays_whole),
    HT(merge_joins_lines_and_tags),
    HT(long_message_keeps_key_tokens),
    HT(user_words_first_in_merge),
    HT(deterministic),
    HT(adversarial_inputs_stay_in_bounds),
    HT(merge_says_things_once),
    HT(numbers_only_with_their_unit),
    HT(no_run_is_said_twice),
    HT(long_run_after_a_word_is_cut),
};

HARNESS_MAIN(tests)
