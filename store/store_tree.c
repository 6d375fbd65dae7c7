/*
 * store_tree.c - tree nodes and merge records in LMDB.
 *
 * nodes:    (l, i) -> size u32, date i64, text (written once)
 * nodesize: (l, i / 256) -> 256 x u16: size + 1 of each node of the block,
 *           0 when not built (the small table the fold walks: a fold of
 *           a chat of 1,000,000 messages reads about 4 MB of it)
 * merges:   seq u64 -> t u64, open u8, n u32, then n times: l u8 and the
 *           zigzag varint of i minus the previous i of that level in the
 *           record (batches merge neighbours: 2-3 bytes a merge)
 * All keys and numbers are big-endian, so keys sort numerically.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <lmdb.h>

#include "proto/buf.h"
#include "proto/err.h"
#include "proto/log.h"
#include "proto/utf8.h"
#include "proto/xmalloc.h"
#include "store_int.h"

#define STORE_TREE_NODE_HDR 12 /* size 4, date 8 */
#define STORE_TREE_BATCH_HDR 13 /* t 8, open 1, n 4 */
#define STORE_TREE_MERGE 11 /* the most one merge takes: l 1, varint 10 */

/* Node puts and batch records for one write transaction. */
struct store_tree_put {
	const struct store_node_in *v;
	size_t n;
	const struct store_batch *b;
	size_t nb;
	int64_t now;
};

static int store_tree_batch_put(
    struct store *s, MDB_txn *txn, const struct store_batch *b, uint64_t seq);

#define STORE_TREE_BLOCK 256 /* nodes per record of the size table */
#define STORE_TREE_BLOCK_BYTES (2 * STORE_TREE_BLOCK)

/* store_tree_lookup - (l, i)'s size from the size table: 0, or
 * MDB_NOTFOUND, or an LMDB error. */
static int
store_tree_lookup(
    struct store *s, MDB_txn *txn, unsigned l, uint64_t i, uint32_t *sizep)
{
	unsigned char kb[STORE_NODE_KEY];
	MDB_val k = {sizeof(kb), kb}, v;
	const unsigned char *p;
	unsigned slot;
	int rc;

	store_node_key(kb, l, i / STORE_TREE_BLOCK);
	if ((rc = mdb_get(txn, s->db_nsize, &k, &v)) != 0)
		return rc;
	if (v.mv_size != STORE_TREE_BLOCK_BYTES)
		return MDB_CORRUPTED;
	p = (const unsigned char *)v.mv_data + 2 * (i % STORE_TREE_BLOCK);
	slot = ((unsigned)p[0] << 8) | p[1];
	if (slot == 0)
		return MDB_NOTFOUND;
	*sizep = slot - 1;
	return 0;
}

/* store_tree_has - whether (l, i) is in the size table. */
static int
store_tree_has(struct store *s, MDB_txn *txn, unsigned l, uint64_t i)
{
	uint32_t size;

	return store_tree_lookup(s, txn, l, i, &size) == 0;
}

/* store_tree_set_size - record (l, i)'s size in its block. */
static int
store_tree_set_size(
    struct store *s, MDB_txn *txn, unsigned l, uint64_t i, uint32_t size)
{
	unsigned char kb[STORE_NODE_KEY], blk[STORE_TREE_BLOCK_BYTES], *p;
	MDB_val k = {sizeof(kb), kb}, v;
	int rc;

	store_node_key(kb, l, i / STORE_TREE_BLOCK);
	rc = mdb_get(txn, s->db_nsize, &k, &v);
	if (rc == 0 && v.mv_size != STORE_TREE_BLOCK_BYTES)
		return MDB_CORRUPTED;
	if (rc == 0)
		memcpy(blk, v.mv_data, sizeof(blk));
	else if (rc == MDB_NOTFOUND)
		memset(blk, 0, sizeof(blk));
	else
		return rc;
	p = blk + 2 * (i % STORE_TREE_BLOCK);
	p[0] = (unsigned char)((size + 1) >> 8);
	p[1] = (unsigned char)(size + 1);
	v.mv_size = sizeof(blk);
	v.mv_data = blk;
	return mdb_put(txn, s->db_nsize, &k, &v, 0);
}

