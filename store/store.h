/*
 * store.h - the chat's durable state: the message log, the tree nodes,
 * the merge records, the saved view, notes, todos and message images.
 *
 * Layout under the home directory ($SHIRO_HOME):
 *
 *	chat/lock                   flock held by the owning process
 *	chat/main/YYYY-MM-DD.jsonl  one message per line, append-only
 *	chat/tree.lmdb/             LMDB: nodes, merges, msgindex, keys,
 *	                            notes, todos, meta
 *	chat/view.json              the view as [l, i] pairs
 *	chat/images/                images of messages
 *
 * The log is the truth.  The LMDB message index (id -> file, offset) and
 * the key index are derived from it and are repaired from it at open.
 * docs/store.md describes every record and what a crash leaves.
 *
 * Conventions.  Every function returns 0 or a negative SHIRO_ERR_* code
 * (proto/err.h).  Results come back through out-parameters.  Memory a
 * function returns through a "char **" or a struct documented as owned
 * is the caller's and is released with free() or the named _free
 * function; "const" results are borrowed and valid only until the next
 * call on the same store.  A struct store is used by one thread only,
 * and never in a child after fork(): every call from another process
 * returns -SHIRO_ERR_STATE.  After any call fails, store_errmsg() says
 * why in one line (file and line for damage).
 *
 * Errors most calls can return:
 *	-SHIRO_ERR_STATE    the store is poisoned (an earlier write or fsync
 *	                    failed; close and reopen it) or used after fork
 *	-SHIRO_ERR_IO       a read, write or fsync failed
 *	-SHIRO_ERR_NOSPC    the file system is full
 *	-SHIRO_ERR_CORRUPT  a record on disk does not decode
 */
#ifndef SHIRO_STORE_H
#define SHIRO_STORE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The largest text a non-tool message may have: longer text is split. */
#define STORE_PAGE 30000
/* A tool call (kind tool) and a tool's result (kind echo) are clipped to
 * this many characters, head and tail (rule 9): store_kind_clipped. */
#define STORE_TOOL_CHARS 30000
/* The hard limit on any message's text, in bytes (a clipped tool output
 * of 4-byte characters plus its marker fits). */
#define STORE_TEXT_MAX (4 * STORE_TOOL_CHARS + 256)
/* The largest idempotency key, in bytes. */
#define STORE_KEY_MAX 256
/* A tree node's text is at most this many bytes (rule 11). */
#define STORE_NODE_MAX 512
/* The deepest level a node can have (i << l must fit in 64 bits). */
#define STORE_LEVEL_MAX 63
/* The largest key of a meta record, in bytes. */
#define STORE_KV_KEY_MAX 511
/* The schema version this code writes (meta "schema"). */
#define STORE_SCHEMA 1

/* Message kinds (rules 3-5).  Old logs' "talk" and "unii" read as shiro. */
enum store_kind {
	STORE_KIND_USER = 0,
	STORE_KIND_SHIRO = 1,
	STORE_KIND_TOOL = 2,
	STORE_KIND_ECHO = 3,
	STORE_KIND_WORK = 4,
	STORE_KIND_NOTE = 5,
};
#define STORE_KIND_COUNT 6

struct store;

/* Options for store_open; a zeroed struct (or NULL) means the defaults. */
struct store_opts {
	/* Initial LMDB map size in bytes (0: 64 MiB).  The map grows by
	 * doubling whenever a commit hits MDB_MAP_FULL. */
	size_t map_size;
	/* Check every line of every day file at open, not only the part
	 * past the index (fsck does; slow for a big chat). */
	int verify_all;
	/* Open without taking the lock and without writing anything (fsck
	 * of a live chat, export).  Appends and puts return
	 * -SHIRO_ERR_PERM.  A torn tail is reported, not repaired.
	 * view.json is read first of all, before the index and the log, and
	 * store_view_load gives what it held then: a running shirod writes
	 * it only after the messages it covers are on disk, so it never
	 * covers more than the log this open reads. */
	int read_only;
	/* With read_only: take the lock when it is free and hold it until
	 * store_close, so that no shirod starts on the chat while it is
	 * read (one that tries exits as when another owns it); when a
	 * running shirod holds it, read beside it (store_owner). */
	int lock_if_free;
};

/* Why store_open failed, for the person who reads it. */
struct store_openerr {
	pid_t owner; /* the lock holder's pid, for -SHIRO_ERR_LOCKED */
	char msg[512];
};

