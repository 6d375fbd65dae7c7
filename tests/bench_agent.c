/*
 * bench_agent - a scripted 20-step tool turn through shirod, the real
 * model worker and the tool and fs workers, against the mock provider
 * answering at once (docs/tools.md, "Costs"):
 *
 *   - the turn's wall time minus the tools' own run time (each call from
 *     its JOB to its answer, as shirod measures it) is shiro's overhead
 *     per step (target: under 5 ms); the model calls' round trips to
 *     the mock are shown apart, since the mock answers at once;
 *   - the system prompt plus the tools in bytes, what every request
 *     repeats (target: under 12 KB), beside the figures other agents
 *     send (Codex 59 KB, Claude Code 69 KB, OpenCode 30 KB).
 *
 * The steps cycle read_file, grep, edit_file, bash; the turn runs with
 * approvals yolo, so no call waits for a person.  SHIRO_BENCH_RUNS sets
 * how many turns are measured (default 5): the median is printed.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "proto/buf.h"
#include "proto/msg.h"
#include "proto/xmalloc.h"
#include "tests/harness.h"
#include "tests/mock_util.h"
#include "tests/test_shirod_util.h"

#define BA_STEPS 20

/* ba_us - CLOCK_MONOTONIC in microseconds. */
static uint64_t
ba_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* ba_cmp - for qsort of doubles. */
static int
ba_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* ba_median - the median of v[0..n) (sorted here). */
static double
ba_median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), ba_cmp);
	return n ? v[n / 2] : 0;
}

/* ba_script - the 20 steps and the answer, in mock_json form (caller
 * frees).  Request k (from 1) of a fresh mock is step k. */
static char *
ba_script(void)
{
	struct buf b = BUF_INIT;
	int k;

	buf_adds(&b, "{'responses': [");
	for (k = 1; k <= BA_STEPS; k++) {
		switch (k % 4) {
		case 1:
			buf_printf(&b,
			    "{'tools': [{'id': 's%d', 'name': 'read_file', "
			    "'input': {'path': 'src.c', 'offset': %d}}]},",
			    k, k);
			break;
		case 2:
			buf_printf(&b,
			    "{'tools': [{'id': 's%d', 'name': 'grep', "
			    "'input': {'pattern': 'line %d', 'path': "
			    "'.'}}]},",
			    k, k);
			break;
		case 3:
			buf_printf(&b,
			    "{'tools': [{'id': 's%d', 'name': 'edit_file', "
			    "'input': {'path': 'src.c', 'old_string': "
			    "'line %d;', 'new_string': 'done %d;'}}]},",
			    k, k, k);
			break;
		default:
			buf_printf(&b,
			    "{'tools': [{'id': 's%d', 'name': 'bash', "
			    "'input': {'command': 'wc -l src.c && echo step "
			    "%d'}}]},",
			    k, k);
			break;
		}
	}
	buf_adds(&b, "{'text': 'All twenty steps are done.'}]}");
	return buf_steal(&b, NULL);
}

/* ba_turn - one turn in ws; 0 with its wall, tool and model time in us
 * and its steps, or -1. */
static int
ba_turn(void *sock, const char *ws, double *wall, double *tool, double *model,
    int64_t *steps)
{
	struct msg *m = msg_new(MSG_SEND), *r;
	const struct msg_val *d;
	const char *ev, *code = "";
	uint64_t id = 0, eid, t0, end;
	int64_t v;

	msg_set_str(m, "text", "do the twenty steps");
	msg_set_str(m, "kind", "user");
	msg_set_str(m, "cwd", ws);
	msg_set_str(m, "approvals", "yolo");
	msg_set_bool(m, "turn", true);
	t0 = ba_us();
	r = tsd_call(sock, m, 10000, NULL);
	msg_destroy(&m);
	if (r == NULL || msg_type(r) != MSG_ACK ||
	    msg_get_uint(r, "id", &id) != 0) {
		msg_destroy(&r);
		return -1;
	}
	msg_destroy(&r);
	end = tsd_now_ms() + 120000;
	while (tsd_now_ms() < end) {
		r = tsd_recv(sock, 1000);
		if (r == NULL)
			continue;
		if (msg_type(r) == MSG_EVENT &&
		    msg_get_str(r, "ev", &ev, NULL) == 0 &&
		    (strcmp(ev, "tool_error") == 0 ||
			strcmp(ev, "tool_denied") == 0)) {
			/* Every step must do its work, or the figures lie. */
			const char *text = "";

			(void)msg_get_str(r, "text", &text, NULL);
			fprintf(stderr, "bench_agent: a step failed: %.300s\n",
			    text);
			msg_destroy(&r);
			return -1;
		}
		if (msg_type(r) == MSG_EVENT &&
		    msg_get_str(r, "ev", &ev, NULL) == 0 &&
		    strcmp(ev, "done") == 0 &&
		    msg_get_uint(r, "id", &eid) == 0 && eid == id) {
			*wall = (double)(ba_us() - t0);
			(void)msg_get_str(r, "code", &code, NULL);
			if (msg_get_map(r, "data", &d) == 0) {
				if (msg_val_int(d, "tool_us", &v) == 0)
					*tool = (double)v;
				if (msg_val_int(d, "model_us", &v) == 0)
					*model = (double)v;
				(void)msg_val_int(d, "steps", steps);
			}
			v = strcmp(code, "ok") == 0 ? 0 : -1;
			msg_destroy(&r);
			return (int)v;
		}
		msg_destroy(&r);
	}
	return -1;
}

