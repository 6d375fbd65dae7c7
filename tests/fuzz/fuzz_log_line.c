/*
 * fuzz_log_line - libFuzzer target for the decoder of a log line (one
 * line of chat/main/YYYY-MM-DD.jsonl, without its newline).
 *
 * A day file on disk can be damaged in any way, so the decoder sees
 * arbitrary bytes.  Whatever they are it must return without a crash, a
 * leak or an overread, with a reason when it refuses.  A line it accepts
 * must hold values within the store's limits (a known kind, a text of at
 * most STORE_TEXT_MAX bytes of valid UTF-8 whose length is the size, a
 * key of 1 to STORE_KEY_MAX bytes without NUL, a date after 1970), must
 * encode again as one line the scanner accepts (no newline inside, at
 * most STORE_LINE_MAX bytes), and that line must decode to the same
 * message and encode to the same bytes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto/buf.h"
#include "proto/log.h"
#include "proto/utf8.h"
#include "store/store_int.h"
#include "tests/fuzz/fuzz_util.h"

/* fuzz_check_rec - r holds values within the store's limits. */
static void
fuzz_check_rec(const struct store_line_rec *r)
{
	size_t kl;

	if (r->id > (uint64_t)INT64_MAX)
		panic("id %llu past what the index keeps",
		    (unsigned long long)r->id);
	if ((unsigned)r->kind >= STORE_KIND_COUNT ||
	    store_kind_name(r->kind) == NULL)
		panic("kind %d is not a kind", (int)r->kind);
	if (r->len > STORE_TEXT_MAX || r->size != r->len)
		panic("text of %zu bytes, size %u", r->len, r->size);
	if (r->len > 0 && !utf8_valid(r->text, r->len))
		panic("the text is not valid UTF-8");
	if (r->date_ms < 0)
		panic("a date before 1970: %lld", (long long)r->date_ms);
	if (r->key != NULL) {
		kl = strlen(r->key);
		if (kl == 0 || kl > STORE_KEY_MAX)
			panic("a key of %zu bytes", kl);
	}
}

/* fuzz_same - a and b are the same message. */
static int
fuzz_same(const struct store_line_rec *a, const struct store_line_rec *b)
{
	return a->id == b->id && a->kind == b->kind && a->len == b->len &&
	    a->size == b->size && a->date_ms == b->date_ms &&
	    (a->len == 0 || memcmp(a->text, b->text, a->len) == 0) &&
	    (a->key == NULL) == (b->key == NULL) &&
	    (a->key == NULL || strcmp(a->key, b->key) == 0);
}

/* fuzz_encode - the line of r, newline included, into out. */
static void
fuzz_encode(const struct store_line_rec *r, struct buf *out)
{
	struct store_msg_in m;

	memset(&m, 0, sizeof(m));
	m.kind = r->kind;
	m.text = r->text;
	m.len = r->len;
	m.key = r->key;
	m.date_ms = r->date_ms;
	if (store_log_encode(out, r->id, &m, r->date_ms) != 0)
		panic("a line that decodes does not encode");
}

/* LLVMFuzzerTestOneInput - decode one line and check what comes out. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct store_line_rec r, again;
	struct buf line = BUF_INIT, line2 = BUF_INIT;
	const char *why = NULL;

	if (store_log_decode((const char *)data, size, &r, &why) != 0) {
		if (why == NULL || why[0] == '\0' || r.json != NULL)
			panic("a refused line without a reason");
		return 0;
	}
	fuzz_check_rec(&r);
	fuzz_encode(&r, &line);
	if (line.len < 2 || line.len > STORE_LINE_MAX ||
	    line.data[line.len - 1] != '\n' ||
	    memchr(line.data, '\n', line.len - 1) != NULL)
		panic("the encoding is not one line of the log (%zu bytes)",
		    line.len);
	if (store_log_decode(line.data, line.len - 1, &again, &why) != 0)
		panic("our own line is refused: %s", why);
	if (!fuzz_same(&r, &again))
		panic("decode(encode(x)) is not x");
	fuzz_encode(&again, &line2);
	if (line2.len != line.len || memcmp(line.data, line2.data, line.len))
		panic("encode(decode(encode(x))) differs");
	store_log_done(&r);
	store_log_done(&again);
	buf_free(&line);
	buf_free(&line2);
	return 0;
}
