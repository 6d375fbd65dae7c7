#include <errno.h>
#include <histedit.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <wchar.h>

#include "proto/buf.h"
#include "proto/err.h"
#include "proto/log.h"
#include "proto/utf8.h"
#include "proto/xmalloc.h"

#include "edit.h"

/* What the terminal sends around a paste once bracketed paste is on. */
#define EDIT_PASTE_BEGIN "\033[200~"
#define EDIT_PASTE_END "\033[201~"
/* How long the bytes after an ESC may take to show a paste beginning. */
#define EDIT_ESC_MS 50
/* libedit's key for inserting the next character as it is (bound to
 * ed-quoted-insert below): how a paste's newlines enter the line. */
#define EDIT_QUOTE 0x16 /* ^V */

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
	unsigned char ahead[8]; /* bytes read past an ESC, not yet used */
	size_t nahead, ahead_off;
	wchar_t *q; /* keys to hand to libedit before reading more */
	size_t nq, q_off, q_cap;
	wint_t last; /* the key handed over last */
	const char *refused; /* why the line being typed cannot be sent */
	char *partial; /* the half-typed line when reading failed */
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

/*
 * edit_byte - the next byte of input: one read past an ESC first, else
 * one read from stdin once the waiter says it is readable.  1, 0 at the
 * end of the input, or -1 with e->err set.
 */
static int
edit_byte(struct edit *e, unsigned char *c)
{
	ssize_t r;
	int rc;

	if (e->ahead_off < e->nahead) {
		*c = e->ahead[e->ahead_off++];
		return 1;
	}
	for (;;) {
		rc = e->w.wait(e->w.arg, STDIN_FILENO);
		if (rc < 0) {
			e->err = rc;
			return -1;
		}
		r = read(STDIN_FILENO, c, 1);
		if (r == 1)
			return 1;
		if (r == 0)
			return 0;
		if (errno != EINTR && errno != EAGAIN) {
			e->err = err_from_errno(errno);
			return -1;
		}
	}
}

/*
 * edit_paste_begins - after an ESC: whether the bytes that follow begin
 * a paste.  They are read only while they match EDIT_PASTE_BEGIN and
 * come within EDIT_ESC_MS (a terminal sends the marker in one write);
 * bytes that do not match are kept for the next reads.
 */
static int
edit_paste_begins(struct edit *e)
{
	const char *want = EDIT_PASTE_BEGIN + 1;
	struct pollfd pfd = {STDIN_FILENO, POLLIN, 0};
	unsigned char c;
	size_t k;

	e->nahead = e->ahead_off = 0;
	for (k = 0; want[k] != '\0'; k++) {
		if (poll(&pfd, 1, EDIT_ESC_MS) != 1 ||
		    read(STDIN_FILENO, &c, 1) != 1)
			return 0;
		e->ahead[e->nahead++] = c;
		if (c != (unsigned char)want[k])
			return 0;
	}
	e->nahead = 0;
	return 1;
}

/* edit_queue - one key for libedit, after the ones already queued. */
static void
edit_queue(struct edit *e, wchar_t wc)
{
	if (e->nq == e->q_cap) {
		e->q_cap = e->q_cap != 0 ? 2 * e->q_cap : 256;
		e->q = xreallocarray(e->q, e->q_cap, sizeof(*e->q));
	}
	e->q[e->nq++] = wc;
}

/*
 * edit_paste - read a paste up to EDIT_PASTE_END and queue it as keys
 * that insert it whole into the line: one message, however many lines
 * it has.  Its newlines (a terminal sends them as CR) and any other
 * control go in through ed-quoted-insert.  A paste over EDIT_LINE_MAX
 * is dropped, and one with a NUL byte or a byte that is not UTF-8
 * makes the line refused; both are said.  0, or -1 with e->err set.
 */
static int
edit_paste(struct edit *e)
{
	const size_t endlen = sizeof(EDIT_PASTE_END) - 1;
	struct buf b = BUF_INIT;
	mbstate_t mbs;
	unsigned char c;
	wchar_t wc;
	size_t k, n;
	int rc, big = 0;

	for (;;) {
		if ((rc = edit_byte(e, &c)) <= 0) {
			buf_free(&b);
			return rc == 0 ? 0 : -1;
		}
		buf_addc(&b, (char)c);
		if (b.len >= endlen &&
		    memcmp(b.data + b.len - endlen, EDIT_PASTE_END, endlen) ==
			0)
			break;
		if (b.len > EDIT_LINE_MAX + endlen) {
			/* Too big: keep only the tail, to see the end. */
			memmove(b.data, b.data + b.len - endlen, endlen);
			buf_truncate(&b, endlen);
			big = 1;
		}
	}
	if (big) {
		buf_free(&b);
		edit_print(e,
		    "shiro: the pasted text is over 1 MiB, the most "
		    "one message holds; it was not inserted");
		return 0;
	}
	buf_truncate(&b, b.len - endlen);
	memset(&mbs, 0, sizeof(mbs));
	for (k = 0; k < b.len; k += n) {
		n = mbrtowc(&wc, b.data + k, b.len - k, &mbs);
		if (n == (size_t)-1 || n == (size_t)-2) {
			e->refused = "it holds bytes that are not UTF-8";
			memset(&mbs, 0, sizeof(mbs));
			n = 1;
			continue;
		}
		if (n == 0) {
			e->refused = "it holds a NUL byte";
			n = 1;
			continue;
		}
		if (wc == L'\r') {
			if (k + 1 < b.len && b.data[k + 1] == '\n')
				continue; /* CR LF: the LF stands for both */
			wc = L'\n';
		}
		if (wc < 0x20 || (wc >= 0x7f && wc < 0xa0))
			edit_queue(e, EDIT_QUOTE);
		edit_queue(e, wc);
	}
	buf_free(&b);
	return 0;
}

