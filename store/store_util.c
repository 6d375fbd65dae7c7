/*
 * store_util.c - the helpers every file of the store uses: the reason of
 * the last failure, the checks before a call, the path of a day file and
 * a directory's fsync.  It depends on nothing else of the store, so the
 * other files depend on it and never on one another for these.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

#include "proto/err.h"
#include "proto/xmalloc.h"
#include "store_int.h"

/* store_fail - remember why a call failed and return its code. */
int
store_fail(struct store *s, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->err, sizeof(s->err), fmt, ap);
	va_end(ap);
	return code;
}

/* store_check - refuse use from another process or of a poisoned store. */
int
store_check(struct store *s, int writing)
{
	if (s->pid != getpid())
		return store_fail(s, -SHIRO_ERR_STATE,
		    "store used in a child process after fork");
	if (writing && s->read_only)
		return store_fail(s, -SHIRO_ERR_PERM, "store opened read-only");
	if (writing && s->poisoned)
		return -SHIRO_ERR_STATE; /* s->err keeps the first reason */
	return 0;
}

/* store_day_path - the file of one day. */
char *
store_day_path(const struct store *s, uint32_t day)
{
	return xasprintf("%s/%04u-%02u-%02u.jsonl", s->main, day / 10000,
	    day / 100 % 100, day % 100);
}

/* store_fsync_dir - make a directory's entries durable. */
int
store_fsync_dir(const char *path)
{
	int fd, ret = 0;

	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd == -1)
		return err_from_errno(errno);
	if (fsync(fd) != 0)
		ret = err_from_errno(errno);
	close(fd);
	return ret;
}
