/*
 * store_kv.c - the notes and todos databases, and shirod's own small
 * state records (kept in the meta database under "state/"): byte
 * strings by key.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lmdb.h>

#include "proto/buf.h"
#include "proto/err.h"
#include "proto/xmalloc.h"
#include "store_int.h"

/* State records live in the meta database under this prefix. */
#define STORE_STATE_PREFIX "state/"

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
	else if (db == STORE_KV_STATE)
		*dbip = s->db_meta;
	else
		return store_fail(s, -SHIRO_ERR_INVAL, "bad kv database");
	return 0;
}

/* store_kv_key - key as db stores it into kb (STORE_KV_KEY_MAX + 1
 * bytes): itself, or for a state record with its prefix, so that it can
 * never name the meta database's own records.  0, or INVAL for an empty
 * or too long key. */
static int
store_kv_key(struct store *s, enum store_kv db, const char *key, char *kb)
{
	size_t n = key != NULL ? strlen(key) : 0;
	size_t pl = db == STORE_KV_STATE ? strlen(STORE_STATE_PREFIX) : 0;

	if (n == 0 || n + pl > STORE_KV_KEY_MAX)
		return store_fail(s, -SHIRO_ERR_INVAL, "bad key");
	memcpy(kb, STORE_STATE_PREFIX, pl);
	memcpy(kb + pl, key, n + 1);
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
	char kb[STORE_KV_KEY_MAX + 1];
	int ret;

	if ((ret = store_check(s, 1)) != 0 ||
	    (ret = store_kv_dbi(s, db, &op.dbi)) != 0 ||
	    (ret = store_kv_key(s, db, key, kb)) != 0)
		return ret;
	if (len > STORE_KV_VALUE_MAX)
		return store_fail(s, -SHIRO_ERR_TOOBIG, "value too large");
	op.key = kb;
	op.val = val != NULL ? val : "";
	op.len = len;
	return store_db_write(s, store_kv_fn, &op);
}

