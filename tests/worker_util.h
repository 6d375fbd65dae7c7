/*
 * worker_util.h - a test playing the broker to one worker process.
 *
 * The test binds a ROUTER in its temporary directory, starts a worker
 * program built next to it (the model worker, or tests/worker_testrole)
 * connected to that ROUTER, and reads and sends messages as shirod
 * would.  How a worker is started and authenticated lives here only, so
 * a change to it (a credential, say) is made once for every test.
 */
#ifndef SHIRO_WORKER_UTIL_H
#define SHIRO_WORKER_UTIL_H

#include <limits.h>
#include <stdbool.h>
#include <sys/types.h>

#include "proto/msg.h"

/* A worker under test and the broker's end of its socket. */
struct tw {
	char endpoint[PATH_MAX + 16];
	void *router;
	pid_t pid;
	struct msg_ident id; /* from its last message */
	char err_path[PATH_MAX]; /* set before tw_start: its stderr there */
	/* Set to heartbeat as shirod does: while the test waits, a
	 * HEARTBEAT goes to the worker every heartbeat interval, so that a
	 * worker on a loaded machine never takes the broker for silent.
	 * Left 0, the broker says nothing between its messages. */
	bool beat;
	long hb_ms; /* the interval tw_start gave */
	long long next_beat;
};

/* tw_bin - the path of a program built next to this test (rel to it). */
void tw_bin(const char *rel, char *out, size_t size);

/*
 * tw_start - bind the ROUTER and start prog (relative to the test's
 * directory) with a heartbeat of hb ms, giving up after give_up ms;
 * secret, if not NULL, goes on fd 3 (--secret-fd 3); extra, if not
 * NULL, is a NULL-terminated list of more arguments.
 */
void tw_start(struct tw *t, const char *prog, long hb, long give_up,
    const char *secret, const char *const *extra);

/*
 * tw_recv - the next message of type want within ms (others skipped);
 * fails the test when none comes.
 */
struct msg *tw_recv(struct tw *t, enum msg_type want, long ms);

/*
 * tw_next - the next message of any type within ms into *mp: true, or
 * false when none came.
 */
bool tw_next(struct tw *t, long ms, struct msg **mp);

/* tw_send - send m to the worker and destroy it. */
void tw_send(struct tw *t, struct msg *m);

/* tw_exit - the worker's exit status within ms, or -1. */
int tw_exit(struct tw *t, long ms);

/* tw_end - kill the worker if it still runs, and close its socket. */
void tw_end(struct tw *t);

/*
 * tw_stop - tw_end(), then end ZeroMQ's context (so only once every
 * other worker of the test is ended too).
 */
void tw_stop(struct tw *t);

/* tw_status_has - whether /proc/PID/status of the worker has a line
 * starting with line ("Seccomp:\t2"). */
bool tw_status_has(const struct tw *t, const char *line);

/* tw_drop - destroy a message the test only waited for. */
void tw_drop(struct msg *m);

#endif
