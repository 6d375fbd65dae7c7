#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "proto/buf.h"
#include "proto/xmalloc.h"
#include "tools/vec.h"
#include "tools/shwords.h"

#define SHWORDS_MAX_WORDS 20000 /* words, redirections and commands */

struct shwords_st {
	const char *s;
	size_t i, len;
	struct shwords *w;
	struct shwords_cmd *cur;
	struct buf word;
	int inword;
	int want_target; /* the next word is a redirection target */
	int want_delim; /* the next word is a here-document delimiter */
	char *delims[16];
	size_t ndelims;
	char *err;
	size_t words;
};

/* shwords_cmd_new - start a new simple command. */
static struct shwords_cmd *
shwords_cmd_new(struct shwords *w)
{
	w->cmds = vec_room(w->cmds, w->n, sizeof(*w->cmds));
	memset(&w->cmds[w->n], 0, sizeof(w->cmds[0]));
	return &w->cmds[w->n++];
}

/* shwords_cur - the command being built, created on demand. */
static struct shwords_cmd *
shwords_cur(struct shwords_st *st)
{
	if (st->cur == NULL) {
		st->cur = shwords_cmd_new(st->w);
		if (++st->words > SHWORDS_MAX_WORDS && st->err == NULL)
			st->err = xstrdup("the command line is too long to "
					  "check");
	}
	return st->cur;
}

/* shwords_end_word - finish the word being built. */
static void
shwords_end_word(struct shwords_st *st)
{
	struct shwords_cmd *c;
	char *text;

	if (!st->inword)
		return;
	st->inword = 0;
	text = xstrndup(st->word.data ? st->word.data : "", st->word.len);
	buf_reset(&st->word);
	c = shwords_cur(st);
	if (st->want_delim) {
		st->want_delim = 0;
		if (st->ndelims < 16)
			st->delims[st->ndelims++] = xstrdup(text);
		st->want_target = 0;
		c->redirs[c->nredir - 1].target = text;
		return;
	}
	if (st->want_target) {
		st->want_target = 0;
		c->redirs[c->nredir - 1].target = text;
		return;
	}
	if (++st->words > SHWORDS_MAX_WORDS) {
		if (st->err == NULL)
			st->err = xstrdup("the command line is too long to "
					  "check");
		free(text);
		return;
	}
	c->argv = vec_room(c->argv, c->argc, sizeof(*c->argv));
	c->argv[c->argc++] = text;
	c->argv[c->argc] = NULL;
}

/* shwords_end_cmd - finish the command being built. */
static void
shwords_end_cmd(struct shwords_st *st, int piped)
{
	shwords_end_word(st);
	st->want_target = 0;
	st->want_delim = 0;
	if (st->cur != NULL)
		st->cur->piped = piped;
	st->cur = NULL;
}

/* shwords_add_sub - record the body of a substitution. */
static void
shwords_add_sub(struct shwords_st *st, size_t from, size_t to)
{
	struct shwords *w = st->w;

	w->subs = vec_room(w->subs, w->nsubs, sizeof(*w->subs));
	w->subs[w->nsubs++] = xstrndup(st->s + from, to - from);
}

/* shwords_balanced - the index of the ")" closing the "(" before i,
 * skipping quotes; len when there is none. */
static size_t
shwords_balanced(const char *s, size_t i, size_t len)
{
	int depth = 1;
	char q;

	while (i < len) {
		char c = s[i];
		if (c == '\\') {
			i += 2;
			continue;
		}
		if (c == '\'' || c == '"' || c == '`') {
			q = c;
			for (i++; i < len && s[i] != q; i++)
				if (s[i] == '\\' && q != '\'')
					i++;
			i++;
			continue;
		}
		if (c == '(')
			depth++;
		else if (c == ')' && --depth == 0)
			return i;
		i++;
	}
	return len;
}

/* shwords_subst - take "$(...)", "<(...)" or ">(...)" starting at i
 * (at the "("); the raw text stays in the word. */
static int
shwords_subst(struct shwords_st *st)
{
	size_t open = st->i, close;

	close = shwords_balanced(st->s, open + 1, st->len);
	if (close >= st->len) {
		st->err = xstrdup("a substitution \"(\" is not closed");
		return -1;
	}
	shwords_add_sub(st, open + 1, close);
	buf_add(&st->word, st->s + open, close + 1 - open);
	st->inword = 1;
	st->i = close + 1;
	return 0;
}

/* shwords_backtick - take "`...`" starting at i. */
static int
shwords_backtick(struct shwords_st *st)
{
	size_t j = st->i + 1;

	while (j < st->len && st->s[j] != '`')
		j += st->s[j] == '\\' ? 2 : 1;
	if (j >= st->len) {
		st->err = xstrdup("a backquote is not closed");
		return -1;
	}
	shwords_add_sub(st, st->i + 1, j);
	buf_add(&st->word, st->s + st->i, j + 1 - st->i);
	st->inword = 1;
	st->i = j + 1;
	return 0;
}

