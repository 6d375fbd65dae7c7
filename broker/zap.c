/*
 * zap.c - shirod's ZAP handler: the workers' keys and the clients' uid
 * and ancestry (see zap.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proto/err.h"
#include "proto/keys.h"
#include "proto/log.h"
#include "proto/xmalloc.h"

#include "procstat.h"
#include "zap.h"

/* zap_keys_put - admit key as user. */
void
zap_keys_put(struct zap_keys *t, const unsigned char key[ZSOCK_KEY_BIN],
    const char *user)
{
	struct zap_key *k;

	zap_keys_drop(t, user);
	if (t->n == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 8;
		t->v = xreallocarray(t->v, t->cap, sizeof(*t->v));
	}
	k = &t->v[t->n++];
	memcpy(k->key, key, ZSOCK_KEY_BIN);
	snprintf(k->user, sizeof(k->user), "%s", user);
}

/* zap_keys_drop - admit user's key no longer. */
void
zap_keys_drop(struct zap_keys *t, const char *user)
{
	size_t k;

	for (k = 0; k < t->n; k++) {
		if (strcmp(t->v[k].user, user) != 0)
			continue;
		t->v[k] = t->v[--t->n];
		explicit_bzero(&t->v[t->n], sizeof(t->v[t->n]));
		return;
	}
}

/* zap_keys_user - the entry admitted as user, or NULL. */
const struct zap_key *
zap_keys_user(const struct zap_keys *t, const char *user)
{
	size_t k;

	for (k = 0; k < t->n; k++)
		if (strcmp(t->v[k].user, user) == 0)
			return &t->v[k];
	return NULL;
}

/* zap_keys_find - the entry of key, or NULL. */
const struct zap_key *
zap_keys_find(const struct zap_keys *t, const unsigned char key[ZSOCK_KEY_BIN])
{
	size_t k;

	for (k = 0; k < t->n; k++)
		if (memcmp(t->v[k].key, key, ZSOCK_KEY_BIN) == 0)
			return &t->v[k];
	return NULL;
}

/* zap_keys_free - forget every key. */
void
zap_keys_free(struct zap_keys *t)
{
	if (t->v != NULL)
		explicit_bzero(t->v, t->cap * sizeof(*t->v));
	free(t->v);
	memset(t, 0, sizeof(*t));
}

/* zap_open - bind the handler for this process's uid. */
int
zap_open(struct zap *z, zap_worker_fn is_worker, void *arg)
{
	memset(z, 0, sizeof(*z));
	z->uid = geteuid();
	z->is_worker = is_worker;
	z->arg = arg;
	z->proc = "/proc";
	return zsock_zap_open(&z->sock);
}

/* zap_close - close the handler and forget the keys. */
void
zap_close(struct zap *z)
{
	zsock_close(&z->sock);
	zap_keys_free(&z->keys);
	zap_keys_free(&z->remote_clients);
	zap_keys_free(&z->remote_workers);
}

/* zap_number - a decimal number of s[0..len) into *vp: 0 or -1. */
static int
zap_number(const char *s, size_t len, uint64_t *vp)
{
	uint64_t v = 0;
	size_t k;

	if (len == 0 || len > 10)
		return -1;
	for (k = 0; k < len; k++) {
		if (s[k] < '0' || s[k] > '9')
			return -1;
		v = v * 10 + (uint64_t)(s[k] - '0');
	}
	*vp = v;
	return 0;
}

/* zap_peercred - uid and pid from an address "host:uid:gid:pid". */
static int
zap_peercred(const char *address, uint64_t *uidp, uint64_t *pidp)
{
	const char *end = address + strlen(address), *c[3], *p = end;
	uint64_t gid;
	int k;

	/* The last three colons: a tcp address has none after its host. */
	for (k = 0; k < 3; k++) {
		while (p > address && p[-1] != ':')
			p--;
		if (p == address)
			return -1;
		c[k] = --p;
	}
	/* c[2] < c[1] < c[0]: uid, gid, pid between them. */
	if (zap_number(c[2] + 1, (size_t)(c[1] - c[2] - 1), uidp) < 0 ||
	    zap_number(c[1] + 1, (size_t)(c[0] - c[1] - 1), &gid) < 0 ||
	    zap_number(c[0] + 1, (size_t)(end - c[0] - 1), pidp) < 0)
		return -1;
	return 0;
}

