/*
 * bench_model - the model worker's figures, against the mock provider on
 * loopback, with this program playing shirod:
 *
 *   - compaction throughput: the mock answers every call after 100 ms, 8
 *     calls are kept in flight in all (memory.jobs), shared by 1, 2, 4
 *     and 8 workers of one provider (--jobs 8, 4, 2, 1); summaries per
 *     second against the limit 8 / 0.1 s = 80 (target: at least 90%);
 *   - CANCEL latency: a call whose stream has started and stalls is
 *     canceled; the time from the CANCEL sent to the FAIL received, and
 *     to the mock seeing its connection close (target: under 100 ms).
 *
 * Usage: bench_model.  SHIRO_BENCH_SUMMARIES sets the summaries of each
 * throughput row (default 240), SHIRO_BENCH_CANCELS the cancels (50).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "proto/buf.h"
#include "proto/mono.h"
#include "proto/zsock.h"
#include "tests/harness.h"
#include "tests/model_util.h"

#define BENCH_INFLIGHT 8 /* memory.jobs */
#define BENCH_LATENCY_MS 100
#define BENCH_MAX_WORKERS 8

/* bench_env - a positive number from the environment, or def. */
static long
bench_env(const char *name, long def)
{
	const char *s = getenv(name);
	long v = s ? strtol(s, NULL, 10) : 0;

	return v > 0 ? v : def;
}

/* bench_request - a compaction request of about 16 KB of context. */
static char *
bench_request(void)
{
	struct buf b = BUF_INIT;
	int k;

	buf_adds(&b,
	    "{'model':'m-small','max_tokens':600,'system':['You are "
	    "shiro, and you keep the chat in one-line summaries.'],"
	    "'messages':[{'role':'user','content':[");
	for (k = 0; k < 40; k++)
		buf_printf(&b,
		    "{'type':'text','text':'%d+1|user: line %d of the view, "
		    "about a hundred bytes of what was said and done there, "
		    "then more. %d+1|shiro: the reply to it, said in a few "
		    "words, with a path src/x%d.c and a number %d. %d+1|tool: "
		    "make: the output of a build, cut. %d+1|user: and more.\\n'"
		    "%s},",
		    4 * k, k, 4 * k + 1, k, k, 4 * k + 2, 4 * k + 3,
		    k == 39 ? ",'cache':true" : "");
	buf_adds(&b,
	    "{'type':'text','text':'Compress message 160 into one "
	    "line of at most 512 bytes:\\n");
	for (k = 0; k < 512; k++)
		buf_addc(&b, '-');
	buf_adds(&b, "','cache':true}]}]}");
	return buf_steal(&b, NULL);
}

/* A worker of the bench and its calls in flight. */
struct bench_w {
	struct tw t;
	unsigned inflight, cap;
};

/* bench_start - n workers against the mock, cap calls each. */
static void
bench_start(struct bench_w *w, int n, unsigned cap, const struct mock *mk)
{
	char jobs[16];
	const char *argv[] = {"--provider", MW_PROVIDER, "--wire", "anthropic",
	    "--base-url", mk->base, "--jobs", jobs, NULL};
	struct msg *m;
	int k;

	snprintf(jobs, sizeof(jobs), "%u", cap);
	for (k = 0; k < n; k++) {
		memset(&w[k], 0, sizeof(w[k]));
		w[k].cap = cap;
		tw_start(
		    &w[k].t, "../shiro-model-worker", 1000, 30000, NULL, argv);
		tw_drop(tw_recv(&w[k].t, MSG_READY, 10000));
		m = msg_new(MSG_SECRET);
		msg_set_str(m, "provider", MW_PROVIDER);
		msg_set_bin(m, "key", MW_KEY, strlen(MW_KEY));
		tw_send(&w[k].t, m);
	}
}

/* bench_stop - stop n workers. */
static void
bench_stop(struct bench_w *w, int n)
{
	int k;

	for (k = 0; k < n; k++)
		tw_end(&w[k].t);
	zsock_term();
}

