/*
 * supervise.c - the worker socket: READY, heartbeats both ways, results,
 * and the permission table (OpenSSH's monitor: a worker that sends a type
 * its role may not send is killed, and its job goes to another worker).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "proto/err.h"
#include "proto/log.h"
#include "proto/xmalloc.h"

#include "broker.h"
#include "runs.h"

/* supervise_peer - the permission-table row of slot w's role. */
static enum msg_peer
supervise_peer(const struct pool_worker *w)
{
	switch (w->role) {
	case CONFIG_ROLE_TOOL:
		return MSG_PEER_TOOL;
	case CONFIG_ROLE_FS:
		return MSG_PEER_FS;
	case CONFIG_ROLE_MODEL:
		break;
	}
	return MSG_PEER_MODEL;
}

/* supervise_kill - kill w for why and give its job to another worker. */
static void
supervise_kill(
    struct broker *b, struct pool_worker *w, const char *why, uint64_t now)
{
	uint64_t job = pool_kill(&b->pool, w, why, now);

	if (job != 0)
		compact_requeue(b, job);
}

/* supervise_secret - send the provider's key to a newly ready worker,
 * once per process. */
static void
supervise_secret(struct broker *b, struct pool_worker *w)
{
	const unsigned char *key;
	struct msg *m;
	size_t len = 0;

	/* A remote worker holds its own key: none leaves this machine. */
	if (w->provider == NULL || w->secret_sent || w->remote)
		return;
	key = secret_get(&b->secrets, w->provider, &len);
	if (key == NULL)
		return;
	m = msg_new(MSG_SECRET);
	msg_set_str(m, "provider", w->provider);
	msg_set_bin(m, "key", key, len);
	if (msg_send(b->wsock, m, &w->ident) == 0)
		w->secret_sent = 1;
	msg_destroy(&m);
}

/* supervise_ready - READY from the authenticated process of slot w. */
static void
supervise_ready(struct broker *b, struct pool_worker *w,
    const struct msg_ident *from, const struct msg *m, uint64_t now)
{
	const char *role = "", *provider = "", *why = "";
	uint64_t pid = 0, version = 0, jobs = 1;

	(void)msg_get_str(m, "role", &role, NULL);
	(void)msg_get_str(m, "provider", &provider, NULL);
	(void)msg_get_uint(m, "pid", &pid);
	(void)msg_get_uint(m, "version", &version);
	if (version != MSG_VERSION) {
		char whyv[96];

		snprintf(whyv, sizeof(whyv), "speaks version %llu, not %d",
		    (unsigned long long)version, MSG_VERSION);
		supervise_kill(b, w, whyv, now);
		return;
	}
	/* A second READY (a stolen key, or a worker that reconnected) is
	 * refused and its process replaced: SECRET never goes twice. */
	if (pool_ready(w, from, role, provider, now, &why) != 0) {
		supervise_kill(b, w, why, now);
		return;
	}
	(void)msg_get_uint(m, "jobs", &jobs);
	pool_capacity(w, jobs);
	/* The pid it reports is only for the log: the slot is known by the
	 * key its connection proved. */
	log_info("worker %u (%s %s, pid %d) is ready", w->idx, role, provider,
	    (int)w->pid);
	if (pid != (uint64_t)w->pid)
		log_info("worker %u reports pid %llu (its pid here is %d)",
		    w->idx, (unsigned long long)pid, (int)w->pid);
	supervise_secret(b, w);
	compact_dispatch(b, now);
}

/* supervise_same_conn - whether from is the connection w said READY on. */
static int
supervise_same_conn(const struct pool_worker *w, const struct msg_ident *from)
{
	return w->ident.len == from->len &&
	    memcmp(w->ident.data, from->data, from->len) == 0;
}

/*
 * supervise_remote_ready - READY from a remote worker, whose key is
 * admitted as user: its slot is made at its first READY.  A later READY
 * (it reconnected, or heard nothing from shirod for a while) starts it
 * afresh on the connection it came on: the worker dropped the jobs it
 * had, which go to other workers.  Its key is its identity, so a second
 * READY is no breach as a local process's is.
 */
