#include <errno.h>
#include <histedit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <wchar.h>

#include "proto/buf.h"
#include "proto/err.h"
#include "proto/log.h"
#include "proto/xmalloc.h"

#include "edit.h"

struct edit {
	EditLine *el; /* the line editor, or NULL without a terminal */
	History *h; /* libedit's copy of the history */
	struct hist *hist; /* borrowed: the history file */
	struct edit_waiter w; /* what runs while no input is ready */
	char *prompt; /* the prompt of the current edit_read */
	char *status; /* shown at the right of the prompt */
	int reading; /* inside el_gets: prints must redraw */
	int err; /* the waiter's error, seen inside el_gets */
	mbstate_t mbs; /* decoding state of the terminal's bytes */
	struct buf in; /* plain mode: bytes read, not yet returned */
	size_t in_off; /* plain mode: start of the next line in in */
	int in_eof; /* plain mode: the input has ended */
	int skipping; /* plain mode: dropping an overlong line */
};

/* edit_of - the editor that owns el. */
static struct edit *
edit_of(EditLine *el)
{
	void *p = NULL;

	el_get(el, EL_CLIENTDATA, &p);
	return p;
}

/* edit_prompt_fn - libedit's prompt callback. */
static char *
edit_prompt_fn(EditLine *el)
{
	struct edit *e = edit_of(el);

	return e->prompt != NULL ? e->prompt : "";
}

/* edit_rprompt_fn - libedit's right-prompt callback: the status. */
static char *
edit_rprompt_fn(EditLine *el)
{
	struct edit *e = edit_of(el);

	return e->status != NULL ? e->status : "";
}

/* edit_getc_fn - libedit's read callback: wait through the waiter. */
static int
edit_getc_fn(EditLine *el, wchar_t *wc)
{
	struct edit *e = edit_of(el);
	unsigned char c;
	ssize_t r;
	size_t n;
	int rc;

	for (;;) {
		rc = e->w.wait(e->w.arg, STDIN_FILENO);
		if (rc < 0) {
			e->err = rc;
			return -1;
		}
		r = read(STDIN_FILENO, &c, 1);
		if (r == 0)
			return 0;
		if (r < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			e->err = err_from_errno(errno);
			return -1;
		}
		n = mbrtowc(wc, (const char *)&c, 1, &e->mbs);
		if (n == (size_t)-2)
			continue; /* the rest of the character follows */
		if (n == (size_t)-1) {
			memset(&e->mbs, 0, sizeof(e->mbs));
			*wc = L'?';
		}
		return 1;
	}
}

/* edit_new - an editor on stdin/stdout (see edit.h). */
struct edit *
edit_new(const char *prog, struct hist *hist, const struct edit_waiter *w)
{
	struct edit *e;
	HistEvent ev;
	size_t i;

	e = xcalloc(1, sizeof(*e));
	e->w = *w;
	e->hist = hist;
	buf_init(&e->in);
	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO))
		return e;
	e->el = el_init(prog, stdin, stdout, stderr);
	if (e->el == NULL) {
		log_warnx("cannot start the line editor; reading plain lines");
		return e;
	}
	e->h = history_init();
	history(e->h, &ev, H_SETSIZE, HIST_MAX);
	history(e->h, &ev, H_SETUNIQUE, 1);
	for (i = 0; hist != NULL && i < hist->n; i++)
		history(e->h, &ev, H_ENTER, hist->items[i]);
	el_set(e->el, EL_CLIENTDATA, e);
	el_set(e->el, EL_EDITOR, "emacs");
	el_set(e->el, EL_HIST, history, e->h);
	el_set(e->el, EL_PROMPT, edit_prompt_fn);
	el_set(e->el, EL_RPROMPT, edit_rprompt_fn);
	el_set(e->el, EL_GETCFN, edit_getc_fn);
	/* The user's ~/.editrc may rebind keys, as in other libedit tools. */
	el_source(e->el, NULL);
	return e;
}

/* edit_is_tty - whether the line editor (rather than plain lines) runs. */
int
edit_is_tty(const struct edit *e)
{
	return e->el != NULL;
}

