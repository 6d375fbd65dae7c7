/*
 * jail.c - the monitor side of the tool jail: check the spec, prepare
 * the child's plan, clone into new namespaces, pass output on, enforce
 * the timeout and the cancel flag, and collect the status.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/sched.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "proto/err.h"
#include "proto/log.h"
#include "proto/mono.h"
#include "proto/xmalloc.h"

#include "cgroup.h"
#include "filter.h"
#include "jail.h"
#include "jailinit.h"
#include "landlock.h"

#ifndef CLONE_PIDFD
#define CLONE_PIDFD 0x00001000
#endif

#define JAIL_MIB (1024ull * 1024ull)
#define JAIL_TICK_MS 50

/* The host directories that appear read-only in every jail. */
static const char *const jail_sysdirs[] = {
    "usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32", "etc", "opt"};

/* Files in /etc that only root may read; covered when the jail runs as
 * uid 0, which owns them. */
const char *const jail_etc_secrets[] = {"etc/shadow", "etc/gshadow",
    "etc/shadow-", "etc/gshadow-", "etc/sudoers", "etc/sudoers.d", "etc/ssh",
    "etc/ssl/private", "etc/security/opasswd", NULL};

/* Secrets under the home directory, hidden when inside the workspace. */
const char *const jail_home_secrets[] = {".shiro", ".ssh", ".gnupg", ".aws",
    ".kube", ".docker", ".config/gcloud", ".local/share/keyrings", ".netrc",
    ".git-credentials", ".pgpass", NULL};

static const char *const jail_default_ro[] = {".git", ".shiro", NULL};

static const char *const jail_env_copy[] = {"LANG", "LANGUAGE", "TERM", "TZ",
    "USER", "LOGNAME", "COLORTERM", "NO_COLOR", NULL};

#define JAIL_PATH "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin"

struct jail {
	pid_t pid;
	int pidfd;
	int out_r, err_r, stat_r;
	int unjailed;
	struct cgroup_run cg;
	int have_cg;
	uint64_t start_ms, deadline_ms;
	volatile sig_atomic_t *cancel;
	jail_output_fn fn;
	void *arg;
	int killed, timed_out, interrupted;
	int reaped, wstatus, have_status;
	uint64_t out_bytes, err_bytes;
	int done;
};

static pthread_mutex_t jail_lock = PTHREAD_MUTEX_INITIALIZER;
static struct jail_features jail_feat;
static int jail_feat_ok;
static unsigned jail_seq;

/* jail_spec_init - the defaults. */
void
jail_spec_init(struct jail_spec *spec)
{
	memset(spec, 0, sizeof(*spec));
	spec->stdin_fd = -1;
	spec->stdout_fd = -1;
	spec->stderr_fd = -1;
}

/* jail_status - a shell-style status for res. */
int
jail_status(const struct jail_result *res)
{
	if (res->timed_out)
		return JAIL_EXIT_TIMEOUT;
	if (res->interrupted)
		return JAIL_EXIT_INTERRUPT;
	if (res->exited)
		return res->exit_code;
	return 128 + res->signal;
}

static const char *jail_env[16];
static pthread_once_t jail_env_once = PTHREAD_ONCE_INIT;
static char *jail_home;
static pthread_once_t jail_home_once = PTHREAD_ONCE_INIT;

/* jail_home_find - $HOME, or our uid's home in /etc/passwd when the
 * environment has none (a worker's environment is shirod's choice),
 * once.  The file is read directly: shiro-jail is linked statically,
 * where libc's name service cannot load its modules. */
static void
jail_home_find(void)
{
	const char *h = getenv("HOME");
	char line[1024], *f[7], *p;
	unsigned long uid;
	FILE *pw;
	int k;

	if (h != NULL && h[0] == '/') {
		jail_home = xstrdup(h);
		return;
	}
	if ((pw = fopen("/etc/passwd", "re")) == NULL)
		return;
	while (jail_home == NULL && fgets(line, sizeof(line), pw) != NULL) {
		line[strcspn(line, "\n")] = '\0';
		for (k = 0, p = line; k < 7 && p != NULL; k++) {
			f[k] = p;
			p = strchr(p, ':');
			if (p != NULL)
				*p++ = '\0';
		}
		if (k < 7 || f[2][0] == '\0')
			continue;
		uid = strtoul(f[2], &p, 10);
		if (*p == '\0' && uid == (unsigned long)geteuid() &&
		    f[5][0] == '/')
			jail_home = xstrdup(f[5]);
	}
	fclose(pw);
}

/* jail_home_dir - the home directory whose secrets are hidden, or NULL. */
const char *
jail_home_dir(void)
{
	pthread_once(&jail_home_once, jail_home_find);
	return jail_home;
}

