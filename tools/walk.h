/*
 * walk.h - a breadth-first walk of a directory tree under the
 * workspace, honouring .gitignore files and never following symlinks.
 *
 * Symlinks are reported, never descended into.  Each directory is
 * opened by the kernel beneath the workspace (ws_open), so a directory
 * swapped for a symlink leading out while the walk runs is refused.
 * ".git" is always skipped.  Within a level, names are
 * visited in byte order.
 */
#ifndef SHIRO_TOOLS_WALK_H
#define SHIRO_TOOLS_WALK_H

#include <stddef.h>

struct walk_entry {
	const char *rel; /* path relative to the workspace */
	const char *name; /* last component */
	int dirfd; /* the directory holding it, for openat */
	int isdir; /* a directory (not a symlink to one) */
	int islink; /* a symlink */
	int depth; /* 1 for the start directory's entries */
};

/* walk_fn - called per entry; return nonzero to stop the walk. */
typedef int (*walk_fn)(const struct walk_entry *e, void *arg);

/*
 * walk_tree - visit entries under start (relative to the workspace wsfd)
 * down to max_depth levels, at most max_visit entries; returns 0, or
 * -errno when start cannot be opened as a directory.  *truncated is set
 * when max_visit stopped the walk.
 */
int walk_tree(int wsfd, const char *start, int max_depth, size_t max_visit,
    walk_fn fn, void *arg, int *truncated);

#endif