/* main - the turns, then the table. */
int
main(void)
{
	const char *tmp = harness_tmpdir();
	char home[PATH_MAX - 64], ws[PATH_MAX - 64], cfg[PATH_MAX + 512];
	char cmd[PATH_MAX + 16];
	double wall[32], tool[32], model[32], own[32], shiro[32];
	long runs = getenv("SHIRO_BENCH_RUNS")
	    ? strtol(getenv("SHIRO_BENCH_RUNS"), NULL, 10)
	    : 5;
	struct buf src = BUF_INIT;
	struct mock mk;
	char *script;
	int64_t steps = 0, prompt;
	void *sock;
	pid_t pid;
	long k;
	int st, j;

	if (runs < 1 || runs > 32)
		runs = 5;
	snprintf(home, sizeof(home), "%s/home", tmp);
	snprintf(ws, sizeof(ws), "%s/ws", tmp);
	(void)mkdir(home, 0700);
	(void)mkdir(ws, 0755);
	script = ba_script();
	mock_start(&mk, script);
	tsd_write(home, "key", "sk-bench-agent\n");
	snprintf(cfg, sizeof(cfg),
	    "{\"providers\": {\"mock\": {\"type\": \"anthropic\", \"url\": "
	    "\"%s\", \"keyFile\": \"%s/key\", \"model\": \"m-big\"}},"
	    " \"turns\": {\"provider\": \"mock\"},"
	    " \"memory\": {\"provider\": \"offline\"}}",
	    mk.base, home);
	tsd_write(home, "config.json", cfg);
	pid = tsd_start(home, NULL, &st);
	if (pid <= 0) {
		fprintf(stderr, "bench_agent: shirod did not start (%d)\n", st);
		return 1;
	}
	sock = tsd_attach(home, "bench_agent");
	if (sock == NULL) {
		fprintf(stderr, "bench_agent: cannot attach\n");
		return 1;
	}
	for (k = 0; k < runs; k++) {
		buf_reset(&src);
		for (j = 1; j <= BA_STEPS; j++)
			buf_printf(&src, "line %d;\n", j);
		tsd_write(ws, "src.c", src.data);
		if (k > 0)
			mock_set(&mk, script);
		tool[k] = model[k] = 0;
		if (ba_turn(sock, ws, &wall[k], &tool[k], &model[k], &steps) !=
		    0) {
			fprintf(stderr, "bench_agent: turn %ld failed\n", k);
			return 1;
		}
		own[k] = (wall[k] - tool[k]) / (double)steps / 1000.0;
		shiro[k] =
		    (wall[k] - tool[k] - model[k]) / (double)steps / 1000.0;
		wall[k] /= 1000.0;
		tool[k] /= 1000.0;
	}
	prompt = tsd_status_int(sock, "turns.prompt_bytes");
	printf("A %d-step tool turn (read_file, grep, edit_file, bash), mock "
	       "answering at once, %ld runs, medians:\n",
	    BA_STEPS, runs);
	printf("  model calls per turn                     %lld\n",
	    (long long)steps);
	printf("  turn wall time                           %8.1f ms\n",
	    ba_median(wall, (size_t)runs));
	printf("  tools' own run time (JOB to answer)      %8.1f ms\n",
	    ba_median(tool, (size_t)runs));
	printf("  overhead per step (wall - tools)         %8.2f ms "
	       "(target < 5 ms)\n",
	    ba_median(own, (size_t)runs));
	printf("    of which shirod itself (less the model "
	       "round trips) %.2f ms\n",
	    ba_median(shiro, (size_t)runs));
	printf("\nSystem prompt and tools, repeated in every request:\n");
	printf("  %-14s %8.1f KB%s\n", "shiro", (double)prompt / 1000.0,
	    prompt < 12000 ? "  (target < 12 KB)" : "  OVER 12 KB");
	printf("  %-14s %8.1f KB\n", "OpenCode", 30.0);
	printf("  %-14s %8.1f KB\n", "Codex", 59.0);
	printf("  %-14s %8.1f KB\n", "Claude Code", 69.0);
	tsd_close(&sock);
	(void)tsd_stop(pid);
	mock_stop(&mk);
	free(script);
	buf_free(&src);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp);
	if (system(cmd) != 0)
		fprintf(stderr, "bench_agent: %s left behind\n", tmp);
	return 0;
}
