/*
 * remote.c - shirod's tcp endpoints and the keys admitted there (see
 * remote.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/err.h"
#include "proto/log.h"
#include "proto/xmalloc.h"
#include "proto/zsock.h"

#include "broker.h"
#include "remote.h"

/* A tcp connection must finish its handshake within this. */
#define REMOTE_HANDSHAKE_MS 10000

/* remote_user - the User-Id of key name on side s. */
static void
remote_user(
    const struct remote_side *s, const char *name, char *user, size_t len)
{
	snprintf(user, len, "%s%s",
	    strcmp(s->what, "clients") == 0 ? ZAP_USER_REMOTE_CLIENT
					    : ZAP_USER_REMOTE_WORKER,
	    name);
}

/* remote_admit - make table t the keys of list l. */
static void
remote_admit(
    const struct remote_side *s, struct zap_keys *t, const struct keys_list *l)
{
	char user[ZAP_USER_MAX];
	size_t k;

	zap_keys_free(t);
	for (k = 0; k < l->n; k++) {
		remote_user(s, l->v[k].name, user, sizeof(user));
		zap_keys_put(t, l->v[k].bin, user);
	}
}

/* remote_read - the keys of side s now (a line about each file left
 * out): 0, or -SHIRO_ERR_IO when the directory cannot be read. */
static int
remote_read(struct remote_side *s, struct keys_list *l, uint64_t now,
    struct lograte *lr)
{
	struct buf notes = BUF_INIT;
	int rc = keys_list_load(s->dir, l, &notes);

	if (notes.len > 0) {
		buf_truncate(&notes, notes.len - 1);
		lograte_info(lr, now, "%s", notes.data);
	}
	buf_free(&notes);
	return rc;
}

/* remote_side_init - side s of socket sock, with its keys admitted. */
static void
remote_side_init(struct broker *b, struct remote_side *s, const char *what,
    void *sock, const char *dir, struct zap_keys *t)
{
	s->what = what;
	s->sock = sock;
	s->dir = keys_path(b->cfg.home, dir);
	(void)remote_read(s, &s->keys, 0, &b->zap.log_remote);
	remote_admit(s, t, &s->keys);
}

/* remote_bind - bind the tcp endpoints eps[0..n) on side s. */
static int
remote_bind(struct remote_side *s, char *const *eps, size_t n,
    const char *secret, const char *domain, char *msg, size_t msglen)
{
	struct zsock_opts zo;
	char bound[256];
	size_t k;
	int rc;

	memset(&zo, 0, sizeof(zo));
	zo.zap_domain = domain;
	zo.curve_secret = secret;
	zo.handshake_ms = REMOTE_HANDSHAKE_MS;
	for (k = 0; k < n; k++) {
		rc = zsock_bind(s->sock, eps[k], &zo, bound, sizeof(bound));
		if (rc < 0) {
			snprintf(msg, msglen, "cannot listen on %s: %s", eps[k],
			    err_str(rc));
			return rc;
		}
		s->bound[s->n++] = xstrdup(bound);
		log_info("%s also on %s (CURVE, %zu key%s admitted, server "
			 "key in keys/server.key)",
		    s->what, bound, s->keys.n, s->keys.n == 1 ? "" : "s");
	}
	return 0;
}

/* remote_listen - bind the configured tcp endpoints. */
int
remote_listen(struct broker *b, char *msg, size_t msglen)
{
	struct remote *r = &b->remote;
	struct zsock_keypair kp;
	struct buf why = BUF_INIT;
	char *path;
	int rc;

	if (b->cfg.nclient_tcp == 0 && b->cfg.nworker_tcp == 0)
		return 0;
	r->on = 1;
	path = keys_path(b->cfg.home, KEYS_SERVER);
	rc = keys_pair(path, 1, &kp, &why);
	free(path);
	if (rc < 0) {
		snprintf(msg, msglen,
		    "a tcp endpoint needs shirod's key pair: %s",
		    why.data != NULL ? why.data : err_str(rc));
		buf_free(&why);
		return rc;
	}
	buf_free(&why);
	memcpy(r->server_pub, kp.pub, sizeof(r->server_pub));
	remote_side_init(b, &r->clients, "clients", b->csock, KEYS_CLIENTS,
	    &b->zap.remote_clients);
	remote_side_init(b, &r->workers, "workers", b->wsock, KEYS_WORKERS,
	    &b->zap.remote_workers);
	rc = remote_bind(&r->clients, b->cfg.client_tcp, b->cfg.nclient_tcp,
	    kp.sec, ZAP_DOMAIN_REMOTE_CLIENTS, msg, msglen);
	if (rc == 0)
		rc = remote_bind(&r->workers, b->cfg.worker_tcp,
		    b->cfg.nworker_tcp, kp.sec, ZAP_DOMAIN_REMOTE_WORKERS, msg,
		    msglen);
	/* libzmq keeps its own copy for the endpoints it binds. */
	explicit_bzero(&kp, sizeof(kp));
	if (rc == 0)
		log_info("shirod's public key for tcp: %s", r->server_pub);
	return rc;
}

