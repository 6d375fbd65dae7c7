/*
 * shiro-tool-worker - runs bash (each command in a fresh jail) and the
 * file tools for the broker (workers/tool/service.c); or one tool on its
 * own with --once (once.c).
 */
#include <string.h>

#include "proto/log.h"
#include "workers/tool/once.h"
#include "workers/tool/service.h"

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
	worker_main(argc, argv, &service_tool_role);
}