/*
 * store_open - open (creating if needed) the chat under home.
 *
 * Takes chat/lock with flock first; then opens LMDB (clearing stale
 * readers), runs schema migrations, and makes the log whole: a torn last
 * line (a crash mid-append, never acknowledged) is cut off and saved in
 * chat/torn/, an unterminated but complete last line is terminated, and
 * log lines past the index are indexed (a crash between the log write
 * and the index commit).  On success *sp is the caller's; release it
 * with store_close().  why may be NULL.
 *
 * Returns -SHIRO_ERR_LOCKED (why->owner is the holder's pid),
 * -SHIRO_ERR_CORRUPT (a damaged line anywhere but the end: why->msg names
 * the file and line), -SHIRO_ERR_UNSUPP (a newer schema), -SHIRO_ERR_IO,
 * -SHIRO_ERR_NOSPC, -SHIRO_ERR_PERM.
 */
int store_open(const char *home, const struct store_opts *opts,
    struct store **sp, struct store_openerr *why);

/* store_close - flush the deferred index, release the lock; *sp = NULL. */
void store_close(struct store **sp);

/* store_errmsg - one line about the last failure on s; borrowed. */
const char *store_errmsg(const struct store *s);

/* store_torn - 1 when a read-only open found a torn last line (left as
 * it is; a writable open cuts it), else 0. */
int store_torn(const struct store *s);

/*
 * store_owner - the pid of the process that held the chat lock when a
 * read-only open with lock_if_free found it taken (a running shirod,
 * still writing the chat), else 0.
 */
pid_t store_owner(const struct store *s);

/* store_home - the home directory s was opened with; borrowed. */
const char *store_home(const struct store *s);

/* ---- Messages ---- */

/* A message to append.  text need not be NUL-terminated and must be
 * valid UTF-8.  key (NUL-terminated, at most STORE_KEY_MAX bytes) makes
 * the append idempotent; NULL for none.  date_ms is milliseconds since
 * the epoch, 0 for now. */
struct store_msg_in {
	enum store_kind kind;
	const char *text;
	size_t len;
	const char *key;
	int64_t date_ms;
};

/*
 * store_append - log one message and return its id in *idp.
 *
 * The line is written with one write() and fsync()ed before this
 * returns 0: a returned id is durable.  If key is already logged, *idp is
 * the id it got then and nothing is written.  text must be at most
 * STORE_PAGE bytes, or for a tool or echo at most STORE_TOOL_CHARS characters
 * plus the clip marker (store_text_clip, store_append_long).
 *
 * Returns -SHIRO_ERR_INVAL (bad kind, invalid UTF-8, bad key),
 * -SHIRO_ERR_TOOBIG, -SHIRO_ERR_NOSPC and -SHIRO_ERR_IO (nothing is
 * acknowledged; after a failed fsync or an unrepairable partial write
 * the store is poisoned: every later append returns -SHIRO_ERR_STATE
 * until it is closed and reopened), -SHIRO_ERR_PERM (read-only).
 */
int store_append(struct store *s, const struct store_msg_in *m, uint64_t *idp);

/*
 * store_append_batch - group commit: log n messages in order, with one
 * write and one fsync per day file they go to; ids[k] gets message k's
 * id.  *durablep (if not NULL) gets how many messages, from the first,
 * are durable when it returns: n on success; on an error, those of the
 * day files whose fsync returned before the failure (and any already
 * logged under their key), whose ids[] are valid and which the store
 * counts; none of the others is.  A crash may keep a prefix of the
 * others, which the keys let a retry complete.  Same errors as
 * store_append.
 */
int store_append_batch(struct store *s, const struct store_msg_in *m, size_t n,
    uint64_t *ids, size_t *durablep);

/*
 * store_poisoned - whether an earlier failure (a failed fsync, a partial
 * write that could not be cut) makes the store refuse every append
 * until it is closed and reopened.
 */
int store_poisoned(const struct store *s);

/*
 * store_append_long - log any text: a tool call or output (kinds tool
 * and echo) is clipped to head and tail (rule 9); other text over STORE_PAGE bytes is split into
 * several messages in a row (rule 10), all in one group commit.  *firstp
 * is the first id and *countp the number of messages.  With a key, part
 * 0 carries the key and part k > 0 carries "key/k"; a key already logged
 * makes the whole call a retry that writes nothing, even when the text
 * now has another length (*firstp and *countp then tell what was logged
 * with it).  Same errors as store_append; on an error *countp is the
 * number of parts from *firstp on that are durable all the same (as
 * store_append_batch's *durablep), 0 when none is.
 */
