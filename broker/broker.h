/*
 * broker.h - shirod's state and the calls its parts make on each other.
 *
 * shirod is one thread around one zmq_poll: the client ROUTER, the worker
 * ROUTER and a signalfd, with the timers of broker/timer.h deciding the
 * poll's timeout.  The parts:
 *
 *	broker.c    start-up (lock, store, fold, sockets), the loop
 *	out.c       what goes out: answers, errors, events, the trace
 *	serve.c     what clients ask: hello, send, status, memory, zoom, ...
 *	compact.c   the compactor: jobs to model workers, results, failures
 *	turn.c      turns: the view, model calls, the broker's tools
 *	notes.c     the project's notes and task list, the per-turn state
 *	provider.c  which provider serves turns and compactions, and keys
 *	prompt.c    the system prompt, the tools, the tasks
 *	request.c   requests laid out for the providers' prompt caches
 *	gate.c      the prefix gate (rule 30)
 *	usage.c     tokens per provider and model
 *	supervise.c the worker socket: READY, heartbeats, the permission table
 *	remote.c    the tcp endpoints, their keys, revocation
 *
 * Everything a client or a worker sends is untrusted: a bad message costs
 * one log line and that message (or that peer), never the daemon.
 */
#ifndef SHIRO_BROKER_H
#define SHIRO_BROKER_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "broker/plan.h"
#include "proto/msg.h"
#include "store/store.h"

struct perm;

#include "clients.h"
#include "config.h"
#include "gate.h"
#include "lograte.h"
#include "pool.h"
#include "remote.h"
#include "request.h"
#include "secret.h"
#include "timer.h"
#include "turn.h"
#include "usage.h"
#include "zap.h"

/* shirod's exit codes (docs/architecture.md, "Start-up"). */
#define BROKER_EXIT_OK 0
#define BROKER_EXIT_ERROR 1 /* could not start: the log says why */
#define BROKER_EXIT_CONFIG 2 /* config.json is wrong: the key is named */
#define BROKER_EXIT_RUNNING 3 /* another shirod owns this home */
#define BROKER_EXIT_STORE 4 /* the store failed while serving: restart */
#define BROKER_EXIT_USAGE 64 /* bad command line */

/* A compaction job still unanswered after this is canceled and fails. */
#define COMPACT_DEADLINE_MS 600000
/* Tries of a compaction call (D9: follow-ups when a line is too long). */
#define COMPACT_TRIES 5

/* The tree is committed at most this long after a node is built. */
#define BROKER_TREE_MS 20

/* Timer kinds. */
enum broker_timer {
	BROKER_T_TICK, /* heartbeats, supervision, client expiry */
	BROKER_T_RETRY, /* retry failed nodes while a turn waits */
	BROKER_T_VIEW, /* save a changed view.json */
	BROKER_T_SETTLE, /* a waiting turn's deadline */
	BROKER_T_STOP, /* give up waiting for workers to exit */
	BROKER_T_TREE /* commit the nodes and batch records made */
};

/* A compaction job: a node of the tree on its way to a model worker. */
struct compact_job {
	uint64_t id; /* job number on the wire, never reused */
	unsigned l;
	uint64_t i;
	uint32_t src_size;
	int worker; /* slot index while sent to a worker, -1 waiting */
	uint64_t sent_at;
	int gated; /* held back by the prefix gate at the last dispatch */
};

/* A node built but not yet committed to the store. */
struct compact_node {
	unsigned l;
	uint64_t i;
	char *text;
	size_t len;
	uint32_t size;
};

/* A rendered context line "id+n|text" of a built node. */
struct compact_cached {
	unsigned l;
	uint64_t i;
	char *text; /* NULL: empty slot */
	size_t len;
};
#define COMPACT_CACHE 4096 /* slots of the line cache */

/* How often a node failed (D5); only failed nodes are listed. */
struct compact_failure {
	unsigned l;
	uint64_t i;
	unsigned count;
};

/* A SEND read in this poll round, waiting for the group commit. */
struct serve_send {
	struct msg_ident from;
	struct msg *m; /* owned */
	uint64_t rid;
	int turn;
};