/* remote_rebind - unbind side s's endpoints, which closes every
 * connection made there, and bind them again (now, or at a later tick
 * for one whose address is not free yet). */
static void
remote_rebind(struct remote_side *s, int unbind)
{
	char bound[256];
	size_t k;
	int rc;

	for (k = 0; k < s->n; k++) {
		if (unbind && !s->down[k]) {
			(void)zsock_unbind(s->sock, s->bound[k]);
			s->down[k] = 1;
		}
		if (!s->down[k])
			continue;
		/* The socket's options are still the tcp endpoint's. */
		rc = zsock_bind(
		    s->sock, s->bound[k], NULL, bound, sizeof(bound));
		if (rc < 0) {
			log_warnx("%s: cannot listen on %s again yet: %s",
			    s->what, s->bound[k], err_str(rc));
			continue;
		}
		s->down[k] = 0;
	}
	if (unbind)
		s->rebinds++;
}

/* remote_side_tick - read side s's keys again; 1 if one was revoked. */
static int
remote_side_tick(
    struct broker *b, struct remote_side *s, struct zap_keys *t, uint64_t now)
{
	struct keys_list l;
	struct pool_worker *w;
	char user[ZAP_USER_MAX], fp[KEYS_FP_LEN];
	size_t k;
	int revoked = 0;
	const struct keys_entry *e;

	/* A directory that cannot be read now revokes nothing. */
	if (remote_read(s, &l, now, &b->zap.log_remote) < 0)
		return 0;
	for (k = 0; k < s->keys.n; k++) {
		e = keys_list_find(&l, s->keys.v[k].bin);
		if (e != NULL && strcmp(e->name, s->keys.v[k].name) == 0)
			continue;
		revoked = 1;
		b->remote.revoked++;
		keys_fingerprint(s->keys.v[k].bin, fp);
		log_info("%s key %s (%s) revoked: it is refused from now on "
			 "and its connections are closed",
		    s->what, s->keys.v[k].name, fp);
		remote_user(s, s->keys.v[k].name, user, sizeof(user));
		w = strcmp(s->what, "workers") == 0
		    ? pool_remote(&b->pool, user, 0, now)
		    : NULL;
		if (w != NULL &&
		    (w->state == POOL_IDLE || w->state == POOL_BUSY)) {
			uint64_t job =
			    pool_kill(&b->pool, w, "its key was revoked", now);

			if (job != 0)
				compact_requeue(b, job);
		}
	}
	for (k = 0; k < l.n; k++)
		if (keys_list_find(&s->keys, l.v[k].bin) == NULL)
			log_info("%s key %s admitted", s->what, l.v[k].name);
	keys_list_free(&s->keys);
	s->keys = l;
	remote_admit(s, t, &s->keys);
	return revoked;
}

/* remote_tick - read the key lists again; close revoked connections. */
void
remote_tick(struct broker *b, uint64_t now)
{
	struct remote *r = &b->remote;

	if (!r->on)
		return;
	if (remote_side_tick(b, &r->clients, &b->zap.remote_clients, now))
		remote_rebind(&r->clients, 1);
	else
		remote_rebind(&r->clients, 0);
	if (remote_side_tick(b, &r->workers, &b->zap.remote_workers, now)) {
		remote_rebind(&r->workers, 1);
		compact_dispatch(b, now);
	} else {
		remote_rebind(&r->workers, 0);
	}
}

/* remote_side_status - one side in the status document. */
static void
remote_side_status(const struct remote_side *s, struct msg_val *v)
{
	struct msg_val *arr;
	size_t k;

	arr = msg_val_set_arr(v, "endpoints");
	for (k = 0; k < s->n; k++)
		msg_val_add_str(arr, s->bound[k]);
	msg_val_set_int(v, "keys", (int64_t)s->keys.n);
	msg_val_set_int(v, "rebinds", (int64_t)s->rebinds);
}

/* remote_status - the "remote" map of the status document. */
void
remote_status(const struct broker *b, struct msg_val *doc)
{
	const struct remote *r = &b->remote;
	struct msg_val *v;

	v = msg_val_set_map(doc, "remote");
	msg_val_set_bool(v, "on", r->on);
	if (!r->on)
		return;
	msg_val_set_str(v, "server_key", r->server_pub);
	msg_val_set_int(v, "revoked", (int64_t)r->revoked);
	remote_side_status(&r->clients, msg_val_set_map(v, "clients"));
	remote_side_status(&r->workers, msg_val_set_map(v, "workers"));
}

/* remote_side_free - forget one side. */
static void
remote_side_free(struct remote_side *s)
{
	size_t k;

	for (k = 0; k < s->n; k++)
		free(s->bound[k]);
	free(s->dir);
	keys_list_free(&s->keys);
	memset(s, 0, sizeof(*s));
}

/* remote_free - forget the endpoints and lists. */
void
remote_free(struct remote *r)
{
	remote_side_free(&r->clients);
	remote_side_free(&r->workers);
	memset(r, 0, sizeof(*r));
}