/* jail_env_build - fill jail_env from the environment, once. */
static void
jail_env_build(void)
{
	size_t i, n = 0;
	const char *v;

	jail_env[n++] = "PATH=" JAIL_PATH;
	jail_env[n++] = "HOME=/tmp";
	jail_env[n++] = "SHIRO_JAIL=1";
	for (i = 0; jail_env_copy[i] != NULL; i++) {
		v = getenv(jail_env_copy[i]);
		if (v == NULL || strlen(v) > 256 || strchr(v, '\n') != NULL)
			continue;
		jail_env[n++] = xasprintf("%s=%s", jail_env_copy[i], v);
	}
	jail_env[n] = NULL;
}

/* jail_default_env - PATH, HOME and the harmless variables. */
const char *const *
jail_default_env(void)
{
	pthread_once(&jail_env_once, jail_env_build);
	return jail_env;
}

/* jail_probe_mount_api - whether the new mount API answers (in a new
 * user and mount namespace). */
static int
jail_probe_mount_api(void)
{
	int fd = (int)syscall(SYS_fsopen, "tmpfs", 1);

	return fd >= 0 &&
	    syscall(SYS_open_tree, AT_FDCWD, "/", 1 | AT_RECURSIVE) >= 0 &&
	    (syscall(SYS_mount_setattr, -1, "", 0, NULL, 0) == 0 ||
		errno != ENOSYS);
}

/* jail_probe_clone - whether one clone() makes every namespace of a
 * jail, as jail_start() does, with the mount API inside: the bits of
 * jail_probe_child(), or 0. */
static int
jail_probe_clone(void)
{
	long pid;
	int st;

	pid = syscall(
	    SYS_clone, FILTER_JAIL_NS | CLONE_NEWNET | SIGCHLD, 0, 0, 0, 0);
	if (pid == 0)
		_exit(jail_probe_mount_api() ? 0 : 1);
	if (pid < 0 || waitpid((pid_t)pid, &st, 0) != (pid_t)pid ||
	    !WIFEXITED(st))
		return 0;
	return 0x7f | (WEXITSTATUS(st) == 0 ? 0x100 : 0);
}

/* jail_probe_child - in a throwaway child: which namespaces and mount
 * calls work.  Returns a bit set. */
static int
jail_probe_child(void)
{
	static const int flags[] = {CLONE_NEWNS, CLONE_NEWPID, CLONE_NEWIPC,
	    CLONE_NEWUTS, CLONE_NEWNET, CLONE_NEWCGROUP};
	int bits;
	size_t i;

	/* The jail's own way first: in the tool worker, whose filter
	 * refuses unshare and every other combination, it is the only
	 * one.  Where it fails, each namespace alone says which is
	 * missing. */
	if ((bits = jail_probe_clone()) != 0)
		return bits;
	if (unshare(CLONE_NEWUSER) != 0)
		return 0;
	bits = 1;
	for (i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
		if (unshare(flags[i]) == 0)
			bits |= 2 << i;
	if (jail_probe_mount_api())
		bits |= 0x100;
	return bits;
}

/* jail_kernel_at_least - whether the running kernel is maj.min or later. */
static int
jail_kernel_at_least(int maj, int min)
{
	struct utsname u;
	int a = 0, b = 0;

	if (uname(&u) != 0 || sscanf(u.release, "%d.%d", &a, &b) != 2)
		return 0;
	return a > maj || (a == maj && b >= min);
}

/* jail_probe_now - fill jail_feat. */
static void
jail_probe_now(struct jail_features *f)
{
	const struct cgroup_info *ci;
	unsigned action = SECCOMP_RET_KILL_PROCESS;
	int fds[2], bits = 0, st;
	pid_t pid;
	size_t n;

	memset(f, 0, sizeof(*f));
	if (pipe2(fds, O_CLOEXEC) == 0) {
		pid = fork();
		if (pid == 0) {
			bits = jail_probe_child();
			(void)write(fds[1], &bits, sizeof(bits));
			_exit(0);
		}
		close(fds[1]);
		if (pid > 0) {
			if (read(fds[0], &bits, sizeof(bits)) != sizeof(bits))
				bits = 0;
			(void)waitpid(pid, &st, 0);
		}
		close(fds[0]);
	}
	f->userns = (bits & 1) != 0;
	f->mntns = (bits & 2) != 0;
	f->pidns = (bits & 4) != 0;
	f->ipcns = (bits & 8) != 0;
	f->utsns = (bits & 16) != 0;
	f->netns = (bits & 32) != 0;
	f->cgroupns = (bits & 64) != 0;
	f->mount_api = (bits & 0x100) != 0;
	f->seccomp =
	    syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action) == 0;
	f->landlock_abi = landlock_abi();
	f->pid_max = jail_kernel_at_least(6, 14);
	ci = cgroup_detect();
	f->cgroup2 = ci->v2[0] != '\0';
	f->cgroup_pids = ci->v2_pids;
	f->cgroup_memory = ci->v2_mem;
	snprintf(f->cgroup_how, sizeof(f->cgroup_how), "%s",
	    ci->v2_pids && ci->v2_mem ? "v2 pids and memory"
		: ci->v2_pids	      ? "v2 pids"
		: ci->v2_mem	      ? "v2 memory"
		: f->cgroup2	      ? "none delegated to us in cgroup v2"
				      : "none (no cgroup v2 group we may use)");
	n = 0;
#define JAIL_NEED(cond, name) \
	if (!(cond)) \
	n += (size_t)snprintf(f->missing + n, sizeof(f->missing) - n, "%s%s", \
	    n > 0 ? ", " : "", name)
	JAIL_NEED(f->userns, "user namespaces");
	JAIL_NEED(f->mntns, "mount namespaces");
	JAIL_NEED(f->pidns, "pid namespaces");
	JAIL_NEED(f->ipcns, "ipc namespaces");
	JAIL_NEED(f->utsns, "uts namespaces");
	JAIL_NEED(f->netns, "network namespaces");
	JAIL_NEED(f->cgroupns, "cgroup namespaces");
	JAIL_NEED(f->mount_api, "the new mount API (Linux 5.12)");
	JAIL_NEED(f->seccomp, "seccomp filters");
#undef JAIL_NEED
}

