/*
 * cgroup.c - per-run cgroup v2 groups, where the controllers are
 * delegated to us.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "proto/err.h"
#include "proto/log.h"

#include "cgroup.h"

static struct cgroup_info cgroup_info;
static pthread_once_t cgroup_once = PTHREAD_ONCE_INIT;

/* cgroup_self - our group's path in hierarchy ctl ("" = v2) from
 * /proc/self/cgroup, into out. */
static int
cgroup_self(const char *ctl, char *out, size_t outlen)
{
	char line[512], *a, *b;
	FILE *f;
	int rc = -1;

	f = fopen("/proc/self/cgroup", "re");
	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL) {
		line[strcspn(line, "\n")] = '\0';
		a = strchr(line, ':');
		b = a != NULL ? strchr(a + 1, ':') : NULL;
		if (b == NULL)
			continue;
		*b = '\0';
		if (ctl[0] == '\0' ? strcmp(a + 1, "") == 0
				   : strstr(a + 1, ctl) != NULL &&
			    strlen(a + 1) == strlen(ctl)) {
			if ((size_t)snprintf(out, outlen, "%s", b + 1) < outlen)
				rc = 0;
			break;
		}
	}
	fclose(f);
	return rc;
}

/* cgroup_mount - the mount point of hierarchy ctl ("" = v2) and its root,
 * from /proc/self/mountinfo. */
static int
cgroup_mount(
    const char *ctl, char *mnt, size_t mntlen, char *root, size_t rootlen)
{
	char line[1024], r[256], m[256], fstype[64], opts[512];
	char *dash;
	FILE *f;
	int rc = -1;

	f = fopen("/proc/self/mountinfo", "re");
	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL) {
		dash = strstr(line, " - ");
		if (dash == NULL)
			continue;
		if (sscanf(line, "%*s %*s %*s %255s %255s", r, m) != 2 ||
		    sscanf(dash + 3, "%63s %*s %511s", fstype, opts) != 2)
			continue;
		if (ctl[0] == '\0' ? strcmp(fstype, "cgroup2") != 0
				   : strcmp(fstype, "cgroup") != 0)
			continue;
		if (ctl[0] != '\0') {
			/* The controller must be one of the options. */
			char *t, *save = NULL;
			int found = 0;
			for (t = strtok_r(opts, ",", &save); t != NULL;
			     t = strtok_r(NULL, ",", &save))
				if (strcmp(t, ctl) == 0)
					found = 1;
			if (!found)
				continue;
		}
		if ((size_t)snprintf(mnt, mntlen, "%s", m) < mntlen &&
		    (size_t)snprintf(root, rootlen, "%s", r) < rootlen)
			rc = 0;
		break;
	}
	fclose(f);
	return rc;
}

/* cgroup_find - the directory of our own group in hierarchy ctl, if we
 * can create groups under it. */
static void
cgroup_find(const char *ctl, char *out, size_t outlen)
{
	char mnt[256], root[256], self[256];
	const char *rel;

	out[0] = '\0';
	if (cgroup_mount(ctl, mnt, sizeof(mnt), root, sizeof(root)) != 0 ||
	    cgroup_self(ctl, self, sizeof(self)) != 0)
		return;
	rel = self;
	if (strcmp(root, "/") != 0) {
		if (strncmp(self, root, strlen(root)) != 0)
			return;
		rel = self + strlen(root);
	}
	if ((size_t)snprintf(out, outlen, "%s%s", mnt, rel) >= outlen ||
	    access(out, W_OK) != 0)
		out[0] = '\0';
}

/* cgroup_has_word - whether file dir/name lists word. */
static int
cgroup_has_word(const char *dir, const char *name, const char *word)
{
	char path[512], text[512], *t, *save = NULL;
	FILE *f;
	size_t n;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >=
	    sizeof(path))
		return 0;
	f = fopen(path, "re");
	if (f == NULL)
		return 0;
	n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = '\0';
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

	cgroup_find("", ci->v2, sizeof(ci->v2));
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

/* cgroup_create - make this run's group and set its limits. */
int
cgroup_create(
    struct cgroup_run *run, const char *name, uint64_t pids, uint64_t mem)
{
	const struct cgroup_info *ci = cgroup_detect();
	char num[32];

	memset(run, 0, sizeof(*run));
	run->dirfd = -1;
	if (ci->v2[0] == '\0' || (!ci->v2_pids && !ci->v2_mem))
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
	run->dirfd = open(run->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (run->dirfd < 0) {
		(void)rmdir(run->dir);
		run->dir[0] = '\0';
		return -SHIRO_ERR_UNSUPP;
	}
	return 0;
}

/* cgroup_destroy - remove run's group once it is empty; close the fd. */
void
cgroup_destroy(struct cgroup_run *run)
{
	struct timespec ts = {0, 1000000};
	int tries;

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
