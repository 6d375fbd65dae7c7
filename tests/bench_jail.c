/*
 * bench_jail - what a jailed `true` costs, side by side with a plain
 * fork+exec of true and with bubblewrap, in one run.
 *
 *	build/bench/bench_jail [ROUNDS]
 *
 * Prints one row per way of running true: the mean wall time per run
 * and the ratio to bwrap --unshare-all --ro-bind / / true.  `shiro run`
 * (the client, which execs shiro-jail) has a row when build/shiro is
 * there.  The last row is jail_run() in a child confined and locked down
 * as the tool worker is (sandbox_confine, sandbox_lockdown), which the
 * bench asks for each run over a pipe.
 */
#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "proto/err.h"
#include "sandbox/jail.h"
#include "sandbox/sandbox.h"

extern char **environ;

/* The ways of running true: no jail, jail_run(), shiro-jail, bwrap,
 * `shiro run`, and jail_run() in the tool role. */
#define BENCH_WAYS 6

/* bench_now - monotonic seconds. */
static double
bench_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* bench_cpu - CPU seconds (user and system) of this process and of
 * every child reaped so far, the jail's whole tree included. */
static double
bench_cpu(void)
{
	struct rusage self, kids;

	getrusage(RUSAGE_SELF, &self);
	getrusage(RUSAGE_CHILDREN, &kids);
	return self.ru_utime.tv_sec + self.ru_utime.tv_usec / 1e6 +
	    self.ru_stime.tv_sec + self.ru_stime.tv_usec / 1e6 +
	    kids.ru_utime.tv_sec + kids.ru_utime.tv_usec / 1e6 +
	    kids.ru_stime.tv_sec + kids.ru_stime.tv_usec / 1e6;
}

/* bench_spawn - fork+exec argv and wait; 0 if it exited 0, else a
 * line on stderr. */
static int
bench_spawn(char *const *argv)
{
	pid_t pid;
	int st;

	if (posix_spawnp(&pid, argv[0], NULL, NULL, argv, environ) != 0) {
		fprintf(stderr, "bench_jail: cannot run %s\n", argv[0]);
		return -1;
	}
	if (waitpid(pid, &st, 0) != pid)
		return -1;
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return 0;
	fprintf(stderr, "bench_jail: %s: status %d\n", argv[0], st);
	return -1;
}

/* bench_jail_once - jail_run of true in ws; 0 if it exited 0, else a
 * line on stderr. */
static int
bench_jail_once(const char *ws)
{
	static const char *const argv[] = {"true", NULL};
	struct jail_result res;
	struct jail_spec spec;
	int rc;

	jail_spec_init(&spec);
	spec.argv = argv;
	spec.workspace = ws;
	rc = jail_run(&spec, &res);
	if (rc != 0) {
		fprintf(stderr, "bench_jail: jail_run: %s\n", res.error);
		return -1;
	}
	if (res.exited && res.exit_code == 0)
		return 0;
	fprintf(stderr, "bench_jail: jail_run: exit %d signal %d\n",
	    res.exit_code, res.signal);
	return -1;
}

/* The child that runs jails in the tool role: requests on to[1],
 * answers (CPU seconds of its tree for the run, or a negative number)
 * on from[0]. */
struct bench_tool {
	pid_t pid;
	int to, from;
};

/* bench_tool_serve - in the child: lock down as the tool worker, then
 * run one jail per byte read. */
static void __attribute__((noreturn))
bench_tool_serve(const char *ws, int in, int out)
{
	struct sandbox_opts o = {ws, NULL, 0};
	struct sandbox *sb = NULL;
	double cpu, before;
	char c;

	if (sandbox_confine(SANDBOX_ROLE_TOOL, &o, &sb) != 0 ||
	    sandbox_lockdown(sb) != 0) {
		cpu = -1;
		(void)write(out, &cpu, sizeof(cpu));
		_exit(1);
	}
	sandbox_destroy(&sb);
	while (read(in, &c, 1) == 1) {
		before = bench_cpu();
		cpu = bench_jail_once(ws) == 0 ? bench_cpu() - before : -1;
		if (write(out, &cpu, sizeof(cpu)) != sizeof(cpu))
			break;
	}
	_exit(0);
}

/* bench_tool_start - fork the tool-role child; 0, or -1 if it cannot
 * lock down or run a jail here. */
static int
bench_tool_start(struct bench_tool *bt, const char *ws)
{
	int to[2], from[2];
	double cpu;

	if (pipe(to) != 0 || pipe(from) != 0)
		return -1;
	bt->pid = fork();
	if (bt->pid < 0)
		return -1;
	if (bt->pid == 0) {
		close(to[1]);
		close(from[0]);
		bench_tool_serve(ws, to[0], from[1]);
	}
	close(to[0]);
	close(from[1]);
	bt->to = to[1];
	bt->from = from[0];
	if (write(bt->to, "r", 1) != 1 ||
	    read(bt->from, &cpu, sizeof(cpu)) != sizeof(cpu) || cpu < 0)
		return -1;
	return 0;
}

/* bench_tool_once - one jail in the tool-role child: its CPU seconds
 * into *cpu; 0, or -1. */
