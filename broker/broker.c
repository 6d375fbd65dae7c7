/*
 * broker.c - shirod's start-up and its one event loop.
 *
 * Start-up, in this order (docs/architecture.md, "Start-up"): settings,
 * the run directory, the store (which takes the chat lock), the planner
 * folded from the store, then the sockets.  Only the owner of the lock
 * binds: a second shirod on the same home stops at the lock with
 * BROKER_EXIT_RUNNING and never touches the first one's socket, and a
 * socket file left by a dead shirod is removed once the lock is ours.
 *
 * The loop polls the ZAP handler, the client socket, the worker socket
 * and a signalfd, with the first timer's due time as the timeout.  Each
 * round first answers the ZAP requests (who may connect, zap.h), then
 * reads at most clients.perRound client messages (ZeroMQ's ROUTER takes
 * them from the clients in turn) and every waiting worker message,
 * flushes the round's SENDs in one group commit, then runs the due
 * timers.  When the store fails in a way that limping on would lose
 * data, broker_fail ends the loop at once (BROKER_EXIT_STORE).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "broker/fold.h"
#include "proto/err.h"
#include "proto/log.h"
#include "proto/xmalloc.h"
#include "proto/zsock.h"

#include "broker.h"
#include "out.h"
#include "prompt.h"
#include "runs.h"
#include "shirod.h"

/* A client refused this many messages in a row is forgotten. */
#define BROKER_REFUSED_DROP 10000

/* broker_signals - block the signals the loop reads from a signalfd. */
static int
broker_signals(struct broker *b)
{
	sigset_t set;

	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &set, NULL) != 0)
		return -SHIRO_ERR_IO;
	b->sigfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	return b->sigfd < 0 ? -SHIRO_ERR_IO : 0;
}

/* broker_is_worker - the ZAP handler's question: is pid a worker's? */
static int
broker_is_worker(void *arg, pid_t pid)
{
	struct broker *b = arg;

	return pool_has_pid(&b->pool, pid);
}

/* broker_fail - stop at once: the store cannot be trusted to log. */
void
broker_fail(struct broker *b, const char *fmt, ...)
{
	char why[512];
	va_list ap;

	if (b->broken)
		return;
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	log_warnx("%s: shirod stops now (exit %d); every acknowledged message "
		  "is in the log, and the next start repairs the chat",
	    why, BROKER_EXIT_STORE);
	b->broken = BROKER_EXIT_STORE;
	b->stopping = 1;
	b->stop_now = 1;
}

/* broker_check_counts - the store and the planner agree on T. */
int
broker_check_counts(struct broker *b)
{
	uint64_t st = store_count(b->store), pl = plan_count(b->plan);

	if (st == pl)
		return 0;
	broker_fail(b,
	    "the log has %llu messages but the planner %llu: they are out of "
	    "step",
	    (unsigned long long)st, (unsigned long long)pl);
	return -1;
}

/* broker_listen - the ZAP handler, then both ROUTERs: the clients' with
 * the NULL mechanism, the workers' as a CURVE server with a key pair of
 * this run, whose public half the pool gives to each worker; then their
 * tcp endpoints, if configured (CURVE with keys/server.key). */
static int
broker_listen(struct broker *b, char *msg, size_t msglen)
{
	struct zsock_keypair server;
	struct zsock_opts zo;
	int rc;

	if ((rc = zap_open(&b->zap, broker_is_worker, b)) != 0 ||
	    (rc = zsock_keypair(&server)) != 0) {
		snprintf(msg, msglen, "cannot set up authentication: %s",
		    err_str(rc));
		return rc;
	}
	memset(&zo, 0, sizeof(zo));
	zo.hwm = 10000;
	/* Liveness is the peers' (their PINGs and HEARTBEATs, and their
	 * own ZMTP pings, which libzmq here answers); shirod sends no ZMTP
	 * pings of its own (why: zsock.c, zsock_make). */
	zo.heartbeat_ms = -1;
	zo.zap_domain = ZAP_DOMAIN_CLIENTS;
	rc = zsock_router(b->cfg.client_endpoint, &zo, &b->csock);
	if (rc == 0) {
		zo.zap_domain = ZAP_DOMAIN_WORKERS;
		zo.curve_secret = server.sec;
		rc = zsock_router(b->cfg.worker_endpoint, &zo, &b->wsock);
	}
	/* libzmq keeps its own copy of the secret half. */
	explicit_bzero(server.sec, sizeof(server.sec));
	if (rc != 0) {
		snprintf(msg, msglen, "cannot listen on %s or %s: %s",
		    b->cfg.client_endpoint, b->cfg.worker_endpoint,
		    err_str(rc));
		return rc;
	}
	/* The tcp endpoints, if any, after the ipc ones (remote.h). */
	if ((rc = remote_listen(b, msg, msglen)) != 0)
		return rc;
	pool_init(&b->pool, &b->cfg, b->bindir, &b->zap.keys, server.pub);
	return 0;
}