/* jail_probe - what this kernel offers; cached. */
int
jail_probe(struct jail_features *f)
{
	pthread_mutex_lock(&jail_lock);
	if (!jail_feat_ok) {
		jail_probe_now(&jail_feat);
		jail_feat_ok = 1;
	}
	*f = jail_feat;
	pthread_mutex_unlock(&jail_lock);
	return 0;
}

/* jail_filter - the seccomp program for net on or off, compiled at
 * build time (filter-gen). */
static const struct sock_fprog *
jail_filter(int net)
{
	return &filter_prebuilt[net ? 1 : 0];
}

/* jail_setf - format a one-line error into err. */
static void __attribute__((format(printf, 3, 4)))
jail_setf(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL || errlen == 0)
		return;
	va_start(ap, fmt);
	(void)vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* jail_is_sysdir - whether abs is / or one of the system directories. */
static int
jail_is_sysdir(const char *abs)
{
	size_t i;

	if (strcmp(abs, "/") == 0 || strcmp(abs, "/proc") == 0 ||
	    strcmp(abs, "/dev") == 0 || strcmp(abs, "/tmp") == 0 ||
	    strcmp(abs, "/sys") == 0)
		return 1;
	for (i = 0; i < sizeof(jail_sysdirs) / sizeof(jail_sysdirs[0]); i++)
		if (abs[0] == '/' && strcmp(abs + 1, jail_sysdirs[i]) == 0)
			return 1;
	return 0;
}

/* jail_workspace_usable - whether dir can be a workspace. */
int
jail_workspace_usable(const char *dir)
{
	return dir != NULL && dir[0] == '/' && !jail_is_sysdir(dir);
}

/* jail_relative - if abs lies strictly inside dir, a copy of the part
 * below it; else NULL. */
static char *
jail_relative(const char *dir, const char *abs)
{
	size_t n = strlen(dir);

	if (strncmp(abs, dir, n) != 0 || abs[n] != '/' || abs[n + 1] == '\0')
		return NULL;
	return xstrdup(abs + n + 1);
}

/* jail_plan_free - free what jail_plan() allocated. */
static void
jail_plan_free(struct jailinit_plan *p)
{
	size_t i;

	for (i = 0; i < p->nro; i++)
		free(p->ro_sub[i]);
	free(p->ro_sub);
	for (i = 0; i < p->nhide; i++)
		free(p->hide_rel[i]);
	free(p->hide_rel);
	free(p->argv);
	free(p->envp);
	free((char *)p->ws);
	free((char *)p->cwd);
}

/* jail_inside - where abs really is (symlinks resolved), relative to the
 * workspace, if it exists and lies inside it; a copy, or NULL. */
static char *
jail_inside(const char *ws, const char *abs)
{
	char real[PATH_MAX];
	struct stat st;

	/* Most secrets do not exist; lstat is cheaper than realpath. */
	if (lstat(abs, &st) != 0 || realpath(abs, real) == NULL)
		return NULL;
	return jail_relative(ws, real);
}