/* store_tree_complete - whether all 2^l messages of (l, i) exist. */
static int
store_tree_complete(const struct store *s, unsigned l, uint64_t i)
{
	if (l > STORE_LEVEL_MAX || i > (UINT64_MAX >> l) - 1)
		return 0;
	return ((i + 1) << l) <= s->count;
}

/* store_tree_put_fn - check and write each node of the batch. */
static int
store_tree_put_fn(struct store *s, MDB_txn *txn, void *arg)
{
	struct store_tree_put *p = arg;
	unsigned char kb[STORE_NODE_KEY], *val;
	MDB_val k = {sizeof(kb), kb}, v;
	size_t j;
	int rc;

	for (j = 0; j < p->n; j++) {
		const struct store_node_in *nd = &p->v[j];

		if (store_tree_has(s, txn, nd->l, nd->i))
			return store_fail(s, -SHIRO_ERR_EXIST,
			    "node (%u, %llu) is already built", nd->l,
			    (unsigned long long)nd->i);
		if (nd->l > 0 &&
		    (!store_tree_has(s, txn, nd->l - 1, 2 * nd->i) ||
			!store_tree_has(s, txn, nd->l - 1, 2 * nd->i + 1)))
			return store_fail(s, -SHIRO_ERR_INVAL,
			    "node (%u, %llu): a child is not built", nd->l,
			    (unsigned long long)nd->i);
		store_node_key(kb, nd->l, nd->i);
		val = xmalloc(STORE_TREE_NODE_HDR + nd->len);
		store_be32(val, nd->size);
		store_be64(val + 4,
		    (uint64_t)(nd->date_ms != 0 ? nd->date_ms : p->now));
		memcpy(val + STORE_TREE_NODE_HDR, nd->text, nd->len);
		v.mv_size = STORE_TREE_NODE_HDR + nd->len;
		v.mv_data = val;
		rc = mdb_put(txn, s->db_nodes, &k, &v, MDB_NOOVERWRITE);
		free(val);
		if (rc == 0)
			rc =
			    store_tree_set_size(s, txn, nd->l, nd->i, nd->size);
		if (rc == MDB_MAP_FULL)
			return -SHIRO_ERR_AGAIN;
		if (rc != 0)
			return store_fail(s, store_db_err(rc), "node put: %s",
			    mdb_strerror(rc));
	}
	for (j = 0; j < p->nb; j++)
		if ((rc = store_tree_batch_put(
			 s, txn, &p->b[j], s->nbatches + j)) != 0)
			return rc;
	return 0;
}

/* store_tree_check_nodes - refuse nodes before any transaction. */
static int
store_tree_check_nodes(struct store *s, const struct store_node_in *v, size_t n)
{
	size_t j;

	for (j = 0; j < n; j++) {
		if (v[j].len > STORE_NODE_MAX || v[j].size > v[j].len ||
		    (v[j].len > 0 && v[j].text == NULL))
			return store_fail(s, -SHIRO_ERR_TOOBIG,
			    "node (%u, %llu): %zu bytes of text, size %u",
			    v[j].l, (unsigned long long)v[j].i, v[j].len,
			    v[j].size);
		if (!utf8_valid(v[j].text, v[j].len) || v[j].date_ms < 0)
			return store_fail(s, -SHIRO_ERR_INVAL,
			    "node (%u, %llu): text is not UTF-8", v[j].l,
			    (unsigned long long)v[j].i);
		if (!store_tree_complete(s, v[j].l, v[j].i))
			return store_fail(s, -SHIRO_ERR_INVAL,
			    "node (%u, %llu) covers messages not logged yet",
			    v[j].l, (unsigned long long)v[j].i);
	}
	return 0;
}

