/*
 * procstat.h - read a process's /proc/PID/stat.
 */
#ifndef SHIRO_BROKER_PROCSTAT_H
#define SHIRO_BROKER_PROCSTAT_H

#include <stddef.h>

/*
 * procstat_read - read root/pid/stat (pid a number or "self") into buf
 * and point *fieldsp at its third field, the one after "(comm) " (comm
 * may hold spaces and parentheses).  0, or -1 when it cannot be read.
 */
int procstat_read(
    const char *root, const char *pid, char *buf, size_t len, char **fieldsp);

#endif