/* store_kv_del - remove key. */
int
store_kv_del(struct store *s, enum store_kv db, const char *key)
{
	struct store_kv_op op;
	char kb[STORE_KV_KEY_MAX + 1];
	int ret;

	if ((ret = store_check(s, 1)) != 0 ||
	    (ret = store_kv_dbi(s, db, &op.dbi)) != 0 ||
	    (ret = store_kv_key(s, db, key, kb)) != 0)
		return ret;
	op.key = kb;
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
	char kb[STORE_KV_KEY_MAX + 1];
	int rc, ret;

	*valp = NULL;
	if ((ret = store_check(s, 0)) != 0 ||
	    (ret = store_kv_dbi(s, db, &dbi)) != 0 ||
	    (ret = store_kv_key(s, db, key, kb)) != 0)
		return ret;
	if ((ret = store_db_read(s, &txn)) != 0)
		return ret;
	k.mv_size = strlen(kb);
	k.mv_data = kb;
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
	/* The meta database holds other records: state is not listed. */
	if (db == STORE_KV_STATE)
		return store_fail(
		    s, -SHIRO_ERR_INVAL, "state records are not listed");
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

/* Usage records live in the meta database under this prefix. */
#define STORE_USAGE_PREFIX "usage/"

/* store_usage_key - "usage/PROVIDER/MODEL" of u into kb; its length, or
 * 0 when a name is empty or too long. */
static size_t
store_usage_key(const struct store_usage *u, char *kb, size_t kbsize)
{
	int n;

	if (u->provider[0] == '\0' || strchr(u->provider, '/') != NULL)
		return 0;
	n = snprintf(kb, kbsize, STORE_USAGE_PREFIX "%s/%s", u->provider,
	    u->model[0] ? u->model : "-");
	return n > 0 && (size_t)n < kbsize ? (size_t)n : 0;
}

/* store_usage_parse - the counters of a record's value; 0 or CORRUPT. */
static int
store_usage_parse(const void *val, size_t len, struct store_usage *u)
{
	char text[160];
	unsigned long long v[5];

	if (len >= sizeof(text))
		return -SHIRO_ERR_CORRUPT;
	memcpy(text, val, len);
	text[len] = '\0';
	if (sscanf(text, "%llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
		&v[4]) != 5)
		return -SHIRO_ERR_CORRUPT;
	u->input = v[0];
	u->output = v[1];
	u->cache_read = v[2];
	u->cache_write = v[3];
	u->calls = v[4];
	return 0;
}

/* The records of one store_usage_add. */
struct store_usage_op {
	const struct store_usage *v;
	size_t n;
};

/* store_usage_fn - add each record's counters to what is stored. */
static int
store_usage_fn(struct store *s, MDB_txn *txn, void *arg)
{
	struct store_usage_op *op = arg;
	struct store_usage have;
	char kb[STORE_KV_KEY_MAX + 1], vb[160];
	MDB_val k, v;
	size_t i, kl;
	int rc, vl;

	for (i = 0; i < op->n; i++) {
		const struct store_usage *u = &op->v[i];

		kl = store_usage_key(u, kb, sizeof(kb));
		if (kl == 0)
			return store_fail(s, -SHIRO_ERR_INVAL, "bad usage key");
		k.mv_size = kl;
		k.mv_data = kb;
		memset(&have, 0, sizeof(have));
		rc = mdb_get(txn, s->db_meta, &k, &v);
		if (rc == 0 &&
		    store_usage_parse(v.mv_data, v.mv_size, &have) != 0)
			return store_fail(s, -SHIRO_ERR_CORRUPT,
			    "usage record %s does not read", kb);
		if (rc != 0 && rc != MDB_NOTFOUND)
			return store_fail(
			    s, store_db_err(rc), "usage: %s", mdb_strerror(rc));
		vl = snprintf(vb, sizeof(vb), "%llu %llu %llu %llu %llu",
		    (unsigned long long)(have.input + u->input),
		    (unsigned long long)(have.output + u->output),
		    (unsigned long long)(have.cache_read + u->cache_read),
		    (unsigned long long)(have.cache_write + u->cache_write),
		    (unsigned long long)(have.calls + u->calls));
		v.mv_size = (size_t)vl;
		v.mv_data = vb;
		rc = mdb_put(txn, s->db_meta, &k, &v, 0);
		if (rc == MDB_MAP_FULL)
			return -SHIRO_ERR_AGAIN;
		if (rc != 0)
			return store_fail(
			    s, store_db_err(rc), "usage: %s", mdb_strerror(rc));
	}
	return 0;
}

/* store_usage_add - add counters to the usage records, durably. */
int
store_usage_add(struct store *s, const struct store_usage *v, size_t n)
{
	struct store_usage_op op = {v, n};
	int ret;

	if ((ret = store_check(s, 1)) != 0)
		return ret;
	if (n == 0)
		return 0;
	return store_db_write(s, store_usage_fn, &op);
}

/* store_usage_list - every usage record, in key order. */
int
store_usage_list(struct store *s, struct store_usage **vp, size_t *np)
{
	static const char prefix[] = STORE_USAGE_PREFIX;
	struct store_usage *v = NULL, *u;
	size_t n = 0, cap = 0, pl = sizeof(prefix) - 1;
	MDB_txn *txn;
	MDB_cursor *cur = NULL;
	MDB_val k, val;
	const char *slash;
	int rc, ret;

	*vp = NULL;
	*np = 0;
	if ((ret = store_check(s, 0)) != 0)
		return ret;
	if ((ret = store_db_read(s, &txn)) != 0)
		return ret;
	k.mv_size = pl;
	k.mv_data = (void *)prefix;
	rc = mdb_cursor_open(txn, s->db_meta, &cur);
	if (rc == 0)
		rc = mdb_cursor_get(cur, &k, &val, MDB_SET_RANGE);
	while (
	    rc == 0 && k.mv_size > pl && memcmp(k.mv_data, prefix, pl) == 0) {
		const char *name = (const char *)k.mv_data + pl;
		size_t nl = k.mv_size - pl;

		if (n == cap) {
			cap = cap ? 2 * cap : 8;
			v = xreallocarray(v, cap, sizeof(*v));
		}
		u = &v[n];
		memset(u, 0, sizeof(*u));
		slash = memchr(name, '/', nl);
		if (slash == NULL ||
		    (size_t)(slash - name) >= sizeof(u->provider) ||
		    nl - (size_t)(slash - name) - 1 >= sizeof(u->model) ||
		    store_usage_parse(val.mv_data, val.mv_size, u) != 0) {
			ret = store_fail(s, -SHIRO_ERR_CORRUPT,
			    "a usage record does not read");
			break;
		}
		memcpy(u->provider, name, (size_t)(slash - name));
		memcpy(u->model, slash + 1, nl - (size_t)(slash - name) - 1);
		n++;
		rc = mdb_cursor_get(cur, &k, &val, MDB_NEXT);
	}
	if (ret == 0 && rc != 0 && rc != MDB_NOTFOUND)
		ret = store_fail(
		    s, store_db_err(rc), "usage: %s", mdb_strerror(rc));
	if (cur != NULL)
		mdb_cursor_close(cur);
	mdb_txn_abort(txn);
	if (ret != 0) {
		free(v);
		return ret;
	}
	*vp = v;
	*np = n;
	return 0;
}
