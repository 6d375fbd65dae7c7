/*
 * worker.c - the worker skeleton: command line, secret, set-up,
 * confinement, connection, lockdown, heartbeats, jobs, cancellation and
 * reconnection (over tcp, or for a role without a sandbox).
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proto/err.h"
#include "proto/log.h"
#include "proto/msg.h"
#include "proto/xmalloc.h"
#include "proto/zsock.h"
#include "sandbox/sandbox.h"
#include "workers/worker.h"

#define WORKER_BACKOFF_MIN 500 /* ms before the first reconnection */
#define WORKER_BACKOFF_MAX 8000 /* ms between reconnections at most */
#define WORKER_HANDSHAKE_MS 10000 /* the first connection's bound */
/* How long a message waits for room in a full queue to the broker. */
#define WORKER_SEND_WAIT_MS 10000

struct worker {
	const struct worker_role *role;
	char *endpoint;
	char *provider;
	char *workspace; /* --workspace, or NULL */
	bool net; /* --net */
	bool locked; /* the lockdown is in force: no new connection */
	bool confined; /* its file rules are: no /proc, perhaps */
	unsigned char secret[WORKER_SECRET_MAX];
	size_t secret_len;
	bool has_secret;
	struct zsock_cred cred; /* from --cred-fd: CURVE to the broker */
	bool has_cred;
	long hb_ms;
	long give_up_ms;
	void *sock;
	/* Over tcp: the connection's monitor, made before the lockdown.
	 * libzmq reconnects the one socket by itself; the monitor says when
	 * a new connection is up, and READY goes again. */
	void *mon;
	bool down; /* the monitor saw the connection go down */
	unsigned nbase; /* poll items of the skeleton: 1, 2 with mon */
	long long last_recv; /* when the broker was last heard */
	long long next_hb; /* when our next heartbeat is due */
	unsigned long long send_fails; /* messages that could not go */
	long long send_logged_at; /* when that was last logged */
	long long reconnect_at; /* when silence makes us reconnect */
	long backoff;
	bool busy; /* a job is running */
	uint64_t job; /* its number */
	bool canceled; /* the broker canceled it */
	bool lost; /* the broker went silent during it */
	struct msg *pending; /* a JOB received, not started yet */
	bool failed; /* worker_failure() was called */
	char fail_code[33];
	char fail_text[1024];
	bool fail_retry;
	void *data;
	/* An asynchronous role's jobs in flight, and its poll items. */
	uint64_t held[WORKER_JOBS_MAX];
	unsigned nheld;
	struct zsock_poll *items; /* [0] the broker, then the role's */
};

static volatile sig_atomic_t worker_stop;

/* worker_on_signal - ask the loop to stop (SIGTERM, SIGINT). */
static void
worker_on_signal(int sig)
{
	(void)sig;
	worker_stop = 1;
}

/* worker_exit - close the connection (flushing what is queued) and exit. */
static void __attribute__((noreturn)) worker_exit(struct worker *w, int status)
{
	msg_destroy(&w->pending);
	free(w->items);
	zsock_close(&w->mon);
	zsock_close(&w->sock);
	zsock_term();
	explicit_bzero(w->secret, sizeof(w->secret));
	explicit_bzero(&w->cred, sizeof(w->cred));
	if (w->confined) {
		/* A leak checker run by exit() needs /proc and ptrace, which
		 * the confinement and the lockdown took away. */
		fflush(NULL);
		_exit(status);
	}
	exit(status);
}

/*
 * worker_send - send m to the broker.  A full queue (the broker reads
 * slower than a command prints, on a busy machine) loses a heartbeat
 * only: anything else waits for room, WORKER_SEND_WAIT_MS at most, so
 * a command's output is held back rather than lost and a result always
 * goes.  While it waits nothing is read; the broker's own messages wait
 * in the other direction.
 */
