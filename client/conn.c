#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proto/err.h"
#include "proto/log.h"
#include "proto/xmalloc.h"
#include "proto/zsock.h"

#include "conn.h"
#include "render.h"
#include "shiro.h"

/* conn_daemon_gone - whether the daemon's process is known to be gone. */
static int
conn_daemon_gone(const struct conn *c)
{
	/* Only a local daemon has a pid we can look at. */
	if (c->daemon_pid <= 0 || strncmp(c->endpoint, "ipc://", 6) != 0)
		return 0;
	/* A daemon this client started is its child: reap it when it
	 * exits, or it would linger as a zombie that kill() still finds. */
	if (waitpid(c->daemon_pid, NULL, WNOHANG) == c->daemon_pid)
		return 1;
	return kill(c->daemon_pid, 0) < 0 && errno == ESRCH;
}

/* conn_ping - send a PING when one is due. */
static void
conn_ping(struct conn *c, long long now)
{
	struct msg *m;

	if (now - c->last_ping < SHIRO_PING_MS)
		return;
	c->last_ping = now;
	m = msg_new(MSG_PING);
	msg_set_int(m, "rid", (int64_t)c->next_rid++);
	/* A full queue means the daemon is not reading: silence decides. */
	(void)msg_send(c->sock, m, NULL);
	msg_destroy(&m);
}

/* conn_catch_up - shirod numbered events this client did not get: say
 * HELLO again with the last one seen, and it sends the others. */
static void
conn_catch_up(struct conn *c)
{
	struct msg *m = msg_new(MSG_HELLO);

	msg_set_int(m, "rid", (int64_t)c->next_rid++);
	msg_set_str(m, "client", "shiro");
	msg_set_int(m, "version", MSG_VERSION);
	if (c->last_seq > 0)
		msg_set_int(m, "last_seq", (int64_t)c->last_seq);
	if (msg_send(c->sock, m, NULL) == 0) {
		c->catching_up = 1;
		c->rehellos++;
	}
	msg_destroy(&m);
}

/*
 * conn_handle - take one message from the daemon.  Returns 1 and hands
 * it over in *answerp when it answers request want_rid, else 0.
 */
static int
conn_handle(
    struct conn *c, struct msg *m, uint64_t want_rid, struct msg **answerp)
{
	enum msg_type t = msg_type(m);
	uint64_t rid = 0, seq;
	int has_rid;

	if (t == MSG_EVENT) {
		if (msg_get_uint(m, "seq", &seq) == 0 && seq > c->last_seq)
			c->last_seq = seq;
		if (c->handler.event != NULL)
			c->handler.event(c->handler.arg, m);
		msg_destroy(&m);
		return 0;
	}
	if (!msg_allowed(MSG_PEER_BROKER_TO_CLIENT, t)) {
		log_warnx("shirod sent a %s message, which a client never "
			  "gets; ignored",
		    msg_type_name(t));
		msg_destroy(&m);
		return 0;
	}
	has_rid = msg_get_uint(m, "rid", &rid) == 0;
	if (t == MSG_WELCOME && !(want_rid != 0 && rid == want_rid)) {
		bool replay = false;

		/* The answer to a HELLO for missed events: they follow, or
		 * shirod no longer has them and numbering goes on from its
		 * seq. */
		c->catching_up = 0;
		(void)msg_get_bool(m, "replay", &replay);
		if (!replay && msg_get_uint(m, "seq", &seq) == 0)
			c->last_seq = seq;
		msg_destroy(&m);
		return 0;
	}
	if (t == MSG_PONG && msg_get_uint(m, "seq", &seq) == 0 &&
	    seq > c->last_seq && !c->catching_up)
		conn_catch_up(c);
	switch (t) {
	case MSG_ACK:
	case MSG_REPLY:
	case MSG_WELCOME:
	case MSG_PONG:
	case MSG_ERROR:
		if (want_rid != 0 &&
		    (rid == want_rid || (t == MSG_ERROR && !has_rid))) {
			*answerp = m;
			return 1;
		}
		/* A later answer to an earlier request: a turn's end. */
		if (t != MSG_PONG && c->handler.event != NULL) {
			c->handler.event(c->handler.arg, m);
		} else if (t == MSG_ERROR) {
			const char *text = "";
			struct buf b = BUF_INIT;

			(void)msg_get_str(m, "text", &text, NULL);
			render_printf(&b, "shirod: %s", text);
			log_warnx("%s", b.data);
			buf_free(&b);
		}
		break;
	default:
		log_warnx("shirod sent a %s message, which a client never "
			  "gets; ignored",
		    msg_type_name(t));
		break;
	}
	msg_destroy(&m);
	return 0;
}

