/*
 * test_sandbox - the worker roles' confinement, in forked children of
 * the test: every named refusal and every call outside the allow-lists
 * answered as the tables say; and each role confined for real (files,
 * sockets, signals, capabilities, namespaces, threads started before the
 * lockdown), judged from the child's side and then, from the unconfined
 * test, by the state of the host.  test_worker_escape does the same with
 * real workers started by a real shirod.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/capability.h>
#include <linux/mount.h>
#include <netinet/in.h>
#include <pthread.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <seccomp.h>

#include "proto/err.h"
#include "sandbox/filter.h"
#include "sandbox/jailinit.h"
#include "sandbox/landlock.h"
#include "sandbox/sandbox.h"
#include "tests/harness.h"
#include "tests/test_jail_lib.h"

/* tp - dir/name, allocated (the test's process ends soon after). */
static char *
tp(const char *dir, const char *name)
{
	size_t n = strlen(dir) + strlen(name) + 2;
	char *p = malloc(n);

	CHECK(p != NULL);
	snprintf(p, n, "%s/%s", dir, name);
	return p;
}

/* Every named refusal of each worker policy, the socket families,
 * personality and foreign architectures. */
static void
policies_enforce_named_refusals(void)
{
	jt_policy_check(
	    FILTER_MODEL, JT_FAM(AF_INET) | JT_FAM(AF_INET6), EPERM);
	jt_policy_check(FILTER_FS, 0, EPERM);
	jt_policy_check(FILTER_TOOL, 0, EAFNOSUPPORT);
	jt_policy_check(
	    FILTER_TOOL_NET, JT_FAM(AF_INET) | JT_FAM(AF_INET6), EAFNOSUPPORT);
}

/* Calls never made below, even to see them refused: a bug in the
 * filter would make the test's own process fork or sleep. */
static const char *const never_call[] = {"fork", "vfork", "pause",
    "rt_sigsuspend", "rt_sigreturn", "exit", "exit_group", "clone", "clone3",
    NULL};

/* in_list - whether name is in the NULL-terminated list v. */
static int
in_list(const char *const *v, const char *name)
{
	for (; *v != NULL; v++)
		if (strcmp(*v, name) == 0)
			return 1;
	return 0;
}

/* everything_else_refused - in a child: with policy installed, every call
 * libseccomp knows that is neither allowed nor named answers EPERM. */
static void
everything_else_refused(enum filter_policy policy)
{
	struct filter_rule_info allowed[200], named[200];
	size_t na, nn, i;
	int nr, st, skip, tried = 0;
	char *name;
	long rc;
	pid_t pid = fork();

	CHECK(pid >= 0);
	if (pid == 0) {
		na = filter_allowed(policy, allowed, 200);
		nn = filter_rules(policy, named, 200);
		CHECK(na > 0 && na <= 200 && nn <= 200);
		CHECK_EQ_INT(jt_install(policy, getpid()), 0);
		for (nr = 0; nr < 1024; nr++) {
			name = seccomp_syscall_resolve_num_arch(
			    SCMP_ARCH_NATIVE, nr);
			if (name == NULL)
				continue;
			skip = in_list(never_call, name);
			for (i = 0; i < na && !skip; i++)
				skip = allowed[i].nr == nr;
			for (i = 0; i < nn && !skip; i++)
				skip = named[i].nr == nr;
			if (!skip) {
				errno = 0;
				rc = syscall(nr, -1L, -1L, -1L, -1L, -1L, -1L);
				CHECKF(rc == -1 && errno == EPERM,
				    "policy %d: %s answered %ld errno %d",
				    (int)policy, name, rc, errno);
				tried++;
			}
			free(name);
		}
		CHECK(tried > 200);
		_exit(0);
	}
	CHECK(waitpid(pid, &st, 0) == pid);
	CHECKF(WIFEXITED(st) && WEXITSTATUS(st) == 0, "policy %d child: %d",
	    (int)policy, st);
}

/* The model and fs roles refuse with EPERM every call they do not list. */
static void
allow_lists_refuse_the_rest(void)
{
	everything_else_refused(FILTER_MODEL);
	everything_else_refused(FILTER_FS);
}

/* The tool role: calls newer than the build answer ENOSYS, clone only
 * without namespaces or with exactly the jail's, TIOCSTI never. */
