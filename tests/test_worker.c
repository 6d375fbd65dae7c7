/*
 * test_worker - the worker skeleton and the model worker, as real
 * processes.  The test plays the broker: it binds a ROUTER in a temporary
 * directory, starts build/shiro-model-worker or build/tests/
 * worker_testrole against it, and checks what crosses the socket and how
 * the process exits.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include "proto/err.h"
#include "proto/msg.h"
#include "proto/utf8.h"
#include "proto/zsock.h"
#include "tests/harness.h"
#include "tests/worker_util.h"
#include "workers/worker.h"

/* job - a JOB of kind with data.text = text (or none). */
static struct msg *
job(uint64_t id, const char *kind, const char *text)
{
	struct msg *m = msg_new(MSG_JOB);

	msg_set_int(m, "job", (int64_t)id);
	msg_set_str(m, "kind", kind);
	if (text != NULL)
		msg_val_set_str(msg_set_map(m, "data"), "text", text);
	return m;
}

/* compact - a compact JOB for node (l, i) with its inputs. */
static struct msg *
compact(uint64_t id, uint64_t l, const char *kind, const char *a, const char *b)
{
	struct msg *m = msg_new(MSG_JOB);
	struct msg_val *in, *x;

	msg_set_int(m, "job", (int64_t)id);
	msg_set_str(m, "kind", "compact");
	msg_set_int(m, "l", (int64_t)l);
	msg_set_int(m, "i", 0);
	msg_set_int(m, "limit", 512);
	msg_val_add_str(msg_set_arr(m, "context"), "0+1|user: before");
	in = msg_set_arr(m, "inputs");
	x = msg_val_add_map(in);
	msg_val_set_int(x, "id", 0);
	msg_val_set_int(x, "n", l == 0 ? 1 : 1 << (l - 1));
	if (kind != NULL)
		msg_val_set_str(x, "kind", kind);
	msg_val_set_str(x, "text", a);
	if (b != NULL) {
		x = msg_val_add_map(in);
		msg_val_set_int(x, "id", 1 << (l - 1));
		msg_val_set_int(x, "n", 1 << (l - 1));
		msg_val_set_str(x, "text", b);
	}
	return m;
}

/* answer - key of the next want (RESULT or FAIL) for job id, copied. */
static char *
answer(struct tw *t, enum msg_type want, uint64_t id, const char *key)
{
	/* A bound for a loaded machine: answers come in milliseconds. */
	struct msg *m = tw_recv(t, want, 10000);
	const char *s;
	uint64_t got;
	char *copy;

	CHECK(msg_get_uint(m, "job", &got) == 0);
	CHECK_EQ_INT(got, id);
	CHECK(msg_get_str(m, key, &s, NULL) == 0);
	copy = strdup(s);
	msg_destroy(&m);
	return copy;
}

