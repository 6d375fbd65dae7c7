/*
 * bench_plan - the planner's figures (docs/planner.md).
 *
 * A chat of messages at the gist's sizes (leaves 20-512 bytes, nodes
 * 300-512) runs through the planner with an instant compactor: after
 * each message every ready job is taken and built at once, then the
 * sawtooth runs.  Each run is a child process, so its peak memory
 * (getrusage maxrss) is its own: a run of 250,000 messages and one of
 * 1,000,000 show whether memory grows with the chat.
 *
 * The same chat is also written as a scenario (a "msg SIZE" line per
 * message, a "built L I SIZE" line per node) and played by
 * $SHIRO_PLAN --final, which formats only the line it prints: its time
 * is shown beside the planner's own.
 *
 * Usage: bench_plan [MESSAGES]   (default 1,000,000)
 */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "broker/plan.h"

/* What a child run reports to the parent through a pipe. */
struct bench_result {
	double secs;
	uint64_t messages;
	uint64_t batches;
	uint64_t merges;
	uint64_t jobs;
	uint64_t view_lines;
	uint64_t view_size;
};

/* bench_rand - xorshift64*, a fixed sequence. */
static uint64_t
bench_rand(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * UINT64_C(2685821657736338717);
}

/* bench_between - a number in [lo, hi]. */
static uint32_t
bench_between(uint64_t *s, uint32_t lo, uint32_t hi)
{
	return lo + (uint32_t)(bench_rand(s) % (hi - lo + 1));
}

/* bench_now - seconds on the monotonic clock. */
static double
bench_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* bench_compact - the instant compactor: build every ready job now. */
static uint64_t
bench_compact(struct plan *p, uint64_t *rng)
{
	struct plan_job job;
	uint64_t n = 0;
	uint32_t size;

	while (plan_work_take(p, &job) == 0) {
		size = job.free ? job.src_size : bench_between(rng, 300, 512);
		if (plan_built(p, job.l, job.i, size) < 0) {
			fprintf(stderr, "bench_plan: build refused\n");
			exit(1);
		}
		n++;
	}
	return n;
}

/* bench_chat - run messages through a fresh planner; fill *res. */
static void
bench_chat(uint64_t messages, struct bench_result *res)
{
	struct plan_settings set;
	struct plan_batch b;
	struct plan *p;
	uint64_t rng = 0x5eed, m;
	double start;

	plan_settings_default(&set);
	if (plan_new(&set, &p) < 0)
		exit(1);
	start = bench_now();
	for (m = 0; m < messages; m++) {
		if (plan_append(p, 1, bench_between(&rng, 20, 512)) < 0)
			exit(1);
		res->jobs += bench_compact(p, &rng);
		plan_sawtooth(p, &b);
		res->batches += b.ran;
		res->merges += b.nmerges;
	}
	res->secs = bench_now() - start;
	res->messages = messages;
	res->view_size = plan_view_size(p);
	{
		const struct plan_line *v;
		size_t n;

		plan_view(p, &v, &n);
		res->view_lines = n;
	}
	plan_destroy(&p);
}

/*
 * bench_batch - the time of one batch from just past 128 KB to 64 KB:
 * the view grows with the ceiling out of reach, then one sawtooth runs.
 */
static double
bench_batch(uint64_t *merges)
{
	struct plan_settings set;
	struct plan_batch b;
	struct plan *p;
	uint64_t rng = 0xba7c, warm;
	double start, secs;

	plan_settings_default(&set);
	set.ceiling = UINT64_MAX;
	if (plan_new(&set, &p) < 0)
		exit(1);
	/* A long chat first, so the batch meets a deep tree. */
	for (warm = 0; warm < 100000; warm++) {
		plan_append(p, 1, bench_between(&rng, 20, 512));
		bench_compact(p, &rng);
		if (warm % 200 == 0)
			plan_fit(p, PLAN_FLOOR, &b);
	}
	while (plan_view_size(p) <= PLAN_CEILING) {
		plan_append(p, 1, bench_between(&rng, 20, 512));
		bench_compact(p, &rng);
	}
	set.ceiling = PLAN_CEILING;
	plan_configure(p, &set);
	start = bench_now();
	plan_sawtooth(p, &b);
	secs = bench_now() - start;
	*merges = b.nmerges;
	if (plan_view_size(p) > PLAN_FLOOR) {
		fprintf(stderr, "bench_plan: batch stopped above the floor\n");
		exit(1);
	}
	plan_destroy(&p);
	return secs;
}