static void
tool_policy_checks_its_arguments(void)
{
	int st;
	long rc;
	pid_t pid = fork();

	CHECK(pid >= 0);
	if (pid == 0) {
		CHECK_EQ_INT(jt_install(FILTER_TOOL, getpid()), 0);
		CHECK(syscall(1000, 0) == -1 && errno == ENOSYS);
		CHECK(syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0) ==
			-1 &&
		    errno == EPERM);
		CHECK(syscall(SYS_clone,
			  (FILTER_JAIL_NS & ~CLONE_NEWPID) | SIGCHLD, 0, 0, 0,
			  0) == -1 &&
		    errno == EPERM);
		CHECK(syscall(SYS_ioctl, 0, TIOCSTI, "x") == -1 &&
		    errno == EPERM);
		CHECK(
		    syscall(SYS_unshare, CLONE_NEWNS) == -1 && errno == EPERM);
		/* The jail's own combination: the child leaves at once. */
		rc = syscall(SYS_clone, FILTER_JAIL_NS | CLONE_NEWNET | SIGCHLD,
		    0, 0, 0, 0);
		if (rc == 0)
			_exit(0);
		CHECKF(rc > 0, "the jail's clone: errno %d", errno);
		CHECK(waitpid((pid_t)rc, &st, 0) == (pid_t)rc);
		rc = syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
		if (rc == 0)
			_exit(0);
		CHECK(rc > 0 && waitpid((pid_t)rc, &st, 0) == (pid_t)rc);
		_exit(0);
	}
	CHECK(waitpid(pid, &st, 0) == pid);
	CHECKF(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child: %d", st);
}

/* child_run - run fn in a forked child (its CHECKs report to the
 * harness) and check that it ended well. */
static void
child_run(void (*fn)(void *), void *arg)
{
	int st;
	pid_t pid = fork();

	CHECK(pid >= 0);
	if (pid == 0) {
		fn(arg);
		_exit(0);
	}
	CHECK(waitpid(pid, &st, 0) == pid);
	CHECKF(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child: %d", st);
}

/* idle - a thread that waits. */
static void *
idle(void *arg)
{
	pause();
	return arg;
}

/* Confinement with a thread alive is refused, before anything changed. */
static void
confine_refuses_threads(void)
{
	struct sandbox_opts o = {0};
	struct sandbox *sb = NULL;
	pthread_t t;

	CHECK(pthread_create(&t, NULL, idle, NULL) == 0);
	CHECK_EQ_INT(
	    sandbox_confine(SANDBOX_ROLE_MODEL, &o, &sb), -SHIRO_ERR_STATE);
	CHECK(sb == NULL);
	CHECK_EQ_INT(prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0), 0);
}

/* unix_listen - a listening Unix socket at path. */
static int
unix_listen(const char *path)
{
	struct sockaddr_un a;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	CHECK(fd >= 0);
	memset(&a, 0, sizeof(a));
	a.sun_family = AF_UNIX;
	CHECK(strlen(path) < sizeof(a.sun_path));
	strcpy(a.sun_path, path);
	CHECK(bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0);
	CHECK(listen(fd, 8) == 0);
	return fd;
}

/* unix_connect - a socket connected to path: its fd, or -1 with errno. */
static int
unix_connect(const char *path)
{
	struct sockaddr_un a;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), e;

	if (fd < 0)
		return -1;
	memset(&a, 0, sizeof(a));
	a.sun_family = AF_UNIX;
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
		e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

/* no_more - whether nothing else connected to the listener lfd. */
static int
no_more(int lfd)
{
	int fd;

	CHECK(fcntl(lfd, F_SETFL, O_NONBLOCK) == 0);
	fd = accept(lfd, NULL, NULL);
	if (fd >= 0)
		close(fd);
	return fd < 0 && errno == EAGAIN;
}

/* tcp_connect - connect to 127.0.0.1:port: 0, or -1 with errno. */
static int
tcp_connect(int port)
{
	struct sockaddr_in a;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), rc, e;

	if (fd < 0)
		return -1;
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	a.sin_port = htons((unsigned short)port);
	rc = connect(fd, (struct sockaddr *)&a, sizeof(a));
	e = errno;
	close(fd);
	errno = e;
	return rc;
}

/* opens - whether path opens with flags (a created file is removed). */
static int
opens(const char *path, int flags)
{
	int fd = open(path, flags | O_CLOEXEC, 0600);

	if (fd < 0)
		return 0;
	close(fd);
	return 1;
}

/* caps_are - whether the calling thread's effective and permitted sets
 * are exactly keep, and (as root, who could drop it) the bounding set
 * empty. */
