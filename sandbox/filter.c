/*
 * filter.c - the seccomp policies, compiled with libseccomp.
 *
 * The tables below are the policies.  The jail's programs allow by
 * default and refuse what a jailed command never needs, one line per
 * refused call with its answer and reason: a refusal answers with an
 * errno rather than a kill, so programs that probe for a feature fall
 * back cleanly.  The worker roles' programs are allow-lists in the
 * manner of OpenSSH's privilege-separation sandbox: each allowed call
 * is named with its reason (filter_allow), the refusals worth naming
 * get their own answer, and every other call fails with EPERM.  Only a
 * foreign architecture kills, because no honest program on this system
 * makes those calls.
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

/*
 * The worker roles.  The model and fs roles run one allow-list program:
 * filter_allow names every call they may make, filter_worker and
 * filter_model the refusals worth naming, and every other call answers
 * EPERM.  The tool role's jails inherit its filter and may run any
 * program, so its allow-list is every call libseccomp knows for this
 * architecture except the refused ones (a newer call answers ENOSYS, so
 * the program falls back to the older one it replaces); a second
 * program, in the jail's style, then checks the arguments that matter
 * (filter_tool, the namespaces of clone, socket families, personality,
 * TIOCSTI).
 */

/* The namespace flags clone() takes (CLONE_NEWTIME exists only for
 * clone3 and unshare, and its bit is part of the exit signal here). */
#define FILTER_NS \
	(CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | \
	    CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET)

/* Named refusals of the model and fs roles. */
static const struct filter_rule filter_worker[] = {
    R("clone3", ENOSYS,
	"its flags are in memory where seccomp cannot look: ENOSYS makes "
	"libc fall back to clone, whose flags are checked"),
    R("faccessat2", ENOSYS, "libc falls back to faccessat"),
    R("statx", ENOSYS, "libc falls back to fstatat"),
    R("execve", EPERM, "the model and fs workers never run programs"),
    R("execveat", EPERM, "the model and fs workers never run programs"),
    R("unshare", EPERM,
	"a new user namespace would give back every capability and the "
	"kernel surface that comes with it"),
    RA("clone", EPERM, FM_BITS, 0, CLONE_NEWUSER, "clone(CLONE_NEWUSER)",
	"threads only, in the namespaces the worker has: see unshare"),
    RA("clone", EPERM, FM_BITS, 0, CLONE_NEWNS, "clone(CLONE_NEWNS)",
	"see clone(CLONE_NEWUSER)"),
    RA("clone", EPERM, FM_BITS, 0, CLONE_NEWPID, "clone(CLONE_NEWPID)",
	"see clone(CLONE_NEWUSER)"),
    RA("clone", EPERM, FM_BITS, 0, CLONE_NEWNET, "clone(CLONE_NEWNET)",
	"see clone(CLONE_NEWUSER)"),
    RA("clone", EPERM, FM_BITS, 0, CLONE_NEWIPC, "clone(CLONE_NEWIPC)",
	"see clone(CLONE_NEWUSER)"),
    RA("clone", EPERM, FM_BITS, 0, CLONE_NEWUTS, "clone(CLONE_NEWUTS)",
	"see clone(CLONE_NEWUSER)"),
    RA("clone", EPERM, FM_BITS, 0, CLONE_NEWCGROUP, "clone(CLONE_NEWCGROUP)",
	"see clone(CLONE_NEWUSER)"),
    R("mount", EPERM, "no worker mounts anything"),
    R("pidfd_open", EPERM, "a handle on another process, to signal it"),
    R("pidfd_send_signal", EPERM, "signals another process"),
    R("tkill", EPERM, "signals a thread by id alone: tgkill is used"),
    R("rt_sigqueueinfo", EPERM, "signals another process"),
    R("rt_tgsigqueueinfo", EPERM, "signals another process"),
    R("chmod", EPERM,
	"changes a file's mode by path, which Landlock does not govern"),
    R("fchmodat", EPERM, "see chmod"),
    RN("fchmodat2", 452, EPERM, "see chmod"),
    R("chown", EPERM,
	"changes a file's owner by path, which Landlock "
	"does not govern"),
    R("lchown", EPERM, "see chown"),
    R("fchownat", EPERM, "see chown"),
    R("fchown", EPERM, "see chown"),
    R("utimensat", EPERM,
	"changes a file's times by path, which Landlock does not govern"),
    R("utimes", EPERM, "see utimensat"),
    R("utime", EPERM, "see utimensat"),
    R("futimesat", EPERM, "see utimensat"),
    R("setxattr", EPERM,
	"changes a file's extended attributes by path, which Landlock "
	"does not govern"),
    R("lsetxattr", EPERM, "see setxattr"),
    R("fsetxattr", EPERM, "see setxattr"),
    R("removexattr", EPERM, "see setxattr"),
    R("lremovexattr", EPERM, "see setxattr"),
    R("fremovexattr", EPERM, "see setxattr"),
};

