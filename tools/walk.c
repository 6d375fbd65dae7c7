#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proto/buf.h"
#include "proto/xmalloc.h"
#include "tools/vec.h"
#include "tools/match.h"
#include "tools/walk.h"
#include "tools/ws.h"

#define WALK_IGNORE_MAX (256u << 10)

struct walk_pat {
	char *pat;
	int neg, dironly, anchored;
};

/* The .gitignore of one directory, chained to its parent's. */
struct walk_ign {
	struct walk_ign *parent;
	char *dir; /* workspace-relative, "." for the root */
	struct walk_pat *pats;
	size_t n;
	int refs;
};

struct walk_dir {
	char *rel;
	int depth;
	struct walk_ign *ign;
};

/* walk_ign_unref - drop one reference to an ignore chain. */
static void
walk_ign_unref(struct walk_ign *g)
{
	size_t i;

	while (g != NULL && --g->refs == 0) {
		struct walk_ign *p = g->parent;
		for (i = 0; i < g->n; i++)
			free(g->pats[i].pat);
		free(g->pats);
		free(g->dir);
		free(g);
		g = p;
	}
}

/* walk_ign_load - read dirfd's .gitignore into a new chain link. */
static struct walk_ign *
walk_ign_load(int dirfd, const char *rel, struct walk_ign *parent)
{
	struct walk_ign *g = xcalloc(1, sizeof(*g));
	struct buf b = BUF_INIT;
	char *line, *save = NULL;
	int fd;

	g->parent = parent;
	if (parent != NULL)
		parent->refs++;
	g->dir = xstrdup(rel);
	g->refs = 1;
	fd = openat(dirfd, ".gitignore",
	    O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return g;
	if (ws_read_fd(fd, WALK_IGNORE_MAX, &b) < 0) {
		close(fd);
		buf_free(&b);
		return g;
	}
	close(fd);
	for (line = strtok_r(b.data, "\n", &save); line != NULL;
	     line = strtok_r(NULL, "\n", &save)) {
		struct walk_pat wp = {0};
		size_t l = strlen(line);
		while (l > 0 &&
		    (line[l - 1] == '\r' ||
			(line[l - 1] == ' ' && (l < 2 || line[l - 2] != '\\'))))
			line[--l] = '\0';
		if (l == 0 || line[0] == '#')
			continue;
		if (line[0] == '!') {
			wp.neg = 1;
			line++;
			l--;
		}
		if (l > 0 && line[l - 1] == '/') {
			wp.dironly = 1;
			line[--l] = '\0';
		}
		if (l == 0 || !match_valid(line))
			continue;
		wp.anchored = strchr(line, '/') != NULL;
		if (line[0] == '/')
			line++;
		wp.pat = xstrdup(line);
		g->pats = vec_room(g->pats, g->n, sizeof(*g->pats));
		g->pats[g->n++] = wp;
	}
	buf_free(&b);
	return g;
}

/* walk_ignored - nonzero when rel (a directory if isdir) is ignored. */
static int
walk_ignored(struct walk_ign *g, const char *rel, const char *name, int isdir)
{
	for (; g != NULL; g = g->parent) {
		const char *sub = rel;
		size_t dl = strlen(g->dir);
		size_t i;
		if (strcmp(g->dir, ".") != 0) {
			if (strncmp(rel, g->dir, dl) != 0 || rel[dl] != '/')
				continue;
			sub = rel + dl + 1;
		}
		for (i = g->n; i-- > 0;) {
			struct walk_pat *p = &g->pats[i];
			if (p->dironly && !isdir)
				continue;
			if (match_glob(p->pat, p->anchored ? sub : name, 1))
				return !p->neg;
		}
	}
	return 0;
}

/* walk_cmp - byte order of names, for qsort. */
static int
walk_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* walk_list - the sorted names of the directory dirfd (fd consumed). */
static char **
walk_list(int dirfd, size_t *n)
{
	DIR *d = fdopendir(dirfd);
	struct dirent *de;
	char **names = NULL;
	size_t cap = 0;

	*n = 0;
	if (d == NULL) {
		close(dirfd);
		return NULL;
	}
	while ((de = readdir(d)) != NULL && *n < 100000) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (*n == cap) {
			cap = cap ? cap * 2 : 64;
			names = xreallocarray(names, cap, sizeof(*names));
		}
		names[(*n)++] = xstrdup(de->d_name);
	}
	closedir(d);
	if (*n > 1)
		qsort(names, *n, sizeof(*names), walk_cmp);
	return names;
}