static int
caps_are(unsigned long long keep)
{
	struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct d[2];
	unsigned long long eff, perm;
	int c;

	if (syscall(SYS_capget, &h, d) != 0)
		return 0;
	eff = d[0].effective | (unsigned long long)d[1].effective << 32;
	perm = d[0].permitted | (unsigned long long)d[1].permitted << 32;
	if (eff != keep || perm != keep)
		return 0;
	for (c = 0; geteuid() == 0 && c < 41; c++)
		if (prctl(PR_CAPBSET_READ, c, 0, 0, 0) == 1)
			return 0;
	return 1;
}

/* confine - both steps for role; endpoint and ws may be NULL. */
static void
confine(enum sandbox_role role, const char *ws, const char *endpoint,
    void (*between)(struct sandbox *sb, void *arg), void *arg)
{
	struct sandbox_opts o = {ws, endpoint, 0};
	struct sandbox *sb = NULL;

	CHECK_EQ_INT(sandbox_confine(role, &o, &sb), 0);
	if (between != NULL)
		between(sb, arg);
	CHECK_EQ_INT(sandbox_lockdown(sb), 0);
	sandbox_destroy(&sb);
}

/* What the model role's child is given. */
struct model_case {
	const char *dir; /* the test's directory */
	const char *sock; /* a Unix socket listening there */
	int port; /* a TCP listener on loopback */
	int pre; /* a Unix connection made before the confinement */
	int pipe[2]; /* the thread waits on it */
	int thread_result;
	pthread_t thread;
};

/* What the fs role's child is given. */
struct fs_case {
	const char *ws, *outside, *shome;
	int go[3]; /* the thread's pipe, and its result */
	pthread_t thread;
};

/* sched_first_run - what a thread does when it first runs, which may be
 * after the lockdown: ZeroMQ's reads its scheduling and sets it back (it
 * aborts if either fails), a sanitizer's reads its attributes.  0 when
 * all work. */
static int
sched_first_run(void)
{
	struct sched_param param;
	pthread_attr_t attr;
	int policy;

	/* A sanitizer's runtime asks for its stack when a thread starts. */
	if (pthread_getattr_np(pthread_self(), &attr) != 0)
		return -1;
	pthread_attr_destroy(&attr);
	if (pthread_getschedparam(pthread_self(), &policy, &param) != 0)
		return -1;
	/* A thread that runs as batch work sets that back.  (Leaving
	 * SCHED_IDLE again would need a capability, so the test stays
	 * out of it.) */
	if (pthread_setschedparam(pthread_self(), SCHED_BATCH, &param) != 0)
		return -1;
	return pthread_setschedparam(pthread_self(), policy, &param);
}

/* fs_thread - a thread of the fs role that first runs after the
 * lockdown. */
static void *
fs_thread(void *arg)
{
	int *pipefd = arg, *res = arg;
	char c;

	if (read(pipefd[0], &c, 1) != 1)
		return NULL;
	res[2] = sched_first_run();
	return NULL;
}

/* fs_between - the fs role's thread, made before the lockdown. */
static void
fs_between(struct sandbox *sb, void *arg)
{
	struct fs_case *c = arg;

	(void)sb;
	CHECK(pipe(c->go) == 0);
	c->go[2] = -1;
	CHECK(pthread_create(&c->thread, NULL, fs_thread, c->go) == 0);
}

/* model_thread - started after the confinement, before the lockdown:
 * bound by both. */
static void *
model_thread(void *arg)
{
	struct model_case *c = arg;
	char ch;
	int bad = 0;

	if (read(c->pipe[0], &ch, 1) != 1)
		return NULL;
	if (landlock_abi() > 0 && opens(jt_path(c->dir, "secret"), O_RDONLY))
		bad |= 1;
	if (socket(AF_UNIX, SOCK_STREAM, 0) >= 0)
		bad |= 2;
	if (syscall(SYS_ptrace, 0 /* TRACEME */, 0, 0, 0) == 0 ||
	    errno != EPERM)
		bad |= 4;
	if (sched_first_run() != 0)
		bad |= 8;
	c->thread_result = bad;
	return NULL;
}

/* model_between - between the steps: capabilities gone, the thread. */
static void
model_between(struct sandbox *sb, void *arg)
{
	struct model_case *c = arg;

	(void)sb;
	CHECK(caps_are(0));
	CHECK(pipe(c->pipe) == 0);
	CHECK(pthread_create(&c->thread, NULL, model_thread, c) == 0);
}

