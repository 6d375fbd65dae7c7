/*
 * shiro-tool-worker - runs bash (in the jail) and the file tools for
 * the broker, or one tool on its own with --once.
 */
#include <string.h>

#include "proto/log.h"
#include "workers/tool/once.h"

int
main(int argc, char **argv)
{
	int i;

	log_init("shiro-tool-worker", LOG_LEVEL_INFO);
	for (i = 1; i < argc; i++)
		if (strcmp(argv[i], "--once") == 0 ||
		    strcmp(argv[i], "--list") == 0 ||
		    strcmp(argv[i], "--help") == 0 ||
		    strcmp(argv[i], "-h") == 0)
			return once_main(argc, argv);
	log_warnx("the worker mode needs the worker skeleton; use --once");
	return ONCE_EXIT_USAGE;
}