int store_append_long(struct store *s, const struct store_msg_in *m,
    uint64_t *firstp, size_t *countp);

/* store_count - the number of messages T (the next id). */
uint64_t store_count(const struct store *s);

/* What the index knows of a message, without its text. */
struct store_msg_info {
	uint64_t id;
	enum store_kind kind;
	uint32_t size; /* bytes of text */
	int64_t date_ms;
};

/* A message read back.  Owned by the caller: store_msg_free(). */
struct store_msg {
	uint64_t id;
	enum store_kind kind;
	char *text; /* NUL-terminated; may hold NULs before len */
	size_t len;
	int64_t date_ms;
	char *key; /* NULL when the line has none */
};

/*
 * store_read - read message id through the index (O(log n), no scan).
 * Returns -SHIRO_ERR_NOENT (id >= count), -SHIRO_ERR_CORRUPT (the line
 * at the indexed place does not decode or has another id; store_errmsg
 * names file and offset), -SHIRO_ERR_IO.
 */
int store_read(struct store *s, uint64_t id, struct store_msg *out);

/* store_msg_free - release what store_read filled in; out is zeroed. */
void store_msg_free(struct store_msg *m);

/*
 * store_read_range - read messages first .. first+n-1 (zoom).  *outp is
 * an array of *countp messages (fewer when the chat ends first), owned
 * by the caller: store_msgs_free(*outp, *countp).  Same errors as
 * store_read.
 */
int store_read_range(struct store *s, uint64_t first, size_t n,
    struct store_msg **outp, size_t *countp);
void store_msgs_free(struct store_msg *v, size_t n);

/* store_info - kind, size and date of message id from the index alone.
 * Returns -SHIRO_ERR_NOENT. */
int store_info(struct store *s, uint64_t id, struct store_msg_info *out);

/*
 * store_info_iter - call fn for messages first .. count-1 in order with
 * what the index knows (no log text is read).  fn returns 0 to go on or
 * non-zero to stop, which store_info_iter then returns.
 */
int store_info_iter(struct store *s, uint64_t first,
    int (*fn)(void *arg, const struct store_msg_info *info), void *arg);

/*
 * store_date - message id's date in the local time zone (rule 17), as
 * "Mon 2026-11-30 14:05:09 +0100", into out (at least 40 bytes).
 * Returns -SHIRO_ERR_NOENT, -SHIRO_ERR_TOOBIG (out too small).
 */
int store_date(struct store *s, uint64_t id, char *out, size_t outlen);

/* store_kind_name - "user", "shiro", ...; NULL for a bad kind. */
const char *store_kind_name(enum store_kind kind);

/* store_kind_clipped - whether kind's text is clipped (tool, echo)
 * rather than split into pages. */
int store_kind_clipped(enum store_kind kind);

/* store_kind_parse - the kind named name ("talk" and "unii" give shiro).
 * Returns -SHIRO_ERR_INVAL for an unknown name. */
int store_kind_parse(const char *name, enum store_kind *kindp);

/*
 * store_sync - commit the deferred part of the message index now.
 * Appends are durable in the log when they return; their index entries
 * are committed to LMDB with the next node, merge or kv write, every 256
 * appends, here, or at close (open re-indexes whatever a crash lost).
 */
int store_sync(struct store *s);

/* ---- Long text (pure functions, no store needed) ---- */

/*
 * store_text_clip - text clipped to its first and last characters,
 * max_chars in all (whole UTF-8 characters), joined by a marker line
 * saying how many characters were cut.  Text within max_chars comes back
 * unchanged.  Returns a NUL-terminated copy the caller frees; *outlen is
 * its length.  Invalid UTF-8 counts byte by byte.
 */
char *store_text_clip(
    const char *text, size_t len, size_t max_chars, size_t *outlen);

/*
 * store_text_split - the lengths of the pieces text splits into so that
 * each piece is at most page bytes (page >= 4), cut only between UTF-8
 * characters, at the last line end in the second half of a page when
 * there is one.  The pieces, concatenated, are text byte for byte.
 * *lensp is an array of *np lengths the caller frees (one piece, len
 * bytes, when len <= page; an empty text is one empty piece).
 */
void store_text_split(
    const char *text, size_t len, size_t page, size_t **lensp, size_t *np);

/* ---- Tree nodes (rules 11-13) ---- */

