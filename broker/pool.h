/*
 * pool.h - the worker pool: spawn, watch and restart shirod's workers.
 *
 * This is the supervision half of Postfix's master and of the zguide's
 * Paranoid Pirate: the pool has one slot per configured worker (a role,
 * a provider for model workers, a program).  A slot goes
 *
 *	DOWN --spawn--> STARTING --READY--> IDLE <--job/result--> BUSY
 *	  ^                |                  |                     |
 *	  +-- exit, kill, missed heartbeats, READY timeout ----------+
 *
 * A slot that goes down is started again after a back-off that doubles
 * from restart.minMs up to restart.maxMs, and falls back to the minimum
 * once a worker has stayed up for a while.  The job a worker held when it
 * went down is handed back to the caller, who gives it to another worker.
 *
 * The pool never reads the sockets: the broker tells it what arrived
 * (pool_ready, pool_seen) and what happened to processes (pool_reaped),
 * and asks it what to do (pool_tick).  The clock is an argument.
 *
 * Each process the pool starts gets a credential of its own: a fresh
 * CURVE key pair and the broker's public key, written into a pipe that
 * the child inherits as fd 3 (--cred-fd 3), never in argv or the
 * environment.  Its public key goes into the ZAP handler's table (see
 * zap.h) under the User-Id "w<slot>.<start>", so the broker knows each
 * worker message's slot by its authenticated connection, not by what
 * the peer says about itself, and the key is dropped from the table
 * when the process is killed or reaped.  A worker runs with a small
 * environment the pool builds (pool_init), never shirod's own.
 *
 * Remote workers (docs/remote.md) join the same pool: a model worker on
 * another machine that connects to a tcp endpoint with a key listed in
 * keys/workers/ gets a slot of its own at its first READY, known by its
 * key's User-Id ("r:NAME"), with no process and no restart.  It serves
 * the provider its READY names (one shirod knows), with its own key for
 * it: shirod sends it no SECRET.  It goes DOWN when it stops
 * heartbeating (heartbeat.remoteLiveness periods), when its connection
 * is gone, when it misbehaves (then its next READY is refused for the
 * back-off) or when its key is revoked; a READY on a new connection
 * (it reconnected) moves the slot there, and the jobs it held on the
 * old one go to other workers.  Local and remote slots of a provider are
 * one pool to pool_idle.
 */
#ifndef SHIRO_BROKER_POOL_H
#define SHIRO_BROKER_POOL_H

#include <stdint.h>
#include <sys/types.h>

#include "proto/msg.h"

#include "config.h"
#include "zap.h"

enum pool_state {
	POOL_DOWN, /* no process; restart_at says when to start one */
	POOL_STARTING, /* forked, waiting for READY */
	POOL_IDLE, /* ready, no job */
	POOL_BUSY, /* running one job or more (up to max_jobs) */
	POOL_DYING /* killed, waiting to reap pid */
};

/* The most jobs one worker runs at once (READY's jobs is cut to it). */
#define POOL_JOBS_MAX 16

/* Remote workers' slots at most (one per admitted key's name). */
#define POOL_REMOTE_MAX 64

struct pool_worker {
	unsigned idx;
	enum config_role role;
	const char *provider; /* borrowed from the config; NULL unless model */
	const char *path; /* the program */
	const char *workspace; /* --workspace (borrowed), or NULL */
	enum pool_state state;
	pid_t pid;
	char user[ZAP_USER_MAX]; /* the User-Id of pid's key; "" if none */
	struct msg_ident ident; /* valid from READY on */
	uint64_t spawned_at, ready_at, last_seen, restart_at;
	unsigned backoff_ms;
	unsigned starts; /* processes started in this slot */
	unsigned jobs_done;
	uint64_t jobs[POOL_JOBS_MAX]; /* the jobs held, njobs of them */
	unsigned njobs;
	unsigned max_jobs; /* what READY said it runs at once */
	int secret_sent;
	int warned; /* "cannot run" was logged */
	int remote; /* a remote worker: no process, user is "r:NAME" */
	/* A tool or fs worker started for a turn's workspace, not by the
	 * settings (pool_for_workspace): workspace is its own copy. */
	int ondemand;
	int retired; /* stopped for idleness: down, never restarted */
	uint64_t used_at; /* the last job given, or READY */
	uint64_t idle_since; /* first seen idle by pool_retire_idle, or 0 */
	unsigned failed_starts; /* processes that ended before READY */
};

