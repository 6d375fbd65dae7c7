/*
 * ws.h - the workspace as the file tools see it: path resolution that
 * cannot leave the workspace directory, whole-file reads, and atomic
 * write sets.
 *
 * Every path is resolved by the kernel with openat2(RESOLVE_BENEATH |
 * RESOLVE_NO_MAGICLINKS) from the workspace directory fd; a resolution
 * for writing adds RESOLVE_NO_SYMLINKS, so no write goes through any
 * symlink, final or intermediate.  Functions return 0 or -errno.
 *
 * A write set (struct ws_txn) is committed all or nothing, even across
 * files and even if the process is killed midway: temps are written
 * next to their targets, a journal in the workspace root
 * (.shiro-journal) names them, and ws_recover() - run before every file
 * tool - rolls an interrupted set back (journal not yet committed) or
 * forward (committed).  docs/tools.md describes the protocol.
 */
#ifndef SHIRO_TOOLS_WS_H
#define SHIRO_TOOLS_WS_H

#include <stddef.h>
#include <sys/stat.h>

#include "proto/buf.h"
#include "tools/tool.h"

#define WS_JOURNAL ".shiro-journal"
#define WS_JOURNAL_PREP ".shiro-journal.prep"
#define WS_TMP_PREFIX ".shiro-tmp-"

/*
 * ws_path - the workspace-relative form of a path argument in *rel
 * (caller frees): an absolute path is accepted only under ctx->wspath;
 * "" becomes ".".  -EXDEV for an absolute path elsewhere, -EINVAL for
 * a NUL byte or an over-long path.
 */
int ws_path(const struct tool_ctx *ctx, json_t *arg, char **rel);

/* ws_open - open rel beneath wsfd; forwrite adds RESOLVE_NO_SYMLINKS. */
int ws_open(int wsfd, const char *rel, int flags, int forwrite, int *fd);

/*
 * ws_parent - open the directory that holds rel's last component
 * (resolved with no symlinks at all) into *dirfd, and point *base into
 * rel at that component.  -EINVAL when rel has no last name ("." or
 * ends in "..").
 */
int ws_parent(int wsfd, const char *rel, int *dirfd, const char **base);

/*
 * ws_mkdirs - create the directories of rel's parent that are missing,
 * one component at a time, never through a symlink.
 */
int ws_mkdirs(int wsfd, const char *rel);

/* ws_read_fd - read all of fd (at most max bytes, else -EFBIG) into b. */
int ws_read_fd(int fd, size_t max, struct buf *b);

/*
 * ws_read_text - read the regular file rel for editing: its bytes in b
 * and its stat in st.  Refuses symlinks, non-regular files, hard-linked
 * files (-EMLINK) and files over TOOL_MAX_FILE (-EFBIG).
 */
int ws_read_text(int wsfd, const char *rel, struct buf *b, struct stat *st);

/* ws_strerror - a sentence for the model about error e on path. */
char *ws_strerror(const char *path, int e);

struct ws_txn;

/* ws_txn_new - an empty write set on the workspace wsfd. */
struct ws_txn *ws_txn_new(int wsfd);

/* ws_txn_destroy - free *t and set it to NULL; nothing is written. */
void ws_txn_destroy(struct ws_txn **t);

/*
 * ws_txn_write - add "rel gets data" (copied).  mode 0 keeps the
 * current file's mode, or 0666 & ~umask for a new file.  excl refuses a
 * file that exists at commit.
 */
void ws_txn_write(struct ws_txn *t, const char *rel, const char *data,
    size_t len, mode_t mode, int excl);

/* ws_txn_unlink - add "rel is removed". */
void ws_txn_unlink(struct ws_txn *t, const char *rel);

/*
 * ws_txn_commit - apply the set: every target checked (no symlink, one
 * link, regular), every temp written and synced, then the renames and
 * unlinks.  On error nothing has changed; *failed names the path (caller
 * frees).  After a kill, ws_recover() completes or undoes the set.
 */
int ws_txn_commit(struct ws_txn *t, char **failed);

/* ws_recover - finish or undo a write set a killed process left. */
int ws_recover(int wsfd);

/* ws_commit_hook - test hook: called between the steps of a commit. */
extern void (*ws_commit_hook)(const char *step);

#endif
