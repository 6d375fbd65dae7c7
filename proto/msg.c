/*
 * msg.c - messages: the catalogue tables, values, a strict msgpack
 * encoder and decoder for the subset the protocol uses, and sending and
 * receiving them as ZeroMQ frames.
 *
 * The decoder is written by hand rather than taken from msgpack-c because
 * msgpack-c trusts declared lengths: here every length and count is held
 * against the limits of msg.h and against the bytes that remain before
 * anything is allocated for it.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

#include "proto/buf.h"
#include "proto/err.h"
#include "proto/log.h"
#include "proto/msg.h"
#include "proto/utf8.h"
#include "proto/xmalloc.h"

/* The catalogue's field types, written STR, UINT, ... in catalog.def. */
enum msg_ftype {
	MSG_F_STR,
	MSG_F_BIN,
	MSG_F_INT,
	MSG_F_UINT,
	MSG_F_BOOL,
	MSG_F_ARR,
	MSG_F_MAP
};

/* One key of a type. */
struct msg_field {
	const char *key;
	enum msg_ftype type;
	bool required;
	size_t limit; /* bytes or items; 0 = the protocol-wide limit */
};

/* One type. */
struct msg_def {
	enum msg_type type;
	const char *name;
	unsigned from;
	const struct msg_field *fields;
};

struct msg {
	enum msg_type type;
	struct msg_val body;
};

#define MSG_F_REQ true
#define MSG_F_OPT false

/* The field tables, one per type, each ended by a NULL key. */
#define F(key, type, req, limit) {#key, MSG_F_##type, MSG_F_##req, limit},
#define MSG(name, num, lname, from, fields) \
	static const struct msg_field msg_fields_##name[] = { \
	    fields{NULL, MSG_F_STR, false, 0}};
#include "proto/catalog.def"
#undef MSG
#undef F

