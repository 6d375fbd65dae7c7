/*
 * filter.h - the seccomp policies of the jail and of the worker roles.
 *
 * The only code of shiro that includes <seccomp.h> is filter.c.  Two
 * kinds of program are made from filter.c's tables:
 *
 *  - a refusal program allows by default and refuses a list of calls,
 *    each with its answer and reason: the jail's policies, and the
 *    second program of the tool worker;
 *  - an allow-list program refuses by default and names every call it
 *    allows, each with its reason: the worker roles.
 *
 * A call from another architecture (i386 through int 0x80, x32 through
 * the x32 bit) kills the whole process in every program.
 */
#ifndef SHIRO_FILTER_H
#define SHIRO_FILTER_H

#include <sched.h>
#include <stddef.h>

#include <linux/filter.h>

#ifndef CLONE_NEWCGROUP
#define CLONE_NEWCGROUP 0x02000000
#endif

/* The namespaces of every jail (sandbox/jail.c), each made by one
 * clone(); CLONE_NEWNET joins them when the jail has no network.  The
 * tool worker's filter allows clone() with no namespace flag, or with
 * exactly these (and CLONE_NEWNET). */
#define FILTER_JAIL_NS \
	(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | \
	    CLONE_NEWUTS | CLONE_NEWCGROUP)

enum filter_policy {
	FILTER_JAIL, /* a jailed command, no network */
	FILTER_JAIL_NET, /* a jailed command, network on */
	FILTER_MODEL, /* the model worker */
	FILTER_FS, /* the fs worker */
	FILTER_TOOL, /* the tool worker, its jails without network */
	FILTER_TOOL_NET, /* the tool worker, its jails with network */
};

/* filter_fn - receives one line of a policy: the call (with its
 * argument when only some calls are concerned), the answer ("allow",
 * "EPERM", "ENOSYS", "EAFNOSUPPORT", "kill"), and why. */
typedef void (*filter_fn)(
    void *arg, const char *call, const char *reply, const char *why);

/*
 * filter_build - compile the refusal program of policy (the jail's, or
 * the tool worker's second program) into classic BPF.  On 0,
 * prog->filter is allocated (free it with free()).  SHIRO_ERR_INVAL for
 * a policy that has none (model, fs), SHIRO_ERR_FAILED if libseccomp
 * refuses the rules.
 */
int filter_build(enum filter_policy policy, struct sock_fprog *prog);

/*
 * filter_lockdown - compile the programs of a worker policy: progs[0],
 * and progs[1] when *np is 2, to be installed in that order (each free()
 * after use).  self is the pid that kill() and tgkill() may name in the
 * model and fs roles.  SHIRO_ERR_INVAL for a jail policy.
 */
int filter_lockdown(enum filter_policy policy, long self,
    struct sock_fprog progs[2], size_t *np);

/*
 * filter_install - load prog for the calling thread with no_new_privs
 * set first; tsync also applies it to every other thread.  Uses only
 * system calls: safe in a child after clone().
 */
int filter_install(const struct sock_fprog *prog, int tsync);

/*
 * filter_prebuilt - the programs of FILTER_JAIL ([0]) and
 * FILTER_JAIL_NET ([1]), compiled at build time by filter-gen.
 */
extern const struct sock_fprog filter_prebuilt[2];

/* One rule as the tests see it (filter_rules, filter_allowed). */
struct filter_rule_info {
	const char *name; /* the syscall */
	long nr; /* its number here, -1 if it has none */
	int err; /* the errno it returns; 0 for an allowed call */
	int match; /* 0: every call, 1: low 32 bits of arg == val,
			     2: arg has every bit of val,
			     3: (arg & mask) == val, 4: low 32 bits of arg ==
			     the worker's pid */
	unsigned arg;
	unsigned long long mask, val;
};

/*
 * filter_rules - store up to max of the named refusals of policy in out
 * (the common ones first); returns how many there are.  Socket families,
 * personality and foreign architectures are not rules of the tables.
 */
size_t filter_rules(
    enum filter_policy policy, struct filter_rule_info *out, size_t max);

/*
 * filter_allowed - for a worker policy, store up to max of its allowed
 * calls in out (a call allowed under several conditions appears once
 * per condition); returns how many there are.  For the tool policies,
 * which allow every call libseccomp knows but the refused ones, 0.
 */
size_t filter_allowed(
    enum filter_policy policy, struct filter_rule_info *out, size_t max);

/* filter_each - call fn for each line of policy, in order: the allowed
 * calls first (worker roles), then the refusals. */
void filter_each(enum filter_policy policy, filter_fn fn, void *arg);

#endif
