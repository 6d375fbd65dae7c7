/*
 * try-syscall - make one system call and say how it went.
 *
 *	try-syscall NAME
 *
 * Prints "NAME ok" when the call succeeded, "NAME EPERM" (or another
 * errno name) when it failed, and exits 0; a call the seccomp filter
 * kills never prints.  Each call is made with arguments that would
 * succeed, or fail with a different errno, if nothing refused it, so
 * the answer tells the filter's refusal apart from an ordinary error.
 * The jail tests run this inside the jail.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/personality.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef TIOCLINUX
#define TIOCLINUX 0x541C
#endif

/* try_clone - clone with flags; the child exits at once. */
static long
try_clone(unsigned long flags)
{
	long pid = syscall(SYS_clone, flags | SIGCHLD, 0, 0, 0, 0);

	if (pid == 0)
		_exit(0);
	if (pid > 0)
		(void)waitpid((pid_t)pid, NULL, 0);
	return pid > 0 ? 0 : pid;
}

/* try_socket - socket(domain, type) and close it. */
static long
try_socket(unsigned long domain, int type)
{
	long fd = syscall(SYS_socket, domain, type, 0);

	if (fd >= 0)
		close((int)fd);
	return fd >= 0 ? 0 : -1;
}

/* try_i386 - getpid through the 32-bit entry point. */
static long
try_i386(void)
{
	long ret = 20; /* __NR_getpid on i386 */

#if defined(__x86_64__)
	__asm__ volatile("int $0x80" : "+a"(ret) : : "memory");
#endif
	return ret >= 0 ? 0 : (errno = (int)-ret, -1);
}