static void
supervise_remote_ready(struct broker *b, const struct msg_ident *from,
    const struct msg_user *user, const struct msg *m, uint64_t now)
{
	const struct config_provider *pv;
	const char *role = "", *provider = "";
	uint64_t version = 0, jobs = 1, job;
	struct pool_worker *w;
	char why[160];

	/* Its connection was admitted before its key was revoked. */
	if (zap_keys_user(&b->zap.remote_workers, user->id) == NULL) {
		lograte_info(&b->log_unknown, now,
		    "READY from remote worker %s, whose key is revoked: "
		    "dropped",
		    user->id + strlen(ZAP_USER_REMOTE_WORKER));
		return;
	}
	w = pool_remote(&b->pool, user->id, 1, now);
	if (w == NULL) {
		lograte_info(&b->log_unknown, now,
		    "READY from remote worker %s dropped: %d remote workers "
		    "are known already",
		    user->id + strlen(ZAP_USER_REMOTE_WORKER), POOL_REMOTE_MAX);
		return;
	}
	if (w->state == POOL_DOWN && now < w->restart_at) {
		lograte_info(&b->log_unknown, now,
		    "READY from remote worker %s dropped: it was dropped "
		    "%llu ms ago for misbehaving",
		    user->id + strlen(ZAP_USER_REMOTE_WORKER),
		    (unsigned long long)(now - w->restart_at + w->backoff_ms));
		return;
	}
	(void)msg_get_str(m, "role", &role, NULL);
	(void)msg_get_str(m, "provider", &provider, NULL);
	(void)msg_get_uint(m, "version", &version);
	(void)msg_get_uint(m, "jobs", &jobs);
	pv = config_provider(&b->cfg, provider);
	why[0] = '\0';
	if (version != MSG_VERSION)
		snprintf(why, sizeof(why), "speaks version %llu, not %d",
		    (unsigned long long)version, MSG_VERSION);
	else if (strcmp(role, config_role_name(CONFIG_ROLE_MODEL)) != 0)
		snprintf(why, sizeof(why),
		    "said READY as a %.16s worker; remote workers are model "
		    "workers",
		    role);
	else if (pv == NULL)
		snprintf(why, sizeof(why),
		    "serves provider \"%.64s\", which this shirod does not "
		    "know",
		    provider);
	if (why[0] != '\0') {
		/* Its slot goes down (its jobs to others), and its next
		 * READY waits out the back-off. */
		if (w->state == POOL_DOWN)
			w->state = POOL_IDLE;
		supervise_kill(b, w, why, now);
		return;
	}
	if (w->state == POOL_IDLE || w->state == POOL_BUSY)
		log_info("remote worker %s said READY again%s: the jobs it "
			 "held go to other workers",
		    user->id + strlen(ZAP_USER_REMOTE_WORKER),
		    supervise_same_conn(w, from) ? "" : " (it reconnected)");
	job = pool_remote_ready(w, from, pv->name, now);
	if (job != 0)
		compact_requeue(b, job);
	pool_capacity(w, jobs);
	log_info("remote worker %s (slot %u, model %s, %u jobs at once) is "
		 "ready",
	    user->id + strlen(ZAP_USER_REMOTE_WORKER), w->idx, pv->name,
	    w->max_jobs);
	compact_dispatch(b, now);
}

