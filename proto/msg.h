/*
 * msg.h - the messages between shiro's processes, and their wire form.
 *
 * A message is a type (proto/catalog.def) and a body: a map from short
 * string keys to values.  On the wire (ZeroMQ, see docs/protocol.md) it is
 * three frames, [header "shiro/1"][type byte][msgpack map], preceded on a
 * ROUTER socket by the peer's identity frame.
 *
 * Decoding is strict and bounded: the body must be one msgpack map that
 * uses the whole frame; each key the catalogue lists for the type must have
 * its type and fit its limit; required keys must be present; keys appear
 * once; unknown keys are refused (skipped only in the types that the broker
 * sends to clients); strings are valid UTF-8 without NUL; nesting, lengths
 * and counts stay under the limits below.  Nothing is allocated for a
 * length before that length has been checked against the limit and the
 * bytes that remain.
 *
 * Memory: struct msg owns every value in it.  Pointers returned by getters
 * are borrowed and stay valid until the message is destroyed or the same
 * key is set again.  Pointers to containers returned by msg_set_map(),
 * msg_val_add_map() and the like also stay valid until then (values are
 * allocated one by one and never move).
 *
 * Setters and getters take keys from the catalogue: a key the type does
 * not list, or a value of the wrong type for it, is a bug in the caller
 * and panics.  Only the nested values inside ARR and MAP fields are free
 * form (still bounded by the limits at encoding and decoding).
 */
#ifndef SHIRO_MSG_H
#define SHIRO_MSG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The protocol: header frame and revision. */
#define MSG_HEADER "shiro/1" /* first frame of every message, 7 bytes */
#define MSG_VERSION 2 /* revision within shiro/1, in HELLO/READY */

/* Limits on everything that arrives. */
#define MSG_MAX_BODY (4u << 20) /* bytes of the msgpack body frame */
#define MSG_MAX_FRAME (MSG_MAX_BODY + 64u) /* ZMQ_MAXMSGSIZE on sockets */
#define MSG_MAX_TEXT (1u << 20) /* STR fields that carry chat text */
#define MSG_MAX_STR (1u << 20) /* any string or bin without its own limit */
#define MSG_MAX_KEY 64u /* bytes of a map key */
#define MSG_MAX_ITEMS 65536u /* items of one array or pairs of one map */
#define MSG_MAX_VALUES 262144u /* values in one message, all levels */
#define MSG_MAX_DEPTH 8u /* the body map is depth 1 */
#define MSG_MAX_IDENT 255u /* bytes of a ZeroMQ routing identity */

/* Senders, for the permission table (the senders column of catalog.def). */
#define MSG_FROM_CLIENT 0x01u /* a client (shiro) to the broker */
#define MSG_FROM_BROKER_C 0x02u /* the broker to a client */
#define MSG_FROM_MODEL 0x04u /* a model worker to the broker */
#define MSG_FROM_TOOL 0x08u /* a tool worker to the broker */
#define MSG_FROM_FS 0x10u /* an fs worker to the broker */
#define MSG_FROM_BROKER_W 0x20u /* the broker to a worker */
#define MSG_FROM_WORKERS (MSG_FROM_MODEL | MSG_FROM_TOOL | MSG_FROM_FS)

/* The message types: MSG_HELLO, MSG_SEND, ... with their wire numbers. */
enum msg_type {
	MSG_NONE = 0, /* not a type: never sent, refused when received */
#define MSG(name, num, lname, from, fields) MSG_##name = (num),
#include "proto/catalog.def"
#undef MSG
};

/* Who sends: the rows of the permission table. */
enum msg_peer {
	MSG_PEER_CLIENT, /* shiro, the client */
	MSG_PEER_BROKER_TO_CLIENT, /* shirod on the client socket */
	MSG_PEER_MODEL, /* a model worker */
	MSG_PEER_TOOL, /* a tool worker */
	MSG_PEER_FS, /* an fs worker */
	MSG_PEER_BROKER_TO_WORKER /* shirod on the worker socket */
};

/* The types of values. */
enum msg_vtype {
	MSG_V_NIL, /* only inside ARR and MAP fields */
	MSG_V_BOOL,
	MSG_V_INT, /* signed 64-bit; UINT fields are INT values >= 0 */
	MSG_V_STR, /* valid UTF-8, no NUL, NUL-terminated in memory */
	MSG_V_BIN,
	MSG_V_ARR,
	MSG_V_MAP
};

