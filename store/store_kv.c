/*
 * store_kv.c - the notes and todos databases: byte strings by key.
 */
#include <stdlib.h>
#include <string.h>

#include <lmdb.h>

#include "proto/buf.h"
#include "proto/err.h"
#include "proto/xmalloc.h"
#include "store_int.h"

/* One put or delete. */
struct store_kv_op {
	MDB_dbi dbi;
	const char *key;
	const void *val; /* NULL: delete */
	size_t len;
};

/* store_kv_dbi - the database of db, or -1. */
static int
store_kv_dbi(struct store *s, enum store_kv db, MDB_dbi *dbip)
{
	if (db == STORE_KV_NOTES)
		*dbip = s->db_notes;
	else if (db == STORE_KV_TODOS)
		*dbip = s->db_todos;
	else
		return store_fail(s, -SHIRO_ERR_INVAL, "bad kv database");
	return 0;
}

/* store_kv_key_ok - a key the databases take. */
static int
store_kv_key_ok(struct store *s, const char *key)
{
	size_t n = key != NULL ? strlen(key) : 0;

	if (n == 0 || n > STORE_KV_KEY_MAX)
		return store_fail(s, -SHIRO_ERR_INVAL, "bad key");
	return 0;
}

/* store_kv_fn - do one op in the transaction. */
static int
store_kv_fn(struct store *s, MDB_txn *txn, void *arg)
{
	struct store_kv_op *op = arg;
	MDB_val k = {strlen(op->key), (void *)op->key};
	MDB_val v = {op->len, (void *)op->val};
	int rc;

	if (op->val != NULL)
		rc = mdb_put(txn, op->dbi, &k, &v, 0);
	else
		rc = mdb_del(txn, op->dbi, &k, NULL);
	if (rc == MDB_MAP_FULL)
		return -SHIRO_ERR_AGAIN;
	if (rc == MDB_NOTFOUND)
		return store_fail(s, -SHIRO_ERR_NOENT, "no key %s", op->key);
	if (rc != 0)
		return store_fail(
		    s, store_db_err(rc), "kv: %s", mdb_strerror(rc));
	return 0;
}

/* store_kv_put - set key. */
int
store_kv_put(struct store *s, enum store_kv db, const char *key,
    const void *val, size_t len)
{
	struct store_kv_op op;
	int ret;

	if ((ret = store_check(s, 1)) != 0 ||
	    (ret = store_kv_dbi(s, db, &op.dbi)) != 0 ||
	    (ret = store_kv_key_ok(s, key)) != 0)
		return ret;
	if (len > STORE_KV_VALUE_MAX)
		return store_fail(s, -SHIRO_ERR_TOOBIG, "value too large");
	op.key = key;
	op.val = val != NULL ? val : "";
	op.len = len;
	return store_db_write(s, store_kv_fn, &op);
}

/* store_kv_del - remove key. */
int
store_kv_del(struct store *s, enum store_kv db, const char *key)
{
	struct store_kv_op op;
	int ret;

	if ((ret = store_check(s, 1)) != 0 ||
	    (ret = store_kv_dbi(s, db, &op.dbi)) != 0 ||
	    (ret = store_kv_key_ok(s, key)) != 0)
		return ret;
	op.key = key;
	op.val = NULL;
	op.len = 0;
	return store_db_write(s, store_kv_fn, &op);
}

/* store_kv_get - a copy of key's value. */
int
store_kv_get(struct store *s, enum store_kv db, const char *key, char **valp,
    size_t *lenp)
{
	MDB_dbi dbi = 0;
	MDB_txn *txn;
	MDB_val k, v;
	int rc, ret;

	*valp = NULL;
	if ((ret = store_check(s, 0)) != 0 ||
	    (ret = store_kv_dbi(s, db, &dbi)) != 0 ||
	    (ret = store_kv_key_ok(s, key)) != 0)
		return ret;
	if ((ret = store_db_read(s, &txn)) != 0)
		return ret;
	k.mv_size = strlen(key);
	k.mv_data = (void *)key;
	rc = mdb_get(txn, dbi, &k, &v);
	if (rc == 0) {
		*valp = xmalloc(v.mv_size + 1);
		memcpy(*valp, v.mv_data, v.mv_size);
		(*valp)[v.mv_size] = '\0';
		if (lenp != NULL)
			*lenp = v.mv_size;
	}
	mdb_txn_abort(txn);
	if (rc == MDB_NOTFOUND)
		return -SHIRO_ERR_NOENT;
	if (rc != 0)
		return store_fail(
		    s, store_db_err(rc), "kv: %s", mdb_strerror(rc));
	return 0;
}

/* store_kv_iter - every key in byte order. */
int
store_kv_iter(struct store *s, enum store_kv db,
    int (*fn)(void *arg, const char *key, const void *val, size_t len),
    void *arg)
{
	MDB_dbi dbi = 0;
	MDB_txn *txn;
	MDB_cursor *cur = NULL;
	MDB_val k, v;
	char kb[STORE_KV_KEY_MAX + 1];
	int rc, ret;

	if ((ret = store_check(s, 0)) != 0 ||
	    (ret = store_kv_dbi(s, db, &dbi)) != 0)
		return ret;
	if ((ret = store_db_read(s, &txn)) != 0)
		return ret;
	rc = mdb_cursor_open(txn, dbi, &cur);
	if (rc == 0)
		rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST);
	while (rc == 0) {
		if (k.mv_size > STORE_KV_KEY_MAX) {
			ret = store_fail(s, -SHIRO_ERR_CORRUPT, "kv: bad key");
			break;
		}
		memcpy(kb, k.mv_data, k.mv_size);
		kb[k.mv_size] = '\0';
		if ((ret = fn(arg, kb, v.mv_data, v.mv_size)) != 0)
			break;
		rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT);
	}
	if (ret == 0 && rc != MDB_NOTFOUND)
		ret =
		    store_fail(s, store_db_err(rc), "kv: %s", mdb_strerror(rc));
	if (cur != NULL)
		mdb_cursor_close(cur);
	mdb_txn_abort(txn);
	return ret;
}
