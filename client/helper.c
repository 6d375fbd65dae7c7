#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
