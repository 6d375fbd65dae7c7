/*
 * perm.h - the permission engine and the guard.
 *
 * Every tool call is checked before it runs: perm_check() answers
 * allow, ask (a person must approve) or deny, with a reason.
 *
 * Rules are lines "ACTION TARGET" or "ACTION TARGET(PATTERN)":
 *   ACTION   allow | ask | deny
 *   TARGET   a tool name (bash, read_file, ...), a kind (read, write,
 *            exec) or "*" for every tool
 *   PATTERN  matched against the call's subject: "*" any text, "?" one
 *            character, [...] a class, "\" escapes; no pattern matches
 *            every subject
 * The subject is the command for bash (each simple command of it on its
 * own, so "allow bash(git status*)" does not allow "git status; rm x"),
 * and the path or paths for file tools (both ends of a move, every file
 * of a patch), normalized ("./a//b/../c" is "a/c").  The later rule
 * wins.  A rule that does not parse is an error, never an allow.
 * Without rules: read tools are allowed, write tools and bash ask.
 *
 * Before the rules: the guard refuses irreversible commands (see
 * perm_guard), secret files are never written, and paths under a
 * protect pattern (".git" by default) are never written.  A call
 * repeated three times in one turn asks.  "yolo" turns the rules' ask
 * into allow; it never passes a deny, the guard or the repeat guard.
 */
#ifndef SHIRO_TOOLS_PERM_H
#define SHIRO_TOOLS_PERM_H

#include <stddef.h>

#include <jansson.h>

enum perm_action { PERM_ALLOW, PERM_ASK, PERM_DENY };

struct perm;
struct perm_turn;

struct perm_verdict {
	enum perm_action action;
	char reason[512]; /* for the person and the model */
};

/* perm_new - an engine with no rules, no yolo, ".git" protected. */
struct perm *perm_new(void);

/* perm_destroy - free *p and set it to NULL. */
void perm_destroy(struct perm **p);

/*
 * perm_add - parse one rule and append it.  Returns 0, or
 * -SHIRO_ERR_INVAL with a sentence in *why (caller frees) and nothing
 * added.
 */
int perm_add(struct perm *p, const char *rule, char **why);

/* perm_protect - never allow writes to paths matching pattern. */
int perm_protect(struct perm *p, const char *pattern, char **why);

/* perm_set_yolo - turn the rules' ask into allow (on nonzero). */
void perm_set_yolo(struct perm *p, int on);

/* perm_set_workspace - the workspace path, so that absolute paths under
 * it are matched as relative ones. */
void perm_set_workspace(struct perm *p, const char *path);

/*
 * perm_load - read {"rules": [..], "protect": [..], "yolo": bool} (any
 * key may be missing).  On any error nothing of cfg is kept in p and
 * *why says which entry is wrong.
 */
int perm_load(struct perm *p, json_t *cfg, char **why);

/*
 * perm_check - the verdict on calling tool with args (borrowed).  turn
 * (may be NULL) carries the repeat guard: each call is counted in it.
 */
void perm_check(struct perm *p, struct perm_turn *turn, const char *tool,
    json_t *args, struct perm_verdict *v);

/*
 * perm_always - from now on allow tool for exactly the subjects of this
 * call (a person answered "always"): one rule per subject, appended, so
 * it matches that subject alone.  Such a rule never passes what comes
 * before the rules (the guard, secret and protected files), nor the
 * repeat guard, nor a command that does not parse (refused here:
 * -SHIRO_ERR_INVAL with *why, caller frees).  The subjects of a call
 * the rules denied are never asked, so no such rule stands above a deny.
 * Kept in memory only.
 */
int perm_always(struct perm *p, const char *tool, json_t *args, char **why);

/* perm_turn_new - the repeat guard's state for one turn. */
struct perm_turn *perm_turn_new(void);

/* perm_turn_destroy - free *t and set it to NULL. */
void perm_turn_destroy(struct perm_turn **t);

/*
 * perm_guard - nonzero when command is refused as irreversible: rm -r or
 * -f, git reset --hard, git clean -f, force pushes, git branch -D,
 * DROP/TRUNCATE in SQL clients, mkfs, dd or redirects onto raw devices,
 * chmod 777, shutdown and friends, fork bombs, a download piped into a
 * shell.  Matched on the parsed command, through sudo/env/xargs/sh -c
 * and other wrappers and into substitutions.  why (len bytes) says
 * which rule hit.  A command that does not parse is not refused here
 * (perm_check asks for it instead).
 */
int perm_guard(const char *command, char *why, size_t len);

/* perm_is_secret - nonzero when path names a secret file (.env, keys,
 * credentials) by its name or a directory such as .ssh. */
int perm_is_secret(const char *path);

/* perm_action_name - "allow", "ask" or "deny". */
const char *perm_action_name(enum perm_action a);

#endif