struct broker {
	struct config cfg;
	char *bindir; /* where worker programs live */
	struct store *store;
	struct plan *plan;
	void *csock, *wsock; /* client and worker ROUTERs */
	int sigfd;
	struct pool pool;
	struct secrets secrets; /* the providers' keys (secret_load) */
	struct zap zap; /* who may connect to csock and wsock */
	struct remote remote; /* their tcp endpoints (remote.h) */
	struct lograte log_unknown; /* worker messages dropped */
	int broken; /* BROKER_EXIT_STORE once broker_fail was called */
	struct clients clients;
	struct timers timers;
	uint64_t started_at;
	int stopping; /* STOP or SIGTERM: draining */
	const char *stop_why; /* what asked, for the clients' notice */
	int stop_now; /* leave the loop */
	FILE *trace; /* planner events, the scenario language */

	/* The compactor. */
	struct compact_job *jobs;
	size_t njobs, jobs_cap;
	uint64_t next_job;
	struct compact_failure *failed;
	size_t nfailed, failed_cap;
	uint64_t failures_total, jobs_done, nodes_cut;
	/* The tree's write-behind: nodes and batch records made since the
	 * last commit, committed together within BROKER_TREE_MS. */
	struct compact_node *tnodes;
	size_t ntnodes, tnodes_cap;
	struct store_batch *tbatches;
	size_t ntbatches, tbatches_cap;
	int tree_armed;
	struct compact_cached *lines; /* COMPACT_CACHE slots, or NULL */
	uint64_t tree_commits;
	int view_dirty;
	uint64_t view_timer, view_due;

	/* The turn (one at a time); nturns is 1 while it waits for its
	 * view (D5). */
	struct turn *turn;
	size_t nturns;
	uint64_t turns_done;

	/* A person's own tool calls (RUN, runs.h). */
	struct runs_job *runs;
	size_t nruns, runs_cap;
	uint64_t runs_done;
	uint64_t runs_reset_at; /* when a RUN last let a failed jail retry */

	/* SENDs of this round. */
	struct serve_send *sends;
	size_t nsends, sends_cap;

	/* Model calls: the shared head of every request, where the last
	 * requests marked their views, the prefix gate, the tokens used. */
	struct request_base rb;
	struct request_mark tmark, cmark;
	struct gate gate;
	struct usage usage;
	char *prompt_notes; /* AGENTS.md files left out, and why */

	/* Tool calls: the permission engine (the settings' rules, and the
	 * "always" answers of this run), approvals' numbers, the estimated
	 * spend of today's turns (limits.maxSpendUsd.day). */
	struct perm *perm;
	uint64_t next_approval;
	char spend_day[16];
	unsigned long long spend_uusd, spend_saved;
	uint64_t tool_calls;

	/* Counters for STATUS. */
	uint64_t n_received, n_refused, n_bad, n_events, n_slow;
};

/* serve_client - handle one message from a client (takes *mp). */
void serve_client(
    struct broker *b, const struct msg_ident *from, struct msg **mp);

/* serve_flush - log the SENDs of this round in one group commit. */
void serve_flush(struct broker *b);

/* serve_turns - advance the turn: a view that settled, a deadline that
 * passed (turn_tick). */
void serve_turns(struct broker *b, uint64_t now);

/*
 * serve_append_own - log text shirod itself writes (a reply as kind
 * shiro, a tool call as kind tool) as a client's SEND would be logged:
 * pages, leaves, the planner, a `message` event.  *firstp (may be NULL)
 * gets the first id.  0 or the store's error (logged).
 */
int serve_append_own(struct broker *b, enum store_kind kind, const char *text,
    size_t len, uint64_t *firstp);

/*
 * serve_append_keyed - serve_append_own with an idempotency key (NULL:
 * none): a key already logged writes nothing, *firstp is the id it got
 * then and *dupp (may be NULL) is set.
 */
int serve_append_keyed(struct broker *b, enum store_kind kind, const char *text,
    size_t len, const char *key, uint64_t *firstp, int *dupp);

/* serve_status - fill map with the status document. */
void serve_status(struct broker *b, struct msg_val *doc);