/*
 * bench_stuck - messages per second through a stuck sawtooth: 10,000
 * messages arrive unbuilt, then the compactor builds one job per new
 * message, so it stays 10,000 messages behind and no parent is ever
 * built.  The view is past its ceiling and shrinking the whole time:
 * every message runs a batch that can merge nothing.
 */
static double
bench_stuck(uint64_t messages, uint64_t *batches)
{
	struct plan_settings set;
	struct plan_batch b;
	struct plan_job job;
	struct plan *p;
	uint64_t rng = 0x57c4, m;
	double start, secs;

	plan_settings_default(&set);
	if (plan_new(&set, &p) < 0)
		exit(1);
	*batches = 0;
	start = bench_now();
	for (m = 0; m < 10000 + messages; m++) {
		if (plan_append(p, 0, bench_between(&rng, 20, 512)) < 0)
			exit(1);
		if (m >= 10000 && plan_work_take(p, &job) == 0 &&
		    plan_built(p, job.l, job.i,
			job.free ? job.src_size
				 : bench_between(&rng, 300, 512)) < 0)
			exit(1);
		plan_sawtooth(p, &b);
		if (b.nmerges > 0) {
			fprintf(stderr, "bench_plan: a stuck batch merged\n");
			exit(1);
		}
		*batches += b.ran;
	}
	secs = bench_now() - start;
	if (!plan_shrinking(p) || plan_unbuilt(p) != 10000) {
		fprintf(stderr, "bench_plan: the stuck view got unstuck\n");
		exit(1);
	}
	plan_destroy(&p);
	return (double)(10000 + messages) / secs;
}

/* bench_child - run bench_chat in a child; its result and maxrss (KB). */
static void
bench_child(uint64_t messages, struct bench_result *res, long *maxrss_kb)
{
	struct rusage ru;
	int fds[2], status;
	pid_t pid;

	if (pipe(fds) < 0)
		exit(1);
	if ((pid = fork()) < 0)
		exit(1);
	if (pid == 0) {
		struct bench_result r = {0};

		close(fds[0]);
		bench_chat(messages, &r);
		if (write(fds[1], &r, sizeof(r)) != (ssize_t)sizeof(r))
			_exit(1);
		_exit(0);
	}
	close(fds[1]);
	if (read(fds[0], res, sizeof(*res)) != (ssize_t)sizeof(*res))
		exit(1);
	close(fds[0]);
	if (wait4(pid, &status, 0, &ru) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0)
		exit(1);
	*maxrss_kb = ru.ru_maxrss;
}

/*
 * bench_final - write a chat of messages as a scenario and time
 * $SHIRO_PLAN --final on it: seconds, or a negative number when it
 * cannot run or fails.  The scenario's nodes are built at once, as the
 * instant compactor builds them (sizes 300-512).
 */