static void
worker_send(struct worker *w, const struct msg *m)
{
	long long until = zsock_now_ms() + WORKER_SEND_WAIT_MS;
	struct zsock_poll item;
	int rc;

	while ((rc = msg_send(w->sock, m, NULL)) == -SHIRO_ERR_AGAIN &&
	    msg_type(m) != MSG_HEARTBEAT && zsock_now_ms() < until) {
		memset(&item, 0, sizeof(item));
		item.sock = w->sock;
		item.fd = -1;
		item.events = ZSOCK_OUT;
		(void)zsock_poll(&item, 1, 100);
	}
	if (rc < 0) {
		/* One line a second at most, with how many it stands for. */
		long long now = zsock_now_ms();

		w->send_fails++;
		if (now - w->send_logged_at >= 1000) {
			log_warnx("sending %s: %s (%llu unsent so far)",
			    msg_type_name(msg_type(m)), err_str(rc),
			    w->send_fails);
			w->send_logged_at = now;
		}
	}
	w->next_hb = zsock_now_ms() + w->hb_ms;
}

/* worker_send_simple - send a message with no keys or only job. */
static void
worker_send_simple(struct worker *w, enum msg_type type, bool with_job)
{
	struct msg *m = msg_new(type);

	if (with_job)
		msg_set_int(m, "job", (int64_t)w->job);
	worker_send(w, m);
	msg_destroy(&m);
}

/* worker_send_fail - send FAIL for job. */
static void
worker_send_fail(struct worker *w, uint64_t job, const char *code, bool retry,
    const char *text)
{
	struct msg *m = msg_new(MSG_FAIL);

	msg_set_int(m, "job", (int64_t)job);
	msg_set_str(m, "code", code);
	msg_set_str(m, "text", text);
	msg_set_bool(m, "retry", retry);
	worker_send(w, m);
	msg_destroy(&m);
}

/* worker_send_heartbeat - HEARTBEAT, with a job in flight if any. */
static void
worker_send_heartbeat(struct worker *w)
{
	struct msg *m = msg_new(MSG_HEARTBEAT);

	if (w->busy)
		msg_set_int(m, "job", (int64_t)w->job);
	else if (w->nheld > 0)
		msg_set_int(m, "job", (int64_t)w->held[0]);
	worker_send(w, m);
	msg_destroy(&m);
}

/* worker_dial - a new DEALER to the broker (replacing any old one). */
static void
worker_dial(struct worker *w)
{
	struct zsock_opts opts = {0};
	int rc;

	zsock_close(&w->sock);
	opts.heartbeat_ms = (int)w->hb_ms;
	/* With a credential, the broker's socket is a CURVE server that
	 * admits only this process's key. */
	opts.curve = w->has_cred ? &w->cred : NULL;
	if ((rc = zsock_dealer(w->endpoint, &opts, &w->sock)) < 0) {
		log_warnx("cannot connect to %s: %s", w->endpoint, err_str(rc));
		worker_exit(w, WORKER_EXIT_FATAL);
	}
}

/* worker_ready - say READY to the broker. */
static void
worker_ready(struct worker *w)
{
	struct msg *m = msg_new(MSG_READY);

	msg_set_str(m, "role", w->role->role);
	msg_set_str(m, "provider", w->provider);
	msg_set_int(m, "pid", getpid());
	msg_set_int(m, "jobs",
	    w->role->async == NULL || w->role->jobs == 0 ? 1
		: w->role->jobs > WORKER_JOBS_MAX	 ? WORKER_JOBS_MAX
							 : w->role->jobs);
	msg_set_int(m, "version", MSG_VERSION);
	worker_send(w, m);
	msg_destroy(&m);
}

/* worker_held_index - where job is in w->held, or -1. */
static int
worker_held_index(const struct worker *w, uint64_t job)
{
	unsigned k;

	for (k = 0; k < w->nheld; k++)
		if (w->held[k] == job)
			return (int)k;
	return -1;
}

/* worker_release - take job out of the jobs in flight; false if absent. */
static bool
worker_release(struct worker *w, uint64_t job)
{
	int k = worker_held_index(w, job);

	if (k < 0)
		return false;
	w->held[k] = w->held[--w->nheld];
	return true;
}

/* worker_async_job - a JOB for an asynchronous role (taking m). */
static void
worker_async_job(struct worker *w, struct msg *m)
{
	unsigned max = w->role->jobs ? w->role->jobs : 1;
	uint64_t job = 0;

	if (max > WORKER_JOBS_MAX)
		max = WORKER_JOBS_MAX;
	msg_get_uint(m, "job", &job);
	if (worker_held_index(w, job) >= 0) {
		worker_send_fail(w, job, "busy", true,
		    "a job with this number is already running");
		msg_destroy(&m);
		return;
	}
	if (w->nheld >= max) {
		worker_send_fail(w, job, "busy", true,
		    "this worker already runs as many jobs as it can");
		msg_destroy(&m);
		return;
	}
	w->held[w->nheld++] = job;
	w->role->async->job(w, m);
}

