/*
 * procstat.c - read a process's /proc/PID/stat.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "procstat.h"

/* procstat_read - the stat line of pid, and where its fields start. */
int
procstat_read(
    const char *root, const char *pid, char *buf, size_t len, char **fieldsp)
{
	char path[128], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s/stat", root, pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	p = strrchr(buf, ')');
	if (p == NULL || p[1] != ' ')
		return -1;
	*fieldsp = p + 2;
	return 0;
}