/* Further named refusals of the model role: it writes no file. */
static const struct filter_rule filter_model[] = {
    R("openat2", ENOSYS,
	"its flags are in memory where seccomp cannot look; libc falls "
	"back to openat"),
    RA("openat", EPERM, FM_BITS, 2, O_WRONLY, "openat(O_WRONLY)",
	"the model worker never writes files"),
    RA("openat", EPERM, FM_BITS, 2, O_RDWR, "openat(O_RDWR)",
	"see openat(O_WRONLY)"),
    RA("openat", EPERM, FM_BITS, 2, O_CREAT, "openat(O_CREAT)",
	"see openat(O_WRONLY)"),
    RA("openat", EPERM, FM_BITS, 2, O_TRUNC, "openat(O_TRUNC)",
	"see openat(O_WRONLY)"),
};

/* Named refusals of the tool role, in its second program. */
static const struct filter_rule filter_tool[] = {
    R("clone3", ENOSYS,
	"its flags are in memory where seccomp cannot look: the jail then "
	"starts each command with clone, whose flags are checked (and "
	"without a cgroup of its own)"),
    R("unshare", EPERM,
	"new namespaces only as the jail makes them, through clone"),
    R("setxattr", EPERM,
	"extended attributes: as root the worker keeps CAP_SETFCAP (a "
	"jail's namespace may map uid 0 only then), with which it could "
	"give a file in its workspace capabilities; no command needs them"),
    R("lsetxattr", EPERM, "see setxattr"),
    R("fsetxattr", EPERM, "see setxattr"),
};

/* A scheduling policy without SCHED_RESET_ON_FORK, which
 * sched_getscheduler may report along with it. */
#define FILTER_POLICY_MASK (0xffffffffull & ~0x40000000ull)

/* How an allowed call's argument is compared. */
enum filter_cmp {
	FC_NONE, /* no comparison */
	FC_MASKED, /* (arg & mask) == val */
	FC_SELF, /* the low 32 bits of arg equal the worker's pid */
};

#define FR_MODEL 0x1u
#define FR_FS 0x2u
#define FR_BOTH (FR_MODEL | FR_FS)

/* One allowed call of the model and fs roles. */
struct filter_allow {
	const char *name;
	unsigned roles; /* FR_MODEL, FR_FS */
	struct {
		unsigned char how, arg;
		uint64_t mask, val;
	} c[2]; /* both must hold */
	const char *show; /* the call as listed; NULL: not listed again */
	const char *why;
};

#define FC0 \
	{ \
		FC_NONE, 0, 0, 0 \
	}
#define A(n, r, w) \
	{ \
		n, r, {FC0, FC0}, n, w \
	}
#define AM(n, r, a, m, v, s, w) \
	{ \
		n, r, {{FC_MASKED, a, m, v}, FC0}, s, w \
	}
/* A file descriptor of 2^k up to 2^(k+1) - 1: fds 3 and up in ranges. */
#define AFD(n, r, k) \
	{ \
		n, r, \
		    {{FC_MASKED, 0, 0xffffffffull & ~((1ull << (k)) - 1), \
			 1ull << (k)}, \
			FC0}, \
		    NULL, NULL \
	}

