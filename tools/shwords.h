/*
 * shwords.h - a small shell-words tokenizer, enough for the guard.
 *
 * It splits a command line into simple commands at ";", "&", "&&",
 * "||", "|", "(", ")" and newlines, removes quotes ('...', "...",
 * $'...', backslashes), separates redirections and keeps the bodies of
 * command and process substitutions ($(...), `...`, <(...), >(...)) and
 * of here-documents so they can be checked too.  It does not expand
 * variables, aliases or globs: the guard matches what is written.
 */
#ifndef SHIRO_TOOLS_SHWORDS_H
#define SHIRO_TOOLS_SHWORDS_H

#include <stddef.h>

struct shwords_redir {
	char op[4]; /* ">", ">>", ">|", "&>", "<", "<<", "<<<", "<>" ... */
	char *target; /* the word after it, quotes removed */
};

struct shwords_cmd {
	char **argv; /* words, quotes removed; substitutions kept raw */
	size_t argc;
	struct shwords_redir *redirs;
	size_t nredir;
	int piped; /* this command's output goes to the next one */
	char *heredoc; /* the here-document bodies it reads, or NULL */
};

struct shwords {
	struct shwords_cmd *cmds;
	size_t n;
	char **subs; /* bodies of substitutions, to check recursively */
	size_t nsubs;
};

/*
 * shwords_parse - tokenize s into w.  Returns 0, or -1 with a sentence
 * in *why (caller frees) for an unterminated quote, substitution or
 * here-document.  w is filled either way and must be shwords_free()d.
 */
int shwords_parse(const char *s, struct shwords *w, char **why);

/* shwords_free - release what shwords_parse filled. */
void shwords_free(struct shwords *w);

#endif
