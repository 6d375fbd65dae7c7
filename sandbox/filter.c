/*
 * filter.c - the seccomp policies, compiled with libseccomp.
 *
 * Each policy allows by default and refuses what its process never
 * needs.  The tables below are the policy: one line per refused call,
 * with the answer the caller gets and why it is refused.  A refusal
 * answers with an errno rather than a kill, so programs that probe for
 * a feature fall back cleanly; only a foreign architecture kills,
 * because no honest program on this system makes those calls.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <seccomp.h>

#include "proto/err.h"
#include "proto/log.h"
#include "proto/xmalloc.h"

#include "filter.h"

#ifndef TIOCLINUX
#define TIOCLINUX 0x541C
#endif
#ifndef CLONE_NEWCGROUP
#define CLONE_NEWCGROUP 0x02000000
#endif

/* How a rule matches its call. */
enum filter_match {
	FM_ALL, /* every call */
	FM_EQ32, /* the low 32 bits of the argument equal val (the kernel
		    reads the argument as a 32-bit int, so the high bits
		    must not let a caller slip past) */
	FM_BITS, /* the argument has all the bits of val */
};

struct filter_rule {
	const char *name; /* syscall name, as libseccomp knows it */
	int nr; /* its x86_64 number, for calls libseccomp does
			     not know yet; -1 if it does */
	int err; /* errno returned */
	enum filter_match match;
	unsigned arg;
	uint64_t val;
	const char *show; /* the call as listed, with its argument */
	const char *why;
};

#define R(n, e, w) \
	{ \
		n, -1, e, FM_ALL, 0, 0, n, w \
	}
#define RN(n, nr, e, w) \
	{ \
		n, nr, e, FM_ALL, 0, 0, n, w \
	}
#define RA(n, e, m, a, v, s, w) \
	{ \
		n, -1, e, m, a, v, s, w \
	}

/* Refused for every worker role and every jailed command. */
static const struct filter_rule filter_base[] = {
    R("ptrace", EPERM,
	"reads and writes another process's memory and registers; "
	"the way out of every other layer"),
    R("process_vm_readv", EPERM, "reads another process's memory"),
    R("process_vm_writev", EPERM, "writes another process's memory"),
    R("pidfd_getfd", EPERM, "copies a file descriptor out of another process"),
    R("process_madvise", EPERM, "acts on another process's memory"),
    R("kcmp", EPERM, "compares another process's kernel objects"),
    R("kexec_load", EPERM, "replaces the running kernel"),
    R("kexec_file_load", EPERM, "replaces the running kernel"),
    R("init_module", EPERM, "loads code into the kernel"),
    R("finit_module", EPERM, "loads code into the kernel"),
    R("delete_module", EPERM, "unloads kernel code"),
    R("bpf", EPERM, "loads programs into the kernel; a large attack surface"),
    R("perf_event_open", EPERM,
	"observes other processes and the kernel; frequent kernel bugs"),
    R("userfaultfd", EPERM,
	"stalls the kernel at chosen points; a tool for exploiting races"),
    R("io_uring_setup", EPERM,
	"runs system calls that seccomp never sees; frequent kernel bugs"),
    R("io_uring_enter", EPERM, "see io_uring_setup"),
    R("io_uring_register", EPERM, "see io_uring_setup"),
    R("keyctl", EPERM,
	"the kernel keyrings are not namespaced: they may hold the "
	"user's credentials"),
    R("add_key", EPERM, "see keyctl"),
    R("request_key", EPERM, "see keyctl"),
    R("setns", EPERM,
	"joins another namespace, possibly one of a process outside"),
    R("acct", EPERM, "system administration: process accounting"),
    R("swapon", EPERM, "system administration: swap"),
    R("swapoff", EPERM, "system administration: swap"),
    R("reboot", EPERM, "system administration: reboot"),
    R("syslog", EPERM, "reads the kernel log, which leaks addresses"),
    R("quotactl", EPERM, "system administration: quotas"),
    R("quotactl_fd", EPERM, "system administration: quotas"),
    R("lookup_dcookie", EPERM, "kernel profiling interface"),
    R("uselib", EPERM, "obsolete loader call"),
    R("modify_ldt", EPERM,
	"x86 segment descriptors: old ABI, past kernel bugs, no use here"),
    R("ioperm", EPERM, "direct hardware port access"),
    R("iopl", EPERM, "direct hardware port access"),
    R("vhangup", EPERM, "hangs up the terminal of the session"),
    R("open_by_handle_at", EPERM,
	"opens files by handle, bypassing the mount namespace"),
    R("fanotify_init", EPERM, "watches file access system-wide"),
    R("settimeofday", EPERM, "sets the system clock"),
    R("clock_settime", EPERM, "sets the system clock"),
    R("clock_adjtime", EPERM, "sets the system clock"),
    RA("ioctl", EPERM, FM_EQ32, 1, TIOCSTI, "ioctl(TIOCSTI)",
	"pushes input into the terminal, to be run after the command ends"),
    RA("ioctl", EPERM, FM_EQ32, 1, TIOCLINUX, "ioctl(TIOCLINUX)",
	"can paste console selections as input, like TIOCSTI"),
};

