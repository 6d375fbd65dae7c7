#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

/* The child reports its failure text to the parent through this pipe. */
static int harness_report_fd = -1;
static char harness_dir[256];

/* harness_write_report - send the reason for a failure or skip upstream. */
static void
harness_write_report(char tag, const char *fmt, va_list ap)
{
	char text[1024];
	int n;

	text[0] = tag;
	n = vsnprintf(text + 1, sizeof(text) - 1, fmt, ap);
	if (n < 0)
		n = 0;
	if ((size_t)n >= sizeof(text) - 1)
		n = (int)sizeof(text) - 2;
	if (harness_report_fd >= 0)
		(void)write(harness_report_fd, text, (size_t)n + 1);
	else
		fprintf(stderr, "%.*s\n", n, text + 1);
}

/* harness_fail - report a failed check from inside a test; never returns. */
void
harness_fail(const char *file, int line, const char *fmt, ...)
{
	char what[1024], text[1400];
	va_list ap;
	int n;

	va_start(ap, fmt);
	(void)vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	n = snprintf(text, sizeof(text), "F%s:%d: %s", file, line, what);
	if (n < 0)
		n = 0;
	if ((size_t)n >= sizeof(text))
		n = (int)sizeof(text) - 1;
	if (harness_report_fd >= 0)
		(void)write(harness_report_fd, text, (size_t)n);
	else
		fprintf(stderr, "%s\n", text + 1);
	fflush(stdout);
	fflush(stderr);
	_exit(1);
}

/* harness_skip - end the test as skipped, with a reason. */
void
harness_skip(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	harness_write_report('S', fmt, ap);
	va_end(ap);
	fflush(stdout);
	_exit(77);
}

/* harness_tmpdir - a fresh directory removed after the test; borrowed. */
const char *
harness_tmpdir(void)
{
	const char *base;

	if (harness_dir[0] != '\0')
		return harness_dir;
	base = getenv("TMPDIR");
	if (base == NULL || base[0] == '\0')
		base = "/tmp";
	(void)snprintf(
	    harness_dir, sizeof(harness_dir), "%s/shiro-test-XXXXXX", base);
	if (mkdtemp(harness_dir) == NULL) {
		harness_dir[0] = '\0';
		harness_fail(
		    __FILE__, __LINE__, "mkdtemp: %s", strerror(errno));
	}
	return harness_dir;
}

/* harness_rm - nftw callback that removes one entry. */
static int
harness_rm(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	(void)remove(path);
	return 0;
}

/* harness_run_one - fork, run one test with its time limit, print its line. */
static int
harness_run_one(const struct harness_test *t)
{
	unsigned timeout = t->timeout_s != 0 ? t->timeout_s : 60;
	char report[1401];
	int fds[2], status;
	ssize_t n;
	size_t got;
	pid_t pid, w;
	time_t start;

	if (pipe2(fds, O_CLOEXEC) != 0) {
		printf("FAIL %s: pipe: %s\n", t->name, strerror(errno));
		return 1;
	}
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		printf("FAIL %s: fork: %s\n", t->name, strerror(errno));
		return 1;
	}
	if (pid == 0) {
		close(fds[0]);
		harness_report_fd = fds[1];
		/* A new process group, so a timeout kills what the test spawned. */
		(void)setpgid(0, 0);
		t->fn();
		fflush(stdout);
		_exit(0);
	}
	close(fds[1]);
	(void)setpgid(pid, pid);
	start = time(NULL);
	got = 0;
	report[0] = '\0';
	for (;;) {
		w = waitpid(pid, &status, WNOHANG);
		if (w == pid)
			break;
		if (time(NULL) - start >= (time_t)timeout) {
			(void)kill(-pid, SIGKILL);
			(void)kill(pid, SIGKILL);
			(void)waitpid(pid, &status, 0);
			close(fds[0]);
			printf("FAIL %s: timed out after %u s\n", t->name,
			    timeout);
			return 1;
		}
		usleep(2000);
	}
	/* Kill anything the test left behind in its group. */
	(void)kill(-pid, SIGKILL);
	while (got < sizeof(report) - 1 &&
	    (n = read(fds[0], report + got, sizeof(report) - 1 - got)) > 0)
		got += (size_t)n;
	report[got] = '\0';
	close(fds[0]);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && got == 0) {
		printf("PASS %s\n", t->name);
		return 0;
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 77 &&
	    report[0] == 'S') {
		printf("SKIP %s: %s\n", t->name, report + 1);
		return 0;
	}
	if (got > 0 && report[0] == 'F')
		printf("FAIL %s: %s\n", t->name, report + 1);
	else if (WIFSIGNALED(status))
		printf("FAIL %s: killed by signal %d\n", t->name,
		    WTERMSIG(status));
	else
		printf("FAIL %s: exit status %d\n", t->name,
		    WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	return 1;
}

/* harness_main - run the tests of one program; see harness.h. */
int
harness_main(const struct harness_test *tests, size_t n, int argc, char **argv)
{
	int failed = 0, i;
	size_t k;
	int want;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (k = 0; k < n; k++) {
		want = argc <= 1;
		for (i = 1; i < argc; i++)
			if (strcmp(argv[i], tests[k].name) == 0)
				want = 1;
		if (!want)
			continue;
		harness_dir[0] = '\0';
		/* The child makes the directory; the parent cannot see it. */
		{
			char pattern[256];
			const char *base = getenv("TMPDIR");
			if (base == NULL || base[0] == '\0')
				base = "/tmp";
			(void)snprintf(pattern, sizeof(pattern),
			    "%s/shiro-test-XXXXXX", base);
			if (mkdtemp(pattern) != NULL) {
				memcpy(harness_dir, pattern, sizeof(pattern));
			}
		}
		failed += harness_run_one(&tests[k]);
		if (harness_dir[0] != '\0')
			(void)nftw(
			    harness_dir, harness_rm, 16, FTW_DEPTH | FTW_PHYS);
		harness_dir[0] = '\0';
	}
	return failed != 0;
}
