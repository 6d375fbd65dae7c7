/*
 * test_proto - the messages: every catalogue type round trips and refuses
 * malformed bodies; the decoder survives truncation, huge declared
 * lengths, deep nesting, wrong types and trailing bytes; and messages go
 * over a real ZeroMQ ipc socket pair, where bad frames are refused and an
 * oversized frame never arrives.
 *
 * Bodies are built here with msgpack-c's packer, an implementation
 * independent of ours, so that the tests also show that what we decode
 * is what other msgpack libraries write.
 */
#include <errno.h>
#include <msgpack.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zmq.h>

#include "proto/err.h"
#include "proto/msg.h"
#include "proto/xmalloc.h"
#include "proto/zsock.h"
#include "tests/harness.h"

/* The catalogue, read again here so that the tests follow it. */
struct tfield {
	const char *key;
	const char *type;
	bool required;
	size_t limit;
};

struct tdef {
	int number;
	const char *name;
	unsigned from;
	const struct tfield *fields;
};

#define F(key, type, req, limit) {#key, #type, MSG_F_##req, limit},
#define MSG_F_REQ true
#define MSG_F_OPT false
#define MSG(name, num, lname, from, fields) \
	static const struct tfield tf_##name[] = {fields{NULL, NULL, 0, 0}};
#include "proto/catalog.def"
#undef MSG

static const struct tdef tdefs[] = {
#define MSG(name, num, lname, from, fields) {num, lname, from, tf_##name},
#include "proto/catalog.def"
#undef MSG
};
#define NTDEFS (sizeof(tdefs) / sizeof(tdefs[0]))

/* example - a realistic message of each type; NULL for a type we lack. */
static struct msg *
example(int number)
{
	struct msg *m;
	struct msg_val *v, *w;

	if (!msg_type_valid(number))
		return NULL;
	m = msg_new((enum msg_type)number);
	switch (number) {
	case MSG_HELLO:
		msg_set_int(m, "rid", 1);
		msg_set_str(m, "client", "shiro 0.1");
		msg_set_int(m, "version", MSG_VERSION);
		msg_set_int(m, "last_seq", 41);
		break;
	case MSG_SEND:
		msg_set_int(m, "rid", 2);
		msg_set_str(m, "text", "fix the build in src/main.c: error 42");
		msg_set_str(m, "kind", "user");
		msg_set_str(m, "cwd", "/home/me/src");
		msg_set_str(m, "key", "k-0001");
		msg_set_bool(m, "turn", false);
		msg_set_str(m, "approvals", "ask");
		break;
	case MSG_MEMORY:
		msg_set_int(m, "rid", 3);
		msg_set_int(m, "offset", 4096);
		break;
	case MSG_STATUS:
	case MSG_STOP:
		msg_set_int(m, "rid", 3);
		break;
	case MSG_PING:
		/* One that also says 16 output REPLYs of RUN 9 were read. */
		msg_set_int(m, "rid", 3);
		msg_set_int(m, "run", 9);
		msg_set_int(m, "read", 16);
		break;
	case MSG_ZOOM:
		msg_set_int(m, "rid", 4);
		msg_set_int(m, "id", 8);
		msg_set_int(m, "n", 4);
		break;
	case MSG_LOG:
		msg_set_int(m, "rid", 5);
		msg_set_int(m, "tail", 20);
		break;
	case MSG_BYE:
		msg_set_int(m, "rid", 6);
		break;
	case MSG_NOTES:
		msg_set_int(m, "rid", 7);
		msg_set_str(m, "cwd", "/home/me/src");
		msg_set_str(m, "what", "todos");
		break;
	case MSG_APPROVE:
		msg_set_int(m, "rid", 7);
		msg_set_int(m, "approval", 3);
		msg_set_str(m, "answer", "no");
		msg_set_str(m, "reason", "edit the test, not the code");
		break;
	case MSG_INTERRUPT:
		msg_set_int(m, "rid", 8);
		msg_set_str(m, "what", "command");
		msg_set_int(m, "id", 41);
		break;
	case MSG_RUN:
		msg_set_int(m, "rid", 9);
		msg_set_str(m, "tool", "bash");
		msg_set_str(m, "args", "{\"command\":\"make check\"}");
		msg_set_str(m, "cwd", "/srv/build/shiro");
		break;
	case MSG_WELCOME:
		msg_set_int(m, "rid", 1);
		msg_set_int(m, "seq", 100);
		msg_set_bool(m, "replay", true);
		msg_set_int(m, "pid", 4242);
		msg_set_int(m, "version", MSG_VERSION);
		msg_set_str(m, "daemon", "shirod 0.1");
		break;
	case MSG_ACK:
		msg_set_int(m, "rid", 2);
		msg_set_int(m, "id", 17);
		msg_set_str(m, "key", "k-0001");
		break;
	case MSG_EVENT:
		msg_set_int(m, "seq", 101);
		msg_set_str(m, "ev", "batch");
		v = msg_set_arr(m, "merges");
		w = msg_val_add_map(v);
		msg_val_set_int(w, "id", 0);
		msg_val_set_int(w, "n", 2);
		msg_set_int(m, "view_bytes", 64000);
		msg_set_int(m, "view_lines", 130);
		break;
	case MSG_REPLY:
		msg_set_int(m, "rid", 3);
		v = msg_set_map(m, "doc");
		msg_val_set_int(v, "messages", 12);
		w = msg_val_set_arr(v, "lines");
		w = msg_val_add_map(w);
		msg_val_set_int(w, "id", 0);
		msg_val_set_int(w, "n", 8);
		msg_val_set_str(w, "text", "user: asks for a build fix");
		msg_val_set_nil(v, "turn");
		break;
	case MSG_ERROR:
		msg_set_int(m, "rid", 9);
		msg_set_str(m, "code", "proto");
		msg_set_str(m, "text", "send: key text is missing");
		break;
	case MSG_PONG:
		msg_set_int(m, "rid", 3);
		msg_set_int(m, "seq", 101);
		break;
	case MSG_READY:
		msg_set_str(m, "role", "model");
		msg_set_str(m, "provider", "offline");
		msg_set_int(m, "pid", 777);
		msg_set_int(m, "jobs", 1);
		msg_set_int(m, "version", MSG_VERSION);
		break;
	case MSG_HEARTBEAT:
		msg_set_int(m, "job", 5);
		break;
	case MSG_CHUNK:
		msg_set_int(m, "job", 5);
		msg_set_str(m, "text", "partial ");
		msg_set_str(m, "part", "thinking");
		break;
	case MSG_RESULT:
		msg_set_int(m, "job", 5);
		msg_set_str(
		    m, "text", "user: asks to fix src/main.c (error 42)");
		msg_set_int(m, "tries", 1);
		v = msg_set_map(m, "usage");
		msg_val_set_int(v, "input", 1000);
		msg_val_set_int(v, "cache_read", 24000);
		v = msg_set_map(m, "data");
		msg_val_set_str(v, "stop", "end");
		w = msg_val_add_map(msg_val_set_arr(v, "content"));
		msg_val_set_str(w, "type", "text");
		msg_val_set_str(w, "text", "user: asks to fix src/main.c");
		break;
	case MSG_FAIL:
		msg_set_int(m, "job", 5);
		msg_set_str(m, "code", "provider");
		msg_set_str(m, "text", "HTTP 529 overloaded");
		msg_set_bool(m, "retry", true);
		break;
	case MSG_JOB:
		msg_set_int(m, "job", 5);
		msg_set_str(m, "kind", "compact");
		msg_set_int(m, "l", 1);
		msg_set_int(m, "i", 3);
		msg_set_int(m, "limit", 512);
		v = msg_set_arr(m, "context");
		msg_val_add_str(v, "0+4|user: earlier things");
		v = msg_set_arr(m, "inputs");
		w = msg_val_add_map(v);
		msg_val_set_int(w, "id", 6);
		msg_val_set_int(w, "n", 1);
		msg_val_set_str(w, "text", "user: left");
		w = msg_val_add_map(v);
		msg_val_set_int(w, "id", 7);
		msg_val_set_int(w, "n", 1);
		msg_val_set_str(w, "text", "shiro: right");
		break;
	case MSG_CANCEL:
		msg_set_int(m, "job", 5);
		break;
	case MSG_SECRET:
		msg_set_str(m, "provider", "anthropic");
		msg_set_bin(m, "key", "sk-\0\x01secret", 11);
		break;
	case MSG_SHUTDOWN:
		msg_set_str(m, "text", "stopping");
		break;
	default:
		msg_destroy(&m);
		return NULL;
	}
	return m;
}

