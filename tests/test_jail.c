/*
 * test_jail - the seccomp policies, call by call, and the jail's basic
 * promises (exit status, output, environment, fds, session, timeout,
 * cancel).  The try-syscall probe runs inside a real jail through
 * jail_run() (the worker roles' lockdowns are test_sandbox's).
 */
#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "proto/err.h"
#include "sandbox/cgroup.h"
#include "sandbox/filter.h"
#include "sandbox/jail.h"
#include "tests/harness.h"
#include "tests/test_jail_lib.h"

/* One probe and what the jail must answer. */
struct expect {
	const char *call;
	const char *want; /* "ok", an errno name, or "SIGSYS" */
};

/* The calls a jailed command makes all the time: they must work. */
static const struct expect needed[] = {
    {"getpid", "ok"},
    {"fork", "ok"},
    {"open_write_tmp", "ok"},
    {"socket_unix", "ok"},
    {"personality_linux", "ok"},
};

/* What the jail (no network) refuses, and how. */
static const struct expect refused[] = {
    {"ptrace", "EPERM"},
    {"process_vm_readv", "EPERM"},
    {"process_vm_writev", "EPERM"},
    {"mount", "EPERM"},
    {"umount2", "EPERM"},
    {"pivot_root", "EPERM"},
    {"chroot", "EPERM"},
    {"open_tree", "EPERM"},
    {"move_mount", "EPERM"},
    {"fsopen", "EPERM"},
    {"fsconfig", "EPERM"},
    {"fsmount", "EPERM"},
    {"fspick", "EPERM"},
    {"mount_setattr", "EPERM"},
    {"unshare", "EPERM"},
    {"setns", "EPERM"},
    {"clone_newuser", "EPERM"},
    {"clone_newns", "EPERM"},
    {"clone_newnet", "EPERM"},
    {"clone3", "ENOSYS"},
    {"keyctl", "EPERM"},
    {"add_key", "EPERM"},
    {"request_key", "EPERM"},
    {"bpf", "EPERM"},
    {"perf_event_open", "EPERM"},
    {"userfaultfd", "EPERM"},
    {"io_uring_setup", "EPERM"},
    {"kexec_load", "EPERM"},
    {"init_module", "EPERM"},
    {"finit_module", "EPERM"},
    {"delete_module", "EPERM"},
    {"personality_linux32", "EPERM"},
    {"personality_norandom", "EPERM"},
    {"acct", "EPERM"},
    {"swapoff", "EPERM"},
    {"reboot", "EPERM"},
    {"syslog", "EPERM"},
    {"open_by_handle_at", "EPERM"},
    {"tiocsti", "EPERM"},
    {"tiocsti_hi", "EPERM"},
    {"tioclinux", "EPERM"},
    {"socket_inet", "EAFNOSUPPORT"},
    {"socket_inet6", "EAFNOSUPPORT"},
    {"socket_netlink", "EAFNOSUPPORT"},
    {"socket_packet", "EAFNOSUPPORT"},
    {"socket_inet_hi", "EAFNOSUPPORT"},
    {"x32", "SIGSYS"},
    {"i386", "SIGSYS"},
};

/* With the network on, these change; the rest stays refused. */
static const struct expect net_on[] = {
    {"socket_inet", "ok"},
    {"socket_inet6", "ok"},
    {"socket_netlink", "EAFNOSUPPORT"},
    {"socket_inet_hi", "EAFNOSUPPORT"},
    {"ptrace", "EPERM"},
    {"unshare", "EPERM"},
};

/*
 * Without the jail the same probes succeed or fail differently, which
 * shows that the answers above come from the filter and not from the
 * probe's arguments.
 */
static const struct expect unjailed[] = {
    {"ptrace", "ok"},
    {"open_tree", "ok"},
    {"unshare", "ok"},
    {"clone3", "EINVAL"},
    {"setns", "EBADF"},
    {"io_uring_setup", "ok"},
    {"personality_linux32", "ok"},
    {"tiocsti", "ENOTTY"},
    {"socket_inet", "ok"},
    {"keyctl", "ok"},
};

