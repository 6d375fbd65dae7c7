/*
 * turn.h - a turn of the agent: a user's message answered by a model
 * from the view, with the tools of the chat and of the workspace
 * (docs/memory.md, "A turn"; docs/tools.md, "How calls flow"; rules
 * 46-58, D10, D11).
 *
 * One turn runs at a time.  It is a state machine of steps:
 *
 *	SETTLE --view built or settleTimeoutMs--> CALL --RESULT--> TOOLS
 *	                                           ^                  |
 *	                                           +-- every call done +
 *	CALL --RESULT without tool calls, nothing handed in--> DONE
 *	any --INTERRUPT turn--> STOPPING (running calls stopped) --> DONE
 *
 * SETTLE waits until every line of the view as it was before the message
 * (pinned when the message was logged, rule 49) is built, or the
 * deadline passes; then lines still unbuilt show their input cut to 512
 * bytes, never the placeholder (D10).  Each CALL is one model call in a
 * fresh conversation (rule 50): the view in cache blocks, the per-turn
 * state, the Turn: line and the message whole (D11), then each earlier
 * step's reply and tool results, pruned on the wire past
 * turns.pruneBytes.  Text and thinking stream to every attached client
 * as they come (thinking is never logged); each step's reply text is
 * logged as kind shiro, each tool call as kind tool before it runs and
 * its result as kind echo after (rule 48).  A user message that arrives
 * meanwhile is logged and handed to the turn between steps (rule 46).
 *
 * The broker decides every call's permission (tools/perm.h) before a
 * worker sees it; calls that ask wait for a person's answer (APPROVE).
 * The workspace tools run in tool and fs workers started for the
 * turn's working directory (SEND's cwd); zoom(id, n) and date(id) are
 * the broker's own, served from the store.
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
/* A file tool's call unanswered after turns.fileToolMs (2 minutes) is
 * canceled; bash gets its own timeout and this much more. */
#define TURN_TOOL_GRACE_MS 30000
/* A canceled call's worker has this long to answer before it is
 * killed. */
#define TURN_CANCEL_MS 5000

/* What a turn asked with (SEND): its working directory and how calls
 * that ask are answered ("ask", "deny" or "yolo"; NULL is ask). */
struct turn_ask {
	const char *cwd; /* may be NULL */
	const char *approvals;
};

/*
 * turn_init - at start: the permission engine from the settings, the
 * day's spend, and an echo for each tool call a crash left without one
 * (logged once, however often shirod restarts).
 */
void turn_init(struct broker *b);

/*
 * turn_asked - SEND rid from client `from` logged message id (and the
 * pages after it, text whole) with turn set.  pinned is the view before
 * it.  A running turn gets the message handed in; otherwise a turn
 * starts with a's working directory (its workspace, and the project of
 * its notes, notes.h) and approvals.
 */
void turn_asked(struct broker *b, const struct msg_ident *from, uint64_t rid,
    uint64_t id, const char *text, size_t len, const struct plan_line *pinned,
    size_t npinned, const struct turn_ask *a, uint64_t now);

/* turn_hand - a user message id logged without turn set: handed to the
 * running turn, if one runs (rule 46); 1 if it was. */
int turn_hand(struct broker *b, uint64_t id, const char *text, size_t len);

/*
 * turn_approve - APPROVE from client from (named name): the first
 * answer to an asked call wins (REPLY), a later one or an unknown
 * number gets ERROR approval.
 */
void turn_approve(struct broker *b, const struct msg_ident *from,
    const char *name, uint64_t rid, const struct msg *m, uint64_t now);

/*
 * turn_interrupt - INTERRUPT from a client: "command" stops the step's
 * running commands (the turn goes on), "turn" the whole turn.  REPLY,
 * or ERROR interrupt when there is nothing to stop.
 */
void turn_interrupt(struct broker *b, const struct msg_ident *from,
    uint64_t rid, const struct msg *m, uint64_t now);

/* turn_tick - advance the turn: a view that settled, a deadline that
 * passed, a call that waits for a worker. */
void turn_tick(struct broker *b, uint64_t now);

/* turn_owns - whether job is the running turn's (a model call or one of
 * its tool calls). */
int turn_owns(const struct broker *b, uint64_t job);

/* turn_slot - the worker slot of the turn's job, or -1. */
int turn_slot(const struct broker *b, uint64_t job);

/* turn_chunk, turn_result, turn_fail - the worker w answered a job of
 * the turn (turn_owns was true). */
void turn_chunk(
    struct broker *b, struct pool_worker *w, const struct msg *m, uint64_t now);
void turn_result(
    struct broker *b, struct pool_worker *w, const struct msg *m, uint64_t now);
void turn_fail(
    struct broker *b, struct pool_worker *w, const struct msg *m, uint64_t now);

/* turn_lost - the worker in slot died: a model call it held goes to
 * another worker if nothing of it was streamed yet, else the turn fails;
 * a tool call it ran ends with its effects unknown. */
void turn_lost(struct broker *b, int slot, uint64_t now);

/* turn_overdue - deadlines: a model call past TURN_CALL_DEADLINE_MS
 * fails the turn; tool calls and approvals past theirs end. */
void turn_overdue(struct broker *b, uint64_t now);

/*
 * turn_workspace - the workspace a client's cwd names: an existing
 * directory, resolved, neither / nor inside the chat's home (the
 * workers hide the home: no tool could reach it, and the chat is no
 * place for the model's edits).  The resolved path (caller frees), or
 * NULL with *whyp saying why (caller frees).
 */
char *turn_workspace(const struct broker *b, const char *cwd, char **whyp);

/* turn_stop - shirod stops: the turn ends with code stopping. */
void turn_stop(struct broker *b);

/* turn_waiting - 1 while a turn waits for its view. */
int turn_waiting(const struct broker *b);

/* turn_free - release the turn's memory and the engine (shutdown). */
void turn_free(struct broker *b);

#endif