/* encode - the body of m, which must be valid. */
static unsigned char *
encode(const struct msg *m, size_t *lenp)
{
	unsigned char *body;
	int rc = msg_encode(m, &body, lenp);

	CHECKF(rc == 0, "encoding %s: %s", msg_type_name(msg_type(m)),
	    msg_strerror());
	return body;
}

/* decode_ok - decode a body that must be accepted. */
static struct msg *
decode_ok(int number, const void *p, size_t len)
{
	struct msg *m;
	int rc = msg_decode(number, p, len, &m);

	CHECKF(rc == 0, "decoding type %d: %s", number, msg_strerror());
	return m;
}

/* refused - whether a body is refused as a protocol error. */
static bool
refused(int number, const void *p, size_t len)
{
	struct msg *m = NULL;
	int rc = msg_decode(number, p, len, &m);

	if (rc == 0) {
		msg_destroy(&m);
		return false;
	}
	CHECKF(rc == -SHIRO_ERR_PROTO && m == NULL, "rc %d", rc);
	CHECK(msg_strerror()[0] != '\0');
	return true;
}

/* Bodies written with msgpack-c. */
struct pk {
	msgpack_sbuffer sb;
	msgpack_packer p;
};

/* pk_init - an empty body under construction. */
static void
pk_init(struct pk *k)
{
	msgpack_sbuffer_init(&k->sb);
	msgpack_packer_init(&k->p, &k->sb, msgpack_sbuffer_write);
}

/* pk_str - pack a C string. */
static void
pk_str(struct pk *k, const char *s)
{
	msgpack_pack_str(&k->p, strlen(s));
	msgpack_pack_str_body(&k->p, s, strlen(s));
}

/* pk_value - pack a sample value of a catalogue type, length n for texts. */
static void
pk_value(struct pk *k, const char *type, size_t n)
{
	size_t j;

	if (strcmp(type, "STR") == 0) {
		msgpack_pack_str(&k->p, n);
		for (j = 0; j < n; j++)
			msgpack_pack_str_body(&k->p, "a", 1);
	} else if (strcmp(type, "BIN") == 0) {
		msgpack_pack_bin(&k->p, n);
		for (j = 0; j < n; j++)
			msgpack_pack_bin_body(&k->p, "\0", 1);
	} else if (strcmp(type, "INT") == 0) {
		msgpack_pack_int64(&k->p, -7);
	} else if (strcmp(type, "UINT") == 0) {
		msgpack_pack_uint64(&k->p, 7);
	} else if (strcmp(type, "BOOL") == 0) {
		msgpack_pack_true(&k->p);
	} else if (strcmp(type, "ARR") == 0) {
		msgpack_pack_array(&k->p, n);
		for (j = 0; j < n; j++)
			msgpack_pack_uint8(&k->p, 1);
	} else if (strcmp(type, "MAP") == 0) {
		msgpack_pack_map(&k->p, n);
		for (j = 0; j < n; j++) {
			char key[32];

			snprintf(key, sizeof(key), "k%zu", j);
			pk_str(k, key);
			msgpack_pack_nil(&k->p);
		}
	}
}

/* pk_wrong - pack a value of a type other than the catalogue's type. */
static void
pk_wrong(struct pk *k, const char *type)
{
	if (strcmp(type, "STR") == 0)
		msgpack_pack_bin(&k->p, 0);
	else
		pk_str(k, "x");
}

/*
 * pk_body - a body for d with every required key (or, with all, every
 * key), skipping the key skip, giving the key wrong a wrong type, the key
 * long a length one past its limit, and adding extra keys at the end.
 */
