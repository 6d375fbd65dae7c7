/*
 * sandbox.c - the confinement of each worker role (see sandbox.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/capability.h>
#include <linux/mount.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "proto/err.h"
#include "proto/log.h"
#include "proto/xmalloc.h"

#include "caps.h"
#include "filter.h"
#include "jailinit.h"
#include "landlock.h"
#include "sandbox.h"

struct sandbox {
	enum sandbox_role role;
	int net;
	int keep_fd; /* tool: the broker's socket file (O_PATH), or -1 */
	char *endpoint; /* what to connect to now, or NULL */
};

/* The libraries a worker may load after its confinement (libcurl,
 * OpenSSL and libc's name service load some only when first used). */
#define SANDBOX_LIBS \
	"/usr/lib", "/usr/lib64", "/usr/lib32", "/usr/libx32", \
	    "/usr/local/lib", "/lib", "/lib64", "/lib32", "/libx32", \
	    "/etc/ld.so.cache"

/* What the model role reads: its libraries, CA certificates (not
 * /etc/ssl as a whole, which holds the host's private keys), OpenSSL's
 * configuration, the resolver's files and the time zone.  Missing
 * entries are skipped. */
static const char *const sandbox_model_ro[] = {SANDBOX_LIBS, "/etc/ssl/certs",
    "/etc/ssl/openssl.cnf", "/etc/ssl/cert.pem", "/usr/share/ca-certificates",
    "/usr/local/share/ca-certificates", "/etc/pki/tls/certs",
    "/etc/pki/ca-trust/extracted", "/etc/pki/tls/openssl.cnf",
    "/etc/crypto-policies/back-ends", "/etc/resolv.conf", "/etc/hosts",
    "/etc/nsswitch.conf", "/etc/gai.conf", "/etc/host.conf", "/etc/localtime",
    "/usr/share/zoneinfo", "/dev/urandom", NULL};

/* What the fs role reads besides its workspace. */
static const char *const sandbox_fs_ro[] = {SANDBOX_LIBS, "/dev/urandom", NULL};

/* sandbox_role_name - "model", "fs" or "tool". */
const char *
sandbox_role_name(enum sandbox_role role)
{
	switch (role) {
	case SANDBOX_ROLE_MODEL:
		return "model";
	case SANDBOX_ROLE_FS:
		return "fs";
	case SANDBOX_ROLE_TOOL:
		return "tool";
	}
	return "?";
}

