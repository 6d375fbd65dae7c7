/* test_jail_lib - helpers shared by the jail tests. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/harness.h"
#include "tests/test_jail_lib.h"

/* jt_capture - the on_output callback: append to out or err. */
static void
jt_capture(void *arg, enum jail_stream stream, const char *data, size_t len)
{
	struct jt_run *r = arg;

	buf_add(stream == JAIL_STDOUT ? &r->out : &r->err, data, len);
}

/* jt_spec - a spec with the defaults, workspace ws and argv; skips the
 * test where the kernel cannot run the jail. */
void
jt_spec(struct jail_spec *spec, const char *ws, const char *const *argv)
{
	struct jail_features f;

	jail_probe(&f);
	if (f.missing[0] != '\0')
		harness_skip(
		    "the jail cannot run here: it lacks %s", f.missing);
	jail_spec_init(spec);
	spec->workspace = ws;
	spec->argv = argv;
	spec->timeout_ms = 20000;
}

/* jt_exec - jail_run(spec) with stdout and stderr captured into r. */
void
jt_exec(struct jail_spec *spec, struct jt_run *r)
{
	memset(r, 0, sizeof(*r));
	buf_init(&r->out);
	buf_init(&r->err);
	buf_adds(&r->out, "");
	buf_adds(&r->err, "");
	spec->on_output = jt_capture;
	spec->on_output_arg = r;
	r->rc = jail_run(spec, &r->res);
}

/* jt_sh - run `sh -c script` in workspace ws. */
void
jt_sh(const char *ws, const char *script, struct jt_run *r)
{
	const char *argv[] = {"sh", "-c", script, NULL};
	struct jail_spec spec;

	jt_spec(&spec, ws, argv);
	jt_exec(&spec, r);
}

/* jt_free - free r's buffers. */
void
jt_free(struct jt_run *r)
{
	buf_free(&r->out);
	buf_free(&r->err);
}

/* jt_path - dir/name in one of four rotating static buffers. */
const char *
jt_path(const char *dir, const char *name)
{
	static char bufs[4][PATH_MAX];
	static int k;
	char *p = bufs[k++ % 4];

	(void)snprintf(p, PATH_MAX, "%s/%s", dir, name);
	return p;
}

/* jt_write - write text into path, creating it. */
void
jt_write(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	CHECKF(f != NULL, "fopen %s: %s", path, strerror(errno));
	fputs(text, f);
	CHECK(fclose(f) == 0);
}

/* jt_probe - copy build/try-syscall into ws. */
const char *
jt_probe(const char *ws)
{
	static char dst[PATH_MAX];
	char self[PATH_MAX], src[PATH_MAX + 32], data[65536];
	ssize_t n;
	int in, out;

	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	CHECK(n > 0);
	self[n] = '\0';
	*strrchr(self, '/') = '\0';
	(void)snprintf(src, sizeof(src), "%s/../try-syscall", self);
	(void)snprintf(dst, sizeof(dst), "%s/try-syscall", ws);
	in = open(src, O_RDONLY | O_CLOEXEC);
	CHECKF(in >= 0, "open %s: %s", src, strerror(errno));
	out = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	CHECKF(out >= 0, "open %s: %s", dst, strerror(errno));
	while ((n = read(in, data, sizeof(data))) > 0)
		CHECK(write(out, data, (size_t)n) == n);
	close(in);
	CHECK(close(out) == 0);
	return dst;
}

/* jt_host_has - whether a host process's command line contains marker. */
int
jt_host_has(const char *marker)
{
	char path[300], cmd[4096];
	struct dirent *d;
	size_t n, i;
	DIR *dir;
	FILE *f;
	int found = 0;

	dir = opendir("/proc");
	CHECK(dir != NULL);
	while (!found && (d = readdir(dir)) != NULL) {
		if (d->d_name[0] < '0' || d->d_name[0] > '9')
			continue;
		(void)snprintf(
		    path, sizeof(path), "/proc/%s/cmdline", d->d_name);
		f = fopen(path, "r");
		if (f == NULL)
			continue;
		n = fread(cmd, 1, sizeof(cmd) - 1, f);
		fclose(f);
		for (i = 0; i < n; i++)
			if (cmd[i] == '\0')
				cmd[i] = ' ';
		cmd[n] = '\0';
		if (strstr(cmd, marker) != NULL)
			found = 1;
	}
	closedir(dir);
	return found;
}

