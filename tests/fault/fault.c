/*
 * fault.c - an LD_PRELOAD shim that makes one chosen call fail, for the
 * store's fault tests.  SHIRO_FAULT="CALL:PATTERN:N:KIND" makes the Nth
 * CALL (fsync, fdatasync, write or ftruncate) on a descriptor whose path
 * contains PATTERN fail, and for write every later write to it too:
 *
 *	eio     the call returns -1 with errno EIO
 *	enospc  the call returns -1 with errno ENOSPC
 *	short   write writes half its bytes and returns that count; the
 *	        next writes fail with ENOSPC (a disk that just filled up)
 *
 * Built without the project's flags: it is test scaffolding, loaded
 * into a test program only.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

static char fault_call[32], fault_pattern[256], fault_kind[16];
static long fault_n, fault_seen;
static int fault_ready, fault_fired;

/* fault_init - read SHIRO_FAULT once. */
static void
fault_init(void)
{
	const char *e;

	if (fault_ready)
		return;
	fault_ready = 1;
	e = getenv("SHIRO_FAULT");
	if (e == NULL ||
	    sscanf(e, "%31[^:]:%255[^:]:%ld:%15s", fault_call, fault_pattern,
		&fault_n, fault_kind) != 4)
		fault_call[0] = '\0';
}

/* fault_match - whether this call on fd is the one to fail (or, for a
 * write after a short one, one that fails too). */
static int
fault_match(const char *call, int fd)
{
	char link[64], path[512];
	ssize_t n;

	fault_init();
	if (fault_call[0] == '\0' || strcmp(call, fault_call) != 0)
		return 0;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, path, sizeof(path) - 1);
	if (n <= 0)
		return 0;
	path[n] = '\0';
	if (strstr(path, fault_pattern) == NULL)
		return 0;
	if (fault_fired && strcmp(call, "write") == 0)
		return 2;
	if (++fault_seen != fault_n)
		return 0;
	fault_fired = 1;
	return 1;
}

/* fault_errno - the errno of the configured kind. */
static int
fault_errno(void)
{
	return strcmp(fault_kind, "eio") == 0 ? EIO : ENOSPC;
}

/* fsync - fails when chosen. */
int
fsync(int fd)
{
	int (*real)(int) = (int (*)(int))dlsym(RTLD_NEXT, "fsync");

	if (fault_match("fsync", fd)) {
		errno = fault_errno();
		return -1;
	}
	return real(fd);
}

/* fdatasync - fails when chosen. */
int
fdatasync(int fd)
{
	int (*real)(int) = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");

	if (fault_match("fdatasync", fd)) {
		errno = fault_errno();
		return -1;
	}
	return real(fd);
}

/* ftruncate - fails when chosen. */
int
ftruncate(int fd, off_t len)
{
	int (*real)(int, off_t) =
	    (int (*)(int, off_t))dlsym(RTLD_NEXT, "ftruncate");

	if (fault_match("ftruncate", fd)) {
		errno = fault_errno();
		return -1;
	}
	return real(fd, len);
}

/* write - short or failing when chosen. */
ssize_t
write(int fd, const void *buf, size_t count)
{
	ssize_t (*real)(int, const void *, size_t) =
	    (ssize_t(*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
	int m = fault_match("write", fd);

	if (m == 1 && strcmp(fault_kind, "short") == 0 && count > 1)
		return real(fd, buf, count / 2);
	if (m != 0) {
		errno = strcmp(fault_kind, "eio") == 0 ? EIO : ENOSPC;
		return -1;
	}
	return real(fd, buf, count);
}