static void
pk_body(struct pk *k, const struct tdef *d, bool all, const char *skip,
    const char *wrong, const char *longkey, const char *extra)
{
	const struct tfield *f;
	size_t n = 0;

	pk_init(k);
	for (f = d->fields; f->key != NULL; f++)
		if ((all || f->required) &&
		    (skip == NULL || strcmp(skip, f->key)))
			n++;
	msgpack_pack_map(&k->p, n + (extra != NULL));
	for (f = d->fields; f->key != NULL; f++) {
		if (!(all || f->required) || (skip && !strcmp(skip, f->key)))
			continue;
		pk_str(k, f->key);
		if (wrong != NULL && strcmp(wrong, f->key) == 0)
			pk_wrong(k, f->type);
		else if (longkey != NULL && strcmp(longkey, f->key) == 0)
			pk_value(k, f->type, f->limit + 1);
		else
			pk_value(k, f->type, f->limit ? f->limit : 3);
	}
	if (extra != NULL) {
		pk_str(k, extra);
		msgpack_pack_uint8(&k->p, 1);
	}
}

/* Every type has an example, a fuzz seed, a name and a permission row. */
static void
catalogue_is_complete(void)
{
	char path[256];
	size_t k, j;
	struct stat st;
	int count = 0;

	for (k = 0; k < NTDEFS; k++) {
		struct msg *m = example(tdefs[k].number);

		CHECKF(m != NULL, "type %s has no example in test_proto.c",
		    tdefs[k].name);
		msg_destroy(&m);
		snprintf(path, sizeof(path), "tests/fuzz/corpus/msg/%s",
		    tdefs[k].name);
		CHECKF(stat(path, &st) == 0, "no fuzz seed %s", path);
		CHECK_EQ_STR(msg_type_name((enum msg_type)tdefs[k].number),
		    tdefs[k].name);
		CHECKF(tdefs[k].from != 0, "%s: nobody may send it",
		    tdefs[k].name);
		for (j = 0; j < k; j++) {
			CHECK(tdefs[j].number != tdefs[k].number);
			CHECK(strcmp(tdefs[j].name, tdefs[k].name) != 0);
		}
	}
	for (k = 0; k < 256; k++)
		count += msg_type_valid((int)k);
	CHECK_EQ_INT(count, NTDEFS);
	CHECK(
	    !msg_type_valid(0) && !msg_type_valid(-1) && !msg_type_valid(256));
}

/* Each example survives encode, decode, encode byte for byte. */
static void
every_type_round_trips(void)
{
	size_t k, len, len2;

	for (k = 0; k < NTDEFS; k++) {
		struct msg *m = example(tdefs[k].number), *back;
		unsigned char *body = encode(m, &len), *body2;
		msgpack_unpacked up;
		size_t off = 0;

		back = decode_ok(tdefs[k].number, body, len);
		CHECK_EQ_INT(msg_type(back), tdefs[k].number);
		body2 = encode(back, &len2);
		CHECKF(len == len2 && memcmp(body, body2, len) == 0,
		    "%s does not round trip", tdefs[k].name);
		/* msgpack-c reads our bytes as one map, all of them. */
		msgpack_unpacked_init(&up);
		CHECK(msgpack_unpack_next(&up, (const char *)body, len, &off) ==
		    MSGPACK_UNPACK_SUCCESS);
		CHECK(up.data.type == MSGPACK_OBJECT_MAP && off == len);
		CHECK_EQ_INT(up.data.via.map.size, msg_body(m)->u.m.n);
		msgpack_unpacked_destroy(&up);
		free(body);
		free(body2);
		msg_destroy(&m);
		msg_destroy(&back);
	}
}

/* The values read back are the values set, nested ones included. */
static void
getters_return_what_was_set(void)
{
	struct msg *m = example(MSG_JOB), *back;
	const struct msg_val *arr, *item;
	unsigned char *body;
	const char *s;
	const void *p;
	size_t len;
	int64_t i;
	uint64_t u;
	bool b;

	body = encode(m, &len);
	back = decode_ok(MSG_JOB, body, len);
	CHECK(msg_get_int(back, "l", &i) == 0 && i == 1);
	CHECK(msg_get_uint(back, "job", &u) == 0 && u == 5);
	CHECK(msg_get_str(back, "kind", &s, &len) == 0);
	CHECK_EQ_STR(s, "compact");
	CHECK_EQ_INT(len, 7);
	CHECK(msg_get_arr(back, "inputs", &arr) == 0 && arr->u.a.n == 2);
	item = arr->u.a.items[1];
	CHECK_EQ_STR(msg_val_str(item, "text"), "shiro: right");
	CHECK(msg_val_int(item, "id", &i) == 0 && i == 7);
	CHECK(msg_val_int(item, "nope", &i) == -SHIRO_ERR_NOENT);
	CHECK(msg_get_int(back, "deadline_ms", &i) == -SHIRO_ERR_NOENT);
	CHECK(!msg_has(back, "data") && msg_has(back, "context"));
	free(body);
	msg_destroy(&m);
	msg_destroy(&back);
	CHECK(m == NULL && back == NULL);

	m = example(MSG_SECRET);
	body = encode(m, &len);
	back = decode_ok(MSG_SECRET, body, len);
	CHECK(msg_get_bin(back, "key", &p, &len) == 0 && len == 11);
	CHECK(memcmp(p, "sk-\0\x01secret", 11) == 0);
	free(body);
	msg_destroy(&m);
	msg_destroy(&back);

	m = example(MSG_WELCOME);
	CHECK(msg_get_bool(m, "replay", &b) == 0 && b);
	msg_set_bool(m, "replay", false); /* a key set twice keeps the last */
	CHECK(msg_get_bool(m, "replay", &b) == 0 && !b);
	CHECK_EQ_INT(msg_body(m)->u.m.n, 6);
	msg_destroy(&m);
}

/* Every key of every type set, at its limit, round trips. */
static void
every_field_at_its_limit_is_accepted(void)
{
	size_t k;

	for (k = 0; k < NTDEFS; k++) {
		struct pk pk;
		struct msg *m;

		pk_body(&pk, &tdefs[k], true, NULL, NULL, NULL, NULL);
		m = decode_ok(tdefs[k].number, pk.sb.data, pk.sb.size);
		msg_destroy(&m);
		msgpack_sbuffer_destroy(&pk.sb);
	}
}

/*
 * For every type: a missing required key, a wrong type, a length past the
 * limit, and an unknown key are refused (the last skipped where the
 * catalogue says so), as are a body that is not a map and trailing bytes.
 */