/* store_tree_check_batch - refuse a record before any transaction. */
static int
store_tree_check_batch(struct store *s, uint64_t t, uint64_t last_t,
    const struct store_merge *merges, size_t n)
{
	size_t j;

	if (t > s->count || t < last_t)
		return store_fail(s, -SHIRO_ERR_INVAL,
		    "batch at t=%llu: the log has %llu messages and the last "
		    "batch ran at %llu",
		    (unsigned long long)t, (unsigned long long)s->count,
		    (unsigned long long)last_t);
	if (n > UINT32_MAX / STORE_TREE_MERGE)
		return store_fail(s, -SHIRO_ERR_TOOBIG, "batch too large");
	for (j = 0; j < n; j++)
		if (merges[j].l == 0 || merges[j].l > STORE_LEVEL_MAX)
			return store_fail(s, -SHIRO_ERR_INVAL,
			    "merge into level %u", merges[j].l);
	return 0;
}

/* store_tree_commit - see store.h. */
int
store_tree_commit(struct store *s, const struct store_node_in *nodes, size_t nn,
    const struct store_batch *batches, size_t nb)
{
	struct store_tree_put p;
	uint64_t last_t;
	size_t j;
	int ret;

	if ((ret = store_check(s, 1)) != 0 ||
	    (ret = store_tree_check_nodes(s, nodes, nn)) != 0)
		return ret;
	last_t = s->last_t;
	for (j = 0; j < nb; j++) {
		ret = store_tree_check_batch(
		    s, batches[j].t, last_t, batches[j].merges, batches[j].n);
		if (ret != 0)
			return ret;
		last_t = batches[j].t;
	}
	p.v = nodes;
	p.n = nn;
	p.b = batches;
	p.nb = nb;
	p.now = store_log_now_ms();
	if ((ret = store_db_write(s, store_tree_put_fn, &p)) != 0)
		return ret;
	s->nbatches += nb;
	s->last_t = last_t;
	return 0;
}

/* store_node_put_batch - see store.h. */
int
store_node_put_batch(struct store *s, const struct store_node_in *v, size_t n)
{
	return store_tree_commit(s, v, n, NULL, 0);
}

/* store_node_put - one node, one commit. */
int
store_node_put(struct store *s, unsigned l, uint64_t i, const char *text,
    size_t len, uint32_t size, int64_t date_ms)
{
	struct store_node_in nd;

	nd.l = l;
	nd.i = i;
	nd.text = text;
	nd.len = len;
	nd.size = size;
	nd.date_ms = date_ms;
	return store_node_put_batch(s, &nd, 1);
}

/* store_node_get - a copy of node (l, i). */
int
store_node_get(struct store *s, unsigned l, uint64_t i, struct store_node *out)
{
	unsigned char kb[STORE_NODE_KEY];
	MDB_val k = {sizeof(kb), kb}, v;
	MDB_txn *txn;
	const unsigned char *p;
	int rc, ret;

	memset(out, 0, sizeof(*out));
	if ((ret = store_check(s, 0)) != 0)
		return ret;
	if (l > STORE_LEVEL_MAX)
		return store_fail(s, -SHIRO_ERR_INVAL, "bad level %u", l);
	if ((ret = store_db_read(s, &txn)) != 0)
		return ret;
	store_node_key(kb, l, i);
	rc = mdb_get(txn, s->db_nodes, &k, &v);
	if (rc == 0 &&
	    (v.mv_size < STORE_TREE_NODE_HDR ||
		v.mv_size > STORE_TREE_NODE_HDR + STORE_NODE_MAX))
		rc = MDB_CORRUPTED;
	if (rc == 0) {
		p = v.mv_data;
		out->l = l;
		out->i = i;
		out->size = store_get32(p);
		out->date_ms = (int64_t)store_get64(p + 4);
		out->len = v.mv_size - STORE_TREE_NODE_HDR;
		out->text = xmalloc(out->len + 1);
		memcpy(out->text, p + STORE_TREE_NODE_HDR, out->len);
		out->text[out->len] = '\0';
	}
	mdb_txn_abort(txn);
	if (rc == MDB_NOTFOUND)
		return store_fail(s, -SHIRO_ERR_NOENT,
		    "node (%u, %llu) is not "
		    "built",
		    l, (unsigned long long)i);
	if (rc != 0)
		return store_fail(s, store_db_err(rc), "node (%u, %llu): %s", l,
		    (unsigned long long)i, mdb_strerror(rc));
	return 0;
}