static const struct filter_allow filter_allow[] = {
    /* Files and descriptors. */
    A("read", FR_BOTH,
	"its connection to the broker, and files: libraries and resolver "
	"files (model), the workspace (fs)"),
    A("readv", FR_BOTH, "see read"),
    A("pread64", FR_MODEL,
	"the dynamic loader reads the libraries libcurl and OpenSSL load "
	"late"),
    A("write", FR_BOTH,
	"its connection, its log (fd 2) and, for fs, the workspace's files"),
    A("writev", FR_BOTH, "see write (stdio)"),
    A("close", FR_BOTH, "closes what it opened"),
    A("lseek", FR_BOTH, "file offsets"),
    A("fstat", FR_BOTH, "file status (libc's fstat)"),
    A("newfstatat", FR_BOTH, "file status (libc's stat and fstatat)"),
    A("fcntl", FR_BOTH, "descriptor flags: non-blocking, close-on-exec"),
    A("dup", FR_FS, "the file tools duplicate a directory descriptor"),
    AM("openat", FR_MODEL, 2, O_WRONLY | O_RDWR | O_CREAT | O_TRUNC, 0,
	"openat(read-only)",
	"libraries, CA certificates, resolver files; Landlock names which"),
    A("openat", FR_FS, "the workspace's files; Landlock keeps it there"),
    A("openat2", FR_FS,
	"the file tools open paths beneath the workspace only "
	"(RESOLVE_BENEATH); Landlock keeps it there"),
    A("getdents64", FR_FS, "lists the workspace's directories"),
    A("readlink", FR_FS, "realpath() resolves the workspace's links"),
    A("readlinkat", FR_FS, "see readlink"),
    A("mkdirat", FR_FS, "the file tools make directories in the workspace"),
    A("unlinkat", FR_FS, "the file tools delete files and temporary files"),
    A("renameat", FR_FS,
	"the file tools replace files atomically and move them"),
    A("renameat2", FR_FS, "see renameat"),
    A("fsync", FR_FS, "the file tools make each change durable"),
    A("fdatasync", FR_FS, "see fsync"),
    A("flock", FR_FS, "the workspace's write lock"),
    AM("fchmod", FR_FS, 0, 0xffffffffull, 3, "fchmod(fd 3 and up)",
	"gives a file the tools wrote its mode; never fds 0-2, which the "
	"worker inherited (/dev/null, shirod's log)"),
    AFD("fchmod", FR_FS, 2),
    AFD("fchmod", FR_FS, 3),
    AFD("fchmod", FR_FS, 4),
    AFD("fchmod", FR_FS, 5),
    AFD("fchmod", FR_FS, 6),
    AFD("fchmod", FR_FS, 7),
    AFD("fchmod", FR_FS, 8),
    AFD("fchmod", FR_FS, 9),
    AFD("fchmod", FR_FS, 10),
    AFD("fchmod", FR_FS, 11),
    AFD("fchmod", FR_FS, 12),
    AFD("fchmod", FR_FS, 13),
    AFD("fchmod", FR_FS, 14),
    AFD("fchmod", FR_FS, 15),

    /* Memory. */
    A("brk", FR_BOTH, "the allocator"),
    A("mmap", FR_BOTH,
	"the allocator, thread stacks and (model) libraries loaded late"),
    A("munmap", FR_BOTH, "see mmap"),
    A("mremap", FR_BOTH, "see mmap"),
    A("mprotect", FR_BOTH, "see mmap (stack guards, loaded libraries)"),
    A("madvise", FR_BOTH, "the allocator returns memory"),

    /* Signals, threads and time. */
    A("rt_sigaction", FR_BOTH, "signal handlers (SIGTERM asks it to stop)"),
    A("rt_sigprocmask", FR_BOTH, "see rt_sigaction"),
    A("rt_sigreturn", FR_BOTH, "returns from a signal handler"),
    A("sigaltstack", FR_BOTH, "signal stacks of new threads"),
    {"kill", FR_BOTH, {{FC_SELF, 0, 0xffffffffull, 0}, FC0},
	"kill(its own pid)",
	"a signal to itself only (abort, raise): never to shirod or another "
	"process"},
    {"tgkill", FR_BOTH, {{FC_SELF, 0, 0xffffffffull, 0}, FC0},
	"tgkill(its own pid)", "see kill: libc's raise and abort use it"},
    A("futex", FR_BOTH,
	"its threads (ZeroMQ's I/O thread, libcurl's resolver) wait on each "
	"other"),
    A("set_robust_list", FR_BOTH,
	"libc registers each new thread, in the thread, when it first runs "
	"(which may be after the lockdown)"),
    A("rseq", FR_BOTH, "see set_robust_list"),
    A("sched_getscheduler", FR_BOTH,
	"ZeroMQ's threads read their scheduling when they first run, which "
	"may be after the lockdown, and abort if they cannot"),
    A("sched_getparam", FR_BOTH, "see sched_getscheduler"),
    AM("sched_setscheduler", FR_BOTH, 1, FILTER_POLICY_MASK, SCHED_OTHER,
	"sched_setscheduler(SCHED_OTHER, SCHED_BATCH, SCHED_IDLE)",
	"ZeroMQ's threads set back the policy they read; only the ordinary "
	"ones, which no process needs a capability for"),
    AM("sched_setscheduler", FR_BOTH, 1, FILTER_POLICY_MASK, SCHED_BATCH, NULL,
	NULL),
    AM("sched_setscheduler", FR_BOTH, 1, FILTER_POLICY_MASK, SCHED_IDLE, NULL,
	NULL),
    AM("clone", FR_MODEL, 0, FILTER_NS | CLONE_THREAD, CLONE_THREAD,
	"clone(CLONE_THREAD, no namespace flag)",
	"threads only, no new process: libcurl resolves names in a thread "
	"of its own"),
    A("sched_yield", FR_BOTH, "ZeroMQ yields in its spin waits"),
    A("sched_getaffinity", FR_BOTH,
	"libc counts the processors when a new thread needs an allocator "
	"arena, and pthread_getattr_np (which a sanitizer's runtime calls "
	"as a thread first runs) asks it"),
    A("getpid", FR_BOTH, "its own pid (ZeroMQ's fork check)"),
    A("gettid", FR_BOTH, "its own thread ids (raise, abort)"),
    A("clock_gettime", FR_BOTH,
	"timers and heartbeats (the vDSO answers most without a call)"),
    A("clock_getres", FR_BOTH, "see clock_gettime"),
    A("gettimeofday", FR_BOTH, "see clock_gettime"),
    A("clock_nanosleep", FR_BOTH, "sleeps"),
    A("nanosleep", FR_BOTH, "sleeps"),
    A("getrandom", FR_BOTH,
	"random numbers (ZeroMQ, OpenSSL, jansson's hash seed)"),
    A("restart_syscall", FR_BOTH, "the kernel restarts an interrupted call"),
    A("exit", FR_BOTH, "a thread ends"),
    A("exit_group", FR_BOTH, "the worker ends"),

    /* Waiting and the connection to the broker. */
    A("poll", FR_BOTH,
	"waits on the broker's socket (zmq_poll) and, model, "
	"on HTTP connections"),
    A("ppoll", FR_BOTH, "see poll"),
    A("epoll_wait", FR_BOTH, "ZeroMQ's I/O thread"),
    A("epoll_pwait", FR_BOTH, "see epoll_wait"),
    A("epoll_ctl", FR_BOTH, "see epoll_wait"),
    A("recvfrom", FR_BOTH, "reads a connected socket"),
    A("recvmsg", FR_BOTH, "see recvfrom"),
    A("sendto", FR_BOTH, "writes a connected socket"),
    A("sendmsg", FR_BOTH, "see sendto"),
    A("getsockopt", FR_BOTH, "socket state (ZeroMQ, libcurl)"),
    A("setsockopt", FR_BOTH, "socket options (ZeroMQ, libcurl)"),
    A("getsockname", FR_BOTH, "a connection's own address"),
    A("getpeername", FR_BOTH, "a connection's peer"),
    A("shutdown", FR_BOTH, "ends a connection"),

    /* The network, model only: HTTPS to providers, and DNS. */
    AM("socket", FR_MODEL, 0, ~0ull, AF_INET, "socket(AF_INET)",
	"connections to providers and to the DNS server"),
    AM("socket", FR_MODEL, 0, ~0ull, AF_INET6, "socket(AF_INET6)",
	"see socket(AF_INET)"),
    A("connect", FR_MODEL,
	"to a provider or the DNS server (sockets of other families cannot "
	"be made)"),
    A("sendmmsg", FR_MODEL,
	"libc's resolver sends both of its queries at once"),
    {"socketpair", FR_MODEL,
	{{FC_MASKED, 0, ~0ull, AF_UNIX}, {FC_MASKED, 1, 0xf, SOCK_STREAM}},
	"socketpair(AF_UNIX, SOCK_STREAM)",
	"libcurl's resolver thread wakes its caller through a pair; a "
	"connected stream pair reaches nothing outside"},
};

