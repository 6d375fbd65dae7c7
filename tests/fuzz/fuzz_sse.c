/*
 * fuzz_sse - libFuzzer target for the server-sent events parser.
 *
 * An input is a byte that picks how to cut the rest into pieces, then
 * the stream.  Whatever the bytes, the parser must return without a
 * crash, a leak or an overread, keep every event within its cap, and
 * give the same events and the same error however the stream is cut
 * (one piece, or pieces of 1 to 16 bytes).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto/buf.h"
#include "proto/log.h"
#include "workers/model/sse.h"

#define FUZZ_MAX 256 /* a small cap, so that the fuzzer reaches it */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* fuzz_event - record one event as name NUL data-length data. */
static int
fuzz_event(void *arg, const char *name, const char *d, size_t len)
{
	struct buf *b = arg;
	size_t nl = strlen(name);

	if (nl == 0 || nl > FUZZ_MAX || len > FUZZ_MAX)
		panic("an event past the cap: name %zu, data %zu", nl, len);
	buf_add(b, name, nl + 1);
	buf_add(b, &len, sizeof(len));
	buf_add(b, d, len);
	return 0;
}

/* fuzz_run - parse p in pieces of step bytes (0: one piece). */
static int
fuzz_run(const char *p, size_t n, size_t step, struct buf *out)
{
	struct sse s;
	size_t k, m;
	int rc = 0;

	sse_init(&s, FUZZ_MAX, fuzz_event, out);
	for (k = 0; k < n && rc == 0; k += m) {
		m = step == 0 || step > n - k ? n - k : step;
		rc = sse_feed(&s, p + k, m);
	}
	sse_free(&s);
	return rc;
}

/* LLVMFuzzerTestOneInput - parse one input two ways and compare. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct buf one = BUF_INIT, cut = BUF_INIT;
	int rc1, rc2;

	if (size < 1)
		return 0;
	rc1 = fuzz_run((const char *)data + 1, size - 1, 0, &one);
	rc2 =
	    fuzz_run((const char *)data + 1, size - 1, 1 + data[0] % 16, &cut);
	if (rc1 != rc2)
		panic("the error depends on the cut: %d and %d", rc1, rc2);
	/* After an error the events before it must still agree. */
	if (one.len != cut.len ||
	    (one.len > 0 && memcmp(one.data, cut.data, one.len) != 0))
		panic("the events depend on how the stream is cut");
	buf_free(&one);
	buf_free(&cut);
	return 0;
}