/* store_node_size - a node's line size from the small table. */
int
store_node_size(struct store *s, unsigned l, uint64_t i, uint32_t *sizep)
{
	MDB_txn *txn;
	int rc, ret;

	if ((ret = store_check(s, 0)) != 0)
		return ret;
	if (l > STORE_LEVEL_MAX)
		return -SHIRO_ERR_NOENT;
	if ((ret = store_db_read(s, &txn)) != 0)
		return ret;
	rc = store_tree_lookup(s, txn, l, i, sizep);
	mdb_txn_abort(txn);
	if (rc == MDB_NOTFOUND)
		return -SHIRO_ERR_NOENT;
	if (rc != 0)
		return store_fail(
		    s, store_db_err(rc), "node size: %s", mdb_strerror(rc));
	return 0;
}

/* A walk over one level of the size table. */
struct store_node_cursor {
	struct store *s;
	MDB_txn *txn;
	MDB_cursor *cur;
	unsigned l;
	int started;
	int have; /* blk holds a block */
	uint64_t base; /* its first i */
	unsigned slot; /* the next slot to look at */
	unsigned char blk[STORE_TREE_BLOCK_BYTES];
};

/* store_node_cursor_open - start at the first node of level l. */
int
store_node_cursor_open(
    struct store *s, unsigned l, struct store_node_cursor **cp)
{
	struct store_node_cursor *c;
	int rc, ret;

	*cp = NULL;
	if ((ret = store_check(s, 0)) != 0)
		return ret;
	c = xcalloc(1, sizeof(*c));
	c->s = s;
	c->l = l;
	if ((ret = store_db_read(s, &c->txn)) != 0) {
		free(c);
		return ret;
	}
	if ((rc = mdb_cursor_open(c->txn, s->db_nsize, &c->cur)) != 0) {
		mdb_txn_abort(c->txn);
		free(c);
		return store_fail(
		    s, store_db_err(rc), "node cursor: %s", mdb_strerror(rc));
	}
	*cp = c;
	return 0;
}

/* store_node_cursor_next - the next node of the level, in order of i. */
int
store_node_cursor_next(
    struct store_node_cursor *c, uint64_t *ip, uint32_t *sizep)
{
	unsigned char kb[STORE_NODE_KEY];
	const unsigned char *p;
	unsigned entry;
	MDB_val k, v;
	int rc;

	for (;;) {
		while (c->have && c->slot < STORE_TREE_BLOCK) {
			p = c->blk + 2 * c->slot;
			entry = ((unsigned)p[0] << 8) | p[1];
			c->slot++;
			if (entry != 0) {
				*ip = c->base + c->slot - 1;
				*sizep = entry - 1;
				return 0;
			}
		}
		if (!c->started) {
			store_node_key(kb, c->l, 0);
			k.mv_size = sizeof(kb);
			k.mv_data = kb;
			rc = mdb_cursor_get(c->cur, &k, &v, MDB_SET_RANGE);
			c->started = 1;
		} else {
			rc = mdb_cursor_get(c->cur, &k, &v, MDB_NEXT);
		}
		if (rc == MDB_NOTFOUND)
			return -SHIRO_ERR_NOENT;
		if (rc != 0)
			return store_fail(c->s, store_db_err(rc),
			    "node cursor: %s", mdb_strerror(rc));
		if (k.mv_size != STORE_NODE_KEY ||
		    v.mv_size != STORE_TREE_BLOCK_BYTES)
			return store_fail(
			    c->s, -SHIRO_ERR_CORRUPT, "nodesize: bad record");
		if (((const unsigned char *)k.mv_data)[0] != c->l)
			return -SHIRO_ERR_NOENT;
		c->base = store_get64((const unsigned char *)k.mv_data + 1) *
		    STORE_TREE_BLOCK;
		memcpy(c->blk, v.mv_data, sizeof(c->blk));
		c->slot = 0;
		c->have = 1;
	}
}

/* store_node_cursor_close - end the walk and its read transaction. */
void
store_node_cursor_close(struct store_node_cursor **cp)
{
	struct store_node_cursor *c = *cp;

	if (c == NULL)
		return;
	mdb_cursor_close(c->cur);
	mdb_txn_abort(c->txn);
	free(c);
	*cp = NULL;
}

