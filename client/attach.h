/*
 * attach.h - the interactive client: shiro with no command.
 *
 * Lines typed (or read from a pipe) are sent as turns; lines that start
 * with '/' are the session's commands (/help lists them).  Events from
 * the daemon stream above the prompt; the status line shows the view's
 * size.  When the daemon stops answering, the session reconnects with
 * the last event it saw, so that a restarted daemon sends what it
 * missed (or says it cannot).
 */
#ifndef SHIRO_CLIENT_ATTACH_H
#define SHIRO_CLIENT_ATTACH_H

#include "shiro.h"

/* attach_run - the interactive session; returns the exit code. */
int attach_run(struct shiro *s);

#endif
