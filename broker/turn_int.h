/*
 * turn_int.h - what turn.c (the steps of a turn, its model calls and
 * requests) and call.c (its tool calls) share: the turn's state.
 *
 * A step is one model call and what went back to it: the reply's parts,
 * then one call per tool_use part, in the order the model wrote them.
 * Each call goes
 *
 *	WAIT --permission asks--> ASK --yes/always--> WAIT
 *	  |                        |
 *	  |                        +--no, timeout, interrupt--> DONE (denied)
 *	  +--denied, no workspace, bad input----------------> DONE
 *	  +--its turn to run--> RUN --RESULT/FAIL/lost/deadline--> DONE
 *	  +--a broker tool (zoom, date): served at once-------> DONE
 *
 * and the next model call goes out once every call of the step is DONE.
 */
#ifndef SHIRO_BROKER_TURN_INT_H
#define SHIRO_BROKER_TURN_INT_H

#include <jansson.h>
#include <stdint.h>

#include "proto/buf.h"
#include "proto/msg.h"

#include "broker.h"
#include "usage.h"

struct notes_turn;
struct perm_turn;

/* No message id (a line not logged). */
#define TURN_NONE UINT64_MAX

enum turn_state {
	TURN_SETTLE, /* waiting for the view */
	TURN_CALL, /* a model call is out (or waits for a worker) */
	TURN_TOOLS, /* the step's tool calls run */
	TURN_STOPPING, /* interrupted: the running calls are being stopped */
	TURN_DONE
};

/* How a turn's calls that ask are answered (SEND's approvals). */
enum turn_mode {
	TURN_MODE_ASK, /* the attached clients are asked */
	TURN_MODE_DENY, /* headless: an ask is a deny */
	TURN_MODE_YOLO /* the rules' ask is an allow (never a deny or guard) */
};

/* What a call is, for routing and ordering. */
enum turn_kind {
	TURN_K_CHAT, /* served by the broker from the chat (zoom, date) */
	TURN_K_READ, /* a file tool that reads: fs worker, runs beside others */
	TURN_K_WRITE, /* a file tool that writes: fs worker, runs alone */
	TURN_K_EXEC, /* bash: tool worker, runs alone */
	TURN_K_BAD /* no such tool, or input that is not an object */
};

enum turn_cstate { TURN_C_WAIT, TURN_C_ASK, TURN_C_RUN, TURN_C_DONE };

/* A SEND that asked for this turn; each gets the turn's end. */
struct turn_asker {
	struct msg_ident from;
	uint64_t rid;
	uint64_t id;
};

/* A user's message handed to the turn while it ran (rule 46). */
struct turn_handed {
	uint64_t id;
	char *text;
	size_t len;
};

/* An image of a zoomed message. */
struct turn_image {
	const char *media;
	char *data;
	size_t len;
};

/* The result of one tool call, as the model reads it. */
struct turn_out {
	char *id; /* the tool_use id it answers */
	char *text;
	size_t len;
	int error;
	struct turn_image *images;
	size_t nimages;
};

/* One tool call of a step. */
struct turn_call {
	char *name;
	char *input; /* the JSON text the model wrote */
	json_t *args; /* input parsed, or NULL */
	enum turn_kind kind;
	enum turn_cstate state;
	uint64_t msg; /* its tool line, or TURN_NONE */
	uint64_t echo; /* its echo line, or TURN_NONE */
	uint64_t job; /* while RUN */
	int worker; /* its slot while RUN */
	uint64_t deadline; /* RUN: then it is canceled; ASK: then no */
	uint64_t started_us; /* RUN: when its JOB went out */
	uint64_t approval; /* its number while ASK (and after) */
	int canceling; /* a CANCEL went out; the answer is awaited */
	uint64_t cancel_at; /* then its worker is killed */
	int interrupted; /* a person interrupted it */
	int denied;
	struct turn_out out; /* valid once DONE */
};

/* One step: the model's reply, then what went back to it. */
struct turn_step {
	struct msg *reply; /* a holder of data.content: the checked parts */
	struct turn_call *calls;
	size_t ncalls;
	struct turn_handed *handed;
	size_t nhanded;
};

struct turn {
	enum turn_state state;
	uint64_t id; /* the first message answered */
	struct turn_asker *askers;
	size_t naskers;
	struct plan_line *pinned; /* the view before the message */
	size_t npinned;
	char *text; /* the message whole */
	size_t len;
	uint64_t deadline;
	struct turn_handed *early; /* handed before the first call */
	size_t nearly;
	struct turn_handed *handed; /* waiting for the next step */
	size_t nhanded;
	struct request_view view; /* rendered once settled */
	size_t extra; /* the view's lookback mark, decided once */
	size_t cut_lines; /* lines shown from their cut input (D10) */
	struct turn_step *steps;
	size_t nsteps;
	uint64_t job; /* the model call in flight, 0 when none */
	int worker; /* its slot, -1 while it waits for one */
	uint64_t sent_at;
	int started, streamed, resent;
	unsigned calls; /* model calls sent */
	struct buf reply; /* the text of every step */
	struct usage_tokens usage;
	unsigned long long spent_uusd; /* this turn's calls, estimated */
	const char *stop;
	/* Tool calls. */
	char *workspace; /* the resolved working directory, or NULL */
	char *ws_why; /* why there is none, for the calls that need one */
	enum turn_mode mode;
	struct perm_turn *pt; /* the repeat guard */
	unsigned denied; /* calls denied in this turn */
	unsigned ncalls; /* tool calls made in this turn */
	const char *limit; /* the limit that ended it, or NULL */
	uint64_t tool_us, model_us; /* time in tools and model calls */
	int in_run; /* call_run is on the stack */
	int rerun; /* and should look again when it returns */
	int prune_level; /* the last pruning told to the clients */
	uint64_t first_tool; /* the turn's first tool line, or TURN_NONE */
	struct notes_turn *notes; /* its project's notes and tasks (notes.c) */
};

