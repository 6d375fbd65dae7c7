/*
 * path.h - where shiro's programs find one another.
 *
 * In a build tree every program lies in one directory (build/).  Once
 * installed (make install), shiro and shirod lie in PREFIX/bin and the
 * workers and helpers in PREFIX/libexec/shiro.  A program finds the
 * others from its own place, which it reads from /proc/self/exe, never
 * from PATH: an installed tree works wherever it was copied (DESTDIR).
 */
#ifndef SHIRO_PATH_H
#define SHIRO_PATH_H

#include <stddef.h>

/* The directory under PREFIX that holds the workers and helpers. */
#define PATH_LIBEXEC "libexec/shiro"

/*
 * path_self_dir - the directory of the running program (caller frees):
 * from /proc/self/exe, else from argv0 (may be NULL), else ".".
 */
char *path_self_dir(const char *argv0);

/*
 * path_libexec_dir - where the workers and helpers of the program in
 * self_dir are (caller frees): self_dir/../libexec/shiro for a program
 * in an installed PREFIX/bin (that directory exists), else self_dir.
 */
char *path_libexec_dir(const char *self_dir);

/*
 * path_program - the path of program name (caller frees), or NULL when
 * it is in none of these places, tried in order: the directory dir_env
 * names (when set and not empty), self_dir, the libexec directory of a
 * program in PREFIX/bin, and PREFIX/bin for a program in
 * PREFIX/libexec/shiro.  where (wherelen bytes, may be NULL) gets the
 * places looked in, for a message.
 */
char *path_program(const char *self_dir, const char *dir_env, const char *name,
    char *where, size_t wherelen);

#endif
