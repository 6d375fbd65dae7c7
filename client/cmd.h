/*
 * cmd.h - the commands that talk to shirod once and exit: send, status,
 * memory, zoom, log, notes, todos, stop, and the headless turn
 * (shiro -p).
 *
 * Each returns the process's exit code (enum shiro_exit) after printing
 * its result on stdout, or on stderr what went wrong and what to do.
 */
#ifndef SHIRO_CLIENT_CMD_H
#define SHIRO_CLIENT_CMD_H

#include <signal.h>
#include <stdint.h>

#include "conn.h"
#include "shiro.h"

/* A request of the query commands. */
struct cmd_query {
	enum msg_type
	    type; /* MSG_STATUS, MSG_MEMORY, MSG_ZOOM, MSG_LOG, MSG_NOTES,
		   * MSG_STOP */
	uint64_t id, n; /* ZOOM */
	uint64_t tail; /* LOG, when has_tail */
	int has_tail;
	const char *what; /* NOTES: "notes" or "todos" */
};

/*
 * cmd_connect - attach to the daemon of s, starting one first when
 * may_start and s->autostart allow it.  Returns SHIRO_EXIT_OK and *cp,
 * or SHIRO_EXIT_UNREACHABLE (or another code) after saying why.
 */
int cmd_connect(const struct shiro *s, int may_start, uint64_t last_seq,
    const struct conn_handler *h, struct conn **cp);

/* How long a one-shot request may wait for its answer from a live daemon. */
#define CMD_REQUEST_MS 30000

/*
 * cmd_workspace - the workspace a SEND or NOTES of command cmd names
 * (docs/remote.md), into *wsp (malloc'd, or NULL: none).  Over ipc:
 * --workspace made absolute here, else the working directory.  Over tcp
 * this machine's directories mean nothing to shirod: --workspace as
 * given (an absolute path on shirod's machine, keys_workspace_ok), else
 * the saved remote's workspace, else none.  SHIRO_EXIT_OK, or an exit code after saying why.
 */
int cmd_workspace(const struct shiro *s, const char *cmd, char **wsp);

/* How a tcp client names a workspace, said when it has none. */
#define CMD_WS_HINT \
	"shiro: over tcp this machine's directory is not sent; name a " \
	"directory on shirod's machine with --workspace DIR, or save one " \
	"with the remote (shiro attach tcp://... --save NAME --workspace " \
	"DIR)"

/* cmd_new_send - a SEND of text as kind with the workspace cwd (NULL:
 * none); turn asks for a turn; key is its idempotency key (NULL: a fresh
 * one). */
struct msg *cmd_new_send(const char *kind, const char *text, int turn,
    const char *key, const char *cwd);

/* cmd_new_notes - a NOTES asking for what ("notes" or "todos") of the
 * project of the workspace cwd, or NULL when cwd is NULL. */
struct msg *cmd_new_notes(const char *what, const char *cwd);

/* cmd_key - a fresh idempotency key for a SEND (caller frees). */
char *cmd_key(void);

/*
 * cmd_read_stdin - all of stdin as a string without its last newline
 * (caller frees) and its length in *lenp (a NUL byte in it is kept, for
 * cmd_check_text to refuse), or NULL after saying why (too long,
 * unreadable).
 */
char *cmd_read_stdin(size_t *lenp);

/*
 * cmd_check_text - the one rule for the text of a message, from the
 * command line, stdin or the attached prompt: it is UTF-8 without a NUL
 * byte, at most MSG_MAX_TEXT bytes, and not empty nor only white space.
 * Returns 0, or SHIRO_EXIT_USAGE after saying on stderr what is wrong
 * with what ("the text", "the text on stdin"), as "shiro who: ...".
 */
int cmd_check_text(
    const char *who, const char *what, const char *text, size_t len);

/* cmd_send - append text as kind without a turn; prints its id. */
int cmd_send(const struct shiro *s, const char *kind, const char *text);