/* probe_one - run the probe for call in ws; check the answer. */
static void
probe_one(const char *ws, const char *probe, const struct expect *e, int net,
    int unjail)
{
	const char *argv[] = {probe, e->call, NULL};
	struct jail_spec spec;
	struct jt_run r;
	char want[128];

	jt_spec(&spec, ws, argv);
	spec.net = net;
	spec.unjailed = unjail;
	jt_exec(&spec, &r);
	CHECKF(r.rc == 0, "%s: jail_run: %s", e->call, r.res.error);
	if (strcmp(e->want, "SIGSYS") == 0) {
		CHECKF(!r.res.exited && r.res.signal == SIGSYS,
		    "%s: want a kill by SIGSYS, got exit %d signal %d, "
		    "output \"%s\"",
		    e->call, r.res.exit_code, r.res.signal, r.out.data);
		CHECKF(
		    r.out.len == 0, "%s: printed \"%s\"", e->call, r.out.data);
	} else {
		(void)snprintf(want, sizeof(want), "%s %s\n", e->call, e->want);
		CHECKF(r.res.exited && r.res.exit_code == 0,
		    "%s: exit %d signal %d (%s)", e->call, r.res.exit_code,
		    r.res.signal, r.err.data);
		CHECKF(strcmp(r.out.data, want) == 0,
		    "%s: want \"%s\" got \"%s\"", e->call, e->want, r.out.data);
	}
	jt_free(&r);
}

/* probe_table - probe_one for each row of t. */
static void
probe_table(const struct expect *t, size_t n, int net, int unjail)
{
	const char *ws = harness_tmpdir(), *probe = jt_probe(ws);
	size_t i;

	for (i = 0; i < n; i++)
		probe_one(ws, probe, &t[i], net, unjail);
}

/* Everyday calls work inside the jail. */
static void
jail_allows_needed_calls(void)
{
	probe_table(needed, sizeof(needed) / sizeof(needed[0]), 0, 0);
}

/* Every refused call fails with its errno, or is killed, in the jail. */
static void
jail_refuses_each_call(void)
{
	probe_table(refused, sizeof(refused) / sizeof(refused[0]), 0, 0);
}

/* With the network on, only the socket families change. */
static void
jail_net_allows_inet_only(void)
{
	probe_table(net_on, sizeof(net_on) / sizeof(net_on[0]), 1, 0);
}

/* The probe's arguments work when nothing filters them. */
static void
probe_args_work_unjailed(void)
{
	if (geteuid() != 0)
		harness_skip("the unjailed controls assume root (unshare)");
	probe_table(unjailed, sizeof(unjailed) / sizeof(unjailed[0]), 0, 1);
}

/* Exit codes and signals come back as they were. */
static void
jail_reports_status(void)
{
	const char *ws = harness_tmpdir();
	struct jt_run r;

	jt_sh(ws, "exit 7", &r);
	CHECK_EQ_INT(r.rc, 0);
	CHECK(r.res.exited);
	CHECK_EQ_INT(r.res.exit_code, 7);
	CHECK_EQ_INT(jail_status(&r.res), 7);
	jt_free(&r);
	jt_sh(ws, "kill -TERM $$; sleep 5", &r);
	CHECK(!r.res.exited);
	CHECK_EQ_INT(r.res.signal, SIGTERM);
	CHECK_EQ_INT(jail_status(&r.res), 128 + SIGTERM);
	jt_free(&r);
	jt_sh(ws, "no-such-command-here", &r);
	CHECK(r.res.exited);
	CHECK_EQ_INT(r.res.exit_code, 127);
	jt_free(&r);
}

/* A missing program is status 127 with a message, not a set-up error. */
static void
jail_missing_program(void)
{
	const char *argv[] = {"/no/such/program", NULL};
	struct jail_spec spec;
	struct jt_run r;

	jt_spec(&spec, harness_tmpdir(), argv);
	jt_exec(&spec, &r);
	CHECK_EQ_INT(r.rc, 0);
	CHECK(r.res.exited);
	CHECK_EQ_INT(r.res.exit_code, 127);
	CHECKF(
	    strstr(r.err.data, "cannot run") != NULL, "stderr: %s", r.err.data);
	jt_free(&r);
}