static void
every_type_refuses_malformed_bodies(void)
{
	const struct tfield *f;
	struct pk pk;
	size_t k;

	for (k = 0; k < NTDEFS; k++) {
		const struct tdef *d = &tdefs[k];
		bool lax = d->from == MSG_FROM_BROKER_C;
		struct msg *m = NULL;

		for (f = d->fields; f->key != NULL; f++) {
			if (f->required) {
				pk_body(&pk, d, true, f->key, NULL, NULL, NULL);
				CHECKF(
				    refused(d->number, pk.sb.data, pk.sb.size),
				    "%s without %s", d->name, f->key);
				msgpack_sbuffer_destroy(&pk.sb);
			}
			pk_body(&pk, d, true, NULL, f->key, NULL, NULL);
			CHECKF(refused(d->number, pk.sb.data, pk.sb.size),
			    "%s with %s of a wrong type", d->name, f->key);
			msgpack_sbuffer_destroy(&pk.sb);
			if (f->limit == 0)
				continue;
			pk_body(&pk, d, true, NULL, NULL, f->key, NULL);
			CHECKF(refused(d->number, pk.sb.data, pk.sb.size),
			    "%s with %s past %zu", d->name, f->key, f->limit);
			msgpack_sbuffer_destroy(&pk.sb);
		}
		pk_body(&pk, d, false, NULL, NULL, NULL, "zz_unknown");
		if (lax) {
			m = decode_ok(d->number, pk.sb.data, pk.sb.size);
			CHECKF(
			    !msg_has(m, "zz_unknown"), "%s kept it", d->name);
			msg_destroy(&m);
		} else {
			CHECKF(refused(d->number, pk.sb.data, pk.sb.size),
			    "%s with an unknown key", d->name);
		}
		msgpack_sbuffer_destroy(&pk.sb);
		/* Trailing bytes, and a body that is not a map. */
		pk_body(&pk, d, false, NULL, NULL, NULL, NULL);
		msgpack_pack_nil(&pk.p);
		CHECK(refused(d->number, pk.sb.data, pk.sb.size));
		msgpack_sbuffer_destroy(&pk.sb);
		pk_init(&pk);
		msgpack_pack_array(&pk.p, 0);
		CHECK(refused(d->number, pk.sb.data, pk.sb.size));
		CHECK(refused(d->number, "", 0));
		msgpack_sbuffer_destroy(&pk.sb);
	}
}

/* Every proper prefix of every example is refused, without a crash. */
static void
truncated_bodies_are_refused(void)
{
	size_t k, cut, len;

	for (k = 0; k < NTDEFS; k++) {
		struct msg *m = example(tdefs[k].number);
		unsigned char *body = encode(m, &len);

		for (cut = 0; cut < len; cut++) {
			/* A copy of exactly cut bytes, so ASan sees overreads. */
			unsigned char *p = xmemdup(body, cut ? cut : 1);

			CHECKF(refused(tdefs[k].number, p, cut),
			    "%s cut to %zu bytes", tdefs[k].name, cut);
			free(p);
		}
		free(body);
		msg_destroy(&m);
	}
}

/* limit_memory - keep this test process under 256 MB of address space. */
static void
limit_memory(void)
{
	struct rlimit rl = {256u << 20, 256u << 20};

	/* ASan reserves terabytes of shadow: the limit only fits without it. */
#if !defined(__SANITIZE_ADDRESS__)
	setrlimit(RLIMIT_AS, &rl);
#else
	(void)rl;
#endif
}

/*
 * Five bytes that declare 4 GiB of string, bin, array or map are refused
 * before anything is allocated (the address space is capped).
 */
static void
huge_declared_lengths_are_refused(void)
{
	static const unsigned char tags[] = {
	    0xdb, 0xc6, 0xdd, 0xdf, 0xda, 0xdc, 0xde};
	unsigned char body[32];
	size_t k;

	limit_memory();
	for (k = 0; k < sizeof(tags); k++) {
		/* {"text": <tag> ff ff ff ff} and the bare value. */
		size_t n = 0;

		body[n++] = 0x81;
		body[n++] = 0xa4;
		memcpy(body + n, "text", 4);
		n += 4;
		body[n++] = tags[k];
		memset(body + n, 0xff, 4);
		n += 4;
		CHECK(refused(MSG_CHUNK, body, n));
		CHECK(refused(MSG_REPLY, body + 6, 5));
	}
	/* A string whose length is within limits but past the end. */
	CHECK(refused(MSG_PING, "\x81\xa3rid\xdb\x00\x00\x10\x00", 9));
}

/* Nesting up to the limit is fine; one level more is refused. */
static void
deep_nesting_is_refused(void)
{
	unsigned depth;

	for (depth = MSG_MAX_DEPTH - 2; depth <= MSG_MAX_DEPTH + 20; depth++) {
		struct pk pk;
		unsigned d;
		bool no;

		/* REPLY {rid: 1, doc: [[[...]]]}: the body is depth 1. */
		pk_init(&pk);
		msgpack_pack_map(&pk.p, 2);
		pk_str(&pk, "rid");
		msgpack_pack_uint8(&pk.p, 1);
		pk_str(&pk, "doc");
		msgpack_pack_map(&pk.p, 1);
		pk_str(&pk, "a");
		for (d = 3; d <= depth; d++)
			msgpack_pack_array(&pk.p, 1);
		msgpack_pack_nil(&pk.p);
		no = refused(MSG_REPLY, pk.sb.data, pk.sb.size);
		CHECKF(no == (depth > MSG_MAX_DEPTH), "depth %u", depth);
		msgpack_sbuffer_destroy(&pk.sb);
	}
}

/* pk_ping - PING {rid: <the value packed by fn>}, refused or not. */
static bool
ping_refused(void (*fn)(msgpack_packer *))
{
	struct pk pk;
	bool no;

	pk_init(&pk);
	msgpack_pack_map(&pk.p, 1);
	pk_str(&pk, "rid");
	fn(&pk.p);
	no = refused(MSG_PING, pk.sb.data, pk.sb.size);
	msgpack_sbuffer_destroy(&pk.sb);
	return no;
}

