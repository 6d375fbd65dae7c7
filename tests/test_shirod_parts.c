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

#include "broker/broker.h"
#include "broker/clients.h"
#include "broker/config.h"
#include "broker/pool.h"
#include "broker/provider.h"
#include "broker/timer.h"
#include "broker/zap.h"
#include "proto/err.h"
#include "proto/msg.h"
#include "proto/xmalloc.h"
#include "proto/log.h"
#include "proto/zsock.h"
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
	CHECK_EQ_INT(cfg.turns.max_steps, 50);
	CHECK_EQ_INT(cfg.turns.prune_bytes, 400000);
	CHECK_EQ_INT(cfg.turns.approval_ms, 600000);
	CHECK_EQ_INT(cfg.turns.workspace_idle_ms, 300000);
	CHECK_EQ_INT(cfg.turns.file_tool_ms, 120000);
	CHECK_EQ_INT(cfg.limits.turn_tokens, 0);
	CHECK_EQ_INT(cfg.limits.turn_uusd, 0);
	CHECK_EQ_INT(cfg.limits.day_uusd, 0);
	CHECK(cfg.permissions == NULL);
	CHECK_EQ_INT(cfg.yolo, 0);
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
	    " \"workers\": [\"ipc:///tmp/w.sock\", \"tcp://*:0\","
	    "   \"tcp://[::1]:7\"]},"
	    " \"providers\": {\"claude\": {\"type\": \"anthropic\","
	    "   \"model\": \"m\", \"keyEnv\": \"K\"}},"
	    " \"workers\": [{\"role\": \"model\", \"provider\": \"claude\","
	    "   \"count\": 3}, {\"role\": \"tool\", \"count\": 2,"
	    "   \"path\": \"/bin/x\"}],"
	    " \"memory\": {\"ceiling\": 6000, \"floor\": 3000,"
	    "   \"compactionCeiling\": 2000, \"compactionFloor\": 1000,"
	    "   \"jobs\": 2, \"settleTimeoutMs\": 5, \"retryMs\": 200,"
	    "   \"failures\": 4, \"provider\": \"claude\"},"
	    " \"turns\": {\"provider\": \"claude\", \"maxSteps\": 7,"
	    "   \"pruneBytes\": 9000, \"approvalTimeoutMs\": 2000,"
	    "   \"workspaceIdleMs\": 300, \"fileToolMs\": 4500},"
	    " \"limits\": {\"maxTurnTokens\": 123456,"
	    "   \"maxSpendUsd\": {\"turn\": 0.25, \"day\": 3}},"
	    " \"heartbeat\": {\"intervalMs\": 100, \"liveness\": 5,"
	    "   \"remoteLiveness\": 8},"
	    " \"restart\": {\"minMs\": 20, \"maxMs\": 400},"
	    " \"clients\": {\"max\": 9, \"replay\": 10, \"rate\": 100,"
	    "   \"burst\": 20, \"perRound\": 7},"
	    " \"permissions\": {\"rules\": [\"allow bash(make *)\"],"
	    "   \"protect\": [\"*.lock\"], \"yolo\": true},"
	    " \"sandbox\": {\"anything\": [1, 2]}}";

	CHECKF(load(text, &cfg, &err) == 0, "%s", err);
	/* A tcp endpoint is one more: the ipc one stays. */
	CHECK_EQ_STR(cfg.client_endpoint, "ipc:///h/run/shirod.sock");
	CHECK_EQ_INT(cfg.nclient_tcp, 1);
	CHECK_EQ_STR(cfg.client_tcp[0], "tcp://127.0.0.1:5555");
	CHECK_EQ_STR(cfg.worker_endpoint, "ipc:///tmp/w.sock");
	CHECK_EQ_INT(cfg.nworker_tcp, 2);
	CHECK_EQ_STR(cfg.worker_tcp[0], "tcp://*:0");
	CHECK_EQ_STR(cfg.worker_tcp[1], "tcp://[::1]:7");
	CHECK_EQ_INT(cfg.remote_liveness, 8);
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
	CHECK_EQ_INT(cfg.turns.max_steps, 7);
	CHECK_EQ_INT(cfg.turns.prune_bytes, 9000);
	CHECK_EQ_INT(cfg.turns.approval_ms, 2000);
	CHECK_EQ_INT(cfg.turns.workspace_idle_ms, 300);
	CHECK_EQ_INT(cfg.turns.file_tool_ms, 4500);
	CHECK_EQ_INT(cfg.limits.turn_tokens, 123456);
	CHECK_EQ_INT(cfg.limits.turn_uusd, 250000);
	CHECK_EQ_INT(cfg.limits.day_uusd, 3000000);
	CHECK(cfg.permissions != NULL &&
	    strstr(cfg.permissions, "allow bash(make *)") != NULL);
	CHECK_EQ_INT(cfg.yolo, 1);
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
	    {"{\"workers\": [{\"role\": \"model\", \"workspace\": \"/w\"}]}",
		"workers[0].workspace"},
	    {"{\"workers\": [{\"role\": \"fs\", \"workspace\": \"w\"}]}",
		"workers[0].workspace"},
	    {"{\"workers\": [{\"role\": \"fs\", \"workspace\": \"/h/p\"}]}",
		"inside the chat's home"},
	    {"{\"workers\": [{\"role\": \"tool\", \"workspace\": \"/h\"}]}",
		"inside the chat's home"},
	    {"{\"workers\": {}}", "workers"},
	    {"{\"turns\": {\"provider\": \"offline\"}}", "turns.provider"},
	    {"{\"providers\": {\"x\": {\"type\": \"bogus\"}}}",
		"providers.x.type"},
	    {"{\"endpoints\": {\"clients\": \"udp://x\"}}",
		"endpoints.clients"},
	    {"{\"endpoints\": {\"clients\": \"tcp://host\"}}",
		"endpoints.clients"},
	    {"{\"endpoints\": {\"clients\": \"tcp://h:65536\"}}",
		"endpoints.clients"},
	    {"{\"endpoints\": {\"workers\": \"tcp://a b:1\"}}",
		"endpoints.workers"},
	    {"{\"endpoints\": {\"workers\": []}}", "endpoints.workers"},
	    {"{\"endpoints\": {\"workers\": [\"ipc:///a\", \"ipc:///b\"]}}",
		"more than one ipc"},
	    {"{\"endpoints\": {\"clients\": [\"tcp://*:1\", \"tcp://*:2\","
	     " \"tcp://*:3\", \"tcp://*:4\", \"tcp://*:5\"]}}",
		"more than 4 tcp"},
	    {"{\"endpoints\": {\"clients\": [7]}}", "endpoints.clients"},
	    {"{\"heartbeat\": {\"remoteLiveness\": 1}}",
		"heartbeat.remoteLiveness"},
	    {"{\"restart\": {\"minMs\": 500, \"maxMs\": 100}}",
		"restart.maxMs"},
	    {"{\"memory\": {\"floor\": 1, \"floor\": 2}}", "config.json"},
	    {"{\"memory\": ", "config.json: line 1"},
	    {"[]", "config.json"},
	    {"{\"permissions\": 42}", "permissions: must be an object"},
	    {"{\"permissions\": {\"rules\": [\"alow bash\"]}}",
		"rule \"alow bash\""},
	    {"{\"permissions\": {\"rules\": [\"allow bash(x\"]}}",
		"allow bash(x"},
	    {"{\"permissions\": {\"yolo\": 1}}", "permissions"},
	    {"{\"permissions\": {\"rulez\": []}}", "permissions.rulez"},
	    {"{\"limits\": {\"maxSpendUsd\": 5}}", "limits.maxSpendUsd"},
	    {"{\"limits\": {\"maxSpendUsd\": {\"turn\": -1}}}",
		"limits.maxSpendUsd.turn"},
	    {"{\"limits\": {\"maxSpendUsd\": {\"week\": 1}}}",
		"limits.maxSpendUsd.week"},
	    {"{\"limits\": {\"maxTurnTokens\": \"many\"}}",
		"limits.maxTurnTokens"},
	    {"{\"turns\": {\"pruneBytes\": 10}}", "turns.pruneBytes"},
	    {"{\"turns\": {\"approvalTimeoutMs\": 0}}",
		"turns.approvalTimeoutMs"},
	    {"{\"turns\": {\"fileToolMs\": 999}}", "turns.fileToolMs"},
	    {"{\"network\": [true]}", "network: must be an object"},
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