/* stdout and stderr are told apart and counted. */
static void
jail_separates_output(void)
{
	struct jt_run r;

	jt_sh(harness_tmpdir(), "printf out; printf err >&2", &r);
	CHECK_EQ_STR(r.out.data, "out");
	CHECK_EQ_STR(r.err.data, "err");
	CHECK_EQ_INT(r.res.out_bytes, 3);
	CHECK_EQ_INT(r.res.err_bytes, 3);
	jt_free(&r);
}

/* The CPU and open-file limits hold (file size, address space and
 * processes are in the escape suite). */
static void
jail_applies_rlimits(void)
{
	const char *spin[] = {"sh", "-c", "while :; do :; done", NULL};
	const char *files[] = {"sh", "-c",
	    "ulimit -n; ulimit -t; exec 3</dev/null 40</dev/null && echo "
	    "OPENED",
	    NULL};
	struct jail_spec spec;
	struct jt_run r;

	jt_spec(&spec, harness_tmpdir(), files);
	spec.limits.nofile = 32;
	spec.limits.cpu_s = 7;
	jt_exec(&spec, &r);
	CHECKF(strncmp(r.out.data, "32\n7\n", 5) == 0, "%s", r.out.data);
	CHECK(strstr(r.out.data, "OPENED") == NULL);
	jt_free(&r);

	jt_spec(&spec, harness_tmpdir(), spin);
	spec.limits.cpu_s = 1;
	jt_exec(&spec, &r);
	CHECKF(!r.res.exited &&
		(r.res.signal == SIGXCPU || r.res.signal == SIGKILL),
	    "exit %d signal %d", r.res.exit_code, r.res.signal);
	CHECK(!r.res.timed_out);
	jt_free(&r);
}

/* Large output on both streams at once comes through whole. */
static void
jail_large_output(void)
{
	struct jt_run r;

	jt_sh(harness_tmpdir(),
	    "head -c 3000000 /dev/zero & head -c 2000000 /dev/zero >&2; wait",
	    &r);
	CHECK(r.res.exited && r.res.exit_code == 0);
	CHECK_EQ_INT(r.res.out_bytes, 3000000);
	CHECK_EQ_INT(r.res.err_bytes, 2000000);
	CHECK_EQ_INT(r.out.len, 3000000);
	CHECK_EQ_INT(r.err.len, 2000000);
	jt_free(&r);
}

/* A bad spec is refused before anything runs. */
static void
jail_refuses_bad_specs(void)
{
	const char *argv[] = {"true", NULL}, *none[] = {NULL};
	struct jail_result res;
	struct jail_spec spec;

	jail_spec_init(&spec);
	spec.argv = none;
	CHECK_EQ_INT(jail_run(&spec, &res), -SHIRO_ERR_INVAL);
	spec.argv = argv;
	spec.workspace = "relative/dir";
	CHECK_EQ_INT(jail_run(&spec, &res), -SHIRO_ERR_INVAL);
	spec.workspace = "/";
	CHECK_EQ_INT(jail_run(&spec, &res), -SHIRO_ERR_INVAL);
	spec.workspace = "/usr";
	CHECK_EQ_INT(jail_run(&spec, &res), -SHIRO_ERR_INVAL);
	spec.workspace = "/no/such/dir";
	CHECK_EQ_INT(jail_run(&spec, &res), -SHIRO_ERR_NOENT);
	CHECK(res.error[0] != '\0');
}

/* Only allowlisted variables get in; no fd above 2; a new session; no
 * capabilities; the jail's own hostname. */