/* worker_async_cancel - CANCEL of an asynchronous role's job. */
static void
worker_async_cancel(struct worker *w, uint64_t job)
{
	if (!worker_release(w, job))
		return;
	w->role->async->cancel(w, job);
	worker_send_fail(w, job, "canceled", false, "canceled by the broker");
}

/* worker_async_lost - the broker was lost: drop every job in flight. */
static void
worker_async_lost(struct worker *w)
{
	uint64_t job;

	while (w->nheld > 0) {
		job = w->held[--w->nheld];
		log_warnx("job %llu abandoned: the broker was lost",
		    (unsigned long long)job);
		w->role->async->cancel(w, job);
	}
}

/* worker_dispatch - act on one message from the broker (taking it). */
static void
worker_dispatch(struct worker *w, struct msg *m)
{
	const void *key;
	const char *provider;
	uint64_t job = 0, pending;
	size_t len;

	switch (msg_type(m)) {
	case MSG_HEARTBEAT:
		break;
	case MSG_SECRET:
		msg_get_str(m, "provider", &provider, NULL);
		msg_get_bin(m, "key", &key, &len);
		if (strcmp(provider, w->provider) != 0) {
			log_warnx(
			    "ignoring a secret for provider %s", provider);
			break;
		}
		memcpy(w->secret, key, len);
		w->secret_len = len;
		w->has_secret = true;
		break;
	case MSG_SHUTDOWN:
		log_info("shutdown asked by the broker");
		worker_send_simple(w, MSG_BYE, false);
		msg_destroy(&m);
		worker_exit(w, WORKER_EXIT_OK);
	case MSG_CANCEL:
		msg_get_uint(m, "job", &job);
		if (w->role->async != NULL)
			worker_async_cancel(w, job);
		else if (w->busy && job == w->job)
			w->canceled = true;
		else if (w->pending != NULL &&
		    msg_get_uint(w->pending, "job", &pending) == 0 &&
		    pending == job) {
			/* Read in the same round as its JOB, before the job
			 * started: it never runs. */
			msg_destroy(&w->pending);
			worker_send_fail(w, job, "canceled", false,
			    "canceled by the broker");
		}
		break;
	case MSG_JOB:
		if (w->role->async != NULL) {
			worker_async_job(w, m);
			return;
		}
		msg_get_uint(m, "job", &job);
		if (w->busy || w->pending != NULL) {
			worker_send_fail(w, job, "busy", true,
			    "this worker runs one job at a time");
			break;
		}
		w->pending = m;
		return;
	default:
		/* msg_allowed() let nothing else through. */
		break;
	}
	msg_destroy(&m);
}

/* worker_read - handle every message waiting; exits on bad input. */
static void
worker_read(struct worker *w)
{
	struct msg *m;
	int rc, k;

	/* Bounded, so heartbeats still go out under a flood. */
	for (k = 0; k < 100; k++) {
		rc = msg_recv(w->sock, &m, NULL);
		if (rc == -SHIRO_ERR_AGAIN)
			return;
		if (rc == -SHIRO_ERR_PROTO) {
			log_warnx("malformed message from the broker: %s",
			    msg_strerror());
			worker_exit(w, WORKER_EXIT_PROTO);
		}
		if (rc < 0) {
			log_warnx("receiving: %s", err_str(rc));
			worker_exit(w, WORKER_EXIT_FATAL);
		}
		if (!msg_allowed(MSG_PEER_BROKER_TO_WORKER, msg_type(m))) {
			log_warnx("the broker sent %s, which it may not send",
			    msg_type_name(msg_type(m)));
			msg_destroy(&m);
			worker_exit(w, WORKER_EXIT_PROTO);
		}
		w->last_recv = zsock_now_ms();
		w->reconnect_at = w->last_recv + 3 * w->hb_ms;
		w->backoff = WORKER_BACKOFF_MIN;
		worker_dispatch(w, m);
	}
}

