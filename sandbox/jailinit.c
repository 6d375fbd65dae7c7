/*
 * jailinit.c - inside the jail: mounts, pivot_root, the init process and
 * the command's lockdown before execve.
 *
 * Runs in the child of clone() with new user, mount, pid, ipc, uts,
 * cgroup (and usually network) namespaces.  System calls only.  Every
 * mount is made from file descriptors with the new mount API, so no
 * mount ever follows a symlink that the workspace's owner (or the
 * model) planted: sources are opened with AT_SYMLINK_NOFOLLOW, paths
 * inside the workspace with openat2(RESOLVE_BENEATH |
 * RESOLVE_NO_SYMLINKS), and targets are directories we created
 * ourselves or those same file descriptors.
 */
#include <errno.h>
#include <sched.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <linux/openat2.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "caps.h"
#include "filter.h"
#include "jailinit.h"
#include "landlock.h"

#ifndef MS_REC
#define MS_REC 16384
#define MS_PRIVATE (1 << 18)
#endif
#ifndef MNT_DETACH
#define MNT_DETACH 2
#endif

/* The device nodes bound into the jail's /dev. */
static const char *const jailinit_devs[] = {
    "null", "zero", "full", "random", "urandom"};
#define JAILINIT_NDEVS (sizeof(jailinit_devs) / sizeof(jailinit_devs[0]))

/* jailinit_fail - report step and errno to the parent and exit. */
static void __attribute__((noreturn))
jailinit_fail(struct jailinit_plan *p, const char *step)
{
	struct jailinit_err e;
	size_t n;

	memset(&e, 0, sizeof(e));
	e.err = errno;
	n = strlen(step);
	if (n >= sizeof(e.step))
		n = sizeof(e.step) - 1;
	memcpy(e.step, step, n);
	(void)write(p->err_w, &e, sizeof(e));
	_exit(JAIL_EXIT_SETUP);
}

/* jailinit_write_file - write text into an existing file at path. */
int
jailinit_write_file(const char *path, const char *text)
{
	size_t n = strlen(text);
	int fd, rc;

	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	rc = write(fd, text, n) == (ssize_t)n ? 0 : -1;
	close(fd);
	return rc;
}

/* jailinit_open_tree - open_tree(2). */
int
jailinit_open_tree(int dfd, const char *path, unsigned flags)
{
	return (int)syscall(SYS_open_tree, dfd, path, flags);
}

/* jailinit_move - attach the detached mount tree at (dfd, path). */
int
jailinit_move(int tree, int dfd, const char *path)
{
	unsigned flags = MOVE_MOUNT_F_EMPTY_PATH;

	if (path[0] == '\0')
		flags |= MOVE_MOUNT_T_EMPTY_PATH;
	return (int)syscall(SYS_move_mount, tree, "", dfd, path, flags);
}

/* jailinit_setattr - set mount attributes on tree (recursively if rec). */
int
jailinit_setattr(int tree, uint64_t set, int rec)
{
	struct mount_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.attr_set = set;
	return (int)syscall(SYS_mount_setattr, tree, "",
	    AT_EMPTY_PATH | (rec ? AT_RECURSIVE : 0), &attr, sizeof(attr));
}

/* jailinit_fs - a new detached mount of fstype with options opts
 * ("key=value,key=value"), mount attributes attr. */
int
jailinit_fs(const char *fstype, const char *opts, unsigned attr)
{
	char buf[128], *key, *val, *next;
	int fs, mnt;

	fs = (int)syscall(SYS_fsopen, fstype, FSOPEN_CLOEXEC);
	if (fs < 0)
		return -1;
	if (opts != NULL) {
		size_t n = strlen(opts);
		if (n >= sizeof(buf)) {
			close(fs);
			errno = E2BIG;
			return -1;
		}
		memcpy(buf, opts, n + 1);
		for (key = buf; key != NULL; key = next) {
			next = strchr(key, ',');
			if (next != NULL)
				*next++ = '\0';
			val = strchr(key, '=');
			if (val != NULL)
				*val++ = '\0';
			if (syscall(SYS_fsconfig, fs,
				val != NULL ? FSCONFIG_SET_STRING
					    : FSCONFIG_SET_FLAG,
				key, val, 0) != 0) {
				close(fs);
				return -1;
			}
		}
	}
	if (syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) !=
	    0) {
		close(fs);
		return -1;
	}
	mnt = (int)syscall(SYS_fsmount, fs, FSMOUNT_CLOEXEC, attr);
	close(fs);
	return mnt;
}