/* broker_unlink_stale - remove an ipc socket file: a dead shirod's at
 * start (the lock is ours, so nobody listens on it), ours at the end. */
static void
broker_unlink_stale(const char *endpoint)
{
	if (strncmp(endpoint, "ipc://", 6) != 0)
		return;
	(void)unlink(endpoint + 6);
}

/* broker_models_init - what model calls share: the system prompt with
 * the user's instructions, the prefix gate, the stored usage. */
static void
broker_models_init(struct broker *b)
{
	char **blocks = NULL;
	size_t n = 0, k;
	int rc;

	prompt_instructions(b->cfg.home, b->cfg.turns.trusted,
	    b->cfg.turns.ntrusted, &blocks, &n, &b->prompt_notes);
	if (b->prompt_notes != NULL)
		log_warnx("%s", b->prompt_notes);
	request_base_init(&b->rb, b->cfg.home, blocks, n);
	for (k = 0; k < n; k++)
		free(blocks[k]);
	free(blocks);
	gate_init(&b->gate, GATE_LIFE_MS);
	if ((rc = usage_load(&b->usage, b->store)) != 0)
		log_warnx("the stored usage does not read (%s): %s; counting "
			  "from zero",
		    err_str(rc), store_errmsg(b->store));
}

/* broker_open - settings are loaded: lock, store, fold, sockets. */
int
broker_open(
    struct broker *b, const struct shirod_opts *o, char *msg, size_t msglen)
{
	struct store_openerr why;
	struct fold_report fr;
	struct plan_settings ps;
	char *run;
	int rc;

	b->sigfd = -1;
	b->started_at = timer_now();
	timer_init(&b->timers);
	run = xasprintf("%s/run", b->cfg.home);
	if (mkdir(run, 0700) != 0 && errno != EEXIST) {
		snprintf(
		    msg, msglen, "cannot make %s: %s", run, strerror(errno));
		free(run);
		return BROKER_EXIT_ERROR;
	}
	(void)chmod(run, 0700);
	free(run);

	memset(&why, 0, sizeof(why));
	rc = store_open(b->cfg.home, NULL, &b->store, &why);
	if (rc == -SHIRO_ERR_LOCKED) {
		snprintf(msg, msglen,
		    "shirod already runs for %s as pid %ld; shiro attaches to "
		    "it",
		    b->cfg.home, (long)why.owner);
		return BROKER_EXIT_RUNNING;
	}
	if (rc != 0) {
		snprintf(msg, msglen, "cannot open the chat in %s: %s",
		    b->cfg.home, why.msg[0] ? why.msg : err_str(rc));
		return BROKER_EXIT_ERROR;
	}

	plan_settings_default(&ps);
	ps.ceiling = b->cfg.memory.ceiling;
	ps.floor = b->cfg.memory.floor;
	ps.cceiling = b->cfg.memory.cceiling;
	ps.cfloor = b->cfg.memory.cfloor;
	ps.jobs = b->cfg.memory.jobs;
	memset(&fr, 0, sizeof(fr));
	rc = fold_view(b->store, &ps, &b->plan, &fr);
	if (rc != 0) {
		snprintf(msg, msglen, "cannot rebuild the view of %s: %s",
		    b->cfg.home, fr.msg[0] ? fr.msg : err_str(rc));
		return BROKER_EXIT_ERROR;
	}
	if (fr.saved == FOLD_SAVED_STALE || fr.saved == FOLD_SAVED_BAD)
		log_info("view.json was %s; the view folded from the merge "
			 "records wins: %s",
		    fr.saved == FOLD_SAVED_BAD ? "unreadable" : "stale",
		    fr.msg);
	if (o->trace != NULL) {
		b->trace = fopen(o->trace, "we");
		if (b->trace == NULL) {
			snprintf(msg, msglen, "cannot write %s: %s", o->trace,
			    strerror(errno));
			return BROKER_EXIT_ERROR;
		}
		setvbuf(b->trace, NULL, _IOLBF, 0);
		fprintf(b->trace, "budget %lu %lu\n", b->cfg.memory.ceiling,
		    b->cfg.memory.floor);
	}

