/*
 * test_remote - shirod, its clients and its model workers on four
 * machines: network namespaces the test makes on this one (a broker
 * host, a client host and two worker hosts, each joined to the broker
 * host by a veth pair), with real programs in each: shirod, shiro,
 * shiro-worker with a mock provider on its own host's loopback, and
 * tests/remote_peer for the hostile and watching peers.
 *
 * Each namespace is held by a process of the test (unshare, then
 * pause): it and the veth pairs in it vanish when that process dies, so
 * nothing is left behind when a test fails or times out (the harness
 * kills the test's whole process group).  Every other process is ended
 * by its pid.  Without network namespaces (no root, no veth) the tests
 * are skipped and say why.
 *
 * Addresses: the broker host is 10.77.1.1 to the client host
 * (10.77.1.2), 10.77.2.1 to worker host 1 (10.77.2.2) and 10.77.3.1 to
 * worker host 2 (10.77.3.2).  shirod binds port 0 and the test reads the
 * ports back from its STATUS, over the ipc socket (a Unix socket file is
 * reached from any network namespace).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "proto/buf.h"
#include "proto/keys.h"
#include "proto/msg.h"
#include "proto/xmalloc.h"
#include "proto/zsock.h"
#include "tests/harness.h"
#include "tests/mock_util.h"
#include "tests/test_shirod_util.h"

/* The provider key of shirod's machine: it must never leave it. */
#define RT_BROKER_KEY "sk-broker-own-key-never-sent"

/* A mock's automatic answers: a compaction (its body holds the marker)
 * gets a summary line, anything else the reply. */
#define RT_AUTO(ms, reply) \
	"{'auto': {'latency_ms': " #ms ", 'marker': '----------', " \
	"'summary_bytes': 200, 'reply': '" reply "'}}"

/* A machine: the process holding its network namespace, and the ns. */
struct rt_host {
	const char *name;
	pid_t holder;
	int fd; /* its /proc/PID/ns/net */
};

static struct rt_host rt_b = {"broker", 0, -1}, rt_c = {"client", 0, -1},
		      rt_w1 = {"worker1", 0, -1}, rt_w2 = {"worker2", 0, -1};
static int rt_self = -1; /* the test's own network namespace */
static pid_t rt_pids[64]; /* started here, ended by pid at the end */
static int rt_npids;

/* rt_host_make - a process in a network namespace of its own; skips the
 * test when none can be made. */
static void
rt_host_make(struct rt_host *h)
{
	char path[64], c = 0;
	int fds[2];

	CHECK(pipe(fds) == 0);
	h->holder = fork();
	CHECK(h->holder >= 0);
	if (h->holder == 0) {
		close(fds[0]);
		(void)prctl(PR_SET_PDEATHSIG, SIGKILL);
		c = unshare(CLONE_NEWNET) == 0 ? 'K' : 'E';
		if (write(fds[1], &c, 1) != 1 || c == 'E')
			_exit(1);
		for (;;)
			pause();
	}
	close(fds[1]);
	if (read(fds[0], &c, 1) != 1 || c != 'K') {
		(void)waitpid(h->holder, NULL, 0);
		h->holder = 0;
		harness_skip("cannot make a network namespace here (%s)",
		    geteuid() == 0 ? "unshare failed" : "not root");
	}
	close(fds[0]);
	snprintf(path, sizeof(path), "/proc/%d/ns/net", (int)h->holder);
	h->fd = open(path, O_RDONLY | O_CLOEXEC);
	CHECK(h->fd >= 0);
}

/* rt_enter - the test's main thread (and what it forks next) moves into
 * host h's namespace; rt_leave goes back. */
static void
rt_enter(const struct rt_host *h)
{
	CHECKF(setns(h->fd, CLONE_NEWNET) == 0, "setns %s: %s", h->name,
	    strerror(errno));
}

static void
rt_leave(void)
{
	CHECK(setns(rt_self, CLONE_NEWNET) == 0);
}

/* rt_track - remember pid, to end it by its pid at the end. */
static pid_t
rt_track(pid_t pid)
{
	CHECK(pid > 0);
	if (rt_npids < (int)(sizeof(rt_pids) / sizeof(rt_pids[0])))
		rt_pids[rt_npids++] = pid;
	return pid;
}

/*
 * rt_spawn - run argv in host h with output (stdout and stderr) to the
 * file out, stdin from in (NULL: /dev/null), env added to the
 * environment; the pid (tracked).
 */
static pid_t
rt_spawn(const struct rt_host *h, const char *const *argv, const char *out,
    const char *in, const char *const *env)
{
	static const char *const drop[] = {
	    "SHIRO_HOME=", "SHIRO_ENDPOINT=", "SHIRO_SERVER_KEY=", NULL};
	const char *envp[256];
	size_t n = 0, k;
	pid_t pid;
	int fd;

	/* The environment is made here: between fork and exec the child
	 * only makes system calls (a thread of libzmq's may hold a lock
	 * of libc's or the sanitizer's at the fork). */
	for (char **e = environ; *e != NULL && n < 200; e++) {
		for (k = 0; drop[k] != NULL; k++)
			if (strncmp(*e, drop[k], strlen(drop[k])) == 0)
				break;
		if (drop[k] == NULL)
			envp[n++] = *e;
	}
	for (; env != NULL && *env != NULL && n < 255; env++)
		envp[n++] = *env;
	envp[n] = NULL;
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		if (setns(h->fd, CLONE_NEWNET) != 0)
			_exit(126);
		fd = open(in != NULL ? in : "/dev/null", O_RDONLY);
		if (fd >= 0)
			dup2(fd, 0);
		fd = open(out, O_WRONLY | O_CREAT | O_APPEND, 0600);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execve(argv[0], (char *const *)argv, (char *const *)envp);
		_exit(127);
	}
	return rt_track(pid);
}

/* rt_wait - wait up to ms for pid: its exit status, or -1 (killed). */
static int
rt_wait(pid_t pid, long ms)
{
	uint64_t end = tsd_now_ms() + (uint64_t)ms;
	int st, k;

	while (tsd_now_ms() < end) {
		if (waitpid(pid, &st, WNOHANG) == pid) {
			for (k = 0; k < rt_npids; k++)
				if (rt_pids[k] == pid)
					rt_pids[k] = 0;
			return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
		}
		usleep(5000);
	}
	kill(pid, SIGKILL);
	(void)waitpid(pid, &st, 0);
	for (k = 0; k < rt_npids; k++)
		if (rt_pids[k] == pid)
			rt_pids[k] = 0;
	return -1;
}

/* rt_run - run argv in h and wait (at most ms): its exit status. */
static int
rt_run(const struct rt_host *h, const char *const *argv, const char *out,
    const char *in, long ms)
{
	return rt_wait(rt_spawn(h, argv, out, in, NULL), ms);
}

/* rt_sh - a shell command in h (ip, tc): its exit status. */
static int __attribute__((format(printf, 2, 3)))
rt_sh(const struct rt_host *h, const char *fmt, ...)
{
	char cmd[512], out[PATH_MAX];
	const char *argv[] = {"/bin/sh", "-c", cmd, NULL};
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	snprintf(out, sizeof(out), "%s/net.log", harness_tmpdir());
	return rt_run(h, argv, out, NULL, 20000);
}

/* rt_net - the four hosts, their links and addresses. */
static void
rt_net(void)
{
	struct {
		struct rt_host *peer;
		const char *here, *there;
		int net;
	} links[] = {{&rt_c, "bc", "cb", 1}, {&rt_w1, "bw1", "w1b", 2},
	    {&rt_w2, "bw2", "w2b", 3}};
	size_t k;

	rt_self = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	CHECK(rt_self >= 0);
	rt_host_make(&rt_b);
	rt_host_make(&rt_c);
	rt_host_make(&rt_w1);
	rt_host_make(&rt_w2);
	CHECK(rt_sh(&rt_b, "ip link set lo up") == 0);
	for (k = 0; k < 3; k++) {
		CHECK(rt_sh(links[k].peer, "ip link set lo up") == 0);
		if (rt_sh(&rt_b,
			"ip link add %s type veth peer name %s netns %d",
			links[k].here, links[k].there,
			(int)links[k].peer->holder) != 0)
			harness_skip("cannot make veth pairs here (ip link add "
				     "type veth failed)");
		CHECK(rt_sh(&rt_b,
			  "ip addr add 10.77.%d.1/24 dev %s && ip link set %s "
			  "up",
			  links[k].net, links[k].here, links[k].here) == 0);
		CHECK(rt_sh(links[k].peer,
			  "ip addr add 10.77.%d.2/24 dev %s && ip link set %s "
			  "up",
			  links[k].net, links[k].there, links[k].there) == 0);
	}
}

/* rt_end - end every process started here, by its pid, then the
 * namespaces' holders (which takes the namespaces and links away). */
static void
rt_end(void)
{
	struct rt_host *hosts[] = {&rt_b, &rt_c, &rt_w1, &rt_w2};
	int k;

	for (k = 0; k < rt_npids; k++)
		if (rt_pids[k] > 0)
			kill(rt_pids[k], SIGTERM);
	for (k = 0; k < rt_npids; k++)
		if (rt_pids[k] > 0)
			(void)rt_wait(rt_pids[k], 5000);
	for (k = 0; k < 4; k++) {
		if (hosts[k]->holder > 0) {
			kill(hosts[k]->holder, SIGKILL);
			(void)waitpid(hosts[k]->holder, NULL, 0);
		}
		if (hosts[k]->fd >= 0)
			close(hosts[k]->fd);
	}
}

/* rt_status - shirod's STATUS document (a REPLY; caller destroys). */
static struct msg *
rt_status(void *sock)
{
	struct msg *m = msg_new(MSG_STATUS), *r;

	r = tsd_call(sock, m, 10000, NULL);
	msg_destroy(&m);
	CHECKF(r != NULL && msg_type(r) == MSG_REPLY, "no STATUS answer");
	return r;
}

/* rt_at - the value at path ("a.b.0.c") of a STATUS reply, or NULL. */
static const struct msg_val *
rt_at(const struct msg *r, const char *path)
{
	const struct msg_val *v;
	char part[64];
	const char *p = path;
	size_t n;

	if (msg_get_map(r, "doc", &v) != 0)
		return NULL;
	while (v != NULL && *p != '\0') {
		n = strcspn(p, ".");
		snprintf(part, sizeof(part), "%.*s", (int)n, p);
		p += n + (p[n] == '.');
		if (v->type == MSG_V_MAP)
			v = msg_val_get(v, part);
		else if (v->type == MSG_V_ARR && (size_t)atoi(part) < v->u.a.n)
			v = v->u.a.items[atoi(part)];
		else
			v = NULL;
	}
	return v;
}

/* rt_int - the number at path of shirod's status, or -1. */
static int64_t
rt_int(void *sock, const char *path)
{
	struct msg *r = rt_status(sock);
	const struct msg_val *v = rt_at(r, path);
	int64_t n = v != NULL && v->type == MSG_V_INT ? v->u.i : -1;

	msg_destroy(&r);
	return n;
}

/* rt_str - the string at path of shirod's status, copied into out. */
static void
rt_str(void *sock, const char *path, char *out, size_t len)
{
	struct msg *r = rt_status(sock);
	const struct msg_val *v = rt_at(r, path);

	CHECKF(v != NULL && v->type == MSG_V_STR, "no %s in the status", path);
	snprintf(out, len, "%s", v->u.s.ptr);
	msg_destroy(&r);
}

