/*
 * fuzz_responses - the responses wire's event decoder under libFuzzer: the checks
 * of fuzz_wire.c, built for this wire (one file per target, as the
 * fuzz rules of tests/module.mk want).
 */
#define FUZZ_WIRE model_wire_responses
#include "fuzz_wire.c"
