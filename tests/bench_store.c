/*
 * bench_store - the store's figures (docs/store.md), as ratios measured in the
 * same run on the same file system:
 *
 *   - durable append latency (one write + fdatasync per message) against the
 *     floor: a raw write + fdatasync of the same line on a file beside it;
 *   - 8 appenders at once with group commit: messages/s, and that rate
 *     over 1/fsync latency (how many messages each fsync carries);
 *   - a node write, one LMDB commit each and 64 per commit;
 *   - cold open of a synthetic chat of 1,000,000 messages with all its
 *     nodes: time until the folded view is ready, and peak RSS.
 *
 * Usage: bench_store [DIR]   DIR on the file system to measure (default
 * $TMPDIR or /tmp).  SHIRO_BENCH_MSGS sets the size of the big chat
 * (default 1,000,000); it is generated once into BUILD/bench-chat-N and
 * reused.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "broker/fold.h"
#include "proto/buf.h"
#include "proto/err.h"
#include "proto/log.h"
#include "proto/xmalloc.h"
#include "store/store.h"

#define BENCH_APPENDS 400
#define BENCH_NODES 300
#define BENCH_WRITERS 8
#define BENCH_GROUP_SECS 3.0

/* bench_now - seconds on the monotonic clock. */
static double
bench_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* bench_cmp - qsort order of doubles. */
static int
bench_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* bench_pct - the p-th percentile of n sorted samples. */
static double
bench_pct(double *v, size_t n, double p)
{
	size_t k = (size_t)(p * (double)(n - 1) + 0.5);

	return v[k];
}

/* bench_open - open a store or die. */
static struct store *
bench_open(const char *home)
{
	struct store_openerr why;
	struct store *s;

	if (store_open(home, NULL, &s, &why) != 0)
		fatalx("open %s: %s", home, why.msg);
	return s;
}

/* bench_rm - remove a directory tree (a bench home). */
static void
bench_rm(const char *dir)
{
	char *cmd = xasprintf("rm -rf '%s'", dir);

	if (system(cmd) != 0)
		log_warnx("could not remove %s", dir);
	free(cmd);
}

/* bench_append - store appends and raw write+fsync, interleaved so that
 * both see the same disk; p50 and p99 of each. */
static void
bench_append(const char *dir)
{
	char *home = xasprintf("%s/bench-append", dir);
	char *raw = xasprintf("%s/bench-raw.jsonl", dir);
	double *ta = xcalloc(BENCH_APPENDS, sizeof(double));
	double *tr = xcalloc(BENCH_APPENDS, sizeof(double));
	char text[200], line[400];
	struct store_msg_in m;
	struct store *s;
	uint64_t id;
	double t0;
	int k, j, fd, len;

	bench_rm(home);
	s = bench_open(home);
	fd = open(raw, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0600);
	if (fd == -1)
		fatal("open %s", raw);
	memset(text, 'a', sizeof(text));
	for (k = 0; k < BENCH_APPENDS; k++) {
		m = (struct store_msg_in){
		    STORE_KIND_USER, text, sizeof(text), NULL, 0};
		/* The same bytes a message line has. */
		len = snprintf(line, sizeof(line),
		    "{\"i\":%d,\"kind\":\"user\",\"text\":\"%.*s\",\"size\":"
		    "200,\"date\":\"2026-11-30T00:00:00.000Z\"}\n",
		    k, (int)sizeof(text), text);
		/* Take turns going first, so that neither one always runs
		 * right after the other's journal commit. */
		for (j = 0; j < 2; j++) {
			t0 = bench_now();
			if ((j == 0) == (k % 2 == 0)) {
				if (store_append(s, &m, &id) != 0)
					fatalx("append: %s", store_errmsg(s));
				ta[k] = bench_now() - t0;
			} else {
				if (write(fd, line, (size_t)len) != len ||
				    fdatasync(fd) != 0)
					fatal("raw write");
				tr[k] = bench_now() - t0;
			}
		}
	}
	close(fd);
	store_close(&s);
	qsort(ta, BENCH_APPENDS, sizeof(double), bench_cmp);
	qsort(tr, BENCH_APPENDS, sizeof(double), bench_cmp);
	printf("%-52s %10.3f ms\n", "raw write+fdatasync p50 (the floor)",
	    bench_pct(tr, BENCH_APPENDS, 0.5) * 1e3);
	printf("%-52s %10.3f ms\n", "raw write+fdatasync p99",
	    bench_pct(tr, BENCH_APPENDS, 0.99) * 1e3);
	printf("%-52s %10.3f ms\n", "durable append p50",
	    bench_pct(ta, BENCH_APPENDS, 0.5) * 1e3);
	printf("%-52s %10.3f ms\n", "durable append p99",
	    bench_pct(ta, BENCH_APPENDS, 0.99) * 1e3);
	printf("%-52s %10.3f x  (target <= 1.15)\n", "append p50 / floor p50",
	    bench_pct(ta, BENCH_APPENDS, 0.5) /
		bench_pct(tr, BENCH_APPENDS, 0.5));
	bench_rm(home);
	unlink(raw);
	free(home);
	free(raw);
	free(ta);
	free(tr);
}