static void
pack_float(msgpack_packer *p)
{
	msgpack_pack_double(p, 1.0);
}

static void
pack_negative(msgpack_packer *p)
{
	msgpack_pack_int8(p, -1);
}

static void
pack_huge(msgpack_packer *p)
{
	msgpack_pack_uint64(p, UINT64_MAX);
}

static void
pack_ext(msgpack_packer *p)
{
	msgpack_pack_ext(p, 1, 1);
	msgpack_pack_ext_body(p, "x", 1);
}

static void
pack_u32(msgpack_packer *p)
{
	msgpack_pack_uint32(p, 70000);
}

/* Floats, extensions, negatives and 2^64-1 are not UINTs; 70000 is. */
static void
wrong_value_types_are_refused(void)
{
	struct msg *m;
	uint64_t u;

	CHECK(ping_refused(pack_float));
	CHECK(ping_refused(pack_negative));
	CHECK(ping_refused(pack_huge));
	CHECK(ping_refused(pack_ext));
	CHECK(!ping_refused(pack_u32));
	m = decode_ok(MSG_PING, "\x81\xa3rid\xce\x00\x01\x11\x70", 10);
	CHECK(msg_get_uint(m, "rid", &u) == 0 && u == 70000);
	msg_destroy(&m);
	/* The never-used byte 0xc1, a key that is not a string, a dup. */
	CHECK(refused(MSG_PING, "\x81\xa3rid\xc1", 6));
	CHECK(refused(MSG_PING, "\x81\x01\x01", 3));
	CHECK(refused(MSG_PING, "\x82\xa3rid\x01\xa3rid\x02", 11));
	/* Text that is not UTF-8, or holds a NUL, is not a STR. */
	CHECK(
	    refused(MSG_ERROR, "\x82\xa4\x63ode\xa1x\xa4text\xa2\xc3\x28", 16));
	CHECK(
	    refused(MSG_ERROR, "\x82\xa4\x63ode\xa1x\xa4text\xa2\x61\x00", 16));
	CHECK(!refused(
	    MSG_ERROR, "\x82\xa4\x63ode\xa1x\xa4text\xa2\xc3\xa9", 16));
}

/* Unknown type numbers are refused whatever the body. */
static void
unknown_types_are_refused(void)
{
	int t;

	for (t = -1; t <= 256; t++)
		if (!msg_type_valid(t))
			CHECK(refused(t, "\x80", 1));
	CHECK_EQ_STR(msg_type_name((enum msg_type)99), "?");
}

/* Setters repair text, and msg_check refuses an incomplete message. */
static void
setters_repair_and_check(void)
{
	struct msg *m = msg_new(MSG_ERROR);
	unsigned char *body;
	const char *s;
	size_t len;

	msg_set_strn(m, "text", "a\xff\0b", 4);
	CHECK(msg_get_str(m, "text", &s, &len) == 0);
	CHECK_EQ_STR(s,
	    "a\xef\xbf\xbd\xef\xbf\xbd"
	    "b");
	CHECK(msg_check(m) == -SHIRO_ERR_PROTO); /* code is missing */
	CHECK(strstr(msg_strerror(), "code") != NULL);
	CHECK(msg_encode(m, &body, &len) == -SHIRO_ERR_PROTO);
	msg_set_str(m, "code", "x");
	CHECK(msg_check(m) == 0);
	msg_set_str(m, "code", "0123456789012345678901234567890123");
	CHECK(msg_check(m) == -SHIRO_ERR_PROTO); /* past 32 bytes */
	msg_destroy(&m);
}

/* The permission table: who may send what. */
static void
permission_table(void)
{
	enum msg_peer p;

	CHECK(msg_allowed(MSG_PEER_CLIENT, MSG_SEND));
	CHECK(!msg_allowed(MSG_PEER_CLIENT, MSG_JOB));
	CHECK(!msg_allowed(MSG_PEER_CLIENT, MSG_READY));
	CHECK(msg_allowed(MSG_PEER_BROKER_TO_CLIENT, MSG_EVENT));
	CHECK(!msg_allowed(MSG_PEER_BROKER_TO_CLIENT, MSG_JOB));
	CHECK(msg_allowed(MSG_PEER_MODEL, MSG_RESULT));
	CHECK(msg_allowed(MSG_PEER_TOOL, MSG_HEARTBEAT));
	CHECK(!msg_allowed(MSG_PEER_FS, MSG_SEND));
	CHECK(!msg_allowed(MSG_PEER_MODEL, MSG_JOB));
	CHECK(msg_allowed(MSG_PEER_BROKER_TO_WORKER, MSG_SECRET));
	CHECK(msg_allowed(MSG_PEER_BROKER_TO_WORKER, MSG_HEARTBEAT));
	CHECK(!msg_allowed(MSG_PEER_BROKER_TO_WORKER, MSG_RESULT));
	CHECK(!msg_allowed(MSG_PEER_CLIENT, (enum msg_type)99));
	CHECK(msg_peer_of_role("model", &p) == 0 && p == MSG_PEER_MODEL);
	CHECK(msg_peer_of_role("fs", &p) == 0 && p == MSG_PEER_FS);
	CHECK(msg_peer_of_role("root", &p) == -SHIRO_ERR_NOENT);
}

/* A pair of sockets over ipc in a temporary directory. */
struct pair {
	char endpoint[300];
	void *router, *dealer;
};

/* pair_open - a ROUTER bound and a DEALER connected to it. */
static void
pair_open(struct pair *pp)
{
	snprintf(pp->endpoint, sizeof(pp->endpoint), "ipc://%s/t.sock",
	    harness_tmpdir());
	CHECK(zsock_router(pp->endpoint, NULL, &pp->router) == 0);
	CHECK(zsock_dealer(pp->endpoint, NULL, &pp->dealer) == 0);
}

/* wait_in - wait up to ms for sock to be readable. */
static bool
wait_in(void *sock, long ms)
{
	struct zsock_poll it = {sock, -1, ZSOCK_IN, 0};

	return zsock_poll(&it, 1, ms) == 1 && (it.revents & ZSOCK_IN);
}

/* recv_one - receive one message within two seconds. */
static int
recv_one(void *sock, struct msg **mp, struct msg_ident *from)
{
	CHECKF(wait_in(sock, 2000), "nothing arrived");
	return msg_recv(sock, mp, from);
}

