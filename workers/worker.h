/*
 * worker.h - the skeleton every worker program runs in.
 *
 * As in Postfix, a role's main() only hands its description to
 * worker_main(), which does the rest:
 *
 *   1. parses the command line (--endpoint, --provider, --cred-fd, ...);
 *   2. reads its credential from --cred-fd (the CURVE key pair shirod
 *      made for this process and the broker's public key) and the secret
 *      from --secret-fd if given (never from argv or the environment),
 *      then closes those descriptors;
 *   3. pre-jail set-up: the role's setup hook (open what it needs);
 *   4. connects a DEALER to the broker (ZeroMQ's thread and sockets
 *      exist before the jail, as sandbox.h asks);
 *   5. the role's lockdown hook: the jail (sandbox_lockdown() per role),
 *      then READY;
 *   6. serves: heartbeats every --heartbeat-ms both ways, runs each JOB
 *      through the role's service function, which may stream CHUNKs and
 *      ends in RESULT or FAIL; CANCEL interrupts a running job; SECRET
 *      replaces the secret; SHUTDOWN exits.  An asynchronous role (its
 *      `async` hooks set) serves several jobs at once instead: see
 *      struct worker_async;
 *   7. when the broker is silent for 3 heartbeats it reconnects with
 *      backoff (0.5 s doubling to 8 s) and sends READY again; after
 *      --give-up-ms of silence it exits with WORKER_EXIT_GONE.
 *
 * A malformed message from the broker, or a type the broker may not send
 * to a worker, makes the worker exit with WORKER_EXIT_PROTO: the broker
 * is the trusted side, so that is a bug or an impostor.
 *
 * The service function runs in the worker's only thread.  A long job
 * calls worker_poll() (or worker_chunk()) often, at least every few
 * hundred milliseconds: that keeps the heartbeats going and returns
 * -SHIRO_ERR_CANCELED once the broker canceled the job.
 */
#ifndef SHIRO_WORKER_H
#define SHIRO_WORKER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/msg.h"
#include "proto/zsock.h"

/* Exit statuses of a worker process. */
#define WORKER_EXIT_OK 0 /* SHUTDOWN, or a signal asking it to stop */
#define WORKER_EXIT_FATAL 1 /* set-up failed */
#define WORKER_EXIT_PROTO 2 /* malformed or forbidden input from the broker */
#define WORKER_EXIT_GONE 3 /* the broker stayed silent past --give-up-ms */
#define WORKER_EXIT_USAGE 64 /* bad command line */

#define WORKER_SECRET_MAX 8192 /* bytes of a secret */

struct worker;

/*
 * The service function of a role: do job (a JOB message, borrowed) and
 * either fill result (a RESULT message whose job key is already set: add
 * text, tries, usage, data) and return 0, or return a negative
 * SHIRO_ERR_* after worker_failure() said why (without it the FAIL says
 * "internal").  -SHIRO_ERR_CANCELED from worker_poll() may be returned
 * as is: the skeleton answers FAIL "canceled".
 */
typedef int (*worker_service_fn)(
    struct worker *w, const struct msg *job, struct msg *result);

#define WORKER_JOBS_MAX 16 /* jobs at once of an asynchronous role */
#define WORKER_ITEMS_MAX 256 /* poll items a role may add */

/*
 * An asynchronous role: up to role->jobs jobs run at once, all in the
 * skeleton's one loop.  Each round the skeleton asks the role for its
 * poll items and the longest it may wait (poll), waits on them together
 * with the broker's socket in one zsock_poll(), handles the broker's
 * messages (handing JOBs and CANCELs to the role), then lets the role act
 * on its items (ready).  Heartbeats and reconnection go on meanwhile.
 *
 * The skeleton keeps the jobs in flight: a JOB beyond role->jobs, or with
 * the number of a job in flight, gets FAIL `busy` without the role seeing
 * it.  The role answers each job it was given exactly once, with
 * worker_job_result() or worker_job_fail(), and may stream CHUNKs before
 * with worker_job_chunk(); it may answer from inside its job hook.  A
 * CANCEL makes the skeleton call cancel (the role drops the job at once,
 * sending nothing) and answer FAIL `canceled` itself; when the broker is
 * lost the skeleton calls cancel for every job in flight and answers
 * nothing (the broker requeues them).  Answers for a job no longer in
 * flight are dropped by the skeleton.
 */