	/* The lock is ours: any socket file is a dead shirod's. */
	broker_unlink_stale(b->cfg.client_endpoint);
	broker_unlink_stale(b->cfg.worker_endpoint);
	if (broker_listen(b, msg, msglen) != 0)
		return BROKER_EXIT_ERROR;
	if (broker_signals(b) != 0) {
		snprintf(msg, msglen, "signalfd: %s", strerror(errno));
		return BROKER_EXIT_ERROR;
	}
	broker_models_init(b);
	clients_init(&b->clients, &b->cfg.clients,
	    10 * b->cfg.heartbeat_ms < 10000 ? 10000
					     : 10 * b->cfg.heartbeat_ms);
	/* The permission engine, and an echo for each tool call the last
	 * shirod left without one (it logs, so the planner must be up). */
	turn_init(b);
	(void)timer_add(&b->timers, b->started_at, BROKER_T_TICK, 0);
	(void)timer_add(&b->timers, b->started_at + b->cfg.memory.retry_ms,
	    BROKER_T_RETRY, 0);
	log_info("shirod %d serving %s: %llu messages, view %llu bytes",
	    (int)getpid(), b->cfg.home, (unsigned long long)plan_count(b->plan),
	    (unsigned long long)plan_view_size(b->plan));
	return BROKER_EXIT_OK;
}

/* broker_client_in - read up to a round's worth of client messages. */
static void
broker_client_in(struct broker *b, uint64_t now)
{
	struct clients_client *cl;
	struct msg_ident from;
	struct msg *m;
	unsigned k;
	int rc;

	for (k = 0; k < b->cfg.clients.per_round && !b->broken; k++) {
		m = NULL;
		memset(&from, 0, sizeof(from));
		rc = msg_recv(b->csock, &m, &from);
		if (rc == -SHIRO_ERR_AGAIN)
			break;
		if (rc == -SHIRO_ERR_PROTO) {
			/* One line per bad frame would let a client fill the
			 * log: count them, log the first of each 1000. */
			if (b->n_bad++ % 1000 == 0)
				log_info("bad frame from a client (%llu so "
					 "far): %s",
				    (unsigned long long)b->n_bad,
				    msg_strerror());
			if (from.len > 0)
				out_error(b, &from, 0, "proto",
				    "malformed message: %s", msg_strerror());
			continue;
		}
		if (rc != 0) {
			log_warnx("client socket: %s", err_str(rc));
			break;
		}
		cl = clients_get(&b->clients, &from, now);
		if (cl == NULL) {
			out_error(b, &from, 0, "full",
			    "shirod serves %u clients already; try later",
			    b->clients.max);
			msg_destroy(&m);
			continue;
		}
		if (clients_admit(&b->clients, cl, now) != 0) {
			b->n_refused++;
			if (cl->refused >= BROKER_REFUSED_DROP) {
				log_info("client %s floods: forgotten",
				    cl->name[0] ? cl->name : "(unnamed)");
				clients_drop(&b->clients, cl);
			} else if (timer_since(now, cl->warned_at) >= 1000) {
				cl->warned_at = now;
				out_error(b, &from, 0, "busy",
				    "too many messages: at most %u a second",
				    b->clients.rate);
			}
			msg_destroy(&m);
			continue;
		}
		b->n_received++;
		if (!msg_allowed(MSG_PEER_CLIENT, msg_type(m))) {
			b->n_bad++;
			out_error(b, &from, 0, "type",
			    "a client may not send %s",
			    msg_type_name(msg_type(m)));
			msg_destroy(&m);
			continue;
		}
		serve_client(b, &from, &m);
	}
	serve_flush(b);
}