static double
bench_final(uint64_t messages)
{
	char path[] = "/tmp/bench_plan_XXXXXX";
	const char *prog = getenv("SHIRO_PLAN");
	struct plan_settings set;
	struct plan_batch b;
	struct plan_job job;
	struct plan *p;
	uint64_t rng = 0x5eed, m;
	uint32_t size;
	double start, secs = -1;
	FILE *f;
	int fd, status;
	pid_t pid;

	if (prog == NULL || prog[0] == '\0')
		prog = "build/shiro-plan";
	if ((fd = mkstemp(path)) < 0 || (f = fdopen(fd, "w")) == NULL)
		return -1;
	plan_settings_default(&set);
	set.node_size = UINT32_MAX; /* as shiro-plan runs it */
	if (plan_new(&set, &p) < 0)
		exit(1);
	fprintf(f, "budget %" PRIu64 " %" PRIu64 "\n", set.ceiling, set.floor);
	for (m = 0; m < messages; m++) {
		size = bench_between(&rng, 20, 512);
		fprintf(f, "msg %u\n", size);
		if (plan_append(p, 1, size) < 0 || plan_sawtooth(p, &b) < 0)
			exit(1);
		while (plan_work_take(p, &job) == 0) {
			size = bench_between(&rng, 300, 512);
			fprintf(
			    f, "built %u %" PRIu64 " %u\n", job.l, job.i, size);
			if (plan_built(p, job.l, job.i, size) < 0)
				exit(1);
		}
	}
	plan_destroy(&p);
	if (fclose(f) != 0)
		goto out;
	start = bench_now();
	if ((pid = fork()) < 0)
		goto out;
	if (pid == 0) {
		fd = open("/dev/null", O_WRONLY);
		if (fd >= 0)
			dup2(fd, STDOUT_FILENO);
		execl(prog, prog, "--final", path, (char *)NULL);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	    WEXITSTATUS(status) == 0)
		secs = bench_now() - start;
out:
	unlink(path);
	return secs;
}

int
main(int argc, char **argv)
{
	struct bench_result small = {0}, big = {0};
	long rss_small, rss_big;
	uint64_t messages = 1000000, bm, sbatches;
	double bsecs, stuck, final;

	if (argc > 1)
		messages = strtoull(argv[1], NULL, 10);
	if (messages < 4)
		messages = 4;
	bench_child(messages / 4, &small, &rss_small);
	bench_child(messages, &big, &rss_big);
	bsecs = bench_batch(&bm);
	stuck = bench_stuck(messages / 10, &sbatches);
	final = bench_final(messages);
	printf("planner bench (leaves 20-512 B, nodes 300-512 B, instant "
	       "compactor)\n");
	printf("%-44s %14s\n", "figure", "value");
	printf("%-44s %14" PRIu64 "\n", "messages", big.messages);
	printf("%-44s %14.0f\n", "messages/s through the planner",
	    (double)big.messages / big.secs);
	printf(
	    "%-44s %14" PRIu64 "\n", "batches (128 KB -> 64 KB)", big.batches);
	printf("%-44s %14" PRIu64 "\n", "merges in batches", big.merges);
	printf("%-44s %14" PRIu64 "\n", "nodes built", big.jobs);
	printf(
	    "%-44s %14" PRIu64 "\n", "view lines at the end", big.view_lines);
	printf("%-44s %14" PRIu64 "\n", "view bytes at the end", big.view_size);
	printf("%-44s %14.0f\n", "messages/s, stuck (10,000 unbuilt behind)",
	    stuck);
	printf(
	    "%-44s %14" PRIu64 "\n", "  batches run, none merging", sbatches);
	printf("%-44s %11.1f us\n", "one 128 KB -> 64 KB batch", bsecs * 1e6);
	printf("%-44s %14" PRIu64 "\n", "  merges in that batch", bm);
	printf(
	    "%-44s %11ld KB\n", "peak memory, 1/4 of the messages", rss_small);
	printf("%-44s %11ld KB\n", "peak memory, all the messages", rss_big);
	printf("%-44s %11.2f KB\n", "  growth per 1,000 more messages",
	    (double)(rss_big - rss_small) * 1000.0 /
		(double)(big.messages - small.messages));
	if (final < 0) {
		printf("%-44s %14s\n", "shiro-plan --final, the same chat",
		    "did not run");
	} else {
		printf("%-44s %12.2f s\n", "shiro-plan --final, the same chat",
		    final);
		printf("%-44s %13.1fx\n", "  its time / the planner's alone",
		    final / big.secs);
	}
	if (final >= 3.0)
		printf("note: shiro-plan --final over the target of 3 s\n");
	if ((double)big.messages / big.secs < 1e6)
		printf("note: below the target of 1,000,000 messages/s\n");
	return 0;
}
