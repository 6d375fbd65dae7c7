/*
 * test_shirod_trust - who may talk to shirod, tried from the attacker's
 * side with real processes that are not locked down: a forged READY
 * without the slot's key, a slot's stolen key, clients that are workers
 * or their descendants or run as another uid, and where the keys must
 * not be (every worker's environment and command line, shirod's own
 * environment, a jailed command's environment, shirod's memory).  Each
 * attempt is judged by what the host shows: the marker absent from the
 * chat, shirod alive, the worker's slot untouched, the handshake
 * refused, the file unreadable.
 *
 * The same binary is the worker the attacks run in: shirod runs it when
 * a test's config.json names it (see rogue_main), with its credential
 * on the fd that --cred-fd names, like any worker.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <linux/capability.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zmq.h>

#include "proto/buf.h"
#include "proto/err.h"
#include "proto/msg.h"
#include "proto/xmalloc.h"
#include "proto/zsock.h"
#include "tests/harness.h"
#include "tests/test_shirod_util.h"

/* What an attacking client tries to log; it must never be in the chat. */
#define MARKER "trust-marker-7f3a"

/* The uid the other-user attacks run as. */
#define NOBODY 65534

/* The secrets the environment test plants: a keyEnv, a keyFile, the
 * three provider variables, and a token in a variable shirod knows
 * nothing of (it stays in shirod's environment, but no worker may get
 * shirod's environment). */
static const char *const secrets[] = {"sk-env-11aa22bb33cc",
    "sk-file-44dd55ee66ff", "sk-ant-77gg88hh", "sk-oai-99ii00jj",
    "sk-shiro-kk11ll22", "gh-token-mm33nn44"};
#define NSECRETS (sizeof(secrets) / sizeof(secrets[0]))
#define NKEYS (NSECRETS - 1) /* the ones shirod holds as keys */

/* A DEALER with a monitor, made with libzmq directly (a fresh context),
 * so that the tests see each handshake's outcome. */
struct probe {
	void *ctx, *sock, *mon;
	int nrecv; /* messages it received */
	int secret; /* one of them was a SECRET */
};

/* Handshake outcomes. */
#define PROBE_NONE 0
#define PROBE_OK 1 /* the handshake succeeded */
#define PROBE_REFUSED 2 /* the ZAP handler said no */
#define PROBE_FAILED 3 /* no common mechanism, or another failure */

/* probe_setkey - a Z85 CURVE option. */
static void
probe_setkey(void *sock, int opt, const char *z85)
{
	CHECK(zmq_setsockopt(sock, opt, z85, ZSOCK_KEY_Z85 + 1) == 0);
}

/* probe_open - connect a DEALER to endpoint (CURVE with cred, if any). */
static void
probe_open(struct probe *p, const char *endpoint, const struct zsock_cred *c)
{
	char mon[64];
	int zero = 0;

	memset(p, 0, sizeof(*p));
	p->ctx = zmq_ctx_new();
	CHECK(p->ctx != NULL);
	p->sock = zmq_socket(p->ctx, ZMQ_DEALER);
	CHECK(p->sock != NULL);
	CHECK(zmq_setsockopt(p->sock, ZMQ_LINGER, &zero, sizeof(zero)) == 0);
	if (c != NULL) {
		CHECK(zmq_setsockopt(
			  p->sock, ZMQ_CURVE_SERVER, &zero, sizeof(zero)) == 0);
		probe_setkey(p->sock, ZMQ_CURVE_SERVERKEY, c->server);
		probe_setkey(p->sock, ZMQ_CURVE_PUBLICKEY, c->own.pub);
		probe_setkey(p->sock, ZMQ_CURVE_SECRETKEY, c->own.sec);
	}
	snprintf(mon, sizeof(mon), "inproc://probe-%d", (int)getpid());
	CHECK(zmq_socket_monitor(p->sock, mon,
		  ZMQ_EVENT_HANDSHAKE_SUCCEEDED |
		      ZMQ_EVENT_HANDSHAKE_FAILED_AUTH |
		      ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL |
		      ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL) == 0);
	p->mon = zmq_socket(p->ctx, ZMQ_PAIR);
	CHECK(p->mon != NULL);
	CHECK(zmq_setsockopt(p->mon, ZMQ_LINGER, &zero, sizeof(zero)) == 0);
	CHECK(zmq_connect(p->mon, mon) == 0);
	CHECK(zmq_connect(p->sock, endpoint) == 0);
}

/* probe_send - send m on the probe (queued until it connects). */
static void
probe_send(struct probe *p, struct msg **mp)
{
	CHECK(msg_send(p->sock, *mp, NULL) == 0);
	msg_destroy(mp);
}