/* store_node_iter - every node of level l from i on. */
int
store_node_iter(struct store *s, unsigned l, uint64_t i,
    int (*fn)(void *arg, unsigned l, uint64_t i, uint32_t size), void *arg)
{
	struct store_node_cursor *c;
	uint64_t ni;
	uint32_t size;
	int ret;

	if ((ret = store_node_cursor_open(s, l, &c)) != 0)
		return ret;
	while ((ret = store_node_cursor_next(c, &ni, &size)) == 0) {
		if (ni < i)
			continue;
		if ((ret = fn(arg, l, ni, size)) != 0)
			break;
	}
	store_node_cursor_close(&c);
	return ret == -SHIRO_ERR_NOENT ? 0 : ret;
}

/* store_tree_batch_put - check a record's parents and append it. */
static int
store_tree_batch_put(
    struct store *s, MDB_txn *txn, const struct store_batch *b, uint64_t seq)
{
	unsigned char kb[8], *val;
	MDB_val k = {sizeof(kb), kb}, v;
	uint64_t prev[STORE_LEVEL_MAX + 1];
	size_t j, vlen;
	int rc;

	for (j = 0; j < b->n; j++)
		if (!store_tree_has(s, txn, b->merges[j].l, b->merges[j].i))
			return store_fail(s, -SHIRO_ERR_INVAL,
			    "merge into (%u, %llu), which is not built",
			    b->merges[j].l, (unsigned long long)b->merges[j].i);
	val = xmalloc(STORE_TREE_BATCH_HDR + b->n * STORE_TREE_MERGE);
	store_be64(val, b->t);
	val[8] = b->open ? 1 : 0;
	store_be32(val + 9, (uint32_t)b->n);
	memset(prev, 0, sizeof(prev));
	vlen = STORE_TREE_BATCH_HDR;
	for (j = 0; j < b->n; j++) {
		unsigned l = b->merges[j].l;
		uint64_t d = b->merges[j].i - prev[l];

		prev[l] = b->merges[j].i;
		/* zigzag: small steps either way are small numbers */
		d = (d << 1) ^ (uint64_t)(-(int64_t)(d >> 63));
		val[vlen++] = (unsigned char)l;
		do {
			val[vlen++] =
			    (unsigned char)((d & 0x7f) | (d > 0x7f ? 0x80 : 0));
			d >>= 7;
		} while (d != 0);
	}
	store_be64(kb, seq);
	v.mv_size = vlen;
	v.mv_data = val;
	rc = mdb_put(txn, s->db_merges, &k, &v, MDB_NOOVERWRITE | MDB_APPEND);
	free(val);
	if (rc == MDB_MAP_FULL)
		return -SHIRO_ERR_AGAIN;
	if (rc != 0)
		return store_fail(
		    s, store_db_err(rc), "merge record: %s", mdb_strerror(rc));
	return 0;
}

/* store_batch_append - see store.h. */
int
store_batch_append(struct store *s, uint64_t t, int open,
    const struct store_merge *merges, size_t n, uint64_t *seqp)
{
	struct store_batch b;
	uint64_t seq = s->nbatches;
	int ret;

	b.seq = seq;
	b.t = t;
	b.open = open;
	b.n = n;
	b.merges = (struct store_merge *)merges;
	if ((ret = store_tree_commit(s, NULL, 0, &b, 1)) != 0)
		return ret;
	if (seqp != NULL)
		*seqp = seq;
	return 0;
}

/* store_tree_batch_decode - a record's value as a batch (merges
 * borrowed from the value when keep is 0, copied when 1). */
static int
store_tree_batch_decode(struct store *s, const MDB_val *k, const MDB_val *v,
    struct store_batch *b, struct store_merge **scratch, size_t *cap)
{
	const unsigned char *p = v->mv_data;
	uint64_t prev[STORE_LEVEL_MAX + 1];
	size_t j, n, pos;