/* jail_add_hide - record abs as hidden if it is inside the workspace.  A
 * symlink is followed here, on the host: what it leads to is covered
 * when that is in the workspace, and is not in the jail otherwise. */
static void
jail_add_hide(struct jailinit_plan *p, const char *abs, size_t *cap)
{
	char *rel;

	if (p->ws == NULL || abs == NULL || abs[0] != '/')
		return;
	rel = jail_inside(p->ws, abs);
	if (rel == NULL)
		return;
	if (p->nhide == *cap) {
		*cap = *cap ? *cap * 2 : 16;
		p->hide_rel = xreallocarray(p->hide_rel, *cap, sizeof(char *));
	}
	p->hide_rel[p->nhide++] = rel;
}

/* jail_plan - check spec and prepare the child's plan; the caller frees
 * it with jail_plan_free(). */
static int
jail_plan(const struct jail_spec *spec, struct jailinit_plan *p, char *err,
    size_t errlen)
{
	const char *const *ro =
	    spec->ro_subpaths ? spec->ro_subpaths : jail_default_ro;
	const char *const *envp = spec->envp ? spec->envp : jail_default_env();
	const char *home = jail_home_dir(), *v;
	char real[PATH_MAX], buf[PATH_MAX];
	size_t i, n, cap = 0;
	struct stat st;
	ssize_t ln;

	memset(p, 0, sizeof(*p));
	if (spec->argv == NULL || spec->argv[0] == NULL ||
	    spec->argv[0][0] == '\0') {
		jail_setf(err, errlen, "no command");
		return -SHIRO_ERR_INVAL;
	}
	if (spec->workspace != NULL) {
		if (spec->workspace[0] != '/') {
			jail_setf(err, errlen, "workspace %s: not absolute",
			    spec->workspace);
			return -SHIRO_ERR_INVAL;
		}
		if (realpath(spec->workspace, real) == NULL ||
		    stat(real, &st) != 0) {
			jail_setf(err, errlen, "workspace %s: %s",
			    spec->workspace, strerror(errno));
			return -SHIRO_ERR_NOENT;
		}
		if (!S_ISDIR(st.st_mode) || jail_is_sysdir(real)) {
			jail_setf(err, errlen,
			    "workspace %s: not a directory a jail can use",
			    spec->workspace);
			return -SHIRO_ERR_INVAL;
		}
		p->ws = xstrdup(real);
	}
	p->unjailed = spec->unjailed;
	p->net = spec->net != 0;
	(void)snprintf(p->uid_map, sizeof(p->uid_map), "%u %u 1\n",
	    (unsigned)geteuid(), (unsigned)geteuid());
	(void)snprintf(p->gid_map, sizeof(p->gid_map), "%u %u 1\n",
	    (unsigned)getegid(), (unsigned)getegid());
	for (i = 0; i < sizeof(jail_sysdirs) / sizeof(jail_sysdirs[0]); i++) {
		struct jailinit_sys *s = &p->sys[p->nsys];
		(void)snprintf(buf, sizeof(buf), "/%s", jail_sysdirs[i]);
		if (lstat(buf, &st) != 0)
			continue;
		if (S_ISLNK(st.st_mode)) {
			ln = readlink(buf, s->link, sizeof(s->link) - 1);
			if (ln <= 0)
				continue;
			s->link[ln] = '\0';
			s->is_link = 1;
		} else if (!S_ISDIR(st.st_mode)) {
			continue;
		}
		(void)snprintf(s->name, sizeof(s->name), "%s", jail_sysdirs[i]);
		p->nsys++;
	}
	p->hide_etc = geteuid() == 0 ? jail_etc_secrets : NULL;
	/* With the network on, name resolution must work: where
	 * /etc/resolv.conf points into /run (systemd-resolved), that one
	 * directory comes along, read-only.  /run itself stays absent. */
	if (p->net && lstat("/etc/resolv.conf", &st) == 0 &&
	    S_ISLNK(st.st_mode) && realpath("/etc/resolv.conf", buf) != NULL &&
	    strncmp(buf, "/run/", 5) == 0 && strrchr(buf, '/') > buf + 4) {
		*strrchr(buf, '/') = '\0';
		if (strlen(buf) < sizeof(p->resolv_dir))
			memcpy(p->resolv_dir, buf, strlen(buf) + 1);
	}

	for (n = 0; ro[n] != NULL; n++)
		;
	p->ro_sub = xcalloc(n + 1, sizeof(char *));
	for (i = 0; i < n; i++) {
		if (ro[i][0] == '/' || ro[i][0] == '\0') {
			jail_setf(err, errlen,
			    "read-only subpath %s: not "
			    "relative",
			    ro[i]);
			return -SHIRO_ERR_INVAL;
		}
		/* Resolved on the host like a hidden path: the real target
		 * inside the workspace is what becomes read-only. */
		if (p->ws != NULL) {
			char *abs = xasprintf("%s/%s", p->ws, ro[i]);
			char *rel = jail_inside(p->ws, abs);
			free(abs);
			if (rel != NULL)
				p->ro_sub[p->nro++] = rel;
		}
	}
	v = getenv("SHIRO_HOME");
	jail_add_hide(p, v, &cap);
	if (home != NULL && home[0] == '/') {
		for (i = 0; jail_home_secrets[i] != NULL; i++) {
			char *abs =
			    xasprintf("%s/%s", home, jail_home_secrets[i]);
			jail_add_hide(p, abs, &cap);
			free(abs);
		}
	}
	for (i = 0; spec->hide_paths != NULL && spec->hide_paths[i] != NULL;
	     i++)
		jail_add_hide(p, spec->hide_paths[i], &cap);

	if (spec->cwd != NULL && spec->cwd[0] == '/')
		p->cwd = xstrdup(spec->cwd);
	else if (spec->cwd != NULL && p->ws != NULL)
		p->cwd = xasprintf("%s/%s", p->ws, spec->cwd);
	else if (p->ws != NULL)
		p->cwd = xstrdup(p->ws);
	else
		p->cwd = xstrdup(spec->unjailed ? "/" : "/tmp");

	for (n = 0; spec->argv[n] != NULL; n++)
		;
	p->argv = xcalloc(n + 1, sizeof(char *));
	for (i = 0; i < n; i++)
		p->argv[i] = (char *)spec->argv[i];
	for (n = 0; envp[n] != NULL; n++)
		;
	p->envp = xcalloc(n + 1, sizeof(char *));
	p->path = JAIL_PATH;
	for (i = 0; i < n; i++) {
		p->envp[i] = (char *)envp[i];
		if (strncmp(envp[i], "PATH=", 5) == 0)
			p->path = envp[i] + 5;
	}

	p->lim.cpu_s = spec->limits.cpu_s ? spec->limits.cpu_s : 600;
	p->lim.as_bytes =
	    spec->limits.as_bytes ? spec->limits.as_bytes : 4096 * JAIL_MIB;
	p->lim.nproc = spec->limits.nproc ? spec->limits.nproc : 512;
	p->lim.fsize_bytes = spec->limits.fsize_bytes ? spec->limits.fsize_bytes
						      : 1024 * JAIL_MIB;
	p->lim.nofile = spec->limits.nofile ? spec->limits.nofile : 1024;
	p->lim.mem_bytes =
	    spec->limits.mem_bytes ? spec->limits.mem_bytes : 4096 * JAIL_MIB;
	p->lim.tmp_bytes =
	    spec->limits.tmp_bytes ? spec->limits.tmp_bytes : 256 * JAIL_MIB;
	(void)snprintf(p->tmp_size, sizeof(p->tmp_size), "size=%llu,mode=1777",
	    (unsigned long long)p->lim.tmp_bytes);
	p->ll_ro[0] = "/";
	p->ll_rw[0] = "/tmp";
	p->ll_rw[1] = "/dev";
	p->ll_rw[2] = p->ws;
	return 0;
}

