/*
 * store_db.c - the LMDB side of the store: one environment at
 * chat/tree.lmdb with named databases, write transactions that grow the
 * map when it is full, and the message and key indexes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <lmdb.h>

#include "proto/buf.h"
#include "proto/err.h"
#include "proto/log.h"
#include "proto/xmalloc.h"
#include "store_int.h"

#define STORE_DB_MAP_DEFAULT ((size_t)64 << 20)
#define STORE_DB_GROW_TRIES 24

/* store_be32 - write v big-endian. */
void
store_be32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24);
	p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8);
	p[3] = (unsigned char)v;
}

/* store_be64 - write v big-endian. */
void
store_be64(unsigned char *p, uint64_t v)
{
	store_be32(p, (uint32_t)(v >> 32));
	store_be32(p + 4, (uint32_t)v);
}

/* store_get32 - read a big-endian 32-bit value. */
uint32_t
store_get32(const unsigned char *p)
{
	return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) |
	    ((uint32_t)p[2] << 8) | p[3];
}

/* store_get64 - read a big-endian 64-bit value. */
uint64_t
store_get64(const unsigned char *p)
{
	return ((uint64_t)store_get32(p) << 32) | store_get32(p + 4);
}

/* store_node_key - (l, i) as 9 bytes that sort by level, then index. */
void
store_node_key(unsigned char *k, unsigned l, uint64_t i)
{
	k[0] = (unsigned char)l;
	store_be64(k + 1, i);
}

/* store_ient_pack - an index entry as its 29-byte value. */
void
store_ient_pack(unsigned char *p, const struct store_ient *e)
{
	store_be32(p, e->day);
	store_be64(p + 4, e->off);
	store_be32(p + 12, e->len);
	store_be32(p + 16, e->size);
	p[20] = e->kind;
	store_be64(p + 21, (uint64_t)e->date_ms);
}

/* store_ient_unpack - the entry a 29-byte value holds. */
void
store_ient_unpack(const unsigned char *p, struct store_ient *e)
{
	e->day = store_get32(p);
	e->off = store_get64(p + 4);
	e->len = store_get32(p + 12);
	e->size = store_get32(p + 16);
	e->kind = p[20];
	e->date_ms = (int64_t)store_get64(p + 21);
}

/* store_db_err - the SHIRO_ERR_* code for an LMDB or errno code. */
int
store_db_err(int rc)
{
	switch (rc) {
	case 0:
		return 0;
	case MDB_NOTFOUND:
		return -SHIRO_ERR_NOENT;
	case MDB_KEYEXIST:
		return -SHIRO_ERR_EXIST;
	case MDB_MAP_FULL:
	case MDB_MAP_RESIZED:
		return -SHIRO_ERR_AGAIN;
	case MDB_CORRUPTED:
	case MDB_PAGE_NOTFOUND:
	case MDB_INVALID:
	case MDB_VERSION_MISMATCH:
		return -SHIRO_ERR_CORRUPT;
	case MDB_READERS_FULL:
	case MDB_TXN_FULL:
	case MDB_DBS_FULL:
	case MDB_BAD_VALSIZE:
		return -SHIRO_ERR_TOOBIG;
	case MDB_PANIC:
		return -SHIRO_ERR_IO;
	default:
		if (rc > 0)
			return err_from_errno(rc);
		return -SHIRO_ERR_IO;
	}
}

/*
 * store_db_check_size - refuse a data.mdb shorter than the pages its
 * meta page says are in use: LMDB maps the file and would read past its
 * end (SIGBUS) instead of reporting the damage.
 */
static int
store_db_check_size(struct store *s, const char *path)
{
	MDB_envinfo info;
	MDB_stat st;
	struct stat fst;
	char *file = xasprintf("%s/data.mdb", path);
	uint64_t need;
	int ret = 0;

	if (mdb_env_info(s->env, &info) != 0 ||
	    mdb_env_stat(s->env, &st) != 0) {
		ret = store_fail(s, -SHIRO_ERR_CORRUPT,
		    "lmdb %s: cannot read its meta page", path);
		goto out;
	}
	if (stat(file, &fst) != 0) {
		ret = store_fail(s, err_from_errno(errno), "stat %s: %s", file,
		    strerror(errno));
		goto out;
	}
	need = ((uint64_t)info.me_last_pgno + 1) * st.ms_psize;
	if ((uint64_t)fst.st_size < need)
		ret = store_fail(s, -SHIRO_ERR_CORRUPT,
		    "lmdb %s: data.mdb is %llu bytes but its pages need %llu "
		    "(the file was cut short); move the directory aside and "
		    "the index is rebuilt from the log (summaries are made "
		    "again)",
		    path, (unsigned long long)fst.st_size,
		    (unsigned long long)need);
out:
	free(file);
	return ret;
}

