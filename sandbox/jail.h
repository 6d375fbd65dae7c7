/*
 * jail.h - run one command in a fresh, isolated child (the tool jail).
 *
 * Each run gets new user, mount, pid, ipc, uts, cgroup and (unless the
 * spec turns the network on) network namespaces.  The new root is a
 * tmpfs holding read-only binds of the system directories, the
 * workspace read-write at its own path (with .git and the spec's other
 * read-only subpaths re-bound read-only), a private /tmp, a minimal
 * /dev and a read-only /proc of the new pid namespace.  $SHIRO_HOME,
 * the user's home and secrets, /run and socket directories are absent.
 * Capabilities are dropped, no_new_privs is set, Landlock (where the
 * kernel has it) repeats the file rules, and a seccomp filter is
 * installed last before execve.  docs/jail.md lists what is refused and
 * why.
 *
 * Process tree: the caller (monitor) -> the jail's init (pid 1 of the
 * new pid namespace, sets up the mounts and waits) -> the command.  When
 * the command exits, init exits with its status and the kernel kills
 * everything left in the namespace: nothing a command starts outlives
 * it.  A timeout or a cancel kills init, which has the same effect.
 *
 * Two ways to use it:
 *  - jail_run(): blocking, for simple callers and tests;
 *  - jail_start() / jail_pollfds() / jail_step() / jail_finish(): for an
 *    event loop (the tool worker polls the fds together with its zmq
 *    sockets so it keeps heartbeating while a command runs).
 *
 * Memory: struct jail_spec and everything it points to is borrowed and
 * must stay valid until jail_start() returns (jail_start copies what it
 * needs), except *cancel and on_output_arg, which are used until
 * jail_finish().  struct jail is owned by the caller from jail_start() until
 * jail_finish(), which frees it and sets the pointer to NULL.
 *
 * Thread and fork safety: jail_start() allocates everything before it
 * clones, so the child never calls malloc; it may be called from a
 * multi-threaded process.  One struct jail is used by one thread, and
 * that thread must outlive the run: the jail is killed when the thread
 * that started it ends (the parent-death signal follows the thread), as
 * when the whole worker dies.
 */
#ifndef SHIRO_JAIL_H
#define SHIRO_JAIL_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "sandbox.h"

/* Which output stream a chunk came from (jail_output_fn). */
enum jail_stream { JAIL_STDOUT = 1, JAIL_STDERR = 2 };

/*
 * jail_output_fn - receives the command's output as it comes.  data is
 * borrowed for the call only.  Called from jail_step() / jail_run() in
 * the caller's thread.
 */
typedef void (*jail_output_fn)(
    void *arg, enum jail_stream stream, const char *data, size_t len);

/* Resource limits; 0 in any field means the default in parentheses. */
struct jail_limits {
	uint64_t cpu_s; /* RLIMIT_CPU, seconds of CPU (600) */
	uint64_t as_bytes; /* RLIMIT_AS per process (4 GiB) */
	uint64_t nproc; /* RLIMIT_NPROC, and cgroup pids.max (512) */
	uint64_t fsize_bytes; /* RLIMIT_FSIZE, largest file (1 GiB) */
	uint64_t nofile; /* RLIMIT_NOFILE (1024) */
	uint64_t mem_bytes; /* cgroup memory limit, where available (4 GiB) */
	uint64_t tmp_bytes; /* size of the private /tmp tmpfs (256 MiB) */
};

struct jail_spec {
	/* The command: argv[0] is looked up in PATH inside the jail when
	 * it has no '/'.  NULL-terminated; required. */
	const char *const *argv;
	/* The workspace: an absolute host path of a directory, mounted
	 * read-write at the same path inside.  NULL: no workspace (cwd is
	 * /tmp).  It may not be / or a system directory. */
	const char *workspace;
	/* Working directory inside the jail; NULL means the workspace. */
	const char *cwd;
	/* Subpaths of the workspace re-bound read-only, relative, resolved
	 * without following symlinks; missing ones are skipped.
	 * NULL-terminated; NULL means the default {".git", ".shiro"}. */
	const char *const *ro_subpaths;
	/* Absolute host paths that must not be visible.  Paths outside the
	 * workspace are absent anyway; any of these inside the workspace is
	 * covered by an empty read-only directory (a file by /dev/null).
	 * Symlinks are resolved on the host first.  NULL-terminated; the
	 * defaults ($SHIRO_HOME, ~/.shiro, ~/.ssh, ~/.gnupg, ~/.aws and the
	 * others docs/jail.md lists) are always added. */
	const char *const *hide_paths;
	/* The environment: "NAME=value" entries, NULL-terminated.  NULL
	 * means jail_default_env(): PATH, HOME=/tmp, LANG, TERM, TZ and
	 * LC_* copied from the caller, and nothing else. */
	const char *const *envp;
	/* 1: share the host's network (AF_UNIX, AF_INET, AF_INET6 sockets
	 * allowed).  Set only from a person's setting, never from the
	 * model.  0 (default): a private network namespace with only
	 * loopback, and only AF_UNIX sockets. */
	int net;
	/* 1: run without namespaces, seccomp and Landlock (limits, the
	 * clean environment and the tree kill still apply).  Only from an
	 * explicit setting by a person; never the fallback when the kernel
	 * lacks a feature. */
	int unjailed;
	/* Wall-clock limit in milliseconds; 0 means none. */
	unsigned timeout_ms;
	struct jail_limits limits;
	/* Input: an fd the command reads as stdin, or -1 for /dev/null. */
	int stdin_fd;
	/* Output: with on_output set, stdout and stderr go through pipes to
	 * on_output (and are counted).  Without it, stdout_fd/stderr_fd are
	 * given to the command as fds 1 and 2 (-1 means /dev/null) and
	 * nothing is counted. */
	jail_output_fn on_output;
	void *on_output_arg;
	int stdout_fd;
	int stderr_fd;
	/* Cancel: when *cancel becomes nonzero (a signal handler may set
	 * it), the run's whole tree is killed and the result says
	 * interrupted.  May be NULL.  Checked at least every 50 ms. */
	volatile sig_atomic_t *cancel;
};

