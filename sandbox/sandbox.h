/*
 * sandbox.h - the lockdown each worker process applies to itself.
 *
 * A worker calls sandbox_lockdown() right after start-up, once its
 * sockets are connected and its files are open.  The lockdown cannot be
 * undone and is inherited by every child.  Every role gets
 * no_new_privs and a seccomp filter refusing what no worker needs
 * (ptrace, process_vm_*, bpf, perf_event_open, keyctl, userfaultfd,
 * io_uring, kexec, module loading, other architectures, ...); then:
 *
 *  - SANDBOX_ROLE_MODEL: talks HTTP to providers.  No execve, no file
 *    writes (open for writing, create, unlink, rename, ... refused);
 *    network sockets allowed.
 *  - SANDBOX_ROLE_FS: the file tools.  No execve and no network (only
 *    AF_UNIX sockets, for the broker's ipc endpoint: connect over ipc,
 *    not tcp).  With a workspace, Landlock (where present) confines
 *    reads and writes to it, plus reads of /usr.
 *  - SANDBOX_ROLE_TOOL: spawns commands only through jail_start().  It
 *    keeps what the jail's set-up needs (clone and clone3 with
 *    namespaces, the mount calls); seccomp filters are inherited, so a filter that
 *    refused a plain fork would also bind every jailed command: the
 *    "only jailed children" rule is the code path, and each child adds
 *    the jail's stricter filter before execve.  Do not lock down as
 *    TOOL a worker that is configured to run commands unjailed.
 *
 * docs/jail.md lists each refused call and why.
 */
#ifndef SHIRO_SANDBOX_H
#define SHIRO_SANDBOX_H

enum sandbox_role {
	SANDBOX_ROLE_MODEL,
	SANDBOX_ROLE_FS,
	SANDBOX_ROLE_TOOL,
};

/*
 * sandbox_lockdown - lock the calling process (all its threads) down for
 * role.  The seccomp filter reaches every thread; Landlock binds the
 * calling thread and what it starts later, so call this before starting
 * threads that open files.  workspace (may be NULL) is the directory the FS role may use.
 * Returns 0, SHIRO_ERR_UNSUPP when the kernel has no seccomp filters, or
 * SHIRO_ERR_FAILED.  A worker that gets an error must exit rather than
 * run unconfined.
 */
int sandbox_lockdown(enum sandbox_role role, const char *workspace);

/* sandbox_role_name - "model", "fs" or "tool". */
const char *sandbox_role_name(enum sandbox_role role);

#endif