/* probe_drain - read whatever arrived on the probe's socket. */
static void
probe_drain(struct probe *p)
{
	struct msg *m;

	while (msg_recv(p->sock, &m, NULL) != -SHIRO_ERR_AGAIN) {
		p->nrecv++;
		if (m != NULL && msg_type(m) == MSG_SECRET)
			p->secret = 1;
		msg_destroy(&m);
	}
}

/* probe_wait - the first handshake outcome within ms (PROBE_*), reading
 * what arrives meanwhile. */
static int
probe_wait(struct probe *p, long ms)
{
	zmq_pollitem_t it[2] = {
	    {p->mon, 0, ZMQ_POLLIN, 0}, {p->sock, 0, ZMQ_POLLIN, 0}};
	long long end = zsock_now_ms() + ms;
	zmq_msg_t ev, addr;
	uint16_t id = 0;
	int got = PROBE_NONE;

	while (got == PROBE_NONE && zsock_now_ms() < end) {
		if (zmq_poll(it, 2, (long)(end - zsock_now_ms())) <= 0)
			continue;
		if (it[1].revents & ZMQ_POLLIN)
			probe_drain(p);
		if (!(it[0].revents & ZMQ_POLLIN))
			continue;
		zmq_msg_init(&ev);
		zmq_msg_init(&addr);
		if (zmq_msg_recv(&ev, p->mon, 0) >= 2 &&
		    zmq_msg_recv(&addr, p->mon, 0) >= 0) {
			memcpy(&id, zmq_msg_data(&ev), sizeof(id));
			got = id == ZMQ_EVENT_HANDSHAKE_SUCCEEDED ? PROBE_OK
			    : id == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH
			    ? PROBE_REFUSED
			    : PROBE_FAILED;
		}
		zmq_msg_close(&ev);
		zmq_msg_close(&addr);
	}
	return got;
}

/* probe_close - close the probe and end its context. */
static void
probe_close(struct probe *p)
{
	zmq_close(p->mon);
	zmq_close(p->sock);
	zmq_ctx_term(p->ctx);
	memset(p, 0, sizeof(*p));
}

/* home_file - HOME/name (static buffer, one at a time per caller). */
static const char *
home_file(const char *home, const char *name)
{
	static char path[PATH_MAX + 80];

	snprintf(path, sizeof(path), "%s/%s", home, name);
	return path;
}

/* write_text - write text to path (replacing it). */
static void
write_text(const char *path, const char *text)
{
	char tmp[PATH_MAX + 8];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (f == NULL)
		return;
	fputs(text, f);
	fclose(f);
	(void)rename(tmp, path);
}

/*
 * attack_client - connect to home's client socket as this process and
 * send HELLO, SEND with the marker, LOG and STOP, then write the outcome
 * to home/attack-NAME: "refused PID" (the handshake was refused and
 * nothing came back), "served PID" (an answer came), "silent PID".
 */
static void
attack_client(const char *home, const char *name)
{
	char ep[PATH_MAX + 16], out[64], file[64];
	struct probe p;
	struct msg *m;
	int got;

	snprintf(ep, sizeof(ep), "ipc://%s/run/shirod.sock", home);
	probe_open(&p, ep, NULL);
	m = msg_new(MSG_HELLO);
	msg_set_int(m, "rid", 1);
	msg_set_str(m, "client", "attacker");
	msg_set_int(m, "version", MSG_VERSION);
	probe_send(&p, &m);
	m = msg_new(MSG_SEND);
	msg_set_int(m, "rid", 2);
	msg_set_str(m, "text", MARKER);
	msg_set_str(m, "kind", "user");
	probe_send(&p, &m);
	m = msg_new(MSG_LOG);
	msg_set_int(m, "rid", 3);
	probe_send(&p, &m);
	m = msg_new(MSG_STOP);
	msg_set_int(m, "rid", 4);
	probe_send(&p, &m);
	got = probe_wait(&p, 10000);
	probe_drain(&p);
	snprintf(out, sizeof(out), "%s %d\n",
	    p.nrecv > 0		       ? "served"
		: got == PROBE_REFUSED ? "refused"
				       : "silent",
	    (int)getpid());
	probe_close(&p);
	snprintf(file, sizeof(file), "attack-%s", name);
	write_text(home_file(home, file), out);
}

/* arg_of - the value after option opt in argv, or NULL. */
static const char *
arg_of(int argc, char **argv, const char *opt)
{
	int k;

	for (k = 1; k + 1 < argc; k++)
		if (strcmp(argv[k], opt) == 0)
			return argv[k + 1];
	return NULL;
}

/* rogue_attackers - the client attacks of mode "client", from a child
 * of this worker and from a grandchild that its parent left behind
 * (reparented, still in the worker's process group).  Forked before any
 * ZeroMQ context exists here. */
