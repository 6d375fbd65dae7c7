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

/* supervise_secret - send the provider's key to a newly ready worker. */
static void
supervise_secret(struct broker *b, struct pool_worker *w)
{
	const struct config_provider *p;
	struct msg *m;

	if (w->provider == NULL)
		return;
	p = config_provider(&b->cfg, w->provider);
	/* The key was read once at start (provider_resolve from the
	 * environment, provider_load_keys from keyFile) and stays in
	 * memory; a keyless provider gets no SECRET. */
	if (p == NULL || p->key == NULL)
		return;
	m = msg_new(MSG_SECRET);
	msg_set_str(m, "provider", p->name);
	msg_set_bin(m, "key", p->key, p->key_len);
	if (msg_send(b->wsock, m, &w->ident) == 0)
		w->secret_sent = 1;
	msg_destroy(&m);
}

/* supervise_ready - a READY: match it to the slot that started it. */
static void
supervise_ready(struct broker *b, const struct msg_ident *from,
    const struct msg *m, uint64_t now)
{
	const char *role = "", *provider = "", *why = "";
	struct pool_worker *w;
	uint64_t pid = 0, version = 0, job = 0, jobs = 1;

	(void)msg_get_str(m, "role", &role, NULL);
	(void)msg_get_str(m, "provider", &provider, NULL);
	(void)msg_get_uint(m, "pid", &pid);
	(void)msg_get_uint(m, "version", &version);
	if (version != MSG_VERSION) {
		log_warnx("worker pid %llu speaks version %llu, not %d: "
			  "ignored",
		    (unsigned long long)pid, (unsigned long long)version,
		    MSG_VERSION);
		return;
	}
	w = pool_ready(&b->pool, from, role, provider, pid, now, &job, &why);
	if (job != 0)
		compact_requeue(b, job);
	if (w == NULL) {
		log_warnx("READY from pid %llu (%s %s) refused: %s",
		    (unsigned long long)pid, role, provider, why);
		return;
	}
	(void)msg_get_uint(m, "jobs", &jobs);
	pool_capacity(w, jobs);
	log_info("worker %u (%s %s, pid %llu) is ready", w->idx, role, provider,
	    (unsigned long long)pid);
	supervise_secret(b, w);
	compact_dispatch(b, now);
}

/* supervise_worker - handle one message from the worker socket. */
void
supervise_worker(struct broker *b, const struct msg_ident *from,
    struct msg **mp, uint64_t now)
{
	struct msg *m = *mp;
	enum msg_type t = msg_type(m);
	struct pool_worker *w;

	w = pool_find(&b->pool, from);
	if (w == NULL) {
		if (t == MSG_READY)
			supervise_ready(b, from, m, now);
		else
			log_info("%s from an unknown worker, dropped",
			    msg_type_name(t));
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
	case MSG_READY:
		supervise_kill(b, w, "sent READY twice", now);
		break;
	default:
		log_info("worker %u: %s ignored", w->idx, msg_type_name(t));
		break;
	}
out:
	msg_destroy(mp);
}

/* supervise_bad - a malformed frame from the worker socket. */
void
supervise_bad(struct broker *b, const struct msg_ident *from, uint64_t now)
{
	struct pool_worker *w = from ? pool_find(&b->pool, from) : NULL;
	char why[160];

	if (w == NULL) {
		log_info("malformed frame from an unknown worker: %s",
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
	compact_overdue(b, now);
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