/* zap_stat - the parent and process group of pid from /proc/PID/stat. */
static int
zap_stat(const struct zap *z, pid_t pid, pid_t *ppidp, pid_t *pgrpp)
{
	char num[16], buf[512], *f;
	long ppid, pgrp;

	snprintf(num, sizeof(num), "%d", (int)pid);
	/* "state ppid pgrp ..." after "pid (comm) ". */
	if (procstat_read(z->proc, num, buf, sizeof(buf), &f) < 0 ||
	    sscanf(f, "%*c %ld %ld", &ppid, &pgrp) != 2 || ppid < 0 || pgrp < 0)
		return -1;
	*ppidp = (pid_t)ppid;
	*pgrpp = (pid_t)pgrp;
	return 0;
}

/* zap_client_check - whether the peer at address may be a client. */
int
zap_client_check(
    const struct zap *z, const char *address, char *why, size_t whylen)
{
	uint64_t uid, pid;
	pid_t cur, ppid, pgrp;
	int depth;

	if (zap_peercred(address, &uid, &pid) < 0) {
		snprintf(why, whylen,
		    "no peer credentials in \"%.64s\" (not an ipc peer)",
		    address);
		return -SHIRO_ERR_PERM;
	}
	if (uid != (uint64_t)z->uid) {
		snprintf(why, whylen,
		    "pid %" PRIu64 " runs as uid %" PRIu64
		    ", not shirod's uid %u",
		    pid, uid, (unsigned)z->uid);
		return -SHIRO_ERR_PERM;
	}
	if (pid == 0 || pid > INT32_MAX) {
		snprintf(why, whylen, "a peer whose pid shirod cannot see");
		return -SHIRO_ERR_PERM;
	}
	cur = (pid_t)pid;
	for (depth = 0; depth < ZAP_ANCESTORS; depth++) {
		if (z->is_worker != NULL && z->is_worker(z->arg, cur)) {
			snprintf(why, whylen,
			    depth == 0 ? "pid %d is a worker"
				       : "pid %d is a worker's descendant",
			    (int)pid);
			return -SHIRO_ERR_PERM;
		}
		if (zap_stat(z, cur, &ppid, &pgrp) < 0) {
			snprintf(why, whylen, "pid %d: cannot read %s/%d/stat",
			    (int)pid, z->proc, (int)cur);
			return -SHIRO_ERR_PERM;
		}
		/* Workers lead their own process groups: a child that left
		 * its parent behind (reparented) still has the group. */
		if (z->is_worker != NULL && pgrp > 1 &&
		    z->is_worker(z->arg, pgrp)) {
			snprintf(why, whylen,
			    "pid %d is in the process group of worker %d",
			    (int)pid, (int)pgrp);
			return -SHIRO_ERR_PERM;
		}
		if (ppid <= 1)
			return 0;
		cur = ppid;
	}
	snprintf(why, whylen, "pid %d has over %d ancestors", (int)pid,
	    ZAP_ANCESTORS);
	return -SHIRO_ERR_PERM;
}