/*
 * conn_wait - wait once (at most timeout_ms) and handle what arrived.
 * Returns 1 when the answer to want_rid is in *answerp, 2 when fd is
 * readable, 0 otherwise, or a negative SHIRO_ERR_* (see conn_pump).
 */
static int
conn_wait(struct conn *c, int fd, long timeout_ms, uint64_t want_rid,
    struct msg **answerp)
{
	struct zsock_poll items[2];
	struct msg *m;
	long long now, wait;
	int n = 1, rc, got = 0;

	now = zsock_now_ms();
	wait = c->last_ping + SHIRO_PING_MS - now;
	if (wait > c->last_heard + c->dead_ms - now)
		wait = c->last_heard + c->dead_ms - now;
	if (timeout_ms >= 0 && wait > timeout_ms)
		wait = timeout_ms;
	if (wait < 0)
		wait = 0;
	memset(items, 0, sizeof(items));
	items[0].sock = c->sock;
	items[0].events = ZSOCK_IN;
	if (fd >= 0) {
		items[1].fd = fd;
		items[1].events = ZSOCK_IN;
		n = 2;
	}
	rc = zsock_poll(items, n, (long)wait);
	if (rc < 0)
		return rc;
	if (items[0].revents & ZSOCK_IN) {
		for (;;) {
			rc = msg_recv(c->sock, &m, NULL);
			if (rc == -SHIRO_ERR_AGAIN)
				break;
			if (rc == -SHIRO_ERR_PROTO) {
				c->last_heard = zsock_now_ms();
				log_warnx("a malformed message from shirod was "
					  "dropped: %s",
				    msg_strerror());
				continue;
			}
			if (rc < 0)
				return rc;
			c->last_heard = zsock_now_ms();
			if (conn_handle(c, m, want_rid, answerp)) {
				got = 1;
				break;
			}
		}
	}
	if (got)
		return 1;
	now = zsock_now_ms();
	if (now - c->last_heard >= c->dead_ms || conn_daemon_gone(c))
		return -SHIRO_ERR_TIMEOUT;
	conn_ping(c, now);
	if (n == 2 && (items[1].revents & (ZSOCK_IN | ZSOCK_ERR)))
		return 2;
	return 0;
}

/* conn_request_one - send req and wait for its answer. */
static int
conn_request_one(struct conn *c, struct msg *req, long timeout_ms,
    volatile sig_atomic_t *stop, struct msg **replyp)
{
	long long start = zsock_now_ms(), left;
	uint64_t rid = c->next_rid++;
	int rc;

	*replyp = NULL;
	msg_set_int(req, "rid", (int64_t)rid);
	rc = msg_send(c->sock, req, NULL);
	if (rc == -SHIRO_ERR_AGAIN)
		return -SHIRO_ERR_TIMEOUT; /* the queue to it is full */
	if (rc < 0)
		return rc;
	for (;;) {
		left = -1;
		if (timeout_ms >= 0) {
			left = start + timeout_ms - zsock_now_ms();
			if (left <= 0)
				return -SHIRO_ERR_TIMEOUT;
		}
		rc = conn_wait(c, -1, (long)left, rid, replyp);
		if (rc == 1)
			return 0;
		if (rc == -SHIRO_ERR_AGAIN) {
			if (stop != NULL && *stop)
				return -SHIRO_ERR_CANCELED;
			continue;
		}
		if (rc < 0)
			return rc;
	}
}

/*
 * conn_memory_rest - *replyp answers a MEMORY from offset 0 and says where
 * the next page starts: ask for every page after it and make *replyp one
 * REPLY whose lines are all of them, in order.  An ERROR on the way (the
 * view shrank under the pages) replaces *replyp.
 */