/* Every example goes DEALER to ROUTER and back over ipc. */
static void
ipc_round_trip_of_every_type(void)
{
	struct pair pp = {0};
	struct msg_ident who;
	size_t k, a, b;

	pair_open(&pp);
	for (k = 0; k < NTDEFS; k++) {
		struct msg *m = example(tdefs[k].number), *got;
		unsigned char *x = encode(m, &a), *y;

		CHECK(msg_send(pp.dealer, m, NULL) == 0);
		CHECK(recv_one(pp.router, &got, &who) == 0);
		CHECK(who.len > 0);
		y = encode(got, &b);
		CHECK(a == b && memcmp(x, y, a) == 0);
		msg_destroy(&got);
		free(y);
		CHECK(msg_send(pp.router, m, &who) == 0);
		CHECK(recv_one(pp.dealer, &got, NULL) == 0);
		CHECK_EQ_INT(msg_type(got), tdefs[k].number);
		msg_destroy(&got);
		free(x);
		msg_destroy(&m);
	}
	/* Nothing is waiting now; an unknown identity is reported. */
	CHECK(msg_recv(pp.router, &(struct msg *){NULL}, &who) ==
	    -SHIRO_ERR_AGAIN);
	memcpy(who.data, "nobody", 6);
	who.len = 6;
	{
		struct msg *m = example(MSG_PONG);

		CHECK(msg_send(pp.router, m, &who) == -SHIRO_ERR_NOENT);
		msg_destroy(&m);
	}
	zsock_close(&pp.dealer);
	zsock_close(&pp.router);
	CHECK(pp.router == NULL);
	zsock_term();
}

/* raw_send - send frames as given, through libzmq directly. */
static void
raw_send(void *sock, const char *const *frames, const size_t *lens, size_t n)
{
	size_t k;

	for (k = 0; k < n; k++)
		CHECK(zmq_send(sock, frames[k], lens[k],
			  k + 1 < n ? ZMQ_SNDMORE : 0) >= 0);
}

/* Bad frames are refused one by one; the next good message arrives. */
static void
ipc_bad_frames_are_refused(void)
{
	static const char *const hdr = MSG_HEADER, ping[] = "\x81\xa3rid\x01";
	const char *const cases[][4] = {
	    {"shiro/2", "\x08", ping}, /* another protocol version */
	    {hdr, "\x08\x08", ping}, /* a type frame of two bytes */
	    {hdr, "\x63", ping}, /* an unknown type */
	    {hdr, "\x08", "\x81\xa3rix\x01"}, /* an unknown key */
	    {hdr, "\x08"}, /* two frames */
	    {hdr, "\x08", ping, "more"}, /* four frames */
	};
	const size_t lens[][4] = {
	    {7, 1, 6}, {7, 2, 6}, {7, 1, 6}, {7, 1, 6}, {7, 1}, {7, 1, 6, 4}};
	const size_t nf[] = {3, 3, 3, 3, 2, 4};
	struct msg_ident who;
	struct msg *m, *got;
	struct pair pp = {0};
	size_t k;

	pair_open(&pp);
	for (k = 0; k < sizeof(nf) / sizeof(nf[0]); k++) {
		got = NULL;
		raw_send(pp.dealer, cases[k], lens[k], nf[k]);
		CHECKF(recv_one(pp.router, &got, &who) == -SHIRO_ERR_PROTO,
		    "case %zu accepted", k);
		CHECK(got == NULL && who.len > 0);
	}
	m = example(MSG_PING);
	CHECK(msg_send(pp.dealer, m, NULL) == 0);
	CHECK(recv_one(pp.router, &got, &who) == 0);
	CHECK_EQ_INT(msg_type(got), MSG_PING);
	msg_destroy(&got);
	msg_destroy(&m);
	zsock_close(&pp.dealer);
	zsock_close(&pp.router);
	zsock_term();
}

/*
 * A message of more than a million frames is refused whole: its last
 * frames are not read as the next message (with one of them taken for
 * the sender's identity), and the peer's next message arrives intact.
 */
static void
ipc_frame_storm_is_drained(void)
{
	struct msg_ident who, first;
	struct msg *m, *got = NULL;
	struct pair pp = {0};
	size_t k;

	pair_open(&pp);
	m = example(MSG_PING);
	CHECK(msg_send(pp.dealer, m, NULL) == 0);
	CHECK(recv_one(pp.router, &got, &first) == 0);
	msg_destroy(&got);
	for (k = 0; k < 1000005; k++)
		CHECK(zmq_send(pp.dealer, "imposter", k == 1000004 ? 8 : 0,
			  k == 1000004 ? 0 : ZMQ_SNDMORE) >= 0);
	CHECK(msg_send(pp.dealer, m, NULL) == 0);
	CHECK(recv_one(pp.router, &got, &who) == -SHIRO_ERR_PROTO);
	CHECK(got == NULL);
	CHECK(recv_one(pp.router, &got, &who) == 0);
	CHECK(got != NULL && msg_type(got) == MSG_PING);
	CHECK(
	    who.len == first.len && memcmp(who.data, first.data, who.len) == 0);
	msg_destroy(&got);
	msg_destroy(&m);
	zsock_close(&pp.dealer);
	zsock_close(&pp.router);
	zsock_term();
}

/* A ZAP handler for the tests: admits the CURVE key allow (as user
 * "slot-a") or any NULL peer (as "anyone"); counts what it refused. */
struct tzap {
	void *sock;
	unsigned char allow[ZSOCK_KEY_BIN];
	unsigned asked, refused;
	char address[ZSOCK_ZAP_FIELD + 1];
};

/* tzap_serve - answer every waiting ZAP request. */
static void
tzap_serve(struct tzap *z)
{
	struct zsock_zap_req req;

	while (zsock_zap_recv(z->sock, &req) == 0) {
		z->asked++;
		snprintf(z->address, sizeof(z->address), "%s", req.address);
		if (strcmp(req.mechanism, "NULL") == 0) {
			CHECK(zsock_zap_reply(
				  z->sock, &req, 200, "OK", "anyone") == 0);
		} else if (req.has_key &&
		    memcmp(req.key, z->allow, ZSOCK_KEY_BIN) == 0) {
			CHECK(zsock_zap_reply(
				  z->sock, &req, 200, "OK", "slot-a") == 0);
		} else {
			z->refused++;
			CHECK(zsock_zap_reply(
				  z->sock, &req, 400, "unknown key", "") == 0);
		}
	}
}

