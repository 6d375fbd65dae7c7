/*
 * cgroup.c - per-run cgroup v2 groups, where the controllers are
 * delegated to us.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#include "proto/err.h"
#include "proto/log.h"

#include "cgroup.h"

static struct cgroup_info cgroup_info;
static pthread_once_t cgroup_once = PTHREAD_ONCE_INIT;

/* cgroup_read - read up to len-1 bytes of path into buf, NUL-ended. */
static int
cgroup_read(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return 0;
}

/* cgroup_v2_mount - where the cgroup v2 hierarchy is mounted: the usual
 * places only (a unified or a hybrid layout). */
static const char *
cgroup_v2_mount(void)
{
	static const char *const places[] = {
	    "/sys/fs/cgroup", "/sys/fs/cgroup/unified"};
	struct statfs sf;
	size_t i;

	for (i = 0; i < sizeof(places) / sizeof(places[0]); i++)
		if (statfs(places[i], &sf) == 0 &&
		    sf.f_type == CGROUP2_SUPER_MAGIC)
			return places[i];
	return NULL;
}

/* cgroup_find - the directory of our own v2 group, if we can create
 * groups under it. */
static void
cgroup_find(char *out, size_t outlen)
{
	char text[4096], *line, *end;
	const char *mnt;

	out[0] = '\0';
	mnt = cgroup_v2_mount();
	if (mnt == NULL ||
	    cgroup_read("/proc/self/cgroup", text, sizeof(text)) != 0)
		return;
	/* The v2 line is "0::/path". */
	for (line = text; line != NULL && *line != '\0'; line = end) {
		end = strchr(line, '\n');
		if (end != NULL)
			*end++ = '\0';
		if (strncmp(line, "0::/", 4) != 0)
			continue;
		if ((size_t)snprintf(out, outlen, "%s%s", mnt,
			strcmp(line + 3, "/") == 0 ? "" : line + 3) >= outlen ||
		    access(out, W_OK) != 0)
			out[0] = '\0';
		return;
	}
}

/* cgroup_has_word - whether file dir/name lists word. */
static int
cgroup_has_word(const char *dir, const char *name, const char *word)
{
	char path[512], text[512], *t, *save = NULL;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >=
		sizeof(path) ||
	    cgroup_read(path, text, sizeof(text)) != 0)
		return 0;
	for (t = strtok_r(text, " \n", &save); t != NULL;
	     t = strtok_r(NULL, " \n", &save))
		if (strcmp(t, word) == 0)
			return 1;
	return 0;
}

/* cgroup_detect_once - fill cgroup_info. */
static void
cgroup_detect_once(void)
{
	struct cgroup_info *ci = &cgroup_info;

	cgroup_find(ci->v2, sizeof(ci->v2));
	if (ci->v2[0] == '\0')
		return;
	/* A child group gets the controllers its parent hands down. */
	ci->v2_pids = cgroup_has_word(ci->v2, "cgroup.subtree_control", "pids");
	ci->v2_mem =
	    cgroup_has_word(ci->v2, "cgroup.subtree_control", "memory");
}

/* cgroup_detect - find the hierarchies we may create groups in; cached. */
const struct cgroup_info *
cgroup_detect(void)
{
	pthread_once(&cgroup_once, cgroup_detect_once);
	return &cgroup_info;
}

/* cgroup_write - write text into dir/name. */
static int
cgroup_write(const char *dir, const char *name, const char *text)
{
	char path[512];
	ssize_t n;
	int fd;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >=
	    sizeof(path))
		return -1;
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = write(fd, text, strlen(text));
	close(fd);
	return n == (ssize_t)strlen(text) ? 0 : -1;
}

/* cgroup_open - open dir/name for writing, -1 on failure. */
static int
cgroup_open(const char *dir, const char *name)
{
	char path[512];

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >=
	    sizeof(path))
		return -1;
	return open(path, O_WRONLY | O_CLOEXEC);
}

/* cgroup_create - make this run's group and set its limits. */
int
cgroup_create(
    struct cgroup_run *run, const char *name, uint64_t pids, uint64_t mem)
{
	const struct cgroup_info *ci = cgroup_detect();
	char num[32];

	memset(run, 0, sizeof(*run));
	run->dirfd = -1;
	run->kill_fd = -1;
	const char *how = getenv("SHIRO_JAIL_CGROUP");

	/* SHIRO_JAIL_CGROUP=off: never; =always: a group even without a
	 * delegated controller (cgroup.kill still works); else only when
	 * a limit can be set. */
	if (how != NULL && strcmp(how, "off") == 0)
		return -SHIRO_ERR_UNSUPP;
	if (ci->v2[0] == '\0' ||
	    (!ci->v2_pids && !ci->v2_mem &&
		(how == NULL || strcmp(how, "always") != 0)))
		return -SHIRO_ERR_UNSUPP;
	if ((size_t)snprintf(run->dir, sizeof(run->dir), "%s/%s", ci->v2,
		name) >= sizeof(run->dir) ||
	    mkdir(run->dir, 0755) != 0) {
		run->dir[0] = '\0';
		return -SHIRO_ERR_UNSUPP;
	}
	(void)snprintf(num, sizeof(num), "%" PRIu64, pids);
	if (ci->v2_pids && pids > 0 &&
	    cgroup_write(run->dir, "pids.max", num) == 0)
		run->pids = 1;
	(void)snprintf(num, sizeof(num), "%" PRIu64, mem);
	if (ci->v2_mem && mem > 0 &&
	    cgroup_write(run->dir, "memory.max", num) == 0) {
		(void)cgroup_write(run->dir, "memory.swap.max", "0");
		run->mem = 1;
	}
	run->kill_fd = cgroup_open(run->dir, "cgroup.kill");
	run->dirfd = open(run->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (run->dirfd < 0) {
		if (run->kill_fd >= 0)
			close(run->kill_fd);
		run->kill_fd = -1;
		(void)rmdir(run->dir);
		run->dir[0] = '\0';
		return -SHIRO_ERR_UNSUPP;
	}
	return 0;
}

/* cgroup_kill - kill every process in run's group (cgroup.kill). */
void
cgroup_kill(const struct cgroup_run *run)
{
	if (run->kill_fd >= 0)
		(void)pwrite(run->kill_fd, "1", 1, 0);
}

/* cgroup_destroy - remove run's group once it is empty; close the fds. */
void
cgroup_destroy(struct cgroup_run *run)
{
	struct timespec ts = {0, 1000000};
	int tries;

	if (run->kill_fd >= 0)
		close(run->kill_fd);
	run->kill_fd = -1;
	if (run->dirfd >= 0)
		close(run->dirfd);
	run->dirfd = -1;
	if (run->dir[0] == '\0')
		return;
	/* A group whose last process just died may be busy for a moment;
	 * bounded retries. */
	for (tries = 0; tries < 200; tries++) {
		if (rmdir(run->dir) == 0 || errno != EBUSY)
			break;
		nanosleep(&ts, NULL);
	}
	if (tries == 200)
		log_warnx("cgroup %s: still busy, left behind", run->dir);
	run->dir[0] = '\0';
}