/*
 * worker_monitor - what the monitor of a tcp connection says: exits when
 * the broker refused this worker's key; true
 * when a new connection came up after the last one was lost (READY went
 * on it: the jobs in flight are the broker's to give again).
 */
static bool
worker_monitor(struct worker *w)
{
	bool again = false;
	int k;

	for (k = 0; k < 64; k++) {
		switch (zsock_monitor_next(w->mon)) {
		case ZSOCK_EV_NONE:
			return again;
		case ZSOCK_EV_DOWN:
			if (!w->down)
				log_warnx("lost the connection to %s: "
					  "reconnecting",
				    w->endpoint);
			w->down = true;
			break;
		case ZSOCK_EV_UP:
			if (!w->down)
				break;
			w->down = false;
			log_info("connected to %s again: READY", w->endpoint);
			worker_ready(w);
			w->last_recv = zsock_now_ms();
			w->reconnect_at = w->last_recv + 3 * w->hb_ms;
			w->backoff = WORKER_BACKOFF_MIN;
			again = true;
			break;
		case ZSOCK_EV_REFUSED:
			log_warnx("the broker at %s refused this worker's key: "
				  "it is not admitted there, or was revoked",
			    w->endpoint);
			worker_exit(w, WORKER_EXIT_FATAL);
		case ZSOCK_EV_FAILED:
			/* A connection lost during the handshake looks the
			 * same as a wrong server key: libzmq tries again. */
			if (!w->down)
				log_warnx("a handshake with %s failed: "
					  "retrying",
				    w->endpoint);
			w->down = true;
			break;
		case ZSOCK_EV_OTHER:
			break;
		}
	}
	return again;
}

/*
 * worker_wait - wait up to ms for the broker and for items[nbase..n)
 * (the role's, n counting the skeleton's own items[0..nbase)), read what
 * came from the broker, send a heartbeat when due, and reconnect or give
 * up when it is silent.  Returns -SHIRO_ERR_TIMEOUT when the broker was
 * lost and this worker said READY again (its jobs in flight are to be
 * dropped), else 0.
 */
static int
worker_wait(struct worker *w, long ms, struct zsock_poll *items, int n)
{
	long long now = zsock_now_ms();
	long wait = ms;
	bool again = false;
	int k;

	if (w->next_hb - now < wait)
		wait = (long)(w->next_hb - now);
	if (w->reconnect_at - now < wait)
		wait = (long)(w->reconnect_at - now);
	if (wait < 0)
		wait = 0;
	if (worker_stop)
		worker_exit(w, WORKER_EXIT_OK);
	items[0].sock = w->sock;
	items[0].fd = -1;
	items[0].events = ZSOCK_IN;
	if (w->mon != NULL) {
		items[1].sock = w->mon;
		items[1].fd = -1;
		items[1].events = ZSOCK_IN;
	}
	for (k = 0; k < n; k++)
		items[k].revents = 0;
	if (zsock_poll(items, n, wait) > 0) {
		if (items[0].revents & ZSOCK_IN)
			worker_read(w);
		if (w->mon != NULL && (items[1].revents & ZSOCK_IN))
			again = worker_monitor(w);
	}
	if (worker_stop)
		worker_exit(w, WORKER_EXIT_OK);
	now = zsock_now_ms();
	if (now >= w->next_hb)
		worker_send_heartbeat(w);
	if (again)
		return -SHIRO_ERR_TIMEOUT;
	if (now < w->reconnect_at)
		return 0;
	if (now - w->last_recv >= w->give_up_ms) {
		log_warnx("no word from the broker for %lld ms: exiting",
		    now - w->last_recv);
		worker_exit(w, WORKER_EXIT_GONE);
	}
	if (w->mon != NULL) {
		/* libzmq keeps this tcp socket connected by itself; a broker
		 * that is silent on it may have dropped this worker (its
		 * heartbeats came late): READY again, with back-off. */
		log_warnx("the broker is silent: READY again in case it "
			  "dropped this worker");
		worker_ready(w);
		w->reconnect_at = now + w->backoff;
		w->backoff = w->backoff * 2 > WORKER_BACKOFF_MAX
		    ? WORKER_BACKOFF_MAX
		    : w->backoff * 2;
		return -SHIRO_ERR_TIMEOUT;
	}
	if (w->locked) {
		/* No new socket can be made now: the connection we have is
		 * the only one, and the broker may yet answer on it. */
		log_warnx("the broker is silent: waiting on the connection "
			  "(a locked-down worker makes no other)");
		w->reconnect_at = w->last_recv + w->give_up_ms;
		return 0;
	}
	log_warnx("the broker is silent: reconnecting to %s", w->endpoint);
	worker_dial(w);
	worker_ready(w);
	w->reconnect_at = now + w->backoff;
	w->backoff = w->backoff * 2 > WORKER_BACKOFF_MAX ? WORKER_BACKOFF_MAX
							 : w->backoff * 2;
	return -SHIRO_ERR_TIMEOUT;
}