/* zap_remote - a request on a tcp endpoint: a CURVE key of table t. */
static void
zap_remote(struct zap *z, const struct zsock_zap_req *req,
    const struct zap_keys *t, const char *what, uint64_t now)
{
	const struct zap_key *k = NULL;
	char fp[KEYS_FP_LEN], z85[ZSOCK_KEY_Z85 + 1];

	if (req->has_key && strcmp(req->mechanism, "CURVE") == 0)
		k = zap_keys_find(t, req->key);
	if (k != NULL) {
		z->admitted++;
		(void)zsock_zap_reply(z->sock, req, 200, "OK", k->user);
		return;
	}
	z->refused++;
	if (!req->has_key) {
		lograte_info(&z->log_remote, now,
		    "refused a %s connection from %s: mechanism %s, not CURVE",
		    what, req->address[0] ? req->address : "(no address)",
		    req->mechanism);
	} else {
		keys_fingerprint(req->key, fp);
		zsock_key_encode(req->key, z85);
		lograte_info(&z->log_remote, now,
		    "refused a %s connection from %s: key %s is not admitted "
		    "('shiro keys add %s NAME %s' admits it)",
		    what, req->address[0] ? req->address : "(no address)", fp,
		    what, z85);
	}
	(void)zsock_zap_reply(z->sock, req, 400, "key not admitted", "");
}

/* zap_answer - admit or refuse one request. */
static void
zap_answer(struct zap *z, const struct zsock_zap_req *req, uint64_t now)
{
	const struct zap_key *k;
	char why[192];

	if (strcmp(req->domain, ZAP_DOMAIN_REMOTE_CLIENTS) == 0) {
		zap_remote(z, req, &z->remote_clients, "client", now);
		return;
	}
	if (strcmp(req->domain, ZAP_DOMAIN_REMOTE_WORKERS) == 0) {
		zap_remote(z, req, &z->remote_workers, "worker", now);
		return;
	}

	if (strcmp(req->domain, ZAP_DOMAIN_WORKERS) == 0) {
		k = req->has_key && strcmp(req->mechanism, "CURVE") == 0
		    ? zap_keys_find(&z->keys, req->key)
		    : NULL;
		if (k != NULL) {
			z->admitted++;
			(void)zsock_zap_reply(z->sock, req, 200, "OK", k->user);
			return;
		}
		z->refused++;
		lograte_info(&z->log_workers, now,
		    "refused a connection to the workers' socket from %s: %s",
		    req->address[0] ? req->address : "(no address)",
		    req->has_key ? "its key is no live worker's"
				 : "it has no CURVE key");
		(void)zsock_zap_reply(z->sock, req, 400, "unknown key", "");
		return;
	}
	if (strcmp(req->domain, ZAP_DOMAIN_CLIENTS) == 0) {
		if (strcmp(req->mechanism, "NULL") != 0)
			snprintf(
			    why, sizeof(why), "mechanism %s", req->mechanism);
		else if (zap_client_check(z, req->address, why, sizeof(why)) ==
		    0) {
			z->admitted++;
			(void)zsock_zap_reply(
			    z->sock, req, 200, "OK", ZAP_USER_CLIENT);
			return;
		}
		z->refused++;
		lograte_info(&z->log_clients, now,
		    "refused a connection to the clients' socket: %s", why);
		(void)zsock_zap_reply(z->sock, req, 400, "not a client", "");
		return;
	}
	z->refused++;
	lograte_info(&z->log_workers, now,
	    "refused a connection in unknown ZAP domain \"%.32s\"",
	    req->domain);
	(void)zsock_zap_reply(z->sock, req, 400, "unknown domain", "");
}

/* zap_serve - answer every waiting request. */
void
zap_serve(struct zap *z, uint64_t now)
{
	struct zsock_zap_req req;
	unsigned k;
	int rc;

	/* Bounded, as every read of the loop is. */
	for (k = 0; k < 1024; k++) {
		rc = zsock_zap_recv(z->sock, &req);
		if (rc == -SHIRO_ERR_AGAIN)
			break;
		if (rc == -SHIRO_ERR_PROTO) {
			z->refused++;
			lograte_info(&z->log_workers, now,
			    "a malformed ZAP request, refused");
			continue;
		}
		if (rc < 0) {
			log_warnx("zap: %s", err_str(rc));
			break;
		}
		zap_answer(z, &req, now);
	}
}