static void
rogue_attackers(const char *home)
{
	pid_t child, middle, me;
	int k;

	child = fork();
	if (child == 0) {
		attack_client(home, "child");
		_exit(0);
	}
	middle = fork();
	if (middle == 0) {
		me = getpid();
		if (fork() == 0) {
			for (k = 0; k < 500 && getppid() == me; k++)
				usleep(10000);
			attack_client(home, "orphan");
			_exit(0);
		}
		_exit(0);
	}
	if (middle > 0)
		(void)waitpid(middle, NULL, 0);
}

/*
 * rogue_main - this program run by shirod as a model worker.  It reads
 * its credential from --cred-fd, keeps a copy in HOME/stolen-PROVIDER
 * (what a key thief would have), says READY, writes the key a SECRET
 * brings to HOME/got-secret-PROVIDER and heartbeats for 30 s.  With
 * HOME/rogue = "client" it first attacks the client socket from itself,
 * a child and an orphaned grandchild (attack_client).
 */
static int
rogue_main(int argc, char **argv)
{
	const char *home = getenv("SHIRO_HOME"), *fdarg, *provider;
	char name[96], *mode, from_ep[PATH_MAX];
	struct zsock_opts o = {0};
	struct zsock_cred cred;
	struct msg *m;
	uint64_t end;
	void *sock;
	int fd;

	provider = arg_of(argc, argv, "--provider");
	fdarg = arg_of(argc, argv, "--cred-fd");
	/* The home is the one the endpoint is in, whatever the
	 * environment says. */
	if (strncmp(argv[2], "ipc://", 6) == 0 &&
	    strstr(argv[2], "/run/workers.sock") != NULL) {
		snprintf(from_ep, sizeof(from_ep), "%.*s",
		    (int)(strstr(argv[2], "/run/workers.sock") - argv[2] - 6),
		    argv[2] + 6);
		home = from_ep;
	}
	if (home == NULL || provider == NULL || fdarg == NULL)
		return 64;
	if (zsock_cred_read(atoi(fdarg), &cred) != 0)
		return 65;
	close(atoi(fdarg));
	mode = tsd_read_file(home_file(home, "rogue"));
	if (mode != NULL && strncmp(mode, "client", 6) == 0) {
		rogue_attackers(home);
		attack_client(home, "worker");
	}
	free(mode);
	snprintf(name, sizeof(name), "stolen-%s", provider);
	fd = open(home_file(home, name), O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd >= 0) {
		(void)zsock_cred_write(fd, &cred);
		close(fd);
	}
	o.curve = &cred;
	if (zsock_dealer(argv[2], &o, &sock) != 0)
		return 66;
	m = tsd_ready(provider, getpid());
	(void)msg_send(sock, m, NULL);
	msg_destroy(&m);
	end = tsd_now_ms() + 30000;
	while (tsd_now_ms() < end) {
		const void *key;
		size_t klen;
		char text[256];

		m = tsd_recv(sock, 300);
		if (m != NULL && msg_type(m) == MSG_SECRET &&
		    msg_get_bin(m, "key", &key, &klen) == 0 &&
		    klen < sizeof(text)) {
			memcpy(text, key, klen);
			text[klen] = '\0';
			snprintf(name, sizeof(name), "got-secret-%s", provider);
			write_text(home_file(home, name), text);
		}
		msg_destroy(&m);
		m = msg_new(MSG_HEARTBEAT);
		(void)msg_send(sock, m, NULL);
		msg_destroy(&m);
	}
	zsock_close(&sock);
	zsock_term();
	return 0;
}

/* wait_file - wait up to ms for path to exist; its text (malloc'd). */
static char *
wait_file(const char *path, long ms)
{
	uint64_t end = tsd_now_ms() + (uint64_t)ms;
	char *t;

	while (tsd_now_ms() < end) {
		if ((t = tsd_read_file(path)) != NULL)
			return t;
		usleep(20000);
	}
	CHECKF(0, "%s never came", path);
	return NULL;
}

/* start - shirod in home with config text; its pid. */
static pid_t
start(const char *home, const char *config)
{
	pid_t pid;
	int st;

	tsd_write(home, "config.json", config);
	pid = tsd_start(home, NULL, &st);
	CHECKF(pid > 0, "shirod did not start (status %d); see %s/shirod.err",
	    st, home);
	return pid;
}

/* log_has - whether shirod's output in home holds text. */
static int
log_has(const char *home, const char *text)
{
	return tsd_file_has(home_file(home, "shirod.err"), text) == 1;
}

/* The workers of a STATUS document, as this test needs them. */
struct wk {
	char role[8];
	char state[16];
	pid_t pid;
	int64_t starts;
};