/* The socket families each refusal program allows (bit n = family n). */
#define FAM(f) (1ull << (f))
static const uint64_t filter_families[] = {
    [FILTER_JAIL] = FAM(AF_UNIX),
    [FILTER_JAIL_NET] = FAM(AF_UNIX) | FAM(AF_INET) | FAM(AF_INET6),
    [FILTER_MODEL] = FAM(AF_INET) | FAM(AF_INET6),
    [FILTER_FS] = 0,
    [FILTER_TOOL] = 0,
    [FILTER_TOOL_NET] = FAM(AF_INET) | FAM(AF_INET6),
};

/* Refusals built in code rather than from the tables, for listing. */
static const struct {
	unsigned policies; /* bit n = policy n */
	const char *call, *reply, *why;
} filter_extra[] = {
    {0x3f, "personality(anything but PER_LINUX)", "EPERM",
	"turns off address space randomization or changes the ABI"},
    {0x03, "socket(other families)", "EAFNOSUPPORT",
	"the jail without network allows AF_UNIX only; with network also "
	"AF_INET and AF_INET6"},
    {0x0c, "socket(other families)", "EPERM",
	"model: AF_INET and AF_INET6 only; fs: no socket at all.  Neither "
	"can reach a Unix socket: the broker's two, an ssh-agent or a "
	"desktop bus"},
    {0x30, "socket(every family but AF_INET, AF_INET6)", "EAFNOSUPPORT",
	"no Unix socket: the broker's two, an ssh-agent or a desktop bus "
	"(socketpair stays); AF_INET and AF_INET6 only when a person gave "
	"the jails the network"},
    {0x30, "clone(namespace flags but the jail's)", "EPERM",
	"new namespaces only in the one combination the jail uses (user, "
	"mount, pid, ipc, uts, cgroup, with or without network)"},
    {0x30, "calls newer than this build", "ENOSYS",
	"the program falls back to the older call it replaces"},
    {0x0c, "every other call", "EPERM", "not in the allow-list"},
    {0x3f, "a non-native architecture (i386, x32)", "kill",
	"other system call tables would slip past every rule"},
};

