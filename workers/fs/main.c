/*
 * shiro-fs-worker - runs the file tools for the broker, confined to the
 * workspace: no exec, no network (workers/tool/service.c).
 */
#include "workers/tool/service.h"

int
main(int argc, char **argv)
{
	return worker_main(argc, argv, &service_fs_role);
}
