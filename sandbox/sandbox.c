/*
 * sandbox.c - the lockdown each worker role applies to itself.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/prctl.h>

#include "proto/err.h"
#include "proto/log.h"

#include "filter.h"
#include "landlock.h"
#include "sandbox.h"

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

/* sandbox_landlock - the file rules of role, where Landlock exists. */
static int
sandbox_landlock(enum sandbox_role role, const char *workspace)
{
	const char *ro[3] = {NULL, NULL, NULL}, *rw[2] = {NULL, NULL};

	switch (role) {
	case SANDBOX_ROLE_MODEL:
		/* Reads anywhere (certificates, resolver files); no write
		 * anywhere. */
		ro[0] = "/";
		break;
	case SANDBOX_ROLE_FS:
		/* The workspace, and /usr for the C library's own data. */
		if (workspace == NULL)
			return 0;
		ro[0] = "/usr";
		rw[0] = workspace;
		break;
	case SANDBOX_ROLE_TOOL:
		/* Its jailed children need their own file rules, which a
		 * Landlock domain here would cut short. */
		return 0;
	}
	return landlock_restrict(ro, rw, 0) < 0 ? -SHIRO_ERR_FAILED : 0;
}

/* sandbox_lockdown - lock the calling process down for role. */
int
sandbox_lockdown(enum sandbox_role role, const char *workspace)
{
	static const enum filter_policy policy[] = {
	    [SANDBOX_ROLE_MODEL] = FILTER_MODEL,
	    [SANDBOX_ROLE_FS] = FILTER_FS,
	    [SANDBOX_ROLE_TOOL] = FILTER_TOOL,
	};
	struct sock_fprog prog;
	int rc;

	if ((unsigned)role > SANDBOX_ROLE_TOOL)
		return -SHIRO_ERR_INVAL;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
		log_warn("no_new_privs");
		return -SHIRO_ERR_FAILED;
	}
	/* Not dumpable: no core file and no ptrace by the same user.  The
	 * tool worker stays dumpable: its jail children write their own
	 * /proc/self/uid_map, which a non-dumpable process cannot. */
	if (role != SANDBOX_ROLE_TOOL &&
	    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0)
		log_warn("dumpable");
	rc = sandbox_landlock(role, workspace);
	if (rc != 0) {
		log_warnx(
		    "%s lockdown: Landlock failed", sandbox_role_name(role));
		return rc;
	}
	rc = filter_build(policy[role], &prog);
	if (rc != 0)
		return rc;
	rc = filter_install(&prog, 1);
	free(prog.filter);
	if (rc != 0) {
		log_warn("%s lockdown: seccomp", sandbox_role_name(role));
		return errno == EINVAL ? -SHIRO_ERR_UNSUPP : -SHIRO_ERR_FAILED;
	}
	return 0;
}
