/*
 * test_shirod_parts - shirod's parts that need no daemon: the settings,
 * the timers, the worker pool's supervision (with real processes) and the
 * client registry's replay ring and rate limit.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "broker/clients.h"
#include "broker/config.h"
#include "broker/pool.h"
#include "broker/provider.h"
#include "broker/timer.h"
#include "proto/err.h"
#include "proto/msg.h"
#include "tests/harness.h"

/* load - config_load_text with home /h; returns rc and keeps the error. */
static int
load(const char *text, struct config *cfg, char **errp)
{
	return config_load_text("/h", text, cfg, errp);
}

/* resolve - the providers of cfg in an empty environment. */
static int
resolve(struct config *cfg, char **errp)
{
	char *env[] = {NULL};

	free(*errp);
	*errp = NULL;
	return provider_resolve(cfg, env, errp);
}

/* An empty file gives the design's numbers and the default endpoints. */
static void
config_defaults_are_the_designs(void)
{
	struct config cfg;
	char *err = NULL;

	CHECK_EQ_INT(load("{}", &cfg, &err), 0);
	CHECK_EQ_INT(cfg.memory.ceiling, 128000);
	CHECK_EQ_INT(cfg.memory.floor, 64000);
	CHECK_EQ_INT(cfg.memory.cceiling, 32000);
	CHECK_EQ_INT(cfg.memory.cfloor, 16000);
	CHECK_EQ_INT(cfg.memory.jobs, 8);
	CHECK_EQ_INT(cfg.memory.settle_ms, 20000);
	CHECK_EQ_INT(cfg.memory.retry_ms, 10000);
	CHECK_EQ_INT(cfg.memory.failures, 3);
	CHECK(cfg.memory.provider == NULL);
	CHECK_EQ_INT(resolve(&cfg, &err), 0);
	CHECK_EQ_STR(cfg.memory.provider, "offline");
	CHECK_EQ_STR(cfg.client_endpoint, "ipc:///h/run/shirod.sock");
	CHECK_EQ_STR(cfg.worker_endpoint, "ipc:///h/run/workers.sock");
	CHECK(cfg.turn_provider == NULL);
	CHECK_EQ_INT(cfg.heartbeat_ms, 1000);
	CHECK_EQ_INT(cfg.liveness, 3);
	/* The default pool: offline model workers for compaction. */
	CHECK_EQ_INT(cfg.nworkers, 1);
	CHECK_EQ_INT(cfg.workers[0].role, CONFIG_ROLE_MODEL);
	CHECK_EQ_STR(cfg.workers[0].provider, "offline");
	CHECK(cfg.workers[0].count >= 1);
	config_free(&cfg);
}

