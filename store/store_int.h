/*
 * store_int.h - what the store's files share and nobody else sees: the
 * struct store, the common helpers (store_util.c), the LMDB helpers
 * (store_db.c) and the log line codec and scanner (store_log.c).
 */
#ifndef SHIRO_STORE_INT_H
#define SHIRO_STORE_INT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <lmdb.h>

#include "proto/buf.h"
#include "store.h"

/* Where a message's line is: its day file, offset and length (with the
 * newline), and what the index keeps of the message. */
struct store_ient {
	uint32_t day; /* YYYYMMDD */
	uint32_t len;
	uint64_t off;
	uint32_t size;
	uint8_t kind;
	int64_t date_ms;
};

#define STORE_IENT_BYTES 29 /* day 4, off 8, len 4, size 4, kind 1, date 8 */
#define STORE_NODE_KEY 9 /* l 1, i 8, big-endian */
#define STORE_LINE_MAX (8 * STORE_TEXT_MAX + 1024) /* a log line's bytes */
#define STORE_FLUSH_EVERY 256 /* deferred index entries before a commit */

/* A key appended but not yet committed to the key index. */
struct store_pkey {
	char *key;
	uint64_t id;
};

struct store {
	char *home;
	char *chat; /* home/chat */
	char *main; /* home/chat/main */
	int lockfd;
	pid_t pid; /* the process that opened it */
	int read_only;
	int poisoned;
	int torn; /* read-only open saw a torn tail */
	pid_t owner; /* read-only: the lock's holder, when it was taken */
	struct store_line *view; /* read-only: view.json as it was at open */
	size_t nview;
	int view_rc; /* ... or why it could not be read */
	char *view_err;
	char err[512];

	MDB_env *env;
	MDB_dbi db_nodes, db_nsize, db_merges, db_msgs, db_keys, db_notes,
	    db_todos, db_meta;
	size_t map_size;
	unsigned schema;

	uint64_t count; /* messages in the log: the next id */
	uint64_t indexed; /* ids below are committed to the index */
	struct store_ient *pend; /* ids indexed .. count-1 */
	size_t npend, cappend;
	struct store_pkey *pkeys;
	size_t npkeys, cappkeys;

	uint32_t day; /* the last day file, 0 when none */
	int fd; /* its append descriptor, -1 when not open */
	uint64_t off; /* its length */

	uint32_t rday; /* the day file open for reading */
	int rfd;

	uint64_t nbatches; /* batch records */
	uint64_t last_t; /* t of the last one */
};

/* ---- store_util.c ---- */

/* store_fail - record a one-line reason in s->err; returns code. */
int store_fail(struct store *s, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* store_check - -SHIRO_ERR_STATE after fork or when poisoned, else 0. */
int store_check(struct store *s, int writing);

/* store_day_path - home/chat/main/YYYY-MM-DD.jsonl (caller frees). */
char *store_day_path(const struct store *s, uint32_t day);

/* store_fsync_dir - fsync the directory path. */
int store_fsync_dir(const char *path);

/* ---- store_db.c ---- */

/* store_db_open - open the environment and its databases. */
int store_db_open(struct store *s, size_t map_size);
void store_db_close(struct store *s);

/* store_db_err - map an LMDB return code to a SHIRO_ERR_* code. */
int store_db_err(int rc);

/*
 * store_db_write - run fn in a write transaction that first commits the
 * deferred index, and commit it; on MDB_MAP_FULL grow the map and run
 * fn again (fn must only touch the transaction).  A failed commit other
 * than a full map poisons the store.
 */
int store_db_write(struct store *s,
    int (*fn)(struct store *s, MDB_txn *txn, void *arg), void *arg);

/* store_db_read - begin a read transaction (abort it when done). */
int store_db_read(struct store *s, MDB_txn **txnp);

/* Big-endian packing. */
void store_be32(unsigned char *p, uint32_t v);
void store_be64(unsigned char *p, uint64_t v);
uint32_t store_get32(const unsigned char *p);
uint64_t store_get64(const unsigned char *p);

/* store_node_key - pack (l, i) into 9 bytes. */
void store_node_key(unsigned char *k, unsigned l, uint64_t i);

/* store_ient_pack / _unpack - the index value of a message. */
void store_ient_pack(unsigned char *p, const struct store_ient *e);
void store_ient_unpack(const unsigned char *p, struct store_ient *e);

/* store_db_ient - the index entry of id (committed or deferred). */
int store_db_ient(struct store *s, uint64_t id, struct store_ient *e);

/* store_db_key - the id key was logged with (-SHIRO_ERR_NOENT). */
int store_db_key(struct store *s, const char *key, uint64_t *idp);

/* store_db_flush - commit the deferred index (a write transaction). */
int store_db_flush(struct store *s);

/* store_db_put_index - write ient/key records into txn. */
int store_db_put_index(struct store *s, MDB_txn *txn, uint64_t id,
    const struct store_ient *e, const char *key);

/* ---- store_log.c ---- */

/* A decoded line: text and key point into the json (freed with it). */
struct store_line_rec {
	uint64_t id;
	enum store_kind kind;
	const char *text;
	size_t len;
	uint32_t size;
	int64_t date_ms;
	const char *key;
	void *json; /* json_t *, released by store_log_done */
};

/* store_log_encode - the line of message id (with newline) into out. */
int store_log_encode(struct buf *out, uint64_t id, const struct store_msg_in *m,
    int64_t date_ms);

/* store_log_decode - decode one line (without newline); why gets a
 * reason on -SHIRO_ERR_CORRUPT. */
int store_log_decode(
    const char *line, size_t len, struct store_line_rec *r, const char **why);
void store_log_done(struct store_line_rec *r);

/* store_log_day - the local day YYYYMMDD of date_ms. */
uint32_t store_log_day(int64_t date_ms);

/* store_log_days - the day files in s->main, sorted (caller frees). */
int store_log_days(struct store *s, uint32_t **daysp, size_t *np);

/*
 * store_log_recover - make the log whole and the index complete: scan
 * the lines past the index (all lines with verify), repair a torn tail,
 * index what is missing.  Sets s->count, s->day, s->off.
 */
int store_log_recover(struct store *s, int verify);

/* store_log_now_ms - the wall clock in milliseconds. */
int64_t store_log_now_ms(void);

#endif