/* shwords_dollar - "$" at i: substitution, $'...' or a plain "$". */
static int
shwords_dollar(struct shwords_st *st, int quoted)
{
	const char *s = st->s;
	size_t i = st->i;

	if (i + 1 < st->len && s[i + 1] == '(') {
		st->i = i + 1;
		if (i + 2 < st->len && s[i + 2] == '(') {
			/* $(( arithmetic )): no command inside to check,
			 * but a "$(" nested in it is still taken. */
			size_t close = shwords_balanced(s, i + 2, st->len);
			if (close >= st->len) {
				st->err = xstrdup("\"$((\" is not closed");
				return -1;
			}
			buf_add(&st->word, s + i, close + 1 - i);
			st->inword = 1;
			st->i = close + 1;
			return 0;
		}
		buf_addc(&st->word, '$');
		return shwords_subst(st);
	}
	if (!quoted && i + 1 < st->len && s[i + 1] == '\'') {
		/* ANSI-C quoting: the escapes that spell letters. */
		size_t j = i + 2;
		st->inword = 1;
		while (j < st->len && s[j] != '\'') {
			char c = s[j];
			if (c == '\\' && j + 1 < st->len) {
				char e = s[++j];
				if (e == 'x' || e == '0' ||
				    (e >= '1' && e <= '7')) {
					unsigned v = 0, k = 0;
					int hex = e == 'x';
					if (hex || e == '0')
						j++;
					else
						v = (unsigned)(e - '0'), j++,
						k++;
					while (j < st->len &&
					    k < (hex ? 2u : 3u) &&
					    (hex ? isxdigit((unsigned char)s[j])
						 : (s[j] >= '0' &&
						       s[j] <= '7'))) {
						v = v * (hex ? 16 : 8) +
						    (unsigned)(isdigit((
								   unsigned char)
								       s[j])
							    ? s[j] - '0'
							    : (tolower((
								   unsigned char)
								       s[j]) -
								  'a' + 10));
						j++;
						k++;
					}
					buf_addc(&st->word, (char)v);
					continue;
				}
				c = e == 'n' ? '\n' : e == 't' ? '\t' : e;
			}
			buf_addc(&st->word, c);
			j++;
		}
		if (j >= st->len) {
			st->err = xstrdup("a $'...' quote is not closed");
			return -1;
		}
		st->i = j + 1;
		return 0;
	}
	buf_addc(&st->word, '$');
	st->inword = 1;
	st->i++;
	return 0;
}

/* shwords_redir - a redirection operator at i. */
static void
shwords_redir(struct shwords_st *st)
{
	const char *s = st->s;
	struct shwords_cmd *c;
	char op[4] = {0};
	size_t n = 0;

	/* A word of digits right before it is the fd, not an argument. */
	if (st->inword && st->word.len > 0 &&
	    strspn(st->word.data, "0123456789") == st->word.len) {
		buf_reset(&st->word);
		st->inword = 0;
	}
	shwords_end_word(st);
	if (s[st->i] == '&')
		op[n++] = s[st->i++];
	op[n++] = s[st->i++];
	while (n < 3 && st->i < st->len &&
	    (s[st->i] == '>' || s[st->i] == '<' || s[st->i] == '|' ||
		s[st->i] == '&' || s[st->i] == '-'))
		op[n++] = s[st->i++];
	c = shwords_cur(st);
	c->redirs = vec_room(c->redirs, c->nredir, sizeof(*c->redirs));
	memset(&c->redirs[c->nredir], 0, sizeof(c->redirs[0]));
	memcpy(c->redirs[c->nredir].op, op, sizeof(op));
	c->nredir++;
	if (strcmp(op, "<<") == 0 || strcmp(op, "<<-") == 0)
		st->want_delim = 1;
	else
		st->want_target = 1;
}

/* shwords_heredocs - after a newline, take the pending here-documents'
 * bodies (up to their delimiter lines) into the last command. */
static int
shwords_heredocs(struct shwords_st *st, struct shwords_cmd *c)
{
	struct buf body = BUF_INIT;
	size_t k;

	for (k = 0; k < st->ndelims; k++) {
		const char *d = st->delims[k];
		int found = 0;
		while (st->i < st->len) {
			const char *line = st->s + st->i;
			const char *nl = memchr(line, '\n', st->len - st->i);
			size_t l = nl ? (size_t)(nl - line) : st->len - st->i;
			const char *t = line;
			size_t tl = l;
			st->i += l + (nl != NULL);
			while (tl > 0 && *t == '\t')
				t++, tl--;
			if (tl == strlen(d) && memcmp(t, d, tl) == 0) {
				found = 1;
				break;
			}
			buf_add(&body, line, l);
			buf_addc(&body, '\n');
		}
		if (!found) {
			buf_free(&body);
			st->err =
			    xasprintf("here-document \"%s\" is not ended", d);
			return -1;
		}
	}
	for (k = 0; k < st->ndelims; k++)
		free(st->delims[k]);
	st->ndelims = 0;
	if (c != NULL && body.len > 0) {
		free(c->heredoc);
		c->heredoc = buf_steal(&body, NULL);
	}
	buf_free(&body);
	return 0;
}