static void
jail_cleans_process_state(void)
{
	const char *ws = harness_tmpdir();
	struct jt_run r;
	int fd;

	setenv("AWS_SECRET_ACCESS_KEY", "leaked-secret", 1);
	setenv("SHIRO_TEST_VAR", "leaked-var", 1);
	fd = open("/dev/null", O_RDONLY); /* not close-on-exec */
	CHECK(fd >= 0);
	CHECK(dup2(fd, 9) == 9);
	jt_sh(ws,
	    "env; ls /proc/self/fd | tr '\\n' ' '; echo; "
	    "test \"$(cut -d' ' -f6 /proc/self/stat)\" = \"$$\" && "
	    "echo sid True; grep CapEff /proc/self/status; hostname",
	    &r);
	CHECKF(r.res.exited && r.res.exit_code == 0, "status %d: %s",
	    r.res.exit_code, r.err.data);
	CHECK(strstr(r.out.data, "leaked") == NULL);
	CHECK(strstr(r.out.data, "PATH=") != NULL);
	CHECK(strstr(r.out.data, "HOME=/tmp") != NULL);
	/* ls itself holds one fd for the directory it lists. */
	CHECKF(strstr(r.out.data, "0 1 2 3 \n") != NULL, "fds: %s", r.out.data);
	CHECK(strstr(r.out.data, "sid True") != NULL);
	CHECK(strstr(r.out.data, "CapEff:\t0000000000000000") != NULL);
	CHECK(strstr(r.out.data, "\nshiro\n") != NULL);
	jt_free(&r);
}

/* A worker that ignores SIGPIPE and SIGCHLD and blocks SIGTERM (as
 * daemons do) hands none of that to the command, and the status still
 * comes back. */
static void
jail_resets_signals(void)
{
	struct jt_run r;
	sigset_t set;

	signal(SIGPIPE, SIG_IGN);
	signal(SIGCHLD, SIG_IGN);
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigprocmask(SIG_BLOCK, &set, NULL);
	jt_sh(harness_tmpdir(),
	    "grep -E '^Sig(Blk|Ign)' /proc/self/status; exit 3", &r);
	CHECKF(r.res.exited && r.res.exit_code == 3, "exit %d signal %d",
	    r.res.exit_code, r.res.signal);
	CHECKF(
	    strcmp(r.out.data,
		"SigBlk:\t0000000000000000\nSigIgn:\t0000000000000000\n") == 0,
	    "%s", r.out.data);
	jt_free(&r);
	jt_sh(harness_tmpdir(), "kill -TERM $$; sleep 5", &r);
	CHECK(!r.res.exited && r.res.signal == SIGTERM);
	jt_free(&r);
}

/* count_fds - how many fds this process has open. */
static int
count_fds(void)
{
	char path[64];
	int fd, n = 0;

	for (fd = 0; fd < 1024; fd++) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		if (access(path, F_OK) == 0)
			n++;
	}
	return n;
}

/* Runs, failed set-ups, timeouts and cancels leave no fd behind. */
static void
jail_leaks_no_fds(void)
{
	const char *ok[] = {"true", NULL}, *slow[] = {"sleep", "5", NULL};
	struct jail_spec spec;
	struct jt_run r;
	int before, i;

	jt_sh(harness_tmpdir(), "true", &r); /* first-use allocations */
	jt_free(&r);
	before = count_fds();
	for (i = 0; i < 5; i++) {
		jt_spec(&spec, harness_tmpdir(), ok);
		jt_exec(&spec, &r);
		jt_free(&r);
		jt_spec(&spec, harness_tmpdir(), slow);
		spec.timeout_ms = 50;
		jt_exec(&spec, &r);
		CHECK(r.res.timed_out);
		jt_free(&r);
		jt_spec(&spec, "/no/such/dir", ok);
		jt_exec(&spec, &r);
		CHECK(r.rc != 0);
		jt_free(&r);
		/* A failure inside the child, after clone. */
		jt_spec(&spec, harness_tmpdir(), ok);
		spec.cwd = "/no/such/dir";
		jt_exec(&spec, &r);
		CHECK_EQ_INT(r.rc, -SHIRO_ERR_FAILED);
		CHECKF(strstr(r.res.error, "working directory") != NULL, "%s",
		    r.res.error);
		jt_free(&r);
	}
	CHECK_EQ_INT(count_fds(), before);
}

/* Output arrives while the command still runs. */
static double stream_first_ms;
static struct timespec stream_t0;

/* stream_cb - note when the first chunk came. */
static void
stream_cb(void *arg, enum jail_stream stream, const char *data, size_t len)
{
	struct timespec ts;

	(void)arg;
	(void)stream;
	(void)data;
	(void)len;
	if (stream_first_ms > 0)
		return;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	stream_first_ms = (ts.tv_sec - stream_t0.tv_sec) * 1e3 +
	    (ts.tv_nsec - stream_t0.tv_nsec) / 1e6;
}