/* workers_of - the STATUS workers (at most max); their number. */
static int
workers_of(void *sock, struct wk *w, int max)
{
	struct msg *m = msg_new(MSG_STATUS), *r;
	const struct msg_val *doc, *ws, *it;
	int64_t v;
	int n = 0;
	size_t k;

	r = tsd_call(sock, m, 5000, NULL);
	msg_destroy(&m);
	if (r != NULL && msg_get_map(r, "doc", &doc) == 0 &&
	    (ws = msg_val_get(doc, "workers")) != NULL) {
		for (k = 0; k < ws->u.a.n && n < max; k++, n++) {
			it = ws->u.a.items[k];
			snprintf(w[n].role, sizeof(w[n].role), "%s",
			    msg_val_str(it, "role") ? msg_val_str(it, "role")
						    : "");
			snprintf(w[n].state, sizeof(w[n].state), "%s",
			    msg_val_str(it, "state") ? msg_val_str(it, "state")
						     : "");
			w[n].pid =
			    msg_val_int(it, "pid", &v) == 0 ? (pid_t)v : 0;
			w[n].starts =
			    msg_val_int(it, "starts", &v) == 0 ? v : 0;
		}
	}
	msg_destroy(&r);
	return n;
}

/* rogue_config - config.json with one rogue worker of provider "p"
 * (its key in HOME/key), mode written to HOME/rogue. */
static char *
rogue_config(const char *home, const char *mode)
{
	tsd_write(home, "rogue", mode);
	tsd_write(home, "key", "sk-test-key-0123456789");
	return xasprintf(
	    "{\"providers\": {\"p\": {\"type\": \"openai\", \"keyFile\": "
	    "\"%s/key\"}}, \"workers\": [{\"role\": \"model\", \"provider\": "
	    "\"p\", \"count\": 1, \"path\": \"%s\"}], \"heartbeat\": "
	    "{\"intervalMs\": 300}, \"restart\": {\"minMs\": 50, \"maxMs\": "
	    "200}}",
	    home, tsd_bin("tests/test_shirod_trust"));
}

/* stolen_cred - the credential the rogue left in HOME/stolen-p. */
static void
stolen_cred(const char *home, struct zsock_cred *c)
{
	char *t = wait_file(home_file(home, "stolen-p"), 10000);
	int fd;

	free(t);
	fd = open(home_file(home, "stolen-p"), O_RDONLY);
	CHECK(fd >= 0);
	CHECK(zsock_cred_read(fd, c) == 0);
	close(fd);
}

/* probe_ready - connect to endpoint (CURVE with c, if any) and send a
 * READY naming pid: the handshake's outcome (PROBE_*), having checked
 * that nothing came back. */
static int
probe_ready(const char *endpoint, const struct zsock_cred *c, pid_t pid)
{
	struct probe p;
	struct msg *m = tsd_ready("p", pid);
	int got;

	probe_open(&p, endpoint, c);
	probe_send(&p, &m);
	got = probe_wait(&p, 10000);
	probe_drain(&p);
	CHECKF(p.nrecv == 0, "%d messages came to the forger", p.nrecv);
	probe_close(&p);
	return got;
}

/*
 * A READY naming the live worker's pid, from a process without the
 * slot's key, gets nothing: without CURVE the handshake fails, with a
 * key of its own (and the real server key) the ZAP handler refuses it;
 * no SECRET reaches it, and the slot keeps its worker.
 */
static void
forged_ready_gets_nothing(void)
{
	const char *home = harness_tmpdir();
	char ep[PATH_MAX + 16], *cfg = rogue_config(home, "serve"), *got;
	struct zsock_cred stolen, mine;
	struct wk w[2];
	pid_t pid, wpid;
	void *sock;

	pid = start(home, cfg);
	free(cfg);
	got = wait_file(home_file(home, "got-secret-p"), 10000);
	CHECK_EQ_STR(got, "sk-test-key-0123456789");
	free(got);
	sock = tsd_connect(home);
	CHECK(workers_of(sock, w, 2) == 1);
	wpid = w[0].pid;
	snprintf(ep, sizeof(ep), "ipc://%s/run/workers.sock", home);
	/* No CURVE at all. */
	CHECK_EQ_INT(probe_ready(ep, NULL, wpid), PROBE_FAILED);
	/* CURVE with the server's public key (no secret: every worker has
	 * it) and a key pair of its own. */
	stolen_cred(home, &stolen);
	memcpy(mine.server, stolen.server, sizeof(mine.server));
	CHECK(zsock_keypair(&mine.own) == 0);
	CHECK_EQ_INT(probe_ready(ep, &mine, wpid), PROBE_REFUSED);
	/* The slot is as it was: same process, one start, ready. */
	CHECK(workers_of(sock, w, 2) == 1);
	CHECK_EQ_INT(w[0].pid, wpid);
	CHECK_EQ_INT(w[0].starts, 1);
	CHECK_EQ_STR(w[0].state, "idle");
	CHECK(tsd_status_int(sock, "auth.refused") >= 1);
	CHECK(log_has(home, "refused a connection to the workers' socket"));
	CHECK(kill(pid, 0) == 0);
	tsd_close(&sock);
	tsd_stop(pid);
}

