/*
 * bench_remote - shirod over tcp and CURVE on loopback (docs/remote.md):
 *
 *   - the round trip of STATUS over tcp+CURVE against ipc, side by side
 *     in one run: blocks of requests on each in turn, p50 and p99 of
 *     each and their ratio;
 *   - compaction throughput with 1, 2 and 4 remote workers
 *     (shiro-worker, each with its own mock provider answering after
 *     100 ms and 2 calls at once), memory.jobs 8: summaries per second
 *     against n x 2 / 0.1 s (target: linear within 10% up to the jobs
 *     limit, 8 in flight = 4 workers).
 *
 * Usage: bench_remote.  SHIRO_BENCH_RTT sets the round trips of each
 * socket (default 2000), SHIRO_BENCH_MESSAGES the messages of each
 * throughput row (240).
 */
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "proto/keys.h"
#include "proto/msg.h"
#include "proto/xmalloc.h"
#include "proto/zsock.h"
#include "tests/bench_util.h"
#include "tests/harness.h"
#include "tests/mock_util.h"
#include "tests/test_shirod_util.h"

/* br_us - CLOCK_MONOTONIC in microseconds. */
static double
br_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* The processes the bench started, ended by pid if it must stop. */
static pid_t br_pids[16];
static int br_npids;

/* br_track - remember pid; returns it. */
static pid_t
br_track(pid_t pid)
{
	if (pid > 0 && br_npids < 16)
		br_pids[br_npids++] = pid;
	return pid;
}

/* br_die - say why the bench cannot go on, end what it started, stop. */
static void __attribute__((noreturn)) br_die(const char *what)
{
	int k;

	fprintf(stderr, "bench_remote: %s\n", what);
	for (k = 0; k < br_npids; k++) {
		kill(br_pids[k], SIGKILL);
		(void)waitpid(br_pids[k], NULL, 0);
	}
	exit(1);
}

/* br_doc - the string at a.b.c.0 of the status, into out. */
static void
br_doc(void *sock, const char *a, const char *b, const char *c, char *out,
    size_t len)
{
	struct msg *m = msg_new(MSG_STATUS), *r;
	const struct msg_val *v = NULL;

	r = tsd_call(sock, m, 10000, NULL);
	msg_destroy(&m);
	if (r != NULL && msg_get_map(r, "doc", &v) == 0)
		v = msg_val_get(v, a);
	if (v != NULL && b != NULL)
		v = msg_val_get(v, b);
	if (v != NULL && c != NULL)
		v = msg_val_get(v, c);
	if (v != NULL && v->type == MSG_V_ARR && v->u.a.n > 0)
		v = v->u.a.items[0];
	if (v == NULL || v->type != MSG_V_STR)
		br_die("no remote endpoints in shirod's status");
	snprintf(out, len, "%s", v->u.s.ptr);
	msg_destroy(&r);
}

/* br_start - shirod in home with config (its tcp endpoints on
 * loopback); its pid, the server key and the tcp endpoint of side. */
static pid_t
br_start(const char *home, const char *config, const char *side, char *ep,
    size_t eplen, char key[ZSOCK_KEY_Z85 + 1])
{
	void *sock;
	pid_t pid;
	int st;

	(void)mkdir(home, 0700);
	tsd_write(home, "config.json", config);
	tsd_write(home, "key", "sk-bench-key\n");
	pid = br_track(tsd_start(home, NULL, &st));
	if (pid <= 0)
		br_die("shirod did not start");
	sock = tsd_connect(home);
	br_doc(sock, "remote", side, "endpoints", ep, eplen);
	br_doc(sock, "remote", "server_key", NULL, key, ZSOCK_KEY_Z85 + 1);
	tsd_close(&sock);
	return pid;
}

/* br_wait_keys - wait until shirod admits n keys of side. */
static void
br_wait_keys(const char *home, const char *side, int64_t n)
{
	void *sock = tsd_connect(home);
	uint64_t end = tsd_now_ms() + 10000;
	struct msg *m, *r;
	const struct msg_val *doc;
	int64_t got = -1;

	while (tsd_now_ms() < end && got != n) {
		m = msg_new(MSG_STATUS);
		r = tsd_call(sock, m, 5000, NULL);
		msg_destroy(&m);
		if (r != NULL && msg_get_map(r, "doc", &doc) == 0 &&
		    (doc = msg_val_get(doc, "remote")) != NULL &&
		    (doc = msg_val_get(doc, side)) != NULL)
			(void)msg_val_int(doc, "keys", &got);
		msg_destroy(&r);
		if (got != n)
			usleep(20000);
	}
	tsd_close(&sock);
	if (got != n)
		br_die("shirod did not admit the bench's keys");
}