/* The model worker says READY, builds nodes, refuses bad jobs, and stops. */
static void
model_worker_compacts(void)
{
	struct tw t = {0};
	struct msg *m;
	const char *s;
	uint64_t u;
	char *text;
	char big[3000];

	tw_start(&t, "../shiro-model-worker", 200, 5000, NULL, NULL);
	m = tw_recv(&t, MSG_READY, 5000);
	CHECK(msg_get_str(m, "role", &s, NULL) == 0);
	CHECK_EQ_STR(s, "model");
	CHECK(msg_get_str(m, "provider", &s, NULL) == 0);
	CHECK_EQ_STR(s, "offline");
	CHECK(msg_get_uint(m, "pid", &u) == 0 && u == (uint64_t)t.pid);
	CHECK(msg_get_uint(m, "jobs", &u) == 0 && u == 4);
	CHECK(msg_get_uint(m, "version", &u) == 0 && u == MSG_VERSION);
	msg_destroy(&m);

	tw_send(&t, compact(1, 0, "user", "please fix src/a.c", NULL));
	text = answer(&t, MSG_RESULT, 1, "text");
	CHECK_EQ_STR(text, "user: please fix src/a.c");
	free(text);

	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	memcpy(big + 100, " error in src/b.c line 42 ", 26);
	tw_send(&t, compact(2, 0, "tool", big, NULL));
	text = answer(&t, MSG_RESULT, 2, "text");
	CHECK(strlen(text) <= 512 && strncmp(text, "tool: ", 6) == 0);
	CHECK(strstr(text, "src/b.c") != NULL && strstr(text, "42") != NULL);
	free(text);

	tw_send(
	    &t, compact(3, 1, NULL, "user: asks for a fix", "shiro: fixed"));
	text = answer(&t, MSG_RESULT, 3, "text");
	CHECK_EQ_STR(text, "user+shiro: asks for a fix / fixed");
	free(text);

	/* A merge with one input, and a kind it does not do. */
	tw_send(&t, compact(4, 1, NULL, "user: alone", NULL));
	text = answer(&t, MSG_FAIL, 4, "code");
	CHECK_EQ_STR(text, "badjob");
	free(text);
	tw_send(&t, job(5, "turn", NULL));
	text = answer(&t, MSG_FAIL, 5, "code");
	CHECK_EQ_STR(text, "badjob");
	free(text);

	tw_send(&t, msg_new(MSG_SHUTDOWN));
	m = tw_recv(&t, MSG_BYE, 3000);
	msg_destroy(&m);
	CHECK_EQ_INT(tw_exit(&t, 3000), WORKER_EXIT_OK);
	tw_stop(&t);
}

/* Heartbeats come every interval, and the worker stays while we answer. */
static void
heartbeats_flow(void)
{
	struct tw t = {0};
	struct msg *m;
	long long end;
	int beats = 0;

	tw_start(&t, "worker_testrole", 100, 5000, NULL, NULL);
	tw_drop(tw_recv(&t, MSG_READY, 5000));
	end = zsock_now_ms() + 1000;
	while (zsock_now_ms() < end) {
		m = tw_recv(&t, MSG_HEARTBEAT, 500);
		msg_destroy(&m);
		beats++;
		tw_send(&t, msg_new(MSG_HEARTBEAT));
	}
	CHECKF(beats >= 7 && beats <= 14, "%d heartbeats in 1 s", beats);
	CHECK_EQ_INT(tw_exit(&t, 0), -1);
	tw_stop(&t);
}

/*
 * A silent broker makes the worker reconnect (a new READY), and when it
 * stays silent the worker gives up with WORKER_EXIT_GONE.
 */
static void
silent_broker_reconnect_then_give_up(void)
{
	struct tw t = {0};
	struct msg *m;
	struct msg_ident first;
	long long start;

	tw_start(&t, "worker_testrole", 100, 1500, NULL, NULL);
	tw_drop(tw_recv(&t, MSG_READY, 5000));
	first = t.id;
	start = zsock_now_ms();
	m = tw_recv(&t, MSG_READY, 2000);
	msg_destroy(&m);
	/* 3 heartbeats of 100 ms missed: about 300 ms, on a new socket. */
	CHECKF(zsock_now_ms() - start >= 250, "reconnected too early");
	CHECK(t.id.len != first.len ||
	    memcmp(t.id.data, first.data, first.len) != 0);
	CHECK_EQ_INT(tw_exit(&t, 4000), WORKER_EXIT_GONE);
	tw_stop(&t);
}

/* same_ident - whether a and b are the same ZeroMQ identity. */
static bool
same_ident(const struct msg_ident *a, const struct msg_ident *b)
{
	return a->len == b->len && memcmp(a->data, b->data, a->len) == 0;
}

/*
 * The model worker is locked down once READY arrives (seccomp filter,
 * no_new_privs, no capability), and keeps its one connection: a broker
 * silent for longer than 3 heartbeats gets neither a new connection nor
 * a second READY, and is still served on the old one.  A broker that
 * closes its socket and binds a new one is never reached again (the
 * worker can make no Unix socket), and the worker, whose ZeroMQ keeps
 * failing to make one, neither aborts nor hangs: it gives up after
 * --give-up-ms.
 */
