#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "proto/buf.h"
#include "proto/err.h"
#include "proto/keys.h"
#include "proto/log.h"
#include "proto/utf8.h"
#include "proto/xmalloc.h"
#include "proto/zsock.h"

#include "cmd.h"
#include "daemon.h"
#include "helper.h"
#include "json_out.h"
#include "render.h"

/* How long a stopped daemon may take to exit. */
#define CMD_STOP_MS 10000

/* Set by SIGINT and SIGTERM while a command waits. */
static volatile sig_atomic_t cmd_stop;
static volatile sig_atomic_t cmd_term;

/* cmd_on_signal - note that the user wants out (or, for SIGINT in an
 * attached session, only out of the current wait). */
static void
cmd_on_signal(int sig)
{
	cmd_stop = 1;
	if (sig != SIGINT)
		cmd_term = 1;
}

/* cmd_terminated - whether SIGTERM or SIGHUP asked the client to end. */
int
cmd_terminated(void)
{
	return cmd_term != 0;
}

/* cmd_stop_flag - the flag SIGINT and SIGTERM set (cmd_catch_signals). */
volatile sig_atomic_t *
cmd_stop_flag(void)
{
	return &cmd_stop;
}

/* cmd_catch_signals - make Ctrl-C interrupt a wait instead of killing. */
void
cmd_catch_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = cmd_on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

/* cmd_unreachable - explain that no daemon answers; exit code 3. */
static int
cmd_unreachable(const struct shiro *s, const char *why)
{
	char *shirod;

	if (s->cred != NULL) {
		/* Another machine's shirod: nothing to start from here. */
		fprintf(stderr,
		    "shiro: no shirod answers on %s: %s.\n"
		    "Check that it runs there with this endpoint in "
		    "endpoints.clients, and that --server-key is the key "
		    "'shiro keys' prints there (docs/remote.md).\n",
		    s->endpoint, why);
		return SHIRO_EXIT_UNREACHABLE;
	}
	shirod = s->self_dir != NULL ? helper_path(s, "shirod") : NULL;
	fprintf(stderr,
	    "shiro: no shirod answers on %s: %s.\n"
	    "Start one with 'shiro' (it starts shirod when none runs) or "
	    "'%s'; its log is %s/shirod.log.\n",
	    s->endpoint, why, shirod != NULL ? shirod : "shirod", s->home);
	free(shirod);
	return SHIRO_EXIT_UNREACHABLE;
}

/* cmd_connect - attach, starting a daemon when allowed (see cmd.h). */
int
cmd_connect(const struct shiro *s, int may_start, uint64_t last_seq,
    const struct conn_handler *h, struct conn **cp)
{
	int rc;

	*cp = NULL;
	if (s->sock_path != NULL) {
		rc = daemon_probe(s->sock_path);
		if (rc < 0 && rc != -SHIRO_ERR_NOENT && rc != -SHIRO_ERR_AGAIN)
			return cmd_unreachable(s, err_str(rc));
		if (rc < 0 && (!may_start || !s->autostart))
			return cmd_unreachable(s,
			    rc == -SHIRO_ERR_NOENT
				? "its socket does not exist"
				: "nothing listens on its socket");
		if (rc < 0 && daemon_start(s) < 0)
			return SHIRO_EXIT_UNREACHABLE;
	}
	rc = conn_open(s->endpoint, s->cred, s->dead_ms, last_seq, h, cp);
	if (rc == -SHIRO_ERR_PERM) {
		char fp[KEYS_FP_LEN];
		unsigned char bin[ZSOCK_KEY_BIN];

		(void)zsock_key_decode(s->cred->own.pub, bin);
		keys_fingerprint(bin, fp);
		fprintf(stderr,
		    "shiro: shirod on %s refused this client's key (%s).\n"
		    "On its machine, admit it: shiro keys add client NAME "
		    "'%s'\n",
		    s->endpoint, fp, s->cred->own.pub);
		return SHIRO_EXIT_FAIL;
	}
	if (rc == -SHIRO_ERR_FAILED)
		return cmd_unreachable(s,
		    "the CURVE handshake failed (a wrong --server-key, or not "
		    "a shirod)");
	if (rc == -SHIRO_ERR_TIMEOUT)
		return cmd_unreachable(s,
		    "it did not answer within a few "
		    "seconds (stopped or hung)");
	if (rc == -SHIRO_ERR_PROTO)
		return SHIRO_EXIT_FAIL;
	if (rc < 0)
		return cmd_unreachable(s, err_str(rc));
	return SHIRO_EXIT_OK;
}