/* rt_port - the port of the endpoint at path ("tcp://a.b.c.d:P"). */
static int
rt_port(void *sock, const char *path)
{
	char ep[256];
	const char *colon;

	rt_str(sock, path, ep, sizeof(ep));
	colon = strrchr(ep, ':');
	CHECK(colon != NULL);
	return atoi(colon + 1);
}

/* rt_remote - the status entry of remote worker name: its state and how
 * often it said READY, each -1 when it has no slot. */
static void
rt_remote(void *sock, const char *name, char *state, size_t len, int *starts,
    int64_t *jobs)
{
	struct msg *r = rt_status(sock);
	const struct msg_val *ws = rt_at(r, "workers"), *w, *v;
	size_t k;

	snprintf(state, len, "none");
	*starts = -1;
	*jobs = -1;
	for (k = 0; ws != NULL && ws->type == MSG_V_ARR && k < ws->u.a.n; k++) {
		w = ws->u.a.items[k];
		v = msg_val_get(w, "remote");
		if (v == NULL || v->type != MSG_V_STR ||
		    strcmp(v->u.s.ptr, name) != 0)
			continue;
		v = msg_val_get(w, "state");
		snprintf(state, len, "%s", v->u.s.ptr);
		v = msg_val_get(w, "starts");
		*starts = (int)v->u.i;
		v = msg_val_get(w, "jobs");
		*jobs = v->u.i;
	}
	msg_destroy(&r);
}

/* rt_wait_ready - wait up to ms until remote worker name is ready
 * (idle or busy) having said READY at least starts times. */
static void
rt_wait_ready(void *sock, const char *name, int starts, long ms)
{
	uint64_t end = tsd_now_ms() + (uint64_t)ms;
	char state[16];
	int got = -1;
	int64_t jobs;

	while (tsd_now_ms() < end) {
		rt_remote(sock, name, state, sizeof(state), &got, &jobs);
		if (got >= starts &&
		    (strcmp(state, "idle") == 0 || strcmp(state, "busy") == 0))
			return;
		usleep(50000);
	}
	CHECKF(0, "remote worker %s is not ready (%s, %d READYs) after %ld ms",
	    name, state, got, ms);
}

/* rt_wait_keys - wait until shirod admits n keys on side (clients,
 * workers): it reads the lists every heartbeat. */
static void
rt_wait_keys(void *sock, const char *side, int64_t n)
{
	char path[64];
	uint64_t end = tsd_now_ms() + 10000;

	snprintf(path, sizeof(path), "remote.%s.keys", side);
	while (tsd_now_ms() < end) {
		if (rt_int(sock, path) == n)
			return;
		usleep(20000);
	}
	CHECKF(0, "shirod does not admit %lld %s keys", (long long)n, side);
}

/* A broker: its home, its pid, its ipc socket, its tcp ports, its key. */
struct rt_broker {
	char home[512];
	pid_t pid;
	void *sock;
	int cport, wport;
	char key[ZSOCK_KEY_Z85 + 1];
	char cep[64]; /* tcp://10.77.1.1:cport */
	char wbind[64]; /* the workers' tcp endpoint to bind ("": port 0) */
	char url[64]; /* the provider's URL for its local workers ("": none
			 listens) */
	int local; /* local model workers of the provider */
};

/* rt_broker_start - shirod on the broker host, tcp endpoints for clients
 * (10.77.1.1) and workers (every address), provider "mock" for turns
 * and compactions with no local worker: only remote ones. */
static void
rt_broker_start(struct rt_broker *b, const char *extra)
{
	char cfg[4096];
	int st;

	snprintf(b->home, sizeof(b->home), "%s/broker", harness_tmpdir());
	CHECK(mkdir(b->home, 0700) == 0 || errno == EEXIST);
	tsd_write(b->home, "key", RT_BROKER_KEY "\n");
	snprintf(cfg, sizeof(cfg),
	    "{\"endpoints\": {\"clients\": [\"tcp://10.77.1.1:0\"],"
	    " \"workers\": \"%s\"},"
	    " \"providers\": {\"mock\": {\"type\": \"anthropic\", \"url\": "
	    "\"%s\", \"keyFile\": \"%s/key\"}},"
	    " \"turns\": {\"provider\": \"mock\"},"
	    " \"memory\": {\"provider\": \"mock\", \"jobs\": 8}%s,"
	    " \"workers\": [{\"role\": \"model\", \"provider\": \"mock\","
	    " \"count\": %d}]}",
	    b->wbind[0] ? b->wbind : "tcp://0.0.0.0:0",
	    b->url[0] ? b->url : "http://127.0.0.1:9", b->home,
	    extra != NULL ? extra : "", b->local);
	tsd_write(b->home, "config.json", cfg);
	rt_enter(&rt_b);
	b->pid = tsd_start(b->home, NULL, &st);
	rt_leave();
	CHECKF(b->pid > 0, "shirod did not start (status %d)", st);
	rt_track(b->pid);
	b->sock = tsd_connect(b->home);
	CHECK(b->sock != NULL);
	b->cport = rt_port(b->sock, "remote.clients.endpoints.0");
	b->wport = rt_port(b->sock, "remote.workers.endpoints.0");
	rt_str(b->sock, "remote.server_key", b->key, sizeof(b->key));
	snprintf(b->cep, sizeof(b->cep), "tcp://10.77.1.1:%d", b->cport);
}

/* A remote worker host: its mock, its home, its process. */
struct rt_worker {
	const struct rt_host *host;
	const char *name;
	struct mock mock;
	char home[512];
	char key[ZSOCK_KEY_Z85 + 1];
	char log[PATH_MAX];
	pid_t pid;
};

/* rt_worker_mock - the mock provider on w's host's loopback. */
static void
rt_worker_mock(struct rt_worker *w, const struct rt_host *host,
    const char *name, const char *script)
{
	const char *argv[] = {
	    tsd_bin("shiro-worker"), "--home", w->home, "--show-key", NULL};
	char out[PATH_MAX];
	FILE *f;

	memset(w, 0, sizeof(*w));
	w->host = host;
	w->name = name;
	snprintf(w->home, sizeof(w->home), "%s/%s", harness_tmpdir(), name);
	CHECK(mkdir(w->home, 0700) == 0);
	snprintf(w->log, sizeof(w->log), "%s/worker.log", w->home);
	rt_enter(host);
	mock_start(&w->mock, script);
	rt_leave();
	rt_track(w->mock.pid);
	/* Its own key pair, printed for shirod's machine to admit. */
	snprintf(out, sizeof(out), "%s/pub", w->home);
	CHECK(rt_run(host, argv, out, NULL, 10000) == 0);
	f = fopen(out, "r");
	CHECK(f != NULL && fgets(w->key, sizeof(w->key), f) != NULL);
	fclose(f);
	CHECK(strlen(w->key) == ZSOCK_KEY_Z85);
}

/* rt_worker_run - shiro-worker on w's host for broker b, through ep
 * (NULL: b's worker port on the host's link), its provider key in its
 * own variable. */
static void
rt_worker_run(struct rt_worker *w, const struct rt_broker *b, const char *ep,
    const char *jobs)
{
	char connect[64], url[64], keyenv[64];
	const char *env[] = {keyenv, NULL};
	const char *argv[] = {tsd_bin("shiro-worker"), "--home", w->home,
	    "--connect", connect, "--role", "model", "--provider", "mock",
	    "--type", "anthropic", "--base-url", url, "--key-env",
	    "RT_WORKER_KEY", "--jobs", jobs, "--server-key", b->key, NULL};

	if (ep != NULL)
		snprintf(connect, sizeof(connect), "%s", ep);
	else
		snprintf(connect, sizeof(connect), "tcp://10.77.%d.1:%d",
		    w->host == &rt_w1 ? 2 : 3, b->wport);
	snprintf(url, sizeof(url), "%s", w->mock.base);
	snprintf(
	    keyenv, sizeof(keyenv), "RT_WORKER_KEY=sk-%s-own-key", w->name);
	w->pid = rt_spawn(w->host, argv, w->log, NULL, env);
}

static const char *rt_text(const char *path);

/* rt_admit - admit w's key on b's machine with shiro keys add. */
static void
rt_admit(const struct rt_broker *b, const char *kind, const char *name,
    const char *key)
{
	const char *argv[] = {tsd_bin("shiro"), "--home", b->home, "keys",
	    "add", kind, name, key, NULL};
	char out[PATH_MAX];
	int rc;

	snprintf(out, sizeof(out), "%s/keys-%s-%s.log", harness_tmpdir(), kind,
	    name);
	rc = rt_run(&rt_b, argv, out, NULL, 30000);
	CHECKF(rc == 0, "shiro keys add (%d): %s", rc, rt_text(out));
}

/* rt_client_key - the client key of home on the client host (made on
 * first use by shiro keys), into key. */
static void
rt_client_key(const char *home, char key[ZSOCK_KEY_Z85 + 1])
{
	struct zsock_keypair kp;
	char *path = keys_path(home, KEYS_CLIENT);

	CHECK(mkdir(home, 0700) == 0 || errno == EEXIST);
	CHECK(keys_pair(path, 1, &kp, NULL) == 0);
	memcpy(key, kp.pub, ZSOCK_KEY_Z85 + 1);
	free(path);
}

/* rt_laptop - the client host's home (HARNESS/laptop) into chome, its
 * key made and admitted on b as "laptop", and b serving it. */
static void
rt_laptop(const struct rt_broker *b, char *chome, size_t len)
{
	char ckey[ZSOCK_KEY_Z85 + 1];

	snprintf(chome, len, "%s/laptop", harness_tmpdir());
	rt_client_key(chome, ckey);
	rt_admit(b, "client", "laptop", ckey);
	rt_wait_keys(b->sock, "clients", 1);
}

/* rt_shiro - run shiro on the client host (home, then args); exit status.
 * The output goes to out. */
static int
rt_shiro(const char *home, const char *out, const char *in, long ms, ...)
{
	const char *argv[32];
	va_list ap;
	int i = 0;

	argv[i++] = tsd_bin("shiro");
	argv[i++] = "--home";
	argv[i++] = home;
	va_start(ap, ms);
	while (i < 31 && (argv[i] = va_arg(ap, const char *)) != NULL)
		i++;
	va_end(ap);
	argv[i] = NULL;
	unlink(out);
	return rt_run(&rt_c, argv, out, in, ms);
}

/* rt_has - whether file path holds needle. */
static int
rt_has(const char *path, const char *needle)
{
	return tsd_file_has(path, needle) == 1;
}

/* rt_text - a file's text for a failure message (static, cut). */
static const char *
rt_text(const char *path)
{
	static char buf[1024];
	char *t = tsd_read_file(path);

	snprintf(buf, sizeof(buf), "%s", t != NULL ? t : "(none)");
	free(t);
	return buf;
}

/* rt_requests - the requests the mock of w got, and how many of them
 * were compactions (their body holds the marker). */
static size_t
rt_requests(const struct rt_worker *w, size_t *compactions)
{
	json_t *log = mock_log(&w->mock), *e;
	size_t k, n = 0;

	*compactions = 0;
	json_array_foreach(log, k, e)
	{
		if (strcmp(mock_str(e, "kind"), "request") != 0)
			continue;
		n++;
		if (strstr(mock_str(e, "body"), "----------") != NULL)
			(*compactions)++;
	}
	json_decref(log);
	return n;
}