static void
jail_streams_output(void)
{
	const char *argv[] = {
	    "sh", "-c", "echo first; sleep 0.6; echo second", NULL};
	struct jail_result res;
	struct jail_spec spec;

	jt_spec(&spec, harness_tmpdir(), argv);
	spec.on_output = stream_cb;
	clock_gettime(CLOCK_MONOTONIC, &stream_t0);
	CHECK_EQ_INT(jail_run(&spec, &res), 0);
	CHECK(res.exited && res.exit_code == 0);
	CHECKF(stream_first_ms > 0 && stream_first_ms < 400,
	    "first output after %.0f ms", stream_first_ms);
	CHECK(res.wall_ms >= 550);
}

/* The wall-clock limit kills the whole tree, background included. */
static void
jail_timeout_kills_tree(void)
{
	const char *argv[] = {"sh", "-c", "sleep 987.25 & sleep 987.5", NULL};
	struct jail_spec spec;
	struct jt_run r;

	jt_spec(&spec, harness_tmpdir(), argv);
	spec.timeout_ms = 300;
	jt_exec(&spec, &r);
	CHECK_EQ_INT(r.rc, 0);
	CHECK(r.res.timed_out);
	CHECK_EQ_INT(jail_status(&r.res), JAIL_EXIT_TIMEOUT);
	CHECKF(r.res.wall_ms < 3000, "took %llu ms",
	    (unsigned long long)r.res.wall_ms);
	CHECK(!jt_host_has("sleep 987.25"));
	CHECK(!jt_host_has("sleep 987.5"));
	jt_free(&r);
}

/* Unjailed (a person's explicit setting), the timeout still kills the
 * command's whole process group. */
static void
unjailed_timeout_kills_group(void)
{
	const char *argv[] = {"sh", "-c", "sleep 984.25 & sleep 984.5", NULL};
	struct jail_spec spec;
	struct jt_run r;

	jt_spec(&spec, harness_tmpdir(), argv);
	spec.unjailed = 1;
	spec.timeout_ms = 300;
	jt_exec(&spec, &r);
	CHECK_EQ_INT(r.rc, 0);
	CHECK(r.res.timed_out);
	CHECK(!jt_host_has("sleep 984.25"));
	CHECK(!jt_host_has("sleep 984.5"));
	jt_free(&r);
}

static volatile sig_atomic_t cancel_flag;

/* cancel_alarm - a signal handler sets the cancel flag. */
static void
cancel_alarm(int sig)
{
	(void)sig;
	cancel_flag = 1;
}

/* The cancel flag (set by a signal handler) kills the tree. */
static void
jail_cancel_kills_tree(void)
{
	const char *argv[] = {"sh", "-c", "sleep 986.25 & sleep 986.5", NULL};
	struct itimerval it;
	struct jail_spec spec;
	struct jt_run r;

	signal(SIGALRM, cancel_alarm);
	memset(&it, 0, sizeof(it));
	it.it_value.tv_usec = 300000;
	CHECK(setitimer(ITIMER_REAL, &it, NULL) == 0);
	jt_spec(&spec, harness_tmpdir(), argv);
	spec.cancel = &cancel_flag;
	jt_exec(&spec, &r);
	CHECK_EQ_INT(r.rc, 0);
	CHECK(r.res.interrupted);
	CHECK(!r.res.timed_out);
	CHECK_EQ_INT(jail_status(&r.res), JAIL_EXIT_INTERRUPT);
	CHECK(!jt_host_has("sleep 986.25"));
	CHECK(!jt_host_has("sleep 986.5"));
	jt_free(&r);
}