/* The group-commit bench: writers queue messages, one committer thread
 * (the broker's loop) logs whatever is queued with one fsync. */
struct bench_group {
	pthread_mutex_t mu;
	pthread_cond_t more, done;
	struct store *s;
	int queued; /* messages waiting */
	uint64_t committed; /* generation: batches done */
	int stop;
	uint64_t total, batches;
};

/* bench_writer - one appender: queue a message, wait for its commit. */
static void *
bench_writer(void *arg)
{
	struct bench_group *g = arg;
	uint64_t gen;

	pthread_mutex_lock(&g->mu);
	while (!g->stop) {
		g->queued++;
		gen = g->committed;
		pthread_cond_signal(&g->more);
		while (g->committed == gen && !g->stop)
			pthread_cond_wait(&g->done, &g->mu);
	}
	pthread_mutex_unlock(&g->mu);
	return NULL;
}

/* bench_floor - p50 of n raw write+fsync of a 300-byte line in dir. */
static double
bench_floor(const char *dir, int n)
{
	char *raw = xasprintf("%s/bench-floor.jsonl", dir), line[300];
	double *t = xcalloc((size_t)n, sizeof(double)), t0, p50;
	int k, fd;

	memset(line, 'f', sizeof(line));
	line[sizeof(line) - 1] = '\n';
	fd = open(raw, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0600);
	if (fd == -1)
		fatal("open %s", raw);
	for (k = 0; k < n; k++) {
		t0 = bench_now();
		if (write(fd, line, sizeof(line)) != (ssize_t)sizeof(line) ||
		    fdatasync(fd) != 0)
			fatal("raw write");
		t[k] = bench_now() - t0;
	}
	close(fd);
	unlink(raw);
	qsort(t, (size_t)n, sizeof(double), bench_cmp);
	p50 = bench_pct(t, (size_t)n, 0.5);
	free(t);
	free(raw);
	return p50;
}

/* bench_group - 8 writers and the committer for a few seconds; the
 * floor is measured again just before and after, on the same disk. */
