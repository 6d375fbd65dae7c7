/*
 * shiro-fs-worker - runs the file tools for the broker, confined to the
 * workspace: no exec, no network (sandbox.h, SANDBOX_ROLE_FS).
 */
#include "proto/err.h"
#include "sandbox/sandbox.h"
#include "workers/tool/service.h"

/* main_setup - the fs role never runs commands. */
static int
main_setup(struct worker *w)
{
	return service_setup(w, 0);
}

/* main_lockdown - no exec, no network; Landlock to the workspace. */
static int
main_lockdown(struct worker *w)
{
	struct service_cfg *cfg = worker_data(w);

	return sandbox_lockdown(SANDBOX_ROLE_FS, cfg->workspace);
}

static const struct worker_role main_role = {
    .role = "fs",
    .provider = "fs",
    .jobs = 1,
    .setup = main_setup,
    .lockdown = main_lockdown,
    .service = service_job,
};

int
main(int argc, char **argv)
{
	return worker_main(argc, argv, &main_role);
}