/* Refused for a jailed command (set-up is done by then). */
static const struct filter_rule filter_jail[] = {
    R("clone3", ENOSYS,
	"its flags are in memory where seccomp cannot look: ENOSYS makes "
	"libc fall back to clone, whose flags are checked"),
    R("mount", EPERM, "would change the jail's file system view"),
    R("umount2", EPERM, "would uncover what the jail's mounts hide"),
    R("pivot_root", EPERM, "would change the jail's root"),
    R("chroot", EPERM, "would change the root; never needed inside"),
    R("open_tree", EPERM, "new mount API: see mount"),
    R("move_mount", EPERM, "new mount API: see mount"),
    R("fsopen", EPERM, "new mount API: see mount"),
    R("fsconfig", EPERM, "new mount API: see mount"),
    R("fsmount", EPERM, "new mount API: see mount"),
    R("fspick", EPERM, "new mount API: see mount"),
    R("mount_setattr", EPERM, "new mount API: could make mounts writable"),
    RN("open_tree_attr", 467, EPERM, "new mount API: see mount"),
    R("unshare", EPERM,
	"a new user namespace would give back every capability and the "
	"kernel surface that comes with it"),
    RA("clone", EPERM, FM_BITS, 0, CLONE_NEWUSER, "clone(CLONE_NEWUSER)",
	"see unshare"),
    RA("clone", EPERM, FM_BITS, 0, CLONE_NEWNS, "clone(CLONE_NEWNS)",
	"see unshare"),
    RA("clone", EPERM, FM_BITS, 0, CLONE_NEWPID, "clone(CLONE_NEWPID)",
	"see unshare"),
    RA("clone", EPERM, FM_BITS, 0, CLONE_NEWNET, "clone(CLONE_NEWNET)",
	"see unshare"),
    RA("clone", EPERM, FM_BITS, 0, CLONE_NEWIPC, "clone(CLONE_NEWIPC)",
	"see unshare"),
    RA("clone", EPERM, FM_BITS, 0, CLONE_NEWUTS, "clone(CLONE_NEWUTS)",
	"see unshare"),
    RA("clone", EPERM, FM_BITS, 0, CLONE_NEWCGROUP, "clone(CLONE_NEWCGROUP)",
	"see unshare"),
};