/* rt_keys_own - every request the mock of w got carried w's own key,
 * and none carried shirod's. */
static void
rt_keys_own(const struct rt_worker *w)
{
	json_t *log = mock_log(&w->mock), *e;
	char want[64];
	size_t k, n = 0;

	snprintf(want, sizeof(want), "sk-%s-own-key", w->name);
	json_array_foreach(log, k, e)
	{
		if (strcmp(mock_str(e, "kind"), "request") != 0)
			continue;
		n++;
		CHECKF(strcmp(mock_header(e, "x-api-key"), want) == 0,
		    "request %zu at %s carried key \"%s\"", k, w->name,
		    mock_header(e, "x-api-key"));
	}
	json_decref(log);
	CHECK(n > 0);
	CHECKF(tsd_file_has(w->mock.log, RT_BROKER_KEY) == 0,
	    "shirod's own key reached %s's provider", w->name);
}

/* rt_send - n messages of 1000 bytes (each needs a summary line). */
static void
rt_send(void *sock, int n, const char *tag)
{
	char text[1100];
	int k;

	for (k = 0; k < n; k++) {
		snprintf(text, sizeof(text), "%s %d: ", tag, k);
		memset(text + strlen(text), 'w', 1000 - strlen(text));
		text[1000] = '\0';
		for (size_t j = 20; j < 1000; j += 9)
			text[j] = ' ';
		CHECK(tsd_send_text(sock, text, NULL, NULL) >= 0);
	}
}

/* rt_memory_has - whether a line of the view holds needle. */
static int
rt_memory_has(void *sock, const char *needle)
{
	struct msg *m = msg_new(MSG_MEMORY), *r;
	const struct msg_val *doc, *lines, *t;
	size_t k;
	int hit = 0;

	r = tsd_call(sock, m, 10000, NULL);
	msg_destroy(&m);
	CHECK(r != NULL && msg_get_map(r, "doc", &doc) == 0);
	lines = msg_val_get(doc, "lines");
	for (k = 0; lines != NULL && k < lines->u.a.n; k++) {
		t = msg_val_get(lines->u.a.items[k], "text");
		if (t != NULL && t->type == MSG_V_STR &&
		    strstr(t->u.s.ptr, needle) != NULL)
			hit = 1;
	}
	msg_destroy(&r);
	return hit;
}

/* rt_wait_has - wait up to ms until file path holds word. */
static bool
rt_wait_has(const char *path, const char *word, long ms)
{
	uint64_t end = tsd_now_ms() + (uint64_t)ms;

	while (!rt_has(path, word)) {
		if (tsd_now_ms() >= end)
			return false;
		usleep(20000);
	}
	return true;
}

/* rt_wait_line - wait up to ms for a line of file path holding word
 * after line skip; its leading number (ms), or -1. */
static long
rt_wait_line(const char *path, const char *word, int skip, long ms)
{
	uint64_t end = tsd_now_ms() + (uint64_t)ms;
	char line[256];
	FILE *f;
	int n;
	long t;

	while (tsd_now_ms() < end) {
		f = fopen(path, "r");
		n = 0;
		while (f != NULL && fgets(line, sizeof(line), f) != NULL) {
			if (n++ < skip)
				continue;
			if (strstr(line, word) != NULL &&
			    sscanf(line, "%ld", &t) == 1) {
				fclose(f);
				return t;
			}
		}
		if (f != NULL)
			fclose(f);
		usleep(20000);
	}
	return -1;
}

/* rt_one_worker - w1 on its host with the mock answering by script,
 * admitted, connected to b's workers endpoint (or ep) with jobs calls at
 * once, and READY within ms. */
static void
rt_one_worker(struct rt_broker *b, struct rt_worker *w1, const char *script,
    const char *ep, const char *jobs, long ms)
{
	rt_worker_mock(w1, &rt_w1, "w1", script);
	rt_admit(b, "worker", "w1", w1->key);
	rt_wait_keys(b->sock, "workers", 1);
	rt_worker_run(w1, b, ep, jobs);
	rt_wait_ready(b->sock, "w1", 1, ms);
}

/* rt_lines_with - the lines of file path now that hold needle (all of
 * them when it is NULL). */
static int
rt_lines_with(const char *path, const char *needle)
{
	char line[1024];
	FILE *f = fopen(path, "r");
	int n = 0;

	while (f != NULL && fgets(line, sizeof(line), f) != NULL)
		if (needle == NULL || strstr(line, needle) != NULL)
			n++;
	if (f != NULL)
		fclose(f);
	return n;
}

/* rt_lines - the lines of file path now. */
static int
rt_lines(const char *path)
{
	return rt_lines_with(path, NULL);
}

/*
 * A laptop attaches over tcp: its key admitted, one turn with -p, one
 * through the attached session (saved as a remote), then log, status,
 * memory and zoom by the remote's name: each answered by the build box,
 * the turns by the remote worker, which called its own provider with
 * its own key (never shirod's: no SECRET goes over tcp).  A client with
 * an unknown key is refused and named by its fingerprint in shirod's
 * log; one with a wrong server key finds nobody.
 */
static void
attach_and_turn_over_tcp(void)
{
	struct rt_broker b = {0};
	struct rt_worker w1;
	char chome[512], other[512];
	char out[PATH_MAX], in[PATH_MAX], okey[ZSOCK_KEY_Z85 + 1];
	char fp[KEYS_FP_LEN], wrong[ZSOCK_KEY_Z85 + 1], proc[64];
	unsigned char bin[ZSOCK_KEY_BIN];
	struct zsock_keypair kp;
	size_t comp;

	rt_net();
	rt_broker_start(&b, NULL);
	rt_one_worker(&b, &w1, RT_AUTO(0, "REPLY-FROM-W1"), NULL, "2", 20000);

	rt_laptop(&b, chome, sizeof(chome));
	snprintf(out, sizeof(out), "%s/out", harness_tmpdir());
	CHECKF(rt_shiro(chome, out, NULL, 60000, "--endpoint", b.cep,
		   "--server-key", b.key, "-p", "hello from the laptop",
		   (char *)NULL) == 0,
	    "shiro -p over tcp: %s", rt_text(out));
	CHECKF(rt_has(out, "REPLY-FROM-W1"), "%s", rt_text(out));

	/* The attached session, saved as remote "box". */
	snprintf(in, sizeof(in), "%s/in", harness_tmpdir());
	tsd_write(harness_tmpdir(), "in", "a second line, attached\n");
	CHECKF(rt_shiro(chome, out, in, 60000, "attach", b.cep, "--server-key",
		   b.key, "--save", "box", (char *)NULL) == 0,
	    "shiro attach over tcp: %s", rt_text(out));
	CHECKF(rt_has(out, "REPLY-FROM-W1"), "%s", rt_text(out));
	CHECKF(rt_shiro(chome, out, NULL, 20000, "--remote", "box", "log",
		   "--json", (char *)NULL) == 0,
	    "%s", rt_text(out));
	CHECKF(rt_has(out, "hello from the laptop") &&
		rt_has(out, "a second line, attached"),
	    "%s", rt_text(out));
	CHECK(rt_shiro(chome, out, NULL, 20000, "status", "--remote", "box",
		  (char *)NULL) == 0);
	CHECKF(rt_has(out, "messages"), "%s", rt_text(out));
	CHECK(rt_shiro(chome, out, NULL, 20000, "--remote", "box", "memory",
		  (char *)NULL) == 0);
	CHECK(rt_shiro(chome, out, NULL, 20000, "--remote", "box", "zoom", "0",
		  "1", (char *)NULL) == 0);
	CHECKF(rt_has(out, "hello from the laptop"), "%s", rt_text(out));

	/* No key of shirod's reached the remote worker's provider, and the
	 * worker's own key is in neither its argv nor its environment. */
	rt_keys_own(&w1);
	(void)rt_requests(&w1, &comp);
	snprintf(proc, sizeof(proc), "/proc/%d/cmdline", (int)w1.pid);
	CHECK(tsd_file_has(proc, "sk-w1-own-key") == 0);
	snprintf(proc, sizeof(proc), "/proc/%d/environ", (int)w1.pid);
	CHECK(tsd_file_has(proc, "sk-w1-own-key") == 0);

	/* A client whose key is not admitted: refused, and logged with its
	 * fingerprint. */
	snprintf(other, sizeof(other), "%s/stranger", harness_tmpdir());
	rt_client_key(other, okey);
	CHECK(rt_shiro(other, out, NULL, 20000, "--endpoint", b.cep,
		  "--server-key", b.key, "status", (char *)NULL) == 1);
	CHECKF(rt_has(out, "refused this client's key"), "%s", rt_text(out));
	CHECK(zsock_key_decode(okey, bin) == 0);
	keys_fingerprint(bin, fp);
	snprintf(in, sizeof(in), "%s/shirod.err", b.home);
	CHECKF(rt_has(in, "refused a client connection from 10.77.1.2") &&
		rt_has(in, fp),
	    "shirod's log does not name %s", fp);
	/* A wrong server key: no handshake, nobody answers. */
	CHECK(zsock_keypair(&kp) == 0);
	memcpy(wrong, kp.pub, sizeof(wrong));
	CHECKF(rt_shiro(chome, out, NULL, 20000, "--endpoint", b.cep,
		   "--server-key", wrong, "status", (char *)NULL) == 3,
	    "%s", rt_text(out));
	CHECKF(rt_has(out, "no shirod answers"), "%s", rt_text(out));
	/* stop from the laptop: the build box's shirod ends. */
	tsd_close(&b.sock);
	CHECKF(rt_shiro(chome, out, NULL, 30000, "--remote", "box", "stop",
		   (char *)NULL) == 0,
	    "%s", rt_text(out));
	CHECKF(rt_has(out, "shirod stopped"), "%s", rt_text(out));
	CHECK(rt_wait(b.pid, 20000) == 0);
	rt_end();
}

/* rt_two_workers - w1 and w2 on their hosts, mocks answering after ms,
 * jobs calls at once each, admitted and ready. */
static void
rt_two_workers(const struct rt_broker *b, struct rt_worker *w1,
    struct rt_worker *w2, const char *script, const char *jobs)
{
	rt_worker_mock(w1, &rt_w1, "w1", script);
	rt_worker_mock(w2, &rt_w2, "w2", script);
	rt_admit(b, "worker", "w1", w1->key);
	rt_admit(b, "worker", "w2", w2->key);
	rt_wait_keys(b->sock, "workers", 2);
	rt_worker_run(w1, b, NULL, jobs);
	rt_worker_run(w2, b, NULL, jobs);
	rt_wait_ready(b->sock, "w1", 1, 20000);
	rt_wait_ready(b->sock, "w2", 1, 20000);
}

/*
 * Two remote workers of the provider, two calls at once each, and the
 * mocks answering after 200 ms: the compactions of 40 messages spread
 * over both (each did a quarter at least), and every summary is built.
 */
static void
compactions_spread_over_both_workers(void)
{
	struct rt_broker b = {0};
	struct rt_worker w1, w2;
	size_t c1, c2;
	int64_t done;

	rt_net();
	rt_broker_start(&b, NULL);
	rt_two_workers(&b, &w1, &w2, RT_AUTO(200, "w"), "2");
	rt_send(b.sock, 40, "spread");
	CHECK(tsd_settle(b.sock, 90000, NULL) == 0);
	done = tsd_status_int(b.sock, "jobs_done");
	(void)rt_requests(&w1, &c1);
	(void)rt_requests(&w2, &c2);
	CHECKF(done > 0 && (int64_t)(c1 + c2) >= done,
	    "%lld jobs done, %zu + %zu calls", (long long)done, c1, c2);
	CHECKF(c1 * 4 >= c1 + c2 && c2 * 4 >= c1 + c2,
	    "not spread: w1 %zu calls, w2 %zu", c1, c2);
	rt_keys_own(&w1);
	rt_keys_own(&w2);
	rt_end();
}