struct worker_async {
	/* job - a JOB arrived; the role owns m and destroys it. */
	void (*job)(struct worker *w, struct msg *m);
	/* cancel - forget job now, sending nothing for it. */
	void (*cancel)(struct worker *w, uint64_t job);
	/*
	 * poll - fill up to max items (file descriptors: sock NULL) and
	 * return how many; *timeout_ms gets the longest wait the role
	 * allows, -1 for no limit.
	 */
	int (*poll)(struct worker *w, struct zsock_poll *items, int max,
	    long *timeout_ms);
	/*
	 * ready - after the wait: the items poll gave, revents set (all 0
	 * when the wait timed out).  The role also runs its timers here.
	 */
	void (*ready)(struct worker *w, struct zsock_poll *items, int n);
};

/* What a role gives worker_main(). */
struct worker_role {
	const char *role; /* "model", "tool" or "fs": READY's role */
	const char *provider; /* READY's provider unless --provider says */
	unsigned jobs; /* jobs at once: READY's jobs (1 when synchronous) */
	/* Pre-jail set-up, after the secret is read; NULL for none. */
	int (*setup)(struct worker *w);
	/*
	 * The jail: called after setup and the first connection, before
	 * READY.  A role calls sandbox_lockdown() (sandbox/sandbox.h) here;
	 * NULL for none.  Return 0, or a negative SHIRO_ERR_* to exit.
	 */
	int (*lockdown)(struct worker *w);
	worker_service_fn service; /* a synchronous role; NULL if async */
	const struct worker_async *async; /* an asynchronous role, or NULL */
};

/*
 * worker_main - run a worker process; returns the exit status for main().
 * Options: --endpoint URL (default ipc://$SHIRO_HOME/run/workers.sock,
 * $SHIRO_HOME defaulting to ~/.shiro), --provider NAME, --secret-fd N,
 * --cred-fd N (then the connection is CURVE with that credential, as
 * shirod's workers' socket requires), --heartbeat-ms N (default 1000),
 * --give-up-ms N (default 30000), --help.
 */
int worker_main(int argc, char **argv, const struct worker_role *role);

/*
 * worker_poll - keep the connection alive during a job: send a heartbeat
 * when due and handle what arrived.  0, or -SHIRO_ERR_CANCELED once the
 * running job is canceled.  Exits the process on SHUTDOWN or bad input.
 */
int worker_poll(struct worker *w);

/* worker_chunk - stream len bytes of text of the running job (a CHUNK). */
int worker_chunk(struct worker *w, const char *text, size_t len);

/*
 * worker_failure - say why the running job fails: code (a short name such
 * as "provider" or "badjob"), whether a retry may succeed, and a text.
 */
void worker_failure(struct worker *w, const char *code, bool retry,
    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/*
 * worker_job_chunk - stream len bytes of text of job (asynchronous roles):
 * a CHUNK with part (NULL for plain text, else e.g. "start", "thinking",
 * "retry").  Nothing is sent for a job not in flight.
 */
void worker_job_chunk(struct worker *w, uint64_t job, const char *part,
    const char *text, size_t len);

/*
 * worker_job_result - answer a job with *resultp (a RESULT whose job key
 * is set), taking it (*resultp becomes NULL).  A RESULT that fails
 * msg_check() goes out as FAIL `internal` instead.
 */
void worker_job_result(struct worker *w, struct msg **resultp);

/* worker_job_fail - answer job with FAIL {code, retry, text}. */
void worker_job_fail(struct worker *w, uint64_t job, const char *code,
    bool retry, const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* worker_job_held - whether job is in flight (given, not answered yet). */
bool worker_job_held(const struct worker *w, uint64_t job);

/* worker_provider - the provider this worker serves (borrowed). */
const char *worker_provider(const struct worker *w);

/*
 * worker_secret - the secret (from --secret-fd or the last SECRET),
 * NULL if none; *lenp gets its length.  Borrowed until the next SECRET.
 */
const unsigned char *worker_secret(const struct worker *w, size_t *lenp);

/* worker_endpoint - the broker's endpoint (borrowed), for lockdown. */
const char *worker_endpoint(const struct worker *w);

/* worker_set_data / worker_data - a pointer the role keeps in w. */
void worker_set_data(struct worker *w, void *data);
void *worker_data(const struct worker *w);

#endif