/* broker_worker_in - read every waiting worker message. */
static void
broker_worker_in(struct broker *b, uint64_t now)
{
	struct msg_ident from;
	struct msg_user user;
	struct msg *m;
	unsigned k;
	int rc;

	for (k = 0; k < 4096 && !b->broken; k++) {
		m = NULL;
		memset(&from, 0, sizeof(from));
		rc = msg_recv_user(b->wsock, &m, &from, &user);
		if (rc == -SHIRO_ERR_AGAIN)
			break;
		if (rc == -SHIRO_ERR_PROTO) {
			supervise_bad(b, &user, now);
			continue;
		}
		if (rc != 0) {
			log_warnx("worker socket: %s", err_str(rc));
			break;
		}
		supervise_worker(b, &from, &user, &m, now);
	}
}

/* broker_signal_in - read the signalfd. */
static void
broker_signal_in(struct broker *b, uint64_t now)
{
	struct signalfd_siginfo si;

	while (read(b->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		switch (si.ssi_signo) {
		case SIGCHLD:
			supervise_reap(b, now);
			break;
		case SIGTERM:
		case SIGINT:
			if (!b->stopping) {
				log_info("signal %u: stopping", si.ssi_signo);
				b->stop_why = si.ssi_signo == SIGTERM
				    ? "SIGTERM"
				    : "SIGINT";
			}
			b->stopping = 1;
			break;
		default:
			break;
		}
	}
}

/* broker_timers - run every due timer. */
static void
broker_timers(struct broker *b, uint64_t now)
{
	uint64_t arg;
	int kind;

	while (!b->broken && timer_pop(&b->timers, now, &kind, &arg)) {
		switch (kind) {
		case BROKER_T_TICK:
			/* Read what workers sent first: a broker that was busy
			 * must not blame them for its own delay. */
			broker_worker_in(b, now);
			supervise_tick(b, now);
			remote_tick(b, now);
			(void)clients_expire(&b->clients, now);
			(void)timer_add(&b->timers, now + b->cfg.heartbeat_ms,
			    BROKER_T_TICK, 0);
			break;
		case BROKER_T_RETRY:
			/* While a turn waits, failed nodes retry (D5). */
			if (b->nturns > 0) {
				compact_retry(b);
				compact_dispatch(b, now);
			}
			(void)timer_add(&b->timers,
			    now + b->cfg.memory.retry_ms, BROKER_T_RETRY, 0);
			break;
		case BROKER_T_VIEW:
			if (b->view_dirty)
				out_view_save(b);
			break;
		case BROKER_T_SETTLE:
			serve_turns(b, now);
			break;
		case BROKER_T_STOP:
			b->stop_now = 1;
			break;
		case BROKER_T_TREE:
			compact_commit(b);
			break;
		}
	}
	if (!b->broken)
		serve_turns(b, now);
}

/* broker_begin_stop - tell workers to leave; the loop ends when they did
 * or after two seconds. */
static void
broker_begin_stop(struct broker *b, uint64_t now)
{
	struct msg *m = msg_new(MSG_SHUTDOWN);
	unsigned k;

	turn_stop(b);
	runs_stop(b);
	/* Attached clients hear it, however the stop was asked, so they end
	 * at once instead of waiting for a daemon stopped on purpose
	 * (docs/client.md).  A broken store says its own reason. */
	if (!b->broken) {
		struct msg *ev = msg_new(MSG_EVENT);
		char text[96];

		snprintf(text, sizeof(text), "shirod is stopping (%s)",
		    b->stop_why != NULL ? b->stop_why : "asked");
		msg_set_str(ev, "ev", "notice");
		msg_set_str(ev, "code", "stopping");
		msg_set_str(ev, "text", text);
		out_publish(b, &ev);
	}
	msg_set_str(m, "text", "shirod is stopping");
	for (k = 0; k < b->pool.n; k++) {
		struct pool_worker *w = &b->pool.w[k];

		/* A remote worker stays: it reconnects when shirod is back. */
		if ((w->state == POOL_IDLE || w->state == POOL_BUSY) &&
		    !w->remote)
			(void)msg_send(b->wsock, m, &w->ident);
	}
	msg_destroy(&m);
	pool_stop(&b->pool);
	(void)timer_add(&b->timers, now + 2000, BROKER_T_STOP, 0);
}

/* broker_run - the loop, until STOP or a signal; returns the exit code. */
int
broker_run(struct broker *b)
{
	struct zsock_poll items[4];
	uint64_t now;
	long timeout;
	int rc, stop_begun = 0;

	while (!b->stop_now) {
		now = timer_now();
		if (b->stopping && !stop_begun) {
			broker_begin_stop(b, now);
			stop_begun = 1;
		}
		if (stop_begun && pool_alive(&b->pool) == 0)
			break;
		timeout = timer_timeout(&b->timers, now, 1000);
		memset(items, 0, sizeof(items));
		items[0].sock = b->csock;
		items[0].events = ZSOCK_IN;
		items[1].sock = b->wsock;
		items[1].events = ZSOCK_IN;
		items[2].fd = b->sigfd;
		items[2].events = ZSOCK_IN;
		items[3].sock = b->zap.sock;
		items[3].events = ZSOCK_IN;
		rc = zsock_poll(items, 4, timeout);
		if (rc < 0 && rc != -SHIRO_ERR_AGAIN) {
			log_warnx("poll: %s", err_str(rc));
			continue;
		}
		now = timer_now();
		if (items[3].revents & ZSOCK_IN)
			zap_serve(&b->zap, now);
		if (items[2].revents & ZSOCK_IN)
			broker_signal_in(b, now);
		if (items[1].revents & ZSOCK_IN)
			broker_worker_in(b, now);
		if (items[0].revents & ZSOCK_IN)
			broker_client_in(b, now);
		broker_timers(b, timer_now());
	}
	/* Workers that did not leave in time are killed. */
	for (unsigned k = 0; k < b->pool.n; k++)
		if (b->pool.w[k].pid > 0 && b->pool.w[k].state != POOL_DOWN)
			kill(b->pool.w[k].pid, SIGKILL);
	supervise_reap(b, timer_now());
	return b->broken ? BROKER_EXIT_STORE : BROKER_EXIT_OK;
}

/* broker_close - save the view, close sockets and the store. */
void
broker_close(struct broker *b)
{
	size_t k;

	/* After broker_fail nothing more is written: the next start folds
	 * the chat from the log and the last good commit. */
	if (b->store != NULL && b->plan != NULL && !b->broken) {
		compact_commit(b);
		out_view_save(b);
	}
	if (b->csock != NULL)
		broker_unlink_stale(b->cfg.client_endpoint);
	if (b->wsock != NULL)
		broker_unlink_stale(b->cfg.worker_endpoint);
	zsock_close(&b->csock);
	zsock_close(&b->wsock);
	/* The handler goes last: no connection is ever let in unasked. */
	zap_close(&b->zap);
	remote_free(&b->remote);
	zsock_term();
	if (b->sigfd >= 0)
		close(b->sigfd);
	if (b->trace != NULL)
		fclose(b->trace);
	plan_destroy(&b->plan);
	store_close(&b->store);
	for (k = 0; k < b->nsends; k++)
		msg_destroy(&b->sends[k].m);
	free(b->sends);
	for (k = 0; k < b->ntnodes; k++)
		free(b->tnodes[k].text);
	free(b->tnodes);
	for (k = 0; k < b->ntbatches; k++)
		free(b->tbatches[k].merges);
	free(b->tbatches);
	for (k = 0; b->lines != NULL && k < COMPACT_CACHE; k++)
		free(b->lines[k].text);
	free(b->lines);
	free(b->jobs);
	free(b->failed);
	turn_free(b);
	runs_free(b);
	request_base_free(&b->rb);
	gate_free(&b->gate);
	usage_free(&b->usage);
	free(b->prompt_notes);
	if (b->pool.w != NULL)
		pool_free(&b->pool);
	clients_free(&b->clients);
	timer_free(&b->timers);
	secret_free(&b->secrets);
	config_free(&b->cfg);
	free(b->bindir);
}