/* tzap_recv - serve ZAP while waiting up to ms for a message on router. */
static int
tzap_recv(struct tzap *z, void *router, long ms, struct msg **mp,
    struct msg_user *user)
{
	long long end = zsock_now_ms() + ms;
	struct zsock_poll it[2] = {
	    {z->sock, -1, ZSOCK_IN, 0}, {router, -1, ZSOCK_IN, 0}};
	struct msg_ident who;

	while (zsock_now_ms() < end) {
		(void)zsock_poll(it, 2, (long)(end - zsock_now_ms()));
		tzap_serve(z);
		if (msg_recv_user(router, mp, &who, user) == 0)
			return 0;
	}
	return -1;
}

/* test_cred - a fresh credential for a server key pair. */
static void
test_cred(const struct zsock_keypair *server, struct zsock_cred *c)
{
	memset(c, 0, sizeof(*c));
	memcpy(c->server, server->pub, sizeof(c->server));
	CHECK(zsock_keypair(&c->own) == 0);
}

/*
 * A CURVE ROUTER with a ZAP domain lets in only the key its handler
 * admits, and every message of that connection carries the User-Id the
 * handler gave it; a peer with another key is refused (again at each of
 * its reconnections) and none of its messages arrives.
 */
static void
zap_curve_admits_only_known_keys(void)
{
	struct zsock_keypair server;
	struct zsock_cred good, bad;
	struct zsock_opts ro = {0}, go = {0}, bo = {0};
	struct tzap z = {0};
	struct msg_user user;
	struct msg *m = example(MSG_HEARTBEAT), *got = NULL;
	char ep[300];
	void *router, *gd, *bd;
	long long end;

	snprintf(ep, sizeof(ep), "ipc://%s/z.sock", harness_tmpdir());
	CHECK(zsock_keypair(&server) == 0);
	test_cred(&server, &good);
	test_cred(&server, &bad);
	CHECK(zsock_key_decode(good.own.pub, z.allow) == 0);
	CHECK(zsock_zap_open(&z.sock) == 0);
	ro.zap_domain = "test";
	ro.curve_secret = server.sec;
	CHECK(zsock_router(ep, &ro, &router) == 0);
	bo.curve = &bad;
	CHECK(zsock_dealer(ep, &bo, &bd) == 0);
	CHECK(msg_send(bd, m, NULL) == 0);
	go.curve = &good;
	CHECK(zsock_dealer(ep, &go, &gd) == 0);
	CHECK(msg_send(gd, m, NULL) == 0);
	CHECK(tzap_recv(&z, router, 5000, &got, &user) == 0);
	CHECK_EQ_STR(user.id, "slot-a");
	msg_destroy(&got);
	/* The impostor's try is refused; once it was, the good peer's next
	 * message arrives and nothing of the impostor's came before it. */
	end = zsock_now_ms() + 10000;
	while (z.refused < 1 && zsock_now_ms() < end) {
		got = NULL;
		CHECKF(tzap_recv(&z, router, 100, &got, &user) != 0,
		    "a message from user \"%s\" got through", user.id);
	}
	CHECKF(z.refused >= 1, "the impostor was never refused");
	msg_destroy(&m);
	m = example(MSG_PING);
	CHECK(msg_send(gd, m, NULL) == 0);
	CHECK(tzap_recv(&z, router, 5000, &got, &user) == 0);
	CHECK_EQ_STR(user.id, "slot-a");
	CHECK(msg_type(got) == MSG_PING);
	msg_destroy(&got);
	zsock_close(&bd);
	zsock_close(&gd);
	zsock_close(&router);
	zsock_close(&z.sock);
	zsock_term();
	msg_destroy(&m);
}

/*
 * With the NULL mechanism, the handler sees an ipc peer as
 * "host:uid:gid:pid" (libzmq's SO_PEERCRED): the pid is the connecting
 * process's own.
 */
static void
zap_null_sees_peer_credentials(void)
{
	struct zsock_opts ro = {0};
	struct tzap z = {0};
	struct msg_user user;
	struct msg *m = example(MSG_PING), *got = NULL;
	char ep[300], want[64], *tail;
	void *router, *dealer;

	snprintf(ep, sizeof(ep), "ipc://%s/n.sock", harness_tmpdir());
	CHECK(zsock_zap_open(&z.sock) == 0);
	ro.zap_domain = "clients";
	CHECK(zsock_router(ep, &ro, &router) == 0);
	CHECK(zsock_dealer(ep, NULL, &dealer) == 0);
	CHECK(msg_send(dealer, m, NULL) == 0);
	CHECK(tzap_recv(&z, router, 5000, &got, &user) == 0);
	CHECK_EQ_STR(user.id, "anyone");
	snprintf(want, sizeof(want), ":%u:%u:%d", (unsigned)geteuid(),
	    (unsigned)getegid(), (int)getpid());
	tail = strlen(z.address) >= strlen(want)
	    ? z.address + strlen(z.address) - strlen(want)
	    : z.address;
	CHECKF(strcmp(tail, want) == 0, "address \"%s\"", z.address);
	msg_destroy(&got);
	zsock_close(&dealer);
	zsock_close(&router);
	zsock_close(&z.sock);
	zsock_term();
	msg_destroy(&m);
}

/* cred_try - write len bytes of text into a pipe and read a credential. */
static int
cred_try(const char *text, size_t len, struct zsock_cred *c)
{
	int fds[2], rc;

	CHECK(pipe(fds) == 0);
	CHECK(write(fds[1], text, len) == (ssize_t)len);
	close(fds[1]);
	rc = zsock_cred_read(fds[0], c);
	close(fds[0]);
	return rc;
}

/* A credential read back is the one written; any other text is refused:
 * cut short, one byte more, a wrong first line, a character outside Z85,
 * a public key that is not the secret key's, a text of 1 MB. */