/*
 * The slot's own key, stolen while its process lives, buys nothing: a
 * second connection with it is not served (its RESULT is dropped), its
 * READY is refused and the process it was stolen from is replaced
 * without a SECRET reaching the thief; from then on the key is refused
 * at the handshake.
 */
static void
stolen_key_dies_with_its_process(void)
{
	const char *home = harness_tmpdir();
	char ep[PATH_MAX + 16], *cfg = rogue_config(home, "serve"), *got;
	struct zsock_cred stolen;
	struct probe p;
	struct msg *m;
	struct wk w[2];
	uint64_t end;
	pid_t pid, wpid;
	void *sock;

	pid = start(home, cfg);
	free(cfg);
	got = wait_file(home_file(home, "got-secret-p"), 10000);
	free(got);
	stolen_cred(home, &stolen);
	sock = tsd_connect(home);
	CHECK(workers_of(sock, w, 2) == 1);
	wpid = w[0].pid;
	snprintf(ep, sizeof(ep), "ipc://%s/run/workers.sock", home);
	probe_open(&p, ep, &stolen);
	m = msg_new(MSG_RESULT);
	msg_set_int(m, "job", 1);
	msg_set_str(m, "text", "a forged result");
	probe_send(&p, &m);
	CHECK_EQ_INT(probe_wait(&p, 10000), PROBE_OK);
	m = tsd_ready("p", wpid);
	probe_send(&p, &m);
	/* The slot's process is replaced. */
	end = tsd_now_ms() + 15000;
	do {
		usleep(20000);
		CHECK(workers_of(sock, w, 2) == 1);
	} while (w[0].starts < 2 && tsd_now_ms() < end);
	CHECKF(w[0].starts >= 2, "the slot was not restarted");
	CHECK(w[0].pid != wpid);
	probe_drain(&p);
	CHECKF(!p.secret, "the thief got a SECRET");
	CHECK_EQ_INT(p.nrecv, 0);
	probe_close(&p);
	CHECK(log_has(home, "on another connection"));
	CHECK(log_has(home, "sent READY twice"));
	/* The key died with its process. */
	CHECK_EQ_INT(probe_ready(ep, &stolen, wpid), PROBE_REFUSED);
	CHECK(kill(pid, 0) == 0);
	CHECK_EQ_INT(tsd_status_int(sock, "messages"), 0);
	tsd_close(&sock);
	tsd_stop(pid);
}

/* attack_outcome - wait for home/attack-NAME; 1 if refused.  The
 * attacker's pid is killed if it still runs. */
static int
attack_outcome(const char *home, const char *name)
{
	char file[64], *t;
	int refused, apid = 0;

	snprintf(file, sizeof(file), "attack-%s", name);
	t = wait_file(home_file(home, file), 30000);
	refused = strncmp(t, "refused ", 8) == 0;
	if (sscanf(strchr(t, ' ') ? strchr(t, ' ') : "", " %d", &apid) == 1 &&
	    apid > 1)
		(void)kill(apid, SIGKILL);
	CHECKF(refused, "attack %s: %s", name, t);
	free(t);
	return refused;
}

/* no_marker - the chat does not hold the marker (LOG) and is empty. */
static void
no_marker(void *sock)
{
	struct msg *m = msg_new(MSG_LOG), *r;
	const struct msg_val *doc, *log;

	msg_set_int(m, "tail", 1000);
	r = tsd_call(sock, m, 5000, NULL);
	CHECK(r != NULL && msg_type(r) == MSG_REPLY);
	CHECK(msg_get_map(r, "doc", &doc) == 0);
	log = msg_val_get(doc, "log");
	CHECK(log != NULL && log->u.a.n == 0);
	msg_destroy(&r);
	msg_destroy(&m);
}

/*
 * A worker is not a client: a worker process, its child and its
 * grandchild left to another parent are each refused at the client
 * socket's handshake (no HELLO, SEND, LOG or STOP of theirs is served),
 * while the user's own client is, and may STOP.
 */
static void
worker_pids_cannot_be_clients(void)
{
	const char *home = harness_tmpdir();
	char *cfg = rogue_config(home, "client");
	void *sock;
	pid_t pid;
	int st, k;

	pid = start(home, cfg);
	free(cfg);
	CHECK(attack_outcome(home, "worker"));
	CHECK(attack_outcome(home, "child"));
	CHECK(attack_outcome(home, "orphan"));
	sock = tsd_connect(home);
	CHECK(kill(pid, 0) == 0);
	no_marker(sock);
	CHECK(tsd_status_int(sock, "auth.refused") >= 3);
	CHECK(log_has(home, "refused a connection to the clients' socket"));
	CHECK(tsd_hello(sock) == 0);
	CHECK(tsd_ask_stop(sock) == MSG_REPLY);
	for (k = 0; k < 1000 && waitpid(pid, &st, WNOHANG) != pid; k++)
		usleep(10000);
	CHECKF(k < 1000, "shirod did not stop");
	tsd_close(&sock);
}

