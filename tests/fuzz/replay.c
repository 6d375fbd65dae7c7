/*
 * replay - run a fuzz target over its seeds, without libFuzzer.
 *
 * The ordinary build links each target tests/fuzz/fuzz_NAME.c with this
 * main instead of libFuzzer's, as build/tests/fuzz_NAME, and make check
 * runs it: every file of tests/fuzz/corpus/NAME/ (or of the directories
 * given as arguments) goes through LLVMFuzzerTestOneInput once, each in
 * a child process with a time limit, so the seeds and every input that
 * once broke a parser are run by the suite (and under make asan).  One
 * line per program: "PASS fuzz_NAME: N inputs", or one FAIL per input
 * that crashed, broke a check (panic) or hung.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proto/buf.h"
#include "proto/xmalloc.h"
#include "tests/fuzz/fuzz_util.h"

#define REPLAY_TIMEOUT_S 60 /* one input, under ASan on a busy machine */
#define REPLAY_MAX (1 << 20) /* bytes of one input */

/* replay_read - the whole of path into b; -1 when it cannot be read. */
static int
replay_read(const char *path, struct buf *b)
{
	char chunk[65536];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	while ((n = read(fd, chunk, sizeof(chunk))) > 0 && b->len < REPLAY_MAX)
		buf_add(b, chunk, (size_t)n);
	close(fd);
	return n < 0 || b->len > REPLAY_MAX ? -1 : 0;
}

/* replay_one - run one input in a child; 0 when it passed. */
static int
replay_one(const char *prog, const char *path)
{
	struct buf b = BUF_INIT;
	int status;
	pid_t pid;

	if (replay_read(path, &b) != 0) {
		printf("FAIL %s: %s: cannot be read\n", prog, path);
		buf_free(&b);
		return 1;
	}
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		printf("FAIL %s: fork: %s\n", prog, strerror(errno));
		buf_free(&b);
		return 1;
	}
	if (pid == 0) {
		alarm(REPLAY_TIMEOUT_S);
		LLVMFuzzerTestOneInput((const uint8_t *)b.data, b.len);
		exit(0);
	}
	buf_free(&b);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			printf("FAIL %s: waitpid: %s\n", prog, strerror(errno));
			return 1;
		}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
		printf("FAIL %s: %s: still running after %d s\n", prog, path,
		    REPLAY_TIMEOUT_S);
	else if (WIFSIGNALED(status))
		printf("FAIL %s: %s: killed by signal %d (see above)\n", prog,
		    path, WTERMSIG(status));
	else
		printf("FAIL %s: %s: exit status %d (see above)\n", prog, path,
		    WEXITSTATUS(status));
	return 1;
}

/* replay_cmp - qsort order of names. */
static int
replay_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* replay_dir - every regular file of dir, in name order; counts them. */
static int
replay_dir(const char *prog, const char *dir, size_t *np)
{
	char **names = NULL, *path;
	size_t n = 0, cap = 0, i;
	struct dirent *d;
	struct stat st;
	int failed = 0;
	DIR *dp = opendir(dir);

	if (dp == NULL) {
		printf("FAIL %s: %s: %s\n", prog, dir, strerror(errno));
		return 1;
	}
	while ((d = readdir(dp)) != NULL) {
		if (d->d_name[0] == '.')
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			names = xreallocarray(names, cap, sizeof(*names));
		}
		names[n++] = xstrdup(d->d_name);
	}
	closedir(dp);
	qsort(names, n, sizeof(*names), replay_cmp);
	for (i = 0; i < n; i++) {
		path = xasprintf("%s/%s", dir, names[i]);
		if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
			failed |= replay_one(prog, path);
			(*np)++;
		}
		free(path);
		free(names[i]);
	}
	free(names);
	return failed;
}

/* main - replay the seeds of the target this program was built from. */
int
main(int argc, char **argv)
{
	char *self = xstrdup(argv[0]), *prog = basename(self), *dir;
	size_t n = 0;
	int failed = 0, i;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (strncmp(prog, "fuzz_", 5) != 0) {
		printf("FAIL %s: not named fuzz_NAME\n", prog);
		return 1;
	}
	if (argc > 1) {
		for (i = 1; i < argc; i++)
			failed |= replay_dir(prog, argv[i], &n);
	} else {
		dir = xasprintf("tests/fuzz/corpus/%s", prog + 5);
		failed = replay_dir(prog, dir, &n);
		free(dir);
	}
	if (n == 0) {
		printf("FAIL %s: no seeds\n", prog);
		failed = 1;
	}
	if (!failed)
		printf("PASS %s: %zu inputs\n", prog, n);
	free(self);
	return failed;
}