/* cmd_key - a fresh idempotency key (caller frees). */
char *
cmd_key(void)
{
	char *key = xmalloc(CONN_TOKEN_LEN);

	conn_token(key);
	return key;
}

/* cmd_read_stdin - all of stdin (see cmd.h). */
char *
cmd_read_stdin(size_t *lenp)
{
	struct buf b = BUF_INIT;
	char chunk[65536];
	ssize_t r;

	*lenp = 0;
	for (;;) {
		r = read(STDIN_FILENO, chunk, sizeof(chunk));
		if (r == 0)
			break;
		if (r < 0) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, "shiro: cannot read stdin: %s\n",
			    strerror(errno));
			buf_free(&b);
			return NULL;
		}
		if (b.len + (size_t)r > MSG_MAX_TEXT + 2) {
			fprintf(stderr,
			    "shiro: the text on stdin is over %u bytes, the "
			    "most one message holds; split it or send it as "
			    "a file the agent can read.\n",
			    MSG_MAX_TEXT);
			buf_free(&b);
			return NULL;
		}
		buf_add(&b, chunk, (size_t)r);
	}
	if (b.len > 0 && b.data[b.len - 1] == '\n')
		buf_truncate(&b, b.len - 1);
	if (b.len > 0 && b.data[b.len - 1] == '\r')
		buf_truncate(&b, b.len - 1);
	if (b.len > MSG_MAX_TEXT) {
		fprintf(stderr,
		    "shiro: the text is over %u bytes, the most one message "
		    "holds; split it.\n",
		    MSG_MAX_TEXT);
		buf_free(&b);
		return NULL;
	}
	if (b.data == NULL)
		return xstrdup("");
	return buf_steal(&b, lenp);
}

/* cmd_text_problem - cmd_check_text without the hint. */
static int
cmd_text_problem(
    const char *who, const char *what, const char *text, size_t len)
{
	const char *nul = memchr(text, '\0', len);
	size_t k;

	if (nul != NULL) {
		fprintf(stderr,
		    "shiro %s: %s holds a NUL byte (at byte %zu); a message "
		    "is text, so nothing was sent.\n",
		    who, what, (size_t)(nul - text));
		return SHIRO_EXIT_USAGE;
	}
	if (!utf8_valid(text, len)) {
		for (k = 0; k < len; k = utf8_next(text, len, k))
			if (utf8_char_len(text + k, len - k) == 0)
				break;
		fprintf(stderr,
		    "shiro %s: %s is not UTF-8 (byte %zu is 0x%02x); nothing "
		    "was sent.  Convert it first, e.g. with iconv -t "
		    "UTF-8.\n",
		    who, what, k, k < len ? (unsigned char)text[k] : 0);
		return SHIRO_EXIT_USAGE;
	}
	if (utf8_blank(text, len)) {
		fprintf(stderr,
		    "shiro %s: the message is empty%s; nothing was sent.\n",
		    who, len > 0 ? " (only white space)" : "");
		return SHIRO_EXIT_USAGE;
	}
	if (len > MSG_MAX_TEXT) {
		fprintf(stderr,
		    "shiro %s: the text is over %u bytes, the most one "
		    "message holds; split it.\n",
		    who, MSG_MAX_TEXT);
		return SHIRO_EXIT_USAGE;
	}
	return 0;
}

/* cmd_check_text - whether text may be sent as a message (see cmd.h). */
int
cmd_check_text(const char *who, const char *what, const char *text, size_t len)
{
	int rc = cmd_text_problem(who, what, text, len);

	if (rc != 0)
		fprintf(stderr, "Run 'shiro %s --help' for the usage.\n", who);
	return rc;
}

/* cmd_error_exit - the exit code for an ERROR answer's code. */
int
cmd_error_exit(const char *code)
{
	if (strcmp(code, "no_model") == 0)
		return SHIRO_EXIT_NO_MODEL;
	if (strcmp(code, "model") == 0 || strcmp(code, "model_error") == 0)
		return SHIRO_EXIT_MODEL;
	return SHIRO_EXIT_FAIL;
}