/* If the worker dies, the jail dies with it. */
static void
jail_dies_with_monitor(void)
{
	const char *argv[] = {"sh", "-c", "sleep 982.5 & sleep 982.25", NULL};
	struct timespec ts = {0, 20000000};
	struct jail_result res;
	struct jail_spec spec;
	pid_t mon;
	int i, st;

	jt_spec(&spec, harness_tmpdir(), argv);
	spec.timeout_ms = 0;
	mon = fork();
	CHECK(mon >= 0);
	if (mon == 0) {
		(void)jail_run(&spec, &res);
		_exit(0);
	}
	for (i = 0; i < 250 && !jt_host_has("sleep 982.5"); i++)
		nanosleep(&ts, NULL);
	CHECK(jt_host_has("sleep 982.5"));
	CHECK(kill(mon, SIGKILL) == 0);
	CHECK(waitpid(mon, &st, 0) == mon);
	for (i = 0; i < 250 &&
	     (jt_host_has("sleep 982.5") || jt_host_has("sleep 982.25"));
	     i++)
		nanosleep(&ts, NULL);
	CHECK(!jt_host_has("sleep 982.5"));
	CHECK(!jt_host_has("sleep 982.25"));
}

/* The step API: poll fds, cancel by call, finish. */
static void
jail_step_api(void)
{
	const char *argv[] = {"sh", "-c", "echo go; sleep 985.5", NULL};
	struct jail_result res;
	struct jail_spec spec;
	struct jail *j;
	char err[256];
	int fds[4], done = 0, i;
	size_t n;

	jt_spec(&spec, harness_tmpdir(), argv);
	spec.on_output = stream_cb;
	CHECK_EQ_INT(jail_start(&spec, &j, err, sizeof(err)), 0);
	n = jail_pollfds(j, fds, 4);
	CHECK(n >= 2);
	CHECK(jail_next_ms(j) <= 50);
	for (i = 0; i < 200 && stream_first_ms == 0; i++)
		CHECK_EQ_INT(jail_step(j, 50, &done), 0);
	CHECK(stream_first_ms > 0);
	CHECK(!done);
	jail_cancel(j);
	for (i = 0; i < 100 && !done; i++)
		CHECK_EQ_INT(jail_step(j, 50, &done), 0);
	CHECK(done);
	CHECK_EQ_INT(jail_finish(&j, &res), 0);
	CHECK(j == NULL);
	CHECK(res.interrupted);
	CHECK(!jt_host_has("sleep 985.5"));
}

/* With a cgroup v2 group (forced here: this machine may delegate no
 * controller), the jail is born in its own group, which holds the
 * tree while it runs and is gone after. */
static void
jail_cgroup_group(void)
{
	const char *argv[] = {"sh", "-c", "sleep 983.5", NULL};
	const struct cgroup_info *ci = cgroup_detect();
	struct jail_result res;
	struct jail_spec spec;
	struct jail *j;
	char dir[600], text[256], err[256];
	int fd, done = 0, i;
	ssize_t n;

	if (ci->v2[0] == '\0')
		harness_skip("no cgroup v2 group we may write to");
	setenv("SHIRO_JAIL_CGROUP", "always", 1);
	jt_spec(&spec, harness_tmpdir(), argv);
	CHECK_EQ_INT(jail_start(&spec, &j, err, sizeof(err)), 0);
	snprintf(dir, sizeof(dir), "%s/shiro-jail-%ld-0/cgroup.procs", ci->v2,
	    (long)getpid());
	fd = open(dir, O_RDONLY);
	CHECKF(fd >= 0, "%s: %s", dir, strerror(errno));
	n = read(fd, text, sizeof(text) - 1);
	close(fd);
	CHECK(n > 0);
	text[n] = '\0';
	CHECKF(strchr(text, '\n') != strrchr(text, '\n'),
	    "init and the command should both be in the group: %s", text);
	jail_cancel(j);
	for (i = 0; i < 100 && !done; i++)
		CHECK_EQ_INT(jail_step(j, 50, &done), 0);
	CHECK_EQ_INT(jail_finish(&j, &res), 0);
	CHECK(res.interrupted);
	*strrchr(dir, '/') = '\0';
	CHECK(access(dir, F_OK) != 0);
	CHECK(!jt_host_has("sleep 983.5"));
}

/* write_file - write text into path; 0 on success. */
static int
write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY), rc;

	if (fd < 0)
		return -1;
	rc = write(fd, text, strlen(text)) == (ssize_t)strlen(text) ? 0 : -1;
	close(fd);
	return rc;
}