/* sandbox_threads - how many threads this process has, or -1. */
static int
sandbox_threads(void)
{
	struct dirent *de;
	DIR *d = opendir("/proc/self/task");
	int n = 0;

	if (d == NULL)
		return -1;
	while ((de = readdir(d)) != NULL)
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

/* sandbox_ipc_path - the path of an ipc:// endpoint, or NULL. */
static const char *
sandbox_ipc_path(const char *endpoint)
{
	if (endpoint == NULL || strncmp(endpoint, "ipc://", 6) != 0 ||
	    endpoint[6] == '\0' || endpoint[6] == '@')
		return NULL;
	return endpoint + 6;
}

/* sandbox_home_of - the home of shirod that an ipc endpoint
 * HOME/run/NAME lies in (malloc'd), or NULL. */
static char *
sandbox_home_of(const char *endpoint)
{
	const char *path = sandbox_ipc_path(endpoint), *run;

	if (path == NULL || path[0] != '/')
		return NULL;
	run = strstr(path, "/run/");
	if (run == NULL || run == path || strchr(run + 5, '/') != NULL)
		return NULL;
	return xstrndup(path, (size_t)(run - path));
}

/* sandbox_add - append the real path of p to the list *v (of *n), if it
 * exists and, when within is not NULL, lies strictly inside it. */
static void
sandbox_add(char ***v, size_t *n, const char *p, const char *within)
{
	char real[PATH_MAX];
	size_t k, w;
	struct stat st;

	if (p == NULL || p[0] != '/' || lstat(p, &st) != 0 ||
	    realpath(p, real) == NULL)
		return;
	if (within != NULL) {
		w = strlen(within);
		if (strncmp(real, within, w) != 0 || real[w] != '/')
			return;
	}
	for (k = 0; k < *n; k++)
		if (strcmp((*v)[k], real) == 0)
			return;
	*v = xreallocarray(*v, *n + 2, sizeof(char *));
	(*v)[(*n)++] = xstrdup(real);
	(*v)[*n] = NULL;
}

/*
 * sandbox_secrets - the secrets the jail hides, as real paths (a
 * NULL-terminated list the caller frees with sandbox_free_list): $SHIRO_HOME
 * (the environment's, and the one the endpoint lies in), the home
 * directory's secrets, and for the tool role the session's runtime
 * directory and, as root, root's files in /etc.  Only those inside
 * within, when it is not NULL.
 */
static char **
sandbox_secrets(const char *endpoint, const char *within, int tool)
{
	const char *home = jail_home_dir();
	char **v = NULL, *p;
	size_t n = 0, i;

	sandbox_add(&v, &n, getenv("SHIRO_HOME"), within);
	if ((p = sandbox_home_of(endpoint)) != NULL) {
		sandbox_add(&v, &n, p, within);
		free(p);
	}
	for (i = 0; home != NULL && home[0] == '/' && jail_home_secrets[i];
	     i++) {
		p = xasprintf("%s/%s", home, jail_home_secrets[i]);
		sandbox_add(&v, &n, p, within);
		free(p);
	}
	if (tool) {
		p = xasprintf("/run/user/%u", (unsigned)geteuid());
		sandbox_add(&v, &n, p, within);
		free(p);
		for (i = 0; geteuid() == 0 && jail_etc_secrets[i]; i++) {
			p = xasprintf("/%s", jail_etc_secrets[i]);
			sandbox_add(&v, &n, p, within);
			free(p);
		}
	}
	return v;
}

/* sandbox_free_list - free a list from sandbox_secrets. */
static void
sandbox_free_list(char **v)
{
	size_t i;

	for (i = 0; v != NULL && v[i] != NULL; i++)
		free(v[i]);
	free(v);
}

/*
 * sandbox_userns - enter a user and mount namespace of our own, mapping
 * only our uid and gid, with every mount private (nothing we mount there
 * reaches the host).  We hold every capability in it until
 * sandbox_drop(); the mounts we inherit are locked to one another, and
 * so is everything in each namespace made from this one later.
 */
static int
sandbox_userns(void)
{
	char map[64];
	uid_t uid = geteuid();
	gid_t gid = getegid();

	if (unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0) {
		log_warn("a user and mount namespace of its own");
		return -SHIRO_ERR_FAILED;
	}
	snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)uid, (unsigned)uid);
	if ((jailinit_write_file("/proc/self/setgroups", "deny") != 0 &&
		errno != ENOENT) ||
	    jailinit_write_file("/proc/self/uid_map", map) != 0) {
		log_warn("mapping uid %u into the namespace", (unsigned)uid);
		return -SHIRO_ERR_FAILED;
	}
	snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)gid, (unsigned)gid);
	if (jailinit_write_file("/proc/self/gid_map", map) != 0) {
		log_warn("mapping gid %u into the namespace", (unsigned)gid);
		return -SHIRO_ERR_FAILED;
	}
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) {
		log_warn("making the namespace's mounts private");
		return -SHIRO_ERR_FAILED;
	}
	return 0;
}

/* sandbox_cover - cover each of hide as the jail covers its secrets: an
 * empty read-only directory, or /dev/null for a file.  A path gone since
 * it was listed lies under one covered already. */
