#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "proto/xmalloc.h"
#include "tools/vec.h"
#include "tools/ws.h"

#define WS_RESOLVE (RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)
#define WS_JOURNAL_NEW ".shiro-journal.new"
#define WS_JOURNAL_MAX (1u << 20)
#define WS_PATH_MAX 4000

void (*ws_commit_hook)(const char *step);

struct ws_op {
	char *rel;
	int unlink;
	char *data;
	size_t len;
	mode_t mode;
	int excl;
	int mkdirs; /* its directory is missing: create it at commit */
	int dirfd;
	const char *base;
	char *tmprel;
	const char *tmpbase;
	int tmp_made;
};

struct ws_txn {
	int wsfd;
	struct ws_op *ops;
	size_t n;
};

/* ws_hook - tell the test hook which step of a commit was reached. */
static void
ws_hook(const char *step)
{
	if (ws_commit_hook != NULL)
		ws_commit_hook(step);
}

/*
 * ws_norm - the lexical normal form of a relative path: no "." or empty
 * components, and "name/.." folded away, as the permission engine folds
 * the path it checks.  The kernel then resolves the very path that was
 * checked: through a symlink, "lnk/.." would otherwise be the parent of
 * the link's target, not the directory holding the link.  A ".." left at
 * the front climbs out, and openat2 refuses it.
 */
static char *
ws_norm(const char *p)
{
	size_t n = strlen(p), i = 0, o = 0, j, k;
	char *out = xmalloc(n + 2);

	while (i < n) {
		j = i;
		while (j < n && p[j] != '/')
			j++;
		if (j - i == 2 && p[i] == '.' && p[i + 1] == '.' && o > 0 &&
		    !(o >= 2 && out[o - 1] == '.' && out[o - 2] == '.' &&
			(o == 2 || out[o - 3] == '/'))) {
			/* Drop the last component written. */
			for (k = o; k > 0 && out[k - 1] != '/'; k--)
				;
			o = k > 0 ? k - 1 : 0;
		} else if (j > i && !(j - i == 1 && p[i] == '.')) {
			if (o > 0)
				out[o++] = '/';
			memcpy(out + o, p + i, j - i);
			o += j - i;
		}
		i = j + 1;
	}
	if (o == 0)
		out[o++] = '.';
	out[o] = '\0';
	return out;
}

/* ws_path - the workspace-relative form of a path argument. */
int
ws_path(const struct tool_ctx *ctx, json_t *arg, char **rel)
{
	const char *s;
	size_t len, wl;

	*rel = NULL;
	if (!json_is_string(arg))
		return -EINVAL;
	s = json_string_value(arg);
	len = json_string_length(arg);
	if (strlen(s) != len || len > WS_PATH_MAX)
		return -EINVAL;
	if (s[0] == '/') {
		/* Only a prefix naming the workspace itself is taken off;
		 * the kernel still resolves the rest beneath the fd. */
		if (ctx->wspath == NULL)
			return -EXDEV;
		wl = strlen(ctx->wspath);
		while (wl > 1 && ctx->wspath[wl - 1] == '/')
			wl--;
		if (strncmp(s, ctx->wspath, wl) != 0 ||
		    (s[wl] != '/' && s[wl] != '\0'))
			return -EXDEV;
		s += wl;
		while (*s == '/')
			s++;
	}
	*rel = ws_norm(s);
	return 0;
}

/* ws_openat2 - openat2 with the workspace's resolve flags, retried on
 * EAGAIN (a concurrent rename made the kernel restart the walk). */