/* A node read back.  text is the caller's: free(). */
struct store_node {
	unsigned l;
	uint64_t i;
	char *text; /* NUL-terminated */
	size_t len; /* bytes of text */
	uint32_t size; /* line size, as given to store_node_put */
	int64_t date_ms;
};

/*
 * store_node_put - store node (l, i) with text (at most STORE_NODE_MAX
 * bytes of valid UTF-8), its line size as the planner counts it
 * (render_flat_size() of the text: the store keeps it so the planner can
 * be rebuilt without reading any text; fsck checks it) and date_ms (0:
 * now), durably (one LMDB commit).  A node is written once: an existing
 * node gives -SHIRO_ERR_EXIST and changes nothing.  The node must be
 * complete ((i+1) << l <= count) and for l > 0 both children must exist,
 * else -SHIRO_ERR_INVAL.  Returns -SHIRO_ERR_TOOBIG (text too long or
 * size > len).
 */
int store_node_put(struct store *s, unsigned l, uint64_t i, const char *text,
    size_t len, uint32_t size, int64_t date_ms);

/* A node to put in a batch. */
struct store_node_in {
	unsigned l;
	uint64_t i;
	const char *text;
	size_t len;
	uint32_t size; /* line size, as for store_node_put */
	int64_t date_ms;
};

/*
 * store_node_put_batch - store n nodes in one commit, all or none.
 * Children may come earlier in the same batch.  Same errors as
 * store_node_put; on error store_errmsg names the node.
 */
int store_node_put_batch(
    struct store *s, const struct store_node_in *v, size_t n);

/* store_node_get - read node (l, i); out is the caller's (free text).
 * Returns -SHIRO_ERR_NOENT. */
int store_node_get(
    struct store *s, unsigned l, uint64_t i, struct store_node *out);

/* store_node_size - node (l, i)'s line size, from a small table of sizes
 * (no text page is read).
 * Returns -SHIRO_ERR_NOENT when it is not built. */
int store_node_size(struct store *s, unsigned l, uint64_t i, uint32_t *sizep);

/*
 * store_node_iter - call fn(arg, l, i, size) for every built node of
 * level l from index i on, in order of i, from the table of sizes (no
 * text is read).  fn returns non-zero to stop, which is returned.
 */
int store_node_iter(struct store *s, unsigned l, uint64_t i,
    int (*fn)(void *arg, unsigned l, uint64_t i, uint32_t size), void *arg);

/*
 * A cursor over the sizes of one level's nodes, in order of i, for a
 * fold that walks all levels side by side.  Opened with
 * store_node_cursor_open (a read transaction held until _close, so keep
 * it short), advanced with _next which returns -SHIRO_ERR_NOENT at the
 * end.
 */
struct store_node_cursor;
int store_node_cursor_open(
    struct store *s, unsigned l, struct store_node_cursor **cp);
int store_node_cursor_next(
    struct store_node_cursor *c, uint64_t *ip, uint32_t *sizep);
void store_node_cursor_close(struct store_node_cursor **cp);

/*
 * store_prefetch - read the size table and the merge records into the
 * page cache with several threads at once, so that a cold fold waits for
 * many small reads in parallel instead of one after another.  The
 * threads are joined before it returns.  Only a hint: errors are
 * ignored.
 */
void store_prefetch(struct store *s);

/* ---- Merge records (D1, F1) ---- */

/* One parent made by a merge, in the order the batch made them. */
struct store_merge {
	unsigned l;
	uint64_t i;
};

/* One batch: the parents it made in order, whether the view is still
 * above its floor afterwards (open), and T when it ran. */
struct store_batch {
	uint64_t seq; /* 0, 1, 2, ... */
	uint64_t t;
	int open;
	size_t n;
	struct store_merge *merges; /* see each function for ownership */
};

/*
 * store_batch_append - log one batch record durably (one LMDB commit),
 * also a batch that merged nothing (F1).  Records are append-only: t must
 * be at least the last record's t and at most count; every parent must
 * be a stored node.  *seqp (may be NULL) gets its seq.  Returns
 * -SHIRO_ERR_INVAL.
 */
int store_batch_append(struct store *s, uint64_t t, int open,
    const struct store_merge *merges, size_t n, uint64_t *seqp);

/*
 * store_batch_iter - call fn for every batch record from seq first on,
 * in order.  b->merges is borrowed and valid only during the call.  fn
 * returns non-zero to stop, which is returned.
 */
int store_batch_iter(struct store *s, uint64_t first,
    int (*fn)(void *arg, const struct store_batch *b), void *arg);