static void
cred_read_is_strict(void)
{
	struct zsock_keypair server;
	struct zsock_cred c, back, other;
	unsigned char bin[ZSOCK_KEY_BIN];
	char text[512], *big;
	int fds[2];
	size_t len;
	pid_t pid;

	CHECK(zsock_keypair(&server) == 0);
	test_cred(&server, &c);
	test_cred(&server, &other);
	CHECK(pipe(fds) == 0);
	CHECK(zsock_cred_write(fds[1], &c) == 0);
	close(fds[1]);
	CHECK(zsock_cred_read(fds[0], &back) == 0);
	close(fds[0]);
	CHECK(memcmp(&c, &back, sizeof(c)) == 0);
	len = (size_t)snprintf(text, sizeof(text),
	    "shiro-cred/1\nserver %s\npublic %s\nsecret %s\n", c.server,
	    c.own.pub, c.own.sec);
	CHECK(cred_try(text, len, &back) == 0);
	CHECK(cred_try(text, len - 1, &back) == -SHIRO_ERR_PROTO);
	CHECK(back.own.sec[0] == '\0');
	text[len] = '\n';
	CHECK(cred_try(text, len + 1, &back) == -SHIRO_ERR_PROTO);
	text[3] = 'X';
	CHECK(cred_try(text, len, &back) == -SHIRO_ERR_PROTO);
	text[3] = 'r';
	text[len - 2] = '"';
	CHECK(cred_try(text, len, &back) == -SHIRO_ERR_PROTO);
	len = (size_t)snprintf(text, sizeof(text),
	    "shiro-cred/1\nserver %s\npublic %s\nsecret %s\n", c.server,
	    other.own.pub, c.own.sec);
	CHECK(cred_try(text, len, &back) == -SHIRO_ERR_PROTO);
	big = xmalloc(1 << 20);
	memset(big, 'a', 1 << 20);
	CHECK(pipe(fds) == 0);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		close(fds[0]);
		(void)!write(fds[1], big, 1 << 20);
		_exit(0);
	}
	close(fds[1]);
	CHECK(zsock_cred_read(fds[0], &back) == -SHIRO_ERR_PROTO);
	close(fds[0]);
	free(big);
	CHECK(waitpid(pid, NULL, 0) == pid);
	CHECK(zsock_key_decode("too short", bin) == -SHIRO_ERR_INVAL);
	CHECK(zsock_key_decode(c.own.pub, bin) == 0);
}

/*
 * A frame larger than ZMQ_MAXMSGSIZE, from a peer without that limit,
 * never reaches the ROUTER; another peer is still served.
 */
static void
ipc_oversized_frame_is_dropped(void)
{
	size_t big = MSG_MAX_FRAME + 1;
	const char *frames[3];
	size_t lens[3] = {7, 1, big};
	struct msg_ident who;
	struct msg *m, *got;
	void *ctx, *raw;
	char *blob;
	struct pair pp = {0};
	int linger = 0;

	pair_open(&pp);
	ctx = zmq_ctx_new();
	raw = zmq_socket(ctx, ZMQ_DEALER);
	zmq_setsockopt(raw, ZMQ_LINGER, &linger, sizeof(linger));
	CHECK(zmq_connect(raw, pp.endpoint) == 0);
	blob = xcalloc(1, big);
	blob[0] = (char)0x80;
	frames[0] = MSG_HEADER;
	frames[1] = "\x08";
	frames[2] = blob;
	raw_send(raw, frames, lens, 3);
	CHECK(!wait_in(pp.router, 1000));
	m = example(MSG_PING);
	CHECK(msg_send(pp.dealer, m, NULL) == 0);
	CHECK(recv_one(pp.router, &got, &who) == 0);
	CHECK_EQ_INT(msg_type(got), MSG_PING);
	msg_destroy(&got);
	/* And nothing else came in the meantime. */
	CHECK(!wait_in(pp.router, 200));
	msg_destroy(&m);
	free(blob);
	zmq_close(raw);
	zmq_ctx_term(ctx);
	zsock_close(&pp.dealer);
	zsock_close(&pp.router);
	zsock_term();
}

/* Each fuzz seed is the body of its type, prefixed by the type byte. */
static void
fuzz_seeds_decode(void)
{
	char path[256];
	unsigned char buf[4096];
	size_t k, n, len;
	FILE *fp;

	for (k = 0; k < NTDEFS; k++) {
		struct msg *m;

		snprintf(path, sizeof(path), "tests/fuzz/corpus/msg/%s",
		    tdefs[k].name);
		if (getenv("SHIRO_WRITE_SEEDS") != NULL) {
			unsigned char *body;

			m = example(tdefs[k].number);
			body = encode(m, &len);
			fp = fopen(path, "wb");
			CHECKF(fp != NULL, "%s: %s", path, strerror(errno));
			fputc(tdefs[k].number, fp);
			fwrite(body, 1, len, fp);
			CHECK(fclose(fp) == 0);
			free(body);
			msg_destroy(&m);
		}
		fp = fopen(path, "rb");
		CHECKF(fp != NULL, "%s: %s", path, strerror(errno));
		n = fread(buf, 1, sizeof(buf), fp);
		fclose(fp);
		CHECK(n > 1 && buf[0] == tdefs[k].number);
		m = decode_ok(buf[0], buf + 1, n - 1);
		msg_destroy(&m);
	}
}

static const struct harness_test tests[] = {
    HT(catalogue_is_complete),
    HT(every_type_round_trips),
    HT(getters_return_what_was_set),
    HT(every_field_at_its_limit_is_accepted),
    HT(every_type_refuses_malformed_bodies),
    HT(truncated_bodies_are_refused),
    HT(huge_declared_lengths_are_refused),
    HT(deep_nesting_is_refused),
    HT(wrong_value_types_are_refused),
    HT(unknown_types_are_refused),
    HT(setters_repair_and_check),
    HT(permission_table),
    HT(ipc_round_trip_of_every_type),
    HT(ipc_bad_frames_are_refused),
    HT(ipc_oversized_frame_is_dropped),
    HT(zap_curve_admits_only_known_keys),
    HT(zap_null_sees_peer_credentials),
    HT(cred_read_is_strict),
    HT_SLOW(ipc_frame_storm_is_drained, 60),
    HT(fuzz_seeds_decode),
};

HARNESS_MAIN(tests)