/*
 * One pool: a local model worker of the provider (its mock on the
 * broker host, shirod's key) and a remote one (its own mock and key),
 * each four calls at once, mocks answering after 200 ms: the compactions
 * of 40 messages go to both (each a fifth at least), every summary is
 * built, and shirod's key reached the local mock only.
 */
static void
local_and_remote_workers_are_one_pool(void)
{
	struct rt_broker b = {0};
	struct rt_worker loc, w1;
	size_t cl, c1;
	int64_t done;

	rt_net();
	rt_worker_mock(&loc, &rt_b, "local", RT_AUTO(200, "local"));
	snprintf(b.url, sizeof(b.url), "%s", loc.mock.base);
	b.local = 1;
	rt_broker_start(&b, NULL);
	rt_one_worker(&b, &w1, RT_AUTO(200, "w1"), NULL, "4", 20000);
	rt_send(b.sock, 40, "one pool");
	CHECK(tsd_settle(b.sock, 90000, NULL) == 0);
	done = tsd_status_int(b.sock, "jobs_done");
	(void)rt_requests(&loc, &cl);
	(void)rt_requests(&w1, &c1);
	CHECKF(done > 0 && (int64_t)(cl + c1) >= done,
	    "%lld jobs done, %zu + %zu calls", (long long)done, cl, c1);
	CHECKF(cl * 5 >= cl + c1 && c1 * 5 >= cl + c1,
	    "not one pool: local %zu calls, remote %zu", cl, c1);
	CHECK(tsd_file_has(loc.mock.log, RT_BROKER_KEY) == 1);
	rt_keys_own(&w1);
	rt_end();
}

/*
 * Worker host 1 is cut off while its provider takes its time over a
 * compaction: the job goes to worker 2 once shirod has not heard from
 * worker 1 for its heartbeat window, and is built.  When the link is
 * back, worker 1 (locked down: it keeps its one socket, which libzmq
 * reconnects) says READY again, and its late answer for the finished
 * job changes nothing.
 */
static void
worker_cut_off_mid_call(void)
{
	struct rt_broker b = {0};
	struct rt_worker w1, w2;
	uint64_t cut, built;
	int64_t done;
	size_t c2;
	int starts;
	char state[16], proc[64];

	rt_net();
	rt_broker_start(&b, NULL);
	rt_worker_mock(&w1, &rt_w1, "w1",
	    "{'responses': [{'match': '----------', 'times': -1, "
	    "'delay_ms': 6000, 'text': 'LATE-W1-SUMMARY'}]}");
	rt_worker_mock(&w2, &rt_w2, "w2", RT_AUTO(0, "w2"));
	rt_admit(&b, "worker", "w1", w1.key);
	rt_admit(&b, "worker", "w2", w2.key);
	rt_wait_keys(b.sock, "workers", 2);
	rt_worker_run(&w1, &b, NULL, "1");
	rt_wait_ready(b.sock, "w1", 1, 20000);
	/* It is locked down: its system calls filtered on every thread. */
	snprintf(proc, sizeof(proc), "/proc/%d/status", (int)w1.pid);
	CHECKF(rt_has(proc, "Seccomp:\t2") && rt_has(proc, "NoNewPrivs:\t1"),
	    "worker 1 is not locked down: %s", rt_text(proc));
	rt_send(b.sock, 1, "cut");
	json_decref(mock_requests(&w1.mock, 1, 20000));
	rt_worker_run(&w2, &b, NULL, "1");
	rt_wait_ready(b.sock, "w2", 1, 20000);
	CHECK(tsd_status_int(b.sock, "jobs_done") == 0);

	CHECK(rt_sh(&rt_w1, "ip link set w1b down") == 0);
	CHECK(rt_sh(&rt_b, "ip link set bw1 down") == 0);
	cut = tsd_now_ms();
	CHECK(tsd_settle(b.sock, 40000, NULL) == 0);
	built = tsd_now_ms();
	done = tsd_status_int(b.sock, "jobs_done");
	CHECK_EQ_INT(done, 1);
	(void)rt_requests(&w2, &c2);
	CHECK_EQ_INT(c2, 1);
	/* heartbeat.remoteLiveness (5) intervals of 1 s, and the time to
	 * send and answer the job again. */
	CHECKF(built - cut < 20000, "the job took %llu ms to finish elsewhere",
	    (unsigned long long)(built - cut));
	CHECK(!rt_memory_has(b.sock, "LATE-W1"));

	CHECK(rt_sh(&rt_b, "ip link set bw1 up") == 0);
	CHECK(rt_sh(&rt_w1, "ip link set w1b up") == 0);
	rt_wait_ready(b.sock, "w1", 2, 60000);
	rt_remote(b.sock, "w1", state, sizeof(state), &starts, &done);
	/* Its late summary came (or was dropped with the call): either
	 * way the node stays worker 2's and nothing more was done. */
	CHECK_EQ_INT(tsd_status_int(b.sock, "jobs_done"), 1);
	CHECK(!rt_memory_has(b.sock, "LATE-W1"));
	CHECKF(rt_has(w1.log, "again: READY"), "%s", rt_text(w1.log));
	/* And it serves again. */
	rt_send(b.sock, 1, "after");
	CHECK(tsd_settle(b.sock, 40000, NULL) == 0);
	CHECK_EQ_INT(tsd_status_int(b.sock, "jobs_done"), 2);
	rt_end();
}

/*
 * Revocation: two clients watch their connections; the key of one is
 * revoked, and its connection is closed within seconds and refused
 * after; the other is back and answered.  A revoked worker key's worker
 * is dropped and exits, and the other worker reconnects and serves.
 */
static void
revoked_keys_are_closed_out(void)
{
	struct rt_broker b = {0};
	struct rt_worker w1, w2;
	char h1[512], h2[512], k1[ZSOCK_KEY_Z85 + 1];
	char k2[ZSOCK_KEY_Z85 + 1], o1[PATH_MAX], o2[PATH_MAX], ro[PATH_MAX];
	char shiro[PATH_MAX];
	const char *rv[] = {
	    shiro, "--home", NULL, "keys", "revoke", "client", "c1", NULL};
	pid_t p1, p2;
	long t_revoke, t_down;
	uint64_t t0;
	int skip2, status;
	size_t before, after;

	/* (tsd_bin's paths are overwritten after a few calls.) */
	snprintf(shiro, sizeof(shiro), "%s", tsd_bin("shiro"));
	rt_net();
	rt_broker_start(&b, NULL);
	snprintf(h1, sizeof(h1), "%s/c1", harness_tmpdir());
	snprintf(h2, sizeof(h2), "%s/c2", harness_tmpdir());
	rt_client_key(h1, k1);
	rt_client_key(h2, k2);
	rt_admit(&b, "client", "c1", k1);
	rt_admit(&b, "client", "c2", k2);
	rt_wait_keys(b.sock, "clients", 2);
	snprintf(o1, sizeof(o1), "%s/watch1", harness_tmpdir());
	snprintf(o2, sizeof(o2), "%s/watch2", harness_tmpdir());
	snprintf(ro, sizeof(ro), "%s/revoke", harness_tmpdir());
	{
		const char *a1[] = {tsd_bin("tests/remote_peer"), "watch",
		    b.cep, b.key, h1, "40000", NULL};
		const char *a2[] = {tsd_bin("tests/remote_peer"), "watch",
		    b.cep, b.key, h2, "40000", NULL};

		t0 = tsd_now_ms();
		p1 = rt_spawn(&rt_c, a1, o1, NULL, NULL);
		p2 = rt_spawn(&rt_c, a2, o2, NULL, NULL);
	}
	CHECKF(rt_wait_line(o1, "pong", 0, 20000) >= 0, "%s", rt_text(o1));
	CHECKF(rt_wait_line(o2, "pong", 0, 20000) >= 0, "%s", rt_text(o2));
	skip2 = rt_lines(o2);
	rv[2] = b.home;
	t_revoke = (long)(tsd_now_ms() - t0);
	CHECKF(rt_run(&rt_b, rv, ro, NULL, 10000) == 0, "%s", rt_text(ro));
	t_down = rt_wait_line(o1, "down", 0, 20000);
	CHECKF(t_down >= 0, "the revoked client was not closed out: %s",
	    rt_text(o1));
	CHECKF(t_down - t_revoke < 5000,
	    "the revoked client's connection lasted %ld ms", t_down - t_revoke);
	CHECKF(rt_wait_line(o1, "refused", 0, 20000) >= 0, "%s", rt_text(o1));
	/* The other client reconnected and is answered. */
	CHECKF(rt_wait_line(o2, "pong", skip2, 20000) >= 0, "%s", rt_text(o2));
	(void)rt_wait(p1, 1000);
	(void)rt_wait(p2, 1000);

	/* Workers: w2's key revoked, w2 dropped and gone; w1 serves. */
	rt_two_workers(&b, &w1, &w2, RT_AUTO(0, "w"), "2");
	rv[5] = "worker";
	rv[6] = "w2";
	CHECKF(rt_run(&rt_b, rv, ro, NULL, 10000) == 0, "%s", rt_text(ro));
	status = rt_wait(w2.pid, 20000);
	CHECKF(status == 1, "the revoked worker exited with %d: %s", status,
	    rt_text(w2.log));
	CHECKF(
	    rt_has(w2.log, "refused this worker's key"), "%s", rt_text(w2.log));
	rt_wait_ready(b.sock, "w1", 2, 30000);
	(void)rt_requests(&w2, &before);
	rt_send(b.sock, 8, "revoked");
	CHECK(tsd_settle(b.sock, 60000, NULL) == 0);
	(void)rt_requests(&w2, &after);
	CHECK_EQ_INT(after, before);
	CHECK(tsd_status_int(b.sock, "jobs_done") >= 8);
	rt_end();
}

/*
 * Hostile peers on the tcp ports: plain (NULL mechanism) ZeroMQ peers
 * on both, never admitted; connections that send garbage, dropped at
 * once; connections that never finish their greeting, dropped after
 * the handshake's bound.  Meanwhile the admitted client is served.
 */