static void
bench_group(const char *dir)
{
	double fsync_p50 = bench_floor(dir, 100);
	char *home = xasprintf("%s/bench-group", dir);
	struct store_msg_in m[BENCH_WRITERS];
	uint64_t ids[BENCH_WRITERS];
	pthread_t th[BENCH_WRITERS];
	struct bench_group g;
	char text[200];
	double t0, secs;
	int k, n;

	bench_rm(home);
	memset(&g, 0, sizeof(g));
	pthread_mutex_init(&g.mu, NULL);
	pthread_cond_init(&g.more, NULL);
	pthread_cond_init(&g.done, NULL);
	g.s = bench_open(home);
	memset(text, 'b', sizeof(text));
	for (k = 0; k < BENCH_WRITERS; k++) {
		m[k] = (struct store_msg_in){
		    STORE_KIND_USER, text, sizeof(text), NULL, 0};
		pthread_create(&th[k], NULL, bench_writer, &g);
	}
	t0 = bench_now();
	pthread_mutex_lock(&g.mu);
	while (bench_now() - t0 < BENCH_GROUP_SECS) {
		while (g.queued == 0)
			pthread_cond_wait(&g.more, &g.mu);
		n = g.queued;
		g.queued = 0;
		/* The fsync runs without the lock: writers keep queueing. */
		pthread_mutex_unlock(&g.mu);
		if (store_append_batch(g.s, m, (size_t)n, ids, NULL) != 0)
			fatalx("append: %s", store_errmsg(g.s));
		pthread_mutex_lock(&g.mu);
		g.total += (uint64_t)n;
		g.batches++;
		g.committed++;
		pthread_cond_broadcast(&g.done);
	}
	g.stop = 1;
	pthread_cond_broadcast(&g.done);
	pthread_mutex_unlock(&g.mu);
	secs = bench_now() - t0;
	for (k = 0; k < BENCH_WRITERS; k++)
		pthread_join(th[k], NULL);
	store_close(&g.s);
	fsync_p50 = (fsync_p50 + bench_floor(dir, 100)) / 2;
	printf("%-52s %10.0f /s\n", "8 appenders, group commit: messages",
	    (double)g.total / secs);
	printf("%-52s %10.2f\n", "  messages per fsync (batch size)",
	    (double)g.total / (double)g.batches);
	printf("%-52s %10.3f ms\n", "  raw write+fsync p50 around this run",
	    fsync_p50 * 1e3);
	printf("%-52s %10.2f x\n", "  rate / (1 / raw fsync p50)",
	    (double)g.total / secs * fsync_p50);
	bench_rm(home);
	free(home);
}

/* bench_nodes - node writes: one commit each, and 64 per commit. */
static void
bench_nodes(const char *dir)
{
	char *home = xasprintf("%s/bench-nodes", dir);
	double *t1 = xcalloc(BENCH_NODES, sizeof(double)), t0, tb;
	struct store_node_in v[64];
	struct store_msg_in m[64];
	uint64_t ids[64];
	char text[400];
	struct store *s;
	int k, j, rounds = 8;

	bench_rm(home);
	s = bench_open(home);
	memset(text, 'n', sizeof(text));
	for (k = 0; k < 64; k++)
		m[k] = (struct store_msg_in){STORE_KIND_USER, "m", 1, NULL, 0};
	for (k = 0; k < (BENCH_NODES + 64 * rounds) / 64 + 1; k++)
		if (store_append_batch(s, m, 64, ids, NULL) != 0)
			fatalx("append: %s", store_errmsg(s));
	for (k = 0; k < BENCH_NODES; k++) {
		t0 = bench_now();
		if (store_node_put(s, 0, (uint64_t)k, text, sizeof(text),
			sizeof(text), 0) != 0)
			fatalx("node: %s", store_errmsg(s));
		t1[k] = bench_now() - t0;
	}
	t0 = bench_now();
	for (j = 0; j < rounds; j++) {
		for (k = 0; k < 64; k++)
			v[k] = (struct store_node_in){0,
			    (uint64_t)(BENCH_NODES + j * 64 + k), text,
			    sizeof(text), sizeof(text), 0};
		if (store_node_put_batch(s, v, 64) != 0)
			fatalx("nodes: %s", store_errmsg(s));
	}
	tb = (bench_now() - t0) / (rounds * 64);
	store_close(&s);
	qsort(t1, BENCH_NODES, sizeof(double), bench_cmp);
	printf("%-52s %10.3f ms\n", "node write, one commit each, p50",
	    bench_pct(t1, BENCH_NODES, 0.5) * 1e3);
	printf("%-52s %10.3f ms\n", "node write, one commit each, p99",
	    bench_pct(t1, BENCH_NODES, 0.99) * 1e3);
	printf("%-52s %10.3f ms\n", "node write, 64 per commit, per node",
	    tb * 1e3);
	bench_rm(home);
	free(home);
	free(t1);
}

/* bench_drop - ask the kernel to forget the cached pages of one file. */
static void
bench_drop(const char *path)
{
	int fd = open(path, O_RDONLY);

	if (fd == -1)
		return;
	(void)posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	close(fd);
}

