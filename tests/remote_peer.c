/*
 * remote_peer - the peers test_remote runs in its network namespaces, each
 * a process of its own (a ZeroMQ context belongs to the namespace its
 * threads were made in, so a peer cannot be a thread of the test):
 *
 *   remote_peer watch ENDPOINT SERVER_KEY HOME MS
 *	a CURVE client with HOME/keys/client.key: prints "up", "down",
 *	"refused", "failed" as its connection's monitor says them and
 *	"pong N" for the first PONG after each "up" (it PINGs every 100 ms),
 *	each line with the ms since it started; ends after MS.
 *   remote_peer null ENDPOINT MS
 *	a DEALER with the NULL mechanism: prints "up", "refused", "failed"
 *	or "timeout" (no handshake within MS).
 *   remote_peer garbage HOST PORT CONNS BYTES
 *	CONNS tcp connections, each sends BYTES random bytes; prints
 *	"closed N": how many the server closed within 10 s.
 *   remote_peer loris HOST PORT CONNS MS
 *	CONNS tcp connections that send the ZMTP greeting one byte every
 *	200 ms, never finishing it; prints "closed N after T": how many the
 *	server closed within MS.
 *   remote_peer relay PORTFILE HOST PORT DELAY_MS STALL_MS [CAPTURE]
 *	a tcp relay on 0.0.0.0 (its port written to PORTFILE) to HOST:PORT
 *	that holds every chunk DELAY_MS each way, and now and then (one
 *	chunk in 16) STALL_MS more, as a retransmission after a lost packet
 *	would; with CAPTURE, every byte it relays is appended there too
 *	(what an eavesdropper on the link gets); runs until killed.
 *   remote_peer worker ENDPOINT SERVER_KEY HOME ROLE PROVIDER MS READIES
 *	a remote worker of its own making, with HOME/keys/worker.key: says
 *	READY as ROLE for PROVIDER (READIES times, a second after another),
 *	heartbeats, answers each JOB with RESULT "from the peer", and prints
 *	the type of every message it gets (heartbeat once) for MS.
 *   remote_peer worker ENDPOINT SERVER_KEY HOME ROLE PROVIDER MS READIES MODE
 *	the same, misbehaving by MODE: "old" says READY with another
 *	protocol revision; "breach" and "garbage", once it answered its
 *	first JOB, send a STATUS (a client's request) or a frame that is
 *	not a message, then go on heartbeating.
 *   remote_peer knock ENDPOINT SERVER_KEY N
 *	N CURVE clients, each with a fresh key of its own, one after
 *	another: prints "refused K" (how many were refused).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include "proto/buf.h"
#include "proto/err.h"
#include "proto/keys.h"
#include "proto/mono.h"
#include "proto/msg.h"
#include "proto/xmalloc.h"
#include "proto/zsock.h"

/* rp_dial - a tcp connection to host:port, or -1. */
static int
rp_dial(const char *host, int port)
{
	struct sockaddr_in sa;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)port);
	if (inet_pton(AF_INET, host, &sa.sin_addr) != 1 ||
	    connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* rp_event - the word for a monitor event, or NULL. */
static const char *
rp_event(enum zsock_event ev)
{
	switch (ev) {
	case ZSOCK_EV_UP:
		return "up";
	case ZSOCK_EV_DOWN:
		return "down";
	case ZSOCK_EV_REFUSED:
		return "refused";
	case ZSOCK_EV_FAILED:
		return "failed";
	default:
		return NULL;
	}
}

/* rp_cred - a credential for server with the pair at home/which (made
 * if missing), or a fresh pair when home is NULL. */
static int
rp_cred(const char *server, const char *home, const char *which,
    struct zsock_cred *cred)
{
	char *path;
	int rc;

	memset(cred, 0, sizeof(*cred));
	if (keys_pub_parse(server, strlen(server), cred->server) < 0)
		return -1;
	if (home == NULL)
		return zsock_keypair(&cred->own);
	path = keys_path(home, which);
	rc = keys_pair(path, 1, &cred->own, NULL);
	free(path);
	return rc;
}

/* rp_watch - a CURVE client that says what happens to its connection. */
static int
rp_watch(const char *endpoint, const char *server, const char *home, long ms)
{
	struct zsock_opts zo;
	struct zsock_cred cred;
	struct zsock_poll it[2];
	long long t0 = (long long)mono_ms(), next_ping = 0;
	void *sock = NULL, *mon = NULL;
	char ident[32];
	uint64_t rid = 1;
	int pong_due = 1, rc;
	enum zsock_event ev;
	struct msg *m;

	if (rp_cred(server, home, KEYS_CLIENT, &cred) < 0) {
		fprintf(stderr, "remote_peer: bad key or key pair\n");
		return 2;
	}
	memset(&zo, 0, sizeof(zo));
	zo.curve = &cred;
	/* One identity for all its connections, as shiro's own client. */
	snprintf(ident, sizeof(ident), "watcher-%d", (int)getpid());
	zo.identity = ident;
	rc = zsock_dealer_watch(endpoint, &zo, ms, &sock, &mon);
	if (rc < 0) {
		printf("%lld %s\n", (long long)mono_ms() - t0,
		    rc == -SHIRO_ERR_PERM ? "refused" : "failed");
		return 0;
	}
	printf("%lld up\n", (long long)mono_ms() - t0);
	while ((long long)mono_ms() - t0 < ms) {
		long long now = (long long)mono_ms();

		if (now >= next_ping) {
			m = msg_new(MSG_PING);
			msg_set_int(m, "rid", (int64_t)rid++);
			(void)msg_send(sock, m, NULL);
			msg_destroy(&m);
			next_ping = now + 100;
		}
		memset(it, 0, sizeof(it));
		it[0].sock = sock;
		it[0].events = ZSOCK_IN;
		it[1].sock = mon;
		it[1].events = ZSOCK_IN;
		if (zsock_poll(it, 2, 50) <= 0)
			continue;
		while ((it[1].revents & ZSOCK_IN) &&
		    (ev = zsock_monitor_next(mon)) != ZSOCK_EV_NONE) {
			if (rp_event(ev) == NULL)
				continue;
			printf("%lld %s\n", (long long)mono_ms() - t0,
			    rp_event(ev));
			if (ev == ZSOCK_EV_UP)
				pong_due = 1;
		}
		while ((it[0].revents & ZSOCK_IN) &&
		    msg_recv(sock, &m, NULL) == 0) {
			if (msg_type(m) == MSG_PONG && pong_due) {
				printf("%lld pong %llu\n",
				    (long long)mono_ms() - t0,
				    (unsigned long long)rid);
				pong_due = 0;
			}
			msg_destroy(&m);
		}
	}
	zsock_close(&mon);
	zsock_close(&sock);
	zsock_term();
	explicit_bzero(&cred, sizeof(cred));
	return 0;
}

/* rp_ready - READY as role for provider (of another revision when
 * mode is "old"). */
static void
rp_ready(void *sock, const char *role, const char *provider, const char *mode)
{
	struct msg *m = msg_new(MSG_READY);

	msg_set_str(m, "role", role);
	msg_set_str(m, "provider", provider);
	msg_set_int(m, "pid", getpid());
	msg_set_int(m, "jobs", 1);
	msg_set_int(
	    m, "version", MSG_VERSION + (strcmp(mode, "old") == 0 ? 1 : 0));
	(void)msg_send(sock, m, NULL);
	msg_destroy(&m);
}

/* rp_misbehave - what mode sends after the first JOB's answer. */
static void
rp_misbehave(void *sock, const char *mode)
{
	static const unsigned char bad[] = {0xc1, 0x00, 0xff};
	struct msg *m;

	if (strcmp(mode, "breach") == 0) {
		m = msg_new(MSG_STATUS);
		msg_set_int(m, "rid", 1);
		(void)msg_send(sock, m, NULL);
		msg_destroy(&m);
		printf("sent STATUS\n");
	} else if (strcmp(mode, "garbage") == 0) {
		/* The header frame, then no msgpack at all. */
		if (zmq_send(sock, MSG_HEADER, strlen(MSG_HEADER),
			ZMQ_SNDMORE) >= 0 &&
		    zmq_send(sock, bad, sizeof(bad), 0) >= 0)
			printf("sent garbage\n");
	}
}

/* rp_worker - a remote worker that says what it gets. */
static int
rp_worker(const char *endpoint, const char *server, const char *home,
    const char *role, const char *provider, long ms, int readies,
    const char *mode)
{
	struct zsock_opts zo;
	struct zsock_cred cred;
	struct zsock_poll it;
	long long t0 = (long long)mono_ms(), next_hb = 0, next_ready;
	void *sock = NULL;
	int said = 0, rc, beats = 0, answered = 0;
	uint64_t job;
	struct msg *m, *r;

	if (rp_cred(server, home, KEYS_WORKER, &cred) < 0)
		return 2;
	memset(&zo, 0, sizeof(zo));
	zo.curve = &cred;
	rc = zsock_dealer_wait(endpoint, &zo, 10000, &sock);
	if (rc < 0) {
		printf("%lld %s\n", (long long)mono_ms() - t0,
		    rc == -SHIRO_ERR_PERM ? "refused" : "failed");
		return 0;
	}
	next_ready = t0;
	while ((long long)mono_ms() - t0 < ms) {
		long long now = (long long)mono_ms();

		if (said < readies && now >= next_ready) {
			rp_ready(sock, role, provider, mode);
			printf("%lld sent READY\n", now - t0);
			said++;
			next_ready = now + 1000;
		}
		if (now >= next_hb) {
			m = msg_new(MSG_HEARTBEAT);
			(void)msg_send(sock, m, NULL);
			msg_destroy(&m);
			next_hb = now + 200;
		}
		memset(&it, 0, sizeof(it));
		it.sock = sock;
		it.events = ZSOCK_IN;
		if (zsock_poll(&it, 1, 50) <= 0)
			continue;
		while (msg_recv(sock, &m, NULL) == 0) {
			if (msg_type(m) != MSG_HEARTBEAT || beats++ == 0)
				printf("%lld %s\n", (long long)mono_ms() - t0,
				    msg_type_name(msg_type(m)));
			if (msg_type(m) == MSG_JOB &&
			    msg_get_uint(m, "job", &job) == 0) {
				r = msg_new(MSG_RESULT);
				msg_set_int(r, "job", (int64_t)job);
				msg_set_str(r, "text", "from the peer");
				(void)msg_send(sock, r, NULL);
				msg_destroy(&r);
				if (answered++ == 0)
					rp_misbehave(sock, mode);
			}
			msg_destroy(&m);
		}
	}
	zsock_close(&sock);
	zsock_term();
	explicit_bzero(&cred, sizeof(cred));
	return 0;
}

/* rp_knock - n clients with fresh keys: how many were refused. */
static int
rp_knock(const char *endpoint, const char *server, int n)
{
	struct zsock_opts zo;
	struct zsock_cred cred;
	void *sock;
	int k, refused = 0;

	for (k = 0; k < n; k++) {
		if (rp_cred(server, NULL, NULL, &cred) < 0)
			return 2;
		memset(&zo, 0, sizeof(zo));
		zo.curve = &cred;
		sock = NULL;
		if (zsock_dealer_wait(endpoint, &zo, 5000, &sock) ==
		    -SHIRO_ERR_PERM)
			refused++;
		zsock_close(&sock);
	}
	printf("refused %d\n", refused);
	zsock_term();
	return 0;
}

/* rp_null - a NULL-mechanism DEALER: what became of its handshake. */
static int
rp_null(const char *endpoint, long ms)
{
	void *sock = NULL;
	int rc = zsock_dealer_wait(endpoint, NULL, ms, &sock);

	printf("%s\n",
	    rc == 0			   ? "up"
		: rc == -SHIRO_ERR_PERM	   ? "refused"
		: rc == -SHIRO_ERR_TIMEOUT ? "timeout"
					   : "failed");
	zsock_close(&sock);
	zsock_term();
	return 0;
}

/* rp_closed - how many of fds[0..n) the peer closed (read gives 0 or an
 * error), waiting up to ms; a closed one is set to -1. */
static int
rp_closed(int *fds, int n, long ms, long long *lastp)
{
	long long end = (long long)mono_ms() + ms;
	char buf[4096];
	int closed = 0, k, open_left;
	struct pollfd *p = xcalloc((size_t)n, sizeof(*p));

	for (;;) {
		open_left = 0;
		for (k = 0; k < n; k++) {
			p[k].fd = fds[k];
			p[k].events = POLLIN;
			p[k].revents = 0;
			open_left += fds[k] >= 0;
		}
		if (open_left == 0 || (long long)mono_ms() >= end)
			break;
		if (poll(p, (nfds_t)n, 100) <= 0)
			continue;
		for (k = 0; k < n; k++) {
			if (fds[k] < 0 || p[k].revents == 0)
				continue;
			if (read(fds[k], buf, sizeof(buf)) > 0)
				continue;
			close(fds[k]);
			fds[k] = -1;
			closed++;
			*lastp = (long long)mono_ms();
		}
	}
	free(p);
	return closed;
}

/* rp_garbage - connections that send random bytes. */
static int
rp_garbage(const char *host, int port, int conns, long bytes)
{
	int *fds = xcalloc((size_t)conns, sizeof(*fds)), k, closed;
	unsigned char *junk = xmalloc((size_t)bytes);
	long long last = 0;

	for (k = 0; k < conns; k++) {
		fds[k] = rp_dial(host, port);
		if (fds[k] < 0)
			continue;
		if (getrandom(junk, (size_t)bytes, 0) != bytes)
			memset(junk, 0xa5, (size_t)bytes);
		(void)send(fds[k], junk, (size_t)bytes, MSG_NOSIGNAL);
	}
	closed = rp_closed(fds, conns, 10000, &last);
	printf("closed %d\n", closed);
	for (k = 0; k < conns; k++)
		if (fds[k] >= 0)
			close(fds[k]);
	free(fds);
	free(junk);
	return 0;
}

/* rp_loris - connections that never finish their greeting. */
static int
rp_loris(const char *host, int port, int conns, long ms)
{
	/* ZMTP 3's signature, then its version: sent a byte at a time. */
	static const unsigned char greet[] = {
	    0xff, 0, 0, 0, 0, 0, 0, 0, 1, 0x7f, 3, 0, 'C', 'U', 'R', 'V', 'E'};
	int *fds = xcalloc((size_t)conns, sizeof(*fds)), k, closed = 0;
	long long t0 = (long long)mono_ms(), last = t0;
	size_t sent = 0;

	for (k = 0; k < conns; k++)
		fds[k] = rp_dial(host, port);
	while ((long long)mono_ms() - t0 < ms) {
		if (sent < sizeof(greet)) {
			for (k = 0; k < conns; k++)
				if (fds[k] >= 0)
					(void)send(fds[k], greet + sent, 1,
					    MSG_NOSIGNAL);
			sent++;
		}
		closed += rp_closed(fds, conns, 200, &last);
	}
	printf("closed %d after %lld\n", closed, last - t0);
	for (k = 0; k < conns; k++)
		if (fds[k] >= 0)
			close(fds[k]);
	free(fds);
	return 0;
}

/* A chunk held by the relay until its time. */
struct rp_chunk {
	long long due;
	size_t len, off;
	char data[8192];
	struct rp_chunk *next;
};

/* One relayed connection: a and b, and what waits for each. */
struct rp_pair {
	int fd[2];
	struct rp_chunk *q[2], **tail[2]; /* q[i]: to be written to fd[i] */
	long long last_due[2];
};

/* rp_pair_close - end one relayed connection. */
static void
rp_pair_close(struct rp_pair *p)
{
	struct rp_chunk *c;
	int i;

	for (i = 0; i < 2; i++) {
		if (p->fd[i] >= 0)
			close(p->fd[i]);
		p->fd[i] = -1;
		while ((c = p->q[i]) != NULL) {
			p->q[i] = c->next;
			free(c);
		}
	}
}

/* rp_relay - a relay that adds latency and stalls. */
static int
rp_relay(const char *portfile, const char *host, int port, long delay,
    long stall, const char *capture)
{
	int cap = capture != NULL
	    ? open(capture, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600)
	    : -1;
	struct rp_pair pairs[64];
	struct pollfd pfd[1 + 2 * 64];
	struct sockaddr_in sa;
	socklen_t sl = sizeof(sa);
	unsigned r = 1;
	int ls, n, k, i, one = 1;
	FILE *f;
	char tmp[512];

	memset(pairs, 0, sizeof(pairs));
	for (k = 0; k < 64; k++)
		pairs[k].fd[0] = pairs[k].fd[1] = -1;
	ls = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	(void)setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ls < 0 || bind(ls, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    listen(ls, 16) != 0 ||
	    getsockname(ls, (struct sockaddr *)&sa, &sl) != 0)
		return 2;
	snprintf(tmp, sizeof(tmp), "%s.tmp", portfile);
	f = fopen(tmp, "w");
	if (f == NULL)
		return 2;
	fprintf(f, "%d\n", ntohs(sa.sin_port));
	fclose(f);
	if (rename(tmp, portfile) != 0)
		return 2;
	for (;;) {
		long long now = (long long)mono_ms(), wait = 50;

		n = 0;
		pfd[n].fd = ls;
		pfd[n++].events = POLLIN;
		for (k = 0; k < 64; k++)
			for (i = 0; i < 2; i++) {
				struct rp_chunk *c = pairs[k].q[i];

				pfd[n].fd = pairs[k].fd[i];
				pfd[n].events = POLLIN;
				if (c != NULL && c->due <= now)
					pfd[n].events |= POLLOUT;
				if (c != NULL && c->due > now &&
				    c->due - now < wait)
					wait = c->due - now;
				n++;
			}
		if (poll(pfd, (nfds_t)n, (int)wait) < 0)
			continue;
		now = (long long)mono_ms();
		if (pfd[0].revents & POLLIN) {
			int a = accept4(ls, NULL, NULL, SOCK_CLOEXEC);
			int b = a >= 0 ? rp_dial(host, port) : -1;

			for (k = 0; k < 64 && pairs[k].fd[0] >= 0; k++)
				;
			if (a < 0 || b < 0 || k == 64) {
				if (a >= 0)
					close(a);
				if (b >= 0)
					close(b);
			} else {
				pairs[k].fd[0] = a;
				pairs[k].fd[1] = b;
				(void)setsockopt(b, IPPROTO_TCP, TCP_NODELAY,
				    &one, sizeof(one));
				(void)setsockopt(a, IPPROTO_TCP, TCP_NODELAY,
				    &one, sizeof(one));
			}
		}
		for (k = 0; k < 64; k++) {
			struct rp_pair *p = &pairs[k];

			for (i = 0; i < 2 && p->fd[0] >= 0; i++) {
				struct pollfd *q = &pfd[1 + 2 * k + i];
				struct rp_chunk *c;
				ssize_t got;

				if (q->revents & (POLLIN | POLLHUP | POLLERR)) {
					c = xcalloc(1, sizeof(*c));
					got = read(
					    p->fd[i], c->data, sizeof(c->data));
					if (got <= 0) {
						free(c);
						rp_pair_close(p);
						break;
					}
					c->len = (size_t)got;
					if (cap >= 0 &&
					    write(cap, c->data, c->len) < 0)
						return 2;
					r = r * 1103515245u + 12345u;
					c->due = now + delay +
					    ((r >> 16) % 16 == 0 ? stall : 0);
					/* Never before the chunk ahead. */
					if (c->due < p->last_due[1 - i])
						c->due = p->last_due[1 - i];
					p->last_due[1 - i] = c->due;
					if (p->q[1 - i] == NULL)
						p->q[1 - i] = c;
					else
						*p->tail[1 - i] = c;
					p->tail[1 - i] = &c->next;
				}
				if ((q->revents & POLLOUT) &&
				    (c = p->q[i]) != NULL) {
					got = write(p->fd[i], c->data + c->off,
					    c->len - c->off);
					if (got < 0) {
						rp_pair_close(p);
						break;
					}
					c->off += (size_t)got;
					if (c->off == c->len) {
						p->q[i] = c->next;
						free(c);
					}
				}
			}
		}
	}
}

/* main - one peer, by its first argument. */
int
main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 6 && strcmp(argv[1], "watch") == 0)
		return rp_watch(argv[2], argv[3], argv[4], atol(argv[5]));
	if (argc == 4 && strcmp(argv[1], "null") == 0)
		return rp_null(argv[2], atol(argv[3]));
	if (argc == 6 && strcmp(argv[1], "garbage") == 0)
		return rp_garbage(
		    argv[2], atoi(argv[3]), atoi(argv[4]), atol(argv[5]));
	if (argc == 6 && strcmp(argv[1], "loris") == 0)
		return rp_loris(
		    argv[2], atoi(argv[3]), atoi(argv[4]), atol(argv[5]));
	if ((argc == 7 || argc == 8) && strcmp(argv[1], "relay") == 0)
		return rp_relay(argv[2], argv[3], atoi(argv[4]), atol(argv[5]),
		    atol(argv[6]), argc == 8 ? argv[7] : NULL);
	if ((argc == 9 || argc == 10) && strcmp(argv[1], "worker") == 0)
		return rp_worker(argv[2], argv[3], argv[4], argv[5], argv[6],
		    atol(argv[7]), atoi(argv[8]), argc == 10 ? argv[9] : "");
	if (argc == 5 && strcmp(argv[1], "knock") == 0)
		return rp_knock(argv[2], argv[3], atoi(argv[4]));
	fprintf(stderr,
	    "usage: remote_peer watch|null|garbage|loris|relay "
	    "...\n");
	return 64;
}