static void
model_worker_keeps_its_connection(void)
{
	struct zsock_poll it = {NULL, -1, ZSOCK_IN, 0};
	struct tw t = {0};
	struct msg_ident first, from;
	struct msg *m;
	long long end;
	int beats = 0, st = -1;
	char *text;

	tw_start(&t, "../shiro-model-worker", 100, 2000, NULL, NULL);
	tw_drop(tw_recv(&t, MSG_READY, 5000));
	first = t.id;
	CHECK(tw_status_has(&t, "Seccomp:\t2"));
	CHECK(tw_status_has(&t, "NoNewPrivs:\t1"));
	CHECK(tw_status_has(&t, "CapEff:\t0000000000000000"));
	if (geteuid() == 0)
		CHECK(tw_status_has(&t, "CapBnd:\t0000000000000000"));
	/* 6 heartbeats of silence: heartbeats on the first connection. */
	it.sock = t.router;
	end = zsock_now_ms() + 600;
	while (zsock_now_ms() < end) {
		if (zsock_poll(&it, 1, (long)(end - zsock_now_ms())) <= 0)
			continue;
		while (msg_recv(t.router, &m, &from) == 0) {
			CHECKF(msg_type(m) == MSG_HEARTBEAT,
			    "%s during the silence",
			    msg_type_name(msg_type(m)));
			CHECK(same_ident(&from, &first));
			beats++;
			msg_destroy(&m);
		}
	}
	CHECK(beats >= 3);
	tw_send(&t, compact(1, 0, "user", "still here", NULL));
	text = answer(&t, MSG_RESULT, 1, "text");
	CHECK_EQ_STR(text, "user: still here");
	CHECK(same_ident(&t.id, &first));
	free(text);
	/* A new socket on the same path: nothing ever reaches it. */
	zsock_close(&t.router);
	CHECK(zsock_router(t.endpoint, NULL, &t.router) == 0);
	it.sock = t.router;
	end = zsock_now_ms() + 10000;
	while (zsock_now_ms() < end && st < 0) {
		if (zsock_poll(&it, 1, 50) > 0 &&
		    msg_recv(t.router, &m, &from) == 0) {
			msg_destroy(&m);
			harness_fail(__FILE__, __LINE__,
			    "the locked-down worker reconnected");
		}
		st = tw_exit(&t, 1);
	}
	CHECK_EQ_INT(st, WORKER_EXIT_GONE);
	tw_stop(&t);
}

/* raw_to - send raw frames to the worker's identity. */
static void
raw_to(struct tw *t, const char *const *frames, const size_t *lens, int n)
{
	int k;

	CHECK(zmq_send(t->router, t->id.data, t->id.len, ZMQ_SNDMORE) >= 0);
	for (k = 0; k < n; k++)
		CHECK(zmq_send(t->router, frames[k], lens[k],
			  k + 1 < n ? ZMQ_SNDMORE : 0) >= 0);
}

/* A malformed frame from the broker makes the worker exit (STYLE.md). */
static void
malformed_input_exits(void)
{
	static const char *const bad[] = {MSG_HEADER, "\x21", "\x81\xa1x\x01"};
	static const size_t lens[] = {7, 1, 4};
	struct tw t = {0};

	tw_start(&t, "worker_testrole", 200, 5000, NULL, NULL);
	tw_drop(tw_recv(&t, MSG_READY, 5000));
	raw_to(&t, bad, lens, 3); /* HEARTBEAT with an unknown key */
	CHECK_EQ_INT(tw_exit(&t, 3000), WORKER_EXIT_PROTO);
	tw_stop(&t);
}

/* A type the broker may not send to a worker makes it exit too. */
static void
forbidden_type_exits(void)
{
	struct tw t = {0};
	struct msg *m;

	tw_start(&t, "worker_testrole", 200, 5000, NULL, NULL);
	m = tw_recv(&t, MSG_READY, 5000);
	tw_send(&t, m); /* READY back to it */
	CHECK_EQ_INT(tw_exit(&t, 3000), WORKER_EXIT_PROTO);
	tw_stop(&t);
}