/* worker_tick - worker_wait() on the broker alone (synchronous roles). */
static int
worker_tick(struct worker *w, long ms)
{
	struct zsock_poll it[2];

	return worker_wait(w, ms, it, (int)w->nbase);
}

/*
 * worker_async_round - one round of an asynchronous role: its items and
 * the broker in one wait, then the role acts on what is ready.
 */
static void
worker_async_round(struct worker *w)
{
	const struct worker_async *a = w->role->async;
	long role_ms = -1, ms = w->hb_ms;
	int n;

	if (w->items == NULL)
		w->items = xreallocarray(
		    NULL, WORKER_ITEMS_MAX + 2, sizeof(*w->items));
	n = a->poll(w, w->items + w->nbase, WORKER_ITEMS_MAX, &role_ms);
	if (n < 0 || n > WORKER_ITEMS_MAX)
		n = 0;
	if (role_ms >= 0 && role_ms < ms)
		ms = role_ms;
	if (worker_wait(w, ms, w->items, n + (int)w->nbase) < 0)
		worker_async_lost(w);
	a->ready(w, w->items + w->nbase, n);
}

/* worker_poll - keep the connection alive during a job. */
int
worker_poll(struct worker *w)
{
	if (!w->canceled && !w->lost && worker_tick(w, 0) < 0)
		w->lost = true;
	return w->canceled || w->lost ? -SHIRO_ERR_CANCELED : 0;
}

/* worker_chunk - stream text of the running job. */
int
worker_chunk(struct worker *w, const char *text, size_t len)
{
	struct msg *m;
	int rc;

	if ((rc = worker_poll(w)) < 0)
		return rc;
	m = msg_new(MSG_CHUNK);
	msg_set_int(m, "job", (int64_t)w->job);
	msg_set_strn(m, "text", text, len);
	worker_send(w, m);
	msg_destroy(&m);
	return 0;
}

/* worker_failure - say why the running job fails. */
void
worker_failure(
    struct worker *w, const char *code, bool retry, const char *fmt, ...)
{
	va_list ap;

	snprintf(w->fail_code, sizeof(w->fail_code), "%s", code);
	va_start(ap, fmt);
	vsnprintf(w->fail_text, sizeof(w->fail_text), fmt, ap);
	va_end(ap);
	w->fail_retry = retry;
	w->failed = true;
}

/* worker_job_chunk - stream text of an asynchronous role's job. */
void
worker_job_chunk(struct worker *w, uint64_t job, const char *part,
    const char *text, size_t len)
{
	struct msg *m;

	if (worker_held_index(w, job) < 0)
		return;
	m = msg_new(MSG_CHUNK);
	msg_set_int(m, "job", (int64_t)job);
	msg_set_strn(m, "text", text, len);
	if (part != NULL)
		msg_set_str(m, "part", part);
	worker_send(w, m);
	msg_destroy(&m);
}

/* worker_job_result - answer a job with its RESULT. */
void
worker_job_result(struct worker *w, struct msg **resultp)
{
	uint64_t job = 0;

	msg_get_uint(*resultp, "job", &job);
	if (worker_release(w, job)) {
		if (msg_check(*resultp) == 0)
			worker_send(w, *resultp);
		else
			worker_send_fail(
			    w, job, "internal", false, msg_strerror());
	}
	msg_destroy(resultp);
}

/* worker_job_fail - answer job with FAIL. */
void
worker_job_fail(struct worker *w, uint64_t job, const char *code, bool retry,
    const char *fmt, ...)
{
	char text[1024];
	va_list ap;

	if (!worker_release(w, job))
		return;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	worker_send_fail(w, job, code, retry, text);
}