/* Refused for the model worker: it only talks to providers. */
static const struct filter_rule filter_model[] = {
    R("clone3", ENOSYS, "as for the jail; libc falls back to clone"),
    R("execve", EPERM, "the model worker never runs programs"),
    R("execveat", EPERM, "the model worker never runs programs"),
    RA("open", EPERM, FM_BITS, 1, O_WRONLY, "open(O_WRONLY)",
	"the model worker never writes files"),
    RA("open", EPERM, FM_BITS, 1, O_RDWR, "open(O_RDWR)", "see open"),
    RA("open", EPERM, FM_BITS, 1, O_CREAT, "open(O_CREAT)", "see open"),
    RA("open", EPERM, FM_BITS, 1, O_TRUNC, "open(O_TRUNC)", "see open"),
    RA("openat", EPERM, FM_BITS, 2, O_WRONLY, "openat(O_WRONLY)", "see open"),
    RA("openat", EPERM, FM_BITS, 2, O_RDWR, "openat(O_RDWR)", "see open"),
    RA("openat", EPERM, FM_BITS, 2, O_CREAT, "openat(O_CREAT)", "see open"),
    RA("openat", EPERM, FM_BITS, 2, O_TRUNC, "openat(O_TRUNC)", "see open"),
    R("openat2", ENOSYS,
	"its flags are in memory where seccomp cannot look; libc falls "
	"back to openat"),
    R("creat", EPERM, "creates files"),
    R("truncate", EPERM, "changes files"),
    R("mkdir", EPERM, "changes the file system"),
    R("mkdirat", EPERM, "changes the file system"),
    R("rmdir", EPERM, "changes the file system"),
    R("unlink", EPERM, "changes the file system"),
    R("unlinkat", EPERM, "changes the file system"),
    R("rename", EPERM, "changes the file system"),
    R("renameat", EPERM, "changes the file system"),
    R("renameat2", EPERM, "changes the file system"),
    R("link", EPERM, "changes the file system"),
    R("linkat", EPERM, "changes the file system"),
    R("symlink", EPERM, "changes the file system"),
    R("symlinkat", EPERM, "changes the file system"),
    R("mknod", EPERM, "changes the file system"),
    R("mknodat", EPERM, "changes the file system"),
    R("chmod", EPERM, "changes the file system"),
    R("fchmodat", EPERM, "changes the file system"),
    R("chown", EPERM, "changes the file system"),
    R("lchown", EPERM, "changes the file system"),
    R("fchownat", EPERM, "changes the file system"),
    R("setxattr", EPERM, "changes the file system"),
    R("lsetxattr", EPERM, "changes the file system"),
    R("utimensat", EPERM, "changes the file system"),
    R("mount", EPERM, "no worker mounts anything"),
    R("unshare", EPERM, "no new namespaces: see the jail's unshare"),
};

/* Refused for the fs worker: files under the workspace, nothing else. */
static const struct filter_rule filter_fs[] = {
    R("clone3", ENOSYS, "as for the jail; libc falls back to clone"),
    R("execve", EPERM, "the fs worker never runs programs"),
    R("execveat", EPERM, "the fs worker never runs programs"),
    R("mount", EPERM, "no worker mounts anything"),
    R("unshare", EPERM, "no new namespaces: see the jail's unshare"),
};

/* The socket families each policy allows (bit n = family n). */
#define FAM(f) (1ull << (f))
static const uint64_t filter_families[] = {
    [FILTER_JAIL] = FAM(AF_UNIX),
    [FILTER_JAIL_NET] = FAM(AF_UNIX) | FAM(AF_INET) | FAM(AF_INET6),
    [FILTER_MODEL] =
	FAM(AF_UNIX) | FAM(AF_INET) | FAM(AF_INET6) | FAM(AF_NETLINK),
    [FILTER_FS] = FAM(AF_UNIX),
    [FILTER_TOOL] = FAM(AF_UNIX) | FAM(AF_INET) | FAM(AF_INET6),
};

/* Refusals built in code rather than from the tables, for listing. */
static const struct {
	const char *call, *reply, *why;
} filter_extra[] = {
    {"personality(anything but PER_LINUX)", "EPERM",
	"turns off address space randomization or changes the ABI"},
    {"socket(other families)", "EAFNOSUPPORT",
	"the jail without network allows AF_UNIX only; with network also "
	"AF_INET and AF_INET6; the fs worker AF_UNIX only"},
    {"a non-native architecture (i386, x32)", "kill",
	"other system call tables would slip past every rule"},
};