/* store_batch_last - the last record, its merges the caller's (free
 * b->merges).  Returns -SHIRO_ERR_NOENT when there is none. */
int store_batch_last(struct store *s, struct store_batch *b);

/* store_batch_count - the number of batch records. */
int store_batch_count(struct store *s, uint64_t *np);

/*
 * store_tree_commit - nodes, then batch records, in one LMDB commit: all
 * or nothing, with the checks of store_node_put_batch and
 * store_batch_append (a record may merge into nodes of the same call).
 * The seq of each batch is ignored: they get the next ones in order.
 * For writers that build many nodes per batch (shiro-store gen, import).
 */
int store_tree_commit(struct store *s, const struct store_node_in *nodes,
    size_t nn, const struct store_batch *batches, size_t nb);

/* ---- The saved view ---- */

/* One line of the view: node (l, i). */
struct store_line {
	unsigned l;
	uint64_t i;
};

/*
 * store_view_save - replace chat/view.json with lines (oldest first)
 * atomically: temp file, fsync, rename, fsync of the directory.
 */
int store_view_save(struct store *s, const struct store_line *lines, size_t n);

/*
 * store_view_load - read chat/view.json (for a read-only store, as it was
 * when the store was opened).  *linesp is the caller's (free()).  Returns
 * -SHIRO_ERR_NOENT when there is none, -SHIRO_ERR_CORRUPT when it does
 * not decode.
 */
int store_view_load(struct store *s, struct store_line **linesp, size_t *np);

/* ---- Project notes and task lists ---- */

/*
 * A project is a workspace root, an absolute path of at most
 * STORE_PROJECT_MAX bytes of UTF-8.  Its records are keyed by the first
 * 16 bytes of the path's SHA-256, and each keeps the path: one whose
 * path is another is reported -SHIRO_ERR_CORRUPT, never mixed in.
 * Every text is one line: UTF-8 without control characters.
 */
#define STORE_PROJECT_MAX 4096
#define STORE_NOTES_MAX 300 /* notes per project */
#define STORE_NOTE_CHARS 400 /* characters of a note */
#define STORE_TODOS_MAX 50 /* tasks in a list */
#define STORE_TODO_CHARS 300 /* characters of a task's text, of its note */

enum store_note_kind {
	STORE_NOTE_FACT = 0,
	STORE_NOTE_DECISION = 1,
	STORE_NOTE_GOTCHA = 2,
	STORE_NOTE_COMMAND = 3,
};
#define STORE_NOTE_KINDS 4

/* One note of a project. */
struct store_note {
	uint64_t seq; /* its number in the project: later notes, higher */
	enum store_note_kind kind;
	uint64_t hits; /* how often a recall found it */
	int64_t date_ms; /* when it was kept (the caller's clock) */
	char *text; /* NUL-terminated */
	size_t len;
};

/* store_note_kind_name - "fact", "decision", "gotcha", "command". */
const char *store_note_kind_name(enum store_note_kind k);

/* store_note_kind_parse - the kind of that name, or -1. */
int store_note_kind_parse(const char *name);

/*
 * store_note_add - keep a note of project, durably, numbered after its
 * last one (*seqp).  Returns -SHIRO_ERR_INVAL (the path, the kind, a
 * text that is not one line of 1 to STORE_NOTE_CHARS characters),
 * -SHIRO_ERR_EXIST when a note has the same text but for the case of
 * ASCII letters (*seqp is that note's), -SHIRO_ERR_NOSPC when the
 * project has STORE_NOTES_MAX notes, -SHIRO_ERR_CORRUPT (see above).
 */
int store_note_add(struct store *s, const char *project,
    enum store_note_kind kind, const char *text, size_t len, int64_t date_ms,
    uint64_t *seqp);

/*
 * store_note_list - every note of project, oldest first, in *vp (free it
 * with store_notes_free); none is not an error.  A record that does not
 * read is left where it is and counted in *nbadp (may be NULL).
 */
int store_note_list(struct store *s, const char *project,
    struct store_note **vp, size_t *np, size_t *nbadp);

/* store_note_hit - add one to the hits of each note seqs[0..n) in one
 * durable commit; a number with no note is skipped. */
int store_note_hit(
    struct store *s, const char *project, const uint64_t *seqs, size_t n);

/* store_note_del - remove the notes seqs[0..n) in one durable commit;
 * how many there were in *ndelp (may be NULL). */
