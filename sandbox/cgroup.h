/*
 * cgroup.h - one cgroup v2 group per jailed run, where the system
 * delegates the pids or memory controller to us.
 *
 * A group bounds what the jail's whole tree uses together (memory
 * above all; processes are also bounded by the pid namespace's own
 * pid_max).  The child is born in the group through clone3's
 * CLONE_INTO_CGROUP: moving a running process between groups takes a
 * lock whose release waits for an RCU grace period, which costs
 * milliseconds per run.  cgroup v1 is not used for the same reason.
 */
#ifndef SHIRO_CGROUP_H
#define SHIRO_CGROUP_H

#include <stdint.h>

/* What the machine offers (cgroup_detect). */
struct cgroup_info {
	char v2[256]; /* our own v2 group's directory, or "" */
	int v2_pids; /* children of it can get pids.max */
	int v2_mem; /* children of it can get memory.max */
};

/* One run's group. */
struct cgroup_run {
	char dir[320]; /* "" if none */
	int dirfd; /* for CLONE_INTO_CGROUP, or -1 */
	int kill_fd; /* cgroup.kill, or -1 */
	int pids, mem; /* 1 when that limit is set */
};

/* cgroup_detect - find where we may create groups; cached. */
const struct cgroup_info *cgroup_detect(void);

/*
 * cgroup_create - make a group named name with pids.max = pids and
 * memory.max = mem.  Returns 0 with run->dirfd open, or
 * SHIRO_ERR_UNSUPP when no controller is delegated to us (run->dirfd is
 * then -1 and nothing was created).
 */
int cgroup_create(
    struct cgroup_run *run, const char *name, uint64_t pids, uint64_t mem);

/* cgroup_kill - kill every process in run's group (cgroup.kill). */
void cgroup_kill(const struct cgroup_run *run);

/* cgroup_destroy - remove run's group once it is empty; close the fd. */
void cgroup_destroy(struct cgroup_run *run);

#endif