/* store_db_open - create or open the environment and every database. */
int
store_db_open(struct store *s, size_t map_size)
{
	static const struct {
		const char *name;
		size_t off;
	} dbs[] = {
	    {"nodes", offsetof(struct store, db_nodes)},
	    {"nodesize", offsetof(struct store, db_nsize)},
	    {"merges", offsetof(struct store, db_merges)},
	    {"msgindex", offsetof(struct store, db_msgs)},
	    {"keys", offsetof(struct store, db_keys)},
	    {"notes", offsetof(struct store, db_notes)},
	    {"todos", offsetof(struct store, db_todos)},
	    {"meta", offsetof(struct store, db_meta)},
	};
	MDB_txn *txn = NULL;
	MDB_envinfo info;
	char *path;
	size_t k = 0;
	int rc, dead = 0, ret, create, created = 0;
	unsigned flags;

	path = xasprintf("%s/tree.lmdb", s->chat);
	if (!s->read_only && mkdir(path, 0700) == 0) {
		created = 1;
	} else if (!s->read_only && errno != EEXIST) {
		ret = store_fail(s, err_from_errno(errno), "mkdir %s: %s", path,
		    strerror(errno));
		goto out;
	}
	if ((rc = mdb_env_create(&s->env)) != 0) {
		ret = store_fail(
		    s, store_db_err(rc), "lmdb: %s", mdb_strerror(rc));
		goto out;
	}
	s->map_size = map_size != 0 ? map_size : STORE_DB_MAP_DEFAULT;
	mdb_env_set_mapsize(s->env, s->map_size);
	mdb_env_set_maxdbs(s->env, 16);
	/* NOTLS: the fold holds several read transactions in one thread.
	 * No NOSYNC, no WRITEMAP: every commit is durable on return. */
	flags = MDB_NOTLS | MDB_NORDAHEAD | (s->read_only ? MDB_RDONLY : 0);
	if ((rc = mdb_env_open(s->env, path, flags, 0600)) != 0) {
		ret = store_fail(s, store_db_err(rc), "lmdb open %s: %s", path,
		    mdb_strerror(rc));
		goto out;
	}
	/* A new data.mdb must not vanish with its directory entry: LMDB
	 * syncs the file, not the directories it lives in. */
	if (!s->read_only &&
	    ((ret = store_fsync_dir(path)) != 0 ||
		(created && (ret = store_fsync_dir(s->chat)) != 0))) {
		ret = store_fail(s, ret, "fsync %s: %s", path, err_str(ret));
		goto out;
	}
	/* The map is at least the data file: take the size LMDB chose. */
	if (mdb_env_info(s->env, &info) == 0 && info.me_mapsize > s->map_size)
		s->map_size = info.me_mapsize;
	if ((ret = store_db_check_size(s, path)) != 0)
		goto out;
	/* Readers left by a crashed process would pin old pages forever. */
	if ((rc = mdb_reader_check(s->env, &dead)) != 0) {
		ret = store_fail(s, store_db_err(rc), "lmdb reader check: %s",
		    mdb_strerror(rc));
		goto out;
	}
	if (dead > 0)
		log_info("store: cleared %d stale lmdb readers", dead);
	/* Databases that exist open in a read transaction; only a new chat
	 * (or a write-enabled open missing one) needs a write commit. */
	for (create = 0; create < 2; create++) {
		if (create && s->read_only) {
			ret = store_fail(s, -SHIRO_ERR_NOENT,
			    "lmdb: no database %s (a chat never opened "
			    "for writing)",
			    dbs[k].name);
			goto out;
		}
		rc = mdb_txn_begin(s->env, NULL, create ? 0 : MDB_RDONLY, &txn);
		if (rc != 0) {
			ret = store_fail(s, store_db_err(rc), "lmdb txn: %s",
			    mdb_strerror(rc));
			goto out;
		}
		for (k = 0; k < sizeof(dbs) / sizeof(dbs[0]); k++) {
			MDB_dbi *dbi = (MDB_dbi *)((char *)s + dbs[k].off);

			rc = mdb_dbi_open(
			    txn, dbs[k].name, create ? MDB_CREATE : 0, dbi);
			if (rc != 0)
				break;
		}
		if (rc == MDB_NOTFOUND && !create) {
			mdb_txn_abort(txn);
			txn = NULL;
			continue;
		}
		if (rc != 0) {
			ret = store_fail(s, store_db_err(rc), "lmdb db %s: %s",
			    dbs[k].name, mdb_strerror(rc));
			goto out;
		}
		/* Commit, even a read-only transaction: the handles of the
		 * databases it opened would close with an abort. */
		rc = mdb_txn_commit(txn);
		txn = NULL;
		if (rc != 0) {
			ret = store_fail(s, store_db_err(rc), "lmdb commit: %s",
			    mdb_strerror(rc));
			goto out;
		}
		break;
	}
	ret = 0;
out:
	if (txn != NULL)
		mdb_txn_abort(txn);
	free(path);
	return ret;
}

