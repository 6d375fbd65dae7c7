#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "path.h"
#include "xmalloc.h"

/* path_self_dir - the running program's directory (see path.h). */
char *
path_self_dir(const char *argv0)
{
	char exe[PATH_MAX];
	const char *slash;
	ssize_t r;

	r = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (r > 0) {
		exe[r] = '\0';
	} else if (argv0 != NULL && strchr(argv0, '/') != NULL &&
	    strlen(argv0) < sizeof(exe)) {
		snprintf(exe, sizeof(exe), "%s", argv0);
	} else {
		return xstrdup(".");
	}
	slash = strrchr(exe, '/');
	if (slash == exe)
		return xstrdup("/");
	return xstrndup(exe, (size_t)(slash - exe));
}

/* path_ends_with - whether dir's last components are tail. */
static int
path_ends_with(const char *dir, const char *tail)
{
	size_t n = strlen(dir), t = strlen(tail);

	return n > t && dir[n - t - 1] == '/' && strcmp(dir + n - t, tail) == 0;
}

/* path_is_dir - whether path names a directory. */
static int
path_is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* path_up - dir without its last n components (caller frees). */
static char *
path_up(const char *dir, int n)
{
	char *p = xstrdup(dir), *slash;

	while (n-- > 0 && (slash = strrchr(p, '/')) != NULL) {
		if (slash == p) {
			p[1] = '\0';
			break;
		}
		*slash = '\0';
	}
	return p;
}

/* path_libexec_dir - the helpers' directory (see path.h). */
char *
path_libexec_dir(const char *self_dir)
{
	char *prefix, *dir;

	if (!path_ends_with(self_dir, "bin"))
		return xstrdup(self_dir);
	prefix = path_up(self_dir, 1);
	dir = xasprintf(
	    "%s/%s", strcmp(prefix, "/") == 0 ? "" : prefix, PATH_LIBEXEC);
	free(prefix);
	if (path_is_dir(dir))
		return dir;
	free(dir);
	return xstrdup(self_dir);
}

/* path_try - dir/name when it is executable (caller frees), else NULL;
 * dir is added to where either way. */
static char *
path_try(const char *dir, const char *name, char *where, size_t wherelen)
{
	char *path;
	size_t used;

	if (where != NULL && wherelen > 0) {
		used = strlen(where);
		if (used + 1 < wherelen)
			snprintf(where + used, wherelen - used, "%s%s",
			    used > 0 ? ", " : "", dir);
	}
	path = xasprintf("%s/%s", dir, name);
	if (access(path, X_OK) == 0)
		return path;
	free(path);
	return NULL;
}

/* path_program - find a fellow program (see path.h). */
char *
path_program(const char *self_dir, const char *dir_env, const char *name,
    char *where, size_t wherelen)
{
	char *path = NULL, *dir = NULL, *prefix;

	if (where != NULL && wherelen > 0)
		where[0] = '\0';
	if (dir_env != NULL && dir_env[0] != '\0' &&
	    (path = path_try(dir_env, name, where, wherelen)) != NULL)
		return path;
	if ((path = path_try(self_dir, name, where, wherelen)) != NULL)
		return path;
	if (path_ends_with(self_dir, "bin")) {
		dir = path_libexec_dir(self_dir);
		if (strcmp(dir, self_dir) != 0)
			path = path_try(dir, name, where, wherelen);
	} else if (path_ends_with(self_dir, PATH_LIBEXEC)) {
		prefix = path_up(self_dir, 2);
		dir =
		    xasprintf("%s/bin", strcmp(prefix, "/") == 0 ? "" : prefix);
		free(prefix);
		path = path_try(dir, name, where, wherelen);
	}
	free(dir);
	return path;
}
