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
#include <stdint.h>

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

/*
 * The mount calls of the jail, through the new mount API (system calls
 * only), which the tool worker's namespace uses too (sandbox.c):
 * jailinit_write_file writes text into an existing file;
 * jailinit_open_tree is open_tree(2); jailinit_move attaches the
 * detached tree at (dfd, path), path "" for dfd itself; jailinit_setattr
 * sets mount attributes on tree (recursively if rec); jailinit_fs makes
 * a detached mount of fstype with options ("key=value,flag") and mount
 * attributes attr.  Each returns -1 with errno on failure.
 */
int jailinit_write_file(const char *path, const char *text);
int jailinit_open_tree(int dfd, const char *path, unsigned flags);
int jailinit_move(int tree, int dfd, const char *path);
int jailinit_setattr(int tree, uint64_t set, int rec);
int jailinit_fs(const char *fstype, const char *opts, unsigned attr);

/* The secrets the jail hides (jail.c): paths relative to / that only
 * root may read, and to the home directory; NULL-terminated.  The
 * worker roles hide the same ones (sandbox.c). */
extern const char *const jail_etc_secrets[];
extern const char *const jail_home_secrets[];

/* jail_home_dir - the home directory those are under: $HOME, else the
 * password database's for our uid; NULL if neither (jail.c). */
const char *jail_home_dir(void);

/* The covers made so far: the first cover of each kind is made, later
 * ones are clones of it (same empty tmpfs, same read-only flags), which
 * saves a new file system, or a flag change, per hidden path. */
struct jailinit_covers {
	int devdir; /* a /dev directory, source of its "null" */
	int dir; /* the first directory cover, attached; or -1 */
	int file; /* the first file cover, attached; or -1 */
};

/*
 * jailinit_cover - cover the object at fd (O_PATH, in the caller's own
 * mount namespace, over which it has CAP_SYS_ADMIN) with an empty
 * read-only directory, or with cov->devdir's "null" for a file.  System
 * calls only.  Returns 0, or -1 with errno set and *stepp naming the
 * step.  The jail covers secrets with it, and so does the tool worker's
 * own namespace (sandbox.c).
 */
int jailinit_cover(int fd, struct jailinit_covers *cov, const char **stepp);

#endif