/* At most 1,000 permission rules and 1,000 protected patterns: 1,000 load,
 * the 1,001st of either is refused, naming the cap. */
static void
config_caps_permission_rules(void)
{
	static const char *const keys[] = {"rules", "protect"};
	struct buf text = BUF_INIT;
	struct config cfg;
	size_t k, n, i;
	char *err;

	for (k = 0; k < 2; k++)
		for (n = 1000; n <= 1001; n++) {
			buf_reset(&text);
			buf_printf(
			    &text, "{\"permissions\": {\"%s\": [", keys[k]);
			for (i = 0; i < n; i++)
				buf_printf(&text,
				    k == 0 ? "%s\"allow bash(make t%zu)\""
					   : "%s\"secret%zu/**\"",
				    i ? ", " : "", i);
			buf_adds(&text, "]}}");
			err = NULL;
			if (n == 1000) {
				CHECKF(load(text.data, &cfg, &err) == 0,
				    "%s: 1000 refused: %s", keys[k],
				    err ? err : "");
				config_free(&cfg);
			} else {
				CHECKF(load(text.data, &cfg, &err) ==
					-SHIRO_ERR_CORRUPT,
				    "%s: 1001 loaded", keys[k]);
				CHECKF(err != NULL &&
					strstr(err, "at most 1000") != NULL,
				    "%s: %s", keys[k], err ? err : "");
			}
			free(err);
		}
	buf_free(&text);
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

/* timer_since never wraps: a stamp later than now is no time at all. */
static void
timer_since_never_wraps(void)
{
	CHECK_EQ_INT(timer_since(1000, 400), 600);
	CHECK_EQ_INT(timer_since(1000, 1000), 0);
	CHECK_EQ_INT(timer_since(1000, 1001), 0);
	CHECK_EQ_INT(timer_since(0, UINT64_MAX), 0);
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

/* wait_file - wait up to 5 s for path to exist and hold a full line. */
static void
wait_file(const char *path)
{
	struct stat st;
	int k;

	for (k = 0; k < 500; k++) {
		if (stat(path, &st) == 0 && st.st_size > 0)
			return;
		usleep(10000);
	}
	CHECKF(0, "%s never came", path);
}

/* read_line - the first line of path into buf (path must exist). */
static void
read_line(const char *path, char *buf, size_t len)
{
	FILE *f;

	wait_file(path);
	f = fopen(path, "r");
	CHECK(f != NULL);
	CHECK(fgets(buf, (int)len, f) != NULL);
	fclose(f);
}

/* read_cred - the credential a script worker saved from its fd 3. */
static void
read_cred(const char *path, struct zsock_cred *c)
{
	int fd;

	wait_file(path);
	fd = open(path, O_RDONLY);
	CHECK(fd >= 0);
	CHECKF(zsock_cred_read(fd, c) == 0, "a bad credential in %s", path);
	close(fd);
}

/* user_of - a struct msg_user holding id. */
static struct msg_user
user_of(const char *id)
{
	struct msg_user u;

	u.len = strlen(id);
	snprintf(u.id, sizeof(u.id), "%s", id);
	return u;
}

/*
 * The pool starts a real process per slot with the endpoint, role and
 * credential fd in argv, and on that fd a fresh credential whose public
 * key it admits under the slot's User-Id; READY from that User-Id is
 * matched once (a second one, or another role, is refused); a dead
 * process's key is dropped and its restart gets a new one; the job it
 * held comes back; a worker whose heartbeats stop is killed.
 */
static void
pool_supervises_real_processes(void)
{
	const char *dir = harness_tmpdir();
	struct config cfg;
	struct pool p;
	struct pool_worker *w;
	struct zap_keys keys = {0};
	struct zsock_keypair server;
	struct zsock_cred cred, cred2;
	struct msg_ident id = {3, {'a', 'b', 'c'}};
	struct msg_user u;
	unsigned char bin[ZSOCK_KEY_BIN];
	char text[4096], argsfile[512], credfile[512], line[512], *err = NULL;
	const char *why, *script;
	uint64_t job, jobs[4];
	unsigned nj;
	int st;
	pid_t pid;

	snprintf(argsfile, sizeof(argsfile), "%s/args", dir);
	snprintf(credfile, sizeof(credfile), "%s/cred", dir);
	snprintf(text, sizeof(text),
	    "cat <&3 > %s.tmp; mv %s.tmp %s\necho \"$@\" > %s\nexec sleep 30",
	    credfile, credfile, credfile, argsfile);
	script = write_script(dir, "worker", text);
	snprintf(text, sizeof(text),
	    "{\"workers\": [{\"role\": \"model\", \"count\": 1,"
	    " \"path\": \"%s\"}], \"heartbeat\": {\"intervalMs\": 100},"
	    " \"restart\": {\"minMs\": 50, \"maxMs\": 400}}",
	    script);
	CHECKF(config_load_text(dir, text, &cfg, &err) == 0, "%s", err);
	CHECK(zsock_keypair(&server) == 0);
	pool_init(&p, &cfg, "/nonexistent", &keys, server.pub);
	CHECK_EQ_INT(p.n, 1);
	w = &p.w[0];
	CHECK_EQ_INT(w->state, POOL_DOWN);
	pool_tick(&p, 1000, jobs, 4, &nj);
	CHECK_EQ_INT(w->state, POOL_STARTING);
	CHECK(w->pid > 0);
	CHECK_EQ_STR(w->user, "w0.1");
	/* argv carries the endpoint, role, provider and the fd. */
	read_line(argsfile, line, sizeof(line));
	CHECKF(strstr(line, "--endpoint ipc://") != NULL &&
		strstr(line,
		    "--provider offline --heartbeat-ms 100 "
		    "--cred-fd 3") != NULL,
	    "argv: %s", line);
	/* fd 3 held the credential: the server's key and a key pair whose
	 * public half is admitted as this slot's process. */
	read_cred(credfile, &cred);
	CHECK_EQ_STR(cred.server, server.pub);
	CHECK(zsock_key_decode(cred.own.pub, bin) == 0);
	CHECK(zap_keys_find(&keys, bin) != NULL);
	CHECK_EQ_STR(zap_keys_find(&keys, bin)->user, "w0.1");
	/* READY is matched by User-Id, once, with its role. */
	u = user_of("w0.9");
	CHECK(pool_by_user(&p, &u) == NULL);
	u = user_of("w0.1");
	CHECK(pool_by_user(&p, &u) == w);
	CHECK(pool_ready(w, &id, "tool", "offline", 1001, &why) ==
	    -SHIRO_ERR_PERM);
	CHECK(pool_ready(w, &id, "model", "other", 1001, &why) ==
	    -SHIRO_ERR_PERM);
	CHECK_EQ_INT(w->state, POOL_STARTING);
	CHECK(pool_ready(w, &id, "model", "offline", 1001, &why) == 0);
	CHECK_EQ_INT(w->state, POOL_IDLE);
	CHECK(pool_ready(w, &id, "model", "offline", 1001, &why) ==
	    -SHIRO_ERR_STATE);
	CHECK(pool_has_pid(&p, w->pid));
	CHECK(!pool_has_pid(&p, getpid()));
	CHECK(pool_idle(&p, CONFIG_ROLE_MODEL, "offline") == w);
	pool_assign(w, 42, 1002);
	CHECK(pool_idle(&p, CONFIG_ROLE_MODEL, "offline") == NULL);

	/* It dies: the job comes back, its key goes, a restart is planned. */
	kill(w->pid, SIGKILL);
	pid = reap_one(&st);
	CHECK(pid == w->pid);
	CHECK(pool_reaped(&p, pid, st, 2000, &job) == w);
	CHECK_EQ_INT(job, 42);
	CHECK_EQ_INT(w->state, POOL_DOWN);
	CHECK(zap_keys_find(&keys, bin) == NULL);
	CHECK(pool_by_user(&p, &u) == NULL);
	CHECK_EQ_INT(w->restart_at, 2050);
	pool_tick(&p, 2049, jobs, 4, &nj);
	CHECK_EQ_INT(w->state, POOL_DOWN);
	unlink(credfile);
	pool_tick(&p, 2050, jobs, 4, &nj);
	CHECK_EQ_INT(w->state, POOL_STARTING);
	CHECK_EQ_STR(w->user, "w0.2");
	read_cred(credfile, &cred2);
	CHECK(strcmp(cred2.own.pub, cred.own.pub) != 0);
	CHECK_EQ_INT(keys.n, 1);
	/* The old User-Id is the old process's: not this one's. */
	CHECK(pool_by_user(&p, &u) == NULL);
	u = user_of("w0.2");
	CHECK(pool_ready(pool_by_user(&p, &u), &id, "model", "offline", 2060,
		  &why) == 0);
	pool_assign(w, 43, 2060);
	/* Heartbeats stop: after 3 periods it is killed, job handed back,
	 * and its key is refused from then on. */
	pool_seen(w, 2100);
	pool_tick(&p, 2400, jobs, 4, &nj);
	CHECK_EQ_INT(nj, 0);
	pool_tick(&p, 2401, jobs, 4, &nj);
	CHECK_EQ_INT(nj, 1);
	CHECK_EQ_INT(jobs[0], 43);
	CHECK_EQ_INT(w->state, POOL_DYING);
	CHECK_EQ_INT(keys.n, 0);
	CHECK(pool_has_pid(&p, w->pid));
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
	zap_keys_free(&keys);
	config_free(&cfg);
}

/*
 * A worker's environment is the few variables the pool lets through and
 * SHIRO_HOME, whatever shirod's holds: no key variable, nothing else;
 * the jail's switches only with a short value; an fs worker with a
 * workspace gets --workspace.
 */
static void
pool_workers_get_a_small_environment(void)
{
	const char *dir = harness_tmpdir();
	struct config cfg;
	struct pool p;
	struct zap_keys keys = {0};
	struct zsock_keypair server;
	char text[4096], envfile[512], argsfile[512], *env, *err = NULL;
	const char *script;
	uint64_t jobs[2];
	unsigned nj;
	int st;
	FILE *f;
	size_t n;

	snprintf(envfile, sizeof(envfile), "%s/env", dir);
	snprintf(argsfile, sizeof(argsfile), "%s/args", dir);
	snprintf(text, sizeof(text),
	    "echo \"$@\" > %s\nenv > %s.tmp; mv %s.tmp %s\nexec sleep 30",
	    argsfile, envfile, envfile, envfile);
	script = write_script(dir, "fs", text);
	snprintf(text, sizeof(text),
	    "{\"workers\": [{\"role\": \"fs\", \"path\": \"%s\", "
	    "\"workspace\": \"/srv/ws\"}]}",
	    script);
	CHECKF(config_load_text(dir, text, &cfg, &err) == 0, "%s", err);
	setenv("OPENAI_API_KEY", "sk-leak-1", 1);
	setenv("SOME_TOKEN", "sk-leak-2", 1);
	setenv("LC_ALL", "C.UTF-8", 1);
	setenv("TZ", "UTC", 1);
	setenv("SHIRO_TOOL_NET", "1", 1);
	setenv("SHIRO_JAIL_CGROUP", "sk-leak-3-but-far-too-long", 1);
	setenv("SHIRO_HOME", "/somewhere/else", 1);
	CHECK(zsock_keypair(&server) == 0);
	pool_init(&p, &cfg, "/nonexistent", &keys, server.pub);
	pool_tick(&p, 1000, jobs, 2, &nj);
	CHECK(p.w[0].pid > 0);
	wait_file(envfile);
	f = fopen(envfile, "r");
	CHECK(f != NULL);
	env = xcalloc(1, 65536);
	n = fread(env, 1, 65535, f);
	fclose(f);
	CHECK(n > 0);
	CHECKF(strstr(env, "sk-leak") == NULL, "env: %s", env);
	CHECKF(strstr(env, "LC_ALL=C.UTF-8\n") != NULL, "env: %s", env);
	CHECK(strstr(env, "TZ=UTC\n") != NULL);
	CHECK(strstr(env, "SHIRO_TOOL_NET=1\n") != NULL);
	CHECK(strstr(env, "PATH=") != NULL);
	snprintf(text, sizeof(text), "SHIRO_HOME=%s\n", dir);
	CHECKF(strstr(env, text) != NULL, "env: %s", env);
	CHECK(strstr(env, "/somewhere/else") == NULL);
	free(env);
	read_line(argsfile, text, sizeof(text));
	CHECKF(strstr(text, "--cred-fd 3 --workspace /srv/ws") != NULL,
	    "argv: %s", text);
	kill(p.w[0].pid, SIGKILL);
	CHECK(reap_one(&st) == p.w[0].pid);
	pool_free(&p);
	zap_keys_free(&keys);
	config_free(&cfg);
}

/* The worker pids of the fake /proc below. */
static int
fake_is_worker(void *arg, pid_t pid)
{
	(void)arg;
	return pid == 100 || pid == 300;
}

/* fake_proc - dir/PID/stat with this "(comm) state ppid pgrp" line. */
static void
fake_proc(const char *dir, int pid, const char *comm, int ppid, int pgrp)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%d", dir, pid);
	CHECK(mkdir(path, 0700) == 0);
	snprintf(path, sizeof(path), "%s/%d/stat", dir, pid);
	f = fopen(path, "w");
	CHECK(f != NULL);
	fprintf(f, "%d (%s) S %d %d %d 0 -1 4194560 100 0 0 0\n", pid, comm,
	    ppid, pgrp, pgrp);
	fclose(f);
}

/* client_ok - zap_client_check on "localhost:uid:0:pid"; 0 or -1, with
 * the reason in why. */
static int
client_ok(const struct zap *z, unsigned uid, int pid, char *why, size_t len)
{
	char addr[64];

	snprintf(addr, sizeof(addr), "localhost:%u:0:%d", uid, pid);
	return zap_client_check(z, addr, why, len) == 0 ? 0 : -1;
}

/*
 * The clients' socket admits a peer of shirod's uid whose pid, parent
 * chain and process group reach no worker; it refuses a worker, its
 * descendant, a process left in a worker's group, another uid, a peer
 * without credentials (tcp), pid 0, a pid whose /proc entry cannot be
 * read and a chain longer than it walks.  (A fake /proc.)
 */
static void
zap_client_check_walks_the_ancestry(void)
{
	const char *dir = harness_tmpdir();
	struct zap z;
	char why[192];
	unsigned me = (unsigned)geteuid();
	int k;

	memset(&z, 0, sizeof(z));
	z.uid = geteuid();
	z.is_worker = fake_is_worker;
	z.proc = dir;
	fake_proc(dir, 100, "shiro-model-wor", 1, 100);
	fake_proc(dir, 101, "sh", 100, 101);
	fake_proc(dir, 102, "orphan", 1, 100);
	fake_proc(dir, 103, "shiro", 1, 103);
	fake_proc(dir, 104, "shiro", 105, 104);
	fake_proc(dir, 105, "bash", 1, 105);
	fake_proc(dir, 107, "a) S 300 300 (b", 1, 107);
	fake_proc(dir, 108, "sh", 101, 108);
	for (k = 200; k < 200 + ZAP_ANCESTORS + 1; k++)
		fake_proc(dir, k, "deep", k + 1, k);
	CHECK(client_ok(&z, me, 103, why, sizeof(why)) == 0);
	CHECK(client_ok(&z, me, 104, why, sizeof(why)) == 0);
	CHECKF(client_ok(&z, me, 107, why, sizeof(why)) == 0, "%s", why);
	CHECK(client_ok(&z, me, 100, why, sizeof(why)) == -1);
	CHECKF(strstr(why, "is a worker") != NULL, "%s", why);
	CHECK(client_ok(&z, me, 101, why, sizeof(why)) == -1);
	CHECKF(strstr(why, "descendant") != NULL, "%s", why);
	CHECK(client_ok(&z, me, 108, why, sizeof(why)) == -1);
	CHECKF(strstr(why, "descendant") != NULL, "%s", why);
	CHECK(client_ok(&z, me, 102, why, sizeof(why)) == -1);
	CHECKF(strstr(why, "process group of worker 100") != NULL, "%s", why);
	CHECK(client_ok(&z, me + 1, 103, why, sizeof(why)) == -1);
	CHECKF(strstr(why, "runs as uid") != NULL, "%s", why);
	CHECK(client_ok(&z, me, 0, why, sizeof(why)) == -1);
	CHECK(client_ok(&z, me, 106, why, sizeof(why)) == -1);
	CHECKF(strstr(why, "cannot read") != NULL, "%s", why);
	CHECK(client_ok(&z, me, 200, why, sizeof(why)) == -1);
	CHECKF(strstr(why, "ancestors") != NULL, "%s", why);
	CHECK(zap_client_check(&z, "127.0.0.1", why, sizeof(why)) < 0);
	CHECKF(strstr(why, "no peer credentials") != NULL, "%s", why);
	CHECK(zap_client_check(&z, "::1", why, sizeof(why)) < 0);
	CHECK(zap_client_check(&z, "localhost:x:0:103", why, sizeof(why)) < 0);
	CHECK(zap_client_check(&z, "localhost::0:103", why, sizeof(why)) < 0);
	CHECK(zap_client_check(
		  &z, "localhost:0:0:99999999999", why, sizeof(why)) < 0);
}

/* The allowed-key table: a User-Id has one key at a time; a dropped
 * key is no longer found. */
static void
zap_keys_hold_one_key_per_user(void)
{
	struct zap_keys t = {0};
	unsigned char a[ZSOCK_KEY_BIN], b[ZSOCK_KEY_BIN];

	memset(a, 1, sizeof(a));
	memset(b, 2, sizeof(b));
	zap_keys_put(&t, a, "w0.1");
	CHECK_EQ_STR(zap_keys_find(&t, a)->user, "w0.1");
	zap_keys_put(&t, b, "w0.1");
	CHECK(zap_keys_find(&t, a) == NULL);
	CHECK_EQ_STR(zap_keys_find(&t, b)->user, "w0.1");
	zap_keys_put(&t, a, "w1.1");
	CHECK_EQ_INT(t.n, 2);
	zap_keys_drop(&t, "w0.1");
	CHECK(zap_keys_find(&t, b) == NULL);
	CHECK_EQ_STR(zap_keys_find(&t, a)->user, "w1.1");
	zap_keys_drop(&t, "w9.9");
	CHECK_EQ_INT(t.n, 1);
	zap_keys_free(&t);
}

/* Log lines about peers come out at most once a second; the next one
 * says how many were left out. */
static void
lograte_holds_lines_for_a_second(void)
{
	const char *dir = harness_tmpdir();
	char path[512], *text;
	struct lograte r = {0};
	int fd;
	FILE *f;
	long n;

	snprintf(path, sizeof(path), "%s/log", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	CHECK(fd >= 0);
	log_set_fd(fd);
	lograte_info(&r, 5000, "first %d", 1);
	lograte_info(&r, 5500, "second");
	lograte_info(&r, 5999, "third");
	lograte_info(&r, 6000, "fourth");
	log_set_fd(2);
	close(fd);
	f = fopen(path, "r");
	CHECK(f != NULL);
	text = xcalloc(1, 4096);
	n = (long)fread(text, 1, 4095, f);
	fclose(f);
	CHECK(n > 0);
	CHECKF(strstr(text, "first 1\n") != NULL, "%s", text);
	CHECK(strstr(text, "second") == NULL && strstr(text, "third") == NULL);
	CHECKF(strstr(text, "fourth (2 more like it left out)") != NULL, "%s",
	    text);
	free(text);
}

/* After a flush the broker compares the log's count with the planner's:
 * equal, it goes on; different, it stops with BROKER_EXIT_STORE. */
static void
broker_stops_when_planner_and_log_differ(void)
{
	const char *home = harness_tmpdir();
	struct store_msg_in m = {STORE_KIND_USER, "a", 1, NULL, 0};
	struct plan_settings ps;
	struct broker b;
	uint64_t id;

	memset(&b, 0, sizeof(b));
	CHECK_EQ_INT(store_open(home, NULL, &b.store, NULL), 0);
	plan_settings_default(&ps);
	CHECK_EQ_INT(plan_new(&ps, &b.plan), 0);
	CHECK_EQ_INT(store_append(b.store, &m, &id), 0);
	CHECK_EQ_INT(plan_append(b.plan, 1, 1), 0);
	CHECK_EQ_INT(broker_check_counts(&b), 0);
	CHECK_EQ_INT(b.broken, 0);
	CHECK_EQ_INT(store_append(b.store, &m, &id), 0);
	CHECK_EQ_INT(broker_check_counts(&b), -1);
	CHECK_EQ_INT(b.broken, BROKER_EXIT_STORE);
	CHECK(b.stop_now && b.stopping);
	plan_destroy(&b.plan);
	store_close(&b.store);
}

/* A program that cannot run leaves the slot down with a back-off. */
static void
pool_missing_program_backs_off(void)
{
	const char *dir = harness_tmpdir();
	struct config cfg;
	struct pool p;
	struct zap_keys keys = {0};
	char *err = NULL;
	uint64_t jobs[2];
	unsigned nj, k;

	CHECK_EQ_INT(
	    config_load_text(dir,
		"{\"restart\": {\"minMs\": 100, \"maxMs\": 1000}}", &cfg, &err),
	    0);
	CHECK_EQ_INT(resolve(&cfg, &err), 0);
	pool_init(&p, &cfg, "/nonexistent", &keys, "");
	for (k = 0; k < 10; k++)
		pool_tick(&p, 100000 * (k + 1), jobs, 2, &nj);
	CHECK_EQ_INT(p.w[0].state, POOL_DOWN);
	CHECK_EQ_INT(p.w[0].backoff_ms, 1000);
	CHECK_EQ_INT(pool_alive(&p), 0);
	pool_free(&p);
	zap_keys_free(&keys);
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
	struct zap_keys keys = {0};
	char *err = NULL;
	unsigned k;

	CHECK_EQ_INT(config_load_text("/h",
			 "{\"workers\": [{\"role\": \"model\", \"count\": "
			 "2}]}",
			 &cfg, &err),
	    0);
	CHECK_EQ_INT(resolve(&cfg, &err), 0);
	pool_init(&p, &cfg, "/nonexistent", &keys, "");
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
	zap_keys_free(&keys);
	config_free(&cfg);
	free(err);
}

/*
 * Remote slots: one per admitted key's name, made at its first READY
 * and no more than POOL_REMOTE_MAX; a READY on a new connection moves
 * the slot and hands back the job it held; one that stops heartbeating
 * goes down after heartbeat.remoteLiveness intervals (not liveness), its
 * job handed back, and is not restarted; a dropped one waits out the
 * back-off; local and remote workers of a provider are one pool.
 */
static void
pool_remote_slots(void)
{
	const char *dir = harness_tmpdir();
	struct config cfg;
	struct pool p;
	struct pool_worker *r, *r2;
	struct zap_keys keys = {0};
	struct zsock_keypair server;
	struct msg_ident a = {1, {'a'}}, c = {1, {'c'}};
	struct msg_user u;
	char *err = NULL, user[32];
	uint64_t jobs[4];
	unsigned nj, k;

	CHECKF(config_load_text(dir,
		   "{\"workers\": [{\"role\": \"model\", \"count\": 0}],"
		   " \"heartbeat\": {\"intervalMs\": 100, \"liveness\": 2,"
		   " \"remoteLiveness\": 6}, \"restart\": {\"minMs\": 50,"
		   " \"maxMs\": 400}}",
		   &cfg, &err) == 0,
	    "%s", err);
	CHECK(zsock_keypair(&server) == 0);
	pool_init(&p, &cfg, "/nonexistent", &keys, server.pub);
	CHECK_EQ_INT(p.n, 0);
	CHECK(pool_remote(&p, "r:gpu1", 0, 1000) == NULL);
	r = pool_remote(&p, "r:gpu1", 1, 1000);
	CHECK(r != NULL && r->remote && r->state == POOL_DOWN);
	CHECK(pool_remote(&p, "r:gpu1", 1, 1000) == r);
	CHECK_EQ_INT(pool_remote_ready(r, &a, "offline", 1000), 0);
	pool_capacity(r, 2);
	CHECK_EQ_INT(r->state, POOL_IDLE);
	u = user_of("r:gpu1");
	CHECK(pool_by_user(&p, &u) == r);
	/* One pool with the provider's workers: it takes jobs. */
	CHECK(pool_idle(&p, CONFIG_ROLE_MODEL, "offline") == r);
	pool_assign(r, 7, 1000);
	/* A READY on another connection: the slot moves, job 7 back. */
	CHECK_EQ_INT(pool_remote_ready(r, &c, "offline", 1100), 7);
	CHECK_EQ_INT(r->njobs, 0);
	CHECK(r->ident.len == 1 && r->ident.data[0] == 'c');
	CHECK_EQ_INT(r->starts, 2);
	/* Silent for 2 intervals (a local worker's liveness): still up;
	 * for more than 6: down, its job back, never spawned. */
	pool_assign(r, 8, 1100);
	pool_seen(r, 1100);
	pool_tick(&p, 1100 + 2 * 100 + 1, jobs, 4, &nj);
	CHECK_EQ_INT(nj, 0);
	CHECK_EQ_INT(r->state, POOL_BUSY);
	pool_tick(&p, 1100 + 6 * 100 + 1, jobs, 4, &nj);
	CHECK_EQ_INT(nj, 1);
	CHECK_EQ_INT(jobs[0], 8);
	CHECK_EQ_INT(r->state, POOL_DOWN);
	CHECK_EQ_INT(r->pid, 0);
	CHECK(r->restart_at > 1701);
	pool_tick(&p, 100000, jobs, 4, &nj);
	CHECK_EQ_INT(r->state, POOL_DOWN);
	CHECK_EQ_INT(pool_alive(&p), 0);
	/* At most POOL_REMOTE_MAX names. */
	for (k = 1; k < POOL_REMOTE_MAX; k++) {
		snprintf(user, sizeof(user), "r:w%u", k);
		CHECKF(pool_remote(&p, user, 1, 1000) != NULL, "slot %u", k);
	}
	CHECK(pool_remote(&p, "r:one-too-many", 1, 1000) == NULL);
	r2 = pool_remote(&p, "r:w5", 1, 1000);
	CHECK(r2 != NULL && r2 != r);
	pool_free(&p);
	zap_keys_free(&keys);
	config_free(&cfg);
}

static const struct harness_test tests[] = {
    HT(config_defaults_are_the_designs),
    HT(config_reads_every_section),
    HT(config_errors_name_the_key),
    HT(config_caps_permission_rules),
    HT(config_load_reads_the_file),
    HT(timer_since_never_wraps),
    HT(timers_fire_in_order),
    HT(timers_survive_a_random_mix),
    HT(pool_supervises_real_processes),
    HT(pool_remote_slots),
    HT(pool_workers_get_a_small_environment),
    HT(zap_client_check_walks_the_ancestry),
    HT(zap_keys_hold_one_key_per_user),
    HT(lograte_holds_lines_for_a_second),
    HT(broker_stops_when_planner_and_log_differ),
    HT(pool_missing_program_backs_off),
    HT(pool_holds_several_jobs),
    HT(clients_replay_ring),
    HT(clients_rate_and_limits),
};

HARNESS_MAIN(tests)
