/*
 * bench_turn - turns and compactions through shirod, the real model
 * worker and the mock provider on loopback (docs/memory.md, "Requests,
 * compactions and turns"):
 *
 *   - turn overhead: from the SEND of a turn's message to the request's
 *     arrival at the mock (both on CLOCK_MONOTONIC), with a settled view
 *     of 128 KB (target: p50 under 2 ms);
 *   - `shiro -p` against a warm daemon, against `curl` sending the same
 *     request body to the mock (target: at most 10 ms slower);
 *   - compaction throughput through shirod: the mock answers after
 *     100 ms, 8 compactions in flight (memory.jobs) shared by 1, 2, 4 and
 *     8 workers; summaries per second against 8 / 0.1 s = 80 (target:
 *     at least 90%).
 *
 * Usage: bench_turn.  SHIRO_BENCH_TURNS sets the turns measured (default
 * 40), SHIRO_BENCH_MESSAGES the messages of each throughput row (240).
 */
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "proto/buf.h"
#include "proto/msg.h"
#include "proto/xmalloc.h"
#include "tests/bench_util.h"
#include "tests/harness.h"
#include "tests/mock_util.h"
#include "tests/test_shirod_util.h"

/* bt_ns - CLOCK_MONOTONIC in nanoseconds, the mock's clock. */
static uint64_t
bt_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* bt_home - a fresh home under the bench's directory. */
static const char *
bt_home(const char *name)
{
	static char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", harness_tmpdir(), name);
	(void)mkdir(path, 0700);
	return path;
}

/* bt_start - shirod in home with config; its pid (exits on failure). */
static pid_t
bt_start(const char *home, const char *config)
{
	pid_t pid;
	int st;

	tsd_write(home, "config.json", config);
	tsd_write(home, "key", "sk-bench-key\n");
	pid = tsd_start(home, NULL, &st);
	if (pid <= 0) {
		fprintf(stderr, "bench_turn: shirod did not start in %s (%d)\n",
		    home, st);
		exit(1);
	}
	return pid;
}

/* bt_turn - one turn of text; the ns just before its SEND went out, and
 * whether it ended ok. */
static int
bt_turn(void *sock, const char *text, uint64_t *sent_ns)
{
	static uint64_t rid = 1000000;
	struct msg *m = msg_new(MSG_SEND), *r;
	char key[48];
	const char *ev, *code;
	uint64_t end;
	int ok = 0;

	snprintf(key, sizeof(key), "bench-%llu", (unsigned long long)rid);
	msg_set_int(m, "rid", (int64_t)++rid);
	msg_set_str(m, "text", text);
	msg_set_str(m, "kind", "user");
	msg_set_str(m, "key", key);
	msg_set_bool(m, "turn", true);
	*sent_ns = bt_ns();
	(void)msg_send(sock, m, NULL);
	msg_destroy(&m);
	end = tsd_now_ms() + 30000;
	while (tsd_now_ms() < end) {
		r = tsd_recv(sock, 30000);
		if (r == NULL)
			break;
		if (msg_type(r) == MSG_EVENT &&
		    msg_get_str(r, "ev", &ev, NULL) == 0 &&
		    strcmp(ev, "done") == 0) {
			ok = msg_get_str(r, "code", &code, NULL) == 0 &&
			    strcmp(code, "ok") == 0;
			msg_destroy(&r);
			break;
		}
		msg_destroy(&r);
	}
	return ok;
}

/* bt_run - the wall time of a command, in ms; its exit status. */
static double
bt_run(const char *cmd, int *statusp)
{
	uint64_t t0 = bt_ns();

	*statusp = system(cmd);
	return (double)(bt_ns() - t0) / 1e6;
}