/* Every setting a user can write is read back. */
static void
config_reads_every_section(void)
{
	struct config cfg;
	char *err = NULL;
	const char *text =
	    "{\"endpoints\": {\"clients\": \"tcp://127.0.0.1:5555\","
	    " \"workers\": \"ipc:///tmp/w.sock\"},"
	    " \"providers\": {\"claude\": {\"type\": \"anthropic\","
	    "   \"model\": \"m\", \"keyEnv\": \"K\"}},"
	    " \"workers\": [{\"role\": \"model\", \"provider\": \"claude\","
	    "   \"count\": 3}, {\"role\": \"tool\", \"count\": 2,"
	    "   \"path\": \"/bin/x\"}],"
	    " \"memory\": {\"ceiling\": 6000, \"floor\": 3000,"
	    "   \"compactionCeiling\": 2000, \"compactionFloor\": 1000,"
	    "   \"jobs\": 2, \"settleTimeoutMs\": 5, \"retryMs\": 200,"
	    "   \"failures\": 4, \"provider\": \"claude\"},"
	    " \"turns\": {\"provider\": \"claude\"},"
	    " \"heartbeat\": {\"intervalMs\": 100, \"liveness\": 5},"
	    " \"restart\": {\"minMs\": 20, \"maxMs\": 400},"
	    " \"clients\": {\"max\": 9, \"replay\": 10, \"rate\": 100,"
	    "   \"burst\": 20, \"perRound\": 7},"
	    " \"permissions\": {\"anything\": [1, 2]}}";

	CHECKF(load(text, &cfg, &err) == 0, "%s", err);
	CHECK_EQ_STR(cfg.client_endpoint, "tcp://127.0.0.1:5555");
	CHECK_EQ_STR(cfg.worker_endpoint, "ipc:///tmp/w.sock");
	CHECK_EQ_INT(cfg.nproviders, 1);
	CHECK_EQ_STR(cfg.providers[0].type, "anthropic");
	CHECK_EQ_STR(cfg.providers[0].key_env, "K");
	CHECK_EQ_INT(cfg.nworkers, 2);
	CHECK_EQ_INT(cfg.workers[0].count, 3);
	CHECK_EQ_STR(cfg.workers[0].provider, "claude");
	CHECK_EQ_INT(cfg.workers[1].role, CONFIG_ROLE_TOOL);
	CHECK_EQ_STR(cfg.workers[1].path, "/bin/x");
	CHECK_EQ_INT(cfg.memory.ceiling, 6000);
	CHECK_EQ_INT(cfg.memory.cfloor, 1000);
	CHECK_EQ_INT(cfg.memory.jobs, 2);
	CHECK_EQ_INT(cfg.memory.failures, 4);
	CHECK_EQ_STR(cfg.turn_provider, "claude");
	CHECK_EQ_INT(cfg.heartbeat_ms, 100);
	CHECK_EQ_INT(cfg.liveness, 5);
	CHECK_EQ_INT(cfg.backoff_max_ms, 400);
	CHECK_EQ_INT(cfg.clients.per_round, 7);
	CHECK(config_provider(&cfg, "claude") != NULL);
	CHECK(config_provider(&cfg, "nope") == NULL);
	config_free(&cfg);
}

/* A broken file fails with a text that names the key. */
static void
config_errors_name_the_key(void)
{
	static const struct {
		const char *text, *want;
	} cases[] = {
	    {"{\"memory\": {\"floor\": \"x\"}}", "memory.floor"},
	    {"{\"memory\": {\"floor\": 200000}}", "memory.floor"},
	    {"{\"memory\": {\"jobs\": 0}}", "memory.jobs"},
	    {"{\"memory\": {\"celing\": 1}}", "memory.celing"},
	    {"{\"memroy\": {}}", "memroy"},
	    {"{\"memory\": {\"provider\": \"ghost\"}}", "memory.provider"},
	    {"{\"workers\": [{\"count\": 1}]}", "workers[0].role"},
	    {"{\"workers\": [{\"role\": \"chef\"}]}", "workers[0].role"},
	    {"{\"workers\": [{\"role\": \"fs\", \"provider\": \"offline\"}]}",
		"workers[0].provider"},
	    {"{\"workers\": {}}", "workers"},
	    {"{\"turns\": {\"provider\": \"offline\"}}", "turns.provider"},
	    {"{\"providers\": {\"x\": {\"type\": \"bogus\"}}}",
		"providers.x.type"},
	    {"{\"endpoints\": {\"clients\": \"udp://x\"}}",
		"endpoints.clients"},
	    {"{\"restart\": {\"minMs\": 500, \"maxMs\": 100}}",
		"restart.maxMs"},
	    {"{\"memory\": {\"floor\": 1, \"floor\": 2}}", "config.json"},
	    {"{\"memory\": ", "config.json: line 1"},
	    {"[]", "config.json"},
	};
	struct config cfg;
	size_t k;
	char *err;

	for (k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		err = NULL;
		CHECKF(load(cases[k].text, &cfg, &err) == -SHIRO_ERR_CORRUPT,
		    "case %zu loaded", k);
		CHECKF(err != NULL && strstr(err, cases[k].want) != NULL,
		    "case %zu: \"%s\" does not name %s", k, err ? err : "",
		    cases[k].want);
		free(err);
	}
}

/* config_load reads the file; none at all means the defaults. */
static void
config_load_reads_the_file(void)
{
	const char *home = harness_tmpdir();
	struct config cfg;
	char path[512], *err = NULL;
	FILE *f;

	CHECK_EQ_INT(config_load(home, &cfg, &err), 0);
	CHECK_EQ_INT(cfg.memory.ceiling, 128000);
	config_free(&cfg);
	snprintf(path, sizeof(path), "%s/config.json", home);
	f = fopen(path, "w");
	CHECK(f != NULL);
	fputs("{\"memory\": {\"ceiling\": 9000, \"floor\": \"big\"}}", f);
	fclose(f);
	CHECK(config_load(home, &cfg, &err) < 0);
	CHECK(err != NULL && strstr(err, "memory.floor") != NULL);
	free(err);
}