/* filter_table - the extra refusals of policy beyond the base ones. */
static const struct filter_rule *
filter_table(enum filter_policy policy, size_t *n,
    const struct filter_rule **more, size_t *nmore)
{
	*more = NULL;
	*nmore = 0;
	switch (policy) {
	case FILTER_JAIL:
	case FILTER_JAIL_NET:
		*n = sizeof(filter_jail) / sizeof(filter_jail[0]);
		return filter_jail;
	case FILTER_MODEL:
		*more = filter_model;
		*nmore = sizeof(filter_model) / sizeof(filter_model[0]);
		*n = sizeof(filter_worker) / sizeof(filter_worker[0]);
		return filter_worker;
	case FILTER_FS:
		*n = sizeof(filter_worker) / sizeof(filter_worker[0]);
		return filter_worker;
	case FILTER_TOOL:
	case FILTER_TOOL_NET:
		*n = sizeof(filter_tool) / sizeof(filter_tool[0]);
		return filter_tool;
	}
	*n = 0;
	return NULL;
}

/* filter_nr_of - the number of the call name here (nr where libseccomp
 * does not know it yet), or -1. */
static int
filter_nr_of(const char *name, int nr)
{
	int n = seccomp_syscall_resolve_name(name);

	if (n != __NR_SCMP_ERROR)
		return n;
#ifdef __x86_64__
	return nr;
#else
	(void)nr;
	return -1;
#endif
}

/* filter_nr - the number of r's call here, or -1. */
static int
filter_nr(const struct filter_rule *r)
{
	return filter_nr_of(r->name, r->nr);
}

/* filter_add - add one refusal to ctx. */
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

/*
 * filter_add_clone_jail - refuse clone with namespace flags other than
 * the jail's combination.  A call is refused when it has some namespace
 * flag c and lacks some flag b of the jail's: one rule per pair, each a
 * single masked comparison, (flags & (b | c)) == c.
 */
