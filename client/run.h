/*
 * run.h - shiro run and shiro tool in a workspace on shirod's machine,
 * when shirod runs on another (a tcp endpoint, docs/remote.md): one RUN
 * request served by that machine's tool or fs worker, the jail the
 * model's calls get there.
 */
#ifndef SHIRO_CLIENT_RUN_H
#define SHIRO_CLIENT_RUN_H

#include "shiro.h"

/*
 * run_remote - run tool with args (a JSON object's text) in workspace, a
 * directory on shirod's machine.  is_cmd (shiro run): the command's
 * output is written to stdout as it comes (escaped on a terminal) and
 * the exit code is the command's (128+N for signal N, 124 when its
 * timeout killed it, 125 when the jail failed, 130 when interrupted);
 * else (shiro tool) the result document is printed and the exit code is
 * 0.  Ctrl-C asks shirod to stop it (INTERRUPT run) and waits for the
 * end; a second Ctrl-C leaves at once.  An ERROR answer is said on
 * stderr: exit 2 for a bad tool, arguments or workspace, 10 when the
 * jail is unavailable there, 1 otherwise; 3 when shirod is lost.
 */
int run_remote(const struct shiro *s, const char *tool, const char *args,
    const char *workspace, int is_cmd);

/* run_quote - argv as one bash command line, each word single-quoted
 * (caller frees). */
char *run_quote(char *const *argv, int argc);

#endif