/* model_child - the model role, confined, from the inside. */
static void
model_child(void *arg)
{
	struct model_case *c = arg;
	char *const argv[] = {"/bin/true", NULL};
	int sv[2];

	c->pre = unix_connect(c->sock);
	CHECK(c->pre >= 0);
	confine(SANDBOX_ROLE_MODEL, NULL, "ipc:///nonexistent/run/workers.sock",
	    model_between, c);
	/* The connection it had still works; no new one can be made. */
	CHECK(write(c->pre, "kept", 4) == 4);
	CHECK(unix_connect(c->sock) < 0 && errno == EPERM);
	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	close(sv[0]);
	close(sv[1]);
	CHECK(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv) < 0 && errno == EPERM);
	CHECK(socket(AF_NETLINK, SOCK_RAW, 0) < 0 && errno == EPERM);
	/* HTTPS needs TCP and the resolver's files (test_worker_escape
	 * resolves names and fetches with libcurl in the real worker). */
	CHECK(tcp_connect(c->port) == 0);
	CHECK(opens("/etc/hosts", O_RDONLY));
	if (landlock_abi() > 0) {
		CHECK(!opens(jt_path(c->dir, "secret"), O_RDONLY) &&
		    errno == EACCES);
		CHECK(!opens("/etc/passwd", O_RDONLY) && errno == EACCES);
		CHECK(!opens("/proc/self/status", O_RDONLY) && errno == EACCES);
	}
	CHECK(!opens(jt_path(c->dir, "new"), O_WRONLY | O_CREAT) &&
	    errno == EPERM);
	CHECK(!opens(jt_path(c->dir, "secret"), O_RDWR) && errno == EPERM);
	CHECK(execve(argv[0], argv, NULL) < 0 && errno == EPERM);
	CHECK(fork() < 0 && errno == EPERM);
	CHECK(syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0) < 0 &&
	    errno == EPERM);
	CHECK(kill(getpid(), 0) == 0);
	CHECK(syscall(SYS_tgkill, getpid(), gettid(), 0) == 0);
	CHECK(kill(getppid(), 0) < 0 && errno == EPERM);
	CHECK(syscall(SYS_tkill, getppid(), 0) < 0 && errno == EPERM);
	CHECK(syscall(SYS_pidfd_open, getppid(), 0) < 0 && errno == EPERM);
	CHECK(syscall(SYS_ptrace, 16 /* ATTACH */, getppid(), 0, 0) < 0 &&
	    errno == EPERM);
	/* The thread that existed before the lockdown is bound too. */
	CHECK(write(c->pipe[1], "g", 1) == 1);
	CHECK(pthread_join(c->thread, NULL) == 0);
	CHECK_EQ_INT(c->thread_result, 0);
}

/* The model role: no Unix socket after the lockdown (the one it had
 * keeps working), TCP and name lookups from any thread, reads of its
 * own files only, no write, no exec, no process, no signal but to
 * itself, no capability. */
static void
model_role_confined(void)
{
	struct model_case c = {0};
	char buf[8] = {0};
	int lfd, tfd, a;

	c.dir = harness_tmpdir();
	c.sock = tp(c.dir, "s.sock");
	jt_write(jt_path(c.dir, "secret"), "SECRET\n");
	lfd = unix_listen(c.sock);
	tfd = jt_listen_tcp(SOCK_STREAM, &c.port);
	child_run(model_child, &c);
	a = accept(lfd, NULL, NULL);
	CHECK(a >= 0 && read(a, buf, sizeof(buf)) == 4);
	CHECK_EQ_STR(buf, "kept");
	close(a);
	/* The host: only the connections the child was allowed. */
	CHECK(no_more(lfd));
	CHECK(access(jt_path(c.dir, "new"), F_OK) != 0);
	close(lfd);
	close(tfd);
}