/* br_rtt - n STATUS round trips on sock, each in us into v. */
static void
br_rtt(void *sock, double *v, size_t n)
{
	struct msg *m, *r;
	size_t k;
	double t;

	for (k = 0; k < n; k++) {
		m = msg_new(MSG_STATUS);
		t = br_us();
		r = tsd_call(sock, m, 10000, NULL);
		v[k] = br_us() - t;
		msg_destroy(&m);
		if (r == NULL || msg_type(r) != MSG_REPLY)
			br_die("a STATUS went unanswered");
		msg_destroy(&r);
	}
}

/* br_run - n RUNs of bash -lc true in ws on sock, each in us into v. */
static void
br_run(void *sock, const char *ws, double *v, size_t n)
{
	const struct msg_val *doc;
	struct msg *m, *r;
	size_t k;
	double t;

	for (k = 0; k < n; k++) {
		m = msg_new(MSG_RUN);
		msg_set_str(m, "tool", "bash");
		msg_set_str(m, "args", "{\"command\":\"true\"}");
		msg_set_str(m, "cwd", ws);
		t = br_us();
		r = tsd_call(sock, m, 30000, NULL);
		v[k] = br_us() - t;
		msg_destroy(&m);
		if (r == NULL || msg_type(r) != MSG_REPLY ||
		    msg_get_map(r, "doc", &doc) != 0 ||
		    msg_val_get(doc, "result") == NULL)
			br_die("a RUN did not end with its result");
		msg_destroy(&r);
	}
}

/* br_jail - n runs of shiro-jail -- bash -lc true in ws, here. */
static void
br_jail(const char *ws, double *v, size_t n)
{
	const char *jail = tsd_bin("shiro-jail");
	size_t k;
	double t;
	pid_t pid;
	int st;

	for (k = 0; k < n; k++) {
		t = br_us();
		pid = fork();
		if (pid == 0) {
			int fd = open("/dev/null", O_RDWR);

			if (fd >= 0) {
				dup2(fd, 1);
				dup2(fd, 2);
			}
			execl(jail, jail, "--workspace", ws, "--", "bash",
			    "-lc", "true", (char *)NULL);
			_exit(127);
		}
		if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
		    WEXITSTATUS(st) != 0)
			br_die("shiro-jail -- true failed");
		v[k] = br_us() - t;
	}
}