static int
filter_add_clone_jail(scmp_filter_ctx ctx)
{
	struct scmp_arg_cmp cmp;
	uint64_t b, c;

	for (b = 1; b <= 0xffffffffull; b <<= 1) {
		if (!(FILTER_JAIL_NS & b))
			continue;
		for (c = 1; c <= 0xffffffffull; c <<= 1) {
			if (!(FILTER_NS & c) || c == b)
				continue;
			cmp = (struct scmp_arg_cmp){
			    0, SCMP_CMP_MASKED_EQ, b | c, c};
			if (seccomp_rule_add_array(ctx, SCMP_ACT_ERRNO(EPERM),
				SCMP_SYS(clone), 1, &cmp) != 0)
				return -SHIRO_ERR_FAILED;
		}
	}
	return 0;
}

/* filter_ctx - a context with default action def, the native
 * architecture only (another one kills). */
static scmp_filter_ctx
filter_ctx(uint32_t def)
{
	scmp_filter_ctx ctx = seccomp_init(def);

	if (ctx == NULL)
		return NULL;
	/* Only the native architecture is in the filter: any other (i386
	 * via int 0x80, x32 via the x32 bit) gets the bad-arch action.  We
	 * set no_new_privs ourselves, before loading. */
	if (seccomp_attr_set(
		ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS) != 0 ||
	    seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0) != 0) {
		seccomp_release(ctx);
		return NULL;
	}
	return ctx;
}

/* filter_export - ctx as a classic BPF program in prog. */
static int
filter_export(scmp_filter_ctx ctx, struct sock_fprog *prog)
{
	struct stat st;
	void *mem = NULL;
	int fd, rc = -SHIRO_ERR_FAILED;

	memset(prog, 0, sizeof(*prog));
	fd = memfd_create("shiro-filter", MFD_CLOEXEC);
	if (fd < 0)
		return rc;
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
	close(fd);
	return rc;
}

/* filter_add_refusals - the base table and policy's own into ctx, but
 * for the rules whose errno is def, the default answer of an allow-list
 * (libseccomp refuses a rule that repeats the default). */
static int
filter_add_refusals(scmp_filter_ctx ctx, enum filter_policy policy, int def)
{
	const struct filter_rule *extra, *more;
	size_t i, n, nmore;

	for (i = 0; i < sizeof(filter_base) / sizeof(filter_base[0]); i++)
		if (filter_base[i].err != def &&
		    filter_add(ctx, &filter_base[i]) != 0)
			return -SHIRO_ERR_FAILED;
	extra = filter_table(policy, &n, &more, &nmore);
	for (i = 0; i < n; i++)
		if (extra[i].err != def && filter_add(ctx, &extra[i]) != 0)
			return -SHIRO_ERR_FAILED;
	for (i = 0; i < nmore; i++)
		if (more[i].err != def && filter_add(ctx, &more[i]) != 0)
			return -SHIRO_ERR_FAILED;
	return 0;
}

/* filter_build - compile policy's refusal program. */
int
filter_build(enum filter_policy policy, struct sock_fprog *prog)
{
	scmp_filter_ctx ctx;
	int rc = -SHIRO_ERR_FAILED;

	memset(prog, 0, sizeof(*prog));
	if (policy == FILTER_MODEL || policy == FILTER_FS ||
	    (unsigned)policy > FILTER_TOOL_NET)
		return -SHIRO_ERR_INVAL;
	if ((ctx = filter_ctx(SCMP_ACT_ALLOW)) == NULL)
		return -SHIRO_ERR_FAILED;
	if (filter_add_refusals(ctx, policy, 0) != 0)
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
	if ((policy == FILTER_TOOL || policy == FILTER_TOOL_NET) &&
	    filter_add_clone_jail(ctx) != 0)
		goto out;
	rc = filter_export(ctx, prog);
out:
	seccomp_release(ctx);
	return rc;
}

/* filter_cmp_of - the libseccomp comparison of one allowed condition. */
static struct scmp_arg_cmp
filter_cmp_of(unsigned arg, uint64_t mask, uint64_t val)
{
	struct scmp_arg_cmp cmp = {arg, SCMP_CMP_MASKED_EQ, mask, val};

	return cmp;
}