static int
bench_tool_once(struct bench_tool *bt, double *cpu)
{
	if (write(bt->to, "r", 1) != 1 ||
	    read(bt->from, cpu, sizeof(*cpu)) != sizeof(*cpu) || *cpu < 0) {
		fprintf(stderr, "bench_jail: the tool role's jail failed\n");
		return -1;
	}
	return 0;
}

/* bench_tool_stop - end the child. */
static void
bench_tool_stop(struct bench_tool *bt)
{
	if (bt->pid <= 0)
		return;
	close(bt->to);
	close(bt->from);
	(void)waitpid(bt->pid, NULL, 0);
	bt->pid = 0;
}

int
main(int argc, char **argv)
{
	char self[4096], jailbin[4200], client[4200],
	    ws[] = "/tmp/shiro-bench-XXXXXX";
	char *plain[] = {"true", NULL};
	char *bwrap[] = {
	    "bwrap", "--unshare-all", "--ro-bind", "/", "/", "true", NULL};
	char *cli[] = {jailbin, "--workspace", ws, "--", "true", NULL};
	char *run[] = {client, "run", "--workspace", ws, "--", "true", NULL};
	double t[BENCH_WAYS] = {0}, c[BENCH_WAYS] = {0}, start, cstart;
	int rounds = argc > 1 ? atoi(argv[1]) : 200, i, k, have_bwrap, rc;
	int have_client, have_tool, ways, avail[BENCH_WAYS];
	struct bench_tool bt = {0, -1, -1};
	double tool_cpu;
	ssize_t n;
	char *slash;

	if (rounds <= 0 || rounds > 100000)
		rounds = 200;
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return 1;
	self[n] = '\0';
	slash = strrchr(self, '/');
	*slash = '\0';
	/* build/bench/bench_jail -> build/shiro-jail */
	snprintf(jailbin, sizeof(jailbin), "%s/../shiro-jail", self);
	snprintf(client, sizeof(client), "%s/../shiro", self);
	if (mkdtemp(ws) == NULL)
		return 1;
	have_bwrap = bench_spawn(bwrap) == 0;
	have_client = access(client, X_OK) == 0 && bench_spawn(run) == 0;
	have_tool = bench_tool_start(&bt, ws) == 0;
	for (ways = k = 0; k < BENCH_WAYS; k++)
		if ((k != 4 || have_client) && (k != 5 || have_tool))
			avail[ways++] = k;
	if (bench_jail_once(ws) != 0 || bench_spawn(cli) != 0) {
		fprintf(stderr, "bench_jail: the jail does not run here\n");
		bench_tool_stop(&bt);
		rmdir(ws);
		return 1;
	}
	/* Interleave the ways in a new random order each round: a
	 * network namespace is torn down in the background after its run,
	 * and that work lands on whichever run comes next, so a fixed order
	 * would charge each way for its predecessor. */
	srand((unsigned)time(NULL));
	for (i = 0; i < rounds; i++) {
		int order[BENCH_WAYS], j, tmp;
		memcpy(order, avail, sizeof(order));
		for (k = ways - 1; k > 0; k--) {
			j = rand() % (k + 1);
			tmp = order[k];
			order[k] = order[j];
			order[j] = tmp;
		}
		for (j = 0; j < ways; j++) {
			k = order[j];
			start = bench_now();
			cstart = bench_cpu();
			switch (k) {
			case 0:
				rc = bench_spawn(plain);
				break;
			case 1:
				rc = bench_jail_once(ws);
				break;
			case 2:
				rc = bench_spawn(cli);
				break;
			case 4:
				rc = bench_spawn(run);
				break;
			case 5:
				rc = bench_tool_once(&bt, &tool_cpu);
				break;
			default:
				rc = have_bwrap ? bench_spawn(bwrap) : 0;
				break;
			}
			if (rc != 0) {
				bench_tool_stop(&bt);
				rmdir(ws);
				return 1;
			}
			t[k] += bench_now() - start;
			/* The child's tree is reaped only at the end: it says
			 * its own CPU time for the run. */
			c[k] += k == 5 ? tool_cpu : bench_cpu() - cstart;
		}
	}
	bench_tool_stop(&bt);
	rmdir(ws);
	printf("bench_jail: %d runs each of true; per run: wall time, and CPU "
	       "time of the whole process tree\n",
	    rounds);
	printf("  %-42s %8s %8s %8s %8s\n", "how", "wall ms", "vs bwrap",
	    "cpu ms", "vs bwrap");
	{
		static const char *names[BENCH_WAYS] = {
		    "fork+exec true (no jail)", "jail_run() in-process",
		    "shiro-jail -- true",
		    "bwrap --unshare-all --ro-bind / / true",
		    "shiro run -- true (client + shiro-jail)",
		    "jail_run() in the tool role"};
		for (i = 0; i < ways; i++) {
			k = avail[i];
			if (k == 3 && !have_bwrap) {
				printf("  %-42s %8s\n", names[k], "absent");
				continue;
			}
			printf("  %-42s %8.3f", names[k], t[k] / rounds * 1e3);
			if (have_bwrap)
				printf(" %7.2fx", t[k] / t[3]);
			printf(" %8.3f", c[k] / rounds * 1e3);
			if (have_bwrap && c[3] > 0)
				printf(" %7.2fx", c[k] / c[3]);
			printf("\n");
		}
	}
	return 0;
}