/* store_db_close - close the environment (the data is already durable). */
void
store_db_close(struct store *s)
{
	if (s->env != NULL)
		mdb_env_close(s->env);
	s->env = NULL;
}

/* store_db_read - a read transaction for one lookup or walk. */
int
store_db_read(struct store *s, MDB_txn **txnp)
{
	int rc;

	rc = mdb_txn_begin(s->env, NULL, MDB_RDONLY, txnp);
	if (rc == MDB_MAP_RESIZED) {
		mdb_env_set_mapsize(s->env, 0);
		rc = mdb_txn_begin(s->env, NULL, MDB_RDONLY, txnp);
	}
	if (rc != 0)
		return store_fail(
		    s, store_db_err(rc), "lmdb read txn: %s", mdb_strerror(rc));
	return 0;
}

/* store_db_put_index - the index entry of id, and its key if any. */
int
store_db_put_index(struct store *s, MDB_txn *txn, uint64_t id,
    const struct store_ient *e, const char *key)
{
	unsigned char kb[8], vb[STORE_IENT_BYTES], ib[8];
	MDB_val k = {sizeof(kb), kb}, v = {sizeof(vb), vb};
	int rc;

	store_be64(kb, id);
	store_ient_pack(vb, e);
	if ((rc = mdb_put(txn, s->db_msgs, &k, &v, 0)) != 0)
		return rc;
	if (key == NULL)
		return 0;
	store_be64(ib, id);
	k.mv_size = strlen(key);
	k.mv_data = (void *)key;
	v.mv_size = sizeof(ib);
	v.mv_data = ib;
	rc = mdb_put(txn, s->db_keys, &k, &v, MDB_NOOVERWRITE);
	return rc == MDB_KEYEXIST ? 0 : rc;
}

/* store_db_put_pending - write the deferred index into txn. */
static int
store_db_put_pending(struct store *s, MDB_txn *txn)
{
	size_t k, kk = 0;
	uint64_t id;
	int rc;

	for (k = 0; k < s->npend; k++) {
		const char *key = NULL;

		id = s->indexed + k;
		while (kk < s->npkeys && s->pkeys[kk].id < id)
			kk++;
		if (kk < s->npkeys && s->pkeys[kk].id == id)
			key = s->pkeys[kk].key;
		if ((rc = store_db_put_index(s, txn, id, &s->pend[k], key)) !=
		    0)
			return rc;
	}
	return 0;
}

/* store_db_pending_done - the deferred index is committed: forget it. */
static void
store_db_pending_done(struct store *s)
{
	size_t k;

	s->indexed += s->npend;
	s->npend = 0;
	for (k = 0; k < s->npkeys; k++)
		free(s->pkeys[k].key);
	s->npkeys = 0;
}