/* jail_spec_init - set spec to the defaults: no fds, no net, no limits
 * beyond the defaults, stdin/stdout/stderr -1. */
void jail_spec_init(struct jail_spec *spec);

struct jail_result {
	int exited; /* 1: the command exited with exit_code */
	int exit_code; /* 0-255 when exited */
	int signal; /* the signal that killed it, when !exited */
	int timed_out; /* 1: killed by the wall-clock limit */
	int interrupted; /* 1: killed by a cancel or jail_cancel() */
	uint64_t out_bytes; /* stdout bytes passed to on_output */
	uint64_t err_bytes; /* stderr bytes passed to on_output */
	uint64_t wall_ms; /* from start to the end of the tree */
	char error[256]; /* why jail_run() failed, or "" */
};

/*
 * jail_status - a shell-style status for res: the exit code, 128+signal
 * when killed, JAIL_EXIT_TIMEOUT for a timeout, JAIL_EXIT_INTERRUPT for
 * a cancel.
 */
int jail_status(const struct jail_result *res);

/* Exit codes of shiro-jail besides the command's own (docs/jail.md). */
#define JAIL_EXIT_TIMEOUT 124 /* like timeout(1) */
#define JAIL_EXIT_SETUP 125 /* the jail could not be set up */
#define JAIL_EXIT_INTERRUPT 130 /* interrupted (as by SIGINT) */

struct jail;

/*
 * jail_start - start spec's command.  Returns 0 with *jp set once the
 * command has been exec'd (or has failed to exec: that is an exit with
 * status 127 in the result, not an error here).  Errors (negated, as
 * everywhere): SHIRO_ERR_INVAL (a bad spec), SHIRO_ERR_UNSUPP (the
 * kernel lacks a required feature and spec->unjailed is 0),
 * SHIRO_ERR_NOENT (the workspace is missing), SHIRO_ERR_FAILED (set-up
 * failed in the child), SHIRO_ERR_TIMEOUT or SHIRO_ERR_CANCELED (the
 * set-up itself outlasted the timeout or was canceled), SHIRO_ERR_IO
 * (pipes, clone); err (errlen bytes, may be NULL) gets one line saying
 * why.
 */
int jail_start(
    const struct jail_spec *spec, struct jail **jp, char *err, size_t errlen);

/*
 * jail_pollfds - store up to max fds that the caller should poll for
 * POLLIN (output pipes, the child's exit) in fds; returns how many.
 * After any of them is readable, or at the latest after
 * jail_next_ms() milliseconds, call jail_step().
 */
size_t jail_pollfds(const struct jail *j, int *fds, size_t max);

/* jail_next_ms - milliseconds until jail_step() must run (timeouts,
 * cancel checks); never more than 50. */
int jail_next_ms(const struct jail *j);

/*
 * jail_step - do the work that is ready: read output (calling
 * on_output), enforce the timeout and the cancel flag, notice the end.
 * Waits at most wait_ms (0: do not block).  Sets *done to 1 once the
 * whole tree is gone.  Returns 0 or a negative SHIRO_ERR_*.
 */
int jail_step(struct jail *j, int wait_ms, int *done);

/* jail_cancel - kill the run's whole tree now; the result says
 * interrupted.  Safe to call more than once. */
void jail_cancel(struct jail *j);

/*
 * jail_finish - kill what is left (if anything), wait for the tree to be
 * gone, drain output, fill res, free *jp and set it to NULL.
 */
int jail_finish(struct jail **jp, struct jail_result *res);

/*
 * jail_run - jail_start() and step until done, then jail_finish().  A
 * set-up failure returns its error with res->error set.
 */
int jail_run(const struct jail_spec *spec, struct jail_result *res);

/*
 * jail_workspace_usable - whether dir (absolute, canonical) can be a
 * workspace: not / nor a directory the jail builds itself (/usr, /etc,
 * /tmp, /dev, /proc, ...).
 */
int jail_workspace_usable(const char *dir);

/* What the kernel offers the jail (jail_probe). */
struct jail_features {
	int userns, mntns, pidns, ipcns, utsns, netns, cgroupns;
	int seccomp; /* seccomp filters with KILL_PROCESS */
	int mount_api; /* open_tree, move_mount, fsopen, mount_setattr */
	int landlock_abi; /* 0: no Landlock */
	int pid_max; /* per-namespace pid_max (Linux 6.14) bounds
				the number of processes */
	int cgroup2; /* a cgroup v2 group we can create in */
	int cgroup_pids; /* pids.max per run (v2, delegated) */
	int cgroup_memory; /* memory.max per run (v2, delegated) */
	char cgroup_how[96]; /* a line for the doctor */
	char missing[256]; /* required features that are missing, or "" */
};

/*
 * jail_probe - find out what this kernel offers (forks a short-lived
 * child that tries each namespace).  The answer is cached for the
 * process.  Returns 0; f->missing names what the jail cannot do without.
 */
int jail_probe(struct jail_features *f);

/*
 * jail_default_env - the default environment (see jail_spec.envp), a
 * NULL-terminated array owned by the jail module, made once from the
 * caller's environment at the first call, valid for the process's life.
 */
const char *const *jail_default_env(void);

#endif