/*
 * CANCEL interrupts a long job (FAIL canceled, quickly); a JOB sent while
 * it runs is refused as busy; then the worker takes the next job.
 */
static void
cancel_interrupts_a_job(void)
{
	struct tw t = {0};
	struct msg *m;
	long long start;
	char *s;

	/* The test broker heartbeats as shirod does, every second: a
	 * worker that heard nothing for 3 heartbeats abandons its job to
	 * reconnect, which a loaded machine made this test see with 200 ms
	 * heartbeats (600 ms of the test not being scheduled); now it
	 * takes 2 s of that. */
	t.beat = true;
	tw_start(&t, "worker_testrole", 1000, 20000, NULL, NULL);
	tw_drop(tw_recv(&t, MSG_READY, 5000));
	tw_send(&t, job(7, "slow", NULL));
	tw_send(&t, job(8, "echo", "x"));
	s = answer(&t, MSG_FAIL, 8, "code");
	CHECK_EQ_STR(s, "busy");
	free(s);
	m = msg_new(MSG_CANCEL);
	msg_set_int(m, "job", 7);
	start = zsock_now_ms();
	tw_send(&t, m);
	s = answer(&t, MSG_FAIL, 7, "code");
	CHECK_EQ_STR(s, "canceled");
	free(s);
	/* The slow job runs 20 s: a FAIL well before that is the cancel's,
	 * with room for a loaded machine. */
	CHECKF(zsock_now_ms() - start < 5000, "cancel took %lld ms",
	    zsock_now_ms() - start);
	tw_send(&t, job(9, "echo", "after"));
	s = answer(&t, MSG_RESULT, 9, "text");
	CHECK_EQ_STR(s, "after");
	free(s);
	tw_stop(&t);
}

/*
 * A CANCEL right behind its JOB is often read in the same round, before
 * the job started: the job never runs and FAIL canceled comes at once
 * (it used to be ignored, and the job ran its 20 s).
 */
static void
cancel_right_behind_its_job(void)
{
	struct tw t = {0};
	struct msg *m;
	char *s;
	int k;

	t.beat = true;
	tw_start(&t, "worker_testrole", 1000, 20000, NULL, NULL);
	tw_drop(tw_recv(&t, MSG_READY, 5000));
	for (k = 0; k < 5; k++) {
		tw_send(&t, job(20 + (uint64_t)k, "slow", NULL));
		m = msg_new(MSG_CANCEL);
		msg_set_int(m, "job", 20 + k);
		tw_send(&t, m);
		s = answer(&t, MSG_FAIL, 20 + (uint64_t)k, "code");
		CHECK_EQ_STR(s, "canceled");
		free(s);
	}
	tw_send(&t, job(30, "echo", "after"));
	s = answer(&t, MSG_RESULT, 30, "text");
	CHECK_EQ_STR(s, "after");
	free(s);
	tw_stop(&t);
}

/* CHUNKs arrive in order before the RESULT; a failure says why. */
static void
chunks_then_result_and_failures(void)
{
	struct tw t = {0};
	struct msg *m;
	const char *s;
	char got[8] = "";
	bool retry;

	tw_start(&t, "worker_testrole", 200, 5000, NULL, NULL);
	tw_drop(tw_recv(&t, MSG_READY, 5000));
	tw_send(&t, job(3, "chunks", NULL));
	while (strlen(got) < 3) {
		m = tw_recv(&t, MSG_CHUNK, 3000);
		CHECK(msg_get_str(m, "text", &s, NULL) == 0);
		strncat(got, s, 1);
		msg_destroy(&m);
	}
	CHECK_EQ_STR(got, "abc");
	free(answer(&t, MSG_RESULT, 3, "text"));
	tw_send(&t, job(4, "fail", "now"));
	m = tw_recv(&t, MSG_FAIL, 3000);
	CHECK(msg_get_str(m, "code", &s, NULL) == 0);
	CHECK_EQ_STR(s, "provider");
	CHECK(msg_get_str(m, "text", &s, NULL) == 0);
	CHECK_EQ_STR(s, "asked to fail: now");
	CHECK(msg_get_bool(m, "retry", &retry) == 0 && retry);
	msg_destroy(&m);
	tw_stop(&t);
}