/* edit_getc_fn - libedit's read callback: queued keys first, then the
 * input, waiting through the waiter; a paste is taken whole. */
static int
edit_getc_fn(EditLine *el, wchar_t *wc)
{
	struct edit *e = edit_of(el);
	unsigned char c;
	size_t n;
	int rc;

	for (;;) {
		if (e->q_off < e->nq) {
			*wc = e->q[e->q_off++];
			if (e->q_off == e->nq)
				e->q_off = e->nq = 0;
			e->last = (wint_t)*wc;
			return 1;
		}
		if ((rc = edit_byte(e, &c)) <= 0)
			return rc;
		if (c == 0x1b && e->ahead_off >= e->nahead &&
		    edit_paste_begins(e)) {
			if (edit_paste(e) < 0)
				return -1;
			continue;
		}
		n = mbrtowc(wc, (const char *)&c, 1, &e->mbs);
		if (n == (size_t)-2)
			continue; /* the rest of the character follows */
		if (n == (size_t)-1) {
			memset(&e->mbs, 0, sizeof(e->mbs));
			e->refused = "it holds bytes that are not UTF-8";
			*wc = L'?';
		}
		/* ^V ^@ would put a NUL into the line, which ends it early. */
		if (*wc == L'\0' && e->last == EDIT_QUOTE)
			e->refused = "it holds a NUL byte";
		e->last = (wint_t)*wc;
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
	/* The user's ~/.editrc may rebind keys, as in other libedit tools;
	 * ^V stays the quoted insert that pastes go through. */
	el_source(e->el, NULL);
	el_set(e->el, EL_BIND, "^V", "ed-quoted-insert", NULL);
	/* Bracketed paste: the terminal marks where a paste begins and
	 * ends, so a pasted block is one message (edit_paste). */
	fputs("\033[?2004h", stdout);
	fflush(stdout);
	return e;
}

/* edit_is_tty - whether the line editor (rather than plain lines) runs. */
int
edit_is_tty(const struct edit *e)
{
	return e->el != NULL;
}

/* edit_keep_partial - remember the half-typed line text[0..len) when
 * reading failed, for the caller to show (edit_partial). */
static void
edit_keep_partial(struct edit *e, const char *text, size_t len)
{
	free(e->partial);
	e->partial = NULL;
	while (len > 0 && (text[len - 1] == '\n' || text[len - 1] == '\r'))
		len--;
	if (len > 0)
		e->partial = xstrndup(text, len);
}

/* edit_read_tty - one line from the line editor. */
static int
edit_read_tty(struct edit *e, char **linep)
{
	const LineInfo *li;
	const char *line;
	HistEvent ev;
	size_t len;
	int count = 0, rc;

	e->err = 0;
	e->reading = 1;
	e->refused = NULL;
	line = el_gets(e->el, &count);
	e->reading = 0;
	if (line == NULL || count <= 0) {
		rc = e->err != 0 ? e->err : -SHIRO_ERR_NOENT;
		e->err = 0;
		if (rc != -SHIRO_ERR_CANCELED) {
			li = el_line(e->el);
			edit_keep_partial(
			    e, li->buffer, (size_t)(li->lastchar - li->buffer));
		}
		/* Forget the half-typed line and give the terminal back. */
		el_reset(e->el);
		e->nq = e->q_off = 0;
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
	if (e->refused != NULL) {
		free(*linep);
		*linep = NULL;
		return -SHIRO_ERR_INVAL;
	}
	return 0;
}

/* edit_plain_line - a line read from a pipe: *linep, or
 * -SHIRO_ERR_INVAL when it holds a NUL byte or is not UTF-8. */
static int
edit_plain_line(struct edit *e, const char *text, size_t len, char **linep)
{
	e->refused = NULL;
	if (memchr(text, '\0', len) != NULL)
		e->refused = "it holds a NUL byte";
	else if (!utf8_valid(text, len))
		e->refused = "it holds bytes that are not UTF-8";
	if (e->refused != NULL)
		return -SHIRO_ERR_INVAL;
	*linep = xstrndup(text, len);
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
				rc = edit_plain_line(
				    e, e->in.data + e->in_off, len, linep);
			}
			e->in_off = (size_t)(nl - e->in.data) + 1;
			e->skipping = 0;
			return skipped ? -SHIRO_ERR_TOOBIG : rc;
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
			rc = edit_plain_line(e, e->in.data, e->in.len, linep);
			buf_reset(&e->in);
			return rc;
		}
		rc = e->w.wait(e->w.arg, STDIN_FILENO);
		if (rc < 0) {
			if (!e->skipping)
				edit_keep_partial(e, e->in.data, e->in.len);
			return rc;
		}
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
	free(e->partial);
	e->partial = NULL;
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

/* edit_refused - why the last line was refused (see edit.h). */
const char *
edit_refused(const struct edit *e)
{
	return e->refused != NULL ? e->refused : "it cannot be sent";
}

/* edit_partial - the half-typed line a failed read left (see edit.h). */
const char *
edit_partial(const struct edit *e)
{
	return e->partial;
}

/* edit_destroy - restore the terminal, free *ep and set it to NULL. */
void
edit_destroy(struct edit **ep)
{
	struct edit *e = *ep;

	if (e == NULL)
		return;
	if (e->el != NULL) {
		fputs("\033[?2004l", stdout);
		fflush(stdout);
		el_end(e->el);
	}
	if (e->h != NULL)
		history_end(e->h);
	buf_free(&e->in);
	free(e->q);
	free(e->partial);
	free(e->prompt);
	free(e->status);
	free(e);
	*ep = NULL;
}