int store_note_del(struct store *s, const char *project, const uint64_t *seqs,
    size_t n, size_t *ndelp);

/* store_notes_free - release what store_note_list returned. */
void store_notes_free(struct store_note *v, size_t n);

enum store_todo_state {
	STORE_TODO_PENDING = 0,
	STORE_TODO_IN_PROGRESS = 1,
	STORE_TODO_DONE = 2,
	STORE_TODO_BLOCKED = 3,
};
#define STORE_TODO_STATES 4

/* One task of a list. */
struct store_todo {
	enum store_todo_state state;
	char *text;
	char *note; /* "" or NULL when there is none */
};

/* store_todo_state_name - "pending", "in_progress", "done", "blocked". */
const char *store_todo_state_name(enum store_todo_state st);

/* store_todo_state_parse - the state of that name, or -1. */
int store_todo_state_parse(const char *name);

/*
 * store_todo_put - replace project's task list with v[0..n), durably;
 * n == 0 removes it.  Returns -SHIRO_ERR_INVAL (the path, a state, a
 * text that is not one line of 1 to STORE_TODO_CHARS characters, a note
 * of more), -SHIRO_ERR_TOOBIG for more than STORE_TODOS_MAX tasks.
 */
int store_todo_put(
    struct store *s, const char *project, const struct store_todo *v, size_t n);

/*
 * store_todo_get - project's task list in *vp (free it with
 * store_todos_free; each note is "" when it has none); none is 0 with *np
 * 0.  -SHIRO_ERR_CORRUPT when the record does not read (it is left as
 * it is: the next store_todo_put replaces it).
 */
int store_todo_get(
    struct store *s, const char *project, struct store_todo **vp, size_t *np);

/* store_todos_free - release what store_todo_get returned. */
void store_todos_free(struct store_todo *v, size_t n);

/* ---- shirod's own state records (the tool calls in flight) ---- */

/* The largest value of a state record, in bytes. */
#define STORE_STATE_VALUE_MAX (1024 * 1024)

/*
 * store_state_put - set the record key (1 to 505 bytes) to the value,
 * replacing one, durably.  Kept in the meta database under a prefix of
 * their own, so no key names another record.  Returns -SHIRO_ERR_INVAL
 * (the key), -SHIRO_ERR_TOOBIG.
 */
int store_state_put(
    struct store *s, const char *key, const void *val, size_t len);

/* store_state_get - a copy of key's value (NUL-terminated, the caller
 * frees it).  Returns -SHIRO_ERR_NOENT. */
int store_state_get(
    struct store *s, const char *key, char **valp, size_t *lenp);

/* store_state_del - remove key durably.  Returns -SHIRO_ERR_NOENT. */
int store_state_del(struct store *s, const char *key);

/* ---- Usage (tokens per provider and model) ---- */

/* One usage record: the counters of one provider's model. */
struct store_usage {
	char provider[65]; /* no '/'; not empty */
	char model[129]; /* "" is kept as "-" */
	uint64_t input, output, cache_read, cache_write, calls;
};

/*
 * store_usage_add - add each of v[0..n)'s counters to its record (made
 * when new), all in one durable commit.  Returns -SHIRO_ERR_INVAL for a
 * bad name, -SHIRO_ERR_CORRUPT for a stored record that does not read.
 */
int store_usage_add(struct store *s, const struct store_usage *v, size_t n);

/* store_usage_list - every record in key order; *vp is the caller's
 * (free it).  -SHIRO_ERR_CORRUPT for a record that does not read. */
int store_usage_list(struct store *s, struct store_usage **vp, size_t *np);

/* ---- Meta ---- */

/* store_schema - the schema version on disk (after migrations). */
unsigned store_schema(const struct store *s);

/* ---- Images (rule 53) ---- */

/*
 * store_image_put - save an image of message id as chat/images/<id>-<n>.
 * <ext> (n counts the message's images from 0), durably and atomically.
 * ext is a short lower-case extension such as "png".  *np (may be NULL)
 * gets n.  Returns -SHIRO_ERR_NOENT (no such message), -SHIRO_ERR_INVAL.
 */
int store_image_put(struct store *s, uint64_t id, const char *ext,
    const void *data, size_t len, unsigned *np);

/*
 * store_image_list - the paths of message id's images in order; *pathsp
 * is an array of *np strings, all the caller's (free each, then the
 * array).  No images gives *np = 0.
 */
int store_image_list(struct store *s, uint64_t id, char ***pathsp, size_t *np);

#endif
