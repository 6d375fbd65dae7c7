/* once.h - the tool worker's standalone mode (--once, --list). */
#ifndef SHIRO_WORKERS_TOOL_ONCE_H
#define SHIRO_WORKERS_TOOL_ONCE_H

#include <stdio.h>

#define ONCE_EXIT_USAGE 2 /* bad usage */
#define ONCE_EXIT_WORKSPACE 3 /* no workspace, or no lockdown */

/* once_main - run the standalone mode on argv: returns the exit status,
 * or exits with it once a tool ran (see once.c). */
int once_main(int argc, char **argv);

/* once_usage - print the usage to f. */
void once_usage(FILE *f);

#endif