/* bt_overhead - the turn overhead and shiro -p against curl. */
static void
bt_overhead(void)
{
	const char *home = bt_home("turns");
	long nturns = bench_env("SHIRO_BENCH_TURNS", 40), k;
	double *lat = xcalloc((size_t)nturns, sizeof(*lat));
	double *whole = xcalloc((size_t)nturns, sizeof(*whole));
	double p[20], c[20];
	char cfg[PATH_MAX * 2], text[600], cmd[PATH_MAX * 3],
	    body[PATH_MAX + 16];
	struct mock mk;
	uint64_t sent[200];
	json_t *reqs;
	size_t nr, view;
	void *sock;
	pid_t pid;
	int st, n = 0;
	FILE *f;

	mock_start(&mk, "{'auto': {'latency_ms': 0, 'reply': 'ok'}}");
	snprintf(cfg, sizeof(cfg),
	    "{\"providers\": {\"mock\": {\"type\": \"anthropic\", \"url\": "
	    "\"%s\", \"keyFile\": \"%s/key\", \"model\": \"m\"}},"
	    " \"turns\": {\"provider\": \"mock\"}, \"memory\": {\"provider\": "
	    "\"offline\", \"ceiling\": 1000000, \"floor\": 500000}}",
	    mk.base, home);
	pid = bt_start(home, cfg);
	sock = tsd_attach(home, "bench_turn");
	/* A view of 128 KB of lines that are their own summaries. */
	memset(text, 'v', 420);
	text[420] = '\0';
	for (k = 0;
	     (view = (size_t)tsd_status_int(sock, "view.bytes")) < 128 * 1024;
	     k++) {
		text[0] = (char)('a' + k % 26);
		(void)tsd_send_text(sock, text, NULL, NULL);
	}
	(void)tsd_settle(sock, 30000, NULL);
	if (nturns > 200)
		nturns = 200;
	for (k = 0; k < nturns; k++)
		if (bt_turn(sock, "a question", &sent[k]))
			n++;
	reqs = mock_requests(&mk, (size_t)nturns, 10000);
	nr = json_array_size(reqs);
	/* From the SEND to the request's first byte (its request line) at
	 * the mock, and to its last (the whole body read). */
	for (k = 0; k < nturns && (size_t)k < nr; k++) {
		json_t *e = json_array_get(reqs, (size_t)k);

		lat[k] =
		    ((double)json_integer_value(json_object_get(e, "t0_ns")) -
			(double)sent[k]) /
		    1e6;
		whole[k] = (mock_t_ms(e) * 1e6 - (double)sent[k]) / 1e6;
	}
	printf("turn overhead, SEND to the request at the mock, view %zu KB "
	       "(%d of %ld turns ok)\n",
	    view / 1024, n, nturns);
	printf("  to the first byte: p50 %.2f ms  p90 %.2f ms  max %.2f ms  "
	       "(target: p50 under 2 ms)\n",
	    bench_pct(lat, (size_t)k, 0.5), bench_pct(lat, (size_t)k, 0.9),
	    bench_pct(lat, (size_t)k, 1.0));
	printf("  to the body read whole: p50 %.2f ms  p90 %.2f ms\n",
	    bench_pct(whole, (size_t)k, 0.5), bench_pct(whole, (size_t)k, 0.9));
	/* The same request's body, sent by curl. */
	snprintf(body, sizeof(body), "%s/body.json", home);
	f = fopen(body, "w");
	if (f != NULL && nr > 0) {
		fputs(mock_str(json_array_get(reqs, nr - 1), "body"), f);
		fclose(f);
	}
	json_decref(reqs);
	tsd_close(&sock);
	for (k = 0; k < 20; k++) {
		snprintf(cmd, sizeof(cmd),
		    "SHIRO_HOME=%s %s -p 'one more question' >/dev/null "
		    "2>&1",
		    home, tsd_bin("shiro"));
		p[k] = bt_run(cmd, &st);
		snprintf(cmd, sizeof(cmd),
		    "curl -s -o /dev/null -X POST -H 'x-api-key: sk-bench-key' "
		    "-H 'anthropic-version: 2023-06-01' -H 'content-type: "
		    "application/json' --data-binary @%s %s/v1/messages",
		    body, mk.base);
		c[k] = bt_run(cmd, &st);
	}
	printf(
	    "shiro -p with a warm daemon against curl of the same request\n");
	printf("  shiro -p p50 %.1f ms, curl p50 %.1f ms: %.1f ms slower "
	       "(target: at most 10 ms)\n",
	    bench_pct(p, 20, 0.5), bench_pct(c, 20, 0.5),
	    bench_pct(p, 20, 0.5) - bench_pct(c, 20, 0.5));
	free(lat);
	free(whole);
	tsd_stop(pid);
	mock_stop(&mk);
}

/* bt_throughput - summaries per second with nworkers workers. */
static void
bt_throughput(int nworkers)
{
	char name[32], cfg[PATH_MAX * 2];
	const char *home;
	long nmsg = bench_env("SHIRO_BENCH_MESSAGES", 240);
	struct mock mk;
	uint64_t t0, t1;
	int64_t done;
	double rate;
	void *sock;
	pid_t pid;

	snprintf(name, sizeof(name), "throughput-%d", nworkers);
	home = bt_home(name);
	mock_start(&mk,
	    "{'auto': {'latency_ms': 100, 'marker': '----------', "
	    "'summary_bytes': 300, 'reply': 'ok'}}");
	snprintf(cfg, sizeof(cfg),
	    "{\"providers\": {\"mock\": {\"type\": \"anthropic\", \"url\": "
	    "\"%s\", \"keyFile\": \"%s/key\", \"jobs\": %d}},"
	    " \"memory\": {\"provider\": \"mock\", \"jobs\": 8},"
	    " \"workers\": [{\"role\": \"model\", \"provider\": \"mock\", "
	    "\"count\": %d}]}",
	    mk.base, home, 8 / nworkers, nworkers);
	pid = bt_start(home, cfg);
	sock = tsd_connect(home);
	t0 = bench_send(sock, nmsg);
	(void)tsd_settle(sock, 600000, NULL);
	t1 = tsd_now_ms();
	done = tsd_status_int(sock, "jobs_done");
	rate = (double)done * 1000.0 / (double)(t1 - t0);
	printf("  %d worker%s x %d calls: %lld summaries in %.1f s, %.1f/s, "
	       "%.0f%% of 80/s\n",
	    nworkers, nworkers == 1 ? " " : "s", 8 / nworkers, (long long)done,
	    (double)(t1 - t0) / 1000.0, rate, rate * 100.0 / 80.0);
	tsd_close(&sock);
	tsd_stop(pid);
	mock_stop(&mk);
}

int
main(void)
{
	char cmd[PATH_MAX + 16];
	int n;

	if (access(tsd_bin("shiro-model-worker"), X_OK) != 0 ||
	    system("command -v curl >/dev/null") != 0) {
		printf("bench_turn: skipped (the model worker or curl is "
		       "missing)\n");
		return 0;
	}
	printf("bench_turn: shirod, the model worker and the mock provider "
	       "on loopback\n");
	bt_overhead();
	printf("compaction throughput through shirod, the mock answering "
	       "after 100 ms, 8 in flight (target: at least 90%% of 80/s)\n");
	for (n = 1; n <= 8; n *= 2)
		bt_throughput(n);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", harness_tmpdir());
	(void)system(cmd);
	return 0;
}