/* worker_job_held - whether job is in flight. */
bool
worker_job_held(const struct worker *w, uint64_t job)
{
	return worker_held_index(w, job) >= 0;
}

/* worker_run - run the pending job through the service and answer it. */
static void
worker_run(struct worker *w)
{
	struct msg *job = w->pending, *result;
	int rc;

	w->pending = NULL;
	msg_get_uint(job, "job", &w->job);
	w->busy = true;
	w->canceled = w->lost = w->failed = false;
	result = msg_new(MSG_RESULT);
	msg_set_int(result, "job", (int64_t)w->job);
	rc = w->role->service(w, job, result);
	if (w->lost) {
		/* The broker requeues it; our answer would go nowhere. */
		log_warnx("job %llu abandoned: the broker was lost",
		    (unsigned long long)w->job);
	} else if (w->canceled) {
		worker_send_fail(
		    w, w->job, "canceled", false, "canceled by the broker");
	} else if (rc == 0 && msg_check(result) == 0) {
		worker_send(w, result);
	} else if (rc == 0) {
		worker_send_fail(w, w->job, "internal", false, msg_strerror());
	} else if (w->failed) {
		worker_send_fail(
		    w, w->job, w->fail_code, w->fail_retry, w->fail_text);
	} else {
		worker_send_fail(w, w->job, "internal", false, err_str(rc));
	}
	w->busy = false;
	msg_destroy(&result);
	msg_destroy(&job);
}

/* worker_read_secret - read the secret from fd, then close fd. */
static void
worker_read_secret(struct worker *w, int fd)
{
	unsigned char extra;
	ssize_t n;

	w->secret_len = 0;
	while (w->secret_len < sizeof(w->secret)) {
		n = read(fd, w->secret + w->secret_len,
		    sizeof(w->secret) - w->secret_len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			fatal("reading the secret from fd %d", fd);
		if (n == 0)
			break;
		w->secret_len += (size_t)n;
	}
	if (w->secret_len == sizeof(w->secret) && read(fd, &extra, 1) > 0)
		fatalx("the secret on fd %d is longer than %d bytes", fd,
		    WORKER_SECRET_MAX);
	close(fd);
	w->has_secret = true;
}

/* worker_read_cred - read the credential shirod wrote into fd (its key
 * pair and the broker's public key), then close fd. */
static void
worker_read_cred(struct worker *w, int fd)
{
	int rc = zsock_cred_read(fd, &w->cred);

	close(fd);
	if (rc < 0)
		fatalx("no valid credential on fd %d: %s", fd, err_str(rc));
	w->has_cred = true;
}

/* worker_default_endpoint - ipc://$SHIRO_HOME/run/workers.sock. */
static char *
worker_default_endpoint(void)
{
	const char *home = getenv("SHIRO_HOME");

	if (home != NULL && *home != '\0')
		return xasprintf("ipc://%s/run/workers.sock", home);
	home = getenv("HOME");
	if (home == NULL || *home == '\0')
		fatalx("neither SHIRO_HOME nor HOME is set: give --endpoint");
	return xasprintf("ipc://%s/.shiro/run/workers.sock", home);
}

/* worker_usage - print the options. */
static void
worker_usage(FILE *fp, const char *prog, const struct worker_role *role)
{
	fprintf(fp,
	    "usage: %s [--endpoint URL] [--provider NAME] [--secret-fd N]\n"
	    "       [--cred-fd N] [--workspace DIR] [--net]\n"
	    "       [--heartbeat-ms N] [--give-up-ms N]\n"
	    "A shiro %s worker: shirod starts it and gives it jobs.\n"
	    "  --endpoint URL    the broker's worker socket (default\n"
	    "                    ipc://$SHIRO_HOME/run/workers.sock)\n"
	    "  --provider NAME   what it serves (default %s)\n"
	    "  --secret-fd N     read the provider's key from this fd\n"
	    "  --cred-fd N       read the credential shirod gives it from\n"
	    "                    this fd (its CURVE keys for the socket)\n"
	    "  --workspace DIR   the workspace it serves (the fs role needs "
	    "one)\n"
	    "  --net             its jails may use the network (tool role)\n"
	    "  --heartbeat-ms N  heartbeat interval (default 1000)\n"
	    "  --give-up-ms N    exit after this long without the broker\n"
	    "                    (default 30000)\n",
	    prog, role->role, role->provider);
}

/* worker_number - a positive number option, or exit with usage. */
static long
worker_number(const char *opt, const char *s)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || *end != '\0' || v <= 0 || v > INT_MAX) {
		fprintf(stderr, "%s: not a positive number: %s\n", opt, s);
		exit(WORKER_EXIT_USAGE);
	}
	return v;
}

