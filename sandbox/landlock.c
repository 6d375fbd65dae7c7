/*
 * landlock.c - Landlock rules, through the raw system calls.
 *
 * Debian's headers predate the newer Landlock ABIs, so the access bits
 * and the ruleset attribute are spelled out here.  Only system calls:
 * this runs in the jail's child after clone().
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "proto/err.h"

#include "landlock.h"

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule 445
#define SYS_landlock_restrict_self 446
#endif

#define LL_CREATE_VERSION (1u << 0)
#define LL_RULE_PATH_BENEATH 1

/* The file access rights, by the ABI that brought them. */
#define LL_FS_EXECUTE (1ull << 0)
#define LL_FS_WRITE_FILE (1ull << 1)
#define LL_FS_READ_FILE (1ull << 2)
#define LL_FS_READ_DIR (1ull << 3)
#define LL_FS_ABI1 ((1ull << 13) - 1)
#define LL_FS_REFER (1ull << 13) /* ABI 2 */
#define LL_FS_TRUNCATE (1ull << 14) /* ABI 3 */
#define LL_FS_IOCTL_DEV (1ull << 15) /* ABI 5 */
#define LL_NET_BIND_TCP (1ull << 0) /* ABI 4 */
#define LL_NET_CONNECT_TCP (1ull << 1) /* ABI 4 */
#define LL_SCOPE_ABSTRACT_UNIX (1ull << 0) /* ABI 6 */
#define LL_SCOPE_SIGNAL (1ull << 1) /* ABI 6 */

/* The rights that make sense on a file rather than a directory. */
#define LL_FS_FILE_RIGHTS \
	(LL_FS_EXECUTE | LL_FS_WRITE_FILE | LL_FS_READ_FILE | LL_FS_TRUNCATE | \
	    LL_FS_IOCTL_DEV)

struct landlock_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net;
	uint64_t scoped;
};

struct landlock_beneath {
	uint64_t allowed_access;
	int32_t parent_fd;
} __attribute__((packed));

/* landlock_abi - the kernel's Landlock ABI version, 0 when absent. */
int
landlock_abi(void)
{
	long v;

	v = syscall(SYS_landlock_create_ruleset, NULL, 0, LL_CREATE_VERSION);
	return v > 0 ? (int)v : 0;
}

/* landlock_fs_rights - every file right the kernel's ABI knows. */
static uint64_t
landlock_fs_rights(int abi)
{
	uint64_t r = LL_FS_ABI1;

	if (abi >= 2)
		r |= LL_FS_REFER;
	if (abi >= 3)
		r |= LL_FS_TRUNCATE;
	if (abi >= 5)
		r |= LL_FS_IOCTL_DEV;
	return r;
}

/* landlock_add - allow rights under path in ruleset rs; a missing path is
 * skipped. */
static int
landlock_add(int rs, const char *path, uint64_t rights)
{
	struct landlock_beneath pb;
	struct stat st;
	int fd, rc;

	fd = open(path, O_PATH | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -SHIRO_ERR_IO;
	if (fstat(fd, &st) != 0) {
		close(fd);
		return -SHIRO_ERR_IO;
	}
	if (!S_ISDIR(st.st_mode))
		rights &= LL_FS_FILE_RIGHTS;
	pb.allowed_access = rights;
	pb.parent_fd = fd;
	rc = (int)syscall(
	    SYS_landlock_add_rule, rs, LL_RULE_PATH_BENEATH, &pb, 0);
	close(fd);
	return rc == 0 ? 0 : -SHIRO_ERR_FAILED;
}

/* landlock_restrict - restrict the calling thread to ro[] and rw[]. */
int
landlock_restrict(const char *const *ro, const char *const *rw, int flags)
{
	struct landlock_attr attr;
	uint64_t all, read;
	size_t size;
	int abi, rs, rc = -SHIRO_ERR_FAILED;

	abi = landlock_abi();
	if (abi <= 0)
		return 0;
	all = landlock_fs_rights(abi);
	read = LL_FS_READ_FILE | LL_FS_READ_DIR;
	if (flags & LANDLOCK_RO_EXEC)
		read |= LL_FS_EXECUTE;
	memset(&attr, 0, sizeof(attr));
	attr.handled_access_fs = (flags & LANDLOCK_NO_FS) ? 0 : all;
	size = sizeof(uint64_t);
	if (abi >= 4) {
		size = 2 * sizeof(uint64_t);
		if (flags & LANDLOCK_NO_TCP)
			attr.handled_access_net =
			    LL_NET_BIND_TCP | LL_NET_CONNECT_TCP;
	}
	if (abi >= 6) {
		size = sizeof(attr);
		if (flags & LANDLOCK_SCOPE)
			attr.scoped = LL_SCOPE_ABSTRACT_UNIX | LL_SCOPE_SIGNAL;
	}
	if (attr.handled_access_fs == 0 && attr.handled_access_net == 0 &&
	    attr.scoped == 0)
		return 0;
	if (flags & LANDLOCK_NO_FS)
		ro = rw = NULL;
	rs = (int)syscall(SYS_landlock_create_ruleset, &attr, size, 0);
	if (rs < 0)
		return -SHIRO_ERR_FAILED;
	for (; ro != NULL && *ro != NULL; ro++)
		if (landlock_add(rs, *ro, read) != 0)
			goto out;
	for (; rw != NULL && *rw != NULL; rw++)
		if (landlock_add(rs, *rw, all) != 0)
			goto out;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		goto out;
	if (syscall(SYS_landlock_restrict_self, rs, 0) != 0)
		goto out;
	rc = 1;
out:
	close(rs);
	return rc;
}
