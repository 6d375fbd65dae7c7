/*
 * sandbox.h - the confinement each worker process puts itself in.
 *
 * A worker locks itself down in two steps, which cannot be undone and
 * bind every child it starts:
 *
 *  1. sandbox_confine(), while the process has one thread: no_new_privs,
 *     every capability dropped (bounding set included, so a worker
 *     running as uid 0 cannot override file permissions or read another
 *     process's memory), and the role's file rules.  Landlock binds the
 *     calling thread and the threads it starts afterwards, which is why
 *     no thread may exist yet (confine refuses otherwise).
 *  2. sandbox_lockdown(), once the connection to the broker is made: the
 *     role's system-call allow-list, on every thread (TSYNC), after
 *     which no Unix socket can be opened: the worker keeps the
 *     connection it has and can never make another one, to either of
 *     the broker's sockets or to anything else.
 *
 * The roles (docs/jail.md lists every allowed call with its reason):
 *
 *  - SANDBOX_ROLE_MODEL talks HTTPS to providers.  It reads only its
 *    libraries, CA certificates, resolver files and the time zone, and
 *    writes nothing (Landlock and seccomp both); it may open IPv4 and
 *    IPv6 sockets; no execve, no new namespaces, no signal but to itself.
 *  - SANDBOX_ROLE_FS runs the file tools: the workspace read-write (the
 *    only directory, always given: opts->workspace) and its libraries
 *    read-only; no socket at all, no execve, no thread, no new
 *    namespace, no metadata change by path.  Secrets the jail hides that
 *    lie inside the workspace (its $SHIRO_HOME, ~/.ssh, ...) are covered
 *    in a mount namespace of its own first.
 *  - SANDBOX_ROLE_TOOL runs commands only through jail_start(): it enters
 *    a user and mount namespace of its own in which $SHIRO_HOME, the
 *    home directory's secrets, the session's runtime directory and (as
 *    root) root's files in /etc are covered; its seccomp filter, which
 *    every jailed command inherits, allows what a jail and a general
 *    program need but no Unix socket, no namespace but the jail's, and
 *    TCP only with opts->net; Landlock (where the kernel has scoping)
 *    keeps it from signalling shirod or reaching abstract sockets.
 */
#ifndef SHIRO_SANDBOX_H
#define SHIRO_SANDBOX_H

enum sandbox_role {
	SANDBOX_ROLE_MODEL,
	SANDBOX_ROLE_FS,
	SANDBOX_ROLE_TOOL,
};

/* What a role is confined with. */
struct sandbox_opts {
	const char *workspace; /* fs: required, the directory it may use */
	const char *endpoint; /* the broker's ZeroMQ endpoint, or NULL */
	int net; /* tool: its jails may have the network */
};

struct sandbox;

/*
 * sandbox_confine - step 1 for role (see above).  Call it before any
 * thread exists (ZeroMQ's included).  On 0, *sbp is the sandbox to dial
 * through (sandbox_endpoint) and to lock down.  Returns SHIRO_ERR_STATE
 * when threads exist, SHIRO_ERR_INVAL for bad options (fs without a
 * workspace), SHIRO_ERR_FAILED when a step failed (logged).  A worker
 * that gets an error must exit rather than run unconfined.
 */
int sandbox_confine(enum sandbox_role role, const struct sandbox_opts *opts,
    struct sandbox **sbp);

/*
 * sandbox_endpoint - the endpoint to connect to now: opts->endpoint, or
 * for the tool role an ipc:// path reached through a descriptor opened
 * before its namespace covered $SHIRO_HOME (closed by the lockdown).
 * NULL if opts->endpoint was.  Borrowed.
 */
const char *sandbox_endpoint(const struct sandbox *sb);

/*
 * sandbox_lockdown - step 2: the role's seccomp programs on every
 * thread.  Returns 0, SHIRO_ERR_UNSUPP when the kernel has no seccomp
 * filters, or SHIRO_ERR_FAILED.
 */
int sandbox_lockdown(struct sandbox *sb);

/* sandbox_destroy - free *sbp (the confinement stays) and set it NULL. */
void sandbox_destroy(struct sandbox **sbp);

/* sandbox_role_name - "model", "fs" or "tool". */
const char *sandbox_role_name(enum sandbox_role role);

#endif