/* jailinit_beneath - open path beneath dfd without following any symlink
 * or leaving dfd's tree; O_PATH. */
static int
jailinit_beneath(int dfd, const char *path)
{
	struct open_how how;

	memset(&how, 0, sizeof(how));
	how.flags = O_PATH | O_CLOEXEC;
	how.resolve =
	    RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
	return (int)syscall(SYS_openat2, dfd, path, &how, sizeof(how));
}

/* jailinit_mkpath - create the directories of abs (absolute) under root
 * and return an O_PATH fd of the parent of its last component, whose
 * name is put in *last.  Never follows a symlink. */
static int
jailinit_mkpath(
    struct jailinit_plan *p, int root, const char *abs, const char **last)
{
	char comp[256];
	const char *s = abs, *e;
	int dfd, fd;
	size_t n;

	dfd = fcntl(root, F_DUPFD_CLOEXEC, 3);
	if (dfd < 0)
		jailinit_fail(p, "dup root");
	for (;;) {
		while (*s == '/')
			s++;
		e = strchr(s, '/');
		if (e == NULL || e[strspn(e, "/")] == '\0') {
			*last = s;
			return dfd;
		}
		n = (size_t)(e - s);
		if (n >= sizeof(comp)) {
			errno = ENAMETOOLONG;
			jailinit_fail(p, "workspace path");
		}
		memcpy(comp, s, n);
		comp[n] = '\0';
		if (mkdirat(dfd, comp, 0755) != 0 && errno != EEXIST)
			jailinit_fail(p, "mkdir for the workspace");
		fd = openat(
		    dfd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			jailinit_fail(p, "open for the workspace");
		close(dfd);
		dfd = fd;
		s = e;
	}
}

/* jailinit_maps - map our own uid and gid into the new user namespace. */
static void
jailinit_maps(struct jailinit_plan *p)
{
	if (jailinit_write_file("/proc/self/setgroups", "deny") != 0 &&
	    errno != ENOENT)
		jailinit_fail(p, "write setgroups");
	if (jailinit_write_file("/proc/self/uid_map", p->uid_map) != 0)
		jailinit_fail(p, "write uid_map");
	if (jailinit_write_file("/proc/self/gid_map", p->gid_map) != 0)
		jailinit_fail(p, "write gid_map");
}

/* jailinit_cover - cover the object at fd with an empty read-only
 * directory, or /dev/null for a file (see jailinit.h). */
int
jailinit_cover(int fd, struct jailinit_covers *cov, const char **stepp)
{
	struct stat st;
	int m, *first;

	if (fstat(fd, &st) != 0) {
		*stepp = "stat a hidden path";
		return -1;
	}
	first = S_ISDIR(st.st_mode) ? &cov->dir : &cov->file;
	if (*first >= 0)
		m = jailinit_open_tree(*first, "",
		    OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
	else if (S_ISDIR(st.st_mode))
		m = jailinit_fs("tmpfs", "size=4k,mode=000",
		    MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
			MOUNT_ATTR_NOEXEC);
	else
		m = jailinit_open_tree(
		    cov->devdir, "null", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
	if (m < 0) {
		*stepp = "make a cover for a hidden path";
		return -1;
	}
	if (*first < 0 && !S_ISDIR(st.st_mode) &&
	    jailinit_setattr(m, MOUNT_ATTR_RDONLY, 0) != 0) {
		*stepp = "make a cover read-only";
		close(m);
		return -1;
	}
	if (jailinit_move(m, fd, "") != 0) {
		*stepp = "cover a hidden path";
		close(m);
		return -1;
	}
	if (*first < 0)
		*first = m;
	else
		close(m);
	return 0;
}

/* jailinit_hide - cover the object at fd (inside the jail), or fail. */
static void
jailinit_hide(struct jailinit_plan *p, int fd, struct jailinit_covers *cov)
{
	const char *step = "";

	if (jailinit_cover(fd, cov, &step) != 0)
		jailinit_fail(p, step);
}

/* jailinit_workspace - bind the workspace at its own path, re-bind the
 * read-only subpaths, cover the hidden ones. */
static void
jailinit_workspace(
    struct jailinit_plan *p, int root, int wstree, struct jailinit_covers *cov)
{
	const char *last;
	size_t i;
	int parent, ws, fd, t;

	parent = jailinit_mkpath(p, root, p->ws, &last);
	if (mkdirat(parent, last, 0755) != 0 && errno != EEXIST)
		jailinit_fail(p, "mkdir the workspace");
	if (jailinit_move(wstree, parent, last) != 0)
		jailinit_fail(p, "bind the workspace");
	close(wstree);
	ws =
	    openat(parent, last, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (ws < 0)
		jailinit_fail(p, "open the bound workspace");
	close(parent);
	for (i = 0; i < p->nro; i++) {
		/* The parent resolved every symlink; one here means the
		 * tree changed under us: refuse rather than guess.  Gone
		 * meanwhile: nothing to protect. */
		fd = jailinit_beneath(ws, p->ro_sub[i]);
		if (fd < 0) {
			if (errno == ENOENT)
				continue;
			jailinit_fail(p, "open a read-only subpath");
		}
		t = jailinit_open_tree(fd, "",
		    OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH |
			AT_RECURSIVE);
		if (t < 0)
			jailinit_fail(p, "clone a read-only subpath");
		if (jailinit_setattr(t,
			MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID |
			    MOUNT_ATTR_NODEV,
			1) != 0)
			jailinit_fail(p, "make a subpath read-only");
		if (jailinit_move(t, fd, "") != 0)
			jailinit_fail(p, "re-bind a subpath read-only");
		close(t);
		close(fd);
	}
	for (i = 0; i < p->nhide; i++) {
		fd = jailinit_beneath(ws, p->hide_rel[i]);
		if (fd < 0) {
			if (errno == ENOENT)
				continue;
			jailinit_fail(p, "open a hidden path");
		}
		jailinit_hide(p, fd, cov);
		close(fd);
	}
	close(ws);
}

/* jailinit_dev - a small tmpfs /dev with the harmless device nodes bound
 * from the host (a user namespace may not create device nodes). */
static int
jailinit_dev(struct jailinit_plan *p, int root, const int *devtree)
{
	static const char *const links[][2] = {{"fd", "/proc/self/fd"},
	    {"stdin", "/proc/self/fd/0"}, {"stdout", "/proc/self/fd/1"},
	    {"stderr", "/proc/self/fd/2"}};
	size_t i;
	int dev, fd;

	if (mkdirat(root, "dev", 0755) != 0)
		jailinit_fail(p, "mkdir /dev");
	dev = jailinit_fs("tmpfs", "size=64k,mode=755",
	    MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC);
	if (dev < 0)
		jailinit_fail(p, "mount /dev");
	if (jailinit_move(dev, root, "dev") != 0)
		jailinit_fail(p, "attach /dev");
	for (i = 0; i < JAILINIT_NDEVS; i++) {
		fd = openat(dev, jailinit_devs[i],
		    O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0666);
		if (fd < 0)
			jailinit_fail(p, "create a device mount point");
		close(fd);
		if (jailinit_move(devtree[i], dev, jailinit_devs[i]) != 0)
			jailinit_fail(p, "bind a device");
		close(devtree[i]);
	}
	for (i = 0; i < sizeof(links) / sizeof(links[0]); i++)
		if (symlinkat(links[i][1], dev, links[i][0]) != 0)
			jailinit_fail(p, "symlink in /dev");
	/* POSIX shared memory goes to the private /tmp; /dev itself is
	 * read-only, so nothing can be created next to the nodes. */
	if (symlinkat("/tmp", dev, "shm") != 0)
		jailinit_fail(p, "symlink /dev/shm");
	if (jailinit_setattr(dev,
		MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC,
		0) != 0)
		jailinit_fail(p, "make /dev read-only");
	return dev;
}

/* jailinit_root - build the new root and pivot into it. */
static void
jailinit_root(struct jailinit_plan *p)
{
	int systree[JAILINIT_MAX_SYS], devtree[JAILINIT_NDEVS];
	int etchide[16];
	struct jailinit_covers cov = {-1, -1, -1};
	int root, tmp, proc, dev, wstree = -1, resolvtree = -1, fd;
	size_t i, nhide = 0;

	if (syscall(SYS_mount, NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
		jailinit_fail(p, "make / private");

	/* Open every source first, before anything covers the host's view
	 * (the workspace may live under the host's /tmp). */
	for (i = 0; i < p->nsys; i++) {
		systree[i] = -1;
		if (p->sys[i].is_link)
			continue;
		char path[24] = "/";
		memcpy(path + 1, p->sys[i].name, strlen(p->sys[i].name) + 1);
		systree[i] = jailinit_open_tree(AT_FDCWD, path,
		    OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE |
			AT_SYMLINK_NOFOLLOW);
		if (systree[i] < 0)
			jailinit_fail(p, "clone a system directory");
		if (jailinit_setattr(systree[i],
			MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID |
			    MOUNT_ATTR_NODEV,
			1) != 0)
			jailinit_fail(p, "make a system directory read-only");
	}
	for (i = 0; i < JAILINIT_NDEVS; i++) {
		char path[24] = "/dev/";
		memcpy(
		    path + 5, jailinit_devs[i], strlen(jailinit_devs[i]) + 1);
		devtree[i] = jailinit_open_tree(AT_FDCWD, path,
		    OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_SYMLINK_NOFOLLOW);
		if (devtree[i] < 0)
			jailinit_fail(p, "clone a device node");
	}
	if (p->resolv_dir[0] != '\0') {
		resolvtree = jailinit_open_tree(AT_FDCWD, p->resolv_dir,
		    OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE |
			AT_SYMLINK_NOFOLLOW);
		if (resolvtree < 0 ||
		    jailinit_setattr(resolvtree,
			MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID |
			    MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC,
			1) != 0)
			jailinit_fail(p, "clone the resolver directory");
	}
	if (p->ws != NULL) {
		wstree = jailinit_open_tree(AT_FDCWD, p->ws,
		    OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE |
			AT_SYMLINK_NOFOLLOW);
		if (wstree < 0)
			jailinit_fail(p, "clone the workspace");
		if (jailinit_setattr(
			wstree, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, 1) != 0)
			jailinit_fail(p, "set workspace mount flags");
	}

	/* The new root: a small tmpfs, attached over our private copy of
	 * the host's /tmp only so that pivot_root has a mount to use. */
	root = jailinit_fs(
	    "tmpfs", "size=64k,mode=755", MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
	if (root < 0)
		jailinit_fail(p, "mount the new root");
	if (jailinit_move(root, AT_FDCWD, "/tmp") != 0)
		jailinit_fail(p, "attach the new root");
	for (i = 0; i < p->nsys; i++) {
		if (p->sys[i].is_link) {
			if (symlinkat(p->sys[i].link, root, p->sys[i].name) !=
			    0)
				jailinit_fail(p, "symlink a system directory");
			continue;
		}
		if (mkdirat(root, p->sys[i].name, 0755) != 0)
			jailinit_fail(p, "mkdir a system directory");
		if (jailinit_move(systree[i], root, p->sys[i].name) != 0)
			jailinit_fail(p, "bind a system directory");
		close(systree[i]);
	}
	/* Secrets in /etc that only root can read: when the jail runs as
	 * root (uid 0 owns them), cover them. */
	for (i = 0; p->hide_etc != NULL && p->hide_etc[i] != NULL &&
	     nhide < sizeof(etchide) / sizeof(etchide[0]);
	     i++) {
		fd = openat(
		    root, p->hide_etc[i], O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (fd >= 0)
			etchide[nhide++] = fd;
	}

	if (mkdirat(root, "tmp", 01777) != 0)
		jailinit_fail(p, "mkdir /tmp");
	tmp = jailinit_fs(
	    "tmpfs", p->tmp_size, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
	if (tmp < 0)
		jailinit_fail(p, "mount /tmp");
	if (jailinit_move(tmp, root, "tmp") != 0)
		jailinit_fail(p, "attach /tmp");
	close(tmp);

	dev = jailinit_dev(p, root, devtree);
	cov.devdir = dev;
	for (i = 0; i < nhide; i++) {
		jailinit_hide(p, etchide[i], &cov);
		close(etchide[i]);
	}

	if (mkdirat(root, "proc", 0555) != 0)
		jailinit_fail(p, "mkdir /proc");
	/* /proc of the new pid namespace, read-only: its sysctl and
	 * sysrq files must not be writable even by a mapped root. */
	proc = jailinit_fs("proc", NULL,
	    MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
		MOUNT_ATTR_NOEXEC);
	if (proc < 0)
		jailinit_fail(p, "mount /proc");
	if (jailinit_move(proc, root, "proc") != 0)
		jailinit_fail(p, "attach /proc");
	close(proc);

	if (resolvtree >= 0) {
		const char *last;
		int parent = jailinit_mkpath(p, root, p->resolv_dir, &last);
		if (mkdirat(parent, last, 0755) != 0 && errno != EEXIST)
			jailinit_fail(p, "mkdir the resolver directory");
		if (jailinit_move(resolvtree, parent, last) != 0)
			jailinit_fail(p, "bind the resolver directory");
		close(resolvtree);
		close(parent);
	}
	if (p->ws != NULL)
		jailinit_workspace(p, root, wstree, &cov);
	close(dev);
	if (cov.dir >= 0)
		close(cov.dir);
	if (cov.file >= 0)
		close(cov.file);

	/* Nothing may be created at the top of the new root. */
	if (jailinit_setattr(root,
		MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
		0) != 0)
		jailinit_fail(p, "make the new root read-only");
	if (fchdir(root) != 0)
		jailinit_fail(p, "chdir to the new root");
	if (syscall(SYS_pivot_root, ".", ".") != 0)
		jailinit_fail(p, "pivot_root");
	if (syscall(SYS_umount2, ".", MNT_DETACH) != 0)
		jailinit_fail(p, "detach the old root");
	if (chdir("/") != 0)
		jailinit_fail(p, "chdir /");
	close(root);
}

/* jailinit_drop_caps - lose every capability for good, even as uid 0. */
static void
jailinit_drop_caps(struct jailinit_plan *p)
{
	const char *step = "";

	if (caps_drop(0, &step) != 0)
		jailinit_fail(p, step);
}

/* jailinit_limits - the resource limits of the command. */
static void
jailinit_limits(struct jailinit_plan *p)
{
	static const int which[] = {RLIMIT_CPU, RLIMIT_AS, RLIMIT_NPROC,
	    RLIMIT_FSIZE, RLIMIT_NOFILE, RLIMIT_CORE};
	uint64_t val[6];
	struct rlimit rl;
	size_t i;

	val[0] = p->lim.cpu_s;
	val[1] = p->lim.as_bytes;
	val[2] = p->lim.nproc;
	val[3] = p->lim.fsize_bytes;
	val[4] = p->lim.nofile;
	val[5] = 0; /* no core dumps of what ran in the jail */
	for (i = 0; i < sizeof(which) / sizeof(which[0]); i++) {
		rl.rlim_cur = rl.rlim_max = val[i];
		if (setrlimit(which[i], &rl) != 0) {
			/* Never raise a hard limit we were given. */
			if (getrlimit(which[i], &rl) != 0)
				jailinit_fail(p, "getrlimit");
			if (val[i] < rl.rlim_max)
				rl.rlim_max = val[i];
			rl.rlim_cur = rl.rlim_max;
			if (setrlimit(which[i], &rl) != 0)
				jailinit_fail(p, "setrlimit");
		}
	}
}

/* jailinit_say - write a short message of pieces to fd 2. */
static void
jailinit_say(const char *a, const char *b, const char *c)
{
	(void)write(2, a, strlen(a));
	(void)write(2, b, strlen(b));
	(void)write(2, c, strlen(c));
}

/* jailinit_execvp - execve argv[0], searched in path when it has no '/'.
 * Returns only on failure, with errno set. */
static void
jailinit_execvp(struct jailinit_plan *p)
{
	const char *file = p->argv[0], *s, *e;
	char cand[4096];
	size_t dn, fn = strlen(file);
	int saved = ENOENT;

	if (strchr(file, '/') != NULL || p->path == NULL) {
		execve(file, p->argv, p->envp);
		return;
	}
	for (s = p->path;; s = e + 1) {
		e = strchr(s, ':');
		dn = e != NULL ? (size_t)(e - s) : strlen(s);
		if (dn == 0) {
			cand[0] = '.';
			dn = 1;
		} else if (dn + fn + 2 <= sizeof(cand)) {
			memcpy(cand, s, dn);
		} else {
			dn = 0;
		}
		if (dn > 0 && dn + fn + 2 <= sizeof(cand)) {
			cand[dn] = '/';
			memcpy(cand + dn + 1, file, fn + 1);
			execve(cand, p->argv, p->envp);
			if (errno != ENOENT && errno != ENOTDIR)
				saved = errno;
		}
		if (e == NULL)
			break;
	}
	errno = saved;
}

/* jailinit_command - the command's process: fds, session, limits, then
 * the lockdown layers, last seccomp, then execve. */
static void __attribute__((noreturn)) jailinit_command(struct jailinit_plan *p)
{
	int in, out, err, e, flags;

	in = fcntl(p->fd_in, F_DUPFD, 3);
	out = fcntl(p->fd_out, F_DUPFD, 3);
	err = fcntl(p->fd_err, F_DUPFD, 3);
	if (in < 0 || out < 0 || err < 0 || dup2(in, 0) != 0 ||
	    dup2(out, 1) != 1 || dup2(err, 2) != 2)
		jailinit_fail(p, "set up stdin, stdout and stderr");
	/* No fd of the worker leaks in, except the error pipe, which
	 * closes itself on execve. */
	if (p->err_w != 3) {
		if (dup2(p->err_w, 3) != 3)
			jailinit_fail(p, "move the error pipe");
		p->err_w = 3;
	}
	if (fcntl(3, F_SETFD, FD_CLOEXEC) != 0)
		jailinit_fail(p, "error pipe close-on-exec");
	if (syscall(SYS_close_range, 4, ~0u, 0) != 0)
		jailinit_fail(p, "close fds");
	/* A new session: no controlling terminal, its own process group. */
	if (setsid() < 0)
		jailinit_fail(p, "setsid");
	jailinit_limits(p);
	umask(022);
	if (p->cwd != NULL && chdir(p->cwd) != 0)
		jailinit_fail(p, "chdir to the working directory");
	if (!p->unjailed) {
		jailinit_drop_caps(p);
		flags = LANDLOCK_RO_EXEC | LANDLOCK_SCOPE;
		if (!p->net)
			flags |= LANDLOCK_NO_TCP;
		if (landlock_restrict(p->ll_ro, p->ll_rw, flags) < 0)
			jailinit_fail(p, "Landlock");
		/* Last: the seccomp filter, right before execve. */
		if (filter_install(p->prog, 0) != 0)
			jailinit_fail(p, "seccomp");
	}
	jailinit_execvp(p);
	e = errno;
	jailinit_say("shiro-jail: cannot run ", p->argv[0],
	    e == ENOENT		    ? ": no such file\n"
		: e == EACCES	    ? ": permission denied\n"
		: e == ENOEXEC	    ? ": not an executable format\n"
		: e == ETXTBSY	    ? ": text file busy\n"
		: e == ENOTDIR	    ? ": not a directory\n"
		: e == ENAMETOOLONG ? ": name too long\n"
				    : ": cannot execute\n");
	_exit(e == ENOENT ? 127 : 126);
}

#ifndef __SANITIZE_ADDRESS__
/* The command's stack until its execve (init's memory is shared). */
static char jailinit_stack[256 * 1024] __attribute__((aligned(64)));
#endif

/* jailinit_command_start - clone()'s entry point for the command. */
static int __attribute__((noreturn)) jailinit_command_start(void *arg)
{
	struct jailinit_plan *p = arg;

	close(p->stat_w);
	jailinit_command(p);
}

/* jailinit_wait - init's loop: reap every process; when the command
 * ends, report its status and exit, which kills the namespace. */
static void __attribute__((noreturn))
jailinit_wait(struct jailinit_plan *p, pid_t cmd)
{
	int status;
	pid_t w;

	for (;;) {
		w = waitpid(-1, &status, __WALL);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			_exit(JAIL_EXIT_SETUP);
		}
		if (w == cmd) {
			(void)write(p->stat_w, &status, sizeof(status));
			_exit(0);
		}
	}
}

/* jailinit_signals - default dispositions and an empty mask: a worker
 * that ignores SIGPIPE or SIGCHLD, or blocks signals for a signalfd,
 * must not hand that on (ignored signals survive execve). */
static void
jailinit_signals(void)
{
	struct sigaction sa;
	sigset_t none;
	int sig;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	for (sig = 1; sig < _NSIG; sig++) {
		if (sig == SIGKILL || sig == SIGSTOP)
			continue;
		if (sigaction(sig, &sa, NULL) == 0)
			continue;
		/*
		 * glibc keeps signals 32 and 33 for itself and refuses to
		 * change them, yet a parent (GNU make does this) can leave
		 * them ignored, and ignored signals survive execve.  Ask
		 * the kernel directly: its sigaction takes a handler, flags,
		 * a restorer and an 8-byte mask.
		 */
		{
			struct {
				void (*handler)(int);
				unsigned long flags;
				void (*restorer)(void);
				unsigned long mask;
			} ksa = {SIG_DFL, 0, NULL, 0};
			(void)syscall(SYS_rt_sigaction, sig, &ksa, NULL,
			    sizeof(ksa.mask));
		}
	}
	sigemptyset(&none);
	(void)sigprocmask(SIG_SETMASK, &none, NULL);
}

/* jailinit_main - the cloned child: set up, fork the command, wait. */
void
jailinit_main(struct jailinit_plan *p)
{
	pid_t cmd;

	jailinit_signals();

	if (p->unjailed) {
		close(p->stat_w);
		jailinit_command(p);
	}
	/* If the worker dies, the jail dies with it. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0)
		jailinit_fail(p, "set the parent-death signal");
	/* The monitor may have died before the line above. */
	if (p->parent_fd >= 0) {
		struct pollfd pfd = {p->parent_fd, POLLIN, 0};
		if (poll(&pfd, 1, 0) != 0)
			_exit(JAIL_EXIT_SETUP);
		close(p->parent_fd);
	}
	jailinit_maps(p);
	/* Not dumpable: the command cannot read init's memory or
	 * environment (the worker's) through /proc/1. */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0)
		jailinit_fail(p, "set init non-dumpable");
	/* The pid namespace's own pid_max bounds how many processes the
	 * jail can have at once (Linux 6.14 on; the sysctl answers for the
	 * writer's pid namespace).  Older kernels: RLIMIT_NPROC and the
	 * cgroup, where there is one. */
	(void)jailinit_write_file("/proc/sys/kernel/pid_max", p->pid_max);
	umask(0);
	jailinit_root(p);
	if (sethostname("shiro", 5) != 0)
		jailinit_fail(p, "sethostname");
		/* Without the network the loopback stays down: seccomp refuses
	 * every socket family but AF_UNIX, so nothing could use it. */

		/* The command shares init's memory until its execve (as
	 * posix_spawn does): no page tables to copy.  It runs on its own
	 * stack and writes nothing that init reads afterwards. */
#ifndef __SANITIZE_ADDRESS__
	cmd = clone(jailinit_command_start,
	    jailinit_stack + sizeof(jailinit_stack),
	    CLONE_VM | CLONE_VFORK | SIGCHLD, p);
#else
	/* AddressSanitizer cannot follow a stack it did not make: a plain
	 * fork under it. */
	cmd = (pid_t)syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
	if (cmd == 0)
		jailinit_command_start(p);
#endif
	if (cmd < 0)
		jailinit_fail(p, "start the command");
	/* init keeps only the status pipe, as fd 3. */
	if (p->stat_w != 3) {
		if (dup2(p->stat_w, 3) != 3)
			_exit(JAIL_EXIT_SETUP);
		p->stat_w = 3;
	}
	(void)syscall(SYS_close_range, 4, ~0u, 0);
	close(0);
	close(1);
	close(2);
	jailinit_wait(p, cmd);
}
