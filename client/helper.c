#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proto/buf.h"
#include "proto/path.h"
#include "proto/xmalloc.h"

#include "helper.h"

/* helper_path - the path of helper name, or NULL (see helper.h). */
char *
helper_path(const struct shiro *s, const char *name)
{
	return path_program(
	    s->self_dir, getenv("SHIRO_LIBEXEC"), name, NULL, 0);
}

/* helper_find - the path of helper name, or NULL (see helper.h). */
char *
helper_find(const struct shiro *s, const char *name)
{
	char where[2048], *path;

	path = path_program(
	    s->self_dir, getenv("SHIRO_LIBEXEC"), name, where, sizeof(where));
	if (path != NULL)
		return path;
	fprintf(stderr,
	    "shiro: the helper program %s was not found in %s.\n"
	    "Build it (make) or install shiro (make install), or point "
	    "SHIRO_LIBEXEC at the directory that holds it.\n",
	    name, where);
	return NULL;
}

/* helper_exec - replace this process with helper name (see helper.h). */
int
helper_exec(const struct shiro *s, const char *name, char **argv)
{
	char *path;

	path = helper_find(s, name);
	if (path == NULL)
		return SHIRO_EXIT_NO_HELPER;
	argv[0] = path;
	fflush(stdout);
	execv(path, argv);
	fprintf(stderr, "shiro: cannot run %s: %s\n", path, strerror(errno));
	free(path);
	return errno == ENOENT || errno == EACCES ? SHIRO_EXIT_NO_HELPER
						  : SHIRO_EXIT_FAIL;
}

/* helper_run - run a helper and wait for it (see helper.h). */
int
helper_run(
    const struct shiro *s, const char *name, char **argv, struct buf *out)
{
	char chunk[4096], *path;
	int fds[2] = {-1, -1}, st = 0;
	ssize_t r;
	pid_t pid;

	path = helper_find(s, name);
	if (path == NULL)
		return SHIRO_EXIT_NO_HELPER;
	argv[0] = path;
	fflush(stdout);
	if (out != NULL && pipe2(fds, O_CLOEXEC) != 0) {
		free(path);
		return SHIRO_EXIT_FAIL;
	}
	pid = fork();
	if (pid == 0) {
		if (out != NULL)
			dup2(fds[1], STDOUT_FILENO);
		execv(path, argv);
		fprintf(stderr, "shiro: cannot run %s: %s\n", path,
		    strerror(errno));
		_exit(SHIRO_EXIT_NO_HELPER);
	}
	if (out != NULL) {
		close(fds[1]);
		while (
		    pid > 0 && (r = read(fds[0], chunk, sizeof(chunk))) != 0) {
			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0)
				break;
			if (out->len < (1u << 20))
				buf_add(out, chunk, (size_t)r);
		}
		close(fds[0]);
	}
	free(path);
	if (pid < 0)
		return SHIRO_EXIT_FAIL;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(st) ? WEXITSTATUS(st) : SHIRO_EXIT_FAIL;
}