/* cmd_print_error - show an ERROR answer; its exit code. */
static int
cmd_print_error(const struct shiro *s, const struct msg *m)
{
	const char *code = "error", *text = "";
	struct buf b = BUF_INIT;

	(void)msg_get_str(m, "code", &code, NULL);
	(void)msg_get_str(m, "text", &text, NULL);
	if (s->json) {
		render_event_json(&b, m);
		printf("%s\n", b.data);
		fflush(stdout);
	}
	buf_reset(&b);
	buf_printf(
	    &b, "shiro: shirod refused the request (%s): %s\n", code, text);
	render_puts(stderr, b.data);
	buf_free(&b);
	return cmd_error_exit(code);
}

/* cmd_lost - a wait failed; say why and return the exit code. */
int
cmd_lost(const struct shiro *s, int rc)
{
	if (rc == -SHIRO_ERR_CANCELED) {
		fprintf(stderr, "shiro: interrupted\n");
		return SHIRO_EXIT_INTERRUPTED;
	}
	if (rc == -SHIRO_ERR_TIMEOUT)
		return cmd_unreachable(s, "it stopped answering");
	return cmd_unreachable(s, err_str(rc));
}

/* cmd_is_tcp - whether s's shirod is reached over tcp (another machine). */
static int
cmd_is_tcp(const struct shiro *s)
{
	return s->endpoint != NULL && strncmp(s->endpoint, "tcp://", 6) == 0;
}

/* cmd_workspace - the workspace a SEND or NOTES names (see cmd.h). */
int
cmd_workspace(const struct shiro *s, const char *cmd, char **wsp)
{
	char dir[PATH_MAX];
	const char *ws = s->workspace;

	*wsp = NULL;
	if (cmd_is_tcp(s)) {
		/* A path on shirod's machine: this one's working directory
		 * means nothing there, and is never sent. */
		if (ws == NULL)
			ws = s->remote_ws;
		if (ws == NULL)
			return SHIRO_EXIT_OK;
		if (!keys_workspace_ok(ws)) {
			fprintf(stderr,
			    "shiro %s: --workspace names a directory on "
			    "shirod's machine: give its absolute path (at "
			    "most %d bytes, no control characters)\n",
			    cmd, KEYS_WORKSPACE_MAX);
			return SHIRO_EXIT_USAGE;
		}
		*wsp = xstrdup(ws);
		return SHIRO_EXIT_OK;
	}
	if (ws != NULL) {
		if (realpath(ws, dir) == NULL) {
			fprintf(stderr, "shiro %s: --workspace %s: %s\n", cmd,
			    ws, strerror(errno));
			return SHIRO_EXIT_USAGE;
		}
	} else if (getcwd(dir, sizeof(dir)) == NULL) {
		fprintf(stderr,
		    "shiro %s: the working directory cannot be read (%s), "
		    "and it names the workspace\n",
		    cmd, strerror(errno));
		return SHIRO_EXIT_FAIL;
	}
	if (!keys_workspace_ok(dir)) {
		fprintf(stderr,
		    "shiro %s: the workspace's path is over %d bytes or "
		    "holds a control character\n",
		    cmd, KEYS_WORKSPACE_MAX);
		return SHIRO_EXIT_USAGE;
	}
	*wsp = xstrdup(dir);
	return SHIRO_EXIT_OK;
}

/* cmd_new_send - a SEND of text as kind; turn says whether to reply;
 * key is the idempotency key (NULL: a fresh one); cwd the workspace
 * (NULL: none). */
struct msg *
cmd_new_send(const char *kind, const char *text, int turn, const char *key,
    const char *cwd)
{
	struct msg *m;
	char *fresh = NULL;

	m = msg_new(MSG_SEND);
	msg_set_str(m, "text", text);
	msg_set_str(m, "kind", kind);
	if (cwd != NULL)
		msg_set_str(m, "cwd", cwd);
	if (key == NULL)
		key = fresh = cmd_key();
	msg_set_str(m, "key", key);
	msg_set_bool(m, "turn", turn);
	free(fresh);
	return m;
}