	if (k->mv_size != 8 || v->mv_size < STORE_TREE_BATCH_HDR)
		return store_fail(s, -SHIRO_ERR_CORRUPT, "merges: bad record");
	n = store_get32(p + 9);
	b->seq = store_get64(k->mv_data);
	/* Each merge takes at least 2 bytes: a count past that is damage. */
	if (p[8] > 1 || n > (v->mv_size - STORE_TREE_BATCH_HDR) / 2)
		goto bad;
	b->t = store_get64(p);
	b->open = p[8];
	b->n = n;
	if (n > *cap) {
		*cap = n;
		*scratch = xreallocarray(*scratch, n, sizeof(**scratch));
	}
	memset(prev, 0, sizeof(prev));
	pos = STORE_TREE_BATCH_HDR;
	for (j = 0; j < n; j++) {
		unsigned l, shift = 0;
		uint64_t d = 0;
		unsigned char byte;

		if (pos >= v->mv_size || (l = p[pos++]) > STORE_LEVEL_MAX)
			goto bad;
		do {
			if (pos >= v->mv_size || shift > 63)
				goto bad;
			byte = p[pos++];
			d |= (uint64_t)(byte & 0x7f) << shift;
			shift += 7;
		} while (byte & 0x80);
		d = (d >> 1) ^ (uint64_t)(-(int64_t)(d & 1));
		prev[l] += d;
		(*scratch)[j].l = l;
		(*scratch)[j].i = prev[l];
	}
	if (pos != v->mv_size)
		goto bad;
	b->merges = *scratch;
	return 0;
bad:
	return store_fail(s, -SHIRO_ERR_CORRUPT,
	    "merges: record %llu does not decode",
	    (unsigned long long)store_get64(k->mv_data));
}

/* store_batch_iter - every record from seq first on. */
int
store_batch_iter(struct store *s, uint64_t first,
    int (*fn)(void *arg, const struct store_batch *b), void *arg)
{
	struct store_merge *scratch = NULL;
	struct store_batch b;
	unsigned char kb[8];
	MDB_txn *txn = NULL;
	MDB_cursor *cur = NULL;
	MDB_val k = {sizeof(kb), kb}, v;
	size_t cap = 0;
	uint64_t want = first;
	int rc, ret;

	if ((ret = store_check(s, 0)) != 0)
		return ret;
	if ((ret = store_db_read(s, &txn)) != 0)
		return ret;
	if ((rc = mdb_cursor_open(txn, s->db_merges, &cur)) != 0) {
		ret = store_fail(
		    s, store_db_err(rc), "merges: %s", mdb_strerror(rc));
		goto out;
	}
	store_be64(kb, first);
	rc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE);
	while (rc == 0) {
		ret = store_tree_batch_decode(s, &k, &v, &b, &scratch, &cap);
		if (ret != 0)
			goto out;
		if (b.seq != want) {
			ret = store_fail(s, -SHIRO_ERR_CORRUPT,
			    "merges: record %llu is missing",
			    (unsigned long long)want);
			goto out;
		}
		want++;
		if ((ret = fn(arg, &b)) != 0)
			goto out;
		rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT);
	}
	ret = rc == MDB_NOTFOUND
	    ? 0
	    : store_fail(s, store_db_err(rc), "merges: %s", mdb_strerror(rc));
out:
	free(scratch);
	if (cur != NULL)
		mdb_cursor_close(cur);
	mdb_txn_abort(txn);
	return ret;
}

/* store_batch_last - a copy of the last record. */
int
store_batch_last(struct store *s, struct store_batch *b)
{
	struct store_merge *scratch = NULL;
	MDB_txn *txn = NULL;
	MDB_cursor *cur = NULL;
	MDB_val k, v;
	size_t cap = 0;
	int rc, ret;

	memset(b, 0, sizeof(*b));
	if ((ret = store_check(s, 0)) != 0)
		return ret;
	if ((ret = store_db_read(s, &txn)) != 0)
		return ret;
	rc = mdb_cursor_open(txn, s->db_merges, &cur);
	if (rc == 0)
		rc = mdb_cursor_get(cur, &k, &v, MDB_LAST);
	if (rc == MDB_NOTFOUND)
		ret = -SHIRO_ERR_NOENT;
	else if (rc != 0)
		ret = store_fail(
		    s, store_db_err(rc), "merges: %s", mdb_strerror(rc));
	else
		ret = store_tree_batch_decode(s, &k, &v, b, &scratch, &cap);
	if (cur != NULL)
		mdb_cursor_close(cur);
	mdb_txn_abort(txn);
	if (ret != 0) {
		free(scratch);
		memset(b, 0, sizeof(*b));
		return ret;
	}
	if (b->merges == NULL)
		b->merges = xcalloc(1, sizeof(*b->merges));
	return 0;
}