/* cmd_query - status, memory, zoom, log, notes, todos or stop: print
 * the answer. */
int cmd_query(const struct shiro *s, const struct cmd_query *q);

/* cmd_print - the headless turn: send text, print the reply. */
int cmd_print(const struct shiro *s, const char *text);

/* A turn the client waits for: what it has seen so far (client/turn.c). */
struct cmd_turn {
	int json; /* print each event as a JSON line */
	const char *home; /* borrowed: for messages to the user */
	const char *endpoint; /* borrowed: for messages to the user */
	uint64_t rid; /* the SEND's rid; 0 when no turn runs */
	uint64_t id; /* the message's id, once acknowledged */
	uint64_t turn; /* the id the turn's events carry (id, or the
			* running turn's this message was handed to) */
	int acked; /* the ACK came */
	int done; /* the turn ended */
	int exit_code; /* how it ended */
	int printed; /* some reply text was printed */
	int printed_nl; /* and it ended with a newline */
	int thought; /* thinking was shown on stderr, no newline yet */
	const char *text; /* borrowed: the turn's message */
	int echoed; /* its "message" event was seen */
	/* The SEND's idempotency key: set before cmd_turn to send a message
	 * again under the key it had (the daemon logs it once), or left
	 * empty for cmd_turn to make a fresh one, which it leaves here. */
	char key[40];
	/* How the turn's calls that ask are answered (SEND's approvals):
	 * "ask" (the attached clients), "deny" or "yolo"; NULL sends none. */
	const char *approvals;
	/* The SEND's workspace (borrowed; NULL: none, see cmd_workspace). */
	const char *cwd;
	/* Over tcp with no workspace: a "workspace" notice says how to
	 * name one. */
	int ws_hint;
	/* A person answers approvals here, on the terminal. */
	int interactive;
	uint64_t asking; /* the approval waiting for this person, or 0 */
	int calls_running; /* tool calls started and not yet answered */
	int64_t denied; /* tool calls denied, from the done event */
	int interrupts; /* Ctrl-C presses acted on during this turn */
};

/*
 * cmd_turn - send text as a user message that starts a turn on c, print
 * the reply as it streams, and return the exit code: SHIRO_EXIT_OK,
 * _NO_MODEL, _MODEL, _PROVIDER, _FAIL, _UNREACHABLE or _INTERRUPTED.
 * c's handler must hand every event to cmd_turn_take(t, ev) first.
 */
int cmd_turn(struct conn *c, struct cmd_turn *t, const char *text);

/*
 * cmd_turn_take - whether m (an EVENT, or an answer no request waits
 * for) belongs to the running turn t; if so it is shown (the reply's
 * text on stdout, thinking on a terminal's stderr, tool calls and
 * approvals on stderr, or a JSON line) and may end the turn.  The turn
 * ends with its `done` event (code ok: exit 0, or 7 when a call was
 * denied; no_model: 4; model: 5; unreachable: 6; stopped and stopping:
 * 8; limit: 9; jail: 10) or with an ERROR that carries its rid
 * (no_model: 4).
 */
int cmd_turn_take(struct cmd_turn *t, const struct msg *m);

/* cmd_turn_exit - the exit code of a turn's end code. */
int cmd_turn_exit(const char *code);

/* cmd_catch_signals - SIGINT, SIGTERM and SIGHUP set a flag, not kill. */
void cmd_catch_signals(void);

/* cmd_terminated - whether SIGTERM or SIGHUP (not Ctrl-C) came. */
int cmd_terminated(void);

/* cmd_stop_flag - that flag; a waiting loop clears it when it acts on it. */
volatile sig_atomic_t *cmd_stop_flag(void);

/* cmd_lost - a wait on the daemon failed with rc: say why; exit code. */
int cmd_lost(const struct shiro *s, int rc);

/* cmd_error_exit - the exit code for an ERROR answer's code. */
int cmd_error_exit(const char *code);

#endif