static int
sandbox_cover(const char *const *hide, struct jailinit_covers *cov)
{
	const char *step = "";
	size_t i;
	int fd;

	for (i = 0; hide != NULL && hide[i] != NULL; i++) {
		/* Resolved before; a symlink here now means the tree changed
		 * under us: refuse rather than cover something else. */
		fd = open(hide[i], O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0 && errno == ENOENT)
			continue;
		if (fd < 0 || jailinit_cover(fd, cov, &step) != 0) {
			log_warn("covering %s%s%s", hide[i], fd < 0 ? "" : ": ",
			    fd < 0 ? "" : step);
			if (fd >= 0)
				close(fd);
			return -SHIRO_ERR_FAILED;
		}
		close(fd);
	}
	return 0;
}

/* sandbox_attr_path - set and clear mount attributes on the mounts at
 * and under path. */
static int
sandbox_attr_path(const char *path, uint64_t set, uint64_t clr)
{
	struct mount_attr a;

	memset(&a, 0, sizeof(a));
	a.attr_set = set;
	a.attr_clr = clr;
	return (int)syscall(
	    SYS_mount_setattr, AT_FDCWD, path, AT_RECURSIVE, &a, sizeof(a));
}

/* The parts of /proc that root could write without any capability
 * (kernel settings, the sysrq trigger, interrupt routing, buses) or that
 * show the kernel's memory and keys: covered in the tool role's view. */
static const char *const sandbox_proc_hide[] = {"/proc/sys",
    "/proc/sysrq-trigger", "/proc/irq", "/proc/bus", "/proc/fs", "/proc/acpi",
    "/proc/scsi", "/proc/asound", "/proc/driver", "/proc/kcore", "/proc/keys",
    "/proc/timer_list", "/proc/sched_debug", "/proc/latency_stats", NULL};

/* The device nodes of the tool role's /dev, which its jails bind. */
static const char *const sandbox_devs[] = {
    "null", "zero", "full", "random", "urandom", NULL};

#define SANDBOX_NDEVS 5

/* sandbox_tool_dev - a /dev of the harmless nodes only, over /dev. */
static int
sandbox_tool_dev(void)
{
	int tree[SANDBOX_NDEVS], dev, fd, rc = -1;
	size_t i, n = 0;
	char path[16];

	for (n = 0; sandbox_devs[n] != NULL; n++) {
		snprintf(path, sizeof(path), "/dev/%s", sandbox_devs[n]);
		tree[n] = jailinit_open_tree(AT_FDCWD, path,
		    OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_SYMLINK_NOFOLLOW);
		if (tree[n] < 0)
			goto out;
	}
	dev = jailinit_fs("tmpfs", "size=64k,mode=755",
	    MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC);
	if (dev < 0)
		goto out;
	if (jailinit_move(dev, AT_FDCWD, "/dev") != 0) {
		close(dev);
		goto out;
	}
	for (i = 0; i < n; i++) {
		fd = openat(dev, sandbox_devs[i],
		    O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0666);
		if (fd < 0 || close(fd) != 0 ||
		    jailinit_move(tree[i], dev, sandbox_devs[i]) != 0) {
			close(dev);
			goto out;
		}
	}
	rc = jailinit_setattr(
	    dev, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC, 0);
	close(dev);
out:
	for (i = 0; i < n; i++)
		close(tree[i]);
	return rc;
}

/*
 * sandbox_tool_view - the rest of the tool role's view, once the secrets
 * are covered: everything read-only but the workspace (so that neither
 * root nor the user finds a file of theirs to change: a ~/.bashrc, a
 * program in /usr) and /proc, where its jails write their uid_map; in
 * /proc, what root could write without a capability covered; /dev only
 * the harmless nodes; /sys an empty directory.  Under it lies a
 * read-only copy of /proc taken before the covers: the kernel lets a
 * user namespace (each jail's) mount a /proc only where one is fully
 * visible in its mount namespace, and only read-only where that one is.
 */
