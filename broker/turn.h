/*
 * turn.h - a turn of the agent: a user's message answered by a model
 * from the view (docs/memory.md, "A turn"; rules 46-58, D10, D11).
 *
 * One turn runs at a time.  It is a state machine of steps:
 *
 *	SETTLE --view built or settleTimeoutMs--> CALL --RESULT--> TOOLS
 *	                                           ^                  |
 *	                                           +----- next step --+
 *	CALL --RESULT without tool calls, nothing handed in--> DONE
 *
 * SETTLE waits until every line of the view as it was before the message
 * (pinned when the message was logged, rule 49) is built, or the
 * deadline passes; then lines still unbuilt show their input cut to 512
 * bytes, never the placeholder (D10).  Each CALL is one model call in a
 * fresh conversation (rule 50): the view in cache blocks, the Turn: line
 * and the message whole (D11), then each earlier step's reply and tool
 * results.  Text and thinking stream to every attached client as they
 * come (thinking is never logged); each step's reply text is logged as
 * kind shiro, each tool call with its result as kind tool.  A message
 * with turn set that arrives meanwhile is logged as user and handed to
 * the turn between steps (rule 46).
 *
 * The tools of this file are the broker's own, served from the store:
 * zoom(id, n) and date(id).  A later issue adds the workers' tools,
 * approvals and limits as more kinds of step.
 */
#ifndef SHIRO_BROKER_TURN_H
#define SHIRO_BROKER_TURN_H

#include <stdint.h>

#include "broker/plan.h"
#include "proto/msg.h"

struct broker;
struct pool_worker;

/* A turn's model call still unanswered after this is canceled (D9). */
#define TURN_CALL_DEADLINE_MS 600000

/*
 * turn_asked - SEND rid from client `from` logged message id (and the
 * pages after it, text whole) with turn set, from the working directory
 * cwd (NULL: none).  pinned is the view before it.  A running turn gets
 * the message handed in; otherwise a turn starts, with cwd's project
 * (notes.h).
 */
void turn_asked(struct broker *b, const struct msg_ident *from, uint64_t rid,
    uint64_t id, const char *text, size_t len, const char *cwd,
    const struct plan_line *pinned, size_t npinned, uint64_t now);

/* turn_tick - advance the turn: a view that settled, a deadline that
 * passed, a call that waits for a worker. */
void turn_tick(struct broker *b, uint64_t now);

/* turn_owns - whether job is the running turn's call. */
int turn_owns(const struct broker *b, uint64_t job);

/* turn_slot - the worker slot of the turn's call job, or -1. */
int turn_slot(const struct broker *b, uint64_t job);

/* turn_chunk, turn_result, turn_fail - the worker w answered the turn's
 * call (turn_owns was true). */
void turn_chunk(
    struct broker *b, struct pool_worker *w, const struct msg *m, uint64_t now);
void turn_result(
    struct broker *b, struct pool_worker *w, const struct msg *m, uint64_t now);
void turn_fail(
    struct broker *b, struct pool_worker *w, const struct msg *m, uint64_t now);

/* turn_lost - the worker in slot died: a call it held goes to another
 * worker if nothing of it was streamed yet, else the turn fails. */
void turn_lost(struct broker *b, int slot, uint64_t now);

/* turn_overdue - a call past TURN_CALL_DEADLINE_MS fails the turn. */
void turn_overdue(struct broker *b, uint64_t now);

/* turn_stop - shirod stops: the turn ends with code stopping. */
void turn_stop(struct broker *b);

/* turn_waiting - 1 while a turn waits for its view. */
int turn_waiting(const struct broker *b);

/* turn_free - release the turn's memory (shutdown). */
void turn_free(struct broker *b);

#endif