/* walk_start_ign - the ignore chain of the workspace root down to start. */
static struct walk_ign *
walk_start_ign(int wsfd, const char *start)
{
	struct walk_ign *g, *next;
	char *acc = xstrdup(start), *p;
	int fd;

	fd = openat(wsfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	g = walk_ign_load(fd, ".", NULL);
	if (fd >= 0)
		close(fd);
	if (strcmp(start, ".") == 0)
		goto out;
	for (p = strchr(acc, '/');; p = strchr(p + 1, '/')) {
		if (p != NULL)
			*p = '\0';
		if (ws_open(wsfd, acc, O_RDONLY | O_DIRECTORY, 0, &fd) == 0) {
			next = walk_ign_load(fd, acc, g);
			close(fd);
			walk_ign_unref(g);
			g = next;
		}
		if (p == NULL)
			break;
		*p = '/';
	}
out:
	free(acc);
	return g;
}

/* walk_tree - the breadth-first walk. */
int
walk_tree(int wsfd, const char *start, int max_depth, size_t max_visit,
    walk_fn fn, void *arg, int *truncated)
{
	struct walk_dir *q = NULL;
	size_t qn = 0, qcap = 0, qi = 0, visited = 0, n, i;
	int fd, r, stop = 0;
	char **names;

	*truncated = 0;
	r = ws_open(wsfd, start, O_RDONLY | O_DIRECTORY, 0, &fd);
	if (r < 0)
		return r;
	close(fd);
	q = xmalloc(sizeof(*q));
	qcap = 1;
	q[0].rel = xstrdup(start);
	q[0].depth = 0;
	q[0].ign = walk_start_ign(wsfd, start);
	qn = 1;
	for (qi = 0; qi < qn; qi++) {
		struct walk_dir *d = &q[qi];
		struct walk_ign *g;
		int dfd;
		if (stop)
			continue;
		if (ws_open(wsfd, d->rel, O_RDONLY | O_DIRECTORY, 0, &dfd) < 0)
			continue;
		g = d->depth == 0 ? d->ign : walk_ign_load(dfd, d->rel, d->ign);
		if (d->depth == 0)
			g->refs++;
		names = walk_list(dup(dfd), &n);
		for (i = 0; i < n; i++) {
			struct walk_entry e;
			struct stat st;
			char *rel;
			if (stop || strcmp(names[i], ".git") == 0) {
				free(names[i]);
				continue;
			}
			if (fstatat(dfd, names[i], &st, AT_SYMLINK_NOFOLLOW) <
			    0) {
				free(names[i]);
				continue;
			}
			rel = strcmp(d->rel, ".") == 0
			    ? xstrdup(names[i])
			    : xasprintf("%s/%s", d->rel, names[i]);
			e.rel = rel;
			e.name = names[i];
			e.dirfd = dfd;
			e.isdir = S_ISDIR(st.st_mode);
			e.islink = S_ISLNK(st.st_mode);
			e.depth = d->depth + 1;
			if (walk_ignored(g, rel, names[i], e.isdir)) {
				free(rel);
				free(names[i]);
				continue;
			}
			if (++visited > max_visit) {
				*truncated = 1;
				stop = 1;
			} else if (fn(&e, arg)) {
				stop = 1;
			} else if (e.isdir && e.depth < max_depth) {
				if (qn == qcap) {
					qcap *= 2;
					q = xreallocarray(q, qcap, sizeof(*q));
					d = &q[qi];
				}
				q[qn].rel = rel;
				q[qn].depth = e.depth;
				q[qn].ign = g;
				g->refs++;
				qn++;
				rel = NULL;
			}
			free(rel);
			free(names[i]);
		}
		free(names);
		walk_ign_unref(g);
		close(dfd);
	}
	for (i = 0; i < qn; i++) {
		free(q[i].rel);
		walk_ign_unref(q[i].ign);
	}
	free(q);
	return 0;
}