/* fs_child - the fs role, confined, from the inside. */
static void
fs_child(void *arg)
{
	struct fs_case *c = arg;
	struct sandbox_opts none = {0};
	struct sandbox *sb = NULL;
	char *const argv[] = {"/bin/true", NULL};
	char buf[64];
	pthread_t t;
	int fd, sv[2];
	ssize_t n;

	CHECK_EQ_INT(
	    sandbox_confine(SANDBOX_ROLE_FS, &none, &sb), -SHIRO_ERR_INVAL);
	/* The workspace is the home directory, with a secret in it. */
	setenv("HOME", c->ws, 1);
	setenv("SHIRO_HOME", c->shome, 1);
	confine(SANDBOX_ROLE_FS, c->ws, NULL, fs_between, c);
	CHECK(write(c->go[1], "g", 1) == 1);
	CHECK(pthread_join(c->thread, NULL) == 0);
	CHECK_EQ_INT(c->go[2], 0);
	fd = open(jt_path(c->ws, "new"), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	CHECK(fd >= 0);
	CHECK(fchmod(fd, 0640) == 0);
	close(fd);
	CHECK(fchmod(2, 0777) < 0 && errno == EPERM);
	CHECK(fchmod(0, 0777) < 0 && errno == EPERM);
	/* No capability overrides a file's permissions, even as root. */
	CHECK(!opens(jt_path(c->ws, "locked"), O_RDONLY) && errno == EACCES);
	fd = open(jt_path(c->ws, ".ssh/id_rsa"), O_RDONLY | O_CLOEXEC);
	n = fd >= 0 ? read(fd, buf, sizeof(buf)) : -1;
	CHECKF(n <= 0, "read the key in the workspace: %zd", n);
	if (fd >= 0)
		close(fd);
	if (landlock_abi() > 0) {
		CHECK(!opens(jt_path(c->outside, "x"), O_WRONLY | O_CREAT) &&
		    errno == EACCES);
		CHECK(!opens(jt_path(c->shome, "chat"), O_RDONLY) &&
		    errno == EACCES);
		CHECK(!opens("/etc/hostname", O_RDONLY) && errno == EACCES);
	}
	/* Metadata by path, which Landlock does not govern. */
	CHECK(chmod(jt_path(c->outside, "victim"), 0777) < 0 && errno == EPERM);
	CHECK(chmod(jt_path(c->ws, "new"), 0777) < 0 && errno == EPERM);
	CHECK(chown(jt_path(c->outside, "victim"), 0, 0) < 0 && errno == EPERM);
	CHECK(utimensat(AT_FDCWD, jt_path(c->outside, "victim"), NULL, 0) < 0 &&
	    errno == EPERM);
	CHECK(
	    setxattr(jt_path(c->outside, "victim"), "user.x", "1", 1, 0) < 0 &&
	    errno == EPERM);
	CHECK(socket(AF_UNIX, SOCK_STREAM, 0) < 0 && errno == EPERM);
	CHECK(socket(AF_INET, SOCK_STREAM, 0) < 0 && errno == EPERM);
	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0 && errno == EPERM);
	CHECK(execve(argv[0], argv, NULL) < 0 && errno == EPERM);
	CHECK(fork() < 0 && errno == EPERM);
	CHECK(pthread_create(&t, NULL, idle, NULL) != 0);
	CHECK(kill(getppid(), 0) < 0 && errno == EPERM);
}

/* The fs role: its workspace (a secret the jail hides there covered),
 * no path metadata calls, no socket, no exec, no process, no thread. */
static void
fs_role_confined(void)
{
	struct fs_case c;
	struct stat before, after;
	char *key;

	c.ws = tp(harness_tmpdir(), "ws");
	c.outside = tp(harness_tmpdir(), "outside");
	c.shome = tp(harness_tmpdir(), "shome");
	CHECK(mkdir(c.ws, 0755) == 0 && mkdir(c.outside, 0755) == 0 &&
	    mkdir(c.shome, 0700) == 0);
	CHECK(mkdir(jt_path(c.ws, ".ssh"), 0700) == 0);
	jt_write(jt_path(c.ws, ".ssh/id_rsa"), "PRIVATE KEY\n");
	jt_write(jt_path(c.outside, "victim"), "v\n");
	jt_write(jt_path(c.shome, "chat"), "chat\n");
	jt_write(jt_path(c.ws, "locked"), "mode 0\n");
	CHECK(chmod(jt_path(c.ws, "locked"), 0) == 0);
	CHECK(chmod(jt_path(c.outside, "victim"), 0600) == 0);
	CHECK(stat(jt_path(c.outside, "victim"), &before) == 0);
	child_run(fs_child, &c);
	CHECK(stat(jt_path(c.outside, "victim"), &after) == 0);
	CHECK(after.st_mode == before.st_mode &&
	    after.st_mtim.tv_sec == before.st_mtim.tv_sec &&
	    after.st_mtim.tv_nsec == before.st_mtim.tv_nsec);
	CHECK(getxattr(jt_path(c.outside, "victim"), "user.x", NULL, 0) < 0);
	CHECK(access(jt_path(c.outside, "x"), F_OK) != 0);
	CHECK(access(jt_path(c.ws, "new"), F_OK) == 0);
	key = NULL;
	{
		FILE *f = fopen(jt_path(c.ws, ".ssh/id_rsa"), "r");
		char line[64] = "";
		CHECK(f != NULL && fgets(line, sizeof(line), f) != NULL);
		fclose(f);
		key = line;
		CHECK_EQ_STR(key, "PRIVATE KEY\n");
	}
}

