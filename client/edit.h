/*
 * edit.h - the interactive client's input: a line editor on a terminal
 * (libedit, with the directory's history), plain lines otherwise.
 *
 * The editor never blocks on its own: before each read it calls the
 * caller's wait function, which handles the daemon's messages (and may
 * print them with edit_print) until the input is readable.  So events
 * stream in while a person types, and the line being typed is drawn
 * again below them.
 */
#ifndef SHIRO_CLIENT_EDIT_H
#define SHIRO_CLIENT_EDIT_H

#include "hist.h"

/*
 * The caller's wait function: return 1 once fd is readable, or a
 * negative SHIRO_ERR_* to end reading (edit_read returns that code).
 * A SIGINT while waiting should make it return -SHIRO_ERR_CANCELED.
 */
struct edit_waiter {
	int (*wait)(void *arg, int fd);
	void *arg;
};

struct edit;

#define EDIT_LINE_MAX (1u << 20) /* longer input lines are refused */

/*
 * edit_new - an editor on stdin/stdout.  hist (borrowed, may be NULL)
 * supplies and receives the history; a line editor is used only when
 * stdin and stdout are terminals.
 */
struct edit *edit_new(
    const char *prog, struct hist *hist, const struct edit_waiter *waiter);

/* edit_is_tty - whether the line editor (rather than plain lines) runs. */
int edit_is_tty(const struct edit *e);

/*
 * edit_read - the next line without its newline in *linep (caller
 * frees).  On a terminal a paste (bracketed paste) goes into the line
 * whole, newlines included, so a pasted block is one line.  Returns 0;
 * -SHIRO_ERR_NOENT at the end of the input; -SHIRO_ERR_CANCELED when
 * Ctrl-C discarded the line; -SHIRO_ERR_TOOBIG for a line over
 * EDIT_LINE_MAX (skipped); -SHIRO_ERR_INVAL for a line that holds a
 * NUL byte or bytes that are not UTF-8 (edit_refused says which); or
 * the waiter's error (edit_partial then gives what was half typed).
 */
int edit_read(struct edit *e, const char *prompt, char **linep);

/* edit_refused - why edit_read last returned -SHIRO_ERR_INVAL. */
const char *edit_refused(const struct edit *e);

/*
 * edit_partial - the line that was being typed when edit_read last
 * failed with the waiter's error, or NULL; valid until the next read.
 */
const char *edit_partial(const struct edit *e);

/*
 * edit_print - print text (one or more lines) above the line being
 * edited and draw the prompt and the line again below it.
 */
void edit_print(struct edit *e, const char *text);

/* edit_set_status - the status shown at the right of the prompt. */
void edit_set_status(struct edit *e, const char *status);

/* edit_destroy - restore the terminal, free *ep and set it to NULL. */
void edit_destroy(struct edit **ep);

#endif