/* br_status_rtt - STATUS over ipc and over tcp+CURVE, side by side. */
static void
br_status_rtt(void)
{
	char home[PATH_MAX], ep[256], key[ZSOCK_KEY_Z85 + 1], *path;
	struct zsock_cred cred;
	struct zsock_opts zo;
	size_t n = (size_t)bench_env("SHIRO_BENCH_RTT", 2000), k, blk = 100;
	double *ipc = xcalloc(n, sizeof(double));
	double *tcp = xcalloc(n, sizeof(double)), p[4];
	void *is, *ts = NULL;
	pid_t pid;

	snprintf(home, sizeof(home), "%s/rtt", harness_tmpdir());
	pid = br_start(home,
	    "{\"endpoints\": {\"clients\": \"tcp://127.0.0.1:0\"}}", "clients",
	    ep, sizeof(ep), key);
	memset(&cred, 0, sizeof(cred));
	memcpy(cred.server, key, sizeof(cred.server));
	path = keys_path(home, "bench-client.key");
	if (keys_pair(path, 1, &cred.own, NULL) != 0)
		br_die("no client key pair");
	free(path);
	path = keys_path(home, KEYS_CLIENTS);
	if (keys_add(path, "bench", cred.own.pub, NULL) != 0)
		br_die("cannot admit the client key");
	free(path);
	br_wait_keys(home, "clients", 1);
	memset(&zo, 0, sizeof(zo));
	zo.curve = &cred;
	if (zsock_dealer_wait(ep, &zo, 10000, &ts) != 0)
		br_die("no CURVE handshake with shirod");
	is = tsd_connect(home);
	/* Warm both, then blocks of each in turn. */
	br_rtt(is, ipc, blk < n ? blk : n);
	br_rtt(ts, tcp, blk < n ? blk : n);
	for (k = 0; k < n; k += blk) {
		size_t m = n - k < blk ? n - k : blk;

		br_rtt(is, ipc + k, m);
		br_rtt(ts, tcp + k, m);
	}
	p[0] = bench_pct(ipc, n, 0.5);
	p[1] = bench_pct(ipc, n, 0.99);
	p[2] = bench_pct(tcp, n, 0.5);
	p[3] = bench_pct(tcp, n, 0.99);
	printf("STATUS round trip, %zu each, blocks of %zu in turn:\n", n, blk);
	printf("  ipc (NULL, peer credentials): p50 %.0f us, p99 %.0f us\n",
	    p[0], p[1]);
	printf("  tcp+CURVE on loopback:        p50 %.0f us, p99 %.0f us "
	       "(p50 x%.2f of ipc)\n",
	    p[2], p[3], p[0] > 0 ? p[2] / p[0] : 0);
	/* shiro run in the box's workspace: a RUN over each, against the
	 * jail started here, in turn. */
	{
		size_t rn = (size_t)bench_env("SHIRO_BENCH_RUNS", 60), rb = 10;
		double *ri = xcalloc(rn, sizeof(double));
		double *rt = xcalloc(rn, sizeof(double));
		double *rj = xcalloc(rn, sizeof(double));
		char ws[PATH_MAX];

		snprintf(ws, sizeof(ws), "%s/run-ws", harness_tmpdir());
		(void)mkdir(ws, 0700);
		if (tsd_hello(is) != 0 || tsd_hello(ts) != 0)
			br_die("no HELLO");
		br_run(is, ws, ri, 3);
		br_run(ts, ws, rt, 3);
		br_jail(ws, rj, 3);
		for (k = 0; k < rn; k += rb) {
			size_t m = rn - k < rb ? rn - k : rb;

			br_run(is, ws, ri + k, m);
			br_run(ts, ws, rt + k, m);
			br_jail(ws, rj + k, m);
		}
		p[0] = bench_pct(ri, rn, 0.5);
		p[1] = bench_pct(rt, rn, 0.5);
		p[2] = bench_pct(rj, rn, 0.5);
		printf("RUN of bash -lc true (shiro run in the build box's "
		       "workspace), %zu each, blocks of %zu in turn:\n",
		    rn, rb);
		printf("  shiro-jail here:       p50 %.0f us\n", p[2]);
		printf("  RUN over ipc:          p50 %.0f us (x%.2f of the "
		       "jail alone)\n",
		    p[0], p[2] > 0 ? p[0] / p[2] : 0);
		printf("  RUN over tcp+CURVE:    p50 %.0f us (x%.2f of the "
		       "jail alone, %+.0f us against ipc)\n",
		    p[1], p[2] > 0 ? p[1] / p[2] : 0, p[1] - p[0]);
		free(ri);
		free(rt);
		free(rj);
	}
	zsock_close(&ts);
	tsd_close(&is);
	tsd_stop(pid);
	br_npids = 0;
	explicit_bzero(&cred, sizeof(cred));
	free(ipc);
	free(tcp);
}

