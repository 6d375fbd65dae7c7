/*
 * bench_shirod - shirod's speed, measured against floors taken in the
 * same run on the same machine:
 *
 *   - a raw ZeroMQ DEALER/ROUTER round trip over ipc (an echo process),
 *     against STATUS from a client to shirod and back (target: p50
 *     within 3x);
 *   - a write+fsync of one log line on the same file system, against a
 *     SEND (append, fsync and ACK; target: p50 within the fsync floor
 *     plus 3x the raw round trip);
 *   - the ingest of SHIRO_BENCH_N (default 100,000) messages from 4
 *     client processes with the offline compactor: messages per second,
 *     and the seconds from the last ACK until the view is summarized;
 *   - shirod's resident memory idle and after the ingest.
 *
 * Everything runs in a temporary home that is removed at the end; every
 * process started is killed by pid.
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
#include <zmq.h>

#include "proto/buf.h"
#include "proto/msg.h"
#include "proto/xmalloc.h"
#include "proto/zsock.h"
#include "tests/test_shirod_util.h"

#define ROUNDS 3000
#define CLIENTS 4
#define WINDOW 32

/* cmp_u64 - qsort order of uint64_t. */
static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* pct - the p-th percentile (0-100) of n sorted values. */
static uint64_t
pct(uint64_t *v, size_t n, unsigned p)
{
	size_t k = (n * p) / 100;

	qsort(v, n, sizeof(*v), cmp_u64);
	return v[k < n ? k : n - 1];
}

/* now_us - a monotonic clock in microseconds. */
static uint64_t
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

/* raw_echo - a ROUTER that sends every message back, until killed. */
static void
raw_echo(const char *ep)
{
	void *ctx = zmq_ctx_new(), *r = zmq_socket(ctx, ZMQ_ROUTER);
	zmq_msg_t part;
	int more;
	size_t sz = sizeof(more);

	zmq_bind(r, ep);
	for (;;) {
		do {
			zmq_msg_init(&part);
			if (zmq_msg_recv(&part, r, 0) < 0)
				_exit(0);
			zmq_getsockopt(r, ZMQ_RCVMORE, &more, &sz);
			zmq_msg_send(&part, r, more ? ZMQ_SNDMORE : 0);
		} while (more);
	}
}

/* raw_round_trip - p50 and p99 (us) of a 3-frame DEALER/ROUTER echo. */
static void
raw_round_trip(const char *dir, uint64_t *p50, uint64_t *p99)
{
	char ep[512];
	uint64_t *v = xcalloc(ROUNDS, sizeof(*v)), t;
	void *ctx, *d;
	char buf[256];
	pid_t pid;
	int k, more;
	size_t sz = sizeof(more);

	snprintf(ep, sizeof(ep), "ipc://%s/raw.sock", dir);
	pid = fork();
	if (pid == 0)
		raw_echo(ep);
	usleep(200000);
	ctx = zmq_ctx_new();
	d = zmq_socket(ctx, ZMQ_DEALER);
	zmq_connect(d, ep);
	for (k = 0; k < ROUNDS + 100; k++) {
		t = now_us();
		zmq_send(d, MSG_HEADER, 7, ZMQ_SNDMORE);
		zmq_send(d, "\x03", 1, ZMQ_SNDMORE);
		zmq_send(d, "\x81\xa3rid\x01", 6, 0);
		do {
			zmq_recv(d, buf, sizeof(buf), 0);
			zmq_getsockopt(d, ZMQ_RCVMORE, &more, &sz);
		} while (more);
		if (k >= 100)
			v[k - 100] = now_us() - t;
	}
	*p50 = pct(v, ROUNDS, 50);
	*p99 = pct(v, ROUNDS, 99);
	zmq_close(d);
	zmq_ctx_term(ctx);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	free(v);
}

/* fsync_floor - p50 (us) of one ~120-byte line appended and fsynced. */
static uint64_t
fsync_floor(const char *dir)
{
	char path[512], line[128];
	uint64_t v[300], t;
	int fd, k;

	snprintf(path, sizeof(path), "%s/floor.jsonl", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0600);
	memset(line, 'x', sizeof(line));
	line[sizeof(line) - 1] = '\n';
	for (k = 0; k < 300; k++) {
		t = now_us();
		if (write(fd, line, sizeof(line)) != (ssize_t)sizeof(line))
			break;
		fdatasync(fd);
		v[k] = now_us() - t;
	}
	close(fd);
	unlink(path);
	return pct(v, (size_t)k, 50);
}

/* timed_calls - p50/p99 (us) of n calls of type (STATUS or SEND). */
static void
timed_calls(void *sock, enum msg_type type, int n, uint64_t *p50, uint64_t *p99)
{
	uint64_t *v = xcalloc((size_t)n, sizeof(*v)), t;
	struct msg *m, *r;
	int k;

	for (k = 0; k < n; k++) {
		m = msg_new(type);
		if (type == MSG_SEND) {
			msg_set_str(m, "text", "a short line for the bench");
			msg_set_str(m, "kind", "user");
		}
		t = now_us();
		r = tsd_call(sock, m, 10000, NULL);
		v[k] = now_us() - t;
		msg_destroy(&r);
		msg_destroy(&m);
	}
	*p50 = pct(v, (size_t)n, 50);
	*p99 = pct(v, (size_t)n, 99);
	free(v);
}