/* jt_install - install policy in the calling thread alone. */
int
jt_install(enum filter_policy policy, long self)
{
	struct sock_fprog progs[2];
	size_t i, n = 1;
	int rc = 0;

	if (policy == FILTER_JAIL || policy == FILTER_JAIL_NET) {
		if (filter_build(policy, &progs[0]) != 0)
			return -1;
	} else if (filter_lockdown(policy, self, progs, &n) != 0) {
		return -1;
	}
	for (i = 0; i < n; i++) {
		if (rc == 0 && filter_install(&progs[i], 0) != 0)
			rc = -1;
		free(progs[i].filter);
	}
	return rc;
}

/* jt_rule_call - make the call of rule r with arguments that would fail
 * differently (EFAULT, EBADF, ENOENT, ...) if nothing refused it. */
static long
jt_rule_call(const struct filter_rule_info *r)
{
	static const char path[] = "/nonexistent/shiro-rule";
	long a[6] = {-1, -1, -1, -1, -1, -1}, rc;

	if (r->match == 1) {
		a[r->arg] = (long)r->val;
	} else if (r->match == 2 && strcmp(r->name, "clone") == 0) {
		a[0] = (long)r->val | SIGCHLD;
		a[1] = a[2] = a[3] = a[4] = 0;
	} else if (r->match == 2 && strcmp(r->name, "open") == 0) {
		a[0] = (long)path;
		a[1] = (long)r->val;
		a[2] = 0600;
	} else if (r->match == 2 && strcmp(r->name, "openat") == 0) {
		a[0] = AT_FDCWD;
		a[1] = (long)path;
		a[2] = (long)r->val;
		a[3] = 0600;
	}
	rc = syscall(r->nr, a[0], a[1], a[2], a[3], a[4], a[5]);
	if (rc == 0 && strcmp(r->name, "clone") == 0)
		_exit(0); /* an unrefused clone: the child leaves at once */
	return rc;
}

/* jt_policy_check - every named refusal, the families, personality and
 * foreign architectures, in children. */
void
jt_policy_check(
    enum filter_policy policy, unsigned long long families, int family_err)
{
	struct filter_rule_info rules[200];
	size_t i, n;
	long rc;
	int st, f, fd;
	pid_t pid;

	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		n = filter_rules(policy, rules, 200);
		CHECK(n > 0 && n <= 200);
		CHECK_EQ_INT(jt_install(policy, getpid()), 0);
		for (i = 0; i < n; i++) {
			if (rules[i].nr < 0)
				continue;
			errno = 0;
			rc = jt_rule_call(&rules[i]);
			CHECKF(rc == -1 && errno == rules[i].err,
			    "policy %d: %s (rule %zu): rc %ld errno %d, want "
			    "%d",
			    (int)policy, rules[i].name, i, rc, errno,
			    rules[i].err);
		}
		for (f = 0; f < 64; f++) {
			fd = socket(f, SOCK_DGRAM, 0);
			if (fd < 0 && errno != family_err)
				fd = socket(f, SOCK_STREAM, 0);
			if (families & (1ull << f)) {
				CHECKF(fd >= 0 || errno != family_err,
				    "policy %d: family %d refused", (int)policy,
				    f);
			} else {
				CHECKF(fd < 0 && errno == family_err,
				    "policy %d: family %d allowed (%d)",
				    (int)policy, f, errno);
			}
			if (fd >= 0)
				close(fd);
		}
		CHECK(syscall(SYS_personality, 8 /* PER_LINUX32 */) == -1 &&
		    errno == EPERM);
		/* The model and fs roles need no personality at all. */
		if (policy == FILTER_MODEL || policy == FILTER_FS)
			CHECK(syscall(SYS_personality, 0) == -1 &&
			    errno == EPERM);
		else
			CHECK(syscall(SYS_personality, 0) >= 0);
		_exit(0);
	}
	CHECK(waitpid(pid, &st, 0) == pid);
	CHECKF(WIFEXITED(st) && WEXITSTATUS(st) == 0, "policy %d child: %d",
	    (int)policy, st);
	/* A foreign-architecture call kills the whole process. */
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		if (jt_install(policy, getpid()) != 0)
			_exit(3);
		syscall(SYS_getpid | 0x40000000);
		_exit(0);
	}
	CHECK(waitpid(pid, &st, 0) == pid);
	CHECKF(WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS,
	    "policy %d: x32 call not killed (%d)", (int)policy, st);
}

/* jt_listen_tcp - a listener on 127.0.0.1 (non-blocking). */
int
jt_listen_tcp(int type, int *port)
{
	struct sockaddr_in a;
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, type | SOCK_NONBLOCK, 0);

	CHECK(fd >= 0);
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	CHECK(bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0);
	if (type == SOCK_STREAM)
		CHECK(listen(fd, 8) == 0);
	CHECK(getsockname(fd, (struct sockaddr *)&a, &len) == 0);
	*port = ntohs(a.sin_port);
	return fd;
}