/* become_nobody - this process runs as NOBODY from now on, keeping only
 * the capability to pass file permissions (to reach the socket in a
 * directory of mode 0700, as a process of another user whose files
 * allowed it would).  0, or -1. */
static int
become_nobody(int keep_dac)
{
	struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct d[2];

	if (keep_dac && prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) != 0)
		return -1;
	if (setgroups(0, NULL) != 0 || setresgid(NOBODY, NOBODY, NOBODY) != 0 ||
	    setresuid(NOBODY, NOBODY, NOBODY) != 0)
		return -1;
	if (!keep_dac)
		return 0;
	memset(d, 0, sizeof(d));
	d[0].effective = d[0].permitted =
	    (1u << CAP_DAC_OVERRIDE) | (1u << CAP_DAC_READ_SEARCH);
	return (int)syscall(SYS_capset, &h, d);
}

/*
 * A process of another uid is refused at the client socket's handshake,
 * even one that got past the run directory's permissions, and the log
 * says which uid it was.
 */
static void
another_uid_cannot_be_a_client(void)
{
	const char *home = harness_tmpdir();
	char go;
	void *sock;
	pid_t pid, attacker;
	int fds[2], st;

	if (geteuid() != 0)
		harness_skip("needs root to make a process of another uid");
	/* Forked before this process has any ZeroMQ context. */
	CHECK(pipe(fds) == 0);
	attacker = fork();
	CHECK(attacker >= 0);
	if (attacker == 0) {
		close(fds[1]);
		if (read(fds[0], &go, 1) != 1 || become_nobody(1) != 0)
			_exit(1);
		attack_client(home, "uid");
		_exit(0);
	}
	close(fds[0]);
	pid = start(home, "{\"workers\": []}");
	CHECK(write(fds[1], "g", 1) == 1);
	close(fds[1]);
	CHECK(attack_outcome(home, "uid"));
	CHECK(waitpid(attacker, &st, 0) == attacker);
	CHECKF(
	    WIFEXITED(st) && WEXITSTATUS(st) == 0, "attacker status %#x", st);
	CHECK(log_has(home, "runs as uid 65534"));
	sock = tsd_connect(home);
	no_marker(sock);
	tsd_close(&sock);
	CHECK(kill(pid, 0) == 0);
	tsd_stop(pid);
}

/* proc_file_has_secret - whether /proc/PID/what holds one of the first
 * n of secrets[] (-1 when it cannot be read). */
static int
proc_file_has_secret(pid_t pid, const char *what, size_t n)
{
	char path[64];
	size_t k;
	int r;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, what);
	for (k = 0; k < n; k++) {
		r = tsd_file_has(path, secrets[k]);
		if (r != 0)
			return r;
	}
	return 0;
}

/* read_environ - /proc/PID/environ as a NULL-terminated envp
 * (malloc'd strings). */
static char **
read_environ(pid_t pid)
{
	char path[64], chunk[4096];
	struct buf b = BUF_INIT;
	char **envp;
	size_t n = 0, k, cap = 8;
	ssize_t r;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
	fd = open(path, O_RDONLY);
	CHECK(fd >= 0);
	while ((r = read(fd, chunk, sizeof(chunk))) > 0)
		buf_add(&b, chunk, (size_t)r);
	close(fd);
	for (k = 0; k < b.len; k++)
		cap += b.data[k] == '\0';
	envp = xcalloc(cap, sizeof(*envp));
	for (k = 0; k < b.len; k += strlen(b.data + k) + 1)
		if (b.data[k] != '\0' && n + 1 < cap)
			envp[n++] = xstrdup(b.data + k);
	buf_free(&b);
	return envp;
}

/* jailed_env - the output of `env` run by shiro-tool-worker --once in a
 * jail, with environment envp; NULL if the jail cannot run here. */
static char *
jailed_env(char **envp, const char *ws)
{
	const char *bin = tsd_bin("shiro-tool-worker");
	char out[PATH_MAX + 16], *text;
	pid_t pid;
	int fd, st;

	snprintf(out, sizeof(out), "%s/jailed-env", ws);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (fd < 0 || dup2(fd, 1) < 0)
			_exit(99);
		execle(bin, bin, "--once", "bash", "{\"command\": \"env\"}",
		    "--workspace", ws, (char *)NULL, envp);
		_exit(98);
	}
	CHECK(waitpid(pid, &st, 0) == pid);
	text = tsd_read_file(out);
	if (text == NULL || strstr(text, "SHIRO_JAIL=1") == NULL) {
		free(text);
		return NULL;
	}
	return text;
}