/* jail_highfd - fd moved (or copied) to a number >= 3, close-on-exec. */
static int
jail_highfd(int fd)
{
	int h;

	if (fd >= 3)
		return fd;
	h = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	close(fd);
	return h;
}

/* jail_close - close *fd if open and set it to -1. */
static void
jail_close(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* jail_kill - kill the whole tree. */
static void
jail_kill(struct jail *j)
{
	if (j->reaped)
		return;
	if (j->have_cg)
		cgroup_kill(&j->cg);
	if (j->unjailed)
		(void)kill(-j->pid, SIGKILL);
	if (j->pidfd >= 0)
		(void)syscall(
		    SYS_pidfd_send_signal, j->pidfd, SIGKILL, NULL, 0);
	else
		(void)kill(j->pid, SIGKILL);
	j->killed = 1;
}

/* jail_start - start spec's command. */
int
jail_start(
    const struct jail_spec *spec, struct jail **jp, char *err, size_t errlen)
{
	struct jailinit_plan plan;
	struct jail_features f;
	struct jailinit_err ce;
	struct jail *j = NULL;
	int errp[2] = {-1, -1}, statp[2] = {-1, -1};
	int outp[2] = {-1, -1}, errpp[2] = {-1, -1};
	int devnull = -1, pidfd = -1, rc;
	unsigned long flags;
	char name[64];
	ssize_t n;
	long pid;

	*jp = NULL;
	if (err != NULL && errlen > 0)
		err[0] = '\0';
	rc = jail_plan(spec, &plan, err, errlen);
	if (rc != 0)
		goto out;
	/* The kernel's features are probed only when something fails:
	 * probing costs a fork, and the jail's own set-up is the test. */
	if (!spec->unjailed) {
		plan.prog = jail_filter(plan.net);
		if (plan.prog == NULL) {
			jail_setf(
			    err, errlen, "cannot build the seccomp filter");
			rc = -SHIRO_ERR_FAILED;
			goto out;
		}
	}
	j = xcalloc(1, sizeof(*j));
	j->pidfd = j->out_r = j->err_r = j->stat_r = -1;
	j->unjailed = spec->unjailed;
	j->cancel = spec->cancel;
	j->fn = spec->on_output;
	j->arg = spec->on_output_arg;

	rc = -SHIRO_ERR_IO;
	if (pipe2(errp, O_CLOEXEC) != 0 || pipe2(statp, O_CLOEXEC) != 0)
		goto fail_errno;
	devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (devnull < 0)
		goto fail_errno;
	if (spec->on_output != NULL) {
		if (pipe2(outp, O_CLOEXEC) != 0 || pipe2(errpp, O_CLOEXEC) != 0)
			goto fail_errno;
		plan.fd_out = outp[1];
		plan.fd_err = errpp[1];
	} else {
		plan.fd_out = spec->stdout_fd >= 0 ? spec->stdout_fd : devnull;
		plan.fd_err = spec->stderr_fd >= 0 ? spec->stderr_fd : devnull;
	}
	plan.fd_in = spec->stdin_fd >= 0 ? spec->stdin_fd : devnull;
	errp[1] = jail_highfd(errp[1]);
	statp[1] = jail_highfd(statp[1]);
	if (errp[1] < 0 || statp[1] < 0)
		goto fail_errno;
	plan.err_w = errp[1];
	plan.stat_w = statp[1];
	/* For init to see whether we died before its parent-death signal
	 * was set. */
	plan.parent_fd = (int)syscall(SYS_pidfd_open, getpid(), 0);

	pthread_mutex_lock(&jail_lock);
	(void)snprintf(name, sizeof(name), "shiro-jail-%ld-%u", (long)getpid(),
	    jail_seq++);
	pthread_mutex_unlock(&jail_lock);
	j->have_cg = cgroup_create(
			 &j->cg, name, plan.lim.nproc, plan.lim.mem_bytes) == 0;
	(void)snprintf(plan.pid_max, sizeof(plan.pid_max), "%llu",
	    (unsigned long long)(plan.lim.nproc < 300 ? 301
						      : plan.lim.nproc + 1));

	/* Exit signal 0: a worker's generic waitpid(-1) cannot reap it. */
	flags = CLONE_PIDFD;
	if (!spec->unjailed) {
		flags |= FILTER_JAIL_NS;
		if (!plan.net)
			flags |= CLONE_NEWNET;
	}
	j->start_ms = mono_ms();
	pid = -1;
	if (j->have_cg) {
		/* Born in its group: no migration of a running process. */
		struct clone_args ca;
		memset(&ca, 0, sizeof(ca));
		ca.flags = flags | CLONE_INTO_CGROUP;
		ca.pidfd = (uint64_t)(uintptr_t)&pidfd;
		ca.cgroup = (uint64_t)j->cg.dirfd;
		pid = syscall(SYS_clone3, &ca, sizeof(ca));
		if (pid < 0 && errno == ENOSYS) {
			cgroup_destroy(&j->cg);
			j->have_cg = 0;
		}
	}
	if (!j->have_cg)
		pid = syscall(SYS_clone, flags, 0, &pidfd, 0, 0);
	if (pid < 0) {
		if (plan.parent_fd >= 0)
			close(plan.parent_fd);
		goto fail_errno;
	}
	if (pid == 0)
		jailinit_main(&plan);
	if (plan.parent_fd >= 0)
		close(plan.parent_fd);
	j->pid = (pid_t)pid;
	j->pidfd = pidfd;
	fcntl(pidfd, F_SETFD, FD_CLOEXEC);

	jail_close(&errp[1]);
	jail_close(&statp[1]);
	jail_close(&outp[1]);
	jail_close(&errpp[1]);
	jail_close(&devnull);
	j->stat_r = statp[0];
	statp[0] = -1;
	j->out_r = outp[0];
	j->err_r = errpp[0];
	outp[0] = errpp[0] = -1;

	/* Wait for the exec: the error pipe closes on success.  A set-up
	 * that hangs (a dead network file system under the workspace)
	 * still obeys the timeout and the cancel flag. */
	if (spec->timeout_ms > 0)
		j->deadline_ms = j->start_ms + spec->timeout_ms;
	for (;;) {
		struct pollfd pfd = {errp[0], POLLIN, 0};
		if (poll(&pfd, 1, jail_next_ms(j)) > 0) {
			n = read(errp[0], &ce, sizeof(ce));
			if (n >= 0 || errno != EINTR)
				break;
			continue;
		}
		if ((j->cancel != NULL && *j->cancel) ||
		    (j->deadline_ms != 0 && mono_ms() >= j->deadline_ms)) {
			jail_setf(err, errlen, "jail set-up did not finish: %s",
			    j->deadline_ms != 0 && mono_ms() >= j->deadline_ms
				? "timed out"
				: "canceled");
			rc = j->deadline_ms != 0 && mono_ms() >= j->deadline_ms
			    ? -SHIRO_ERR_TIMEOUT
			    : -SHIRO_ERR_CANCELED;
			jail_kill(j);
			(void)waitpid(j->pid, &j->wstatus, __WALL);
			j->reaped = 1;
			goto fail;
		}
	}
	jail_close(&errp[0]);
	if (n > 0) {
		ce.step[sizeof(ce.step) - 1] = '\0';
		jail_setf(err, errlen, "jail set-up failed: %s: %s", ce.step,
		    n == (ssize_t)sizeof(ce) ? strerror(ce.err) : "?");
		jail_kill(j);
		(void)waitpid(j->pid, &j->wstatus, __WALL);
		j->reaped = 1;
		rc = -SHIRO_ERR_FAILED;
		goto fail;
	}
	*jp = j;
	jail_plan_free(&plan);
	return 0;

fail_errno:
	jail_setf(err, errlen, "jail start: %s", strerror(errno));
fail:
	if (!spec->unjailed && rc != -SHIRO_ERR_TIMEOUT &&
	    rc != -SHIRO_ERR_CANCELED) {
		jail_probe(&f);
		if (f.missing[0] != '\0') {
			jail_setf(err, errlen,
			    "the jail needs %s, which this kernel does not "
			    "offer; a person may set unjailed to run anyway",
			    f.missing);
			rc = -SHIRO_ERR_UNSUPP;
		}
	}
	jail_close(&errp[0]);
	jail_close(&errp[1]);
	jail_close(&statp[0]);
	jail_close(&statp[1]);
	jail_close(&outp[0]);
	jail_close(&outp[1]);
	jail_close(&errpp[0]);
	jail_close(&errpp[1]);
	jail_close(&devnull);
	if (j != NULL) {
		jail_close(&j->pidfd);
		jail_close(&j->stat_r);
		jail_close(&j->out_r);
		jail_close(&j->err_r);
		if (j->have_cg)
			cgroup_destroy(&j->cg);
		free(j);
	}
out:
	jail_plan_free(&plan);
	return rc;
}

/* jail_pollfds - the fds to poll for POLLIN. */
size_t
jail_pollfds(const struct jail *j, int *fds, size_t max)
{
	size_t n = 0;

	if (j->out_r >= 0 && n < max)
		fds[n++] = j->out_r;
	if (j->err_r >= 0 && n < max)
		fds[n++] = j->err_r;
	if (!j->reaped && j->pidfd >= 0 && n < max)
		fds[n++] = j->pidfd;
	return n;
}

/* jail_next_ms - milliseconds until jail_step() must run. */
int
jail_next_ms(const struct jail *j)
{
	uint64_t now;

	if (j->deadline_ms == 0 || j->killed)
		return JAIL_TICK_MS;
	now = mono_ms();
	if (now >= j->deadline_ms)
		return 0;
	return j->deadline_ms - now < JAIL_TICK_MS ? (int)(j->deadline_ms - now)
						   : JAIL_TICK_MS;
}

/* jail_read - read what is ready on *fd and pass it on; EOF closes it. */
static void
jail_read(struct jail *j, int *fd, enum jail_stream stream)
{
	char buf[16384];
	ssize_t n;

	n = read(*fd, buf, sizeof(buf));
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n <= 0) {
		jail_close(fd);
		return;
	}
	if (stream == JAIL_STDOUT)
		j->out_bytes += (uint64_t)n;
	else
		j->err_bytes += (uint64_t)n;
	if (j->fn != NULL)
		j->fn(j->arg, stream, buf, (size_t)n);
}