/* turn_event - a new EVENT ev of the turn t. */
struct msg *turn_event(const struct turn *t, const char *ev);

/* turn_notice - publish a notice of the turn. */
void turn_notice(
    struct broker *b, const struct turn *t, const char *code, const char *text);

/* turn_end - the turn ends with code (see turn.c); t is freed. */
void turn_end(struct broker *b, const char *code, const char *text);

/* turn_step_done - every call of the last step is DONE: hand in what
 * came meanwhile, check the limits, and make the next model call. */
void turn_step_done(struct broker *b, uint64_t now);

/* turn_serve_chat - serve a broker tool (zoom, date) into c->out;
 * 0, or -1 when it failed (the text says why). */
int turn_serve_chat(struct broker *b, struct turn_call *c);

/* turn_is_chat_tool - whether name is served by the broker. */
int turn_is_chat_tool(const char *name);

/* turn_chat_tools - the broker tools' names, for an error text. */
const char *turn_chat_tools(void);

/* turn_us - a monotonic clock in microseconds. */
uint64_t turn_us(void);

/*
 * call_begin - the last step's reply asked for calls: log each as a
 * tool line, decide each (permission, approval), then run them.
 */
void call_begin(struct broker *b, struct turn *t, uint64_t now);

/* call_run - start the calls whose turn it is; the step ends when every
 * call is DONE (turn_step_done). */
void call_run(struct broker *b, struct turn *t, uint64_t now);

/* call_of_job - the running call of the last step with job, or NULL. */
struct turn_call *call_of_job(struct turn *t, uint64_t job);

/* call_chunk, call_result, call_fail - a tool worker answered c. */
void call_chunk(
    struct broker *b, struct turn *t, struct turn_call *c, const struct msg *m);
void call_result(struct broker *b, struct turn *t, struct turn_call *c,
    const struct msg *m, uint64_t now);
void call_fail(struct broker *b, struct turn *t, struct turn_call *c,
    const struct msg *m, uint64_t now);

/* call_lost - the worker of slot died: its calls end, effects unknown. */
void call_lost(struct broker *b, struct turn *t, int slot, uint64_t now);

/* call_overdue - deadlines of running calls and of approvals. */
void call_overdue(struct broker *b, struct turn *t, uint64_t now);

/* call_interrupt - a person stops the step's calls: running commands
 * are canceled, asked calls answered no, waiting ones not run.  Returns
 * how many calls it touched. */
size_t call_interrupt(struct broker *b, struct turn *t, uint64_t now);

/* call_abandon - shirod stops: every unfinished call ends now, its echo
 * saying so. */
void call_abandon(struct broker *b, struct turn *t);

/* call_deny_person - an asked call c never runs: a person (or the
 * clock) said no, why says so. */
void call_deny_person(
    struct broker *b, struct turn *t, struct turn_call *c, const char *why);

/* call_recover - at start: an echo for each tool call the last shirod
 * left without one (once), and the day's spend. */
void call_recover(struct broker *b);

/* call_tool_deadline_ms - how long a tool call may run before it is
 * canceled: bash (exec) its timeout in args plus TURN_TOOL_GRACE_MS, a
 * file tool turns.fileToolMs.  A turn's calls and RUNs (runs.h). */
uint64_t call_tool_deadline_ms(const struct broker *b, int exec, json_t *args);

/*
 * call_send_job - send JOB {job, kind tool, deadline_ms, data {tool,
 * args, workspace}} to the workspace worker w and give it the job: 0;
 * -SHIRO_ERR_AGAIN when w cannot take it (gone, or its queue is full:
 * w is killed, ask another); another error when the JOB cannot be sent
 * at all (larger than a message may be).
 */
int call_send_job(struct broker *b, struct pool_worker *w, uint64_t job,
    const char *tool, const char *args, const char *workspace,
    uint64_t deadline_ms, uint64_t now);

/* call_busy - calls of the last step that are not DONE. */
size_t call_busy(const struct turn *t);

/* call_free - release a call's memory. */
void call_free(struct turn_call *c);

/* call_state_save - write the record of where the running turn's tool
 * lines begin (TURN_NONE: no turn has any) and the day's spend. */
void call_state_save(struct broker *b, uint64_t first);

#endif