/* cmd_new_notes - a NOTES for the workspace cwd (see cmd.h). */
struct msg *
cmd_new_notes(const char *what, const char *cwd)
{
	struct msg *m;

	if (cwd == NULL)
		return NULL;
	m = msg_new(MSG_NOTES);
	msg_set_str(m, "cwd", cwd);
	msg_set_str(m, "what", what);
	return m;
}

/* cmd_wait_gone - wait (bounded) until the stopped daemon pid exits. */
static int
cmd_wait_gone(pid_t pid)
{
	long long end = zsock_now_ms() + CMD_STOP_MS;
	struct timespec ts = {0, 20 * 1000000L};

	if (pid <= 0)
		return SHIRO_EXIT_OK;
	while (zsock_now_ms() < end) {
		if (kill(pid, 0) < 0 && errno == ESRCH)
			return SHIRO_EXIT_OK;
		(void)nanosleep(&ts, NULL);
	}
	fprintf(stderr,
	    "shiro stop: shirod (pid %d) agreed to stop but still runs after "
	    "%d s; see its log, or end it with kill %d.\n",
	    (int)pid, CMD_STOP_MS / 1000, (int)pid);
	return SHIRO_EXIT_FAIL;
}

/*
 * cmd_wait_silent - wait (bounded) until the stopped daemon at the other
 * end of c stops answering: over tcp its pid is another machine's, so
 * kill(pid, 0) here would ask about some process of this one.
 */
static int
cmd_wait_silent(const struct shiro *s, struct conn *c)
{
	long long end = zsock_now_ms() + CMD_STOP_MS;
	int rc;

	while (zsock_now_ms() < end) {
		rc = conn_pump(c, -1, 200);
		if (rc == -SHIRO_ERR_TIMEOUT || rc == -SHIRO_ERR_IO)
			return SHIRO_EXIT_OK;
	}
	fprintf(stderr,
	    "shiro stop: shirod at %s agreed to stop but still answers after "
	    "%d s; see its log on that machine.\n",
	    s->endpoint, CMD_STOP_MS / 1000);
	return SHIRO_EXIT_FAIL;
}

/*
 * cmd_ask - connect (starting a daemon when may_start), send *reqp (it
 * is consumed) and get its answer in *ansp (caller destroys).  Returns
 * SHIRO_EXIT_OK, or the exit code after saying what went wrong: an
 * ERROR answer, a lost daemon, an interrupt.
 */
static int
cmd_ask(
    const struct shiro *s, int may_start, struct msg **reqp, struct msg **ansp)
{
	struct conn *c = NULL;
	int rc;

	*ansp = NULL;
	cmd_catch_signals();
	rc = cmd_connect(s, may_start, 0, NULL, &c);
	if (rc != SHIRO_EXIT_OK)
		goto out;
	rc = conn_request(c, *reqp, CMD_REQUEST_MS, &cmd_stop, ansp);
	if (rc < 0) {
		rc = cmd_lost(s, rc);
		goto out;
	}
	if (msg_type(*ansp) == MSG_ERROR) {
		rc = cmd_print_error(s, *ansp);
		goto out;
	}
	rc = SHIRO_EXIT_OK;
	if (msg_type(*reqp) == MSG_STOP && s->endpoint != NULL &&
	    strncmp(s->endpoint, "tcp://", 6) == 0)
		rc = cmd_wait_silent(s, c);
	else if (msg_type(*reqp) == MSG_STOP)
		rc = cmd_wait_gone(c->daemon_pid);
	else
		conn_bye(c);
out:
	msg_destroy(reqp);
	conn_close(&c);
	return rc;
}

/* cmd_flush - write b to stdout, escaped (render_escape); the exit
 * code. */
static int
cmd_flush(struct buf *b)
{
	struct buf safe = BUF_INIT;

	render_escape(&safe, b->data != NULL ? b->data : "", b->len);
	if (safe.len > 0)
		fwrite(safe.data, 1, safe.len, stdout);
	buf_free(&safe);
	return fflush(stdout) == 0 && !ferror(stdout) ? SHIRO_EXIT_OK
						      : SHIRO_EXIT_FAIL;
}

