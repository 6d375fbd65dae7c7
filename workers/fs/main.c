/*
 * shiro-fs-worker - runs the file tools for the broker, confined to the
 * workspace given with --workspace (it refuses to start without one):
 * no exec, no socket (workers/tool/service.c, sandbox/sandbox.h).
 */
#include "workers/tool/service.h"

int
main(int argc, char **argv)
{
	worker_main(argc, argv, &service_fs_role);
}