static void
hostile_peers_on_the_tcp_ports(void)
{
	struct rt_broker b = {0};
	char chome[512], out[PATH_MAX];
	char cport[16], wep[64], lout[PATH_MAX], gout[PATH_MAX];
	pid_t loris, garbage;
	int k, closed;
	long after;

	rt_net();
	rt_broker_start(&b, NULL);
	rt_laptop(&b, chome, sizeof(chome));
	snprintf(out, sizeof(out), "%s/null", harness_tmpdir());
	snprintf(wep, sizeof(wep), "tcp://10.77.1.1:%d", b.wport);
	{
		const char *n1[] = {
		    tsd_bin("tests/remote_peer"), "null", b.cep, "3000", NULL};
		const char *n2[] = {
		    tsd_bin("tests/remote_peer"), "null", wep, "3000", NULL};

		CHECK(rt_run(&rt_c, n1, out, NULL, 10000) == 0);
		CHECKF(
		    !rt_has(out, "up"), "a NULL peer got in: %s", rt_text(out));
		unlink(out);
		CHECK(rt_run(&rt_c, n2, out, NULL, 10000) == 0);
		CHECKF(!rt_has(out, "up"), "a NULL worker got in: %s",
		    rt_text(out));
	}
	snprintf(cport, sizeof(cport), "%d", b.cport);
	snprintf(lout, sizeof(lout), "%s/loris", harness_tmpdir());
	snprintf(gout, sizeof(gout), "%s/garbage", harness_tmpdir());
	{
		const char *l[] = {tsd_bin("tests/remote_peer"), "loris",
		    "10.77.1.1", cport, "60", "16000", NULL};
		const char *g[] = {tsd_bin("tests/remote_peer"), "garbage",
		    "10.77.1.1", cport, "100", "4096", NULL};

		loris = rt_spawn(&rt_c, l, lout, NULL, NULL);
		garbage = rt_spawn(&rt_c, g, gout, NULL, NULL);
	}
	/* The good client, while they are at it. */
	for (k = 0; k < 3; k++) {
		CHECKF(rt_shiro(chome, out, NULL, 20000, "--endpoint", b.cep,
			   "--server-key", b.key, "send", "still served",
			   (char *)NULL) == 0,
		    "%s", rt_text(out));
		CHECK(rt_shiro(chome, out, NULL, 20000, "--endpoint", b.cep,
			  "--server-key", b.key, "status", (char *)NULL) == 0);
	}
	CHECK(rt_wait(garbage, 30000) == 0);
	CHECK(rt_wait(loris, 30000) == 0);
	CHECKF(
	    sscanf(rt_text(gout), "closed %d", &closed) == 1 && closed == 100,
	    "garbage: %s", rt_text(gout));
	CHECKF(sscanf(rt_text(lout), "closed %d after %ld", &closed, &after) ==
		    2 &&
		closed == 60,
	    "slow greetings: %s", rt_text(lout));
	CHECK(waitpid(b.pid, NULL, WNOHANG) == 0);
	CHECK(tsd_status_int(b.sock, "messages") == 3);
	/* 40 unknown keys one after another: every one refused, and the
	 * log holds at most about a line a second of them. */
	{
		const char *kn[] = {tsd_bin("tests/remote_peer"), "knock",
		    b.cep, b.key, "40", NULL};
		char err[PATH_MAX];
		uint64_t t0 = tsd_now_ms();
		int64_t before = tsd_status_int(b.sock, "auth.refused");
		int lines;

		snprintf(err, sizeof(err), "%s/shirod.err", b.home);
		lines = rt_lines_with(err, "refused a client connection");
		CHECK(rt_run(&rt_c, kn, out, NULL, 60000) == 0);
		CHECKF(rt_has(out, "refused 40"), "%s", rt_text(out));
		CHECK(tsd_status_int(b.sock, "auth.refused") >= before + 40);
		lines =
		    rt_lines_with(err, "refused a client connection") - lines;
		CHECKF(lines >= 1 &&
			lines <= (int)((tsd_now_ms() - t0) / 1000) + 2,
		    "%d lines for 40 refusals in %llu ms", lines,
		    (unsigned long long)(tsd_now_ms() - t0));
	}
	rt_end();
}

/* rt_latency_workload - a turn over tcp and 12 compactions by w1, with
 * whatever the links do to packets. */
static void
rt_latency_workload(struct rt_broker *b, struct rt_worker *w1, const char *cep)
{
	char chome[512], out[PATH_MAX];

	rt_laptop(b, chome, sizeof(chome));
	snprintf(out, sizeof(out), "%s/out", harness_tmpdir());
	CHECKF(
	    rt_shiro(chome, out, NULL, 90000, "--endpoint", cep, "--server-key",
		b->key, "-p", "across a slow network", (char *)NULL) == 0,
	    "%s", rt_text(out));
	CHECKF(rt_has(out, "SLOW-REPLY"), "%s", rt_text(out));
	rt_send(b->sock, 12, "slow");
	CHECK(tsd_settle(b->sock, 120000, NULL) == 0);
	CHECK(tsd_status_int(b->sock, "jobs_done") >= 12);
	CHECKF(
	    rt_shiro(chome, out, NULL, 30000, "--endpoint", cep, "--server-key",
		b->key, "log", "--tail", "3", (char *)NULL) == 0,
	    "%s", rt_text(out));
	rt_keys_own(w1);
}

/* rt_nft_dropped - the packets host h's loss rule dropped, or -1. */
static long
rt_nft_dropped(const struct rt_host *h)
{
	char out[PATH_MAX], *t, *p;
	long n = -1;

	snprintf(out, sizeof(out), "%s/nft.out", harness_tmpdir());
	if (rt_sh(h, "nft list chain inet shiroloss out > %s 2>&1", out) != 0)
		return -1;
	t = tsd_read_file(out);
	p = t != NULL ? strstr(t, "packets ") : NULL;
	if (p != NULL)
		n = strtol(p + 8, NULL, 10);
	free(t);
	return n;
}

/* rt_nft_loss - drop one in every `every` packets host h sends (the
 * 17th, then every `every`th after it, counted across all its flows),
 * with a counter; 0, or -1 where nftables cannot.  A fixed pattern, not
 * a random pick: a host that sends a few dozen packets is sure to lose
 * some, so the counters' check below cannot fail by chance. */
static int
rt_nft_loss(const struct rt_host *h, int every)
{
	return rt_sh(h,
	    "nft add table inet shiroloss && "
	    "nft add chain inet shiroloss out "
	    "'{ type filter hook output priority 0; }' && "
	    "nft add rule inet shiroloss out numgen inc mod %d == 16 "
	    "counter drop",
	    every);
}

/*
 * Latency and loss on every link of the client and of worker host 1:
 * with tc netem, 120 ms each way with jitter and 3% of the packets
 * lost; where the kernel has no sch_netem, one in 33 of the packets
 * every host sends (3%) dropped by an nftables rule (numgen inc), whose
 * counter shows that packets were lost (latency is then
 * relay_latency_and_stalls's).  The turn, the compactions and the
 * queries all complete.
 */
static void
netem_latency_and_loss(void)
{
	struct rt_broker b = {0};
	struct rt_worker w1;
	int netem;

	rt_net();
	netem = rt_sh(&rt_c,
		    "tc qdisc add dev cb root netem delay 120ms 30ms "
		    "loss 3%%") == 0;
	if (netem) {
		CHECK(rt_sh(&rt_b,
			  "tc qdisc add dev bc root netem delay 120ms 30ms "
			  "loss 3%%") == 0);
		CHECK(rt_sh(&rt_b,
			  "tc qdisc add dev bw1 root netem delay 120ms 30ms "
			  "loss 3%%") == 0);
		CHECK(rt_sh(&rt_w1,
			  "tc qdisc add dev w1b root netem delay 120ms "
			  "30ms loss 3%%") == 0);
	} else if (rt_nft_loss(&rt_c, 33) != 0) {
		harness_skip("neither tc netem (the kernel has no sch_netem) "
			     "nor nftables is available: "
			     "relay_latency_and_stalls covers latency");
	} else {
		CHECK(rt_nft_loss(&rt_b, 33) == 0);
		CHECK(rt_nft_loss(&rt_w1, 33) == 0);
	}
	rt_broker_start(&b, NULL);
	rt_one_worker(&b, &w1, RT_AUTO(50, "SLOW-REPLY"), NULL, "4", 30000);
	rt_latency_workload(&b, &w1, b.cep);
	if (!netem) {
		/* The loss was real: the rules dropped packets (the
		 * client sends only a few dozen, so its own count may be
		 * 0; shirod's covers both of its links, and it and the
		 * worker send hundreds). */
		long c = rt_nft_dropped(&rt_c), bb = rt_nft_dropped(&rt_b),
		     w = rt_nft_dropped(&rt_w1);

		CHECKF(c >= 0 && bb > 0 && w > 0,
		    "dropped: client %ld, broker %ld, worker %ld", c, bb, w);
		fprintf(stderr,
		    "  nftables dropped %ld, %ld and %ld packets on the "
		    "client, broker and worker hosts\n",
		    c, bb, w);
	}
	rt_end();
}

/*
 * Latency without netem: the client and worker 1 reach shirod through a
 * relay on their own hosts that holds every chunk 150 ms each way (so
 * 300 ms a round trip) and one in 16 another 400 ms, as a packet lost
 * and sent again would.  Heartbeats, the turn, the compactions and the
 * queries all get through.
 */
static void
relay_latency_and_stalls(void)
{
	struct rt_broker b = {0};
	struct rt_worker w1;
	char cfile[PATH_MAX], wfile[PATH_MAX], cport[16], wport[16];
	char cep[64], wep[64], ccap[PATH_MAX], wcap[PATH_MAX], *t;
	struct stat st;
	uint64_t end;

	rt_net();
	rt_broker_start(&b, NULL);
	snprintf(cfile, sizeof(cfile), "%s/relay-c", harness_tmpdir());
	snprintf(wfile, sizeof(wfile), "%s/relay-w", harness_tmpdir());
	snprintf(ccap, sizeof(ccap), "%s/wire-c", harness_tmpdir());
	snprintf(wcap, sizeof(wcap), "%s/wire-w", harness_tmpdir());
	snprintf(cport, sizeof(cport), "%d", b.cport);
	snprintf(wport, sizeof(wport), "%d", b.wport);
	{
		const char *rc[] = {tsd_bin("tests/remote_peer"), "relay",
		    cfile, "10.77.1.1", cport, "150", "400", ccap, NULL};
		const char *rw[] = {tsd_bin("tests/remote_peer"), "relay",
		    wfile, "10.77.2.1", wport, "150", "400", wcap, NULL};
		char log[PATH_MAX];

		snprintf(log, sizeof(log), "%s/relay.log", harness_tmpdir());
		(void)rt_spawn(&rt_c, rc, log, NULL, NULL);
		(void)rt_spawn(&rt_w1, rw, log, NULL, NULL);
	}
	end = tsd_now_ms() + 10000;
	while (tsd_now_ms() < end &&
	    (access(cfile, R_OK) != 0 || access(wfile, R_OK) != 0))
		usleep(10000);
	t = tsd_read_file(cfile);
	CHECK(t != NULL);
	snprintf(cep, sizeof(cep), "tcp://127.0.0.1:%d", atoi(t));
	free(t);
	t = tsd_read_file(wfile);
	CHECK(t != NULL);
	snprintf(wep, sizeof(wep), "tcp://127.0.0.1:%d", atoi(t));
	free(t);
	rt_one_worker(&b, &w1, RT_AUTO(50, "SLOW-REPLY"), wep, "4", 30000);
	rt_latency_workload(&b, &w1, cep);
	/* What an eavesdropper on either link got: many bytes, and none of
	 * them the chat's words, the worker's summaries or shirod's own
	 * provider key, in the clear. */
	CHECK(stat(ccap, &st) == 0 && st.st_size > 4096);
	CHECK(stat(wcap, &st) == 0 && st.st_size > 4096);
	CHECK(tsd_file_has(ccap, "across a slow network") == 0);
	CHECK(tsd_file_has(ccap, "SLOW-REPLY") == 0);
	CHECK(tsd_file_has(wcap, "SLOW-REPLY") == 0);
	CHECK(tsd_file_has(wcap, "across a slow network") == 0);
	CHECK(tsd_file_has(wcap, RT_BROKER_KEY) == 0);
	CHECK(tsd_file_has(ccap, RT_BROKER_KEY) == 0);
	rt_end();
}

