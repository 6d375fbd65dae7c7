/*
 * jailinit.h - the jail's child side: set-up inside the new namespaces,
 * the init process, and the command's last steps before execve.
 *
 * jail.c prepares a struct jailinit_plan in the parent (all memory
 * allocated there), clones, and the child runs jailinit_main().  The
 * child uses system calls only: no malloc, no stdio, so a clone() from a
 * multi-threaded worker cannot deadlock on a lock another thread held.
 */
#ifndef SHIRO_JAILINIT_H
#define SHIRO_JAILINIT_H

#include <stddef.h>

#include <linux/filter.h>

#include "jail.h"

#define JAILINIT_MAX_SYS 12

/* One system directory of the host as it appears in the jail. */
struct jailinit_sys {
	char name[16]; /* "usr", "lib", ... */
	char link[256]; /* the symlink's target, when is_link */
	int is_link;
};

/* The set-up error the child reports through the error pipe. */
struct jailinit_err {
	int err; /* errno */
	char step[120]; /* what was being done */
};

struct jailinit_plan {
	int unjailed;
	int net;
	char uid_map[48], gid_map[48];
	struct jailinit_sys sys[JAILINIT_MAX_SYS];
	size_t nsys;
	const char *const *hide_etc; /* /etc entries to hide (root only) */
	char resolv_dir
	    [256]; /* net on: the /run directory resolv.conf points into (systemd-resolved), bound read-only; or "" */
	const char *ws; /* canonical workspace, or NULL */
	char **ro_sub; /* relative to ws */
	size_t nro;
	char **hide_rel; /* relative to ws */
	size_t nhide;
	const char *cwd; /* absolute, inside the jail */
	char **argv;
	char **envp;
	const char *path; /* PATH for the lookup of argv[0] */
	struct jail_limits lim;
	char tmp_size[64]; /* "size=..." of /tmp */
	int fd_in, fd_out, fd_err;
	int err_w; /* error pipe, write end (close-on-exec) */
	int stat_w; /* status pipe, write end: init writes the wait status */
	int parent_fd; /* a pidfd of the monitor, or -1 */
	char pid_max[24]; /* for the new pid namespace */
	const struct sock_fprog *prog;
	const char *ll_ro[2];
	const char *ll_rw[4];
};

/* jailinit_main - the cloned child: set up, fork the command, wait. */
void jailinit_main(struct jailinit_plan *p) __attribute__((noreturn));

#endif
