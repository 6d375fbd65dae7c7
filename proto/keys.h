/*
 * keys.h - CURVE keys on disk: shirod's key pair for its tcp endpoints,
 * the public keys it admits there, a peer's own key pair, and the
 * remotes a client saved (docs/remote.md).
 *
 * Under a home (shirod's $SHIRO_HOME on the build box, the client's or
 * the remote worker's own home elsewhere):
 *
 *	keys/server.key      shirod's key pair for tcp (mode 0600)
 *	keys/clients/NAME    a client's public key, admitted on tcp
 *	keys/workers/NAME    a remote worker's public key, admitted on tcp
 *	keys/client.key      this client's own key pair (0600)
 *	keys/worker.key      this remote worker's own key pair (0600)
 *	remotes/NAME         a saved remote: its endpoint and server key
 *
 * A key pair file is exactly
 *
 *	shiro-key/1
 *	public <40 characters of Z85>
 *	secret <40 characters of Z85>
 *
 * (each line ending in a newline), its public key the secret key's; it
 * is refused unless it is a regular file of this user with no bits for
 * group or others.  A public key file holds the 40 characters, and at
 * most one newline after them.  A name is 1 to KEYS_NAME_MAX letters,
 * digits, '.', '_' or '-', starting with a letter or a digit.  Every
 * reader is strict and bounded: anything else is refused with a reason.
 * Pairs are made on first use, atomically (a second process making the
 * same one at the same time reads the first one's).
 */
#ifndef SHIRO_PROTO_KEYS_H
#define SHIRO_PROTO_KEYS_H

#include <stddef.h>

#include "proto/buf.h"
#include "proto/zsock.h"

#define KEYS_NAME_MAX 24 /* bytes of a key's or a remote's name */
#define KEYS_WORKSPACE_MAX 4096 /* bytes of a remote's workspace path */
#define KEYS_MAX 256 /* keys listed in one directory at most */
#define KEYS_FP_LEN 24 /* "sha256:" and 16 hex digits, with the NUL */

/* The files of a home (keys_path's which). */
#define KEYS_SERVER "keys/server.key"
#define KEYS_CLIENTS "keys/clients"
#define KEYS_WORKERS "keys/workers"
#define KEYS_CLIENT "keys/client.key"
#define KEYS_WORKER "keys/worker.key"
#define KEYS_REMOTES "remotes"

/* One admitted public key. */
struct keys_entry {
	char name[KEYS_NAME_MAX + 1];
	char z85[ZSOCK_KEY_Z85 + 1];
	unsigned char bin[ZSOCK_KEY_BIN];
};

/* The keys of one directory, sorted by name. */
struct keys_list {
	struct keys_entry *v;
	size_t n;
};

/* keys_path - home/which (caller frees). */
char *keys_path(const char *home, const char *which);

/* keys_name_ok - whether name may name a key or a remote. */
int keys_name_ok(const char *name);

/*
 * keys_pair - the key pair in the file path into *kp; with create, one
 * is made when the file is missing (its directory too, mode 0700).  0,
 * or -SHIRO_ERR_NOENT (missing, !create), -SHIRO_ERR_PERM (not a file
 * of this user, or readable by others), -SHIRO_ERR_CORRUPT (not a key
 * pair), -SHIRO_ERR_IO; why (may be NULL) says which.  The caller wipes
 * kp->sec when done.
 */
int keys_pair(
    const char *path, int create, struct zsock_keypair *kp, struct buf *why);

/*
 * keys_pub_parse - text[0..len) as a public key file or a key given on a
 * command line: 40 characters of Z85, at most one newline after them.
 * 0 and z85 (NUL-ended), or -SHIRO_ERR_CORRUPT.
 */
int keys_pub_parse(const char *text, size_t len, char z85[ZSOCK_KEY_Z85 + 1]);

/*
 * keys_list_load - every key of dir (a missing dir is an empty list).  A
 * file with a bad name or content is left out and a line about it added
 * to notes (may be NULL); so is every file past KEYS_MAX.  0, or
 * -SHIRO_ERR_IO when dir cannot be read.  Free with keys_list_free.
 */
int keys_list_load(const char *dir, struct keys_list *l, struct buf *notes);

/* keys_list_free - forget the list. */
void keys_list_free(struct keys_list *l);

/* keys_list_find - the entry with this binary key, or NULL. */
const struct keys_entry *keys_list_find(
    const struct keys_list *l, const unsigned char bin[ZSOCK_KEY_BIN]);

/*
 * keys_add - admit z85 as name in dir (made if missing, mode 0700).
 * -SHIRO_ERR_INVAL (bad name or key), -SHIRO_ERR_EXIST (the name is
 * taken, or the key is listed under another name: why says which),
 * -SHIRO_ERR_IO.
 */
int keys_add(
    const char *dir, const char *name, const char *z85, struct buf *why);

/* keys_revoke - remove name from dir: 0, -SHIRO_ERR_NOENT, -SHIRO_ERR_IO. */
int keys_revoke(const char *dir, const char *name);

/* keys_fingerprint - "sha256:" and the first 8 bytes of the SHA-256 of
 * the binary key, in hex. */
void keys_fingerprint(
    const unsigned char bin[ZSOCK_KEY_BIN], char out[KEYS_FP_LEN]);

/* keys_workspace_ok - whether ws may be a remote's workspace: an
 * absolute path of at most KEYS_WORKSPACE_MAX bytes with no control
 * character (a path on the remote's machine, never resolved here). */
int keys_workspace_ok(const char *ws);

/*
 * keys_remote_save - save remote name under home: endpoint (tcp://),
 * the server's public key (Z85) and the workspace its turns name (NULL:
 * none).  Replaces an earlier one of that name.  0, -SHIRO_ERR_INVAL,
 * -SHIRO_ERR_IO.
 */
int keys_remote_save(const char *home, const char *name, const char *endpoint,
    const char *server, const char *workspace);

/*
 * keys_remote_load - the remote name saved under home: *endpointp
 * (malloc'd), server and, when workspacep is not NULL, *workspacep
 * (malloc'd, NULL when none was saved).  0, -SHIRO_ERR_NOENT,
 * -SHIRO_ERR_CORRUPT (why says what is wrong), -SHIRO_ERR_INVAL (a bad
 * name).
 */
int keys_remote_load(const char *home, const char *name, char **endpointp,
    char server[ZSOCK_KEY_Z85 + 1], char **workspacep, struct buf *why);

#endif