static int
conn_memory_rest(struct conn *c, long timeout_ms, volatile sig_atomic_t *stop,
    struct msg **replyp)
{
	const struct msg_val *doc, *lines, *pdoc;
	struct msg_val *mdoc, *all;
	struct msg *merged, *req, *page = NULL;
	int64_t next = 0, offset = 0;
	uint64_t rid = 0;
	size_t k, n;
	int rc = 0;

	if (msg_type(*replyp) != MSG_REPLY ||
	    msg_get_map(*replyp, "doc", &doc) != 0 ||
	    msg_val_int(doc, "next", &next) != 0)
		return 0;
	(void)msg_get_uint(*replyp, "rid", &rid);
	merged = msg_new(MSG_REPLY);
	msg_set_int(merged, "rid", (int64_t)rid);
	mdoc = msg_set_map(merged, "doc");
	for (k = 0; k < doc->u.m.n; k++)
		if (strcmp(doc->u.m.kv[k].key, "next") != 0 &&
		    strcmp(doc->u.m.kv[k].key, "lines") != 0)
			(void)msg_val_set_copy(
			    mdoc, doc->u.m.kv[k].key, doc->u.m.kv[k].val);
	all = msg_val_set_arr(mdoc, "lines");
	lines = msg_val_get(doc, "lines");
	n = lines != NULL && lines->type == MSG_V_ARR ? lines->u.a.n : 0;
	for (k = 0; k < n; k++)
		(void)msg_val_add_copy(all, lines->u.a.items[k]);
	/* Each page must start where the last one said, further on. */
	while (next > offset) {
		offset = next;
		req = msg_new(MSG_MEMORY);
		msg_set_int(req, "offset", offset);
		rc = conn_request_one(c, req, timeout_ms, stop, &page);
		msg_destroy(&req);
		if (rc < 0)
			break;
		if (msg_type(page) != MSG_REPLY ||
		    msg_get_map(page, "doc", &pdoc) != 0) {
			msg_destroy(&merged);
			msg_destroy(replyp);
			*replyp = page;
			return 0;
		}
		lines = msg_val_get(pdoc, "lines");
		n = lines != NULL && lines->type == MSG_V_ARR ? lines->u.a.n
							      : 0;
		for (k = 0; k < n; k++)
			(void)msg_val_add_copy(all, lines->u.a.items[k]);
		if (msg_val_get(pdoc, "total") != NULL)
			(void)msg_val_set_copy(
			    mdoc, "total", msg_val_get(pdoc, "total"));
		if (msg_val_int(pdoc, "next", &next) != 0)
			next = 0;
		msg_destroy(&page);
	}
	msg_destroy(&page);
	if (rc < 0) {
		msg_destroy(&merged);
		return rc;
	}
	msg_destroy(replyp);
	*replyp = merged;
	return 0;
}

/* conn_request - send req and wait for its answer (see conn.h); a
 * MEMORY from the start comes back with every page of the view. */
int
conn_request(struct conn *c, struct msg *req, long timeout_ms,
    volatile sig_atomic_t *stop, struct msg **replyp)
{
	int rc = conn_request_one(c, req, timeout_ms, stop, replyp);

	if (rc == 0 && msg_type(req) == MSG_MEMORY && !msg_has(req, "offset"))
		rc = conn_memory_rest(c, timeout_ms, stop, replyp);
	if (rc < 0)
		msg_destroy(replyp);
	return rc;
}

/* conn_pump - handle the daemon's messages for a while (see conn.h). */
int
conn_pump(struct conn *c, int fd, long timeout_ms)
{
	int rc;

	rc = conn_wait(c, fd, timeout_ms, 0, NULL);
	if (rc == 2)
		return 1;
	return rc < 0 ? rc : 0;
}

/* conn_token - 16 random bytes in hex. */
void
conn_token(char out[CONN_TOKEN_LEN])
{
	unsigned char r[16];
	size_t k;

	if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r)) {
		/* Unique enough without the kernel's randomness. */
		long long t = zsock_now_ms();

		memset(r, 0, sizeof(r));
		memcpy(r, &t, sizeof(t));
		r[8] = (unsigned char)getpid();
		r[9] = (unsigned char)(getpid() >> 8);
	}
	for (k = 0; k < sizeof(r); k++)
		snprintf(out + 2 * k, 3, "%02x", r[k]);
}