/* filter_build_allow - the allow-list program of the model or fs role. */
static int
filter_build_allow(
    enum filter_policy policy, long self, struct sock_fprog *prog)
{
	unsigned role = policy == FILTER_MODEL ? FR_MODEL : FR_FS;
	struct scmp_arg_cmp cmp[2];
	const struct filter_allow *a;
	scmp_filter_ctx ctx;
	unsigned k, n;
	size_t i;
	int nr, rc = -SHIRO_ERR_FAILED;

	if ((ctx = filter_ctx(SCMP_ACT_ERRNO(EPERM))) == NULL)
		return -SHIRO_ERR_FAILED;
	if (filter_add_refusals(ctx, policy, EPERM) != 0)
		goto out;
	for (i = 0; i < sizeof(filter_allow) / sizeof(filter_allow[0]); i++) {
		a = &filter_allow[i];
		if (!(a->roles & role))
			continue;
		if ((nr = filter_nr_of(a->name, -1)) < 0)
			continue;
		for (k = n = 0; k < 2; k++) {
			if (a->c[k].how == FC_MASKED)
				cmp[n++] = filter_cmp_of(
				    a->c[k].arg, a->c[k].mask, a->c[k].val);
			else if (a->c[k].how == FC_SELF)
				cmp[n++] =
				    filter_cmp_of(a->c[k].arg, 0xffffffffull,
					(uint64_t)self & 0xffffffffull);
		}
		if (seccomp_rule_add_array(ctx, SCMP_ACT_ALLOW, nr, n, cmp) !=
		    0) {
			log_warnx("seccomp: cannot allow %s", a->name);
			goto out;
		}
	}
	rc = filter_export(ctx, prog);
out:
	seccomp_release(ctx);
	return rc;
}

/* filter_refused_always - the errno of the unconditional refusal of call
 * nr in policy's tables, or 0 when it has none. */
static int
filter_refused_always(enum filter_policy policy, int nr)
{
	const struct filter_rule *extra, *more;
	size_t i, n, nmore;

	for (i = 0; i < sizeof(filter_base) / sizeof(filter_base[0]); i++)
		if (filter_base[i].match == FM_ALL &&
		    filter_nr(&filter_base[i]) == nr)
			return filter_base[i].err;
	extra = filter_table(policy, &n, &more, &nmore);
	for (i = 0; i < n; i++)
		if (extra[i].match == FM_ALL && filter_nr(&extra[i]) == nr)
			return extra[i].err;
	return 0;
}

/* The highest system call number looked up for the tool's allow-list. */
#define FILTER_NR_MAX 1024

/* filter_build_tool - the tool role's allow-list: every call libseccomp
 * knows here, the unconditional refusals with their answer; newer calls
 * get ENOSYS. */
static int
filter_build_tool(enum filter_policy policy, struct sock_fprog *prog)
{
	scmp_filter_ctx ctx;
	char *name;
	int nr, err, rc = -SHIRO_ERR_FAILED;

	if ((ctx = filter_ctx(SCMP_ACT_ERRNO(ENOSYS))) == NULL)
		return -SHIRO_ERR_FAILED;
	for (nr = 0; nr < FILTER_NR_MAX; nr++) {
		name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, nr);
		if (name == NULL)
			continue;
		free(name);
		err = filter_refused_always(policy, nr);
		if (err == ENOSYS)
			continue; /* the default */
		if (seccomp_rule_add(ctx,
			err ? SCMP_ACT_ERRNO((unsigned)err) : SCMP_ACT_ALLOW,
			nr, 0) != 0)
			goto out;
	}
	rc = filter_export(ctx, prog);
out:
	seccomp_release(ctx);
	return rc;
}

/* filter_lockdown - the programs of a worker policy. */
int
filter_lockdown(enum filter_policy policy, long self,
    struct sock_fprog progs[2], size_t *np)
{
	int rc;