/* Timers fire in due order, ties in order of addition; cancel works. */
static void
timers_fire_in_order(void)
{
	struct timers t;
	uint64_t ids[200], arg;
	int kind, seen = 0, k, last = -1;

	timer_init(&t);
	for (k = 0; k < 200; k++)
		ids[k] = timer_add(
		    &t, (uint64_t)((k * 37) % 50) + 10, k, (uint64_t)k);
	for (k = 0; k < 200; k += 3)
		CHECK_EQ_INT(timer_cancel(&t, ids[k]), 0);
	CHECK_EQ_INT(timer_timeout(&t, 0, 1000), 10);
	CHECK_EQ_INT(timer_timeout(&t, 100, 1000), 0);
	CHECK_EQ_INT(timer_pop(&t, 9, &kind, &arg), 0);
	{
		uint64_t prev_when = 0;

		while (timer_pop(&t, 1000, &kind, &arg)) {
			uint64_t when = (uint64_t)((kind * 37) % 50) + 10;

			CHECK(kind % 3 != 0);
			CHECK(when >= prev_when);
			if (when == prev_when)
				CHECK(kind > last);
			prev_when = when;
			last = kind;
			seen++;
		}
	}
	CHECK_EQ_INT(seen, 200 - 67);
	CHECK_EQ_INT(timer_count(&t), 0);
	/* A fired timer's id stays dead after its slot is reused. */
	CHECK_EQ_INT(timer_cancel(&t, ids[1]), -SHIRO_ERR_NOENT);
	ids[0] = timer_add(&t, 5, 1, 1);
	CHECK_EQ_INT(timer_cancel(&t, ids[1]), -SHIRO_ERR_NOENT);
	CHECK_EQ_INT(timer_cancel(&t, ids[0]), 0);
	CHECK_EQ_INT(timer_timeout(&t, 0, 777), 777);
	timer_free(&t);
}

/* A random mix of adds, cancels and pops keeps the heap in order. */
static void
timers_survive_a_random_mix(void)
{
	struct timers t;
	uint64_t live[512], arg, now = 0, prev = 0;
	int nlive = 0, k, kind;
	unsigned seed = 7;

	timer_init(&t);
	for (k = 0; k < 20000; k++) {
		seed = seed * 1103515245u + 12345u;
		switch ((seed >> 16) % 3) {
		case 0:
			if (nlive < 512)
				live[nlive++] =
				    timer_add(&t, now + (seed >> 8) % 1000, 0,
					now + (seed >> 8) % 1000);
			break;
		case 1:
			if (nlive > 0) {
				int j = (int)((seed >> 4) % (unsigned)nlive);

				(void)timer_cancel(&t, live[j]);
				live[j] = live[--nlive];
			}
			break;
		default:
			now += 7;
			while (timer_pop(&t, now, &kind, &arg)) {
				CHECK(arg <= now);
				CHECK(arg >= prev);
				prev = arg;
			}
		}
	}
	timer_free(&t);
}

/* write_script - an executable shell script at dir/name; borrowed path. */
static const char *
write_script(const char *dir, const char *name, const char *body)
{
	static char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	CHECK(f != NULL);
	fprintf(f, "#!/bin/sh\n%s\n", body);
	fclose(f);
	CHECK_EQ_INT(chmod(path, 0755), 0);
	return path;
}

/* reap_one - wait up to 5 s for one child; its pid, status in *st. */
static pid_t
reap_one(int *st)
{
	pid_t pid;
	int k;

	for (k = 0; k < 500; k++) {
		pid = waitpid(-1, st, WNOHANG);
		if (pid > 0)
			return pid;
		usleep(10000);
	}
	return -1;
}

/*
 * The pool starts a real process per slot with the endpoint and role in
 * argv, restarts a dead one with a doubling back-off, hands back the job
 * it held, and kills a worker whose heartbeats stop.
 */