/* conn_open - connect and say HELLO (see conn.h). */
int
conn_open(const char *endpoint, const struct zsock_cred *cred, int dead_ms,
    uint64_t last_seq, const struct conn_handler *h, struct conn **cp)
{
	struct zsock_opts zo;
	struct conn *c;
	struct msg *hello = NULL, *welcome = NULL;
	uint64_t v = 0, pid = 0, seq = 0;
	bool replay = false;
	char ident[CONN_TOKEN_LEN + 1];
	int rc;

	*cp = NULL;
	c = xcalloc(1, sizeof(*c));
	c->endpoint = xstrdup(endpoint);
	c->dead_ms = dead_ms;
	c->next_rid = 1;
	c->last_seq = last_seq;
	c->last_heard = c->last_ping = zsock_now_ms();
	if (h != NULL)
		c->handler = *h;
	memset(&zo, 0, sizeof(zo));
	/* One routing identity for the life of this connection, so that
	 * shirod knows it again when libzmq makes the tcp connection anew
	 * (shirod closed them to shut out a revoked key). */
	ident[0] = 'c';
	conn_token(ident + 1);
	zo.identity = ident;
	if (cred != NULL) {
		/* Over tcp the handshake tells a refused key at once. */
		zo.curve = cred;
		rc = zsock_dealer_wait(endpoint, &zo, dead_ms, &c->sock);
		if (rc == -SHIRO_ERR_PROTO)
			rc = -SHIRO_ERR_FAILED;
	} else {
		rc = zsock_dealer(endpoint, &zo, &c->sock);
	}
	if (rc < 0)
		goto out;
	hello = msg_new(MSG_HELLO);
	msg_set_str(hello, "client", "shiro");
	msg_set_int(hello, "version", MSG_VERSION);
	if (last_seq > 0)
		msg_set_int(hello, "last_seq", (int64_t)last_seq);
	rc = conn_request(c, hello, dead_ms, NULL, &welcome);
	if (rc < 0)
		goto out;
	if (msg_type(welcome) == MSG_ERROR) {
		const char *code = "", *text = "";
		struct buf b = BUF_INIT;

		(void)msg_get_str(welcome, "code", &code, NULL);
		(void)msg_get_str(welcome, "text", &text, NULL);
		render_printf(
		    &b, "shirod refused this client (%s): %s", code, text);
		log_warnx("%s", b.data);
		buf_free(&b);
		rc = -SHIRO_ERR_PROTO;
		goto out;
	}
	if (msg_type(welcome) != MSG_WELCOME) {
		log_warnx("shirod answered HELLO with %s",
		    msg_type_name(msg_type(welcome)));
		rc = -SHIRO_ERR_PROTO;
		goto out;
	}
	(void)msg_get_uint(welcome, "version", &v);
	(void)msg_get_uint(welcome, "pid", &pid);
	(void)msg_get_uint(welcome, "seq", &seq);
	(void)msg_get_bool(welcome, "replay", &replay);
	if (v != MSG_VERSION) {
		log_warnx("shirod speaks protocol revision %llu and this "
			  "client %d: install matching shiro and shirod",
		    (unsigned long long)v, MSG_VERSION);
		rc = -SHIRO_ERR_PROTO;
		goto out;
	}
	c->daemon_pid = (pid_t)pid;
	c->replay = replay;
	/* Without replay the numbering starts again from the daemon's. */
	if (!replay || last_seq == 0 || seq < last_seq)
		c->last_seq = seq;
	*cp = c;
	c = NULL;
out:
	msg_destroy(&hello);
	msg_destroy(&welcome);
	if (c != NULL)
		conn_close(&c);
	return rc;
}

/* conn_bye - tell the daemon this client leaves (best effort). */
void
conn_bye(struct conn *c)
{
	struct msg *m;

	m = msg_new(MSG_BYE);
	msg_set_int(m, "rid", (int64_t)c->next_rid++);
	(void)msg_send(c->sock, m, NULL);
	msg_destroy(&m);
}

/* conn_close - close *cp's socket, free it and set *cp to NULL. */
void
conn_close(struct conn **cp)
{
	struct conn *c = *cp;

	if (c == NULL)
		return;
	zsock_close(&c->sock);
	free(c->endpoint);
	free(c);
	*cp = NULL;
}
