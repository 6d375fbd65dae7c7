/*
 * match.h - glob patterns: "*", "?", "[...]" classes, "\" escapes and,
 * in path mode, "**" for any number of directories.
 */
#ifndef SHIRO_TOOLS_MATCH_H
#define SHIRO_TOOLS_MATCH_H

/*
 * match_glob - nonzero when s matches pattern p.  In path mode (path
 * nonzero) "*" and "?" never match "/" and "**" spans directories; in
 * plain mode "*" matches any text, slashes included.
 */
int match_glob(const char *p, const char *s, int path);

/* match_valid - nonzero when p is a well-formed pattern. */
int match_valid(const char *p);

#endif