/* What the tool role's child is given. */
struct tool_case {
	const char *home, *shome, *ws, *outside, *sock, *probe;
	char endpoint[PATH_MAX + 8];
	pid_t victim; /* a process of the same uid, without capabilities */
};

/* tool_between - before the lockdown: the socket is reached through the
 * descriptor, though $SHIRO_HOME is covered. */
static void
tool_between(struct sandbox *sb, void *arg)
{
	struct tool_case *c = arg;
	const char *ep = sandbox_endpoint(sb);
	int fd;

	(void)c;
	CHECK(ep != NULL && strncmp(ep, "ipc:///proc/self/fd/", 20) == 0);
	fd = unix_connect(ep + 6);
	CHECKF(fd >= 0, "connect through %s: %s", ep, strerror(errno));
	CHECK(write(fd, "tool", 4) == 4);
	close(fd);
	CHECK(caps_are(geteuid() == 0 ? 1ull << CAP_SETFCAP : 0));
}

/* dir_entries - how many entries dir has (-1 if it cannot be read). */
static int
dir_entries(const char *dir)
{
	struct dirent *de;
	DIR *d = opendir(dir);
	int n = 0;

	if (d == NULL)
		return -1;
	while ((de = readdir(d)) != NULL)
		if (strcmp(de->d_name, ".") != 0 &&
		    strcmp(de->d_name, "..") != 0)
			n++;
	closedir(d);
	return n;
}

/* proc_in_new_userns - in a child with the jail's namespaces, as a
 * compromised tool worker could make one: map our uid, then mount a new
 * /proc.  Exit 0 when a writable one is refused and a read-only one,
 * whose kernel settings cannot be written, is not. */