/*
 * A remote worker of the test's own making (tests/remote_peer), its key
 * admitted: a READY as a tool worker drops it, and its next READY is
 * refused for the back-off (6 s here); a READY for a provider shirod
 * does not know drops another; once the back-off passed, a model READY
 * is served: heartbeats and JOBs, which it answers, and never a SECRET,
 * though shirod holds a key for that provider.  A second READY on the
 * same connection starts it afresh, it is not killed.
 */
static void
remote_peer_workers_judged(void)
{
	struct rt_broker b = {0};
	char home[512], home2[512], out[PATH_MAX], wep[64], state[16];
	char key[ZSOCK_KEY_Z85 + 1], *path;
	struct zsock_keypair kp;
	int starts;
	int64_t jobs;

	rt_net();
	rt_broker_start(&b,
	    ", \"restart\": {\"minMs\": 6000, \"maxMs\": "
	    "6000}");
	snprintf(home, sizeof(home), "%s/peer", harness_tmpdir());
	snprintf(home2, sizeof(home2), "%s/peer2", harness_tmpdir());
	CHECK(mkdir(home, 0700) == 0 && mkdir(home2, 0700) == 0);
	path = keys_path(home, KEYS_WORKER);
	CHECK(keys_pair(path, 1, &kp, NULL) == 0);
	free(path);
	rt_admit(&b, "worker", "peer", kp.pub);
	path = keys_path(home2, KEYS_WORKER);
	CHECK(keys_pair(path, 1, &kp, NULL) == 0);
	free(path);
	memcpy(key, kp.pub, sizeof(key));
	rt_admit(&b, "worker", "peer2", key);
	rt_wait_keys(b.sock, "workers", 2);
	snprintf(wep, sizeof(wep), "tcp://10.77.2.1:%d", b.wport);
	snprintf(out, sizeof(out), "%s/peer.out", harness_tmpdir());
	{
		const char *tool[] = {tsd_bin("tests/remote_peer"), "worker",
		    wep, b.key, home, "tool", "mock", "1500", "1", NULL};

		CHECK(rt_run(&rt_w1, tool, out, NULL, 20000) == 0);
	}
	rt_remote(b.sock, "peer", state, sizeof(state), &starts, &jobs);
	CHECKF(strcmp(state, "down") == 0, "a tool READY left it %s", state);
	CHECKF(!rt_has(out, "heartbeat") && !rt_has(out, "job") &&
		!rt_has(out, "secret"),
	    "%s", rt_text(out));
	/* At once a model READY: within the back-off, not served. */
	{
		const char *soon[] = {tsd_bin("tests/remote_peer"), "worker",
		    wep, b.key, home, "model", "mock", "1000", "1", NULL};

		unlink(out);
		CHECK(rt_run(&rt_w1, soon, out, NULL, 20000) == 0);
		CHECKF(rt_has(out, "sent READY") && !rt_has(out, "heartbeat"),
		    "served within the back-off: %s", rt_text(out));
	}
	{
		const char *ghost[] = {tsd_bin("tests/remote_peer"), "worker",
		    wep, b.key, home2, "model", "ghost", "1500", "1", NULL};

		unlink(out);
		CHECK(rt_run(&rt_w1, ghost, out, NULL, 20000) == 0);
		CHECKF(!rt_has(out, "heartbeat"), "%s", rt_text(out));
	}
	rt_remote(b.sock, "peer2", state, sizeof(state), &starts, &jobs);
	CHECKF(strcmp(state, "down") == 0, "an unknown provider: %s", state);
	snprintf(path = xmalloc(600), 600, "%s/shirod.err", b.home);
	CHECKF(rt_has(path, "which this shirod does not know"), "%s",
	    rt_text(path));
	free(path);
	/* Ten READYs a second apart: the first ones fall in the back-off,
	 * a later one is served. */
	{
		const char *good[] = {tsd_bin("tests/remote_peer"), "worker",
		    wep, b.key, home, "model", "mock", "14000", "10", NULL};
		pid_t pid;

		unlink(out);
		pid = rt_spawn(&rt_w1, good, out, NULL, NULL);
		rt_wait_ready(b.sock, "peer", 1, 15000);
		rt_send(b.sock, 2, "peer");
		CHECK(tsd_settle(b.sock, 30000, NULL) == 0);
		CHECK(rt_memory_has(b.sock, "from the peer"));
		CHECK(rt_wait(pid, 20000) == 0);
	}
	CHECKF(rt_has(out, "heartbeat") && rt_has(out, "job") &&
		!rt_has(out, "secret"),
	    "%s", rt_text(out));
	rt_remote(b.sock, "peer", state, sizeof(state), &starts, &jobs);
	CHECKF(starts >= 2, "its READYs on one connection: %d", starts);
	CHECKF(jobs >= 2, "it did %lld jobs", (long long)jobs);
	rt_end();
}

/*
 * Remote workers that misbehave after their key was admitted: one says
 * READY with another protocol revision (never served), one sends a
 * client's STATUS and one a frame that is not a message once it
 * answered its first JOB.  Each slot goes down with the reason in the
 * log, gets no more JOBs while the chat goes on, and shirod lives.
 */
static void
remote_workers_that_misbehave_are_dropped(void)
{
	static const char *const modes[] = {"old", "breach", "garbage"};
	static const char *const why[] = {"speaks version",
	    "which a model worker may not", "malformed frame"};
	static const char *const sent[] = {"", "sent STATUS", "sent garbage"};
	struct rt_broker b = {0};
	char home[3][512], out[PATH_MAX], err[PATH_MAX], wep[64], *path;
	char state[16], line[128];
	struct zsock_keypair kp;
	int k, starts;
	int64_t jobs;
	pid_t pid;

	rt_net();
	rt_broker_start(&b, NULL);
	for (k = 0; k < 3; k++) {
		snprintf(home[k], sizeof(home[k]), "%s/mis-%s",
		    harness_tmpdir(), modes[k]);
		CHECK(mkdir(home[k], 0700) == 0);
		path = keys_path(home[k], KEYS_WORKER);
		CHECK(keys_pair(path, 1, &kp, NULL) == 0);
		free(path);
		rt_admit(&b, "worker", modes[k], kp.pub);
	}
	rt_wait_keys(b.sock, "workers", 3);
	snprintf(wep, sizeof(wep), "tcp://10.77.2.1:%d", b.wport);
	snprintf(err, sizeof(err), "%s/shirod.err", b.home);
	for (k = 0; k < 3; k++) {
		const char *argv[] = {tsd_bin("tests/remote_peer"), "worker",
		    wep, b.key, home[k], "model", "mock", "5000", "1", modes[k],
		    NULL};

		snprintf(out, sizeof(out), "%s/mis-%s.out", harness_tmpdir(),
		    modes[k]);
		pid = rt_spawn(&rt_w1, argv, out, NULL, NULL);
		/* Compactions for it to take (those of the messages sent
		 * after the last drop are waiting already). */
		if (k > 0)
			rt_send(b.sock, 2, modes[k]);
		snprintf(
		    line, sizeof(line), "remote worker %s (slot", modes[k]);
		CHECKF(rt_wait_has(err, why[k], 20000) && rt_has(err, line),
		    "%s: %s", modes[k], rt_text(err));
		rt_send(b.sock, 3, "after the drop");
		CHECK(rt_wait(pid, 20000) == 0);
		rt_remote(
		    b.sock, modes[k], state, sizeof(state), &starts, &jobs);
		CHECKF(strcmp(state, "down") == 0, "%s left it %s", modes[k],
		    state);
		/* One JOB, perhaps a second sent with the first's answer,
		 * none after the drop. */
		CHECKF(rt_lines_with(out, " job\n") <= (k == 0 ? 0 : 2) &&
			(k == 0 || rt_has(out, sent[k])),
		    "%s: %s", modes[k], rt_text(out));
		CHECK(waitpid(b.pid, NULL, WNOHANG) == 0);
	}
	rt_end();
}

/*
 * shirod stops and starts again on the same port (in the test's own
 * network namespace nothing else can take it): the remote worker, not
 * told to leave, reconnects to the new shirod and serves it.
 */
static void
remote_worker_outlives_shirod(void)
{
	struct rt_broker b = {0};
	struct rt_worker w1;

	rt_net();
	rt_broker_start(&b, NULL);
	rt_one_worker(&b, &w1, RT_AUTO(0, "w1"), NULL, "2", 20000);
	tsd_close(&b.sock);
	/* Reaped by rt_wait, which forgets its pid for rt_end. */
	CHECK(kill(b.pid, SIGTERM) == 0);
	CHECK(rt_wait(b.pid, 20000) == 0);
	CHECK(waitpid(w1.pid, NULL, WNOHANG) == 0);
	snprintf(b.wbind, sizeof(b.wbind), "tcp://0.0.0.0:%d", b.wport);
	rt_broker_start(&b, NULL);
	rt_wait_ready(b.sock, "w1", 1, 30000);
	rt_send(b.sock, 4, "again");
	CHECK(tsd_settle(b.sock, 30000, NULL) == 0);
	CHECK(tsd_status_int(b.sock, "jobs_done") >= 4);
	rt_end();
}

/* The turns' model answers of remote_workspace_turns.  A request takes
 * the first entry it matches, and each entry may be taken again (a
 * retried call gets the same answer): a turn's first request matches its
 * message, each later one the id of the call before it, which only that
 * turn's requests hold.  So the latest turn and, in a turn, the latest
 * step come first (a turn's view holds the earlier turns' messages).
 * Compactions get summaries. */
#define RT_WS_TOOL(match, id, name, input) \
	"{'match': '" match "', 'times': -1, 'tools': [{'id': '" id \
	"', 'name': '" name "', 'input': " input "}]}, "
#define RT_WS_TEXT(match, text) \
	"{'match': '" match "', 'times': -1, 'text': '" text "'}, "
#define RT_WS_SCRIPT \
	"{'responses': [" RT_WS_TEXT("tu-nows-write", \
	    "NO-WS-DONE") RT_WS_TOOL("overwrite my notes", "tu-nows-write", \
	    "write_file", "{'path': 'notes.txt', 'content': 'clobbered'}") \
	    RT_WS_TEXT("tu-ask-bash", "ASK-TURN-DONE") RT_WS_TOOL( \
		"tu-ask-edit", "tu-ask-bash", "bash", \
		"{'command': 'echo started > started.txt; sleep 60; echo " \
		"never " \
		"> never.txt'}") RT_WS_TOOL("fix the greeting on the box", \
		"tu-ask-edit", "edit_file", \
		"{'path': 'notes.txt', 'old_string': 'world', " \
		"'new_string': 'box'}") RT_WS_TEXT("tu-yolo-bash", \
		"YOLO-TURN-DONE") RT_WS_TOOL("tu-yolo-edit", "tu-yolo-bash", \
		"bash", "{'command': 'echo yolo-ran > ran.txt'}") \
		RT_WS_TOOL("tu-yolo-read", "tu-yolo-edit", "edit_file", \
		    "{'path': 'notes.txt', 'old_string': 'hello', " \
		    "'new_string': 'howdy'}") \
		    RT_WS_TOOL("greet the box", "tu-yolo-read", "read_file", \
			"{'path': 'notes.txt'}") "{'match': " \
						 "'never-in-any-request', " \
						 "'text': 'x'}], " \
						 "'auto': {'latency_ms': 0, " \
						 "'marker': '----------', " \
						 "'summary_bytes': 200, " \
						 "'reply': 'AUTO'}}"

