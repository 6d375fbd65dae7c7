/*
 * test_jail_lib.h - helpers shared by the jail tests: run a command in
 * the jail with its output captured, and put the try-syscall probe into
 * a workspace.
 */
#ifndef SHIRO_TEST_JAIL_LIB_H
#define SHIRO_TEST_JAIL_LIB_H

#include "proto/buf.h"
#include "sandbox/filter.h"
#include "sandbox/jail.h"

struct jt_run {
	struct buf out, err;
	struct jail_result res;
	int rc; /* jail_run's return */
};

/* jt_spec - a spec with the defaults, workspace ws and argv; skips the
 * test where the kernel cannot run the jail. */
void jt_spec(struct jail_spec *spec, const char *ws, const char *const *argv);

/* jt_exec - jail_run(spec) with stdout and stderr captured into r. */
void jt_exec(struct jail_spec *spec, struct jt_run *r);

/* jt_sh - run `sh -c script` in workspace ws; captured into r. */
void jt_sh(const char *ws, const char *script, struct jt_run *r);

/* jt_free - free r's buffers. */
void jt_free(struct jt_run *r);

/* jt_mkdir - make dir/name (0755) and return the path (static buffer
 * of 4 slots, rotating). */
const char *jt_path(const char *dir, const char *name);

/* jt_write - write text into path, creating it; fails the test on error. */
void jt_write(const char *path, const char *text);

/* jt_probe - copy build/try-syscall into ws; its absolute path in ws. */
const char *jt_probe(const char *ws);

/* jt_host_has - whether a host process's command line contains marker. */
int jt_host_has(const char *marker);

/* jt_listen_tcp - a non-blocking socket of type (SOCK_STREAM, listening,
 * or SOCK_DGRAM) bound to 127.0.0.1 on a port the kernel picks, which
 * goes into *port. */
int jt_listen_tcp(int type, int *port);

/* A socket family's bit in jt_policy_check's families. */
#define JT_FAM(f) (1ull << (f))

/* jt_install - install policy in the calling thread alone: the jail's
 * refusal program, or a worker role's programs (self: the pid they let
 * kill name).  0 or -1. */
int jt_install(enum filter_policy policy, long self);

/*
 * jt_policy_check - in forked children: install policy, make every
 * named refusal with arguments that would fail otherwise (EFAULT,
 * EBADF, ...) and check its errno; check each socket family (allowed if
 * in families, else refused with family_err) and personality; and check
 * that a foreign-architecture call kills the process.
 */
void jt_policy_check(
    enum filter_policy policy, unsigned long long families, int family_err);

#endif