/*
 * No key shirod holds is in any worker's environment or command line
 * (keyEnv, keyFile, and the provider variables of shirod's own
 * environment), nor in shirod's environment after start, nor in a
 * jailed command's environment; the model workers got theirs over the
 * socket.
 */
static void
no_secret_in_any_environment(void)
{
	const char *home = harness_tmpdir();
	char *cfg, *got, ws[PATH_MAX];
	struct wk w[8];
	uint64_t end;
	void *sock;
	pid_t pid;
	int n, k, ready;
	char **envp;

	if (access(tsd_bin("shiro-model-worker"), X_OK) != 0 ||
	    access(tsd_bin("shiro-tool-worker"), X_OK) != 0 ||
	    access(tsd_bin("shiro-fs-worker"), X_OK) != 0)
		harness_skip("the worker programs are not built");
	tsd_write(home, "rogue", "serve");
	tsd_write(home, "keyfile", secrets[1]);
	snprintf(ws, sizeof(ws), "%s/ws", home);
	CHECK(mkdir(ws, 0700) == 0);
	setenv("SHIRO_TEST_KEY", secrets[0], 1);
	setenv("ANTHROPIC_API_KEY", secrets[2], 1);
	setenv("OPENAI_API_KEY", secrets[3], 1);
	setenv("SHIRO_API_KEY", secrets[4], 1);
	setenv("GITHUB_TOKEN", secrets[5], 1);
	cfg = xasprintf(
	    "{\"providers\": {\"pe\": {\"type\": \"openai\", \"keyEnv\": "
	    "\"SHIRO_TEST_KEY\"}, \"pf\": {\"type\": \"anthropic\", "
	    "\"keyFile\": \"%s/keyfile\"}}, \"workers\": [{\"role\": "
	    "\"model\", \"provider\": \"pe\", \"path\": \"%s\"}, {\"role\": "
	    "\"model\", \"provider\": \"pf\", \"path\": \"%s\"}, {\"role\": "
	    "\"model\"}, {\"role\": \"tool\"}, {\"role\": \"fs\"}]}",
	    home, tsd_bin("tests/test_shirod_trust"),
	    tsd_bin("tests/test_shirod_trust"));
	pid = start(home, cfg);
	free(cfg);
	got = wait_file(home_file(home, "got-secret-pe"), 10000);
	CHECK_EQ_STR(got, secrets[0]);
	free(got);
	got = wait_file(home_file(home, "got-secret-pf"), 10000);
	CHECK_EQ_STR(got, secrets[1]);
	free(got);
	sock = tsd_connect(home);
	end = tsd_now_ms() + 20000;
	do {
		n = workers_of(sock, w, 8);
		for (k = 0, ready = 0; k < n; k++)
			ready += strcmp(w[k].state, "idle") == 0;
		if (ready < 5)
			usleep(50000);
	} while (ready < 5 && tsd_now_ms() < end);
	CHECKF(n == 5 && ready == 5, "%d of %d workers ready", ready, n);
	for (k = 0; k < n; k++) {
		CHECKF(proc_file_has_secret(w[k].pid, "environ", NSECRETS) == 0,
		    "a secret in the %s worker's environment", w[k].role);
		CHECKF(proc_file_has_secret(w[k].pid, "cmdline", NSECRETS) == 0,
		    "a secret in the %s worker's command line", w[k].role);
	}
	CHECKF(proc_file_has_secret(pid, "environ", NKEYS) == 0,
	    "a key in /proc/<shirod>/environ");
	/* Nor is a worker's own CURVE secret key anywhere but its fd. */
	{
		struct zsock_cred c;
		char path[64];
		int fd = open(home_file(home, "stolen-pe"), O_RDONLY);

		CHECK(fd >= 0 && zsock_cred_read(fd, &c) == 0);
		close(fd);
		for (k = 0; k < n; k++) {
			snprintf(path, sizeof(path), "/proc/%d/cmdline",
			    (int)w[k].pid);
			CHECK(tsd_file_has(path, c.own.sec) == 0);
			snprintf(path, sizeof(path), "/proc/%d/environ",
			    (int)w[k].pid);
			CHECK(tsd_file_has(path, c.own.sec) == 0);
		}
	}
	CHECKF(proc_file_has_secret(pid, "environ", NSECRETS) == 1,
	    "the unknown token is not where the test put it");
	/* A jailed command of the tool worker: run with exactly the tool
	 * worker's environment, it sees none of the keys either. */
	for (k = 0; k < n && strcmp(w[k].role, "tool") != 0; k++)
		;
	CHECK(k < n);
	envp = read_environ(w[k].pid);
	got = jailed_env(envp, ws);
	for (k = 0; envp[k] != NULL; k++)
		free(envp[k]);
	free(envp);
	if (got != NULL) {
		for (k = 0; k < (int)NSECRETS; k++)
			CHECKF(strstr(got, secrets[k]) == NULL,
			    "a key in a jailed command's environment");
		free(got);
	}
	tsd_close(&sock);
	tsd_stop(pid);
	if (got == NULL)
		harness_skip("the tool jail cannot run here; the workers' "
			     "environments were checked");
}