/* worker_confine - the role's file confinement, while single-threaded,
 * then the role's own threads. */
static void
worker_confine(struct worker *w, struct sandbox **sbp)
{
	struct sandbox_opts o;
	int rc;

	*sbp = NULL;
	if (w->role->sandbox != WORKER_NO_SANDBOX) {
		memset(&o, 0, sizeof(o));
		o.workspace = w->workspace;
		o.endpoint = w->endpoint;
		o.net = w->net;
		rc = sandbox_confine(
		    (enum sandbox_role)w->role->sandbox, &o, sbp);
		if (rc < 0) {
			log_warnx("%s worker: cannot confine itself: %s",
			    w->role->role, err_str(rc));
			w->confined = true; /* perhaps in part */
			worker_exit(w, WORKER_EXIT_FATAL);
		}
		w->confined = true;
	}
	if (w->role->confined != NULL && (rc = w->role->confined(w)) < 0) {
		log_warnx("%s worker: %s", w->role->role, err_str(rc));
		worker_exit(w, WORKER_EXIT_FATAL);
	}
}

/* worker_connect - the first connection, waited for until its handshake
 * succeeded (bounded), then the lockdown: from there no socket can be
 * made, so a connection still in the making would never be. */
static void
worker_connect(struct worker *w, struct sandbox *sb)
{
	struct zsock_opts opts = {0};
	int rc;

	opts.heartbeat_ms = (int)w->hb_ms;
	/* With a credential, the broker's socket is a CURVE server that
	 * admits only this process's key. */
	opts.curve = w->has_cred ? &w->cred : NULL;
	/* Over tcp the one socket reconnects by itself, with back-off, and
	 * its monitor (made now: after the lockdown no socket can be)
	 * says when; an ipc worker is replaced by shirod instead. */
	if (strncmp(w->endpoint, "tcp://", 6) == 0) {
		opts.reconnect_ms = WORKER_BACKOFF_MIN;
		opts.reconnect_max_ms = WORKER_BACKOFF_MAX;
	}
	rc = zsock_dealer_watch(sb ? sandbox_endpoint(sb) : w->endpoint, &opts,
	    w->give_up_ms < WORKER_HANDSHAKE_MS ? w->give_up_ms
						: WORKER_HANDSHAKE_MS,
	    &w->sock, opts.reconnect_ms > 0 ? &w->mon : NULL);
	w->nbase = w->mon != NULL ? 2 : 1;
	if (rc < 0) {
		log_warnx("no connection to the broker at %s: %s%s",
		    w->endpoint, err_str(rc),
		    rc == -SHIRO_ERR_PERM
			? " (it does not admit this worker's key)"
			: rc == -SHIRO_ERR_PROTO
			? " (the handshake failed: is the server key its?)"
			: "");
		sandbox_destroy(&sb);
		worker_exit(w, WORKER_EXIT_GONE);
	}
	if (sb != NULL) {
		rc = sandbox_lockdown(sb);
		sandbox_destroy(&sb);
		if (rc < 0) {
			log_warnx("%s worker lockdown failed: %s",
			    w->role->role, err_str(rc));
			worker_exit(w, WORKER_EXIT_FATAL);
		}
		w->locked = true;
	}
}