/*
 * bench_throughput - total summaries by n workers, 8 in flight; returns
 * summaries per second, or -1 when a job failed.
 */
static double
bench_throughput(int n, const struct mock *mk, const char *request, long total)
{
	struct bench_w w[BENCH_MAX_WORKERS];
	struct zsock_poll items[BENCH_MAX_WORKERS];
	uint64_t start, beat = 0, id = 1;
	long done = 0, sent = 0;
	int k, bad = 0;

	bench_start(w, n, BENCH_INFLIGHT / (unsigned)n, mk);
	start = mono_ms();
	while (done < total && bad == 0 && mono_ms() - start < 120000) {
		struct msg *m;

		/* Keep 8 in flight, on the workers with room. */
		for (k = 0; k < n && sent < total; k++)
			while (w[k].inflight < w[k].cap && sent < total) {
				tw_send(
				    &w[k].t, mw_compact(id++, request, 5, 512));
				w[k].inflight++;
				sent++;
			}
		if (mono_ms() - beat >= 300) {
			for (k = 0; k < n; k++)
				tw_send(&w[k].t, msg_new(MSG_HEARTBEAT));
			beat = mono_ms();
		}
		for (k = 0; k < n; k++) {
			items[k].sock = w[k].t.router;
			items[k].fd = -1;
			items[k].events = ZSOCK_IN;
		}
		zsock_poll(items, n, 20);
		for (k = 0; k < n; k++)
			while (tw_next(&w[k].t, 0, &m)) {
				if (msg_type(m) == MSG_RESULT) {
					w[k].inflight--;
					done++;
				} else if (msg_type(m) == MSG_FAIL) {
					fprintf(stderr,
					    "bench_model: FAIL %s\n",
					    mw_text(m));
					bad++;
				}
				msg_destroy(&m);
			}
	}
	bench_stop(w, n);
	if (bad > 0 || done < total)
		return -1;
	return (double)done * 1000.0 / (double)(mono_ms() - start);
}

/* bench_now - CLOCK_MONOTONIC in ms, to the nanosecond (the mock logs
 * the same clock). */
static double
bench_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* bench_cmp - qsort order of doubles. */
static int
bench_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* bench_pct - the p-th percentile of sorted v[0..n). */
static double
bench_pct(const double *v, size_t n, double p)
{
	size_t k = (size_t)(p * (double)(n - 1) + 0.5);

	return v[k < n ? k : n - 1];
}

/* bench_closed_at - when the mock saw request n's client leave (ms). */
static double
bench_closed_at(const struct mock *mk, long n, long ms)
{
	uint64_t end = mono_ms() + (uint64_t)ms;

	while (mono_ms() < end) {
		json_t *log = mock_log(mk), *v;
		size_t k;
		double t = -1;

		json_array_foreach(log, k, v)
		{
			if (strcmp(mock_str(v, "kind"), "disconnect") == 0 &&
			    json_integer_value(json_object_get(v, "n")) == n)
				t = mock_t_ms(v);
		}
		json_decref(log);
		if (t >= 0)
			return t;
	}
	return -1;
}

/*
 * bench_cancel - rounds cancels of a stalled call: the latencies to the
 * FAIL and to the mock's disconnect, in ms, into fail[] and closed[].
 */
