/*
 * fuzz_util.h - what the fuzz targets share: their scratch directory, a
 * few file helpers, and the tool runner of the tool targets.
 *
 * Every target is a file tests/fuzz/fuzz_NAME.c defining
 * LLVMFuzzerTestOneInput; its seeds are tests/fuzz/corpus/NAME/.  Under
 * make fuzz it links libFuzzer; in the ordinary build it links
 * tests/fuzz/replay.c, which feeds it its seeds once (make check).  A
 * target that finds a broken promise calls panic(), which aborts: both
 * drivers count that as a finding.
 */
#ifndef SHIRO_FUZZ_UTIL_H
#define SHIRO_FUZZ_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "tools/perm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * fuzz_tmpdir - this process's scratch directory, made on first use
 * (under /dev/shm when it exists, where fsync costs nothing, else under
 * $TMPDIR or /tmp) and removed with everything in it at exit; borrowed.
 */
const char *fuzz_tmpdir(void);

/* fuzz_rmtree - remove path and everything under it. */
void fuzz_rmtree(const char *path);

/* fuzz_write - make path hold exactly len bytes of data; panics on
 * failure (the scratch directory is ours, so a failure is a bug). */
void fuzz_write(const char *path, const void *data, size_t len);

/* fuzz_cstr - data as a NUL-terminated string (caller frees), or NULL
 * when it holds a NUL byte (no C string caller can receive those). */
char *fuzz_cstr(const uint8_t *data, size_t size);

/* What a tool call did, for the targets to check further. */
struct fuzz_call {
	struct perm_verdict verdict; /* of the first of three same calls */
	json_t *subjects; /* tool_subjects' array, or NULL */
	json_t *result; /* tool_call's result document */
	int changed; /* the call changed the workspace */
	char what[256]; /* the first path it changed, under the root */
};

/*
 * fuzz_tool_run - run one call of the catalogue as the tool and fs
 * workers do, in a fresh workspace of known files, with the permission
 * engine at its most permissive (yolo, every write and command allowed
 * by rule, commands not run), and check what must hold whatever the
 * arguments: the verdict, the result document's shape, the subjects,
 * the repeat guard, nothing outside the workspace touched, the secret
 * file never read, and no secret or protected file changed by a call
 * the engine did not deny.  The caller checks more, then calls
 * fuzz_call_done.  args is borrowed.
 */
void fuzz_tool_run(const char *name, json_t *args, struct fuzz_call *c);

/* fuzz_call_done - release c and put the workspace back as it was. */
void fuzz_call_done(struct fuzz_call *c);

/* fuzz_ws_path - the workspace's absolute path; borrowed. */
const char *fuzz_ws_path(void);

#endif