/* worker_start - run a worker's start-up, up to its READY. */
struct worker *
worker_start(int argc, char **argv, const struct worker_role *role)
{
	static const struct option opts[] = {
	    {"endpoint", required_argument, NULL, 'e'},
	    {"provider", required_argument, NULL, 'p'},
	    {"secret-fd", required_argument, NULL, 's'},
	    {"cred-fd", required_argument, NULL, 'c'},
	    {"workspace", required_argument, NULL, 'w'},
	    {"net", no_argument, NULL, 'n'},
	    {"heartbeat-ms", required_argument, NULL, 'b'},
	    {"give-up-ms", required_argument, NULL, 'g'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	struct worker *w = xcalloc(1, sizeof(*w));
	struct sandbox *sb;
	struct sigaction sa;
	int c, secret_fd = -1, cred_fd = -1, rc;

	log_init(argv[0], LOG_LEVEL_INFO);
	w->role = role;
	w->hb_ms = 1000;
	w->give_up_ms = 30000;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'e':
			free(w->endpoint);
			w->endpoint = xstrdup(optarg);
			break;
		case 'p':
			free(w->provider);
			w->provider = xstrdup(optarg);
			break;
		case 's':
			secret_fd = (int)worker_number("--secret-fd", optarg);
			break;
		case 'c':
			cred_fd = (int)worker_number("--cred-fd", optarg);
			break;
		case 'w':
			free(w->workspace);
			w->workspace = xstrdup(optarg);
			break;
		case 'n':
			w->net = true;
			break;
		case 'b':
			w->hb_ms = worker_number("--heartbeat-ms", optarg);
			break;
		case 'g':
			w->give_up_ms = worker_number("--give-up-ms", optarg);
			break;
		case 'h':
			worker_usage(stdout, argv[0], role);
			exit(WORKER_EXIT_OK);
		default:
			worker_usage(stderr, argv[0], role);
			exit(WORKER_EXIT_USAGE);
		}
	}
	if (optind != argc) {
		worker_usage(stderr, argv[0], role);
		exit(WORKER_EXIT_USAGE);
	}
	if (w->endpoint == NULL)
		w->endpoint = worker_default_endpoint();
	if (w->provider == NULL)
		w->provider = xstrdup(role->provider);

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = worker_on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	if (cred_fd >= 0)
		worker_read_cred(w, cred_fd);
	if (secret_fd >= 0)
		worker_read_secret(w, secret_fd);
	if (role->setup != NULL && (rc = role->setup(w)) < 0) {
		log_warnx(
		    "%s worker set-up failed: %s", role->role, err_str(rc));
		worker_exit(w, WORKER_EXIT_FATAL);
	}
	worker_confine(w, &sb);
	worker_connect(w, sb);
	worker_ready(w);
	w->last_recv = zsock_now_ms();
	w->reconnect_at = w->last_recv + 3 * w->hb_ms;
	w->backoff = WORKER_BACKOFF_MIN;
	return w;
}

/* worker_serve - heartbeats and jobs until the end. */
void
worker_serve(struct worker *w)
{
	for (;;) {
		if (w->role->async != NULL) {
			worker_async_round(w);
			continue;
		}
		/* A JOB from before a reconnection is the broker's again. */
		if (worker_tick(w, w->hb_ms) < 0)
			msg_destroy(&w->pending);
		if (w->pending != NULL)
			worker_run(w);
	}
}

/* worker_main - run a worker process. */
int
worker_main(int argc, char **argv, const struct worker_role *role)
{
	worker_serve(worker_start(argc, argv, role));
}

/* worker_workspace - --workspace, or NULL. */
const char *
worker_workspace(const struct worker *w)
{
	return w->workspace;
}

/* worker_net - whether --net was given. */
bool
worker_net(const struct worker *w)
{
	return w->net;
}

/* worker_locked - whether the lockdown is in force. */
bool
worker_locked(const struct worker *w)
{
	return w->locked;
}

/* worker_provider - the provider this worker serves. */
const char *
worker_provider(const struct worker *w)
{
	return w->provider;
}

/* worker_secret - the secret, NULL if none. */
const unsigned char *
worker_secret(const struct worker *w, size_t *lenp)
{
	*lenp = w->has_secret ? w->secret_len : 0;
	return w->has_secret ? w->secret : NULL;
}

/* worker_endpoint - the broker's endpoint. */
const char *
worker_endpoint(const struct worker *w)
{
	return w->endpoint;
}

/* worker_set_data - keep a pointer for the role. */
void
worker_set_data(struct worker *w, void *data)
{
	w->data = data;
}

/* worker_data - the role's pointer. */
void *
worker_data(const struct worker *w)
{
	return w->data;
}