/* bench_build_dir - the build directory this program is in (the parent
 * of its tests/), caller frees. */
static char *
bench_build_dir(void)
{
	char self[4096], *slash;
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n <= 0)
		return xstrdup("build");
	self[n] = '\0';
	for (int k = 0; k < 2; k++) {
		slash = strrchr(self, '/');
		if (slash == NULL)
			return xstrdup("build");
		*slash = '\0';
	}
	return xstrdup(self);
}

/* bench_cold - generate the big chat once; then, in a fresh process,
 * open it and fold the view; time and peak RSS. */
static void
bench_cold(uint64_t msgs)
{
	char *bdir = bench_build_dir();
	char *home = xasprintf("%s/bench-chat-%" PRIu64, bdir, msgs);
	char *mark = xasprintf("%s/complete", home), *cmd;
	struct rusage ru;
	double t0, secs[2];
	int fds[2], st, k;
	pid_t pid;

	if (access(mark, F_OK) != 0) {
		bench_rm(home);
		printf("(generating a chat of %" PRIu64
		       " messages in %s ...)\n",
		    msgs, home);
		fflush(stdout);
		cmd =
		    xasprintf("build/shiro-store gen %" PRIu64 " %s >/dev/null "
			      "&& touch %s",
			msgs, home, mark);
		if (system(cmd) != 0)
			fatalx("gen failed (is build/shiro-store built?)");
		free(cmd);
	}
	/* Drop this chat's pages from the page cache: a cold start. */
	cmd = xasprintf("%s/chat/tree.lmdb/data.mdb", home);
	bench_drop(cmd);
	free(cmd);
	{
		char *dir = xasprintf("%s/chat/main", home);
		char *c2 = xasprintf("for f in %s/*.jsonl; do dd if=\"$f\" "
				     "iflag=nocache count=0 2>/dev/null; done",
		    dir);

		if (system(c2) != 0)
			log_warnx("could not drop the log's cache");
		free(c2);
		free(dir);
	}
	for (k = 0; k < 2; k++) {
		if (pipe(fds) != 0)
			fatal("pipe");
		pid = fork();
		if (pid == 0) {
			struct plan_settings ps;
			struct fold_report r;
			struct store *s;
			struct plan *p;
			double d;

			t0 = bench_now();
			s = bench_open(home);
			plan_settings_default(&ps);
			if (fold_view(s, &ps, &p, &r) != 0)
				fatalx("fold: %s", r.msg);
			d = bench_now() - t0;
			if (write(fds[1], &d, sizeof(d)) != sizeof(d))
				_exit(1);
			_exit(0);
		}
		close(fds[1]);
		if (read(fds[0], &secs[k], sizeof(secs[k])) != sizeof(secs[k]))
			fatalx("the cold open failed");
		close(fds[0]);
		if (wait4(pid, &st, 0, &ru) != pid)
			fatal("wait4");
		if (k == 0)
			printf("%-52s %10.3f s  (target < 1 s)\n",
			    "cold open to folded view (page cache dropped)",
			    secs[k]);
		else
			printf("%-52s %10.3f s\n",
			    "open to folded view (page cache warm)", secs[k]);
		printf("%-52s %10.1f MB  (target < 64 MB)\n", "  peak RSS",
		    (double)ru.ru_maxrss / 1024.0);
	}
	free(home);
	free(mark);
	free(bdir);
}

/* main - the whole table. */
int
main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : getenv("TMPDIR");
	const char *n = getenv("SHIRO_BENCH_MSGS");
	uint64_t msgs = n != NULL ? strtoull(n, NULL, 10) : 1000000;
	log_init("bench_store", LOG_LEVEL_WARN);
	if (dir == NULL || dir[0] == '\0')
		dir = "/tmp";
	printf(
	    "store bench (in %s; same file system for store and floor)\n", dir);
	printf("%-52s %13s\n", "figure", "value");
	bench_append(dir);
	bench_group(dir);
	bench_nodes(dir);
	bench_cold(msgs);
	return 0;
}