struct msg_kv;

/* A value.  Read the union member that type names; never write it. */
struct msg_val {
	enum msg_vtype type;
	union {
		bool b;
		int64_t i;
		struct {
			char *ptr; /* NUL-terminated for STR (and BIN) */
			size_t len;
		} s;
		struct {
			struct msg_val **items;
			size_t n, cap;
		} a;
		struct {
			struct msg_kv *kv;
			size_t n, cap;
		} m;
	} u;
};

/* A pair of a map, in the order it was set or received. */
struct msg_kv {
	char *key;
	size_t keylen;
	struct msg_val *val;
};

/* A message: opaque; built with msg_new() and the setters. */
struct msg;

/* The identity of a peer on a ROUTER socket. */
struct msg_ident {
	size_t len;
	unsigned char data[MSG_MAX_IDENT];
};

/*
 * The ZAP User-Id of the connection a message came on: what the ZAP
 * handler said when it admitted the connection (zsock_zap_reply), so a
 * peer cannot choose it.  Empty when the socket has no ZAP domain.
 */
#define MSG_MAX_USER 64u
struct msg_user {
	size_t len;
	char id[MSG_MAX_USER + 1]; /* NUL-terminated */
};

/* msg_new - an empty message of a catalogue type (panics on MSG_NONE). */
struct msg *msg_new(enum msg_type type);
/* msg_destroy - free *mp and everything in it; set *mp to NULL. */
void msg_destroy(struct msg **mp);
/* msg_type - the type of m. */
enum msg_type msg_type(const struct msg *m);
/* msg_body - the body map of m, for walking it (e.g. to print JSON). */
const struct msg_val *msg_body(const struct msg *m);

/* msg_type_name - the log name of a type ("hello"), "?" if unknown. */
const char *msg_type_name(enum msg_type type);
/* msg_type_valid - whether number is a type of the catalogue. */
bool msg_type_valid(int number);
/* msg_allowed - whether peer may send type (the permission table). */
bool msg_allowed(enum msg_peer peer, enum msg_type type);
/* msg_peer_of_role - the peer of a worker role "model", "tool" or "fs". */
int msg_peer_of_role(const char *role, enum msg_peer *peerp);

/*
 * Setters of the body's keys.  A key set twice keeps the last value.
 * Strings: msg_set_str() copies a C string, msg_set_strn() len bytes;
 * invalid UTF-8 and NUL bytes are replaced by U+FFFD, so that every
 * message this side encodes is valid.  msg_set_map() and msg_set_arr()
 * return the new empty container (borrowed) to fill with msg_val_*.
 */
void msg_set_str(struct msg *m, const char *key, const char *s);
void msg_set_strn(struct msg *m, const char *key, const char *s, size_t len);
void msg_set_bin(struct msg *m, const char *key, const void *p, size_t len);
void msg_set_int(struct msg *m, const char *key, int64_t v);
void msg_set_bool(struct msg *m, const char *key, bool v);
struct msg_val *msg_set_map(struct msg *m, const char *key);
struct msg_val *msg_set_arr(struct msg *m, const char *key);

/*
 * Getters: 0 and the value, or -SHIRO_ERR_NOENT when the key is absent.
 * Strings are borrowed and NUL-terminated; lenp may be NULL.
 */
int msg_get_str(
    const struct msg *m, const char *key, const char **sp, size_t *lenp);
int msg_get_bin(
    const struct msg *m, const char *key, const void **pp, size_t *lenp);
int msg_get_int(const struct msg *m, const char *key, int64_t *vp);
/* msg_get_uint - the same for UINT keys, as uint64_t. */
int msg_get_uint(const struct msg *m, const char *key, uint64_t *vp);
int msg_get_bool(const struct msg *m, const char *key, bool *vp);
int msg_get_map(
    const struct msg *m, const char *key, const struct msg_val **vp);
int msg_get_arr(
    const struct msg *m, const char *key, const struct msg_val **vp);
/* msg_has - whether the body has key. */
bool msg_has(const struct msg *m, const char *key);

/*
 * Nested values.  msg_val_set_* put key into the map mapv (replacing an
 * earlier value); msg_val_add_* append to the array arrv.  Both panic when
 * given a container of the other kind.  Returned containers are borrowed.
 */
void msg_val_set_str(struct msg_val *mapv, const char *key, const char *s);
void msg_val_set_strn(
    struct msg_val *mapv, const char *key, const char *s, size_t len);