static int
proc_in_new_userns(void)
{
	char umap[32], gmap[32];
	long pid;
	int st, fs, m;

	/* Our ids as this namespace knows them: the child's is new. */
	snprintf(umap, sizeof(umap), "%u %u 1\n", (unsigned)geteuid(),
	    (unsigned)geteuid());
	snprintf(gmap, sizeof(gmap), "%u %u 1\n", (unsigned)getegid(),
	    (unsigned)getegid());
	pid = syscall(
	    SYS_clone, FILTER_JAIL_NS | CLONE_NEWNET | SIGCHLD, 0, 0, 0, 0);
	if (pid < 0)
		return -1;
	if (pid == 0) {
		if (jailinit_write_file("/proc/self/setgroups", "deny") != 0 ||
		    jailinit_write_file("/proc/self/uid_map", umap) != 0 ||
		    jailinit_write_file("/proc/self/gid_map", gmap) != 0)
			_exit(2);
		fs = (int)syscall(SYS_fsopen, "proc", 0);
		if (fs < 0 ||
		    syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL,
			0) != 0)
			_exit(4);
		if (syscall(SYS_fsmount, fs, 0, MOUNT_ATTR_NOSUID) >= 0 ||
		    errno != EPERM)
			_exit(5);
		m = (int)syscall(
		    SYS_fsmount, fs, 0, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID);
		if (m < 0)
			_exit(6);
		if (openat(m, "sys/kernel/core_pattern", O_WRONLY) >= 0 ||
		    errno != EROFS)
			_exit(7);
		_exit(0);
	}
	if (waitpid((pid_t)pid, &st, 0) != (pid_t)pid || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

/* tool_child - the tool role, confined, from the inside. */
static void
tool_child(void *arg)
{
	struct tool_case *c = arg;
	char buf[256], path[64];
	struct jt_run r;
	int fd, sv[2];
	ssize_t n;

	setenv("HOME", c->home, 1);
	setenv("SHIRO_HOME", c->shome, 1);
	confine(SANDBOX_ROLE_TOOL, c->ws, c->endpoint, tool_between, c);
	CHECK(getcwd(buf, sizeof(buf)) != NULL && strcmp(buf, "/") == 0);
	/* The secrets are covered; nothing outside the workspace can be
	 * changed. */
	CHECK(!opens(jt_path(c->shome, "chat/main/x.jsonl"), O_RDONLY));
	fd = open(jt_path(c->home, ".ssh/id_rsa"), O_RDONLY | O_CLOEXEC);
	n = fd >= 0 ? read(fd, buf, sizeof(buf)) : -1;
	CHECKF(n <= 0, "read ~/.ssh/id_rsa: %zd", n);
	if (fd >= 0)
		close(fd);
	CHECK(!opens(jt_path(c->outside, "x"), O_WRONLY | O_CREAT) &&
	    errno == EROFS);
	CHECK(!opens(jt_path(c->home, ".bashrc"), O_WRONLY | O_APPEND) &&
	    errno == EROFS);
	CHECK(opens(jt_path(c->ws, "b.txt"), O_WRONLY | O_CREAT));
	CHECK(!opens(jt_path(c->ws, "locked"), O_RDONLY) && errno == EACCES);
	CHECK(!opens("/proc/sys/kernel/core_pattern", O_WRONLY));
	CHECK(!opens("/proc/sysrq-trigger", O_WRONLY));
	snprintf(path, sizeof(path), "/proc/%d/environ", (int)getppid());
	CHECK(!opens(path, O_RDONLY));
	/* A process of the same user with no capability, dumpable: its
	 * memory and environment are out of reach from our namespace. */
	snprintf(path, sizeof(path), "/proc/%d/environ", (int)c->victim);
	CHECK(!opens(path, O_RDONLY) && errno == EACCES);
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)c->victim);
	CHECK(!opens(path, O_RDWR) && errno == EACCES);
	CHECK_EQ_INT(dir_entries("/dev"), 5);
	CHECK(dir_entries("/sys") <= 0);
	/* No Unix socket, no TCP without the network. */
	CHECK(unix_connect(c->sock) < 0 && errno == EAFNOSUPPORT);
	CHECK(socket(AF_INET, SOCK_STREAM, 0) < 0 && errno == EAFNOSUPPORT);
	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	close(sv[0]);
	close(sv[1]);
	CHECK(syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0) < 0 &&
	    errno == EPERM);
	/* The jail's own clone is there for it to use: in what it makes,
	 * only a read-only /proc. */
	CHECK_EQ_INT(proc_in_new_userns(), 0);
	CHECK(setxattr(jt_path(c->ws, "b.txt"), "user.x", "1", 1, 0) < 0 &&
	    errno == EPERM);
	if (landlock_abi() >= 6)
		CHECK(kill(getppid(), 0) < 0 && errno == EPERM);
	/* And its jails still run, with the workspace writable. */
	jt_sh(c->ws,
	    "echo jailed > out.txt; cat $HOME/.ssh/id_rsa 2>&1; "
	    "echo done",
	    &r);
	CHECKF(r.rc == 0 && r.res.exited && r.res.exit_code == 0,
	    "jail_run in the tool role: %d %s", r.rc, r.res.error);
	CHECK(strstr(r.out.data, "PRIVATE") == NULL);
	CHECK(strstr(r.out.data, "done") != NULL);
	jt_free(&r);
	/* Its jails inherit the filter: no Unix socket in them either. */
	{
		char cmd[PATH_MAX + 32];
		snprintf(cmd, sizeof(cmd), "%s socket_unix", c->probe);
		jt_sh(c->ws, cmd, &r);
		CHECKF(strstr(r.out.data, "socket_unix EAFNOSUPPORT") != NULL,
		    "a jailed socket(AF_UNIX): %s", r.out.data);
		jt_free(&r);
	}
}

/* victim_main - a process of the test's uid without capabilities, as
 * the user's other processes are; it waits to be killed. */
static void
victim_main(void)
{
	struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct d[2];

	memset(d, 0, sizeof(d));
	if (syscall(SYS_capset, &h, d) != 0)
		_exit(1);
	for (;;)
		pause();
}

/* readable_without_caps - whether a process without capabilities (as the
 * victim's peer) reads path: the control of the tool role's check. */