/* shwords_parse - tokenize s into w. */
int
shwords_parse(const char *s, struct shwords *w, char **why)
{
	struct shwords_st st;
	struct shwords_cmd *last = NULL;
	size_t k;

	memset(w, 0, sizeof(*w));
	memset(&st, 0, sizeof(st));
	st.s = s;
	st.len = strlen(s);
	st.w = w;
	buf_init(&st.word);
	*why = NULL;
	while (st.i < st.len && st.err == NULL) {
		char c = s[st.i];
		if (c == '\\') {
			if (st.i + 1 < st.len && s[st.i + 1] == '\n') {
				st.i += 2;
				continue;
			}
			if (st.i + 1 < st.len)
				buf_addc(&st.word, s[st.i + 1]);
			st.inword = 1;
			st.i += 2;
		} else if (c == '\'') {
			const char *e = strchr(s + st.i + 1, '\'');
			if (e == NULL) {
				st.err =
				    xstrdup("a single quote is not closed");
				break;
			}
			buf_add(
			    &st.word, s + st.i + 1, (size_t)(e - s) - st.i - 1);
			st.inword = 1;
			st.i = (size_t)(e - s) + 1;
		} else if (c == '"') {
			st.inword = 1;
			st.i++;
			while (
			    st.i < st.len && s[st.i] != '"' && st.err == NULL) {
				char d = s[st.i];
				if (d == '\\' && st.i + 1 < st.len &&
				    strchr("$`\"\\\n", s[st.i + 1])) {
					if (s[st.i + 1] != '\n')
						buf_addc(&st.word, s[st.i + 1]);
					st.i += 2;
				} else if (d == '$') {
					shwords_dollar(&st, 1);
				} else if (d == '`') {
					shwords_backtick(&st);
				} else {
					buf_addc(&st.word, d);
					st.i++;
				}
			}
			if (st.err == NULL && st.i >= st.len) {
				st.err =
				    xstrdup("a double quote is not closed");
				break;
			}
			st.i++;
		} else if (c == '$') {
			shwords_dollar(&st, 0);
		} else if (c == '`') {
			shwords_backtick(&st);
		} else if ((c == '<' || c == '>') && st.i + 1 < st.len &&
		    s[st.i + 1] == '(') {
			buf_addc(&st.word, c);
			st.i++;
			shwords_subst(&st);
		} else if (c == '<' || c == '>' ||
		    (c == '&' && st.i + 1 < st.len && s[st.i + 1] == '>')) {
			shwords_redir(&st);
		} else if (c == ' ' || c == '\t' || c == '\r') {
			shwords_end_word(&st);
			st.i++;
		} else if (c == '#' && !st.inword) {
			while (st.i < st.len && s[st.i] != '\n')
				st.i++;
		} else if (c == '\n') {
			last = st.cur;
			shwords_end_cmd(&st, 0);
			st.i++;
			if (st.ndelims > 0) {
				if (last == NULL && st.w->n > 0)
					last = &st.w->cmds[st.w->n - 1];
				shwords_heredocs(&st, last);
			}
		} else if (c == '|') {
			int two = st.i + 1 < st.len && s[st.i + 1] == '|';
			int amp = st.i + 1 < st.len && s[st.i + 1] == '&';
			shwords_end_cmd(&st, !two);
			st.i += (two || amp) ? 2 : 1;
		} else if (c == ';' || c == '&' || c == '(' || c == ')') {
			shwords_end_cmd(&st, 0);
			st.i++;
			while (
			    st.i < st.len && (s[st.i] == ';' || s[st.i] == '&'))
				st.i++;
		} else {
			buf_addc(&st.word, c);
			st.inword = 1;
			st.i++;
		}
	}
	if (st.err == NULL) {
		shwords_end_cmd(&st, 0);
		if (st.ndelims > 0)
			st.err = xasprintf(
			    "here-document \"%s\" is not ended", st.delims[0]);
	}
	for (k = 0; k < st.ndelims; k++)
		free(st.delims[k]);
	buf_free(&st.word);
	if (st.err != NULL) {
		*why = st.err;
		return -1;
	}
	return 0;
}

/* shwords_free - release what shwords_parse filled. */
void
shwords_free(struct shwords *w)
{
	size_t i, j;

	for (i = 0; i < w->n; i++) {
		for (j = 0; j < w->cmds[i].argc; j++)
			free(w->cmds[i].argv[j]);
		for (j = 0; j < w->cmds[i].nredir; j++)
			free(w->cmds[i].redirs[j].target);
		free(w->cmds[i].argv);
		free(w->cmds[i].redirs);
		free(w->cmds[i].heredoc);
	}
	for (i = 0; i < w->nsubs; i++)
		free(w->subs[i]);
	free(w->cmds);
	free(w->subs);
	memset(w, 0, sizeof(*w));
}