/* jail_reap - collect init (or the unjailed command) if it has ended. */
static void
jail_reap(struct jail *j, int block)
{
	int status, rc;

	if (j->reaped)
		return;
	rc = waitpid(j->pid, &status, __WALL | (block ? 0 : WNOHANG));
	if (rc == 0 || (rc < 0 && errno == EINTR))
		return;
	j->reaped = 1;
	if (rc < 0) {
		/* Somebody else reaped it: no status to report. */
		j->have_status = 0;
		return;
	}
	if (j->unjailed) {
		j->wstatus = status;
		j->have_status = 1;
		/* Whatever the command left behind in its group dies. */
		(void)kill(-j->pid, SIGKILL);
	} else if (read(j->stat_r, &j->wstatus, sizeof(j->wstatus)) ==
	    sizeof(j->wstatus)) {
		j->have_status = 1;
	}
	jail_close(&j->pidfd);
}

/* jail_step - read output, enforce the timeout and cancel, notice the end. */
int
jail_step(struct jail *j, int wait_ms, int *done)
{
	struct pollfd pfd[3];
	int fds[3], w, i;
	size_t n;

	*done = 0;
	if (j->done) {
		*done = 1;
		return 0;
	}
	if (!j->killed && j->cancel != NULL && *j->cancel) {
		j->interrupted = 1;
		jail_kill(j);
	}
	if (!j->killed && j->deadline_ms != 0 && mono_ms() >= j->deadline_ms) {
		j->timed_out = 1;
		jail_kill(j);
	}
	n = jail_pollfds(j, fds, 3);
	for (i = 0; i < (int)n; i++) {
		pfd[i].fd = fds[i];
		pfd[i].events = POLLIN;
		pfd[i].revents = 0;
	}
	w = jail_next_ms(j);
	if (wait_ms < w)
		w = wait_ms;
	if (w < 0)
		w = 0;
	if (n > 0 && poll(pfd, (nfds_t)n, w) < 0 && errno != EINTR)
		return -SHIRO_ERR_IO;
	for (i = 0; i < (int)n; i++) {
		if (pfd[i].revents == 0)
			continue;
		if (pfd[i].fd == j->out_r)
			jail_read(j, &j->out_r, JAIL_STDOUT);
		else if (pfd[i].fd == j->err_r)
			jail_read(j, &j->err_r, JAIL_STDERR);
		else if (pfd[i].fd == j->pidfd)
			jail_reap(j, 0);
	}
	if (j->pidfd < 0 && !j->reaped)
		jail_reap(j, 0);
	if (j->reaped && j->out_r < 0 && j->err_r < 0) {
		j->done = 1;
		*done = 1;
	}
	return 0;
}