static int
ws_openat2(
    int dirfd, const char *path, int flags, mode_t mode, uint64_t resolve)
{
	struct open_how how;
	int fd = -1, i;

	memset(&how, 0, sizeof(how));
	how.flags = (uint64_t)(flags | O_CLOEXEC);
	how.mode = (flags & O_CREAT) ? mode : 0;
	how.resolve = resolve;
	for (i = 0; i < 64; i++) {
		fd = (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
		if (fd >= 0 || errno != EAGAIN)
			break;
	}
	return fd < 0 ? -errno : fd;
}

/* ws_open - open rel beneath wsfd; forwrite adds RESOLVE_NO_SYMLINKS. */
int
ws_open(int wsfd, const char *rel, int flags, int forwrite, int *fd)
{
	int r;

	r = ws_openat2(wsfd, rel, flags, 0666,
	    WS_RESOLVE | (forwrite ? RESOLVE_NO_SYMLINKS : 0));
	if (r < 0)
		return r;
	*fd = r;
	return 0;
}

/* ws_parent - open the directory holding rel's last name, no symlinks. */
int
ws_parent(int wsfd, const char *rel, int *dirfd, const char **base)
{
	const char *slash = strrchr(rel, '/');
	char *dir;
	int r;

	*dirfd = -1;
	*base = slash ? slash + 1 : rel;
	if (**base == '\0' || strcmp(*base, ".") == 0 ||
	    strcmp(*base, "..") == 0)
		return -EINVAL;
	dir = slash ? xstrndup(rel, (size_t)(slash - rel)) : xstrdup(".");
	if (dir[0] == '\0') {
		free(dir);
		return -EXDEV;
	}
	r = ws_openat2(wsfd, dir, O_RDONLY | O_DIRECTORY, 0,
	    WS_RESOLVE | RESOLVE_NO_SYMLINKS);
	free(dir);
	if (r < 0)
		return r;
	*dirfd = r;
	return 0;
}

/* ws_dirs_ok - 0 when every name of rel could be made: no "." or "..",
 * none empty or longer than NAME_MAX, the last one included; else
 * -EXDEV, -EINVAL or -ENAMETOOLONG.  Checked before the first mkdir,
 * so that a path which fails half-way leaves no directory behind. */
static int
ws_dirs_ok(const char *rel)
{
	const char *p = rel, *end;
	size_t n;

	for (;;) {
		end = strchrnul(p, '/');
		n = (size_t)(end - p);
		if (n == 0 || (n == 1 && p[0] == '.'))
			return -EINVAL;
		if (n == 2 && p[0] == '.' && p[1] == '.')
			return -EXDEV;
		if (n > NAME_MAX)
			return -ENAMETOOLONG;
		if (*end == '\0')
			return 0;
		p = end + 1;
	}
}

/* ws_mkdirs - create the missing directories above rel. */
int
ws_mkdirs(int wsfd, const char *rel)
{
	const char *p = rel, *slash;
	char *name;
	int fd, next, r;

	if ((r = ws_dirs_ok(rel)) < 0)
		return r;
	fd = openat(wsfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while ((slash = strchr(p, '/')) != NULL) {
		name = xstrndup(p, (size_t)(slash - p));
		if (strcmp(name, "..") == 0 || strcmp(name, ".") == 0) {
			free(name);
			r = -EXDEV;
			break;
		}
		if (mkdirat(fd, name, 0777) < 0 && errno != EEXIST) {
			r = -errno;
			free(name);
			break;
		}
		next = openat(
		    fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		free(name);
		if (next < 0) {
			r = -errno;
			break;
		}
		close(fd);
		fd = next;
		p = slash + 1;
	}
	close(fd);
	return r;
}

/* ws_read_fd - read all of fd, at most max bytes, into b. */
int
ws_read_fd(int fd, size_t max, struct buf *b)
{
	ssize_t n;

	for (;;) {
		buf_reserve(b, 65536);
		n = read(fd, b->data + b->len, b->cap - b->len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		b->len += (size_t)n;
		b->data[b->len] = '\0';
		if (b->len > max)
			return -EFBIG;
	}
	if (b->data == NULL)
		buf_adds(b, "");
	return 0;
}

/* ws_read_text - read a regular, singly linked file rel for editing. */
int
ws_read_text(int wsfd, const char *rel, struct buf *b, struct stat *st)
{
	int fd, r;

	r = ws_open(wsfd, rel, O_RDONLY | O_NONBLOCK | O_NOCTTY, 1, &fd);
	if (r < 0)
		return r;
	if (fstat(fd, st) < 0)
		r = -errno;
	else if (S_ISDIR(st->st_mode))
		r = -EISDIR;
	else if (!S_ISREG(st->st_mode))
		r = -ENXIO;
	else if (st->st_nlink > 1)
		r = -EMLINK;
	else if ((size_t)st->st_size > TOOL_MAX_FILE)
		r = -EFBIG;
	else
		r = ws_read_fd(fd, TOOL_MAX_FILE, b);
	close(fd);
	return r;
}

/* ws_strerror - a sentence for the model about error e on path. */
char *
ws_strerror(const char *path, int e)
{
	const char *why;

	if (e < 0)
		e = -e;
	switch (e) {
	case EXDEV:
		why = "is outside the workspace (paths are resolved beneath "
		      "the workspace; absolute paths, \"..\" above it and "
		      "symlinks leading out are refused)";
		break;
	case ELOOP:
		why = "goes through a symlink; writes never follow symlinks";
		break;
	case ENOENT:
		why = "does not exist";
		break;
	case ENOTDIR:
		why = "has a component that is not a directory";
		break;
	case EISDIR:
		why = "is a directory";
		break;
	case ENXIO:
		why = "is not a regular file";
		break;
	case EMLINK:
		why = "has more than one hard link; shiro refuses hard-linked "
		      "files because a link may lead outside the workspace";
		break;
	case EFBIG:
		why = "is too large (the file tools handle up to 8 MiB)";
		break;
	case EEXIST:
		why = "already exists";
		break;
	case EACCES:
	case EPERM:
		why = "is not accessible (permission denied)";
		break;
	case EINVAL:
		why = "is not a valid path here";
		break;
	case EBUSY:
		why = "is being changed by another write set; try again";
		break;
	case ENOSPC:
		why = "could not be written: no space left";
		break;
	default:
		return xasprintf("%s: %s", path, strerror(e));
	}
	return xasprintf("%s %s", path, why);
}

/* ws_txn_new - an empty write set on the workspace wsfd. */
struct ws_txn *
ws_txn_new(int wsfd)
{
	struct ws_txn *t = xcalloc(1, sizeof(*t));

	t->wsfd = wsfd;
	return t;
}

/* ws_txn_destroy - free *t and set it to NULL. */
void
ws_txn_destroy(struct ws_txn **tp)
{
	struct ws_txn *t = *tp;
	size_t i;

	if (t == NULL)
		return;
	for (i = 0; i < t->n; i++) {
		free(t->ops[i].rel);
		free(t->ops[i].data);
		free(t->ops[i].tmprel);
		if (t->ops[i].dirfd >= 0)
			close(t->ops[i].dirfd);
	}
	free(t->ops);
	free(t);
	*tp = NULL;
}

/* ws_txn_add - a new blank operation on rel. */
static struct ws_op *
ws_txn_add(struct ws_txn *t, const char *rel)
{
	struct ws_op *op;

	t->ops = vec_room(t->ops, t->n, sizeof(*t->ops));
	op = &t->ops[t->n++];
	memset(op, 0, sizeof(*op));
	op->rel = xstrdup(rel);
	op->dirfd = -1;
	return op;
}

/* ws_txn_write - add "rel gets data". */
void
ws_txn_write(struct ws_txn *t, const char *rel, const char *data, size_t len,
    mode_t mode, int excl)
{
	struct ws_op *op = ws_txn_add(t, rel);

	op->data = xmemdup(len ? data : "", len ? len : 1);
	op->len = len;
	op->mode = mode;
	op->excl = excl;
}

/* ws_txn_unlink - add "rel is removed". */
void
ws_txn_unlink(struct ws_txn *t, const char *rel)
{
	ws_txn_add(t, rel)->unlink = 1;
}

/* ws_write_all - write all of data to fd. */
static int
ws_write_all(int fd, const char *data, size_t len)
{
	ssize_t n;

	while (len > 0) {
		n = write(fd, data, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		data += n;
		len -= (size_t)n;
	}
	return 0;
}

/* ws_journal_put - write doc to name in the workspace root.  excl: the
 * prepare journal, created exclusively and not synced (after a power
 * loss it can only leave temps behind, never a wrong file); else the
 * commit journal, synced and renamed into place so it appears whole. */
static int
ws_journal_put(int wsfd, const char *name, json_t *doc, int excl)
{
	char *text = json_dumps(doc, JSON_COMPACT);
	const char *target = excl ? name : WS_JOURNAL_NEW;
	int fd = -1, r;

	if (!excl)
		unlinkat(wsfd, WS_JOURNAL_NEW, 0);
	r = ws_openat2(wsfd, target, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW,
	    0600, WS_RESOLVE | RESOLVE_NO_SYMLINKS);
	if (r < 0)
		goto out;
	fd = r;
	r = ws_write_all(fd, text, strlen(text));
	if (excl)
		goto out;
	if (r == 0 && fsync(fd) < 0)
		r = -errno;
	if (r == 0 && renameat(wsfd, WS_JOURNAL_NEW, wsfd, name) < 0)
		r = -errno;
	if (r < 0)
		unlinkat(wsfd, WS_JOURNAL_NEW, 0);
	fsync(wsfd);
out:
	if (fd >= 0)
		close(fd);
	free(text);
	return r == -EEXIST && excl ? -EBUSY : r;
}

/* ws_journal_get - parse the journal name, NULL when absent or bad. */
static json_t *
ws_journal_get(int wsfd, const char *name, int *present)
{
	struct buf b = BUF_INIT;
	json_t *doc = NULL;
	int fd;

	*present = 0;
	if (ws_open(wsfd, name, O_RDONLY | O_NONBLOCK, 1, &fd) < 0)
		return NULL;
	*present = 1;
	if (ws_read_fd(fd, WS_JOURNAL_MAX, &b) == 0)
		doc = json_loadb(b.data, b.len, 0, NULL);
	close(fd);
	buf_free(&b);
	return doc;
}

/* ws_is_tmp - nonzero when rel's last name is one of our temps. */
static int
ws_is_tmp(const char *rel)
{
	const char *base = strrchr(rel, '/');

	base = base ? base + 1 : rel;
	return strncmp(base, WS_TMP_PREFIX, strlen(WS_TMP_PREFIX)) == 0;
}

/* ws_replay - roll one committed operation forward. */
static void
ws_replay(int wsfd, json_t *op)
{
	const char *kind = json_string_value(json_array_get(op, 0));
	const char *a = json_string_value(json_array_get(op, 1));
	const char *b = json_string_value(json_array_get(op, 2));
	const char *ab, *bb;
	int ad = -1, bd = -1;

	if (kind == NULL || a == NULL)
		return;
	if (strcmp(kind, "U") == 0) {
		if (ws_parent(wsfd, a, &ad, &ab) == 0)
			unlinkat(ad, ab, 0);
	} else if (strcmp(kind, "R") == 0 && b != NULL && ws_is_tmp(a)) {
		if (ws_parent(wsfd, a, &ad, &ab) == 0 &&
		    ws_parent(wsfd, b, &bd, &bb) == 0)
			renameat(ad, ab, bd, bb);
	}
	if (ad >= 0) {
		fsync(ad);
		close(ad);
	}
	if (bd >= 0) {
		fsync(bd);
		close(bd);
	}
}

/* ws_lock - take the workspace's write-set lock (flock on a fresh
 * open of the directory, so it is this call's own); the lock fd, or
 * -EBUSY after 10 s of waiting. */
static int
ws_lock(int wsfd)
{
	int fd, i;

	fd = openat(wsfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	for (i = 0; i < 1000; i++) {
		if (flock(fd, LOCK_EX | LOCK_NB) == 0)
			return fd;
		if (errno != EWOULDBLOCK && errno != EINTR)
			break;
		usleep(10000);
	}
	close(fd);
	return -EBUSY;
}

/* ws_recover_locked - ws_recover with the lock held. */
static void
ws_recover_locked(int wsfd)
{
	json_t *doc, *v;
	size_t i;
	int present, fd, acted = 0;
	const char *base;

	doc = ws_journal_get(wsfd, WS_JOURNAL, &present);
	for (i = 0;
	     (v = json_array_get(json_object_get(doc, "ops"), i)) != NULL; i++)
		ws_replay(wsfd, v);
	json_decref(doc);
	if (present)
		acted = unlinkat(wsfd, WS_JOURNAL, 0) == 0;
	doc = ws_journal_get(wsfd, WS_JOURNAL_PREP, &present);
	for (i = 0;
	     (v = json_array_get(json_object_get(doc, "temps"), i)) != NULL;
	     i++) {
		const char *rel = json_string_value(v);
		if (rel == NULL || !ws_is_tmp(rel))
			continue;
		if (ws_parent(wsfd, rel, &fd, &base) == 0) {
			unlinkat(fd, base, 0);
			close(fd);
		}
	}
	json_decref(doc);
	if (present && unlinkat(wsfd, WS_JOURNAL_PREP, 0) == 0)
		acted = 1;
	if (unlinkat(wsfd, WS_JOURNAL_NEW, 0) == 0)
		acted = 1;
	if (acted)
		fsync(wsfd);
}

/* ws_recover - finish (committed) or undo (prepared) a killed set. */
int
ws_recover(int wsfd)
{
	int lock = ws_lock(wsfd);

	if (lock < 0)
		return lock; /* a live process is committing: leave it be */
	ws_recover_locked(wsfd);
	close(lock);
	return 0;
}

/* ws_txn_check - open op's directory and check its target. */
static int
ws_txn_check(struct ws_txn *t, struct ws_op *op)
{
	static unsigned long counter;
	struct timespec ts;
	struct stat st;
	size_t dl;
	int r;

	r = ws_parent(t->wsfd, op->rel, &op->dirfd, &op->base);
	if (r == -ENOENT && !op->unlink) {
		/* Made once the whole set has been checked. */
		if ((r = ws_dirs_ok(op->rel)) < 0)
			return r;
		op->mkdirs = 1;
	} else if (r < 0) {
		return r;
	}
	if (op->mkdirs ||
	    fstatat(op->dirfd, op->base, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		if (!op->mkdirs && (errno != ENOENT || op->unlink))
			return -errno;
		if (op->mode == 0) {
			mode_t um = umask(022);
			umask(um);
			op->mode = 0666 & ~um;
		}
	} else {
		if (S_ISLNK(st.st_mode))
			return -ELOOP;
		if (S_ISDIR(st.st_mode))
			return -EISDIR;
		if (!S_ISREG(st.st_mode))
			return -ENXIO;
		if (st.st_nlink > 1)
			return -EMLINK;
		if (op->excl)
			return -EEXIST;
		if (op->mode == 0)
			op->mode = st.st_mode & 07777;
	}
	if (op->unlink)
		return 0;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	dl = (size_t)(op->base - op->rel);
	op->tmprel =
	    xasprintf("%.*s%s%ld-%lu-%lx", (int)dl, op->rel, WS_TMP_PREFIX,
		(long)getpid(), ++counter, (unsigned long)ts.tv_nsec);
	op->tmpbase = op->tmprel + dl;
	return 0;
}

/* ws_txn_temp - write op's temp next to its target, synced. */
static int
ws_txn_temp(struct ws_op *op)
{
	int fd, r;

	fd = openat(op->dirfd, op->tmpbase,
	    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	op->tmp_made = 1;
	r = ws_write_all(fd, op->data, op->len);
	if (r == 0 && fchmod(fd, op->mode) < 0)
		r = -errno;
	if (r == 0 && fsync(fd) < 0)
		r = -errno;
	close(fd);
	return r;
}

/* ws_same_or_under - b is a or a path under a. */
static int
ws_same_or_under(const char *a, const char *b)
{
	size_t n = strlen(a);

	return strncmp(a, b, n) == 0 && (b[n] == '\0' || b[n] == '/');
}

/* ws_txn_commit - apply the set all or nothing. */
int
ws_txn_commit(struct ws_txn *t, char **failed)
{
	json_t *temps = json_array(), *ops = json_array(), *doc;
	int r = 0, journaled = t->n > 1, lock = -1;
	size_t i, j;
	struct ws_op *op;

	*failed = NULL;
	/* One write set at a time per workspace, across processes; what a
	 * killed one left is dealt with first. */
	lock = ws_lock(t->wsfd);
	if (lock < 0) {
		*failed = xstrdup(".");
		r = lock;
		goto out;
	}
	ws_recover_locked(t->wsfd);
	for (i = 0; i < t->n && r == 0; i++) {
		op = &t->ops[i];
		/* Two operations on one path, or one inside the other (a
		 * file x and x/y), cannot both be done. */
		for (j = 0; j < i; j++)
			if (ws_same_or_under(t->ops[j].rel, op->rel) ||
			    ws_same_or_under(op->rel, t->ops[j].rel))
				r = -EINVAL;
		if (r == 0)
			r = ws_txn_check(t, op);
		if (r < 0) {
			*failed = xstrdup(op->rel);
			goto out;
		}
		if (op->unlink) {
			json_array_append_new(
			    ops, json_pack("[ss]", "U", op->rel));
		} else {
			json_array_append_new(temps, json_string(op->tmprel));
			json_array_append_new(
			    ops, json_pack("[sss]", "R", op->tmprel, op->rel));
		}
	}
	/* Every operation passed its checks: now the missing directories
	 * of new files are made (they stay if a later step fails). */
	for (i = 0; i < t->n; i++) {
		op = &t->ops[i];
		if (!op->mkdirs)
			continue;
		r = ws_mkdirs(t->wsfd, op->rel);
		if (r == 0)
			r = ws_parent(t->wsfd, op->rel, &op->dirfd, &op->base);
		if (r < 0) {
			*failed = xstrdup(op->rel);
			goto out;
		}
	}
	doc = json_pack("{sO}", "temps", temps);
	r = ws_journal_put(t->wsfd, WS_JOURNAL_PREP, doc, 1);
	json_decref(doc);
	if (r < 0) {
		*failed = xstrdup(WS_JOURNAL_PREP);
		goto out;
	}
	ws_hook("prepared");
	for (i = 0; i < t->n; i++) {
		op = &t->ops[i];
		if (op->unlink)
			continue;
		r = ws_txn_temp(op);
		if (r < 0) {
			*failed = xstrdup(op->rel);
			goto undo;
		}
		ws_hook("temp");
	}
	if (journaled) {
		doc = json_pack("{sO}", "ops", ops);
		r = ws_journal_put(t->wsfd, WS_JOURNAL, doc, 0);
		json_decref(doc);
		if (r < 0) {
			*failed = xstrdup(WS_JOURNAL);
			goto undo;
		}
		ws_hook("committed");
	}
	/* From here the set is decided: a failure is reported, the rest
	 * still goes ahead, and a kill is finished by ws_recover(). */
	for (i = 0; i < t->n; i++) {
		int e = 0;
		op = &t->ops[i];
		if (op->unlink) {
			if (unlinkat(op->dirfd, op->base, 0) < 0)
				e = -errno;
		} else if (renameat(op->dirfd, op->tmpbase, op->dirfd,
			       op->base) < 0) {
			e = -errno;
		} else {
			op->tmp_made = 0;
		}
		fsync(op->dirfd);
		if (e < 0 && r == 0) {
			r = e;
			*failed = xstrdup(op->rel);
		}
		ws_hook("applied");
	}
	for (i = 0; i < t->n; i++)
		if (t->ops[i].tmp_made)
			unlinkat(t->ops[i].dirfd, t->ops[i].tmpbase, 0);
	if (journaled)
		unlinkat(t->wsfd, WS_JOURNAL, 0);
	unlinkat(t->wsfd, WS_JOURNAL_PREP, 0);
	fsync(t->wsfd);
	goto out;
undo:
	for (i = 0; i < t->n; i++)
		if (t->ops[i].tmp_made)
			unlinkat(t->ops[i].dirfd, t->ops[i].tmpbase, 0);
	unlinkat(t->wsfd, WS_JOURNAL_PREP, 0);
out:
	if (lock >= 0)
		close(lock);
	json_decref(temps);
	json_decref(ops);
	return r;
}