/* The secret comes over fd 3, and a SECRET message replaces it. */
static void
secret_over_fd_and_socket(void)
{
	struct tw t = {0};
	struct msg *m;
	char *s;

	tw_start(&t, "worker_testrole", 200, 5000, "sk-fd-secret", NULL);
	tw_drop(tw_recv(&t, MSG_READY, 5000));
	tw_send(&t, job(1, "secret", NULL));
	s = answer(&t, MSG_RESULT, 1, "text");
	CHECK_EQ_STR(s, "sk-fd-secret");
	free(s);
	m = msg_new(MSG_SECRET);
	msg_set_str(m, "provider", "test");
	msg_set_bin(m, "key", "sk-socket", 9);
	tw_send(&t, m);
	m = msg_new(MSG_SECRET);
	msg_set_str(m, "provider", "other"); /* not ours: ignored */
	msg_set_bin(m, "key", "sk-wrong", 8);
	tw_send(&t, m);
	tw_send(&t, job(2, "secret", NULL));
	s = answer(&t, MSG_RESULT, 2, "text");
	CHECK_EQ_STR(s, "sk-socket");
	free(s);
	tw_stop(&t);
}

/* SIGTERM ends a worker cleanly; a bad option is a usage error. */
static void
signals_and_usage(void)
{
	struct tw t = {0};
	char path[PATH_MAX];
	int status;
	pid_t pid;

	tw_start(&t, "worker_testrole", 200, 5000, NULL, NULL);
	tw_drop(tw_recv(&t, MSG_READY, 5000));
	kill(t.pid, SIGTERM);
	CHECK_EQ_INT(tw_exit(&t, 3000), WORKER_EXIT_OK);
	tw_stop(&t);

	tw_bin("../shiro-model-worker", path, sizeof(path));
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, 2);
		execl(path, path, "--heartbeat-ms", "zero", (char *)NULL);
		_exit(127);
	}
	CHECK(waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == WORKER_EXIT_USAGE);
}

/* cred_worker - start shiro-model-worker against a CURVE ROUTER at
 * t->endpoint with text (a credential, or anything) on its fd 3. */
static void
cred_worker(struct tw *t, const char *text, size_t len)
{
	char path[PATH_MAX];
	int fds[2];

	tw_bin("../shiro-model-worker", path, sizeof(path));
	CHECK(pipe(fds) == 0);
	CHECK(write(fds[1], text, len) == (ssize_t)len);
	close(fds[1]);
	t->pid = fork();
	CHECK(t->pid >= 0);
	if (t->pid == 0) {
		dup2(fds[0], 3);
		execl(path, path, "--endpoint", t->endpoint, "--heartbeat-ms",
		    "200", "--give-up-ms", "5000", "--cred-fd", "3",
		    (char *)NULL);
		_exit(127);
	}
	close(fds[0]);
}

/*
 * With --cred-fd the worker reads the credential shirod wrote there and
 * speaks CURVE with it: a ROUTER that admits only that key (with its
 * ZAP handler) gets its READY, marked with the User-Id it admitted it
 * as.  A worker given anything but a credential exits with status 1.
 */