/* filter_table - the extra table of policy beyond the base one. */
static const struct filter_rule *
filter_table(enum filter_policy policy, size_t *n)
{
	switch (policy) {
	case FILTER_JAIL:
	case FILTER_JAIL_NET:
		*n = sizeof(filter_jail) / sizeof(filter_jail[0]);
		return filter_jail;
	case FILTER_MODEL:
		*n = sizeof(filter_model) / sizeof(filter_model[0]);
		return filter_model;
	case FILTER_FS:
		*n = sizeof(filter_fs) / sizeof(filter_fs[0]);
		return filter_fs;
	case FILTER_TOOL:
		/* The tool worker keeps what the jail's set-up needs. */
		break;
	}
	*n = 0;
	return NULL;
}

/* filter_nr - the number of r's call here, or -1. */
static int
filter_nr(const struct filter_rule *r)
{
	int nr = seccomp_syscall_resolve_name(r->name);

	if (nr != __NR_SCMP_ERROR)
		return nr;
#ifdef __x86_64__
	return r->nr;
#else
	return -1;
#endif
}

/* filter_add - add one rule to ctx. */
static int
filter_add(scmp_filter_ctx ctx, const struct filter_rule *r)
{
	struct scmp_arg_cmp cmp;
	int nr, rc;

	nr = filter_nr(r);
	if (nr < 0)
		return 0; /* the call does not exist here */
	switch (r->match) {
	case FM_ALL:
		rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(r->err), nr, 0);
		break;
	case FM_EQ32:
		cmp = (struct scmp_arg_cmp){
		    r->arg, SCMP_CMP_MASKED_EQ, 0xffffffffull, r->val};
		rc = seccomp_rule_add_array(
		    ctx, SCMP_ACT_ERRNO(r->err), nr, 1, &cmp);
		break;
	case FM_BITS:
	default:
		cmp = (struct scmp_arg_cmp){
		    r->arg, SCMP_CMP_MASKED_EQ, r->val, r->val};
		rc = seccomp_rule_add_array(
		    ctx, SCMP_ACT_ERRNO(r->err), nr, 1, &cmp);
		break;
	}
	if (rc != 0) {
		log_warnx("seccomp rule for %s: %s", r->show, strerror(-rc));
		return -SHIRO_ERR_FAILED;
	}
	return 0;
}

/* filter_a0 - the comparison "first argument op val", with every field
 * set (libseccomp's own macro leaves one out, which clang warns about). */
static struct scmp_arg_cmp
filter_a0(enum scmp_compare op, uint64_t val)
{
	struct scmp_arg_cmp cmp = {0, op, val, 0};

	return cmp;
}

/* filter_add_families - refuse socket() for families policy lacks. */
static int
filter_add_families(scmp_filter_ctx ctx, enum filter_policy policy)
{
	uint64_t allowed = filter_families[policy];
	int f, rc;

	for (f = 0; f < AF_MAX; f++) {
		if (allowed & FAM(f))
			continue;
		rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EAFNOSUPPORT),
		    SCMP_SYS(socket), 1, filter_a0(SCMP_CMP_EQ, (uint64_t)f));
		if (rc != 0)
			return -SHIRO_ERR_FAILED;
	}
	/* Anything at or past AF_MAX, including values with high bits that
	 * the kernel would cut down to a valid family, is refused too. */
	rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EAFNOSUPPORT),
	    SCMP_SYS(socket), 1, filter_a0(SCMP_CMP_GE, (uint64_t)AF_MAX));
	return rc == 0 ? 0 : -SHIRO_ERR_FAILED;
}