static int
sandbox_tool_view(const char *ws, struct jailinit_covers *cov)
{
	const char *what;
	int wst = -1, hp = -1, sys = -1, rc = -SHIRO_ERR_FAILED;

	what = "clone the workspace";
	wst = jailinit_open_tree(AT_FDCWD, ws,
	    OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE |
		AT_SYMLINK_NOFOLLOW);
	if (wst < 0)
		goto out;
	what = "copy /proc";
	hp = jailinit_open_tree(AT_FDCWD, "/proc",
	    OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
	if (hp < 0 || jailinit_setattr(hp, MOUNT_ATTR_RDONLY, 1) != 0)
		goto out;
	what = "make the view read-only";
	if (sandbox_attr_path("/", MOUNT_ATTR_RDONLY, 0) != 0)
		goto out;
	what = "keep /proc writable";
	if (sandbox_attr_path("/proc", 0, MOUNT_ATTR_RDONLY) != 0)
		goto out;
	if (sandbox_cover(sandbox_proc_hide, cov) != 0)
		return -SHIRO_ERR_FAILED;
	what = "a /dev of the harmless nodes";
	if (sandbox_tool_dev() != 0)
		goto out;
	what = "cover /sys";
	sys = jailinit_fs("tmpfs", "size=4k,mode=000",
	    MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
	if (sys < 0 || jailinit_move(sys, AT_FDCWD, "/sys") != 0 ||
	    mkdirat(sys, "proc", 0) != 0 ||
	    jailinit_move(hp, sys, "proc") != 0 ||
	    jailinit_setattr(sys, MOUNT_ATTR_RDONLY, 0) != 0)
		goto out;
	what = "bind the workspace back, writable";
	if (jailinit_move(wst, AT_FDCWD, ws) != 0)
		goto out;
	rc = 0;
out:
	if (rc != 0)
		log_warn("tool: %s", what);
	if (wst >= 0)
		close(wst);
	if (hp >= 0)
		close(hp);
	if (sys >= 0)
		close(sys);
	return rc;
}

/* sandbox_namespace - the fs role's (secrets inside its workspace) or the
 * tool role's namespace: covers, and for the tool its view. */
static int
sandbox_namespace(char *const *hide, const char *tool_ws)
{
	struct jailinit_covers cov = {-1, -1, -1};
	int rc;

	if ((rc = sandbox_userns()) != 0)
		return rc;
	cov.devdir = open("/dev", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (cov.devdir < 0) {
		log_warn("/dev");
		return -SHIRO_ERR_FAILED;
	}
	rc = sandbox_cover((const char *const *)hide, &cov);
	if (rc == 0 && tool_ws != NULL)
		rc = sandbox_tool_view(tool_ws, &cov);
	close(cov.devdir);
	if (cov.dir >= 0)
		close(cov.dir);
	if (cov.file >= 0)
		close(cov.file);
	return rc;
}

/* sandbox_drop - no capability from here on, but keep (bit n =
 * capability n). */
static int
sandbox_drop(uint64_t keep)
{
	const char *step = "";

	if (caps_drop(keep, &step) != 0) {
		log_warn("dropping capabilities: %s", step);
		return -SHIRO_ERR_FAILED;
	}
	return 0;
}

/* sandbox_landlock - Landlock for role; a kernel without it is said. */
static int
sandbox_landlock(struct sandbox *sb, const char *ws)
{
	const char *rw[2] = {ws, NULL}, *const *ro = NULL;
	const char *ro_model[sizeof(sandbox_model_ro) / sizeof(char *) + 1];
	char real[PATH_MAX], *slash;
	int flags = LANDLOCK_SCOPE, rc;
	size_t n;

	switch (sb->role) {
	case SANDBOX_ROLE_MODEL:
		/* Where resolv.conf is a link (systemd-resolved), the
		 * directory it points into, which is replaced by rename. */
		memcpy(ro_model, sandbox_model_ro, sizeof(sandbox_model_ro));
		n = sizeof(sandbox_model_ro) / sizeof(char *) - 1;
		ro_model[n + 1] = NULL;
		if (realpath("/etc/resolv.conf", real) != NULL &&
		    strcmp(real, "/etc/resolv.conf") != 0 &&
		    (slash = strrchr(real, '/')) != NULL && slash > real) {
			*slash = '\0';
			ro_model[n] = real;
		}
		ro = ro_model;
		rw[0] = NULL;
		break;
	case SANDBOX_ROLE_FS:
		ro = sandbox_fs_ro;
		flags |= LANDLOCK_NO_TCP;
		break;
	case SANDBOX_ROLE_TOOL:
		/* No file rules: they would forbid the mounts its jails make
		 * (its namespace covers the secrets instead).  Scoping, and
		 * TCP off unless its jails have the network. */
		flags |= LANDLOCK_NO_FS | (sb->net ? 0 : LANDLOCK_NO_TCP);
		rw[0] = NULL;
		break;
	}
	rc = landlock_restrict(ro, rw, flags);
	if (rc < 0) {
		log_warnx("%s: Landlock failed", sandbox_role_name(sb->role));
		return -SHIRO_ERR_FAILED;
	}
	if (rc == 0 && sb->role != SANDBOX_ROLE_TOOL)
		log_warnx("%s: the kernel has no Landlock: files are not "
			  "confined beyond the system-call filter",
		    sandbox_role_name(sb->role));
	return 0;
}

/* sandbox_tool_socket - open the broker's socket file for the tool role,
 * whose namespace covers $SHIRO_HOME, and connect through it. */
static int
sandbox_tool_socket(struct sandbox *sb, const char *endpoint)
{
	const char *path = sandbox_ipc_path(endpoint);

	if (path == NULL)
		return 0; /* tcp: nothing to keep */
	sb->keep_fd = open(path, O_PATH | O_CLOEXEC);
	if (sb->keep_fd < 0) {
		log_warn("the broker's socket %s", path);
		return -SHIRO_ERR_NOENT;
	}
	free(sb->endpoint);
	sb->endpoint = xasprintf("ipc:///proc/self/fd/%d", sb->keep_fd);
	return 0;
}

/* sandbox_confine - step 1: capabilities, files, namespace. */
int
sandbox_confine(enum sandbox_role role, const struct sandbox_opts *opts,
    struct sandbox **sbp)
{
	struct sandbox *sb;
	char ws[PATH_MAX], **hide = NULL;
	struct stat st;
	uint64_t keep = 0;
	int rc, threads;

	*sbp = NULL;
	if ((unsigned)role > SANDBOX_ROLE_TOOL)
		return -SHIRO_ERR_INVAL;
	if (role != SANDBOX_ROLE_MODEL &&
	    (opts->workspace == NULL || opts->workspace[0] != '/' ||
		realpath(opts->workspace, ws) == NULL || stat(ws, &st) != 0 ||
		!S_ISDIR(st.st_mode))) {
		log_warnx("%s: the workspace %s is not a directory",
		    sandbox_role_name(role),
		    opts->workspace ? opts->workspace : "(none)");
		return -SHIRO_ERR_INVAL;
	}
	if ((threads = sandbox_threads()) != 1) {
		log_warnx("%s: %s: Landlock would not bind them",
		    sandbox_role_name(role),
		    threads < 0 ? "cannot count this process's threads"
				: "threads exist already");
		return -SHIRO_ERR_STATE;
	}
	sb = xcalloc(1, sizeof(*sb));
	sb->role = role;
	sb->net = opts->net != 0;
	sb->keep_fd = -1;
	sb->endpoint = opts->endpoint ? xstrdup(opts->endpoint) : NULL;
	rc = -SHIRO_ERR_FAILED;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
		log_warn("no_new_privs");
		goto out;
	}
	switch (role) {
	case SANDBOX_ROLE_MODEL:
		break;
	case SANDBOX_ROLE_FS:
		/* Landlock confines it to the workspace; what the jail hides
		 * inside the workspace is covered first (Landlock forbids
		 * mounts once in force). */
		hide = sandbox_secrets(opts->endpoint, ws, 0);
		if (hide != NULL && (rc = sandbox_namespace(hide, NULL)) != 0)
			goto out;
		rc = -SHIRO_ERR_FAILED;
		if (chdir(ws) != 0) {
			log_warn("fs: chdir %s", ws);
			goto out;
		}
		break;
	case SANDBOX_ROLE_TOOL:
		if ((rc = sandbox_tool_socket(sb, opts->endpoint)) != 0)
			goto out;
		hide = sandbox_secrets(opts->endpoint, NULL, 1);
		if ((rc = sandbox_namespace(hide, ws)) != 0)
			goto out;
		rc = -SHIRO_ERR_FAILED;
		/* A working directory under a cover would still reach what
		 * is under it. */
		if (chdir("/") != 0)
			goto out;
		/* As root, CAP_SETFCAP stays: since Linux 5.12 a user
		 * namespace (each jail's) may map uid 0 only when its
		 * creator holds it.  Its one other use, giving a file
		 * capabilities, the filter refuses (set*xattr). */
		if (geteuid() == 0)
			keep = 1ull << CAP_SETFCAP;
		break;
	}
	/* Not dumpable: no core file, and no other process of the user
	 * reads its memory or /proc files.  The tool worker stays dumpable:
	 * its jail children write their own /proc/self/uid_map, which a
	 * non-dumpable process cannot. */
	if (role != SANDBOX_ROLE_TOOL &&
	    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) {
		log_warn("dumpable");
		goto out;
	}
	if (sandbox_drop(keep) != 0 ||
	    sandbox_landlock(sb, role == SANDBOX_ROLE_FS ? ws : NULL) != 0)
		goto out;
	rc = 0;
out:
	sandbox_free_list(hide);
	if (rc != 0)
		sandbox_destroy(&sb);
	*sbp = sb;
	return rc;
}

/* sandbox_endpoint - the endpoint to connect to now. */
const char *
sandbox_endpoint(const struct sandbox *sb)
{
	return sb->endpoint;
}

/* sandbox_lockdown - step 2: the role's seccomp programs. */
int
sandbox_lockdown(struct sandbox *sb)
{
	static const enum filter_policy policy[] = {
	    [SANDBOX_ROLE_MODEL] = FILTER_MODEL,
	    [SANDBOX_ROLE_FS] = FILTER_FS,
	    [SANDBOX_ROLE_TOOL] = FILTER_TOOL,
	};
	struct sock_fprog progs[2];
	enum filter_policy p = policy[sb->role];
	size_t i, n;
	int rc;

	/* The connection is made: the way back to the socket file goes. */
	if (sb->keep_fd >= 0) {
		close(sb->keep_fd);
		sb->keep_fd = -1;
	}
	if (p == FILTER_TOOL && sb->net)
		p = FILTER_TOOL_NET;
	if ((rc = filter_lockdown(p, (long)getpid(), progs, &n)) != 0) {
		log_warnx("%s lockdown: the seccomp programs cannot be built",
		    sandbox_role_name(sb->role));
		return rc;
	}
	for (i = 0; i < n && rc == 0; i++)
		if (filter_install(&progs[i], 1) != 0) {
			rc = errno == EINVAL ? -SHIRO_ERR_UNSUPP
					     : -SHIRO_ERR_FAILED;
			log_warn("%s lockdown: seccomp",
			    sandbox_role_name(sb->role));
		}
	for (i = 0; i < n; i++)
		free(progs[i].filter);
	return rc;
}

/* sandbox_destroy - free *sbp and set it NULL. */
void
sandbox_destroy(struct sandbox **sbp)
{
	struct sandbox *sb = *sbp;

	if (sb == NULL)
		return;
	if (sb->keep_fd >= 0)
		close(sb->keep_fd);
	free(sb->endpoint);
	free(sb);
	*sbp = NULL;
}
