/*
 * fuzz_msg - libFuzzer target for the message decoder.
 *
 * An input is a type byte followed by a body.  Whatever the bytes, the
 * decoder must return without a crash, a leak or an overread; a body it
 * accepts must encode again, and that encoding must decode to the same
 * bytes (the decoder and the encoder agree).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto/log.h"
#include "proto/msg.h"
#include "tests/fuzz/fuzz_util.h"

/* LLVMFuzzerTestOneInput - decode one input and check what comes out. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct msg *m = NULL, *again = NULL;
	unsigned char *body = NULL, *body2 = NULL;
	size_t len, len2;

	if (size < 1)
		return 0;
	if (msg_decode(data[0], data + 1, size - 1, &m) != 0)
		return 0;
	if (msg_encode(m, &body, &len) != 0)
		panic("accepted but cannot encode: %s", msg_strerror());
	if (msg_decode(data[0], body, len, &again) != 0)
		panic("our own encoding is refused: %s", msg_strerror());
	if (msg_encode(again, &body2, &len2) != 0 || len != len2 ||
	    memcmp(body, body2, len) != 0)
		panic("encode(decode(encode(x))) differs");
	free(body);
	free(body2);
	msg_destroy(&m);
	msg_destroy(&again);
	return 0;
}