/* store_db_write - one durable write transaction, growing a full map. */
int
store_db_write(struct store *s,
    int (*fn)(struct store *s, MDB_txn *txn, void *arg), void *arg)
{
	MDB_txn *txn = NULL;
	int rc, tries, ret;

	if ((ret = store_check(s, 1)) != 0)
		return ret;
	for (tries = 0; tries < STORE_DB_GROW_TRIES; tries++) {
		rc = mdb_txn_begin(s->env, NULL, 0, &txn);
		if (rc == MDB_MAP_RESIZED) {
			mdb_env_set_mapsize(s->env, 0);
			rc = mdb_txn_begin(s->env, NULL, 0, &txn);
		}
		if (rc != 0) {
			s->poisoned = 1;
			return store_fail(s, store_db_err(rc),
			    "lmdb write txn: %s", mdb_strerror(rc));
		}
		rc = store_db_put_pending(s, txn);
		if (rc == 0 && fn != NULL) {
			ret = fn(s, txn, arg);
			if (ret != 0 && ret != -SHIRO_ERR_AGAIN) {
				/* fn refused: nothing of it is written. */
				mdb_txn_abort(txn);
				return ret;
			}
			if (ret == -SHIRO_ERR_AGAIN)
				rc = MDB_MAP_FULL;
		}
		if (rc == 0) {
			rc = mdb_txn_commit(txn);
			txn = NULL;
			if (rc == 0) {
				store_db_pending_done(s);
				return 0;
			}
		} else {
			mdb_txn_abort(txn);
			txn = NULL;
		}
		if (rc != MDB_MAP_FULL) {
			/* A failed commit may have failed its fsync: never
			 * try again in this process (LMDB agrees: the
			 * environment refuses further writes). */
			s->poisoned = 1;
			return store_fail(s, store_db_err(rc),
			    "lmdb commit failed, store needs reopening: %s",
			    mdb_strerror(rc));
		}
		if (s->map_size > ((size_t)1 << 46)) {
			s->poisoned = 1;
			return store_fail(s, -SHIRO_ERR_NOSPC,
			    "lmdb map cannot grow past %zu bytes", s->map_size);
		}
		s->map_size *= 2;
		rc = mdb_env_set_mapsize(s->env, s->map_size);
		if (rc != 0) {
			s->poisoned = 1;
			return store_fail(s, store_db_err(rc),
			    "lmdb map resize: %s", mdb_strerror(rc));
		}
		log_info("store: lmdb map grown to %zu bytes", s->map_size);
	}
	s->poisoned = 1;
	return store_fail(s, -SHIRO_ERR_NOSPC, "lmdb map kept filling up");
}

/* store_db_flush - commit the deferred index on its own. */
int
store_db_flush(struct store *s)
{
	if (s->npend == 0)
		return 0;
	return store_db_write(s, NULL, NULL);
}

/* store_db_ient - id's index entry: deferred ones first, then LMDB. */
int
store_db_ient(struct store *s, uint64_t id, struct store_ient *e)
{
	unsigned char kb[8];
	MDB_val k = {sizeof(kb), kb}, v;
	MDB_txn *txn;
	int rc, ret;

	if (id >= s->count)
		return store_fail(s, -SHIRO_ERR_NOENT, "no message %llu",
		    (unsigned long long)id);
	if (id >= s->indexed) {
		*e = s->pend[id - s->indexed];
		return 0;
	}
	if ((ret = store_db_read(s, &txn)) != 0)
		return ret;
	store_be64(kb, id);
	rc = mdb_get(txn, s->db_msgs, &k, &v);
	if (rc == 0 && v.mv_size != STORE_IENT_BYTES)
		rc = MDB_CORRUPTED;
	if (rc == 0)
		store_ient_unpack(v.mv_data, e);
	mdb_txn_abort(txn);
	if (rc != 0)
		return store_fail(s,
		    rc == MDB_NOTFOUND ? -SHIRO_ERR_CORRUPT : store_db_err(rc),
		    "message index has no valid entry for %llu: %s",
		    (unsigned long long)id, mdb_strerror(rc));
	return 0;
}

/* store_db_key - look key up among deferred keys, then in LMDB. */
int
store_db_key(struct store *s, const char *key, uint64_t *idp)
{
	MDB_val k, v;
	MDB_txn *txn;
	size_t j;
	int rc, ret;

	for (j = 0; j < s->npkeys; j++) {
		if (strcmp(s->pkeys[j].key, key) == 0) {
			*idp = s->pkeys[j].id;
			return 0;
		}
	}
	if ((ret = store_db_read(s, &txn)) != 0)
		return ret;
	k.mv_size = strlen(key);
	k.mv_data = (void *)key;
	rc = mdb_get(txn, s->db_keys, &k, &v);
	if (rc == 0 && v.mv_size == 8)
		*idp = store_get64(v.mv_data);
	else if (rc == 0)
		rc = MDB_CORRUPTED;
	mdb_txn_abort(txn);
	if (rc == MDB_NOTFOUND)
		return -SHIRO_ERR_NOENT;
	if (rc != 0)
		return store_fail(
		    s, store_db_err(rc), "key index: %s", mdb_strerror(rc));
	return 0;
}