/* rt_fifo - a FIFO at path to type into a session's stdin, held open
 * here for writing (O_RDWR does not wait for the reader); its fd. */
static int
rt_fifo(const char *path)
{
	int fd;

	(void)unlink(path);
	CHECK(mkfifo(path, 0600) == 0);
	fd = open(path, O_RDWR | O_CLOEXEC);
	CHECK(fd >= 0);
	return fd;
}

/* rt_type - type line into the session reading fd's FIFO. */
static void
rt_type(int fd, const char *line)
{
	CHECK(write(fd, line, strlen(line)) == (ssize_t)strlen(line));
}

/* rt_file_is - check that the file dir/name holds exactly want. */
static void
rt_file_is(const char *dir, const char *name, const char *want)
{
	char path[PATH_MAX], *t;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	t = tsd_read_file(path);
	CHECKF(t != NULL && strcmp(t, want) == 0, "%s holds \"%s\", not \"%s\"",
	    path, t != NULL ? t : "(no file)", want);
	free(t);
}

/* rt_wait_approval - wait up to ms for approval number k (from 0) shown
 * in the file path ("shiro: approval N:"); N, or -1. */
static long
rt_wait_approval(const char *path, int k, long ms)
{
	uint64_t end = tsd_now_ms() + (uint64_t)ms;
	const char *tag = "shiro: approval ";

	while (tsd_now_ms() < end) {
		char *t = tsd_read_file(path), *p = t;
		long id = -1;
		int n = 0;

		while (p != NULL && (p = strstr(p, tag)) != NULL) {
			p += strlen(tag);
			if (n++ == k) {
				id = strtol(p, NULL, 10);
				break;
			}
		}
		free(t);
		if (id > 0)
			return id;
		usleep(20000);
	}
	return -1;
}

/*
 * shiro run and shiro tool from the laptop run in the build box's
 * workspace, through its jailed tool and fs workers: the command's
 * words arrive as typed (quotes, $, spaces), its output comes back as
 * it is printed, its exit code is the client's; its timeout gives 124;
 * Ctrl-C stops its process tree on the box (130); a file tool reads and
 * writes there; bad usage (no workspace, --net, a timeout out of range,
 * a chat tool, arguments that are not an object) exits 2 with nothing
 * run.  Judged by the files on the broker host and shirod's STATUS.
 */
static void
remote_run_and_tool(void)
{
	struct rt_broker b = {0};
	char chome[512], ws[512], out[PATH_MAX];
	char path[PATH_MAX], shiro[PATH_MAX];
	const char *argv[] = {shiro, "--home", chome, "--endpoint", b.cep,
	    "--server-key", b.key, "run", "--workspace", ws, "--", "sh", "-c",
	    "echo started > started.txt; sleep 60; echo never > never.txt",
	    NULL};
	uint64_t end;
	pid_t pid;
	int64_t n = -1;
	int rc;

	rt_net();
	rt_broker_start(&b, NULL);
	rt_laptop(&b, chome, sizeof(chome));
	snprintf(ws, sizeof(ws), "%s/box-run", harness_tmpdir());
	CHECK(mkdir(ws, 0700) == 0);
	tsd_write(ws, "notes.txt", "box notes\n");
	snprintf(out, sizeof(out), "%s/out", harness_tmpdir());

	rc = rt_shiro(chome, out, NULL, 60000, "--endpoint", b.cep,
	    "--server-key", b.key, "run", "--workspace", ws, "--", "sh", "-c",
	    "cat notes.txt; printf '%s\n' \"$1\" > made.txt; echo to-stderr "
	    ">&2; exit 7",
	    "sh", "it's a \"word\" $HOME  two", (char *)NULL);
	CHECKF(rc == 7, "exit %d: %s", rc, rt_text(out));
	CHECKF(rt_has(out, "box notes") && rt_has(out, "to-stderr"), "%s",
	    rt_text(out));
	rt_file_is(ws, "made.txt", "it's a \"word\" $HOME  two\n");

	/* The box's bytes: as they are into a file, escaped on a terminal
	 * (script(1) gives the client one). */
	rc = rt_shiro(chome, out, NULL, 60000, "--endpoint", b.cep,
	    "--server-key", b.key, "run", "--workspace", ws, "--", "printf",
	    "\\033[31mred\\033[0m\\n", (char *)NULL);
	CHECKF(rc == 0 && rt_has(out, "\033[31mred"), "exit %d: %s", rc,
	    rt_text(out));
	{
		char cmd[2048];
		const char *sargv[] = {
		    "/usr/bin/script", "-qec", cmd, "/dev/null", NULL};

		snprintf(cmd, sizeof(cmd),
		    "%s --home %s --endpoint %s --server-key '%s' run "
		    "--workspace %s -- printf '\\033[31mred\\033[0m\\n'",
		    tsd_bin("shiro"), chome, b.cep, b.key, ws);
		unlink(out);
		rc = rt_run(&rt_c, sargv, out, NULL, 60000);
		CHECKF(rc == 0 && rt_has(out, "^[[31mred") &&
			!rt_has(out, "\033[31m"),
		    "exit %d: %s", rc, rt_text(out));
	}

	/* Output past 64 MiB is counted, and the client says so. */
	rc = rt_shiro(chome, out, NULL, 120000, "--endpoint", b.cep,
	    "--server-key", b.key, "run", "--workspace", ws, "--", "sh", "-c",
	    "head -c 70000000 /dev/zero | tr '\\0' a", (char *)NULL);
	CHECKF(rc == 0 && rt_has(out, "bytes of output were not shown"),
	    "exit %d", rc);
	{
		/* Nothing is lost on the way: what was shown and what was
		 * counted make the 70 MB. */
		char *t = tsd_read_file(out), *said;
		size_t shown = 0;

		said = t != NULL ? strstr(t, "shiro run: ") : NULL;
		if (t != NULL)
			while (t[shown] == 'a')
				shown++;
		CHECKF(said != NULL &&
			shown + strtoull(said + 11, NULL, 10) == 70000000,
		    "%zu shown, then: %.80s", shown, said ? said : "(nothing)");
		free(t);
	}

	/* A client whose stdout reads nothing for 6 s (twice libzmq's
	 * heartbeat timeout) while 30 MB print still gets the end: its
	 * exit code, and what it could not take counted. */
	{
		char cmd[2048];
		const char *sargv[] = {"/bin/sh", "-c", cmd, NULL};

		snprintf(cmd, sizeof(cmd),
		    "{ %s --home %s --endpoint %s --server-key '%s' run "
		    "--workspace %s -- sh -c 'head -c 30000000 /dev/zero | "
		    "tr \"\\\\0\" a; exit 6'; echo \"rc=$?\" >&2; } | "
		    "{ sleep 6; wc -c | sed 's/^/read=/'; }",
		    tsd_bin("shiro"), chome, b.cep, b.key, ws);
		unlink(out);
		rc = rt_run(&rt_c, sargv, out, NULL, 120000);
		CHECKF(rc == 0 && rt_has(out, "rc=6") &&
			rt_has(out, "bytes of output were not shown") &&
			rt_has(out, "read="),
		    "exit %d: %s", rc, rt_text(out));
	}
	unlink(out);

	/* A remote saved with its workspace: run works there without
	 * --workspace (an attached session that ends at once, stdin being
	 * empty, saves it). */
	rc = rt_shiro(chome, out, NULL, 30000, "attach", b.cep, "--server-key",
	    b.key, "--save", "box", "--workspace", ws, (char *)NULL);
	CHECKF(rc == 0 && rt_has(out, "saved remote box"), "exit %d: %s", rc,
	    rt_text(out));
	rc = rt_shiro(chome, out, NULL, 60000, "--remote", "box", "run", "--",
	    "sh", "-c", "pwd > where.txt", (char *)NULL);
	CHECKF(rc == 0, "exit %d: %s", rc, rt_text(out));
	{
		char want[PATH_MAX + 2], real[PATH_MAX];

		CHECK(realpath(ws, real) != NULL);
		snprintf(want, sizeof(want), "%s\n", real);
		rt_file_is(ws, "where.txt", want);
	}

	/* Usage the box cannot take: exit 2, nothing sent. */
	rc = rt_shiro(chome, out, NULL, 20000, "--endpoint", b.cep,
	    "--server-key", b.key, "run", "--", "touch", "nows.txt",
	    (char *)NULL);
	CHECKF(rc == 2 && rt_has(out, "--workspace DIR"), "exit %d: %s", rc,
	    rt_text(out));
	rc = rt_shiro(chome, out, NULL, 20000, "--endpoint", b.cep,
	    "--server-key", b.key, "run", "--net", "--workspace", ws, "--",
	    "touch", "net.txt", (char *)NULL);
	CHECKF(rc == 2 && rt_has(out, "without network"), "exit %d: %s", rc,
	    rt_text(out));
	rc = rt_shiro(chome, out, NULL, 20000, "--endpoint", b.cep,
	    "--server-key", b.key, "run", "--timeout", "601", "--workspace", ws,
	    "--", "touch", "t.txt", (char *)NULL);
	CHECKF(rc == 2, "exit %d: %s", rc, rt_text(out));
	rc = rt_shiro(chome, out, NULL, 20000, "--endpoint", b.cep,
	    "--server-key", b.key, "run", "--workspace", "box-run", "--",
	    "touch", "rel.txt", (char *)NULL);
	CHECKF(rc == 2 && rt_has(out, "absolute path"), "exit %d: %s", rc,
	    rt_text(out));
	rc = rt_shiro(chome, out, NULL, 20000, "--endpoint", b.cep,
	    "--server-key", b.key, "tool", "zoom", "{\"id\":0,\"n\":1}",
	    "--workspace", ws, (char *)NULL);
	CHECKF(rc == 2 && rt_has(out, "no workspace tool"), "exit %d: %s", rc,
	    rt_text(out));
	rc = rt_shiro(chome, out, NULL, 20000, "--endpoint", b.cep,
	    "--server-key", b.key, "tool", "write_file", "[1]", "--workspace",
	    ws, (char *)NULL);
	CHECKF(rc == 2 && rt_has(out, "one JSON object"), "exit %d: %s", rc,
	    rt_text(out));
	snprintf(path, sizeof(path), "%s/net.txt", ws);
	CHECK(access(path, F_OK) != 0);
	snprintf(path, sizeof(path), "%s/t.txt", ws);
	CHECK(access(path, F_OK) != 0);

	/* The command's own timeout. */
	rc = rt_shiro(chome, out, NULL, 60000, "--endpoint", b.cep,
	    "--server-key", b.key, "run", "--timeout", "1", "--workspace", ws,
	    "--", "sleep", "30", (char *)NULL);
	CHECKF(rc == 124, "exit %d: %s", rc, rt_text(out));

	/* File tools in the fs worker. */
	rc = rt_shiro(chome, out, NULL, 30000, "--endpoint", b.cep,
	    "--server-key", b.key, "tool", "write_file",
	    "{\"path\":\"tool.txt\",\"content\":\"from the laptop\\n\"}",
	    "--workspace", ws, (char *)NULL);
	CHECKF(rc == 0 && rt_has(out, "\"ok\":true"), "exit %d: %s", rc,
	    rt_text(out));
	rt_file_is(ws, "tool.txt", "from the laptop\n");
	rc = rt_shiro(chome, out, NULL, 30000, "--endpoint", b.cep,
	    "--server-key", b.key, "tool", "read_file",
	    "{\"path\":\"notes.txt\"}", "--workspace", ws, (char *)NULL);
	CHECKF(rc == 0 && rt_has(out, "box notes"), "exit %d: %s", rc,
	    rt_text(out));

	/* Ctrl-C on the laptop stops the tree on the box. */
	snprintf(shiro, sizeof(shiro), "%s", tsd_bin("shiro"));
	pid = rt_spawn(&rt_c, argv, out, NULL, NULL);
	snprintf(path, sizeof(path), "%s/started.txt", ws);
	CHECKF(rt_wait_has(path, "started", 30000), "it did not start: %s",
	    rt_text(out));
	CHECK(kill(pid, SIGINT) == 0);
	rc = rt_wait(pid, 20000);
	CHECKF(rc == 130, "exit %d: %s", rc, rt_text(out));
	end = tsd_now_ms() + 20000;
	while (tsd_now_ms() < end &&
	    (n = tsd_status_int(b.sock, "runs.running")) != 0)
		usleep(50000);
	CHECK_EQ_INT(n, 0);
	snprintf(path, sizeof(path), "%s/never.txt", ws);
	CHECK(access(path, F_OK) != 0);

	/* A laptop whose link is cut mid-RUN: shirod sends no ZMTP pings,
	 * the kernel's keepalive and user timeout close the connection
	 * within seconds, and the command on the box is stopped. */
	snprintf(path, sizeof(path), "%s/started.txt", ws);
	CHECK(unlink(path) == 0);
	pid = rt_spawn(&rt_c, argv, out, NULL, NULL);
	CHECKF(rt_wait_has(path, "started", 30000), "it did not start: %s",
	    rt_text(out));
	CHECK(tsd_status_int(b.sock, "runs.running") == 1);
	CHECK(rt_sh(&rt_c, "ip link set cb down") == 0);
	end = tsd_now_ms();
	while (tsd_now_ms() < end + 30000 &&
	    (n = tsd_status_int(b.sock, "runs.running")) != 0)
		usleep(50000);
	CHECKF(n == 0, "the RUN still runs 30 s after its link was cut");
	fprintf(stderr, "  a cut link's RUN stopped after %llu ms\n",
	    (unsigned long long)(tsd_now_ms() - end));
	snprintf(path, sizeof(path), "%s/never.txt", ws);
	CHECK(access(path, F_OK) != 0);
	(void)rt_wait(pid, 30000);
	/* A person's calls are not the chat's. */
	CHECK_EQ_INT(tsd_status_int(b.sock, "messages"), 0);
	rt_end();
}

