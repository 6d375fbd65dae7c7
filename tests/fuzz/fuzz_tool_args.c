/*
 * fuzz_tool_args - libFuzzer target for a tool call's arguments.
 *
 * An input is a tool's name, a newline, and the JSON text of the
 * arguments, as a model sends them and the tool and fs workers receive
 * them (data.tool and data.args of a JOB).  The arguments are read as
 * the workers read them, then go through the permission engine and the
 * tool itself in a workspace of known files (fuzz_tool_run): whatever
 * the name and the arguments, the engine gives a verdict with a reason,
 * a call without subjects is denied and never runs, the third same call
 * asks, the result is a document with "ok" (and an error text when it
 * failed), a failed call writes nothing, nothing outside the workspace
 * changes, no secret file is read, and no secret or protected file is
 * written by a call the engine did not deny.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "tests/fuzz/fuzz_util.h"

/* LLVMFuzzerTestOneInput - run one call and check it. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_call c;
	json_error_t jerr;
	json_t *args;
	char *text, *nl;

	text = fuzz_cstr(data, size);
	if (text == NULL)
		return 0; /* a JOB's strings hold no NUL */
	nl = strchr(text, '\n');
	if (nl == NULL) {
		free(text);
		return 0;
	}
	*nl = '\0';
	args = json_loads(nl + 1, JSON_REJECT_DUPLICATES, &jerr);
	if (args != NULL) {
		fuzz_tool_run(text, args, &c);
		fuzz_call_done(&c);
	}
	json_decref(args);
	free(text);
	return 0;
}