/* Where user namespaces are not allowed, jail_run() refuses with
 * UNSUPP and names what is missing, and nothing runs unjailed. */
static void
jail_refuses_without_userns(void)
{
	const char *argv[] = {"sh", "-c", "echo ran > ran", NULL};
	const char *ws = harness_tmpdir();
	struct jail_result res;
	struct jail_spec spec;
	char map[64];
	uid_t uid = geteuid();
	gid_t gid = getegid();

	/* A user namespace of our own in which no further one may be made
	 * (the limit is per namespace: the host is not touched). */
	CHECK(unshare(CLONE_NEWUSER) == 0);
	snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)uid, (unsigned)uid);
	CHECK(write_file("/proc/self/setgroups", "deny") == 0);
	CHECK(write_file("/proc/self/uid_map", map) == 0);
	snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)gid, (unsigned)gid);
	CHECK(write_file("/proc/self/gid_map", map) == 0);
	if (write_file("/proc/sys/user/max_user_namespaces", "0") != 0)
		harness_skip("cannot lower max_user_namespaces here");
	jail_spec_init(&spec);
	spec.argv = argv;
	spec.workspace = ws;
	CHECK_EQ_INT(jail_run(&spec, &res), -SHIRO_ERR_UNSUPP);
	CHECKF(strstr(res.error, "user namespaces") != NULL, "%s", res.error);
	CHECK(access(jt_path(ws, "ran"), F_OK) != 0);
}

/* The probe and the doctor's self-test agree that the jail runs here. */
static void
jail_probe_reports(void)
{
	struct jail_features f;

	CHECK_EQ_INT(jail_probe(&f), 0);
	if (f.missing[0] != '\0')
		harness_skip(
		    "the jail cannot run here: it lacks %s", f.missing);
	CHECK(f.userns && f.mntns && f.pidns && f.netns && f.seccomp);
	CHECK(f.landlock_abi >= 0);
}

/* The programs compiled at build time are what libseccomp makes from
 * the tables now. */
static void
filter_prebuilt_is_current(void)
{
	struct sock_fprog p;
	int net;

	for (net = 0; net < 2; net++) {
		CHECK_EQ_INT(
		    filter_build(net ? FILTER_JAIL_NET : FILTER_JAIL, &p), 0);
		CHECK_EQ_INT(p.len, filter_prebuilt[net].len);
		CHECK(memcmp(p.filter, filter_prebuilt[net].filter,
			  p.len * sizeof(p.filter[0])) == 0);
		free(p.filter);
	}
}

/* Every rule of the jail's policies refuses its call with its errno,
 * each socket family is allowed or refused as the policy says, and
 * foreign architectures kill (the worker roles' are in test_sandbox). */
static void
policies_enforce_every_rule(void)
{
	jt_policy_check(FILTER_JAIL, JT_FAM(AF_UNIX), EAFNOSUPPORT);
	jt_policy_check(FILTER_JAIL_NET,
	    JT_FAM(AF_UNIX) | JT_FAM(AF_INET) | JT_FAM(AF_INET6), EAFNOSUPPORT);
}

static const struct harness_test tests[] = {
    HT(policies_enforce_every_rule),
    HT(filter_prebuilt_is_current),
    HT(jail_allows_needed_calls),
    HT(jail_refuses_each_call),
    HT(jail_net_allows_inet_only),
    HT(probe_args_work_unjailed),
    HT(jail_reports_status),
    HT(jail_missing_program),
    HT(jail_separates_output),
    HT(jail_applies_rlimits),
    HT(jail_large_output),
    HT(jail_refuses_bad_specs),
    HT(jail_cleans_process_state),
    HT(jail_resets_signals),
    HT(jail_leaks_no_fds),
    HT(jail_streams_output),
    HT(jail_timeout_kills_tree),
    HT(jail_cancel_kills_tree),
    HT(unjailed_timeout_kills_group),
    HT(jail_dies_with_monitor),
    HT(jail_step_api),
    HT(jail_cgroup_group),
    HT(jail_refuses_without_userns),
    HT(jail_probe_reports),
};

HARNESS_MAIN(tests)