static void
credential_fd_gives_curve(void)
{
	struct zsock_keypair server;
	struct zsock_cred cred;
	struct zsock_opts ro = {0};
	struct zsock_zap_req req;
	struct zsock_poll it[2];
	struct msg_user user = {0};
	struct msg_ident from;
	struct msg *m = NULL;
	unsigned char allow[ZSOCK_KEY_BIN];
	char text[512], *p;
	void *zap;
	struct tw t = {0};
	long long end;
	int fds[2], fd;

	CHECK(zsock_keypair(&server) == 0);
	memcpy(cred.server, server.pub, sizeof(cred.server));
	CHECK(zsock_keypair(&cred.own) == 0);
	CHECK(zsock_key_decode(cred.own.pub, allow) == 0);
	CHECK(pipe(fds) == 0);
	CHECK(zsock_cred_write(fds[1], &cred) == 0);
	close(fds[1]);
	fd = (int)read(fds[0], text, sizeof(text) - 1);
	close(fds[0]);
	CHECK(fd > 0);
	text[fd] = '\0';
	CHECK(zsock_zap_open(&zap) == 0);
	snprintf(t.endpoint, sizeof(t.endpoint), "ipc://%s/w.sock",
	    harness_tmpdir());
	ro.zap_domain = "workers";
	ro.curve_secret = server.sec;
	CHECK(zsock_router(t.endpoint, &ro, &t.router) == 0);
	cred_worker(&t, text, strlen(text));
	end = zsock_now_ms() + 10000;
	while (m == NULL && zsock_now_ms() < end) {
		it[0] = (struct zsock_poll){zap, -1, ZSOCK_IN, 0};
		it[1] = (struct zsock_poll){t.router, -1, ZSOCK_IN, 0};
		(void)zsock_poll(it, 2, 200);
		while (zsock_zap_recv(zap, &req) == 0) {
			int ok = req.has_key &&
			    memcmp(req.key, allow, sizeof(allow)) == 0;

			CHECK(zsock_zap_reply(zap, &req, ok ? 200 : 400,
				  ok ? "OK" : "no", ok ? "w0.1" : "") == 0);
		}
		if (msg_recv_user(t.router, &m, &from, &user) != 0)
			m = NULL;
	}
	CHECKF(m != NULL && msg_type(m) == MSG_READY, "no READY");
	CHECK_EQ_STR(user.id, "w0.1");
	msg_destroy(&m);
	kill(t.pid, SIGKILL);
	waitpid(t.pid, NULL, 0);
	/* A damaged credential: one character of the secret key changed. */
	p = strstr(text, "secret ");
	CHECK(p != NULL);
	p[7] = p[7] == 'a' ? 'b' : 'a';
	cred_worker(&t, text, strlen(text));
	CHECK_EQ_INT(tw_exit(&t, 5000), WORKER_EXIT_FATAL);
	cred_worker(&t, "not a credential\n", 17);
	CHECK_EQ_INT(tw_exit(&t, 5000), WORKER_EXIT_FATAL);
	zsock_close(&t.router);
	zsock_close(&zap);
	zsock_term();
}

/* A worker whose broker never answers the handshake gives up: at most
 * 10 s, or --give-up-ms when shorter, and exits WORKER_EXIT_GONE without
 * ever locking down on a connection it does not have. */
static void
no_handshake_no_start(void)
{
	char path[PATH_MAX], ep[PATH_MAX + 16];
	int st;
	pid_t pid;

	tw_bin("../shiro-model-worker", path, sizeof(path));
	snprintf(ep, sizeof(ep), "ipc://%s/nobody.sock", harness_tmpdir());
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		execl(path, path, "--endpoint", ep, "--give-up-ms", "300",
		    (char *)NULL);
		_exit(127);
	}
	CHECK(waitpid(pid, &st, 0) == pid);
	CHECK(WIFEXITED(st));
	CHECK_EQ_INT(WEXITSTATUS(st), WORKER_EXIT_GONE);
}

static const struct harness_test tests[] = {
    HT(no_handshake_no_start),
    HT(model_worker_compacts),
    HT(model_worker_keeps_its_connection),
    HT(heartbeats_flow),
    HT(silent_broker_reconnect_then_give_up),
    HT(malformed_input_exits),
    HT(forbidden_type_exits),
    HT(cancel_interrupts_a_job),
    HT(cancel_right_behind_its_job),
    HT(chunks_then_result_and_failures),
    HT(secret_over_fd_and_socket),
    HT(signals_and_usage),
    HT(credential_fd_gives_curve),
};

HARNESS_MAIN(tests)
