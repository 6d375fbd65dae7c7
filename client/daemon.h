/*
 * daemon.h - finding out whether shirod listens, and starting it.
 *
 * A local daemon listens on a Unix socket file (the ipc endpoint).  A
 * plain connect() to that file tells at once whether anything listens
 * there, which ZeroMQ (it reconnects quietly) would not: so a client
 * without a daemon fails or starts one without waiting for a timeout.
 */
#ifndef SHIRO_CLIENT_DAEMON_H
#define SHIRO_CLIENT_DAEMON_H

#include "shiro.h"

/*
 * daemon_probe - whether something listens on the socket file path:
 * 0 yes; -SHIRO_ERR_NOENT no such file; -SHIRO_ERR_AGAIN the file is
 * there but nothing listens (a stale socket); another negative
 * SHIRO_ERR_* when it cannot be told.
 */
int daemon_probe(const char *path);

/*
 * daemon_start - start build/shirod (found like the helper programs) in
 * the background for s->home, its output appended to HOME/shirod.log,
 * and wait (at most SHIRO_START_MS) until its socket listens.  If
 * another shirod wins the race for the chat lock, waits for that one's
 * socket instead.  Returns 0, or a negative SHIRO_ERR_* after printing
 * what went wrong and what to do.
 */
int daemon_start(const struct shiro *s);

#endif