/* br_throughput - compactions with n remote workers; summaries/s. */
static double
br_throughput(int n)
{
	char home[512], ep[256], key[ZSOCK_KEY_Z85 + 1], cfg[2048];
	char whome[600], url[64], *path;
	struct mock mk[4];
	pid_t pid, wp[4];
	long nmsg = bench_env("SHIRO_BENCH_MESSAGES", 240);
	struct zsock_keypair kp;
	uint64_t t0, t1;
	int64_t done;
	void *sock;
	int i;

	snprintf(home, sizeof(home), "%s/tp%d", harness_tmpdir(), n);
	snprintf(cfg, sizeof(cfg),
	    "{\"endpoints\": {\"workers\": \"tcp://127.0.0.1:0\"},"
	    " \"providers\": {\"mock\": {\"type\": \"anthropic\", \"url\": "
	    "\"http://127.0.0.1:9\", \"keyFile\": \"%s/key\"}},"
	    " \"memory\": {\"provider\": \"mock\", \"jobs\": 8},"
	    " \"workers\": [{\"role\": \"model\", \"provider\": \"mock\", "
	    "\"count\": 0}]}",
	    home);
	pid = br_start(home, cfg, "workers", ep, sizeof(ep), key);
	for (i = 0; i < n; i++) {
		char name[16];

		snprintf(whome, sizeof(whome), "%s/w%d", home, i);
		(void)mkdir(whome, 0700);
		path = keys_path(whome, KEYS_WORKER);
		if (keys_pair(path, 1, &kp, NULL) != 0)
			br_die("no worker key pair");
		free(path);
		path = keys_path(home, KEYS_WORKERS);
		snprintf(name, sizeof(name), "w%d", i);
		if (keys_add(path, name, kp.pub, NULL) != 0)
			br_die("cannot admit a worker key");
		free(path);
	}
	br_wait_keys(home, "workers", n);
	for (i = 0; i < n; i++) {
		snprintf(whome, sizeof(whome), "%s/w%d", home, i);
		mock_start(&mk[i],
		    "{'auto': {'latency_ms': 100, 'marker': "
		    "'----------', 'summary_bytes': 300, "
		    "'reply': 'ok'}}");
		snprintf(url, sizeof(url), "%s", mk[i].base);
		br_track(mk[i].pid);
		wp[i] = br_track(fork());
		if (wp[i] == 0) {
			char log[700];
			int fd;

			snprintf(log, sizeof(log), "%s/worker.log", whome);
			fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0600);
			if (fd >= 0)
				dup2(fd, 2);
			setenv("BENCH_KEY", "sk-bench-worker", 1);
			execl(tsd_bin("shiro-worker"), "shiro-worker", "--home",
			    whome, "--connect", ep, "--role", "model",
			    "--provider", "mock", "--type", "anthropic",
			    "--base-url", url, "--key-env", "BENCH_KEY",
			    "--jobs", "2", "--server-key", key, (char *)NULL);
			_exit(127);
		}
	}
	sock = tsd_connect(home);
	/* Every worker ready before the clock starts. */
	t0 = tsd_now_ms() + 20000;
	while (tsd_status_int(sock, "workers_ready") < n && tsd_now_ms() < t0)
		usleep(20000);
	if (tsd_status_int(sock, "workers_ready") < n)
		br_die("the remote workers did not come up");
	t0 = bench_send(sock, nmsg);
	(void)tsd_settle(sock, 600000, NULL);
	t1 = tsd_now_ms();
	done = tsd_status_int(sock, "jobs_done");
	tsd_close(&sock);
	tsd_stop(pid);
	for (i = 0; i < n; i++) {
		kill(wp[i], SIGTERM);
		(void)waitpid(wp[i], NULL, 0);
		mock_stop(&mk[i]);
	}
	br_npids = 0;
	return (double)done * 1000.0 / (double)(t1 - t0);
}

int
main(void)
{
	static const int ns[] = {1, 2, 4};
	char cmd[PATH_MAX + 16];
	double rate[3], ideal;
	int k;

	if (access(tsd_bin("shiro-worker"), X_OK) != 0 ||
	    access(tsd_bin("shiro-model-worker"), X_OK) != 0) {
		printf("bench_remote: skipped (shiro-worker is not built)\n");
		return 0;
	}
	printf("bench_remote: shirod over tcp+CURVE on loopback\n");
	br_status_rtt();
	printf("compaction throughput with remote workers (shiro-worker), "
	       "each 2 calls at once to its own mock answering after 100 ms, "
	       "memory.jobs 8 (target: linear within 10%%)\n");
	for (k = 0; k < 3; k++) {
		rate[k] = br_throughput(ns[k]);
		ideal = (double)ns[k] * 2 / 0.1;
		printf(
		    "  %d remote worker%s: %.1f summaries/s, %.0f%% of %.0f/s; "
		    "x%.2f of 1 worker (ideal x%d)\n",
		    ns[k], ns[k] == 1 ? " " : "s", rate[k],
		    rate[k] * 100.0 / ideal, ideal, rate[k] / rate[0], ns[k]);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf %s", harness_tmpdir());
	(void)system(cmd);
	return 0;
}