void msg_val_set_bin(
    struct msg_val *mapv, const char *key, const void *p, size_t len);
void msg_val_set_int(struct msg_val *mapv, const char *key, int64_t v);
void msg_val_set_bool(struct msg_val *mapv, const char *key, bool v);
void msg_val_set_nil(struct msg_val *mapv, const char *key);
struct msg_val *msg_val_set_map(struct msg_val *mapv, const char *key);
struct msg_val *msg_val_set_arr(struct msg_val *mapv, const char *key);
void msg_val_add_str(struct msg_val *arrv, const char *s);
void msg_val_add_strn(struct msg_val *arrv, const char *s, size_t len);
void msg_val_add_int(struct msg_val *arrv, int64_t v);
void msg_val_add_bool(struct msg_val *arrv, bool v);
struct msg_val *msg_val_add_map(struct msg_val *arrv);
struct msg_val *msg_val_add_arr(struct msg_val *arrv);
/*
 * msg_val_add_copy / msg_val_set_copy - append to arrv, or put under key
 * in mapv, a deep copy of v (of any message, decoded or built); the copy
 * is returned (borrowed).
 */
struct msg_val *msg_val_add_copy(struct msg_val *arrv, const struct msg_val *v);
struct msg_val *msg_val_set_copy(
    struct msg_val *mapv, const char *key, const struct msg_val *v);
/* msg_val_get - the value of key in the map mapv, or NULL (borrowed). */
const struct msg_val *msg_val_get(const struct msg_val *mapv, const char *key);
/* msg_val_str - the string of key in mapv, or NULL if absent or not STR. */
const char *msg_val_str(const struct msg_val *mapv, const char *key);
/* msg_val_int - the int of key in mapv into *vp: 0 or -SHIRO_ERR_NOENT. */
int msg_val_int(const struct msg_val *mapv, const char *key, int64_t *vp);

/*
 * msg_check - whether m satisfies its catalogue entry and the limits:
 * 0, or -SHIRO_ERR_PROTO with the reason in msg_strerror().
 */
int msg_check(const struct msg *m);

/*
 * msg_encode - append the body of m (the msgpack map) to *bodyp, a buffer
 * the caller frees with free(); *lenp gets its length.  0, or
 * -SHIRO_ERR_PROTO when m fails msg_check().
 */
int msg_encode(const struct msg *m, unsigned char **bodyp, size_t *lenp);

/*
 * msg_decode - a new message of type number from a body frame: 0, or
 * -SHIRO_ERR_PROTO (unknown type, malformed or out-of-limit body) with
 * the reason in msg_strerror().  The caller destroys *mp.
 */
int msg_decode(int number, const void *body, size_t len, struct msg **mp);

/*
 * msg_send - send m on a ZeroMQ socket without blocking; to is the peer's
 * identity on a ROUTER socket, NULL on a DEALER.  0, -SHIRO_ERR_AGAIN when
 * the peer's queue is full, -SHIRO_ERR_NOENT when (on a ROUTER) no peer
 * has that identity (any more), -SHIRO_ERR_PROTO when m fails
 * msg_check(), -SHIRO_ERR_IO otherwise.
 * The caller keeps m.
 */
int msg_send(void *sock, const struct msg *m, const struct msg_ident *to);

/*
 * msg_recv - receive one message without blocking.  fromp receives the
 * identity frame on a ROUTER socket and must be NULL on a DEALER.
 * Returns 0 and *mp (the caller destroys it); -SHIRO_ERR_AGAIN when
 * nothing is waiting; -SHIRO_ERR_PROTO when a message arrived but was
 * malformed (every frame of it is consumed, the reason is in
 * msg_strerror(), and *fromp is still filled when the identity was
 * readable, so the broker can answer or drop that peer);
 * -SHIRO_ERR_IO on a socket error.
 */
int msg_recv(void *sock, struct msg **mp, struct msg_ident *fromp);

/*
 * msg_recv_user - msg_recv, and the User-Id of the connection the message
 * came on into *userp (len 0 when it has none, or one longer than
 * MSG_MAX_USER, which no handler of ours gives).  *userp is filled also
 * when -SHIRO_ERR_PROTO is returned, as *fromp is.
 */
int msg_recv_user(void *sock, struct msg **mp, struct msg_ident *fromp,
    struct msg_user *userp);

/* msg_strerror - why the last msg_check/decode/recv failed (borrowed). */
const char *msg_strerror(void);

#endif