/* filter_build - compile policy into a classic BPF program. */
int
filter_build(enum filter_policy policy, struct sock_fprog *prog)
{
	const struct filter_rule *extra;
	scmp_filter_ctx ctx;
	size_t i, n;
	struct stat st;
	void *mem = NULL;
	int fd = -1, rc = -SHIRO_ERR_FAILED;

	memset(prog, 0, sizeof(*prog));
	ctx = seccomp_init(SCMP_ACT_ALLOW);
	if (ctx == NULL)
		return -SHIRO_ERR_FAILED;
	/* Only the native architecture is in the filter: any other (i386
	 * via int 0x80, x32 via the x32 bit) gets the bad-arch action. */
	if (seccomp_attr_set(
		ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS) != 0)
		goto out;
	/* We set no_new_privs ourselves, before loading. */
	if (seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0) != 0)
		goto out;
	for (i = 0; i < sizeof(filter_base) / sizeof(filter_base[0]); i++)
		if (filter_add(ctx, &filter_base[i]) != 0)
			goto out;
	extra = filter_table(policy, &n);
	for (i = 0; i < n; i++)
		if (filter_add(ctx, &extra[i]) != 0)
			goto out;
	/* personality: only the default persona.  (libseccomp cannot say
	 * "neither 0 nor the query value" in one rule, so the query is
	 * refused as well; programs do not depend on it.)  A 64-bit
	 * comparison: a value with high bits set is refused too. */
	if (seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(personality),
		1, filter_a0(SCMP_CMP_NE, 0)) != 0) {
		log_warnx("seccomp rule for personality refused");
		goto out;
	}
	if (filter_add_families(ctx, policy) != 0)
		goto out;

	fd = memfd_create("shiro-filter", MFD_CLOEXEC);
	if (fd < 0)
		goto out;
	if (seccomp_export_bpf(ctx, fd) != 0 || fstat(fd, &st) != 0 ||
	    st.st_size <= 0 || st.st_size % sizeof(struct sock_filter) != 0 ||
	    st.st_size / sizeof(struct sock_filter) > BPF_MAXINSNS)
		goto out;
	mem = xmalloc((size_t)st.st_size);
	if (pread(fd, mem, (size_t)st.st_size, 0) != st.st_size)
		goto out;
	prog->filter = mem;
	prog->len = (unsigned short)(st.st_size / sizeof(struct sock_filter));
	mem = NULL;
	rc = 0;
out:
	free(mem);
	if (fd >= 0)
		close(fd);
	seccomp_release(ctx);
	return rc;
}

/* filter_install - no_new_privs, then load prog (system calls only). */
int
filter_install(const struct sock_fprog *prog, int tsync)
{
	long rc;

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		return -SHIRO_ERR_FAILED;
	rc = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
	    tsync ? SECCOMP_FILTER_FLAG_TSYNC : 0, prog);
	return rc == 0 ? 0 : -SHIRO_ERR_FAILED;
}

/* filter_each - call fn for each refusal of policy, in order. */
void
filter_each(enum filter_policy policy, filter_fn fn, void *arg)
{
	const struct filter_rule *extra;
	size_t i, n;

	for (i = 0; i < sizeof(filter_base) / sizeof(filter_base[0]); i++)
		fn(arg, filter_base[i].show,
		    filter_base[i].err == ENOSYS ? "ENOSYS" : "EPERM",
		    filter_base[i].why);
	extra = filter_table(policy, &n);
	for (i = 0; i < n; i++)
		fn(arg, extra[i].show,
		    extra[i].err == ENOSYS ? "ENOSYS" : "EPERM", extra[i].why);
	for (i = 0; i < sizeof(filter_extra) / sizeof(filter_extra[0]); i++)
		fn(arg, filter_extra[i].call, filter_extra[i].reply,
		    filter_extra[i].why);
}

/* filter_rules - the rules of policy, for the tests. */
size_t
filter_rules(
    enum filter_policy policy, struct filter_rule_info *out, size_t max)
{
	const size_t nbase = sizeof(filter_base) / sizeof(filter_base[0]);
	const struct filter_rule *extra, *r;
	size_t i, n;

	extra = filter_table(policy, &n);
	for (i = 0; i < nbase + n; i++) {
		if (i >= max)
			continue;
		r = i < nbase ? &filter_base[i] : &extra[i - nbase];
		out[i].name = r->name;
		out[i].nr = filter_nr(r);
		out[i].err = r->err;
		out[i].match = r->match == FM_ALL ? 0
		    : r->match == FM_EQ32	  ? 1
						  : 2;
		out[i].arg = r->arg;
		out[i].val = r->val;
	}
	return nbase + n;
}