static int
readable_without_caps(const char *path)
{
	struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct d[2];
	int st;
	pid_t pid = fork();

	CHECK(pid >= 0);
	if (pid == 0) {
		memset(d, 0, sizeof(d));
		if (syscall(SYS_capset, &h, d) != 0)
			_exit(2);
		_exit(opens(path, O_RDONLY) ? 0 : 1);
	}
	CHECK(waitpid(pid, &st, 0) == pid);
	return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

/* The tool role: secrets covered, everything read-only but its
 * workspace, no kernel setting reachable, no other process's /proc, no
 * Unix socket or TCP after the lockdown, and jails that still work. */
static void
tool_role_confined(void)
{
	struct tool_case c;
	char buf[8] = {0};
	int lfd, a;
	FILE *f;
	char line[64] = "";

	c.home = tp(harness_tmpdir(), "home");
	CHECK(mkdir(c.home, 0755) == 0);
	c.shome = tp(c.home, ".shiro");
	c.ws = tp(harness_tmpdir(), "ws");
	c.outside = tp(harness_tmpdir(), "out");
	CHECK(mkdir(c.shome, 0700) == 0 && mkdir(c.ws, 0755) == 0 &&
	    mkdir(c.outside, 0755) == 0);
	CHECK(mkdir(jt_path(c.shome, "run"), 0700) == 0 &&
	    mkdir(jt_path(c.shome, "chat"), 0700) == 0 &&
	    mkdir(jt_path(c.shome, "chat/main"), 0700) == 0 &&
	    mkdir(jt_path(c.home, ".ssh"), 0700) == 0);
	jt_write(jt_path(c.shome, "chat/main/x.jsonl"), "CHAT\n");
	jt_write(jt_path(c.home, ".ssh/id_rsa"), "PRIVATE KEY\n");
	jt_write(jt_path(c.home, ".bashrc"), "# mine\n");
	jt_write(jt_path(c.ws, "locked"), "mode 0\n");
	CHECK(chmod(jt_path(c.ws, "locked"), 0) == 0);
	c.sock = tp(c.shome, "run/workers.sock");
	snprintf(c.endpoint, sizeof(c.endpoint), "ipc://%s", c.sock);
	c.probe = jt_probe(c.ws);
	lfd = unix_listen(c.sock);
	c.victim = fork();
	CHECK(c.victim >= 0);
	if (c.victim == 0)
		victim_main();
	snprintf(line, sizeof(line), "/proc/%d/environ", (int)c.victim);
	/* The control: outside the tool's namespace it can be read. */
	for (a = 0; a < 100 && !readable_without_caps(line); a++)
		usleep(10000);
	CHECKF(a < 100, "%s is not readable even outside", line);
	child_run(tool_child, &c);
	kill(c.victim, SIGKILL);
	waitpid(c.victim, NULL, 0);
	a = accept(lfd, NULL, NULL);
	CHECK(a >= 0 && read(a, buf, sizeof(buf)) == 4);
	CHECK_EQ_STR(buf, "tool");
	close(a);
	CHECK(no_more(lfd));
	close(lfd);
	/* The host: the secrets and files outside untouched, the jail's
	 * and the tool's writes in the workspace. */
	f = fopen(jt_path(c.home, ".ssh/id_rsa"), "r");
	CHECK(f != NULL && fgets(line, sizeof(line), f) != NULL);
	fclose(f);
	CHECK_EQ_STR(line, "PRIVATE KEY\n");
	f = fopen(jt_path(c.home, ".bashrc"), "r");
	CHECK(f != NULL && fgets(line, sizeof(line), f) != NULL);
	fclose(f);
	CHECK_EQ_STR(line, "# mine\n");
	CHECK(access(jt_path(c.outside, "x"), F_OK) != 0);
	CHECK(access(jt_path(c.ws, "out.txt"), F_OK) == 0);
	CHECK(access(jt_path(c.ws, "b.txt"), F_OK) == 0);
}

/* home_child - without $HOME, the secrets' home is the password
 * database's. */
static void
home_child(void *arg)
{
	struct passwd *pw = getpwuid(geteuid());

	(void)arg;
	unsetenv("HOME");
	CHECK(pw != NULL);
	CHECK_EQ_STR(jail_home_dir(), pw->pw_dir);
}

/* A worker whose environment has no HOME still hides that home's
 * secrets. */
static void
home_without_environment(void)
{
	child_run(home_child, NULL);
}

static const struct harness_test tests[] = {
    HT(home_without_environment),
    HT(policies_enforce_named_refusals),
    HT(allow_lists_refuse_the_rest),
    HT(tool_policy_checks_its_arguments),
    HT(confine_refuses_threads),
    HT(model_role_confined),
    HT(fs_role_confined),
    HT(tool_role_confined),
};

HARNESS_MAIN(tests)
