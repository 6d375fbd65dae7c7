/*
 * shiro-tool-worker - runs bash (each command in a fresh jail) and the
 * file tools for the broker; or one tool on its own with --once (see
 * once.c).
 */
#include <string.h>

#include "proto/err.h"
#include "proto/log.h"
#include "sandbox/sandbox.h"
#include "workers/tool/once.h"
#include "workers/tool/service.h"

/* main_setup - the tool role may run commands. */
static int
main_setup(struct worker *w)
{
	return service_setup(w, 1);
}

/* main_lockdown - the tool role's lockdown: only jailed children. */
static int
main_lockdown(struct worker *w)
{
	struct service_cfg *cfg = worker_data(w);

	return sandbox_lockdown(SANDBOX_ROLE_TOOL, cfg->workspace);
}

static const struct worker_role main_role = {
    .role = "tool",
    .provider = "jail",
    .jobs = 1,
    .setup = main_setup,
    .lockdown = main_lockdown,
    .service = service_job,
};

int
main(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++)
		if (strcmp(argv[i], "--once") == 0 ||
		    strcmp(argv[i], "--list") == 0 ||
		    strcmp(argv[i], "--help") == 0 ||
		    strcmp(argv[i], "-h") == 0) {
			log_init("shiro-tool-worker", LOG_LEVEL_INFO);
			return once_main(argc, argv);
		}
	return worker_main(argc, argv, &main_role);
}
