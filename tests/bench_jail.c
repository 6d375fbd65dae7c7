/*
 * bench_jail - what a jailed `true` costs, side by side with a plain
 * fork+exec of true and with bubblewrap, in one run.
 *
 *	build/bench/bench_jail [ROUNDS]
 *
 * Prints one row per way of running true: the mean wall time per run
 * and the ratio to bwrap --unshare-all --ro-bind / / true.  `shiro run`
 * (the client, which execs shiro-jail) has a row when build/shiro is
 * there.
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

extern char **environ;

/* The ways of running true: no jail, jail_run(), shiro-jail, bwrap and
 * `shiro run`. */
#define BENCH_WAYS 5

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
	int have_client, ways;
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
	ways = have_client ? BENCH_WAYS : BENCH_WAYS - 1;
	if (bench_jail_once(ws) != 0 || bench_spawn(cli) != 0) {
		fprintf(stderr, "bench_jail: the jail does not run here\n");
		rmdir(ws);
		return 1;
	}
	/* Interleave the ways in a new random order each round: a
	 * network namespace is torn down in the background after its run,
	 * and that work lands on whichever run comes next, so a fixed order
	 * would charge each way for its predecessor. */
	srand((unsigned)time(NULL));
	for (i = 0; i < rounds; i++) {
		int order[BENCH_WAYS] = {0, 1, 2, 3, 4}, j, tmp;
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
			default:
				rc = have_bwrap ? bench_spawn(bwrap) : 0;
				break;
			}
			if (rc != 0) {
				rmdir(ws);
				return 1;
			}
			t[k] += bench_now() - start;
			c[k] += bench_cpu() - cstart;
		}
	}
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
		    "shiro run -- true (client + shiro-jail)"};
		for (k = 0; k < ways; k++) {
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