/* jail_cancel - kill the run's whole tree now. */
void
jail_cancel(struct jail *j)
{
	if (j == NULL || j->killed || j->reaped)
		return;
	j->interrupted = 1;
	jail_kill(j);
}

/* jail_finish - end the run, fill res, free *jp. */
int
jail_finish(struct jail **jp, struct jail_result *res)
{
	struct jail *j = *jp;
	uint64_t drain_until;
	int done = 0, st;

	memset(res, 0, sizeof(*res));
	if (j == NULL)
		return -SHIRO_ERR_INVAL;
	if (!j->reaped) {
		jail_kill(j);
		jail_reap(j, 1);
	}
	/* The tree is gone, so the pipes reach EOF; bound it anyway (an
	 * unjailed command's orphans may hold them). */
	drain_until = mono_ms() + 1000;
	while (!done && mono_ms() < drain_until)
		if (jail_step(j, 50, &done) != 0)
			break;
	res->wall_ms = mono_ms() - j->start_ms;
	res->timed_out = j->timed_out;
	res->interrupted = j->interrupted;
	res->out_bytes = j->out_bytes;
	res->err_bytes = j->err_bytes;
	st = j->wstatus;
	if (!j->have_status) {
		res->signal = SIGKILL;
	} else if (WIFEXITED(st)) {
		res->exited = 1;
		res->exit_code = WEXITSTATUS(st);
	} else if (WIFSIGNALED(st)) {
		res->signal = WTERMSIG(st);
	}
	jail_close(&j->out_r);
	jail_close(&j->err_r);
	jail_close(&j->stat_r);
	jail_close(&j->pidfd);
	if (j->have_cg)
		cgroup_destroy(&j->cg);
	free(j);
	*jp = NULL;
	return 0;
}

/* jail_run - start, step until done, finish. */
int
jail_run(const struct jail_spec *spec, struct jail_result *res)
{
	struct jail *j;
	int rc, done = 0;

	memset(res, 0, sizeof(*res));
	rc = jail_start(spec, &j, res->error, sizeof(res->error));
	if (rc != 0)
		return rc;
	while (!done) {
		rc = jail_step(j, 1000, &done);
		if (rc != 0)
			break;
	}
	return jail_finish(&j, res);
}