static void
pool_supervises_real_processes(void)
{
	const char *dir = harness_tmpdir();
	struct config cfg;
	struct pool p;
	struct pool_worker *w;
	struct msg_ident id = {3, {'a', 'b', 'c'}};
	char text[1024], argsfile[512], line[512], *err = NULL;
	const char *why, *script;
	uint64_t job, jobs[4];
	unsigned nj;
	int st;
	pid_t pid;
	FILE *f;

	snprintf(argsfile, sizeof(argsfile), "%s/args", dir);
	snprintf(
	    text, sizeof(text), "echo \"$@\" > %s\nexec sleep 30", argsfile);
	script = write_script(dir, "worker", text);
	snprintf(text, sizeof(text),
	    "{\"workers\": [{\"role\": \"model\", \"count\": 1,"
	    " \"path\": \"%s\"}], \"heartbeat\": {\"intervalMs\": 100},"
	    " \"restart\": {\"minMs\": 50, \"maxMs\": 400}}",
	    script);
	CHECKF(config_load_text(dir, text, &cfg, &err) == 0, "%s", err);
	pool_init(&p, &cfg, "/nonexistent");
	CHECK_EQ_INT(p.n, 1);
	w = &p.w[0];
	CHECK_EQ_INT(w->state, POOL_DOWN);
	pool_tick(&p, 1000, jobs, 4, &nj);
	CHECK_EQ_INT(w->state, POOL_STARTING);
	CHECK(w->pid > 0);
	/* argv carries the endpoint, role, provider and slot. */
	for (st = 0; st < 200 && access(argsfile, F_OK) != 0; st++)
		usleep(10000);
	usleep(50000);
	f = fopen(argsfile, "r");
	CHECK(f != NULL);
	CHECK(fgets(line, sizeof(line), f) != NULL);
	fclose(f);
	CHECKF(strstr(line, "--endpoint ipc://") != NULL &&
		strstr(line, "--provider offline --heartbeat-ms 100") != NULL,
	    "argv: %s", line);
	/* READY must come from the pid with its role and provider. */
	CHECK(pool_ready(&p, &id, "model", "offline", 1, 1001, &job, &why) ==
	    NULL);
	CHECK(pool_ready(&p, &id, "tool", "offline", (uint64_t)w->pid, 1001,
		  &job, &why) == NULL);
	CHECK(pool_ready(&p, &id, "model", "offline", (uint64_t)w->pid, 1001,
		  &job, &why) == w);
	CHECK_EQ_INT(w->state, POOL_IDLE);
	CHECK(pool_find(&p, &id) == w);
	CHECK(pool_idle(&p, CONFIG_ROLE_MODEL, "offline") == w);
	pool_assign(w, 42, 1002);
	CHECK(pool_idle(&p, CONFIG_ROLE_MODEL, "offline") == NULL);

	/* It dies: the job comes back and a restart is planned. */
	kill(w->pid, SIGKILL);
	pid = reap_one(&st);
	CHECK(pid == w->pid);
	CHECK(pool_reaped(&p, pid, st, 2000, &job) == w);
	CHECK_EQ_INT(job, 42);
	CHECK_EQ_INT(w->state, POOL_DOWN);
	CHECK_EQ_INT(w->restart_at, 2050);
	pool_tick(&p, 2049, jobs, 4, &nj);
	CHECK_EQ_INT(w->state, POOL_DOWN);
	pool_tick(&p, 2050, jobs, 4, &nj);
	CHECK_EQ_INT(w->state, POOL_STARTING);
	CHECK(pool_ready(&p, &id, "model", "offline", (uint64_t)w->pid, 2060,
		  &job, &why) == w);
	pool_assign(w, 43, 2060);
	/* Heartbeats stop: after 3 periods it is killed, job handed back. */
	pool_seen(w, 2100);
	pool_tick(&p, 2400, jobs, 4, &nj);
	CHECK_EQ_INT(nj, 0);
	pool_tick(&p, 2401, jobs, 4, &nj);
	CHECK_EQ_INT(nj, 1);
	CHECK_EQ_INT(jobs[0], 43);
	CHECK_EQ_INT(w->state, POOL_DYING);
	pid = reap_one(&st);
	CHECK(pid == w->pid);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	CHECK(pool_reaped(&p, pid, st, 2500, &job) == w);
	CHECK_EQ_INT(job, 0);
	/* The back-off doubled: 50, then 100. */
	CHECK_EQ_INT(w->restart_at, 2600);
	pool_stop(&p);
	pool_tick(&p, 10000, jobs, 4, &nj);
	CHECK_EQ_INT(w->state, POOL_DOWN);
	pool_free(&p);
	config_free(&cfg);
}