/* rss_kb - VmRSS of pid in kB. */
static long
rss_kb(pid_t pid)
{
	char path[64], line[256];
	long kb = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "VmRSS: %ld", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

/* ingest_client - one client process: n SENDs, WINDOW in flight. */
static int
ingest_client(const char *home, int who, long n)
{
	struct buf text = BUF_INIT;
	struct msg *m, *r;
	long sent = 0, acked = 0;
	unsigned seed = 77u + (unsigned)who;
	void *sock = tsd_connect(home);
	size_t len;

	if (sock == NULL)
		return 1;
	while (acked < n) {
		while (sent < n && sent - acked < WINDOW) {
			/* Sizes from a short line to a long paragraph: about
			 * a third need a model call as leaves. */
			seed = seed * 1103515245u + 12345u;
			len = 20 + (seed >> 8) % 1500;
			buf_reset(&text);
			buf_printf(&text, "client %d message %ld: ", who, sent);
			while (text.len < len)
				buf_adds(&text,
				    "the build failed in "
				    "src/main.c:42 with ENOSPC; ");
			m = msg_new(MSG_SEND);
			msg_set_int(m, "rid", sent + 1);
			msg_set_strn(m, "text", text.data, text.len);
			msg_set_str(m, "kind", "user");
			if (msg_send(sock, m, NULL) != 0) {
				msg_destroy(&m);
				break;
			}
			msg_destroy(&m);
			sent++;
		}
		r = tsd_recv(sock, 30000);
		if (r == NULL)
			return 2;
		if (msg_type(r) == MSG_ACK)
			acked++;
		else if (msg_type(r) == MSG_ERROR)
			return 3;
		msg_destroy(&r);
	}
	buf_free(&text);
	tsd_close(&sock);
	zsock_term();
	return 0;
}

int
main(int argc, char **argv)
{
	char dir[] = "/tmp/bench_shirod.XXXXXX", cmd[600];
	uint64_t raw50, raw99, st50, st99, sd50, sd99, floor50, t0, t1, t2;
	long n = 100000, rss_idle, rss_after, per;
	const char *env = getenv("SHIRO_BENCH_N");
	pid_t pid, kids[CLIENTS];
	void *sock;
	int k, st, bad = 0;

	/* A client process, re-executed so that it has its own ZeroMQ. */
	if (argc == 5 && strcmp(argv[1], "--client") == 0)
		return ingest_client(argv[2], atoi(argv[3]), atol(argv[4]));
	if (env != NULL && atol(env) > 0)
		n = atol(env);
	if (mkdtemp(dir) == NULL)
		return 1;
	raw_round_trip(dir, &raw50, &raw99);
	floor50 = fsync_floor(dir);
	tsd_write(dir, "config.json", "{}");
	pid = tsd_start(dir, NULL, &st);
	if (pid < 0) {
		fprintf(stderr, "bench_shirod: shirod did not start\n");
		return 1;
	}
	sock = tsd_connect(dir);
	usleep(300000);
	rss_idle = rss_kb(pid);
	timed_calls(sock, MSG_STATUS, ROUNDS, &st50, &st99);
	timed_calls(sock, MSG_SEND, 500, &sd50, &sd99);

	per = n / CLIENTS;
	t0 = tsd_now_ms();
	for (k = 0; k < CLIENTS; k++) {
		char who[16], count[32];

		snprintf(who, sizeof(who), "%d", k);
		snprintf(count, sizeof(count), "%ld", per);
		kids[k] = fork();
		if (kids[k] == 0) {
			execl("/proc/self/exe", "bench_shirod", "--client", dir,
			    who, count, (char *)NULL);
			_exit(127);
		}
	}
	for (k = 0; k < CLIENTS; k++) {
		waitpid(kids[k], &st, 0);
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
			bad++;
	}
	t1 = tsd_now_ms();
	if (tsd_settle(sock, 600000, NULL) != 0)
		bad++;
	t2 = tsd_now_ms();
	rss_after = rss_kb(pid);

	printf("\nshirod (ipc, this machine)              p50        p99\n");
	printf("raw ZeroMQ DEALER/ROUTER round trip  %7llu us %7llu us\n",
	    (unsigned long long)raw50, (unsigned long long)raw99);
	printf("status round trip                    %7llu us %7llu us"
	       "   p50 %.1fx raw (target <= 3x)\n",
	    (unsigned long long)st50, (unsigned long long)st99,
	    (double)st50 / (double)(raw50 ? raw50 : 1));
	printf("fsync floor (write+fdatasync)        %7llu us\n",
	    (unsigned long long)floor50);
	printf("send round trip (append+fsync+ack)   %7llu us %7llu us"
	       "   p50 %.2fx (floor + 3x raw)\n",
	    (unsigned long long)sd50, (unsigned long long)sd99,
	    (double)sd50 / (double)(floor50 + 3 * raw50));
	printf("ingest %ld messages, %d clients      %7.0f msgs/s\n",
	    per * CLIENTS, CLIENTS,
	    (double)(per * CLIENTS) * 1000.0 / (double)(t1 > t0 ? t1 - t0 : 1));
	printf("view summarized after the last ack   %7.1f s\n",
	    (double)(t2 - t1) / 1000.0);
	printf("shirod RSS idle / after ingest       %7ld kB %7ld kB\n",
	    rss_idle, rss_after);
	if (bad)
		printf("bench_shirod: %d part(s) failed\n", bad);
	tsd_close(&sock);
	tsd_stop(pid);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		bad++;
	return bad ? 1 : 0;
}