struct pool {
	struct pool_worker *w;
	unsigned n;
	const struct config *cfg;
	char *endpoint; /* the workers' endpoint, passed in argv */
	char *home;
	unsigned hb_ms, liveness, min_ms, max_ms;
	unsigned remote_liveness; /* heartbeats a remote worker may miss */
	unsigned ready_timeout_ms;
	int stopping; /* pool_stop() was called: no more restarts */
	pid_t broker_pid;
	struct zap_keys *keys; /* where the workers' keys are admitted */
	char server_key[ZSOCK_KEY_Z85 + 1]; /* the worker socket's public */
	char **envp; /* the workers' environment */
	unsigned cap; /* slots allocated: the configured, then spares for
		       * workspaces and remote slots (never reallocated:
		       * pointers stay) */
	char *ws_path[CONFIG_NROLES]; /* the program of a workspace's
				       * worker, per role */
};

/*
 * Workers for a workspace: a turn's file tools go to fs workers and its
 * commands to tool workers started for that one directory
 * (--workspace), since each confines itself to the workspace it was
 * started with.  At most this many of each per workspace, and this many
 * slots for all workspaces together; an idle one is stopped after
 * turns.workspaceIdleMs and its slot serves another workspace later.
 */
#define POOL_WS_FS 2
#define POOL_WS_TOOL 1
#define POOL_WS_SLOTS 32
/* A workspace whose workers ended this many times in a row before READY
 * cannot have one (the jail is unavailable). */
#define POOL_WS_FAILED 2

/*
 * The environment of every worker: only these variables of shirod's own
 * (docs/architecture.md says why each is there), and SHIRO_HOME set to
 * the home shirod serves.  The two settings of the tool role's jail
 * pass only with a value of at most POOL_ENV_FLAG_MAX bytes.
 */
#define POOL_ENV_NAMES "PATH", "HOME", "LANG", "LANGUAGE", "TZ"
#define POOL_ENV_PREFIX "LC_"
#define POOL_ENV_FLAGS "SHIRO_TOOL_NET", "SHIRO_JAIL_CGROUP"
#define POOL_ENV_FLAG_MAX 16
#define POOL_ENV_VALUE_MAX 4096 /* a longer value is left out */

/*
 * pool_init - one DOWN slot per configured worker, due to start now.
 * bindir is where worker programs without a configured path are found
 * (shirod's own directory).  Each process started gets a key admitted
 * in keys and server_key (Z85) as the broker's public key.  cfg and keys
 * must outlive the pool.  The workers' environment is taken from this
 * process's now.
 */
void pool_init(struct pool *p, const struct config *cfg, const char *bindir,
    struct zap_keys *keys, const char *server_key);

/* pool_free - release the pool's memory (processes are not touched). */
void pool_free(struct pool *p);

/*
 * pool_spawn - fork and exec the worker of slot w (which must be DOWN),
 * with stdin from /dev/null, stdout/stderr to shirod's log, the pool's
 * environment and its credential on fd 3.  The worker finds the broker
 * through argv (--endpoint, --provider, --heartbeat-ms, --cred-fd 3, and
 * --workspace for a worker that has one); a provider's key follows over
 * the socket after READY.  0, or a negative SHIRO_ERR_* (then the slot
 * stays DOWN with its back-off advanced).
 */
int pool_spawn(struct pool *p, struct pool_worker *w, uint64_t now);

/*
 * pool_by_user - the slot whose current process holds the key of User-Id
 * user (STARTING, IDLE or BUSY), or NULL: a User-Id of a process that
 * is gone, or of no slot.
 */
struct pool_worker *pool_by_user(struct pool *p, const struct msg_user *user);

/*
 * pool_ready - READY on connection ident from the process of slot w
 * (found by its User-Id), saying role and provider.  0: w is IDLE and
 * ident is its connection.  -SHIRO_ERR_STATE: w said READY already (or
 * is not STARTING); -SHIRO_ERR_PERM: another role or provider than w
 * was started for.  *whyp says why (borrowed); w is unchanged then.
 */
int pool_ready(struct pool_worker *w, const struct msg_ident *ident,
    const char *role, const char *provider, uint64_t now, const char **whyp);

/*
 * pool_remote - the slot of the remote worker admitted as user ("r:NAME"),
 * made (DOWN) if it has none and make is set; NULL when it has none, or
 * when POOL_REMOTE_MAX remote slots exist already.
 */
struct pool_worker *pool_remote(
    struct pool *p, const char *user, int make, uint64_t now);

/*
 * pool_remote_ready - the remote slot w said READY on connection ident
 * for provider (borrowed from the config): w is IDLE there.  Returns
 * the first job w held on its earlier connection (0 if none), which the
 * caller requeues with the others, as after pool_kill.  The caller has
 * checked that w may be ready now (not in back-off, not on the same
 * connection again).
 */