/* The types, indexed by their wire number. */
static const struct msg_def msg_defs[256] = {
#define MSG(name, num, lname, from, fields) \
	[num] = {MSG_##name, lname, from, msg_fields_##name},
#include "proto/catalog.def"
#undef MSG
};

static char msg_errbuf[200];

/* msg_fail - record why a message was refused; returns -SHIRO_ERR_PROTO. */
static int __attribute__((format(printf, 1, 2))) msg_fail(const char *fmt, ...)
{
	char text[sizeof(msg_errbuf)];
	va_list ap;

	/* Through a copy: the arguments may include the old reason. */
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	memcpy(msg_errbuf, text, sizeof(msg_errbuf));
	return -SHIRO_ERR_PROTO;
}

/* msg_strerror - why the last msg_check/decode/recv failed (borrowed). */
const char *
msg_strerror(void)
{
	return msg_errbuf;
}

/* msg_def_of - the catalogue entry of type, or NULL. */
static const struct msg_def *
msg_def_of(int type)
{
	if (type <= 0 || type > 255 || msg_defs[type].name == NULL)
		return NULL;
	return &msg_defs[type];
}

/* msg_type_valid - whether number is a type of the catalogue. */
bool
msg_type_valid(int number)
{
	return msg_def_of(number) != NULL;
}

/* msg_type_name - the log name of a type, "?" if unknown. */
const char *
msg_type_name(enum msg_type type)
{
	const struct msg_def *d = msg_def_of((int)type);

	return d ? d->name : "?";
}

/* msg_peer_bit - the senders bit of a peer. */
static unsigned
msg_peer_bit(enum msg_peer peer)
{
	switch (peer) {
	case MSG_PEER_CLIENT:
		return MSG_FROM_CLIENT;
	case MSG_PEER_BROKER_TO_CLIENT:
		return MSG_FROM_BROKER_C;
	case MSG_PEER_MODEL:
		return MSG_FROM_MODEL;
	case MSG_PEER_TOOL:
		return MSG_FROM_TOOL;
	case MSG_PEER_FS:
		return MSG_FROM_FS;
	case MSG_PEER_BROKER_TO_WORKER:
		return MSG_FROM_BROKER_W;
	}
	return 0;
}

/* msg_allowed - whether peer may send type (the permission table). */
bool
msg_allowed(enum msg_peer peer, enum msg_type type)
{
	const struct msg_def *d = msg_def_of((int)type);

	return d != NULL && (d->from & msg_peer_bit(peer)) != 0;
}

/* msg_peer_of_role - the peer of a worker role name. */
int
msg_peer_of_role(const char *role, enum msg_peer *peerp)
{
	if (strcmp(role, "model") == 0)
		*peerp = MSG_PEER_MODEL;
	else if (strcmp(role, "tool") == 0)
		*peerp = MSG_PEER_TOOL;
	else if (strcmp(role, "fs") == 0)
		*peerp = MSG_PEER_FS;
	else
		return -SHIRO_ERR_NOENT;
	return 0;
}

/* msg_lax - whether unknown keys of type are skipped, not refused. */
static bool
msg_lax(const struct msg_def *d)
{
	/* Only what the broker tells clients: a newer broker may add keys. */
	return d->from == MSG_FROM_BROKER_C;
}

/* msg_field_of - the field key of type d, or NULL. */
static const struct msg_field *
msg_field_of(const struct msg_def *d, const char *key, size_t keylen)
{
	const struct msg_field *f;

	for (f = d->fields; f->key != NULL; f++)
		if (strlen(f->key) == keylen &&
		    memcmp(f->key, key, keylen) == 0)
			return f;
	return NULL;
}

/* Values. */

/* msg_val_free - free the contents of v (not v itself). */
static void
msg_val_free(struct msg_val *v)
{
	size_t k;

	switch (v->type) {
	case MSG_V_STR:
	case MSG_V_BIN:
		free(v->u.s.ptr);
		break;
	case MSG_V_ARR:
		for (k = 0; k < v->u.a.n; k++) {
			msg_val_free(v->u.a.items[k]);
			free(v->u.a.items[k]);
		}
		free(v->u.a.items);
		break;
	case MSG_V_MAP:
		for (k = 0; k < v->u.m.n; k++) {
			free(v->u.m.kv[k].key);
			msg_val_free(v->u.m.kv[k].val);
			free(v->u.m.kv[k].val);
		}
		free(v->u.m.kv);
		break;
	default:
		break;
	}
	memset(v, 0, sizeof(*v));
}

/* msg_val_find - the pair of key in map v, or NULL. */
static struct msg_kv *
msg_val_find(const struct msg_val *v, const char *key, size_t keylen)
{
	size_t k;

	for (k = 0; k < v->u.m.n; k++)
		if (v->u.m.kv[k].keylen == keylen &&
		    memcmp(v->u.m.kv[k].key, key, keylen) == 0)
			return &v->u.m.kv[k];
	return NULL;
}

/* msg_val_slot - a fresh value under key in map v, replacing any earlier. */
static struct msg_val *
msg_val_slot(struct msg_val *v, const char *key)
{
	size_t keylen = strlen(key);
	struct msg_kv *kv;

	if (v->type != MSG_V_MAP)
		panic("msg: setting key %s in a value that is not a map", key);
	if (keylen == 0 || keylen > MSG_MAX_KEY)
		panic("msg: key \"%s\" has a bad length", key);
	kv = msg_val_find(v, key, keylen);
	if (kv != NULL) {
		msg_val_free(kv->val);
		return kv->val;
	}
	if (v->u.m.n == v->u.m.cap) {
		v->u.m.cap = v->u.m.cap ? v->u.m.cap * 2 : 4;
		v->u.m.kv =
		    xreallocarray(v->u.m.kv, v->u.m.cap, sizeof(*v->u.m.kv));
	}
	kv = &v->u.m.kv[v->u.m.n++];
	kv->key = xstrdup(key);
	kv->keylen = keylen;
	kv->val = xcalloc(1, sizeof(*kv->val));
	return kv->val;
}

/* msg_val_push - a fresh value at the end of array v. */
static struct msg_val *
msg_val_push(struct msg_val *v)
{
	struct msg_val *item;

	if (v->type != MSG_V_ARR)
		panic("msg: adding to a value that is not an array");
	if (v->u.a.n == v->u.a.cap) {
		v->u.a.cap = v->u.a.cap ? v->u.a.cap * 2 : 4;
		v->u.a.items = xreallocarray(
		    v->u.a.items, v->u.a.cap, sizeof(*v->u.a.items));
	}
	item = xcalloc(1, sizeof(*item));
	v->u.a.items[v->u.a.n++] = item;
	return item;
}

/* msg_text_ok - whether len bytes at s are UTF-8 text without NUL. */
static bool
msg_text_ok(const void *s, size_t len)
{
	return memchr(s, '\0', len) == NULL && utf8_valid(s, len);
}

/* msg_val_put_str - make v a STR of s, repairing invalid UTF-8 and NULs. */
static void
msg_val_put_str(struct msg_val *v, const char *s, size_t len)
{
	struct buf b = BUF_INIT;

	size_t pos = 0, n;

	v->type = MSG_V_STR;
	if (msg_text_ok(s, len)) {
		v->u.s.ptr = xmalloc(len + 1);
		memcpy(v->u.s.ptr, s, len);
		v->u.s.ptr[len] = '\0';
		v->u.s.len = len;
		return;
	}
	/* Each byte that starts no valid character becomes U+FFFD. */
	buf_reserve(&b, len + 1);
	while (pos < len) {
		n = s[pos] == '\0' ? 0 : utf8_char_len(s + pos, len - pos);
		if (n == 0) {
			buf_adds(&b, "\xef\xbf\xbd");
			pos++;
		} else {
			buf_add(&b, s + pos, n);
			pos += n;
		}
	}
	buf_addc(&b, '\0'); /* so that an empty text still allocates */
	v->u.s.ptr = buf_steal(&b, &v->u.s.len);
	v->u.s.len--;
}

/* msg_val_put_bin - make v a BIN holding a copy of p. */
static void
msg_val_put_bin(struct msg_val *v, const void *p, size_t len)
{
	v->type = MSG_V_BIN;
	v->u.s.ptr = xmalloc(len + 1);
	if (len > 0)
		memcpy(v->u.s.ptr, p, len);
	v->u.s.ptr[len] = '\0';
	v->u.s.len = len;
}

/* msg_val_set_str - put the C string s under key in map mapv. */
void
msg_val_set_str(struct msg_val *mapv, const char *key, const char *s)
{
	msg_val_put_str(msg_val_slot(mapv, key), s, strlen(s));
}

/* msg_val_set_strn - put len bytes of text under key in map mapv. */
void
msg_val_set_strn(
    struct msg_val *mapv, const char *key, const char *s, size_t len)
{
	msg_val_put_str(msg_val_slot(mapv, key), s, len);
}

/* msg_val_set_bin - put bytes under key in map mapv. */
void
msg_val_set_bin(
    struct msg_val *mapv, const char *key, const void *p, size_t len)
{
	msg_val_put_bin(msg_val_slot(mapv, key), p, len);
}

/* msg_val_set_int - put an integer under key in map mapv. */
void
msg_val_set_int(struct msg_val *mapv, const char *key, int64_t v)
{
	struct msg_val *x = msg_val_slot(mapv, key);

	x->type = MSG_V_INT;
	x->u.i = v;
}

/* msg_val_set_bool - put a boolean under key in map mapv. */
void
msg_val_set_bool(struct msg_val *mapv, const char *key, bool v)
{
	struct msg_val *x = msg_val_slot(mapv, key);

	x->type = MSG_V_BOOL;
	x->u.b = v;
}

/* msg_val_set_nil - put nil under key in map mapv. */
void
msg_val_set_nil(struct msg_val *mapv, const char *key)
{
	msg_val_slot(mapv, key)->type = MSG_V_NIL;
}

/* msg_val_set_map - put an empty map under key in mapv and return it. */
struct msg_val *
msg_val_set_map(struct msg_val *mapv, const char *key)
{
	struct msg_val *x = msg_val_slot(mapv, key);

	x->type = MSG_V_MAP;
	return x;
}

/* msg_val_set_arr - put an empty array under key in mapv and return it. */
struct msg_val *
msg_val_set_arr(struct msg_val *mapv, const char *key)
{
	struct msg_val *x = msg_val_slot(mapv, key);

	x->type = MSG_V_ARR;
	return x;
}

/* msg_val_add_str - append the C string s to array arrv. */
void
msg_val_add_str(struct msg_val *arrv, const char *s)
{
	msg_val_put_str(msg_val_push(arrv), s, strlen(s));
}

/* msg_val_add_strn - append len bytes of text to array arrv. */
void
msg_val_add_strn(struct msg_val *arrv, const char *s, size_t len)
{
	msg_val_put_str(msg_val_push(arrv), s, len);
}

/* msg_val_add_int - append an integer to array arrv. */
void
msg_val_add_int(struct msg_val *arrv, int64_t v)
{
	struct msg_val *x = msg_val_push(arrv);

	x->type = MSG_V_INT;
	x->u.i = v;
}

/* msg_val_add_bool - append a boolean to array arrv. */
void
msg_val_add_bool(struct msg_val *arrv, bool v)
{
	struct msg_val *x = msg_val_push(arrv);

	x->type = MSG_V_BOOL;
	x->u.b = v;
}

/* msg_val_add_map - append an empty map to array arrv and return it. */
struct msg_val *
msg_val_add_map(struct msg_val *arrv)
{
	struct msg_val *x = msg_val_push(arrv);

	x->type = MSG_V_MAP;
	return x;
}

/* msg_val_add_arr - append an empty array to array arrv and return it. */
struct msg_val *
msg_val_add_arr(struct msg_val *arrv)
{
	struct msg_val *x = msg_val_push(arrv);

	x->type = MSG_V_ARR;
	return x;
}

/* msg_val_copy - make the empty value dst a deep copy of src. */
static void
msg_val_copy(struct msg_val *dst, const struct msg_val *src)
{
	size_t k;

	dst->type = src->type;
	switch (src->type) {
	case MSG_V_BOOL:
		dst->u.b = src->u.b;
		break;
	case MSG_V_INT:
		dst->u.i = src->u.i;
		break;
	case MSG_V_STR:
	case MSG_V_BIN:
		msg_val_put_bin(dst, src->u.s.ptr, src->u.s.len);
		dst->type = src->type;
		break;
	case MSG_V_ARR:
		for (k = 0; k < src->u.a.n; k++)
			msg_val_copy(msg_val_push(dst), src->u.a.items[k]);
		break;
	case MSG_V_MAP:
		for (k = 0; k < src->u.m.n; k++)
			msg_val_copy(msg_val_slot(dst, src->u.m.kv[k].key),
			    src->u.m.kv[k].val);
		break;
	case MSG_V_NIL:
		break;
	}
}

/* msg_val_add_copy - append a deep copy of v to array arrv. */
struct msg_val *
msg_val_add_copy(struct msg_val *arrv, const struct msg_val *v)
{
	struct msg_val *x = msg_val_push(arrv);

	msg_val_copy(x, v);
	return x;
}

/* msg_val_set_copy - put a deep copy of v under key in map mapv. */
struct msg_val *
msg_val_set_copy(struct msg_val *mapv, const char *key, const struct msg_val *v)
{
	struct msg_val *x = msg_val_slot(mapv, key);

	msg_val_copy(x, v);
	return x;
}

/* msg_val_get - the value of key in the map mapv, or NULL. */
const struct msg_val *
msg_val_get(const struct msg_val *mapv, const char *key)
{
	const struct msg_kv *kv;

	if (mapv == NULL || mapv->type != MSG_V_MAP)
		return NULL;
	kv = msg_val_find(mapv, key, strlen(key));
	return kv ? kv->val : NULL;
}

/* msg_val_str - the string of key in mapv, or NULL. */
const char *
msg_val_str(const struct msg_val *mapv, const char *key)
{
	const struct msg_val *v = msg_val_get(mapv, key);

	return v != NULL && v->type == MSG_V_STR ? v->u.s.ptr : NULL;
}

/* msg_val_int - the integer of key in mapv. */
int
msg_val_int(const struct msg_val *mapv, const char *key, int64_t *vp)
{
	const struct msg_val *v = msg_val_get(mapv, key);

	if (v == NULL || v->type != MSG_V_INT)
		return -SHIRO_ERR_NOENT;
	*vp = v->u.i;
	return 0;
}

/* Messages. */

/* msg_new - an empty message of a catalogue type. */
struct msg *
msg_new(enum msg_type type)
{
	struct msg *m;

	if (msg_def_of((int)type) == NULL)
		panic("msg_new: %d is not a message type", (int)type);
	m = xcalloc(1, sizeof(*m));
	m->type = type;
	m->body.type = MSG_V_MAP;
	return m;
}

/* msg_destroy - free *mp and everything in it; set *mp to NULL. */
void
msg_destroy(struct msg **mp)
{
	if (*mp == NULL)
		return;
	msg_val_free(&(*mp)->body);
	free(*mp);
	*mp = NULL;
}

/* msg_type - the type of m. */
enum msg_type
msg_type(const struct msg *m)
{
	return m->type;
}

/* msg_body - the body map of m. */
const struct msg_val *
msg_body(const struct msg *m)
{
	return &m->body;
}

/* msg_field_want - the field key of m's type, which must be of type t. */
static void
msg_field_want(const struct msg *m, const char *key, enum msg_ftype t)
{
	const struct msg_field *f =
	    msg_field_of(msg_def_of((int)m->type), key, strlen(key));

	if (f == NULL)
		panic("msg: %s has no key %s", msg_type_name(m->type), key);
	if (f->type == t || (f->type == MSG_F_UINT && t == MSG_F_INT) ||
	    (f->type == MSG_F_INT && t == MSG_F_UINT))
		return;
	panic(
	    "msg: key %s of %s has another type", key, msg_type_name(m->type));
}

/* msg_set_str - set a STR key to the C string s. */
void
msg_set_str(struct msg *m, const char *key, const char *s)
{
	msg_field_want(m, key, MSG_F_STR);
	msg_val_set_str(&m->body, key, s);
}

/* msg_set_strn - set a STR key to len bytes of text. */
void
msg_set_strn(struct msg *m, const char *key, const char *s, size_t len)
{
	msg_field_want(m, key, MSG_F_STR);
	msg_val_set_strn(&m->body, key, s, len);
}

/* msg_set_bin - set a BIN key. */
void
msg_set_bin(struct msg *m, const char *key, const void *p, size_t len)
{
	msg_field_want(m, key, MSG_F_BIN);
	msg_val_set_bin(&m->body, key, p, len);
}

/* msg_set_int - set an INT or UINT key. */
void
msg_set_int(struct msg *m, const char *key, int64_t v)
{
	msg_field_want(m, key, MSG_F_INT);
	msg_val_set_int(&m->body, key, v);
}

/* msg_set_bool - set a BOOL key. */
void
msg_set_bool(struct msg *m, const char *key, bool v)
{
	msg_field_want(m, key, MSG_F_BOOL);
	msg_val_set_bool(&m->body, key, v);
}

/* msg_set_map - set a MAP key to an empty map and return it. */
struct msg_val *
msg_set_map(struct msg *m, const char *key)
{
	msg_field_want(m, key, MSG_F_MAP);
	return msg_val_set_map(&m->body, key);
}

/* msg_set_arr - set an ARR key to an empty array and return it. */
struct msg_val *
msg_set_arr(struct msg *m, const char *key)
{
	msg_field_want(m, key, MSG_F_ARR);
	return msg_val_set_arr(&m->body, key);
}

/* msg_get - the value of key of the wanted type in m, or NULL. */
static const struct msg_val *
msg_get(
    const struct msg *m, const char *key, enum msg_ftype t, enum msg_vtype vt)
{
	const struct msg_val *v;

	msg_field_want(m, key, t);
	v = msg_val_get(&m->body, key);
	return v != NULL && v->type == vt ? v : NULL;
}

/* msg_get_str - the text of a STR key. */
int
msg_get_str(const struct msg *m, const char *key, const char **sp, size_t *lenp)
{
	const struct msg_val *v = msg_get(m, key, MSG_F_STR, MSG_V_STR);

	if (v == NULL)
		return -SHIRO_ERR_NOENT;
	*sp = v->u.s.ptr;
	if (lenp != NULL)
		*lenp = v->u.s.len;
	return 0;
}

/* msg_get_bin - the bytes of a BIN key. */
int
msg_get_bin(const struct msg *m, const char *key, const void **pp, size_t *lenp)
{
	const struct msg_val *v = msg_get(m, key, MSG_F_BIN, MSG_V_BIN);

	if (v == NULL)
		return -SHIRO_ERR_NOENT;
	*pp = v->u.s.ptr;
	if (lenp != NULL)
		*lenp = v->u.s.len;
	return 0;
}

/* msg_get_int - the value of an INT or UINT key. */
int
msg_get_int(const struct msg *m, const char *key, int64_t *vp)
{
	const struct msg_val *v = msg_get(m, key, MSG_F_INT, MSG_V_INT);

	if (v == NULL)
		return -SHIRO_ERR_NOENT;
	*vp = v->u.i;
	return 0;
}

/* msg_get_uint - the value of a UINT key. */
int
msg_get_uint(const struct msg *m, const char *key, uint64_t *vp)
{
	const struct msg_val *v = msg_get(m, key, MSG_F_UINT, MSG_V_INT);

	if (v == NULL || v->u.i < 0)
		return -SHIRO_ERR_NOENT;
	*vp = (uint64_t)v->u.i;
	return 0;
}

/* msg_get_bool - the value of a BOOL key. */
int
msg_get_bool(const struct msg *m, const char *key, bool *vp)
{
	const struct msg_val *v = msg_get(m, key, MSG_F_BOOL, MSG_V_BOOL);

	if (v == NULL)
		return -SHIRO_ERR_NOENT;
	*vp = v->u.b;
	return 0;
}

/* msg_get_map - the map of a MAP key. */
int
msg_get_map(const struct msg *m, const char *key, const struct msg_val **vp)
{
	const struct msg_val *v = msg_get(m, key, MSG_F_MAP, MSG_V_MAP);

	if (v == NULL)
		return -SHIRO_ERR_NOENT;
	*vp = v;
	return 0;
}

/* msg_get_arr - the array of an ARR key. */
int
msg_get_arr(const struct msg *m, const char *key, const struct msg_val **vp)
{
	const struct msg_val *v = msg_get(m, key, MSG_F_ARR, MSG_V_ARR);

	if (v == NULL)
		return -SHIRO_ERR_NOENT;
	*vp = v;
	return 0;
}

/* msg_has - whether the body has key. */
bool
msg_has(const struct msg *m, const char *key)
{
	return msg_val_get(&m->body, key) != NULL;
}

/* Checking against the catalogue and the limits. */

/* msg_kv_order - order two pairs by key (length first). */
static int
msg_kv_order(const struct msg_kv *x, const struct msg_kv *y)
{
	if (x->keylen != y->keylen)
		return x->keylen < y->keylen ? -1 : 1;
	return memcmp(x->key, y->key, x->keylen);
}

/* msg_kv_cmp - qsort's view of msg_kv_order, on pointers to pairs. */
static int
msg_kv_cmp(const void *a, const void *b)
{
	return msg_kv_order(
	    *(const struct msg_kv *const *)a, *(const struct msg_kv *const *)b);
}

/* msg_map_dup - a key that map v holds twice, or NULL. */
static const char *
msg_map_dup(const struct msg_val *v)
{
	const struct msg_kv **sorted;
	const struct msg_kv *kv = v->u.m.kv;
	const char *dup = NULL;
	size_t j, k, n = v->u.m.n;

	if (n <= 16) {
		for (j = 0; j < n; j++)
			for (k = j + 1; k < n; k++)
				if (msg_kv_order(&kv[j], &kv[k]) == 0)
					return kv[j].key;
		return NULL;
	}
	sorted = xreallocarray(NULL, n, sizeof(*sorted));
	for (k = 0; k < n; k++)
		sorted[k] = &kv[k];
	qsort(sorted, n, sizeof(*sorted), msg_kv_cmp);
	for (k = 1; k < n && dup == NULL; k++)
		if (msg_kv_order(sorted[k - 1], sorted[k]) == 0)
			dup = sorted[k]->key;
	free(sorted);
	return dup;
}

/* msg_check_val - v and everything in it within the limits, at depth. */
static int
msg_check_val(const struct msg_val *v, unsigned depth, size_t *values)
{
	const char *dup;
	size_t k;
	int rc;

	if (++*values > MSG_MAX_VALUES)
		return msg_fail("more than %u values", MSG_MAX_VALUES);
	switch (v->type) {
	case MSG_V_NIL:
	case MSG_V_BOOL:
	case MSG_V_INT:
		return 0;
	case MSG_V_STR:
		if (v->u.s.len > MSG_MAX_STR)
			return msg_fail("a string of %zu bytes", v->u.s.len);
		if (!msg_text_ok(v->u.s.ptr, v->u.s.len))
			return msg_fail("a string that is not UTF-8 text");
		return 0;
	case MSG_V_BIN:
		if (v->u.s.len > MSG_MAX_STR)
			return msg_fail("a bin of %zu bytes", v->u.s.len);
		return 0;
	case MSG_V_ARR:
	case MSG_V_MAP:
		break;
	default:
		return msg_fail("a value of unknown type");
	}
	if (depth > MSG_MAX_DEPTH)
		return msg_fail("nested deeper than %u", MSG_MAX_DEPTH);
	if (v->type == MSG_V_ARR) {
		if (v->u.a.n > MSG_MAX_ITEMS)
			return msg_fail("an array of %zu items", v->u.a.n);
		for (k = 0; k < v->u.a.n; k++)
			if ((rc = msg_check_val(
				 v->u.a.items[k], depth + 1, values)) < 0)
				return rc;
		return 0;
	}
	if (v->u.m.n > MSG_MAX_ITEMS)
		return msg_fail("a map of %zu pairs", v->u.m.n);
	for (k = 0; k < v->u.m.n; k++) {
		const struct msg_kv *kv = &v->u.m.kv[k];

		if (kv->keylen == 0 || kv->keylen > MSG_MAX_KEY ||
		    !msg_text_ok(kv->key, kv->keylen))
			return msg_fail("a bad map key");
		if ((rc = msg_check_val(kv->val, depth + 1, values)) < 0)
			return rc;
	}
	if ((dup = msg_map_dup(v)) != NULL)
		return msg_fail("key %.64s twice", dup);
	return 0;
}

/* msg_check_field - the value v of field f within its type and limit. */
static int
msg_check_field(const struct msg_field *f, const struct msg_val *v)
{
	static const enum msg_vtype vt[] = {[MSG_F_STR] = MSG_V_STR,
	    [MSG_F_BIN] = MSG_V_BIN,
	    [MSG_F_INT] = MSG_V_INT,
	    [MSG_F_UINT] = MSG_V_INT,
	    [MSG_F_BOOL] = MSG_V_BOOL,
	    [MSG_F_ARR] = MSG_V_ARR,
	    [MSG_F_MAP] = MSG_V_MAP};
	size_t n = 0;

	if (v->type != vt[f->type])
		return msg_fail("key %s has the wrong type", f->key);
	if (f->type == MSG_F_UINT && v->u.i < 0)
		return msg_fail("key %s is negative", f->key);
	if (f->limit == 0)
		return 0;
	if (f->type == MSG_F_STR || f->type == MSG_F_BIN)
		n = v->u.s.len;
	else if (f->type == MSG_F_ARR)
		n = v->u.a.n;
	else if (f->type == MSG_F_MAP)
		n = v->u.m.n;
	if (n > f->limit)
		return msg_fail("key %s is longer than %zu", f->key, f->limit);
	return 0;
}

/*
 * msg_check_body - the body of m against its catalogue entry.  With deep,
 * every nested value is checked against the limits too; the decoder,
 * which has checked them while reading, passes false.
 */
static int
msg_check_body(const struct msg *m, bool deep)
{
	const struct msg_def *d = msg_def_of((int)m->type);
	const struct msg_field *f;
	const struct msg_val *v;
	size_t k, values = 0;
	int rc;

	if (d == NULL)
		return msg_fail("unknown message type %d", (int)m->type);
	if (m->body.type != MSG_V_MAP)
		return msg_fail("%s: the body is not a map", d->name);
	if (deep && (rc = msg_check_val(&m->body, 1, &values)) < 0)
		return msg_fail("%s: %s", d->name, msg_errbuf);
	for (k = 0; k < m->body.u.m.n; k++) {
		const struct msg_kv *kv = &m->body.u.m.kv[k];

		f = msg_field_of(d, kv->key, kv->keylen);
		if (f == NULL)
			return msg_fail(
			    "%s: unknown key %.64s", d->name, kv->key);
		if ((rc = msg_check_field(f, kv->val)) < 0)
			return msg_fail("%s: %s", d->name, msg_errbuf);
	}
	for (f = d->fields; f->key != NULL; f++) {
		if (!f->required)
			continue;
		v = msg_val_get(&m->body, f->key);
		if (v == NULL)
			return msg_fail(
			    "%s: key %s is missing", d->name, f->key);
	}
	return 0;
}

/* msg_check - whether m satisfies its catalogue entry and the limits. */
int
msg_check(const struct msg *m)
{
	return msg_check_body(m, true);
}

/* Encoding: the shortest msgpack form of each value. */

/* msg_put_be - append the n low bytes of v, most significant first. */
static void
msg_put_be(struct buf *b, uint64_t v, unsigned n)
{
	unsigned char bytes[8];
	unsigned k;

	for (k = 0; k < n; k++)
		bytes[k] = (unsigned char)(v >> (8 * (n - 1 - k)));
	buf_add(b, bytes, n);
}

/* msg_put_head - a tag with a length: fix form if it fits, else 8/16/32. */
static void
msg_put_head(struct buf *b, size_t len, unsigned fixbase, size_t fixmax,
    unsigned tag8, unsigned tag16, unsigned tag32)
{
	if (len <= fixmax && fixbase != 0) {
		buf_addc(b, (char)(fixbase | len));
	} else if (len <= 0xff && tag8 != 0) {
		buf_addc(b, (char)tag8);
		msg_put_be(b, len, 1);
	} else if (len <= 0xffff) {
		buf_addc(b, (char)tag16);
		msg_put_be(b, len, 2);
	} else {
		buf_addc(b, (char)tag32);
		msg_put_be(b, len, 4);
	}
}

/* msg_put_int - append an integer. */
static void
msg_put_int(struct buf *b, int64_t i)
{
	if (i >= 0 && i < 128) {
		buf_addc(b, (char)i);
	} else if (i >= 0) {
		uint64_t u = (uint64_t)i;

		if (u <= 0xff) {
			buf_addc(b, (char)0xcc);
			msg_put_be(b, u, 1);
		} else if (u <= 0xffff) {
			buf_addc(b, (char)0xcd);
			msg_put_be(b, u, 2);
		} else if (u <= 0xffffffffu) {
			buf_addc(b, (char)0xce);
			msg_put_be(b, u, 4);
		} else {
			buf_addc(b, (char)0xcf);
			msg_put_be(b, u, 8);
		}
	} else if (i >= -32) {
		buf_addc(b, (char)(0xe0 | (i & 0x1f)));
	} else if (i >= INT8_MIN) {
		buf_addc(b, (char)0xd0);
		msg_put_be(b, (uint64_t)i, 1);
	} else if (i >= INT16_MIN) {
		buf_addc(b, (char)0xd1);
		msg_put_be(b, (uint64_t)i, 2);
	} else if (i >= INT32_MIN) {
		buf_addc(b, (char)0xd2);
		msg_put_be(b, (uint64_t)i, 4);
	} else {
		buf_addc(b, (char)0xd3);
		msg_put_be(b, (uint64_t)i, 8);
	}
}

/* msg_put_str - append a string with its header. */
static void
msg_put_str(struct buf *b, const char *s, size_t len)
{
	msg_put_head(b, len, 0xa0, 31, 0xd9, 0xda, 0xdb);
	buf_add(b, s, len);
}

/* msg_put_val - append the value v. */
static void
msg_put_val(struct buf *b, const struct msg_val *v)
{
	size_t k;

	switch (v->type) {
	case MSG_V_NIL:
		buf_addc(b, (char)0xc0);
		break;
	case MSG_V_BOOL:
		buf_addc(b, (char)(v->u.b ? 0xc3 : 0xc2));
		break;
	case MSG_V_INT:
		msg_put_int(b, v->u.i);
		break;
	case MSG_V_STR:
		msg_put_str(b, v->u.s.ptr, v->u.s.len);
		break;
	case MSG_V_BIN:
		msg_put_head(b, v->u.s.len, 0, 0, 0xc4, 0xc5, 0xc6);
		buf_add(b, v->u.s.ptr, v->u.s.len);
		break;
	case MSG_V_ARR:
		msg_put_head(b, v->u.a.n, 0x90, 15, 0, 0xdc, 0xdd);
		for (k = 0; k < v->u.a.n; k++)
			msg_put_val(b, v->u.a.items[k]);
		break;
	case MSG_V_MAP:
		msg_put_head(b, v->u.m.n, 0x80, 15, 0, 0xde, 0xdf);
		for (k = 0; k < v->u.m.n; k++) {
			msg_put_str(b, v->u.m.kv[k].key, v->u.m.kv[k].keylen);
			msg_put_val(b, v->u.m.kv[k].val);
		}
		break;
	}
}

/* msg_encode - the msgpack body of m, checked. */
int
msg_encode(const struct msg *m, unsigned char **bodyp, size_t *lenp)
{
	struct buf b = BUF_INIT;
	int rc;

	*bodyp = NULL;
	*lenp = 0;
	if ((rc = msg_check(m)) < 0)
		return rc;
	msg_put_val(&b, &m->body);
	if (b.len > MSG_MAX_BODY) {
		buf_free(&b);
		return msg_fail("%s: a body of more than %u bytes",
		    msg_type_name(m->type), MSG_MAX_BODY);
	}
	*bodyp = (unsigned char *)buf_steal(&b, lenp);
	return 0;
}

/* Decoding. */

struct msg_dec {
	const unsigned char *p;
	size_t len, pos;
	size_t values;
};

/* msg_dec_be - read an n-byte big-endian number into *vp. */
static int
msg_dec_be(struct msg_dec *d, unsigned n, uint64_t *vp)
{
	uint64_t v = 0;
	unsigned k;

	if (d->len - d->pos < n)
		return msg_fail("truncated at byte %zu", d->pos);
	for (k = 0; k < n; k++)
		v = (v << 8) | d->p[d->pos++];
	*vp = v;
	return 0;
}

/* msg_dec_bytes - a STR or BIN of len bytes into v, within the limits. */
static int
msg_dec_bytes(struct msg_dec *d, uint64_t len, bool str, struct msg_val *v)
{
	const unsigned char *s = d->p + d->pos;

	if (len > MSG_MAX_STR)
		return msg_fail("a length of %llu bytes at byte %zu",
		    (unsigned long long)len, d->pos);
	if (len > d->len - d->pos)
		return msg_fail("a length past the end at byte %zu", d->pos);
	if (str && !msg_text_ok(s, len))
		return msg_fail(
		    "a string that is not UTF-8 text at byte %zu", d->pos);
	v->type = str ? MSG_V_STR : MSG_V_BIN;
	v->u.s.ptr = xmalloc(len + 1);
	memcpy(v->u.s.ptr, s, len);
	v->u.s.ptr[len] = '\0';
	v->u.s.len = len;
	d->pos += len;
	return 0;
}

static int msg_dec_val(struct msg_dec *d, unsigned depth, struct msg_val *v);

/* msg_dec_count - check a container's count against the limits. */
static int
msg_dec_count(struct msg_dec *d, uint64_t n, unsigned per, unsigned depth)
{
	if (depth > MSG_MAX_DEPTH)
		return msg_fail(
		    "nested deeper than %u at byte %zu", MSG_MAX_DEPTH, d->pos);
	if (n > MSG_MAX_ITEMS)
		return msg_fail("a count of %llu at byte %zu",
		    (unsigned long long)n, d->pos);
	/* Each item takes at least one byte. */
	if (n * per > d->len - d->pos)
		return msg_fail("a count past the end at byte %zu", d->pos);
	if (d->values + n * per > MSG_MAX_VALUES)
		return msg_fail("more than %u values", MSG_MAX_VALUES);
	d->values += n * per;
	return 0;
}

/* msg_dec_arr - an array of n items into v. */
static int
msg_dec_arr(struct msg_dec *d, uint64_t n, unsigned depth, struct msg_val *v)
{
	uint64_t k;
	int rc;

	if ((rc = msg_dec_count(d, n, 1, depth)) < 0)
		return rc;
	v->type = MSG_V_ARR;
	v->u.a.cap = n;
	v->u.a.items = n ? xreallocarray(NULL, n, sizeof(*v->u.a.items)) : NULL;
	for (k = 0; k < n; k++) {
		v->u.a.items[k] = xcalloc(1, sizeof(struct msg_val));
		v->u.a.n++;
		if ((rc = msg_dec_val(d, depth + 1, v->u.a.items[k])) < 0)
			return rc;
	}
	return 0;
}

/* msg_dec_key - a map key: a string of at most MSG_MAX_KEY bytes. */
static int
msg_dec_key(struct msg_dec *d, struct msg_kv *kv)
{
	struct msg_val key = {0};
	uint64_t len = 0;
	unsigned c;
	int rc;

	if (d->pos >= d->len)
		return msg_fail("truncated at byte %zu", d->pos);
	c = d->p[d->pos++];
	if (c >= 0xa0 && c <= 0xbf)
		len = c & 0x1f;
	else if (c >= 0xd9 && c <= 0xdb) {
		if ((rc = msg_dec_be(d, 1u << (c - 0xd9), &len)) < 0)
			return rc;
	} else
		return msg_fail(
		    "a map key that is not a string at byte %zu", d->pos - 1);
	if (len == 0 || len > MSG_MAX_KEY)
		return msg_fail("a map key of %llu bytes at byte %zu",
		    (unsigned long long)len, d->pos);
	if ((rc = msg_dec_bytes(d, len, true, &key)) < 0)
		return rc;
	kv->key = key.u.s.ptr;
	kv->keylen = key.u.s.len;
	return 0;
}

/* msg_dec_map - a map of n pairs into v; keys must be distinct. */
static int
msg_dec_map(struct msg_dec *d, uint64_t n, unsigned depth, struct msg_val *v)
{
	const char *dup;
	uint64_t k;
	int rc;

	if ((rc = msg_dec_count(d, n, 2, depth)) < 0)
		return rc;
	v->type = MSG_V_MAP;
	v->u.m.cap = n;
	v->u.m.kv = n ? xreallocarray(NULL, n, sizeof(*v->u.m.kv)) : NULL;
	for (k = 0; k < n; k++) {
		struct msg_kv *kv = &v->u.m.kv[k];

		if ((rc = msg_dec_key(d, kv)) < 0)
			return rc;
		kv->val = xcalloc(1, sizeof(*kv->val));
		v->u.m.n++;
		if ((rc = msg_dec_val(d, depth + 1, kv->val)) < 0)
			return rc;
	}
	if ((dup = msg_map_dup(v)) != NULL)
		return msg_fail("key %.64s twice", dup);
	return 0;
}

/* msg_dec_val - one value at depth into v (which the caller frees). */
static int
msg_dec_val(struct msg_dec *d, unsigned depth, struct msg_val *v)
{
	uint64_t u = 0;
	unsigned c;
	int rc;

	if (d->pos >= d->len)
		return msg_fail("truncated at byte %zu", d->pos);
	c = d->p[d->pos++];
	if (c <= 0x7f || c >= 0xe0) {
		v->type = MSG_V_INT;
		v->u.i = (int8_t)c;
		return 0;
	}
	if (c >= 0xa0 && c <= 0xbf)
		return msg_dec_bytes(d, c & 0x1f, true, v);
	if (c >= 0x90 && c <= 0x9f)
		return msg_dec_arr(d, c & 0x0f, depth, v);
	if (c >= 0x80 && c <= 0x8f)
		return msg_dec_map(d, c & 0x0f, depth, v);
	switch (c) {
	case 0xc0:
		v->type = MSG_V_NIL;
		return 0;
	case 0xc2:
	case 0xc3:
		v->type = MSG_V_BOOL;
		v->u.b = c == 0xc3;
		return 0;
	case 0xcc:
	case 0xcd:
	case 0xce:
	case 0xcf:
		if ((rc = msg_dec_be(d, 1u << (c - 0xcc), &u)) < 0)
			return rc;
		if (u > (uint64_t)INT64_MAX)
			return msg_fail(
			    "an integer past 2^63-1 at byte %zu", d->pos);
		v->type = MSG_V_INT;
		v->u.i = (int64_t)u;
		return 0;
	case 0xd0:
	case 0xd1:
	case 0xd2:
	case 0xd3: {
		unsigned n = 1u << (c - 0xd0);

		if ((rc = msg_dec_be(d, n, &u)) < 0)
			return rc;
		/* Sign-extend from n bytes. */
		if (n < 8 && (u >> (8 * n - 1)) != 0)
			u |= ~(uint64_t)0 << (8 * n);
		v->type = MSG_V_INT;
		v->u.i = (int64_t)u;
		return 0;
	}
	case 0xd9:
	case 0xda:
	case 0xdb:
	case 0xc4:
	case 0xc5:
	case 0xc6: {
		bool str = c >= 0xd9;
		unsigned n = 1u << (str ? c - 0xd9 : c - 0xc4);

		if ((rc = msg_dec_be(d, n, &u)) < 0)
			return rc;
		return msg_dec_bytes(d, u, str, v);
	}
	case 0xdc:
	case 0xdd:
		if ((rc = msg_dec_be(d, c == 0xdc ? 2 : 4, &u)) < 0)
			return rc;
		return msg_dec_arr(d, u, depth, v);
	case 0xde:
	case 0xdf:
		if ((rc = msg_dec_be(d, c == 0xde ? 2 : 4, &u)) < 0)
			return rc;
		return msg_dec_map(d, u, depth, v);
	default:
		/* Floats, extensions and the unused byte 0xc1. */
		return msg_fail("msgpack type 0x%02x at byte %zu is not "
				"allowed",
		    c, d->pos - 1);
	}
}

/* msg_drop_unknown - remove the keys of the body its type does not list. */
static void
msg_drop_unknown(struct msg *m, const struct msg_def *def)
{
	size_t j = 0, k;

	for (k = 0; k < m->body.u.m.n; k++) {
		struct msg_kv *kv = &m->body.u.m.kv[k];

		if (msg_field_of(def, kv->key, kv->keylen) != NULL) {
			m->body.u.m.kv[j++] = *kv;
			continue;
		}
		free(kv->key);
		msg_val_free(kv->val);
		free(kv->val);
	}
	m->body.u.m.n = j;
}

/* msg_decode - a new message of type number from a body frame. */
int
msg_decode(int number, const void *body, size_t len, struct msg **mp)
{
	const struct msg_def *def = msg_def_of(number);
	struct msg_dec d = {body, len, 0, 0};
	struct msg *m = NULL;
	int rc;

	*mp = NULL;
	if (def == NULL)
		return msg_fail("unknown message type %d", number);
	if (len > MSG_MAX_BODY)
		return msg_fail("%s: a body of %zu bytes", def->name, len);
	if (len == 0 ||
	    ((d.p[0] & 0xf0) != 0x80 && d.p[0] != 0xde && d.p[0] != 0xdf))
		return msg_fail("%s: the body is not a map", def->name);
	m = xcalloc(1, sizeof(*m));
	m->type = def->type;
	if ((rc = msg_dec_val(&d, 1, &m->body)) < 0) {
		rc = msg_fail("%s: %s", def->name, msg_errbuf);
		goto out;
	}
	if (d.pos != d.len) {
		rc = msg_fail(
		    "%s: %zu bytes after the body", def->name, d.len - d.pos);
		goto out;
	}
	if (msg_lax(def))
		msg_drop_unknown(m, def);
	if ((rc = msg_check_body(m, false)) < 0)
		goto out;
	*mp = m;
	m = NULL;
out:
	msg_destroy(&m);
	return rc;
}

/* Frames over ZeroMQ. */

/* msg_zerr - a SHIRO_ERR_* for the errno of a failed zmq call. */
static int
msg_zerr(int e)
{
	if (e == EAGAIN)
		return -SHIRO_ERR_AGAIN;
	if (e == EHOSTUNREACH)
		return -SHIRO_ERR_NOENT;
	if (e == EINTR)
		return -SHIRO_ERR_AGAIN;
	return -SHIRO_ERR_IO;
}

/* msg_send - send m on sock (to a ROUTER peer when to is given). */
int
msg_send(void *sock, const struct msg *m, const struct msg_ident *to)
{
	unsigned char *body = NULL;
	unsigned char type = (unsigned char)m->type;
	size_t len;
	int rc;

	if ((rc = msg_encode(m, &body, &len)) < 0) {
		log_warnx("not sending a bad message: %s", msg_strerror());
		return rc;
	}
	if (to != NULL &&
	    zmq_send(sock, to->data, to->len, ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0) {
		rc = msg_zerr(errno);
		goto out;
	}
	/* The first frame went: the rest of the message goes with it. */
	if (zmq_send(sock, MSG_HEADER, strlen(MSG_HEADER),
		ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0 ||
	    zmq_send(sock, &type, 1, ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0 ||
	    zmq_send(sock, body, len, ZMQ_DONTWAIT) < 0) {
		rc = msg_zerr(errno);
		goto out;
	}
	rc = 0;
out:
	free(body);
	return rc;
}

/* msg_user_of - the User-Id property of frame f into *userp. */
static void
msg_user_of(zmq_msg_t *f, struct msg_user *userp)
{
	const char *u = zmq_msg_gets(f, "User-Id");
	size_t len = u != NULL ? strlen(u) : 0;

	userp->len = 0;
	userp->id[0] = '\0';
	if (len == 0 || len > MSG_MAX_USER)
		return;
	memcpy(userp->id, u, len + 1);
	userp->len = len;
}

/* msg_recv - receive one message without blocking. */
int
msg_recv(void *sock, struct msg **mp, struct msg_ident *fromp)
{
	return msg_recv_user(sock, mp, fromp, NULL);
}

/* msg_recv_user - receive one message and its connection's User-Id. */
int
msg_recv_user(void *sock, struct msg **mp, struct msg_ident *fromp,
    struct msg_user *userp)
{
	zmq_msg_t frames[4];
	size_t nframes = 0, want = fromp ? 4 : 3, extra = 0, first;
	const unsigned char *type;
	int more, rc, flags = ZMQ_DONTWAIT;

	*mp = NULL;
	if (fromp != NULL)
		fromp->len = 0;
	if (userp != NULL) {
		userp->len = 0;
		userp->id[0] = '\0';
	}
	/* Take every frame of one message, keeping the first four. */
	for (;;) {
		zmq_msg_t *f = nframes < 4 ? &frames[nframes] : NULL;
		zmq_msg_t spare;

		if (f == NULL)
			f = &spare;
		zmq_msg_init(f);
		if (zmq_msg_recv(f, sock, flags) < 0) {
			rc = msg_zerr(errno);
			zmq_msg_close(f);
			if (nframes == 0)
				goto out;
			/* A message's frames arrive together: not here. */
			rc = -SHIRO_ERR_IO;
			goto out;
		}
		flags = 0;
		more = zmq_msg_more(f);
		if (f == &spare) {
			zmq_msg_close(f);
			extra++;
		} else {
			nframes++;
		}
		if (!more)
			break;
	}
	/* Every frame was read (ZeroMQ had them all already): stopping
	 * early would leave the rest to be read as the next message. */
	if (nframes + extra > 1000000) {
		rc = msg_fail("a message of %zu frames", nframes + extra);
		goto out;
	}
	/* Every frame of a message carries its connection's properties. */
	if (userp != NULL)
		msg_user_of(&frames[nframes - 1], userp);
	first = 0;
	if (fromp != NULL) {
		if (zmq_msg_size(&frames[0]) > MSG_MAX_IDENT) {
			rc = msg_fail("an identity of %zu bytes",
			    zmq_msg_size(&frames[0]));
			goto out;
		}
		fromp->len = zmq_msg_size(&frames[0]);
		memcpy(fromp->data, zmq_msg_data(&frames[0]), fromp->len);
		first = 1;
	}
	if (nframes + extra != want) {
		rc = msg_fail("%zu frames where %zu were expected",
		    nframes + extra, want);
		goto out;
	}
	if (zmq_msg_size(&frames[first]) != strlen(MSG_HEADER) ||
	    memcmp(zmq_msg_data(&frames[first]), MSG_HEADER,
		strlen(MSG_HEADER)) != 0) {
		rc = msg_fail("not the %s protocol header", MSG_HEADER);
		goto out;
	}
	if (zmq_msg_size(&frames[first + 1]) != 1) {
		rc = msg_fail("a type frame of %zu bytes",
		    zmq_msg_size(&frames[first + 1]));
		goto out;
	}
	type = zmq_msg_data(&frames[first + 1]);
	rc = msg_decode(type[0], zmq_msg_data(&frames[first + 2]),
	    zmq_msg_size(&frames[first + 2]), mp);
out:
	while (nframes > 0)
		zmq_msg_close(&frames[--nframes]);
	return rc;
}
