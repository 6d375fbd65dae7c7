/*
 * hist.h - the prompt history of one working directory.
 *
 * Each directory has its own file, $SHIRO_HOME/history/<hash>.json, where
 * <hash> is the first 16 bytes of the SHA-256 of the directory's path in
 * hex.  The file is a JSON array of strings, oldest first, at most
 * HIST_MAX entries, with no entry equal to the one before it.  Adding an
 * entry reads the file again first, so sessions in the same directory
 * merge their entries, and writes it atomically (rename).
 */
#ifndef SHIRO_CLIENT_HIST_H
#define SHIRO_CLIENT_HIST_H

#include <stddef.h>

#define HIST_MAX 200
#define HIST_FILE_MAX (4u << 20) /* a bigger file is ignored */

struct hist {
	char *path; /* the history file */
	char **items; /* oldest first */
	size_t n;
};

/* hist_path - the history file of cwd under home; the caller frees it. */
char *hist_path(const char *home, const char *cwd);

/*
 * hist_open - load the history of cwd.  A missing file is an empty
 * history; an unreadable or malformed one is logged and ignored (it is
 * replaced at the next hist_add).  Always succeeds.
 */
struct hist *hist_open(const char *home, const char *cwd);

/*
 * hist_add - add line (without a newline) and save.  Returns 0, or a
 * negative SHIRO_ERR_* if the file could not be written (the entry is
 * kept in memory).
 */
int hist_add(struct hist *h, const char *line);

/* hist_parse - decode a history file's text into items; for tests too. */
int hist_parse(const char *text, size_t len, char ***itemsp, size_t *np);

/* hist_destroy - free *hp and set it to NULL. */
void hist_destroy(struct hist **hp);

#endif
