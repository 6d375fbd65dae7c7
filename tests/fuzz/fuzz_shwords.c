/*
 * fuzz_shwords - libFuzzer target for the guard's shell-word parser.
 *
 * The input is a command line as a model writes it for bash.  Whatever
 * it is, shwords_parse must return without a crash, a leak or an
 * overread, with a reason when it refuses.  What it returns must be
 * whole (argv NULL-terminated, each word a string, at most 20,000
 * words), every substitution body it keeps must be text of the command
 * line, and its words must be what a shell would read: writing each
 * command back with every word and redirection target single-quoted
 * must parse to the same commands, words, redirections and pipes.  The
 * guard itself (perm_guard) then reads the line, as perm_check does.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto/buf.h"
#include "proto/log.h"
#include "tests/fuzz/fuzz_util.h"
#include "tools/perm.h"
#include "tools/shwords.h"

/* fuzz_quote - s single-quoted for the shell into b. */
static void
fuzz_quote(struct buf *b, const char *s)
{
	buf_addc(b, '\'');
	for (; *s != '\0'; s++)
		if (*s == '\'')
			buf_adds(b, "'\\''");
		else
			buf_addc(b, *s);
	buf_addc(b, '\'');
}

/* fuzz_has_heredoc - w has a here-document (not written back). */
static int
fuzz_has_heredoc(const struct shwords *w)
{
	size_t i, j;

	for (i = 0; i < w->n; i++) {
		if (w->cmds[i].heredoc != NULL)
			return 1;
		for (j = 0; j < w->cmds[i].nredir; j++)
			if (strncmp(w->cmds[i].redirs[j].op, "<<", 2) == 0 &&
			    strcmp(w->cmds[i].redirs[j].op, "<<<") != 0)
				return 1;
	}
	return 0;
}

/* fuzz_unparse - w as a command line of quoted words into b. */
static void
fuzz_unparse(const struct shwords *w, struct buf *b)
{
	const struct shwords_cmd *c;
	size_t i, j;

	for (i = 0; i < w->n; i++) {
		c = &w->cmds[i];
		for (j = 0; j < c->argc; j++) {
			fuzz_quote(b, c->argv[j]);
			buf_addc(b, ' ');
		}
		for (j = 0; j < c->nredir; j++) {
			buf_adds(b, c->redirs[j].op);
			buf_addc(b, ' ');
			if (c->redirs[j].target != NULL) {
				fuzz_quote(b, c->redirs[j].target);
				buf_addc(b, ' ');
			}
		}
		buf_adds(b, c->piped ? "| " : "; ");
	}
}

/* fuzz_same_str - both NULL or equal. */
static int
fuzz_same_str(const char *a, const char *b)
{
	return a == NULL ? b == NULL : b != NULL && strcmp(a, b) == 0;
}

/* fuzz_same - a and b are the same commands (substitutions aside). */
static void
fuzz_same(const struct shwords *a, const struct shwords *b, const char *line)
{
	const struct shwords_cmd *x, *y;
	size_t i, j;

	if (a->n != b->n)
		panic("%zu commands, %zu once quoted: %s", a->n, b->n, line);
	for (i = 0; i < a->n; i++) {
		x = &a->cmds[i];
		y = &b->cmds[i];
		if (x->argc != y->argc || x->nredir != y->nredir ||
		    x->piped != y->piped)
			panic("command %zu changes once quoted: %s", i, line);
		for (j = 0; j < x->argc; j++)
			if (strcmp(x->argv[j], y->argv[j]) != 0)
				panic("word %zu of command %zu changes once "
				      "quoted: %s",
				    j, i, line);
		for (j = 0; j < x->nredir; j++)
			if (strcmp(x->redirs[j].op, y->redirs[j].op) != 0 ||
			    !fuzz_same_str(
				x->redirs[j].target, y->redirs[j].target))
				panic("redirection %zu of command %zu changes "
				      "once quoted: %s",
				    j, i, line);
	}
}

/* fuzz_check_whole - w is complete and its parts come from line. */
static void
fuzz_check_whole(const struct shwords *w, const char *line)
{
	size_t i, words = 0;

	for (i = 0; i < w->n; i++) {
		if (w->cmds[i].argc > 0 &&
		    w->cmds[i].argv[w->cmds[i].argc] != NULL)
			panic("argv of command %zu is not NULL-terminated", i);
		if (w->cmds[i].argc == 0 && w->cmds[i].nredir == 0)
			panic("command %zu is empty", i);
		words += w->cmds[i].argc + w->cmds[i].nredir + 1;
	}
	if (words > 3 * 20000)
		panic("%zu words kept", words);
	for (i = 0; i < w->nsubs; i++)
		if (strstr(line, w->subs[i]) == NULL)
			panic("substitution %zu is not text of the line", i);
}

/* LLVMFuzzerTestOneInput - parse one command line and check it. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct shwords w, again;
	struct buf b = BUF_INIT;
	char *line, *why = NULL, *why2 = NULL, gwhy[256];
	int r;

	line = fuzz_cstr(data, size);
	if (line == NULL)
		return 0; /* a JSON string without NUL: bash's command */
	r = shwords_parse(line, &w, &why);
	if (r != 0) {
		if (r != -1 || why == NULL || why[0] == '\0')
			panic("a refused line without a reason");
	} else {
		if (why != NULL)
			panic("an accepted line with a reason: %s", why);
		fuzz_check_whole(&w, line);
		if (!fuzz_has_heredoc(&w)) {
			fuzz_unparse(&w, &b);
			buf_addc(&b, '\0');
			if (shwords_parse(b.data, &again, &why2) != 0)
				panic("the quoted form does not parse: %s (%s)",
				    why2, b.data);
			fuzz_same(&w, &again, line);
			shwords_free(&again);
		}
	}
	shwords_free(&w);
	free(why);
	free(why2);
	buf_free(&b);
	gwhy[0] = '\0';
	if (perm_guard(line, gwhy, sizeof(gwhy)) != 0 && gwhy[0] == '\0')
		panic("the guard refused without a reason");
	free(line);
	return 0;
}