/* supervise_worker - handle one message from the worker socket. */
void
supervise_worker(struct broker *b, const struct msg_ident *from,
    const struct msg_user *user, struct msg **mp, uint64_t now)
{
	struct msg *m = *mp;
	enum msg_type t = msg_type(m);
	struct pool_worker *w;

	/* A remote worker's READY finds (or makes) its slot by its key. */
	if (t == MSG_READY && user->len > strlen(ZAP_USER_REMOTE_WORKER) &&
	    strncmp(user->id, ZAP_USER_REMOTE_WORKER,
		strlen(ZAP_USER_REMOTE_WORKER)) == 0) {
		supervise_remote_ready(b, from, user, m, now);
		goto out;
	}
	/* The slot comes from the connection's key, never from the peer's
	 * word: a process that is gone or never was one of ours. */
	w = pool_by_user(&b->pool, user);
	if (w == NULL) {
		lograte_info(&b->log_unknown, now,
		    "%s from an unknown worker (%s), dropped", msg_type_name(t),
		    user->len ? user->id : "no key");
		goto out;
	}
	if (t == MSG_READY) {
		supervise_ready(b, w, from, m, now);
		goto out;
	}
	if (w->state == POOL_STARTING || !supervise_same_conn(w, from)) {
		/* Before its READY, or on a second connection: not served. */
		lograte_info(&b->log_unknown, now, "worker %u: %s %s, dropped",
		    w->idx, msg_type_name(t),
		    w->state == POOL_STARTING ? "before READY"
					      : "on another connection");
		goto out;
	}
	pool_seen(w, now);
	if (!msg_allowed(supervise_peer(w), t)) {
		char why[96];

		snprintf(why, sizeof(why), "sent %s, which a %s worker may not",
		    msg_type_name(t), config_role_name(w->role));
		supervise_kill(b, w, why, now);
		goto out;
	}
	switch (t) {
	case MSG_HEARTBEAT:
		break;
	case MSG_CHUNK:
		compact_chunk(b, w, m, now);
		break;
	case MSG_RESULT:
		compact_result(b, w, m, now);
		break;
	case MSG_FAIL:
		compact_fail(b, w, m, now);
		break;
	case MSG_BYE:
		/* Leaving on SHUTDOWN is what it was asked; otherwise a worker
		 * that leaves is replaced like one that died. */
		if (!b->stopping)
			supervise_kill(b, w, "said goodbye", now);
		break;
	default:
		lograte_info(&b->log_unknown, now, "worker %u: %s ignored",
		    w->idx, msg_type_name(t));
		break;
	}
out:
	msg_destroy(mp);
}

/* supervise_bad - a malformed frame from the worker socket. */
void
supervise_bad(struct broker *b, const struct msg_user *user, uint64_t now)
{
	struct pool_worker *w = pool_by_user(&b->pool, user);
	char why[160];

	if (w == NULL) {
		lograte_info(&b->log_unknown, now,
		    "malformed frame from an unknown worker: %s",
		    msg_strerror());
		return;
	}
	snprintf(why, sizeof(why), "malformed frame: %.120s", msg_strerror());
	supervise_kill(b, w, why, now);
}

/* supervise_tick - heartbeats to workers, dead ones killed, jobs back. */
void
supervise_tick(struct broker *b, uint64_t now)
{
	uint64_t jobs[64];
	struct msg *hb;
	unsigned nj, k;

	pool_tick(&b->pool, now, jobs, 64, &nj);
	for (k = 0; k < nj; k++)
		compact_requeue(b, jobs[k]);
	/* A workspace's tool and fs workers stop once idle for a while. */
	(void)pool_retire_idle(&b->pool, now, b->cfg.turns.workspace_idle_ms);
	compact_overdue(b, now);
	runs_tick(b, now);
	hb = msg_new(MSG_HEARTBEAT);
	for (k = 0; k < b->pool.n; k++) {
		struct pool_worker *w = &b->pool.w[k];

		if (w->state != POOL_IDLE && w->state != POOL_BUSY)
			continue;
		if (msg_send(b->wsock, hb, &w->ident) == -SHIRO_ERR_NOENT) {
			uint64_t job = pool_kill(
			    &b->pool, w, "its connection is gone", now);

			if (job != 0)
				compact_requeue(b, job);
		}
	}
	msg_destroy(&hb);
	compact_dispatch(b, now);
}

/* supervise_reap - collect exited workers (SIGCHLD). */
void
supervise_reap(struct broker *b, uint64_t now)
{
	struct pool_worker *w;
	uint64_t job;
	pid_t pid;
	int st;

	while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
		w = pool_reaped(&b->pool, pid, st, now, &job);
		if (w != NULL && job != 0)
			compact_requeue(b, job);
	}
	compact_dispatch(b, now);
}