/* A program that cannot run leaves the slot down with a back-off. */
static void
pool_missing_program_backs_off(void)
{
	const char *dir = harness_tmpdir();
	struct config cfg;
	struct pool p;
	char *err = NULL;
	uint64_t jobs[2];
	unsigned nj, k;

	CHECK_EQ_INT(
	    config_load_text(dir,
		"{\"restart\": {\"minMs\": 100, \"maxMs\": 1000}}", &cfg, &err),
	    0);
	CHECK_EQ_INT(resolve(&cfg, &err), 0);
	pool_init(&p, &cfg, "/nonexistent");
	for (k = 0; k < 10; k++)
		pool_tick(&p, 100000 * (k + 1), jobs, 2, &nj);
	CHECK_EQ_INT(p.w[0].state, POOL_DOWN);
	CHECK_EQ_INT(p.w[0].backoff_ms, 1000);
	CHECK_EQ_INT(pool_alive(&p), 0);
	pool_free(&p);
	config_free(&cfg);
}

/* replay_count - a replay callback that counts and checks the order. */
static void
replay_count(void *arg, const struct msg *ev)
{
	uint64_t *st = arg, seq;

	CHECK_EQ_INT(msg_get_uint(ev, "seq", &seq), 0);
	CHECK_EQ_INT(seq, st[0] + 1);
	st[0] = seq;
	st[1]++;
}

/* The ring replays what a client missed, or says it cannot. */
static void
clients_replay_ring(void)
{
	struct config_clients cc = {10, 5, 100, 10, 10};
	struct clients c;
	struct msg *ev;
	uint64_t st[2];
	int k;

	clients_init(&c, &cc, 1000);
	st[0] = 0;
	st[1] = 0;
	CHECK_EQ_INT(clients_replay(&c, 0, replay_count, st), 0);
	CHECK_EQ_INT(st[1], 0);
	CHECK_EQ_INT(clients_replay(&c, 1, replay_count, st), -SHIRO_ERR_NOENT);
	for (k = 0; k < 8; k++) {
		ev = msg_new(MSG_EVENT);
		msg_set_str(ev, "ev", "message");
		CHECK(clients_publish(&c, &ev) != NULL);
		CHECK(ev == NULL);
	}
	CHECK_EQ_INT(c.seq, 8);
	/* Kept: 4..8.  After 3 the ring reaches; after 2 it does not. */
	st[0] = 3;
	st[1] = 0;
	CHECK_EQ_INT(clients_replay(&c, 3, replay_count, st), 0);
	CHECK_EQ_INT(st[1], 5);
	CHECK_EQ_INT(clients_replay(&c, 2, replay_count, st), -SHIRO_ERR_NOENT);
	st[0] = 8;
	st[1] = 0;
	CHECK_EQ_INT(clients_replay(&c, 8, replay_count, st), 0);
	CHECK_EQ_INT(st[1], 0);
	CHECK_EQ_INT(clients_replay(&c, 9, replay_count, st), -SHIRO_ERR_NOENT);
	clients_free(&c);
}