/* can_read - whether this process may open path for reading. */
static int
can_read(const char *path)
{
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return 0;
	close(fd);
	return 1;
}

/*
 * A process of shirod's own user can neither read shirod's environment
 * or memory through /proc nor attach to it with ptrace (shirod is not
 * dumpable), while it can read those of another process of that user.
 */
static void
shirod_memory_is_closed_to_its_user(void)
{
	const char *dir = harness_tmpdir();
	char home[PATH_MAX], path[64], errpath[PATH_MAX + 16];
	const char *argv[4];
	pid_t pid, other, attacker;
	int st, fd, k, fds[2];

	if (geteuid() != 0)
		harness_skip("needs root to run shirod as another uid");
	CHECK(chmod(dir, 0711) == 0);
	snprintf(home, sizeof(home), "%s/home", dir);
	CHECK(mkdir(home, 0700) == 0);
	CHECK(chown(home, NOBODY, NOBODY) == 0);
	tsd_write(home, "config.json", "{\"workers\": []}");
	CHECK(chown(home_file(home, "config.json"), NOBODY, NOBODY) == 0);
	snprintf(errpath, sizeof(errpath), "%s/shirod.err", home);
	argv[0] = tsd_bin("shirod");
	argv[1] = "--home";
	argv[2] = home;
	argv[3] = NULL;
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		fd = open(errpath, O_WRONLY | O_CREAT | O_APPEND, 0600);
		if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0 ||
		    fchown(fd, NOBODY, NOBODY) != 0 || become_nobody(0) != 0)
			_exit(126);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	/* Bound: past start-up, where it stops being dumpable.  (This
	 * root test is not its user's client: it cannot ask STATUS.) */
	for (k = 0; k < 500; k++) {
		if (access(home_file(home, "run/shirod.sock"), F_OK) == 0)
			break;
		CHECK(waitpid(pid, &st, WNOHANG) == 0);
		usleep(20000);
	}
	CHECKF(
	    k < 500, "shirod as uid %d did not serve; see %s", NOBODY, errpath);
	/* Another process of that user, dumpable, for comparison. */
	other = fork();
	CHECK(other >= 0);
	if (other == 0) {
		if (become_nobody(0) != 0)
			_exit(1);
		execl("/bin/sleep", "sleep", "30", (char *)NULL);
		_exit(127);
	}
	CHECK(pipe(fds) == 0);
	attacker = fork();
	CHECK(attacker >= 0);
	if (attacker == 0) {
		char res[4] = "---";

		close(fds[0]);
		if (become_nobody(0) != 0)
			_exit(1);
		snprintf(path, sizeof(path), "/proc/%d/environ", (int)other);
		for (k = 0; k < 200 && !can_read(path); k++)
			usleep(10000); /* until it runs as nobody */
		res[0] = can_read(path) ? 'y' : 'n';
		snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
		res[1] = can_read(path) ? 'y' : 'n';
		snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
		res[2] = can_read(path) ? 'y' : 'n';
		res[3] =
		    ptrace(PTRACE_ATTACH, pid, NULL, NULL) == 0 ? 'y' : 'n';
		(void)!write(fds[1], res, 4);
		_exit(0);
	}
	close(fds[1]);
	{
		char res[5] = {0};

		CHECK(read(fds[0], res, 4) == 4);
		close(fds[0]);
		CHECK(waitpid(attacker, &st, 0) == attacker);
		kill(other, SIGKILL);
		CHECK(waitpid(other, &st, 0) == other);
		CHECKF(res[0] == 'y', "the control process's environ: %s", res);
		CHECKF(res[1] == 'n', "shirod's environ was readable: %s", res);
		CHECKF(res[2] == 'n', "shirod's mem was readable: %s", res);
		CHECKF(res[3] == 'n', "ptrace attached to shirod: %s", res);
	}
	CHECK(kill(pid, 0) == 0);
	tsd_stop(pid);
}

static const struct harness_test tests[] = {
    HT_SLOW(forged_ready_gets_nothing, 60),
    HT_SLOW(stolen_key_dies_with_its_process, 60),
    HT_SLOW(worker_pids_cannot_be_clients, 90),
    HT_SLOW(another_uid_cannot_be_a_client, 60),
    HT_SLOW(no_secret_in_any_environment, 90),
    HT_SLOW(shirod_memory_is_closed_to_its_user, 60),
};

int
main(int argc, char **argv)
{
	/* Run by shirod as a worker. */
	if (argc > 2 && strcmp(argv[1], "--endpoint") == 0)
		return rogue_main(argc, argv);
	return harness_main(
	    tests, sizeof(tests) / sizeof(tests[0]), argc, argv);
}