	*np = 0;
	memset(progs, 0, 2 * sizeof(progs[0]));
	switch (policy) {
	case FILTER_MODEL:
	case FILTER_FS:
		if ((rc = filter_build_allow(policy, self, &progs[0])) != 0)
			return rc;
		*np = 1;
		return 0;
	case FILTER_TOOL:
	case FILTER_TOOL_NET:
		if ((rc = filter_build_tool(policy, &progs[0])) != 0)
			return rc;
		if ((rc = filter_build(policy, &progs[1])) != 0) {
			free(progs[0].filter);
			progs[0].filter = NULL;
			return rc;
		}
		*np = 2;
		return 0;
	default:
		return -SHIRO_ERR_INVAL;
	}
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

/* filter_reply - the listed answer of errno err. */
static const char *
filter_reply(int err)
{
	return err == ENOSYS ? "ENOSYS" : "EPERM";
}

/* filter_each - call fn for each line of policy, in order. */
void
filter_each(enum filter_policy policy, filter_fn fn, void *arg)
{
	const struct filter_rule *extra, *more;
	unsigned role = policy == FILTER_MODEL ? FR_MODEL
	    : policy == FILTER_FS	       ? FR_FS
					       : 0;
	size_t i, n, nmore;

	for (i = 0;
	     role != 0 && i < sizeof(filter_allow) / sizeof(filter_allow[0]);
	     i++)
		if ((filter_allow[i].roles & role) && filter_allow[i].show)
			fn(arg, filter_allow[i].show, "allow",
			    filter_allow[i].why);
	if (policy == FILTER_TOOL || policy == FILTER_TOOL_NET)
		fn(arg, "every other call this build knows", "allow",
		    "its jails inherit this filter and may run any program: "
		    "the refusals below and the jail's own filter bind them");
	for (i = 0; i < sizeof(filter_base) / sizeof(filter_base[0]); i++)
		fn(arg, filter_base[i].show, filter_reply(filter_base[i].err),
		    filter_base[i].why);
	extra = filter_table(policy, &n, &more, &nmore);
	for (i = 0; i < n; i++)
		fn(arg, extra[i].show, filter_reply(extra[i].err),
		    extra[i].why);
	for (i = 0; i < nmore; i++)
		fn(arg, more[i].show, filter_reply(more[i].err), more[i].why);
	for (i = 0; i < sizeof(filter_extra) / sizeof(filter_extra[0]); i++)
		if (filter_extra[i].policies & (1u << policy))
			fn(arg, filter_extra[i].call, filter_extra[i].reply,
			    filter_extra[i].why);
}

/* filter_info - r as the tests see it. */
static void
filter_info(const struct filter_rule *r, struct filter_rule_info *out)
{
	out->name = r->name;
	out->nr = filter_nr(r);
	out->err = r->err;
	out->match = r->match == FM_ALL ? 0 : r->match == FM_EQ32 ? 1 : 2;
	out->arg = r->arg;
	out->mask = r->match == FM_EQ32 ? 0xffffffffull : r->val;
	out->val = r->val;
}

/* filter_rules - the named refusals of policy, for the tests. */
size_t
filter_rules(
    enum filter_policy policy, struct filter_rule_info *out, size_t max)
{
	const size_t nbase = sizeof(filter_base) / sizeof(filter_base[0]);
	const struct filter_rule *extra, *more;
	size_t i, k = 0, n, nmore;

	extra = filter_table(policy, &n, &more, &nmore);
	for (i = 0; i < nbase; i++, k++)
		if (k < max)
			filter_info(&filter_base[i], &out[k]);
	for (i = 0; i < n; i++, k++)
		if (k < max)
			filter_info(&extra[i], &out[k]);
	for (i = 0; i < nmore; i++, k++)
		if (k < max)
			filter_info(&more[i], &out[k]);
	return k;
}

/* filter_allowed - the allowed calls of a worker policy, for the tests. */
size_t
filter_allowed(
    enum filter_policy policy, struct filter_rule_info *out, size_t max)
{
	unsigned role = policy == FILTER_MODEL ? FR_MODEL
	    : policy == FILTER_FS	       ? FR_FS
					       : 0;
	const struct filter_allow *a;
	size_t i, k = 0;

	for (i = 0;
	     role != 0 && i < sizeof(filter_allow) / sizeof(filter_allow[0]);
	     i++) {
		a = &filter_allow[i];
		if (!(a->roles & role))
			continue;
		if (k < max) {
			out[k].name = a->name;
			out[k].nr = filter_nr_of(a->name, -1);
			out[k].err = 0;
			out[k].match = a->c[0].how == FC_NONE ? 0
			    : a->c[0].how == FC_SELF	      ? 4
							      : 3;
			out[k].arg = a->c[0].arg;
			out[k].mask = a->c[0].mask;
			out[k].val = a->c[0].val;
		}
		k++;
	}
	return k;
}