/* edit_read_tty - one line from the line editor. */
static int
edit_read_tty(struct edit *e, char **linep)
{
	const char *line;
	HistEvent ev;
	size_t len;
	int count = 0, rc;

	e->err = 0;
	e->reading = 1;
	line = el_gets(e->el, &count);
	e->reading = 0;
	if (line == NULL || count <= 0) {
		rc = e->err != 0 ? e->err : -SHIRO_ERR_NOENT;
		e->err = 0;
		/* Forget the half-typed line and give the terminal back. */
		el_reset(e->el);
		if (rc == -SHIRO_ERR_CANCELED) {
			fputs("^C\n", stdout);
			fflush(stdout);
		}
		return rc;
	}
	len = strlen(line);
	while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
		len--;
	if (len > EDIT_LINE_MAX)
		return -SHIRO_ERR_TOOBIG;
	*linep = xstrndup(line, len);
	if (len > 0) {
		history(e->h, &ev, H_ENTER, *linep);
		if (e->hist != NULL && (rc = hist_add(e->hist, *linep)) < 0)
			log_warnx("cannot save the history in %s: %s",
			    e->hist->path, err_str(rc));
	}
	return 0;
}

/* edit_read_plain - one line from a pipe or a file. */
static int
edit_read_plain(struct edit *e, char **linep)
{
	char *nl, chunk[65536];
	size_t avail;
	ssize_t r;
	int rc;

	for (;;) {
		avail = e->in.len - e->in_off;
		nl = avail > 0 ? memchr(e->in.data + e->in_off, '\n', avail)
			       : NULL;
		if (nl != NULL) {
			size_t len = (size_t)(nl - (e->in.data + e->in_off));
			int skipped = e->skipping;

			if (!skipped) {
				if (len > 0 &&
				    e->in.data[e->in_off + len - 1] == '\r')
					len--;
				*linep = xstrndup(e->in.data + e->in_off, len);
			}
			e->in_off = (size_t)(nl - e->in.data) + 1;
			e->skipping = 0;
			return skipped ? -SHIRO_ERR_TOOBIG : 0;
		}
		if (avail > EDIT_LINE_MAX && !e->skipping) {
			e->skipping = 1;
			buf_reset(&e->in);
			e->in_off = 0;
			continue;
		}
		if (e->skipping) {
			buf_reset(&e->in);
			e->in_off = 0;
		} else if (e->in_off > 0) {
			/* Keep only the unfinished line. */
			memmove(e->in.data, e->in.data + e->in_off, avail);
			buf_truncate(&e->in, avail);
			e->in_off = 0;
		}
		if (e->in_eof) {
			if (e->in.len == 0 || e->skipping) {
				e->skipping = 0;
				buf_reset(&e->in);
				return -SHIRO_ERR_NOENT;
			}
			*linep = xstrndup(e->in.data, e->in.len);
			buf_reset(&e->in);
			return 0;
		}
		rc = e->w.wait(e->w.arg, STDIN_FILENO);
		if (rc < 0)
			return rc;
		r = read(STDIN_FILENO, chunk, sizeof(chunk));
		if (r < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return err_from_errno(errno);
		}
		if (r == 0)
			e->in_eof = 1;
		else
			buf_add(&e->in, chunk, (size_t)r);
	}
}

/* edit_read - the next line (see edit.h). */
int
edit_read(struct edit *e, const char *prompt, char **linep)
{
	*linep = NULL;
	free(e->prompt);
	e->prompt = xstrdup(prompt);
	if (e->el != NULL)
		return edit_read_tty(e, linep);
	return edit_read_plain(e, linep);
}

/* edit_print - print text above the line being edited (see edit.h). */
void
edit_print(struct edit *e, const char *text)
{
	size_t len = strlen(text);

	if (e->el != NULL && e->reading)
		fputs("\r\033[K", stdout); /* clear the half-typed line */
	fputs(text, stdout);
	if (len == 0 || text[len - 1] != '\n')
		fputc('\n', stdout);
	fflush(stdout);
	if (e->el != NULL && e->reading)
		el_set(e->el, EL_REFRESH);
}

/* edit_set_status - the status shown at the right of the prompt. */
void
edit_set_status(struct edit *e, const char *status)
{
	if (e->status != NULL && strcmp(e->status, status) == 0)
		return;
	free(e->status);
	e->status = xstrdup(status);
	if (e->el != NULL && e->reading) {
		/* Redraw from the start of the line, over the old one. */
		fputs("\r\033[K", stdout);
		fflush(stdout);
		el_set(e->el, EL_REFRESH);
	}
}

/* edit_destroy - restore the terminal, free *ep and set it to NULL. */
void
edit_destroy(struct edit **ep)
{
	struct edit *e = *ep;

	if (e == NULL)
		return;
	if (e->el != NULL)
		el_end(e->el);
	if (e->h != NULL)
		history_end(e->h);
	buf_free(&e->in);
	free(e->prompt);
	free(e->status);
	free(e);
	*ep = NULL;
}