/* store_batch_count - the number of batch records. */
int
store_batch_count(struct store *s, uint64_t *np)
{
	int ret;

	if ((ret = store_check(s, 0)) != 0)
		return ret;
	*np = s->nbatches;
	return 0;
}

#define STORE_PREFETCH_THREADS 8

/* One prefetch thread's share: a slice of each level's size blocks and
 * a slice of the merge records. */
struct store_prefetch_job {
	struct store *s;
	unsigned part, parts;
	uint64_t sink; /* keeps the reads from being optimized away */
};

/* store_prefetch_range - touch the values of dbi from key lo to hi. */
static uint64_t
store_prefetch_range(MDB_txn *txn, MDB_dbi dbi, const unsigned char *lo,
    const unsigned char *hi, size_t klen)
{
	MDB_cursor *cur;
	MDB_val k = {klen, (void *)lo}, v;
	uint64_t sink = 0;
	int rc;

	if (mdb_cursor_open(txn, dbi, &cur) != 0)
		return 0;
	rc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE);
	while (
	    rc == 0 && k.mv_size == klen && memcmp(k.mv_data, hi, klen) < 0) {
		if (v.mv_size > 0)
			sink += ((const unsigned char *)v.mv_data)[0];
		rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT);
	}
	mdb_cursor_close(cur);
	return sink;
}

/* store_prefetch_run - one thread: its slices, in its own transaction. */
static void *
store_prefetch_run(void *arg)
{
	struct store_prefetch_job *j = arg;
	struct store *s = j->s;
	unsigned char lo[STORE_NODE_KEY], hi[STORE_NODE_KEY];
	uint64_t blocks, per;
	MDB_txn *txn;
	unsigned l;

	if (mdb_txn_begin(s->env, NULL, MDB_RDONLY, &txn) != 0)
		return NULL;
	for (l = 0; l <= STORE_LEVEL_MAX && (s->count >> l) > 0; l++) {
		blocks = (s->count >> l) / STORE_TREE_BLOCK + 1;
		per = blocks / j->parts + 1;
		store_node_key(lo, l, per * j->part);
		store_node_key(hi, l, per * (j->part + 1));
		j->sink += store_prefetch_range(
		    txn, s->db_nsize, lo, hi, STORE_NODE_KEY);
	}
	per = s->nbatches / j->parts + 1;
	store_be64(lo, per * j->part);
	store_be64(hi, per * (j->part + 1));
	j->sink += store_prefetch_range(txn, s->db_merges, lo, hi, 8);
	mdb_txn_abort(txn);
	return NULL;
}

/* store_prefetch - see store.h. */
void
store_prefetch(struct store *s)
{
	struct store_prefetch_job jobs[STORE_PREFETCH_THREADS];
	pthread_t th[STORE_PREFETCH_THREADS];
	int started[STORE_PREFETCH_THREADS];
	unsigned k;

	if (store_check(s, 0) != 0 || s->count < 100000)
		return; /* a small chat reads fast enough as it is */
	for (k = 0; k < STORE_PREFETCH_THREADS; k++) {
		jobs[k].s = s;
		jobs[k].part = k;
		jobs[k].parts = STORE_PREFETCH_THREADS;
		jobs[k].sink = 0;
		started[k] = pthread_create(&th[k], NULL, store_prefetch_run,
				 &jobs[k]) == 0;
	}
	for (k = 0; k < STORE_PREFETCH_THREADS; k++)
		if (started[k])
			pthread_join(th[k], NULL);
}
