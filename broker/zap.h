/*
 * zap.h - who may connect to shirod's sockets: its ZAP handler.
 *
 * libzmq asks a ZAP handler (RFC 27) about every new connection to a
 * socket that has a ZAP domain, before any message of it is read; the
 * handler admits it with a User-Id, which then comes with each of its
 * messages (msg_recv_user), or refuses it, and nothing of it gets
 * through.  shirod answers in its own loop (zap_serve), for two domains:
 *
 *   ZAP_DOMAIN_WORKERS  the workers' socket, a CURVE server: a peer is
 *                       admitted only with a public key in the table of
 *                       keys (zap_keys), and gets that key's User-Id.
 *                       The pool puts a fresh key there for each process
 *                       it starts and drops it when the process dies or
 *                       is killed, so a key dies with its process.
 *   ZAP_DOMAIN_CLIENTS  the clients' socket (NULL mechanism over ipc):
 *                       admitted only when the peer's uid (SO_PEERCRED,
 *                       which libzmq reports in the request's address)
 *                       is shirod's own and the peer is neither a worker
 *                       nor a descendant of one (zap_client_check).
 *   ZAP_DOMAIN_REMOTE_CLIENTS, ZAP_DOMAIN_REMOTE_WORKERS
 *                       the tcp endpoints of the two sockets (CURVE with
 *                       shirod's key pair in keys/server.key): admitted
 *                       only with a public key listed in keys/clients/
 *                       or keys/workers/ (tables remote_clients and
 *                       remote_workers, which broker/remote.c fills from
 *                       those files), as "c:NAME" or "r:NAME".
 *
 * The tables are data, not code.  Refusals are logged at most once a
 * second per domain; a refused tcp peer is named by its address and its
 * key's fingerprint (and the key itself, which is public, so that the
 * person who runs shirod can admit it).
 */
#ifndef SHIRO_BROKER_ZAP_H
#define SHIRO_BROKER_ZAP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "proto/zsock.h"

#include "lograte.h"

#define ZAP_DOMAIN_WORKERS "shiro-workers"
#define ZAP_DOMAIN_CLIENTS "shiro-clients"
#define ZAP_DOMAIN_REMOTE_CLIENTS "shiro-remote-clients"
#define ZAP_DOMAIN_REMOTE_WORKERS "shiro-remote-workers"
#define ZAP_USER_REMOTE_CLIENT "c:" /* and the key's name */
#define ZAP_USER_REMOTE_WORKER "r:" /* and the key's name */
#define ZAP_USER_CLIENT "client" /* the User-Id of an admitted client */
#define ZAP_USER_MAX 32 /* bytes of a User-Id, with its NUL */
#define ZAP_ANCESTORS 64 /* parents walked up from a client's pid */

/* A public key that may connect, and the User-Id its connections get. */
struct zap_key {
	unsigned char key[ZSOCK_KEY_BIN];
	char user[ZAP_USER_MAX];
};

/* The keys admitted on a CURVE socket. */
struct zap_keys {
	struct zap_key *v;
	size_t n, cap;
};

/* zap_keys_put - admit key as user (replacing user's earlier key). */
void zap_keys_put(struct zap_keys *t, const unsigned char key[ZSOCK_KEY_BIN],
    const char *user);

/* zap_keys_drop - admit user's key no longer (no-op if absent). */
void zap_keys_drop(struct zap_keys *t, const char *user);

/* zap_keys_user - the entry admitted as user, or NULL (borrowed). */
const struct zap_key *zap_keys_user(const struct zap_keys *t, const char *user);

/* zap_keys_find - the entry of key, or NULL (borrowed). */
const struct zap_key *zap_keys_find(
    const struct zap_keys *t, const unsigned char key[ZSOCK_KEY_BIN]);

/* zap_keys_free - forget every key. */
void zap_keys_free(struct zap_keys *t);

/* Whether pid is one of shirod's live workers (nonzero) or not. */
typedef int (*zap_worker_fn)(void *arg, pid_t pid);

struct zap {
	void *sock; /* the REP on inproc://zeromq.zap.01 */
	struct zap_keys keys; /* who may connect to the workers' socket */
	struct zap_keys remote_clients; /* on the clients' tcp endpoints */
	struct zap_keys remote_workers; /* on the workers' tcp endpoints */
	uid_t uid; /* the only uid admitted on the clients' socket */
	zap_worker_fn is_worker;
	void *arg;
	const char *proc; /* "/proc", or another root for tests */
	struct lograte log_workers, log_clients, log_remote;
	uint64_t admitted, refused;
};

/*
 * zap_open - bind the handler (before any socket with a ZAP domain) for
 * this process's uid; is_worker(arg, pid) tells a worker's pid.  0 or a
 * negative SHIRO_ERR_*.
 */
int zap_open(struct zap *z, zap_worker_fn is_worker, void *arg);

/* zap_serve - answer every waiting request (now: for the logs). */
void zap_serve(struct zap *z, uint64_t now);

/* zap_close - close the handler (after the sockets it serves) and
 * forget the keys. */
void zap_close(struct zap *z);

/*
 * zap_client_check - whether a NULL-mechanism peer with this ZAP address
 * ("host:uid:gid:pid") may be a client: 0, or -SHIRO_ERR_PERM with the
 * reason in why.  Refused: no peer credentials (a tcp peer), another
 * uid, pid 0 (a peer in a pid namespace shirod cannot see), a worker's
 * pid, a pid whose parent chain (up to ZAP_ANCESTORS levels, through
 * /proc/PID/stat) or process group reaches a worker's, and a pid whose
 * /proc entry cannot be read.
 */
int zap_client_check(
    const struct zap *z, const char *address, char *why, size_t whylen);

#endif