/*
 * A laptop's turns work in the build box's workspace, named with
 * --workspace or saved with the remote: a -p --yolo turn reads, edits
 * and runs a command there; a turn of an attached session asks, and a
 * second attached session answers both approvals with /approve over
 * tcp, then interrupts the running sleep with /interrupt, and the turn
 * goes on.  A laptop that names no workspace sends none: its turn has
 * no workspace (the notice says how to name one) and the directory of
 * its own path on the build box is left alone.  Judged by the files on
 * the broker host and the chat's tool and echo lines.
 */
static void
remote_workspace_turns(void)
{
	struct rt_broker b = {0};
	struct rt_worker w1;
	char chome[512], ws[512], lap[512];
	char out[PATH_MAX], aout[PATH_MAX], bout[PATH_MAX], afifo[PATH_MAX],
	    bfifo[PATH_MAX], path[PATH_MAX], line[64], here[PATH_MAX];
	char shiro[PATH_MAX];
	const char *aargv[] = {shiro, "--home", chome, "attach", b.cep,
	    "--server-key", b.key, "--save", "box", "--workspace", ws, NULL};
	const char *bargv[] = {shiro, "--home", chome, "attach", "box", NULL};
	pid_t apid, bpid;
	long id;
	int afd, bfd;

	rt_net();
	rt_broker_start(&b, NULL);
	rt_one_worker(&b, &w1, RT_WS_SCRIPT, NULL, "2", 20000);
	rt_laptop(&b, chome, sizeof(chome));
	/* The build box's project (the namespaces share one file system:
	 * "on the broker host" is where shirod's workers work). */
	snprintf(ws, sizeof(ws), "%s/box-project", harness_tmpdir());
	CHECK(mkdir(ws, 0700) == 0);
	tsd_write(ws, "notes.txt", "hello world\n");
	snprintf(out, sizeof(out), "%s/out", harness_tmpdir());

	/* A relative --workspace means nothing on the other machine. */
	CHECKF(rt_shiro(chome, out, NULL, 20000, "--endpoint", b.cep,
		   "--server-key", b.key, "-p", "--workspace", "box-project",
		   "x", (char *)NULL) == 2,
	    "%s", rt_text(out));
	CHECKF(rt_has(out, "absolute path"), "%s", rt_text(out));

	/* -p --yolo --workspace: read, edit and a command, in ws. */
	CHECKF(rt_shiro(chome, out, NULL, 90000, "--endpoint", b.cep,
		   "--server-key", b.key, "-p", "--yolo", "--workspace", ws,
		   "greet the box", (char *)NULL) == 0,
	    "%s", rt_text(out));
	CHECKF(rt_has(out, "YOLO-TURN-DONE"), "%s", rt_text(out));
	rt_file_is(ws, "notes.txt", "howdy world\n");
	rt_file_is(ws, "ran.txt", "yolo-ran\n");

	/* Session A (saved as remote "box" with ws) asks; session B, the
	 * same remote, answers and interrupts. */
	snprintf(aout, sizeof(aout), "%s/a.out", harness_tmpdir());
	snprintf(bout, sizeof(bout), "%s/b.out", harness_tmpdir());
	snprintf(afifo, sizeof(afifo), "%s/a.in", harness_tmpdir());
	snprintf(bfifo, sizeof(bfifo), "%s/b.in", harness_tmpdir());
	afd = rt_fifo(afifo);
	bfd = rt_fifo(bfifo);
	snprintf(shiro, sizeof(shiro), "%s", tsd_bin("shiro"));
	apid = rt_spawn(&rt_c, aargv, aout, afifo, NULL);
	CHECKF(rt_wait_has(aout, "saved remote box", 30000) &&
		rt_wait_has(aout, "attached to shirod", 30000),
	    "%s", rt_text(aout));
	CHECKF(rt_has(aout, "workspace is"), "%s", rt_text(aout));
	bpid = rt_spawn(&rt_c, bargv, bout, bfifo, NULL);
	CHECKF(rt_wait_has(bout, "attached to shirod", 30000), "%s",
	    rt_text(bout));
	rt_type(afd, "fix the greeting on the box\n");
	id = rt_wait_approval(aout, 0, 60000);
	CHECKF(id > 0, "no approval for the edit: %s", rt_text(aout));
	CHECKF(rt_has(aout, "+box"), "%s", rt_text(aout));
	snprintf(line, sizeof(line), "/approve %ld yes\n", id);
	rt_type(bfd, line);
	id = rt_wait_approval(aout, 1, 60000);
	CHECKF(id > 0, "no approval for the command: %s", rt_text(aout));
	snprintf(line, sizeof(line), "/approve %ld yes\n", id);
	rt_type(bfd, line);
	snprintf(path, sizeof(path), "%s/started.txt", ws);
	CHECKF(rt_wait_has(path, "started", 60000),
	    "the command did not "
	    "start: %s",
	    rt_text(aout));
	rt_type(bfd, "/interrupt\n");
	CHECKF(rt_wait_has(aout, "ASK-TURN-DONE", 60000), "%s", rt_text(aout));
	rt_file_is(ws, "notes.txt", "howdy box\n");
	snprintf(path, sizeof(path), "%s/never.txt", ws);
	CHECK(access(path, F_OK) != 0);
	rt_type(afd, "/exit\n");
	rt_type(bfd, "/exit\n");
	CHECK(rt_wait(apid, 20000) == 0);
	CHECK(rt_wait(bpid, 20000) == 0);
	close(afd);
	close(bfd);
	/* NOTES names the saved remote's workspace as the project. */
	CHECKF(rt_shiro(chome, out, NULL, 20000, "--remote", "box", "notes",
		   "--json", (char *)NULL) == 0,
	    "%s", rt_text(out));
	CHECKF(rt_has(out, ws), "%s", rt_text(out));
	/* The chat's tool and echo lines: the edit and the interrupted
	 * command, from the build box's directory. */
	CHECKF(rt_shiro(chome, out, NULL, 20000, "--remote", "box", "log",
		   "--json", (char *)NULL) == 0,
	    "%s", rt_text(out));
	CHECKF(rt_has(out, "echo started > started.txt") &&
		rt_has(out, "interrupted"),
	    "%s", rt_text(out));

	/* No workspace: run from a directory whose path also exists on the
	 * build box, which the laptop must not send. */
	snprintf(lap, sizeof(lap), "%s/laptop-dir", harness_tmpdir());
	CHECK(mkdir(lap, 0700) == 0);
	tsd_write(lap, "notes.txt", "laptop\n");
	CHECK(getcwd(here, sizeof(here)) != NULL);
	CHECK(chdir(lap) == 0);
	CHECKF(rt_shiro(chome, out, NULL, 20000, "--endpoint", b.cep,
		   "--server-key", b.key, "notes", (char *)NULL) == 2,
	    "%s", rt_text(out));
	CHECKF(rt_has(out, "--workspace DIR"), "%s", rt_text(out));
	CHECKF(rt_shiro(chome, out, NULL, 90000, "--endpoint", b.cep,
		   "--server-key", b.key, "-p", "--yolo", "overwrite my notes",
		   (char *)NULL) == 0,
	    "%s", rt_text(out));
	CHECK(chdir(here) == 0);
	CHECKF(rt_has(out, "NO-WS-DONE") &&
		rt_has(out, "the client sent no working directory") &&
		rt_has(out, "--workspace DIR"),
	    "%s", rt_text(out));
	rt_file_is(lap, "notes.txt", "laptop\n");
	/* Saving the remote again from itself keeps its workspace. */
	CHECKF(rt_shiro(chome, out, NULL, 30000, "attach", "box", "--save",
		   "box", (char *)NULL) == 0,
	    "%s", rt_text(out));
	snprintf(path, sizeof(path), "%s/remotes/box", chome);
	snprintf(here, sizeof(here), "workspace %s\n", ws);
	CHECKF(rt_has(path, here), "%s", rt_text(path));
	rt_end();
}

static const struct harness_test tests[] = {
    HT_SLOW(attach_and_turn_over_tcp, 150),
    HT_SLOW(remote_workspace_turns, 200),
    HT_SLOW(remote_run_and_tool, 200),
    HT_SLOW(compactions_spread_over_both_workers, 150),
    HT_SLOW(local_and_remote_workers_are_one_pool, 150),
    HT_SLOW(worker_cut_off_mid_call, 180),
    HT_SLOW(revoked_keys_are_closed_out, 150),
    HT_SLOW(hostile_peers_on_the_tcp_ports, 150),
    HT_SLOW(remote_peer_workers_judged, 150),
    HT_SLOW(remote_workers_that_misbehave_are_dropped, 150),
    HT_SLOW(remote_worker_outlives_shirod, 150),
    HT_SLOW(netem_latency_and_loss, 200),
    HT_SLOW(relay_latency_and_stalls, 200),
};

HARNESS_MAIN(tests)
