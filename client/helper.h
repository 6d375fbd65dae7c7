/*
 * helper.h - the helper programs shiro runs for some commands (shirod,
 * shiro-store, shiro-jail, shiro-tool-worker).
 *
 * A helper is looked for in $SHIRO_LIBEXEC when that is set, then next
 * to the running binary (a build/ tree), then where make install puts
 * it (proto/path.h): PREFIX/libexec/shiro for shiro in PREFIX/bin, and
 * PREFIX/bin (shirod) for shiro-client in PREFIX/libexec/shiro.
 */
#ifndef SHIRO_CLIENT_HELPER_H
#define SHIRO_CLIENT_HELPER_H

#include "shiro.h"

/*
 * helper_find - the path of helper name (caller frees), or NULL after
 * printing where it was looked for and what to do.
 */
char *helper_find(const struct shiro *s, const char *name);

/* helper_path - the same without a word when it is missing. */
char *helper_path(const struct shiro *s, const char *name);

/*
 * helper_exec - replace this process with helper name and argv (argv[0]
 * is set here; the array ends with NULL).  Returns only on failure, with
 * the exit code to use (SHIRO_EXIT_NO_HELPER or SHIRO_EXIT_FAIL).
 */
int helper_exec(const struct shiro *s, const char *name, char **argv);

/*
 * helper_run - run helper name with argv (argv[0] is set here) and wait
 * for it; its stdout goes to out when out is not NULL (at most 1 MiB),
 * else to ours.  Returns its exit status, SHIRO_EXIT_NO_HELPER when it
 * is missing, or SHIRO_EXIT_FAIL when it could not run.
 */
struct buf;
int helper_run(
    const struct shiro *s, const char *name, char **argv, struct buf *out);

#endif