/* try_call - make the call named name; 0 or -1 with errno. */
static long
try_call(const char *name, int *known)
{
	char buf[16] = "x", in[16];
	struct iovec li = {in, sizeof(in)}, ri = {buf, sizeof(buf)};
	int fd;
	long rc;

	*known = 1;
	if (strcmp(name, "getpid") == 0)
		return syscall(SYS_getpid) > 0 ? 0 : -1;
	if (strcmp(name, "fork") == 0)
		return try_clone(0);
	if (strcmp(name, "open_write_tmp") == 0) {
		fd = open("/tmp/try-syscall.tmp", O_WRONLY | O_CREAT, 0600);
		if (fd < 0)
			return -1;
		close(fd);
		return unlink("/tmp/try-syscall.tmp");
	}
	if (strcmp(name, "ptrace") == 0)
		return ptrace(PTRACE_TRACEME, 0, NULL, NULL);
	if (strcmp(name, "process_vm_readv") == 0)
		return process_vm_readv(getpid(), &li, 1, &ri, 1, 0) < 0 ? -1
									 : 0;
	if (strcmp(name, "process_vm_writev") == 0)
		return process_vm_writev(getpid(), &ri, 1, &li, 1, 0) < 0 ? -1
									  : 0;
	if (strcmp(name, "mount") == 0)
		return syscall(SYS_mount, "none", "/tmp", "tmpfs", 0, NULL);
	if (strcmp(name, "umount2") == 0)
		return syscall(SYS_umount2, "/tmp", 2 /* MNT_DETACH */);
	if (strcmp(name, "pivot_root") == 0)
		return syscall(SYS_pivot_root, ".", ".");
	if (strcmp(name, "chroot") == 0)
		return chroot(".");
	if (strcmp(name, "open_tree") == 0) {
		/* Without OPEN_TREE_CLONE this needs no privilege at all. */
		rc = syscall(SYS_open_tree, AT_FDCWD, "/", 0);
		return rc >= 0 ? 0 : -1;
	}
	if (strcmp(name, "move_mount") == 0)
		return syscall(SYS_move_mount, -1, "", -1, "", 0);
	if (strcmp(name, "fsopen") == 0)
		return syscall(SYS_fsopen, "tmpfs", 0) >= 0 ? 0 : -1;
	if (strcmp(name, "fsconfig") == 0)
		return syscall(SYS_fsconfig, -1, 0, NULL, NULL, 0);
	if (strcmp(name, "fsmount") == 0)
		return syscall(SYS_fsmount, -1, 0, 0);
	if (strcmp(name, "fspick") == 0)
		return syscall(SYS_fspick, AT_FDCWD, "/", 0) >= 0 ? 0 : -1;
	if (strcmp(name, "mount_setattr") == 0)
		return syscall(SYS_mount_setattr, -1, "", 0, NULL, 0);
	if (strcmp(name, "unshare") == 0)
		return unshare(CLONE_NEWUSER);
	if (strcmp(name, "setns") == 0)
		return syscall(SYS_setns, -1, 0);
	if (strcmp(name, "clone_newuser") == 0)
		return try_clone(CLONE_NEWUSER);
	if (strcmp(name, "clone_newns") == 0)
		return try_clone(CLONE_NEWNS);
	if (strcmp(name, "clone_newnet") == 0)
		return try_clone(CLONE_NEWNET);
	if (strcmp(name, "clone3") == 0)
		return syscall(SYS_clone3, NULL, 0);
	if (strcmp(name, "keyctl") == 0)
		return syscall(SYS_keyctl, 0 /* GET_KEYRING_ID */,
			   -3 /* session */, 0) >= 0
		    ? 0
		    : -1;
	if (strcmp(name, "add_key") == 0)
		return syscall(SYS_add_key, "user", "shiro", "x", 1, -3) >= 0
		    ? 0
		    : -1;
	if (strcmp(name, "request_key") == 0)
		return syscall(SYS_request_key, "user", "shiro", NULL, 0);
	if (strcmp(name, "bpf") == 0)
		return syscall(SYS_bpf, -1, NULL, 0);
	if (strcmp(name, "perf_event_open") == 0)
		return syscall(SYS_perf_event_open, NULL, 0, -1, -1, 0);
	if (strcmp(name, "userfaultfd") == 0)
		return syscall(SYS_userfaultfd, 1 /* UFFD_USER_MODE_ONLY */) >=
			0
		    ? 0
		    : -1;
	if (strcmp(name, "io_uring_setup") == 0) {
		char params[120];
		memset(params, 0, sizeof(params));
		return syscall(SYS_io_uring_setup, 1, params) >= 0 ? 0 : -1;
	}
	if (strcmp(name, "kexec_load") == 0)
		return syscall(SYS_kexec_load, 0, 0, NULL, 0);
	if (strcmp(name, "init_module") == 0)
		return syscall(SYS_init_module, NULL, 0, "");
	if (strcmp(name, "finit_module") == 0)
		return syscall(SYS_finit_module, -1, "", 0);
	if (strcmp(name, "delete_module") == 0)
		return syscall(SYS_delete_module, "shiro", 0);
	if (strcmp(name, "personality_linux32") == 0)
		return syscall(SYS_personality, PER_LINUX32) >= 0 ? 0 : -1;
	if (strcmp(name, "personality_norandom") == 0)
		return syscall(SYS_personality, ADDR_NO_RANDOMIZE) >= 0 ? 0
									: -1;
	if (strcmp(name, "personality_linux") == 0)
		return syscall(SYS_personality, PER_LINUX) >= 0 ? 0 : -1;
	if (strcmp(name, "acct") == 0)
		return syscall(SYS_acct, NULL);
	if (strcmp(name, "swapoff") == 0)
		return syscall(SYS_swapoff, "/nonexistent");
	if (strcmp(name, "reboot") == 0)
		return syscall(SYS_reboot, 0, 0, 0, NULL);
	if (strcmp(name, "syslog") == 0)
		return syscall(SYS_syslog, 10 /* SIZE_BUFFER */, NULL, 0) >= 0
		    ? 0
		    : -1;
	if (strcmp(name, "open_by_handle_at") == 0)
		return syscall(SYS_open_by_handle_at, -1, NULL, 0);
	if (strcmp(name, "tiocsti") == 0 || strcmp(name, "tiocsti_hi") == 0 ||
	    strcmp(name, "tioclinux") == 0) {
		unsigned long req =
		    strcmp(name, "tioclinux") == 0 ? TIOCLINUX : TIOCSTI;
		if (strcmp(name, "tiocsti_hi") == 0)
			req |= 1ul << 32;
		/* On /dev/null the ioctl itself fails with ENOTTY. */
		fd = open("/dev/null", O_RDWR);
		rc = syscall(SYS_ioctl, fd, req, "x");
		close(fd);
		return rc;
	}
	if (strcmp(name, "socket_unix") == 0)
		return try_socket(AF_UNIX, SOCK_STREAM);
	if (strcmp(name, "socket_inet") == 0)
		return try_socket(AF_INET, SOCK_STREAM);
	if (strcmp(name, "socket_inet6") == 0)
		return try_socket(AF_INET6, SOCK_DGRAM);
	if (strcmp(name, "socket_netlink") == 0)
		return try_socket(AF_NETLINK, SOCK_RAW);
	if (strcmp(name, "socket_packet") == 0)
		return try_socket(AF_PACKET, SOCK_RAW);
	if (strcmp(name, "socket_inet_hi") == 0)
		return try_socket(AF_INET | (1ul << 32), SOCK_STREAM);
	if (strcmp(name, "x32") == 0)
		return syscall(SYS_getpid | 0x40000000);
	if (strcmp(name, "i386") == 0)
		return try_i386();
	*known = 0;
	return -1;
}

int
main(int argc, char **argv)
{
	int known;
	long rc;

	if (argc != 2) {
		fprintf(stderr, "usage: try-syscall NAME\n");
		return 2;
	}
	errno = 0;
	rc = try_call(argv[1], &known);
	if (!known) {
		fprintf(stderr, "try-syscall: unknown call %s\n", argv[1]);
		return 2;
	}
	if (rc >= 0)
		printf("%s ok\n", argv[1]);
	else
		printf("%s %s\n", argv[1],
		    strerrorname_np(errno) ? strerrorname_np(errno) : "E?");
	return 0;
}