/* compact_appended - message id (text, len) was logged: feed the planner,
 * run the sawtooth and log its batch; node writes are the caller's. */
int compact_appended(struct broker *b, uint64_t id, int built, uint32_t size);

/* compact_node_put - node (l, i) was built: keep it for the next tree
 * commit (copies text). */
void compact_node_put(struct broker *b, unsigned l, uint64_t i,
    const char *text, size_t len, uint32_t size);

/* compact_node_get - node (l, i) from the pending commit or the store,
 * as store_node_get (out->text is the caller's). */
int compact_node_get(
    struct broker *b, unsigned l, uint64_t i, struct store_node *out);

/* compact_commit - commit the pending nodes and batch records. */
void compact_commit(struct broker *b);

/* compact_chunk - CHUNK for a job from worker w (a response started, or
 * a turn's text). */
void compact_chunk(
    struct broker *b, struct pool_worker *w, const struct msg *m, uint64_t now);

/* compact_line_text - the line "id+n|text" of built node (l, i),
 * borrowed until the next call; 0 or a store error. */
int compact_line_text(
    struct broker *b, unsigned l, uint64_t i, const char **sp, size_t *lenp);

/* compact_dispatch - start every ready job the workers can take. */
void compact_dispatch(struct broker *b, uint64_t now);

/* compact_result - RESULT for job from worker w. */
void compact_result(
    struct broker *b, struct pool_worker *w, const struct msg *m, uint64_t now);

/* compact_fail - FAIL for job from worker w. */
void compact_fail(
    struct broker *b, struct pool_worker *w, const struct msg *m, uint64_t now);

/* compact_requeue - the worker that held job died or reconnected: job
 * and every other job of that worker go to another (a turn's call too,
 * turn_lost). */
void compact_requeue(struct broker *b, uint64_t job);

/* compact_overdue - cancel jobs past their deadline (as failures). */
void compact_overdue(struct broker *b, uint64_t now);

/* compact_turn_waits - a turn waits for the view: only its unbuilt lines
 * run (D5); other running jobs stop without a failure. */
void compact_turn_waits(struct broker *b, uint64_t now);

/* compact_retry - every failed node is ready again (next message, or the
 * retry timer while a turn waits). */
void compact_retry(struct broker *b);

/* compact_waiting - jobs waiting for a worker. */
size_t compact_waiting(const struct broker *b);

/* compact_leaf_text - the node text of a message: the text itself when
 * it fits a node, flattened if only its flat form fits; NULL otherwise.
 * Returns a malloc'd string and its length. */
char *compact_leaf_text(const char *text, size_t len, size_t *outlen);

/* compact_cut - the longest prefix of valid UTF-8 s (len bytes) within max
 * bytes that ends at a character boundary. */
size_t compact_cut(const char *s, size_t len, size_t max);

/*
 * broker_fail - the store can no longer be trusted to log (a poisoned
 * store, a refused tree commit, the planner out of step with the log):
 * log why, and leave the loop at once with BROKER_EXIT_STORE, without
 * writing anything more.  Nothing acknowledged is lost (it is in the
 * log), and the next start repairs and folds the chat again.
 */
void broker_fail(struct broker *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/*
 * broker_check_counts - after a flush: the store's count of messages and
 * the planner's must agree; broker_fail when they do not.  0 or -1.
 */
int broker_check_counts(struct broker *b);

/* supervise_worker - handle one message from the worker socket, which
 * came on a connection with User-Id user. */
void supervise_worker(struct broker *b, const struct msg_ident *from,
    const struct msg_user *user, struct msg **mp, uint64_t now);

/* supervise_tick - heartbeats to workers, dead ones killed, jobs back. */
void supervise_tick(struct broker *b, uint64_t now);

/* supervise_reap - collect exited workers (SIGCHLD). */
void supervise_reap(struct broker *b, uint64_t now);

/* supervise_bad - a malformed frame arrived on the worker socket on a
 * connection with User-Id user. */
void supervise_bad(struct broker *b, const struct msg_user *user, uint64_t now);

#endif