uint64_t pool_remote_ready(struct pool_worker *w, const struct msg_ident *ident,
    const char *provider, uint64_t now);

/* pool_has_pid - whether pid is a live (not yet reaped) worker's. */
int pool_has_pid(const struct pool *p, pid_t pid);

/* pool_seen - the worker of w showed a sign of life at now. */
void pool_seen(struct pool_worker *w, uint64_t now);

/*
 * pool_idle - a ready worker of role (and provider) with room for one
 * more job: the one with the fewest jobs, then the least used; or NULL.
 */
struct pool_worker *pool_idle(
    struct pool *p, enum config_role role, const char *provider);

/* pool_capacity - w runs up to jobs jobs at once (READY's jobs, cut to
 * 1 .. POOL_JOBS_MAX). */
void pool_capacity(struct pool_worker *w, uint64_t jobs);

/* pool_assign - give job to the ready worker w, which has room (BUSY). */
void pool_assign(struct pool_worker *w, uint64_t job, uint64_t now);

/* pool_holds - whether w holds job. */
int pool_holds(const struct pool_worker *w, uint64_t job);

/* pool_done - w finished job (IDLE when it was its last); 1 if w held
 * it, 0 if not. */
int pool_done(struct pool_worker *w, uint64_t job);

/*
 * Of the calls below that hand back "the job it held": a worker may hold
 * several jobs; the one returned is the first, and the slot forgets them
 * all.  The caller finds the others by the slot (compact_requeue).
 */

/*
 * pool_kill - kill w's process (SIGKILL) and mark it DYING: it restarts
 * once reaped.  A remote slot goes DOWN at once, and its next READY is
 * refused until the back-off has passed.  Returns the job it held (0 if
 * none), which the caller must requeue.  why goes to the log.
 */
uint64_t pool_kill(
    struct pool *p, struct pool_worker *w, const char *why, uint64_t now);

/*
 * pool_reaped - process pid ended with wait status; returns its slot (now
 * DOWN, restart scheduled) and puts the job it held in *jobp, or NULL if
 * pid is not one of the pool's.
 */
struct pool_worker *pool_reaped(
    struct pool *p, pid_t pid, int status, uint64_t now, uint64_t *jobp);

/*
 * pool_tick - housekeeping at now: kill workers whose heartbeats stopped
 * (liveness periods without a sign of life) or who never sent READY,
 * start the slots whose back-off has passed, and reset the back-off of
 * workers that have stayed up.  The jobs held by killed workers are
 * written to jobs[], which has room for max (the pool kills at most max
 * workers per tick); *njobs gets their number.
 */
void pool_tick(struct pool *p, uint64_t now, uint64_t *jobs, unsigned max,
    unsigned *njobs);

/* pool_next_due - the earliest time pool_tick has something to do. */
uint64_t pool_next_due(const struct pool *p, uint64_t now);

/* pool_count - slots of role (and provider if not NULL) in state. */
unsigned pool_count(const struct pool *p, enum config_role role,
    const char *provider, enum pool_state state);

/* pool_state_name - "down", "starting", "idle", "busy", "dying". */
const char *pool_state_name(enum pool_state s);

/* pool_stop - send SIGTERM to every live worker (shutdown). */
void pool_stop(struct pool *p);

/* pool_alive - live worker processes (not yet reaped). */
unsigned pool_alive(const struct pool *p);

/*
 * pool_for_workspace - a ready worker of role (CONFIG_ROLE_TOOL or
 * CONFIG_ROLE_FS) serving workspace (an absolute, resolved path) with
 * room for a job, or NULL.  When it returns NULL and fewer than the
 * workspace's share are up or starting, one more is started (in a spare
 * slot, or one retired); the caller asks again once a worker said READY.
 * *failedp gets how many times in a row the workspace's workers of role
 * ended before READY: at POOL_WS_FAILED nothing more is started for it
 * until pool_ws_reset.
 */
struct pool_worker *pool_for_workspace(struct pool *p, enum config_role role,
    const char *workspace, uint64_t now, unsigned *failedp);

/* pool_ws_reset - forget the failed starts of workspace's workers, so
 * that the next call tries again. */
void pool_ws_reset(struct pool *p, const char *workspace);

/*
 * pool_retire_idle - stop (SIGTERM) every workspace worker idle for
 * idle_ms; its slot is retired until a workspace needs one.  Returns how
 * many were stopped.
 */
unsigned pool_retire_idle(struct pool *p, uint64_t now, uint64_t idle_ms);

#endif