/* cmd_send - append text as kind without a turn; prints its id. */
int
cmd_send(const struct shiro *s, const char *kind, const char *text)
{
	struct msg *req = NULL, *ans = NULL;
	struct buf b = BUF_INIT;
	uint64_t id = 0;
	char *cwd = NULL;
	int rc;

	if (strlen(text) > MSG_MAX_TEXT) {
		fprintf(stderr,
		    "shiro send: the text is over %u bytes, the most one "
		    "message holds; split it.\n",
		    MSG_MAX_TEXT);
		return SHIRO_EXIT_USAGE;
	}
	rc = cmd_workspace(s, "send", &cwd);
	if (rc != SHIRO_EXIT_OK)
		return rc;
	req = cmd_new_send(kind, text, 0, NULL, cwd);
	free(cwd);
	rc = cmd_ask(s, 1, &req, &ans);
	if (rc != SHIRO_EXIT_OK)
		goto out;
	if (msg_type(ans) != MSG_ACK || msg_get_uint(ans, "id", &id) < 0) {
		fprintf(stderr,
		    "shiro send: shirod answered with %s, not an "
		    "acknowledgement; the message may or may not "
		    "be logged (see 'shiro memory').\n",
		    msg_type_name(msg_type(ans)));
		rc = SHIRO_EXIT_FAIL;
		goto out;
	}
	if (s->json) {
		/* The ACK as -p --json shows it: {"ev":"ack","rid":..}. */
		render_event_json(&b, ans);
		buf_addc(&b, '\n');
	} else {
		buf_printf(&b, "%llu\n", (unsigned long long)id);
	}
	rc = cmd_flush(&b);
out:
	buf_free(&b);
	msg_destroy(&ans);
	return rc;
}

/* cmd_query - status, memory, zoom, log, notes, todos or stop (see
 * cmd.h). */
int
cmd_query(const struct shiro *s, const struct cmd_query *q)
{
	struct msg *req, *ans = NULL;
	const struct msg_val *doc = NULL;
	struct buf b = BUF_INIT;
	struct json_out j;
	int rc;

	if (q->type == MSG_NOTES) {
		char *cwd;

		rc = cmd_workspace(s, q->what, &cwd);
		if (rc != SHIRO_EXIT_OK)
			return rc;
		req = cmd_new_notes(q->what, cwd);
		free(cwd);
		if (req == NULL) {
			fprintf(stderr,
			    "shiro %s: the project is the workspace, and "
			    "none is named\n",
			    q->what);
			fprintf(stderr, "%s\n", CMD_WS_HINT);
			return SHIRO_EXIT_USAGE;
		}
	} else {
		req = msg_new(q->type);
	}
	if (q->type == MSG_ZOOM) {
		msg_set_int(req, "id", (int64_t)q->id);
		msg_set_int(req, "n", (int64_t)q->n);
	}
	if (q->type == MSG_LOG && q->has_tail)
		msg_set_int(req, "tail", (int64_t)q->tail);
	/* The commands that read the chat start a daemon as send does, so
	 * they answer the same whether or not one ran; status and stop are
	 * about the daemon itself and never start one. */
	rc = cmd_ask(s,
	    q->type == MSG_MEMORY || q->type == MSG_ZOOM ||
		q->type == MSG_LOG || q->type == MSG_NOTES,
	    &req, &ans);
	if (rc != SHIRO_EXIT_OK)
		goto out;
	if (msg_type(ans) == MSG_REPLY)
		(void)msg_get_map(ans, "doc", &doc);
	if (s->json) {
		json_out_init(&j, &b);
		if (q->type == MSG_STOP && doc == NULL) {
			json_out_begin_object(&j);
			json_out_key(&j, "stopping");
			json_out_bool(&j, 1);
			json_out_end_object(&j);
		} else {
			json_out_val(&j, doc != NULL ? doc : msg_body(ans));
		}
		buf_addc(&b, '\n');
	} else if (q->type == MSG_STOP) {
		buf_adds(&b, "shirod stopped\n");
	} else {
		render_reply(&b, q->type, doc != NULL ? doc : msg_body(ans));
	}
	rc = cmd_flush(&b);
out:
	buf_free(&b);
	msg_destroy(&ans);
	return rc;
}
