/*
 * filter.h - the seccomp policies of the jail and of the worker roles.
 *
 * The only code of shiro that includes <seccomp.h> is filter.c.  Every
 * policy allows by default and refuses a list of calls, each with the
 * reason in filter.c's tables; a call from another architecture (i386
 * through int 0x80, x32 through the x32 bit) kills the whole process.
 */
#ifndef SHIRO_FILTER_H
#define SHIRO_FILTER_H

#include <stddef.h>

#include <linux/filter.h>

enum filter_policy {
	FILTER_JAIL, /* a jailed command, no network */
	FILTER_JAIL_NET, /* a jailed command, network on */
	FILTER_MODEL, /* the model worker */
	FILTER_FS, /* the fs worker */
	FILTER_TOOL, /* the tool worker */
};

/* filter_fn - receives one refusal: the call (with its argument when
 * only some arguments are refused), the answer, and why. */
typedef void (*filter_fn)(
    void *arg, const char *call, const char *reply, const char *why);

/*
 * filter_build - compile policy into a classic BPF program.  On 0,
 * prog->filter is allocated (free it with free()).  SHIRO_ERR_FAILED if
 * libseccomp refuses the rules.
 */
int filter_build(enum filter_policy policy, struct sock_fprog *prog);

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

/* One rule as the tests see it (filter_rules). */
struct filter_rule_info {
	const char *name; /* the syscall */
	long nr; /* its number here, -1 if it has none */
	int err; /* the errno it returns */
	int match; /* 0: every call, 1: low 32 bits of arg == val,
			     2: arg has every bit of val */
	unsigned arg;
	unsigned long long val;
};

/*
 * filter_rules - store up to max rules of policy in out (the common
 * ones first); returns how many there are.  Socket families,
 * personality and foreign architectures are not rules of the tables.
 */
size_t filter_rules(
    enum filter_policy policy, struct filter_rule_info *out, size_t max);

/* filter_each - call fn for each refusal of policy, in order. */
void filter_each(enum filter_policy policy, filter_fn fn, void *arg);

#endif