static int
bench_cancel(int rounds, double *fail, double *closed)
{
	struct mock mk;
	struct mw x;
	const char *req = "{'model':'m','max_tokens':10,'messages':[{'role':"
			  "'user','content':[{'type':'text','text':'hi'}]}]}";
	int k;

	mw_start(&x, "anthropic",
	    "{'responses':[{'text':'abc','stall_after':3,'times':-1}]}", MW_KEY,
	    NULL);
	mk = x.mk;
	for (k = 0; k < rounds; k++) {
		struct mw_out out = {0};
		struct msg *m;
		uint64_t id = (uint64_t)k + 1;
		double t0;

		tw_send(&x.t, mw_call(id, req));
		/* Wait until the stream has started. */
		for (;;) {
			m = tw_recv(&x.t, MSG_CHUNK, 10000);
			if (mw_text(m)[0] == '\0')
				break;
			msg_destroy(&m);
		}
		msg_destroy(&m);
		m = msg_new(MSG_CANCEL);
		msg_set_int(m, "job", (int64_t)id);
		t0 = bench_now();
		tw_send(&x.t, m);
		m = mw_wait(&x, id, &out, 10000);
		fail[k] = bench_now() - t0;
		if (msg_type(m) != MSG_FAIL ||
		    strcmp(mw_fail_code(m), "canceled") != 0) {
			fprintf(stderr, "bench_model: round %d: %s\n", k,
			    mw_text(m));
			return -1;
		}
		msg_destroy(&m);
		mw_out_free(&out);
		closed[k] = bench_closed_at(&mk, k + 1, 10000) - t0;
		if (closed[k] < -1000) {
			fprintf(stderr,
			    "bench_model: round %d: the mock saw no "
			    "disconnect\n",
			    k);
			return -1;
		}
	}
	mw_stop(&x);
	return 0;
}

/* main - the table. */
int
main(void)
{
	static const int workers[] = {1, 2, 4, 8};
	long total = bench_env("SHIRO_BENCH_SUMMARIES", 240);
	int rounds = (int)bench_env("SHIRO_BENCH_CANCELS", 50), k, bad = 0;
	double limit = BENCH_INFLIGHT * 1000.0 / BENCH_LATENCY_MS;
	double *fail = calloc((size_t)rounds, sizeof(double));
	double *closed = calloc((size_t)rounds, sizeof(double));
	char *request = bench_request();
	struct mock mk;
	char script[256];

	snprintf(script, sizeof(script),
	    "{'auto':{'latency_ms':%d,'summary_bytes':300}}", BENCH_LATENCY_MS);
	mock_start(&mk, script);
	printf("\nmodel worker: compactions, mock answers after %d ms, %d in "
	       "flight\n",
	    BENCH_LATENCY_MS, BENCH_INFLIGHT);
	printf("workers  jobs each  summaries/s  limit/s  ratio (target "
	       ">= 90%%)\n");
	for (k = 0; k < 4; k++) {
		double rate = bench_throughput(
		    workers[k], &mk, request, total - total % BENCH_INFLIGHT);

		if (rate < 0) {
			printf("%7d  a job failed\n", workers[k]);
			bad++;
			continue;
		}
		printf("%7d  %9d  %11.1f  %7.0f  %5.1f%%%s\n", workers[k],
		    BENCH_INFLIGHT / workers[k], rate, limit,
		    100.0 * rate / limit,
		    rate >= 0.9 * limit ? "" : "  (below)");
	}
	mock_stop(&mk);
	if (bench_cancel(rounds, fail, closed) < 0) {
		printf("cancel: a round failed\n");
		bad++;
	} else {
		qsort(fail, (size_t)rounds, sizeof(double), bench_cmp);
		qsort(closed, (size_t)rounds, sizeof(double), bench_cmp);
		printf("\nmodel worker: CANCEL of a streaming call (%d rounds)"
		       "       p50      p99      max  (target < 100 ms)\n",
		    rounds);
		printf("CANCEL sent -> FAIL canceled received  %6.1f ms "
		       "%6.1f ms %6.1f ms\n",
		    bench_pct(fail, (size_t)rounds, 0.5),
		    bench_pct(fail, (size_t)rounds, 0.99), fail[rounds - 1]);
		printf("CANCEL sent -> the mock sees it close  %6.1f ms "
		       "%6.1f ms %6.1f ms\n",
		    bench_pct(closed, (size_t)rounds, 0.5),
		    bench_pct(closed, (size_t)rounds, 0.99),
		    closed[rounds - 1]);
	}
	free(fail);
	free(closed);
	free(request);
	snprintf(script, sizeof(script), "rm -rf %s", harness_tmpdir());
	if (system(script) != 0)
		bad++;
	return bad == 0 ? 0 : 1;
}