/* A client's bucket refuses a flood and refills with time; limits hold. */
static void
clients_rate_and_limits(void)
{
	struct config_clients cc = {2, 5, 100, 10, 10};
	struct msg_ident a = {1, {'a'}}, b = {1, {'b'}}, d = {1, {'d'}};
	struct clients_client *ca;
	struct clients c;
	int k, ok = 0;

	clients_init(&c, &cc, 1000);
	ca = clients_get(&c, &a, 0);
	CHECK(ca != NULL);
	CHECK(clients_get(&c, &a, 0) == ca);
	CHECK(clients_get(&c, &b, 0) != NULL);
	CHECK(clients_get(&c, &d, 0) == NULL); /* max 2 */
	for (k = 0; k < 100; k++)
		ok += clients_admit(&c, ca, 0) == 0;
	CHECK_EQ_INT(ok, 10); /* the burst */
	CHECK_EQ_INT(ca->refused, 90);
	/* 100 per second: after 50 ms, 5 more. */
	ok = 0;
	for (k = 0; k < 100; k++)
		ok += clients_admit(&c, ca, 50) == 0;
	CHECK_EQ_INT(ok, 5);
	/* b stays silent and expires; a was seen at 50. */
	CHECK_EQ_INT(clients_expire(&c, 1020), 1);
	CHECK(clients_find(&c, &b) == NULL);
	CHECK(clients_find(&c, &a) == ca);
	clients_drop(&c, ca);
	CHECK(clients_find(&c, &a) == NULL);
	clients_free(&c);
}

/* A worker takes up to READY's jobs at once; the dispatcher picks the
 * one with the fewest; a killed worker hands back its first job and
 * forgets all of them. */
static void
pool_holds_several_jobs(void)
{
	struct config cfg;
	struct pool p;
	struct pool_worker *a, *b;
	char *err = NULL;
	unsigned k;

	CHECK_EQ_INT(config_load_text("/h",
			 "{\"workers\": [{\"role\": \"model\", \"count\": "
			 "2}]}",
			 &cfg, &err),
	    0);
	CHECK_EQ_INT(resolve(&cfg, &err), 0);
	pool_init(&p, &cfg, "/nonexistent");
	CHECK_EQ_INT(p.n, 2);
	a = &p.w[0];
	b = &p.w[1];
	/* No process behind these slots: pid 0 is never signalled. */
	a->state = b->state = POOL_IDLE;
	pool_capacity(a, 3);
	pool_capacity(b, 100);
	CHECK_EQ_INT(b->max_jobs, POOL_JOBS_MAX);
	pool_capacity(b, 0);
	CHECK_EQ_INT(b->max_jobs, 1);
	/* a: 3 at once, b: 1.  Four jobs fill both, the fifth waits. */
	for (k = 1; k <= 4; k++) {
		struct pool_worker *w =
		    pool_idle(&p, CONFIG_ROLE_MODEL, "offline");

		CHECKF(w != NULL, "no room for job %u", k);
		pool_assign(w, k, 0);
	}
	CHECK(pool_idle(&p, CONFIG_ROLE_MODEL, "offline") == NULL);
	CHECK_EQ_INT(a->njobs, 3);
	CHECK_EQ_INT(b->njobs, 1);
	CHECK_EQ_INT(a->state, POOL_BUSY);
	CHECK(pool_holds(a, 3) || pool_holds(b, 3));
	/* One job done: its worker has room again, and stays busy. */
	CHECK(pool_done(a, a->jobs[1]) == 1);
	CHECK(pool_done(a, 99) == 0);
	CHECK(pool_idle(&p, CONFIG_ROLE_MODEL, "offline") == a);
	CHECK_EQ_INT(a->state, POOL_BUSY);
	CHECK(pool_done(b, b->jobs[0]) == 1);
	CHECK_EQ_INT(b->state, POOL_IDLE);
	/* Killed: the first job comes back, the slot holds none. */
	{
		uint64_t first = a->jobs[0];

		CHECK_EQ_INT(a->njobs, 2);
		CHECK(pool_kill(&p, a, "test", 0) == first);
	}
	CHECK_EQ_INT(a->njobs, 0);
	CHECK_EQ_INT(a->state, POOL_DYING);
	pool_free(&p);
	config_free(&cfg);
	free(err);
}

static const struct harness_test tests[] = {
    HT(config_defaults_are_the_designs),
    HT(config_reads_every_section),
    HT(config_errors_name_the_key),
    HT(config_load_reads_the_file),
    HT(timers_fire_in_order),
    HT(timers_survive_a_random_mix),
    HT(pool_supervises_real_processes),
    HT(pool_missing_program_backs_off),
    HT(pool_holds_several_jobs),
    HT(clients_replay_ring),
    HT(clients_rate_and_limits),
};

HARNESS_MAIN(tests)
