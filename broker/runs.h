/*
 * runs.h - a person's own tool calls: RUN from a client (`shiro run`
 * and `shiro tool` against a shirod on another machine, docs/remote.md).
 *
 * A RUN names a tool of the workspace (bash or a file tool), its
 * arguments and a workspace on shirod's machine.  It goes to that
 * workspace's tool or fs worker, the ones a turn's calls use, started on
 * demand; it waits while they are busy (a turn's command, another
 * RUN).  Its command's output streams back to the client that asked as
 * REPLYs {output} with the RUN's rid, and its end as one REPLY {result,
 * ok, ...} or ERROR.  Nothing of it is logged in the chat: it is the
 * person's, not the model's, so no approval is asked and no permission
 * rule is read; the jail is the one the model's calls get.
 *
 * Bounds: RUNS_MAX RUNs at once for all clients, RUNS_PER_CLIENT for
 * one; a deadline as a turn's call has (the command's timeout plus
 * TURN_TOOL_GRACE_MS, turns.fileToolMs for a file tool), then
 * CANCEL, and the worker killed when it has not answered within
 * TURN_CANCEL_MS.  A client that is gone (its connection closed: shirod
 * sends it a PONG every tick while its RUN lasts) has its RUN canceled.
 *
 * Output is sent as the client reads it: at most RUNS_WINDOW output
 * REPLYs are out that the client has not said it read (PING {run,
 * read}); the rest waits in shirod, RUNS_PENDING_MAX bytes at most, and
 * what does not fit is counted as dropped.  So a client that reads
 * slower than its command prints never has a full queue, which libzmq's
 * heartbeat would take for a dead connection (it stops reading a
 * connection whose queue is full, and the heartbeat's timeout then
 * closes it): the end always finds room behind the output.
 */
#ifndef SHIRO_BROKER_RUNS_H
#define SHIRO_BROKER_RUNS_H

#include <stdint.h>

#include "proto/buf.h"
#include "proto/msg.h"

#include "config.h"

struct broker;
struct clients_client;
struct pool_worker;

#define RUNS_MAX 16
#define RUNS_PER_CLIENT 4
/* The output of one RUN sent to its client at most; the rest is counted
 * (the final REPLY's `dropped`), as is output that found no room in
 * shirod while the client was behind. */
#define RUNS_OUTPUT_MAX (64ULL << 20)
/* Output REPLYs sent to a client and not yet said read, at most; one
 * carries RUNS_CHUNK bytes at most (the worker's pieces joined). */
#define RUNS_WINDOW 32
#define RUNS_CHUNK (256u << 10)
/* Output of one RUN waiting in shirod for its client to read, at most. */
#define RUNS_PENDING_MAX (8u << 20)
/* A workspace whose workers could not start is tried again for a RUN at
 * most this often (ERROR jail in between). */
#define RUNS_RETRY_MS 10000
/* How long an ended RUN waits for a client that reads nothing more:
 * then the output still waiting is dropped (counted) and the end sent
 * if there is room for it, or the RUN forgotten. */
#define RUNS_FINAL_MS 60000

enum runs_state {
	RUNS_WAIT, /* no worker free yet */
	RUNS_RUN, /* its JOB is out */
	RUNS_DONE /* ended; its last answer waits behind its output for the
		   * client to read (RUNS_FINAL_MS at most without progress) */
};

struct runs_job {
	struct msg_ident client;
	char who[129]; /* the client's name, for the log */
	uint64_t rid;
	char *tool, *args, *workspace;
	enum config_role role;
	enum runs_state state;
	uint64_t job;
	int worker;
	uint64_t queued_at, started_at, deadline_ms, deadline, cancel_at;
	int canceling; /* 0, or why: 1 a person, 2 its deadline, 3 gone */
	int gone; /* the client's connection is closed: nothing to answer */
	struct msg *final; /* RUNS_DONE: the answer still to send */
	struct msg_val *final_doc; /* its doc (a REPLY's), in final */
	struct buf pend; /* output not sent yet, from pend_off on */
	size_t pend_off;
	uint64_t sent, read; /* output REPLYs sent, and read (PING) */
	uint64_t progress_at; /* when the client last took or read output */
	unsigned long long out_bytes, dropped;
};

/* runs_request - RUN m from client cl on from (attached) at now. */
void runs_request(struct broker *b, const struct msg_ident *from,
    const struct clients_client *cl, uint64_t rid, const struct msg *m,
    uint64_t now);

/* runs_interrupt - INTERRUPT {what: run, id: the RUN's rid} from from. */
void runs_interrupt(struct broker *b, const struct msg_ident *from,
    uint64_t rid, const struct msg *m, uint64_t now);

/* runs_read - PING {run, read} from from: it has read that many output
 * REPLYs of its RUN run; more may go. */
void runs_read(struct broker *b, const struct msg_ident *from,
    const struct msg *m, uint64_t now);

/* runs_owns - whether job is a RUN's. */
int runs_owns(const struct broker *b, uint64_t job);

/* runs_slot - the worker slot of a RUN's job, or -1. */
int runs_slot(const struct broker *b, uint64_t job);

/* runs_chunk, runs_result, runs_fail - a RUN's worker said CHUNK,
 * RESULT or FAIL (w is the slot it came from). */
void runs_chunk(struct broker *b, struct pool_worker *w, const struct msg *m);
void runs_result(
    struct broker *b, struct pool_worker *w, const struct msg *m, uint64_t now);
void runs_fail(
    struct broker *b, struct pool_worker *w, const struct msg *m, uint64_t now);

/* runs_lost - the worker of slot is gone: its RUN ends, effects unknown. */
void runs_lost(struct broker *b, int slot, uint64_t now);

/* runs_kick - start the RUNs waiting for a worker that is free now. */
void runs_kick(struct broker *b, uint64_t now);

/* runs_tick - deadlines, and whether each RUN's client is still there. */
void runs_tick(struct broker *b, uint64_t now);

/* runs_count - RUNs waiting and running. */
void runs_count(const struct broker *b, unsigned *waiting, unsigned *running);

/* runs_stop - shirod stops: every RUN ends (ERROR stopping). */
void runs_stop(struct broker *b);

/* runs_free - release the RUNs' memory. */
void runs_free(struct broker *b);

#endif
